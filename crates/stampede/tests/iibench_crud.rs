//! The insert benchmark and the CRUD mix through the stampede binary, on a private PostgreSQL
//! (shared_buffers 1MB, so iibench's secondary indexes outgrow it within seconds) and a private
//! MariaDB (the smallest buffer pool it takes).
//!
//! What is checked: each run's own checks pass (commit count, row counts, index consistency);
//! independently of them, the table grew by exactly the rows the result says committed inserts
//! added; the iibench result holds the insert and query series, the index samples and the
//! outgrow point against the server's own cache size; a row added behind the CRUD mix's back
//! makes its row-count check fail; a table stampede did not create is refused and kept; bad
//! input is refused before connecting, naming the flag.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::outcome as output;
use common::pg_target;
use serde_json::Value;
use sut::ConnConfig;
use testkit::{MariaDb, PerBinary, Pg};

static PG: PerBinary = PerBinary::new(&[testkit::THROWAWAY, &[("shared_buffers", "1MB")]]);

fn stampede(args: &[&str], target: &[String]) -> (i32, String, String) {
    output(
        Command::new(env!("CARGO_BIN_EXE_stampede"))
            .args(args)
            .args(target),
    )
}

/// `stampede init ARGS` on `target`, which must succeed.
fn init(args: &[&str], target: &[String]) {
    let (code, _, err) = stampede(&[&["init"][..], args].concat(), target);
    assert_eq!(code, 0, "{err}");
}

/// `stampede run ARGS --json JSON` on `target`, which must exit 0: its result and standard
/// output, and every check of it passed ([`all_passed`]; their names).
fn run(args: &[&str], target: &[String], json: &Path, mysql: bool) -> (Value, String, Vec<String>) {
    let run = [&["run"][..], args, &["--json", json.to_str().unwrap()]].concat();
    let (code, out, err) = stampede(&run, target);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let v = read_json(json);
    let names = all_passed(&v, &out, mysql);
    (v, out, names)
}

/// The row-count check's detail names `rows`, the tables' rows counted apart.
fn assert_rows_now(v: &Value, rows: u64) {
    let detail = detail(v, "row counts");
    assert!(detail.contains(&format!("({rows} rows now")), "{detail}");
}

