//! The commit count on a PostgreSQL target with several hosts (issue 16): each server's
//! `pg_stat_database.xact_commit` counts only the transactions committed on it, so the
//! identity of the module above is checked host by host, as `mysql.rs` does for a Galera
//! cluster's nodes:
//!
//! ```text
//! host h's xact_commit delta = transactions committed by stampede's sessions on h
//!                            + setup commits on h's sessions (prepare, ROLLBACK-free setup)
//!                            + connections opened on h x commits per start-up on h (calibrated)
//! ```
//!
//! Each host gets its own [`CommitBaseline`] (one read-only transaction, its own calibration
//! probe), through a target naming that host alone with `target_session_attrs=any`: a baseline
//! for a standby must land on the standby even when the run's target asks for `read-write`
//! (which would fail over to the primary). Standbys count the read-only transactions their
//! backends commit like any server, and nothing replayed from the primary.
//!
//! The per-host numbers come from the engine's per-endpoint tally (`engine::EndpointStats`:
//! every session is counted once on the host it is on). The transactions committed on a host
//! are its sessions' wire commits less their setup commits; their sum over the hosts must be
//! the run's counted transactions, which the check also asserts, so a transaction the engine
//! counted but no session committed (or the reverse) fails too.
//!
//! Work outside the engine is put on the host it ran on: the observer's sessions (one per
//! observed endpoint; an observer of one server connects to the first host) and a family's
//! finishing session (`Finish`: it connects through the target, to its first host).

use anyhow::{Context, Result};

use super::{
    commit_baseline as host_baseline, CommitBaseline, CommitCheck, CommitVerdict, LedgerRead,
};

/// What stampede committed and opened on one host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostCommits {
    /// Transactions committed on the host's sessions (not counting setup).
    pub committed: u64,
    /// Commits made outside measured transactions.
    pub setup: u64,
    /// Sessions opened there (engine, observer, finishing session).
    pub connections: u64,
}

pub struct HostsBaseline {
    /// Per host: its baseline, or why it could not be read (a host that is down: the run can
    /// still go on the others, as libpq's host list allows).
    hosts: Vec<(String, Result<CommitBaseline, String>)>,
}

/// The target naming only host `i`, with any session accepted (see the module header).
pub fn only_host(conn: &sut::Target, i: usize) -> Result<sut::Target> {
    let Some(c) = conn.pg() else {
        anyhow::bail!("the per-host commit count needs a PostgreSQL target");
    };
    let mut c = c.clone();
    let host = c
        .hosts
        .get(i)
        .cloned()
        .with_context(|| format!("the target has no host number {}", i + 1))?;
    c.hosts = vec![host];
    c.target_session_attrs = sut::conninfo::SessionAttrs::Any;
    c.load_balance_hosts = sut::conninfo::LoadBalance::Disable;
    Ok(sut::Target::Pg(c))
}

/// How a host is named in the check's words: `host:port`, or the socket directory and port.
fn name(conn: &sut::Target, i: usize) -> String {
    let (host, port) = conn.endpoint_name(i).unwrap_or_default();
    format!("{host}:{port}")
}

/// A baseline on every host of the target.
pub async fn commit_baseline(conn: &sut::Target, ledger: bool) -> Result<HostsBaseline> {
    let mut hosts = Vec::with_capacity(conn.endpoints());
    for i in 0..conn.endpoints() {
        let one = only_host(conn, i)?;
        let b = host_baseline(&one, ledger)
            .await
            .map_err(|e| sut::conninfo::redact(&format!("{e:#}")));
        hosts.push((name(conn, i), b));
    }
    if hosts.iter().all(|(_, b)| b.is_err()) {
        let why = hosts.first().and_then(|(_, b)| b.as_ref().err()).cloned();
        anyhow::bail!(
            "reading the commit count's baseline: no host could be reached ({})",
            why.unwrap_or_default()
        );
    }
    Ok(HostsBaseline { hosts })
}

impl HostsBaseline {
    /// After the run. `per_host[i]`: what stampede did on host `i`; `counted`: the run's
    /// counted transactions (the family's count), which the hosts' committed ones must sum to.
    /// With the ledger's reading summed over the hosts (`None` without a ledger).
    pub async fn verdict(
        self,
        per_host: &[HostCommits],
        counted: u64,
    ) -> Result<(CommitVerdict, Option<LedgerRead>)> {
        let mut reads: Vec<LedgerRead> = Vec::new();
        let mut unread: Option<String> = None;
        let mut passed = Vec::new();
        let mut failed = Vec::new();
        let mut inconclusive = Vec::new();
        let mut difference = 0;
        for (i, (name, b)) in self.hosts.into_iter().enumerate() {
            let h = per_host.get(i).copied().unwrap_or_default();
            let b = match b {
                Ok(b) => b,
                // Nothing of the run's was there: the other hosts' counts are the whole run.
                Err(why) if h.connections == 0 => {
                    passed.push(format!(
                        "{name}: not reachable for the check ({why}), and no session of the run \
                         was on it"
                    ));
                    continue;
                }
                Err(why) => {
                    inconclusive.push(format!(
                        "{name}: {} sessions were on it, but its counter could not be read \
                         before the run ({why})",
                        h.connections
                    ));
                    unread.get_or_insert(format!("{name}'s counters could not be read ({why})"));
                    continue;
                }
            };
            let (v, read) = b.verdict(h.committed, h.setup, h.connections).await?;
            reads.extend(read);
            match v {
                CommitVerdict::Exact(c) if c.passed => passed.push(format!("{name}: {}", c.detail)),
                CommitVerdict::Exact(c) => {
                    difference += c.difference;
                    failed.push(format!("{name}: {}", c.detail));
                }
                CommitVerdict::Inconclusive(d) => inconclusive.push(format!("{name}: {d}")),
            }
        }
        let on_hosts: u64 = per_host.iter().map(|h| h.committed).sum();
        if on_hosts != counted {
            // The servers may agree with the sessions, but not with the result's count.
            failed.insert(
                0,
                format!(
                    "stampede counted {counted} transactions, but its sessions committed \
                     {on_hosts} over the hosts"
                ),
            );
            if difference == 0 {
                difference = on_hosts as i128 - counted as i128;
            }
        }
        let ledger = LedgerRead::sum(reads, unread);
        Ok((combine(passed, failed, inconclusive, difference), ledger))
    }
}

