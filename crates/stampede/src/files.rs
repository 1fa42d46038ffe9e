//! The files a command writes: every output path checked before any work, and each file written
//! whole or not at all.
//!
//! [`check`] runs while the command line becomes a plan, before the first connection and before
//! an embedded server starts. For each output: the path is not a directory; its directory
//! exists and takes a new file (a probe file is created there and removed: this finds
//! permission bits, a read-only mount and an exhausted inode table alike, also as root, where
//! `access(2)` says yes to everything but a read-only mount); its file system has a block free;
//! an existing file there is writable; two outputs are not the same file (after symbolic links,
//! or as hard links); and no output is one of the command's inputs (`report X.json -o
//! X.json`). `-` is standard output where the command allows it, and refused where standard
//! output already carries something else (a run's summary). A refusal is a usage error: exit 64
//! (the drop-ins' usage code, 1), nothing done.
//!
//! [`Output::write`] writes a regular file under a temporary name in the same directory, syncs
//! it and renames it over the target: a full disk or a crash leaves the previous file or none,
//! never a truncated one. A symbolic link is followed (its target is replaced, the link stays).
//! A file that is not a regular file (`/dev/null`, a FIFO, `/dev/stdout`) is written in place:
//! renaming over it would replace the device node. Each output fails on its own
//! ([`WriteError`], naming the flag, the file and the cause), so callers report every failure
//! and still write the others.
//!
//! [`RunOutputs`] is a run result's pair (`--json`, `--html`): checked once with the plan, written
//! as many times as the run saves its result.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;
use report::RunResult;

use crate::console::{self, Failure};

/// What `-` means for an output.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dash {
    /// Standard output.
    Stdout,
    /// Refused, for this reason (what standard output carries already).
    Refused(&'static str),
}

/// One output a command line names, before [`check`].
pub(crate) struct Request<'a> {
    pub flag: &'static str,
    pub path: &'a Path,
    pub dash: Dash,
}

/// Where a checked output goes.
#[derive(Clone, Debug)]
enum Dest {
    Stdout,
    /// A regular file, existing or not, symbolic links resolved: written beside it and renamed.
    File(PathBuf),
    /// An existing file that is not a regular one (a device, a FIFO): written in place.
    Special(PathBuf),
}

/// An output that passed [`check`].
#[derive(Clone, Debug)]
pub(crate) struct Output {
    flag: &'static str,
    /// The path as given, for messages and links.
    given: PathBuf,
    dest: Dest,
}

