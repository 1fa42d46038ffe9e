//! Per-statement comparisons of constructed replays: fingerprints with known latency levels and
//! seeded noise, and errors by SQLSTATE in the replay section.

use measure::{Histogram, Interval, TxnStats};

use super::super::stats::Rng;
use super::super::{compare, render_text as render_comparison, Input, Options};
use super::*;
use crate::testdata::{config, result, txn_type};

const UPDATE: &str = "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2";
const SELECT: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = $1";
const INSERT: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1)";
const RARE: &str = "VACUUM pgbench_branches";

/// `n` latencies around `level_us`, spread ±50% (sum of four uniforms), from `seed`.
fn hist(level_us: f64, n: usize, seed: u64) -> Histogram {
    let mut r = Rng::new(seed);
    let mut h = Histogram::new();
    for _ in 0..n {
        let u: f64 = (0..4).map(|_| r.next_u64() as f64 / u64::MAX as f64).sum();
        h.record((level_us * (1.0 + 0.5 * (u - 2.0))).max(1.0) as u64);
    }
    h
}

/// A replay with one type per `(fingerprint, latency)` and `errors` in its section as
/// `(fingerprint, code, count)` met by the replay.
fn replay(types: Vec<(&str, Histogram)>, errors: &[(&str, &str, u64)]) -> RunResult {
    let mut c = config(types.iter().map(|(n, _)| txn_type(n, 1, vec![])).collect());
    c.workload = REPLAY.into();
    let txns: Vec<TxnStats> = types
        .into_iter()
        .map(|(_, h)| TxnStats {
            latency: h,
            ..Default::default()
        })
        .collect();
    let mut r = result(c, txns.clone(), 10.0, 1.0);
    let mut total = Interval::new(txns.len(), 0);
    total.txns = txns;
    total.end_us = 10_000_000;
    r.total = total;
    let errors: Vec<serde_json::Value> = errors
        .iter()
        .map(|(fp, code, n)| {
            serde_json::json!({"fingerprint": fp, "captured": 100, "log_errors": {},
                               "replay_errors": {*code: n}})
        })
        .collect();
    r.sections.insert(
        "replay".into(),
        serde_json::json!({"capture": "pg.csv", "format": "csvlog", "errors": errors}),
    );
    r
}

fn two(a: &RunResult, b: &RunResult) -> Statements {
    between(a, b, ("A", "B"), &Options::default()).expect("both are replays")
}

