//! CH-benCHmark's part of a result (`ch` in the JSON, a family section of `report::section`):
//! the two groups of clients measured apart. TPC-C's figures over its five transaction types
//! alone (the `tpcc` section's own, nested: tpmC, the 90th percentiles against clause
//! 5.2.5.7's limits, the consistency conditions), TPC-C's latency over all five together (what
//! an analytic load does to OLTP latency, the benchmark's question), and each analytic query's
//! executions and times with the rate of queries per hour.
//!
//! A sweep over `--analytic-clients` keeps, per step, tpmC, the OLTP p99 and the queries per
//! hour ([`View::metrics`]), so the sweep's table and charts show OLTP latency against the
//! analytic clients. Renders its lines of stampede's summary (`tpmC: N` as `run tpcc` prints
//! it), a per-query table, and its HTML section. A fleet's sections are not merged (the
//! plan refuses `--fleet`).
//!
//! Must not touch: how the numbers are measured (the runner, `mod.rs`).

use std::fmt::Write as _;

use measure::{Interval, TxnStats};
use report::html::kpi;
use report::svg::esc;
use report::RunResult;
use serde::{Deserialize, Serialize};

use crate::families::tpcc::section::{self as tpcc_section, TpccSection};
use crate::families::tpch::workload::Rows;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChSection {
    /// TPC-C's clients (terminals, `-c`).
    pub oltp_clients: u32,
    /// Clients sending the analytic queries (`--analytic-clients`).
    pub analytic_clients: u32,
    /// TPC-C's latency over its five transaction types together.
    pub oltp: Latency,
    /// TPC-C's own figures over its five types alone, as `run tpcc` writes them.
    pub tpcc: TpccSection,
    /// Analytic queries that completed.
    pub queries: u64,
    /// Analytic queries completed per hour of the measured run, all analytic clients together.
    pub queries_per_hour: f64,
    /// Analytic queries that failed, `--query-timeout`'s included.
    pub query_failures: u64,
    /// Of those, the ones `--query-timeout` cancelled.
    pub timed_out: u64,
    /// Each of the 22 queries, in number order.
    pub per_query: Vec<QueryTimes>,
}

/// Committed transactions of a group, their rate and their latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub transactions: u64,
    pub tps: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    pub(crate) fn of(s: &TxnStats, measured_s: f64) -> Latency {
        let h = &s.latency;
        let ms = |p: f64| h.percentile_us(p) as f64 / 1000.0;
        Latency {
            transactions: s.committed(),
            tps: match measured_s > 0.0 {
                true => s.committed() as f64 / measured_s,
                false => 0.0,
            },
            mean_ms: h.mean_us() / 1000.0,
            p50_ms: ms(50.0),
            p90_ms: ms(90.0),
            p95_ms: ms(95.0),
            p99_ms: ms(99.0),
            max_ms: h.max_us() as f64 / 1000.0,
        }
    }
}

/// One analytic query over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryTimes {
    /// `Q1` to `Q22`.
    pub query: String,
    /// Completed executions.
    pub executions: u64,
    pub failures: u64,
    pub timed_out: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Fewest and most rows an execution returned (0 and 0 when none completed).
    pub rows_min: u64,
    pub rows_max: u64,
}

impl report::section::Section for ChSection {
    const KEY: &'static str = "ch";
}

/// The section from a run's totals: TPC-C's types are the first `oltp_types` of `total`, the
/// queries the rest in number order (`super::workload`); `tpcc` is TPC-C's section built
/// from TPC-C's types alone.
pub(crate) fn build(
    total: &Interval,
    measured_s: f64,
    oltp_types: usize,
    clients: (u32, u32),
    tpcc: TpccSection,
    rows: &[Rows],
) -> ChSection {
    let mut oltp = TxnStats::default();
    for t in total.txns.iter().take(oltp_types) {
        oltp.merge(t);
    }
    let mut s = ChSection {
        oltp_clients: clients.0,
        analytic_clients: clients.1,
        oltp: Latency::of(&oltp, measured_s),
        tpcc,
        ..Default::default()
    };
    for (i, t) in total.txns.iter().skip(oltp_types).enumerate() {
        let l = Latency::of(t, measured_s);
        let r = rows.get(i).copied().unwrap_or_default();
        s.queries += l.transactions;
        s.query_failures += t.failed();
        s.timed_out += r.timed_out;
        s.per_query.push(QueryTimes {
            query: format!("Q{}", i + 1),
            executions: l.transactions,
            failures: t.failed(),
            timed_out: r.timed_out,
            mean_ms: l.mean_ms,
            p50_ms: l.p50_ms,
            p99_ms: l.p99_ms,
            max_ms: l.max_ms,
            rows_min: r.min,
            rows_max: r.max,
        });
    }
    if measured_s > 0.0 {
        s.queries_per_hour = 3600.0 * s.queries as f64 / measured_s;
    }
    s
}

