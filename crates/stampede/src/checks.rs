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
//! **TPC-B invariant.** `tpcb-like` adds the same delta to one account, one teller, one branch and
//! one history row, so over any run Δsum(abalance) = Δsum(tbalance) = Δsum(bbalance) =
//! Δsum(history.delta), and history grows by one row per committed tpcb-like or simple-update
//! transaction. `simple-update` keeps only Δsum(abalance) = Δsum(delta). On a freshly loaded or
//! reset database (all sums zero before), the absolute sums are equal too (pgbench's TPC-B
//! "consistency" condition).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use target::{ConnConfig, Session};

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

const XACT_COMMIT: &str =
    "SELECT pg_stat_clear_snapshot(), xact_commit FROM pg_stat_database WHERE datname = current_database()";

async fn read_commits(s: &mut Session) -> Result<i128> {
    let rows = s.simple_query(XACT_COMMIT).await?;
    let v = rows
        .first()
        .and_then(|r| r.get(1).cloned().flatten())
        .unwrap_or_default();
    v.parse::<i128>()
        .with_context(|| format!("pg_stat_database.xact_commit is {v:?}"))
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

/// Read the counter until it stops moving (stats flush lazily), at most `limit`.
async fn settle(s: &mut Session, limit: Duration) -> Result<i128> {
    let deadline = Instant::now() + limit;
    let mut last = read_commits(s).await?;
    let mut stable = 0;
    while Instant::now() < deadline && stable < 3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = read_commits(s).await?;
        if now == last && foreign_sessions(s).await? == 0 {
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
    before: i128,
    pub per_connection: i128,
    /// Client sessions other than ours when the baseline was taken.
    pub foreign_before: i128,
}

/// Open the baseline session, calibrate the commits one connection startup costs on this server,
/// and read the baseline.
pub async fn commit_baseline(conn: &ConnConfig) -> Result<CommitBaseline> {
    let mut session = Session::connect(conn).await?;
    session
        .simple_query("BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY")
        .await?;
    let foreign_before = foreign_sessions(&mut session).await?;
    let before_probe = settle(&mut session, Duration::from_secs(3)).await?;
    // Calibration: one connection that does nothing but connect and leave.
    let probe = Session::connect(conn).await?;
    probe.close().await;
    let before = settle(&mut session, Duration::from_secs(3)).await?;
    Ok(CommitBaseline {
        session,
        before,
        per_connection: (before - before_probe).max(0),
        foreign_before,
    })
}

pub struct CommitCheck {
    pub passed: bool,
    pub detail: String,
    /// Server commits minus the expected ones (0 when passed).
    pub difference: i128,
}

impl CommitBaseline {
    /// Finish the check after the engine closed every session.
    pub async fn finish(
        mut self,
        committed: u64,
        setup_commits: u64,
        connections: u64,
    ) -> Result<CommitCheck> {
        let after = settle(&mut self.session, Duration::from_secs(10)).await?;
        let foreign_after = foreign_sessions(&mut self.session).await?;
        let _ = self.session.simple_query("ROLLBACK").await;
        self.session.close().await;
        let delta = after - self.before;
        let overhead = setup_commits as i128 + connections as i128 * self.per_connection;
        let expected = committed as i128 + overhead;
        let passed = delta == expected;
        let mut detail = format!(
            "server committed {delta} = {committed} counted + {setup_commits} setup + \
             {connections} connections x {} startup",
            self.per_connection
        );
        if !passed {
            detail = format!(
                "server committed {delta}, expected {expected} ({committed} counted + \
                 {setup_commits} setup + {connections} connections x {} startup); difference {}",
                self.per_connection,
                delta - expected
            );
            if self.foreign_before + foreign_after > 0 {
                detail.push_str(
                    "; other sessions were connected to the database during the run, and their \
                     commits count too",
                );
            }
        }
        Ok(CommitCheck {
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

#[cfg(test)]
mod tests {
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
