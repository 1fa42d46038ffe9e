//! The embedded MariaDB: with no target given and a workload that asks for MySQL, stampede runs a
//! private MariaDB from the machine's binaries (Debian's `mariadb-server`) in a temporary
//! directory and removes it afterwards (also after an error or Ctrl-C): the MySQL counterpart of
//! `pg::embedded`, with the same shape (options, `start`, `attach`, `stop`, `Drop`, `keep`).
//!
//! Owns: finding `mariadbd` and `mariadb-install-db` and their version, `mariadb-install-db`,
//! the server's settings, starting `mariadbd`, waiting until it greets a client, the database
//! the targets name ([`DATABASE`]), stopping it and removing its directory; and attaching to a
//! kept server (`stampede server status|stop`) through its pid file.
//! Must not touch: any server it did not start or was not pointed at (`data_dir`); any directory
//! other than the temporary one it created (a `data_dir` given by the user is never removed);
//! the machine's MariaDB configuration (`/etc/mysql`: every program runs with `--no-defaults`).
//!
//! ## Layout
//! Everything is in the data directory (`<tmp>/data`, or the given `data_dir`), which is
//! MariaDB's `datadir`, mode 0700 (set at every start): the unix socket `mysqld.sock`, the pid
//! file `mariadbd.pid`, the error log `stampede-server.log`, `stampede.cnf`, the record of the
//! options the server was started with and of its password (see below), and `.files`, the one
//! directory the server may read and write files in. Every other directory in a datadir is a
//! database to MariaDB, so there is no `tmp/` beside them; `tmpdir` is the data directory
//! itself, private to this server (testkit's servers once collided on their temporary tables'
//! names in a shared /tmp). The socket path must fit in `sockaddr_un.sun_path` (108 bytes with
//! its NUL on Linux): a longer data directory is refused before anything is created.
//!
//! ## Who can connect: the account that runs stampede, and root
//! An unprivileged local user once read `/etc/passwd` through `load_file` during a run: the
//! server listened on 127.0.0.1 with a password-less root (issue 30). Now, as the embedded
//! PostgreSQL:
//! - By default no TCP (`skip_networking`): the unix socket only, in the data directory, which
//!   is 0700 and the server's account's, so no other user can reach it. There root logs in
//!   without a password, as the embedded PostgreSQL trusts its private socket.
//!   [`EmbeddedMariaDb::conninfo`] is the socket then.
//! - TCP when asked (`port` or `bind_address` in `settings`, or `skip_networking=OFF`: a
//!   benchmark over loopback, or from another machine): on 127.0.0.1 unless `bind_address` says
//!   otherwise, on a free port picked at start unless `port` names one (a port another process
//!   takes between our pick and the server's bind is picked again, twice at most).
//!   [`EmbeddedMariaDb::conninfo`] is TCP then, as `stampede`, with the data directory's
//!   password; [`EmbeddedMariaDb::socket_conninfo`] is always the socket.
//! - The password: 24 random letters and digits, made at the data directory's first start and
//!   kept in `stampede.cnf` (mode 0600, group `[stampede-tcp]`), so a kept server's URL survives
//!   restarts. A run never prints it; `stampede server start` prints the URL with it.
//! - The accounts are set at every start by an init file (`--init-file`, SQL the server runs
//!   after reading its grant tables and before accepting a connection; removed once the server
//!   is ready): `root@127.0.0.1` and `root@::1` get the password (mariadb-install-db made them
//!   with none), `stampede@%` is made with it and every privilege (root exists only at loopback
//!   addresses, and `bind_address` may let in others), `root@<host name>` is dropped.
//!   `root@localhost` keeps no password: `localhost` matches only the socket while
//!   `skip_name_resolve` is ON, so turning that off is refused when TCP is open, as is
//!   `skip_grant_tables` (no password checked at all).
//! - `secure_file_priv = <data_dir>/.files` (0700; hidden from `SHOW DATABASES` by
//!   `ignore_db_dirs`): `LOAD_FILE`, `LOAD DATA INFILE` and `SELECT ... INTO OUTFILE` reach no
//!   other file of the machine. `secure_file_priv`, `ignore_db_dirs` and `init_file` are
//!   stampede's own settings.
//!
//! ## Options on the command line, and `stampede.cnf`
//! `mariadbd --no-defaults --name=value ...`: the settings are on the command line (visible in
//! `ps`, no quoting rules of option files in between), and stampede's record of them is
//! `<data_dir>/stampede.cnf`, rewritten on every start, which the server does not read. It is an
//! option file all the same: its `[client]` and `[mariadb-client]` groups make
//! `mariadb --defaults-file=<data_dir>/stampede.cnf` connect as root over the socket to
//! [`DATABASE`], its `[stampede-tcp]` group holds the TCP account and its password, and its
//! `[stampede-mariadbd]` group, which no MariaDB program reads, lists the settings for
//! [`EmbeddedMariaDb::attach`].
//!
//! ## Starting and stopping
//! `mariadb-install-db --no-defaults --auth-root-authentication-method=normal --skip-test-db`
//! (skipped when the data directory has a `mysql` system database) makes `root` with an empty
//! password at `localhost`, `127.0.0.1` and `::1` (and at the host's name, which
//! `skip_name_resolve` ignores with a warning in the log); the InnoDB settings are given to it
//! too, since some (`innodb_page_size`) are fixed when the data files are created. Then `mariadbd`
//! is spawned directly, in its own process group (`process_group(0)`: a terminal's Ctrl-C goes to
//! the foreground group and must not reach the server; stampede catches it, unwinds, and this
//! handle's `Drop` stops the server). Readiness is a condition, not a sleep: a
//! [`crate::Session`] connects over the socket until the server greets it and logs root in (the
//! socket exists before the server accepts, so a bare connect proves nothing), with a deadline;
//! the server exiting meanwhile fails the start at once with the tail of its error log. That
//! session then creates [`DATABASE`] if it is missing, and one more connects over TCP to it, so
//! that [`EmbeddedMariaDb::conninfo`] is known to work when `start` returns.
//!
//! Stopping: SIGTERM, MariaDB's normal shutdown (connections killed, InnoDB flushed and closed),
//! waited for; SIGKILL after 120 s (InnoDB recovers from its redo log at the next start). A
//! temporary directory is removed afterwards, and one that cannot be removed is named (an
//! error from `stop`, a warning on stderr from `Drop`); a kept server or a `data_dir` is left.
//! A process that must end at once (stampede's second Ctrl-C) SIGKILLs the server and removes
//! its directory through `pg::embedded::last_resort`, where the handle registers it. A kill -9
//! of stampede leaves the server running; its pid is in `<data_dir>/mariadbd.pid`.
//!
//! ## Running as root
//! `mariadbd` refuses to run as root (tests and CI run as root). When the effective uid is 0,
//! `mariadb-install-db` and `mariadbd` run as the `mysql` account (Debian's package makes it)
//! if it exists, else `nobody`, through `CommandExt::uid/gid`, and the directories are chowned
//! to it; a given `data_dir`'s parents must be traversable by that account (checked first, as
//! for the embedded PostgreSQL: `pg::embedded::os`, shared with it).
//!
//! ## Default settings, and why (reasoned, as the embedded PostgreSQL's, not measured)
//! Honest first, as for the embedded PostgreSQL: durability as a production server has it.
//! - `innodb_flush_log_at_trx_commit = 1`, `innodb_doublewrite = ON`: the defaults, and the
//!   counterparts of PostgreSQL's `synchronous_commit = on`/`fsync = on` and `full_page_writes
//!   = on`, which the embedded PostgreSQL keeps: a commit is on disk when it returns, and a torn
//!   page can be repaired. Turning them off makes numbers no real deployment gets; set them with
//!   `settings` if you mean it. The binary log stays off (MariaDB's default): PostgreSQL's WAL
//!   is its redo log and replication stream in one, InnoDB's redo log is the counterpart, and
//!   the binary log is a second log that a standalone server does not need (`log_bin` turns it
//!   on).
//! - `innodb_buffer_pool_size` = 25 % of RAM, at least 128 MiB, at most 4 GiB: the same share
//!   and cap as the embedded PostgreSQL's `shared_buffers`, so the two servers are compared at
//!   the same cache size, and for its reasons (the client runs on the same machine; beyond a
//!   few GB the gain for sysbench- and pgbench-sized data is small). InnoDB reads with O_DIRECT
//!   (MariaDB 10.6's default), so unlike PostgreSQL it gets no second cache from the OS: a data
//!   set larger than 4 GiB is cached less than on the embedded PostgreSQL; raise it with
//!   `settings` for such runs. 4 GiB on the 24 GiB development box.
//! - `innodb_log_file_size = 1G` (MariaDB's default is 96 MiB): the redo log bounds how much
//!   changed data may wait in the buffer pool before a checkpoint must flush it; with 96 MiB a
//!   write-heavy run spends its time in furious flushing. The counterpart of the embedded
//!   PostgreSQL's `max_wal_size = 4GB`, smaller because InnoDB's redo has no full-page images
//!   (its doublewrite buffer is apart) and because the file is preallocated on disk (1 GiB in
//!   the temporary directory; fallocate makes that instant).
//! - `max_connections = 10000`: thousands of clients, each a thread in MariaDB
//!   (`thread_handling` one-thread-per-connection, the default). An unused slot costs MariaDB
//!   little but the performance schema's per-thread tables, which it sizes from this: 142 MB of
//!   performance-schema memory at 10000 against 98 MB at the default 151 (`SHOW ENGINE
//!   PERFORMANCE_SCHEMA STATUS`, 10.11; the server's RSS 242 MB against 199 MB). Each connection
//!   needs a file descriptor: the server raises its own `open_files_limit` (wanted: 5 per
//!   connection) as far as the hard RLIMIT_NOFILE it inherits, and lowers `max_connections`
//!   when that is too small; [`EmbeddedMariaDb::notes`] says so when it happened.
//!   [`max_connections_for`] sizes it for more clients.
//! - `skip_name_resolve = ON`: no reverse DNS lookup per connection (a stall on a machine
//!   without DNS, and a host-cache lock at thousands of connects); accounts are by address.
//! - `performance_schema = ON`: stampede reads its waits and statement digests to explain a run
//!   (the counterpart of `pg_stat_statements` and `track_io_timing` on the embedded PostgreSQL),
//!   with everything its observer reads on (`observe::mysql_sampler::probe`, issue 35): a server
//!   stampede started must never ask the user to turn on what stampede could have. So the
//!   consumers `events_waits_current` (each session's wait, not its `Stage:` state) and
//!   `events_statements_current` (without it MariaDB 10.11 counts no prepared statement's
//!   executions: top SQL would miss them) are ON, beside the default ones (global and thread
//!   instrumentation, statement digests), and so are every wait instrument, timed
//!   (`performance_schema_instrument = wait/%=ON`: the mutex and rwlock ones, `wait/synch/%`,
//!   are off by default). This costs throughput: `run oltp_point_select -c 4 -T 10` (10,000
//!   rows, 2 shared cores, noisy) did 46-58k/s against 61-75k/s with both consumers OFF and
//!   `wait/synch/%` off, and about as little with only `wait/synch/%` off: the consumers are
//!   most of it. A run that must not pay it sets the consumers OFF
//!   (`performance_schema_consumer_events_waits_current=OFF`, ...) in `settings`, and the
//!   observer then says what it cannot see. These are startup options
//!   (the manual's "Performance Schema Command Options"), not `UPDATE`s of `setup_consumers`,
//!   so they hold from the server's first statement and for every restart of a kept server.
//! - `character_set_server = utf8mb4`, `collation_server = utf8mb4_general_ci`: what Debian's
//!   packaged configuration sets (MariaDB's compiled-in default is latin1), so tables are what a
//!   packaged server makes; `--no-defaults` skips that configuration.
//! - `innodb_fast_shutdown = 2`, for a temporary directory only: the directory is removed right
//!   after the shutdown, so the shutdown need not flush the buffer pool (up to 4 GiB written for
//!   nothing); the redo log is flushed, as after a crash. A kept or given directory keeps the
//!   default (1).
//!
//! Left at MariaDB's defaults on purpose: `innodb_flush_method` (O_DIRECT), `innodb_io_capacity`,
//! `thread_handling`, `back_log` (sized from `max_connections`), `sql_mode`, the isolation level
//! (REPEATABLE READ), `max_allowed_packet` (16 MiB, which the loader's batches stay under).
//!
//! Not supported: Oracle MySQL 8's `mysqld`, which has no `mysql_install_db` (it initialises with
//! `mysqld --initialize-insecure`): its `mysqld` is found, but the start fails for want of the
//! install program, with the install hint. A MariaDB from a binary tarball (`scripts/` beside
//! `bin/`, and a `--basedir`) is not searched either: give its bin directory when it holds both
//! programs.
//!
//! ## Module layout
//! This file: the handle ([`EmbeddedMariaDb`]), `start` and `stop`; `process`: spawning the
//! server, readiness, the record; what both embedded servers do alike (the data directory,
//! temporary or given, the log, stopping and `Drop`) is `pg::embedded::lifecycle`; `accounts`: who may log in (password, init file,
//! the settings refused, `secure_file_priv`); `files`: `mariadb-install-db`, the settings and
//! the option-file format; `discover`: the binaries, and attaching to a kept server.

