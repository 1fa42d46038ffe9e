//! `--prewarm`: before the measured run, read each of the workload's tables and indexes into the
//! server's cache, so that the run starts warm instead of ramping while pages come from storage
//! (the sysbench drop-in's `prewarm` command, generalised to every workload and both protocols).
//!
//! Owns finding the workload's tables on the server (by the `LIKE` patterns of its dataset,
//! `workloads::Dataset::tables_like`) and reading them; the result's `prewarm` says what was read
//! and how long it took (`report::warmup::Prewarm`). Must not touch: the commit baseline (it runs
//! before it: its reads commit transactions the commit count must not see), any table's data.
//!
//! How, by protocol:
//! - PostgreSQL: `pg_prewarm(regclass)` (contrib's pg_prewarm, "mode buffer": into shared
//!   buffers) for each table and index when the extension is installed in the database, created
//!   first on the embedded server stampede started (never on another server). Without it, a full
//!   scan of each table (`count(*)`; note that a table larger than a quarter of shared_buffers is
//!   read through a small ring, so it reaches the OS cache rather than shared buffers) and an
//!   ordered scan of each b-tree index on its first column (`enable_seqscan` and
//!   `enable_bitmapscan` off for the session).
//! - MySQL/MariaDB: sysbench's prewarm (`oltp_common.lua`, `prewarm`): the clustered index by
//!   `SELECT ... FORCE KEY (PRIMARY)` into a derived table, and each secondary index by a covering
//!   scan of its first column (`LIKE '%0%'` reads every entry), `LIMIT` keeping the derived table
//!   from being merged away.

use std::time::Instant;

use anyhow::{Context, Result};
use report::warmup::{Prewarm, PrewarmedRelation};
use sut::{Dialect, Session};

use crate::console;
use crate::families::Ctx;

/// MySQL's documented "all the rows" for `LIMIT`.
const ALL_ROWS: &str = "18446744073709551615";

/// Read the tables matching `patterns` (and their indexes) into the server's cache.
pub(super) fn run(ctx: &Ctx, patterns: &[&str]) -> Result<Prewarm> {
    let embedded = ctx.target.embedded.is_some();
    let started = Instant::now();
    let (method, relations) = ctx
        .with_session(async |s| match s.dialect() {
            Dialect::Postgres => postgres(s, patterns, embedded).await,
            Dialect::MySql => mysql(s, patterns).await,
        })
        .context("--prewarm")?;
    let p = Prewarm {
        method,
        seconds: started.elapsed().as_secs_f64(),
        relations,
    };
    if p.relations.is_empty() {
        console::warning("--prewarm found none of the workload's tables on the server");
    }
    console::note(&p.line());
    Ok(p)
}

fn quoted_list(patterns: &[&str]) -> String {
    let v: Vec<String> = patterns
        .iter()
        .map(|p| format!("'{}'", p.replace('\'', "''")))
        .collect();
    v.join(", ")
}

fn num(v: &Option<String>) -> u64 {
    v.as_deref().and_then(|x| x.parse().ok()).unwrap_or(0)
}

fn text(v: &Option<String>) -> String {
    v.clone().unwrap_or_default()
}

