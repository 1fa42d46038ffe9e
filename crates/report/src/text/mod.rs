//! Text for people (and for scripts written against pgbench): the end-of-run summary and the
//! progress line.
//!
//! Owns the layout only; every number comes from the [`RunResult`] or the
//! [`Interval`](measure::Interval) handed in. Must not touch: I/O (the caller prints), clocks.
//!
//! The pgbench-compatible block follows pgbench 18's `printResults()` and the progress line its
//! `printProgressReport()` (src/bin/pgbench/pgbench.c, REL_18_STABLE) line for line: same words,
//! same printf formats, same conditions for which lines appear (the tests compare with
//! `testdata/pgbench-18`, derived from pgbench 15 captures: see its README). Rust's `{:.3}` rounds exactly like
//! glibc's `%.3f` (round-half-even on the exact binary value), so the digits agree too.
//!
//! Deliberate differences from pgbench, all in numbers pgbench estimates or cannot know:
//! - "latency average" is always the exact mean of committed transactions. pgbench, without
//!   `-P`/`-R`/`-L`, prints `duration * clients / transactions` instead (an estimate that includes
//!   client think time and failures, hence its "(including failures)" suffix, which we never
//!   print). The line still appears only under pgbench's conditions, and "latency stddev" only
//!   with `-P`, `-R` or `-L`, as in pgbench.
//! - "rate limit schedule lag" averages the lag of every transaction `measure` recorded a lag for
//!   (committed, failed and skipped ones); pgbench's covers committed transactions only.
//! - Under `-r` with `--max-tries` other than 1, pgbench prints per-statement retries; `measure`
//!   does not record them, so that column shows `-` rather than an invented 0.
//! - Divisions by zero that print `nan` in pgbench print 0 here.
//!
//! Layout by part: `pgbench` (the pgbench-compatible block), `scripts` (its per-script and
//! per-statement statistics under `-r` or several scripts), `stampede` (stampede's additions:
//! percentiles, failures by kind, aborted clients, connections, checks) and `progress` (the
//! progress line). This file holds what they share and [`render_text`], which puts the parts of
//! the end-of-run summary together.

mod failover;
mod pgbench;
mod progress;
mod replication;
mod scripts;
mod stampede;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use measure::{FailureKind, Histogram, TxnStats};

use crate::model::RunResult;
use crate::RunConfig;

pub use pgbench::render_pgbench_summary;
pub use progress::{render_progress, ProgressStyle};
pub(crate) use stampede::{percentile_header, percentile_row};
pub use stampede::{render_checks, render_stampede_summary};

/// `100 * n / d`, as pgbench computes its percentages, or 0 when `d` is 0.
fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// pgbench's `printSimpleStats()`: average and stddev lines, nothing when empty.
fn simple_stats(out: &mut String, prefix: &str, h: &Histogram) {
    if h.count() > 0 {
        let _ = writeln!(out, "{prefix} average = {:.3} ms", ms(h.mean_us()));
        let _ = writeln!(out, "{prefix} stddev = {:.3} ms", ms(h.stddev_us()));
    }
}

/// pgbench's failed, retried and skipped lines, for the whole run (`prefix` "") or for one script
/// (" - "), in percent of `total_cnt` (committed + skipped + failed).
fn failure_lines(o: &mut String, prefix: &str, t: &TxnStats, total_cnt: u64, c: &RunConfig) {
    let _ = writeln!(
        o,
        "{prefix}number of failed transactions: {} ({:.3}%)",
        t.failed(),
        pct(t.failed(), total_cnt)
    );
    // pgbench's --failures-detailed.
    if c.failures_detailed {
        for (kind, name) in [
            (FailureKind::Serialization, "serialization"),
            (FailureKind::Deadlock, "deadlock"),
            (FailureKind::Other, "other"),
        ] {
            let n = t.failures_of(kind);
            let _ = writeln!(
                o,
                "{prefix}number of {name} failures: {n} ({:.3}%)",
                pct(n, total_cnt)
            );
        }
    }
    // pgbench: "it can be non-zero only if max_tries is not equal to one".
    if c.max_tries != 1 {
        let _ = writeln!(
            o,
            "{prefix}number of transactions retried: {} ({:.3}%)",
            t.retried,
            pct(t.retried, total_cnt)
        );
        let _ = writeln!(o, "{prefix}total number of retries: {}", t.retries);
    }
    // Skipped transactions exist only under -R with -L. pgbench guards the line of a script that
    // ran nothing; for the whole run, nothing after the processed count is printed then.
    if c.rate_tps.is_some() && c.latency_limit_ms.is_some() && total_cnt > 0 {
        let _ = writeln!(
            o,
            "{prefix}number of transactions skipped: {} ({:.3}%)",
            t.skipped,
            pct(t.skipped, total_cnt)
        );
    }
}

/// The full end-of-run summary: the pgbench-compatible block ([`render_pgbench_summary`]), a
/// blank line, then stampede's additions ([`render_stampede_summary`]); for sysbench's workloads
/// another blank line and sysbench's summary ([`crate::render_sysbench_summary`]); when the server was
/// observed, another blank line and "where the time went" ([`crate::render_server_summary`]).
pub fn render_text(r: &RunResult) -> String {
    // A sweep's result is its last step's run with every step's row beside it: the whole sweep
    // comes first, then the last step's summary under a heading that says whose it is.
    let mut out = String::new();
    if let Some(s) = &r.sweep {
        out.push_str(&crate::sweep::render_text(s));
        out.push('\n');
        let _ = writeln!(out, "{}, in full:", s.last_step());
    }
    out.push_str(&render_pgbench_summary(r));
    out.push('\n');
    out.push_str(&render_stampede_summary(r));
    if r.sysbench.is_some() {
        out.push('\n');
        out.push_str(&crate::render_sysbench_summary(r));
    }
    for (view, v) in crate::section::present(r) {
        if let Some(block) = view.text_block(r, v) {
            out.push('\n');
            out.push_str(&block);
        }
    }
    if let Some(m) = &r.server_metrics {
        out.push('\n');
        out.push_str(&crate::observed::render_server_summary(m));
    }
    if let Some(f) = &r.fleet {
        out.push('\n');
        out.push_str(&crate::fleet::render_text(f));
    }
    if let Some(c) = &r.cloudwatch {
        out.push('\n');
        out.push_str(&crate::cloudwatch::render_text(c));
    }
    out
}
