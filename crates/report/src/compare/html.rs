//! The comparison as one self-contained HTML page, in the run report's style (same CSS, same
//! charts: SVG, drawn live by the embedded uPlot (`crate::live`), no network): the headline verdict, what differs between the runs, the
//! metric table with a verdict badge per metric, and the runs overlaid — throughput and p99 over
//! time, the latency distributions on shared bins — then database load by wait event for each
//! run on a shared scale, and each run's top SQL. Every string from the results is escaped.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use measure::server::CPU;
use measure::Histogram;

use super::{num, times, usable_intervals, Better, Comparison, Group, Input, Verdict};
use crate::html::{
    chart_block, distribution_in, event_colors, event_series, event_tag, other_series, pct_of,
    share_bar, CSS,
};
use crate::observed::one_line;
use crate::svg::{esc, Chart, Kind, Marker, Series};

/// One color per run, baseline first; distinct for color-blind readers in the first four.
pub const RUN_COLORS: [&str; 6] = [
    "#3056d3", "#e8590c", "#2e9e44", "#7048e8", "#d6336c", "#0ca678",
];

/// The file name without its directories, for legends and cards.
fn short(name: &str) -> String {
    let base = name.rsplit('/').next().unwrap_or(name);
    one_line(base, 32)
}

fn run_color(i: usize) -> &'static str {
    RUN_COLORS[i % RUN_COLORS.len()]
}

