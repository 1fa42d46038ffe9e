//! Test fixtures: histograms built to print given pgbench numbers, and results mirroring runs of
//! the real pgbench 15.18 (outputs captured verbatim in the tests that use them).

use std::collections::BTreeMap;

use measure::{Histogram, Interval, StmtStats, TxnStats};

use crate::model::*;

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
        schema_version: SCHEMA_VERSION,
        stampede_version: "0.1.0".into(),
        command_line: vec!["stampede".into(), "run".into()],
        started_at: "2024-05-01T12:00:00.000Z".into(),
        measured_duration_s: duration_s,
        config,
        target: TargetInfo {
            conninfo: "host=/tmp port=5499 user=postgres".into(),
            embedded: None,
        },
        environment: Environment::default(),
        connections: ConnectionStats {
            initial_connect_ms: connect_ms,
            clients,
            reconnect_total_ms: None,
            aborted: vec![],
            setup: None,
        },
        intervals: vec![],
        total: Interval {
            start_us: 0,
            end_us,
            txns,
        },
        checks: vec![],
        interrupted: false,
        server_metrics: None,
        sysbench: None,
        tpcc: None,
        endpoints: Vec::new(),
        endpoints_warning: None,
        failover: None,
        replication: Vec::new(),
        routing: Vec::new(),
        cache_curve: None,
        iibench: None,
        sweep: None,
        connection_storm: None,
        ledger: None,
        fleet: None,
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

