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

mod html;
pub mod stats;
mod text;

use std::collections::{BTreeMap, BTreeSet};

use measure::{Interval, ServerMetrics};

use crate::model::RunResult;
use stats::{bootstrap, Estimate, Statistic};

pub use html::render_html;
pub use text::render_text;

/// Runs with fewer usable intervals than this are not tested (a bootstrap of two samples says
/// nothing).
pub const MIN_SAMPLES: usize = 3;

/// Smallest change in average active sessions that counts. Activity is sampled once a second,
/// so a short run holds a few samples of small counts; a change of less than half a session on
/// average is within their noise and not something to act on.
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

fn describe_workload(r: &RunResult) -> String {
    let types: Vec<String> = r
        .config
        .txn_types
        .iter()
        .map(|t| format!("{}@{}", t.name, t.weight))
        .collect();
    format!("{} [{}]", r.config.workload, types.join(", "))
}

/// `Err` with what differs when the runs are not of the same workload (the workload name, or
/// the transaction types and their statements). Weights may differ: a mix is still the same
/// workload, and the difference is listed among the differences.
pub fn check_comparable(runs: &[Input<'_>]) -> Result<(), String> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let key = |r: &RunResult| {
        (
            r.config.workload.clone(),
            r.config
                .txn_types
                .iter()
                .map(|t| (t.name.clone(), t.statements.clone()))
                .collect::<Vec<_>>(),
        )
    };
    let k0 = key(first.run);
    let odd: Vec<String> = runs
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, x)| key(x.run) != k0)
        .map(|(i, x)| format!("{} ({}) ran {}", label(i), x.name, describe_workload(x.run)))
        .collect();
    if odd.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "these runs are of different workloads, so their numbers do not measure the same \
             thing: A ({}) ran {}; {}",
            first.name,
            describe_workload(first.run),
            odd.join("; ")
        ))
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
    /// Whole-run relative change `B / A - 1` (`None` when A is 0 or a value is missing).
    pub change: Option<f64>,
    pub verdict: Verdict,
    /// `Some(true)` when the difference is an improvement, `Some(false)` a regression, `None`
    /// when there is no difference or no direction is better.
    pub good: Option<bool>,
    pub estimate: Option<Estimate>,
    /// The verdict in words: "B is 2.29x faster (95% CI 2.10-2.45x)".
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
}

/// The intervals a verdict is computed from: full-length ones starting after the ramp-up.
pub fn usable_intervals(r: &RunResult, warmup_s: f64) -> Vec<&Interval> {
    let full = r
        .intervals
        .iter()
        .map(|i| i.end_us.saturating_sub(i.start_us))
        .max()
        .unwrap_or(0);
    let warm_us = (warmup_s.max(0.0) * 1e6) as u64;
    r.intervals
        .iter()
        .filter(|i| {
            let d = i.end_us.saturating_sub(i.start_us);
            d > 0 && 2 * d >= full && i.start_us >= warm_us
        })
        .collect()
}

/// Reads a whole-run value from a run.
type WholeFn<'a> = Box<dyn Fn(&RunResult) -> Option<f64> + 'a>;
/// Reads per-interval samples from a run (`None`: not measured in it).
type SamplesFn<'a> = Box<dyn Fn(&RunResult) -> Option<Vec<f64>> + 'a>;

/// A metric: how to read the whole-run value and the per-interval samples from a run.
struct Metric<'a> {
    name: String,
    unit: &'a str,
    group: Group,
    better: Better,
    words: Words,
    statistic: Statistic,
    /// Changes smaller than this in absolute terms never count (e.g. 0.05 active sessions).
    min_abs: f64,
    whole: WholeFn<'a>,
    samples: SamplesFn<'a>,
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

