//! The verdict on one metric of one run against the baseline: the bootstrap and the rank test
//! (`stats`), the rule that a difference counts only when both agree and it is at least the
//! minimum effect, and the verdict in words ("B is faster (95% CI 2.10-2.45x per interval),
//! p<0.001"), beside the change column's one ratio ("2.29x").
//! The number formats are shared with the text and HTML renderings.

use super::metrics::Metric;
use super::stats::bootstrap;
use super::{Better, Judgement, Options, Verdict, Words, MIN_SAMPLES};

/// A ratio's confidence interval, as B over A in the change column's form ("95% CI
/// 2.10-2.45x"). The verdict never states a second point ratio beside the column's: the column
/// is B over A of the values shown, the interval is the bootstrap's over the steady intervals,
/// and saying which is which is what keeps the two from reading as two answers.
fn ci_words(ci: (f64, f64), conf: f64) -> String {
    let c = (conf * 100.0).round();
    format!("{c}% CI {:.2}-{:.2}x", ci.0, ci.1)
}

/// B over A as a ratio: the change column ("0.85x", "1.20x").
pub(super) fn times(ratio: f64) -> String {
    format!("{ratio:.2}x")
}

pub(super) fn num(v: f64) -> String {
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

pub(super) fn judge(
    m: &Metric<'_>,
    a: (Option<f64>, Option<Vec<f64>>),
    b: (Option<f64>, Option<Vec<f64>>),
    b_label: &str,
    o: &Options,
    seed: u64,
) -> Judgement {
    let ratio = match (a.0, b.0) {
        (Some(x), Some(y)) if x > 0.0 => Some(y / x),
        _ => None,
    };
    let untested = |text: String| Judgement {
        ratio,
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
            ratio,
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
            let word = if e.b > e.a { up } else { down };
            let body = match (e.ratio, e.ratio_ci) {
                (Some(r), Some(ci)) if r > 0.0 && ci.0 > 0.0 => {
                    format!("{word} ({} per interval)", ci_words(ci, o.confidence))
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
                (Some(_), Some(ci)) => format!("{} per interval", ci_words(ci, o.confidence)),
                _ => format!(
                    "{:+} {}, {c}% CI {} to {}",
                    num(e.b - e.a),
                    m.unit,
                    num(e.diff_ci.0),
                    num(e.diff_ci.1)
                ),
            };
            // Significant but too small: say which bar it did not clear.
            let why = if !significant {
                String::new()
            } else if rel.abs() < o.min_effect {
                format!("; under the {:.0}% that counts", o.min_effect * 100.0)
            } else {
                format!(
                    "; a change of {} {}, under the {} {} that counts",
                    num((e.b - e.a).abs()),
                    m.unit,
                    num(m.min_abs),
                    m.unit
                )
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
        ratio,
        verdict,
        good,
        estimate: Some(e),
        text,
    }
}
