//! The exact merge of several results into one: the results of the processes of a fleet
//! (`--fleet`), or any results of the same workload (`stampede merge A.json B.json ...`).
//!
//! Exact because nothing is averaged: every interval carries its HDR histograms losslessly
//! (`measure::Histogram`), so the merged histograms are the bucket-for-bucket sums and every
//! merged percentile is the percentile of the union of all latencies (averaging percentiles
//! across drivers gives values that are too low: scylla-cluster-tests#3133; YCSB's README says
//! to merge histograms, PR #1512). Counts, failures by kind, retries, skips add up.
//!
//! Time: each process measures from its own start. A fleet member's result records when it
//! started on the server's clock (`fleet.processes[0].started_server_us`, its own clock
//! corrected by the measured offset), so its intervals are shifted onto the fleet's timeline
//! (the common start on the server's clock) before intervals of the same `-P` slot are merged.
//! Results without a fleet section are taken to have started together.
//!
//! Pure: no I/O, no clock; the caller reads the files or the fleet table and adds the fleet's
//! commit check (it alone has the server's snapshots).

use std::collections::BTreeMap;

use measure::Interval;

use crate::fleet::{FleetProcess, FleetSection};
use crate::model::{Check, Endpoint, RunResult};

/// Merge `results` (at least one), in the order given. `size`: the processes that were to run
/// (a fleet's `--fleet-size`), when known; indexes below it that did not report are listed as
/// lost. Errors name what does not fit (different workloads, the same process twice).
pub fn merge(results: &[RunResult], size: Option<u32>) -> Result<RunResult, String> {
    let Some(first) = results.first() else {
        return Err("nothing to merge".into());
    };
    let types: Vec<&str> = (first.config.txn_types.iter())
        .map(|t| t.name.as_str())
        .collect();
    for (i, r) in results.iter().enumerate().skip(1) {
        let theirs: Vec<&str> = r.config.txn_types.iter().map(|t| t.name.as_str()).collect();
        if r.config.workload != first.config.workload || theirs != types {
            return Err(format!(
                "result {} runs {} ({}), result 1 runs {} ({}): only results of the same \
                 workload and transaction types can be merged",
                i + 1,
                r.config.workload,
                theirs.join(", "),
                first.config.workload,
                types.join(", ")
            ));
        }
    }
    // Each result's process (its own fleet entry, or one made up for a plain result).
    let mut processes: Vec<FleetProcess> = Vec::with_capacity(results.len());
    let mut name = String::new();
    let mut fleet_size = size.unwrap_or(0);
    let mut start_server_us = None::<i64>;
    let mut next_client = 0;
    for (i, r) in results.iter().enumerate() {
        let p = match &r.fleet {
            Some(f) => {
                if !name.is_empty() && f.name != name {
                    return Err(format!(
                        "result {} belongs to fleet {}, result 1 to fleet {name}",
                        i + 1,
                        f.name
                    ));
                }
                name.clone_from(&f.name);
                fleet_size = fleet_size.max(f.size);
                start_server_us =
                    Some(start_server_us.map_or(f.start_server_us, |s| s.min(f.start_server_us)));
                f.processes.first().cloned().ok_or_else(|| {
                    format!("result {} has a fleet section without its process", i + 1)
                })?
            }
            None => own_process(r, i as u32, next_client),
        };
        if processes.iter().any(|q| q.index == p.index) {
            return Err(format!(
                "result {} is process {} of the fleet again: each process's result once",
                i + 1,
                p.index
            ));
        }
        next_client += r.config.clients;
        processes.push(p);
    }
    let start = start_server_us
        .unwrap_or_else(|| processes.iter().map(|p| p.started_server_us).min().unwrap());

    let mut out = first.clone();
    // -P slots of the fleet's timeline; without -P each result is one interval.
    let slot_us = first.config.progress_s.map(|p| (p * 1e6) as u64);
    let mut slots: BTreeMap<u64, Interval> = BTreeMap::new();
    let mut total = Interval::default();
    for (r, p) in results.iter().zip(&processes) {
        let shift = p.started_server_us - start;
        let moved = |i: &Interval| {
            let mut i = i.clone();
            i.start_us = (i.start_us as i64 + shift).max(0) as u64;
            i.end_us = (i.end_us as i64 + shift).max(0) as u64;
            i
        };
        total.merge(&moved(&r.total));
        for i in &r.intervals {
            let i = moved(i);
            let key = match slot_us {
                Some(s) if s > 0 => (i.start_us + s / 2) / s,
                _ => 0,
            };
            slots.entry(key).or_default().merge(&i);
        }
    }
    out.intervals = slots.into_values().collect();
    out.measured_duration_s = total.duration_s();
    out.total = total;
    out.started_at = crate::format_rfc3339_utc(
        std::time::UNIX_EPOCH + std::time::Duration::from_micros(start.max(0) as u64),
    );
    out.interrupted = results.iter().any(|r| r.interrupted);
    // One process's CloudWatch window is not the fleet's: left out rather than shown as it.
    out.cloudwatch = None;

    // The fleet's shape: every client and engine thread, the whole rate.
    let c = &mut out.config;
    c.clients = results.iter().map(|r| r.config.clients).sum();
    c.threads = results.iter().map(|r| r.config.threads).sum();
    c.rate_tps = (results.iter())
        .map(|r| r.config.rate_tps)
        .sum::<Option<f64>>();
    let conn = &mut out.connections;
    conn.clients = out.config.clients;
    conn.initial_connect_ms = (results.iter())
        .map(|r| r.connections.initial_connect_ms)
        .fold(0.0, f64::max);
    conn.reconnect_total_ms = (results.iter())
        .map(|r| r.connections.reconnect_total_ms)
        .sum::<Option<f64>>();
    conn.aborted = results
        .iter()
        .flat_map(|r| r.connections.aborted.iter().cloned())
        .collect();
    if let Some(s) = &mut conn.setup {
        s.opened = (results.iter())
            .filter_map(|r| r.connections.setup.as_ref())
            .map(|s| s.opened)
            .sum();
        s.retries = (results.iter())
            .filter_map(|r| r.connections.setup.as_ref())
            .map(|s| s.retries)
            .sum();
    }

    // Each process's checks, named by process; the fleet's own is added by the caller.
    out.checks = (results.iter().zip(&processes))
        .flat_map(|(r, p)| {
            r.checks.iter().map(move |c| Check {
                name: format!("process {}: {}", p.index, c.name),
                ..c.clone()
            })
        })
        .collect();
    out.endpoints = merge_endpoints(results, out.measured_duration_s);
    out.endpoints_warning = Endpoint::imbalance(&out.endpoints);
    // sysbench's section: counts summed, fairness recomputed from the merged totals (a fault
    // run is one process's and is not merged). TPC-C's is a family section (below).
    out.failover = None;
    if let Some(s) = &mut out.sysbench {
        for r in &results[1..] {
            if let Some(o) = &r.sysbench {
                s.window.merge(&o.window);
                s.reconnects += o.reconnects;
                s.writes_after_run += o.writes_after_run;
            }
        }
        let parts: Option<Vec<(u32, crate::Fairness)>> = (results.iter())
            .map(|r| {
                let f = r.sysbench.as_ref()?.fairness.clone()?;
                Some((r.config.clients, f))
            })
            .collect();
        s.fairness = parts.map(|p| crate::Fairness::pooled(&p));
    }

    // The families' sections, each merged by its view (`section::View::merge`); one that no
    // view merges is left out rather than shown as the fleet's when it is one process's.
    let keys: std::collections::BTreeSet<&String> =
        results.iter().flat_map(|r| r.sections.keys()).collect();
    let mut sections = BTreeMap::new();
    for key in keys {
        let parts: Vec<Option<&serde_json::Value>> =
            results.iter().map(|r| r.sections.get(key)).collect();
        if let Some(v) = crate::section::view(key).and_then(|view| view.merge(&parts, &out)) {
            sections.insert(key.clone(), v);
        }
    }
    out.sections = sections;

    let committed = out.total.total().committed().max(1) as f64;
    for p in &mut processes {
        p.share_pct = 100.0 * p.transactions as f64 / committed;
        p.lagging = p.lag_reasons();
    }
    processes.sort_by_key(|p| p.index);
    let lost = (0..fleet_size)
        .filter(|i| !processes.iter().any(|p| p.index == *i))
        .collect();
    out.fleet = Some(FleetSection {
        name,
        size: fleet_size.max(processes.len() as u32),
        start_server_us: start,
        processes,
        lost,
        commit_check: None,
    });
    Ok(out)
}

