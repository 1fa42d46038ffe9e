//! A sweep step's own series (issue 32, item 3): what each step keeps besides its tps and
//! latency, and the charts and CSV that set any of it against the swept value.
//!
//! Each step is a run of its own ([`super::SweepStep::of`] reads its result), so everything here
//! is that step's and no other's:
//! - `counters`: the server's counters over the step, from the step's own observer (started and
//!   finished around the step's engine run: its window is the step, warm-up included), as the
//!   change over the window and that change per second of it. Every counter the observer read
//!   (PostgreSQL's `database.xact_commit`, `wal.wal_bytes`, ...; MySQL's `mysql.Com_select`,
//!   `mysql.Innodb_rows_read`, ...: `measure::server` names them).
//! - `metrics`: the family's own figures (TPC-C's tpmC and NOPM, iibench's rows/s), asked of the
//!   family's view (`section::View::metrics`), never named here.
//! - `committed_by_type` and `step_s`: the committed transactions of the whole step by type,
//!   and the step's measured seconds: what the family's figures are computed from (TPC-C's
//!   tpmC is the step's New-Orders per minute of `step_s`).
//! - `checks`: every check of the step with its verdict (`failed_checks` names the failed ones).
//! - `scale` and `rows`: the data's size the step ran on, and for a sweep over scale the rows
//!   of each table after the step's re-initialisation.
//!
//! The HTML charts one named set per chart against the steps: throughput, latency
//! percentiles, each unit of the family's figures, and a few key server counters per set of
//! [`counter_sets`] (a set is drawn when any step has one of its counters: PostgreSQL's sets
//! never show for a MariaDB sweep). Every counter is in the JSON, and in the CSV
//! ([`render_csv`]): a row per step, a column per counter's change and per-second rate.
//!
//! Must not touch: I/O, any one family (its figures come through its view).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{SweepSection, SweepStep};
use crate::model::{Check, RunResult};
use crate::section::Metric;
use crate::svg::{esc, Chart, Kind, Marker, Series};

/// One server counter over a step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepCounter {
    /// End minus start over the step's observer window.
    pub delta: f64,
    /// `delta` per second of that window.
    pub per_s: f64,
}

/// What a step keeps of its own run besides its tps and latency (module notes).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSeries {
    /// Measured seconds of the whole step, warm-up included.
    #[serde(default)]
    pub step_s: f64,
    /// Committed transactions of the whole step by transaction type.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub committed_by_type: BTreeMap<String, u64>,
    /// The family's own figures of the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<Metric>,
    /// Seconds the counters cover (the step's observer window); 0 without the observer.
    #[serde(default)]
    pub counters_s: f64,
    /// Every server counter over the step, by the observer's name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, StepCounter>,
    /// Every check of the step, with its verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// The data's size the step ran on (`config.scale`).
    #[serde(default)]
    pub scale: u32,
    /// A sweep over scale: each table's rows after the step's re-initialisation, as read from
    /// the server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows: BTreeMap<String, u64>,
}

impl StepSeries {
    /// The step's own series from its result (module notes); `rows` are the runner's to fill.
    pub fn of(r: &RunResult) -> StepSeries {
        let mut counters = BTreeMap::new();
        let mut counters_s = 0.0;
        if let Some(m) = &r.server_metrics {
            counters_s = (m.window_end_ms - m.window_start_ms).max(0) as f64 / 1000.0;
            for (k, d) in &m.deltas {
                let per_s = if counters_s > 0.0 {
                    d / counters_s
                } else {
                    0.0
                };
                counters.insert(k.clone(), StepCounter { delta: *d, per_s });
            }
        }
        let committed_by_type = (r.config.txn_types.iter().enumerate())
            .filter_map(|(i, t)| Some((t.name.clone(), r.total.txns.get(i)?.committed())))
            .collect();
        StepSeries {
            step_s: r.measured_duration_s,
            committed_by_type,
            metrics: crate::section::metrics(r),
            counters_s,
            counters,
            checks: r.checks.clone(),
            scale: r.config.scale,
            rows: BTreeMap::new(),
        }
    }
}

