//! Sizes and layout (issue 32, item 2) through the binary, against servers this test starts:
//! three PostgreSQL servers for the fdw layout (a coordinator and two shards, as
//! `tests/sharding.rs` starts them), a plain PostgreSQL, and a MariaDB.
//!
//! What is checked, each against the server's own reading taken by the test: `init tpcb
//! --layout fdw` reports each table sharded on both shards; a run after it has the sizes before
//! and after with each table's kind, collocation group, shard key and its part on each shard
//! (each part what the shard itself says; the parts add up to the table); a plain PostgreSQL
//! run's sizes are the database's and each table's data and indexes as `pg_table_size` and
//! `pg_indexes_size` give them, with `pgbench_history` grown; a MariaDB run's are
//! `information_schema.TABLES`', with `pgbench_history` grown. A bug that swaps data and
//! indexes, loses a shard, puts a shard's part under the other or gets a kind wrong fails here.

use std::process::{Command, Output};

use serde_json::Value;
use testkit::{MariaDb, PerBinary, Pg};

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

// Autovacuum off: nothing changes a table's size between the run's reading and the test's.
const QUIET: &[(&str, &str)] = &[("autovacuum", "off")];
static COORDINATOR: PerBinary = PerBinary::new(&[QUIET]);
static SHARD0: PerBinary = PerBinary::new(&[QUIET]);
static SHARD1: PerBinary = PerBinary::new(&[QUIET]);
static PLAIN: PerBinary = PerBinary::new(&[QUIET]);

fn psql(pg: &Pg, db: &str, sql: &str) -> u64 {
    let v = pg.psql_on(db, sql);
    v.trim().parse().unwrap_or_else(|_| panic!("{sql}: {v:?}"))
}

fn stampede(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// The run's result, which must have exited 0, and its standard output.
fn run(args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend([
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let out = stampede(&all);
    let text = testkit::ok_text(&out, "stampede run");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"sizes\">"), "no Sizes section");
    (v, text)
}

/// The reading taken `when`.
fn reading<'a>(v: &'a Value, when: &str) -> &'a Value {
    let all = v["sizes"].as_array().expect("sizes in the result");
    all.iter()
        .find(|s| s["when"] == when)
        .unwrap_or_else(|| panic!("no {when} reading in {all:?}"))
}

fn table<'a>(s: &'a Value, name: &str) -> &'a Value {
    (s["tables"].as_array().unwrap().iter())
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {s}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a size: {v}"))
}

fn total(t: &Value) -> u64 {
    n(&t["table_bytes"]) + n(&t["index_bytes"])
}

