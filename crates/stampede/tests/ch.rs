//! `stampede init ch` and `stampede run ch` (issue 34's CH-benCHmark) on a private PostgreSQL
//! and the shared private MariaDB: TPC-C's clients and the analytic clients run at once and are
//! reported apart (TPC-C's figures from its five types alone, each of the 22 queries with its
//! executions), TPC-C's consistency conditions hold after the run, the commit count agrees with
//! the server on both protocols (each analytic query one read-only transaction on PostgreSQL,
//! none of MariaDB's `Com_commit`), and a sweep over the analytic clients keeps the OLTP p99 per
//! step. A query in the wrong dialect, an analytic client that skips or repeats a query, TPC-C's
//! figures mixed with the queries', or a commit count that counts the queries wrongly fails
//! here; so does a run on TPC-C's tables alone, which must say what to load.

mod common;

use std::sync::OnceLock;

use common::{pg_target, stampede};
use serde_json::Value;
use testkit::PerBinary;

static PG: PerBinary = PerBinary::new(&[]);

fn run_json(target: &[String], args: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut all: Vec<String> = vec!["run".into(), "ch".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(target.iter().cloned());
    all.extend(["--json".into(), json.display().to_string()]);
    let r = stampede(&all);
    let v = std::fs::read(&json)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or(Value::Null);
    (r.code, v, format!("{}\n{}", r.stdout, r.stderr))
}

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    (v["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {}", v["checks"]))
}

/// The database `ch`: first TPC-C's tables alone (a run must say CH's are missing), then
/// `init ch -w 1`.
fn loaded() -> Vec<String> {
    static DONE: OnceLock<()> = OnceLock::new();
    let pg = PG.get();
    let target = pg_target(pg, "ch");
    DONE.get_or_init(|| {
        pg.psql_on("postgres", "CREATE DATABASE ch");
        let init = |what: &str| {
            let mut args = vec!["init".to_string(), what.into(), "-w".into(), "1".into()];
            args.push("-q".into());
            args.extend(target.iter().cloned());
            let r = stampede(&args);
            assert_eq!(r.code, 0, "init {what}: {}", r.stderr);
            r
        };
        init("tpcc");
        let (code, _, text) = run_json(&target, &["-c", "1", "-t", "1"]);
        assert_ne!(code, 0, "{text}");
        assert!(
            text.contains("CH-benCHmark's table") && text.contains("stampede init ch"),
            "{text}"
        );
        let r = init("ch");
        assert!(r.stderr.contains("supplier 10000"), "{}", r.stderr);
    });
    let counts = pg.psql_on(
        "ch",
        "SELECT (SELECT count(*) FROM region), (SELECT count(*) FROM nation), \
         (SELECT count(*) FROM supplier), (SELECT count(*) FROM warehouse)",
    );
    assert_eq!(counts.trim(), "5|25|10000|1");
    target
}

/// One round of the analytic client (`-t 22`: each of the 22 queries once) beside the TPC-C
/// clients' 22 transactions each.
fn one_round(target: &[String], oltp: &str) -> Value {
    let (code, v, text) = run_json(target, &["-c", oltp, "--analytic-clients", "1", "-t", "22"]);
    assert_eq!(code, 0, "{text}");
    let c = &v["ch"];
    let oltp: u64 = oltp.parse().unwrap();
    assert_eq!(
        (c["oltp_clients"].as_u64(), c["analytic_clients"].as_u64()),
        (Some(oltp), Some(1)),
        "{c}"
    );
    // TPC-C's figures are its five types' alone.
    assert_eq!(c["oltp"]["transactions"].as_u64(), Some(22 * oltp), "{c}");
    let limits = c["tpcc"]["response_limits"].as_array().unwrap();
    assert_eq!(limits.len(), 5, "{c}");
    let tpcc_count: u64 = limits.iter().map(|l| l["count"].as_u64().unwrap()).sum();
    assert_eq!(tpcc_count, 22 * oltp);
    assert!(c["tpcc"]["tpmc"].as_f64().unwrap() > 0.0, "{c}");
    // Each query once, none failed, in a type of its own.
    let per: Vec<&Value> = c["per_query"].as_array().unwrap().iter().collect();
    assert_eq!(per.len(), 22);
    for (i, q) in per.iter().enumerate() {
        assert_eq!(q["query"], format!("Q{}", i + 1));
        assert_eq!(
            (q["executions"].as_u64(), q["failures"].as_u64()),
            (Some(1), Some(0)),
            "{q}"
        );
    }
    assert_eq!(c["queries"].as_u64(), Some(22));
    assert_eq!(
        check(&v, "TPC-C consistency (3.3.2)")["status"],
        "passed",
        "{}",
        v["checks"]
    );
    assert!(text.contains("tpmC: "), "{text}");
    assert!(text.contains("CH-benCHmark analytic queries:"), "{text}");
    v
}

