//! The comparison as text for the terminal: the runs, what differs between them, one line per
//! metric with each run's value, the change and the verdict, the top SQL of each run, and how
//! the verdicts were reached. Must not touch: I/O.

use std::fmt::Write as _;

use super::{num, times, Comparison, Group, Input, Row};
use crate::observed::one_line;

fn value(v: Option<f64>) -> String {
    v.map_or("-".into(), num)
}

fn metric_label(r: &Row) -> String {
    match r.group {
        Group::Waits => format!("  {} ({})", r.metric, r.unit),
        _ => format!("{} ({})", r.metric, r.unit),
    }
}

/// The comparison, every line ending in `\n`. `runs` are the inputs of [`super::compare`], for
/// the top-SQL lines.
pub fn render_text(c: &Comparison, runs: &[Input<'_>]) -> String {
    let mut out = String::new();
    let o = &mut out;
    let n = c.labels.len();
    let _ = writeln!(
        o,
        "comparing {n} runs, {} is the baseline:",
        c.labels.first().map_or("A", String::as_str)
    );
    for i in 0..n {
        let _ = writeln!(o, "  {}  {}  {}", c.labels[i], c.names[i], c.summaries[i]);
    }
    if let Some(f) = &c.forced {
        let _ = writeln!(o, "WARNING: compared although {f}");
    }
    if c.differences.is_empty() {
        let _ = writeln!(o, "what differs: nothing in the recorded configuration");
    } else {
        let _ = writeln!(o, "what differs:");
        let w = c
            .differences
            .iter()
            .map(|d| d.name.chars().count())
            .max()
            .unwrap_or(0);
        for d in &c.differences {
            let vals: Vec<String> = d
                .values
                .iter()
                .zip(&c.labels)
                .map(|(v, l)| format!("{l}: {}", one_line(v, 48)))
                .collect();
            let _ = writeln!(o, "  {:<w$}  {}", d.name, vals.join("   "));
        }
    }
    let _ = writeln!(o);

    let lw = c
        .rows
        .iter()
        .map(|r| metric_label(r).chars().count())
        .max()
        .unwrap_or(10)
        .max(20);
    let vw = c
        .rows
        .iter()
        .flat_map(|r| r.values.iter().map(|v| value(*v).len()))
        .max()
        .unwrap_or(5)
        .max(8);
    let mut header = format!("{:<lw$}", "metric");
    for l in &c.labels {
        let _ = write!(header, " {l:>vw$}");
    }
    if n == 2 {
        let _ = write!(header, " {:>8}  verdict", "B/A");
    }
    let _ = writeln!(o, "{header}");
    let mut group = Group::Client;
    for r in &c.rows {
        if r.group != group {
            group = r.group;
            let _ = writeln!(
                o,
                "{}",
                match group {
                    Group::Server => format!("server ({}):", c.server_sources),
                    Group::Waits => "database load by wait event:".into(),
                    Group::Client => String::new(),
                }
            );
        }
        let mut line = format!("{:<lw$}", metric_label(r));
        for v in &r.values {
            let _ = write!(line, " {:>vw$}", value(*v));
        }
        let change = |j: &super::Judgement| j.ratio.map_or("-".into(), times);
        if n == 2 {
            if let Some(j) = r.judgements.first() {
                let _ = write!(line, " {:>8}  {}", change(j), j.text);
            }
            let _ = writeln!(o, "{line}");
        } else {
            let _ = writeln!(o, "{line}");
            for (k, j) in r.judgements.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "    {} vs {}: {:>8}  {}",
                    c.labels[k + 1],
                    c.labels[0],
                    change(j),
                    j.text
                );
            }
        }
    }

    super::single::render_text(&c.singles, &c.labels, o);

    let with_sql: Vec<(usize, &Input<'_>)> = runs
        .iter()
        .enumerate()
        .filter(|(_, x)| {
            x.run
                .server_metrics
                .as_ref()
                .is_some_and(|m| !m.statements.is_empty())
        })
        .collect();
    if !with_sql.is_empty() {
        let _ = writeln!(o, "\ntop SQL by execution time (share of all statements):");
        for (i, x) in with_sql {
            let Some(m) = x.run.server_metrics.as_ref() else {
                continue;
            };
            let all = m
                .statements_total
                .as_ref()
                .map_or(0.0, |t| t.total_exec_time_ms);
            let top: Vec<String> = m
                .statements
                .iter()
                .take(3)
                .map(|s| {
                    let share = if all > 0.0 {
                        format!("{:.0}%", 100.0 * s.total_exec_time_ms / all)
                    } else {
                        "-".into()
                    };
                    format!("{share} {}", one_line(&s.query, 40))
                })
                .collect();
            let _ = writeln!(o, "  {}: {}", c.labels[i], top.join(" | "));
        }
    }

    // Sweeps: step by step against the baseline's sweep.
    if let Some(base) = runs.first().and_then(|x| x.run.sweep.as_ref()) {
        for (i, x) in runs.iter().enumerate().skip(1) {
            if let Some(s) = &x.run.sweep {
                o.push('\n');
                o.push_str(&crate::sweep::render_compare_text(
                    base,
                    s,
                    &c.labels[0],
                    &c.labels[i],
                ));
            }
        }
    }

    let opt = &c.options;
    let samples: Vec<String> = c
        .samples
        .iter()
        .zip(&c.labels)
        .map(|(s, l)| format!("{l} {s}"))
        .collect();
    let _ = writeln!(
        o,
        "\nverdicts from per-interval samples ({} intervals of {:.1} s, after the first {} s of \
         ramp-up): {:.0}% circular block bootstrap interval of the change (mean of rates, median \
         of latencies; {} resamples, seed {}) and a Mann-Whitney U test; a difference counts \
         when both find one (p < {}) and it is at least {:.0}%.",
        samples.join(", "),
        c.interval_s,
        opt.warmup_s,
        opt.confidence * 100.0,
        opt.resamples,
        opt.seed,
        opt.alpha,
        opt.min_effect * 100.0
    );
    for s in &c.statements {
        o.push('\n');
        o.push_str(&super::statements::render_text(s));
    }
    out
}
