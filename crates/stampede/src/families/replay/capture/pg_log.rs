//! What PostgreSQL's three log formats (stderr, csvlog, jsonlog) share once a line is split into
//! its fields: telling a statement from the rest of the log, pairing the lines that make up one
//! statement, assembling sessions, filtering, counting, and timestamps.
//!
//! Owns: `Format`/`detect`, `Record` (one log entry, borrowed from the reader's buffer), the
//! `Assembler` that turns records into a `Capture`. Must not
//! touch: how a format splits its lines into fields (that is `pg_stderr`, `pg_csv`,
//! `pg_json`), the model in `mod.rs`, the filter types in `filter.rs`, and anything that talks
//! to a server — so that each format reader stays a thin splitter tested on its own.
//!
//! The messages follow PostgreSQL's "Error Reporting and Logging" chapter
//! (runtime-config-logging): `log_statement = all` logs `statement: ...` (simple query) or
//! `execute <name>: ...` (extended) when the statement *starts*; `log_min_duration_statement =
//! 0` logs `duration: X ms  statement|parse|bind|execute ...` when it *ends*, or a bare
//! `duration: X ms` when `log_statement` already logged the text; bound values go in a
//! `DETAIL:  parameters: $1 = '...'` entry; a failed statement gets an `ERROR` entry whose text
//! is in the following `STATEMENT:` line (stderr) or the `query` field (csv/json), as
//! `log_min_error_statement` (default `error`) says.

use super::filter::Filter;
#[cfg(test)]
pub(crate) use super::pg_values::inline_params;
pub(crate) use super::pg_values::{kind, parse_timestamp, read_line};
use super::pg_values::{parse_ms, parse_params};
use super::{Capture, Family, Protocol, Session, Statement, Stats};
use std::collections::HashMap;
use std::fmt::Write as _;

/// A PostgreSQL log format (`log_destination`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Stderr,
    Csv,
    Json,
}

/// Which format a log is in, from its first bytes (a few KB is plenty): jsonlog lines are JSON
/// objects; a csvlog record starts with its `log_time` then a comma; a stderr line starts
/// with one of the usual `log_line_prefix` forms (`pg_stderr::DEFAULT_PREFIXES`).
pub fn detect(first_bytes: &[u8]) -> Option<Format> {
    let text = String::from_utf8_lossy(first_bytes);
    let text = text.trim_start_matches('\u{feff}');
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if first.trim_start().starts_with('{') {
        return Some(Format::Json);
    }
    if let Some((_, used)) = parse_timestamp(first) {
        if first[used..].starts_with(',') {
            return Some(Format::Csv);
        }
    }
    let lines: Vec<&str> = text.lines().take(50).collect();
    super::pg_stderr::detect_prefix(&lines).map(|_| Format::Stderr)
}

/// One log entry, split into the fields the assembler needs; every string borrows from the
/// reader's line buffer, so a line costs no allocation until it yields a statement.
#[derive(Clone, Debug, Default)]
pub(crate) struct Record<'a> {
    pub time_us: i64,
    pub pid: u32,
    /// `%c` / csv `session_id` / json `session_id`: keys the session when present.
    pub session_id: Option<&'a str>,
    /// `%l` / `session_line_num`: tells a duplicated entry (or, keyed by pid, a reused pid).
    pub line_num: Option<u64>,
    pub user: Option<&'a str>,
    pub database: Option<&'a str>,
    pub application: Option<&'a str>,
    /// False for autovacuum, the checkpointer, the postmaster...: no session, no statement.
    pub client_backend: bool,
    /// `LOG`, `ERROR`, ..., and in stderr logs the `DETAIL`/`STATEMENT`/... lines.
    pub severity: &'a str,
    pub sqlstate: Option<&'a str>,
    pub message: &'a str,
    /// csv/json: the `DETAIL` of the same entry (stderr logs it as its own line).
    pub detail: Option<&'a str>,
    /// csv/json: the statement an `ERROR` is about (stderr: the next `STATEMENT:` line).
    pub query: Option<&'a str>,
}

/// A statement that may still get more of itself from a later entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Await {
    No,
    /// Index into the session's statements.
    Stmt(usize),
    /// The statement was skipped (filtered, COPY...): what follows for it is dropped with it.
    Skipped,
}

