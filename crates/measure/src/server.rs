//! What was observed on the server during a run, as plain data.
//!
//! Owns [`ServerMetrics`] and its records: active-session samples by wait event (database load),
//! statement deltas from `pg_stat_statements`, cumulative-statistics counters (`pg_stat_database`,
//! `pg_stat_wal`, `pg_stat_bgwriter`, `pg_stat_checkpointer`) as a time series and as deltas over
//! the run, `pg_stat_io` deltas, OS samples of the machine, the observer's own cost, and notes
//! about what could not be observed and why.
//!
//! The same records hold a MySQL or MariaDB server's ([`ServerMetrics::product`] says which):
//! the processlist's sessions with their current `performance_schema` wait
//! in the same `Type:Event` form, statement digests from `events_statements_summary_by_digest`
//! in [`StatementDelta`], `SHOW GLOBAL STATUS` counters under the `mysql.` prefix, and two parts
//! PostgreSQL has no source for: waits by time over the run
//! ([`ServerMetrics::wait_times`], the client sessions' `performance_schema` wait summaries) and the
//! Galera nodes' `wsrep_*` status one node at a time ([`ServerMetrics::nodes`]).
//!
//! Why here and not in `observe` or `report`: `observe` produces these and `report` renders them,
//! and the crate arrows (`observe -> target, measure`; `report -> measure`) leave `measure` as the
//! one place both may see. Like the rest of `measure` it is numbers only: no runtime, no driver.
//!
//! Conventions: times are milliseconds relative to the measured start of the run (`t_ms`, negative
//! before it); counters keep PostgreSQL's column names under a view prefix (`database.xact_commit`,
//! `wal.wal_bytes`, `checkpointer.num_timed`, `bgwriter.checkpoints_timed`), exactly as the server
//! version at hand names them, so nothing is lost or renamed when a release renames a column;
//! [`ServerMetrics::delta_any`] and friends read across the renames. MySQL's status variables keep
//! their names under `mysql.` (`mysql.Com_commit`, `mysql.Innodb_buffer_pool_reads`), so no
//! counter of one server can be read as the other's.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Wait-event label for an active session that waits on nothing (PostgreSQL shows no wait event
/// while a backend runs on CPU, or waits on something not instrumented).
pub const CPU: &str = "CPU";

