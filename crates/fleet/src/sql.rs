//! The fleet table's SQL, in PostgreSQL's and MySQL's dialects side by side: one function per
//! statement, taking the dialect, so the two can only differ where the servers do. Names are
//! checked by `check_name` before they reach a literal; results travel base64-encoded, so no
//! text of theirs is ever quoted.
//!
//! Where the dialects differ, by example:
//!
//! | what                 | PostgreSQL                                   | MySQL / MariaDB                         |
//! |----------------------|----------------------------------------------|-----------------------------------------|
//! | now, in us           | `extract(epoch FROM clock_timestamp())*1e6`  | `UNIX_TIMESTAMP(NOW(6)) * 1000000`      |
//! | insert if free       | `INSERT ... ON CONFLICT DO NOTHING`          | `INSERT IGNORE ...`                     |
//! | the index taken      | `RETURNING idx`                              | a SELECT by `CONNECTION_ID()`           |
//! | this session's id    | `pg_backend_pid()`                           | `CONNECTION_ID()`                       |
//! | is a session alive   | `pg_stat_activity.pid`                       | `information_schema.PROCESSLIST.ID`     |
//! | commit counter       | `pg_stat_database.xact_commit` (the database)| `Com_commit` (global: the whole server) |
//! | a result (JSON)      | `text`, `convert_from(decode(.., 'base64'))` | `LONGTEXT`, `FROM_BASE64(..)`           |

use anyhow::{Context, Result};
use base64::Engine as _;
use sut::{Dialect, Session};

use crate::Identity;

/// The table. `idx = -1` is the fleet's header row; times are microseconds since the Unix epoch
/// on the server's clock. `others`: MySQL only, sessions that were not the fleet's seen at a
/// snapshot (its counter is the whole server's).
pub(crate) fn create(d: Dialect) -> String {
    // MySQL's key columns need a length; its long text is LONGTEXT.
    let (name, text, long) = match d {
        Dialect::Postgres => ("text", "text", "text"),
        Dialect::MySql => ("varchar(63)", "varchar(255)", "LONGTEXT"),
    };
    format!(
        "CREATE TABLE IF NOT EXISTS stampede_fleet (\
         fleet {name} NOT NULL, \
         idx integer NOT NULL, \
         size integer, \
         hostname {text}, \
         os_pid bigint, \
         backend_pid bigint, \
         clients integer, \
         joined_us bigint, \
         start_us bigint, \
         s0 bigint, \
         s1 bigint, \
         per_connection bigint, \
         failure {long}, \
         result {long}, \
         stage integer NOT NULL DEFAULT 0, \
         others integer, \
         maintenance0 bigint, \
         maintenance1 bigint, \
         PRIMARY KEY (fleet, idx))"
    )
}

/// The columns added to `stampede_fleet` since its first form, each with its type.
const ADDED_COLUMNS: [(&str, &str); 3] = [
    ("others", "integer"),
    ("maintenance0", "bigint"),
    ("maintenance1", "bigint"),
];

/// A `stampede_fleet` made by an older stampede lacks the columns added since
/// ([`ADDED_COLUMNS`]): add them, as the table is stampede's own. Its rows stay (`fleet report`
/// reads old fleets).
pub(crate) async fn upgrade(s: &mut Session) -> Result<()> {
    // MySQL's current schema is its database.
    let schema = match s.dialect() {
        Dialect::Postgres => "current_schema()",
        Dialect::MySql => "DATABASE()",
    };
    for (column, kind) in ADDED_COLUMNS {
        let has = format!(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = \
             'stampede_fleet' AND column_name = '{column}' AND table_schema = {schema}"
        );
        if scalar(s, &has).await? > 0 {
            continue;
        }
        let added = s
            .simple_query(&format!(
                "ALTER TABLE stampede_fleet ADD COLUMN {column} {kind}"
            ))
            .await;
        // Another process of the fleet may have added it first.
        if added.is_err() && scalar(s, &has).await? == 0 {
            added.with_context(|| {
                format!("adding the column `{column}` to an older stampede_fleet table")
            })?;
        }
    }
    Ok(())
}

/// The server's clock, microseconds since the Unix epoch. PostgreSQL's `clock_timestamp()` is
/// the time of the call; MySQL's `NOW(6)` the start of the statement, the same for a SELECT of
/// one row. `UNIX_TIMESTAMP` of a DATETIME reads it in the session's time zone, which `NOW()`
/// wrote it in, so the epoch is UTC's whatever the zone.
fn now_us(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint",
        Dialect::MySql => "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)",
    }
}

