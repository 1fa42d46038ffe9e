//! # load: schemas and data
//!
//! Owns creating a workload's tables, generating its rows and loading them through several
//! connections in parallel (COPY), building keys and indexes afterwards, and resetting a database
//! between runs. Generated data is a pure function of (table, row number), so any loader
//! connection can produce any batch, and a failed batch can be produced again.
//!
//! Must not touch: argv, output formatting (progress is reported through a callback, as
//! [`Event`]s), and any table that is not the workload's own: every `DROP`/`TRUNCATE` names the
//! workload's tables explicitly, never `CASCADE`, never a schema.
//!
//! ## Layout
//! - [`driver`]: the machinery every workload shares — a queue of [`driver::Task`]s (COPY a row
//!   range of a [`driver::RowSource`], or run SQL) worked off by `jobs` connections, with
//!   progress, cancellation and the rules for when `COPY ... FREEZE` is legal.
//! - [`pipeline`]: the one loader pipeline (drop and create, the rows in parallel parts, keys,
//!   indexes and analyze, cleanup of half-made tables) that each family's `init` describes
//!   with a [`pipeline::Loader`].
//! - [`tpcb`]: pgbench's four tables (`pgbench -i`), `init`, `reset`, scale detection.
//! - [`oltp`]: sysbench's `sbtestN` tables (`sysbench oltp_common prepare`).
//! - [`tpcc`]: TPC-C's nine tables (clause 4.3.3.1 data, go-tpc's PostgreSQL schema), and the
//!   load's NURand constants recorded with them.
//! - [`layout`]: the sharded layouts of the tpcb and oltp tables (Citus, Aurora Limitless,
//!   postgres_fdw partitions), as a plan of SQL steps that `--dry-run` prints and `init` runs.
//! - [`pipeline`]: the one loader pipeline; a workload describes its tables as a
//!   [`pipeline::Loader`] (from any crate: YCSB's `usertable` from its family folder in the app
//!   crate) and hands it to [`pipeline::run`]; [`steps`] holds the pieces the steps share.

pub mod driver;
mod insert;
pub mod layout;
pub mod oltp;
pub mod pipeline;
pub mod steps;
pub mod tpcb;
pub mod tpcc;

use std::time::Duration;

pub use driver::{RowSource, Task, TaskKind};

/// Why a load or reset failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The options are invalid (checked before any connection is opened).
    #[error("{0}")]
    Invalid(String),
    /// The cancel flag was raised. The database holds no half-loaded table that looks loaded
    /// (see [`tpcb::init`] for what is left behind).
    #[error("interrupted")]
    Interrupted,
    /// A statement or connection failed; `context` says what was being done. (The error is
    /// `cause`, not `source`: its text is part of this message, and a chain printed with `{:#}`
    /// would say it twice.)
    #[error("{context}: {cause}")]
    Db {
        context: String,
        cause: Box<sut::Error>,
    },
    /// A table the operation needs does not exist.
    #[error("table {table} does not exist; load it first (stampede init {workload})")]
    Missing {
        table: &'static str,
        workload: &'static str,
    },
}

impl LoadError {
    /// The server's SQLSTATE, when a statement failed with one.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            LoadError::Db { cause, .. } => cause.sqlstate(),
            _ => None,
        }
    }

    pub fn db(context: impl Into<String>, cause: sut::Error) -> LoadError {
        LoadError::Db {
            context: context.into(),
            cause: Box::new(cause),
        }
    }
}

/// Rows done so far for one table (or one progress slot).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableProgress {
    pub table: String,
    pub rows_done: u64,
    pub rows_total: u64,
}

/// What a load reports while it runs (through the caller's callback, on the caller's task).
#[derive(Debug)]
pub enum Event<'a> {
    /// A step (pgbench's names: "drop tables", "create tables", "client-side generate", ...)
    /// begins.
    StepStarted(&'static str),
    /// Rows loaded so far, per table; sent about every 100 ms while generating, and once at the
    /// end of the step. `elapsed` counts from the start of the step.
    Rows {
        tables: &'a [TableProgress],
        elapsed: Duration,
    },
    StepFinished {
        step: &'static str,
        elapsed: Duration,
    },
    /// Something the user should know that is not an error (e.g. the server refused COPY FREEZE
    /// and the load continued without it).
    Notice(&'a str),
}

/// How long each step took, for pgbench's closing line.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub steps: Vec<(&'static str, Duration)>,
}

impl Timings {
    pub fn total(&self) -> Duration {
        self.steps.iter().map(|(_, d)| *d).sum()
    }

    pub fn get(&self, step: &str) -> Option<Duration> {
        self.steps.iter().find(|(s, _)| *s == step).map(|(_, d)| *d)
    }
}

/// pgbench's format (pgbench.c, `runInitSteps`): `done in 9.58 s (drop tables 0.00 s, create
/// tables 0.00 s, client-side generate 5.61 s, vacuum 0.19 s, primary keys 3.78 s).`
impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "done in {:.2} s (", self.total().as_secs_f64())?;
        for (i, (step, d)) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{step} {:.2} s", d.as_secs_f64())?;
        }
        f.write_str(").")
    }
}

// ----- a fleet's share of a load (`oltp::InitOptions::part`) -----

/// Process `index` of `count` loads the `index`-th of `count` equal row ranges of every table.
/// Rows are a pure function of (seed, table, row), so the parts together are exactly what one
/// process loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub index: u32,
    pub count: u32,
}

impl Part {
    /// This part's range of `0..total` (empty when there are more parts than units).
    pub fn of(self, total: u64) -> std::ops::Range<u64> {
        let n = u64::from(self.count.max(1));
        let i = u64::from(self.index);
        (total * i / n)..(total * (i + 1) / n).min(total)
    }

    /// The first process creates the schema and loads what is not split (pgbench's branches
    /// and tellers, TPC-C's `item`).
    pub fn is_first(part: Option<Part>) -> bool {
        part.is_none_or(|p| p.index == 0)
    }
}

/// Split `total` units (rows, warehouses) into `n` nearly equal consecutive ranges (none empty).
pub fn split_rows(total: u64, n: u64) -> Vec<std::ops::Range<u64>> {
    let n = n.clamp(1, total.max(1));
    (0..n)
        .map(|i| (total * i / n)..(total * (i + 1) / n))
        .filter(|r| !r.is_empty())
        .collect()
}

/// [`split_rows`] of `r` (a part's range), offset to start at `r.start`.
pub fn split_range(r: std::ops::Range<u64>, n: u64) -> Vec<std::ops::Range<u64>> {
    split_rows(r.end - r.start, n)
        .into_iter()
        .map(|x| (r.start + x.start)..(r.start + x.end))
        .collect()
}

/// Which steps of the load to run: a fleet's process 0 creates the tables and later builds the
/// keys, every process loads its part in between (`Steps::ALL` alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    pub create: bool,
    pub rows: bool,
    pub finish: bool,
}

impl Steps {
    pub const ALL: Steps = Steps {
        create: true,
        rows: true,
        finish: true,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_print_like_pgbench() {
        let t = Timings {
            steps: vec![
                ("drop tables", Duration::from_millis(1)),
                ("create tables", Duration::from_millis(4)),
                ("client-side generate", Duration::from_millis(5610)),
                ("vacuum", Duration::from_millis(190)),
                ("primary keys", Duration::from_millis(3780)),
            ],
        };
        assert_eq!(
            t.to_string(),
            "done in 9.59 s (drop tables 0.00 s, create tables 0.00 s, client-side generate 5.61 s, \
             vacuum 0.19 s, primary keys 3.78 s)."
        );
    }
}
