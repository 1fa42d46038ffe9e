//! PostgreSQL's csvlog (`log_destination = csvlog`, `*.csv`; also what RDS and Aurora export):
//! one record per entry, fields quoted with `"` when they hold text, a quote inside doubled,
//! and newlines kept inside quotes, so a record can span lines.
//!
//! Owns: splitting csvlog records into fields and mapping its columns onto `pg_log::Record`.
//! Must not touch: what an entry means (statements, sessions, pairing, filters:
//! `pg_log::Assembler`, shared with stderr and jsonlog), nor the model in `mod.rs`.
//!
//! Columns as runtime-config-logging ("Using CSV-Format Log Output") lists them for PG 15:
//! log_time, user_name, database_name, process_id, connection_from, session_id,
//! session_line_num, command_tag, session_start_time, virtual_transaction_id, transaction_id,
//! error_severity, sql_state_code, message, detail, hint, internal_query, internal_query_pos,
//! context, query, query_pos, location, application_name, backend_type, leader_pid, query_id.
//! PG 13 ends at backend_type (24 columns), 14–16 have all 26; 23 (PG 12) is taken too.

use super::filter::{Filter, ParseError};
use super::pg_log::{self, Assembler, Record};
use super::Capture;

const LOG_TIME: usize = 0;
const USER: usize = 1;
const DATABASE: usize = 2;
const PID: usize = 3;
const SESSION_ID: usize = 5;
const LINE_NUM: usize = 6;
const SEVERITY: usize = 11;
const SQLSTATE: usize = 12;
const MESSAGE: usize = 13;
const DETAIL: usize = 14;
const QUERY: usize = 19;
const APPLICATION: usize = 22;
const BACKEND_TYPE: usize = 23;

/// Splits one record (without its final newline) into `fields` as ranges of `buf`, which
/// receives the fields' unquoted text. `false` when a quote is not where csv allows it.
fn split_record(rec: &str, buf: &mut String, fields: &mut Vec<(usize, usize)>) -> bool {
    buf.clear();
    fields.clear();
    let mut rest = rec;
    loop {
        let start = buf.len();
        if let Some(q) = rest.strip_prefix('"') {
            let mut r = q;
            loop {
                let Some(i) = r.find('"') else { return false };
                buf.push_str(&r[..i]);
                r = &r[i + 1..];
                if let Some(after) = r.strip_prefix('"') {
                    buf.push('"');
                    r = after;
                } else {
                    break;
                }
            }
            rest = r;
        } else {
            let i = rest.find(',').unwrap_or(rest.len());
            if rest[..i].contains('"') {
                return false;
            }
            buf.push_str(&rest[..i]);
            rest = &rest[i..];
        }
        fields.push((start, buf.len()));
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None if rest.is_empty() => return true,
            None => return false,
        }
    }
}

