//! CH-benCHmark (Cole et al., DBTest 2011): TPC-C's transactions and TPC-H-like analytic
//! queries on the same data at once, the question behind every HTAP claim: what does a long
//! query do to OLTP latency on the same server. `stampede run ch` runs `-c` TPC-C clients
//! (TPC-C as `run tpcc` runs it, with its options `-w` and `--spec`) and
//! `--analytic-clients N` clients sending the 22 queries (`queries`), measured apart
//! (`section`); `--sweep analytic-clients=0,1,2` runs it once per count, so the sweep's table
//! shows the OLTP p99 against the analytic load.
//!
//! - `queries`: the 22 queries in both dialects (go-tpc's `ch` texts);
//! - `options`, `plan`: `--analytic-clients`, TPC-C's plan with the analytic clients added;
//! - `workload`: one engine run, TPC-C's terminals first, the analytic clients after;
//! - `section`: the `ch` section (TPC-C's own nested, OLTP latency, each query's times);
//! - this file: the runner. The TPC-C part is `tpcc::Runner`'s, called for everything TPC-C's
//!   (its load, its data checks, its ledger claims, its consistency conditions), so a CH run
//!   checks TPC-C exactly as `run tpcc` does.
//!
//! Data: TPC-C's nine tables and CH's three (`region`, `nation`, `supplier`: TPC-H's at scale
//! 1, 5, 25 and 10,000 rows, loaded by `tpch::load` with `Set::Ch`). `stampede init ch -w N`
//! loads both; the embedded server loads `-w` (default 1) and the three; data prepared by
//! `go-tpc ch prepare` runs too.
//!
//! Checks after the run: TPC-C's (the consistency conditions of clause 3.3.2) and the commit
//! count, which counts each analytic query as the one read-only transaction it is on
//! PostgreSQL (inconclusive on a surplus where parallel query may run, as for TPC-H), and
//! nothing for it on MySQL (`Com_commit` counts COMMIT statements, which a query in
//! autocommit does not send).
//!
//! Must not touch: any table but these twelve; TPC-C's tables only through TPC-C's
//! transactions.

pub(crate) mod options;
pub(crate) mod plan;
pub mod queries;
pub(crate) mod section;
mod workload;

use std::sync::Arc;

use ::workload::Workload as _;
use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError, RunSpec};
use report::{Check, CheckStatus, RunConfig, RunResult};

use super::{Ctx, Family, Finish};
use crate::choices::sweep::Param;
use crate::console::{self, Failure};
use crate::families::tpch::load::{self as tpch_load, Set};
use crate::interrupt;
use plan::ChJob;
use workload::{Ch, OLTP_TYPES};

/// CH's three tables and their rows (TPC-H's at scale 1).
pub(crate) const TABLES: [(&str, u64); 3] = [("region", 5), ("nation", 25), ("supplier", 10_000)];

/// How `init ch` and the embedded server load CH's three tables.
pub(crate) fn extra_tables(jobs: usize, no_vacuum: bool) -> tpch_load::InitOptions {
    tpch_load::InitOptions {
        scale: 1.0,
        jobs,
        indexes: false,
        no_vacuum,
        cancel: interrupt::flag(),
        part: None,
        set: Set::Ch,
    }
}

pub(crate) struct Runner {
    tpcc: super::tpcc::Runner,
    /// TPC-C's clients and the analytic ones, of the run or of a sweep's step.
    oltp: u32,
    analytic: u32,
    timeout_ms: Option<u64>,
    workload: Option<Arc<Ch>>,
}

impl Runner {
    pub(crate) fn new(job: ChJob) -> Runner {
        Runner {
            tpcc: super::tpcc::Runner::new(job.tpcc),
            oltp: job.oltp,
            analytic: job.analytic,
            timeout_ms: job.timeout_ms,
            workload: None,
        }
    }

    /// Committed analytic queries.
    fn queries(outcome: &Outcome) -> u64 {
        (outcome.total.txns.iter().skip(OLTP_TYPES))
            .map(|t| t.committed())
            .sum()
    }
}