mod accounts;
mod discover;
mod files;
mod process;

use accounts::*;
use files::*;
pub use files::{default_settings, read_pid_file};

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pg::embedded::last_resort::{self, Guard};
use pg::embedded::lifecycle::{open_log, Place, Server, Shutdown};
use pg::embedded::os::{chown, pid_alive, server_account, tail_lines, total_ram, RunAs};
use pg::Error;

use crate::{Conninfo, Password, Session, SslMode};

/// The database [`EmbeddedMariaDb::conninfo`] names, created at every start when missing: a
/// MariaDB has no database a workload could use (the embedded PostgreSQL's `postgres` is the
/// one `initdb` makes; MariaDB's counterparts are system schemas), so stampede makes its own.
pub const DATABASE: &str = "stampede";

/// The account over the socket: root, with an empty password
/// (`--auth-root-authentication-method=normal`); over TCP it is `stampede`, with the data
/// directory's password (module header).
pub const USER: &str = "root";

/// `max_connections` by default (see the module header).
pub const DEFAULT_MAX_CONNECTIONS: u32 = 10_000;

/// `max_connections` for an embedded server that `clients` clients use, when the user did not
/// set it: the default 10000, or `clients + 100` when more are needed (the 100 for the loader's,
/// the observer's and the checks' connections, as for the embedded PostgreSQL).
pub fn max_connections_for(clients: u32) -> u32 {
    DEFAULT_MAX_CONNECTIONS.max(clients.saturating_add(100))
}

