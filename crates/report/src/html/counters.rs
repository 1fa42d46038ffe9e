//! The server's counters by question, and the storage devices: the charts a performance
//! engineer draws to answer "what did the engine do per second" (rows by operation, handlers,
//! pages, blocks hit and read), "how many sessions ran against how many connected", and "what
//! did the disks do" (operations, latency and queue depth per device, the data directory's
//! first).
//!
//! Owns the drawing of the named sets (`crate::counter_sets`: which counters answer which
//! question, per protocol, as data) and the device charts. Must not touch: the counters' reading (observe) or their meaning
//! beyond a label; every counter not charted here is still in the JSON and the counters CSV
//! (`crate::csv::render_counters_csv`).
//!
//! A set's counter absent from a result (an older server, a view not readable, a constant left
//! in `counter_constants`) is left out of its chart; a set with none is not drawn.

use std::fmt::Write as _;

use measure::server::{DeviceSample, ServerMetrics, MYSQL_PREFIX};

use super::chart_block;
use crate::counter_sets::{How, Line};
use crate::svg::{esc, Chart, Kind, Series};

const PALETTE: [&str; 8] = [
    "#3056d3", "#2e9e44", "#d6336c", "#f08c00", "#7048e8", "#1098ad", "#c5221f", "#5c940d",
];

/// The counter `key` as drawn by `how`: (seconds, value).
fn points(m: &ServerMetrics, key: &str, how: How) -> Vec<(f64, f64)> {
    match how {
        How::Rate(scale) => super::server::rate(m, key, scale),
        How::Level => (m.counters.iter())
            .filter_map(|c| Some((c.t_ms as f64 / 1000.0, *c.values.get(key)?)))
            .collect(),
    }
}

/// The named sets of this server's protocol, each with the lines it has.
pub(super) fn sets(o: &mut String, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    let sets = match m.is_mysql() {
        true => crate::counter_sets::MYSQL_SETS,
        false => crate::counter_sets::PG_SETS,
    };
    let mut charts = String::new();
    for set in sets.iter().filter(|s| s.on_run_page()) {
        let mut chart = Chart::new(set.id, set.title, "seconds", set.unit, Kind::Lines);
        for (i, Line(key, label, how)) in set.lines.iter().enumerate() {
            let p = points(m, key, *how);
            // Two names for one figure across releases (bgwriter's checkpoint buffers moved to
            // the checkpointer in 17): the first found is drawn.
            if p.is_empty() || chart.series.iter().any(|s| s.name == *label) {
                continue;
            }
            chart
                .series
                .push(Series::line(label, PALETTE[i % PALETTE.len()], p));
        }
        if chart.series.is_empty() {
            continue;
        }
        chart.x_range = x_range;
        chart_block(&mut charts, set.title, &chart.render());
    }
    if charts.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<section id=\"counters\"><h2>Server counters by question</h2>\
         <p class=\"muted\">Every counter the server offers ({}) was read every {} ms; these are \
         the ones each question needs. All of them are in the JSON (<code>counters</code>, and \
         <code>counter_constants</code> for those that never changed) and in \
         <code>stampede report RUN.json --counters-csv FILE</code>.</p>\
         <div class=\"grid2\">{charts}</div></section>",
        if m.is_mysql() {
            format!("SHOW GLOBAL STATUS, INNODB_METRICS; prefix {MYSQL_PREFIX}")
        } else {
            "pg_stat_database, pg_stat_bgwriter, pg_stat_wal, pg_stat_checkpointer, \
             pg_stat_user_tables, pg_statio_user_tables, pg_stat_io"
                .into()
        },
        m.counter_interval_ms
    );
}

/// The devices to draw: those that hold the server's files, else the machine's disks (at most
/// four, the busiest first).
fn drawn_devices(m: &ServerMetrics) -> Vec<(String, Option<String>)> {
    let mut seen: Vec<(String, Option<String>, f64)> = Vec::new();
    for d in m.os.iter().flat_map(|s| &s.devices) {
        match seen.iter_mut().find(|(n, _, _)| *n == d.device) {
            Some(e) => e.2 += d.reads_per_s + d.writes_per_s,
            None => seen.push((
                d.device.clone(),
                d.holds.clone(),
                d.reads_per_s + d.writes_per_s,
            )),
        }
    }
    if seen.iter().any(|d| d.1.is_some()) {
        seen.retain(|d| d.1.is_some());
    }
    seen.sort_by(|a, b| b.2.total_cmp(&a.2));
    seen.truncate(4);
    seen.into_iter().map(|(n, h, _)| (n, h)).collect()
}

/// Storage devices over time: operations per second, latency per operation, queue depth.
pub(super) fn devices(o: &mut String, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    let devices = drawn_devices(m);
    if devices.is_empty() {
        return;
    }
    let whose = if m.os_is_servers() {
        "the server's machine"
    } else {
        "the client's machine (the server is elsewhere)"
    };
    let _ = write!(
        o,
        "<section id=\"storage\"><h2>Storage devices</h2><p class=\"muted\">{} of {whose}, \
         from /proc/diskstats every {} ms, as iostat derives them: latency is the mean time a \
         completed request took (r_await, w_await), queue depth the mean requests in flight \
         (aqu-sz).</p><div class=\"grid2\">",
        esc(&(devices.iter())
            .map(|(n, h)| match h {
                Some(h) => format!("{n} ({h})"),
                None => n.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")),
        m.counter_interval_ms,
        whose = esc(whose),
    );
    // Each chart: id, title, unit, and its two lines per device (name, figure).
    type Pick = fn(&DeviceSample) -> Option<f64>;
    type DeviceChart = (
        &'static str,
        &'static str,
        &'static str,
        [(&'static str, Pick); 2],
    );
    let charts: [DeviceChart; 3] = [
        (
            "chart-device-iops",
            "Operations per second",
            "per second",
            [
                ("reads", |d| Some(d.reads_per_s)),
                ("writes", |d| Some(d.writes_per_s)),
            ],
        ),
        (
            "chart-device-latency",
            "Latency per operation",
            "ms",
            [
                ("read", |d| d.read_latency_ms),
                ("write", |d| d.write_latency_ms),
            ],
        ),
        (
            "chart-device-queue",
            "Queue depth and busy time",
            "requests in flight, % busy / 100",
            [
                ("queue", |d| Some(d.queue_depth)),
                ("busy", |d| Some(d.util_pct / 100.0)),
            ],
        ),
    ];
    for (id, title, unit, picks) in charts {
        let mut chart = Chart::new(id, title, "seconds", unit, Kind::Lines);
        for (i, (dev, _)) in devices.iter().enumerate() {
            for (j, (what, pick)) in picks.iter().enumerate() {
                let pts: Vec<(f64, f64)> = (m.os.iter())
                    .filter_map(|s| {
                        let d = s.devices.iter().find(|d| &d.device == dev)?;
                        Some((s.t_ms as f64 / 1000.0, pick(d)?))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                chart.series.push(Series {
                    name: format!("{dev} {what}"),
                    color: PALETTE[(2 * i + j) % PALETTE.len()].into(),
                    points: pts,
                    dashed: j == 1,
                });
            }
        }
        chart.x_range = x_range;
        chart_block(o, title, &chart.render());
    }
    o.push_str("</div></section>");
}
