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
use sut::Session;

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
    /// Galera: the node's conflict counters before the run (`wsrep_on` nodes only).
    conflicts_before: Option<Conflicts>,
    /// The statement ledger's counters before the run, and the session's own statements up to
    /// then.
    ledger: Option<(
        Result<super::ledger::Counters, String>,
        measure::ledger::Tally,
    )>,
}

/// A Galera node's conflict counters: transactions that failed certification at COMMIT
/// (`wsrep_local_cert_failures`), local transactions aborted by a replicated one
/// (`wsrep_local_bf_aborts`, of which `wsrep_local_replays` the node replayed itself, unseen by
/// the client), and InnoDB's own deadlocks (`Innodb_deadlocks`). Each other one is an error
/// 1213 some client saw.
#[derive(Clone, Copy, Debug, Default)]
struct Conflicts {
    cert_failures: i128,
    bf_aborts: i128,
    replays: i128,
    deadlocks: i128,
}

async fn conflicts(s: &mut Session) -> Result<Option<Conflicts>> {
    let rows = s
        .simple_query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', \
             'wsrep_local_cert_failures', 'wsrep_local_bf_aborts', 'wsrep_local_replays', \
             'Innodb_deadlocks')",
        )
        .await?;
    let get = |name: &str| -> Option<String> {
        rows.iter()
            .find(|r| r.first().cloned().flatten().as_deref() == Some(name))
            .and_then(|r| r.get(1).cloned().flatten())
    };
    if get("wsrep_ready").as_deref() != Some("ON") {
        return Ok(None);
    }
    let n = |name: &str| get(name).and_then(|v| v.parse().ok()).unwrap_or(0);
    Ok(Some(Conflicts {
        cert_failures: n("wsrep_local_cert_failures"),
        bf_aborts: n("wsrep_local_bf_aborts"),
        replays: n("wsrep_local_replays"),
        deadlocks: n("Innodb_deadlocks"),
    }))
}

/// The Galera nodes' conflicts over the run, for the "Galera conflicts" check.
pub struct GaleraConflicts {
    /// Certification failures over the nodes: each one failed a COMMIT a client sent.
    pub certs: i128,
    /// Everything that can abort a client's transaction: certification failures, brute-force
    /// aborts not replayed, deadlocks.
    pub total: i128,
    pub detail: String,
}

impl GaleraConflicts {
    /// Compare with the conflicts the clients saw (retries and failures of the serialization
    /// and deadlock kinds). Every certification failure is an error some client saw, so fewer
    /// fails (an error went uncounted). A brute-force abort is seen only when it hits a
    /// transaction the client is still in (one aborted while already failing certification,
    /// or an autocommitted statement the node retries, `wsrep_retry_autocommit`, is not), so
    /// up to the total passes, and more is inconclusive (lock wait timeouts, 1205, have no
    /// server counter).
    pub fn status(&self, seen: u64) -> (report::CheckStatus, String) {
        let seen = seen as i128;
        let words = format!(
            "the clients saw and retried {seen} conflicts; the nodes report {} certification \
             failures and {} conflicts in all ({})",
            self.certs, self.total, self.detail
        );
        if seen < self.certs {
            (report::CheckStatus::Failed, words)
        } else if seen <= self.total {
            (report::CheckStatus::Passed, words)
        } else {
            (
                report::CheckStatus::Skipped,
                format!("inconclusive: {words} (lock wait timeouts have no server counter)"),
            )
        }
    }
}

/// Open a session on every endpoint of the target and read each one's `Com_commit`.
pub async fn commit_baseline(conn: &sut::Target, ledger: bool) -> Result<MySqlBaseline> {
    let mut nodes = Vec::new();
    for i in 0..conn.endpoints() {
        let one = conn.starting_at(i);
        let Some(endpoint) = one.mysql() else {
            anyhow::bail!("the MySQL commit count needs a MySQL target");
        };
        let mut session = Session::connect(endpoint).await?;
        // Its statements are counted apart (`LedgerRead::own`).
        session.unrecorded();
        let others_before = scalar(&mut session, OTHERS).await?;
        let conflicts_before = conflicts(&mut session).await?;
        let before = com_commit(&mut session).await?;
        let ledger = match ledger {
            true => {
                let own = *session.tally();
                Some((super::ledger_counters(&mut session, &Ok(None)).await, own))
            }
            false => None,
        };
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
            conflicts_before,
            ledger,
        });
    }
    Ok(MySqlBaseline { nodes })
}

