//! Comparing runs: each metric side by side, the change, and a verdict that tells a real
//! difference from the noise between two runs of the same thing.
//!
//! Owns [`check_comparable`] (runs of different workloads are refused unless the caller forces
//! it), [`compare`] (plain functions over [`RunResult`]s: no I/O, no clock), the text table
//! ([`render_text`]) and the HTML page with the runs overlaid ([`render_html`]). The first run is
//! the baseline ("A"); every other run is compared with it.
//!
//! ## How a verdict is reached
//! A whole-run number is one number per run: it says nothing about how much it would move if the
//! run were repeated. So each metric is also read as a series of per-interval samples (the
//! engine ticks at least every second, so every result has them): tps, failure and retry shares,
//! and the latency average/percentiles/max of each interval; when both runs were observed, the
//! server's commits/s, WAL bytes/s and buffer hit ratio between counter samples, and the active
//! sessions in each wait event per activity sample. Then (see `stats`):
//! 1. the **first second is ignored** as ramp-up ([`Options::warmup_s`]): it holds each
//!    backend's first parse and plan of every prepared statement, cold catalog and relation
//!    caches, the observer's first snapshot and, after a load, the burst of full-page writes
//!    that follows the checkpoint; the partial last interval is dropped too (a rate over a
//!    sliver of time is noise);
//! 2. a **circular block bootstrap** gives a 95% confidence interval of the difference and the
//!    ratio B/A of the mean (rates) or the median (latencies) of the samples, seeded and so
//!    deterministic ([`Options::seed`]);
//! 3. a **Mann-Whitney U** test gives a second, rank-based opinion;
//! 4. a difference **counts only when both** say so (the interval excludes 0 and p < 0.05)
//!    **and the change is at least [`Options::min_effect`]** (5% by default).
//!
//! Why the minimum effect: two runs of the same command on a busy 2-core machine differ by a few
//! percent for reasons no sample inside either run can see (what else ran then, where the
//! checkpoint fell, the state of the disk cache), and per-second samples are many and
//! autocorrelated, so a purely statistical test calls small run-to-run drifts "significant".
//! Requiring a practically relevant size keeps "no difference beyond noise" reliable for
//! repeated runs, while a change that matters (seed 002's 578 -> 1,300 tps, 2.2x) is far past
//! it. The table always shows the interval, so a reader sees how precise the estimate is.

//!
//! Layout: this file holds the result types, [`compare`] (which runs every metric through the
//! judge) and the choice of usable intervals; `runs` says whether runs are comparable and what
//! differs between them, `metrics` defines each metric (how to read its whole-run value and its
//! samples from a run), `judge` turns two runs' samples into a verdict and its words, `stats` is
//! the statistics, `text` and `html` the renderings. `statements` compares replays per
//! statement fingerprint (their own rule of noise, from histograms; only replays have it);
//! `single` the figures a family measured once per run (TPC-H's per-query times: a fixed
//! threshold, since one number per run has no distribution).

mod html;
mod judge;
mod metrics;
mod runs;
pub mod single;
pub mod statements;
pub mod stats;
mod text;

use measure::Interval;

use crate::model::RunResult;
use judge::{judge, num, times};
use metrics::metrics;
use runs::{differences, one_run_summary};
use stats::Estimate;

pub use html::render_html;
pub use runs::check_comparable;
pub use text::render_text;

/// Runs with fewer usable intervals than this are not tested (a bootstrap of two samples says
/// nothing).
pub const MIN_SAMPLES: usize = 3;

/// Smallest change in average active sessions that counts. A change of less than half a
/// session on average is not something to act on: a handful of sessions sampled a few times a
/// second over a short run gives small, noisy counts.
pub const MIN_AAS: f64 = 0.5;

/// How to judge.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Seed of the bootstrap's random stream.
    pub seed: u64,
    /// Bootstrap resamples per metric.
    pub resamples: usize,
    /// Confidence of the intervals (0.95).
    pub confidence: f64,
    /// Significance level of the rank test (0.05).
    pub alpha: f64,
    /// Smallest relative change that counts as a difference (0.05 = 5%).
    pub min_effect: f64,
    /// Seconds at the start of each run left out as ramp-up.
    pub warmup_s: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 1,
            resamples: 2000,
            confidence: 0.95,
            alpha: 0.05,
            min_effect: 0.05,
            warmup_s: 1.0,
        }
    }
}

/// A run to compare: a short name for it (the file name) and the result.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub name: &'a str,
    pub run: &'a RunResult,
}

/// Run labels: A, B, ... Z, then R27, R28, ...
pub fn label(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

/// Which way is good.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    /// Neither (WAL volume, active sessions): the change is reported, not graded.
    Neither,
}

/// The words for a change up and down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Words {
    /// "faster" / "slower" (throughput).
    Speed,
    /// "higher" / "lower".
    Level,
}

/// Client-side (the engine's measurements) or server-side (the observer's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Client,
    Server,
    Waits,
}

/// What the test found for one metric, B against A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Higher beyond noise and by at least the minimum effect.
    Higher,
    Lower,
    NoDifference,
    /// Too few samples, or no samples in one of the runs.
    Untested,
}

