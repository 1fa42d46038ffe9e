//! The one loader pipeline: every family's `init` is a description ([`Loader`]) that this
//! module runs, in the same order and with the same promises for every family:
//!
//! 1. validate the options (before any connection: [`Loader::validate`]);
//! 2. on one admin session: "drop tables" (the loader's statements, only its own tables), then
//!    "create tables" (what [`Loader::prepare`] returns: a loader may ask the server first, e.g.
//!    its version or its clock);
//! 3. the rows ([`Loader::rows`]): tasks worked off by `jobs` connections through the
//!    [`driver`], COPY on PostgreSQL and multi-row INSERTs on MySQL (the driver picks by the
//!    target's dialect), with per-table progress;
//! 4. the steps after the rows ([`Loader::finish`]): keys, indexes, analyze or vacuum, either
//!    one statement per connection in parallel (independent per-table statements) or in order
//!    on the admin session (statements that depend on each other, as pgbench's);
//! 5. cleanup: once the tables were created, an error or the cancel flag drops them again (best
//!    effort, said with an [`Event::Notice`]), so no half-made table is left looking loaded.
//!
//! A fleet's load ([`Steps`], [`Part`](crate::Part)) runs some of the steps in each process:
//! the first creates and finishes, every process loads its part in between; a loader splits
//! its rows by the part it is given, the pipeline only skips steps.
//!
//! Why a trait with hooks and not a plain list of statements: two families need the server
//! between the steps (pgbench's CREATE depends on the server's version, TPC-C records the
//! server's clock with its tables and a fleet's later process reads it back before generating),
//! and the rows are built from what those hooks learnt.
//!
//! Must not touch: any particular family's tables (the loader names them), argv, output.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sut::{Dialect, Session, Target};

use crate::driver::{self, DriverOptions, DriverOutcome, Task, TaskKind};
use crate::steps::{check_cancel, exec, on_admin, Step};
use crate::{Event, LoadError, Steps, TableProgress, Timings};

/// On PostgreSQL, before the drop: quiet the NOTICEs of `DROP TABLE IF EXISTS` (pgbench shows
/// them; they say nothing).
const QUIET: &str = "set client_min_messages = warning";

/// A family's loader, as the pipeline runs it (module header).
// The pipeline's futures are used with concrete loaders only, so the auto traits of the hooks'
// futures are known where they matter (a `Send` bound cannot be named on `async fn` here).
#[allow(async_fn_in_trait)]
pub trait Loader {
    /// How the cleanup notice names the tables: "pgbench", "sbtest", "TPC-C".
    fn what(&self) -> &'static str;
    /// Loader connections (for the rows and the parallel steps).
    fn jobs(&self) -> usize;
    /// Raised to stop (Ctrl-C): checked between steps, statements and COPY chunks.
    fn cancel(&self) -> &Arc<AtomicBool>;
    /// The options' checks for a server of `dialect`, before any connection.
    fn validate(&self, dialect: Dialect) -> Result<(), LoadError>;
    /// The statements that drop the loader's tables, and only those: step "drop tables", and
    /// the cleanup after a failure.
    fn drop_sql(&self, dialect: Dialect) -> Vec<String>;
    /// Called once on the admin session, after the drop (or first, when this process does not
    /// create the tables: a fleet's later process, which may read back what the first one
    /// recorded). Returns the statements of step "create tables" (not run without `create`).
    async fn prepare(
        &mut self,
        admin: &mut Session,
        create: bool,
    ) -> Result<Vec<String>, LoadError>;
    /// The rows to load (this process's part of them).
    fn rows(&self, dialect: Dialect) -> Data;
    /// The steps after the rows, in order. A step without statements is skipped unannounced.
    fn finish(&self, dialect: Dialect) -> Vec<After>;
}

/// The rows step: its name, the progress slots (tables), the driver's tasks and the plan in
/// words (for the log and `--verbose`).
pub struct Data {
    /// "client-side generate" (pgbench's name), or "server-side generate".
    pub step: &'static str,
    pub slots: Vec<TableProgress>,
    pub tasks: Vec<Task>,
    pub plan: String,
}

/// One step after the rows.
pub struct After {
    /// pgbench's names: "vacuum", "primary keys", "foreign keys", ...
    pub step: &'static str,
    pub sql: Vec<String>,
    /// One driver task per statement over the loader's connections (independent statements,
    /// e.g. one per table), or else one after the other on the admin session.
    pub parallel: bool,
}

impl After {
    /// Statements run in parallel, one per connection.
    pub fn parallel(step: &'static str, sql: Vec<String>) -> After {
        After {
            step,
            sql,
            parallel: true,
        }
    }

    /// Statements run in order on the admin session.
    pub fn serial(step: &'static str, sql: Vec<String>) -> After {
        After {
            step,
            sql,
            parallel: false,
        }
    }
}

/// What the pipeline did.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    pub timings: Timings,
    /// [`Data::plan`] (empty when this process loaded no rows).
    pub plan: String,
    /// The rows step's outcome (default when this process loaded no rows).
    pub driver: DriverOutcome,
}

impl Loaded {
    /// Data loaded into slot `i` (0 when none were).
    pub fn rows(&self, i: usize) -> u64 {
        self.driver.rows.get(i).copied().unwrap_or(0)
    }
}

