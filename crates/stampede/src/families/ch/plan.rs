//! The plan of a CH-benCHmark run (`stampede run ch`), decided before any I/O: TPC-C's plan
//! (`tpcc::plan`: `-w`, `--spec`, `-c` its clients, its retries) with `--analytic-clients`
//! more clients that send the analytic queries. The engine runs them all: clients
//! `0..c` are TPC-C's terminals, `c..c+a` the analytic clients (`super::workload`).
//!
//! Refused: `-R` (the engine's rate paces every client, and an analytic query paced as a
//! transaction is no longer the load the benchmark defines; `--spec` paces TPC-C by the book),
//! `--fleet` (the section's analytic figures are not merged across processes yet), and TPC-H's
//! options but `--query-timeout`.

use anyhow::Result;
use engine::RunSpec;

use crate::console::Failure;
use crate::families::tpcc::plan::{self as tpcc_plan, TpccJob};
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

/// What a CH-benCHmark run decided from its command line.
pub struct ChJob {
    pub tpcc: TpccJob,
    /// TPC-C's clients (`-c`).
    pub oltp: u32,
    /// `--analytic-clients`.
    pub analytic: u32,
    /// `--query-timeout`, milliseconds.
    pub timeout_ms: Option<u64>,
}

pub(crate) fn plan(a: &RunArgs) -> Result<(ChJob, RunSpec)> {
    if a.rate.is_some() {
        return Err(Failure::usage(
            "-R does not apply to run ch: it would pace the analytic queries as transactions",
            "run TPC-C unpaced, or by the book with --spec (keying and think times)",
        ));
    }
    if a.fleet.fleet.is_some() {
        return Err(Failure::usage(
            "--fleet does not apply to run ch: its analytic figures are not merged across \
             processes",
            "run it from one process (-c and --analytic-clients set the load)",
        ));
    }
    let o = &a.tpch;
    let tpch_only = crate::families::options::given(&[
        (o.test.is_some(), "--test"),
        (o.streams.is_some(), "--streams"),
        (o.validation, "--validation"),
    ]);
    if let Some(g) = tpch_only.first() {
        return Err(Failure::usage(
            format!("{g} only applies to TPC-H"),
            "run ch takes -c, --analytic-clients and --query-timeout",
        ));
    }
    let timeout_ms = crate::families::tpch::plan::query_timeout_ms(a)?;
    let (tpcc, mut spec) = tpcc_plan::plan(a)?;
    let oltp = spec.clients;
    let analytic = a.ch.analytic_clients.unwrap_or(1);
    spec.clients = oltp
        .checked_add(analytic)
        .ok_or_else(|| Failure::usage("--analytic-clients is too large", ""))?;
    Ok((
        ChJob {
            tpcc,
            oltp,
            analytic,
            timeout_ms,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn before_defaults(&mut self, a: &mut RunArgs) -> Result<()> {
        tpcc_plan::default_clients(a)
    }
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan(a)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
