//! `stampede init oltp --fleet NAME --fleet-size N`: the load split across the processes of a
//! fleet. Rows are a pure function of (seed, table, row) (`load::oltp`), so process I loads the
//! I-th of N equal row ranges of every table and together they load exactly what one process
//! loads. The order, kept through the fleet's table by numbered stages (`fleet::Member`):
//! process 0 drops and creates the tables (stage 1); every process, once the tables exist,
//! loads its part (stage 2); process 0, once all have loaded, adds the keys and the secondary
//! indexes and vacuums (stage 3), as one process does after its COPYs; the others wait for that,
//! so each `init` returns when the data is complete. Process 0 then removes the fleet's rows.

use anyhow::{Context, Result};
use load::oltp::{InitOptions, Part, Steps};
use load::{Event, LoadError};

use crate::console;
use crate::plan::FleetPlan;

const CREATED: i32 = 1;
const LOADED: i32 = 2;
const FINISHED: i32 = 3;

pub(super) fn oltp(
    rt: &tokio::runtime::Runtime,
    conn: &target::Target,
    plan: &FleetPlan,
    mut opts: InitOptions,
    quiet: bool,
) -> Result<i32> {
    let spec = fleet::Spec {
        name: plan.name.clone(),
        size: plan.size,
        index: plan.index,
        join_timeout: plan.timeout,
        lead: fleet::DEFAULT_LEAD,
        cancel: crate::interrupt::flag(),
    };
    let me = fleet::Identity {
        hostname: crate::environment::client_info().hostname,
        clients: 0,
    };
    let mut on_event = |e: &Event<'_>| {
        if quiet {
            return;
        }
        match e {
            Event::StepStarted(s) => eprintln!("{s}..."),
            Event::Notice(n) => console::note(n),
            _ => {}
        }
    };
    let only = |create, rows, finish| Steps {
        create,
        rows,
        finish,
    };
    let r = rt.block_on(async {
        let mut m = fleet::join(conn, &spec, &me).await?;
        m.wait_joined().await?;
        let index = m.index;
        opts.part = Some(Part {
            index,
            count: plan.size,
        });
        if index == 0 {
            load::oltp::init_steps_of(conn, &opts, only(true, false, false), &mut on_event).await?;
            m.set_stage(CREATED).await?;
        }
        m.wait_stage(Some(0), CREATED).await?;
        let report =
            load::oltp::init_steps_of(conn, &opts, only(false, true, false), &mut on_event).await?;
        m.set_stage(LOADED).await?;
        if index == 0 {
            m.wait_stage(None, LOADED).await?;
            load::oltp::init_steps_of(conn, &opts, only(false, false, true), &mut on_event).await?;
            m.set_stage(FINISHED).await?;
            m.wait_others_gone().await?;
            m.abandon().await;
            fleet::forget(conn, &plan.name).await?;
        } else {
            m.wait_stage(Some(0), FINISHED).await?;
            m.abandon().await;
        }
        Ok::<_, anyhow::Error>((index, report))
    });
    match r {
        Ok((index, report)) => {
            eprintln!(
                "fleet {}: process {index} of {} loaded its part: {}",
                plan.name, plan.size, report.plan
            );
            Ok(0)
        }
        Err(e) if matches!(e.downcast_ref::<LoadError>(), Some(LoadError::Interrupted)) => {
            console::note("initialisation interrupted");
            Ok(crate::console::EXIT_INTERRUPTED)
        }
        Err(e) => Err(e).context(format!(
            "initialising sysbench's OLTP tables on {} as part of fleet {}",
            conn.redacted(),
            plan.name
        )),
    }
}
