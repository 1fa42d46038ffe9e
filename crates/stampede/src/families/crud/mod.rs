//! The CRUD mix's family (`stampede run crud`): the `crudN` tables (`workload::crud`), loaded by
//! `stampede init crud` or by the embedded server, the mix run over them, and the checks after.
//!
//! Checks: each table's rows = its rows before the run + the rows committed inserts added -
//! the rows committed deletes removed (the workload counts what each committed statement
//! changed, by table), and each table's secondary index agrees with the table
//! (`workload::tables::check_indexes`). Every operation is one autocommitted statement: on
//! PostgreSQL one commit each, on MySQL no COMMIT statement (so `Com_commit` is not compared).

use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use report::{Check, RunConfig};
use sut::{Dialect, Session};
use txn::{Crud, Op, MARK};
use workload::tables::{self, Existing};
use workload::{Rng, Workload as _};

use super::{skipped_all, Ctx, Family, Finish};
use crate::checks::ledger::{self, Part};
use crate::console::{self, Failure};
use crate::interrupt;

/// Rows per loading INSERT.
const LOAD_BATCH: u64 = 1000;
/// The load's stream: the same tables for a size, whatever the run's seed.
const LOAD_SEED: u64 = 0xC2D0;

/// Create and load `crud1..crud<tables>` with `rows` rows each, replacing tables stampede made
/// and refusing, before anything is dropped, when one is someone else's.
pub(crate) async fn load(s: &mut Session, dialect: Dialect, tables: u32, rows: u64) -> Result<()> {
    let mut ours = Vec::new();
    for t in 1..=tables {
        let name = txn::table(t);
        match tables::existing(s, dialect, &name, MARK).await? {
            Existing::Foreign => {
                return Err(Failure::setup(
                    format!(
                        "a table {name} exists in this database and stampede did not create it"
                    ),
                    "stampede never drops a table it did not create: drop it yourself, or use \
                     another database (-d)",
                ))
            }
            Existing::Ours => ours.push(name),
            Existing::Absent => {}
        }
    }
    for name in ours {
        s.simple_query(&format!("DROP TABLE {name}")).await?;
    }
    for t in 1..=tables {
        for sql in txn::create_sql(dialect, t) {
            s.simple_query(&sql).await?;
        }
        let mut rng = Rng::from_seed(LOAD_SEED ^ u64::from(t));
        let mut first = 1;
        while first <= rows {
            // Ctrl-C or SIGTERM: stop between batches, as every loader does, and leave no
            // table looking loaded (issue 35: this load once ran to its end and exited 0).
            if interrupt::requested() {
                for made in 1..=t {
                    s.simple_query(&format!("DROP TABLE IF EXISTS {}", txn::table(made)))
                        .await?;
                }
                return Err(Failure::interrupted(
                    "interrupted while loading: the crud tables made were dropped again",
                ));
            }
            let last = (first + LOAD_BATCH - 1).min(rows);
            s.simple_query(&txn::load_sql(t, first, last, rows, &mut rng))
                .await?;
            first = last + 1;
        }
        if let Some(sql) = txn::after_load_sql(dialect, t, rows) {
            s.simple_query(&sql).await?;
        }
    }
    Ok(())
}

pub(crate) mod options;
pub(crate) mod plan;
pub(crate) mod section;
pub mod txn;

/// What a CRUD-mix run decided.
pub struct Job {
    pub tables: u32,
    pub rows: u64,
    pub batch: u32,
    pub mix: txn::Mix,
}

pub(crate) struct Runner {
    job: Job,
    workload: Option<Arc<Crud>>,
    /// Each table's rows before the run.
    before: Vec<u64>,
}

