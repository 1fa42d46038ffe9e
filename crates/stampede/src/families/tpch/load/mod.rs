//! `stampede init tpch --scale SF`: TPC-H's eight tables (TPC-H 3.0.1, clause 1.4), generated
//! by `tpchgen` (`rows`: dbgen's rows, no files on disk) and loaded through the one loader
//! pipeline (`load::pipeline`): COPY on PostgreSQL, multi-row INSERTs on MySQL/MariaDB, in
//! parallel by table part; the primary keys after the data, `--indexes` for the usual
//! secondary ones (`schema`), then the statistics.
//!
//! Must not touch: any table but the eight, and none of those that stampede did not create.
//! Before anything is dropped, [`ownership`] reads each existing table's comment: one without
//! stampede's mark (`schema::MARK`) is someone else's, say TPC-C's `customer` and `orders`, or
//! a TPC-H loaded by another tool, and `init` refuses before it drops anything.
//!
//! ## Loading plan
//! Each table is cut into units (`rows::units`: `tpchgen` parts of about 5,000 rows, LINEITEM's
//! of 1,250 orders, PARTSUPP's of 1,250 parts). With `jobs` connections, a table becomes as many tasks (consecutive unit
//! ranges) as it takes for none to exceed about 1/(4 · jobs) of the load, queued largest first
//! (as `init tpcc` cuts its tables); a table that is one task keeps COPY FREEZE. A fleet's
//! process loads its share of every table's units (`load::Part`), the first also REGION and
//! NATION; process 0 creates and finishes (`commands::init_fleet`).
//!
//! ## Measured
//! `bench/tpch_case.py` (results in `bench/TPCH.md`): `init tpch --scale 1` beside psql's
//! `\copy` of the same `tpchgen-cli` files (written beforehand, not timed) into the same server.
//! On the 2-core development box, shared with other work (load average 5), a dev-profile
//! build: 28.5 s against psql's 27.4 s (medians of 3), the rows 21.3 s against 20.7 s.
//! Generating the rows is the difference: the client used 11.8 s of CPU of its 27.2 s
//! (`/usr/bin/time`, `-j 2 -n`), CPU the server's COPY then lacks on two cores; psql only reads
//! files.

pub mod rows;
pub mod schema;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use load::driver::{Task, TaskKind};
use load::pipeline::{self, After, Data, Loader};
use load::{split_range, Event, LoadError, Part, Steps, TableProgress, Timings};
use sut::{Dialect, Session, Target};

use rows::Source;
use schema::Table;

/// The scale factors `init tpch` takes: dbgen's smallest useful one (a supplier per 10,000 at
/// scale 1 leaves one at 0.0001) to its largest (clause 4.1.3.1 lists up to 100,000).
pub const SCALE_MIN: f64 = 0.0001;
pub const SCALE_MAX: f64 = 100_000.0;

/// `stampede init tpch` options.
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// The scale factor (clause 4.1.3.1); fractions (0.01, 0.1) for tests.
    pub scale: f64,
    /// Loader connections.
    pub jobs: usize,
    /// Also the secondary indexes (`schema`).
    pub indexes: bool,
    /// Skip the statistics after the load.
    pub no_vacuum: bool,
    pub cancel: Arc<AtomicBool>,
    /// A fleet's load: this process's share of each table; `None`: all of it.
    pub part: Option<Part>,
    /// TPC-H's eight tables, or the three CH-benCHmark adds to TPC-C's.
    pub set: Set,
}

/// Which tables a load makes ([`InitOptions::set`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Set {
    /// TPC-H's eight, marked [`schema::MARK`].
    #[default]
    Tpch,
    /// CH-benCHmark's `region`, `nation` and `supplier` (`families::ch`): TPC-H's at scale 1,
    /// marked [`schema::CH_MARK`], beside TPC-C's tables.
    Ch,
}

impl Set {
    pub fn tables(self) -> &'static [Table] {
        match self {
            Set::Tpch => &Table::ALL,
            Set::Ch => &Table::ALL[..3],
        }
    }

    pub fn mark(self) -> &'static str {
        match self {
            Set::Tpch => schema::MARK,
            Set::Ch => schema::CH_MARK,
        }
    }

    /// The workload the tables are for, in messages.
    pub fn what(self) -> &'static str {
        match self {
            Set::Tpch => "TPC-H",
            Set::Ch => "CH-benCHmark",
        }
    }
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            scale: 1.0,
            jobs: 1,
            indexes: false,
            no_vacuum: false,
            cancel: Arc::new(AtomicBool::new(false)),
            part: None,
            set: Set::Tpch,
        }
    }
}

