//! The exit codes of the README's "Exit codes" table, each on command lines that must give it
//! (issue 35, point 6): a table of (command line, expected code, a fragment of standard error),
//! run against the binary, as pgbench's `t/002_pgbench_no_server.pl` tables its bad options.
//! 0 success; 1 failed before measuring (nothing listens, a table is missing); 2 a check
//! failed; 3 `server status` of no server; 64 every malformed option and every malformed target
//! of each form stampede reads (libpq's `key=value`, `postgresql://` and `postgres://` URLs,
//! `mysql://` URLs, `-p`); 130 a signal during a load (on a remote server and on the embedded
//! one, every loader alike) and during a run. The drop-ins keep their peers' codes (pgbench's 1
//! for a bad connection string).
//!
//! One private PostgreSQL serves the cases that need a server (a database each, loaded by the
//! machine's pgbench); signals are sent when a condition says the command is where the case
//! wants it (a line on its standard error, a table the loader made), never after a sleep.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{stampede3, stampede_cmd, Server};

/// How long a case waits for its condition; not a timing assertion (each wait ends as soon as
/// its condition holds).
const PATIENCE: Duration = Duration::from_secs(180);

/// One PostgreSQL for this binary (stopped at exit), its databases made once.
fn server() -> std::sync::MutexGuard<'static, Option<Server>> {
    common::shared_server(|srv| {
        // `interrupted`: the run Ctrl-C cuts short has a database of its own, so `check tpcb
        // {loaded}` never sees what that run left (its history truncated, balances kept).
        for db in ["loaded", "broken", "interrupted"] {
            srv.create_db(db);
            assert!(srv.pgbench(db, &["-i", "-s", "1", "-q"]).status.success());
        }
        // TPC-B's consistency condition no longer holds: a check fails.
        srv.psql(
            "broken",
            "UPDATE pgbench_branches SET bbalance = bbalance + 1",
        );
        srv.create_db("bare");
    })
}

/// Where a case's command points: `{db}` in its arguments becomes `-h SOCKET -p PORT -U
/// postgres -d db` of the test server.
fn expand(srv: &Server, args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        match a.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
            Some(db) => out.extend(srv.target(db)),
            None => out.push(a.to_string()),
        }
    }
    out
}

/// (command line, exit code, a fragment of standard error: "" for none in particular).
const CASES: &[(&[&str], i32, &str)] = &[
    // 0: success.
    (&["--version"], 0, ""),
    (
        &["run", "-t", "20", "-c", "2", "--no-observe", "{loaded}"],
        0,
        "",
    ),
    (&["check", "tpcb", "{loaded}"], 0, ""),
    // 1: failed before measuring.
    (
        &["run", "-t", "1", "-h", "127.0.0.1", "-p", "1"],
        1,
        "cannot connect",
    ),
    (&["run", "-t", "1", "--no-observe", "{bare}"], 1, "pgbench_"),
    // 2: a check failed.
    (&["check", "tpcb", "{broken}"], 2, ""),
    // 3: server status, no server.
    (
        &["server", "status", "--data-dir", "/nonexistent/stampede-x"],
        3,
        "not running",
    ),
    // 64: the command line is wrong; nothing connects (127.0.0.1:1 would refuse).
    (&["run", "--frobnicate"], 64, "unexpected argument"),
    (&["run", "-c", "0"], 64, "-c/--client must be at least 1"),
    (&["init", "nosuch"], 64, "\"nosuch\""),
    (
        &["server", "start", "--set", "shared_buffers"],
        64,
        "expected NAME=VALUE",
    ),
    (
        &[
            "run",
            "-t",
            "1",
            "--json",
            "/nonexistent/dir/r.json",
            "-h",
            "127.0.0.1",
            "-p",
            "1",
        ],
        64,
        "/nonexistent/dir",
    ),
    // Malformed targets, of every form stampede reads.
    (
        &["run", "-t", "1", "-h", "127.0.0.1", "-p", "abc"],
        64,
        "invalid port number",
    ),
    (
        &["run", "-t", "1", "-d", "postgresql://h:abc/db"],
        64,
        "invalid port number",
    ),
    (&["run", "-t", "1", "-d", "postgres://[::1/db"], 64, "IPv6"),
    (
        &["run", "-t", "1", "-d", "postgresql://h/db?bogus=1"],
        64,
        "\"bogus\"",
    ),
    (
        &["run", "-t", "1", "-d", "host=h sslmode=bogus"],
        64,
        "sslmode",
    ),
    (
        &["run", "-t", "1", "-d", "host='unterminated"],
        64,
        "unterminated",
    ),
    (
        &["run", "-t", "1", "-d", "host=h nosuchkey=1"],
        64,
        "\"nosuchkey\"",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "-t",
            "1",
            "-d",
            "mysql://u@h:abc/db",
        ],
        64,
        "invalid MySQL URL",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "-t",
            "1",
            "-d",
            "mysql://u@h/db?ssl-mode=bogus",
        ],
        64,
        "ssl-mode",
    ),
    (
        &["init", "tpcb", "-d", "postgresql://h:abc/db"],
        64,
        "invalid port number",
    ),
    (
        &["check", "tpcb", "-d", "host=h sslmode=bogus"],
        64,
        "sslmode",
    ),
    (
        &["init", "oltp", "-d", "mysql://u@h:abc/db"],
        64,
        "invalid MySQL URL",
    ),
    // The drop-ins keep their peers' codes: pgbench's 1.
    (
        &["pgbench", "-t", "1", "postgresql://h:abc/db"],
        1,
        "pgbench: error: ",
    ),
];

