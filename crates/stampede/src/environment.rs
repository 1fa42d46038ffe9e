//! The environment a result was measured in: the server's version and the settings that decide
//! its performance, and the client machine. Captured once per run, stored in the JSON result, so
//! two results can be compared knowing what differed.
//!
//! Also the client process's open-file limit ([`ensure_fd_limit`]): every connection is a
//! descriptor, and Debian's default soft limit (1024) stops a run at ~1000 clients with EMFILE
//! in the middle of connecting. Before anything connects (or starts the embedded server, which
//! inherits the limit), `run` counts what it needs, raises the soft limit towards the hard one
//! (any process may, without privileges) and refuses with the way to raise it when even the hard
//! limit is too low. What it found and did is recorded in the result.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use anyhow::Result;
use sut::Session;

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
    "effective_cache_size",
    "effective_io_concurrency",
    "huge_pages",
    "track_io_timing",
];

/// The same for MySQL/MariaDB servers (their names, from `SHOW GLOBAL VARIABLES`).
pub const MYSQL_SERVER_SETTINGS: &[&str] = &[
    "innodb_buffer_pool_size",
    "max_connections",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "log_bin",
    "binlog_format",
    "innodb_log_file_size",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "transaction_isolation",
    "tx_isolation",
    "performance_schema",
    "wsrep_on",
];

pub struct ServerInfo {
    pub version: String,
    pub version_num: u32,
    pub settings: BTreeMap<String, String>,
}

/// When the server started, in seconds since the Unix epoch (PostgreSQL's
/// `pg_postmaster_start_time()`, to the microsecond; MySQL's `Uptime` taken from this machine's
/// clock, to the second: a clock that differs from the server's differs the same way at every
/// reading): a later reading that differs by more than [`start_tolerance_s`] tells a restart.
/// On MySQL a `SHOW`, not a `SELECT` of `information_schema`: `Com_select` is what the
/// statement ledger and a user comparing `Com_*` with sysbench's read, and this reading must
/// not move it.
pub async fn server_started(s: &mut Session) -> Result<Option<f64>> {
    let (sql, column) = match s.dialect() {
        sut::Dialect::Postgres => ("SELECT extract(epoch FROM pg_postmaster_start_time())", 0),
        sut::Dialect::MySql => ("SHOW GLOBAL STATUS LIKE 'Uptime'", 1),
    };
    let rows = s.simple_query(sql).await?;
    let value = (rows.first())
        .and_then(|r| r.get(column).cloned().flatten())
        .and_then(|v| v.parse::<f64>().ok());
    Ok(match s.dialect() {
        sut::Dialect::Postgres => value,
        sut::Dialect::MySql => value.map(|uptime| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            now - uptime
        }),
    })
}

/// How far two readings of [`server_started`] may differ and still be one server's life: a
/// millisecond on PostgreSQL (its start time is exact), two seconds on MySQL (`Uptime` is whole
/// seconds, read against this machine's clock at two moments).
pub fn start_tolerance_s(dialect: sut::Dialect) -> f64 {
    match dialect {
        sut::Dialect::Postgres => 0.001,
        sut::Dialect::MySql => 2.0,
    }
}

pub async fn server_info(s: &mut Session) -> Result<ServerInfo> {
    if let Some(m) = s.mysql() {
        let version = m.server_version().to_string();
        let list = quoted(MYSQL_SERVER_SETTINGS);
        let rows = s
            .simple_query(&format!(
                "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
            ))
            .await?;
        return Ok(ServerInfo {
            version,
            version_num: 0,
            settings: pairs(rows),
        });
    }
    // `server_version` ("15.18 (Debian 15.18-0+deb12u1)"), as the result model documents it.
    let version = s
        .simple_query("SHOW server_version")
        .await?
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_default();
    let list = quoted(SERVER_SETTINGS);
    // current_setting() gives the human form with units ("128MB"), as people write them.
    let rows = s
        .simple_query(&format!(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({list}) ORDER BY name"
        ))
        .await?;
    Ok(ServerInfo {
        version,
        version_num: s.pg().map_or(0, |p| p.server_version_num()),
        settings: pairs(rows),
    })
}

/// `'a','b',...`: names as an SQL list.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Rows of (name, value) as a map.
fn pairs(rows: Vec<Vec<Option<String>>>) -> BTreeMap<String, String> {
    rows.into_iter()
        .filter_map(
            |r| match (r.first().cloned().flatten(), r.get(1).cloned().flatten()) {
                (Some(k), Some(v)) => Some((k, v)),
                _ => None,
            },
        )
        .collect()
}

pub struct ClientInfo {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_bytes: u64,
    pub os: String,
    pub hostname: String,
    /// What [`ensure_fd_limit`] found and did, when it ran in this process.
    pub fd_limit: Option<report::FdLimit>,
    pub network: Vec<report::NetInterface>,
}

/// Descriptors a run needs besides one per client: the observer's sampler and the checks'
/// connections (up to 4 at once), the main runtime (epoll, its wake-up eventfd, the signal
/// pipe), stdio, the embedded server's pipes and the output files; with room to spare, since
/// running out mid-run loses the run.
const FD_BASE: u64 = 64;
/// Per engine thread: its epoll, the runtime's eventfd, its timerfd, and a `-l` log file.
const FD_PER_THREAD: u64 = 4;

