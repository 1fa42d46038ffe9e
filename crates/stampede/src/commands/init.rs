//! `stampede init NAME` (pgbench -i, sysbench prepare) and `stampede reset tpcb`: the loader's
//! options from the command line, a progress bar with rows/s and ETA on a terminal (a line every
//! 5 s otherwise), pgbench's closing timing line, and the sizes of what was loaded (`say_sizes`).
//!
//! NAME is a workload of the one table (`stampede run --list`), which names its tables, or the
//! tables' own name: `tpcb` (pgbench's), `oltp` (sysbench's `sbtestN`; `--bulk-insert` for
//! bulk_insert's empty ones). `init oltp` draws `k` from sysbench's default distribution
//! (`--rand-type=special`), as `sysbench oltp_common prepare` does.

use std::sync::Arc;

use anyhow::{Context, Result};
use load::tpcb::{Generate, InitOptions, PartitionMethod};
use load::{Event, LoadError};
use sut::Session;
use workload::oltp::Dist;

use super::init_fleet::Split;
use super::init_observed::{after_load, params};
use crate::cli::{InitArgs, PartitionMethod as CliMethod, ResetArgs};
use crate::console::{self, Failure};
use crate::families::loading::observed::{Described, InitOutputs, Watcher};
use crate::families::loading::{default_jobs, load_tpcb_watched, LoadView};
use crate::families::sysbench::DistKey;
use crate::runtime;
use crate::workloads::{self, Dataset};
use crate::{interrupt, targeting};

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// The tables a name asks for: a workload's, or a dataset named directly.
pub fn dataset(name: &str, bulk_insert: bool) -> Result<Dataset> {
    let d = match name {
        "tpcb" => Dataset::Tpcb,
        "oltp" if bulk_insert => Dataset::OltpBulk,
        "oltp" => Dataset::Oltp,
        "tpcc" => Dataset::Tpcc,
        "tpch" => Dataset::Tpch,
        "ch" => Dataset::Ch,
        "ycsb" => Dataset::Ycsb,
        "iibench" => Dataset::Iibench,
        "crud" => Dataset::Crud,
        n => match workloads::find(n) {
            Some(w) => w.dataset,
            None => {
                return Err(Failure::usage(
                    format!("{n:?} is neither a workload nor a set of tables"),
                    "`stampede init --list` lists what can be loaded",
                ))
            }
        },
    };
    Ok(d)
}

/// `stampede init --list`.
fn list() -> String {
    let mut s = String::from(
        "tables stampede init loads (by their name, or by any workload that runs on them):\n\
         \x20 tpcb   pgbench's four tables (pgbench -i): -s, -F, --partitions, --foreign-keys, ...\n\
         \x20 oltp   sysbench's sbtestN tables (sysbench prepare): --tables, --table-size; \
         --bulk-insert for bulk_insert's\n\
         \x20 tpcc   TPC-C's nine tables (go-tpc's schema; tpcc-mysql's on MySQL): -w\n\
         \x20 tpch   TPC-H's eight tables (dbgen's rows, from tpchgen): --scale SF (fractions \
         allowed), --indexes\n\
         \x20 ch     TPC-C's nine tables and CH-benCHmark's region, nation, supplier: -w\n\
         \x20 ycsb   YCSB's usertable: -p recordcount=N, -p fieldcount, -p fieldlength, \
         -p insertorder\n\
         \x20 iibench  the insert benchmark's purchases_index, empty, with its 3 secondary indexes\n\
         \x20 crud   the CRUD mix's crudN tables: --tables, --table-size\n\n",
    );
    s.push_str(&workloads::list());
    s
}

fn options(a: &InitArgs) -> Result<InitOptions> {
    let Some(scale) = a.scale.whole() else {
        bail!("-s/--scale must be a whole number for pgbench's tables");
    };
    if scale < 1 {
        bail!("-s/--scale must be at least 1");
    }
    if a.jobs == Some(0) {
        bail!("-j/--jobs must be at least 1");
    }
    if !(10..=100).contains(&a.fillfactor) {
        bail!(
            "--fillfactor must be between 10 and 100, got {}",
            a.fillfactor
        );
    }
    let opts = InitOptions {
        scale,
        fillfactor: a.fillfactor,
        partitions: a.partitions,
        partition_method: (a.partitions > 0).then_some(match a.partition_method {
            CliMethod::Range => PartitionMethod::Range,
            CliMethod::Hash => PartitionMethod::Hash,
        }),
        unlogged: a.unlogged,
        foreign_keys: a.foreign_keys,
        tablespace: a.tablespace.clone(),
        index_tablespace: a.index_tablespace.clone(),
        no_vacuum: a.no_vacuum,
        generate: if a.server_side {
            Generate::ServerSide
        } else {
            Generate::ClientSide
        },
        jobs: a
            .jobs
            .map(|j| j as usize)
            .unwrap_or_else(|| default_jobs(a.partitions)),
        cancel: interrupt::flag(),
        part: None,
    };
    opts.validate()?;
    Ok(opts)
}

