//! Shared by the end-to-end tests: a private PostgreSQL per test (started from the machine's
//! binaries, removed on drop), psql/pgbench next to it, and the stampede binary.

#![allow(dead_code)]

/// The fleet tests' shared checks.
pub mod fleet;
/// The OLTP tests' fixture: one shared embedded server per test binary.
pub mod oltp;
/// Read-only and full file systems for the output tests.
pub mod tmpfs;

use std::path::PathBuf;
use std::process::{Command, Output};

use sut::embedded::{EmbeddedOptions, EmbeddedServer};

/// sysbench 1.0.20's OLTP tests and the queries each event sends, in sysbench's classes:
/// (read, write, other).
pub const SYSBENCH_TESTS: &[(&str, (u64, u64, u64))] = &[
    ("oltp_read_write", (14, 4, 2)),
    ("oltp_read_only", (14, 0, 2)),
    ("oltp_write_only", (0, 4, 2)),
    ("oltp_point_select", (1, 0, 0)),
    ("oltp_update_index", (0, 1, 0)),
    ("oltp_update_non_index", (0, 1, 0)),
    ("oltp_insert", (0, 1, 0)),
    ("oltp_delete", (0, 1, 0)),
];

pub struct Server {
    pub pg: EmbeddedServer,
}

fn settings_of(s: &[(&str, &str)]) -> Vec<(String, String)> {
    s.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

static SHARED: std::sync::OnceLock<std::sync::Mutex<Option<Server>>> = std::sync::OnceLock::new();

extern "C" fn stop_shared() {
    if let Some(m) = SHARED.get() {
        if let Ok(mut g) = m.lock() {
            drop(g.take());
        }
    }
}

/// One PostgreSQL for the whole test binary, stopped at exit (a test that panics while holding
/// it does not poison it for the others); `prepare` runs once, on the new server.
pub fn shared_server(
    prepare: impl FnOnce(&Server),
) -> std::sync::MutexGuard<'static, Option<Server>> {
    SHARED
        .get_or_init(|| {
            // SAFETY: registering a plain extern "C" fn.
            unsafe { libc::atexit(stop_shared) };
            let srv = Server::start();
            prepare(&srv);
            std::sync::Mutex::new(Some(srv))
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Server {
    /// Start a private server. Under CI a missing PostgreSQL is a failure, never a skip.
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A private server with these settings on top of the tests' own.
    pub fn start_with(extra: &[(&str, &str)]) -> Server {
        // Small shared_buffers: several tests run servers at once on a small machine.
        let mut settings: Vec<(String, String)> = vec![("shared_buffers".into(), "128MB".into())];
        settings.extend(settings_of(extra));
        let opts = EmbeddedOptions {
            settings,
            ..Default::default()
        };
        let pg = EmbeddedServer::start(&opts).unwrap_or_else(|e| {
            panic!("these tests need PostgreSQL server binaries (scripts/install-deps.sh installs them): {e}")
        });
        Server { pg }
    }

    pub fn host(&self) -> String {
        self.pg.socket_dir().display().to_string()
    }

    pub fn port(&self) -> String {
        self.pg.port().to_string()
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.pg.binaries().bindir.join(name)
    }

    /// psql -At -c SQL against `db`; panics with stderr on failure.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin("psql"))
            .args([
                "-X",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                &self.host(),
                "-p",
                &self.port(),
            ])
            .args(["-U", "postgres", "-d", db, "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Run `sql` in a transaction of its own that stays open (psql reading its commands from a
    /// pipe, named by `application_name` `name`), and wait until it has run: the session is then
    /// idle in that transaction, holding whatever locks `sql` took, until
    /// [`Holder::commit`].
    pub fn hold(&self, db: &str, name: &str, sql: &str) -> Holder {
        let mut h = self.session(db, name);
        h.send(&format!("BEGIN;\n{sql};"));
        self.wait_for(
            db,
            &format!(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{name}' \
                 AND state = 'idle in transaction'"
            ),
            "1",
        );
        h
    }

    /// A session named `name` on `db`, connected and idle, for statements sent later
    /// ([`Holder::send`]). Its presence is awaited from the `postgres` database, so the wait
    /// commits nothing on `db`.
    pub fn session(&self, db: &str, name: &str) -> Holder {
        let child = Command::new(self.bin("psql"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", &self.host()])
            .args(["-p", &self.port(), "-U", "postgres", "-d", db])
            .env("PGAPPNAME", name)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("psql runs");
        self.wait_for(
            "postgres",
            &format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = '{name}'"),
            "1",
        );
        Holder { child }
    }

    /// Poll `sql` (every 20 ms, at most 30 s) until it returns `want`.
    pub fn wait_for(&self, db: &str, sql: &str, want: &str) {
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let got = self.psql(db, sql);
            if got == want {
                return;
            }
            assert!(
                std::time::Instant::now() < give_up,
                "{sql}: still {got}, want {want}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub fn create_db(&self, db: &str) {
        self.psql("postgres", &format!("CREATE DATABASE {db}"));
    }

    pub fn pgbench(&self, db: &str, args: &[&str]) -> Output {
        Command::new(self.bin("pgbench"))
            .args(["-h", &self.host(), "-p", &self.port(), "-U", "postgres"])
            .args(args)
            .arg(db)
            .output()
            .expect("pgbench runs")
    }

    /// Target flags for stampede.
    pub fn target(&self, db: &str) -> Vec<String> {
        target_at(&self.host(), &self.port(), db)
    }
}

/// A session holding a transaction open ([`Server::hold`]).
pub struct Holder {
    child: std::process::Child,
}

impl Holder {
    /// Send `sql` to the session (not waiting for it to run).
    pub fn send(&mut self, sql: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("piped");
        writeln!(stdin, "{sql}").unwrap();
        stdin.flush().unwrap();
    }

    /// Roll the held transaction back and end the session.
    pub fn rollback(mut self) {
        use std::io::Write;
        if let Some(mut stdin) = self.child.stdin.take() {
            writeln!(stdin, "ROLLBACK;").unwrap();
        }
        assert!(
            self.child.wait().unwrap().success(),
            "the holder's ROLLBACK failed"
        );
    }

    /// Commit the held transaction and end the session.
    pub fn commit(mut self) {
        use std::io::Write;
        if let Some(mut stdin) = self.child.stdin.take() {
            writeln!(stdin, "COMMIT;").unwrap();
        }
        assert!(
            self.child.wait().unwrap().success(),
            "the holder's COMMIT failed"
        );
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // A test that failed while holding: end the session (its transaction rolls back).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// stampede's arguments naming database `db` of a test server: `-h SOCKET -p PORT -U postgres
/// -d DB`.
pub fn pg_target(pg: &testkit::Pg, db: &str) -> Vec<String> {
    target_at(
        &pg.socket_dir().display().to_string(),
        &pg.port().to_string(),
        db,
    )
}

/// stampede's arguments naming database `db` as `postgres` at `host` (a socket directory or
/// an address) and `port`: `-h HOST -p PORT -U postgres -d DB`.
pub fn target_at(host: &str, port: &str, db: &str) -> Vec<String> {
    ["-h", host, "-p", port, "-U", "postgres", "-d", db]
        .map(String::from)
        .to_vec()
}

pub fn stampede<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let (code, stdout, stderr) = stampede3(args);
    Run {
        code,
        stdout,
        stderr,
    }
}

/// `stampede init oltp -d URL SHAPE` (the table count and size, say), which must succeed: its
/// stderr (where the load reports).
pub fn init_oltp(url: &str, shape: &[&str]) -> String {
    let (code, out, err) = stampede3(&[&["init", "oltp", "-d", url][..], shape].concat());
    assert_eq!(code, 0, "init oltp {shape:?}\n{out}\n{err}");
    err
}

/// `stampede ARGS` ([`stampede_cmd`]): (exit code, stdout, stderr).
pub fn stampede3<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    outcome(stampede_cmd().args(args))
}

/// Run `c` to its end: (exit code, -1 when a signal ended it; stdout; stderr).
pub fn outcome(c: &mut Command) -> (i32, String, String) {
    parts(c.output().expect("the command runs"))
}

/// A finished process's (exit code, -1 when a signal ended it; stdout; stderr).
pub fn parts(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn stampede_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stampede"));
    for k in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        c.env_remove(k);
    }
    c
}

/// The word after `label` on the line of `text` that starts with it (leading blanks aside):
/// a value in a sysbench-style summary (`    read:  1400`).
pub fn word_after<'a>(text: &'a str, label: &str) -> &'a str {
    let line = (text.lines())
        .map(str::trim_start)
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{text}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_else(|| panic!("nothing after {label:?}: {line}"))
}

/// The number after `label` in pgbench-style output, e.g. "number of failed transactions: ".
pub fn number_after(text: &str, label: &str) -> u64 {
    let i = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"));
    text[i + label.len()..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in:\n{text}"))
}

/// The observer's measured window of a result (`server_metrics.window_start_ms`, `_end_ms`),
/// checked to open no later than the run's or the load's start: the baseline is taken before
/// the first statement (one taken after missed a busy run's first inserts: CI saw MariaDB's
/// Handler_write grow by 72,744 for 73,000 rows).
pub fn observed_window(v: &serde_json::Value) -> (i64, i64) {
    let m = &v["server_metrics"];
    let (start, end) = (
        m["window_start_ms"].as_i64().unwrap(),
        m["window_end_ms"].as_i64().unwrap(),
    );
    assert!(start <= 0, "the window opened {start} ms after the start");
    (start, end)
}

/// A replay's result (`stampede replay`): its checks (statements sent, commit count, statement
/// ledger) passed, and the ledger's all-tables statement line of each kind has `sent` equal to
/// the count given, with no failed verdict.
pub fn replay_checked(v: &serde_json::Value, sent: &[(&str, u64)]) {
    let checks = v["checks"].as_array().unwrap();
    for name in ["statements sent", "commit count", "statement ledger"] {
        let c = (checks.iter())
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {v}"));
        assert_eq!(c["status"], "passed", "{c}");
    }
    for (kind, want) in sent {
        let line = (v["ledger"]["lines"].as_array().unwrap().iter())
            .find(|l| l["kind"] == *kind && l["unit"] == "statements" && l.get("table").is_none())
            .unwrap_or_else(|| panic!("no ledger line for {kind}: {}", v["ledger"]));
        assert_eq!(line["sent"], *want, "{line}");
        assert_ne!(line["verdict"], "failed", "{line}");
    }
}

/// A child's standard error read line by line as it comes: each line sent to the receiver (for
/// a test waiting on a condition), and all of it returned when the stream ends.
pub fn stderr_lines(
    child: &mut std::process::Child,
) -> (
    std::sync::mpsc::Receiver<String>,
    std::thread::JoinHandle<String>,
) {
    use std::io::{BufRead, BufReader};
    let (tx, lines) = std::sync::mpsc::channel();
    let err = child.stderr.take().expect("stderr piped");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    (lines, reader)
}
