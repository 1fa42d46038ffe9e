//! The parallel loader every workload shares: a queue of [`Task`]s worked off by `jobs`
//! connections, with per-table progress, cancellation, and `COPY ... FREEZE` where — and only
//! where — it is legal.
//!
//! Must not touch: any particular workload's schema (a workload builds the task list), argv,
//! output. A task names the relation it writes; the driver never writes anywhere else.
//!
//! ## COPY FREEZE: when it is legal
//! PostgreSQL docs, `COPY`: "FREEZE ... Requests copying the data with rows already frozen ...
//! This is intended as a performance option for initial data loading. Rows will be frozen only if
//! the table being loaded has been created or truncated in the current subtransaction ...
//! COPY FREEZE on a partitioned table is not supported." (copyfrom.c raises 55000 for the first
//! condition and 0A000 for the second.) And a table that several connections load at once cannot
//! be truncated by any of them inside its loading transaction (TRUNCATE takes an ACCESS EXCLUSIVE
//! lock until commit, and the others could not see the truncation anyway). So:
//! - A [`TaskKind::Copy`] with `whole: true` owns its relation: it runs
//!   `BEGIN; TRUNCATE rel; COPY rel FROM STDIN WITH (FREEZE ON); COMMIT` — legal by construction,
//!   provided the relation is not a partitioned table (the workload must only mark plain tables
//!   and leaf partitions `whole`). pgbench does the same on servers >= 14 (pgbench.c,
//!   `initPopulateTable`; 14 is when COPY FREEZE started setting the visibility map, which is
//!   where the gain is), and so does this driver.
//! - Every other task (a row range of a table shared with other tasks) uses plain COPY in its own
//!   autocommit transaction.
//! - Servers that look like PostgreSQL but shard tables (Aurora Limitless, Citus distributed
//!   tables) can refuse FREEZE even then (seed 000: `ERROR: cannot perform COPY FREEZE because the
//!   table was not created or truncated in the current subtransaction`). Therefore the first
//!   COPY FREEZE of a task is an empty one (a probe, one round trip): if the server refuses it,
//!   the task rolls back, FREEZE is switched off for the rest of the load, a [`Event::Notice`] says
//!   so, and the task runs again with plain COPY. A refusal of the real COPY (55000/0A000) is
//!   handled the same way; the rows are a pure function of their numbers, so nothing is lost.
//!
//! ## Cancellation and failure
//! The cancel flag is checked before each task and after each chunk (~256 KiB) of COPY data. On
//! cancel, a COPY in progress is aborted with CopyFail (the server discards it) and an open
//! transaction rolled back, so no partial range is ever committed; the driver returns
//! [`LoadError::Interrupted`]. When one connection fails, the others stop the same way and the
//! first real error is returned. (Ranges committed before the stop stay committed: the workload
//! decides what to do with a partly loaded table — tpcb drops its tables.)

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sut::{Dialect, Session, Target};

use crate::steps::exec;
use crate::{Event, LoadError, TableProgress};

/// COPY data is sent (and cancellation checked, progress counted) in chunks of about this size.
const CHUNK_BYTES: usize = 256 * 1024;
/// How often the caller's callback hears about progress.
const TICK: Duration = Duration::from_millis(100);

/// Rows of one table as COPY text: a pure function of the row number, so any connection can
/// produce any range and a failed range can be produced again.
///
/// A source may number *units* of several rows instead of single rows, when how many rows a unit
/// holds is drawn with it (TPC-C's order lines: one unit per order, as many lines as the order's
/// `o_ol_cnt`). Such a source writes a whole unit from [`RowSource::write_row`] and says how many
/// rows that was by overriding [`RowSource::write_unit`]; a task's `rows` then counts units, and
/// progress and the check against the server's COPY count use the rows written.
pub trait RowSource: Send + Sync {
    /// Append row `row` (0-based) in COPY text format (tab-separated, `\N` for NULL), with its
    /// trailing newline (for a source of units: all rows of unit `row`).
    fn write_row(&self, row: u64, out: &mut Vec<u8>);

    /// Append unit `unit` and return how many rows it wrote (one, unless the source numbers
    /// units of several rows). What the driver calls.
    fn write_unit(&self, unit: u64, out: &mut Vec<u8>) -> u64 {
        self.write_row(unit, out);
        1
    }
}

