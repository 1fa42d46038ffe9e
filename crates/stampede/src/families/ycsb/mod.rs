//! The YCSB family: `stampede run ycsb-a` ... `ycsb-f` on `usertable` (`loader`), the
//! operations of `txn`.
//!
//! On a server you name, `usertable` must be loaded (`stampede init ycsb -p recordcount=N`, or
//! YCSB's own load phase); the embedded server loads `-p recordcount` (default 1,000, as YCSB's
//! workload files) itself. The run's key space is the rows the table holds: inserts continue
//! after them, so runs can follow one another on the same table (YCSB's run phase would insert
//! from `recordcount` again and collide with an earlier run's inserts). How keys are named and
//! how long values are is what the load recorded in the table's comment (or, for a table YCSB
//! loaded, the `-p` properties and one row's length); a property that contradicts the table is
//! an error naming both.
//!
//! Checks after the run: the commit count (each operation is one server transaction: an
//! autocommitted statement, or READ-MODIFY-WRITE's BEGIN ... COMMIT), the row count (the rows
//! before plus the INSERTs committed) and every row's fields present at their length. On
//! MySQL, `Com_commit` counts COMMIT statements only, so the count covers READ-MODIFY-WRITE
//! (workload F) and is inconclusive for the mixes of autocommitted statements only.

pub(crate) mod options;
pub(crate) mod plan;

use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use load::LoadError;
use report::{Check, CheckStatus, RunConfig};
use txn::{Op, Options, Start, Ycsb};
use workload::Workload;

use super::{skipped_all, Ctx, Family, Finish};
use crate::checks::ledger::{self, Part};
use crate::console::{self, Failure};
use crate::interrupt;

pub(crate) mod loader;
pub mod txn;

/// Everything a YCSB run decided from its command line.
pub struct Job {
    /// The workload's name (`ycsb-a`).
    pub name: &'static str,
    pub opts: Options,
}

pub(crate) struct Runner {
    job: Job,
    workload: Option<Arc<Ycsb>>,
    rows_before: u64,
}

impl Runner {
    pub(crate) fn new(job: Job) -> Runner {
        Runner {
            job,
            workload: None,
            rows_before: 0,
        }
    }

    /// Committed transactions of operation `op`.
    fn committed(&self, outcome: &Outcome, op: Op) -> u64 {
        let Some(w) = &self.workload else { return 0 };
        (w.ops().iter().zip(&outcome.total.txns))
            .filter(|(o, _)| **o == op)
            .map(|(_, t)| t.committed())
            .sum()
    }
}

