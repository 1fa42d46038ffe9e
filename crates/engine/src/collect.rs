//! Merging the threads' intervals into one interval per tick, on the calling thread.
//!
//! Every engine thread takes its recorder at the same nominal boundaries `k * P` (microseconds
//! since the common start) and sends tick `k` = `[(k-1)P, kP]`. When a thread's clients are all
//! done it sends its *tail* `[kP, end]` (k = its last tick), which belongs to bucket `k + 1`.
//! Bucket `k` is complete when every thread has either sent tick `k` or finished before it; a
//! complete bucket with at least one tick is a full progress interval. Whatever remains when every
//! thread has finished (only tails, all in one bucket) is the final, partial interval. Buckets never
//! overlap, so the merged intervals tile the run.

use std::collections::BTreeMap;

use measure::Interval;

#[derive(Debug)]
pub(crate) struct Collector {
    /// Per thread: the last tick sent (0 = none) and whether it has finished.
    last_tick: Vec<u64>,
    done: Vec<bool>,
    /// Bucket -> (merged interval, whether some thread sent it as a tick).
    pending: BTreeMap<u64, (Interval, bool)>,
    /// Last bucket handed out as a full interval.
    emitted: u64,
}

impl Collector {
    pub(crate) fn new(threads: usize) -> Collector {
        Collector {
            last_tick: vec![0; threads],
            done: vec![false; threads],
            pending: BTreeMap::new(),
            emitted: 0,
        }
    }

    fn bucket(&mut self, k: u64) -> &mut (Interval, bool) {
        self.pending
            .entry(k)
            .or_insert_with(|| (Interval::default(), false))
    }

    pub(crate) fn tick(&mut self, thread: usize, k: u64, iv: Interval) {
        debug_assert!(k > self.last_tick[thread] && !self.done[thread]);
        self.last_tick[thread] = k;
        let b = self.bucket(k);
        b.0.merge(&iv);
        b.1 = true;
    }

    pub(crate) fn finish(&mut self, thread: usize, tail: Interval) {
        self.done[thread] = true;
        let k = self.last_tick[thread] + 1;
        self.bucket(k).0.merge(&tail);
    }

    pub(crate) fn all_done(&self) -> bool {
        self.done.iter().all(|d| *d)
    }

    /// The next complete full interval, if any.
    pub(crate) fn next_full(&mut self) -> Option<Interval> {
        let k = self.emitted + 1;
        let complete = (0..self.last_tick.len()).all(|t| self.last_tick[t] >= k || self.done[t]);
        match self.pending.get(&k) {
            Some((_, true)) if complete => {
                self.emitted = k;
                self.pending.remove(&k).map(|(iv, _)| iv)
            }
            _ => None,
        }
    }

    /// When every thread has finished: the final partial interval (the remaining tails), if any.
    pub(crate) fn final_partial(&mut self) -> Option<Interval> {
        debug_assert!(self.all_done());
        let mut out: Option<Interval> = None;
        for (_, (iv, _)) in std::mem::take(&mut self.pending) {
            match &mut out {
                None => out = Some(iv),
                Some(o) => o.merge(&iv),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::Recorder;

    fn iv(start: u64, end: u64, committed: u64) -> Interval {
        let mut r = Recorder::new(vec![0], start);
        for _ in 0..committed {
            r.committed(0, 100, None, false);
        }
        r.take(end)
    }

    #[test]
    fn ticks_merge_in_order_and_tails_tile_the_run() {
        let mut c = Collector::new(2);
        c.tick(0, 1, iv(0, 10, 1));
        assert!(c.next_full().is_none(), "thread 1 has not reported tick 1");
        c.tick(1, 1, iv(0, 10, 2));
        let one = c.next_full().unwrap();
        assert_eq!(
            (one.start_us, one.end_us, one.total().committed()),
            (0, 10, 3)
        );
        // Thread 0 finishes during bucket 2; thread 1 goes on.
        c.finish(0, iv(10, 14, 4));
        assert!(c.next_full().is_none());
        c.tick(1, 2, iv(10, 20, 5));
        let two = c.next_full().unwrap();
        assert_eq!(
            (two.start_us, two.end_us, two.total().committed()),
            (10, 20, 9)
        );
        c.tick(1, 3, iv(20, 30, 1));
        let three = c.next_full().unwrap();
        assert_eq!(three.total().committed(), 1);
        c.finish(1, iv(30, 33, 7));
        assert!(c.next_full().is_none());
        assert!(c.all_done());
        let last = c.final_partial().unwrap();
        assert_eq!(
            (last.start_us, last.end_us, last.total().committed()),
            (30, 33, 7)
        );
    }

    #[test]
    fn without_ticks_the_tails_make_one_interval() {
        let mut c = Collector::new(3);
        c.finish(2, iv(0, 50, 1));
        c.finish(0, iv(0, 40, 1));
        assert!(c.next_full().is_none());
        c.finish(1, iv(0, 45, 1));
        assert!(c.next_full().is_none());
        let all = c.final_partial().unwrap();
        assert_eq!(
            (all.start_us, all.end_us, all.total().committed()),
            (0, 50, 3)
        );
    }
}