impl InitOptions {
    pub fn validate(&self) -> Result<(), LoadError> {
        if !(SCALE_MIN..=SCALE_MAX).contains(&self.scale) {
            return Err(LoadError::Invalid(format!(
                "--scale {} is outside TPC-H's scale factors ({SCALE_MIN} to {SCALE_MAX})",
                self.scale
            )));
        }
        pipeline::at_least_one("--jobs", self.jobs as u64)
    }

    /// The units of `table` this process loads.
    fn mine(&self, table: Table) -> std::ops::Range<u64> {
        let n = rows::units(table, self.scale);
        match (table, self.part) {
            (Table::Region | Table::Nation, p) if Part::is_first(p) => 0..n,
            (Table::Region | Table::Nation, _) => 0..0,
            (_, None) => 0..n,
            (_, Some(p)) => p.of(n),
        }
    }

    /// The rows of `table` this process loads (exact, LINEITEM's included).
    fn rows_of(&self, table: Table) -> u64 {
        let units = rows::units(table, self.scale);
        let mine = self.mine(table);
        match table {
            Table::LineItem => rows::lines(self.scale, mine, units),
            t => {
                let all = rows::base_rows(t, self.scale) as u64;
                let base = if mine.is_empty() {
                    0
                } else {
                    // Equal parts, the remainder in the last (`rows::orders_in`'s rule).
                    let per = all / units;
                    let last = if mine.end == units { all % units } else { 0 };
                    per * (mine.end - mine.start) + last
                };
                match t {
                    Table::PartSupp => base * rows::SUPPLIERS_PER_PART,
                    _ => base,
                }
            }
        }
    }
}

/// What `init` did.
#[derive(Clone, Debug)]
pub struct InitReport {
    pub timings: Timings,
    /// Rows loaded per table, in the order of the set's tables ([`Set::tables`]).
    pub rows: Vec<u64>,
    pub plan: String,
}

/// What the set's tables are in the database before a load: the names of those that exist and
/// are stampede's for this set, or `Invalid` naming the first that exists and is not (module
/// header): someone else's, or the other set's (TPC-H's `supplier` is not CH's to drop).
pub async fn ownership(s: &mut Session, set: Set) -> Result<Vec<&'static str>, LoadError> {
    let dialect = s.dialect();
    let mut ours = Vec::new();
    for &t in set.tables() {
        let c = workload::tables::comment(s, dialect, t.name())
            .await
            .map_err(|e| LoadError::db(format!("looking for table {}", t.name()), e))?;
        match c {
            None => {}
            Some(c)
                if (c.as_deref())
                    .is_some_and(|c| schema::scale_marked(set.mark(), c).is_some()) =>
            {
                ours.push(t.name())
            }
            Some(c) => {
                return Err(LoadError::Invalid(format!(
                    "a table {} exists in this database and stampede did not create it for \
                     {} (its comment: {:?}); stampede never drops a table it did not create \
                     for the load: drop it yourself, or load {} into another database (-d)",
                    t.name(),
                    set.what(),
                    c.unwrap_or_default(),
                    set.what()
                )))
            }
        }
    }
    Ok(ours)
}

/// `stampede init tpch`: refuse foreign tables, drop ours, create, load, keys, indexes,
/// statistics.
pub async fn init(
    cfg: &Target,
    opts: &InitOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    init_steps_of(cfg, opts, Steps::ALL, on_event).await
}

/// Some of [`init`]'s steps (a fleet's load, [`Steps`]).
pub async fn init_steps_of(
    cfg: &Target,
    opts: &InitOptions,
    steps: Steps,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    opts.validate()?;
    if steps.create {
        let mut s = Session::connect(cfg)
            .await
            .map_err(|e| LoadError::db("connecting", e))?;
        let r = ownership(&mut s, opts.set).await;
        s.close().await;
        r?;
    }
    let loaded = pipeline::run(cfg, &mut Tpch { opts }, steps, on_event).await?;
    Ok(InitReport {
        timings: loaded.timings,
        rows: loaded.driver.rows,
        plan: loaded.plan,
    })
}

