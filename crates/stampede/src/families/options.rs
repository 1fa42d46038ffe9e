//! `stampede run [WORKLOAD] [options]`: the options, grouped by task. Those every family shares
//! are defined here; each family's own group is defined in its folder (`<family>/options.rs`)
//! and flattened into [`RunArgs`], so `cli` (above) parses them all and a plan step (beside them)
//! reads them without importing the command line's module back. Options whose default is
//! stampede's own (clients, threads, duration, protocol, progress) are `Option`s here: the plan
//! applies the defaults, so it knows which were given and the run's header can say which were
//! not.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::targeting::TargetArgs;

/// `--io`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum IoArg {
    #[default]
    Auto,
    Epoll,
    Uring,
    Threads,
}

impl IoArg {
    pub fn mode(self) -> engine::IoMode {
        match self {
            IoArg::Auto => engine::IoMode::Auto,
            IoArg::Epoll => engine::IoMode::Epoll,
            IoArg::Uring => engine::IoMode::Uring,
            IoArg::Threads => engine::IoMode::Threads,
        }
    }
}

/// `--spread`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum SpreadArg {
    #[default]
    RoundRobin,
    Random,
    First,
}

impl SpreadArg {
    pub fn spread(self) -> engine::Spread {
        match self {
            SpreadArg::RoundRobin => engine::Spread::RoundRobin,
            SpreadArg::Random => engine::Spread::Random,
            SpreadArg::First => engine::Spread::First,
        }
    }
}

/// `--read-from`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReadFromArg {
    Standby,
    Any,
    Primary,
}

impl ReadFromArg {
    pub fn read_from(self) -> engine::ReadFrom {
        match self {
            ReadFromArg::Standby => engine::ReadFrom::Standby,
            ReadFromArg::Any => engine::ReadFrom::Any,
            ReadFromArg::Primary => engine::ReadFrom::Primary,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    Simple,
    Extended,
    Prepared,
}

impl Protocol {
    pub fn mode(self) -> sut::QueryMode {
        match self {
            Protocol::Simple => sut::QueryMode::Simple,
            Protocol::Extended => sut::QueryMode::Extended,
            Protocol::Prepared => sut::QueryMode::Prepared,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }
}

const WORKLOAD: &str = "Workload";
const SHAPE: &str = "Load shape";
const OUTPUT: &str = "Output";
const CHECKS: &str = "Checks and server watching";
const FAULTS: &str = "Faults";
pub(super) const SWEEPS: &str = "Sweeps and connection storms";

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// The workload to run (`--list` lists them; default tpcb-like). A name that is no workload
    /// is taken as the database, with a note (`-d DBNAME` says it without one).
    #[arg(value_name = "WORKLOAD", help_heading = WORKLOAD)]
    pub workload: Option<String>,
    /// The database, as pgbench's positional DBNAME (prefer -d).
    #[arg(value_name = "DBNAME", help_heading = WORKLOAD)]
    pub positional_dbname: Option<String>,
    /// List the workloads and exit (`--list=markdown`: as the book's table).
    #[arg(
        long = "list",
        value_name = "text|markdown",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "text",
        value_parser = ["text", "markdown"],
        help_heading = WORKLOAD
    )]
    pub list: Option<String>,
    /// Add pgbench's builtin NAME weighted at W (default 1); `-b list` lists them.
    #[arg(short = 'b', long = "builtin", value_name = "NAME[@W]", help_heading = WORKLOAD)]
    pub builtin: Vec<String>,
    /// Same as `-b simple-update`.
    #[arg(short = 'N', long = "skip-some-updates", help_heading = WORKLOAD)]
    pub skip_some_updates: bool,
    /// Same as `-b select-only`.
    #[arg(short = 'S', long = "select-only", help_heading = WORKLOAD)]
    pub select_only: bool,
    /// Add a script FILENAME in pgbench's language weighted at W (default 1); `-` reads
    /// standard input. Mixes with -b in the order given.
    #[arg(short = 'f', long = "file", value_name = "FILENAME[@W]", help_heading = WORKLOAD)]
    pub file: Vec<String>,
    /// Define variable NAME for the scripts (`:NAME`); overrides :scale, :client_id,
    /// :random_seed and :default_seed.
    #[arg(short = 'D', long = "define", value_name = "VARNAME=VALUE", help_heading = WORKLOAD)]
    pub define: Vec<String>,
    /// -b/-f/-N/-S in command-line order (filled by the parser; empty: builtins, then -N, -S,
    /// then files).
    #[arg(skip)]
    pub script_order: Vec<ScriptArg>,
    /// Scale factor of pgbench's tables: read from pgbench_branches when they exist (a
    /// different -s is a warning); what the embedded server loads (default 10).
    #[arg(short = 's', long = "scale", value_name = "NUM", help_heading = WORKLOAD)]
    pub scale: Option<i64>,
    /// Show a builtin script and exit (`--show-script list` lists them).
    #[arg(long = "show-script", value_name = "NAME", help_heading = WORKLOAD)]
    pub show_script: Option<String>,

