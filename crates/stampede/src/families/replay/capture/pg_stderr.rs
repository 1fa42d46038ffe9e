//! PostgreSQL's stderr log (`log_destination = stderr`, what `logging_collector` writes to
//! `*.log`): each entry is `log_line_prefix`, then `SEVERITY:  message`; a message of several
//! lines goes on in lines that begin with a tab.
//!
//! Owns: `log_line_prefix` matching (`Prefix`, `DEFAULT_PREFIXES`, `detect_prefix`) and
//! splitting stderr lines into `pg_log::Record`s. Must not touch: what an entry means
//! (statements, sessions, pairing, filters: `pg_log::Assembler`, shared with csvlog and
//! jsonlog so the three formats read alike), nor the model in `mod.rs`.
//!
//! The escapes are those of `log_line_prefix` (runtime-config-logging): `%m` `%t` `%n` times,
//! `%p` pid, `%c` session id, `%l` line number, `%u` user, `%d` database, `%a` application,
//! `%e` SQLSTATE, `%q` "stop here in non-session processes" (the checkpointer, autovacuum...).

use super::filter::{Filter, ParseError};
use super::pg_log::{self, Assembler, Record};
use super::Capture;

/// The `log_line_prefix` forms tried when none is given, most specific first: Debian's and
/// Ubuntu's default, the form pgBadger documents for stderr, the RDS / pgBadger form, and
/// PostgreSQL's own default since 13 (`%m [%p] `).
pub const DEFAULT_PREFIXES: &[&str] = &[
    "%m [%p] %q%u@%d ",
    "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%m [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%t:%r:%u@%d:[%p]:",
    "%m:%r:%u@%d:[%p]:",
    "%m [%p] ",
    "%t [%p] ",
];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(String),
    Esc(u8),
    /// `%q`.
    Stop,
}

/// A compiled `log_line_prefix`.
#[derive(Clone, Debug, PartialEq)]
pub struct Prefix {
    toks: Vec<Tok>,
}

/// What a prefix matched in one line.
#[derive(Default)]
struct Fields<'a> {
    time_us: Option<i64>,
    pid: u32,
    session_id: Option<&'a str>,
    line_num: Option<u64>,
    user: Option<&'a str>,
    database: Option<&'a str>,
    application: Option<&'a str>,
    sqlstate: Option<&'a str>,
    /// The line stopped at `%q`: not a session's.
    stopped: bool,
    severity: &'a str,
    message: &'a str,
}

/// `LOG:  text` into the severity and the text (PostgreSQL writes two spaces after the colon).
fn split_severity(s: &str) -> Option<(&str, &str)> {
    let end = s.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit()))?;
    let (sev, rest) = s.split_at(end);
    let rest = rest.strip_prefix(':')?;
    let ok = matches!(
        sev,
        "LOG"
            | "ERROR"
            | "FATAL"
            | "PANIC"
            | "WARNING"
            | "NOTICE"
            | "INFO"
            | "DEBUG"
            | "DEBUG1"
            | "DEBUG2"
            | "DEBUG3"
            | "DEBUG4"
            | "DEBUG5"
            | "DETAIL"
            | "HINT"
            | "CONTEXT"
            | "STATEMENT"
            | "QUERY"
            | "LOCATION"
    );
    ok.then(|| {
        (
            sev,
            rest.strip_prefix("  ")
                .unwrap_or(rest.trim_start_matches(' ')),
        )
    })
}

