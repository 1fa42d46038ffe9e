//! Decoding the backend's replies, in place in the input buffer: the per-message handler
//! (results, errors, ReadyForQuery and its transaction status, the wire-level commit count,
//! ParseComplete bookkeeping, asynchronous messages), the events the readers consume
//! (`buffered_event`, `next_event`, `run_to_ready`), field parsers (ErrorResponse,
//! CommandComplete tags, DataRow, `server_version`), and captured results for `\gset`/`\aset`
//! ([`CapturedResult`], [`Columns`]).

use bytes::Buf;

use super::{be_i32, protocol, PrepState, Sent, Session, StmtResult, PIPELINE_ABORTED};
use crate::error::DbError;
use crate::Error;

/// One captured result (see [`Session::capture_results`]): buffers reused from one execution to
/// the next, so capturing allocates only while a result is larger than any before.
#[derive(Default)]
pub(super) struct CapSlot {
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
    pub(super) slot: &'a CapSlot,
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

/// One step of a reply, as the readers see it.
pub(super) enum Event {
    /// CommandComplete or EmptyQueryResponse.
    Done(StmtResult),
    Error(DbError),
    CopyIn,
    Ready,
}

/// Result capture state of a session.
#[derive(Default)]
pub(super) struct Capture {
    /// Capturing the results of the statement being executed (its `describe` flag).
    pub(super) on: bool,
    /// Captured results of the last captured execution: `slots[..n]`.
    pub(super) slots: Vec<CapSlot>,
    pub(super) n: usize,
    /// The current result has its RowDescription.
    desc_seen: bool,
}

impl Capture {
    pub(super) fn start(&mut self, on: bool) {
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

/// ErrorResponse / NoticeResponse fields (PostgreSQL docs, "Error and Notice Message Fields").
pub(super) fn parse_error(body: &[u8]) -> DbError {
    let mut e = DbError::default();
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
            b'W' => e.context = Some(v),
            b'P' => e.position = v.parse().ok(),
            b'p' => e.internal_position = v.parse().ok(),
            b'q' => e.internal_query = Some(v),
            _ => {}
        }
    }
    if e.severity.is_empty() {
        e.severity = localized_severity;
    }
    e
}

pub(super) fn pipeline_aborted() -> DbError {
    DbError {
        severity: "ERROR".into(),
        code: PIPELINE_ABORTED.into(),
        message: "statement skipped: an earlier statement in this pipeline failed".into(),
        ..Default::default()
    }
}

/// The count at the end of a CommandComplete tag (`INSERT 0 5` -> 5, `BEGIN` -> 0), parsed in
/// place.
pub(super) fn tag_count(tag: &[u8]) -> u64 {
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
pub(super) fn version_num(v: &str) -> u32 {
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
pub(super) fn row_columns(body: &[u8]) -> Option<Vec<Option<&[u8]>>> {
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

impl Session {
    /// Process one message in place; return what the readers care about. Asynchronous messages
    /// (NoticeResponse, ParameterStatus, NotificationResponse) may arrive at any time ("Message
    /// Flow", "Asynchronous Operations") and are absorbed here.
    pub(super) fn handle(&mut self, tag: u8, total: usize) -> Result<Option<Event>, Error> {
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
                self.parse_only = false;
                let rows = self.cur_rows;
                if self.cap.on {
                    self.cap.end(rows);
                }
                if rows == 0 {
                    self.has_row = false;
                }
                self.cur_rows = 0;
                let affected = tag_count(tag);
                self.tally
                    .done(measure::ledger::Kind::of_tag(tag), affected);
                Some(Event::Done(StmtResult { rows, affected }))
            }
            b'I' => {
                if self.cap.on {
                    self.cap.end(0);
                }
                self.open_work = true;
                self.parse_only = false;
                self.has_row = false;
                self.cur_rows = 0;
                Some(Event::Done(StmtResult::default()))
            }
            b'E' => {
                let e = parse_error(body);
                self.tally.failed();
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
                    if self.parse_only {
                        self.parse_commits += 1;
                    }
                }
                self.parse_only = false;
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
                if !self.open_work {
                    self.parse_only = true;
                }
                self.open_work = true;
                None
            }
            b'2' => {
                self.open_work = true;
                self.parse_only = false;
                None
            }
            // CloseComplete, NoData, ParameterDescription, RowDescription, PortalSuspended,
            // NotificationResponse, NegotiateProtocolVersion, CopyOutResponse,
            // CopyData, CopyDone (COPY TO STDOUT output is discarded).
            b'T' => {
                if self.cap.on {
                    self.cap.describe(body);
                }
                None
            }
            b'N' => {
                if self.notices.len() < super::MAX_NOTICES {
                    let n = parse_error(body);
                    self.notices.push(n);
                }
                None
            }
            b'H' => {
                self.copied = true;
                None
            }
            b'3' | b'n' | b't' | b's' | b'A' | b'v' | b'd' | b'c' => None,
            b'S' => {
                let mut it = body.split(|&c| c == 0);
                let k = String::from_utf8_lossy(it.next().unwrap_or_default()).replace('\0', "");
                let v = String::from_utf8_lossy(it.next().unwrap_or_default()).replace('\0', "");
                self.set_param(&k, &v);
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
            b'G' => {
                self.copied = true;
                Some(Event::CopyIn)
            }
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

    /// Record a ParameterStatus (start-up sends a dozen; `SET` of a reported setting sends one
    /// later): replaces the pair if present, keeps the string's `name\0value\0` form.
    fn set_param(&mut self, k: &str, v: &str) {
        if super::param_pairs(&self.params).any(|(pk, _)| pk == k) {
            let mut rebuilt = String::with_capacity(self.params.len() + v.len());
            for (pk, pv) in super::param_pairs(&self.params) {
                let pv = if pk == k { v } else { pv };
                rebuilt.extend([pk, "\0", pv, "\0"]);
            }
            self.params = rebuilt;
        } else {
            self.params.extend([k, "\0", v, "\0"]);
        }
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

    pub(super) async fn next_event(&mut self) -> Result<Event, Error> {
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
    pub(super) async fn run_to_ready(&mut self) -> Result<StmtResult, Error> {
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
                        return Err(Error::Db(Box::new(e)));
                    }
                    err.get_or_insert(e);
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => break,
            }
        }
        self.trim_buffers();
        match err {
            Some(e) => Err(Error::Db(Box::new(e))),
            None => Ok(last),
        }
    }
}
