//! What the MySQL/MariaDB log readers (`mysql_general`, `mysql_slow`) share: reading lines
//! without allocating, the log's timestamps, the statement kind, and `Builder`, which turns
//! "thread N sent this at that time" into the `Capture` model with its stats and filters.
//!
//! Owns: only what both MySQL readers need. Must not touch: the model (`mod.rs`), the
//! `Filter`/`ParseError` types (`filter.rs`) and the PostgreSQL readers (`pg_*.rs`, another
//! engineer's), so that each reader family can change without breaking the other.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

use super::filter::{Filter, ParseError};
use super::{Capture, Family, Protocol, Session, Statement, Stats};

/// Reads a log line by line into one reused buffer (no allocation per line). Invalid UTF-8
/// (binary data in a statement) is replaced, not an error: the log is still readable.
pub(super) struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    text: String,
    pub number: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R) -> Self {
        Lines {
            input,
            buf: Vec::with_capacity(4096),
            text: String::new(),
            number: 0,
        }
    }

    /// The next line without its `\n` (and `\r`), `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&str>, ParseError> {
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| ParseError {
                line: self.number + 1,
                column: None,
                message: format!("cannot read the log: {e}"),
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some(s)),
            Err(_) => {
                self.text.clear();
                self.text.push_str(&String::from_utf8_lossy(&self.buf));
                Ok(Some(&self.text))
            }
        }
    }
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() {
        return None;
    }
    let mut v = 0i64;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    Some(v)
}

fn civil_us(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, us: i64) -> Option<i64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some((((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + s) * 1_000_000 + us)
}

/// A parsed log timestamp: unix microseconds, and whether the log gave microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    pub unix_us: i64,
    pub exact: bool,
}

/// MariaDB's (and MySQL 5.6's) `YYMMDD HH:MM:SS`, the hour padded with a space (` 9:40:01`),
/// at the start of `s`; returns the stamp and the length it took. The server writes it in its
/// local time zone without saying which; it is read as UTC, which only matters for a
/// `Filter` time window (offsets are differences).
pub(super) fn parse_short_stamp(s: &[u8]) -> Option<(Stamp, usize)> {
    if s.len() < 15 || s[6] != b' ' {
        return None;
    }
    let ymd = digits(&s[..6])?;
    let hour = match (s[7], s[8]) {
        (b' ', h) if h.is_ascii_digit() => i64::from(h - b'0'),
        (a, b) if a.is_ascii_digit() && b.is_ascii_digit() => {
            i64::from(a - b'0') * 10 + i64::from(b - b'0')
        }
        _ => return None,
    };
    if s[9] != b':' || s[12] != b':' {
        return None;
    }
    let mi = digits(&s[10..12])?;
    let sec = digits(&s[13..15])?;
    let us = civil_us(
        2000 + ymd / 10000,
        ymd / 100 % 100,
        ymd % 100,
        hour,
        mi,
        sec,
        0,
    )?;
    Some((
        Stamp {
            unix_us: us,
            exact: false,
        },
        15,
    ))
}

/// MySQL 5.7/8.0's ISO 8601 stamp (`2026-11-29T09:40:01.123456Z`, or `+01:00` with
/// `log_timestamps = SYSTEM`), and the `mysql.general_log` column's `2026-11-29 09:40:01.123456`
/// (space instead of `T`, no zone). Returns the stamp and the length it took.
pub(super) fn parse_iso_stamp(s: &[u8]) -> Option<(Stamp, usize)> {
    if s.len() < 19 || s[4] != b'-' || s[7] != b'-' || s[13] != b':' || s[16] != b':' {
        return None;
    }
    if s[10] != b'T' && s[10] != b' ' {
        return None;
    }
    let (y, mo, d) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let (h, mi, sec) = (
        digits(&s[11..13])?,
        digits(&s[14..16])?,
        digits(&s[17..19])?,
    );
    let mut i = 19;
    let mut us = 0i64;
    let mut exact = false;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &s[start..i];
        if frac.is_empty() {
            return None;
        }
        // Scale to microseconds whatever the number of digits (MySQL writes 6).
        for k in 0..6 {
            us = us * 10 + frac.get(k).map_or(0, |c| i64::from(c - b'0'));
        }
        exact = true;
    }
    let mut zone = 0i64;
    match s.get(i) {
        Some(b'Z') => i += 1,
        Some(&c) if (c == b'+' || c == b'-') && s.len() >= i + 6 && s[i + 3] == b':' => {
            let z = digits(&s[i + 1..i + 3])? * 3600 + digits(&s[i + 4..i + 6])? * 60;
            zone = if c == b'+' { z } else { -z };
            i += 6;
        }
        _ => {}
    }
    let unix_us = civil_us(y, mo, d, h, mi, sec, us)? - zone * 1_000_000;
    Some((Stamp { unix_us, exact }, i))
}

