//! Finding the PostgreSQL server binaries (`--pg-bindir`, `pg_config --bindir`, the newest
//! `/usr/lib/postgresql/*/bin`, then `PATH`) and reading their version.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Error;

use super::{embedded_err, Binaries, EmbeddedServer};

/// The install hint every "no binaries" error carries.
const INSTALL_HINT: &str =
    "install the PostgreSQL server (Debian/Ubuntu: `sudo apt-get install postgresql-15`; \
     Fedora/RHEL: `sudo dnf install postgresql-server`; macOS: `brew install postgresql@15`), \
     or pass --pg-bindir <dir containing postgres and initdb>, or give a target with -h/-d";

pub(super) fn has_server_binaries(dir: &Path) -> bool {
    dir.join("postgres").is_file() && dir.join("initdb").is_file()
}

/// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)" -> "15.18".
pub(super) fn parse_version(out: &str) -> Option<String> {
    let after = out.split(')').nth(1).unwrap_or(out);
    after.split_whitespace().next().map(|s| s.to_string())
}

/// Numeric order of version directory names ("9.6" < "10" < "15").
pub(super) fn version_key(name: &str) -> Vec<u64> {
    name.split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0))
        .collect()
}

impl EmbeddedServer {
    pub fn find_binaries(explicit: Option<&std::path::Path>) -> Result<Binaries, Error> {
        let (bindir, found_by) = match explicit {
            Some(dir) => {
                if !has_server_binaries(dir) {
                    return Err(embedded_err(format!(
                        "--pg-bindir {}: no `postgres` and `initdb` there; {INSTALL_HINT}",
                        dir.display()
                    )));
                }
                (dir.to_path_buf(), "--pg-bindir".to_string())
            }
            None => Self::search_binaries().ok_or_else(|| {
                embedded_err(format!(
                    "no PostgreSQL server binaries found (looked at `pg_config --bindir`, /usr/lib/postgresql/*/bin, PATH); {INSTALL_HINT}"
                ))
            })?,
        };
        let out = Command::new(bindir.join("postgres"))
            .arg("--version")
            .output()
            .map_err(|e| {
                embedded_err(format!(
                    "cannot run {}/postgres --version: {e}; {INSTALL_HINT}",
                    bindir.display()
                ))
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = parse_version(&text)
            .filter(|_| out.status.success())
            .ok_or_else(|| {
                embedded_err(format!(
                    "{}/postgres --version printed {text:?}",
                    bindir.display()
                ))
            })?;
        Ok(Binaries {
            bindir,
            version,
            found_by,
        })
    }

    fn search_binaries() -> Option<(PathBuf, String)> {
        // 1. pg_config --bindir (the binaries of the development installation).
        if let Ok(out) = Command::new("pg_config")
            .arg("--bindir")
            .stderr(Stdio::null())
            .output()
        {
            if out.status.success() {
                let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
                if has_server_binaries(&dir) {
                    return Some((dir, "pg_config --bindir".into()));
                }
            }
        }
        // 2. The newest /usr/lib/postgresql/<N>/bin (Debian/Ubuntu layout), numeric order.
        if let Ok(rd) = fs::read_dir("/usr/lib/postgresql") {
            let mut versions: Vec<String> = rd
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect();
            versions.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
            for v in versions {
                let dir = PathBuf::from(format!("/usr/lib/postgresql/{v}/bin"));
                if has_server_binaries(&dir) {
                    return Some((dir, format!("/usr/lib/postgresql/{v}/bin")));
                }
            }
        }
        // 3. PATH: the directory of `postgres` (symlinks resolved, so a /usr/local/bin link to the
        //    real bindir finds its siblings), if `initdb` is beside it.
        let path = std::env::var_os("PATH")?;
        for dir in std::env::split_paths(&path) {
            let exe = dir.join("postgres");
            if !exe.is_file() {
                continue;
            }
            if let Some(real) = fs::canonicalize(&exe)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
            {
                if has_server_binaries(&real) {
                    return Some((real, "PATH".into()));
                }
            }
            if has_server_binaries(&dir) {
                return Some((dir, "PATH".into()));
            }
        }
        None
    }
}
