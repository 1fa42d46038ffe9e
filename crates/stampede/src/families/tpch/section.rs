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
        for n in &t.notes {
            let _ = write!(o, "<p>{}</p>", report::svg::esc(n));
        }
        // Per-query bars: each item's time in each stream, the longest as the full width.
        let longest = (t.items.iter())
            .filter_map(|i| i.seconds)
            .fold(0.0f64, f64::max);
        let _ = write!(o, "<table class=\"tpch\"><tr><th>stream</th><th>item</th><th>seconds</th><th>rows</th><th></th></tr>");
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
                "<tr><td>{}</td><td>{}</td><td>{secs}</td><td>{}</td><td><svg width=\"300\" \
                 height=\"10\"><rect width=\"{width}\" height=\"10\" fill=\"#4a7ab5\"/></svg>\
                 </td></tr>",
                report::svg::esc(&label(&t, i.stream)),
                report::svg::esc(&i.item),
                i.rows.map_or("-".into(), |r| format!("{r:.0}")),
            );
        }
        let _ = write!(o, "</table></section>");
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
}
