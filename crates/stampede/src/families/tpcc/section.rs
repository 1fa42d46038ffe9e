//! TPC-C's part of a result (`tpcc` in the JSON, a family section of `report::section`): the
//! metric of clause 5.4 (tpmC, NOPM, tpmTotal, efficiency against 12.86 tpmC per warehouse),
//! each transaction type's 90th percentile against its limit (clause 5.2.5.7), the inputs'
//! shares that show the run followed the specification, and the consistency conditions of
//! clause 3.3.2. Renders its lines of stampede's summary (`tpmC: N`, which scripts grep), the
//! pgbench voice's size line, the HTML report's lead number and section, and merges a fleet's
//! sections exactly ([`View::merge`]: counts summed, rates and percentiles from the merged
//! totals). Must not touch: how the numbers are measured (the runner, `mod.rs`).

use std::fmt::Write as _;

use report::html::kpi;
use report::svg::{esc, Chart, Kind, Series};
use report::RunResult;
use serde::{Deserialize, Serialize};

/// TPC-C's numbers of a `tpcc` run (TPC-C 5.11 clause 5.4). Transaction types are indexed as
/// in `config.txn_types`: new-order, payment, order-status, delivery, stock-level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccSection {
    /// Warehouses the run used (`-w`).
    pub warehouses: u32,
    /// Run by the book (`--spec`): keying and think times, 10 terminals per warehouse.
    pub by_the_book: bool,
    /// New-Order transactions completed per minute of the measured run, rolled-back ones
    /// included (clause 5.4.2).
    pub tpmc: f64,
    /// New-Orders per minute counting only committed ones (HammerDB's NOPM).
    pub nopm: f64,
    /// All transactions completed per minute.
    pub tpm_total: f64,
    /// tpmC / (12.86 x warehouses), in percent: the share of the most a by-the-book run can
    /// give; meaningful only when `by_the_book`.
    pub efficiency_pct: f64,
    /// New-Orders rolled back by design (1%, clause 2.4.2.3); counted in tpmC, not commits.
    pub rollbacks: u64,
    /// Retries of serialization failures and deadlocks (clause-compliant re-submissions).
    pub retries: u64,
    /// Districts a Delivery found nothing to deliver in (clause 2.7.4.2).
    pub delivery_skipped: u64,
    /// Order lines supplied by a remote warehouse, and all order lines, of committed
    /// New-Orders (clause 2.4.1.5: about 1% remote).
    pub remote_lines: u64,
    pub lines: u64,
    /// Payments and Order-Status calls that chose the customer by last name (about 60%).
    pub by_last_name: u64,
    /// The 90th-percentile response time of each type against its limit (clause 5.2.5.7).
    pub response_limits: Vec<TpccLimit>,
    /// The consistency conditions of clause 3.3.2 after the run (empty with `--no-check`).
    #[serde(default)]
    pub consistency: Vec<TpccCondition>,
}

/// The most tpmC one warehouse can give when run by the book (10 terminals, the keying and
/// think times of clause 5.2.5.7): efficiency is measured against it.
pub const MAX_TPMC_PER_WAREHOUSE: f64 = 12.86;

impl TpccSection {
    /// The per-minute rates and the response-time limits from a run's totals (clause 5.4):
    /// tpmC counts every completed New-Order (the first type), rolled-back ones included; NOPM
    /// only the committed ones. `response_limits` must list the types in order with their
    /// limits; counts and 90th percentiles are set here. Used for one run and for a merged
    /// fleet's result, whose totals are the union of the processes'.
    pub fn set_rates(&mut self, total: &measure::Interval, measured_s: f64) {
        let minutes = measured_s / 60.0;
        let per_min = |x: u64| {
            if minutes > 0.0 {
                x as f64 / minutes
            } else {
                0.0
            }
        };
        let new_orders = total.txns.first().map_or(0, |t| t.committed());
        let all = total.total();
        self.tpmc = per_min(new_orders);
        self.nopm = per_min(new_orders.saturating_sub(self.rollbacks));
        self.tpm_total = per_min(all.committed());
        self.efficiency_pct =
            100.0 * self.tpmc / (MAX_TPMC_PER_WAREHOUSE * f64::from(self.warehouses.max(1)));
        self.retries = all.retries;
        for (l, s) in self.response_limits.iter_mut().zip(&total.txns) {
            l.count = s.committed();
            l.p90_ms = if s.latency.is_empty() {
                0.0
            } else {
                s.latency.percentile_us(90.0) as f64 / 1000.0
            };
            l.met = l.count > 0 && l.p90_ms <= l.limit_ms;
        }
    }
}

