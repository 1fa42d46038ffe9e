//! `stampede replay` against a PostgreSQL this test starts (issue 33): pgbench's TPC-B runs,
//! prepared, simple and extended, are captured in one window of the server's own logs (stderr,
//! csvlog and jsonlog at once, `log_min_duration_statement = 0`), and each form of the log is
//! replayed on a copy of the database as it was before the capture. Every replay must leave
//! the same balances and the same history rows (all but mtime) as the original runs, send
//! every captured statement, and the server's counters must agree with what was sent, kind by
//! kind, and with the statements the log holds. A parser that loses a statement, splits a
//! session wrong, mangles a parameter, or a replay that overtakes within a session or drops
//! an error's successor, fails here. The replay's time is never asserted against a bound the
//! machine could miss; only that a paced replay never ran ahead of its schedule.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{pg_target, stampede};
use serde_json::Value;
use testkit::{PerBinary, Pg};

/// The logs go to `log/capture{,.csv,.json}` under the data directory, and nothing is logged
/// until the capture's window opens.
static PG: PerBinary = PerBinary::new(&[&[
    ("logging_collector", "on"),
    ("log_destination", "'stderr,csvlog,jsonlog'"),
    ("log_directory", "'log'"),
    ("log_filename", "'capture'"),
    ("log_line_prefix", "'%m [%p] %q%u@%d '"),
    ("log_min_duration_statement", "-1"),
]]);

const END_MARK: &str = "stampede replay test: capture over";

/// The capture, made once: the logs' paths, and the state the runs left.
struct Captured {
    stderr: PathBuf,
    csv: PathBuf,
    json: PathBuf,
    after: State,
}

#[derive(Debug, PartialEq)]
struct State {
    accounts: String,
    tellers: String,
    branches: String,
    history: String,
}

fn state(pg: &Pg, db: &str) -> State {
    let md5 = |sql: &str| pg.psql_on(db, sql).trim().to_string();
    State {
        accounts: md5(
            "SELECT sum(abalance) || ' ' || md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)) \
             FROM pgbench_accounts",
        ),
        tellers: md5(
            "SELECT md5(string_agg(tid || ':' || tbalance, ',' ORDER BY tid)) FROM pgbench_tellers",
        ),
        branches: md5(
            "SELECT md5(string_agg(bid || ':' || bbalance, ',' ORDER BY bid)) FROM pgbench_branches",
        ),
        history: md5(
            "SELECT count(*) || ' ' || md5(string_agg(tid || ',' || bid || ',' || aid || ',' || delta, \
             ';' ORDER BY tid, bid, aid, delta)) FROM pgbench_history",
        ),
    }
}

