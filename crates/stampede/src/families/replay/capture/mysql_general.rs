//! Reads MySQL's and MariaDB's general query log, as a file (`log_output = FILE`) or as the
//! rows of `mysql.general_log` (`log_output = TABLE`), into a `Capture`.
//!
//! Owns: the general log's record syntax and what each command means for replay. Must not
//! touch: the model (`mod.rs`), the shared MySQL helpers (`mysql_common.rs`, also used by
//! the slow log reader), and the PostgreSQL readers (`pg_*.rs`, another engineer's), so that
//! a change to one log format cannot break another.
//!
//! The format (MariaDB KB "General Query Log"; MySQL Reference Manual 5.4.3 "The General
//! Query Log"): three header lines (`mariadbd, Version: ... started with:`, `Tcp port: ...`,
//! `Time  Id Command  Argument`), written again whenever the file is reopened, then one record
//! per command the server *received*, in the order received, before it runs (so a failing
//! statement is logged too, and no duration or error is known):
//!
//! - MariaDB (and MySQL 5.6): `YYMMDD HH:MM:SS\t   Id Command\tArgument`, the time written
//!   only when it differs from the previous record's; otherwise the line starts with `\t\t`.
//! - MySQL 5.7/8.0: `2026-11-29T09:40:01.123456Z\t   12 Query\tSELECT 1`, every record.
//!
//! A statement's newlines are written as they are, so a line that does not start a record
//! continues the previous record's argument.

use std::io::BufRead;

use super::filter::{Filter, ParseError};
use super::mysql_common::{
    is_log_header, parse_iso_stamp, parse_short_stamp, user_of_user_host, Builder, Lines,
};
use super::Capture;

/// One row of `mysql.general_log` (`log_output = TABLE`), its columns as text, as
/// `SELECT * FROM mysql.general_log` returns them.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GeneralLogRow {
    /// `TIMESTAMP(6)`: `2026-11-29 09:10:41.476113`, in the session time zone of the select
    /// (read as UTC, which only matters for a `Filter` time window).
    pub event_time: String,
    /// `root[root] @ localhost []`.
    pub user_host: String,
    pub thread_id: u64,
    pub server_id: u32,
    /// `Query`, `Connect`, `Init DB`, ... as in the file.
    pub command_type: String,
    pub argument: String,
}

/// Whether `first_bytes` (the start of a file) look like a general query log: its header or
/// one of its records, and nothing of the slow log (which MariaDB starts with the same header).
pub fn detect(first_bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(first_bytes);
    if text.starts_with("# Time: ")
        || text.starts_with("# User@Host: ")
        || text.contains("\n# Time: ")
        || text.contains("\n# User@Host: ")
        || text.contains("\n# Query_time: ")
    {
        return false;
    }
    text.lines()
        .take(20)
        .any(|l| is_log_header(l) || parse_record(l).is_some_and(|r| r.known()))
}

/// Reads a general query log file.
pub fn read(input: impl BufRead, filter: &Filter) -> Result<Capture, ParseError> {
    let mut lines = Lines::new(input);
    let mut r = Reader::new(filter);
    let mut understood = false;
    while let Some(line) = lines.next_line()? {
        if let Some(rec) = parse_record(line) {
            understood = true;
            r.flush();
            if let Some(stamp) = rec.stamp {
                r.time = Some(stamp);
                r.b.saw_time(stamp);
            }
            let key = command_key(rec.command);
            if key.is_empty() {
                // Not one this reader acts on: counted under its own name, its lines consumed.
                r.b.skip(&rec.command.to_ascii_lowercase());
            }
            r.pending = Some((rec.thread, key));
            r.arg.clear();
            r.arg.push_str(rec.argument);
        } else if is_log_header(line) {
            // The header, written again when the file is reopened (FLUSH LOGS, a restart).
            // Thread ids are not closed here: a reopen keeps them, and after a restart each
            // reused id starts with its `Connect`, which ends the old session.
            understood = true;
            r.flush();
        } else if r.pending.is_some() {
            r.arg.push('\n');
            r.arg.push_str(line);
        } else {
            r.b.skip("unparsed line");
        }
    }
    r.flush();
    if !understood && lines.number > 0 {
        return Err(ParseError {
            line: 1,
            column: None,
            message: "not a MySQL/MariaDB general query log: no header and no record".into(),
        });
    }
    Ok(r.b.finish(lines.number))
}

