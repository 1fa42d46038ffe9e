//! One connection to a MySQL or MariaDB server, speaking the client/server protocol by hand, with
//! the surface of `pg::Session` (connect, register, prepare_all, execute, simple_query,
//! row_value, transaction_status, server_commits, close) so that the engine can drive either.
//!
//! Why by hand: the same reasons as the PostgreSQL session's (its module header has the
//! measurement against tokio-postgres): a statement is one write and usually one read, encoded
//! straight into one reusable output buffer and parsed in place in one reusable input buffer,
//! with no channel, no task and no per-row object between the caller and the socket. The MySQL
//! crates were not measured here; `mysql_async` (the well-kept async one) hands each row over as
//! a `Row` of `Value`s, at least one allocation per row, which this session's no-allocation rule
//! excludes.
//!
//! Measured (examples/point_select.rs against `sysbench oltp_point_select --threads=1` with
//! Debian's sysbench 1.0.20 and its libmariadb driver, both on one private MariaDB 10.11 with a
//! 10,000-row sbtest1, 50,000 prepared point selects each, client user + system CPU from
//! getrusage / time(1), 2 shared cores, three alternated runs): over the unix socket this
//! session 21.4-26.4 us per select (user 1.4-3.0 us) against sysbench's 22.4-26.2 us (user
//! 3.0-5.2 us); over TCP 25.3-26.9 us against 29.2-30.2 us. The user-space part is 0.4-0.6x
//! sysbench's; the total is 0.9-1.0x because it is nearly all kernel time of the round trip,
//! the same for both clients (`strace -c`: this session's send, epoll_wait and recv per
//! statement; sysbench's send and recv, with a poll after the one recv in four that finds
//! nothing yet). The 0.7x bar therefore needs fewer system calls per round trip
//! (the PostgreSQL session's io_uring ring, `pg::ring`), not less user-space work.
//!
//! **The hot path does not allocate.** `execute` of a prepared statement encodes
//! COM_STMT_EXECUTE into the output buffer (parameter types and values written in place), writes
//! it once, and reads the reply in place: the column definitions into a reused type vector, the
//! first row into a reused row buffer (binary values turned into their text form there, so that
//! [`Session::row_value`] reads text as on the PostgreSQL session), the OK/EOF's status flags
//! into the session. `tests/hot_path_alloc.rs` counts allocations with a counting global
//! allocator: zero over 500 steady-state executions in each mode.
//!
//! Owns: the transport (TCP with TCP_NODELAY, unix socket, TLS over TCP: an enum), the
//! handshake and authentication (`handshake`), statements and their encoding (`stmt`), replies
//! (`reply`), and the wire-level transaction count.
//!
//! Protocol references are to the MySQL Source Code Documentation, "Client/Server Protocol":
//! "Connection Phase" (Initial Handshake, Protocol::HandshakeV10, HandshakeResponse41,
//! SSLRequest, AuthSwitchRequest, AuthMoreData), "Text Protocol" (COM_QUERY and its response,
//! Text Resultset, Column Definition), "Prepared Statements" (COM_STMT_PREPARE, COM_STMT_EXECUTE,
//! Binary Protocol Resultset, COM_STMT_CLOSE), "Multi-Resultset", and MariaDB's pages of the same
//! names where MariaDB differs.
//!
//! Choices that differ from libmysqlclient's defaults, each so that the two protocols mean the
//! same thing to a workload:
//! * CLIENT_FOUND_ROWS is set: `affected` counts the rows an UPDATE matched, as PostgreSQL's
//!   `UPDATE n` does (Connector/J's default too), not only those it changed.
//! * Placeholders may be written `$1..$n` as for PostgreSQL, or `?` (see `sql`); a statement
//!   registered verbatim ([`Session::register_verbatim`]) has none: its one parameter is the
//!   whole text, as pgbench's simple mode substitutes it.
//! * [`QueryMode::Simple`] sends COM_QUERY with the values interpolated as SQL literals (text
//!   quoted and escaped, as sysbench's client-side statements do); [`QueryMode::Extended`] prepares,
//!   executes and closes the statement each time (two round trips: the statement id must come
//!   back before it can be executed); [`QueryMode::Prepared`] prepares once per session.
//!
//! Module layout: this file has the `Session` type, its accessors and the public entry points;
//! `io` the transport, reading and packet framing; `handshake` connecting and authentication;
//! `stmt` registration, preparation and encoding; `reply` reading results; `capture` the results
//! kept for pgbench's `\gset`/`\aset` (only for statements registered to capture them).

