//! An SQL command of a script: its text as pgbench keeps it, the text split at variable
//! references (pgbench's `parseQuery`, plus psql's `:'var'` and `:"var"`), and the `$n` form
//! for extended and prepared modes.

use std::ops::Range;

use super::lexer::ident_start;
use super::ResultVars;
use crate::script::vars::{Symbols, VarId};

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

/// pgbench's `first_line` of an SQL command: up to 127 bytes, cut at the first line break.
pub(super) fn sql_first_line(s: &str) -> String {
    let mut end = s.len().min(127);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = &s[..end];
    s[..s.find(['\n', '\r']).unwrap_or(s.len())].to_string()
}

/// pgbench's `parseQuery` scan: every `:name` (a valid variable name after one colon) anywhere in
/// the text is a reference; other colons (`::int`) are skipped with the colons following them.
pub(super) fn sql_parts(text: &str, symbols: &mut Symbols) -> Vec<SqlPart> {
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