/// The options a loaded table imposes on the run (module header).
fn reconcile(opts: &mut Options, t: &loader::Loaded) -> Result<()> {
    let clash = |prop: &str, given: String, table: String| {
        Failure::usage(
            format!("-p {prop}={given}, but usertable holds {table}"),
            format!(
                "leave -p {prop} out to use the table as it is, or reload it with `stampede \
                 init ycsb -p {prop}={given}`"
            ),
        )
    };
    if t.rows == 0 {
        return Err(Failure::setup(
            "usertable is empty",
            "load it with `stampede init ycsb -p recordcount=N`",
        ));
    }
    if opts.was_given("fieldcount") && opts.fieldcount != t.fieldcount {
        return Err(clash(
            "fieldcount",
            opts.fieldcount.to_string(),
            format!("{} fields", t.fieldcount),
        ));
    }
    opts.fieldcount = t.fieldcount;
    if let Some(len) = t.recorded.as_ref().map(|r| r.fieldlength).or(t.fieldlength) {
        if opts.was_given("fieldlength") && opts.fieldlength != len {
            return Err(clash(
                "fieldlength",
                opts.fieldlength.to_string(),
                format!("values of {len} characters"),
            ));
        }
        opts.fieldlength = len;
    }
    match &t.recorded {
        Some(r) => {
            if opts.was_given("insertorder") && opts.insertorder != r.insertorder {
                return Err(clash(
                    "insertorder",
                    opts.insertorder.name().into(),
                    format!("{} keys", r.insertorder.name()),
                ));
            }
            opts.insertorder = r.insertorder;
            if opts.was_given("zeropadding") && opts.zeropadding != r.zeropadding {
                return Err(clash(
                    "zeropadding",
                    opts.zeropadding.to_string(),
                    format!("keys padded to {} digits", r.zeropadding),
                ));
            }
            opts.zeropadding = r.zeropadding;
        }
        None => console::note(&format!(
            "usertable was not loaded by stampede: new keys are named as insertorder={} \
             (-p insertorder says otherwise)",
            opts.insertorder.name()
        )),
    }
    if opts.was_given("recordcount") && opts.recordcount != t.rows {
        console::note(&format!(
            "-p recordcount={}, but usertable holds {} rows: the run chooses keys among all of \
             them and inserts after them",
            opts.recordcount, t.rows
        ));
    }
    opts.recordcount = t.rows;
    Ok(())
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        let o = &self.job.opts;
        let opts = loader::InitOptions {
            recordcount: o.recordcount,
            fieldcount: o.fieldcount,
            fieldlength: o.fieldlength,
            insertorder: o.insertorder,
            zeropadding: o.zeropadding,
            seed: ctx.spec.seed,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            no_vacuum: false,
            cancel: interrupt::flag(),
        };
        console::note(&format!(
            "loading YCSB's usertable ({} records) on the embedded server...",
            o.recordcount
        ));
        ctx.rt
            .block_on(loader::init(ctx.conn(), &opts, &mut |_| {}))
            .context("loading usertable on the embedded server")?;
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let loaded = ctx.with_session(async |s| match loader::inspect(s).await {
            Ok(l) => Ok(l),
            Err(LoadError::Missing { .. }) => Err(Failure::setup(
                "YCSB's table usertable does not exist",
                "load it with `stampede init ycsb -p recordcount=N` (or YCSB's load phase)",
            )),
            Err(e) => Err(e.into()),
        })?;
        reconcile(&mut self.job.opts, &loaded)?;
        self.rows_before = loaded.rows;
        let start = Start {
            rows: loaded.rows,
            seed: ctx.spec.seed,
        };
        let w = Ycsb::new(self.job.opts.clone(), start, ctx.conn().dialect());
        self.workload = Some(Arc::new(w));
        Ok(())
    }

    fn describe(&self) -> String {
        let o = &self.job.opts;
        format!(
            "{}, {}, {} records of {} x {} characters, {} keys",
            self.job.name,
            o.describe(),
            o.recordcount,
            o.fieldcount,
            o.fieldlength,
            o.insertorder.name()
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built before the run");
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)
    }

    /// Each operation's statements on usertable: READ and SCAN one select, UPDATE one update,
    /// INSERT one insert, READ-MODIFY-WRITE a select and an update. An update's key exists
    /// (one row) unless inserts run too, whose newest keys may not have committed yet.
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        use measure::ledger::{Bounds, Kind};
        let Some(w) = &self.workload else {
            return Vec::new();
        };
        let inserts = w.ops().contains(&Op::Insert);
        let update = Part {
            rows: Some(match inserts {
                true => Bounds { min: 0, max: 1 },
                false => Bounds::exact(1),
            }),
            ..Part::one_row(Kind::Update, txn::TABLE)
        };
        let read = Part::read(txn::TABLE);
        let claims = (w.ops().iter().enumerate())
            .flat_map(|(i, op)| {
                let parts = match op {
                    Op::Read | Op::Scan => vec![read],
                    Op::Update => vec![update],
                    Op::Insert => vec![Part::one_row(Kind::Insert, txn::TABLE)],
                    Op::ReadModifyWrite => vec![read, update],
                };
                let (committed, attempts) = ledger::counts(outcome, i);
                ledger::claims_of(committed, attempts, op.name(), &parts)
            })
            .collect();
        ledger::merged(claims)
    }

    fn counted_commits(&self, outcome: &Outcome, _fin: &Finish) -> u64 {
        outcome.total.total().committed()
    }

    /// `Com_commit` counts READ-MODIFY-WRITE's COMMITs; the other operations are autocommitted
    /// statements, which it does not count (module header).
    fn mysql_commits(&self, outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        let w = self.workload.as_ref()?;
        w.ops()
            .contains(&Op::ReadModifyWrite)
            .then(|| self.committed(outcome, Op::ReadModifyWrite))
    }

    /// A surplus while autovacuum or autoanalyze ran is inconclusive, as for sysbench's and
    /// TPC-C's workloads.
    fn check_names(&self) -> &'static [&'static str] {
        &["row count", "field lengths"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        if let Some(w) = &self.workload {
            // What YCSB's measurements would add: rows per scan, and reads of a key that was
            // not there (an INSERT that failed, yet was acknowledged as YCSB does).
            let c = w.counters();
            let scans = self.committed(outcome, Op::Scan);
            let missed = c.reads_not_found.load(std::sync::atomic::Ordering::Relaxed);
            if scans > 0 || missed > 0 {
                let rows = c.scanned_rows.load(std::sync::atomic::Ordering::Relaxed);
                console::note(&format!(
                    "SCANs returned {rows} rows ({:.1} per scan); {missed} reads found no row",
                    rows as f64 / scans.max(1) as f64
                ));
            }
        }
        if !ctx.out.checks {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        }
        let o = &self.job.opts;
        let (rows, bad) =
            ctx.with_session(async |s| Ok(loader::check(s, o.fieldcount, o.fieldlength).await?))?;
        let inserted = self.committed(outcome, Op::Insert);
        let expected = self.rows_before + inserted;
        let status = |ok: bool| match ok {
            true => CheckStatus::Passed,
            false => CheckStatus::Failed,
        };
        Ok(vec![
            Check {
                name: "row count".into(),
                status: status(rows == expected),
                detail: format!(
                    "usertable holds {rows} rows: {} before the run + {inserted} INSERTs \
                     committed = {expected}",
                    self.rows_before
                ),
            },
            Check {
                name: "field lengths".into(),
                status: status(bad == 0),
                detail: format!(
                    "{bad} of {rows} rows lack one of FIELD0..FIELD{} or hold a value not {} \
                     characters long",
                    o.fieldcount - 1,
                    o.fieldlength
                ),
            },
        ])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let o = &self.job.opts;
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let sum: f64 = o.proportions.iter().sum();
        // A type's weight is its percentage of the operations.
        let weights = o
            .ops()
            .into_iter()
            .map(|(_, p)| (100.0 * p / sum).round() as u32);
        super::base_config(ctx, self.job.name.into(), &types, weights)
    }
}
