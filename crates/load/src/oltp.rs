//! sysbench's OLTP tables (`sysbench oltp_common --db-driver=pgsql prepare`): `sbtest1..N`,
//! loaded in parallel across tables and within a table, keys and the secondary index built after
//! the data.
//!
//! Owns the tables `sbtest1` .. `sbtest<tables>` and nothing else: the drop names exactly the
//! tables it is asked to create (no CASCADE, no pattern).
//!
//! ## Schema: sysbench's, for PostgreSQL
//! sysbench 1.0.20 `oltp_common.lua`, `create_table()` with the pgsql driver:
//! ```text
//! CREATE TABLE sbtest%d(
//!   id SERIAL,                               -- "INTEGER NOT NULL" with --auto-inc=off
//!   k INTEGER DEFAULT '0' NOT NULL,
//!   c CHAR(120) DEFAULT '' NOT NULL,
//!   pad CHAR(60) DEFAULT '' NOT NULL,
//!   PRIMARY KEY (id)
//! )
//! CREATE INDEX k_%d ON sbtest%d(k)           -- --create-secondary (default on)
//! ```
//! stampede creates the table without the inline `PRIMARY KEY (id)`, loads it, then runs
//! `ALTER TABLE sbtestN ADD PRIMARY KEY (id)`: the catalog is the same (constraint
//! `sbtestN_pkey`, index `sbtestN_pkey`, `id` NOT NULL, the sequence `sbtestN_id_seq`), and a
//! B-tree built once from sorted data is much cheaper than one maintained row by row. The
//! sequence is set to `table_size` afterwards, as sysbench's `INSERT (k, c, pad)` leaves it, so
//! `oltp_insert` (which inserts without `id`) continues after the loaded rows. The integration
//! test compares `information_schema.columns`, constraints and indexes with a database that
//! sysbench itself prepared.
//!
//! ## Rows
//! Row `r` (0-based) of table `t`: `id = r + 1`, `k` from the caller's [`KeyDraw`] (sysbench:
//! `sb_rand(1, table_size)`, i.e. `--rand-type`'s distribution; the binary passes the workload's
//! distribution), `c` and `pad` from sysbench's templates (`###########-` groups; `#` is a random
//! digit, `sb_rand_str`). All of a row is a pure function of (seed, table, row): each row has its
//! own SplitMix64 stream seeded from the three, so any connection can produce any range.
//!
//! ## Plan
//! `init` describes the tables to the [`pipeline`](crate::pipeline), which runs the steps. One
//! task per table when there are at least as many tables as connections: each task owns its
//! table (`TRUNCATE` + `COPY FREEZE`, see [`driver`](crate::driver)). With fewer tables than
//! connections, each table is split into `ceil(jobs / tables)` row ranges loaded by plain COPY in
//! parallel. Then, per table and in parallel across tables: primary key, secondary index, and
//! `VACUUM ANALYZE` (not something sysbench does; it sets hint bits and statistics so the first
//! seconds of a run do not pay for them; `--no-vacuum` skips it).
//!
//! ## On MySQL/MariaDB
//! sysbench 1.0.20's `create_table()` with the mysql driver, verbatim:
//! ```text
//! CREATE TABLE sbtest%d(
//!   id INTEGER NOT NULL AUTO_INCREMENT,      -- "INTEGER NOT NULL" with --auto-inc=off
//!   k INTEGER DEFAULT '0' NOT NULL,
//!   c CHAR(120) DEFAULT '' NOT NULL,
//!   pad CHAR(60) DEFAULT '' NOT NULL,
//!   PRIMARY KEY (id)
//! ) /*! ENGINE = innodb */ <--mysql-table-options>
//! ```
//! The primary key stays inline: InnoDB stores the rows in the primary key's B-tree, so adding
//! it afterwards would rebuild the table, and rows inserted in key order append to it. The rows
//! go in as multi-row INSERTs (see `insert`); with explicit ids AUTO_INCREMENT continues after
//! the largest, as after sysbench's own load. No sequence to set and no VACUUM.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sut::{Dialect, Session, Target};

use crate::driver::{RowSource, Task, TaskKind};
use crate::pipeline::{self, at_least_one, fits_int, After, Data, Loader};
use crate::steps::{exec, first_row, num, query};
use crate::{split_range, split_rows, Event, LoadError, TableProgress, Timings};
pub use crate::{Part, Steps};

/// sysbench's `c` template: 10 groups of 11 digits, 119 characters (oltp_common.lua).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// sysbench's `pad` template: 5 groups, 59 characters.
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// How `k` is drawn for a row: `(table 1-based, row 0-based, per-row uniform source) -> k`.
/// sysbench uses `sb_rand(1, table_size)` (its `--rand-type` distribution).
pub trait KeyDraw: Send + Sync {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64;
}

