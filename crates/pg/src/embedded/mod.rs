//! The embedded default: with no target given, stampede runs a private PostgreSQL in a temporary
//! directory, on a private unix socket, and removes it afterwards (also after an error or Ctrl-C).
//!
//! Owns: finding the server binaries, `initdb`, the server's settings, starting the postmaster,
//! waiting until it is ready, stopping it and removing its directory; and attaching to a kept
//! server (`stampede server status|stop`) through its `postmaster.pid`.
//! Must not touch: any server it did not start or was not pointed at (`data_dir`); any directory
//! other than the temporary one it created (a `data_dir` given by the user is never removed).
//!
//! ## Layout
//! The data directory (`<tmp>/data`, or the given `data_dir`) holds everything: the unix socket
//! (`unix_socket_directories` = the data directory, `listen_addresses = ''`, so nothing listens on
//! TCP and nobody else can reach it; port 5432 by default since the socket directory is private —
//! `--set port=N` changes it), the server log `stampede-server.log`, and stampede's settings in
//! `stampede.conf`, pulled in by one `include_if_exists` line appended to `postgresql.conf` after
//! initdb. Settings live in a file rather than on the command line so that `ALTER SYSTEM`
//! (postgresql.auto.conf, read after postgresql.conf) can still override them, and so that a kept
//! server's settings can be read back by [`EmbeddedServer::attach`].
//!
//! ## Starting and stopping
//! `initdb -A trust -E UTF8 --no-locale -U postgres` (skipped when `PG_VERSION` exists), then the
//! `postgres` binary is spawned directly (not through `pg_ctl`) so we hold its pid and can reap it.
//! Readiness is detected the way `pg_ctl -w` does it (pg_ctl.c `wait_for_postmaster_start`): the
//! 8th line of `postmaster.pid` becomes `ready`. The postmaster runs in its own process group
//! (`process_group(0)`): a Ctrl-C in the terminal goes to the foreground process group, which
//! would otherwise deliver SIGINT (= fast shutdown) to the server mid-run; stampede catches SIGINT,
//! unwinds, and this handle's `Drop` stops the server with SIGINT (fast shutdown, what
//! `pg_ctl stop -m fast` sends), waits for it to exit (SIGQUIT after 60 s), then removes the
//! temporary directory; one that cannot be removed is named (an error from `stop`, a warning on
//! stderr from `Drop`: it may hold gigabytes). A process that must end at once (stampede's
//! second Ctrl-C) stops the server with SIGQUIT (immediate shutdown) and removes its directory
//! through [`last_resort`], where the handle registers it, `initdb` included. A kill -9 of
//! stampede leaves the server running; its pid is in `<dir>/postmaster.pid`.
//!
//! ## Running as root
//! PostgreSQL refuses to run as root (tests and CI run as root). When the effective uid is 0,
//! `initdb` and `postgres` run as the `postgres` account if it exists, else `nobody`, through
//! `CommandExt::uid/gid` (std drops supplementary groups when switching from root). The temporary
//! directory is chowned to that account; a given `data_dir` is created/chowned too, but its parent
//! directories must be traversable by that account (e.g. not under `/root`).
//!
//! ## Default settings, and why (reasoned for the machine this runs on, not measured)
//! A benchmark default must be honest: durability is left exactly as a production server has it.
//! - `fsync = on`, `synchronous_commit = on`, `full_page_writes = on`: the defaults; turning them
//!   off makes numbers that no real deployment gets. Set them off with `--set` if you mean it.
//! - `shared_buffers` = 25 % of RAM (the PostgreSQL docs' starting point, "Resource
//!   Consumption"), at least 128MB, at most 4GB: the client runs on the same machine and the OS
//!   page cache double-buffers, and beyond a few GB the gain for pgbench-sized data sets is small
//!   while checkpoints write more. On the 24 GiB / 2-core development box this gives 4GB.
//! - `effective_cache_size` = 50 % of RAM: planner hint only.
//! - `maintenance_work_mem` = 1GB (512MB below 8 GiB RAM): primary-key builds after a load sort
//!   100 000 rows × scale; more memory means fewer sort passes.
//! - `max_connections = 1100`: enough for 1000 clients plus the loader and admin connections.
//!   Each slot costs some shared memory (PGPROC, lock table) and a backend ~1.5-2 MB when used;
//!   raise it with `--set max_connections=N`. A run with more clients sizes it itself when the
//!   user did not `--set` it ([`max_connections_for`]): `max(1100, clients + 100)`, the 100
//!   covering the loader's `-j` connections, the observer's and the checks' connections and the
//!   3 `superuser_reserved_connections`. So `stampede run -c 5000` on the embedded server gets
//!   `max_connections = 5100` (~9 GB of backends when all are used: 1.7 MB each here, plus
//!   ~60 MB of shared memory for the lock table and PGPROCs).
//!
//! ## File descriptors
//! The postmaster inherits stampede's RLIMIT_NOFILE (which `stampede run` raises to the hard
//! limit when its clients need it). The server's needs are per process: each backend opens at
//! most `max_files_per_process` (1000) files, checked against its own limit, and the postmaster
//! holds no descriptor per client (a backend's socket is closed in the postmaster after the
//! fork). So a server with 10,000 connections needs no larger limit than one with 10, and the
//! client's count of needed descriptors includes nothing for the embedded server but its
//! pipes.
//! - `max_wal_size = 4GB`, `min_wal_size = 1GB`, `checkpoint_timeout = 15min`,
//!   `checkpoint_completion_target = 0.9`: with the 1GB default, a write-heavy TPC-B run
//!   checkpoints every few seconds, and the full-page writes after each checkpoint dominate WAL
//!   volume; spacing them out is what every tuned server does.
//! - `wal_level = replica` (the default): `minimal` makes COPY into a table created in the same
//!   transaction skip WAL and loads much faster, but no production server runs that way.
//! - `track_io_timing = on`, `log_checkpoints = on`, and `shared_preload_libraries =
//!   pg_stat_statements` when the extension's files are installed: so a run can be explained
//!   afterwards. (pg_stat_statements costs a little; it is what people run in production.)
//! - Autovacuum stays at its defaults (on): a benchmark must include its cost. The log gets
//!   `log_line_prefix = '%m [%p] '` (time and pid) and otherwise the default verbosity.
//!
//! ## Module layout
//! This file: the handle ([`EmbeddedServer`]) and what is PostgreSQL's in its life (start,
//! initdb, readiness, attach); [`lifecycle`]: what both embedded servers do alike (the data
//! directory, temporary or given, the log, stopping and `Drop`), shared with the embedded MariaDB;
//! `binaries`: finding the server binaries and their version; `settings`:
//! the default settings and their merging and quoting; `process`: running as root, signals,
//! `postmaster.pid`, log tails (the server-neutral parts public as [`os`]); `last_resort`: the
//! servers still running, for a process that must end at once (shared with the embedded
//! MariaDB).

