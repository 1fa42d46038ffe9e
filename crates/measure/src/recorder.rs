//! What one interval of a run observed, per transaction type and per statement.
//!
//! Counting identity (pgbench's, kept here and tested): for every transaction type,
//! `scheduled = committed + failed + skipped`, where `committed = latency.count()`, `failed` is the
//! sum of `failures` by kind, and `skipped` are transactions that `-L` dropped before they started
//! (only with `-R`). Retries are not transactions: a transaction retried twice and then committed
//! counts once in `committed`, twice in `retries`, once in `retried`.

use crate::Histogram;
use serde::{Deserialize, Serialize};

/// Why a transaction failed, sorted by SQLSTATE in `sut::error` (one place).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// SQLSTATE 40001 after all tries were used.
    Serialization,
    /// SQLSTATE 40P01 after all tries were used.
    Deadlock,
    /// Anything else: another SQL error, a lost connection, a script error.
    Other,
}

impl FailureKind {
    pub const ALL: [FailureKind; 3] = [Self::Serialization, Self::Deadlock, Self::Other];

    fn index(self) -> usize {
        match self {
            Self::Serialization => 0,
            Self::Deadlock => 1,
            Self::Other => 2,
        }
    }
}

/// Per-statement latency for `-r`: the time of each statement of a transaction, successful or not.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StmtStats {
    pub latency: Histogram,
    pub failures: u64,
}

/// One transaction type (a builtin, a script) in one interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TxnStats {
    /// Latency of committed transactions in microseconds. Under `-R` it runs from the *scheduled*
    /// start (pgbench's definition), so it includes `lag`.
    pub latency: Histogram,
    /// Under `-R`: delay between the scheduled and the actual start (pgbench's "schedule lag"),
    /// of committed transactions only, as pgbench's `accumStats` records it.
    pub lag: Histogram,
    /// Failed transactions by kind: `[serialization, deadlock, other]`.
    pub failures: [u64; 3],
    /// Retries done (each re-execution counts one).
    pub retries: u64,
    /// Transactions that needed at least one retry (committed or not).
    pub retried: u64,
    /// Skipped by `-L` under `-R`: already later than the limit when due to start.
    pub skipped: u64,
    /// Committed transactions whose latency exceeded `-L` (pgbench's "above the latency limit").
    pub late: u64,
    /// One entry per statement of the transaction type, filled only with `-r`.
    pub statements: Vec<StmtStats>,
}

impl TxnStats {
    pub fn committed(&self) -> u64 {
        self.latency.count()
    }

    pub fn failed(&self) -> u64 {
        self.failures.iter().sum()
    }

    pub fn failures_of(&self, kind: FailureKind) -> u64 {
        self.failures[kind.index()]
    }

    /// Forget the failures of one kind (a report that does not count them).
    pub fn clear_failures_of(&mut self, kind: FailureKind) {
        self.failures[kind.index()] = 0;
    }

    /// All transactions that were due in the interval: committed + failed + skipped.
    pub fn scheduled(&self) -> u64 {
        self.committed() + self.failed() + self.skipped
    }

    /// What was recorded, with packed histograms; this one emptied.
    fn take(&mut self) -> TxnStats {
        TxnStats {
            latency: self.latency.take(),
            lag: self.lag.take(),
            failures: std::mem::take(&mut self.failures),
            retries: std::mem::take(&mut self.retries),
            retried: std::mem::take(&mut self.retried),
            skipped: std::mem::take(&mut self.skipped),
            late: std::mem::take(&mut self.late),
            statements: (self.statements.iter_mut())
                .map(|s| StmtStats {
                    latency: s.latency.take(),
                    failures: std::mem::take(&mut s.failures),
                })
                .collect(),
        }
    }

