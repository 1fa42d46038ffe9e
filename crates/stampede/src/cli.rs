//! The command line: every flag defined once, here (clap derive), with pgbench's letters and long
//! names and the same meanings, so a pgbench command line runs after changing the program name.
//! `-h` is the host (as in pgbench), so help is `--help` or `-?`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "stampede",
    version,
    about = "Benchmark OLTP databases: pgbench's TPC-B on an embedded or remote PostgreSQL, measured exactly.",
    long_about = "Benchmark OLTP databases: pgbench's TPC-B on an embedded or remote PostgreSQL, measured exactly.\n\n\
        With no target (no -h/-p/-U/-d, no DBNAME, no PG* variables), stampede starts a private PostgreSQL \
        in a temporary directory, loads it, runs, and removes it.\n\n\
        `stampede` alone runs the default benchmark: tpcb-like, scale 10, 8 clients, 2 threads, 10 s, on the embedded server.",
    disable_help_flag = true,
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Print help (`-?` as in pgbench).
    #[arg(short = '?', long = "help", action = clap::ArgAction::Help, global = true)]
    pub help: Option<bool>,
}

// Built once per process: the size of `RunArgs` does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a benchmark (pgbench's benchmarking mode).
    Run(RunArgs),
    /// Create and load a workload's tables (pgbench -i).
    Init(InitArgs),
    /// Restore a workload's data to its loaded state: balances to 0, history emptied, vacuumed.
    Reset(ResetArgs),
    /// Manage a persistent embedded PostgreSQL (for repeated runs without reloading).
    Server(ServerArgs),
    /// Render the self-contained HTML report of a saved run (`run --json FILE`).
    Report(ReportArgs),
    /// Compare saved runs: each metric side by side, with a verdict that accounts for noise.
    Compare(CompareArgs),
}

/// Where the database is. Nothing given (and no PG* variables) means the embedded server.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Database server host or socket directory (PGHOST).
    #[arg(short = 'h', long = "host", value_name = "HOSTNAME")]
    pub host: Option<String>,
    /// Database server port (PGPORT).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    pub port: Option<String>,
    /// Connect as this user (PGUSER).
    #[arg(short = 'U', long = "username", value_name = "USERNAME")]
    pub username: Option<String>,
    /// Database name, `key=value` connection string or postgresql:// URL (PGDATABASE).
    #[arg(short = 'd', long = "dbname", value_name = "DBNAME")]
    pub dbname: Option<String>,
    /// Database name or connection string, as pgbench's positional DBNAME. For `run`, a sysbench
    /// test name (`oltp_read_write`, ... `bulk_insert`) here is the workload instead (then use
    /// -d for the database).
    #[arg(value_name = "DBNAME")]
    pub positional_dbname: Option<String>,
    /// Embedded server: the PostgreSQL bin directory to use (default: pg_config --bindir, the
    /// newest /usr/lib/postgresql/*/bin, then PATH).
    #[arg(long = "pg-bindir", value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,
    /// Embedded server: leave it running afterwards and print how to reach and stop it.
    #[arg(long = "keep-server")]
    pub keep_server: bool,
    /// Embedded server: a server setting NAME=VALUE on top of stampede's defaults (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// Use the embedded server even if PG* environment variables are set.
    // Not in conflict with the positional in clap: for `run` it may be a sysbench test name
    // (`run --embedded oltp_read_write`); a DBNAME there is refused by [`parse`] instead.
    #[arg(long = "embedded", conflicts_with_all = ["host", "port", "username", "dbname"])]
    pub embedded: bool,
}

/// `--io`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum IoArg {
    Auto,
    Epoll,
    Uring,
}

