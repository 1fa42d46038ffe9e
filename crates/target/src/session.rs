//! One connection to a PostgreSQL server, speaking the v3 wire protocol by hand.
//!
//! Why by hand (issue "driver is never the bottleneck"): tokio-postgres routes every statement
//! through channels to a separately polled connection task and sends a Sync per statement; measured
//! here it costs 1.1-1.5x pgbench's client CPU per transaction and 2-3x its instructions. A session
//! that encodes straight into one reusable output buffer (message encoding from
//! `postgres-protocol`), writes once per round trip and parses replies in place costs a quarter of
//! tokio-postgres's instructions. The hot path (`queue`, `flush`, `read_result`, `read_ready`,
//! `execute`) does not allocate.
//!
//! STUB: the interface is fixed; the implementation is being written.

use crate::{ConnConfig, Error};

/// pgbench's `-M`: how statements are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Query message, parameters interpolated as text (pgbench's default).
    #[default]
    Simple,
    /// Unnamed Parse + Bind + Execute each time.
    Extended,
    /// Named statements parsed once per connection, then Bind + Execute.
    Prepared,
}

/// A statement registered on a session with [`Session::register`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StmtId(pub u32);

/// A parameter value. Sent in text format in every mode (as pgbench does); in simple mode it is
/// interpolated into the SQL text verbatim (no quoting, as pgbench).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(&'a str),
}

/// What one statement returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StmtResult {
    /// DataRow messages received.
    pub rows: u64,
    /// The count in the CommandComplete tag (`UPDATE 1` -> 1), 0 when the tag has none.
    pub affected: u64,
}

pub struct Session {
    _private: (),
}

impl Session {
    /// Connect (TCP or unix socket, TLS per sslmode), authenticate (trust, password, md5,
    /// SCRAM-SHA-256), and wait for ReadyForQuery. Tries each host in order.
    pub async fn connect(cfg: &ConnConfig) -> Result<Session, Error> {
        let _ = cfg;
        todo!("Session::connect")
    }

    /// `server_version_num`, e.g. 150018.
    pub fn server_version_num(&self) -> u32 {
        todo!()
    }

    /// A ParameterStatus value reported by the server (server_version, TimeZone, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        let _ = name;
        todo!()
    }

    pub fn backend_pid(&self) -> i32 {
        todo!()
    }

    /// False once an I/O error or protocol violation happened; the session must be dropped.
    pub fn is_usable(&self) -> bool {
        todo!()
    }

    // ----- setup path (not hot) -----

    /// Run one or more `;`-separated statements with the simple protocol; returns the rows of all
    /// results in text form (NULL as `None`).
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, Error> {
        let _ = sql;
        todo!()
    }

    /// Start `COPY ... FROM STDIN`. Then `copy_data` any number of times and `copy_finish`.
    pub async fn copy_in(&mut self, sql: &str) -> Result<(), Error> {
        let _ = sql;
        todo!()
    }

    /// Send one chunk of COPY data (any size; rows may span chunks).
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), Error> {
        let _ = data;
        todo!()
    }

    /// End the COPY; returns the row count the server reports.
    pub async fn copy_finish(&mut self) -> Result<u64, Error> {
        todo!()
    }

    /// Abort a COPY in progress (CopyFail) with a reason; the server rolls it back.
    pub async fn copy_fail(&mut self, reason: &str) -> Result<(), Error> {
        let _ = reason;
        todo!()
    }

    // ----- hot path -----

    /// Register a statement written with `$1..$n` placeholders for use in `mode`. Cheap and local:
    /// nothing is sent. In simple mode the text is pre-split at the placeholders; in prepared mode
    /// the statement is parsed on the server by [`Session::prepare_all`].
    pub fn register(&mut self, sql: &str, mode: QueryMode) -> StmtId {
        let _ = (sql, mode);
        todo!()
    }

    /// Prepared mode: Parse every registered statement not yet prepared, with one Sync.
    pub async fn prepare_all(&mut self) -> Result<(), Error> {
        todo!()
    }

    /// Run one statement and wait for its result and ReadyForQuery (one round trip). In simple
    /// mode a Query message; otherwise [Parse] Bind Execute Sync. A server error comes back as
    /// `Err(Error::Db)`, with the session still usable.
    pub async fn execute(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<StmtResult, Error> {
        let _ = (stmt, params);
        todo!()
    }

    /// Pipeline (extended and prepared modes only): append [Parse] Bind Execute for a statement
    /// to the output buffer without sending it.
    pub fn queue(&mut self, stmt: StmtId, params: &[Value<'_>]) {
        let _ = (stmt, params);
        todo!()
    }

    /// Pipeline: append a Sync.
    pub fn queue_sync(&mut self) {
        todo!()
    }

    /// Pipeline: send everything queued, in as few writes as possible.
    pub async fn flush(&mut self) -> Result<(), Error> {
        todo!()
    }

    /// Pipeline: the result of the next queued statement. After an error, the statements up to the
    /// next Sync come back as `Err(Error::Db)` with SQLSTATE `"PIPAB"` (pipeline aborted, not a
    /// server code).
    pub async fn read_result(&mut self) -> Result<StmtResult, Error> {
        todo!()
    }

    /// Pipeline: consume through the next ReadyForQuery.
    pub async fn read_ready(&mut self) -> Result<(), Error> {
        todo!()
    }

    /// Columns of the first row of the last statement's result, text format (for `\gset`).
    pub fn first_row(&self) -> Option<Vec<Option<&str>>> {
        todo!()
    }

    /// Send Terminate and close.
    pub async fn close(self) {
        todo!()
    }
}
