//! The checks that make a result trustworthy, run around every benchmark:
//!
//! **Commit count.** The server counts every committed transaction in
//! `pg_stat_database.xact_commit`, including ones a benchmark did not measure: each connection's
//! startup (one on PostgreSQL 15, measured here at run time rather than assumed) and each
//! statement preparation round trip. The identity checked is
//!
//! ```text
//! server xact_commit delta = committed transactions counted by stampede
//!                          + setup commits seen on the wire (prepare, rollback-free setup)
//!                          + connections opened x commits per connection startup (calibrated)
//! ```
//!
//! The baseline is read in a session that stays inside one open, read-only transaction for the
//! whole run (`pg_stat_clear_snapshot()` before each read), so its own reads are never counted; a
//! read-committed transaction with no xid and no live snapshot holds back no vacuum horizon.
//! Statistics reach shared memory lazily (at the latest when a backend exits), so the final read
//! waits until stampede's sessions are gone and the counter stops moving.
//!
//! **Through a connection pooler** (pgbouncer in transaction mode, say) the identity cannot be
//! exact, and the check says "inconclusive" (skipped, with the numbers) rather than pass or fail
//! on a guess. The server sees the pool's few sessions, not one per client; the pool's start-ups
//! could be counted (`pg_stat_database.sessions`, PostgreSQL 14+), but the pooler also runs
//! statements of its own, each a server transaction: pgbouncer 1.18 sends
//! `SET application_name='stampede';` on a server connection the first time it serves one of
//! stampede's clients (its start-up packet to the server does not carry the client's
//! parameters), and `server_check_query` on connections idle for `server_check_delay`; other
//! poolers differ. What stays exact is the lower bound: every counted transaction is one server
//! commit, so a deficit fails. A pooler is recognised by the calibration connection: it connects
//! and leaves without a query, and a pooler starts no server session for it (`sessions` does not
//! move). Its sessions stay connected after the run, so the final read waits for them to be idle
//! for 2 s (an idle backend flushes its statistics within a second) instead of gone.
//!
//! **TPC-B invariant.** `tpcb-like` adds the same delta to one account, one teller, one branch and
//! one history row, so over any run Δsum(abalance) = Δsum(tbalance) = Δsum(bbalance) =
//! Δsum(history.delta), and history grows by one row per committed tpcb-like or simple-update
//! transaction. `simple-update` keeps only Δsum(abalance) = Δsum(delta). On a freshly loaded or
//! reset database (all sums zero before), the absolute sums are equal too (pgbench's TPC-B
//! "consistency" condition).

pub mod hosts;
pub mod ledger;
pub mod mysql;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use report::CheckStatus;
use sut::Session;

async fn scalar_i128(s: &mut Session, sql: &str) -> Result<i128> {
    let rows = s
        .simple_query(sql)
        .await
        .with_context(|| format!("running `{sql}`"))?;
    let v = rows
        .last()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_else(|| "0".into());
    v.parse::<i128>()
        .with_context(|| format!("`{sql}` returned {v:?}, not a number"))
}

/// `xact_commit` and, on PostgreSQL 14+, `sessions` (server session start-ups; read through
/// `to_jsonb` so that older servers answer NULL instead of an error) in one statistics snapshot.
const COUNTERS: &str = "SELECT pg_stat_clear_snapshot(), xact_commit, to_jsonb(d) ->> 'sessions' \
     FROM pg_stat_database d WHERE datname = current_database()";

/// The database's counters at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counters {
    commits: i128,
    /// `None` before PostgreSQL 14.
    sessions: Option<i128>,
}

async fn read_counters(s: &mut Session) -> Result<Counters> {
    let rows = s.simple_query(COUNTERS).await?;
    let row = rows.first();
    let v = row
        .and_then(|r| r.get(1).cloned().flatten())
        .unwrap_or_default();
    let commits = v
        .parse::<i128>()
        .with_context(|| format!("pg_stat_database.xact_commit is {v:?}"))?;
    let sessions = row
        .and_then(|r| r.get(2).cloned().flatten())
        .and_then(|v| v.parse::<i128>().ok());
    Ok(Counters { commits, sessions })
}

