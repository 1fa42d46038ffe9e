//! The plan of the insert benchmark (`stampede run iibench`), decided before any I/O; its
//! engine spec is that of every statement-per-transaction workload
//! ([`crate::families::planning::statement_spec`]).
//!
//! iibench's clients: `-c` insert, `--query-clients` more query; `-R` is in inserts (of
//! `--rows-per-commit` rows) per second, and the engine's rate paces every client, so it is
//! refused with query clients (the original paces only its inserts: `--inserts_per_second`).

use crate::families::iibench::Job as IibenchJob;
use anyhow::Result;
use engine::RunSpec;

use crate::console::Failure;
use crate::families::planning::statement_spec;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

pub(crate) fn plan_iibench(a: &RunArgs) -> Result<(IibenchJob, RunSpec)> {
    let inserters = a.clients.unwrap_or(1);
    if inserters < 1 {
        bail!("-c/--client (the inserting clients) must be at least 1");
    }
    let defaults = crate::families::iibench::txn::Options::default();
    let query_clients = a.iibench.query_clients.unwrap_or(0);
    if query_clients > 0 && a.rate.is_some() {
        return Err(Failure::usage(
            "-R paces every client, and iibench's query clients run unpaced",
            "drop -R, or --query-clients (the original paces only its inserts)",
        ));
    }
    let opts = crate::families::iibench::txn::Options {
        rows_per_commit: a
            .iibench
            .rows_per_commit
            .unwrap_or(defaults.rows_per_commit),
        rows_per_query: a.iibench.rows_per_query.unwrap_or(defaults.rows_per_query),
        query_clients,
        ..defaults
    };
    if opts.rows_per_commit == 0 {
        bail!("--rows-per-commit must be at least 1");
    }
    // 5 parameters a row: both protocols carry at most 65,535 in one statement.
    if opts.rows_per_commit > 13_000 {
        bail!(
            "--rows-per-commit {} is over 13000 (5 parameters a row, at most 65535 in a statement)",
            opts.rows_per_commit
        );
    }
    if opts.rows_per_query == 0 {
        bail!("--rows-per-query must be at least 1");
    }
    let clients = inserters
        .checked_add(query_clients)
        .ok_or_else(|| Failure::usage("too many clients", ""))?;
    let spec = statement_spec(a, "iibench", clients, vec![1, 1, 1, 1])?;
    Ok((IibenchJob { opts }, spec))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan_iibench(a)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
