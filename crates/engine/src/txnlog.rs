//! `-l`: pgbench's per-thread transaction log (one line per transaction, or with
//! `--aggregate-interval` one line per interval), in pgbench 15's formats.
//!
//! Each engine thread owns one [`TxnLog`] (no lock): a line is formatted into a reused buffer
//! and handed whole to the thread's `BufWriter`, which the thread flushes when its clients are
//! done, including on cancellation, so an interrupted run still leaves complete lines.
//!
//! Per transaction: `client_id transaction_no time script_no time_epoch time_us [schedule_lag]
//! [retries]`; `time` is the latency in microseconds, or `skipped` (`-L`), or `failed`
//! (`serialization` / `deadlock` with `--failures-detailed`). `schedule_lag` only with `-R`,
//! `retries` only with `--max-tries` other than 1. Transactions failed by another error abort
//! their client and are not logged (pgbench logs nothing for them either).
//!
//! Aggregated, as the pgbench 15 binary writes it (15.18; its final format, PostgreSQL commit
//! 17a856d: no optional columns, and the pre-release synopsis with `{ failures | ... }` and
//! optional groups no longer applies): `interval_start num_transactions sum_latency
//! sum_latency_2 min_latency max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried
//! retries serialization_failures deadlock_failures`, a column that the options make
//! meaningless being 0 (pgbench 15 writes the failure columns as 0 unless
//! `--failures-detailed`). Intervals start at the measured start and
//! follow each other every `N` seconds; an interval with nothing in it is still written when a
//! later one has something (as pgbench). Unlike pgbench (which drops it), the last, partial
//! interval is written too, so the lines add up to the run's counts.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use measure::FailureKind;
use workload::Rng;

/// `-l` and its options, validated by the caller.
#[derive(Clone, Debug)]
pub struct LogSpec {
    /// One file per engine thread, in thread order (engine threads are `threads` capped at
    /// `clients`; there must be a path for each). The caller decides the names.
    pub paths: Vec<PathBuf>,
    /// `--aggregate-interval`: one line per interval of this length instead of one per
    /// transaction.
    pub aggregate: Option<Duration>,
    /// `--sampling-rate` (0 < r <= 1): log only this fraction of the transactions, drawn from
    /// pgbench's per-thread sampling stream (not the clients' streams).
    pub sampling_rate: Option<f64>,
    /// `--failures-detailed`: failures by kind.
    pub failures_detailed: bool,
}

/// What happened to a logged transaction.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Logged {
    Committed { latency: u64, lag: u64 },
    Skipped,
    Failed(FailureKind),
}

/// Which optional fields the lines carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    /// `-R`: schedule lag.
    pub lag: bool,
    /// `--max-tries` != 1.
    pub retries: bool,
    pub detailed: bool,
}

#[derive(Default)]
struct Simple {
    n: u64,
    sum: u64,
    sum2: u128,
    min: u64,
    max: u64,
}

impl Simple {
    #[inline]
    fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        if self.n == 0 || v > self.max {
            self.max = v;
        }
        self.n += 1;
        self.sum += v;
        self.sum2 += (v as u128) * (v as u128);
    }
}

#[derive(Default)]
struct Agg {
    /// Index of the current interval (since the measured start).
    k: u64,
    latency: Simple,
    lag: Simple,
    serialization: u64,
    deadlock: u64,
    skipped: u64,
    retried: u64,
    retries: u64,
}

impl Agg {
    fn is_empty(&self) -> bool {
        self.latency.n == 0
            && self.serialization == 0
            && self.deadlock == 0
            && self.skipped == 0
            && self.retried == 0
    }
}

/// One thread's log.
pub(crate) struct TxnLog {
    out: BufWriter<File>,
    line: Vec<u8>,
    fields: Fields,
    sample: Option<(f64, Rng)>,
    /// Interval length in microseconds, and the running interval.
    agg: Option<(u64, Agg)>,
    /// Wall clock (microseconds since the Unix epoch) at the measured start.
    epoch_us: u64,
}

impl TxnLog {
    pub(crate) fn new(file: File, spec: &LogSpec, fields: Fields, sample_rng: Rng) -> TxnLog {
        TxnLog {
            out: BufWriter::with_capacity(64 * 1024, file),
            line: Vec::with_capacity(256),
            fields,
            sample: spec.sampling_rate.map(|r| (r, sample_rng)),
            agg: spec
                .aggregate
                .map(|d| ((d.as_micros() as u64).max(1), Agg::default())),
            epoch_us: 0,
        }
    }

