//! A pgbench script file -> a compiled [`Script`]: pgbench.c's `ParseScript`,
//! `process_backslash_command`, `create_sql_command`, `parseQuery` and `CheckConditional`, with the
//! SQL splitting of psql's lexer (`src/fe_utils/psqlscan.l`) that pgbench uses.
//!
//! Owns: splitting a script into commands (SQL up to `;` at parenthesis depth 0, `\;` inside a
//! compound statement, a backslash that starts a meta-command), the meta-commands' arguments and
//! their checks, the merging of `\gset`/`\aset` into the preceding SQL command, the static check of
//! `\if`/`\elif`/`\else`/`\endif` (with the jump targets the interpreter uses), variable references
//! in SQL, and parse errors rendered with file, line, column and a caret as pgbench's
//! `syntax_error` does. Must not touch: evaluation (`expr.rs`), the server, time.
//!
//! Hand-written: the SQL side only needs psqlscan's notion of where a command ends (quotes,
//! dollar quotes, comments, parentheses, `BEGIN ... END` bodies), not an SQL grammar, and the
//! meta-command side is a word splitter plus `expr.rs`. A generated lexer would add a build step
//! for no gain and make pgbench's error positions harder to reproduce.
//!
//! Deliberate differences from pgbench, all stricter or more precise, none changing what a valid
//! script does: an invalid variable name in `\set`/`\setshell` is reported here instead of when the
//! command first runs; errors carry a column even where pgbench prints none; `:'var'` and `:"var"`
//! in SQL are psql's quoted interpolations (pgbench sends them verbatim, which the server rejects).

use std::fmt;
use std::ops::Range;

use super::expr::{continuation_len, is_space, parse_expr, Expr, ExprError};
use super::vars::{valid_variable_name, Symbols, VarId};

/// pgbench's `MAX_ARGS`: words of a meta-command, and variables of an SQL command in extended and
/// prepared modes (the command itself counts as one).
pub const MAX_ARGS: usize = 256;

/// A compiled script.
#[derive(Clone, Debug)]
pub struct Script {
    /// The name pgbench prints: the file name, or `<builtin: ...>`.
    pub desc: String,
    pub commands: Vec<Command>,
}

/// One command of a script.
#[derive(Clone, Debug)]
pub struct Command {
    /// 1-based line of the command's first character.
    pub line: u32,
    /// pgbench's `first_line`: what `-r` prints for the command (a meta-command's whole text, an
    /// SQL command's first line).
    pub first_line: String,
    pub kind: CommandKind,
}

#[derive(Clone, Debug)]
pub enum CommandKind {
    Sql(SqlCommand),
    /// `\set var expr`
    Set {
        var: VarId,
        expr: Expr,
    },
    /// `\sleep N [us|ms|s]`: the delay is `amount * unit_us` microseconds.
    Sleep {
        amount: SleepArg,
        unit_us: i64,
    },
    /// `\setshell var command [args]`
    SetShell {
        var: VarId,
        args: Vec<ShellArg>,
    },
    /// `\shell command [args]`
    Shell {
        args: Vec<ShellArg>,
    },
    /// `\if expr`: when false, continue at `on_false` (an `\elif` to evaluate, or the command after
    /// an `\else` or `\endif`).
    If {
        cond: Expr,
        on_false: usize,
    },
    /// `\elif expr`: reached after an executed branch, continue at `end` (after the `\endif`);
    /// reached from a false condition, evaluate and continue at the next command or `on_false`.
    Elif {
        cond: Expr,
        on_false: usize,
        end: usize,
    },
    /// `\else`: reached after an executed branch, continue at `end`.
    Else {
        end: usize,
    },
    Endif,
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

impl CommandKind {
    /// The meta-command's name, `None` for SQL.
    pub fn meta_name(&self) -> Option<&'static str> {
        Some(match self {
            CommandKind::Sql(_) => return None,
            CommandKind::Set { .. } => "set",
            CommandKind::Sleep { .. } => "sleep",
            CommandKind::SetShell { .. } => "setshell",
            CommandKind::Shell { .. } => "shell",
            CommandKind::If { .. } => "if",
            CommandKind::Elif { .. } => "elif",
            CommandKind::Else { .. } => "else",
            CommandKind::Endif => "endif",
            CommandKind::StartPipeline => "startpipeline",
            CommandKind::SyncPipeline => "syncpipeline",
            CommandKind::EndPipeline => "endpipeline",
        })
    }
}

