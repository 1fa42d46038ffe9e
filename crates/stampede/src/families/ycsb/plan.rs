//! The plan of a YCSB run (`stampede run ycsb-a` ... `ycsb-f`), decided before any I/O: the
//! core workload's file with the `-p KEY=VALUE` properties over it (`families::ycsb::txn::props`,
//! where an unknown property is an error naming it), and the engine's [`RunSpec`].
//!
//! YCSB's `operationcount` ends a YCSB run; here -T or -t does (stampede's one set of
//! defaults), and `operationcount` keeps its other use, sizing the zipfian's room for new keys.
//! With -t and no `-p operationcount`, it is the run's operations (-t times -c), what YCSB
//! would have been told. The simple protocol is refused: YCSB's JDBC binding sends every key
//! and value as a parameter.

use crate::families::ycsb::txn::{props, Options};
use crate::families::ycsb::Job as YcsbJob;
use anyhow::Result;
use engine::{RunSpec, Stop};

use crate::console::Failure;
use crate::families::planning;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// The core workload a name (`ycsb-a`) stands for, with the properties over it.
pub fn options(name: &str, properties: &[String]) -> Result<Options> {
    let letter = name
        .strip_prefix("ycsb-")
        .and_then(|l| l.chars().next())
        .filter(|_| name.len() == 6);
    let base = letter.and_then(props::core_workload).unwrap_or_default();
    props::parse(base, properties).map_err(|e| {
        Failure::usage(
            e.to_string(),
            "YCSB's properties are written -p KEY=VALUE (or --property KEY=VALUE)",
        )
    })
}

pub(crate) fn plan(a: &RunArgs, name: &'static str) -> Result<(YcsbJob, RunSpec)> {
    planning::not_a_script(a, name, Some("its size is -p recordcount=N"))?;
    planning::no_log(a, "YCSB")?;
    let mut opts = options(name, &a.ycsb.property)?;
    let (clients, jobs) = planning::clients_and_jobs(a)?;
    let stop = planning::stop_rule(a)?;
    if let (Stop::Transactions(t), false) = (stop, opts.was_given("operationcount")) {
        opts.operationcount = t.saturating_mul(u64::from(clients));
    }
    let mode = planning::parameter_mode(a, name)?;
    let (rate, limit) = planning::rate_and_limit(a)?;
    let max_tries = a.max_tries.unwrap_or(1);
    if max_tries == 0 && matches!(stop, Stop::Transactions(_)) {
        bail!("--max-tries=0 (unlimited) needs -T, or the run might never end");
    }
    let spec = planning::family_spec(a, (clients, jobs, stop), mode, (rate, limit), max_tries)?;
    Ok((YcsbJob { name, opts }, spec))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)> {
        let name = asked.name.expect("a YCSB run names its workload");
        let (job, spec) = plan(a, name)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
