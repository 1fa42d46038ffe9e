//! TPC-H's part of a result, under the key `tpch`: every stream's queries and refresh
//! functions with their times, rows and outcome, and the metrics of clause 5.4 (Power@Size,
//! Throughput@Size, QphH@Size) when the run measured what they need. A metric that cannot be
//! computed (a query failed or timed out, the run was cut short, the test that feeds it did
//! not run) is absent, with a note saying why, never a number made of the rest.
//!
//! Must not touch: the timing (the engine's histograms, one transaction type per stream and
//! item, give each time), the checks.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// One item of one stream: a query or a refresh function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// 0: the power test's stream; 1..=S: the throughput test's query streams; S + 1: its
    /// refresh stream. A single query's run (`tpch-qN`): 0.
    pub stream: u32,
    /// `Q1` .. `Q22`, `RF1`, `RF2`.
    pub item: String,
    pub executions: u64,
    pub failed: u64,
    /// Of the failed, the ones cancelled by `--query-timeout`.
    pub timed_out: u64,
    /// Mean time of the executions that succeeded, seconds.
    pub seconds: Option<f64>,
    /// Rows the query returned (a single query's run: the mean per execution).
    pub rows: Option<f64>,
    /// The answer set's row count for these parameters, where known (qgen's validation
    /// parameters at a scale the answers are known for).
    pub expected_rows: Option<u64>,
    /// The substitution parameters, as qgen would print them.
    pub params: Vec<String>,
    /// The hash of the query's plan shape (`super::plans`): explained after the run; `None`
    /// for a refresh function, a text EXPLAIN refused, or a result from before plans.
    #[serde(default)]
    pub plan_hash: Option<String>,
    /// When the item started and ended, seconds from the measured start: its stream's first
    /// start and the items' times laid end to end (`super::timeline`). `None` in a single
    /// query's loop, and in results from before.
    #[serde(default)]
    pub start_s: Option<f64>,
    #[serde(default)]
    pub end_s: Option<f64>,
}

/// What explaining the run's query texts found (`super::plans`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plans {
    /// Texts explained and hashed.
    pub hashed: u64,
    /// Texts with no hash, by the reason (`EXPLAIN refused it (42601)`).
    pub refused: std::collections::BTreeMap<String, u64>,
    /// Why no text was explained (`--no-check`), when none was.
    pub skipped: Option<String>,
}

/// TPC-H's section of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpchSection {
    /// The scale factor the tables were loaded at.
    pub scale: f64,
    /// `full`, `power`, `throughput` or `query` (`tpch-qN`).
    pub test: String,
    /// The throughput test's query streams (0 without one).
    pub streams: u32,
    /// qgen's validation parameters rather than seeded random ones.
    pub validation: bool,
    pub query_timeout_s: Option<f64>,
    pub items: Vec<Item>,
    /// Clause 5.4.1.
    pub power_at_size: Option<f64>,
    /// Clause 5.4.2, over `throughput_s`.
    pub throughput_at_size: Option<f64>,
    /// Clause 5.4.3.
    pub qphh_at_size: Option<f64>,
    /// Ts: the throughput test from its first stream's start to its last stream's end.
    pub throughput_s: Option<f64>,
    /// Why a metric is absent, or what makes it not comparable.
    pub notes: Vec<String>,
    /// The plans' hashes taken after the run; `None` until then (and in results from before).
    #[serde(default)]
    pub plans: Option<Plans>,
}

impl report::section::Section for TpchSection {
    const KEY: &'static str = "tpch";
}

pub(crate) struct View;
pub(crate) static VIEW: View = View;

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

/// The metrics' line.
fn headline(t: &TpchSection) -> String {
    if t.test == "query" {
        let q = t.items.first();
        return format!(
            "tpch: {} at SF {}: {} executions, {} failed ({} timed out), mean {} s, {} rows on \
             average",
            q.map_or("?", |q| q.item.as_str()),
            t.scale,
            q.map_or(0, |q| q.executions),
            q.map_or(0, |q| q.failed),
            q.map_or(0, |q| q.timed_out),
            q.and_then(|q| q.seconds)
                .map_or("-".into(), |s| format!("{s:.3}")),
            q.and_then(|q| q.rows)
                .map_or("-".into(), |r| format!("{r:.1}")),
        );
    }
    format!(
        "tpch: SF {} ({} test{}): Power@Size {}, Throughput@Size {}, QphH@Size {}",
        t.scale,
        t.test,
        if t.streams > 0 {
            format!(", {} streams", t.streams)
        } else {
            String::new()
        },
        num(t.power_at_size),
        num(t.throughput_at_size),
        num(t.qphh_at_size)
    )
}