fn latency_metric<'a>(
    name: &str,
    warmup_s: f64,
    f: impl Fn(&measure::Histogram) -> f64 + Copy + 'a,
) -> Metric<'a> {
    Metric {
        name: name.to_string(),
        unit: "ms",
        group: Group::Client,
        better: Better::Lower,
        words: Words::Level,
        statistic: Statistic::Median,
        min_abs: 0.0,
        whole: Box::new(move |r| {
            let t = r.total.total();
            (t.committed() > 0).then(|| f(&t.latency))
        }),
        samples: Box::new(move |r| {
            Some(
                usable_intervals(r, warmup_s)
                    .iter()
                    .map(|i| i.total())
                    .filter(|t| t.committed() > 0)
                    .map(|t| f(&t.latency))
                    .collect(),
            )
        }),
    }
}

/// Per-second rate of counter `key` between consecutive counter samples after the ramp-up and
/// inside the window, times `scale`.
fn counter_rates(m: &ServerMetrics, key: &str, scale: f64, warmup_s: f64) -> Vec<f64> {
    let half = (m.counter_interval_ms / 2) as i64;
    let from = (warmup_s * 1000.0) as i64 - half;
    m.counters
        .windows(2)
        .filter(|w| w[0].t_ms >= from && w[1].t_ms <= m.window_end_ms + half)
        .filter_map(|w| {
            let a = w[0].values.get(key)?;
            let b = w[1].values.get(key)?;
            let dt = (w[1].t_ms - w[0].t_ms) as f64 / 1000.0;
            (dt > 0.0).then(|| (b - a).max(0.0) / dt * scale)
        })
        .collect()
}

fn hit_ratios(m: &ServerMetrics, warmup_s: f64) -> Vec<f64> {
    let hits = counter_rates(m, "database.blks_hit", 1.0, warmup_s);
    let reads = counter_rates(m, "database.blks_read", 1.0, warmup_s);
    hits.iter()
        .zip(&reads)
        .filter(|(h, r)| **h + **r > 0.0)
        .map(|(h, r)| 100.0 * h / (h + r))
        .collect()
}

fn window_s(m: &ServerMetrics) -> f64 {
    (m.window_end_ms - m.window_start_ms).max(0) as f64 / 1000.0
}

fn activity_after_warmup(
    m: &ServerMetrics,
    warmup_s: f64,
) -> impl Iterator<Item = &measure::server::ActivitySample> {
    let from = (warmup_s * 1000.0) as i64;
    m.activity
        .iter()
        .filter(move |s| s.t_ms >= from && s.t_ms <= m.window_end_ms)
}

