//! The servers stampede left on this machine: a list of their data directories, so that
//! `stampede server list` can show them (running or stopped, with their size) and `server stop
//! --remove` can take their data away. A data directory is listed when `server start` makes or
//! starts a server in it and when a run keeps its embedded server (`--keep-server`); `server
//! stop --remove` unlists it. Issue 35: `server stop` left 2.8 GB behind and nothing named it.
//!
//! The list is one file, `servers` beside the default data directories
//! (`$XDG_DATA_HOME/stampede/servers`, `~/.local/share/stampede/servers`, as root
//! `/var/lib/stampede/servers`), a line per server: its kind (`postgresql` or `mariadb`), a tab,
//! its data directory's absolute path. It is rewritten whole through a temporary file and a
//! rename, so a reader never sees half of it; two stampede processes that add at the same
//! instant may lose one line, which the next `server start` of that directory adds again.
//!
//! Must not touch: any server or directory (the commands do that); it keeps names only. A home
//! that cannot be written loses nothing but the listing: a failure to record is a warning.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Which server a data directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    MariaDb,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Postgres => "postgresql",
            Kind::MariaDb => "mariadb",
        }
    }

    fn parse(w: &str) -> Option<Kind> {
        match w {
            "postgresql" => Some(Kind::Postgres),
            "mariadb" => Some(Kind::MariaDb),
            _ => None,
        }
    }

    /// Whether `dir` holds a data directory of this kind that stampede made: PostgreSQL's
    /// `PG_VERSION` beside stampede's `stampede.conf`, MariaDB's `mysql` system database beside
    /// stampede's `stampede.cnf`. Nothing else is ever removed.
    pub fn made_by_stampede(self, dir: &Path) -> bool {
        match self {
            Kind::Postgres => {
                dir.join("PG_VERSION").is_file() && dir.join("stampede.conf").is_file()
            }
            Kind::MariaDb => dir.join("mysql").is_dir() && dir.join("stampede.cnf").is_file(),
        }
    }
}

/// `$XDG_DATA_HOME/stampede`, else `~/.local/share/stampede`, or as root `/var/lib/stampede`:
/// where the default data directories and the list are. Root's server runs as another account
/// (PostgreSQL and MariaDB refuse root), which cannot enter root's home; an `XDG_DATA_HOME` that
/// root sets is root's choice (the start names a directory the server cannot enter).
pub fn home() -> Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("stampede"));
    }
    if sut::embedded::is_root() {
        return Ok(PathBuf::from("/var/lib/stampede"));
    }
    let home = std::env::var_os("HOME").context("HOME is not set: pass --data-dir")?;
    Ok(PathBuf::from(home).join(".local/share/stampede"))
}

fn list_file() -> Result<PathBuf> {
    Ok(home()?.join("servers"))
}

/// The servers listed, in the order they were added (a line that cannot be read is skipped).
pub fn read() -> Vec<(Kind, PathBuf)> {
    let Ok(path) = list_file() else {
        return Vec::new();
    };
    parse(&fs::read_to_string(path).unwrap_or_default())
}

fn parse(text: &str) -> Vec<(Kind, PathBuf)> {
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .filter_map(|(k, d)| Some((Kind::parse(k)?, PathBuf::from(d))))
        .filter(|(_, d)| d.is_absolute())
        .collect()
}

fn write(all: &[(Kind, PathBuf)]) -> Result<()> {
    let path = list_file()?;
    let dir = path.parent().expect("the list is in a directory");
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let text: String = (all.iter())
        .map(|(k, d)| format!("{}\t{}\n", k.word(), d.display()))
        .collect();
    let tmp = dir.join(format!(".servers.{}", std::process::id()));
    fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))
}

/// List `dir` (made absolute) as a server of `kind`, once. A failure is a warning: the server
/// is there all the same.
pub fn add(kind: Kind, dir: &Path) {
    let dir = absolute(dir);
    let mut all = read();
    if all.iter().any(|(k, d)| *k == kind && *d == dir) {
        return;
    }
    all.push((kind, dir));
    if let Err(e) = write(&all) {
        crate::console::warning(&format!(
            "{e:#}: `stampede server list` will not show this server"
        ));
    }
}

/// Unlist `dir` (after its data was removed).
pub fn remove(kind: Kind, dir: &Path) -> Result<()> {
    let dir = absolute(dir);
    let mut all = read();
    let before = all.len();
    all.retain(|(k, d)| !(*k == kind && *d == dir));
    if all.len() == before {
        return Ok(());
    }
    write(&all)
}

/// `dir` made absolute against the working directory (as the embedded servers make it).
pub fn absolute(dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        return dir.to_path_buf();
    }
    std::env::current_dir()
        .map(|c| c.join(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reads_its_own_lines_and_skips_others() {
        let text =
            "postgresql\t/a/b\nmariadb\t/c d/e\nnonsense\t/x\npostgresql\trelative\nno tab\n";
        assert_eq!(
            parse(text),
            vec![
                (Kind::Postgres, PathBuf::from("/a/b")),
                (Kind::MariaDb, PathBuf::from("/c d/e")),
            ]
        );
    }
}