/// One transaction type's 90th percentile against clause 5.2.5.7's limit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccLimit {
    pub txn_type: String,
    pub count: u64,
    pub p90_ms: f64,
    pub limit_ms: f64,
    /// `count > 0 && p90_ms <= limit_ms`.
    pub met: bool,
}

/// One consistency condition (clause 3.3.2.x).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccCondition {
    pub clause: String,
    pub rule: String,
    /// Rows that violate it (0: it holds).
    pub violations: i64,
    /// False when the condition does not apply to the data's state (3.3.2.11 after a
    /// Delivery).
    pub applies: bool,
}

/// The consistency conditions as the section keeps them.
pub(crate) fn conditions(checked: &[workload::tpcc::consistency::Condition]) -> Vec<TpccCondition> {
    (checked.iter())
        .map(|c| TpccCondition {
            clause: c.clause.into(),
            rule: c.rule.into(),
            violations: c.violations,
            applies: c.applies,
        })
        .collect()
}

impl report::section::Section for TpccSection {
    const KEY: &'static str = "tpcc";
}

/// How the section renders and merges (`report::section`).
pub(crate) struct View;
pub(crate) static VIEW: View = View;

fn of(v: &serde_json::Value) -> Option<TpccSection> {
    TpccSection::deserialize(v).ok()
}

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <TpccSection as report::section::Section>::KEY
    }

    fn size_line(&self, _r: &RunResult, v: &serde_json::Value) -> Option<String> {
        of(v).map(|t| format!("warehouses: {}", t.warehouses))
    }

    fn headline(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
        if let Some(t) = of(v) {
            kpi(
                o,
                &format!("{:.1}", t.tpmc),
                "tpmC",
                "New-Orders per minute",
            );
        }
    }

    fn summary_lines(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
        if let Some(t) = of(v) {
            text_lines(o, &t);
        }
    }

    fn html(&self, r: &RunResult, v: &serde_json::Value, o: &mut String) {
        if let Some(t) = of(v) {
            html_section(o, r, &t);
        }
    }

    fn merge(
        &self,
        parts: &[Option<&serde_json::Value>],
        merged: &RunResult,
    ) -> Option<serde_json::Value> {
        let parts: Option<Vec<TpccSection>> = parts.iter().map(|p| of((*p)?)).collect();
        let t = merged_section(&parts?, &merged.total, merged.measured_duration_s)?;
        serde_json::to_value(t).ok()
    }

    /// A sweep's step keeps clause 5.4's metric, from that step's own section.
    fn metrics(&self, _r: &RunResult, v: &serde_json::Value) -> Vec<report::section::Metric> {
        let Some(t) = of(v) else {
            return Vec::new();
        };
        let per_min = |name: &str, value: f64| report::section::Metric {
            name: name.into(),
            unit: "New-Orders/min".into(),
            value,
        };
        vec![per_min("tpmC", t.tpmc), per_min("NOPM", t.nopm)]
    }
}

