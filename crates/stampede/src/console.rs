//! What a person reads on standard error, and the exit code: one place for both, so every
//! command (and each drop-in) says things the same way.
//!
//! Results go to standard output; everything else (progress, notes, warnings, errors, server
//! notices, client aborts) to standard error, prefixed as the tool being spoken for prefixes it:
//! stampede's own commands `error: ` / `warning: ` / `note: ` / `hint: `; `stampede pgbench`
//! pgbench's `pgbench: error: ` / `pgbench: warning: ` / `pgbench: detail: ` / `pgbench: hint: `
//! (PostgreSQL's `pg_log_*`, common/logging.c: a message that spans lines gets the prefix on its
//! first line only); `stampede sysbench` sysbench's `FATAL: ` / `WARNING: `.
//!
//! A failure is one sentence of cause plus, where there is one, one sentence of what to do
//! ([`Failure`]); the hint is printed once, on its own line.
//!
//! ## Exit codes (stampede's own commands; docs/src/exit-codes.md has the table)
//! - 0: success.
//! - 1: the command failed before measuring anything (the target is unreachable or refused us,
//!   a table is missing, the server rejected setup).
//! - 2: the run ended, but clients aborted, a check failed or an output file could not be
//!   written: its numbers need a look (those not saved are printed, and on the other files).
//! - 3: `server status`: no server is running (as `pg_ctl status`).
//! - 64: the command line is wrong (an unknown option, a bad value, options that conflict, an
//!   output path that cannot be written, `crate::files`): nothing was done (sysexits' EX_USAGE).
//! - 130: interrupted (Ctrl-C); the partial result is still printed and saved.
//!
//! The drop-ins keep their peer's codes: pgbench's 0 / 1 (bad arguments, setup failure) / 2
//! (errors during the run); sysbench's 0 / 1.

use std::sync::OnceLock;

/// Whose conventions diagnostics follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Voice {
    Stampede,
    Pgbench,
    Sysbench,
}

static VOICE: OnceLock<Voice> = OnceLock::new();

/// Set once, by `main`, before anything is printed.
pub fn set_voice(v: Voice) {
    let _ = VOICE.set(v);
}

pub fn voice() -> Voice {
    *VOICE.get().unwrap_or(&Voice::Stampede)
}

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_UNTRUSTED: i32 = 2;
pub const EXIT_NOT_RUNNING: i32 = 3;
pub const EXIT_USAGE: i32 = 64;
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Error,
    Warning,
    Note,
    Detail,
    Hint,
}

fn prefix(level: Level) -> &'static str {
    match (voice(), level) {
        (Voice::Stampede, Level::Error) => "error: ",
        (Voice::Stampede, Level::Warning) => "warning: ",
        (Voice::Stampede, Level::Note) => "note: ",
        (Voice::Stampede, Level::Detail) => "detail: ",
        (Voice::Stampede, Level::Hint) => "hint: ",
        (Voice::Pgbench, Level::Error) => "pgbench: error: ",
        (Voice::Pgbench, Level::Warning) => "pgbench: warning: ",
        // pg_log_info: the program name only.
        (Voice::Pgbench, Level::Note) => "pgbench: ",
        (Voice::Pgbench, Level::Detail) => "pgbench: detail: ",
        (Voice::Pgbench, Level::Hint) => "pgbench: hint: ",
        (Voice::Sysbench, Level::Error) => "FATAL: ",
        (Voice::Sysbench, Level::Warning) => "WARNING: ",
        (Voice::Sysbench, _) => "",
    }
}

fn say(level: Level, msg: &str) {
    // One message may hold several records (workload::script::RECORD), each logged apart.
    for record in msg.split(workload::script::RECORD) {
        // pg_log_generic: one trailing newline of the message is dropped (libpq's messages end
        // in one), continuation lines are printed as they are.
        let record = record.strip_suffix('\n').unwrap_or(record);
        eprintln!("{}{record}", prefix(level));
    }
}

pub fn error(msg: &str) {
    say(Level::Error, msg);
}
pub fn warning(msg: &str) {
    say(Level::Warning, msg);
}
pub fn note(msg: &str) {
    say(Level::Note, msg);
}
pub fn detail(msg: &str) {
    say(Level::Detail, msg);
}
pub fn hint(msg: &str) {
    say(Level::Hint, msg);
}

