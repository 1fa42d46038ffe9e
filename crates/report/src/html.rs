//! The HTML report: one self-contained file a performance engineer can hand to the team.
//!
//! Owns the page: a header with what ran where and the verdicts (checks), headline numbers,
//! throughput and latency percentiles over time (from `RunResult::intervals`), the latency
//! distribution (from the whole-run histogram), per-transaction and per-statement tables, and,
//! when the server was observed, database load by wait event as a stacked area, top SQL joined
//! to its waits, server counters with checkpoints on the time axis, client and server CPU, and
//! what could not be observed and why. Must not touch: I/O (the caller writes the string),
//! clocks, the network: CSS is inline, charts are SVG drawn by `svg`, there is no script and no
//! external reference, so the file opens offline and prints. Every string from the result
//! (SQL text, settings, command line, notes) goes through [`esc`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use measure::server::{ActivitySample, CPU};
use measure::{Histogram, ServerMetrics, TxnStats};

use crate::model::{CheckStatus, RunResult};
use crate::observed::{bytes, hit_pct, machine_averages, one_line, top_wait_of};
use crate::svg::{bars, esc, Chart, Kind, Marker, Series};

/// Wait events drawn separately in the load chart; the rest are summed as "other".
const LOAD_EVENTS: usize = 8;

