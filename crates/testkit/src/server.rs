//! [`Pg`]: a private server (`pg::embedded::EmbeddedServer`, a unix socket in its own
//! temporary directory, trust authentication, user `postgres`), and how long it lives.
//!
//! - [`Pg::start`]: one per test, with the test's own settings; stopped when dropped.
//! - [`PerBinary`]: one for the whole test binary (a `static`), started on first use and stopped
//!   at process exit (`atexit`: statics are never dropped). Tests use one database each.
//! - [`WhileUsed`]: one shared by the tests that run at the same time, stopped when the last
//!   `Arc` goes; a later test starts a new one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, Once, OnceLock, Weak};
use std::time::{Duration, Instant};

use pg::embedded::{EmbeddedOptions, EmbeddedServer};
use pg::{ConnConfig, Session};

use crate::account::{both, ok_text};
use crate::sql::{block_on, query};

/// A group of server settings, `(name, value)` as in `postgresql.conf`.
pub type Settings<'a> = &'a [(&'a str, &'a str)];

/// Where the PostgreSQL binaries are (`EmbeddedServer::find_binaries`); panics when none are.
pub fn bindir() -> PathBuf {
    EmbeddedServer::find_binaries(None)
        .expect("PostgreSQL binaries (apt-get install postgresql-15)")
        .bindir
}

/// A running private server. Dropping it (or [`Pg::stop`]) stops the server and removes its
/// directory.
pub struct Pg {
    cfg: ConnConfig,
    bindir: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    log_file: PathBuf,
    /// None once stopped; a Mutex so that a `static` one can be stopped at exit.
    server: Mutex<Option<EmbeddedServer>>,
}

impl Pg {
    /// Start a server with `settings` — groups of `(name, value)`, applied in order after
    /// stampede's defaults (see `pg::embedded`), so a later group overrides an earlier one —
    /// and wait until it accepts a session. Panics when it cannot.
    pub fn start(settings: &[Settings]) -> Pg {
        Pg::start_with(EmbeddedOptions {
            settings: flatten(settings),
            ..Default::default()
        })
    }

    /// [`Pg::start`] with every option of the embedded server (a given data directory: a
    /// standby made by pg_basebackup, say).
    pub fn start_with(opts: EmbeddedOptions) -> Pg {
        let server = EmbeddedServer::start(&opts).unwrap_or_else(|e| {
            panic!("start a private PostgreSQL (needs the postgresql-15 server binaries): {e}")
        });
        let pg = Pg {
            cfg: server.conn_config(),
            bindir: server.binaries().bindir.clone(),
            socket_dir: server.socket_dir().to_path_buf(),
            port: server.port(),
            log_file: server.log_file().to_path_buf(),
            server: Mutex::new(Some(server)),
        };
        pg.wait_accepting();
        pg
    }

    /// `EmbeddedServer::start` has been seen to return while the server still answered "the
    /// database system is starting up": wait until a session connects. On its own thread, so
    /// that it also works when called from inside a runtime (a lazily started shared server).
    fn wait_accepting(&self) {
        let cfg = self.cfg.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while let Err(e) = block_on(async { Session::connect(&cfg).await.map(drop) }) {
                assert!(
                    Instant::now() < deadline,
                    "the server never accepted a session: {e}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
    }

    /// Superuser `postgres`, database `postgres`, over the unix socket.
    pub fn conn_config(&self) -> &ConnConfig {
        &self.cfg
    }

    /// A libpq keyword/value string for database `db` (an FDW's `host port dbname` and a
    /// target's `-d`, in one form).
    pub fn conninfo(&self, db: &str) -> String {
        let c = self.conn_config();
        format!(
            "host={} port={} user={} dbname={db}",
            c.hosts[0].host,
            self.port(),
            c.user
        )
    }

    /// The unix socket directory (`-h` for psql and pgbench).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's log (stdout and stderr of the postmaster), for tests that check what the
    /// server logged.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// A binary of the server's installation (`psql`, `pgbench`, ...).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bindir.join(name)
    }

    /// The client `name` with `-h <socket> -p <port> -U postgres`; add arguments and the database.
    pub fn command(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.bin(name));
        cmd.arg("-h")
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres"]);
        cmd
    }

