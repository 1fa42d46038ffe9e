//! `stampede init oltp|tpcb|tpcc|tpch --fleet NAME --fleet-size N`: a load split across the
//! processes of a fleet. Rows are a pure function of the seed and their place (`load::oltp`,
//! `load::tpcb`, `load::tpcc`, `families::tpch::load`), so process I loads the I-th of N equal
//! ranges (sysbench's rows of every table, pgbench's accounts, TPC-C's warehouses, TPC-H's
//! `tpchgen` parts) and together they load exactly what one process loads; what is not split
//! (pgbench's branches and tellers, TPC-C's `item`, TPC-H's `region` and `nation`) is the first
//! process's, and TPC-C's load time, written into its dates, is the first process's
//! too (recorded on `customer`). The order, kept through the fleet's table by numbered stages
//! (`fleet::Member`): process 0 drops and creates the tables (stage 1); every process, once the
//! tables exist, loads its part (stage 2); process 0, once all have loaded, adds the keys and
//! the secondary indexes and vacuums (stage 3), as one process does after its COPYs; the
//! others wait for that, so each `init` returns when the data is complete. Process 0 then
//! removes the fleet's rows.

use anyhow::{Context, Result};
use load::{Event, LoadError};
use load::{Part, Steps};

use crate::console;
use crate::plan::FleetPlan;

const CREATED: i32 = 1;
const LOADED: i32 = 2;
const FINISHED: i32 = 3;

/// A load a fleet splits, with its options.
pub(super) enum Split {
    Oltp(load::oltp::InitOptions),
    Tpcb(load::tpcb::InitOptions),
    Tpcc(load::tpcc::InitOptions),
    Tpch(crate::families::tpch::load::InitOptions),
}

impl Split {
    fn what(&self) -> &'static str {
        match self {
            Split::Oltp(_) => "sysbench's OLTP tables",
            Split::Tpcb(_) => "TPC-B",
            Split::Tpcc(_) => "TPC-C",
            Split::Tpch(_) => "TPC-H",
        }
    }

    fn set_part(&mut self, part: Part) {
        match self {
            Split::Oltp(o) => o.part = Some(part),
            Split::Tpcb(o) => o.part = Some(part),
            Split::Tpcc(o) => o.part = Some(part),
            Split::Tpch(o) => o.part = Some(part),
        }
    }

    /// Run `steps` of the load; returns the plan in words.
    async fn steps(
        &self,
        conn: &sut::Target,
        steps: Steps,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Result<String, LoadError> {
        Ok(match self {
            Split::Oltp(o) => {
                load::oltp::init_steps_of(conn, o, steps, on_event)
                    .await?
                    .plan
            }
            Split::Tpcb(o) => {
                load::tpcb::init_steps_of(conn, o, steps, on_event)
                    .await?
                    .plan
            }
            Split::Tpcc(o) => {
                load::tpcc::init_steps_of(conn, o, steps, on_event)
                    .await?
                    .plan
            }
            Split::Tpch(o) => {
                crate::families::tpch::load::init_steps_of(conn, o, steps, on_event)
                    .await?
                    .plan
            }
        })
    }
}

pub(super) fn load(
    rt: &tokio::runtime::Runtime,
    conn: &sut::Target,
    plan: &FleetPlan,
    mut split: Split,
    quiet: bool,
) -> Result<i32> {
    let spec = plan.spec();
    let me = fleet::Identity {
        hostname: crate::environment::client_info().hostname,
        clients: 0,
    };
    let mut on_event = super::init::steps_said(quiet);
    let only = |create, rows, finish| Steps {
        create,
        rows,
        finish,
    };
    let what = split.what();
    let r = rt.block_on(async {
        let mut m = fleet::join(conn, &spec, &me).await?;
        m.wait_joined().await?;
        let index = m.index;
        split.set_part(Part {
            index,
            count: plan.size,
        });
        if index == 0 {
            split
                .steps(conn, only(true, false, false), &mut on_event)
                .await?;
            m.set_stage(CREATED).await?;
        }
        m.wait_stage(Some(0), CREATED).await?;
        let loaded = split
            .steps(conn, only(false, true, false), &mut on_event)
            .await?;
        m.set_stage(LOADED).await?;
        if index == 0 {
            m.wait_stage(None, LOADED).await?;
            split
                .steps(conn, only(false, false, true), &mut on_event)
                .await?;
            m.set_stage(FINISHED).await?;
            m.wait_others_gone().await?;
            m.abandon().await;
            fleet::forget(conn, &plan.name).await?;
        } else {
            m.wait_stage(Some(0), FINISHED).await?;
            m.abandon().await;
        }
        Ok::<_, anyhow::Error>((index, loaded))
    });
    match r {
        Ok((index, loaded)) => {
            eprintln!(
                "fleet {}: process {index} of {} loaded its part: {loaded}",
                plan.name, plan.size
            );
            Ok(0)
        }
        Err(e) if matches!(e.downcast_ref::<LoadError>(), Some(LoadError::Interrupted)) => {
            console::note("initialisation interrupted");
            Ok(crate::console::EXIT_INTERRUPTED)
        }
        Err(e) => Err(e).context(format!(
            "initialising {what} on {} as part of fleet {}",
            conn.redacted(),
            plan.name
        )),
    }
}
