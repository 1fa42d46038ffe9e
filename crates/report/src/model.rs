//! The result model: one run, as plain data.
//!
//! Owns [`RunResult`] and the records it is made of. Every field the binary fills is plain data
//! (strings, numbers, `Option`, `Vec`, `BTreeMap`); the measurements are `measure`'s own
//! [`Interval`]s, whose histograms serialize losslessly. Must not touch: rendering (see `text`,
//! `csv`), I/O (see `json`), clocks (the caller passes times in).
//!
//! Versioning: `schema_version` is bumped only for incompatible changes (a field removed, renamed
//! or retyped). Additions are optional fields (`#[serde(default, skip_serializing_if = ...)]`)
//! that v1 readers ignore, so the schema does not forbid unknown properties. Names already
//! reserved for such additions:
//! - `server_metrics` (added): what was observed on the server during the run — database load by
//!   wait event, top SQL, pg_stat_* deltas, OS samples ([`measure::ServerMetrics`], filled by
//!   `observe`); absent when the run was not observed (`--no-observe`, older results);
//! - `sysbench` (added): for sysbench's OLTP workloads (`run oltp_*`), what sysbench's own summary
//!   is computed from ([`SysbenchSection`]); absent for other workloads;
//! - `endpoints`: per-endpoint stats when one run drives several servers;
//! - `fleet` (added): the processes of a fleet run and their shares ([`crate::FleetSection`]);
//! - `drivers`: one [`ClientEnvironment`] + [`ConnectionStats`] per driver machine when the
//!   results of several machines are merged (`environment.client` then describes the merger).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use measure::{Interval, ServerMetrics};
use serde::{Deserialize, Serialize};

/// The `schema_version` this crate writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// One run of stampede: what was asked, where, on what, and what was observed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`] when written by this crate.
    pub schema_version: u32,
    /// stampede's version (`CARGO_PKG_VERSION` of the binary).
    pub stampede_version: String,
    /// argv as given, secrets already redacted by the caller.
    pub command_line: Vec<String>,
    /// Wall-clock start of the measured run, RFC 3339 in UTC (`2024-05-01T12:00:00.123Z`); see
    /// [`format_rfc3339_utc`].
    pub started_at: String,
    /// Measured duration in seconds: from the end of the initial connections to the end of the
    /// run (pgbench's `bench_duration`; tps divides by it).
    pub measured_duration_s: f64,
    pub config: RunConfig,
    pub target: TargetInfo,
    pub environment: Environment,
    pub connections: ConnectionStats,
    /// Per-interval series (of length `config.progress_s` when given, else one interval), in
    /// order. Indexes of `txns` follow `config.txn_types`.
    pub intervals: Vec<Interval>,
    /// The whole run: all intervals merged. Every whole-run number is computed from it.
    pub total: Interval,
    /// Post-run checks (commit-count reconciliation, workload invariants).
    pub checks: Vec<Check>,
    /// True when the run was cut short (Ctrl-C); the numbers cover the part that ran.
    pub interrupted: bool,
    /// What the server was doing during the run; `None` when it was not observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<ServerMetrics>,
    /// sysbench's view of an `oltp_*` run; `None` for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysbench: Option<SysbenchSection>,
    /// With several hosts: where the clients went and what each host served; empty with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<Endpoint>,
    /// Set when the clients or their transactions are spread unevenly over the hosts
    /// ([`Endpoint::imbalance`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints_warning: Option<String>,
    /// A fault run's account of the fault (`--fault-at`, `stampede failover`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<crate::failover::FailoverSection>,
    /// With `--read-from`: each standby's replication lag as the primary saw it during the run
    /// (one sample a second); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replication: Vec<measure::replication::ReplicaLag>,
    /// On sharded tables: the routing check's verdict on each distinct statement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routing: Vec<crate::Routing>,
    /// The database's, tables' and shards' sizes, read before the run and after it
    /// (`when`: `before`, `after`; `crate::sizes` renders them); empty when not read (older
    /// results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<measure::sizes::Sizes>,
    /// `--sweep`: every step of the sweep and its knee; the rest of the result is the last
    /// step's. `None` for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::sweep::SweepSection>,
    /// A fleet run (`--fleet`): this process's part (one process), or, merged, every
    /// process's share, the lost ones and the fleet's commit check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::fleet::FleetSection>,
    /// The statement ledger: what the clients sent by kind beside the server's counters
    /// (`crate::ledger`); `None` when the checks did not run (`--no-check`) or could not read
    /// the server's counters at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<crate::ledger::LedgerSection>,
    /// `--cloudwatch`: the target's RDS/Aurora metrics for the run's window, fetched after the
    /// result was saved (`crate::cloudwatch`); `None` when not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloudwatch: Option<crate::cloudwatch::CloudWatchSection>,
    /// The workload families' own sections (iibench's rates and outgrow point, the connection
    /// storm's account, ...), each a field of the JSON's top level under its family's key, kept
    /// as read and rendered by the family's view (`crate::section`).
    #[serde(flatten)]
    pub sections: std::collections::BTreeMap<String, serde_json::Value>,
    /// `--warmup`: the start of the run left out of `total` and `measured_duration_s` (kept in
    /// `intervals`); `None` without one (`crate::warmup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<crate::warmup::Warmup>,
    /// The steady-state verdict from the per-interval series after the warm-up
    /// (`crate::steady`); `None` in results that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::steady::SteadyState>,
    /// `--prewarm`: what was read into the server's cache before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prewarm: Option<crate::warmup::Prewarm>,
}

