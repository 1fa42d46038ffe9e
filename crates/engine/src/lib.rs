//! # engine: when transactions run, and how long they took
//!
//! Owns time. Runs `clients` client tasks on `threads` OS threads (one current-thread tokio
//! runtime each, so a client never migrates and its thread's [`measure::Recorder`] needs no lock),
//! schedules transactions (closed loop, or a Poisson schedule for `-R` with latency from the
//! scheduled start), retries serialization failures and deadlocks with the same random values,
//! reconnects per transaction for `-C`, ticks intervals for `-P`, and stops on `-T`, `-t` or
//! cancellation (Ctrl-C), finishing in-flight transactions.
//!
//! Must not touch: any particular workload (it is generic over [`workload::Workload`]), argv,
//! output formats. It reports through [`Event`]s and returns an [`Outcome`].
//!
//! STUB: the interface is fixed; the implementation is being written.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use measure::Interval;
use target::{ConnConfig, QueryMode};

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// `-T`: measured seconds (connecting is not counted).
    Duration(Duration),
    /// `-t`: transactions per client.
    Transactions(u64),
}

/// Everything the engine needs to know about a run, validated by the caller.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub clients: u32,
    pub threads: u32,
    pub stop: Stop,
    /// `-R`: target transactions per second across all clients (Poisson arrivals per client).
    pub rate_tps: Option<f64>,
    /// `-L`: with `-R`, transactions already this late when due are skipped; committed ones slower
    /// than this are counted late.
    pub latency_limit: Option<Duration>,
    pub mode: QueryMode,
    /// `--max-tries` (pgbench's default 1: no retries). 0 means unlimited (only allowed with `-T`).
    pub max_tries: u32,
    /// `-C`: a new connection for every transaction, its time included in latency (as pgbench).
    pub connect_per_txn: bool,
    /// `-P`: progress interval.
    pub progress: Option<Duration>,
    /// Base seed of every random stream (`--random-seed`).
    pub seed: u64,
    /// `-r`: per-statement latencies.
    pub per_statement: bool,
    /// Weight of each transaction type (pgbench `-b name@weight`), same order as `txn_types()`.
    pub weights: Vec<u32>,
}

/// What the engine tells its caller while running (on the caller's thread, through a callback).
#[derive(Debug)]
pub enum Event<'a> {
    /// All initial connections are open; the measured run starts now.
    Connected { clients: u32, elapsed: Duration },
    /// One progress interval, merged across threads.
    Progress(&'a Interval),
}

/// A client that stopped for good before the end of the run (pgbench: "client N aborted").
#[derive(Clone, Debug)]
pub struct Abort {
    pub client_id: u32,
    /// Redacted message.
    pub reason: String,
}

#[derive(Debug)]
pub struct Outcome {
    /// Wall-clock start of the measured run.
    pub started_at: SystemTime,
    /// Time spent opening the initial connections (excluded from tps).
    pub connect_time: Duration,
    /// Every interval (of length `-P` when given, else the whole run in one), in order.
    pub intervals: Vec<Interval>,
    /// All intervals merged.
    pub total: Interval,
    pub aborted: Vec<Abort>,
    /// True when the run was cut short by cancellation.
    pub interrupted: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Initial connections failed (first error, redacted), nothing was measured.
    #[error("cannot open the initial connections: {0}")]
    Connect(#[source] target::Error),
    #[error("cannot start engine threads: {0}")]
    Threads(#[source] std::io::Error),
}

/// Run a workload. Blocks the calling thread until the run ends; calls `on_event` on the calling
/// thread. Setting `cancel` ends the run early: in-flight transactions finish, then the partial
/// outcome is returned with `interrupted = true`.
pub fn run<W: workload::Workload>(
    spec: &RunSpec,
    workload: Arc<W>,
    conn: &ConnConfig,
    cancel: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Outcome, RunError> {
    let _ = (spec, workload, conn, cancel, on_event);
    todo!("engine::run")
}