mod binaries;
pub mod last_resort;
pub mod lifecycle;
mod process;
#[cfg(test)]
mod server_tests;
mod settings;
mod standby;
#[cfg(test)]
mod tests;

use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::conninfo::HostSpec;
use crate::{ConnConfig, Error, SslMode};

use last_resort::Guard;
use lifecycle::{open_log, Place, Server, Shutdown};
pub use process::is_root;
use process::{chown, pid_alive, run_as_account, RunAs};
use settings::{conf_value, merge_settings, unquote};

pub use process::{read_postmaster_pid, tail_lines, PostmasterPid};
pub use settings::default_settings;

/// The operating-system side of an embedded server that does not depend on which server it is:
/// the account a server runs as under root, `chown`, liveness and signals, log tails, RAM. The
/// embedded MariaDB (`mysql::embedded`) uses these rather than copies.
pub mod os {
    pub use super::process::{
        chown, is_root, is_zombie, lookup_user, pid_alive, send_signal, server_account, tail_lines,
        untraversable_ancestor, RunAs,
    };
    pub use super::settings::total_ram;
}

/// `max_connections` for an embedded server that `clients` clients use, when the user did not
/// `--set` it: the default 1100, or `clients + 100` when more are needed (see the module header).
pub fn max_connections_for(clients: u32) -> u32 {
    1100.max(clients.saturating_add(100))
}

/// The default port. The socket directory is private, so it cannot clash with a system server.
pub const DEFAULT_PORT: u16 = 5432;

/// How long to wait for the server to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// SIGINT: the fast shutdown (roll back, checkpoint, exit), what `pg_ctl stop -m fast` sends;
/// SIGQUIT, the immediate shutdown, which takes the backends down too, after a minute.
const SHUTDOWN: Shutdown = Shutdown {
    signal: libc::SIGINT,
    at_once: libc::SIGQUIT,
    timeout: Duration::from_secs(60),
    after: "",
};

/// Where the PostgreSQL server binaries were found, and which version they are.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub bindir: PathBuf,
    /// e.g. "15.18"
    pub version: String,
    /// How they were found: "pg_config --bindir", "/usr/lib/postgresql/<N>/bin", "PATH", "--pg-bindir".
    pub found_by: String,
}