/// One host of a target with several, as the run used it: each transaction counts for the host
/// whose session ran it. A client stays on its host for the run unless its session moves (a
/// fault run's reconnection after a failover, `-C` landing on another host): what it ran before
/// stays with the host it ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The host as given (a name, an address or a unix-socket directory).
    pub host: String,
    pub port: u16,
    /// Clients that had their session on this host at some time in the run. A client that
    /// moved counts on each host it was on, so after a failover the hosts' clients add up to
    /// more than the run's.
    pub clients: u32,
    /// Committed transactions that ran on this host.
    pub transactions: u64,
    pub tps: f64,
    /// Latency of the transactions that ran on it (`None`: it committed none, or the result
    /// was written before hosts had latencies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<crate::EndpointLatency>,
    /// Transactions that failed on it, by kind.
    #[serde(default)]
    pub failures: crate::EndpointFailures,
    /// Sessions re-established on it during the measured run (`-C`: one per transaction).
    #[serde(default)]
    pub reconnects: u64,
    /// With `--read-from` (a read/write split, where each client holds a writer session and a
    /// reader session): the reader sessions on this host. `clients` then counts the writer
    /// sessions, so a client is counted on each host where it holds a session, once as what
    /// it is there.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub reader_clients: u32,
    /// With `--read-from`: the part of `transactions` that ran on reader sessions (the rest ran
    /// on writer sessions). `transactions` is everything the host ran, what its own commit
    /// counter shows.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub reader_transactions: u64,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl Endpoint {
    /// What is uneven, if anything: all clients on one host of several, or a host whose share
    /// of the transactions is off its share of the clients by more than 20% (relative).
    pub fn imbalance(endpoints: &[Endpoint]) -> Option<String> {
        let clients: u32 = endpoints.iter().map(|e| e.clients).sum();
        let txns: u64 = endpoints.iter().map(|e| e.transactions).sum();
        if endpoints.len() < 2 || clients == 0 {
            return None;
        }
        if let Some(e) = endpoints.iter().find(|e| e.clients == clients) {
            return Some(format!(
                "all {clients} clients are on one host of {} ({}:{}); --spread round-robin \
                 spreads them",
                endpoints.len(),
                e.host,
                e.port
            ));
        }
        if txns == 0 {
            return None;
        }
        let off: Vec<String> = (endpoints.iter())
            .filter(|e| e.clients > 0)
            .filter_map(|e| {
                let c = f64::from(e.clients) / f64::from(clients);
                let t = e.transactions as f64 / txns as f64;
                ((t - c).abs() > 0.2 * c).then(|| {
                    // The host's latency says why (a slow host serves fewer transactions per
                    // client in a closed loop).
                    let latency = e
                        .latency_ms
                        .map_or_else(String::new, |l| format!(" (mean latency {:.3} ms)", l.mean));
                    format!(
                        "{}:{} has {:.0}% of the clients but {:.0}% of the transactions{latency}",
                        e.host,
                        e.port,
                        100.0 * c,
                        100.0 * t
                    )
                })
            })
            .collect();
        (!off.is_empty()).then(|| format!("uneven hosts: {}", off.join("; ")))
    }
}

