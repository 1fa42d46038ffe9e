//! The commit count on MySQL and MariaDB (issue 15, item 5).
//!
//! The server counts COMMIT statements in the global status variable `Com_commit` (and
//! ROLLBACKs in `Com_rollback`). Unlike PostgreSQL's `xact_commit` it counts neither connection
//! start-ups nor statement preparation (COM_STMT_PREPARE is `Com_stmt_prepare`), and the
//! counters are current when read (no lazy flush). So the identity is plain:
//!
//! ```text
//! Δ Com_commit = COMMITs of the counted transactions (+ of any script's extra COMMITs)
//! ```
//!
//! What it cannot see: an autocommitted statement commits without a COMMIT statement (it is in
//! `Handler_commit`, which also moves for reads and internal transactions), so a workload whose
//! transactions are single autocommitted statements (`oltp_point_select`, `oltp_insert`) gets
//! "inconclusive" with that reason rather than a check that proves nothing. Other sessions on
//! the server (from `information_schema.PROCESSLIST`, leaving out the server's own threads)
//! make a mismatch inconclusive too, since their COMMITs count in the same global counter.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use target::Session;

use super::{CommitCheck, CommitVerdict};

/// Client sessions other than ours: the server's own threads (Galera's `system user`, the
/// event scheduler, replication's dump threads) commit nothing through COMMIT statements.
const OTHERS: &str = "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
     WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Binlog Dump GTID') \
     AND USER NOT IN ('system user', 'event_scheduler')";

async fn scalar(s: &mut Session, sql: &str) -> Result<i128> {
    let rows = s
        .simple_query(sql)
        .await
        .with_context(|| format!("running `{sql}`"))?;
    // SHOW STATUS answers (name, value); a SELECT one column.
    let v = rows
        .first()
        .and_then(|r| r.last().cloned().flatten())
        .unwrap_or_else(|| "0".into());
    v.parse()
        .with_context(|| format!("`{sql}` returned {v:?}, not a number"))
}

async fn com_commit(s: &mut Session) -> Result<i128> {
    scalar(s, "SHOW GLOBAL STATUS LIKE 'Com_commit'").await
}

pub struct MySqlBaseline {
    session: Session,
    before: i128,
    others_before: i128,
}

/// Open the baseline session and read `Com_commit`.
pub async fn commit_baseline(conn: &target::Target) -> Result<MySqlBaseline> {
    let mut session = Session::connect(conn).await?;
    let others_before = scalar(&mut session, OTHERS).await?;
    let before = com_commit(&mut session).await?;
    Ok(MySqlBaseline {
        session,
        before,
        others_before,
    })
}

impl MySqlBaseline {
    /// After the run: `expected` is the COMMIT statements the counted transactions sent, or
    /// `None` when the workload's transactions are autocommitted statements.
    pub async fn verdict(mut self, expected: Option<u64>) -> Result<CommitVerdict> {
        // The clients' sessions are closing: wait (briefly) until they are gone, so that a
        // foreign session means someone else's.
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut others = scalar(&mut self.session, OTHERS).await?;
        while others > self.others_before && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
            others = scalar(&mut self.session, OTHERS).await?;
        }
        let after = com_commit(&mut self.session).await?;
        self.session.close().await;
        let delta = after - self.before;
        let Some(expected) = expected else {
            return Ok(CommitVerdict::Inconclusive(format!(
                "the transactions are autocommitted statements, which MySQL's Com_commit does not \
                 count (it moved by {delta})"
            )));
        };
        let expected = expected as i128;
        if delta == expected {
            return Ok(CommitVerdict::Exact(CommitCheck {
                passed: true,
                detail: format!("server Com_commit moved by {delta} = {expected} counted"),
                difference: 0,
            }));
        }
        if self.others_before + others > 0 {
            return Ok(CommitVerdict::Inconclusive(format!(
                "server Com_commit moved by {delta}, {expected} counted; other sessions were \
                 connected ({} before, {others} after), whose COMMITs count too",
                self.others_before
            )));
        }
        Ok(CommitVerdict::Exact(CommitCheck {
            passed: false,
            detail: format!(
                "server Com_commit moved by {delta}, expected {expected} counted; difference {}",
                delta - expected
            ),
            difference: delta - expected,
        }))
    }
}