/// Everything `observe` saw on the server during one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerMetrics {
    /// Period of the activity samples, ms.
    pub sample_interval_ms: u64,
    /// Period of the counter samples, ms.
    pub counter_interval_ms: u64,
    /// `server_version_num` of the observed server (MySQL and MariaDB: major * 10000 + minor *
    /// 100 + patch, their own `MYSQL_VERSION_ID` convention: 10.11.19 is 101119).
    pub server_version_num: u32,
    /// What was observed: `PostgreSQL`, `MySQL` or `MariaDB`. Absent from results written before
    /// MySQL servers were observed, which are all PostgreSQL's ([`ServerMetrics::product_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// The time span the deltas cover: start and end snapshot times, ms since the run's start.
    pub window_start_ms: i64,
    pub window_end_ms: i64,
    /// What watching cost.
    pub cost: ObserverCost,
    /// What could not be observed, and why (missing extension, privileges, views).
    pub notes: Vec<Note>,
    /// Active sessions, one sample per `sample_interval_ms`.
    pub activity: Vec<ActivitySample>,
    /// Whole window: active sessions by wait event, most first (the load: background sessions
    /// are in [`ServerMetrics::background`], not here).
    pub waits: Vec<WaitTotal>,
    /// Whole window: active background sessions by kind, most first, apart from the load
    /// (see [`ActivitySample::background`]). Absent from results written before they were
    /// told apart, whose `waits` include them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<BackgroundTotal>,
    /// Whole window: wait-event samples by statement (`pg_stat_activity.query_id`), most first.
    pub query_waits: Vec<QueryWait>,
    /// Top statements by execution time over the window (`pg_stat_statements` deltas).
    pub statements: Vec<StatementDelta>,
    /// All statements of the database together over the window (for shares of the total);
    /// `None` without `pg_stat_statements`.
    pub statements_total: Option<StatementDelta>,
    /// Cumulative counters sampled every `counter_interval_ms` (values as read, not deltas).
    pub counters: Vec<CounterSample>,
    /// End minus start of every counter over the window.
    pub deltas: BTreeMap<String, f64>,
    /// `pg_stat_io` (PostgreSQL 16+) deltas over the window, rows with any activity.
    pub io: Vec<IoDelta>,
    /// OS samples when the server runs on this machine; empty otherwise.
    pub os: Vec<OsSample>,
    /// MySQL/MariaDB: waits by time over the window, most first (`performance_schema`'s
    /// `events_waits_summary_by_user_by_event_name` deltas: the client sessions' waits; the
    /// global summary, with the background threads', where that cannot be read). PostgreSQL has
    /// no such source (its
    /// waits are only sampled, in [`ServerMetrics::waits`]): empty there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_times: Vec<WaitTime>,
    /// A cluster's nodes read one by one (Galera: every node's `wsrep_*` flow control, queue and
    /// conflict counters); empty for a single server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeMetrics>,
    /// A PostgreSQL target of several hosts, each observed on a session of its own: each
    /// host's waits and top SQL. `waits`, `query_waits`, `statements`, `statements_total` and
    /// `cost` above are then summed over the hosts, and the time series (`activity`,
    /// `counters`, `deltas`, `io`, `os`) are the first host's. Empty for one server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointMetrics>,
    /// Whose machine `os` describes: `server` when the server runs on the client's machine (one
    /// machine: its CPU, memory and disks are the server's too), `client` when the server is
    /// elsewhere (the client's machine only). Results from before this field: `server` when `os`
    /// has samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_machine: Option<String>,
    /// Counters read every interval whose value never changed over the whole record, left out of
    /// `counters` to keep the series small (hundreds of a MySQL server's status variables are
    /// settings or sizes): each one's value. A counter is in `counters` or here, never lost.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counter_constants: BTreeMap<String, f64>,
}

/// One host of a target with several, as its own observer saw it over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointMetrics {
    /// `host:port` as the target lists it (a unix-socket directory and port for local ones).
    pub endpoint: String,
    /// Average active sessions over the window (all wait events together).
    pub average_active: f64,
    /// Active sessions by wait event, most first.
    pub waits: Vec<WaitTotal>,
    /// Top statements by execution time (`pg_stat_statements` deltas).
    pub statements: Vec<StatementDelta>,
    /// All statements together; `None` without `pg_stat_statements` there.
    pub statements_total: Option<StatementDelta>,
    /// What watching this host cost (its sessions count in its commit counter).
    pub cost: ObserverCost,
}

/// Prefix of the counters read from MySQL's `SHOW GLOBAL STATUS` (`mysql.Com_commit`).
pub const MYSQL_PREFIX: &str = "mysql.";

/// One wait event's measured time over the window (MySQL's `performance_schema`: every
/// instrumented and timed wait of every thread, summed by the server, not sampled).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitTime {
    /// `Type:Event` as in the activity samples (`IO:file/innodb/innodb_log_file`).
    pub event: String,
    /// Waits counted (`COUNT_STAR`).
    pub count: u64,
    /// Time waited, all threads together (`SUM_TIMER_WAIT`, picoseconds there), ms.
    pub total_ms: f64,
}

/// One node of a cluster, read on its own session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeMetrics {
    /// `host:port` or the socket path, as the target lists it.
    pub endpoint: String,
    /// Its counters sampled every `counter_interval_ms` (values as read).
    pub counters: Vec<CounterSample>,
    /// End minus start of each over the window.
    pub deltas: BTreeMap<String, f64>,
}