/// Other client sessions on the database: their commits would make the identity fail, so the
/// check says so instead of blaming the count.
async fn foreign_sessions(s: &mut Session) -> Result<i128> {
    scalar_i128(
        s,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    )
    .await
}

/// Other client sessions that are busy or were within the last 2 s. Through a pooler the pool's
/// server sessions stay connected after the run; an idle backend flushes its statistics within
/// about a second of going idle (PostgreSQL 15's `PGSTAT_MIN_INTERVAL`; the statistics
/// collector's 500 ms before), so sessions idle for longer have nothing left to report.
async fn recently_active_sessions(s: &mut Session) -> Result<i128> {
    scalar_i128(
        s,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND backend_type = 'client backend' AND pid <> pg_backend_pid() \
         AND (state IS DISTINCT FROM 'idle' OR state_change > clock_timestamp() - interval '2 s')",
    )
    .await
}

/// Read the counters until they stop moving (stats flush lazily), at most `limit`. Direct, "quiet"
/// means no other session at all: stampede's own sessions must have exited (a backend flushes
/// its last statistics when it exits). Through a pooler the pool's sessions stay; quiet means
/// none of them was active in the last 2 s.
async fn settle(s: &mut Session, limit: Duration, pooled: bool) -> Result<Counters> {
    let deadline = Instant::now() + limit;
    let mut last = read_counters(s).await?;
    let mut stable = 0;
    while Instant::now() < deadline && stable < 3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = read_counters(s).await?;
        let others = if pooled {
            recently_active_sessions(s).await?
        } else {
            foreign_sessions(s).await?
        };
        if now == last && others == 0 {
            stable += 1;
        } else {
            stable = 0;
        }
        last = now;
    }
    Ok(last)
}

pub struct CommitBaseline {
    session: Session,
    before: Counters,
    /// The statement ledger's baseline, read in the same transaction (`ledger::server`).
    ledger: Option<LedgerBaseline>,
    pub per_connection: i128,
    /// Client sessions other than ours when the baseline was taken.
    pub foreign_before: i128,
    /// The target is a connection pooler: the calibration connection started no server session
    /// (PostgreSQL 14+ only; older servers do not count sessions).
    pub pooled: bool,
}

/// The ledger's server counters before the run, and this session's own statements up to then.
pub struct LedgerBaseline {
    pss: Result<Option<String>, String>,
    before: Result<ledger::Counters, String>,
    own: measure::ledger::Tally,
}

/// What the ledger needs from a baseline after the run: the server's counters' movement, what
/// the baseline's own session sent in between, and whether other sessions were seen.
pub struct LedgerRead {
    pub delta: Result<ledger::Counters, String>,
    pub own: measure::ledger::Tally,
    pub others: bool,
    /// What the process's closed sessions had sent when the counters were read
    /// (`measure::ledger::closed`; the baselines' sessions are left out of it).
    pub closed: measure::ledger::Tally,
}

impl LedgerRead {
    /// Several servers' readings as one (a target's hosts, a cluster's nodes): the counters
    /// summed, `closed` as at the first reading (only the baselines' own sessions, which are
    /// left out of it, close between readings).
    pub fn sum(reads: Vec<LedgerRead>, unread: Option<String>) -> Option<LedgerRead> {
        let first = reads.first()?.closed;
        let others = reads.iter().any(|r| r.others);
        let mut own = measure::ledger::Tally::default();
        reads.iter().for_each(|r| own.merge(&r.own));
        let deltas: Result<Vec<_>, String> = reads.into_iter().map(|r| r.delta).collect();
        let delta = match (unread, deltas) {
            (Some(why), _) => Err(why),
            (None, Err(e)) => Err(e),
            (None, Ok(d)) => ledger::Counters::sum(d).ok_or_else(|| "no server".to_string()),
        };
        Some(LedgerRead {
            delta,
            own,
            others,
            closed: first,
        })
    }
}