#[test]
fn fdw_init_and_a_run_report_each_tables_kind_and_its_part_on_each_shard() {
    let db = "sizes_fdw";
    let servers = [COORDINATOR.get(), SHARD0.get(), SHARD1.get()];
    for pg in servers {
        pg.psql(&format!("drop database if exists {db}"));
        pg.psql(&format!("create database {db}"));
    }
    let [c, s0, s1] = servers;
    let (t, a, b) = (c.conninfo(db), s0.conninfo(db), s1.conninfo(db));
    let out = stampede(&[
        "init", "tpcb", "-s", "2", "--layout", "fdw", "--shard", &a, "--shard", &b, "-d", &t, "-q",
    ]);
    testkit::ok_text(&out, "stampede init");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sizes (fdw layout)"), "{err}");
    for name in [
        "pgbench_accounts",
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_history",
    ] {
        let line = err
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not in init's sizes:\n{err}"));
        assert!(line.contains(" sharded "), "{line}");
        assert!(line.contains("stampede_shard0, stampede_shard1"), "{line}");
    }
    assert_eq!(
        err.matches("on stampede_shard0").count(),
        4,
        "each table on shard 0:\n{err}"
    );
    assert_eq!(err.matches("on stampede_shard1").count(), 4, "{err}");
    assert!(err.contains("shard stampede_shard1 (host="), "{err}");

    // One client: postgres_fdw's REPEATABLE READ shard transactions would make two conflict.
    let (v, text) = run(&["tpcb-like", "-c", "1", "-t", "200", "-d", &t]);
    assert!(text.contains("sizes: database "), "{text}");
    assert!(text.contains("layout fdw, 2 shards"), "{text}");
    let (before, after) = (reading(&v, "before"), reading(&v, "after"));
    for s in [before, after] {
        assert_eq!(s["layout"], "fdw", "{s}");
        let shards: Vec<&str> = (s["shards"].as_array().unwrap().iter())
            .map(|x| x["shard"].as_str().unwrap())
            .collect();
        assert_eq!(shards, ["stampede_shard0", "stampede_shard1"], "{s}");
        for name in [
            "pgbench_accounts",
            "pgbench_branches",
            "pgbench_tellers",
            "pgbench_history",
        ] {
            let t = table(s, name);
            assert_eq!(t["kind"], "sharded", "{t}");
            assert_eq!(t["shard_key"], "bid", "{t}");
            assert_eq!(
                t["colocation"], "hash(integer) modulus 2: stampede_shard0, stampede_shard1",
                "{t}"
            );
            let parts = t["shards"].as_array().unwrap();
            assert_eq!(parts.len(), 2, "{t}");
            // The parts add up to the table.
            let sum: u64 = parts.iter().map(|p| n(&p["total_bytes"])).sum();
            assert_eq!(sum, total(t), "{t}");
            let data: u64 = parts.iter().map(|p| n(&p["table_bytes"])).sum();
            assert_eq!(data, n(&t["table_bytes"]), "{t}");
        }
        // 100,000 accounts a branch: megabytes of rows, a smaller primary key.
        let acc = table(s, "pgbench_accounts");
        assert!(
            n(&acc["table_bytes"]) > 2 * n(&acc["index_bytes"]) && n(&acc["index_bytes"]) > 0,
            "{acc}"
        );
        let dbs: u64 = (s["shards"].as_array().unwrap().iter())
            .map(|x| n(&x["database_bytes"]))
            .sum();
        assert!(
            n(&s["database_bytes"]) > dbs,
            "the coordinator's and the shards': {s}"
        );
    }
    // Each shard's part is what that shard says of its own table (read now: autovacuum is off
    // and nothing writes after the run).
    for (i, pg) in [s0, s1].into_iter().enumerate() {
        let shard = format!("stampede_shard{i}");
        for name in ["pgbench_accounts", "pgbench_history"] {
            let t = table(after, name);
            let part = (t["shards"].as_array().unwrap().iter())
                .find(|p| p["shard"] == shard.as_str())
                .unwrap();
            let own = format!("{name}_shard{i}");
            assert_eq!(
                n(&part["table_bytes"]),
                psql(pg, db, &format!("select pg_table_size('{own}')")),
                "{name} on {shard}"
            );
            assert_eq!(
                n(&part["index_bytes"]),
                psql(pg, db, &format!("select pg_indexes_size('{own}')")),
                "{name} on {shard}"
            );
        }
        // The shard's database holds at least the parts on it (its exact size moves with files
        // the server writes by itself, such as the relation cache's).
        let said = (after["shards"].as_array().unwrap().iter())
            .find(|x| x["shard"] == shard.as_str())
            .unwrap();
        let parts: u64 = (after["tables"].as_array().unwrap().iter())
            .flat_map(|t| t["shards"].as_array().unwrap())
            .filter(|p| p["shard"] == shard.as_str())
            .map(|p| n(&p["total_bytes"]))
            .sum();
        assert!(n(&said["database_bytes"]) > parts, "{shard}: {said}");
    }
    // The history was empty before and holds the run's rows after.
    assert_eq!(total(table(before, "pgbench_history")), 0);
    assert!(total(table(after, "pgbench_history")) > 0);
}

