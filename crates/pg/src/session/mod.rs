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
//! Owns: the transport (TCP with TCP_NODELAY, unix socket, TLS over TCP — an enum, not a trait
//! object, so reads and writes are direct calls; plain sockets registered for read readiness
//! only, see `socket`), startup and authentication (trust, cleartext,
//! md5, SCRAM-SHA-256 through `postgres_protocol::authentication`), the three query modes of
//! pgbench's `-M`, pipelining, COPY FROM STDIN for loaders, and the wire-level transaction count
//! ([`Session::server_commits`]).
//!
//! Buffers: one input buffer and one output buffer per session, both reused. Backend messages
//! are parsed in place in the input buffer (no per-message `Bytes`); a round trip is one write
//! and usually one read. Parameters and results are text format, as pgbench's.
//!
//! Buffer sizes (issue 4: at most 24 KiB of client memory per connection at 10,000
//! connections). A session starts small: [`IN_START`] = 2 KiB of input, [`OUT_START`] = 512 B of
//! output, room for 8 requests in flight, and the server's ParameterStatus values in one string.
//! An OLTP reply (BindComplete, a DataRow, CommandComplete, ReadyForQuery: 50-300 bytes) and a
//! transaction's Bind/Execute messages (tpcb-like prepared: ~400 bytes) fit, so the usual round
//! trip never grows anything. Larger results grow the input buffer on demand: `fill` doubles the
//! read size (up to [`IN_KEEP`]) whenever a read filled all the free space, so a 100-row range
//! select (sysbench: ~13 KB) is read in one or two system calls, not a dozen, and the buffer
//! keeps its size while results stay that large: no allocation per statement. After an unusually
//! large result or request (more than [`IN_KEEP`] / [`OUT_KEEP`] = 64 KiB: COPY, a big
//! `SELECT *`), the buffer is dropped back to its start size at the next ReadyForQuery when
//! nothing is buffered (one comparison per statement). Measured (stampede run -S -M prepared
//! -R 100, `ru_maxrss` of the whole process divided by the connections, 2 engine threads, PostgreSQL
//! 15 on a unix socket): 16 KiB input buffer, 2 KiB output, 64-entry queues before: 39 KiB per
//! connection at 2,000 connections; after (with the engine's changes of the same issue): see
//! `bench/RESULTS.md` and the engine's module header for the figures at 5,000 and 10,000.
//!
//! Protocol references are to the PostgreSQL docs, chapter "Frontend/Backend Protocol", sections
//! "Message Flow" (Start-up, Simple Query, Extended Query, Pipelining, COPY Operations, Asynchronous
//! Operations) and "Message Formats".
//!
//! Module layout (one `Session`, its `impl` spread by responsibility):
//!
//! * this file: the `Session` type and its state, the public value types, accessors,
//!   `execute`, `simple_query`, result capture and `close`;
//! * `io`: the transport, connecting (hosts, sslmode fall-back, TLS negotiation), reading
//!   and writing the buffers, message framing;
//! * `auth`: the start-up message and authentication;
//! * `encode`: statement registration, the pre-encoded Parse/Bind, simple-mode interpolation;
//! * `decode`: backend message parsing, events, results, captured results;
//! * `pipeline`: `queue`, `flush`, `read_result`, `read_ready`;
//! * `copy`: COPY FROM STDIN.

mod auth;
mod copy;
mod decode;
mod encode;
mod io;
mod pipeline;
pub mod socket;
#[cfg(test)]
mod tests;
pub mod timer;
pub mod transport;

use std::collections::VecDeque;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::{DbError, Error};

use decode::{row_columns, Capture};
pub use decode::{CapturedResult, Columns};
pub use encode::dollar_placeholder;
use encode::{put_interpolated_query, Seg};
pub use timer::{ConnectTimer, TokioTimer};
use transport::Transport;

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

/// Initial capacity of the input buffer, and the smallest read: an OLTP reply fits (see the
/// module header for why these sizes).
const IN_START: usize = 2 * 1024;
/// Above this the input buffer is shrunk back to [`IN_START`] once drained, and reads never ask
/// for more than this at a time.
const IN_KEEP: usize = 64 * 1024;
/// Initial capacity of the output buffer: a transaction's Bind/Execute messages fit (it grows as
/// needed and keeps its size up to [`OUT_KEEP`]).
const OUT_START: usize = 512;
/// Above this the output buffer is shrunk back to [`OUT_START`] at the next ReadyForQuery.
const OUT_KEEP: usize = 64 * 1024;
/// Initial capacity of the queues of requests in flight (`sent`, `pipe`): a pipelined tpcb-like
/// transaction has 7 entries; longer pipelines grow them once.
const QUEUE_START: usize = 8;
/// Backend messages larger than this are treated as a protocol violation (the server's own limit
/// for a field is 1 GB).
const MAX_MESSAGE: usize = 1 << 30;

