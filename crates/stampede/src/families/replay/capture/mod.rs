//! A captured workload, as the server logged it: the sessions, each with its statements in the
//! order it sent them, their times and the errors the server recorded. Every log format
//! (`pg_stderr`, `pg_csv`, `pg_json`, `mysql_general`, `mysql_slow`; `read` picks one) reads
//! into this one model, and the
//! replay file (`super::file`) stores it; nothing here touches a database, a clock or argv.
//!
//! Times are microseconds from the capture's first statement (`Statement::offset_us`): the
//! start of the statement, not the time its line was written. PostgreSQL logs a statement with
//! `log_min_duration_statement = 0` when it *ends* (the line's time minus its `duration:` is
//! its start); with `log_statement = all` when it *starts*; MySQL's general log when it is
//! received.

use std::collections::BTreeMap;

pub mod filter;
mod mysql_common;
pub mod mysql_general;
pub mod mysql_slow;
pub mod pg_csv;
pub mod pg_json;
pub mod pg_log;
pub mod pg_stderr;
mod pg_values;
mod read;

pub use read::{
    describe, from_general_log_rows, read_bytes, read_general_log_table, read_path,
    GENERAL_LOG_ROWS,
};

/// The protocol family a capture came from, and so the one it replays on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    #[default]
    Postgres,
    Mysql,
}

/// How a statement was sent in the capture, and so how it is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Text of the statement, all in one message (PostgreSQL's simple query, MySQL's COM_QUERY,
    /// and MySQL's `Execute` lines, which the general log writes with the values in the text).
    #[default]
    Simple,
    /// PostgreSQL's extended protocol: `sql` with `$n` placeholders and `params` as text
    /// (`execute <unnamed>` / `execute S_1` lines with their `DETAIL: parameters: $1 = '...'`).
    Extended,
}

/// One statement of a session.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Statement {
    /// Start, microseconds from the capture's first statement.
    pub offset_us: u64,
    /// How long it took, when the log says (`duration:`); `None` with `log_statement = all` or
    /// MySQL's general log.
    pub duration_us: Option<u64>,
    pub sql: String,
    pub protocol: Protocol,
    /// `$1`, `$2`, ... as text, `None` for SQL NULL (extended protocol only).
    pub params: Vec<Option<String>>,
    /// The error the server recorded for this statement: a SQLSTATE (PostgreSQL) or an error
    /// number (MySQL's slow log), `None` when it succeeded or the log does not say. An empty
    /// string when the statement failed but the log does not name the code (a PostgreSQL stderr
    /// log whose `log_line_prefix` has no `%e`).
    pub error: Option<String>,
}

/// One captured session (a PostgreSQL backend, a MySQL connection).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Session {
    /// The log's own name for it: PostgreSQL's session id (`%c`) or process id, MySQL's thread
    /// id. Unique within a capture.
    pub id: String,
    pub user: String,
    pub database: String,
    /// `application_name` (PostgreSQL), empty when the log does not say.
    pub application: String,
    /// The statements, in the order the session sent them.
    pub statements: Vec<Statement>,
}

/// What parsing a log found, as pgreplay prints it after parsing, plus what was skipped and
/// why: nothing is dropped without being counted.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Lines (records, for csvlog and jsonlog) read.
    pub lines: u64,
    /// Statements kept, by kind: `simple`, `extended`, and by their first keyword in lower case
    /// (`select`, `insert`, `update`, `delete`, `begin`, `commit`, `rollback`, `other`).
    pub statements: BTreeMap<String, u64>,
    /// Sessions kept.
    pub sessions: u64,
    /// From the first statement's start to the last one's end, microseconds.
    pub duration_us: u64,
    /// Statements or lines not kept, by reason (`copy`, `fast-path call`, `filtered: database`,
    /// `no session`, `unparsed line`, ...).
    pub skipped: BTreeMap<String, u64>,
}

/// A whole capture.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Capture {
    pub family: Family,
    /// Sessions ordered by their first statement's offset.
    pub sessions: Vec<Session>,
    pub stats: Stats,
    /// Wall-clock start of the first statement, Unix microseconds (UTC): what
    /// `Statement::offset_us` counts from. 0 when the capture has no statement.
    pub started_unix_us: i64,
}