/// `k` uniform in `[1, table_size]` (sysbench's `--rand-type=uniform`).
pub struct UniformKey;
impl KeyDraw for UniformKey {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64 {
        1 + (uniform() * table_size as f64) as i64
    }
}

/// `stampede init oltp` options (sysbench's names).
#[derive(Clone)]
pub struct InitOptions {
    /// `--tables`.
    pub tables: u32,
    /// `--table-size`: rows per table.
    pub table_size: u64,
    /// `--auto-inc` (default on): `id SERIAL`; off: `id INTEGER NOT NULL`.
    pub auto_inc: bool,
    /// `--create-secondary` (default on): the index `k_N` on `k`.
    pub create_secondary: bool,
    /// Skip the VACUUM ANALYZE after the load.
    pub no_vacuum: bool,
    /// Seed of the generated data.
    pub seed: u64,
    /// Distribution of `k`.
    pub key: Arc<dyn KeyDraw>,
    /// Loader connections.
    pub jobs: usize,
    pub cancel: Arc<AtomicBool>,
    /// MySQL: `--mysql-storage-engine` (sysbench's default `innodb`).
    pub mysql_storage_engine: String,
    /// MySQL: `--mysql-table-options`, appended to CREATE TABLE.
    pub mysql_table_options: String,
    /// A fleet's load (`stampede init oltp --fleet`): this process's part of every table's
    /// rows; `None`: all of them.
    pub part: Option<Part>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            tables: 1,
            table_size: 10_000,
            auto_inc: true,
            create_secondary: true,
            no_vacuum: false,
            seed: 0,
            key: Arc::new(UniformKey),
            jobs: 1,
            cancel: Arc::new(AtomicBool::new(false)),
            mysql_storage_engine: "innodb".into(),
            mysql_table_options: String::new(),
            part: None,
        }
    }
}

impl InitOptions {
    pub fn validate(&self) -> Result<(), LoadError> {
        at_least_one("--tables", self.tables.into())?;
        fits_int("--table-size", self.table_size, "sysbench's INTEGER id")?;
        at_least_one("--jobs", self.jobs as u64)
    }
}

/// What `init` did.
#[derive(Clone, Debug)]
pub struct InitReport {
    pub timings: Timings,
    pub rows: Vec<u64>,
    pub plan: String,
    pub frozen_tasks: u64,
    pub plain_tasks: u64,
}

pub fn table_name(t: u32) -> String {
    format!("sbtest{t}")
}

// ----- rows -----