/// SQLSTATE reported for statements skipped after an error in a pipeline (not a server code).
pub const PIPELINE_ABORTED: &str = "PIPAB";
#[derive(Clone, Copy, PartialEq, Eq)]

enum PrepState {
    Unprepared,
    /// A Parse was sent; ParseComplete not yet seen.
    InFlight,
    Prepared,
}

struct Stmt {
    sql: String,
    mode: QueryMode,
    /// Server-side name in prepared mode (`s0`, `s1`, ...).
    name: String,
    state: PrepState,
    /// Simple mode: the text split at `$n` placeholders.
    segs: Vec<Seg>,
    /// The SQL text contains a NUL byte: it cannot be sent in a Parse or a Query (checked once,
    /// at registration, instead of a scan of the text per execution).
    nul: bool,
    /// The whole Parse message for this statement (named in prepared mode, unnamed otherwise),
    /// encoded once at registration (empty when `nul`).
    parse_msg: Vec<u8>,
    /// The constant middle of its Bind message, encoded once at registration: portal name (""),
    /// statement name, and zero parameter format codes (all text). `encode_extended` writes
    /// only the message header, the parameter values and the trailer around it.
    bind_head: Vec<u8>,
    /// Capture the results of [`Session::execute`] (column names, last row, row count) and, in
    /// extended and prepared modes, send a Describe of the portal so the column names come back.
    /// Set by [`Session::capture_results`].
    describe: bool,
}

/// What a sent message will produce, in order, so replies can be matched to requests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// A Parse of statement `Some(i)` (named) or the unnamed statement.
    Parse(Option<u32>),
    /// Something that ends with ReadyForQuery (Sync, Query).
    Sync,
}

/// Pipeline bookkeeping for `read_result`/`read_ready`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pipe {
    Stmt,
    Sync,
}

pub struct Session {
    io: Transport,
    inb: BytesMut,
    out: BytesMut,
    /// `host=... port=...` of the connected host, for messages.
    target: String,
    /// The host of the target this session is connected to (of several: which one).
    endpoint: crate::conninfo::HostSpec,
    stmts: Vec<Stmt>,
    /// ParameterStatus values as `name\0value\0` pairs in one string: a dozen pairs arrive at
    /// start-up, are read rarely, and as separate `String`s cost ~1 KiB per session.
    params: String,
    /// How much `fill` makes room for before a read: starts at [`IN_START`], doubles (up to
    /// [`IN_KEEP`]) when a read fills all the free space.
    read_size: usize,
    pid: i32,
    secret_key: i32,
    version_num: u32,
    broken: bool,
    status: u8,
    commits: u64,
    /// Work ran in the current transaction since the last commit or rollback (see
    /// [`Session::server_commits`]).
    open_work: bool,
    /// The implicit transaction open now did nothing but parse statements.
    parse_only: bool,
    /// The part of `commits` that were such parse-only transactions.
    parse_commits: u64,
    /// Statements the server completed, by the kind their CommandComplete tag names, and the
    /// ones it refused ([`Session::tally`]).
    tally: measure::ledger::Tally,
    /// Left out of `measure::ledger::closed` ([`Session::unrecorded`]).
    unrecorded: bool,
    /// DataRows so far in the current statement's result.
    cur_rows: u64,
    /// The body of the first DataRow of the last result, when `has_row`.
    row: Vec<u8>,
    has_row: bool,
    sent: VecDeque<Sent>,
    pipe: VecDeque<Pipe>,
    aborted: bool,
    /// An encoding failure in `queue` (which cannot return one), reported by `flush`.
    deferred: Option<Error>,
    collect: Option<Vec<Vec<Option<String>>>>,
    in_copy: bool,
    /// Results kept for `\gset`/`\aset` ([`Session::capture_results`]).
    cap: Capture,
    /// The last [`Session::execute`] ran a COPY (its data refused or discarded).
    copied: bool,
    /// NoticeResponses (NOTICE, WARNING, ...) not yet taken ([`Session::take_notices`]); empty,
    /// and unallocated, unless the server sent one. At most [`MAX_NOTICES`] are kept.
    notices: Vec<DbError>,
}