    /// `psql -X -q -A -t -v ON_ERROR_STOP=1 -d postgres -c sql`: its stdout (one line a row,
    /// columns joined by `|`). Panics with stderr when psql fails.
    pub fn psql(&self, sql: &str) -> String {
        self.psql_on("postgres", sql)
    }

    /// [`Pg::psql`] on database `db`.
    pub fn psql_on(&self, db: &str, sql: &str) -> String {
        let out = self
            .command("psql")
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-d", db, "-c", sql])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `pgbench <args> <db>`; its stdout and stderr. Panics with them when it fails.
    pub fn pgbench(&self, db: &str, args: &[&str]) -> String {
        self.pgbench_env(db, args, &[])
    }

    /// [`Pg::pgbench`] with environment variables (e.g. `PGOPTIONS`).
    pub fn pgbench_env(&self, db: &str, args: &[&str], env: &[(&str, &str)]) -> String {
        let out = self.pgbench_output(db, args, env);
        ok_text(&out, &format!("pgbench {args:?}"))
    }

    /// `pgbench <args> <db>` that may fail: (succeeded, stdout and stderr).
    pub fn try_pgbench(&self, db: &str, args: &[&str]) -> (bool, String) {
        let out = self.pgbench_output(db, args, &[]);
        (out.status.success(), both(&out))
    }

    fn pgbench_output(&self, db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.command("pgbench")
            .args(args)
            .arg(db)
            .envs(env.iter().copied())
            .output()
            .expect("run pgbench")
    }

    /// Drop database `name` if it exists, create it empty; its config.
    pub async fn fresh_database(&self, name: &str) -> ConnConfig {
        // Two calls: in one, the statements would form a transaction block, which neither runs in.
        query(&self.cfg, &format!("drop database if exists {name}")).await;
        query(&self.cfg, &format!("create database {name}")).await;
        self.cfg.with_dbname(name)
    }

    /// `f` of the running server; `None` once stopped.
    pub(crate) fn with_server<T>(&self, f: impl FnOnce(&EmbeddedServer) -> T) -> Option<T> {
        let guard = self.server.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map(f)
    }

    /// Stop the server now (fast shutdown) and remove its directory; later calls do nothing.
    pub fn stop(&self) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(server);
    }
}

/// Settings groups as the embedded server's `(name, value)` list, in order.
pub fn flatten(settings: &[Settings]) -> Vec<(String, String)> {
    settings
        .iter()
        .flat_map(|group| group.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One server for the whole test binary: `static PG: PerBinary = PerBinary::new(&[...]);`
/// then `PG.get()`. Started on first use, stopped (directory removed) at process exit.
pub struct PerBinary {
    settings: &'static [Settings<'static>],
    cell: OnceLock<Pg>,
}

/// The `PerBinary` servers to stop at exit.
static AT_EXIT: Mutex<Vec<&'static PerBinary>> = Mutex::new(Vec::new());

extern "C" fn stop_at_exit() {
    let all = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    for p in all {
        if let Some(pg) = p.cell.get() {
            pg.stop();
        }
    }
}

impl PerBinary {
    pub const fn new(settings: &'static [Settings<'static>]) -> PerBinary {
        PerBinary {
            settings,
            cell: OnceLock::new(),
        }
    }

    pub fn get(&'static self) -> &'static Pg {
        self.cell.get_or_init(|| {
            let pg = Pg::start(self.settings);
            static REGISTER: Once = Once::new();
            // SAFETY: registering a plain extern "C" fn.
            REGISTER.call_once(|| unsafe {
                libc::atexit(stop_at_exit);
            });
            AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()).push(self);
            pg
        })
    }
}

/// One server shared by the tests that hold it at the same time:
/// `static PG: WhileUsed = WhileUsed::new(&[...]);` then `PG.get()`. Stopped when the last
/// holder drops it; the next `get` starts a new one.
pub struct WhileUsed {
    settings: &'static [Settings<'static>],
    current: Mutex<Weak<Pg>>,
}

impl WhileUsed {
    pub const fn new(settings: &'static [Settings<'static>]) -> WhileUsed {
        WhileUsed {
            settings,
            current: Mutex::new(Weak::new()),
        }
    }

    pub fn get(&self) -> Arc<Pg> {
        let mut g = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = g.upgrade() {
            return p;
        }
        let p = Arc::new(Pg::start(self.settings));
        *g = Arc::downgrade(&p);
        p
    }
}