pub fn init(mut args: InitArgs) -> Result<i32> {
    if args.list {
        println!("{}", list());
        return Ok(0);
    }
    let Some(name) = args.workload.clone() else {
        return Err(Failure::usage(
            "stampede init needs the workload or tables to load",
            "e.g. `stampede init tpcb -s 10`; `stampede init --list` lists them",
        ));
    };
    if args.positional_dbname.is_some() {
        if args.target.dbname.is_some() {
            bail!(
                "the database is given twice (-d/--dbname and a positional DBNAME): give it once"
            );
        }
        args.target.positional_dbname = args.positional_dbname.take();
    }
    let dataset = dataset(&name, args.bulk_insert)?;
    if dataset == Dataset::Probe {
        bail!("failover-probe has nothing to load: its run creates (and drops) stampede_probe");
    }
    if !args.property.is_empty() && dataset != Dataset::Ycsb {
        bail!("-p KEY=VALUE (--property) only applies to YCSB's usertable (`init ycsb`)");
    }
    if args.indexes && dataset != Dataset::Tpch {
        bail!("--indexes only applies to TPC-H's tables (`init tpch`)");
    }
    if dataset == Dataset::Capture {
        bail!(
            "a replay has nothing to load: it runs on a copy of the database its capture ran on \
             (restore a backup taken before the capture)"
        );
    }
    if dataset == Dataset::CacheCurve {
        bail!("cache-curve has nothing to load: its run grows (and drops) stampede_cache_curve");
    }
    let out = super::init_observed::outputs(&args)?;
    let splits = matches!(
        dataset,
        Dataset::Oltp | Dataset::Tpcb | Dataset::Tpcc | Dataset::Tpch
    );
    if args.fleet.fleet.is_some() && (!splits || args.bulk_insert || super::sharded::wanted(&args))
    {
        return Err(Failure::usage(
            "--fleet on init splits the plain tables of `init oltp`, `init tpcb`, `init tpcc` \
             and `init tpch` only",
            "load the other tables from one process",
        ));
    }
    if super::sharded::wanted(&args) {
        return super::sharded::init(args, dataset);
    }
    if dataset == Dataset::Tpcb {
        let given = args.pgsql.given();
        let mut given: Vec<&str> = given.into_iter().collect();
        if args.bulk_insert {
            given.push("--bulk-insert");
        }
        if !given.is_empty() {
            bail!(
                "{} only apply to sysbench's tables (`init oltp`)",
                given.join(", ")
            );
        }
        return init_tpcb(args, out);
    }
    if args.warehouses.is_some() && !matches!(dataset, Dataset::Tpcc | Dataset::Ch) {
        bail!("-w/--warehouses only applies to TPC-C's tables (`init tpcc`, `init ch`)");
    }
    if matches!(dataset, Dataset::Tpcc | Dataset::Ch) {
        return init_tpcc(args, out, dataset == Dataset::Ch);
    }
    if dataset == Dataset::Tpch {
        return super::tpch::init(args, out);
    }
    if dataset == Dataset::Ycsb {
        return super::ycsb::init(args, &name, out);
    }
    if matches!(dataset, Dataset::Iibench | Dataset::Crud) {
        return super::init_own::init(args, dataset, out);
    }
    init_oltp(args, dataset == Dataset::OltpBulk, out)
}

