//! The CRUD mix (seed 001's own stress tool): over N tables, point reads by primary key, reads
//! by a secondary index (exact match), range reads, IN-list reads, single and batched inserts,
//! batched updates and batched deletes, in a configurable mix. Each operation is a transaction
//! type of its own, so every result breaks down by operation.
//!
//! Tables `crud1..crudN`: `id` (auto-increment primary key), `k` (secondary index `crudN_k`),
//! `c` (text), created and loaded with ids `1..=rows` and `k` drawn uniformly from the same
//! range. Each operation picks a table uniformly and is one autocommitted statement (one
//! statement, one commit: what it changed is committed exactly when it succeeds), so the rows
//! each committed operation added or removed are counted in [`Counters`], by table, and the
//! check after the run holds the counting identity
//! `rows after = rows before + inserted - deleted` for every table.
//!
//! Keys: reads, updates and deletes draw ids uniformly in `1..=rows` (the initial size):
//! deleted ids read nothing, and the rows inserted during the run (ids past `rows`) are left
//! to grow the tables.

pub mod mix;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sut::{Dialect, Error, QueryMode, Session, StmtId, Value};

pub use mix::{Mix, Op};

use workload::{ClientWorkload, Rng, TxnContext, TxnType, Workload};

/// The tables' comment: how stampede recognises a table of its own (it drops no other).
pub const MARK: &str = "created by stampede crud";
/// Rows of a range read.
pub const RANGE_ROWS: i64 = 100;

pub fn table(t: u32) -> String {
    format!("crud{t}")
}

pub fn index(t: u32) -> String {
    format!("crud{t}_k")
}

/// The statements that create table `t`.
pub fn create_sql(dialect: Dialect, t: u32) -> Vec<String> {
    let (tb, ix) = (table(t), index(t));
    match dialect {
        Dialect::Postgres => vec![
            format!(
                "CREATE TABLE {tb} (id bigserial PRIMARY KEY, k integer NOT NULL, \
                 c varchar(120) NOT NULL)"
            ),
            format!("CREATE INDEX {ix} ON {tb} (k)"),
            format!("COMMENT ON TABLE {tb} IS '{MARK}'"),
        ],
        Dialect::MySql => vec![format!(
            "CREATE TABLE {tb} (id BIGINT NOT NULL AUTO_INCREMENT, k INT NOT NULL, \
             c VARCHAR(120) NOT NULL, PRIMARY KEY (id), KEY {ix} (k)) ENGINE=InnoDB \
             COMMENT='{MARK}'"
        )],
    }
}

/// Rows `first..=last` of a table of `rows` rows, as one multi-row INSERT with literal values
/// (`k` from the table's own stream, so the load is the same for a seed whatever the batches).
pub fn load_sql(t: u32, first: u64, last: u64, rows: u64, rng: &mut Rng) -> String {
    let mut s = format!("INSERT INTO {} (id, k, c) VALUES ", table(t));
    for id in first..=last {
        if id > first {
            s.push(',');
        }
        let k = rng.range(1, rows as i64);
        s.push_str(&format!("({id},{k},'row {id} of {rows}')"));
    }
    s
}

/// After loading explicit ids, the next id the table hands out (PostgreSQL's sequence; MySQL's
/// AUTO_INCREMENT follows the largest id by itself).
pub fn after_load_sql(dialect: Dialect, t: u32, rows: u64) -> Option<String> {
    (dialect == Dialect::Postgres && rows > 0).then(|| {
        format!(
            "SELECT setval(pg_get_serial_sequence('{}', 'id'), {rows})",
            table(t)
        )
    })
}

/// What the committed operations changed, by table (index `t - 1`).
#[derive(Debug)]
pub struct Counters {
    pub inserted: Vec<AtomicU64>,
    pub deleted: Vec<AtomicU64>,
}

impl Counters {
    fn new(tables: u32) -> Counters {
        let z = || (0..tables).map(|_| AtomicU64::new(0)).collect();
        Counters {
            inserted: z(),
            deleted: z(),
        }
    }

