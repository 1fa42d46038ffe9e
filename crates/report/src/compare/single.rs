//! Figures a run measured once, compared across runs: a family's own per-item numbers that have
//! no per-interval samples (TPC-H's per-query times, one execution per query and stream, and its
//! Power@Size, Throughput@Size and QphH@Size). A family gives them through its view
//! (`section::View::singles`); they are matched across runs by group and name.
//!
//! ## How a verdict is reached without a distribution
//! One number per run says nothing about how much it would move if the run were repeated, so
//! the bootstrap and the rank test of the other metrics (`judge`) cannot run. The rule here is
//! a fixed threshold: a change **counts when it is at least [`MIN_EFFECT`] (10%) of A and at
//! least the figure's own absolute minimum** (`Single::min_abs`: TPC-H's query times 10 ms,
//! below which a query's time is mostly the round trip and the scheduler). Anything smaller is
//! "same within the threshold". Why 10% and not the 5% of the sampled metrics: a single
//! execution carries all of a run's drift (the cache's state, a checkpoint, another process)
//! with nothing averaged away, and repeated power tests of the same build on this machine
//! differ by several percent per query. A verdict says it was decided by the threshold, so no
//! reader takes it for a statistical test; a user who needs one runs the test several times
//! (or `tpch-qN` in a loop, which the sampled metrics judge).
//!
//! Must not touch: I/O; which figures a family offers (its view decides).

use std::fmt::Write as _;

use super::judge::{num, times};
use super::{Better, Judgement, Verdict, Words};
use crate::model::RunResult;
use crate::svg::esc;

/// Smallest relative change of a single figure that counts (module notes).
pub const MIN_EFFECT: f64 = 0.10;

/// One figure of one run, as a family's view gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Single {
    /// What it belongs to, a heading: `TPC-H metrics`, `power test`.
    pub group: String,
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub words: Words,
    /// Smallest absolute change that counts, in `unit`.
    pub min_abs: f64,
    /// `None`: not measured in this run (a query that failed).
    pub value: Option<f64>,
}

/// One figure across the runs.
#[derive(Clone, Debug, PartialEq)]
pub struct SingleRow {
    pub group: String,
    pub name: String,
    pub unit: String,
    pub better: Better,
    /// Each run's value, the baseline's first.
    pub values: Vec<Option<f64>>,
    /// Runs 1.. against the baseline.
    pub judgements: Vec<Judgement>,
}

/// Every run's singles matched by (group, name), in the order the baseline gives them (then
/// those only later runs have).
pub(super) fn rows(runs: &[&RunResult], labels: &[String]) -> Vec<SingleRow> {
    let per_run: Vec<Vec<Single>> = runs.iter().map(|r| crate::section::singles(r)).collect();
    let mut rows: Vec<(Single, Vec<Option<f64>>)> = Vec::new();
    for (i, singles) in per_run.iter().enumerate() {
        for s in singles {
            let at = match (rows.iter()).position(|(r, _)| r.group == s.group && r.name == s.name) {
                Some(at) => at,
                None => {
                    rows.push((s.clone(), vec![None; runs.len()]));
                    rows.len() - 1
                }
            };
            rows[at].1[i] = s.value;
        }
    }
    (rows.into_iter())
        .map(|(s, values)| {
            let judgements = (1..values.len())
                .map(|i| judge(&s, values[0], values[i], &labels[i]))
                .collect();
            SingleRow {
                group: s.group,
                name: s.name,
                unit: s.unit,
                better: s.better,
                values,
                judgements,
            }
        })
        .collect()
}