fn backend_id(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "pg_backend_pid()",
        Dialect::MySql => "CONNECTION_ID()",
    }
}

/// True when the session of `f.backend_pid` is still connected.
fn alive(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => {
            "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = f.backend_pid)"
        }
        Dialect::MySql => {
            "EXISTS (SELECT 1 FROM information_schema.PROCESSLIST a WHERE a.ID = f.backend_pid)"
        }
    }
}

/// `INSERT` that does nothing when the key is taken.
fn insert_or_nothing(d: Dialect, rest: &str) -> String {
    match d {
        Dialect::Postgres => format!("INSERT INTO {rest} ON CONFLICT DO NOTHING"),
        Dialect::MySql => format!("INSERT IGNORE INTO {rest}"),
    }
}

/// Waiting happens in a read-only transaction, ended by ROLLBACK: polling costs no commit on
/// PostgreSQL, where every transaction, read-only or not, counts in `xact_commit`. On MySQL an
/// autocommitted SELECT moves `Com_select` (and `Handler_commit`), never `Com_commit`, and a
/// long transaction would read one snapshot (REPEATABLE READ) and never see the others join:
/// there the waits are plain autocommitted SELECTs, and these are `None`.
pub(crate) fn begin_read_only(d: Dialect) -> Option<&'static str> {
    match d {
        Dialect::Postgres => Some("BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY"),
        Dialect::MySql => None,
    }
}

pub(crate) fn end_read_only(d: Dialect) -> Option<&'static str> {
    begin_read_only(d).map(|_| "ROLLBACK")
}

pub(crate) fn server_now_us(d: Dialect) -> String {
    format!("SELECT {}", now_us(d))
}

/// The commit counter: the database's, from a fresh statistics snapshot (PostgreSQL), or the
/// server's COMMIT statements (MySQL, current when read).
pub(crate) fn commits_sql(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => {
            "SELECT pg_stat_clear_snapshot(), xact_commit \
             FROM pg_stat_database WHERE datname = current_database()"
        }
        Dialect::MySql => "SHOW GLOBAL STATUS LIKE 'Com_commit'",
    }
}

/// Autovacuum and autoanalyze runs so far on the database's tables (PostgreSQL, from a fresh
/// statistics snapshot, so it reads current figures inside a long transaction too): their
/// transactions count in `xact_commit` like the clients', so a commit check reads them around
/// its count, a single run's (`stampede`'s `checks`) and the fleet's, beside S0 and S1. MySQL
/// has no autovacuum, and `Com_commit` counts COMMIT statements only: `None`.
pub async fn maintenance_runs(s: &mut Session) -> Result<Option<i64>> {
    match s.dialect() {
        Dialect::Postgres => Ok(Some(
            scalar(
                s,
                "SELECT pg_stat_clear_snapshot(), \
                 coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables",
            )
            .await?,
        )),
        Dialect::MySql => Ok(None),
    }
}

/// The counter's name, for the fleet's commit check.
pub(crate) fn counter_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "xact_commit",
        Dialect::MySql => "Com_commit",
    }
}

/// Sessions other than this one that the fleet must wait out before S1: on PostgreSQL
/// stampede's own on the database (its counter is the database's); on MySQL every client
/// session (the counter is the server's, and the protocol names no application), leaving out
/// the server's own threads as the single-run check does (`checks::mysql`).
fn other_sessions_sql(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => {
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND backend_type = 'client backend' \
             AND pid <> pg_backend_pid() AND application_name = 'stampede'"
        }
        Dialect::MySql => {
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
             WHERE ID <> CONNECTION_ID() \
             AND COMMAND NOT IN ('Daemon', 'Binlog Dump', 'Binlog Dump GTID') \
             AND USER NOT IN ('system user', 'event_scheduler')"
        }
    }
}

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub(crate) fn create_header(d: Dialect, name: &str, size: u32) -> String {
    insert_or_nothing(
        d,
        &format!(
            "stampede_fleet (fleet, idx, size) VALUES ({}, -1, {size})",
            lit(name)
        ),
    )
}