/// What a task does.
pub enum TaskKind {
    /// COPY rows `rows` of `source` into `relation` (SQL text: a table name, possibly
    /// schema-qualified, optionally followed by a column list in `columns`). For a source of
    /// units (see [`RowSource`]), `rows` numbers units.
    Copy {
        relation: String,
        columns: Option<String>,
        source: Arc<dyn RowSource>,
        rows: Range<u64>,
        /// This task is the only writer of `relation` and loads all of its rows: it may
        /// TRUNCATE it and use COPY FREEZE. Never set for a partitioned (parent) table.
        whole: bool,
    },
    /// Run SQL with the simple protocol (server-side generation, `INSERT ... SELECT`). When done,
    /// `rows` are counted to the progress slots given.
    Sql {
        sql: String,
        rows: Vec<(usize, u64)>,
    },
}

/// One unit of work for one connection.
pub struct Task {
    /// Index of the progress slot (table) that COPY rows count towards.
    pub slot: usize,
    pub kind: TaskKind,
}

/// How the driver runs.
#[derive(Clone, Debug)]
pub struct DriverOptions {
    /// Connections (at most one per task).
    pub jobs: usize,
    /// Raised by the caller (Ctrl-C): stop after the current chunk.
    pub cancel: Arc<AtomicBool>,
    /// Use COPY FREEZE for `whole` tasks where legal (server >= 14, as pgbench).
    pub freeze: bool,
}

/// What the driver did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverOutcome {
    /// Rows loaded per slot.
    pub rows: Vec<u64>,
    /// COPY tasks committed with FREEZE.
    pub frozen_tasks: u64,
    /// COPY tasks committed without FREEZE.
    pub plain_tasks: u64,
    /// The server refused COPY FREEZE at least once (FREEZE was then switched off).
    pub freeze_refused: bool,
    /// Connections used.
    pub connections: usize,
}

struct Shared {
    queue: Mutex<VecDeque<Task>>,
    done: Vec<AtomicU64>,
    cancel: Arc<AtomicBool>,
    /// Another worker failed: stop.
    abort: AtomicBool,
    freeze: bool,
    /// Cleared when the server refuses FREEZE.
    freeze_ok: AtomicBool,
    notices: Mutex<Vec<String>>,
    frozen_tasks: AtomicU64,
    plain_tasks: AtomicU64,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }
    fn notice(&self, msg: String) {
        self.notices.lock().unwrap().push(msg);
    }
}

