//! `stampede run [WORKLOAD] [options]`: the options, grouped by task. Options whose default is
//! stampede's own (clients, threads, duration, protocol, progress) are `Option`s here: the plan
//! applies the defaults, so it knows which were given and the run's header can say which were
//! not.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{SysbenchArgs, TargetArgs};

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
const SWEEPS: &str = "Sweeps and connection storms";

#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// The workload to run (`--list` lists them; default tpcb-like). A name that is no workload
    /// is taken as the database, with a note (`-d DBNAME` says it without one).
    #[arg(value_name = "WORKLOAD", help_heading = WORKLOAD)]
    pub workload: Option<String>,
    /// The database, as pgbench's positional DBNAME (prefer -d).
    #[arg(value_name = "DBNAME", help_heading = WORKLOAD)]
    pub positional_dbname: Option<String>,
    /// List the workloads and exit (`--list=markdown`: as the README's table).
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
    pub sharding: super::ShardingArgs,

    /// sysbench's options, for sysbench's workloads.
    #[command(flatten)]
    pub sysbench: SysbenchArgs,

    /// TPC-C's options, for `run tpcc`.
    #[command(flatten)]
    pub tpcc: TpccArgs,

    /// The insert benchmark's options, for `run iibench`.
    #[command(flatten)]
    pub iibench: IibenchArgs,

    /// The CRUD mix's options, for `run crud` (its tables: --tables, --table-size).
    #[command(flatten)]
    pub crud: CrudArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    /// YCSB's options, for `run ycsb-a` ... `ycsb-f`.
    #[command(flatten)]
    pub ycsb: YcsbArgs,
    /// The cache curve's options, for `run cache-curve`.
    #[command(flatten)]
    pub cache_curve: CacheCurveArgs,
    /// Repeat the run over a parameter, one step per value, into one result with the knee
    /// (where throughput stops rising and p99 climbs): `clients=8,16,32`, `clients=1..64`
    /// (doubling), `rate=500,1000,2000` (-R per step), `set:NAME=v1,v2` (a server setting, on
    /// the embedded server). Each step runs for -T/-t.
    #[arg(long = "sweep", value_name = "PARAM=VALUES", help_heading = SWEEPS)]
    pub sweep: Option<String>,
    /// Seconds at the start of each sweep step left out of its figures [a fifth of -T, at most
    /// 5; 0 for a run of -t transactions].
    #[arg(long = "warmup", value_name = "SECONDS", requires = "sweep", help_heading = SWEEPS)]
    pub warmup: Option<f64>,
    /// connection-storm: idle connections opened per second, up to -c [500].
    #[arg(long = "connect-rate", value_name = "N", help_heading = SWEEPS)]
    pub connect_rate: Option<f64>,
    /// connection-storm: clients running select-only while the idle connections open [2].
    #[arg(long = "busy-clients", value_name = "N", help_heading = SWEEPS)]
    pub busy_clients: Option<u32>,
    /// `--fleet`: this process is one of several running one benchmark.
    #[command(flatten)]
    pub fleet: super::FleetArgs,
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
pub(super) fn script_order(m: &clap::ArgMatches) -> Vec<ScriptArg> {
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

const TPCC: &str = "TPC-C (run tpcc)";

/// `stampede run tpcc`'s options.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct TpccArgs {
    /// Warehouses to run on (default: all the database holds; on the embedded server 1,
    /// loaded first).
    #[arg(short = 'w', long = "warehouses", value_name = "N", help_heading = TPCC)]
    pub warehouses: Option<u32>,
    /// Run by the book (TPC-C clause 5.2.5): keying and think times, 10 clients (terminals)
    /// per warehouse unless -c says otherwise; efficiency against 12.86 tpmC per warehouse.
    #[arg(long = "spec", help_heading = TPCC)]
    pub spec: bool,
}

impl TpccArgs {
    /// The options given, for a run that is not TPC-C's.
    pub fn given(&self) -> Vec<&'static str> {
        let mut g = Vec::new();
        if self.warehouses.is_some() {
            g.push("-w/--warehouses");
        }
        if self.spec {
            g.push("--spec");
        }
        g
    }
}

