//! `init tpcb` / `reset tpcb` against a real server: one private server (EmbeddedServer) for this
//! test binary, one database per test. Every load is compared with what `pgbench -i` makes from
//! the same options (catalog and data), and pgbench itself runs on stampede's data.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use common::rt;
use load::driver::{self, DriverOptions, RowSource, Task, TaskKind};
use load::tpcb::{self, Generate, InitOptions, PartitionMethod, TpcbTables};
use load::{Event, LoadError, TableProgress};
use sut::{ConnConfig, Session};
use testkit::{query, scalar, PerBinary, Pg};

/// The shared server, started on first use and stopped (directory removed) at process exit.
fn fixture() -> &'static Pg {
    // Small: many test binaries may run at once.
    static PG: PerBinary = PerBinary::new(&[&[
        ("shared_buffers", "128MB"),
        ("max_connections", "100"),
        ("maintenance_work_mem", "64MB"),
    ]]);
    PG.get()
}

/// A fresh database; returns its config.
async fn database(name: &str) -> ConnConfig {
    fixture().fresh_database(name).await
}

fn pgbench(db: &str, args: &[&str]) -> String {
    fixture().pgbench(db, args)
}

/// Everything about the pgbench tables that pgbench decides: columns, relation kinds,
/// persistence, reloptions, partition bounds, constraints, indexes; and the data itself.
async fn fingerprint(cfg: &ConnConfig) -> Vec<Vec<Option<String>>> {
    let columns = testkit::columns_query("pgbench%");
    let sqls = [
        columns.as_str(),
        "select relname, relkind, relpersistence, reloptions::text, pg_get_expr(relpartbound, oid) \
         from pg_class where relnamespace = 'public'::regnamespace and relname like 'pgbench%' order by 1",
        "select conrelid::regclass::text, conname, pg_get_constraintdef(oid) from pg_constraint \
         where connamespace = 'public'::regnamespace order by 1, 2",
        "select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by 1, 2",
        "select partrelid::regclass::text, partstrat, partnatts from pg_partitioned_table order by 1",
        "select tableoid::regclass::text, count(*) from pgbench_accounts group by 1 order by 1",
        "select count(*), md5(string_agg(aid || ',' || bid || ',' || abalance || ',' || coalesce(filler, 'NULL'), ';' order by aid)) from pgbench_accounts",
        "select count(*), md5(string_agg(tid || ',' || bid || ',' || tbalance || ',' || coalesce(filler, 'NULL'), ';' order by tid)) from pgbench_tellers",
        "select count(*), md5(string_agg(bid || ',' || bbalance || ',' || coalesce(filler, 'NULL'), ';' order by bid)) from pgbench_branches",
        "select count(*) from pgbench_history",
    ];
    let mut out = Vec::new();
    for sql in sqls {
        out.push(vec![Some(format!("-- {sql}"))]);
        out.extend(query(cfg, sql).await);
    }
    out
}

/// Load `opts` with stampede into `<name>` and with pgbench (`pgbench_args`) into `<name>_pgb`;
/// assert both look the same. Returns stampede's config and report.
async fn load_and_compare(
    name: &str,
    opts: &InitOptions,
    pgbench_args: &[&str],
) -> (ConnConfig, tpcb::InitReport) {
    let cfg = database(name).await;
    let mut events = Vec::new();
    let report = tpcb::init(&cfg.clone().into(), opts, &mut |e: &Event<'_>| {
        events.push(format!("{e:?}"));
    })
    .await
    .unwrap_or_else(|e| panic!("init {name}: {e}"));
    let s = opts.scale as u64;
    assert_eq!(report.rows, [s, 10 * s, 100_000 * s]);
    assert!(events.iter().any(|e| e.contains("StepFinished")));

    let theirs = format!("{name}_pgb");
    let their_cfg = database(&theirs).await;
    let mut args = vec!["-i", "-q"];
    args.extend_from_slice(pgbench_args);
    pgbench(&theirs, &args);

    let ours = fingerprint(&cfg).await;
    let pg = fingerprint(&their_cfg).await;
    assert_eq!(ours.len(), pg.len(), "{ours:#?}\nvs pgbench\n{pg:#?}");
    for (a, b) in ours.iter().zip(&pg) {
        assert_eq!(a, b, "stampede vs pgbench differ");
    }
    (cfg, report)
}

