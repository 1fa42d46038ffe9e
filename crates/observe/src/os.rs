//! The machine, seen through `/proc` (Linux): the server's when the server runs on it, else the
//! client's (a benchmark's client can be its bottleneck, so its machine is always watched).
//!
//! Owns reading and parsing `/proc/stat` (machine CPU by mode), `/proc/meminfo`,
//! `/proc/diskstats` (whole disks summed, and each watched device on its own: the devices that
//! hold the server's data directory and WAL, found from their paths, and the machine's whole
//! disks), `/proc/<pid>/stat` (the server's processes) and `getrusage` (this process and the
//! observer's thread), and turning two readings into one [`OsSample`]. Must not touch: the
//! database, anything that writes.
//!
//! Formats: proc(5). CPU times are in clock ticks (`sysconf(_SC_CLK_TCK)`); diskstats sectors are
//! always 512 bytes whatever the device's sector size (Documentation/admin-guide/iostats.rst).
//! Per device, as iostat(1) derives them: `r_await` = milliseconds spent reading / reads
//! completed, `aqu-sz` = weighted milliseconds doing I/O / elapsed milliseconds, `%util` =
//! milliseconds doing I/O / elapsed milliseconds.
//! Server CPU = the live server processes' `utime + stime` plus the postmaster's `cutime +
//! cstime` (children it has reaped), so a backend that exits moves its time from one term to the
//! other instead of losing it. A MySQL or MariaDB server is one process with a thread per
//! connection ([`OsReader::single_process`]): its own `utime + stime` covers every thread, live or
//! gone, and its parent's times are not its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::time::Instant;

use measure::server::{DeviceSample, OsSample};

/// `/proc/stat` first line: jiffies by mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub system: u64,
    pub iowait: u64,
    pub idle: u64,
    pub total: u64,
    /// Each mode of [`CPU_MODES`] on its own.
    pub modes: [u64; 8],
}

/// The modes of `/proc/stat`'s `cpu` line, in its order.
pub const CPU_MODES: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

/// Parse the aggregate `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq steal.
/// `user` includes nice; `system` includes irq and softirq; steal counts in the total only.
pub fn parse_proc_stat(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    // guest and guest_nice (8, 9) are already included in user and nice.
    Some(CpuTimes {
        user: g(0) + g(1),
        system: g(2) + g(5) + g(6),
        idle: g(3),
        iowait: g(4),
        total: (0..8).map(g).sum(),
        modes: std::array::from_fn(g),
    })
}

/// `/proc/meminfo`'s figures that a database's memory is read from, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    pub total: u64,
    pub available: u64,
    pub cached: u64,
    pub dirty: u64,
}

/// `MemTotal`, `MemAvailable`, `Cached` and `Dirty` in bytes.
pub fn parse_meminfo(text: &str) -> Memory {
    let mut m = Memory::default();
    for l in text.lines() {
        let mut it = l.split_whitespace();
        let key = it.next().unwrap_or("");
        let bytes = it.next().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0) * 1024;
        match key {
            "MemTotal:" => m.total = bytes,
            "MemAvailable:" => m.available = bytes,
            "Cached:" => m.cached = bytes,
            "Dirty:" => m.dirty = bytes,
            _ => {}
        }
    }
    m
}

/// One device's cumulative `/proc/diskstats` fields (iostats.rst: 1, 3, 4, 5, 7, 8, 10, 11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub major: u32,
    pub minor: u32,
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub io_ms: u64,
    pub weighted_ms: u64,
}

/// Every device's counters by name.
pub fn parse_devices(text: &str) -> BTreeMap<String, DiskCounters> {
    let mut out = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        out.insert(
            f[2].to_string(),
            DiskCounters {
                major: f[0].parse().unwrap_or(0),
                minor: f[1].parse().unwrap_or(0),
                reads: n(3),
                read_sectors: n(5),
                read_ms: n(6),
                writes: n(7),
                write_sectors: n(9),
                write_ms: n(10),
                io_ms: n(12),
                weighted_ms: n(13),
            },
        );
    }
    out
}