/// A line per query: its time in each stream that ran it.
fn table(t: &TpchSection) -> Vec<String> {
    let streams: Vec<u32> = {
        let mut s: Vec<u32> = t.items.iter().map(|i| i.stream).collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    let mut names: Vec<&str> = Vec::new();
    for i in &t.items {
        if !names.contains(&i.item.as_str()) {
            names.push(&i.item);
        }
    }
    names.sort_by_key(|n| {
        let k: u32 = n.trim_start_matches(['Q', 'R', 'F']).parse().unwrap_or(0);
        (n.starts_with("RF"), k)
    });
    let mut v = Vec::new();
    let head: Vec<String> = streams
        .iter()
        .map(|s| format!("{:>10}", label(t, *s)))
        .collect();
    v.push(format!("{:<5}{}  rows", "", head.join("")));
    for n in names {
        let mut line = format!("{n:<5}");
        let mut rows = None;
        for s in &streams {
            let cell = match t.items.iter().find(|i| i.stream == *s && i.item == n) {
                None => String::new(),
                Some(i) if i.timed_out > 0 => "timeout".into(),
                Some(i) if i.failed > 0 => "failed".into(),
                Some(i) => {
                    if *s == 0 || rows.is_none() {
                        rows = rows.or(i.rows);
                    }
                    i.seconds.map_or("-".into(), |x| format!("{x:.3}"))
                }
            };
            let _ = write!(line, "{cell:>10}");
        }
        if let Some(r) = rows {
            let _ = write!(line, "  {r:.0}");
        }
        v.push(line);
    }
    v
}

/// A plan's hash and the streams (their labels) that got it.
pub(crate) type PlanStreams = (String, Vec<String>);

/// The queries whose plan differs between the streams that ran them: each query with its
/// plans, each plan's hash and the streams' labels that got it (by first appearance).
pub(crate) fn plan_differences(t: &TpchSection) -> Vec<(String, Vec<PlanStreams>)> {
    let mut out: Vec<(String, Vec<PlanStreams>)> = Vec::new();
    for i in &t.items {
        let Some(h) = &i.plan_hash else { continue };
        let at = match out.iter().position(|(q, _)| *q == i.item) {
            Some(at) => at,
            None => {
                out.push((i.item.clone(), Vec::new()));
                out.len() - 1
            }
        };
        let plans = &mut out[at].1;
        match plans.iter_mut().find(|(p, _)| p == h) {
            Some((_, streams)) => streams.push(label(t, i.stream)),
            None => plans.push((h.clone(), vec![label(t, i.stream)])),
        }
    }
    out.retain(|(_, plans)| plans.len() > 1);
    out
}

/// What the plans say, in lines: those not taken and why, the queries whose plans differ
/// between streams (what a reader looks for), or that each query kept one plan.
fn plan_lines(t: &TpchSection) -> Vec<String> {
    let Some(p) = &t.plans else {
        return Vec::new();
    };
    if let Some(why) = &p.skipped {
        return vec![format!("plans not explained: {why}")];
    }
    let mut v = Vec::new();
    let differ = plan_differences(t);
    let streams = t
        .items
        .iter()
        .filter(|i| i.plan_hash.is_some())
        .map(|i| i.stream);
    let several = streams.clone().min() != streams.max();
    if p.hashed > 0 && differ.is_empty() {
        v.push(format!(
            "plans: {} texts explained{}",
            p.hashed,
            if several {
                "; each query got the same plan in every stream"
            } else {
                ""
            }
        ));
    }
    for (q, plans) in differ {
        let each: Vec<String> = (plans.iter())
            .map(|(h, s)| format!("{h} ({})", s.join(", ")))
            .collect();
        v.push(format!(
            "{q} got {} different plans: {}",
            plans.len(),
            each.join("; ")
        ));
    }
    for (why, n) in &p.refused {
        v.push(format!("no plan hash for {n} texts: {why}"));
    }
    v
}

/// What `compare` sets side by side (`View::singles`): Power@Size, Throughput@Size and
/// QphH@Size; each item's time in the power test; each query's mean time over the throughput
/// test's query streams (a query that failed in any stream has none: a mean of the rest would
/// compare fewer executions with more). A loop (`tpch-qN`) has none: its per-interval samples
/// are compared like any run's.
pub(crate) fn singles(t: &TpchSection) -> Vec<report::compare::single::Single> {
    use report::compare::{single::Single, Better, Words};
    let mut v = Vec::new();
    if t.test == "query" {
        return v;
    }
    let metric = |name: &str, value: Option<f64>| Single {
        group: "TPC-H metrics".into(),
        name: name.into(),
        unit: "per hour x SF".into(),
        better: Better::Higher,
        words: Words::Level,
        min_abs: 0.0,
        value,
    };
    v.push(metric("Power@Size", t.power_at_size));
    v.push(metric("Throughput@Size", t.throughput_at_size));
    v.push(metric("QphH@Size", t.qphh_at_size));
    let time = |group: &str, name: String, value: Option<f64>| Single {
        group: group.into(),
        name,
        unit: "s".into(),
        better: Better::Lower,
        words: Words::Speed,
        // Below 10 ms a query's time is mostly its round trip and the scheduler.
        min_abs: 0.01,
        value,
    };
    let ok = |i: &&Item| i.failed == 0 && i.executions > 0;
    let names = (1..=22)
        .map(|q| format!("Q{q}"))
        .chain(["RF1".into(), "RF2".into()]);
    if t.test != "throughput" {
        for n in names {
            let i = t.items.iter().find(|i| i.stream == 0 && i.item == n);
            v.push(time("power test", n, i.filter(ok).and_then(|i| i.seconds)));
        }
    }
    if t.streams > 0 {
        for q in 1..=22 {
            let n = format!("Q{q}");
            let of: Vec<&Item> = (t.items.iter())
                .filter(|i| (1..=t.streams).contains(&i.stream) && i.item == n)
                .collect();
            let secs: Vec<f64> = (of.iter().filter(|i| ok(i)))
                .filter_map(|i| i.seconds)
                .collect();
            let mean = (!of.is_empty() && secs.len() == of.len())
                .then(|| secs.iter().sum::<f64>() / secs.len() as f64);
            // One group whatever the streams, so runs of 2 and 4 streams still match.
            v.push(time("throughput test, mean over the streams", n, mean));
        }
    }
    v
}

/// A stream's name: `power`, `stream N`, `refresh`.
pub(crate) fn stream_label(t: &TpchSection, s: u32) -> String {
    label(t, s)
}

fn label(t: &TpchSection, s: u32) -> String {
    match s {
        0 if t.test == "query" => "seconds".into(),
        0 => "power".into(),
        s if s == t.streams + 1 => "refresh".into(),
        s => format!("stream {s}"),
    }
}

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <TpchSection as report::section::Section>::KEY
    }

    fn summary_lines(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        let Ok(t) = TpchSection::deserialize(v) else {
            return;
        };
        let _ = writeln!(o, "{}", headline(&t));
        if let Some(ts) = t.throughput_s {
            let _ = writeln!(o, "tpch: throughput test Ts {ts:.3} s");
        }
        for n in &t.notes {
            let _ = writeln!(o, "tpch: {n}");
        }
        if t.test != "query" {
            for l in table(&t) {
                let _ = writeln!(o, "  {l}");
            }
        }
        for l in plan_lines(&t) {
            let _ = writeln!(o, "tpch: {l}");
        }
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        let Ok(t) = TpchSection::deserialize(v) else {
            return;
        };
        let _ = write!(
            o,
            "<section id=\"tpch\"><h2>TPC-H</h2><p>{}</p>",
            report::svg::esc(&headline(&t))
        );
        for n in t.notes.iter().chain(&plan_lines(&t)) {
            let _ = write!(o, "<p>{}</p>", report::svg::esc(n));
        }
        o.push_str(&super::charts::render(&t));
        // Per-query bars: each item's time in each stream, the longest as the full width.
        let longest = (t.items.iter())
            .filter_map(|i| i.seconds)
            .fold(0.0f64, f64::max);
        let _ = write!(o, "<table class=\"tpch\"><tr><th>stream</th><th>item</th><th>seconds</th><th>rows</th><th>plan</th><th></th></tr>");
        for i in &t.items {
            let secs = match (i.timed_out, i.failed, i.seconds) {
                (n, _, _) if n > 0 => "timed out".to_string(),
                (_, n, _) if n > 0 => "failed".to_string(),
                (_, _, Some(s)) => format!("{s:.3}"),
                _ => "-".into(),
            };
            let width = match (i.seconds, longest > 0.0) {
                (Some(s), true) => (s / longest * 300.0).round() as u32,
                _ => 0,
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{secs}</td><td>{}</td><td><code>{}</code></td>\
                 <td><svg width=\"300\" height=\"10\"><rect width=\"{width}\" height=\"10\" \
                 fill=\"#4a7ab5\"/></svg></td></tr>",
                report::svg::esc(&label(&t, i.stream)),
                report::svg::esc(&i.item),
                i.rows.map_or("-".into(), |r| format!("{r:.0}")),
                report::svg::esc(i.plan_hash.as_deref().unwrap_or("-")),
            );
        }
        let _ = write!(o, "</table></section>");
    }

    /// For `compare`: the metrics, the power test's time per item and the throughput test's
    /// mean per query over its streams (each measured once: `report::compare::single`).
    fn singles(
        &self,
        _r: &report::RunResult,
        v: &serde_json::Value,
    ) -> Vec<report::compare::single::Single> {
        match TpchSection::deserialize(v) {
            Ok(t) => singles(&t),
            Err(_) => Vec::new(),
        }
    }

    /// A fleet's processes would each run their own streams: no merged metric is made of
    /// them (left out of a merged result).
    fn merge(
        &self,
        _parts: &[Option<&serde_json::Value>],
        _merged: &report::RunResult,
    ) -> Option<serde_json::Value> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(stream: u32, name: &str, seconds: f64) -> Item {
        Item {
            stream,
            item: name.into(),
            executions: 1,
            seconds: Some(seconds),
            rows: Some(4.0),
            ..Item::default()
        }
    }

    #[test]
    fn the_text_shows_the_metrics_and_each_query_per_stream() {
        let mut t = TpchSection {
            scale: 0.1,
            test: "full".into(),
            streams: 1,
            items: vec![
                item(0, "Q2", 0.5),
                item(0, "Q10", 1.25),
                item(0, "RF1", 0.1),
                item(1, "Q2", 0.75),
                item(2, "RF1", 0.2),
            ],
            power_at_size: Some(1234.56),
            ..Default::default()
        };
        t.items[3].timed_out = 1;
        t.items[3].failed = 1;
        let h = headline(&t);
        assert!(h.contains("Power@Size 1234.6, Throughput@Size -"), "{h}");
        let rows = table(&t);
        assert!(
            rows[0].contains("power") && rows[0].contains("stream 1"),
            "{rows:?}"
        );
        assert!(rows[0].contains("refresh"), "{rows:?}");
        // Q2 before Q10 (by number), the refresh functions last; a timeout named as such.
        assert!(
            rows[1].starts_with("Q2") && rows[1].contains("timeout"),
            "{rows:?}"
        );
        assert!(
            rows[2].starts_with("Q10") && rows[2].contains("1.250"),
            "{rows:?}"
        );
        assert!(
            rows[3].starts_with("RF1") && rows[3].contains("0.200"),
            "{rows:?}"
        );
    }

    #[test]
    fn plans_that_differ_between_streams_are_named_and_the_section_is_the_schemas() {
        let mut t = TpchSection {
            scale: 0.01,
            test: "full".into(),
            streams: 2,
            items: vec![
                item(0, "Q9", 0.5),
                item(1, "Q9", 0.5),
                item(2, "Q9", 0.5),
                item(0, "Q1", 0.5),
                item(1, "Q1", 0.5),
                item(3, "RF1", 0.1),
            ],
            plans: Some(Plans {
                hashed: 5,
                refused: [("EXPLAIN refused it (42601)".to_string(), 1)].into(),
                skipped: None,
            }),
            ..Default::default()
        };
        for (k, h) in ["aa", "bb", "aa", "cc", "cc"].iter().enumerate() {
            t.items[k].plan_hash = Some(h.repeat(8));
        }
        let d = plan_differences(&t);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "Q9");
        assert_eq!(
            d[0].1,
            [
                ("aa".repeat(8), vec!["power".to_string(), "stream 2".into()]),
                ("bb".repeat(8), vec!["stream 1".to_string()]),
            ]
        );
        let lines = plan_lines(&t);
        assert!(
            lines[0].starts_with("Q9 got 2 different plans"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("1 texts: EXPLAIN refused it"),
            "{lines:?}"
        );
        t.items[1].plan_hash = Some("aa".repeat(8));
        assert!(plan_lines(&t)[0].contains("the same plan in every stream"));
        let v = serde_json::to_value(&t).unwrap();
        let later = ["plan_hash", "start_s", "end_s", "plans"];
        let mut wrong = report::section::schema_mismatches("tpch", &v, &later, &[]);
        wrong.extend(report::section::schema_mismatches(
            "tpch",
            &v,
            &later,
            &[
                ("/items/0", "/properties/items/items"),
                ("/plans", "/properties/plans"),
            ],
        ));
        wrong.sort();
        wrong.dedup();
        assert_eq!(wrong, Vec::<String>::new());
        // A result from before the plans still reads.
        let mut old = v.clone();
        old.as_object_mut().unwrap().remove("plans");
        old["items"][0].as_object_mut().unwrap().remove("plan_hash");
        assert!(TpchSection::deserialize(&old).is_ok());
    }
}