/// The plain data behind sysbench's summary of an `oltp_*` run (rendered by
/// [`crate::render_sysbench_summary`]). sysbench counts queries per statement sent; stampede's
/// are the workload's statements per transaction times the transactions committed in the window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SysbenchSection {
    /// The sysbench test: `oltp_read_write`, ...
    pub test: String,
    /// sysbench's options as used (name without `--` -> value), defaults included.
    pub options: BTreeMap<String, String>,
    /// Queries per transaction, sysbench's classes: SELECTs.
    pub reads_per_txn: u64,
    /// UPDATE, DELETE, INSERT.
    pub writes_per_txn: u64,
    /// BEGIN, COMMIT.
    pub other_per_txn: u64,
    /// `--warmup-time`: seconds at the start left out of `window`.
    pub warmup_s: f64,
    /// The intervals after the warm-up, merged (the whole run when `warmup_s` is 0); sysbench's
    /// numbers are computed from it.
    pub window: Interval,
    /// `--percentile`: the one sysbench prints (default 95).
    pub percentile: f64,
    /// Connections re-opened during the run (sysbench's "reconnects"; stampede reconnects only
    /// under `-C`).
    pub reconnects: u64,
    /// `bulk_insert`: the queries are the INSERTs recorded per statement in each interval (one
    /// per ~33,000 events), not the per-transaction counts times the transactions.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queries_from_statements: bool,
    /// `bulk_insert`: INSERTs sent after the last event (each client's buffer flushed, sysbench's
    /// `bulk_insert_done`); writes, though neither events nor timed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writes_after_run: u64,
    /// sysbench's "threads fairness": per client (sysbench's threads), the events and the
    /// seconds spent in them, averaged, with their (population) standard deviations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
}

/// sysbench's "Threads fairness" block.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    pub events_avg: f64,
    pub events_stddev: f64,
    pub time_avg_s: f64,
    pub time_stddev_s: f64,
}

impl Fairness {
    /// From each client's (events, seconds).
    pub fn of(per_client: &[(f64, f64)]) -> Fairness {
        let n = per_client.len().max(1) as f64;
        let avg = |f: &dyn Fn(&(f64, f64)) -> f64| per_client.iter().map(f).sum::<f64>() / n;
        let (ea, ta) = (avg(&|c| c.0), avg(&|c| c.1));
        let sd = |f: &dyn Fn(&(f64, f64)) -> f64, m: f64| {
            (per_client.iter().map(|c| (f(c) - m).powi(2)).sum::<f64>() / n).sqrt()
        };
        Fairness {
            events_avg: ea,
            events_stddev: sd(&|c| c.0, ea),
            time_avg_s: ta,
            time_stddev_s: sd(&|c| c.1, ta),
        }
    }
}

