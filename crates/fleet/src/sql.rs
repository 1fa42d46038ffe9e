//! The fleet table's SQL (PostgreSQL). Names are checked by `check_name` before they reach a
//! literal; results travel base64-encoded, so no text of theirs is ever quoted.

use anyhow::{Context, Result};
use base64::Engine as _;
use target::Session;

use crate::Identity;

/// The table. `idx = -1` is the fleet's header row; times are microseconds since the Unix epoch
/// on the server's clock.
pub(crate) const CREATE: &str = "CREATE TABLE IF NOT EXISTS stampede_fleet (\
     fleet text NOT NULL, \
     idx integer NOT NULL, \
     size integer, \
     hostname text, \
     os_pid bigint, \
     backend_pid integer, \
     clients integer, \
     joined_us bigint NOT NULL \
         DEFAULT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, \
     start_us bigint, \
     s0 bigint, \
     s1 bigint, \
     per_connection bigint, \
     failure text, \
     result text, \
     stage integer NOT NULL DEFAULT 0, \
     PRIMARY KEY (fleet, idx))";

/// Waiting happens in a read-only transaction, ended by ROLLBACK: polling costs no commit.
pub(crate) const BEGIN_READ_ONLY: &str = "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY";

pub(crate) const SERVER_NOW_US: &str =
    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

/// The database's commit counter, from a fresh statistics snapshot.
pub(crate) const COMMITS: &str = "SELECT pg_stat_clear_snapshot(), xact_commit \
     FROM pg_stat_database WHERE datname = current_database()";

/// Other stampede sessions on the database (the fleet's processes, their clients).
pub(crate) const OTHER_STAMPEDE_SESSIONS: &str = "SELECT count(*) FROM pg_stat_activity \
     WHERE datname = current_database() AND backend_type = 'client backend' \
     AND pid <> pg_backend_pid() AND application_name = 'stampede'";

fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub(crate) fn create_header(name: &str, size: u32) -> String {
    format!(
        "INSERT INTO stampede_fleet (fleet, idx, size) VALUES ({}, -1, {size}) \
         ON CONFLICT DO NOTHING",
        lit(name)
    )
}

/// Insert this process's row at `index`, or at the next free index; returns the index taken
/// (no row when it was taken already).
pub(crate) fn insert_member(name: &str, index: Option<u32>, me: &Identity, pid: u32) -> String {
    let idx = match index {
        Some(i) => i.to_string(),
        None => format!(
            "(SELECT coalesce(max(idx), -1) + 1 FROM stampede_fleet WHERE fleet = {})",
            lit(name)
        ),
    };
    format!(
        "INSERT INTO stampede_fleet (fleet, idx, hostname, os_pid, backend_pid, clients) \
         VALUES ({}, {idx}, {}, {pid}, pg_backend_pid(), {}) ON CONFLICT DO NOTHING RETURNING idx",
        lit(name),
        lit(&me.hostname),
        me.clients
    )
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

pub(crate) fn set_start(name: &str, lead_us: i64, s0: i64, per_connection: i64) -> String {
    format!(
        "UPDATE stampede_fleet SET start_us = (extract(epoch FROM clock_timestamp()) * 1000000)\
         ::bigint + {lead_us}, s0 = {s0}, per_connection = {per_connection} \
         WHERE fleet = {} AND idx = -1",
        lit(name)
    )
}

pub(crate) fn set_s1(name: &str, s1: i64) -> String {
    format!(
        "UPDATE stampede_fleet SET s1 = {s1} WHERE fleet = {} AND idx = -1",
        lit(name)
    )
}

pub(crate) fn store_result(name: &str, index: u32, json: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(json);
    format!(
        "UPDATE stampede_fleet SET result = convert_from(decode('{b64}', 'base64'), 'UTF8') \
         WHERE fleet = {} AND idx = {index}",
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
}

fn num(v: &Option<String>) -> Option<i64> {
    v.as_deref().and_then(|v| v.parse().ok())
}

pub(crate) async fn header(s: &mut Session, name: &str) -> Result<Header> {
    let rows = s
        .simple_query(&format!(
            "SELECT size, start_us, s0, s1, per_connection, failure FROM stampede_fleet \
             WHERE fleet = {} AND idx = -1",
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
    scalar(s, COMMITS).await
}

/// Inside a transaction PostgreSQL keeps the first reading of `pg_stat_activity` (and of the
/// statistics) until the transaction ends; the waits here run in one long read-only
/// transaction, so each reading of who is connected clears that snapshot first.
async fn fresh_activity(s: &mut Session) -> Result<()> {
    s.simple_query("SELECT pg_stat_clear_snapshot()").await?;
    Ok(())
}

pub(crate) async fn other_sessions(s: &mut Session) -> Result<i64> {
    fresh_activity(s).await?;
    scalar(s, OTHER_STAMPEDE_SESSIONS).await
}

/// Each process's row: index, whether it stored a result, whether its fleet session is gone.
pub(crate) async fn members(s: &mut Session, name: &str) -> Result<Vec<(u32, bool, bool)>> {
    fresh_activity(s).await?;
    let rows = s
        .simple_query(&format!(
            "SELECT idx, result IS NOT NULL, NOT EXISTS (SELECT 1 FROM pg_stat_activity a \
             WHERE a.pid = f.backend_pid) FROM stampede_fleet f WHERE fleet = {} AND idx >= 0 \
             ORDER BY idx",
            lit(name)
        ))
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                num(&r[0]).unwrap_or(0) as u32,
                r[1].as_deref() == Some("t"),
                r[2].as_deref() == Some("t"),
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
    let only = who.map_or_else(String::new, |i| format!(" AND idx = {i}"));
    let rows = s
        .simple_query(&format!(
            "SELECT count(*) FILTER (WHERE stage < {stage}), count(*) FILTER (WHERE stage < \
             {stage} AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = \
             f.backend_pid)) FROM stampede_fleet f WHERE fleet = {} AND idx >= 0{only}",
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
    scalar(
        s,
        &format!(
            "SELECT count(*) FROM stampede_fleet f WHERE fleet = {} AND idx >= 0 AND idx <> {me} \
             AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = f.backend_pid)",
            lit(name)
        ),
    )
    .await
}
