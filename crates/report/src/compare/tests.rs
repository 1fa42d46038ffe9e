//! Comparisons of constructed runs: per-second intervals with known levels and seeded noise.

use measure::server::{ActivitySample, CounterSample, WaitTotal};
use measure::{Histogram, Interval, ServerMetrics, TxnStats};

use super::stats::Rng;
use super::*;
use crate::testdata::{config, result, txn_type, TPCB};

/// Pseudo-normal noise with relative spread `spread` (sum of four uniforms, centred).
fn noise(r: &mut Rng, spread: f64) -> f64 {
    let u: f64 = (0..4).map(|_| r.next_u64() as f64 / u64::MAX as f64).sum();
    1.0 + spread * (u - 2.0)
}

/// A run of `secs` one-second intervals at about `tps` with latencies about `lat_ms`, 10% noise
/// on both, from `seed`.
fn run(tps: f64, lat_ms: f64, secs: u64, seed: u64) -> RunResult {
    let mut rng = Rng::new(seed);
    let mut intervals = Vec::new();
    let mut total = Interval::new(1, 0);
    for s in 0..secs {
        let n = (tps * noise(&mut rng, 0.1)).round() as u64;
        let level = lat_ms * noise(&mut rng, 0.1);
        let mut h = Histogram::new();
        for _ in 0..n {
            // Latencies spread ±50% around the interval's level.
            h.record((level * 1000.0 * noise(&mut rng, 0.5)).max(1.0) as u64);
        }
        let iv = Interval {
            start_us: s * 1_000_000,
            end_us: (s + 1) * 1_000_000,
            txns: vec![TxnStats {
                latency: h,
                ..Default::default()
            }],
        };
        total.merge(&iv);
        intervals.push(iv);
    }
    let mut r = result(
        config(vec![txn_type(TPCB, 1, vec!["END;".into()])]),
        total.txns.clone(),
        secs as f64,
        1.0,
    );
    r.intervals = intervals;
    r.total = total;
    r
}

fn inputs<'a>(runs: &'a [RunResult]) -> Vec<Input<'a>> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| Input {
            name: ["a.json", "b.json", "c.json"][i],
            run: r,
        })
        .collect()
}

fn cmp(runs: &[RunResult]) -> Comparison {
    let x = inputs(runs);
    check_comparable(&x).unwrap();
    compare(&x, &Options::default(), None)
}

#[test]
fn identical_distributions_are_no_difference() {
    // Same levels, different noise (about 6% per interval, 9 intervals): "no difference" for
    // all but a few. A false alarm needs both tests significant (about 5% of pairs each, and
    // they mostly agree) and a chance difference of at least 5%; at this noise the two are
    // nearly the same event, so the rate stays near the tests' level.
    let mut alarms = 0;
    for seed in 0..40 {
        let runs = [
            run(600.0, 13.0, 10, 2 * seed),
            run(600.0, 13.0, 10, 2 * seed + 1),
        ];
        let c = cmp(&runs);
        for metric in [
            "throughput",
            "latency average",
            "latency p50",
            "latency p99",
        ] {
            let j = &c.row(metric).unwrap().judgements[0];
            if j.verdict != Verdict::NoDifference {
                alarms += 1;
                continue;
            }
            assert!(
                j.text.starts_with("no difference beyond noise ("),
                "{}",
                j.text
            );
            assert_eq!(j.good, None);
        }
        let f = &c.row("failed").unwrap().judgements[0];
        assert_eq!(f.text, "none in either run");
    }
    assert!(alarms <= 16, "{alarms} false alarms in 160 comparisons");
    // And this pair in particular.
    let c = cmp(&[run(600.0, 13.0, 10, 0), run(600.0, 13.0, 10, 1)]);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!(t.verdict, Verdict::NoDifference, "{}", t.text);
}