/// How the section renders (`report::section`).
pub(crate) struct View;
pub(crate) static VIEW: View = View;

fn of(v: &serde_json::Value) -> Option<ChSection> {
    ChSection::deserialize(v).ok()
}

/// The two groups in a line each.
fn group_lines(o: &mut String, c: &ChSection) {
    let _ = writeln!(
        o,
        "OLTP: {} TPC-C client{}, {} transactions, {:.1} tps, latency p50 {:.3} ms, p99 {:.3} ms \
         (all five types)",
        c.oltp_clients,
        if c.oltp_clients == 1 { "" } else { "s" },
        c.oltp.transactions,
        c.oltp.tps,
        c.oltp.p50_ms,
        c.oltp.p99_ms
    );
    let mut line = format!(
        "analytic: {} client{}, {} queries completed ({:.1} per hour), {} failed",
        c.analytic_clients,
        if c.analytic_clients == 1 { "" } else { "s" },
        c.queries,
        c.queries_per_hour,
        c.query_failures
    );
    if c.timed_out > 0 {
        let _ = write!(line, " ({} timed out)", c.timed_out);
    }
    let _ = writeln!(o, "{line}");
}

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <ChSection as report::section::Section>::KEY
    }

    fn size_line(&self, _r: &RunResult, v: &serde_json::Value) -> Option<String> {
        of(v).map(|c| format!("warehouses: {}", c.tpcc.warehouses))
    }

    fn headline(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
        if let Some(c) = of(v) {
            kpi(
                o,
                &format!("{:.1}", c.tpcc.tpmc),
                "tpmC",
                "New-Orders per minute",
            );
            kpi(
                o,
                &format!("{:.2}", c.oltp.p99_ms),
                "ms",
                "OLTP p99 (TPC-C)",
            );
            kpi(
                o,
                &format!("{:.1}", c.queries_per_hour),
                "queries/h",
                "analytic queries per hour",
            );
        }
    }

    fn summary_lines(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
        if let Some(c) = of(v) {
            tpcc_section::text_lines(o, &c.tpcc);
            group_lines(o, &c);
        }
    }

    fn text_block(&self, _r: &RunResult, v: &serde_json::Value) -> Option<String> {
        let c = of(v)?;
        if c.analytic_clients == 0 {
            return None;
        }
        let mut o = String::from(
            "CH-benCHmark analytic queries:\n  query  executions  failed     mean ms      p99 ms      \
             max ms  rows\n",
        );
        for q in &c.per_query {
            let _ = writeln!(
                o,
                "  {:<5}  {:>10}  {:>6}  {:>10.3}  {:>10.3}  {:>10.3}  {}",
                q.query,
                q.executions,
                q.failures,
                q.mean_ms,
                q.p99_ms,
                q.max_ms,
                rows(q)
            );
        }
        Some(o)
    }

    fn html(&self, r: &RunResult, v: &serde_json::Value, o: &mut String) {
        let Some(c) = of(v) else {
            return;
        };
        let mut lines = String::new();
        group_lines(&mut lines, &c);
        o.push_str("<section id=\"ch\"><h2>CH-benCHmark</h2>");
        for l in lines.lines() {
            let _ = write!(o, "<p>{}</p>", esc(l));
        }
        if c.analytic_clients > 0 {
            let longest = c.per_query.iter().map(|q| q.mean_ms).fold(0.0, f64::max);
            o.push_str(
                "<table><thead><tr><th>query</th><th>executions</th><th>failed</th>\
                 <th>mean ms</th><th>p99 ms</th><th>max ms</th><th>rows</th><th></th></tr>\
                 </thead><tbody>",
            );
            for q in &c.per_query {
                let width = match longest > 0.0 {
                    true => (q.mean_ms / longest * 300.0).round() as u32,
                    false => 0,
                };
                let _ = write!(
                    o,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td>\
                     <td>{:.3}</td><td>{}</td><td><svg width=\"300\" height=\"10\"><rect \
                     width=\"{width}\" height=\"10\" fill=\"#4a7ab5\"/></svg></td></tr>",
                    esc(&q.query),
                    q.executions,
                    q.failures,
                    q.mean_ms,
                    q.p99_ms,
                    q.max_ms,
                    esc(&rows(q))
                );
            }
            o.push_str("</tbody></table>");
        }
        o.push_str("</section>");
        tpcc_section::html_section(o, r, &c.tpcc);
    }

    /// A sweep's step keeps what the benchmark asks: TPC-C's rate and its p99 beside the
    /// analytic queries' rate, from that step's own section.
    fn metrics(&self, _r: &RunResult, v: &serde_json::Value) -> Vec<report::section::Metric> {
        let Some(c) = of(v) else {
            return Vec::new();
        };
        let m = |name: &str, unit: &str, value: f64| report::section::Metric {
            name: name.into(),
            unit: unit.into(),
            value,
        };
        vec![
            m("tpmC", "New-Orders/min", c.tpcc.tpmc),
            m("OLTP p99", "ms", c.oltp.p99_ms),
            m("OLTP p50", "ms", c.oltp.p50_ms),
            m("analytic queries", "queries/h", c.queries_per_hour),
        ]
    }
}