/// One device over `secs` seconds, from two readings.
pub fn device_sample(device: &str, a: &DiskCounters, b: &DiskCounters, secs: f64) -> DeviceSample {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let (reads, writes) = (d(a.reads, b.reads), d(a.writes, b.writes));
    let per_op = |ms: f64, ops: f64| (ops > 0.0).then(|| ms / ops);
    let elapsed_ms = secs * 1000.0;
    DeviceSample {
        device: device.to_string(),
        holds: None,
        reads_per_s: reads / secs,
        writes_per_s: writes / secs,
        read_bytes_per_s: d(a.read_sectors, b.read_sectors) * 512.0 / secs,
        write_bytes_per_s: d(a.write_sectors, b.write_sectors) * 512.0 / secs,
        read_latency_ms: per_op(d(a.read_ms, b.read_ms), reads),
        write_latency_ms: per_op(d(a.write_ms, b.write_ms), writes),
        queue_depth: d(a.weighted_ms, b.weighted_ms) / elapsed_ms,
        util_pct: (100.0 * d(a.io_ms, b.io_ms) / elapsed_ms).min(100.0),
    }
}

/// The device that holds `path`: its `st_dev` looked up by major and minor number among
/// `devices`. `Err` says why not (a file system with no block device of its own: overlay, tmpfs,
/// btrfs subvolumes show an anonymous device 0:N).
pub fn device_of(path: &str, devices: &BTreeMap<String, DiskCounters>) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt as _;
    let dev = fs::metadata(path)
        .map_err(|e| format!("cannot stat {path}: {e}"))?
        .dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    devices
        .iter()
        .find(|(_, c)| c.major == major && c.minor == minor)
        .map(|(name, _)| name.clone())
        .ok_or_else(|| {
            format!(
                "{path} is on device {major}:{minor}, which is not a block device in \
                 /proc/diskstats (overlay, tmpfs or a btrfs subvolume)"
            )
        })
}