/// Read the ledger's counters (a failure is the ledger's, not the commit count's).
pub(crate) async fn ledger_counters(
    s: &mut Session,
    pss: &Result<Option<String>, String>,
) -> Result<ledger::Counters, String> {
    let r = match s.dialect() {
        sut::Dialect::Postgres => ledger::server::pg(s, pss).await,
        sut::Dialect::MySql => ledger::server::mysql(s).await,
    };
    r.map_err(|e| sut::conninfo::redact(&format!("{e:#}")))
}

/// Open the baseline session, calibrate the commits one connection startup costs on this server,
/// and read the baseline; with `ledger`, the statement ledger's counters too.
pub async fn commit_baseline(conn: &sut::Target, ledger: bool) -> Result<CommitBaseline> {
    let mut session = Session::connect(conn).await?;
    // Its statements are counted apart (`LedgerRead::own`).
    session.unrecorded();
    // Where pg_stat_statements is: asked before the transaction, whose reads must not fail.
    let pss = match ledger {
        true => ledger::server::pg_stat_statements(&mut session).await,
        false => Ok(None),
    };
    session
        .simple_query("BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY")
        .await?;
    let foreign_before = foreign_sessions(&mut session).await?;
    let before_probe = settle(&mut session, Duration::from_secs(3), false).await?;
    // Calibration: one connection that does nothing but connect and leave. A pooler answers it
    // without starting a server session (pgbouncer connects to the server only when a client
    // sends a query), which `sessions` shows.
    let probe = Session::connect(conn).await?;
    probe.close().await;
    let mut before = settle(&mut session, Duration::from_secs(3), false).await?;
    let pooled = matches!((before.sessions, before_probe.sessions), (Some(a), Some(b)) if a == b);
    let mut per_connection = (before.commits - before_probe.commits).max(0);
    // A connection's start commits at most one transaction on a stock server. More means other
    // commits fell in the window (autovacuum's ANALYZE of freshly loaded tables flushes its
    // counts when it ends, after `settle` saw a quiet 300 ms): probe again and keep the least,
    // a few times at most (a server whose logins really commit more costs a second here).
    for _ in 0..3 {
        if pooled || per_connection <= 1 {
            break;
        }
        let start = before;
        let probe = Session::connect(conn).await?;
        probe.close().await;
        before = settle(&mut session, Duration::from_secs(3), false).await?;
        per_connection = per_connection.min((before.commits - start.commits).max(0));
    }
    let ledger = match ledger {
        true => {
            let own = *session.tally();
            let before = ledger_counters(&mut session, &pss).await;
            Some(LedgerBaseline { pss, before, own })
        }
        false => None,
    };
    Ok(CommitBaseline {
        session,
        before,
        ledger,
        per_connection: if pooled { 0 } else { per_connection },
        foreign_before,
        pooled,
    })
}

pub struct CommitCheck {
    pub passed: bool,
    pub detail: String,
    /// Server commits minus the expected ones (0 when passed).
    pub difference: i128,
}

/// The commit count's verdict.
pub enum CommitVerdict {
    /// The exact identity held or failed (a direct connection, one server session per client
    /// connection).
    Exact(CommitCheck),
    /// Through a connection pooler: the server committed at least every counted transaction (a
    /// deficit fails as `Exact`), but the surplus mixes the pool's server session start-ups with
    /// the pooler's own statements, which no count can tell apart: inconclusive, with the numbers.
    Inconclusive(String),
}

