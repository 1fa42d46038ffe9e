//! A PostgreSQL wire-protocol endpoint that answers every statement at once and keeps nothing:
//! the server of the replay case's second table (bench/replay_case.py), where what is measured
//! is each replayer's own ceiling, not the server's. On two cores a real PostgreSQL spends about
//! 50 us of CPU per replayed statement, so the machine, not the replayer, sets the pace there;
//! against this endpoint the replayer's own work is most of what is left.
//!
//! Protocol 3.0 as the PostgreSQL documentation's "Message Flow" describes it, no more than a
//! replayer needs: the startup (SSL and GSS encryption refused with 'N', trust authentication,
//! the parameters libpq and stampede read), the simple query (one CommandComplete whose tag is
//! the statement's first word, then ReadyForQuery with the transaction state that BEGIN, START,
//! COMMIT, END, ROLLBACK and ABORT set), the extended query (Parse, Bind, Describe, Execute,
//! Close, Sync, Flush) and Terminate. A SELECT returns no rows, except the few probes a client
//! makes on connecting (`SELECT version()`, `SHOW ...`, `current_setting(...)`), which get one
//! row with one text column. Every statement of a session is answered in order; nothing is
//! parsed beyond the first word.
//!
//! One thread, epoll (edge-triggered), each ready socket read until EAGAIN and its answers
//! written in one write: a few microseconds of CPU per statement, which the table reports as
//! the endpoint's share.
//!
//! Not part of the workspace: compiled by the bench with `rustc -O` (std only; epoll through
//! the C library std already links).
//! Usage: null_pg SOCKET_DIR PORT   (listens on SOCKET_DIR/.s.PGSQL.PORT until killed)

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};

#[repr(C, packed)]
#[derive(Clone, Copy)]
struct EpollEvent {
    events: u32,
    data: u64,
}

extern "C" {
    fn epoll_create1(flags: i32) -> i32;
    fn epoll_ctl(epfd: i32, op: i32, fd: i32, event: *mut EpollEvent) -> i32;
    fn epoll_wait(epfd: i32, events: *mut EpollEvent, maxevents: i32, timeout: i32) -> i32;
}

const EPOLLIN: u32 = 0x1;
const EPOLLRDHUP: u32 = 0x2000;
const EPOLLET: u32 = 1 << 31;
const EPOLL_CTL_ADD: i32 = 1;
const LISTENER: u64 = u64::MAX;

struct Conn {
    stream: UnixStream,
    input: Vec<u8>,
    output: Vec<u8>,
    started: bool,
    in_transaction: bool,
}

fn message(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    out.extend_from_slice(body);
}

fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

fn ready(c: &mut Conn) {
    let state = if c.in_transaction { b'T' } else { b'I' };
    message(&mut c.output, b'Z', &[state]);
}

/// The command tag of `sql` (its first word, upper-cased) and what it does to the transaction.
fn tag_of(c: &mut Conn, sql: &[u8]) -> String {
    let text = String::from_utf8_lossy(sql);
    let word = text
        .split(|ch: char| ch.is_whitespace() || ch == ';' || ch == '(')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_uppercase();
    match word.as_str() {
        "BEGIN" | "START" => c.in_transaction = true,
        "COMMIT" | "END" | "ROLLBACK" | "ABORT" => c.in_transaction = false,
        _ => {}
    }
    match word.as_str() {
        "SELECT" | "WITH" | "SHOW" | "VALUES" | "TABLE" => "SELECT 0".into(),
        "INSERT" => "INSERT 0 1".into(),
        "UPDATE" | "DELETE" => format!("{word} 1"),
        "START" => "START TRANSACTION".into(),
        "END" => "COMMIT".into(),
        "ABORT" => "ROLLBACK".into(),
        "" => String::new(),
        _ => word,
    }
}

/// One row of one text column for a connecting client's probes, or `None`.
fn probe_answer(sql: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(sql).to_ascii_lowercase();
    if text.contains("version()") {
        Some("PostgreSQL 15.18 (null endpoint)")
    } else if text.contains("server_version_num") {
        Some("150018")
    } else if text.starts_with("show") || text.contains("current_setting") {
        Some("")
    } else {
        None
    }
}

fn one_row(out: &mut Vec<u8>, value: &str) {
    let mut rd = Vec::new();
    rd.extend_from_slice(&1u16.to_be_bytes());
    cstr(&mut rd, "value");
    rd.extend_from_slice(&0u32.to_be_bytes());
    rd.extend_from_slice(&0u16.to_be_bytes());
    rd.extend_from_slice(&25u32.to_be_bytes());
    rd.extend_from_slice(&(-1i16).to_be_bytes());
    rd.extend_from_slice(&(-1i32).to_be_bytes());
    rd.extend_from_slice(&0u16.to_be_bytes());
    message(out, b'T', &rd);
    let mut dr = Vec::new();
    dr.extend_from_slice(&1u16.to_be_bytes());
    dr.extend_from_slice(&(value.len() as u32).to_be_bytes());
    dr.extend_from_slice(value.as_bytes());
    message(out, b'D', &dr);
}

fn complete(c: &mut Conn, sql: &[u8], simple: bool) {
    if let Some(v) = probe_answer(sql) {
        if simple {
            one_row(&mut c.output, v);
        }
        let mut body = Vec::new();
        cstr(&mut body, "SELECT 1");
        message(&mut c.output, b'C', &body);
        return;
    }
    let tag = tag_of(c, sql);
    if tag.is_empty() {
        message(&mut c.output, b'I', &[]);
    } else {
        let mut body = Vec::new();
        cstr(&mut body, &tag);
        message(&mut c.output, b'C', &body);
    }
}

