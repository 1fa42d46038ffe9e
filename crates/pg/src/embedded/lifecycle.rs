//! The life cycle both embedded servers share, the PostgreSQL one here and the MariaDB one in
//! `mysql::embedded`: where the data directory is (a temporary one, or one given and kept), what
//! the account a server runs as under root needs of it, the log both write to, and the
//! [`Server`] a handle holds: the process (our child, or one attached through its pid file), its
//! temporary directory, whether both are kept, and its entry in the registry of the
//! [`last_resort`]. Stopping and `Drop` are here once; each flavour says how its server stops
//! ([`Shutdown`]: PostgreSQL's fast shutdown on SIGINT, MariaDB's normal one on SIGTERM).
//!
//! Must not touch: what a server is (its binaries, settings, readiness): the flavours own that.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use super::last_resort::{self, Guard};
use super::process::{chown, pid_alive, send_signal, untraversable_ancestor, RunAs};
use crate::Error;

/// How often a stopping server is looked at (a poll, not a wait: each one checks a condition).
const POLL: Duration = Duration::from_millis(10);

fn embedded_err(msg: impl Into<String>) -> Error {
    Error::Embedded(msg.into())
}

/// How a flavour's server stops.
#[derive(Clone, Copy, Debug)]
pub struct Shutdown {
    /// The clean shutdown (PostgreSQL's fast shutdown: SIGINT; MariaDB's normal one: SIGTERM).
    pub signal: libc::c_int,
    /// What ends it when it has not stopped within `timeout`, and what the last resort sends:
    /// SIGQUIT (PostgreSQL's immediate shutdown, which takes the backends down too), SIGKILL.
    pub at_once: libc::c_int,
    pub timeout: Duration,
    /// Said after the timeout's error (what the next start does about it), or "".
    pub after: &'static str,
}

impl Shutdown {
    fn timed_out(&self, pid: i32) -> Error {
        embedded_err(format!(
            "the server (pid {pid}) did not stop within {} s; sent {}{}",
            self.timeout.as_secs(),
            signal_name(self.at_once),
            self.after
        ))
    }
}

fn signal_name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

/// The server process: our child (reaped on stop) or a server found through its pid file.
enum Process {
    Child(Child),
    Pid(i32),
    Gone,
}

/// A running embedded server as its handle owns it. Dropping it stops the server and removes
/// its temporary directory unless `keep` was set; a directory that cannot be removed is said on
/// stderr, since one left behind (it may hold gigabytes) must not go unnoticed.
pub struct Server {
    process: Process,
    keep: bool,
    /// The temporary directory we created (removed on drop); None for a given data_dir.
    tempdir: Option<tempfile::TempDir>,
    shutdown: Shutdown,
    /// This server in the registry of the last resort (declared last: dropped after the
    /// directory is gone).
    guard: Guard,
}

impl Server {
    /// A server about to start in `place`; [`Server::spawned`] gives it its process.
    pub fn new(place: Place, keep: bool, shutdown: Shutdown) -> Server {
        Server {
            process: Process::Gone,
            keep,
            tempdir: place.tempdir,
            shutdown,
            guard: place.guard,
        }
    }

    /// A server found running as `pid` (a kept one): kept, so dropping the handle leaves it.
    pub fn attached(pid: i32, shutdown: Shutdown) -> Server {
        Server {
            process: Process::Pid(pid),
            keep: true,
            tempdir: None,
            shutdown,
            guard: Guard::new(None, true),
        }
    }

    /// The server's process is `child` now; the last resort may stop it.
    pub fn spawned(&mut self, child: Child) {
        self.guard.running(child.id() as i32, self.shutdown.at_once);
        self.process = Process::Child(child);
    }

    /// Our child, while it runs.
    pub fn child(&mut self) -> Option<&mut Child> {
        match &mut self.process {
            Process::Child(c) => Some(c),
            _ => None,
        }
    }

