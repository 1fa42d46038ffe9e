//! Observing a PostgreSQL target of several hosts (issue 16, item 6): one observer per host,
//! each the single-server sampler of `sampler` on a session of its own (a target naming that
//! host alone, `target_session_attrs=any`, so a standby is watched on the standby), and their
//! results folded into one [`ServerMetrics`].
//!
//! Why one sampler per host rather than one session hopping between them: each host's views
//! (`pg_stat_activity`, `pg_stat_statements`, the counters) are its own, the window's start and
//! end snapshots must be taken on every host at the same moments, and a slow host must not
//! delay the others' samples. A thread each costs what one costs (`ObserverCost`, summed).
//!
//! What is summed and what is not: wait events (session-samples and average active sessions
//! add up over hosts: the cluster's load), the background sessions by kind likewise, the waits joined to statements, and the statements
//! by `queryid` (a physical standby has the primary's catalog, so a statement has one queryid
//! on every host) are summed; the time series and counters (`activity`, `counters`, `deltas`,
//! `io`, `os`) are the first host's, kept as a single server's are, since adding one server's
//! checkpoints to another's means nothing. Each host's own waits and top SQL are in
//! [`ServerMetrics::endpoints`]. Notes say which host they are about.

use std::collections::BTreeMap;

use measure::server::{EndpointMetrics, Note, QueryWait, StatementDelta, WaitTotal};
use sut::{ConnConfig, Target};

use crate::{Error, Options, Part, Sampler, SamplerHandle, ServerMetrics};

/// `host:port` as the target lists the host.
fn name(h: &sut::conninfo::HostSpec) -> String {
    format!("{}:{}", h.host, h.port)
}

/// Start an observer on every host; a host that cannot be observed is a note, unless none
/// can (then the first host's error).
pub(crate) fn start_each(conn: &ConnConfig, opts: &Options) -> Result<SamplerHandle, Error> {
    let mut parts: Vec<Part> = Vec::new();
    let mut unobserved = Vec::new();
    let mut first_err = None;
    for h in &conn.hosts {
        let mut one = conn.clone();
        one.hosts = vec![h.clone()];
        one.target_session_attrs = sut::conninfo::SessionAttrs::Any;
        one.load_balance_hosts = sut::conninfo::LoadBalance::Disable;
        match Sampler::start_one(&Target::Pg(one), opts, name(h)) {
            Ok(p) => parts.push(p),
            Err(e) => {
                unobserved.push(Note {
                    topic: "sampling".into(),
                    message: format!("{} was not observed: {e}", name(h)),
                });
                first_err.get_or_insert(e);
            }
        }
    }
    match (parts.is_empty(), first_err) {
        (true, Some(e)) => Err(e),
        _ => Ok(SamplerHandle {
            parts,
            unobserved,
            top_statements: opts.top_statements,
        }),
    }
}

/// Each host's [`EndpointMetrics`] from what its observer saw.
fn endpoint_of(endpoint: &str, m: &ServerMetrics, top: usize) -> EndpointMetrics {
    let mut statements = m.statements.clone();
    statements.truncate(top);
    EndpointMetrics {
        endpoint: endpoint.to_string(),
        average_active: m.average_active(),
        waits: m.waits.clone(),
        statements,
        statements_total: m.statements_total.clone(),
        cost: m.cost.clone(),
    }
}

fn add_statement(to: &mut StatementDelta, s: &StatementDelta) {
    to.calls += s.calls;
    to.total_exec_time_ms += s.total_exec_time_ms;
    to.rows += s.rows;
    to.shared_blks_hit += s.shared_blks_hit;
    to.shared_blks_read += s.shared_blks_read;
    to.wal_bytes = match (to.wal_bytes, s.wal_bytes) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    to.mean_exec_time_ms = if to.calls == 0 {
        0.0
    } else {
        to.total_exec_time_ms / to.calls as f64
    };
}

