//! TPC-B tables as pgbench makes them (`pgbench -i`): `init`, `reset`, and scale detection.
//!
//! Owns pgbench's four tables — `pgbench_accounts`, `pgbench_branches`, `pgbench_history`,
//! `pgbench_tellers` — and, when partitioned, `pgbench_accounts_1..N`. Must not touch anything
//! else: drops name exactly those four tables (no CASCADE: an unrelated table with a foreign key
//! to one of them makes the drop fail rather than lose data), as pgbench.c `initDropTables`.
//!
//! ## Schema: identical to pgbench's
//! pgbench.c `initCreateTables` (PostgreSQL 15): the same column declarations (`aid` becomes
//! `bigint` from scale 20000 up, `SCALE_32BIT_THRESHOLD`), `WITH (fillfactor=N)` on tellers,
//! accounts (or each of its partitions) and branches — always written, also for 100, as pgbench
//! does, so `reloptions` match — `create unlogged table` for `--unlogged`, `partition by
//! range|hash (aid)` and `createPartitions`' bounds. Primary keys are added after the data
//! (`initCreatePKeys`, so their names are PostgreSQL's defaults: `pgbench_branches_pkey`, ...),
//! foreign keys last with pgbench's constraint names (`initCreateFKeys`). Rows are pgbench's:
//! `initBranch`/`initTeller`/`initAccount` (branch and teller filler NULL, account filler '').
//! The integration tests compare `information_schema.columns`, `pg_class.reloptions`, partition
//! bounds and constraints with a database loaded by pgbench itself.
//!
//! ## Loading plan (client-side generation), and why
//! Through the [`driver`](crate::driver) with `jobs` connections; branches and tellers are one
//! task each, loaded with `BEGIN; TRUNCATE; COPY FREEZE; COMMIT` (legal: the task owns the
//! table). For pgbench_accounts:
//! - not partitioned, `jobs = 1`: one task, COPY FREEZE — exactly pgbench's plan;
//! - not partitioned, `jobs > 1`: `jobs` row ranges, one plain COPY each, in parallel. FREEZE is
//!   impossible here (several connections share one table), so VACUUM does more work afterwards;
//! - range-partitioned: one task per partition, each `TRUNCATE pgbench_accounts_<p>; COPY
//!   pgbench_accounts_<p> ... FREEZE` — legal per leaf partition and parallel (pgbench itself
//!   loads through the parent without FREEZE). The rows of partition p are exactly those inside
//!   pgbench's bounds for p;
//! - hash-partitioned: `jobs` row ranges through the parent, plain COPY (FREEZE is not supported
//!   on a partitioned table; routing rows to leaves client-side would mean reimplementing
//!   PostgreSQL's partition hash).
//!
//! Measured on the development box (2 cores, 24 GiB, PostgreSQL 15.18 with stampede's embedded
//! defaults — shared_buffers 4GB, max_wal_size 4GB, fsync on), scale 50 (5 M accounts), a
//! CHECKPOINT before each load, three rounds, median total (generate / vacuum); the box was
//! running other test suites at the same time (load average ~4.5), so expect ±20 %:
//! ```text
//! cargo build --release -p load --example measure_load
//! measure_load <socket dir> <port> <db> 50 <jobs> [<partitions> range|hash] [server]
//! pgbench -i -q -s 50 [--partitions 2]                    (PostgreSQL 15's pgbench, same server)
//!
//! pgbench -i                       6.97 s (4.32 / 0.27)
//! jobs 1, one COPY FREEZE          6.58 s (3.77 / 0.31)   <- pgbench's plan
//! jobs 2, 2 plain COPY ranges      7.60 s (3.74 / 1.15)
//! pgbench -i --partitions 2        9.30 s (4.75 / 1.85)
//! range 2, jobs 2, FREEZE per leaf 6.67 s (3.19 / 0.81)
//! hash 2, jobs 2, plain via parent 9.13 s (4.69 / 1.77)
//! server-side, jobs 1              10.90 s (7.71 / 0.67)
//! server-side, jobs 2              8.53 s (5.39 / 0.70)
//! ```
//! So on two cores, for an unpartitioned table, parallel plain COPY saves nothing on generation
//! (the server's COPY is the bottleneck and the two cores are shared with the client) and costs
//! ~0.9 s of VACUUM per 5 M rows (it must set hint bits and the visibility map on every page,
//! which FREEZE did at load time): `jobs = 1` is the fastest plan there, and the binary should
//! default to it on small machines. With idle cores for the extra backends, generation scales with
//! `jobs` while the VACUUM penalty stays at ~20 % of one backend's COPY time, so parallel wins.
//! Per-leaf FREEZE on range partitions is legal and parallel, and beat pgbench's
//! partitioned load by ~30 %.
//!
//! ## Why COPY text with an empty filler (not binary COPY)
//! The load is bound by the server's COPY, not by generating rows, so the format is chosen by
//! what the server spends per row. Measured with callgrind on a single-user backend
//! (`valgrind --tool=callgrind postgres --single`, PostgreSQL 15.18, `BEGIN; TRUNCATE; COPY t
//! FROM file WITH (FREEZE); COMMIT` of 200,000 pgbench_accounts rows, minus a run without the
//! COPY), instructions per row: text with the filler empty (what pgbench and this loader send)
//! 3,458; binary with the filler empty 3,492; binary with the filler padded to char(84) 5,453;
//! text padded 8,000. Binary saves nothing here (the integers are short; bpchar pads either way),
//! and sending the padding costs the server more. The same on the 5 M rows of scale 50, backend
//! CPU from /proc (noisy machine): text 2.1-2.2 s, binary 2.3 s. So the loader sends pgbench's
//! text rows, and a client-side load of an unpartitioned pgbench_accounts cannot be much faster
//! than pgbench's on the same server: one backend must parse every row (COPY FREEZE needs one
//! transaction that created or truncated the table), then build the primary key; parallelism
//! helps only where FREEZE stays legal (range partitions).
//!
//! Server-side generation (`pgbench -I G`): with `jobs = 1`, pgbench's single transaction
//! (`initGenerateDataServerSide`); with more, the same `INSERT ... SELECT generate_series`
//! statements over row ranges of at most a million rows, in parallel.
//!
//! ## Interruption and failure: what is left behind
//! A database is either fully initialised (the four tables, loaded, with primary keys) or holds
//! none of them: if `init` is interrupted (cancel flag) or fails after it created the tables, it
//! drops the four tables (best effort, reported with an [`Event::Notice`]) and returns the error
//! ([`LoadError::Interrupted`] for a cancel). The cancel flag is checked between steps and, while
//! generating, after every chunk of COPY data; a statement already running (a primary-key build,
//! a VACUUM) finishes first.
//!
//! ## On MySQL and MariaDB
//! The same four tables, columns and rows, in MySQL's dialect ([`create_sql_mysql`]): InnoDB,
//! primary keys inline (InnoDB clusters rows by the primary key: a key added after the load
//! would rebuild the table), `mtime` a DATETIME. The rows go through the driver as multi-row
//! INSERTs (`crate::insert`: the same COPY-text sources, translated), one transaction per task;
//! `ANALYZE TABLE` instead of VACUUM; `--foreign-keys` as `ALTER TABLE ... ADD CONSTRAINT` with
//! pgbench's names. What has no MySQL counterpart is refused before connecting
//! ([`InitOptions::validate_for`]): unlogged tables, tablespaces, pgbench's (declarative)
//! partitions, a per-table fillfactor, server-side generation with `generate_series`.
//!
//! ## Module layout
//! This file: the constants, [`InitOptions`], `init` as a description of pgbench's tables that
//! the [`pipeline`](crate::pipeline) runs, `reset`, `inspect`, scale detection; `sql`: the statements (pgbench's schema, keys, vacuum, reset); `generate`: the
//! rows and the client-side and server-side task lists.

