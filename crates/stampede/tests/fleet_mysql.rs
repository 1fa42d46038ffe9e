//! Fleets on MariaDB: three `stampede run --fleet` processes on this machine against one
//! server the tests start (the PostgreSQL side is `fleet.rs`).
//!
//! - They start together by the server's clock: each transaction inserts a row stamped with
//!   the server's `NOW(6)`, and each process's first row is within 50 ms of the others'.
//! - The merged result (`stampede fleet report`) counts the rows the server holds, the sum of
//!   the three results, and exactly the server's `Com_commit` delta (the fleet's commit check
//!   passes; the fleet's own bookkeeping costs no COMMIT there).
//! - A fleet whose transactions are autocommitted statements gets an inconclusive check that
//!   says why, as a single MySQL run does; so does a fleet during which a session that is not
//!   the fleet's committed (the counter is the whole server's).
//! - `init oltp` split across three processes loads what one process loads: CHECKSUM TABLE,
//!   SHOW CREATE TABLE (keys, indexes, AUTO_INCREMENT) equal; sysbench's oltp_read_write then
//!   runs on them as a fleet, its COMMITs matching `Com_commit`.
//! - A process killed mid-run (its session gone from PROCESSLIST): process 0 names it as lost,
//!   merges the others, and the commit check says why it cannot be exact.
//! - On a 2-node Galera cluster given as one target, the fleet's commit check sums `Com_commit`
//!   over the nodes, each of which counts its own clients' COMMITs.
//! - A MySQL fleet's Kubernetes manifest passes the password as MYSQL_PWD.
//!
//! `Com_commit` is the whole server's, and the fleet waits until it is the server's only
//! client before its last snapshot: the tests of this binary take turns on the shared server.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use common::fleet::{
    finish, fleet_report, in_fleet, kill_2_and_check_the_others, load_one_and_three, read,
    spread_ms, start,
};
use testkit::{Galera, MariaDb};

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn url(db: &str) -> String {
    MariaDb::shared().tcp_url("root", None, db)
}

/// stampede's target flags for `url`.
fn target(url: &str) -> Vec<String> {
    vec!["-d".into(), url.into()]
}

/// The probe script: each transaction inserts a row stamped by the server.
const PROBE: &str =
    "BEGIN;\nINSERT INTO fleet_probe (client, at) VALUES (:client_id, NOW(6));\nCOMMIT;\n";

/// A fresh database `db` on the shared server with the probe script's table.
fn probe_database(db: &str) -> &'static MariaDb {
    let m = MariaDb::shared();
    m.fresh_database(db);
    m.sql(&format!(
        "CREATE TABLE {db}.fleet_probe (client int, at datetime(6))"
    ));
    m
}

/// One value of `sql` run in `db` by the mariadb client.
fn value(db: &str, sql: &str) -> String {
    MariaDb::shared()
        .sql(&format!("USE {db}; {sql}"))
        .trim()
        .to_string()
}

fn spawn(
    target: &str,
    fleet: &str,
    index: u32,
    script: &Path,
    dir: &Path,
    extra: &[&str],
) -> Child {
    common::fleet::spawn(script, fleet, index, dir, extra, &self::target(target))
}

/// Three processes of `script`, 40 transactions each ([`common::fleet::three`]).
fn three(target: &str, fleet: &str, script: &str, dir: &Path) -> Vec<(i32, String, String)> {
    let p = dir.join("probe.sql");
    std::fs::write(&p, script).unwrap();
    common::fleet::three(|i| spawn(target, fleet, i, &p, dir, &["-t", "40"]))
}

/// `stampede fleet report NAME --forget --json PATH` on `url`.
fn fleet_report_on(url: &str, fleet: &str, path: &Path) -> (report::RunResult, String) {
    fleet_report(fleet, path, &target(url))
}

/// The fleet's commit check passed: the server's COMMITs are the 240 transactions, the fleet's
/// bookkeeping costs none.
fn assert_commits_are_the_transactions(merged: &report::RunResult) {
    let f = merged.fleet.as_ref().unwrap();
    let c = f.commit_check.as_ref().expect("the fleet's commit check");
    assert_eq!(c.status, report::CheckStatus::Passed, "{}", c.detail);
    assert!(
        c.detail
            .starts_with("server Com_commit delta 240, processes' commits 240 ("),
        "{}",
        c.detail
    );
}

