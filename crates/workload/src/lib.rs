//! # workload: what a transaction does
//!
//! Owns the [`Workload`] trait, and the implementations of the families not yet in a folder of
//! their own in the app crate (`families/<name>/txn`, where YCSB, iibench and CRUD live): one
//! module per workload ([`tpcb`], [`oltp`]; `script/` for pgbench's language; `tpcc/`). A workload owns the
//! transaction: which statements, with which random values, and the checks that must hold after a
//! run. It never owns time: the engine decides when a transaction starts, measures it, retries it
//! and stops the run.
//!
//! Must not touch: clocks (except through [`TxnContext`]), threads, argv, output.
//!
//! Randomness: [`random::Rng`] is pgbench's PRNG (xoroshiro128**, `src/common/pg_prng.c`). The engine
//! hands each transaction the client's stream and restores it before a retry, so a retried
//! transaction draws the same values (pgbench `--max-tries`), without the workload doing anything.

pub mod oltp;
pub mod order;
pub mod probe;
pub mod random;
pub mod readonly;
pub mod script;
pub mod tables;
pub mod tpcb;
pub mod tpcc;

use std::future::Future;
use std::pin::Pin;

pub use order::Order;
pub use random::{ClientStreams, Rng, Streams};
use sut::{Error, ErrorClass, QueryMode, Session};

/// A transaction type a workload offers (pgbench: a builtin or a script).
#[derive(Clone, Debug)]
pub struct TxnType {
    /// Name as pgbench prints it: `<builtin: TPC-B (sort of)>`.
    pub name: String,
    /// Statement texts, in order, as `-r` reports them.
    pub statements: Vec<String>,
}

/// A workload, shared by all clients of a run (behind an `Arc`, across engine threads).
pub trait Workload: Send + Sync + 'static {
    /// The per-client state. Created on the engine thread that runs the client and never moved.
    type Client: ClientWorkload;

    fn txn_types(&self) -> &[TxnType];

    fn new_client(&self, client_id: u32) -> Self::Client;

    /// Whether the workload can run in `mode` (checked by the engine before connecting); the
    /// message says why not.
    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        let _ = mode;
        Ok(())
    }

    /// How the engine treats an error of this workload's transactions: by default the one
    /// table of each protocol ([`sut::classify`]: SQLSTATE, or MySQL's error number). A workload may make more errors retryable (sysbench's
    /// OLTP scripts: 23505 from delete+insert, as sysbench's pgsql driver ignores it).
    fn classify(&self, e: &Error) -> ErrorClass {
        sut::classify(e)
    }

    /// Whether a client goes on after this error of one of its transactions, the transaction
    /// counted failed, with no ROLLBACK and no retry: a replay sends what the captured session
    /// sent next, as that session did after its error (pgbench 18's `--continue-on-error` counts
    /// the same way). Only asked for an error the server answered on a session still usable.
    fn continues_after(&self, e: &Error) -> bool {
        let _ = e;
        false
    }

    /// The target client `client_id` connects to, when it is not the run's (a replayed session
    /// connects as its captured user to its captured database); `None` (the default): `base`.
    fn client_target(&self, client_id: u32, base: &sut::Target) -> Option<sut::Target> {
        let _ = (client_id, base);
        None
    }

    /// Whether transaction type `txn` (index into `txn_types()`) only reads, so `--read-from`
    /// may run it on a read-only server (a hot standby). The default, false, is always safe: a
    /// write sent to a standby fails, a read sent to the primary only loads it. Answer true
    /// only when certain ([`readonly`]'s rules for SQL text).
    fn read_only(&self, txn: usize) -> bool {
        let _ = txn;
        false
    }
}

/// When a client's next transaction is due, for a workload whose clients follow a timetable
/// (a replayed capture, `families::replay`): the engine waits until then, measures the lag from
/// it and splits that lag into the server's part and its own ([`ClientWorkload::due`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Whenever the client is free (every workload but a timetable's).
    Now,
    /// At this many microseconds after the measured start.
    At(u64),
    /// The client's timetable is over: it stops.
    Done,
}

/// Per-statement timing for `-r`, handed in by the engine. When `-r` is off both calls do nothing
/// (no clock is read).
pub trait StatementTimer {
    fn start(&mut self);
    /// Statement `index` (into [`TxnType::statements`]) ended; `ok` is false when it failed.
    fn end(&mut self, index: usize, ok: bool);
}