/// The argument of `\sleep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepArg {
    /// A number, as C's `atoi` reads it.
    Const(i64),
    /// `:name`, read with `atoi` at run time.
    Var(VarId),
}

/// A word of `\shell`/`\setshell`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellArg {
    /// A literal word (`::x` is the literal `:x`).
    Lit(String),
    /// `:name`: the variable's text.
    Var(VarId),
}

/// What happens to the rows of an SQL command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultVars {
    /// Discarded.
    None,
    /// `\gset [prefix]`: the last query must return one row; its columns become variables.
    Gset(String),
    /// `\aset [prefix]`: every query of the compound command stores its last row, if any.
    Aset(String),
}

/// An SQL command.
#[derive(Clone, Debug)]
pub struct SqlCommand {
    /// The text as pgbench keeps it: leading white space and `--` comments dropped, `\;` turned
    /// into `;`, the terminating `;` included.
    pub text: String,
    /// The text split at variable references (pgbench's `parseQuery` rule: every `:name` anywhere
    /// in the text, `::` excluded).
    pub parts: Vec<SqlPart>,
    pub result: ResultVars,
}

/// A piece of an SQL command's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlPart {
    /// Literal text, a range of [`SqlCommand::text`].
    Text(Range<usize>),
    /// `:name` (`range` is the reference's own text, kept when the variable is undefined in simple
    /// mode, as pgbench does).
    Var { id: VarId, range: Range<usize> },
    /// `:'name'`: the value as an SQL string literal (psql's rule).
    Literal { id: VarId, range: Range<usize> },
    /// `:"name"`: the value as an SQL identifier (psql's rule; simple mode only).
    Ident { id: VarId, range: Range<usize> },
}

impl SqlCommand {
    /// Number of variable references (parameters in extended and prepared modes).
    pub fn param_count(&self) -> usize {
        self.parts
            .iter()
            .filter(|p| !matches!(p, SqlPart::Text(_)))
            .count()
    }

    /// Whether some reference is an identifier (`:"name"`), which cannot be a parameter.
    pub fn has_ident(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, SqlPart::Ident { .. }))
    }

    /// The text for extended and prepared modes: each reference becomes `$1`, `$2`, ... in order
    /// of appearance (pgbench's `parseQuery`), and the variables of the parameters, in order.
    pub fn dollar_text(&self) -> (String, Vec<VarId>) {
        let mut out = String::with_capacity(self.text.len());
        let mut params = Vec::new();
        for p in &self.parts {
            match p {
                SqlPart::Text(r) => out.push_str(&self.text[r.clone()]),
                SqlPart::Var { id, .. }
                | SqlPart::Literal { id, .. }
                | SqlPart::Ident { id, .. } => {
                    params.push(*id);
                    out.push('$');
                    out.push_str(&params.len().to_string());
                }
            }
        }
        (out, params)
    }
}

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
            return write!(f, "{}: {}", self.source, self.message);
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
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
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
    fn line_of(&self, pos: usize) -> u32 {
        self.starts.partition_point(|&s| s <= pos) as u32
    }

    fn error(&self, source: &str, pos: usize, message: String) -> ParseError {
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
fn message(msg: &str, more: Option<&str>, command: Option<&str>) -> String {
    let mut s = msg.to_string();
    if let Some(m) = more {
        s.push_str(&format!(" ({m})"));
    }
    if let Some(c) = command {
        s.push_str(&format!(" in command \"{c}\""));
    }
    s
}

// ------------------------------------------------------------------------------------------
// SQL splitting (psqlscan.l)
// ------------------------------------------------------------------------------------------

/// psqlscan's state that survives from one command to the next.
#[derive(Default)]
struct SqlState {
    paren_depth: u32,
    /// `BEGIN ... END` nesting inside `CREATE [OR REPLACE] {FUNCTION|PROCEDURE}` (SQL-standard
    /// function bodies), where `;` does not end the command.
    begin_depth: u32,
    identifiers: [u8; 4],
    identifier_count: usize,
}

enum SqlStop {
    /// A `;` ended the command (included in the text).
    Semicolon,
    /// A backslash starts a meta-command at the returned position.
    Backslash,
    Eof,
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn ident_cont(c: u8) -> bool {
    ident_start(c) || c.is_ascii_digit() || c == b'$'
}

/// psqlscan's `{space}` (`[ \t\n\r\f\v]`).
fn sql_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c | 0x0b)
}

