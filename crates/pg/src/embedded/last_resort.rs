//! The last resort: the embedded servers this process has running (and their `initdb` or
//! `mariadb-install-db`), so that a process about to end at once (stampede's second Ctrl-C or
//! SIGTERM, handled on its signal thread) can still stop them and remove their temporary
//! directories, which the handles' `Drop` does when the process unwinds normally.
//!
//! Each handle holds a [`Guard`] from the moment its temporary directory exists until the
//! directory is gone. The guard says which process group runs in it: every program of an
//! embedded server is started in a process group of its own (`process_group(0)`), so the group
//! holds its children too (PostgreSQL's backends, `initdb`'s `postgres --boot`, the install
//! script's `mariadbd --bootstrap`). It also says which signal stops that group at once:
//! SIGQUIT, PostgreSQL's immediate shutdown (the postmaster takes its backends down with it), or
//! SIGKILL (MariaDB, the install programs); the directory is removed right after, so nothing is
//! left to recover. [`stop_all`] sends those signals, waits until no process of the groups is
//! left, SIGKILLs what is left after a grace period (or at once when told to hurry), and
//! removes the directories, naming those it cannot remove. A kept server (`--keep-server`) is
//! neither stopped nor removed; a directory the user gave is never removed.
//!
//! Why a registry and not the handles: the handles belong to the thread that is unwinding, or
//! waiting in a step that cannot be interrupted; the registry lets another thread act on them.
//! It is touched only when a server starts or stops, never on a benchmark's path.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::process::send_signal;

struct Entry {
    id: u64,
    /// The temporary directory to remove; None for a directory the user gave.
    dir: Option<PathBuf>,
    /// The process group running in it (its leader's pid), and the signal that stops it now.
    group: Option<(i32, libc::c_int)>,
    kept: bool,
}

/// The servers of one process (the static [`LIVE`]; tests make their own, so that they never
/// stop another test's servers).
struct Registry {
    entries: Mutex<Vec<Entry>>,
    next_id: AtomicU64,
}

static LIVE: Registry = Registry::new();

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Registry")
    }
}

/// How often [`stop_all`] looks whether the groups are gone.
const POLL: Duration = Duration::from_millis(20);
/// How long SIGKILLed processes may take to be gone before [`stop_all`] gives up on them.
const KILL_WAIT: Duration = Duration::from_secs(5);

impl Registry {
    const fn new() -> Registry {
        Registry {
            entries: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Entry>> {
        // A panic while holding the lock leaves a list that is still right.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn guard(&'static self, remove: Option<&Path>, kept: bool) -> Guard {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock().push(Entry {
            id,
            dir: remove.map(Path::to_path_buf),
            group: None,
            kept,
        });
        Guard { id, registry: self }
    }
}

/// One embedded server in the registry, from its directory's creation to its removal; dropping
/// the guard takes it out.
#[derive(Debug)]
pub struct Guard {
    id: u64,
    registry: &'static Registry,
}

impl Guard {
    /// Register a server whose temporary directory is `remove` (None: a directory the user
    /// gave, never removed); `kept` servers are left alone.
    pub fn new(remove: Option<&Path>, kept: bool) -> Guard {
        LIVE.guard(remove, kept)
    }

    /// A process group now runs in the directory: `pid` leads it, `stop_now` stops it at once.
    pub fn running(&self, pid: i32, stop_now: libc::c_int) {
        self.with(|e| e.group = Some((pid, stop_now)));
    }

    /// The group has exited (and been reaped: its pid may be reused).
    pub fn stopped(&self) {
        self.with(|e| e.group = None);
    }

    pub fn set_kept(&self, kept: bool) {
        self.with(|e| e.kept = kept);
    }