mod capture;
mod handshake;
mod io;
mod reply;
mod stmt;
#[cfg(test)]
mod tests;

use bytes::BytesMut;
use pg::{Error, QueryMode, StmtId, StmtResult, Value};

use crate::sql::Kind;
use crate::wire;
use pg::Transport;
use stmt::Stmt;

pub use capture::{CapturedColumns, CapturedResult};

/// Initial capacity of the input buffer: an OLTP reply (column definitions, a row, an OK) fits.
const IN_START: usize = 2 * 1024;
/// Above this the input buffer is shrunk back to [`IN_START`] once drained, and reads never ask
/// for more than this at a time (as the PostgreSQL session).
const IN_KEEP: usize = 64 * 1024;
/// Initial capacity of the output buffer.
const OUT_START: usize = 512;
/// Above this the output buffer is shrunk back to [`OUT_START`] after a reply.
const OUT_KEEP: usize = 64 * 1024;

/// A column of a binary result: what decoding its values needs.
#[derive(Clone, Copy, Debug, Default)]
struct Column {
    ty: u8,
    unsigned: bool,
    decimals: u8,
}

/// Where the reader is in a reply ("Text Resultset", "Binary Protocol Resultset").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The first packet of a result: OK, ERR or a column count.
    Head,
    /// Column definitions still to come.
    Columns(u64),
    /// The EOF after the column definitions (servers without CLIENT_DEPRECATE_EOF).
    ColumnsEof,
    Rows,
}

pub struct Session {
    io: Transport,
    inb: BytesMut,
    out: BytesMut,
    /// `socket "..."` or `host "..." port n`, for messages.
    target: String,
    /// The capabilities both sides agreed on.
    caps: u32,
    server_version: String,
    connection_id: u32,
    /// TLS, or a unix socket: a cleartext password may be sent.
    secure: bool,
    tls: bool,
    /// Server status flags of the last OK/EOF (or the handshake).
    status: u16,
    broken: bool,
    /// The sequence id the next packet of the current exchange carries.
    seq: u8,
    /// Where the packet being written starts in `out`.
    packet_start: usize,
    /// How much `fill` makes room for before a read (doubles while reads fill the buffer).
    read_size: usize,
    /// A multi-packet payload joined in place at the head of `inb`: its length (0: none).
    joined: usize,
    stmts: Vec<Stmt>,
    // ----- the reply being read -----
    phase: Phase,
    binary: bool,
    columns: Vec<Column>,
    cur_rows: u64,
    /// The first row of the last result as length-encoded text values (0xFB for NULL).
    row: Vec<u8>,
    has_row: bool,
    collect: Option<Vec<Vec<Option<String>>>>,
    /// The transaction kinds of the statements of the request being answered, one per result
    /// (the last one repeats), and the index of the current one.
    kinds: Vec<Kind>,
    kind_at: usize,
    warnings: u16,
    last_insert_id: u64,
    commits: u64,
    explicit_commits: u64,
    /// COMMIT statements the server answered with an error (a Galera certification failure).
    commit_errors: u64,
    /// Statements the server completed, by kind (from their text), with their rows, and the
    /// ones it refused ([`Session::tally`]).
    tally: measure::ledger::Tally,
    /// Left out of `measure::ledger::closed` ([`Session::unrecorded`]).
    unrecorded: bool,
    /// Results kept for `\gset`/`\aset` ([`Session::capture_results`]).
    cap: capture::Capture,
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

impl Session {
    /// The server's version string, without MariaDB's `5.5.5-` replication prefix
    /// (`10.11.19-MariaDB-0+deb12u1`, `8.0.36`).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Whether the server is MariaDB.
    pub fn is_mariadb(&self) -> bool {
        self.server_version.contains("MariaDB")
    }

    /// The server's id for this connection (`CONNECTION_ID()`, the `Id` of `SHOW PROCESSLIST`,
    /// what `KILL` takes).
    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// Whether the connection is encrypted with TLS.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// False once an I/O error, a protocol violation or an error that ends the connection
    /// happened; the session must be dropped.
    pub fn is_usable(&self) -> bool {
        !self.broken
    }

    /// Whether [`Session::use_ring`] can move this session onto an io_uring ring (a plain unix
    /// or TCP socket; TLS stays on the runtime's epoll).
    pub fn can_use_ring(&self) -> bool {
        self.io.can_use_ring()
    }

    /// Move the session's socket onto this thread's ring (`pg::Session::use_ring`): from then on
    /// it must be driven by that ring's `block_on` on this thread. Call between commands.
    pub fn use_ring(&mut self) -> Result<(), Error> {
        self.io.use_ring().map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
    }