/// Reads the rows of `mysql.general_log`, in the order the table returns them (the order they
/// were written). Their `event_time` has microseconds, so offsets are exact. A row whose
/// `event_time` cannot be read is counted as `unparsed row`, one whose `server_id` differs
/// from the first row's as `other server`.
pub fn from_table_rows(rows: impl Iterator<Item = GeneralLogRow>, filter: &Filter) -> Capture {
    let mut r = Reader::new(filter);
    let mut n = 0u64;
    let mut server = None;
    for row in rows {
        n += 1;
        // One capture is one server: thread ids of two servers would merge their sessions.
        if *server.get_or_insert(row.server_id) != row.server_id {
            r.b.skip("other server");
            continue;
        }
        let Some((stamp, _)) = parse_iso_stamp(row.event_time.as_bytes()) else {
            r.b.skip("unparsed row");
            continue;
        };
        r.time = Some(stamp.unix_us);
        r.b.saw_time(stamp.unix_us);
        let mut argument = row.argument;
        r.command(
            row.thread_id,
            &row.command_type,
            &mut argument,
            user_of_user_host(&row.user_host),
        );
    }
    r.b.finish(n)
}

/// A record's first line.
struct Record<'a> {
    stamp: Option<i64>,
    thread: u64,
    command: &'a str,
    argument: &'a str,
}

impl Record<'_> {
    /// A command the servers write (MariaDB's `command_name[]` in `sql/sql_parse.cc`).
    fn known(&self) -> bool {
        matches!(
            self.command,
            "Connect" | "Query" | "Quit" | "Init DB" | "Prepare" | "Execute" | "Close stmt"
        )
    }
}

/// The commands this reader acts on, as static names (no allocation per record); "" for the
/// others, which are counted by name when read.
fn command_key(command: &str) -> &'static str {
    const KEYS: [&str; 11] = [
        "Connect",
        "Query",
        "Execute",
        "Init DB",
        "Quit",
        "Prepare",
        "Close stmt",
        "Reset stmt",
        "Field List",
        "Ping",
        "Statistics",
    ];
    KEYS.iter().find(|k| **k == command).copied().unwrap_or("")
}

/// The record starting on `line`, or `None` when the line continues the previous one.
fn parse_record(line: &str) -> Option<Record<'_>> {
    let b = line.as_bytes();
    let (stamp, at) = if b.starts_with(b"\t\t") {
        (None, 2)
    } else {
        let (stamp, n) = parse_short_stamp(b).or_else(|| parse_iso_stamp(b))?;
        if b.get(n) != Some(&b'\t') {
            return None;
        }
        (Some(stamp.unix_us), n + 1)
    };
    let rest = line.get(at..)?.trim_start_matches(' ');
    let id_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if id_len == 0 {
        return None;
    }
    let thread = rest[..id_len].parse().ok()?;
    let (command, argument) = rest[id_len..].strip_prefix(' ')?.split_once('\t')?;
    // A command name is a few words of letters (`Close stmt`, `Binlog Dump`, `Slave_IO`);
    // anything else is a statement's own text that happens to start with tabs and digits.
    if command.is_empty()
        || command.len() > 32
        || !command
            .bytes()
            .all(|c| c.is_ascii_alphabetic() || c == b' ' || c == b'_')
    {
        return None;
    }
    Some(Record {
        stamp,
        thread,
        command,
        argument,
    })
}

/// The user and database of a `Connect` argument: `user@host on db using Socket` (MariaDB
/// also writes `user@host as proxy on db using TCP/IP`); `None` for a failed login
/// (`Access denied for user ...`), which opens no session.
fn parse_connect(arg: &str) -> Option<(&str, &str)> {
    let (who, rest) = arg.split_once(" on ")?;
    let user = who.rsplit_once('@').map_or(who, |(u, _)| u);
    let db = rest.rsplit_once(" using ").map_or(rest, |(d, _)| d).trim();
    Some((user, db))
}

