//! The floor of a thread-per-client driver: the least a client can do for pgbench's select-only
//! prepared transaction, one OS thread per connection with a blocking socket, and nothing else
//! (no timing, no histogram, no error handling beyond stopping, the Bind/Execute/Sync request
//! built by hand, the reply scanned for ReadyForQuery). stampede's `--io threads` is measured
//! against it in the io-modes table (bench/io_modes_case.py): what `--io threads` costs above
//! this line is stampede's, what this line costs above pgbench is the design's (on a 2-core
//! machine: the kernel's wake-up of a thread per reply).
//!
//! Not part of the workspace: compiled by the bench with `rustc -O` (std only).
//! Usage: floor SOCKET_PATH|HOST:PORT CLIENTS SECONDS  (user and database `postgres`, trust
//! authentication, pgbench's tables at any scale: aid drawn from 1..100,000 * scale).
//! Prints pgbench's `tps = ` and `number of transactions actually processed: ` lines.

#[path = "floor_conn.rs"]
mod conn;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use conn::{connect, Conn};

fn message(tag: u8, body: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    out.extend_from_slice(body);
}

/// Reads until a whole ReadyForQuery; returns the last DataRow's first column read as a text
/// integer (0 if none or not text).
fn until_ready(s: &mut dyn Conn, buf: &mut Vec<u8>, scratch: &mut [u8]) -> i64 {
    let mut value = 0;
    loop {
        let mut i = 0;
        while i + 5 <= buf.len() {
            let len = u32::from_be_bytes([buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4]]) as usize;
            if i + 1 + len > buf.len() {
                break;
            }
            match buf[i] {
                b'E' => panic!(
                    "server error: {}",
                    String::from_utf8_lossy(&buf[i + 5..i + 1 + len])
                ),
                b'D' if len >= 10 => {
                    let n = i32::from_be_bytes([buf[i + 7], buf[i + 8], buf[i + 9], buf[i + 10]]);
                    let text = &buf[i + 11..(i + 11 + n.max(0) as usize).min(i + 1 + len)];
                    value = std::str::from_utf8(text)
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0);
                }
                b'Z' => {
                    buf.drain(..i + 1 + len);
                    return value;
                }
                _ => {}
            }
            i += 1 + len;
        }
        let n = s.read(scratch).expect("read");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&scratch[..n]);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: floor SOCKET_PATH|HOST:PORT CLIENTS SECONDS");
        std::process::exit(2);
    }
    let addr = args[1].clone();
    let clients: u64 = args[2].parse().expect("CLIENTS");
    let seconds: f64 = args[3].parse().expect("SECONDS");
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (addr, stop) = (addr.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut s = connect(&addr);
                let (mut buf, mut out, mut scratch) = (Vec::new(), Vec::new(), vec![0u8; 8192]);
                let mut startup = 196608u32.to_be_bytes().to_vec();
                startup.extend_from_slice(b"user\0postgres\0database\0postgres\0\0");
                out.extend_from_slice(&((startup.len() + 4) as u32).to_be_bytes());
                out.extend_from_slice(&startup);
                s.write_all(&out).unwrap();
                until_ready(&mut *s, &mut buf, &mut scratch);
                out.clear();
                message(b'Q', b"SELECT count(*) FROM pgbench_branches\0", &mut out);
                s.write_all(&out).unwrap();
                let accounts = 100_000 * until_ready(&mut *s, &mut buf, &mut scratch).max(1) as u64;
                out.clear();
                let mut parse =
                    b"s\0SELECT abalance FROM pgbench_accounts WHERE aid = $1\0".to_vec();
                parse.extend_from_slice(&1i16.to_be_bytes());
                parse.extend_from_slice(&23i32.to_be_bytes());
                message(b'P', &parse, &mut out);
                message(b'S', &[], &mut out);
                s.write_all(&out).unwrap();
                until_ready(&mut *s, &mut buf, &mut scratch);
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (c + 1);
                let mut done = 0u64;
                // Bind (portal "", statement "s", one binary int4, binary result), Execute, Sync.
                let mut bind = b"\0s\0".to_vec();
                for v in [1i16, 1, 1] {
                    bind.extend_from_slice(&v.to_be_bytes());
                }
                bind.extend_from_slice(&4i32.to_be_bytes());
                let aid_at = bind.len();
                bind.extend_from_slice(&[0; 4]);
                bind.extend_from_slice(&1i16.to_be_bytes());
                bind.extend_from_slice(&1i16.to_be_bytes());
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let aid = (x % accounts) as i32 + 1;
                    bind[aid_at..aid_at + 4].copy_from_slice(&aid.to_be_bytes());
                    out.clear();
                    message(b'B', &bind, &mut out);
                    message(b'E', b"\0\0\0\0\0", &mut out);
                    message(b'S', &[], &mut out);
                    s.write_all(&out).unwrap();
                    until_ready(&mut *s, &mut buf, &mut scratch);
                    done += 1;
                }
                done
            })
        })
        .collect();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let elapsed = t0.elapsed().as_secs_f64();
    println!("number of transactions actually processed: {total}");
    println!("tps = {:.6}", total as f64 / elapsed);
}