#[test]
fn every_documented_exit_code_comes_from_the_command_lines_that_must_give_it() {
    let guard = server();
    let srv = guard.as_ref().unwrap();
    let mut failures = Vec::new();
    for (args, want, fragment) in CASES {
        let args = expand(srv, args);
        let (code, out, err) = stampede3(&args);
        if code != *want || !err.contains(fragment) {
            failures.push(format!(
                "{args:?}: exit {code}, want {want} and {fragment:?} on stderr\nstdout:\n{out}\nstderr:\n{err}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

/// When a case's command is where the signal must find it.
enum Ready {
    /// A line of its standard error contains this.
    Line(&'static str),
    /// This query on the test server's database returns "1".
    Sql(&'static str, &'static str),
}

/// (command line, when to send SIGINT, a fragment of standard error): each must exit 130.
const INTERRUPTED: &[(&[&str], Ready, &str)] = &[
    // During a load on a remote server: pgbench's tables, and a loader of stampede's own whose
    // batches once ignored the signal (it loaded on and exited 0).
    (
        &["init", "tpcb", "-s", "50", "{sig_tpcb}"],
        Ready::Line("client-side generate"),
        "interrupted",
    ),
    (
        &[
            "init",
            "crud",
            "--tables",
            "1",
            "--table-size",
            "5000000",
            "{sig_crud}",
        ],
        Ready::Sql(
            "sig_crud",
            "SELECT count(*) FROM pg_class WHERE relname = 'crud1'",
        ),
        "interrupted",
    ),
    // During the load that precedes a run on the embedded server.
    (
        &["run", "-t", "1", "-s", "50", "--no-observe"],
        Ready::Line("client-side generate"),
        "interrupted",
    ),
    // During a run.
    (
        &[
            "run",
            "-T",
            "600",
            "-P",
            "1",
            "--no-observe",
            "{interrupted}",
        ],
        Ready::Line("progress:"),
        "interrupted",
    ),
    // sysbench's prepare, through the drop-in (sysbench, ended by the signal, gives its shell
    // 130 too).
    (
        &[
            "sysbench",
            "oltp_read_write",
            "--db-driver=pgsql",
            "--tables=1",
            "--table-size=5000000",
            "{sysbench:sig_prepare}",
            "prepare",
        ],
        Ready::Sql(
            "sig_prepare",
            "SELECT count(*) FROM pg_class WHERE relname = 'sbtest1'",
        ),
        "",
    ),
];

#[test]
fn one_sigint_during_a_load_or_a_run_exits_130() {
    let guard = server();
    let srv = guard.as_ref().unwrap();
    let mut failures = Vec::new();
    for (args, ready, fragment) in INTERRUPTED {
        let mut full = Vec::new();
        for a in args.iter() {
            if let Some(db) = a
                .strip_prefix("{sysbench:")
                .and_then(|a| a.strip_suffix('}'))
            {
                srv.create_db(db);
                full.push(format!("--pgsql-host={}", srv.host()));
                full.push(format!("--pgsql-port={}", srv.port()));
                full.push("--pgsql-user=postgres".into());
                full.push(format!("--pgsql-db={db}"));
            } else if let Some(db) = a.strip_prefix('{').and_then(|a| a.strip_suffix('}')) {
                if db != "loaded" && db != "interrupted" {
                    srv.create_db(db);
                }
                full.extend(srv.target(db));
            } else {
                full.push(a.to_string());
            }
        }
        let tmp = tempfile::Builder::new()
            .prefix("stampede-exit-")
            .tempdir()
            .unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(tmp.path(), mode).unwrap();
        }
        let mut child = stampede_cmd()
            .args(&full)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("stampede runs");
        let (lines, reader) = common::stderr_lines(&mut child);
        let give_up = Instant::now() + PATIENCE;
        match ready {
            Ready::Line(text) => loop {
                let left = give_up.saturating_duration_since(Instant::now());
                match lines.recv_timeout(left) {
                    Ok(l) if l.contains(text) => break,
                    Ok(_) => {}
                    Err(e) => panic!("{full:?}: no line with {text:?} on stderr ({e})"),
                }
            },
            Ready::Sql(db, sql) => {
                while srv.psql(db, sql) != "1" {
                    assert!(Instant::now() < give_up, "{full:?}: {sql} never returned 1");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        // SAFETY: plain kill(2) to our child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > give_up {
                let _ = child.kill();
                panic!("{full:?}: still running after SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = reader.join().unwrap();
        let code = status.code().unwrap_or(-1);
        if code != 130 || !err.contains(fragment) {
            failures.push(format!(
                "{full:?}: exit {code}, want 130 and {fragment:?} on stderr\nstderr:\n{err}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
