//! `stampede completions SHELL` and `stampede man`: the arguments. Both are generated from the
//! same clap definition that parses the command line (`cli::command`), so a flag, its help and
//! its completion cannot drift apart.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// One subcommand's page (`stampede man run` is stampede-run(1)); default the main page.
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "dir")]
    pub subcommand: Option<String>,
    /// Write every page (stampede.1, stampede-run.1, ...) into DIR instead of printing one.
    #[arg(long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