impl CommitBaseline {
    /// Finish the check after the engine closed every session. `connections`: the client
    /// connections opened since the baseline (the engine's and the observer's).
    pub async fn verdict(
        mut self,
        committed: u64,
        setup_commits: u64,
        connections: u64,
    ) -> Result<(CommitVerdict, Option<LedgerRead>)> {
        let after = settle(&mut self.session, Duration::from_secs(10), self.pooled).await?;
        let server_sessions = match (after.sessions, self.before.sessions) {
            (Some(a), Some(b)) => Some(a - b),
            _ => None,
        };
        let pooled = self.pooled;
        let foreign_after = foreign_sessions(&mut self.session).await?;
        let ledger = match self.ledger.take() {
            Some(l) => {
                let own = self.session.tally().since(&l.own);
                let closed = measure::ledger::closed();
                let after = ledger_counters(&mut self.session, &l.pss).await;
                Some(LedgerRead {
                    delta: match (l.before, after) {
                        (Ok(b), Ok(a)) => Ok(b.delta(&a)),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    },
                    own,
                    // Through a pooler the pool's sessions are other sessions too.
                    others: self.foreign_before + foreign_after > 0 || pooled,
                    closed,
                })
            }
            None => None,
        };
        let _ = self.session.simple_query("ROLLBACK").await;
        let Self {
            session,
            before,
            per_connection,
            foreign_before,
            ..
        } = self;
        session.close().await;
        let v = verdict_of(
            Calibrated {
                before,
                per_connection,
                foreign_before,
                pooled,
            },
            after,
            server_sessions,
            foreign_after,
            (committed, setup_commits, connections),
        );
        Ok((v, ledger))
    }
}

/// What the baseline knew before the run, for the verdict.
struct Calibrated {
    before: Counters,
    per_connection: i128,
    foreign_before: i128,
    pooled: bool,
}

/// The commit count's verdict from the counters after the run. `counted`: the committed
/// transactions, the setup commits and the connections stampede opened.
fn verdict_of(
    b: Calibrated,
    after: Counters,
    server_sessions: Option<i128>,
    foreign_after: i128,
    counted: (u64, u64, u64),
) -> CommitVerdict {
    let (committed, setup_commits, connections) = counted;
    {
        let pooled = b.pooled;
        let delta = after.commits - b.before.commits;
        let counted = committed as i128 + setup_commits as i128;
        if pooled && delta >= counted {
            let sessions = server_sessions.map_or_else(String::new, |n| {
                format!(", {n} server sessions started for {connections} client connections")
            });
            return CommitVerdict::Inconclusive(format!(
                "inconclusive through a connection pooler{sessions}: the server committed \
                 {delta} = {committed} counted + {setup_commits} setup + {} more, which are the \
                 server sessions' start-ups and the pooler's own statements (pgbouncer sets client \
                 parameters on a server connection with a SET of its own); no count tells them \
                 apart from extra transactions, but none of the counted ones is missing",
                delta - counted
            ));
        }
        if pooled {
            return CommitVerdict::Exact(CommitCheck {
                passed: false,
                detail: format!(
                    "server committed {delta}, fewer than the {committed} transactions counted + \
                     {setup_commits} setup (through a connection pooler); difference {}",
                    delta - counted
                ),
                difference: delta - counted,
            });
        }
        let overhead = setup_commits as i128 + connections as i128 * b.per_connection;
        let expected = committed as i128 + overhead;
        let passed = delta == expected;
        let mut detail = format!(
            "server committed {delta} = {committed} counted + {setup_commits} setup + \
             {connections} connections x {} startup",
            b.per_connection
        );
        if !passed {
            detail = format!(
                "server committed {delta}, expected {expected} ({committed} counted + \
                 {setup_commits} setup + {connections} connections x {} startup); difference {}",
                b.per_connection,
                delta - expected
            );
            if let Some(n) = server_sessions.filter(|n| *n != connections as i128) {
                detail.push_str(&format!(
                    "; {n} server sessions started for {connections} client connections"
                ));
            }
            if b.foreign_before + foreign_after > 0 {
                detail.push_str(
                    "; other sessions were connected to the database during the run, and their \
                     commits count too",
                );
            }
        }
        CommitVerdict::Exact(CommitCheck {
            passed,
            detail,
            difference: delta - expected,
        })
    }
}

