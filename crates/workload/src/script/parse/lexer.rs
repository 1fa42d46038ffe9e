//! Where an SQL command ends, as psql's lexer (`src/fe_utils/psqlscan.l`) decides it for
//! pgbench: at a `;` outside parentheses and outside SQL-standard function bodies, or at a
//! backslash that starts a meta-command; quotes, dollar quotes, comments and `\;` do not end it.
//! White space and `--` comments before a command's text are dropped, as pgbench does.

/// psqlscan's state that survives from one command to the next.
#[derive(Default)]
pub(super) struct SqlState {
    paren_depth: u32,
    /// `BEGIN ... END` nesting inside `CREATE [OR REPLACE] {FUNCTION|PROCEDURE}` (SQL-standard
    /// function bodies), where `;` does not end the command.
    begin_depth: u32,
    identifiers: [u8; 4],
    identifier_count: usize,
}

pub(super) enum SqlStop {
    /// A `;` ended the command (included in the text).
    Semicolon,
    /// A backslash starts a meta-command at the returned position.
    Backslash,
    Eof,
}

pub(super) fn ident_start(c: u8) -> bool {
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
pub(super) fn scan_sql(
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
pub(super) fn is_blank_sql(s: &str) -> bool {
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
