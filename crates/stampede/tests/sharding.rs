//! Sharded layouts through the binary: three PostgreSQL servers started here (a coordinator and
//! two shards, shared by the tests, one database per test). `init tpcb --layout fdw` loads each
//! shard directly and the shards' rows add up; tpcb-like and tpcb-sharded run through the
//! coordinator and the TPC-B invariant holds across the shards; the routing check calls a
//! statement with the shard key single-shard and one without it all-shards, and
//! `--require-single-shard` refuses tpcb-like, naming its statement. `init oltp --layout fdw`
//! loads and oltp_point_select runs. Citus' and Limitless' DDL is checked from `--dry-run`
//! (no server here runs them) and refused on plain PostgreSQL with the reason.

use std::process::{Command, Output};

use testkit::{PerBinary, Pg};

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

static COORDINATOR: PerBinary = PerBinary::new(&[]);
static SHARD0: PerBinary = PerBinary::new(&[]);
static SHARD1: PerBinary = PerBinary::new(&[]);

fn servers() -> [&'static Pg; 3] {
    [COORDINATOR.get(), SHARD0.get(), SHARD1.get()]
}

/// [`Pg::psql_on`], trimmed.
fn psql(pg: &Pg, db: &str, sql: &str) -> String {
    pg.psql_on(db, sql).trim().to_string()
}

/// A fresh database `db` on each server.
fn databases(db: &str) -> [&'static Pg; 3] {
    let s = servers();
    for pg in s {
        pg.psql(&format!("drop database if exists {db}"));
        pg.psql(&format!("create database {db}"));
    }
    s
}

