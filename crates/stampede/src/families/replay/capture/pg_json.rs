//! PostgreSQL's jsonlog (`log_destination = jsonlog`, PG 15+, `*.json`): one JSON object per
//! line, keys left out when they have no value.
//!
//! Owns: decoding jsonlog lines and mapping their keys onto `pg_log::Record`. Must not touch:
//! what an entry means (statements, sessions, pairing, filters: `pg_log::Assembler`, shared
//! with stderr and csvlog), nor the model in `mod.rs`.
//!
//! Keys as runtime-config-logging ("Using JSON-Format Log Output") lists them: timestamp,
//! user, dbname, pid, remote_host, remote_port, session_id, line_num, ps, session_start, vxid,
//! txid, error_severity, state_code, message, detail, hint, internal_query,
//! internal_position, context, statement, cursor_position, func_name, file_name, file_line_num,
//! application_name, backend_type, leader_pid, query_id. The failed statement of an `ERROR`
//! is under `statement` (csvlog's `query`).

use super::filter::{Filter, ParseError};
use super::pg_log::{self, Assembler, Record};
use super::Capture;
use std::borrow::Cow;

/// The keys read; strings borrow from the line unless they hold a JSON escape.
#[derive(serde::Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    timestamp: Cow<'a, str>,
    #[serde(borrow, default)]
    user: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    dbname: Option<Cow<'a, str>>,
    #[serde(default)]
    pid: Option<u32>,
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(default)]
    line_num: Option<u64>,
    #[serde(borrow, default)]
    error_severity: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    state_code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    detail: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    statement: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    application_name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    backend_type: Option<Cow<'a, str>>,
}

/// Reads a jsonlog. A line that is not a jsonlog object (a line cut
/// short while the server was writing it) is counted, not an error.
pub fn read(mut input: impl std::io::BufRead, filter: &Filter) -> Result<Capture, ParseError> {
    let mut asm = Assembler::new(filter, false);
    let (mut raw, mut line) = (Vec::new(), String::new());
    let mut lineno = 0u64;
    while pg_log::read_line(&mut input, &mut raw, &mut line, lineno)? {
        lineno += 1;
        if line.trim().is_empty() {
            continue;
        }
        asm.line();
        let Ok(l) = serde_json::from_str::<Line>(&line) else {
            asm.skip("unparsed line");
            continue;
        };
        let Some((time_us, _)) = pg_log::parse_timestamp(&l.timestamp) else {
            asm.skip("unparsed line");
            continue;
        };
        let client_backend = match l.backend_type.as_deref() {
            // "not initialized": a client before authentication (`connection received`).
            Some(b) => matches!(b, "client backend" | "not initialized"),
            None => l.user.is_some() || l.dbname.is_some(),
        };
        asm.feed(&Record {
            time_us,
            pid: l.pid.unwrap_or(0),
            session_id: l.session_id.as_deref(),
            line_num: l.line_num,
            user: l.user.as_deref(),
            database: l.dbname.as_deref(),
            application: l.application_name.as_deref(),
            client_backend,
            severity: l.error_severity.as_deref().unwrap_or(""),
            sqlstate: l.state_code.as_deref(),
            message: l.message.as_deref().unwrap_or(""),
            detail: l.detail.as_deref(),
            query: l.statement.as_deref(),
        });
    }
    Ok(asm.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PG 15 jsonlog with `log_statement = all` and `log_min_duration_statement = 0`: one
    /// pgbench `-M prepared` client, psql with two failing statements, `START TRANSACTION`.
    const JSON: &str =
        include_str!("../../../../tests/fixtures/replay/postgresql-15-log_statement_all.json");

    #[test]
    fn log_statement_all_jsonlog() {
        let c = read(JSON.as_bytes(), &Filter::default()).expect("reads");
        assert_eq!(c.sessions.len(), 3);
        let pgbench = &c.sessions[0];
        let kinds: Vec<&str> = pgbench
            .statements
            .iter()
            .map(|s| pg_log::kind(&s.sql))
            .collect();
        assert_eq!(
            kinds,
            ["begin", "update", "select", "update", "update", "insert", "commit"]
        );
        assert!(pgbench.statements.iter().all(|s| s.duration_us.is_some()));
        assert!(pgbench
            .statements
            .iter()
            .all(|s| s.protocol == super::super::Protocol::Extended));
        assert!(pgbench
            .statements
            .windows(2)
            .all(|w| w[0].offset_us <= w[1].offset_us));
        assert_eq!(pgbench.statements[0].offset_us, 0);
        assert_eq!(
            pg_log::inline_params(&pgbench.statements[1]),
            "UPDATE pgbench_accounts SET abalance = abalance + '1443' WHERE aid = '71527';"
        );
        let psql = &c.sessions[1];
        let errors: Vec<Option<&str>> =
            psql.statements.iter().map(|s| s.error.as_deref()).collect();
        assert_eq!(
            errors,
            [Some("22012"), Some("42P01"), None, None, None, None]
        );
        assert_eq!(c.sessions[2].application, "myapp");
        assert_eq!(c.stats.statements.get("begin"), Some(&3));
        assert_eq!(c.stats.skipped.get("unpaired duration"), None);
    }

    #[test]
    fn escapes_and_bad_lines() {
        let text = concat!(
            r#"{"timestamp":"2026-11-29 09:10:18.036 UTC","user":"u","dbname":"d","pid":7,"#,
            r#""session_id":"a.7","line_num":3,"error_severity":"LOG","#,
            r#""message":"duration: 1.000 ms  statement: select 'a\"b\n'","#,
            r#""backend_type":"client backend"}"#,
            "\n{\"timestamp\":\"2026-11-29 09:10:18\n"
        );
        let c = read(text.as_bytes(), &Filter::default()).expect("reads");
        assert_eq!(c.sessions[0].statements[0].sql, "select 'a\"b\n'");
        assert_eq!(c.stats.skipped.get("unparsed line"), Some(&1));
        assert_eq!(c.stats.lines, 2);
    }
}
