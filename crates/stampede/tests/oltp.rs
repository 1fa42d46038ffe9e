//! sysbench's OLTP workloads driven through the library (`load::oltp` and `engine::run`) against
//! a real server: `load::oltp` makes sysbench's schema, every workload runs at a small size, and
//! the per-transaction query counts are read from the server's own statistics
//! (pg_stat_statements), not from stampede's counters. With Debian's sysbench installed, the
//! schema is compared with the one `sysbench oltp_common prepare` creates, and each tool runs
//! oltp_point_select on the data the other loaded. The command line is in tests/oltp_cli.rs.

mod common;

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::oltp::{database, fixture, init, query, rt, scalar_i64};
use engine::{RunSpec, Stop};
use load::oltp as loader;
use sut::{ConnConfig, QueryMode, Session};
use workload::oltp::{OltpWorkload, Options, Test};

/// A thread per client, prepared statements, retried up to 1000 times, seed 7.
fn spec(clients: u32, per_client: u64) -> RunSpec {
    let stop = Stop::Transactions(per_client);
    RunSpec {
        max_tries: 1000,
        seed: 7,
        ..engine::RunSpec::new(clients, clients, stop, QueryMode::Prepared)
    }
}

fn run(cfg: &ConnConfig, w: OltpWorkload, spec: &RunSpec) -> engine::Outcome {
    let out = engine::run(
        spec,
        Arc::new(w),
        &cfg.clone().into(),
        Arc::new(AtomicBool::new(false)),
        &mut |_| {},
    )
    .unwrap();
    assert!(out.aborted.is_empty(), "aborted: {:?}", out.aborted);
    out
}

fn sysbench_available() -> bool {
    let ok = Command::new("sysbench")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok && std::env::var_os("CI").is_some() {
        panic!("sysbench is not installed (scripts/install-deps.sh installs it)");
    }
    ok
}

fn sysbench(db: &str, args: &[&str]) -> String {
    let f = fixture();
    let out = Command::new("sysbench")
        .args([
            "--db-driver=pgsql",
            &format!("--pgsql-host={}", f.socket),
            &format!("--pgsql-port={}", f.port),
            "--pgsql-user=postgres",
            &format!("--pgsql-db={db}"),
        ])
        .args(args)
        .output()
        .expect("run sysbench");
    testkit::ok_text(&out, &format!("sysbench {args:?}"))
}

/// Columns, constraints, indexes and sequences of the sbtest tables.
async fn catalog(cfg: &ConnConfig) -> Vec<Vec<Option<String>>> {
    let columns = testkit::columns_query("sbtest%");
    let sqls = [
        columns.as_str(),
        "select conrelid::regclass::text, conname, pg_get_constraintdef(oid) from pg_constraint \
         where connamespace = 'public'::regnamespace order by 1, 2",
        "select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by 1, 2",
        "select sequencename, data_type, last_value from pg_sequences where schemaname = 'public' order by 1",
        "select relname, relkind, relpersistence, reloptions::text from pg_class \
         where relnamespace = 'public'::regnamespace order by 1",
    ];
    let mut out = Vec::new();
    for sql in sqls {
        out.push(vec![Some(format!("-- {sql}"))]);
        out.extend(query(cfg, sql).await);
    }
    out
}

#[test]
fn init_loads_every_row_in_parallel_and_drops_only_its_tables() {
    rt().block_on(async {
        let cfg = database("oltp_init").await;
        query(&cfg, "create table sbtest_keep(x int); create table sbtest3(x int)").await;
        // 2 tables, 5 connections: each table is split into 3 ranges.
        let r = init(&cfg, 2, 1000, 5).await;
        assert_eq!(r.rows, vec![1000, 1000]);
        assert_eq!(r.plain_tasks, 6);
        for t in 1..=2 {
            assert_eq!(
                scalar_i64(&cfg, &format!("select count(distinct id) from sbtest{t}")).await,
                1000
            );
            assert_eq!(
                scalar_i64(
                    &cfg,
                    &format!("select count(*) from sbtest{t} where k between 1 and 1000 and length(c) = 119 and length(pad) = 59 and rtrim(c) ~ '^([0-9]{{11}}-){{9}}[0-9]{{11}}$'")
                )
                .await,
                1000
            );
        }
        // Untouched: not among the tables it was asked to create.
        assert_eq!(scalar_i64(&cfg, "select count(*) from sbtest_keep").await, 0);
        assert_eq!(scalar_i64(&cfg, "select count(*) from sbtest3").await, 0);
        // Same seed, one connection per table (COPY FREEZE): the same data.
        let a = query(&cfg, "select md5(string_agg(id||','||k||','||c||','||pad, ';' order by id)) from sbtest2").await;
        let r = init(&cfg, 2, 1000, 1).await;
        assert_eq!(r.frozen_tasks, 2);
        let b = query(&cfg, "select md5(string_agg(id||','||k||','||c||','||pad, ';' order by id)) from sbtest2").await;
        assert_eq!(a, b);
    });
}

#[test]
fn schema_equals_sysbench_prepare_and_each_tool_runs_on_the_others_data() {
    if !sysbench_available() {
        eprintln!("sysbench not installed: skipped");
        return;
    }
    rt().block_on(async {
        let theirs = database("oltp_sysbench").await;
        let ours = database("oltp_stampede").await;
        sysbench(
            "oltp_sysbench",
            &["--tables=2", "--table-size=500", "oltp_common", "prepare"],
        );
        init(&ours, 2, 500, 2).await;
        assert_eq!(catalog(&ours).await, catalog(&theirs).await);

        // sysbench on stampede's data, stampede on sysbench's.
        let text = sysbench(
            "oltp_stampede",
            &[
                "--tables=2",
                "--table-size=500",
                "--events=200",
                "--time=0",
                "oltp_point_select",
                "run",
            ],
        );
        assert!(
            text.contains("ignored errors:                      0"),
            "{text}"
        );
        let w = OltpWorkload::new(
            Test::PointSelect,
            Options {
                tables: 2,
                table_size: 500,
                ..Default::default()
            },
        )
        .unwrap();
        let out = run(&theirs, w, &spec(2, 100));
        assert_eq!(out.total.total().committed(), 200);
    });
}

