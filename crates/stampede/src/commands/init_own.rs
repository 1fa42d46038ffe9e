//! `stampede init iibench` and `stampede init crud`: the tables of stampede's own workloads,
//! made by the same code the embedded server uses before a run (`families::iibench::create`,
//! `families::crud::load`). A table of the same name that stampede did not create is refused before
//! anything is dropped.

use std::time::Instant;

use anyhow::{Context, Result};

use crate::cli::InitArgs;
use crate::console::Failure;
use crate::families::loading::observed::{Described, InitOutputs, Watcher};
use crate::families::loading::section::LoadedTable;
use crate::targeting;
use crate::workloads::Dataset;

pub(super) fn init(args: InitArgs, dataset: Dataset, out: InitOutputs) -> Result<i32> {
    let mut given = args.pgsql.given();
    if args.bulk_insert {
        given.push("--bulk-insert");
    }
    if args.warehouses.is_some() {
        given.push("-w/--warehouses");
    }
    if !given.is_empty() {
        return Err(Failure::usage(
            format!("{} do not apply to these tables", given.join(", ")),
            "",
        ));
    }
    if dataset == Dataset::Crud && (args.tables == 0 || args.table_size == 0) {
        return Err(Failure::usage(
            "--tables and --table-size must be at least 1",
            "",
        ));
    }
    targeting::validate(&args.target)?;
    let (rt, target) = super::init::open_to_load(&args.target, args.quiet)?;
    let mut watcher = Watcher::start(&rt, &target, &out);
    // These loaders report no progress: the step is said here, and the tables below.
    watcher.event(&load::Event::StepStarted("create tables"));
    let started = Instant::now();
    let dialect = target.conn.dialect();
    let r = rt.block_on(async {
        let mut s = sut::Session::connect(&target.conn).await?;
        let r = match dataset {
            Dataset::Iibench => crate::families::iibench::create(&mut s, dialect).await,
            _ => crate::families::crud::load(&mut s, dialect, args.tables, args.table_size).await,
        };
        s.close().await;
        r
    });
    watcher.event(&load::Event::StepFinished {
        step: "create tables",
        elapsed: started.elapsed(),
    });
    let what = match dataset {
        Dataset::Iibench => "purchases_index (empty, 3 secondary indexes)".to_string(),
        _ => format!(
            "crud1..crud{} with {} rows each",
            args.tables, args.table_size
        ),
    };
    let code = r
        .map(|()| {
            eprintln!("created {what} in {:.1} s", started.elapsed().as_secs_f64());
            0
        })
        .with_context(|| format!("creating {what} on {}", target.conn.redacted()));
    let described = match dataset {
        Dataset::Iibench => Described {
            workload: "iibench".into(),
            parameters: Default::default(),
            jobs: 1,
            tables: vec![LoadedTable {
                name: crate::families::iibench::txn::TABLE.into(),
                rows: 0,
            }],
            step: "create tables",
        },
        _ => Described {
            workload: "crud".into(),
            parameters: super::init_observed::params([
                ("tables", args.tables.into()),
                ("table_size", args.table_size.into()),
            ]),
            jobs: 1,
            tables: (1..=args.tables)
                .map(|t| LoadedTable {
                    name: crate::families::crud::txn::table(t),
                    rows: args.table_size,
                })
                .collect(),
            step: "create tables",
        },
    };
    let code =
        super::init_observed::after_load(&rt, &target, &out, watcher, described, code, false);
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}
