//! The `failover` section of a result: what a fault did to the run, as its clients saw it.
//!
//! Filled by the `failover` crate from the run's record of attempts (every write, read and
//! connection attempt with its outcome) and from the audit read after the run. Times are seconds
//! since the start of the run (the same origin as the per-second series), so the section lines up
//! with the progress lines and the HTML charts.
//!
//! The audit's words follow Jepsen's set checker: a *lost* write was acknowledged and is absent
//! afterwards; an *in-doubt* write is present but was never acknowledged (committed, with the
//! acknowledgement lost in the fault); a *duplicate* is a sequence number present more than once;
//! an *unexpected* row carries a sequence number no client ever sent (a bug, in stampede or in the
//! system under test).

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FailoverSection {
    /// When the fault was injected (or marked, for a fault triggered elsewhere); 0 when
    /// `no_fault_time`.
    pub fault_at_s: f64,
    /// No fault time was given (a fault run without `--fault-at`, watching a fault triggered
    /// elsewhere at an unknown instant): the windows cover the whole run and `detect_s` counts
    /// from its start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_fault_time: bool,
    /// The fault command as given (the caller redacts secrets); `None` when only marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_cmd: Option<String>,
    /// The fault command's exit status; `None` when it was not run or was killed by a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_exit_status: Option<i32>,
    /// From the fault to the first error any client saw; `None` when none saw one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detect_s: Option<f64>,
    /// The longest window without a successful write in which writes failed or stalled,
    /// anywhere in the run (0 when they never did; see the `failover` crate's `analyse`).
    pub write_downtime_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_window: Option<Window>,
    /// The longest window without a successful read in which reads failed or stalled.
    pub read_downtime_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_window: Option<Window>,
    /// The last successful write on the host that took writes when the fault came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_write_old_primary: Option<HostTime>,
    /// The first successful write on another host after the fault (the new primary); `None`
    /// when writes never moved (a restart of the same server, or no recovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_write_new_primary: Option<HostTime>,
    /// Errors by second of the run, what failed (a write, a read, a reconnection) and kind
    /// (only seconds with errors).
    #[serde(default)]
    pub errors: Vec<ErrorSecond>,
    /// Every second of the run: successful writes and reads, and errors (the HTML timeline).
    #[serde(default)]
    pub timeline: Vec<Second>,
    pub reconnects: Reconnects,
    /// Where the clients ended: clients per host, by their last successful session.
    #[serde(default)]
    pub clients_ended_on: Vec<HostClients>,
    /// Latency of successful attempts before the fault, during the write outage (from the fault
    /// to the end of the write window, or to the first write after the fault), and after.
    pub latency: Phases,
    pub writes: WriteCounts,
    /// The reads (transactions that only read), counted apart from the writes.
    #[serde(default)]
    pub reads: ReadCounts,
    /// Per host, in the target's order: what the attempts its sessions ran did (hosts no
    /// attempt ran on are left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostAttempts>,
    pub lost_writes: u64,
    pub in_doubt_writes: u64,
    pub duplicate_writes: u64,
    pub unexpected_writes: u64,
    /// The first sequence numbers of each kind (at most [`SAMPLE`]), for looking them up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_seqs: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_doubt_seqs: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplicate_seqs: Vec<u64>,
    /// The host the audit read (the one taking writes after the run); `None` when the audit
    /// could not run (then the four counts above are not meaningful; see `audit_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audited_on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_error: Option<String>,
}

impl FailoverSection {
    /// The errors summed over the run by what failed and kind, in order of first appearance:
    /// `120 read-only transaction (writes), 2 connection refused (reconnects)`.
    pub fn errors_by_kind(&self) -> String {
        let mut kinds: Vec<(&str, &str, u64)> = Vec::new();
        for e in &self.errors {
            match kinds
                .iter_mut()
                .find(|(o, k, _)| *o == e.op && *k == e.kind)
            {
                Some((_, _, n)) => *n += e.count,
                None => kinds.push((&e.op, &e.kind, e.count)),
            }
        }
        let parts: Vec<String> = (kinds.iter())
            .map(|(op, k, n)| match ErrorSecond::plural(op) {
                Some(ops) => format!("{n} {k} ({ops})"),
                None => format!("{n} {k}"),
            })
            .collect();
        parts.join(", ")
    }
}

/// How many sequence numbers of each audit finding the section lists.
pub const SAMPLE: usize = 100;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
    /// True when the window was still open at the end of the run (no recovery seen).
    #[serde(default)]
    pub open: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostTime {
    pub host: String,
    pub at_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSecond {
    pub second: u32,
    /// What failed: [`ErrorSecond::WRITE`], [`ErrorSecond::READ`] or
    /// [`ErrorSecond::RECONNECT`]; empty in results written before they were told apart.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub op: String,
    pub kind: String,
    pub count: u64,
}

impl ErrorSecond {
    pub const WRITE: &'static str = "write";
    pub const READ: &'static str = "read";
    pub const RECONNECT: &'static str = "reconnect";

    /// `writes`, `reads`, `reconnects`: how a summary names the attempts of an op.
    pub fn plural(op: &str) -> Option<&'static str> {
        match op {
            Self::WRITE => Some("writes"),
            Self::READ => Some("reads"),
            Self::RECONNECT => Some("reconnects"),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    pub second: u32,
    pub writes: u64,
    pub reads: u64,
    pub errors: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reconnects {
    pub attempts: u64,
    pub succeeded: u64,
    /// Latency of the attempts, successful or not (a refused connection is quick, a timeout
    /// is not: both are what the client waited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostClients {
    pub host: String,
    pub clients: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub during: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Latency>,
}

/// Exact percentiles (the probe's attempts are few enough to keep every one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The counting identity: `attempted = acknowledged + failed + unknown`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteCounts {
    pub attempted: u64,
    /// The COMMIT returned success.
    pub acknowledged: u64,
    /// Known not committed: the error came before COMMIT was sent, or COMMIT was answered
    /// with an error.
    pub failed: u64,
    /// The connection was lost with COMMIT sent and no answer: committed or not, only the
    /// audit can tell.
    pub unknown: u64,
}

/// The counting identity: `attempted = succeeded + failed`. A read whose answer never came is
/// failed: unlike a write it leaves nothing behind to audit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadCounts {
    pub attempted: u64,
    pub succeeded: u64,
    pub failed: u64,
}

/// What the attempts one host's sessions ran did. Its `writes + reads` are the transactions the
/// host served, which the result's per-host `transactions` counts too.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostAttempts {
    pub host: String,
    /// Acknowledged writes.
    pub writes: u64,
    /// Successful reads.
    pub reads: u64,
    /// Writes and reads that failed or whose outcome is unknown.
    pub failed: u64,
}
