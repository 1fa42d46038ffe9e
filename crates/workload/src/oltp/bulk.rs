//! sysbench 1.0.20's `bulk_insert.lua`: every client appends rows `(n, n)`, n = 1, 2, ... to its
//! own table `sbtest<client + 1>` through sysbench's bulk-insert buffer (`db_bulk_insert_*` in
//! `src/db_driver.c`), which sends one multi-row `INSERT INTO sbtestN VALUES (1,1),(2,2),...`
//! whenever the next row would not fit in `BULK_PACKET_SIZE` (512 KiB).
//!
//! What sysbench does, and what this module does the same way:
//! - **event** (`event()` in the Lua): append one row. On the first event of a client,
//!   `bulk_insert_init("INSERT INTO sbtest" .. thread_id+1 .. " VALUES")`; then
//!   `bulk_insert_next("(" .. cursize .. "," .. cursize .. ")")`. So an event is one row, and
//!   sysbench's "transactions" and events/s are rows and rows/s. Most events send nothing; one in
//!   about 33,000 (for 6-digit ids) flushes the buffer, and its latency is that INSERT's.
//! - **flush rule** (`db_bulk_insert_next`): if `len(buffer) + len(row) + 1 ('\0') + 1 (',' when
//!   not the first row) > BULK_PACKET_SIZE`, send the buffer first (`db_bulk_do_insert`), then
//!   start again from the `INSERT ... VALUES` header. Rows are joined with `,`, no spaces.
//! - **commits**: the pgsql driver's capabilities say `needs_commit = 0`, so `bulk_commit_max` is
//!   0 and no COMMIT is ever sent: each INSERT is its own autocommitted transaction.
//! - **the statement** goes through `db_query` (not a prepared statement): here a simple-protocol
//!   Query message, whatever `-M`/`--db-ps-mode` says.
//! - **end of the run** (`thread_done` -> `bulk_insert_done`): what is left in each buffer is sent
//!   as a last INSERT. The engine has no per-client end hook, so the buffers live in the shared
//!   workload (one per client, each behind its own lock that only its client takes during the run)
//!   and [`BulkInsert::finish`] sends the remainders after the engine returned, on one session.
//!   Those INSERTs count as writes (sysbench counts them: `db_query` increments the counter), but
//!   they are not events and not timed, as in sysbench.
//! - **counting** (`pgsql_check_status`): an INSERT that added rows counts as a write.
//!
//! Errors: a failed INSERT fails its event with the server's error; sysbench's Lua asserts on
//! `bulk_insert_next()` failing and the thread dies, so no error here is made retryable (23505, a
//! non-empty table, would repeat forever). The rows of a failed INSERT are dropped from the
//! buffer, so the ids of that client then have a gap, which the row check after the run reports.

use std::sync::{Arc, Mutex};

use sut::{Error, ErrorClass, QueryMode, Session};

use crate::{ClientWorkload, TxnContext, TxnType, Workload};

/// `BULK_PACKET_SIZE` in sysbench 1.0.20's db_driver.c: the query buffer's size in bytes.
pub const BULK_PACKET_SIZE: usize = 512 * 1024;

/// One client's bulk-insert buffer (sysbench's `bulk_buffer`, `bulk_cnt`, and the Lua's
/// `cursize`).
#[derive(Debug, Default)]
struct Buffer {
    sql: String,
    /// `INSERT INTO sbtestN VALUES`'s length (`bulk_values`): the buffer is cut back to it.
    header: usize,
    /// Rows in the buffer (`bulk_cnt`).
    rows: u64,
    /// The Lua's `cursize`: the last id appended.
    cursize: u64,
}

impl Buffer {
    /// `db_bulk_insert_next`'s test: the buffer must be sent before `row` fits (room is kept for
    /// the comma and C's terminating NUL).
    fn full_for(&self, row: &str) -> bool {
        let comma = usize::from(self.rows > 0);
        self.sql.len() + row.len() + 1 + comma > BULK_PACKET_SIZE
    }

    fn push(&mut self, row: &str) {
        if self.rows > 0 {
            self.sql.push(',');
        }
        self.sql.push_str(row);
        self.rows += 1;
    }

    /// After `db_bulk_do_insert` (sent or failed): back to the header.
    fn sent(&mut self) {
        self.sql.truncate(self.header);
        self.rows = 0;
    }
}

/// `bulk_insert` with one table per client.
#[derive(Debug)]
pub struct BulkInsert {
    buffers: Arc<Vec<Mutex<Buffer>>>,
    types: Vec<TxnType>,
}

impl BulkInsert {
    /// `clients` is sysbench's `--threads`: client `i` (0-based) writes `sbtest<i+1>`.
    pub fn new(clients: u32) -> Result<BulkInsert, String> {
        if clients == 0 {
            return Err("bulk_insert needs at least 1 client (--threads)".into());
        }
        let buffers = (0..clients)
            .map(|_| Mutex::new(Buffer::default()))
            .collect();
        Ok(BulkInsert {
            buffers: Arc::new(buffers),
            types: vec![TxnType {
                name: "<sysbench: bulk_insert>".into(),
                statements: vec!["INSERT INTO sbtest%u VALUES (1,1),(2,2),...".into()],
            }],
        })
    }

