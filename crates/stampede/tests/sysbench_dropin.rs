//! `stampede sysbench`: sysbench 1.0.20's documented command lines for its OLTP tests, run
//! unchanged (but for the program name) against a PostgreSQL server the test starts: each
//! test's prepare, run and cleanup, with sysbench's output blocks and exit statuses, and the
//! server's tables as sysbench leaves them.

mod common;

use std::process::Command;

use common::SYSBENCH_TESTS;
use testkit::{PerBinary, THROWAWAY};

static PG: PerBinary = PerBinary::new(&[THROWAWAY, &[("max_connections", "60")]]);

/// `stampede sysbench ARGS` with the pgsql driver pointed at the test's server.
fn sysbench(db: &str, args: &[&str]) -> (i32, String, String) {
    let pg = PG.get();
    let mut c = Command::new(env!("CARGO_BIN_EXE_stampede"));
    c.arg("sysbench")
        .arg("--db-driver=pgsql")
        .arg(format!("--pgsql-host={}", pg.socket_dir().display()))
        .arg(format!("--pgsql-port={}", pg.port()))
        .arg("--pgsql-user=postgres")
        .arg(format!("--pgsql-db={db}"))
        .args(args);
    common::outcome(&mut c)
}

fn scalar(db: &str, sql: &str) -> String {
    let mut cfg = PG.get().conn_config().clone();
    cfg.dbname = db.into();
    testkit::block_on(testkit::scalar(&cfg, sql))
}

/// The number after `label` on its line of sysbench's summary (of `60.0000/0.00` the first,
/// of `2.0012s` the seconds).
fn number(text: &str, label: &str) -> f64 {
    let word = common::word_after(text, label);
    let first = word.split('/').next().unwrap().trim_end_matches('s');
    first.parse().unwrap_or_else(|_| panic!("{label} {word}"))
}

#[test]
fn every_oltp_test_prepares_runs_and_cleans_up_as_sysbench_does() {
    testkit::block_on(testkit::query(
        PG.get().conn_config(),
        "CREATE DATABASE sb_dropin",
    ));
    let db = "sb_dropin";
    for (test, (r, w, o)) in SYSBENCH_TESTS {
        let size = ["--tables=2", "--table-size=300"];
        // prepare: sysbench's lines, tables with sysbench's schema and rows.
        let (code, out, err) = sysbench(db, &[&[*test][..], &size, &["prepare"]].concat());
        assert_eq!(code, 0, "{test} prepare\n{out}\n{err}");
        assert!(
            out.starts_with("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n"),
            "{out}"
        );
        for t in 1..=2 {
            for line in [
                format!("Creating table 'sbtest{t}'...\n"),
                format!("Inserting 300 records into 'sbtest{t}'\n"),
                format!("Creating a secondary index on 'sbtest{t}'...\n"),
            ] {
                assert!(out.contains(&line), "{test}: {line:?} in\n{out}");
            }
        }
        assert_eq!(scalar(db, "SELECT count(*) FROM sbtest2"), "300");
        // A second prepare finds the tables: sysbench's error, nothing dropped.
        let (code, out, _) = sysbench(db, &[&[*test][..], &size, &["prepare"]].concat());
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("FATAL: PQexec() failed: 7 relation \"sbtest1\" already exists"),
            "{out}"
        );
        assert_eq!(scalar(db, "SELECT count(*) FROM sbtest1"), "300");

        // run: sysbench's blocks, on standard output.
        let (code, out, err) = sysbench(
            db,
            &[
                &[*test][..],
                &size,
                &[
                    "--threads=2",
                    "--events=120",
                    "--time=0",
                    "--report-interval=1",
                    "run",
                ],
            ]
            .concat(),
        );
        assert_eq!(code, 0, "{test} run\n{out}\n{err}");
        assert!(err.is_empty(), "{test}: nothing on standard error: {err}");
        for block in [
            "Running the test with following options:\nNumber of threads: 2\n",
            "Report intermediate results every 1 second(s)\n",
            "Threads started!\n",
            "SQL statistics:\n    queries performed:\n",
            "\nGeneral statistics:\n",
            "\nLatency (ms):\n",
            "\nThreads fairness:\n    events (avg/stddev):           ",
        ] {
            assert!(out.contains(block), "{test}: {block:?} in\n{out}");
        }
        assert!(
            !out.contains("stampede"),
            "{test}: stampede's own lines in\n{out}"
        );
        let events = number(&out, "total number of events:") as u64;
        assert_eq!(events, 120, "{test}\n{out}");
        // 60 events each: the average of the two threads.
        assert_eq!(number(&out, "events (avg/stddev):"), 60.0, "{test}\n{out}");
        assert_eq!(number(&out, "read:") as u64, r * events, "{test}\n{out}");
        assert_eq!(number(&out, "write:") as u64, w * events, "{test}\n{out}");
        assert_eq!(number(&out, "other:") as u64, o * events, "{test}\n{out}");
        if *test == "oltp_insert" {
            assert_eq!(scalar(db, "SELECT sum(n) FROM (SELECT count(*) AS n FROM sbtest1 UNION ALL SELECT count(*) FROM sbtest2) t"), "720");
        }

        // cleanup: sysbench's lines, the tables gone.
        let (code, out, _) = sysbench(db, &[*test, "--tables=2", "cleanup"]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("Dropping table 'sbtest1'...\nDropping table 'sbtest2'...\n"),
            "{out}"
        );
        assert_eq!(
            scalar(
                db,
                "SELECT count(*) FROM pg_class WHERE relname LIKE 'sbtest%'"
            ),
            "0"
        );
    }
}

#[test]
fn bulk_insert_prepares_runs_and_cleans_up_one_table_per_thread() {
    testkit::block_on(testkit::query(
        PG.get().conn_config(),
        "CREATE DATABASE sb_bulk",
    ));
    let db = "sb_bulk";
    let (code, out, _) = sysbench(db, &["bulk_insert", "--threads=2", "prepare"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Creating table 'sbtest1'...\nCreating table 'sbtest2'...\n"),
        "{out}"
    );
    let (code, out, err) = sysbench(
        db,
        &[
            "bulk_insert",
            "--threads=2",
            "--events=5000",
            "--time=0",
            "run",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(number(&out, "total number of events:"), 5000.0, "{out}");
    assert_eq!(
        scalar(
            db,
            "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)"
        ),
        "5000"
    );
    let (code, out, _) = sysbench(db, &["bulk_insert", "--threads=2", "cleanup"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Dropping table 'sbtest2'...\n"), "{out}");
}

#[test]
fn help_and_version_are_sysbench_s() {
    let (code, out, _) = sysbench("postgres", &["--version"]);
    assert_eq!((code, out.as_str()), (0, "sysbench 1.0.20\n"));
    let (code, out, _) = sysbench("postgres", &["--help"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("Usage:\n  sysbench [options]... [testname] [command]\n"));
    assert!(out.contains("  --threads=N "), "{out}");
    let (code, out, _) = sysbench("postgres", &["oltp_read_write", "help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("oltp_read_write options:\n  --auto_inc[=on|off] "),
        "{out}"
    );
    assert!(out.contains("  --tables=N "), "{out}");
}