    /// The wall clock at the measured start (times in [`TxnLog::txn`] are relative to it).
    pub(crate) fn set_epoch(&mut self, epoch_us: u64) {
        self.epoch_us = epoch_us;
    }

    /// One transaction of client `client`, its `cnt`-th (from 1), of type `script`, ended at
    /// `now_us` (since the measured start) after `retries` retries.
    pub(crate) fn txn(
        &mut self,
        client: u32,
        cnt: u64,
        script: usize,
        now_us: u64,
        what: Logged,
        retries: u32,
    ) {
        if let Some((rate, rng)) = &mut self.sample {
            if rng.double() > *rate {
                return;
            }
        }
        if self.agg.is_some() {
            self.advance(now_us);
            let (_, a) = self.agg.as_mut().expect("aggregating");
            if retries > 0 {
                a.retried += 1;
                a.retries += retries as u64;
            }
            match what {
                Logged::Committed { latency, lag } => {
                    a.latency.add(latency);
                    if self.fields.lag {
                        a.lag.add(lag);
                    }
                }
                Logged::Skipped => a.skipped += 1,
                Logged::Failed(FailureKind::Serialization) => a.serialization += 1,
                Logged::Failed(FailureKind::Deadlock) => a.deadlock += 1,
                Logged::Failed(FailureKind::Other) => {}
            }
            return;
        }
        let f = self.fields;
        let at = self.epoch_us + now_us;
        let l = &mut self.line;
        l.clear();
        let _ = write!(l, "{client} {cnt} ");
        let lag = match what {
            Logged::Committed { latency, lag } => {
                let _ = write!(l, "{latency}");
                lag
            }
            Logged::Skipped => {
                l.extend_from_slice(b"skipped");
                0
            }
            Logged::Failed(kind) => {
                l.extend_from_slice(match (f.detailed, kind) {
                    (true, FailureKind::Serialization) => b"serialization".as_slice(),
                    (true, FailureKind::Deadlock) => b"deadlock",
                    _ => b"failed",
                });
                0
            }
        };
        let _ = write!(l, " {script} {} {}", at / 1_000_000, at % 1_000_000);
        if f.lag {
            let _ = write!(l, " {lag}");
        }
        if f.retries {
            let _ = write!(l, " {retries}");
        }
        l.push(b'\n');
        // Write errors are ignored, as pgbench's fprintf.
        let _ = self.out.write_all(l);
    }

    /// Write every interval that ended at or before `now_us`.
    fn advance(&mut self, now_us: u64) {
        let Some((p, a)) = &mut self.agg else { return };
        let p = *p;
        while (a.k + 1) * p <= now_us {
            let k = a.k;
            Self::write_agg(
                &mut self.out,
                &mut self.line,
                self.fields,
                self.epoch_us,
                p,
                a,
            );
            *a = Agg {
                k: k + 1,
                ..Agg::default()
            };
        }
    }

    fn write_agg(
        out: &mut BufWriter<File>,
        l: &mut Vec<u8>,
        f: Fields,
        epoch: u64,
        p: u64,
        a: &Agg,
    ) {
        l.clear();
        let s = &a.latency;
        let _ = write!(
            l,
            "{} {} {} {} {} {}",
            (epoch + a.k * p) / 1_000_000,
            s.n,
            s.sum,
            s.sum2,
            s.min,
            s.max
        );
        // pgbench 15 writes every column; one that the options make meaningless is 0 (lag
        // without -R, skipped without -L, retries with --max-tries=1, failures without
        // --failures-detailed).
        let g = &a.lag;
        let (ser, dead) = if f.detailed {
            (a.serialization, a.deadlock)
        } else {
            (0, 0)
        };
        let _ = write!(
            l,
            " {} {} {} {} {} {} {} {ser} {dead}",
            g.sum, g.sum2, g.min, g.max, a.skipped, a.retried, a.retries
        );
        l.push(b'\n');
        let _ = out.write_all(l);
    }

    /// The run ended at `end_us`: write the remaining intervals (the last, partial one if it
    /// holds anything) and flush.
    pub(crate) fn finish(&mut self, end_us: u64) {
        self.advance(end_us);
        if let Some((p, a)) = &self.agg {
            if !a.is_empty() {
                Self::write_agg(
                    &mut self.out,
                    &mut self.line,
                    self.fields,
                    self.epoch_us,
                    *p,
                    a,
                );
            }
        }
        let _ = self.out.flush();
    }
}