/// B against A by the threshold (module notes).
pub(super) fn judge(s: &Single, a: Option<f64>, b: Option<f64>, b_label: &str) -> Judgement {
    let (Some(a), Some(b)) = (a, b) else {
        return Judgement {
            ratio: None,
            verdict: Verdict::Untested,
            good: None,
            estimate: None,
            text: "not measured in both runs".into(),
        };
    };
    let ratio = (a > 0.0).then(|| b / a);
    let rel = match ratio {
        Some(r) => (r - 1.0).abs(),
        None if b == a => 0.0,
        None => f64::INFINITY,
    };
    let counts = rel >= MIN_EFFECT && (b - a).abs() >= s.min_abs;
    let verdict = match (counts, b > a) {
        (false, _) => Verdict::NoDifference,
        (true, true) => Verdict::Higher,
        (true, false) => Verdict::Lower,
    };
    let good = match (verdict, s.better) {
        (Verdict::Higher, Better::Higher) | (Verdict::Lower, Better::Lower) => Some(true),
        (Verdict::Higher, Better::Lower) | (Verdict::Lower, Better::Higher) => Some(false),
        _ => None,
    };
    let text = match verdict {
        Verdict::NoDifference if s.min_abs > 0.0 => format!(
            "same within the threshold ({:.0}% and {} {})",
            MIN_EFFECT * 100.0,
            num(s.min_abs),
            s.unit
        ),
        Verdict::NoDifference => {
            format!("same within the threshold ({:.0}%)", MIN_EFFECT * 100.0)
        }
        _ => {
            // The ratio is the change column's (B over A): the words give the direction only.
            let word = match (s.words, good, verdict) {
                (Words::Speed, Some(true), _) => "faster",
                (Words::Speed, Some(false), _) => "slower",
                (_, _, Verdict::Higher) => "higher",
                _ => "lower",
            };
            format!("{b_label} is {word} (one measurement each: by the threshold)")
        }
    };
    Judgement {
        ratio,
        verdict,
        good,
        estimate: None,
        text,
    }
}

/// The singles as text lines under their groups' headings (each line ending in `\n`).
pub(super) fn render_text(rows: &[SingleRow], labels: &[String], o: &mut String) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nmeasured once per run (a change counts from {:.0}% and each figure's minimum; no \
         test of noise is possible):",
        MIN_EFFECT * 100.0
    );
    let lw = rows
        .iter()
        .map(|r| r.name.len() + r.unit.len() + 3)
        .max()
        .unwrap_or(8)
        .max(12);
    let mut group = None;
    for r in rows {
        if group != Some(&r.group) {
            group = Some(&r.group);
            let mut head = format!("{}:", r.group);
            head = format!("{head:<lw$}");
            for l in labels {
                let _ = write!(head, " {l:>9}");
            }
            let _ = writeln!(o, "{head}");
        }
        let mut line = format!("  {:<w$}", format!("{} ({})", r.name, r.unit), w = lw - 2);
        for v in &r.values {
            let _ = write!(line, " {:>9}", v.map_or("-".into(), num));
        }
        for (k, j) in r.judgements.iter().enumerate() {
            let prefix = match labels.len() {
                2 => String::new(),
                _ => format!("{} vs {}: ", labels[k + 1], labels[0]),
            };
            let _ = write!(
                line,
                "  {prefix}{:>6}  {}",
                j.ratio.map_or("-".into(), times),
                j.text
            );
        }
        let _ = writeln!(o, "{line}");
    }
}

