//! Parse errors as pgbench's `syntax_error` prints them: `file:line:column: message`, the line
//! of the script, and a caret under the spot; and the byte offset -> line and column mapping
//! they are computed with.

use std::fmt;

/// A script that cannot run, found before any connection: pgbench's `syntax_error`, with the
/// position as `file:line:column` and the line with a caret under the spot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub source: String,
    /// 1-based; 0 when the error is about the whole script.
    pub line: u32,
    /// 1-based, in characters.
    pub column: u32,
    /// pgbench's message: `msg (more) in command "name"`.
    pub message: String,
    /// The line of the script the error is in (without its newline); empty when `line` is 0.
    pub line_text: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            // About the whole script (pgbench's "empty command list for script ..."): the message
            // names the script, as pgbench prints it.
            return f.write_str(&self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}\n{}\n{:>width$} error found here",
            self.source,
            self.line,
            self.column,
            self.message,
            self.line_text,
            '^',
            width = self.column as usize
        )
    }
}

impl std::error::Error for ParseError {}

/// Byte offset -> line, column, line text.
pub(super) struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, c)| *c == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { text, starts }
    }

    /// 1-based line of `pos`.
    pub(super) fn line_of(&self, pos: usize) -> u32 {
        self.starts.partition_point(|&s| s <= pos) as u32
    }

    pub(super) fn error(&self, source: &str, pos: usize, message: String) -> ParseError {
        let pos = pos.min(self.text.len());
        let line = self.line_of(pos);
        let start = self.starts[line as usize - 1];
        let end = self.text[start..]
            .find('\n')
            .map(|e| start + e)
            .unwrap_or(self.text.len());
        let line_text = self.text[start..end].trim_end_matches('\r').to_string();
        let column = self.text[start..pos.max(start)].chars().count() as u32 + 1;
        ParseError {
            source: source.to_string(),
            line,
            column,
            message,
            line_text,
        }
    }
}

/// pgbench's message layout: `msg (more) in command "cmd"`.
pub(super) fn message(msg: &str, more: Option<&str>, command: Option<&str>) -> String {
    let mut s = msg.to_string();
    if let Some(m) = more {
        s.push_str(&format!(" ({m})"));
    }
    if let Some(c) = command {
        s.push_str(&format!(" in command \"{c}\""));
    }
    s
}
