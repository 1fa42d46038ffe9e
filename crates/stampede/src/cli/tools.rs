//! `stampede server`, `report` and `compare`: the commands that do not run a workload.

use std::path::PathBuf;

use clap::{Args, Subcommand};

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
    /// Stop it; the data directory is kept unless --remove is given.
    Stop(ServerStopArgs),
    /// List the servers stampede started or kept on this machine: running or stopped, their
    /// data directory, its size, and how to connect.
    List,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    #[command(flatten)]
    pub dir: ServerDirArgs,
    /// Also remove the server's data directory (only one stampede made), running or not.
    #[arg(long = "remove")]
    pub remove: bool,
}

#[derive(Args, Debug)]
pub struct ServerDirArgs {
    /// Data directory (default: $XDG_DATA_HOME/stampede/server or ~/.local/share/stampede/server;
    /// /var/lib/stampede/server as root).
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[arg(long = "pg-bindir", value_name = "DIR")]
    pub pg_bindir: Option<PathBuf>,
    /// A MariaDB server (Debian's mariadb-server) instead of PostgreSQL.
    #[arg(long = "mysql", conflicts_with = "pg_bindir")]
    pub mysql: bool,
    /// A server setting NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// With start, a new data directory: a streaming standby of the PostgreSQL at HOST:PORT
    /// (pg_basebackup -R), e.g. of another `server start --set listen_addresses=127.0.0.1`.
    #[arg(
        long = "standby-of",
        value_name = "HOST:PORT",
        conflicts_with = "mysql"
    )]
    pub standby_of: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run result written by `stampede run --json FILE`.
    #[arg(value_name = "RUN.json")]
    pub input: PathBuf,
    /// Where to write the HTML report (`-` or absent: standard output, unless a CSV is asked
    /// for alone).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the client's per-interval series as CSV (a row per interval and transaction
    /// type).
    #[arg(long = "csv", value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also write every server counter and host figure the observer read as CSV (a row per
    /// counter per sample: t_s, source, counter, value, per_s).
    #[arg(long = "counters-csv", value_name = "FILE")]
    pub counters_csv: Option<PathBuf>,
    /// Also write a sweep's steps as CSV: a row per step, its figures, the family's and a
    /// column per server counter (change and per second). The run must be a sweep.
    #[arg(long = "sweep-csv", value_name = "FILE")]
    pub sweep_csv: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more run results (`stampede run --json FILE`); the first is the baseline. One
    /// replay's result with --against-log.
    #[arg(value_name = "RUN.json", num_args = 1.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Compare one replay (`stampede replay --json FILE`) per statement fingerprint against
    /// the durations and errors its captured log recorded.
    #[arg(long = "against-log")]
    pub against_log: bool,
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