impl IoArg {
    pub fn mode(self) -> engine::IoMode {
        match self {
            IoArg::Auto => engine::IoMode::Auto,
            IoArg::Epoll => engine::IoMode::Epoll,
            IoArg::Uring => engine::IoMode::Uring,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    Simple,
    Extended,
    Prepared,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Add a builtin script NAME weighted at W (default 1); `-b list` lists them.
    #[arg(short = 'b', long = "builtin", value_name = "NAME[@W]")]
    pub builtin: Vec<String>,
    /// Same as `-b simple-update`.
    #[arg(short = 'N', long = "skip-some-updates")]
    pub skip_some_updates: bool,
    /// Same as `-b select-only`.
    #[arg(short = 'S', long = "select-only")]
    pub select_only: bool,
    /// Add a script FILENAME (pgbench's script language) weighted at W (default 1); `-` reads
    /// standard input. Mixes with -b in the order given.
    #[arg(short = 'f', long = "file", value_name = "FILENAME[@W]")]
    pub file: Vec<String>,
    /// Define variable NAME for the scripts (`:NAME`); overrides :scale, :client_id,
    /// :random_seed and :default_seed.
    #[arg(short = 'D', long = "define", value_name = "VARNAME=VALUE")]
    pub define: Vec<String>,
    /// -b/-f/-N/-S in command-line order (filled by [`parse`]; empty: builtins, then -N, -S,
    /// then files).
    #[arg(skip)]
    pub script_order: Vec<ScriptArg>,

    /// Number of concurrent database clients (sysbench's --threads).
    #[arg(
        short = 'c',
        long = "client",
        visible_aliases = ["clients", "threads"],
        value_name = "NUM",
        default_value_t = 1
    )]
    pub clients: u32,
    /// Number of threads (event loops) driving the clients.
    #[arg(short = 'j', long = "jobs", value_name = "NUM", default_value_t = 1)]
    pub jobs: u32,
    /// Duration of the measured run in seconds (connecting is not counted).
    #[arg(
        short = 'T',
        long = "time",
        value_name = "NUM",
        conflicts_with = "transactions"
    )]
    pub time: Option<u64>,
    /// Number of transactions each client runs (default 10 when -T is not given).
    #[arg(short = 't', long = "transactions", value_name = "NUM")]
    pub transactions: Option<u64>,
    /// Show a progress report every NUM seconds (sysbench's --report-interval).
    #[arg(
        short = 'P',
        long = "progress",
        visible_alias = "report-interval",
        value_name = "NUM"
    )]
    pub progress: Option<f64>,
    /// Target rate in transactions per second (Poisson schedule; latency from the scheduled start).
    #[arg(
        short = 'R',
        long = "rate",
        value_name = "NUM",
        allow_negative_numbers = true
    )]
    pub rate: Option<f64>,
    /// With -R: skip transactions already NUM ms late, count committed ones slower than NUM ms.
    #[arg(
        short = 'L',
        long = "latency-limit",
        value_name = "NUM",
        requires = "rate"
    )]
    pub latency_limit: Option<f64>,
    /// Protocol for submitting queries.
    #[arg(short = 'M', long = "protocol", value_enum, default_value = "simple")]
    pub protocol: Protocol,
    /// Maximum tries per transaction for serialization failures and deadlocks (0: unlimited, needs -T).
    #[arg(long = "max-tries", value_name = "NUM", default_value_t = 1)]
    pub max_tries: u32,
    /// Report latencies and failures per statement.
    #[arg(short = 'r', long = "report-per-command")]
    pub report_per_command: bool,
    /// Random seed: an integer, `time` (default) or `rand`.
    #[arg(long = "random-seed", value_name = "SEED")]
    pub random_seed: Option<String>,
    /// Do not vacuum (and truncate pgbench_history) before the run.
    #[arg(short = 'n', long = "no-vacuum")]
    pub no_vacuum: bool,
    /// Vacuum all four tables before the run.
    #[arg(short = 'v', long = "vacuum-all", conflicts_with = "no_vacuum")]
    pub vacuum_all: bool,
    /// Open a new connection for every transaction.
    #[arg(short = 'C', long = "connect")]
    pub connect: bool,
    /// Scale factor: must match the data (detected from pgbench_branches); for the embedded
    /// server, the scale to load (default 10).
    #[arg(short = 's', long = "scale", value_name = "NUM")]
    pub scale: Option<i64>,
    /// Accepted for pgbench compatibility: failures are always reported by kind.
    #[arg(long = "failures-detailed")]
    pub failures_detailed: bool,
    /// Accepted for pgbench compatibility: every aborted client's error is reported.
    #[arg(long = "verbose-errors")]
    pub verbose_errors: bool,
    /// Stop the run as soon as a client aborts (exit code 2).
    #[arg(long = "exit-on-abort")]
    pub exit_on_abort: bool,
    /// The measured run's socket I/O: io_uring where the kernel allows it, else epoll (auto;
    /// the result says which and why); epoll always; io_uring or an error.
    #[arg(
        long = "io",
        value_enum,
        default_value = "auto",
        value_name = "auto|epoll|uring"
    )]
    pub io: IoArg,
    /// Write each transaction (or, with --aggregate-interval, each interval) to a log file per
    /// thread: PREFIX.PID, PREFIX.PID.THREAD (pgbench's format).
    #[arg(short = 'l', long = "log")]
    pub log: bool,
    /// Prefix of the log files (default: pgbench_log).
    #[arg(long = "log-prefix", value_name = "PREFIX", requires = "log")]
    pub log_prefix: Option<String>,
    /// Log one line of aggregates per NUM seconds instead of one line per transaction.
    #[arg(long = "aggregate-interval", value_name = "NUM", requires = "log")]
    pub aggregate_interval: Option<u64>,
    /// Log only this fraction of the transactions (e.g. 0.01 for 1%).
    #[arg(long = "sampling-rate", value_name = "NUM", requires = "log")]
    pub sampling_rate: Option<f64>,
    /// Show a builtin script and exit (`--show-script list` or an unknown name lists them).
    #[arg(long = "show-script", value_name = "NAME")]
    pub show_script: Option<String>,
    /// Write the full result (configuration, environment, interval series, histograms) as JSON.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Skip the checks after the run (TPC-B invariant, commit count); they scan pgbench_accounts.
    #[arg(long = "no-check")]
    pub no_check: bool,
    /// Do not watch the server during the run (wait events, pg_stat_statements, counters, OS).
    #[arg(long = "no-observe")]
    pub no_observe: bool,
    /// Also write a self-contained HTML report (charts, top SQL, wait events) to FILE.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// sysbench's options, for `run oltp_*` (see commands/oltp.rs).
    #[command(flatten)]
    pub sysbench: crate::commands::oltp::SysbenchArgs,

    #[command(flatten)]
    pub target: TargetArgs,
}