#[test]
fn a_doubling_is_faster_with_the_right_direction() {
    let runs = [run(600.0, 13.0, 10, 1), run(1200.0, 6.5, 10, 2)];
    let c = cmp(&runs);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!(t.verdict, Verdict::Higher, "{}", t.text);
    assert_eq!(t.good, Some(true));
    // One ratio form: the change column's B over A; the words give the direction and the
    // bootstrap's interval, never a second point ratio.
    assert!(t.text.starts_with("B is faster (95% CI 1."), "{}", t.text);
    assert!(t.text.contains("x per interval), p"), "{}", t.text);
    let e = t.estimate.as_ref().unwrap();
    let (lo, hi) = e.ratio_ci.unwrap();
    assert!(lo > 1.7 && hi < 2.3 && lo < e.ratio.unwrap() && e.ratio.unwrap() < hi);
    assert!((t.ratio.unwrap() - 2.0).abs() < 0.1, "{:?}", t.ratio);
    let l = &c.row("latency p50").unwrap().judgements[0];
    assert_eq!(l.verdict, Verdict::Lower, "{}", l.text);
    assert_eq!(l.good, Some(true));
    assert!(l.text.starts_with("B is lower (95% CI 0."), "{}", l.text);

    // The other way round: slower, and worse.
    let back = [runs[1].clone(), runs[0].clone()];
    let c = cmp(&back);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!((t.verdict, t.good), (Verdict::Lower, Some(false)));
    assert!(t.text.starts_with("B is slower (95% CI 0."), "{}", t.text);
    let l = &c.row("latency p99").unwrap().judgements[0];
    assert_eq!(
        (l.verdict, l.good),
        (Verdict::Higher, Some(false)),
        "{}",
        l.text
    );
}

#[test]
fn verdicts_are_deterministic_for_a_seed() {
    let runs = [run(600.0, 13.0, 12, 5), run(640.0, 12.5, 12, 6)];
    let x = inputs(&runs);
    let o = Options::default();
    assert_eq!(compare(&x, &o, None), compare(&x, &o, None));
    let other = Options { seed: 99, ..o };
    let a = compare(&x, &Options::default(), None);
    let b = compare(&x, &other, None);
    let ci = |c: &Comparison| {
        c.row("throughput").unwrap().judgements[0]
            .estimate
            .clone()
            .unwrap()
            .diff_ci
    };
    assert_ne!(ci(&a), ci(&b), "the seed drives the resampling");
}

#[test]
fn a_small_but_significant_change_is_under_the_minimum_effect() {
    // 3% more throughput with almost no noise: statistically clear, practically nothing.
    let mut a = run(1000.0, 5.0, 20, 7);
    let mut b = run(1030.0, 5.0, 20, 7);
    for (r, level) in [(&mut a, 1000u64), (&mut b, 1030)] {
        for (k, iv) in r.intervals.iter_mut().enumerate() {
            let mut h = Histogram::new();
            for _ in 0..level + (k as u64 % 3) {
                h.record(5000);
            }
            iv.txns[0].latency = h;
        }
    }
    let c = cmp(&[a, b]);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!(t.verdict, Verdict::NoDifference, "{}", t.text);
    assert!(t.text.contains("under the 5% that counts"), "{}", t.text);
}

#[test]
fn the_ramp_up_second_and_a_partial_last_interval_are_ignored() {
    let a = run(600.0, 13.0, 10, 11);
    let mut b = run(600.0, 13.0, 10, 12);
    // B's first second was very slow (cold caches), and it ends with a 50 ms sliver.
    b.intervals[0].txns[0].latency = Histogram::new();
    for _ in 0..20 {
        b.intervals[0].txns[0].latency.record(200_000);
    }
    let mut sliver = Interval::new(1, 10_000_000);
    sliver.end_us = 10_050_000;
    sliver.txns[0].latency.record(1_000);
    b.intervals.push(sliver);
    assert_eq!(usable_intervals(&b, 1.0).len(), 9);
    assert_eq!(usable_intervals(&b, 0.0).len(), 10);
    let c = cmp(&[a, b]);
    assert_eq!(c.samples, vec![9, 9]);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!(t.verdict, Verdict::NoDifference, "{}", t.text);
    let m = &c.row("latency max").unwrap().judgements[0];
    assert_eq!(m.verdict, Verdict::NoDifference, "{}", m.text);
}

