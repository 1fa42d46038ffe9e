//! When transactions are due, as data: pure functions of the random streams and the clock value
//! handed in, so they are tested without a server or a runtime.
//!
//! pgbench's `-R` (`CSTATE_PREPARE_THROTTLE`): each *thread* keeps a trigger time; a client that is
//! ready for its next transaction advances the trigger by an exponential delay
//! (`getPoissonRand(&thread->ts_throttle_rs, throttle_delay)`, mean `1e6 * nthreads / rate` us) and
//! takes that slot as its scheduled start. The slots of a thread therefore form one Poisson process
//! of rate `rate / nthreads`, served by whichever of the thread's clients is free — not one process
//! per client (with per-client processes a slow client would queue its own slots while its
//! neighbours idle, and latency under load would differ from pgbench's).
//!
//! With `-L`, a slot that is already more than the limit in the past when drawn is skipped
//! (counted, the trigger advances, the client draws again) — pgbench's skip loop, in which `now`
//! is read once.

use workload::Rng;

/// One thread's `-R` schedule: a trigger advanced by exponential delays.
#[derive(Clone, Debug)]
pub struct Throttle {
    /// Mean delay between two slots of this thread, microseconds.
    delay_us: f64,
    /// The last slot handed out, microseconds since the measured start.
    trigger_us: u64,
    rng: Rng,
}

/// What a client does with the slot it drew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Run the transaction, scheduled at this time (microseconds since the start).
    Run(u64),
    /// Too late already (`-L`): count it skipped and draw again.
    Skip(u64),
}

impl Throttle {
    /// `rate_tps` across the run, `threads` engine threads sharing it equally.
    pub fn new(rate_tps: f64, threads: u32, rng: Rng) -> Throttle {
        Throttle {
            delay_us: 1e6 * threads as f64 / rate_tps,
            trigger_us: 0,
            rng,
        }
    }

    pub fn mean_delay_us(&self) -> f64 {
        self.delay_us
    }

    /// Advance the trigger and return the new slot.
    #[inline]
    pub fn next_slot(&mut self) -> u64 {
        self.trigger_us += self.rng.poisson_delay_us(self.delay_us);
        self.trigger_us
    }

    /// Draw a slot and decide, with `now_us` and the `-L` limit, whether it still runs.
    #[inline]
    pub fn draw(&mut self, now_us: u64, limit_us: Option<u64>) -> Slot {
        let s = self.next_slot();
        match limit_us {
            // pgbench: `throttle_trigger < now - latency_limit`
            Some(l) if s + l < now_us => Slot::Skip(s),
            _ => Slot::Run(s),
        }
    }
}

/// pgbench's `chooseScript`: a weighted choice with its own stream; no draw with one type.
#[inline]
pub fn choose(weights: &[u32], total_weight: u64, rng: &mut Rng) -> usize {
    if weights.len() == 1 {
        return 0;
    }
    let mut w = rng.range(0, total_weight as i64 - 1);
    let mut i = 0;
    loop {
        w -= weights[i] as i64;
        i += 1;
        if w < 0 {
            return i - 1;
        }
    }
}

/// When a client stops starting transactions (pgbench's `-T` / `-t` checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopRule {
    /// `-T`: no transaction starts at or after this time (microseconds since the start), and none
    /// is scheduled after it.
    pub deadline_us: Option<u64>,
    /// `-t`: transactions per client, skipped ones included.
    pub per_client: Option<u64>,
}

impl StopRule {
    #[inline]
    pub fn time_is_up(&self, now_us: u64) -> bool {
        self.deadline_us.is_some_and(|d| now_us >= d)
    }

    #[inline]
    pub fn count_reached(&self, done: u64) -> bool {
        self.per_client.is_some_and(|n| done >= n)
    }

    /// Whether a tick boundary falls inside the run (under -T, none at or after the deadline).
    #[inline]
    pub fn before_end(&self, t_us: u64) -> bool {
        match self.deadline_us {
            Some(d) => t_us < d,
            None => true,
        }
    }

    /// pgbench: a slot after the end of the run is not waited for.
    #[inline]
    pub fn beyond_end(&self, scheduled_us: u64) -> bool {
        self.deadline_us.is_some_and(|d| scheduled_us > d)
    }
}