/// The observer's own footprint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObserverCost {
    /// Activity samples taken.
    pub samples: u64,
    /// SQL statements sent by the observer.
    pub queries: u64,
    /// Wall time spent waiting for those statements and reading /proc, ms.
    pub busy_ms: f64,
    /// The slowest single sample (all its statements), ms.
    pub max_sample_ms: f64,
    /// CPU time of the observer's thread (user + system), ms.
    pub cpu_ms: f64,
    /// Sessions the observer opened. Each costs the server a start-up transaction, counted in
    /// `pg_stat_database.xact_commit`; the observer's own reads run inside one read-only
    /// transaction and commit nothing.
    pub connections: u32,
    /// Samples that failed (and were skipped).
    pub errors: u64,
}

/// Something the observer could not see, and what to do about it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Which part of the report is affected: `pg_stat_statements`, `privileges`, `pg_stat_io`,
    /// `os`, `sampling`, ...
    pub topic: String,
    pub message: String,
}

/// One look at `pg_stat_activity` (and `pg_locks`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActivitySample {
    pub t_ms: i64,
    /// Client sessions in state `active`: the database load (the observer's own session and
    /// the background sessions are not in it).
    pub active: u32,
    /// Active sessions by wait event (`Type:Event`, or [`CPU`]); the values sum to `active`.
    pub waits: BTreeMap<String, u32>,
    /// Active background sessions by kind, in neither `active` nor `waits`: sessions that
    /// work whatever the clients do, or for someone else. PostgreSQL's by `backend_type`
    /// (`walsender`, `autovacuum worker`, `logical replication worker`, ...: every type but
    /// `client backend` and `parallel worker`, which serves one), MySQL's system threads by
    /// name (`thread/sql/slave_io`, a `Binlog Dump` session as `binlog dump`, ...), and on
    /// both another stampede observer's session ([`OBSERVER`]). A standby's walsender is
    /// active for as long as it streams: counted as load it was 0.98 of 1.04 average active
    /// sessions of a one-client run (issue 30).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub background: BTreeMap<String, u32>,
    /// Client connections by state (`active`, `idle`, `idle in transaction`, ...).
    pub states: BTreeMap<String, u32>,
    /// Lock requests not granted (`pg_locks`).
    pub lock_waits: u32,
    /// Sessions whose state and wait event the observer's role may not see.
    pub hidden: u32,
}

/// The kind under which another stampede observer's session is counted in
/// [`ActivitySample::background`] (each observer leaves its own session out altogether).
pub const OBSERVER: &str = "stampede observer";

/// Background sessions of one kind over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundTotal {
    /// `walsender`, `autovacuum worker`, [`OBSERVER`], a MySQL thread's name, ...
    pub kind: String,
    /// Session-samples of this kind seen active.
    pub samples: u64,
    /// Average active sessions of this kind: `samples / activity samples in the window`.
    pub aas: f64,
    /// Their wait events, most first (`aas` of each as in [`WaitTotal`]).
    pub waits: Vec<WaitTotal>,
}

/// Database load by one wait event over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitTotal {
    /// `Type:Event` (`IO:WALSync`, `LWLock:WALWrite`), or [`CPU`].
    pub event: String,
    /// Session-samples seen waiting on it.
    pub samples: u64,
    /// Average active sessions: `samples / activity samples in the window`.
    pub aas: f64,
}

/// How often sessions running one statement were seen in one wait event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryWait {
    /// `pg_stat_activity.query_id` = `pg_stat_statements.queryid`.
    pub query_id: i64,
    pub event: String,
    pub samples: u64,
}

/// One statement's `pg_stat_statements` counters, end minus start (summed over users and
/// nesting levels of the current database).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementDelta {
    pub query_id: Option<i64>,
    /// Normalised text as `pg_stat_statements` keeps it.
    pub query: String,
    pub calls: u64,
    pub total_exec_time_ms: f64,
    pub mean_exec_time_ms: f64,
    pub rows: u64,
    pub shared_blks_hit: u64,
    pub shared_blks_read: u64,
    /// WAL generated (PostgreSQL 13+), bytes.
    pub wal_bytes: Option<f64>,
    /// Rows read to run it (MySQL's `SUM_ROWS_EXAMINED`; PostgreSQL has no such count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_examined: Option<u64>,
}

