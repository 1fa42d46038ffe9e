//! The statement ledger (issue 30, item 1) against real servers: for every workload family,
//! on PostgreSQL and on MariaDB, the ledger is in the result, its lines agree with the server's
//! counters on an idle server (read here too, independently: `pg_stat_user_tables`,
//! `SHOW GLOBAL STATUS`), and a family that miscounts (the failover probe counting its reads
//! as writes, through a failpoint) fails it.
//!
//! PostgreSQL: one server for the binary, a database per test (its counters are the
//! database's). MariaDB: one test runs every case in turn, since `Com_*` are the server's.

use std::process::Command;

mod common;

use common::pg_target;
use serde_json::Value;
use testkit::{MariaDb, PerBinary};

static PG: PerBinary = PerBinary::new(&[testkit::THROWAWAY]);

/// A custom script in pgbench's language: the ledger has no claims for it, only its sessions'
/// tally against the server's counters.
const SCRIPT: &str = "\\set aid random(1, 100000 * :scale)\n\
    \\set delta random(-5000, 5000)\n\
    BEGIN;\n\
    UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
    SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
    INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, :delta, CURRENT_TIMESTAMP);\n\
    COMMIT;\n";

/// One workload: what loads its tables and what runs it (the target is added).
struct Case {
    name: &'static str,
    init: &'static [&'static str],
    run: &'static [&'static str],
}

const TPCB: &[&str] = &["init", "tpcb", "-s", "1"];

const CASES: &[Case] = &[
    Case {
        name: "tpcb-like",
        init: TPCB,
        run: &["run", "tpcb-like", "-t", "100", "-c", "2"],
    },
    Case {
        name: "select-only",
        init: TPCB,
        run: &["run", "select-only", "-t", "200", "-c", "2"],
    },
    Case {
        name: "script",
        init: TPCB,
        run: &["run", "-f", "SCRIPT", "-t", "100", "-c", "2"],
    },
    Case {
        name: "oltp_read_write",
        init: &["init", "oltp", "--tables", "2", "--table-size", "1000"],
        run: &[
            "run",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "-t",
            "40",
            "-c",
            "2",
        ],
    },
    Case {
        name: "tpcc",
        init: &["init", "tpcc", "-w", "1"],
        run: &["run", "tpcc", "-t", "60", "-c", "2"],
    },
    Case {
        name: "ycsb-a",
        init: &["init", "ycsb", "-p", "recordcount=1000"],
        run: &["run", "ycsb-a", "-t", "200", "-c", "2"],
    },
    Case {
        name: "iibench",
        init: &["init", "iibench"],
        run: &[
            "run",
            "iibench",
            "-c",
            "2",
            "--rows-per-commit",
            "100",
            "-t",
            "20",
        ],
    },
    Case {
        name: "crud",
        init: &["init", "crud", "--tables", "2", "--table-size", "1000"],
        run: &[
            "run",
            "crud",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "-t",
            "100",
            "-c",
            "2",
        ],
    },
    Case {
        name: "failover-probe",
        init: &[],
        // The table stays, so its rows can be counted after.
        run: &[
            "run",
            "failover-probe",
            "-T",
            "2",
            "-R",
            "200",
            "-c",
            "2",
            "--keep-probe",
        ],
    },
];

fn case(name: &str) -> &'static Case {
    CASES.iter().find(|c| c.name == name).expect("a case")
}

/// Run stampede with `args` and `target`, the script file in place of `SCRIPT`.
fn stampede(args: &[&str], target: &[String], env: &[(&str, &str)]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("ledger.sql");
    std::fs::write(&script, SCRIPT).unwrap();
    let args: Vec<String> = (args.iter())
        .map(|a| match *a {
            "SCRIPT" => script.display().to_string(),
            a => a.to_string(),
        })
        .collect();
    common::outcome(
        Command::new(env!("CARGO_BIN_EXE_stampede"))
            .args(&args)
            .args(target)
            .envs(env.iter().copied()),
    )
}

