//! The postgres_fdw layout (`init --layout fdw`, `load::layout`): on the coordinator each
//! sharded table is hash-partitioned with one foreign-table partition per shard; the rows, the
//! keys and so the sizes are on the shard servers. Read from the coordinator's catalog:
//! the partitions, their foreign servers (`pg_foreign_server.srvoptions`: host, port, dbname) and
//! the current user's mapping (`pg_user_mappings.umoptions`: user, password, visible to the
//! mapped user); then each shard server is read directly, as postgres_fdw reaches it
//! (PostgreSQL's "postgres_fdw" chapter, F.38.1 "Connection Options" and "Object Name Options":
//! `table_name`, `schema_name`). A shard that does not answer is a note.
//!
//! Kind: a partitioned table with foreign partitions is sharded; every other table local.
//! Collocation: tables hashed on one key type, with the same modulus and the same server for
//! each remainder keep one key's rows on one shard (PostgreSQL's hash partitioning is the same
//! function for the same type), so that is the group's name.

use std::collections::BTreeMap;

use measure::sizes::{ShardSize, Sizes, TableShard, SHARDED};
use sut::conninfo::{HostSpec, Password};
use sut::{ConnConfig, Session, Target};

use super::{lit, note, num, opt_num, text};

/// Each foreign partition of a partitioned table: parent, server, remote schema and table,
/// its remainder and modulus, the partition key and its type.
const PARTITIONS: &str = "select i.inhparent::regclass::text, srv.srvname, \
       coalesce((select option_value from pg_options_to_table(ft.ftoptions) \
                 where option_name = 'schema_name'), n.nspname), \
       coalesce((select option_value from pg_options_to_table(ft.ftoptions) \
                 where option_name = 'table_name'), c.relname), \
       substring(pg_get_expr(c.relpartbound, c.oid) from 'remainder (\\d+)'), \
       substring(pg_get_expr(c.relpartbound, c.oid) from 'modulus (\\d+)'), \
       pg_get_partkeydef(i.inhparent), \
       (select format_type(a.atttypid, null) from pg_catalog.pg_partitioned_table pt \
          join pg_catalog.pg_attribute a on a.attrelid = pt.partrelid \
           and a.attnum = pt.partattrs[0] \
        where pt.partrelid = i.inhparent) \
     from pg_catalog.pg_foreign_table ft \
     join pg_catalog.pg_class c on c.oid = ft.ftrelid \
     join pg_catalog.pg_namespace n on n.oid = c.relnamespace \
     join pg_catalog.pg_inherits i on i.inhrelid = ft.ftrelid \
     join pg_catalog.pg_foreign_server srv on srv.oid = ft.ftserver";

/// Each foreign server's connection options, and the current user's mapping (user, password;
/// NULL where the catalog does not show them to this role).
const SERVERS: &str = "select s.srvname, \
       (select option_value from pg_options_to_table(s.srvoptions) where option_name = 'host'), \
       (select option_value from pg_options_to_table(s.srvoptions) where option_name = 'port'), \
       (select option_value from pg_options_to_table(s.srvoptions) where option_name = 'dbname'), \
       (select option_value from pg_options_to_table(m.umoptions) where option_name = 'user'), \
       (select option_value from pg_options_to_table(m.umoptions) where option_name = 'password') \
     from pg_catalog.pg_foreign_server s \
     left join pg_catalog.pg_user_mappings m on m.srvid = s.oid \
       and m.usename in (current_user, 'public') \
     order by s.srvname, m.usename = 'public'";

/// One foreign partition.
struct Part {
    parent: String,
    server: String,
    schema: String,
    table: String,
    remainder: Option<u64>,
    modulus: Option<u64>,
    key: String,
    key_type: String,
}

