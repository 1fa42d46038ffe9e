//! What each endpoint (host) of a target served: latency of its committed transactions,
//! failures by kind, sessions, re-connections and the commits its sessions made.
//!
//! Why a tally apart from the thread's [`measure::Recorder`]: the recorder is per transaction
//! type and per interval (ticks), and every output reads it; the per-endpoint view is for the
//! whole run only and keyed by the host the session that ran the transaction is on (the
//! client's `ClientStats::endpoint`, set whenever its session opens). Each transaction counts
//! for the host that served it when it ran, not for the host its client ended on: a client that
//! moved (a fault run's reconnection after a failover, `-C` landing elsewhere) leaves what it ran
//! on the old host there, and counts as one of the clients of every host it had a session on
//! (once each, however often it came back). Each engine thread keeps one
//! [`Tally`] in its `Totals` (no lock: the thread's clients never move), recorded where the
//! recorder records: an index into a small `Vec` (one entry per host, grown when a host is first
//! seen), no map lookup, no allocation after the first transaction of each host (the
//! histogram's first record). The calling thread merges the tallies as it merges the totals.
//!
//! Counting identities, per endpoint `e` (tested in the crate's tests and checked against each
//! server's own counter by the binary's per-host commit check):
//!
//! ```text
//! server_commits[e] = commits of its measured transactions + setup_commits[e]
//! sum over e of latency[e].count() = committed transactions of the run (clients on a host)
//! sum over e of connections[e]     = Outcome::connections
//! sum over e of clients[e]         = clients that had a session, when none moved
//! ```

use measure::{FailureKind, Histogram};
use sut::Session;
use workload::Workload;

use crate::worker::ThreadCtx;

/// One endpoint's share of the run.
#[derive(Clone, Debug, Default)]
pub struct EndpointStats {
    /// Latency of the committed transactions that ran on this host, us, from the scheduled
    /// start as every latency of the run.
    pub latency: Histogram,
    /// Failed transactions by kind, in [`FailureKind::ALL`]'s order.
    pub failures: [u64; 3],
    /// Clients whose (writer) session was on this host at some time during the run, each
    /// counted once however often it came back.
    pub clients: u32,
    /// Sessions opened on this host (initial and `-C` ones): each costs the server one start-up
    /// transaction.
    pub connections: u64,
    /// Sessions re-established during the measured run (`-C`: one per transaction).
    pub reconnects: u64,
    /// Committed server transactions seen on the wire of this host's sessions
    /// (`Session::server_commits`).
    pub server_commits: u64,
    /// The part of `server_commits` made outside measured transactions (`on_connect`,
    /// statement preparation, ROLLBACK after an error).
    pub setup_commits: u64,
}

impl EndpointStats {
    /// Failed transactions of one kind.
    pub fn failures_of(&self, kind: FailureKind) -> u64 {
        let i = FailureKind::ALL.iter().position(|k| *k == kind);
        i.map_or(0, |i| self.failures[i])
    }

    fn merge(&mut self, o: &EndpointStats) {
        self.latency.merge(&o.latency);
        for (a, b) in self.failures.iter_mut().zip(o.failures) {
            *a += b;
        }
        self.clients += o.clients;
        self.connections += o.connections;
        self.reconnects += o.reconnects;
        self.server_commits += o.server_commits;
        self.setup_commits += o.setup_commits;
    }
}

/// A thread's (or, merged, the run's) per-endpoint stats, indexed by the target's host index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally(Vec<EndpointStats>);

impl Tally {
    #[inline]
    fn at(&mut self, e: usize) -> &mut EndpointStats {
        if self.0.len() <= e {
            self.0.resize_with(e + 1, EndpointStats::default);
        }
        &mut self.0[e]
    }

    pub(crate) fn merge(&mut self, other: &Tally) {
        for (e, s) in other.0.iter().enumerate() {
            self.at(e).merge(s);
        }
    }

    /// The stats of every endpoint up to `n` (the target's host count), hosts that served
    /// nothing included.
    pub(crate) fn into_vec(mut self, n: usize) -> Vec<EndpointStats> {
        if self.0.len() < n {
            self.0.resize_with(n, EndpointStats::default);
        }
        self.0
    }
}

impl<W: Workload> ThreadCtx<W> {
    /// A committed transaction of `latency_us` on endpoint `e` (the client's session's host).
    #[inline]
    pub(crate) fn endpoint_committed(&self, e: Option<usize>, latency_us: u64) {
        if let Some(e) = e {
            self.totals
                .borrow_mut()
                .endpoints
                .at(e)
                .latency
                .record(latency_us);
        }
    }

    /// A client's session is on endpoint `e` now (opened, or re-opened on another host):
    /// `hosts` are those it was on before, each of which counted it once already. Not on the
    /// hot path: called when a session opens.
    pub(crate) fn endpoint_client(&self, hosts: &mut Vec<usize>, e: Option<usize>) {
        if let Some(e) = e.filter(|e| !hosts.contains(e)) {
            hosts.push(e);
            self.totals.borrow_mut().endpoints.at(e).clients += 1;
        }
    }

    /// A failed transaction on endpoint `e`.
    pub(crate) fn endpoint_failed(&self, e: Option<usize>, kind: FailureKind) {
        if let (Some(e), Some(i)) = (e, FailureKind::ALL.iter().position(|k| *k == kind)) {
            self.totals.borrow_mut().endpoints.at(e).failures[i] += 1;
        }
    }

    /// A session re-established during the run (`-C`) on the host it landed on.
    pub(crate) fn endpoint_reconnected(&self, s: &Session) {
        if let Some(e) = self.endpoint_of(s) {
            self.totals.borrow_mut().endpoints.at(e).reconnects += 1;
        }
    }

    /// Setup commits (outside measured transactions) on a session: the run's total and its
    /// host's.
    pub(crate) fn add_setup_commits(&self, s: &Session, n: u64) {
        if n == 0 {
            return;
        }
        let e = self.endpoint_of(s);
        let mut t = self.totals.borrow_mut();
        t.setup_commits += n;
        if let Some(e) = e {
            t.endpoints.at(e).setup_commits += n;
        }
    }

    /// A session's end (closed, or counted when the run ends): one connection and its wire
    /// commits for its host. Every session is counted exactly once (`count_commits`).
    pub(crate) fn endpoint_session_counted(&self, e: usize, server_commits: u64) {
        let mut t = self.totals.borrow_mut();
        let s = t.endpoints.at(e);
        s.connections += 1;
        s.server_commits += server_commits;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tallies_merge_by_endpoint_and_cover_every_host() {
        let mut a = Tally::default();
        a.at(1).latency.record(1_000);
        a.at(1).failures[0] += 1;
        a.at(1).connections += 1;
        a.at(1).clients += 1;
        let mut b = Tally::default();
        b.at(1).clients += 2;
        b.at(0).latency.record(3_000);
        b.at(1).latency.record(2_000);
        b.at(1).server_commits += 5;
        a.merge(&b);
        let v = a.into_vec(3);
        assert_eq!(v.len(), 3, "hosts that served nothing are listed too");
        assert_eq!(v[0].latency.count(), 1);
        assert_eq!(v[1].latency.count(), 2);
        assert_eq!(v[1].failures_of(FailureKind::Serialization), 1);
        assert_eq!(v[1].failures_of(FailureKind::Other), 0);
        assert_eq!((v[1].connections, v[1].server_commits), (1, 5));
        assert_eq!((v[0].clients, v[1].clients), (0, 3));
        assert!(v[2].latency.is_empty());
    }
}
