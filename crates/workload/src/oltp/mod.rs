//! sysbench's OLTP workloads (`oltp_common.lua` and the scripts that include it, sysbench 1.0.20):
//! `oltp_read_write`, `oltp_read_only`, `oltp_write_only`, `oltp_point_select`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete` — the same
//! statements on the same `sbtestN` tables, the same option names and defaults, the same order of
//! random draws, the same transaction boundaries. `bulk_insert.lua`, which shares only the table
//! names, is [`bulk`].
//!
//! Owns: the statement texts (`stmt_defs` in oltp_common.lua, `?` written as `$n`), the event of
//! each script (its `event()` function), the per-transaction query counts in sysbench's
//! vocabulary (reads / writes / other), and which errors sysbench ignores. Not owned: time,
//! retries (the engine), the tables (`load::oltp`).
//!
//! ## Statements (oltp_common.lua `stmt_defs`), prepared per table on connect
//! ```text
//! point_selects      SELECT c FROM sbtest%u WHERE id=?
//! simple_ranges      SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?
//! sum_ranges         SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?
//! order_ranges       SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c
//! distinct_ranges    SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c
//! index_updates      UPDATE sbtest%u SET k=k+1 WHERE id=?
//! non_index_updates  UPDATE sbtest%u SET c=? WHERE id=?
//! deletes            DELETE FROM sbtest%u WHERE id=?
//! inserts            INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)
//! ```
//! plus `BEGIN` and `COMMIT` (prepared too, as sysbench's `con:prepare("BEGIN")`).
//! `oltp_insert` sends `INSERT INTO sbtestN (k, c, pad) VALUES (...)` (pgsql with `--auto-inc`,
//! the default) or `INSERT INTO sbtestN (id, k, c, pad) VALUES (...)` with
//! `sysbench.rand.unique() - 2147483648` as id; sysbench interpolates the values into a
//! simple query there (`con:query`, not a prepared statement), and so does stampede, in every
//! `-M` mode: the server then counts the same statements (MySQL's `Com_stmt_execute` does not
//! move for it; the MySQL test compares the Com_* counters of both tools). On MySQL sysbench
//! writes `id` 0 for AUTO_INCREMENT to fill; `(k, c, pad)` has the same effect.
//!
//! ## Random draws (order as in the Lua, so a trace reads the same)
//! Each group (`execute_point_selects`, `execute_range(key)`, ...) draws its table with
//! `sysbench.rand.uniform(1, tables)` once, then per query `get_id()` =
//! `sysbench.rand.default(1, table_size)` (the `--rand-type` distribution); ranges are
//! `[id, id + range_size - 1]`; `execute_delete_inserts` draws id, then k, then c, then pad.
//!
//! ## Errors sysbench ignores
//! sysbench's pgsql driver (`drv_pgsql.c`) treats 40P01, 23505 and 40001 as ignorable: it rolls
//! back and restarts the event, counting an "ignored error". 23505 comes from `delete_inserts`
//! under concurrency (two clients delete the same id, both insert it). Here [`Workload::classify`]
//! maps 23505 to a retryable class, so the engine rolls back and retries the transaction (with
//! the same random values, which then succeed: the retry's DELETE sees the other client's row).
//! Retries are counted by the engine; sysbench's "ignored errors" is the retry count.

pub mod bulk;
pub mod rand;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use sut::{Error, ErrorClass, QueryMode, Session, StmtId, Value};

use crate::{ClientWorkload, Rng, TxnContext, TxnType, Workload};
pub use bulk::BulkInsert;
pub use rand::{Dist, RandType};

/// sysbench's `c` template (oltp_common.lua `c_value_template`: 10 groups, 119 characters).
pub const C_TEMPLATE: &str = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// sysbench's `pad` template (5 groups, 59 characters).
pub const PAD_TEMPLATE: &str = "###########-###########-###########-###########-###########";

/// A sysbench test script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Test {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    UpdateIndex,
    UpdateNonIndex,
    Insert,
    Delete,
}

