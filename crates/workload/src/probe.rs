//! The failover probe: small writes that can be audited, and reads, at a fixed rate.
//!
//! Each write inserts one row into `stampede_probe`: a sequence number unique to the attempt and
//! increasing in the order attempts were made (one counter shared by every client of the
//! process), the client's id, and the client's wall clock in microseconds since the Unix epoch
//! (the server adds its own `clock_timestamp()`), in autocommit: one statement, one commit, so
//! the acknowledgement of the INSERT is the acknowledgement of the commit. A write that is tried
//! again (after a retryable error) draws a new number, so each row answers for exactly one
//! attempt and the audit ([`failover::audit`](../../failover/index.html)) never has to guess
//! which try committed. Each read looks up the row the client wrote last (an index probe), and
//! says so ([`Workload::read_only`]): a fault run counts writes and reads apart, so a primary
//! that turns read-only is write downtime while its reads go on.
//!
//! The wall clock is the one place a workload reads a clock: the row must say when the client
//! sent it, to line rows up with the client's log after a failover; the engine still owns every
//! measured time.
//!
//! No primary key on `seq` (so the audit can see a duplicate); an index makes the reads and the
//! audit cheap. MySQL's table has an AUTO_INCREMENT primary key, which Galera needs to
//! replicate rows efficiently.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sut::{Dialect, Error, QueryMode, Session, StmtId, Value};

use crate::{ClientWorkload, TxnContext, TxnType, Workload};

pub const TABLE: &str = "stampede_probe";
/// The table's comment: how stampede recognises a table of its own (it drops no other).
pub const MARK: &str = "created by stampede failover";

/// Transaction types, in `txn_types()` order.
pub const WRITE: usize = 0;
pub const READ: usize = 1;

const INSERT_PG: &str =
    "INSERT INTO stampede_probe (seq, client_id, client_us) VALUES ($1, $2, $3)";
const INSERT_MY: &str = "INSERT INTO stampede_probe (seq, client_id, client_us) VALUES (?, ?, ?)";
const SELECT_PG: &str = "SELECT seq FROM stampede_probe WHERE seq = $1";
const SELECT_MY: &str = "SELECT seq FROM stampede_probe WHERE seq = ?";

/// The statements that create the table, in order.
pub fn create_sql(dialect: Dialect) -> Vec<String> {
    match dialect {
        Dialect::Postgres => vec![
            "CREATE TABLE stampede_probe (seq bigint NOT NULL, client_id integer NOT NULL, \
             client_us bigint NOT NULL, server_ts timestamptz NOT NULL DEFAULT clock_timestamp())"
                .into(),
            "CREATE INDEX stampede_probe_seq ON stampede_probe (seq)".into(),
            format!("COMMENT ON TABLE stampede_probe IS '{MARK}'"),
        ],
        Dialect::MySql => vec![format!(
            "CREATE TABLE stampede_probe (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
             seq BIGINT NOT NULL, client_id INT NOT NULL, client_us BIGINT NOT NULL, \
             server_ts DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), KEY (seq)) \
             ENGINE=InnoDB COMMENT='{MARK}'"
        )],
    }
}

/// A query returning one row, one column: the table's comment, NULL or no row when the table
/// is absent or not stampede's.
pub fn mark_sql(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "SELECT obj_description(to_regclass('stampede_probe'), 'pg_class')",
        Dialect::MySql => {
            "SELECT table_comment FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'stampede_probe'"
        }
    }
}

/// Whether a table of that name exists at all (stampede's or not).
pub fn exists_sql(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "SELECT to_regclass('stampede_probe') IS NOT NULL",
        Dialect::MySql => {
            "SELECT count(*) > 0 FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'stampede_probe'"
        }
    }
}

/// The audit's query: every sequence number present, with how many rows carry it.
pub const AUDIT_SQL: &str = "SELECT seq, count(*) FROM stampede_probe GROUP BY seq";
pub const DROP_SQL: &str = "DROP TABLE stampede_probe";

/// The probe, shared by all clients (the sequence counter is the process's).
pub struct ProbeWorkload {
    dialect: Dialect,
    types: Vec<TxnType>,
    seq: Arc<AtomicU64>,
    /// [`ProbeWorkload::with_reads_as_writes`].
    reads_as_writes: bool,
}