impl Fairness {
    /// The fairness of all clients of several runs, each given as (its clients, its fairness):
    /// the pooled mean and the pooled population standard deviation, exact (each part's sum of
    /// squares is `n * (sd^2 + mean^2)`), as if computed from every client at once.
    pub fn pooled(parts: &[(u32, Fairness)]) -> Fairness {
        let n: f64 = parts.iter().map(|(k, _)| f64::from(*k)).sum();
        if n == 0.0 {
            return Fairness::default();
        }
        let pool = |m: &dyn Fn(&Fairness) -> (f64, f64)| {
            let mean = parts
                .iter()
                .map(|(k, f)| f64::from(*k) * m(f).0)
                .sum::<f64>()
                / n;
            let sq = parts
                .iter()
                .map(|(k, f)| {
                    let (a, sd) = m(f);
                    f64::from(*k) * (sd * sd + a * a)
                })
                .sum::<f64>()
                / n;
            (mean, (sq - mean * mean).max(0.0).sqrt())
        };
        let (events_avg, events_stddev) = pool(&|f| (f.events_avg, f.events_stddev));
        let (time_avg_s, time_stddev_s) = pool(&|f| (f.time_avg_s, f.time_stddev_s));
        Fairness {
            events_avg,
            events_stddev,
            time_avg_s,
            time_stddev_s,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SysbenchSection {
    /// Queries (reads, writes, other) in `interval`, sysbench's way: the workload's statements
    /// per transaction times the transactions committed there, or, with
    /// `queries_from_statements`, the statements that succeeded there (all writes).
    pub fn queries(&self, interval: &Interval) -> (u64, u64, u64) {
        if self.queries_from_statements {
            let ok: u64 = interval
                .txns
                .iter()
                .flat_map(|t| &t.statements)
                .map(|s| s.latency.count().saturating_sub(s.failures))
                .sum();
            return (0, ok, 0);
        }
        let n = interval.total().committed();
        (
            n * self.reads_per_txn,
            n * self.writes_per_txn,
            n * self.other_per_txn,
        )
    }
}

/// The run's configuration, as the engine and the workload used it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Workload name (`tpcb`, later `script`, `tpcc`, ...).
    pub workload: String,
    /// Transaction types in the engine's order (indexes into `Interval::txns`).
    pub txn_types: Vec<TxnTypeConfig>,
    /// `-c`
    pub clients: u32,
    /// `-j`
    pub threads: u32,
    /// `-T` in seconds; exactly one of this and `transactions_per_client` is set.
    pub duration_s: Option<u64>,
    /// `-t`
    pub transactions_per_client: Option<u64>,
    /// `-R`: target rate in transactions per second over all clients.
    pub rate_tps: Option<f64>,
    /// `-L` in milliseconds.
    pub latency_limit_ms: Option<f64>,
    /// `-M`: `simple`, `extended` or `prepared` (pgbench's names).
    pub query_mode: String,
    /// `--max-tries`; 0 means unlimited.
    pub max_tries: u32,
    /// `-C`
    pub connect_per_txn: bool,
    /// `-P` in seconds.
    pub progress_s: Option<f64>,
    /// `--random-seed` as used (the chosen seed when it was random).
    pub random_seed: u64,
    /// `-r`
    pub per_statement: bool,
    /// `-s` as found in the database (pgbench's "scaling factor"); 0 for workloads without one
    /// (sysbench's: their size is `sysbench.options`' tables and table-size).
    pub scale: u32,
    /// The scale factor where it is a fraction (TPC-H's 0.01, 0.1): shown for `scale` where
    /// present ([`RunConfig::scale_text`]). Absent in other runs and in results from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_factor: Option<f64>,
    /// pgbench_accounts' partitioning, when partitioned (pgbench prints it): `range` or `hash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_method: Option<String>,
    /// Its number of partitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// pgbench's `--failures-detailed`: the summary splits failures by kind.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failures_detailed: bool,
}

impl RunConfig {
    /// The data's scale as a reader should see it: the fractional scale factor where the
    /// workload has one, else `scale`.
    pub fn scale_text(&self) -> String {
        match self.scale_factor {
            Some(f) => f.to_string(),
            None => self.scale.to_string(),
        }
    }
}

/// A transaction type: a builtin or a script, with its `-b name@weight` weight.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TxnTypeConfig {
    /// As pgbench prints it: `<builtin: TPC-B (sort of)>`.
    pub name: String,
    pub weight: u32,
    /// Statement texts in order, as `-r` prints them (first line of each).
    pub statements: Vec<String>,
}

/// What the run was pointed at.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Connection string with the password and other secrets redacted.
    pub conninfo: String,
    /// Set when stampede started its own server for the run; `None` for an existing server.
    pub embedded: Option<EmbeddedTarget>,
}

/// A server stampede started itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedTarget {
    /// Directory of the PostgreSQL binaries used (`initdb`, `postgres`).
    pub bin_dir: String,
    /// Settings passed to the server (`-c name=value`).
    pub settings: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub server: ServerEnvironment,
    pub client: ClientEnvironment,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerEnvironment {
    /// `server_version` as the server reports it (`15.18 (Debian 15.18-0+deb12u1)`).
    pub version: String,
    /// `server_version_num` (150018), for machines comparing versions.
    #[serde(default)]
    pub version_num: Option<u32>,
    /// Settings that shape OLTP results, name -> value as `SHOW` prints it: shared_buffers,
    /// max_connections, synchronous_commit, fsync, full_page_writes, wal_level,
    /// checkpoint_timeout, max_wal_size.
    pub settings: BTreeMap<String, String>,
}

