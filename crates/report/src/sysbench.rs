//! sysbench's summary of an `oltp_*` run, in sysbench 1.0.20's words and printf formats
//! (`db_report_cumulative` in db_driver.c, `report_cumulative` in sysbench.c): "SQL statistics",
//! "General statistics", "Latency (ms)". Printed after stampede's own summary so that numbers can
//! be compared with a sysbench run line by line.
//!
//! Every number comes from the [`SysbenchSection`] of the result: its `window` (the run after
//! `--warmup-time`) and the workload's queries per transaction. Differences from sysbench, all
//! stated here:
//! - queries are the statements of *committed* transactions (per-transaction counts times
//!   transactions); sysbench also counts the statements of events it restarted, and counts an
//!   UPDATE or DELETE that matched no row as "other" (`pgsql_check_status`: a command with 0
//!   rows), where stampede counts each statement by its kind. `bulk_insert` counts the INSERTs
//!   it sent (recorded per statement in each interval, plus the final flush after the run);
//! - the progress lines ([`render_sysbench_progress`], `report_intermediate` /
//!   `db_report_intermediate`: `[ 10s ] thds: ... reconn/s: ...`) count queries the same way
//!   per interval; `thds` is the number of clients (sysbench's running threads), and the
//!   `queue length` / `concurrency` line sysbench adds under `--rate` is not printed (stampede
//!   does not keep a queue: lateness is its lag, in stampede's own progress line and summary);
//! - "ignored errors" are the retries of the errors sysbench ignores (40001, 40P01, 23505): each
//!   retry follows one such error, as each of sysbench's restarts does;
//! - "reconnects" are stampede's (`-C`); stampede does not reconnect on its own;
//! - the percentile is exact (stampede's histogram), sysbench's is the upper bound of a
//!   logarithmic bucket; min/avg/max/sum are of committed transactions;
//! - "total time" is the window's length (after the warm-up); sysbench's includes connection set-up.

use std::fmt::Write as _;

use measure::Interval;

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

/// The run-wide facts a sysbench progress line needs beside the interval.
#[derive(Clone, Copy, Debug)]
pub struct SysbenchProgress {
    /// Clients (sysbench's `--threads`), printed as `thds:`.
    pub threads: u32,
    /// `-C`: every transaction reconnects, so reconnects per second are transactions per second.
    pub connect_per_txn: bool,
}

/// sysbench's `--percentile` as its `%u` prints it (stampede also takes fractions: `99.9`).
fn percentile_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as u64)
    } else {
        format!("{p}")
    }
}

/// One progress line in sysbench 1.0.20's format (`db_report_intermediate` in db_driver.c,
/// printed through `log_timestamp`'s `"[ %.0fs ] "` prefix), no trailing newline:
///
/// `[ 10s ] thds: 64 tps: 1234.56 qps: 24691.20 (r/w/o: 17283.84/4938.24/2469.12) lat (ms,95%): 61.08 err/s: 0.00 reconn/s: 0.00`
///
/// `%4.2f` is `{:.2}` (two decimals are always at least four characters). tps are committed
/// transactions per second of the interval's own length, err/s the retries of ignored errors,
/// the latency the interval's exact percentile (0 when nothing committed, as sysbench).
pub fn render_sysbench_progress(
    s: &SysbenchSection,
    interval: &Interval,
    elapsed_s: f64,
    p: &SysbenchProgress,
) -> String {
    let t = interval.total();
    let secs = interval.duration_s();
    let rate = |n: u64| per_sec(n, secs);
    let (r, w, o) = s.queries(interval);
    let lat = if t.latency.is_empty() {
        0.0
    } else {
        t.latency.percentile_us(s.percentile) as f64 / 1000.0
    };
    let reconnects = if p.connect_per_txn {
        t.committed() + t.failed()
    } else {
        0
    };
    format!(
        "[ {elapsed_s:.0}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) \
         lat (ms,{}%): {lat:.2} err/s: {:.2} reconn/s: {:.2}",
        p.threads,
        rate(t.committed()),
        rate(r + w + o),
        rate(r),
        rate(w),
        rate(o),
        percentile_label(s.percentile),
        rate(t.retries),
        rate(reconnects),
    )
}

/// `tables:` line of the pgbench-style block for a sysbench run: its size, in place of pgbench's
/// "scaling factor" (sysbench's workloads have none).
pub(crate) fn size_line(s: &SysbenchSection) -> String {
    let opt = |k: &str| s.options.get(k).map_or("?", String::as_str);
    if s.test == "bulk_insert" {
        format!("tables: {} (one per client, bulk_insert)", opt("threads"))
    } else {
        format!("tables: {} x {} rows", opt("tables"), opt("table-size"))
    }
}

/// sysbench's summary block for an `oltp_*` run; empty when the result has no sysbench section.
pub fn render_sysbench_summary(r: &RunResult) -> String {
    let Some(s) = &r.sysbench else {
        return String::new();
    };
    render(s)
}

