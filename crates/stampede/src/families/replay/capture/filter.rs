//! What a log reader keeps (`Filter`) and the one way it can fail (`ParseError`).
//!
//! Owns: these two types only, shared by every log reader of `capture` (PostgreSQL's `pg_*`
//! and MySQL's `mysql_*`), so that a filter means the same for every format and the caller
//! handles one error type. Must not touch: the model in `mod.rs` (`Capture`, `Session`, ...)
//! nor any reader's parsing, so that each reader can be written and tested on its own.

use std::fmt;

/// What to keep of a capture. An empty list keeps everything; a non-empty one keeps only the
/// statements whose session's value is in it. Statements left out are counted in
/// `Stats::skipped` under `filtered: database`, `filtered: user`, `filtered: application` or
/// `filtered: time`, never dropped silently.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Filter {
    pub databases: Vec<String>,
    pub users: Vec<String>,
    pub applications: Vec<String>,
    /// Keep statements starting at or after this time (unix microseconds).
    pub begin_unix_us: Option<i64>,
    /// Keep statements starting before this time (unix microseconds, exclusive).
    pub end_unix_us: Option<i64>,
}

impl Filter {
    /// Whether `value` passes a list: an empty list lets everything through.
    pub fn allows(list: &[String], value: &str) -> bool {
        list.is_empty() || list.iter().any(|v| v == value)
    }

    /// Why a session of this database, user and application is left out (the reason
    /// `Stats::skipped` counts it under), or `None` when it is kept. MySQL logs no
    /// application name, so a list of them keeps none of its sessions.
    pub fn refuses(&self, database: &str, user: &str, application: &str) -> Option<&'static str> {
        if !Filter::allows(&self.databases, database) {
            Some("filtered: database")
        } else if !Filter::allows(&self.users, user) {
            Some("filtered: user")
        } else if !Filter::allows(&self.applications, application) {
            Some("filtered: application")
        } else {
            None
        }
    }

    /// Whether a statement starting at `unix_us` is inside the time window.
    pub fn in_window(&self, unix_us: i64) -> bool {
        self.begin_unix_us.is_none_or(|b| unix_us >= b)
            && self.end_unix_us.is_none_or(|e| unix_us < e)
    }
}

/// A log that cannot be read at all (an I/O error, or no line in a format the reader knows).
/// A single line a reader does not understand is not an error: it is counted in
/// `Stats::skipped` and reading goes on.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ParseError {
    /// 1-based line where reading stopped (0 when before the first line).
    pub line: u64,
    pub column: Option<u32>,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "line {}, column {}: {}", self.line, c, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl std::error::Error for ParseError {}