/// The machine that drove the load.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientEnvironment {
    pub cpus: u32,
    /// CPU model name (`/proc/cpuinfo`).
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// Physical memory in bytes.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// `std::env::consts::OS`, or a longer description.
    pub os: String,
    pub hostname: String,
    pub stampede_version: String,
    /// The process's open-file limit (RLIMIT_NOFILE) as the run used it, and what the run
    /// needed; absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd_limit: Option<FdLimit>,
    /// The client machine's network interfaces that were up (loopback left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetInterface>,
}

/// A network interface of the client's machine and its link speed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInterface {
    pub name: String,
    /// Mb/s as the driver reports it; `None` for a virtual link that reports none.
    pub speed_mbps: Option<u64>,
}

/// RLIMIT_NOFILE of the client process: one descriptor per connection, so it caps the clients.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FdLimit {
    /// The soft limit in effect during the run (after raising it, if it was raised).
    pub soft: u64,
    /// The hard limit; `None` when unlimited.
    pub hard: Option<u64>,
    /// Descriptors the run needed: clients, observer and check connections, the engine threads'
    /// own descriptors, and a margin.
    pub needed: u64,
    /// The soft limit before stampede raised it (towards the hard limit), when it did.
    pub raised_from: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionStats {
    /// Time spent opening the initial connections, in ms (pgbench's "initial connection time";
    /// excluded from tps).
    pub initial_connect_ms: f64,
    /// Clients of the run.
    pub clients: u32,
    /// Under `-C`: total time spent connecting over all transactions, in ms (pgbench's
    /// `conn_total_duration`, printed as "average connection time"). `None` otherwise.
    pub reconnect_total_ms: Option<f64>,
    /// Clients that stopped for good before the end (pgbench: "client N aborted ...").
    pub aborted: Vec<AbortedClient>,
    /// How the initial connections were opened (count, rate, concurrency, retries); absent in
    /// results written before it was recorded. `initial_connect_ms` is their total time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<ConnectionSetup>,
}

/// The initial connections: how many, how fast, and how hard the server's queue pushed back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionSetup {
    /// Connections opened before the measured run (0 under `-C`).
    pub opened: u64,
    /// `opened` divided by `initial_connect_ms` (per second): the connection setup rate,
    /// including each workload's `on_connect` (preparing statements in prepared mode).
    pub rate_per_s: f64,
    /// Most connection attempts in flight at once (all engine threads).
    pub concurrency: u32,
    /// Attempts retried because the server's listen queue was full (EAGAIN on a unix socket).
    pub retries: u64,
    /// How the measured run did its I/O: `io_uring (2 of 2 engine threads)`, or `epoll (why)`
    /// (absent from results that predate it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_io: Option<String>,
    /// Threads mode: transactions given up in flight when the run ended (`-T`'s end or Ctrl-C)
    /// because their client was blocked waiting for the server; counted neither committed nor
    /// failed, each may have committed on the server. Absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortedClient {
    pub client_id: u32,
    /// Redacted message.
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Short name, e.g. `commit count reconciliation`, `tpcb balance invariant`.
    pub name: String,
    pub status: CheckStatus,
    /// What was compared, with the numbers; why it was skipped.
    pub detail: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    Skipped,
    /// The check could not be done: the server stopped answering, restarted or ended the
    /// checking session after the run, a step timed out or was interrupted. The run's numbers
    /// are kept, but unverified: the run exits as with a failed check.
    Unverified,
}

impl CheckStatus {
    /// A commit count's surplus of `surplus` transactions while autovacuum or autoanalyze ran
    /// `runs` times: each run commits a few transactions of its own in the database's
    /// `xact_commit`, which cannot be told apart from the clients', so a surplus of at most 4
    /// per run is inconclusive (skipped), not failed. A deficit always fails. Used by a single
    /// run's commit check and by a fleet's.
    pub fn of_commit_surplus(surplus: i128, runs: i64) -> CheckStatus {
        if runs > 0 && surplus > 0 && surplus <= 4 * i128::from(runs) {
            CheckStatus::Skipped
        } else {
            CheckStatus::Failed
        }
    }

    /// The words [`CheckStatus::of_commit_surplus`]'s inconclusive verdict adds.
    pub fn maintenance_words(runs: i64) -> String {
        format!(
            "autovacuum/autoanalyze ran {runs} times during the run and the server counts \
             their transactions too"
        )
    }