impl Runner {
    pub(crate) fn new(job: Job) -> Runner {
        Runner {
            job,
            workload: None,
            before: Vec::new(),
        }
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        let (tables, rows) = (self.job.tables, self.job.rows);
        console::note(&format!(
            "loading {tables} crud table(s) of {rows} rows on the embedded server..."
        ));
        ctx.with_session(async |s| load(s, dialect, tables, rows).await)
            .context("loading the crud tables on the embedded server")
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        let tables = self.job.tables;
        self.before = ctx.with_session(async |s| {
            let mut counts = Vec::new();
            for t in 1..=tables {
                let name = txn::table(t);
                if tables::existing(s, dialect, &name, MARK).await? == Existing::Absent {
                    return Err(Failure::setup(
                        format!("the table {name} does not exist"),
                        format!(
                            "load the tables with `stampede init crud --tables {tables} \
                             --table-size N`"
                        ),
                    ));
                }
                counts.push(tables::count(s, &name).await?);
            }
            Ok(counts)
        })?;
        let opts = txn::Options {
            tables,
            rows: self.job.rows,
            batch: self.job.batch,
        };
        let w = Crud::new(dialect, opts).map_err(|e| Failure::usage(e, ""))?;
        self.workload = Some(Arc::new(w));
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "crud, {} table{} of {} rows, mix {}",
            self.job.tables,
            if self.job.tables == 1 { "" } else { "s" },
            self.job.rows,
            self.job.mix
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built before the run");
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)
    }

    /// The rows the committed statements wrote, and their rate over the whole run.
    fn section(&self, result: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        let c = self.workload.as_ref()?.counters();
        let tables = 1..=self.job.tables;
        report::section::keyed(&section::CrudSection::new(
            self.job.batch,
            self.job.tables,
            tables.clone().map(|t| c.inserted(t)).sum(),
            tables.map(|t| c.deleted(t)).sum(),
            section::whole_run_s(result),
        ))
    }

    /// Each operation one statement on a table it draws ("crud*"): reads, inserts of 1 or
    /// `--batch` rows, updates of up to `--batch` rows (a drawn id may have been deleted);
    /// and per table the rows its committed inserts and deletes changed, as the workload
    /// counted them from each statement's answer.
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        use measure::ledger::{Bounds, Claim, Kind};
        let Some(w) = &self.workload else {
            return Vec::new();
        };
        let batch = u64::from(w.options().batch);
        let mut claims: Vec<Claim> = Op::ALL
            .iter()
            .enumerate()
            .flat_map(|(i, op)| {
                let part = match op {
                    Op::Point | Op::Index | Op::Range | Op::In => Part::read("crud*"),
                    Op::Insert | Op::BatchInsert => Part {
                        rows: None,
                        ..Part::one_row(Kind::Insert, "crud*")
                    },
                    Op::Update => Part {
                        rows: Some(Bounds { min: 0, max: batch }),
                        ..Part::one_row(Kind::Update, "crud*")
                    },
                    Op::Delete => Part {
                        rows: None,
                        ..Part::one_row(Kind::Delete, "crud*")
                    },
                };
                let (committed, attempts) = ledger::counts(outcome, i);
                ledger::claims_of(committed, attempts, op.name(), &[part])
            })
            .collect();
        // A failed attempt may have written rows the server counts (aborted rows count in
        // PostgreSQL's n_tup_*): up to a batch each.
        let failed: u64 = (0..Op::ALL.len())
            .map(|i| ledger::counts(outcome, i).1)
            .sum();
        for t in 1..=w.options().tables {
            let c = w.counters();
            for (kind, rows) in [(Kind::Insert, c.inserted(t)), (Kind::Delete, c.deleted(t))] {
                claims.push(Claim {
                    kind,
                    table: txn::table(t),
                    statements: None,
                    rows: Some(Bounds::up_to(rows, failed * batch)),
                    from: "rows the committed statements reported".into(),
                });
            }
        }
        ledger::merged(claims)
    }

    fn counted_commits(&self, outcome: &Outcome, _fin: &Finish) -> u64 {
        outcome.total.total().committed()
    }

    /// Autocommitted statements: MySQL's `Com_commit` does not count them.
    fn mysql_commits(&self, _outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        None
    }

    fn check_names(&self) -> &'static [&'static str] {
        &["row counts", "index consistency"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        if !ctx.out.checks {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        }
        let w = self.workload.clone().expect("built before the run");
        let dialect = ctx.conn().dialect();
        let may_install = ctx.embedded();
        let tables = self.job.tables;
        let (counts, verdicts) = ctx.with_session(async |s| {
            let mut counts = Vec::new();
            let mut verdicts = Vec::new();
            for t in 1..=tables {
                let name = txn::table(t);
                counts.push(tables::count(s, &name).await?);
                let index = txn::index(t);
                verdicts.extend(
                    tables::check_indexes(s, dialect, &name, &[(&index, "k")], may_install).await?,
                );
            }
            Ok((counts, verdicts))
        })?;
        let c = w.counters();
        let mut wrong = Vec::new();
        let mut total = (0u64, 0u64, 0u64);
        // Rows the committed statements do not account for, over all tables: an abandoned
        // operation changed at most one batch.
        let mut unexplained = 0u64;
        for (i, (&after, &before)) in counts.iter().zip(&self.before).enumerate() {
            let t = i as u32 + 1;
            let (ins, del) = (c.inserted(t), c.deleted(t));
            total = (total.0 + after, total.1 + ins, total.2 + del);
            unexplained += (before + ins).abs_diff(after + del);
            if before + ins != after + del {
                wrong.push(format!(
                    "{} has {after} rows, expected {before} + {ins} inserted - {del} deleted = {}",
                    txn::table(t),
                    (before + ins).saturating_sub(del)
                ));
            }
        }
        let batch = u64::from(self.job.batch.max(1));
        let rows = crate::checks::rows_verdict(
            "row counts",
            outcome.abandoned,
            |k| unexplained <= k * batch,
            if wrong.is_empty() {
                format!(
                    "every table's rows = before + inserted - deleted by committed statements \
                     ({} rows now, {} inserted, {} deleted)",
                    total.0, total.1, total.2
                )
            } else {
                wrong.join("; ")
            },
        );
        Ok(vec![rows, super::iibench::index_check(&verdicts)])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        super::base_config(ctx, "crud".into(), &types, self.job.mix.0)
    }
}