/// What sysbench 1.0.20 itself prints at the end of a run, and nothing else: "SQL
/// statistics", "General statistics", "Latency (ms)" and "Threads fairness" (`stampede
/// sysbench`).
pub fn render_sysbench_output(r: &RunResult) -> String {
    let Some(s) = &r.sysbench else {
        return String::new();
    };
    let mut out = blocks(s);
    let o = &mut out;
    o.push('\n');
    let f = s.fairness.clone().unwrap_or_default();
    let _ = writeln!(o, "Threads fairness:");
    let _ = writeln!(
        o,
        "    events (avg/stddev):           {:.4}/{:.2}",
        f.events_avg, f.events_stddev
    );
    let _ = writeln!(
        o,
        "    execution time (avg/stddev):   {:.4}/{:.2}",
        f.time_avg_s, f.time_stddev_s
    );
    o.push('\n');
    out
}

fn render(s: &SysbenchSection) -> String {
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
    let mut out = format!("sysbench summary ({}, {window}):\n", s.test);
    out.push_str(&blocks(s));
    if s.warmup_s > 0.0 {
        let o = &mut out;
        let _ = writeln!(
            o,
            "latency percentiles in milliseconds after the warm-up (committed transactions):"
        );
        percentile_header(o);
        percentile_row(o, &s.window.total().latency, "all");
    }
    out
}

/// sysbench's "SQL statistics", "General statistics" and "Latency (ms)" blocks.
fn blocks(s: &SysbenchSection) -> String {
    let mut out = String::new();
    let o = &mut out;
    let t = s.window.total();
    let secs = s.window.duration_s();
    let events = t.committed();
    let (reads, writes, other) = s.queries(&s.window);
    let writes = writes + s.writes_after_run;
    let queries = reads + writes + other;
    let errors = t.retries;
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
        // The pgbench-style block says the size and sysbench's threads, not "scaling factor".
        let pg = crate::render_pgbench_summary(&r);
        assert!(pg.contains("\ntables: 16 x 10000 rows\n"), "{pg}");
        assert!(!pg.contains("scaling factor"), "{pg}");
        assert!(pg.contains(&format!(
            "\nnumber of clients (sysbench threads): {}\nengine threads (-j): {}\n",
            r.config.clients, r.config.threads
        )));
        // In the full text, after stampede's block.
        let full = crate::render_text(&r);
        assert!(full.find("checks:").unwrap() < full.find("SQL statistics:").unwrap());
    }

    /// sysbench 1.0.20's line, character for character, on an interval of known content: 2 s,
    /// 10 committed transactions of 20 ms (p95 20 ms), 3 retries.
    #[test]
    fn progress_line_is_sysbench_s() {
        let mut iv = Interval::new(1, 8_000_000);
        iv.end_us = 10_000_000;
        for _ in 0..10 {
            iv.txns[0].latency.record(20_000);
        }
        iv.txns[0].retries = 3;
        let r = testdata::sysbench_run();
        let s = r.sysbench.as_ref().unwrap();
        let p = SysbenchProgress {
            threads: 64,
            connect_per_txn: false,
        };
        let line = render_sysbench_progress(s, &iv, 10.0, &p);
        let lat = iv.txns[0].latency.percentile_us(95.0) as f64 / 1000.0;
        assert_eq!(
            line,
            format!(
                "[ 10s ] thds: 64 tps: 5.00 qps: 100.00 (r/w/o: 70.00/20.00/10.00) \
                 lat (ms,95%): {lat:.2} err/s: 1.50 reconn/s: 0.00"
            )
        );
        assert!((lat - 20.0).abs() < 0.1);
        // bulk_insert: the INSERTs recorded per statement (ok ones) are the writes.
        let mut b = s.clone();
        b.queries_from_statements = true;
        b.test = "bulk_insert".into();
        b.options.insert("threads".into(), "4".into());
        iv.txns[0].statements = vec![Default::default()];
        iv.txns[0].statements[0].latency.record(5_000);
        iv.txns[0].statements[0].latency.record(5_000);
        iv.txns[0].statements[0].failures = 1;
        assert_eq!(b.queries(&iv), (0, 1, 0));
        let line = render_sysbench_progress(&b, &iv, 10.0, &p);
        assert!(
            line.contains(" qps: 0.50 (r/w/o: 0.00/0.50/0.00) "),
            "{line}"
        );
        assert_eq!(size_line(&b), "tables: 4 (one per client, bulk_insert)");
        // An empty interval prints zeros, as sysbench.
        let empty = Interval::new(1, 0);
        assert!(render_sysbench_progress(s, &empty, 1.0, &p).starts_with(
            "[ 1s ] thds: 64 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,95%): 0.00 "
        ));
    }
}