/// A script of the run as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptArg {
    /// `-b NAME[@W]` (`-N` and `-S` as `simple-update`, `select-only`).
    Builtin(String),
    /// `-f FILE[@W]`.
    File(String),
}

/// Parse argv, keeping the relative order of -b, -f, -N and -S (pgbench numbers scripts in
/// command-line order: `-b tpcb-like@1 -f my.sql@3`).
pub fn parse() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Some(Command::Run(args)), Some(("run", m))) = (&mut cli.command, matches.subcommand()) {
        args.script_order = script_order(m);
    }
    if let Err(msg) = check(&cli) {
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, msg)
            .exit();
    }
    cli
}

/// Conflicts clap's derive cannot express: `--embedded` with a DBNAME positional (allowed with a
/// sysbench test name, which takes that place on `run`), and the sysbench-only options of `init`
/// with a workload other than oltp.
pub fn check(cli: &Cli) -> Result<(), String> {
    let (target, sysbench_test) = match &cli.command {
        Some(Command::Run(a)) => (
            &a.target,
            crate::commands::oltp::is_sysbench_test(a.target.positional_dbname.as_deref()),
        ),
        Some(Command::Init(a)) => {
            let mut given = a.pgsql.given();
            if a.bulk_insert {
                given.push("--bulk-insert");
            }
            if a.workload != InitWorkload::Oltp && !given.is_empty() {
                return Err(format!("{} only apply to `init oltp`", given.join(", ")));
            }
            (&a.target, false)
        }
        Some(Command::Reset(a)) => (&a.target, false),
        _ => return Ok(()),
    };
    if target.embedded && target.positional_dbname.is_some() && !sysbench_test {
        return Err(
            "the argument '--embedded' cannot be used with '[DBNAME]': the embedded server has \
             its own database"
                .into(),
        );
    }
    Ok(())
}

