//! The page as a whole: sections present, charts drawn, markup balanced, every string escaped.

use super::client::distribution;
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
