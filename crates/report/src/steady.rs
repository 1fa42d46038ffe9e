//! The steady-state verdict of a run, from its per-interval series: was the throughput level
//! over the measured part (after `--warmup`), or was the run still ramping (or declining), so
//! that its average mixes two regimes (the mistake of averaging a ramp-up into the figures)?
//!
//! Owns [`SteadyState`] and [`judge`], a pure function of the intervals and the warm-up. Must
//! not touch: rendering beyond the one line [`SteadyState::line`], clocks, I/O.
//!
//! How it judges, over the intervals that start after the warm-up (intervals shorter than half
//! the longest, a run's partial last tick, are left out, as `compare` does):
//! - **trend**: the least-squares slope of throughput over time, times the measured length, as a
//!   share of the mean: how much the level moved from start to end. It counts as a trend when
//!   it is more than [`TREND_MAX`] (10%) *and* more than two of its standard errors (a t-test
//!   at about 95%): on a noisy series a 10% slope is often noise, and an OLTP run repeated on
//!   the same machine commonly differs by a few percent, so less than 10% is within what a
//!   second run would show anyway.
//! - **spread**: the coefficient of variation (sample standard deviation over the mean) of the
//!   intervals' throughput, reported beside the verdict, not judged: a noisy run can be steady.
//! - **settled**: the final level is the mean of the last third of the intervals (at least 3);
//!   the band around it is 10% of it, widened to three of the last third's standard deviations
//!   on a noisy run (a point within 3σ is normal noise, not a regime). The run settled at the
//!   first interval from which every interval stays in the band.
//! - **shift**: how far the intervals before the settling point move the measured mean from
//!   the settled part's mean. More than [`SHIFT_MAX`] (5%) is flagged even without a trend (a
//!   short, steep ramp): that is the error the average carries. 5% is about the difference
//!   `stampede compare` starts to call a real change on a quiet run.
//! - fewer than [`MIN_INTERVALS`] measured intervals, or none committed: "unknown".

use measure::Interval;
use serde::{Deserialize, Serialize};

/// At least this many measured intervals to judge: fewer give a slope and a spread that mean
/// nothing (with 1-s ticks, a 5-s measured part).
pub const MIN_INTERVALS: usize = 5;
/// The largest relative change over the measured part still called level (see the module).
pub const TREND_MAX: f64 = 0.10;
/// The largest change of the measured mean from the unsettled start still called steady.
pub const SHIFT_MAX: f64 = 0.05;
/// The narrowest settling band, relative to the final level.
pub const BAND_MIN: f64 = 0.10;

/// The verdict's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Level over the measured part.
    Steady,
    /// Still rising (or rising before it settled): the figures mix a ramp-up into the average.
    Ramping,
    /// Falling over the measured part (or falling before it settled).
    Declining,
    /// Too few intervals, or no committed transactions, to say.
    Unknown,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Steady => "steady",
            Verdict::Ramping => "ramping",
            Verdict::Declining => "declining",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The steady-state verdict of a run (the result's `steady_state`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    pub verdict: Verdict,
    /// The measured intervals judged (after the warm-up, full-length ones).
    pub intervals: usize,
    /// The least-squares change of throughput over the measured part, as a share of its mean
    /// (0.25: it rose by a quarter of the mean from start to end); `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend: Option<f64>,
    /// The trend's standard error, in the same unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend_stderr: Option<f64>,
    /// The coefficient of variation of the intervals' throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<f64>,
    /// The index (into the result's `intervals`) of the interval from which the throughput
    /// stays within the band of its final level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_interval: Option<usize>,
    /// That interval's start, in seconds from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_at_s: Option<f64>,
    /// Why, in words.
    pub reason: String,
}

impl SteadyState {
    /// The summary's line: `steady state: ramping (trend +42% over the measured part, cv 12%;
    /// settled at 4.0 s, interval 4): ...`.
    pub fn line(&self) -> String {
        let mut s = format!("steady state: {}", self.verdict.label());
        if let (Some(t), Some(cv)) = (self.trend, self.cv) {
            s += &format!(
                " (trend {:+.0}% over the measured part, cv {:.0}%",
                100.0 * t,
                100.0 * cv
            );
            if let (Some(i), Some(at)) = (self.settled_interval, self.settled_at_s) {
                s += &format!("; settled at {at:.1} s, interval {i}");
            }
            s.push(')');
        }
        s + ": " + &self.reason
    }
}