mod generate;
mod sql;
#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sut::{Dialect, Session, Target};

use crate::pipeline::{self, at_least_one, serial, After, Data, Loader};
pub use crate::split_rows;
use crate::steps::{exec, first_row, num, query};
use crate::{Event, LoadError, Part, Steps, Timings};
use generate::slots;
pub use generate::{client_side_tasks, server_side_tasks, Accounts, Branches, Tellers};
pub use sql::{
    create_sql, create_sql_mysql, pkey_sql, quote_ident, range_partition_rows, ANALYZE_SQL_MYSQL,
    DROP_SQL, FKEY_SQL, FKEY_SQL_MYSQL, PKEY_SQL, RESET_SQL, VACUUM_SQL,
};

/// pgbench's four tables, in the order of its DROP and TRUNCATE statements.
pub const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_history",
    "pgbench_tellers",
];

/// Rows per unit of scale (pgbench.c `nbranches`, `ntellers`, `naccounts`).
pub const NBRANCHES: u64 = 1;
pub const NTELLERS: u64 = 10;
pub const NACCOUNTS: u64 = 100_000;

/// pgbench.c `SCALE_32BIT_THRESHOLD`: from this scale on, account ids are `bigint`.
pub const SCALE_32BIT_THRESHOLD: i64 = 20_000;