/// Insert this process's row at `index`, or at the next free index (no row when it was taken
/// already).
fn insert_member_sql(
    d: Dialect,
    name: &str,
    index: Option<u32>,
    me: &Identity,
    pid: u32,
) -> String {
    let (idx, rows) = match index {
        // One row: from the header's.
        Some(i) => (i.to_string(), " AND idx = -1"),
        // Over every row of the fleet: the next free index.
        None => ("coalesce(max(idx), -1) + 1".to_string(), ""),
    };
    // INSERT ... SELECT: MySQL refuses a subquery on the table an INSERT ... VALUES writes.
    insert_or_nothing(
        d,
        &format!(
            "stampede_fleet (fleet, idx, hostname, os_pid, backend_pid, clients, joined_us) \
             SELECT {}, {idx}, {}, {pid}, {}, {}, {} FROM stampede_fleet WHERE fleet = {}{rows}",
            lit(name),
            lit(&me.hostname),
            backend_id(d),
            me.clients,
            now_us(d),
            lit(name)
        ),
    )
}

/// Insert this process's row; the index it took, or `None` when that index was taken. Two
/// MySQL sessions inserting at once (INSERT ... SELECT locks what it reads) may deadlock: the
/// loser was rolled back, so it tries again.
pub(crate) async fn insert_member(
    s: &mut Session,
    name: &str,
    index: Option<u32>,
    me: &Identity,
    pid: u32,
) -> Result<Option<i64>> {
    let sql = insert_member_sql(s.dialect(), name, index, me, pid);
    let mut tries = 0;
    loop {
        match insert_row(s, &sql, name).await {
            Err(e) if tries < 20 && is_deadlock(&e) => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(10 * tries)).await;
            }
            r => return r,
        }
    }
}

/// One try of [`insert_member`]'s `sql`: the index it took.
async fn insert_row(s: &mut Session, sql: &str, name: &str) -> Result<Option<i64>> {
    let rows = match s.dialect() {
        Dialect::Postgres => s.simple_query(&format!("{sql} RETURNING idx")).await?,
        Dialect::MySql => {
            s.simple_query(sql).await?;
            s.simple_query(&format!(
                "SELECT idx FROM stampede_fleet WHERE fleet = {} AND idx >= 0 \
                 AND backend_pid = CONNECTION_ID()",
                lit(name)
            ))
            .await?
        }
    };
    Ok(rows.first().and_then(|r| num(&r[0])))
}

fn is_deadlock(e: &anyhow::Error) -> bool {
    e.downcast_ref::<sut::Error>().is_some_and(|e| {
        matches!(
            sut::classify(e),
            sut::ErrorClass::Deadlock | sut::ErrorClass::Serialization
        )
    })
}

pub(crate) fn delete_beyond(name: &str, size: u32) -> String {
    format!(
        "DELETE FROM stampede_fleet WHERE fleet = {} AND idx >= {size}",
        lit(name)
    )
}

pub(crate) fn fail(name: &str, why: &str) -> String {
    format!(
        "UPDATE stampede_fleet SET failure = {} WHERE fleet = {} AND idx = -1",
        lit(why),
        lit(name)
    )
}

pub(crate) fn set_start(
    d: Dialect,
    name: &str,
    lead_us: i64,
    snap: &crate::coordinator::Snapshot,
) -> String {
    format!(
        "UPDATE stampede_fleet SET start_us = {} + {lead_us}, s0 = {}, \
         per_connection = {}, others = {}, maintenance0 = {} \
         WHERE fleet = {} AND idx = -1",
        now_us(d),
        snap.s0,
        snap.per_connection,
        or_null(snap.others),
        or_null(snap.maintenance),
        lit(name)
    )
}

fn or_null(v: Option<i64>) -> String {
    v.map_or("NULL".into(), |v| v.to_string())
}

pub(crate) fn set_s1(name: &str, s1: i64, others: Option<i64>, maintenance: Option<i64>) -> String {
    // The header keeps the larger count of foreign sessions of S0 and S1.
    let others = match others {
        Some(o) => format!(", others = GREATEST(coalesce(others, 0), {o})"),
        None => String::new(),
    };
    format!(
        "UPDATE stampede_fleet SET s1 = {s1}{others}, maintenance1 = {} \
         WHERE fleet = {} AND idx = -1",
        or_null(maintenance),
        lit(name)
    )
}

pub(crate) fn store_result(d: Dialect, name: &str, index: u32, json: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(json);
    let value = match d {
        Dialect::Postgres => format!("convert_from(decode('{b64}', 'base64'), 'UTF8')"),
        Dialect::MySql => format!("CONVERT(FROM_BASE64('{b64}') USING utf8mb4)"),
    };
    format!(
        "UPDATE stampede_fleet SET result = {value} WHERE fleet = {} AND idx = {index}",
        lit(name)
    )
}

