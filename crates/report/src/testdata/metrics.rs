//! Test fixtures: what the observer gathers from a PostgreSQL and a MariaDB server over a run
//! (waits, statements, counters, the machine), for the report's server sections.

use std::collections::BTreeMap;

/// One activity sample at `t` ms: the active sessions by wait (their sum is the active count),
/// `locks` of them waiting on a lock, `idle` the (idle in transaction, idle) counts, and the
/// background processes apart from the load.
fn activity_sample(
    t: i64,
    waits: &[(&str, u32)],
    locks: u32,
    idle: (u32, u32),
    background: &[(&str, u32)],
) -> measure::server::ActivitySample {
    let active: u32 = waits.iter().map(|w| w.1).sum();
    measure::server::ActivitySample {
        t_ms: t,
        active,
        waits: waits.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
        states: BTreeMap::from([
            ("active".to_string(), active),
            ("idle in transaction".to_string(), idle.0),
            ("idle".to_string(), idle.1),
        ]),
        lock_waits: locks,
        hidden: 0,
        background: background
            .iter()
            .map(|(p, n)| (p.to_string(), *n))
            .collect(),
    }
}

/// A statement's counts that both servers report: `calls` taking `total` ms, returning `rows`.
fn statement(
    id: i64,
    q: &str,
    calls: u64,
    total: f64,
    rows: u64,
) -> measure::server::StatementDelta {
    measure::server::StatementDelta {
        query_id: Some(id),
        query: q.into(),
        calls,
        total_exec_time_ms: total,
        mean_exec_time_ms: total / calls as f64,
        rows,
        ..Default::default()
    }
}

/// Server metrics of a 3 s commit-heavy run with `synchronous_commit = on` (seed 002's story:
/// sessions wait on the WAL flush in the commit), shaped like what `observe` returns on
/// PostgreSQL 15: every part filled, for the schema, text and HTML tests.
pub fn server_metrics() -> measure::ServerMetrics {
    use measure::server::*;
    // Two sessions idle in a transaction, one idle; a standby's walsender, apart from the load.
    let sample = |t, waits: &[(&str, u32)], locks| {
        activity_sample(t, waits, locks, (2, 1), &[("walsender", 1)])
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
            shared_blks_hit: hit,
            shared_blks_read: read,
            wal_bytes: Some(calls as f64 * 120.0),
            ..statement(id, q, calls, total, rows)
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
            cpu_modes_pct: [("user", 30.0), ("iowait", 15.0), ("idle", 35.0)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            mem_cached_bytes: 8 << 30,
            mem_dirty_bytes: 64 << 20,
            devices: vec![measure::server::DeviceSample {
                device: "nvme0n1".into(),
                holds: Some("data directory, WAL".into()),
                reads_per_s: 10.0 * i as f64,
                writes_per_s: 3000.0,
                read_bytes_per_s: 81920.0 * i as f64,
                write_bytes_per_s: 24.0 * 1024.0 * 1024.0,
                read_latency_ms: Some(0.2),
                write_latency_ms: Some(0.05 * i as f64),
                queue_depth: 1.5,
                util_pct: 40.0,
            }],
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
        os_machine: Some("server".into()),
        counter_constants: BTreeMap::from([("tables.vacuum_count".to_string(), 0.0)]),
    }
}

/// What the observer sees on a two-node MariaDB Galera cluster: sessions by performance_schema
/// wait, digests, InnoDB's and Galera's status counters, waits by time, both nodes' wsrep status.
pub fn mysql_server_metrics() -> measure::ServerMetrics {
    use measure::server::*;
    let sample = |t, waits: &[(&str, u32)], locks| activity_sample(t, waits, locks, (1, 2), &[]);
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
            rows_examined: Some(examined),
            ..statement(id, q, calls, total, rows)
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
        ..Default::default()
    }
}
