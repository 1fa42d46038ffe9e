//! YCSB's `usertable` (`stampede init ycsb`), as YCSB's JDBC binding creates it
//! (`jdbc/src/main/resources/sql/create_table.sql`): `YCSB_KEY VARCHAR(255) PRIMARY KEY` and
//! `FIELD0` ... `FIELDn-1` TEXT, unquoted (so PostgreSQL folds them to lower case, as it does
//! for YCSB's own table), and YCSB's load phase's rows: keys `user` + the key number, hashed by
//! FNV-1a 64 unless `insertorder=ordered` (`CoreWorkload.buildKeyName`), `fieldcount` values of
//! `fieldlength` characters each, a pure function of (seed, key number)
//! (`txn::row_values`).
//!
//! Owns `usertable` and nothing else: `init` drops and recreates exactly it (`DROP TABLE IF
//! EXISTS usertable`, never CASCADE), as `init tpcb` does pgbench's four tables.
//!
//! ## Loading plan
//! Through the loader pipeline (`load::pipeline`): key ranges over `jobs` connections, COPY on
//! PostgreSQL (one range, COPY FREEZE into the table just created, when one connection loads
//! it or the table is small), multi-row INSERTs on MySQL. PostgreSQL gets its primary key after
//! the data (one sorted index build instead of a B-tree grown by random hashed keys), then
//! `VACUUM ANALYZE`; InnoDB clusters rows by the primary key, so on MySQL it is in the CREATE.
//!
//! ## What the run reads back
//! The load is recorded in the table's comment, `stampede ycsb: recordcount=N fieldlength=N
//! insertorder=hashed zeropadding=N seed=N`, as TPC-C records its constants: a run then writes
//! keys named as the loaded ones and values of the loaded length. A table YCSB loaded has no
//! comment: [`inspect`] still counts its rows and fields and measures a value's length.

use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::txn::{columns, gen, row_values, InsertOrder};
use sut::{Dialect, Session, Target};

use load::driver::{RowSource, Task, TaskKind};
use load::pipeline::{self, After, Data, Loader};
use load::{Event, LoadError, Steps, TableProgress, Timings};

pub const DROP_SQL: &str = "DROP TABLE IF EXISTS usertable";

/// Rows per COPY task at least, when the load is cut over several connections.
const MIN_TASK_ROWS: u64 = 50_000;

/// `stampede init ycsb` options (YCSB's property names).
#[derive(Clone, Debug)]
pub struct InitOptions {
    pub recordcount: u64,
    pub fieldcount: u32,
    pub fieldlength: u32,
    pub insertorder: InsertOrder,
    pub zeropadding: usize,
    /// Seed of the generated values.
    pub seed: u64,
    /// Loader connections.
    pub jobs: usize,
    pub no_vacuum: bool,
    pub cancel: Arc<AtomicBool>,
}

