//! Fault runs ([`RunSpec::fault_run`](crate::RunSpec::fault_run)): clients that outlive a
//! failover, and the record of what each attempt did.
//!
//! pgbench aborts a client whose connection breaks, and so does stampede in an ordinary run:
//! that is the drop-in behaviour. A fault run is different on purpose: a client whose session
//! broke (or landed on a host that no longer takes writes) counts the failure, drops the
//! session, and reconnects before its next transaction, through the target's whole host list
//! with its `target_session_attrs` (libpq's semantics: the first host that qualifies), pausing
//! between attempts from [`BACKOFF_FIRST_US`] doubling to [`BACKOFF_MAX_US`] until a session
//! opens or the run ends. Every transaction attempt and every reconnection attempt is appended
//! to the thread's [`History`] (the `failover` crate turns it into downtime windows and the
//! audit); nothing is recorded in other runs.
//!
//! The bounded backoff keeps the measurement's resolution: a client retrying every second at
//! most sees a recovery within a second of it, while a storm of reconnects against a server that
//! is starting up (57P03) stays small.

use measure::attempts::{Attempt, ErrorKind, History, Op, Outcome};
use sut::conninfo::SessionAttrs;
use sut::{Error, ErrorClass, Session, Target};
use workload::{ClientWorkload, Workload};

use crate::exec::Timer;
use crate::worker::{Client, ThreadCtx};

pub(crate) const BACKOFF_FIRST_US: u64 = 10_000;
pub(crate) const BACKOFF_MAX_US: u64 = 1_000_000;

impl<W: Workload> ThreadCtx<W> {
    /// A fault run's record of one attempt: a write when the workload says which row it wrote,
    /// or when its transaction type is not read-only; else a read. The analysis measures each
    /// kind's downtime from its own completions, so a read taken for a write would hide a write
    /// outage (a primary turned read-only) behind reads that still succeed.
    pub(crate) fn record<C: ClientWorkload>(
        &self,
        c: &Client<C>,
        txn: usize,
        (start_us, sent_us): (u64, u64),
        end_us: u64,
        outcome: Outcome,
    ) {
        let op = match c.wl.write_seq() {
            Some(seq) => Op::Write { seq: Some(seq) },
            None if self.workload.read_only(txn) => Op::Read,
            None => Op::Write { seq: None },
        };
        self.history.borrow_mut().attempts.push(Attempt {
            client: c.id,
            op,
            start_us,
            end_us,
            sent_us: sent_us.max(start_us),
            host: c.session.as_ref().and_then(|s| self.endpoint_of(s)),
            outcome,
        });
    }
}

/// An error in an operator's words, from either protocol.
pub(crate) fn kind_of(e: &Error) -> ErrorKind {
    if let Some(n) = sut::mysql::error_number(e) {
        return match n {
            // ER_OPTION_PREVENTS_STATEMENT (read_only), ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            // (a READ ONLY transaction, or tx_read_only), ER_READ_ONLY_MODE.
            1290 | 1792 | 1836 => ErrorKind::ReadOnly,
            // ER_SERVER_SHUTDOWN, ER_UNKNOWN_COM_ERROR (Galera: "WSREP has not yet prepared
            // node for application use").
            1053 | 1047 => ErrorKind::ServerUnavailable,
            // ER_CONNECTION_KILLED, CR_SERVER_GONE_ERROR, CR_SERVER_LOST.
            1927 | 2006 | 2013 => ErrorKind::ConnectionLost,
            // ER_LOCK_WAIT_TIMEOUT.
            1205 => ErrorKind::Timeout,
            _ => ErrorKind::Other,
        };
    }
    match e {
        Error::Db(db) => ErrorKind::of(Some(&db.code), None, false),
        // Every host tried, and the last one answering takes no writes (a reconnection with
        // target_session_attrs=read-write while the standby is not yet promoted): read-only,
        // not a lost connection.
        Error::Connect { cause, .. } if SessionAttrs::refused_writes(&cause.to_string()) => {
            ErrorKind::ReadOnly
        }
        Error::Connect { cause, .. } => ErrorKind::of(None, Some(cause.kind()), false),
        Error::Io(io) => ErrorKind::of(None, Some(io.kind()), false),
        _ => ErrorKind::Other,
    }
}

/// Whether a client must drop its session after `e` and reconnect: the session broke, or its
/// host refuses writes now (a primary demoted, or a standby where the target wants a writer).
pub(crate) fn breaks_session(e: &Error, class: ErrorClass, s: &Session) -> bool {
    class == ErrorClass::ConnectionLost
        || !s.is_usable()
        || matches!(
            kind_of(e),
            ErrorKind::ReadOnly | ErrorKind::AdminShutdown | ErrorKind::ServerUnavailable
        )
}

