//! [`MariaDb`]: a private MariaDB server for the MySQL protocol's tests, from the machine's
//! binaries (Debian's `mariadb-server`: `mariadb-install-db`, `mariadbd`; the `mariadb` client
//! for the tests' own SQL). The PostgreSQL helpers' pattern: a temporary directory with the
//! data directory, the unix socket, the error log and the pid file; a free TCP port on
//! 127.0.0.1; the server stopped (SIGTERM, then waited for) and the directory removed on drop.
//!
//! - [`MariaDb::start`]: one per test, with extra server options (`--ssl-cert=...`).
//! - [`MariaDb::shared`]: one for the whole test binary, started on first use, stopped at
//!   process exit (statics are never dropped).
//!
//! Accounts: `mariadb-install-db --auth-root-authentication-method=normal` makes `root` with an
//! empty password and mysql_native_password, at `localhost`, `127.0.0.1` and `::1`. As root
//! (mariadbd refuses to run as root without `--user`), both programs run as the `mysql`
//! account the Debian package creates, else `nobody` ([`run_as`]); the directory is theirs.
//!
//! Settings for a throwaway server: a small buffer pool, no doublewrite, no flush at commit,
//! utf8mb4 tables (MariaDB's compiled-in default is latin1; Debian's packaged configuration sets
//! utf8mb4), `skip-name-resolve` (no DNS on connect), no performance schema, 64 MiB packets (for the
//! tests of payloads that span several 16 MiB protocol packets).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::account::{free_port, run, unprivileged};

/// The (uid, gid) the server runs as when the tests run as root: `mysql`, else `nobody`.
pub fn run_as() -> Option<(u32, u32)> {
    unprivileged(&[c"mysql", c"nobody"])
}

