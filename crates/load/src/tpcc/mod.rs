//! TPC-C's nine tables (revision 5.11, clause 1.3), loaded by clause 4.3.3.1: `init`, the
//! detection of a loaded database (`warehouses`, `existing_tables`) and the load's NURand
//! constants (`load_constants`), which the run needs to choose its own (clause 2.1.6.1).
//!
//! Owns the tables `warehouse`, `district`, `customer`, `history`, `new_order`, `orders`,
//! `order_line`, `item` and `stock` — these names, in the schema the search path resolves to
//! (on MySQL `new_orders` for `new_order`, in the connection's database) — and nothing else: `init` drops and recreates exactly these nine (as `init tpcb` does with
//! pgbench's four and `init oltp` with its `sbtestN`), one `DROP TABLE` naming them, never
//! CASCADE, so a foreign object depending on one of them makes `init` fail rather than lose it.
//!
//! ## Schema: go-tpc 1.0.12's, for PostgreSQL
//! `sql` holds it (one function per table): go-tpc's columns and types, its primary keys (added
//! after the data, so the catalog is the same: `<table>_pkey`), its four secondary indexes
//! (`idx_customer`, `idx_order`, `idx_h_w_id`, `idx_h_c_w_id`), no foreign keys. So
//! `go-tpc tpcc check` validates stampede's data and stampede's transactions run on go-tpc's
//! (the integration test runs go-tpc's check when its binary is there; by hand, `go-tpc tpcc
//! check --check-all --warehouses 10 -T 2` passed all 120 checks on 10 warehouses loaded with
//! `jobs = 2`, the big tables cut into warehouse ranges).
//!
//! ## Data
//! `rows` writes every field as clause 4.3.3.1 defines it, each row a pure function of (seed,
//! table, row): see its header. The load time (`c_since`, `h_date`, `o_entry_d`, delivered
//! `ol_delivery_d`) is the server's `localtimestamp` at the start of `init`, to the second (the
//! columns are `timestamp without time zone`, as go-tpc writes its local time into them).
//!
//! ## The load's NURand constants
//! Clause 2.1.6.1: the run-time C for C_LAST must differ from the load-time C by a delta in
//! [65 .. 119] other than 96 and 112, so the run must know the load's. `init` draws the three
//! constants from the seed ([`rows::constants_for_seed`]) and records them with the data, as a
//! comment on `customer`:
//! `COMMENT ON TABLE customer IS 'stampede tpcc: c_last_c=N c_id_c=N ol_i_id_c=N seed=N'`.
//! [`load_constants`] reads them back (None for data stampede did not load, e.g. go-tpc's).
//!
//! ## Loading plan
//! Through the [`driver`](crate::driver): one COPY task per (table, range of warehouses), `item`
//! once. With one connection, every table is one task that owns it (`TRUNCATE` + `COPY FREEZE`,
//! pgbench's plan). With `jobs` connections, each table is cut into as many warehouse ranges as
//! it takes for no task to exceed about 1/(4 · jobs) of the whole load, and the tasks are queued
//! largest first, so the connections stay busy until the end; a table that still fits one task
//! (the small ones, or all of them at few warehouses) keeps FREEZE. Then, in parallel across
//! tables: `ALTER TABLE ... ADD PRIMARY KEY` for the eight keyed tables, go-tpc's four indexes
//! after them (step "primary keys"), and `VACUUM ANALYZE` per table (step "vacuum", skipped with
//! `no_vacuum`). `warehouse`, the smallest table, is queued last: it is what [`warehouses`]
//! counts.
//!
//! ## Measured
//! On the development box (2 cores, 24 GiB, PostgreSQL 15.18 with stampede's embedded defaults —
//! shared_buffers 4GB, maintenance_work_mem 1GB, max_wal_size 4GB, fsync on), a CHECKPOINT
//! before each load; other test suites ran at the same time (load average ~3), so expect ±15 %:
//! ```text
//! cargo build --release -p load --example measure_tpcc
//! measure_tpcc <socket dir> <port> <db> <warehouses> <jobs>
//!
//! 100 warehouses (50.0 M rows, 10.0 GB)
//!   jobs 2 (customer, order_line, stock cut)  117.5 s  (generate 88.4, keys 24.5, vacuum 4.5)
//!   jobs 1 (every table one COPY FREEZE)      110.9 s  (generate 78.1, keys 23.8, vacuum 4.8)
//! 10 warehouses: jobs 1 13.1 s, jobs 2 10.9-11.6 s, jobs 4 10.2 s
//! go-tpc 1.0.12 `tpcc prepare --warehouses 10 -T 2 --no-check`, same server: 70.5 s
//! generating the rows alone (`measure_tpcc generate 10`): 1.0 s per 10 warehouses, one thread
//! ```
//! The server's COPY is the bottleneck (generating the rows is ~10 s of the 78 s), so on two busy
//! cores a second connection gains little, as `tpcb` found; with idle cores the warehouse ranges
//! let every connection work to the end. Losing FREEZE on the cut tables cost nothing visible:
//! VACUUM took the same time, presumably because the primary-key builds, which run first, read
//! every row and set its hint bits either way.
//!
//! ## Interruption and failure: what is left behind
//! As `init tpcb`: once `init` has created the tables, an error or the cancel flag makes it drop
//! all nine again (best effort, reported with an [`Event::Notice`]), so no half-loaded table is
//! left looking loaded. The flag is checked between steps and after every COPY chunk; a key or
//! index build already running finishes first.
//!
//! ## On MySQL/MariaDB
//! tpcc-mysql's schema (`sql::ddl_mysql`: its tables, `new_orders` among them, its columns and
//! types, InnoDB, primary keys inline, its four secondary indexes; no foreign keys), the same
//! rows: the driver sends each task's COPY text as multi-row INSERTs in one transaction, the
//! tasks cut by warehouse range as above, over `jobs` connections. Then the secondary indexes,
//! in parallel across tables (InnoDB builds each by sorting, cheaper than keeping it up during
//! the inserts); no VACUUM (InnoDB recomputes a table's statistics by itself once a tenth of
//! it changed). The load's constants are the `COMMENT` of `customer`, given in its CREATE
//! TABLE, read back from `information_schema.tables`. Warehouses are at most 32767 (`w_id` is
//! a SMALLINT there).
//!
//! ## Module layout
//! This file: [`Table`], options, `init` as a description of the nine tables that the
//! [`pipeline`](crate::pipeline) runs, detection; `sql`: the statements;
//! `rows`: the generated rows.