fn fresh_pg(db: &str) -> (&'static Pg, ConnConfig) {
    let pg = PG.get();
    let cfg = testkit::block_on(pg.fresh_database(db));
    (pg, cfg)
}

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The transactions of type `name` the summary reports (`SQL script N: name`, then ` - K
/// transactions (...)`).
fn committed(out: &str, name: &str) -> u64 {
    let mut lines = out.lines();
    lines
        .find(|l| l.starts_with("SQL script") && l.ends_with(&format!(": {name}")))
        .unwrap_or_else(|| panic!("no {name} in\n{out}"));
    let line = lines.find(|l| l.contains(" transactions (")).unwrap();
    line.trim_start_matches(" - ")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Every check of the result passed (the commit count, the workload's own); the names seen.
/// On MySQL the commit count is inconclusive: autocommitted statements send no COMMIT, and
/// `Com_commit` counts only those.
fn all_passed(v: &Value, out: &str, mysql: bool) -> Vec<String> {
    let checks = v["checks"].as_array().expect("checks");
    for c in checks {
        if mysql && c["name"] == "commit count" {
            assert_eq!(c["status"], "skipped", "{c}\n{out}");
            continue;
        }
        assert_eq!(c["status"], "passed", "{c}\n{out}");
    }
    checks
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// The detail of check `name`.
fn detail<'a>(v: &'a Value, name: &str) -> &'a str {
    (v["checks"].as_array().expect("checks").iter())
        .find(|c| c["name"] == name)
        .and_then(|c| c["detail"].as_str())
        .unwrap_or_else(|| panic!("no check {name}: {}", v["checks"]))
}

/// The iibench section: series with inserts (and queries when asked), index samples, and the
/// outgrow point against `cache_bytes`.
fn assert_iibench_section(v: &Value, cache_bytes: u64, queries: bool) {
    let t = &v["iibench"];
    assert_eq!(t["cache_bytes"].as_u64(), Some(cache_bytes), "{t}");
    let series = t["series"].as_array().unwrap();
    assert!(series.len() >= 3, "{t}");
    let inserting = series
        .iter()
        .filter(|p| p["insert_rows_per_s"].as_f64().unwrap() > 0.0)
        .count();
    assert!(inserting >= 2, "{t}");
    if queries {
        assert!(t["queries_per_s"].as_f64().unwrap() > 0.0, "{t}");
        assert!(series
            .iter()
            .any(|p| p["queries_per_s"].as_f64().unwrap() > 0.0));
    }
    let samples = t["index_samples"].as_array().unwrap();
    assert!(samples.len() >= 2, "{t}");
    let g = &t["outgrown"];
    let at = g["at_s"].as_f64().expect("the indexes outgrew the cache");
    assert!(g["index_bytes"].as_u64().unwrap() > cache_bytes, "{g}");
    // It is the first sample above the cache.
    let first = samples
        .iter()
        .find(|s| s["index_bytes"].as_u64().unwrap() > cache_bytes)
        .unwrap();
    assert_eq!(first["t_s"].as_f64(), Some(at));
    assert!(g["insert_rows_per_s_after"].as_f64().is_some(), "{g}");
}

#[test]
fn iibench_on_postgresql_counts_every_committed_row_and_finds_where_the_indexes_outgrow_shared_buffers(
) {
    let (pg, cfg) = fresh_pg("iibench_pg");
    // amcheck, when this PostgreSQL has it (contrib), for bt_index_check.
    let amcheck = testkit::block_on(testkit::scalar(
        &cfg,
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'",
    )) == "1";
    if amcheck {
        testkit::block_on(testkit::query(&cfg, "CREATE EXTENSION amcheck"));
    }
    let target = pg_target(pg, "iibench_pg");
    init(&["iibench"], &target);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ii.json");
    let html = dir.path().join("ii.html");
    let (v, out, names) = run(
        &[
            "iibench",
            "-c",
            "2",
            "--query-clients",
            "1",
            "--rows-per-commit",
            "200",
            "-T",
            "5",
            "-P",
            "1",
            "--no-observe",
            "--random-seed",
            "3",
            "--html",
            html.to_str().unwrap(),
        ],
        &target,
        &json,
        false,
    );
    assert_eq!(
        names,
        [
            "commit count",
            "statement ledger",
            "row count",
            "index consistency"
        ]
    );
    let rows: u64 = testkit::block_on(testkit::scalar(
        &cfg,
        "SELECT count(*) FROM purchases_index",
    ))
    .parse()
    .unwrap();
    assert!(rows > 0);
    assert_eq!(v["iibench"]["rows_inserted"].as_u64(), Some(rows));
    // Whole inserts of 200 rows, all of them counted.
    assert_eq!(rows % 200, 0, "{rows}");
    assert_eq!(committed(&out, "iibench insert") * 200, rows, "{out}");
    assert_iibench_section(&v, 1 << 20, true);
    let detail = detail(&v, "index consistency");
    for index in ["marketsegment", "registersegment", "pdc"] {
        assert!(detail.contains(index), "{detail}");
    }
    if amcheck {
        assert!(detail.contains("bt_index_check"), "{detail}");
    }
    assert!(
        out.contains("secondary indexes outgrew shared_buffers"),
        "{out}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"iibench\">") && page.contains("chart-iibench-index"));

    // A purchases_index stampede did not create is refused, and kept.
    let (_, cfg2) = fresh_pg("iibench_foreign");
    testkit::block_on(testkit::query(
        &cfg2,
        "CREATE TABLE purchases_index (transactionid int); INSERT INTO purchases_index VALUES (7)",
    ));
    let (code, _, err) = stampede(&["init", "iibench"], &pg_target(pg, "iibench_foreign"));
    assert_ne!(code, 0);
    assert!(err.contains("stampede did not create it"), "{err}");
    assert_eq!(
        testkit::block_on(testkit::scalar(
            &cfg2,
            "SELECT count(*) FROM purchases_index"
        )),
        "1"
    );
}