/// Run `loader`'s `steps` on `cfg` (module header). On an error or the cancel flag after the
/// tables were created, they are dropped again and the error returned
/// ([`LoadError::Interrupted`] for a cancel).
pub async fn run<L: Loader>(
    cfg: &Target,
    loader: &mut L,
    steps: Steps,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Loaded, LoadError> {
    let dialect = cfg.dialect();
    loader.validate(dialect)?;
    check_cancel(loader.cancel())?;
    let drop = loader.drop_sql(dialect);
    let mut cleanup: Vec<&str> = match dialect {
        Dialect::Postgres => vec![QUIET],
        Dialect::MySql => Vec::new(),
    };
    cleanup.extend(drop.iter().map(String::as_str));
    let what = loader.what();
    let (mut loaded, timings) = on_admin(
        cfg,
        &cleanup,
        what,
        on_event,
        async |admin, timings, created, on_event| {
            run_steps(admin, cfg, loader, steps, &drop, timings, created, on_event).await
        },
    )
    .await?;
    loaded.timings = timings;
    Ok(loaded)
}

#[allow(clippy::too_many_arguments)]
async fn run_steps<L: Loader>(
    admin: &mut Session,
    cfg: &Target,
    loader: &mut L,
    steps: Steps,
    drop: &[String],
    timings: &mut Timings,
    created: &mut bool,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Loaded, LoadError> {
    let dialect = cfg.dialect();
    let cancel = loader.cancel().clone();
    if steps.create {
        if dialect == Dialect::Postgres {
            exec(admin, QUIET).await?;
        }
        serial(admin, "drop tables", drop, &cancel, timings, on_event).await?;
        check_cancel(&cancel)?;
    }
    let creates = loader.prepare(admin, steps.create).await?;
    if steps.create {
        *created = true;
        serial(admin, "create tables", &creates, &cancel, timings, on_event).await?;
    }
    let mut loaded = Loaded::default();
    if steps.rows {
        check_cancel(&cancel)?;
        let rows = loader.rows(dialect);
        let timer = Step::start(rows.step, on_event);
        loaded.driver = driver::run(
            cfg,
            &DriverOptions {
                jobs: loader.jobs(),
                cancel: cancel.clone(),
                freeze: true,
            },
            rows.slots,
            rows.tasks,
            on_event,
        )
        .await?;
        timer.finish(timings, on_event);
        loaded.plan = rows.plan;
    }
    if steps.finish {
        for after in loader.finish(dialect) {
            if after.sql.is_empty() {
                continue;
            }
            if after.parallel {
                let jobs = loader.jobs();
                parallel(cfg, jobs, &cancel, after.step, after.sql, timings, on_event).await?;
            } else {
                serial(admin, after.step, &after.sql, &cancel, timings, on_event).await?;
            }
        }
    }
    check_cancel(&cancel)?;
    Ok(loaded)
}

/// Run one step's statements in order on `s`, timed and reported; the cancel flag is checked
/// before each.
pub(crate) async fn serial(
    s: &mut Session,
    name: &'static str,
    sqls: &[impl AsRef<str>],
    cancel: &AtomicBool,
    timings: &mut Timings,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<(), LoadError> {
    check_cancel(cancel)?;
    let timer = Step::start(name, on_event);
    for sql in sqls {
        check_cancel(cancel)?;
        exec(s, sql.as_ref()).await?;
    }
    timer.finish(timings, on_event);
    Ok(())
}

/// Run one step's statements, one driver task each, over up to `jobs` connections, timed and
/// reported (the driver's own progress events are not: a step of statements counts no rows).
async fn parallel(
    cfg: &Target,
    jobs: usize,
    cancel: &Arc<AtomicBool>,
    name: &'static str,
    sqls: Vec<String>,
    timings: &mut Timings,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<(), LoadError> {
    check_cancel(cancel)?;
    let timer = Step::start(name, on_event);
    let tasks = sqls
        .into_iter()
        .map(|sql| Task {
            slot: 0,
            kind: TaskKind::Sql { sql, rows: vec![] },
        })
        .collect();
    driver::run(
        cfg,
        &DriverOptions {
            jobs,
            cancel: cancel.clone(),
            freeze: false,
        },
        vec![TableProgress {
            table: name.into(),
            rows_done: 0,
            rows_total: 0,
        }],
        tasks,
        &mut |_e: &Event<'_>| {},
    )
    .await?;
    timer.finish(timings, on_event);
    Ok(())
}

// ----- the options' checks every loader shares -----

/// `Invalid("{flag} must be at least 1")` when `n` is 0 (`--jobs`, `--tables`, ...).
pub fn at_least_one(flag: &str, n: u64) -> Result<(), LoadError> {
    if n == 0 {
        return Err(LoadError::Invalid(format!("{flag} must be at least 1")));
    }
    Ok(())
}

/// `Invalid("{flag} {n} does not fit {column}")` when `n` exceeds a 32-bit INTEGER column (ids
/// and scales that the schema stores as INT).
pub fn fits_int(flag: &str, n: u64, column: &str) -> Result<(), LoadError> {
    if n > i32::MAX as u64 {
        return Err(LoadError::Invalid(format!(
            "{flag} {n} does not fit {column}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_checks_say_what_the_loaders_said() {
        let msg = |r: Result<(), LoadError>| r.unwrap_err().to_string();
        assert_eq!(msg(at_least_one("--jobs", 0)), "--jobs must be at least 1");
        assert!(at_least_one("--tables", 1).is_ok());
        assert_eq!(
            msg(fits_int("--warehouses", 1 << 31, "go-tpc's INT w_id")),
            "--warehouses 2147483648 does not fit go-tpc's INT w_id"
        );
        assert!(fits_int("--table-size", i32::MAX as u64, "sysbench's INTEGER id").is_ok());
    }

    #[test]
    fn a_process_that_loaded_no_rows_reports_zero_rows() {
        let loaded = Loaded::default();
        assert_eq!(loaded.rows(2), 0);
        assert!(loaded.plan.is_empty());
    }
}