struct Reader<'f> {
    b: Builder<'f>,
    /// The last time written: MariaDB writes a record's time only when it changed, so every
    /// record of one second gets that second's start. Offsets are therefore whole seconds
    /// there, and the statements of one second keep their log order at the same offset:
    /// nothing finer is invented. MySQL's and the table's microseconds are used as they are.
    time: Option<i64>,
    /// The record being read (thread, `command_key`) and its argument so far.
    pending: Option<(u64, &'static str)>,
    arg: String,
}

impl<'f> Reader<'f> {
    fn new(filter: &'f Filter) -> Self {
        Reader {
            b: Builder::new(filter),
            time: None,
            pending: None,
            arg: String::new(),
        }
    }

    /// The pending record is whole: act on it.
    fn flush(&mut self) {
        if let Some((thread, command)) = self.pending.take() {
            let mut arg = std::mem::take(&mut self.arg);
            self.command(thread, command, &mut arg, "");
            // A statement took the text; any other command leaves the buffer for reuse.
            arg.clear();
            self.arg = arg;
        }
    }

    /// One whole record. `user` is the table row's `user_host` user ("" for the file). A
    /// statement takes `argument`'s text (it is its own string); other commands leave it.
    fn command(&mut self, thread: u64, command: &str, argument: &mut String, user: &str) {
        let time = self.time;
        match command {
            "Connect" => match parse_connect(argument) {
                Some((u, db)) => {
                    self.b.connect(thread, u, db);
                }
                None => self.b.skip("failed connect"),
            },
            "Query" | "Execute" => {
                // `Execute` is written with the values already in the text (the server
                // expands the prepared statement for the log), so it replays as text.
                let idx = self.b.session(thread);
                self.b.set_user_if_empty(idx, user);
                self.b
                    .statement(idx, time, None, std::mem::take(argument), None);
            }
            "Init DB" => {
                let idx = self.b.session(thread);
                self.b.set_user_if_empty(idx, user);
                self.b.change_database(idx, argument.trim(), time);
            }
            "Quit" => self.b.quit(thread),
            // Prepared statements are replayed from their `Execute` text, so preparing,
            // closing and resetting them have nothing to send.
            "Prepare" => self.b.skip("prepare"),
            "Close stmt" => self.b.skip("close stmt"),
            "Reset stmt" => self.b.skip("reset stmt"),
            "Field List" => self.b.skip("field list"),
            "Ping" => self.b.skip("ping"),
            "Statistics" => self.b.skip("statistics"),
            "" => {}
            other => self.b.skip(&other.to_ascii_lowercase()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::mysql_common::testing::{session, sqls, stat};
    use super::super::Family;
    use super::*;

    /// A real MariaDB 10.11 general log: `sysbench oltp_write_only --threads=2 --events=4`
    /// (threads 18, 19), a failing statement (20), a syntax error (21), a multi-line one and
    /// `use mysql` (22), `mariadb-admin status` (23), from a log reopened mid-run (17, 24).
    const MARIADB: &str =
        include_str!("../../../../tests/fixtures/replay/mariadb-10.11-general.log");
    /// `SELECT * FROM mysql.general_log` through `mariadb --batch` (`log_output = TABLE`).
    const TABLE: &str =
        include_str!("../../../../tests/fixtures/replay/mariadb-10.11-general_log-table.tsv");

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
        // 23 only asked for statistics: no statements, so no session.
        assert_eq!(ids, ["17", "18", "19", "20", "21", "22", "24"]);
        // oltp_write_only's event (oltp_common.lua): BEGIN, an index UPDATE, a non-index
        // UPDATE, DELETE, INSERT, COMMIT; 4 events over 2 threads.
        for id in ["18", "19"] {
            let s = session(&c, id);
            assert_eq!((s.user.as_str(), s.database.as_str()), ("root", "sbtest"));
            let expected: Vec<&str> = MARIADB
                .lines()
                .filter_map(|l| l.strip_prefix(&format!("\t\t    {id} Execute\t")))
                .collect();
            assert_eq!(expected.len(), 12);
            // Every Execute, whole, in the session's order.
            assert_eq!(sqls(s), expected);
        }
        let st = &c.stats;
        assert_eq!(stat(&st.statements, "begin"), 4 + 1); // + `start transaction`
        assert_eq!(stat(&st.statements, "update"), 8);
        assert_eq!(stat(&st.statements, "delete"), 4);
        assert_eq!(stat(&st.statements, "insert"), 4);
        assert_eq!(stat(&st.statements, "commit"), 4);
        assert_eq!(stat(&st.statements, "rollback"), 1);
        assert_eq!(stat(&st.statements, "select"), 5);
        assert_eq!(stat(&st.statements, "other"), 4); // 2 SET, `selec 1`, USE from Init DB
        assert_eq!(stat(&st.statements, "simple"), 35);
        assert_eq!(stat(&st.skipped, "prepare"), 12);
        assert_eq!(stat(&st.skipped, "close stmt"), 12);
        assert_eq!(stat(&st.skipped, "statistics"), 1);
        assert_eq!(stat(&st.skipped, "session without statements"), 1);
        assert_eq!(stat(&st.skipped, "unparsed line"), 0);
        assert_eq!(st.sessions, 7);
        assert_eq!(st.lines, MARIADB.lines().count() as u64);
    }

    #[test]
    fn mariadb_multiline_init_db_and_seconds() {
        let c = read_str(MARIADB, &Filter::default());
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
        assert_eq!(s.database, "sbtest");
        // 17's query was written before the reopened file's first time: it takes that time.
        assert_eq!(session(&c, "17").statements[0].offset_us, 0);
        assert!(session(&c, "17").user.is_empty());
        // Whole seconds: everything of 9:10:50 at 0, of 9:10:51 at 1 s, in log order.
        assert!(session(&c, "18")
            .statements
            .iter()
            .all(|s| s.offset_us == 0));
        assert!(s.statements.iter().all(|s| s.offset_us == 1_000_000));
        assert_eq!(session(&c, "21").database, "");
        assert_eq!(c.stats.duration_us, 1_000_000);
        assert!(c
            .sessions
            .iter()
            .flat_map(|s| &s.statements)
            .all(|s| { s.duration_us.is_none() && s.error.is_none() && s.params.is_empty() }));
    }

    #[test]
    fn filters_are_counted() {
        let by_user = Filter {
            users: vec!["app".into()],
            ..Filter::default()
        };
        let c = read_str(MARIADB, &by_user);
        assert!(c.sessions.is_empty());
        assert_eq!(stat(&c.stats.skipped, "filtered: user"), 35);

        let by_db = Filter {
            databases: vec!["sbtest".into()],
            ..Filter::default()
        };
        let c = read_str(MARIADB, &by_db);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["18", "19", "20", "22"]);
        // 22 after `Init DB mysql`: its USE and the 4 statements after it.
        assert_eq!(session(&c, "22").statements.len(), 2);
        assert_eq!(stat(&c.stats.skipped, "filtered: database"), 1 + 1 + 1 + 5);

        let first_second = Filter {
            end_unix_us: Some(1_795_943_451_000_000), // 2026-11-29 09:10:51 UTC
            ..Filter::default()
        };
        let c = read_str(MARIADB, &first_second);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["17", "18", "19"]);
        assert_eq!(stat(&c.stats.skipped, "filtered: time"), 10);
    }