/// (test, options, expected calls per transaction of: point, range(4 kinds), index update,
/// non-index update, delete, insert, BEGIN, COMMIT)
#[test]
fn every_workload_sends_sysbench_s_queries_per_transaction() {
    rt().block_on(async {
        let cfg = database("oltp_counts").await;
        query(&cfg, "create extension if not exists pg_stat_statements").await;
        init(&cfg, 2, 1000, 2).await;
        let n: u64 = 25;
        let write_only_004 = Options {
            tables: 2,
            table_size: 1000,
            point_selects: 0,
            simple_ranges: 0,
            sum_ranges: 0,
            order_ranges: 0,
            distinct_ranges: 0,
            ..Default::default()
        };
        let base = Options {
            tables: 2,
            table_size: 1000,
            ..Default::default()
        };
        let cases: Vec<(Test, Options)> = vec![
            (Test::ReadWrite, base.clone()),
            (Test::ReadOnly, base.clone()),
            (Test::WriteOnly, base.clone()),
            (Test::ReadWrite, write_only_004),
            (
                Test::ReadWrite,
                Options {
                    skip_trx: true,
                    range_selects: false,
                    point_selects: 3,
                    ..base.clone()
                },
            ),
            (Test::PointSelect, base.clone()),
            (Test::UpdateIndex, base.clone()),
            (Test::UpdateNonIndex, base.clone()),
            (Test::Delete, base.clone()),
            (Test::Insert, base.clone()),
        ];
        for (test, opts) in cases {
            let w = OltpWorkload::new(test, opts.clone()).unwrap();
            let q = w.query_counts();
            let before: Vec<i64> = count_rows(&cfg, 2).await;
            query(
                &cfg,
                "select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)",
            )
            .await;
            let out = run(&cfg, w, &spec(1, n));
            let committed = out.total.total().committed();
            assert_eq!(committed, n, "{test:?}");
            let calls = |pattern: &'static str| {
                let cfg = cfg.clone();
                async move {
                    scalar_i64(
                        &cfg,
                        &format!(
                            "select coalesce(sum(calls), 0) from pg_stat_statements \
                             where dbid = (select oid from pg_database where datname = current_database()) \
                               and query ~ '{pattern}'"
                        ),
                    )
                    .await as u64
                }
            };
            let reads = calls("^SELECT .* FROM sbtest[0-9]+ WHERE id").await;
            let writes = calls("^(UPDATE|DELETE FROM|INSERT INTO) sbtest[0-9]+ ").await;
            let other = calls("^(BEGIN|COMMIT)$").await;
            let name = test.name();
            assert_eq!(reads, q.reads * n, "{name} {opts:?}: reads");
            assert_eq!(writes, q.writes * n, "{name} {opts:?}: writes");
            // BEGIN and COMMIT: pg_stat_statements counts a prepared utility statement once per
            // session (at its Parse), not per Execute; only their presence is checked.
            assert_eq!(other, if q.other > 0 { 2 } else { 0 }, "{name}: BEGIN/COMMIT");
            if test == Test::ReadWrite && q.reads == 14 {
                // sysbench's 18 statements per oltp_read_write transaction at defaults (plus
                // BEGIN and COMMIT).
                assert_eq!(reads + writes, 18 * n);
            }
            // The check after a run: inserts and deletes balance.
            let after = count_rows(&cfg, 2).await;
            let delta: i64 = after.iter().sum::<i64>() - before.iter().sum::<i64>();
            match test {
                Test::Insert => assert_eq!(delta, n as i64, "{name}"),
                Test::Delete => {
                    let deleted = scalar_i64(&cfg, "select coalesce(sum(rows), 0) from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database()) and query ~ '^DELETE'").await;
                    assert_eq!(delta, -deleted, "{name}");
                }
                _ => assert_eq!(delta, 0, "{name} {opts:?}"),
            }
        }
    });
}

async fn count_rows(cfg: &ConnConfig, tables: u32) -> Vec<i64> {
    let mut s = Session::connect(cfg).await.unwrap();
    let r = loader::row_counts(&mut s, tables).await.unwrap();
    s.close().await;
    r
}

/// Several clients deleting and re-inserting the same few ids: the duplicate keys and deadlocks
/// sysbench ignores are retried, nothing fails, and the row count is unchanged.
#[test]
fn concurrent_delete_inserts_retry_duplicate_keys_and_keep_row_counts() {
    rt().block_on(async {
        let cfg = database("oltp_conflicts").await;
        // Deadlocks are part of the point; don't wait a second for each.
        query(
            &cfg,
            "alter database oltp_conflicts set deadlock_timeout = '20ms'",
        )
        .await;
        init(&cfg, 1, 20, 1).await;
        let w = OltpWorkload::new(
            Test::WriteOnly,
            Options {
                tables: 1,
                table_size: 20,
                delete_inserts: 2,
                ..Default::default()
            },
        )
        .unwrap();
        let out = run(&cfg, w, &spec(4, 50));
        let t = out.total.total();
        assert_eq!(t.committed(), 200);
        assert_eq!(t.failed(), 0);
        assert_eq!(count_rows(&cfg, 1).await[0], 20);
        eprintln!("retries: {}", t.retries);
    });
}