/// An output that could not be written after the work was done.
#[derive(Debug)]
pub(crate) struct WriteError {
    pub flag: &'static str,
    pub path: PathBuf,
    pub cause: io::Error,
    /// What is at the path now: the previous file, unchanged, or nothing (regular files only).
    left: Option<bool>,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: not written: {}",
            self.flag,
            self.path.display(),
            self.cause
        )?;
        match self.left {
            Some(true) => f.write_str("; the file there is the previous one, unchanged"),
            Some(false) => f.write_str("; no file was left there"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for WriteError {}

fn refuse(flag: &str, path: &Path, why: impl std::fmt::Display, todo: &str) -> anyhow::Error {
    Failure::usage(format!("{flag} {}: {why}", path.display()), todo)
}

/// Check every output before any work (module notes): the outputs in the order given, or the
/// first refusal. `inputs` are the files the command reads, which no output may overwrite.
pub(crate) fn check(requests: &[Request<'_>], inputs: &[&Path]) -> Result<Vec<Output>> {
    let inputs: Vec<(&Path, Identity)> = inputs
        .iter()
        .filter_map(|p| identity(p).map(|id| (*p, id)))
        .collect();
    let mut checked: Vec<(Output, Option<Identity>)> = Vec::new();
    for r in requests {
        let out = check_one(r)?;
        let id = match &out.dest {
            Dest::File(p) => identity(p),
            _ => None,
        };
        for (prev, prev_id) in &checked {
            let both_stdout = matches!((&prev.dest, &out.dest), (Dest::Stdout, Dest::Stdout));
            let same_file = matches!((prev_id, &id), (Some(a), Some(b)) if a.same(b));
            if both_stdout || same_file {
                return Err(Failure::usage(
                    format!(
                        "{} {} and {} {} are the same file: one would overwrite the other",
                        prev.flag,
                        prev.given.display(),
                        r.flag,
                        r.path.display()
                    ),
                    "give each output a file of its own",
                ));
            }
        }
        if let Some(id) = &id {
            if let Some((input, _)) = inputs.iter().find(|(_, i)| i.same(id)) {
                return Err(refuse(
                    r.flag,
                    r.path,
                    format_args!(
                        "is the input {}: writing it would destroy what is read",
                        input.display()
                    ),
                    "give the output another name",
                ));
            }
        }
        checked.push((out, id));
    }
    Ok(checked.into_iter().map(|(o, _)| o).collect())
}

/// Check the directory files named `PREFIX...` go to (`-l`'s logs): it exists and takes a
/// new file.
pub(crate) fn check_prefix(flag: &'static str, prefix: &str) -> Result<()> {
    let path = Path::new(prefix);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    check_dir(flag, path, dir)
}

fn check_one(r: &Request<'_>) -> Result<Output> {
    let (flag, path) = (r.flag, r.path);
    let output = |dest| Output {
        flag,
        given: path.to_path_buf(),
        dest,
    };
    if path.as_os_str() == "-" {
        return match r.dash {
            Dash::Stdout => Ok(output(Dest::Stdout)),
            Dash::Refused(why) => Err(Failure::usage(
                format!("{flag} -: {why}"),
                format!("give {flag} a file name"),
            )),
        };
    }
    if path.as_os_str().is_empty() {
        return Err(Failure::usage(
            format!("{flag}: the file name is empty"),
            "",
        ));
    }
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(refuse(
            flag,
            path,
            "is a directory",
            &format!("name a file, e.g. {}", path.join("run.json").display()),
        )),
        Ok(m) if !m.is_file() => Ok(output(Dest::Special(path.to_path_buf()))),
        Ok(_) => {
            let real = fs::canonicalize(path).map_err(|e| refuse(flag, path, e, ""))?;
            if let Err(e) = writable(&real) {
                return Err(refuse(
                    flag,
                    path,
                    format_args!("the file cannot be written: {e}"),
                    "give another path, or make the file writable",
                ));
            }
            check_dir(flag, path, real.parent().unwrap_or(Path::new("/")))?;
            Ok(output(Dest::File(real)))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(refuse(
                    flag,
                    path,
                    "is a symbolic link to a file in a directory that does not exist",
                    "give another path",
                ));
            }
            let Some(name) = path.file_name() else {
                return Err(refuse(flag, path, "does not name a file", ""));
            };
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            check_dir(flag, path, dir)?;
            let real_dir = fs::canonicalize(dir).map_err(|e| refuse(flag, path, e, ""))?;
            Ok(output(Dest::File(real_dir.join(name))))
        }
        // A component that is a file (ENOTDIR), a directory we may not search (EACCES), ...
        Err(e) => Err(refuse(flag, path, e, "give another path")),
    }
}

/// `dir` exists, is a directory, takes a new file and has a block free (module notes).
fn check_dir(flag: &'static str, path: &Path, dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(refuse(
                flag,
                path,
                format_args!("{} is not a directory", dir.display()),
                "give another path",
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(refuse(
                flag,
                path,
                format_args!("the directory {} does not exist", dir.display()),
                &format!(
                    "create it first (mkdir -p {}), or give another path",
                    dir.display()
                ),
            ))
        }
        Err(e) => {
            return Err(refuse(
                flag,
                path,
                format_args!("cannot use the directory {}: {e}", dir.display()),
                "give another path",
            ))
        }
    }
    let probe = dir.join(temp_name());
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(f) => {
            drop(f);
            let _ = fs::remove_file(&probe);
        }
        Err(e) => {
            return Err(refuse(
                flag,
                path,
                format_args!("cannot create a file in {}: {e}", dir.display()),
                "give a path in a directory this user may write to",
            ))
        }
    }
    if free_blocks(dir) == Some(0) {
        return Err(refuse(
            flag,
            path,
            format_args!("no space left on the file system of {}", dir.display()),
            "free some space there, or give a path on another file system",
        ));
    }
    Ok(())
}

/// Blocks this process may still write on `dir`'s file system (root may use the reserve);
/// `None` when unknown.
fn free_blocks(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills a caller-owned struct from a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    // SAFETY: plain syscall.
    let root = unsafe { libc::geteuid() } == 0;
    // A file system that reports no blocks at all (some virtual ones) says nothing.
    if s.f_blocks == 0 {
        return None;
    }
    Some(if root { s.f_bfree } else { s.f_bavail } as u64)
}

/// `access(path, W_OK)`: an existing file this user may not write (its mode, a read-only mount)
/// is refused rather than replaced behind its owner's back.
fn writable(path: &Path) -> io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: plain syscall on a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A file's identity: its resolved path and, when it exists, its device and inode (hard links).
#[derive(Debug)]
struct Identity {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    fn same(&self, other: &Identity) -> bool {
        self.path == other.path || (self.inode.is_some() && self.inode == other.inode)
    }
}