#[test]
fn plain_load_matches_pgbench_and_uses_freeze() {
    rt().block_on(async {
        let (cfg, report) = load_and_compare("plain", &InitOptions::default(), &["-s", "1"]).await;
        assert_eq!(report.frozen_tasks, 3, "{report:?}");
        assert!(!report.freeze_refused);
        let steps: Vec<&str> = report.timings.steps.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            steps,
            ["drop tables", "create tables", "client-side generate", "vacuum", "primary keys"]
        );
        assert!(report.timings.to_string().starts_with("done in "));
        // COPY FREEZE took effect: every page of every table is all-frozen (VACUUM alone would
        // not freeze rows this young).
        query(&cfg, "create extension if not exists pg_visibility").await;
        for t in ["pgbench_accounts", "pgbench_tellers", "pgbench_branches"] {
            let r = query(
                &cfg,
                &format!(
                    "select all_frozen, pg_relation_size('{t}') / current_setting('block_size')::int \
                     from pg_visibility_map_summary('{t}')"
                ),
            )
            .await;
            assert_eq!(r[0][0], r[0][1], "{t}: all-frozen pages vs pages");
        }
        let pks = scalar(
            &cfg,
            "select string_agg(conname, ',' order by conname) from pg_constraint where contype = 'p' \
             and connamespace = 'public'::regnamespace",
        )
        .await;
        assert_eq!(pks, "pgbench_accounts_pkey,pgbench_branches_pkey,pgbench_tellers_pkey");
    });
}

#[test]
fn parallel_load_matches_pgbench() {
    rt().block_on(async {
        let opts = InitOptions {
            scale: 2,
            jobs: 3,
            ..Default::default()
        };
        let (_, report) = load_and_compare("parallel", &opts, &["-s", "2"]).await;
        // Accounts in 3 plain ranges; tellers and branches frozen.
        assert_eq!(
            (report.frozen_tasks, report.plain_tasks),
            (2, 3),
            "{report:?}"
        );
    });
}

#[test]
fn range_partitions_match_pgbench() {
    rt().block_on(async {
        let opts = InitOptions {
            scale: 2,
            partitions: 3,
            jobs: 2,
            ..Default::default()
        };
        let (_, report) =
            load_and_compare("range_parts", &opts, &["-s", "2", "--partitions", "3"]).await;
        // Every partition loaded with FREEZE, legally.
        assert_eq!(
            (report.frozen_tasks, report.plain_tasks),
            (5, 0),
            "{report:?}"
        );
    });
}

#[test]
fn hash_partitions_match_pgbench() {
    rt().block_on(async {
        let opts = InitOptions {
            scale: 1,
            partitions: 4,
            partition_method: Some(PartitionMethod::Hash),
            jobs: 2,
            ..Default::default()
        };
        load_and_compare(
            "hash_parts",
            &opts,
            &["-s", "1", "--partitions", "4", "--partition-method", "hash"],
        )
        .await;
    });
}

#[test]
fn unlogged_fillfactor_foreign_keys_match_pgbench() {
    rt().block_on(async {
        let opts = InitOptions {
            scale: 1,
            fillfactor: 80,
            unlogged: true,
            foreign_keys: true,
            jobs: 2,
            ..Default::default()
        };
        let (_, report) = load_and_compare(
            "unlogged_fk",
            &opts,
            &["-s", "1", "-F", "80", "--unlogged-tables", "--foreign-keys"],
        )
        .await;
        assert_eq!(report.timings.steps.last().unwrap().0, "foreign keys");
    });
}