/// Wait events worth a row: the top 5 of each observed run, most load first, at most 8.
fn wait_events(runs: &[Input<'_>]) -> Vec<String> {
    let mut best: BTreeMap<String, f64> = BTreeMap::new();
    for x in runs {
        if let Some(m) = &x.run.server_metrics {
            for w in m.waits.iter().take(5) {
                let e = best.entry(w.event.clone()).or_default();
                *e = e.max(w.aas);
            }
        }
    }
    let mut v: Vec<(String, f64)> = best.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().take(8).map(|(e, _)| e).collect()
}

fn metrics<'a>(runs: &[Input<'_>], o: &Options) -> Vec<Metric<'a>> {
    let w = o.warmup_s;
    let mut v = vec![Metric {
        name: "throughput".into(),
        unit: "tps",
        group: Group::Client,
        better: Better::Higher,
        words: Words::Speed,
        statistic: Statistic::Mean,
        min_abs: 0.0,
        whole: Box::new(|r| Some(r.tps())),
        samples: Box::new(move |r| {
            Some(
                usable_intervals(r, w)
                    .iter()
                    .map(|i| i.total().committed() as f64 / i.duration_s())
                    .collect(),
            )
        }),
    }];
    v.push(latency_metric("latency average", w, |h| ms(h.mean_us())));
    for (name, p) in [
        ("latency p50", 50.0),
        ("latency p90", 90.0),
        ("latency p99", 99.0),
        ("latency p99.9", 99.9),
    ] {
        v.push(latency_metric(name, w, move |h| {
            ms(h.percentile_us(p) as f64)
        }));
    }
    v.push(latency_metric("latency max", w, |h| ms(h.max_us() as f64)));
    type Count = fn(&measure::TxnStats) -> u64;
    for (name, count) in [
        ("failed", (|t: &measure::TxnStats| t.failed()) as Count),
        ("retried", |t: &measure::TxnStats| t.retried),
    ] {
        let share = move |t: &measure::TxnStats| {
            let n = t.scheduled();
            (n > 0).then(|| 100.0 * count(t) as f64 / n as f64)
        };
        v.push(Metric {
            name: name.into(),
            unit: "% of txns",
            group: Group::Client,
            better: Better::Lower,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: 0.01,
            whole: Box::new(move |r| share(&r.total.total()).or(Some(0.0))),
            samples: Box::new(move |r| {
                Some(
                    usable_intervals(r, w)
                        .iter()
                        .filter_map(|i| share(&i.total()))
                        .collect(),
                )
            }),
        });
    }
    // Server metrics: rows appear when at least the baseline and one other run were observed.
    let observed = runs
        .iter()
        .filter(|x| x.run.server_metrics.is_some())
        .count();
    if observed < 2 || runs[0].run.server_metrics.is_none() {
        return v;
    }
    for (name, unit, key, scale, better) in [
        (
            "server commits",
            "/s",
            "database.xact_commit",
            1.0,
            Better::Higher,
        ),
        (
            "WAL written",
            "MiB/s",
            "wal.wal_bytes",
            1.0 / (1024.0 * 1024.0),
            Better::Neither,
        ),
    ] {
        v.push(Metric {
            name: name.into(),
            unit,
            group: Group::Server,
            better,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: 0.0,
            whole: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                let s = window_s(m);
                (s > 0.0).then_some(())?;
                Some(m.delta(key)? / s * scale)
            }),
            samples: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                m.delta(key)?;
                Some(counter_rates(m, key, scale, w))
            }),
        });
    }
    v.push(Metric {
        name: "buffer hit ratio".into(),
        unit: "%",
        group: Group::Server,
        better: Better::Higher,
        words: Words::Level,
        statistic: Statistic::Median,
        min_abs: 0.0,
        whole: Box::new(|r| {
            let m = r.server_metrics.as_ref()?;
            crate::observed::hit_pct(
                m.delta("database.blks_hit")?,
                m.delta("database.blks_read")?,
            )
        }),
        samples: Box::new(move |r| Some(hit_ratios(r.server_metrics.as_ref()?, w))),
    });
    v.push(Metric {
        name: "active sessions".into(),
        unit: "AAS",
        group: Group::Server,
        better: Better::Neither,
        words: Words::Level,
        statistic: Statistic::Mean,
        min_abs: MIN_AAS,
        whole: Box::new(|r| Some(r.server_metrics.as_ref()?.average_active())),
        samples: Box::new(move |r| {
            Some(
                activity_after_warmup(r.server_metrics.as_ref()?, w)
                    .map(|s| f64::from(s.active))
                    .collect(),
            )
        }),
    });
    for event in wait_events(runs) {
        let (e1, e2) = (event.clone(), event.clone());
        v.push(Metric {
            name: event,
            unit: "AAS",
            group: Group::Waits,
            better: Better::Lower,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: MIN_AAS,
            whole: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                Some(
                    m.waits
                        .iter()
                        .find(|x| x.event == e1)
                        .map_or(0.0, |x| x.aas),
                )
            }),
            samples: Box::new(move |r| {
                Some(
                    activity_after_warmup(r.server_metrics.as_ref()?, w)
                        .map(|s| f64::from(s.waits.get(&e2).copied().unwrap_or(0)))
                        .collect(),
                )
            }),
        });
    }
    v
}