impl Test {
    pub const ALL: [Test; 8] = [
        Test::ReadWrite,
        Test::ReadOnly,
        Test::WriteOnly,
        Test::PointSelect,
        Test::UpdateIndex,
        Test::UpdateNonIndex,
        Test::Insert,
        Test::Delete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::ReadWrite => "oltp_read_write",
            Test::ReadOnly => "oltp_read_only",
            Test::WriteOnly => "oltp_write_only",
            Test::PointSelect => "oltp_point_select",
            Test::UpdateIndex => "oltp_update_index",
            Test::UpdateNonIndex => "oltp_update_non_index",
            Test::Insert => "oltp_insert",
            Test::Delete => "oltp_delete",
        }
    }

    pub fn from_name(s: &str) -> Option<Test> {
        let s = s.strip_suffix(".lua").unwrap_or(s);
        Test::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// oltp_common.lua's options, with sysbench's defaults.
#[derive(Clone, Debug)]
pub struct Options {
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub dist: Dist,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            dist: Dist::default(),
        }
    }
}

/// Statement kinds (`stmt_defs` keys), plus the transaction bounds and oltp_insert's insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
enum Kind {
    PointSelect = 0,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    InsertAuto,
    InsertUnique,
}

const N_KINDS: usize = 11;

impl Kind {
    fn sql(self, t: u32) -> String {
        match self {
            Kind::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=$1"),
            Kind::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN $1 AND $2"),
            Kind::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN $1 AND $2"),
            Kind::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN $1 AND $2 ORDER BY c")
            }
            Kind::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN $1 AND $2 ORDER BY c")
            }
            Kind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=$1"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=$1 WHERE id=$2"),
            Kind::Delete => format!("DELETE FROM sbtest{t} WHERE id=$1"),
            Kind::Insert => {
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES ($1, $2, $3, $4)")
            }
            Kind::InsertAuto => format!("INSERT INTO sbtest{t} (k, c, pad) VALUES ($1, $2, $3)"),
            Kind::InsertUnique => {
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES ($1, $2, $3, $4)")
            }
        }
    }

    /// The statement as sysbench writes it (`%u` and `?`), for listings.
    fn sysbench_text(self) -> &'static str {
        match self {
            Kind::PointSelect => "SELECT c FROM sbtest%u WHERE id=?",
            Kind::SimpleRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
            Kind::SumRange => "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
            Kind::OrderRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            Kind::DistinctRange => {
                "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c"
            }
            Kind::IndexUpdate => "UPDATE sbtest%u SET k=k+1 WHERE id=?",
            Kind::NonIndexUpdate => "UPDATE sbtest%u SET c=? WHERE id=?",
            Kind::Delete => "DELETE FROM sbtest%u WHERE id=?",
            Kind::Insert | Kind::InsertUnique => {
                "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)"
            }
            Kind::InsertAuto => "INSERT INTO sbtest%u (k, c, pad) VALUES (?, ?, ?)",
        }
    }
}

/// One step of an event: a group of `count` queries of `kind` on one table drawn for the group.
#[derive(Clone, Copy, Debug)]
struct Group {
    kind: Kind,
    count: u32,
}

/// Queries per transaction in sysbench's vocabulary (its "SQL statistics").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCounts {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
}

impl QueryCounts {
    pub fn total(&self) -> u64 {
        self.reads + self.writes + self.other
    }
}

/// A sysbench OLTP test with its options.
#[derive(Debug)]
pub struct OltpWorkload {
    test: Test,
    opts: Options,
    groups: Arc<Vec<Group>>,
    trx: bool,
    types: Vec<TxnType>,
    /// sysbench.rand.unique()'s shared index, for oltp_insert --auto-inc=off.
    unique_index: Arc<AtomicU32>,
    unique_offset: u32,
}