/// Server metrics of a 3 s commit-heavy run with `synchronous_commit = on` (seed 002's story:
/// sessions wait on the WAL flush in the commit), shaped like what `observe` returns on
/// PostgreSQL 15: every part filled, for the schema, text and HTML tests.
pub fn server_metrics() -> measure::ServerMetrics {
    use measure::server::*;
    let sample = |t: i64, waits: &[(&str, u32)], locks: u32| ActivitySample {
        t_ms: t,
        active: waits.iter().map(|w| w.1).sum(),
        waits: waits.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
        states: BTreeMap::from([
            ("active".to_string(), waits.iter().map(|w| w.1).sum()),
            ("idle in transaction".to_string(), 2),
            ("idle".to_string(), 1),
        ]),
        lock_waits: locks,
        hidden: 0,
        // A standby's walsender, apart from the load.
        background: BTreeMap::from([("walsender".to_string(), 1)]),
    };
    let activity = vec![
        sample(-150, &[], 0),
        sample(0, &[("LWLock:WALWrite", 3), ("CPU", 1)], 0),
        sample(
            1000,
            &[("LWLock:WALWrite", 4), ("IO:WALSync", 1), ("CPU", 2)],
            1,
        ),
        sample(
            2000,
            &[("LWLock:WALWrite", 3), ("IO:WALSync", 1), ("CPU", 1)],
            0,
        ),
        sample(
            3000,
            &[
                ("LWLock:WALWrite", 4),
                ("IO:WALSync", 1),
                ("Lock:transactionid", 1),
            ],
            2,
        ),
    ];
    let waits = wait_totals(activity.iter().filter(|s| s.t_ms >= 0));
    let stmt =
        |id: i64, q: &str, calls: u64, total: f64, rows: u64, hit: u64, read: u64| StatementDelta {
            query_id: Some(id),
            query: q.into(),
            calls,
            total_exec_time_ms: total,
            mean_exec_time_ms: total / calls as f64,
            rows,
            shared_blks_hit: hit,
            shared_blks_read: read,
            wal_bytes: Some(calls as f64 * 120.0),
            rows_examined: None,
        };
    let statements = vec![
        stmt(101, "END", 9000, 8123.5, 0, 0, 0),
        stmt(
            102,
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
            9000,
            1210.25,
            9000,
            45210,
            312,
        ),
        stmt(103, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", 9000, 201.0, 9000, 27000, 0),
        stmt(
            104,
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
            9000,
            150.75,
            9000,
            9100,
            20,
        ),
        stmt(105, "BEGIN", 9000, 12.0, 0, 0, 0),
    ];
    let mut total = StatementDelta {
        query: "all statements".into(),
        ..Default::default()
    };
    for s in &statements {
        total.calls += s.calls;
        total.total_exec_time_ms += s.total_exec_time_ms;
        total.rows += s.rows;
        total.shared_blks_hit += s.shared_blks_hit;
        total.shared_blks_read += s.shared_blks_read;
        total.wal_bytes = Some(total.wal_bytes.unwrap_or(0.0) + s.wal_bytes.unwrap_or(0.0));
    }
    total.mean_exec_time_ms = total.total_exec_time_ms / total.calls as f64;
    let counter = |t: i64, k: f64, ckpt: f64| CounterSample {
        t_ms: t,
        values: BTreeMap::from([
            ("database.xact_commit".to_string(), 1000.0 + 3000.0 * k),
            (
                "database.xact_rollback".to_string(),
                5.0 + (k * 2.0 / 3.0).floor(),
            ),
            ("database.blks_hit".to_string(), 100_000.0 + 30_000.0 * k),
            ("database.blks_read".to_string(), 500.0 + 111.0 * k),
            ("database.deadlocks".to_string(), 0.0),
            ("database.temp_files".to_string(), 0.0),
            ("database.temp_bytes".to_string(), 0.0),
            ("database.conflicts".to_string(), 0.0),
            ("wal.wal_bytes".to_string(), 1e6 + 1.2e6 * k),
            ("wal.wal_records".to_string(), 10_000.0 + 15_000.0 * k),
            ("wal.wal_fpi".to_string(), 100.0 + 40.0 * k),
            ("wal.wal_sync".to_string(), 50.0 + 2_500.0 * k),
            ("bgwriter.checkpoints_timed".to_string(), 3.0),
            ("bgwriter.checkpoints_req".to_string(), 7.0 + ckpt),
            ("bgwriter.buffers_clean".to_string(), 0.0),
        ]),
    };
    let counters = vec![
        counter(-150, 0.0, 0.0),
        counter(0, 0.0, 0.0),
        counter(1000, 1.0, 0.0),
        counter(2000, 2.0, 1.0),
        counter(3000, 3.0, 1.0),
    ];
    let deltas = counters[4]
        .values
        .iter()
        .map(|(k, v)| (k.clone(), v - counters[1].values[k]))
        .collect();
    let os = (1..=3)
        .map(|i| OsSample {
            t_ms: i * 1000,
            cpu_user_pct: 30.0 + i as f64,
            cpu_system_pct: 20.0,
            cpu_iowait_pct: 15.0,
            cpu_idle_pct: 35.0 - i as f64,
            client_cpu_pct: 40.0,
            server_cpu_pct: Some(110.0 + 5.0 * i as f64),
            mem_available_bytes: 20 << 30,
            mem_total_bytes: 24 << 30,
            disk_read_bytes_per_s: 0.0,
            disk_write_bytes_per_s: 24.0 * 1024.0 * 1024.0,
        })
        .collect();
    measure::ServerMetrics {
        sample_interval_ms: 1000,
        counter_interval_ms: 1000,
        server_version_num: 150018,
        product: Some("PostgreSQL".into()),
        window_start_ms: 0,
        window_end_ms: 3000,
        cost: ObserverCost {
            samples: 5,
            queries: 36,
            busy_ms: 21.5,
            max_sample_ms: 4.2,
            cpu_ms: 3.1,
            connections: 1,
            errors: 0,
        },
        notes: vec![Note {
            topic: "pg_stat_io".into(),
            message: "pg_stat_io needs PostgreSQL 16 or later: no I/O by backend type".into(),
        }],
        activity,
        waits,
        background: vec![BackgroundTotal {
            kind: "walsender".into(),
            samples: 4,
            aas: 1.0,
            waits: vec![
                WaitTotal {
                    event: "Activity:WalSenderMain".into(),
                    samples: 3,
                    aas: 0.75,
                },
                WaitTotal {
                    event: "IO:WALRead".into(),
                    samples: 1,
                    aas: 0.25,
                },
            ],
        }],
        query_waits: vec![
            QueryWait {
                query_id: 101,
                event: "LWLock:WALWrite".into(),
                samples: 14,
            },
            QueryWait {
                query_id: 101,
                event: "IO:WALSync".into(),
                samples: 3,
            },
            QueryWait {
                query_id: 102,
                event: "CPU".into(),
                samples: 3,
            },
            QueryWait {
                query_id: 102,
                event: "Lock:transactionid".into(),
                samples: 1,
            },
        ],
        statements,
        statements_total: Some(total),
        counters,
        deltas,
        io: vec![IoDelta {
            backend_type: "client backend".into(),
            object: "relation".into(),
            context: "normal".into(),
            values: BTreeMap::from([("hits".to_string(), 81_000.0), ("reads".to_string(), 332.0)]),
        }],
        os,
        wait_times: Vec::new(),
        nodes: Vec::new(),
        endpoints: Vec::new(),
    }
}

/// What the observer sees on a two-node MariaDB Galera cluster: sessions by performance_schema
/// wait, digests, InnoDB's and Galera's status counters, waits by time, both nodes' wsrep status.
pub fn mysql_server_metrics() -> measure::ServerMetrics {
    use measure::server::*;
    let sample = |t: i64, waits: &[(&str, u32)], locks: u32| ActivitySample {
        t_ms: t,
        active: waits.iter().map(|w| w.1).sum(),
        waits: waits.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
        states: BTreeMap::from([
            ("active".to_string(), waits.iter().map(|w| w.1).sum()),
            ("idle in transaction".to_string(), 1),
            ("idle".to_string(), 2),
        ]),
        lock_waits: locks,
        hidden: 0,
        background: BTreeMap::new(),
    };
    let activity = vec![
        sample(0, &[("IO:file/innodb/innodb_log_file", 2), ("CPU", 1)], 0),
        sample(
            1000,
            &[
                ("IO:file/innodb/innodb_log_file", 3),
                ("Synch:mutex/innodb/trx_sys_mutex", 1),
                ("CPU", 1),
            ],
            1,
        ),
        sample(
            2000,
            &[("IO:file/innodb/innodb_log_file", 2), ("CPU", 2)],
            2,
        ),
    ];
    let waits = wait_totals(&activity);
    let stmt =
        |id: i64, q: &str, calls: u64, total: f64, rows: u64, examined: u64| StatementDelta {
            query_id: Some(id),
            query: q.into(),
            calls,
            total_exec_time_ms: total,
            mean_exec_time_ms: total / calls as f64,
            rows,
            rows_examined: Some(examined),
            ..Default::default()
        };
    let statements = vec![
        stmt(0x7a01, "COMMIT", 3000, 2400.0, 0, 0),
        stmt(
            0x7a02,
            "UPDATE `sbtest1` SET `k` = `k` + ? WHERE `id` = ?",
            3000,
            610.5,
            3000,
            3000,
        ),
        stmt(
            0x7a03,
            "SELECT `c` FROM `sbtest1` WHERE `id` BETWEEN ? AND ? ORDER BY `c`",
            3000,
            420.25,
            300_000,
            600_000,
        ),
    ];
    let mut total = StatementDelta {
        query: "all statements".into(),
        rows_examined: Some(0),
        ..Default::default()
    };
    for s in &statements {
        total.calls += s.calls;
        total.total_exec_time_ms += s.total_exec_time_ms;
        total.rows += s.rows;
        total.rows_examined = Some(total.rows_examined.unwrap_or(0) + s.rows_examined.unwrap_or(0));
    }
    total.mean_exec_time_ms = total.total_exec_time_ms / total.calls as f64;
    let wsrep = |k: f64, paused_ns: f64, queue: f64| -> Vec<(String, f64)> {
        vec![
            ("mysql.wsrep_flow_control_paused_ns".into(), paused_ns),
            ("mysql.wsrep_local_recv_queue".into(), queue),
            ("mysql.wsrep_local_send_queue".into(), 0.0),
            ("mysql.wsrep_local_cert_failures".into(), 2.0 * k),
            ("mysql.wsrep_local_bf_aborts".into(), k),
            ("mysql.wsrep_replicated".into(), 1000.0 * k),
        ]
    };
    let counter = |t: i64, k: f64| {
        let mut values: BTreeMap<String, f64> = [
            ("mysql.Com_commit", 1000.0 * k),
            ("mysql.Com_rollback", 3.0 * k),
            ("mysql.Innodb_buffer_pool_read_requests", 1e6 + 4e5 * k),
            ("mysql.Innodb_buffer_pool_reads", 100.0 + 40.0 * k),
            ("mysql.Innodb_data_read", 1.6e6 + 655_360.0 * k),
            ("mysql.Innodb_os_log_written", 5e6 + 3e6 * k),
            ("mysql.Innodb_log_writes", 10.0 + 900.0 * k),
            ("mysql.Innodb_log_waits", 0.0),
            ("mysql.Innodb_row_lock_waits", 4.0 * k),
            ("mysql.Innodb_row_lock_time", 7.0 * k),
            ("mysql.Innodb_deadlocks", 0.0),
            (
                "mysql.Innodb_history_list_length",
                [12.0, 80.0, 140.0, 95.0][k as usize],
            ),
            ("mysql.Threads_running", [1.0, 6.0, 9.0, 5.0][k as usize]),
            ("mysql.Threads_connected", 9.0),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v))
        .collect();
        values.extend(wsrep(k, 2e6 * k, k));
        CounterSample { t_ms: t, values }
    };
    let counters: Vec<CounterSample> = (0..4).map(|k| counter(k * 1000, k as f64)).collect();
    let deltas = counters[3]
        .values
        .iter()
        .map(|(k, v)| (k.clone(), v - counters[0].values[k]))
        .collect();
    let node = |endpoint: &str, scale: f64| {
        let counters: Vec<CounterSample> = (0..4)
            .map(|k| CounterSample {
                t_ms: k * 1000,
                values: wsrep(k as f64, 2e6 * scale * k as f64, scale * k as f64)
                    .into_iter()
                    .collect(),
            })
            .collect();
        let deltas = counters[3]
            .values
            .iter()
            .map(|(k, v)| (k.clone(), v - counters[0].values[k]))
            .collect();
        NodeMetrics {
            endpoint: endpoint.into(),
            counters,
            deltas,
        }
    };
    measure::ServerMetrics {
        sample_interval_ms: 100,
        counter_interval_ms: 1000,
        server_version_num: 101119,
        product: Some("MariaDB".into()),
        window_start_ms: 0,
        window_end_ms: 3000,
        cost: ObserverCost {
            samples: 30,
            queries: 41,
            busy_ms: 35.0,
            max_sample_ms: 3.5,
            cpu_ms: 7.0,
            connections: 2,
            errors: 0,
        },
        notes: vec![Note {
            topic: "query_id".into(),
            message: "waits are not joined to statements: performance_schema gives a running \
                      statement its digest only when it ends"
                .into(),
        }],
        activity,
        waits,
        background: Vec::new(),
        query_waits: Vec::new(),
        statements,
        statements_total: Some(total),
        counters,
        deltas,
        io: Vec::new(),
        os: Vec::new(),
        wait_times: vec![
            WaitTime {
                event: "IO:file/innodb/innodb_log_file".into(),
                count: 2700,
                total_ms: 1830.5,
            },
            WaitTime {
                event: "IO:table/sql/handler".into(),
                count: 45_000,
                total_ms: 310.25,
            },
            WaitTime {
                event: "Lock:table/sql/handler".into(),
                count: 9000,
                total_ms: 4.5,
            },
        ],
        nodes: vec![node("db1:3306", 1.0), node("db2:3306", 0.0)],
        endpoints: Vec::new(),
    }
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

/// A sysbench section over `r`'s run, as `run oltp_read_write` fills it.
pub fn sysbench_section(r: &RunResult) -> crate::SysbenchSection {
    crate::SysbenchSection {
        test: "oltp_read_write".into(),
        options: BTreeMap::from([
            ("tables".to_string(), "16".to_string()),
            ("table-size".to_string(), "10000".to_string()),
        ]),
        reads_per_txn: 14,
        writes_per_txn: 4,
        other_per_txn: 2,
        warmup_s: 0.0,
        window: r.total.clone(),
        percentile: 95.0,
        reconnects: 0,
        ..Default::default()
    }
}

/// A failover section with every field set (for the schema tests and renderers).
pub fn failover_section() -> crate::failover::FailoverSection {
    use crate::failover::*;
    let lat = |p50_ms: f64| Latency {
        count: 100,
        p50_ms,
        p95_ms: 2.0 * p50_ms,
        p99_ms: 3.0 * p50_ms,
        max_ms: 4.0 * p50_ms,
    };
    FailoverSection {
        fault_at_s: 10.0,
        no_fault_time: false,
        fault_cmd: Some("pg_ctl promote -D /data".into()),
        fault_exit_status: Some(0),
        detect_s: Some(0.012),
        write_downtime_s: 1.75,
        write_window: Some(Window {
            from_s: 9.99,
            to_s: 11.74,
            open: false,
        }),
        read_downtime_s: 0.5,
        read_window: Some(Window {
            from_s: 10.0,
            to_s: 10.5,
            open: false,
        }),
        last_write_old_primary: Some(HostTime {
            host: "/tmp/a:5432".into(),
            at_s: 9.99,
        }),
        first_write_new_primary: Some(HostTime {
            host: "/tmp/b:5433".into(),
            at_s: 11.74,
        }),
        errors: vec![ErrorSecond {
            second: 10,
            op: ErrorSecond::WRITE.into(),
            kind: "terminated by administrator".into(),
            count: 4,
        }],
        timeline: (0..20)
            .map(|second| Second {
                second,
                writes: if second == 10 || second == 11 { 0 } else { 50 },
                reads: 50,
                errors: if second == 10 { 4 } else { 0 },
            })
            .collect(),
        reconnects: Reconnects {
            attempts: 9,
            succeeded: 4,
            latency_ms: Some(lat(0.4)),
        },
        clients_ended_on: vec![HostClients {
            host: "/tmp/b:5433".into(),
            clients: 4,
        }],
        latency: Phases {
            before: Some(lat(0.5)),
            during: Some(lat(900.0)),
            after: Some(lat(0.6)),
        },
        writes: WriteCounts {
            attempted: 1004,
            acknowledged: 1000,
            failed: 2,
            unknown: 2,
        },
        reads: ReadCounts {
            attempted: 1000,
            succeeded: 1000,
            failed: 0,
        },
        hosts: vec![
            HostAttempts {
                host: "/tmp/a:5432".into(),
                writes: 500,
                reads: 500,
                failed: 4,
            },
            HostAttempts {
                host: "/tmp/b:5433".into(),
                writes: 500,
                reads: 500,
                failed: 0,
            },
        ],
        lost_writes: 0,
        in_doubt_writes: 1,
        duplicate_writes: 0,
        unexpected_writes: 0,
        lost_seqs: vec![7],
        in_doubt_seqs: vec![501],
        duplicate_seqs: vec![9],
        audited_on: Some("/tmp/b:5433".into()),
        audit_error: Some("(set in the sample only: never with audited_on)".into()),
    }
}

/// A TPC-C section with every field set (for the schema tests and renderers).
pub fn tpcc_section() -> crate::TpccSection {
    crate::TpccSection {
        warehouses: 2,
        by_the_book: true,
        tpmc: 25.1,
        nopm: 24.8,
        tpm_total: 55.7,
        efficiency_pct: 97.6,
        rollbacks: 1,
        retries: 2,
        delivery_skipped: 0,
        remote_lines: 3,
        lines: 250,
        by_last_name: 14,
        response_limits: vec![crate::TpccLimit {
            txn_type: "new-order".into(),
            count: 25,
            p90_ms: 12.5,
            limit_ms: 5000.0,
            met: true,
        }],
        consistency: vec![crate::TpccCondition {
            clause: "3.3.2.1".into(),
            rule: "W_YTD = sum(D_YTD)".into(),
            violations: 0,
            applies: true,
        }],
    }
}

/// An iibench section whose indexes outgrew the cache halfway.
pub fn iibench_section() -> crate::iibench::IibenchSection {
    use crate::iibench::{IibenchPoint, IibenchSection, IndexSample};
    let mut t = IibenchSection {
        rows_per_commit: 1000,
        insert_clients: 1,
        query_clients: 1,
        rows_inserted: 40_000,
        insert_rows_per_s: 10_000.0,
        queries_per_s: 120.0,
        series: (1..=4)
            .map(|i| IibenchPoint {
                t_s: f64::from(i),
                insert_rows_per_s: 10_000.0,
                queries_per_s: 120.0,
            })
            .collect(),
        cache_bytes: 1 << 20,
        cache_setting: "shared_buffers".into(),
        index_samples: (0..8)
            .map(|i| IndexSample {
                t_s: f64::from(i) * 0.5,
                index_bytes: (i as u64 + 1) << 18,
            })
            .collect(),
        outgrown: None,
    };
    t.locate_outgrown();
    t
}

/// A sweep over clients 1, 2, 4, 8 with its knee at 2: 1 failed a check, 8 lost clients.
pub fn sweep_section() -> crate::sweep::SweepSection {
    let step = |v: &str, tps: f64, p99: f64| crate::sweep::SweepStep {
        value: v.into(),
        tps,
        mean_ms: p99 / 2.0,
        p50_ms: p99 / 2.0,
        p95_ms: p99 * 0.9,
        p99_ms: p99,
        max_ms: p99 * 2.0,
        transactions: (tps * 4.0) as u64,
        failures: 0,
        failures_by_kind: crate::EndpointFailures::default(),
        measured_s: 4.0,
        clients: v.parse().unwrap_or(1),
        aborted_clients: 0,
        aborts: Vec::new(),
        failed_checks: Vec::new(),
    };
    let mut steps = vec![
        step("1", 500.0, 2.0),
        step("2", 990.0, 2.1),
        step("4", 1000.0, 4.5),
        step("8", 300.0, 9.0),
    ];
    // The first step failed a check; the last lost clients (MariaDB's error 1461) and had
    // failures: neither may be the knee or its comparison.
    steps[0].failed_checks = vec!["commit count".into()];
    steps[3].aborted_clients = 5;
    steps[3].aborts = vec![crate::sweep::AbortReason {
        reason: "1461 (42000): Can't create more than max_prepared_stmt_count statements \
                 (current value: 4)"
            .into(),
        clients: 5,
    }];
    steps[3].failures = 3;
    steps[3].failures_by_kind.other = 3;
    crate::sweep::SweepSection {
        parameter: "clients".into(),
        warmup_s: 1.0,
        knee: crate::sweep::find_knee(&steps),
        steps,
    }
}

/// A connection storm with every part filled.
pub fn storm_section() -> crate::storm::ConnectionStormSection {
    use crate::storm::*;
    ConnectionStormSection {
        target_connections: 2000,
        connect_rate_per_s: 500.0,
        busy_clients: 2,
        attempted: 2000,
        opened: 1990,
        held_at_end: 1990,
        ramp_s: 4.0,
        connect_latency_ms: ConnectLatency {
            mean: 2.0,
            p50: 1.5,
            p90: 3.0,
            p99: 9.0,
            p999: 20.0,
            max: 25.0,
        },
        failures: vec![StormFailure {
            kind: "too_many_connections".into(),
            count: 10,
            example: "FATAL 53300: sorry, too many clients already".into(),
        }],
        memory: BackendMemory {
            source: "/proc/PID/smaps_rollup of 1990 backends".into(),
            backends: 1990,
            private_bytes_per_backend: Some(1.5e6),
            pss_bytes_per_backend: Some(2.0e6),
            rss_bytes_per_backend: Some(9.0e6),
        },
        steps: vec![StormStep {
            open_connections: 1000,
            seconds: 2.0,
            tps: 3000.0,
            p99_ms: 1.2,
        }],
    }
}

/// A merged fleet's section with every field set (for the schema tests and renderers).
pub fn fleet_section() -> crate::FleetSection {
    crate::FleetSection {
        name: "nightly".into(),
        size: 3,
        start_server_us: 1_764_000_000_000_000,
        processes: vec![crate::FleetProcess {
            index: 0,
            hostname: "driver-0".into(),
            clients: 8,
            first_client_id: 0,
            transactions: 1000,
            failed: 1,
            tps: 100.0,
            share_pct: 50.0,
            clock_offset_us: -120,
            rtt_us: 80,
            started_server_us: 1_764_000_000_000_300,
            duration_s: 10.0,
            cpu_pct: 95.0,
            rate_tps: Some(150.0),
            server_commits: 1017,
            lagging: vec!["its CPU was saturated (95%)".into()],
            failed_commits: 2,
            uncounted: Some("its transactions are autocommitted statements".into()),
        }],
        lost: vec![2],
        commit_check: Some(crate::Check {
            name: "fleet commit count".into(),
            status: crate::CheckStatus::Skipped,
            detail: "cannot be exact".into(),
        }),
    }
}
