//! `--read-from` in the run: its checks before any I/O, the replication watch around the
//! measured run, and the endpoints' imbalance judged as a split run must be.
//!
//! Kept apart from `run/mod.rs` so the rest of the run has three one-line hooks: [`check`]
//! before the target is opened, [`watch`] before the run, [`finish`] after it.

use anyhow::Result;
use engine::RunSpec;

use crate::console::{self, Failure};
use crate::targeting;

/// Refuse `--read-from` where it cannot work, before connecting (the engine checks again).
pub(super) fn check(spec: &RunSpec, target: &targeting::Target) -> Result<()> {
    let Some(rf) = spec.read_from else {
        return Ok(());
    };
    let flag = format!("--read-from {}", rf.as_str());
    let conn = &target.conn;
    if conn.pg().is_none() {
        return Err(Failure::usage(
            format!("{flag}: only PostgreSQL targets can be split into a writer and readers"),
            "drop --read-from; to spread clients over MySQL nodes use --spread",
        ));
    }
    if conn.endpoints() < 2 {
        return Err(Failure::usage(
            format!("{flag} needs several hosts: with one host every transaction runs on it"),
            "list the primary and its standbys: -h primary,standby1 -p 5432,5432",
        ));
    }
    if spec.connect_per_txn {
        return Err(Failure::usage(
            format!("{flag} cannot be used with -C/--connect"),
            "drop -C or --read-from",
        ));
    }
    Ok(())
}

/// With `--read-from` (standby or any): sample each standby's lag on the primary while the
/// run goes (`observe::replication`). A watch that cannot start is a warning, never a failure.
pub(super) fn watch(spec: &RunSpec, conn: &sut::Target) -> Option<observe::replication::Watch> {
    if !matches!(
        spec.read_from,
        Some(engine::ReadFrom::Standby | engine::ReadFrom::Any)
    ) {
        return None;
    }
    match observe::replication::Watch::start(conn) {
        Ok(w) => Some(w),
        Err(e) => {
            console::warning(&format!(
                "{}; running without replication lag",
                sut::conninfo::redact(&format!("{e:#}"))
            ));
            None
        }
    }
}

/// Stop the watch (before the checks: its session and its samples are the primary's commits
/// too, see [`add_watch`]).
pub(super) fn stop(
    watch: Option<observe::replication::Watch>,
) -> Option<observe::replication::Watched> {
    let seen = watch?.finish();
    if let Some(e) = &seen.error {
        console::warning(&format!("replication lag sampling stopped early: {e}"));
    }
    Some(seen)
}

/// The watch's session on its host, for the per-host commit count: one connection, and its
/// samples as commits outside the measured transactions.
pub(super) fn add_watch(
    hosts: &mut [crate::checks::hosts::HostCommits],
    seen: Option<&observe::replication::Watched>,
) {
    if let Some(h) = seen.and_then(|w| w.host.and_then(|i| hosts.get_mut(i))) {
        h.connections += 1;
        h.setup += seen.map_or(0, |w| w.queries);
    }
}

/// The watch's result, into the run's.
pub(super) fn finish(seen: Option<&observe::replication::Watched>, result: &mut report::RunResult) {
    if let Some(seen) = seen {
        result.replication = seen.standbys.clone();
    }
}

/// The endpoints' imbalance warning. Under a read/write split every client has its writer on
/// the primary, so the whole-host shares say nothing: the readers' spread is judged instead,
/// over the hosts that hold reader sessions or no writer at all (a standby that got none).
pub(super) fn imbalance(eps: &[report::Endpoint]) -> Option<String> {
    if !eps.iter().any(|e| e.reader_clients > 0) {
        return report::Endpoint::imbalance(eps);
    }
    let readers: Vec<report::Endpoint> = eps
        .iter()
        .filter(|e| e.reader_clients > 0 || e.clients == 0)
        .map(|e| report::Endpoint {
            clients: e.reader_clients,
            transactions: e.reader_transactions,
            ..e.clone()
        })
        .collect();
    report::Endpoint::imbalance(&readers).map(|w| format!("readers: {w}"))
}

#[cfg(test)]
mod tests {
    use super::imbalance;

    fn ep(host: &str, clients: u32, readers: u32, txns: u64, reader_txns: u64) -> report::Endpoint {
        report::Endpoint {
            host: host.into(),
            port: 1,
            clients,
            transactions: txns,
            reader_clients: readers,
            reader_transactions: reader_txns,
            ..Default::default()
        }
    }

    #[test]
    fn a_split_is_judged_by_its_readers() {
        // Every writer on the primary, readers even on the standbys: no warning.
        let even = [
            ep("p", 6, 0, 100, 0),
            ep("s1", 0, 3, 250, 250),
            ep("s2", 0, 3, 250, 250),
        ];
        assert_eq!(imbalance(&even), None);
        // Readers all on one standby of two.
        let one = [
            ep("p", 6, 0, 100, 0),
            ep("s1", 0, 6, 500, 500),
            ep("s2", 0, 0, 0, 0),
        ];
        let w = imbalance(&one).expect("a warning");
        assert!(
            w.starts_with("readers: all 6 clients are on one host of 2"),
            "{w}"
        );
        // Without a split, as before.
        assert!(imbalance(&[ep("a", 2, 0, 10, 0), ep("b", 0, 0, 0, 0)]).is_some());
    }
}