    pub fn merge(&mut self, other: &TxnStats) {
        self.latency.merge(&other.latency);
        self.lag.merge(&other.lag);
        for (a, b) in self.failures.iter_mut().zip(other.failures) {
            *a += b;
        }
        self.retries += other.retries;
        self.retried += other.retried;
        self.skipped += other.skipped;
        self.late += other.late;
        if self.statements.len() < other.statements.len() {
            self.statements
                .resize_with(other.statements.len(), StmtStats::default);
        }
        for (a, b) in self.statements.iter_mut().zip(&other.statements) {
            a.latency.merge(&b.latency);
            a.failures += b.failures;
        }
    }
}

/// Everything observed between two ticks (or over the whole run, once intervals are merged).
/// Times are microseconds since the measured start of the run (after connections were opened).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Interval {
    pub start_us: u64,
    pub end_us: u64,
    /// Indexed like the run's transaction types.
    pub txns: Vec<TxnStats>,
}

impl Interval {
    pub fn new(n_txn_types: usize, start_us: u64) -> Self {
        Interval {
            start_us,
            end_us: start_us,
            txns: (0..n_txn_types).map(|_| TxnStats::default()).collect(),
        }
    }

    /// Merge another recorder's view of the same (or an adjacent) interval: the time span becomes
    /// the union, the counts add up.
    pub fn merge(&mut self, other: &Interval) {
        if self.txns.is_empty() && self.start_us == self.end_us {
            self.start_us = other.start_us;
        } else {
            self.start_us = self.start_us.min(other.start_us);
        }
        self.end_us = self.end_us.max(other.end_us);
        if self.txns.len() < other.txns.len() {
            self.txns.resize_with(other.txns.len(), TxnStats::default);
        }
        for (a, b) in self.txns.iter_mut().zip(&other.txns) {
            a.merge(b);
        }
    }

    /// All transaction types folded into one.
    pub fn total(&self) -> TxnStats {
        let mut t = TxnStats::default();
        for x in &self.txns {
            let mut x = x.clone();
            // Statement tables differ between transaction types; they are not summed across types.
            x.statements.clear();
            t.merge(&x);
        }
        t
    }

    pub fn duration_s(&self) -> f64 {
        (self.end_us.saturating_sub(self.start_us)) as f64 / 1e6
    }
}

/// The hot-path writer. One per engine thread; never shared across threads, never locked.
#[derive(Debug)]
pub struct Recorder {
    current: Interval,
}

impl Recorder {
    /// `statements_per_txn[i]` is the statement count of transaction type `i` when `-r` is on,
    /// or 0 to skip per-statement recording.
    pub fn new(statements_per_txn: Vec<usize>, start_us: u64) -> Self {
        Recorder {
            current: Self::fresh(&statements_per_txn, start_us),
        }
    }

    fn fresh(shape: &[usize], start_us: u64) -> Interval {
        let mut i = Interval::new(shape.len(), start_us);
        for (t, &n) in i.txns.iter_mut().zip(shape) {
            t.statements.resize_with(n, StmtStats::default);
        }
        i
    }

    #[inline]
    pub fn committed(&mut self, txn: usize, latency_us: u64, lag_us: Option<u64>, late: bool) {
        let t = &mut self.current.txns[txn];
        t.latency.record(latency_us);
        if let Some(l) = lag_us {
            t.lag.record(l);
        }
        if late {
            t.late += 1;
        }
    }

    /// A failed transaction. `_lag_us` is accepted for symmetry but not recorded: pgbench's lag
    /// statistics cover committed transactions only.
    #[inline]
    pub fn failed(&mut self, txn: usize, kind: FailureKind, _lag_us: Option<u64>) {
        self.current.txns[txn].failures[kind.index()] += 1;
    }

    /// A transaction finished (committed or failed) after `retries` re-executions.
    #[inline]
    pub fn retries(&mut self, txn: usize, retries: u32) {
        if retries > 0 {
            let t = &mut self.current.txns[txn];
            t.retries += retries as u64;
            t.retried += 1;
        }
    }

    /// A transaction skipped by `-L`. Its lag is not recorded (pgbench's `accumStats`).
    #[inline]
    pub fn skipped(&mut self, txn: usize, _lag_us: Option<u64>) {
        self.current.txns[txn].skipped += 1;
    }

