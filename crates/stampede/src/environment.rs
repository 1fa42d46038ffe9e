//! The environment a result was measured in: the server's version and the settings that decide
//! its performance, and the client machine. Captured once per run, stored in the JSON result, so
//! two results can be compared knowing what differed.

use std::collections::BTreeMap;

use anyhow::Result;
use target::Session;

/// Server settings recorded with every result (issue: foundation, item 8).
pub const SERVER_SETTINGS: &[&str] = &[
    "shared_buffers",
    "max_connections",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_level",
    "checkpoint_timeout",
    "max_wal_size",
    "default_transaction_isolation",
    "work_mem",
    "effective_io_concurrency",
    "huge_pages",
];

pub struct ServerInfo {
    pub version: String,
    pub version_num: u32,
    pub settings: BTreeMap<String, String>,
}

pub async fn server_info(s: &mut Session) -> Result<ServerInfo> {
    // `server_version` ("15.18 (Debian 15.18-0+deb12u1)"), as the result model documents it.
    let version = s
        .simple_query("SHOW server_version")
        .await?
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_default();
    let list = SERVER_SETTINGS
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    // current_setting() gives the human form with units ("128MB"), as people write them.
    let rows = s
        .simple_query(&format!(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({list}) ORDER BY name"
        ))
        .await?;
    let settings = rows
        .into_iter()
        .filter_map(
            |r| match (r.first().cloned().flatten(), r.get(1).cloned().flatten()) {
                (Some(k), Some(v)) => Some((k, v)),
                _ => None,
            },
        )
        .collect();
    Ok(ServerInfo {
        version,
        version_num: s.server_version_num(),
        settings,
    })
}

pub struct ClientInfo {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_bytes: u64,
    pub os: String,
    pub hostname: String,
}

pub fn client_info() -> ClientInfo {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let (os, hostname) = uname();
    ClientInfo {
        cpus,
        cpu_model,
        memory_bytes,
        os,
        hostname,
    }
}

fn uname() -> (String, String) {
    // SAFETY: uname fills a caller-owned struct; the fields are NUL-terminated C strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return ("unknown".into(), "unknown".into());
        }
        let s = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (
            format!("{} {} {}", s(&u.sysname), s(&u.release), s(&u.machine)),
            s(&u.nodename),
        )
    }
}
