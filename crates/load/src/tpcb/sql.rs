//! The SQL of pgbench's schema (pgbench.c `initCreateTables`, `createPartitions`,
//! `initCreatePKeys`, `initCreateFKeys`, `initDropTables`, `initVacuum`) and of seed 000's reset,
//! and their MySQL counterparts (`*_mysql`, `*_MYSQL`).

use std::ops::Range;

use super::{InitOptions, PartitionMethod};

/// The DROP (pgbench.c `initDropTables`).
pub const DROP_SQL: &str =
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// The CREATE TABLE statements, in pgbench's order, partitions last. `server_version_num`
/// matters only from PostgreSQL 18 on, which rejects `UNLOGGED` on a partitioned table: then,
/// as pgbench 18 does, `--unlogged-tables` with partitions makes only the partitions unlogged
/// (the four tables are created logged: a logged table's foreign key cannot reference an
/// unlogged one, and the parent cannot be unlogged). Before 18, pgbench 15's rule: every table
/// unlogged.
pub fn create_sql(opts: &InitOptions, server_version_num: u32) -> Vec<String> {
    // (table, columns for 32-bit aids, columns for 64-bit aids, declare fillfactor)
    const DDLS: [(&str, &str, &str, bool); 4] = [
        (
            "pgbench_history",
            "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
            "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
            false,
        ),
        (
            "pgbench_tellers",
            "tid int not null,bid int,tbalance int,filler char(84)",
            "tid int not null,bid int,tbalance int,filler char(84)",
            true,
        ),
        (
            "pgbench_accounts",
            "aid    int not null,bid int,abalance int,filler char(84)",
            "aid bigint not null,bid int,abalance int,filler char(84)",
            true,
        ),
        (
            "pgbench_branches",
            "bid int not null,bbalance int,filler char(88)",
            "bid int not null,bbalance int,filler char(88)",
            true,
        ),
    ];
    let unlogged = if opts.unlogged { " unlogged" } else { "" };
    let method = opts.method();
    let mut out = Vec::new();
    for (table, small, big, fillfactor) in DDLS {
        let cols = if opts.bigint_aid() { big } else { small };
        let partitioned = method.is_some() && table == "pgbench_accounts";
        let table_unlogged = if method.is_some() && server_version_num >= 180000 {
            ""
        } else {
            unlogged
        };
        let mut sql = format!("create{table_unlogged} table {table}({cols})");
        if let (true, Some(m)) = (partitioned, method) {
            sql.push_str(&format!(" partition by {} (aid)", m.sql()));
        } else if fillfactor {
            // "fillfactor is only expected on actual tables"
            sql.push_str(&format!(" with (fillfactor={})", opts.fillfactor));
        }
        if let Some(ts) = &opts.tablespace {
            sql.push_str(&format!(" tablespace {}", quote_ident(ts)));
        }
        out.push(sql);
    }
    if let Some(m) = method {
        let total = opts.total_accounts() as i64;
        let parts = opts.partitions as i64;
        for p in 1..=parts {
            let bound = match m {
                PartitionMethod::Range => {
                    // "For RANGE, we use open-ended partitions at the beginning and end to allow
                    // any valid value for the primary key."
                    let part_size = (total + parts - 1) / parts;
                    let from = if p == 1 {
                        "minvalue".to_string()
                    } else {
                        ((p - 1) * part_size + 1).to_string()
                    };
                    let to = if p < parts {
                        (p * part_size + 1).to_string()
                    } else {
                        "maxvalue".to_string()
                    };
                    format!("for values from ({from}) to ({to})")
                }
                PartitionMethod::Hash => {
                    format!("for values with (modulus {parts}, remainder {})", p - 1)
                }
            };
            out.push(format!(
                "create{unlogged} table pgbench_accounts_{p}\n  partition of pgbench_accounts\n  {bound} with (fillfactor={})",
                opts.fillfactor
            ));
        }
    }
    out
}