pub(super) async fn read(s: &mut Session, target: &Target, sizes: &mut Sizes) {
    let parts: Vec<Part> = match super::query(s, PARTITIONS).await {
        Ok(rows) => rows
            .iter()
            .map(|r| Part {
                parent: text(r, 0),
                server: text(r, 1),
                schema: text(r, 2),
                table: text(r, 3),
                remainder: opt_num(r, 4),
                modulus: opt_num(r, 5),
                key: shard_key(&text(r, 6)),
                key_type: text(r, 7),
            })
            .collect(),
        Err(e) => return note(sizes, "the foreign partitions (pg_foreign_table)", &e),
    };
    let servers = match super::query(s, SERVERS).await {
        Ok(rows) => rows,
        Err(e) => return note(sizes, "the foreign servers (pg_foreign_server)", &e),
    };
    let Some(base) = target.pg() else { return };
    // The first row of each server: the current user's mapping before PUBLIC's.
    let mut conns: BTreeMap<String, (ConnConfig, String)> = BTreeMap::new();
    for r in &servers {
        let name = text(r, 0);
        if conns.contains_key(&name) || !parts.iter().any(|p| p.server == name) {
            continue;
        }
        conns.insert(name, shard_conn(base, r));
    }

    // Each shard: its database and the parts it holds.
    let mut on_shard: BTreeMap<(String, String), TableShard> = BTreeMap::new();
    let coordinator = sizes.database_bytes;
    let mut shard_total = 0;
    for (server, (conn, location)) in &conns {
        let mine: Vec<&Part> = parts.iter().filter(|p| &p.server == server).collect();
        let mut shard = ShardSize {
            shard: server.clone(),
            location: Some(location.clone()),
            database_bytes: None,
        };
        match read_shard(conn, &mine).await {
            Ok((db, tables)) => {
                shard.database_bytes = db;
                shard_total += db.unwrap_or(0);
                for (p, t) in mine.iter().zip(tables) {
                    on_shard.insert((p.parent.clone(), server.clone()), t);
                }
            }
            Err(e) => note(sizes, &format!("shard {server} ({location})"), &e),
        }
        sizes.shards.push(shard);
    }
    if let Some(c) = coordinator {
        sizes.database_bytes = Some(c + shard_total);
    }

    // The sharded tables: their parts summed, kind and collocation group.
    for t in &mut sizes.tables {
        let mine: Vec<&Part> = parts.iter().filter(|p| p.parent == t.name).collect();
        let Some(first) = mine.first() else { continue };
        t.kind = SHARDED.to_string();
        t.shard_key = Some(first.key.clone());
        let mut by_remainder: Vec<(u64, &str)> = mine
            .iter()
            .map(|p| (p.remainder.unwrap_or(0), p.server.as_str()))
            .collect();
        by_remainder.sort();
        let servers: Vec<&str> = by_remainder.iter().map(|p| p.1).collect();
        t.colocation = Some(format!(
            "hash({}) modulus {}: {}",
            first.key_type,
            first.modulus.unwrap_or(mine.len() as u64),
            servers.join(", ")
        ));
        for p in &mine {
            if let Some(part) = on_shard.remove(&(p.parent.clone(), p.server.clone())) {
                t.table_bytes += part.table_bytes.unwrap_or(0);
                t.index_bytes += part.index_bytes.unwrap_or(0);
                t.shards.push(part);
            }
        }
    }
}

/// `HASH (bid)` -> `bid`.
pub(super) fn shard_key(def: &str) -> String {
    let inner = def
        .split_once('(')
        .map_or(def, |(_, r)| r.trim_end().trim_end_matches(')'));
    inner.trim().to_string()
}

/// How to reach a foreign server: its options over the coordinator's connection (TLS and
/// timeouts as the coordinator's), and where it is, as printed (no password).
pub(super) fn shard_conn(base: &ConnConfig, r: &[Option<String>]) -> (ConnConfig, String) {
    let mut c = base.clone();
    let hosts: Vec<String> = match r.get(1).cloned().flatten() {
        Some(h) => h.split(',').map(|h| h.trim().to_string()).collect(),
        None => base.hosts.iter().map(|h| h.host.clone()).collect(),
    };
    let ports: Vec<u16> = match r.get(2).cloned().flatten() {
        Some(p) => p.split(',').filter_map(|p| p.trim().parse().ok()).collect(),
        None => vec![pg::conninfo::DEFAULT_PORT],
    };
    c.hosts = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| HostSpec {
            host: h.clone(),
            port: *ports
                .get(i)
                .or(ports.first())
                .unwrap_or(&pg::conninfo::DEFAULT_PORT),
        })
        .collect();
    if let Some(db) = r.get(3).cloned().flatten() {
        c.dbname = db;
    }
    if let Some(u) = r.get(4).cloned().flatten() {
        c.user = u;
    }
    if let Some(p) = r.get(5).cloned().flatten() {
        c.password = Some(Password(p));
    }
    let location = format!(
        "host={} port={} dbname={}",
        hosts.join(","),
        c.hosts
            .iter()
            .map(|h| h.port.to_string())
            .collect::<Vec<_>>()
            .join(","),
        c.dbname
    );
    (c, location)
}

/// One shard: its database's size and each part's (in `parts`' order).
async fn read_shard(
    conn: &ConnConfig,
    parts: &[&Part],
) -> Result<(Option<u64>, Vec<TableShard>), sut::Error> {
    let mut s = Session::connect(&Target::Pg(conn.clone())).await?;
    let r = async {
        let db = s
            .simple_query("select pg_database_size(current_database())")
            .await?;
        let mut out = Vec::new();
        for p in parts {
            let rel = format!(
                "to_regclass(quote_ident({}) || '.' || quote_ident({}))",
                lit(&p.schema),
                lit(&p.table)
            );
            let rows = s
                .simple_query(&format!(
                    "select pg_table_size({rel}), pg_indexes_size({rel})"
                ))
                .await?;
            let row = rows.first().cloned().unwrap_or_default();
            let (t, i) = (num(&row, 0), num(&row, 1));
            out.push(TableShard {
                shard: p.server.clone(),
                total_bytes: t + i,
                table_bytes: Some(t),
                index_bytes: Some(i),
            });
        }
        Ok((db.first().map(|r| num(r, 0)), out))
    }
    .await;
    s.close().await;
    r
}
