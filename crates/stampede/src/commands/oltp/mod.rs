//! sysbench's OLTP workloads: `stampede init oltp` and `stampede run oltp_<name>` / `run
//! bulk_insert` (sysbench 1.0.20).
//!
//! `init oltp` makes sysbench's `sbtestN` tables (`load::oltp`), with `k` drawn from sysbench's
//! default distribution (`--rand-type=special`, `workload::oltp::Dist`), as
//! `sysbench oltp_common prepare` draws it. `init oltp --bulk-insert --tables N` is `sysbench
//! bulk_insert --threads=N cleanup` + `prepare` instead: `sbtest1..N` dropped and created empty
//! with `bulk_insert.lua`'s two columns.
//!
//! Files: [`args`] (sysbench's option names, the pgsql connection options), [`plan`] (the
//! command line decided before any I/O), [`checks`] (after the run), [`summary`] (progress
//! lines, the result); this file runs the phases in order.
//!
//! ## `stampede run oltp_read_write [options] [-d DBNAME]`
//! `run`'s positional is pgbench's DBNAME; a positional that is a sysbench test name
//! (`oltp_read_write`, `oltp_read_only`, `oltp_write_only`, `oltp_point_select`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete`, `bulk_insert`;
//! `.lua` allowed) names the workload instead, and the database is then given with `-d` (or
//! `--pgsql-db`); `--embedded` may precede it. sysbench's options ([`SysbenchArgs`]: `--tables`,
//! `--table-size`, the mix, `--rand-*`, `--events`, `--warmup-time`, `--percentile`,
//! `--db-ps-mode`, and the pgsql driver's `--db-driver --pgsql-host --pgsql-port --pgsql-user
//! --pgsql-password --pgsql-db`) are only accepted with such a workload. sysbench's other run
//! options map onto stampede's: `--threads` is `-c`, `--time` is `-T`, `--rate` is `-R` (0:
//! none), `--report-interval` is `-P`.
//!
//! Mappings that are not one to one:
//! - `--events=N` is sysbench's total over all threads; the engine stops each client after its
//!   own count, so each client runs `ceil(N / clients)` (the total is printed when it differs).
//!   With `--events`, `--time` must be 0 or absent (sysbench stops at whichever comes first).
//!   Neither given: `--time=10`, sysbench's default.
//! - `--warmup-time=N`: the run lasts `--time` seconds; the first N of them are left out of the
//!   sysbench summary (computed from the per-second intervals after the warm-up), while stampede's
//!   pgbench-style summary covers the whole run. Both are printed, and saved in the JSON.
//! - errors sysbench ignores (40001, 40P01, 23505) are retried without limit under `--time`
//!   (1,000,000 tries under `--events`), as sysbench restarts the event; `--max-tries N` other
//!   than 1 caps them. They are counted as retries, and printed as sysbench's "ignored errors".
//! - statements are prepared (sysbench's `--db-ps-mode=auto`); `--db-ps-mode=disable` is the
//!   simple protocol with the values in the text (sysbench's client-side emulation); `-M
//!   extended` is honoured, `-M simple` (pgbench's default, so indistinguishable from "not
//!   given") is not.
//! - progress lines: sysbench's (`[ 10s ] thds: ... tps: ... qps: ... (r/w/o: ...) lat
//!   (ms,95%): ... err/s: ... reconn/s: ...`, on standard output as sysbench prints them), one
//!   per `-P` seconds; `--progress-style pgbench` prints stampede's pgbench-style line instead
//!   (standard error; lag, retries, p99). One style per run, so no line is printed twice.
//! - the pgsql driver's options are spellings of `-h -p -U -d` and the password; sysbench's
//!   defaults for them are not applied ([`args`] says why).
//!
//! ## `bulk_insert`
//! sysbench's `prepare` creates one empty table per thread; its `run` fails on the first
//! duplicate id if a table is not empty. So, as for the `oltp_*` tests: on a server you name,
//! the tables must exist (`stampede init oltp --bulk-insert --tables N`, N = `--threads`, or
//! sysbench's prepare) and be empty, which is checked before the run with a message saying how
//! to get there; on the embedded server, `run bulk_insert` creates them itself. An event is one
//! row (`workload::oltp::bulk`); the INSERTs left in the clients' buffers when the run ends are
//! sent afterwards on one session (sysbench's `thread_done`), counted as writes and in the
//! commit check. The mix options (`--tables`, `--range-size`, ...) are refused with it, as
//! `bulk_insert.lua` has none.
//!
//! Checks after the run: the commit count (as for every run; a small surplus of server commits
//! while autovacuum/autoanalyze ran is inconclusive, not failed) and the rows of the tables
//! ([`checks`]).