/// SplitMix64 (the per-row stream).
struct Mix(u64);
impl Mix {
    fn new(seed: u64, table: u32, row: u64) -> Mix {
        // Three rounds of mixing so neighbouring (table, row) pairs start far apart.
        let mut m = Mix(seed ^ 0x5EED_0000_0000_0000);
        let a = m.next();
        let mut m = Mix(a ^ (table as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let b = m.next();
        Mix(b ^ row)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn double(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// sysbench's `sb_rand_str`: `#` becomes a random digit, other characters stay.
fn put_template(out: &mut Vec<u8>, template: &str, m: &mut Mix) {
    let mut bits = 0u64;
    let mut left = 0u32;
    for &b in template.as_bytes() {
        if b == b'#' {
            if left == 0 {
                bits = m.next();
                left = 19;
            }
            out.push(b'0' + (bits % 10) as u8);
            bits /= 10;
            left -= 1;
        } else {
            out.push(b);
        }
    }
}

/// The rows of one `sbtestN` as COPY text: `id \t k \t c \t pad`.
pub struct SbtestRows {
    pub seed: u64,
    pub table: u32,
    pub table_size: u64,
    pub key: Arc<dyn KeyDraw>,
}

impl RowSource for SbtestRows {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        let mut m = Mix::new(self.seed, self.table, row);
        let mut ib = itoa::Buffer::new();
        out.extend_from_slice(ib.format(row + 1).as_bytes());
        out.push(b'\t');
        let k = self.key.k(self.table_size, &mut || m.double());
        out.extend_from_slice(ib.format(k).as_bytes());
        out.push(b'\t');
        put_template(out, C_TEMPLATE, &mut m);
        out.push(b'\t');
        put_template(out, PAD_TEMPLATE, &mut m);
        out.push(b'\n');
    }
}

// ----- SQL -----

/// `DROP TABLE IF EXISTS sbtest1, ..., sbtestN` (sysbench's `cleanup` drops them one by one).
pub fn drop_sql(tables: u32) -> String {
    let names: Vec<String> = (1..=tables).map(table_name).collect();
    format!("DROP TABLE IF EXISTS {}", names.join(", "))
}

/// sysbench's CREATE TABLE for pgsql, without the inline primary key (added after the load).
pub fn create_sql(t: u32, auto_inc: bool) -> String {
    let id_def = if auto_inc {
        "SERIAL"
    } else {
        "INTEGER NOT NULL"
    };
    format!(
        "CREATE TABLE sbtest{t}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
    )
}

/// sysbench's CREATE TABLE for mysql, with its inline primary key, engine and table options.
pub fn create_sql_mysql(t: u32, auto_inc: bool, engine: &str, options: &str) -> String {
    let id_def = if auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    format!(
        "CREATE TABLE sbtest{t}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = {engine} */ {options}"
    )
}

pub fn pkey_sql(t: u32) -> String {
    format!("ALTER TABLE sbtest{t} ADD PRIMARY KEY (id)")
}

/// oltp_common.lua: `CREATE INDEX k_%d ON sbtest%d(k)`.
pub fn index_sql(t: u32) -> String {
    format!("CREATE INDEX k_{t} ON sbtest{t}(k)")
}

/// Where sysbench's SERIAL sequence stands after its `INSERT (k, c, pad)` of `table_size` rows.
pub fn setval_sql(t: u32, table_size: u64) -> Option<String> {
    (table_size > 0).then(|| format!("SELECT setval('sbtest{t}_id_seq', {table_size})"))
}

/// The COPY tasks and the plan in words.
pub fn copy_tasks(opts: &InitOptions) -> (Vec<Task>, String) {
    let per_table = (opts.jobs as u64).div_ceil(opts.tables as u64).max(1);
    let mut tasks = Vec::new();
    for t in 1..=opts.tables {
        let source: Arc<dyn RowSource> = Arc::new(SbtestRows {
            seed: opts.seed,
            table: t,
            table_size: opts.table_size,
            key: opts.key.clone(),
        });
        let ranges = match opts.part {
            // The part's rows, split as a whole table would be among this process's jobs.
            Some(p) => split_range(p.of(opts.table_size), per_table),
            None => split_rows(opts.table_size, per_table),
        };
        // COPY FREEZE (with the TRUNCATE it needs) only when one task loads the whole table.
        let whole = ranges.len() == 1 && opts.part.is_none();
        for r in ranges {
            tasks.push(Task {
                slot: (t - 1) as usize,
                kind: TaskKind::Copy {
                    relation: table_name(t),
                    columns: Some("id, k, c, pad".into()),
                    source: source.clone(),
                    rows: r,
                    whole,
                },
            });
        }
    }
    let plan = if per_table == 1 {
        format!(
            "{} tables, one COPY FREEZE each, {} connections",
            opts.tables, opts.jobs
        )
    } else {
        format!(
            "{} tables, {} row ranges each, plain COPY in parallel over {} connections",
            opts.tables, per_table, opts.jobs
        )
    };
    (tasks, plan)
}

// ----- steps -----

fn slots(opts: &InitOptions) -> Vec<TableProgress> {
    (1..=opts.tables)
        .map(|t| TableProgress {
            table: table_name(t),
            rows_done: 0,
            rows_total: opts.table_size,
        })
        .collect()
}

/// Which of `sbtest1..tables` exist (their numbers), for sysbench's prepare, which must not
/// touch existing tables.
pub async fn existing_tables(s: &mut Session, tables: u32) -> Result<Vec<u32>, LoadError> {
    if tables == 0 {
        return Ok(Vec::new());
    }
    let names: Vec<String> = (1..=tables).map(|t| format!("'sbtest{t}'")).collect();
    let sql = if s.dialect() == Dialect::MySql {
        format!(
            "SELECT CAST(SUBSTRING(table_name, 7) AS UNSIGNED) FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name IN ({}) ORDER BY 1",
            names.join(", ")
        )
    } else {
        format!(
            "SELECT substr(c.relname, 7)::int FROM pg_catalog.pg_class c \
         WHERE c.relname IN ({}) AND c.relkind IN ('r', 'p') \
           AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1",
            names.join(", ")
        )
    };
    let rows = query(s, &sql, "looking for the sbtest tables").await?;
    Ok(rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .filter_map(|v| v.parse().ok())
        .collect())
}

/// Drop `sbtest1..tables` (only those).
pub async fn drop_tables(s: &mut Session, tables: u32) -> Result<(), LoadError> {
    if s.dialect() == Dialect::Postgres {
        exec(s, "set client_min_messages = warning").await?;
    }
    exec(s, &drop_sql(tables)).await
}

/// `stampede init oltp`: drop, create, generate, primary keys, secondary indexes, vacuum. On
/// failure or interruption after the tables were created, they are dropped again (best effort).
pub async fn init(
    cfg: &Target,
    opts: &InitOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    init_steps_of(cfg, opts, Steps::ALL, on_event).await
}

/// Some of [`init`]'s steps (a fleet's load: [`Steps`]).
pub async fn init_steps_of(
    cfg: &Target,
    opts: &InitOptions,
    steps: Steps,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    let loaded = pipeline::run(cfg, &mut Sbtest(opts), steps, on_event).await?;
    Ok(InitReport {
        timings: loaded.timings,
        rows: loaded.driver.rows,
        plan: loaded.plan,
        frozen_tasks: loaded.driver.frozen_tasks,
        plain_tasks: loaded.driver.plain_tasks,
    })
}

/// `sbtest1..N` as the pipeline loads them.
struct Sbtest<'a>(&'a InitOptions);

impl Loader for Sbtest<'_> {
    fn what(&self) -> &'static str {
        "sbtest"
    }

    fn jobs(&self) -> usize {
        self.0.jobs
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.0.cancel
    }

    fn validate(&self, _: Dialect) -> Result<(), LoadError> {
        self.0.validate()
    }

    fn drop_sql(&self, _: Dialect) -> Vec<String> {
        vec![drop_sql(self.0.tables)]
    }

    async fn prepare(&mut self, admin: &mut Session, _: bool) -> Result<Vec<String>, LoadError> {
        let o = self.0;
        let mysql = admin.dialect() == Dialect::MySql;
        Ok((1..=o.tables)
            .map(|t| match mysql {
                true => create_sql_mysql(
                    t,
                    o.auto_inc,
                    &o.mysql_storage_engine,
                    &o.mysql_table_options,
                ),
                false => create_sql(t, o.auto_inc),
            })
            .collect())
    }

    fn rows(&self, dialect: Dialect) -> Data {
        let (tasks, mut plan) = copy_tasks(self.0);
        if dialect == Dialect::MySql {
            plan = plan
                .replace(
                    "one COPY FREEZE each",
                    "multi-row INSERTs, one connection each",
                )
                .replace("plain COPY in parallel", "multi-row INSERTs in parallel");
        }
        Data {
            step: "client-side generate",
            slots: slots(self.0),
            tasks,
            plan,
        }
    }

    fn finish(&self, dialect: Dialect) -> Vec<After> {
        let o = self.0;
        let n = o.tables;
        let mysql = dialect == Dialect::MySql;
        // MySQL: the primary key is inline, AUTO_INCREMENT follows the ids by itself.
        let mut keys: Vec<String> = match mysql {
            true => Vec::new(),
            false => (1..=n).map(pkey_sql).collect(),
        };
        if o.auto_inc && !mysql {
            keys.extend((1..=n).filter_map(|t| setval_sql(t, o.table_size)));
        }
        let mut after = vec![After::parallel("primary keys", keys)];
        if o.create_secondary {
            after.push(After::parallel(
                "secondary indexes",
                (1..=n).map(index_sql).collect(),
            ));
        }
        if !o.no_vacuum && !mysql {
            let vac = (1..=n)
                .map(|t| format!("VACUUM ANALYZE sbtest{t}"))
                .collect();
            after.push(After::parallel("vacuum", vac));
        }
        after
    }
}

/// sysbench 1.0.20 `bulk_insert.lua`'s `prepare()`, verbatim: one table per thread, `id` and `k`
/// only, empty. (Not `oltp_common`'s schema: no `c`, `pad`, sequence or index on `k`.)
pub fn bulk_create_sql(t: u32) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS sbtest{t} (\n  id INTEGER NOT NULL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id))"
    )
}