    pub fn inserted(&self, t: u32) -> u64 {
        self.inserted[(t - 1) as usize].load(Ordering::Relaxed)
    }

    pub fn deleted(&self, t: u32) -> u64 {
        self.deleted[(t - 1) as usize].load(Ordering::Relaxed)
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub tables: u32,
    /// Rows each table was loaded with: the range of the ids drawn.
    pub rows: u64,
    /// Rows of each batched operation (IN-list, batch insert, update, delete).
    pub batch: u32,
}

/// The SQL of operation `op` on table `t`.
pub fn sql(dialect: Dialect, op: Op, t: u32, batch: u32) -> String {
    let tb = table(t);
    let p = |i: u32| match dialect {
        Dialect::Postgres => format!("${i}"),
        Dialect::MySql => "?".to_string(),
    };
    let list = |from: u32, n: u32| (from..from + n).map(p).collect::<Vec<_>>().join(", ");
    match op {
        Op::Point => format!("SELECT id, k, c FROM {tb} WHERE id = {}", p(1)),
        Op::Index => format!("SELECT id, k, c FROM {tb} WHERE k = {}", p(1)),
        Op::Range => format!(
            "SELECT id, k, c FROM {tb} WHERE id BETWEEN {} AND {}",
            p(1),
            p(2)
        ),
        Op::In => format!("SELECT id, k, c FROM {tb} WHERE id IN ({})", list(1, batch)),
        Op::Insert => format!("INSERT INTO {tb} (k, c) VALUES ({}, {})", p(1), p(2)),
        Op::BatchInsert => {
            let rows: Vec<String> = (0..batch)
                .map(|r| format!("({}, {})", p(2 * r + 1), p(2 * r + 2)))
                .collect();
            format!("INSERT INTO {tb} (k, c) VALUES {}", rows.join(", "))
        }
        Op::Update => format!(
            "UPDATE {tb} SET c = {} WHERE id IN ({})",
            p(1),
            list(2, batch)
        ),
        Op::Delete => format!("DELETE FROM {tb} WHERE id IN ({})", list(1, batch)),
    }
}

pub struct Crud {
    dialect: Dialect,
    opts: Options,
    types: Vec<TxnType>,
    counters: Arc<Counters>,
}

impl Crud {
    pub fn new(dialect: Dialect, opts: Options) -> Result<Crud, String> {
        if opts.tables == 0 {
            return Err("--tables must be at least 1".into());
        }
        if opts.rows == 0 {
            return Err("--table-size must be at least 1".into());
        }
        if opts.batch == 0 {
            return Err("--batch must be at least 1".into());
        }
        let types = Op::ALL
            .iter()
            .map(|&op| TxnType {
                name: op.name().into(),
                statements: vec![sql(dialect, op, 1, opts.batch).replace("crud1", "crudN")],
            })
            .collect();
        Ok(Crud {
            dialect,
            counters: Arc::new(Counters::new(opts.tables)),
            opts,
            types,
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }
}

impl Workload for Crud {
    type Client = CrudClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, _client_id: u32) -> CrudClient {
        CrudClient {
            dialect: self.dialect,
            opts: self.opts.clone(),
            counters: self.counters.clone(),
            stmts: Vec::new(),
            texts: Vec::new(),
        }
    }

    fn read_only(&self, txn: usize) -> bool {
        Op::ALL.get(txn).is_some_and(|op| op.reads())
    }
}

pub struct CrudClient {
    dialect: Dialect,
    opts: Options,
    counters: Arc<Counters>,
    /// By table, then by operation (`Op::ALL` order).
    stmts: Vec<Vec<StmtId>>,
    texts: Vec<String>,
}

impl ClientWorkload for CrudClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        self.stmts.clear();
        for t in 1..=self.opts.tables {
            let ids = Op::ALL
                .iter()
                .map(|&op| session.register(&sql(self.dialect, op, t, self.opts.batch), mode))
                .collect();
            self.stmts.push(ids);
        }
        workload::prepare_registered(session, mode).await
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let op = Op::ALL[txn];
        let rng = &mut *cx.rng;
        let t = rng.range(1, self.opts.tables as i64) as u32;
        let stmt = self.stmts[(t - 1) as usize][txn];
        let rows = self.opts.rows as i64;
        let batch = self.opts.batch;
        let id = |rng: &mut Rng| Value::Int(rng.range(1, rows));
        let mut params: Vec<Value<'_>> = Vec::new();
        self.texts.clear();
        match op {
            Op::Point | Op::Index => params.push(id(rng)),
            Op::Range => {
                let lo = rng.range(1, rows);
                params.extend([Value::Int(lo), Value::Int(lo + RANGE_ROWS - 1)]);
            }
            Op::In | Op::Delete => params.extend((0..batch).map(|_| id(rng))),
            Op::Insert | Op::BatchInsert => {
                let n = if op == Op::Insert { 1 } else { batch };
                let ks: Vec<i64> = (0..n).map(|_| rng.range(1, rows)).collect();
                for k in &ks {
                    self.texts.push(format!("inserted, k {k}"));
                }
                for (k, c) in ks.iter().zip(&self.texts) {
                    params.extend([Value::Int(*k), Value::Text(c)]);
                }
            }
            Op::Update => {
                self.texts
                    .push(format!("updated {}", rng.range(0, 1 << 30)));
                params.push(Value::Text(&self.texts[0]));
                params.extend((0..batch).map(|_| id(rng)));
            }
        }
        cx.timer.start();
        let r = session.execute(stmt, &params).await;
        cx.timer.end(0, r.is_ok());
        let r = r?;
        // Committed (autocommit): count what it changed.
        let i = (t - 1) as usize;
        match op {
            Op::Insert | Op::BatchInsert => {
                self.counters.inserted[i].fetch_add(r.affected, Ordering::Relaxed);
            }
            Op::Delete => {
                self.counters.deleted[i].fetch_add(r.affected, Ordering::Relaxed);
            }
            _ => {}
        }
        Ok(())
    }

