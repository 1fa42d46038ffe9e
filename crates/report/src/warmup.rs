//! What a run did before its figures: the warm-up left out of them (`--warmup`) and the
//! prewarm that read the workload's tables into the server's cache (`--prewarm`).
//!
//! Owns [`Warmup`], [`apply`] (the cut of a result's figures, pure) and [`Prewarm`]. Must not
//! touch: the per-interval series (kept whole: the charts show the warm-up, marked), the
//! checks (the commit count and the statement ledger compare the clients' counts for the
//! whole run with the server's counters, which count the whole run too), clocks and I/O.
//!
//! After [`apply`], `RunResult::total` and `measured_duration_s` are the measured part's, so
//! every rendering that reads them (the text summary, the JSON, the HTML headline) shows the
//! figures without the warm-up, and a saved result re-renders the same; [`Warmup`] keeps the
//! whole run's count and length beside them.

use measure::Interval;
use serde::{Deserialize, Serialize};

use crate::model::RunResult;

/// `--warmup`: the seconds at the start of the run left out of its figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// The seconds asked for.
    pub seconds: f64,
    /// The intervals at the start left out (they stay in `intervals`).
    pub intervals_excluded: usize,
    /// Committed transactions in the whole run, warm-up included: what the server's counters
    /// count (the commit check's side).
    pub whole_run_transactions: u64,
    /// The whole run's length in seconds.
    pub whole_run_duration_s: f64,
}

/// Whether interval `i` is past a warm-up of `warmup_s` seconds. One rule for every reader of a
/// warm-up (the cut here, the steady-state verdict, compare, a sweep's steps): a tick that starts
/// within 1 ms of the boundary belongs after it (the engine's ticks fall a few microseconds
/// late, and a tick at 4.9995 s of a 5 s warm-up is the first measured one).
pub fn after(i: &Interval, warmup_s: f64) -> bool {
    let warm_us = (warmup_s.max(0.0) * 1e6) as u64;
    i.start_us + 1000 >= warm_us
}

/// The intervals past the warm-up that are full-length (at least half the longest: a run's
/// short last tick is mostly noise), with their indices: what the steady-state verdict and
/// compare's samples read.
pub fn measured(intervals: &[Interval], warmup_s: f64) -> Vec<(usize, &Interval)> {
    let full = (intervals.iter())
        .map(|i| i.end_us.saturating_sub(i.start_us))
        .max()
        .unwrap_or(0);
    (intervals.iter().enumerate())
        .filter(|(_, i)| {
            let d = i.end_us.saturating_sub(i.start_us);
            d > 0 && 2 * d >= full && after(i, warmup_s)
        })
        .collect()
}

/// Leave the intervals that start before `warmup_s` out of `r.total` and
/// `r.measured_duration_s`, and record the cut in `r.warmup`. A warm-up of 0, or one that
/// would leave nothing (an interrupted run shorter than its warm-up), changes nothing: a
/// figure from all of it beats none, and `r.warmup` then stays `None`.
pub fn apply(r: &mut RunResult, warmup_s: f64) {
    if warmup_s <= 0.0 || !warmup_s.is_finite() {
        return;
    }
    let mut cut = Interval::default();
    let mut excluded = 0;
    for i in &r.intervals {
        if after(i, warmup_s) {
            cut.merge(i);
        } else {
            excluded += 1;
        }
    }
    if excluded == 0 || cut.duration_s() <= 0.0 {
        return;
    }
    r.warmup = Some(Warmup {
        seconds: warmup_s,
        intervals_excluded: excluded,
        whole_run_transactions: r.total.total().committed(),
        whole_run_duration_s: r.measured_duration_s,
    });
    r.measured_duration_s = cut.duration_s();
    r.total = cut;
}

/// `--prewarm`: what was read into the server's cache before the run, and how long it took.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prewarm {
    /// How: `pg_prewarm`, `scans` (PostgreSQL without the extension: a full scan of each table
    /// and an ordered scan of each index) or `index scans` (MySQL/MariaDB, sysbench's way).
    pub method: String,
    pub seconds: f64,
    pub relations: Vec<PrewarmedRelation>,
}

/// One table or index read by the prewarm.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrewarmedRelation {
    /// `table` or `index`.
    pub kind: String,
    pub name: String,
    /// The table an index belongs to (`None` for a table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Its size on the server, in bytes (PostgreSQL: the blocks `pg_prewarm` read, or the
    /// relation's size; MySQL: `data_length` or the index's pages times the page size).
    pub bytes: u64,
}

impl Prewarm {
    /// The summary's line: `prewarm: 6 tables and indexes, 14.2 MiB, in 0.31 s (pg_prewarm)`.
    pub fn line(&self) -> String {
        let bytes: u64 = self.relations.iter().map(|x| x.bytes).sum();
        format!(
            "prewarm: {} tables and indexes, {:.1} MiB, in {:.2} s ({})",
            self.relations.len(),
            bytes as f64 / (1024.0 * 1024.0),
            self.seconds,
            self.method
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(per_interval: &[u64]) -> RunResult {
        let mut r = RunResult::default();
        for (k, &n) in per_interval.iter().enumerate() {
            let k = k as u64;
            let mut i = Interval::new(1, k * 1_000_000);
            i.end_us = (k + 1) * 1_000_000;
            for _ in 0..n {
                i.txns[0].latency.record(500);
            }
            r.total.merge(&i);
            r.intervals.push(i);
        }
        r.measured_duration_s = r.total.duration_s();
        r
    }

    #[test]
    fn the_figures_leave_out_the_warmup_and_the_series_keeps_it() {
        let mut r = run(&[1, 2, 3, 10, 10, 10]);
        apply(&mut r, 3.0);
        assert_eq!(r.total.total().committed(), 30);
        assert_eq!(r.measured_duration_s, 3.0);
        assert_eq!(r.intervals.len(), 6);
        let w = r.warmup.as_ref().unwrap();
        assert_eq!((w.intervals_excluded, w.whole_run_transactions), (3, 36));
        assert_eq!(w.whole_run_duration_s, 6.0);
    }

    #[test]
    fn no_warmup_or_one_that_leaves_nothing_changes_nothing() {
        for w in [0.0, 10.0, -1.0] {
            let mut r = run(&[1, 2, 3]);
            apply(&mut r, w);
            assert_eq!(r.total.total().committed(), 6, "{w}");
            assert!(r.warmup.is_none());
        }
    }
}
