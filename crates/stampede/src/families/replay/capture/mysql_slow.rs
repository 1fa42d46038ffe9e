//! Reads MySQL's and MariaDB's slow query log, written with `long_query_time = 0` so that it
//! holds every statement, into a `Capture` with each statement's duration.
//!
//! Owns: the slow log's entry syntax and how an entry's start is worked out. Must not touch:
//! the model (`mod.rs`), the shared MySQL helpers (`mysql_common.rs`, also used by the general
//! log reader), and the PostgreSQL readers (`pg_*.rs`, another engineer's), so that a change
//! to one log format cannot break another.
//!
//! An entry (MySQL Reference Manual 5.4.5 "The Slow Query Log", MariaDB KB "Slow Query Log
//! Overview"), written when the statement ends:
//!
//! ```text
//! # Time: 261129  9:10:17                   (MariaDB: only when it changed; MySQL: ISO, µs)
//! # User@Host: root[root] @ localhost []    (MySQL adds `  Id:    12`)
//! # Thread_id: 3  Schema: sbtest  QC_hit: No              (MariaDB)
//! # Query_time: 0.000688  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
//! # Rows_affected: 1  Bytes_sent: 11                      (MariaDB)
//! use `sbtest`;                             (when the database differs from the last written)
//! SET timestamp=1795943417;                 (the statement's start, whole seconds)
//! create database sbtest;                   (the text, any number of lines, then `;`)
//! ```
//!
//! The log records neither connects nor disconnects, so a session is a thread id for the
//! whole file, and its user and database are those of its entries.

use std::io::BufRead;

use super::filter::{Filter, ParseError};
use super::mysql_common::{
    is_log_header, parse_iso_stamp, parse_seconds_us, parse_short_stamp, user_of_user_host,
    Builder, Lines, Stamp,
};
use super::Capture;

/// Whether `first_bytes` (the start of a file) look like a slow query log: one of its entry
/// lines near the start. (MariaDB starts it with the same header as the general log, so the
/// header alone says nothing.)
pub fn detect(first_bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first_bytes);
    text.lines().take(40).any(|l| {
        l.starts_with("# Time: ")
            || l.starts_with("# User@Host: ")
            || l.starts_with("# Query_time: ")
    })
}

/// Reads a slow query log file.
pub fn read(input: impl BufRead, filter: &Filter) -> Result<Capture, ParseError> {
    let mut lines = Lines::new(input);
    let mut r = Reader {
        b: Builder::new(filter),
        entry: Entry::default(),
        time: None,
        last_use: String::new(),
        understood: false,
    };
    while let Some(line) = lines.next_line()? {
        r.line(line);
    }
    r.finish_entry();
    if !r.understood && lines.number > 0 {
        return Err(ParseError {
            line: 1,
            column: None,
            message: "not a MySQL/MariaDB slow query log: no `# User@Host:` entry".into(),
        });
    }
    Ok(r.b.finish(lines.number))
}

/// Where in an entry the reader is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Phase {
    /// Between entries (before the first `# User@Host:`, after a header).
    #[default]
    None,
    /// The `#` lines, `use` and `SET timestamp`.
    Head,
    /// The statement's text.
    Sql,
}

/// The entry being read.
#[derive(Default)]
struct Entry {
    phase: Phase,
    user: String,
    thread: Option<u64>,
    /// MariaDB's `Schema:` (empty when the session had none).
    schema: Option<String>,
    /// This entry's `use db;`.
    use_db: Option<String>,
    query_us: Option<u64>,
    /// MySQL's `Start:` (`log_slow_extra = ON`): the exact start.
    start: Option<i64>,
    /// `SET timestamp=N;`: the start, whole seconds.
    set_ts: Option<i64>,
    errno: Option<String>,
    /// `# administrator command: Quit;` in place of a statement.
    admin: bool,
    sql: String,
    sql_lines: u32,
}

struct Reader<'f> {
    b: Builder<'f>,
    entry: Entry,
    /// The last `# Time:`. MariaDB writes it only when the second changed.
    time: Option<Stamp>,
    /// The last `use db;` of the file. MySQL writes it when the database differs from the one
    /// of the last entry written, whichever thread that was (`File_query_log::write_slow`),
    /// so it holds for the entries after it, not only for its own.
    last_use: String,
    understood: bool,
}

/// `use db;` (the name maybe quoted with backticks), as the log writes it before a statement.
fn parse_use(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("use ")?.strip_suffix(';')?;
    Some(
        rest.strip_prefix('`')
            .and_then(|r| r.strip_suffix('`'))
            .unwrap_or(rest),
    )
}

