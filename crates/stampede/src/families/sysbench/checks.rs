//! The checks after a sysbench run: the rows of the tables, before and after.
//!
//! Row expectations: `oltp_*` tables unchanged, except `oltp_insert` (+1 per transaction),
//! `oltp_delete` (at most -1 per transaction) and delete+insert pairs on tables that missed ids
//! (at most +1 per pair). `bulk_insert`'s tables start empty (checked before the run: sysbench
//! would fail on the first duplicate id) and end holding exactly the ids 1..n of each client,
//! n summing to the events committed.

use anyhow::{bail, Context, Result};
use sut::Session;
use workload::oltp::{Options, Test};

/// Rows per table, with a hint when the tables are missing.
pub(super) async fn rows(conn: &sut::Target, tables: u32) -> Result<Vec<i64>> {
    let mut s = Session::connect(conn).await?;
    let r = load::oltp::row_counts(&mut s, tables).await;
    s.close().await;
    r.with_context(|| {
        format!(
            "the sbtest tables are not there: load them first with `stampede init oltp --tables \
             {tables} --table-size N` (same target options), or `sysbench oltp_common prepare`"
        )
    })
}

/// The row-count check: `(passed, detail)` from the counts before and after the run.
pub(super) fn row_check(
    test: Test,
    opts: &Options,
    before: &[i64],
    after: &[i64],
    committed: u64,
) -> (bool, String) {
    let b: i64 = before.iter().sum();
    let a: i64 = after.iter().sum();
    let delta = a - b;
    let c = committed as i64;
    let tables = if opts.tables == 1 {
        "sbtest1".to_string()
    } else {
        format!("sbtest1..{}", opts.tables)
    };
    let pairs = match test {
        Test::ReadWrite | Test::WriteOnly => c * i64::from(opts.delete_inserts),
        _ => 0,
    };
    let full = before.iter().all(|&n| n == i64::from(opts.table_size));
    let (ok, expected) = match test {
        Test::Insert => (delta == c, format!("+{c}: one insert per transaction")),
        Test::Delete => (
            (-c..=0).contains(&delta),
            format!("-{c}..0: at most one row deleted per transaction"),
        ),
        _ if pairs > 0 && full => (
            delta == 0,
            format!("+0: {pairs} delete+insert pairs on full tables"),
        ),
        _ if pairs > 0 => (
            (0..=pairs).contains(&delta),
            format!("0..+{pairs}: {pairs} delete+insert pairs, the tables missed ids"),
        ),
        _ => (delta == 0, "+0: no inserts or deletes".to_string()),
    };
    let detail = format!("{tables}: {b} rows before, {a} after ({delta:+}; expected {expected})");
    (ok, detail)
}

/// `bulk_insert`'s tables before a run: present and empty, or a clear error.
pub(super) async fn bulk_tables_empty(conn: &sut::Target, tables: u32) -> Result<()> {
    let state = bulk_state(conn, tables).await?;
    let full: Vec<String> = state
        .iter()
        .enumerate()
        .filter(|(_, (n, _))| *n > 0)
        .map(|(t, (n, _))| format!("sbtest{} has {n} rows", t + 1))
        .collect();
    if !full.is_empty() {
        bail!(
            "bulk_insert inserts ids 1, 2, ... into empty tables, but {}: empty them with \
             `stampede init oltp --bulk-insert --tables {tables}` (sysbench: bulk_insert cleanup, \
             then prepare)",
            full.join(", ")
        );
    }
    Ok(())
}

/// `(rows, max(id))` of `sbtest1..tables`, with a hint when the tables are missing.
pub(super) async fn bulk_state(conn: &sut::Target, tables: u32) -> Result<Vec<(i64, i64)>> {
    let mut s = Session::connect(conn).await?;
    let r = load::oltp::bulk_state(&mut s, tables).await;
    s.close().await;
    r.with_context(|| {
        format!(
            "bulk_insert's tables are not there: create them first with `stampede init oltp \
             --bulk-insert --tables {tables}` (same target options; --tables = the clients), or \
             `sysbench bulk_insert --threads={tables} prepare`"
        )
    })
}

/// `bulk_insert`'s row check: every table holds exactly the ids 1..n (n = its rows: no gap, no
/// duplicate), and the rows add up to the events committed (each event appends one row, and the
/// final flush sent the rest).
pub(super) fn bulk_row_check(after: &[(i64, i64)], committed: u64) -> (bool, String) {
    let total: i64 = after.iter().map(|(n, _)| n).sum();
    let gaps: Vec<String> = after
        .iter()
        .enumerate()
        .filter(|(_, (n, max))| n != max)
        .map(|(t, (n, max))| format!("sbtest{} has {n} rows but ids up to {max}", t + 1))
        .collect();
    let ok = gaps.is_empty() && total == committed as i64;
    let tables = if after.len() == 1 {
        "sbtest1".to_string()
    } else {
        format!("sbtest1..{}", after.len())
    };
    let mut detail = format!(
        "{tables}: {total} rows inserted (expected {committed}: one per event), ids 1..n in each"
    );
    if !gaps.is_empty() {
        detail = format!("{detail}; but {}", gaps.join(", "));
    }
    (ok, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_check_expectations() {
        let o = Options {
            tables: 2,
            table_size: 10,
            ..Default::default()
        };
        assert!(row_check(Test::ReadWrite, &o, &[10, 10], &[10, 10], 5).0);
        assert!(!row_check(Test::ReadWrite, &o, &[10, 10], &[10, 11], 5).0);
        assert!(row_check(Test::ReadWrite, &o, &[9, 10], &[10, 10], 5).0);
        assert!(row_check(Test::Insert, &o, &[10, 10], &[13, 10], 3).0);
        assert!(!row_check(Test::Insert, &o, &[10, 10], &[12, 10], 3).0);
        assert!(row_check(Test::Delete, &o, &[10, 10], &[8, 10], 3).0);
        assert!(!row_check(Test::Delete, &o, &[10, 10], &[6, 10], 3).0);
        assert!(row_check(Test::PointSelect, &o, &[10, 10], &[10, 10], 3).0);
        let (_, d) = row_check(Test::WriteOnly, &o, &[10, 10], &[10, 10], 3);
        assert_eq!(
            d,
            "sbtest1..2: 20 rows before, 20 after (+0; expected +0: 3 delete+insert pairs on full tables)"
        );
    }

    #[test]
    fn bulk_rows_must_be_contiguous_ids_adding_up_to_the_events() {
        assert!(bulk_row_check(&[(5, 5), (7, 7)], 12).0);
        // A lost flush: fewer rows than events.
        assert!(!bulk_row_check(&[(5, 5), (7, 7)], 13).0);
        // A gap in a client's ids (a failed INSERT's rows dropped).
        let (ok, d) = bulk_row_check(&[(5, 9), (7, 7)], 12);
        assert!(!ok);
        assert!(d.ends_with("but sbtest1 has 5 rows but ids up to 9"), "{d}");
        assert_eq!(
            bulk_row_check(&[(3, 3)], 3).1,
            "sbtest1: 3 rows inserted (expected 3: one per event), ids 1..n in each"
        );
    }
}
