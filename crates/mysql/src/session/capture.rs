//! Captured results, for pgbench's `\gset` and `\aset` over the MySQL protocol: what the
//! PostgreSQL session keeps of a `PGresult` (`pg::CapturedResult`), kept here for the
//! statements registered with [`Session::capture_results`]: per result, whether it is a result
//! set, its column names (from the column definitions), its row count, and its last row as text
//! (a binary row's values in the text protocol's forms, as [`Session::row_value`] reads them).
//!
//! Buffers are reused from one execution to the next: capturing allocates only while a result
//! is larger than any before, and statements without capture pass by one branch per packet.

use super::Session;
use crate::wire;

/// One captured result.
#[derive(Default)]
pub(super) struct CapSlot {
    /// The column names, each as a length-encoded string.
    names: Vec<u8>,
    /// The last row, length-encoded text values (0xFB for NULL).
    row: Vec<u8>,
    rows: u64,
    /// A result set (column definitions came), even with no rows; false for an OK.
    tuples: bool,
}

/// Result capture state of a session.
#[derive(Default)]
pub(super) struct Capture {
    /// Capturing the results of the statement being executed.
    pub(super) on: bool,
    /// Results of the last captured execution: `slots[..n]`.
    slots: Vec<CapSlot>,
    n: usize,
}

impl Capture {
    /// A command starts: capture its results or not.
    pub(super) fn start(&mut self, on: bool) {
        self.on = on;
        self.n = 0;
    }

    fn current(&mut self) -> &mut CapSlot {
        if self.slots.len() <= self.n {
            self.slots.push(CapSlot::default());
        }
        &mut self.slots[self.n]
    }

    /// A result set's column count came.
    pub(super) fn result_set(&mut self) {
        let slot = self.current();
        slot.names.clear();
        slot.row.clear();
        slot.tuples = true;
    }

    /// A column definition ("Protocol::ColumnDefinition41": catalog, schema, table, org_table,
    /// name, ...): keep its name. `None` when malformed.
    pub(super) fn column(&mut self, def: &[u8]) -> Option<()> {
        let mut i = 0;
        for _ in 0..4 {
            i += wire::lenenc_str(def.get(i..)?)?.1;
        }
        let (_, n) = wire::lenenc_str(def.get(i..)?)?;
        let slot = self.current();
        slot.names.extend_from_slice(&def[i..i + n]);
        Some(())
    }

    /// The buffer the current result's last row goes into (cleared).
    pub(super) fn row_buf(&mut self) -> &mut Vec<u8> {
        let slot = self.current();
        slot.row.clear();
        &mut slot.row
    }

    /// The current result ended: a result set of `rows` rows, or (`tuples` false) an OK.
    pub(super) fn end(&mut self, tuples: bool, rows: u64) {
        let slot = self.current();
        if !tuples {
            slot.names.clear();
            slot.row.clear();
        }
        slot.tuples = tuples;
        slot.rows = rows;
        self.n += 1;
    }
}

/// A result of a statement run with result capture on ([`Session::capture_results`]): whether
/// it is a result set, how many rows it had, the column names and the last row's values.
#[derive(Clone, Copy)]
pub struct CapturedResult<'a> {
    slot: &'a CapSlot,
}

impl<'a> CapturedResult<'a> {
    /// Rows received.
    pub fn rows(&self) -> u64 {
        self.slot.rows
    }

    /// The statement returned a result set (a SELECT with no row included); false for a
    /// statement answered with an OK.
    pub fn returns_rows(&self) -> bool {
        self.slot.tuples
    }

    /// `(column name, value of the last row)` per column (`None` = NULL, or no row at all), in
    /// text form. Parsed in place: no allocation.
    pub fn columns(&self) -> CapturedColumns<'a> {
        let has_row = self.slot.rows > 0;
        CapturedColumns {
            names: if self.slot.tuples {
                &self.slot.names
            } else {
                &[]
            },
            row: if has_row { &self.slot.row } else { &[] },
        }
    }
}

/// Iterator over a captured result's columns (see [`CapturedResult::columns`]).
pub struct CapturedColumns<'a> {
    names: &'a [u8],
    row: &'a [u8],
}

impl<'a> Iterator for CapturedColumns<'a> {
    type Item = (&'a str, Option<&'a str>);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, n) = wire::lenenc_str(self.names)?;
        self.names = &self.names[n..];
        let value = match self.row.first() {
            None => None,
            Some(0xfb) => {
                self.row = &self.row[1..];
                None
            }
            Some(_) => match wire::lenenc_str(self.row) {
                Some((v, n)) => {
                    self.row = &self.row[n..];
                    Some(std::str::from_utf8(v).unwrap_or(""))
                }
                None => {
                    self.row = &[];
                    None
                }
            },
        };
        Some((std::str::from_utf8(name).unwrap_or(""), value))
    }
}

impl Session {
    /// The results of the last [`Session::execute`] of a capturing statement, in order (several
    /// for a multi-statement text); empty for other statements. After an error the results
    /// before it are present.
    pub fn captured(&self) -> impl DoubleEndedIterator<Item = CapturedResult<'_>> + '_ {
        let n = if self.cap.on { self.cap.n } else { 0 };
        self.cap.slots[..n]
            .iter()
            .map(|slot| CapturedResult { slot })
    }
}
