//! `stampede init ycsb` (YCSB's load phase: `ycsb load jdbc -P workloads/workloada -p
//! recordcount=N`) and `stampede check ycsb`: YCSB's `usertable` loaded in parallel by
//! `families::ycsb::loader`, with YCSB's properties (`-p KEY=VALUE`) for its shape. `init ycsb-a` ... `init
//! ycsb-f` load the same table: YCSB's six core workloads share it.

use anyhow::{Context, Result};
use load::LoadError;

use crate::cli::InitArgs;
use crate::console::{self, Failure};
use crate::families::loading::observed::{Described, InitOutputs, Watcher};
use crate::families::loading::LoadView;
use crate::{interrupt, targeting};

/// `init ycsb`: the options of the init command that apply, the properties, the load.
pub(super) fn init(args: InitArgs, name: &str, out: InitOutputs) -> Result<i32> {
    let given = args.pgsql.given();
    if !given.is_empty() || args.bulk_insert || args.warehouses.is_some() {
        return Err(Failure::usage(
            "sysbench's and TPC-C's options do not apply to YCSB's usertable",
            "give its shape with -p recordcount=N, -p fieldcount=N, -p fieldlength=N",
        ));
    }
    if args.jobs == Some(0) {
        return Err(Failure::usage("-j/--jobs must be at least 1", ""));
    }
    let o = crate::families::ycsb::plan::options(name, &args.property)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = crate::families::ycsb::loader::InitOptions {
        recordcount: o.recordcount,
        fieldcount: o.fieldcount,
        fieldlength: o.fieldlength,
        insertorder: o.insertorder,
        zeropadding: o.zeropadding,
        seed: 0,
        jobs: args.jobs.map_or(cpus, |j| j as usize),
        no_vacuum: args.no_vacuum,
        cancel: interrupt::flag(),
    };
    targeting::validate(&args.target)?;
    let (rt, target) = super::init::open_to_load(&args.target, args.quiet)?;
    let mut view = LoadView::new(args.quiet);
    let mut watcher = Watcher::start(&rt, &target, &out);
    let r = rt.block_on(crate::families::ycsb::loader::init(
        &target.conn,
        &opts,
        &mut |e| {
            view.event(e);
            watcher.event(e);
        },
    ));
    view.finish();
    let code = match r {
        Ok(report) => {
            let secs = report.timings.total().as_secs_f64();
            eprintln!("{}", report.plan);
            eprintln!("{}", report.timings);
            eprintln!(
                "usertable: {} records of {} x {} characters, {} keys, in {secs:.1} s ({:.0} \
                 rows/s)",
                report.rows,
                opts.fieldcount,
                opts.fieldlength,
                opts.insertorder.name(),
                report.rows as f64 / secs.max(1e-9)
            );
            Ok(0)
        }
        Err(LoadError::Interrupted) => {
            console::note("initialisation interrupted: usertable was dropped again");
            Ok(crate::console::EXIT_INTERRUPTED)
        }
        Err(e) => Err(e).context(format!("initialising YCSB on {}", target.conn.redacted())),
    };
    let described = Described {
        workload: "ycsb".into(),
        parameters: super::init_observed::params([
            ("recordcount", o.recordcount.into()),
            ("fieldcount", o.fieldcount.into()),
            ("fieldlength", o.fieldlength.into()),
            ("insertorder", opts.insertorder.name().into()),
        ]),
        jobs: opts.jobs as u32,
        tables: Vec::new(),
        step: "load",
    };
    // init ycsb has never said its sizes: read for the result only.
    let code =
        super::init_observed::after_load(&rt, &target, &out, watcher, described, code, false);
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}

/// `check ycsb`: every row's fields present at the loaded length.
pub(super) async fn check(s: &mut sut::Session) -> Result<Vec<(bool, String)>> {
    let t = match crate::families::ycsb::loader::inspect(s).await {
        Ok(t) => t,
        Err(LoadError::Missing { .. }) => {
            return Err(Failure::setup(
                "YCSB's table usertable does not exist",
                "load it with `stampede init ycsb -p recordcount=N`",
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let len = (t.recorded.as_ref().map(|r| r.fieldlength))
        .or(t.fieldlength)
        .unwrap_or(0);
    let (rows, bad) = crate::families::ycsb::loader::check(s, t.fieldcount, len).await?;
    Ok(vec![(
        bad == 0,
        format!(
            "usertable: {bad} of {rows} rows lack one of its {} fields or hold a value not {len} \
             characters long",
            t.fieldcount
        ),
    )])
}
