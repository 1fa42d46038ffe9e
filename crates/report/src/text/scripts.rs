//! pgbench's per-script and per-command statistics (the end of pgbench 18's `printResults()`): a
//! section per script when there are several (weight, share, processed, failures, retries,
//! skipped, latency), and the statement latencies and failures under `-r`.

use std::fmt::Write as _;

use measure::TxnStats;

use super::{failure_lines, ms, pct, simple_stats};
use crate::model::RunResult;

/// The statistics of each script of `r`, whose run committed `cnt` transactions in all. Called
/// when there are several scripts or `-r` was given.
pub(super) fn per_script(o: &mut String, r: &RunResult, total_cnt: u64) {
    let c = &r.config;
    let bench_duration = r.measured_duration_s;
    let per_script_stats = c.txn_types.len() > 1;
    let total_weight: u64 = c.txn_types.iter().map(|t| u64::from(t.weight)).sum();
    let empty = TxnStats::default();
    for (i, tt) in c.txn_types.iter().enumerate() {
        let s = r.total.txns.get(i).unwrap_or(&empty);
        if per_script_stats {
            let s_cnt = s.committed();
            let s_failures = s.failed();
            let s_total_cnt = s_cnt + s.skipped + s_failures;
            let _ = writeln!(o, "SQL script {}: {}", i + 1, tt.name);
            let _ = writeln!(
                o,
                " - weight: {} (targets {:.1}% of total)",
                tt.weight,
                pct(u64::from(tt.weight), total_weight)
            );
            let _ = writeln!(
                o,
                " - {s_total_cnt} transactions ({:.1}% of total)",
                pct(s_total_cnt, total_cnt)
            );
            if s_total_cnt > 0 {
                let s_tps = if bench_duration > 0.0 {
                    s_cnt as f64 / bench_duration
                } else {
                    0.0
                };
                let _ = writeln!(
                    o,
                    " - number of transactions actually processed: {s_cnt} (tps = {s_tps:.6})"
                );
                failure_lines(o, " - ", s, s_total_cnt, c);
            }
            simple_stats(o, " - latency", &s.latency);
        }
        if c.per_statement {
            let _ = writeln!(
                o,
                "{}statement latencies in milliseconds{}:",
                if per_script_stats { " - " } else { "" },
                if c.max_tries == 1 {
                    " and failures"
                } else {
                    ", failures and retries"
                }
            );
            for (j, text) in tt.statements.iter().enumerate() {
                let (avg, failed) = match s.statements.get(j) {
                    Some(st) => (ms(st.latency.mean_us()), st.failures),
                    None => (0.0, 0),
                };
                // pgbench prints the command's first line.
                let line = text.lines().next().unwrap_or("");
                if c.max_tries == 1 {
                    let _ = writeln!(o, "   {avg:11.3}  {failed:10} {line}");
                } else {
                    let _ = writeln!(o, "   {avg:11.3}  {failed:10} {:>10} {line}", "-");
                }
            }
        }
    }
}