const SOCKET_FILE: &str = "mysqld.sock";
const PID_FILE: &str = "mariadbd.pid";
const LOG_FILE: &str = "stampede-server.log";
const RECORD_FILE: &str = "stampede.cnf";
/// The `stampede.cnf` group that lists the settings (no MariaDB program reads it).
const RECORD_GROUP: &str = "stampede-mariadbd";

/// `sockaddr_un.sun_path` is 108 bytes on Linux, including the terminating NUL.
const SOCKET_PATH_MAX: usize = 107;

/// How long to wait for the server to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// SIGTERM, MariaDB's normal shutdown (connections killed, InnoDB flushed and closed); SIGKILL
/// after two minutes, and from the last resort: a temporary directory is removed right after,
/// and a given one recovers from InnoDB's redo log at the next start.
const SHUTDOWN: Shutdown = Shutdown {
    signal: libc::SIGTERM,
    at_once: libc::SIGKILL,
    timeout: Duration::from_secs(120),
    after: " (InnoDB recovers at the next start)",
};
/// How often readiness and exit are polled (a poll, not a wait: each one checks a condition).
const POLL: Duration = Duration::from_millis(20);
/// How many times a port we picked is picked again when another process took it first.
const PORT_RETRIES: usize = 2;

/// The install hint every "no binaries" error carries.
const INSTALL_HINT: &str =
    "install the MariaDB server (Debian/Ubuntu: `sudo apt-get install mariadb-server`; \
     Fedora/RHEL: `sudo dnf install mariadb-server`), or give the directory holding `mariadbd` \
     and `mariadb-install-db`, or give a MySQL target (-d mysql://...)";

