//! Citus: plain CREATE TABLEs on the coordinator, then `create_distributed_table` on the shard key,
//! each table collocated with the first (Citus' documentation: "Creating and Modifying
//! Distributed Objects", `colocate_with`; citusdata/citus-benchmark distributes every table on
//! its shared key the same way), or `create_reference_table` for the tables asked to be one.
//! Loaded through the coordinator by several connections, keys after the load (distributed DDL
//! is propagated to every shard).

use super::sql::{self, lit};
use super::{On, Phase, ShardedOptions, Step};

pub(super) fn plan(opts: &ShardedOptions) -> Vec<Phase> {
    let shape = &opts.shape;
    let tables = sql::tables(shape);
    let mut create: Vec<String> = tables
        .iter()
        .map(|t| format!("create table {}({})", t.name, t.columns))
        .collect();
    // The first distributed table is the one the others are collocated with.
    let mut anchor: Option<&str> = None;
    for t in &tables {
        if opts.reference.contains(&t.name) {
            create.push(format!("select create_reference_table({})", lit(&t.name)));
            continue;
        }
        match anchor {
            None => {
                create.push(format!(
                    "select create_distributed_table({}, {})",
                    lit(&t.name),
                    lit(t.key)
                ));
                anchor = Some(&t.name);
            }
            Some(a) => create.push(format!(
                "select create_distributed_table({}, {}, colocate_with => {})",
                lit(&t.name),
                lit(t.key),
                lit(a)
            )),
        }
    }
    coordinator_phases(opts, create)
}

/// Coordinator-only phases: drop, create (`create`), load in slices, keys, vacuum.
pub(super) fn coordinator_phases(opts: &ShardedOptions, create: Vec<String>) -> Vec<Phase> {
    let shape = &opts.shape;
    let one = |what: &str, sql: Vec<String>| Step {
        on: On::Coordinator,
        what: what.to_string(),
        sql,
    };
    let mut phases = vec![
        Phase {
            name: "drop tables",
            steps: vec![one("drop", vec![sql::drop_tables(shape, "")])],
        },
        Phase {
            name: "create tables",
            steps: vec![one("create and shard", create)],
        },
        Phase {
            name: "server-side generate",
            steps: super::slices(sql::key_count(shape), opts.jobs)
                .into_iter()
                .map(|s| {
                    one(
                        &format!("keys {}..{}", s.0, s.1),
                        sql::generate(shape, s, "", None),
                    )
                })
                .collect(),
        },
        Phase {
            name: "primary keys",
            steps: vec![one("keys", sql::keys(shape, ""))],
        },
    ];
    if !opts.no_vacuum {
        phases.push(Phase {
            name: "vacuum",
            steps: vec![one("vacuum", sql::vacuum(shape, ""))],
        });
    }
    phases
}