/// Whether a failed try may be retried (pgbench's `doRetry`): only serialization failures and
/// deadlocks, while tries remain (`max_tries` 0 = unlimited) and, with `-L`, while the time since
/// the scheduled start is within the limit.
#[inline]
pub fn may_retry(
    tries: u32,
    max_tries: u32,
    elapsed_since_scheduled_us: u64,
    limit_us: Option<u64>,
) -> bool {
    if max_tries != 0 && tries >= max_tries {
        return false;
    }
    match limit_us {
        Some(l) => elapsed_since_scheduled_us <= l,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_schedule_has_the_requested_rate() {
        // 1000 tps over 4 threads: each thread's slots are 4 ms apart on average.
        let mut t = Throttle::new(1000.0, 4, Rng::from_seed(11));
        assert_eq!(t.mean_delay_us(), 4000.0);
        let n = 100_000u64;
        let mut last = 0;
        let mut gaps_sq = 0f64;
        for _ in 0..n {
            let s = t.next_slot();
            assert!(s >= last);
            gaps_sq += ((s - last) as f64 - 4000.0).powi(2);
            last = s;
        }
        let mean = last as f64 / n as f64;
        assert!(
            (mean - 4000.0).abs() < 4000.0 * 5.0 / (n as f64).sqrt(),
            "mean gap {mean}"
        );
        // Exponential: the standard deviation equals the mean.
        let sd = (gaps_sq / n as f64).sqrt();
        assert!((sd - 4000.0).abs() < 80.0, "sd {sd}");
    }

    #[test]
    fn poisson_schedule_is_deterministic_for_a_seed() {
        let slots = |seed| {
            let mut t = Throttle::new(500.0, 1, Rng::from_seed(seed));
            (0..50).map(|_| t.next_slot()).collect::<Vec<_>>()
        };
        assert_eq!(slots(3), slots(3));
        assert_ne!(slots(3), slots(4));
    }

    #[test]
    fn slots_older_than_the_limit_are_skipped() {
        // Mean delay 10 us; at now = 1 s with a 1 ms limit, early slots are far too late.
        let mut t = Throttle::new(100_000.0, 1, Rng::from_seed(1));
        let now = 1_000_000;
        let limit = Some(1_000);
        let mut skipped = 0;
        let first_run = loop {
            match t.draw(now, limit) {
                Slot::Skip(s) => {
                    assert!(s + 1_000 < now);
                    skipped += 1;
                }
                Slot::Run(s) => break s,
            }
        };
        assert!(first_run + 1_000 >= now);
        // About (1 s - 1 ms) / 10 us slots were skipped.
        assert!((90_000..110_000).contains(&skipped), "skipped {skipped}");
        // Without a limit nothing is skipped.
        let mut t = Throttle::new(100_000.0, 1, Rng::from_seed(1));
        assert!(matches!(t.draw(now, None), Slot::Run(_)));
    }

    #[test]
    fn weighted_choice_follows_the_weights() {
        let weights = [1, 3, 0, 6];
        let mut rng = Rng::from_seed(8);
        let mut counts = [0u64; 4];
        let n = 100_000;
        for _ in 0..n {
            counts[choose(&weights, 10, &mut rng)] += 1;
        }
        assert_eq!(counts[2], 0, "weight 0 is never chosen");
        for (c, w) in counts.iter().zip(weights) {
            let expected = n as f64 * w as f64 / 10.0;
            assert!((*c as f64 - expected).abs() < 0.01 * n as f64, "{counts:?}");
        }
        // One type: no draw at all (pgbench), the stream is untouched.
        let mut r = Rng::from_seed(8);
        let before = r.clone();
        assert_eq!(choose(&[5], 5, &mut r), 0);
        assert_eq!(r, before);
    }

    #[test]
    fn stop_rules() {
        let t = StopRule {
            deadline_us: Some(10),
            per_client: None,
        };
        assert!(!t.time_is_up(9));
        assert!(t.time_is_up(10));
        assert!(t.beyond_end(11));
        assert!(!t.beyond_end(10));
        assert!(!t.count_reached(u64::MAX));
        let n = StopRule {
            deadline_us: None,
            per_client: Some(3),
        };
        assert!(!n.count_reached(2));
        assert!(n.count_reached(3));
        assert!(!n.time_is_up(u64::MAX));
        assert!(!n.beyond_end(u64::MAX));
    }

    #[test]
    fn retry_rules() {
        assert!(!may_retry(1, 1, 0, None), "default --max-tries=1: no retry");
        assert!(may_retry(1, 3, 0, None));
        assert!(may_retry(2, 3, 0, None));
        assert!(!may_retry(3, 3, 0, None));
        assert!(may_retry(1_000, 0, 0, None), "0 = unlimited");
        assert!(
            !may_retry(1, 0, 2_000, Some(1_000)),
            "-L bounds the time spent on tries"
        );
        assert!(may_retry(1, 0, 1_000, Some(1_000)));
    }
}