fn identity(p: &Path) -> Option<Identity> {
    let path = match fs::canonicalize(p) {
        Ok(c) => c,
        Err(_) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            fs::canonicalize(dir).ok()?.join(p.file_name()?)
        }
    };
    let inode = fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
    Some(Identity { path, inode })
}

/// A name no other process or output uses: short, so that a long target name cannot make it
/// too long for the directory.
fn temp_name() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        ".stampede-{}-{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

impl Output {
    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.given
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self.dest, Dest::Stdout)
    }

    /// Write what `fill` writes: for a regular file under a temporary name, synced and
    /// renamed over the target (module notes).
    pub fn write(
        &self,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), WriteError> {
        let (r, left) = match &self.dest {
            Dest::Stdout => {
                let mut out = io::stdout().lock();
                (fill(&mut out).and_then(|()| out.flush()), None)
            }
            Dest::Special(p) => {
                let r = OpenOptions::new().write(true).open(p).and_then(|f| {
                    let mut w = BufWriter::new(f);
                    fill(&mut w)?;
                    w.flush()
                });
                (r, None)
            }
            Dest::File(p) => {
                let r = replace(p, fill);
                (r, Some(p.exists()))
            }
        };
        r.map_err(|cause| WriteError {
            flag: self.flag,
            path: self.given.clone(),
            cause,
            left,
        })
    }

    /// [`Output::write`] of a text.
    pub fn write_str(&self, text: &str) -> Result<(), WriteError> {
        self.write(|w| w.write_all(text.as_bytes()))
    }
}

/// Write `target` whole or not at all: a temporary file beside it, synced, then renamed over it.
fn replace(target: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("/"));
    let tmp = dir.join(temp_name());
    let f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let r = (|| {
        // The file replaced keeps its mode (a report made private stays private).
        if let Ok(m) = fs::metadata(target) {
            f.set_permissions(m.permissions())?;
        }
        let mut w = BufWriter::new(&f);
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        f.sync_all()?;
        fs::rename(&tmp, target)
    })();
    match r {
        Ok(()) => {
            // The rename itself reaches the disk with the directory.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
            Ok(())
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A run result's files (`--json`, `--html`), checked with the plan; written each time the run
/// saves its result.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunOutputs {
    json: Option<Output>,
    html: Option<Output>,
}

/// Why a run's output cannot be `-`.
const SUMMARY_ON_STDOUT: &str = "standard output carries the summary";

impl RunOutputs {
    /// Check `--json` and `--html` (module notes); `inputs` are files the command reads.
    pub fn check(json: Option<&Path>, html: Option<&Path>, inputs: &[&Path]) -> Result<RunOutputs> {
        let mut requests = Vec::new();
        for (flag, path) in [("--json", json), ("--html", html)] {
            if let Some(path) = path {
                requests.push(Request {
                    flag,
                    path,
                    dash: Dash::Refused(SUMMARY_ON_STDOUT),
                });
            }
        }
        let mut checked = check(&requests, inputs)?.into_iter();
        Ok(RunOutputs {
            json: json.and_then(|_| checked.next()),
            html: html.and_then(|_| checked.next()),
        })
    }

    /// `--json`'s path as given (the HTML report names it as its source).
    pub fn json_path(&self) -> Option<&Path> {
        self.json.as_ref().map(Output::path)
    }

    /// Write the result to every file; one's failure does not keep the others from being
    /// written. Says nothing: [`RunOutputs::save`] reports.
    pub fn write(&self, r: &RunResult) -> Vec<WriteError> {
        let mut failed = Vec::new();
        if let Some(o) = &self.json {
            if let Err(e) = o.write(|w| report::write_json(r, w)) {
                failed.push(e);
            }
        }
        if let Some(o) = &self.html {
            if let Err(e) = o.write_str(&report::html::render(r, self.json_path())) {
                failed.push(e);
            }
        }
        failed
    }

    /// [`RunOutputs::write`], then a note for each file written (`{noun} saved to PATH`) and an
    /// error for each that was not; true when all were written.
    pub fn save(&self, r: &RunResult, noun: &str) -> bool {
        let failed = self.write(r);
        for (o, what) in [(&self.json, noun), (&self.html, "report")] {
            let Some(o) = o else { continue };
            match failed.iter().find(|e| e.flag == o.flag) {
                Some(e) => console::error(&e.to_string()),
                None => console::note(&format!("{what} saved to {}", o.path().display())),
            }
        }
        failed.is_empty()
    }
}

#[cfg(test)]
mod tests;