/// What stampede did on each host: the engine's per-endpoint tally, plus the family's
/// finishing session (`fin`: commits, connections; on the first host) and the observer's
/// connections per host.
pub fn per_host(
    endpoints: &[engine::EndpointStats],
    fin: (u64, u64),
    observer: &[u64],
) -> Vec<HostCommits> {
    let n = endpoints.len().max(observer.len()).max(1);
    (0..n)
        .map(|i| {
            let e = endpoints.get(i).cloned().unwrap_or_default();
            let (fin_commits, fin_connections) = if i == 0 { fin } else { (0, 0) };
            HostCommits {
                committed: e.server_commits - e.setup_commits + fin_commits,
                setup: e.setup_commits,
                connections: e.connections
                    + fin_connections
                    + observer.get(i).copied().unwrap_or(0),
            }
        })
        .collect()
}

/// The observer's connections on each host of the target.
pub fn observer_per_host(
    conn: &sut::Target,
    metrics: Option<&measure::server::ServerMetrics>,
) -> Vec<u64> {
    let mut v = vec![0; conn.endpoints()];
    let Some(m) = metrics else {
        return v;
    };
    if m.endpoints.is_empty() {
        // One server observed, through the target: its first host.
        if let Some(first) = v.first_mut() {
            *first = u64::from(m.cost.connections);
        }
        return v;
    }
    // One observer per host, named as `name` names them.
    for (i, n) in v.iter_mut().enumerate() {
        let me = name(conn, i);
        *n = (m.endpoints.iter())
            .filter(|e| e.endpoint == me)
            .map(|e| u64::from(e.cost.connections))
            .sum();
    }
    v
}

/// One verdict of the hosts': failed when any host failed (those named first), inconclusive
/// when none failed but one could not be decided, else passed; the detail lists every host.
fn combine(
    passed: Vec<String>,
    failed: Vec<String>,
    inconclusive: Vec<String>,
    difference: i128,
) -> CommitVerdict {
    let all = |first: &[String], rest: &[&[String]]| {
        let mut v: Vec<&str> = first.iter().map(String::as_str).collect();
        for r in rest {
            v.extend(r.iter().map(String::as_str));
        }
        v.join("; ")
    };
    if !failed.is_empty() {
        return CommitVerdict::Exact(CommitCheck {
            passed: false,
            detail: format!(
                "per host, failed on {}: {}",
                failed.len(),
                all(&failed, &[&inconclusive, &passed])
            ),
            difference,
        });
    }
    if !inconclusive.is_empty() {
        return CommitVerdict::Inconclusive(format!(
            "per host: {}",
            all(&inconclusive, &[&passed])
        ));
    }
    CommitVerdict::Exact(CommitCheck {
        passed: true,
        detail: format!("per host: {}", all(&passed, &[])),
        difference: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_host_is_named_first_and_fails_the_check() {
        let v = combine(
            vec!["a:1: server committed 5 = ...".into()],
            vec!["b:2: server committed 9, expected 7".into()],
            vec![],
            2,
        );
        let CommitVerdict::Exact(c) = v else {
            panic!("a failed host is an exact verdict")
        };
        assert!(!c.passed);
        assert_eq!(c.difference, 2);
        assert!(
            c.detail
                .starts_with("per host, failed on 1: b:2: server committed 9, expected 7; a:1"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn every_host_passing_passes_and_an_undecided_one_is_inconclusive() {
        let ok = || vec!["a:1: x".to_string(), "b:2: y".to_string()];
        let CommitVerdict::Exact(c) = combine(ok(), vec![], vec![], 0) else {
            panic!("all passed is exact")
        };
        assert!(c.passed);
        assert_eq!(c.detail, "per host: a:1: x; b:2: y");
        let CommitVerdict::Inconclusive(d) = combine(ok(), vec![], vec!["c:3: pooler".into()], 0)
        else {
            panic!("an undecided host makes the check inconclusive")
        };
        assert!(d.starts_with("per host: c:3: pooler; a:1"), "{d}");
    }

    #[test]
    fn a_host_alone_accepts_any_session() {
        let flags = sut::ConnFlags {
            dbname: Some(
                "host=a,b,c port=1,2,3 target_session_attrs=read-write load_balance_hosts=random"
                    .into(),
            ),
            ..Default::default()
        };
        let conn = sut::Target::Pg(sut::ConnConfig::resolve(&flags, &|_| None).unwrap());
        let one = only_host(&conn, 1).unwrap();
        let c = one.pg().unwrap();
        assert_eq!(c.hosts.len(), 1);
        assert_eq!((c.hosts[0].host.as_str(), c.hosts[0].port), ("b", 2));
        assert_eq!(c.target_session_attrs, sut::conninfo::SessionAttrs::Any);
        assert!(only_host(&conn, 3).is_err());
    }
}
