//! Statements: registration ([`Session::register`]: placeholders found once, `$n` rewritten to
//! `?`), preparation (COM_STMT_PREPARE and its response, "COM_STMT_PREPARE Response"), and the
//! hot-path encoders: COM_STMT_EXECUTE with the parameters as binary typed values
//! ("COM_STMT_EXECUTE", "Binary Protocol Value"), and COM_QUERY with the values interpolated as
//! SQL literals for [`QueryMode::Simple`].
//!
//! Parameter types: `Int` -> MYSQL_TYPE_LONGLONG (8 bytes), `Float` -> MYSQL_TYPE_DOUBLE,
//! `Text` -> MYSQL_TYPE_VAR_STRING (length-encoded), `Bool` -> MYSQL_TYPE_TINY, `Null` ->
//! MYSQL_TYPE_NULL with its bit set in the NULL bitmap. The types are sent with every
//! execution (new-params-bound flag 1): two bytes a parameter, and the types may change from
//! one execution to the next (an `Int` then a `Null`).

use bytes::BufMut;
use pg::{Error, QueryMode, StmtId, Value};

use super::io::protocol;
use super::{Phase, Session};
use crate::sql::{self, Kind};
use crate::wire::*;

/// A statement prepared on the server.
#[derive(Clone, Copy, Debug)]
pub(super) struct Prepared {
    pub id: u32,
    pub params: u16,
}

pub(super) struct Stmt {
    /// The text sent to the server (`$n` rewritten to `?`).
    sql: String,
    pub mode: QueryMode,
    pub kind: Kind,
    /// The parameter index of each `?`, in order.
    order: Vec<u16>,
    /// The byte offset of each `?` in `sql` (simple mode interpolates there).
    holes: Vec<u32>,
    /// Parameters an execution must supply: the number of `?`, or the largest `$n`.
    needs: usize,
    /// A problem found at registration (mixed placeholder styles), reported by `execute`.
    invalid: Option<String>,
    pub server: Option<Prepared>,
    /// [`Session::register_verbatim`]: the one parameter is the whole SQL text, sent as it is.
    pub verbatim: bool,
    /// [`Session::capture_results`]: keep each result's column names and last row.
    pub capture: bool,
}

impl Stmt {
    pub(super) fn check_params(&self, params: &[Value<'_>]) -> Result<(), Error> {
        if let Some(m) = &self.invalid {
            return Err(Error::Config(m.clone()));
        }
        if params.len() != self.needs {
            return Err(Error::Config(format!(
                "the statement takes {} parameters but {} were given: {}",
                self.needs,
                params.len(),
                first_line(&self.sql)
            )));
        }
        Ok(())
    }
}

impl Session {
    /// Register a statement written with `?` or `$1..$n` placeholders for use in `mode`. Cheap
    /// and local: nothing is sent (prepared mode prepares at the first execution or in
    /// [`Session::prepare_all`]).
    pub fn register(&mut self, sql: &str, mode: QueryMode) -> StmtId {
        let id = self.stmts.len() as u32;
        let scan = sql::scan(sql, self.backslash_escapes());
        let dollars = scan.placeholders.iter().filter(|p| p.dollar).count();
        let mut invalid = None;
        if dollars > 0 && dollars < scan.placeholders.len() {
            invalid = Some(format!(
                "the statement mixes ? and $n placeholders: {}",
                first_line(sql)
            ));
        }
        let (text, order, holes, needs) = if dollars > 0 {
            let mut text = String::with_capacity(sql.len());
            let mut holes = Vec::with_capacity(scan.placeholders.len());
            let mut at = 0;
            for p in &scan.placeholders {
                text.push_str(&sql[at..p.start as usize]);
                holes.push(text.len() as u32);
                text.push('?');
                at = p.end as usize;
            }
            text.push_str(&sql[at..]);
            let order: Vec<u16> = scan.placeholders.iter().map(|p| p.param).collect();
            let needs = order.iter().map(|&n| n as usize + 1).max().unwrap_or(0);
            (text, order, holes, needs)
        } else {
            let n = scan.placeholders.len();
            let holes = scan.placeholders.iter().map(|p| p.start).collect();
            (sql.to_string(), (0..n as u16).collect(), holes, n)
        };
        let kind = scan
            .statements
            .first()
            .map_or(Kind::Other, |&(a, z)| sql::kind(&sql[a..z]));
        self.stmts.push(Stmt {
            sql: text,
            mode,
            kind,
            order,
            holes,
            needs,
            invalid,
            server: None,
            verbatim: false,
            capture: false,
        });
        StmtId(id)
    }

