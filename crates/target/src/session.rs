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
//! object, so reads and writes are direct calls), startup and authentication (trust, cleartext,
//! md5, SCRAM-SHA-256 through `postgres_protocol::authentication`), the three query modes of
//! pgbench's `-M`, pipelining, COPY FROM STDIN for loaders, and the wire-level transaction count
//! ([`Session::server_commits`]).
//!
//! Buffers: one input buffer and one output buffer per session, both reused. Backend messages
//! are parsed in place in the input buffer (no per-message `Bytes`); a round trip is one write
//! and usually one read. Parameters and results are text format, as pgbench's.
//!
//! Protocol references are to the PostgreSQL docs, chapter "Frontend/Backend Protocol", sections
//! "Message Flow" (Start-up, Simple Query, Extended Query, Pipelining, COPY Operations, Asynchronous
//! Operations) and "Message Formats".

use std::collections::VecDeque;
use std::io;

use bytes::{Buf, BufMut, BytesMut};
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::conninfo::{pgpass_lookup, HostSpec, SslMode};
use crate::error::DbError;
use crate::{tls, ConnConfig, Error};

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

/// Size of each read from the socket; results of OLTP statements fit in one.
const READ_CHUNK: usize = 16 * 1024;
/// Initial capacity of the output buffer: a transaction's messages fit (it grows as needed).
const OUT_START: usize = 2 * 1024;
/// COPY data is written out once the output buffer passes this.
const COPY_FLUSH_AT: usize = 64 * 1024;
/// Backend messages larger than this are treated as a protocol violation (the server's own limit
/// for a field is 1 GB).
const MAX_MESSAGE: usize = 1 << 30;

/// SQLSTATE reported for statements skipped after an error in a pipeline (not a server code).
pub const PIPELINE_ABORTED: &str = "PIPAB";

enum Transport {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Transport {
    async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read_buf(buf).await,
            Transport::Unix(s) => s.read_buf(buf).await,
            Transport::Tls(s) => s.read_buf(buf).await,
        }
    }

    async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Transport::Tcp(s) => s.write_all(data).await,
            Transport::Unix(s) => s.write_all(data).await,
            // rustls buffers records: flush pushes them to the socket.
            Transport::Tls(s) => {
                s.write_all(data).await?;
                s.flush().await
            }
        }
    }

    async fn shutdown(&mut self) {
        let _ = match self {
            Transport::Tcp(s) => s.shutdown().await,
            Transport::Unix(s) => s.shutdown().await,
            Transport::Tls(s) => s.shutdown().await,
        };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PrepState {
    Unprepared,
    /// A Parse was sent; ParseComplete not yet seen.
    InFlight,
    Prepared,
}

/// A piece of a simple-mode statement: literal SQL text, or parameter `$n` (0-based index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg {
    Lit(u32, u32),
    Param(u16),
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

/// One captured result (see [`Session::capture_results`]): buffers reused from one execution to
/// the next, so capturing allocates only while a result is larger than any before.
#[derive(Default)]
struct CapSlot {
    /// RowDescription body.
    desc: Vec<u8>,
    /// Body of the last DataRow.
    row: Vec<u8>,
    rows: u64,
    /// A RowDescription came (libpq's PGRES_TUPLES_OK), even with no rows.
    tuples: bool,
}

/// A result of a statement run with result capture on ([`Session::capture_results`]), as
/// pgbench's `readCommandResponse` sees a `PGresult`: whether it returns rows, how many, the
/// column names and the last row's values.
#[derive(Clone, Copy)]
pub struct CapturedResult<'a> {
    slot: &'a CapSlot,
}

impl<'a> CapturedResult<'a> {
    /// DataRows received.
    pub fn rows(&self) -> u64 {
        self.slot.rows
    }

    /// The statement returns rows (a RowDescription came: libpq's `PGRES_TUPLES_OK`, a SELECT
    /// with no row included); false for a command without result rows (`PGRES_COMMAND_OK`).
    pub fn returns_rows(&self) -> bool {
        self.slot.tuples
    }

    /// `(column name, value of the last row)` per column (`None` = NULL, or no row at all), text
    /// format. Parsed in place: no allocation.
    pub fn columns(&self) -> Columns<'a> {
        let d = &self.slot.desc;
        let n = if self.slot.tuples && d.len() >= 2 {
            i16::from_be_bytes([d[0], d[1]]).max(0) as usize
        } else {
            0
        };
        let r = &self.slot.row;
        let has_row = self.slot.rows > 0 && r.len() >= 2;
        Columns {
            desc: d,
            dpos: 2,
            row: if has_row { r } else { &[] },
            rpos: 2,
            left: n,
        }
    }
}

/// Iterator over a captured result's columns (see [`CapturedResult::columns`]).
pub struct Columns<'a> {
    desc: &'a [u8],
    dpos: usize,
    row: &'a [u8],
    rpos: usize,
    left: usize,
}

impl<'a> Iterator for Columns<'a> {
    type Item = (&'a str, Option<&'a str>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // RowDescription field: name (C string), table oid i32, attnum i16, type oid i32,
        // typlen i16, typmod i32, format i16 ("Message Formats").
        let rest = self.desc.get(self.dpos..)?;
        let nul = rest.iter().position(|&c| c == 0)?;
        let name = std::str::from_utf8(&rest[..nul]).unwrap_or("");
        self.dpos += nul + 1 + 18;
        let value = if self.row.len() >= self.rpos + 4 {
            let len = be_i32(&self.row[self.rpos..]);
            self.rpos += 4;
            if len < 0 {
                None
            } else {
                let end = (self.rpos + len as usize).min(self.row.len());
                let v = &self.row[self.rpos..end];
                self.rpos = end;
                Some(std::str::from_utf8(v).unwrap_or(""))
            }
        } else {
            None
        };
        Some((name, value))
    }
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

/// One step of a reply, as the readers see it.
enum Event {
    /// CommandComplete or EmptyQueryResponse.
    Done(StmtResult),
    Error(DbError),
    CopyIn,
    Ready,
}

pub struct Session {
    io: Transport,
    inb: BytesMut,
    out: BytesMut,
    /// `host=... port=...` of the connected host, for messages.
    target: String,
    stmts: Vec<Stmt>,
    params: Vec<(String, String)>,
    pid: i32,
    secret_key: i32,
    version_num: u32,
    broken: bool,
    status: u8,
    commits: u64,
    /// Work ran in the current transaction since the last commit or rollback (see
    /// [`Session::server_commits`]).
    open_work: bool,
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
}

/// Result capture state of a session.
#[derive(Default)]
struct Capture {
    /// Capturing the results of the statement being executed (its `describe` flag).
    on: bool,
    /// Captured results of the last captured execution: `slots[..n]`.
    slots: Vec<CapSlot>,
    n: usize,
    /// The current result has its RowDescription.
    desc_seen: bool,
}

impl Capture {
    fn start(&mut self, on: bool) {
        self.on = on;
        self.n = 0;
        self.desc_seen = false;
    }

