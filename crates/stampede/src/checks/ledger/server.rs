//! The server's side of the statement ledger: its counters at one moment, read in the commit
//! baseline's session (PostgreSQL: inside its one read-only transaction, so reading them
//! commits nothing the commit count would see).
//!
//! PostgreSQL: statements by kind from `pg_stat_statements` (calls of top-level statements that
//! completed, in the run's database, sorted by the first word of their text; only where the
//! extension is created in the database and loaded), rows inserted, updated and deleted per
//! table from `pg_stat_user_tables` (partitions summed into their root), and rolled-back
//! transactions from `pg_stat_database`. The statistics views are read after
//! `pg_stat_clear_snapshot()`; `pg_stat_statements` is read first, so that this reading's own
//! statements all fall after it (each is counted when it ends).
//!
//! MySQL and MariaDB: `Com_select`, `Com_insert` (+ `_select`, `Com_replace`), `Com_update`
//! (+ `_multi`), `Com_delete` (+ `_multi`), `Com_commit` and `Com_rollback`: statements
//! dispatched, failed ones included; `Handler_write`, `Handler_update`, `Handler_delete`: rows
//! written to persistent tables. `SHOW GLOBAL STATUS` counts in none of these.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use measure::ledger::Kind;
use sut::Session;

/// The server's counters at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Statements by kind ([`Kind::ALL`]'s order), where the server counts them; why not.
    pub statements: Result<[i64; 7], String>,
    /// What the statement counter is called, for the line's source.
    pub statements_source: &'static str,
    /// Rows by kind (insert, update, delete at their [`Kind`] index).
    pub rows: [i64; 7],
    pub rows_source: &'static str,
    /// PostgreSQL: rows per table (root of a partitioned table), indexed like `rows`.
    pub tables: Option<BTreeMap<String, [i64; 7]>>,
    /// PostgreSQL `xact_rollback`; MySQL: `Com_rollback` is in `statements`.
    pub rollbacks: Option<i64>,
    /// `pg_stat_statements_info.dealloc` (entries evicted, PostgreSQL 14+).
    pub evicted: Option<i64>,
    /// A Galera node (`wsrep_ready`): its appliers write every replicated row again.
    pub galera: bool,
    /// PostgreSQL: the database has foreign tables (postgres_fdw shards) or Citus: their rows
    /// are written, and counted, on other servers.
    pub remote_tables: bool,
}

impl Default for Counters {
    fn default() -> Counters {
        Counters {
            statements: Err("not read".into()),
            statements_source: "",
            rows: [0; 7],
            rows_source: "",
            tables: None,
            rollbacks: None,
            evicted: None,
            galera: false,
            remote_tables: false,
        }
    }
}

/// The schema `pg_stat_statements` is created in, if it is created in this database and the
/// library is loaded (reading the view fails otherwise). Read before the baseline's
/// transaction starts.
pub async fn pg_stat_statements(s: &mut Session) -> Result<Option<String>, String> {
    let rows = s
        .simple_query(
            "SELECT n.nspname, current_setting('shared_preload_libraries') \
             FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
             WHERE e.extname = 'pg_stat_statements'",
        )
        .await
        .map_err(|e| format!("{e}"))?;
    let Some(row) = rows.first() else {
        return Err(
            "pg_stat_statements is not created in this database (CREATE EXTENSION \
                    pg_stat_statements, with it in shared_preload_libraries)"
                .into(),
        );
    };
    let schema = row.first().cloned().flatten().unwrap_or_default();
    let preload = row.get(1).cloned().flatten().unwrap_or_default();
    if !preload.contains("pg_stat_statements") {
        return Err("pg_stat_statements is not in shared_preload_libraries".into());
    }
    Ok(Some(schema))
}

fn number(v: Option<&Option<String>>) -> i64 {
    v.cloned()
        .flatten()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as i64)
}