fn wait_for_mark(files: &[&Path]) {
    let deadline = Instant::now() + Duration::from_secs(60);
    for f in files {
        loop {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            if text.contains(END_MARK) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} never logged the end mark",
                f.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// On database `locks`: session A updates row 1 and holds its transaction open; session B's
/// update of the same row waits for it, some 400 ms, until A commits. Replayed at the
/// captured pace, B waits for A again.
fn block_one_session_on_another(pg: &Pg) {
    use std::io::Write;
    use std::process::Stdio;
    let psql = |name: &str| {
        let mut c = pg.command("psql");
        c.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "locks"])
            .env("PGAPPNAME", name)
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        c.spawn().expect("psql runs")
    };
    let waiting = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while pg
            .psql_on(
                "postgres",
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'replay-b' \
                 AND wait_event_type = 'Lock'",
            )
            .trim()
            != want
        {
            assert!(Instant::now() < deadline, "session B never waited");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let mut a = psql("replay-a");
    let sa = a.stdin.as_mut().unwrap();
    writeln!(sa, "BEGIN;\nUPDATE t SET v = v + 1 WHERE id = 1;").unwrap();
    sa.flush().unwrap();
    // A holds the row once its update is idle in the transaction.
    let deadline = Instant::now() + Duration::from_secs(30);
    while pg
        .psql_on(
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'replay-a' \
             AND state = 'idle in transaction'",
        )
        .trim()
        != "1"
    {
        assert!(Instant::now() < deadline, "session A never held its row");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut b = psql("replay-b");
    let sb = b.stdin.as_mut().unwrap();
    writeln!(sb, "UPDATE t SET v = v * 10 WHERE id = 1;").unwrap();
    sb.flush().unwrap();
    drop(b.stdin.take());
    waiting("1");
    // The wait the replay must see again: long against the sampler's 50 ms.
    std::thread::sleep(Duration::from_millis(400));
    let mut sa = a.stdin.take().unwrap();
    writeln!(sa, "COMMIT;").unwrap();
    drop(sa);
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
}

/// On database `ordered`: session A sleeps 300 ms, then inserts row 1; only then session B
/// increments it (v = 2). Replayed as fast as each session allows, B's update comes first
/// and finds no row; with `--order strict` it waits for A's insert.
fn one_session_depends_on_another(pg: &Pg) {
    let run = |args: &[&str]| {
        let out = pg
            .command("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "ordered"])
            .args(args)
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "-c",
        "SELECT pg_sleep(0.3)",
        "-c",
        "INSERT INTO t VALUES (1, 1)",
    ]);
    run(&["-c", "UPDATE t SET v = v + 1 WHERE id = 1"]);
}

fn captured() -> &'static Captured {
    static C: OnceLock<Captured> = OnceLock::new();
    C.get_or_init(|| {
        let pg = PG.get();
        pg.psql_on("postgres", "CREATE DATABASE bench");
        pg.pgbench("bench", &["-i", "-s", "1", "-q"]);
        // The statement ledger's server side: pg_stat_statements in every copy.
        pg.psql_on("bench", "CREATE EXTENSION pg_stat_statements");
        // The database as it was before the capture: every replay starts from a copy of it.
        pg.psql_on("postgres", "CREATE DATABASE before_capture TEMPLATE bench");
        pg.psql_on("postgres", "CREATE DATABASE locks");
        pg.psql_on("locks", "CREATE TABLE t (id int PRIMARY KEY, v int)");
        pg.psql_on("locks", "INSERT INTO t VALUES (1, 1)");
        pg.psql_on("postgres", "CREATE DATABASE locks_before TEMPLATE locks");
        pg.psql_on("postgres", "CREATE DATABASE ordered");
        pg.psql_on("ordered", "CREATE TABLE t (id int PRIMARY KEY, v int)");
        pg.psql_on(
            "postgres",
            "CREATE DATABASE ordered_before TEMPLATE ordered",
        );
        let dir = PathBuf::from(pg.psql_on("postgres", "SHOW data_directory").trim()).join("log");
        for setting in [
            "log_min_duration_statement = 0",
            "log_connections = on",
            "log_disconnections = on",
        ] {
            pg.psql_on("postgres", &format!("ALTER SYSTEM SET {setting}"));
        }
        pg.psql_on("postgres", "SELECT pg_reload_conf()");
        // The window is open once a new session sees the setting.
        let deadline = Instant::now() + Duration::from_secs(30);
        while pg
            .psql_on("bench", "SHOW log_min_duration_statement")
            .trim()
            != "0"
        {
            assert!(Instant::now() < deadline, "the reload never took effect");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Paced (-R), as production is: a replay at the captured pace can keep up with it.
        for mode in ["prepared", "simple", "extended"] {
            pg.pgbench(
                "bench",
                &["-n", "-c", "3", "-t", "30", "-R", "300", "-M", mode],
            );
        }
        block_one_session_on_another(pg);
        one_session_depends_on_another(pg);
        // One failing statement in the capture, whose error the log records.
        let _ = pg
            .command("psql")
            .args(["-X", "-d", "bench", "-c", "SELECT 1/0"])
            .output();
        for setting in [
            "log_min_duration_statement",
            "log_connections",
            "log_disconnections",
        ] {
            pg.psql_on("postgres", &format!("ALTER SYSTEM RESET {setting}"));
        }
        pg.psql_on("postgres", &format!("SELECT '{END_MARK}'"));
        pg.psql_on("postgres", "SELECT pg_reload_conf()");
        let c = Captured {
            stderr: dir.join("capture"),
            csv: dir.join("capture.csv"),
            json: dir.join("capture.json"),
            after: state(pg, "bench"),
        };
        wait_for_mark(&[&c.stderr, &c.csv, &c.json]);
        c
    })
}

/// Replay `log` on a new copy `db` of the database before the capture; the result.
fn replay(log: &Path, db: &str, extra: &[&str]) -> Value {
    replay_from(log, ("bench", "before_capture"), db, extra)
}

/// Replay the sessions of database `from.0` in `log` on `db`, a new copy of `from.1`.
fn replay_from(log: &Path, from: (&str, &str), db: &str, extra: &[&str]) -> Value {
    replay_changed(log, from, db, &[], extra)
}

/// [`replay_from`], the copy changed by `setup` (statements run on it) first.
fn replay_changed(
    log: &Path,
    from: (&str, &str),
    db: &str,
    setup: &[&str],
    extra: &[&str],
) -> Value {
    let pg = PG.get();
    pg.psql_on("postgres", &format!("DROP DATABASE IF EXISTS {db}"));
    pg.psql_on(
        "postgres",
        &format!("CREATE DATABASE {db} TEMPLATE {}", from.1),
    );
    for sql in setup {
        pg.psql_on(db, sql);
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args: Vec<String> = vec!["replay".into(), log.display().to_string()];
    args.extend(pg_target(pg, db));
    args.extend(
        [
            "--only-database",
            from.0,
            "--map-db",
            &format!("{}={db}", from.0),
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string()),
    );
    args.extend(["--json".into(), json.display().to_string()]);
    let run = stampede(&args);
    // The capture's `SELECT 1/0` fails again on replay: a failed statement is no failed run.
    assert_eq!(run.code, 0, "{args:?}\n{}\n{}", run.stdout, run.stderr);
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

/// What a replay must have done, whatever the log's form.
fn replayed_like_the_capture(v: &Value, db: &str) {
    let c = captured();
    assert_eq!(
        state(PG.get(), db),
        c.after,
        "{db} differs from the captured runs' end"
    );
    let r = &v["replay"];
    let parsed = &r["parsed"]["statements"];
    let n = |k: &str| parsed[k].as_u64().unwrap_or(0);
    // pgbench: 3 runs x 3 clients x 30 transactions of 7 statements (its main session's
    // look at the tables besides), and psql's `SELECT 1/0`.
    assert_eq!(n("update"), 3 * 3 * 30 * 3, "{r}");
    assert_eq!(n("insert"), 3 * 3 * 30, "{r}");
    assert_eq!((n("begin"), n("commit")), (3 * 3 * 30, 3 * 3 * 30), "{r}");
    assert!(n("select") > 3 * 3 * 30, "{r}");
    assert_eq!(r["statements"], n("simple") + n("extended"), "{r}");
    assert_eq!(
        n("extended"),
        2 * 3 * 30 * 7,
        "the prepared and extended runs: {r}"
    );
    assert_eq!(r["sessions"], r["parsed"]["sessions"], "{r}");
    assert!(
        r["sessions"].as_u64().unwrap() > 3 * 3,
        "pgbench's clients and psql: {r}"
    );
    assert_eq!(r["failed"], 1, "{r}");
    let errs = r["errors"].as_array().unwrap();
    assert_eq!(errs.len(), 1, "{r}");
    // A stderr log without %e records the error, not its SQLSTATE.
    let logged = if r["format"] == "stderr" {
        "unnamed"
    } else {
        "22012"
    };
    assert_eq!(errs[0]["log_errors"][logged], 1, "{r}");
    assert_eq!(errs[0]["replay_errors"]["22012"], 1, "{r}");
    // What was sent agrees with the log, kind by kind, and the server's counters with it.
    // Both count completed statements: the failed `SELECT 1/0` is in neither.
    let sent = [
        ("update", n("update")),
        ("insert", n("insert")),
        ("select", n("select") - 1),
    ];
    common::replay_checked(v, &sent);
}

#[test]
fn a_csvlog_capture_replays_to_the_same_balances_and_history() {
    let v = replay(&captured().csv.clone(), "r_csv", &["--speed", "max"]);
    replayed_like_the_capture(&v, "r_csv");
    assert_eq!(v["replay"]["format"], "csvlog");
}

#[test]
fn a_jsonlog_capture_replays_to_the_same_balances_and_history() {
    let v = replay(&captured().json.clone(), "r_json", &["--speed", "max"]);
    replayed_like_the_capture(&v, "r_json");
    assert_eq!(v["replay"]["format"], "jsonlog");
}

/// At the captured pace: the replay never runs ahead of the capture's own time, and each
/// statement's lateness is split between the server and the client.
#[test]
fn a_stderr_capture_replays_at_the_captured_pace() {
    let v = replay(&captured().stderr.clone(), "r_stderr", &["--speed", "1"]);
    replayed_like_the_capture(&v, "r_stderr");
    let r = &v["replay"];
    assert_eq!(r["format"], "stderr");
    let (captured_s, replayed_s) = (
        r["captured_s"].as_f64().unwrap(),
        r["replayed_s"].as_f64().unwrap(),
    );
    assert!(captured_s > 0.0, "{r}");
    // Statement k is sent no earlier than its captured offset, so the last ends after the
    // capture's last start.
    assert!(
        replayed_s >= captured_s * 0.95,
        "ran ahead of the capture: {r}"
    );
    let b = &r["behind"];
    assert_eq!(b["due"], r["statements"], "{r}");
    // Any time beyond the capture's is lateness the replay accounts for: its last statement
    // was late by at most the largest lateness of either kind.
    let late_s =
        (b["max_server_ms"].as_f64().unwrap() + b["max_client_ms"].as_f64().unwrap()) / 1e3;
    assert!(
        replayed_s <= captured_s * 1.05 + late_s,
        "{replayed_s} s against a capture of {captured_s} s with at most {late_s} s late: {r}"
    );
    println!(
        "speed 1: captured {captured_s:.3} s, replayed {replayed_s:.3} s ({:+.1}%), behind: {}",
        (replayed_s / captured_s - 1.0) * 100.0,
        r["behind"]
    );
}

/// A replay file holds what the log held: parsed once, replayed like the log.
#[test]
fn a_parsed_replay_file_replays_like_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.replay");
    let log = captured().csv.display().to_string();
    let run = stampede(&[
        "replay",
        "parse",
        &log,
        "-o",
        &file.display().to_string(),
        "--only-database",
        "bench",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("sessions: "), "{}", run.stdout);
    let v = replay(&file, "r_file", &["--speed", "max"]);
    replayed_like_the_capture(&v, "r_file");
    assert_eq!(v["replay"]["format"], "replay");
}

/// Sessions that blocked each other in the capture block each other again on replay, and
/// the result names both statements.
#[test]
fn a_replay_reports_the_lock_waits_between_its_sessions() {
    let v = replay_from(
        &captured().csv.clone(),
        ("locks", "locks_before"),
        "r_locks",
        &[],
    );
    let r = &v["replay"];
    assert_eq!(
        (r["sessions"].as_u64(), r["failed"].as_u64()),
        (Some(2), Some(0)),
        "{r}"
    );
    assert_eq!(
        PG.get().psql_on("r_locks", "SELECT v FROM t").trim(),
        "20",
        "{r}"
    );
    let waits = r["lock_waits"].as_array().unwrap();
    let w = (waits.iter())
        .find(|w| w["waiting"] == "UPDATE t SET v = v * ? WHERE id = ?")
        .unwrap_or_else(|| panic!("no lock wait of session B's update: {r}"));
    assert_eq!(w["blocking"], "UPDATE t SET v = v + ? WHERE id = ?", "{w}");
    assert!(w["samples"].as_u64().unwrap() >= 1, "{w}");
}

/// `--order strict` keeps what the capture's sessions did to each other: B's update of the
/// row A inserted (A slept first) changes it as in the capture, and the result says how
/// long statements were held. Without it, the same replay lets B overtake (the test shows
/// the log needs the order).
#[test]
fn strict_order_keeps_a_statement_behind_the_ones_it_depends_on() {
    let log = captured().stderr.clone();
    let from = ("ordered", "ordered_before");
    let v = replay_from(
        &log,
        from,
        "r_strict",
        &["--speed", "max", "--order", "strict"],
    );
    let r = &v["replay"];
    assert_eq!(
        (
            r["sessions"].as_u64(),
            r["failed"].as_u64(),
            r["order"].as_str()
        ),
        (Some(2), Some(0), Some("strict")),
        "{r}"
    );
    let pg = PG.get();
    assert_eq!(pg.psql_on("r_strict", "SELECT v FROM t").trim(), "2", "{r}");
    let b = &r["behind"];
    assert!(
        b["held"].as_u64().unwrap() >= 1 && b["held_s"].as_f64().unwrap() > 0.0,
        "{b}"
    );
    replay_from(&log, from, "r_loose", &["--speed", "max"]);
    assert_eq!(
        pg.psql_on("r_loose", "SELECT v FROM t").trim(),
        "1",
        "without --order strict, B's update should overtake A's insert"
    );
}

#[test]
fn bad_replay_command_lines_are_refused_before_connecting() {
    let log = captured().csv.display().to_string();
    for (args, says) in [
        (
            vec!["replay", &log, "-c", "4"],
            "-c does not apply to a replay",
        ),
        (vec!["replay", &log, "--speed", "fast"], "--speed \"fast\""),
        (
            vec!["replay", &log, "--map-db", "bench"],
            "--map-db \"bench\" is not FROM=TO",
        ),
        (
            vec!["replay", "/nonexistent/capture.csv"],
            "/nonexistent/capture.csv",
        ),
        (
            vec!["replay", &log, "--only-database", "nosuchdb"],
            "no session left to replay",
        ),
        (
            vec!["replay", &log, "--begin", "soon"],
            "--begin \"soon\" is not a time",
        ),
        (
            vec![
                "replay",
                &log,
                "--order",
                "strict",
                "--fleet",
                "r",
                "--fleet-size",
                "2",
                "--fleet-index",
                "0",
            ],
            "--order strict cannot be kept by a fleet",
        ),
    ] {
        // A target on a port nothing listens on: a refusal must come before connecting.
        let args: Vec<&str> = args
            .into_iter()
            .chain(["-h", "/nonexistent", "-d", "x"])
            .collect();
        let run = stampede(&args);
        assert_eq!(run.code, 64, "{args:?}\n{}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let run = stampede(&["replay", &log]);
    assert_eq!(run.code, 64, "{}", run.stderr);
    assert!(run.stderr.contains("give the target"), "{}", run.stderr);
}

/// Run `stampede ARGS` until it says on standard error that `ready`, then `meanwhile`, then
/// wait for it: its exit code, stdout and stderr.
pub fn while_running(
    args: &[String],
    ready: &str,
    meanwhile: impl FnOnce(),
) -> (i32, String, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = common::stampede_cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
        if line.contains(ready) {
            meanwhile();
            break;
        }
    }
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    said.push_str(&rest);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        said,
    )
}

/// `--capture` records a window of the server's own workload into a replay file, with the
/// logging it needed put back afterwards; replayed on a copy of the database as it was, it
/// leaves what the recorded run left.
#[test]
fn capture_records_a_window_of_the_server_s_workload() {
    // The fixture's window (the same settings) is over before this one opens.
    let _ = captured();
    let pg = PG.get();
    pg.psql_on("postgres", "DROP DATABASE IF EXISTS live");
    pg.psql_on("postgres", "CREATE DATABASE live TEMPLATE before_capture");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.replay");
    let mut args: Vec<String> = vec!["replay".into(), "--capture".into(), "3".into()];
    args.extend(["-o".into(), file.display().to_string()]);
    args.extend(pg_target(pg, "postgres"));
    let (code, out, err) = while_running(&args, "capturing the server's statements", || {
        pg.pgbench("live", &["-n", "-c", "2", "-t", "20", "-M", "prepared"]);
    });
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("recorded 3.0 s into"), "{out}");
    // Put back: a new session sees the settings the server had, and ALTER SYSTEM left none.
    for (name, was) in [
        ("log_min_duration_statement", "-1"),
        ("log_connections", "off"),
        ("log_destination", "stderr,csvlog,jsonlog"),
    ] {
        assert_eq!(
            pg.psql_on("postgres", &format!("SHOW {name}")).trim(),
            was,
            "{name}"
        );
    }
    let auto = pg.psql_on(
        "postgres",
        "SELECT count(*) FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'",
    );
    assert_eq!(auto.trim(), "0", "ALTER SYSTEM settings left behind");
    let after = state(pg, "live");
    let v = replay_from(
        &file,
        ("live", "before_capture"),
        "r_live",
        &["--speed", "max"],
    );
    assert_eq!(state(pg, "r_live"), after, "{}", v["replay"]);
    assert_eq!(v["replay"]["parsed"]["statements"]["update"], 2 * 20 * 3);
}

/// `compare` of two replays names the statements a change made slower (the copy without
/// pgbench_accounts' primary key scans the table for each account) and none against
/// itself, and `--against-log` compares a replay with the durations its log recorded.
#[test]
fn compare_names_the_statements_a_change_made_slower() {
    let log = captured().csv.clone();
    let a = replay_from(
        &log,
        ("bench", "before_capture"),
        "r_cmp_a",
        &["--speed", "max"],
    );
    let b = replay_changed(
        &log,
        ("bench", "before_capture"),
        "r_cmp_b",
        &["ALTER TABLE pgbench_accounts DROP CONSTRAINT pgbench_accounts_pkey"],
        &["--speed", "max"],
    );
    let dir = tempfile::tempdir().unwrap();
    let (ja, jb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&ja, a.to_string()).unwrap();
    std::fs::write(&jb, b.to_string()).unwrap();
    let (ja, jb) = (ja.display().to_string(), jb.display().to_string());
    let run = stampede(&["compare", &ja, &jb]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The statements on pgbench_accounts are slower; at --speed max the others wait behind
    // them for the tellers' and branches' locks, so they may be slower too.
    for sql in [
        "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
        "SELECT abalance FROM pgbench_accounts WHERE aid = ?",
    ] {
        let mut lines = run.stdout.lines();
        let verdict = lines.find(|l| l.trim_end().ends_with(sql));
        assert!(
            verdict.is_some_and(|l| l.trim_start().starts_with("slower")),
            "{sql} is not named slower:\n{}",
            run.stdout
        );
    }
    let same = stampede(&["compare", &ja, &ja]);
    assert!(
        same.stdout.contains("0 slower, 0 faster"),
        "a replay against itself:\n{}",
        same.stdout
    );
    let run = stampede(&["compare", &ja, "--against-log"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("per statement"), "{}", run.stdout);
}

/// A fleet of two processes splits the capture's sessions between them, each by its index;
/// together they replay every statement once, and the merged result says so.
#[test]
fn a_fleet_replays_each_session_once() {
    use common::fleet;
    let c = captured();
    let pg = PG.get();
    pg.psql_on("postgres", "DROP DATABASE IF EXISTS r_fleet");
    pg.psql_on(
        "postgres",
        "CREATE DATABASE r_fleet TEMPLATE before_capture",
    );
    let dir = tempfile::tempdir().unwrap();
    let target = pg_target(pg, "r_fleet");
    let log = c.csv.display().to_string();
    let jsons: Vec<String> = (0..2)
        .map(|i| dir.path().join(format!("{i}.json")).display().to_string())
        .collect();
    let kids: Vec<_> = (0..2)
        .map(|i| {
            let index = i.to_string();
            let mut args: Vec<&str> = vec!["replay", &log, "--speed", "max"];
            args.extend(["--only-database", "bench", "--map-db", "bench=r_fleet"]);
            args.extend(["--fleet", "replayers", "--fleet-size", "2", "--fleet-index"]);
            args.push(&index);
            args.extend(["--fleet-timeout", "120", "--json", &jsons[i]]);
            args.extend(target.iter().map(String::as_str));
            fleet::start(&args)
        })
        .collect();
    let mut sessions = 0;
    for k in kids {
        let (code, out, err) = fleet::finish(k);
        assert_eq!(code, 0, "{out}\n{err}");
    }
    for j in &jsons {
        let v: Value = serde_json::from_slice(&std::fs::read(j).unwrap()).unwrap();
        let s = v["replay"]["sessions"].as_u64().unwrap();
        assert!(s > 0, "a process replayed no session: {}", v["replay"]);
        sessions += s;
    }
    let (merged, _) = fleet::fleet_report("replayers", &dir.path().join("m.json"), &target);
    let r = merged
        .sections
        .get("replay")
        .expect("the merged replay section");
    assert_eq!(r["sessions"].as_u64(), Some(sessions));
    assert_eq!(r["sessions"], r["parsed"]["sessions"], "{r}");
    assert_eq!(r["failed"], 1, "{r}");
    assert_eq!(state(pg, "r_fleet"), c.after);
}