/// A plain result's process: what its numbers say, started with the others.
fn own_process(r: &RunResult, index: u32, first_client_id: u32) -> FleetProcess {
    let t = r.total.total();
    FleetProcess {
        index,
        hostname: r.environment.client.hostname.clone(),
        clients: r.config.clients,
        first_client_id,
        transactions: t.committed(),
        failed: t.failed(),
        tps: r.tps(),
        duration_s: r.measured_duration_s,
        rate_tps: r.config.rate_tps,
        ..Default::default()
    }
}

/// The hosts of all results, by host and port: clients, transactions, failures and reconnects
/// summed (a host's latency summary is not a sum and is left out unless one result has it).
fn merge_endpoints(results: &[RunResult], secs: f64) -> Vec<Endpoint> {
    let mut eps: Vec<Endpoint> = Vec::new();
    let mut seen: BTreeMap<(String, u16), usize> = BTreeMap::new();
    for e in results.iter().flat_map(|r| &r.endpoints) {
        match seen.get(&(e.host.clone(), e.port)) {
            Some(&i) => {
                let m = &mut eps[i];
                m.clients += e.clients;
                m.transactions += e.transactions;
                m.reconnects += e.reconnects;
                m.reader_clients += e.reader_clients;
                m.reader_transactions += e.reader_transactions;
                for k in measure::FailureKind::ALL {
                    m.failures.add(k, e.failures.of(k));
                }
                m.latency_ms = None;
            }
            None => {
                seen.insert((e.host.clone(), e.port), eps.len());
                eps.push(e.clone());
            }
        }
    }
    for e in &mut eps {
        e.set_tps(secs);
    }
    eps
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::{Histogram, TxnStats};

    fn result(index: u32, started: i64, latencies: &[u64], progress: bool) -> RunResult {
        let mut r = crate::testdata::observed_run();
        r.server_metrics = None;
        r.endpoints.clear();
        r.config.clients = 2;
        r.config.progress_s = progress.then_some(1.0);
        let mut iv = Vec::new();
        for (k, chunk) in latencies.chunks(2).enumerate() {
            let mut h = Histogram::new();
            for l in chunk {
                h.record(*l);
            }
            let mut i = Interval::new(1, k as u64 * 1_000_000);
            i.end_us = (k as u64 + 1) * 1_000_000;
            i.txns[0] = TxnStats {
                latency: h,
                ..Default::default()
            };
            iv.push(i);
        }
        let mut total = Interval::default();
        for i in &iv {
            total.merge(i);
        }
        r.intervals = iv;
        r.total = total;
        r.config.txn_types.truncate(1);
        r.fleet = Some(FleetSection {
            name: "f".into(),
            size: 3,
            start_server_us: 1_000_000_000,
            processes: vec![FleetProcess {
                index,
                clients: 2,
                first_client_id: 2 * index,
                transactions: latencies.len() as u64,
                started_server_us: started,
                ..Default::default()
            }],
            ..Default::default()
        });
        r
    }

    #[test]
    fn merged_histograms_are_those_of_every_latency_and_percentiles_of_the_union() {
        let a = result(0, 1_000_000_000, &[100, 200, 300, 400], true);
        let b = result(1, 1_000_000_020, &[5_000, 6_000, 7_000, 9_000_000], true);
        let m = merge(&[a, b], None).unwrap();
        let mut union = Histogram::new();
        for l in [100, 200, 300, 400, 5_000, 6_000, 7_000, 9_000_000] {
            union.record(l);
        }
        let merged = &m.total.txns[0].latency;
        assert_eq!(merged.encode(), union.encode());
        assert_eq!(merged.percentile_us(50.0), union.percentile_us(50.0));
        // Not the average of the two p99s.
        assert_eq!(merged.percentile_us(99.0), union.percentile_us(99.0));
        assert!(merged.percentile_us(99.0) >= 9_000_000 * 99 / 100);
        // Intervals of the same -P slot merged: two slots of four transactions each.
        assert_eq!(m.intervals.len(), 2);
        assert_eq!(m.intervals[0].total().committed(), 4);
        assert_eq!(m.config.clients, 4);
        let f = m.fleet.unwrap();
        assert_eq!(f.lost, vec![2]);
        assert_eq!(f.processes[1].share_pct, 50.0);
    }

    #[test]
    fn a_process_twice_and_different_workloads_are_refused() {
        let a = result(0, 0, &[1, 2], false);
        let e = merge(&[a.clone(), a.clone()], None).unwrap_err();
        assert!(e.contains("process 0 of the fleet again"), "{e}");
        let mut b = result(1, 0, &[1, 2], false);
        b.config.workload = "other".into();
        let e = merge(&[a, b], None).unwrap_err();
        assert!(e.contains("same workload"), "{e}");
    }

    #[test]
    fn fleet_commit_check_is_exact_or_says_which_process_was_lost() {
        // A fleet of two, both reported.
        let two = |i| {
            let mut r = result(i, 0, &[1, 2], false);
            r.fleet.as_mut().unwrap().size = 2;
            r
        };
        let m = merge(&[two(0), two(1)], Some(2)).unwrap();
        assert!(m.fleet.as_ref().unwrap().lost.is_empty());
        let mut f = m.fleet.unwrap();
        f.processes[0].server_commits = 10;
        f.processes[1].server_commits = 12;
        let pg = |before, after| crate::fleet::Snapshots {
            before,
            after,
            counter: "xact_commit",
            others: None,
            maintenance: None,
        };
        let c = crate::fleet::commit_check(&f, &pg(100, 122));
        assert_eq!(c.status, crate::CheckStatus::Passed, "{}", c.detail);
        let c = crate::fleet::commit_check(&f, &pg(100, 123));
        assert_eq!(c.status, crate::CheckStatus::Failed);
        // Autovacuum's commits count in xact_commit too: a surplus of up to 4 per run is
        // inconclusive, a larger one or a deficit fails.
        let vacuumed = |after, runs| crate::fleet::Snapshots {
            maintenance: Some(runs),
            ..pg(100, after)
        };
        let c = crate::fleet::commit_check(&f, &vacuumed(130, 2));
        assert_eq!(c.status, crate::CheckStatus::Skipped, "{}", c.detail);
        assert!(
            c.detail.ends_with(
                "autovacuum/autoanalyze ran 2 times during the run and the \
                 server counts their transactions too"
            ),
            "{}",
            c.detail
        );
        for (after, runs) in [(131, 2), (121, 2), (123, 0)] {
            let c = crate::fleet::commit_check(&f, &vacuumed(after, runs));
            assert_eq!(c.status, crate::CheckStatus::Failed, "{after} {runs}");
        }
        // MySQL: a COMMIT that failed may have been counted; a session that is not the
        // fleet's makes a mismatch inconclusive; so does a process of autocommits.
        let my = |after, others| crate::fleet::Snapshots {
            before: 100,
            after,
            counter: "Com_commit",
            others: Some(others),
            maintenance: None,
        };
        f.processes[1].failed_commits = 1;
        let c = crate::fleet::commit_check(&f, &my(123, 0));
        assert_eq!(c.status, crate::CheckStatus::Passed, "{}", c.detail);
        assert!(
            c.detail
                .starts_with("server Com_commit delta 23, processes' commits 22 + up to 1"),
            "{}",
            c.detail
        );
        assert_eq!(
            crate::fleet::commit_check(&f, &my(124, 0)).status,
            crate::CheckStatus::Failed
        );
        let c = crate::fleet::commit_check(&f, &my(124, 2));
        assert_eq!(c.status, crate::CheckStatus::Skipped);
        assert!(c
            .detail
            .ends_with("2 other sessions were connected, whose COMMITs count too"));
        f.processes[0].uncounted = Some("autocommitted statements".into());
        let c = crate::fleet::commit_check(&f, &my(124, 0));
        assert_eq!(c.status, crate::CheckStatus::Skipped);
        assert!(
            c.detail.contains("process 0: autocommitted"),
            "{}",
            c.detail
        );
        f.lost = vec![2];
        let c = crate::fleet::commit_check(&f, &pg(100, 150));
        assert_eq!(c.status, crate::CheckStatus::Skipped);
        assert!(c.detail.contains("process 2 was lost"), "{}", c.detail);
    }

    #[test]
    fn pooled_fairness_is_that_of_every_client_at_once() {
        let clients = [
            (10.0, 1.0),
            (12.0, 1.5),
            (30.0, 0.5),
            (31.0, 2.0),
            (8.0, 1.0),
        ];
        let whole = crate::Fairness::of(&clients);
        let pooled = crate::Fairness::pooled(&[
            (2, crate::Fairness::of(&clients[..2])),
            (3, crate::Fairness::of(&clients[2..])),
        ]);
        for (x, y) in [
            (whole.events_avg, pooled.events_avg),
            (whole.events_stddev, pooled.events_stddev),
            (whole.time_avg_s, pooled.time_avg_s),
            (whole.time_stddev_s, pooled.time_stddev_s),
        ] {
            assert!((x - y).abs() < 1e-9, "{whole:?} {pooled:?}");
        }
    }
}