    fn with(&self, f: impl FnOnce(&mut Entry)) {
        if let Some(e) = self.registry.lock().iter_mut().find(|e| e.id == self.id) {
            f(e);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.registry.lock().retain(|e| e.id != self.id);
    }
}

/// Stop every registered server that is not kept, now, and remove its temporary directory:
/// each group's `stop_now` signal, then SIGKILL to whatever is left after `grace`, or as soon as
/// `hurry` (called to wait up to the given time; true when asked to hurry, e.g. by one more
/// signal) says so. Returns what could not be done, one sentence each, naming the directory or
/// the process group; empty when everything is gone.
///
/// The registry stays locked until the end, so no server starts or leaves it meanwhile: call
/// this only on the way out of the process.
pub fn stop_all(grace: Duration, hurry: &mut dyn FnMut(Duration) -> bool) -> Vec<String> {
    LIVE.stop_all(grace, hurry)
}

impl Registry {
    fn stop_all(&self, grace: Duration, hurry: &mut dyn FnMut(Duration) -> bool) -> Vec<String> {
        let entries = self.lock();
        let mine: Vec<&Entry> = entries.iter().filter(|e| !e.kept).collect();
        let groups: Vec<i32> = mine.iter().filter_map(|e| e.group.map(|g| g.0)).collect();
        for e in &mine {
            if let Some((pid, sig)) = e.group {
                send_signal(-pid, sig);
            }
        }
        let mut problems = Vec::new();
        let mut kill_at = Instant::now() + grace;
        let mut killed: Option<Instant> = None;
        loop {
            let alive: Vec<i32> = groups.iter().copied().filter(|&g| group_alive(g)).collect();
            if alive.is_empty() {
                break;
            }
            match killed {
                Some(at) if at.elapsed() > KILL_WAIT => {
                    for g in alive {
                        problems.push(format!("process group {g} is still running after SIGKILL"));
                    }
                    break;
                }
                Some(_) => {}
                None if Instant::now() >= kill_at => {
                    for &g in &alive {
                        send_signal(-g, libc::SIGKILL);
                    }
                    killed = Some(Instant::now());
                    continue;
                }
                None => {}
            }
            if hurry(POLL) {
                kill_at = Instant::now();
            }
        }
        for e in mine {
            if let Some(dir) = &e.dir {
                if let Err(err) = remove_tree(dir) {
                    problems.push(format!(
                        "cannot remove the embedded server's directory {}: {err}; remove it \
                         by hand",
                        dir.display()
                    ));
                }
            }
        }
        problems
    }
}

/// `Command::output` (stdin empty, stdout and stderr captured) for an install program
/// (`initdb`, `mariadb-install-db`) started in a process group of its own: while it runs,
/// [`stop_all`] SIGKILLs its group.
pub fn output(cmd: &mut std::process::Command, guard: &Guard) -> std::io::Result<Output> {
    let child = (cmd.stdin(Stdio::null()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    guard.running(child.id() as i32, libc::SIGKILL);
    let out = child.wait_with_output();
    guard.stopped();
    out
}

/// Remove `dir` and everything in it; a directory already gone is removed. Tried twice: another
/// thread may be removing it at the same time (the handle's `Drop` on the unwinding thread), and
/// an entry it took away under our feet fails the first attempt.
pub fn remove_tree(dir: &Path) -> std::io::Result<()> {
    let once = || match fs::remove_dir_all(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        r => r,
    };
    once().or_else(|_| once())
}

/// Remove an embedded server's temporary directory, if it has one (`take`n from its handle, so
/// it is removed once); the error names it, with what to do.
pub fn remove_tempdir(tempdir: Option<tempfile::TempDir>) -> Result<(), String> {
    let Some(t) = tempdir else {
        return Ok(());
    };
    let dir = t.keep();
    remove_tree(&dir).map_err(|e| {
        format!(
            "cannot remove the embedded server's directory {}: {e}; remove it by hand",
            dir.display()
        )
    })
}

/// Whether any process of process group `pgid` is alive (not a zombie: the group's leader is our
/// child, and stays a zombie until its handle reaps it). Linux: /proc; elsewhere kill(2).
fn group_alive(pgid: i32) -> bool {
    match group_members(pgid) {
        Some(n) => n > 0,
        // SAFETY: kill with signal 0 only checks for existence.
        None => (unsafe { libc::kill(-pgid, 0) }) == 0,
    }
}

/// How many live (not zombie) processes are in process group `pgid`; `None` without /proc.
fn group_members(pgid: i32) -> Option<usize> {
    let procs = fs::read_dir("/proc").ok()?;
    let live = procs.flatten().filter(|p| {
        let name = p.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        // "pid (comm) state ppid pgrp ...": the fields after the last ')'.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        pgrp == Some(pgid) && !matches!(state, "Z" | "X")
    });
    Some(live.count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn registry() -> &'static Registry {
        Box::leak(Box::new(Registry::new()))
    }

    /// A group of two processes (a shell and its `sleep`) in a directory registered as a
    /// temporary one: `stop_all` takes both down and removes the directory; a kept one is left.
    #[test]
    fn stop_all_ends_the_group_and_removes_the_directory_but_leaves_a_kept_one() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("server");
        fs::create_dir_all(dir.join("data")).unwrap();
        fs::write(dir.join("data/file"), "x").unwrap();
        let kept_dir = top.path().join("kept");
        fs::create_dir(&kept_dir).unwrap();

        // The shell ignores SIGQUIT, as a process that is slow to stop would: SIGKILL after
        // the grace ends it, and `hurry` asking for it at once makes the grace moot.
        let mut child = Command::new("sh")
            .args(["-c", "trap '' QUIT; sleep 600 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Signal only once the shell has set its trap and started its sleep: a SIGQUIT before
        // the trap would end the shell at once, with nothing left for the SIGKILL to do.
        let since = Instant::now();
        while group_members(pid) < Some(2) {
            assert!(
                since.elapsed() < Duration::from_secs(10),
                "sleep never started"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let reg = registry();
        let guard = reg.guard(Some(&dir), false);
        guard.running(pid, libc::SIGQUIT);
        let kept = reg.guard(Some(&kept_dir), true);

        let mut asked = 0;
        let problems = reg.stop_all(Duration::from_secs(600), &mut |wait| {
            asked += 1;
            std::thread::sleep(wait);
            true
        });
        assert!(problems.is_empty(), "{problems:?}");
        assert!(asked >= 1);
        assert!(!group_alive(pid));
        assert!(!child.wait().unwrap().success());
        assert!(!dir.exists(), "{} not removed", dir.display());
        assert!(kept_dir.exists(), "a kept server's directory was removed");
        drop((guard, kept));
    }

    /// A directory that cannot be removed (an immutable file in it: root cannot unlink it
    /// either) is named.
    #[test]
    fn a_directory_that_cannot_be_removed_is_named() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("server");
        fs::create_dir(&dir).unwrap();
        let stuck = dir.join("stuck");
        fs::write(&stuck, "x").unwrap();
        let immutable = Command::new("chattr").arg("+i").arg(&stuck).status();
        if !immutable.is_ok_and(|s| s.success()) {
            // Only root may make a file immutable (CI runs as root: there it must work).
            assert!(!super::super::is_root(), "chattr +i failed as root");
            return;
        }
        let reg = registry();
        let guard = reg.guard(Some(&dir), false);
        let problems = reg.stop_all(Duration::from_secs(1), &mut |w| {
            std::thread::sleep(w);
            false
        });
        let _ = Command::new("chattr").arg("-i").arg(&stuck).status();
        drop(guard);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains(&format!(
                "cannot remove the embedded server's directory {}",
                dir.display()
            )),
            "{problems:?}"
        );
    }
}