    /// The slot of the result being received.
    fn current(&mut self) -> &mut CapSlot {
        if self.slots.len() <= self.n {
            self.slots.push(CapSlot::default());
        }
        &mut self.slots[self.n]
    }

    /// RowDescription of the current result.
    fn describe(&mut self, body: &[u8]) {
        let slot = self.current();
        slot.desc.clear();
        slot.desc.extend_from_slice(body);
        slot.tuples = true;
        self.desc_seen = true;
    }

    /// A DataRow of the current result: keep the last one.
    fn row(&mut self, body: &[u8]) {
        if self.desc_seen {
            let slot = self.current();
            slot.row.clear();
            slot.row.extend_from_slice(body);
        }
    }

    /// The current result ended (CommandComplete or EmptyQueryResponse) with `rows` rows.
    fn end(&mut self, rows: u64) {
        let desc_seen = self.desc_seen;
        let slot = self.current();
        if !desc_seen {
            slot.tuples = false;
        }
        slot.rows = rows;
        self.n += 1;
        self.desc_seen = false;
    }
}

fn connect_error(h: &HostSpec, e: io::Error) -> Error {
    let hint = if h.is_unix() {
        format!(
            "is the server running locally and accepting connections on Unix domain socket \"{}\"?",
            h.socket_path().display()
        )
    } else {
        format!(
            "is the server running on host \"{}\" and accepting TCP/IP connections on port {}?",
            h.host, h.port
        )
    };
    Error::Connect {
        target: h.describe(),
        source: io::Error::new(e.kind(), format!("{e}; {hint}")),
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn protocol(msg: impl Into<String>) -> Error {
    Error::Protocol(msg.into())
}

/// ErrorResponse / NoticeResponse fields (PostgreSQL docs, "Error and Notice Message Fields").
fn parse_error(body: &[u8]) -> DbError {
    let mut e = DbError {
        severity: String::new(),
        code: String::new(),
        message: String::new(),
        detail: None,
        hint: None,
    };
    let mut localized_severity = String::new();
    let mut i = 0;
    while i < body.len() && body[i] != 0 {
        let kind = body[i];
        i += 1;
        let end = body[i..]
            .iter()
            .position(|&c| c == 0)
            .map_or(body.len(), |p| i + p);
        let v = String::from_utf8_lossy(&body[i..end]).into_owned();
        i = end + 1;
        match kind {
            b'V' => e.severity = v,
            b'S' => localized_severity = v,
            b'C' => e.code = v,
            b'M' => e.message = v,
            b'D' => e.detail = Some(v),
            b'H' => e.hint = Some(v),
            _ => {}
        }
    }
    if e.severity.is_empty() {
        e.severity = localized_severity;
    }
    e
}

fn pipeline_aborted() -> DbError {
    DbError {
        severity: "ERROR".into(),
        code: PIPELINE_ABORTED.into(),
        message: "statement skipped: an earlier statement in this pipeline failed".into(),
        detail: None,
        hint: None,
    }
}

/// The count at the end of a CommandComplete tag (`INSERT 0 5` -> 5, `BEGIN` -> 0), parsed in
/// place.
fn tag_count(tag: &[u8]) -> u64 {
    let start = tag
        .iter()
        .rposition(|&c| c == b' ')
        .map_or(tag.len(), |p| p + 1);
    let digits = &tag[start..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    digits.iter().fold(0u64, |n, &d| {
        n.wrapping_mul(10).wrapping_add((d - b'0') as u64)
    })
}

/// `server_version` ("15.18 (Debian 15.18-1)", "9.6.24", "17beta1") -> `server_version_num`.
fn version_num(v: &str) -> u32 {
    let mut nums = v
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().unwrap_or(0));
    let major = nums.next().unwrap_or(0);
    let minor = nums.next().unwrap_or(0);
    if major >= 10 {
        major * 10000 + minor
    } else {
        major * 10000 + minor * 100 + nums.next().unwrap_or(0)
    }
}

/// Columns of a DataRow body (`None` = NULL), or `None` if the body is malformed.
fn row_columns(body: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    if body.len() < 2 {
        return None;
    }
    let n = i16::from_be_bytes([body[0], body[1]]).max(0) as usize;
    let mut cols = Vec::with_capacity(n);
    let mut i = 2;
    for _ in 0..n {
        if body.len() < i + 4 {
            return None;
        }
        let len = be_i32(&body[i..]);
        i += 4;
        if len < 0 {
            cols.push(None);
        } else {
            let end = i + len as usize;
            if end > body.len() {
                return None;
            }
            cols.push(Some(&body[i..end]));
            i = end;
        }
    }
    Some(cols)
}

/// Split SQL at `$n` placeholders for simple mode. A `$` counts only outside single- and
/// double-quoted text and not inside an identifier (`a$1` is an identifier in PostgreSQL); as
/// the server's own parser does for extended mode, so all three modes read `$n` the same way.
/// Dollar-quoted strings are not recognised (nor does pgbench's simple mode).
fn split_placeholders(sql: &str) -> Vec<Seg> {
    let b = sql.as_bytes();
    let mut segs = Vec::new();
    let mut lit_start = 0;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                i += 1;
            }
            None if c == b'\'' || c == b'"' => {
                quote = Some(c);
                i += 1;
            }
            None if c == b'$'
                && i + 1 < b.len()
                && b[i + 1].is_ascii_digit()
                && (i == 0
                    || !(b[i - 1].is_ascii_alphanumeric()
                        || b[i - 1] == b'_'
                        || b[i - 1] == b'$'
                        || b[i - 1] >= 0x80)) =>
            {
                let mut j = i + 1;
                let mut n: u32 = 0;
                while j < b.len() && b[j].is_ascii_digit() {
                    n = n.saturating_mul(10).saturating_add((b[j] - b'0') as u32);
                    j += 1;
                }
                if (1..=u16::MAX as u32).contains(&n) {
                    if lit_start < i {
                        segs.push(Seg::Lit(lit_start as u32, i as u32));
                    }
                    segs.push(Seg::Param((n - 1) as u16));
                    lit_start = j;
                }
                i = j;
            }
            None => i += 1,
        }
    }
    if lit_start < b.len() {
        segs.push(Seg::Lit(lit_start as u32, b.len() as u32));
    }
    segs
}