    /// Whether the session can go into blocking mode (a plain socket; TLS cannot).
    pub fn can_block(&self) -> bool {
        self.io.can_block()
    }

    /// Blocking mode for the engine's thread-per-client runs (`pg::PlainSocket::use_blocking`,
    /// shared with the PostgreSQL session). Call between commands; TLS is left as it is.
    pub fn use_blocking(&mut self, unblock: std::sync::Arc<pg::Unblock>) -> Result<(), Error> {
        self.io.use_blocking(unblock).map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
    }

    /// Whether the session failed because a blocking wait was given up at the run's end.
    pub fn released(&self) -> bool {
        self.io.released()
    }

    /// The session's socket descriptor (`pg::Session::socket_fd`).
    pub fn socket_fd(&self) -> Option<std::os::fd::RawFd> {
        self.io.raw_fd()
    }

    /// `b'T'` while a transaction is open (SERVER_STATUS_IN_TRANS in the last OK or EOF packet),
    /// else `b'I'`. Never `b'E'`: MySQL has no failed-transaction state (an error leaves the
    /// transaction open, except a deadlock (1213), after which InnoDB has rolled it back and
    /// this says `b'I'`).
    pub fn transaction_status(&self) -> u8 {
        if self.status & wire::SERVER_STATUS_IN_TRANS != 0 {
            b'T'
        } else {
            b'I'
        }
    }

    /// The statements this session's server completed, by kind (from each statement's text:
    /// MySQL's replies name none), with their rows (returned by selects, affected by writes),
    /// and the ERR packets it sent: the client's side of the statement ledger
    /// (`measure::ledger`).
    pub fn tally(&self) -> &measure::ledger::Tally {
        &self.tally
    }

    /// Leave this session out of the process's record of closed sessions
    /// (`measure::ledger::closed`): a session that counts its own statements apart (the
    /// statement ledger's baseline, which reads the server's counters in it).
    pub fn unrecorded(&mut self) {
        self.unrecorded = true;
    }

    /// Transactions this session saw committed on the wire, best effort (the server's reply
    /// does not say "committed"; its status flags and the statement's text do):
    ///
    /// * each COMMIT statement that succeeded (one per OK; the server's `Com_commit` counts
    ///   these, whether or not a transaction was open: compare with [`Session::explicit_commits`]);
    /// * each other statement that succeeded outside a transaction with autocommit on
    ///   (SERVER_STATUS_IN_TRANS clear before and after, SERVER_STATUS_AUTOCOMMIT set), reads
    ///   included, as PostgreSQL counts an implicit transaction;
    /// * each statement other than COMMIT/ROLLBACK that succeeded while a transaction was open
    ///   and left none open: an implicit commit (DDL, `SET autocommit = 1`, LOCK TABLES).
    ///
    /// Not counted: BEGIN/START TRANSACTION (nor the implicit commit of a transaction they
    /// end), ROLLBACK, failed statements, COM_STMT_PREPARE (it runs nothing), and the
    /// statements of a multi-statement string past its last `;`-separated statement (a CALL
    /// that returns several results is taken as that many statements).
    pub fn server_commits(&self) -> u64 {
        self.commits
    }

    /// The part of [`Session::server_commits`] made of COMMIT statements: this session's share
    /// of the server's `Com_commit`.
    pub fn explicit_commits(&self) -> u64 {
        self.explicit_commits
    }

    /// COMMIT statements the server executed, whether they committed or failed (a Galera
    /// certification failure fails the COMMIT itself): the server's `Com_commit` counts both.
    pub fn commit_statements(&self) -> u64 {
        self.explicit_commits + self.commit_errors
    }

    /// Warnings of the last statement (from its OK or EOF packet).
    pub fn warnings(&self) -> u16 {
        self.warnings
    }

    /// `LAST_INSERT_ID()` as of the last OK packet.
    pub fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    /// Column `i` (0-based) of the first row of the last statement's result, as text (binary
    /// values in the text protocol's form: integers and floats in decimal, dates as
    /// `YYYY-MM-DD hh:mm:ss[.ffffff]`); `None` for NULL, for no row, or past the last column.
    /// Reads the row in place: no allocation.
    pub fn row_value(&self, i: usize) -> Option<&str> {
        if !self.has_row {
            return None;
        }
        let mut b = &self.row[..];
        for k in 0..=i {
            if *b.first()? == 0xfb {
                if k == i {
                    return None;
                }
                b = &b[1..];
                continue;
            }
            let (v, n) = wire::lenenc_str(b)?;
            if k == i {
                return std::str::from_utf8(v).ok();
            }
            b = &b[n..];
        }
        None
    }