impl SqlState {
    /// psqlscan's heuristic for `CREATE [OR REPLACE] {FUNCTION|PROCEDURE} ... BEGIN ... END`.
    fn identifier(&mut self, word: &str) {
        if self.identifier_count == 0 {
            self.identifiers = [0; 4];
        }
        let w = word.to_ascii_lowercase();
        if matches!(
            w.as_str(),
            "create" | "function" | "procedure" | "or" | "replace"
        ) && self.identifier_count < self.identifiers.len()
        {
            self.identifiers[self.identifier_count] = w.as_bytes()[0];
        }
        self.identifier_count += 1;
        let id = self.identifiers;
        if id[0] == b'c'
            && (id[1] == b'f'
                || id[1] == b'p'
                || (id[1] == b'o' && id[2] == b'r' && (id[3] == b'f' || id[3] == b'p')))
            && self.paren_depth == 0
        {
            match w.as_str() {
                "begin" => self.begin_depth += 1,
                "case" if self.begin_depth >= 1 => self.begin_depth += 1,
                "end" if self.begin_depth > 0 => self.begin_depth -= 1,
                _ => {}
            }
        }
    }
}

/// Collect one SQL command from `pos` into `out`. Returns why it stopped, the position after what
/// was consumed, and the offset of the first character kept in `out`.
fn scan_sql(
    text: &str,
    mut pos: usize,
    st: &mut SqlState,
    out: &mut String,
) -> (SqlStop, usize, Option<usize>) {
    let b = text.as_bytes();
    let mut first: Option<usize> = None;
    // Emit text[from..to] (always).
    macro_rules! emit {
        ($from:expr, $to:expr) => {{
            if first.is_none() {
                first = Some($from);
            }
            out.push_str(&text[$from..$to]);
        }};
    }
    while pos < b.len() {
        let c = b[pos];
        // White space and `--` comments are dropped until the command has some text.
        if sql_space(c) {
            if !out.is_empty() {
                out.push(c as char);
            }
            pos += 1;
            continue;
        }
        if c == b'-' && b.get(pos + 1) == Some(&b'-') {
            let end = text[pos..].find('\n').map(|e| pos + e).unwrap_or(b.len());
            if !out.is_empty() {
                out.push_str(&text[pos..end]);
            }
            pos = end;
            continue;
        }
        match c {
            b'/' if b.get(pos + 1) == Some(&b'*') => {
                // Nested C-style comment.
                let mut depth = 0usize;
                let mut i = pos;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                let end = i.min(b.len());
                emit!(pos, end);
                pos = end;
            }
            b'\'' => {
                let end = skip_quoted(b, pos, b'\'', false);
                emit!(pos, end);
                pos = end;
            }
            b'"' => {
                let end = skip_quoted(b, pos, b'"', false);
                emit!(pos, end);
                pos = end;
            }
            b'$' => {
                if let Some(end) = dollar_quote_end(text, pos) {
                    emit!(pos, end);
                    pos = end;
                } else {
                    emit!(pos, pos + 1);
                    pos += 1;
                }
            }
            b'(' => {
                st.paren_depth += 1;
                emit!(pos, pos + 1);
                pos += 1;
            }
            b')' => {
                st.paren_depth = st.paren_depth.saturating_sub(1);
                emit!(pos, pos + 1);
                pos += 1;
            }
            b';' => {
                emit!(pos, pos + 1);
                pos += 1;
                if st.paren_depth == 0 && st.begin_depth == 0 {
                    st.identifier_count = 0;
                    return (SqlStop::Semicolon, pos, first);
                }
            }
            b'\\' => match b.get(pos + 1) {
                // `\;` and `\:` put the character itself into the command.
                Some(b';') => {
                    emit!(pos + 1, pos + 2);
                    st.identifier_count = 0;
                    pos += 2;
                }
                Some(b':') => {
                    emit!(pos + 1, pos + 2);
                    pos += 2;
                }
                _ => return (SqlStop::Backslash, pos, first),
            },
            c if ident_start(c) => {
                let mut e = pos + 1;
                while e < b.len() && ident_cont(b[e]) {
                    e += 1;
                }
                if e == pos + 1 && (c == b'e' || c == b'E') && b.get(e) == Some(&b'\'') {
                    // E'...': backslash escapes.
                    let end = skip_quoted(b, e, b'\'', true);
                    emit!(pos, end);
                    pos = end;
                } else {
                    st.identifier(&text[pos..e]);
                    emit!(pos, e);
                    pos = e;
                }
            }
            c if c.is_ascii_digit() => {
                let mut e = pos + 1;
                while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_' || b[e] == b'.')
                {
                    e += 1;
                }
                emit!(pos, e);
                pos = e;
            }
            _ => {
                let ch = text[pos..].chars().next().unwrap();
                emit!(pos, pos + ch.len_utf8());
                pos += ch.len_utf8();
            }
        }
    }
    (SqlStop::Eof, pos, first)
}

