//! The failover probe's family (`stampede failover`, `stampede run failover-probe`): its table,
//! created before the run and dropped after the audit, and the audit's read.
//!
//! The table is stampede's own (`workload::probe`): one left by an earlier run that stopped
//! before its end carries stampede's mark and is replaced; a table of that name without the
//! mark belongs to someone else and the run is refused, touching nothing.
//!
//! The audit reads, after the run, every sequence number the table holds, through the target
//! as the clients reach it (for PostgreSQL, the host that takes writes: the new primary after a
//! failover), then drops the table.

pub(crate) mod plan;

use std::sync::Arc;

use anyhow::Result;
use engine::{Event, Outcome, RunError};
use report::RunConfig;
use sut::{Dialect, Session};
use workload::probe::{self, ProbeWorkload};
use workload::Workload as _;

use super::{Ctx, Family, Finish};
use crate::console::Failure;
use crate::families::Audited;
use crate::interrupt;

pub(crate) struct Runner {
    workload: Option<Arc<ProbeWorkload>>,
    /// `--keep-probe`: the table stays after the audit.
    keep: bool,
}

impl Runner {
    pub(crate) fn new(keep: bool) -> Runner {
        Runner {
            workload: None,
            keep,
        }
    }
}

/// Create the probe table, replacing one stampede left; refuse a foreign one.
async fn create(s: &mut Session, dialect: Dialect) -> Result<()> {
    let exists = first(s.simple_query(probe::exists_sql(dialect)).await?);
    if matches!(exists.as_deref(), Some("t" | "1" | "true")) {
        let mark = first(s.simple_query(probe::mark_sql(dialect)).await?);
        if mark.as_deref() != Some(probe::MARK) {
            return Err(Failure::setup(
                format!(
                    "a table {} exists in this database and stampede did not create it",
                    probe::TABLE
                ),
                "stampede never drops a table it did not create: rename or drop it, or probe \
                 another database (-d)",
            ));
        }
        s.simple_query(probe::DROP_SQL).await?;
    }
    for sql in probe::create_sql(dialect) {
        s.simple_query(&sql).await?;
    }
    Ok(())
}

fn first(rows: Vec<Vec<Option<String>>>) -> Option<String> {
    rows.into_iter().next()?.into_iter().next()?
}

impl Family for Runner {
    fn load_embedded(&mut self, _ctx: &Ctx) -> Result<()> {
        // Nothing to load: the run creates its table (before).
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        ctx.with_session(async |s| create(s, dialect).await)?;
        let w = ProbeWorkload::new(dialect);
        self.workload = Some(Arc::new(
            match crate::failpoint::get("probe-reads-as-writes") {
                Some(_) => w.with_reads_as_writes(),
                None => w,
            },
        ));
        Ok(())
    }

    fn describe(&self) -> String {
        "failover probe (one-row writes and reads)".into()
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("created before the run");
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)
    }

    fn counted_commits(&self, outcome: &Outcome, _fin: &Finish) -> u64 {
        outcome.total.total().committed()
    }

    /// What the failover section reports, from the same record (the attempts' history): the
    /// acknowledged writes, one single-row INSERT each (those whose answer was lost may have
    /// committed too), and the successful reads, one SELECT each.
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        use measure::attempts::{Op, Outcome as Ended};
        use measure::ledger::{Bounds, Claim, Kind};
        let count = |write: bool, ended: fn(&Ended) -> bool| {
            (outcome.history.attempts.iter())
                .filter(|a| matches!(a.op, Op::Write { .. }) == write && ended(&a.outcome))
                .count() as u64
        };
        let acknowledged = count(true, |o| *o == Ended::Ok);
        let unknown = count(true, |o| matches!(o, Ended::Unknown(_)));
        let reads = count(false, |o| *o == Ended::Ok);
        let writes = Bounds::up_to(acknowledged, unknown);
        vec![
            Claim {
                kind: Kind::Insert,
                table: probe::TABLE.into(),
                statements: Some(writes),
                rows: Some(writes),
                from: "acknowledged writes".into(),
            },
            Claim {
                kind: Kind::Select,
                table: probe::TABLE.into(),
                statements: Some(Bounds::exact(reads)),
                rows: None,
                from: "successful reads".into(),
            },
        ]
    }

    /// Autocommitted statements: MySQL's `Com_commit` does not count them.
    fn mysql_commits(&self, _outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        None
    }

    fn checks(&mut self, _ctx: &Ctx, _outcome: &Outcome) -> Result<Vec<report::Check>> {
        // The probe's check is the audit (run_on: `audit`).
        Ok(Vec::new())
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let weights = ctx.spec.weights.clone();
        super::base_config(ctx, "failover-probe".into(), &types, weights)
    }

    fn audit(&mut self, ctx: &Ctx) -> Option<Result<Audited>> {
        let keep = self.keep;
        Some(ctx.block_on(async {
            let conn = ctx.conn();
            let mut s = Session::connect(conn).await?;
            let host = match s.endpoint_index(conn).and_then(|i| conn.endpoint_name(i)) {
                Some((h, p)) => format!("{h}:{p}"),
                None => "the target".into(),
            };
            let rows = s.simple_query(probe::AUDIT_SQL).await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let num = |i: usize| -> Result<u64> {
                    let v = r.get(i).cloned().flatten().unwrap_or_default();
                    v.parse()
                        .map_err(|_| anyhow::anyhow!("audit: unexpected value {v:?}"))
                };
                out.push((num(0)?, num(1)?));
            }
            if !keep {
                s.simple_query(probe::DROP_SQL).await?;
            }
            s.close().await;
            Ok(Audited { host, rows: out })
        }))
    }
}