impl ProbeWorkload {
    pub fn new(dialect: Dialect) -> ProbeWorkload {
        let (insert, select) = match dialect {
            Dialect::Postgres => (INSERT_PG, SELECT_PG),
            Dialect::MySql => (INSERT_MY, SELECT_MY),
        };
        ProbeWorkload {
            dialect,
            types: vec![
                TxnType {
                    name: "probe write".into(),
                    statements: vec![insert.into()],
                },
                TxnType {
                    name: "probe read".into(),
                    statements: vec![select.into()],
                },
            ],
            seq: Arc::new(AtomicU64::new(1)),
            reads_as_writes: false,
        }
    }

    /// The probe's old defect, on purpose: its reads are not said to be read-only, so a fault
    /// run records them as writes. For the test that the statement ledger catches a family
    /// that miscounts (stampede's failpoint `probe-reads-as-writes`); never otherwise.
    pub fn with_reads_as_writes(mut self) -> ProbeWorkload {
        self.reads_as_writes = true;
        self
    }

    /// Sequence numbers handed out so far.
    pub fn writes_attempted(&self) -> u64 {
        self.seq.load(Ordering::Relaxed) - 1
    }
}

impl Workload for ProbeWorkload {
    type Client = ProbeClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> ProbeClient {
        ProbeClient {
            id: client_id,
            dialect: self.dialect,
            seq: self.seq.clone(),
            stmts: None,
            last: 0,
            tried: None,
        }
    }

    /// The read is one SELECT: a fault run records it as a read (its own downtime window, not
    /// the writes'), and `--read-from` may send it to a standby.
    fn read_only(&self, txn: usize) -> bool {
        txn == READ && !self.reads_as_writes
    }
}

pub struct ProbeClient {
    id: u32,
    dialect: Dialect,
    seq: Arc<AtomicU64>,
    stmts: Option<(StmtId, StmtId)>,
    /// The last number this client wrote successfully (its reads look it up).
    last: u64,
    /// The number of the last write attempted, for the engine's record.
    tried: Option<u64>,
}

impl ClientWorkload for ProbeClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        let (insert, select) = match self.dialect {
            Dialect::Postgres => (INSERT_PG, SELECT_PG),
            Dialect::MySql => (INSERT_MY, SELECT_MY),
        };
        self.stmts = Some((
            session.register(insert, mode),
            session.register(select, mode),
        ));
        crate::prepare_registered(session, mode).await
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let (insert, select) = self.stmts.expect("registered on connect");
        cx.timer.start();
        let r = if txn == WRITE {
            let seq = self.seq.fetch_add(1, Ordering::Relaxed);
            self.tried = Some(seq);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as i64);
            let r = session
                .execute(
                    insert,
                    &[
                        Value::Int(seq as i64),
                        Value::Int(self.id as i64),
                        Value::Int(now),
                    ],
                )
                .await;
            if r.is_ok() {
                self.last = seq;
            }
            r
        } else {
            self.tried = None;
            session
                .execute(select, &[Value::Int(self.last as i64)])
                .await
        };
        cx.timer.end(0, r.is_ok());
        r.map(|_| ())
    }

    fn failed_command(&self) -> Option<usize> {
        Some(0)
    }

    fn write_seq(&self) -> Option<u64> {
        self.tried
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_marked_as_stampedes_in_both_dialects() {
        for d in [Dialect::Postgres, Dialect::MySql] {
            let ddl = create_sql(d).join(";\n");
            assert!(ddl.contains(MARK), "{ddl}");
            assert!(ddl.contains("seq") && ddl.contains("client_id") && ddl.contains("client_us"));
            // No unique constraint on seq: a duplicate must be visible to the audit.
            assert!(!ddl.to_lowercase().contains("unique"), "{ddl}");
        }
    }

    #[test]
    fn every_attempt_draws_its_own_number_across_clients() {
        let w = ProbeWorkload::new(Dialect::Postgres);
        let a = w.new_client(0);
        let b = w.new_client(1);
        let s1 = a.seq.fetch_add(1, Ordering::Relaxed);
        let s2 = b.seq.fetch_add(1, Ordering::Relaxed);
        assert_eq!((s1, s2), (1, 2));
        assert_eq!(w.writes_attempted(), 2);
        assert_eq!(w.txn_types()[WRITE].statements[0], INSERT_PG);
        assert_eq!(
            ProbeWorkload::new(Dialect::MySql).txn_types()[READ].statements[0],
            SELECT_MY
        );
    }

    #[test]
    fn only_the_read_is_read_only() {
        // The engine records a type that is not read-only as a write (`Op::Write`): a read
        // taken for one hid a read-only primary's write outage behind succeeding reads.
        let w = ProbeWorkload::new(Dialect::Postgres);
        assert!(w.read_only(READ));
        assert!(!w.read_only(WRITE));
    }
}