/// `--partition-method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionMethod {
    Range,
    Hash,
}

impl PartitionMethod {
    /// Its name in SQL (`PARTITION BY RANGE`) and in pgbench's `--partition-method`.
    pub fn sql(self) -> &'static str {
        match self {
            PartitionMethod::Range => "range",
            PartitionMethod::Hash => "hash",
        }
    }
}

/// Where rows are generated (pgbench `-I g` / `-I G`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Generate {
    /// Rows generated here and sent with COPY.
    #[default]
    ClientSide,
    /// `INSERT ... SELECT generate_series(...)` on the server.
    ServerSide,
}

/// `stampede init tpcb` options (pgbench's `-i` options).
#[derive(Clone, Debug)]
pub struct InitOptions {
    /// `-s`: 1 branch, 10 tellers, 100 000 accounts per unit.
    pub scale: i64,
    /// `-F`: 10..=100.
    pub fillfactor: u32,
    /// `--partitions`: 0 = not partitioned.
    pub partitions: u32,
    /// `--partition-method`; `None` with partitions > 0 means range (pgbench's default).
    pub partition_method: Option<PartitionMethod>,
    /// `--unlogged-tables`.
    pub unlogged: bool,
    /// `--foreign-keys`.
    pub foreign_keys: bool,
    /// `--tablespace`: where the tables go.
    pub tablespace: Option<String>,
    /// `--index-tablespace`: where the primary keys' indexes go.
    pub index_tablespace: Option<String>,
    /// `-n`: no VACUUM after loading.
    pub no_vacuum: bool,
    pub generate: Generate,
    /// Loader connections.
    pub jobs: usize,
    /// Raised to stop (Ctrl-C).
    pub cancel: Arc<AtomicBool>,
    /// A fleet's load (`stampede init tpcb --fleet`): this process's range of accounts (the
    /// first also loads the branches and tellers); `None`: all of them.
    pub part: Option<Part>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            scale: 1,
            fillfactor: 100,
            partitions: 0,
            partition_method: None,
            unlogged: false,
            foreign_keys: false,
            tablespace: None,
            index_tablespace: None,
            no_vacuum: false,
            generate: Generate::ClientSide,
            jobs: 1,
            cancel: Arc::new(AtomicBool::new(false)),
            part: None,
        }
    }
}

impl InitOptions {
    /// pgbench's checks (pgbench.c `main`), with its messages.
    pub fn validate(&self) -> Result<(), LoadError> {
        if self.scale < 1 || self.scale > i32::MAX as i64 {
            return Err(LoadError::Invalid(format!(
                "invalid scaling factor: \"{}\"",
                self.scale
            )));
        }
        if !(10..=100).contains(&self.fillfactor) {
            return Err(LoadError::Invalid(format!(
                "invalid fillfactor: \"{}\" (must be 10..100)",
                self.fillfactor
            )));
        }
        if self.partition_method.is_some() && self.partitions == 0 {
            return Err(LoadError::Invalid(
                "--partition-method requires greater than zero --partitions".into(),
            ));
        }
        if self.partitions > i32::MAX as u32 {
            return Err(LoadError::Invalid(format!(
                "invalid number of partitions: \"{}\"",
                self.partitions
            )));
        }
        at_least_one("--jobs", self.jobs as u64)
    }

    /// What a server of `dialect` cannot do of these options (all at once, with the reasons).
    /// MySQL and MariaDB: no unlogged tables, tablespaces, partitions (pgbench's are
    /// PostgreSQL's declarative partitions), per-table fillfactor or server-side generation.
    pub fn validate_for(&self, dialect: Dialect) -> Result<(), LoadError> {
        if dialect == Dialect::Postgres {
            return Ok(());
        }
        let mut refused = Vec::new();
        if self.unlogged {
            refused.push("--unlogged-tables (InnoDB logs every table's changes in its redo log)");
        }
        if self.tablespace.is_some() {
            refused.push("--tablespace (PostgreSQL's tablespaces)");
        }
        if self.index_tablespace.is_some() {
            refused.push("--index-tablespace (PostgreSQL's tablespaces)");
        }
        if self.partitions > 0 {
            refused.push("--partitions (PostgreSQL's declarative partitioning)");
        }
        if self.fillfactor != 100 {
            refused.push(
                "-F/--fillfactor (InnoDB has no per-table fillfactor; innodb_fill_factor is a \
                 server setting)",
            );
        }
        if self.generate == Generate::ServerSide {
            refused.push("--server-side (it needs PostgreSQL's generate_series)");
        }
        if refused.is_empty() {
            return Ok(());
        }
        Err(LoadError::Invalid(format!(
            "pgbench's tables on {}: not possible with {}",
            dialect.name(),
            refused.join(", ")
        )))
    }

