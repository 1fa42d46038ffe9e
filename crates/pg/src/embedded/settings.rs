//! stampede's default server settings for this machine (reasoned in the module header of
//! `embedded`), whether `pg_stat_statements` is installed, and merging user overrides into the
//! defaults with the quoting PostgreSQL's configuration files need.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Physical RAM in bytes (4 GiB when sysconf cannot tell).
pub fn total_ram() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        pages as u64 * page as u64
    } else {
        4 << 30
    }
}

pub(super) fn mb(bytes: u64) -> String {
    format!("{}MB", bytes >> 20)
}

/// stampede's default server settings for this machine, before user overrides.
pub fn default_settings(bindir: &Path) -> Vec<(String, String)> {
    let ram = total_ram();
    let shared_buffers = (ram / 4).clamp(128 << 20, 4 << 30);
    let maintenance = if ram >= 8 << 30 { 1 << 30 } else { 512 << 20 };
    let mut s: Vec<(String, String)> = vec![
        ("max_connections", "1100".to_string()),
        ("shared_buffers", mb(shared_buffers)),
        ("effective_cache_size", mb(ram / 2)),
        ("maintenance_work_mem", mb(maintenance)),
        ("fsync", "on".into()),
        ("synchronous_commit", "on".into()),
        ("full_page_writes", "on".into()),
        ("wal_level", "replica".into()),
        ("max_wal_size", "4GB".into()),
        ("min_wal_size", "1GB".into()),
        ("checkpoint_timeout", "15min".into()),
        ("checkpoint_completion_target", "0.9".into()),
        ("track_io_timing", "on".into()),
        ("log_checkpoints", "on".into()),
        ("log_line_prefix", "'%m [%p] '".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    if pg_stat_statements_available(bindir) {
        s.push((
            "shared_preload_libraries".into(),
            "pg_stat_statements".into(),
        ));
    }
    s
}

/// Whether `pg_stat_statements` is installed next to these binaries: its control file in
/// `$(pg_config --sharedir)/extension`, or in the Debian layout `<bindir>/../../../../share/postgresql/<N>`
/// (= `/usr/share/postgresql/<N>`), or `<bindir>/../share[/postgresql]`.
pub(super) fn pg_stat_statements_available(bindir: &Path) -> bool {
    let mut candidates: Vec<PathBuf> = Vec::new();
    let pg_config = bindir.join("pg_config");
    if pg_config.is_file() {
        if let Ok(out) = Command::new(&pg_config).arg("--sharedir").output() {
            if out.status.success() {
                let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
                candidates.push(PathBuf::from(dir));
            }
        }
    }
    // /usr/lib/postgresql/15/bin -> /usr/share/postgresql/15
    if let (Some(ver_dir), Some(usr)) = (bindir.parent(), bindir.ancestors().nth(3)) {
        if let Some(ver) = ver_dir.file_name() {
            candidates.push(usr.join("share/postgresql").join(ver));
        }
    }
    if let Some(prefix) = bindir.parent() {
        candidates.push(prefix.join("share/postgresql"));
        candidates.push(prefix.join("share"));
    }
    candidates
        .iter()
        .any(|d| d.join("extension/pg_stat_statements.control").is_file())
}

/// Merge overrides into defaults: a name given again replaces the default in place; new names
/// are appended. Names compare case-insensitively, as PostgreSQL's GUCs.
pub(super) fn merge_settings(
    defaults: Vec<(String, String)>,
    overrides: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = defaults;
    for (k, v) in overrides {
        let k = k.trim();
        match out.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(k)) {
            Some(slot) => slot.1 = v.clone(),
            None => out.push((k.to_string(), v.clone())),
        }
    }
    out
}

/// A value as written in a configuration file: already-quoted values, identifiers and numbers
/// (with an optional unit, `64MB`, `0.9`) as they are; anything else single-quoted. The tokens
/// follow PostgreSQL's `guc-file.l`: `127.0.0.1` is neither a number nor an identifier there, so it
/// must be quoted.
pub(super) fn conf_value(v: &str) -> String {
    let ident = v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let digits = v.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let number = !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1;
    let plain = ident || number;
    if plain || (v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'')) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "''"))
    }
}

pub(super) fn unquote(v: &str) -> String {
    let v = v.trim();
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        v[1..v.len() - 1].replace("''", "'")
    } else {
        v.to_string()
    }
}
