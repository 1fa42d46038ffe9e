//! The HTML report: one self-contained file a performance engineer can hand to the team.
//!
//! Owns the page: a header with what ran where and the verdicts (checks), headline numbers,
//! throughput and latency percentiles over time (from `RunResult::intervals`), the latency
//! distribution (from the whole-run histogram), per-transaction and per-statement tables, and,
//! when the server was observed, database load by wait event as a stacked area, top SQL joined
//! to its waits, server counters with checkpoints on the time axis, client and server CPU, and
//! what could not be observed and why. Must not touch: I/O (the caller writes the string),
//! clocks, the network: CSS is inline, charts are SVG drawn by `svg` and, on screen, drawn again
//! by the embedded uPlot (`crate::live`: hover values, zoom, series toggles); there is no
//! external reference, so the file opens offline and prints. Every string from the result
//! (SQL text, settings, command line, notes) goes through [`esc`].
//!
//! This file owns the page skeleton ([`render`]: head, header, headline numbers, footer, the
//! order of the sections) and the small helpers every section uses (numbers in ms, headline
//! cards, share bars, titled chart blocks). The sections live beside it, one file per part of the
//! page, so each can be read without the others:
//! - `style`: the inline stylesheet and the colours of wait events;
//! - `run`: verdicts (checks, aborted clients) and what ran where;
//! - `client`: the client's measurements (over time, latency distribution, transactions and
//!   statements);
//! - `load`: database load by wait event and top SQL joined to its waits;
//! - `server`: server counters, totals, I/O, CPU and the observation notes;
//! - `counters`: the server's counters by question (named sets per protocol) and the storage
//!   devices;
//! - `crate::sizes`: the database's, tables' and shards' sizes before and after the run.
//!
//! The comparison page (`compare::html`) reuses the stylesheet, the helpers and the load chart's
//! colours and series (one chart per run, the same colours in each), hence the `pub(crate)`
//! re-exports.

mod client;
mod counters;
mod failover;
mod load;
mod replication;
mod run;
mod server;
mod style;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use measure::Histogram;

use crate::model::RunResult;
use crate::svg::{esc, Chart, Series};

pub(crate) use client::distribution_in;
pub(crate) use load::{event_colors, event_series, other_series};
pub use style::wait_color;
pub(crate) use style::{event_tag, CSS};

fn ms(us: f64) -> f64 {
    us / 1000.0
}

pub(crate) fn pct_of(h: &Histogram, p: f64) -> f64 {
    ms(h.percentile_us(p) as f64)
}

