//! The plan of `stampede run connection-storm`: `-c` is the count of idle connections to open
//! (thousands, as in seed 001's 20,000-connection test), `--connect-rate` how many are attempted
//! per second, `--busy-clients` the clients that run pgbench's select-only meanwhile (the engine's
//! clients). The run lasts the ramp plus 5 s of holding them all unless -T or -t says otherwise
//! (with -t the busy clients' transactions decide, and attempts stop when they are done).

use anyhow::Result;
use engine::RunSpec;

use crate::console::Failure;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

/// Idle connections when -c is not given.
pub const DEFAULT_CONNECTIONS: u64 = 1000;
/// Attempts per second when --connect-rate is not given.
pub const DEFAULT_RATE: f64 = 500.0;
/// Busy clients when --busy-clients is not given.
pub const DEFAULT_BUSY: u32 = 2;
/// Seconds the run holds every connection after the ramp, when -T is not given.
pub const HOLD_S: u64 = 5;

use crate::families::storm::Job as StormJob;

fn usage(cause: String, todo: &str) -> anyhow::Error {
    Failure::usage(cause, todo)
}

/// Read the storm's options and turn the run's arguments into the busy clients' select-only
/// run: -c becomes the idle count, the clients become --busy-clients. Called before the
/// defaults, so that the run's -T covers the ramp.
pub(crate) fn prepare(a: &mut RunArgs) -> Result<StormJob> {
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        return Err(usage(
            "connection-storm runs select-only on its busy clients: -b, -f, -N and -S cannot be \
             added to it"
                .into(),
            "",
        ));
    }
    if a.connect {
        return Err(usage(
            "connection-storm holds its connections: -C cannot be combined with it".into(),
            "drop -C",
        ));
    }
    if !a.sweep.is_empty() {
        return Err(usage(
            "--sweep cannot be combined with connection-storm (it steps the open connections \
             itself)"
                .into(),
            "run the storm with a larger -c",
        ));
    }
    let connections = u64::from(a.clients.unwrap_or(DEFAULT_CONNECTIONS as u32));
    if connections == 0 {
        return Err(usage(
            "-c/--client must be at least 1 (the idle connections to open)".into(),
            "",
        ));
    }
    let rate = a.storm.connect_rate.unwrap_or(DEFAULT_RATE);
    if !(rate > 0.0 && rate.is_finite()) {
        return Err(usage(
            format!("--connect-rate must be positive, got {rate}"),
            "give connections per second",
        ));
    }
    let busy = a.storm.busy_clients.unwrap_or(DEFAULT_BUSY);
    if busy == 0 {
        return Err(usage(
            "--busy-clients must be at least 1".into(),
            "the busy clients' throughput is what the storm measures",
        ));
    }
    let job = StormJob {
        connections,
        rate,
        busy,
    };
    if a.time.is_none() && a.transactions.is_none() {
        a.time = Some(job.ramp_s().ceil() as u64 + HOLD_S);
    }
    a.clients = Some(busy);
    Ok(job)
}

/// This family's entry in the registry (`workloads::Family::planner`).
/// The storm's own options are read before the defaults ([`prepare`]); the busy clients'
/// run is pgbench's select-only.
#[derive(Default)]
pub(crate) struct Step(Option<StormJob>);

impl Planner for Step {
    fn before_defaults(&mut self, a: &mut RunArgs) -> Result<()> {
        self.0 = Some(prepare(a)?);
        Ok(())
    }
    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)> {
        let storm = self.0.expect("prepared before the defaults");
        let (job, spec) = crate::families::pgbench::plan::plan(a, Some("select-only"), None)?;
        let busy = crate::families::pgbench::Runner::new(job, asked.frontend);
        let runner = super::Runner::new(Box::new(busy), storm);
        Ok((Job::Engine(Box::new(runner)), spec))
    }
}
