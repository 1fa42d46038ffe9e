//! The summaries and progress lines against pgbench 18's (testdata/pgbench-18: pgbench 15 captures with 18's format differences applied, see its README), and the conditions
//! under which each line appears.

use super::*;
use crate::model::*;
use crate::testdata::*;
use measure::{Interval, TxnStats};

/// The part of a captured pgbench run that `printResults()` wrote: everything but the banner,
/// "starting vacuum" and the progress lines.
fn summary_of(captured: &str) -> String {
    captured
        .lines()
        .filter(|l| {
            !(l.starts_with("pgbench (")
                || l.starts_with("starting vacuum")
                || l.starts_with("progress: "))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn progress_lines(captured: &str) -> Vec<&str> {
    captured
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect()
}

/// pgbench's per-statement retries column (` %10ld` after the failures column) replaced by
/// the `-` we print, since measure does not record per-statement retries.
fn without_statement_retries(text: &str) -> String {
    text.lines()
        .map(|l| {
            let is_stmt =
                l.starts_with("   ") && l.len() > 37 && l[26..37].trim().parse::<u64>().is_ok();
            if is_stmt {
                format!("{} {:>10}{}\n", &l[..26], "-", &l[37..])
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

fn assert_lines_eq(got: &str, want: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {} differs", i + 1);
    }
    assert_eq!(got, want);
}

const SINGLE: &str = include_str!("../../testdata/pgbench-18/single-progress-r.txt");
const RATE: &str = include_str!("../../testdata/pgbench-18/rate-latency-limit.txt");
const MULTI: &str = include_str!("../../testdata/pgbench-18/multi-r.txt");
const MULTI_RATE_TRIES: &str = include_str!("../../testdata/pgbench-18/multi-rate-tries-r.txt");
const TXNS_CONNECT: &str = include_str!("../../testdata/pgbench-18/txns-connect-prepared-r.txt");
const UNLIMITED: &str = include_str!("../../testdata/pgbench-18/unlimited-tries-r.txt");
const TRIES3: &str = include_str!("../../testdata/pgbench-18/tries3.txt");

fn tpcb_statements(ms: [&str; 11]) -> (Vec<String>, Vec<measure::StmtStats>) {
    let texts = [
        SET_AID, SET_BID, SET_TID, SET_DELTA, BEGIN, UPD_ACC, SEL_ACC, UPD_TEL, UPD_BR, INS_HIST,
        END,
    ];
    let pairs: Vec<(&str, &str)> = ms.into_iter().zip(texts).collect();
    stmts(&pairs)
}

/// `pgbench -c 4 -j 2 -T 3 -P 1 -r`
fn single() -> RunResult {
    let (texts, stats) = tpcb_statements([
        "0.001", "0.001", "0.001", "0.001", "0.110", "0.166", "0.216", "0.831", "2.540", "0.108",
        "1.182",
    ]);
    let t = TxnStats {
        latency: hist(2314, "5.156", "5.181"),
        statements: stats,
        ..Default::default()
    };
    let mut c = config(vec![txn_type(TPCB, 1, texts)]);
    c.progress_s = Some(1.0);
    c.per_statement = true;
    result(c, vec![t], 2314.0 / 774.123792, 20.511)
}

#[test]
fn single_script_with_progress_and_r_matches_pgbench() {
    assert_lines_eq(&render_pgbench_summary(&single()), &summary_of(SINGLE));
}

#[test]
fn rate_and_latency_limit_match_pgbench() {
    let t = TxnStats {
        latency: hist(844, "4.556", "3.619"),
        lag: hist_mean_max(844 + 141, "0.244", 3569),
        skipped: 141,
        late: 633,
        ..Default::default()
    };
    let mut c = config(vec![txn_type(TPCB, 1, vec![])]);
    c.duration_s = Some(2);
    c.progress_s = Some(1.0);
    c.rate_tps = Some(500.0);
    c.latency_limit_ms = Some(2.0);
    let r = result(c, vec![t], 844.0 / 423.660325, 11.545);
    assert_lines_eq(&render_pgbench_summary(&r), &summary_of(RATE));
}

#[test]
fn multiple_scripts_match_pgbench_but_for_the_estimated_average() {
    let (su_text, su_stats) = stmts(&[
        ("0.001", SET_AID),
        ("0.000", SET_BID),
        ("0.000", SET_TID),
        ("0.000", SET_DELTA),
        ("0.140", BEGIN),
        ("0.156", UPD_ACC),
        ("0.201", SEL_ACC),
        ("0.182", INS_HIST),
        ("0.725", END),
    ]);
    let (so_text, so_stats) = stmts(&[("0.000", SET_AID), ("0.190", SEL_ACC)]);
    // Exact mean of the union: (3621 * 1.405 + 14328 * 0.191) / 17949 = 0.436 ms.
    let [su, so] = joint(
        [(3621, "1.405", "1.454"), (14328, "0.191", "0.515")],
        "0.436",
        None,
    );
    let mut c = config(vec![
        txn_type(SIMPLE_UPDATE, 2, su_text),
        txn_type(SELECT_ONLY, 8, so_text),
    ]);
    c.duration_s = Some(2);
    c.per_statement = true;
    let txns = vec![
        TxnStats {
            latency: su,
            statements: su_stats,
            ..Default::default()
        },
        TxnStats {
            latency: so,
            statements: so_stats,
            ..Default::default()
        },
    ];
    let r = result(c, txns, 17949.0 / 8973.970536, 13.717);
    // Without -P/-R/-L pgbench estimates the average as duration * clients / transactions
    // (0.446 here); stampede prints the measured mean.
    let want = summary_of(MULTI).replace(
        "latency average = 0.446 ms\n",
        "latency average = 0.436 ms\n",
    );
    assert_lines_eq(&render_pgbench_summary(&r), &want);
}

#[test]
fn multiple_scripts_with_rate_limit_and_retries_match_pgbench() {
    let r = multi_rate_tries();
    let want = without_statement_retries(&summary_of(MULTI_RATE_TRIES));
    assert!(want.contains("           0          - BEGIN;\n"), "{want}");
    assert_lines_eq(&render_pgbench_summary(&r), &want);
}

#[test]
fn transactions_per_client_and_connect_per_transaction_match_pgbench() {
    let (texts, stats) = tpcb_statements([
        "0.006", "0.004", "0.003", "0.002", "0.891", "2.609", "1.349", "1.809", "2.638", "1.261",
        "2.035",
    ]);
    let t = TxnStats {
        latency: hist(100, "12.605", "5.977"),
        statements: stats,
        ..Default::default()
    };
    let mut c = config(vec![txn_type(TPCB, 1, texts)]);
    c.clients = 2;
    c.threads = 1;
    c.duration_s = None;
    c.transactions_per_client = Some(50);
    c.progress_s = Some(1.0);
    c.connect_per_txn = true;
    c.per_statement = true;
    c.query_mode = "prepared".into();
    let mut r = result(c, vec![t], 100.0 / 107.162414, 0.0);
    r.connections.reconnect_total_ms = Some(558.8);
    assert_lines_eq(&render_pgbench_summary(&r), &summary_of(TXNS_CONNECT));
}

#[test]
fn unlimited_tries_hide_the_tries_line_and_show_retries_as_pgbench() {
    let (texts, stats) = tpcb_statements([
        "0.001", "0.000", "0.000", "0.000", "0.074", "0.135", "0.155", "0.179", "0.455", "0.123",
        "0.582",
    ]);
    let t = TxnStats {
        latency: hist(2337, "1.705", "2.211"),
        statements: stats,
        ..Default::default()
    };
    let mut c = config(vec![txn_type(TPCB, 1, texts)]);
    c.clients = 2;
    c.threads = 1;
    c.duration_s = Some(2);
    c.progress_s = Some(1.0);
    c.per_statement = true;
    c.max_tries = 0;
    let r = result(c, vec![t], 2337.0 / 1171.875, 6.136);
    let want = without_statement_retries(&summary_of(UNLIMITED));
    assert!(!want.contains("maximum number of tries"));
    assert_lines_eq(&render_pgbench_summary(&r), &want);
}

#[test]
fn nothing_after_the_processed_count_when_no_transaction_ran() {
    let mut c = config(vec![txn_type(TPCB, 1, vec![BEGIN.into()])]);
    c.duration_s = None;
    c.transactions_per_client = Some(10);
    c.per_statement = true;
    let r = result(c, vec![TxnStats::default()], 1.0, 5.0);
    assert_eq!(
        render_pgbench_summary(&r),
        "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nquery mode: simple\n\
         number of clients: 4\nnumber of threads: 2\nmaximum number of tries: 1\n\
         number of transactions per client: 10\n\
         number of transactions actually processed: 0/40\n"
    );
}

#[test]
fn conditional_lines_follow_pgbench() {
    let mut h = Histogram::new();
    for v in [1_000, 3_000] {
        h.record(v);
    }
    let t = TxnStats {
        latency: h,
        failures: [1, 1, 2],
        skipped: 0,
        late: 1,
        ..Default::default()
    };
    let base = config(vec![txn_type(TPCB, 1, vec![])]);
    let text = |f: &dyn Fn(&mut RunConfig)| {
        let mut c = base.clone();
        f(&mut c);
        render_pgbench_summary(&result(c, vec![t.clone()], 2.0, 1.0))
    };

    // Plain -T: no stddev, no lag, no skipped, no limit, no retries, no statements.
    let plain = text(&|_| {});
    assert!(
        plain.contains("number of failed transactions: 4 (66.667%)\n"),
        "{plain}"
    );
    assert!(plain.contains("latency average = 2.000 ms\n"));
    for absent in [
        "stddev",
        "lag",
        "skipped",
        "latency limit",
        "retr",
        "statement",
        "SQL script",
    ] {
        assert!(!plain.contains(absent), "{absent} in\n{plain}");
    }
    assert!(plain.ends_with("tps = 1.000000 (without initial connection time)\n"));

    // -L without -R: the late line and stddev, but no skipped line (pgbench needs both).
    let l = text(&|c| c.latency_limit_ms = Some(2.5));
    assert!(l.contains("number of transactions above the 2.5 ms latency limit: 1/2 (50.000%)\n"));
    assert!(l.contains("latency stddev = 1.000 ms\n"));
    assert!(!l.contains("skipped") && !l.contains("lag"));

    // -R without -L: lag but no skipped and no late line.
    let rate = text(&|c| c.rate_tps = Some(10.0));
    assert!(
        rate.contains("rate limit schedule lag: avg 0.000 (max 0.000) ms\n"),
        "{rate}"
    );
    assert!(!rate.contains("skipped") && !rate.contains("latency limit"));

    // --max-tries 2: retries lines right after the failed line.
    let tries = text(&|c| c.max_tries = 2);
    assert!(tries.contains(
        "maximum number of tries: 2\nduration: 3 s\nnumber of transactions actually processed: 2\n\
         number of failed transactions: 4 (66.667%)\nnumber of transactions retried: 0 (0.000%)\n\
         total number of retries: 0\n"
    ), "{tries}");

    // -r on one script: statement header without the " - " prefix, no script section.
    let r = text(&|c| {
        c.per_statement = true;
        c.txn_types[0].statements = vec!["SELECT 1;\n-- second line".into()];
    });
    assert!(r.ends_with(
        "statement latencies in milliseconds and failures:\n         0.000           0 SELECT 1;\n"
    ), "{r}");
    assert!(!r.contains("SQL script"));
}

#[test]
fn script_sections_follow_pgbench_conditions() {
    let mut r = multi_rate_tries();
    // -L without -R: no skipped lines anywhere; without -r: no statement tables; max tries 1:
    // no retries lines.
    r.config.rate_tps = None;
    r.config.per_statement = false;
    r.config.max_tries = 1;
    let text = render_pgbench_summary(&r);
    assert!(!text.contains("skipped") && !text.contains("lag"), "{text}");
    assert!(
        !text.contains("statement latencies") && !text.contains("retr"),
        "{text}"
    );
    assert!(text.contains("number of transactions above the 3.0 ms latency limit: 220/1526"));
    assert!(
        text.ends_with(
            "SQL script 2: <builtin: select only>\n - weight: 8 (targets 80.0% of total)\n \
         - 1267 transactions (80.3% of total)\n \
         - number of transactions actually processed: 1225 (tps = 612.905130)\n \
         - number of failed transactions: 0 (0.000%)\n - latency average = 0.762 ms\n \
         - latency stddev = 1.431 ms\n"
        ),
        "{text}"
    );

    // A script that ran nothing: no processed, failed, skipped or latency lines for it
    // (pgbench guards them), the others unchanged.
    let mut r = multi_rate_tries();
    r.total.txns[1] = TxnStats::default();
    let text = render_pgbench_summary(&r);
    let second = text.split("SQL script 2").nth(1).unwrap();
    assert!(
        second.contains(" - 0 transactions (0.0% of total)\n"),
        "{second}"
    );
    assert!(
        !second.contains("skipped") && !second.contains("latency average"),
        "{second}"
    );
    // pgbench 18 prints a script's processed, failed, retried and skipped lines only when it
    // ran something.
    assert!(
        !second.contains("number of failed transactions"),
        "{second}"
    );
}

#[test]
fn stampede_block_lists_percentiles_failures_aborts_checks_and_interruption() {
    let mut r = multi_rate_tries();
    r.total.txns[1].failures = [2, 1, 0];
    r.interrupted = true;
    let text = render_text(&r);
    let (pg, ours) = text.split_once("\n\n").unwrap();
    assert_eq!(format!("{pg}\n"), render_pgbench_summary(&r));
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(
        lines[0],
        "latency percentiles in milliseconds (committed transactions):"
    );
    assert_eq!(
        lines[1],
        "        p50        p90        p95        p99      p99.9     p99.99        max"
    );
    assert!(lines[2].ends_with("  all"));
    assert!(lines[3].ends_with("  <builtin: simple update>"));
    assert!(lines[4].ends_with("  <builtin: select only>"));
    // 1526 committed + 3 failed + 51 skipped = 1580 transactions.
    assert_eq!(
        lines[5],
        "failed transactions by kind: serialization 2 (0.127%), deadlock 1 (0.063%), other 0 (0.000%)"
    );
    assert_eq!(lines[6], "aborted clients: 1 of 4");
    // The reasons went to standard error as they happened; the summary names the clients.
    assert_eq!(lines[7], "  clients 3 (their errors are on standard error)");
    assert_eq!(
        lines[8],
        "connections: 8000 opened in 0.010 s (1234.5/s, at most 64 in flight, 3 retries); \
         I/O: io_uring (2 of 2 engine threads); 2 transactions abandoned in flight at the end \
         (blocked waiting for the server; neither committed nor failed); open files: limit 20000 \
         (hard 20000, raised from 1024), needed 8200"
    );
    assert_eq!(lines[9], "checks:");
    assert_eq!(
        lines[10],
        "  PASSED   commit count reconciliation: 1526 committed, server counted 1526"
    );
    assert_eq!(
        lines[11],
        "  SKIPPED  tpcb balance invariant: not a TPC-B run"
    );
    assert_eq!(
        lines[12],
        "interrupted: the run was cut short; the results above are incomplete"
    );
    assert_eq!(lines.len(), 13);
}

#[test]
fn percentile_rows_are_exact_for_exactly_stored_values() {
    // 1.000 .. 1.990 ms in 100 steps: HDR stores values below 2048 us exactly.
    let mut h = Histogram::new();
    for i in 0..100u64 {
        h.record(1_000 + 10 * i);
    }
    let t = TxnStats {
        latency: h,
        ..Default::default()
    };
    let mut r = result(config(vec![txn_type(TPCB, 1, vec![])]), vec![t], 1.0, 1.0);
    r.checks.clear();
    let ours = render_stampede_summary(&r);
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(
        lines[2],
        "      1.490      1.890      1.940      1.980      1.990      1.990      1.990  all"
    );
    // One transaction type: no per-type rows.
    assert!(lines[3].starts_with("failed transactions by kind: serialization 0 (0.000%)"));
    assert_eq!(lines[4], "aborted clients: 0 of 4");
    assert_eq!(lines[5], "checks: none");
    assert_eq!(lines.len(), 6);

    // Nothing committed: dashes, not zeros.
    let empty = result(
        config(vec![txn_type(TPCB, 1, vec![])]),
        vec![TxnStats::default()],
        1.0,
        1.0,
    );
    let ours = render_stampede_summary(&empty);
    assert_eq!(
        ours.lines().nth(2).unwrap(),
        format!("{}  all", format!(" {:>10}", "-").repeat(7))
    );
}

fn interval(len_us: u64, t: TxnStats) -> Interval {
    Interval {
        start_us: 0,
        end_us: len_us,
        txns: vec![t],
    }
}

fn prefix(line: &str) -> &str {
    line.split_once(", p99 ").expect("p99 at the end").0
}

#[test]
fn progress_matches_pgbench_before_the_p99() {
    let plain = ProgressStyle {
        rate_limited: false,
        latency_limited: false,
        max_tries: 1,
        ..Default::default()
    };
    let t = TxnStats {
        latency: hist(565, "6.915", "6.160"),
        ..Default::default()
    };
    let line = render_progress(&interval(1_000_000, t), 1.0, &plain);
    assert_eq!(prefix(&line), progress_lines(SINGLE)[0]);

    // -R -L: lag, then skipped.
    let rate = ProgressStyle {
        rate_limited: true,
        latency_limited: true,
        max_tries: 1,
        ..Default::default()
    };
    let t = TxnStats {
        latency: hist(415, "4.457", "3.698"),
        lag: hist_mean_max(478, "0.224", 1999),
        skipped: 63,
        ..Default::default()
    };
    let line = render_progress(&interval(1_000_000, t), 1.0, &rate);
    assert_eq!(prefix(&line), progress_lines(RATE)[0]);

    // --max-tries 3: retried and retries.
    let tries = ProgressStyle {
        rate_limited: false,
        latency_limited: false,
        max_tries: 3,
        ..Default::default()
    };
    let t = TxnStats {
        latency: hist(296, "13.254", "8.953"),
        ..Default::default()
    };
    let line = render_progress(&interval(1_000_000, t), 1.0, &tries);
    assert_eq!(prefix(&line), progress_lines(TRIES3)[0]);

    // All three, and an interval a little longer than a second (801 / 1.00025 s = 800.8).
    let all = ProgressStyle {
        rate_limited: true,
        latency_limited: true,
        max_tries: 3,
        ..Default::default()
    };
    let t = TxnStats {
        latency: hist(801, "1.292", "2.138"),
        lag: hist_mean_max(820, "0.347", 1999),
        skipped: 19,
        ..Default::default()
    };
    let line = render_progress(&interval(1_000_250, t), 1.0, &all);
    assert_eq!(prefix(&line), progress_lines(MULTI_RATE_TRIES)[0]);
}

#[test]
fn progress_counts_every_type_and_ends_with_p99() {
    let mut a = TxnStats::default();
    let mut b = TxnStats::default();
    for i in 0..100u64 {
        a.latency.record(1_000 + 10 * i);
    }
    a.failures = [1, 0, 0];
    b.failures = [0, 1, 1];
    b.retried = 2;
    b.retries = 5;
    let iv = Interval {
        start_us: 4_000_000,
        end_us: 6_000_000,
        txns: vec![a, b],
    };
    let style = ProgressStyle {
        rate_limited: false,
        latency_limited: true,
        max_tries: 0,
        ..Default::default()
    };
    assert_eq!(
        render_progress(&iv, 6.0, &style),
        "progress: 6.0 s, 50.0 tps, lat 1.495 ms stddev 0.289, 3 failed, 2 retried, 5 retries, p99 1.980 ms"
    );
    // Nothing committed: zeros as pgbench, p99 0.
    let idle = Interval {
        start_us: 0,
        end_us: 1_000_000,
        txns: vec![TxnStats::default()],
    };
    assert_eq!(
        render_progress(
            &idle,
            1.0,
            &ProgressStyle {
                max_tries: 1,
                ..style
            }
        ),
        "progress: 1.0 s, 0.0 tps, lat 0.000 ms stddev 0.000, 0 failed, p99 0.000 ms"
    );
}

#[test]
fn progress_style_follows_the_configuration() {
    let mut c = config(vec![]);
    assert_eq!(
        ProgressStyle::from(&c),
        ProgressStyle {
            rate_limited: false,
            latency_limited: false,
            max_tries: 1,
            ..Default::default()
        }
    );
    c.rate_tps = Some(5.0);
    c.latency_limit_ms = Some(1.0);
    c.max_tries = 0;
    assert_eq!(
        ProgressStyle::from(&c),
        ProgressStyle {
            rate_limited: true,
            latency_limited: true,
            max_tries: 0,
            ..Default::default()
        }
    );
}

#[test]
fn a_fault_run_gives_no_spreading_advice_in_text_or_html() {
    let mut r = multi_rate_tries();
    let ep = |host: &str, clients, transactions| Endpoint {
        host: host.into(),
        port: 5432,
        clients,
        transactions,
        ..Default::default()
    };
    r.endpoints = vec![ep("/tmp/a", 4, 700), ep("/tmp/b", 0, 0)];
    r.endpoints_warning = Some(
        "all 4 clients are on one host of 2 (/tmp/a:5432); --spread round-robin spreads them"
            .into(),
    );
    assert!(render_text(&r).contains("  warning: all 4 clients"));
    // A fault run's clients move to the new primary by design: advice to spread them is wrong,
    // also for a result written with it.
    r.failover = Some(failover_section());
    let text = render_text(&r);
    assert!(
        text.contains("  /tmp/a:5432  4 clients, 700 transactions"),
        "{text}"
    );
    assert!(!text.contains("--spread"), "{text}");
    let html = crate::html::render(&r, None);
    assert!(html.contains("id=\"endpoints\""));
    assert!(!html.contains("--spread"));
}