fn script_order(m: &clap::ArgMatches) -> Vec<ScriptArg> {
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

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitWorkload {
    Tpcb,
    /// sysbench's `sbtestN` tables (`sysbench oltp_common prepare`).
    Oltp,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PartitionMethod {
    Range,
    Hash,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The workload whose tables to create.
    #[arg(value_enum)]
    pub workload: InitWorkload,
    /// Scale factor (100,000 accounts per unit).
    #[arg(short = 's', long = "scale", value_name = "NUM", default_value_t = 1)]
    pub scale: i64,
    /// Fill factor of the tables (10..100).
    #[arg(
        short = 'F',
        long = "fillfactor",
        value_name = "NUM",
        default_value_t = 100
    )]
    pub fillfactor: u32,
    /// Partition pgbench_accounts into NUM parts.
    #[arg(long = "partitions", value_name = "NUM", default_value_t = 0)]
    pub partitions: u32,
    /// Partitioning method (with --partitions).
    #[arg(long = "partition-method", value_enum, default_value = "range")]
    pub partition_method: PartitionMethod,
    /// Create the tables unlogged.
    #[arg(long = "unlogged-tables", visible_alias = "unlogged")]
    pub unlogged: bool,
    /// Create foreign keys between the tables.
    #[arg(long = "foreign-keys")]
    pub foreign_keys: bool,
    /// Generate the data on the server (INSERT ... SELECT generate_series) instead of COPY.
    #[arg(long = "server-side")]
    pub server_side: bool,
    /// Do not VACUUM ANALYZE after loading.
    #[arg(short = 'n', long = "no-vacuum")]
    pub no_vacuum: bool,
    /// Loader connections (default: 1, or one per partition up to the CPU count).
    #[arg(short = 'j', long = "jobs", value_name = "NUM")]
    pub jobs: Option<u32>,
    /// No progress bar.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `init oltp`: number of sbtest tables (sysbench's --tables).
    #[arg(long = "tables", value_name = "N", default_value_t = 1)]
    pub tables: u32,
    /// `init oltp`: rows per table (sysbench's --table-size).
    #[arg(long = "table-size", value_name = "N", default_value_t = 10_000)]
    pub table_size: u64,
    /// `init oltp`: create sysbench bulk_insert's tables instead (sbtest1..N, id and k, empty;
    /// N = --tables = the run's --threads).
    #[arg(long = "bulk-insert")]
    pub bulk_insert: bool,
    /// `init oltp`: sysbench's pgsql connection options.
    #[command(flatten)]
    pub pgsql: crate::commands::oltp::PgsqlArgs,

    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct ResetArgs {
    #[arg(value_enum)]
    pub workload: InitWorkload,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct ServerArgs {
    #[command(subcommand)]
    pub action: ServerAction,
}

#[derive(Subcommand, Debug)]
pub enum ServerAction {
    /// Initialise (if needed) and start a persistent embedded server.
    Start(ServerDirArgs),
    /// Say whether it runs, and how to connect.
    Status(ServerDirArgs),
    /// Stop it (the data directory is kept; remove it yourself to start afresh).
    Stop(ServerDirArgs),
}

#[derive(Args, Debug)]
pub struct ServerDirArgs {
    /// Data directory (default: $XDG_DATA_HOME/stampede/server or ~/.local/share/stampede/server).
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[arg(long = "pg-bindir", value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,
    /// A server setting NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run result written by `stampede run --json FILE`.
    #[arg(value_name = "RUN.json")]
    pub input: PathBuf,
    /// Where to write the HTML report (`-` or absent: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more run results (`stampede run --json FILE`); the first is the baseline.
    #[arg(value_name = "RUN.json", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Also write the comparison as a self-contained HTML page, the runs overlaid.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Compare runs of different workloads anyway.
    #[arg(long = "force")]
    pub force: bool,
    /// Smallest change, in percent, that counts as a difference (default 5).
    #[arg(long = "min-effect", value_name = "PERCENT", default_value_t = 5.0)]
    pub min_effect: f64,
    /// Seconds at the start of each run left out of the verdicts as ramp-up (default 1).
    #[arg(long = "warmup", value_name = "SECONDS", default_value_t = 1.0)]
    pub warmup: f64,
    /// Seed of the bootstrap (the verdicts are deterministic for a seed).
    #[arg(long = "seed", value_name = "NUM", default_value_t = 1)]
    pub seed: u64,
}
