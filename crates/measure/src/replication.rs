//! Replication lag of each standby as the primary saw it during a run (`--read-from`), filled
//! by `observe::replication`, rendered by `report`. Reads sent to a standby see its replayed
//! state: how far behind it was tells how stale those reads could be.

use serde::{Deserialize, Serialize};

/// One standby, over the samples of the run in which the primary listed it
/// (`pg_stat_replication`, one sample a second).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaLag {
    /// The standby's `application_name` (its `cluster_name` or `primary_conninfo`'s
    /// application_name: walreceiver by default), with its `client_addr` when it has one.
    pub standby: String,
    /// Samples in which the primary listed it.
    pub samples: u32,
    /// WAL the primary had written that the standby had not replayed yet:
    /// `pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)`, in bytes.
    pub max_lag_bytes: u64,
    pub p95_lag_bytes: u64,
    /// PostgreSQL's own lag times (`write_lag`, `flush_lag`, `replay_lag`: how long the last
    /// WAL took to be written, flushed, replayed on the standby); `None` when the primary
    /// reported none during the run (an idle primary sends no WAL to time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write_lag_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_flush_lag_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replay_lag_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_replay_lag_ms: Option<f64>,
}

/// The 95th percentile of `v` (nearest rank), 0 when empty.
pub fn p95<T: Copy + PartialOrd + Default>(v: &[T]) -> T {
    if v.is_empty() {
        return T::default();
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    // Nearest rank: ceil(0.95 n), 1-based.
    let rank = (s.len() * 95).div_ceil(100).max(1);
    s[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::p95;

    #[test]
    fn p95_is_the_nearest_rank() {
        let v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(p95(&v), 95);
        assert_eq!(p95(&[7u64]), 7);
        assert_eq!(p95::<u64>(&[]), 0);
        assert_eq!(p95(&[1.0, 3.0, 2.0]), 3.0);
    }
}
