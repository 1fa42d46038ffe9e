//! A run's description for the tests that drive `engine::run` themselves (the engine's own,
//! the app crate's library-level OLTP and script tests), written once: every field the engine
//! reads, at what the command line gives when no flag says otherwise.

use engine::{IoMode, RunSpec, Stop};
use sut::QueryMode;

/// `clients` clients on `threads` threads until `stop`, in `mode`: no rate, no retries, no
/// progress, seed 1, no per-statement latencies, no log, the I/O the engine picks; a test
/// changes what it needs with `RunSpec { seed: 7, ..run_spec(...) }`.
pub fn run_spec(clients: u32, threads: u32, stop: Stop, mode: QueryMode) -> RunSpec {
    RunSpec {
        clients,
        threads,
        stop,
        rate_tps: None,
        latency_limit: None,
        mode,
        max_tries: 1,
        connect_per_txn: false,
        progress: None,
        seed: 1,
        per_statement: false,
        weights: vec![],
        log: None,
        exit_on_abort: false,
        io: IoMode::Auto,
        verbose_errors: false,
        spread: Default::default(),
        fault_run: false,
        read_from: None,
        first_client_id: 0,
        start_at: None,
    }
}
