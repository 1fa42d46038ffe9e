//! Errors from a target, and their classification by SQLSTATE: the one place that decides what is
//! retryable (serialization failure 40001, deadlock 40P01 — as pgbench's `--max-tries`), what is a
//! lost connection, and what is fatal.

/// An error or notice reported by the server (an ErrorResponse or NoticeResponse), with the
/// fields people need to act on it (PostgreSQL docs, "Error and Notice Message Fields").
///
/// `Display` renders it as libpq does at its default verbosity (`PQresultErrorMessage`,
/// fe-protocol3.c `pqBuildErrorMessage3`), since that is what psql and pgbench users read:
/// `ERROR:  message`, the `LINE n: ...` cursor display when the server gave a position and the
/// statement text is known, then `DETAIL:  `, `HINT:  `, `QUERY:  ` and (for errors, not for
/// notices: libpq's `PQSHOW_CONTEXT_ERRORS`) `CONTEXT:  ` lines. No trailing newline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbError {
    pub severity: String,
    /// Five-character SQLSTATE.
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// `W`: the call stack (PL/pgSQL function, "unnamed portal with parameters: ...").
    pub context: Option<String>,
    /// `P`: 1-based character position of the error in the statement.
    pub position: Option<u32>,
    /// `p` and `q`: a position in an internally generated statement, and that statement.
    pub internal_position: Option<u32>,
    pub internal_query: Option<String>,
    /// The text of the statement that failed, when the session knows it (filled by the session
    /// for the cursor display; not a server field).
    pub statement: Option<String>,
}

impl DbError {
    /// A notice (NoticeResponse) rather than an error: libpq shows no CONTEXT for those.
    pub fn is_notice(&self) -> bool {
        !matches!(self.severity.as_str(), "ERROR" | "FATAL" | "PANIC")
    }
}

/// libpq's `DISPLAY_SIZE` and `MIN_RIGHT_CUT` (fe-protocol3.c `reportErrorPosition`).
const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// libpq's `reportErrorPosition`: the line of `query` holding 1-based character `loc`, cut to
/// 60 columns around it with `...`, and a caret under the character. Characters count as one
/// column each (libpq measures East Asian wide characters as two; stampede's sessions are UTF-8
/// and this keeps to one).
fn error_position(out: &mut String, query: &str, loc: u32) {
    use std::fmt::Write as _;
    let Some(loc) = (loc as usize).checked_sub(1) else {
        return;
    };
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let mut line = 1;
    let mut beg = 0;
    let mut end = None;
    for (i, &c) in chars.iter().enumerate() {
        if c == '\r' || c == '\n' {
            if i < loc {
                // \r\n counts as one line end.
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line += 1;
                }
                beg = i + 1;
            } else {
                end = Some(i);
                break;
            }
        }
    }
    let mut end = end.unwrap_or(chars.len());
    if loc > chars.len() {
        return;
    }
    let (mut beg_cut, mut end_cut) = (false, false);
    if end - beg > DISPLAY_SIZE {
        if beg + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT {
            while end - beg > DISPLAY_SIZE {
                end -= 1;
            }
            end_cut = true;
        } else {
            while loc + MIN_RIGHT_CUT < end {
                end -= 1;
                end_cut = true;
            }
            while end - beg > DISPLAY_SIZE {
                beg += 1;
                beg_cut = true;
            }
        }
    }
    let prefix = format!("LINE {line}: {}", if beg_cut { "..." } else { "" });
    let text: String = chars[beg..end].iter().collect();
    let _ = writeln!(out, "{prefix}{text}{}", if end_cut { "..." } else { "" });
    let col = prefix.chars().count() + (loc - beg);
    let _ = writeln!(out, "{}^", " ".repeat(col));
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        let mut s = String::new();
        if !self.severity.is_empty() {
            let _ = write!(s, "{}:  ", self.severity);
        }
        s.push_str(&self.message);
        // The statement's text for the cursor display: the failed statement's (P), else the
        // internal query's (p); without the text, the position is said in words.
        let mut cursor: Option<(&str, u32)> = None;
        match (self.position, self.internal_position) {
            (Some(p), _) => match &self.statement {
                Some(q) => cursor = Some((q, p)),
                None => {
                    let _ = write!(s, " at character {p}");
                }
            },
            (None, Some(p)) => match &self.internal_query {
                Some(q) => cursor = Some((q, p)),
                None => {
                    let _ = write!(s, " at character {p}");
                }
            },
            (None, None) => {}
        }
        s.push('\n');
        if let Some((q, p)) = cursor.filter(|(_, p)| *p > 0) {
            error_position(&mut s, q, p);
        }
        if let Some(d) = &self.detail {
            let _ = writeln!(s, "DETAIL:  {d}");
        }
        if let Some(h) = &self.hint {
            let _ = writeln!(s, "HINT:  {h}");
        }
        if let Some(q) = &self.internal_query {
            let _ = writeln!(s, "QUERY:  {q}");
        }
        if !self.is_notice() {
            if let Some(c) = &self.context {
                let _ = writeln!(s, "CONTEXT:  {c}");
            }
        }
        f.write_str(s.strip_suffix('\n').unwrap_or(&s))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection settings are invalid (bad URL, unknown sslmode, unreadable root cert, ...).
    #[error("invalid connection settings: {0}")]
    Config(String),
    /// Could not reach the server. `target` is the redacted host/port description; `cause`
    /// says why, with libpq's question of what to check. (Not named `source`: thiserror would
    /// make it the error's source, and a chain printed with `{:#}` would say it twice.)
    #[error("cannot connect to {target}: {cause}")]
    Connect {
        target: String,
        cause: std::io::Error,
    },
    /// The server refused the credentials or the authentication method is unsupported.
    #[error("authentication failed for {target}: {message}")]
    Auth { target: String, message: String },
    #[error("TLS: {0}")]
    Tls(String),
    /// An ErrorResponse from the server (boxed: its fields are many, and every `Result` of the
    /// hot path carries this enum).
    #[error("{0}")]
    Db(Box<DbError>),
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The connection broke (read/write failed, server closed the socket).
    #[error("connection lost: {0}")]
    Io(std::io::Error),
    #[error("{0}")]
    Embedded(String),
    /// A client-side failure of the workload's own logic (a pgbench script's run-time error:
    /// division by zero, an undefined variable, `\gset` without exactly one row, ...). The message
    /// is complete (pgbench's "client N aborted in command ..."). Classed [`ErrorClass::Other`]:
    /// the transaction fails as "other" and the client is aborted, as pgbench aborts it.
    #[error("{0}")]
    Script(String),
}