/// Load `c`'s tables and run it with `--json`; the result, the text and the exit status.
fn run(c: &Case, target: &[String], env: &[(&str, &str)]) -> (i32, Value, String) {
    if !c.init.is_empty() {
        let (code, out, err) = stampede(c.init, target, &[]);
        assert_eq!(code, 0, "{}: init\n{out}\n{err}", c.name);
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = c.run.to_vec();
    args.extend(["--json", json.to_str().unwrap()]);
    let (code, out, err) = stampede(&args, target, env);
    let text = format!("{out}\n{err}");
    let v = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("{}: no result ({e})\n{text}", c.name)),
    )
    .unwrap();
    (code, v, text)
}

fn lines(v: &Value) -> &Vec<Value> {
    v["ledger"]["lines"].as_array().expect("a ledger")
}

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    (v["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {}", v["checks"]))
}

/// Statements that failed and were retried or given up in the run: deadlocks between clients
/// happen even on an idle server (MariaDB's oltp_read_write), and MySQL's `Com_*` counts a
/// failed statement as it starts.
fn failed_attempts(v: &Value) -> i64 {
    (v["total"]["txns"].as_array().unwrap().iter())
        .map(|t| {
            t["retries"].as_i64().unwrap()
                + (t["failures"].as_array().unwrap().iter())
                    .map(|f| f.as_i64().unwrap())
                    .sum::<i64>()
        })
        .sum()
}

/// The ledger agrees with the server: no line failed; every statement line exact, or within
/// what the run's own failed attempts explain (the detail saying so); only the lines
/// `inconclusive` names may be inconclusive (a reason each); the check passed.
fn agrees(name: &str, v: &Value, text: &str, inconclusive: &[&str]) {
    let ls = lines(v);
    assert!(!ls.is_empty(), "{name}: an empty ledger\n{text}");
    let failed = failed_attempts(v);
    for l in ls {
        let what = format!("{}/{}/{}", l["kind"], l["unit"], l["table"]);
        match l["verdict"].as_str().unwrap() {
            "exact" => {}
            "within" if l["unit"] != "statements" => {}
            "within"
                if failed > 0
                    && (l["server"].as_i64().unwrap() - l["sent"].as_i64().unwrap()) <= failed
                    && l["detail"].as_str().unwrap().contains("failed") => {}
            "inconclusive" if inconclusive.contains(&l["kind"].as_str().unwrap()) => {
                assert!(!l["detail"].as_str().unwrap().is_empty());
            }
            other => panic!("{name}: {what} is {other}: {l}\n{text}"),
        }
    }
    assert!(
        ls.iter()
            .any(|l| l["unit"] == "statements" && l["verdict"] == "exact"),
        "{name}: no statement line\n{text}"
    );
    assert_eq!(
        check(v, "statement ledger")["status"],
        "passed",
        "{name}\n{text}"
    );
}

/// Rows inserted, updated, deleted per table (partitions in their root), as the ledger reads
/// them.
fn pg_rows(cfg: &sut::ConnConfig) -> std::collections::BTreeMap<String, [i64; 3]> {
    let rows = testkit::block_on(testkit::query(
        cfg,
        "SELECT coalesce(pg_partition_root(relid), relid)::regclass::text, sum(n_tup_ins), \
         sum(n_tup_upd), sum(n_tup_del) FROM pg_stat_user_tables GROUP BY 1",
    ));
    rows.into_iter()
        .map(|r| {
            let n = |i: usize| r[i].as_deref().unwrap_or("0").parse::<i64>().unwrap();
            (r[0].clone().unwrap_or_default(), [n(1), n(2), n(3)])
        })
        .collect()
}