/// The open-file limit this process recorded for its result (set once by [`ensure_fd_limit`]).
static FD_LIMIT: OnceLock<report::FdLimit> = OnceLock::new();

/// Descriptors a run with `clients` clients on `threads` engine threads needs.
fn fds_needed(clients: u32, threads: u32) -> u64 {
    u64::from(clients) + FD_PER_THREAD * u64::from(threads.clamp(1, clients.max(1))) + FD_BASE
}

/// Make sure this process may open `needed` descriptors: raise the soft RLIMIT_NOFILE (to the
/// hard limit, which needs no privilege) when it is lower, and refuse, saying how to raise it,
/// when the hard limit is lower too. Call before connecting or starting the embedded server
/// (which inherits the limit). `flag` names the clients' flag for the message (`-c`).
pub fn ensure_fd_limit(clients: u32, threads: u32, flag: &str) -> Result<report::FdLimit> {
    let needed = fds_needed(clients, threads);
    let (soft, hard) = get_nofile()?;
    let mut rec = report::FdLimit {
        soft,
        hard,
        needed,
        raised_from: None,
    };
    if soft < needed && hard.is_none_or(|h| h >= needed) {
        // Up to the hard limit: later connections (-C, retries) need no second look. An
        // unlimited hard limit is capped by the kernel (fs.nr_open); ask for what is needed
        // with room (the kernel refuses values above nr_open, so fall back to `needed`).
        let target = hard.unwrap_or_else(|| needed.max(65_536));
        if set_nofile(target, hard).is_ok() || set_nofile(needed, hard).is_ok() {
            rec.raised_from = Some(soft);
            rec.soft = get_nofile()?.0;
        }
    }
    if rec.soft < needed {
        let hard_s = hard.map_or("unlimited".to_string(), |h| h.to_string());
        anyhow::bail!(
            "{flag} {clients} needs about {needed} open files ({clients} connections, plus {} \
             for the observer, checks and engine threads), but this process may open only {} (soft \
             limit; hard limit {hard_s}) and could not raise it. Raise the limit where stampede \
             starts: in the shell, `ulimit -n {needed}` (above the hard limit only as root); for \
             logins, `* hard nofile {needed}` and `* soft nofile {needed}` in \
             /etc/security/limits.conf; for a systemd service, LimitNOFILE={needed}. Or use fewer \
             clients.",
            needed - u64::from(clients),
            rec.soft
        );
    }
    let _ = FD_LIMIT.set(rec.clone());
    Ok(rec)
}

/// The soft and hard RLIMIT_NOFILE (`None`: unlimited).
// `rlim_t` is u64 on 64-bit Linux but not everywhere: the casts are not all no-ops.
#[allow(clippy::unnecessary_cast)]
fn get_nofile() -> Result<(u64, Option<u64>)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a caller-owned struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        anyhow::bail!(
            "cannot read the open-file limit (getrlimit): {}",
            std::io::Error::last_os_error()
        );
    }
    let lim = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v as u64);
    Ok((lim(r.rlim_cur).unwrap_or(u64::MAX), lim(r.rlim_max)))
}

#[allow(clippy::unnecessary_cast)]
fn set_nofile(soft: u64, hard: Option<u64>) -> std::io::Result<()> {
    let r = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard.map_or(libc::RLIM_INFINITY, |h| h as libc::rlim_t),
    };
    // SAFETY: setrlimit reads a caller-owned struct.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
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
        fd_limit: FD_LIMIT.get().cloned(),
        network: network_interfaces(),
    }
}

/// The machine's network interfaces that are up, with their link speed where the driver says
/// (`/sys/class/net/<if>/speed`, Mb/s; virtual links report -1 or nothing): a client whose
/// link saturates is the bottleneck, whatever the server can do. Loopback is left out.
fn network_interfaces() -> Vec<report::NetInterface> {
    let Ok(dir) = std::fs::read_dir("/sys/class/net") else {
        return Vec::new();
    };
    let read = |p: std::path::PathBuf| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mut v: Vec<report::NetInterface> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| read(p.join("operstate")) == "up" && read(p.join("type")) != "772")
        .map(|p| report::NetInterface {
            name: p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            speed_mbps: read(p.join("speed")).parse::<u64>().ok().filter(|&s| s > 0),
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
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

/// "15.18 (Debian 15.18-0+deb12u1)" -> "15.18", as pgbench prints the server's version.
pub(crate) fn short_version(v: &str) -> String {
    v.split_whitespace().next().unwrap_or(v).to_string()
}

/// The server's and the client machine's environment as the result describes them.
pub(crate) fn environment_info(server: &ServerInfo, client: ClientInfo) -> report::Environment {
    report::Environment {
        server: report::ServerEnvironment {
            version: server.version.clone(),
            version_num: Some(server.version_num),
            settings: server.settings.clone(),
        },
        client: report::ClientEnvironment {
            cpus: client.cpus as u32,
            cpu_model: Some(client.cpu_model),
            memory_bytes: Some(client.memory_bytes),
            os: client.os,
            hostname: client.hostname,
            stampede_version: env!("CARGO_PKG_VERSION").into(),
            fd_limit: client.fd_limit,
            network: client.network,
        },
    }
}

/// The command line as given, with every password removed, in whatever spelling
/// (`sut::conninfo::redact_args`, the one redaction every printed form uses).
pub(crate) fn command_line() -> Vec<String> {
    sut::conninfo::redact_args(&std::env::args().collect::<Vec<_>>())
}
