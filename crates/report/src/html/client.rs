//! The client's side of the run, as the engine measured it: throughput and latency
//! percentiles over time (from `RunResult::intervals`), the latency distribution (from the
//! whole-run histogram, with a percentile table per transaction type), and the per-transaction
//! and per-statement tables.
//!
//! Must not touch: server observations, except the checkpoint markers laid over the time charts
//! (beside the warm-up's and the settling point's).

use std::fmt::Write as _;

use measure::{Histogram, TxnStats};

use super::server::checkpoint_markers;
use super::{chart_block, dashed_if_any, f3, ms, pct_of};
use crate::model::RunResult;
use crate::observed::one_line;
use crate::svg::{bars, esc, Chart, Kind, Marker, Series};

/// Approximate distribution of a histogram: `n` equal-width bins from its minimum to its
/// p99.9 (the tail beyond is reported in the table, not drawn), filled from 2,000 evenly spaced
/// quantiles — the histogram's own buckets are not exposed, and the quantiles are exact to its
/// precision.
pub(super) fn distribution(h: &Histogram, n: usize) -> Vec<(f64, f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let lo = ms(h.min_us() as f64);
    let hi = pct_of(h, 99.9).max(lo + 0.001);
    distribution_in(h, lo, hi, n)
}

/// [`distribution`] over given bounds `[lo, hi]` in ms (to draw several runs on the same bins);
/// quantiles outside the bounds are left out.
pub(crate) fn distribution_in(h: &Histogram, lo: f64, hi: f64, n: usize) -> Vec<(f64, f64, f64)> {
    if h.is_empty() || n == 0 || hi <= lo {
        return Vec::new();
    }
    let width = (hi - lo) / n as f64;
    let mut counts = vec![0.0; n];
    const Q: usize = 2000;
    let each = h.count() as f64 / Q as f64;
    for i in 0..Q {
        let p = (i as f64 + 0.5) * 100.0 / Q as f64;
        let v = pct_of(h, p);
        if v > hi || v < lo {
            continue;
        }
        let b = (((v - lo) / width) as usize).min(n - 1);
        counts[b] += each;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (lo + i as f64 * width, lo + (i + 1) as f64 * width, c))
        .collect()
}

pub(super) fn over_time(o: &mut String, r: &RunResult) {
    o.push_str("<section id=\"over-time\"><h2>Throughput and latency over time</h2>");
    // The last interval is usually partial (the run ends between ticks): rates over a sliver
    // of time are noise, so intervals shorter than half the first are left out of the charts.
    let full = r
        .intervals
        .first()
        .map_or(0, |i| i.end_us.saturating_sub(i.start_us));
    let iv: Vec<_> = r
        .intervals
        .iter()
        .filter(|i| i.end_us > i.start_us && 2 * (i.end_us - i.start_us) >= full)
        .collect();
    if iv.len() < 2 {
        o.push_str(
            "<p class=\"muted\">One interval only: run with <code>-P N</code> (progress every N \
             seconds) to see the run over time.</p></section>",
        );
        return;
    }
    let mut markers = r
        .server_metrics
        .as_ref()
        .map(checkpoint_markers)
        .unwrap_or_default();
    markers.extend(warmup_markers(r));
    let x = |i: &measure::Interval| i.end_us as f64 / 1e6;
    let mut tps = Chart::new(
        "chart-tps",
        "Throughput",
        "seconds",
        "transactions / s",
        Kind::Lines,
    );
    let mut committed = Vec::new();
    let mut failed = Vec::new();
    let mut lat: [Vec<(f64, f64)>; 4] = Default::default();
    for i in &iv {
        let t = i.total();
        let d = i.duration_s();
        committed.push((x(i), t.committed() as f64 / d));
        failed.push((x(i), t.failed() as f64 / d));
        if t.committed() > 0 {
            for (k, p) in [50.0, 90.0, 99.0].iter().enumerate() {
                lat[k].push((x(i), pct_of(&t.latency, *p)));
            }
            lat[3].push((x(i), ms(t.latency.max_us() as f64)));
        }
    }
    tps.series.push(Series {
        name: "committed".into(),
        color: "#3056d3".into(),
        points: committed,
        dashed: false,
    });
    dashed_if_any(&mut tps, "failed", "#c5221f", failed);
    tps.markers = markers.clone();
    let mut lc = Chart::new(
        "chart-latency",
        "Latency percentiles",
        "seconds",
        "ms",
        Kind::Lines,
    );
    for (k, (name, color)) in [
        ("p50", "#2e9e44"),
        ("p90", "#f08c00"),
        ("p99", "#c5221f"),
        ("max", "#9aa3af"),
    ]
    .iter()
    .enumerate()
    {
        lc.series.push(Series {
            name: (*name).into(),
            color: (*color).into(),
            points: std::mem::take(&mut lat[k]),
            dashed: *name == "max",
        });
    }
    lc.markers = markers;
    lc.y_log = true;
    o.push_str("<div class=\"grid2\">");
    chart_block(o, "Committed transactions per second", &tps.render());
    chart_block(
        o,
        "Latency percentiles per interval (ms, log scale)",
        &lc.render(),
    );
    o.push_str("</div></section>");
}

