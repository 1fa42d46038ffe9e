//! The SQL every layout shares: the tables' columns (pgbench's and sysbench's, without
//! `fillfactor`, which Limitless refuses), the keys with the shard key in them, and the
//! server-side generation of a slice of keys (pgbench's `-I G`).

use super::Shape;

/// A table of the shape: its name and its column list.
pub(crate) struct Table {
    pub name: String,
    pub columns: &'static str,
    /// The shard key.
    pub key: &'static str,
}

/// The tables in creation order: the one the others are collocated with first.
pub(crate) fn tables(shape: &Shape) -> Vec<Table> {
    match shape {
        Shape::Tpcb { scale } => {
            // pgbench.c: 64-bit aids from scale 20000 on.
            let aid = if *scale >= 20_000 { "bigint" } else { "int" };
            let accounts = if aid == "int" {
                "aid int not null, bid int, abalance int, filler char(84)"
            } else {
                "aid bigint not null, bid int, abalance int, filler char(84)"
            };
            let history = if aid == "int" {
                "tid int, bid int, aid int, delta int, mtime timestamp, filler char(22)"
            } else {
                "tid int, bid int, aid bigint, delta int, mtime timestamp, filler char(22)"
            };
            vec![
                table(
                    "pgbench_branches",
                    "bid int not null, bbalance int, filler char(88)",
                    "bid",
                ),
                table(
                    "pgbench_tellers",
                    "tid int not null, bid int, tbalance int, filler char(84)",
                    "bid",
                ),
                table("pgbench_accounts", accounts, "bid"),
                table("pgbench_history", history, "bid"),
            ]
        }
        Shape::Oltp { tables, .. } => (1..=*tables)
            .map(|t| Table {
                name: format!("sbtest{t}"),
                columns: "id integer not null, k integer default '0' not null, \
                          c char(120) default '' not null, pad char(60) default '' not null",
                key: "id",
            })
            .collect(),
    }
}

fn table(name: &str, columns: &'static str, key: &'static str) -> Table {
    Table {
        name: name.to_string(),
        columns,
        key,
    }
}

/// The DROP of the shape's tables (suffixed: a shard's own), never CASCADE.
pub(crate) fn drop_tables(shape: &Shape, suffix: &str) -> String {
    let names: Vec<String> = tables(shape)
        .iter()
        .map(|t| format!("{}{suffix}", t.name))
        .collect();
    format!("drop table if exists {}", names.join(", "))
}

/// The keys, each with the shard key in it (seed 000's `limitless_creidx.psql`), and sysbench's
/// secondary index on `k`. pgbench_history has none, as in pgbench.
pub(crate) fn keys(shape: &Shape, suffix: &str) -> Vec<String> {
    match shape {
        Shape::Tpcb { .. } => vec![
            format!("alter table pgbench_branches{suffix} add primary key (bid)"),
            format!("alter table pgbench_tellers{suffix} add primary key (tid, bid)"),
            format!("alter table pgbench_accounts{suffix} add primary key (aid, bid)"),
        ],
        Shape::Oltp { tables, .. } => (1..=*tables)
            .flat_map(|t| {
                [
                    format!("alter table sbtest{t}{suffix} add primary key (id)"),
                    format!("create index k_{t}{suffix} on sbtest{t}{suffix}(k)"),
                ]
            })
            .collect(),
    }
}

/// The number of shard-key values: branches, or ids per table.
pub(crate) fn key_count(shape: &Shape) -> i64 {
    match shape {
        Shape::Tpcb { scale } => *scale,
        Shape::Oltp { table_size, .. } => *table_size as i64,
    }
}

/// The statements that load the key values `lo..=hi` into the tables (suffixed), keeping only the
/// keys `filter` accepts (`filter` is a condition on `b`, the key: fdw's shard test).
pub(crate) fn generate(
    shape: &Shape,
    (lo, hi): (i64, i64),
    suffix: &str,
    filter: Option<&str>,
) -> Vec<String> {
    let cond = filter.map_or(String::new(), |f| format!(" where {f}"));
    match shape {
        Shape::Tpcb { .. } => vec![
            format!(
                "insert into pgbench_branches{suffix}(bid,bbalance) \
                 select b, 0 from generate_series({lo}, {hi}) b{cond}"
            ),
            format!(
                "insert into pgbench_tellers{suffix}(tid,bid,tbalance) \
                 select tid, b, 0 from generate_series({lo}, {hi}) b, \
                 generate_series(10 * (b - 1) + 1, 10 * b) tid{cond}"
            ),
            format!(
                "insert into pgbench_accounts{suffix}(aid,bid,abalance,filler) \
                 select aid, b, 0, '' from generate_series({lo}, {hi}) b, \
                 generate_series(100000::bigint * (b - 1) + 1, 100000::bigint * b) aid{cond}"
            ),
        ],
        Shape::Oltp { tables, table_size } => (1..=*tables)
            .map(|t| {
                format!(
                    "insert into sbtest{t}{suffix}(id,k,c,pad) \
                     select b, floor(random() * {table_size})::int + 1, \
                     left(repeat(md5(random()::text), 4), 119), \
                     left(repeat(md5(random()::text), 2), 59) \
                     from generate_series({lo}, {hi}) b{cond}"
                )
            })
            .collect(),
    }
}

/// VACUUM ANALYZE of each table (seed 000's `vacuum.psql`).
pub(crate) fn vacuum(shape: &Shape, suffix: &str) -> Vec<String> {
    tables(shape)
        .iter()
        .map(|t| format!("vacuum analyze {}{suffix}", t.name))
        .collect()
}

/// `s` as an SQL string literal.
pub(crate) fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