#[test]
fn crud_on_postgresql_keeps_inserted_minus_deleted_and_catches_a_row_added_behind_its_back() {
    let (pg, cfg) = fresh_pg("crud_pg");
    let target = pg_target(pg, "crud_pg");
    init(&["crud", "--tables", "2", "--table-size", "2000"], &target);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("crud.json");
    let mix = [
        "crud",
        "--tables",
        "2",
        "--table-size",
        "2000",
        "-c",
        "4",
        "-T",
        "3",
        "--no-observe",
        "--mix",
        "point=10,index=10,range=5,in=5,insert=10,batch-insert=10,update=10,delete=20",
    ];
    let (v, out, names) = run(&mix, &target, &json, false);
    assert_eq!(
        names,
        [
            "commit count",
            "statement ledger",
            "row counts",
            "index consistency"
        ]
    );
    // Every operation ran, each its own transaction type.
    assert_eq!(v["config"]["txn_types"].as_array().unwrap().len(), 8);
    for op in [
        "crud point read",
        "crud index read",
        "crud range read",
        "crud in-list read",
        "crud insert",
        "crud batch insert",
        "crud batch update",
        "crud batch delete",
    ] {
        assert!(committed(&out, op) > 0, "{op}: {out}");
    }
    // Deletes removed rows: the tables differ from their initial 2 x 2000.
    let rows: u64 = testkit::block_on(testkit::scalar(
        &cfg,
        "SELECT (SELECT count(*) FROM crud1) + (SELECT count(*) FROM crud2)",
    ))
    .parse()
    .unwrap();
    assert_rows_now(&v, rows);
    // The section counts what the run wrote: the tables' change is inserted minus deleted, and
    // the rate is both over the run.
    let c = &v["crud"];
    let (ins, del) = (
        c["rows_inserted"].as_u64().unwrap(),
        c["rows_deleted"].as_u64().unwrap(),
    );
    assert_eq!(ins as i64 - del as i64, rows as i64 - 4000, "{c}");
    let secs = v["measured_duration_s"].as_f64().unwrap();
    let rate = c["rows_written_per_s"].as_f64().unwrap();
    assert!(
        ((ins + del) as f64 / secs - rate).abs() < 1e-6 * rate.max(1.0),
        "{c}"
    );
    assert!(
        out.contains("crud: ") && out.contains(" rows written/s"),
        "{out}"
    );

    // A row inserted by someone else during the run: the count no longer adds up.
    let again = [&["run"][..], &mix[..], &["--json", json.to_str().unwrap()]].concat();
    let (code, out, err) = std::thread::scope(|sc| {
        let runner = sc.spawn(|| stampede(&again, &target));
        let deadline = Instant::now() + Duration::from_secs(30);
        // Wait until the run's 4 clients are connected (its setup uses one session at a
        // time), then add a row with an id stampede never draws.
        loop {
            let n: u64 = testkit::block_on(testkit::scalar(
                &cfg,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = 'crud_pg' \
                 AND application_name = 'stampede'",
            ))
            .parse()
            .unwrap();
            if n >= 4 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the run's clients never connected"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        testkit::block_on(testkit::query(
            &cfg,
            "INSERT INTO crud1 (id, k, c) VALUES (900000001, 1, 'not stampede''s')",
        ));
        runner.join().unwrap()
    });
    assert_ne!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let v = read_json(&json);
    let rows = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "row counts")
        .unwrap()
        .clone();
    assert_eq!(rows["status"], "failed", "{rows}");
    assert!(
        rows["detail"].as_str().unwrap().contains("crud1 has"),
        "{rows}"
    );

    // A sweep keeps each step's rows written per second (the batched writes' figure).
    let sweep = [
        &mix[..5],
        &["-T", "1", "--no-observe", "--sweep", "clients=1,2"],
    ]
    .concat();
    let (v, _, _) = run(&sweep, &target, &json, false);
    let steps = v["sweep"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for x in steps {
        let m = (x["metrics"].as_array().unwrap().iter())
            .find(|m| m["name"] == "rows written/s")
            .unwrap_or_else(|| panic!("{x}"));
        assert!(m["value"].as_f64().unwrap() > 0.0, "{x}");
    }
}

