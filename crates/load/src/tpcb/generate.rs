//! Data generation: pgbench's rows (pgbench.c `initBranch`, `initTeller`, `initAccount`) as
//! [`RowSource`]s, the per-table progress slots, and the task lists of the two loading plans
//! (client-side COPY, server-side `INSERT ... SELECT generate_series`) described in the module
//! header of `tpcb`.

use std::ops::Range;
use std::sync::Arc;

use super::{
    range_partition_rows, InitOptions, PartitionMethod, NACCOUNTS, NBRANCHES, NTELLERS, TABLES,
};
use crate::driver::{RowSource, Task, TaskKind};
use crate::{split_range, Part, TableProgress};

// ----- rows (pgbench.c initBranch, initTeller, initAccount) -----

fn put_int(out: &mut Vec<u8>, v: u64) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(v).as_bytes());
}

/// `bid \t 0 \t \N` (filler NULL).
pub struct Branches;
impl RowSource for Branches {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        put_int(out, row + 1);
        out.extend_from_slice(b"\t0\t\\N\n");
    }
}

/// `id \t bid \t 0 \t filler`: row `row` of a table of `per_branch` rows per branch (a teller
/// or an account), its balance 0; `tail` is the balance and filler.
fn put_member(out: &mut Vec<u8>, row: u64, per_branch: u64, tail: &[u8]) {
    put_int(out, row + 1);
    out.push(b'\t');
    put_int(out, row / per_branch + 1);
    out.extend_from_slice(tail);
}

/// `tid \t bid \t 0 \t \N` with bid = row / 10 + 1 (filler NULL).
pub struct Tellers;
impl RowSource for Tellers {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        put_member(out, row, NTELLERS, b"\t0\t\\N\n");
    }
}

/// `aid \t bid \t 0 \t` with bid = row / 100000 + 1 (filler '': blank-padded by char(84)).
pub struct Accounts;
impl RowSource for Accounts {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        put_member(out, row, NACCOUNTS, b"\t0\t\n");
    }
}

const SLOT_BRANCHES: usize = 0;
const SLOT_TELLERS: usize = 1;
const SLOT_ACCOUNTS: usize = 2;

pub(super) fn slots(opts: &InitOptions) -> Vec<TableProgress> {
    let s = opts.scale as u64;
    // A fleet's part: its accounts; the branches and tellers are the first process's.
    let first = Part::is_first(opts.part);
    let accounts = opts.accounts().end - opts.accounts().start;
    [
        ("pgbench_branches", if first { NBRANCHES * s } else { 0 }),
        ("pgbench_tellers", if first { NTELLERS * s } else { 0 }),
        ("pgbench_accounts", accounts),
    ]
    .into_iter()
    .map(|(t, n)| TableProgress {
        table: t.into(),
        rows_done: 0,
        rows_total: n,
    })
    .collect()
}