impl Prefix {
    /// Compiles a `log_line_prefix` setting (as `SHOW log_line_prefix` prints it).
    pub fn new(spec: &str) -> Prefix {
        let mut toks = Vec::new();
        let mut lit = String::new();
        let b = spec.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' && i + 1 < b.len() {
                // A padding like `%-10u` (PG 9.6+): the width is ignored, values are trimmed.
                let mut j = i + 1;
                while j < b.len() && (b[j] == b'-' || b[j].is_ascii_digit()) {
                    j += 1;
                }
                let Some(&e) = b.get(j) else { break };
                if e == b'%' {
                    lit.push('%');
                } else {
                    if !lit.is_empty() {
                        toks.push(Tok::Lit(std::mem::take(&mut lit)));
                    }
                    toks.push(if e == b'q' { Tok::Stop } else { Tok::Esc(e) });
                }
                i = j + 1;
            } else {
                let c = spec[i..].chars().next().unwrap_or(' ');
                lit.push(c);
                i += c.len_utf8();
            }
        }
        if !lit.is_empty() {
            toks.push(Tok::Lit(lit));
        }
        Prefix { toks }
    }

    /// Whether the prefix has a time (`%m`, `%t`, `%n`): without one no statement has a start.
    pub fn has_time(&self) -> bool {
        self.toks
            .iter()
            .any(|t| matches!(t, Tok::Esc(b'm' | b't' | b'n')))
    }

    fn has(&self, e: u8) -> bool {
        self.toks.contains(&Tok::Esc(e))
    }

    /// Matches one line; `None` when it is not a line of this prefix.
    fn split<'a>(&self, line: &'a str) -> Option<Fields<'a>> {
        let mut f = Fields::default();
        let mut s = line;
        for (k, tok) in self.toks.iter().enumerate() {
            match tok {
                Tok::Lit(l) => s = s.strip_prefix(l.as_str())?,
                Tok::Stop => {
                    if let Some((sev, msg)) = split_severity(s) {
                        f.stopped = true;
                        f.severity = sev;
                        f.message = msg;
                        return Some(f);
                    }
                }
                Tok::Esc(e) => {
                    let next = match self.toks.get(k + 1) {
                        Some(Tok::Lit(l)) => Some(l.as_str()),
                        _ => None,
                    };
                    let (v, rest) = take_value(*e, s, next)?;
                    s = rest;
                    let v = v.trim();
                    match e {
                        b'm' | b't' => f.time_us = Some(pg_log::parse_timestamp(v)?.0),
                        b'n' => {
                            // Unix seconds with milliseconds, `1764409201.123`.
                            let (sec, frac) = v.split_once('.').unwrap_or((v, ""));
                            let mut us = sec.parse::<i64>().ok()? * 1_000_000;
                            let mut scale = 100_000;
                            for c in frac.bytes().take(6) {
                                us += i64::from(c.checked_sub(b'0').filter(|d| *d < 10)?) * scale;
                                scale /= 10;
                            }
                            f.time_us = Some(us);
                        }
                        b'p' => f.pid = v.parse().ok()?,
                        b'c' => f.session_id = Some(v),
                        b'l' => f.line_num = v.parse().ok(),
                        b'u' => f.user = Some(v),
                        b'd' => f.database = Some(v),
                        b'a' => f.application = Some(v),
                        b'e' => f.sqlstate = Some(v),
                        _ => {}
                    }
                }
            }
        }
        let (sev, msg) = split_severity(s)?;
        f.severity = sev;
        f.message = msg;
        Some(f)
    }
}

/// One escape's value at the start of `s`, and the rest. Times, numbers and session ids have a
/// shape of their own; other values run to the next literal of the prefix.
fn take_value<'a>(e: u8, s: &'a str, next: Option<&str>) -> Option<(&'a str, &'a str)> {
    let b = s.as_bytes();
    let end = match e {
        b'm' | b't' | b's' => pg_log::parse_timestamp(s)?.1,
        b'n' | b'p' | b'l' | b'P' | b'x' | b'c' | b'v' | b'Q' => {
            let shape = |c: u8| match e {
                b'n' => c.is_ascii_digit() || c == b'.',
                b'c' => c.is_ascii_hexdigit() || c == b'.',
                b'v' => c.is_ascii_digit() || c == b'/',
                _ => c.is_ascii_digit(),
            };
            b.iter().position(|&c| !shape(c)).unwrap_or(b.len())
        }
        // `%r` is `host(port)` or `[local]`: an IPv6 host has colons, so end at its `)`.
        b'r' if s.starts_with('[') => s.find(']')? + 1,
        b'r' if next.is_some_and(|n| s.find(n) > s.find(')')) && s.contains(')') => {
            s.find(')')? + 1
        }
        _ => match next {
            Some(n) => s.find(n)?,
            None => s.find(' ').unwrap_or(s.len()),
        },
    };
    Some(s.split_at(end))
}

/// Which of `DEFAULT_PREFIXES` fits the first lines of a log best: a line that matches in full
/// scores 2, one that matches only up to `%q` 1 (so `%m [%p] %q%u@%d ` does not win a log of
/// plain `%m [%p] ` on its background lines). `None` when none matches a line.
pub fn detect_prefix(lines: &[&str]) -> Option<&'static str> {
    let mut best = (0, None);
    for &p in DEFAULT_PREFIXES {
        let prefix = Prefix::new(p);
        let score: u32 = lines
            .iter()
            .filter(|l| !l.starts_with('\t'))
            .filter_map(|l| prefix.split(l))
            .map(|f| if f.stopped { 1 } else { 2 })
            .sum();
        if score > best.0 {
            best = (score, Some(p));
        }
    }
    best.1
}

