//! exprscan.l's EXPR state: the tokens of an expression, with the end offset of each so errors
//! can put pgbench's caret under the last character of the token at which they were found. The
//! white-space and line-continuation rules are shared with the meta-command word splitter
//! (`parse`), which follows exprscan.l's INITIAL state.

use super::ExprError;
use crate::script::vars::{range_ok, strtoint64};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    Ne,
    Le,
    Ge,
    Shl,
    Shr,
    Lt,
    Gt,
    Pipe,
    Amp,
    Hash,
    Tilde,
    LParen,
    RParen,
    Comma,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    End,
    Null,
    Bool(bool),
    Int(i64),
    /// "9223372036854775808", valid only right after a unary minus.
    MaxIntPlusOne,
    Double(f64),
    Var(String),
    Func(String),
    /// End of the command: a newline (consumed) or the end of the text.
    Eol,
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    /// Offset just past the token (past the newline for `Eol`).
    pub(super) end: usize,
}

impl Token {
    /// Where pgbench puts the caret for an error detected at this token.
    pub(super) fn caret(&self) -> usize {
        self.end.saturating_sub(1)
    }
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_alnum(c: u8) -> bool {
    is_alpha(c) || c.is_ascii_digit()
}

/// exprscan.l's `{space}`.
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0x0c | 0x0b)
}

/// exprscan.l's `{continuation}` (backslash, optional CR, newline) at `pos`: its length.
pub(crate) fn continuation_len(b: &[u8], pos: usize) -> usize {
    if b.get(pos) != Some(&b'\\') {
        return 0;
    }
    match (b.get(pos + 1), b.get(pos + 2)) {
        (Some(b'\n'), _) => 2,
        (Some(b'\r'), Some(b'\n')) => 3,
        _ => 0,
    }
}

pub(super) struct Lexer<'a> {
    pub(super) src: &'a str,
    pub(super) pos: usize,
}

impl<'a> Lexer<'a> {
    fn err(at: usize, message: &str, more: Option<String>) -> ExprError {
        ExprError {
            at,
            message: message.to_string(),
            more,
        }
    }

    pub(super) fn next(&mut self) -> Result<Token, ExprError> {
        let b = self.src.as_bytes();
        loop {
            let Some(&c) = b.get(self.pos) else {
                return Ok(Token {
                    tok: Tok::Eol,
                    end: self.pos,
                });
            };
            if is_space(c) {
                self.pos += 1;
                continue;
            }
            let cont = continuation_len(b, self.pos);
            if cont > 0 {
                self.pos += cont;
                continue;
            }
            if c == b'\n' {
                self.pos += 1;
                return Ok(Token {
                    tok: Tok::Eol,
                    end: self.pos,
                });
            }
            break;
        }
        let start = self.pos;
        let c = b[start];
        let next = b.get(start + 1).copied();
        let two = |t: Tok, lx: &mut Lexer| {
            lx.pos = start + 2;
            t
        };
        let one = |t: Tok, lx: &mut Lexer| {
            lx.pos = start + 1;
            t
        };
        let tok = match (c, next) {
            (b'<', Some(b'>')) => two(Tok::Ne, self),
            (b'!', Some(b'=')) => two(Tok::Ne, self),
            (b'<', Some(b'=')) => two(Tok::Le, self),
            (b'>', Some(b'=')) => two(Tok::Ge, self),
            (b'<', Some(b'<')) => two(Tok::Shl, self),
            (b'>', Some(b'>')) => two(Tok::Shr, self),
            (b'+', _) => one(Tok::Plus, self),
            (b'-', _) => one(Tok::Minus, self),
            (b'*', _) => one(Tok::Star, self),
            (b'/', _) => one(Tok::Slash, self),
            (b'%', _) => one(Tok::Percent, self),
            (b'=', _) => one(Tok::Eq, self),
            (b'<', _) => one(Tok::Lt, self),
            (b'>', _) => one(Tok::Gt, self),
            (b'|', _) => one(Tok::Pipe, self),
            (b'&', _) => one(Tok::Amp, self),
            (b'#', _) => one(Tok::Hash, self),
            (b'~', _) => one(Tok::Tilde, self),
            (b'(', _) => one(Tok::LParen, self),
            (b')', _) => one(Tok::RParen, self),
            (b',', _) => one(Tok::Comma, self),
            (b':', Some(n)) if is_alnum(n) => {
                let mut e = start + 1;
                while e < b.len() && is_alnum(b[e]) {
                    e += 1;
                }
                self.pos = e;
                Tok::Var(self.src[start + 1..e].to_string())
            }
            (d, _) if d.is_ascii_digit() => return self.number(start),
            (b'.', Some(n)) if n.is_ascii_digit() => return self.number(start),
            (a, _) if is_alpha(a) => {
                let mut e = start + 1;
                while e < b.len() && is_alnum(b[e]) {
                    e += 1;
                }
                self.pos = e;
                let word = &self.src[start..e];
                keyword(word).unwrap_or_else(|| Tok::Func(word.to_string()))
            }
            _ => {
                // Any other single character (flex's `.` rule).
                let ch = self.src[start..].chars().next().unwrap();
                self.pos = start + ch.len_utf8();
                return Err(Self::err(
                    start,
                    "unexpected character",
                    Some(ch.to_string()),
                ));
            }
        };
        Ok(Token { tok, end: self.pos })
    }