/// The client-side task list and the plan in words. Largest tasks first. A fleet's part
/// (`opts.part`) loads its range of accounts, never with FREEZE unless a range partition lies
/// wholly inside it (no other process writes that leaf); the first part also loads the
/// branches and tellers.
pub fn client_side_tasks(opts: &InitOptions) -> (Vec<Task>, String) {
    let total = opts.total_accounts();
    let mine = opts.accounts();
    let split = opts.part.is_some();
    let s = opts.scale as u64;
    let accounts: Arc<dyn RowSource> = Arc::new(Accounts);
    let copy = |relation: String, rows: Range<u64>, whole: bool| Task {
        slot: SLOT_ACCOUNTS,
        kind: TaskKind::Copy {
            relation,
            columns: None,
            source: accounts.clone(),
            rows,
            whole,
        },
    };
    // This process's accounts in `jobs` row ranges through `pgbench_accounts` itself, plain
    // COPY each (no FREEZE: the connections share the table).
    let in_ranges = || -> Vec<Task> {
        split_range(mine.clone(), opts.jobs as u64)
            .into_iter()
            .map(|r| copy("pgbench_accounts".into(), r, false))
            .collect()
    };
    let (mut tasks, plan): (Vec<Task>, String) = match opts.method() {
        None if opts.jobs == 1 && !split => (
            vec![copy("pgbench_accounts".into(), 0..total, true)],
            "pgbench_accounts: one COPY FREEZE (pgbench's plan)".into(),
        ),
        None => {
            let tasks = in_ranges();
            let n = tasks.len();
            (
                tasks,
                format!(
                    "pgbench_accounts: {n} row ranges, plain COPY in parallel (FREEZE is impossible when connections share a table)"
                ),
            )
        }
        Some(PartitionMethod::Range) => {
            let parts = opts.partitions as u64;
            (
                (1..=parts)
                    .map(|p| {
                        let all = range_partition_rows(p, parts, total);
                        let r = all.start.max(mine.start)..all.end.min(mine.end);
                        (p, r.clone(), r == all)
                    })
                    .filter(|(_, r, _)| !r.is_empty())
                    .map(|(p, r, whole)| copy(format!("pgbench_accounts_{p}"), r, whole))
                    .collect(),
                format!(
                    "pgbench_accounts: {parts} range partitions, each loaded directly with TRUNCATE + COPY FREEZE, in parallel"
                ),
            )
        }
        Some(PartitionMethod::Hash) => {
            let tasks = in_ranges();
            let n = tasks.len();
            (
                tasks,
                format!(
                    "pgbench_accounts: hash-partitioned, {n} row ranges through the parent, plain COPY (no FREEZE on a partitioned table)"
                ),
            )
        }
    };
    if Part::is_first(opts.part) {
        tasks.push(Task {
            slot: SLOT_TELLERS,
            kind: TaskKind::Copy {
                relation: "pgbench_tellers".into(),
                columns: None,
                source: Arc::new(Tellers),
                rows: 0..NTELLERS * s,
                whole: true,
            },
        });
        tasks.push(Task {
            slot: SLOT_BRANCHES,
            kind: TaskKind::Copy {
                relation: "pgbench_branches".into(),
                columns: None,
                source: Arc::new(Branches),
                rows: 0..NBRANCHES * s,
                whole: true,
            },
        });
    }
    (tasks, plan)
}

fn insert_accounts_sql(rows: Range<u64>) -> String {
    format!(
        "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series({}, {}) as aid",
        rows.start + 1,
        rows.end
    )
}

/// The server-side task list (pgbench.c `initGenerateDataServerSide`).
pub fn server_side_tasks(opts: &InitOptions) -> (Vec<Task>, String) {
    let s = opts.scale as u64;
    let total = opts.total_accounts();
    let branches = format!(
        "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
        NBRANCHES * s
    );
    let tellers = format!(
        "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
        NTELLERS * s
    );
    if opts.jobs == 1 && opts.part.is_none() {
        // pgbench's single transaction ("we do all of this in one transaction to enable the
        // backend's data-loading optimizations").
        let sql = format!(
            "begin; truncate table {}; {branches}; {tellers}; {}; commit",
            TABLES.join(", "),
            insert_accounts_sql(0..total)
        );
        return (
            vec![Task {
                slot: SLOT_ACCOUNTS,
                kind: TaskKind::Sql {
                    sql,
                    rows: vec![
                        (SLOT_BRANCHES, NBRANCHES * s),
                        (SLOT_TELLERS, NTELLERS * s),
                        (SLOT_ACCOUNTS, total),
                    ],
                },
            }],
            "server-side INSERT ... SELECT generate_series in one transaction (pgbench's plan)"
                .into(),
        );
    }
    let mine = opts.accounts();
    let n = (opts.jobs as u64).max((mine.end - mine.start).div_ceil(1_000_000));
    let ranges = split_range(mine, n);
    let n = ranges.len();
    let mut tasks: Vec<Task> = ranges
        .into_iter()
        .map(|r| Task {
            slot: SLOT_ACCOUNTS,
            kind: TaskKind::Sql {
                rows: vec![(SLOT_ACCOUNTS, r.end - r.start)],
                sql: insert_accounts_sql(r),
            },
        })
        .collect();
    if Part::is_first(opts.part) {
        tasks.push(Task {
            slot: SLOT_TELLERS,
            kind: TaskKind::Sql {
                sql: tellers,
                rows: vec![(SLOT_TELLERS, NTELLERS * s)],
            },
        });
        tasks.push(Task {
            slot: SLOT_BRANCHES,
            kind: TaskKind::Sql {
                sql: branches,
                rows: vec![(SLOT_BRANCHES, NBRANCHES * s)],
            },
        });
    }
    (
        tasks,
        format!("server-side INSERT ... SELECT generate_series, pgbench_accounts in {n} ranges over {} connections", opts.jobs),
    )
}
