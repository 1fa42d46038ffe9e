//! What the runs are: whether they can be compared at all ([`check_comparable`]: same workload,
//! same transaction types and statements), a one-line summary of each, and the parameters and
//! settings that differ between them (listed beside the verdicts, since a difference in
//! settings is often the explanation of a difference in numbers).

use std::collections::{BTreeMap, BTreeSet};

use super::{label, Difference, Input};
use crate::model::RunResult;

fn describe_workload(r: &RunResult) -> String {
    let types: Vec<String> = r
        .config
        .txn_types
        .iter()
        .map(|t| format!("{}@{}", t.name, t.weight))
        .collect();
    format!("{} [{}]", r.config.workload, types.join(", "))
}

/// `Err` with what differs when the runs are not of the same workload (the workload name, or
/// the transaction types and their statements). Weights may differ: a mix is still the same
/// workload, and the difference is listed among the differences.
pub fn check_comparable(runs: &[Input<'_>]) -> Result<(), String> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let key = |r: &RunResult| {
        (
            r.config.workload.clone(),
            r.config
                .txn_types
                .iter()
                .map(|t| (t.name.clone(), t.statements.clone()))
                .collect::<Vec<_>>(),
        )
    };
    // Replays are compared per statement fingerprint, matched by name (`super::statements`):
    // two replays of different captures (or filters) are still comparable, the fingerprints
    // on one side only are listed as such.
    if runs.iter().all(|x| super::statements::is_replay(x.run)) {
        return Ok(());
    }
    let k0 = key(first.run);
    let odd: Vec<String> = runs
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, x)| key(x.run) != k0)
        .map(|(i, x)| format!("{} ({}) ran {}", label(i), x.name, describe_workload(x.run)))
        .collect();
    if odd.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "these runs are of different workloads, so their numbers do not measure the same \
             thing: A ({}) ran {}; {}",
            first.name,
            describe_workload(first.run),
            odd.join("; ")
        ))
    }
}

pub(super) fn one_run_summary(r: &RunResult) -> String {
    let c = &r.config;
    let stop = match (c.duration_s, c.transactions_per_client) {
        (Some(t), _) => format!("{t} s"),
        (None, Some(n)) => format!("{n} txns/client"),
        _ => "-".into(),
    };
    let version = r
        .environment
        .server
        .version
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string();
    format!(
        "{}, {} clients, {} threads, {stop}, -M {}, scale {}, {} {version}, {}",
        c.workload,
        c.clients,
        c.threads,
        c.query_mode,
        c.scale_text(),
        r.server_product(),
        r.started_at
    )
}

/// Parameters and settings that differ between the runs.
pub(super) fn differences(runs: &[Input<'_>]) -> Vec<Difference> {
    let mut per_run: Vec<BTreeMap<String, String>> = Vec::new();
    for x in runs {
        let r = x.run;
        let c = &r.config;
        let mut m = BTreeMap::new();
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        m.insert("clients (-c)".into(), c.clients.to_string());
        m.insert("threads (-j)".into(), c.threads.to_string());
        m.insert(
            "duration (-T)".into(),
            opt(c.duration_s.map(|d| format!("{d} s"))),
        );
        m.insert(
            "transactions (-t)".into(),
            opt(c.transactions_per_client.map(|t| t.to_string())),
        );
        m.insert(
            "rate (-R)".into(),
            opt(c.rate_tps.map(|t| format!("{t} tps"))),
        );
        m.insert("query mode (-M)".into(), c.query_mode.clone());
        m.insert("scale (-s)".into(), c.scale_text());
        m.insert("max tries".into(), c.max_tries.to_string());
        m.insert("connect per txn (-C)".into(), c.connect_per_txn.to_string());
        m.insert(
            "script weights".into(),
            c.txn_types
                .iter()
                .map(|t| t.weight.to_string())
                .collect::<Vec<_>>()
                .join("/"),
        );
        m.insert(
            "server version".into(),
            r.environment.server.version.clone(),
        );
        m.insert("target".into(), r.target.conninfo.clone());
        m.insert("client host".into(), r.environment.client.hostname.clone());
        for (k, v) in &r.environment.server.settings {
            m.insert(k.clone(), v.clone());
        }
        if let Some(e) = &r.target.embedded {
            for (k, v) in &e.settings {
                // `--set` settings of the embedded server; SHOW's values win where both exist.
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        m.insert(
            "observed".into(),
            if r.server_metrics.is_some() {
                "yes"
            } else {
                "no"
            }
            .into(),
        );
        per_run.push(m);
    }
    let keys: BTreeSet<&String> = per_run.iter().flat_map(|m| m.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        // Embedded servers live in fresh temporary directories: their addresses always differ.
        if (k == "target" || k == "unix_socket_directories")
            && runs.iter().all(|x| x.run.target.embedded.is_some())
        {
            continue;
        }
        let values: Vec<String> = per_run
            .iter()
            .map(|m| m.get(k).cloned().unwrap_or_else(|| "-".into()))
            .collect();
        if values.iter().any(|v| *v != values[0]) {
            out.push(Difference {
                name: k.clone(),
                values,
            });
        }
    }
    out
}
