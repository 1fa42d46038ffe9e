//! The plan of a failover probe run (`stampede failover`, `stampede run failover-probe`): a
//! timed run of one-row writes and reads, half each, at a fixed rate spread over the clients
//! (`-R`, 100 per second unless given), with the engine's fault mode on.

use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};

use crate::console::Failure;
use crate::families::planning;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};
use planning::{parse_seed, positive};

/// Probe transactions per second when `-R` is not given: 10 ms between writes, the resolution
/// of the downtime figures.
pub const DEFAULT_RATE: f64 = 100.0;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

pub(crate) fn plan(a: &RunArgs) -> Result<RunSpec> {
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        bail!("the failover probe is the workload: -b, -f, -N and -S cannot be added to it");
    }
    if a.connect {
        bail!("the failover probe keeps a session per client and reconnects it: drop -C");
    }
    let (clients, jobs) = planning::clients_and_jobs(a)?;
    let stop = match (a.transactions, a.time) {
        (Some(_), _) => bail!("the failover probe runs for a time: give -T, not -t"),
        (None, Some(0)) => bail!("-T/--time must be at least 1"),
        (None, t) => Stop::Duration(Duration::from_secs(t.unwrap_or(60))),
    };
    let rate = positive(a.rate, "-R/--rate")?.unwrap_or(DEFAULT_RATE);
    Ok(RunSpec {
        rate_tps: Some(rate),
        mode: a.protocol.map_or(sut::QueryMode::Prepared, |p| p.mode()),
        max_tries: 1,
        connect_per_txn: false,
        seed: parse_seed(a.random_seed.as_deref())?,
        // Writes and reads, one each in turn on average.
        weights: vec![1, 1],
        exit_on_abort: false,
        fault_run: true,
        ..planning::common_spec(a, clients, jobs, stop)
    })
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let spec = plan(a)?;
        let runner = super::Runner::new(a.keep_probe);
        Ok((Job::Engine(Box::new(runner)), spec))
    }
}