#[test]
fn server_side_generation_matches_pgbench() {
    rt().block_on(async {
        for jobs in [1, 2] {
            let opts = InitOptions {
                scale: 1,
                generate: Generate::ServerSide,
                jobs,
                ..Default::default()
            };
            let (_, report) = load_and_compare(
                &format!("server_side_{jobs}"),
                &opts,
                &["-s", "1", "-I", "dtGvp"],
            )
            .await;
            assert!(report.timings.get("server-side generate").is_some());
        }
    });
}

#[test]
fn pgbench_runs_on_stampede_data_and_reset_restores_it() {
    rt().block_on(async {
        let cfg = database("runs").await;
        let opts = InitOptions {
            scale: 1,
            jobs: 2,
            ..Default::default()
        };
        tpcb::init(&cfg.clone().into(), &opts, &mut |_| {})
            .await
            .unwrap();
        let out = pgbench("runs", &["-S", "-t", "100", "-n"]);
        assert!(
            out.contains("number of transactions actually processed: 100/100"),
            "{out}"
        );
        let out = pgbench("runs", &["-t", "50", "-c", "2", "-n"]);
        assert!(out.contains("actually processed: 100/100"), "{out}");
        assert_eq!(
            scalar(&cfg, "select count(*) from pgbench_history").await,
            "100"
        );

        let mut s = Session::connect(&cfg).await.unwrap();
        let mut steps = Vec::new();
        let t = tpcb::reset(&mut s, &mut |e| {
            if let Event::StepFinished { step, .. } = e {
                steps.push(*step)
            }
        })
        .await
        .unwrap();
        assert_eq!(steps, ["reset balances", "truncate history", "vacuum"]);
        assert_eq!(t.steps.len(), 3);
        s.close().await;
        let sums = query(
            &cfg,
            "select (select count(*) from pgbench_accounts where abalance <> 0) \
                  + (select count(*) from pgbench_tellers where tbalance <> 0) \
                  + (select count(*) from pgbench_branches where bbalance <> 0), \
                    (select count(*) from pgbench_history)",
        )
        .await;
        assert_eq!(sums[0], vec![Some("0".into()), Some("0".into())]);
    });
}

#[test]
fn scale_is_detected_on_pgbench_data_and_missing_tables_are_named() {
    rt().block_on(async {
        let cfg = database("detect").await;
        let mut s = Session::connect(&cfg).await.unwrap();
        assert_eq!(tpcb::detect_tpcb_scale(&mut s).await.unwrap(), None);
        assert_eq!(
            tpcb::inspect(&mut s).await.unwrap(),
            TpcbTables::Missing("pgbench_accounts")
        );
        let e = tpcb::reset(&mut s, &mut |_| {}).await.unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Missing {
                    table: "pgbench_accounts",
                    ..
                }
            ),
            "{e}"
        );

        pgbench("detect", &["-i", "-q", "-s", "2", "--partitions", "2"]);
        assert_eq!(tpcb::detect_tpcb_scale(&mut s).await.unwrap(), Some(2));
        assert_eq!(
            tpcb::inspect(&mut s).await.unwrap(),
            TpcbTables::Present {
                scale: 2,
                partitions: 2,
                partition_method: Some(PartitionMethod::Range),
                primary_keys: true,
            }
        );
        s.simple_query("drop table pgbench_tellers").await.unwrap();
        assert_eq!(
            tpcb::inspect(&mut s).await.unwrap(),
            TpcbTables::Missing("pgbench_tellers")
        );
        s.close().await;
    });
}