impl OltpWorkload {
    pub fn new(test: Test, opts: Options) -> Result<OltpWorkload, String> {
        if opts.tables == 0 {
            return Err("--tables must be at least 1".into());
        }
        if opts.table_size == 0 && !matches!(test, Test::Insert) {
            return Err(format!(
                "--table-size must be at least 1 for {}",
                test.name()
            ));
        }
        let o = &opts;
        let g = |kind, count| Group { kind, count };
        let ranges = |v: &mut Vec<Group>| {
            if o.range_selects {
                v.push(g(Kind::SimpleRange, o.simple_ranges));
                v.push(g(Kind::SumRange, o.sum_ranges));
                v.push(g(Kind::OrderRange, o.order_ranges));
                v.push(g(Kind::DistinctRange, o.distinct_ranges));
            }
        };
        let writes = |v: &mut Vec<Group>| {
            v.push(g(Kind::IndexUpdate, o.index_updates));
            v.push(g(Kind::NonIndexUpdate, o.non_index_updates));
            // delete_inserts: one group of DELETE+INSERT pairs; `Delete` stands for the pair.
            v.push(g(Kind::Insert, o.delete_inserts));
        };
        let mut groups = Vec::new();
        let trx = match test {
            Test::ReadWrite => {
                groups.push(g(Kind::PointSelect, o.point_selects));
                ranges(&mut groups);
                writes(&mut groups);
                !o.skip_trx
            }
            Test::ReadOnly => {
                groups.push(g(Kind::PointSelect, o.point_selects));
                ranges(&mut groups);
                !o.skip_trx
            }
            Test::WriteOnly => {
                writes(&mut groups);
                !o.skip_trx
            }
            // oltp_point_select.lua: "use 1 query per event".
            Test::PointSelect => {
                groups.push(g(Kind::PointSelect, 1));
                false
            }
            Test::UpdateIndex => {
                groups.push(g(Kind::IndexUpdate, o.index_updates));
                false
            }
            Test::UpdateNonIndex => {
                groups.push(g(Kind::NonIndexUpdate, o.non_index_updates));
                false
            }
            Test::Insert => {
                groups.push(g(
                    if o.auto_inc {
                        Kind::InsertAuto
                    } else {
                        Kind::InsertUnique
                    },
                    1,
                ));
                false
            }
            Test::Delete => {
                groups.push(g(Kind::Delete, 1));
                false
            }
        };
        let mut statements = Vec::new();
        if trx {
            statements.push("BEGIN".to_string());
        }
        for gr in &groups {
            if gr.count == 0 {
                continue;
            }
            if gr.kind == Kind::Insert {
                statements.push(Kind::Delete.sysbench_text().to_string());
            }
            statements.push(gr.kind.sysbench_text().to_string());
        }
        if trx {
            statements.push("COMMIT".to_string());
        }
        let types = vec![TxnType {
            name: format!("<sysbench: {}>", test.name()),
            statements,
        }];
        Ok(OltpWorkload {
            test,
            opts,
            groups: Arc::new(groups),
            trx,
            types,
            unique_index: Arc::new(AtomicU32::new(rand::unique_permute(
                rand::unique_permute(0x1234_5678).wrapping_add(0x682f_0161),
            ))),
            unique_offset: rand::unique_permute(
                rand::unique_permute(0x0bad_cafe).wrapping_add(0x4679_0905),
            ),
        })
    }