#[test]
fn bad_input_is_refused_before_connecting_naming_the_flag() {
    for (args, says) in [
        (
            &["run", "crud", "--mix", "point=40,select=3"][..],
            "--mix: unknown operation \"select\"",
        ),
        (
            &["run", "crud", "--mix", "point=0"][..],
            "every weight is 0",
        ),
        (
            &["run", "crud", "--batch", "0"][..],
            "--batch must be between",
        ),
        (
            &["run", "iibench", "--query-clients", "1", "-R", "10"][..],
            "-R paces every client",
        ),
        (
            &["run", "iibench", "--rows-per-commit", "0"][..],
            "--rows-per-commit must be at least 1",
        ),
        (
            &["run", "tpcb-like", "--query-clients", "2"][..],
            "--query-clients only applies to iibench",
        ),
        (
            &["run", "iibench", "--mix", "point=1"][..],
            "--mix only applies to crud",
        ),
    ] {
        // A target nobody listens on: the refusal must come before any connection.
        let (code, _, err) = stampede(args, &["-h".into(), "/nonexistent".into()]);
        assert_eq!(code, 64, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The observed MariaDB run's counters: `Handler_write`, `Innodb_rows_inserted` (where the
/// server has it), `Innodb_pages_written` and `Open_files` in every sample of the window; the row
/// counters
/// grew by at least the `rows` the run inserted (each row is one handler write and one InnoDB
/// insert; the server's own bookkeeping may add more), never went down, and the pages written
/// grew (a 6 MB buffer pool cannot hold the run's inserts).
fn assert_status_per_interval(v: &Value, rows: u64) {
    let m = &v["server_metrics"];
    let (start, end) = common::observed_window(v);
    let window: Vec<&Value> = (m["counters"].as_array().unwrap().iter())
        .filter(|c| (start..=end).contains(&c["t_ms"].as_i64().unwrap()))
        .collect();
    assert!(window.len() >= 4, "{} samples", window.len());
    let series = |key: &str| -> Vec<f64> {
        (window.iter())
            .map(|c| {
                c["values"][key]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{key} missing at t_ms {}", c["t_ms"]))
            })
            .collect()
    };
    // MariaDB (10.6 and later) has no Innodb_rows_* status variables, MySQL has: asserted where
    // the server has it, and never made up where it has not.
    let rows_inserted = "mysql.Innodb_rows_inserted";
    let has_rows = window[0]["values"].get(rows_inserted).is_some();
    assert!(has_rows || m["counter_constants"].get(rows_inserted).is_none());
    let keys = if has_rows {
        vec!["mysql.Handler_write", rows_inserted]
    } else {
        vec!["mysql.Handler_write"]
    };
    for key in keys {
        let s = series(key);
        assert!(s.windows(2).all(|w| w[1] >= w[0]), "{key}: {s:?}");
        let d = m["deltas"][key].as_f64().unwrap();
        assert!(
            d >= rows as f64,
            "{key} grew by {d}, the run inserted {rows}"
        );
    }
    let pages = series("mysql.Innodb_pages_written");
    assert!(pages.last() > pages.first(), "{pages:?}");
    assert!(series("mysql.Open_files").iter().all(|&f| f > 0.0));
    // Everything else the server counts is kept too: in the series or, unchanged, apart.
    let all = |key: &str| {
        window[0]["values"].get(key).is_some() || m["counter_constants"].get(key).is_some()
    };
    assert!(all("mysql.Innodb_buffer_pool_pages_free") && all("mysql.Uptime"));
    assert!(m["os"].as_array().is_some_and(|o| !o.is_empty()));
}

#[test]
fn both_on_mariadb_with_a_small_buffer_pool() {
    let m = MariaDb::start(&["--innodb-buffer-pool-size=6M"]);
    m.fresh_database("ii");
    let url = m.socket_url("root", None, "ii");
    let target = vec!["-d".to_string(), url];
    init(&["iibench"], &target);
    let cache: u64 = m
        .sql("SELECT @@innodb_buffer_pool_size")
        .trim()
        .parse()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ii.json");
    // Observed: the server's whole status every interval (seed 001's handler and page graphs).
    let ii = [
        "iibench",
        "-c",
        "2",
        "--query-clients",
        "1",
        "-T",
        "8",
        "-P",
        "1",
    ];
    let (v, _, _) = run(&ii, &target, &json, true);
    let rows: u64 = m
        .sql("SELECT count(*) FROM ii.purchases_index")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(v["iibench"]["rows_inserted"].as_u64(), Some(rows));
    assert_status_per_interval(&v, rows);
    assert_iibench_section(&v, cache, true);
    assert!(detail(&v, "index consistency").contains("CHECK TABLE OK"));

    m.fresh_database("cr");
    let target = vec!["-d".to_string(), m.socket_url("root", None, "cr")];
    init(&["crud", "--tables", "2", "--table-size", "1000"], &target);
    let json = dir.path().join("crud.json");
    let crud = [
        "crud",
        "--tables",
        "2",
        "--table-size",
        "1000",
        "-c",
        "4",
        "-T",
        "3",
        "--no-observe",
    ];
    let (v, _, _) = run(&crud, &target, &json, true);
    let rows: u64 = m
        .sql("SELECT (SELECT count(*) FROM cr.crud1) + (SELECT count(*) FROM cr.crud2)")
        .trim()
        .parse()
        .unwrap();
    assert_rows_now(&v, rows);
}
