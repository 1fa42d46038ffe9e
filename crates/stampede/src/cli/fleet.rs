//! The `stampede fleet` and `stampede merge` commands (`--fleet` on `run` is `families::FleetArgs`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::targeting::TargetArgs;

#[derive(Args, Debug)]
pub struct FleetCmdArgs {
    #[command(subcommand)]
    pub action: FleetAction,
}

#[derive(Subcommand, Debug)]
pub enum FleetAction {
    /// Merge the results a fleet stored in the target's stampede_fleet table: one result, with
    /// each process's share and the fleet's commit check.
    Report(FleetReportArgs),
    /// Print a Kubernetes Job (batch/v1, completionMode Indexed) that runs `stampede ARGS...`
    /// as a fleet of N processes: `stampede fleet manifest --workers 10 -- run tpcc -d ...`.
    Manifest(ManifestArgs),
}

#[derive(Args, Debug)]
pub struct FleetReportArgs {
    /// The fleet's name (--fleet NAME of its run).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Also write the merged result as JSON.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the merged result's HTML report.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Then remove the fleet's rows (and the table, when no other fleet is in it).
    #[arg(long = "forget")]
    pub forget: bool,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct ManifestArgs {
    /// Processes of the fleet (the Job's completions and parallelism).
    #[arg(long = "workers", value_name = "N")]
    pub workers: u32,
    /// The fleet's name, also the Job's (default: stampede-fleet).
    #[arg(long = "name", value_name = "NAME", default_value = "stampede-fleet")]
    pub name: String,
    /// The container image each pod runs, with `stampede` on its PATH: built by
    /// `scripts/image.sh` (offline) or the repository's Containerfile, pushed where the cluster
    /// pulls from (the default is the name both give it, for an image loaded into the nodes).
    #[arg(
        long = "image",
        value_name = "IMAGE",
        default_value = "stampede:latest"
    )]
    pub image: String,
    /// The Kubernetes Secret holding the database password (as PGPASSWORD, or MYSQL_PWD for a
    /// MySQL target).
    #[arg(long = "secret", value_name = "NAME", default_value = "stampede-db")]
    pub secret: String,
    /// The key of the password in that Secret.
    #[arg(long = "secret-key", value_name = "KEY", default_value = "password")]
    pub secret_key: String,
    /// Write the manifest to FILE (`-` or absent: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The stampede command each process runs, after `--` (`run tpcc -w 1000 -h db ...`).
    #[arg(value_name = "ARGS", last = true, required = true)]
    pub args: Vec<String>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Results to merge (`stampede run --json FILE` of each process).
    #[arg(value_name = "RUN.json", num_args = 1.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the merged result as JSON.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the merged result's HTML report.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
}