pub(super) fn latency_distribution(o: &mut String, r: &RunResult) {
    let t = r.total.total();
    let h = &t.latency;
    o.push_str("<section id=\"distribution\"><h2>Latency distribution</h2><div class=\"grid2\">");
    let b = bars(
        "chart-distribution",
        "Latency distribution",
        "latency (ms), up to p99.9",
        "transactions",
        &distribution(h, 48),
        "#3056d3",
    );
    chart_block(o, "Committed transactions by latency (up to p99.9)", &b);
    let mut names: Vec<String> = vec!["all".into()];
    let mut hs: Vec<&Histogram> = vec![h];
    if r.config.txn_types.len() > 1 {
        for (tt, s) in r.config.txn_types.iter().zip(&r.total.txns) {
            names.push(one_line(&tt.name, 28));
            hs.push(&s.latency);
        }
    }
    chart_block(
        o,
        "Latency by percentile (ms, log scale)",
        &percentile_view(&names, &hs).render(),
    );
    o.push_str("</div><div><table><tr><th class=\"l\">percentile</th>");
    for n in &names {
        let _ = write!(o, "<th>{}</th>", esc(n));
    }
    o.push_str("</tr>");
    let rows = [("min", 0.0)]
        .into_iter()
        .chain(crate::PERCENTILES)
        .chain([("max", 100.0)]);
    for (label, p) in rows {
        let _ = write!(o, "<tr><td class=\"l\">{label}</td>");
        for h in &hs {
            let v = if p == 0.0 {
                ms(if h.is_empty() { 0.0 } else { h.min_us() as f64 })
            } else if p == 100.0 {
                ms(h.max_us() as f64)
            } else {
                pct_of(h, p)
            };
            let _ = write!(o, "<td>{}</td>", f3(v));
        }
        o.push_str("</tr>");
    }
    o.push_str("<tr><td class=\"l\">average ± stddev</td>");
    for h in &hs {
        let _ = write!(
            o,
            "<td>{} ± {}</td>",
            f3(ms(h.mean_us())),
            f3(ms(h.stddev_us()))
        );
    }
    let _ = write!(
        o,
        "</tr></table>\
         <p class=\"muted\">Milliseconds, committed transactions, latency from the scheduled \
         start{}.</p></div></section>",
        if r.config.rate_tps.is_some() {
            " (lag included)"
        } else {
            ""
        }
    );
}