/// One workload on PostgreSQL: the ledger agrees, and each table line's server count is the
/// table's own counter's movement, read here.
fn on_postgres(name: &str, inconclusive: &[&str]) -> Value {
    let pg = PG.get();
    let db = format!("ledger_{}", name.replace('-', "_"));
    let cfg = testkit::block_on(pg.fresh_database(&db));
    testkit::block_on(testkit::query(&cfg, "CREATE EXTENSION pg_stat_statements"));
    let target = pg_target(pg, &db);
    let c = case(name);
    if !c.init.is_empty() {
        let (code, out, err) = stampede(c.init, &target, &[]);
        assert_eq!(code, 0, "{name}: init\n{out}\n{err}");
    }
    let before = pg_rows(&cfg);
    let loaded = Case {
        name: c.name,
        init: &[],
        run: c.run,
    };
    let (code, v, text) = run(&loaded, &target, &[]);
    assert_eq!(code, 0, "{name}\n{text}");
    agrees(name, &v, &text, inconclusive);
    let after = pg_rows(&cfg);
    for l in lines(&v).iter().filter(|l| l["table"].is_string()) {
        let t = l["table"].as_str().unwrap();
        if t.ends_with('*') {
            continue;
        }
        let i = match l["kind"].as_str().unwrap() {
            "insert" => 0,
            "update" => 1,
            _ => 2,
        };
        let moved = after.get(t).map_or(0, |a| a[i]) - before.get(t).map_or(0, |b| b[i]);
        assert_eq!(l["server"].as_i64(), Some(moved), "{name}: {l}\n{text}");
    }
    v
}

#[test]
fn tpcb_like_s_ledger_is_exact_and_names_each_table() {
    let v = on_postgres("tpcb-like", &[]);
    let tables: Vec<&str> = (lines(&v).iter())
        .filter_map(|l| l["table"].as_str())
        .collect();
    assert_eq!(
        tables,
        [
            "pgbench_history",
            "pgbench_accounts",
            "pgbench_branches",
            "pgbench_tellers"
        ]
    );
    // 100 transactions per client, each one history row.
    let h = (lines(&v).iter())
        .find(|l| l["table"] == "pgbench_history")
        .unwrap();
    assert_eq!(
        (h["workload"]["min"].as_u64(), h["server"].as_i64()),
        (Some(200), Some(200))
    );
}

#[test]
fn select_only_and_a_custom_script_agree_with_the_server() {
    let v = on_postgres("select-only", &[]);
    let select = (lines(&v).iter())
        .find(|l| l["kind"] == "select" && l["unit"] == "statements")
        .unwrap();
    assert_eq!(select["server"].as_i64(), Some(400), "{select}");
    let v = on_postgres("script", &[]);
    // No claims for a script: the sessions' tally alone, against the server.
    assert!(
        lines(&v).iter().all(|l| l["workload"].is_null()),
        "{}",
        v["ledger"]
    );
    let update = (lines(&v).iter())
        .find(|l| l["kind"] == "update" && l["unit"] == "statements")
        .unwrap();
    assert_eq!(update["sent"].as_u64(), Some(200), "{update}");
}

#[test]
fn sysbench_crud_and_iibench_agree_with_the_server() {
    on_postgres("oltp_read_write", &[]);
    on_postgres("crud", &[]);
    let v = on_postgres("iibench", &[]);
    let rows = (lines(&v).iter())
        .find(|l| l["table"] == "purchases_index")
        .unwrap();
    assert_eq!(rows["server"].as_i64(), Some(2 * 20 * 100), "{rows}");
}

#[test]
fn tpcc_and_ycsb_agree_with_the_server() {
    // TPC-C's statements write inside WITH clauses on PostgreSQL: the rows of a kind are not
    // on the wire, so that line alone is inconclusive; its tables' lines compare them.
    let v = on_postgres("tpcc", &["insert", "update", "delete"]);
    let rows_lines = (lines(&v).iter())
        .filter(|l| l["unit"] == "rows" && l["table"].is_null())
        .count();
    let inconclusive = (lines(&v).iter())
        .filter(|l| l["verdict"] == "inconclusive")
        .count();
    assert_eq!(inconclusive, rows_lines, "{}", v["ledger"]);
    assert!(
        (lines(&v).iter()).any(|l| l["table"] == "order_line" && l["verdict"] != "inconclusive"),
        "{}",
        v["ledger"]
    );
    on_postgres("ycsb-a", &[]);
}