pub(crate) const CSS: &str = r#"
:root{--ink:#1d2330;--muted:#5f6b7a;--line:#e3e7ee;--bg:#f6f8fb;--card:#fff;--accent:#3056d3;
--ok:#1e8e3e;--bad:#c5221f;--skip:#8a8f98}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg)}
header.top{background:#17203a;color:#fff;padding:22px 32px 18px}
header.top h1{margin:0;font-size:22px;font-weight:600;letter-spacing:.2px}
header.top h1 span{color:#9fb3ff;font-weight:500}
header.top .sub{color:#c5cde0;margin-top:4px;font-size:13px}
main{max-width:1320px;margin:0 auto;padding:18px 28px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 20px 18px;margin:16px 0;break-inside:avoid}
h2{font-size:16px;margin:0 0 10px;font-weight:600}
h3{font-size:13px;margin:14px 0 6px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.4px}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin-top:-34px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.kpi .v{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.kpi .v small{font-size:13px;color:var(--muted);font-weight:500;margin-left:3px}
.kpi .k{color:var(--muted);font-size:12px}
.kpi .v.txt{font-size:15px;padding:6px 0 5px;overflow-wrap:anywhere}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
figure.chart{margin:0}
figure.chart svg{width:100%;height:auto;display:block}
.chart .grid{stroke:#eef1f5}
.chart .xtick{stroke:#c9cfd8}
.chart .axis{stroke:#9aa3af}
.chart .tick{font-size:10.5px;fill:#6b7482}
.chart .label{font-size:11px;fill:#4b5563}
.chart .line{fill:none;stroke-width:1.8}
.chart .area{stroke-width:.5;fill-opacity:.88}
.chart .ref{stroke:#c5221f;stroke-dasharray:4 3}
.chart .reflabel{font-size:10.5px;fill:#c5221f}
.chart .marker line{stroke:#7c3aed;stroke-dasharray:2 3}
.chart .marker text{font-size:10px;fill:#7c3aed}
.chart .nodata{color:var(--muted);padding:40px 0;text-align:center;border:1px dashed var(--line);border-radius:8px}
.chart-title{font-weight:600;font-size:13px;margin:4px 0 2px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:#374151;margin:4px 0 0 56px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfd}
td.l,th.l{text-align:left}
td code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f3f5f9;border-radius:6px;padding:8px 10px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
.sql{max-width:520px;white-space:pre-wrap;word-break:break-word}
.sbar{display:inline-block;height:9px;background:var(--accent);border-radius:2px;vertical-align:middle;opacity:.8}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11px;font-weight:700;color:#fff;letter-spacing:.3px}
.badge.passed{background:var(--ok)}.badge.failed{background:var(--bad)}.badge.skipped{background:var(--skip)}
.checks td{text-align:left}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;font-size:13px}
.kv div:nth-child(odd){color:var(--muted)}
.note{border-left:3px solid #f0a400;background:#fff8e6;padding:6px 10px;margin:6px 0;border-radius:4px}
.banner{border-left:4px solid var(--bad);background:#fdecea;padding:8px 12px;border-radius:6px;margin:12px 0}
.muted{color:var(--muted)}
.tag{display:inline-block;padding:0 6px;border-radius:4px;font-size:11.5px;color:#fff;white-space:nowrap}
footer{color:var(--muted);font-size:12px;text-align:center;margin:24px 0}
@media print{body{background:#fff}section{border:none;padding:6px 0}header.top{background:#fff;color:#000;border-bottom:2px solid #000}header.top .sub{color:#333}.kpis{margin-top:8px}}
"#;

fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// A color per wait event, by class (Performance Insights' convention: CPU green, I/O blue,
/// LWLock pink, Lock orange, client gray), shaded within the class.
pub fn wait_color(event: &str, shade: usize) -> String {
    let class = event.split(':').next().unwrap_or(event);
    let palette: &[&str] = match class {
        CPU => &["#2e9e44"],
        "IO" => &["#1f6fd1", "#5b9bf0", "#0b3f8c", "#8fbaf5"],
        "LWLock" => &["#d6336c", "#f06595", "#a61e4d", "#faa2c1"],
        "Lock" => &["#f08c00", "#ffa94d", "#c25e00"],
        "Client" => &["#868e96", "#adb5bd"],
        "IPC" => &["#7048e8", "#9775fa", "#5f3dc4"],
        "Timeout" => &["#0ca678", "#38d9a9"],
        "BufferPin" => &["#8d5524"],
        "Activity" => &["#495057"],
        "Extension" => &["#e8590c"],
        _ => &["#343a40"],
    };
    palette[shade % palette.len()].to_string()
}

pub(crate) fn pct_of(h: &Histogram, p: f64) -> f64 {
    ms(h.percentile_us(p) as f64)
}

/// Approximate distribution of a histogram: `n` equal-width bins from its minimum to its
/// p99.9 (the tail beyond is reported in the table, not drawn), filled from 2,000 evenly spaced
/// quantiles — the histogram's own buckets are not exposed, and the quantiles are exact to its
/// precision.
fn distribution(h: &Histogram, n: usize) -> Vec<(f64, f64, f64)> {
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

pub(crate) fn kpi(o: &mut String, value: &str, unit: &str, label: &str) {
    // Numbers big, words (a wait event name) smaller so they fit.
    let numeric = value
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '-');
    let _ = write!(
        o,
        "<div class=\"kpi\"><div class=\"v{}\">{}<small>{}</small></div><div class=\"k\">{}</div></div>",
        if numeric { "" } else { " txt" },
        esc(value),
        esc(unit),
        esc(label)
    );
}

pub(crate) fn share_bar(frac: f64) -> String {
    format!(
        "<span class=\"sbar\" style=\"width:{:.0}px\"></span>",
        (frac.clamp(0.0, 1.0) * 90.0).max(1.0)
    )
}

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

/// The page.
pub fn render(r: &RunResult) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let c = &r.config;
    let total = r.total.total();
    let m = r.server_metrics.as_ref();
    let title = format!(
        "stampede {} · {} clients · {}",
        c.workload, c.clients, r.started_at
    );
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>",
        esc(&title)
    );

    // Header.
    let server_version = r
        .environment
        .server
        .version
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let _ = write!(
        o,
        "<header class=\"top\"><h1>stampede run report <span>· {} · {} client{}</span></h1>\
         <div class=\"sub\">{} · {:.1} s measured · PostgreSQL {} · stampede {}</div></header><main>",
        esc(&c.workload),
        c.clients,
        if c.clients == 1 { "" } else { "s" },
        esc(&r.started_at),
        r.measured_duration_s,
        esc(&server_version),
        esc(&r.stampede_version)
    );

    // Headline numbers.
    o.push_str("<div class=\"kpis\">");
    kpi(
        &mut o,
        &format!("{:.1}", r.tps()),
        "tps",
        "committed transactions per second",
    );
    let lat = &total.latency;
    kpi(&mut o, &f3(ms(lat.mean_us())), "ms", "latency average");
    kpi(&mut o, &f3(pct_of(lat, 50.0)), "ms", "latency p50");
    kpi(&mut o, &f3(pct_of(lat, 99.0)), "ms", "latency p99");
    let scheduled = total.scheduled().max(1);
    kpi(
        &mut o,
        &format!("{:.2}", 100.0 * total.failed() as f64 / scheduled as f64),
        "%",
        &format!("failed ({} of {})", total.failed(), total.scheduled()),
    );
    if let Some(m) = m {
        kpi(
            &mut o,
            &format!("{:.2}", m.average_active()),
            "AAS",
            "database load (average active sessions)",
        );
        if let Some(w) = m.waits.first() {
            kpi(&mut o, &w.event, "", "top wait event");
        }
    }
    o.push_str("</div>");

    if r.interrupted {
        o.push_str(
            "<div class=\"banner\">The run was interrupted: the numbers cover the part that ran.</div>",
        );
    }
    verdicts(&mut o, r);
    run_details(&mut o, r);
    over_time(&mut o, r);
    latency_distribution(&mut o, r);
    transactions(&mut o, r);
    match m {
        Some(m) => server(&mut o, r, m),
        None => o.push_str(
            "<section id=\"server\"><h2>Server</h2><p class=\"muted\">The server was not observed \
             during this run (it is by default; <code>--no-observe</code> turns it off), so there \
             is no database load, top SQL or server counters.</p></section>",
        ),
    }
    let _ = writeln!(
        o,
        "<footer>Generated by stampede {} from <code>run.json</code> schema version {}. \
         Self-contained: no scripts, no network.</footer></main></body></html>",
        esc(&r.stampede_version),
        r.schema_version
    );
    o
}

fn verdicts(o: &mut String, r: &RunResult) {
    o.push_str("<section id=\"verdicts\"><h2>Verdicts</h2>");
    if r.checks.is_empty() {
        o.push_str("<p class=\"muted\">No checks ran.</p>");
    } else {
        o.push_str("<table class=\"checks\">");
        for ch in &r.checks {
            let cls = match ch.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "failed",
                CheckStatus::Skipped => "skipped",
            };
            let _ = write!(
                o,
                "<tr><td style=\"width:90px\"><span class=\"badge {cls}\">{}</span></td>\
                 <td style=\"width:240px\"><b>{}</b></td><td>{}</td></tr>",
                ch.status.label(),
                esc(&ch.name),
                esc(&ch.detail)
            );
        }
        o.push_str("</table>");
    }
    let a = &r.connections.aborted;
    if !a.is_empty() {
        let _ = write!(
            o,
            "<div class=\"banner\">{} of {} clients aborted:<ul>",
            a.len(),
            r.connections.clients
        );
        for x in a {
            let _ = write!(o, "<li>client {}: {}</li>", x.client_id, esc(&x.reason));
        }
        o.push_str("</ul></div>");
    }
    o.push_str("</section>");
}

fn run_details(o: &mut String, r: &RunResult) {
    let c = &r.config;
    o.push_str("<section id=\"run\"><h2>What ran, where</h2><div class=\"grid2\"><div>");
    let _ = write!(
        o,
        "<h3>Command</h3><pre>{}</pre><h3>Target</h3><pre>{}</pre>",
        esc(&r.command_line.join(" ")),
        esc(&r.target.conninfo)
    );
    let mut kv: Vec<(String, String)> = vec![
        ("workload".into(), c.workload.clone()),
        ("scale".into(), c.scale.to_string()),
        (
            "clients / threads".into(),
            format!("{} / {}", c.clients, c.threads),
        ),
        (
            "stop".into(),
            match (c.duration_s, c.transactions_per_client) {
                (Some(t), _) => format!("after {t} s"),
                (None, Some(n)) => format!("after {n} transactions per client"),
                _ => "-".into(),
            },
        ),
        ("query mode".into(), c.query_mode.clone()),
        ("random seed".into(), c.random_seed.to_string()),
        (
            "initial connections".into(),
            format!("{:.1} ms", r.connections.initial_connect_ms),
        ),
    ];
    if let Some(rate) = c.rate_tps {
        kv.push(("rate limit".into(), format!("{rate} tps")));
    }
    if let Some(l) = c.latency_limit_ms {
        kv.push(("latency limit".into(), format!("{l} ms")));
    }
    if c.max_tries != 1 {
        kv.push(("max tries".into(), c.max_tries.to_string()));
    }
    o.push_str("<h3>Run</h3><div class=\"kv\">");
    for (k, v) in kv {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(&k), esc(&v));
    }
    o.push_str("</div></div><div>");
    let s = &r.environment.server;
    let _ = write!(
        o,
        "<h3>Server</h3><div class=\"kv\"><div>version</div><div>{}</div>",
        esc(&s.version)
    );
    for (k, v) in &s.settings {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(k), esc(v));
    }
    o.push_str("</div>");
    if let Some(e) = &r.target.embedded {
        let _ = write!(
            o,
            "<h3>Embedded server</h3><div class=\"kv\"><div>binaries</div><div>{}</div>",
            esc(&e.bin_dir)
        );
        for (k, v) in &e.settings {
            let _ = write!(o, "<div>{}</div><div>{}</div>", esc(k), esc(v));
        }
        o.push_str("</div>");
    }
    let cl = &r.environment.client;
    let _ = write!(
        o,
        "<h3>Client</h3><div class=\"kv\"><div>host</div><div>{}</div><div>CPUs</div><div>{}{}</div>\
         <div>memory</div><div>{}</div><div>OS</div><div>{}</div></div>",
        esc(&cl.hostname),
        cl.cpus,
        cl.cpu_model
            .as_deref()
            .map(|m| format!(" × {}", esc(m)))
            .unwrap_or_default(),
        cl.memory_bytes
            .map(|b| bytes(b as f64))
            .unwrap_or_else(|| "-".into()),
        esc(&cl.os)
    );
    o.push_str("</div></div></section>");
}

/// Checkpoint markers: every counter sample where the checkpoint count went up.
fn checkpoint_markers(m: &ServerMetrics) -> Vec<Marker> {
    let count = |v: &BTreeMap<String, f64>| -> Option<f64> {
        let g = |k: &str| v.get(k).copied();
        Some(
            g("checkpointer.num_timed").or(g("bgwriter.checkpoints_timed"))?
                + g("checkpointer.num_requested")
                    .or(g("bgwriter.checkpoints_req"))
                    .unwrap_or(0.0),
        )
    };
    let mut out = Vec::new();
    for w in m.counters.windows(2) {
        if let (Some(a), Some(b)) = (count(&w[0].values), count(&w[1].values)) {
            if b > a {
                out.push(Marker {
                    x: w[1].t_ms as f64 / 1000.0,
                    label: if b - a > 1.0 {
                        format!("{} checkpoints", b - a)
                    } else {
                        "checkpoint".into()
                    },
                });
            }
        }
    }
    out
}

/// Per-second rate of counter `key` between consecutive counter samples, at the later time.
fn rate(m: &ServerMetrics, key: &str, scale: f64) -> Vec<(f64, f64)> {
    m.counters
        .windows(2)
        .filter_map(|w| {
            let a = w[0].values.get(key)?;
            let b = w[1].values.get(key)?;
            let dt = (w[1].t_ms - w[0].t_ms) as f64 / 1000.0;
            (dt > 0.0).then(|| (w[1].t_ms as f64 / 1000.0, (b - a).max(0.0) / dt * scale))
        })
        .collect()
}

pub(crate) fn chart_block(o: &mut String, title: &str, chart: &str) {
    let _ = write!(
        o,
        "<div><div class=\"chart-title\">{}</div>{chart}</div>",
        esc(title)
    );
}

fn over_time(o: &mut String, r: &RunResult) {
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
    let markers = r
        .server_metrics
        .as_ref()
        .map(checkpoint_markers)
        .unwrap_or_default();
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
    if failed.iter().any(|p| p.1 > 0.0) {
        tps.series.push(Series {
            name: "failed".into(),
            color: "#c5221f".into(),
            points: failed,
            dashed: true,
        });
    }
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
    o.push_str("<div class=\"grid2\">");
    chart_block(o, "Committed transactions per second", &tps.render());
    chart_block(o, "Latency percentiles per interval (ms)", &lc.render());
    o.push_str("</div></section>");
}

fn latency_distribution(o: &mut String, r: &RunResult) {
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
    o.push_str("<div><table><tr><th class=\"l\">percentile</th>");
    let mut names: Vec<String> = vec!["all".into()];
    let mut hs: Vec<&Histogram> = vec![h];
    if r.config.txn_types.len() > 1 {
        for (tt, s) in r.config.txn_types.iter().zip(&r.total.txns) {
            names.push(one_line(&tt.name, 28));
            hs.push(&s.latency);
        }
    }
    for n in &names {
        let _ = write!(o, "<th>{}</th>", esc(n));
    }
    o.push_str("</tr>");
    for (label, p) in [
        ("min", 0.0),
        ("p50", 50.0),
        ("p90", 90.0),
        ("p95", 95.0),
        ("p99", 99.0),
        ("p99.9", 99.9),
        ("p99.99", 99.99),
        ("max", 100.0),
    ] {
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
    let _ = write!(
        o,
        "<tr><td class=\"l\">average ± stddev</td><td>{} ± {}</td></tr></table>\
         <p class=\"muted\">Milliseconds, committed transactions, latency from the scheduled \
         start{}.</p></div></div></section>",
        f3(ms(h.mean_us())),
        f3(ms(h.stddev_us())),
        if r.config.rate_tps.is_some() {
            " (lag included)"
        } else {
            ""
        }
    );
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

fn transactions(o: &mut String, r: &RunResult) {
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

/// The load chart's series: the top events by samples, then "other".
pub(crate) fn load_series(m: &ServerMetrics) -> Vec<Series> {
    let top: Vec<&str> = m
        .waits
        .iter()
        .take(LOAD_EVENTS)
        .map(|w| w.event.as_str())
        .collect();
    let samples: Vec<&ActivitySample> = m.activity.iter().collect();
    let mut shades: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out: Vec<Series> = top
        .iter()
        .map(|e| {
            let class = e.split(':').next().unwrap_or(e);
            let shade = shades.entry(class).or_default();
            let color = wait_color(e, *shade);
            *shade += 1;
            Series {
                name: (*e).to_string(),
                color,
                points: samples
                    .iter()
                    .map(|s| {
                        (
                            s.t_ms as f64 / 1000.0,
                            f64::from(s.waits.get(*e).copied().unwrap_or(0)),
                        )
                    })
                    .collect(),
                dashed: false,
            }
        })
        .collect();
    if m.waits.len() > LOAD_EVENTS {
        out.push(Series {
            name: "other".into(),
            color: "#ced4da".into(),
            points: samples
                .iter()
                .map(|s| {
                    let rest: u32 = s
                        .waits
                        .iter()
                        .filter(|(e, _)| !top.contains(&e.as_str()))
                        .map(|(_, n)| *n)
                        .sum();
                    (s.t_ms as f64 / 1000.0, f64::from(rest))
                })
                .collect(),
            dashed: false,
        });
    }
    // CPU at the bottom, as Performance Insights draws it.
    out.sort_by_key(|s| s.name != CPU);
    out
}

pub(crate) fn event_tag(event: &str) -> String {
    format!(
        "<span class=\"tag\" style=\"background:{}\">{}</span>",
        esc(&wait_color(event, 0)),
        esc(event)
    )
}

fn server(o: &mut String, r: &RunResult, m: &ServerMetrics) {
    let x_range = Some((
        (m.window_start_ms.min(0)) as f64 / 1000.0,
        m.window_end_ms as f64 / 1000.0,
    ));
    // Database load.
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
    if !m.os.is_empty() && r.environment.client.cpus > 0 {
        load.reference = Some((
            f64::from(r.environment.client.cpus),
            format!("{} CPUs", r.environment.client.cpus),
        ));
    }
    chart_block(
        o,
        &format!(
            "Active sessions by wait event, sampled every {:.1} s",
            m.sample_interval_ms as f64 / 1000.0
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
    let _ = write!(
        o,
        "</table><p class=\"muted\">Average active sessions (AAS) = sessions seen in state \
         <code>active</code> per sample, over the {:.1} s of the run; CPU = active with no wait \
         event. {:.2} AAS in all.</p></div></div></section>",
        (m.window_end_ms - m.window_start_ms) as f64 / 1000.0,
        m.average_active()
    );

    // Top SQL.
    o.push_str("<section id=\"top-sql\"><h2>Top SQL by execution time</h2>");
    if m.statements.is_empty() {
        o.push_str("<p class=\"muted\">No statement statistics: see the notes below.</p>");
    } else {
        let all = m
            .statements_total
            .as_ref()
            .map_or(0.0, |t| t.total_exec_time_ms)
            .max(1e-9);
        o.push_str(
            "<table><tr><th class=\"l\">statement</th><th>calls</th><th>total ms</th>\
             <th class=\"l\">share</th><th>mean ms</th><th>rows</th><th>hit %</th>\
             <th>WAL</th><th class=\"l\">waits</th></tr>",
        );
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
            let _ = write!(
                o,
                "<tr><td class=\"l sql\"><code>{}</code></td><td>{}</td><td>{:.1}</td>\
                 <td class=\"l\">{} {:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td class=\"l\">{}</td></tr>",
                esc(&s.query),
                s.calls,
                s.total_exec_time_ms,
                share_bar(frac),
                100.0 * frac,
                f3(s.mean_exec_time_ms),
                s.rows,
                hit_pct(s.shared_blks_hit as f64, s.shared_blks_read as f64)
                    .map_or("-".into(), |h| format!("{h:.1}")),
                s.wal_bytes.map_or("-".into(), bytes),
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

    // Server counters over time.
    o.push_str("<section id=\"server-activity\"><h2>Server activity</h2><div class=\"grid2\">");
    let markers = checkpoint_markers(m);
    let mut commits = Chart::new(
        "chart-commits",
        "Commits and rollbacks",
        "seconds",
        "per second",
        Kind::Lines,
    );
    commits.series.push(Series {
        name: "commits/s".into(),
        color: "#3056d3".into(),
        points: rate(m, "database.xact_commit", 1.0),
        dashed: false,
    });
    let rb = rate(m, "database.xact_rollback", 1.0);
    if rb.iter().any(|p| p.1 > 0.0) {
        commits.series.push(Series {
            name: "rollbacks/s".into(),
            color: "#c5221f".into(),
            points: rb,
            dashed: true,
        });
    }
    commits.markers = markers.clone();
    commits.x_range = x_range;
    chart_block(
        o,
        "Commits per second (pg_stat_database)",
        &commits.render(),
    );
    let mut wal = Chart::new("chart-wal", "WAL", "seconds", "MiB / s", Kind::Lines);
    wal.series.push(Series {
        name: "WAL written".into(),
        color: "#7048e8".into(),
        points: rate(m, "wal.wal_bytes", 1.0 / (1024.0 * 1024.0)),
        dashed: false,
    });
    let blk = rate(m, "database.blks_read", 8192.0 / (1024.0 * 1024.0));
    if blk.iter().any(|p| p.1 > 0.0) {
        wal.series.push(Series {
            name: "blocks read (8 KiB)".into(),
            color: "#1f6fd1".into(),
            points: blk,
            dashed: true,
        });
    }
    wal.markers = markers.clone();
    wal.x_range = x_range;
    chart_block(
        o,
        "WAL generated and blocks read, with checkpoints",
        &wal.render(),
    );

    // Connections by state and lock waits.
    let mut states: Vec<String> = m
        .activity
        .iter()
        .flat_map(|s| s.states.keys().cloned())
        .collect();
    states.sort();
    states.dedup();
    let state_color = |s: &str| match s {
        "active" => "#2e9e44",
        "idle in transaction" => "#f08c00",
        "idle in transaction (aborted)" => "#c5221f",
        "idle" => "#adb5bd",
        _ => "#7048e8",
    };
    let mut conns = Chart::new(
        "chart-connections",
        "Connections",
        "seconds",
        "connections",
        Kind::StackedArea,
    );
    for st in &states {
        conns.series.push(Series {
            name: st.clone(),
            color: state_color(st).into(),
            points: m
                .activity
                .iter()
                .map(|s| {
                    (
                        s.t_ms as f64 / 1000.0,
                        f64::from(s.states.get(st).copied().unwrap_or(0)),
                    )
                })
                .collect(),
            dashed: false,
        });
    }
    conns.x_range = x_range;
    chart_block(o, "Client connections by state", &conns.render());
    let mut locks = Chart::new(
        "chart-locks",
        "Lock waits",
        "seconds",
        "requests",
        Kind::Lines,
    );
    locks.series.push(Series {
        name: "ungranted lock requests".into(),
        color: "#f08c00".into(),
        points: m
            .activity
            .iter()
            .map(|s| (s.t_ms as f64 / 1000.0, f64::from(s.lock_waits)))
            .collect(),
        dashed: false,
    });
    locks.x_range = x_range;
    chart_block(o, "Lock waits (pg_locks not granted)", &locks.render());
    o.push_str("</div>");

    // Totals over the run.
    let d = |k: &str| m.delta(k);
    let mut kv: Vec<(String, String)> = Vec::new();
    let n = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.0}"));
    kv.push(("commits".into(), n(d("database.xact_commit"))));
    kv.push(("rollbacks".into(), n(d("database.xact_rollback"))));
    kv.push(("deadlocks".into(), n(d("database.deadlocks"))));
    kv.push(("conflicts".into(), n(d("database.conflicts"))));
    kv.push((
        "temp files".into(),
        format!(
            "{} ({})",
            n(d("database.temp_files")),
            bytes(d("database.temp_bytes").unwrap_or(0.0))
        ),
    ));
    if let Some(h) = hit_pct(
        d("database.blks_hit").unwrap_or(0.0),
        d("database.blks_read").unwrap_or(0.0),
    ) {
        kv.push(("buffer hit ratio".into(), format!("{h:.2}%")));
    }
    if let Some(b) = d("wal.wal_bytes") {
        kv.push((
            "WAL".into(),
            format!(
                "{} in {} records, {} full-page images, {} syncs",
                bytes(b),
                n(d("wal.wal_records")),
                n(d("wal.wal_fpi")),
                n(d("wal.wal_sync"))
            ),
        ));
    }
    if let Some((t, q)) = m.checkpoints() {
        kv.push((
            "checkpoints".into(),
            format!("{:.0} ({t:.0} timed, {q:.0} requested)", t + q),
        ));
    }
    if let Some(b) = m.delta_any(&["bgwriter.buffers_clean"]) {
        kv.push((
            "buffers written by the background writer".into(),
            format!("{b:.0}"),
        ));
    }
    o.push_str("<h3>Over the run</h3><div class=\"kv\">");
    for (k, v) in kv {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(&k), esc(&v));
    }
    o.push_str("</div>");
    if !m.io.is_empty() {
        o.push_str(
            "<h3>I/O by backend type (pg_stat_io)</h3><table><tr><th class=\"l\">backend</th>\
             <th class=\"l\">object</th><th class=\"l\">context</th><th>reads</th><th>writes</th>\
             <th>extends</th><th>hits</th><th>evictions</th><th>fsyncs</th></tr>",
        );
        for io in &m.io {
            let g = |k: &str| io.values.get(k).map_or("-".into(), |v| format!("{v:.0}"));
            let _ = write!(
                o,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&io.backend_type),
                esc(&io.object),
                esc(&io.context),
                g("reads"),
                g("writes"),
                g("extends"),
                g("hits"),
                g("evictions"),
                g("fsyncs")
            );
        }
        o.push_str("</table>");
    }
    o.push_str("</section>");

    // CPU and machine.
    o.push_str("<section id=\"cpu\"><h2>Client and server CPU</h2>");
    if m.os.is_empty() {
        o.push_str(
            "<p class=\"muted\">The server is not on the machine that ran the client, so its \
             CPU, memory and disks were not sampled.</p>",
        );
    } else {
        o.push_str("<div class=\"grid2\">");
        let mut cpu = Chart::new(
            "chart-cpu",
            "Process CPU",
            "seconds",
            "% of one CPU",
            Kind::Lines,
        );
        cpu.series.push(Series {
            name: "client (stampede)".into(),
            color: "#3056d3".into(),
            points: m
                .os
                .iter()
                .map(|s| (s.t_ms as f64 / 1000.0, s.client_cpu_pct))
                .collect(),
            dashed: false,
        });
        let srv: Vec<(f64, f64)> =
            m.os.iter()
                .filter_map(|s| s.server_cpu_pct.map(|v| (s.t_ms as f64 / 1000.0, v)))
                .collect();
        if !srv.is_empty() {
            cpu.series.push(Series {
                name: "server (all PostgreSQL processes)".into(),
                color: "#2e9e44".into(),
                points: srv,
                dashed: false,
            });
        }
        if r.environment.client.cpus > 0 {
            cpu.reference = Some((
                100.0 * f64::from(r.environment.client.cpus),
                format!("{} CPUs", r.environment.client.cpus),
            ));
        }
        cpu.x_range = x_range;
        chart_block(o, "Client and server CPU (% of one CPU)", &cpu.render());
        let mut mach = Chart::new(
            "chart-machine",
            "Machine CPU",
            "seconds",
            "% of all CPUs",
            Kind::StackedArea,
        );
        for (name, color, f) in [
            (
                "user",
                "#2e9e44",
                (|s: &measure::server::OsSample| s.cpu_user_pct) as fn(&_) -> f64,
            ),
            ("system", "#d6336c", |s| s.cpu_system_pct),
            ("iowait", "#1f6fd1", |s| s.cpu_iowait_pct),
        ] {
            mach.series.push(Series {
                name: name.into(),
                color: color.into(),
                points: m
                    .os
                    .iter()
                    .map(|s| (s.t_ms as f64 / 1000.0, f(s)))
                    .collect(),
                dashed: false,
            });
        }
        mach.y_max = Some(100.0);
        mach.x_range = x_range;
        chart_block(o, "Machine CPU (/proc/stat)", &mach.render());
        o.push_str("</div>");
        if let Some(a) = machine_averages(m) {
            let _ = write!(
                o,
                "<p class=\"muted\">Averages over the run: machine {:.0}% user, {:.0}% system, \
                 {:.0}% iowait; client {:.0}% of a CPU{}; disks {}/s read, {}/s written.</p>",
                a.user,
                a.system,
                a.iowait,
                a.client,
                a.server
                    .map_or(String::new(), |s| format!(", server {s:.0}% of a CPU")),
                esc(&bytes(a.read_bps)),
                esc(&bytes(a.write_bps))
            );
        }
    }
    o.push_str("</section>");

    // Notes and cost.
    o.push_str("<section id=\"notes\"><h2>Observation notes</h2>");
    if m.notes.is_empty() {
        o.push_str("<p class=\"muted\">Everything was observed.</p>");
    }
    for n in &m.notes {
        let _ = write!(
            o,
            "<div class=\"note\"><b>{}</b>: {}</div>",
            esc(&n.topic),
            esc(&n.message)
        );
    }
    let c = &m.cost;
    let _ = write!(
        o,
        "<p class=\"muted\">Observer cost: {} samples, {} statements in {} session{}, {:.0} ms \
         waiting on the server (slowest sample {:.1} ms), {:.0} ms of CPU.</p></section>",
        c.samples,
        c.queries,
        c.connections,
        if c.connections == 1 { "" } else { "s" },
        c.busy_ms,
        c.max_sample_ms,
        c.cpu_ms
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{multi_rate_tries, observed_run};

    /// Every tag the page opens is closed (a cheap well-formedness check for our own markup).
    fn balanced(html: &str, tag: &str) -> bool {
        html.matches(&format!("<{tag}")).count() == html.matches(&format!("</{tag}>")).count()
    }

    #[test]
    fn renders_a_run_without_server_metrics() {
        let html = render(&multi_rate_tries());
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        for id in [
            "verdicts",
            "run",
            "over-time",
            "distribution",
            "transactions",
            "server",
        ] {
            assert!(html.contains(&format!("<section id=\"{id}\"")), "{id}");
        }
        assert!(html.contains("The server was not observed"));
        assert!(html.contains("id=\"chart-tps\"") && html.contains("id=\"chart-latency\""));
        assert!(html.contains("id=\"chart-distribution\""));
        assert!(html.contains("<span class=\"badge passed\">PASSED</span>"));
        assert!(!html.contains("chart-load"));
        for tag in ["section", "table", "svg", "figure", "div", "tr"] {
            assert!(balanced(&html, tag), "<{tag}> not balanced");
        }
    }

    #[test]
    fn renders_a_run_with_server_metrics() {
        let html = render(&observed_run());
        for id in ["load", "top-sql", "server-activity", "cpu", "notes"] {
            assert!(html.contains(&format!("<section id=\"{id}\"")), "{id}");
        }
        for chart in [
            "chart-load",
            "chart-commits",
            "chart-wal",
            "chart-connections",
            "chart-locks",
            "chart-cpu",
            "chart-machine",
        ] {
            let at = html
                .find(&format!("id=\"{chart}\""))
                .unwrap_or_else(|| panic!("{chart}"));
            assert!(
                html[at - 30..at].contains("<figure"),
                "{chart} has no data: {}",
                &html[at - 30..at + 200]
            );
        }
        // The load chart stacks one area per event, CPU first (bottom).
        let load = &html[html.find("id=\"chart-load\"").unwrap()..];
        let load = &load[..load.find("</figure>").unwrap()];
        assert_eq!(load.matches("<path class=\"area\"").count(), 4);
        assert!(load.find("<title>CPU</title>") < load.find("<title>LWLock:WALWrite</title>"));
        // A checkpoint on the time axis, top SQL joined to its waits.
        assert!(html.contains("<text x=") && html.contains(">checkpoint</text>"));
        assert!(html.contains("<code>END</code>"));
        assert!(html.contains("pg_stat_io needs PostgreSQL 16"));
        for tag in ["section", "table", "svg", "figure", "div", "tr"] {
            assert!(balanced(&html, tag), "<{tag}> not balanced");
        }
    }

    #[test]
    fn every_string_is_escaped_and_nothing_is_fetched() {
        let mut r = observed_run();
        let evil = "<script>alert(1)</script>";
        r.command_line.push(evil.into());
        r.config.txn_types[0].name = evil.into();
        r.config.txn_types[0].statements[0] = evil.into();
        r.target.conninfo = evil.into();
        r.checks[0].detail = evil.into();
        r.environment
            .server
            .settings
            .insert(evil.into(), evil.into());
        let m = r.server_metrics.as_mut().unwrap();
        m.statements[0].query = format!("SELECT '{evil}' -- \"&");
        m.notes[0].message = evil.into();
        m.waits[0].event = evil.into();
        let html = render(&r);
        assert!(!html.contains("<script"), "unescaped script tag");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(!html.contains("https://") && !html.contains("src="));
    }

    #[test]
    fn distribution_spreads_the_count_over_bins() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 10);
        }
        let b = distribution(&h, 10);
        assert_eq!(b.len(), 10);
        let n: f64 = b.iter().map(|x| x.2).sum();
        assert!((n - 999.0).abs() < 5.0, "{n}");
        assert!(b.iter().all(|x| x.2 > 50.0), "{b:?}");
        assert!(distribution(&Histogram::new(), 10).is_empty());
    }
}