pub(super) const EXTRA_CSS: &str = r#"
.runchip{display:inline-block;min-width:22px;padding:1px 6px;border-radius:5px;color:#fff;font-weight:700;text-align:center;font-size:12px}
.verdict{font-size:18px;font-weight:600;margin:2px 0 4px}
.verdict.good{color:var(--ok)}.verdict.bad{color:var(--bad)}.verdict.same{color:var(--ink)}
.badge.better{background:var(--ok)}.badge.worse{background:var(--bad)}.badge.same{background:#9aa3af}
.badge.changed{background:var(--accent)}.badge.untested{background:#c9cfd8;color:#374151}
td.v{text-align:left;max-width:520px}
tr.grp td{background:#fafbfd;color:var(--muted);font-size:12px;font-weight:600;text-align:left;text-transform:uppercase;letter-spacing:.4px}
td.chg.good{color:var(--ok);font-weight:600}td.chg.bad{color:var(--bad);font-weight:600}
.diff td{text-align:left}.diff td.k{color:var(--muted)}
.method{font-size:12.5px;color:var(--muted);line-height:1.5}
"#;

fn chip(i: usize, label: &str) -> String {
    format!(
        "<span class=\"runchip\" style=\"background:{}\">{}</span>",
        run_color(i),
        esc(label)
    )
}

fn badge(j: &super::Judgement, better: Better) -> (&'static str, &'static str) {
    match (j.verdict, j.good, better) {
        (Verdict::Untested, _, _) => ("untested", "not tested"),
        (Verdict::NoDifference, _, _) => ("same", "no difference"),
        (_, Some(true), _) => ("better", "better"),
        (_, Some(false), _) => ("worse", "worse"),
        (Verdict::Higher, _, _) => ("changed", "higher"),
        (Verdict::Lower, _, _) => ("changed", "lower"),
    }
}

/// The page. `runs` are the inputs of [`super::compare`] (for the charts).
pub fn render_html(c: &Comparison, runs: &[Input<'_>]) -> String {
    let mut o = String::with_capacity(96 * 1024);
    let title = format!("stampede comparison · {}", c.names.join(" vs "));
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}{EXTRA_CSS}</style></head><body>",
        esc(&title)
    );
    let workload = runs.first().map_or("", |x| x.run.config.workload.as_str());
    let _ = write!(
        o,
        "<header class=\"top\"><h1>stampede comparison <span>· {} · {} runs</span></h1>\
         <div class=\"sub\">{}</div></header><main>",
        esc(workload),
        c.labels.len(),
        c.labels
            .iter()
            .zip(&c.names)
            .map(|(l, n)| format!("{} = {}", esc(l), esc(n)))
            .collect::<Vec<_>>()
            .join(" · ")
    );

    // Headline: throughput per run, and the verdicts on throughput and p99.
    o.push_str("<div class=\"kpis\">");
    if let Some(t) = c.row("throughput") {
        for (i, v) in t.values.iter().enumerate() {
            let _ = write!(
                o,
                "<div class=\"kpi\" style=\"border-top:4px solid {}\"><div class=\"v\">{}<small>tps</small></div>\
                 <div class=\"k\">run {} · {}</div></div>",
                run_color(i),
                v.map_or("-".into(), |x| format!("{x:.1}")),
                esc(&c.labels[i]),
                esc(&short(&c.names[i]))
            );
        }
    }
    o.push_str("</div>");
    if let Some(f) = &c.forced {
        let _ = write!(
            o,
            "<div class=\"banner\">Compared although {}</div>",
            esc(f)
        );
    }
    o.push_str("<section id=\"verdict\"><h2>Verdict</h2>");
    for metric in ["throughput", "latency p99"] {
        if let Some(r) = c.row(metric) {
            for (k, j) in r.judgements.iter().enumerate() {
                let cls = match j.good {
                    Some(true) => "good",
                    Some(false) => "bad",
                    None => "same",
                };
                let vs = if c.labels.len() > 2 {
                    format!(" ({} vs {})", c.labels[k + 1], c.labels[0])
                } else {
                    String::new()
                };
                let _ = write!(
                    o,
                    "<div class=\"verdict {cls}\">{}{}: {}</div>",
                    if metric == "throughput" {
                        "Throughput"
                    } else {
                        "p99 latency"
                    },
                    esc(&vs),
                    esc(&j.text)
                );
            }
        }
    }
    let moved: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.group == Group::Waits)
        .flat_map(|r| {
            r.judgements
                .iter()
                .enumerate()
                .filter(|(_, j)| matches!(j.verdict, Verdict::Higher | Verdict::Lower))
                .map(move |(k, j)| {
                    format!(
                        "{} {} {} → {} AAS in {}",
                        event_tag(&r.metric),
                        if j.verdict == Verdict::Lower {
                            "fell"
                        } else {
                            "rose"
                        },
                        r.values[0].map_or("-".into(), |v| format!("{v:.2}")),
                        r.values[k + 1].map_or("-".into(), |v| format!("{v:.2}")),
                        esc(&c.labels[k + 1])
                    )
                })
        })
        .collect();
    if !moved.is_empty() {
        let _ = write!(
            o,
            "<p>Where the time went changed: {}.</p>",
            moved.join("; ")
        );
    }
    o.push_str("</section>");

    runs_and_differences(&mut o, c);
    metric_table(&mut o, c);
    super::single::render_html(&c.singles, &c.labels, badge, &mut o);
    let sweeps: Vec<(&str, &crate::sweep::SweepSection)> = (c.labels.iter().zip(runs))
        .filter_map(|(l, x)| Some((l.as_str(), x.run.sweep.as_ref()?)))
        .collect();
    if runs.first().is_some_and(|x| x.run.sweep.is_some()) {
        crate::sweep::html_compare(&mut o, &sweeps);
    }
    over_time(&mut o, c, runs);
    distributions(&mut o, c, runs);
    load(&mut o, c, runs);
    top_sql(&mut o, c, runs);
    for s in &c.statements {
        super::statements::render_html_section(s, &mut o);
    }

    let opt = &c.options;
    let _ = write!(
        o,
        "<section id=\"method\"><h2>How the verdicts are reached</h2><p class=\"method\">Each \
         metric is read per interval ({} usable intervals of {:.1} s: {}), leaving out the first \
         {} s of each run as ramp-up and a partial last interval. A {:.0}% circular block \
         bootstrap interval (Politis &amp; Romano 1992; blocks of n<sup>1/3</sup> intervals for \
         autocorrelated samples; {} resamples, seed {}) of the change in the mean of rates and the \
         median of per-interval latencies, and a Mann-Whitney U rank test, must both find a \
         difference (p &lt; {}), and the change must be at least {:.0}%: two runs of the same \
         command differ by a few percent for reasons no sample inside them can show, so smaller \
         changes are reported as no difference beyond noise.</p></section>",
        c.samples.iter().sum::<usize>(),
        c.interval_s,
        c.samples
            .iter()
            .zip(&c.labels)
            .map(|(s, l)| format!("{} {s}", esc(l)))
            .collect::<Vec<_>>()
            .join(", "),
        opt.warmup_s,
        opt.confidence * 100.0,
        opt.resamples,
        opt.seed,
        opt.alpha,
        opt.min_effect * 100.0
    );
    let assets = crate::live::assets(&o);
    let _ = writeln!(
        o,
        "<footer>Generated by stampede compare from {} run results. Self-contained: no network; \
         charts drawn with uPlot {} (MIT), embedded.</footer></main>{assets}</body></html>",
        c.labels.len(),
        crate::live::UPLOT_VERSION
    );
    o
}

fn runs_and_differences(o: &mut String, c: &Comparison) {
    o.push_str(
        "<section id=\"runs\"><h2>The runs</h2><table class=\"diff\"><tr><th class=\"l\">run</th>\
         <th class=\"l\">file</th><th class=\"l\">what ran</th></tr>",
    );
    for i in 0..c.labels.len() {
        let _ = write!(
            o,
            "<tr><td>{}{}</td><td><code>{}</code></td><td>{}</td></tr>",
            chip(i, &c.labels[i]),
            if i == 0 { " baseline" } else { "" },
            esc(&c.names[i]),
            esc(&c.summaries[i])
        );
    }
    o.push_str("</table><h3>What differs</h3>");
    if c.differences.is_empty() {
        o.push_str("<p class=\"muted\">Nothing in the recorded configuration and settings.</p>");
    } else {
        o.push_str("<table class=\"diff\"><tr><th class=\"l\">setting</th>");
        for (i, l) in c.labels.iter().enumerate() {
            let _ = write!(o, "<th class=\"l\">{}</th>", chip(i, l));
        }
        o.push_str("</tr>");
        for d in &c.differences {
            let _ = write!(o, "<tr><td class=\"k\">{}</td>", esc(&d.name));
            for v in &d.values {
                let _ = write!(o, "<td><code>{}</code></td>", esc(&one_line(v, 60)));
            }
            o.push_str("</tr>");
        }
        o.push_str("</table>");
    }
    o.push_str("</section>");
}

fn metric_table(o: &mut String, c: &Comparison) {
    let n = c.labels.len();
    o.push_str("<section id=\"metrics\"><h2>Metrics</h2><table><tr><th class=\"l\">metric</th>");
    for (i, l) in c.labels.iter().enumerate() {
        let _ = write!(o, "<th>{}</th>", chip(i, l));
    }
    for l in c.labels.iter().skip(1) {
        let _ = write!(
            o,
            "<th>{}/{}</th><th class=\"l\">verdict {} vs {}</th>",
            esc(l),
            esc(&c.labels[0]),
            esc(l),
            esc(&c.labels[0])
        );
    }
    o.push_str("</tr>");
    let mut group = Group::Client;
    let cols = 1 + n + 2 * (n - 1);
    for r in &c.rows {
        if r.group != group {
            group = r.group;
            let _ = write!(
                o,
                "<tr class=\"grp\"><td colspan=\"{cols}\">{}</td></tr>",
                match group {
                    Group::Server => esc(&format!("server ({})", c.server_sources)),
                    Group::Waits => "database load by wait event (average active sessions)".into(),
                    Group::Client => String::new(),
                }
            );
        }
        let name = match r.group {
            Group::Waits => event_tag(&r.metric),
            _ => esc(&r.metric),
        };
        let _ = write!(
            o,
            "<tr><td class=\"l\">{name} <span class=\"muted\">{}</span></td>",
            esc(&r.unit)
        );
        for v in &r.values {
            let _ = write!(o, "<td>{}</td>", v.map_or("-".into(), num));
        }
        for j in &r.judgements {
            let (cls, word) = badge(j, r.better);
            let chg = match j.good {
                Some(true) => " good",
                Some(false) => " bad",
                None => "",
            };
            let _ = write!(
                o,
                "<td class=\"chg{chg}\">{}</td><td class=\"v\"><span class=\"badge {cls}\">{word}</span> {}</td>",
                j.ratio.map_or("-".into(), times),
                esc(&j.text)
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></section>");
}

fn over_time(o: &mut String, c: &Comparison, runs: &[Input<'_>]) {
    o.push_str("<section id=\"over-time\"><h2>Over time, overlaid</h2><div class=\"grid2\">");
    let mut tps = Chart::new(
        "chart-tps",
        "Throughput",
        "seconds since the start of each run",
        "transactions / s",
        Kind::Lines,
    );
    let mut p99 = Chart::new(
        "chart-p99",
        "p99 latency",
        "seconds since the start of each run",
        "ms",
        Kind::Lines,
    );
    for (i, x) in runs.iter().enumerate() {
        // All full intervals (ramp-up included, so the reader sees it), the partial last one out.
        let iv = usable_intervals(x.run, 0.0);
        tps.series.push(Series {
            name: format!("{} {}", c.labels[i], short(x.name)),
            color: run_color(i).into(),
            points: iv
                .iter()
                .map(|v| {
                    (
                        v.end_us as f64 / 1e6,
                        v.total().committed() as f64 / v.duration_s(),
                    )
                })
                .collect(),
            dashed: false,
        });
        p99.series.push(Series {
            name: format!("{} {}", c.labels[i], short(x.name)),
            color: run_color(i).into(),
            points: iv
                .iter()
                .map(|v| v.total())
                .zip(&iv)
                .filter(|(t, _)| t.committed() > 0)
                .map(|(t, v)| (v.end_us as f64 / 1e6, pct_of(&t.latency, 99.0)))
                .collect(),
            dashed: false,
        });
    }
    if c.options.warmup_s > 0.0 {
        let m = vec![Marker {
            x: c.options.warmup_s,
            label: "ramp-up ends".into(),
        }];
        tps.markers = m.clone();
        p99.markers = m;
    }
    chart_block(o, "Committed transactions per second", &tps.render());
    chart_block(o, "p99 latency per interval (ms)", &p99.render());
    o.push_str("</div></section>");
}

fn distributions(o: &mut String, c: &Comparison, runs: &[Input<'_>]) {
    o.push_str("<section id=\"distribution\"><h2>Latency distributions</h2><div class=\"grid2\">");
    let hs: Vec<Histogram> = runs.iter().map(|x| x.run.total.total().latency).collect();
    let present: Vec<&Histogram> = hs.iter().filter(|h| !h.is_empty()).collect();
    let lo = present
        .iter()
        .map(|h| h.min_us() as f64 / 1000.0)
        .fold(f64::MAX, f64::min);
    let hi = present.iter().map(|h| pct_of(h, 99.5)).fold(0.0, f64::max);
    let mut dist = Chart::new(
        "chart-distribution",
        "Latency distribution",
        "latency (ms), up to the highest p99.5",
        "% of transactions per bin",
        Kind::Lines,
    );
    if !present.is_empty() && hi > lo {
        for (i, h) in hs.iter().enumerate() {
            let n = h.count().max(1) as f64;
            dist.series.push(Series {
                name: format!("{} {}", c.labels[i], short(&c.names[i])),
                color: run_color(i).into(),
                points: distribution_in(h, lo, hi, 60)
                    .into_iter()
                    .map(|(a, b, v)| ((a + b) / 2.0, 100.0 * v / n))
                    .collect(),
                dashed: false,
            });
        }
    }
    chart_block(
        o,
        "Committed transactions by latency, runs on the same bins",
        &dist.render(),
    );
    // Percentile ladder: each run's percentiles, the shape of the tail.
    let mut ladder = Chart::new(
        "chart-percentiles",
        "Latency by percentile",
        "percentile (log scale: 1 = p90, 2 = p99, 3 = p99.9)",
        "ms",
        Kind::Lines,
    );
    // Up to p99.9: beyond it a handful of transactions set the scale (max is in the table).
    let ps = [50.0, 75.0, 90.0, 95.0, 98.0, 99.0, 99.5, 99.8, 99.9];
    for (i, h) in hs.iter().enumerate() {
        if h.is_empty() {
            continue;
        }
        ladder.series.push(Series {
            name: format!("{} {}", c.labels[i], short(&c.names[i])),
            color: run_color(i).into(),
            points: ps
                .iter()
                .map(|p| (-(1.0 - p / 100.0_f64).log10(), pct_of(h, *p)))
                .collect(),
            dashed: false,
        });
    }
    ladder.markers = [("p90", 1.0), ("p99", 2.0), ("p99.9", 3.0)]
        .iter()
        .map(|(l, x)| Marker {
            x: *x,
            label: (*l).into(),
        })
        .collect();
    chart_block(o, "Latency at each percentile (ms)", &ladder.render());
    o.push_str("</div></section>");
}

fn load(o: &mut String, c: &Comparison, runs: &[Input<'_>]) {
    let observed: Vec<(usize, &measure::ServerMetrics)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, x)| x.run.server_metrics.as_ref().map(|m| (i, m)))
        .collect();
    o.push_str("<section id=\"load\"><h2>Database load by wait event, per run</h2>");
    if observed.is_empty() {
        o.push_str(
            "<p class=\"muted\">None of these runs observed the server (runs with \
             <code>--no-observe</code>, or older results).</p></section>",
        );
        return;
    }
    // One color per event across all runs, classes shaded in order of overall load.
    let mut load: BTreeMap<&str, f64> = BTreeMap::new();
    for (_, m) in &observed {
        for w in &m.waits {
            *load.entry(w.event.as_str()).or_default() += w.aas;
        }
    }
    let mut events: Vec<(&str, f64)> = load.into_iter().collect();
    events.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let events: Vec<&str> = events.into_iter().take(8).map(|e| e.0).collect();
    let colors = event_colors(&events);
    let ymax = observed
        .iter()
        .flat_map(|(_, m)| m.activity.iter().map(|s| f64::from(s.active)))
        .fold(0.0, f64::max);
    let end = observed
        .iter()
        .map(|(_, m)| m.window_end_ms)
        .max()
        .unwrap_or(0) as f64
        / 1000.0;
    o.push_str("<div class=\"grid2\">");
    for (i, m) in &observed {
        let mut ch = Chart::new(
            &format!("chart-load-{}", c.labels[*i]),
            &format!("Database load, run {}", c.labels[*i]),
            "seconds",
            "average active sessions",
            Kind::StackedArea,
        );
        let mut series = event_series(m, &events, &colors);
        let other = other_series(m, &events);
        if other.points.iter().any(|p| p.1 > 0.0) {
            series.push(other);
        }
        series.sort_by_key(|s| s.name != CPU);
        ch.series = series;
        ch.y_max = Some(ymax);
        ch.x_range = Some(((m.window_start_ms.min(0)) as f64 / 1000.0, end));
        let title = format!(
            "Run {} · {} · {:.2} AAS{}",
            c.labels[*i],
            short(&c.names[*i]),
            m.average_active(),
            m.waits
                .first()
                .map_or(String::new(), |w| format!(", most in {}", w.event))
        );
        let mut block = String::new();
        chart_block(&mut block, &title, &ch.render());
        o.push_str(&block);
    }
    o.push_str("</div>");
    let missing: Vec<String> = runs
        .iter()
        .enumerate()
        .filter(|(_, x)| x.run.server_metrics.is_none())
        .map(|(i, _)| esc(&c.labels[i]))
        .collect();
    if !missing.is_empty() {
        let _ = write!(
            o,
            "<p class=\"muted\">Not observed: run {} (<code>--no-observe</code>).</p>",
            missing.join(", ")
        );
    }
    for (i, m) in &observed {
        for n in &m.notes {
            let _ = write!(
                o,
                "<div class=\"note\"><b>run {} · {}</b>: {}</div>",
                esc(&c.labels[*i]),
                esc(&n.topic),
                esc(&n.message)
            );
        }
    }
    o.push_str("</section>");
}

fn top_sql(o: &mut String, c: &Comparison, runs: &[Input<'_>]) {
    let any = runs.iter().any(|x| {
        x.run
            .server_metrics
            .as_ref()
            .is_some_and(|m| !m.statements.is_empty())
    });
    if !any {
        return;
    }
    o.push_str(
        "<section id=\"top-sql\"><h2>Top SQL by execution time, per run</h2><div class=\"grid2\">",
    );
    for (i, x) in runs.iter().enumerate() {
        let _ = write!(
            o,
            "<div><h3>{} {}</h3>",
            chip(i, &c.labels[i]),
            esc(&c.names[i])
        );
        let Some(m) = x
            .run
            .server_metrics
            .as_ref()
            .filter(|m| !m.statements.is_empty())
        else {
            o.push_str(
                "<p class=\"muted\">No statement statistics in this run (see its notes).</p></div>",
            );
            continue;
        };
        let all = m
            .statements_total
            .as_ref()
            .map_or(0.0, |t| t.total_exec_time_ms)
            .max(1e-9);
        o.push_str(
            "<table><tr><th class=\"l\">statement</th><th>calls</th><th>mean ms</th>\
             <th class=\"l\">share of time</th><th class=\"l\">top wait</th></tr>",
        );
        for s in m.statements.iter().take(6) {
            let frac = s.total_exec_time_ms / all;
            let wait = crate::observed::top_wait_of(m, s).map_or("-".into(), |w| event_tag(&w));
            let _ = write!(
                o,
                "<tr><td class=\"l sql\"><code>{}</code></td><td>{}</td><td>{}</td>\
                 <td class=\"l\">{} {:.1}%</td><td class=\"l\">{wait}</td></tr>",
                esc(&one_line(&s.query, 70)),
                s.calls,
                format_args!("{:.3}", s.mean_exec_time_ms),
                share_bar(frac),
                100.0 * frac
            );
        }
        o.push_str("</table></div>");
    }
    o.push_str("</div></section>");
}
