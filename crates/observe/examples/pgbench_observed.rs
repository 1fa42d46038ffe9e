//! Watch a pgbench run on a private server and save what the observer saw.
//!
//! `cargo run -p observe --example pgbench_observed -- OUT_DIR [synchronous_commit]` starts the
//! embedded PostgreSQL, loads scale 2, runs `pgbench -c 8 -j 2 -T 10 -l` (per-transaction log in
//! OUT_DIR) with a CHECKPOINT half-way, and writes OUT_DIR/server_metrics.json. The report crate's
//! `html_from_pgbench` example turns both into an HTML report.

use std::process::Command;
use std::time::{Duration, Instant};

use observe::{Options, Sampler};
use pg::embedded::{EmbeddedOptions, EmbeddedServer};

fn main() {
    let mut args = std::env::args().skip(1);
    let out = std::path::PathBuf::from(args.next().expect("OUT_DIR"));
    let sync = args.next().unwrap_or_else(|| "on".into());
    std::fs::create_dir_all(&out).unwrap();
    let server = EmbeddedServer::start(&EmbeddedOptions {
        settings: vec![
            ("shared_buffers".into(), "128MB".into()),
            ("commit_delay".into(), "0".into()),
            ("wal_buffers".into(), "64kB".into()),
        ],
        ..Default::default()
    })
    .expect("embedded server");
    let bindir = server.binaries().bindir.clone();
    let conn = |cmd: &mut Command| {
        cmd.arg("-h").arg(server.socket_dir()).args([
            "-p",
            &server.port().to_string(),
            "-U",
            "postgres",
        ]);
    };
    let mut psql = Command::new(bindir.join("psql"));
    conn(&mut psql);
    psql.args([
        "-X",
        "-q",
        "-d",
        "postgres",
        "-c",
        "CREATE EXTENSION pg_stat_statements",
    ]);
    assert!(psql.status().unwrap().success());
    let mut init = Command::new(bindir.join("pgbench"));
    conn(&mut init);
    assert!(init
        .args(["-i", "-q", "-s", "2", "postgres"])
        .status()
        .unwrap()
        .success());

    let handle = Sampler::start(&server.conn_config().clone().into(), &Options::default())
        .expect("observer");
    let mut bench = Command::new(bindir.join("pgbench"));
    conn(&mut bench);
    bench
        .current_dir(&out)
        .args(["-c", "8", "-j", "2", "-T", "10", "-n", "-l", "postgres"])
        .env("PGOPTIONS", format!("-c synchronous_commit={sync}"));
    let mut child = bench.spawn().unwrap();
    handle.mark_start(Instant::now());
    std::thread::sleep(Duration::from_secs(5));
    let mut ckpt = Command::new(bindir.join("psql"));
    conn(&mut ckpt);
    ckpt.args(["-X", "-q", "-d", "postgres", "-c", "CHECKPOINT"]);
    let _ = ckpt.status();
    assert!(child.wait().unwrap().success());
    let m = handle.finish();
    std::fs::write(
        out.join("server_metrics.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
    eprintln!(
        "{} samples, top waits {:?}",
        m.cost.samples,
        m.waits.iter().take(3).map(|w| &w.event).collect::<Vec<_>>()
    );
}
