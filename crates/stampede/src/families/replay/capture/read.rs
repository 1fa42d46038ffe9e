//! Which reader a capture needs, and the one entry point that reads any capture
//! ([`read_path`]): a replay file by its magic, a log by `--format` or by its first bytes
//! (MySQL's general and slow logs by their headers, then PostgreSQL's jsonlog, csvlog and
//! stderr forms); the `--only-*` filters and the `--begin`/`--end` window are applied while
//! reading. [`describe`] says what was read, as pgreplay's parse statistics do.
//!
//! An unreadable capture is a usage error naming the file (and the line and column where
//! reading stopped): nothing has connected yet.

use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::filter::{Filter, ParseError};
use super::pg_log::{self, parse_timestamp};
use super::{mysql_general, mysql_slow, pg_csv, pg_json, pg_stderr, Capture};
use crate::console::Failure;
use crate::families::replay::file;
use crate::families::replay::options::{CaptureArgs, Format};

/// How much of a log its format is told from.
const HEAD: usize = 64 * 1024;

/// Read the capture at `path` as `a` says: the capture, and the name of the format it was
/// read as (`stderr`, `csvlog`, `jsonlog`, `general`, `slow`, `replay`).
pub fn read_path(path: &Path, a: &CaptureArgs) -> Result<(Capture, &'static str)> {
    let unreadable = |e: &dyn std::fmt::Display| {
        Failure::usage(
            format!("{}: {e}", path.display()),
            "give a server log (PostgreSQL stderr, csvlog or jsonlog; MySQL's general or slow \
             log) or a replay file",
        )
    };
    let mut f = std::fs::File::open(path).map_err(|e| unreadable(&e))?;
    let mut head = Vec::with_capacity(HEAD);
    (&mut f)
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|e| unreadable(&e))?;
    let filter = filter(a)?;
    let format = match a.format.unwrap_or_default() {
        Format::Auto => detect(&head).ok_or_else(|| {
            Failure::usage(
                format!(
                    "{}: not a log stampede can read (neither PostgreSQL's stderr, csvlog or \
                     jsonlog, nor MySQL's general or slow log, nor a replay file)",
                    path.display()
                ),
                "name its format with --format; a stderr log with an unusual log_line_prefix \
                 also needs --log-line-prefix",
            )
        })?,
        f => f,
    };
    if format == Format::Replay {
        if filter.begin_unix_us.is_some() || filter.end_unix_us.is_some() {
            return Err(Failure::usage(
                "--begin and --end apply when a log is parsed, not to a replay file",
                "parse the log again with the window: `stampede replay parse LOG --begin ...`",
            ));
        }
        let mut c = file::read(path, |_| true).map_err(|e| unreadable(&format!("{e:#}")))?;
        keep_sessions(&mut c, &filter);
        return Ok((c, "replay"));
    }
    // The whole file from its start, through one buffer.
    drop(f);
    let input = BufReader::with_capacity(
        1 << 20,
        std::fs::File::open(path).map_err(|e| unreadable(&e))?,
    );
    let c = read_log(input, format, &filter, a).map_err(|e| {
        Failure::usage(
            format!("{}: {e}", path.display()),
            "check --format (and --log-line-prefix for a stderr log)",
        )
    })?;
    Ok((c, name(format)))
}

/// A log of `format` (not a replay file) read from memory: what `--capture` read back.
pub fn read_bytes(bytes: &[u8], format: Format, a: &CaptureArgs) -> Result<Capture> {
    let filter = filter(a)?;
    read_log(bytes, format, &filter, a).map_err(|e| anyhow::anyhow!("the recorded log: {e}"))
}

fn read_log(
    input: impl std::io::BufRead,
    format: Format,
    filter: &Filter,
    a: &CaptureArgs,
) -> std::result::Result<Capture, ParseError> {
    match format {
        Format::Stderr => pg_stderr::read(input, filter, a.log_line_prefix.as_deref()),
        Format::Csvlog => pg_csv::read(input, filter),
        Format::Jsonlog => pg_json::read(input, filter),
        Format::General => mysql_general::read(input, filter),
        Format::Slow => mysql_slow::read(input, filter),
        Format::Auto | Format::Replay => Err(ParseError {
            message: format!("{} is not a log format", name(format)),
            ..Default::default()
        }),
    }
}