/// The four TPC-B sums and the history row count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TpcbSums {
    pub abalance: i128,
    pub tbalance: i128,
    pub bbalance: i128,
    pub delta: i128,
    pub history_rows: i128,
}

pub async fn tpcb_sums(s: &mut Session) -> Result<TpcbSums> {
    let r = workload::tpcb::check_tpcb_invariant(s)
        .await
        .context("reading the TPC-B sums")?;
    Ok(TpcbSums {
        abalance: r.sum_abalance.into(),
        tbalance: r.sum_tbalance.into(),
        bbalance: r.sum_bbalance.into(),
        delta: r.sum_delta.into(),
        history_rows: r.history_rows.into(),
    })
}

/// Which balances a mix of builtins keeps in step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpcbCoverage {
    /// Only tpcb-like writes: all four sums move together.
    Full,
    /// simple-update writes too: only accounts and history stay in step.
    AccountsAndHistory,
    /// Read-only mix: nothing may change.
    ReadOnly,
}

pub fn check_tpcb(
    before: TpcbSums,
    after: TpcbSums,
    coverage: TpcbCoverage,
    expected_history_rows: u64,
) -> (bool, String) {
    let d = |a: i128, b: i128| b - a;
    let (da, dt, db, dd) = (
        d(before.abalance, after.abalance),
        d(before.tbalance, after.tbalance),
        d(before.bbalance, after.bbalance),
        d(before.delta, after.delta),
    );
    let dh = d(before.history_rows, after.history_rows);
    let mut problems = Vec::new();
    match coverage {
        TpcbCoverage::Full => {
            if !(da == dt && dt == db && db == dd) {
                problems.push(format!(
                    "changes differ: accounts {da}, tellers {dt}, branches {db}, history {dd}"
                ));
            }
        }
        TpcbCoverage::AccountsAndHistory => {
            if da != dd {
                problems.push(format!("changes differ: accounts {da}, history {dd}"));
            }
        }
        TpcbCoverage::ReadOnly => {
            if (da, dt, db, dd, dh) != (0, 0, 0, 0, 0) {
                problems.push("a read-only run changed the data".into());
            }
        }
    }
    if dh != expected_history_rows as i128 {
        problems.push(format!(
            "history grew by {dh} rows, but {expected_history_rows} writing transactions committed"
        ));
    }
    let fresh =
        before.abalance == 0 && before.tbalance == 0 && before.bbalance == 0 && before.delta == 0;
    if fresh
        && coverage == TpcbCoverage::Full
        && !(after.abalance == after.tbalance
            && after.tbalance == after.bbalance
            && after.bbalance == after.delta)
    {
        problems.push(format!(
            "sums differ after a run from a fresh state: accounts {}, tellers {}, branches {}, history {}",
            after.abalance, after.tbalance, after.bbalance, after.delta
        ));
    }
    if problems.is_empty() {
        let what = match coverage {
            TpcbCoverage::Full => "accounts, tellers, branches and history each changed by",
            TpcbCoverage::AccountsAndHistory => "accounts and history each changed by",
            TpcbCoverage::ReadOnly => "no balance changed:",
        };
        let abs = if fresh && coverage == TpcbCoverage::Full {
            format!("; from a fresh state all four sums are {}", after.abalance)
        } else {
            String::new()
        };
        (true, format!("{what} {da}; history grew by {dh} rows{abs}"))
    } else {
        (false, problems.join("; "))
    }
}

/// Autovacuum and autoanalyze runs so far on the database's tables (`fleet::maintenance_runs`,
/// 0 on MySQL). Their transactions count in `pg_stat_database.xact_commit` like the clients':
/// sysbench's and TPC-C's writes trigger them within seconds on small tables, and pgbench's on
/// its tellers and branches: every run reads them around its commit count ([`commit_status`]).
pub(crate) async fn maintenance_runs(conn: &sut::Target) -> Result<i64> {
    if conn.dialect() == sut::Dialect::MySql {
        return Ok(0);
    }
    let mut s = Session::connect(conn).await?;
    let r = fleet::maintenance_runs(&mut s).await;
    s.close().await;
    Ok(r?.unwrap_or(0))
}