fn rows(q: &QueryTimes) -> String {
    match (q.executions, q.rows_min == q.rows_max) {
        (0, _) => "-".into(),
        (_, true) => q.rows_min.to_string(),
        _ => format!("{}..{}", q.rows_min, q.rows_max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ChSection {
        let mut total = Interval::new(27, 0);
        total.end_us = 60_000_000;
        for (i, t) in total.txns.iter_mut().enumerate() {
            for k in 0..(i as u64 + 1) {
                t.latency.record(1_000 * (k + 1));
            }
        }
        let rows = vec![
            Rows {
                executions: 1,
                total: 4,
                min: 4,
                max: 4,
                timed_out: 0
            };
            22
        ];
        build(
            &total,
            60.0,
            5,
            (4, 1),
            tpcc_section::tests::sample(),
            &rows,
        )
    }

    #[test]
    fn the_groups_are_apart_and_the_section_is_what_the_schema_declares() {
        let c = sample();
        // TPC-C's five types hold 1 + 2 + 3 + 4 + 5 commits, the queries 6 to 27 each.
        assert_eq!(c.oltp.transactions, 15);
        assert_eq!(c.queries, (6..=27).sum::<u64>());
        assert_eq!(c.per_query.len(), 22);
        assert_eq!(c.per_query[0].query, "Q1");
        assert_eq!(c.per_query[0].executions, 6);
        assert!((c.queries_per_hour - 60.0 * c.queries as f64).abs() < 1e-6);
        // OLTP's p99 is over TPC-C's types only: the longest of them took 5 ms.
        assert!(c.oltp.p99_ms <= 5.1, "{}", c.oltp.p99_ms);
        let v = serde_json::to_value(&c).unwrap();
        let nested = [
            ("/oltp", "/properties/oltp"),
            ("/per_query/0", "/properties/per_query/items"),
        ];
        let wrong = report::section::schema_mismatches("ch", &v, &[], &nested);
        assert_eq!(wrong, Vec::<String>::new());
    }

    #[test]
    fn a_sweep_step_keeps_tpmc_oltp_p99_and_the_query_rate() {
        let c = sample();
        let v = serde_json::to_value(&c).unwrap();
        let r = RunResult::default();
        let m = report::section::View::metrics(&VIEW, &r, &v);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["tpmC", "OLTP p99", "OLTP p50", "analytic queries"]);
        assert_eq!(m[1].value, c.oltp.p99_ms);
        let block = report::section::View::text_block(&VIEW, &r, &v).unwrap();
        assert!(block.contains("Q22"), "{block}");
        let mut lines = String::new();
        report::section::View::summary_lines(&VIEW, &r, &v, &mut lines);
        assert!(lines.starts_with("tpmC: "), "{lines}");
        assert!(lines.contains("OLTP: 4 TPC-C clients"), "{lines}");
    }
}
