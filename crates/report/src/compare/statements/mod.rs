//! Comparing replays per statement (issue 33, item 5): the fingerprints of two replays
//! (`stampede compare A.json B.json`), or of a replay and the durations its capture recorded
//! (`stampede compare REPLAY.json --against-log`), matched by name, with the ones that got
//! slower or faster beyond noise, their counts, p50/p99 and share of the total statement time,
//! and the fingerprints that newly fail or stopped failing, by SQLSTATE.
//!
//! Owns the per-statement verdicts and the part of a replay's `replay` section that compare
//! reads ([`LogDurations`], written by the replay family, and the per-fingerprint `errors`).
//! Must not touch: the whole-run metrics and their verdicts (`super::judge`), I/O. Runs that
//! are not replays get no per-statement part, so their comparison is unchanged.
//!
//! Where the numbers come from: a replay is one transaction type per fingerprint, so a
//! fingerprint's latency is its type's whole-run histogram (`total.txns[i]`, named by
//! `config.txn_types[i].name`; failed statements are counted apart, not in it). The log's
//! baseline is [`LogDurations`]: per fingerprint, the HDR histogram of the `duration:` the log
//! recorded for the statements that did not fail.
//!
//! ## When a change is beyond noise
//! The per-interval bootstrap of the whole-run metrics cannot be used: most fingerprints run
//! a few times per interval, and the log has no intervals at all. What both sides have is each
//! fingerprint's histogram of every execution. So each quantile (p50, p99) gets a
//! distribution-free confidence interval from order statistics (Conover, "Practical
//! Nonparametric Statistics", 3rd ed. 1999, section 3.2, "confidence interval for a
//! quantile"): with `n` executions, the quantile `p` lies between the executions of ranks
//! `n p - z sqrt(n p (1 - p))` and `n p + z sqrt(n p (1 - p)) + 1` with confidence about `1 -
//! alpha` (normal approximation to the binomial), read off the histogram (0.1% resolution).
//! A quantile of B counts as higher (lower) when
//! 1. both intervals exist: their ranks lie within `1..=n` (so p99 needs a few hundred
//!    executions on each side and p50 a handful; otherwise the quantile is "untested"), that is
//!    the band the counts allow;
//! 2. the two intervals do not overlap (B's lower end above A's upper end, or the reverse), a
//!    stricter test than one interval of the difference: two non-overlapping 95% intervals of
//!    similar width correspond to a test at about the 0.5% level, which matters when a hundred
//!    fingerprints and two quantiles each are judged at once;
//! 3. and the ratio B/A is at least the comparison's minimum effect away from 1 (5% by
//!    default, [`super::Options::min_effect`]), for the reason `super` gives: executions inside
//!    one run are not independent (a checkpoint slows many in a row), so the intervals are too
//!    narrow, and two replays of the same log differ by a few percent for reasons no sample
//!    shows.
//!
//! A fingerprint is "slower" when one of its quantiles is higher and none lower, "faster" the
//! reverse, "changed both ways" when one rose and the other fell. Errors are compared by count
//! per SQLSTATE (or MySQL error number): a code B met that A did not is a new failure; a code A
//! met that B did not stopped failing. Against the log, A's errors are the ones the log recorded
//! (`log_errors`), B's the replay's.

mod view;

use std::collections::BTreeMap;

use measure::Histogram;
use serde::{Deserialize, Serialize};

use super::stats::normal_sf;
use super::{Options, Verdict};
use crate::model::RunResult;

pub use view::{render_html_section, render_log_html, render_text};

/// The workload name of a replay (`config.workload`).
pub const REPLAY: &str = "replay";
/// The key of a replay's family section.
const SECTION: &str = "replay";
/// The code a log writes for an error it does not name (the replay section's `UNNAMED`).
const UNNAMED: &str = "unnamed";

/// One fingerprint's durations as the captured log recorded them (the replay family writes a
/// list of these into its `replay` section as `log_durations`). Statements the log recorded as
/// failed are left out, as the replay's own latency leaves failures out.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LogDurations {
    /// The fingerprint, one of the run's transaction type names.
    pub fingerprint: String,
    pub count: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    /// Exact sum of the durations.
    pub total_us: u64,
    /// Every duration, so a fleet's parts merge exactly and compare can read any quantile.
    pub latency: Histogram,
}