pub(crate) fn forget(name: &str) -> String {
    format!("DELETE FROM stampede_fleet WHERE fleet = {}", lit(name))
}

/// The header row.
#[derive(Debug, Default)]
pub(crate) struct Header {
    pub size: u32,
    pub start_us: Option<i64>,
    pub s0: Option<i64>,
    pub s1: Option<i64>,
    pub per_connection: Option<i64>,
    pub failure: Option<String>,
    pub others: Option<i64>,
    /// Autovacuum/autoanalyze runs at S0 and at S1 (PostgreSQL).
    pub maintenance0: Option<i64>,
    pub maintenance1: Option<i64>,
}

fn num(v: &Option<String>) -> Option<i64> {
    v.as_deref().and_then(|v| v.parse().ok())
}

pub(crate) async fn header(s: &mut Session, name: &str) -> Result<Header> {
    let rows = s
        .simple_query(&format!(
            "SELECT size, start_us, s0, s1, per_connection, failure, others, maintenance0, \
             maintenance1 FROM stampede_fleet WHERE fleet = {} AND idx = -1",
            lit(name)
        ))
        .await?;
    let r = rows
        .first()
        .with_context(|| format!("fleet {name} does not exist (no stampede_fleet row)"))?;
    Ok(Header {
        size: num(&r[0]).unwrap_or(0) as u32,
        start_us: num(&r[1]),
        s0: num(&r[2]),
        s1: num(&r[3]),
        per_connection: num(&r[4]),
        failure: r[5].clone(),
        others: num(&r[6]),
        maintenance0: num(&r[7]),
        maintenance1: num(&r[8]),
    })
}

async fn scalar(s: &mut Session, sql: &str) -> Result<i64> {
    let rows = s.simple_query(sql).await?;
    Ok(rows.last().and_then(|r| num(&r[r.len() - 1])).unwrap_or(0))
}

pub(crate) async fn joined(s: &mut Session, name: &str) -> Result<i64> {
    scalar(
        s,
        &format!(
            "SELECT count(*) FROM stampede_fleet WHERE fleet = {} AND idx >= 0",
            lit(name)
        ),
    )
    .await
}

pub(crate) async fn clients_before(s: &mut Session, name: &str, index: u32) -> Result<i64> {
    scalar(
        s,
        &format!(
            "SELECT coalesce(sum(clients), 0) FROM stampede_fleet WHERE fleet = {} \
             AND idx >= 0 AND idx < {index}",
            lit(name)
        ),
    )
    .await
}

pub(crate) async fn commits(s: &mut Session) -> Result<i64> {
    let d = s.dialect();
    scalar(s, commits_sql(d)).await
}

/// Inside a transaction PostgreSQL keeps the first reading of `pg_stat_activity` (and of the
/// statistics) until the transaction ends; the waits here run in one long read-only
/// transaction, so each reading of who is connected clears that snapshot first. MySQL's
/// PROCESSLIST is read afresh by every (autocommitted) SELECT.
async fn fresh_activity(s: &mut Session) -> Result<()> {
    if s.dialect() == Dialect::Postgres {
        s.simple_query("SELECT pg_stat_clear_snapshot()").await?;
    }
    Ok(())
}

pub(crate) async fn other_sessions(s: &mut Session) -> Result<i64> {
    fresh_activity(s).await?;
    let d = s.dialect();
    scalar(s, other_sessions_sql(d)).await
}

/// MySQL: client sessions on the server that are not the fleet's (its members' fleet sessions
/// are in the table; their clients are not connected at S0, and all are gone at S1).
pub(crate) async fn foreign_sessions(s: &mut Session, name: &str) -> Result<i64> {
    let d = s.dialect();
    scalar(
        s,
        &format!(
            "{} AND ID NOT IN (SELECT backend_pid FROM stampede_fleet WHERE fleet = {} \
             AND idx >= 0 AND backend_pid IS NOT NULL)",
            other_sessions_sql(d),
            lit(name)
        ),
    )
    .await
}

/// Each process's row: index, whether it stored a result, whether its fleet session is gone.
pub(crate) async fn members(s: &mut Session, name: &str) -> Result<Vec<(u32, bool, bool)>> {
    fresh_activity(s).await?;
    let d = s.dialect();
    let rows = s
        .simple_query(&format!(
            "SELECT idx, CASE WHEN result IS NULL THEN 0 ELSE 1 END, \
             CASE WHEN {} THEN 0 ELSE 1 END FROM stampede_fleet f WHERE fleet = {} \
             AND idx >= 0 ORDER BY idx",
            alive(d),
            lit(name)
        ))
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                num(&r[0]).unwrap_or(0) as u32,
                r[1].as_deref() == Some("1"),
                r[2].as_deref() == Some("1"),
            )
        })
        .collect())
}