/// A ratio (or its inverse) in words: `2.29x` from 1.5x on, else a percentage.
fn ratio_words(r: f64, ci: (f64, f64), up: &str, down: &str, conf: f64) -> String {
    let c = (conf * 100.0).round();
    if r >= 1.0 {
        if r >= 1.5 {
            format!("{r:.2}x {up} ({c}% CI {:.2}-{:.2}x)", ci.0, ci.1)
        } else {
            format!(
                "{:.1}% {up} ({c}% CI {:.1}-{:.1}%)",
                (r - 1.0) * 100.0,
                (ci.0 - 1.0) * 100.0,
                (ci.1 - 1.0) * 100.0
            )
        }
    } else if 1.0 / r >= 1.5 {
        format!(
            "{:.2}x {down} ({c}% CI {:.2}-{:.2}x)",
            1.0 / r,
            1.0 / ci.1,
            1.0 / ci.0
        )
    } else {
        format!(
            "{:.1}% {down} ({c}% CI {:.1}-{:.1}%)",
            (1.0 - r) * 100.0,
            (1.0 - ci.1) * 100.0,
            (1.0 - ci.0) * 100.0
        )
    }
}

fn signed_pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn p_words(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

fn judge(
    m: &Metric<'_>,
    a: (Option<f64>, Option<Vec<f64>>),
    b: (Option<f64>, Option<Vec<f64>>),
    b_label: &str,
    o: &Options,
    seed: u64,
) -> Judgement {
    let change = match (a.0, b.0) {
        (Some(x), Some(y)) if x > 0.0 => Some(y / x - 1.0),
        _ => None,
    };
    let untested = |text: String| Judgement {
        change,
        verdict: Verdict::Untested,
        good: None,
        estimate: None,
        text,
    };
    let (Some(sa), Some(sb)) = (a.1, b.1) else {
        return untested("not measured in both runs".into());
    };
    if sa.len() < MIN_SAMPLES || sb.len() < MIN_SAMPLES {
        return untested(format!(
            "too few intervals to judge ({} and {}; needs {MIN_SAMPLES} each after the first {} s)",
            sa.len(),
            sb.len(),
            o.warmup_s
        ));
    }
    if sa.iter().chain(&sb).all(|x| *x == 0.0) {
        return Judgement {
            change,
            verdict: Verdict::NoDifference,
            good: None,
            estimate: None,
            text: "none in either run".into(),
        };
    }
    let e = bootstrap(&sa, &sb, m.statistic, o.resamples, o.confidence, seed);
    let rel = e.ratio.map_or(f64::INFINITY, |r| r - 1.0);
    let significant = e.ci_excludes_zero() && e.p_value < o.alpha;
    let large = rel.abs() >= o.min_effect && (e.b - e.a).abs() >= m.min_abs;
    let (up, down) = match m.words {
        Words::Speed => ("faster", "slower"),
        Words::Level => ("higher", "lower"),
    };
    let c = (o.confidence * 100.0).round();
    let verdict = if significant && large {
        if e.b > e.a {
            Verdict::Higher
        } else {
            Verdict::Lower
        }
    } else {
        Verdict::NoDifference
    };
    let text = match verdict {
        Verdict::Higher | Verdict::Lower => {
            let body = match (e.ratio, e.ratio_ci) {
                (Some(r), Some(ci)) if r > 0.0 && ci.0 > 0.0 => {
                    ratio_words(r, ci, up, down, o.confidence)
                }
                _ => format!(
                    "{} {} {} ({c}% CI {}-{})",
                    num((e.b - e.a).abs()),
                    m.unit,
                    if e.b > e.a { up } else { down },
                    num(e.diff_ci.0.abs().min(e.diff_ci.1.abs())),
                    num(e.diff_ci.0.abs().max(e.diff_ci.1.abs()))
                ),
            };
            format!("{b_label} is {body}, {}", p_words(e.p_value))
        }
        _ => {
            let detail = match (e.ratio, e.ratio_ci) {
                (Some(r), Some(ci)) => format!(
                    "{}, {c}% CI {} to {}",
                    signed_pct(r - 1.0),
                    signed_pct(ci.0 - 1.0),
                    signed_pct(ci.1 - 1.0)
                ),
                _ => format!(
                    "{:+} {}, {c}% CI {} to {}",
                    num(e.b - e.a),
                    m.unit,
                    num(e.diff_ci.0),
                    num(e.diff_ci.1)
                ),
            };
            let why = if significant {
                format!("; under the {:.0}% that counts", o.min_effect * 100.0)
            } else {
                String::new()
            };
            format!("no difference beyond noise ({detail}{why})")
        }
    };
    let good = match (verdict, m.better) {
        (Verdict::Higher, Better::Higher) | (Verdict::Lower, Better::Lower) => Some(true),
        (Verdict::Higher, Better::Lower) | (Verdict::Lower, Better::Higher) => Some(false),
        _ => None,
    };
    Judgement {
        change,
        verdict,
        good,
        estimate: Some(e),
        text,
    }
}

fn one_run_summary(r: &RunResult) -> String {
    let c = &r.config;
    let stop = match (c.duration_s, c.transactions_per_client) {
        (Some(t), _) => format!("{t} s"),
        (None, Some(n)) => format!("{n} txns/client"),
        _ => "-".into(),
    };
    let version = r
        .environment
        .server
        .version
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string();
    format!(
        "{}, {} clients, {} threads, {stop}, -M {}, scale {}, PostgreSQL {version}, {}",
        c.workload, c.clients, c.threads, c.query_mode, c.scale, r.started_at
    )
}

/// Parameters and settings that differ between the runs.
fn differences(runs: &[Input<'_>]) -> Vec<Difference> {
    let mut per_run: Vec<BTreeMap<String, String>> = Vec::new();
    for x in runs {
        let r = x.run;
        let c = &r.config;
        let mut m = BTreeMap::new();
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        m.insert("clients (-c)".into(), c.clients.to_string());
        m.insert("threads (-j)".into(), c.threads.to_string());
        m.insert(
            "duration (-T)".into(),
            opt(c.duration_s.map(|d| format!("{d} s"))),
        );
        m.insert(
            "transactions (-t)".into(),
            opt(c.transactions_per_client.map(|t| t.to_string())),
        );
        m.insert(
            "rate (-R)".into(),
            opt(c.rate_tps.map(|t| format!("{t} tps"))),
        );
        m.insert("query mode (-M)".into(), c.query_mode.clone());
        m.insert("scale (-s)".into(), c.scale.to_string());
        m.insert("max tries".into(), c.max_tries.to_string());
        m.insert("connect per txn (-C)".into(), c.connect_per_txn.to_string());
        m.insert(
            "script weights".into(),
            c.txn_types
                .iter()
                .map(|t| t.weight.to_string())
                .collect::<Vec<_>>()
                .join("/"),
        );
        m.insert(
            "server version".into(),
            r.environment.server.version.clone(),
        );
        m.insert("target".into(), r.target.conninfo.clone());
        m.insert("client host".into(), r.environment.client.hostname.clone());
        for (k, v) in &r.environment.server.settings {
            m.insert(k.clone(), v.clone());
        }
        if let Some(e) = &r.target.embedded {
            for (k, v) in &e.settings {
                // `--set` settings of the embedded server; SHOW's values win where both exist.
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        m.insert(
            "observed".into(),
            if r.server_metrics.is_some() {
                "yes"
            } else {
                "no"
            }
            .into(),
        );
        per_run.push(m);
    }
    let keys: BTreeSet<&String> = per_run.iter().flat_map(|m| m.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        // Embedded servers live in fresh temporary directories: their addresses always differ.
        if (k == "target" || k == "unix_socket_directories")
            && runs.iter().all(|x| x.run.target.embedded.is_some())
        {
            continue;
        }
        let values: Vec<String> = per_run
            .iter()
            .map(|m| m.get(k).cloned().unwrap_or_else(|| "-".into()))
            .collect();
        if values.iter().any(|v| *v != values[0]) {
            out.push(Difference {
                name: k.clone(),
                values,
            });
        }
    }
    out
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