/// `stampede init oltp --bulk-insert`: sysbench's `bulk_insert cleanup` then `prepare` (drop
/// `sbtest1..tables`, create them empty with [`bulk_create_sql`]), in one transaction so a
/// failure leaves the old tables.
pub async fn init_bulk(cfg: &Target, tables: u32) -> Result<(), LoadError> {
    if tables == 0 {
        return Err(LoadError::Invalid("--tables must be at least 1".into()));
    }
    let mut s = Session::connect(cfg)
        .await
        .map_err(|e| LoadError::db("connecting", e))?;
    // On MySQL the DDL commits by itself: the transaction only matters on PostgreSQL.
    let mut sql = match s.dialect() {
        Dialect::Postgres => vec![
            "set client_min_messages = warning".to_string(),
            "BEGIN".to_string(),
        ],
        Dialect::MySql => Vec::new(),
    };
    sql.push(drop_sql(tables));
    sql.extend((1..=tables).map(bulk_create_sql));
    if s.dialect() == Dialect::Postgres {
        sql.push("COMMIT".into());
    }
    let mut r = Ok(());
    for q in &sql {
        r = exec(&mut s, q).await;
        if r.is_err() {
            // Closing the session rolls the transaction back.
            break;
        }
    }
    s.close().await;
    r
}

