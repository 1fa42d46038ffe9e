//! The server's counters by question, and the storage devices: the charts a performance
//! engineer draws to answer "what did the engine do per second" (rows by operation, handlers,
//! pages, blocks hit and read), "how many sessions ran against how many connected", and "what
//! did the disks do" (operations, latency and queue depth per device, the data directory's
//! first).
//!
//! Owns the named sets: which counters answer which question, per protocol, as data ([`Set`]),
//! and the device charts. Must not touch: the counters' reading (observe) or their meaning
//! beyond a label; every counter not charted here is still in the JSON and the counters CSV
//! (`crate::csv::render_counters_csv`).
//!
//! A set's counter absent from a result (an older server, a view not readable, a constant left
//! in `counter_constants`) is left out of its chart; a set with none is not drawn.

use std::fmt::Write as _;

use measure::server::{DeviceSample, ServerMetrics, MYSQL_PREFIX};

use super::chart_block;
use crate::svg::{esc, Chart, Kind, Series};

/// How a counter becomes a line: a per-second rate of a cumulative count (times a scale), or
/// the level as read (a gauge).
#[derive(Clone, Copy)]
enum How {
    Rate(f64),
    Level,
}

/// One line of a set: the counter's key, its label.
struct Line(&'static str, &'static str, How);

/// A question and the counters that answer it, drawn as one chart.
struct Set {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    lines: &'static [Line],
}

const R: How = How::Rate(1.0);
const L: How = How::Level;

/// PostgreSQL: the user tables' activity (`pg_stat_user_tables`, `pg_statio_user_tables`),
/// the background writer's and checkpointer's buffers (the commits and the WAL are charted in
/// the server activity section).
const PG_SETS: &[Set] = &[
    Set {
        id: "set-rows",
        title: "Rows by operation, all user tables (pg_stat_user_tables)",
        unit: "rows / s",
        lines: &[
            Line("tables.n_tup_ins", "inserted", R),
            Line("tables.n_tup_upd", "updated", R),
            Line("tables.n_tup_hot_upd", "HOT updated", R),
            Line("tables.n_tup_del", "deleted", R),
            Line("tables.idx_tup_fetch", "fetched by index", R),
            Line("tables.seq_tup_read", "read by seq scans", R),
        ],
    },
    Set {
        id: "set-scans",
        title: "Scans (pg_stat_user_tables)",
        unit: "scans / s",
        lines: &[
            Line("tables.idx_scan", "index scans", R),
            Line("tables.seq_scan", "sequential scans", R),
        ],
    },
    Set {
        id: "set-blocks",
        title: "Table and index blocks: hit in shared buffers and read (pg_statio_user_tables)",
        unit: "blocks / s",
        lines: &[
            Line("statio.heap_blks_hit", "table hit", R),
            Line("statio.heap_blks_read", "table read", R),
            Line("statio.idx_blks_hit", "index hit", R),
            Line("statio.idx_blks_read", "index read", R),
        ],
    },
    Set {
        id: "set-tuples",
        title: "Live and dead tuples (pg_stat_user_tables)",
        unit: "tuples",
        lines: &[
            Line("tables.n_live_tup", "live", L),
            Line("tables.n_dead_tup", "dead", L),
        ],
    },
    Set {
        id: "set-buffers",
        title: "Buffers written, by whom (pg_stat_bgwriter, pg_stat_checkpointer)",
        unit: "buffers / s",
        lines: &[
            Line("checkpointer.buffers_written", "checkpointer", R),
            Line("bgwriter.buffers_checkpoint", "checkpointer", R),
            Line("bgwriter.buffers_clean", "background writer", R),
            Line("bgwriter.buffers_backend", "backends", R),
        ],
    },
];

/// MySQL and MariaDB: `SHOW GLOBAL STATUS` (the commits and the redo log are charted in the
/// server activity section).
const MYSQL_SETS: &[Set] = &[
    Set {
        id: "set-handlers",
        title: "Handler calls: rows asked of the storage engine (Handler_*)",
        unit: "calls / s",
        lines: &[
            Line("mysql.Handler_write", "write", R),
            Line("mysql.Handler_read_key", "read_key", R),
            Line("mysql.Handler_read_next", "read_next", R),
            Line("mysql.Handler_read_rnd", "read_rnd", R),
            Line("mysql.Handler_read_rnd_next", "read_rnd_next", R),
            Line("mysql.Handler_update", "update", R),
            Line("mysql.Handler_delete", "delete", R),
        ],
    },
    Set {
        id: "set-statements",
        title: "Statements by kind (Com_*)",
        unit: "statements / s",
        lines: &[
            Line("mysql.Com_select", "select", R),
            Line("mysql.Com_insert", "insert", R),
            Line("mysql.Com_update", "update", R),
            Line("mysql.Com_delete", "delete", R),
            Line("mysql.Com_commit", "commit", R),
        ],
    },
    Set {
        id: "set-innodb-rows",
        title: "InnoDB rows (Innodb_rows_*)",
        unit: "rows / s",
        lines: &[
            Line("mysql.Innodb_rows_read", "read", R),
            Line("mysql.Innodb_rows_inserted", "inserted", R),
            Line("mysql.Innodb_rows_updated", "updated", R),
            Line("mysql.Innodb_rows_deleted", "deleted", R),
        ],
    },
    Set {
        id: "set-innodb-pages",
        title: "InnoDB pages read, created and written (Innodb_pages_*)",
        unit: "pages / s",
        lines: &[
            Line("mysql.Innodb_pages_read", "read", R),
            Line("mysql.Innodb_pages_created", "created", R),
            Line("mysql.Innodb_pages_written", "written", R),
            Line("mysql.Innodb_buffer_pool_pages_flushed", "flushed", R),
        ],
    },
    Set {
        id: "set-threads",
        title: "Threads connected and running",
        unit: "threads",
        lines: &[
            Line("mysql.Threads_connected", "connected", L),
            Line("mysql.Threads_running", "running", L),
        ],
    },
    Set {
        id: "set-locks-files",
        title: "Row lock time and open files",
        unit: "ms / s, files",
        lines: &[
            Line("mysql.Innodb_row_lock_time", "row lock wait ms / s", R),
            Line("mysql.Innodb_row_lock_waits", "row lock waits / s", R),
            Line("mysql.Open_files", "open files", L),
        ],
    },
];

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
    let sets = if m.is_mysql() { MYSQL_SETS } else { PG_SETS };
    let mut charts = String::new();
    for set in sets {
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