mod comment;
pub mod rows;
pub mod sql;

use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sut::{Dialect, Session, Target};
use workload::tpcc::spec::{NuC, CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS, ORDERS};

use crate::driver::{Task, TaskKind};
use crate::pipeline::{self, at_least_one, fits_int, After, Data, Loader};
use crate::steps::{exec, first_row, num, query};
use crate::{split_range, split_rows, Event, LoadError, Part, Steps, TableProgress, Timings};
use comment::customer_comment;
pub use comment::{comment_sql, comment_text, load_constants, parse_comment, parse_load_time};
use rows::{Generator, Rows, STOCK};
pub use sql::{ddl, ddl_in, ddl_mysql, drop_sql, Ddl, DROP_SQL, DROP_SQL_MYSQL};

/// The nine tables, in the order of clause 1.3 (and of [`Table::ALL`]).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// One of the nine tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Warehouse,
    District,
    Customer,
    History,
    NewOrder,
    Orders,
    OrderLine,
    Item,
    Stock,
}

impl Table {
    /// In the order of [`TABLES`].
    pub const ALL: [Table; 9] = [
        Table::Warehouse,
        Table::District,
        Table::Customer,
        Table::History,
        Table::NewOrder,
        Table::Orders,
        Table::OrderLine,
        Table::Item,
        Table::Stock,
    ];

