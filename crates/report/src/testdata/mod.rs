//! Test fixtures: histograms built to print given pgbench numbers, and results mirroring runs of
//! the real pgbench 15.18 (outputs captured verbatim in the tests that use them).

use std::collections::BTreeMap;

use measure::{Histogram, Interval, StmtStats, TxnStats};

use crate::model::*;

mod metrics;
mod sections;

pub use metrics::*;
pub use sections::*;

/// A two-valued sample: `na` values of `a` us and `nb` values of `b` us.
#[derive(Clone, Copy, Debug)]
pub struct TwoPoint {
    pub a: u64,
    pub na: u64,
    pub b: u64,
    pub nb: u64,
}

impl TwoPoint {
    fn n(&self) -> u64 {
        self.na + self.nb
    }
    fn sum(&self) -> u128 {
        u128::from(self.a) * u128::from(self.na) + u128::from(self.b) * u128::from(self.nb)
    }
    fn sum_sq(&self) -> u128 {
        let sq = |v: u64| u128::from(v) * u128::from(v);
        sq(self.a) * u128::from(self.na) + sq(self.b) * u128::from(self.nb)
    }
    pub fn build(&self) -> Histogram {
        let mut h = Histogram::new();
        for _ in 0..self.na {
            h.record(self.a);
        }
        for _ in 0..self.nb {
            h.record(self.b);
        }
        h
    }
}

/// Mean and stddev in ms exactly as `measure::Histogram` computes them from its sums.
fn stats_ms(n: u64, sum: u128, sum_sq: u128) -> (f64, f64) {
    let mean = sum as f64 / n as f64;
    let var = sum_sq as f64 / n as f64 - mean * mean;
    (mean / 1000.0, var.max(0.0).sqrt() / 1000.0)
}

fn prints(x: f64, want: &str) -> bool {
    format!("{x:.3}") == want
}

