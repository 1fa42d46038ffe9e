//! One module per subcommand. Each validates all of its input before any I/O, then does its
//! work, and returns the process exit code.

mod compare;
mod init;
pub(crate) mod oltp;
mod report;
mod result;
mod run;
mod server;

use anyhow::Result;

use crate::cli::{Cli, Command, RunArgs, TargetArgs};

pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Init(args)) => init::init(args),
        Some(Command::Reset(args)) => init::reset(args),
        Some(Command::Server(args)) => server::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Compare(args)) => compare::run(args),
        None => run::run(default_benchmark()),
    }
}

/// `stampede` alone: tpcb-like at scale 10, 8 clients on 2 threads, 10 s, progress every 2 s, on
/// the embedded server (or the PG* target of the environment, as any run).
fn default_benchmark() -> RunArgs {
    use clap::Parser;
    let cli = Cli::parse_from([
        "stampede", "run", "-c", "8", "-j", "2", "-T", "10", "-P", "2", "-M", "prepared",
    ]);
    match cli.command {
        Some(Command::Run(args)) => RunArgs {
            target: TargetArgs { ..args.target },
            ..args
        },
        _ => unreachable!("the default command line parses as `run`"),
    }
}

/// A runtime for the setup path (loading, checks). The measured run uses the engine's own threads.
pub fn setup_runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}