    /// The name in go-tpc's schema (PostgreSQL).
    pub fn name(self) -> &'static str {
        TABLES[self as usize]
    }

    /// The name in `dialect`'s schema: tpcc-mysql calls NEW-ORDER `new_orders`.
    pub fn name_in(self, dialect: Dialect) -> &'static str {
        match (self, dialect) {
            (Table::NewOrder, Dialect::MySql) => "new_orders",
            _ => self.name(),
        }
    }

    /// The COPY column list: the table's columns in go-tpc's order.
    pub fn columns(self) -> &'static str {
        match self {
            Table::Warehouse => {
                "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd"
            }
            Table::District => {
                "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, \
                 d_ytd, d_next_o_id"
            }
            Table::Customer => {
                "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, \
                 c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, \
                 c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data"
            }
            Table::History => {
                "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data"
            }
            Table::NewOrder => "no_o_id, no_d_id, no_w_id",
            Table::Orders => {
                "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local"
            }
            Table::OrderLine => {
                "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, \
                 ol_quantity, ol_amount, ol_dist_info"
            }
            Table::Item => "i_id, i_im_id, i_name, i_price, i_data",
            Table::Stock => {
                "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, \
                 s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, \
                 s_order_cnt, s_remote_cnt, s_data"
            }
        }
    }

    /// Rows per warehouse (clause 4.3.1) — for `order_line`, orders (its units) — or None for
    /// `item`, which is not per warehouse.
    pub fn per_warehouse(self) -> Option<u64> {
        let d = DISTRICTS as u64;
        Some(match self {
            Table::Warehouse => 1,
            Table::District => d,
            Table::Customer | Table::History => d * CUSTOMERS as u64,
            Table::NewOrder => d * NEW_ORDERS as u64,
            Table::Orders | Table::OrderLine => d * ORDERS as u64,
            Table::Stock => STOCK as u64,
            Table::Item => return None,
        })
    }

    /// What one unit costs the server to load, in bytes of COPY text plus ~60 bytes' worth per
    /// row (measured averages of the rows' lengths); only used to cut the load into tasks.
    fn unit_cost(self) -> u64 {
        match self {
            Table::Warehouse | Table::District => 160,
            Table::Customer => 640,
            Table::History => 125,
            Table::NewOrder => 75,
            Table::Orders => 105,
            Table::OrderLine => 10 * 135,
            Table::Item => 135,
            Table::Stock => 375,
        }
    }
}

/// What loading all of `table` at `warehouses` costs, in [`Table::unit_cost`]'s units.
fn table_cost(table: Table, warehouses: u64) -> u64 {
    table.unit_cost()
        * table
            .per_warehouse()
            .map_or(ITEMS as u64, |n| n * warehouses)
}

/// `stampede init tpcc` options.
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// Warehouses (the scale): 1 or more.
    pub warehouses: u32,
    /// Seed of the generated data and of the load's NURand constants.
    pub seed: u64,
    /// Loader connections.
    pub jobs: usize,
    /// Skip the VACUUM ANALYZE after the load.
    pub no_vacuum: bool,
    /// Raised to stop (Ctrl-C).
    pub cancel: Arc<AtomicBool>,
    /// A fleet's load (`stampede init tpcc --fleet`): this process's range of warehouses (the
    /// first also loads `item`); `None`: all of them.
    pub part: Option<Part>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            warehouses: 1,
            seed: 0,
            jobs: 1,
            no_vacuum: false,
            cancel: Arc::new(AtomicBool::new(false)),
            part: None,
        }
    }
}

impl InitOptions {
    /// The warehouses (as `0..w` indexes) this process loads: all, or its part's.
    fn mine(&self) -> Range<u64> {
        let w = u64::from(self.warehouses);
        self.part.map_or(0..w, |p| p.of(w))
    }
}

impl InitOptions {
    pub fn validate(&self) -> Result<(), LoadError> {
        at_least_one("--warehouses", self.warehouses.into())?;
        fits_int("--warehouses", self.warehouses.into(), "go-tpc's INT w_id")?;
        at_least_one("--jobs", self.jobs as u64)
    }
}

/// What `init` did.
#[derive(Clone, Debug)]
pub struct InitReport {
    pub timings: Timings,
    /// Rows loaded per table, in the order of [`TABLES`].
    pub rows: Vec<u64>,
    /// How the tables were cut into tasks, in words.
    pub plan: String,
    /// COPY tasks committed with / without FREEZE.
    pub frozen_tasks: u64,
    pub plain_tasks: u64,
    /// The server refused COPY FREEZE and the load went on without it.
    pub freeze_refused: bool,
    /// The load's NURand constants, as recorded on `customer`.
    pub constants: NuC,
}

// ----- the plan -----

