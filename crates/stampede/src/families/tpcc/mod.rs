//! The TPC-C family: `stampede run tpcc` on go-tpc's nine tables (`load::tpcc`), the
//! transactions of `workload::tpcc`.
//!
//! On a server you name, the tables must be loaded (`stampede init tpcc -w N`, or
//! `go-tpc tpcc prepare`); `-w` may use fewer warehouses than are loaded, never more. The
//! embedded server loads `-w` (default 1) itself.
//!
//! NURand's run-time C for C_LAST is drawn against the load-time one the loader recorded, so
//! that the two differ as clause 2.1.6.1 requires; data loaded by another tool has no record,
//! and a note says the rule could not be applied.
//!
//! Checks after the run: the commit count (one server commit per transaction, but none for the
//! New-Orders rolled back by design: those are counted apart, [`Counters::rollbacks`]) and the
//! consistency conditions of clause 3.3.2.
//!
//! On MySQL/MariaDB (`-d mysql://...`): tpcc-mysql's tables (`stampede init tpcc` loads them),
//! the MySQL dialect of the transactions. The commit count there is `Com_commit`, which counts
//! COMMIT statements only: every New-Order, Payment, Order-Status and Delivery that committed
//! sent one, a rolled-back New-Order sent ROLLBACK instead, and Stock-Level is one
//! autocommitted SELECT, which sends none ([`Runner::mysql_commits`]). A transaction the engine
//! retried after a deadlock (1213) or a lock wait timeout (1205) counts once, by its COMMIT.
//!
//! [`Counters::rollbacks`]: workload::tpcc::Counters::rollbacks

pub(crate) mod options;
pub(crate) mod plan;
pub(crate) mod section;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use load::LoadError;
use report::{Check, CheckStatus, RunConfig, RunResult};
use section::{TpccLimit, TpccSection};
use workload::tpcc::consistency::{self, Condition};
use workload::tpcc::spec::{NuC, P90_LIMIT_S};
use workload::tpcc::{Kind, Options, Tpcc};
use workload::{Rng, Workload};

use super::{skipped_all, Ctx, Family, Finish};
use crate::checks::ledger;
use crate::console::{self, Failure};
use crate::interrupt;
use plan::TpccJob;

pub(crate) const CONSISTENCY: &str = "TPC-C consistency (3.3.2)";

/// Mixed into the run's seed for the stream NURand's run-time constants are drawn from, so they
/// differ from the clients' streams.
const RUN_CONSTANTS_STREAM: u64 = 0x7CC0_2161;

pub(crate) struct Runner {
    job: TpccJob,
    warehouses: u32,
    workload: Option<Arc<Tpcc>>,
    conditions: Vec<Condition>,
    /// The target's protocol, whose schema names the tables (`new_order` or `new_orders`).
    dialect: sut::Dialect,
}

impl Runner {
    pub(crate) fn new(job: TpccJob) -> Runner {
        Runner {
            warehouses: job.warehouses.unwrap_or(1),
            job,
            workload: None,
            conditions: Vec::new(),
            dialect: sut::Dialect::Postgres,
        }
    }

    /// The workload, once `before` built it (CH-benCHmark runs it beside its analytic clients).
    pub(crate) fn workload(&self) -> Option<Arc<Tpcc>> {
        self.workload.clone()
    }

    /// TPC-C's section of a result whose first transaction types are TPC-C's five and only
    /// those (CH-benCHmark's runner gives it its result cut to them).
    pub(crate) fn tpcc_section(&self, r: &RunResult) -> TpccSection {
        build_section(
            r,
            self.warehouses,
            self.job.spec,
            Counts {
                rollbacks: self.counter(|c| &c.rollbacks),
                delivery_skipped: self.counter(|c| &c.delivery_skipped),
                remote_lines: self.counter(|c| &c.remote_lines),
                lines: self.counter(|c| &c.lines),
                by_last_name: self.counter(|c| &c.by_last_name),
            },
            &self.conditions,
        )
    }

