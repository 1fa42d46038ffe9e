//! stampede's own command line: every flag defined once, here (clap derive), grouped in the help
//! by task (workload, load shape, output, checks, target, embedded server). Options spelled as
//! pgbench and sysbench spell them keep their meanings, but the defaults are stampede's (one set,
//! printed in the run's header: [`crate::plan::Defaults`]). The drop-ins `stampede pgbench` and
//! `stampede sysbench` do not go through clap: they parse their peer's command line exactly
//! (`crate::dropin`) and are reached before [`parse`] is called.
//!
//! `-h` is the host (as in pgbench and psql), so help is `--help` or `-?`.
//!
//! Parsing only builds values; the one place that turns a command line into a run is
//! [`crate::plan`]. A command line clap refuses exits 64 (`console::EXIT_USAGE`).

mod failover;
mod fleet;
mod init;
mod manual;
mod tools;

use clap::{Parser, Subcommand};

use crate::families::RunArgs;

pub use fleet::{FleetAction, FleetCmdArgs, FleetReportArgs, ManifestArgs, MergeArgs};
pub use init::{CheckArgs, InitArgs, LayoutArg, PartitionMethod, ResetArgs};
pub use manual::{CompletionsArgs, ManArgs};
pub use tools::{CompareArgs, ReportArgs, ServerAction, ServerArgs, ServerDirArgs, ServerStopArgs};

#[derive(Parser, Debug)]
#[command(
    name = "stampede",
    version,
    about = "Benchmark OLTP databases (PostgreSQL, MySQL, MariaDB; embedded or remote): pgbench, sysbench, TPC-C, TPC-H, YCSB and more, measured exactly and checked against the server.",
    long_about = "Benchmark OLTP databases (PostgreSQL, MySQL, MariaDB; embedded or remote): pgbench, sysbench, TPC-C, TPC-H, YCSB and more, measured exactly and checked against the server.\n\n\
        Workloads: pgbench's builtins and scripts, sysbench's OLTP family, TPC-C, TPC-H, \
        CH-benCHmark, YCSB A-F, the insert benchmark, a CRUD mix, the cache curve, connection \
        storms, failover probes and replays of captured logs (`stampede run --list`).\n\n\
        With no target (no -h/-p/-U/-d, no PG* variables), stampede starts a private PostgreSQL \
        in a temporary directory, loads it, runs, and removes it; `-d mysql:///DB` without a host \
        does the same with a private MariaDB.\n\n\
        `stampede` alone runs the default benchmark: `stampede run tpcb-like` with the defaults \
        (8 clients, 10 s, prepared statements) on the embedded server.\n\n\
        `stampede pgbench ARGS` and `stampede sysbench ARGS` take pgbench's and sysbench's own \
        command lines, and print what they print.",
    disable_help_flag = true,
    propagate_version = true,
    after_help = "Exit codes: 0 success; 1 failed before measuring; 2 the run ended but clients aborted or a check failed; 3 server status: not running; 64 bad command line; 130 interrupted."
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
    /// Run a workload: `stampede run [WORKLOAD] [options]` (`run --list` lists them).
    Run(RunArgs),
    /// Measure a failover from the clients' side: `stampede failover [TARGET] --fault-at SECONDS
    /// [--fault-cmd CMD]`. Probe writes and reads at -R (100/s), clients reconnecting through the
    /// host list; reports the downtime and audits the acknowledged writes. TARGET is a conninfo
    /// or URL, as -d.
    /// Its help lists its own options only (`failover::view`); it parses into `run`'s options.
    #[command(override_usage = "stampede failover [TARGET] [OPTIONS]")]
    Failover(RunArgs),
    /// Replay a captured workload: `stampede replay CAPTURE [options]` sends the sessions of a
    /// server's log again (PostgreSQL stderr, csvlog or jsonlog; MySQL's general or slow log;
    /// or a replay file) at the captured pace (--speed); `stampede replay parse LOG -o FILE`
    /// parses a log once into a replay file.
    #[command(
        override_usage = "stampede replay CAPTURE [OPTIONS]\n       stampede replay parse LOG -o FILE [OPTIONS]",
        args_conflicts_with_subcommands = true
    )]
    Replay(ReplayArgs),
    /// Create and load a workload's tables: `stampede init WORKLOAD|tpcb|oltp [options]`.
    Init(InitArgs),
    /// Check a loaded database's consistency without running anything (`check tpcb`).
    Check(CheckArgs),
    /// Restore a workload's data to its loaded state: balances to 0, history emptied, vacuumed.
    Reset(ResetArgs),
    /// Manage a persistent embedded PostgreSQL or MariaDB (for repeated runs without reloading):
    /// start, status, stop [--remove], list.
    Server(ServerArgs),
    /// Render the self-contained HTML report of a saved run (`run --json FILE`).
    Report(ReportArgs),
    /// Compare saved runs: each metric side by side, with a verdict that accounts for noise.
    Compare(CompareArgs),
    /// pgbench's command line, output and exit codes, exactly (`stampede pgbench --help`).
    #[command(disable_help_flag = true)]
    Pgbench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// sysbench's command line, output and exit codes, exactly (`stampede sysbench --help`).
    #[command(disable_help_flag = true)]
    Sysbench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Fleets of stampede processes: `fleet report NAME` merges a fleet's stored results,
    /// `fleet manifest --workers N -- run ...` prints a Kubernetes Indexed Job for one.
    Fleet(FleetCmdArgs),
    /// Merge saved results of one workload (each process of a fleet, or any drivers) into one
    /// exact result: histograms bucket for bucket, counts summed, each process's share.
    Merge(MergeArgs),
    /// Print a shell's completion script: `stampede completions bash > /etc/bash_completion.d/stampede`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `stampede man | man -l -`, `stampede man run`, or every page
    /// into a directory with `--dir DIR`.
    Man(ManArgs),
}