/// TPC-C's block: the metric line (`tpmC: N`, which scripts grep), the response-time limits
/// and the counts that show the inputs followed the specification.
pub(crate) fn text_lines(o: &mut String, t: &TpccSection) {
    let mut metric = format!(
        "tpmC: {:.1} (NOPM {:.1}, tpmTotal {:.1}, {} warehouse{}",
        t.tpmc,
        t.nopm,
        t.tpm_total,
        t.warehouses,
        if t.warehouses == 1 { "" } else { "s" }
    );
    if t.by_the_book {
        let _ = write!(
            metric,
            "; efficiency {:.1}% of 12.86 tpmC per warehouse",
            t.efficiency_pct
        );
    }
    let _ = writeln!(o, "{metric})");
    // The figure means something else paced or not: say which, on the line after the metric.
    let pacing = match t.by_the_book {
        true => {
            "TPC-C pacing: by the book (--spec): 10 terminals per warehouse with keying and \
                 think times (clause 5.2.5), so tpmC is bounded by 12.86 per warehouse"
        }
        false => {
            "TPC-C pacing: unpaced (no keying or think times): tpmC is the server's \
                  throughput under this many clients, not a result comparable with published \
                  TPC-C figures (--spec runs by the book)"
        }
    };
    let _ = writeln!(o, "{pacing}");
    let limits: Vec<String> = (t.response_limits.iter())
        .map(|l| {
            let verdict = match (l.count, l.met) {
                (0, _) => "none ran",
                (_, true) => "met",
                _ => "MISSED",
            };
            format!(
                "{} {:.1} ms (limit {:.0} s, {verdict})",
                l.txn_type,
                l.p90_ms,
                l.limit_ms / 1000.0
            )
        })
        .collect();
    let _ = writeln!(o, "TPC-C 90th percentiles: {}", limits.join(", "));
    let new_orders = t.response_limits.first().map_or(0, |l| l.count);
    let _ = writeln!(
        o,
        "TPC-C inputs: rollbacks {} ({:.2}% of new-orders), remote order lines {:.2}%, \
         customers by last name {}, retries {}, deliveries skipped {} (districts a Delivery \
         found no undelivered order in, clause 2.7.4.2: expected when Delivery outruns \
         New-Order; the Delivery itself still commits and counts)",
        t.rollbacks,
        pct(t.rollbacks, new_orders),
        pct(t.remote_lines, t.lines),
        t.by_last_name,
        t.retries,
        t.delivery_skipped
    );
}

pub(crate) fn html_section(o: &mut String, r: &RunResult, t: &TpccSection) {
    o.push_str("<section id=\"tpcc\"><h2>TPC-C</h2>");
    let _ = write!(
        o,
        "<p><b>tpmC {:.1}</b> (New-Orders per minute, rolled-back ones included, clause 5.4.2) · \
         NOPM {:.1} · tpmTotal {:.1} · {} warehouse{}",
        t.tpmc,
        t.nopm,
        t.tpm_total,
        t.warehouses,
        if t.warehouses == 1 { "" } else { "s" }
    );
    if t.by_the_book {
        let _ = write!(
            o,
            " · efficiency {:.1}% of 12.86 tpmC per warehouse (run by the book)",
            t.efficiency_pct
        );
    } else {
        o.push_str(
            " · no keying or think times (throughput test; <code>--spec</code> runs by the book)",
        );
    }
    o.push_str("</p>");

    // tpmC over time: New-Orders of each full interval, per minute.
    let full = r
        .intervals
        .first()
        .map_or(0, |i| i.end_us.saturating_sub(i.start_us));
    let points: Vec<(f64, f64)> = (r.intervals.iter())
        .filter(|i| i.end_us > i.start_us && 2 * (i.end_us - i.start_us) >= full)
        .map(|i| {
            let n = i.txns.first().map_or(0, |s| s.committed());
            (i.end_us as f64 / 1e6, 60.0 * n as f64 / i.duration_s())
        })
        .collect();
    if points.len() >= 2 {
        let mut c = Chart::new(
            "chart-tpmc",
            "tpmC over time",
            "seconds",
            "New-Orders / min",
            Kind::Lines,
        );
        c.series.push(Series {
            name: "tpmC".into(),
            color: "#3056d3".into(),
            points,
            dashed: false,
        });
        o.push_str(&c.render());
    }

    o.push_str(
        "<table><thead><tr><th>transaction</th><th>completed</th><th>p90 ms</th>\
         <th>limit (clause 5.2.5.7)</th><th></th></tr></thead><tbody>",
    );
    for l in &t.response_limits {
        let verdict = match (l.count, l.met) {
            (0, _) => "none ran",
            (_, true) => "met",
            _ => "missed",
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.0} s</td><td>{verdict}</td></tr>",
            esc(&l.txn_type),
            l.count,
            f3(l.p90_ms),
            l.limit_ms / 1000.0
        );
    }
    o.push_str("</tbody></table>");
    let new_orders = t.response_limits.first().map_or(0, |l| l.count).max(1);
    let _ = write!(
        o,
        "<p class=\"muted\">Inputs: {} New-Orders rolled back by design ({:.2}%, clause 2.4.2.3: 1%), \
         {:.2}% of order lines from a remote warehouse (2.4.1.5: 1%), {} customers chosen by last \
         name, {} retries of serialization failures and deadlocks (re-submitted, clause 2.1.2), \
         {} districts with nothing to deliver.</p>",
        t.rollbacks,
        100.0 * t.rollbacks as f64 / new_orders as f64,
        100.0 * t.remote_lines as f64 / t.lines.max(1) as f64,
        t.by_last_name,
        t.retries,
        t.delivery_skipped
    );
    if t.consistency.is_empty() {
        o.push_str("<p class=\"muted\">Consistency conditions not checked (--no-check).</p>");
    } else {
        o.push_str(
            "<table><thead><tr><th>clause</th><th>condition</th><th>verdict</th></tr></thead><tbody>",
        );
        for c in &t.consistency {
            let verdict = match (c.applies, c.violations) {
                (false, _) => "does not apply after a Delivery".to_string(),
                (true, 0) => "holds".to_string(),
                (true, n) => format!("FAILED: {n} rows violate it"),
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.clause),
                esc(&c.rule),
                esc(&verdict)
            );
        }
        o.push_str("</tbody></table>");
    }
    o.push_str("</section>");
}