/// One metric of one run judged against the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Whole-run ratio `B / A` (`None` when A is 0 or a value is missing).
    pub ratio: Option<f64>,
    pub verdict: Verdict,
    /// `Some(true)` when the difference is an improvement, `Some(false)` a regression, `None`
    /// when there is no difference or no direction is better.
    pub good: Option<bool>,
    pub estimate: Option<Estimate>,
    /// The verdict in words: "B is faster (95% CI 2.10-2.45x per interval), p<0.001".
    pub text: String,
}

/// One metric across the runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub metric: String,
    pub unit: String,
    pub group: Group,
    pub better: Better,
    /// Whole-run value of each run (`None`: not available in that run).
    pub values: Vec<Option<f64>>,
    /// Against the baseline, for runs 1.. (index 0 of `values` is the baseline).
    pub judgements: Vec<Judgement>,
}

/// A setting or parameter that differs between the runs, with each run's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub name: String,
    pub values: Vec<String>,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Labels (A, B, ...) and names (file names) of the runs, baseline first.
    pub labels: Vec<String>,
    pub names: Vec<String>,
    /// One line per run: workload, clients, duration, start time.
    pub summaries: Vec<String>,
    pub differences: Vec<Difference>,
    pub rows: Vec<Row>,
    /// Usable intervals per run (after ramp-up), and their typical length in seconds.
    pub samples: Vec<usize>,
    pub interval_s: f64,
    pub options: Options,
    /// Runs of different workloads compared anyway.
    pub forced: Option<String>,
    /// Where the server rows come from, for their heading: the baseline's server's views.
    pub server_sources: String,
    /// Replays only: per statement fingerprint, each run against the baseline (empty when the
    /// baseline is not a replay).
    pub statements: Vec<statements::Statements>,
    /// The figures a family measured once per run, each run against the baseline
    /// (`single`: TPC-H's per-query times and metrics); empty for other families.
    pub singles: Vec<single::SingleRow>,
}

/// The intervals a verdict is computed from: full-length ones starting after the ramp-up, the
/// longer of `warmup_s` and the run's own `--warmup` (whose figures, `total`, already leave it
/// out: the samples then match them).
pub fn usable_intervals(r: &RunResult, warmup_s: f64) -> Vec<&Interval> {
    let warmup_s = warmup_s.max(r.warmup.as_ref().map_or(0.0, |w| w.seconds));
    (crate::warmup::measured(&r.intervals, warmup_s).into_iter())
        .map(|(_, i)| i)
        .collect()
}

/// Compare `runs` (the first is the baseline). Call [`check_comparable`] first; `forced` carries
/// its message when the caller compares different workloads anyway.
pub fn compare(runs: &[Input<'_>], o: &Options, forced: Option<String>) -> Comparison {
    let labels: Vec<String> = (0..runs.len()).map(label).collect();
    let mut rows = Vec::new();
    for (mi, m) in metrics(runs, o).into_iter().enumerate() {
        let values: Vec<Option<f64>> = runs.iter().map(|x| (m.whole)(x.run)).collect();
        let base = runs.first().map(|x| ((m.whole)(x.run), (m.samples)(x.run)));
        let Some(base) = base else { continue };
        let judgements = runs
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, x)| {
                let seed = o
                    .seed
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add((mi as u64) << 32 | i as u64);
                judge(
                    &m,
                    base.clone(),
                    ((m.whole)(x.run), (m.samples)(x.run)),
                    &labels[i],
                    o,
                    seed,
                )
            })
            .collect();
        rows.push(Row {
            metric: m.name,
            unit: m.unit.into(),
            group: m.group,
            better: m.better,
            values,
            judgements,
        });
    }
    let interval_s = runs
        .first()
        .and_then(|x| {
            usable_intervals(x.run, o.warmup_s)
                .first()
                .map(|i| i.duration_s())
        })
        .unwrap_or(1.0);
    let per_statement = (runs.iter().enumerate().skip(1))
        .filter_map(|(i, x)| {
            let a = runs.first()?.run;
            statements::between(a, x.run, (&labels[0], &labels[i]), o)
        })
        .collect();
    let singles = single::rows(&runs.iter().map(|x| x.run).collect::<Vec<_>>(), &labels);
    Comparison {
        labels,
        names: runs.iter().map(|x| x.name.to_string()).collect(),
        summaries: runs.iter().map(|x| one_run_summary(x.run)).collect(),
        differences: differences(runs),
        rows,
        samples: runs
            .iter()
            .map(|x| usable_intervals(x.run, o.warmup_s).len())
            .collect(),
        interval_s,
        options: o.clone(),
        forced,
        server_sources: server_sources(runs),
        statements: per_statement,
        singles,
    }
}

/// The views the server rows are read from, by the baseline's server.
fn server_sources(runs: &[Input<'_>]) -> String {
    let mysql = runs
        .first()
        .and_then(|x| x.run.server_metrics.as_ref())
        .is_some_and(|m| m.is_mysql());
    if mysql {
        "SHOW GLOBAL STATUS, PROCESSLIST, performance_schema".into()
    } else {
        "pg_stat_database, pg_stat_wal, pg_stat_activity".into()
    }
}

impl Comparison {
    /// The row of `metric`, if present.
    pub fn row(&self, metric: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.metric == metric)
    }
}

#[cfg(test)]
mod tests;