/// The CREATE TABLE statements for MySQL and MariaDB, in pgbench's order: pgbench's columns
/// (`mtime` a DATETIME: PostgreSQL's `timestamp` has no time zone, as DATETIME; MySQL's
/// TIMESTAMP converts to UTC and, unless `explicit_defaults_for_timestamp`, defaults to the
/// current time and updates itself), InnoDB, and the primary keys inline: InnoDB clusters a
/// table's rows by its primary key, so adding the key after the load would rebuild the table.
/// pgbench_history has none, as in pgbench (InnoDB clusters it by a hidden row id).
pub fn create_sql_mysql(opts: &InitOptions) -> Vec<String> {
    let aid = if opts.bigint_aid() { "bigint" } else { "int" };
    [
        format!(
            "create table pgbench_history(tid int,bid int,aid {aid},delta int,mtime datetime,filler char(22)) engine=InnoDB"
        ),
        "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84),primary key (tid)) engine=InnoDB".to_string(),
        format!(
            "create table pgbench_accounts(aid {aid} not null,bid int,abalance int,filler char(84),primary key (aid)) engine=InnoDB"
        ),
        "create table pgbench_branches(bid int not null,bbalance int,filler char(88),primary key (bid)) engine=InnoDB".to_string(),
    ]
    .into()
}

/// The rows (0-based row numbers, i.e. aid - 1) inside range partition `p` (1-based) of
/// `partitions`, by createPartitions' bounds.
pub fn range_partition_rows(p: u64, partitions: u64, total: u64) -> Range<u64> {
    let part_size = total.div_ceil(partitions);
    let lo = ((p - 1) * part_size).min(total);
    let hi = if p == partitions {
        total
    } else {
        (p * part_size).min(total)
    };
    lo..hi
}

/// An identifier quoted as libpq's `PQescapeIdentifier` quotes it: in double quotes, a double
/// quote doubled.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// pgbench.c `initCreatePKeys`, with `--index-tablespace`.
pub fn pkey_sql(opts: &InitOptions) -> Vec<String> {
    PKEY_SQL
        .iter()
        .map(|sql| match &opts.index_tablespace {
            Some(ts) => format!("{sql} using index tablespace {}", quote_ident(ts)),
            None => sql.to_string(),
        })
        .collect()
}

/// pgbench.c `initCreatePKeys`.
pub const PKEY_SQL: [&str; 3] = [
    "alter table pgbench_branches add primary key (bid)",
    "alter table pgbench_tellers add primary key (tid)",
    "alter table pgbench_accounts add primary key (aid)",
];

/// pgbench.c `initCreateFKeys`.
pub const FKEY_SQL: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
];

/// [`FKEY_SQL`] for MySQL, which needs the referenced columns named.
pub const FKEY_SQL_MYSQL: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches (bid)",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches (bid)",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches (bid)",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers (tid)",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts (aid)",
];

/// The MySQL counterpart of [`VACUUM_SQL`]: InnoDB needs no vacuum; its index statistics are
/// refreshed, as VACUUM ANALYZE refreshes PostgreSQL's.
pub const ANALYZE_SQL_MYSQL: [&str; 1] =
    ["analyze table pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"];

/// pgbench.c `initVacuum`.
pub const VACUUM_SQL: [&str; 4] = [
    "vacuum analyze pgbench_branches",
    "vacuum analyze pgbench_tellers",
    "vacuum analyze pgbench_accounts",
    "vacuum analyze pgbench_history",
];

/// Seed 000's `vacuum.sql`: put the balances back, empty the history, vacuum.
pub const RESET_SQL: [&str; 4] = [
    "update pgbench_branches set bbalance = 0 where bbalance <> 0",
    "update pgbench_tellers set tbalance = 0 where tbalance <> 0",
    "update pgbench_accounts set abalance = 0 where abalance <> 0",
    "truncate table pgbench_history",
];