mod args;
mod checks;
mod plan;
mod summary;

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use engine::Event as EngineEvent;
use load::oltp::{InitOptions, KeyDraw};
use load::{Event, LoadError};
use report::{Check, CheckStatus};
use target::Session;
use workload::oltp::{BulkInsert, Dist, OltpWorkload, QueryCounts};
use workload::Workload;

pub use args::{is_sysbench_test, reject_without_test, PgsqlArgs, SysbenchArgs};
use plan::{OltpPlan, SbTest};

use crate::cli::{InitArgs, RunArgs};
use crate::commands::result::{emit_result, short_version, skipped, start_observer};
use crate::commands::setup_runtime;
use crate::{checks as commit, environment, interrupt, targeting};

/// `k` from a sysbench distribution, on the loader's per-row uniform stream.
struct DistKey(Dist);

impl KeyDraw for DistKey {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64 {
        self.0.draw_with(uniform, 1, table_size.max(1) as u32) as i64
    }
}

fn options(a: &InitArgs) -> Result<InitOptions> {
    if a.tables == 0 {
        bail!("--tables must be at least 1");
    }
    if a.table_size > i32::MAX as u64 {
        bail!("--table-size must fit sysbench's INTEGER id (at most 2147483647)");
    }
    if a.jobs == Some(0) {
        bail!("-j/--jobs must be at least 1");
    }
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let opts = InitOptions {
        tables: a.tables,
        table_size: a.table_size,
        no_vacuum: a.no_vacuum,
        key: Arc::new(DistKey(Dist::default())),
        jobs: a.jobs.map(|j| j as usize).unwrap_or(cpus),
        cancel: interrupt::flag(),
        ..Default::default()
    };
    opts.validate()?;
    Ok(opts)
}

/// Open the target of `init oltp` / `run oltp_*` with the pgsql options folded in.
fn open_target(
    t: &crate::cli::TargetArgs,
    pgsql: &PgsqlArgs,
    quiet: bool,
) -> Result<targeting::Target> {
    let mut target = targeting::open(t, quiet)?;
    if target.embedded.is_none() {
        pgsql.apply_password(&mut target.conn, t)?;
    }
    Ok(target)
}

pub fn init(mut args: InitArgs) -> Result<i32> {
    let opts = options(&args)?;
    args.pgsql.apply(&mut args.target)?;
    targeting::validate(&args.target)?;
    let rt = setup_runtime()?;
    let target = open_target(&args.target, &args.pgsql, args.quiet)?;
    let quiet = args.quiet;
    let code = if args.bulk_insert {
        match rt.block_on(load::oltp::init_bulk(&target.conn, args.tables)) {
            Ok(()) => {
                eprintln!(
                    "created bulk_insert's tables sbtest1..{} (empty; run with --threads {})",
                    args.tables, args.tables
                );
                Ok(0)
            }
            Err(e) => Err(e).context(format!(
                "creating bulk_insert's tables on {}",
                target.conn.redacted()
            )),
        }
    } else {
        let r = rt.block_on(load::oltp::init(&target.conn, &opts, &mut |e| {
            if quiet {
                return;
            }
            match e {
                Event::StepStarted(s) => eprintln!("{s}..."),
                Event::Notice(n) => eprintln!("note: {n}"),
                _ => {}
            }
        }));
        match r {
            Ok(report) => {
                eprintln!("{}", report.plan);
                eprintln!("{}", report.timings);
                Ok(0)
            }
            Err(LoadError::Interrupted) => {
                eprintln!("initialisation interrupted: the sbtest tables were dropped again");
                Ok(130)
            }
            Err(e) => Err(e).context(format!(
                "initialising sysbench's OLTP tables on {}",
                target.conn.redacted()
            )),
        }
    };
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}

/// `stampede run oltp_<name> ...` / `stampede run bulk_insert ...`.
pub fn run(mut args: RunArgs) -> Result<i32> {
    let name = args
        .target
        .positional_dbname
        .take()
        .expect("called with a sysbench test as the positional");
    let plan = plan::plan(&args, &name)?;
    let pgsql = args.sysbench.pgsql.clone();
    pgsql.apply(&mut args.target)?;
    targeting::validate(&args.target)?;
    let rt = setup_runtime()?;
    let target = open_target(&args.target, &pgsql, false)?;
    let outcome = run_on(&args, plan, &target, &rt);
    let closed = targeting::close(target, args.target.keep_server);
    let code = outcome?;
    closed?;
    Ok(code)
}

