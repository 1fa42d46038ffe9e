//! Shared by the end-to-end tests: a private PostgreSQL per test (started from the machine's
//! binaries, removed on drop), psql/pgbench next to it, and the stampede binary.

#![allow(dead_code)]

/// The OLTP tests' fixture: one shared embedded server per test binary.
pub mod oltp;

use std::path::PathBuf;
use std::process::{Command, Output};

use target::embedded::{EmbeddedOptions, EmbeddedServer};

pub struct Server {
    pub pg: EmbeddedServer,
}

impl Server {
    /// Start a private server. Under CI a missing PostgreSQL is a failure, never a skip.
    pub fn start() -> Server {
        // Small shared_buffers: several tests run servers at once on a small machine.
        let opts = EmbeddedOptions {
            settings: vec![("shared_buffers".into(), "128MB".into())],
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
        vec![
            "-h".into(),
            self.host(),
            "-p".into(),
            self.port(),
            "-U".into(),
            "postgres".into(),
            "-d".into(),
            db.into(),
        ]
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn stampede<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out = stampede_cmd().args(args).output().expect("stampede runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn stampede_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stampede"));
    for k in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        c.env_remove(k);
    }
    c
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
