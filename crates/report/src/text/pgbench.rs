//! The pgbench-compatible block of the end-of-run summary: pgbench 18's `printResults()` line
//! for line (see the notes of `text` for the deliberate differences), up to and including the
//! tps line; the per-script and per-statement statistics that follow are in `scripts`.

use std::fmt::Write as _;

use super::{failure_lines, ms, pct, scripts, simple_stats};
use crate::model::RunResult;

/// What pgbench 18's `printResults()` prints for the same run, byte for byte where the numbers
/// are the same (see the module notes for the deliberate differences). Every line ends in `\n`.
pub fn render_pgbench_summary(r: &RunResult) -> String {
    let c = &r.config;
    let mut out = String::new();
    let o = &mut out;

    let total = r.total.total();
    let cnt = total.committed();
    let failures = total.failed();
    // pgbench: total_cnt = cnt + skipped + failures
    let total_cnt = cnt + total.skipped + failures;
    let tps = r.tps();
    let throttle = c.rate_tps.is_some();
    let latency_limit = c.latency_limit_ms;
    let per_script_stats = c.txn_types.len() > 1;

    // Test parameters.
    let desc = match c.txn_types.as_slice() {
        [only] => only.name.as_str(),
        _ => "multiple scripts",
    };
    let _ = writeln!(o, "transaction type: {desc}");
    // sysbench's workloads have no scale, and sysbench's "threads" are pgbench's clients: their
    // size and the engine's threads are said in words that cannot be misread.
    let family_size = crate::section::present(r).find_map(|(view, v)| view.size_line(r, v));
    match (&r.sysbench, family_size) {
        (Some(s), _) => {
            let _ = writeln!(o, "{}", crate::sysbench::size_line(s));
        }
        (None, Some(line)) => {
            let _ = writeln!(o, "{line}");
        }
        (None, None) => {
            let _ = writeln!(o, "scaling factor: {}", c.scale);
            // pgbench: "only print partitioning information if some partitioning was detected".
            if let (Some(m), Some(n)) = (&c.partition_method, c.partitions) {
                let _ = writeln!(o, "partition method: {m}\npartitions: {n}");
            }
        }
    }
    let _ = writeln!(o, "query mode: {}", c.query_mode);
    match &r.sysbench {
        Some(_) => {
            let _ = writeln!(o, "number of clients (sysbench threads): {}", c.clients);
            let _ = writeln!(o, "engine threads (-j): {}", c.threads);
        }
        None => {
            let _ = writeln!(o, "number of clients: {}", c.clients);
            let _ = writeln!(o, "number of threads: {}", c.threads);
        }
    }
    // pgbench: `if (max_tries)`, so unlimited tries (0) prints nothing.
    if c.max_tries != 0 {
        let _ = writeln!(o, "maximum number of tries: {}", c.max_tries);
    }
    // pgbench: `if (duration <= 0)` -> transactions per client.
    match c.duration_s.filter(|&d| d > 0) {
        Some(d) if r.interrupted => {
            // The configured -T is not what ran: say both, the measured time first.
            let _ = writeln!(
                o,
                "duration: {:.0} s (interrupted after {:.1} of {d} s)",
                r.measured_duration_s, r.measured_duration_s
            );
            let _ = writeln!(o, "number of transactions actually processed: {cnt}");
        }
        Some(d) => {
            let _ = writeln!(o, "duration: {d} s");
            let _ = writeln!(o, "number of transactions actually processed: {cnt}");
        }
        None => match c.transactions_per_client {
            Some(per_client) => {
                let _ = writeln!(o, "number of transactions per client: {per_client}");
                let _ = writeln!(
                    o,
                    "number of transactions actually processed: {cnt}/{}",
                    per_client.saturating_mul(u64::from(c.clients))
                );
            }
            // Neither -t nor -T: a replay or a TPC-H test, until every client is done.
            None => {
                let _ = writeln!(o, "number of transactions actually processed: {cnt}");
            }
        },
    }

    // pgbench: "Remaining stats are nonsensical if we failed to execute any xacts".
    if total_cnt == 0 {
        return out;
    }

    failure_lines(o, "", &total, total_cnt, c);
    if let Some(limit) = latency_limit {
        let _ = writeln!(
            o,
            "number of transactions above the {limit:.1} ms latency limit: {}/{cnt} ({:.3}%)",
            total.late,
            pct(total.late, cnt)
        );
    }
    if throttle || c.progress_s.is_some() || latency_limit.is_some() {
        simple_stats(o, "latency", &total.latency);
    } else if cnt > 0 {
        // pgbench estimates this one from the run time; ours is the exact mean (module notes).
        let _ = writeln!(o, "latency average = {:.3} ms", ms(total.latency.mean_us()));
    }
    if throttle {
        let _ = writeln!(
            o,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            ms(total.lag.mean_us()),
            ms(total.lag.max_us() as f64)
        );
    }
    if c.connect_per_txn {
        let conn_total_ms = r.connections.reconnect_total_ms.unwrap_or(0.0);
        let avg = if cnt + failures > 0 {
            conn_total_ms / (cnt + failures) as f64
        } else {
            0.0
        };
        let _ = writeln!(o, "average connection time = {avg:.3} ms");
        let _ = writeln!(o, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(
            o,
            "initial connection time = {:.3} ms",
            r.connections.initial_connect_ms
        );
        let _ = writeln!(o, "tps = {tps:.6} (without initial connection time)");
    }

    if per_script_stats || c.per_statement {
        scripts::per_script(o, r, total_cnt);
    }
    out
}
