//! Build a run result from a pgbench per-transaction log (`pgbench -l`) and, optionally, the
//! observer's `server_metrics.json`, and write the HTML report: a way to look at the report
//! without the stampede binary.
//!
//! `cargo run -p report --example html_from_pgbench -- DIR OUT.html` reads `DIR/pgbench_log.*`
//! and `DIR/server_metrics.json` (see observe's `pgbench_observed` example).

use std::collections::BTreeMap;

use measure::{Interval, TxnStats};
use report::*;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("DIR"));
    let out = args.next().expect("OUT.html");
    // (end time in us since the epoch, latency in us)
    let mut txns: Vec<(u64, u64)> = Vec::new();
    let mut clients = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if !p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("pgbench_log")
        {
            continue;
        }
        for l in std::fs::read_to_string(&p).unwrap().lines() {
            let f: Vec<u64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if f.len() >= 6 {
                clients.insert(f[0], ());
                txns.push((f[4] * 1_000_000 + f[5], f[2]));
            }
        }
    }
    let t0 = txns.iter().map(|(end, lat)| end - lat).min().unwrap_or(0);
    let end = txns.iter().map(|t| t.0).max().unwrap_or(t0) - t0;
    let mut intervals: Vec<Interval> = Vec::new();
    let n = end.div_ceil(1_000_000).max(1);
    for i in 0..n {
        let mut iv = Interval::new(1, i * 1_000_000);
        iv.end_us = ((i + 1) * 1_000_000).min(end);
        intervals.push(iv);
    }
    for (e, lat) in &txns {
        let i = (((e - t0).saturating_sub(1)) / 1_000_000) as usize;
        intervals[i.min(n as usize - 1)].txns[0]
            .latency
            .record(*lat);
    }
    let mut total = Interval::new(1, 0);
    for iv in &intervals {
        total.merge(iv);
    }
    let server_metrics = std::fs::read_to_string(dir.join("server_metrics.json"))
        .ok()
        .map(|s| serde_json::from_str(&s).expect("server_metrics.json"));
    let committed = total.txns[0].committed();
    let r = RunResult {
        command_line: "stampede run -c 8 -j 2 -T 10 -P 1"
            .split(' ')
            .map(String::from)
            .collect(),
        started_at: format_rfc3339_utc(
            std::time::UNIX_EPOCH + std::time::Duration::from_micros(t0),
        ),
        measured_duration_s: end as f64 / 1e6,
        config: RunConfig {
            workload: "tpcb".into(),
            txn_types: vec![TxnTypeConfig {
                name: "<builtin: TPC-B (sort of)>".into(),
                weight: 1,
                statements: vec![],
            }],
            clients: clients.len() as u32,
            threads: 2,
            duration_s: Some(10),
            query_mode: "simple".into(),
            max_tries: 1,
            progress_s: Some(1.0),
            random_seed: 1,
            scale: 2,
            ..Default::default()
        },
        target: TargetInfo {
            conninfo: "host=/tmp/stampede-x port=5432 user=postgres dbname=postgres".into(),
            embedded: None,
        },
        environment: Environment {
            server: ServerEnvironment {
                version: "15 (from pgbench log)".into(),
                version_num: Some(150000),
                settings: BTreeMap::from([("synchronous_commit".into(), "see command".into())]),
            },
            client: ClientEnvironment {
                cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
                cpu_model: None,
                memory_bytes: None,
                os: std::env::consts::OS.into(),
                hostname: "localhost".into(),
                stampede_version: env!("CARGO_PKG_VERSION").into(),
                fd_limit: None,
                network: Vec::new(),
            },
        },
        connections: ConnectionStats {
            initial_connect_ms: 0.0,
            clients: clients.len() as u32,
            reconnect_total_ms: None,
            aborted: vec![],
            setup: None,
        },
        intervals,
        total,
        checks: vec![Check {
            name: "commit count".into(),
            status: CheckStatus::Skipped,
            detail: format!("{committed} transactions read from a pgbench log; no server count"),
        }],
        server_metrics,
        ..Default::default()
    };
    let _ = TxnStats::default();
    std::fs::write(&out, report::html::render(&r, None)).unwrap();
    print!("{}", report::render_text(&r));
}