    fn failed_command(&self) -> Option<usize> {
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_operation_s_sql_in_both_dialects() {
        let pg = |op| sql(Dialect::Postgres, op, 2, 3);
        assert_eq!(pg(Op::Point), "SELECT id, k, c FROM crud2 WHERE id = $1");
        assert_eq!(pg(Op::Index), "SELECT id, k, c FROM crud2 WHERE k = $1");
        assert_eq!(
            pg(Op::In),
            "SELECT id, k, c FROM crud2 WHERE id IN ($1, $2, $3)"
        );
        assert_eq!(
            pg(Op::BatchInsert),
            "INSERT INTO crud2 (k, c) VALUES ($1, $2), ($3, $4), ($5, $6)"
        );
        assert_eq!(
            pg(Op::Update),
            "UPDATE crud2 SET c = $1 WHERE id IN ($2, $3, $4)"
        );
        assert_eq!(pg(Op::Delete), "DELETE FROM crud2 WHERE id IN ($1, $2, $3)");
        let my = sql(Dialect::MySql, Op::Range, 1, 3);
        assert_eq!(my, "SELECT id, k, c FROM crud1 WHERE id BETWEEN ? AND ?");
        assert!(create_sql(Dialect::MySql, 4)[0].contains("KEY crud4_k (k)"));
        assert!(create_sql(Dialect::Postgres, 4).join(";").contains(MARK));
    }

    #[test]
    fn the_load_is_a_function_of_the_stream_and_numbers_its_ids() {
        let a = load_sql(1, 1, 3, 10, &mut Rng::from_seed(5));
        assert_eq!(a, load_sql(1, 1, 3, 10, &mut Rng::from_seed(5)));
        assert!(
            a.starts_with("INSERT INTO crud1 (id, k, c) VALUES (1,"),
            "{a}"
        );
        assert_eq!(a.matches("of 10')").count(), 3);
    }
}