/// Quote an identifier for SQL (`"schema"`).
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// PostgreSQL's counters. `pss`: where `pg_stat_statements` is ([`pg_stat_statements`]).
/// Inside a transaction: a failing read of `pg_stat_statements` is rolled back to a
/// savepoint, leaving the transaction usable.
pub async fn pg(s: &mut Session, pss: &Result<Option<String>, String>) -> Result<Counters> {
    let mut c = Counters {
        statements: Err(String::new()),
        statements_source: "pg_stat_statements.calls",
        rows_source: "pg_stat_user_tables.n_tup_*",
        ..Counters::default()
    };
    c.statements = match pss {
        Ok(Some(schema)) => {
            s.simple_query("SAVEPOINT stampede_ledger").await?;
            let q = format!(
                "SELECT query, calls FROM {}.pg_stat_statements \
                 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())",
                ident(schema)
            );
            match s.simple_query(&q).await {
                Ok(rows) => {
                    s.simple_query("RELEASE SAVEPOINT stampede_ledger").await?;
                    let mut by_kind = [0i64; 7];
                    for r in &rows {
                        let text = r.first().cloned().flatten().unwrap_or_default();
                        by_kind[Kind::of_sql(&text) as usize] += number(r.get(1));
                    }
                    Ok(by_kind)
                }
                Err(e) => {
                    s.simple_query("ROLLBACK TO SAVEPOINT stampede_ledger")
                        .await?;
                    Err(format!("pg_stat_statements could not be read: {e}"))
                }
            }
        }
        Ok(None) => Err("pg_stat_statements is not created in this database".into()),
        Err(why) => Err(why.clone()),
    };
    if let Ok(Some(schema)) = pss {
        // PostgreSQL 14+: entries evicted to make room (pg_stat_statements.max).
        let q = format!(
            "SELECT to_jsonb(i) ->> 'dealloc' FROM {}.pg_stat_statements_info i",
            ident(schema)
        );
        s.simple_query("SAVEPOINT stampede_ledger").await?;
        match s.simple_query(&q).await {
            Ok(rows) => {
                s.simple_query("RELEASE SAVEPOINT stampede_ledger").await?;
                c.evicted = rows.first().map(|r| number(r.first()));
            }
            Err(_) => {
                s.simple_query("ROLLBACK TO SAVEPOINT stampede_ledger")
                    .await?;
            }
        }
    }
    let root = match s.pg().map_or(0, |p| p.server_version_num()) >= 120_000 {
        true => "coalesce(pg_partition_root(relid), relid)::regclass::text",
        false => "relid::regclass::text",
    };
    let rows = s
        .simple_query(&format!(
            "SELECT pg_stat_clear_snapshot()::text, NULL, NULL, NULL \
             UNION ALL SELECT {root}, sum(n_tup_ins)::text, sum(n_tup_upd)::text, \
             sum(n_tup_del)::text FROM pg_stat_user_tables GROUP BY 1"
        ))
        .await
        .context("reading pg_stat_user_tables")?;
    let mut tables = BTreeMap::new();
    for r in rows.iter().skip(1) {
        let name = r.first().cloned().flatten().unwrap_or_default();
        let mut v = [0i64; 7];
        v[Kind::Insert as usize] = number(r.get(1));
        v[Kind::Update as usize] = number(r.get(2));
        v[Kind::Delete as usize] = number(r.get(3));
        for k in [Kind::Insert, Kind::Update, Kind::Delete] {
            c.rows[k as usize] += v[k as usize];
        }
        tables.insert(bare(&name), v);
    }
    c.tables = Some(tables);
    let rows = s
        .simple_query(
            "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()",
        )
        .await
        .context("reading pg_stat_database")?;
    c.rollbacks = Some(number(rows.first().and_then(|r| r.first())));
    let rows = s
        .simple_query(
            "SELECT (EXISTS (SELECT 1 FROM pg_foreign_table) \
             OR EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus'))::text",
        )
        .await
        .context("looking for foreign and distributed tables")?;
    c.remote_tables = (rows.first())
        .and_then(|r| r.first().cloned().flatten())
        .as_deref()
        == Some("true");
    Ok(c)
}

/// A relation's name without its schema and quotes (`public."T"` -> `T`), as workloads name
/// their tables.
fn bare(name: &str) -> String {
    // The last dot outside double quotes separates the schema.
    let mut quoted = false;
    let mut start = 0;
    for (i, c) in name.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => start = i + 1,
            _ => {}
        }
    }
    let last = &name[start..];
    match last.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => last.to_string(),
    }
}

/// The global status variables the ledger reads on MySQL, and the kind each adds to.
const MYSQL_STATEMENTS: [(&str, Kind); 11] = [
    ("Com_select", Kind::Select),
    ("Com_insert", Kind::Insert),
    ("Com_insert_select", Kind::Insert),
    ("Com_replace", Kind::Insert),
    ("Com_replace_select", Kind::Insert),
    ("Com_update", Kind::Update),
    ("Com_update_multi", Kind::Update),
    ("Com_delete", Kind::Delete),
    ("Com_delete_multi", Kind::Delete),
    ("Com_commit", Kind::Commit),
    ("Com_rollback", Kind::Rollback),
];

/// MySQL's counters on one node.
pub async fn mysql(s: &mut Session) -> Result<Counters> {
    let names: Vec<String> = (MYSQL_STATEMENTS.iter())
        .map(|(n, _)| format!("'{n}'"))
        .chain(
            [
                "'Handler_write'",
                "'Handler_update'",
                "'Handler_delete'",
                "'wsrep_ready'",
            ]
            .map(String::from),
        )
        .collect();
    let rows = s
        .simple_query(&format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            names.join(", ")
        ))
        .await
        .context("reading SHOW GLOBAL STATUS")?;
    let get = |name: &str| {
        (rows.iter())
            .find(|r| (r.first().cloned().flatten()).is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .map_or(0, |r| number(r.get(1)))
    };
    let mut statements = [0i64; 7];
    for (name, kind) in MYSQL_STATEMENTS {
        statements[kind as usize] += get(name);
    }
    let mut rows_by_kind = [0i64; 7];
    rows_by_kind[Kind::Insert as usize] = get("Handler_write");
    rows_by_kind[Kind::Update as usize] = get("Handler_update");
    rows_by_kind[Kind::Delete as usize] = get("Handler_delete");
    let galera = (rows.iter()).any(|r| {
        r.first().cloned().flatten().as_deref() == Some("wsrep_ready")
            && r.get(1).cloned().flatten().as_deref() == Some("ON")
    });
    Ok(Counters {
        statements: Ok(statements),
        statements_source: "Com_*",
        rows: rows_by_kind,
        rows_source: "Handler_write/update/delete",
        tables: None,
        rollbacks: None,
        evicted: None,
        galera,
        remote_tables: false,
    })
}