/// The key server counters charted against a sweep, a chart per set (`crate::counter_sets`,
/// the sets shown in sweeps): its title and its counters' keys, the rates only (a step keeps a
/// counter's change, which says nothing of a level). PostgreSQL's `pg_stat_database`/
/// `pg_stat_wal`, then MySQL's and MariaDB's `SHOW GLOBAL STATUS` (issue 32's seed 001 reads
/// Com_* per step of a thread sweep).
pub fn counter_sets() -> Vec<(&'static str, Vec<&'static str>)> {
    (crate::counter_sets::all())
        .filter(|s| s.in_sweeps())
        .map(|s| {
            let keys = (s.lines.iter())
                .filter(|l| matches!(l.2, crate::counter_sets::How::Rate(_)))
                .map(|l| l.0)
                .collect();
            (s.title, keys)
        })
        .collect()
}

const COLORS: [&str; 6] = [
    "#3056d3", "#d62828", "#2a9d8f", "#e9c46a", "#6a4c93", "#f4a261",
];

/// Where step `k` sits on the x axis: its place in the sweep; in a matrix, its value's place
/// among the inner parameter's values (each group a line over the same ticks).
fn x_of(s: &SweepSection, k: usize) -> f64 {
    match s.group_parameter {
        None => k as f64,
        Some(_) => {
            let v = &s.steps[k].value;
            (inner_values(s).iter()).position(|x| x == v).unwrap_or(0) as f64
        }
    }
}

/// The inner parameter's values in the order the steps first give them.
fn inner_values(s: &SweepSection) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for x in &s.steps {
        if !v.contains(&x.value) {
            v.push(x.value.clone());
        }
    }
    v
}

/// A chart of `s`'s steps: the steps evenly placed, labelled with their values, the knees
/// marked.
fn chart(s: &SweepSection, id: &str, title: &str, unit: &str) -> Chart {
    let mut c = Chart::new(
        id,
        &format!("{title} against {}", s.parameter),
        &s.parameter,
        unit,
        Kind::Lines,
    );
    let ticks: Vec<(f64, String)> = match s.group_parameter {
        None => (s.steps.iter().enumerate())
            .map(|(i, x)| (i as f64, x.value.clone()))
            .collect(),
        Some(_) => (inner_values(s).into_iter().enumerate())
            .map(|(i, v)| (i as f64, v))
            .collect(),
    };
    if ticks.len() == 1 {
        c.x_range = Some((-0.5, 0.5));
    }
    c.x_ticks = Some(ticks);
    for k in s.knees() {
        let label = match (&s.group_parameter, &k.group) {
            (Some(gp), Some(g)) => format!("knee {} ({gp}={g})", k.value),
            _ => format!("knee {}", k.value),
        };
        c.markers.push(Marker {
            x: x_of(s, k.index),
            label,
        });
    }
    c
}

/// A series over the steps that have a value for it: one line, or in a matrix one line per
/// group (named `NAME scale=10`), the group's colour shifted so that lines stay apart.
fn series(
    s: &SweepSection,
    name: &str,
    i: usize,
    pick: impl Fn(&SweepStep) -> Option<f64>,
) -> Vec<Series> {
    let groups = s.groups();
    let n = groups.len();
    (groups.into_iter().enumerate())
        .map(|(g, (group, idx))| {
            let points = (idx.into_iter())
                .filter_map(|k| Some((x_of(s, k), pick(&s.steps[k])?)))
                .collect();
            let name = match (&s.group_parameter, group) {
                (Some(gp), Some(v)) => format!("{name} {gp}={v}"),
                _ => name.to_string(),
            };
            Series::line(&name, COLORS[(i * n + g) % COLORS.len()], points)
        })
        .collect()
}

/// The family's figures' names in the order the steps give them, with their units.
fn metric_names(s: &SweepSection) -> Vec<(String, String)> {
    let mut names: Vec<(String, String)> = Vec::new();
    for m in s.steps.iter().flat_map(|x| &x.own.metrics) {
        if !names.iter().any(|(n, _)| *n == m.name) {
            names.push((m.name.clone(), m.unit.clone()));
        }
    }
    names
}

fn metric_of(x: &SweepStep, name: &str) -> Option<f64> {
    (x.own.metrics.iter())
        .find(|m| m.name == name)
        .map(|m| m.value)
}