/// The commit-count check's status: a surplus of server commits while autovacuum or autoanalyze
/// ran (at most a few transactions per run) cannot be told apart from the clients' commits, so the
/// check is inconclusive (skipped, with the numbers), not failed. A deficit always fails.
pub(crate) fn commit_status(c: &CommitCheck, maintenance: i64) -> (CheckStatus, String) {
    if c.passed {
        return (CheckStatus::Passed, c.detail.clone());
    }
    match CheckStatus::of_commit_surplus(c.difference, maintenance) {
        CheckStatus::Skipped => (
            CheckStatus::Skipped,
            format!(
                "inconclusive: {}; {}",
                c.detail,
                CheckStatus::maintenance_words(maintenance)
            ),
        ),
        s => (s, c.detail.clone()),
    }
}

/// Transactions abandoned in flight when the run ended (their
/// client blocked waiting for the server at `-T`'s end or Ctrl-C) may each have committed once
/// on the server, their reply never read. A surplus of at most that many is in doubt, not a
/// miscount; `None` when that does not apply (passed, or a difference it cannot explain).
pub(crate) fn in_doubt(c: &CommitCheck, abandoned: u64) -> Option<(CheckStatus, String)> {
    (!c.passed && c.difference > 0 && c.difference <= i128::from(abandoned)).then(|| {
        (
            CheckStatus::Skipped,
            format!(
                "in doubt: {}; {abandoned} transactions were abandoned in flight when the run \
                 ended (their client was blocked waiting for the server), and the server \
                 committed {} of them",
                c.detail, c.difference
            ),
        )
    })
}