    /// `{digit}+`, `{digit}+(\.{digit}*)?([eE][-+]?{digit}+)?`, `\.{digit}+([eE][-+]?{digit}+)?`
    /// by longest match.
    fn number(&mut self, start: usize) -> Result<Token, ExprError> {
        let b = self.src.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut e = digits(start);
        let mut is_double = false;
        if b.get(e) == Some(&b'.') {
            e = digits(e + 1);
            is_double = true;
        }
        if matches!(b.get(e), Some(b'e' | b'E')) {
            let mut x = e + 1;
            if matches!(b.get(x), Some(b'+' | b'-')) {
                x += 1;
            }
            if b.get(x).is_some_and(|c| c.is_ascii_digit()) {
                e = digits(x);
                is_double = true;
            }
        }
        self.pos = e;
        let text = &self.src[start..e];
        let tok = if is_double {
            match text.parse::<f64>() {
                Ok(v) if range_ok(text, v) => Tok::Double(v),
                _ => {
                    return Err(Self::err(
                        e - 1,
                        "double constant overflow",
                        Some(text.to_string()),
                    ))
                }
            }
        } else if text == "9223372036854775808" {
            Tok::MaxIntPlusOne
        } else {
            match strtoint64(text) {
                Ok(v) => Tok::Int(v),
                Err(_) => {
                    return Err(Self::err(
                        e - 1,
                        "bigint constant overflow",
                        Some(text.to_string()),
                    ))
                }
            }
        };
        Ok(Token { tok, end: e })
    }
}

/// exprscan.l's case-insensitive keywords; a word of the same length as a keyword is the keyword
/// (flex prefers the earlier rule on equal length).
fn keyword(w: &str) -> Option<Tok> {
    let kw = |k: &str| w.eq_ignore_ascii_case(k);
    Some(if kw("and") {
        Tok::And
    } else if kw("or") {
        Tok::Or
    } else if kw("not") {
        Tok::Not
    } else if kw("is") {
        Tok::Is
    } else if kw("isnull") {
        Tok::IsNull
    } else if kw("notnull") {
        Tok::NotNull
    } else if kw("case") {
        Tok::Case
    } else if kw("when") {
        Tok::When
    } else if kw("then") {
        Tok::Then
    } else if kw("else") {
        Tok::Else
    } else if kw("end") {
        Tok::End
    } else if kw("null") {
        Tok::Null
    } else if kw("true") {
        Tok::Bool(true)
    } else if kw("false") {
        Tok::Bool(false)
    } else {
        return None;
    })
}
