//! The commit count and the statement ledger after a run (`crate::checks`, `checks::ledger`):
//! the baseline's sessions read the server's counters again, and the ledger sets the family's
//! claims and the sessions' tallies beside their movement. Each runs as a step of `after`.

use anyhow::Result;
use engine::Outcome;
use report::{Check, CheckStatus};

use super::{split, Baseline, Ctx, Family, Finish};
use crate::checks::{self, CommitVerdict};

/// What the commit count compares with the server's counter.
pub(super) struct Counted<'a> {
    pub(super) family: &'a dyn Family,
    pub(super) outcome: &'a Outcome,
    pub(super) fin: &'a Finish,
    pub(super) observer_connections: u64,
    pub(super) conn: &'a sut::Target,
    pub(super) server_metrics: Option<&'a measure::server::ServerMetrics>,
    pub(super) watched: Option<&'a observe::replication::Watched>,
}

/// The commit count's verdicts (and Galera's conflicts), and the ledger's reading.
pub(super) struct Verdicts {
    pub(super) commit: Check,
    pub(super) conflicts: Option<Check>,
    pub(super) ledger: Option<checks::LedgerRead>,
}

/// Whether a fault run met a fault: one was injected (`--fault-cmd`, `--fault-at`), or its
/// clients saw an attempt fail or had to reconnect (a fault the user caused by hand). Only
/// then may the server have restarted or been replaced, so that a count that disagrees says
/// nothing for sure; a probe run that met none is checked as any run.
pub(super) fn faulted(ctx: &Ctx, outcome: &Outcome) -> bool {
    let h = &outcome.history;
    ctx.spec.fault_run
        && (ctx.out.fault.is_some()
            || !h.connects.is_empty()
            || (h.attempts.iter()).any(|a| a.outcome != measure::attempts::Outcome::Ok))
}

/// The commit count: the baseline's sessions read the counters after the run.
pub(super) fn commit(
    ctx: &Ctx,
    b: Baseline,
    c: &Counted,
    maintenance_before: Option<i64>,
) -> Result<Verdicts> {
    let (outcome, fin, family) = (c.outcome, c.fin, c.family);
    let mut conflicts = None;
    let (v, ledger) = match b {
        Baseline::Pg(b) => ctx.block_on(async {
            b.verdict(
                family.counted_commits(outcome, fin),
                outcome.setup_commits,
                outcome.connections + c.observer_connections + fin.connections,
            )
            .await
        })?,
        Baseline::PgHosts(b) => {
            let mut hosts = checks::hosts::per_host(
                &outcome.endpoints,
                (fin.commits, fin.connections),
                &checks::hosts::observer_per_host(c.conn, c.server_metrics),
            );
            split::add_watch(&mut hosts, c.watched);
            ctx.block_on(async {
                b.verdict(&hosts, family.counted_commits(outcome, fin))
                    .await
            })?
        }
        Baseline::MySql(b) => {
            let (v, galera, ledger) = ctx.block_on(async {
                b.verdict(
                    family.mysql_commits(outcome, fin),
                    &outcome.endpoint_commits,
                    &outcome.endpoint_failed_commits,
                )
                .await
            })?;
            if let Some(g) = galera {
                let t = outcome.total.total();
                let seen = t.retries
                    + t.failures_of(measure::FailureKind::Serialization)
                    + t.failures_of(measure::FailureKind::Deadlock);
                let (status, detail) = g.status(seen);
                conflicts = Some(Check {
                    name: "Galera conflicts".into(),
                    status,
                    detail,
                });
            }
            (v, ledger)
        }
    };
    let (status, detail) = match v {
        CommitVerdict::Exact(c) if checks::in_doubt(&c, outcome.abandoned).is_some() => {
            checks::in_doubt(&c, outcome.abandoned).expect("checked")
        }
        CommitVerdict::Exact(c) => {
            let maintenance = match maintenance_before {
                Some(b) => ctx.block_on(checks::maintenance_runs(ctx.conn()))? - b,
                None => 0,
            };
            family.commit_status(ctx, c, maintenance)?
        }
        CommitVerdict::Inconclusive(detail) => (CheckStatus::Skipped, detail),
    };
    let (status, detail) = match (faulted(ctx, outcome), status) {
        // Other sessions (the fault's own commands) and restarts make a fault run's count
        // say nothing for sure.
        (true, CheckStatus::Failed) => (
            CheckStatus::Skipped,
            format!("inconclusive in a fault run: {detail}"),
        ),
        (_, s) => (s, detail),
    };
    Ok(Verdicts {
        commit: Check {
            name: "commit count".into(),
            status,
            detail,
        },
        conflicts,
        ledger,
    })
}

/// The statement ledger of a run (`checks::ledger`): the family's claims and the sessions'
/// tallies against the server's counters' movement.
pub(super) fn ledger_section(
    ctx: &Ctx,
    family: &dyn Family,
    outcome: &Outcome,
    fin: &Finish,
    (read, rows_unreported, window_functions): (Option<checks::LedgerRead>, bool, bool),
    closed_before: measure::ledger::Tally,
) -> report::LedgerSection {
    let mut clients = outcome.tally;
    clients.merge(&fin.tally);
    let (server, own, others, closed) = match read {
        Some(r) => (r.delta, r.own, r.others, r.closed),
        None => (
            Err("the server's counters were not read".to_string()),
            measure::ledger::Tally::default(),
            false,
            measure::ledger::closed(),
        ),
    };
    // Every session of stampede's closed between the two readings, and the baselines' own.
    let mut all = closed.since(&closed_before);
    all.merge(&own);
    let claims = family.ledger_claims(outcome, fin);
    // A fault run's writes whose answer was lost may have committed, as abandoned ones.
    let unknown = (outcome.history.attempts.iter())
        .filter(|a| matches!(a.outcome, measure::attempts::Outcome::Unknown(_)))
        .count() as u64;
    checks::ledger::build(&checks::ledger::Inputs {
        claims: &claims,
        clients,
        setup: outcome.setup_tally,
        all,
        in_doubt: outcome.abandoned + unknown,
        server,
        others,
        rows_unreported,
        window_functions,
        dialect: ctx.conn().dialect(),
    })
}
