//! Time `init tpcb` plans against a running server, for the numbers in `tpcb`'s module header.
//!
//! ```text
//! cargo run --release -p load --example measure_load -- <socket dir> <port> <db> <scale> <jobs> \
//!     [partitions [range|hash]] [server]
//! ```
//! (Without a socket directory argument of `-`, an embedded server is started and removed.)

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use load::tpcb::{self, Generate, InitOptions, PartitionMethod};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let (cfg, _server) = common::server(&args);
    let partitions: u32 = arg(5).parse().unwrap_or(0);
    let opts = InitOptions {
        scale: arg(3).parse().unwrap_or(10),
        jobs: arg(4).parse().unwrap_or(1),
        partitions,
        partition_method: match arg(6).as_str() {
            "hash" => Some(PartitionMethod::Hash),
            "range" => Some(PartitionMethod::Range),
            _ => None,
        },
        generate: if args.iter().any(|a| a == "server") {
            Generate::ServerSide
        } else {
            Generate::ClientSide
        },
        cancel: Arc::new(AtomicBool::new(false)),
        ..Default::default()
    };
    let report = common::runtime()
        .block_on(tpcb::init(&cfg.clone().into(), &opts, &mut |e| {
            if let load::Event::Notice(n) = e {
                eprintln!("notice: {n}");
            }
        }))
        .expect("init");
    println!("{}", report.plan);
    println!(
        "frozen tasks {}, plain tasks {}",
        report.frozen_tasks, report.plain_tasks
    );
    println!("{}", report.timings);
}