/// One of the three header lines both logs start with, and write again whenever the server
/// reopens the file (`mariadbd, Version: ... started with:`, `Tcp port: ...`,
/// `Time  Id Command  Argument`).
pub(super) fn is_log_header(line: &str) -> bool {
    (line.contains(", Version: ") && line.ends_with("started with:"))
        || line.starts_with("Tcp port: ")
        || (line.starts_with("Time") && line.contains("Id Command") && line.ends_with("Argument"))
}

/// Seconds with up to 6 decimals (`0.000123`, `1.600423`) as microseconds, without floats.
pub(super) fn parse_seconds_us(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int = u64::try_from(digits(int.as_bytes())?).ok()?;
    let mut us = 0u64;
    let f = frac.as_bytes();
    for k in 0..6 {
        let c = f.get(k).copied().unwrap_or(b'0');
        if !c.is_ascii_digit() {
            return None;
        }
        us = us * 10 + u64::from(c - b'0');
    }
    int.checked_mul(1_000_000)?.checked_add(us)
}

/// The user of a `user[priv_user] @ host [ip]` field (`User@Host:` of the slow log, the
/// `user_host` column of `mysql.general_log`): the part before `[`, or the bracketed one when
/// that is empty (MariaDB writes `[root] @ localhost []` on `Connect` rows).
pub(super) fn user_of_user_host(s: &str) -> &str {
    let s = s.trim_start();
    match s.split_once('[') {
        Some((u, rest)) if u.trim().is_empty() => rest.split(']').next().unwrap_or("").trim(),
        Some((u, _)) => u.trim(),
        None => s.split(' ').next().unwrap_or(""),
    }
}

/// The statement's kind for `Stats::statements`: its first keyword in lower case, after
/// leading blanks and comments (`/* ... */`, `-- ...`, `# ...`). `START TRANSACTION` is a
/// `begin`, as it is in PostgreSQL's reader.
pub(super) fn kind(sql: &str) -> &'static str {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else if s.starts_with("-- ") || s.starts_with('#') {
            s = s.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    let end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    let word = &s[..end];
    const KINDS: [&str; 7] = [
        "select", "insert", "update", "delete", "begin", "commit", "rollback",
    ];
    if let Some(k) = KINDS.iter().find(|k| word.eq_ignore_ascii_case(k)) {
        return k;
    }
    if word.eq_ignore_ascii_case("start") {
        let rest = s[end..].trim_start();
        let rest = rest.as_bytes();
        if rest.len() >= 11 && rest[..11].eq_ignore_ascii_case(b"transaction") {
            return "begin";
        }
    }
    "other"
}

/// Adds one to `map[key]`, allocating the key only the first time it is seen.
pub(super) fn count(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(v) => *v += 1,
        None => {
            map.insert(key.to_string(), 1);
        }
    }
}

/// A statement's start before offsets are known: unix microseconds, or not yet known (a
/// general-log record written before the file's first timestamp).
const UNKNOWN: u64 = u64::MAX;

/// Assembles sessions from "thread N sent this" events in log order.
///
/// While reading, `Statement::offset_us` holds the absolute start (unix µs, or `UNKNOWN`);
/// `finish` turns it into the offset from the capture's first statement.
pub(super) struct Builder<'f> {
    filter: &'f Filter,
    pub stats: Stats,
    sessions: Vec<Session>,
    /// Each session's current database (`Init DB`, the slow log's `Schema:`).
    databases: Vec<String>,
    /// Thread id to the index of its open session.
    open: HashMap<u64, usize>,
    /// How many sessions each thread id has had, to name the reused ones (`12`, `12-2`).
    uses: HashMap<u64, u32>,
    /// The first time the log wrote, for records written before it.
    first_time: Option<i64>,
}