/// The COPY tasks, largest first, and the plan in words (module header, "Loading plan").
pub fn copy_tasks(
    opts: &InitOptions,
    generator: &Arc<Generator>,
    dialect: Dialect,
) -> (Vec<Task>, String) {
    // A fleet's part: its warehouses, never with FREEZE (other processes write the same
    // tables); `item` is the first part's alone.
    let mine = opts.mine();
    let w = mine.end - mine.start;
    let first = Part::is_first(opts.part);
    let cost = |t: Table| table_cost(t, w);
    let total: u64 = Table::ALL.iter().map(|t| cost(*t)).sum();
    let chunk = (total / (4 * opts.jobs as u64)).max(1);
    let mut tasks: Vec<(u64, Task)> = Vec::new();
    let mut cut = Vec::new();
    for table in Table::ALL {
        let source = Arc::new(Rows {
            table,
            generator: generator.clone(),
        });
        // Warehouse ranges, or for `item` its one range of rows.
        let ranges = match table.per_warehouse() {
            None if first => split_rows(ITEMS as u64, 1),
            None => Vec::new(),
            Some(_) if opts.jobs == 1 => split_range(mine.clone(), 1),
            Some(_) => split_range(mine.clone(), cost(table).div_ceil(chunk)),
        };
        let whole = ranges.len() == 1 && (opts.part.is_none() || table.per_warehouse().is_none());
        if !whole {
            cut.push(format!("{} in {}", table.name_in(dialect), ranges.len()));
        }
        for r in ranges {
            let (rows, units) = match table.per_warehouse() {
                None => (r.clone(), r.end - r.start),
                Some(n) => (r.start * n..r.end * n, (r.end - r.start) * n),
            };
            tasks.push((
                units * table.unit_cost(),
                Task {
                    slot: table as usize,
                    kind: TaskKind::Copy {
                        relation: table.name_in(dialect).into(),
                        columns: Some(table.columns().into()),
                        source: source.clone(),
                        rows,
                        whole,
                    },
                },
            ));
        }
    }
    // Largest first; `warehouse`, the smallest, last.
    tasks.sort_by_key(|(cost, _)| std::cmp::Reverse(*cost));
    let n = tasks.len();
    let over = match opts.jobs {
        1 => "one connection".to_string(),
        j => format!("{j} connections"),
    };
    let plan = match (dialect, cut.is_empty()) {
        (Dialect::Postgres, true) => format!("{n} tables, one COPY FREEZE each, over {over}"),
        (Dialect::Postgres, false) => format!(
            "{n} COPY tasks over {over}: {} warehouse ranges (plain COPY), the other tables one COPY FREEZE each",
            cut.join(", ")
        ),
        (Dialect::MySql, true) => {
            format!("{n} tables, multi-row INSERTs in one transaction each, over {over}")
        }
        (Dialect::MySql, false) => format!(
            "{n} INSERT tasks over {over}: {} warehouse ranges, the other tables one each",
            cut.join(", ")
        ),
    };
    (tasks.into_iter().map(|(_, t)| t).collect(), plan)
}

/// Rows per table for the progress slots (exact: `order_line`'s is the sum of the orders'
/// `o_ol_cnt`).
fn slots(opts: &InitOptions, generator: &Generator, dialect: Dialect) -> Vec<TableProgress> {
    let mine = opts.mine();
    let w = mine.end - mine.start;
    let items = if Part::is_first(opts.part) {
        ITEMS as u64
    } else {
        0
    };
    Table::ALL
        .iter()
        .map(|&t| TableProgress {
            table: t.name_in(dialect).into(),
            rows_done: 0,
            rows_total: match t {
                Table::OrderLine => {
                    let n = t.per_warehouse().unwrap();
                    generator.order_lines(mine.start * n..mine.end * n)
                }
                _ => t.per_warehouse().map_or(items, |n| n * w),
            },
        })
        .collect()
}

// ----- steps -----

/// MySQL: the tables of the current database among `names`.
fn mysql_tables_sql(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|t| format!("'{t}'")).collect();
    format!(
        "SELECT table_name FROM information_schema.tables \
         WHERE table_schema = DATABASE() AND table_name IN ({})",
        names.join(", ")
    )
}

/// Which of the nine tables exist (as the search path resolves them; on MySQL in the current
/// database), by their names in the session's dialect, in the order of [`TABLES`].
pub async fn existing_tables(s: &mut Session) -> Result<Vec<&'static str>, LoadError> {
    let dialect = s.dialect();
    let names: Vec<&'static str> = Table::ALL.iter().map(|t| t.name_in(dialect)).collect();
    let sql = match dialect {
        Dialect::Postgres => {
            let quoted: Vec<String> = names.iter().map(|t| format!("'{t}'")).collect();
            format!(
                "SELECT c.relname FROM pg_catalog.pg_class c \
                 WHERE c.relname IN ({}) AND c.relkind IN ('r', 'p') \
                   AND pg_catalog.pg_table_is_visible(c.oid)",
                quoted.join(", ")
            )
        }
        Dialect::MySql => mysql_tables_sql(&names),
    };
    let rows = query(s, &sql, "looking for the TPC-C tables").await?;
    let found: Vec<String> = rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    Ok(names
        .into_iter()
        .filter(|t| found.iter().any(|f| f.eq_ignore_ascii_case(t)))
        .collect())
}