/// Every member's stored result, by index.
pub(crate) async fn results(s: &mut Session, name: &str) -> Result<Vec<(u32, Option<String>)>> {
    let rows = s
        .simple_query(&format!(
            "SELECT idx, result FROM stampede_fleet WHERE fleet = {} AND idx >= 0 ORDER BY idx",
            lit(name)
        ))
        .await?;
    Ok(rows
        .iter()
        .map(|r| (num(&r[0]).unwrap_or(0) as u32, r[1].clone()))
        .collect())
}

pub(crate) fn set_stage(name: &str, index: u32, stage: i32) -> String {
    format!(
        "UPDATE stampede_fleet SET stage = {stage} WHERE fleet = {} AND idx = {index}",
        lit(name)
    )
}

/// Processes of the fleet (all, or one) not yet at `stage`, and failed ones (gone before it).
pub(crate) async fn behind(
    s: &mut Session,
    name: &str,
    who: Option<u32>,
    stage: i32,
) -> Result<(i64, i64)> {
    fresh_activity(s).await?;
    let d = s.dialect();
    let only = who.map_or_else(String::new, |i| format!(" AND idx = {i}"));
    let rows = s
        .simple_query(&format!(
            "SELECT coalesce(sum(CASE WHEN stage < {stage} THEN 1 ELSE 0 END), 0), \
             coalesce(sum(CASE WHEN stage < {stage} AND NOT {} THEN 1 ELSE 0 END), 0) \
             FROM stampede_fleet f WHERE fleet = {} AND idx >= 0{only}",
            alive(d),
            lit(name)
        ))
        .await?;
    let r = rows.first();
    Ok((
        r.and_then(|r| num(&r[0])).unwrap_or(0),
        r.and_then(|r| num(&r[1])).unwrap_or(0),
    ))
}

/// Other processes of the fleet whose session is still connected.
pub(crate) async fn still_connected(s: &mut Session, name: &str, me: u32) -> Result<i64> {
    fresh_activity(s).await?;
    let d = s.dialect();
    scalar(
        s,
        &format!(
            "SELECT count(*) FROM stampede_fleet f WHERE fleet = {} AND idx >= 0 AND idx <> {me} \
             AND {}",
            lit(name),
            alive(d)
        ),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statements of both dialects, by example: where they differ, and that a fleet's
    /// name reaches them only as a literal.
    #[test]
    fn each_statement_speaks_its_servers_dialect() {
        let me = Identity {
            hostname: "h".into(),
            clients: 4,
        };
        assert_eq!(
            insert_member_sql(Dialect::MySql, "n", None, &me, 7),
            "INSERT IGNORE INTO stampede_fleet (fleet, idx, hostname, os_pid, backend_pid, \
             clients, joined_us) SELECT 'n', coalesce(max(idx), -1) + 1, 'h', 7, \
             CONNECTION_ID(), 4, CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED) \
             FROM stampede_fleet WHERE fleet = 'n'"
        );
        assert_eq!(
            insert_member_sql(Dialect::Postgres, "n", Some(2), &me, 7),
            "INSERT INTO stampede_fleet (fleet, idx, hostname, os_pid, backend_pid, clients, \
             joined_us) SELECT 'n', 2, 'h', 7, pg_backend_pid(), 4, (extract(epoch FROM \
             clock_timestamp()) * 1000000)::bigint FROM stampede_fleet WHERE fleet = 'n' AND \
             idx = -1 ON CONFLICT DO NOTHING"
        );
        assert!(create(Dialect::MySql).contains("result LONGTEXT"));
        assert!(create(Dialect::Postgres).contains("result text"));
        assert_eq!(
            store_result(Dialect::MySql, "n", 1, "{}"),
            "UPDATE stampede_fleet SET result = CONVERT(FROM_BASE64('e30=') USING utf8mb4) \
             WHERE fleet = 'n' AND idx = 1"
        );
        assert!(begin_read_only(Dialect::MySql).is_none());
        assert_eq!(end_read_only(Dialect::Postgres), Some("ROLLBACK"));
        assert_eq!(
            commits_sql(Dialect::MySql),
            "SHOW GLOBAL STATUS LIKE 'Com_commit'"
        );
    }
}