const YCSB: &str = "YCSB (run ycsb-a ... ycsb-f)";

/// `stampede run ycsb-X`'s options.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct YcsbArgs {
    /// A YCSB property over the core workload's file, as YCSB takes it: `-p recordcount=N`,
    /// fieldcount, fieldlength, requestdistribution=zipfian|uniform|latest,
    /// insertorder=hashed|ordered, readproportion (and update, insert, scan,
    /// readmodifywrite), minscanlength, maxscanlength, scanlengthdistribution,
    /// zipfianconstant, readallfields, writeallfields, zeropadding, operationcount. `-p` with
    /// a KEY=VALUE is a property; with a number, the port.
    #[arg(long = "property", value_name = "KEY=VALUE", help_heading = YCSB)]
    pub property: Vec<String>,
}

const CACHE_CURVE: &str = "Cache curve (run cache-curve)";

/// `stampede run cache-curve`'s options (`-c` and `-T` are the point reads' clients and seconds
/// per size).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct CacheCurveArgs {
    /// Table sizes to measure, smallest first (`8MB,16MB,32MB`); default: an eighth of the
    /// server's cache to four times it.
    #[arg(long = "sizes", value_name = "SIZE,...", help_heading = CACHE_CURVE)]
    pub sizes: Option<String>,
    /// Measured scans per size, after one warm-up scan [3].
    #[arg(long = "scans", value_name = "NUM", help_heading = CACHE_CURVE)]
    pub scans: Option<u32>,
}

impl CacheCurveArgs {
    /// The options given, for a run that is not a cache curve.
    pub fn given(&self) -> Vec<&'static str> {
        let mut g = Vec::new();
        if self.sizes.is_some() {
            g.push("--sizes");
        }
        if self.scans.is_some() {
            g.push("--scans");
        }
        g
    }
}

const IIBENCH: &str = "Insert benchmark (run iibench)";

/// `stampede run iibench`'s options (iibench.py's names in brackets).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct IibenchArgs {
    /// Rows per INSERT, each its own commit [--rows_per_commit; 1000]. With -R, the rate is in
    /// these inserts per second (rows/s = rate x rows per commit).
    #[arg(long = "rows-per-commit", value_name = "N", help_heading = IIBENCH)]
    pub rows_per_commit: Option<u32>,
    /// Clients that run the original's queries over the secondary indexes, unpaced, besides
    /// the -c inserting clients [--query_threads; 0].
    #[arg(long = "query-clients", value_name = "N", help_heading = IIBENCH)]
    pub query_clients: Option<u32>,
    /// Rows each query fetches [--rows_per_query; 10].
    #[arg(long = "rows-per-query", value_name = "N", help_heading = IIBENCH)]
    pub rows_per_query: Option<u32>,
}

impl IibenchArgs {
    /// The options given, for a run that is not iibench's.
    pub fn given(&self) -> Vec<&'static str> {
        let mut g = Vec::new();
        if self.rows_per_commit.is_some() {
            g.push("--rows-per-commit");
        }
        if self.query_clients.is_some() {
            g.push("--query-clients");
        }
        if self.rows_per_query.is_some() {
            g.push("--rows-per-query");
        }
        g
    }
}

const CRUD: &str = "CRUD mix (run crud)";

/// `stampede run crud`'s options; its tables are --tables and --table-size.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct CrudArgs {
    /// The operations' weights: point, index, range, in, insert, batch-insert, update, delete
    /// [point=40,index=20,range=10,in=10,insert=5,batch-insert=5,update=5,delete=5].
    #[arg(long = "mix", value_name = "OP=W,...", help_heading = CRUD)]
    pub mix: Option<String>,
    /// Rows of each batched operation: IN-list reads, batch inserts, updates, deletes [10].
    #[arg(long = "batch", value_name = "N", help_heading = CRUD)]
    pub batch: Option<u32>,
}

impl CrudArgs {
    /// The options given, for a run that is not the CRUD mix's.
    pub fn given(&self) -> Vec<&'static str> {
        let mut g = Vec::new();
        if self.mix.is_some() {
            g.push("--mix");
        }
        if self.batch.is_some() {
            g.push("--batch");
        }
        g
    }
}