#[test]
fn drop_touches_nothing_else() {
    rt().block_on(async {
        let cfg = database("untouched").await;
        let mut s = Session::connect(&cfg).await.unwrap();
        s.simple_query(
            "create table keep_me(x int); insert into keep_me values (1); \
             create table pgbench_accounts_old(x int); \
             create schema other; create table other.pgbench_accounts(x int); \
             insert into other.pgbench_accounts values (7)",
        )
        .await
        .unwrap();
        // Twice: the second init drops the first one's tables.
        for _ in 0..2 {
            tpcb::init(&cfg.clone().into(), &InitOptions::default(), &mut |_| {}).await.unwrap();
        }
        let left = s
            .simple_query(
                "select (select count(*) from keep_me), (select count(*) from pgbench_accounts_old), \
                        (select sum(x) from other.pgbench_accounts)",
            )
            .await
            .unwrap();
        assert_eq!(left[0], vec![Some("1".into()), Some("0".into()), Some("7".into())]);
        tpcb::drop_tables(&mut s).await.unwrap();
        let n = s
            .simple_query(
                "select count(*) from pg_class where relname like 'pgbench%' \
                 and relnamespace = 'public'::regnamespace",
            )
            .await
            .unwrap();
        // Only pgbench_accounts_old remains in public.
        assert_eq!(n[0][0].as_deref(), Some("1"));
        s.close().await;
    });
}

#[test]
fn cancellation_leaves_no_pgbench_tables() {
    rt().block_on(async {
        let cfg = database("cancelled").await;
        let cancel = Arc::new(AtomicBool::new(false));
        let opts = InitOptions {
            scale: 20,
            jobs: 2,
            cancel: cancel.clone(),
            ..Default::default()
        };
        common::cancel_while_loading(
            &cancel,
            |tables| tables[2].rows_done > 0,
            async |on_event| tpcb::init(&cfg.clone().into(), &opts, on_event).await,
        )
        .await;
        let mut s = Session::connect(&cfg).await.unwrap();
        assert_eq!(
            tpcb::inspect(&mut s).await.unwrap(),
            TpcbTables::Missing("pgbench_accounts")
        );
        common::assert_no_loader_left(&mut s, "cancelled").await;
        s.close().await;
    });
}

#[test]
fn invalid_options_fail_before_connecting() {
    rt().block_on(async {
        let nowhere = common::nowhere(fixture().conn_config());
        let e = tpcb::init(
            &nowhere.clone().into(),
            &InitOptions {
                fillfactor: 5,
                ..Default::default()
            },
            &mut |_| {},
        )
        .await
        .unwrap_err();
        assert!(matches!(e, LoadError::Invalid(_)), "{e}");
    });
}

/// A `whole` task aimed at a partitioned table: the server refuses FREEZE (0A000), the driver
/// says so and loads without it.
#[test]
fn refused_freeze_falls_back_to_plain_copy() {
    struct Ints;
    impl RowSource for Ints {
        fn write_row(&self, row: u64, out: &mut Vec<u8>) {
            out.extend_from_slice(format!("{row}\n").as_bytes());
        }
    }
    rt().block_on(async {
        let cfg = database("refused").await;
        query(
            &cfg,
            "create table p(x bigint) partition by range (x); \
             create table p1 partition of p for values from (minvalue) to (maxvalue)",
        )
        .await;
        let tasks = vec![Task {
            slot: 0,
            kind: TaskKind::Copy {
                relation: "p".into(),
                columns: Some("x".into()),
                source: Arc::new(Ints),
                rows: 0..1000,
                whole: true,
            },
        }];
        let mut notices = Vec::new();
        let out = driver::run(
            &cfg.clone().into(),
            &DriverOptions {
                jobs: 2,
                cancel: Arc::new(AtomicBool::new(false)),
                freeze: true,
            },
            vec![TableProgress {
                table: "p".into(),
                rows_done: 0,
                rows_total: 1000,
            }],
            tasks,
            &mut |e| {
                if let Event::Notice(n) = e {
                    notices.push(n.to_string())
                }
            },
        )
        .await
        .unwrap();
        assert!(out.freeze_refused);
        assert_eq!((out.frozen_tasks, out.plain_tasks), (0, 1));
        assert_eq!(out.rows, vec![1000]);
        assert!(notices.iter().any(|n| n.contains("0A000")), "{notices:?}");
        assert_eq!(scalar(&cfg, "select count(*) from p").await, "1000");
    });
}