impl Default for InitOptions {
    fn default() -> Self {
        InitOptions {
            recordcount: 1000,
            fieldcount: 10,
            fieldlength: 100,
            insertorder: InsertOrder::Hashed,
            zeropadding: 1,
            seed: 0,
            jobs: 1,
            no_vacuum: false,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// What `init` did.
#[derive(Clone, Debug)]
pub struct InitReport {
    pub timings: Timings,
    pub rows: u64,
    pub plan: String,
}

/// The table's definition; `with_key` puts the primary key in it (MySQL; PostgreSQL adds it
/// after the data).
pub fn create_sql(dialect: Dialect, fieldcount: u32, with_key: bool, comment: &str) -> String {
    let mut s = String::from("CREATE TABLE usertable (YCSB_KEY VARCHAR(255)");
    if with_key {
        s.push_str(" PRIMARY KEY");
    }
    for i in 0..fieldcount {
        s.push_str(&format!(", FIELD{i} TEXT"));
    }
    s.push(')');
    if dialect == Dialect::MySql {
        s.push_str(&format!(" ENGINE=InnoDB COMMENT='{comment}'"));
    }
    s
}

/// The comment that records the load (module header).
pub fn comment_text(o: &InitOptions) -> String {
    format!(
        "stampede ycsb: recordcount={} fieldlength={} insertorder={} zeropadding={} seed={}",
        o.recordcount,
        o.fieldlength,
        o.insertorder.name(),
        o.zeropadding,
        o.seed
    )
}

/// What a comment written by [`comment_text`] recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    pub recordcount: u64,
    pub fieldlength: u32,
    pub insertorder: InsertOrder,
    pub zeropadding: usize,
    pub seed: u64,
}

pub fn parse_comment(c: &str) -> Option<Recorded> {
    let rest = c.strip_prefix("stampede ycsb: ")?;
    let mut r = Recorded {
        recordcount: 0,
        fieldlength: 0,
        insertorder: InsertOrder::Hashed,
        zeropadding: 1,
        seed: 0,
    };
    for part in rest.split(' ') {
        let (k, v) = part.split_once('=')?;
        match k {
            "recordcount" => r.recordcount = v.parse().ok()?,
            "fieldlength" => r.fieldlength = v.parse().ok()?,
            "insertorder" if v == "hashed" => r.insertorder = InsertOrder::Hashed,
            "insertorder" if v == "ordered" => r.insertorder = InsertOrder::Ordered,
            "zeropadding" => r.zeropadding = v.parse().ok()?,
            "seed" => r.seed = v.parse().ok()?,
            _ => return None,
        }
    }
    Some(r)
}

/// The rows, as COPY text.
struct Rows {
    opts: InitOptions,
}

impl RowSource for Rows {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        let o = &self.opts;
        let mut key = String::with_capacity(24);
        gen::key_name(
            row,
            o.insertorder == InsertOrder::Hashed,
            o.zeropadding,
            &mut key,
        );
        out.extend_from_slice(key.as_bytes());
        let mut values = String::with_capacity((o.fieldcount * o.fieldlength) as usize);
        row_values(o.seed, row, o.fieldcount, o.fieldlength, &mut values);
        let len = o.fieldlength as usize;
        for i in 0..o.fieldcount as usize {
            out.push(b'\t');
            out.extend_from_slice(&values.as_bytes()[i * len..(i + 1) * len]);
        }
        out.push(b'\n');
    }
}

/// Cut `0..n` into the load's key ranges (module header).
pub fn ranges(n: u64, jobs: usize) -> Vec<Range<u64>> {
    let parts = (n / MIN_TASK_ROWS).clamp(1, 4 * jobs.max(1) as u64);
    load::split_rows(n, if jobs <= 1 { 1 } else { parts })
}

/// `stampede init ycsb`: drop, create, generate, primary key, vacuum, through the loader
/// pipeline (`load::pipeline`: an error or the cancel flag after the table was created drops
/// it again).
pub async fn init(
    cfg: &Target,
    opts: &InitOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<InitReport, LoadError> {
    let loaded = pipeline::run(cfg, &mut Usertable { opts }, Steps::ALL, on_event).await?;
    Ok(InitReport {
        rows: loaded.rows(0),
        timings: loaded.timings,
        plan: loaded.plan,
    })
}

/// `usertable` as the pipeline loads it (module header).
struct Usertable<'a> {
    opts: &'a InitOptions,
}

impl Loader for Usertable<'_> {
    fn what(&self) -> &'static str {
        "YCSB"
    }

    fn jobs(&self) -> usize {
        self.opts.jobs
    }

    fn cancel(&self) -> &Arc<AtomicBool> {
        &self.opts.cancel
    }

    fn validate(&self, _dialect: Dialect) -> Result<(), LoadError> {
        let o = self.opts;
        if o.recordcount == 0 || o.fieldcount == 0 || o.jobs == 0 {
            return Err(LoadError::Invalid(
                "recordcount, fieldcount and --jobs must be at least 1".into(),
            ));
        }
        Ok(())
    }

    fn drop_sql(&self, _dialect: Dialect) -> Vec<String> {
        vec![DROP_SQL.into()]
    }

    async fn prepare(
        &mut self,
        admin: &mut Session,
        _create: bool,
    ) -> Result<Vec<String>, LoadError> {
        let dialect = admin.dialect();
        let comment = comment_text(self.opts);
        let mysql = dialect == Dialect::MySql;
        let mut sql = vec![create_sql(dialect, self.opts.fieldcount, mysql, &comment)];
        if !mysql {
            sql.push(format!("COMMENT ON TABLE usertable IS '{comment}'"));
        }
        Ok(sql)
    }

    fn rows(&self, dialect: Dialect) -> Data {
        let o = self.opts;
        let source: Arc<dyn RowSource> = Arc::new(Rows { opts: o.clone() });
        let ranges = ranges(o.recordcount, o.jobs);
        let whole = ranges.len() == 1;
        let plan = format!(
            "{} rows in {} {} task(s) over {} connection(s)",
            o.recordcount,
            ranges.len(),
            match (dialect == Dialect::MySql, whole) {
                (true, _) => "multi-row INSERT",
                (false, true) => "COPY FREEZE",
                (false, false) => "COPY",
            },
            o.jobs.min(ranges.len())
        );
        let tasks = (ranges.into_iter())
            .map(|rows| Task {
                slot: 0,
                kind: TaskKind::Copy {
                    relation: "usertable".into(),
                    columns: Some(columns(o.fieldcount)),
                    source: source.clone(),
                    rows,
                    whole,
                },
            })
            .collect();
        Data {
            step: "client-side generate",
            slots: vec![TableProgress {
                table: "usertable".into(),
                rows_done: 0,
                rows_total: o.recordcount,
            }],
            tasks,
            plan,
        }
    }

    /// InnoDB has the key from the CREATE (module header); PostgreSQL builds it now.
    fn finish(&self, dialect: Dialect) -> Vec<After> {
        if dialect == Dialect::MySql {
            return Vec::new();
        }
        let vacuum = match self.opts.no_vacuum {
            true => Vec::new(),
            false => vec!["VACUUM ANALYZE usertable".into()],
        };
        vec![
            After::serial(
                "primary keys",
                vec!["ALTER TABLE usertable ADD PRIMARY KEY (YCSB_KEY)".into()],
            ),
            After::serial("vacuum", vacuum),
        ]
    }
}

