//! A private pgbouncer in front of a test's PostgreSQL, for tests that need a connection pooler:
//! generated ini, unix socket only in a temporary directory (nothing listens on TCP), transaction
//! pooling, trust authentication over the server's unix socket (what the embedded server uses),
//! and removed on drop. Include it with `#[path = "common/pgbouncer.rs"] mod pgbouncer;`.
//!
//! pgbouncer refuses to run as root: when we are root it is started with `-u postgres` (or
//! `nobody`), the account the embedded server runs as, and its directory is chowned to it.
//! Debian 12's pgbouncer is 1.18, without `max_prepared_statements` (1.21+): named prepared
//! statements do not survive transaction pooling there, so tests use `-M extended` or simple
//! through it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Pgbouncer {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

/// pgbouncer's settings for a test: `max_client_conn` clients, `pool_size` server connections.
pub struct Options<'a> {
    /// The server's socket directory and port.
    pub server_socket_dir: &'a Path,
    pub server_port: u16,
    pub max_client_conn: u32,
    pub pool_size: u32,
}

fn run_as() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let has = |u: &str| {
        Command::new("id")
            .arg(u)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    Some(if has("postgres") {
        "postgres"
    } else {
        "nobody"
    })
}

impl Pgbouncer {
    /// Start pgbouncer and wait until its socket exists. Panics with its log when it does not
    /// come up (under CI a missing pgbouncer is a failure: scripts/install-deps.sh --tests
    /// installs it).
    pub fn start(o: &Options<'_>) -> Pgbouncer {
        let bin = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or_else(|| {
                panic!("pgbouncer is not installed (scripts/install-deps.sh --tests installs it)")
            });
        let dir = tempfile::Builder::new()
            .prefix("stampede-pgbouncer-")
            .tempdir()
            .expect("temporary directory");
        // A port number only names the socket file (.s.PGSQL.<port>) in our private directory.
        let port = 6432;
        let d = dir.path().display().to_string();
        // Room for the clients plus pgbouncer's own descriptors; it inherits our limit, which
        // the caller raises (see `raise_fd_limit`).
        let ini = format!(
            "[databases]\n\
             * = host={host} port={sport}\n\
             [pgbouncer]\n\
             unix_socket_dir = {d}\n\
             listen_port = {port}\n\
             auth_type = trust\n\
             auth_file = {d}/userlist.txt\n\
             pool_mode = transaction\n\
             max_client_conn = {maxc}\n\
             default_pool_size = {pool}\n\
             max_db_connections = {pool}\n\
             ; Close idle server connections soon after a run, so the backends exit and their\n\
             ; statistics reach pg_stat_database (tests read commit counts there).\n\
             server_idle_timeout = 1\n\
             ignore_startup_parameters = extra_float_digits,options\n\
             logfile = {d}/pgbouncer.log\n\
             pidfile = {d}/pgbouncer.pid\n\
             listen_backlog = 4096\n",
            host = o.server_socket_dir.display(),
            sport = o.server_port,
            maxc = o.max_client_conn,
            pool = o.pool_size,
        );
        std::fs::write(dir.path().join("pgbouncer.ini"), ini).unwrap();
        std::fs::write(dir.path().join("userlist.txt"), "\"postgres\" \"\"\n").unwrap();
        let mut cmd = Command::new(bin);
        if let Some(user) = run_as() {
            let ok = Command::new("chown")
                .args(["-R", user, &d])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown {user} {d}");
            cmd.args(["-u", user]);
        }
        let child = cmd
            .arg(dir.path().join("pgbouncer.ini"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgbouncer starts");
        let mut p = Pgbouncer { child, dir, port };
        let sock = p.dir.path().join(format!(".s.PGSQL.{port}"));
        let deadline = Instant::now() + Duration::from_secs(15);
        while !sock.exists() {
            if Instant::now() > deadline || p.child.try_wait().ok().flatten().is_some() {
                panic!("pgbouncer did not start:\n{}", p.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        p
    }

    pub fn socket_dir(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Pgbouncer {
    fn drop(&mut self) {
        // SIGTERM: immediate shutdown (SIGINT would wait for clients).
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Raise this process's soft open-file limit to its hard limit, so pgbouncer (which inherits
/// it) can hold the test's clients. Returns the new soft limit.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
        if r.rlim_max != libc::RLIM_INFINITY && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
    }
    r.rlim_cur
}