    pub fn is_skipped(self) -> bool {
        self == CheckStatus::Skipped
    }

    /// A check that failed or could not be done: the run's numbers need a look (exit 2).
    pub fn untrusted(self) -> bool {
        matches!(self, CheckStatus::Failed | CheckStatus::Unverified)
    }

    /// As the text summary prints it.
    pub fn label(self) -> &'static str {
        match self {
            CheckStatus::Passed => "PASSED",
            CheckStatus::Failed => "FAILED",
            CheckStatus::Skipped => "SKIPPED",
            CheckStatus::Unverified => "NOT VERIFIED",
        }
    }
}

impl RunResult {
    /// The endpoints' warning as every output shows it: none on a fault run. Its clients move
    /// by design (to the host that takes writes after the fault), so how they ended up spread
    /// says nothing about `--spread`, and advice to spread them would be wrong; results written
    /// before fault runs left it out still carry one.
    pub fn endpoints_advice(&self) -> Option<&str> {
        match &self.failover {
            Some(_) => None,
            None => self.endpoints_warning.as_deref(),
        }
    }

    /// The server's product for headings: what the observer saw, else what the target and
    /// version say (`mysql://` targets are MySQL or MariaDB; results from before MySQL targets
    /// are PostgreSQL's).
    pub fn server_product(&self) -> &str {
        if let Some(p) = self
            .server_metrics
            .as_ref()
            .and_then(|m| m.product.as_deref())
        {
            return p;
        }
        if self.target.conninfo.starts_with("mysql://") {
            if self.environment.server.version.contains("MariaDB") {
                "MariaDB"
            } else {
                "MySQL"
            }
        } else {
            "PostgreSQL"
        }
    }

    /// Committed transactions per second of measured time (pgbench 15+: initial connection time
    /// excluded). 0 when nothing was measured.
    pub fn tps(&self) -> f64 {
        if self.measured_duration_s > 0.0 {
            self.total.total().committed() as f64 / self.measured_duration_s
        } else {
            0.0
        }
    }
}

/// `t` as RFC 3339 in UTC with millisecond precision: `2024-05-01T12:00:00.123Z`. Times before
/// the Unix epoch are clamped to it.
pub fn format_rfc3339_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil, inverted).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_formats_known_instants() {
        let at = |s: u64, ms: u64| UNIX_EPOCH + Duration::from_millis(s * 1000 + ms);
        assert_eq!(format_rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (leap day of a century leap year) 23:59:59.999
        assert_eq!(
            format_rfc3339_utc(at(951_868_799, 999)),
            "2000-02-29T23:59:59.999Z"
        );
        // 2024-12-31T00:00:00Z, then the next day rolls the year.
        assert_eq!(
            format_rfc3339_utc(at(1_735_603_200, 0)),
            "2024-12-31T00:00:00.000Z"
        );
        assert_eq!(
            format_rfc3339_utc(at(1_735_689_600, 5)),
            "2025-01-01T00:00:00.005Z"
        );
        assert_eq!(
            format_rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn check_status_serializes_lowercase() {
        assert_eq!(
            serde_json::to_string(&CheckStatus::Skipped).unwrap(),
            "\"skipped\""
        );
        assert_eq!(CheckStatus::Failed.label(), "FAILED");
    }

    fn ep(clients: u32, transactions: u64) -> Endpoint {
        Endpoint {
            host: "h".into(),
            port: 1,
            clients,
            transactions,
            tps: 0.0,
            ..Default::default()
        }
    }

    #[test]
    fn imbalance_is_all_clients_on_one_host_or_a_share_off_by_more_than_a_fifth() {
        assert_eq!(Endpoint::imbalance(&[ep(3, 300)]), None);
        assert_eq!(
            Endpoint::imbalance(&[ep(3, 300), ep(3, 280), ep(3, 320)]),
            None
        );
        let w = Endpoint::imbalance(&[ep(6, 600), ep(0, 0), ep(0, 0)]).unwrap();
        assert!(w.starts_with("all 6 clients are on one host of 3"), "{w}");
        // A third of the clients each, one host serving a sixth of the transactions.
        let w = Endpoint::imbalance(&[ep(2, 500), ep(2, 500), ep(2, 200)]).unwrap();
        assert!(
            w.contains("33% of the clients but 17% of the transactions"),
            "{w}"
        );
    }
}
