//! `stampede run tpch` and `run tpch-qN` (issue 34) on TPC-H data that `init tpch --scale
//! 0.01` loaded into a private PostgreSQL and the shared private MariaDB. The power test with
//! qgen's validation parameters runs all 22 queries, and each returns the rows the same text
//! returns through psql or mariadb (the query texts come from the module the binary uses,
//! compiled into this test); the full test (power, then two query streams and a refresh
//! stream) prints all three metrics and leaves `orders` and `lineitem` as they were; a query
//! timeout is reported per query and costs the metric, not the run; single queries loop.
//! Each query text gets its plan's hash (explained after the run), the same text in two
//! streams the same hash, and `compare` of two results sets each query's time side by side.
//! A parser or dialect slip in a query, a stream that skips or repeats one, a refresh pair
//! that leaves rows behind, a metric made of a failed query's missing time, a plan hash that
//! folds in literals or costs, or a per-query verdict that loses a query fails here.

mod common;

#[allow(dead_code, unused_imports)]
#[path = "../src/families/tpch/queries/mod.rs"]
mod queries;

use std::sync::OnceLock;

use common::{pg_target, stampede};
use serde_json::Value;
use testkit::PerBinary;

static PG: PerBinary = PerBinary::new(&[]);

const SCALE: f64 = 0.01;

/// The database `tpch`, loaded once.
fn loaded() -> &'static testkit::Pg {
    static DONE: OnceLock<()> = OnceLock::new();
    let pg = PG.get();
    DONE.get_or_init(|| {
        pg.psql_on("postgres", "CREATE DATABASE tpch");
        let mut args = vec!["init".to_string(), "tpch".into(), "-q".into()];
        args.extend(["--scale".into(), SCALE.to_string()]);
        args.extend(pg_target(pg, "tpch"));
        let run = stampede(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
    });
    pg
}