/// What a database's `usertable` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub rows: u64,
    /// Columns named FIELD<n>.
    pub fieldcount: u32,
    /// The length of one row's FIELD0 (None in an empty table).
    pub fieldlength: Option<u32>,
    /// The load, when stampede loaded it.
    pub recorded: Option<Recorded>,
}

async fn one(s: &mut Session, sql: &str) -> Result<Option<String>, LoadError> {
    let rows = s
        .simple_query(sql)
        .await
        .map_err(|e| LoadError::db(sql.to_string(), e))?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten()))
}

/// Look at `usertable`: [`LoadError::Missing`] when there is none.
pub async fn inspect(s: &mut Session) -> Result<Loaded, LoadError> {
    let (exists, fields, comment) = match s.dialect() {
        Dialect::Postgres => (
            "SELECT to_regclass('usertable') IS NOT NULL",
            "SELECT count(*) FROM pg_catalog.pg_attribute WHERE attrelid = 'usertable'::regclass \
             AND attnum > 0 AND NOT attisdropped AND attname LIKE 'field%'",
            "SELECT pg_catalog.obj_description('usertable'::regclass, 'pg_class')",
        ),
        Dialect::MySql => (
            "SELECT count(*) > 0 FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'usertable'",
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = DATABASE() \
             AND table_name = 'usertable' AND lower(column_name) LIKE 'field%'",
            "SELECT table_comment FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'usertable'",
        ),
    };
    if !matches!(one(s, exists).await?.as_deref(), Some("t" | "1")) {
        return Err(LoadError::Missing {
            table: "usertable",
            workload: "ycsb",
        });
    }
    let num = |v: Option<String>| v.and_then(|v| v.parse::<u64>().ok());
    let fieldcount = num(one(s, fields).await?).unwrap_or(0) as u32;
    let rows = num(one(s, "SELECT count(*) FROM usertable").await?).unwrap_or(0);
    let fieldlength =
        num(one(s, "SELECT char_length(FIELD0) FROM usertable LIMIT 1").await?).map(|n| n as u32);
    let recorded = one(s, comment).await?.and_then(|c| parse_comment(&c));
    Ok(Loaded {
        rows,
        fieldcount,
        fieldlength,
        recorded,
    })
}

