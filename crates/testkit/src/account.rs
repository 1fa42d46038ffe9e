//! Running server processes as an unprivileged account when the tests run as root (PostgreSQL
//! refuses to run as root): the `postgres` account if it exists, else `nobody` — the account
//! `pg::embedded` picks. Also the small process and directory helpers a hand-built server
//! needs. `pg::embedded` keeps its own copy private; these are the test-side ones.

use std::ffi::CStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// The (uid, gid) server processes run as: None when not root. Panics as root with neither a
/// `postgres` nor a `nobody` account.
pub fn run_as() -> Option<(u32, u32)> {
    unprivileged(&[c"postgres", c"nobody"])
}

/// The (uid, gid) of the first of `accounts` that exists and is not root's: None when not
/// root. Panics as root when there is none.
pub(crate) fn unprivileged(accounts: &[&CStr]) -> Option<(u32, u32)> {
    // SAFETY: plain libc calls; the returned struct is read immediately.
    unsafe {
        if libc::geteuid() != 0 {
            return None;
        }
        for name in accounts {
            let p = libc::getpwnam(name.as_ptr());
            if !p.is_null() && (*p).pw_uid != 0 {
                return Some(((*p).pw_uid, (*p).pw_gid));
            }
        }
    }
    panic!("running as root with none of the accounts {accounts:?}");
}

/// Make `cmd` run as the server account (a no-op when not root).
pub fn as_server_user(cmd: &mut Command) -> &mut Command {
    if let Some((uid, gid)) = run_as() {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

/// Hand `path` to the server account (a no-op when not root).
pub fn give(path: &Path) {
    if let Some((uid, gid)) = run_as() {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

/// A temporary directory for a server: mode 0700, owned by the server account. Removed on drop.
pub fn server_dir(prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
    give(dir.path());
    dir
}

/// Run `cmd`; panic with the command and its output unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A finished command's standard output and error, one text; panics with it, naming the
/// command `what`, unless it exited 0 (a tool that prints a failed check and exits 0 needs
/// its text read too).
pub fn ok_text(out: &Output, what: &str) -> String {
    let text = both(out);
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// A finished command's standard output and error, one text.
pub(crate) fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