/// The server programs, first name first (MariaDB's since 10.5; the MySQL-named ones are its
/// compatibility links, or an older MariaDB's only names).
const SERVER_NAMES: [&str; 2] = ["mariadbd", "mysqld"];
const INSTALL_NAMES: [&str; 2] = ["mariadb-install-db", "mysql_install_db"];

/// Settings stampede owns: the private layout. Giving one is an error, not silently ignored.
const OWN_SETTINGS: [&str; 13] = [
    "datadir",
    "tmpdir",
    "socket",
    "pid_file",
    "log_error",
    "user",
    "no_defaults",
    "defaults_file",
    "defaults_extra_file",
    "defaults_group_suffix",
    "secure_file_priv",
    "ignore_db_dirs",
    "init_file",
];

/// Where the MariaDB server programs were found, and which version they are.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// `mariadbd` (or `mysqld`).
    pub server: PathBuf,
    /// `mariadb-install-db` (or `mysql_install_db`).
    pub install_db: PathBuf,
    /// From `mariadbd --version`, without the distribution's suffix: "10.11.19-MariaDB".
    pub version: String,
    /// How they were found: "/usr/sbin", "/usr/bin", "PATH", "bindir", or where the server's
    /// and the install program's differ, both ("/usr/sbin, /usr/bin").
    pub found_by: String,
}