#[test]
fn a_statement_three_times_slower_is_named_and_noise_is_not() {
    let a = replay(
        vec![
            (UPDATE, hist(200.0, 2000, 1)),
            (SELECT, hist(100.0, 5000, 2)),
            (INSERT, hist(150.0, 2000, 3)),
        ],
        &[],
    );
    // UPDATE 3x slower; SELECT the same distribution from another seed, and 2% slower (under
    // the 5% that counts); INSERT the same.
    let b = replay(
        vec![
            (UPDATE, hist(600.0, 2000, 11)),
            (SELECT, hist(102.0, 5000, 12)),
            (INSERT, hist(150.0, 2000, 13)),
        ],
        &[(UPDATE, "40P01", 3)],
    );
    let s = two(&a, &b);
    let u = s.line(UPDATE).unwrap();
    assert_eq!(u.change, Change::Slower, "{u:?}");
    assert_eq!((u.p50, u.p99), (Verdict::Higher, Verdict::Higher));
    let ua = u.a.as_ref().unwrap();
    let ub = u.b.as_ref().unwrap();
    assert_eq!((ua.count, ub.count), (2000, 2000));
    let r = ub.p50_us as f64 / ua.p50_us as f64;
    assert!((2.8..3.2).contains(&r), "{r}");
    // Shares of each side's statement time add up to 1, and the slow UPDATE's grew.
    let share = |f: fn(&Line) -> Option<&Side>| s.lines.iter().filter_map(f).map(|x| x.share);
    assert!((share(|l| l.a.as_ref()).sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(ub.share > ua.share + 0.2, "{ua:?} {ub:?}");
    for fp in [SELECT, INSERT] {
        assert_eq!(s.line(fp).unwrap().change, Change::Same, "{fp}");
    }
    assert_eq!(s.changed().count(), 1);
    assert_eq!(
        s.new_errors,
        vec![ErrorChange {
            fingerprint: UPDATE.into(),
            code: "40P01".into(),
            a: 0,
            b: 3
        }]
    );
    assert!(s.gone_errors.is_empty());
    // And the other way round: faster, and the deadlocks stopped.
    let back = two(&b, &a);
    assert_eq!(back.line(UPDATE).unwrap().change, Change::Faster);
    assert_eq!(back.gone_errors.len(), 1);
    assert!(back.new_errors.is_empty());

    // The text names the slower statement and the new failure, not the others.
    let runs = [a, b];
    let inputs: Vec<Input<'_>> = (runs.iter().zip(["a.json", "b.json"]))
        .map(|(run, name)| Input { name, run })
        .collect();
    let c = compare(&inputs, &Options::default(), None);
    assert_eq!(c.statements.len(), 1);
    let text = render_comparison(&c, &inputs);
    assert!(text.contains("per statement, B against A"), "{text}");
    assert!(text.contains(&format!("slower  {UPDATE}")), "{text}");
    assert!(text.contains("3.0") && text.contains("x slower"), "{text}");
    assert!(!text.contains(&format!("slower  {SELECT}")), "{text}");
    assert!(text.contains("newly failing in B"), "{text}");
    assert!(text.contains("40P01 x3 (A: none)"), "{text}");
    let html = super::super::render_html(&c, &inputs);
    assert!(html.contains("id=\"statements\"") && html.contains("40P01"));
}

#[test]
fn too_few_executions_are_not_judged_and_one_sided_fingerprints_are_listed() {
    // Three executions, 3x slower: p50's interval needs more; p99's needs hundreds.
    let a = replay(
        vec![(UPDATE, hist(200.0, 3, 1)), (RARE, hist(5000.0, 2, 2))],
        &[],
    );
    let b = replay(
        vec![(UPDATE, hist(600.0, 3, 3)), (SELECT, hist(100.0, 50, 4))],
        &[],
    );
    let s = two(&a, &b);
    let u = s.line(UPDATE).unwrap();
    assert_eq!(
        (u.p50, u.p99, u.change),
        (Verdict::Untested, Verdict::Untested, Change::Same)
    );
    assert_eq!(s.line(RARE).unwrap().change, Change::OnlyA);
    assert_eq!(s.line(SELECT).unwrap().change, Change::OnlyB);
    let text = render_text(&s);
    assert!(text.contains(&format!("only in A: {RARE}")), "{text}");
    assert!(text.contains(&format!("only in B: {SELECT}")), "{text}");
}

#[test]
fn quantile_intervals_need_enough_executions_and_contain_the_quantile() {
    let h = hist(1000.0, 100, 5);
    let (lo, hi) = quantile_interval(&h, 50.0, 0.95).unwrap();
    let p50 = h.percentile_us(50.0);
    assert!(lo < p50 && p50 < hi, "{lo} {p50} {hi}");
    // p99 of 100: the upper rank would be past the last execution.
    assert_eq!(quantile_interval(&h, 99.0, 0.95), None);
    assert!(quantile_interval(&hist(1000.0, 2000, 6), 99.0, 0.95).is_some());
    assert!((z_of(0.025) - 1.959_964).abs() < 1e-4);
}

#[test]
fn runs_that_are_not_replays_have_no_per_statement_part() {
    let mut a = replay(vec![(UPDATE, hist(200.0, 100, 1))], &[]);
    a.config.workload = "tpcb".into();
    let b = replay(vec![(UPDATE, hist(600.0, 100, 2))], &[]);
    assert!(between(&a, &b, ("A", "B"), &Options::default()).is_none());
    assert!(against_log(&a, &Options::default()).is_err());
}

#[test]
fn against_the_log_uses_the_recorded_durations_and_errors() {
    let mut r = replay(
        vec![
            (UPDATE, hist(600.0, 2000, 1)),
            (SELECT, hist(100.0, 2000, 2)),
        ],
        &[(SELECT, "40P01", 2)],
    );
    // Without durations (log_statement = all): a clear refusal that says why.
    let why = against_log(&r, &Options::default()).unwrap_err();
    assert!(
        why.contains("pg.csv") && why.contains("log_min_duration_statement"),
        "{why}"
    );
    let log = vec![
        LogDurations::new(UPDATE.into(), hist(200.0, 2000, 3)),
        LogDurations::new(SELECT.into(), hist(100.0, 2000, 4)),
    ];
    let section = r.sections.get_mut("replay").unwrap();
    section["log_durations"] = serde_json::to_value(&log).unwrap();
    section["errors"][0]["log_errors"] = serde_json::json!({"40P01": 2});
    let s = against_log(&r, &Options::default()).unwrap();
    assert_eq!((s.a_label.as_str(), s.b_label.as_str()), ("log", "replay"));
    assert_eq!(s.line(UPDATE).unwrap().change, Change::Slower);
    assert_eq!(s.line(SELECT).unwrap().change, Change::Same);
    // The log recorded the same deadlocks: nothing newly failing.
    assert!(s.new_errors.is_empty() && s.gone_errors.is_empty(), "{s:?}");
    // A log that does not name its codes: failing in both is no change.
    let section = r.sections.get_mut("replay").unwrap();
    section["errors"][0]["log_errors"] = serde_json::json!({"unnamed": 2});
    let s = against_log(&r, &Options::default()).unwrap();
    assert!(s.new_errors.is_empty() && s.gone_errors.is_empty(), "{s:?}");
}

#[test]
fn the_same_distribution_is_never_called_a_change() {
    // Twenty pairs of replays of the same statement from different seeds: no verdict either way
    // (the non-overlap rule is strict enough for a hundred fingerprints judged at once).
    for seed in 0..20 {
        let a = replay(vec![(UPDATE, hist(300.0, 3000, 100 + seed))], &[]);
        let b = replay(vec![(UPDATE, hist(300.0, 3000, 200 + seed))], &[]);
        let o = Options {
            min_effect: 0.0,
            ..Options::default()
        };
        let s = between(&a, &b, ("A", "B"), &o).unwrap();
        assert_eq!(s.line(UPDATE).unwrap().change, Change::Same, "seed {seed}");
    }
}