/// The `timestamp=N` of `SET timestamp=N;` (MySQL may write `SET last_insert_id=1,
/// insert_id=2,timestamp=N;`).
fn parse_set_timestamp(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("SET ")?.strip_suffix(';')?;
    let at = rest.find("timestamp=")?;
    let value = rest[at + "timestamp=".len()..].split(',').next()?;
    value.trim().parse().ok()
}

impl Reader<'_> {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("# Time: ") {
            self.finish_entry();
            let b = rest.trim_start().as_bytes();
            match parse_iso_stamp(b).or_else(|| parse_short_stamp(b)) {
                Some((stamp, _)) => {
                    self.understood = true;
                    self.time = Some(stamp);
                    self.b.saw_time(stamp.unix_us);
                }
                None => self.b.skip("unparsed line"),
            }
            return;
        }
        if let Some(rest) = line.strip_prefix("# User@Host: ") {
            self.finish_entry();
            self.understood = true;
            let e = &mut self.entry;
            e.phase = Phase::Head;
            // MySQL ends the line with `  Id:    12`.
            let who = match rest.rsplit_once(" Id:") {
                Some((who, id)) => {
                    e.thread = id.trim().parse().ok();
                    who
                }
                None => rest,
            };
            e.user.push_str(user_of_user_host(who));
            return;
        }
        if is_log_header(line) {
            // The file's header, written again when the server reopens it.
            self.finish_entry();
            return;
        }
        match self.entry.phase {
            Phase::None => self.b.skip("unparsed line"),
            Phase::Head => {
                if let Some(rest) = line.strip_prefix("# ") {
                    self.head_fields(rest);
                } else if let Some(db) = parse_use(line) {
                    self.entry.use_db = Some(db.to_string());
                    self.last_use.clear();
                    self.last_use.push_str(db);
                } else if let Some(ts) = parse_set_timestamp(line) {
                    self.entry.set_ts = Some(ts);
                    self.entry.phase = Phase::Sql;
                } else {
                    // No `SET timestamp` (not written by these servers, but harmless): the
                    // text starts here.
                    self.entry.phase = Phase::Sql;
                    self.entry.sql_lines = 1;
                    self.entry.sql.push_str(line);
                }
            }
            Phase::Sql => {
                // MySQL writes `# administrator command: Quit;` where the statement goes.
                if self.entry.sql_lines == 0 && line.starts_with("# administrator command: ") {
                    self.entry.admin = true;
                    return;
                }
                if self.entry.sql_lines > 0 {
                    self.entry.sql.push('\n');
                }
                self.entry.sql_lines += 1;
                self.entry.sql.push_str(line);
            }
        }
    }

    /// The `Key: value` pairs of a `#` line (`Thread_id: 3  Schema:   QC_hit: No`, where an
    /// empty value is followed directly by the next key).
    fn head_fields(&mut self, rest: &str) {
        let e = &mut self.entry;
        let mut words = rest.split_whitespace().peekable();
        while let Some(key) = words.next() {
            let Some(key) = key.strip_suffix(':') else {
                continue;
            };
            let value = match words.peek() {
                Some(v) if !v.ends_with(':') => words.next().unwrap_or(""),
                _ => "",
            };
            match key {
                "Thread_id" | "Id" => {
                    if let Ok(t) = value.parse() {
                        e.thread = Some(t);
                    }
                }
                "Schema" => e.schema = Some(value.to_string()),
                "Query_time" => e.query_us = parse_seconds_us(value),
                // MySQL's error number (`log_slow_extra`); 0 is success.
                "Errno" if value != "0" && !value.is_empty() => {
                    e.errno = Some(value.to_string());
                }
                "Start" => e.start = parse_iso_stamp(value.as_bytes()).map(|(s, _)| s.unix_us),
                _ => {}
            }
        }
    }

    /// The entry read so far is whole: add its statement.
    fn finish_entry(&mut self) {
        let mut e = std::mem::take(&mut self.entry);
        if e.phase == Phase::None {
            return;
        }
        if e.admin {
            self.b.skip("administrator command");
            return;
        }
        // The server writes the text and then `;\n` (`File_query_log::write_slow`).
        if e.sql.ends_with(';') {
            e.sql.pop();
        }
        if e.sql.trim().is_empty() {
            self.b.skip("entry without statement");
            return;
        }
        let Some(thread) = e.thread else {
            self.b.skip("no session");
            return;
        };
        let start = self.start_of(&e);
        let idx = self.b.session(thread);
        self.b.set_user_if_empty(idx, &e.user);
        let db = match (&e.schema, &e.use_db) {
            (Some(s), _) => s.as_str(),
            (None, Some(u)) => u.as_str(),
            (None, None) => self.last_use.as_str(),
        };
        if !db.is_empty() {
            self.b.change_database(idx, db, start);
        }
        let sql = std::mem::take(&mut e.sql);
        self.b.statement(idx, start, e.query_us, sql, e.errno);
    }

    /// The statement's start, from the most exact thing the entry says:
    /// - MySQL's `Start:` (`log_slow_extra`), exact;
    /// - MySQL's `# Time:` with microseconds, the end, minus `Query_time` (the manual: the
    ///   server writes the entry after the statement has executed);
    /// - MariaDB's `SET timestamp`, the start in whole seconds: MariaDB's `# Time:` is that
    ///   same start second, not the end (checked on 10.11: `select sleep(1.6)` logged
    ///   `# Time:` equal to `SET timestamp`, 2 s before it ended). The statements of one
    ///   second keep their log order at that second's offset; no finer time is invented.
    fn start_of(&self, e: &Entry) -> Option<i64> {
        if e.start.is_some() {
            return e.start;
        }
        if let Some(t) = self.time.filter(|t| t.exact) {
            let q = i64::try_from(e.query_us.unwrap_or(0)).unwrap_or(0);
            return Some(t.unix_us - q);
        }
        match (e.set_ts, self.time) {
            (Some(ts), _) => ts.checked_mul(1_000_000),
            (None, Some(t)) => Some(t.unix_us),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::mysql_common::testing::{session, sqls, stat};
    use super::super::Family;
    use super::*;

    /// A real MariaDB 10.11 slow log (`long_query_time = 0`) of the same run as the general
    /// log fixture (sysbench oltp_write_only, 2 threads, 4 events; failing, multi-line and
    /// `use mysql` statements), and, after the header of the reopened file, `select sleep(1.6)`.
    const MARIADB: &str = include_str!("../../../../tests/fixtures/replay/mariadb-10.11-slow.log");

    fn read_str(s: &str, filter: &Filter) -> Capture {
        match read(s.as_bytes(), filter) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn mariadb_sysbench_statements_per_session_and_kind() {
        let c = read_str(MARIADB, &Filter::default());
        assert_eq!(c.family, Family::Mysql);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        // The log is written when a statement ends: 19's BEGIN ended first.
        assert_eq!(ids, ["17", "19", "18", "20", "21", "22", "24", "25"]);
        for id in ["18", "19"] {
            let s = session(&c, id);
            assert_eq!((s.user.as_str(), s.database.as_str()), ("root", "sbtest"));
            let kinds: Vec<&str> = s
                .statements
                .iter()
                .map(|st| st.sql.split(' ').next().unwrap_or(""))
                .collect();
            let event = ["BEGIN", "UPDATE", "UPDATE", "DELETE", "INSERT", "COMMIT"];
            assert_eq!(kinds, [event, event].concat());
            assert!(s.statements.iter().all(|st| st.duration_us.is_some()));
        }
        // Whole INSERT text, without the `;` the log adds.
        let insert = &session(&c, "18").statements[4].sql;
        assert!(insert.starts_with("INSERT INTO sbtest1 (id, k, c, pad) VALUES (506, 505, '"));
        assert!(insert.ends_with("-30864260660-68857130017')"), "{insert}");
        let st = &c.stats;
        assert_eq!(stat(&st.statements, "begin"), 4 + 1);
        assert_eq!(stat(&st.statements, "update"), 8);
        assert_eq!(stat(&st.statements, "delete"), 4);
        assert_eq!(stat(&st.statements, "insert"), 4);
        assert_eq!(stat(&st.statements, "commit"), 4);
        assert_eq!(stat(&st.statements, "rollback"), 1);
        assert_eq!(stat(&st.statements, "select"), 6);
        assert_eq!(stat(&st.statements, "other"), 4);
        assert_eq!(stat(&st.statements, "simple"), 36);
        assert!(st.skipped.is_empty(), "{:?}", st.skipped);
        assert_eq!(st.lines, MARIADB.lines().count() as u64);
        assert_eq!(st.sessions, 8);
    }

    #[test]
    fn mariadb_times_databases_and_multiline() {
        let c = read_str(MARIADB, &Filter::default());
        // 17's entry came before the file's first `# Time:`: its SET timestamp (9:10:49).
        assert_eq!(session(&c, "17").statements[0].offset_us, 0);
        assert_eq!(session(&c, "17").database, "");
        assert!(session(&c, "18")
            .statements
            .iter()
            .all(|s| s.offset_us == 1_000_000));
        let s = session(&c, "22");
        assert_eq!(
            sqls(s),
            [
                "select 1,\n  'two\nlines' as x",
                "SELECT DATABASE()",
                "USE `mysql`",
                "select count(*) from user",
                "start transaction",
                "select 1",
                "rollback",
            ]
        );
        assert_eq!(s.statements[2].duration_us, None);
        assert_eq!(s.statements[3].duration_us, Some(2_343));
        // MariaDB's `# Time:` is the start second: sleep(1.6) started at 9:11:42.
        let sleep = &session(&c, "25").statements[0];
        assert_eq!(sleep.offset_us, 53_000_000);
        assert_eq!(sleep.duration_us, Some(1_600_423));
        assert_eq!(c.stats.duration_us, 54_600_423);
    }

    #[test]
    fn filters_are_counted() {
        let f = Filter {
            databases: vec!["mysql".into()],
            ..Filter::default()
        };
        let c = read_str(MARIADB, &f);
        assert_eq!(c.sessions.len(), 1);
        assert_eq!(c.sessions[0].statements.len(), 5);
        assert_eq!(stat(&c.stats.skipped, "filtered: database"), 31);
        let f = Filter {
            begin_unix_us: Some(1_795_943_451_000_000),
            end_unix_us: Some(1_795_943_452_000_000),
            ..Filter::default()
        };
        let c = read_str(MARIADB, &f);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["20", "21", "22", "24"]);
        assert_eq!(stat(&c.stats.skipped, "filtered: time"), 1 + 24 + 1);
    }

    #[test]
    fn mysql_8_entries() {
        // MySQL 8.0's layout (Reference Manual 5.4.5): ISO `# Time:` (the end), `Id:` on the
        // User@Host line, `use` only when the database changes, `log_slow_extra` fields.
        let log = "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n\
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n\
Time                 Id Command    Argument\n\
# Time: 2026-11-29T09:40:01.123456Z\n\
# User@Host: app[app] @ localhost []  Id:    12\n\
# Query_time: 0.000123  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1\n\
use shop;\n\
SET timestamp=1795938001;\n\
SELECT 1;\n\
# Time: 2026-11-29T09:40:01.200000Z\n\
# User@Host: app[app] @ localhost []  Id:    13\n\
# Query_time: 0.050000  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\n\
SET timestamp=1795938001;\n\
UPDATE t SET a = 1\n\
# not a header\n\
WHERE id = 2;\n\
# Time: 2026-11-29T09:40:02.000000Z\n\
# User@Host: app[app] @ localhost []  Id:    12\n\
# Query_time: 0.000200  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0 Thread_id: 12 Errno: 1146 Killed: 0 Bytes_received: 0 Bytes_sent: 0 Start: 2026-11-29T09:40:01.900000Z End: 2026-11-29T09:40:01.900200Z\n\
use other;\n\
SET last_insert_id=7,insert_id=8,timestamp=1795938001;\n\
SELECT * FROM missing;\n\
# Time: 2026-11-29T09:40:02.100000Z\n\
# User@Host: app[app] @ localhost []  Id:    12\n\
# Query_time: 0.000010  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\n\
SET timestamp=1795938002;\n\
# administrator command: Quit;\n";
        assert!(detect(log.as_bytes()));
        let c = read_str(log, &Filter::default());
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["12", "13"]);
        let s = &c.sessions[0];
        assert_eq!((s.user.as_str(), s.database.as_str()), ("app", "shop"));
        assert_eq!(
            sqls(s),
            ["SELECT 1", "USE `other`", "SELECT * FROM missing"]
        );
        // Start = end - Query_time; `Start:` when the log has it.
        assert_eq!(s.statements[0].offset_us, 0);
        assert_eq!(s.statements[2].offset_us, 900_000 - 123_333);
        assert_eq!(s.statements[2].error.as_deref(), Some("1146"));
        assert_eq!(s.statements[0].error, None);
        let s = &c.sessions[1];
        // No `use` of its own: the file's last one holds.
        assert_eq!(s.database, "shop");
        assert_eq!(
            sqls(s),
            ["UPDATE t SET a = 1\n# not a header\nWHERE id = 2"]
        );
        assert_eq!(s.statements[0].offset_us, 150_000 - 123_333);
        assert_eq!(stat(&c.stats.skipped, "administrator command"), 1);
    }

    #[test]
    fn unparsed_and_unreadable() {
        let c = read_str(
            "stray\n# User@Host: u[u] @ localhost []\n# Query_time: 0.1\nSET timestamp=1;\nSELECT 1;\n",
            &Filter::default(),
        );
        assert_eq!(stat(&c.stats.skipped, "unparsed line"), 1);
        assert_eq!(stat(&c.stats.skipped, "no session"), 1);
        assert!(read("just text\n".as_bytes(), &Filter::default()).is_err());
        assert!(detect(MARIADB.as_bytes()));
        let general =
            "mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n\
Tcp port: 0  Unix socket: /tmp/mylog.sock\nTime\t\t    Id Command\tArgument\n\
261129  9:10:50\t    18 Connect\troot@localhost on sbtest using Socket\n";
        assert!(!detect(general.as_bytes()));
    }
}