/// Per table `sbtest1..tables`: `(rows, max(id))` (0 for an empty table), for `bulk_insert`'s
/// checks: the tables must be empty before a run, and hold exactly ids 1..n after it.
pub async fn bulk_state(s: &mut Session, tables: u32) -> Result<Vec<(i64, i64)>, LoadError> {
    let parts: Vec<String> = (1..=tables)
        .map(|t| format!("SELECT {t}, count(*), coalesce(max(id), 0) FROM sbtest{t}"))
        .collect();
    let sql = format!("{} ORDER BY 1", parts.join(" UNION ALL "));
    let rows = query(s, &sql, "counting bulk_insert's rows").await?;
    Ok(rows.iter().map(|r| (num(r, 1), num(r, 2))).collect())
}

/// Rows per table, `sbtest1` first (for the check after a run).
pub async fn row_counts(s: &mut Session, tables: u32) -> Result<Vec<i64>, LoadError> {
    let parts: Vec<String> = (1..=tables)
        .map(|t| format!("(SELECT count(*) FROM sbtest{t})"))
        .collect();
    let sql = format!("SELECT {}", parts.join(", "));
    let row = first_row(s, &sql, "counting sbtest rows").await?;
    Ok((0..row.len()).map(|i| num(&row, i)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(src: &SbtestRows, r: u64) -> String {
        let mut out = Vec::new();
        src.write_row(r, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rows_follow_sysbench_templates_and_are_pure() {
        let src = SbtestRows {
            seed: 7,
            table: 3,
            table_size: 1000,
            key: Arc::new(UniformKey),
        };
        let a = row(&src, 41);
        assert_eq!(a, row(&src, 41));
        assert_ne!(a, row(&src, 42));
        let f: Vec<&str> = a.trim_end().split('\t').collect();
        assert_eq!(f[0], "42");
        let k: i64 = f[1].parse().unwrap();
        assert!((1..=1000).contains(&k));
        assert_eq!(f[2].len(), 119);
        assert_eq!(f[3].len(), 59);
        for (s, t) in [(f[2], C_TEMPLATE), (f[3], PAD_TEMPLATE)] {
            for (c, p) in s.bytes().zip(t.bytes()) {
                if p == b'#' {
                    assert!(c.is_ascii_digit());
                } else {
                    assert_eq!(c, p);
                }
            }
        }
        let other = SbtestRows { seed: 8, ..src };
        assert_ne!(a, row(&other, 41));
    }

    #[test]
    fn ddl_is_sysbench_s() {
        assert_eq!(
            create_sql(2, true),
            "CREATE TABLE sbtest2(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
        );
        assert!(create_sql(1, false).contains("id INTEGER NOT NULL,"));
        assert_eq!(index_sql(5), "CREATE INDEX k_5 ON sbtest5(k)");
        assert_eq!(
            drop_sql(3),
            "DROP TABLE IF EXISTS sbtest1, sbtest2, sbtest3"
        );
        assert_eq!(setval_sql(1, 0), None);
    }

    #[test]
    fn plans_split_tables_only_when_connections_are_left() {
        let o = InitOptions {
            tables: 4,
            table_size: 100,
            jobs: 2,
            ..Default::default()
        };
        let (t, _) = copy_tasks(&o);
        assert_eq!(t.len(), 4);
        assert!(t
            .iter()
            .all(|t| matches!(t.kind, TaskKind::Copy { whole: true, .. })));
        let o = InitOptions {
            tables: 2,
            table_size: 100,
            jobs: 5,
            ..Default::default()
        };
        let (t, _) = copy_tasks(&o);
        assert_eq!(t.len(), 6);
        let rows: u64 = t
            .iter()
            .map(|t| match &t.kind {
                TaskKind::Copy { rows, whole, .. } => {
                    assert!(!whole);
                    rows.end - rows.start
                }
                _ => 0,
            })
            .sum();
        assert_eq!(rows, 200);
    }
}
