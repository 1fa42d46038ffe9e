//! # failover: what a fault did to a run, measured from the client
//!
//! The run keeps a [`History`]: every probe write and read with its start, end, host and
//! outcome, and every reconnection attempt. After the run, [`analyse`] turns it into the
//! report's [`FailoverSection`]: the longest windows without a successful write and read, the
//! time to detect, errors by kind per second, reconnects, where clients ended and latency
//! before, during and after; and [`audit`] compares the writes with the rows the new primary
//! holds (lost, in doubt, duplicated, unexpected), as Jepsen's set checker does.
//!
//! Why a record of every attempt rather than counters: the questions are about order in time
//! (which write was the last on the old primary, which error came first after the fault) and
//! about individual writes (which acknowledged sequence numbers are missing). A probe at 100
//! writes per second for a minute is 6,000 records: keeping all of them is cheap and lets every
//! figure be exact.
//!
//! Pure functions over data: no database, no clock, no runtime. The engine records, the binary
//! reads the audit rows, this crate decides what they mean.

mod analyse;
mod audit;

pub use analyse::analyse;
pub use audit::{audit, Audit};
pub use measure::attempts::{Attempt, Connect, ErrorKind, History, Op, Outcome};
pub use report::failover::FailoverSection;

/// The fault: when, and what was run.
#[derive(Clone, Debug, Default)]
pub struct Fault {
    pub at_us: u64,
    /// The command, secrets already redacted; `None` when the fault was only marked.
    pub cmd: Option<String>,
    pub exit_status: Option<i32>,
}

fn seconds(us: u64) -> f64 {
    us as f64 / 1e6
}
