//! sysbench's summary of an `oltp_*` run, in sysbench 1.0.20's words and printf formats
//! (`db_report_cumulative` in db_driver.c, `report_cumulative` in sysbench.c): "SQL statistics",
//! "General statistics", "Latency (ms)". Printed after stampede's own summary so that numbers can
//! be compared with a sysbench run line by line.
//!
//! Every number comes from the [`SysbenchSection`] of the result: its `window` (the run after
//! `--warmup-time`) and the workload's queries per transaction. Differences from sysbench, all
//! stated here:
//! - queries are the statements of *committed* transactions (per-transaction counts times
//!   transactions); sysbench also counts the statements of events it restarted;
//! - "ignored errors" are the retries of the errors sysbench ignores (40001, 40P01, 23505): each
//!   retry follows one such error, as each of sysbench's restarts does;
//! - "reconnects" are stampede's (`-C`); stampede does not reconnect on its own;
//! - the percentile is exact (stampede's histogram), sysbench's is the upper bound of a
//!   logarithmic bucket; min/avg/max/sum are of committed transactions;
//! - "total time" is the window's length (after the warm-up); sysbench's includes connection set-up.

use std::fmt::Write as _;

use crate::model::{RunResult, SysbenchSection};
use crate::text::{percentile_header, percentile_row};

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn ordinal(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{:3}th", p as u64)
    } else {
        format!("{p}th")
    }
}

/// sysbench's summary block for an `oltp_*` run; empty when the result has no sysbench section.
pub fn render_sysbench_summary(r: &RunResult) -> String {
    let Some(s) = &r.sysbench else {
        return String::new();
    };
    render(s)
}

fn render(s: &SysbenchSection) -> String {
    let mut out = String::new();
    let o = &mut out;
    let t = s.window.total();
    let secs = s.window.duration_s();
    let events = t.committed();
    let (reads, writes, other) = (
        events * s.reads_per_txn,
        events * s.writes_per_txn,
        events * s.other_per_txn,
    );
    let queries = reads + writes + other;
    let errors = t.retries;
    let window = if s.warmup_s > 0.0 {
        format!(
            "after a {} s warm-up: {:.1} s to {:.1} s",
            s.warmup_s,
            s.window.start_us as f64 / 1e6,
            s.window.end_us as f64 / 1e6
        )
    } else {
        "the whole run".to_string()
    };
    let _ = writeln!(o, "sysbench summary ({}, {window}):", s.test);
    let _ = writeln!(o, "SQL statistics:");
    let _ = writeln!(o, "    queries performed:");
    let _ = writeln!(o, "        read:                            {reads}");
    let _ = writeln!(o, "        write:                           {writes}");
    let _ = writeln!(o, "        other:                           {other}");
    let _ = writeln!(o, "        total:                           {queries}");
    for (name, n) in [
        ("transactions:  ", events),
        ("queries:       ", queries),
        ("ignored errors:", errors),
        ("reconnects:    ", s.reconnects),
    ] {
        let _ = writeln!(
            o,
            "    {name}                      {n:<6} ({:.2} per sec.)",
            per_sec(n, secs)
        );
    }
    o.push('\n');
    let _ = writeln!(o, "General statistics:");
    let _ = writeln!(o, "    total time:                          {secs:.4}s");
    let _ = writeln!(o, "    total number of events:              {events}");
    o.push('\n');
    let h = &t.latency;
    let ms = |us: f64| us / 1000.0;
    let (min, avg, max, sum) = if h.is_empty() {
        (0.0, 0.0, 0.0, 0.0)
    } else {
        (
            ms(h.min_us() as f64),
            ms(h.mean_us()),
            ms(h.max_us() as f64),
            ms(h.sum_us() as f64),
        )
    };
    let pct = if h.is_empty() {
        0.0
    } else {
        ms(h.percentile_us(s.percentile) as f64)
    };
    let _ = writeln!(o, "Latency (ms):");
    let _ = writeln!(o, "         min: {min:39.2}");
    let _ = writeln!(o, "         avg: {avg:39.2}");
    let _ = writeln!(o, "         max: {max:39.2}");
    let _ = writeln!(
        o,
        "        {} percentile: {pct:27.2}",
        ordinal(s.percentile)
    );
    let _ = writeln!(o, "         sum: {sum:39.2}");
    if s.warmup_s > 0.0 {
        let _ = writeln!(
            o,
            "latency percentiles in milliseconds after the warm-up (committed transactions):"
        );
        percentile_header(o);
        percentile_row(o, h, "all");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn prints_sysbench_s_lines_from_the_window() {
        let r = testdata::sysbench_run();
        let s = r.sysbench.as_ref().unwrap();
        let text = render_sysbench_summary(&r);
        let n = s.window.total().committed();
        let secs = s.window.duration_s();
        assert!(n > 0);
        assert!(
            text.contains(&format!(
                "    transactions:                        {n:<6} ({:.2} per sec.)\n",
                n as f64 / secs
            )),
            "{text}"
        );
        assert!(text.contains(&format!(
            "        read:                            {}\n",
            14 * n
        )));
        assert!(text.contains(&format!(
            "        total:                           {}\n",
            20 * n
        )));
        assert!(text.contains("         95th percentile: "), "{text}");
        assert!(!text.contains("after the warm-up"));
        let mut w = r.clone();
        w.sysbench.as_mut().unwrap().warmup_s = 2.0;
        assert!(render_sysbench_summary(&w).contains("after a 2 s warm-up"));
        // In the full text, after stampede's block.
        let full = crate::render_text(&r);
        assert!(full.find("checks:").unwrap() < full.find("SQL statistics:").unwrap());
    }
}