/// One headline number with its unit and label (`value` escaped here), for a family's
/// headline numbers too ([`crate::section::View::headline`] and `own_headline`).
pub fn kpi(o: &mut String, value: &str, unit: &str, label: &str) {
    // Numbers big, words (a wait event name) smaller so they fit.
    let numeric = value
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '-');
    let _ = write!(
        o,
        "<div class=\"kpi\"><div class=\"v{}\">{}<small>{}</small></div><div class=\"k\">{}</div></div>",
        if numeric { "" } else { " txt" },
        // A wait event wraps after its class ("Lock:" / "transactionid"), not mid-word.
        esc(value).replace(':', ":<wbr>"),
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

/// A chart under its title (the chart already rendered, `Chart::render`), for a family's own
/// section as for the report's.
pub fn chart_block(o: &mut String, title: &str, chart: &str) {
    let _ = write!(
        o,
        "<div><div class=\"chart-title\">{}</div>{chart}</div>",
        esc(title)
    );
}

/// Adds `points` to `chart` as a dashed line only when they rise above zero somewhere: failures,
/// rollbacks and block reads are usually none, and a flat line at zero would only crowd the
/// chart and its legend.
fn dashed_if_any(chart: &mut Chart, name: &str, color: &str, points: Vec<(f64, f64)>) {
    if points.iter().any(|p| p.1 > 0.0) {
        chart.series.push(Series {
            name: name.into(),
            color: color.into(),
            points,
            dashed: true,
        });
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The page. `source` is the JSON file the result was read from or saved to, named in the
/// footer; `None` when it was not saved.
pub fn render(r: &RunResult, source: Option<&std::path::Path>) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let c = &r.config;
    let total = r.total.total();
    let m = r.server_metrics.as_ref();
    // A sweep's page is about the whole sweep: its title and header name the steps, not the
    // last step's clients.
    let shape = match &r.sweep {
        Some(s) => format!("sweep of {}", s.scope()),
        None => format!(
            "{} client{}",
            c.clients,
            if c.clients == 1 { "" } else { "s" }
        ),
    };
    let title = format!("stampede {} · {shape} · {}", c.workload, r.started_at);
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
        "<header class=\"top\"><h1>stampede run report <span>· {} · {}</span></h1>\
         <div class=\"sub\">{} · {:.1} s measured · {} {} · stampede {}</div></header><main>",
        esc(&c.workload),
        esc(&shape),
        esc(&r.started_at),
        r.measured_duration_s,
        esc(r.server_product()),
        esc(&server_version),
        esc(&r.stampede_version)
    );

    // A family that measured no transactions (the cache curve): its own headline and section,
    // then the checks and what ran where.
    for (view, v) in crate::section::present(r) {
        let mut headline = String::new();
        if view.own_headline(r, v, &mut headline) {
            own_page(&mut o, r, view, v, &headline);
            footer(&mut o, r, source);
            return o;
        }
    }

    // A sweep: the whole sweep first, then the last step's own figures under a heading that
    // says whose they are.
    if let Some(s) = &r.sweep {
        crate::sweep::html_section(&mut o, s);
        let _ = write!(
            o,
            "<h2 id=\"last-step\">{}</h2>",
            esc(&capitalised(&s.last_step()))
        );
    }

    // Headline numbers.
    o.push_str("<div class=\"kpis\">");
    for (view, v) in crate::section::present(r) {
        view.headline(r, v, &mut o);
    }
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
            &format!("{:.2}", crate::observed_hosts::average_active(m)),
            "AAS",
            "database load (average active sessions)",
        );
        if let Some(w) = m.waits.first() {
            kpi(&mut o, &w.event, "", "top wait event");
        }
    }
    if let Some(s) = &r.steady_state {
        kpi(&mut o, s.verdict.label(), "", "steady state");
    }
    o.push_str("</div>");
    // The warm-up, the verdict's reasons and the prewarm, in the summary's words.
    let notes: Vec<String> = [
        r.warmup.as_ref().map(|w| {
            format!(
                "Warm-up: the first {} s ({} intervals) are left out of these figures and \
                 marked in the charts; the whole run committed {} transactions in {:.1} s.",
                w.seconds, w.intervals_excluded, w.whole_run_transactions, w.whole_run_duration_s
            )
        }),
        r.steady_state.as_ref().map(|s| s.line()),
        r.prewarm.as_ref().map(|p| p.line()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !notes.is_empty() {
        o.push_str("<div class=\"warmup-notes\">");
        for n in notes {
            let _ = write!(o, "<p class=\"muted\">{}</p>", esc(&n));
        }
        o.push_str("</div>");
    }

    if r.interrupted {
        o.push_str(
            "<div class=\"banner\">The run was interrupted: the numbers cover the part that ran.</div>",
        );
    }
    run::verdicts(&mut o, r);
    run::run_details(&mut o, r);
    for (view, v) in crate::section::present(r) {
        view.html(r, v, &mut o);
    }
    if let Some(f) = &r.failover {
        failover::section(&mut o, f);
    }
    if let Some(f) = &r.fleet {
        crate::fleet::html_section(&mut o, f);
    }
    if !r.endpoints.is_empty() {
        o.push_str("<section id=\"endpoints\"><h2>Endpoints</h2>");
        if let Some(w) = r.endpoints_advice() {
            let _ = write!(o, "<div class=\"banner\">{}</div>", esc(w));
        }
        crate::endpoint::html_table(&mut o, &r.endpoints);
        o.push_str("</section>");
    }
    replication::section(&mut o, &r.replication);
    crate::sizes::html_section(&mut o, &r.sizes);
    client::over_time(&mut o, r);
    client::latency_distribution(&mut o, r);
    client::transactions(&mut o, r);
    match m {
        Some(m) => server::server(&mut o, r, m),
        None => o.push_str(
            "<section id=\"server\"><h2>Server</h2><p class=\"muted\">The server was not observed \
             during this run (it is by default; <code>--no-observe</code> turns it off), so there \
             is no database load, top SQL or server counters.</p></section>",
        ),
    }
    if let Some(c) = &r.cloudwatch {
        crate::cloudwatch::html_section(&mut o, c, r.measured_duration_s);
    }
    footer(&mut o, r, source);
    o
}

/// The page of a family that measured no transactions: its headline, the checks, its section,
/// what ran where, and the server as observed (wait events, top SQL, the host) when it was.
fn own_page(
    o: &mut String,
    r: &RunResult,
    view: &dyn crate::section::View,
    v: &serde_json::Value,
    headline: &str,
) {
    o.push_str("<div class=\"kpis\">");
    o.push_str(headline);
    o.push_str("</div>");
    if r.interrupted {
        o.push_str(
            "<div class=\"banner\">The run was interrupted: the numbers cover what was measured before it stopped.</div>",
        );
    }
    run::verdicts(o, r);
    view.html(r, v, o);
    run::run_details(o, r);
    if let Some(m) = &r.server_metrics {
        server::server(o, r, m);
    }
}

fn footer(o: &mut String, r: &RunResult, source: Option<&std::path::Path>) {
    let from = match source {
        Some(p) => format!("from <code>{}</code>", esc(&p.display().to_string())),
        None => "at the end of the run (the result was not saved as JSON)".into(),
    };
    let assets = crate::live::assets(o);
    let _ = writeln!(
        o,
        "<footer>Generated by stampede {} {from}, result schema version {}. \
         Self-contained: no network; charts drawn with uPlot {} (MIT), embedded.</footer></main>\
         {assets}</body></html>",
        esc(&r.stampede_version),
        r.schema_version,
        crate::live::UPLOT_VERSION
    );
}