/// The consistency check after a run: rows in the table, and rows whose fields are not all
/// present with `fieldlength` characters.
pub async fn check(
    s: &mut Session,
    fieldcount: u32,
    fieldlength: u32,
) -> Result<(u64, u64), LoadError> {
    let bad: Vec<String> = (0..fieldcount)
        .map(|i| format!("FIELD{i} IS NULL OR char_length(FIELD{i}) <> {fieldlength}"))
        .collect();
    let sql = format!(
        "SELECT count(*), coalesce(sum(CASE WHEN {} THEN 1 ELSE 0 END), 0) FROM usertable",
        bad.join(" OR ")
    );
    let rows = s
        .simple_query(&sql)
        .await
        .map_err(|e| LoadError::db("checking usertable", e))?;
    let get = |i: usize| -> u64 {
        rows.first()
            .and_then(|r| r.get(i).cloned().flatten())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0, |v| v as u64)
    };
    Ok((get(0), get(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_ycsb_s_keys_and_values() {
        let r = Rows {
            opts: InitOptions {
                fieldcount: 3,
                fieldlength: 5,
                ..Default::default()
            },
        };
        let mut out = Vec::new();
        r.write_row(0, &mut out);
        let line = String::from_utf8(out).unwrap();
        let cols: Vec<&str> = line.trim_end().split('\t').collect();
        assert_eq!(cols[0], "user6284781860667377211");
        assert_eq!(cols.len(), 4);
        assert!(cols[1..].iter().all(|c| c.len() == 5));
        let ordered = Rows {
            opts: InitOptions {
                insertorder: InsertOrder::Ordered,
                ..Default::default()
            },
        };
        let mut out = Vec::new();
        ordered.write_row(17, &mut out);
        assert!(out.starts_with(b"user17\t"));
    }

    #[test]
    fn ranges_cover_every_key_once() {
        for (n, jobs) in [(1000, 1), (1000, 4), (1_000_000, 2), (123_457, 3), (1, 8)] {
            let r = ranges(n, jobs);
            assert_eq!(r.first().unwrap().start, 0);
            assert_eq!(r.last().unwrap().end, n);
            assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            if jobs == 1 || n < 2 * MIN_TASK_ROWS {
                assert_eq!(r.len(), 1, "{n} {jobs}");
            }
        }
        assert_eq!(ranges(1_000_000, 2).len(), 8);
    }

    #[test]
    fn the_comment_records_the_load() {
        let o = InitOptions {
            recordcount: 5000,
            fieldlength: 20,
            insertorder: InsertOrder::Ordered,
            seed: 9,
            ..Default::default()
        };
        let c = comment_text(&o);
        assert_eq!(
            parse_comment(&c),
            Some(Recorded {
                recordcount: 5000,
                fieldlength: 20,
                insertorder: InsertOrder::Ordered,
                zeropadding: 1,
                seed: 9
            })
        );
        assert_eq!(parse_comment("loaded by YCSB"), None);
        let ddl = create_sql(Dialect::MySql, 2, true, &c);
        assert_eq!(
            ddl,
            format!(
                "CREATE TABLE usertable (YCSB_KEY VARCHAR(255) PRIMARY KEY, FIELD0 TEXT, \
                 FIELD1 TEXT) ENGINE=InnoDB COMMENT='{c}'"
            )
        );
    }
}