impl MySqlBaseline {
    /// After the run. `expected`: the COMMIT statements of the counted transactions, or `None`
    /// when they are autocommitted statements. Per endpoint, `committed`: the COMMITs that
    /// committed on stampede's sessions there, `failed`: those answered with an error (the
    /// engine's `endpoint_commits` and `endpoint_failed_commits`).
    ///
    /// Each node's `Com_commit` must have moved by the committed ones plus the failed ones
    /// the server ran. On a Galera node that is at least the certification failures
    /// (`wsrep_local_cert_failures`: the COMMIT ran and failed) and at most every failed
    /// COMMIT: a transaction aborted by a replicated one (a brute-force abort) fails its
    /// COMMIT before the statement runs, or while it runs, and only the client's error says
    /// which it was not. Without failures the bounds meet: the count is exact.
    pub async fn verdict(
        self,
        expected: Option<u64>,
        committed: &[u64],
        failed: &[u64],
    ) -> Result<(
        CommitVerdict,
        Option<GaleraConflicts>,
        Option<super::LedgerRead>,
    )> {
        // (name, Com_commit delta, certification failures) per node.
        let mut nodes = Vec::new();
        let mut reads: Vec<super::LedgerRead> = Vec::new();
        let mut others_seen = 0;
        let mut galera: Option<GaleraConflicts> = None;
        for mut n in self.nodes {
            // The clients' sessions are closing: wait (briefly) until they are gone, so that a
            // session left over is someone else's.
            let deadline = Instant::now() + Duration::from_secs(3);
            let mut others = scalar(&mut n.session, OTHERS).await?;
            while others > n.others_before && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
                others = scalar(&mut n.session, OTHERS).await?;
            }
            if let Some((before, own)) = n.ledger.take() {
                let own = n.session.tally().since(&own);
                let closed = measure::ledger::closed();
                let after = super::ledger_counters(&mut n.session, &Ok(None)).await;
                reads.push(super::LedgerRead {
                    delta: match (before, after) {
                        (Ok(b), Ok(a)) => Ok(b.delta(&a)),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    },
                    own,
                    others: n.others_before + others > 0,
                    closed,
                });
            }
            let after = com_commit(&mut n.session).await?;
            let mut certs = 0;
            if let (Some(b), Some(a)) = (n.conflicts_before, conflicts(&mut n.session).await?) {
                let (c, f, r, d) = (
                    a.cert_failures - b.cert_failures,
                    a.bf_aborts - b.bf_aborts,
                    a.replays - b.replays,
                    a.deadlocks - b.deadlocks,
                );
                certs = c;
                let g = galera.get_or_insert(GaleraConflicts {
                    certs: 0,
                    total: 0,
                    detail: String::new(),
                });
                g.certs += c;
                // A replayed transaction was aborted and then committed by the node itself:
                // its client saw no error.
                g.total += c + f - r + d;
                if !g.detail.is_empty() {
                    g.detail.push_str("; ");
                }
                g.detail.push_str(&format!(
                    "{}: {c} certification failures, {f} brute-force aborts ({r} replayed), \
                     {d} deadlocks",
                    n.name
                ));
            }
            n.session.close().await;
            others_seen += n.others_before + others;
            nodes.push((n.name, after - n.before, certs));
        }
        let ledger = super::LedgerRead::sum(reads, None);
        let delta: i128 = nodes.iter().map(|n| n.1).sum();
        let Some(expected) = expected else {
            return Ok((
                CommitVerdict::Inconclusive(format!(
                    "the transactions are autocommitted statements, which MySQL's Com_commit \
                     does not count (it moved by {delta})"
                )),
                galera,
                ledger,
            ));
        };
        let expected = expected as i128;
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0) as i128;
        let ok_total: i128 = (0..nodes.len()).map(|i| at(committed, i)).sum();
        let failed_total: i128 = (0..nodes.len()).map(|i| at(failed, i)).sum();
        let certs: i128 = nodes.iter().map(|n| n.2).sum();
        // Per node: the committed COMMITs plus [certification failures, failed COMMITs].
        let bounds = |i: usize, c: i128| {
            let ok = at(committed, i);
            (ok + c, ok + at(failed, i).max(c))
        };
        let per_node = || -> String {
            if nodes.len() < 2 {
                return String::new();
            }
            let parts: Vec<String> = (nodes.iter().enumerate())
                .map(|(i, (name, d, c))| match bounds(i, *c) {
                    (lo, hi) if lo == hi => format!("{name} {d} = {lo}"),
                    (lo, hi) => format!("{name} {d} in [{lo}, {hi}]"),
                })
                .collect();
            format!("; per node: {}", parts.join(", "))
        };
        let failed_words = match (certs, failed_total) {
            (0, 0) => String::new(),
            (c, f) if c == f => format!(" + {c} COMMITs that failed certification (retried)"),
            (c, f) => format!(
                " + between {c} (certification failures) and {f} (failed COMMITs seen) that \
                 failed and were retried"
            ),
        };
        let exact = ok_total == expected
            && (nodes.iter().enumerate()).all(|(i, (_, d, c))| {
                let (lo, hi) = bounds(i, *c);
                (lo..=hi).contains(d)
            });
        if exact {
            return Ok((
                CommitVerdict::Exact(CommitCheck {
                    passed: true,
                    detail: format!(
                        "server Com_commit moved by {delta} = {expected} counted{failed_words}{}",
                        per_node()
                    ),
                    difference: 0,
                }),
                galera,
                ledger,
            ));
        }
        let lo: i128 = (0..nodes.len()).map(|i| bounds(i, nodes[i].2).0).sum();
        let detail = format!(
            "server Com_commit moved by {delta}, expected {expected} counted{failed_words} \
             ({ok_total} COMMITs committed on the wire); difference {}{}",
            delta - lo,
            per_node()
        );
        if others_seen > 0 {
            return Ok((
                CommitVerdict::Inconclusive(format!(
                    "{detail}; other sessions were connected, whose COMMITs count too"
                )),
                galera,
                ledger,
            ));
        }
        Ok((
            CommitVerdict::Exact(CommitCheck {
                passed: false,
                detail,
                difference: delta - lo,
            }),
            galera,
            ledger,
        ))
    }
}