/// End of a quoted string or identifier starting at `pos` (doubled quotes stay inside; with
/// `escapes`, a backslash escapes the next character). Unterminated: the end of the text.
fn skip_quoted(b: &[u8], pos: usize, q: u8, escapes: bool) -> usize {
    let mut i = pos + 1;
    while i < b.len() {
        if escapes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// A dollar-quoted string `$tag$...$tag$` starting at `pos`: its end.
fn dollar_quote_end(text: &str, pos: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut e = pos + 1;
    if e < b.len() && ident_start(b[e]) {
        e += 1;
        while e < b.len() && (ident_start(b[e]) || b[e].is_ascii_digit()) {
            e += 1;
        }
    }
    if b.get(e) != Some(&b'$') {
        return None;
    }
    let delim = &text[pos..=e];
    let body = e + 1;
    Some(
        text[body..]
            .find(delim)
            .map(|i| body + i + delim.len())
            .unwrap_or(b.len()),
    )
}

/// pgbench's `skip_sql_comments`: nothing but white space and `--` comments means no command.
fn is_blank_sql(s: &str) -> bool {
    let mut rest = s;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
        if let Some(r) = rest.strip_prefix("--") {
            match r.find('\n') {
                Some(i) => rest = &r[i + 1..],
                None => return true,
            }
        } else {
            return rest.is_empty();
        }
    }
}

/// pgbench's `first_line` of an SQL command: up to 127 bytes, cut at the first line break.
fn sql_first_line(s: &str) -> String {
    let mut end = s.len().min(127);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = &s[..end];
    s[..s.find(['\n', '\r']).unwrap_or(s.len())].to_string()
}

/// pgbench's `parseQuery` scan: every `:name` (a valid variable name after one colon) anywhere in
/// the text is a reference; other colons (`::int`) are skipped with the colons following them.
fn sql_parts(text: &str, symbols: &mut Symbols) -> Vec<SqlPart> {
    let b = text.as_bytes();
    let mut parts = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    let name_end = |mut e: usize| {
        while e < b.len() && (ident_start(b[e]) || b[e].is_ascii_digit()) {
            e += 1;
        }
        e
    };
    while let Some(off) = text[i..].find(':') {
        let p = i + off;
        let next = b.get(p + 1).copied();
        let (part, end) = match next {
            Some(c) if ident_start(c) => {
                let e = name_end(p + 2);
                let id = symbols.intern(&text[p + 1..e]);
                (SqlPart::Var { id, range: p..e }, e)
            }
            Some(q @ (b'\'' | b'"')) if b.get(p + 2).is_some_and(|&c| ident_start(c)) => {
                let e = name_end(p + 3);
                if b.get(e) == Some(&q) {
                    let id = symbols.intern(&text[p + 2..e]);
                    let range = p..e + 1;
                    let part = if q == b'\'' {
                        SqlPart::Literal { id, range }
                    } else {
                        SqlPart::Ident { id, range }
                    };
                    (part, e + 1)
                } else {
                    i = p + 1;
                    continue;
                }
            }
            _ => {
                let mut e = p;
                while b.get(e) == Some(&b':') {
                    e += 1;
                }
                i = e;
                continue;
            }
        };
        if lit_start < p {
            parts.push(SqlPart::Text(lit_start..p));
        }
        parts.push(part);
        lit_start = end;
        i = end;
    }
    if lit_start < text.len() {
        parts.push(SqlPart::Text(lit_start..text.len()));
    }
    parts
}

// ------------------------------------------------------------------------------------------
// Backslash commands (process_backslash_command)
// ------------------------------------------------------------------------------------------

/// A word of a meta-command (exprscan.l, INITIAL state).
struct Word {
    start: usize,
    text: String,
}

/// exprscan.l's INITIAL state: the next white-space separated word, `None` at the end of the
/// command (a newline, consumed, or the end of the text). `pos` moves past what was read.
fn next_word(text: &str, pos: &mut usize) -> Option<Word> {
    let b = text.as_bytes();
    loop {
        let &c = b.get(*pos)?;
        if is_space(c) {
            *pos += 1;
            continue;
        }
        let cont = continuation_len(b, *pos);
        if cont > 0 {
            *pos += cont;
            continue;
        }
        if c == b'\n' {
            *pos += 1;
            return None;
        }
        break;
    }
    let start = *pos;
    let mut e = start;
    while e < b.len() && !is_space(b[e]) && b[e] != b'\n' {
        e += 1;
    }
    // `{nonspace}+{continuation}`: a word right before a line continuation does not include its
    // backslash.
    let mut next = e;
    if e > start + 1 && b[e - 1] == b'\\' {
        let cont = continuation_len(b, e - 1);
        if cont > 0 {
            e -= 1;
            next = e + cont;
        }
    }
    *pos = next;
    Some(Word {
        start,
        text: text[start..e].to_string(),
    })
}

/// What a backslash command turned into.
enum Meta {
    Command(CommandKind),
    Gset(String),
    Aset(String),
}

/// C's `atoi` (leading white space, sign, digits; saturating instead of undefined on overflow).
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    let (neg, d) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for c in d.bytes().take_while(|c| c.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

struct Parser<'a, 's> {
    source: &'a str,
    text: &'a str,
    lines: Lines<'a>,
    symbols: &'s mut Symbols,
}

impl Parser<'_, '_> {
    fn error(&self, pos: usize, msg: String) -> ParseError {
        self.lines.error(self.source, pos, msg)
    }

    fn expr_error(&self, e: ExprError, command: &str) -> ParseError {
        self.error(e.at, message(&e.message, e.more.as_deref(), Some(command)))
    }

    /// The command's text from its backslash to `end`, without trailing line breaks.
    fn first_line(&self, start: usize, end: usize) -> String {
        self.text[start..end]
            .trim_end_matches(['\n', '\r'])
            .to_string()
    }

    /// Parse the meta-command whose backslash is at `bs`. Returns it (or `None` for a lone
    /// backslash), its first line, and the position after it.
    fn backslash(&mut self, bs: usize) -> Result<(Option<(Meta, String)>, usize), ParseError> {
        let mut pos = bs + 1;
        let Some(cmd) = next_word(self.text, &mut pos) else {
            return Ok((None, pos));
        };
        let name = cmd.text.to_ascii_lowercase();
        let cmd_text = cmd.text.clone();
        let err = |p: &Self, at: usize, msg: &str, more: Option<&str>| {
            p.error(at, message(msg, more, Some(&cmd_text)))
        };
        let cmd_end = cmd.start + cmd.text.len();

        if matches!(name.as_str(), "set" | "if" | "elif") {
            let mut var = None;
            if name == "set" {
                let Some(w) = next_word(self.text, &mut pos) else {
                    return Err(err(self, cmd_end, "missing argument", None));
                };
                if !valid_variable_name(&w.text) {
                    return Err(err(
                        self,
                        w.start,
                        &format!("invalid variable name: \"{}\"", w.text),
                        None,
                    ));
                }
                var = Some(self.symbols.intern(&w.text));
            }
            let (expr, end) = parse_expr(self.text, pos, self.symbols)
                .map_err(|e| self.expr_error(e, &cmd_text))?;
            let first_line = self.first_line(bs, end);
            let kind = match name.as_str() {
                "set" => CommandKind::Set {
                    var: var.unwrap(),
                    expr,
                },
                "if" => CommandKind::If {
                    cond: expr,
                    on_false: usize::MAX,
                },
                _ => CommandKind::Elif {
                    cond: expr,
                    on_false: usize::MAX,
                    end: usize::MAX,
                },
            };
            return Ok((Some((Meta::Command(kind), first_line)), end));
        }

        // Every other command: collect the remaining words.
        let mut words = vec![cmd];
        while let Some(w) = next_word(self.text, &mut pos) {
            if words.len() >= MAX_ARGS {
                return Err(err(self, w.start, "too many arguments", None));
            }
            words.push(w);
        }
        let end = pos;
        let first_line = self.first_line(bs, end);
        let last_end = {
            let w = words.last().unwrap();
            w.start + w.text.len()
        };
        let argc = words.len();
        let kind = match name.as_str() {
            "sleep" => {
                if argc < 2 {
                    return Err(err(self, last_end, "missing argument", None));
                }
                if argc > 3 {
                    return Err(err(self, words[3].start, "too many arguments", None));
                }
                let arg = words[1].text.clone();
                let mut unit: Option<(String, usize)> =
                    words.get(2).map(|w| (w.text.clone(), w.start));
                let amount = if let Some(v) = arg.strip_prefix(':') {
                    SleepArg::Var(self.symbols.intern(v))
                } else {
                    // "10ms": a number and a unit in one word.
                    let b = arg.as_bytes();
                    let mut i = 0;
                    if matches!(b.first(), Some(b'+' | b'-')) {
                        i = 1;
                    }
                    let have_digit = b.get(i).is_some_and(|c| c.is_ascii_digit());
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                    if i < b.len() {
                        if argc == 2 && have_digit {
                            unit = Some((arg[i..].to_string(), words[1].start + i));
                        } else {
                            return Err(err(
                                self,
                                words[1].start,
                                "invalid sleep time, must be an integer",
                                Some(&arg),
                            ));
                        }
                    }
                    SleepArg::Const(atoi(&arg))
                };
                let unit_us = match &unit {
                    None => 1_000_000,
                    Some((u, at)) => {
                        if u.eq_ignore_ascii_case("us") {
                            1
                        } else if u.eq_ignore_ascii_case("ms") {
                            1_000
                        } else if u.eq_ignore_ascii_case("s") {
                            1_000_000
                        } else {
                            return Err(err(
                                self,
                                *at,
                                "unrecognized time unit, must be us, ms or s",
                                Some(u),
                            ));
                        }
                    }
                };
                Meta::Command(CommandKind::Sleep { amount, unit_us })
            }
            "setshell" | "shell" => {
                let min = if name == "setshell" { 3 } else { 2 };
                if argc < min {
                    let msg = if name == "setshell" {
                        "missing argument"
                    } else {
                        "missing command"
                    };
                    return Err(err(self, last_end, msg, None));
                }
                let first_arg = min - 1;
                let args = words[first_arg..]
                    .iter()
                    .map(|w| {
                        if let Some(lit) = w.text.strip_prefix("::") {
                            ShellArg::Lit(format!(":{lit}"))
                        } else if let Some(v) = w.text.strip_prefix(':') {
                            ShellArg::Var(self.symbols.intern(v))
                        } else {
                            ShellArg::Lit(w.text.clone())
                        }
                    })
                    .collect();
                if name == "setshell" {
                    if !valid_variable_name(&words[1].text) {
                        return Err(err(
                            self,
                            words[1].start,
                            &format!("invalid variable name: \"{}\"", words[1].text),
                            None,
                        ));
                    }
                    let var = self.symbols.intern(&words[1].text);
                    Meta::Command(CommandKind::SetShell { var, args })
                } else {
                    Meta::Command(CommandKind::Shell { args })
                }
            }
            "else" | "endif" | "startpipeline" | "endpipeline" | "syncpipeline" => {
                if argc != 1 {
                    return Err(err(self, words[1].start, "unexpected argument", None));
                }
                Meta::Command(match name.as_str() {
                    "else" => CommandKind::Else { end: usize::MAX },
                    "endif" => CommandKind::Endif,
                    "startpipeline" => CommandKind::StartPipeline,
                    "endpipeline" => CommandKind::EndPipeline,
                    _ => CommandKind::SyncPipeline,
                })
            }
            "gset" | "aset" => {
                if argc > 2 {
                    return Err(err(self, words[2].start, "too many arguments", None));
                }
                let prefix = words.get(1).map(|w| w.text.clone()).unwrap_or_default();
                if name == "gset" {
                    Meta::Gset(prefix)
                } else {
                    Meta::Aset(prefix)
                }
            }
            _ => return Err(err(self, words[0].start, "invalid command", None)),
        };
        Ok((Some((kind, first_line)), end))
    }

    fn script(&mut self) -> Result<Vec<Command>, ParseError> {
        let mut commands: Vec<Command> = Vec::new();
        // Backslash position of each meta-command, for the conditional checks' messages.
        let mut positions: Vec<usize> = Vec::new();
        let mut st = SqlState::default();
        let mut pos = 0;
        let mut buf = String::new();
        loop {
            buf.clear();
            let (stop, next, first) = scan_sql(self.text, pos, &mut st, &mut buf);
            if !is_blank_sql(&buf) {
                let start = first.unwrap_or(pos);
                let text = std::mem::take(&mut buf);
                let parts = sql_parts(&text, self.symbols);
                commands.push(Command {
                    line: self.lines.line_of(start),
                    first_line: sql_first_line(&text),
                    kind: CommandKind::Sql(SqlCommand {
                        text,
                        parts,
                        result: ResultVars::None,
                    }),
                });
                positions.push(start);
            }
            pos = next;
            match stop {
                SqlStop::Semicolon => continue,
                SqlStop::Eof => break,
                SqlStop::Backslash => {
                    let bs = pos;
                    let (meta, after) = self.backslash(bs)?;
                    pos = after;
                    let Some((meta, first_line)) = meta else {
                        continue;
                    };
                    let (is_gset, prefix) = match meta {
                        Meta::Gset(prefix) => (true, prefix),
                        Meta::Aset(prefix) => (false, prefix),
                        Meta::Command(kind) => {
                            commands.push(Command {
                                line: self.lines.line_of(bs),
                                first_line,
                                kind,
                            });
                            positions.push(bs);
                            continue;
                        }
                    };
                    // \gset and \aset merge into the preceding command, which must be SQL
                    // without one already (pgbench reports both as \gset).
                    match commands.last_mut() {
                        Some(Command {
                            kind: CommandKind::Sql(s),
                            ..
                        }) if s.result == ResultVars::None => {
                            s.result = if is_gset {
                                ResultVars::Gset(prefix)
                            } else {
                                ResultVars::Aset(prefix)
                            };
                        }
                        prev => {
                            // pgbench names the previous command only if it is a meta-command
                            // (an SQL command's first line is not set yet at that point).
                            let more = prev
                                .filter(|c| !matches!(c.kind, CommandKind::Sql(_)))
                                .map(|c| c.first_line.clone());
                            return Err(self.error(
                                bs,
                                message("\\gset must follow an SQL command", more.as_deref(), None),
                            ));
                        }
                    }
                }
            }
        }
        if commands.is_empty() {
            return Err(ParseError {
                source: self.source.to_string(),
                line: 0,
                column: 0,
                message: format!("empty command list for script \"{}\"", self.source),
                line_text: String::new(),
            });
        }
        self.conditionals(&mut commands, &positions)?;
        Ok(commands)
    }

    /// pgbench's `CheckConditional`, and the jump targets of each branch.
    fn conditionals(
        &self,
        commands: &mut [Command],
        positions: &[usize],
    ) -> Result<(), ParseError> {
        // Per open \if: the indexes of its branches (\if, \elif..., \else) and whether an \else
        // was seen.
        let mut stack: Vec<(Vec<usize>, bool)> = Vec::new();
        for i in 0..commands.len() {
            let fail = |msg: &str| self.error(positions[i], msg.to_string());
            match commands[i].kind {
                CommandKind::If { .. } => stack.push((vec![i], false)),
                CommandKind::Elif { .. } => match stack.last_mut() {
                    None => return Err(fail("\\elif without matching \\if")),
                    Some((_, true)) => return Err(fail("\\elif after \\else")),
                    Some((b, false)) => b.push(i),
                },
                CommandKind::Else { .. } => match stack.last_mut() {
                    None => return Err(fail("\\else without matching \\if")),
                    Some((_, true)) => return Err(fail("\\else after \\else")),
                    Some((b, seen)) => {
                        b.push(i);
                        *seen = true;
                    }
                },
                CommandKind::Endif => {
                    let Some((branches, _)) = stack.pop() else {
                        return Err(fail("\\endif without matching \\if"));
                    };
                    let after = i + 1;
                    for (k, &b) in branches.iter().enumerate() {
                        let next = branches.get(k + 1).copied();
                        // Where a false condition goes: the next \elif (to evaluate), past the
                        // \else, or past the \endif.
                        let on_false_target = match next {
                            Some(n) if matches!(commands[n].kind, CommandKind::Elif { .. }) => n,
                            Some(n) => n + 1,
                            None => after,
                        };
                        match &mut commands[b].kind {
                            CommandKind::If { on_false, .. } => *on_false = on_false_target,
                            CommandKind::Elif { on_false, end, .. } => {
                                *on_false = on_false_target;
                                *end = after;
                            }
                            CommandKind::Else { end } => *end = after,
                            _ => unreachable!(),
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some((branches, _)) = stack.last() {
            return Err(self.error(
                positions[branches[0]],
                "\\if without matching \\endif".into(),
            ));
        }
        Ok(())
    }
}

impl Script {
    /// Parse and compile a script. `source` names it in error messages (the file name as given
    /// to `-f`). Variables are resolved into `symbols`, shared by all scripts of a run.
    pub fn parse(source: &str, text: &str, symbols: &mut Symbols) -> Result<Script, ParseError> {
        let mut p = Parser {
            source,
            text,
            lines: Lines::new(text),
            symbols,
        };
        let commands = p.script()?;
        Ok(Script {
            desc: source.to_string(),
            commands,
        })
    }

    /// The statement texts as `-r` prints them, one per command.
    pub fn statements(&self) -> Vec<String> {
        self.commands.iter().map(|c| c.first_line.clone()).collect()
    }

    /// Whether the script uses a pipeline (needs extended or prepared mode).
    pub fn uses_pipeline(&self) -> bool {
        self.commands
            .iter()
            .any(|c| matches!(c.kind, CommandKind::StartPipeline))
    }
}
