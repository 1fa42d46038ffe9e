//! Time `init tpcc` against a server, for the numbers in `tpcc`'s module header; or, with
//! `generate`, time generating the rows alone (no server: what the client's CPU costs).
//!
//! ```text
//! cargo run --release -p load --example measure_tpcc -- <socket dir> <port> <db> <warehouses> <jobs> [no-vacuum]
//! cargo run --release -p load --example measure_tpcc -- generate <warehouses>
//! ```
//! (A socket directory of `-` starts an embedded server, with stampede's default settings, and
//! removes it afterwards.)

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use load::tpcc::{self, rows::Generator, InitOptions, Table};

fn generate(warehouses: u64) {
    let g = Generator::new(0, "2024-01-01 00:00:00");
    let mut out = Vec::with_capacity(1 << 20);
    let mut total = 0.0;
    for t in Table::ALL {
        let units = t.per_warehouse().map_or(100_000, |n| n * warehouses);
        let started = Instant::now();
        let (mut rows, mut bytes) = (0u64, 0u64);
        for u in 0..units {
            rows += g.write(t, u, &mut out);
            if out.len() > 256 * 1024 {
                bytes += out.len() as u64;
                out.clear();
            }
        }
        bytes += out.len() as u64;
        out.clear();
        let s = started.elapsed().as_secs_f64();
        total += s;
        println!(
            "{:<10} {rows:>10} rows {:>8.1} MB {:>6.2} s  {:>4.0} bytes/row",
            t.name(),
            bytes as f64 / 1e6,
            s,
            bytes as f64 / rows as f64
        );
    }
    println!("generated in {total:.2} s (one thread)");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    if arg(0) == "generate" {
        generate(arg(1).parse().unwrap_or(1));
        return;
    }
    let (cfg, _server) = common::server(&args);
    let opts = InitOptions {
        warehouses: arg(3).parse().unwrap_or(10),
        jobs: arg(4).parse().unwrap_or(2),
        no_vacuum: args.iter().any(|a| a == "no-vacuum"),
        cancel: Arc::new(AtomicBool::new(false)),
        ..Default::default()
    };
    let report = common::runtime()
        .block_on(tpcc::init(&cfg.clone().into(), &opts, &mut |e| match e {
            load::Event::Notice(n) => eprintln!("notice: {n}"),
            load::Event::StepFinished { step, elapsed } => {
                eprintln!("{step}: {:.2} s", elapsed.as_secs_f64())
            }
            _ => {}
        }))
        .expect("init");
    println!("{}", report.plan);
    println!(
        "rows {:?} ({} in all)",
        report.rows,
        report.rows.iter().sum::<u64>()
    );
    println!(
        "frozen tasks {}, plain tasks {}",
        report.frozen_tasks, report.plain_tasks
    );
    println!("{}", report.timings);
}
