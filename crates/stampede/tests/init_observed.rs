//! `stampede init` watched like a run (issue 32, item 2), against a PostgreSQL and a MariaDB
//! this test starts: `init ... --json F --html H` writes a result whose `load` section's rows
//! per table are what `SELECT count(*)` finds in each table, whose per-second series adds up to
//! them, whose server metrics hold the observer's activity samples in the load's window and,
//! on PostgreSQL, the load's COPY among the top statements; the HTML has the rows/s chart and
//! the wait events; standard error has the observer's line. A fleet's or a sharded layout's init
//! refuses `--json` before connecting (exit 64). A bug that loses a step's rows, counts a table
//! twice, opens the observer's window after the load started or leaves the section out of the
//! schema fails here. No timing is asserted.

mod common;

use common::stampede;
use serde_json::Value;
use testkit::{MariaDb, PerBinary, Pg};

static PG: PerBinary = PerBinary::new(&[]);

/// A fresh database `db` with pg_stat_statements (top SQL), and stampede's flags for it.
fn database(pg: &Pg, db: &str) -> Vec<String> {
    pg.psql_on("postgres", &format!("DROP DATABASE IF EXISTS {db}"));
    pg.psql_on("postgres", &format!("CREATE DATABASE {db}"));
    pg.psql_on(db, "CREATE EXTENSION pg_stat_statements");
    common::pg_target(pg, db)
}

fn count(pg: &Pg, db: &str, table: &str) -> u64 {
    let v = pg.psql_on(db, &format!("SELECT count(*) FROM {table}"));
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{table}: {v:?}"))
}

/// `stampede init ARGS TARGET --json --html`, which must exit 0: the result, the page and
/// standard error.
fn init(args: &[&str], target: &[String]) -> (Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("i.json"), dir.path().join("i.html"));
    let mut all: Vec<String> = ["init"].iter().chain(args).map(|s| s.to_string()).collect();
    all.extend(target.iter().cloned());
    all.extend(["-q".into(), "--json".into(), json.display().to_string()]);
    all.extend(["--html".into(), html.display().to_string()]);
    let run = stampede(&all);
    assert_eq!(run.code, 0, "{all:?}\n{}\n{}", run.stdout, run.stderr);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    validates(&v);
    // Each step lies inside the load, in order: an order, not a timing.
    let load = &v["load"];
    let mut end = 0.0;
    for s in load["steps"].as_array().unwrap() {
        let (start, took) = (
            s["start_s"].as_f64().unwrap(),
            s["seconds"].as_f64().unwrap(),
        );
        assert!(
            start + 1e-6 >= end,
            "a step starts before the one before ended: {load}"
        );
        end = start + took;
    }
    assert!(end <= load["seconds"].as_f64().unwrap() + 1e-6, "{load}");
    (v, std::fs::read_to_string(&html).unwrap(), run.stderr)
}