#[test]
fn too_few_intervals_are_not_judged() {
    let c = cmp(&[run(600.0, 13.0, 3, 1), run(1200.0, 6.0, 3, 2)]);
    let t = &c.row("throughput").unwrap().judgements[0];
    assert_eq!(t.verdict, Verdict::Untested);
    assert!(
        t.text.starts_with("too few intervals to judge (2 and 2"),
        "{}",
        t.text
    );
    assert!(
        t.ratio.unwrap() > 1.8,
        "the whole-run change is still shown"
    );
}

#[test]
fn different_workloads_are_refused_with_what_differs() {
    let a = run(600.0, 13.0, 5, 1);
    let mut b = run(600.0, 13.0, 5, 2);
    b.config.txn_types[0].name = "<builtin: select only>".into();
    let err = check_comparable(&inputs(&[a.clone(), b])).unwrap_err();
    assert!(err.contains("different workloads"), "{err}");
    assert!(
        err.contains("A (a.json) ran tpcb [<builtin: TPC-B (sort of)>@1]"),
        "{err}"
    );
    assert!(
        err.contains("B (b.json) ran tpcb [<builtin: select only>@1]"),
        "{err}"
    );
    let mut c = run(600.0, 13.0, 5, 3);
    c.config.workload = "tpcc".into();
    assert!(check_comparable(&inputs(&[a.clone(), c])).is_err());
    // Weights may differ (listed as a difference, not refused).
    let mut d = a.clone();
    d.config.txn_types[0].weight = 3;
    assert!(check_comparable(&inputs(&[a, d])).is_ok());
}

fn observed(r: &mut RunResult, events: &[(&str, u32)], commits_per_s: f64) {
    let secs = r.intervals.len() as i64;
    let mut rng = Rng::new(commits_per_s as u64);
    let mut m = ServerMetrics {
        sample_interval_ms: 1000,
        counter_interval_ms: 1000,
        window_start_ms: 0,
        window_end_ms: secs * 1000,
        ..Default::default()
    };
    let mut commits = 0.0;
    for s in 0..=secs {
        let mut s_waits = std::collections::BTreeMap::new();
        for (e, n) in events {
            // Sessions in each event vary by ±1 from sample to sample.
            let k = (*n as i64 + (rng.below(3) as i64 - 1)).max(0) as u32;
            s_waits.insert(e.to_string(), k);
        }
        m.activity.push(ActivitySample {
            t_ms: s * 1000,
            active: s_waits.values().sum(),
            waits: s_waits,
            ..Default::default()
        });
        m.counters.push(CounterSample {
            t_ms: s * 1000,
            values: [
                ("database.xact_commit".to_string(), commits),
                ("database.blks_hit".to_string(), commits * 40.0),
                ("database.blks_read".to_string(), 0.0),
                ("wal.wal_bytes".to_string(), commits * 2000.0),
            ]
            .into(),
        });
        commits += commits_per_s * noise(&mut rng, 0.1);
    }
    m.waits = measure::server::wait_totals(m.window_samples());
    let last = &m.counters.last().unwrap().values;
    m.deltas = last.clone();
    let _ = WaitTotal::default();
    r.server_metrics = Some(m);
}