#[derive(Clone, Debug, Default)]
pub struct EmbeddedMariaDbOptions {
    /// A directory holding `mariadbd` and `mariadb-install-db`; otherwise /usr/sbin, /usr/bin,
    /// then PATH.
    pub bindir: Option<PathBuf>,
    /// Use (and keep) this data directory instead of a temporary one (`stampede server start`).
    pub data_dir: Option<PathBuf>,
    /// Do not stop or remove the server when the handle is dropped (`--keep-server`).
    pub keep: bool,
    /// Extra settings, `--name=value` after stampede's defaults (a name given replaces the
    /// default; `-` and `_` are the same in names, as for MariaDB). An empty value passes
    /// `--name` alone.
    pub settings: Vec<(String, String)>,
}

/// A running private MariaDB. Dropping it stops the server and removes its directory unless
/// `keep` was set.
pub struct EmbeddedMariaDb {
    binaries: Binaries,
    data_dir: PathBuf,
    socket: PathBuf,
    /// The address TCP clients use (127.0.0.1 unless `bind_address` names another), or None
    /// with `skip_networking`.
    host: Option<String>,
    /// The TCP port; None when the server listens on none.
    port: Option<u16>,
    /// The TCP account's password (the data directory's, recorded in `stampede.cnf`).
    password: Option<Password>,
    settings: Vec<(String, String)>,
    notes: Vec<String>,
    log_file: PathBuf,
    /// The server's process, its directory, and whether they are kept.
    server: Server,
}

impl std::fmt::Debug for EmbeddedMariaDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedMariaDb")
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

/// Why one attempt to start did not give a ready server.
enum StartFailure {
    /// Another process bound the port we picked: pick again.
    PortTaken,
    Failed(Error),
}

impl EmbeddedMariaDb {
    /// mariadb-install-db (if the data directory is new), start, wait until root can log in,
    /// create [`DATABASE`].
    pub fn start(opts: &EmbeddedMariaDbOptions) -> Result<EmbeddedMariaDb, Error> {
        // Everything that can be checked without touching the disk first.
        let user_settings = check_settings(&opts.settings)?;
        let binaries = Self::find_binaries(opts.bindir.as_deref())?;
        let run_as = server_account("MariaDB", "mysql")?;
        let mut settings = merge_settings(default_settings(), &user_settings);
        let tcp = tcp_asked(&settings);
        check_closed(&settings, tcp)?;
        let given_port = match find(&settings, "port").filter(|_| tcp) {
            Some(v) => Some(
                v.parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| embedded_err(format!("port={v}: not a port number")))?,
            ),
            None => None,
        };

        let place = Place::new(
            opts.data_dir.as_deref(),
            "stampede-mariadb-",
            opts.keep,
            read_pid_file,
        )?;
        let data_dir = place.data_dir.clone();
        let socket = data_dir.join(SOCKET_FILE);
        if socket.as_os_str().len() > SOCKET_PATH_MAX {
            return Err(embedded_err(format!(
                "data directory path {} is too long to hold the server's unix socket ({} bytes \
                 at most for the socket's path); use a shorter path",
                data_dir.display(),
                SOCKET_PATH_MAX
            )));
        }
        place.check_account(run_as.as_ref(), "MariaDB", "/var/lib/stampede/mariadb")?;
        // At every start, not only when made: the socket is in it.
        place.make_private(run_as.as_ref())?;

        if place.tempdir.is_some() && find(&settings, "innodb_fast_shutdown").is_none() {
            settings.push(("innodb_fast_shutdown".into(), "2".into()));
        }
        let initialised = data_dir.join("mysql").is_dir();
        if !initialised {
            install_db(
                &binaries,
                &data_dir,
                &settings,
                run_as.as_ref(),
                &place.guard,
            )?;
        }
        let files = files_dir(&data_dir, run_as.as_ref())?;
        let password = recorded_password(&data_dir.join(RECORD_FILE)).unwrap_or_else(new_password);