fn validates(v: &Value) {
    let schema: Value = serde_json::from_str(report::SCHEMA).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// The `load` section's tables as (name, rows), after checking that the per-second series adds
/// up to them, table by table and in all.
fn tables_and_series(v: &Value) -> Vec<(String, u64)> {
    let load = &v["load"];
    let tables: Vec<(String, u64)> = (load["tables"].as_array().unwrap().iter())
        .map(|t| {
            (
                t["name"].as_str().unwrap().into(),
                t["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    let series = load["series"].as_array().unwrap();
    assert!(!series.is_empty(), "no per-second series: {load}");
    let mut per_table = vec![0u64; tables.len()];
    let mut all = 0u64;
    for (i, s) in series.iter().enumerate() {
        assert_eq!(s["t_s"].as_u64(), Some(i as u64 + 1), "{s}");
        let by: Vec<u64> = (s["by_table"].as_array().unwrap().iter())
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(by.len(), tables.len(), "{s}");
        assert_eq!(by.iter().sum::<u64>(), s["rows"].as_u64().unwrap(), "{s}");
        all += s["rows"].as_u64().unwrap();
        for (t, n) in per_table.iter_mut().zip(by) {
            *t += n;
        }
    }
    let loaded: Vec<u64> = tables.iter().map(|t| t.1).collect();
    assert_eq!(
        per_table, loaded,
        "the series per table against the tables' rows"
    );
    assert_eq!(all, loaded.iter().sum::<u64>());
    tables
}

/// The observer watched the load: activity samples inside its window, which opened at the
/// load's start (the baseline taken before the loader's first statement).
fn observed(v: &Value) -> &Value {
    let m = &v["server_metrics"];
    let (start, end) = common::observed_window(v);
    let inside = (m["activity"].as_array().unwrap().iter())
        .filter(|a| (start..=end).contains(&a["t_ms"].as_i64().unwrap()))
        .count();
    assert!(inside > 0, "no activity sample in the window: {m}");
    m
}

#[test]
fn init_tpcb_keeps_its_steps_rows_per_second_and_the_server_s_top_sql() {
    let pg = PG.get();
    let target = database(pg, "obs_tpcb");
    let (v, html, err) = init(&["tpcb", "-s", "2"], &target);
    assert_eq!(v["config"]["workload"], "init tpcb");
    let load = &v["load"];
    assert_eq!(load["workload"], "tpcb");
    assert_eq!(load["parameters"]["scale"], 2);
    let tables = tables_and_series(&v);
    for (name, rows) in &tables {
        assert_eq!(*rows, count(pg, "obs_tpcb", name), "{name}");
    }
    assert!(
        tables.contains(&("pgbench_accounts".into(), 200_000)),
        "{tables:?}"
    );
    // pgbench's steps, each with its time, in order.
    let steps: Vec<&str> = (load["steps"].as_array().unwrap().iter())
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "drop tables",
            "create tables",
            "client-side generate",
            "vacuum",
            "primary keys"
        ]
    );
    let m = observed(&v);
    // The load's COPY is among the top statements, with the rows it loaded.
    let copy = (m["statements"].as_array().unwrap().iter())
        .find(|s| {
            s["query"]
                .as_str()
                .unwrap()
                .contains("COPY pgbench_accounts")
        })
        .unwrap_or_else(|| {
            panic!(
                "no COPY pgbench_accounts in the top SQL: {}",
                m["statements"]
            )
        });
    assert_eq!(copy["rows"].as_u64(), Some(200_000), "{copy}");
    // The sizes after the load, as init says them.
    assert_eq!(v["sizes"][0]["when"], "init");
    assert!(err.contains("sizes (plain layout)"), "{err}");
    // The observer's line, after init's own lines.
    let line = (err.lines())
        .find(|l| l.starts_with("waits during the load (average active sessions): "))
        .unwrap_or_else(|| panic!("no observer line:\n{err}"));
    assert!(line.contains("; top SQL by time: "), "{line}");
    assert!(line.contains("COPY pgbench_accounts"), "{line}");
    assert!(err.find("done in ").unwrap() < err.find("waits during the load").unwrap());
    // The page: the load's headline, its rows/s chart and steps, and the server's parts.
    for part in [
        "id=\"chart-load-rows\"",
        "<td>client-side generate</td>",
        "<section id=\"load\"><h2>Database load by wait event</h2>",
        "<section id=\"top-sql\">",
        "Sizes after the load",
    ] {
        assert!(html.contains(part), "{part} not in the page");
    }
    assert!(!html.contains("committed transactions per second"));
}

#[test]
fn every_single_process_init_counts_its_tables_rows() {
    let pg = PG.get();
    for (db, args) in [
        ("obs_tpcc", &["tpcc", "-w", "1"][..]),
        (
            "obs_oltp",
            &["oltp", "--tables", "2", "--table-size", "3000"][..],
        ),
        ("obs_ycsb", &["ycsb", "-p", "recordcount=2000"][..]),
    ] {
        let target = database(pg, db);
        let (v, _, _) = init(args, &target);
        let tables = tables_and_series(&v);
        assert!(!tables.is_empty(), "{db}");
        for (name, rows) in &tables {
            assert_eq!(*rows, count(pg, db, name), "{db}: {name}");
        }
        observed(&v);
    }
    // A loader that reports no progress: its tables' rows from the command line, no series,
    // and a note saying why.
    let target = database(pg, "obs_crud");
    let (v, html, _) = init(&["crud", "--tables", "2", "--table-size", "500"], &target);
    let load = &v["load"];
    assert!(load["series"].as_array().unwrap().is_empty(), "{load}");
    assert!(
        load["notes"][0].as_str().unwrap().contains("no progress"),
        "{load}"
    );
    for t in load["tables"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(
            t["rows"].as_u64(),
            Some(count(pg, "obs_crud", name)),
            "{name}"
        );
    }
    assert!(html.contains("chart-load-rows"));
}

#[test]
fn init_oltp_on_mariadb_is_watched_too() {
    let m = MariaDb::shared();
    m.fresh_database("obs");
    let target = vec!["-d".to_string(), m.socket_url("root", None, "obs")];
    let (v, html, err) = init(&["oltp", "--tables", "2", "--table-size", "5000"], &target);
    let tables = tables_and_series(&v);
    for (name, rows) in &tables {
        let n: u64 = m
            .sql(&format!("SELECT count(*) FROM obs.{name}"))
            .trim()
            .parse()
            .unwrap();
        assert_eq!(*rows, n, "{name}");
    }
    let sm = observed(&v);
    // The server wrote at least the rows the loader says it inserted, inside the window (a
    // window opened after the load started would miss the first multi-row INSERTs).
    let loaded: u64 = tables.iter().map(|t| t.1).sum();
    let written = sm["deltas"]["mysql.Handler_write"].as_f64().unwrap_or(0.0);
    assert!(
        written >= loaded as f64,
        "Handler_write grew by {written} for {loaded} rows"
    );
    assert!(err.contains("waits during the load"), "{err}");
    assert!(html.contains("id=\"chart-load-rows\""));
}

#[test]
fn a_fleet_or_a_sharded_layout_refuses_a_result_file_before_connecting() {
    // Nothing listens there: a refusal after connecting would be another exit code.
    let target = ["-h", "/nonexistent-socket-dir", "-p", "1", "-d", "x"];
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("f.json");
    let json = json.to_str().unwrap();
    for (extra, names) in [
        (&["--fleet", "f", "--fleet-size", "2"][..], "--fleet"),
        (
            &["--layout", "fdw", "--shard", "host=/x"][..],
            "sharded layout",
        ),
    ] {
        let mut args = vec!["init", "tpcb", "--json", json];
        args.extend(extra);
        args.extend(target);
        let run = stampede(&args);
        assert_eq!(run.code, 64, "{args:?}\n{}", run.stderr);
        assert!(run.stderr.contains(names), "{}", run.stderr);
        assert!(run.stderr.contains("--json and --html"), "{}", run.stderr);
        assert!(!std::path::Path::new(json).exists());
    }
}