/// Cumulative counters read at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterSample {
    pub t_ms: i64,
    /// `view.column` -> value as read.
    pub values: BTreeMap<String, f64>,
}

/// One `pg_stat_io` row's change over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoDelta {
    pub backend_type: String,
    pub object: String,
    pub context: String,
    /// column -> delta (`reads`, `writes`, `extends`, `hits`, `evictions`, `fsyncs`, `*_time`).
    pub values: BTreeMap<String, f64>,
}

/// The machine (and the client process) over the period ending at `t_ms`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OsSample {
    pub t_ms: i64,
    /// Machine CPU over the period, % of all CPUs (`/proc/stat`).
    pub cpu_user_pct: f64,
    pub cpu_system_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_idle_pct: f64,
    /// This process (the client: engine and observer), % of one CPU.
    pub client_cpu_pct: f64,
    /// The PostgreSQL server's processes, % of one CPU; `None` when they cannot be read.
    pub server_cpu_pct: Option<f64>,
    /// `/proc/meminfo` MemAvailable and MemTotal, bytes.
    pub mem_available_bytes: u64,
    pub mem_total_bytes: u64,
    /// Whole disks (`/proc/diskstats`), bytes per second over the period.
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    /// Machine CPU by `/proc/stat` mode, % of all CPUs: `user`, `nice`, `system`, `idle`,
    /// `iowait`, `irq`, `softirq`, `steal` each on its own (the fields above fold nice into user
    /// and irq and softirq into system).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cpu_modes_pct: BTreeMap<String, f64>,
    /// `/proc/meminfo`: the page cache (`Cached`) and the memory waiting to be written back
    /// (`Dirty`), bytes.
    #[serde(default)]
    pub mem_cached_bytes: u64,
    #[serde(default)]
    pub mem_dirty_bytes: u64,
    /// Each watched block device over the period (the devices of the server's data directory
    /// and WAL when the server is on this machine, and the machine's whole disks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceSample>,
}

/// One block device over a period, as iostat derives it from `/proc/diskstats`
/// (Documentation/admin-guide/iostats.rst): operations and bytes per second, the mean time an
/// operation took (`r_await`, `w_await`: queueing included), the mean number in flight
/// (`aqu-sz`: weighted milliseconds over elapsed milliseconds) and the share of time busy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    /// The kernel's name (`vda`, `nvme0n1p2`, `dm-0`).
    pub device: String,
    /// What it holds for the run: `data directory`, `WAL`, `data directory, WAL`; `None` for a
    /// disk watched only as one of the machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<String>,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_bytes_per_s: f64,
    pub write_bytes_per_s: f64,
    /// Mean milliseconds per read (per write) completed in the period; `None` when none was.
    pub read_latency_ms: Option<f64>,
    pub write_latency_ms: Option<f64>,
    /// Mean requests in flight (queue depth).
    pub queue_depth: f64,
    /// % of the period with at least one request in flight.
    pub util_pct: f64,
}

impl ServerMetrics {
    /// The observed server's product name; PostgreSQL for results that do not say.
    pub fn product_name(&self) -> &str {
        self.product.as_deref().unwrap_or("PostgreSQL")
    }

    /// Whether `os` describes the server's machine (the server ran where the client did), not
    /// only the client's.
    pub fn os_is_servers(&self) -> bool {
        !self.os.is_empty() && self.os_machine.as_deref() != Some("client")
    }

    /// Whether a MySQL-protocol server (MySQL or MariaDB) was observed.
    pub fn is_mysql(&self) -> bool {
        matches!(self.product.as_deref(), Some("MySQL" | "MariaDB"))
    }

    /// The change of MySQL status variable `name` (without the `mysql.` prefix) over the window.
    pub fn mysql_delta(&self, name: &str) -> Option<f64> {
        self.deltas.get(&format!("{MYSQL_PREFIX}{name}")).copied()
    }