        let host = match tcp {
            true => Some(client_host(find(&settings, "bind_address"))),
            false => None,
        };
        if !tcp && find(&settings, "skip_networking").is_none() {
            settings.push(("skip_networking".into(), "ON".into()));
        }
        if tcp && find(&settings, "bind_address").is_none() {
            settings.push(("bind_address".into(), "127.0.0.1".into()));
        }
        settings.retain(|(k, _)| norm(k) != "port");
        settings.push(("secure_file_priv".into(), files.display().to_string()));
        settings.push(("ignore_db_dirs".into(), FILES_DIR.into()));

        let log_file = data_dir.join(LOG_FILE);
        let mut server = EmbeddedMariaDb {
            binaries,
            data_dir,
            socket,
            host,
            port: None,
            password: Some(Password(password)),
            settings,
            notes: Vec::new(),
            log_file,
            server: Server::new(place, opts.keep, SHUTDOWN),
        };
        let mut tries = 0;
        loop {
            let port = match (tcp, given_port) {
                (false, _) => None,
                (true, Some(p)) => Some(p),
                (true, None) => Some(free_port()?),
            };
            match server.spawn_and_wait(port, run_as.as_ref()) {
                Ok(()) => break,
                Err(StartFailure::PortTaken) if given_port.is_none() && tries < PORT_RETRIES => {
                    tries += 1;
                }
                Err(StartFailure::PortTaken) => {
                    return Err(embedded_err(format!(
                        "the server could not listen on 127.0.0.1:{}: the port is in use; \
                         last lines of {}:\n{}",
                        port.unwrap_or(0),
                        server.log_file.display(),
                        tail_lines(&server.log_file, 30)
                    )))
                }
                Err(StartFailure::Failed(e)) => return Err(e),
            }
        }
        Ok(server)
    }

    /// How to connect for a benchmark: the private socket ([`Self::socket_conninfo`]); when
    /// TCP was asked for, TCP to 127.0.0.1 (or `bind_address`'s first address) and the
    /// server's port as `stampede` with the data directory's password, database [`DATABASE`],
    /// no TLS (the server has no certificate).
    pub fn conninfo(&self) -> Conninfo {
        match &self.host {
            Some(host) => Conninfo {
                host: host.clone(),
                port: self.port.unwrap_or(3306),
                socket: None,
                user: TCP_USER.into(),
                password: self.password.clone(),
                ..socket_conninfo(&self.socket, Some(DATABASE))
            },
            None => self.socket_conninfo(),
        }
    }

    /// The TCP account's password, for `stampede server start`'s URL (never printed by a run).
    pub fn tcp_password(&self) -> Option<&str> {
        self.password.as_ref().map(|p| p.0.as_str())
    }

    /// `stampede.cnf`: `mariadb --defaults-file=<it>` connects as root over the socket; its
    /// `[stampede-tcp]` group holds the TCP account's password.
    pub fn record_file(&self) -> PathBuf {
        self.data_dir.join(RECORD_FILE)
    }

    /// How to connect over the private unix socket (root, [`DATABASE`]).
    pub fn socket_conninfo(&self) -> Conninfo {
        socket_conninfo(&self.socket, Some(DATABASE))
    }

    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// The settings the server was started with, for printing (`name`, `value`): stampede's
    /// defaults with the user's in place, then the user's others, then `bind_address`, `port`
    /// and `socket`. (The data directory, pid file and error log are in [`Self::data_dir`].)
    pub fn settings(&self) -> &[(String, String)] {
        &self.settings
    }

    /// What the server changed of what it was asked, said at start (a lowered
    /// `max_connections`); empty when nothing.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The unix socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The TCP port (on [`EmbeddedMariaDb::conninfo`]'s host); None when there is no TCP.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The server's error log.
    pub fn log_file(&self) -> &Path {
        &self.log_file
    }

    /// The server's pid, while it runs.
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

    /// Stop now (a normal shutdown) and remove the temporary directory, if any. A kept server (or
    /// an attached one) is stopped too — that is what `stampede server stop` means; only a
    /// temporary directory is ever removed. A directory that cannot be removed is an error
    /// naming it.
    pub fn stop(self) -> Result<(), Error> {
        self.server.stop()
    }
}

#[cfg(test)]
mod tests;