/// Every chart of a sweep (module notes), ids starting with `id`: throughput (`{id}-tps`),
/// latency percentiles (`{id}-p99`), the family's figures (`{id}-metric-N`, one per unit) and
/// the counter sets present (`{id}-counters-N`).
pub(super) fn charts(s: &SweepSection, id: &str) -> String {
    let mut out = String::new();
    let mut c = chart(s, &format!("{id}-tps"), "throughput", "tps");
    c.series.extend(series(s, "throughput", 0, |x| Some(x.tps)));
    out.push_str(&c.render());
    let mut c = chart(s, &format!("{id}-p99"), "latency percentiles", "ms");
    for (i, (name, pick)) in [
        ("p50", (|x: &SweepStep| x.p50_ms) as fn(&SweepStep) -> f64),
        ("p95", |x| x.p95_ms),
        ("p99", |x| x.p99_ms),
    ]
    .into_iter()
    .enumerate()
    {
        c.series.extend(series(s, name, i, |x| Some(pick(x))));
    }
    out.push_str(&c.render());
    let names = metric_names(s);
    let mut units: Vec<&str> = Vec::new();
    for (_, u) in &names {
        if !units.contains(&u.as_str()) {
            units.push(u);
        }
    }
    for (k, unit) in units.iter().enumerate() {
        let of_unit: Vec<&String> = (names.iter())
            .filter(|(_, u)| u == unit)
            .map(|(n, _)| n)
            .collect();
        let title = (of_unit.iter().map(|n| n.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let mut c = chart(s, &format!("{id}-metric-{k}"), &title, unit);
        for (i, n) in of_unit.iter().enumerate() {
            c.series.extend(series(s, n, i, |x| metric_of(x, n)));
        }
        out.push_str(&c.render());
    }
    for (k, (title, keys)) in counter_sets().iter().enumerate() {
        let present: Vec<&str> = (keys.iter().copied())
            .filter(|key| s.steps.iter().any(|x| x.own.counters.contains_key(*key)))
            .collect();
        if present.is_empty() {
            continue;
        }
        let mut c = chart(
            s,
            &format!("{id}-counters-{k}"),
            &format!("server: {title}"),
            "per s",
        );
        for (i, key) in present.iter().enumerate() {
            c.series.extend(series(s, key, i, |x| {
                x.own.counters.get(*key).map(|c| c.per_s)
            }));
        }
        out.push_str(&c.render());
    }
    out
}

/// The HTML table of each step's own figures: the family's, the key counters per second, the
/// rows of a scale sweep, and every check's verdict.
pub(super) fn html_table(o: &mut String, s: &SweepSection) {
    let names = metric_names(s);
    let keys: Vec<&str> = (counter_sets().into_iter().flat_map(|(_, k)| k))
        .filter(|key| s.steps.iter().any(|x| x.own.counters.contains_key(*key)))
        .collect();
    let tables: Vec<&String> = {
        let mut t: Vec<&String> = s.steps.iter().flat_map(|x| x.own.rows.keys()).collect();
        t.sort();
        t.dedup();
        t
    };
    if names.is_empty() && keys.is_empty() && tables.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<table class=\"sweep-own\"><thead><tr>{}<th>{}</th><th>scale</th>",
        super::group_th(s),
        esc(&s.parameter)
    );
    for (n, u) in &names {
        let _ = write!(o, "<th>{} ({})</th>", esc(n), esc(u));
    }
    for t in &tables {
        let _ = write!(o, "<th>rows of {}</th>", esc(t));
    }
    for k in &keys {
        let _ = write!(o, "<th>{}/s</th>", esc(k));
    }
    o.push_str("<th class=\"l\">checks</th></tr></thead><tbody>");
    for x in &s.steps {
        let _ = write!(
            o,
            "<tr>{}<td>{}</td><td>{}</td>",
            super::group_td(x),
            esc(&x.value),
            x.own.scale
        );
        for (n, _) in &names {
            match metric_of(x, n) {
                Some(v) => {
                    let _ = write!(o, "<td>{v:.1}</td>");
                }
                None => o.push_str("<td></td>"),
            }
        }
        for t in &tables {
            match x.own.rows.get(*t) {
                Some(v) => {
                    let _ = write!(o, "<td>{v}</td>");
                }
                None => o.push_str("<td></td>"),
            }
        }
        for k in &keys {
            match x.own.counters.get(*k) {
                Some(c) => {
                    let _ = write!(o, "<td>{:.1}</td>", c.per_s);
                }
                None => o.push_str("<td></td>"),
            }
        }
        let checks: Vec<String> = (x.own.checks.iter())
            .map(|c| format!("{}: {}", c.name, c.status.label().to_lowercase()))
            .collect();
        let _ = write!(o, "<td class=\"l\">{}</td></tr>", esc(&checks.join("; ")));
    }
    o.push_str("</tbody></table>");
}

/// `"..."` with embedded quotes doubled, when the cell needs it (RFC 4180).
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The sweep as CSV (module notes), header first: a row per step; the step's figures, the
/// family's (`metric:NAME`), the rows of each table (`rows:TABLE`), then a column per counter
/// any step has, its change (`NAME`) and its rate (`NAME/s`); empty where a step has none.
pub fn render_csv(s: &SweepSection) -> String {
    let names = metric_names(s);
    let tables: Vec<String> = {
        let mut t: Vec<String> = (s.steps.iter())
            .flat_map(|x| x.own.rows.keys().cloned())
            .collect();
        t.sort();
        t.dedup();
        t
    };
    let counters: Vec<String> = {
        let mut t: Vec<String> = (s.steps.iter())
            .flat_map(|x| x.own.counters.keys().cloned())
            .collect();
        t.sort();
        t.dedup();
        t
    };
    // A matrix's outer parameter first (module notes of `sweep`).
    let mut head: Vec<String> = s.group_parameter.iter().map(|g| cell(g)).collect();
    head.extend(
        [
            s.parameter.as_str(),
            "scale",
            "clients",
            "tps",
            "mean_ms",
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "max_ms",
            "transactions",
            "failures",
            "aborted_clients",
            "failed_checks",
            "measured_s",
            "step_s",
            "counters_s",
        ]
        .iter()
        .map(|h| cell(h)),
    );
    head.extend(names.iter().map(|(n, _)| cell(&format!("metric:{n}"))));
    head.extend(tables.iter().map(|t| cell(&format!("rows:{t}"))));
    for c in &counters {
        head.push(cell(c));
        head.push(cell(&format!("{c}/s")));
    }
    let mut out = head.join(",");
    out.push('\n');
    for x in &s.steps {
        let mut row: Vec<String> = (s.group_parameter.iter())
            .map(|_| cell(x.group.as_deref().unwrap_or("")))
            .collect();
        row.extend([
            cell(&x.value),
            x.own.scale.to_string(),
            x.clients.to_string(),
            x.tps.to_string(),
            x.mean_ms.to_string(),
            x.p50_ms.to_string(),
            x.p95_ms.to_string(),
            x.p99_ms.to_string(),
            x.max_ms.to_string(),
            x.transactions.to_string(),
            x.failures.to_string(),
            x.aborted_clients.to_string(),
            cell(&x.failed_checks.join("; ")),
            x.measured_s.to_string(),
            x.own.step_s.to_string(),
            x.own.counters_s.to_string(),
        ]);
        let opt = |v: Option<String>| v.unwrap_or_default();
        row.extend(
            names
                .iter()
                .map(|(n, _)| opt(metric_of(x, n).map(|v| v.to_string()))),
        );
        row.extend(
            tables
                .iter()
                .map(|t| opt(x.own.rows.get(t).map(u64::to_string))),
        );
        for c in &counters {
            let v = x.own.counters.get(c);
            row.push(opt(v.map(|v| v.delta.to_string())));
            row.push(opt(v.map(|v| v.per_s.to_string())));
        }
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// The family's figures of a step in words (`tpmC 1234.5, NOPM 1230.0`); empty without any.
pub fn metrics_text(x: &SweepStep) -> String {
    (x.own.metrics.iter())
        .map(|m| format!("{} {:.1}", m.name, m.value))
        .collect::<Vec<_>>()
        .join(", ")
}
