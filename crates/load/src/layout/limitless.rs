//! Aurora PostgreSQL Limitless: seed 000's `limitless_create_tables.sql`, run on one router
//! session (the settings are the session's): `rds_aurora.limitless_create_table_mode` =
//! 'sharded' and `..._shard_key` before the first table, `..._collocate_with` naming it before
//! the others; 'reference' for a reference table (AWS, "Creating Limitless Database tables").
//! No `fillfactor` and no `PARTITION BY` (both refused there). Loaded through the router by
//! several connections, one row source per connection (the seed: "parallel sessions are better
//! than a few heavyweight sessions"); keys as the seed's `limitless_creidx.psql`.

use super::sql::{self, lit};
use super::{Phase, ShardedOptions};

pub(super) fn plan(opts: &ShardedOptions) -> Vec<Phase> {
    let tables = sql::tables(&opts.shape);
    let mut create = Vec::new();
    // Reference tables first: the mode is switched once to 'sharded' after them.
    let (reference, sharded): (Vec<_>, Vec<_>) = tables
        .iter()
        .partition(|t| opts.reference.contains(&t.name));
    if !reference.is_empty() {
        create.push("set rds_aurora.limitless_create_table_mode = 'reference'".to_string());
        for t in &reference {
            create.push(format!("create table {}({})", t.name, t.columns));
        }
    }
    create.push("set rds_aurora.limitless_create_table_mode = 'sharded'".to_string());
    for (i, t) in sharded.iter().enumerate() {
        if i == 0 {
            create.push(format!(
                "set rds_aurora.limitless_create_table_shard_key = {}",
                lit(&format!("{{\"{}\"}}", t.key))
            ));
        }
        create.push(format!("create table {}({})", t.name, t.columns));
        if i == 0 {
            create.push(format!(
                "set rds_aurora.limitless_create_table_collocate_with = {}",
                lit(&t.name)
            ));
        }
    }
    // Everything else is as on Citus' coordinator: the router does all.
    super::citus::coordinator_phases(opts, create)
}
