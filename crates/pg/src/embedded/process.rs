//! Processes and accounts: the unprivileged account the server runs as when stampede runs as
//! root, `chown`, process liveness and signals, the contents of `postmaster.pid`, and log tails
//! for error messages. All but `postmaster.pid` is server-neutral and public through
//! [`super::os`], for the embedded MariaDB of the `mysql` crate.

use std::fs;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::Error;

use super::{embedded_err, DEFAULT_PORT};

/// The account the server runs as when stampede runs as root.
#[derive(Clone, Debug)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Whether this process runs as root (the embedded server then runs as another account).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub fn lookup_user(name: &str) -> Option<RunAs> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; buf outlives the use of pwd's strings (unused).
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        return None;
    }
    Some(RunAs {
        name: name.to_string(),
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

/// The first directory above `dir` that `u` cannot enter (the execute bit of its class: owner,
/// group or other), with its mode: the server runs as `u` and must reach its data directory.
/// `dir` itself is created and chowned for `u`, so only its ancestors are checked.
pub fn untraversable_ancestor(dir: &Path, u: &RunAs) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    let mut cur = dir.parent();
    let mut blocked = None;
    while let Some(p) = cur {
        if let Ok(m) = fs::metadata(p) {
            let mode = m.mode() & 0o777;
            let bit = if m.uid() == u.uid {
                0o100
            } else if m.gid() == u.gid {
                0o010
            } else {
                0o001
            };
            if mode & bit == 0 {
                // The one nearest the root decides first; keep the topmost.
                blocked = Some((p.to_path_buf(), mode));
            }
        }
        cur = p.parent();
    }
    blocked
}

/// When root: the unprivileged account to run initdb and postgres as.
pub(super) fn run_as_account() -> Result<Option<RunAs>, Error> {
    server_account("PostgreSQL", "postgres")
}

/// When root: the unprivileged account a server that refuses root runs as: `preferred` (the
/// account its Debian package creates) if it exists, else `nobody`. None when not root.
pub fn server_account(server: &str, preferred: &str) -> Result<Option<RunAs>, Error> {
    if !is_root() {
        return Ok(None);
    }
    for name in [preferred, "nobody"] {
        if let Some(u) = lookup_user(name) {
            if u.uid != 0 {
                return Ok(Some(u));
            }
        }
    }
    Err(embedded_err(format!(
        "stampede runs as root and {server} refuses to; no `{preferred}` or `nobody` account exists \
         to run it as (create one, or run stampede as an ordinary user)"
    )))
}

pub fn chown(path: &Path, who: &RunAs) -> Result<(), Error> {
    std::os::unix::fs::chown(path, Some(who.uid), Some(who.gid)).map_err(|e| {
        embedded_err(format!(
            "cannot chown {} to {}: {e}",
            path.display(),
            who.name
        ))
    })
}

pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence/permission.
    let r = unsafe { libc::kill(pid, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A zombie (exited, not yet reaped — e.g. a kept server that was our own child) is not alive.
    exists && !is_zombie(pid)
}

/// Linux: state `Z` in /proc/<pid>/stat. Elsewhere: never (no /proc).
pub fn is_zombie(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

pub fn send_signal(pid: i32, sig: libc::c_int) {
    // SAFETY: plain kill(2).
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The last `n` lines of a file, for error messages.
pub fn tail_lines(path: &Path, n: usize) -> String {
    match fs::File::open(path) {
        Ok(f) => {
            let lines: Vec<String> = std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .collect();
            let start = lines.len().saturating_sub(n);
            lines[start..].join("\n")
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

/// The contents of `postmaster.pid` (PostgreSQL's `miscadmin.h`, LOCK_FILE_LINE_*): pid, data
/// directory, start time, port, first socket directory, listen address, shmem key, status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostmasterPid {
    pub pid: i32,
    pub port: u16,
    pub socket_dir: Option<PathBuf>,
    /// "starting", "ready", "stopping", "standby", or empty (older servers).
    pub status: String,
}

/// Read `<data_dir>/postmaster.pid`; None when absent or unreadable.
pub fn read_postmaster_pid(data_dir: &Path) -> Option<PostmasterPid> {
    let text = fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let pid = lines.first()?.trim().parse::<i32>().ok()?;
    let port = lines
        .get(3)
        .and_then(|l| l.trim().parse::<u16>().ok())
        .unwrap_or(DEFAULT_PORT);
    let socket_dir = lines
        .get(4)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map(PathBuf::from);
    let status = lines
        .get(7)
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    Some(PostmasterPid {
        pid: pid.abs(),
        port,
        socket_dir,
        status,
    })
}