/// `init tpcc -w N`: TPC-C's nine tables, loaded in parallel by warehouse; `init ch -w N`
/// then CH-benCHmark's three (`families::ch::extra_tables`).
fn init_tpcc(args: InitArgs, out: InitOutputs, ch: bool) -> Result<i32> {
    let given = args.pgsql.given();
    if !given.is_empty() || args.bulk_insert {
        bail!("sysbench's options do not apply to TPC-C's tables");
    }
    if ch && args.fleet.fleet.is_some() {
        bail!("--fleet on init splits `init tpcc`; load CH-benCHmark's tables from one process");
    }
    if args.jobs == Some(0) {
        bail!("-j/--jobs must be at least 1");
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = load::tpcc::InitOptions {
        warehouses: args.warehouses.unwrap_or(1),
        no_vacuum: args.no_vacuum,
        jobs: args.jobs.map_or(cpus, |j| j as usize),
        cancel: interrupt::flag(),
        ..Default::default()
    };
    opts.validate()
        .map_err(|e| Failure::usage(e.to_string(), ""))?;
    let extra = crate::families::ch::extra_tables(opts.jobs, opts.no_vacuum);
    let described = Described {
        workload: if ch { "ch" } else { "tpcc" }.into(),
        parameters: params([("warehouses", opts.warehouses.into())]),
        jobs: opts.jobs as u32,
        tables: Vec::new(),
        step: "load",
    };
    let split = Split::Tpcc(opts.clone());
    watched_load(
        &args,
        &out,
        split,
        described,
        |rt, conn, on_event| {
            rt.block_on(async {
                let tpcc = load::tpcc::init(conn, &opts, on_event).await?;
                let ch = match ch {
                    true => Some(crate::families::tpch::load::init(conn, &extra, on_event).await?),
                    false => None,
                };
                Ok((tpcc, ch))
            })
        },
        |r, conn| match r {
            Ok((report, ch)) => {
                let rows: u64 = report.rows.iter().sum();
                let secs = report.timings.total().as_secs_f64();
                eprintln!("{}", report.timings);
                eprintln!(
                    "{} warehouse(s): {rows} rows in {secs:.1} s ({:.0} rows/s)",
                    opts.warehouses,
                    rows as f64 / secs.max(1e-9)
                );
                if let Some(ch) = ch {
                    let each: Vec<String> = (crate::families::ch::TABLES.iter())
                        .zip(&ch.rows)
                        .map(|((t, _), n)| format!("{t} {n}"))
                        .collect();
                    eprintln!(
                        "CH-benCHmark's tables in {:.1} s: {}",
                        ch.timings.total().as_secs_f64(),
                        each.join(", ")
                    );
                }
                Ok(0)
            }
            Err(LoadError::Interrupted) => {
                console::note("initialisation interrupted: no TPC-C table is left looking loaded");
                Ok(crate::console::EXIT_INTERRUPTED)
            }
            // CH's table of someone else's (TPC-H's `supplier`): refused before it was dropped.
            Err(LoadError::Invalid(why)) if ch => Err(Failure::setup(why, "")),
            Err(e) => Err(e).context(format!("initialising TPC-C on {}", conn.redacted())),
        },
    )
}

/// A family's own loader as `init` runs it: with `--fleet`, split across the fleet's processes
/// (`init_fleet`, `split`); alone, watched (the progress view, the observer, `--json` and
/// `--html` through `after_load`, `described`). `load` runs the loader with the events'
/// callback; `summary` words its outcome (the family's lines, its interrupt and error
/// messages) into an exit code. The target is closed (and an embedded server stopped) on
/// every path.
pub(super) fn watched_load<R>(
    args: &InitArgs,
    out: &InitOutputs,
    split: Split,
    described: Described,
    load: impl FnOnce(
        &tokio::runtime::Runtime,
        &sut::Target,
        &mut dyn FnMut(&Event<'_>),
    ) -> Result<R, LoadError>,
    summary: impl FnOnce(Result<R, LoadError>, &sut::Target) -> Result<i32>,
) -> Result<i32> {
    targeting::validate(&args.target)?;
    let fleet = crate::plan::fleet_of(&args.fleet, targeting::wants_embedded(&args.target))?;
    let (rt, target) = open_to_load(&args.target, args.quiet)?;
    if let Some(plan) = &fleet {
        let r = super::init_fleet::load(&rt, &target.conn, plan, split, args.quiet);
        let closed = targeting::close(target, args.target.keep_server);
        let code = r?;
        closed?;
        return Ok(code);
    }
    let mut view = LoadView::new(args.quiet);
    let mut watcher = Watcher::start(&rt, &target, out);
    let r = load(&rt, &target.conn, &mut |e| {
        view.event(e);
        watcher.event(e);
    });
    view.finish();
    let code = summary(r, &target.conn);
    let code = after_load(&rt, &target, out, watcher, described, code, true);
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}

fn init_tpcb(args: InitArgs, out: InitOutputs) -> Result<i32> {
    let opts = options(&args)?;
    targeting::validate(&args.target)?;
    if targeting::names_mysql(&args.target) {
        // Before connecting: what MySQL has no counterpart for.
        opts.validate_for(sut::Dialect::MySql).map_err(|e| {
            Failure::usage(e.to_string(), "leave these options out for a MySQL target")
        })?;
    }
    let fleet = crate::plan::fleet_of(&args.fleet, targeting::wants_embedded(&args.target))?;
    let (rt, target) = super::init::open_to_load(&args.target, args.quiet)?;
    let r = match &fleet {
        Some(plan) => {
            let r = super::init_fleet::load(&rt, &target.conn, plan, Split::Tpcb(opts), args.quiet);
            if matches!(r, Ok(0)) {
                say_sizes(&rt, &target.conn);
            }
            r
        }
        None => {
            let mut watcher = Watcher::start(&rt, &target, &out);
            let r = load_tpcb_watched(&target.conn, &opts, args.quiet, &rt, &mut |e| {
                watcher.event(e)
            });
            let mut parameters = params([
                ("scale", opts.scale.into()),
                ("fillfactor", opts.fillfactor.into()),
                (
                    "generate",
                    (if args.server_side {
                        "server-side"
                    } else {
                        "client-side"
                    })
                    .into(),
                ),
            ]);
            if opts.partitions > 0 {
                parameters.insert("partitions".into(), opts.partitions.into());
            }
            let described = Described {
                workload: "tpcb".into(),
                parameters,
                jobs: opts.jobs as u32,
                tables: Vec::new(),
                step: "load",
            };
            after_load(&rt, &target, &out, watcher, described, r, true)
        }
    };
    let closed = targeting::close(target, args.target.keep_server);
    let code = r?;
    closed?;
    Ok(code)
}

pub fn reset(mut args: ResetArgs) -> Result<i32> {
    if dataset(&args.workload, false)? != Dataset::Tpcb {
        return Err(Failure::usage(
            "reset restores pgbench's tables only",
            "reload sysbench's with `stampede init oltp` instead",
        ));
    }
    if args.positional_dbname.is_some() {
        args.target.positional_dbname = args.positional_dbname.take();
    }
    targeting::validate(&args.target)?;
    if targeting::wants_embedded(&args.target) {
        return Err(Failure::usage(
            "reset needs a target: an embedded server is new and empty every time",
            "name the database with -h/-p/-U/-d",
        ));
    }
    let conn = targeting::resolve_remote(&args.target)?;
    let rt = runtime::setup()?;
    // Connecting is abandoned by a signal (a host that never answers); the reset is not.
    let mut s = rt.block_on(interrupt::or_interrupted(async {
        Ok(Session::connect(&conn).await?)
    }))?;
    let timings = rt.block_on(async {
        let r = load::tpcb::reset(&mut s, &mut |e| {
            if let Event::StepStarted(step) = e {
                eprintln!("{step}...");
            }
        })
        .await;
        s.close().await;
        anyhow::Ok(r?)
    })?;
    eprintln!("{timings}");
    Ok(0)
}

fn oltp_options(a: &InitArgs) -> Result<load::oltp::InitOptions> {
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
    let opts = load::oltp::InitOptions {
        tables: a.tables,
        table_size: a.table_size,
        no_vacuum: a.no_vacuum,
        key: Arc::new(DistKey(Dist::default())),
        jobs: a.jobs.map(|j| j as usize).unwrap_or(cpus),
        cancel: interrupt::flag(),
        mysql_storage_engine: a.mysql_storage_engine.clone(),
        mysql_table_options: a.mysql_table_options.clone(),
        ..Default::default()
    };
    opts.validate()
        .map_err(|e| Failure::usage(e.to_string(), ""))?;
    Ok(opts)
}

/// `init oltp` (sysbench's prepare), or with `--bulk-insert` sysbench bulk_insert's
/// `cleanup` + `prepare`: `sbtest1..N` dropped and created empty with its two columns.
fn init_oltp(mut args: InitArgs, bulk: bool, out: InitOutputs) -> Result<i32> {
    let opts = oltp_options(&args)?;
    args.pgsql.apply(&mut args.target)?;
    targeting::validate(&args.target)?;
    let fleet = crate::plan::fleet_of(&args.fleet, targeting::wants_embedded(&args.target))?;
    let rt = runtime::setup()?;
    let target = targeting::open(&args.target, args.quiet)?;
    let quiet = args.quiet;
    let mut described = Described {
        workload: "oltp".into(),
        parameters: params([
            ("tables", args.tables.into()),
            ("table_size", args.table_size.into()),
        ]),
        jobs: opts.jobs as u32,
        tables: Vec::new(),
        step: "create tables",
    };
    // A fleet's part is not watched (`init_observed::outputs`).
    let mut watcher = fleet.is_none().then(|| Watcher::start(&rt, &target, &out));
    let code = if bulk {
        described.parameters =
            params([("tables", args.tables.into()), ("bulk_insert", true.into())]);
        described.tables = (1..=args.tables)
            .map(|t| crate::families::loading::section::LoadedTable {
                name: load::oltp::table_name(t),
                rows: 0,
            })
            .collect();
        match rt.block_on(load::oltp::init_bulk(&target.conn, args.tables)) {
            Ok(()) => {
                console::note(&format!(
                    "created bulk_insert's tables sbtest1..{} (empty; run with --threads {})",
                    args.tables, args.tables
                ));
                Ok(0)
            }
            Err(e) => Err(e).context(format!(
                "creating bulk_insert's tables on {}",
                target.conn.redacted()
            )),
        }
    } else if let Some(plan) = &fleet {
        super::init_fleet::load(&rt, &target.conn, plan, Split::Oltp(opts), quiet)
    } else {
        let mut said = steps_said(quiet);
        let r = rt.block_on(load::oltp::init(&target.conn, &opts, &mut |e| {
            said(e);
            if let Some(w) = &mut watcher {
                w.event(e);
            }
        }));
        match r {
            Ok(report) => {
                eprintln!("{}", report.plan);
                eprintln!("{}", report.timings);
                Ok(0)
            }
            Err(LoadError::Interrupted) => {
                console::note("initialisation interrupted: the sbtest tables were dropped again");
                Ok(crate::console::EXIT_INTERRUPTED)
            }
            Err(e) => Err(e).context(format!(
                "initialising sysbench's OLTP tables on {}",
                target.conn.redacted()
            )),
        }
    };
    let code = match watcher {
        Some(w) => after_load(&rt, &target, &out, w, described, code, !bulk),
        None => {
            if matches!(code, Ok(0)) {
                say_sizes(&rt, &target.conn);
            }
            code
        }
    };
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}

/// The runtime and the target an init loads: with no target given, the embedded server, which
/// is said (it is removed afterwards unless --keep-server).
pub(super) fn open_to_load(
    args: &crate::targeting::TargetArgs,
    quiet: bool,
) -> Result<(tokio::runtime::Runtime, targeting::Target)> {
    let rt = runtime::setup()?;
    let target = targeting::open(args, quiet)?;
    if (target.embedded.is_some() || target.embedded_mysql.is_some()) && !args.keep_server {
        console::note(
            "no target given, so this loads the embedded server, which is removed afterwards; \
             pass --keep-server to keep it, or use `stampede server start`",
        );
    } else if target.embedded.is_none() && target.embedded_mysql.is_none() {
        // The first connection alone, abandoned by a signal: inside the loader (which a signal
        // must not drop half-way) a host that never answers would hold Ctrl-C up for the
        // whole connect_timeout.
        let probe = interrupt::or_interrupted(async {
            Session::connect(&target.conn).await?.close().await;
            Ok(())
        });
        if let Err(e) = rt.block_on(probe) {
            drop(targeting::close(target, args.keep_server));
            return Err(e);
        }
    }
    Ok((rt, target))
}

/// A load's events as `init` says them on standard error: each step as it starts, and the
/// server's notices; nothing under `--quiet`.
pub(super) fn steps_said(quiet: bool) -> impl FnMut(&Event<'_>) {
    move |e| match e {
        _ if quiet => {}
        Event::StepStarted(s) => eprintln!("{s}..."),
        Event::Notice(n) => console::note(n),
        _ => {}
    }
}

/// How long `init` waits for its reading of the sizes.
pub(super) const SIZES_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The sizes of what was loaded, on standard error: the database, each table with its kind and
/// collocation and, on a sharded layout, its part on each shard (issue 32: `init` reports them
/// as a run does). A reading that fails is its note, never init's failure. Returns the reading
/// (for init's result, `init_observed`).
pub(super) fn say_sizes(rt: &tokio::runtime::Runtime, conn: &sut::Target) -> measure::sizes::Sizes {
    let s = crate::run::sizes::read(rt, conn, "init", SIZES_TIMEOUT);
    eprint!("{}", report::sizes::text_table(&s));
    s
}