    /// Number of concurrent database clients [8] (sysbench's --threads).
    #[arg(
        short = 'c',
        long = "client",
        visible_aliases = ["clients", "threads"],
        value_name = "NUM",
        help_heading = SHAPE
    )]
    pub clients: Option<u32>,
    /// Engine threads (event loops) driving the clients [one per CPU, at most one per client].
    #[arg(short = 'j', long = "jobs", value_name = "NUM", help_heading = SHAPE)]
    pub jobs: Option<u32>,
    /// Duration of the measured run in seconds [10] (connecting is not counted).
    #[arg(
        short = 'T',
        long = "time",
        value_name = "NUM",
        conflicts_with = "transactions",
        help_heading = SHAPE
    )]
    pub time: Option<u64>,
    /// Number of transactions each client runs, instead of a duration.
    #[arg(short = 't', long = "transactions", value_name = "NUM", help_heading = SHAPE)]
    pub transactions: Option<u64>,
    /// Target rate in transactions per second (Poisson schedule; latency from the scheduled
    /// start).
    #[arg(
        short = 'R',
        long = "rate",
        value_name = "NUM",
        allow_negative_numbers = true,
        help_heading = SHAPE
    )]
    pub rate: Option<f64>,
    /// With -R: skip transactions already NUM ms late, count committed ones slower than NUM ms.
    #[arg(
        short = 'L',
        long = "latency-limit",
        value_name = "NUM",
        requires = "rate",
        help_heading = SHAPE
    )]
    pub latency_limit: Option<f64>,
    /// Protocol for submitting queries [prepared].
    #[arg(short = 'M', long = "protocol", value_enum, help_heading = SHAPE)]
    pub protocol: Option<Protocol>,
    /// Maximum tries per transaction for serialization failures and deadlocks (0: unlimited,
    /// needs -T) [1].
    #[arg(long = "max-tries", value_name = "NUM", help_heading = SHAPE)]
    pub max_tries: Option<u32>,
    /// Open a new connection for every transaction.
    #[arg(short = 'C', long = "connect", help_heading = SHAPE)]
    pub connect: bool,
    /// Random seed: an integer, `time` (default) or `rand`.
    #[arg(long = "random-seed", value_name = "SEED", help_heading = SHAPE)]
    pub random_seed: Option<String>,
    /// Do not vacuum (and truncate pgbench_history) before a pgbench workload's run.
    #[arg(short = 'n', long = "no-vacuum", help_heading = SHAPE)]
    pub no_vacuum: bool,
    /// Vacuum all four pgbench tables before the run.
    #[arg(
        short = 'v',
        long = "vacuum-all",
        conflicts_with = "no_vacuum",
        help_heading = SHAPE
    )]
    pub vacuum_all: bool,
    /// Stop the whole run as soon as a client aborts.
    #[arg(long = "exit-on-abort", help_heading = SHAPE)]
    pub exit_on_abort: bool,
    /// The measured run's socket I/O: auto (the default) gives each client its own thread
    /// with a blocking socket when there are few clients per core, else io_uring where the
    /// kernel allows it, else epoll (the result says which and why); epoll always; io_uring or
    /// an error; threads (one OS thread per client, a blocking socket each).
    #[arg(
        long = "io",
        value_enum,
        default_value = "auto",
        value_name = "auto|epoll|uring|threads",
        help_heading = SHAPE
    )]
    pub io: IoArg,

    /// With several hosts (-h a,b,c): where clients connect first: round-robin (client i on
    /// host i mod n, the default), random, or first (libpq's order, as pgbench); each then
    /// tries the other hosts as libpq does.
    #[arg(
        long = "spread",
        value_enum,
        default_value = "round-robin",
        value_name = "round-robin|random|first",
        help_heading = SHAPE
    )]
    pub spread: SpreadArg,

    /// A fault run: inject a fault SECONDS into the measured run with --fault-cmd, or mark the
    /// time of one triggered elsewhere. Clients then reconnect after errors instead of aborting,
    /// and the result has a failover section (downtime, errors by kind, reconnects).
    #[arg(long = "fault-at", value_name = "SECONDS", help_heading = FAULTS)]
    pub fault_at: Option<f64>,
    /// The shell command that injects the fault at --fault-at (`pg_ctl promote -D DIR`,
    /// `pg_autoctl perform failover`, `kill -9 PID`, ...), run with `sh -c`; its output goes to
    /// standard error.
    #[arg(
        long = "fault-cmd",
        value_name = "CMD",
        requires = "fault_at",
        help_heading = FAULTS
    )]
    pub fault_cmd: Option<String>,
    /// The failover probe: leave its table (stampede_probe) after the audit, for a look at the
    /// rows (it is replaced by the next probe run).
    #[arg(long = "keep-probe", help_heading = FAULTS)]
    pub keep_probe: bool,
    /// With several PostgreSQL hosts: split reads from writes. Each client keeps a writer
    /// session on the host that accepts writes and a reader placed by --spread over the hosts
    /// that qualify: standby (hosts in hot standby), any (every host) or primary (the writer);
    /// the workload's read-only transactions (select-only, oltp_read_only,
    /// oltp_point_select, TPC-C's Order-Status and Stock-Level, scripts of plain SELECTs) run
    /// on the reader, the rest on the writer. Default: no split.
    #[arg(
        long = "read-from",
        value_enum,
        value_name = "standby|any|primary",
        help_heading = SHAPE
    )]
    pub read_from: Option<ReadFromArg>,

    /// Show a progress line every NUM seconds [5] (sysbench's --report-interval); 0: none.
    #[arg(
        short = 'P',
        long = "progress",
        visible_alias = "report-interval",
        value_name = "NUM",
        allow_negative_numbers = true,
        help_heading = OUTPUT
    )]
    pub progress: Option<f64>,
    /// Report latencies and failures per statement.
    #[arg(short = 'r', long = "report-per-command", help_heading = OUTPUT)]
    pub report_per_command: bool,
    /// Write each transaction (or, with --aggregate-interval, each interval) to a log file per
    /// thread: PREFIX.PID, PREFIX.PID.THREAD (pgbench's format).
    #[arg(short = 'l', long = "log", help_heading = OUTPUT)]
    pub log: bool,
    /// Prefix of the log files (default: pgbench_log).
    #[arg(
        long = "log-prefix",
        value_name = "PREFIX",
        requires = "log",
        help_heading = OUTPUT
    )]
    pub log_prefix: Option<String>,
    /// Log one line of aggregates per NUM seconds instead of one line per transaction.
    #[arg(
        long = "aggregate-interval",
        value_name = "NUM",
        requires = "log",
        help_heading = OUTPUT
    )]
    pub aggregate_interval: Option<u64>,
    /// Log only this fraction of the transactions (e.g. 0.01 for 1%).
    #[arg(
        long = "sampling-rate",
        value_name = "NUM",
        requires = "log",
        help_heading = OUTPUT
    )]
    pub sampling_rate: Option<f64>,
    /// Write the full result (configuration, environment, interval series, histograms) as JSON.
    #[arg(long = "json", value_name = "FILE", help_heading = OUTPUT)]
    pub json: Option<PathBuf>,
    /// Also write a self-contained HTML report (charts, top SQL, wait events) to FILE.
    #[arg(long = "html", value_name = "FILE", help_heading = OUTPUT)]
    pub html: Option<PathBuf>,
    /// Accepted for pgbench compatibility: failures are always reported by kind.
    #[arg(long = "failures-detailed", help_heading = OUTPUT)]
    pub failures_detailed: bool,
    /// Accepted for pgbench compatibility: every aborted client's error is reported.
    #[arg(long = "verbose-errors", help_heading = OUTPUT)]
    pub verbose_errors: bool,

    /// Skip the checks after the run (the workload's invariants, the commit count).
    #[arg(long = "no-check", help_heading = CHECKS)]
    pub no_check: bool,
    /// Do not watch the server during the run (wait events, pg_stat_statements, counters, OS).
    #[arg(long = "no-observe", help_heading = CHECKS)]
    pub no_observe: bool,
    /// Give each check after the run this many seconds, 120 by default (a server that stops
    /// answering makes the check "not verified" then, and the measured result is kept).
    #[arg(long = "check-timeout", value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..), help_heading = CHECKS)]
    pub check_timeout: Option<u64>,

    /// The scripts already read and compiled (`stampede pgbench` reads each `-f` file when
    /// pgbench does, in its option loop; standard input cannot be read twice).
    #[arg(skip)]
    pub compiled: Option<workload::script::ScriptSet>,
    /// pgbench's `--progress-timestamp`.
    #[arg(skip)]
    pub progress_timestamp: bool,
    /// pgbench's `--debug`.
    #[arg(skip)]
    pub debug: bool,

    /// Sharded targets: the shard-key workload and the routing check.
    #[command(flatten)]
    pub sharding: ShardingArgs,

    /// sysbench's options, for sysbench's workloads.
    #[command(flatten)]
    pub sysbench: super::sysbench::options::Options,

    /// TPC-C's options, for `run tpcc`.
    #[command(flatten)]
    pub tpcc: super::tpcc::options::Options,

    /// The insert benchmark's options, for `run iibench`.
    #[command(flatten)]
    pub iibench: super::iibench::options::Options,

    /// The CRUD mix's options, for `run crud` (its tables: --tables, --table-size).
    #[command(flatten)]
    pub crud: super::crud::options::Options,

    #[command(flatten)]
    pub target: TargetArgs,

    /// YCSB's options, for `run ycsb-a` ... `ycsb-f`.
    #[command(flatten)]
    pub ycsb: super::ycsb::options::Options,
    /// The cache curve's options, for `run cache-curve`.
    #[command(flatten)]
    pub cache_curve: super::cache_curve::options::Options,
    /// Repeat the run over a parameter, one step per value, into one result with the knee
    /// (where throughput stops rising and p99 climbs): `clients=8,16,32`, `clients=1..64`
    /// (doubling), `rate=500,1000,2000` (-R per step), `scale=1,10,100` (pgbench's tables
    /// loaded again at each scale), `set:NAME=v1,v2` (a server setting, on the embedded
    /// server). Each step runs for -T/-t. Twice for a matrix: `--sweep scale=1,10 --sweep
    /// clients=1..16` runs every client count at each scale (the tables loaded once per scale).
    #[arg(long = "sweep", value_name = "PARAM=VALUES", help_heading = SWEEPS)]
    pub sweep: Vec<String>,
    /// Seconds at the start of the run left out of its figures (summary, JSON, HTML headline,
    /// compare), kept in the per-interval series and marked in the HTML charts; the checks
    /// still count the whole run [0; a sweep's steps: a fifth of -T, at most 5; 0 for -t].
    #[arg(long = "warmup", value_name = "SECONDS", help_heading = SHAPE)]
    pub warmup: Option<f64>,
    /// Before the run, read each of the workload's tables and indexes into the server's cache
    /// (PostgreSQL: pg_prewarm where the extension is installed, else scans; MySQL/MariaDB:
    /// sysbench's prewarm) and say what was read and how long it took.
    #[arg(long = "prewarm", help_heading = SHAPE)]
    pub prewarm: bool,
    /// A replay's options (`stampede replay`).
    #[command(flatten)]
    pub replay: super::replay::options::Options,
    /// CH-benCHmark's options, for `run ch`.
    #[command(flatten)]
    pub ch: super::ch::options::Options,
    /// TPC-H's options, for `run tpch` and `run tpch-qN`.
    #[command(flatten)]
    pub tpch: super::tpch::options::Options,
    /// The connection storm's options, for `run connection-storm`.
    #[command(flatten)]
    pub storm: super::storm::options::Options,
    /// `--fleet`: this process is one of several running one benchmark.
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// `--cloudwatch`: the target's RDS/Aurora metrics for the run's window.
    #[command(flatten)]
    pub cloud: crate::cloud::CloudArgs,
}