/// A parameter's text form: integers with itoa, floats with ryu (shortest round-trip form),
/// straight into the buffer. NULL is written as `NULL` (simple mode only; extended mode sends a
/// NULL length instead).
fn put_value(buf: &mut BytesMut, v: &Value<'_>) {
    match *v {
        Value::Null => buf.extend_from_slice(b"NULL"),
        Value::Int(i) => buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        Value::Float(f) => {
            // Integral values print as integers ("2", as pgbench's %.15g does), so a float that
            // holds a whole number is still valid input for an integer column; others get ryu's
            // shortest round-trip form.
            if f.is_finite() && f == f.trunc() && f.abs() < 1e15 {
                buf.extend_from_slice(itoa::Buffer::new().format(f as i64).as_bytes())
            } else if f.is_finite() {
                buf.extend_from_slice(ryu::Buffer::new().format_finite(f).as_bytes())
            } else if f.is_nan() {
                buf.extend_from_slice(b"NaN")
            } else if f > 0.0 {
                buf.extend_from_slice(b"Infinity")
            } else {
                buf.extend_from_slice(b"-Infinity")
            }
        }
        Value::Bool(b) => buf.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Text(s) => buf.extend_from_slice(s.as_bytes()),
    }
}

/// Append a Query message with the parameters interpolated verbatim (pgbench's simple mode).
fn put_interpolated_query(
    buf: &mut BytesMut,
    sql: &str,
    segs: &[Seg],
    params: &[Value<'_>],
) -> Result<(), Error> {
    // Check first so a failure leaves the buffer untouched.
    for s in segs {
        if let Seg::Param(n) = *s {
            if n as usize >= params.len() {
                return Err(Error::Config(format!(
                    "statement uses ${} but only {} parameters were given",
                    n as u32 + 1,
                    params.len()
                )));
            }
        }
    }
    let base = buf.len();
    buf.put_u8(b'Q');
    buf.put_i32(0);
    for s in segs {
        match *s {
            Seg::Lit(a, b) => buf.extend_from_slice(&sql.as_bytes()[a as usize..b as usize]),
            Seg::Param(n) => put_value(buf, &params[n as usize]),
        }
    }
    buf.put_u8(0);
    let len = (buf.len() - base - 1) as i32;
    buf[base + 1..base + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TlsWant {
    No,
    /// Ask; fall back to plaintext if the server says no.
    Prefer,
    Required,
}

/// Why one connection attempt failed, with what the sslmode fall-back rules need to know.
struct Failure {
    err: Error,
    tls_used: bool,
    /// The server refused the connection at pg_hba (SQLSTATE 28000), before any password.
    hba_reject: bool,
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure {
            err,
            tls_used: false,
            hba_reject: false,
        }
    }
}

impl Session {
    /// Connect (TCP or unix socket, TLS per sslmode), authenticate (trust, password, md5,
    /// SCRAM-SHA-256), and wait for ReadyForQuery. Tries each host in order; stops at an
    /// authentication failure, as libpq does. `connect_timeout` applies to each host.
    ///
    /// sslmode, as libpq: `disable` plaintext; `allow` plaintext first, TLS if the server refuses
    /// the plaintext connection at pg_hba; `prefer` TLS if the server offers it, plaintext if it
    /// does not, if the handshake fails, or if the server refuses the TLS connection at pg_hba;
    /// `require`/`verify-ca`/`verify-full` TLS or nothing. Unix sockets never use TLS.
    pub async fn connect(cfg: &ConnConfig) -> Result<Session, Error> {
        if cfg.hosts.is_empty() {
            return Err(Error::Config("no host to connect to".into()));
        }
        let mut last = None;
        for h in &cfg.hosts {
            let attempt = Self::connect_host(cfg, h);
            let r = match cfg.connect_timeout {
                Some(t) => match tokio::time::timeout(t, attempt).await {
                    Ok(r) => r,
                    Err(_) => Err(Error::Connect {
                        target: h.describe(),
                        source: io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "timeout expired after {} s (connect_timeout); is the server up \
                                 and reachable?",
                                t.as_secs()
                            ),
                        ),
                    }),
                },
                None => attempt.await,
            };
            match r {
                Ok(s) => return Ok(s),
                Err(e @ Error::Auth { .. }) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one host"))
    }

    async fn connect_host(cfg: &ConnConfig, h: &HostSpec) -> Result<Session, Error> {
        let want = match cfg.sslmode {
            _ if h.is_unix() => TlsWant::No,
            SslMode::Disable | SslMode::Allow => TlsWant::No,
            SslMode::Prefer => TlsWant::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => TlsWant::Required,
        };
        match Self::attempt(cfg, h, want).await {
            Ok(s) => Ok(s),
            Err(f) if cfg.sslmode == SslMode::Allow && f.hba_reject && !h.is_unix() => {
                Self::attempt(cfg, h, TlsWant::Required)
                    .await
                    .map_err(|f| f.err)
            }
            Err(f)
                if want == TlsWant::Prefer
                    && f.tls_used
                    && (f.hba_reject || matches!(f.err, Error::Tls(_))) =>
            {
                Self::attempt(cfg, h, TlsWant::No).await.map_err(|f| f.err)
            }
            Err(f) => Err(f.err),
        }
    }

    async fn attempt(cfg: &ConnConfig, h: &HostSpec, want: TlsWant) -> Result<Session, Failure> {
        let mut tls_used = false;
        let io = if h.is_unix() {
            Transport::Unix(
                UnixStream::connect(h.socket_path())
                    .await
                    .map_err(|e| connect_error(h, e))?,
            )
        } else {
            let tcp = TcpStream::connect((h.host.as_str(), h.port))
                .await
                .map_err(|e| connect_error(h, e))?;
            // Each round trip is one small write the server waits for: never delay it (Nagle).
            tcp.set_nodelay(true).map_err(|e| connect_error(h, e))?;
            if want == TlsWant::No {
                Transport::Tcp(tcp)
            } else {
                match Self::negotiate_tls(cfg, h, tcp, want).await? {
                    t @ Transport::Tls(_) => {
                        tls_used = true;
                        t
                    }
                    t => t,
                }
            }
        };
        let mut s = Session {
            io,
            // Small to start (issue 4 asks <= 24 KiB of client memory per connection at 10,000
            // connections): both grow on demand (large results, pipelines, COPY) and keep that
            // size; an OLTP round trip touches only their first page.
            inb: BytesMut::with_capacity(READ_CHUNK),
            out: BytesMut::with_capacity(OUT_START),
            target: h.describe(),
            stmts: Vec::new(),
            params: Vec::new(),
            pid: 0,
            secret_key: 0,
            version_num: 0,
            broken: false,
            status: b'I',
            commits: 0,
            open_work: false,
            cur_rows: 0,
            row: Vec::with_capacity(256),
            has_row: false,
            sent: VecDeque::with_capacity(64),
            pipe: VecDeque::with_capacity(64),
            aborted: false,
            deferred: None,
            collect: None,
            in_copy: false,
            cap: Capture::default(),
        };
        match s.startup(cfg, h).await {
            Ok(()) => Ok(s),
            Err((err, hba_reject)) => Err(Failure {
                err,
                tls_used,
                hba_reject,
            }),
        }
    }

    /// SSLRequest, then the TLS handshake if the server answers 'S' ("Message Flow", "SSL
    /// Session Encryption"). Exactly one byte is read before the handshake, so nothing the server
    /// sent in plaintext can be mistaken for data inside TLS.
    async fn negotiate_tls(
        cfg: &ConnConfig,
        h: &HostSpec,
        mut tcp: TcpStream,
        want: TlsWant,
    ) -> Result<Transport, Failure> {
        // Build the configuration first: a missing root certificate should fail before any I/O.
        let config = tls::client_config(cfg)?;
        let mut req = BytesMut::with_capacity(8);
        frontend::ssl_request(&mut req);
        tcp.write_all(&req).await.map_err(|e| connect_error(h, e))?;
        let mut answer = [0u8; 1];
        tcp.read_exact(&mut answer)
            .await
            .map_err(|e| connect_error(h, e))?;
        match answer[0] {
            b'S' => {
                let name = match tls::server_name(&h.host) {
                    Ok(n) => n,
                    Err(e) if cfg.sslmode == SslMode::VerifyFull => return Err(e.into()),
                    // Without host-name checks any syntactically valid name will do for SNI.
                    Err(_) => tls::server_name("localhost")?,
                };
                let stream = tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await
                    .map_err(|e| Failure {
                        err: Error::Tls(format!("TLS handshake with {} failed: {e}", h.describe())),
                        tls_used: true,
                        hba_reject: false,
                    })?;
                Ok(Transport::Tls(Box::new(stream)))
            }
            b'N' if want == TlsWant::Prefer => Ok(Transport::Tcp(tcp)),
            b'N' => Err(Error::Tls(format!(
                "{}: the server does not support SSL, but sslmode={} requires it",
                h.describe(),
                cfg.sslmode
            ))
            .into()),
            b'E' => Err(Error::Tls(format!(
                "{}: the server answered the SSL request with an error (a pre-7.0 server?)",
                h.describe()
            ))
            .into()),
            other => Err(protocol(format!(
                "unexpected answer {other:#04x} to the SSL request from {}",
                h.describe()
            ))
            .into()),
        }
    }

    fn password(cfg: &ConnConfig, h: &HostSpec) -> Result<String, Error> {
        if let Some(p) = &cfg.password {
            return Ok(p.0.clone());
        }
        if let Some(file) = &cfg.passfile {
            if let Some(p) = pgpass_lookup(file, h, &cfg.dbname, &cfg.user) {
                return Ok(p);
            }
        }
        Err(Error::Auth {
            target: h.describe(),
            message: format!(
                "the server asked for a password for user \"{}\" but none was supplied; set \
                 PGPASSWORD, add password=... to the connection string, or add an entry to \
                 ~/.pgpass",
                cfg.user
            ),
        })
    }

    /// StartupMessage, authentication, then ParameterStatus/BackendKeyData up to ReadyForQuery
    /// ("Message Flow", "Start-up"). The error's flag says the server refused at pg_hba (28000).
    async fn startup(&mut self, cfg: &ConnConfig, h: &HostSpec) -> Result<(), (Error, bool)> {
        let plain = |e: Error| (e, false);
        let mut params: Vec<(&str, &str)> = vec![
            ("user", cfg.user.as_str()),
            ("database", cfg.dbname.as_str()),
            ("application_name", cfg.application_name.as_str()),
            ("client_encoding", "UTF8"),
        ];
        if let Some(o) = &cfg.options {
            params.push(("options", o.as_str()));
        }
        frontend::startup_message(params.iter().copied(), &mut self.out).map_err(|_| {
            plain(Error::Config(
                "user, database, application name and options may not contain NUL".into(),
            ))
        })?;
        self.write_out().await.map_err(plain)?;

        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            let (tag, total) = self.next_msg().await.map_err(plain)?;
            let body = &self.inb[5..total];
            match tag {
                b'R' => {
                    if body.len() < 4 {
                        return Err(plain(protocol("short authentication request")));
                    }
                    let code = be_i32(body);
                    let data = body[4..].to_vec();
                    self.inb.advance(total);
                    self.authenticate(cfg, h, code, &data, &mut scram)
                        .await
                        .map_err(plain)?;
                }
                b'E' => {
                    let e = parse_error(body);
                    self.inb.advance(total);
                    self.broken = true;
                    let hba = e.code == "28000";
                    return Err(if e.code.starts_with("28") {
                        (
                            Error::Auth {
                                target: h.describe(),
                                message: e.message,
                            },
                            hba,
                        )
                    } else {
                        (Error::Db(e), false)
                    });
                }
                _ => {
                    let ev = self.handle(tag, total);
                    self.inb.advance(total);
                    match ev.map_err(plain)? {
                        None => {}
                        Some(Event::Ready) => break,
                        Some(_) => {
                            return Err(plain(protocol(format!(
                                "unexpected message '{}' during start-up",
                                tag as char
                            ))))
                        }
                    }
                }
            }
        }
        self.version_num = self
            .parameter("server_version")
            .map(version_num)
            .unwrap_or(0);
        Ok(())
    }

    /// One authentication request ("Message Formats", Authentication*), answered with the
    /// password, its md5 hash, or the next SCRAM message. The password is never formatted into
    /// anything but the wire message.
    async fn authenticate(
        &mut self,
        cfg: &ConnConfig,
        h: &HostSpec,
        code: i32,
        data: &[u8],
        scram: &mut Option<sasl::ScramSha256>,
    ) -> Result<(), Error> {
        let auth_err = |message: String| Error::Auth {
            target: h.describe(),
            message,
        };
        match code {
            0 => return Ok(()),
            3 => {
                let pw = Self::password(cfg, h)?;
                frontend::password_message(pw.as_bytes(), &mut self.out)
                    .map_err(|_| auth_err("the password contains a NUL byte".into()))?;
            }
            5 => {
                if data.len() < 4 {
                    return Err(protocol("short md5 authentication request"));
                }
                let pw = Self::password(cfg, h)?;
                let salt = [data[0], data[1], data[2], data[3]];
                let hash = md5_hash(cfg.user.as_bytes(), pw.as_bytes(), salt);
                frontend::password_message(hash.as_bytes(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
            }
            10 => {
                let offered = data.split(|&c| c == 0).any(|m| m == b"SCRAM-SHA-256");
                if !offered {
                    return Err(auth_err(
                        "the server offers no SASL mechanism stampede supports (needs \
                         SCRAM-SHA-256)"
                            .into(),
                    ));
                }
                let pw = Self::password(cfg, h)?;
                // No channel binding ("n,,"): we do not offer SCRAM-SHA-256-PLUS.
                let s = sasl::ScramSha256::new(pw.as_bytes(), sasl::ChannelBinding::unsupported());
                frontend::sasl_initial_response("SCRAM-SHA-256", s.message(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
                *scram = Some(s);
            }
            11 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| protocol("SASLContinue without SASL"))?;
                s.update(data)
                    .map_err(|e| auth_err(format!("SCRAM exchange failed: {e}")))?;
                frontend::sasl_response(s.message(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
            }
            12 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| protocol("SASLFinal without SASL"))?;
                s.finish(data).map_err(|e| {
                    auth_err(format!("the server's SCRAM signature did not verify: {e}"))
                })?;
                return Ok(());
            }
            2 | 7 | 8 | 9 => {
                return Err(auth_err(format!(
                    "the server asks for an authentication method stampede does not support \
                     (Kerberos/GSSAPI/SSPI, code {code}); use password, md5 or scram-sha-256 in \
                     pg_hba.conf"
                )))
            }
            other => return Err(protocol(format!("unknown authentication request {other}"))),
        }
        self.write_out().await
    }

    /// `server_version_num`, e.g. 150018.
    pub fn server_version_num(&self) -> u32 {
        self.version_num
    }

    /// A ParameterStatus value reported by the server (server_version, TimeZone, ...).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn backend_pid(&self) -> i32 {
        self.pid
    }

    /// The secret key from BackendKeyData (for a CancelRequest).
    pub fn backend_secret_key(&self) -> i32 {
        self.secret_key
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

    fn check_ready(&self) -> Result<(), Error> {
        if self.broken {
            return Err(Error::Io(io::Error::new(
                io::ErrorKind::NotConnected,
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

    // ----- reading -----

    /// Read more bytes into the input buffer: one `read` call, as large as the buffer allows.
    async fn fill(&mut self) -> Result<(), Error> {
        if self.inb.capacity() - self.inb.len() < READ_CHUNK / 2 {
            // Reclaims consumed space in place when the buffer is drained (no allocation).
            self.inb.reserve(READ_CHUNK);
        }
        match self.io.read_buf(&mut self.inb).await {
            Ok(0) => {
                self.broken = true;
                Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server ({}) closed the connection unexpectedly; it may have \
                         terminated abnormally or been shut down",
                        self.target
                    ),
                )))
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(Error::Io(e))
            }
        }
    }

    /// Type and total length of the next message if it is complete in the input buffer;
    /// otherwise room is made for it and `None` returned. No await point: a reply that arrived
    /// whole (the usual case: BindComplete, DataRow, CommandComplete and ReadyForQuery in one
    /// segment) is parsed in one synchronous pass.
    #[inline]
    fn buffered_msg(&mut self) -> Result<Option<(u8, usize)>, Error> {
        let b = &self.inb[..];
        if b.len() < 5 {
            return Ok(None);
        }
        let len = be_i32(&b[1..5]);
        if len < 4 || len as usize > MAX_MESSAGE {
            self.broken = true;
            return Err(protocol(format!("invalid message length {len}")));
        }
        let total = len as usize + 1;
        if b.len() >= total {
            return Ok(Some((b[0], total)));
        }
        let more = total - b.len();
        self.inb.reserve(more);
        Ok(None)
    }

    /// Type and total length of the next complete message in the input buffer, reading as needed.
    /// The message stays in the buffer until the caller advances past it.
    async fn next_msg(&mut self) -> Result<(u8, usize), Error> {
        loop {
            if let Some(m) = self.buffered_msg()? {
                return Ok(m);
            }
            self.fill().await?;
        }
    }

    /// Process one message in place; return what the readers care about. Asynchronous messages
    /// (NoticeResponse, ParameterStatus, NotificationResponse) may arrive at any time ("Message
    /// Flow", "Asynchronous Operations") and are absorbed here.
    fn handle(&mut self, tag: u8, total: usize) -> Result<Option<Event>, Error> {
        let r = self.handle_inner(tag, total);
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    fn handle_inner(&mut self, tag: u8, total: usize) -> Result<Option<Event>, Error> {
        let body = &self.inb[5..total];
        Ok(match tag {
            b'D' => {
                if self.cap.on {
                    self.cap.row(body);
                }
                if self.cur_rows == 0 {
                    self.row.clear();
                    self.row.extend_from_slice(body);
                    self.has_row = true;
                }
                if let Some(rows) = &mut self.collect {
                    let cols = row_columns(body).ok_or_else(|| protocol("malformed DataRow"))?;
                    rows.push(
                        cols.into_iter()
                            .map(|c| c.map(|v| String::from_utf8_lossy(v).into_owned()))
                            .collect(),
                    );
                }
                self.cur_rows += 1;
                None
            }
            b'C' => {
                let tag = body.strip_suffix(&[0]).unwrap_or(body);
                match tag {
                    b"COMMIT" => {
                        self.commits += 1;
                        self.open_work = false;
                    }
                    b"ROLLBACK" => self.open_work = false,
                    _ => self.open_work = true,
                }
                let rows = self.cur_rows;
                if self.cap.on {
                    self.cap.end(rows);
                }
                if rows == 0 {
                    self.has_row = false;
                }
                self.cur_rows = 0;
                Some(Event::Done(StmtResult {
                    rows,
                    affected: tag_count(tag),
                }))
            }
            b'I' => {
                if self.cap.on {
                    self.cap.end(0);
                }
                self.open_work = true;
                self.has_row = false;
                self.cur_rows = 0;
                Some(Event::Done(StmtResult::default()))
            }
            b'E' => {
                let e = parse_error(body);
                if matches!(e.severity.as_str(), "FATAL" | "PANIC") {
                    self.broken = true;
                }
                self.open_work = false;
                self.has_row = false;
                self.cur_rows = 0;
                Some(Event::Error(e))
            }
            b'Z' => {
                let status = *body
                    .first()
                    .ok_or_else(|| protocol("empty ReadyForQuery"))?;
                if status == b'I' && self.open_work {
                    self.commits += 1;
                }
                if status != b'T' {
                    self.open_work = false;
                }
                self.status = status;
                // Parses not confirmed by ParseComplete before this Sync failed or were skipped.
                while let Some(s) = self.sent.pop_front() {
                    match s {
                        Sent::Sync => break,
                        Sent::Parse(Some(i)) => {
                            if let Some(st) = self.stmts.get_mut(i as usize) {
                                if st.state == PrepState::InFlight {
                                    st.state = PrepState::Unprepared;
                                }
                            }
                        }
                        Sent::Parse(None) => {}
                    }
                }
                Some(Event::Ready)
            }
            b'1' => {
                match self.sent.pop_front() {
                    Some(Sent::Parse(Some(i))) => {
                        if let Some(st) = self.stmts.get_mut(i as usize) {
                            st.state = PrepState::Prepared;
                        }
                    }
                    Some(Sent::Parse(None)) => {}
                    _ => return Err(protocol("ParseComplete without a Parse")),
                }
                self.open_work = true;
                None
            }
            b'2' => {
                self.open_work = true;
                None
            }
            // CloseComplete, NoData, ParameterDescription, RowDescription, PortalSuspended,
            // NoticeResponse, NotificationResponse, NegotiateProtocolVersion, CopyOutResponse,
            // CopyData, CopyDone (COPY TO STDOUT output is discarded).
            b'T' => {
                if self.cap.on {
                    self.cap.describe(body);
                }
                None
            }
            b'3' | b'n' | b't' | b's' | b'N' | b'A' | b'v' | b'H' | b'd' | b'c' => None,
            b'S' => {
                let mut it = body.split(|&c| c == 0);
                let k = String::from_utf8_lossy(it.next().unwrap_or_default()).into_owned();
                let v = String::from_utf8_lossy(it.next().unwrap_or_default()).into_owned();
                match self.params.iter_mut().find(|(pk, _)| *pk == k) {
                    Some(p) => p.1 = v,
                    None => self.params.push((k, v)),
                }
                None
            }
            b'K' => {
                if body.len() < 8 {
                    return Err(protocol("short BackendKeyData"));
                }
                self.pid = be_i32(body);
                self.secret_key = be_i32(&body[4..]);
                None
            }
            b'G' => Some(Event::CopyIn),
            b'W' => {
                return Err(protocol(
                    "CopyBothResponse: replication COPY is not supported",
                ))
            }
            b'R' => return Err(protocol("authentication request after start-up")),
            other => {
                return Err(protocol(format!(
                    "unexpected message type {:?}",
                    other as char
                )))
            }
        })
    }

    /// The next event among the messages already in the input buffer, if there is one.
    #[inline]
    fn buffered_event(&mut self) -> Result<Option<Event>, Error> {
        while let Some((tag, total)) = self.buffered_msg()? {
            let ev = self.handle(tag, total);
            self.inb.advance(total);
            if let Some(ev) = ev? {
                return Ok(Some(ev));
            }
        }
        Ok(None)
    }

    async fn next_event(&mut self) -> Result<Event, Error> {
        loop {
            if let Some(ev) = self.buffered_event()? {
                return Ok(ev);
            }
            self.fill().await?;
        }
    }

    /// Read through ReadyForQuery; the last result, or the first error. A COPY FROM STDIN started
    /// outside `copy_in` is refused with CopyFail (the server then reports an error).
    ///
    /// Hot path: the buffered messages are consumed synchronously (`buffered_event`) and the only
    /// await is the read itself, so a whole reply costs one pass and no nested futures. Measured
    /// as for `encode_extended`: `run_to_ready` with everything under it (the read included)
    /// went from ~2,150 to ~1,860 instructions per transaction when it stopped awaiting
    /// `next_event` -> `next_msg` per message.
    async fn run_to_ready(&mut self) -> Result<StmtResult, Error> {
        let mut last = StmtResult::default();
        let mut err = None;
        loop {
            let ev = match self.buffered_event()? {
                Some(ev) => ev,
                None => {
                    self.fill().await?;
                    continue;
                }
            };
            match ev {
                Event::Done(r) => last = r,
                Event::Error(e) => {
                    if self.broken {
                        return Err(Error::Db(e));
                    }
                    err.get_or_insert(e);
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => break,
            }
        }
        match err {
            Some(e) => Err(Error::Db(e)),
            None => Ok(last),
        }
    }

    async fn refuse_copy(&mut self) -> Result<(), Error> {
        frontend::copy_fail(
            "COPY FROM STDIN is only supported through copy_in",
            &mut self.out,
        )
        .map_err(|e| protocol(e.to_string()))?;
        self.write_out().await
    }

    /// One write of everything buffered.
    async fn write_out(&mut self) -> Result<(), Error> {
        let r = self.io.write_all(&self.out).await;
        self.out.clear();
        r.map_err(|e| {
            self.broken = true;
            Error::Io(e)
        })
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
    }

    /// Start `COPY ... FROM STDIN`. Then `copy_data` any number of times and `copy_finish`.
    pub async fn copy_in(&mut self, sql: &str) -> Result<(), Error> {
        self.check_ready()?;
        frontend::query(sql, &mut self.out)
            .map_err(|_| Error::Config("SQL text may not contain a NUL byte".into()))?;
        self.sent.push_back(Sent::Sync);
        self.write_out().await?;
        let mut err = None;
        loop {
            match self.next_event().await? {
                // "COPY Operations": after CopyInResponse the server waits for CopyData.
                Event::CopyIn if err.is_none() => {
                    self.in_copy = true;
                    return Ok(());
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Done(_) => {}
                Event::Error(e) => {
                    if self.broken {
                        return Err(Error::Db(e));
                    }
                    err.get_or_insert(e);
                }
                Event::Ready => {
                    return Err(match err {
                        Some(e) => Error::Db(e),
                        None => {
                            Error::Config("copy_in needs a COPY ... FROM STDIN statement".into())
                        }
                    })
                }
            }
        }
    }

    /// Send one chunk of COPY data (any size; rows may span chunks). Buffered: written out in
    /// chunks of at least 64 KiB.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_data without copy_in".into()));
        }
        if data.len() > MAX_MESSAGE {
            for chunk in data.chunks(MAX_MESSAGE / 2) {
                Box::pin(self.copy_data(chunk)).await?;
            }
            return Ok(());
        }
        self.out.reserve(5 + data.len());
        self.out.put_u8(b'd');
        self.out.put_i32(4 + data.len() as i32);
        self.out.extend_from_slice(data);
        if self.out.len() >= COPY_FLUSH_AT {
            self.write_out().await?;
        }
        Ok(())
    }

    /// End the COPY; returns the row count the server reports.
    pub async fn copy_finish(&mut self) -> Result<u64, Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_finish without copy_in".into()));
        }
        self.in_copy = false;
        frontend::copy_done(&mut self.out);
        self.write_out().await?;
        self.run_to_ready().await.map(|r| r.affected)
    }

    /// Abort a COPY in progress (CopyFail) with a reason; the server rolls it back.
    pub async fn copy_fail(&mut self, reason: &str) -> Result<(), Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_fail without copy_in".into()));
        }
        self.in_copy = false;
        let reason = reason.replace('\0', " ");
        frontend::copy_fail(&reason, &mut self.out).map_err(|e| protocol(e.to_string()))?;
        self.write_out().await?;
        match self.run_to_ready().await {
            // The server answers CopyFail with 57014 (query_canceled), as expected.
            Err(Error::Db(e)) if e.code == "57014" => Ok(()),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    }

    // ----- hot path -----

    /// Register a statement written with `$1..$n` placeholders for use in `mode`. Cheap and local:
    /// nothing is sent. In simple mode the text is pre-split at the placeholders; in prepared mode
    /// the statement is parsed on the server by [`Session::prepare_all`].
    pub fn register(&mut self, sql: &str, mode: QueryMode) -> StmtId {
        let id = self.stmts.len() as u32;
        let name = format!("s{id}");
        // The constant parts of the extended-protocol messages, encoded once (see `Stmt`).
        let server_name = if mode == QueryMode::Prepared {
            name.as_str()
        } else {
            ""
        };
        let nul = sql.as_bytes().contains(&0);
        let mut parse_buf = BytesMut::new();
        if !nul {
            // Cannot fail: neither the name nor the text contains a NUL.
            let _ = frontend::parse(server_name, sql, std::iter::empty(), &mut parse_buf);
        }
        let parse_msg = parse_buf.to_vec();
        let mut bind_head = Vec::with_capacity(server_name.len() + 4);
        bind_head.push(0);
        bind_head.extend_from_slice(server_name.as_bytes());
        bind_head.extend_from_slice(&[0, 0, 0]);
        self.stmts.push(Stmt {
            sql: sql.to_string(),
            mode,
            name,
            state: PrepState::Unprepared,
            segs: if mode == QueryMode::Simple {
                split_placeholders(sql)
            } else {
                Vec::new()
            },
            nul,
            parse_msg,
            bind_head,
            describe: false,
        });
        StmtId(id)
    }

    /// Prepared mode: Parse every registered statement not yet prepared, with one Sync.
    pub async fn prepare_all(&mut self) -> Result<(), Error> {
        self.check_ready()?;
        // Validate first: nothing is encoded unless everything can be.
        if self
            .stmts
            .iter()
            .any(|st| st.mode == QueryMode::Prepared && st.sql.contains('\0'))
        {
            return Err(Error::Config("SQL text may not contain a NUL byte".into()));
        }
        let mut any = false;
        for (i, st) in self.stmts.iter_mut().enumerate() {
            if st.mode == QueryMode::Prepared && st.state == PrepState::Unprepared {
                frontend::parse(&st.name, &st.sql, std::iter::empty(), &mut self.out)
                    .map_err(|_| Error::Config("SQL text may not contain a NUL byte".into()))?;
                st.state = PrepState::InFlight;
                self.sent.push_back(Sent::Parse(Some(i as u32)));
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
        frontend::sync(&mut self.out);
        self.sent.push_back(Sent::Sync);
        self.write_out().await?;
        self.run_to_ready().await.map(|_| ())
    }

    /// Append [Parse] Bind [Describe] Execute for `stmt` (Extended Query: "Message Flow").
    /// Validates before writing, so an error leaves the output buffer as it was. Describe only
    /// for a statement whose results are captured ([`Session::capture_results`]); otherwise
    /// results are text and only counted or copied.
    ///
    /// Hot path, written by hand: the Parse message and the constant middle of the Bind are
    /// encoded once at registration (`Stmt::parse_msg`, `Stmt::bind_head`), so an execution
    /// writes the Bind header, each value with its length, and a constant trailer (result
    /// format count, Execute). Measured with callgrind, 1 client, select-only prepared
    /// (`valgrind --tool=callgrind stampede run -S -c 1 -j 1 -t N -n -M prepared`, N = 12000
    /// minus N = 2000, per transaction): `postgres_protocol::frontend::{bind, execute}` plus a
    /// scan of the SQL text for NUL bytes cost ~1,150 instructions per execution; this ~330.
    fn encode_extended(&mut self, stmt: StmtId, params: &[Value<'_>]) -> Result<(), Error> {
        /// Bind's trailer (zero result format codes: all text) and `Execute` of the unnamed
        /// portal with no row limit.
        const BIND_END_EXECUTE: &[u8] = b"\0\0E\0\0\0\x09\0\0\0\0\0";
        let i = stmt.0 as usize;
        let Some(st) = self.stmts.get_mut(i) else {
            return Err(Error::Config(format!("unknown statement id {}", stmt.0)));
        };
        if params.len() > i16::MAX as usize {
            return Err(Error::Config("more than 32767 parameters".into()));
        }
        if st.nul {
            return Err(Error::Config("SQL text may not contain a NUL byte".into()));
        }
        let out = &mut self.out;
        if st.mode != QueryMode::Prepared {
            out.extend_from_slice(&st.parse_msg);
            self.sent.push_back(Sent::Parse(None));
        } else if st.state == PrepState::Unprepared {
            out.extend_from_slice(&st.parse_msg);
            st.state = PrepState::InFlight;
            self.sent.push_back(Sent::Parse(Some(stmt.0)));
        }
        // Bind: 'B', length, bind_head, parameter count, (length, text) per value, trailer.
        out.reserve(st.bind_head.len() + 32 + 24 * params.len());
        let base = out.len();
        out.put_u8(b'B');
        out.put_i32(0);
        out.extend_from_slice(&st.bind_head);
        out.put_i16(params.len() as i16);
        for v in params {
            if let Value::Null = v {
                out.put_i32(-1);
                continue;
            }
            let at = out.len();
            out.put_i32(0);
            put_value(out, v);
            let n = out.len() - at - 4;
            if n > i32::MAX as usize {
                self.broken = true;
                return Err(protocol(
                    "could not encode Bind: a value is larger than 2 GB",
                ));
            }
            out[at..at + 4].copy_from_slice(&(n as i32).to_be_bytes());
        }
        let len = out.len() - base - 1 + 2;
        if len > i32::MAX as usize {
            self.broken = true;
            return Err(protocol("could not encode Bind: larger than 2 GB"));
        }
        out[base + 1..base + 5].copy_from_slice(&(len as i32).to_be_bytes());
        if st.describe {
            out.extend_from_slice(&BIND_END_EXECUTE[..2]);
            frontend::describe(b'P', "", out).map_err(|e| protocol(e.to_string()))?;
            out.extend_from_slice(&BIND_END_EXECUTE[2..]);
        } else {
            out.extend_from_slice(BIND_END_EXECUTE);
        }
        Ok(())
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
        self.run_to_ready().await
    }

    /// Pipeline (extended and prepared modes only; a statement registered for simple mode is sent
    /// as in extended mode): append [Parse] Bind Execute for a statement to the output buffer
    /// without sending it. "Pipelining": the server runs queued statements as they arrive and
    /// skips to the next Sync after an error.
    pub fn queue(&mut self, stmt: StmtId, params: &[Value<'_>]) {
        self.cap.on = false;
        if let Err(e) = self.encode_extended(stmt, params) {
            self.deferred.get_or_insert(e);
        }
        self.pipe.push_back(Pipe::Stmt);
    }

    /// Pipeline: append a Sync.
    pub fn queue_sync(&mut self) {
        frontend::sync(&mut self.out);
        self.sent.push_back(Sent::Sync);
        self.pipe.push_back(Pipe::Sync);
    }

    /// Pipeline: send everything queued, in as few writes as possible (one).
    pub async fn flush(&mut self) -> Result<(), Error> {
        if let Some(e) = self.deferred.take() {
            // The queue no longer matches what would be sent: this session cannot continue.
            self.broken = true;
            self.out.clear();
            return Err(e);
        }
        if self.broken {
            return self.check_ready();
        }
        if self.out.is_empty() {
            return Ok(());
        }
        self.write_out().await
    }

    /// Consume through the ReadyForQuery that ends the current pipeline segment, dropping the
    /// segment's bookkeeping. Returns the first error not yet handed to the caller.
    async fn consume_segment(&mut self) -> Result<Option<DbError>, Error> {
        let mut first = None;
        loop {
            match self.next_event().await? {
                Event::Done(_) => {
                    if self.pipe.front() == Some(&Pipe::Stmt) {
                        self.pipe.pop_front();
                    }
                }
                Event::Error(e) => {
                    if self.pipe.front() == Some(&Pipe::Stmt) {
                        self.pipe.pop_front();
                    }
                    if self.broken {
                        return Err(Error::Db(e));
                    }
                    self.aborted = true;
                    first.get_or_insert(e);
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => {
                    while let Some(p) = self.pipe.pop_front() {
                        if p == Pipe::Sync {
                            break;
                        }
                    }
                    self.aborted = false;
                    return Ok(first);
                }
            }
        }
    }

    /// Pipeline: the result of the next queued statement. After an error, the statements up to the
    /// next Sync come back as `Err(Error::Db)` with SQLSTATE `"PIPAB"` (pipeline aborted, not a
    /// server code).
    pub async fn read_result(&mut self) -> Result<StmtResult, Error> {
        loop {
            match self.pipe.front() {
                None => return Err(Error::Config("read_result: no statement is queued".into())),
                // The caller skipped read_ready for the previous segment.
                Some(Pipe::Sync) => {
                    self.consume_segment().await?;
                }
                Some(Pipe::Stmt) => break,
            }
        }
        if self.aborted {
            self.pipe.pop_front();
            return Err(Error::Db(pipeline_aborted()));
        }
        loop {
            match self.next_event().await? {
                Event::Done(r) => {
                    self.pipe.pop_front();
                    return Ok(r);
                }
                Event::Error(e) => {
                    self.pipe.pop_front();
                    self.aborted = true;
                    return Err(Error::Db(e));
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => {
                    self.broken = true;
                    return Err(protocol(
                        "ReadyForQuery before the result of a queued statement",
                    ));
                }
            }
        }
    }

    /// Pipeline: consume through the next ReadyForQuery. Returns `Err(Error::Db)` with the first
    /// error of the segment that `read_result` did not already return; the session stays usable.
    pub async fn read_ready(&mut self) -> Result<(), Error> {
        if !self.pipe.contains(&Pipe::Sync) {
            return Err(Error::Config(
                "read_ready: no Sync queued (call queue_sync)".into(),
            ));
        }
        match self.consume_segment().await? {
            Some(e) => Err(Error::Db(e)),
            None => Ok(()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn interpolate(sql: &str, params: &[Value<'_>]) -> Result<String, Error> {
        let mut buf = BytesMut::new();
        put_interpolated_query(&mut buf, sql, &split_placeholders(sql), params)?;
        assert_eq!(buf[0], b'Q');
        assert_eq!(be_i32(&buf[1..5]) as usize, buf.len() - 1);
        assert_eq!(*buf.last().unwrap(), 0);
        Ok(String::from_utf8(buf[5..buf.len() - 1].to_vec()).unwrap())
    }

    #[test]
    fn simple_mode_interpolates_verbatim() {
        assert_eq!(
            interpolate(
                "UPDATE t SET a = a + $2 WHERE aid = $1",
                &[Value::Int(42), Value::Int(-5000)]
            )
            .unwrap(),
            "UPDATE t SET a = a + -5000 WHERE aid = 42"
        );
        assert_eq!(
            interpolate(
                "SELECT $1, $2, $3, $4, $1",
                &[
                    Value::Null,
                    Value::Float(0.25),
                    Value::Bool(true),
                    Value::Text("'x'")
                ]
            )
            .unwrap(),
            "SELECT NULL, 0.25, true, 'x', NULL"
        );
        assert_eq!(
            interpolate("SELECT $10", &[Value::Int(0); 10]).unwrap(),
            "SELECT 0"
        );
        assert_eq!(
            interpolate(
                "$1 $2 $3 $4",
                &[
                    Value::Float(2.0),
                    Value::Float(-0.1),
                    Value::Float(1e20),
                    Value::Float(f64::NAN)
                ]
            )
            .unwrap(),
            "2 -0.1 1e20 NaN"
        );
        // Quoted text and identifiers containing `$` are left alone.
        assert_eq!(
            interpolate("SELECT '$1', \"c$1\", a$1, $1", &[Value::Int(7)]).unwrap(),
            "SELECT '$1', \"c$1\", a$1, 7"
        );
        assert_eq!(interpolate("SELECT 1", &[]).unwrap(), "SELECT 1");
        assert_eq!(
            interpolate("$1", &[Value::Text("SELECT 2")]).unwrap(),
            "SELECT 2"
        );
        assert_eq!(
            interpolate("SELECT $1", &[Value::Float(f64::NEG_INFINITY)]).unwrap(),
            "SELECT -Infinity"
        );
        match interpolate("SELECT $2", &[Value::Int(1)]) {
            Err(Error::Config(m)) => assert!(m.contains("$2"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sessions_and_their_futures_are_send() {
        fn is_send<T: Send>(_: &T) {}
        fn check(cfg: &ConnConfig, s: &mut Session) {
            is_send(&Session::connect(cfg));
            is_send(&s.execute(StmtId(0), &[]));
            is_send(&s.read_result());
            is_send(&s.simple_query(""));
        }
        let _ = check;
    }

    #[test]
    fn command_tags_are_parsed_in_place() {
        assert_eq!(tag_count(b"INSERT 0 5"), 5);
        assert_eq!(tag_count(b"UPDATE 1"), 1);
        assert_eq!(tag_count(b"SELECT 100000"), 100000);
        assert_eq!(tag_count(b"COPY 7"), 7);
        assert_eq!(tag_count(b"BEGIN"), 0);
        assert_eq!(tag_count(b"CREATE TABLE"), 0);
        assert_eq!(tag_count(b""), 0);
    }

    #[test]
    fn server_versions() {
        assert_eq!(version_num("15.18 (Debian 15.18-1.pgdg120+1)"), 150018);
        assert_eq!(version_num("9.6.24"), 90624);
        assert_eq!(version_num("17beta1"), 170000);
        assert_eq!(version_num("16.2"), 160002);
    }

    #[test]
    fn error_fields_and_rows() {
        let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0Hcheck it\0\0";
        let e = parse_error(body);
        assert_eq!(e.severity, "ERROR");
        assert_eq!(e.code, "42P01");
        assert_eq!(e.message, "relation \"x\" does not exist");
        assert_eq!(e.hint.as_deref(), Some("check it"));
        assert_eq!(e.detail, None);
        let mut row = vec![0, 2];
        row.extend_from_slice(&2i32.to_be_bytes());
        row.extend_from_slice(b"ab");
        row.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(row_columns(&row).unwrap(), vec![Some(&b"ab"[..]), None]);
        assert!(row_columns(&row[..7]).is_none());
    }
}
