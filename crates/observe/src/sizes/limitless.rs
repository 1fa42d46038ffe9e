//! Aurora PostgreSQL Limitless Database (`init --layout limitless`): read on the router, from
//! the views and functions of AWS's "Aurora PostgreSQL Limitless Database reference"
//! (`rds_aurora` schema): `limitless_tables` (`table_type`: sharded, reference, standard;
//! `distribution_key`), `limitless_table_collocations` (`collocation_id` per table),
//! `limitless_stat_relation_sizes(schema, table)` (each subcluster's share of a table, with the
//! sizes of `pg_table_size` and `pg_indexes_size`) and `limitless_stat_database_size(name)`
//! (each subcluster's database).
//!
//! No Limitless server runs here, so this is written from the documentation alone and untested
//! against a server. The rows are read as JSON (`to_jsonb`) and their size columns found by
//! name (`...table_size`, `...indexes_size`, `...size`), so a column named slightly otherwise
//! than the documentation's examples still reads; what does not read is a note.

use std::collections::BTreeMap;

use measure::sizes::{ShardSize, Sizes, TableShard, LOCAL, REFERENCE, SHARDED};
use serde_json::Value;
use sut::Session;

use super::{lit, note, text};

const TABLES: &str = "select to_regclass(quote_ident(t.schema_name) || '.' || \
       quote_ident(t.table_name))::text, t.schema_name, t.table_name, to_jsonb(t)::text \
     from rds_aurora.limitless_tables t";

const COLLOCATIONS: &str = "select to_regclass(quote_ident(c.schema_name) || '.' || \
       quote_ident(c.table_name))::text, c.collocation_id \
     from rds_aurora.limitless_table_collocations c";

const DATABASE: &str = "select to_jsonb(d)::text \
     from rds_aurora.limitless_stat_database_size(current_database()) d";

/// A `table_type` as a kind (`standard` tables live on one shard: local).
pub(super) fn kind(table_type: &str) -> &'static str {
    match table_type {
        "sharded" => SHARDED,
        "reference" => REFERENCE,
        _ => LOCAL,
    }
}

/// The first number among `row`'s fields whose name ends in one of `suffixes`.
fn field(row: &Value, suffixes: &[&str]) -> Option<u64> {
    let m = row.as_object()?;
    suffixes.iter().find_map(|s| {
        m.iter()
            .find(|(k, _)| k.ends_with(s))
            .and_then(|(_, v)| v.as_f64().or_else(|| v.as_str()?.parse().ok()))
            .map(|v| v.max(0.0) as u64)
    })
}

/// Which subcluster a row is (`shard 4`, `router 2`).
fn subcluster(row: &Value) -> String {
    let t = row["subcluster_type"].as_str().unwrap_or("subcluster");
    let id = match &row["subcluster_id"] {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    format!("{t} {id}")
}

/// The parsed size rows of one table: each subcluster that holds a part of it.
pub(super) fn parts(rows: &[Value]) -> Vec<TableShard> {
    rows.iter()
        .filter(|r| r["subcluster_type"].as_str() != Some("router"))
        .map(|r| {
            let t = field(r, &["table_size"]);
            let i = field(r, &["indexes_size"]);
            let total =
                field(r, &["total_relation_size"]).unwrap_or(t.unwrap_or(0) + i.unwrap_or(0));
            TableShard {
                shard: subcluster(r),
                total_bytes: total,
                table_bytes: t,
                index_bytes: i,
            }
        })
        .collect()
}

pub(super) async fn read(s: &mut Session, sizes: &mut Sizes) {
    let mut groups: BTreeMap<String, String> = BTreeMap::new();
    match super::query(s, COLLOCATIONS).await {
        Ok(rows) => {
            for r in rows {
                groups.insert(text(&r, 0), text(&r, 1));
            }
        }
        Err(e) => note(
            sizes,
            "collocations (rds_aurora.limitless_table_collocations)",
            &e,
        ),
    }
    let tables = match super::query(s, TABLES).await {
        Ok(rows) => rows,
        Err(e) => return note(sizes, "the tables (rds_aurora.limitless_tables)", &e),
    };
    for r in tables {
        let name = text(&r, 0);
        let row: Value = serde_json::from_str(&text(&r, 3)).unwrap_or(Value::Null);
        let sql = format!(
            "select to_jsonb(r)::text from rds_aurora.limitless_stat_relation_sizes({}, {}) r",
            lit(&text(&r, 1)),
            lit(&text(&r, 2))
        );
        let shards = match super::query(s, &sql).await {
            Ok(rows) => {
                let rows: Vec<Value> = rows
                    .iter()
                    .filter_map(|r| serde_json::from_str(&text(r, 0)).ok())
                    .collect();
                parts(&rows)
            }
            Err(e) => {
                note(sizes, &format!("{name}'s size per shard"), &e);
                Vec::new()
            }
        };
        let t = super::table_named(sizes, &name);
        t.name = name;
        t.kind = kind(row["table_type"].as_str().unwrap_or("")).to_string();
        t.shard_key = row["distribution_key"]
            .as_str()
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        t.colocation = groups.get(&t.name).cloned();
        if !shards.is_empty() {
            t.table_bytes = shards.iter().map(|p| p.table_bytes.unwrap_or(0)).sum();
            t.index_bytes = shards.iter().map(|p| p.index_bytes.unwrap_or(0)).sum();
        }
        t.shards = shards;
    }
    match super::query(s, DATABASE).await {
        Ok(rows) => {
            let rows: Vec<Value> = rows
                .iter()
                .filter_map(|r| serde_json::from_str(&text(r, 0)).ok())
                .collect();
            let mut total = 0;
            for r in &rows {
                let bytes = field(r, &["db_size", "size"]);
                total += bytes.unwrap_or(0);
                sizes.shards.push(ShardSize {
                    shard: subcluster(r),
                    location: None,
                    database_bytes: bytes,
                });
            }
            if !rows.is_empty() {
                sizes.database_bytes = Some(total);
            }
        }
        Err(e) => note(
            sizes,
            "each subcluster's database (rds_aurora.limitless_stat_database_size)",
            &e,
        ),
    }
}