    /// Register a simple-mode statement whose one parameter, a [`Value::Text`], is the whole SQL
    /// text, sent as it is in one COM_QUERY (several `;`-separated statements allowed): a
    /// client-side substituted text such as pgbench's simple mode sends (`assignVariables`), in
    /// which nothing is a placeholder. The transaction kinds (for the commit count) are read from
    /// each execution's text.
    pub fn register_verbatim(&mut self) -> StmtId {
        let id = self.stmts.len() as u32;
        self.stmts.push(Stmt {
            sql: String::new(),
            mode: QueryMode::Simple,
            kind: Kind::Other,
            order: vec![0],
            holes: vec![0],
            needs: 1,
            invalid: None,
            server: None,
            verbatim: true,
            capture: false,
        });
        StmtId(id)
    }

    /// Keep the column names, the row count and the last row of each result of `stmt`'s
    /// executions, for [`Session::captured`] (pgbench's `\gset` and `\aset`). Statements
    /// without capture cost nothing more.
    pub fn capture_results(&mut self, stmt: StmtId) {
        if let Some(st) = self.stmts.get_mut(stmt.0 as usize) {
            st.capture = true;
        }
    }

    /// Whether `stmt` is prepared on the server (prepared mode), or needs no preparing (the
    /// other modes).
    pub fn is_prepared(&self, stmt: StmtId) -> bool {
        self.stmts
            .get(stmt.0 as usize)
            .is_some_and(|st| st.mode != QueryMode::Prepared || st.server.is_some())
    }

