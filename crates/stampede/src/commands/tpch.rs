//! `stampede init tpch --scale SF`: TPC-H's eight tables, loaded by `families::tpch::load`
//! (dbgen's rows from `tpchgen`, no files on disk) in parallel by table part; with `--fleet`,
//! split across the fleet's processes like `init tpcc` (`init_fleet`). The options of the init
//! command that apply: `-s/--scale` (a fraction allowed), `--indexes`, `-j`, `-n/--no-vacuum`.

use anyhow::{Context, Result};
use load::LoadError;

use super::init_fleet::Split;
use crate::cli::InitArgs;
use crate::console::{self, Failure};
use crate::families::loading::observed::{Described, InitOutputs};
use crate::families::tpch::load::{self as loader, schema::Table, InitOptions};
use crate::interrupt;

/// The options of `init tpch`, or what is wrong with them (no I/O).
fn options(args: &InitArgs) -> Result<InitOptions> {
    let mut given = args.pgsql.given();
    if args.bulk_insert {
        given.push("--bulk-insert");
    }
    if args.partitions > 0 {
        given.push("--partitions");
    }
    if args.foreign_keys {
        given.push("--foreign-keys");
    }
    if args.unlogged {
        given.push("--unlogged-tables");
    }
    if args.server_side {
        given.push("--server-side");
    }
    if args.fillfactor != 100 {
        given.push("-F/--fillfactor");
    }
    if args.tablespace.is_some() || args.index_tablespace.is_some() {
        given.push("--tablespace/--index-tablespace");
    }
    if !given.is_empty() {
        return Err(Failure::usage(
            format!("{} do not apply to TPC-H's tables", given.join(", ")),
            "`stampede init tpch --scale SF [--indexes] [-j N]`",
        ));
    }
    if args.jobs == Some(0) {
        return Err(Failure::usage("-j/--jobs must be at least 1", ""));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = InitOptions {
        scale: args.scale.0,
        jobs: args.jobs.map_or(cpus, |j| j as usize),
        indexes: args.indexes,
        no_vacuum: args.no_vacuum,
        cancel: interrupt::flag(),
        part: None,
        set: Default::default(),
    };
    opts.validate().map_err(|e| {
        Failure::usage(
            e.to_string(),
            "e.g. `--scale 1`, or `--scale 0.1` to try it",
        )
    })?;
    Ok(opts)
}

pub(super) fn init(args: InitArgs, out: InitOutputs) -> Result<i32> {
    let opts = options(&args)?;
    let described = Described {
        workload: "tpch".into(),
        parameters: super::init_observed::params([
            ("scale", opts.scale.into()),
            ("indexes", opts.indexes.into()),
        ]),
        jobs: opts.jobs as u32,
        tables: Vec::new(),
        step: "load",
    };
    let split = Split::Tpch(opts.clone());
    super::init::watched_load(
        &args,
        &out,
        split,
        described,
        |rt, conn, on_event| rt.block_on(loader::init(conn, &opts, on_event)),
        |r, conn| match r {
            Ok(report) => {
                let rows: u64 = report.rows.iter().sum();
                let secs = report.timings.total().as_secs_f64();
                eprintln!("{}", report.plan);
                eprintln!("{}", report.timings);
                let each: Vec<String> = Table::ALL
                    .iter()
                    .zip(&report.rows)
                    .map(|(t, n)| format!("{} {n}", t.name()))
                    .collect();
                eprintln!(
                    "TPC-H scale {}: {rows} rows in {secs:.1} s ({:.0} rows/s): {}",
                    opts.scale,
                    rows as f64 / secs.max(1e-9),
                    each.join(", ")
                );
                Ok(0)
            }
            Err(LoadError::Interrupted) => {
                console::note("initialisation interrupted: no TPC-H table is left looking loaded");
                Ok(crate::console::EXIT_INTERRUPTED)
            }
            // A table of someone else's: refused before anything was dropped.
            Err(LoadError::Invalid(why)) => Err(Failure::setup(why, "")),
            Err(e) => Err(e).context(format!("initialising TPC-H on {}", conn.redacted())),
        },
    )
}