    fn counter(
        &self,
        f: impl Fn(&workload::tpcc::Counters) -> &std::sync::atomic::AtomicU64,
    ) -> u64 {
        self.workload
            .as_ref()
            .map_or(0, |w| f(w.counters()).load(Ordering::Relaxed))
    }
}

/// The loaded warehouses, or what to do when TPC-C's tables are not there.
pub(crate) async fn loaded_warehouses(s: &mut sut::Session) -> Result<u32> {
    match load::tpcc::warehouses(s).await {
        Ok(0) => Err(Failure::setup(
            "TPC-C's warehouse table is empty",
            "load it with `stampede init tpcc -w N`",
        )),
        Ok(n) => Ok(n),
        Err(LoadError::Missing { table, .. }) => Err(Failure::setup(
            format!("TPC-C's table {table} does not exist"),
            "load the tables with `stampede init tpcc -w N` (or go-tpc tpcc prepare)",
        )),
        Err(e) => Err(e.into()),
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let opts = load::tpcc::InitOptions {
            warehouses: self.warehouses,
            seed: ctx.spec.seed,
            jobs: cpus,
            cancel: interrupt::flag(),
            ..Default::default()
        };
        console::note(&format!(
            "loading {} TPC-C warehouse(s) on the embedded server...",
            self.warehouses
        ));
        ctx.rt
            .block_on(load::tpcc::init(ctx.conn(), &opts, &mut |_| {}))
            .context("loading TPC-C's tables on the embedded server")?;
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let (loaded, constants) = ctx.with_session(async |s| {
            let n = loaded_warehouses(s).await?;
            let c = load::tpcc::load_constants(s).await?;
            Ok((n, c))
        })?;
        self.warehouses = match self.job.warehouses {
            Some(w) if w > loaded => {
                return Err(Failure::usage(
                    format!("-w {w}, but the database holds {loaded} warehouse(s)"),
                    format!(
                        "give -w {loaded} or less, or load more with `stampede init tpcc -w {w}`"
                    ),
                ))
            }
            Some(w) => w,
            None => loaded,
        };
        // The run's constants: a stream of their own, from the run's seed.
        let mut rng = Rng::from_seed(ctx.spec.seed ^ RUN_CONSTANTS_STREAM);
        let load_c = match constants {
            Some(c) => c,
            None => {
                console::note(
                    "the data carries no record of its load-time NURand constants (loaded by \
                     another tool): the run's C for C_LAST is drawn without clause 2.1.6.1's \
                     rule",
                );
                NuC::for_load(&mut rng)
            }
        };
        let opts = Options {
            warehouses: self.warehouses,
            c: NuC::for_run(&load_c, &mut rng),
            think: self.job.spec,
        };
        self.dialect = ctx.conn().dialect();
        let w = Tpcc::new(opts, self.dialect).map_err(|e| Failure::usage(e, ""))?;
        self.workload = Some(Arc::new(w));
        Ok(())
    }

    fn describe(&self) -> String {
        format!(
            "tpcc, {} warehouse{}{}",
            self.warehouses,
            if self.warehouses == 1 { "" } else { "s" },
            if self.job.spec { ", by the book" } else { "" }
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built before the run");
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)
    }

    /// The rows each transaction writes, from the workload's counters (clause 2: a New-Order
    /// updates its district, inserts an order, a new-order row and an order line per item
    /// while updating the item's stock; a Payment updates warehouse, district and customer and
    /// inserts a history row; a Delivery, per district with an undelivered order, deletes the
    /// new-order row and updates the order, its lines and the customer). Rolled-back New-Orders
    /// (clause 2.4.2.3) count as completed and wrote their rows before rolling back, which
    /// PostgreSQL's row counters count too. Statement counts are left to the sessions' tally:
    /// they follow each transaction's draws.
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        use measure::ledger::{Bounds, Claim, Kind as K};
        if self.workload.is_none() {
            return Vec::new();
        }
        let (no, no_failed) = ledger::counts(outcome, Kind::NewOrder as usize);
        let (pay, pay_failed) = ledger::counts(outcome, Kind::Payment as usize);
        let (del, del_failed) = ledger::counts(outcome, Kind::Delivery as usize);
        let lines = self.counter(|c| &c.lines);
        let rollbacks = self.counter(|c| &c.rollbacks);
        let delivered = (10 * del).saturating_sub(self.counter(|c| &c.delivery_skipped));
        // go-tpc's schema on PostgreSQL, tpcc-mysql's on MySQL (`workload::tpcc::sql`).
        let new_order = match self.dialect {
            sut::Dialect::Postgres => "new_order",
            sut::Dialect::MySql => "new_orders",
        };
        let orders = Bounds::up_to(no, no_failed);
        // Lines of rolled-back and failed New-Orders ran too: up to 15 each (clause 2.4.1.3).
        let order_lines = Bounds::up_to(lines, 15 * (rollbacks + no_failed));
        let payments = Bounds::up_to(pay, pay_failed);
        let deliveries = Bounds::up_to(delivered, 10 * del_failed);
        let claim = |kind, table: &str, rows: Bounds, from: &str| Claim {
            kind,
            table: table.into(),
            statements: None,
            rows: Some(rows),
            from: from.into(),
        };
        vec![
            claim(
                K::Update,
                "district",
                orders + payments,
                "New-Orders and Payments",
            ),
            claim(K::Insert, "orders", orders, "New-Orders"),
            claim(K::Insert, new_order, orders, "New-Orders"),
            claim(K::Insert, "order_line", order_lines, "order lines"),
            claim(K::Update, "stock", order_lines, "order lines"),
            claim(K::Update, "warehouse", payments, "Payments"),
            claim(K::Insert, "history", payments, "Payments"),
            claim(
                K::Update,
                "customer",
                payments + deliveries,
                "Payments and delivered orders",
            ),
            claim(K::Delete, new_order, deliveries, "delivered orders"),
            claim(K::Update, "orders", deliveries, "delivered orders"),
            // 5 to 15 lines an order (clause 2.4.1.3).
            claim(
                K::Update,
                "order_line",
                Bounds {
                    min: 5 * deliveries.min,
                    max: 15 * deliveries.max,
                },
                "lines of delivered orders",
            ),
        ]
    }

    fn counted_commits(&self, outcome: &Outcome, _fin: &Finish) -> u64 {
        outcome.total.total().committed() - self.counter(|c| &c.rollbacks)
    }

    /// MySQL's `Com_commit` counts COMMIT statements: those of the committed transactions less
    /// Stock-Level's, which is one autocommitted SELECT (module header).
    fn mysql_commits(&self, outcome: &Outcome, fin: &Finish) -> Option<u64> {
        let stock_level = outcome
            .total
            .txns
            .get(Kind::StockLevel as usize)
            .map_or(0, |t| t.committed());
        Some(self.counted_commits(outcome, fin) - stock_level)
    }

    fn check_names(&self) -> &'static [&'static str] {
        &[CONSISTENCY]
    }

    /// A surplus while autovacuum or autoanalyze ran (TPC-C's inserts and updates trigger them
    /// on small warehouses) is inconclusive, as for sysbench's workloads.
    fn checks(&mut self, ctx: &Ctx, _outcome: &Outcome) -> Result<Vec<Check>> {
        if !ctx.out.checks {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        }
        self.conditions = ctx.with_session(async |s| Ok(consistency::check(s).await?))?;
        Ok(vec![consistency_check(&self.conditions)])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        // A type's weight is its cards in the deck of 100.
        let weights = Kind::ALL.map(|k| k.cards());
        super::base_config(ctx, "tpcc".into(), &types, weights)
    }

    fn section(&self, r: &RunResult) -> Option<(&'static str, serde_json::Value)> {
        report::section::keyed(&self.tpcc_section(r))
    }
}