#[test]
fn three_processes_on_mariadb_start_together_and_match_com_commit() {
    let _turn = turn();
    probe_database("fleet_three");
    let dir = tempfile::tempdir().unwrap();
    let outs = three(&url("fleet_three"), "three", PROBE, dir.path());
    assert!(
        outs[0].1.contains("fleet three: the merged result"),
        "{}",
        outs[0].1
    );

    // A common start on the server's clock: each process's first row.
    let firsts = value(
        "fleet_three",
        "SELECT CAST(UNIX_TIMESTAMP(MIN(at)) * 1000000 AS SIGNED) FROM fleet_probe \
         GROUP BY client DIV 2 ORDER BY client DIV 2",
    );
    let starts: Vec<f64> = firsts.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(starts.len(), 3, "{firsts}");
    let spread_ms = spread_ms(&starts);
    assert!(spread_ms < 50.0, "first transactions {spread_ms} ms apart");
    // Global client ids: 0..5, 40 transactions each.
    let per_client = value(
        "fleet_three",
        "SELECT client, COUNT(*) FROM fleet_probe GROUP BY client ORDER BY client",
    );
    assert_eq!(per_client, "0\t40\n1\t40\n2\t40\n3\t40\n4\t40\n5\t40");

    let (merged, text) = fleet_report_on(
        &url("fleet_three"),
        "three",
        &dir.path().join("merged.json"),
    );
    let rows: u64 = value("fleet_three", "SELECT COUNT(*) FROM fleet_probe")
        .parse()
        .unwrap();
    let sum: u64 = (0..3)
        .map(|i| read(&dir.path().join(format!("{i}.json"))))
        .map(|r| r.total.total().committed())
        .sum();
    assert_eq!(
        (rows, sum, merged.total.total().committed()),
        (240, 240, 240)
    );
    let f = merged.fleet.as_ref().unwrap();
    assert_eq!(f.processes.len(), 3);
    eprintln!("{text}");
    eprintln!("first transactions' spread: {spread_ms:.3} ms");
    assert_commits_are_the_transactions(&merged);
    // --forget removed the fleet's table.
    let left = value(
        "fleet_three",
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'fleet_three' \
         AND TABLE_NAME = 'stampede_fleet'",
    );
    assert_eq!(left, "0");
}