fn name(f: Format) -> &'static str {
    match f {
        Format::Auto => "auto",
        Format::Stderr => "stderr",
        Format::Csvlog => "csvlog",
        Format::Jsonlog => "jsonlog",
        Format::General => "general",
        Format::Slow => "slow",
        Format::Replay => "replay",
    }
}

/// The capture in `mysql.general_log` (`log_output = TABLE`) on `conn`, in the order the
/// rows were written (the table has no key: its own order, which is the order of writing).
pub async fn read_general_log_table(
    conn: &sut::Target,
    a: &CaptureArgs,
) -> Result<(Capture, &'static str)> {
    filter(a)?;
    let mut s = sut::Session::connect(conn).await?;
    let rows = s.simple_query(GENERAL_LOG_ROWS).await;
    s.close().await;
    let rows = rows.map_err(|e| {
        Failure::setup(
            format!("reading mysql.general_log: {e}"),
            "the user needs SELECT on mysql.general_log; the server logs there with \
             general_log = ON and log_output = 'TABLE'",
        )
    })?;
    Ok((from_general_log_rows(&rows, a)?, "general"))
}

/// The columns of `mysql.general_log` [`from_general_log_rows`] reads, in order (a `WHERE`
/// may follow).
pub const GENERAL_LOG_ROWS: &str =
    "SELECT DATE_FORMAT(event_time, '%Y-%m-%dT%H:%i:%s.%f'), user_host, thread_id, \
     server_id, command_type, argument FROM mysql.general_log";

/// A capture from rows of [`GENERAL_LOG_ROWS`].
pub fn from_general_log_rows(rows: &[Vec<Option<String>>], a: &CaptureArgs) -> Result<Capture> {
    let filter = filter(a)?;
    let text = |r: &Vec<Option<String>>, i: usize| r.get(i).cloned().flatten().unwrap_or_default();
    let rows = rows.iter().map(|r| mysql_general::GeneralLogRow {
        event_time: text(r, 0),
        user_host: text(r, 1),
        thread_id: text(r, 2).parse().unwrap_or(0),
        server_id: text(r, 3).parse().unwrap_or(0),
        command_type: text(r, 4),
        argument: text(r, 5),
    });
    Ok(mysql_general::from_table_rows(rows, &filter))
}

/// The format of a capture from its first bytes.
fn detect(head: &[u8]) -> Option<Format> {
    if file::is_replay_file(head) {
        return Some(Format::Replay);
    }
    if mysql_general::detect(head) {
        return Some(Format::General);
    }
    if mysql_slow::detect(head) {
        return Some(Format::Slow);
    }
    pg_log::detect(head).map(|f| match f {
        pg_log::Format::Stderr => Format::Stderr,
        pg_log::Format::Csv => Format::Csvlog,
        pg_log::Format::Json => Format::Jsonlog,
    })
}

/// The filters of the command line, the window's times read as the logs write them (the
/// log's time zone, or UTC when none is given).
fn filter(a: &CaptureArgs) -> Result<Filter> {
    let time = |flag: &str, v: &Option<String>| -> Result<Option<i64>> {
        let Some(v) = v else {
            return Ok(None);
        };
        let t = v.trim();
        // A time without a zone is UTC, as the logs' `UTC` suffix says.
        let with_zone = match t.rsplit_once(' ') {
            Some((_, z))
                if z.chars()
                    .any(|c| c.is_ascii_alphabetic() || c == '+' || c == '-') =>
            {
                t.to_string()
            }
            _ => format!("{t} UTC"),
        };
        match parse_timestamp(&with_zone) {
            Some((us, _)) => Ok(Some(us)),
            None => Err(Failure::usage(
                format!("{flag} {v:?} is not a time"),
                format!("{flag} '2026-11-29 09:40:00' (UTC, or with the log's zone: ... CET)"),
            )),
        }
    };
    let f = Filter {
        databases: a.only_database.clone(),
        users: a.only_user.clone(),
        applications: a.only_application.clone(),
        begin_unix_us: time("--begin", &a.begin)?,
        end_unix_us: time("--end", &a.end)?,
    };
    if let (Some(b), Some(e)) = (f.begin_unix_us, f.end_unix_us) {
        if e <= b {
            return Err(Failure::usage(
                "--end is not after --begin",
                "the window keeps statements from --begin up to --end",
            ));
        }
    }
    Ok(f)
}