/// Work off `tasks` through `opts.jobs` connections to `cfg`. `slots` names the progress slots
/// (tables) with their total rows; `Task::slot` indexes into it. Progress goes to `on_event` as
/// [`Event::Rows`] about every 100 ms and once at the end.
///
/// Connections are tokio tasks (`tokio::spawn`): on a multi-threaded runtime, row generation
/// runs on several threads.
pub async fn run(
    cfg: &Target,
    opts: &DriverOptions,
    slots: Vec<TableProgress>,
    tasks: Vec<Task>,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<DriverOutcome, LoadError> {
    let started = Instant::now();
    let n_tasks = tasks.len();
    let shared = Arc::new(Shared {
        queue: Mutex::new(tasks.into()),
        done: slots.iter().map(|_| AtomicU64::new(0)).collect(),
        cancel: opts.cancel.clone(),
        abort: AtomicBool::new(false),
        freeze: opts.freeze,
        freeze_ok: AtomicBool::new(true),
        notices: Mutex::new(Vec::new()),
        frozen_tasks: AtomicU64::new(0),
        plain_tasks: AtomicU64::new(0),
    });
    let mut slots = slots;
    let report = |slots: &mut Vec<TableProgress>, on_event: &mut dyn FnMut(&Event<'_>)| {
        let msgs = std::mem::take(&mut *shared.notices.lock().unwrap());
        for m in &msgs {
            on_event(&Event::Notice(m));
        }
        for (s, d) in slots.iter_mut().zip(&shared.done) {
            s.rows_done = d.load(Ordering::Relaxed);
        }
        on_event(&Event::Rows {
            tables: slots,
            elapsed: started.elapsed(),
        });
    };

    let connections = opts.jobs.max(1).min(n_tasks);
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..connections {
        set.spawn(worker(cfg.clone(), shared.clone()));
    }
    let mut first_err: Option<LoadError> = None;
    let mut tick = tokio::time::interval(TICK);
    tick.tick().await;
    loop {
        tokio::select! {
            r = set.join_next() => match r {
                None => break,
                Some(Ok(Ok(()))) => {}
                Some(Ok(Err(e))) => {
                    shared.abort.store(true, Ordering::Relaxed);
                    // Keep the first real error; Interrupted only if nothing better comes.
                    if matches!(first_err, None | Some(LoadError::Interrupted)) {
                        first_err = Some(e);
                    }
                }
                Some(Err(join)) => {
                    shared.abort.store(true, Ordering::Relaxed);
                    if join.is_panic() {
                        std::panic::resume_unwind(join.into_panic());
                    }
                    first_err.get_or_insert(LoadError::Interrupted);
                }
            },
            _ = tick.tick() => report(&mut slots, on_event),
        }
    }
    report(&mut slots, on_event);
    if let Some(e) = first_err {
        return Err(e);
    }
    if shared.cancel.load(Ordering::Relaxed) {
        return Err(LoadError::Interrupted);
    }
    Ok(DriverOutcome {
        rows: slots.iter().map(|s| s.rows_done).collect(),
        frozen_tasks: shared.frozen_tasks.load(Ordering::Relaxed),
        plain_tasks: shared.plain_tasks.load(Ordering::Relaxed),
        freeze_refused: !shared.freeze_ok.load(Ordering::Relaxed),
        connections,
    })
}

async fn worker(cfg: Target, shared: Arc<Shared>) -> Result<(), LoadError> {
    let mut s = Session::connect(&cfg)
        .await
        .map_err(|e| LoadError::db("connecting a loader", e))?;
    // pgbench.c, initPopulateTable: "Use COPY with FREEZE on v14 and later".
    let freeze = shared.freeze && s.pg().is_some_and(|p| p.server_version_num() >= 140000);
    let mut buf = Vec::with_capacity(CHUNK_BYTES + 4096);
    let r = loop {
        if shared.stopping() {
            break Err(LoadError::Interrupted);
        }
        let task = shared.queue.lock().unwrap().pop_front();
        let Some(task) = task else { break Ok(()) };
        if let Err(e) = run_task(&mut s, &task, &shared, freeze, &mut buf).await {
            break Err(e);
        }
    };
    if s.is_usable() {
        s.close().await;
    }
    r
}

/// Best effort: leave the session idle, outside any COPY or transaction.
async fn abandon(s: &mut Session, in_transaction: bool) {
    if !s.is_usable() {
        return;
    }
    if let Some(p) = s.pg_mut() {
        let _ = p.copy_fail("stampede: load stopped").await;
    }
    if in_transaction {
        let _ = s.simple_query("ROLLBACK").await;
    }
}

/// Whether a failed COPY FREEZE means "not here" (fall back to plain COPY) rather than a real
/// failure: 55000 object_not_in_prerequisite_state (not created/truncated in this
/// subtransaction), 0A000 feature_not_supported (partitioned, or a sharding layer's refusal).
fn is_freeze_refusal(e: &LoadError) -> bool {
    matches!(e.sqlstate(), Some("55000") | Some("0A000"))
}

async fn run_task(
    s: &mut Session,
    task: &Task,
    shared: &Shared,
    freeze: bool,
    buf: &mut Vec<u8>,
) -> Result<(), LoadError> {
    match &task.kind {
        TaskKind::Sql { sql, rows } => {
            exec(s, sql).await?;
            for (slot, n) in rows {
                shared.done[*slot].fetch_add(*n, Ordering::Relaxed);
            }
            Ok(())
        }
        TaskKind::Copy {
            relation,
            columns,
            source,
            rows,
            whole,
        } => {
            let target = match columns {
                Some(c) => format!("{relation} ({c})"),
                None => relation.clone(),
            };
            let job = CopyJob {
                target: &target,
                source: &**source,
                rows: rows.clone(),
                slot: task.slot,
                shared,
            };
            if s.dialect() == Dialect::MySql {
                return insert_task(s, relation, *whole, &job, buf).await;
            }
            if !*whole {
                copy_rows(s, &job, false, buf).await?;
                shared.plain_tasks.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            let begin = format!("BEGIN; TRUNCATE {relation}");
            exec(s, &begin).await?;
            let mut use_freeze = freeze && shared.freeze_ok.load(Ordering::Relaxed);
            if use_freeze {
                // The probe: an empty COPY FREEZE; the real one follows in the same transaction
                // (still legal: the table was truncated in this subtransaction).
                let probe = async {
                    let s = s.pg_mut().expect("COPY runs on PostgreSQL");
                    s.copy_in(&format!("COPY {target} FROM STDIN WITH (FREEZE ON)"))
                        .await?;
                    s.copy_finish().await
                }
                .await;
                if let Err(e) = probe {
                    let e = LoadError::db(format!("COPY {relation} ... FREEZE"), e);
                    abandon(s, true).await;
                    // Only a server's refusal falls back; a broken connection is an error.
                    if e.sqlstate().is_none() {
                        return Err(e);
                    }
                    refuse_freeze(shared, relation, &e);
                    use_freeze = false;
                    exec(s, &begin).await?;
                }
            }
            match copy_rows(s, &job, use_freeze, buf).await {
                Ok(()) => {}
                Err(e) if use_freeze && is_freeze_refusal(&e) => {
                    abandon(s, true).await;
                    refuse_freeze(shared, relation, &e);
                    exec(s, &begin).await?;
                    use_freeze = false;
                    if let Err(e) = copy_rows(s, &job, false, buf).await {
                        abandon(s, true).await;
                        return Err(e);
                    }
                }
                Err(e) => {
                    abandon(s, true).await;
                    return Err(e);
                }
            }
            exec(s, "COMMIT").await?;
            if use_freeze {
                shared.frozen_tasks.fetch_add(1, Ordering::Relaxed);
            } else {
                shared.plain_tasks.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        }
    }
}

fn refuse_freeze(shared: &Shared, relation: &str, e: &LoadError) {
    if shared.freeze_ok.swap(false, Ordering::Relaxed) {
        let why = match e {
            LoadError::Db { cause, .. } => match &**cause {
                sut::Error::Db(db) => format!("{} (SQLSTATE {})", db.message, db.code),
                other => other.to_string(),
            },
            other => other.to_string(),
        };
        shared.notice(format!(
            "the server refused COPY FREEZE on {relation}: {why}; loading without FREEZE"
        ));
    }
}

/// The rows of one COPY task: where they go (`relation (columns)`), where they come from, and
/// the progress slot they count towards.
struct CopyJob<'a> {
    target: &'a str,
    source: &'a dyn RowSource,
    rows: Range<u64>,
    slot: usize,
    shared: &'a Shared,
}

/// Stream a job's rows with one COPY. Progress is counted per chunk and taken back if the COPY
/// fails (its rows are not committed). On cancel: CopyFail, then Interrupted.
async fn copy_rows(
    s: &mut Session,
    job: &CopyJob<'_>,
    freeze: bool,
    buf: &mut Vec<u8>,
) -> Result<(), LoadError> {
    let sql = if freeze {
        format!("COPY {} FROM STDIN WITH (FREEZE ON)", job.target)
    } else {
        format!("COPY {} FROM STDIN", job.target)
    };
    let Some(s) = s.pg_mut() else {
        return Err(LoadError::db(
            sql,
            sut::Error::Config("COPY needs PostgreSQL".into()),
        ));
    };
    s.copy_in(&sql)
        .await
        .map_err(|e| LoadError::db(sql.clone(), e))?;
    let counted = &job.shared.done[job.slot];
    let mut sent: u64 = 0;
    let mut pending: u64 = 0;
    buf.clear();
    let result: Result<u64, LoadError> = async {
        for unit in job.rows.clone() {
            pending += job.source.write_unit(unit, buf);
            if buf.len() >= CHUNK_BYTES {
                if job.shared.stopping() {
                    return Err(LoadError::Interrupted);
                }
                s.copy_data(buf)
                    .await
                    .map_err(|e| LoadError::db(sql.clone(), e))?;
                buf.clear();
                counted.fetch_add(pending, Ordering::Relaxed);
                sent += pending;
                pending = 0;
            }
        }
        if !buf.is_empty() {
            s.copy_data(buf)
                .await
                .map_err(|e| LoadError::db(sql.clone(), e))?;
            buf.clear();
        }
        counted.fetch_add(pending, Ordering::Relaxed);
        sent += pending;
        pending = 0;
        s.copy_finish()
            .await
            .map_err(|e| LoadError::db(sql.clone(), e))
    }
    .await;
    match result {
        Ok(n) if n == sent => Ok(()),
        Ok(n) => {
            counted.fetch_sub(sent, Ordering::Relaxed);
            Err(LoadError::db(
                sql,
                sut::Error::Protocol(format!(
                    "the server reports {n} rows copied, {sent} were sent"
                )),
            ))
        }
        Err(e) => {
            counted.fetch_sub(sent, Ordering::Relaxed);
            let _ = pending;
            // Still inside the COPY after a local stop: abort it (the server discards it).
            let _ = s.copy_fail("stampede: load stopped").await;
            Err(e)
        }
    }
}

/// MySQL: one task's rows as multi-row INSERTs in one transaction (a whole table is emptied
/// first: TRUNCATE commits by itself there). Progress is counted per statement and taken back
/// if the transaction fails.
async fn insert_task(
    s: &mut Session,
    relation: &str,
    whole: bool,
    job: &CopyJob<'_>,
    buf: &mut Vec<u8>,
) -> Result<(), LoadError> {
    use crate::insert::{lines, push_tuple, BYTES_PER_INSERT, ROWS_PER_INSERT};
    if whole {
        exec(s, &format!("TRUNCATE TABLE {relation}")).await?;
    }
    exec(s, "START TRANSACTION").await?;
    let counted = &job.shared.done[job.slot];
    let head = format!("INSERT INTO {} VALUES ", job.target);
    let mut sql = String::with_capacity(BYTES_PER_INSERT + 64 * 1024);
    let mut sent: u64 = 0;
    let result: Result<(), LoadError> = async {
        let mut in_stmt: u64 = 0;
        let mut pending: u64 = 0;
        for unit in job.rows.clone() {
            buf.clear();
            pending += job.source.write_unit(unit, buf);
            for line in lines(buf) {
                sql.push_str(if in_stmt == 0 { &head } else { "," });
                push_tuple(&mut sql, line);
                in_stmt += 1;
            }
            if in_stmt >= ROWS_PER_INSERT || sql.len() >= BYTES_PER_INSERT {
                if job.shared.stopping() {
                    return Err(LoadError::Interrupted);
                }
                insert(s, &sql, job.target).await?;
                sql.clear();
                in_stmt = 0;
                counted.fetch_add(pending, Ordering::Relaxed);
                sent += pending;
                pending = 0;
            }
        }
        if in_stmt > 0 {
            insert(s, &sql, job.target).await?;
        }
        counted.fetch_add(pending, Ordering::Relaxed);
        sent += pending;
        exec(s, "COMMIT").await
    }
    .await;
    buf.clear();
    if let Err(e) = result {
        counted.fetch_sub(sent, Ordering::Relaxed);
        abandon(s, true).await;
        return Err(e);
    }
    job.shared.plain_tasks.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// One multi-row INSERT; an error names the table, not the megabyte of values.
async fn insert(s: &mut Session, sql: &str, target: &str) -> Result<(), LoadError> {
    s.simple_query(sql)
        .await
        .map(|_| ())
        .map_err(|e| LoadError::db(format!("INSERT INTO {target} VALUES ..."), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_refusals_are_recognised() {
        let db = |code: &str| LoadError::Db {
            context: "COPY".into(),
            cause: Box::new(sut::Error::Db(Box::new(sut::DbError {
                severity: "ERROR".into(),
                code: code.into(),
                message: "m".into(),
                ..Default::default()
            }))),
        };
        assert!(is_freeze_refusal(&db("55000")));
        assert!(is_freeze_refusal(&db("0A000")));
        assert!(!is_freeze_refusal(&db("23505")));
        assert!(!is_freeze_refusal(&LoadError::Interrupted));
    }
}