/// Reads a csvlog. A record whose quote never closes is an error
/// naming the line and column where it opened; a record of another shape is counted.
pub fn read(mut input: impl std::io::BufRead, filter: &Filter) -> Result<Capture, ParseError> {
    let mut asm = Assembler::new(filter, false);
    let (mut raw, mut line, mut rec, mut buf) =
        (Vec::new(), String::new(), String::new(), String::new());
    let mut fields: Vec<(usize, usize)> = Vec::new();
    let mut lineno = 0u64;
    loop {
        rec.clear();
        let first_line = lineno + 1;
        // Quotes come in pairs in a whole record ("" inside a field is two), so a record goes
        // on while the count so far is odd; remember where the open one was, to report it.
        let mut open_at: Option<(u64, u64)> = None;
        loop {
            if !pg_log::read_line(&mut input, &mut raw, &mut line, lineno)? {
                if let Some((l, c)) = open_at {
                    return Err(ParseError {
                        line: l,
                        column: Some(c as u32),
                        message: "csv field opened here never closes its quote".into(),
                    });
                }
                break;
            }
            lineno += 1;
            if !rec.is_empty() || open_at.is_some() {
                rec.push('\n');
            }
            for (col, c) in line.chars().enumerate() {
                if c == '"' {
                    open_at = match open_at {
                        Some(_) => None,
                        None => Some((lineno, col as u64 + 1)),
                    };
                }
            }
            rec.push_str(&line);
            if open_at.is_none() {
                break;
            }
        }
        if rec.is_empty() {
            if lineno + 1 == first_line {
                break; // end of input
            }
            continue; // an empty line
        }
        asm.line();
        if !split_record(&rec, &mut buf, &mut fields) || !(23..=26).contains(&fields.len()) {
            asm.skip("unparsed line");
            continue;
        }
        let f = |i: usize| fields.get(i).map_or("", |&(a, b)| &buf[a..b]);
        let opt = |i: usize| Some(f(i)).filter(|s| !s.is_empty());
        let Some((time_us, _)) = pg_log::parse_timestamp(f(LOG_TIME)) else {
            asm.skip("unparsed line");
            continue;
        };
        // PG 13+ names the process kind ("not initialized": a client not yet authenticated);
        // before, only client backends have a user.
        let client_backend = if fields.len() > BACKEND_TYPE {
            matches!(f(BACKEND_TYPE), "client backend" | "not initialized")
        } else {
            !(f(USER).is_empty() && f(DATABASE).is_empty())
        };
        asm.feed(&Record {
            time_us,
            pid: f(PID).parse().unwrap_or(0),
            session_id: opt(SESSION_ID),
            line_num: f(LINE_NUM).parse().ok(),
            user: opt(USER),
            database: opt(DATABASE),
            application: opt(APPLICATION),
            client_backend,
            severity: f(SEVERITY),
            sqlstate: opt(SQLSTATE),
            message: f(MESSAGE),
            detail: opt(DETAIL),
            query: opt(QUERY),
        });
    }
    Ok(asm.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_quoted_fields() {
        let (mut buf, mut f) = (String::new(), Vec::new());
        assert!(split_record("a,\"b \"\"q\"\"\nc\",,\"\"", &mut buf, &mut f));
        let got: Vec<&str> = f.iter().map(|&(a, b)| &buf[a..b]).collect();
        assert_eq!(got, vec!["a", "b \"q\"\nc", "", ""]);
        assert!(!split_record("a,\"b\"x", &mut buf, &mut f));
    }

    /// PG 15 csvlog of the same run as `postgresql-15-stderr.log` (one pgbench `-M extended`
    /// client, psql with two failing statements and one of three lines, the checkpointer).
    const CSV: &str = include_str!("../../../../tests/fixtures/replay/postgresql-15.csv");
    const STDERR: &str = include_str!("../../../../tests/fixtures/replay/postgresql-15-stderr.log");

    #[test]
    fn reads_like_the_stderr_log_of_the_same_run() {
        let c = read(CSV.as_bytes(), &Filter::default()).expect("reads");
        let e = super::super::pg_stderr::read(STDERR.as_bytes(), &Filter::default(), None).unwrap();
        assert_eq!(c.started_unix_us, e.started_unix_us);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["6b0bebf9.2fae", "6b0bebfa.2fb4", "6b0bebfa.2fb6"]);
        let pgbench = &c.sessions[0];
        assert_eq!(pgbench.statements, e.sessions[0].statements);
        assert_eq!(pgbench.statements[2].params, [Some("21032".to_owned())]);
        let psql = &c.sessions[1];
        assert_eq!(psql.application, "psql");
        let errors: Vec<Option<&str>> =
            psql.statements.iter().map(|s| s.error.as_deref()).collect();
        assert_eq!(
            errors,
            [Some("22012"), Some("42P01"), None, None, None, None]
        );
        let sql = |s: &super::super::Session| -> Vec<String> {
            s.statements.iter().map(|st| st.sql.clone()).collect()
        };
        assert_eq!(sql(psql), sql(&e.sessions[2]));
        assert_eq!(c.stats.lines, 39);
        assert_eq!(c.stats.skipped.get("parse/bind"), Some(&14));
        assert_eq!(c.stats.skipped.get("other backend"), Some(&3));
        assert_eq!(c.stats.skipped.get("connection received"), Some(&3));
        // Read twice over (overlapping log files): the second copy is all duplicates.
        let twice = format!("{CSV}{CSV}");
        let c2 = read(twice.as_bytes(), &Filter::default()).unwrap();
        assert_eq!(c2.sessions, c.sessions);
        assert_eq!(c2.stats.skipped.get("duplicate"), Some(&36));
    }

    /// PG 13 has no `leader_pid` and `query_id` (24 columns), PG 12 no `backend_type` either
    /// (23): the same entries read the same, other processes told by their missing user.
    #[test]
    fn older_column_lists() {
        let c15 = read(CSV.as_bytes(), &Filter::default()).unwrap_or_default();
        let pg13 = CSV.replace(",,0\n", "\n");
        let pg12 = ["client backend", "checkpointer", "not initialized"]
            .iter()
            .fold(pg13.clone(), |t, b| t.replace(&format!(",\"{b}\"\n"), "\n"));
        for text in [pg13, pg12] {
            let c = read(text.as_bytes(), &Filter::default()).unwrap_or_default();
            assert_eq!(c.sessions, c15.sessions);
            assert_eq!(c.stats.statements, c15.stats.statements);
        }
        // PG 16 writes `Parameters:`.
        let pg16 = CSV.replace("\"parameters: ", "\"Parameters: ");
        let c16 = read(pg16.as_bytes(), &Filter::default()).unwrap_or_default();
        assert_eq!(c16.sessions, c15.sessions);
        let wrong = CSV.replace(",,0\n", ",,0,x,y\n");
        let c = read(wrong.as_bytes(), &Filter::default()).unwrap_or_default();
        assert_eq!(c.stats.skipped.get("unparsed line"), Some(&39));
    }

    #[test]
    fn unclosed_quote_is_an_error() {
        let text = "2026-11-29 09:10:18.036 UTC,\"postgres\",\"post\n\ngres,1\n";
        let e = read(text.as_bytes(), &Filter::default()).unwrap_err();
        assert_eq!((e.line, e.column), (1, Some(40)));
    }
}