/// TPC-C's section of the merged result, when every result has one: the workload's counts
/// summed, each consistency condition as the worst any process saw (each checked the database
/// after its own run), and tpmC, NOPM and the response-time limits recomputed from the merged
/// totals (`TpccSection::set_rates`), so tpmC is the fleet's New-Orders per minute of the
/// fleet's measured time and each 90th percentile is that of the union of latencies.
fn merged_section(
    parts: &[TpccSection],
    total: &measure::Interval,
    measured_s: f64,
) -> Option<TpccSection> {
    let mut out = parts.first()?.clone();
    for t in &parts[1..] {
        out.warehouses = out.warehouses.max(t.warehouses);
        out.by_the_book &= t.by_the_book;
        out.rollbacks += t.rollbacks;
        out.delivery_skipped += t.delivery_skipped;
        out.remote_lines += t.remote_lines;
        out.lines += t.lines;
        out.by_last_name += t.by_last_name;
        for c in &t.consistency {
            match out.consistency.iter_mut().find(|o| o.clause == c.clause) {
                Some(o) => {
                    o.violations = o.violations.max(c.violations);
                    o.applies |= c.applies;
                }
                None => out.consistency.push(c.clone()),
            }
        }
    }
    out.set_rates(total, measured_s);
    Some(out)
}