/// Reads a stderr log. `prefix` is the server's `log_line_prefix`; `None` tries
/// `DEFAULT_PREFIXES` on the first 200 lines (`detect_prefix`).
pub fn read(
    mut input: impl std::io::BufRead,
    filter: &Filter,
    prefix: Option<&str>,
) -> Result<Capture, ParseError> {
    let mut raw = Vec::new();
    let mut line = String::new();
    let mut head: Vec<String> = Vec::new();
    let mut lineno = 0u64;
    let spec = match prefix {
        Some(p) => p.to_owned(),
        None => {
            while head.len() < 200 && pg_log::read_line(&mut input, &mut raw, &mut line, 0)? {
                head.push(line.clone());
            }
            let refs: Vec<&str> = head.iter().map(String::as_str).collect();
            match detect_prefix(&refs) {
                Some(p) => p.to_owned(),
                None if head.iter().all(|l| l.trim().is_empty()) => String::new(),
                None => {
                    return Err(ParseError {
                        line: 1,
                        column: None,
                        message: "no known log_line_prefix matches; give the server's".into(),
                    })
                }
            }
        }
    };
    let prefix = Prefix::new(&spec);
    if !prefix.has_time() && !spec.is_empty() {
        return Err(ParseError {
            line: 0,
            column: None,
            message: format!("log_line_prefix '{spec}' has no time (%m, %t or %n)"),
        });
    }
    // Without `%u`/`%d` (or `%q`) a line cannot say it is not a session's: take it as one.
    let knows_backend = prefix.has(b'u') || prefix.has(b'd');
    let mut asm = Assembler::new(filter, true);
    let mut entry = String::new();
    let mut head = head.into_iter();
    loop {
        let more = match head.next() {
            Some(h) => {
                line = h;
                true
            }
            None => pg_log::read_line(&mut input, &mut raw, &mut line, lineno)?,
        };
        lineno += 1;
        if more {
            asm.line();
        }
        if more {
            if let Some(cont) = line.strip_prefix('\t') {
                // A message's next line: PostgreSQL writes a tab after each newline in it.
                if !entry.is_empty() {
                    entry.push('\n');
                    entry.push_str(cont);
                    continue;
                }
            }
        }
        if !entry.is_empty() {
            entry_to_record(&prefix, knows_backend, &entry, &mut asm);
        }
        if !more {
            break;
        }
        entry.clear();
        entry.push_str(&line);
    }
    Ok(asm.finish())
}

fn entry_to_record(prefix: &Prefix, knows_backend: bool, entry: &str, asm: &mut Assembler) {
    let Some(f) = prefix.split(entry) else {
        asm.skip("unparsed line");
        return;
    };
    let Some(time_us) = f.time_us else {
        asm.skip("unparsed line");
        return;
    };
    let no_user = f.user.is_none_or(str::is_empty) && f.database.is_none_or(str::is_empty);
    let client_backend = !(f.stopped || knows_backend && no_user);
    asm.feed(&Record {
        time_us,
        pid: f.pid,
        session_id: f.session_id,
        line_num: f.line_num,
        user: f.user,
        database: f.database,
        application: f.application,
        client_backend,
        severity: f.severity,
        sqlstate: f.sqlstate,
        message: f.message,
        detail: None,
        query: None,
    });
}

#[cfg(test)]
mod tests {
    use super::super::{Protocol, Session, Statement};
    use super::*;

    fn run(text: &str, prefix: Option<&str>) -> Capture {
        read(text.as_bytes(), &Filter::default(), prefix).expect("reads")
    }