struct Open {
    session: Session,
    /// Absolute start (Unix µs) of each statement; offsets are made from these at the end.
    starts: Vec<i64>,
    /// Logged at its start by `log_statement`: a bare `duration:` entry may follow.
    awaiting_duration: Await,
    /// An `execute`: its `DETAIL:  parameters:` entry may follow.
    awaiting_params: Await,
    /// stderr: an `ERROR` seen, its `STATEMENT:` line may follow (sqlstate, time).
    pending_error: Option<(String, i64)>,
    authorized: bool,
    last_line: Option<u64>,
    /// The last `bind` not yet followed by its `execute`, and its `parameters:` text: an
    /// execute that fails logs no `duration:` line, only `ERROR` and `STATEMENT`, so its
    /// values are the bind's. Buffers reused from bind to bind.
    bind_sql: String,
    bind_params: String,
    bind_valid: bool,
    /// A `bind` was just logged: its `DETAIL:  parameters:` entry may follow.
    awaiting_bind_detail: bool,
}

/// What handling one entry needs besides its session; apart from the session map so that a
/// session is handled in place, with no key copied per entry.
struct Ctx<'f> {
    filter: &'f Filter,
    /// stderr writes `DETAIL`/`STATEMENT` as entries of their own; csv/json put them in fields.
    separate_lines: bool,
    stats: Stats,
}

/// Turns records, in log order, into a `Capture`.
pub(crate) struct Assembler<'f> {
    ctx: Ctx<'f>,
    open: HashMap<String, Open>,
    done: Vec<Open>,
    /// How often a pid has opened a session, to name reused pids apart (`4711`, `4711.2`).
    pid_uses: HashMap<u32, u32>,
    /// Session ids (csv/json, `%c`) whose session has ended: an entry naming one again is a
    /// repeat (overlapping log files read together), not a new session.
    ended: std::collections::HashSet<String>,
    key: String,
}

fn bump(map: &mut std::collections::BTreeMap<String, u64>, reason: &str, n: u64) {
    if n == 0 {
        return;
    }
    match map.get_mut(reason) {
        Some(v) => *v += n,
        None => {
            map.insert(reason.to_owned(), n);
        }
    }
}

impl<'f> Assembler<'f> {
    pub fn new(filter: &'f Filter, separate_lines: bool) -> Self {
        Assembler {
            ctx: Ctx {
                filter,
                separate_lines,
                stats: Stats::default(),
            },
            open: HashMap::new(),
            done: Vec::new(),
            pid_uses: HashMap::new(),
            ended: std::collections::HashSet::new(),
            key: String::new(),
        }
    }

    /// Counts an entry not kept, by reason.
    pub fn skip(&mut self, reason: &str) {
        self.ctx.skip(reason);
    }

    /// Counts a line (a record, for csvlog and jsonlog) read.
    pub fn line(&mut self) {
        self.ctx.stats.lines += 1;
    }

    fn close(&mut self, key: &str) {
        if let Some(o) = self.open.remove(key) {
            self.end(o, false);
        }
    }

    fn end(&mut self, mut o: Open, by_session_id: bool) {
        self.ctx.resolve_error(&mut o, None);
        if by_session_id {
            self.ended.insert(o.session.id.clone());
        }
        self.done.push(o);
    }

    fn new_open(&mut self, r: &Record) -> Open {
        let id = match r.session_id {
            Some(s) => s.to_owned(),
            None => {
                let n = self.pid_uses.entry(r.pid).or_insert(0);
                *n += 1;
                if *n == 1 {
                    r.pid.to_string()
                } else {
                    format!("{}.{}", r.pid, n)
                }
            }
        };
        Open {
            session: Session {
                id,
                ..Session::default()
            },
            starts: Vec::new(),
            awaiting_duration: Await::No,
            awaiting_params: Await::No,
            pending_error: None,
            authorized: false,
            last_line: None,
            bind_sql: String::new(),
            bind_params: String::new(),
            bind_valid: false,
            awaiting_bind_detail: false,
        }
    }

    /// Takes one entry, in log order.
    pub fn feed(&mut self, r: &Record) {
        if !r.client_backend {
            self.skip("other backend");
            return;
        }
        self.key.clear();
        match r.session_id {
            Some(s) => self.key.push_str(s),
            None => {
                let _ = write!(self.key, "{}", r.pid);
            }
        }
        let key = std::mem::take(&mut self.key);
        self.feed_keyed(&key, r);
        self.key = key;
    }