    /// The partition method in effect (None: not partitioned).
    pub fn method(&self) -> Option<PartitionMethod> {
        if self.partitions == 0 {
            None
        } else {
            Some(self.partition_method.unwrap_or(PartitionMethod::Range))
        }
    }

    /// Accounts (and history) ids are `bigint` from scale 20000 on.
    pub fn bigint_aid(&self) -> bool {
        self.scale >= SCALE_32BIT_THRESHOLD
    }

    fn total_accounts(&self) -> u64 {
        NACCOUNTS * self.scale as u64
    }

    /// The accounts this process loads: all, or its part's range (`part`).
    fn accounts(&self) -> std::ops::Range<u64> {
        match self.part {
            Some(p) => p.of(self.total_accounts()),
            None => 0..self.total_accounts(),
        }
    }
}

/// What `init` did.
#[derive(Clone, Debug)]
pub struct InitReport {
    pub timings: Timings,
    pub scale: i64,
    /// Rows loaded: branches, tellers, accounts.
    pub rows: [u64; 3],
    /// How pgbench_accounts was loaded, in words (for the log and `--verbose`).
    pub plan: String,
    /// COPY tasks committed with / without FREEZE (client-side generation).
    pub frozen_tasks: u64,
    pub plain_tasks: u64,
    /// The server refused COPY FREEZE (a sharded PostgreSQL-alike) and the load went on without.
    pub freeze_refused: bool,
}

// ----- steps -----

/// Drop pgbench's four tables (and with them, pgbench_accounts' partitions). Nothing else.
pub async fn drop_tables(s: &mut Session) -> Result<(), LoadError> {
    exec(s, DROP_SQL).await
}

/// `stampede init tpcb`: drop, create, generate, vacuum, primary keys, foreign keys — pgbench's
/// steps `dtgvp[f]` (or `dtGvp[f]`), through `cfg` (the loader opens up to `jobs` more
/// connections). See the module header for what an interruption leaves behind.
pub async fn init(
    cfg: &Target,
    opts: &InitOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    init_steps_of(cfg, opts, Steps::ALL, on_event).await
}

/// Some of [`init`]'s steps (a fleet's load: [`Steps`]): drop and create; generate (this
/// process's part); vacuum, keys and foreign keys.
pub async fn init_steps_of(
    cfg: &Target,
    opts: &InitOptions,
    steps: Steps,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    let loaded = pipeline::run(cfg, &mut Pgbench(opts), steps, on_event).await?;
    Ok(InitReport {
        timings: loaded.timings.clone(),
        scale: opts.scale,
        rows: [loaded.rows(0), loaded.rows(1), loaded.rows(2)],
        plan: loaded.plan,
        frozen_tasks: loaded.driver.frozen_tasks,
        plain_tasks: loaded.driver.plain_tasks,
        freeze_refused: loaded.driver.freeze_refused,
    })
}

/// pgbench's tables as the pipeline loads them. The steps after the rows run in pgbench's
/// order on the admin session, as pgbench does.
struct Pgbench<'a>(&'a InitOptions);

