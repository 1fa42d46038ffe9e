//! Citus (`init --layout citus`): read on the coordinator. Each table's kind, distribution
//! column and colocation group from `citus_tables` (`citus_table_type`: distributed, reference,
//! local; `colocation_id`); its data and index bytes over all its shards from
//! `citus_table_size` and `citus_total_relation_size`; its part on each worker node from
//! `citus_shards` (`shard_size`, summed per node); each node's database from
//! `run_command_on_workers` (Citus' documentation: "Citus Tables and Views", "Citus Utility
//! Functions"). No Citus server runs here: this reading follows the documentation and is
//! tested only through its parsing.

use std::collections::BTreeMap;

use measure::sizes::{ShardSize, Sizes, TableShard, LOCAL, REFERENCE, SHARDED};
use sut::Session;

use super::{note, num, opt_num, text};

const TABLES: &str = "select table_name::text, citus_table_type, distribution_column, \
       colocation_id, citus_table_size(table_name), \
       citus_total_relation_size(table_name) - citus_table_size(table_name) \
     from citus_tables";

const SHARDS: &str =
    "select table_name::text, nodename || ':' || nodeport, sum(shard_size)::bigint \
     from citus_shards group by 1, 2 order by 1, 2";

const NODES: &str = "select nodename || ':' || nodeport, success, result \
     from run_command_on_workers('select pg_database_size(current_database())')";

/// A `citus_table_type` as a kind.
pub(super) fn kind(citus_type: &str) -> &'static str {
    match citus_type {
        "distributed" | "schema" => SHARDED,
        "reference" => REFERENCE,
        _ => LOCAL,
    }
}

pub(super) async fn read(s: &mut Session, sizes: &mut Sizes) {
    let mut parts: BTreeMap<String, Vec<TableShard>> = BTreeMap::new();
    match super::query(s, SHARDS).await {
        Ok(rows) => {
            for r in rows {
                parts.entry(text(&r, 0)).or_default().push(TableShard {
                    shard: text(&r, 1),
                    total_bytes: num(&r, 2),
                    ..Default::default()
                });
            }
        }
        Err(e) => note(sizes, "each shard's part (citus_shards)", &e),
    }
    match super::query(s, TABLES).await {
        Ok(rows) => {
            for r in rows {
                let name = text(&r, 0);
                let t = super::table_named(sizes, &name);
                t.name = name;
                t.kind = kind(&text(&r, 1)).to_string();
                t.shard_key = r.get(2).cloned().flatten().filter(|k| !k.is_empty());
                t.colocation = (t.kind != LOCAL).then(|| text(&r, 3));
                t.table_bytes = num(&r, 4);
                t.index_bytes = num(&r, 5);
                t.shards = parts.remove(&t.name).unwrap_or_default();
            }
        }
        Err(e) => note(sizes, "the distributed tables (citus_tables)", &e),
    }
    match super::query(s, NODES).await {
        Ok(rows) => {
            let coordinator = sizes.database_bytes;
            let mut total = 0;
            for r in rows {
                let ok = text(&r, 1) == "t";
                let bytes = ok.then(|| opt_num(&r, 2)).flatten();
                total += bytes.unwrap_or(0);
                if !ok {
                    sizes.notes.push(format!(
                        "worker {}: its database's size not read: {}",
                        text(&r, 0),
                        text(&r, 2)
                    ));
                }
                sizes.shards.push(ShardSize {
                    shard: text(&r, 0),
                    location: None,
                    database_bytes: bytes,
                });
            }
            if let Some(c) = coordinator {
                sizes.database_bytes = Some(c + total);
            }
        }
        Err(e) => note(sizes, "the workers' databases (run_command_on_workers)", &e),
    }
}