/// A script's `\sleep`, implemented by the engine with its runtime's timer (a workload owns no
/// clock). As pgbench's `CSTATE_SLEEP`, the sleep runs to its end even past `-T`'s deadline (the
/// transaction then completes and counts); unlike pgbench, which Ctrl-C kills outright, it ends
/// early when the run is cancelled, so in-flight transactions can finish promptly.
pub trait Sleeper {
    /// Sleep `micros` microseconds. Returns false if cut short by cancellation.
    fn sleep(&mut self, micros: u64) -> Pin<Box<dyn Future<Output = bool> + '_>>;
}

/// What the engine gives a transaction: its random stream, the statement timer and the sleeper.
pub struct TxnContext<'a> {
    pub rng: &'a mut Rng,
    pub timer: &'a mut dyn StatementTimer,
    pub mode: QueryMode,
    pub sleep: &'a mut dyn Sleeper,
}

/// How a [`ClientWorkload::on_connect`] ends once it has registered its statements: in prepared
/// mode, prepare every one of them now (once per connection, so no measured transaction pays
/// for a Parse); in the other modes there is nothing to do.
pub async fn prepare_registered(session: &mut Session, mode: QueryMode) -> Result<(), Error> {
    if mode == QueryMode::Prepared {
        session.prepare_all().await?;
    }
    Ok(())
}

/// One client's side of a workload.
pub trait ClientWorkload: 'static {
    /// Called after every (re)connection: register statements (and, in prepared mode, prepare
    /// them). Not measured.
    fn on_connect(
        &mut self,
        session: &mut Session,
        mode: QueryMode,
    ) -> impl Future<Output = Result<(), Error>>;

    /// Run one transaction of type `txn` (index into `txn_types()`). An `Err` means the
    /// transaction failed; the engine classifies it by [`Error::class`], rolls back if needed,
    /// and retries or counts it. Must leave no transaction open on success. On a server error
    /// (`Error::Db`) the session must be left at a ReadyForQuery boundary (a pipeline read
    /// through its Sync), so the engine can send ROLLBACK and retry on the same session.
    ///
    /// Draw every random value from `cx.rng` (never from another source): the engine restores it
    /// before a retry so the retry draws the same values.
    fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> impl Future<Output = Result<(), Error>>;

    /// Where in the workload's source the last failed transaction failed, for a person reading
    /// why a client aborted: `file:line: the command` for a script. Called only after a
    /// failure.
    fn failed_at(&self) -> Option<String> {
        None
    }

    /// The index of the command (into [`TxnType::statements`]) at which the last failed
    /// transaction failed, for pgbench's `--verbose-errors` ("got an error in command N").
    fn failed_command(&self) -> Option<usize> {
        None
    }

    /// The next transaction type, when the workload decides it itself (TPC-C's shuffled deck,
    /// clause 5.2.4.2); `None` leaves the choice to the engine (weighted, pgbench's
    /// `chooseScript`). `rng` is the client's choice stream, not the transaction's.
    fn next_txn(&mut self, rng: &mut Rng) -> Option<usize> {
        let _ = rng;
        None
    }

    /// Microseconds the client waits, unmeasured, before transaction `txn` starts (TPC-C's
    /// think time after the previous transaction plus the keying time of this one, clause
    /// 5.2.5.7). The wait is not part of the transaction's latency, and a run that ends or is
    /// cancelled during it does not start the transaction. 0 (the default) costs nothing.
    fn pause_before_us(&mut self, txn: usize, rng: &mut Rng) -> u64 {
        let _ = (txn, rng);
        0
    }

    /// When the next transaction is due ([`Due`]); asked before each one. The default, `Now`,
    /// leaves the schedule to the engine (closed loop, or `-R`).
    fn due(&mut self) -> Due {
        Due::Now
    }

    /// An order between clients the next transaction must wait for ([`Order`]): it starts
    /// once the gate's answered prefix reaches the number given (a replay's `--order
    /// strict`). The engine measures the time held apart from the transaction's latency. The
    /// default, `None`, holds nothing.
    fn held_by(&self) -> Option<(&Order, u64)> {
        None
    }

    /// After a transaction that succeeded: whether the client must stop now, the transaction
    /// still counting as processed (pgbench's "end of script reached without completing the
    /// last transaction": counted, then the client aborts). Called once per transaction.
    fn stop_after(&mut self) -> Option<Error> {
        None
    }

    /// The sequence number the last transaction attempted to write, for workloads whose writes
    /// are audited after a fault ([`probe`]); `None` for a read, and for every other workload.
    /// Called after each attempt, successful or not.
    fn write_seq(&self) -> Option<u64> {
        None
    }
}