fn startup(c: &mut Conn, code: u32) -> bool {
    match code {
        // SSLRequest, GSSENCRequest: refused, the client goes on in the clear.
        80877103 | 80877104 => c.output.push(b'N'),
        // CancelRequest: nothing runs long enough to cancel.
        80877102 => return false,
        _ => {
            c.started = true;
            message(&mut c.output, b'R', &0u32.to_be_bytes());
            for (k, v) in [
                ("server_version", "15.18"),
                ("server_encoding", "UTF8"),
                ("client_encoding", "UTF8"),
                ("DateStyle", "ISO, MDY"),
                ("integer_datetimes", "on"),
                ("standard_conforming_strings", "on"),
                ("TimeZone", "UTC"),
                ("IntervalStyle", "postgres"),
                ("is_superuser", "on"),
                ("session_authorization", "postgres"),
                ("application_name", ""),
            ] {
                let mut body = Vec::new();
                cstr(&mut body, k);
                cstr(&mut body, v);
                message(&mut c.output, b'S', &body);
            }
            let pid = c.stream.as_raw_fd() as u32;
            let mut key = pid.to_be_bytes().to_vec();
            key.extend_from_slice(&0x5eedu32.to_be_bytes());
            message(&mut c.output, b'K', &key);
            ready(c);
        }
    }
    true
}

/// Answer every whole message in the input; false when the client said goodbye.
fn serve(c: &mut Conn, portal_sql: &mut Vec<u8>) -> bool {
    let mut at = 0;
    let mut alive = true;
    loop {
        let rest = &c.input[at..];
        if !c.started {
            if rest.len() < 8 {
                break;
            }
            let len = u32::from_be_bytes(rest[0..4].try_into().unwrap()) as usize;
            if rest.len() < len {
                break;
            }
            let code = u32::from_be_bytes(rest[4..8].try_into().unwrap());
            at += len;
            if !startup(c, code) {
                alive = false;
                break;
            }
            continue;
        }
        if rest.len() < 5 {
            break;
        }
        let tag = rest[0];
        let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
        if rest.len() < 1 + len {
            break;
        }
        let body = rest[5..1 + len].to_vec();
        at += 1 + len;
        match tag {
            b'Q' => {
                let sql = body.strip_suffix(&[0]).unwrap_or(&body);
                complete(c, sql, true);
                ready(c);
            }
            b'P' => {
                // Name, then the statement's text: kept for the Execute that follows.
                let name_end = body.iter().position(|&b| b == 0).unwrap_or(0);
                let rest = &body[name_end + 1..];
                let sql_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                *portal_sql = rest[..sql_end].to_vec();
                message(&mut c.output, b'1', &[]);
            }
            b'B' => message(&mut c.output, b'2', &[]),
            b'D' => {
                if body.first() == Some(&b'S') {
                    message(&mut c.output, b't', &0u16.to_be_bytes());
                }
                message(&mut c.output, b'n', &[]);
            }
            b'E' => {
                let sql = std::mem::take(portal_sql);
                complete(c, &sql, false);
                *portal_sql = sql;
            }
            b'C' => message(&mut c.output, b'3', &[]),
            b'S' => ready(c),
            b'H' => {}
            b'X' => {
                alive = false;
                break;
            }
            _ => {}
        }
    }
    c.input.drain(..at);
    alive
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: null_pg SOCKET_DIR PORT");
        std::process::exit(64);
    }
    let path = format!("{}/.s.PGSQL.{}", args[1], args[2]);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).expect("bind");
    listener.set_nonblocking(true).unwrap();
    let ep = unsafe { epoll_create1(0) };
    assert!(ep >= 0, "epoll_create1");
    let add = |fd: i32, data: u64| {
        let mut ev = EpollEvent {
            events: EPOLLIN | EPOLLRDHUP | EPOLLET,
            data,
        };
        assert_eq!(
            unsafe { epoll_ctl(ep, EPOLL_CTL_ADD, fd, &mut ev) },
            0,
            "epoll_ctl"
        );
    };
    add(listener.as_raw_fd(), LISTENER);
    let mut conns: HashMap<u64, (Conn, Vec<u8>)> = HashMap::new();
    let mut next_id = 0u64;
    let mut events = vec![EpollEvent { events: 0, data: 0 }; 256];
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = unsafe { epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == ErrorKind::Interrupted {
                continue;
            }
            panic!("epoll_wait: {}", std::io::Error::last_os_error());
        }
        for ev in &events[..n as usize] {
            let id = ev.data;
            if id == LISTENER {
                while let Ok((stream, _)) = listener.accept() {
                    stream.set_nonblocking(true).unwrap();
                    add(stream.as_raw_fd(), next_id);
                    let c = Conn {
                        stream,
                        input: Vec::new(),
                        output: Vec::new(),
                        started: false,
                        in_transaction: false,
                    };
                    conns.insert(next_id, (c, Vec::new()));
                    next_id += 1;
                }
                continue;
            }
            let Some((c, portal)) = conns.get_mut(&id) else {
                continue;
            };
            let mut open = true;
            loop {
                match c.stream.read(&mut buf) {
                    Ok(0) => {
                        open = false;
                        break;
                    }
                    Ok(k) => c.input.extend_from_slice(&buf[..k]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        open = false;
                        break;
                    }
                }
            }
            open &= serve(c, portal);
            if !c.output.is_empty() {
                // Answers are small and the client reads them: a full socket buffer here
                // means the client stopped reading, which ends its session.
                let out = std::mem::take(&mut c.output);
                let mut s = &c.stream;
                if s.write_all(&out).is_err() {
                    open = false;
                }
            }
            if !open {
                conns.remove(&id);
            }
        }
    }
}
