//! `stampede replay --capture SECONDS -o FILE`: record a live server's workload for a window,
//! without touching its configuration files by hand, into a replay file.
//!
//! PostgreSQL: `ALTER SYSTEM` turns on what a replay needs (`log_min_duration_statement = 0`,
//! `log_connections`, `log_disconnections`, and `csvlog` added to `log_destination`), a
//! reload applies it, and once the window is over every setting is put back as it was (set
//! again with `ALTER SYSTEM` where it came from `postgresql.auto.conf`, reset otherwise) and
//! reloaded. The csvlog written in the window is read through `pg_read_binary_file` from where
//! it stood when the window opened (following a rotation through `pg_ls_logdir`), so the
//! server's host need not be reachable otherwise. Needs a superuser (or the grants for
//! `ALTER SYSTEM` and `pg_read_server_files`), and `logging_collector = on` (a restart).
//!
//! MySQL and MariaDB: `SET GLOBAL general_log = ON` with `log_output` including `TABLE`, the
//! rows of `mysql.general_log` in the window read (never truncated: the table is the
//! server's), then both settings put back. Needs SUPER (or SYSTEM_VARIABLES_ADMIN).
//!
//! Where the privileges are missing (RDS and Aurora: the parameter group holds these
//! settings), it says so and what to do instead. Ctrl-C ends the window early: the settings
//! are put back and what was recorded is kept. Stampede's own session is left out of the
//! capture.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use sut::{Dialect, Session, Target};

use super::capture::{self, Capture};
use super::options::CaptureArgs;
use crate::console::{self, Failure};
use crate::interrupt;

/// The application name of stampede's own session, left out of what it records.
pub const APPLICATION: &str = "stampede capture";

/// What a window recorded, and whether Ctrl-C ended it early.
pub struct Recorded {
    pub capture: Capture,
    pub format: &'static str,
    pub seconds: f64,
    pub interrupted: bool,
}

/// Record `seconds` of `conn`'s workload.
pub async fn record(conn: &Target, seconds: u64, a: &CaptureArgs) -> Result<Recorded> {
    let mut conn = conn.clone();
    if let Target::Pg(c) = &mut conn {
        c.application_name = APPLICATION.into();
    }
    let mut s = Session::connect(&conn).await?;
    let r = match conn.dialect() {
        Dialect::Postgres => pg(&mut s, &conn, seconds, a).await,
        Dialect::MySql => mysql(&mut s, seconds, a).await,
    };
    s.close().await;
    r
}

/// Wait out the window, or until Ctrl-C: the seconds it lasted, and whether it was cut.
async fn window(seconds: u64) -> (f64, bool) {
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    console::note(&format!(
        "capturing the server's statements for {seconds} s (Ctrl-C ends it early)"
    ));
    while Instant::now() < end {
        if interrupt::requested() {
            return (start.elapsed().as_secs_f64(), true);
        }
        tokio::time::sleep(Duration::from_millis(50).min(end - Instant::now())).await;
    }
    (start.elapsed().as_secs_f64(), false)
}

fn no_privilege(what: &str, e: &sut::Error, instead: &str) -> anyhow::Error {
    Failure::setup(format!("{what}: {e}"), instead)
}

// ----- PostgreSQL -----

const PG_SETTINGS: [(&str, &str); 3] = [
    ("log_min_duration_statement", "0"),
    ("log_connections", "on"),
    ("log_disconnections", "on"),
];

/// A setting as it was: its value, and whether `ALTER SYSTEM` had set it.
struct Was {
    name: String,
    setting: String,
    by_alter_system: bool,
}

async fn first(s: &mut Session, sql: &str) -> Result<Vec<Option<String>>> {
    Ok(s.simple_query(sql)
        .await?
        .into_iter()
        .next()
        .unwrap_or_default())
}