#[test]
fn server_rows_follow_the_waits_of_seed_002() {
    let mut a = run(600.0, 13.0, 10, 1);
    let mut b = run(1300.0, 6.0, 10, 2);
    observed(
        &mut a,
        &[("IO:WALSync", 3), ("LWLock:WALWrite", 4), ("CPU", 1)],
        600.0,
    );
    observed(&mut b, &[("CPU", 5), ("Client:ClientRead", 2)], 1300.0);
    let c = cmp(&[a, b]);
    let commits = &c.row("server commits").unwrap().judgements[0];
    assert_eq!(commits.verdict, Verdict::Higher, "{}", commits.text);
    let wal = &c.row("WAL written").unwrap();
    assert_eq!(wal.better, Better::Neither);
    assert_eq!(wal.judgements[0].good, None);
    assert_eq!(
        c.row("buffer hit ratio").unwrap().judgements[0].verdict,
        Verdict::NoDifference
    );
    let sync = c.row("IO:WALSync").unwrap();
    assert_eq!(sync.group, Group::Waits);
    assert_eq!(sync.values[1], Some(0.0));
    assert_eq!(
        sync.judgements[0].verdict,
        Verdict::Lower,
        "{}",
        sync.judgements[0].text
    );
    assert_eq!(sync.judgements[0].good, Some(true));
    let cpu = c.row("CPU").unwrap();
    assert_eq!(cpu.judgements[0].verdict, Verdict::Higher);
    // Rows are ordered by the most load in any run.
    let waits: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| r.group == Group::Waits)
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(waits[0], "CPU");
    assert!(waits.contains(&"LWLock:WALWrite") && waits.contains(&"Client:ClientRead"));
}

#[test]
fn text_lists_runs_differences_and_one_line_per_metric() {
    let mut a = run(600.0, 13.0, 10, 1);
    let mut b = run(1200.0, 6.5, 10, 2);
    a.environment
        .server
        .settings
        .insert("synchronous_commit".into(), "on".into());
    b.environment
        .server
        .settings
        .insert("synchronous_commit".into(), "off".into());
    let runs = [a, b];
    let x = inputs(&runs);
    let c = compare(&x, &Options::default(), None);
    let t = render_text(&c, &x);
    assert!(
        t.starts_with("comparing 2 runs, A is the baseline:\n  A  a.json  tpcb, 4 clients"),
        "{t}"
    );
    assert!(
        t.contains("what differs:\n  synchronous_commit  A: on   B: off\n"),
        "{t}"
    );
    let line = t
        .lines()
        .find(|l| l.starts_with("throughput (tps)"))
        .unwrap();
    // One ratio on the line: the B/A column; the verdict names the direction and interval.
    assert!(line.contains("B is faster (95% CI "), "{line}");
    assert!(line.contains("   2.04x  "), "the B/A column: {line}");
    assert_eq!(line.matches("2.04x").count(), 1, "{line}");
    assert!(
        t.lines().any(|l| l.starts_with("latency p99.9 (ms)")),
        "{t}"
    );
    assert!(t.contains("Mann-Whitney U"), "{t}");
    assert!(
        !t.contains("server ("),
        "no server rows without server metrics"
    );
    // Three runs: a values line, then one verdict line per run against the baseline.
    let runs3 = [runs[0].clone(), runs[1].clone(), runs[0].clone()];
    let x3 = inputs(&runs3);
    let t3 = render_text(&compare(&x3, &Options::default(), None), &x3);
    assert!(t3.contains("\n    B vs A: "), "{t3}");
    assert!(
        t3.contains("\n    C vs A:    1.00x  no difference beyond noise (95% CI "),
        "{t3}"
    );
}