    pub fn test(&self) -> Test {
        self.test
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Queries per transaction, sysbench's way: reads are SELECTs, writes UPDATE/DELETE/INSERT,
    /// other BEGIN/COMMIT.
    pub fn query_counts(&self) -> QueryCounts {
        let mut q = QueryCounts::default();
        for g in self.groups.iter() {
            let n = g.count as u64;
            match g.kind {
                Kind::PointSelect
                | Kind::SimpleRange
                | Kind::SumRange
                | Kind::OrderRange
                | Kind::DistinctRange => q.reads += n,
                Kind::Insert => q.writes += 2 * n,
                _ => q.writes += n,
            }
        }
        if self.trx {
            q.other = 2;
        }
        q
    }

    /// One transaction's statements for the statement ledger: (kind, statements, the rows each
    /// changes). A key's update or delete changes 0 or 1 row (a concurrent delete+insert, or
    /// oltp_delete, may have removed it); a delete+insert pair is one of each.
    pub fn ledger_mix(&self) -> Vec<(measure::ledger::Kind, u64, Option<measure::ledger::Bounds>)> {
        use measure::ledger::{Bounds, Kind as L};
        let maybe = Some(Bounds { min: 0, max: 1 });
        let one = Some(Bounds::exact(1));
        let mut mix = Vec::new();
        for g in self.groups.iter() {
            let n = u64::from(g.count);
            match g.kind {
                Kind::PointSelect
                | Kind::SimpleRange
                | Kind::SumRange
                | Kind::OrderRange
                | Kind::DistinctRange => mix.push((L::Select, n, None)),
                Kind::IndexUpdate | Kind::NonIndexUpdate => mix.push((L::Update, n, maybe)),
                Kind::Delete => mix.push((L::Delete, n, maybe)),
                Kind::Insert => {
                    mix.push((L::Delete, n, maybe));
                    mix.push((L::Insert, n, one));
                }
                Kind::InsertAuto | Kind::InsertUnique => mix.push((L::Insert, n, one)),
            }
        }
        mix
    }

    /// Net rows added per committed transaction (`oltp_insert`: +1, `oltp_delete`: -1 when the
    /// row existed, delete+insert pairs: 0), for the row-count check after a run.
    pub fn inserts_per_txn(&self) -> u64 {
        u64::from(self.test == Test::Insert)
    }
}

impl Workload for OltpWorkload {
    type Client = OltpClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, _client_id: u32) -> OltpClient {
        OltpClient {
            groups: self.groups.clone(),
            opts: self.opts.clone(),
            trx: self.trx,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            unique_index: self.unique_index.clone(),
            unique_offset: self.unique_offset,
        }
    }

    /// The test's one transaction only reads when every statement group is a SELECT
    /// (oltp_read_only, oltp_point_select; with `--range-selects=off` and the writes off, too).
    fn read_only(&self, _txn: usize) -> bool {
        self.groups.iter().all(|g| {
            matches!(
                g.kind,
                Kind::PointSelect
                    | Kind::SimpleRange
                    | Kind::SumRange
                    | Kind::OrderRange
                    | Kind::DistinctRange
            )
        })
    }

    /// sysbench's pgsql driver ignores (restarts the event on) 40P01, 40001 and 23505: 23505 is
    /// made retryable here (module header).
    fn classify(&self, e: &Error) -> ErrorClass {
        match e.sqlstate() {
            Some("23505") => ErrorClass::Serialization,
            _ => sut::classify(e),
        }
    }
}

/// One client: its prepared statements (per table, per kind) and buffers.
pub struct OltpClient {
    groups: Arc<Vec<Group>>,
    opts: Options,
    trx: bool,
    /// `stmts[table - 1][kind]`.
    stmts: Vec<[Option<StmtId>; N_KINDS]>,
    begin: Option<StmtId>,
    commit: Option<StmtId>,
    c: String,
    pad: String,
    unique_index: Arc<AtomicU32>,
    unique_offset: u32,
}

impl OltpClient {
    fn stmt(&self, t: u32, k: Kind) -> StmtId {
        self.stmts[(t - 1) as usize][k as usize].expect("registered on connect")
    }

    fn get_id(&self, r: &mut Rng) -> u32 {
        self.opts.dist.draw(r, 1, self.opts.table_size.max(1))
    }
}