    /// Tables written: one per client.
    pub fn tables(&self) -> u32 {
        self.buffers.len() as u32
    }

    /// sysbench's `bulk_insert_done` for every client: send what is left in each buffer, on
    /// `session`, one autocommitted INSERT per non-empty buffer. Returns the INSERTs sent.
    pub async fn finish(&self, session: &mut Session) -> Result<u64, Error> {
        let mut sent = 0;
        for b in self.buffers.iter() {
            let sql = {
                let mut b = b.lock().unwrap_or_else(|p| p.into_inner());
                if b.rows == 0 {
                    continue;
                }
                let sql = b.sql.clone();
                b.sent();
                sql
            };
            session.simple_query(&sql).await?;
            sent += 1;
        }
        Ok(sent)
    }
}

impl Workload for BulkInsert {
    type Client = BulkClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> BulkClient {
        BulkClient {
            buffers: self.buffers.clone(),
            index: client_id as usize % self.buffers.len(),
            row: String::with_capacity(24),
            pending: String::new(),
        }
    }

    /// Nothing is ignorable here (module notes): 23505 means the table was not empty.
    fn classify(&self, e: &Error) -> ErrorClass {
        match e.sqlstate() {
            Some("23505") => ErrorClass::Other,
            _ => sut::classify(e),
        }
    }
}

/// One client: its buffer's index and scratch strings.
pub struct BulkClient {
    buffers: Arc<Vec<Mutex<Buffer>>>,
    index: usize,
    row: String,
    /// The INSERT to send, taken out of the buffer so no lock is held across the await.
    pending: String,
}

impl ClientWorkload for BulkClient {
    async fn on_connect(&mut self, _session: &mut Session, _mode: QueryMode) -> Result<(), Error> {
        Ok(())
    }

    async fn execute(
        &mut self,
        _txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        use std::fmt::Write as _;
        let send = {
            let mut b = self.buffers[self.index]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if b.cursize == 0 {
                // bulk_insert_init("INSERT INTO sbtest" .. thread_id+1 .. " VALUES")
                b.sql = format!("INSERT INTO sbtest{} VALUES", self.index + 1);
                b.header = b.sql.len();
            }
            b.cursize += 1;
            self.row.clear();
            let _ = write!(self.row, "({},{})", b.cursize, b.cursize);
            let send = b.full_for(&self.row);
            if send && b.rows == 0 {
                // sysbench: "Query length exceeds the maximum value" for a first row that does
                // not fit (never for a row of two integers).
                return Err(Error::Config(
                    "bulk_insert: a row exceeds the packet size".into(),
                ));
            }
            if send {
                // db_bulk_do_insert: the buffer goes out, the header stays.
                self.pending.clear();
                self.pending.push_str(&b.sql);
                b.sent();
            }
            b.push(&self.row);
            send
        };
        if send {
            cx.timer.start();
            let r = session.simple_query(&self.pending).await;
            cx.timer.end(0, r.is_ok());
            r?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_flushes_exactly_when_the_next_row_would_not_fit_512_kib() {
        let mut b = Buffer {
            sql: "INSERT INTO sbtest1 VALUES".into(),
            header: 26,
            ..Default::default()
        };
        let mut flushed_at = Vec::new();
        let mut n = 0u64;
        while flushed_at.len() < 2 {
            n += 1;
            let row = format!("({n},{n})");
            if b.full_for(&row) {
                assert!(b.sql.len() < BULK_PACKET_SIZE, "room for the NUL");
                flushed_at.push((n, b.rows, b.sql.len()));
                b.sent();
            }
            b.push(&row);
        }
        // Bytes of rows with their commas: 117,773 for ids 1..9999 (5 + 8x6 + 90x8 + 900x10 +
        // 9000x12), then 14 per row. The buffer is sent when 26 (header) + bytes + 13 (row) + 1
        // (comma) + 1 (NUL) > 524,288, i.e. bytes > 524,247: after 9999 + ceil((524,248 -
        // 117,773) / 14) = 39,033 rows.
        let (first_n, rows, len) = flushed_at[0];
        assert_eq!(rows, first_n - 1);
        assert_eq!(rows, 39_033);
        assert_eq!(len, 26 + 117_773 + 14 * 29_034);
        assert!(flushed_at[1].1 > 30_000);
        assert!(b.sql.starts_with("INSERT INTO sbtest1 VALUES("));
    }

    #[test]
    fn each_client_writes_its_own_table_and_nothing_is_ignorable() {
        let w = BulkInsert::new(3).unwrap();
        assert_eq!(w.tables(), 3);
        assert_eq!(w.new_client(2).index, 2);
        let db = |code: &str| {
            Error::Db(Box::new(sut::DbError {
                severity: "ERROR".into(),
                code: code.into(),
                message: "m".into(),
                ..Default::default()
            }))
        };
        assert_eq!(w.classify(&db("23505")), ErrorClass::Other);
        assert!(BulkInsert::new(0).is_err());
    }
}