/// Up to `limit` two-point samples of `n` values whose mean and stddev print (`%.3f` ms) as
/// `mean` and `sd`.
pub fn candidates(n: u64, mean: &str, sd: &str, limit: usize) -> Vec<TwoPoint> {
    let m: f64 = mean.parse::<f64>().unwrap() * 1000.0;
    let s: f64 = sd.parse::<f64>().unwrap() * 1000.0;
    let mut out = Vec::new();
    if n == 1 {
        let tp = TwoPoint {
            a: m.round() as u64,
            na: 1,
            b: 0,
            nb: 0,
        };
        let (mm, ss) = stats_ms(1, tp.sum(), tp.sum_sq());
        if prints(mm, mean) && prints(ss, sd) {
            out.push(tp);
        }
        return out;
    }
    for nb in 1..n {
        let na = n - nb;
        let p = nb as f64 / n as f64;
        let d = s / (p * (1.0 - p)).sqrt();
        let a0 = (m - p * d).round() as i64;
        let b0 = (m - p * d + d).round() as i64;
        for da in -3..=3 {
            for db in -3..=3 {
                let (a, b) = (a0 + da, b0 + db);
                if a < 0 || b <= a {
                    continue;
                }
                let tp = TwoPoint {
                    a: a as u64,
                    na,
                    b: b as u64,
                    nb,
                };
                let (mm, ss) = stats_ms(n, tp.sum(), tp.sum_sq());
                if prints(mm, mean) && prints(ss, sd) {
                    out.push(tp);
                    if out.len() >= limit {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// A histogram of `n` values whose mean and stddev print as `mean` and `sd` ms.
pub fn hist(n: u64, mean: &str, sd: &str) -> Histogram {
    candidates(n, mean, sd, 1)
        .first()
        .unwrap_or_else(|| panic!("no sample of {n} with mean {mean} sd {sd}"))
        .build()
}

/// Two samples with their own printed mean/sd whose union's mean (and sd when given) print as
/// `overall`.
pub fn joint(
    parts: [(u64, &str, &str); 2],
    overall_mean: &str,
    overall_sd: Option<&str>,
) -> [Histogram; 2] {
    let c0 = candidates(parts[0].0, parts[0].1, parts[0].2, 400);
    let c1 = candidates(parts[1].0, parts[1].1, parts[1].2, 400);
    for x in &c0 {
        for y in &c1 {
            let n = x.n() + y.n();
            let (m, s) = stats_ms(n, x.sum() + y.sum(), x.sum_sq() + y.sum_sq());
            if prints(m, overall_mean)
                && match overall_sd {
                    Some(sd) => prints(s, sd),
                    None => true,
                }
            {
                return [x.build(), y.build()];
            }
        }
    }
    panic!("no joint sample for {parts:?} -> {overall_mean} {overall_sd:?}");
}

/// `n` values with mean printing as `mean` ms and maximum exactly `max_us` (pick a value HDR
/// stores exactly at the top of its bucket: below 2048, odd below 4096, 3 mod 4 below 8192).
pub fn hist_mean_max(n: u64, mean: &str, max_us: u64) -> Histogram {
    let m: f64 = mean.parse::<f64>().unwrap() * 1000.0;
    let target = (m * n as f64).round() as i64;
    for delta in 0..(n as i64) {
        for sum in [target + delta, target - delta] {
            let rest = sum - max_us as i64;
            if rest < (n - 1) as i64 {
                continue;
            }
            let (q, r) = (rest as u64 / (n - 1), rest as u64 % (n - 1));
            if q + 1 > max_us || !prints(sum as f64 / n as f64 / 1000.0, mean) {
                continue;
            }
            let mut h = Histogram::new();
            h.record(max_us);
            for i in 0..(n - 1) {
                h.record(if i < r { q + 1 } else { q });
            }
            return h;
        }
    }
    panic!("no sample of {n} with mean {mean} max {max_us}");
}

/// A statement whose average latency prints as `ms` (one execution).
pub fn stmt(ms: &str) -> StmtStats {
    let us = (ms.parse::<f64>().unwrap() * 1000.0).round() as u64;
    let mut latency = Histogram::new();
    latency.record(us);
    StmtStats {
        latency,
        failures: 0,
    }
}

pub fn stmts(lines: &[(&str, &str)]) -> (Vec<String>, Vec<StmtStats>) {
    (
        lines.iter().map(|(_, t)| t.to_string()).collect(),
        lines.iter().map(|(m, _)| stmt(m)).collect(),
    )
}

pub const SET_AID: &str = r"\set aid random(1, 100000 * :scale)";
pub const SET_BID: &str = r"\set bid random(1, 1 * :scale)";
pub const SET_TID: &str = r"\set tid random(1, 10 * :scale)";
pub const SET_DELTA: &str = r"\set delta random(-5000, 5000)";
pub const BEGIN: &str = "BEGIN;";
pub const UPD_ACC: &str =
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;";
pub const SEL_ACC: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;";
pub const UPD_TEL: &str =
    "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;";
pub const UPD_BR: &str =
    "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;";
pub const INS_HIST: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);";
pub const END: &str = "END;";

pub const TPCB: &str = "<builtin: TPC-B (sort of)>";
pub const SIMPLE_UPDATE: &str = "<builtin: simple update>";
pub const SELECT_ONLY: &str = "<builtin: select only>";

/// A result with the given configuration and whole-run stats; everything else minimal.
pub fn result(
    config: RunConfig,
    txns: Vec<TxnStats>,
    duration_s: f64,
    connect_ms: f64,
) -> RunResult {
    let clients = config.clients;
    let end_us = (duration_s * 1e6).round() as u64;
    RunResult {
        stampede_version: "0.1.0".into(),
        command_line: vec!["stampede".into(), "run".into()],
        started_at: "2024-05-01T12:00:00.000Z".into(),
        measured_duration_s: duration_s,
        config,
        target: TargetInfo {
            conninfo: "host=/tmp port=5499 user=postgres".into(),
            embedded: None,
        },
        connections: ConnectionStats {
            initial_connect_ms: connect_ms,
            clients,
            reconnect_total_ms: None,
            aborted: vec![],
            setup: None,
        },
        total: Interval {
            start_us: 0,
            end_us,
            txns,
        },
        ..Default::default()
    }
}

pub fn config(types: Vec<TxnTypeConfig>) -> RunConfig {
    RunConfig {
        workload: "tpcb".into(),
        txn_types: types,
        clients: 4,
        threads: 2,
        duration_s: Some(3),
        transactions_per_client: None,
        rate_tps: None,
        latency_limit_ms: None,
        query_mode: "simple".into(),
        max_tries: 1,
        connect_per_txn: false,
        progress_s: None,
        random_seed: 42,
        per_statement: false,
        scale: 1,
        ..Default::default()
    }
}

pub fn txn_type(name: &str, weight: u32, statements: Vec<String>) -> TxnTypeConfig {
    TxnTypeConfig {
        name: name.into(),
        weight,
        statements,
    }
}

/// pgbench -c 4 -j 2 -T 2 -P 1 -R 800 -L 3 --max-tries 3 -b simple-update@2 -b select-only@8 -r
/// (captured as `MULTI_RATE_TRIES` in the text tests), plus every stampede-only field filled:
/// the fully populated sample for the schema and round-trip tests.
pub fn multi_rate_tries() -> RunResult {
    let (su_text, su_stats) = stmts(&[
        ("0.005", SET_AID),
        ("0.002", SET_BID),
        ("0.001", SET_TID),
        ("0.001", SET_DELTA),
        ("0.339", BEGIN),
        ("0.325", UPD_ACC),
        ("0.270", SEL_ACC),
        ("0.141", INS_HIST),
        ("2.529", END),
    ]);
    let (so_text, so_stats) = stmts(&[("0.002", SET_AID), ("0.430", SEL_ACC)]);
    let [h_su, h_so] = joint(
        [(301, "3.986", "3.926"), (1225, "0.762", "1.431")],
        "1.398",
        Some("2.516"),
    );
    let su = TxnStats {
        latency: h_su,
        lag: hist_mean_max(1526, "0.337", 7291),
        failures: [0, 0, 0],
        retries: 0,
        retried: 0,
        skipped: 9,
        late: 100,
        statements: su_stats,
    };
    let so = TxnStats {
        latency: h_so,
        skipped: 42,
        late: 120,
        statements: so_stats,
        ..TxnStats::default()
    };
    let mut c = config(vec![
        txn_type(SIMPLE_UPDATE, 2, su_text),
        txn_type(SELECT_ONLY, 8, so_text),
    ]);
    c.duration_s = Some(2);
    c.progress_s = Some(1.0);
    c.rate_tps = Some(800.0);
    c.latency_limit_ms = Some(3.0);
    c.max_tries = 3;
    c.per_statement = true;
    // The one duration (to 1e-9 s) for which all three printed tps values round as pgbench's.
    let mut r = result(c, vec![su, so], 1.998_677_999_8, 10.124);

    // Everything pgbench does not print, filled for the schema and round-trip tests.
    r.command_line = [
        "stampede", "run", "-c", "4", "-j", "2", "-T", "2", "-R", "800", "-L", "3",
    ]
    .map(String::from)
    .to_vec();
    r.target = TargetInfo {
        conninfo: "host=/tmp/stampede-x port=5499 user=bench password=********".into(),
        embedded: Some(EmbeddedTarget {
            bin_dir: "/usr/lib/postgresql/15/bin".into(),
            settings: BTreeMap::from([
                ("fsync".to_string(), "off".to_string()),
                ("shared_buffers".to_string(), "128MB".to_string()),
            ]),
        }),
    };
    r.environment = Environment {
        server: ServerEnvironment {
            version: "15.18 (Debian 15.18-0+deb12u1)".into(),
            version_num: Some(150018),
            settings: [
                ("shared_buffers", "128MB"),
                ("max_connections", "100"),
                ("synchronous_commit", "on"),
                ("fsync", "off"),
                ("full_page_writes", "on"),
                ("wal_level", "replica"),
                ("checkpoint_timeout", "5min"),
                ("max_wal_size", "1GB"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        },
        client: ClientEnvironment {
            cpus: 2,
            cpu_model: Some("AMD EPYC".into()),
            memory_bytes: Some(24 << 30),
            os: "linux".into(),
            hostname: "bench-1".into(),
            stampede_version: "0.1.0".into(),
            fd_limit: Some(FdLimit {
                soft: 20_000,
                hard: Some(20_000),
                needed: 8_200,
                raised_from: Some(1_024),
            }),
            network: vec![crate::model::NetInterface {
                name: "eth0".into(),
                speed_mbps: Some(10_000),
            }],
        },
    };
    r.connections.setup = Some(ConnectionSetup {
        opened: 8_000,
        rate_per_s: 1_234.5,
        concurrency: 64,
        retries: 3,
        socket_io: Some("io_uring (2 of 2 engine threads)".into()),
        abandoned: Some(2),
    });
    r.connections.aborted = vec![AbortedClient {
        client_id: 3,
        reason: "connection to server was lost".into(),
    }];
    r.checks = vec![
        Check {
            name: "commit count reconciliation".into(),
            status: CheckStatus::Passed,
            detail: "1526 committed, server counted 1526".into(),
        },
        Check {
            name: "tpcb balance invariant".into(),
            status: CheckStatus::Skipped,
            detail: "not a TPC-B run".into(),
        },
    ];
    // Two progress intervals (arbitrary content: only the shape matters to these tests).
    let mut first = Interval::new(2, 0);
    first.end_us = 1_000_000;
    first.txns[0].latency.record(1_500);
    first.txns[0].lag.record(300);
    first.txns[1].failures = [1, 0, 0];
    first.txns[1].retries = 2;
    first.txns[1].retried = 1;
    let mut second = r.total.clone();
    second.start_us = 1_000_000;
    r.intervals = vec![first, second];
    r
}

/// [`multi_rate_tries`] observed on MariaDB: with [`mysql_server_metrics`].
pub fn mysql_observed_run() -> RunResult {
    let mut r = multi_rate_tries();
    r.target.conninfo = "mysql://root@db1:3306,db2:3306/sbtest".into();
    r.environment.server.version = "10.11.19-MariaDB-0+deb12u1".into();
    r.environment.server.version_num = None;
    r.environment.server.settings = BTreeMap::from([
        (
            "innodb_buffer_pool_size".to_string(),
            "134217728".to_string(),
        ),
        (
            "innodb_flush_log_at_trx_commit".to_string(),
            "1".to_string(),
        ),
        ("max_connections".to_string(), "151".to_string()),
    ]);
    r.server_metrics = Some(mysql_server_metrics());
    r
}

/// [`multi_rate_tries`] observed: with [`server_metrics`].
pub fn observed_run() -> RunResult {
    let mut r = multi_rate_tries();
    r.server_metrics = Some(server_metrics());
    r
}

/// [`observed_run`] of `oltp_read_write`: with a [`sysbench_section`].
pub fn sysbench_run() -> RunResult {
    let mut r = observed_run();
    r.sysbench = Some(sysbench_section(&r));
    r
}
