//! The plan of the CRUD mix (`stampede run crud`), decided before any I/O; its engine spec is
//! that of every statement-per-transaction workload
//! ([`crate::families::planning::statement_spec`]).

use anyhow::Result;
use engine::RunSpec;

use super::txn::Mix;
use super::Job as CrudJob;
use crate::console::Failure;
use crate::families::planning::statement_spec;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

pub(crate) fn plan_crud(a: &RunArgs) -> Result<(CrudJob, RunSpec)> {
    let clients = a.clients.unwrap_or(1);
    if clients < 1 {
        bail!("-c/--client must be at least 1");
    }
    let mix = match &a.crud.mix {
        Some(m) => Mix::parse(m).map_err(|e| {
            Failure::usage(
                e,
                "e.g. --mix point=40,index=20,range=10,in=10,insert=10,update=5,delete=5",
            )
        })?,
        None => Mix::default(),
    };
    let tables = a.sysbench.tables.unwrap_or(1);
    if tables == 0 {
        bail!("--tables must be at least 1");
    }
    let rows = u64::from(a.sysbench.table_size.unwrap_or(10_000));
    if rows == 0 {
        bail!("--table-size must be at least 1");
    }
    let batch = a.crud.batch.unwrap_or(10);
    if !(1..=10_000).contains(&batch) {
        bail!("--batch must be between 1 and 10000, got {batch}");
    }
    let spec = statement_spec(a, "crud", clients, mix.0.to_vec())?;
    Ok((
        CrudJob {
            tables,
            rows,
            batch,
            mix,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan_crud(a)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
