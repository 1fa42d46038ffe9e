//! The commit count on MySQL and MariaDB (issue 15, item 5).
//!
//! The server counts COMMIT statements in the global status variable `Com_commit` (and
//! ROLLBACKs in `Com_rollback`). Unlike PostgreSQL's `xact_commit` it counts neither connection
//! start-ups nor statement preparation (COM_STMT_PREPARE is `Com_stmt_prepare`), and the
//! counters are current when read (no lazy flush). So the identity is plain:
//!
//! ```text
//! Δ Com_commit = COMMITs of the counted transactions + COMMITs that failed
//! ```
//!
//! A COMMIT that fails is counted too (the counter moves when the statement runs): on a Galera
//! cluster a certification failure fails the COMMIT itself (error 1213), and the engine retries
//! the transaction. So the check compares, per node, the counter with the COMMIT statements
//! stampede's sessions saw the server execute there (committed or failed), and the counted
//! transactions with those that committed. With several endpoints (a Galera cluster's nodes)
//! each node counts its own clients' COMMITs, so the identity holds node by node.
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
    /// One session per endpoint (a Galera cluster's nodes each count their own COMMITs).
    nodes: Vec<Node>,
}

struct Node {
    name: String,
    session: Session,
    before: i128,
    others_before: i128,
}

/// Open a session on every endpoint of the target and read each one's `Com_commit`.
pub async fn commit_baseline(conn: &target::Target) -> Result<MySqlBaseline> {
    let mut nodes = Vec::new();
    for i in 0..conn.endpoints() {
        let one = conn.starting_at(i);
        let Some(endpoint) = one.mysql() else {
            anyhow::bail!("the MySQL commit count needs a MySQL target");
        };
        let mut session = Session::connect(endpoint).await?;
        let others_before = scalar(&mut session, OTHERS).await?;
        let before = com_commit(&mut session).await?;
        let (host, port) = conn.endpoint_name(i).unwrap_or_default();
        let name = if host.starts_with('/') {
            host
        } else {
            format!("{host}:{port}")
        };
        nodes.push(Node {
            name,
            session,
            before,
            others_before,
        });
    }
    Ok(MySqlBaseline { nodes })
}

impl MySqlBaseline {
    /// After the run. `expected`: the COMMIT statements of the counted transactions, or `None`
    /// when they are autocommitted statements. `sent`: per endpoint, the COMMIT statements the
    /// server executed on stampede's sessions, committed or failed (the engine's
    /// `endpoint_commits`): each node's `Com_commit` must have moved by exactly that.
    pub async fn verdict(self, expected: Option<u64>, sent: &[u64]) -> Result<CommitVerdict> {
        let mut deltas = Vec::new();
        let mut others_seen = 0;
        for mut n in self.nodes {
            // The clients' sessions are closing: wait (briefly) until they are gone, so that a
            // session left over is someone else's.
            let deadline = Instant::now() + Duration::from_secs(3);
            let mut others = scalar(&mut n.session, OTHERS).await?;
            while others > n.others_before && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
                others = scalar(&mut n.session, OTHERS).await?;
            }
            let after = com_commit(&mut n.session).await?;
            n.session.close().await;
            others_seen += n.others_before + others;
            deltas.push((n.name, after - n.before));
        }
        let delta: i128 = deltas.iter().map(|(_, d)| d).sum();
        let Some(expected) = expected else {
            return Ok(CommitVerdict::Inconclusive(format!(
                "the transactions are autocommitted statements, which MySQL's Com_commit does not \
                 count (it moved by {delta})"
            )));
        };
        let expected = expected as i128;
        let sent_at = |i: usize| sent.get(i).copied().unwrap_or(0) as i128;
        let sent_total: i128 = (0..deltas.len()).map(sent_at).sum();
        let failed = sent_total - expected;
        let per_node = || -> String {
            if deltas.len() < 2 {
                return String::new();
            }
            let parts: Vec<String> = (deltas.iter().enumerate())
                .map(|(i, (name, d))| format!("{name} {d} (sent {})", sent_at(i)))
                .collect();
            format!("; per node: {}", parts.join(", "))
        };
        let failed_words = match failed {
            0 => String::new(),
            f => format!(" + {f} COMMITs that failed (certification failures, retried)"),
        };
        let exact = failed >= 0 && (deltas.iter().enumerate()).all(|(i, (_, d))| *d == sent_at(i));
        if exact {
            return Ok(CommitVerdict::Exact(CommitCheck {
                passed: true,
                detail: format!(
                    "server Com_commit moved by {delta} = {expected} counted{failed_words}{}",
                    per_node()
                ),
                difference: 0,
            }));
        }
        let detail = format!(
            "server Com_commit moved by {delta}, expected {sent_total} ({expected} counted\
             {failed_words}); difference {}{}",
            delta - sent_total,
            per_node()
        );
        if others_seen > 0 {
            return Ok(CommitVerdict::Inconclusive(format!(
                "{detail}; other sessions were connected, whose COMMITs count too"
            )));
        }
        Ok(CommitVerdict::Exact(CommitCheck {
            passed: false,
            detail,
            difference: delta - sent_total,
        }))
    }
}
