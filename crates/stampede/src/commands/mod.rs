//! One module per subcommand. Each validates all of its input before any I/O, then does its
//! work, and returns the process exit code (`console`'s table).

mod check;
mod compare;
mod failover;
mod fleet;
pub(crate) mod init;
mod init_fleet;
mod init_observed;
mod init_own;
mod manual;
mod replay;
mod report;
mod run;
mod server;
mod sharded;
mod tpch;
mod ycsb;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Failover(args)) => failover::run(args),
        Some(Command::Replay(args)) => replay::run(args),
        Some(Command::Init(args)) => init::init(args),
        Some(Command::Check(args)) => check::check(args),
        Some(Command::Reset(args)) => init::reset(args),
        Some(Command::Server(args)) => server::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Compare(args)) => compare::run(args),
        Some(Command::Fleet(args)) => fleet::run(args),
        Some(Command::Merge(args)) => fleet::merge(args),
        Some(Command::Completions(args)) => manual::completions(args),
        Some(Command::Man(args)) => manual::man(args),
        Some(Command::Sysbench { args }) => crate::dropin::sysbench::main(args),
        Some(Command::Pgbench { args }) => crate::dropin::pgbench::main(args),
        // `stampede` alone: `stampede run` with its defaults (there is one set).
        None => run::run(crate::cli::default_run()),
    }
}