    #[test]
    fn prefixes_split() {
        let p = Prefix::new("%t:%r:%u@%d:[%p]:");
        let f = p
            .split("2026-11-29 09:10:21 UTC:10.0.0.1(5432):u@db:[42]:LOG:  x")
            .unwrap();
        assert_eq!(
            (f.user, f.database, f.pid, f.message),
            (Some("u"), Some("db"), 42, "x")
        );
        let f = p
            .split("2026-11-29 09:10:21 UTC:::1(5432):u@db:[42]:LOG:  x")
            .unwrap();
        assert_eq!(f.database, Some("db"));
        let f = p
            .split("2026-11-29 09:10:21 UTC::@:[12361]:LOG:  starting")
            .unwrap();
        assert_eq!((f.user, f.message), (Some(""), "starting"));
        let p = Prefix::new("%m [%p] %q%u@%d ");
        let f = p
            .split("2026-11-29 09:10:17.319 UTC [12177] LOG:  starting")
            .unwrap();
        assert!(f.stopped);
        let p = Prefix::new("%m [%p] %c %e ");
        let f = p
            .split("2026-11-29 09:10:17.319 UTC [1] 6b0b.2f 22012 ERROR:  x")
            .unwrap();
        assert_eq!((f.session_id, f.sqlstate), (Some("6b0b.2f"), Some("22012")));

        let p = Prefix::new("%n [%p] ");
        let f = p.split("1795943417.858 [1] LOG:  x").unwrap();
        assert_eq!(f.time_us, Some(1_795_943_417_858_000));
    }

    /// PG 15, Debian's prefix, `log_min_duration_statement = 0`, connections logged; pgbench
    /// `-M extended` (two clients, one transaction each), then psql with two failing statements.
    const DEBIAN: &str = include_str!("../../../../tests/fixtures/replay/postgresql-15-stderr.log");
    /// The same with `log_statement = all` and the pgBadger prefix (`%t`, whole seconds):
    /// pgbench `-M simple` and `-M prepared` (one client each), psql.
    const ALL: &str = include_str!(
        "../../../../tests/fixtures/replay/postgresql-15-stderr-log_statement_all.log"
    );

