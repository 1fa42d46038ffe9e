//! `stampede init tpcb|oltp --layout citus|limitless|fdw [--shard CONNINFO ...] [--dry-run]`:
//! the command line turned into [`load::layout::ShardedOptions`], validated before any
//! connection; `--dry-run` prints the layout's plan (the SQL and where it runs) and connects to
//! nothing; otherwise the plan runs against the target (the coordinator or router) and the
//! shards, with pgbench's step lines and closing timing line, then the sizes of each table on
//! each shard (`init::say_sizes`).

use anyhow::{Context, Result};
use load::layout::{self, Layout, Shape, ShardedOptions};
use load::{Event, LoadError};
use sut::ConnConfig;

use crate::cli::{InitArgs, LayoutArg};
use crate::console::{self, Failure};
use crate::runtime;
use crate::workloads::Dataset;
use crate::{interrupt, targeting};

/// Whether `init` takes this path.
pub fn wanted(a: &InitArgs) -> bool {
    a.layout != LayoutArg::Plain
        || a.dry_run
        || !a.shard.is_empty()
        || !a.reference_table.is_empty()
}

fn usage(cause: impl Into<String>, todo: &str) -> anyhow::Error {
    Failure::usage(cause, todo)
}

/// The options, or what is wrong with the command line (no I/O).
fn options(a: &InitArgs, dataset: Dataset) -> Result<ShardedOptions> {
    let layout = match a.layout {
        LayoutArg::Plain => {
            return Err(usage(
                "--dry-run, --shard and --reference-table apply to a sharded layout",
                "add --layout citus, limitless or fdw",
            ))
        }
        LayoutArg::Citus => Layout::Citus,
        LayoutArg::Limitless => Layout::Limitless,
        LayoutArg::Fdw => Layout::Fdw,
    };
    let shape = match dataset {
        Dataset::Tpcb => Shape::Tpcb {
            scale: a.scale.whole().ok_or_else(|| {
                usage("-s/--scale must be a whole number for pgbench's tables", "")
            })?,
        },
        Dataset::Oltp => Shape::Oltp {
            tables: a.tables,
            table_size: a.table_size,
        },
        other => {
            return Err(usage(
                format!(
                    "--layout {} lays out tpcb's and oltp's tables, not {}",
                    layout.name(),
                    other.name()
                ),
                "use `init tpcb` or `init oltp`",
            ))
        }
    };
    let mut refused: Vec<&str> = Vec::new();
    if a.partitions > 0 {
        refused.push("--partitions");
    }
    if a.foreign_keys {
        refused.push("--foreign-keys");
    }
    if a.unlogged {
        refused.push("--unlogged-tables");
    }
    if a.tablespace.is_some() {
        refused.push("--tablespace");
    }
    if a.index_tablespace.is_some() {
        refused.push("--index-tablespace");
    }
    if a.fillfactor != 100 {
        // Limitless refuses the storage parameter; the other layouts keep one shape.
        refused.push("-F/--fillfactor");
    }
    if a.bulk_insert {
        refused.push("--bulk-insert");
    }
    if !refused.is_empty() {
        return Err(usage(
            format!(
                "{} cannot be used with --layout {}",
                refused.join(", "),
                layout.name()
            ),
            "a sharded layout partitions and keys the tables itself; leave these out",
        ));
    }
    if targeting::names_mysql(&a.target) {
        return Err(usage(
            format!("--layout {} is for PostgreSQL targets", layout.name()),
            "leave --layout out for a MySQL target",
        ));
    }
    let shards = a
        .shard
        .iter()
        .map(|s| shard(s))
        .collect::<Result<Vec<_>>>()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = ShardedOptions {
        layout,
        shape,
        shards,
        reference: a.reference_table.clone(),
        jobs: a.jobs.map_or(cpus, |j| j as usize),
        no_vacuum: a.no_vacuum,
        cancel: interrupt::flag(),
    };
    opts.validate().map_err(|e| usage(e, ""))?;
    Ok(opts)
}

/// One `--shard` value: a libpq connection string or URL, with libpq's defaults (environment
/// included) for what it leaves out.
fn shard(s: &str) -> Result<ConnConfig> {
    let looks = s.contains('=') || s.starts_with("postgresql://") || s.starts_with("postgres://");
    if !looks {
        return Err(usage(
            format!("--shard {s:?} is not a connection string"),
            "give it as 'host=... port=... dbname=...' or postgresql://host:port/db",
        ));
    }
    let flags = sut::ConnFlags {
        dbname: Some(s.to_string()),
        ..Default::default()
    };
    ConnConfig::resolve(&flags, &|k| std::env::var(k).ok()).map_err(|e| {
        usage(
            sut::conninfo::redact(&format!("--shard: {e}")),
            "give it as 'host=... port=... dbname=...'",
        )
    })
}

/// `init` with `--layout` (or `--dry-run`).
pub fn init(args: InitArgs, dataset: Dataset) -> Result<i32> {
    let opts = options(&args, dataset)?;
    if args.dry_run {
        println!(
            "-- stampede init {} --layout {}: dry run, nothing was connected to or created",
            match opts.shape {
                Shape::Tpcb { .. } => "tpcb",
                Shape::Oltp { .. } => "oltp",
            },
            opts.layout.name()
        );
        print!("{}", layout::plan(&opts));
        return Ok(0);
    }
    targeting::validate(&args.target)?;
    if targeting::wants_embedded(&args.target) {
        return Err(usage(
            format!(
                "--layout {} needs a target: the coordinator or router",
                opts.layout.name()
            ),
            "name it with -h/-p/-U/-d",
        ));
    }
    let conn = targeting::resolve_remote(&args.target)?;
    let rt = runtime::setup()?;
    let quiet = args.quiet;
    let r = rt.block_on(layout::execute(&conn, &opts, &mut |e| {
        if let (false, Event::StepStarted(s)) = (quiet, e) {
            eprintln!("{s}...");
        }
    }));
    match r {
        Ok(timings) => {
            eprintln!("{timings}");
            super::init::say_sizes(&rt, &conn);
            Ok(0)
        }
        Err(LoadError::Interrupted) => {
            console::note(
                "initialisation interrupted: run init again, which drops what was created",
            );
            Ok(crate::console::EXIT_INTERRUPTED)
        }
        Err(LoadError::Invalid(m)) => Err(Failure::setup(m, "")),
        Err(e) => Err(e).context(format!(
            "initialising --layout {} on {}",
            opts.layout.name(),
            conn.redacted()
        )),
    }
}