// The messages above already include their cause, so no variant marks it `#[source]`: an error
// chain printed with `{:#}` would repeat it.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// What a client should do about an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// 40001: retry the transaction with the same random values (pgbench `--max-tries`).
    Serialization,
    /// 40P01: likewise retryable.
    Deadlock,
    /// The connection is gone; the client must reconnect or stop.
    ConnectionLost,
    /// Anything else.
    Other,
}

impl Error {
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            Error::Db(e) => Some(&e.code),
            _ => None,
        }
    }

    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Db(e) => classify_sqlstate(&e.code),
            Error::Io(_) | Error::Connect { .. } => ErrorClass::ConnectionLost,
            _ => ErrorClass::Other,
        }
    }
}

/// The single SQLSTATE table. Class 08 (connection exception) and 57P01..57P03 (admin shutdown,
/// crash shutdown, cannot connect now) mean the session is unusable.
pub fn classify_sqlstate(code: &str) -> ErrorClass {
    match code {
        "40001" => ErrorClass::Serialization,
        "40P01" => ErrorClass::Deadlock,
        "57P01" | "57P02" | "57P03" => ErrorClass::ConnectionLost,
        c if c.starts_with("08") => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_are_classified() {
        assert_eq!(classify_sqlstate("40001"), ErrorClass::Serialization);
        assert_eq!(classify_sqlstate("40P01"), ErrorClass::Deadlock);
        assert_eq!(classify_sqlstate("08006"), ErrorClass::ConnectionLost);
        assert_eq!(classify_sqlstate("57P01"), ErrorClass::ConnectionLost);
        assert_eq!(classify_sqlstate("23505"), ErrorClass::Other);
        assert_eq!(Error::Script("x".into()).class(), ErrorClass::Other);
    }

    fn err(message: &str) -> DbError {
        DbError {
            severity: "ERROR".into(),
            code: "42601".into(),
            message: message.into(),
            ..Default::default()
        }
    }

    #[test]
    fn errors_render_as_libpq_renders_them() {
        let e = DbError {
            detail: Some("Key (aid)=(1) already exists.".into()),
            hint: Some("Try another.".into()),
            context: Some("unnamed portal with parameters: $1 = '1', $2 = NULL".into()),
            ..err("division by zero")
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  division by zero\nDETAIL:  Key (aid)=(1) already exists.\nHINT:  Try another.\n\
             CONTEXT:  unnamed portal with parameters: $1 = '1', $2 = NULL"
        );
        // Notices show no CONTEXT (libpq's PQSHOW_CONTEXT_ERRORS).
        let w = DbError {
            severity: "WARNING".into(),
            context: Some("PL/pgSQL function f() line 3 at RAISE".into()),
            ..err("SET LOCAL can only be used in transaction blocks")
        };
        assert_eq!(
            w.to_string(),
            "WARNING:  SET LOCAL can only be used in transaction blocks"
        );
    }

    #[test]
    fn a_position_becomes_libpq_s_cursor_display() {
        // psql: `select count(*) from pgbench_branchez;`
        let e = DbError {
            position: Some(22),
            statement: Some("select count(*) from pgbench_branchez".into()),
            ..err("relation \"pgbench_branchez\" does not exist")
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  relation \"pgbench_branchez\" does not exist\n\
             LINE 1: select count(*) from pgbench_branchez\n\
             \x20                            ^"
        );
        // Second line of a statement; the line number counts \n.
        let e = DbError {
            position: Some(16),
            statement: Some("select 1,\n  2 +;".into()),
            ..err("syntax error at or near \";\"")
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \";\"\nLINE 2:   2 +;\n\x20            ^"
        );
        // Without the text, the position is said in words.
        let e = DbError {
            position: Some(8),
            ..err("syntax error at or near \"x\"")
        };
        assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \"x\" at character 8"
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_position_as_libpq_cuts_them() {
        let q = format!("select {} from t where x = ;", "a, ".repeat(40));
        let loc = q.find(';').unwrap() as u32 + 1;
        let e = DbError {
            position: Some(loc),
            statement: Some(q.clone()),
            ..err("syntax error at or near \";\"")
        };
        let text = e.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("LINE 1: ..."), "{text}");
        assert!(lines[1].ends_with("where x = ;"), "{text}");
        // 60 columns of the statement at most, and the caret under the ';'.
        assert!(lines[1].len() <= "LINE 1: ...".len() + 60, "{text}");
        assert_eq!(lines[2].find('^'), lines[1].rfind(';'), "{text}");
    }
}
