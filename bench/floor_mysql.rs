//! The floor of a MySQL client for sysbench's oltp_point_select: one OS thread per connection
//! with a blocking socket and nothing else (no timing, no histogram, no error handling beyond
//! stopping; COM_STMT_EXECUTE built by hand once and patched per statement; the reply scanned
//! for its closing EOF). It is what bench/floor.rs is for PostgreSQL: what a client costs above
//! this line is the client's, what this line costs is the kernel's (a send that wakes the
//! server's thread, a blocking read that sleeps until the reply wakes this one). bench/
//! mysql_case.py runs it beside sysbench and stampede (`--floor`).
//!
//! Not part of the workspace: compiled by the bench with `rustc -O` (std only).
//! Usage: floor_mysql SOCKET_PATH|HOST:PORT USER DB TABLES TABLE_SIZE CLIENTS SECONDS [EVENTS]
//! (a user with an empty password; sysbench's sbtestN tables). With EVENTS > 0 the clients
//! share that many statements and SECONDS is ignored (sysbench's `--events=N --time=0`). Prints
//! sysbench's `transactions: N (X per sec.)` line.

#[path = "floor_conn.rs"]
mod conn;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use conn::{connect, Conn};

/// Buffered packet reader: returns each packet's payload (its 4-byte header stripped).
struct Packets {
    buf: Vec<u8>,
    at: usize,
    scratch: Vec<u8>,
}

impl Packets {
    fn next<'a>(&'a mut self, s: &mut dyn Conn) -> &'a [u8] {
        loop {
            let have = self.buf.len() - self.at;
            if have >= 4 {
                let b = &self.buf[self.at..];
                let len = u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize;
                if have >= 4 + len {
                    let start = self.at + 4;
                    self.at = start + len;
                    return &self.buf[start..start + len];
                }
            }
            self.buf.drain(..self.at);
            self.at = 0;
            let n = s.read(&mut self.scratch).expect("read");
            assert!(n > 0, "the server closed the connection");
            self.buf.extend_from_slice(&self.scratch[..n]);
        }
    }
}

fn send(s: &mut dyn Conn, seq: u8, payload: &[u8]) {
    let mut out = (payload.len() as u32).to_le_bytes();
    out[3] = seq;
    let mut p = out.to_vec();
    p.extend_from_slice(payload);
    s.write_all(&p).unwrap();
}

fn check(p: &[u8]) {
    if p.first() == Some(&0xff) {
        panic!(
            "server error: {}",
            String::from_utf8_lossy(&p[3.min(p.len())..])
        );
    }
}

fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xfe) && p.len() < 9
}

const CAPS: u32 = 1 // CLIENT_LONG_PASSWORD
    | 1 << 3 // CLIENT_CONNECT_WITH_DB
    | 1 << 9 // CLIENT_PROTOCOL_41
    | 1 << 13 // CLIENT_TRANSACTIONS
    | 1 << 15 // CLIENT_SECURE_CONNECTION
    | 1 << 19; // CLIENT_PLUGIN_AUTH

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 8 {
        eprintln!(
            "usage: floor_mysql SOCKET_PATH|HOST:PORT USER DB TABLES TABLE_SIZE CLIENTS SECONDS \
             [EVENTS]"
        );
        std::process::exit(2);
    }
    let (addr, user, db) = (args[1].clone(), args[2].clone(), args[3].clone());
    let tables: u64 = args[4].parse().expect("TABLES");
    let size: u64 = args[5].parse().expect("TABLE_SIZE");
    let clients: u64 = args[6].parse().expect("CLIENTS");
    let seconds: f64 = args[7].parse().expect("SECONDS");
    let events: u64 = args.get(8).map_or(0, |e| e.parse().expect("EVENTS"));
    let stop = Arc::new(AtomicBool::new(false));
    let left = Arc::new(AtomicU64::new(events));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (addr, user, db) = (addr.clone(), user.clone(), db.clone());
            let (stop, left) = (stop.clone(), left.clone());
            std::thread::spawn(move || {
                let mut s = connect(&addr);
                let mut r = Packets {
                    buf: Vec::new(),
                    at: 0,
                    scratch: vec![0u8; 16384],
                };
                // Handshake v10, then HandshakeResponse41 with an empty auth response.
                check(r.next(&mut *s));
                let mut hello = CAPS.to_le_bytes().to_vec();
                hello.extend_from_slice(&(1u32 << 24).to_le_bytes());
                hello.push(45); // utf8mb4_general_ci
                hello.extend_from_slice(&[0; 23]);
                hello.extend_from_slice(user.as_bytes());
                hello.extend_from_slice(&[0, 0]); // NUL, then an auth response of length 0
                hello.extend_from_slice(db.as_bytes());
                hello.push(0);
                hello.extend_from_slice(b"mysql_native_password\0");
                send(&mut *s, 1, &hello);
                let reply = r.next(&mut *s).to_vec();
                check(&reply);
                if reply.first() == Some(&0xfe) {
                    // An auth switch: the empty password again, for whichever plugin.
                    send(&mut *s, 3, &[]);
                    check(r.next(&mut *s));
                }
                // One prepared point select per table (sysbench's).
                let mut ids = Vec::new();
                for t in 1..=tables {
                    let mut p = vec![0x16];
                    p.extend_from_slice(format!("SELECT c FROM sbtest{t} WHERE id=?").as_bytes());
                    send(&mut *s, 0, &p);
                    let ok = r.next(&mut *s).to_vec();
                    check(&ok);
                    ids.push(u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]));
                    let cols = u16::from_le_bytes([ok[5], ok[6]]);
                    let params = u16::from_le_bytes([ok[7], ok[8]]);
                    // Definitions, each group closed by an EOF (no CLIENT_DEPRECATE_EOF).
                    for n in [params, cols] {
                        if n > 0 {
                            for _ in 0..=n {
                                r.next(&mut *s);
                            }
                        }
                    }
                }
                // COM_STMT_EXECUTE: id, no cursor, 1 iteration, NULL bitmap, types bound,
                // MYSQL_TYPE_LONG, the value.
                // Built once with its packet header (length 18, sequence 0) and patched in place.
                let mut exec = vec![18, 0, 0, 0, 0x17, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 0];
                let value_at = exec.len();
                exec.extend_from_slice(&[0; 4]);
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ (c + 1);
                let mut done = 0u64;
                loop {
                    if events > 0 {
                        if left
                            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                                n.checked_sub(1)
                            })
                            .is_err()
                        {
                            break;
                        }
                    } else if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let table = (x >> 40) % tables;
                    let id = (x % size) as u32 + 1;
                    exec[5..9].copy_from_slice(&ids[table as usize].to_le_bytes());
                    exec[value_at..value_at + 4].copy_from_slice(&id.to_le_bytes());
                    s.write_all(&exec).unwrap();
                    // Column count, definitions, EOF, rows, EOF.
                    let first = r.next(&mut *s);
                    check(first);
                    if first.first() != Some(&0) {
                        let mut eofs = 0;
                        while eofs < 2 {
                            let p = r.next(&mut *s);
                            check(p);
                            if is_eof(p) {
                                eofs += 1;
                            }
                        }
                    }
                    done += 1;
                }
                done
            })
        })
        .collect();
    if events == 0 {
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    }
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let elapsed = t0.elapsed().as_secs_f64();
    println!(
        "    transactions:                        {total} ({:.2} per sec.)",
        total as f64 / elapsed
    );
}