#[derive(Clone, Debug, Default)]
pub struct EmbeddedOptions {
    /// Explicit bindir (`--pg-bindir`); otherwise `pg_config --bindir`, the newest
    /// `/usr/lib/postgresql/*/bin`, then PATH.
    pub bindir: Option<PathBuf>,
    /// Use (and keep) this data directory instead of a temporary one (`stampede server start`).
    pub data_dir: Option<PathBuf>,
    /// Do not stop or remove the server when the handle is dropped (`--keep-server`).
    pub keep: bool,
    /// Extra `name=value` server settings, applied after stampede's defaults.
    pub settings: Vec<(String, String)>,
}

/// A running private server. Dropping it stops the server and removes its directory unless
/// `keep` was set.
pub struct EmbeddedServer {
    binaries: Binaries,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    settings: Vec<(String, String)>,
    log_file: PathBuf,
    /// The postmaster, its directory, and whether they are kept.
    server: Server,
}

impl std::fmt::Debug for EmbeddedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedServer")
            .field("data_dir", &self.data_dir)
            .field("port", &self.port)
            .field("pid", &self.pid())
            .field("keep", &self.keep())
            .finish()
    }
}

fn embedded_err(msg: impl Into<String>) -> Error {
    Error::Embedded(msg.into())
}

const STAMPEDE_CONF: &str = "stampede.conf";
const LOG_FILE: &str = "stampede-server.log";
const INCLUDE_LINE: &str = "include_if_exists = 'stampede.conf'\t# added by stampede";