    /// Prepared mode: COM_STMT_PREPARE every registered statement not yet prepared, in order;
    /// the first failure is returned (the statements before it stay prepared).
    pub async fn prepare_all(&mut self) -> Result<(), Error> {
        if self.broken {
            return Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the session is unusable; reconnect",
            )));
        }
        for i in 0..self.stmts.len() {
            self.prepare_if_new(i).await?;
        }
        Ok(())
    }

    /// Prepared mode: COM_STMT_PREPARE the statements `ids` not yet prepared, in order; the
    /// first failure is returned (pgbench prepares each command before its first execution).
    pub async fn prepare(&mut self, ids: &[StmtId]) -> Result<(), Error> {
        self.check_ready()?;
        for id in ids {
            let i = id.0 as usize;
            if i >= self.stmts.len() {
                return Err(Error::Config(format!("unknown statement id {}", id.0)));
            }
            self.prepare_if_new(i).await?;
        }
        Ok(())
    }

    /// COM_STMT_PREPARE statement `i` when it is a prepared-mode one the server does not have
    /// yet; one found invalid when registered fails with why.
    async fn prepare_if_new(&mut self, i: usize) -> Result<(), Error> {
        let st = &self.stmts[i];
        if st.mode == QueryMode::Prepared && st.server.is_none() {
            if let Some(m) = &st.invalid {
                return Err(Error::Config(m.clone()));
            }
            let p = self.prepare_one(i).await?;
            self.stmts[i].server = Some(p);
        }
        Ok(())
    }

    /// COM_STMT_PREPARE statement `i` and read its response: the OK with the statement id and
    /// counts, then the parameter and column definitions (each followed by an EOF unless
    /// CLIENT_DEPRECATE_EOF), which are skipped: the column types come again with each
    /// execution's result.
    pub(super) async fn prepare_one(&mut self, i: usize) -> Result<Prepared, Error> {
        self.begin_command(COM_STMT_PREPARE);
        self.out.extend_from_slice(self.stmts[i].sql.as_bytes());
        self.end_command();
        self.write_out().await?;
        let len = self.next_packet().await?;
        let p = &self.inb[4..4 + len];
        match p.first() {
            Some(0x00) if len >= 9 => {}
            Some(0xff) => {
                let e = parse_err(p);
                self.consume(len);
                return Err(self.server_error(e));
            }
            _ => {
                self.broken = true;
                return Err(protocol("malformed COM_STMT_PREPARE response"));
            }
        }
        let id = u32_le(&p[1..5]);
        let columns = u16_le(&p[5..7]) as usize;
        let params = u16_le(&p[7..9]);
        self.consume(len);
        let eof = usize::from(self.caps & CLIENT_DEPRECATE_EOF == 0);
        let mut skip = 0;
        if params > 0 {
            skip += params as usize + eof;
        }
        if columns > 0 {
            skip += columns + eof;
        }
        for _ in 0..skip {
            let len = self.next_packet().await?;
            self.consume(len);
        }
        self.trim_buffers();
        let st = &self.stmts[i];
        if params as usize != st.order.len() {
            // The server found placeholders this client's lexer did not (or the reverse):
            // executing would bind the wrong values.
            let e = Error::Config(format!(
                "the server counts {params} placeholders in the statement, stampede counted {}: \
                 {}",
                st.order.len(),
                first_line(&st.sql)
            ));
            self.close_statement(id);
            self.write_out().await?;
            return Err(e);
        }
        Ok(Prepared { id, params })
    }

    /// Append COM_STMT_CLOSE (no response).
    pub(super) fn close_statement(&mut self, id: u32) {
        self.begin_command(COM_STMT_CLOSE);
        self.out.extend_from_slice(&id.to_le_bytes());
        self.end_command();
    }

    /// Append COM_STMT_EXECUTE for prepared statement `i` with `params` (checked by the
    /// caller), and COM_STMT_CLOSE after it when `close` (extended mode). Hot path: writes in
    /// place into the output buffer, no allocation once the buffer has its working size.
    pub(super) fn encode_execute(
        &mut self,
        i: usize,
        params: &[Value<'_>],
        close: bool,
    ) -> Result<(), Error> {
        let st = &self.stmts[i];
        let Some(p) = st.server else {
            return Err(protocol("statement executed before it was prepared"));
        };
        let n = p.params as usize;
        self.seq = 0;
        let base = self.out.len();
        self.packet_start = base;
        let out = &mut self.out;
        out.reserve(4 + 10 + n.div_ceil(8) + 1 + 2 * n + 9 * n);
        out.put_u32_le(0); // header, written at the end
        out.put_u8(COM_STMT_EXECUTE);
        out.put_u32_le(p.id);
        out.put_u8(0); // CURSOR_TYPE_NO_CURSOR
        out.put_u32_le(1); // iteration count
        if n > 0 {
            let bitmap = out.len();
            out.put_bytes(0, n.div_ceil(8));
            out.put_u8(1); // new-params-bound: types follow
            for (k, &pi) in st.order.iter().enumerate() {
                let (ty, unsigned) = match params[pi as usize] {
                    Value::Null => {
                        out[bitmap + k / 8] |= 1 << (k % 8);
                        (TYPE_NULL, 0)
                    }
                    Value::Int(_) => (TYPE_LONGLONG, 0),
                    Value::Float(_) => (TYPE_DOUBLE, 0),
                    Value::Bool(_) => (TYPE_TINY, 0),
                    Value::Text(_) => (TYPE_VAR_STRING, 0),
                };
                out.put_u8(ty);
                out.put_u8(unsigned);
            }
            for &pi in &st.order {
                match params[pi as usize] {
                    Value::Null => {}
                    Value::Int(v) => out.put_i64_le(v),
                    Value::Float(v) => out.put_f64_le(v),
                    Value::Bool(v) => out.put_u8(v as u8),
                    Value::Text(s) => put_lenenc_str(out, s.as_bytes()),
                }
            }
        }
        self.end_command();
        // The reply continues the execute's sequence (1 after a one-packet command; more when
        // the parameters made it span several packets). COM_STMT_CLOSE starts its own.
        let reply_seq = self.seq;
        if close {
            self.close_statement(p.id);
        }
        self.seq = reply_seq;
        self.phase = Phase::Head;
        Ok(())
    }

    /// Append COM_QUERY for simple-mode statement `i`, the values interpolated as SQL literals:
    /// integers and floats in decimal, booleans as TRUE/FALSE, NULL, text in single quotes with
    /// `'` doubled and `\` doubled unless the server runs with NO_BACKSLASH_ESCAPES.
    pub(super) fn encode_query(&mut self, i: usize, params: &[Value<'_>]) -> Result<(), Error> {
        for v in params {
            if let Value::Float(f) = v {
                if !f.is_finite() {
                    return Err(Error::Config(format!(
                        "MySQL has no literal for the float {f}"
                    )));
                }
            }
        }
        let escapes = self.backslash_escapes();
        self.begin_command(COM_QUERY);
        let st = &self.stmts[i];
        let sql = st.sql.as_bytes();
        let out = &mut self.out;
        if st.verbatim {
            match params[0] {
                Value::Text(t) => out.extend_from_slice(t.as_bytes()),
                ref v => put_literal(out, v, escapes),
            }
            self.end_command();
            self.phase = Phase::Head;
            return Ok(());
        }
        let mut at = 0;
        for (&hole, &pi) in st.holes.iter().zip(&st.order) {
            out.extend_from_slice(&sql[at..hole as usize]);
            put_literal(out, &params[pi as usize], escapes);
            at = hole as usize + 1;
        }
        out.extend_from_slice(&sql[at..]);
        self.end_command();
        self.phase = Phase::Head;
        Ok(())
    }
}

/// A value as a SQL literal (see [`Session::encode_query`]).
pub(super) fn put_literal(out: &mut bytes::BytesMut, v: &Value<'_>, escapes: bool) {
    match *v {
        Value::Null => out.extend_from_slice(b"NULL"),
        Value::Int(i) => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        Value::Float(f) => out.extend_from_slice(ryu::Buffer::new().format_finite(f).as_bytes()),
        Value::Bool(b) => out.extend_from_slice(if b { b"TRUE" } else { b"FALSE" }),
        Value::Text(s) => {
            out.extend_from_slice(b"'");
            for &c in s.as_bytes() {
                match c {
                    b'\'' => out.extend_from_slice(b"''"),
                    b'\\' if escapes => out.extend_from_slice(b"\\\\"),
                    c => out.extend_from_slice(&[c]),
                }
            }
            out.extend_from_slice(b"'");
        }
    }
}

fn first_line(sql: &str) -> &str {
    sql.lines().next().unwrap_or("").trim()
}