impl<'f> Builder<'f> {
    pub fn new(filter: &'f Filter) -> Self {
        Builder {
            filter,
            stats: Stats::default(),
            sessions: Vec::new(),
            databases: Vec::new(),
            open: HashMap::new(),
            uses: HashMap::new(),
            first_time: None,
        }
    }

    pub fn skip(&mut self, reason: &str) {
        count(&mut self.stats.skipped, reason);
    }

    /// The log wrote a time (records before the first one get it).
    pub fn saw_time(&mut self, unix_us: i64) {
        if self.first_time.is_none() {
            self.first_time = Some(unix_us);
        }
    }

    /// A new session for `thread` (a `Connect`); one still open on that id ends first.
    pub fn connect(&mut self, thread: u64, user: &str, database: &str) -> usize {
        let n = self.uses.entry(thread).or_insert(0);
        *n += 1;
        let id = if *n == 1 {
            thread.to_string()
        } else {
            format!("{thread}-{n}")
        };
        self.sessions.push(Session {
            id,
            user: user.to_string(),
            database: database.to_string(),
            ..Session::default()
        });
        self.databases.push(database.to_string());
        let idx = self.sessions.len() - 1;
        self.open.insert(thread, idx);
        idx
    }

    /// The open session of `thread`, or a new one with unknown user and database (it connected
    /// before the log began).
    pub fn session(&mut self, thread: u64) -> usize {
        match self.open.get(&thread) {
            Some(&i) => i,
            None => self.connect(thread, "", ""),
        }
    }

    /// Fills in a session's user when the log says it later (the slow log's `User@Host:`).
    pub fn set_user_if_empty(&mut self, idx: usize, user: &str) {
        if let Some(s) = self.sessions.get_mut(idx) {
            if s.user.is_empty() && !user.is_empty() {
                s.user = user.to_string();
            }
        }
    }

    pub fn database(&self, idx: usize) -> &str {
        self.databases.get(idx).map_or("", |d| d.as_str())
    }

    /// The session's database changes for what follows (`Init DB`, a new `Schema:`). A session
    /// with no database yet takes it as its connect database; one that had a database gets a
    /// `USE` statement, so that its replay runs what follows in the same database.
    pub fn change_database(&mut self, idx: usize, database: &str, start: Option<i64>) {
        if self.database(idx) == database {
            return;
        }
        let had = self
            .sessions
            .get(idx)
            .is_some_and(|s| !s.database.is_empty() || !s.statements.is_empty());
        if let Some(d) = self.databases.get_mut(idx) {
            d.clear();
            d.push_str(database);
        }
        if had {
            let sql = format!("USE `{}`", database.replace('`', "``"));
            self.statement(idx, start, None, sql, None);
        } else if let Some(s) = self.sessions.get_mut(idx) {
            s.database = database.to_string();
        }
    }

    /// `thread`'s session ends (`Quit`): its id may be reused by a later connection.
    pub fn quit(&mut self, thread: u64) {
        self.open.remove(&thread);
    }

    /// A statement of session `idx`, kept unless the filter leaves it out.
    pub fn statement(
        &mut self,
        idx: usize,
        start: Option<i64>,
        duration_us: Option<u64>,
        sql: String,
        error: Option<String>,
    ) {
        let Some(session) = self.sessions.get(idx) else {
            self.skip("no session");
            return;
        };
        let reason =
            match (self.filter).refuses(self.database(idx), &session.user, &session.application) {
                Some(why) => Some(why),
                None if start.is_some_and(|t| !self.filter.in_window(t)) => Some("filtered: time"),
                None => None,
            };
        if let Some(r) = reason {
            self.skip(r);
            return;
        }
        let offset_us = start.map_or(UNKNOWN, |t| u64::try_from(t).unwrap_or(0));
        if let Some(s) = self.sessions.get_mut(idx) {
            s.statements.push(Statement {
                offset_us,
                duration_us,
                sql,
                protocol: Protocol::Simple,
                params: Vec::new(),
                error,
            });
        }
    }

