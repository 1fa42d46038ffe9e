//! The sysbench family: `oltp_*` (sysbench 1.0.20's `oltp_common.lua` family) and
//! `bulk_insert`, on sysbench's `sbtestN` tables.
//!
//! On a server you name, the tables must exist (`stampede init oltp`, or sysbench's prepare);
//! the embedded server loads them itself. `bulk_insert`'s tables (one per client) must be empty
//! (sysbench's run would fail on the first duplicate id), checked before the run; its INSERTs
//! left in the clients' buffers when the run ends are sent afterwards on one session (sysbench's
//! `thread_done`), counted as writes and in the commit check.
//!
//! Checks after the run: the commit count (one server commit per transaction, unless
//! `--skip-trx` splits a transaction into autocommitted statements or bulk_insert commits one
//! INSERT per ~33,000 events: then the commits seen on the wire; a small surplus of server
//! commits while autovacuum or autoanalyze ran is inconclusive, not failed) and the rows of the
//! tables (`checks`).

mod checks;
pub(crate) mod options;
pub mod plan;

use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use load::oltp::{InitOptions, KeyDraw};
use report::{Check, RunConfig, SysbenchSection};
use sut::Session;
use workload::oltp::{BulkInsert, Dist, OltpWorkload, QueryCounts};
use workload::{TxnType, Workload};

use super::{skipped_all, Ctx, Family, Finish};
use crate::checks::ledger::{self, Part};
use crate::console;
use crate::families::sysbench::plan::{SbTest, SysbenchJob};
use crate::interrupt;

/// `k` from a sysbench distribution, on the loader's per-row uniform stream.
pub(crate) struct DistKey(pub Dist);

impl KeyDraw for DistKey {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64 {
        self.0.draw_with(uniform, 1, table_size.max(1) as u32) as i64
    }
}

/// The workload of a job: the engine is generic over it.
enum Loaded {
    Oltp(Arc<OltpWorkload>),
    Bulk(Arc<BulkInsert>),
}

pub(crate) struct Runner {
    job: SysbenchJob,
    loaded: Option<Loaded>,
    types: Vec<TxnType>,
    rows_before: Option<Vec<i64>>,
    section: SysbenchSection,
    /// The routing check's verdicts (sharded tables only).
    routing: Vec<report::Routing>,
}

impl Runner {
    pub(crate) fn new(job: SysbenchJob) -> Runner {
        Runner {
            section: SysbenchSection::default(),
            routing: Vec::new(),
            job,
            loaded: None,
            types: Vec::new(),
            rows_before: None,
        }
    }

