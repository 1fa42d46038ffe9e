//! Database load by wait event and top SQL: where the server's sessions spent their time
//! (Performance Insights' "average active sessions" view) and which statements spent it, each
//! joined to the wait events it was sampled in. Background sessions (a standby's walsender,
//! autovacuum workers, the server's threads) get a table of their own beside the load's: they
//! are never in the chart, the AAS or the top wait event.
//!
//! Must not touch: counters and the OS (`server`), the client's measurements (`client`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use measure::server::ActivitySample;
use measure::server::CPU;
use measure::ServerMetrics;

use super::server::checkpoint_markers;
use super::style::{event_tag, wait_color};
use super::{chart_block, f3, share_bar};
use crate::model::RunResult;
use crate::observed::{bytes, hit_pct, top_wait_of};
use crate::svg::{esc, Chart, Kind, Series};

/// Wait events drawn separately in the load chart; the rest are summed as "other".
const LOAD_EVENTS: usize = 8;

/// The load chart's series: the top events by samples, then "other".
pub(crate) fn load_series(m: &ServerMetrics) -> Vec<Series> {
    let top: Vec<&str> = m
        .waits
        .iter()
        .take(LOAD_EVENTS)
        .map(|w| w.event.as_str())
        .collect();
    let mut out = event_series(m, &top, &event_colors(&top));
    if m.waits.len() > LOAD_EVENTS {
        out.push(other_series(m, &top));
    }
    // CPU at the bottom, as Performance Insights draws it.
    out.sort_by_key(|s| s.name != CPU);
    out
}

/// A colour for each of `events`: by class, shaded within the class in the order given, so that
/// charts drawn with the same colours (one per run on the comparison page) agree.
pub(crate) fn event_colors<'e>(events: &[&'e str]) -> BTreeMap<&'e str, String> {
    let mut shades: BTreeMap<&str, usize> = BTreeMap::new();
    events
        .iter()
        .map(|e| {
            let class = e.split(':').next().unwrap_or(e);
            let shade = shades.entry(class).or_default();
            let color = wait_color(e, *shade);
            *shade += 1;
            (*e, color)
        })
        .collect()
}

/// The sessions in each of `events`, averaged per second of the run, one series per event in
/// the order given, coloured by `colors`.
pub(crate) fn event_series(
    m: &ServerMetrics,
    events: &[&str],
    colors: &BTreeMap<&str, String>,
) -> Vec<Series> {
    events
        .iter()
        .map(|e| Series {
            name: (*e).to_string(),
            color: colors[e].clone(),
            points: per_second(m, |s| f64::from(s.waits.get(*e).copied().unwrap_or(0))),
            dashed: false,
        })
        .collect()
}

/// The sessions in any event but `events`, averaged per second, as the grey "other".
pub(crate) fn other_series(m: &ServerMetrics, events: &[&str]) -> Series {
    Series {
        name: "other".into(),
        color: "#ced4da".into(),
        points: per_second(m, |s| {
            let rest: u32 = s
                .waits
                .iter()
                .filter(|(e, _)| !events.contains(&e.as_str()))
                .map(|(_, n)| *n)
                .sum();
            f64::from(rest)
        }),
        dashed: false,
    }
}

/// `value` of the activity samples averaged over each second of the run, plotted at the
/// middle of that second. Activity is sampled several times a second (a 1 Hz sample of a
/// handful of sessions rarely catches one on CPU), and the chart reads as average active
/// sessions per second, as Performance Insights draws it.
fn per_second(m: &ServerMetrics, value: impl Fn(&ActivitySample) -> f64) -> Vec<(f64, f64)> {
    let mut bins: BTreeMap<i64, (f64, u32)> = BTreeMap::new();
    // Samples before the measured run (the observer starts while clients connect) are not
    // part of it.
    for s in m.activity.iter().filter(|s| s.t_ms >= 0) {
        let b = bins.entry(s.t_ms / 1000).or_default();
        b.0 += value(s);
        b.1 += 1;
    }
    bins.into_iter()
        .map(|(sec, (sum, n))| (sec as f64 + 0.5, sum / f64::from(n)))
        .collect()
}