#[test]
fn the_failover_probe_s_writes_and_reads_agree_and_a_miscount_fails() {
    let v = on_postgres("failover-probe", &[]);
    let insert = (lines(&v).iter())
        .find(|l| l["kind"] == "insert" && l["unit"] == "statements")
        .unwrap();
    let acknowledged = v["failover"]["writes"]["acknowledged"].as_u64().unwrap();
    assert_eq!(
        insert["workload"]["min"].as_u64(),
        Some(acknowledged),
        "{insert}"
    );
    assert_eq!(
        insert["server"].as_i64(),
        Some(acknowledged as i64),
        "{insert}"
    );

    // The probe's old defect, brought back: its reads counted as acknowledged writes.
    let pg = PG.get();
    let target = pg_target(pg, "ledger_failover_probe");
    let (code, v, text) = run(
        case("failover-probe"),
        &target,
        &[("STAMPEDE_FAILPOINTS", "probe-reads-as-writes")],
    );
    assert_eq!(code, 2, "{text}");
    let c = check(&v, "statement ledger");
    assert_eq!(c["status"], "failed", "{c}");
    let insert = (lines(&v).iter())
        .find(|l| l["kind"] == "insert" && l["unit"] == "statements")
        .unwrap();
    assert_eq!(insert["verdict"], "failed", "{insert}");
    assert!(
        insert["detail"]
            .as_str()
            .unwrap()
            .contains("(acknowledged writes), but its sessions sent"),
        "{insert}"
    );
}

/// `Com_*` and `Handler_*` now, read here.
fn status(m: &MariaDb) -> std::collections::BTreeMap<String, i64> {
    m.sql(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_insert', \
         'Com_insert_select', 'Com_replace', 'Com_update', 'Com_delete', 'Handler_write', \
         'Handler_update', 'Handler_delete')",
    )
    .lines()
    .filter_map(|l| {
        let (k, v) = l.split_once('\t')?;
        Some((k.to_string(), v.trim().parse().ok()?))
    })
    .collect()
}

#[test]
fn every_workload_s_ledger_agrees_with_mariadb() {
    let m = MariaDb::shared();
    for c in CASES {
        let db = format!("ledger_{}", c.name.replace('-', "_"));
        m.fresh_database(&db);
        let target = vec!["-d".to_string(), m.socket_url("root", None, &db)];
        if !c.init.is_empty() {
            let (code, out, err) = stampede(c.init, &target, &[]);
            assert_eq!(code, 0, "{}: init\n{out}\n{err}", c.name);
        }
        let before = status(m);
        let loaded = Case {
            name: c.name,
            init: &[],
            run: c.run,
        };
        let (code, v, text) = run(&loaded, &target, &[]);
        assert_eq!(code, 0, "{}\n{text}", c.name);
        // TPC-C finds customers by last name with window functions, whose temporary tables'
        // rows MariaDB counts in Handler_update: only that line may be inconclusive, and it
        // must say so.
        let windowed: &[&str] = if c.name == "tpcc" { &["update"] } else { &[] };
        agrees(c.name, &v, &text, windowed);
        if c.name == "tpcc" {
            let l = (lines(&v).iter())
                .find(|l| l["kind"] == "update" && l["unit"] == "rows")
                .cloned()
                .unwrap();
            assert!(
                l["detail"].as_str().unwrap().contains("window functions"),
                "{l}"
            );
        }
        // The insert statements the ledger says the server counted are Com_insert's,
        // Com_insert_select's and Com_replace's movement less stampede's own (none of its own
        // sessions insert): TPC-C's order lines are INSERT ... SELECT.
        let after = status(m);
        let moved = (["Com_insert", "Com_insert_select", "Com_replace"].iter())
            .map(|k| after[*k] - before[*k])
            .sum::<i64>();
        let line = (lines(&v).iter()).find(|l| l["kind"] == "insert" && l["unit"] == "statements");
        assert_eq!(
            line.map_or(0, |l| l["server"].as_i64().unwrap()),
            moved,
            "{}: {}",
            c.name,
            v["ledger"]
        );
    }
}