/// The verdict of the intervals from `warmup_s` on (module notes).
pub fn judge(intervals: &[Interval], warmup_s: f64) -> SteadyState {
    // (index, start s, end s, committed/s)
    let pts: Vec<(usize, f64, f64, f64)> = (crate::warmup::measured(intervals, warmup_s)
        .into_iter())
    .map(|(k, i)| {
        let (a, b) = (i.start_us as f64 / 1e6, i.end_us as f64 / 1e6);
        (k, a, b, i.total().committed() as f64 / (b - a))
    })
    .collect();
    judge_points(&pts)
}

fn unknown(n: usize, reason: String) -> SteadyState {
    SteadyState {
        verdict: Verdict::Unknown,
        intervals: n,
        trend: None,
        trend_stderr: None,
        cv: None,
        settled_interval: None,
        settled_at_s: None,
        reason,
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// `pts`: (index into the run's intervals, start s, end s, committed per second).
fn judge_points(pts: &[(usize, f64, f64, f64)]) -> SteadyState {
    let n = pts.len();
    if n < MIN_INTERVALS {
        return unknown(
            n,
            format!("{n} measured intervals; at least {MIN_INTERVALS} are needed to judge"),
        );
    }
    let y: Vec<f64> = pts.iter().map(|p| p.3).collect();
    let x: Vec<f64> = pts.iter().map(|p| (p.1 + p.2) / 2.0).collect();
    let m = mean(&y);
    if m <= 0.0 {
        return unknown(n, "no transactions committed in the measured part".into());
    }
    // Least squares: slope b = Sxy / Sxx, its standard error sqrt(s² / Sxx) with s² the
    // residuals' variance (n - 2 degrees of freedom).
    let mx = mean(&x);
    let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - m)).sum();
    let b = sxy / sxx;
    let a = m - b * mx;
    let ssr: f64 = x.iter().zip(&y).map(|(u, v)| (v - a - b * u).powi(2)).sum();
    let se_b = (ssr / (n - 2) as f64 / sxx).sqrt();
    let length = pts[n - 1].2 - pts[0].1;
    let trend = b * length / m;
    let trend_se = se_b * length / m;
    let cv = sd(&y) / m;

    // The final level and the band around it; the settling point.
    let tail = &y[n - (n / 3).max(3)..];
    let level = mean(tail);
    let band = if level > 0.0 {
        (BAND_MIN * level).max(3.0 * sd(tail))
    } else {
        0.0
    };
    let mut settled = n - 1;
    while settled > 0 && (y[settled - 1] - level).abs() <= band {
        settled -= 1;
    }
    // If the very last interval is out of the band, the run never settled: its last
    // interval is the best that can be said.
    let settled_mean = mean(&y[settled..]);
    let shift = if settled_mean > 0.0 {
        (m - settled_mean) / settled_mean
    } else {
        0.0
    };
    let significant = trend.abs() > TREND_MAX && trend.abs() > 2.0 * trend_se;
    let pct = |v: f64| format!("{:.0}%", 100.0 * v.abs());
    let (verdict, reason) = if significant {
        let v = if trend > 0.0 {
            Verdict::Ramping
        } else {
            Verdict::Declining
        };
        let dir = if trend > 0.0 { "rose" } else { "fell" };
        (
            v,
            format!(
                "throughput {dir} by {} of its mean over the measured part (more than {} and \
                 twice its standard error of {}); a longer --warmup or run leaves it out",
                pct(trend),
                pct(TREND_MAX),
                pct(trend_se)
            ),
        )
    } else if shift.abs() > SHIFT_MAX {
        let v = if shift < 0.0 {
            Verdict::Ramping
        } else {
            Verdict::Declining
        };
        let dir = if shift < 0.0 { "lowers" } else { "raises" };
        (
            v,
            format!(
                "the {settled} intervals before it settled {dir} the measured mean by {} (more \
                 than {}); a --warmup of {:.0} s leaves them out",
                pct(shift),
                pct(SHIFT_MAX),
                pts[settled].1.ceil()
            ),
        )
    } else {
        (
            Verdict::Steady,
            format!(
                "level within {} over the measured part, and within {} of its final level",
                pct(TREND_MAX),
                pct(SHIFT_MAX)
            ),
        )
    };
    SteadyState {
        verdict,
        intervals: n,
        trend: Some(trend),
        trend_stderr: Some(trend_se),
        cv: Some(cv),
        settled_interval: Some(pts[settled].0),
        settled_at_s: Some(pts[settled].1),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-second intervals from 0 with these throughputs (committed per second).
    fn series(rates: &[f64]) -> Vec<(usize, f64, f64, f64)> {
        (rates.iter().enumerate())
            .map(|(k, &r)| (k, k as f64, k as f64 + 1.0, r))
            .collect()
    }

    #[test]
    fn a_flat_run_is_steady_from_its_first_interval() {
        let s = judge_points(&series(&[100.0; 12]));
        assert_eq!(s.verdict, Verdict::Steady, "{s:?}");
        assert_eq!(s.settled_interval, Some(0));
        assert!(s.trend.unwrap().abs() < 1e-9 && s.cv.unwrap() < 1e-9);
    }

    #[test]
    fn a_ramp_then_flat_is_ramping_and_settles_after_the_ramp() {
        let mut r = vec![0.0, 25.0, 50.0, 75.0];
        r.extend([100.0; 8]);
        let s = judge_points(&series(&r));
        assert_eq!(s.verdict, Verdict::Ramping, "{s:?}");
        assert!(s.trend.unwrap() > TREND_MAX);
        assert_eq!(s.settled_interval, Some(4));
        assert_eq!(s.settled_at_s, Some(4.0));
    }

    #[test]
    fn a_short_steep_ramp_without_a_trend_is_caught_by_its_shift() {
        // Three intervals at a tenth of the level in 40 lower the mean by ~7%: flagged,
        // whatever the slope over the whole says.
        let mut r = vec![10.0, 10.0, 10.0];
        r.extend([100.0; 37]);
        let s = judge_points(&series(&r));
        assert_eq!(s.verdict, Verdict::Ramping, "{s:?}");
        assert_eq!(s.settled_interval, Some(3));
    }

    #[test]
    fn a_steady_decline_is_declining() {
        let r: Vec<f64> = (0..20).map(|k| 100.0 - 1.5 * f64::from(k)).collect();
        let s = judge_points(&series(&r));
        assert_eq!(s.verdict, Verdict::Declining, "{s:?}");
        assert!(s.trend.unwrap() < -TREND_MAX);
    }

    #[test]
    fn a_noisy_but_flat_run_is_steady_with_its_spread_reported() {
        // ±30% around 100 in a fixed, patternless order: no trend, a wide spread.
        let noise = [
            0.3, -0.2, 0.1, -0.3, 0.25, -0.1, 0.0, 0.2, -0.25, 0.3, -0.3, 0.15, -0.05, 0.1, -0.2,
            0.05, -0.15, 0.25, -0.1, 0.0,
        ];
        let r: Vec<f64> = noise.iter().map(|e| 100.0 * (1.0 + e)).collect();
        let s = judge_points(&series(&r));
        assert_eq!(s.verdict, Verdict::Steady, "{s:?}");
        assert!(s.cv.unwrap() > 0.15, "{s:?}");
        assert_eq!(s.settled_interval, Some(0));
    }

    #[test]
    fn too_few_intervals_or_no_commits_are_unknown() {
        let s = judge_points(&series(&[100.0; 4]));
        assert_eq!(s.verdict, Verdict::Unknown);
        assert!(s.reason.contains("at least 5"), "{}", s.reason);
        assert_eq!(judge_points(&series(&[0.0; 8])).verdict, Verdict::Unknown);
    }

    #[test]
    fn judge_leaves_out_the_warmup_and_a_short_last_tick() {
        // 0 tps for 3 s, then 100 tps, and a 0.2-s tail with nothing in it.
        let mut iv: Vec<Interval> = (0..10u64)
            .map(|k| {
                let mut i = Interval::new(1, k * 1_000_000);
                i.end_us = (k + 1) * 1_000_000;
                if k >= 3 {
                    for _ in 0..100 {
                        i.txns[0].latency.record(1000);
                    }
                }
                i
            })
            .collect();
        let mut tail = Interval::new(1, 10_000_000);
        tail.end_us = 10_200_000;
        iv.push(tail);
        let ramp = judge(&iv, 0.0);
        assert_eq!(ramp.verdict, Verdict::Ramping, "{ramp:?}");
        assert_eq!(ramp.settled_interval, Some(3));
        assert_eq!(ramp.intervals, 10, "the short tail is left out");
        let cut = judge(&iv, 3.0);
        assert_eq!(cut.verdict, Verdict::Steady, "{cut:?}");
        assert_eq!(cut.intervals, 7);
        assert_eq!(cut.settled_interval, Some(3));
    }
}
