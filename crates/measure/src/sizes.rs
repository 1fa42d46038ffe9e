//! The sizes of the database under test, as plain data: the database, each table and its
//! indexes, and on a sharded layout each table's kind, collocation and share on each shard
//! (issue 32, item 2; seed 000 reads "table, shard and database sizes" before and after a run).
//!
//! Owns [`Sizes`] (one reading: before a run, after it, after `init`) and its records. `observe`
//! reads them from the server (`observe::sizes`), `report` renders them; both see this crate, so
//! the type lives here (as [`crate::server::ServerMetrics`] does). Numbers only: no driver, no
//! runtime.
//!
//! Conventions: sizes are bytes as the server reports them. PostgreSQL: `pg_table_size` (the
//! heap with its TOAST, free-space and visibility maps) and `pg_indexes_size`; MySQL and
//! MariaDB: `information_schema.TABLES.DATA_LENGTH` and `INDEX_LENGTH`, which InnoDB keeps from
//! its statistics (so they move when the statistics are recalculated, not with every row).
//! What could not be read (a view missing, a privilege, a shard that did not answer) is a note,
//! never a failure.

use serde::{Deserialize, Serialize};

/// One reading of the sizes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sizes {
    /// When it was read: `before` (the run), `after` (the run) or `init`.
    pub when: String,
    /// The layout as read from the server: `plain`, `fdw`, `citus`, `limitless`; `mysql` for
    /// MySQL and MariaDB.
    pub layout: String,
    /// The whole database (PostgreSQL: `pg_database_size` of the target, on a sharded layout the
    /// sum over the shards too, see [`Sizes::shards`]; MySQL: the schema's tables' data and
    /// indexes). `None` when it could not be read.
    pub database_bytes: Option<u64>,
    /// The tables, largest first (at most [`MAX_TABLES`]).
    pub tables: Vec<TableSize>,
    /// A sharded layout's shards (fdw: each foreign server's database; Citus: each worker node;
    /// Limitless: each shard subcluster): empty on a plain layout.
    pub shards: Vec<ShardSize>,
    /// What could not be read, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The most tables one reading keeps (largest first): a database of thousands of tables would
/// otherwise fill the result with tables the run never touched.
pub const MAX_TABLES: usize = 100;

/// A table's kind on a sharded layout.
pub const SHARDED: &str = "sharded";
/// Copied whole to every shard (Citus' and Limitless' reference tables).
pub const REFERENCE: &str = "reference";
/// Not distributed: a plain table (on a sharded layout, one that lives on the coordinator,
/// router or a single shard).
pub const LOCAL: &str = "local";

/// One table (a partitioned or sharded table counted whole).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableSize {
    /// Schema-qualified unless in the default schema (`pgbench_accounts`, `app.orders`).
    pub name: String,
    /// [`SHARDED`], [`REFERENCE`] or [`LOCAL`].
    pub kind: String,
    /// The collocation group as the server names it (Citus: `colocation_id`; Limitless:
    /// `collocation_id`; fdw: the shard key's type, the modulus and the servers in remainder
    /// order); tables in one group keep rows of one key on one shard. `None` unless sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colocation: Option<String>,
    /// The shard key (distribution column) when sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_key: Option<String>,
    /// The table's data (with TOAST), bytes; on a sharded layout summed over its shards.
    pub table_bytes: u64,
    /// Its indexes, bytes; on a sharded layout summed over its shards.
    pub index_bytes: u64,
    /// Its part on each shard (sharded and reference tables); empty on a plain layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<TableShard>,
}

impl TableSize {
    pub fn total_bytes(&self) -> u64 {
        self.table_bytes + self.index_bytes
    }
}

/// A table's part on one shard.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableShard {
    /// The shard as [`ShardSize::shard`] names it.
    pub shard: String,
    /// Data and indexes together, bytes.
    pub total_bytes: u64,
    /// The data alone, when the server tells it apart (fdw, Limitless; Citus' shard view gives
    /// the total only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_bytes: Option<u64>,
    /// The indexes alone, when the server tells them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_bytes: Option<u64>,
}

/// One shard of a sharded layout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardSize {
    /// fdw: the foreign server (`stampede_shard0`); Citus: `node:port`; Limitless: the
    /// subcluster (`shard 4`).
    pub shard: String,
    /// Where it is (fdw: host, port and database, never a password).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The shard's database, bytes; `None` when it could not be read.
    pub database_bytes: Option<u64>,
}

impl Sizes {
    /// The table named `name`.
    pub fn table(&self, name: &str) -> Option<&TableSize> {
        self.tables.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_round_trips_and_old_notes_default() {
        let s = Sizes {
            when: "after".into(),
            layout: "fdw".into(),
            database_bytes: Some(10),
            tables: vec![TableSize {
                name: "t".into(),
                kind: SHARDED.into(),
                colocation: Some("g".into()),
                shard_key: Some("k".into()),
                table_bytes: 3,
                index_bytes: 4,
                shards: vec![TableShard {
                    shard: "s0".into(),
                    total_bytes: 7,
                    table_bytes: Some(3),
                    index_bytes: Some(4),
                }],
            }],
            shards: vec![ShardSize {
                shard: "s0".into(),
                location: None,
                database_bytes: Some(9),
            }],
            notes: Vec::new(),
        };
        let text = serde_json::to_string(&s).unwrap();
        assert!(!text.contains("notes"), "{text}");
        let back: Sizes = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.table("t").unwrap().total_bytes(), 7);
    }
}