impl Loader for Pgbench<'_> {
    fn what(&self) -> &'static str {
        "pgbench"
    }

    fn jobs(&self) -> usize {
        self.0.jobs
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.0.cancel
    }

    fn validate(&self, dialect: Dialect) -> Result<(), LoadError> {
        self.0.validate()?;
        self.0.validate_for(dialect)
    }

    fn drop_sql(&self, dialect: Dialect) -> Vec<String> {
        let sql: &[&str] = match dialect {
            Dialect::Postgres => &[DROP_SQL],
            Dialect::MySql => &DROP_SQL_MYSQL,
        };
        sql.iter().map(|s| s.to_string()).collect()
    }

    /// The CREATEs depend on the server's version (pgbench's `initCreateTables`).
    async fn prepare(&mut self, admin: &mut Session, _: bool) -> Result<Vec<String>, LoadError> {
        Ok(match admin.dialect() {
            Dialect::MySql => create_sql_mysql(self.0),
            Dialect::Postgres => {
                create_sql(self.0, admin.pg().map_or(0, |p| p.server_version_num()))
            }
        })
    }

    fn rows(&self, dialect: Dialect) -> Data {
        let opts = self.0;
        let (step, (tasks, mut plan)) = match opts.generate {
            Generate::ClientSide => ("client-side generate", client_side_tasks(opts)),
            Generate::ServerSide => ("server-side generate", server_side_tasks(opts)),
        };
        if dialect == Dialect::MySql {
            // Partitions and server-side generation were refused: the accounts are one task or
            // `jobs` row ranges, besides the tellers' and the branches' (the first part's).
            let small = if Part::is_first(opts.part) { 2 } else { 0 };
            plan = match tasks.len() - small {
                1 => "pgbench_accounts: multi-row INSERTs in one transaction".into(),
                n => format!("pgbench_accounts: {n} row ranges, multi-row INSERTs in parallel"),
            };
        }
        Data {
            step,
            slots: slots(opts),
            tasks,
            plan,
        }
    }

    /// After the rows: vacuum (MySQL: analyze), the primary keys (inline on MySQL, in
    /// create_sql_mysql), the foreign keys.
    fn finish(&self, dialect: Dialect) -> Vec<After> {
        let opts = self.0;
        let owned = |sql: &[&str]| sql.iter().map(|s| s.to_string()).collect();
        let (vacuum, pkeys, fkeys) = match dialect {
            Dialect::MySql => (
                After::serial("analyze", owned(&ANALYZE_SQL_MYSQL)),
                None,
                &FKEY_SQL_MYSQL[..],
            ),
            Dialect::Postgres => (
                After::serial("vacuum", owned(&VACUUM_SQL)),
                Some(After::serial("primary keys", pkey_sql(opts))),
                &FKEY_SQL[..],
            ),
        };
        let mut after = Vec::new();
        if !opts.no_vacuum {
            after.push(vacuum);
        }
        after.extend(pkeys);
        if opts.foreign_keys {
            after.push(After::serial("foreign keys", owned(fkeys)));
        }
        after
    }
}

/// [`DROP_SQL`] on MySQL: with pgbench's foreign keys in place, InnoDB refuses to drop a table
/// another one still references, so the checks are off for the drop (this session only).
const DROP_SQL_MYSQL: [&str; 3] = [
    "set foreign_key_checks = 0",
    DROP_SQL,
    "set foreign_key_checks = 1",
];