/// `s` as one word of a POSIX shell, for a command a person pastes (`-d URL`, `--data-dir DIR`):
/// as it is when every character is one no shell treats specially, else in single quotes, each
/// `'` as `'\''` (a URL's `&` and `?` would otherwise end the command or glob).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A server's notice or warning (or an error shown as a notice), as libpq's default notice
/// processor prints it: its own `SEVERITY:  message` lines, no prefix of ours.
pub fn server_notice(n: &sut::DbError) {
    eprintln!("{n}");
}

/// A failure with its cause, what to do about it, and the exit code. Commands return it (inside
/// `anyhow::Error`) where they know better than "1, and the chain of causes".
#[derive(Debug)]
pub struct Failure {
    pub cause: String,
    pub todo: Option<String>,
    /// Extra lines between the cause and the hint (pgbench's `detail:`).
    pub detail: Option<String>,
    pub code: i32,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// The command line is wrong: nothing was done.
    pub fn usage(cause: impl Into<String>, todo: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Failure {
            cause: cause.into(),
            todo: Some(todo.into()).filter(|t: &String| !t.is_empty()),
            detail: None,
            code: if voice() == Voice::Stampede {
                EXIT_USAGE
            } else {
                EXIT_FAILED
            },
        })
    }

    /// Ctrl-C or SIGTERM stopped the command before it had a result to show.
    pub fn interrupted(cause: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Failure {
            cause: cause.into(),
            todo: None,
            detail: None,
            code: EXIT_INTERRUPTED,
        })
    }

    /// Something outside the command line stopped the command before it measured anything.
    pub fn setup(cause: impl Into<String>, todo: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(Failure {
            cause: cause.into(),
            todo: Some(todo.into()).filter(|t: &String| !t.is_empty()),
            detail: None,
            code: EXIT_FAILED,
        })
    }
}

/// Print an error the way the current voice prints them and return its exit code. A
/// [`Failure`] anywhere in the chain decides the code and adds its hint; other errors print
/// their chain of causes (`context: cause`) and exit 1. Passwords never reach the terminal.
pub fn report(e: &anyhow::Error) -> i32 {
    let redact = |s: &str| sut::conninfo::redact(s);
    match e.chain().find_map(|c| c.downcast_ref::<Failure>()) {
        Some(f) => {
            // Context added above the failure (`initialising TPC-B on ...: cause`).
            let full = format!("{e:#}");
            error(&redact(&full));
            if let Some(d) = &f.detail {
                detail(&redact(d));
            }
            if let Some(t) = &f.todo {
                hint(&redact(t));
            }
            f.code
        }
        None => {
            error(&redact(&format!("{e:#}")));
            if let Some(t) = e.chain().find_map(todo_for) {
                hint(t);
            }
            EXIT_FAILED
        }
    }
}

/// What to do about a server or connection error met anywhere in a chain, in one sentence;
/// `None` when the cause says it all. One place, so that `run`, `init`, `check` and `reset`
/// give the same advice for the same refusal.
pub fn todo_for(e: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    let target = if let Some(t) = e.downcast_ref::<sut::Error>() {
        t
    } else if let Some(load::LoadError::Db { cause, .. }) = e.downcast_ref::<load::LoadError>() {
        cause
    } else if let Some(engine::RunError::Connect(t)) = e.downcast_ref::<engine::RunError>() {
        t
    } else {
        return None;
    };
    match target {
        sut::Error::Connect { .. } => {
            Some("check that the server is running and the target (-h/-p/-d) is right")
        }
        sut::Error::Auth { .. } => Some("check the user and password (PGPASSWORD, ~/.pgpass)"),
        sut::Error::Db(db) => match db.code.as_str() {
            "53300" => Some("lower -c, or raise the server's max_connections"),
            "3D000" => Some("create the database first (createdb), or name another with -d"),
            "42501" => Some("grant the user the privilege, or run as the tables' owner"),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_is_quoted_only_when_a_shell_would_change_it() {
        assert_eq!(
            shell_word("/var/lib/stampede/server"),
            "/var/lib/stampede/server"
        );
        assert_eq!(
            shell_word("mysql://root@localhost/stampede?socket=%2Fx&ssl-mode=DISABLED"),
            "'mysql://root@localhost/stampede?socket=%2Fx&ssl-mode=DISABLED'"
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn a_failure_s_code_and_cause_survive_added_context() {
        let e = Failure::setup("the server refused", "check pg_hba.conf").context("loading");
        assert_eq!(format!("{e:#}"), "loading: the server refused");
        let f = e.chain().find_map(|c| c.downcast_ref::<Failure>()).unwrap();
        assert_eq!(f.code, EXIT_FAILED);
        assert_eq!(f.todo.as_deref(), Some("check pg_hba.conf"));
    }
}