/// CH's three tables are there, or what to do.
async fn find_tables(s: &mut sut::Session) -> Result<()> {
    let d = s.dialect();
    for (t, rows) in TABLES {
        if ::workload::tables::comment(s, d, t).await?.is_none() {
            return Err(Failure::setup(
                format!("CH-benCHmark's table {t} does not exist"),
                "load TPC-C's and CH's tables with `stampede init ch -w N` (or go-tpc ch prepare)",
            ));
        }
        let n: u64 = (s.simple_query(&format!("SELECT count(*) FROM {t}")).await?)
            .first()
            .and_then(|r| r.first()?.as_deref()?.parse().ok())
            .unwrap_or(0);
        if n != rows {
            console::note(&format!(
                "CH-benCHmark's table {t} holds {n} rows, not the benchmark's {rows}: the \
                 queries' joins through it read what is there"
            ));
        }
    }
    Ok(())
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        self.tpcc.load_embedded(ctx)?;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        console::note("loading CH-benCHmark's region, nation and supplier...");
        ctx.rt
            .block_on(tpch_load::init(
                ctx.conn(),
                &extra_tables(cpus, false),
                &mut |_| {},
            ))
            .context("loading CH-benCHmark's tables on the embedded server")?;
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        self.tpcc.before(ctx)?;
        ctx.with_session(async |s| find_tables(s).await)?;
        // A sweep's step may have changed either count (`shape_step`): the engine's clients
        // are both.
        self.oltp = ctx.spec.clients.saturating_sub(self.analytic);
        let tpcc = self.tpcc.workload().expect("built by TPC-C's before");
        self.workload = Some(Arc::new(Ch::new(
            tpcc,
            self.oltp,
            ctx.conn().dialect(),
            self.timeout_ms,
        )));
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "ch: {}; {} TPC-C client{} and {} analytic client{}",
            self.tpcc.describe(),
            self.oltp,
            if self.oltp == 1 { "" } else { "s" },
            self.analytic,
            if self.analytic == 1 { "" } else { "s" },
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built before the run");
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)
    }

    fn ledger_claims(&self, outcome: &Outcome, fin: &Finish) -> Vec<measure::ledger::Claim> {
        self.tpcc.ledger_claims(outcome, fin)
    }

    /// TPC-C's (each committed transaction less the New-Orders rolled back by design), and
    /// each analytic query, one read-only transaction of its own.
    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        self.tpcc.counted_commits(outcome, fin)
    }

    /// TPC-C's COMMIT statements; a query in autocommit sends none (module header).
    fn mysql_commits(&self, outcome: &Outcome, fin: &Finish) -> Option<u64> {
        let tpcc = self.tpcc.mysql_commits(outcome, fin)?;
        Some(tpcc.saturating_sub(Self::queries(outcome)))
    }

    fn commit_status(
        &self,
        ctx: &Ctx,
        c: crate::checks::CommitCheck,
        maintenance: i64,
    ) -> Result<(CheckStatus, String)> {
        match self.analytic {
            0 => self.tpcc.commit_status(ctx, c, maintenance),
            _ => super::tpch::run::parallel_query_status(ctx, c, maintenance),
        }
    }

    fn check_names(&self) -> &'static [&'static str] {
        self.tpcc.check_names()
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        self.tpcc.checks(ctx, outcome)
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        // TPC-C's types weigh their cards in the deck of 100 (clause 5.2.4.2); each query
        // is no card of that deck (weight 0): an analytic client sends them all each round.
        let weights =
            (::workload::tpcc::Kind::ALL.iter().map(|k| k.cards())).chain(std::iter::repeat(0));
        super::base_config(ctx, "ch".into(), &types, weights)
    }

    fn section(&self, r: &RunResult) -> Option<(&'static str, serde_json::Value)> {
        // TPC-C's figures from TPC-C's types alone: what its section reads (the types, the
        // totals, the measured time), not a copy of the whole result and its intervals.
        let mut total = r.total.clone();
        total.txns.truncate(OLTP_TYPES);
        let oltp = RunResult {
            config: RunConfig {
                txn_types: r
                    .config
                    .txn_types
                    .iter()
                    .take(OLTP_TYPES)
                    .cloned()
                    .collect(),
                ..Default::default()
            },
            total,
            measured_duration_s: r.measured_duration_s,
            ..Default::default()
        };
        let rows = (self.workload.as_ref())
            .map(|w| w.rows())
            .unwrap_or_default();
        report::section::keyed(&section::build(
            &r.total,
            r.measured_duration_s,
            OLTP_TYPES,
            (self.oltp, self.analytic),
            self.tpcc.tpcc_section(&oltp),
            &rows,
        ))
    }

    fn rescale_refusal(&self) -> Option<String> {
        Some("TPC-C's warehouses are loaded once (`stampede init ch -w N`)".into())
    }

    /// `clients` is TPC-C's (`-c`) and `analytic-clients` the analytic ones: the engine runs
    /// both.
    fn shape_step(&mut self, param: &Param, value: &str, spec: &mut RunSpec) -> Result<bool> {
        let n: u32 = match param {
            Param::Clients | Param::AnalyticClients => {
                value.parse().context("a sweep's clients")?
            }
            _ => return Ok(false),
        };
        match param {
            Param::Clients => self.oltp = n,
            _ => self.analytic = n,
        }
        spec.clients = self.oltp + self.analytic;
        spec.threads = spec.threads.min(spec.clients).max(1);
        Ok(true)
    }

    fn sweep_refusal(&self, param: &Param) -> Option<String> {
        match param {
            Param::Scale => self.rescale_refusal(),
            Param::Rate => Some("run ch is not paced by -R".into()),
            Param::Clients | Param::AnalyticClients | Param::Setting(_) => None,
        }
    }
}

/// Checks that hold for `run ch` as for `run tpcc`, by name (`workloads`).
pub(crate) const CHECKS: &[&str] = &["commit count", "statement ledger", super::tpcc::CONSISTENCY];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_tables_are_tpch_s_at_scale_1() {
        let o = extra_tables(2, true);
        assert_eq!(o.set.tables().len(), 3);
        for ((t, rows), table) in TABLES.iter().zip(o.set.tables()) {
            assert_eq!(*t, table.name());
            assert_eq!(
                tpch_load::rows::base_rows(*table, o.scale) as u64,
                *rows,
                "{t}"
            );
        }
    }
}
