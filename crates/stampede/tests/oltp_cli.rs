//! sysbench's OLTP workloads through the stampede binary, on a real server: `run` with a
//! sysbench test name (sysbench's summary, progress lines, JSON, row-count and commit checks),
//! seed 004's write-only command line, `init oltp --bulk-insert` and bulk_insert with sysbench's
//! pgsql options, `--embedded` with a sysbench test, and the command lines refused.

mod common;

use common::oltp::{database, fixture, init, query, rt, scalar_i64, stampede_on};
use common::stampede3 as stampede_raw;

/// `stampede run ARGS -h SOCKET -p PORT -U postgres -d DB` on the fixture's server: (exit code,
/// stdout, stderr).
fn stampede_run(db: &str, args: &[&str]) -> (i32, String, String) {
    stampede_on(db, &[&["run"][..], args].concat())
}

/// The number after `label` on its line of `text`.
fn number_after(text: &str, label: &str) -> u64 {
    let word = common::word_after(text, label);
    word.parse().unwrap_or_else(|_| panic!("{label} {word}"))
}

#[test]
fn cli_runs_oltp_read_write_and_point_select_with_sysbench_s_summary() {
    rt().block_on(async {
        let cfg = database("oltp_cli").await;
        init(&cfg, 2, 1000, 2).await;
    });
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rw.json");
    let (code, out, err) = stampede_run(
        "oltp_cli",
        &[
            "oltp_read_write",
            "--tables=2",
            "--table-size=1000",
            "--threads=2",
            "--time=3",
            "--warmup-time=1",
            "--report-interval=1",
            "--progress-style=sysbench",
            "--no-observe",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    eprintln!("{out}");
    assert!(
        out.contains("transaction type: <sysbench: oltp_read_write>\n"),
        "{out}"
    );
    assert!(
        out.contains("\ntables: 2 x 1000 rows\nquery mode: prepared\nnumber of clients (sysbench threads): 2\n"),
        "{out}"
    );
    assert!(!out.contains("scaling factor"), "{out}");
    assert!(out.contains("duration: 3 s\n"), "{out}");
    // Passed, or inconclusive when autovacuum ran meanwhile (its commits count too).
    assert!(
        out.contains("\n  PASSED   commit count: ")
            || out.contains("\n  SKIPPED  commit count: inconclusive: "),
        "{out}"
    );
    assert!(
        out.contains(
            "\n  PASSED   row counts: sbtest1..2: 2000 rows before, 2000 after (+0; expected +0: "
        ),
        "{out}"
    );
    assert!(
        out.contains("sysbench summary (oltp_read_write, after a 1 s warm-up: "),
        "{out}"
    );
    assert!(
        out.contains("\nSQL statistics:\n    queries performed:\n"),
        "{out}"
    );
    assert!(out.contains("\n         95th percentile: "), "{out}");
    assert!(
        out.contains("latency percentiles in milliseconds after the warm-up"),
        "{out}"
    );
    // sysbench's progress lines, on standard output as sysbench prints them, with its
    // read/write/other split: 14 reads, 4 writes, 2 other per oltp_read_write transaction.
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!(lines.len() >= 2, "{out}");
    assert!(lines[0].starts_with("[ 1s ] thds: 2 tps: "), "{out}");
    for l in &lines {
        let num = |label: &str| -> f64 {
            let i = l.find(label).unwrap_or_else(|| panic!("{label} in {l}")) + label.len();
            l[i..]
                .split([' ', '/', ')'])
                .next()
                .unwrap()
                .parse()
                .unwrap_or_else(|_| panic!("{label} in {l}"))
        };
        // Each figure is rounded to 0.01: tps's rounding, times 20, moves qps by up to 0.1.
        let tps = num("tps: ");
        assert!(
            (num("(r/w/o: ") - 14.0 * tps).abs() <= 14.0 * 0.005 + 0.005,
            "{l}"
        );
        assert!(
            (num("qps: ") - 20.0 * tps).abs() <= 20.0 * 0.005 + 0.005,
            "{l}"
        );
        assert!(
            l.contains(" lat (ms,95%): ") && l.contains(" err/s: "),
            "{l}"
        );
        assert!(l.ends_with(" reconn/s: 0.00"), "{l}");
    }
    assert!(
        !err.contains("progress: "),
        "one progress style per run: {err}"
    );
    // sysbench's split: 14 reads, 4 writes, 2 other per transaction at defaults.
    let txns = number_after(&out, "transactions:");
    assert!(txns > 0);
    assert_eq!(number_after(&out, "read:"), 14 * txns);
    assert_eq!(number_after(&out, "write:"), 4 * txns);
    assert_eq!(number_after(&out, "other:"), 2 * txns);
    assert_eq!(number_after(&out, "total number of events:"), txns);
    // The warm-up is left out of the sysbench block only.
    let all = number_after(&out, "number of transactions actually processed:");
    assert!(txns < all, "{txns} after the warm-up, {all} in all");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["config"]["workload"], "oltp_read_write");
    assert_eq!(v["sysbench"]["test"], "oltp_read_write");
    assert_eq!(v["sysbench"]["reads_per_txn"], 14);
    assert_eq!(v["sysbench"]["options"]["table-size"], "1000");
    assert_eq!(v["sysbench"]["warmup_s"], 1.0);

    // oltp_point_select by events: sysbench's total, shared between the clients.
    let (code, out, err) = stampede_run(
        "oltp_cli",
        &[
            "oltp_point_select",
            "--tables=2",
            "--table-size=1000",
            "--threads=4",
            "--events=200",
            "--time=0",
            "--rand-type=uniform",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("transaction type: <sysbench: oltp_point_select>\n"),
        "{out}"
    );
    assert!(
        out.contains("number of transactions actually processed: 200/200\n"),
        "{out}"
    );
    assert_eq!(number_after(&out, "total number of events:"), 200);
    assert_eq!(number_after(&out, "read:"), 200);
    assert_eq!(number_after(&out, "write:"), 0);
    assert_eq!(number_after(&out, "other:"), 0);
    assert_eq!(number_after(&out, "ignored errors:"), 0);
    assert!(
        out.contains("\n  PASSED   row counts: sbtest1..2: 2000 rows before, 2000 after (+0; expected +0: no inserts or deletes)\n"),
        "{out}"
    );
    assert!(out.contains("\n  PASSED   commit count: "), "{out}");

    // sysbench's options name a sysbench workload; a DBNAME positional stays a database.
    let (code, _, err) = stampede_run("oltp_cli", &["--tables=2", "-T", "1"]);
    assert_eq!(code, 64);
    assert!(
        err.contains("--tables only apply to sysbench's workloads"),
        "{err}"
    );
}

/// Seed 004's procedure (AWS's Aurora write-only sysbench run) at a reduced size, from one
/// command line as in the README: oltp_read_write with every read at 0, many clients, a
/// report per interval, on data `stampede init oltp` loaded; write-only is also `oltp_write_only`.
#[test]
fn seed_004_write_only_runs_from_one_command_line() {
    rt().block_on(async {
        let cfg = database("oltp_seed004").await;
        init(&cfg, 4, 500, 2).await;
        query(
            &cfg,
            "alter database oltp_seed004 set deadlock_timeout = '20ms'",
        )
        .await;
    });
    let common = [
        "--tables=4",
        "--table-size=500",
        "--threads=16",
        "--time=3",
        "--report-interval=1",
        "--no-observe",
    ];
    let mut args = vec!["oltp_read_write"];
    args.extend(common);
    args.extend([
        "--point-selects=0",
        "--simple-ranges=0",
        "--sum-ranges=0",
        "--order-ranges=0",
        "--distinct-ranges=0",
    ]);
    let (code, out, err) = stampede_run("oltp_seed004", &args);
    assert_eq!(code, 0, "{out}\n{err}");
    let txns = number_after(&out, "transactions:");
    assert!(txns > 0, "{out}");
    assert_eq!(number_after(&out, "read:"), 0);
    assert_eq!(number_after(&out, "write:"), 4 * txns);
    assert!(
        out.contains("number of clients (sysbench threads): 16\n"),
        "{out}"
    );
    assert!(
        out.contains("\n  PASSED   row counts: sbtest1..4: 2000 rows before, 2000 after (+0; "),
        "{out}"
    );
    // The same mix by its own name.
    let mut args = vec!["oltp_write_only"];
    args.extend(common);
    let (code, out, err) = stampede_run("oltp_seed004", &args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(number_after(&out, "read:"), 0);
    let txns = number_after(&out, "transactions:");
    assert_eq!(number_after(&out, "write:"), 4 * txns);
    assert!(out.contains("\n  PASSED   row counts: "), "{out}");
}

/// sysbench 1.0.20's bulk_insert: one table per client, `init oltp --bulk-insert` as its
/// prepare, reached through sysbench's pgsql options. What the server saw is read from its own
/// statistics: the rows each table received (pg_stat_user_tables, and max(id) = count(*): ids
/// 1..n with no gap) and the number of multi-row INSERT statements (pg_stat_statements). 50,000
/// rows per client make one INSERT when the 512 KiB buffer fills (at row 39,034) and one when the
/// run ends (sysbench's bulk_insert_done): 2 per client.
#[test]
fn bulk_insert_appends_rows_in_512_kib_inserts_counted_by_the_server() {
    let cfg = rt().block_on(async {
        let cfg = database("oltp_bulk").await;
        query(&cfg, "create extension if not exists pg_stat_statements").await;
        cfg
    });
    let f = fixture();
    let port = f.port.to_string();
    let pgsql = [
        "--db-driver=pgsql",
        "--pgsql-host",
        f.socket.as_str(),
        "--pgsql-port",
        port.as_str(),
        "--pgsql-user=postgres",
        "--pgsql-db=oltp_bulk",
        // Trust authentication ignores it; it must not be printed or saved.
        "--pgsql-password",
        "pw-never-printed",
    ];
    let mut init_args = vec!["init", "oltp", "--bulk-insert", "--tables", "2"];
    init_args.extend(pgsql);
    let (code, out, err) = stampede_raw(&init_args);
    assert_eq!(code, 0, "{out}\n{err}");
    rt().block_on(async {
        // sysbench's schema for bulk_insert: id and k only, empty.
        let cols = query(
            &cfg,
            "select string_agg(column_name, ',' order by ordinal_position) from \
             information_schema.columns where table_name = 'sbtest2'",
        )
        .await;
        assert_eq!(cols[0][0].as_deref(), Some("id,k"));
        query(
            &cfg,
            "select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)",
        )
        .await;
    });
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bulk.json");
    let mut run_args = vec![
        "run",
        "bulk_insert",
        "--threads=2",
        "--events=100000",
        "--time=0",
        "--no-observe",
        "--json",
        json.to_str().unwrap(),
    ];
    run_args.extend(pgsql);
    let (code, out, err) = stampede_raw(&run_args);
    assert_eq!(code, 0, "{out}\n{err}");
    eprintln!("{out}");
    assert!(
        out.contains("transaction type: <sysbench: bulk_insert>\n"),
        "{out}"
    );
    assert!(
        out.contains("\ntables: 2 (one per client, bulk_insert)\n"),
        "{out}"
    );
    assert!(!out.contains("scaling factor"), "{out}");
    assert!(
        out.contains(
            "\n  PASSED   row counts: sbtest1..2: 100000 rows inserted (expected 100000: "
        ),
        "{out}"
    );
    assert!(
        out.contains("\n  PASSED   commit count: ")
            || out.contains("\n  SKIPPED  commit count: inconclusive: "),
        "{out}"
    );
    assert_eq!(number_after(&out, "transactions:"), 100_000);
    assert_eq!(number_after(&out, "write:"), 4);
    assert_eq!(number_after(&out, "read:"), 0);
    assert_eq!(number_after(&out, "other:"), 0);
    let saved = std::fs::read_to_string(&json).unwrap();
    assert!(!saved.contains("pw-never-printed"), "password saved");
    assert!(!out.contains("pw-never-printed") && !err.contains("pw-never-printed"));
    let v: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(v["sysbench"]["test"], "bulk_insert");
    assert_eq!(v["sysbench"]["writes_after_run"], 2);

    rt().block_on(async {
        let stmt = |col: &'static str| {
            let cfg = cfg.clone();
            async move {
                scalar_i64(
                    &cfg,
                    &format!(
                        "select coalesce(sum({col}), 0) from pg_stat_statements where dbid = \
                         (select oid from pg_database where datname = current_database()) and \
                         query ~ '^INSERT INTO sbtest[12] VALUES'"
                    ),
                )
                .await
            }
        };
        assert_eq!(stmt("calls").await, 4, "multi-row INSERTs");
        assert_eq!(stmt("rows").await, 100_000, "rows inserted");
        for t in 1..=2 {
            // The server's own per-table counter (flushed by the backends as they exit).
            let mut ins = 0;
            for _ in 0..50 {
                ins = scalar_i64(
                    &cfg,
                    &format!(
                        "select n_tup_ins from pg_stat_user_tables where relname = 'sbtest{t}'"
                    ),
                )
                .await;
                if ins == 50_000 {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            assert_eq!(ins, 50_000, "sbtest{t}");
            let r = query(&cfg, &format!("select count(*), max(id) from sbtest{t}")).await;
            assert_eq!(r[0][0].as_deref(), Some("50000"));
            assert_eq!(r[0][1].as_deref(), Some("50000"));
        }
    });

    // A second run on the filled tables is refused before it starts (sysbench would stop at the
    // first duplicate id), with the way out.
    let (code, out, err) = stampede_raw(&run_args);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("but sbtest1 has 50000 rows, sbtest2 has 50000 rows: empty them with `stampede init oltp --bulk-insert --tables 2`"),
        "{err}"
    );
}

/// `--embedded` and a sysbench test name on `run` do not conflict: the test takes the DBNAME
/// positional's place, and the embedded server is loaded at the sysbench size asked for.
#[test]
fn embedded_server_runs_a_sysbench_test_named_positionally() {
    let (code, out, err) = stampede_raw(&[
        "run",
        "--embedded",
        "oltp_point_select",
        "--tables=2",
        "--table-size=100",
        "--threads=2",
        "--events=50",
        "--time=0",
        "--no-observe",
        "--set",
        "shared_buffers=32MB",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("loading 2 sbtest table(s) of 100 rows on the embedded server"),
        "{err}"
    );
    assert_eq!(number_after(&out, "total number of events:"), 50);
    assert!(
        out.contains("\n  PASSED   row counts: sbtest1..2: 200 rows before, 200 after (+0; "),
        "{out}"
    );
    // A DBNAME there still names a second target: a usage error (exit 64).
    let (code, _, err) = stampede_raw(&["run", "--embedded", "mydb", "-t", "1"]);
    assert_eq!(code, 64, "{err}");
    assert!(
        err.contains("error: --embedded and a database name"),
        "{err}"
    );
}