async fn pg(s: &mut Session, conn: &Target, seconds: u64, a: &CaptureArgs) -> Result<Recorded> {
    let collector = first(s, "SHOW logging_collector").await?;
    if collector.first().cloned().flatten().as_deref() != Some("on") {
        return Err(Failure::setup(
            "logging_collector is off: the server writes no csvlog stampede could read back",
            "set logging_collector = on (it takes a restart), or capture with your own log \
             settings and run `stampede replay parse LOG`",
        ));
    }
    let names = ["log_destination"]
        .into_iter()
        .chain(PG_SETTINGS.iter().map(|(n, _)| *n))
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let rows = s
        .simple_query(&format!(
            "SELECT name, setting, coalesce(sourcefile LIKE '%postgresql.auto.conf', false) \
             FROM pg_settings WHERE name IN ({names})"
        ))
        .await?;
    let was: Vec<Was> = rows
        .into_iter()
        .map(|r| Was {
            name: r.first().cloned().flatten().unwrap_or_default(),
            setting: r.get(1).cloned().flatten().unwrap_or_default(),
            by_alter_system: r.get(2).cloned().flatten().as_deref() == Some("t"),
        })
        .collect();
    let dest = (was.iter())
        .find(|w| w.name == "log_destination")
        .map_or("stderr".to_string(), |w| w.setting.clone());
    let mut set: Vec<(String, String)> = PG_SETTINGS
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    if !dest.split(',').any(|d| d.trim() == "csvlog") {
        set.push(("log_destination".into(), format!("{dest},csvlog")));
    }
    for (n, v) in &set {
        if let Err(e) = s
            .simple_query(&format!("ALTER SYSTEM SET {n} = '{v}'"))
            .await
        {
            restore_pg(s, &was).await;
            return Err(no_privilege(
                &format!("ALTER SYSTEM SET {n}"),
                &e,
                "capturing needs a superuser (or GRANT ALTER SYSTEM ON PARAMETER); on RDS and \
                 Aurora set log_min_duration_statement = 0 and log_destination = csvlog in the \
                 DB parameter group, download the csvlog, and run `stampede replay parse LOG`",
            ));
        }
    }
    s.simple_query("SELECT pg_reload_conf()").await?;
    let opened = async {
        wait_applied(conn, "0").await?;
        csv_position(s).await
    }
    .await;
    let start = match opened {
        Ok(p) => p,
        Err(e) => {
            restore_pg(s, &was).await;
            return Err(e);
        }
    };
    let (took, interrupted) = window(seconds).await;
    restore_pg(s, &was).await;
    let end = csv_position(s).await?;
    let bytes = read_csv_between(s, &start, &end).await?;
    let capture = parse_recorded(&bytes, super::options::Format::Csvlog, a)?;
    Ok(Recorded {
        capture,
        format: "csvlog",
        seconds: took,
        interrupted,
    })
}

/// Put every setting back as it was, and reload; a failure is said, not raised (the capture
/// is kept), with what to run by hand.
async fn restore_pg(s: &mut Session, was: &[Was]) {
    for w in was {
        let sql = if w.by_alter_system {
            format!(
                "ALTER SYSTEM SET {} = '{}'",
                w.name,
                w.setting.replace('\'', "''")
            )
        } else {
            format!("ALTER SYSTEM RESET {}", w.name)
        };
        if let Err(e) = s.simple_query(&sql).await {
            console::warning(&format!("could not put {} back ({e}): run `{sql}`", w.name));
        }
    }
    if let Err(e) = s.simple_query("SELECT pg_reload_conf()").await {
        console::warning(&format!(
            "could not reload the configuration ({e}): run `SELECT pg_reload_conf()`"
        ));
    }
}