    #[test]
    fn mysql_8_records_quit_and_reuse() {
        // MySQL 8.0's layout (Reference Manual 5.4.3; every record has its time in UTC).
        let log = "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n\
Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n\
Time                 Id Command    Argument\n\
2026-11-29T09:40:01.123456Z\t   12 Connect\tapp@localhost on shop using TCP/IP\n\
2026-11-29T09:40:01.123500Z\t   12 Query\tSELECT 1\n\
2026-11-29T09:40:01.123600Z\t   13 Connect\tAccess denied for user 'x'@'localhost' (using password: YES)\n\
2026-11-29T09:40:01.124000Z\t   12 Field List\tt\n\
2026-11-29T09:40:01.124100Z\t   12 Ping\t\n\
2026-11-29T09:40:01.125000Z\t   12 Query\tUPDATE t\n\
SET a = 1\n\
\t\t   1 not a record\n\
2026-11-29T09:40:01.126000Z\t   12 Quit\t\n\
2026-11-29T09:40:02.000001Z\t   12 Connect\tapp@localhost on  using Socket\n\
2026-11-29T09:40:02.000002Z\t   12 Init DB\tshop\n\
2026-11-29T09:40:02.000003Z\t   12 Query\tCOMMIT\n\
2026-11-29T09:40:02.000004Z\t   12 Binlog Dump\t\n";
        assert!(detect(log.as_bytes()));
        let c = read_str(log, &Filter::default());
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["12", "12-2"]);
        let s = &c.sessions[0];
        assert_eq!((s.user.as_str(), s.database.as_str()), ("app", "shop"));
        assert_eq!(
            sqls(s),
            ["SELECT 1", "UPDATE t\nSET a = 1\n\t\t   1 not a record"]
        );
        assert_eq!(s.statements[1].offset_us, 1_500);
        let s = &c.sessions[1];
        // Init DB before any statement is the session's database, not a USE.
        assert_eq!((s.database.as_str(), sqls(s)), ("shop", vec!["COMMIT"]));
        assert_eq!(s.statements[0].offset_us, 876_503);
        assert_eq!(stat(&c.stats.skipped, "field list"), 1);
        assert_eq!(stat(&c.stats.skipped, "ping"), 1);
        assert_eq!(stat(&c.stats.skipped, "failed connect"), 1);
        assert_eq!(stat(&c.stats.skipped, "binlog dump"), 1);
        assert_eq!(c.stats.duration_us, 876_503);
    }

    #[test]
    fn unparsed_and_unreadable() {
        let c = read_str("garbage\n\t\t     3 Query\tSELECT 1\n", &Filter::default());
        assert_eq!(stat(&c.stats.skipped, "unparsed line"), 1);
        assert_eq!(c.sessions.len(), 1);
        assert!(read("just text\nmore\n".as_bytes(), &Filter::default()).is_err());
        assert!(read_str("", &Filter::default()).sessions.is_empty());
        assert!(!detect(
            b"# Time: 261129  9:10:17\n# User@Host: root[root] @ localhost []\n"
        ));
        assert!(!detect(b"just text\n"));
        assert!(detect(MARIADB.as_bytes()));
    }

    /// `mariadb --batch` escapes `\n`, `\t` and `\\` in its output.
    fn unescape(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('0') => out.push('\0'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        }
        out
    }

    fn table_rows() -> Vec<GeneralLogRow> {
        TABLE
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                assert_eq!(f.len(), 6, "{l}");
                GeneralLogRow {
                    event_time: f[0].to_string(),
                    user_host: unescape(f[1]),
                    thread_id: f[2].parse().unwrap_or(0),
                    server_id: f[3].parse().unwrap_or(0),
                    command_type: f[4].to_string(),
                    argument: unescape(f[5]),
                }
            })
            .collect()
    }

    #[test]
    fn mariadb_table_rows() {
        let c = from_table_rows(table_rows().into_iter(), &Filter::default());
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["11", "12", "13", "14"]);
        for id in ["11", "12"] {
            let s = session(&c, id);
            assert_eq!(s.statements.len(), 12);
            assert_eq!(s.statements[0].sql, "BEGIN");
            assert_eq!((s.user.as_str(), s.database.as_str()), ("root", "sbtest"));
        }
        let s = session(&c, "13");
        assert_eq!(
            sqls(s),
            [
                "select 1,\n 'x'",
                "SELECT DATABASE()",
                "USE `mysql`",
                "select count(*) from db"
            ]
        );
        // Exact: 11's BEGIN at 09:10:41.504289 is the first statement.
        assert_eq!(s.statements[0].offset_us, 524_655 - 504_289);
        assert_eq!(s.statements[3].offset_us, 525_403 - 504_289);
        assert_eq!(stat(&c.stats.statements, "simple"), 24 + 4 + 1);
        assert_eq!(stat(&c.stats.skipped, "prepare"), 12);
        assert_eq!(c.stats.lines, 61);

        let mut rows = table_rows();
        rows[5].server_id = 2;
        rows[6].event_time = "yesterday".into();
        let c = from_table_rows(rows.into_iter(), &Filter::default());
        assert_eq!(stat(&c.stats.skipped, "other server"), 1);
        assert_eq!(stat(&c.stats.skipped, "unparsed row"), 1);
    }
}