    fn query_counts(&self) -> QueryCounts {
        match &self.loaded {
            Some(Loaded::Oltp(w)) => w.query_counts(),
            // Counted per statement instead (report::SysbenchSection::queries).
            _ => QueryCounts::default(),
        }
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        let o = &self.job.opts;
        if self.job.test == SbTest::BulkInsert {
            return ctx
                .rt
                .block_on(load::oltp::init_bulk(ctx.conn(), o.tables))
                .context("creating bulk_insert's tables on the embedded server");
        }
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
        console::note(&format!(
            "loading {} sbtest table(s) of {} rows on the embedded server...",
            o.tables, o.table_size
        ));
        ctx.rt
            .block_on(load::oltp::init(ctx.conn(), &init, &mut |_| {}))
            .context("loading the sbtest tables on the embedded server")?;
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let conn = ctx.conn();
        let o = &self.job.opts;
        if self.job.test == SbTest::BulkInsert {
            // Not skippable by --no-check: a non-empty table fails the run (duplicate ids).
            ctx.rt.block_on(checks::bulk_tables_empty(conn, o.tables))?;
        }
        self.rows_before = match self.job.test {
            _ if !ctx.out.checks => None,
            SbTest::BulkInsert => Some(vec![0; o.tables as usize]),
            SbTest::Oltp(_) => {
                let r = ctx.block_on(checks::rows(conn, o.tables))?;
                for (t, n) in r.iter().enumerate() {
                    if *n < i64::from(o.table_size) {
                        console::note(&format!(
                            "sbtest{} has {n} rows, fewer than --table-size={} (ids are drawn \
                             in 1..{})",
                            t + 1,
                            o.table_size,
                            o.table_size
                        ));
                    }
                }
                Some(r)
            }
        };
        let loaded = match self.job.test {
            SbTest::Oltp(t) => Loaded::Oltp(Arc::new(
                OltpWorkload::new(t, o.clone()).map_err(anyhow::Error::msg)?,
            )),
            SbTest::BulkInsert => Loaded::Bulk(Arc::new(
                BulkInsert::new(ctx.spec.clients).map_err(anyhow::Error::msg)?,
            )),
        };
        self.types = match &loaded {
            Loaded::Oltp(w) => w.txn_types().to_vec(),
            Loaded::Bulk(w) => w.txn_types().to_vec(),
        };
        self.loaded = Some(loaded);
        if conn.dialect() == sut::Dialect::Postgres && self.job.test != SbTest::BulkInsert {
            let stmts = crate::routing::sysbench_statements(&self.types);
            let require = self.job.require_single_shard;
            self.routing = ctx.with_session(async |s| {
                crate::routing::check_statements(s, &stmts, require).await
            })?;
        }
        let q = self.query_counts();
        self.section = SysbenchSection {
            test: self.job.test.name().into(),
            options: self.job.sysbench_options.clone(),
            reads_per_txn: q.reads,
            writes_per_txn: q.writes,
            other_per_txn: q.other,
            warmup_s: self.job.warmup_s as f64,
            percentile: self.job.percentile,
            queries_from_statements: self.job.test == SbTest::BulkInsert,
            ..Default::default()
        };
        if let Some(n) = &self.job.events_note {
            console::note(n);
        }
        Ok(())
    }

    fn routing(&self) -> Vec<report::Routing> {
        self.routing.clone()
    }

    fn describe(&self) -> String {
        let o = &self.job.opts;
        match self.job.test {
            SbTest::BulkInsert => "bulk_insert".into(),
            SbTest::Oltp(t) => format!("{}, {} x {} rows", t.name(), o.tables, o.table_size),
        }
    }

    fn sysbench_section(&self) -> Option<SysbenchSection> {
        Some(self.section.clone())
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let (conn, flag) = (ctx.conn(), interrupt::flag());
        match self.loaded.as_ref().expect("built before the run") {
            Loaded::Oltp(w) => engine::run(ctx.spec, w.clone(), conn, flag, on_event),
            Loaded::Bulk(w) => engine::run(ctx.spec, w.clone(), conn, flag, on_event),
        }
    }

    fn finish(&mut self, ctx: &Ctx) -> Result<Finish> {
        // bulk_insert's thread_done: the rows still buffered go out, even after an error or
        // Ctrl-C (they are events already counted).
        let Some(Loaded::Bulk(w)) = &self.loaded else {
            return Ok(Finish::default());
        };
        let w = w.clone();
        let (commits, tally) = ctx
            .block_on(async {
                let mut s = Session::connect(ctx.conn()).await?;
                let r = w.finish(&mut s).await;
                let tally = *s.tally();
                s.close().await;
                Ok(r.map(|c| (c, tally))?)
            })
            .map_err(|e| anyhow::anyhow!(sut::conninfo::redact(&format!("{e:#}"))))
            .context("sending bulk_insert's last buffered rows")?;
        Ok(Finish {
            commits,
            connections: 1,
            tally,
        })
    }