/// What loading `table` costs, in bytes of COPY text (measured averages of the rows' lengths at
/// scale 1); only used to cut the load into tasks.
fn cost(table: Table, rows: u64) -> u64 {
    let bytes = match table {
        Table::Region | Table::Nation => 100,
        Table::Supplier => 140,
        Table::Customer => 160,
        Table::Part => 120,
        Table::PartSupp => 145,
        Table::Orders => 110,
        Table::LineItem => 125,
    };
    bytes * rows.max(1)
}

/// The eight tables as the pipeline loads them.
struct Tpch<'a> {
    opts: &'a InitOptions,
}

impl Tpch<'_> {
    /// The tables, largest first (the order of the tasks and of the steps after the data).
    fn by_size(&self) -> Vec<Table> {
        let all = InitOptions {
            part: None,
            ..self.opts.clone()
        };
        let mut t = self.opts.set.tables().to_vec();
        t.sort_by_key(|&t| std::cmp::Reverse(cost(t, all.rows_of(t))));
        t
    }
}

impl Loader for Tpch<'_> {
    fn what(&self) -> &'static str {
        self.opts.set.what()
    }

    fn jobs(&self) -> usize {
        self.opts.jobs
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.opts.cancel
    }

    fn validate(&self, _dialect: Dialect) -> Result<(), LoadError> {
        self.opts.validate()
    }

    fn drop_sql(&self, _dialect: Dialect) -> Vec<String> {
        vec![schema::drop_sql(self.opts.set.tables())]
    }

    async fn prepare(
        &mut self,
        admin: &mut Session,
        create: bool,
    ) -> Result<Vec<String>, LoadError> {
        Ok(match create {
            true => {
                let mark = schema::marked(self.opts.set.mark(), self.opts.scale);
                (self.opts.set.tables().iter())
                    .flat_map(|&t| schema::create_sql(t, admin.dialect(), &mark))
                    .collect()
            }
            false => Vec::new(),
        })
    }

    fn rows(&self, dialect: Dialect) -> Data {
        let o = self.opts;
        let tables = o.set.tables();
        let rows: Vec<u64> = tables.iter().map(|&t| o.rows_of(t)).collect();
        let total: u64 = tables.iter().zip(&rows).map(|(&t, &r)| cost(t, r)).sum();
        let chunk = (total / (4 * o.jobs as u64)).max(1);
        let mut tasks: Vec<(u64, Task)> = Vec::new();
        let mut cut = Vec::new();
        for (i, &table) in tables.iter().enumerate() {
            let mine = o.mine(table);
            if mine.is_empty() {
                continue;
            }
            let units = rows::units(table, o.scale);
            let source = Arc::new(Source {
                table,
                scale: o.scale,
                units,
            });
            let pieces = match o.jobs {
                1 => 1,
                _ => cost(table, rows[i]).div_ceil(chunk),
            };
            let ranges = split_range(mine.clone(), pieces);
            let whole = ranges.len() == 1 && o.part.is_none();
            if ranges.len() > 1 {
                cut.push(format!("{} in {}", table.name(), ranges.len()));
            }
            for r in ranges {
                let share = cost(table, rows[i]) * (r.end - r.start) / (mine.end - mine.start);
                tasks.push((
                    share,
                    Task {
                        slot: i,
                        kind: TaskKind::Copy {
                            relation: table.name().into(),
                            columns: Some(table.column_list()),
                            source: source.clone(),
                            rows: r,
                            whole,
                        },
                    },
                ));
            }
        }
        tasks.sort_by_key(|(c, _)| std::cmp::Reverse(*c));
        let n = tasks.len();
        let over = match o.jobs {
            1 => "one connection".to_string(),
            j => format!("{j} connections"),
        };
        let how = match dialect {
            Dialect::Postgres => "COPY",
            Dialect::MySql => "INSERT",
        };
        let plan = if cut.is_empty() {
            format!("{n} {how} tasks over {over}, one per table")
        } else {
            format!(
                "{n} {how} tasks over {over}: {} ranges of tpchgen parts, the other tables one each",
                cut.join(", ")
            )
        };
        Data {
            step: "client-side generate",
            slots: tables
                .iter()
                .zip(&rows)
                .map(|(t, &r)| TableProgress {
                    table: t.name().into(),
                    rows_done: 0,
                    rows_total: r,
                })
                .collect(),
            tasks: tasks.into_iter().map(|(_, t)| t).collect(),
            plan,
        }
    }

    /// Keys largest table first, then `--indexes`, one after the other on the admin session:
    /// PostgreSQL builds each B-tree with its own parallel workers
    /// (`max_parallel_maintenance_workers`), and two builds at once on a small machine only
    /// compete (measured at scale 1 on 2 cores: 9.2 s for the keys two at a time, 5.0 s for
    /// psql's one after the other). Then the statistics, one table per connection.
    fn finish(&self, dialect: Dialect) -> Vec<After> {
        let tables = self.by_size();
        let keys = tables
            .iter()
            .filter_map(|&t| schema::primary_key_sql(t, dialect))
            .collect();
        let mut after = vec![After::serial("primary keys", keys)];
        if self.opts.indexes {
            let ix = tables.iter().flat_map(|&t| schema::index_sql(t)).collect();
            after.push(After::serial("secondary indexes", ix));
        }
        if !self.opts.no_vacuum {
            let step = match dialect {
                Dialect::Postgres => "vacuum",
                Dialect::MySql => "analyze",
            };
            let sql = tables
                .iter()
                .map(|&t| schema::analyze_sql(t, dialect))
                .collect();
            after.push(After::parallel(step, sql));
        }
        after
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(opts: &InitOptions) -> Data {
        Tpch { opts }.rows(Dialect::Postgres)
    }

    #[test]
    fn every_row_is_loaded_once_and_the_slots_are_the_spec_s_counts() {
        let o = InitOptions {
            scale: 0.1,
            jobs: 2,
            ..Default::default()
        };
        let d = plan(&o);
        let want = [5, 25, 1_000, 15_000, 20_000, 80_000, 150_000];
        for (slot, n) in d.slots.iter().zip(want) {
            assert_eq!(slot.rows_total, n, "{}", slot.table);
        }
        // Each table's units covered once by its tasks.
        for (i, t) in Table::ALL.iter().enumerate() {
            let mut covered: Vec<std::ops::Range<u64>> = d
                .tasks
                .iter()
                .filter(|task| task.slot == i)
                .map(|task| match &task.kind {
                    TaskKind::Copy { rows, .. } => rows.clone(),
                    _ => unreachable!(),
                })
                .collect();
            covered.sort_by_key(|r| r.start);
            let mut at = 0;
            for r in covered {
                assert_eq!(r.start, at, "{t:?}");
                at = r.end;
            }
            assert_eq!(at, rows::units(*t, 0.1), "{t:?}");
        }
        assert!(d.plan.contains("lineitem in"), "{}", d.plan);
    }

    #[test]
    fn a_fleet_s_parts_load_every_row_once() {
        let all = InitOptions {
            scale: 0.1,
            ..Default::default()
        };
        for t in Table::ALL {
            let sum: u64 = (0..3)
                .map(|index| {
                    let o = InitOptions {
                        part: Some(Part { index, count: 3 }),
                        ..all.clone()
                    };
                    o.rows_of(t)
                })
                .sum();
            assert_eq!(sum, all.rows_of(t), "{t:?}");
        }
        let second = InitOptions {
            part: Some(Part { index: 1, count: 3 }),
            ..all.clone()
        };
        assert_eq!(second.rows_of(Table::Nation), 0);
        assert!(plan(&second).tasks.iter().all(|t| match &t.kind {
            TaskKind::Copy { whole, .. } => !whole,
            _ => false,
        }));
    }

    #[test]
    fn scales_outside_the_spec_s_are_refused() {
        for bad in [0.0, -1.0, 0.00001, 1e6, f64::NAN] {
            let o = InitOptions {
                scale: bad,
                ..Default::default()
            };
            assert!(o.validate().is_err(), "{bad}");
        }
        assert!(InitOptions {
            scale: 0.01,
            ..Default::default()
        }
        .validate()
        .is_ok());
    }
}
