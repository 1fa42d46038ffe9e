//! Test fixtures: each workload family's section of a result (sysbench, failover, TPC-C,
//! a sweep, a fleet), filled as its run fills it.

use std::collections::BTreeMap;

use crate::model::*;

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

/// A sweep over clients 1, 2, 4, 8 with its knee at 2: 1 failed a check, 8 lost clients.
pub fn sweep_section() -> crate::sweep::SweepSection {
    let step = |v: &str, tps: f64, p99: f64| crate::sweep::SweepStep {
        value: v.into(),
        group: None,
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
        own: crate::sweep::StepSeries {
            step_s: 5.0,
            scale: 1,
            ..Default::default()
        },
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
    // The last step's own series, every field set (the schema test reads it).
    for (i, x) in steps.iter_mut().enumerate() {
        let n = (i + 1) as f64;
        x.own.committed_by_type = [("new-order".to_string(), 100 * (i as u64 + 1))].into();
        x.own.metrics = vec![crate::section::Metric {
            name: "tpmC".into(),
            unit: "New-Orders/min".into(),
            value: 1200.0 * n,
        }];
        x.own.counters_s = 5.0;
        x.own.counters = [
            (
                "mysql.Com_select".to_string(),
                crate::sweep::StepCounter {
                    delta: 1000.0 * n,
                    per_s: 200.0 * n,
                },
            ),
            (
                "mysql.Innodb_rows_read".to_string(),
                crate::sweep::StepCounter {
                    delta: 5000.0 * n,
                    per_s: 1000.0 * n,
                },
            ),
        ]
        .into();
        x.own.checks = vec![crate::Check {
            name: "commit count".into(),
            status: crate::CheckStatus::Passed,
            detail: "as counted".into(),
        }];
        x.own.rows = [("pgbench_accounts".to_string(), 100_000 * (i as u64 + 1))].into();
        x.own.scale = i as u32 + 1;
    }
    crate::sweep::SweepSection {
        parameter: "clients".into(),
        warmup_s: 1.0,
        knee: crate::sweep::find_knee(&steps),
        steps,
        ..Default::default()
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
