//! Plain PostgreSQL sharding: on the coordinator each table is `PARTITION BY HASH (key)` with one
//! partition per shard, a postgres_fdw foreign table (`FOR VALUES WITH (MODULUS n, REMAINDER
//! i)`, PostgreSQL's "Foreign Data" and "Table Partitioning" chapters); on shard `i` the real
//! table `NAME_shardI`, with its keys. The coordinator holds no rows and no indexes (a
//! partitioned table with foreign partitions can have none): every unique key lives on its shard.
//!
//! Each shard loads its own rows directly, all shards at once: the keys whose hash lands on
//! remainder `i`, chosen on the shard by a session's temporary partitioned table hashed like the
//! coordinator's (module notes of [`super`]).
//!
//! Running on it: postgres_fdw opens each shard transaction in REPEATABLE READ (SERIALIZABLE
//! when the local one is), its documented rule, so two clients updating one branch row conflict
//! with a serialization failure where a single server would make one wait (measured: tpcb-sharded,
//! scale 2, 8 clients, 26 of 40 transactions failed). A scale of at least the clients, or
//! `--max-tries`, keeps a run measuring the shards rather than the conflicts.

use super::sql::{self, lit};
use super::{On, Phase, ShardedOptions, Step};

/// The foreign server of shard `i`.
pub fn server_name(i: usize) -> String {
    format!("stampede_shard{i}")
}

/// The suffix of shard `i`'s own tables.
pub fn suffix(i: usize) -> String {
    format!("_shard{i}")
}

/// The plan; `secrets`: write the user mappings' passwords (never in a printed plan).
pub(super) fn plan_with(opts: &ShardedOptions, secrets: bool) -> Vec<Phase> {
    let shape = &opts.shape;
    let n = opts.shards.len();
    let tables = sql::tables(shape);
    let coord = |what: &str, sql: Vec<String>| Step {
        on: On::Coordinator,
        what: what.to_string(),
        sql,
    };
    let per_shard = |what: &str, f: &dyn Fn(usize) -> Vec<String>| -> Vec<Step> {
        (0..n)
            .map(|i| Step {
                on: On::Shard(i),
                what: what.to_string(),
                sql: f(i),
            })
            .collect()
    };

    let mut drop = vec![sql::drop_tables(shape, "")];
    for i in 0..n {
        drop.push(format!(
            "drop user mapping if exists for current_user server {}",
            server_name(i)
        ));
        drop.push(format!("drop server if exists {}", server_name(i)));
    }
    let mut drops = vec![coord(
        "drop the tables and stampede's foreign servers",
        drop,
    )];
    drops.extend(per_shard("drop the shard's tables", &|i| {
        vec![sql::drop_tables(shape, &suffix(i))]
    }));

    let mut create = vec!["create extension if not exists postgres_fdw".to_string()];
    for (i, c) in opts.shards.iter().enumerate() {
        let hosts: Vec<&str> = c.hosts.iter().map(|h| h.host.as_str()).collect();
        let ports: Vec<String> = c.hosts.iter().map(|h| h.port.to_string()).collect();
        create.push(format!(
            "create server {} foreign data wrapper postgres_fdw options (host {}, port {}, dbname {})",
            server_name(i),
            lit(&hosts.join(",")),
            lit(&ports.join(",")),
            lit(&c.dbname)
        ));
        let password = match (&c.password, secrets) {
            (Some(p), true) => format!(", password {}", lit(&p.0)),
            (Some(_), false) => ", password '********'".to_string(),
            (None, _) => String::new(),
        };
        create.push(format!(
            "create user mapping for current_user server {} options (user {}{password})",
            server_name(i),
            lit(&c.user)
        ));
    }
    for t in &tables {
        create.push(format!(
            "create table {}({}) partition by hash ({})",
            t.name, t.columns, t.key
        ));
        for i in 0..n {
            create.push(format!(
                "create foreign table {name}{sfx} partition of {name} \
                 for values with (modulus {n}, remainder {i}) server {server} \
                 options (table_name {remote})",
                name = t.name,
                sfx = suffix(i),
                server = server_name(i),
                remote = lit(&format!("{}{}", t.name, suffix(i))),
            ));
        }
    }
    let mut creates = vec![coord("partitioned tables of foreign shards", create)];
    creates.extend(per_shard("the shard's tables", &|i| {
        tables
            .iter()
            .map(|t| format!("create table {}{}({})", t.name, suffix(i), t.columns))
            .collect()
    }));

    let generate = per_shard("the shard's rows, generated on it", &|i| {
        let mut v =
            vec!["create temporary table stampede_hash(k int) partition by hash (k)".to_string()];
        let filter = format!(
            "satisfies_hash_partition('pg_temp.stampede_hash'::regclass, {n}, {i}, b::int)"
        );
        v.extend(sql::generate(
            shape,
            (1, sql::key_count(shape)),
            &suffix(i),
            Some(&filter),
        ));
        v
    });

    let mut phases = vec![
        Phase {
            name: "drop tables",
            steps: drops,
        },
        Phase {
            name: "create tables",
            steps: creates,
        },
        Phase {
            name: "server-side generate",
            steps: generate,
        },
        Phase {
            name: "primary keys",
            steps: per_shard("keys", &|i| sql::keys(shape, &suffix(i))),
        },
    ];
    if !opts.no_vacuum {
        phases.push(Phase {
            name: "vacuum",
            steps: per_shard("vacuum", &|i| sql::vacuum(shape, &suffix(i))),
        });
        // The coordinator's statistics of its foreign partitions (samples fetched from the
        // vacuumed shards), for its row estimates.
        let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
        phases.push(Phase {
            name: "analyze",
            steps: vec![coord(
                "statistics",
                vec![format!("analyze {}", names.join(", "))],
            )],
        });
    }
    phases
}