impl Counters {
    /// What moved between `self` (before) and `after`; a counter that went backwards (a
    /// restart, a reset) makes its part an error.
    pub fn delta(&self, after: &Counters) -> Counters {
        let sub = |a: &[i64; 7], b: &[i64; 7]| {
            let mut d = [0i64; 7];
            for i in 0..7 {
                d[i] = b[i] - a[i];
            }
            d
        };
        let statements = match (&self.statements, &after.statements) {
            (Ok(a), Ok(b)) if (0..7).any(|i| b[i] < a[i]) => {
                Err("pg_stat_statements was reset during the run".to_string())
            }
            (Ok(a), Ok(b)) => Ok(sub(a, b)),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        };
        let tables = match (&self.tables, &after.tables) {
            (Some(a), Some(b)) => Some(
                (b.iter())
                    .map(|(name, v)| {
                        let before = a.get(name).copied().unwrap_or([0; 7]);
                        (name.clone(), sub(&before, v))
                    })
                    .filter(|(_, d)| d.iter().any(|v| *v != 0))
                    .collect(),
            ),
            _ => None,
        };
        Counters {
            statements,
            statements_source: after.statements_source,
            rows: sub(&self.rows, &after.rows),
            rows_source: after.rows_source,
            tables,
            rollbacks: match (self.rollbacks, after.rollbacks) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            evicted: match (self.evicted, after.evicted) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            },
            galera: self.galera || after.galera,
            remote_tables: self.remote_tables || after.remote_tables,
        }
    }

    /// The sum of several servers' deltas (a target's hosts, a cluster's nodes).
    pub fn sum(parts: Vec<Counters>) -> Option<Counters> {
        let mut it = parts.into_iter();
        let mut acc = it.next()?;
        for p in it {
            acc.statements = match (acc.statements, p.statements) {
                (Ok(mut a), Ok(b)) => {
                    (0..7).for_each(|i| a[i] += b[i]);
                    Ok(a)
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
            (0..7).for_each(|i| acc.rows[i] += p.rows[i]);
            acc.tables = match (acc.tables, p.tables) {
                (Some(mut a), Some(b)) => {
                    for (name, v) in b {
                        let e = a.entry(name).or_insert([0; 7]);
                        (0..7).for_each(|i| e[i] += v[i]);
                    }
                    Some(a)
                }
                _ => None,
            };
            acc.rollbacks = acc.rollbacks.zip(p.rollbacks).map(|(a, b)| a + b);
            acc.evicted = match (acc.evicted, p.evicted) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            acc.galera |= p.galera;
            acc.remote_tables |= p.remote_tables;
        }
        Some(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_names_lose_their_schema_and_quotes() {
        assert_eq!(bare("pgbench_accounts"), "pgbench_accounts");
        assert_eq!(bare("public.sbtest1"), "sbtest1");
        assert_eq!(bare("s.\"Mixed\"\"Q\""), "Mixed\"Q");
        assert_eq!(bare("\"a.b\""), "a.b");
    }

    #[test]
    fn deltas_subtract_and_a_counter_going_back_is_a_reset() {
        let mut a = Counters {
            statements: Ok([5, 0, 0, 0, 0, 0, 0]),
            rollbacks: Some(1),
            tables: Some(BTreeMap::from([("t".to_string(), [0, 3, 0, 0, 0, 0, 0])])),
            ..Counters::default()
        };
        let mut b = a.clone();
        b.statements = Ok([9, 1, 0, 0, 0, 0, 0]);
        b.rollbacks = Some(4);
        b.tables = Some(BTreeMap::from([
            ("t".to_string(), [0, 5, 0, 0, 0, 0, 0]),
            ("idle".to_string(), [0; 7]),
        ]));
        let d = a.delta(&b);
        assert_eq!(d.statements, Ok([4, 1, 0, 0, 0, 0, 0]));
        assert_eq!(d.rollbacks, Some(3));
        let tables = d.tables.expect("tables");
        assert_eq!(tables.len(), 1, "tables that did not move are left out");
        assert_eq!(tables["t"][1], 2);
        a.statements = Ok([10, 0, 0, 0, 0, 0, 0]);
        assert!(a.delta(&b).statements.is_err());
    }
}