    fn feed_keyed(&mut self, key: &str, r: &Record) {
        let by_pid = r.session_id.is_none();
        let msg = r.message;
        // A new backend with a pid seen before: its first lines close the old session when
        // the old one's `disconnection:` line is missing (log_disconnections off, a crash).
        if by_pid {
            let restart = match self.open.get(key) {
                Some(o) if msg.starts_with("connection received:") => {
                    o.authorized || !o.starts.is_empty()
                }
                Some(o) if msg.starts_with("connection authorized:") => o.authorized,
                Some(o) => matches!((r.line_num, o.last_line), (Some(n), Some(l)) if n <= l),
                None => false,
            };
            if restart {
                self.close(key);
            }
        }
        if !self.open.contains_key(key) {
            if !by_pid && self.ended.contains(key) {
                self.skip("duplicate");
                return;
            }
            let o = self.new_open(r);
            self.open.insert(key.to_owned(), o);
        }
        let keep = match self.open.get_mut(key) {
            Some(o) => self.ctx.dispatch(o, r),
            None => return,
        };
        if !keep {
            if let Some(o) = self.open.remove(key) {
                self.end(o, !by_pid);
            }
        }
    }

    /// Closes every session, filters them, and makes offsets from the first statement's start.
    pub fn finish(mut self) -> Capture {
        let keys: Vec<String> = self.open.keys().cloned().collect();
        for k in keys {
            self.close(&k);
        }
        let mut stats = std::mem::take(&mut self.ctx.stats);
        let mut kept = Vec::new();
        for o in self.done {
            let s = &o.session;
            let n = s.statements.len() as u64;
            let f = self.ctx.filter;
            if let Some(reason) = f.refuses(&s.database, &s.user, &s.application) {
                bump(&mut stats.skipped, reason, n);
            } else if n > 0 {
                kept.push(o);
            }
        }
        let started = kept.iter().filter_map(|o| o.starts.first()).min().copied();
        let started = started.unwrap_or(0);
        let mut end = started;
        let mut sessions = Vec::with_capacity(kept.len());
        for mut o in kept {
            for (st, &at) in o.session.statements.iter_mut().zip(&o.starts) {
                st.offset_us = (at - started).max(0) as u64;
                end = end.max(at + st.duration_us.unwrap_or(0) as i64);
                let p = match st.protocol {
                    Protocol::Simple => "simple",
                    Protocol::Extended => "extended",
                };
                bump(&mut stats.statements, p, 1);
                bump(&mut stats.statements, kind(&st.sql), 1);
            }
            sessions.push(o.session);
        }
        sessions.sort_by(|a, b| {
            let fa = a.statements.first().map(|s| s.offset_us);
            let fb = b.statements.first().map(|s| s.offset_us);
            fa.cmp(&fb).then_with(|| a.id.cmp(&b.id))
        });
        stats.sessions = sessions.len() as u64;
        stats.duration_us = (end - started).max(0) as u64;
        Capture {
            family: Family::Postgres,
            sessions,
            stats,
            started_unix_us: started,
        }
    }
}