/// `stampede run ARGS` on the loaded database with `--json`: the exit code, the result and
/// the text.
fn run(args: &[&str]) -> (i32, Value, String) {
    let pg = loaded();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut all: Vec<String> = vec!["run".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(pg_target(pg, "tpch"));
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

/// Every query of the stream has a plan hash (16 hex digits), no refresh function has one.
fn assert_plan_hashes(v: &Value, stream: u64) {
    for i in items(v, stream) {
        let h = i["plan_hash"].as_str();
        if i["item"].as_str().unwrap().starts_with("RF") {
            assert_eq!(h, None, "{i}");
        } else {
            assert!(
                h.is_some_and(|h| h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit())),
                "{i}"
            );
        }
    }
}

fn items(v: &Value, stream: u64) -> Vec<&Value> {
    (v["tpch"]["items"].as_array().unwrap().iter())
        .filter(|i| i["stream"].as_u64() == Some(stream))
        .collect()
}

#[test]
fn the_power_test_runs_all_22_queries_and_each_returns_what_psql_returns() {
    let (code, v, text) = run(&["tpch", "--test", "power", "--validation"]);
    assert_eq!(code, 0, "{text}");
    let t = &v["tpch"];
    assert_eq!(
        (t["test"].as_str(), t["scale"].as_f64()),
        (Some("power"), Some(SCALE)),
        "{t}"
    );
    let power = items(&v, 0);
    let names: Vec<&str> = power.iter().map(|i| i["item"].as_str().unwrap()).collect();
    // Clause 5.3.3: RF1, the queries in Appendix A's order 0, RF2.
    let mut want = vec!["RF1".to_string()];
    want.extend(queries::order(0).iter().map(|q| format!("Q{q}")));
    want.push("RF2".into());
    assert_eq!(names, want);
    let pg = loaded();
    for i in power
        .iter()
        .filter(|i| i["item"] != "RF1" && i["item"] != "RF2")
    {
        let q: u8 = i["item"].as_str().unwrap()[1..].parse().unwrap();
        let sql = queries::text(queries::Dialect::Postgres, &queries::validation(q, SCALE));
        let psql = pg.psql_on("tpch", &sql);
        let rows = psql.lines().count() as f64;
        assert_eq!(
            i["rows"].as_f64(),
            Some(rows),
            "Q{q}: stampede's rows vs psql's\n{sql}"
        );
        assert_eq!(
            (i["executions"].as_u64(), i["failed"].as_u64()),
            (Some(1), Some(0)),
            "{i}"
        );
        assert_eq!(
            i["expected_rows"].as_f64(),
            Some(rows),
            "Q{q}: the answer set's count"
        );
    }
    assert!(t["power_at_size"].as_f64().unwrap() > 0.0, "{t}");
    assert!(t["qphh_at_size"].is_null(), "{t}");
    // Each of the 22 queries explained after the run, none refused.
    assert_plan_hashes(&v, 0);
    assert_eq!(t["plans"]["hashed"], 22, "{}", t["plans"]);
    assert_eq!(t["plans"]["refused"], serde_json::json!({}));
    // The items lie end to end in time (the streams-over-time chart's segments).
    for w in power.windows(2) {
        let (end, next) = (
            w[0]["end_s"].as_f64().unwrap(),
            w[1]["start_s"].as_f64().unwrap(),
        );
        assert!((end - next).abs() < 1e-9, "{} then {}", w[0], w[1]);
    }
    assert!(text.contains("Power@Size"), "{text}");
    let rows = check(&v, "row counts");
    assert_eq!(rows["status"], "passed", "{rows}");
    assert!(
        rows["detail"]
            .as_str()
            .unwrap()
            .contains("22 checked exactly"),
        "{rows}"
    );
    assert_eq!(check(&v, "refresh")["status"], "passed");
    assert_ne!(check(&v, "commit count")["status"], "failed");
    // The answer set's values are SF 1's: at 0.01 the check says so rather than passing.
    let answers = check(&v, "answers");
    assert_eq!(answers["status"], "skipped", "{answers}");
    assert!(
        answers["detail"].as_str().unwrap().contains("scale 1 only"),
        "{answers}"
    );
}

#[test]
fn the_full_test_runs_the_throughput_streams_after_the_power_test_and_reports_qphh() {
    let (code, v, text) = run(&["tpch", "--streams", "2", "--validation"]);
    assert_eq!(code, 0, "{text}");
    let t = &v["tpch"];
    // qgen's validation parameters in every stream: the same text, the same plan.
    for s in 0..=2 {
        assert_plan_hashes(&v, s);
    }
    for q in 1..=22 {
        let hash = |s: u64| {
            let i = items(&v, s)
                .into_iter()
                .find(|i| i["item"] == format!("Q{q}"));
            i.unwrap()["plan_hash"].as_str().unwrap().to_string()
        };
        assert_eq!((hash(1), hash(2)), (hash(0), hash(0)), "Q{q}");
    }
    assert!(
        text.contains("each query got the same plan in every stream"),
        "{text}"
    );
    // The EXPLAINs came after the ledger read the server's counters: not the workload's.
    assert_ne!(
        check(&v, "statement ledger")["status"],
        "failed",
        "{}",
        v["checks"]
    );
    assert!(!text.contains("different plans"), "{text}");
    assert_eq!(v["config"]["scale_factor"].as_f64(), Some(SCALE));
    compare_lists_each_query(&v);
    for s in 1..=2 {
        let qs: Vec<String> = items(&v, s)
            .iter()
            .map(|i| i["item"].as_str().unwrap().to_string())
            .collect();
        let want: Vec<String> = queries::order(s as usize)
            .iter()
            .map(|q| format!("Q{q}"))
            .collect();
        assert_eq!(qs, want, "stream {s}: Appendix A's order");
        assert!(items(&v, s)
            .iter()
            .all(|i| i["executions"] == 1 && i["failed"] == 0));
    }
    // The refresh stream: a pair per query stream (clause 5.3.5).
    let rf: Vec<&str> = items(&v, 3)
        .iter()
        .map(|i| i["item"].as_str().unwrap())
        .collect();
    assert_eq!(rf, ["RF1", "RF2", "RF1", "RF2"]);
    for m in [
        "power_at_size",
        "throughput_at_size",
        "qphh_at_size",
        "throughput_s",
    ] {
        assert!(t[m].as_f64().is_some_and(|x| x > 0.0), "{m}: {t}");
    }
    // The throughput test waited for the power test: the time held is not a query's.
    let qphh =
        (t["power_at_size"].as_f64().unwrap() * t["throughput_at_size"].as_f64().unwrap()).sqrt();
    assert!((t["qphh_at_size"].as_f64().unwrap() - qphh).abs() < 1e-6 * qphh);
    assert_eq!(check(&v, "refresh")["status"], "passed", "{}", v["checks"]);
    assert_eq!(
        check(&v, "row counts")["status"],
        "passed",
        "{}",
        v["checks"]
    );
}

/// `stampede compare` of the full test's result with itself: each query of both tests and
/// the three metrics side by side, each "same", and the real scale in the runs' lines.
fn compare_lists_each_query(v: &Value) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for p in [&a, &b] {
        std::fs::write(p, serde_json::to_vec(v).unwrap()).unwrap();
    }
    let c = stampede(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    let out = &c.stdout;
    assert!(out.contains(&format!("scale {SCALE},")), "{out}");
    for group in [
        "TPC-H metrics:",
        "power test:",
        "throughput test, mean over the streams:",
    ] {
        assert!(out.contains(group), "{group}\n{out}");
    }
    for m in ["Power@Size", "Throughput@Size", "QphH@Size"] {
        let line = out.lines().find(|l| l.trim_start().starts_with(m)).unwrap();
        assert!(
            line.contains("1.00x") && line.contains("same within"),
            "{line}"
        );
    }
    // Q1..Q22 in both tests (and the power test's RF1, RF2), each judged.
    let judged = (out.lines())
        .filter(|l| l.trim_start().starts_with('Q') && l.contains("(s)"))
        .filter(|l| l.contains("same within") || l.contains("not measured"))
        .count();
    assert_eq!(judged, 44, "{out}");
}

#[test]
fn a_query_timeout_is_reported_per_query_and_costs_the_metric_not_the_run() {
    let (code, v, text) = run(&[
        "tpch",
        "--test",
        "power",
        "--query-timeout",
        "0.001",
        "--no-check",
    ]);
    assert_eq!(code, 0, "{text}");
    let t = &v["tpch"];
    // No check, no plan: --no-check skips the work after the run.
    assert_eq!(t["plans"]["skipped"], "--no-check", "{t}");
    assert!(items(&v, 0).iter().all(|i| i["plan_hash"].is_null()), "{t}");
    let timed_out = items(&v, 0)
        .iter()
        .filter(|i| i["timed_out"].as_u64() > Some(0))
        .count();
    assert!(timed_out > 0, "{t}");
    assert!(t["power_at_size"].is_null(), "{t}");
    let notes = t["notes"].to_string();
    assert!(notes.contains("timed out"), "{notes}");
    // Every item was still sent: a timeout is no abort.
    assert_eq!(items(&v, 0).len(), 24);
    assert!(items(&v, 0).iter().all(|i| i["executions"] == 1), "{t}");
}

#[test]
fn a_single_query_loops_on_its_clients_with_fresh_parameters() {
    let (code, v, text) = run(&["tpch-q6", "-c", "2", "-t", "3"]);
    assert_eq!(code, 0, "{text}");
    let i = &v["tpch"]["items"][0];
    assert_eq!(
        (i["item"].as_str(), i["executions"].as_u64()),
        (Some("Q6"), Some(6)),
        "{i}"
    );
    assert_eq!(v["tpch"]["test"], "query");
    assert_eq!(check(&v, "row counts")["status"], "passed");
}

#[test]
fn bad_tpch_command_lines_are_refused_before_connecting() {
    for (args, says) in [
        (vec!["run", "tpch", "-c", "4"], "-c does not apply to TPC-H"),
        (vec!["run", "tpch-q23"], "TPC-H has queries 1 to 22"),
        (
            vec!["run", "tpch", "--test", "power", "--streams", "3"],
            "--streams does not apply",
        ),
        (
            vec!["run", "tpch", "--query-timeout", "0"],
            "--query-timeout must be positive",
        ),
        (
            vec!["run", "tpcc", "--streams", "2"],
            "--streams only applies to TPC-H",
        ),
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

#[test]
fn the_power_test_on_mariadb_returns_what_the_mariadb_client_returns() {
    let m = testkit::MariaDb::shared();
    m.fresh_database("tpch_run");
    let url = m.tcp_url("root", None, "tpch_run");
    let init = stampede(&["init", "tpch", "-q", "--scale", "0.01", "-d", &url]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let r = stampede(&[
        "run",
        "tpch",
        "--test",
        "power",
        "--validation",
        "-d",
        &url,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for i in items(&v, 0)
        .iter()
        .filter(|i| i["item"] != "RF1" && i["item"] != "RF2")
    {
        let q: u8 = i["item"].as_str().unwrap()[1..].parse().unwrap();
        let sql = queries::text(queries::Dialect::Mysql, &queries::validation(q, SCALE));
        let out = m.sql(&format!("USE tpch_run; {sql}"));
        let rows = out.lines().count() as f64;
        assert_eq!(
            i["rows"].as_f64(),
            Some(rows),
            "Q{q}: stampede's rows vs mariadb's\n{sql}"
        );
    }
    assert!(
        v["tpch"]["power_at_size"].as_f64().is_some(),
        "{}",
        v["tpch"]
    );
    // EXPLAIN FORMAT=JSON took every query's plan.
    assert_plan_hashes(&v, 0);
    assert_eq!(v["tpch"]["plans"]["hashed"], 22, "{}", v["tpch"]["plans"]);
    // MariaDB counts an EXPLAIN SELECT in Com_select: taken after the ledger's reading.
    assert_ne!(
        check(&v, "statement ledger")["status"],
        "failed",
        "{}",
        v["checks"]
    );
    assert_eq!(check(&v, "refresh")["status"], "passed", "{}", v["checks"]);
    assert_eq!(
        check(&v, "row counts")["status"],
        "passed",
        "{}",
        v["checks"]
    );
}