impl LogDurations {
    /// The summary of `latency`.
    pub fn new(fingerprint: String, latency: Histogram) -> LogDurations {
        LogDurations {
            fingerprint,
            count: latency.count(),
            p50_us: latency.percentile_us(50.0),
            p99_us: latency.percentile_us(99.0),
            total_us: u64::try_from(latency.sum_us()).unwrap_or(u64::MAX),
            latency,
        }
    }
}

impl PartialEq for LogDurations {
    fn eq(&self, o: &Self) -> bool {
        (self.fingerprint == o.fingerprint)
            && (self.count, self.p50_us, self.p99_us, self.total_us)
                == (o.count, o.p50_us, o.p99_us, o.total_us)
            && self.latency.encode() == o.latency.encode()
    }
}

/// The part of a replay's section compare reads (serde defaults: results written before a
/// field existed still load).
#[derive(Default, Deserialize)]
struct Section {
    #[serde(default)]
    capture: String,
    #[serde(default)]
    format: String,
    #[serde(default)]
    errors: Vec<Errors>,
    #[serde(default)]
    log_durations: Vec<LogDurations>,
}

#[derive(Default, Deserialize)]
struct Errors {
    fingerprint: String,
    #[serde(default)]
    log_errors: BTreeMap<String, u64>,
    #[serde(default)]
    replay_errors: BTreeMap<String, u64>,
}

fn section(r: &RunResult) -> Section {
    r.sections
        .get(SECTION)
        .and_then(|v| Section::deserialize(v).ok())
        .unwrap_or_default()
}

/// Whether `r` is a replay.
pub fn is_replay(r: &RunResult) -> bool {
    r.config.workload == REPLAY
}

/// One fingerprint on one side.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// Executions without error.
    pub count: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    /// Share of the side's total statement time (0..1).
    pub share: f64,
}

/// What happened to one fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Slower,
    Faster,
    /// One quantile rose, the other fell.
    Both,
    /// No quantile moved beyond noise (or none could be tested).
    Same,
    /// The fingerprint ran only in the baseline, or only in the other run.
    OnlyA,
    OnlyB,
}

/// One fingerprint, B against A.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub fingerprint: String,
    pub a: Option<Side>,
    pub b: Option<Side>,
    pub p50: Verdict,
    pub p99: Verdict,
    pub change: Change,
}

/// A code a fingerprint failed with on one side and not on the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorChange {
    pub fingerprint: String,
    /// SQLSTATE or MySQL error number.
    pub code: String,
    pub a: u64,
    pub b: u64,
}

/// The per-statement comparison of one run with the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Statements {
    /// How the two sides are called ("A", "B"; "log", "replay").
    pub a_label: String,
    pub b_label: String,
    /// Every fingerprint, the changed ones first (most added time first), then the rest by
    /// name.
    pub lines: Vec<Line>,
    /// Codes B met that A did not, and the reverse.
    pub new_errors: Vec<ErrorChange>,
    pub gone_errors: Vec<ErrorChange>,
    pub min_effect: f64,
    pub confidence: f64,
}

impl Statements {
    /// The fingerprints that changed beyond noise.
    pub fn changed(&self) -> impl Iterator<Item = &Line> {
        self.lines
            .iter()
            .filter(|l| matches!(l.change, Change::Slower | Change::Faster | Change::Both))
    }

    pub fn line(&self, fingerprint: &str) -> Option<&Line> {
        self.lines.iter().find(|l| l.fingerprint == fingerprint)
    }
}