    fn kinds(s: &Session) -> Vec<&'static str> {
        s.statements
            .iter()
            .map(|st| pg_log::kind(&st.sql))
            .collect()
    }

    const PGBENCH: [&str; 7] = [
        "begin", "update", "select", "update", "update", "insert", "commit",
    ];

    #[test]
    fn debian_prefix_duration_log() {
        let c = run(DEBIAN, None);
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["12206", "12205", "12212", "12214"]);
        // 09:10:17.858 minus the 0.056 ms of the first `execute`.
        assert_eq!(
            c.started_unix_us,
            pg_log::parse_timestamp("2026-11-29 09:10:17.857944 UTC")
                .unwrap()
                .0
        );
        for s in &c.sessions[..2] {
            assert_eq!(
                (s.user.as_str(), s.database.as_str()),
                ("postgres", "postgres")
            );
            assert_eq!(s.application, "pgbench");
            assert_eq!(kinds(s), PGBENCH);
            assert!(s
                .statements
                .iter()
                .all(|st| st.protocol == Protocol::Extended));
            assert!(s
                .statements
                .windows(2)
                .all(|w| w[0].offset_us <= w[1].offset_us));
        }
        let s = &c.sessions[0];
        assert_eq!(s.statements[0].offset_us, 0);
        assert_eq!(s.statements[1].duration_us, Some(327));
        assert_eq!(
            pg_log::inline_params(&s.statements[5]),
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
             VALUES ('2', '1', '21032', '-4704', CURRENT_TIMESTAMP);"
        );
        let psql = &c.sessions[2];
        let errors: Vec<Option<&str>> =
            psql.statements.iter().map(|s| s.error.as_deref()).collect();
        // No `%e` in the prefix: failed, code unknown.
        assert_eq!(errors, [Some(""), Some(""), None, None, None, None]);
        assert_eq!(psql.statements[1].sql, "select * from nonexistent_table;");
        assert_eq!(
            psql.statements[2].sql,
            "select 'it''s\nmulti\nline', E'tab\\there';"
        );
        assert_eq!(c.sessions[3].application, "myapp");
        assert_eq!(kinds(&c.sessions[3]), ["begin"]);
        let st = &c.stats;
        assert_eq!(st.statements.get("extended"), Some(&14));
        assert_eq!(st.statements.get("simple"), Some(&7));
        assert_eq!(st.statements.get("commit"), Some(&2));
        assert_eq!(st.skipped.get("parse/bind"), Some(&28));
        assert_eq!(st.skipped.get("other backend"), Some(&10));
        assert_eq!(st.sessions, 4);
    }

    #[test]
    fn log_statement_all_pairs_durations() {
        let c = run(ALL, None);
        assert_eq!(c.sessions.len(), 4);
        let simple = c.sessions.iter().find(|s| s.id == "12296").unwrap();
        let prepared = c.sessions.iter().find(|s| s.id == "12342").unwrap();
        for (s, p) in [(simple, Protocol::Simple), (prepared, Protocol::Extended)] {
            assert_eq!(kinds(s), PGBENCH);
            assert!(s
                .statements
                .iter()
                .all(|st| st.protocol == p && st.duration_us.is_some()));
        }
        assert_eq!(simple.statements[1].duration_us, Some(1028));
        assert_eq!(prepared.statements[1].params.len(), 2);
        let psql = c.sessions.iter().find(|s| s.application == "psql").unwrap();
        // The `STATEMENT:` line names the statement already logged: no second copy.
        assert_eq!(psql.statements.len(), 6);
        assert_eq!(psql.statements[0].error.as_deref(), Some(""));
        assert_eq!(psql.statements[0].duration_us, None);
        assert_eq!(c.stats.skipped.get("unpaired duration"), None);
    }

    #[test]
    fn filters_count_what_they_drop() {
        let f = Filter {
            applications: vec!["psql".into()],
            ..Filter::default()
        };
        let c = read(DEBIAN.as_bytes(), &f, None).unwrap();
        assert_eq!(c.sessions.len(), 1);
        assert_eq!(c.stats.skipped.get("filtered: application"), Some(&15));
        let t = pg_log::parse_timestamp("2026-11-29 09:10:18.036 UTC")
            .unwrap()
            .0;
        let f = Filter {
            begin_unix_us: Some(t),
            ..Filter::default()
        };
        let c = read(DEBIAN.as_bytes(), &f, None).unwrap();
        assert_eq!(c.started_unix_us, t);
        assert_eq!(c.stats.skipped.get("filtered: time"), Some(&14));
        assert_eq!(c.sessions[0].statements[0].offset_us, 0);
    }

    #[test]
    fn reused_pid_session_id_prefix_and_sqlstate() {
        let log = "\
2026-11-29 09:00:00.000 UTC [7] a.1 00000 u@d LOG:  connection authorized: user=u database=d
2026-11-29 09:00:00.010 UTC [7] a.1 00000 u@d LOG:  duration: 10.000 ms  statement: select 1
2026-11-29 09:00:00.020 UTC [7] a.1 22012 u@d ERROR:  division by zero
2026-11-29 09:00:00.020 UTC [7] a.1 22012 u@d STATEMENT:  select 1/0
2026-11-29 09:00:00.030 UTC [7] a.1 00000 u@d LOG:  disconnection: session time: 0:00:00.030
2026-11-29 09:00:01.000 UTC [7] b.1 00000 u@d LOG:  duration: 1.000 ms  statement: copy t from stdin
2026-11-29 09:00:01.000 UTC [7] b.1 00000 u@d LOG:  duration: 1.000 ms  statement: END
2026-11-29 09:00:01.000 UTC [8] 00000 LOG:  checkpoint starting: time
";
        let c = run(log, Some("%m [%p] %c %e %q%u@%d "));
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a.1", "b.1"]);
        assert_eq!(c.sessions[0].statements[1].error.as_deref(), Some("22012"));
        assert_eq!(c.sessions[1].statements[0].offset_us, 999_000);
        assert_eq!(c.stats.skipped.get("copy"), Some(&1));
        assert_eq!(c.stats.statements.get("commit"), Some(&1));
        // Keyed by pid, the same pid after a disconnection is another session.
        let by_pid = log.replace(" a.1", "").replace(" b.1", "");
        let c = run(&by_pid, Some("%m [%p] %e %q%u@%d "));
        let ids: Vec<&str> = c.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["7", "7.2"]);
    }

    /// PG's own default prefix `%m [%p] `, `log_statement = all`: pgbench `-M extended` and
    /// `-M prepared` running a statement that fails in `execute`, psql with COPY and
    /// `\\lo_import` (fast-path calls).
    const ERRORS: &str = include_str!(
        "../../../../tests/fixtures/replay/postgresql-15-stderr-default_prefix-extended_errors.log"
    );

    #[test]
    fn extended_errors_copy_and_fast_path() {
        assert_eq!(
            pg_log::detect(ERRORS.as_bytes()),
            Some(pg_log::Format::Stderr)
        );
        let c = run(ERRORS, None);
        let failed: Vec<&Statement> = c.sessions[..2].iter().map(|s| &s.statements[0]).collect();
        for st in failed {
            assert_eq!(st.protocol, Protocol::Extended);
            assert_eq!(pg_log::inline_params(st), "select '5' / (random()*0)::int;");
            assert_eq!(st.error.as_deref(), Some(""));
        }
        assert_eq!(kinds(&c.sessions[2]), ["begin", "select", "commit"]);
        assert_eq!(c.sessions[2].statements[2].duration_us, Some(4534));
        let skipped = &c.stats.skipped;
        assert_eq!(skipped.get("copy"), Some(&1));
        assert_eq!(skipped.get("fast-path call"), Some(&4));
        assert_eq!(skipped.get("unpaired duration"), None);
    }

    /// Real lines of the RDS / pgBadger form `%t:%r:%u@%d:[%p]:` (whole seconds, no `%l`).
    #[test]
    fn rds_prefix() {
        let log = concat!(
            "2026-11-29 09:10:21 UTC::@:[12361]:LOG:  starting PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14+deb12u1) 12.2.0, 64-bit\n",
            "2026-11-29 09:10:21 UTC::@:[12361]:LOG:  listening on Unix socket \"/tmp/.s.PGSQL.55432\"\n",
            "2026-11-29 09:10:22 UTC:[local]:[unknown]@[unknown]:[12403]:LOG:  connection received: host=[local]\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  connection authorized: user=postgres database=postgres application_name=psql\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:ERROR:  division by zero\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:STATEMENT:  select 1/0;\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:ERROR:  relation \"nonexistent_table\" does not exist at character 15\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:STATEMENT:  select * from nonexistent_table;\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  duration: 0.132 ms  statement: select 'it''s\n",
            "\tmulti\n",
            "\tline', E'tab\\there';\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  duration: 0.015 ms  statement: begin;\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  duration: 0.389 ms  statement: insert into pgbench_history values (1,1,1,1,now(),'x');\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  duration: 0.021 ms  statement: rollback;\n",
            "2026-11-29 09:10:22 UTC:[local]:postgres@postgres:[12403]:LOG:  disconnection: session time: 0:00:00.004 user=postgres database=postgres host=[local]\n",
        );
        assert_eq!(pg_log::detect(log.as_bytes()), Some(pg_log::Format::Stderr));
        let c = run(log, None);
        assert_eq!(c.sessions.len(), 1);
        let s = &c.sessions[0];
        assert_eq!((s.id.as_str(), s.application.as_str()), ("12403", "psql"));
        assert_eq!(
            kinds(s),
            ["select", "select", "select", "begin", "insert", "rollback"]
        );
        assert_eq!(
            s.statements[2].sql,
            "select 'it''s\nmulti\nline', E'tab\\there';"
        );
        assert_eq!(s.statements[0].error.as_deref(), Some(""));
        assert_eq!(c.stats.skipped.get("other backend"), Some(&2));
        assert_eq!(c.stats.skipped.get("connection received"), Some(&1));
    }

    #[test]
    fn bad_utf8_is_read_lossily_and_filters_by_database_and_user() {
        let mut log =
            b"2026-11-29 09:00:00.000 UTC [7] u@d LOG:  duration: 1.000 ms  statement: select '"
                .to_vec();
        log.extend_from_slice(b"\xff'\n2026-11-29 09:00:00.000 UTC [8] v@e LOG:  duration: 1.000 ms  statement: END\n");
        let c = read(&log[..], &Filter::default(), None).unwrap_or_default();
        assert_eq!(c.sessions[0].statements[0].sql, "select '\u{fffd}'");
        let f = Filter {
            databases: vec!["d".into()],
            ..Filter::default()
        };
        let c = read(&log[..], &f, None).unwrap_or_default();
        assert_eq!(c.sessions.len(), 1);
        assert_eq!(c.stats.skipped.get("filtered: database"), Some(&1));
        let f = Filter {
            users: vec!["v".into()],
            ..Filter::default()
        };
        let c = read(&log[..], &f, None).unwrap_or_default();
        assert_eq!(c.sessions[0].user, "v");
        assert_eq!(c.stats.skipped.get("filtered: user"), Some(&1));
    }

    #[test]
    fn no_time_is_an_error() {
        let e = read(&b"x\n"[..], &Filter::default(), Some("[%p] ")).unwrap_err();
        assert!(e.message.contains("no time"));
    }
}
