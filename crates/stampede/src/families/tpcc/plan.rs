//! The plan of a TPC-C run (`stampede run tpcc`), decided before any I/O: the warehouses (or
//! "all the database holds", found before the run), by the book or not, and the engine's
//! [`RunSpec`].
//!
//! Defaults that differ from the other workloads':
//! - retries: a transaction that fails with a serialization failure or a deadlock is
//!   re-submitted with the same inputs until it commits (clause 2.1.2 counts the re-submission,
//!   not the failure): unlimited tries under `-T`, 1,000,000 under `-t`; `--max-tries` caps them.
//! - `--spec` (by the book): 10 clients per warehouse unless `-c` is given, and `-w` is needed to
//!   know them; the keying and think times make each terminal's cycle seconds long, so a short
//!   `-T` measures little (a note says so under 10 minutes).
//! - the simple protocol is refused: TPC-C's inputs are sent as parameters.

use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};

use crate::console::Failure;
use crate::families::planning;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// Everything a TPC-C run decided from its command line.
pub struct TpccJob {
    /// `-w`: `None` runs on every warehouse the database holds.
    pub warehouses: Option<u32>,
    /// `--spec`: keying and think times.
    pub spec: bool,
}

/// `--spec` without `-c`: 10 terminals per warehouse (clause 4.2.2). Called before stampede's
/// defaults fill `-c`.
pub(crate) fn default_clients(a: &mut RunArgs) -> Result<()> {
    if !a.tpcc.spec || a.clients.is_some() {
        return Ok(());
    }
    match a.tpcc.warehouses {
        Some(w) => a.clients = Some(w.saturating_mul(10)),
        None => {
            return Err(Failure::usage(
                "--spec runs 10 terminals per warehouse: give the warehouses with -w",
                "e.g. `stampede run tpcc --spec -w 10` (or give the clients with -c)",
            ))
        }
    }
    Ok(())
}

pub(crate) fn plan(a: &RunArgs) -> Result<(TpccJob, RunSpec)> {
    planning::not_a_script(a, "tpcc", Some("its size is -w, the warehouses"))?;
    planning::no_log(a, "tpcc")?;
    let (clients, jobs) = planning::clients_and_jobs(a)?;
    if a.tpcc.warehouses == Some(0) {
        bail!("-w/--warehouses must be at least 1");
    }
    let stop = planning::stop_rule(a)?;
    let mode = planning::parameter_mode(a, "tpcc")?;
    let (rate, limit) = planning::rate_and_limit(a)?;
    if rate.is_some() && a.tpcc.spec {
        bail!("--spec paces each terminal with keying and think times: -R cannot be added");
    }
    let max_tries = planning::retrying_max_tries(a, stop)?;
    if a.tpcc.spec {
        if let Stop::Duration(d) = stop {
            if d < Duration::from_secs(600) {
                crate::console::note(&format!(
                    "--spec: each terminal waits 10-30 s between transactions (keying and think \
                     times), so a {} s run completes few; the specification measures for at \
                     least 2 hours (clause 5.5.1.2)",
                    d.as_secs()
                ));
            }
        }
    }
    let spec = planning::family_spec(a, (clients, jobs, stop), mode, (rate, limit), max_tries)?;
    Ok((
        TpccJob {
            warehouses: a.tpcc.warehouses,
            spec: a.tpcc.spec,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn before_defaults(&mut self, a: &mut RunArgs) -> Result<()> {
        default_clients(a)
    }
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan(a)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
