//! Time `init tpcb` plans against a running server, for the numbers in `tpcb`'s module header.
//!
//! ```text
//! cargo run --release -p load --example measure_load -- <socket dir> <port> <db> <scale> <jobs> \
//!     [partitions [range|hash]] [server]
//! ```
//! (Without a socket directory argument of `-`, an embedded server is started and removed.)

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use load::tpcb::{self, Generate, InitOptions, PartitionMethod};
use sut::conninfo::HostSpec;
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::{ConnConfig, SslMode};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let mut _server = None;
    let cfg = if arg(0) == "-" || arg(0).is_empty() {
        let s = EmbeddedServer::start(&EmbeddedOptions::default()).expect("embedded server");
        let c = s.conn_config();
        _server = Some(s);
        c
    } else {
        ConnConfig {
            hosts: vec![HostSpec {
                host: arg(0),
                port: arg(1).parse().unwrap(),
            }],
            user: "postgres".into(),
            dbname: arg(2),
            password: None,
            passfile: None,
            sslmode: SslMode::Disable,
            sslrootcert: None,
            sslcert: None,
            sslkey: None,
            application_name: "stampede-measure".into(),
            connect_timeout: None,
            options: None,
            target_session_attrs: Default::default(),
            load_balance_hosts: Default::default(),
        }
    };
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
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = rt
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