    /// The largest value of counter `key` sampled inside the window (for gauges: threads
    /// running, the history list length, queue lengths).
    pub fn counter_max(&self, key: &str) -> Option<f64> {
        max_in(
            &self.counters,
            key,
            self.window_start_ms,
            self.window_end_ms,
        )
    }

    /// The change of counter `key` over the window.
    pub fn delta(&self, key: &str) -> Option<f64> {
        self.deltas.get(key).copied()
    }

    /// The first of `keys` present in the deltas (for columns renamed across releases).
    pub fn delta_any(&self, keys: &[&str]) -> Option<f64> {
        keys.iter().find_map(|k| self.delta(k))
    }

    /// Checkpoints over the window: (timed, requested). PostgreSQL 17 moved them from
    /// `pg_stat_bgwriter` (`checkpoints_timed`, `checkpoints_req`) to `pg_stat_checkpointer`
    /// (`num_timed`, `num_requested`).
    pub fn checkpoints(&self) -> Option<(f64, f64)> {
        let timed = self.delta_any(&["checkpointer.num_timed", "bgwriter.checkpoints_timed"])?;
        let req = self
            .delta_any(&["checkpointer.num_requested", "bgwriter.checkpoints_req"])
            .unwrap_or(0.0);
        Some((timed, req))
    }

    /// Activity samples inside the window (the ones averages are taken over).
    pub fn window_samples(&self) -> impl Iterator<Item = &ActivitySample> {
        self.activity
            .iter()
            .filter(move |s| s.t_ms >= self.window_start_ms && s.t_ms <= self.window_end_ms)
    }

    /// The OS samples of periods that ended inside the window (a sample covers the period up to
    /// its `t_ms`, so one stamped at the window's start is the time before it).
    pub fn window_os(&self) -> impl Iterator<Item = &OsSample> {
        self.os
            .iter()
            .filter(move |s| s.t_ms > self.window_start_ms && s.t_ms <= self.window_end_ms)
    }

    /// Average active sessions over the window.
    pub fn average_active(&self) -> f64 {
        let (n, sum) = self
            .window_samples()
            .fold((0u64, 0u64), |(n, s), x| (n + 1, s + u64::from(x.active)));
        if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64
        }
    }

    /// Wait events of one statement, most first.
    pub fn waits_of(&self, query_id: i64) -> Vec<&QueryWait> {
        let mut v: Vec<&QueryWait> = self
            .query_waits
            .iter()
            .filter(|q| q.query_id == query_id)
            .collect();
        v.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
        v
    }
}

/// The largest value of `key` among the samples taken from `start_ms` to `end_ms`.
pub fn max_in(samples: &[CounterSample], key: &str, start_ms: i64, end_ms: i64) -> Option<f64> {
    samples
        .iter()
        .filter(|c| c.t_ms >= start_ms && c.t_ms <= end_ms)
        .filter_map(|c| c.values.get(key).copied())
        .reduce(f64::max)
}

/// Fold activity samples into per-event totals, most first (ties by name). `aas` divides by the
/// number of samples given.
pub fn wait_totals<'a>(samples: impl IntoIterator<Item = &'a ActivitySample>) -> Vec<WaitTotal> {
    let mut n = 0u64;
    let mut by: BTreeMap<&str, u64> = BTreeMap::new();
    for s in samples {
        n += 1;
        for (e, c) in &s.waits {
            *by.entry(e.as_str()).or_default() += u64::from(*c);
        }
    }
    let mut v: Vec<WaitTotal> = by
        .into_iter()
        .map(|(e, c)| WaitTotal {
            event: e.to_string(),
            samples: c,
            aas: if n == 0 { 0.0 } else { c as f64 / n as f64 },
        })
        .collect();
    v.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
    v
}

/// One activity sample's active background sessions: (kind, wait event) -> sessions. The
/// observers keep one per sample to fold into [`BackgroundTotal`]s; the samples themselves keep
/// only the count by kind ([`ActivitySample::background`]).
pub type BackgroundSessions = BTreeMap<(String, String), u32>;