    /// Whether our child has exited (reaped: the handle holds no process any more).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        let status = self.child()?.try_wait().ok().flatten()?;
        self.process = Process::Gone;
        self.guard.stopped();
        Some(status)
    }

    /// The server's pid, while it runs.
    pub fn pid(&self) -> Option<i32> {
        match &self.process {
            Process::Child(c) => Some(c.id() as i32),
            Process::Pid(p) => Some(*p),
            Process::Gone => None,
        }
    }

    /// Whether the server is left running (and its directory kept) when the handle is dropped.
    pub fn keep(&self) -> bool {
        self.keep
    }

    /// Change `keep` (e.g. `--keep-server` decided after start).
    pub fn set_keep(&mut self, keep: bool) {
        self.keep = keep;
        self.guard.set_kept(keep);
    }

    /// Stop now and remove the temporary directory, if any. A kept server (or an attached one)
    /// is stopped too: that is what `stampede server stop` means; only a temporary directory is
    /// ever removed. A directory that cannot be removed is an error naming it.
    pub fn stop(mut self) -> Result<(), Error> {
        self.shutdown()?;
        self.keep = false;
        last_resort::remove_tempdir(self.tempdir.take()).map_err(embedded_err)
    }

    /// The flavour's clean shutdown, waited for; its `at_once` signal after the timeout.
    pub fn shutdown(&mut self) -> Result<(), Error> {
        let r = self.stop_process();
        self.guard.stopped();
        r
    }

    fn stop_process(&mut self) -> Result<(), Error> {
        let how = self.shutdown;
        match std::mem::replace(&mut self.process, Process::Gone) {
            Process::Gone => Ok(()),
            Process::Child(mut child) => {
                let pid = child.id() as i32;
                if let Ok(Some(_)) = child.try_wait() {
                    return Ok(());
                }
                send_signal(pid, how.signal);
                let deadline = Instant::now() + how.timeout;
                loop {
                    match child.try_wait() {
                        Ok(Some(_)) => return Ok(()),
                        Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
                        Ok(None) => {
                            send_signal(pid, how.at_once);
                            let _ = child.wait();
                            return Err(how.timed_out(pid));
                        }
                        Err(e) => return Err(Error::Io(e)),
                    }
                }
            }
            Process::Pid(pid) => {
                send_signal(pid, how.signal);
                let deadline = Instant::now() + how.timeout;
                while pid_alive(pid) {
                    if Instant::now() > deadline {
                        send_signal(pid, how.at_once);
                        return Err(how.timed_out(pid));
                    }
                    std::thread::sleep(POLL);
                }
                Ok(())
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.keep {
            // Leave the server running and its directory in place.
            if let Some(t) = self.tempdir.take() {
                let _ = t.keep();
            }
            return;
        }
        let _ = self.shutdown();
        // A user-given data_dir is never removed. Drop cannot return the error: it is said here.
        if let Err(e) = last_resort::remove_tempdir(self.tempdir.take()) {
            eprintln!("warning: {e}");
        }
    }
}

/// Where a server is about to start: its data directory, the temporary directory above it (None
/// for a given one), and its entry in the last resort's registry, made as soon as there is a
/// directory to remove.
pub struct Place {
    pub data_dir: PathBuf,
    pub tempdir: Option<tempfile::TempDir>,
    pub guard: Guard,
}

impl Place {
    /// `given` (made absolute; refused while the pid that `running` reads from it is alive), or
    /// `<a new temporary directory named prefix...>/data`.
    pub fn new(
        given: Option<&Path>,
        prefix: &str,
        keep: bool,
        running: impl Fn(&Path) -> Option<i32>,
    ) -> Result<Place, Error> {
        let (tempdir, data_dir) = match given {
            Some(d) => {
                let d = if d.is_absolute() {
                    d.to_path_buf()
                } else {
                    std::env::current_dir()
                        .map_err(|e| {
                            embedded_err(format!("cannot read the current directory: {e}"))
                        })?
                        .join(d)
                };
                if let Some(pid) = running(&d).filter(|&p| pid_alive(p)) {
                    return Err(embedded_err(format!(
                        "a server is already running on {} (pid {pid}); stop it first \
                         (`stampede server stop`)",
                        d.display()
                    )));
                }
                (None, d)
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix(prefix)
                    .tempdir()
                    .map_err(|e| {
                        embedded_err(format!("cannot create a temporary directory: {e}"))
                    })?;
                let d = t.path().join("data");
                (Some(t), d)
            }
        };
        // From here on a process that must end at once can still stop the server and remove
        // its directory (module `last_resort`).
        let guard = Guard::new(tempdir.as_ref().map(|t| t.path()), keep);
        Ok(Place {
            data_dir,
            tempdir,
            guard,
        })
    }

    /// Under root, the server's account `run_as` owns the temporary directory and must be able
    /// to enter every directory above the data directory; `product` (which refuses to run as
    /// root) and `example` (a data directory outside, for the hint) are for the error.
    pub fn check_account(
        &self,
        run_as: Option<&RunAs>,
        product: &str,
        example: &str,
    ) -> Result<(), Error> {
        let Some(u) = run_as else {
            return Ok(());
        };
        if let Some(t) = &self.tempdir {
            chown(t.path(), u)?;
        }
        if let Some((dir, mode)) = untraversable_ancestor(&self.data_dir, u) {
            return Err(embedded_err(format!(
                "the server runs as `{}` (stampede runs as root and {product} refuses to), and \
                 `{}` cannot enter {} (mode {mode:04o}), above the data directory {}; use a \
                 data directory outside it (--data-dir {example}, say)",
                u.name,
                u.name,
                dir.display(),
                self.data_dir.display()
            )));
        }
        Ok(())
    }

    /// Create the data directory if missing, mode 0700 (the unix socket is in it), owned by
    /// `run_as`.
    pub fn make_private(&self, run_as: Option<&RunAs>) -> Result<(), Error> {
        make_private(&self.data_dir, run_as)
    }
}

/// Create `d` if missing, mode 0700, owned by `run_as`: a data directory as PostgreSQL
/// requires it, whether initdb or pg_basebackup (a standby, `standby`) fills it.
pub fn make_private(d: &Path, run_as: Option<&RunAs>) -> Result<(), Error> {
    if !d.exists() {
        fs::create_dir_all(d)
            .map_err(|e| embedded_err(format!("cannot create {}: {e}", d.display())))?;
    }
    fs::set_permissions(d, fs::Permissions::from_mode(0o700))
        .map_err(|e| embedded_err(format!("cannot chmod {}: {e}", d.display())))?;
    if let Some(u) = run_as {
        chown(d, u)?;
    }
    Ok(())
}

/// The server's log, opened for its stdout and its stderr: appended to, so a kept server's
/// history survives restarts; owned by `run_as`.
pub fn open_log(path: &Path, run_as: Option<&RunAs>) -> Result<(File, File), Error> {
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| embedded_err(format!("cannot open {}: {e}", path.display())))?;
    if let Some(u) = run_as {
        chown(path, u)?;
    }
    let log2 = log
        .try_clone()
        .map_err(|e| embedded_err(format!("cannot open the log twice: {e}")))?;
    Ok((log, log2))
}