/// The load chart with the table of wait events beside it.
pub(super) fn load(o: &mut String, r: &RunResult, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    o.push_str("<section id=\"load\"><h2>Database load by wait event</h2><div class=\"grid2\">");
    let mut load = Chart::new(
        "chart-load",
        "Database load",
        "seconds",
        "average active sessions",
        Kind::StackedArea,
    );
    load.series = load_series(m);
    load.x_range = x_range;
    load.markers = checkpoint_markers(m);
    if m.os_is_servers() && r.environment.client.cpus > 0 {
        load.reference = Some((
            f64::from(r.environment.client.cpus),
            format!("{} CPUs", r.environment.client.cpus),
        ));
    }
    chart_block(
        o,
        &format!(
            "Active sessions by wait event, sampled every {} ms, averaged per second",
            m.sample_interval_ms
        ),
        &load.render(),
    );
    o.push_str("<div><table><tr><th class=\"l\">wait event</th><th>AAS</th><th class=\"l\">share</th></tr>");
    let total: u64 = m.waits.iter().map(|w| w.samples).sum();
    for w in m.waits.iter().take(12) {
        let frac = w.samples as f64 / total.max(1) as f64;
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td>{:.2}</td><td class=\"l\">{} {:.1}%</td></tr>",
            event_tag(&w.event),
            w.aas,
            share_bar(frac),
            100.0 * frac
        );
    }
    if m.waits.is_empty() {
        o.push_str(
            "<tr><td class=\"l muted\" colspan=\"3\">no active sessions were seen</td></tr>",
        );
    }
    if !m.background.is_empty() {
        o.push_str(
            "</table><table id=\"background\"><tr><th class=\"l\">background session</th>\
             <th>AAS</th><th class=\"l\">its waits</th></tr>",
        );
        for b in m.background.iter().take(12) {
            let waits: Vec<String> = (b.waits.iter().take(3))
                .map(|w| {
                    format!(
                        "{} {:.0}%",
                        event_tag(&w.event),
                        100.0 * w.samples as f64 / b.samples.max(1) as f64
                    )
                })
                .collect();
            let _ = write!(
                o,
                "<tr><td class=\"l\">{}</td><td>{:.2}</td><td class=\"l\">{}</td></tr>",
                esc(&b.kind),
                b.aas,
                waits.join("<br>")
            );
        }
    }
    let how = if m.is_mysql() {
        "Average active sessions (AAS) = sessions seen running a command (PROCESSLIST \
         <code>COMMAND</code> other than <code>Sleep</code>) per sample"
    } else {
        "Average active sessions (AAS) = sessions seen in state <code>active</code> per sample"
    };
    let events = if m.is_mysql() {
        "CPU = active with no performance_schema wait in progress; IO, Synch and Lock are the \
         classes of MySQL's wait instruments (<code>wait/io/...</code>, \
         <code>wait/synch/...</code>, <code>wait/lock/...</code>); Stage = the session's thread \
         state where waits are not sampled"
    } else {
        "CPU = active with no wait event"
    };
    let background = if m.background.is_empty() {
        ""
    } else if m.is_mysql() {
        " The server's own threads (replication, events, Galera's appliers) are sampled apart \
         as background sessions and are not in the load."
    } else {
        " Background sessions (every <code>backend_type</code> but client backends and their \
         parallel workers: a standby's walsender, autovacuum workers, ...) and other \
         observers' sessions are sampled apart and are not in the load."
    };
    let _ = write!(
        o,
        "</table><p class=\"muted\">{how}, over the {:.1} s of the run; {events}. {:.2} AAS in \
         all.{background}</p></div></div></section>",
        (m.window_end_ms - m.window_start_ms) as f64 / 1000.0,
        crate::observed_hosts::average_active(m)
    );
}

/// Top SQL by execution time, with the wait events each statement was sampled in.
pub(super) fn top_sql(o: &mut String, m: &ServerMetrics) {
    o.push_str("<section id=\"top-sql\"><h2>Top SQL by execution time</h2>");
    if m.statements.is_empty() {
        o.push_str("<p class=\"muted\">No statement statistics: see the notes below.</p>");
    } else {
        let all = m
            .statements_total
            .as_ref()
            .map_or(0.0, |t| t.total_exec_time_ms)
            .max(1e-9);
        // MySQL's digests count rows examined, not buffers or WAL.
        let mysql = m.is_mysql();
        o.push_str(
            "<table><tr><th class=\"l\">statement</th><th>calls</th><th>total ms</th>\
             <th class=\"l\">share</th><th>mean ms</th><th>rows</th>",
        );
        o.push_str(if mysql {
            "<th>rows examined</th><th class=\"l\">waits</th></tr>"
        } else {
            "<th>hit %</th><th>WAL</th><th class=\"l\">waits</th></tr>"
        });
        for s in &m.statements {
            let frac = s.total_exec_time_ms / all;
            let waits = s
                .query_id
                .map(|id| {
                    let ws = m.waits_of(id);
                    let n: u64 = ws.iter().map(|w| w.samples).sum();
                    ws.iter()
                        .take(3)
                        .map(|w| {
                            format!(
                                "{} {:.0}%",
                                event_tag(&w.event),
                                100.0 * w.samples as f64 / n.max(1) as f64
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("<br>")
                })
                .unwrap_or_default();
            let cells = if mysql {
                format!(
                    "<td>{}</td>",
                    s.rows_examined.map_or("-".into(), |r| r.to_string())
                )
            } else {
                format!(
                    "<td>{}</td><td>{}</td>",
                    hit_pct(s.shared_blks_hit as f64, s.shared_blks_read as f64)
                        .map_or("-".into(), |h| format!("{h:.1}")),
                    s.wal_bytes.map_or("-".into(), bytes)
                )
            };
            let _ = write!(
                o,
                "<tr><td class=\"l sql\"><code>{}</code></td><td>{}</td><td>{:.1}</td>\
                 <td class=\"l\">{} {:.1}%</td><td>{}</td><td>{}</td>{cells}\
                 <td class=\"l\">{}</td></tr>",
                esc(&s.query),
                s.calls,
                s.total_exec_time_ms,
                share_bar(frac),
                100.0 * frac,
                f3(s.mean_exec_time_ms),
                s.rows,
                if waits.is_empty() { "-".into() } else { waits }
            );
        }
        o.push_str("</table>");
        if let Some(t) = m.statements.first() {
            if let Some(w) = top_wait_of(m, t) {
                let _ = write!(
                    o,
                    "<p class=\"muted\">The statement with the most execution time spent most of \
                     its sampled time in {}.</p>",
                    event_tag(&w)
                );
            }
        }
    }
    o.push_str("</section>");
}