/// Fold the background sessions of activity samples into per-kind totals, most first (ties by name). Every sample of the window must be
/// given, those without background sessions too: `aas` divides by their number.
pub fn background_totals<'a>(
    samples: impl IntoIterator<Item = &'a BackgroundSessions>,
) -> Vec<BackgroundTotal> {
    let mut n = 0u64;
    let mut by: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for s in samples {
        n += 1;
        for ((kind, event), c) in s {
            *by.entry(kind)
                .or_default()
                .entry(event.as_str())
                .or_default() += u64::from(*c);
        }
    }
    let aas = |c: u64| if n == 0 { 0.0 } else { c as f64 / n as f64 };
    let mut v: Vec<BackgroundTotal> = by
        .into_iter()
        .map(|(kind, events)| {
            let mut waits: Vec<WaitTotal> = (events.into_iter())
                .map(|(e, c)| WaitTotal {
                    event: e.to_string(),
                    samples: c,
                    aas: aas(c),
                })
                .collect();
            waits.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
            let samples = waits.iter().map(|w| w.samples).sum();
            BackgroundTotal {
                kind: kind.to_string(),
                samples,
                aas: aas(samples),
                waits,
            }
        })
        .collect();
    v.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.kind.cmp(&b.kind)));
    v
}

/// Per-kind totals of background sessions summed over several hosts, most first (each host's
/// `aas` is over its own samples, so they add up as the hosts' waits do).
pub fn add_background(to: &mut Vec<BackgroundTotal>, more: &[BackgroundTotal]) {
    for b in more {
        let t = match to.iter_mut().find(|t| t.kind == b.kind) {
            Some(t) => t,
            None => {
                to.push(BackgroundTotal {
                    kind: b.kind.clone(),
                    ..Default::default()
                });
                to.last_mut().expect("just pushed")
            }
        };
        t.samples += b.samples;
        t.aas += b.aas;
        for w in &b.waits {
            match t.waits.iter_mut().find(|x| x.event == w.event) {
                Some(x) => {
                    x.samples += w.samples;
                    x.aas += w.aas;
                }
                None => t.waits.push(w.clone()),
            }
        }
        t.waits
            .sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
    }
    to.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.kind.cmp(&b.kind)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: i64, waits: &[(&str, u32)]) -> ActivitySample {
        ActivitySample {
            t_ms: t,
            active: waits.iter().map(|w| w.1).sum(),
            waits: waits.iter().map(|(e, c)| (e.to_string(), *c)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn wait_totals_average_over_samples() {
        let s = [
            sample(0, &[("CPU", 2), ("IO:WALSync", 4)]),
            sample(1000, &[("IO:WALSync", 6)]),
        ];
        let t = wait_totals(&s);
        assert_eq!(t[0].event, "IO:WALSync");
        assert_eq!(t[0].samples, 10);
        assert!((t[0].aas - 5.0).abs() < 1e-9);
        assert!((t[1].aas - 1.0).abs() < 1e-9);
        assert!(wait_totals(&[]).is_empty());
    }

    #[test]
    fn background_sessions_fold_by_kind_over_every_sample() {
        let bg = |v: &[(&str, &str, u32)]| -> BackgroundSessions {
            v.iter()
                .map(|(k, e, n)| ((k.to_string(), e.to_string()), *n))
                .collect()
        };
        // A walsender in every sample, an autovacuum worker in one of four.
        let s = [
            bg(&[("walsender", "Activity:WalSenderMain", 1)]),
            bg(&[
                ("walsender", "Activity:WalSenderMain", 1),
                ("autovacuum worker", "CPU", 1),
            ]),
            bg(&[("walsender", "IO:WALRead", 1)]),
            bg(&[("walsender", "Activity:WalSenderMain", 1)]),
        ];
        let t = background_totals(&s);
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].kind.as_str(), t[0].samples), ("walsender", 4));
        assert!((t[0].aas - 1.0).abs() < 1e-9);
        assert_eq!(t[0].waits[0].event, "Activity:WalSenderMain");
        assert!((t[0].waits[0].aas - 0.75).abs() < 1e-9);
        assert!((t[1].aas - 0.25).abs() < 1e-9, "{t:?}");
        // Samples without background sessions count in the average.
        let mut more = s.to_vec();
        more.extend([bg(&[]), bg(&[]), bg(&[]), bg(&[])]);
        assert!((background_totals(&more)[0].aas - 0.5).abs() < 1e-9);
        assert!(background_totals(&[]).is_empty());

        // Two hosts: summed by kind and event.
        let mut sum = t.clone();
        add_background(
            &mut sum,
            &background_totals(&[bg(&[
                ("walreceiver", "Activity:WalReceiverMain", 1),
                ("walsender", "IO:WALRead", 1),
            ])]),
        );
        assert_eq!(sum[0].kind, "walsender");
        assert!((sum[0].aas - 2.0).abs() < 1e-9, "{sum:?}");
        let read = sum[0].waits.iter().find(|w| w.event == "IO:WALRead");
        assert_eq!(read.map(|w| w.samples), Some(2));
        assert_eq!(sum.len(), 3);
        let receiver = sum.iter().find(|b| b.kind == "walreceiver").unwrap();
        assert!((receiver.aas - 1.0).abs() < 1e-9, "{sum:?}");
    }

    #[test]
    fn checkpoints_read_across_the_pg17_rename() {
        let mut m = ServerMetrics::default();
        m.deltas.insert("bgwriter.checkpoints_timed".into(), 1.0);
        m.deltas.insert("bgwriter.checkpoints_req".into(), 2.0);
        assert_eq!(m.checkpoints(), Some((1.0, 2.0)));
        m.deltas.insert("checkpointer.num_timed".into(), 3.0);
        m.deltas.insert("checkpointer.num_requested".into(), 4.0);
        assert_eq!(m.checkpoints(), Some((3.0, 4.0)));
    }

    #[test]
    fn mysql_counters_are_read_under_their_prefix() {
        let mut m = ServerMetrics {
            window_start_ms: 0,
            window_end_ms: 2000,
            ..Default::default()
        };
        assert_eq!(m.product_name(), "PostgreSQL");
        assert!(!m.is_mysql());
        m.product = Some("MariaDB".into());
        assert!(m.is_mysql());
        m.deltas.insert("mysql.Com_commit".into(), 7.0);
        assert_eq!(m.mysql_delta("Com_commit"), Some(7.0));
        assert_eq!(m.delta("Com_commit"), None);
        for (t, v) in [
            (-1000, 50.0),
            (0, 3.0),
            (1000, 9.0),
            (2000, 4.0),
            (3000, 60.0),
        ] {
            m.counters.push(CounterSample {
                t_ms: t,
                values: BTreeMap::from([("mysql.Threads_running".to_string(), v)]),
            });
        }
        assert_eq!(m.counter_max("mysql.Threads_running"), Some(9.0));
        assert_eq!(m.counter_max("mysql.Threads_connected"), None);
    }

    #[test]
    fn results_without_the_mysql_fields_still_read() {
        let m = ServerMetrics::default();
        let mut v = serde_json::to_value(&m).unwrap();
        for k in ["product", "wait_times", "nodes", "background"] {
            assert!(v.get(k).is_none(), "{k} is left out when empty");
        }
        v.as_object_mut().unwrap().remove("product");
        let back: ServerMetrics = serde_json::from_value(v).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn average_active_counts_only_the_window() {
        let m = ServerMetrics {
            window_start_ms: 0,
            window_end_ms: 2000,
            activity: vec![
                sample(-500, &[("CPU", 9)]),
                sample(500, &[("CPU", 2)]),
                sample(1500, &[("CPU", 4)]),
            ],
            ..Default::default()
        };
        assert!((m.average_active() - 3.0).abs() < 1e-9);
    }
}