#[test]
fn a_plain_postgres_run_has_the_database_tables_and_indexes_before_and_after() {
    let pg = PLAIN.get();
    let db = "sizes_plain";
    pg.psql(&format!("drop database if exists {db}"));
    pg.psql(&format!("create database {db}"));
    let t = pg.conninfo(db);
    let out = stampede(&["init", "tpcb", "-s", "1", "-q", "-d", &t]);
    testkit::ok_text(&out, "stampede init");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sizes (plain layout)"), "{err}");

    let (v, text) = run(&["tpcb-like", "-c", "2", "-t", "300", "-d", &t]);
    let (before, after) = (reading(&v, "before"), reading(&v, "after"));
    assert_eq!(before["layout"], "plain");
    assert!(before["shards"].as_array().unwrap().is_empty());
    for s in [before, after] {
        let acc = table(s, "pgbench_accounts");
        assert_eq!(acc["kind"], "local");
        assert!(
            acc.get("colocation").is_none() && acc.get("shards").is_none(),
            "{acc}"
        );
        assert!(
            n(&acc["table_bytes"]) > 2 * n(&acc["index_bytes"]) && n(&acc["index_bytes"]) > 0,
            "{acc}"
        );
        // Largest first.
        assert_eq!(s["tables"][0]["name"], "pgbench_accounts", "{s}");
    }
    // The server's own figures, read now (autovacuum off; nothing writes after the run).
    let q = |sql: &str| psql(pg, db, sql);
    for name in ["pgbench_accounts", "pgbench_history", "pgbench_tellers"] {
        let t = table(after, name);
        assert_eq!(
            n(&t["table_bytes"]),
            q(&format!("select pg_table_size('{name}')")),
            "{name}"
        );
        assert_eq!(
            n(&t["index_bytes"]),
            q(&format!("select pg_indexes_size('{name}')")),
            "{name}"
        );
    }
    let tables: u64 = after["tables"].as_array().unwrap().iter().map(total).sum();
    assert!(n(&after["database_bytes"]) > tables, "{after}");
    let h0 = total(table(before, "pgbench_history"));
    let h1 = total(table(after, "pgbench_history"));
    assert_eq!(h0, 0, "pgbench's history starts empty");
    // 600 rows of about 50 bytes: more than one 8 kB page.
    assert!(h1 >= 2 * 8192, "{h1}");
    assert!(n(&after["database_bytes"]) > n(&before["database_bytes"]));
    assert!(text.contains("grew most: "), "{text}\n{}", v["sizes"]);
}

#[test]
fn a_mariadb_run_has_information_schemas_sizes_before_and_after() {
    // Transient statistics: InnoDB recalculates them as rows change (a sixteenth of the
    // table), where persistent ones wait for its background thread; DATA_LENGTH follows them.
    let m = MariaDb::start(&["--innodb-stats-persistent=0"]);
    m.fresh_database("sizes_my");
    let url = m.tcp_url("root", None, "sizes_my");
    let out = stampede(&["init", "tpcb", "-s", "1", "-d", &url]);
    testkit::ok_text(&out, "stampede init");
    let (v, text) = run(&["tpcb-like", "-c", "2", "-t", "500", "-d", &url]);
    assert!(text.contains("sizes: database "), "{text}");
    let (before, after) = (reading(&v, "before"), reading(&v, "after"));
    assert_eq!(before["layout"], "mysql");
    let q = |sql: &str| -> u64 {
        let v = m.sql(&format!("USE sizes_my; {sql}"));
        v.trim().parse().unwrap_or_else(|_| panic!("{sql}: {v:?}"))
    };
    let is = |name: &str, col: &str| {
        q(&format!(
            "SELECT {col} FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sizes_my' \
             AND TABLE_NAME = '{name}'"
        ))
    };
    for name in ["pgbench_accounts", "pgbench_history"] {
        let t = table(after, name);
        assert_eq!(t["kind"], "local");
        assert_eq!(n(&t["table_bytes"]), is(name, "DATA_LENGTH"), "{name}");
        assert_eq!(n(&t["index_bytes"]), is(name, "INDEX_LENGTH"), "{name}");
    }
    // pgbench_accounts: its rows are the clustered index (DATA_LENGTH), no secondary index.
    let acc = table(after, "pgbench_accounts");
    assert!(n(&acc["table_bytes"]) > 1_000_000, "{acc}");
    assert_eq!(n(&acc["index_bytes"]), 0, "{acc}");
    let h0 = total(table(before, "pgbench_history"));
    let h1 = total(table(after, "pgbench_history"));
    assert!(h1 > h0, "history {h0} -> {h1}");
    assert!(n(&after["database_bytes"]) > n(&before["database_bytes"]));
}