#[test]
fn tpcc_and_the_analytic_queries_run_at_once_and_are_reported_apart() {
    let target = loaded();
    let v = one_round(&target, "4");
    // Each analytic query is a read-only transaction the server counts; a surplus is only
    // inconclusive where parallel workers count theirs (module `tpch::run`).
    let commits = check(&v, "commit count");
    assert!(
        commits["status"] == "passed"
            || commits["detail"]
                .as_str()
                .is_some_and(|d| d.contains("parallel")),
        "{commits}"
    );
    // The rows each query returned are what psql returns for the same text, for the queries
    // that read only tables TPC-C's transactions never write.
    let per = v["ch"]["per_query"].as_array().unwrap();
    let pg = PG.get();
    let text = |q: usize| {
        v["config"]["txn_types"][4 + q]["statements"][0]
            .as_str()
            .unwrap()
            .to_string()
    };
    for q in [2usize, 16] {
        let sql = text(q);
        assert!(sql.contains("supplier"), "Q{q}: {sql}");
        let rows = pg.psql_on("ch", &sql).lines().count() as u64;
        assert_eq!(per[q - 1]["rows_min"].as_u64(), Some(rows), "Q{q}\n{sql}");
    }
}

#[test]
fn a_sweep_over_analytic_clients_keeps_the_oltp_p99_of_each_step() {
    let target = loaded();
    let (code, v, text) = run_json(
        &target,
        &["-c", "2", "--sweep", "analytic-clients=0,1,2", "-T", "3"],
    );
    assert_eq!(code, 0, "{text}");
    let s = &v["sweep"];
    assert_eq!(s["parameter"], "analytic-clients", "{s}");
    assert!(s["knee"].is_null(), "{s}");
    let steps = s["steps"].as_array().unwrap();
    let values: Vec<&str> = steps.iter().map(|x| x["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["0", "1", "2"]);
    // The engine ran TPC-C's 2 clients and the step's analytic ones.
    let clients: Vec<u64> = steps
        .iter()
        .map(|x| x["clients"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [2, 3, 4]);
    for x in steps {
        let metric = |name: &str| {
            (x["metrics"].as_array().unwrap().iter())
                .find(|m| m["name"] == name)
                .and_then(|m| m["value"].as_f64())
                .unwrap_or_else(|| panic!("no {name}: {x}"))
        };
        assert!(metric("OLTP p99") > 0.0, "{x}");
        assert!(metric("tpmC") > 0.0, "{x}");
        let rate = metric("analytic queries");
        match x["value"].as_str() {
            Some("0") => assert_eq!(rate, 0.0, "{x}"),
            _ => assert!(rate > 0.0, "{x}"),
        }
    }
    assert!(text.contains("OLTP p99"), "{text}");
}

#[test]
fn on_mariadb_the_commit_count_leaves_the_queries_out() {
    let m = testkit::MariaDb::shared();
    m.fresh_database("ch_my");
    let url = m.tcp_url("root", None, "ch_my");
    let init = stampede(&["init", "ch", "-w", "1", "-q", "-d", &url]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let v = one_round(&["-d".to_string(), url], "2");
    assert_eq!(
        check(&v, "commit count")["status"],
        "passed",
        "{}",
        v["checks"]
    );
}

#[test]
fn options_that_do_not_fit_are_refused_before_connecting() {
    for (args, says) in [
        (
            vec!["run", "ch", "-R", "100"],
            "-R does not apply to run ch",
        ),
        (
            vec!["run", "ch", "--streams", "2"],
            "--streams only applies to TPC-H",
        ),
        (
            vec!["run", "tpcc", "--analytic-clients", "2"],
            "--analytic-clients only applies to run ch",
        ),
        (
            vec!["run", "tpcc", "--sweep", "analytic-clients=0,1"],
            "only `run ch` has analytic clients",
        ),
        (vec!["run", "ch", "--sweep", "scale=1,2"], "--sweep scale"),
    ] {
        let args: Vec<&str> = args
            .into_iter()
            .chain(["-h", "/nonexistent", "-d", "x"])
            .collect();
        let r = stampede(&args);
        assert_eq!(r.code, 64, "{args:?}\n{}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
}