#[test]
fn a_session_not_the_fleets_committing_meanwhile_makes_the_check_inconclusive() {
    let _turn = turn();
    let m = MariaDb::shared();
    m.fresh_database("fleet_other");
    m.sql(
        "CREATE TABLE fleet_other.fleet_probe (client int, at datetime(6)); \
         CREATE TABLE fleet_other.elsewhere (a int)",
    );
    // Someone else's session, connected before the fleet starts, commits once after S0.
    let mut other = Command::new("mariadb")
        .arg("--no-defaults")
        .arg(format!("--socket={}", m.socket().display()))
        .args(["-uroot", "--batch", "fleet_other"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the mariadb client");
    let others = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() \
                  AND COMMAND <> 'Daemon' AND USER <> 'system user'";
    while value("fleet_other", others) == "0" {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("probe.sql");
    std::fs::write(&p, PROBE).unwrap();
    let target = url("fleet_other");
    let kids: Vec<Child> = (0..3)
        .map(|i| spawn(&target, "other", i, &p, dir.path(), &["-t", "40"]))
        .collect();
    // After S0: the fleet's start is set (S0 is read just before).
    let started = "SELECT COUNT(*) FROM stampede_fleet WHERE fleet = 'other' AND idx = -1 \
                   AND start_us IS NOT NULL";
    while MariaDb::shared()
        .try_sql(&format!("USE fleet_other; {started}"))
        .map_or(true, |v| v.trim() == "0")
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    {
        use std::io::Write;
        let mut stdin = other.stdin.take().unwrap();
        writeln!(stdin, "BEGIN; INSERT INTO elsewhere VALUES (1); COMMIT;").unwrap();
    }
    other.wait().unwrap();
    let outs: Vec<_> = kids.into_iter().map(finish).collect();
    for (code, out, err) in &outs {
        assert_eq!(*code, 0, "stdout:\n{out}\nstderr:\n{err}");
    }
    assert_eq!(value("fleet_other", "SELECT COUNT(*) FROM elsewhere"), "1");
    let p0 = &outs[0].1;
    assert!(
        p0.contains(
            "fleet commit count: SKIPPED (inconclusive: server Com_commit delta 241, \
             processes' commits 240 ("
        ),
        "{p0}"
    );
    assert!(
        p0.contains("other sessions were connected, whose COMMITs count too"),
        "{p0}"
    );
    m.sql("USE fleet_other; DROP TABLE stampede_fleet");
}

#[test]
fn a_fleet_of_autocommitted_statements_on_mariadb_is_inconclusive_and_says_why() {
    let _turn = turn();
    probe_database("fleet_auto");
    let dir = tempfile::tempdir().unwrap();
    let outs = three(
        &url("fleet_auto"),
        "auto",
        "INSERT INTO fleet_probe (client, at) VALUES (:client_id, NOW(6));\n",
        dir.path(),
    );
    assert!(
        outs[0].1.contains(
            "fleet commit count: SKIPPED (inconclusive: process 0: its transactions are \
             autocommitted statements, which MySQL's Com_commit does not count (server \
             Com_commit delta 0)"
        ),
        "{}",
        outs[0].1
    );
    let (merged, _) = fleet_report_on(&url("fleet_auto"), "auto", &dir.path().join("merged.json"));
    assert_eq!(merged.total.total().committed(), 240);
    assert_eq!(
        value("fleet_auto", "SELECT COUNT(*) FROM fleet_probe"),
        "240"
    );
}

#[test]
fn a_process_killed_mid_run_on_mariadb_is_named_and_the_others_merged() {
    let _turn = turn();
    let m = probe_database("fleet_kill");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("probe.sql");
    std::fs::write(&p, PROBE).unwrap();
    let rate = ["-T", "4", "-R", "300"];
    let target = url("fleet_kill");
    // Process 2 is killed once its clients (ids 4 and 5) have committed.
    kill_2_and_check_the_others(
        |i| spawn(&target, "kill", i, &p, dir.path(), &rate),
        || {
            value(
                "fleet_kill",
                "SELECT COUNT(*) FROM fleet_probe WHERE client >= 4",
            ) != "0"
        },
    );
    m.sql("USE fleet_kill; DROP TABLE stampede_fleet");
}

#[test]
fn a_fleet_on_a_galera_cluster_counts_com_commit_over_its_nodes() {
    let _turn = turn();
    let g = Galera::start(2);
    g.sql(
        0,
        "CREATE DATABASE fleet_gal; CREATE TABLE fleet_gal.fleet_probe \
         (id int AUTO_INCREMENT PRIMARY KEY, client int, at datetime(6))",
    );
    let target = format!(
        "mysql://root@127.0.0.1:{},127.0.0.1:{}/fleet_gal",
        g.port(0),
        g.port(1)
    );
    let dir = tempfile::tempdir().unwrap();
    let outs = three(&target, "gal", PROBE, dir.path());
    let (merged, text) = fleet_report_on(&target, "gal", &dir.path().join("merged.json"));
    eprintln!("{text}");
    assert_eq!(merged.total.total().committed(), 240, "{}", outs[0].1);
    // Each process's two clients went one to each node: both counters moved.
    let on: Vec<u64> = merged.endpoints.iter().map(|e| e.transactions).collect();
    assert_eq!(on, [120, 120], "{text}");
    assert_commits_are_the_transactions(&merged);
    let rows = g.sql(
        1,
        "SET SESSION wsrep_sync_wait=15; SELECT COUNT(*) FROM fleet_gal.fleet_probe",
    );
    assert_eq!(rows.trim(), "240");
}

/// CHECKSUM TABLE and SHOW CREATE TABLE of every sbtest table of `db`.
fn oltp_tables(db: &str, tables: u32) -> Vec<String> {
    (1..=tables)
        .flat_map(|t| {
            [
                value(db, &format!("CHECKSUM TABLE sbtest{t}")).replace(&format!("{db}."), ""),
                value(db, &format!("SHOW CREATE TABLE sbtest{t}")),
                value(db, &format!("SELECT COUNT(*) FROM sbtest{t}")),
            ]
        })
        .collect()
}

#[test]
fn init_oltp_on_mariadb_split_across_three_processes_loads_what_one_loads() {
    let _turn = turn();
    let m = MariaDb::shared();
    m.fresh_database("fleet_init_one");
    m.fresh_database("fleet_init_three");
    let init = ["init", "oltp", "--tables", "2", "--table-size", "3000"];
    load_one_and_three(
        &init,
        &target(&url("fleet_init_one")),
        &target(&url("fleet_init_three")),
    );
    let one = oltp_tables("fleet_init_one", 2);
    assert_eq!(one[2], "3000");
    assert!(one[1].contains("KEY `k_1`"), "{one:?}");
    assert!(one[1].contains("AUTO_INCREMENT=3001"), "{one:?}");
    assert_eq!(oltp_tables("fleet_init_three", 2), one);
    let left = value(
        "fleet_init_three",
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'stampede_fleet' \
         AND TABLE_SCHEMA = 'fleet_init_three'",
    );
    assert_eq!(left, "0", "the fleet's table is removed after the load");

    // sysbench's oltp_read_write on those tables as a fleet: one COMMIT per transaction.
    let rw = [
        "run",
        "oltp_read_write",
        "--tables",
        "2",
        "--table-size",
        "3000",
    ];
    let mut args = in_fleet(&rw, "rw");
    let url = url("fleet_init_three");
    args.extend(["-c", "2", "-t", "20", "--no-observe", "-d", &url]);
    let kids: Vec<Child> = (0..3).map(|_| start(&args)).collect();
    let outs: Vec<_> = kids.into_iter().map(finish).collect();
    for (code, out, err) in &outs {
        assert_eq!(*code, 0, "{out}{err}");
    }
    let p0 = (outs.iter())
        .find(|o| o.1.contains("fleet rw: the merged result"))
        .expect("process 0 prints the merged result");
    assert!(
        p0.1.contains(
            "fleet commit count: PASSED (server Com_commit delta 120, processes' commits 120"
        ),
        "{}",
        p0.1
    );
    m.sql("USE fleet_init_three; DROP TABLE stampede_fleet");
}

#[test]
fn the_manifest_of_a_mysql_fleet_takes_the_password_as_mysql_pwd() {
    let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args(["fleet", "manifest", "--workers", "3", "--name", "my"])
        .args([
            "--",
            "run",
            "oltp_read_write",
            "-d",
            "mysql://bench@db.internal/sb",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let env = &j["spec"]["template"]["spec"]["containers"][0]["env"][0];
    assert_eq!(env["name"], "MYSQL_PWD");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], "stampede-db");
}