/// `z` with `P(Z > z) = tail`, by bisection on the normal tail (monotone; 60 halvings are
/// below f64's resolution).
fn z_of(tail: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 10.0_f64);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if normal_sf(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The order-statistic confidence interval of percentile `p` (0..100) of `h`, as values; `None`
/// when its ranks fall outside the executions (too few of them for this quantile).
pub fn quantile_interval(h: &Histogram, p: f64, confidence: f64) -> Option<(u64, u64)> {
    let n = h.count() as f64;
    if n < 1.0 {
        return None;
    }
    let q = p / 100.0;
    let z = z_of((1.0 - confidence) / 2.0);
    let half = z * (n * q * (1.0 - q)).sqrt();
    let lo = (n * q - half).floor();
    let hi = (n * q + half).ceil() + 1.0;
    if lo < 1.0 || hi > n {
        return None;
    }
    Some((
        h.percentile_us(100.0 * lo / n),
        h.percentile_us(100.0 * hi / n),
    ))
}

/// The verdict on percentile `p` of B against A (see the module header).
pub fn judge_quantile(a: &Histogram, b: &Histogram, p: f64, o: &Options) -> Verdict {
    let (Some(ia), Some(ib)) = (
        quantile_interval(a, p, o.confidence),
        quantile_interval(b, p, o.confidence),
    ) else {
        return Verdict::Untested;
    };
    let (va, vb) = (a.percentile_us(p) as f64, b.percentile_us(p) as f64);
    if va <= 0.0 {
        return Verdict::Untested;
    }
    let large = (vb / va - 1.0).abs() >= o.min_effect;
    if ib.0 > ia.1 && large && vb > va {
        Verdict::Higher
    } else if ib.1 < ia.0 && large && vb < va {
        Verdict::Lower
    } else {
        Verdict::NoDifference
    }
}

/// One side's fingerprints: name -> latency histogram.
type Latencies = BTreeMap<String, Histogram>;

/// A replay's per-fingerprint latency (its transaction types' whole-run histograms).
fn replay_latencies(r: &RunResult) -> Latencies {
    let mut m = Latencies::new();
    for (t, s) in r.config.txn_types.iter().zip(&r.total.txns) {
        m.entry(t.name.clone()).or_default().merge(&s.latency);
    }
    m
}

fn side(h: &Histogram, all_us: u128) -> Side {
    Side {
        count: h.count(),
        p50_us: h.percentile_us(50.0),
        p99_us: h.percentile_us(99.0),
        share: if all_us > 0 {
            h.sum_us() as f64 / all_us as f64
        } else {
            0.0
        },
    }
}

fn build(
    (a_label, a): (&str, &Latencies),
    (b_label, b): (&str, &Latencies),
    (ea, eb): (ErrorsByFingerprint, ErrorsByFingerprint),
    o: &Options,
) -> Statements {
    let total = |m: &Latencies| m.values().map(Histogram::sum_us).sum::<u128>();
    let (ta, tb) = (total(a), total(b));
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut lines: Vec<(i128, Line)> = Vec::new();
    for name in names {
        let (ha, hb) = (a.get(name), b.get(name));
        // A fingerprint that has a type on a side but no execution without error there still
        // shows its (zero) count; only a name absent from a side is "only in".
        let (p50, p99) = match (ha, hb) {
            (Some(x), Some(y)) => (judge_quantile(x, y, 50.0, o), judge_quantile(x, y, 99.0, o)),
            _ => (Verdict::Untested, Verdict::Untested),
        };
        let ups = [p50, p99].iter().filter(|v| **v == Verdict::Higher).count();
        let downs = [p50, p99].iter().filter(|v| **v == Verdict::Lower).count();
        let change = match (ha, hb, ups, downs) {
            (Some(_), None, ..) => Change::OnlyA,
            (None, Some(_), ..) => Change::OnlyB,
            (_, _, 0, 0) => Change::Same,
            (_, _, _, 0) => Change::Slower,
            (_, _, 0, _) => Change::Faster,
            _ => Change::Both,
        };
        // Ordered by the time the change adds: B's executions at B's mean minus A's mean.
        let mean = |h: Option<&Histogram>| h.map_or(0.0, Histogram::mean_us);
        let added = (mean(hb) - mean(ha)) * hb.map_or(0, Histogram::count) as f64;
        lines.push((
            added as i128,
            Line {
                fingerprint: name.clone(),
                a: ha.map(|h| side(h, ta)),
                b: hb.map(|h| side(h, tb)),
                p50,
                p99,
                change,
            },
        ));
    }
    let rank = |c: Change| match c {
        Change::Slower | Change::Faster | Change::Both => 0,
        Change::OnlyA | Change::OnlyB => 1,
        Change::Same => 2,
    };
    lines.sort_by(|x, y| {
        (rank(x.1.change).cmp(&rank(y.1.change)))
            .then(y.0.abs().cmp(&x.0.abs()))
            .then(x.1.fingerprint.cmp(&y.1.fingerprint))
    });
    let (mut new_errors, mut gone_errors) = (Vec::new(), Vec::new());
    let fps: std::collections::BTreeSet<&String> = ea.keys().chain(eb.keys()).collect();
    let none = BTreeMap::new();
    for fp in fps {
        let (ca, cb) = (ea.get(fp).unwrap_or(&none), eb.get(fp).unwrap_or(&none));
        // A log that failed statements without naming the code (a stderr log without `%e`):
        // only "failed at all" against "not at all" can be told apart.
        let sum = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
        if ca.contains_key(UNNAMED) && sum(ca) > 0 && sum(cb) > 0 {
            continue;
        }
        let codes: std::collections::BTreeSet<&String> = ca.keys().chain(cb.keys()).collect();
        for code in codes {
            let (x, y) = (
                ca.get(code).copied().unwrap_or(0),
                cb.get(code).copied().unwrap_or(0),
            );
            let e = ErrorChange {
                fingerprint: fp.clone(),
                code: code.clone(),
                a: x,
                b: y,
            };
            if x == 0 && y > 0 {
                new_errors.push(e);
            } else if x > 0 && y == 0 {
                gone_errors.push(e);
            }
        }
    }
    new_errors.sort_by(|x, y| y.b.cmp(&x.b).then(x.fingerprint.cmp(&y.fingerprint)));
    gone_errors.sort_by(|x, y| y.a.cmp(&x.a).then(x.fingerprint.cmp(&y.fingerprint)));
    Statements {
        a_label: a_label.into(),
        b_label: b_label.into(),
        lines: lines.into_iter().map(|(_, l)| l).collect(),
        new_errors,
        gone_errors,
        min_effect: o.min_effect,
        confidence: o.confidence,
    }
}

type ErrorsByFingerprint = BTreeMap<String, BTreeMap<String, u64>>;

fn errors_of(s: &Section, log: bool) -> ErrorsByFingerprint {
    s.errors
        .iter()
        .map(|e| {
            let m = if log { &e.log_errors } else { &e.replay_errors };
            (e.fingerprint.clone(), m.clone())
        })
        .filter(|(_, m)| !m.is_empty())
        .collect()
}

/// Replay `b` against replay `a`, per fingerprint; `None` unless both are replays.
pub fn between(
    a: &RunResult,
    b: &RunResult,
    labels: (&str, &str),
    o: &Options,
) -> Option<Statements> {
    if !(is_replay(a) && is_replay(b)) {
        return None;
    }
    let (sa, sb) = (section(a), section(b));
    Some(build(
        (labels.0, &replay_latencies(a)),
        (labels.1, &replay_latencies(b)),
        (errors_of(&sa, false), errors_of(&sb, false)),
        o,
    ))
}

/// The replay `r` against the durations and errors its capture recorded. `Err` says why that
/// cannot be done: not a replay, or a log that recorded no durations.
pub fn against_log(r: &RunResult, o: &Options) -> Result<Statements, String> {
    if !is_replay(r) {
        return Err(format!(
            "--against-log compares a replay with its capture's log, and this is a run of {}",
            r.config.workload
        ));
    }
    let s = section(r);
    if s.log_durations.iter().all(|d| d.count == 0) {
        return Err(format!(
            "the capture {} ({} log) recorded no statement durations, so there is no baseline: \
             PostgreSQL writes them with log_min_duration_statement = 0 (not with log_statement \
             = all alone), MySQL in the slow log with long_query_time = 0 (never in the general \
             log); results written before replays kept the log's durations have none either",
            if s.capture.is_empty() {
                "?"
            } else {
                &s.capture
            },
            if s.format.is_empty() { "?" } else { &s.format },
        ));
    }
    let log: Latencies = (s.log_durations.iter())
        .map(|d| (d.fingerprint.clone(), d.latency.clone()))
        .collect();
    Ok(build(
        ("log", &log),
        ("replay", &replay_latencies(r)),
        (errors_of(&s, true), errors_of(&s, false)),
        o,
    ))
}

#[cfg(test)]
mod tests;
