//! Reading the sizes of the database under test ([`measure::sizes::Sizes`]): the database, each
//! table and its indexes, and on a sharded layout each table's kind, collocation group and part
//! on every shard, read from the server's own catalog (issue 32, item 2).
//!
//! Owns the SQL of these readings, one file per source: `pg` (plain PostgreSQL, and which layout
//! the database has), `fdw` (the postgres_fdw layout: the foreign partitions on the coordinator,
//! then each shard server read directly), `citus` (`citus_tables`, `citus_shards`), `limitless`
//! (Aurora PostgreSQL Limitless' `rds_aurora.limitless_*` views and functions), `mysql`
//! (`information_schema.TABLES`).
//!
//! Must not touch: anything that writes (every statement here is a SELECT, or MySQL's session
//! setting that makes `information_schema` read fresh statistics), the run's sessions, the
//! terminal. The caller gives the reading its own session and deadline (`stampede`'s steps after
//! a run), so one reading never holds up a run's result.
//!
//! What cannot be read is a note in the reading, never an error: a view that does not exist, a
//! role without the privilege, a shard that does not answer. Only a target that refuses the
//! reading's own connection is an error (nothing at all can be read then).

mod citus;
mod fdw;
mod limitless;
mod mysql;
mod pg;

pub use pg::{layout, Layout};

use measure::sizes::Sizes;
use sut::{Dialect, Session, Target};

/// One reading of the sizes of `target`'s database; `when` is `before`, `after` or `init`.
///
/// On PostgreSQL the reading is one read-only transaction, rolled back at the end: it commits
/// nothing that the run's commit count, or the accounting of a pooler between stampede and the
/// server, would have to explain (its session's start-up is counted like every session's).
/// Each statement runs under a savepoint ([`query`]), so one that fails (a view this server
/// lacks) is a note and takes nothing else down.
pub async fn read(target: &Target, when: &str) -> Result<Sizes, sut::Error> {
    let mut s = Session::connect(target).await?;
    let mut sizes = Sizes {
        when: when.to_string(),
        ..Default::default()
    };
    match s.dialect() {
        Dialect::MySql => mysql::read(&mut s, &mut sizes).await,
        Dialect::Postgres => {
            s.simple_query("BEGIN READ ONLY").await?;
            pg::read(&mut s, target, &mut sizes).await;
            let _ = s.simple_query("ROLLBACK").await;
        }
    }
    s.close().await;
    Ok(sizes)
}

/// A statement of either protocol's reading: PostgreSQL's under [`query`]'s savepoint.
async fn one(s: &mut Session, sql: &str) -> Result<Vec<Vec<Option<String>>>, sut::Error> {
    match s.dialect() {
        Dialect::Postgres => query(s, sql).await,
        Dialect::MySql => s.simple_query(sql).await,
    }
}

/// One statement of a PostgreSQL reading, inside [`read`]'s transaction: under a savepoint,
/// rolled back to when the statement fails, so the transaction goes on.
async fn query(s: &mut Session, sql: &str) -> Result<Vec<Vec<Option<String>>>, sut::Error> {
    s.simple_query("SAVEPOINT sizes").await?;
    match s.simple_query(sql).await {
        Ok(rows) => {
            s.simple_query("RELEASE SAVEPOINT sizes").await?;
            Ok(rows)
        }
        Err(e) => {
            let _ = s.simple_query("ROLLBACK TO SAVEPOINT sizes").await;
            Err(e)
        }
    }
}

/// A note for a statement that failed: what was being read, and the server's words.
fn note(sizes: &mut Sizes, what: &str, e: &sut::Error) {
    sizes.notes.push(format!(
        "{what}: not read: {}",
        sut::conninfo::redact(&e.to_string())
    ));
}

/// Column `i` of `row` as a number (absent, NULL or not a number: 0).
fn num(row: &[Option<String>], i: usize) -> u64 {
    opt_num(row, i).unwrap_or(0)
}

fn opt_num(row: &[Option<String>], i: usize) -> Option<u64> {
    row.get(i)
        .and_then(|v| v.as_deref())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v.max(0.0) as u64)
}

fn text(row: &[Option<String>], i: usize) -> String {
    row.get(i).cloned().flatten().unwrap_or_default()
}

/// `s` as an SQL string literal (standard_conforming_strings on, as in every supported
/// PostgreSQL): the observer's own quoting.
use crate::sql::quote_literal as lit;

/// The database's size from `database_sql` and its tables' from `tables_sql` (rows of name,
/// data bytes, index bytes), each a local table until a layout says otherwise; a note (naming
/// `source`) for what could not be read. The same reading on both protocols.
async fn read_local(
    s: &mut Session,
    sizes: &mut Sizes,
    (database_sql, tables_sql): (&str, &str),
    (database_source, tables_source): (&str, &str),
) {
    match one(s, database_sql).await {
        Ok(rows) => sizes.database_bytes = rows.first().map(|r| num(r, 0)),
        Err(e) => note(sizes, database_source, &e),
    }
    match one(s, tables_sql).await {
        Ok(rows) => {
            sizes.tables = (rows.iter())
                .map(|r| measure::sizes::TableSize {
                    name: text(r, 0),
                    kind: measure::sizes::LOCAL.to_string(),
                    table_bytes: num(r, 1),
                    index_bytes: num(r, 2),
                    ..Default::default()
                })
                .collect()
        }
        Err(e) => note(sizes, tables_source, &e),
    }
}

/// The reading's table named `name`, added (empty) when not there yet: the layouts read a
/// table's kind and its parts from different views.
fn table_named<'a>(sizes: &'a mut Sizes, name: &str) -> &'a mut measure::sizes::TableSize {
    let i = match sizes.tables.iter().position(|t| t.name == name) {
        Some(i) => i,
        None => {
            sizes.tables.push(Default::default());
            sizes.tables.len() - 1
        }
    };
    &mut sizes.tables[i]
}

/// The tables largest first, at most [`measure::sizes::MAX_TABLES`].
fn largest_first(sizes: &mut Sizes) {
    sizes.tables.sort_by(|a, b| {
        b.total_bytes()
            .cmp(&a.total_bytes())
            .then(a.name.cmp(&b.name))
    });
    sizes.tables.truncate(measure::sizes::MAX_TABLES);
}

#[cfg(test)]
mod tests;