/// The workload's own counts, for [`build_section`].
pub(crate) struct Counts {
    pub rollbacks: u64,
    pub delivery_skipped: u64,
    pub remote_lines: u64,
    pub lines: u64,
    pub by_last_name: u64,
}

/// TPC-C's metrics from a run's result (clause 5.4; the rates: `TpccSection::set_rates`).
pub(crate) fn build_section(
    r: &RunResult,
    warehouses: u32,
    by_the_book: bool,
    n: Counts,
    conditions: &[Condition],
) -> TpccSection {
    let response_limits = (r.config.txn_types.iter())
        .zip(P90_LIMIT_S)
        .map(|(tt, limit_s)| TpccLimit {
            txn_type: tt.name.clone(),
            limit_ms: limit_s * 1000.0,
            ..Default::default()
        })
        .collect();
    let mut s = TpccSection {
        warehouses,
        by_the_book,
        rollbacks: n.rollbacks,
        delivery_skipped: n.delivery_skipped,
        remote_lines: n.remote_lines,
        lines: n.lines,
        by_last_name: n.by_last_name,
        response_limits,
        consistency: section::conditions(conditions),
        ..Default::default()
    };
    s.set_rates(&r.total, r.measured_duration_s);
    s
}

/// The checks that hold for a whole fleet, run once every process is done: the consistency
/// conditions (clause 3.3.2, which hold on any transaction-consistent database, so they are
/// checked on the data as it is now), into the merged section and a check of the fleet's. Each
/// process skipped its own (the others were still writing). Nothing for a result without
/// TPC-C's section.
pub(crate) fn fleet_checks(
    rt: &tokio::runtime::Runtime,
    conn: &sut::Target,
    m: &mut RunResult,
) -> Result<()> {
    use report::section::Section as _;
    use serde::Deserialize as _;
    let Some(mut t) =
        (m.sections.get(TpccSection::KEY)).and_then(|v| TpccSection::deserialize(v).ok())
    else {
        return Ok(());
    };
    let conditions = rt.block_on(async {
        let mut s = sut::Session::connect(conn).await?;
        let c = consistency::check(&mut s).await;
        s.close().await;
        anyhow::Ok(c?)
    })?;
    t.consistency = section::conditions(&conditions);
    if let Some((k, v)) = report::section::keyed(&t) {
        m.sections.insert(k.into(), v);
    }
    let mut check = consistency_check(&conditions);
    check.name = format!("fleet: {}", check.name);
    m.checks.push(check);
    Ok(())
}

/// One check for the twelve conditions: passed when every one that applies holds; the detail
/// names each that does not, with how many rows violate it.
pub(crate) fn consistency_check(conditions: &[Condition]) -> Check {
    let failed: Vec<String> = (conditions.iter())
        .filter(|c| !c.holds())
        .map(|c| {
            format!(
                "{} ({}): {} rows violate it",
                c.clause, c.rule, c.violations
            )
        })
        .collect();
    let not_applicable: Vec<&str> = (conditions.iter())
        .filter(|c| !c.applies)
        .map(|c| c.clause)
        .collect();
    let holding = conditions.iter().filter(|c| c.applies && c.holds()).count();
    let mut detail = format!("{holding} of {} conditions hold", conditions.len());
    if !not_applicable.is_empty() {
        detail.push_str(&format!(
            "; {} does not apply after a Delivery",
            not_applicable.join(", ")
        ));
    }
    if !failed.is_empty() {
        detail.push_str(&format!("; FAILED: {}", failed.join("; ")));
    }
    Check {
        name: CONSISTENCY.into(),
        status: if failed.is_empty() {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        detail,
    }
}
