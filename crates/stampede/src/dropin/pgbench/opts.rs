//! The value pgbench's command line becomes ([`Outcome`]: initialize, run, or print and exit),
//! with every option in pgbench's meaning and with pgbench's defaults, and what the parser asks of
//! the outside world while it runs ([`Host`]). Parsed by [`super::args::parse`].

use sut::QueryMode;
use workload::tpcb::Builtin;

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// `-i`: create and load the tables (`init_steps`, in order).
    Init(Box<Options>),
    /// Benchmarking mode.
    Run(Box<Options>),
    /// Print this and exit with this status (help, version, lists, every error).
    Exit(Exit),
}

/// Output of a command line that ends before any connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exit {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// pgbench's `partition_method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionMethod {
    None,
    Range,
    Hash,
}

/// One script to run, in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptSpec {
    pub source: ScriptSource,
    /// `@W` (0 allowed; the total must not be 0).
    pub weight: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptSource {
    /// `-b NAME`, `-S`, `-N`, or the default `tpcb-like`.
    Builtin(Builtin),
    /// `-f FILE` (`-` is standard input).
    File(String),
}

/// Where DBNAME came from: pgbench's own rule when neither `-d` nor a positional is given is
/// `PGDATABASE`, else `PGUSER`, else the operating-system user name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbNameFrom {
    Option,
    Positional,
    PgDatabase,
    PgUser,
    OsUser,
}

/// Every option, with pgbench's meaning and pgbench's defaults. Host, port and user are what the
/// command line says; libpq (not pgbench) falls back on `PGHOST`, `PGPORT`, `PGUSER` for them.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `basename(argv[0])`, pgbench's `progname` (the prefix of its messages).
    pub progname: String,
    pub host: Option<String>,
    pub port: Option<String>,
    pub username: Option<String>,
    /// `-d`, else the first non-option argument, else see [`DbNameFrom`]. libpq reads it as a
    /// connection string when it looks like one.
    pub dbname: String,
    pub dbname_from: DbNameFrom,
    /// `--debug`: pgbench's log level goes from info to debug.
    pub debug: bool,
    /// `-s`: the scale to load (`-i`), or to report/use as `:scale` (default 1).
    pub scale: i32,
    pub scale_given: bool,
    /// `-n`: no vacuum (before a run; `-i`: the `v` steps are dropped from `init_steps`).
    pub no_vacuum: bool,

    // -- initialization (-i) --
    /// The steps to run, `-I` (default `dtgvp`) with `-n` and `--foreign-keys` applied: `v`
    /// replaced by a space, `f` appended when missing. Spaces do nothing.
    pub init_steps: String,
    pub fillfactor: i32,
    pub quiet: bool,
    pub unlogged_tables: bool,
    pub tablespace: Option<String>,
    pub index_tablespace: Option<String>,
    /// `--partitions` (0: not partitioned).
    pub partitions: i32,
    /// Range when `--partitions` > 0 without `--partition-method`.
    pub partition_method: PartitionMethod,
    pub foreign_keys: bool,

    // -- benchmarking --
    pub scripts: Vec<ScriptSpec>,
    /// A builtin is among the scripts (pgbench then reads the scale from `pgbench_branches`).
    pub internal_script_used: bool,
    pub clients: i32,
    /// `-j` as given.
    pub jobs: i32,
    /// Threads pgbench starts: `-j`, at most one per client.
    pub threads: i32,
    /// `-C`
    pub connect: bool,
    /// `-D NAME=VALUE`, in order of first definition; a later one replaces the value.
    pub defines: Vec<(String, String)>,
    /// `-l`
    pub log: bool,
    /// `-L` in microseconds (0: none).
    pub latency_limit_us: i64,
    pub query_mode: QueryMode,
    /// `-P` seconds (0: none).
    pub progress: i32,
    /// `-r`
    pub report_per_command: bool,
    /// `-R` transactions per second (0: unthrottled).
    pub rate: f64,
    /// `-t` (10 when neither `-t` nor `-T`); 0 when `-T` is given.
    pub transactions: i32,
    /// `-T` seconds (0: none).
    pub duration: i32,
    /// `-v`
    pub vacuum_all: bool,
    /// `--sampling-rate` (0: every transaction is logged).
    pub sample_rate: f64,
    /// `--aggregate-interval` seconds (0: none).
    pub aggregate_interval: i32,
    pub progress_timestamp: bool,
    pub log_prefix: Option<String>,
    /// The seed pgbench uses: `--random-seed`, else `PGBENCH_RANDOM_SEED`, else the clock.
    pub random_seed: u64,
    pub failures_detailed: bool,
    /// `--max-tries` (default 1; 0: unlimited).
    pub max_tries: u32,
    pub verbose_errors: bool,
    pub exit_on_abort: bool,

    /// What pgbench printed on standard error while parsing (`setting random seed to N`): print
    /// it first.
    pub stderr: String,
}