    /// The capture: times made offsets from the first statement's start, empty sessions
    /// left out (counted), sessions ordered by their first statement, stats counted.
    pub fn finish(mut self, lines: u64) -> Capture {
        let first_time = self.first_time.map_or(0, |t| u64::try_from(t).unwrap_or(0));
        let filter = self.filter;
        let mut late_filtered = 0u64;
        for s in &mut self.sessions {
            for st in &mut s.statements {
                if st.offset_us == UNKNOWN {
                    st.offset_us = first_time;
                }
            }
            // Records written before the log's first time could not be checked against the
            // time window when read; check them now.
            let before = s.statements.len();
            s.statements
                .retain(|st| filter.in_window(i64::try_from(st.offset_us).unwrap_or(i64::MAX)));
            late_filtered += (before - s.statements.len()) as u64;
        }
        if late_filtered > 0 {
            *self
                .stats
                .skipped
                .entry("filtered: time".to_string())
                .or_insert(0) += late_filtered;
        }
        let mut sessions: Vec<Session> = Vec::with_capacity(self.sessions.len());
        for s in self.sessions.drain(..) {
            if s.statements.is_empty() {
                count(&mut self.stats.skipped, "session without statements");
            } else {
                sessions.push(s);
            }
        }
        let base = sessions
            .iter()
            .flat_map(|s| s.statements.iter().map(|st| st.offset_us))
            .min()
            .unwrap_or(0);
        let mut end = 0u64;
        for s in &mut sessions {
            for st in &mut s.statements {
                st.offset_us -= base;
                end = end.max(st.offset_us.saturating_add(st.duration_us.unwrap_or(0)));
                count(&mut self.stats.statements, kind(&st.sql));
                count(&mut self.stats.statements, "simple");
            }
        }
        // Stable: sessions starting at the same offset stay in log order.
        sessions.sort_by_key(|s| s.statements.first().map_or(0, |st| st.offset_us));
        self.stats.lines = lines;
        self.stats.sessions = sessions.len() as u64;
        self.stats.duration_us = end;
        Capture {
            family: Family::Mysql,
            sessions,
            stats: self.stats,
            started_unix_us: i64::try_from(base).unwrap_or(0),
        }
    }
}

/// What the readers' tests look up in a capture.
#[cfg(test)]
pub(super) mod testing {
    use super::super::{Capture, Session};

    pub fn session<'a>(c: &'a Capture, id: &str) -> &'a Session {
        match c.sessions.iter().find(|s| s.id == id) {
            Some(s) => s,
            None => panic!("no session {id}"),
        }
    }

    pub fn sqls(s: &Session) -> Vec<&str> {
        s.statements.iter().map(|st| st.sql.as_str()).collect()
    }

    pub fn stat(map: &std::collections::BTreeMap<String, u64>, key: &str) -> u64 {
        map.get(key).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        let (s, n) = parse_short_stamp(b"261129  9:10:17\t").unwrap();
        assert_eq!(n, 15);
        assert_eq!(s.unix_us, 1_795_943_417_000_000);
        assert!(!s.exact);
        let (s, n) = parse_iso_stamp(b"2026-11-29T09:10:17.123456Z\t 1").unwrap();
        assert_eq!((s.unix_us, n, s.exact), (1_795_943_417_123_456, 27, true));
        let (s, _) = parse_iso_stamp(b"2026-11-29T10:10:17.5+01:00").unwrap();
        assert_eq!(s.unix_us, 1_795_943_417_500_000);
        let (s, _) = parse_iso_stamp(b"2026-11-29 09:10:41.476113").unwrap();
        assert_eq!(s.unix_us, 1_795_943_441_476_113);
        assert!(parse_short_stamp(b"CREATE TABLE x(").is_none());
        assert!(parse_iso_stamp(b"2026-1x-29T09:10:17Z").is_none());
    }

    #[test]
    fn seconds_and_kinds() {
        assert_eq!(parse_seconds_us("1.600423"), Some(1_600_423));
        assert_eq!(parse_seconds_us("0.000013"), Some(13));
        assert_eq!(parse_seconds_us("2"), Some(2_000_000));
        assert_eq!(parse_seconds_us("x"), None);
        assert_eq!(parse_seconds_us("99999999999999999999999.1"), None);
        assert_eq!(kind("START  TRANSACTION"), "begin");
        assert_eq!(kind("/* app */ SELECT 1"), "select");
        assert_eq!(kind("  rollback"), "rollback");
        assert_eq!(kind("REPLACE INTO t VALUES (1)"), "other");
        assert_eq!(kind("BEGIN"), "begin");
        assert_eq!(user_of_user_host("root[root] @ localhost []"), "root");
        assert_eq!(user_of_user_host("[root] @ localhost []"), "root");
        assert_eq!(user_of_user_host("app[app] @  [10.0.0.1]"), "app");
    }
}
