//! Reading a command's reply in place ("COM_QUERY Response", "Text Resultset", "Binary Protocol
//! Resultset", "Multi-Resultset"): an OK, an ERR, or a result set (column count, column
//! definitions, [EOF], rows, then an EOF or, under CLIENT_DEPRECATE_EOF, an OK with header
//! 0xFE), repeated while SERVER_MORE_RESULTS_EXISTS is set.
//!
//! Rows are counted; the first row of each result is kept as length-encoded text (a binary row's
//! values converted to the text protocol's forms) for [`Session::row_value`]; `simple_query`'s
//! rows are collected as strings. The status flags of each OK/EOF give the transaction state and
//! the commit count (see [`Session::server_commits`]).

use pg::{DbError, Error, StmtResult};

use super::io::protocol;
use super::{Column, Phase, Session};
use crate::error::{db_error, ends_connection, ER_LOCK_DEADLOCK};
use crate::sql::Kind;
use crate::wire::{self, *};

/// What one packet meant to the reader.
enum Step {
    More,
    /// A result ended; `true` when another follows.
    End(StmtResult, bool),
    Error(DbError),
}

impl Session {
    /// Read a whole reply (all its results); the last result, or the first error. `binary`:
    /// rows are in the binary protocol (a COM_STMT_EXECUTE's reply).
    ///
    /// Hot path: packets already buffered are handled synchronously; the only await is the
    /// read itself.
    pub(super) async fn read_reply(&mut self, binary: bool) -> Result<StmtResult, Error> {
        self.phase = Phase::Head;
        self.binary = binary;
        self.kind_at = 0;
        self.has_row = false;
        self.cur_rows = 0;
        let last;
        loop {
            let Some(len) = self.buffered_packet()? else {
                self.fill().await?;
                continue;
            };
            let step = self.on_packet(len);
            self.consume(len);
            match step {
                Ok(Step::More) => {}
                Ok(Step::End(r, more)) => {
                    if !more {
                        last = r;
                        break;
                    }
                }
                Ok(Step::Error(e)) => {
                    self.trim_buffers();
                    return Err(Error::Db(Box::new(e)));
                }
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
        self.trim_buffers();
        Ok(last)
    }

    /// An ERR packet as an error, with what it does to the session: an error that ends the
    /// connection makes it unusable; a deadlock has rolled the transaction back.
    pub(super) fn server_error(&mut self, e: wire::Err) -> Error {
        if ends_connection(e.number) {
            self.broken = true;
        }
        if e.number == ER_LOCK_DEADLOCK {
            self.status &= !SERVER_STATUS_IN_TRANS;
        }
        Error::Db(Box::new(db_error(e)))
    }

    fn on_packet(&mut self, len: usize) -> Result<Step, Error> {
        let p = &self.inb[4..4 + len];
        let first = *p
            .first()
            .ok_or_else(|| protocol("empty packet in a reply"))?;
        if first == 0xff {
            // An ERR may come in any phase (a query killed mid-result, a goodbye); no column
            // definition or row starts with 0xFF.
            let e = parse_err(p);
            let kind = self.kinds.get(self.kind_at).or(self.kinds.last());
            self.tally.failed();
            if kind == Some(&Kind::Commit) {
                self.commit_errors += 1;
            }
            return match self.server_error(e) {
                Error::Db(db) => Ok(Step::Error(*db)),
                other => Err(other),
            };
        }
        match self.phase {
            Phase::Head => match first {
                0x00 => {
                    let ok = parse_ok(p).ok_or_else(|| protocol("malformed OK packet"))?;
                    self.last_insert_id = ok.last_insert_id;
                    if self.cap.on {
                        self.cap.end(false, 0);
                    }
                    Ok(self.end_result(ok.affected, ok.status, ok.warnings))
                }
                0xfb => Err(protocol(
                    "the server asked for a LOCAL INFILE, which this client does not offer",
                )),
                _ => {
                    let (n, _) = lenenc_int(p).ok_or_else(|| protocol("malformed column count"))?;
                    self.columns.clear();
                    self.cur_rows = 0;
                    if self.cap.on {
                        self.cap.result_set();
                    }
                    self.phase = if n == 0 {
                        return Err(protocol("a result set with no columns"));
                    } else {
                        Phase::Columns(n)
                    };
                    Ok(Step::More)
                }
            },
            Phase::Columns(left) => {
                if self.binary {
                    let c = column_of(p).ok_or_else(|| protocol("malformed column definition"))?;
                    self.columns.push(c);
                }
                if self.cap.on {
                    self.cap
                        .column(p)
                        .ok_or_else(|| protocol("malformed column definition"))?;
                }
                self.phase = if left > 1 {
                    Phase::Columns(left - 1)
                } else if self.caps & CLIENT_DEPRECATE_EOF != 0 {
                    Phase::Rows
                } else {
                    Phase::ColumnsEof
                };
                Ok(Step::More)
            }
            Phase::ColumnsEof => {
                if first != 0xfe {
                    return Err(protocol("no EOF after the column definitions"));
                }
                self.phase = Phase::Rows;
                Ok(Step::More)
            }
            Phase::Rows => {
                let deprecate_eof = self.caps & CLIENT_DEPRECATE_EOF != 0;
                if first == 0xfe
                    && (if deprecate_eof {
                        len < MAX_PAYLOAD
                    } else {
                        len < 9
                    })
                {
                    let (warnings, status) = if deprecate_eof {
                        let ok = parse_ok(p).ok_or_else(|| protocol("malformed OK packet"))?;
                        (ok.warnings, ok.status)
                    } else {
                        parse_eof(p).ok_or_else(|| protocol("malformed EOF packet"))?
                    };
                    if self.cap.on {
                        self.cap.end(true, self.cur_rows);
                    }
                    return Ok(self.end_result(0, status, warnings));
                }
                self.on_row(len)?;
                Ok(Step::More)
            }
        }
    }

    /// A row: kept when it is its result's first, collected for `simple_query`, counted.
    #[inline]
    fn on_row(&mut self, len: usize) -> Result<(), Error> {
        let p = &self.inb[4..4 + len];
        if self.cur_rows == 0 {
            self.row.clear();
            if self.binary {
                binary_row_as_text(p, &self.columns, &mut self.row)
                    .ok_or_else(|| protocol("malformed binary row"))?;
            } else {
                self.row.extend_from_slice(p);
            }
            self.has_row = true;
        }
        if self.cap.on {
            let out = self.cap.row_buf();
            if self.binary {
                binary_row_as_text(p, &self.columns, out)
                    .ok_or_else(|| protocol("malformed binary row"))?;
            } else {
                out.extend_from_slice(p);
            }
        }
        if let Some(rows) = &mut self.collect {
            let mut cols = Vec::new();
            let mut b = p;
            while !b.is_empty() {
                if b[0] == 0xfb {
                    cols.push(None);
                    b = &b[1..];
                } else {
                    let (v, n) = lenenc_str(b).ok_or_else(|| protocol("malformed text row"))?;
                    cols.push(Some(String::from_utf8_lossy(v).into_owned()));
                    b = &b[n..];
                }
            }
            rows.push(cols);
        }
        self.cur_rows += 1;
        Ok(())
    }

    /// A result ended with `status`: the transaction state, the commit count, and whether
    /// another result follows.
    fn end_result(&mut self, affected: u64, status: u16, warnings: u16) -> Step {
        let kind = self
            .kinds
            .get(self.kind_at)
            .or(self.kinds.last())
            .copied()
            .unwrap_or(Kind::Other);
        self.kind_at += 1;
        let was_open = self.status & SERVER_STATUS_IN_TRANS != 0;
        let open = status & SERVER_STATUS_IN_TRANS != 0;
        let autocommit = status & SERVER_STATUS_AUTOCOMMIT != 0;
        match kind {
            Kind::Commit => {
                self.commits += 1;
                self.explicit_commits += 1;
            }
            Kind::Begin | Kind::Rollback => {}
            Kind::Select | Kind::Insert | Kind::Update | Kind::Delete | Kind::Other => {
                if !open && (was_open || autocommit) {
                    self.commits += 1;
                }
            }
        }
        self.status = status;
        self.warnings = warnings;
        let rows = self.cur_rows;
        // A select's rows are those it returned; a write's, those it affected (changed, unless
        // the session asked for found rows).
        let kind = kind.ledger();
        self.tally.done(
            kind,
            if kind == measure::ledger::Kind::Select {
                rows
            } else {
                affected
            },
        );
        if rows == 0 {
            self.has_row = false;
        }
        self.cur_rows = 0;
        self.phase = Phase::Head;
        Step::End(
            StmtResult { rows, affected },
            status & SERVER_MORE_RESULTS_EXISTS != 0,
        )
    }
}

/// The type, unsignedness and decimals of a column definition ("Protocol::ColumnDefinition41":
/// six length-encoded strings, the length of the fixed fields, character set (2), column
/// length (4), type (1), flags (2), decimals (1)).
fn column_of(p: &[u8]) -> Option<Column> {
    let mut i = 0;
    for _ in 0..6 {
        i += lenenc_str(p.get(i..)?)?.1;
    }
    i += lenenc_int(p.get(i..)?)?.1;
    let f = p.get(i..i + 10)?;
    Some(Column {
        ty: f[6],
        unsigned: u16_le(&f[7..9]) & UNSIGNED_FLAG != 0,
        decimals: f[9],
    })
}

/// Write a binary row's values as a text row (length-encoded strings, 0xFB for NULL) into
/// `out`, in the text protocol's forms. `None` when the row is malformed.
pub(super) fn binary_row_as_text(p: &[u8], columns: &[Column], out: &mut Vec<u8>) -> Option<()> {
    let n = columns.len();
    // Header 0x00, then the NULL bitmap with an offset of 2 bits.
    let bitmap = p.get(1..1 + (n + 9) / 8)?;
    let mut b = &p[1 + bitmap.len()..];
    for (k, c) in columns.iter().enumerate() {
        let bit = k + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(0xfb);
            continue;
        }
        let len = binary_value_len(c.ty, b)?;
        let v = &b[..len];
        b = &b[len..];
        // Values formatted here are all shorter than 251 bytes: a one-byte length prefix.
        let at = out.len();
        out.push(0);
        match c.ty {
            TYPE_TINY => put_int(
                out,
                if c.unsigned {
                    v[0] as i64
                } else {
                    v[0] as i8 as i64
                },
            ),
            TYPE_SHORT | TYPE_YEAR => {
                let x = u16_le(v);
                put_int(
                    out,
                    if c.unsigned {
                        x as i64
                    } else {
                        x as i16 as i64
                    },
                )
            }
            TYPE_LONG | TYPE_INT24 => {
                let x = u32_le(v);
                put_int(
                    out,
                    if c.unsigned {
                        x as i64
                    } else {
                        x as i32 as i64
                    },
                )
            }
            TYPE_LONGLONG => {
                let x = u64::from_le_bytes(v.try_into().ok()?);
                if c.unsigned {
                    out.extend_from_slice(itoa::Buffer::new().format(x).as_bytes())
                } else {
                    put_int(out, x as i64)
                }
            }
            TYPE_FLOAT => put_float(out, f32::from_le_bytes(v.try_into().ok()?) as f64, true),
            TYPE_DOUBLE => put_float(out, f64::from_le_bytes(v.try_into().ok()?), false),
            TYPE_DATE | TYPE_DATETIME | TYPE_TIMESTAMP | wire::TYPE_NEWDATE => {
                put_datetime(out, &v[1..], c.ty != TYPE_DATE, c.decimals)
            }
            TYPE_TIME => put_time(out, &v[1..], c.decimals),
            _ => {
                // A length-encoded string already: copy it whole (its own length prefix).
                out.pop();
                out.extend_from_slice(v);
                continue;
            }
        }
        out[at] = (out.len() - at - 1) as u8;
    }
    Some(())
}

fn put_int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Floats as the text protocol shows them: integral values without a fraction, others in the
/// shortest form that reads back the same (FLOAT columns at single precision).
fn put_float(out: &mut Vec<u8>, v: f64, single: bool) {
    if v.is_finite() && v == v.trunc() && v.abs() < 1e15 {
        put_int(out, v as i64);
    } else if single {
        out.extend_from_slice(ryu::Buffer::new().format(v as f32).as_bytes());
    } else {
        out.extend_from_slice(ryu::Buffer::new().format(v).as_bytes());
    }
}

fn put2(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&[b'0' + (v / 10 % 10) as u8, b'0' + (v % 10) as u8]);
}

