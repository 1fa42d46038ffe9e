//! The progress line printed every `-P` seconds: pgbench 18's `printProgressReport()` format,
//! then stampede's p99.

use std::fmt::Write as _;

use measure::Interval;

use super::ms;
use crate::RunConfig;

/// Which optional parts a progress line has; from the run's configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgressStyle {
    /// `-R` given: print the schedule lag.
    pub rate_limited: bool,
    /// `-L` given: with `-R`, print skipped transactions.
    pub latency_limited: bool,
    /// `--max-tries`: retries are printed unless it is 1.
    pub max_tries: u32,
    /// pgbench's line and nothing else (`stampede pgbench`): no p99.
    pub pgbench_only: bool,
    /// pgbench's `--progress-timestamp`: the Unix time of the measured start, in seconds; the
    /// line then says the time of day (`%.3f s`) instead of the time since the start.
    pub epoch_start_s: Option<f64>,
}

impl From<&RunConfig> for ProgressStyle {
    fn from(c: &RunConfig) -> Self {
        ProgressStyle {
            rate_limited: c.rate_tps.is_some(),
            latency_limited: c.latency_limit_ms.is_some(),
            max_tries: c.max_tries,
            pgbench_only: false,
            epoch_start_s: None,
        }
    }
}

/// One progress line (no trailing newline), pgbench 18's `printProgressReport()` format followed
/// by stampede's p99, at the end so parsers of pgbench's prefix keep working:
///
/// `progress: 5.0 s, 1234.5 tps, lat 3.240 ms stddev 1.101, 0 failed, p99 7.423 ms`
///
/// with `, lag X ms` under `-R`, then `, N skipped` with `-L`, then `, N retried, N retries` when
/// max tries is not 1, as pgbench orders them. `elapsed_s` is the time since the measured start;
/// tps is over the interval's own length.
pub fn render_progress(interval: &Interval, elapsed_s: f64, style: &ProgressStyle) -> String {
    let t = interval.total();
    let cnt = t.committed();
    let run = interval.duration_s();
    let tps = if run > 0.0 { cnt as f64 / run } else { 0.0 };
    // pgbench prints zeros for latency, stddev and lag when nothing committed.
    let (lat, stddev, lag) = if cnt > 0 {
        (
            ms(t.latency.mean_us()),
            ms(t.latency.stddev_us()),
            ms(t.lag.mean_us()),
        )
    } else {
        (0.0, 0.0, 0.0)
    };
    let when = match style.epoch_start_s {
        Some(e) => format!("{:.3} s", e + elapsed_s),
        None => format!("{elapsed_s:.1} s"),
    };
    // pgbench 18 counts serialization and deadlock failures only (an aborted client's
    // transaction is not counted); stampede counts every failure.
    let failed = if style.pgbench_only {
        t.failures_of(measure::FailureKind::Serialization)
            + t.failures_of(measure::FailureKind::Deadlock)
    } else {
        t.failed()
    };
    let mut s = format!(
        "progress: {when}, {tps:.1} tps, lat {lat:.3} ms stddev {stddev:.3}, {failed} failed"
    );
    if style.rate_limited {
        let _ = write!(s, ", lag {lag:.3} ms");
        if style.latency_limited {
            let _ = write!(s, ", {} skipped", t.skipped);
        }
    }
    if style.max_tries != 1 {
        let _ = write!(s, ", {} retried, {} retries", t.retried, t.retries);
    }
    if !style.pgbench_only {
        let _ = write!(
            s,
            ", p99 {:.3} ms",
            ms(t.latency.percentile_us(99.0) as f64)
        );
    }
    s
}
