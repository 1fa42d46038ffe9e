//! Per-interval CSV: one row per interval per transaction type, for spreadsheets and plotting.
//!
//! Owns the column layout only. Must not touch: I/O.

use std::fmt::Write as _;

use measure::Summary;

use crate::model::RunResult;

/// Column names, in order.
pub const CSV_HEADER: &str = "start_s,end_s,txn_type,name,committed,failed,skipped,retried,\
retries,late,tps,lat_avg_ms,lat_stddev_ms,lat_p50_ms,lat_p90_ms,lat_p95_ms,lat_p99_ms,\
lat_p99_9_ms,lat_max_ms,lag_avg_ms";

/// `"..."` with embedded quotes doubled (RFC 4180).
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The per-interval series as CSV, header first. Times are seconds since the measured start;
/// tps is committed transactions over the interval's own length; latencies in ms.
pub fn render_csv(r: &RunResult) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for iv in &r.intervals {
        let len_s = iv.duration_s();
        for (i, t) in iv.txns.iter().enumerate() {
            let name = r.config.txn_types.get(i).map_or("", |t| t.name.as_str());
            let s = Summary::of(&t.latency);
            let tps = if len_s > 0.0 {
                t.committed() as f64 / len_s
            } else {
                0.0
            };
            let _ = writeln!(
                out,
                "{:.3},{:.3},{i},{},{},{},{},{},{},{},{tps:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
                iv.start_us as f64 / 1e6,
                iv.end_us as f64 / 1e6,
                quoted(name),
                t.committed(),
                t.failed(),
                t.skipped,
                t.retried,
                t.retries,
                t.late,
                s.avg_ms,
                s.stddev_ms,
                s.p50_ms,
                s.p90_ms,
                s.p95_ms,
                s.p99_ms,
                s.p999_ms,
                s.max_ms,
                t.lag.mean_us() / 1000.0,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::multi_rate_tries;

    #[test]
    fn one_row_per_interval_and_type() {
        let mut r = multi_rate_tries();
        r.config.txn_types[0].name = "say \"hi\", twice".into();
        let csv = render_csv(&r);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 1 + 2 * 2);
        let columns = CSV_HEADER.split(',').count();
        assert_eq!(columns, 20);
        // First interval, first type: one commit of 1.5 ms with 0.3 ms lag over 1 s.
        assert_eq!(
            lines[1],
            "0.000,1.000,0,\"say \"\"hi\"\", twice\",1,0,0,0,0,0,1.000,1.500,0.000,1.500,1.500,\
             1.500,1.500,1.500,1.500,0.300"
        );
        // First interval, second type: failures and retries, nothing committed.
        assert_eq!(
            lines[2],
            "0.000,1.000,1,\"<builtin: select only>\",0,1,0,1,2,0,0.000,0.000,0.000,0.000,0.000,\
             0.000,0.000,0.000,0.000,0.000"
        );
        assert!(lines[3].starts_with("1.000,1.999,0,"), "{}", lines[3]);
        assert!(lines[4].starts_with("1.000,1.999,1,\"<builtin: select only>\",1225,0,42,0,0,120,"));
    }
}
