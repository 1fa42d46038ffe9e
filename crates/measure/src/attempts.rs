//! What each client attempted during a fault run, and how it ended: the record a failover
//! analysis reads (the `failover` crate). Kept apart from the [`Recorder`](crate::Recorder)'s
//! histograms because the questions are about order and identity (which write was the last on
//! the old primary, which acknowledged sequence numbers are missing), which counts cannot answer;
//! the engine fills it only when a run asks for it (a fault run), so other runs pay nothing.
//!
//! [`ErrorKind`] sorts errors in an operator's words from the SQLSTATE and the socket's error:
//! the caller extracts both, so this crate stays free of any database driver.

/// What went wrong, in the words an operator uses for a failover (the list: connection
/// refused, terminated by administrator, read-only transaction, timeout), from the error's
/// SQLSTATE and I/O kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// Nothing listens (ECONNREFUSED, or a unix socket that is gone).
    Refused,
    /// 57P01 admin_shutdown: the server ended the session (fast shutdown, pg_terminate_backend).
    AdminShutdown,
    /// 57P02 crash_shutdown, 57P03 cannot_connect_now: the server is stopping or starting.
    ServerUnavailable,
    /// 25006 read_only_sql_transaction: the host is (now) a standby.
    ReadOnly,
    /// A connect or statement timeout (57014 query_canceled by statement_timeout, or ours).
    Timeout,
    /// The connection broke mid-conversation (EOF, reset, class 08).
    ConnectionLost,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// Sorts one error. `sqlstate` from the server's error response; `io` when the socket
    /// failed; `timed_out` when a deadline of ours fired.
    pub fn of(sqlstate: Option<&str>, io: Option<std::io::ErrorKind>, timed_out: bool) -> Self {
        if timed_out {
            return ErrorKind::Timeout;
        }
        if let Some(code) = sqlstate {
            return match code {
                "57P01" => ErrorKind::AdminShutdown,
                "57P02" | "57P03" => ErrorKind::ServerUnavailable,
                "25006" => ErrorKind::ReadOnly,
                "57014" => ErrorKind::Timeout,
                c if c.starts_with("08") => ErrorKind::ConnectionLost,
                _ => ErrorKind::Other,
            };
        }
        match io {
            Some(std::io::ErrorKind::ConnectionRefused) | Some(std::io::ErrorKind::NotFound) => {
                ErrorKind::Refused
            }
            Some(std::io::ErrorKind::TimedOut) | Some(std::io::ErrorKind::WouldBlock) => {
                ErrorKind::Timeout
            }
            Some(_) => ErrorKind::ConnectionLost,
            None => ErrorKind::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Refused => "connection refused",
            ErrorKind::AdminShutdown => "terminated by administrator",
            ErrorKind::ServerUnavailable => "server starting or stopping",
            ErrorKind::ReadOnly => "read-only transaction",
            ErrorKind::Timeout => "timeout",
            ErrorKind::ConnectionLost => "connection lost",
            ErrorKind::Other => "other",
        }
    }
}

/// What an attempt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A transaction that writes. `seq`: the audited row it inserts (the failover probe), or
    /// `None` for a workload whose writes are not audited. Every attempt has its own number: a
    /// write that is tried again after an error is a new write, so the audit never has to guess
    /// which try committed.
    Write { seq: Option<u64> },
    /// A read-only transaction.
    Read,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Known not to have taken effect.
    Failed(ErrorKind),
    /// A write whose COMMIT was sent and never answered: the audit decides.
    Unknown(ErrorKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub client: u32,
    pub op: Op,
    /// Microseconds since the run's start: when it was due (its schedule) and when it ended.
    pub start_us: u64,
    pub end_us: u64,
    /// When it was sent: after the client's reconnection, if it had to make one (`start_us`
    /// when it did not wait). From here to `end_us` it waited on the server.
    pub sent_us: u64,
    /// Index into the target's hosts of the session that ran it; `None` without a session.
    pub host: Option<usize>,
    pub outcome: Outcome,
}

/// One attempt to re-establish a client's session (not the run's initial connections).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connect {
    pub client: u32,
    pub start_us: u64,
    pub end_us: u64,
    /// The host it reached (or the last one it tried, when it failed).
    pub host: Option<usize>,
    pub outcome: Result<(), ErrorKind>,
}

/// Everything the clients did, in any order (each client appends its own; the analysis sorts).
#[derive(Clone, Debug, Default)]
pub struct History {
    pub attempts: Vec<Attempt>,
    pub connects: Vec<Connect>,
}

impl History {
    /// Appends another client's (or thread's) record.
    pub fn merge(&mut self, other: History) {
        self.attempts.extend(other.attempts);
        self.connects.extend(other.connects);
    }
}
