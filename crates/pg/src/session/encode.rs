//! Encoding statements: registration ([`Session::register`], which pre-splits simple-mode text
//! and pre-encodes the Parse message and the constant middle of the Bind), `prepare_all`, the
//! hand-written hot-path encoder of [Parse] Bind [Describe] Execute, parameter text forms, and
//! simple mode's verbatim interpolation of parameters into a Query message.

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::frontend;

use super::{protocol, PrepState, QueryMode, Sent, Session, Stmt, StmtId, Value};
use crate::Error;

/// A piece of a simple-mode statement: literal SQL text, or parameter `$n` (0-based index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Seg {
    Lit(u32, u32),
    Param(u16),
}

/// Split SQL at `$n` placeholders for simple mode. A `$` counts only outside single- and
/// double-quoted text and not inside an identifier (`a$1` is an identifier in PostgreSQL); as
/// the server's own parser does for extended mode, so all three modes read `$n` the same way.
/// Dollar-quoted strings are not recognised (nor does pgbench's simple mode).
pub(super) fn split_placeholders(sql: &str) -> Vec<Seg> {
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
            None if c == b'$' => match dollar_placeholder(b, i) {
                Some((param, j)) => {
                    if let Some(p) = param {
                        if lit_start < i {
                            segs.push(Seg::Lit(lit_start as u32, i as u32));
                        }
                        segs.push(Seg::Param(p));
                        lit_start = j;
                    }
                    i = j;
                }
                None => i += 1,
            },
            None => i += 1,
        }
    }
    if lit_start < b.len() {
        segs.push(Seg::Lit(lit_start as u32, b.len() as u32));
    }
    segs
}

/// A `$n` placeholder at `b[i]` (both protocols' sessions read them so: MySQL's takes `$n`
/// beside `?`): `$` followed by digits and not inside an identifier (`a$1` is one in
/// PostgreSQL). Some((the 0-based parameter, or None for `$0` and numbers past 65535; the index
/// after the digits)), or None when `b[i]` starts no placeholder.
pub fn dollar_placeholder(b: &[u8], i: usize) -> Option<(Option<u16>, usize)> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    if b.get(i) != Some(&b'$')
        || !b.get(i + 1).is_some_and(u8::is_ascii_digit)
        || (i > 0 && ident(b[i - 1]))
    {
        return None;
    }
    let mut j = i + 1;
    let mut n: u32 = 0;
    while j < b.len() && b[j].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add((b[j] - b'0') as u32);
        j += 1;
    }
    let param = (1..=u16::MAX as u32).contains(&n).then(|| (n - 1) as u16);
    Some((param, j))
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
pub(super) fn put_interpolated_query(
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

impl Session {
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

    /// Whether `stmt` is parsed on the server (prepared mode), or needs no parsing (the others).
    pub fn is_prepared(&self, stmt: StmtId) -> bool {
        self.stmts
            .get(stmt.0 as usize)
            .is_some_and(|st| st.mode != QueryMode::Prepared || st.state == PrepState::Prepared)
    }

    /// Take `stmt` as prepared without parsing it: its executions send Bind and Execute for
    /// its name. pgbench marks a statement prepared even when its PQprepare failed, and its
    /// executions then fail with the server's "prepared statement does not exist".
    pub fn assume_prepared(&mut self, stmt: StmtId) {
        if let Some(st) = self.stmts.get_mut(stmt.0 as usize) {
            if st.mode == QueryMode::Prepared {
                st.state = PrepState::Prepared;
            }
        }
    }

    /// Prepared mode: Parse every registered statement not yet prepared, with one Sync.
    pub async fn prepare_all(&mut self) -> Result<(), Error> {
        self.prepare_where(|_| true).await
    }

    /// Prepared mode: Parse these statements (those not yet prepared), with one Sync: what
    /// pgbench does for the statements of a pipeline before `\startpipeline` opens it (a Parse
    /// inside the pipeline would take a snapshot before a `BEGIN ISOLATION LEVEL ...`).
    /// Statements not prepared beforehand are parsed with their first execution instead.
    pub async fn prepare(&mut self, ids: &[StmtId]) -> Result<(), Error> {
        self.prepare_where(|i| ids.contains(&StmtId(i))).await
    }

    async fn prepare_where(&mut self, pick: impl Fn(u32) -> bool) -> Result<(), Error> {
        self.check_ready()?;
        // Validate first: nothing is encoded unless everything can be.
        if (self.stmts.iter().enumerate())
            .any(|(i, st)| pick(i as u32) && st.mode == QueryMode::Prepared && st.nul)
        {
            return Err(Error::Config("SQL text may not contain a NUL byte".into()));
        }
        let mut any = false;
        for (i, st) in self.stmts.iter_mut().enumerate() {
            if pick(i as u32) && st.mode == QueryMode::Prepared && st.state == PrepState::Unprepared
            {
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
    pub(super) fn encode_extended(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
    ) -> Result<(), Error> {
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
}