/// The workload of a plan: the engine is generic over it.
enum Loaded {
    Oltp(Arc<OltpWorkload>),
    Bulk(Arc<BulkInsert>),
}

impl Loaded {
    fn txn_types(&self) -> &[workload::TxnType] {
        match self {
            Loaded::Oltp(w) => w.txn_types(),
            Loaded::Bulk(w) => w.txn_types(),
        }
    }

    fn query_counts(&self) -> QueryCounts {
        match self {
            Loaded::Oltp(w) => w.query_counts(),
            // Counted per statement instead (report::SysbenchSection::queries).
            Loaded::Bulk(_) => QueryCounts::default(),
        }
    }
}

/// Create (embedded server) or check the tables before the run.
fn prepare(
    plan: &OltpPlan,
    target: &targeting::Target,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    let conn = &target.conn;
    let o = &plan.opts;
    if target.embedded.is_some() {
        if plan.test == SbTest::BulkInsert {
            rt.block_on(load::oltp::init_bulk(conn, o.tables))
                .context("creating bulk_insert's tables on the embedded server")?;
        } else {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            let init = InitOptions {
                tables: o.tables,
                table_size: u64::from(o.table_size),
                auto_inc: o.auto_inc,
                key: Arc::new(DistKey(o.dist.clone())),
                jobs: cpus,
                cancel: interrupt::flag(),
                ..Default::default()
            };
            eprintln!(
                "loading {} sbtest table(s) of {} rows on the embedded server...",
                o.tables, o.table_size
            );
            rt.block_on(load::oltp::init(conn, &init, &mut |_| {}))
                .context("loading the sbtest tables on the embedded server")?;
        }
        rt.block_on(async {
            let mut s = Session::connect(conn).await?;
            let r = s
                .simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .await;
            s.close().await;
            r
        })
        .context("creating pg_stat_statements on the embedded server")?;
    }
    if plan.test == SbTest::BulkInsert {
        // Not skippable by --no-check: a non-empty table fails the run (duplicate ids).
        rt.block_on(checks::bulk_tables_empty(conn, o.tables))?;
    }
    Ok(())
}