/// Wait until a new session sees `log_min_duration_statement` at `want` (the reload reached
/// every backend that starts from now on), at most 10 s.
async fn wait_applied(conn: &Target, want: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut t = Session::connect(conn).await?;
        let v = first(&mut t, "SHOW log_min_duration_statement").await;
        t.close().await;
        if v?.first().cloned().flatten().as_deref() == Some(want) {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "the server did not apply log_min_duration_statement = {want} within 10 s"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The current csvlog file and its size.
async fn csv_position(s: &mut Session) -> Result<(String, u64)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = first(
            s,
            "SELECT f, (pg_stat_file(f)).size FROM pg_current_logfile('csvlog') AS f \
             WHERE f IS NOT NULL",
        )
        .await?;
        if let (Some(Some(f)), Some(Some(n))) = (r.first(), r.get(1)) {
            return Ok((f.clone(), n.parse().unwrap_or(0)));
        }
        if Instant::now() > deadline {
            anyhow::bail!("the server opened no csvlog file within 10 s of the reload");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The csvlog written from `start` to `end`, through a rotation if there was one.
async fn read_csv_between(
    s: &mut Session,
    start: &(String, u64),
    end: &(String, u64),
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if start.0 == end.0 {
        read_file(s, &start.0, start.1, end.1, &mut out).await?;
        return Ok(out);
    }
    let size = |r: Vec<Option<String>>| r.first().cloned().flatten().and_then(|n| n.parse().ok());
    let whole = size(first(s, &format!("SELECT (pg_stat_file('{}')).size", start.0)).await?);
    read_file(s, &start.0, start.1, whole.unwrap_or(start.1), &mut out).await?;
    // Files the collector rotated to in between, by name (log_filename's pattern sorts by time).
    let dir = start.0.rsplit_once('/').map_or("", |(d, _)| d);
    let base = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
    let (from, to) = (base(&start.0), base(&end.0));
    let rows = s
        .simple_query("SELECT name FROM pg_ls_logdir() WHERE name LIKE '%.csv' ORDER BY name")
        .await?;
    for r in rows {
        let name = r.first().cloned().flatten().unwrap_or_default();
        if name > from && name < to {
            let path = format!("{dir}/{name}");
            let n = size(first(s, &format!("SELECT (pg_stat_file('{path}')).size")).await?);
            read_file(s, &path, 0, n.unwrap_or(0), &mut out).await?;
        }
    }
    read_file(s, &end.0, 0, end.1, &mut out).await?;
    Ok(out)
}

/// Bytes `from..to` of a server file, in chunks of 4 MiB.
async fn read_file(
    s: &mut Session,
    path: &str,
    from: u64,
    to: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    const CHUNK: u64 = 4 << 20;
    let mut at = from;
    while at < to {
        let n = CHUNK.min(to - at);
        let sql = format!(
            "SELECT encode(pg_read_binary_file('{}', {at}, {n}), 'hex')",
            path.replace('\'', "''")
        );
        let r = first(s, &sql).await.with_context(|| {
            format!("reading the server's log {path} (needs a superuser or pg_read_server_files)")
        })?;
        let hex = r.first().cloned().flatten().unwrap_or_default();
        if hex.is_empty() {
            break;
        }
        let bytes = decode_hex(&hex).context("the server's log came back garbled")?;
        at += bytes.len() as u64;
        out.extend_from_slice(&bytes);
    }
    Ok(())
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    let pairs = h.as_bytes().chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return None;
    }
    let nib = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    pairs
        .map(|p| Some((nib(p[0])? << 4) | nib(p[1])?))
        .collect()
}

/// Parse what was recorded, leaving stampede's own session out.
fn parse_recorded(
    bytes: &[u8],
    format: super::options::Format,
    a: &CaptureArgs,
) -> Result<Capture> {
    let mut c = capture::read_bytes(bytes, format, a)?;
    own_left_out(&mut c);
    Ok(c)
}

fn own_left_out(c: &mut Capture) {
    let mut own = 0;
    c.sessions.retain(|s| {
        let mine = s.application == APPLICATION;
        if mine {
            own += s.statements.len() as u64;
        }
        !mine
    });
    if own > 0 {
        *c.stats
            .skipped
            .entry("stampede's own session".into())
            .or_default() += own;
    }
    c.stats.sessions = c.sessions.len() as u64;
}

// ----- MySQL and MariaDB -----

async fn mysql(s: &mut Session, seconds: u64, a: &CaptureArgs) -> Result<Recorded> {
    let r = first(
        s,
        "SELECT @@global.general_log, @@global.log_output, NOW(6), CONNECTION_ID()",
    )
    .await?;
    let get = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
    let (was_on, was_output, start, me) = (get(0), get(1), get(2), get(3));
    let output = if was_output.to_uppercase().contains("TABLE") {
        was_output.clone()
    } else {
        format!("{was_output},TABLE")
            .trim_start_matches(',')
            .to_string()
    };
    let restore = format!(
        "SET GLOBAL log_output = '{was_output}', GLOBAL general_log = {}",
        if was_on == "1" { "ON" } else { "OFF" }
    );
    let on = format!("SET GLOBAL log_output = '{output}', GLOBAL general_log = ON");
    if let Err(e) = s.simple_query(&on).await {
        return Err(no_privilege(
            "SET GLOBAL general_log = ON",
            &e,
            "capturing needs SUPER or SYSTEM_VARIABLES_ADMIN; on RDS and Aurora set \
             general_log = 1 and log_output = TABLE in the DB parameter group, then run \
             `stampede replay parse --general-log-table -d ... -o FILE`",
        ));
    }
    let (took, interrupted) = window(seconds).await;
    let end = first(s, "SELECT NOW(6)").await;
    if let Err(e) = s.simple_query(&restore).await {
        console::warning(&format!(
            "could not put the general log back ({e}): run `{restore}`"
        ));
    }
    let end = end?.first().cloned().flatten().unwrap_or_default();
    let rows = s
        .simple_query(&format!(
            "{} WHERE event_time >= '{start}' AND event_time <= '{end}' AND thread_id <> {me}",
            capture::GENERAL_LOG_ROWS
        ))
        .await
        .context("reading mysql.general_log")?;
    let capture = capture::from_general_log_rows(&rows, a)?;
    Ok(Recorded {
        capture,
        format: "general",
        seconds: took,
        interrupted,
    })
}