/// `stampede replay`: a replay's run, or `parse`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub action: Option<ReplayAction>,
    /// Record the target's workload for SECONDS into a replay file (-o) instead of replaying:
    /// logging is turned on for the window and put back after (PostgreSQL: ALTER SYSTEM and a
    /// reload, the csvlog read back through the server; MySQL: the general log's table).
    #[arg(long = "capture", value_name = "SECONDS", requires = "output",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub capture_s: Option<u64>,
    /// With --capture: the replay file to write.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "capture_s"
    )]
    pub output: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum ReplayAction {
    /// Parse a captured log into a replay file, and print what it holds.
    Parse(crate::families::replay::options::ParseArgs),
}

/// Parse argv (after the drop-ins have been ruled out by `main`). A command line clap refuses
/// exits with [`crate::console::EXIT_USAGE`] (help and version exit 0).
pub fn parse() -> Cli {
    parse_from(std::env::args_os())
}

pub fn parse_from<I, T>(argv: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let argv = ycsb_properties(argv.into_iter().map(Into::into).collect());
    let command = command();
    let matches = match command.clone().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => exit_clap(e),
    };
    if let Some(("failover", m)) = matches.subcommand() {
        if let Err(e) = failover::refuse_run_options(&command, m) {
            exit_clap(e);
        }
    }
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit_clap(e));
    if let (Some(Command::Run(args)), Some(("run", m))) = (&mut cli.command, matches.subcommand()) {
        args.script_order = crate::families::script_order(m);
    }
    cli
}

/// The whole command line as clap sees it, with each subcommand's view applied (failover's
/// help shows its own options): what parsing, `stampede man` and `stampede completions` use, so
/// the three never disagree.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_subcommand("failover", failover::view)
}

/// YCSB's `-p KEY=VALUE` beside libpq's `-p PORT` (`run` and `init`): a `-p` whose value holds
/// `=` is a property, written `--property` for clap. No port holds `=`, so nothing that was a
/// port before changes meaning.
fn ycsb_properties(mut argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is_run_or_init = |a: &std::ffi::OsString| a == "run" || a == "init";
    let Some(sub) = argv.iter().skip(1).position(is_run_or_init) else {
        return argv;
    };
    let mut i = sub + 2;
    while i < argv.len() {
        let a = argv[i].to_string_lossy().into_owned();
        if a == "--" {
            break;
        }
        if a == "-p"
            && argv
                .get(i + 1)
                .is_some_and(|v| v.to_string_lossy().contains('='))
        {
            argv[i] = "--property".into();
            i += 1;
        } else if let Some(v) = a
            .strip_prefix("-p")
            .filter(|v| v.contains('=') && !v.starts_with('='))
        {
            argv[i] = format!("--property={v}").into();
        }
        i += 1;
    }
    argv
}

/// clap's own exit, but with stampede's usage code.
fn exit_clap(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    let code = match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => 0,
        _ => crate::console::EXIT_USAGE,
    };
    let _ = e.print();
    std::process::exit(code);
}

/// `stampede run`'s defaults as a command line, for the bare `stampede` (the same defaults as
/// any `stampede run`: there is one set).
pub fn default_run() -> RunArgs {
    match parse_from(["stampede", "run"]).command {
        Some(Command::Run(a)) => a,
        _ => unreachable!("`stampede run` parses as run"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(v: &[&str]) -> Vec<String> {
        ycsb_properties(v.iter().map(Into::into).collect())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn dash_p_with_key_value_is_a_property_and_with_a_number_the_port() {
        assert_eq!(
            rewritten(&[
                "stampede",
                "run",
                "ycsb-a",
                "-p",
                "recordcount=5",
                "-p",
                "5432"
            ]),
            [
                "stampede",
                "run",
                "ycsb-a",
                "--property",
                "recordcount=5",
                "-p",
                "5432"
            ]
        );
        assert_eq!(
            rewritten(&["stampede", "init", "ycsb", "-pfieldcount=3", "-p5433"]),
            [
                "stampede",
                "init",
                "ycsb",
                "--property=fieldcount=3",
                "-p5433"
            ]
        );
        // Other commands, and anything after `--`, are left alone.
        assert_eq!(
            rewritten(&["stampede", "report", "-p", "a=b"]),
            ["stampede", "report", "-p", "a=b"]
        );
        assert_eq!(
            rewritten(&["stampede", "run", "--", "-p", "a=b"]),
            ["stampede", "run", "--", "-p", "a=b"]
        );
        let Some(Command::Run(a)) =
            parse_from(["stampede", "run", "ycsb-b", "-p", "x=1", "-p", "7"]).command
        else {
            panic!("run parses as run")
        };
        assert_eq!(a.ycsb.property, ["x=1"]);
        assert_eq!(a.target.port.as_deref(), Some("7"));
    }
}
