//! The TPC-C section of the HTML report: the metric (tpmC, NOPM, tpmTotal, efficiency), tpmC
//! over time, each transaction type's 90th percentile against its limit (clause 5.2.5.7), the
//! inputs' shares, and the consistency conditions of clause 3.3.2.

use std::fmt::Write as _;

use super::{esc, f3};
use crate::model::{RunResult, TpccSection};
use crate::svg::{Chart, Kind, Series};

pub(super) fn section(o: &mut String, r: &RunResult, t: &TpccSection) {
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
