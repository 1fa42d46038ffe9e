//! Errors from a target, and their classification by SQLSTATE: the one place that decides what is
//! retryable (serialization failure 40001, deadlock 40P01 — as pgbench's `--max-tries`), what is a
//! lost connection, and what is fatal.

/// An error reported by the server (an ErrorResponse), with the fields people need to act on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    pub severity: String,
    /// Five-character SQLSTATE.
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (SQLSTATE {})",
            self.severity, self.message, self.code
        )?;
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL: {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT: {h}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection settings are invalid (bad URL, unknown sslmode, unreadable root cert, ...).
    #[error("invalid connection settings: {0}")]
    Config(String),
    /// Could not reach the server. `target` is the redacted host/port description.
    #[error("cannot connect to {target}: {source}")]
    Connect {
        target: String,
        source: std::io::Error,
    },
    /// The server refused the credentials or the authentication method is unsupported.
    #[error("authentication failed for {target}: {message}")]
    Auth { target: String, message: String },
    #[error("TLS: {0}")]
    Tls(String),
    /// An ErrorResponse from the server.
    #[error("{0}")]
    Db(DbError),
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The connection broke (read/write failed, server closed the socket).
    #[error("connection lost: {0}")]
    Io(std::io::Error),
    #[error("the server binaries for the embedded PostgreSQL: {0}")]
    Embedded(String),
    /// A client-side failure of the workload's own logic (a pgbench script's run-time error:
    /// division by zero, an undefined variable, `\gset` without exactly one row, ...). The message
    /// is complete (pgbench's "client N aborted in command ..."). Classed [`ErrorClass::Other`]:
    /// the transaction fails as "other" and the client is aborted, as pgbench aborts it.
    #[error("{0}")]
    Script(String),
}

// The messages above already include their cause, so no variant marks it `#[source]`: an error
// chain printed with `{:#}` would repeat it.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// What a client should do about an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// 40001: retry the transaction with the same random values (pgbench `--max-tries`).
    Serialization,
    /// 40P01: likewise retryable.
    Deadlock,
    /// The connection is gone; the client must reconnect or stop.
    ConnectionLost,
    /// Anything else.
    Other,
}

impl Error {
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            Error::Db(e) => Some(&e.code),
            _ => None,
        }
    }

    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Db(e) => classify_sqlstate(&e.code),
            Error::Io(_) | Error::Connect { .. } => ErrorClass::ConnectionLost,
            _ => ErrorClass::Other,
        }
    }
}

/// The single SQLSTATE table. Class 08 (connection exception) and 57P01..57P03 (admin shutdown,
/// crash shutdown, cannot connect now) mean the session is unusable.
pub fn classify_sqlstate(code: &str) -> ErrorClass {
    match code {
        "40001" => ErrorClass::Serialization,
        "40P01" => ErrorClass::Deadlock,
        "57P01" | "57P02" | "57P03" => ErrorClass::ConnectionLost,
        c if c.starts_with("08") => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_are_classified() {
        assert_eq!(classify_sqlstate("40001"), ErrorClass::Serialization);
        assert_eq!(classify_sqlstate("40P01"), ErrorClass::Deadlock);
        assert_eq!(classify_sqlstate("08006"), ErrorClass::ConnectionLost);
        assert_eq!(classify_sqlstate("57P01"), ErrorClass::ConnectionLost);
        assert_eq!(classify_sqlstate("23505"), ErrorClass::Other);
        assert_eq!(Error::Script("x".into()).class(), ErrorClass::Other);
    }
}