async fn postgres(
    s: &mut Session,
    patterns: &[&str],
    embedded: bool,
) -> Result<(String, Vec<PrewarmedRelation>)> {
    if patterns.is_empty() {
        return Ok(("pg_prewarm".into(), Vec::new()));
    }
    let like = quoted_list(patterns);
    // The workload's tables in the schemas of the search path, and the partitions of a
    // partitioned one (pgbench's accounts with --partitions).
    let tables = s
        .simple_query(&format!(
            "SELECT c.oid, c.oid::regclass::text FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_inherits i ON i.inhrelid = c.oid \
             LEFT JOIN pg_class p ON p.oid = i.inhparent \
             WHERE c.relkind IN ('r', 'm') AND n.nspname = ANY (current_schemas(false)) \
             AND (c.relname LIKE ANY (ARRAY[{like}]) OR p.relname LIKE ANY (ARRAY[{like}])) \
             ORDER BY 2"
        ))
        .await?;
    if tables.is_empty() {
        return Ok(("pg_prewarm".into(), Vec::new()));
    }
    let oids: Vec<String> = tables.iter().map(|r| text(&r[0])).collect();
    // Each index: its name, its table, whether it is a b-tree, its first column (none for an
    // expression).
    let indexes = s
        .simple_query(&format!(
            "SELECT x.indexrelid::regclass::text, x.indrelid::regclass::text, \
             am.amname = 'btree', a.attname \
             FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid \
             JOIN pg_am am ON am.oid = ic.relam \
             LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] \
             WHERE x.indrelid IN ({}) ORDER BY 2, 1",
            oids.join(", ")
        ))
        .await?;
    let mut installed = !s
        .simple_query("SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm'")
        .await?
        .is_empty();
    if !installed && embedded {
        // Our own server: contrib ships with it.
        installed = s
            .simple_query("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            .await
            .is_ok();
    }
    let mut out = Vec::new();
    if installed {
        let block: u64 = s
            .simple_query("SELECT current_setting('block_size')")
            .await?
            .first()
            .map_or(8192, |r| num(&r[0]));
        let mut read = async |name: &str| -> Result<u64> {
            let sql = format!(
                "SELECT pg_prewarm('{}'::regclass)",
                name.replace('\'', "''")
            );
            let rows = s.simple_query(&sql).await?;
            Ok(rows.first().map_or(0, |r| num(&r[0])) * block)
        };
        for t in &tables {
            let name = text(&t[1]);
            let bytes = read(&name).await?;
            out.push(relation("table", name, None, bytes));
        }
        for x in &indexes {
            let (name, table) = (text(&x[0]), text(&x[1]));
            let bytes = read(&name).await?;
            out.push(relation("index", name, Some(table), bytes));
        }
        return Ok(("pg_prewarm".into(), out));
    }
    let size = async |s: &mut Session, name: &str| -> Result<u64> {
        let sql = format!(
            "SELECT pg_relation_size('{}'::regclass)",
            name.replace('\'', "''")
        );
        Ok(s.simple_query(&sql)
            .await?
            .first()
            .map_or(0, |r| num(&r[0])))
    };
    for t in &tables {
        let name = text(&t[1]);
        s.simple_query(&format!("SELECT count(*) FROM {name}"))
            .await?;
        let bytes = size(s, &name).await?;
        out.push(relation("table", name, None, bytes));
    }
    s.simple_query("SET enable_seqscan = off; SET enable_bitmapscan = off")
        .await?;
    for x in &indexes {
        let (name, table) = (text(&x[0]), text(&x[1]));
        let (btree, column) = (x[2].as_deref() == Some("t"), x[3].clone());
        let Some(column) = column.filter(|_| btree) else {
            continue;
        };
        let column = format!("\"{}\"", column.replace('"', "\"\""));
        s.simple_query(&format!(
            "SELECT count(*) FROM (SELECT {column} FROM {table} ORDER BY {column}) s"
        ))
        .await?;
        let bytes = size(s, &name).await?;
        out.push(relation("index", name, Some(table), bytes));
    }
    s.simple_query("RESET enable_seqscan; RESET enable_bitmapscan")
        .await?;
    Ok(("scans".into(), out))
}

async fn mysql(s: &mut Session, patterns: &[&str]) -> Result<(String, Vec<PrewarmedRelation>)> {
    let method = "sysbench's prewarm queries".to_string();
    if patterns.is_empty() {
        return Ok((method, Vec::new()));
    }
    let like: Vec<String> = patterns
        .iter()
        .map(|p| format!("table_name LIKE '{}'", p.replace('\'', "''")))
        .collect();
    let tables = s
        .simple_query(&format!(
            "SELECT table_name, data_length FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND ({}) \
             ORDER BY table_name",
            like.join(" OR ")
        ))
        .await?;
    let q = |n: &str| format!("`{}`", n.replace('`', "``"));
    let mut out = Vec::new();
    for t in &tables {
        let table = text(&t[0]);
        // Each index's first column, the primary key first.
        let indexes = s
            .simple_query(&format!(
                "SELECT index_name, column_name FROM information_schema.statistics \
                 WHERE table_schema = DATABASE() AND table_name = '{}' AND seq_in_index = 1 \
                 ORDER BY index_name <> 'PRIMARY', index_name",
                table.replace('\'', "''")
            ))
            .await?;
        let has_primary = indexes.iter().any(|r| r[0].as_deref() == Some("PRIMARY"));
        let key = if has_primary {
            " FORCE KEY (PRIMARY)"
        } else {
            ""
        };
        s.simple_query(&format!(
            "SELECT COUNT(*) FROM (SELECT * FROM {}{key} LIMIT {ALL_ROWS}) t",
            q(&table)
        ))
        .await?;
        out.push(relation("table", table.clone(), None, num(&t[1])));
        for x in indexes
            .iter()
            .filter(|r| r[0].as_deref() != Some("PRIMARY"))
        {
            let (index, column) = (text(&x[0]), text(&x[1]));
            if column.is_empty() {
                continue;
            }
            s.simple_query(&format!(
                "SELECT COUNT(*) FROM (SELECT {c} FROM {t} FORCE INDEX ({i}) \
                 WHERE {c} LIKE '%0%' LIMIT {ALL_ROWS}) t",
                c = q(&column),
                t = q(&table),
                i = q(&index)
            ))
            .await?;
            // Its size where InnoDB's persistent statistics are readable (else 0).
            let bytes = s
                .simple_query(&format!(
                    "SELECT stat_value * @@innodb_page_size FROM mysql.innodb_index_stats \
                     WHERE database_name = DATABASE() AND table_name = '{}' \
                     AND index_name = '{}' AND stat_name = 'size'",
                    table.replace('\'', "''"),
                    index.replace('\'', "''")
                ))
                .await
                .ok()
                .and_then(|r| r.first().map(|r| num(&r[0])))
                .unwrap_or(0);
            out.push(relation("index", index, Some(table.clone()), bytes));
        }
    }
    Ok((method, out))
}

fn relation(kind: &str, name: String, table: Option<String>, bytes: u64) -> PrewarmedRelation {
    PrewarmedRelation {
        kind: kind.into(),
        name,
        table,
        bytes,
    }
}