    /// Per-statement latency (`-r`). Ignored for statement indexes the recorder was not sized for.
    #[inline]
    pub fn statement(&mut self, txn: usize, stmt: usize, latency_us: u64, ok: bool) {
        if let Some(s) = self.current.txns[txn].statements.get_mut(stmt) {
            s.latency.record(latency_us);
            if !ok {
                s.failures += 1;
            }
        }
    }

    /// Close the current interval at `now_us` and start a new one there. The closed interval's
    /// histograms are packed copies; the recorder's own keep their dense arrays, emptied, so
    /// recording never allocates after the first values and a tick costs no page faults.
    pub fn take(&mut self, now_us: u64) -> Interval {
        let out = Interval {
            start_us: self.current.start_us,
            end_us: now_us,
            txns: self.current.txns.iter_mut().map(TxnStats::take).collect(),
        };
        self.current.start_us = now_us;
        self.current.end_us = now_us;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_identity_holds_through_merge() {
        let mut r = Recorder::new(vec![2, 0], 0);
        r.committed(0, 100, None, false);
        r.committed(0, 300, None, true);
        r.failed(0, FailureKind::Serialization, None);
        r.retries(0, 2);
        r.skipped(1, Some(5));
        r.statement(0, 1, 50, true);
        r.statement(0, 7, 50, true); // out of range: ignored, never panics
        let a = r.take(1_000_000);
        let mut r2 = Recorder::new(vec![2, 0], 1_000_000);
        r2.failed(1, FailureKind::Other, None);
        let b = r2.take(2_000_000);
        let mut all = Interval::default();
        all.merge(&a);
        all.merge(&b);
        assert_eq!((all.start_us, all.end_us), (0, 2_000_000));
        let t = all.total();
        assert_eq!(t.committed(), 2);
        assert_eq!(t.failed(), 2);
        assert_eq!(t.skipped, 1);
        assert_eq!(t.scheduled(), 5);
        assert_eq!((t.retries, t.retried, t.late), (2, 1, 1));
        assert_eq!(all.txns[0].statements[1].latency.count(), 1);
        assert_eq!(t.failures_of(FailureKind::Other), 1);
    }

    #[test]
    fn take_starts_a_fresh_interval_of_the_same_shape() {
        let mut r = Recorder::new(vec![3], 10);
        r.committed(0, 1, None, false);
        let first = r.take(20);
        assert_eq!((first.start_us, first.end_us), (10, 20));
        let second = r.take(30);
        assert_eq!(second.txns[0].committed(), 0);
        assert_eq!(second.txns[0].statements.len(), 3);
        assert_eq!(second.start_us, 20);
    }

    /// What a tick hands on is packed (small, and each interval of a long run is kept), while the
    /// recorder's own histograms keep their dense arrays for the next second's records.
    #[test]
    fn take_hands_on_packed_copies_and_keeps_recording_dense() {
        let mut r = Recorder::new(vec![1], 0);
        for v in 0..20_000u64 {
            r.committed(0, 100 + v % 900, Some(v % 50), v % 7 == 0);
            r.statement(0, 0, 90 + v % 900, true);
            r.failed(0, FailureKind::Deadlock, None);
        }
        let a = r.take(1_000_000);
        let t = &a.txns[0];
        assert_eq!((t.committed(), t.failed(), t.late), (20_000, 20_000, 2_858));
        for h in [&t.latency, &t.lag, &t.statements[0].latency] {
            assert!(h.heap_bytes() < 4096, "{} bytes", h.heap_bytes());
        }
        let live = &r.current.txns[0];
        assert!(live.latency.is_empty() && live.latency.heap_bytes() > 100_000);
        assert_eq!((live.failed(), live.late), (0, 0));
        r.committed(0, 5, None, false);
        let b = r.take(2_000_000);
        assert_eq!(b.txns[0].committed(), 1);
        assert_eq!(b.txns[0].latency.percentile_us(50.0), 5);
        assert_eq!(b.txns[0].statements[0].latency.count(), 0);
    }
}