/// `stampede reset tpcb` (seed 000's `vacuum.sql`): balances back to 0 where they are not,
/// history emptied, the four tables vacuumed and analysed. Steps: "reset balances", "truncate
/// history", "vacuum".
pub async fn reset(
    s: &mut Session,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Timings, LoadError> {
    if let TpcbTables::Missing(table) = inspect(s).await? {
        return Err(LoadError::Missing {
            table,
            workload: "tpcb",
        });
    }
    let never = AtomicBool::new(false);
    let mut timings = Timings::default();
    let vacuum: (&'static str, &[&str]) = match s.dialect() {
        Dialect::Postgres => ("vacuum", &VACUUM_SQL),
        Dialect::MySql => ("analyze", &ANALYZE_SQL_MYSQL),
    };
    for (name, sql) in [
        ("reset balances", &RESET_SQL[..3]),
        ("truncate history", &RESET_SQL[3..]),
        vacuum,
    ] {
        serial(s, name, sql, &never, &mut timings, on_event).await?;
    }
    Ok(timings)
}

/// What a database holds of pgbench's tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TpcbTables {
    /// This table (the first missing, in pgbench's order) does not exist.
    Missing(&'static str),
    Present {
        /// `count(*)` of pgbench_branches (how pgbench finds the scale, pgbench.c `main`).
        scale: i64,
        /// Partitions of pgbench_accounts, and their method (pgbench.c `GetTableInfo`).
        partitions: i64,
        partition_method: Option<PartitionMethod>,
        /// pgbench_branches, pgbench_tellers and pgbench_accounts all have primary keys.
        primary_keys: bool,
    },
}

/// Look at pgbench's tables, as they resolve through `search_path` (as pgbench does); on
/// MySQL, in the session's database.
pub async fn inspect(s: &mut Session) -> Result<TpcbTables, LoadError> {
    if s.dialect() == Dialect::MySql {
        return inspect_mysql(s).await;
    }
    let sql = "select to_regclass('pgbench_accounts') is not null, \
               to_regclass('pgbench_branches') is not null, \
               to_regclass('pgbench_history') is not null, \
               to_regclass('pgbench_tellers') is not null";
    let row = first_row(s, sql, "looking for the pgbench tables").await?;
    for (i, table) in TABLES.iter().enumerate() {
        if row.get(i).and_then(|v| v.as_deref()) != Some("t") {
            return Ok(TpcbTables::Missing(table));
        }
    }
    let sql = "select (select count(*) from pgbench_branches), \
               (select count(*) from pg_catalog.pg_inherits where inhparent = 'pgbench_accounts'::regclass), \
               (select partstrat from pg_catalog.pg_partitioned_table where partrelid = 'pgbench_accounts'::regclass), \
               (select count(*) from pg_catalog.pg_constraint where contype = 'p' and conrelid in \
                  ('pgbench_branches'::regclass, 'pgbench_tellers'::regclass, 'pgbench_accounts'::regclass))";
    let row = first_row(s, sql, "reading the pgbench tables").await?;
    let num = |i: usize| -> i64 { num(&row, i) };
    let method = match row.get(2).and_then(|v| v.as_deref()) {
        Some("r") => Some(PartitionMethod::Range),
        Some("h") => Some(PartitionMethod::Hash),
        _ => None,
    };
    Ok(TpcbTables::Present {
        scale: num(0),
        partitions: num(1),
        partition_method: method,
        primary_keys: num(3) == 3,
    })
}

/// [`inspect`] on MySQL: the tables of the current database (`information_schema`), the
/// branches counted, the primary keys from `information_schema.table_constraints`. Not
/// partitioned (`init tpcb` refuses partitions there).
async fn inspect_mysql(s: &mut Session) -> Result<TpcbTables, LoadError> {
    let sql = "select table_name from information_schema.tables where table_schema = database() \
               and table_name in ('pgbench_accounts', 'pgbench_branches', 'pgbench_history', \
               'pgbench_tellers')";
    let rows = query(s, sql, "looking for the pgbench tables").await?;
    let found = |t: &str| {
        rows.iter()
            .any(|r| r.first().and_then(|v| v.as_deref()) == Some(t))
    };
    if let Some(missing) = TABLES.iter().find(|t| !found(t)) {
        return Ok(TpcbTables::Missing(missing));
    }
    let sql = "select (select count(*) from pgbench_branches), \
               (select count(*) from information_schema.table_constraints \
                where constraint_schema = database() and constraint_type = 'PRIMARY KEY' \
                and table_name in ('pgbench_branches', 'pgbench_tellers', 'pgbench_accounts'))";
    let row = first_row(s, sql, "reading the pgbench tables").await?;
    let num = |i: usize| -> i64 { num(&row, i) };
    Ok(TpcbTables::Present {
        scale: num(0),
        partitions: 0,
        partition_method: None,
        primary_keys: num(1) == 3,
    })
}

/// How the first `pgbench_accounts` of the search path is partitioned, as pgbench's
/// `GetTableInfo` reads it (its query): `Some((method, partitions))`, or `None` when it
/// is not partitioned, not found, or the server has no `pg_partitioned_table`.
pub async fn partitioning(s: &mut Session) -> Result<Option<(PartitionMethod, u32)>, LoadError> {
    if s.dialect() == Dialect::MySql {
        // `init tpcb` makes no partitions there.
        return Ok(None);
    }
    let sql = "select o.n, p.partstrat, pg_catalog.count(i.inhparent) \
               from pg_catalog.pg_class as c \
               join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) \
               cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) \
               left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) \
               left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) \
               where c.relname = 'pgbench_accounts' and o.n is not null \
               group by 1, 2 \
               order by 1 asc \
               limit 1";
    let Ok(rows) = s.simple_query(sql).await else {
        // An older server: pgbench assumes no partitioning too.
        return Ok(None);
    };
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let method = match row.get(1).and_then(|v| v.as_deref()) {
        Some("r") => PartitionMethod::Range,
        Some("h") => PartitionMethod::Hash,
        _ => return Ok(None),
    };
    Ok(Some((method, num(row, 2))))
}

/// The scale of a pgbench database: `count(*)` of pgbench_branches; `None` when any of the four
/// tables is missing (use [`inspect`] to learn which).
pub async fn detect_tpcb_scale(s: &mut Session) -> Result<Option<i64>, LoadError> {
    Ok(match inspect(s).await? {
        TpcbTables::Missing(_) => None,
        TpcbTables::Present { scale, .. } => Some(scale),
    })
}