impl Ctx<'_> {
    fn skip(&mut self, reason: &str) {
        bump(&mut self.stats.skipped, reason, 1);
    }

    /// Handles one entry of a session; false when the session has ended.
    fn dispatch(&mut self, o: &mut Open, r: &Record) -> bool {
        match (r.line_num, o.last_line) {
            (Some(n), Some(l)) if n <= l => {
                self.skip("duplicate");
                return true;
            }
            (Some(n), _) => o.last_line = Some(n),
            // Without line numbers (stderr without `%l`) a repeated entry cannot be told from a
            // statement sent twice, so nothing is taken for a duplicate.
            (None, _) => {}
        }
        let s = &mut o.session;
        for (field, value) in [
            (&mut s.user, r.user),
            (&mut s.database, r.database),
            (&mut s.application, r.application),
        ] {
            if let Some(v) = value.filter(|v| !v.is_empty() && *v != "[unknown]") {
                if field.is_empty() {
                    field.push_str(v);
                }
            }
        }
        match r.severity {
            "DETAIL" => {
                self.detail(o, r.message);
                return true;
            }
            "STATEMENT" => {
                self.resolve_error(o, Some(r.message));
                return true;
            }
            "HINT" | "CONTEXT" | "QUERY" | "LOCATION" => return true,
            _ => {}
        }
        // A primary entry: what was waiting for a secondary one gets no more.
        self.resolve_error(o, None);
        o.awaiting_params = Await::No;
        o.awaiting_bind_detail = false;
        let open = match r.severity {
            "LOG" => self.log(o, r),
            "ERROR" => {
                o.pending_error = Some((r.sqlstate.unwrap_or("").to_owned(), r.time_us));
                if !self.separate_lines {
                    self.resolve_error(o, r.query);
                }
                true
            }
            "FATAL" | "PANIC" => {
                self.skip("fatal");
                true
            }
            _ => {
                self.skip("other message");
                true
            }
        };
        if let Some(d) = r.detail {
            self.detail(o, d);
        }
        open
    }

    fn log(&mut self, o: &mut Open, r: &Record) -> bool {
        let msg = r.message;
        if let Some(rest) = msg.strip_prefix("duration: ") {
            let Some((ms, rest)) = rest.split_once(" ms") else {
                self.skip("unparsed line");
                return true;
            };
            let Some(us) = parse_ms(ms) else {
                self.skip("unparsed line");
                return true;
            };
            let rest = rest.trim_start_matches(' ');
            if rest.is_empty() {
                // log_statement logged the text when it started; this is its end.
                match std::mem::replace(&mut o.awaiting_duration, Await::No) {
                    Await::Stmt(i) => {
                        if let Some(st) = o.session.statements.get_mut(i) {
                            st.duration_us = Some(us);
                        }
                    }
                    Await::Skipped => {}
                    Await::No => self.skip("unpaired duration"),
                }
                return true;
            }
            let start = r.time_us - us as i64;
            if let Some(sql) = rest.strip_prefix("statement: ") {
                self.push(o, start, Some(us), sql, Protocol::Simple);
            } else if let Some((verb, sql)) = split_extended(rest) {
                if verb == "execute" {
                    self.push(o, start, Some(us), sql, Protocol::Extended);
                } else {
                    if verb == "bind" {
                        o.bind_sql.clear();
                        o.bind_sql.push_str(sql);
                        o.bind_params.clear();
                        o.bind_valid = true;
                        o.awaiting_bind_detail = true;
                    }
                    self.skip("parse/bind");
                }
            } else if rest.starts_with("fastpath function call:") {
                self.skip("fast-path call");
            } else {
                self.skip("other message");
            }
            o.awaiting_duration = Await::No;
            return true;
        }
        let started = if let Some(sql) = msg.strip_prefix("statement: ") {
            Some(self.push(o, r.time_us, None, sql, Protocol::Simple))
        } else if let Some((_, sql)) = split_extended(msg).filter(|(v, _)| *v == "execute") {
            Some(self.push(o, r.time_us, None, sql, Protocol::Extended))
        } else {
            None
        };
        if let Some(pushed) = started {
            o.awaiting_duration = pushed.map_or(Await::Skipped, Await::Stmt);
        } else if let Some(rest) = msg.strip_prefix("connection authorized: ") {
            o.authorized = true;
            for kv in rest.split(' ') {
                let (field, v) = match kv.split_once('=') {
                    Some(("user", v)) => (&mut o.session.user, v),
                    Some(("database", v)) => (&mut o.session.database, v),
                    Some(("application_name", v)) => (&mut o.session.application, v),
                    _ => continue,
                };
                field.clear();
                field.push_str(v);
            }
        } else if msg.starts_with("disconnection:") {
            return false;
        } else if msg.starts_with("fastpath function call:") {
            // Logged at its start by log_statement = all: its bare `duration:` goes with it.
            o.awaiting_duration = Await::Skipped;
            self.skip("fast-path call");
        } else if msg.starts_with("connection received:") {
            self.skip("connection received");
        } else {
            self.skip("other message");
        }
        true
    }

    /// A `DETAIL` entry: the parameters of the `execute` just logged, if that is what it is.
    fn detail(&mut self, o: &mut Open, text: &str) {
        if o.awaiting_bind_detail {
            if let Some(p) = params_text(text) {
                o.bind_params.push_str(p);
            }
            o.awaiting_bind_detail = false;
            return;
        }
        let Await::Stmt(i) = o.awaiting_params else {
            return;
        };
        let Some(p) = params_text(text) else {
            return;
        };
        o.awaiting_params = Await::No;
        match parse_params(p) {
            Some(params) => {
                if let Some(st) = o.session.statements.get_mut(i) {
                    st.params = params;
                }
            }
            None => {
                // Without its values the statement cannot be sent again: drop it, counted.
                if i + 1 == o.session.statements.len() {
                    o.session.statements.pop();
                    o.starts.pop();
                    if o.awaiting_duration == Await::Stmt(i) {
                        o.awaiting_duration = Await::Skipped;
                    }
                    self.skip("unparsed parameters");
                }
            }
        }
    }

    /// An `ERROR` entry and the statement it names (stderr's `STATEMENT:` line, csv/json's
    /// `query`): marks the statement logged at its start, or adds the failed statement (one
    /// that failed logs no `duration:`).
    fn resolve_error(&mut self, o: &mut Open, query: Option<&str>) {
        let Some((code, time)) = o.pending_error.take() else {
            return;
        };
        if let Await::Stmt(i) = o.awaiting_duration {
            let same = o.session.statements.get(i).map(|s| s.sql.as_str());
            if query.is_none() || same == query {
                if let Some(st) = o.session.statements.get_mut(i) {
                    st.error = Some(code);
                }
                o.awaiting_duration = Await::No;
                return;
            }
        }
        if o.awaiting_duration == Await::Skipped && query.is_none() {
            return;
        }
        match query {
            Some(q) if o.bind_valid && o.bind_sql == q => {
                // An extended-protocol execute that failed: the values are its bind's.
                let params = parse_params(&o.bind_params);
                if let Some(i) = self.push(o, time, None, q, Protocol::Extended) {
                    match params {
                        Some(p) => {
                            let st = &mut o.session.statements[i];
                            st.params = p;
                            st.error = Some(code);
                        }
                        None => {
                            o.session.statements.pop();
                            o.starts.pop();
                            self.skip("unparsed parameters");
                        }
                    }
                }
                o.awaiting_params = Await::No;
            }
            Some(q) => {
                if let Some(i) = self.push(o, time, None, q, Protocol::Simple) {
                    o.session.statements[i].error = Some(code);
                }
                o.awaiting_params = Await::No;
            }
            None => self.skip("error without statement"),
        }
        o.awaiting_duration = Await::No;
    }

    /// Adds a statement unless it is one not to send again; sets `awaiting_params` to it.
    fn push(
        &mut self,
        o: &mut Open,
        start: i64,
        duration_us: Option<u64>,
        sql: &str,
        protocol: Protocol,
    ) -> Option<usize> {
        let reason = if kind(sql) == "copy" {
            Some("copy")
        } else if !self.filter.in_window(start) {
            Some("filtered: time")
        } else {
            None
        };
        // Whatever bind was pending went with this statement.
        o.bind_valid = false;
        if let Some(reason) = reason {
            self.skip(reason);
            o.awaiting_params = Await::Skipped;
            return None;
        }
        // Log times can be coarser than durations (`%t` has whole seconds), so a start made
        // from `end - duration` may fall before the previous one: keep the session's order.
        let start = o.starts.last().map_or(start, |&p| start.max(p));
        o.starts.push(start);
        o.session.statements.push(Statement {
            offset_us: 0,
            duration_us,
            sql: sql.to_owned(),
            protocol,
            params: Vec::new(),
            error: None,
        });
        let i = o.session.statements.len() - 1;
        o.awaiting_params = if protocol == Protocol::Extended {
            Await::Stmt(i)
        } else {
            Await::No
        };
        Some(i)
    }
}

/// The values of a `DETAIL` entry: `parameters: $1 = ...` up to PG 15, `Parameters: ...` from
/// PG 16 (whose messages' details start with a capital).
fn params_text(detail: &str) -> Option<&str> {
    detail
        .strip_prefix("parameters: ")
        .or_else(|| detail.strip_prefix("Parameters: "))
}

/// `execute <unnamed>: SELECT ...`, `bind P_1: ...`, `parse S_3: ...` into verb and SQL.
fn split_extended(s: &str) -> Option<(&str, &str)> {
    let (verb, rest) = s.split_once(' ')?;
    if !matches!(verb, "execute" | "parse" | "bind") {
        return None;
    }
    let (_name, sql) = rest.split_once(": ")?;
    Some((verb, sql))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(detect(b"{\"timestamp\":\"x\"}\n"), Some(Format::Json));
        let csv = b"2026-11-29 09:10:17.859 UTC,\"postgres\",\"postgres\",12206,\n";
        assert_eq!(detect(csv), Some(Format::Csv));
        let err = b"2026-11-29 09:10:17.859 UTC [12206] postgres@postgres LOG:  x\n";
        assert_eq!(detect(err), Some(Format::Stderr));
        assert_eq!(detect(b"hello\n"), None);
    }
}