    /// Each transaction's statements (`OltpWorkload::ledger_mix`) times the transactions, on
    /// the sbtest tables together (each event draws its table). bulk_insert's rows are counted
    /// by its sessions' tally alone.
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        let Some(Loaded::Oltp(w)) = &self.loaded else {
            return Vec::new();
        };
        let parts: Vec<Part> = (w.ledger_mix().into_iter())
            .map(|(kind, count, rows)| Part {
                kind,
                table: "sbtest*",
                count,
                rows,
            })
            .collect();
        let (committed, attempts) = ledger::counts(outcome, 0);
        let from = format!("{} transactions", self.job.test.name());
        ledger::merged(ledger::claims_of(committed, attempts, &from, &parts))
    }

    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        let q = self.query_counts();
        let per_txn = self.job.test != SbTest::BulkInsert && (q.other > 0 || q.total() == 1);
        if per_txn {
            outcome.total.total().committed()
        } else {
            outcome.server_commits - outcome.setup_commits + fin.commits
        }
    }

    /// sysbench's transactions end in one COMMIT each, unless they are single autocommitted
    /// statements (`--skip_trx`, `oltp_point_select`, `oltp_insert`, bulk_insert's batches).
    fn mysql_commits(&self, outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        let q = self.query_counts();
        (self.job.test != SbTest::BulkInsert && q.other > 0)
            .then(|| outcome.total.total().committed())
    }

    fn check_names(&self) -> &'static [&'static str] {
        &["row counts"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        let Some(before) = &self.rows_before else {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        };
        let (conn, o) = (ctx.conn(), &self.job.opts);
        let committed = outcome.total.total().committed();
        // With `k` of the transactions abandoned at the end committed too.
        let fits: Box<dyn Fn(u64) -> (bool, String)> = match self.job.test {
            SbTest::Oltp(t) => {
                let after = ctx.block_on(checks::rows(conn, o.tables))?;
                Box::new(move |k| checks::row_check(t, o, before, &after, committed + k))
            }
            SbTest::BulkInsert => {
                let after = ctx.block_on(checks::bulk_state(conn, o.tables))?;
                Box::new(move |k| checks::bulk_row_check(&after, committed + k))
            }
        };
        Ok(vec![crate::checks::rows_verdict(
            "row counts",
            outcome.abandoned,
            |k| fits(k).0,
            fits(0).1,
        )])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        RunConfig {
            // bulk_insert sends its INSERTs with db_query (text, simple protocol) whatever the
            // mode.
            query_mode: match self.job.test {
                SbTest::BulkInsert => "simple".into(),
                SbTest::Oltp(_) => format!("{:?}", ctx.spec.mode).to_lowercase(),
            },
            // No scale: sysbench's size is --tables x --table-size (in `sysbench.options`),
            // printed as "tables: ..." in place of pgbench's "scaling factor".
            scale: 0,
            ..super::base_config(
                ctx,
                self.job.test.name().into(),
                &self.types,
                std::iter::repeat(1),
            )
        }
    }

    fn sysbench_result(&self, outcome: &Outcome, fin: &Finish) -> Option<SysbenchSection> {
        let mut section = self.section.clone();
        section.window = if self.job.warmup_s == 0 {
            outcome.total.clone()
        } else {
            after_warmup(&outcome.intervals, self.job.warmup_s, 1)
        };
        section.reconnects = outcome.reconnects;
        section.writes_after_run = fin.commits;
        let per_client: Vec<(f64, f64)> = (outcome.clients.iter())
            .map(|c| (c.committed as f64, c.busy_us as f64 / 1e6))
            .collect();
        section.fairness = Some(report::Fairness::of(&per_client));
        Some(section)
    }
}

/// The intervals from `warmup_s` on, merged (a tick ending within 1 ms of the boundary belongs
/// to the warm-up: tick clocks jitter).
fn after_warmup(
    intervals: &[measure::Interval],
    warmup_s: u64,
    n_types: usize,
) -> measure::Interval {
    let cut = warmup_s * 1_000_000;
    let mut w = measure::Interval::new(n_types, cut);
    let mut first = true;
    for i in intervals.iter().filter(|i| i.end_us > cut + 1_000) {
        if first {
            w.start_us = i.start_us.max(cut.saturating_sub(1_000));
            w.end_us = w.start_us;
            first = false;
        }
        w.merge(i);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_drops_the_first_intervals() {
        let iv = |s: u64, n: u64| {
            let mut i = measure::Interval::new(1, s * 1_000_000);
            i.end_us = (s + 1) * 1_000_000;
            for _ in 0..n {
                i.txns[0].latency.record(1000);
            }
            i
        };
        let all = vec![iv(0, 5), iv(1, 7), iv(2, 11)];
        let w = after_warmup(&all, 1, 1);
        assert_eq!(w.total().committed(), 18);
        assert_eq!((w.start_us, w.end_us), (1_000_000, 3_000_000));
        assert_eq!(after_warmup(&all, 0, 1).total().committed(), 23);
    }
}
