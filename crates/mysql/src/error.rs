//! MySQL's errors in `sut`'s types, and their classification by MySQL error number: the one
//! place that says which MySQL errors are retryable, which mean the connection is gone, and
//! which are fatal (STYLE.md, habit 8).
//!
//! An ERR packet ("ERR_Packet") becomes a [`pg::DbError`]: `severity` "ERROR", `code` the
//! packet's SQLSTATE, `message` its text, and the error number in `detail` as
//! `MySQL error 1213` (`DbError` has no field for a native error code; [`error_number`] reads
//! it back). The number is what decides: 1205 (lock wait timeout) has SQLSTATE HY000, which
//! `pg::classify_sqlstate` cannot tell from any other error, so [`classify`] is the
//! classifier for errors from this crate's sessions.
//!
//! The table ("Server Error Message Reference", "Client Error Message Reference"):
//! * 1213 ER_LOCK_DEADLOCK (40001): InnoDB rolled the transaction back: [`ErrorClass::Deadlock`],
//!   retryable as PostgreSQL's 40P01. Galera's certification failures are 1213 too.
//! * 1205 ER_LOCK_WAIT_TIMEOUT (HY000): [`ErrorClass::Deadlock`], retryable: with
//!   `innodb_deadlock_detect=OFF` (the setting recommended for high concurrency) this is how a
//!   deadlock surfaces. InnoDB rolls back only the statement (unless
//!   `innodb_rollback_on_timeout`), so the retrying client must roll the transaction back.
//! * 1020 ER_CHECKREAD (HY000, "Record has changed since last read", MariaDB's
//!   `innodb_snapshot_isolation`) and SQLSTATE 40001 otherwise: [`ErrorClass::Serialization`].
//! * Client errors 2006 (server has gone away) and 2013 (lost connection during query) are what
//!   libmysqlclient reports for a broken connection; here a broken connection is an
//!   [`Error::Io`] (its message quotes those numbers), classed
//!   [`ErrorClass::ConnectionLost`], as are the server's goodbyes: 1053 ER_SERVER_SHUTDOWN,
//!   1077-1080 (shutdown), 1152 ER_ABORTING_CONNECTION, 1158-1161 (network errors), 1927
//!   ER_CONNECTION_KILLED (MariaDB), 4031 ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8), and any SQLSTATE
//!   of class 08.
//! * 1040 ER_CON_COUNT_ERROR (too many connections) comes before the handshake, without a
//!   SQLSTATE: it is given 08004 (its documented SQLSTATE) and a hint naming
//!   `max_connections`.

use pg::{DbError, Error, ErrorClass};

use crate::wire;

/// `detail` of a `DbError` made from an ERR packet starts with this, then the number.
const DETAIL_PREFIX: &str = "MySQL error ";

/// A server error from an ERR packet.
pub(crate) fn db_error(e: wire::Err) -> DbError {
    let mut code = String::from_utf8_lossy(&e.sqlstate).into_owned();
    let mut hint = None;
    if e.number == ER_CON_COUNT_ERROR {
        code = "08004".into();
        hint = Some(
            "the server's max_connections is reached: raise it (SET GLOBAL max_connections = \
             ...) or use fewer clients"
                .into(),
        );
    }
    DbError {
        severity: "ERROR".into(),
        code,
        message: e.message,
        detail: Some(format!("{DETAIL_PREFIX}{}", e.number)),
        hint,
        ..Default::default()
    }
}

pub(crate) const ER_CON_COUNT_ERROR: u16 = 1040;
pub(crate) const ER_ACCESS_DENIED: u16 = 1045;
pub(crate) const ER_LOCK_DEADLOCK: u16 = 1213;
pub(crate) const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
pub(crate) const ER_CONNECTION_KILLED: u16 = 1927;

/// The MySQL error number of a server error made by this crate (`None` for other errors).
pub fn error_number(e: &Error) -> Option<u16> {
    match e {
        Error::Db(db) => db_error_number(db),
        _ => None,
    }
}

/// The MySQL error number in a `DbError` made by this crate.
pub fn db_error_number(db: &DbError) -> Option<u16> {
    db.detail
        .as_deref()?
        .strip_prefix(DETAIL_PREFIX)?
        .parse()
        .ok()
}

/// What a client should do about an error from a MySQL session (see the module header).
pub fn classify(e: &Error) -> ErrorClass {
    match e {
        Error::Db(db) => match db_error_number(db) {
            Some(n) => classify_number(n, &db.code),
            None => e.class(),
        },
        _ => e.class(),
    }
}

/// The table, by error number (and SQLSTATE for what the number does not settle).
pub fn classify_number(number: u16, sqlstate: &str) -> ErrorClass {
    match number {
        ER_LOCK_DEADLOCK | ER_LOCK_WAIT_TIMEOUT => ErrorClass::Deadlock,
        1020 => ErrorClass::Serialization,
        1053 | 1077..=1080 | 1152 | 1158..=1161 | ER_CONNECTION_KILLED | 4031 | 2006 | 2013 => {
            ErrorClass::ConnectionLost
        }
        _ => match sqlstate {
            "40001" => ErrorClass::Serialization,
            s if s.starts_with("08") => ErrorClass::ConnectionLost,
            _ => ErrorClass::Other,
        },
    }
}

/// Whether the server ends the connection after this error (the session is unusable).
pub(crate) fn ends_connection(number: u16) -> bool {
    matches!(classify_number(number, ""), ErrorClass::ConnectionLost)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(number: u16, sqlstate: &[u8; 5], message: &str) -> Error {
        Error::Db(Box::new(db_error(wire::Err {
            number,
            sqlstate: *sqlstate,
            message: message.into(),
        })))
    }

    #[test]
    fn errors_are_classified_by_number() {
        let deadlock = err(1213, b"40001", "Deadlock found when trying to get lock");
        assert_eq!(classify(&deadlock), ErrorClass::Deadlock);
        // sut's own table sees only the SQLSTATE: a serialization failure.
        assert_eq!(deadlock.class(), ErrorClass::Serialization);
        let timeout = err(1205, b"HY000", "Lock wait timeout exceeded");
        assert_eq!(classify(&timeout), ErrorClass::Deadlock);
        assert_eq!(timeout.class(), ErrorClass::Other, "invisible to target");
        assert_eq!(
            classify(&err(1927, b"70100", "Connection was killed")),
            ErrorClass::ConnectionLost
        );
        assert_eq!(
            classify(&err(1053, b"08S01", "Server shutdown in progress")),
            ErrorClass::ConnectionLost
        );
        assert_eq!(
            classify(&err(1062, b"23000", "Duplicate entry")),
            ErrorClass::Other
        );
        let io = Error::Io(std::io::Error::other("x"));
        assert_eq!(classify(&io), ErrorClass::ConnectionLost);
        assert_eq!(error_number(&deadlock), Some(1213));
        assert_eq!(error_number(&io), None);
    }

    #[test]
    fn too_many_connections_names_max_connections() {
        let e = err(1040, b"HY000", "Too many connections");
        assert_eq!(e.sqlstate(), Some("08004"));
        assert_eq!(classify(&e), ErrorClass::ConnectionLost);
        let text = e.to_string();
        assert!(text.contains("Too many connections"), "{text}");
        assert!(text.contains("max_connections"), "{text}");
        assert!(text.contains("MySQL error 1040"), "{text}");
    }
}