/// Which of a family's own options were given, from (given, its flag) pairs in the order its
/// help lists them: what another family's run names when it refuses them
/// (`workloads::Family::refuse_options`).
pub(crate) fn given(flags: &[(bool, &'static str)]) -> Vec<&'static str> {
    flags.iter().filter(|(g, _)| *g).map(|(_, f)| *f).collect()
}

/// A script of the run as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptArg {
    /// `-b NAME[@W]` (`-N` and `-S` as `simple-update`, `select-only`).
    Builtin(String),
    /// `-f FILE[@W]`.
    File(String),
}

/// -b, -f, -N and -S in the order given (pgbench numbers scripts in command-line order:
/// `-b tpcb-like@1 -f my.sql@3`).
pub(crate) fn script_order(m: &clap::ArgMatches) -> Vec<ScriptArg> {
    let mut all: Vec<(usize, ScriptArg)> = Vec::new();
    for (id, file) in [("builtin", false), ("file", true)] {
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<String>(id)) {
            for (i, v) in idx.zip(vals) {
                let arg = if file {
                    ScriptArg::File(v.clone())
                } else {
                    ScriptArg::Builtin(v.clone())
                };
                all.push((i, arg));
            }
        }
    }
    for (id, name) in [
        ("skip_some_updates", "simple-update"),
        ("select_only", "select-only"),
    ] {
        if m.get_flag(id) {
            if let Some(i) = m.index_of(id) {
                all.push((i, ScriptArg::Builtin(name.into())));
            }
        }
    }
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, a)| a).collect()
}