fn put_fraction(out: &mut Vec<u8>, micros: u32, decimals: u8) {
    let d = if decimals == 0 || decimals > 6 {
        if micros == 0 {
            return;
        }
        6
    } else {
        decimals as u32
    };
    out.push(b'.');
    let mut div = 100_000;
    for _ in 0..d {
        out.push(b'0' + (micros / div % 10) as u8);
        div /= 10;
    }
}

/// DATE/DATETIME/TIMESTAMP ("Binary Protocol Value", MYSQL_TYPE_DATETIME): 0, 4, 7 or 11 bytes.
fn put_datetime(out: &mut Vec<u8>, v: &[u8], time: bool, decimals: u8) {
    let year = v.get(0..2).map_or(0, u16_le) as u32;
    let g = |i: usize| v.get(i).copied().unwrap_or(0) as u32;
    let micros = v.get(7..11).map_or(0, u32_le);
    put2(out, year / 100);
    put2(out, year % 100);
    out.push(b'-');
    put2(out, g(2));
    out.push(b'-');
    put2(out, g(3));
    if time {
        out.push(b' ');
        put2(out, g(4));
        out.push(b':');
        put2(out, g(5));
        out.push(b':');
        put2(out, g(6));
        put_fraction(out, micros, decimals);
    }
}

/// TIME ("Binary Protocol Value", MYSQL_TYPE_TIME): 0, 8 or 12 bytes: sign, days, h, m, s, µs.
fn put_time(out: &mut Vec<u8>, v: &[u8], decimals: u8) {
    let g = |i: usize| v.get(i).copied().unwrap_or(0) as u32;
    if g(0) == 1 {
        out.push(b'-');
    }
    let days = v.get(1..5).map_or(0, u32_le);
    let hours = days * 24 + g(5);
    if hours >= 100 {
        out.extend_from_slice(itoa::Buffer::new().format(hours).as_bytes());
    } else {
        put2(out, hours);
    }
    out.push(b':');
    put2(out, g(6));
    out.push(b':');
    put2(out, g(7));
    put_fraction(out, v.get(8..12).map_or(0, u32_le), decimals);
}