    /// Every column of the first row of the last statement's result, as text (`None` for
    /// NULL); `None` when the result had no row. Allocates the vector (for `\gset`-style
    /// captures, not the hot path).
    pub fn first_row(&self) -> Option<Vec<Option<&str>>> {
        if !self.has_row {
            return None;
        }
        let mut b = &self.row[..];
        let mut out = Vec::new();
        while let Some(&first) = b.first() {
            if first == 0xfb {
                out.push(None);
                b = &b[1..];
                continue;
            }
            let (v, n) = wire::lenenc_str(b)?;
            out.push(Some(std::str::from_utf8(v).unwrap_or("")));
            b = &b[n..];
        }
        Some(out)
    }

    fn check_ready(&self) -> Result<(), Error> {
        if self.broken {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the session is unusable after an earlier I/O error, protocol violation or lost \
                 connection; reconnect",
            )));
        }
        Ok(())
    }

    /// After a reply: drop a buffer that an unusually large result or request grew beyond
    /// what a session keeps. One comparison each on the usual path.
    #[inline]
    fn trim_buffers(&mut self) {
        if self.inb.capacity() > IN_KEEP && self.inb.is_empty() {
            self.inb = BytesMut::with_capacity(IN_START);
            self.read_size = IN_START;
        }
        if self.out.capacity() > OUT_KEEP && self.out.is_empty() {
            self.out = BytesMut::with_capacity(OUT_START);
        }
    }

    /// Run one or more `;`-separated statements with COM_QUERY (CLIENT_MULTI_STATEMENTS);
    /// returns the rows of all results in text form (NULL as `None`). The first error stops
    /// the server's run of the statements and is returned.
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, Error> {
        self.check_ready()?;
        self.cap.start(false);
        let scan = crate::sql::scan(sql, self.backslash_escapes());
        self.kinds.clear();
        self.kinds.extend(
            scan.statements
                .iter()
                .map(|&(a, z)| crate::sql::kind(&sql[a..z])),
        );
        self.begin_command(wire::COM_QUERY);
        self.out.extend_from_slice(sql.as_bytes());
        self.end_command();
        self.write_out().await?;
        self.collect = Some(Vec::new());
        let r = self.read_reply(false).await;
        let rows = self.collect.take().unwrap_or_default();
        r.map(|_| rows)
    }

    /// Run one registered statement and wait for its result (see the module header for what
    /// each mode sends). A server error comes back as `Err(Error::Db)` with the session still
    /// usable, unless the error ends the connection ([`Session::is_usable`]).
    pub async fn execute(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
    ) -> Result<StmtResult, Error> {
        self.check_ready()?;
        let i = stmt.0 as usize;
        let Some(st) = self.stmts.get(i) else {
            return Err(Error::Config(format!("unknown statement id {}", stmt.0)));
        };
        st.check_params(params)?;
        self.kinds.clear();
        match (st.verbatim, params.first()) {
            (true, Some(Value::Text(t))) => {
                crate::sql::push_kinds(t, self.backslash_escapes(), &mut self.kinds)
            }
            _ => self.kinds.push(st.kind),
        }
        self.cap.start(st.capture);
        match st.mode {
            QueryMode::Simple => {
                self.encode_query(i, params)?;
                self.write_out().await?;
                self.read_reply(false).await
            }
            QueryMode::Prepared => {
                if self.stmts[i].server.is_none() {
                    let p = self.prepare_one(i).await?;
                    self.stmts[i].server = Some(p);
                }
                self.encode_execute(i, params, false)?;
                self.write_out().await?;
                self.read_reply(true).await
            }
            QueryMode::Extended => {
                let p = self.prepare_one(i).await?;
                self.stmts[i].server = Some(p);
                let r = self.encode_execute(i, params, true);
                self.stmts[i].server = None;
                r?;
                self.write_out().await?;
                self.read_reply(true).await
            }
        }
    }

    /// Send COM_QUIT and close.
    pub async fn close(mut self) {
        if !self.broken {
            self.out.clear();
            self.begin_command(wire::COM_QUIT);
            self.end_command();
            let _ = self.write_out().await;
        }
        self.io.shutdown().await;
    }

    /// Whether `\` escapes in string literals (the server does not run with
    /// NO_BACKSLASH_ESCAPES).
    fn backslash_escapes(&self) -> bool {
        self.status & wire::SERVER_STATUS_NO_BACKSLASH_ESCAPES == 0
    }
}
