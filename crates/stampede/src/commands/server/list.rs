//! `stampede server list` and what `server stop --remove` does to the data: the servers of
//! `targeting::kept` (and the two default data directories, which an older stampede made
//! without listing them), each running or stopped, with its data directory's size on disk and
//! how to reach it; and the removal of one data directory.
//!
//! Must not touch: a directory that holds no server stampede made (`Kind::made_by_stampede`),
//! nor a running server's: `--remove` stops first, and refuses when the server still runs.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use sut::embedded::EmbeddedServer;
use sut::mysql::embedded::EmbeddedMariaDb;

use crate::console::shell_word;
use crate::targeting::kept::{self, Kind};

/// Bytes on disk under `dir` (blocks, as `du` counts them: MariaDB's redo log is preallocated),
/// each file once; what cannot be read counts nothing.
pub(super) fn disk_usage(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else if seen.insert((m.dev(), m.ino())) {
                total += m.blocks() * 512;
            }
        }
    }
    total
}

/// Remove `dir`, a data directory of `kind` that stampede made and no server runs on, and
/// unlist it; its size. A kept temporary server's directory (`<tmp>/stampede-pg-XXXX/data`)
/// takes its empty parent with it.
pub(super) fn remove(kind: Kind, dir: &Path) -> Result<u64> {
    if !dir.exists() {
        kept::remove(kind, dir)?;
        bail!("there is no data directory {}", dir.display());
    }
    if !kind.made_by_stampede(dir) {
        bail!(
            "{} holds no {} data directory that stampede made: not removed",
            dir.display(),
            kind.word()
        );
    }
    if running(kind, dir)?.is_some() {
        bail!(
            "a server still runs on {}: not removed (stop it first)",
            dir.display()
        );
    }
    let size = disk_usage(dir);
    fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    if let Some(parent) = dir.parent() {
        let name = parent.file_name().map(|n| n.to_string_lossy().into_owned());
        let temporary = name.is_some_and(|n| {
            (n.starts_with("stampede-pg-") || n.starts_with("stampede-mariadb-"))
                && dir.file_name().is_some_and(|d| d == "data")
        });
        if temporary {
            // Only when empty: remove_dir refuses otherwise.
            let _ = fs::remove_dir(parent);
        }
    }
    kept::remove(kind, dir)?;
    Ok(size)
}

/// How to connect to the server running on `dir` (what `server start` printed), or None.
fn running(kind: Kind, dir: &Path) -> Result<Option<String>> {
    Ok(match kind {
        Kind::Postgres => EmbeddedServer::attach(dir, None)?.map(|s| super::how_to_connect(&s)),
        Kind::MariaDb => EmbeddedMariaDb::attach(dir, None)?.map(|s| super::mariadb_url(&s)),
    })
}

/// `server list`: a line per server on standard output: kind, running or stopped, size, data
/// directory, and how to connect (running) or to start it again (stopped).
pub(super) fn run() -> Result<i32> {
    let mut all = kept::read();
    let home = kept::home().ok();
    for (kind, name) in [(Kind::Postgres, "server"), (Kind::MariaDb, "mariadb")] {
        if let Some(d) = home.as_ref().map(|h| h.join(name)) {
            if kind.made_by_stampede(&d) && !all.iter().any(|(k, x)| *k == kind && *x == d) {
                all.push((kind, d));
            }
        }
    }
    let mut rows = Vec::new();
    for (kind, dir) in all {
        if !dir.exists() {
            // Removed by hand: nothing to show.
            kept::remove(kind, &dir)?;
            continue;
        }
        let (state, how) = match running(kind, &dir)? {
            Some(connect) => ("running", connect),
            None => (
                "stopped",
                format!(
                    "start: stampede server start{} --data-dir {}",
                    if kind == Kind::MariaDb {
                        " --mysql"
                    } else {
                        ""
                    },
                    shell_word(&dir.display().to_string())
                ),
            ),
        };
        let size = report::bytes(disk_usage(&dir) as f64);
        rows.push([
            kind.word().to_string(),
            state.to_string(),
            size,
            dir.display().to_string(),
            how,
        ]);
    }
    if rows.is_empty() {
        crate::console::note("no servers: `stampede server start [--mysql]` starts one");
        return Ok(0);
    }
    let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
    let (w0, w1, w2, w3) = (width(0), width(1), width(2), width(3));
    for r in &rows {
        println!(
            "{:w0$}  {:w1$}  {:>w2$}  {:w3$}  {}",
            r[0], r[1], r[2], r[3], r[4]
        );
    }
    Ok(0)
}