/// A replay file's sessions filtered by database, user and application (each session's own,
/// as the log readers filter), the statements left out counted by reason.
fn keep_sessions(c: &mut Capture, f: &Filter) {
    let mut left_out: Vec<(&'static str, u64)> = Vec::new();
    c.sessions.retain(|s| {
        let Some(why) = f.refuses(&s.database, &s.user, &s.application) else {
            return true;
        };
        left_out.push((why, s.statements.len() as u64));
        false
    });
    for (why, n) in left_out {
        *c.stats.skipped.entry(why.to_string()).or_default() += n;
    }
    c.stats.sessions = c.sessions.len() as u64;
    // The statements kept, counted again as the readers count them: by protocol and kind.
    c.stats.statements.clear();
    for st in c.sessions.iter().flat_map(|s| &s.statements) {
        let protocol = match st.protocol {
            super::Protocol::Simple => "simple",
            super::Protocol::Extended => "extended",
        };
        for k in [protocol, super::pg_values::kind(&st.sql)] {
            *c.stats.statements.entry(k.to_string()).or_default() += 1;
        }
    }
}

/// What a capture holds, as `stampede replay parse` prints it.
pub fn describe(c: &Capture, format: &str, took: Duration) -> String {
    let s = &c.stats;
    let mut o = String::new();
    let n = |k: &str| s.statements.get(k).copied().unwrap_or(0);
    let _ = writeln!(
        o,
        "parsed {} lines ({format}) in {:.3} s",
        s.lines,
        took.as_secs_f64()
    );
    let _ = writeln!(o, "sessions: {}", s.sessions);
    let _ = writeln!(
        o,
        "statements: {} (simple {}, extended {})",
        n("simple") + n("extended"),
        n("simple"),
        n("extended")
    );
    let kinds: Vec<String> = (s.statements.iter())
        .filter(|(k, _)| !matches!(k.as_str(), "simple" | "extended"))
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    if !kinds.is_empty() {
        let _ = writeln!(o, "  by kind: {}", kinds.join(", "));
    }
    let _ = writeln!(
        o,
        "duration of the capture: {:.3} s",
        s.duration_us as f64 / 1e6
    );
    if s.skipped.is_empty() {
        let _ = writeln!(o, "skipped: nothing");
    } else {
        let skipped: Vec<String> = (s.skipped.iter())
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(o, "skipped: {}", skipped.join(", "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fixture_is_told_apart_by_its_first_bytes() {
        let fixtures = [
            ("postgresql-15-stderr.log", Format::Stderr),
            ("postgresql-15.csv", Format::Csvlog),
            ("postgresql-15-log_statement_all.json", Format::Jsonlog),
            ("mariadb-10.11-general.log", Format::General),
            ("mariadb-10.11-slow.log", Format::Slow),
        ];
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay");
        for (name, want) in fixtures {
            let head = std::fs::read(dir.join(name)).unwrap();
            assert_eq!(detect(&head), Some(want), "{name}");
            let (c, got) = read_path(&dir.join(name), &CaptureArgs::default()).unwrap();
            assert_eq!(got, super::name(want));
            assert!(c.stats.sessions > 0 && !c.sessions.is_empty(), "{name}");
        }
        assert_eq!(detect(b"hello world\n"), None);
    }

    #[test]
    fn filters_are_read_from_the_command_line_or_refused_by_flag() {
        let a = CaptureArgs {
            begin: Some("2026-11-29 09:40:00".into()),
            end: Some("2026-11-29 09:40:01.5".into()),
            ..Default::default()
        };
        let f = filter(&a).unwrap();
        assert_eq!(f.end_unix_us.unwrap() - f.begin_unix_us.unwrap(), 1_500_000);
        let bad = CaptureArgs {
            begin: Some("yesterday".into()),
            ..Default::default()
        };
        let e = format!("{:#}", filter(&bad).unwrap_err());
        assert!(e.contains("--begin \"yesterday\" is not a time"), "{e}");
        let backwards = CaptureArgs {
            begin: a.end.clone(),
            end: a.begin.clone(),
            ..Default::default()
        };
        let e = format!("{:#}", filter(&backwards).unwrap_err());
        assert!(e.contains("--end is not after --begin"), "{e}");
    }
}