/// Fold the hosts' results (in the target's order) into one: summed waits, statements and
/// cost, the first host's series, every host's own in `endpoints` (module header).
pub(crate) fn combine(
    seen: Vec<(String, ServerMetrics)>,
    unobserved: Vec<Note>,
    top: usize,
) -> ServerMetrics {
    let mut out = seen.first().map(|(_, m)| m.clone()).unwrap_or_default();
    out.endpoints = seen.iter().map(|(e, m)| endpoint_of(e, m, top)).collect();

    let mut waits: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
    let mut query_waits: BTreeMap<(i64, &str), u64> = BTreeMap::new();
    let mut statements: Vec<StatementDelta> = Vec::new();
    let mut by_id: BTreeMap<Option<i64>, usize> = BTreeMap::new();
    let mut total: Option<StatementDelta> = None;
    // The same note from several hosts once, naming them (or "every host").
    let mut by_note: Vec<(&Note, Vec<&str>)> = Vec::new();
    let mut background = Vec::new();
    for (i, (e, m)) in seen.iter().enumerate() {
        measure::server::add_background(&mut background, &m.background);
        for w in &m.waits {
            let t = waits.entry(w.event.as_str()).or_default();
            t.0 += w.samples;
            t.1 += w.aas;
        }
        for q in &m.query_waits {
            *query_waits
                .entry((q.query_id, q.event.as_str()))
                .or_default() += q.samples;
        }
        for s in &m.statements {
            match by_id.get(&s.query_id) {
                Some(&k) => add_statement(&mut statements[k], s),
                None => {
                    by_id.insert(s.query_id, statements.len());
                    statements.push(s.clone());
                }
            }
        }
        if let Some(t) = &m.statements_total {
            match &mut total {
                Some(to) => add_statement(to, t),
                None => total = Some(t.clone()),
            }
        }
        if i > 0 {
            let c = &m.cost;
            out.cost.samples += c.samples;
            out.cost.queries += c.queries;
            out.cost.busy_ms += c.busy_ms;
            out.cost.max_sample_ms = out.cost.max_sample_ms.max(c.max_sample_ms);
            out.cost.cpu_ms += c.cpu_ms;
            out.cost.connections += c.connections;
            out.cost.errors += c.errors;
        }
        for n in &m.notes {
            match by_note.iter_mut().find(|(k, _)| *k == n) {
                Some((_, hosts)) => hosts.push(e),
                None => by_note.push((n, vec![e])),
            }
        }
    }
    let mut notes = unobserved;
    notes.extend(by_note.into_iter().map(|(n, hosts)| Note {
        topic: n.topic.clone(),
        message: if hosts.len() == seen.len() && seen.len() > 1 {
            format!("every host: {}", n.message)
        } else {
            format!("{}: {}", hosts.join(", "), n.message)
        },
    }));
    out.waits = waits
        .into_iter()
        .map(|(event, (samples, aas))| WaitTotal {
            event: event.to_string(),
            samples,
            aas,
        })
        .collect();
    out.waits
        .sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
    out.background = background;
    out.query_waits = query_waits
        .into_iter()
        .map(|((query_id, event), samples)| QueryWait {
            query_id,
            event: event.to_string(),
            samples,
        })
        .collect();
    out.query_waits
        .sort_by(|a, b| b.samples.cmp(&a.samples).then(a.query_id.cmp(&b.query_id)));
    statements.sort_by(|a, b| b.total_exec_time_ms.total_cmp(&a.total_exec_time_ms));
    statements.truncate(top);
    out.statements = statements;
    out.statements_total = total;
    out.notes = notes;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmt(id: i64, calls: u64, ms: f64) -> StatementDelta {
        StatementDelta {
            query_id: Some(id),
            query: format!("q{id}"),
            calls,
            total_exec_time_ms: ms,
            mean_exec_time_ms: ms / calls as f64,
            ..Default::default()
        }
    }

    fn host(waits: &[(&str, u64, f64)], statements: Vec<StatementDelta>) -> ServerMetrics {
        ServerMetrics {
            waits: (waits.iter())
                .map(|(e, s, a)| WaitTotal {
                    event: e.to_string(),
                    samples: *s,
                    aas: *a,
                })
                .collect(),
            statements,
            cost: measure::server::ObserverCost {
                connections: 1,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn hosts_waits_and_statements_are_summed_and_kept_per_host() {
        let a = host(
            &[("CPU", 10, 0.5), ("IO:WALSync", 4, 0.2)],
            vec![stmt(1, 10, 20.0), stmt(2, 5, 5.0)],
        );
        let b = host(&[("CPU", 6, 0.3)], vec![stmt(1, 30, 30.0), stmt(3, 1, 1.0)]);
        let m = combine(vec![("a:1".into(), a), ("b:2".into(), b)], Vec::new(), 2);
        assert_eq!(m.waits[0].event, "CPU");
        assert_eq!(m.waits[0].samples, 16);
        assert!((m.waits[0].aas - 0.8).abs() < 1e-9);
        assert_eq!(m.waits[1].event, "IO:WALSync");
        // Statement 1 on both hosts: calls and time add, mean follows; top 2 kept.
        assert_eq!(m.statements.len(), 2);
        assert_eq!(
            (m.statements[0].query_id, m.statements[0].calls),
            (Some(1), 40)
        );
        assert!((m.statements[0].mean_exec_time_ms - 50.0 / 40.0).abs() < 1e-9);
        assert_eq!(m.statements[1].query_id, Some(2));
        assert_eq!(m.cost.connections, 2, "every host's observer session");
        assert_eq!(m.endpoints.len(), 2);
        assert_eq!(m.endpoints[1].endpoint, "b:2");
        assert_eq!(m.endpoints[1].waits[0].samples, 6);
        assert_eq!(m.endpoints[1].statements[0].calls, 30);
    }

    #[test]
    fn a_host_that_could_not_be_observed_is_a_note() {
        let m = combine(
            vec![("a:1".into(), host(&[], vec![]))],
            vec![Note {
                topic: "sampling".into(),
                message: "b:2 was not observed: refused".into(),
            }],
            20,
        );
        assert_eq!(m.notes[0].message, "b:2 was not observed: refused");
    }

    #[test]
    fn a_note_from_several_hosts_is_given_once() {
        let note = |msg: &str| Note {
            topic: "pg_stat_io".into(),
            message: msg.into(),
        };
        let mut a = host(&[], vec![]);
        a.notes = vec![note("needs 16"), note("only here")];
        let mut b = host(&[], vec![]);
        b.notes = vec![note("needs 16")];
        let m = combine(vec![("a:1".into(), a), ("b:2".into(), b)], Vec::new(), 20);
        let msgs: Vec<&str> = m.notes.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(msgs, ["every host: needs 16", "a:1: only here"]);
    }
}