impl Options {
    pub(super) fn new(progname: String) -> Options {
        Options {
            progname,
            host: None,
            port: None,
            username: None,
            dbname: String::new(),
            dbname_from: DbNameFrom::Option,
            debug: false,
            scale: 1,
            scale_given: false,
            no_vacuum: false,
            init_steps: String::new(),
            fillfactor: 100,
            quiet: false,
            unlogged_tables: false,
            tablespace: None,
            index_tablespace: None,
            partitions: 0,
            partition_method: PartitionMethod::None,
            foreign_keys: false,
            scripts: Vec::new(),
            internal_script_used: false,
            clients: 1,
            jobs: 1,
            threads: 1,
            connect: false,
            defines: Vec::new(),
            log: false,
            latency_limit_us: 0,
            query_mode: QueryMode::Simple,
            progress: 0,
            report_per_command: false,
            rate: 0.0,
            transactions: 0,
            duration: 0,
            vacuum_all: false,
            sample_rate: 0.0,
            aggregate_interval: 0,
            progress_timestamp: false,
            log_prefix: None,
            random_seed: 0,
            failures_detailed: false,
            max_tries: 1,
            verbose_errors: false,
            exit_on_abort: false,
            stderr: String::new(),
        }
    }
}

/// A message as pgbench's logging library prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// `progname: error: text`
    Error(String),
    /// `progname: detail: text`
    Detail(String),
    /// `progname: hint: text`
    Hint(String),
    /// `progname: text` (information, and `get_user_name_or_exit`'s message)
    Info(String),
    /// The text as it is (a script line, a caret, getopt's message).
    Raw(String),
}

impl Msg {
    pub(super) fn render(&self, progname: &str, out: &mut String) {
        let (label, text) = match self {
            Msg::Error(t) => ("error: ", t),
            Msg::Detail(t) => ("detail: ", t),
            Msg::Hint(t) => ("hint: ", t),
            Msg::Info(t) => ("", t),
            Msg::Raw(t) => {
                out.push_str(t);
                out.push('\n');
                return;
            }
        };
        out.push_str(progname);
        out.push_str(": ");
        out.push_str(label);
        out.push_str(text);
        out.push('\n');
    }
}

/// What the option loop asks of the outside world, at the moment pgbench does it.
pub trait Host {
    /// An environment variable (`PGBENCH_RANDOM_SEED`, `POSIXLY_CORRECT`, `PGDATABASE`, `PGUSER`).
    fn env(&self, name: &str) -> Option<String>;
    /// `-f FILE@W`: read and compile the script now (pgbench's `process_file`: "could not open
    /// file", syntax errors with their caret, "empty command list", the `\if` checks). Errors are
    /// the messages to print before exiting with status 1.
    fn file_script(&mut self, path: &str, weight: u32) -> Result<(), Vec<Msg>> {
        let _ = (path, weight);
        Ok(())
    }
    /// `-c N`: pgbench makes sure N + 3 files can be open here (raising `RLIMIT_NOFILE`).
    fn clients(&mut self, n: i32) -> Result<(), Vec<Msg>> {
        let _ = n;
        Ok(())
    }
    /// After the option loop and the default script, before anything else is checked: pgbench's
    /// `postprocess_sql_command` of every script, which fails for `-M extended|prepared` when a
    /// statement has more than 255 variables.
    fn scripts_done(&mut self, mode: QueryMode, scripts: &[ScriptSpec]) -> Result<(), Vec<Msg>> {
        let _ = (mode, scripts);
        Ok(())
    }
    /// A seed from the clock (`--random-seed=time`, and the default).
    fn time_seed(&mut self) -> u64;
    /// A seed from a strong random source (`--random-seed=rand`); None when there is none.
    fn strong_seed(&mut self) -> Option<u64>;
    /// The operating-system user name (the last default of DBNAME), or pgbench's message.
    fn os_user(&mut self) -> Result<String, String>;
}