/// A row check once transactions abandoned in flight at the run's end are allowed for (each may
/// have committed on the server, its reply never read): passed when the committed statements
/// account for the rows exactly; in doubt (skipped, with the numbers) when the rows add up only
/// if some of the `abandoned` committed too; failed otherwise. `fits(k)`: do the rows add up
/// when `k` abandoned transactions committed as well?
pub(crate) fn rows_verdict(
    name: &str,
    abandoned: u64,
    fits: impl Fn(u64) -> bool,
    detail: String,
) -> report::Check {
    let (status, detail) = if fits(0) {
        (CheckStatus::Passed, detail)
    } else if (1..=abandoned).any(fits) {
        (
            CheckStatus::Skipped,
            format!(
                "in doubt: {detail}; {abandoned} transactions were abandoned in flight when the \
                 run ended (their client was blocked waiting for the server), and the rows add up \
                 if the server committed some of them"
            ),
        )
    } else {
        (CheckStatus::Failed, detail)
    };
    report::Check {
        name: name.into(),
        status,
        detail,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rows_explained_only_by_abandoned_transactions_are_in_doubt_not_failed() {
        use super::{rows_verdict, CheckStatus};
        // 100 rows expected from the committed inserts, 102 found, 2-row inserts.
        let fits = |rows: u64| move |k: u64| rows == 100 + 2 * k;
        let c = rows_verdict("row count", 3, fits(100), "d".into());
        assert_eq!((c.status, c.detail.as_str()), (CheckStatus::Passed, "d"));
        let c = rows_verdict("row count", 3, fits(102), "d".into());
        assert_eq!(c.status, CheckStatus::Skipped);
        assert_eq!(
            c.detail,
            "in doubt: d; 3 transactions were abandoned in flight when the run ended (their \
             client was blocked waiting for the server), and the rows add up if the server \
             committed some of them"
        );
        // More than the abandoned transactions could have written, too few, or none abandoned.
        assert_eq!(
            rows_verdict("r", 3, fits(108), "d".into()).status,
            CheckStatus::Failed
        );
        assert_eq!(
            rows_verdict("r", 3, fits(99), "d".into()).status,
            CheckStatus::Failed
        );
        assert_eq!(
            rows_verdict("r", 0, fits(102), "d".into()).status,
            CheckStatus::Failed
        );
    }

    #[test]
    fn a_surplus_of_commits_up_to_the_abandoned_transactions_is_in_doubt_not_failed() {
        let c = |passed, difference| CommitCheck {
            passed,
            detail: "numbers".into(),
            difference,
        };
        let (st, d) = in_doubt(&c(false, 2), 3).expect("in doubt");
        assert_eq!(st, CheckStatus::Skipped);
        assert!(
            d.starts_with("in doubt: numbers; 3 transactions were abandoned"),
            "{d}"
        );
        assert!(d.ends_with("committed 2 of them"), "{d}");
        assert!(in_doubt(&c(false, 3), 3).is_some());
        // More than the abandoned ones could commit, fewer than counted, or passed: not in
        // doubt (the ordinary verdict stands).
        assert!(in_doubt(&c(false, 4), 3).is_none());
        assert!(in_doubt(&c(false, -1), 3).is_none());
        assert!(in_doubt(&c(false, 1), 0).is_none());
        assert!(in_doubt(&c(true, 0), 3).is_none());
    }

    #[test]
    fn a_surplus_of_commits_during_autovacuum_is_inconclusive_not_failed() {
        let c = |passed, difference| CommitCheck {
            passed,
            detail: "numbers".into(),
            difference,
        };
        assert_eq!(commit_status(&c(true, 0), 3).0, CheckStatus::Passed);
        let (st, d) = commit_status(&c(false, 14), 8);
        assert_eq!(st, CheckStatus::Skipped);
        assert!(d.starts_with("inconclusive: numbers; autovacuum/autoanalyze ran 8 times"));
        assert_eq!(commit_status(&c(false, 14), 0).0, CheckStatus::Failed);
        assert_eq!(commit_status(&c(false, -1), 8).0, CheckStatus::Failed);
        assert_eq!(commit_status(&c(false, 100), 8).0, CheckStatus::Failed);
    }

    use super::*;

    fn sums(a: i128, t: i128, b: i128, d: i128, h: i128) -> TpcbSums {
        TpcbSums {
            abalance: a,
            tbalance: t,
            bbalance: b,
            delta: d,
            history_rows: h,
        }
    }

    #[test]
    fn tpcb_invariant_passes_when_all_sums_move_together() {
        let (ok, detail) = check_tpcb(
            sums(0, 0, 0, 0, 0),
            sums(7, 7, 7, 7, 3),
            TpcbCoverage::Full,
            3,
        );
        assert!(ok, "{detail}");
        assert!(detail.contains("all four sums are 7"));
    }

    #[test]
    fn tpcb_invariant_fails_on_a_lost_teller_update() {
        let (ok, detail) = check_tpcb(
            sums(0, 0, 0, 0, 0),
            sums(7, 2, 7, 7, 3),
            TpcbCoverage::Full,
            3,
        );
        assert!(!ok);
        assert!(detail.contains("tellers 2"), "{detail}");
    }

    #[test]
    fn tpcb_invariant_fails_when_history_rows_do_not_match_the_count() {
        let (ok, detail) = check_tpcb(
            sums(5, 5, 5, 5, 10),
            sums(9, 9, 9, 9, 12),
            TpcbCoverage::Full,
            3,
        );
        assert!(!ok);
        assert!(detail.contains("grew by 2 rows"), "{detail}");
    }

    #[test]
    fn simple_update_keeps_only_accounts_and_history_in_step() {
        let (ok, _) = check_tpcb(
            sums(0, 0, 0, 0, 0),
            sums(4, 0, 0, 4, 2),
            TpcbCoverage::AccountsAndHistory,
            2,
        );
        assert!(ok);
    }

    #[test]
    fn read_only_mix_must_change_nothing() {
        let (ok, _) = check_tpcb(
            sums(1, 1, 1, 1, 1),
            sums(1, 1, 1, 1, 2),
            TpcbCoverage::ReadOnly,
            0,
        );
        assert!(!ok);
    }
}