fn stampede(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(out: &Output) -> String {
    testkit::ok_text(out, "stampede")
}

fn init_fdw(db: &str, what: &[&str]) -> String {
    let [c, s0, s1] = servers();
    let mut args = vec!["init"];
    args.extend_from_slice(what);
    let (t, a, b) = (c.conninfo(db), s0.conninfo(db), s1.conninfo(db));
    args.extend([
        "--layout", "fdw", "--shard", &a, "--shard", &b, "-d", &t, "-q",
    ]);
    ok(&stampede(&args))
}

fn count(pg: &Pg, db: &str, table: &str) -> i64 {
    psql(pg, db, &format!("select count(*) from {table}"))
        .parse()
        .unwrap()
}

#[test]
fn fdw_tpcb_loads_each_shard_runs_through_the_coordinator_and_keeps_the_invariant() {
    let db = "fdw_tpcb";
    let [c, s0, s1] = databases(db);
    init_fdw(db, &["tpcb", "-s", "4"]);

    // Each shard holds its own branches' rows; together they are the whole scale.
    let mut accounts = 0;
    for (i, s) in [s0, s1].into_iter().enumerate() {
        let branches = count(s, db, &format!("pgbench_branches_shard{i}"));
        let n = count(s, db, &format!("pgbench_accounts_shard{i}"));
        assert!(
            branches > 0 && n == branches * 100_000,
            "shard {i}: {branches} branches, {n} accounts"
        );
        assert_eq!(
            count(s, db, &format!("pgbench_tellers_shard{i}")),
            branches * 10
        );
        accounts += n;
    }
    assert_eq!(accounts, 400_000);
    assert_eq!(
        count(c, db, "pgbench_accounts"),
        400_000,
        "the coordinator sees every shard"
    );
    // Every account is on the shard of its branch (the key the partitions hash).
    assert_eq!(
        psql(
            c,
            db,
            "select count(*) from pgbench_accounts a join pgbench_branches b using (bid)"
        ),
        "400000"
    );

    let target = c.conninfo(db);
    let dir = tempfile::tempdir().unwrap();
    let mut processed = 0;
    for (workload, extra) in [
        ("tpcb-like", vec![]),
        // -n: the history stays, and the balances' sums equal its deltas'.
        ("tpcb-sharded", vec!["--cross-shard", "30", "-n"]),
    ] {
        let json = dir.path().join(format!("{workload}.json"));
        let mut args = vec![
            "run",
            workload,
            "-c",
            "2",
            "-t",
            "40",
            "--no-observe",
            "-d",
            &target,
            "--json",
        ];
        args.push(json.to_str().unwrap());
        args.extend(extra);
        let text = ok(&stampede(&args));
        // Transactions can fail: postgres_fdw's shard transactions are REPEATABLE READ, so two
        // clients updating one branch row conflict (serialization failures, not retried).
        processed += (text.lines())
            .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
            .and_then(|r| r.split('/').next())
            .and_then(|n| n.parse::<i64>().ok())
            .expect(&text);
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let checks = v["checks"].as_array().unwrap();
        let invariant = checks
            .iter()
            .find(|c| c["name"] == "TPC-B invariant")
            .expect("{text}");
        assert_eq!(
            invariant["status"], "passed",
            "{workload}: {invariant}\n{text}"
        );
        // The coordinator commits each transaction once, whatever the shards did.
        let commits = checks.iter().find(|c| c["name"] == "commit count").unwrap();
        assert_eq!(commits["status"], "passed", "{workload}: {commits}\n{text}");
        assert!(text.contains("routing check"), "{text}");
    }
    // The invariant read on the shards themselves: each committed transaction a history row on
    // the shard of its branch.
    let sums: Vec<i64> = ["abalance", "tbalance", "bbalance", "delta"]
        .iter()
        .zip(["accounts", "tellers", "branches", "history"])
        .map(|(col, t)| {
            [s0, s1]
                .iter()
                .enumerate()
                .map(|(i, s)| -> i64 {
                    psql(
                        s,
                        db,
                        &format!("select coalesce(sum({col}), 0) from pgbench_{t}_shard{i}"),
                    )
                    .parse()
                    .unwrap()
                })
                .sum()
        })
        .collect();
    assert!(sums.iter().all(|s| *s == sums[0]), "{sums:?}");
    let history: i64 = (0..2)
        .map(|i| count([s0, s1][i], db, &format!("pgbench_history_shard{i}")))
        .sum();
    assert!(processed > 0);
    assert_eq!(history, processed);
}

#[test]
fn the_routing_check_tells_single_shard_statements_from_scattering_ones() {
    let db = "fdw_routing";
    let [c, ..] = databases(db);
    init_fdw(db, &["tpcb", "-s", "2", "--no-vacuum"]);
    let target = c.conninfo(db);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let json_flags = ["--json", json.to_str().unwrap()];
    // One client, `txns` transactions, no vacuum, no observer, on the coordinator.
    let run = |what: &[&str], txns: &str, more: &[&str]| {
        let once = ["-c", "1", "-t", txns, "-n", "--no-observe"];
        stampede(&[&["run"][..], what, &once, more, &["-d", &target]].concat())
    };
    let single = ["--require-single-shard"];
    let out = ok(&run(
        &["tpcb-sharded"],
        "5",
        &[&single[..], &json_flags].concat(),
    ));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let routing = v["routing"].as_array().expect("a routing section");
    assert_eq!(routing.len(), 5, "{out}");
    for r in routing {
        assert_eq!(r["single_shard"], true, "{r}");
        assert_eq!(r["shards_touched"], 1, "{r}");
        assert_eq!(r["shards_total"], 2, "{r}");
    }
    assert!(routing.iter().any(|r| r["statement"]
        .as_str()
        .unwrap()
        .starts_with("INSERT INTO pgbench_history")));

    // The account is within the branch; with --cross-shard 100 always in the other branch.
    let remote = "select count(*) from pgbench_history where (aid - 1) / 100000 + 1 <> bid";
    assert_eq!(psql(c, db, remote), "0");
    ok(&run(&["tpcb-sharded", "--cross-shard", "100"], "10", &[]));
    assert_eq!(psql(c, db, remote), "10");

    // A script of two statements: one with the key, one without.
    let script = dir.path().join("mixed.sql");
    std::fs::write(
        &script,
        "\\set bid random(1, 2)\n\
         SELECT bbalance FROM pgbench_branches WHERE bid = :bid;\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :bid;\n",
    )
    .unwrap();
    let out = ok(&run(&["-f", script.to_str().unwrap()], "2", &json_flags));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let r = &v["routing"];
    assert_eq!(r[0]["single_shard"], true, "{out}");
    assert_eq!(r[1]["single_shard"], false, "{out}");
    assert_eq!(r[1]["shards_touched"], 2, "{out}");
    assert!(out.contains("SCATTERS"), "{out}");

    // tpcb-like names no bid in its account and teller statements: refused, before any
    // transaction.
    let out = run(&["tpcb-like"], "5", &single);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--require-single-shard"), "{err}");
    assert!(
        err.contains("UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid (2 of 2 shards)"),
        "{err}"
    );
    assert!(err.contains("tpcb-sharded"), "{err}");
    assert_eq!(
        count(c, db, "pgbench_history"),
        15,
        "the refused run wrote nothing"
    );
}

#[test]
fn fdw_oltp_loads_and_point_selects_run() {
    let db = "fdw_oltp";
    let [c, s0, s1] = databases(db);
    init_fdw(db, &["oltp", "--tables", "2", "--table-size", "1000"]);
    for t in 1..=2 {
        let (a, b) = (
            count(s0, db, &format!("sbtest{t}_shard0")),
            count(s1, db, &format!("sbtest{t}_shard1")),
        );
        assert!(a > 0 && b > 0 && a + b == 1000, "sbtest{t}: {a} + {b}");
    }
    let target = c.conninfo(db);
    let out = ok(&stampede(&[
        "run",
        "oltp_point_select",
        "--tables",
        "2",
        "--table-size",
        "1000",
        "-c",
        "2",
        "-t",
        "50",
        "--no-observe",
        "-d",
        &target,
    ]));
    assert!(out.contains("transactions"), "{out}");
    // A point select names its id; a range of ids is on every shard of a hash partitioning.
    assert!(out.contains("single-shard 1 of 2 shards"), "{out}");
    let out = stampede(&[
        "run",
        "oltp_read_only",
        "--tables",
        "2",
        "--table-size",
        "1000",
        "-t",
        "5",
        "--no-observe",
        "--require-single-shard",
        "-d",
        &target,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? (2 of 2 shards)"),
        "{err}"
    );
    assert!(
        !err.contains("SELECT c FROM sbtest%u WHERE id=? ("),
        "{err}"
    );
}

#[test]
fn citus_and_limitless_ddl_from_the_dry_run() {
    // An unreachable target: a dry run connects to nothing.
    let base = ["-h", "no-such-host.invalid", "-p", "1"];
    let run = |layout: &str, extra: &[&str]| {
        let mut a = vec!["init", "tpcb", "-s", "3", "--layout", layout, "--dry-run"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&base);
        ok(&stampede(&a))
    };
    let citus = run("citus", &["--reference-table", "pgbench_tellers"]);
    for line in [
        "select create_distributed_table('pgbench_branches', 'bid');",
        "select create_reference_table('pgbench_tellers');",
        "select create_distributed_table('pgbench_accounts', 'bid', colocate_with => 'pgbench_branches');",
        "select create_distributed_table('pgbench_history', 'bid', colocate_with => 'pgbench_branches');",
        "alter table pgbench_accounts add primary key (aid, bid);",
    ] {
        assert!(citus.contains(line), "{line}\n{citus}");
    }
    let limitless = run("limitless", &[]);
    for line in [
        "set rds_aurora.limitless_create_table_mode = 'sharded';",
        "set rds_aurora.limitless_create_table_shard_key = '{\"bid\"}';",
        "set rds_aurora.limitless_create_table_collocate_with = 'pgbench_branches';",
    ] {
        assert!(limitless.contains(line), "{line}\n{limitless}");
    }
    assert!(!limitless.contains("fillfactor") && !limitless.to_lowercase().contains("freeze"));
    let oltp = ok(&stampede(&[
        "init",
        "oltp",
        "--tables",
        "2",
        "--layout",
        "citus",
        "--dry-run",
        "-h",
        "no-such-host.invalid",
    ]));
    assert!(oltp
        .contains("select create_distributed_table('sbtest2', 'id', colocate_with => 'sbtest1');"));
    // A shard's password never appears in the printed plan.
    let fdw = ok(&stampede(&[
        "init",
        "tpcb",
        "--layout",
        "fdw",
        "--dry-run",
        "--shard",
        "host=a port=5 dbname=d user=u password=s3cret",
        "-h",
        "no-such-host.invalid",
    ]));
    assert!(
        !fdw.contains("s3cret") && fdw.contains("password '********'"),
        "{fdw}"
    );
}

#[test]
fn citus_and_limitless_are_refused_on_plain_postgres_and_bad_options_say_what_to_do() {
    let db = "refusals";
    let [c, ..] = databases(db);
    let target = c.conninfo(db);
    for (layout, says) in [
        ("citus", "this server has no Citus"),
        ("limitless", "not an Aurora PostgreSQL Limitless Database"),
    ] {
        let out = stampede(&["init", "tpcb", "--layout", layout, "-d", &target]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{layout}: {err}"
        );
    }
    assert_eq!(
        psql(
            c,
            db,
            "select count(*) from pg_class where relname like 'pgbench%'"
        ),
        "0",
        "nothing was created"
    );
    for (args, says) in [
        (vec!["--layout", "fdw"], "--shard"),
        (
            vec!["--layout", "citus", "--partitions", "2"],
            "--partitions cannot be used",
        ),
        (vec!["--dry-run"], "add --layout"),
        (
            vec!["--layout", "citus", "--reference-table", "pgbench_accounts"],
            "reference table",
        ),
    ] {
        let mut a = vec!["init", "tpcb"];
        a.extend(args);
        let out = stampede(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{a:?}: {err}");
    }
    let out = stampede(&["run", "tpcb-like", "--cross-shard", "10", "-d", &target]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--cross-shard applies to the tpcb-sharded workload"),
        "{err}"
    );
}