/// The singles as an HTML section: a table per group.
pub(super) fn render_html(
    rows: &[SingleRow],
    labels: &[String],
    cell: impl Fn(&Judgement, Better) -> (&'static str, &'static str),
    o: &mut String,
) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        o,
        "<section id=\"singles\"><h2>Measured once per run</h2><p class=\"method\">Each figure \
         here is one measurement per run (TPC-H: one execution per query and stream): a change \
         counts when it is at least {:.0}% and at least the figure's own minimum (10 ms for a \
         query); no test of noise is possible.</p><table><tr><th class=\"l\">figure</th>",
        MIN_EFFECT * 100.0
    );
    for l in labels {
        let _ = write!(o, "<th>{}</th>", esc(l));
    }
    for l in labels.iter().skip(1) {
        let _ = write!(
            o,
            "<th>{}/{}</th><th class=\"l\">verdict</th>",
            esc(l),
            esc(&labels[0])
        );
    }
    o.push_str("</tr>");
    let cols = 1 + labels.len() + 2 * labels.len().saturating_sub(1);
    let mut group = None;
    for r in rows {
        if group != Some(&r.group) {
            group = Some(&r.group);
            let _ = write!(
                o,
                "<tr class=\"grp\"><td colspan=\"{cols}\">{}</td></tr>",
                esc(&r.group)
            );
        }
        let _ = write!(
            o,
            "<tr><td class=\"l\">{} <span class=\"muted\">{}</span></td>",
            esc(&r.name),
            esc(&r.unit)
        );
        for v in &r.values {
            let _ = write!(o, "<td>{}</td>", v.map_or("-".into(), num));
        }
        for j in &r.judgements {
            let (cls, word) = cell(j, r.better);
            let chg = match j.good {
                Some(true) => " good",
                Some(false) => " bad",
                None => "",
            };
            let _ = write!(
                o,
                "<td class=\"chg{chg}\">{}</td><td class=\"v\"><span class=\"badge {cls}\">{word}\
                 </span> {}</td>",
                j.ratio.map_or("-".into(), times),
                esc(&j.text)
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(value: f64) -> Single {
        Single {
            group: "power test".into(),
            name: "Q1".into(),
            unit: "s".into(),
            better: Better::Lower,
            words: Words::Speed,
            min_abs: 0.01,
            value: Some(value),
        }
    }

    #[test]
    fn a_single_time_counts_past_both_thresholds_only() {
        let t = time(0.0);
        // 2.0 s -> 1.0 s: twice as fast, an improvement.
        let j = judge(&t, Some(2.0), Some(1.0), "B");
        assert_eq!((j.verdict, j.good), (Verdict::Lower, Some(true)));
        assert!(j.text.starts_with("B is faster"), "{}", j.text);
        assert_eq!(j.ratio, Some(0.5));
        // 9% slower: under 10%.
        let j = judge(&t, Some(1.0), Some(1.09), "B");
        assert_eq!(j.verdict, Verdict::NoDifference, "{}", j.text);
        // 50% slower but 5 ms: under the absolute minimum.
        let j = judge(&t, Some(0.010), Some(0.015), "B");
        assert_eq!(j.verdict, Verdict::NoDifference);
        let j = judge(&t, Some(0.5), Some(0.6), "B");
        assert_eq!((j.verdict, j.good), (Verdict::Higher, Some(false)));
        assert!(j.text.starts_with("B is slower"), "{}", j.text);
        let j = judge(&t, Some(0.5), None, "B");
        assert_eq!(j.verdict, Verdict::Untested);
        let qphh = Single {
            better: Better::Higher,
            words: Words::Level,
            min_abs: 0.0,
            ..time(0.0)
        };
        let j = judge(&qphh, Some(100.0), Some(150.0), "B");
        assert_eq!((j.verdict, j.good), (Verdict::Higher, Some(true)));
        assert!(j.text.starts_with("B is higher"), "{}", j.text);
    }

    #[test]
    fn the_text_lists_each_figure_under_its_group_with_both_values() {
        let row = SingleRow {
            group: "power test".into(),
            name: "Q1".into(),
            unit: "s".into(),
            better: Better::Lower,
            values: vec![Some(2.0), Some(1.0)],
            judgements: vec![judge(&time(0.0), Some(2.0), Some(1.0), "B")],
        };
        let mut o = String::new();
        render_text(&[row], &["A".into(), "B".into()], &mut o);
        assert!(o.contains("power test:"), "{o}");
        let line = o.lines().find(|l| l.contains("Q1 (s)")).unwrap();
        assert!(
            line.contains("2.00") && line.contains("1.00") && line.contains("0.50x"),
            "{o}"
        );
        // One ratio on the line: the column's B over A; the words say the direction.
        assert!(line.contains("B is faster"), "{o}");
        assert!(!line.contains("2.00x"), "{o}");
    }
}