/// The percentile view of HdrHistogram's plots: latency (log scale) against the percentile on
/// a "nines" axis (x = -log10(1 - p), so 90, 99, 99.9 and 99.99 are evenly spaced), one line per
/// histogram, up to the highest percentile the count supports. The tail that a histogram or a
/// linear axis squeezes into its last pixels gets as much room as the median.
fn percentile_view(names: &[String], hs: &[&Histogram]) -> Chart {
    const COLORS: [&str; 6] = [
        "#3056d3", "#2e9e44", "#f08c00", "#c5221f", "#7c3aed", "#0f766e",
    ];
    let mut c = Chart::new(
        "chart-percentiles",
        "Latency by percentile",
        "percentile",
        "ms",
        Kind::Lines,
    );
    c.y_log = true;
    let mut top: f64 = 1.0;
    for (k, (name, h)) in names.iter().zip(hs).enumerate() {
        if h.is_empty() {
            continue;
        }
        // The last nines the count supports: with n transactions, p = 1 - 1/n.
        let max_nines = (h.count() as f64).log10().max(1.0);
        top = top.max(max_nines);
        let steps = (max_nines * 20.0).ceil() as usize;
        let points = (0..=steps)
            .map(|i| {
                let nines = max_nines * i as f64 / steps as f64;
                let p = 100.0 * (1.0 - 10f64.powf(-nines));
                (nines, pct_of(h, p))
            })
            .collect();
        c.series.push(Series {
            name: name.clone(),
            color: COLORS[k % COLORS.len()].into(),
            points,
            dashed: false,
        });
    }
    let labels = [
        "0", "90", "99", "99.9", "99.99", "99.999", "99.9999", "99.99999",
    ];
    c.x_ticks = Some(
        (0..=top.ceil() as usize)
            .filter_map(|n| labels.get(n).map(|l| (n as f64, (*l).to_string())))
            .collect(),
    );
    c.x_range = Some((0.0, top.ceil()));
    c
}

fn txn_row(o: &mut String, name: &str, weight: Option<u32>, t: &TxnStats, dur: f64) {
    let _ = write!(
        o,
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(name),
        weight.map_or("".into(), |w| w.to_string()),
        t.committed(),
        if dur > 0.0 {
            t.committed() as f64 / dur
        } else {
            0.0
        },
        t.failed(),
        t.retried,
        t.skipped,
        f3(ms(t.latency.mean_us())),
        f3(pct_of(&t.latency, 50.0)),
        f3(pct_of(&t.latency, 90.0)),
        f3(pct_of(&t.latency, 99.0)),
        f3(ms(t.latency.max_us() as f64)),
    );
}

pub(super) fn transactions(o: &mut String, r: &RunResult) {
    o.push_str(
        "<section id=\"transactions\"><h2>Transactions</h2><table><tr><th class=\"l\">type</th>\
         <th>weight</th><th>committed</th><th>tps</th><th>failed</th><th>retried</th>\
         <th>skipped</th><th>avg ms</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>",
    );
    let d = r.measured_duration_s;
    for (tt, s) in r.config.txn_types.iter().zip(&r.total.txns) {
        txn_row(o, &tt.name, Some(tt.weight), s, d);
    }
    if r.config.txn_types.len() > 1 {
        txn_row(o, "all", None, &r.total.total(), d);
    }
    o.push_str("</table>");
    let any_stmts = r.total.txns.iter().any(|t| !t.statements.is_empty());
    if any_stmts {
        o.push_str("<h3>Statements (client-side latency)</h3>");
        for (tt, s) in r.config.txn_types.iter().zip(&r.total.txns) {
            if s.statements.is_empty() {
                continue;
            }
            let _ = write!(
                o,
                "<table><tr><th class=\"l\">{}</th><th>count</th><th>avg ms</th><th>p99 ms</th>\
                 <th>failures</th></tr>",
                esc(&tt.name)
            );
            for (i, st) in s.statements.iter().enumerate() {
                let text = tt.statements.get(i).map(String::as_str).unwrap_or("");
                let _ = write!(
                    o,
                    "<tr><td class=\"l\"><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(text),
                    st.latency.count(),
                    f3(ms(st.latency.mean_us())),
                    f3(pct_of(&st.latency, 99.0)),
                    st.failures
                );
            }
            o.push_str("</table>");
        }
    }
    o.push_str("</section>");
}

/// The warm-up's end and the steady-state verdict's settling point, as event markers on the
/// time charts (the x axis is seconds from the run's start): the warm-up is what lies left of
/// its marker.
pub(super) fn warmup_markers(r: &RunResult) -> Vec<Marker> {
    let mut v = Vec::new();
    if let Some(w) = &r.warmup {
        v.push(Marker {
            x: w.seconds,
            label: format!("warm-up ends ({} s left out)", w.seconds),
        });
    }
    if let Some(s) = &r.steady_state {
        if let (Some(at), true) = (s.settled_at_s, s.settled_interval.unwrap_or(0) > 0) {
            v.push(Marker {
                x: at,
                label: format!("settled ({})", s.verdict.label()),
            });
        }
    }
    v
}