impl EmbeddedServer {
    /// initdb (if the data directory is new), start, wait until it accepts connections.
    pub fn start(opts: &EmbeddedOptions) -> Result<EmbeddedServer, Error> {
        let binaries = Self::find_binaries(opts.bindir.as_deref())?;
        let run_as = run_as_account()?;

        let place = Place::new(opts.data_dir.as_deref(), "stampede-pg-", opts.keep, |d| {
            read_postmaster_pid(d).map(|pm| pm.pid)
        })?;
        let data_dir = place.data_dir.clone();
        // The socket path must fit in sockaddr_un.sun_path (108 bytes on Linux, 104 on macOS).
        if data_dir.as_os_str().len() + "/.s.PGSQL.65535.lock".len() > 103 {
            return Err(embedded_err(format!(
                "data directory path {} is too long to hold the server's unix socket; use a shorter path",
                data_dir.display()
            )));
        }
        place.check_account(run_as.as_ref(), "PostgreSQL", "/var/lib/stampede/server")?;
        let initialised = data_dir.join("PG_VERSION").is_file();
        if !initialised {
            place.make_private(run_as.as_ref())?;
            Self::initdb(&binaries, &data_dir, run_as.as_ref(), &place.guard)?;
            let mut conf = fs::OpenOptions::new()
                .append(true)
                .open(data_dir.join("postgresql.conf"))
                .map_err(|e| embedded_err(format!("cannot open postgresql.conf: {e}")))?;
            writeln!(conf, "\n{INCLUDE_LINE}")
                .map_err(|e| embedded_err(format!("cannot write postgresql.conf: {e}")))?;
        } else {
            // A data directory made elsewhere: make sure our include is there.
            let conf_path = data_dir.join("postgresql.conf");
            let text = fs::read_to_string(&conf_path).unwrap_or_default();
            if !text.contains(INCLUDE_LINE) {
                let mut conf = fs::OpenOptions::new()
                    .append(true)
                    .open(&conf_path)
                    .map_err(|e| {
                        embedded_err(format!("cannot open {}: {e}", conf_path.display()))
                    })?;
                writeln!(conf, "\n{INCLUDE_LINE}").map_err(|e| {
                    embedded_err(format!("cannot write {}: {e}", conf_path.display()))
                })?;
            }
        }

        // Settings: defaults, then the user's, then the ones that make the server private: the
        // socket directory cannot be overridden; the port can, and so can listen_addresses
        // (`--set listen_addresses=127.0.0.1` opens TCP, for benchmarks over loopback).
        let mut settings = merge_settings(default_settings(&binaries.bindir), &opts.settings);
        let port = match settings
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("port"))
        {
            Some((_, v)) => unquote(v)
                .parse::<u16>()
                .map_err(|_| embedded_err(format!("--set port={v}: not a port number")))?,
            None => DEFAULT_PORT,
        };
        let listen = settings
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("listen_addresses"))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| "''".into());
        settings.retain(|(k, _)| {
            !["port", "listen_addresses", "unix_socket_directories"]
                .iter()
                .any(|n| k.eq_ignore_ascii_case(n))
        });
        settings.push(("port".into(), port.to_string()));
        settings.push(("listen_addresses".into(), listen));
        settings.push((
            "unix_socket_directories".into(),
            format!("'{}'", data_dir.display()),
        ));

        let mut text = String::from(
            "# Written by stampede on every start of the embedded server; edits are overwritten.\n\
             # ALTER SYSTEM (postgresql.auto.conf) still overrides these.\n",
        );
        for (k, v) in &settings {
            text.push_str(&format!("{k} = {}\n", conf_value(v)));
        }
        let conf_path = data_dir.join(STAMPEDE_CONF);
        fs::write(&conf_path, text)
            .map_err(|e| embedded_err(format!("cannot write {}: {e}", conf_path.display())))?;
        if let Some(u) = &run_as {
            chown(&conf_path, u)?;
        }

        // The log: appended to, so a kept server's history survives restarts.
        let log_file = data_dir.join(LOG_FILE);
        let (log, log2) = open_log(&log_file, run_as.as_ref())?;

        let mut cmd = Command::new(binaries.bindir.join("postgres"));
        cmd.arg("-D")
            .arg(&data_dir)
            .current_dir(&data_dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .env_remove("PGDATA")
            .env("LC_ALL", "C")
            // Its own process group: a terminal Ctrl-C must not reach the server (see module docs).
            .process_group(0);
        if let Some(u) = &run_as {
            cmd.uid(u.uid).gid(u.gid);
        }
        let child = cmd.spawn().map_err(|e| {
            embedded_err(format!(
                "cannot start {}/postgres: {e}",
                binaries.bindir.display()
            ))
        })?;
        let mut postmaster = Server::new(place, opts.keep, SHUTDOWN);
        postmaster.spawned(child);
        let mut server = EmbeddedServer {
            binaries,
            socket_dir: data_dir.clone(),
            data_dir,
            port,
            settings,
            log_file,
            server: postmaster,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn initdb(
        bin: &Binaries,
        data_dir: &Path,
        run_as: Option<&RunAs>,
        guard: &Guard,
    ) -> Result<(), Error> {
        let mut cmd = Command::new(bin.bindir.join("initdb"));
        cmd.arg("-D")
            .arg(data_dir)
            .args([
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "-U",
                "postgres",
                "--no-instructions",
            ])
            .stdin(Stdio::null())
            .env_remove("PGDATA")
            .env("LC_ALL", "C")
            .process_group(0);
        if let Some(parent) = data_dir.parent() {
            cmd.current_dir(parent);
        }
        if let Some(u) = run_as {
            cmd.uid(u.uid).gid(u.gid);
        }
        // --no-instructions exists since PostgreSQL 14; older initdb rejects it: retry without.
        let out = last_resort::output(&mut cmd, guard)
            .map_err(|e| embedded_err(format!("cannot run initdb: {e}")))?;
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        if stderr.contains("no-instructions") {
            let mut args: Vec<std::ffi::OsString> =
                cmd.get_args().map(|a| a.to_os_string()).collect();
            args.retain(|a| a != "--no-instructions");
            let mut cmd2 = Command::new(bin.bindir.join("initdb"));
            cmd2.args(args)
                .stdin(Stdio::null())
                .env_remove("PGDATA")
                .env("LC_ALL", "C")
                .process_group(0);
            if let Some(parent) = data_dir.parent() {
                cmd2.current_dir(parent);
            }
            if let Some(u) = run_as {
                cmd2.uid(u.uid).gid(u.gid);
            }
            let out2 = last_resort::output(&mut cmd2, guard)
                .map_err(|e| embedded_err(format!("cannot run initdb: {e}")))?;
            if out2.status.success() {
                return Ok(());
            }
            return Err(Self::initdb_error(data_dir, run_as, &out2));
        }
        Err(Self::initdb_error(data_dir, run_as, &out))
    }

    fn initdb_error(data_dir: &Path, run_as: Option<&RunAs>, out: &std::process::Output) -> Error {
        let mut msg = format!(
            "initdb -D {} failed ({}):\n{}{}",
            data_dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(u) = run_as {
            msg.push_str(&format!(
                "\n(stampede runs as root, so the server runs as `{}`; every parent directory of {} must be \
                 traversable by that account)",
                u.name,
                data_dir.display()
            ));
        }
        embedded_err(msg)
    }

    /// Wait as `pg_ctl -w` does: until postmaster.pid says `ready` (PostgreSQL 10+) and the socket
    /// exists; fail early if the postmaster exits.
    fn wait_ready(&mut self) -> Result<(), Error> {
        let deadline = Instant::now() + START_TIMEOUT;
        let socket = self.socket_dir.join(format!(".s.PGSQL.{}", self.port));
        loop {
            if let Some(status) = self.server.exited() {
                return Err(embedded_err(format!(
                    "the server exited during startup ({status}); last lines of {}:\n{}",
                    self.log_file.display(),
                    tail_lines(&self.log_file, 30)
                )));
            }
            if let Some(pm) = read_postmaster_pid(&self.data_dir) {
                // PostgreSQL 10+ writes "starting" then "ready"; before "starting" is written the
                // status line is empty while the socket may already exist, so an empty status
                // means ready only for servers older than 10 (which never write one).
                let major: u32 = self
                    .binaries
                    .version
                    .split('.')
                    .next()
                    .and_then(|m| m.parse().ok())
                    .unwrap_or(10);
                let ready = pm.status == "ready" || (major < 10 && pm.status.is_empty());
                if ready && Some(pm.pid) == self.pid() && socket.exists() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                let tail = tail_lines(&self.log_file, 30);
                let _ = self.server.shutdown();
                return Err(embedded_err(format!(
                    "the server did not become ready within {} s; last lines of {}:\n{tail}",
                    START_TIMEOUT.as_secs(),
                    self.log_file.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A server kept in `data_dir` (`stampede server start`): Some when its postmaster.pid names a
    /// live process. The handle is `keep` (dropping it leaves the server running); call
    /// [`EmbeddedServer::stop`] to stop it. Settings are read back from `stampede.conf`.
    pub fn attach(data_dir: &Path, bindir: Option<&Path>) -> Result<Option<EmbeddedServer>, Error> {
        let Some(pm) = read_postmaster_pid(data_dir) else {
            return Ok(None);
        };
        if !pid_alive(pm.pid) {
            return Ok(None);
        }
        let binaries = match Self::find_binaries(bindir) {
            Ok(b) => b,
            // Attaching needs no binaries; report what the data directory says.
            Err(_) => Binaries {
                bindir: PathBuf::new(),
                version: fs::read_to_string(data_dir.join("PG_VERSION"))
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                found_by: "PG_VERSION".into(),
            },
        };
        let settings = fs::read_to_string(data_dir.join(STAMPEDE_CONF))
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        Ok(Some(EmbeddedServer {
            binaries,
            socket_dir: pm
                .socket_dir
                .clone()
                .unwrap_or_else(|| data_dir.to_path_buf()),
            data_dir: data_dir.to_path_buf(),
            port: pm.port,
            settings,
            log_file: data_dir.join(LOG_FILE),
            server: Server::attached(pm.pid, SHUTDOWN),
        }))
    }

    /// How to connect: unix socket in the private directory, trust auth, database `postgres`.
    pub fn conn_config(&self) -> ConnConfig {
        ConnConfig {
            hosts: vec![HostSpec {
                host: self.socket_dir.display().to_string(),
                port: self.port,
            }],
            user: "postgres".into(),
            dbname: "postgres".into(),
            password: None,
            passfile: None,
            sslmode: SslMode::Disable,
            sslrootcert: None,
            sslcert: None,
            sslkey: None,
            application_name: "stampede".into(),
            connect_timeout: Some(Duration::from_secs(10)),
            options: None,
            target_session_attrs: Default::default(),
            load_balance_hosts: Default::default(),
        }
    }

    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// The settings the server was started with, for printing (`name = value`).
    pub fn settings(&self) -> &[(String, String)] {
        &self.settings
    }

    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// The unix socket directory (`host` for clients such as psql).
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server log file.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// The postmaster's pid, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.server.pid()
    }

    /// Whether the server is left running (and its directory kept) when the handle is dropped.
    pub fn keep(&self) -> bool {
        self.server.keep()
    }

    /// Change `keep` (e.g. `--keep-server` decided after start).
    pub fn set_keep(&mut self, keep: bool) {
        self.server.set_keep(keep);
    }

    /// Stop now (fast shutdown) and remove the directory unless kept. A kept server (or an
    /// attached one) is stopped too — that is what `stampede server stop` means; only a temporary
    /// directory is ever removed. A directory that cannot be removed is an error naming it.
    pub fn stop(self) -> Result<(), Error> {
        self.server.stop()
    }
}
