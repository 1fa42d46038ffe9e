//! CSV for spreadsheets and plotting: the client's per-interval series (one row per interval per
//! transaction type, [`render_csv`]) and every server counter and host figure the observer read
//! ([`render_counters_csv`], one row per counter per sample: long, so that a server with 500
//! counters and one with 50 give the same columns).
//!
//! Owns the column layouts only. Must not touch: I/O.

use std::fmt::Write as _;

use measure::server::ServerMetrics;
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

/// Column names of [`render_counters_csv`].
pub const COUNTERS_CSV_HEADER: &str = "t_s,source,counter,value,per_s";

/// Every counter and host figure of `m`, a row each per sample: `t_s` seconds from the measured
/// start (negative before it), `source` (`server`, a Galera node's name, `host`), the counter's
/// name as the result keys it, the value read, and for a server counter its per-second change
/// since the sample before (empty for the first sample and for host figures, which are rates or
/// levels already). Counters that never changed (`counter_constants`) are one row each with an
/// empty `t_s`.
pub fn render_counters_csv(m: &ServerMetrics) -> String {
    let mut out = String::new();
    out.push_str(COUNTERS_CSV_HEADER);
    out.push('\n');
    let mut series = |source: &str, samples: &[measure::server::CounterSample]| {
        let mut prev: Option<&measure::server::CounterSample> = None;
        for c in samples {
            for (k, v) in &c.values {
                let rate = prev.and_then(|p| {
                    let dt = (c.t_ms - p.t_ms) as f64 / 1000.0;
                    let a = p.values.get(k)?;
                    (dt > 0.0).then(|| format!("{:.6}", (v - a) / dt))
                });
                let _ = writeln!(
                    out,
                    "{:.3},{},{},{v},{}",
                    c.t_ms as f64 / 1000.0,
                    quoted(source),
                    quoted(k),
                    rate.unwrap_or_default()
                );
            }
            prev = Some(c);
        }
    };
    series("server", &m.counters);
    for n in &m.nodes {
        series(&n.endpoint, &n.counters);
    }
    for (k, v) in &m.counter_constants {
        let _ = writeln!(out, ",\"server\",{},{v},", quoted(k));
    }
    for s in &m.os {
        let t = s.t_ms as f64 / 1000.0;
        let mut row = |name: &str, v: f64| {
            let _ = writeln!(out, "{t:.3},\"host\",{},{v},", quoted(name));
        };
        row("cpu_user_pct", s.cpu_user_pct);
        row("cpu_system_pct", s.cpu_system_pct);
        row("cpu_iowait_pct", s.cpu_iowait_pct);
        row("cpu_idle_pct", s.cpu_idle_pct);
        for (mode, v) in &s.cpu_modes_pct {
            row(&format!("cpu.{mode}_pct"), *v);
        }
        row("client_cpu_pct", s.client_cpu_pct);
        if let Some(v) = s.server_cpu_pct {
            row("server_cpu_pct", v);
        }
        row("mem_available_bytes", s.mem_available_bytes as f64);
        row("mem_total_bytes", s.mem_total_bytes as f64);
        row("mem_cached_bytes", s.mem_cached_bytes as f64);
        row("mem_dirty_bytes", s.mem_dirty_bytes as f64);
        row("disk_read_bytes_per_s", s.disk_read_bytes_per_s);
        row("disk_write_bytes_per_s", s.disk_write_bytes_per_s);
        for d in &s.devices {
            let mut dev = |what: &str, v: f64| row(&format!("device.{}.{what}", d.device), v);
            dev("reads_per_s", d.reads_per_s);
            dev("writes_per_s", d.writes_per_s);
            dev("read_bytes_per_s", d.read_bytes_per_s);
            dev("write_bytes_per_s", d.write_bytes_per_s);
            if let Some(l) = d.read_latency_ms {
                dev("read_latency_ms", l);
            }
            if let Some(l) = d.write_latency_ms {
                dev("write_latency_ms", l);
            }
            dev("queue_depth", d.queue_depth);
            dev("util_pct", d.util_pct);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::multi_rate_tries;

    #[test]
    fn every_counter_a_row_per_sample_with_its_rate() {
        use measure::server::{CounterSample, DeviceSample, OsSample};
        let sample = |t_ms: i64, commits: f64, odd: &str| CounterSample {
            t_ms,
            values: [
                ("database.xact_commit".to_string(), commits),
                (odd.to_string(), 1.0),
            ]
            .into_iter()
            .collect(),
        };
        let m = ServerMetrics {
            counters: vec![sample(0, 100.0, "x"), sample(500, 150.0, "y, \"z\"")],
            counter_constants: [("mysql.Uptime_x".to_string(), 5.0)].into_iter().collect(),
            os: vec![OsSample {
                t_ms: 1000,
                devices: vec![DeviceSample {
                    device: "vda".into(),
                    read_latency_ms: Some(0.5),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let csv = render_counters_csv(&m);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], COUNTERS_CSV_HEADER);
        assert_eq!(lines[1], "0.000,\"server\",\"database.xact_commit\",100,");
        // 50 more commits in half a second.
        assert_eq!(
            lines[3],
            "0.500,\"server\",\"database.xact_commit\",150,100.000000"
        );
        // A name with a comma and quotes stays one field.
        assert_eq!(lines[4], "0.500,\"server\",\"y, \"\"z\"\"\",1,");
        assert!(csv.contains("\n,\"server\",\"mysql.Uptime_x\",5,\n"));
        assert!(csv.contains("1.000,\"host\",\"device.vda.read_latency_ms\",0.5,\n"));
        assert!(!csv.contains("device.vda.write_latency_ms"));
    }

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