/// The process-wide record of what closed sessions sent (`measure::ledger::closed`): every
/// session counts there once, however it ends.
impl Drop for Session {
    fn drop(&mut self) {
        if !self.unrecorded {
            measure::ledger::session_closed(&self.tally);
        }
    }
}

/// Notices kept between two [`Session::take_notices`]: a statement that warns on every
/// execution must not grow a session nobody drains (a loader's, a setup session's).
const MAX_NOTICES: usize = 64;

/// A server error with a position gets the statement's text, for libpq's cursor display (only
/// then: the text is copied on that rare path alone).
fn with_statement(e: Error, text: impl FnOnce() -> String) -> Error {
    match e {
        Error::Db(mut db) if db.position.is_some() && db.statement.is_none() => {
            db.statement = Some(text());
            Error::Db(db)
        }
        e => e,
    }
}

/// The `(name, value)` pairs of a `name\0value\0...` string (see `Session::params`).
fn param_pairs(s: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut it = s.split('\0');
    std::iter::from_fn(move || match (it.next(), it.next()) {
        (Some(k), Some(v)) => Some((k, v)),
        _ => None,
    })
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn protocol(msg: impl Into<String>) -> Error {
    Error::Protocol(msg.into())
}

impl Session {
    /// `server_version_num`, e.g. 150018.
    pub fn server_version_num(&self) -> u32 {
        self.version_num
    }

    /// A ParameterStatus value reported by the server (server_version, TimeZone, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        param_pairs(&self.params)
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// After ReadyForQuery: drop a buffer that an unusually large result or request grew beyond
    /// what a session keeps (see the module header). One comparison each when nothing was
    /// large; never allocates on the usual path.
    #[inline]
    pub(super) fn trim_buffers(&mut self) {
        if self.inb.capacity() > IN_KEEP && self.inb.is_empty() {
            self.inb = BytesMut::with_capacity(IN_START);
            self.read_size = IN_START;
        }
        if self.out.capacity() > OUT_KEEP && self.out.is_empty() {
            self.out = BytesMut::with_capacity(OUT_START);
        }
    }

    /// The host (of the target's several) this session is connected to.
    pub fn host(&self) -> &crate::conninfo::HostSpec {
        &self.endpoint
    }

    pub fn backend_pid(&self) -> i32 {
        self.pid
    }

    /// The secret key from BackendKeyData (for a CancelRequest).
    pub fn backend_secret_key(&self) -> i32 {
        self.secret_key
    }

    /// Whether [`Session::use_ring`] can move this session onto an io_uring ring (a plain unix or
    /// TCP socket; TLS sessions stay on the runtime's epoll).
    pub fn can_use_ring(&self) -> bool {
        self.io.can_use_ring()
    }

    /// Move the session's socket onto this thread's [`crate::ring::Ring`]: from then on it must
    /// be driven by that ring's `block_on` on this thread. Call between requests (nothing in
    /// flight). A TLS session is left as it is (see [`Session::can_use_ring`]).
    pub fn use_ring(&mut self) -> Result<(), Error> {
        self.io.use_ring().map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
    }

    /// Whether the session can go into blocking mode ([`Session::use_blocking`]): a plain socket
    /// (TLS sessions cannot).
    pub fn can_block(&self) -> bool {
        self.io.can_block()
    }

    /// Blocking mode for the engine's thread-per-client runs (`socket`'s "Blocking mode"): from
    /// then on the session needs no runtime, and a wait `unblock` calls off fails the session
    /// with [`Session::released`] true. Call between requests. A TLS session is left as it is.
    pub fn use_blocking(&mut self, unblock: std::sync::Arc<socket::Unblock>) -> Result<(), Error> {
        self.io.use_blocking(unblock).map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
    }

    /// Whether the session failed because a blocking wait was given up at the run's end (not
    /// the server's doing): what it had in flight may or may not have happened.
    pub fn released(&self) -> bool {
        self.io.released()
    }

    /// The session's socket descriptor, on any transport (none only while the socket moves onto
    /// a ring). The engine duplicates it to cut off a transaction still waiting at the run's end
    /// (`shutdown(2)` wakes the read).
    pub fn socket_fd(&self) -> Option<std::os::fd::RawFd> {
        self.io.raw_fd()
    }

    /// Whether the last [`Session::execute`] ran a COPY: FROM STDIN is refused (CopyFail, the
    /// statement fails), TO STDOUT's data is read and dropped. pgbench aborts a client whose
    /// script runs one.
    pub fn copied(&self) -> bool {
        self.copied
    }

    /// Whether the server sent notices (NOTICE, WARNING, ...) since the last
    /// [`Session::take_notices`]: one comparison, for the engine to check after a transaction.
    #[inline]
    pub fn has_notices(&self) -> bool {
        !self.notices.is_empty()
    }

    /// The notices the server sent since the last call, oldest first (their `Display` is libpq's
    /// rendering, as psql and pgbench print them on standard error).
    pub fn take_notices(&mut self) -> Vec<DbError> {
        std::mem::take(&mut self.notices)
    }

    /// False once an I/O error or protocol violation happened; the session must be dropped.
    pub fn is_usable(&self) -> bool {
        !self.broken
    }

    /// The transaction status of the last ReadyForQuery: `b'I'` idle, `b'T'` in a transaction
    /// block, `b'E'` in a failed transaction block.
    pub fn transaction_status(&self) -> u8 {
        self.status
    }

    /// Transactions this session ended with a commit, as seen on the wire, for reconciling with
    /// the server's `pg_stat_database.xact_commit`. Counted:
    ///
    /// * each CommandComplete tagged `COMMIT` (an explicit COMMIT/END that committed; a COMMIT of
    ///   a failed transaction block is tagged `ROLLBACK` and is not counted);
    /// * each ReadyForQuery with status `I` that ends an implicit transaction in which work ran
    ///   since the last commit/rollback (a CommandComplete other than COMMIT/ROLLBACK, an
    ///   EmptyQueryResponse, ParseComplete or BindComplete) and no ErrorResponse came after it.
    ///
    /// So `BEGIN; UPDATE; COMMIT` counts 1, an autocommit statement 1, a pipeline segment up to
    /// Sync 1 (one implicit transaction), `prepare_all` 1 (the server parses inside a
    /// transaction), a failed autocommit statement or a ROLLBACK 0. Not counted: the
    /// transactions the server runs during connection start-up, and `PREPARE TRANSACTION`/`COMMIT
    /// PREPARED` are counted as ordinary statements.
    pub fn server_commits(&self) -> u64 {
        self.commits
    }

    /// The part of [`Session::server_commits`] made of implicit transactions that only parsed
    /// statements (a prepare on its own, as a script's statement before its first execution in
    /// prepared mode): setup, not a workload's transaction.
    pub fn parse_commits(&self) -> u64 {
        self.parse_commits
    }

    /// The statements this session's server completed, by kind (the CommandComplete tag), with
    /// their rows, and the ErrorResponses it sent: the client's side of the statement ledger
    /// (`measure::ledger`). Counted for every statement, setup and measured alike.
    pub fn tally(&self) -> &measure::ledger::Tally {
        &self.tally
    }

    /// Leave this session out of the process's record of closed sessions
    /// (`measure::ledger::closed`): a session that counts its own statements apart (the
    /// statement ledger's baseline, which reads the server's counters in it).
    pub fn unrecorded(&mut self) {
        self.unrecorded = true;
    }

    fn check_ready(&self) -> Result<(), Error> {
        if self.broken {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the session is unusable after an earlier I/O error or protocol violation; reconnect",
            )));
        }
        if self.in_copy {
            return Err(Error::Config(
                "a COPY is in progress: call copy_finish or copy_fail first".into(),
            ));
        }
        if !self.pipe.is_empty() {
            return Err(Error::Config(
                "a pipeline is in progress: read its results (read_result/read_ready) first".into(),
            ));
        }
        Ok(())
    }

    // ----- setup path (not hot) -----

    /// Run one or more `;`-separated statements with the simple protocol; returns the rows of all
    /// results in text form (NULL as `None`).
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, Error> {
        self.check_ready()?;
        frontend::query(sql, &mut self.out)
            .map_err(|_| Error::Config("SQL text may not contain a NUL byte".into()))?;
        self.sent.push_back(Sent::Sync);
        self.write_out().await?;
        self.collect = Some(Vec::new());
        let r = self.run_to_ready().await;
        let rows = self.collect.take().unwrap_or_default();
        r.map(|_| rows)
            .map_err(|e| with_statement(e, || sql.to_string()))
    }

    /// Run one statement and wait for its result and ReadyForQuery (one round trip). In simple
    /// mode a Query message; otherwise [Parse] Bind Execute Sync. A server error comes back as
    /// `Err(Error::Db)`, with the session still usable.
    pub async fn execute(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
    ) -> Result<StmtResult, Error> {
        self.check_ready()?;
        let Some(st) = self.stmts.get(stmt.0 as usize) else {
            return Err(Error::Config(format!("unknown statement id {}", stmt.0)));
        };
        self.cap.start(st.describe);
        self.copied = false;
        if st.mode == QueryMode::Simple {
            put_interpolated_query(&mut self.out, &st.sql, &st.segs, params)?;
        } else {
            self.encode_extended(stmt, params)?;
            frontend::sync(&mut self.out);
        }
        self.sent.push_back(Sent::Sync);
        self.has_row = false;
        self.cur_rows = 0;
        self.write_out().await?;
        match self.run_to_ready().await {
            Ok(r) => Ok(r),
            Err(e) => Err(with_statement(e, || self.statement_text(stmt, params))),
        }
    }

    /// The text the server parsed for `stmt`: in simple mode the SQL with the values
    /// interpolated (what was sent, so an error position points into it), else the SQL.
    fn statement_text(&self, stmt: StmtId, params: &[Value<'_>]) -> String {
        let Some(st) = self.stmts.get(stmt.0 as usize) else {
            return String::new();
        };
        if st.mode != QueryMode::Simple {
            return st.sql.clone();
        }
        let mut buf = BytesMut::new();
        match put_interpolated_query(&mut buf, &st.sql, &st.segs, params) {
            // A Query message: tag, length, the text, NUL.
            Ok(()) if buf.len() > 6 => String::from_utf8_lossy(&buf[5..buf.len() - 1]).into_owned(),
            _ => st.sql.clone(),
        }
    }

    /// Capture the results of `stmt` whenever [`Session::execute`] runs it (pgbench's `\gset` and
    /// `\aset`): each result's column names, row count and last row, read with
    /// [`Session::captured`]. In extended and prepared modes the statement is sent with a
    /// Describe of its portal (its RowDescription carries the names); simple-mode queries always
    /// return one. Statements without capture cost nothing more. Not for [`Session::queue`]
    /// (pgbench forbids `\gset` in a pipeline).
    pub fn capture_results(&mut self, stmt: StmtId) {
        if let Some(st) = self.stmts.get_mut(stmt.0 as usize) {
            st.describe = true;
        }
    }

    /// The results of the last [`Session::execute`] of a capturing statement, in order (several
    /// for a simple-mode compound statement `a\; b`); empty for other statements. After an error
    /// the results before it are present.
    pub fn captured(&self) -> impl Iterator<Item = CapturedResult<'_>> + '_ {
        let n = if self.cap.on { self.cap.n } else { 0 };
        self.cap.slots[..n]
            .iter()
            .map(|slot| CapturedResult { slot })
    }

    /// Columns of the first row of the last statement's result, text format (for `\gset`).
    pub fn first_row(&self) -> Option<Vec<Option<&str>>> {
        if !self.has_row {
            return None;
        }
        let cols = row_columns(&self.row)?;
        // The session asks for client_encoding UTF8, so text columns are UTF-8.
        Some(
            cols.into_iter()
                .map(|c| c.map(|v| std::str::from_utf8(v).unwrap_or("")))
                .collect(),
        )
    }

    /// Column `i` (0-based) of the first row of the last statement's result, text format;
    /// `None` for NULL, for no row, or past the last column. Reads the row in place: no
    /// allocation (a workload that reads values on its hot path, as TPC-C's do, uses this).
    pub fn row_value(&self, i: usize) -> Option<&str> {
        if !self.has_row {
            return None;
        }
        let b = &self.row;
        let n = i16::from_be_bytes([*b.first()?, *b.get(1)?]).max(0) as usize;
        if i >= n {
            return None;
        }
        let mut pos = 2;
        for k in 0..=i {
            let len = be_i32(b.get(pos..pos + 4)?);
            pos += 4;
            if len < 0 {
                if k == i {
                    return None;
                }
                continue;
            }
            let end = pos + len as usize;
            if k == i {
                return std::str::from_utf8(b.get(pos..end)?).ok();
            }
            pos = end;
        }
        None
    }

    /// Send Terminate and close.
    pub async fn close(mut self) {
        if !self.broken {
            self.out.clear();
            frontend::terminate(&mut self.out);
            let _ = self.write_out().await;
        }
        self.io.shutdown().await;
    }
}