#[test]
fn html_overlays_the_runs_and_escapes_names() {
    let mut a = run(600.0, 13.0, 10, 1);
    let mut b = run(1200.0, 6.5, 10, 2);
    observed(&mut a, &[("IO:WALSync", 3), ("CPU", 1)], 600.0);
    observed(&mut b, &[("CPU", 5)], 1200.0);
    let runs = [a, b];
    let x = vec![
        Input {
            name: "<b>a.json",
            run: &runs[0],
        },
        Input {
            name: "b.json",
            run: &runs[1],
        },
    ];
    let c = compare(&x, &Options::default(), None);
    let html = render_html(&c, &x);
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
    assert!(!html.contains("<b>a.json") && html.contains("&lt;b&gt;a.json"));
    for id in [
        "chart-tps",
        "chart-p99",
        "chart-distribution",
        "chart-percentiles",
        "chart-load-A",
        "chart-load-B",
    ] {
        let at = html
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id}"));
        assert!(html[at - 30..at].contains("<figure"), "{id} is empty");
    }
    // Both runs drawn in each overlaid chart.
    let tps = &html[html.find("id=\"chart-tps\"").unwrap()..];
    let tps = &tps[..tps.find("</figure>").unwrap()];
    assert_eq!(tps.matches("<path class=\"line\"").count(), 2);
    assert!(html.contains("class=\"verdict good\">Throughput: B is"));
    assert!(html.contains("<span class=\"badge better\">better</span>"));
    for tag in ["section", "table", "svg", "figure", "div", "tr"] {
        let open = html.matches(&format!("<{tag}")).count();
        assert_eq!(open, html.matches(&format!("</{tag}>")).count(), "<{tag}>");
    }
    // The page up to the embedded chart library has no script but the charts' data.
    let page = &html[..html.find("</main>").unwrap()];
    assert_eq!(
        page.matches("<script").count(),
        crate::live::charts_in(page).len()
    );
    assert!(!page.contains("https://"));
    assert_eq!(html[page.len()..].matches("<script>").count(), 2);
}

/// [`observed`] on MariaDB: the same levels under MySQL's status variables.
fn observed_mysql(r: &mut RunResult, events: &[(&str, u32)], commits_per_s: f64, misses: f64) {
    observed(r, events, commits_per_s);
    let m = r.server_metrics.as_mut().unwrap();
    m.product = Some("MariaDB".into());
    for c in &mut m.counters {
        let commits = c.values["database.xact_commit"];
        c.values = [
            ("mysql.Com_commit".to_string(), commits),
            (
                "mysql.Innodb_buffer_pool_read_requests".to_string(),
                commits * 40.0,
            ),
            (
                "mysql.Innodb_buffer_pool_reads".to_string(),
                commits * misses,
            ),
            ("mysql.Innodb_os_log_written".to_string(), commits * 2000.0),
        ]
        .into();
    }
    m.deltas = m.counters.last().unwrap().values.clone();
}

#[test]
fn mysql_runs_compare_their_own_counters() {
    let mut a = run(600.0, 13.0, 10, 1);
    let mut b = run(1300.0, 6.0, 10, 2);
    observed_mysql(
        &mut a,
        &[("IO:file/innodb/innodb_log_file", 3), ("CPU", 1)],
        600.0,
        0.0,
    );
    observed_mysql(&mut b, &[("CPU", 5)], 1300.0, 4.0);
    let runs = [a, b];
    let c = cmp(&runs);
    assert_eq!(
        c.server_sources,
        "SHOW GLOBAL STATUS, PROCESSLIST, performance_schema"
    );
    let commits = c.row("server commits").unwrap();
    assert!(
        (commits.values[0].unwrap() - 600.0).abs() < 60.0,
        "{:?}",
        commits.values
    );
    assert_eq!(commits.judgements[0].verdict, Verdict::Higher);
    assert!(c.row("WAL written").is_none());
    let redo = c.row("redo log written").unwrap();
    assert!(redo.values[0].unwrap() > 0.0);
    // 40 logical reads per commit, none from disk in A, 4 of them from disk in B: 90%.
    let hits = c.row("buffer hit ratio").unwrap();
    assert_eq!(hits.values[0], Some(100.0));
    assert!(
        (hits.values[1].unwrap() - 90.0).abs() < 1e-6,
        "{:?}",
        hits.values
    );
    assert_eq!(hits.judgements[0].verdict, Verdict::Lower);
    assert!(c.row("IO:file/innodb/innodb_log_file").is_some());
    let text = render_text(&c, &inputs(&runs));
    assert!(
        text.contains("server (SHOW GLOBAL STATUS, PROCESSLIST, performance_schema):"),
        "{text}"
    );
    assert!(!text.contains("pg_stat"), "{text}");
    let html = render_html(&c, &inputs(&runs));
    assert!(html.contains("server (SHOW GLOBAL STATUS, PROCESSLIST, performance_schema)"));
}