/// Drop the nine tables (only those; see [`DROP_SQL`]).
pub async fn drop_tables(s: &mut Session) -> Result<(), LoadError> {
    let dialect = s.dialect();
    if dialect == Dialect::Postgres {
        exec(s, "set client_min_messages = warning").await?;
    }
    exec(s, drop_sql(dialect)).await
}

/// Whether `table` resolves through the search path (MySQL: is in the current database).
async fn table_exists(s: &mut Session, table: &str) -> Result<bool, LoadError> {
    let sql = match s.dialect() {
        Dialect::Postgres => format!("SELECT to_regclass('{table}') IS NOT NULL"),
        Dialect::MySql => format!(
            "SELECT count(*) > 0 FROM ({}) t",
            mysql_tables_sql(&[table])
        ),
    };
    let row = first_row(s, &sql, &format!("looking for table {table}")).await?;
    Ok(matches!(
        row.first().cloned().flatten().as_deref(),
        Some("t" | "1")
    ))
}

/// The number of warehouses loaded: `count(*)` of `warehouse` (the scale of a TPC-C database,
/// whoever loaded it). [`LoadError::Missing`] when there is no such table.
pub async fn warehouses(s: &mut Session) -> Result<u32, LoadError> {
    if !table_exists(s, "warehouse").await? {
        return Err(LoadError::Missing {
            table: "warehouse",
            workload: "tpcc",
        });
    }
    let row = first_row(s, "SELECT count(*) FROM warehouse", "counting warehouses").await?;
    Ok(num(&row, 0))
}

/// `stampede init tpcc`: drop, create, generate, primary keys (and indexes), vacuum. See the
/// module header for the plan and for what an interruption leaves behind.
pub async fn init(
    cfg: &Target,
    opts: &InitOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    init_steps_of(cfg, opts, Steps::ALL, on_event).await
}

/// Some of [`init`]'s steps (a fleet's load: [`Steps`]): drop and create; generate (this
/// process's warehouses); keys, indexes and vacuum.
pub async fn init_steps_of(
    cfg: &Target,
    opts: &InitOptions,
    steps: Steps,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    let mut loader = Tpcc {
        opts,
        generator: None,
    };
    let loaded = pipeline::run(cfg, &mut loader, steps, on_event).await?;
    let constants = match &loader.generator {
        Some(g) => g.constants(),
        None => rows::constants_for_seed(opts.seed),
    };
    Ok(InitReport {
        timings: loaded.timings,
        rows: loaded.driver.rows,
        plan: loaded.plan,
        frozen_tasks: loaded.driver.frozen_tasks,
        plain_tasks: loaded.driver.plain_tasks,
        freeze_refused: loaded.driver.freeze_refused,
        constants,
    })
}

/// The nine tables as the pipeline loads them; the generator is made once the load time is
/// known ([`Loader::prepare`]).
struct Tpcc<'a> {
    opts: &'a InitOptions,
    generator: Option<Arc<Generator>>,
}