fn as_server(cmd: &mut Command) -> &mut Command {
    if let Some((uid, gid)) = run_as() {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

/// Where a MariaDB program is: `/usr/sbin` or `/usr/bin` (Debian), else the PATH.
fn program(name: &str) -> PathBuf {
    ["/usr/sbin", "/usr/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// A running private MariaDB server.
pub struct MariaDb {
    dir: tempfile::TempDir,
    socket: PathBuf,
    port: u16,
    /// None once stopped; a Mutex so that a `static` one can be stopped at exit.
    child: Mutex<Option<Child>>,
}

impl MariaDb {
    /// Initialise a data directory and start a server with `extra` options after the
    /// throwaway defaults (`--ssl-cert=/path`, `--max-connections=5`, ...); wait until it
    /// greets a client. Panics when it cannot (a test that cannot start its server fails).
    pub fn start(extra: &[&str]) -> MariaDb {
        let dir = tempfile::Builder::new()
            .prefix("stampede-mariadb-")
            .tempdir()
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        server_dirs(dir.path());
        install_db(dir.path());
        let port = free_port();
        let mut cmd = mariadbd(dir.path(), port);
        cmd.args(extra);
        let child = spawn(&mut cmd);
        let db = MariaDb {
            socket: dir.path().join("mysqld.sock"),
            dir,
            port,
            child: Mutex::new(Some(child)),
        };
        db.wait_ready(&db.dir.path().join("error.log"));
        db
    }

    /// Wait until the server sends its greeting on the unix socket (a handshake packet:
    /// protocol version 10 after the 4-byte header).
    fn wait_ready(&self, log: &Path) {
        use std::io::Read;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(mut s) = std::os::unix::net::UnixStream::connect(&self.socket) {
                let mut head = [0u8; 5];
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                if s.read_exact(&mut head).is_ok() && head[4] == 10 {
                    return;
                }
            }
            let exited = self
                .child
                .lock()
                .unwrap()
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                panic!(
                    "mariadbd did not come up ({}):\n{}",
                    exited.map_or("timeout".to_string(), |s| s.to_string()),
                    fs::read_to_string(log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One server for the whole test binary, started on first use, stopped at exit.
    pub fn shared() -> &'static MariaDb {
        SHARED.get_or_init(|| {
            let db = MariaDb::start(&[]);
            static REGISTER: Once = Once::new();
            // SAFETY: registering a plain extern "C" fn.
            REGISTER.call_once(|| unsafe {
                libc::atexit(stop_shared_at_exit);
            });
            db
        })
    }

    /// The unix socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's directory (data directory, socket, error log): a place for a test's files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's error log.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    /// `mysql://user[:password]@localhost/db?socket=...`: the unix socket.
    pub fn socket_url(&self, user: &str, password: Option<&str>, db: &str) -> String {
        format!(
            "mysql://{}@localhost/{db}?socket={}",
            userinfo(user, password),
            self.socket.display()
        )
    }

    /// `mysql://user[:password]@127.0.0.1:port/db`: TCP.
    pub fn tcp_url(&self, user: &str, password: Option<&str>, db: &str) -> String {
        format!(
            "mysql://{}@127.0.0.1:{}/{db}",
            userinfo(user, password),
            self.port
        )
    }

    /// `sql` through the `mariadb` client as root over the socket (batch mode: one line a
    /// row, tab-separated, no column names); its output. Panics with stderr when it fails.
    pub fn sql(&self, sql: &str) -> String {
        self.try_sql(sql)
            .unwrap_or_else(|e| panic!("mariadb -e {sql:?}: {e}"))
    }

    /// [`MariaDb::sql`] that may fail: the output, or stderr.
    pub fn try_sql(&self, sql: &str) -> Result<String, String> {
        client_sql(&self.socket, sql)
    }

    /// Drop database `name` if it exists and create it empty.
    pub fn fresh_database(&self, name: &str) {
        self.sql(&format!(
            "DROP DATABASE IF EXISTS `{name}`; CREATE DATABASE `{name}`"
        ));
    }

    /// The server's process id, while it runs (a test's fault kills or stops it).
    pub fn pid(&self) -> Option<i32> {
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        child.as_ref().map(|c| c.id() as i32)
    }

    /// Stop the server now (SIGTERM: a clean shutdown) and wait for it; later calls do nothing.
    pub fn stop(&self) {
        let child = self.child.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut c) = child {
            terminate(&c);
            reap(&mut c);
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server of [`MariaDb::shared`].
static SHARED: OnceLock<MariaDb> = OnceLock::new();

extern "C" fn stop_shared_at_exit() {
    // A static is never dropped: stop the server and remove its directory here.
    if let Some(db) = SHARED.get() {
        db.stop();
        let _ = fs::remove_dir_all(db.dir.path());
    }
}

/// A server's directory `dir`'s subdirectories, `data` and `tmp`, all the server account's.
/// A private tmpdir: servers bootstrapping side by side in /tmp collide on their temporary
/// tables' names ("Error on delete of '/tmp/#sql-temptable-...'").
pub(crate) fn server_dirs(dir: &Path) {
    let (data, tmp) = (dir.join("data"), dir.join("tmp"));
    for d in [&data, &tmp] {
        fs::create_dir(d).unwrap();
    }
    if let Some((uid, gid)) = run_as() {
        for d in [dir, &data, &tmp] {
            std::os::unix::fs::chown(d, Some(uid), Some(gid)).unwrap();
        }
    }
}

/// `mariadb-install-db` into `dir/data`: the system tables, `root` with an empty password.
pub(crate) fn install_db(dir: &Path) {
    run(as_server(
        Command::new(program("mariadb-install-db"))
            .arg("--no-defaults")
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--tmpdir={}", dir.join("tmp").display()))
            .stdin(Stdio::null()),
    ));
}

/// `mariadbd` on `dir` (data directory, tmpdir, `mysqld.sock`, `error.log`, pid file) and
/// TCP `port` on 127.0.0.1, with the throwaway settings; add options after them, then
/// [`spawn`] it.
pub(crate) fn mariadbd(dir: &Path, port: u16) -> Command {
    let mut cmd = Command::new(program("mariadbd"));
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", dir.join("data").display()))
        .arg(format!("--tmpdir={}", dir.join("tmp").display()))
        .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
        .arg(format!("--port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
        .arg(format!("--log-error={}", dir.join("error.log").display()))
        .args([
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=32M",
            "--innodb-log-file-size=16M",
            "--innodb-flush-log-at-trx-commit=0",
            "--innodb-doublewrite=0",
            "--performance-schema=OFF",
            "--max-connections=100",
            "--max-allowed-packet=64M",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Start a [`mariadbd`] command as the server account.
pub(crate) fn spawn(cmd: &mut Command) -> Child {
    as_server(cmd)
        .spawn()
        .unwrap_or_else(|e| panic!("start mariadbd (apt-get install mariadb-server): {e}"))
}

/// SIGTERM (a clean shutdown) to a server.
pub(crate) fn terminate(c: &Child) {
    // SAFETY: signalling our own child process by its pid.
    unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
}

/// Wait for a [`terminate`]d server to exit; killed if it takes over 30 s.
fn reap(c: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while c.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = c.kill();
            let _ = c.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `sql` through the `mariadb` client as root over `socket` (batch mode: one line a row,
/// tab-separated, no column names): the output, or stderr.
pub(crate) fn client_sql(socket: &Path, sql: &str) -> Result<String, String> {
    let out = Command::new(program("mariadb"))
        .arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .args(["-uroot", "--batch", "--skip-column-names", "-e", sql])
        .stdin(Stdio::null())
        .output()
        .expect("run the mariadb client");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn userinfo(user: &str, password: Option<&str>) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|c| {
                if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
                    (c as char).to_string()
                } else {
                    format!("%{c:02X}")
                }
            })
            .collect::<String>()
    };
    match password {
        Some(p) => format!("{}:{}", enc(user), enc(p)),
        None => enc(user),
    }
}