/// A share in percent (0 of nothing).
fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A TPC-C section with every field set (for the schema tests and renderers).
    pub(crate) fn sample() -> TpccSection {
        TpccSection {
            warehouses: 2,
            by_the_book: true,
            tpmc: 25.1,
            nopm: 24.8,
            tpm_total: 55.7,
            efficiency_pct: 97.6,
            rollbacks: 1,
            retries: 2,
            delivery_skipped: 0,
            remote_lines: 3,
            lines: 250,
            by_last_name: 14,
            response_limits: vec![TpccLimit {
                txn_type: "new-order".into(),
                count: 25,
                p90_ms: 12.5,
                limit_ms: 5000.0,
                met: true,
            }],
            consistency: vec![TpccCondition {
                clause: "3.3.2.1".into(),
                rule: "W_YTD = sum(D_YTD)".into(),
                violations: 0,
                applies: true,
            }],
        }
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        let v = serde_json::to_value(sample()).unwrap();
        let nested = [
            ("/response_limits/0", "/properties/response_limits/items"),
            ("/consistency/0", "/properties/consistency/items"),
        ];
        let key = <TpccSection as report::section::Section>::KEY;
        let wrong = report::section::schema_mismatches(key, &v, &[], &nested);
        assert_eq!(wrong, Vec::<String>::new());
        // And its values: the schema's types and ranges refuse a broken section.
        let schema: serde_json::Value = serde_json::from_str(report::SCHEMA).unwrap();
        let def = serde_json::json!({"$defs": schema["$defs"], "$ref": "#/$defs/tpcc"});
        let validator = jsonschema::draft202012::new(&def).unwrap();
        assert!(validator.is_valid(&v));
        for (what, field, bad) in [
            ("no warehouse", "/warehouses", serde_json::json!(0)),
            ("a negative tpmC", "/tpmc", serde_json::json!(-1.0)),
            (
                "violations as text",
                "/consistency/0/violations",
                serde_json::json!("0"),
            ),
        ] {
            let mut b = v.clone();
            *b.pointer_mut(field).unwrap() = bad;
            assert!(!validator.is_valid(&b), "the schema accepted {what}");
        }
    }

    fn with_section(t: &TpccSection) -> RunResult {
        crate::families::install_views();
        let mut r = RunResult::default();
        r.config.txn_types = vec![report::TxnTypeConfig {
            name: "new-order".into(),
            ..Default::default()
        }];
        let (k, v) = report::section::keyed(t).unwrap();
        r.sections.insert(k.into(), v);
        r
    }

    /// A TPC-C run's report leads with tpmC and has the TPC-C section: the limits and every
    /// consistency condition with its verdict; the summaries say tpmC and the warehouses.
    #[test]
    fn the_report_leads_with_tpmc_and_shows_limits_and_conditions() {
        let r = with_section(&sample());
        let html = report::html::render(&r, None);
        assert!(html.contains("<section id=\"tpcc\">"));
        let lead = html
            .find("New-Orders per minute")
            .expect("the tpmC headline");
        let tps = html.find("committed transactions per second").unwrap();
        assert!(lead < tps, "tpmC before tps");
        assert!(html.contains("tpmC 25.1"));
        assert!(html.contains("efficiency 97.6%"));
        assert!(
            html.contains("<td>new-order</td><td>25</td><td>12.500</td><td>5 s</td><td>met</td>")
        );
        assert!(html.contains("<td>3.3.2.1</td><td>W_YTD = sum(D_YTD)</td><td>holds</td>"));
        let text = report::render_stampede_summary(&r);
        assert!(
            text.contains("tpmC: 25.1 (NOPM 24.8, tpmTotal 55.7, 2 warehouses; efficiency 97.6%"),
            "{text}"
        );
        assert!(
            text.contains("new-order 12.5 ms (limit 5 s, met)"),
            "{text}"
        );
        let pgbench = report::render_text(&r);
        assert!(pgbench.contains("\nwarehouses: 2\n"), "{pgbench}");
        assert!(!pgbench.contains("scaling factor"), "{pgbench}");
    }

    /// Two processes of one TPC-C fleet: new-order latencies (ms) 1, 2 and 3, 100.
    #[test]
    fn a_fleet_s_rates_come_from_the_union_and_its_counts_are_summed() {
        let part = |rollbacks, violations| TpccSection {
            warehouses: 2,
            rollbacks,
            lines: 10,
            response_limits: vec![TpccLimit {
                txn_type: "new-order".into(),
                limit_ms: 5000.0,
                ..Default::default()
            }],
            consistency: vec![TpccCondition {
                clause: "3.3.2.1".into(),
                violations,
                applies: true,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut merged = RunResult::default();
        let mut h = measure::Histogram::new();
        for us in [1_000, 2_000, 3_000, 100_000] {
            h.record(us);
        }
        merged.total = measure::Interval::new(1, 0);
        merged.total.end_us = 2_000_000;
        merged.total.txns[0] = measure::TxnStats {
            latency: h,
            ..Default::default()
        };
        merged.measured_duration_s = 2.0;
        let (a, b) = (
            serde_json::to_value(part(1, 0)).unwrap(),
            serde_json::to_value(part(0, 2)).unwrap(),
        );
        let view: &dyn report::section::View = &VIEW;
        let t: TpccSection =
            serde_json::from_value(view.merge(&[Some(&a), Some(&b)], &merged).unwrap()).unwrap();
        let minutes = 2.0 / 60.0;
        assert_eq!(t.tpmc, 4.0 / minutes);
        assert_eq!(t.nopm, 3.0 / minutes);
        assert_eq!((t.rollbacks, t.lines), (1, 20));
        assert_eq!(t.consistency[0].violations, 2, "the worst process's count");
        // p90 of {1, 2, 3, 100} ms is the largest: not an average of the processes' p90s.
        assert_eq!(t.response_limits[0].count, 4);
        assert!(t.response_limits[0].p90_ms >= 99.0, "{t:?}");
        // A result without the section: no TPC-C section rather than a partial one.
        assert!(view.merge(&[Some(&a), None], &merged).is_none());
    }
}