fn run_on(
    args: &RunArgs,
    plan: OltpPlan,
    target: &targeting::Target,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let conn = &target.conn;
    let o = &plan.opts;
    prepare(&plan, target, rt)?;
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }
    let server = rt.block_on(async {
        let mut s = Session::connect(conn).await?;
        let info = environment::server_info(&mut s).await;
        s.close().await;
        info
    })?;
    let rows_before = match plan.test {
        _ if args.no_check => None,
        SbTest::BulkInsert => Some(vec![0; o.tables as usize]),
        SbTest::Oltp(_) => {
            let r = rt.block_on(checks::rows(conn, o.tables))?;
            for (t, n) in r.iter().enumerate() {
                if *n < i64::from(o.table_size) {
                    eprintln!(
                        "note: sbtest{} has {n} rows, fewer than --table-size={} (ids are drawn \
                         in 1..{})",
                        t + 1,
                        o.table_size,
                        o.table_size
                    );
                }
            }
            Some(r)
        }
    };
    let workload = match plan.test {
        SbTest::Oltp(t) => Loaded::Oltp(Arc::new(
            OltpWorkload::new(t, o.clone()).map_err(anyhow::Error::msg)?,
        )),
        SbTest::BulkInsert => Loaded::Bulk(Arc::new(
            BulkInsert::new(plan.spec.clients).map_err(anyhow::Error::msg)?,
        )),
    };
    let q = workload.query_counts();
    let (baseline, maintenance_before) = if args.no_check {
        (None, 0)
    } else {
        let m = rt.block_on(checks::maintenance_runs(conn))?;
        (Some(rt.block_on(commit::commit_baseline(conn))?), m)
    };
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }
    println!(
        "stampede {} (server {}): sysbench {}",
        env!("CARGO_PKG_VERSION"),
        short_version(&server.version),
        plan.test.name()
    );
    if let Some(n) = &plan.events_note {
        eprintln!("note: {n}");
    }
    let spec = &plan.spec;
    let observer = start_observer(conn, args.no_observe);
    let mut section = summary::section(&plan, q);
    let mut progress = summary::Progress::new(args, &plan, &section);
    let mut on_event = |e: EngineEvent<'_>| match e {
        EngineEvent::Connected { .. } => {
            if let Some(h) = &observer {
                h.mark_start(std::time::Instant::now());
            }
        }
        EngineEvent::Progress(interval) => progress.tick(interval),
        EngineEvent::Aborted(a) => eprintln!("error: client {} aborted: {}", a.client_id, a.reason),
        EngineEvent::Notice(n) => eprintln!("{n}"),
    };
    let flag = interrupt::flag();
    let ran = match &workload {
        Loaded::Oltp(w) => engine::run(spec, w.clone(), conn, flag, &mut on_event),
        Loaded::Bulk(w) => engine::run(spec, w.clone(), conn, flag, &mut on_event),
    }
    .map_err(|e| anyhow::anyhow!(target::conninfo::redact(&format!("{e:#}"))));
    // bulk_insert's thread_done: the rows still buffered go out, even after an error or Ctrl-C
    // (they are events already counted).
    let flushed = match &workload {
        Loaded::Bulk(w) => rt
            .block_on(async {
                let mut s = Session::connect(conn).await?;
                let r = w.finish(&mut s).await;
                s.close().await;
                r
            })
            .map_err(|e| anyhow::anyhow!(target::conninfo::redact(&format!("{e:#}"))))
            .context("sending bulk_insert's last buffered rows")?,
        Loaded::Oltp(_) => 0,
    };
    let outcome = ran?;
    let server_metrics = observer.map(|h| h.finish());
    let observer_connections = server_metrics
        .as_ref()
        .map_or(0, |m| u64::from(m.cost.connections));

    let committed = outcome.total.total().committed();
    let mut check_list = Vec::new();
    match baseline {
        Some(b) => {
            // One server commit per transaction, unless --skip-trx splits a multi-statement
            // transaction into autocommitted statements, or bulk_insert commits one INSERT per
            // ~33,000 events: then count the commits on the wire (plus the final flush's).
            let per_txn = plan.test != SbTest::BulkInsert && (q.other > 0 || q.total() == 1);
            let counted = if per_txn {
                committed
            } else {
                outcome.server_commits - outcome.setup_commits + flushed
            };
            let flush_connections = u64::from(plan.test == SbTest::BulkInsert);
            let v = rt.block_on(b.verdict(
                counted,
                outcome.setup_commits,
                outcome.connections + observer_connections + flush_connections,
            ))?;
            let (status, detail) = match v {
                crate::checks::CommitVerdict::Exact(c) => {
                    let maintenance =
                        rt.block_on(checks::maintenance_runs(conn))? - maintenance_before;
                    checks::commit_status(&c, maintenance)
                }
                // Through a connection pooler (checks::CommitBaseline::verdict).
                crate::checks::CommitVerdict::Inconclusive(detail) => {
                    (CheckStatus::Skipped, detail)
                }
            };
            check_list.push(Check {
                name: "commit count".into(),
                status,
                detail,
            });
        }
        None => check_list.push(skipped("commit count", "--no-check")),
    }
    if rows_before.is_some() {
        let (ok, detail) = match plan.test {
            SbTest::Oltp(t) => {
                let after = rt.block_on(checks::rows(conn, o.tables))?;
                let before = rows_before.as_deref().unwrap_or_default();
                checks::row_check(t, o, before, &after, committed)
            }
            SbTest::BulkInsert => {
                let after = rt.block_on(checks::bulk_state(conn, o.tables))?;
                checks::bulk_row_check(&after, committed)
            }
        };
        check_list.push(Check {
            name: "row counts".into(),
            status: if ok {
                CheckStatus::Passed
            } else {
                CheckStatus::Failed
            },
            detail,
        });
    } else {
        check_list.push(skipped("row counts", "--no-check"));
    }

    section.window = if plan.warmup_s == 0 {
        outcome.total.clone()
    } else {
        summary::after_warmup(&outcome.intervals, plan.warmup_s, 1)
    };
    section.reconnects = outcome.reconnects;
    section.writes_after_run = flushed;
    let result = summary::build_result(
        args,
        &plan,
        target,
        &server,
        workload.txn_types(),
        outcome,
        check_list,
        server_metrics,
        section,
    );
    emit_result(args, &result)
}