/// What a failed attempt means for the audit: a write whose statement was sent and whose
/// answer never came may have committed (unknown); one the server answered with an error did not
/// (failed). The server ending the session (57P01) counts as unknown: it may have come after the
/// commit and before the reply.
pub(crate) fn outcome_of(e: &Error, class: ErrorClass) -> Outcome {
    let kind = kind_of(e);
    let unanswered = class == ErrorClass::ConnectionLost
        || matches!(kind, ErrorKind::ConnectionLost | ErrorKind::AdminShutdown);
    if unanswered {
        Outcome::Unknown(kind)
    } else {
        Outcome::Failed(kind)
    }
}

/// Reconnect client `client` until a session opens or the run is over (`over(t)`: the run
/// ended, or will have by time `t`, the next attempt's); every attempt is recorded. `None` when
/// the run ended first.
pub(crate) async fn reconnect(
    conn: &Target,
    timer: &Timer,
    client: u32,
    over: &dyn Fn(u64) -> bool,
    history: &std::cell::RefCell<History>,
) -> Option<Session> {
    let mut pause = BACKOFF_FIRST_US;
    loop {
        let start = timer.now_us();
        let r = Box::pin(Session::connect_timed(conn, timer)).await;
        let end = timer.now_us();
        let (outcome, host, session) = match r {
            Ok(s) => {
                let host = s.endpoint_index(conn);
                (Ok(()), host, Some(s))
            }
            Err(e) => (Err(kind_of(&e)), None, None),
        };
        history
            .borrow_mut()
            .connects
            .push(measure::attempts::Connect {
                client,
                start_us: start,
                end_us: end,
                host,
                outcome,
            });
        if session.is_some() {
            return session;
        }
        let next = timer.now_us() + pause;
        if over(next) {
            return None;
        }
        timer.sleep_until(next).await;
        pause = (pause * 2).min(BACKOFF_MAX_US);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(code: &str) -> Error {
        Error::Db(Box::new(sut::DbError {
            severity: "ERROR".into(),
            code: code.into(),
            message: "m".into(),
            ..Default::default()
        }))
    }

    #[test]
    fn errors_read_as_an_operator_names_them() {
        assert_eq!(kind_of(&db("25006")), ErrorKind::ReadOnly);
        assert_eq!(kind_of(&db("57P01")), ErrorKind::AdminShutdown);
        let refused = Error::Connect {
            target: "h".into(),
            cause: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(kind_of(&refused), ErrorKind::Refused);
        let standby = Error::Connect {
            target: "h".into(),
            cause: std::io::Error::other(
                SessionAttrs::ReadWrite
                    .refusal(true, false)
                    .expect("a standby is refused"),
            ),
        };
        assert_eq!(kind_of(&standby), ErrorKind::ReadOnly);
        let eof = Error::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        assert_eq!(kind_of(&eof), ErrorKind::ConnectionLost);
    }

    #[test]
    fn a_read_only_mysql_server_is_read_only_whatever_its_sqlstate() {
        // MySQL's read-only errors carry SQLSTATE HY000 or 25006: the number decides.
        let my = |n: u16, code: &str| {
            Error::Db(Box::new(sut::DbError {
                severity: "ERROR".into(),
                code: code.into(),
                message: "m".into(),
                detail: Some(format!("MySQL error {n}")),
                ..Default::default()
            }))
        };
        for (n, code) in [(1290, "HY000"), (1792, "25006"), (1836, "HY000")] {
            assert_eq!(kind_of(&my(n, code)), ErrorKind::ReadOnly, "{n}");
        }
        assert_eq!(kind_of(&my(1062, "23000")), ErrorKind::Other);
    }

    #[test]
    fn only_an_unanswered_write_is_in_doubt() {
        let eof = Error::Io(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        assert_eq!(
            outcome_of(&eof, ErrorClass::ConnectionLost),
            Outcome::Unknown(ErrorKind::ConnectionLost)
        );
        assert_eq!(
            outcome_of(&db("57P01"), ErrorClass::ConnectionLost),
            Outcome::Unknown(ErrorKind::AdminShutdown)
        );
        assert_eq!(
            outcome_of(&db("25006"), ErrorClass::Other),
            Outcome::Failed(ErrorKind::ReadOnly)
        );
    }
}