impl Loader for Tpcc<'_> {
    fn what(&self) -> &'static str {
        "TPC-C"
    }

    fn jobs(&self) -> usize {
        self.opts.jobs
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.opts.cancel
    }

    fn validate(&self, dialect: Dialect) -> Result<(), LoadError> {
        self.opts.validate()?;
        if dialect == Dialect::MySql && self.opts.warehouses > i16::MAX as u32 {
            return Err(LoadError::Invalid(format!(
                "--warehouses {} does not fit tpcc-mysql's SMALLINT w_id (at most {})",
                self.opts.warehouses,
                i16::MAX
            )));
        }
        Ok(())
    }

    fn drop_sql(&self, dialect: Dialect) -> Vec<String> {
        vec![drop_sql(dialect).to_string()]
    }

    /// With `create`: the server's clock becomes the load time, recorded on `customer` with
    /// the load's constants. Without: a fleet's other processes generate with the first one's
    /// load time (the dates in `c_since`, `h_date`, `o_entry_d`), read back from `customer`, so
    /// the parts together are one load.
    async fn prepare(
        &mut self,
        admin: &mut Session,
        create: bool,
    ) -> Result<Vec<String>, LoadError> {
        let seed = self.opts.seed;
        let (load_time, creates) = match create {
            true => {
                let load_time = load_time(admin).await?;
                let creates = create_sql(admin.dialect(), seed, &load_time);
                (load_time, creates)
            }
            false => (recorded_load_time(admin).await?, Vec::new()),
        };
        self.generator = Some(Arc::new(Generator::new(seed, &load_time)));
        Ok(creates)
    }

    fn rows(&self, dialect: Dialect) -> Data {
        let generator = self.generator.as_ref().expect("prepared");
        let (tasks, plan) = copy_tasks(self.opts, generator, dialect);
        Data {
            step: "client-side generate",
            slots: slots(self.opts, generator, dialect),
            tasks,
            plan,
        }
    }

    /// Keys largest table first, then the secondary indexes (which wait for their table's key
    /// if it is still being built), then VACUUM ANALYZE.
    fn finish(&self, dialect: Dialect) -> Vec<After> {
        let mut by_size: Vec<Table> = Table::ALL.to_vec();
        let w = self.opts.warehouses as u64;
        by_size.sort_by_key(|t| std::cmp::Reverse(table_cost(*t, w)));
        // MySQL: the primary keys are inline, so only the secondary indexes.
        let mut keys: Vec<String> = by_size
            .iter()
            .filter_map(|t| ddl_in(*t, dialect).primary_key.map(str::to_string))
            .collect();
        keys.extend(
            by_size
                .iter()
                .flat_map(|t| ddl_in(*t, dialect).indexes.iter().map(|s| s.to_string())),
        );
        let step = match dialect {
            Dialect::Postgres => "primary keys",
            Dialect::MySql => "secondary indexes",
        };
        let mut after = vec![After::parallel(step, keys)];
        if !self.opts.no_vacuum && dialect == Dialect::Postgres {
            let vac = by_size.iter().map(|t| sql::vacuum_sql(*t)).collect();
            after.push(After::parallel("vacuum", vac));
        }
        after
    }
}

/// The server's clock, to the second: the load time of the rows (module header, "Data").
async fn load_time(admin: &mut Session) -> Result<String, LoadError> {
    let now = match admin.dialect() {
        Dialect::Postgres => "SELECT to_char(localtimestamp, 'YYYY-MM-DD HH24:MI:SS')",
        Dialect::MySql => "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')",
    };
    let rows = admin
        .simple_query(now)
        .await
        .map_err(|e| LoadError::db(now, e))?;
    rows.first()
        .and_then(|r| r.first().cloned().flatten())
        .ok_or_else(|| LoadError::db(now, sut::Error::Protocol("no row for the load time".into())))
}

/// The load time the creating process recorded on `customer`.
async fn recorded_load_time(admin: &mut Session) -> Result<String, LoadError> {
    let comment = customer_comment(admin).await?;
    comment.as_deref().and_then(parse_load_time).ok_or_else(|| {
        LoadError::Invalid(format!(
            "the comment on customer records no load time of stampede's ({:?}): the \
                 tables were not created by `stampede init tpcc`",
            comment.unwrap_or_default()
        ))
    })
}

/// The nine CREATE TABLEs, the load's constants and time recorded on `customer` (in its CREATE
/// on MySQL, as a COMMENT ON after them on PostgreSQL).
fn create_sql(dialect: Dialect, seed: u64, load_time: &str) -> Vec<String> {
    let constants = rows::constants_for_seed(seed);
    let mut sqls: Vec<String> = Table::ALL
        .iter()
        .map(|&t| {
            let create = ddl_in(t, dialect).create;
            if dialect == Dialect::MySql && t == Table::Customer {
                let comment = comment_text(&constants, seed, load_time);
                format!("{create} COMMENT = '{comment}'")
            } else {
                create.to_string()
            }
        })
        .collect();
    if dialect == Dialect::Postgres {
        sqls.push(comment_sql(&constants, seed, load_time));
    }
    sqls
}

#[cfg(test)]
mod tests;
