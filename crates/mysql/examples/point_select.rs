//! Client CPU per prepared point select, for the comparison with sysbench's MySQL driver whose
//! figures are in the session's module header (`crates/mysql/src/session/mod.rs`): one session
//! runs N executions of sysbench's oltp_point_select statement on sysbench's table (made by
//! `sysbench oltp_point_select --db-driver=mysql ... prepare`), then prints the process's user
//! + system CPU time per statement (getrusage) and the statements per second.
//!
//! `cargo run --release -p mysql --example point_select -- URL N [TABLE_SIZE]`

use std::time::Instant;

use mysql::{Conninfo, Session};
use pg::{QueryMode, Value};

fn cpu_us() -> u64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).expect("URL");
    let n: u64 = args.get(2).map_or(100_000, |s| s.parse().unwrap());
    let size: i64 = args.get(3).map_or(10_000, |s| s.parse().unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut s = Session::connect(&Conninfo::parse(url).unwrap())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let st = s.register("SELECT c FROM sbtest1 WHERE id=?", QueryMode::Prepared);
        s.prepare_all().await.unwrap();
        // A small xorshift, as sysbench draws ids uniformly.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let (cpu0, t0) = (cpu_us(), Instant::now());
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = (x % size as u64) as i64 + 1;
            let r = s.execute(st, &[Value::Int(id)]).await.unwrap();
            assert_eq!(r.rows, 1);
        }
        let (cpu, secs) = (cpu_us() - cpu0, t0.elapsed().as_secs_f64());
        println!(
            "{n} point selects: {:.2} us client CPU each, {:.0} per second",
            cpu as f64 / n as f64,
            n as f64 / secs
        );
        s.close().await;
    });
}