/// Whether a block device name is a whole, physical-ish disk worth summing: partitions, loop,
/// RAM disks, device-mapper and md devices (which would count the same I/O twice) are left out.
fn whole_disk(name: &str, whole: &BTreeSet<String>) -> bool {
    whole.contains(name)
        && !["loop", "ram", "zram", "dm-", "md", "sr", "fd"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Sectors read and written, summed over whole disks. `whole` = names in `/sys/block`.
pub fn parse_diskstats(text: &str, whole: &BTreeSet<String>) -> (u64, u64) {
    let mut r = 0;
    let mut w = 0;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 || !whole_disk(f[2], whole) {
            continue;
        }
        r += f[5].parse::<u64>().unwrap_or(0);
        w += f[9].parse::<u64>().unwrap_or(0);
    }
    (r, w)
}

/// `/proc/<pid>/stat`: (ppid, utime + stime, cutime + cstime) in ticks. The command name (field
/// 2) may hold spaces and parentheses, so fields are counted after the last `)`.
pub fn parse_pid_stat(text: &str) -> Option<(i32, u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
    let n = |i: usize| f.get(i - 3).and_then(|x| x.parse::<i64>().ok());
    let ppid = n(4)? as i32;
    let own = n(14)? + n(15)?;
    let children = n(16)? + n(17)?;
    Some((ppid, own.max(0) as u64, children.max(0) as u64))
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn rusage_ms(who: libc::c_int) -> f64 {
    // SAFETY: getrusage writes into the struct we pass; zeroed is a valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time of this process (all threads), ms.
pub fn process_cpu_ms() -> f64 {
    rusage_ms(libc::RUSAGE_SELF)
}

/// CPU time of the calling thread, ms (Linux `RUSAGE_THREAD`; the process elsewhere).
pub fn thread_cpu_ms() -> f64 {
    #[cfg(target_os = "linux")]
    {
        rusage_ms(libc::RUSAGE_THREAD)
    }
    #[cfg(not(target_os = "linux"))]
    {
        rusage_ms(libc::RUSAGE_SELF)
    }
}

/// One reading of everything; two make a sample.
#[derive(Clone, Debug)]
pub struct Reading {
    at: Instant,
    cpu: Option<CpuTimes>,
    mem: Memory,
    disk: (u64, u64),
    devices: BTreeMap<String, DiskCounters>,
    client_ms: f64,
    /// Server CPU in ticks, when the server's processes could be read.
    server_ticks: Option<u64>,
}

/// Reads the machine. `server_pids` are refreshed by the caller from `pg_stat_activity`.
pub struct OsReader {
    whole_disks: BTreeSet<String>,
    /// Devices that hold the server's files -> what they hold (`data directory`, `WAL`).
    holds: BTreeMap<String, String>,
    ticks: f64,
    /// The postmaster, found as the parent of a server process.
    postmaster: Option<i32>,
    /// The server is the one process given (MySQL): no postmaster to add.
    single: bool,
    last: Option<Reading>,
}

impl OsReader {
    /// `None` when `/proc/stat` cannot be read (not Linux, or /proc hidden).
    pub fn new() -> Option<OsReader> {
        parse_proc_stat(&fs::read_to_string("/proc/stat").ok()?)?;
        let whole_disks = fs::read_dir("/sys/block")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        Some(OsReader {
            whole_disks,
            holds: BTreeMap::new(),
            ticks: clock_ticks(),
            postmaster: None,
            single: false,
            last: None,
        })
    }

    /// The server pids given to [`OsReader::read`] are whole servers (MySQL's one process with a
    /// thread per connection), not backends of a postmaster.
    pub fn single_process(&mut self) {
        self.single = true;
    }

    /// Watch the device that holds `path` (the server's data directory, its WAL) on its own,
    /// labelled `what`; the device's name, or why it cannot be watched.
    pub fn watch(&mut self, path: &str, what: &str) -> Result<String, String> {
        let text = fs::read_to_string("/proc/diskstats")
            .map_err(|e| format!("cannot read /proc/diskstats: {e}"))?;
        let dev = device_of(path, &parse_devices(&text))?;
        let holds = self.holds.entry(dev.clone()).or_default();
        if !holds.split(", ").any(|h| h == what) {
            if !holds.is_empty() {
                holds.push_str(", ");
            }
            holds.push_str(what);
        }
        Ok(dev)
    }

    fn server_ticks(&mut self, server_pids: &[i32]) -> Option<u64> {
        if server_pids.is_empty() {
            return None;
        }
        let mut sum = 0u64;
        let mut seen = 0;
        for &pid in server_pids {
            if let Some((ppid, own, _)) = fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|t| parse_pid_stat(&t))
            {
                seen += 1;
                sum += own;
                if self.postmaster.is_none() && ppid > 1 {
                    self.postmaster = Some(ppid);
                }
            }
        }
        if seen == 0 {
            return None;
        }
        if self.single {
            return Some(sum);
        }
        let pm = self.postmaster?;
        let (_, own, children) = fs::read_to_string(format!("/proc/{pm}/stat"))
            .ok()
            .and_then(|t| parse_pid_stat(&t))?;
        Some(sum + own + children)
    }

    /// Read now; return the sample for the period since the previous reading (none the first
    /// time). `t_ms` is stamped by the caller.
    pub fn read(&mut self, server_pids: &[i32]) -> Option<OsSample> {
        let diskstats = fs::read_to_string("/proc/diskstats").unwrap_or_default();
        let now = Reading {
            at: Instant::now(),
            cpu: fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| parse_proc_stat(&t)),
            mem: fs::read_to_string("/proc/meminfo")
                .map(|t| parse_meminfo(&t))
                .unwrap_or_default(),
            disk: parse_diskstats(&diskstats, &self.whole_disks),
            devices: parse_devices(&diskstats)
                .into_iter()
                .filter(|(name, _)| {
                    self.holds.contains_key(name) || whole_disk(name, &self.whole_disks)
                })
                .collect(),
            client_ms: process_cpu_ms(),
            server_ticks: self.server_ticks(server_pids),
        };
        let prev = self.last.replace(now.clone())?;
        let secs = now.at.duration_since(prev.at).as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        let mut s = OsSample {
            mem_total_bytes: now.mem.total,
            mem_available_bytes: now.mem.available,
            mem_cached_bytes: now.mem.cached,
            mem_dirty_bytes: now.mem.dirty,
            ..Default::default()
        };
        if let (Some(a), Some(b)) = (prev.cpu, now.cpu) {
            let total = b.total.saturating_sub(a.total) as f64;
            if total > 0.0 {
                let p = |x: u64, y: u64| 100.0 * y.saturating_sub(x) as f64 / total;
                s.cpu_user_pct = p(a.user, b.user);
                s.cpu_system_pct = p(a.system, b.system);
                s.cpu_iowait_pct = p(a.iowait, b.iowait);
                s.cpu_idle_pct = p(a.idle, b.idle);
                s.cpu_modes_pct = (CPU_MODES.iter().enumerate())
                    .map(|(i, m)| (m.to_string(), p(a.modes[i], b.modes[i])))
                    .collect();
            }
        }
        s.disk_read_bytes_per_s = now.disk.0.saturating_sub(prev.disk.0) as f64 * 512.0 / secs;
        s.disk_write_bytes_per_s = now.disk.1.saturating_sub(prev.disk.1) as f64 * 512.0 / secs;
        // The devices that hold the server's files first, then the machine's disks.
        let mut devices: Vec<DeviceSample> = (now.devices.iter())
            .filter_map(|(name, b)| {
                let a = prev.devices.get(name)?;
                let mut d = device_sample(name, a, b, secs);
                d.holds = self.holds.get(name).cloned();
                Some(d)
            })
            .collect();
        devices.sort_by_key(|d| d.holds.is_none());
        s.devices = devices;
        s.client_cpu_pct = 100.0 * (now.client_ms - prev.client_ms).max(0.0) / 1000.0 / secs;
        s.server_cpu_pct = match (prev.server_ticks, now.server_ticks) {
            (Some(a), Some(b)) if b >= a => Some(100.0 * (b - a) as f64 / self.ticks / secs),
            _ => None,
        };
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_cpu_line() {
        let t = "cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 50 2 25 500 10 0 1 1 0 0\n";
        let c = parse_proc_stat(t).unwrap();
        assert_eq!(
            c,
            CpuTimes {
                user: 105,
                system: 53,
                iowait: 20,
                idle: 1000,
                total: 1181,
                modes: [100, 5, 50, 1000, 20, 1, 2, 3],
            }
        );
        assert!(parse_proc_stat("intr 1 2 3").is_none());
    }

    #[test]
    fn meminfo_in_bytes() {
        let t = "MemTotal:       16384 kB\nMemFree:  100 kB\nMemAvailable:    8192 kB\n\
                 Buffers: 10 kB\nCached:  4096 kB\nSwapCached: 1 kB\nDirty: 64 kB\n";
        assert_eq!(
            parse_meminfo(t),
            Memory {
                total: 16384 * 1024,
                available: 8192 * 1024,
                cached: 4096 * 1024,
                dirty: 64 * 1024,
            }
        );
    }

    #[test]
    fn diskstats_sum_whole_disks_only() {
        let t = "   8       0 sda 10 0 100 0 20 0 200 0 0 0 0\n\
                    8       1 sda1 10 0 100 0 20 0 200 0 0 0 0\n\
                    7       0 loop0 1 0 999 0 1 0 999 0 0 0 0\n\
                  253       0 vda 1 0 5 0 1 0 7 0 0 0 0\n";
        let whole: BTreeSet<String> = ["sda", "loop0", "vda"].map(String::from).into();
        assert_eq!(parse_diskstats(t, &whole), (105, 207));
    }

    #[test]
    fn device_figures_are_iostat_s() {
        // Fields after the name (iostats.rst): reads, merged, sectors, ms reading, writes,
        // merged, sectors, ms writing, in flight, ms doing I/O, weighted ms; then discards.
        let a = "254 0 vda 100 0 800 50 200 0 1600 400 0 300 1000 0 0 0 0\n\
                 254 1 vda1 1 0 8 1 2 0 16 4 0 3 10 0 0 0 0\n";
        let b = "254 0 vda 300 0 2400 250 400 0 4800 1400 1 800 3500 0 0 0 0\n";
        let (a, b) = (parse_devices(a), parse_devices(b));
        assert_eq!(a.len(), 2);
        assert_eq!((a["vda1"].major, a["vda1"].minor), (254, 1));
        let d = device_sample("vda", &a["vda"], &b["vda"], 2.0);
        // 200 reads and 200 writes in 2 s; 1600 sectors read, 3200 written.
        assert_eq!((d.reads_per_s, d.writes_per_s), (100.0, 100.0));
        assert_eq!(d.read_bytes_per_s, 1600.0 * 512.0 / 2.0);
        assert_eq!(d.write_bytes_per_s, 3200.0 * 512.0 / 2.0);
        // 200 ms over 200 reads, 1000 ms over 200 writes.
        assert_eq!(d.read_latency_ms, Some(1.0));
        assert_eq!(d.write_latency_ms, Some(5.0));
        // 2500 weighted ms over 2000 ms elapsed; 500 ms busy of 2000.
        assert_eq!(d.queue_depth, 1.25);
        assert_eq!(d.util_pct, 25.0);
        let idle = device_sample("vda", &b["vda"], &b["vda"], 1.0);
        assert_eq!((idle.read_latency_ms, idle.write_latency_ms), (None, None));
    }

    #[test]
    fn the_device_of_a_path_is_found_by_its_numbers() {
        let Ok(text) = fs::read_to_string("/proc/diskstats") else {
            return; // not Linux
        };
        let devices = parse_devices(&text);
        match device_of(env!("CARGO_MANIFEST_DIR"), &devices) {
            Ok(name) => assert!(devices.contains_key(&name)),
            // A checkout on overlay or tmpfs has no block device: the reason says so.
            Err(why) => assert!(why.contains("not a block device"), "{why}"),
        }
        assert!(device_of("/no/such/path", &devices)
            .unwrap_err()
            .contains("cannot stat"));
    }

    #[test]
    fn pid_stat_with_awkward_command_names() {
        let t =
            "1234 (postgres: a) b) S 99 1234 1234 0 -1 4194560 1 0 0 0 7 3 11 13 20 0 1 0 1 1 1";
        assert_eq!(parse_pid_stat(t), Some((99, 10, 24)));
        assert_eq!(parse_pid_stat("garbage"), None);
    }

    #[test]
    fn reader_gives_a_sample_from_the_second_reading() {
        let Some(mut r) = OsReader::new() else {
            return; // not Linux
        };
        assert!(r.read(&[]).is_none());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let me = std::process::id() as i32;
        let s = r.read(&[me]).expect("second reading");
        assert!(s.mem_total_bytes > 0 && s.mem_available_bytes <= s.mem_total_bytes);
        let sum = s.cpu_user_pct + s.cpu_system_pct + s.cpu_iowait_pct + s.cpu_idle_pct;
        assert!(sum <= 100.0 + 1e-6, "{sum}");
        let modes: f64 = s.cpu_modes_pct.values().sum();
        assert!(
            s.cpu_modes_pct.len() == 8 && modes <= 100.0 + 1e-6,
            "{modes}"
        );
        assert!(s.client_cpu_pct >= 0.0);
    }
}