/// The run options of sharded targets: the shard-key workload's cross-shard share and the
/// routing check's verdict (`commands::routing`).
const SHARDING: &str = "Sharded targets";

#[derive(Args, Debug, Default, Clone)]
pub struct ShardingArgs {
    /// tpcb-sharded: percent of transactions whose account is in another branch (usually on
    /// another shard; TPC-B's remote accounts are 15). Default 0: every transaction on one shard.
    #[arg(long = "cross-shard", value_name = "PCT", help_heading = SHARDING)]
    pub cross_shard: Option<u32>,
    /// Refuse to run when the routing check finds a statement that is not single-shard (it
    /// EXPLAINs each distinct statement before the run; it always runs on sharded tables).
    #[arg(long = "require-single-shard", help_heading = SHARDING)]
    pub require_single_shard: bool,
}

const FLEET: &str = "Fleet (several stampede processes, one run)";

/// `--fleet NAME --fleet-size N [--fleet-index I]`.
#[derive(Args, Debug, Default, Clone)]
pub struct FleetArgs {
    /// Run as one of N processes (on any machines) that meet in the target database's
    /// stampede_fleet table, start together on the server's clock and store their results there
    /// (`stampede fleet report NAME` merges them). -c is this process's share of the clients,
    /// --rate the fleet's (each runs its share).
    #[arg(long = "fleet", value_name = "NAME", help_heading = FLEET)]
    pub fleet: Option<String>,
    /// The number of processes in the fleet.
    #[arg(
        long = "fleet-size",
        value_name = "N",
        requires = "fleet",
        help_heading = FLEET
    )]
    pub fleet_size: Option<u32>,
    /// This process's index, 0 to N-1 (default: JOB_COMPLETION_INDEX, as a Kubernetes Indexed
    /// Job sets it, else the next free index). Process 0 starts the fleet.
    #[arg(
        long = "fleet-index",
        value_name = "I",
        requires = "fleet",
        help_heading = FLEET
    )]
    pub fleet_index: Option<u32>,
    /// Seconds to wait for all processes to join [60].
    #[arg(
        long = "fleet-timeout",
        value_name = "SECONDS",
        requires = "fleet",
        help_heading = FLEET
    )]
    pub fleet_timeout: Option<u64>,
}