async fn run(
    session: &mut Session,
    cx: &mut TxnContext<'_>,
    idx: &mut usize,
    id: StmtId,
    params: &[Value<'_>],
) -> Result<(), Error> {
    cx.timer.start();
    let r = session.execute(id, params).await;
    cx.timer.end(*idx, r.is_ok());
    r?;
    Ok(())
}

impl ClientWorkload for OltpClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        self.stmts = vec![[None; N_KINDS]; self.opts.tables as usize];
        if self.trx {
            self.begin = Some(session.register("BEGIN", mode));
            self.commit = Some(session.register("COMMIT", mode));
        }
        let groups = self.groups.clone();
        for t in 1..=self.opts.tables {
            for g in groups.iter() {
                let mut kinds = vec![g.kind];
                if g.kind == Kind::Insert {
                    kinds.push(Kind::Delete);
                }
                for k in kinds {
                    let slot = &mut self.stmts[(t - 1) as usize][k as usize];
                    if slot.is_none() {
                        // oltp_insert's INSERT is a plain query in sysbench (module header).
                        let m = match k {
                            Kind::InsertAuto | Kind::InsertUnique => QueryMode::Simple,
                            _ => mode,
                        };
                        *slot = Some(session.register(&k.sql(t), m));
                    }
                }
            }
        }
        crate::prepare_registered(session, mode).await
    }

    async fn execute(
        &mut self,
        _txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let mut idx = 0usize;
        if let Some(b) = self.begin {
            run(session, cx, &mut idx, b, &[]).await?;
            idx += 1;
        }
        let groups = self.groups.clone();
        let tables = self.opts.tables;
        let range = self.opts.range_size as i64;
        for g in groups.iter() {
            if g.count == 0 {
                continue;
            }
            // get_table_num(): sysbench.rand.uniform(1, tables), once per group.
            let t = rand::uniform(cx.rng, 1, tables);
            match g.kind {
                Kind::PointSelect | Kind::IndexUpdate | Kind::Delete => {
                    let s = self.stmt(t, g.kind);
                    for _ in 0..g.count {
                        let id = self.get_id(cx.rng) as i64;
                        run(session, cx, &mut idx, s, &[Value::Int(id)]).await?;
                    }
                    idx += 1;
                }
                Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                    let s = self.stmt(t, g.kind);
                    for _ in 0..g.count {
                        let id = self.get_id(cx.rng) as i64;
                        let p = [Value::Int(id), Value::Int(id + range - 1)];
                        run(session, cx, &mut idx, s, &p).await?;
                    }
                    idx += 1;
                }
                Kind::NonIndexUpdate => {
                    let s = self.stmt(t, g.kind);
                    for _ in 0..g.count {
                        // param 1 (c) is set before param 2 (id) in the Lua.
                        rand::fill_template(cx.rng, C_TEMPLATE, &mut self.c);
                        let id = self.get_id(cx.rng) as i64;
                        let p = [Value::Text(&self.c), Value::Int(id)];
                        run(session, cx, &mut idx, s, &p).await?;
                    }
                    idx += 1;
                }
                Kind::Insert => {
                    let del = self.stmt(t, Kind::Delete);
                    let ins = self.stmt(t, Kind::Insert);
                    for _ in 0..g.count {
                        let id = self.get_id(cx.rng) as i64;
                        let k = self.get_id(cx.rng) as i64;
                        rand::fill_template(cx.rng, C_TEMPLATE, &mut self.c);
                        rand::fill_template(cx.rng, PAD_TEMPLATE, &mut self.pad);
                        run(session, cx, &mut idx, del, &[Value::Int(id)]).await?;
                        idx += 1;
                        let p = [
                            Value::Int(id),
                            Value::Int(k),
                            Value::Text(&self.c),
                            Value::Text(&self.pad),
                        ];
                        run(session, cx, &mut idx, ins, &p).await?;
                        idx -= 1;
                    }
                    idx += 2;
                }
                Kind::InsertAuto | Kind::InsertUnique => {
                    // oltp_insert.lua: table, k, c, pad (then the unique id).
                    let s = self.stmt(t, g.kind);
                    let k = self.get_id(cx.rng) as i64;
                    rand::fill_template(cx.rng, C_TEMPLATE, &mut self.c);
                    rand::fill_template(cx.rng, PAD_TEMPLATE, &mut self.pad);
                    if g.kind == Kind::InsertAuto {
                        let p = [Value::Int(k), Value::Text(&self.c), Value::Text(&self.pad)];
                        run(session, cx, &mut idx, s, &p).await?;
                    } else {
                        let i = self.unique_index.fetch_add(1, Ordering::Relaxed);
                        let id = rand::unique(i, self.unique_offset) as i64 - 2_147_483_648;
                        let p = [
                            Value::Int(id),
                            Value::Int(k),
                            Value::Text(&self.c),
                            Value::Text(&self.pad),
                        ];
                        run(session, cx, &mut idx, s, &p).await?;
                    }
                    idx += 1;
                }
            }
        }
        if let Some(c) = self.commit {
            run(session, cx, &mut idx, c, &[]).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements of sysbench 1.0.20's oltp_common.lua `stmt_defs`, verbatim.
    #[test]
    fn statements_are_sysbench_s() {
        let w = OltpWorkload::new(Test::ReadWrite, Options::default()).unwrap();
        assert_eq!(
            w.txn_types()[0].statements,
            vec![
                "BEGIN",
                "SELECT c FROM sbtest%u WHERE id=?",
                "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
                "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
                "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
                "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
                "UPDATE sbtest%u SET k=k+1 WHERE id=?",
                "UPDATE sbtest%u SET c=? WHERE id=?",
                "DELETE FROM sbtest%u WHERE id=?",
                "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
                "COMMIT",
            ]
        );
        assert_eq!(
            Kind::PointSelect.sql(3),
            "SELECT c FROM sbtest3 WHERE id=$1"
        );
        assert_eq!(
            Kind::Insert.sql(2),
            "INSERT INTO sbtest2 (id, k, c, pad) VALUES ($1, $2, $3, $4)"
        );
    }

    #[test]
    fn query_counts_match_sysbench_at_defaults() {
        let c = |t, o| OltpWorkload::new(t, o).unwrap().query_counts();
        let d = Options::default;
        // oltp_read_write: 14 reads, 4 writes, 2 other per transaction (sysbench's summary).
        assert_eq!(
            c(Test::ReadWrite, d()),
            QueryCounts {
                reads: 14,
                writes: 4,
                other: 2
            }
        );
        assert_eq!(c(Test::ReadOnly, d()).total(), 16);
        assert_eq!(c(Test::WriteOnly, d()).total(), 6);
        assert_eq!(c(Test::PointSelect, d()).total(), 1);
        assert_eq!(c(Test::Insert, d()).writes, 1);
        // Seed 004's write-only variant of oltp.lua, expressed with the 1.0 options.
        let seed004 = Options {
            point_selects: 0,
            simple_ranges: 0,
            sum_ranges: 0,
            order_ranges: 0,
            distinct_ranges: 0,
            ..d()
        };
        assert_eq!(
            c(Test::ReadWrite, seed004),
            QueryCounts {
                reads: 0,
                writes: 4,
                other: 2
            }
        );
        let skip = Options {
            skip_trx: true,
            range_selects: false,
            ..d()
        };
        assert_eq!(c(Test::ReadWrite, skip).total(), 14);
    }

    #[test]
    fn names_resolve() {
        for t in Test::ALL {
            assert_eq!(Test::from_name(t.name()), Some(t));
        }
        assert_eq!(
            Test::from_name("oltp_read_write.lua"),
            Some(Test::ReadWrite)
        );
        assert_eq!(Test::from_name("oltp_nope"), None);
    }

    #[test]
    fn duplicate_key_is_retryable() {
        let w = OltpWorkload::new(Test::WriteOnly, Options::default()).unwrap();
        let db = |code: &str| {
            Error::Db(Box::new(sut::DbError {
                severity: "ERROR".into(),
                code: code.into(),
                message: "m".into(),
                ..Default::default()
            }))
        };
        assert_eq!(w.classify(&db("23505")), ErrorClass::Serialization);
        assert_eq!(w.classify(&db("40P01")), ErrorClass::Deadlock);
        assert_eq!(w.classify(&db("42P01")), ErrorClass::Other);
    }
}
