//! The printable forms of a target: quoting a value for a `key=value` string, and [`redact`],
//! which removes passwords from any text that may hold a connection string or URL.

use std::borrow::Cow;

/// Quote a value for a `key=value` string when it needs it (libpq rules).
pub(super) fn quote(v: &str) -> Cow<'_, str> {
    if !v.is_empty()
        && !v
            .bytes()
            .any(|c| c.is_ascii_whitespace() || c == b'\'' || c == b'\\')
    {
        return Cow::Borrowed(v);
    }
    let mut q = String::with_capacity(v.len() + 2);
    q.push('\'');
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('\'');
    Cow::Owned(q)
}

fn starts_with_ci(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.len() >= i + word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word)
}

/// Remove passwords from any text that may hold a connection string or URL (error messages,
/// echoed command lines): `password=secret` -> `password=***`, `postgres://u:secret@h` ->
/// `postgres://u:***@h`. Also `PGPASSWORD=secret`. Errs on the side of removing too much: an
/// unquoted value runs to the next blank (or `&`/`#` in a URL query).
pub fn redact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0; // text[copied..i] is pending verbatim output
    while i < b.len() {
        if b[i..].starts_with(b"://") {
            let start = i + 3;
            let mut end = start;
            while end < b.len() && !b"/?# \t\r\n'\"".contains(&b[end]) {
                end += 1;
            }
            if let Some(at) = text[start..end].rfind('@') {
                let userinfo = &text[start..start + at];
                if let Some(c) = userinfo.find(':') {
                    out.push_str(&text[copied..start + c + 1]);
                    out.push_str("***");
                    copied = start + at;
                }
                i = start + at;
            } else {
                i = start;
            }
            continue;
        }
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let kw_len = if word_start && starts_with_ci(b, i, b"password") {
            8
        } else if word_start && starts_with_ci(b, i, b"pgpassword") {
            10
        } else {
            0
        };
        if kw_len > 0 {
            let mut j = i + kw_len;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if j < b.len() && b[j] == b'=' {
                j += 1;
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                let in_url = i > 0 && (b[i - 1] == b'?' || b[i - 1] == b'&');
                let vstart = j;
                if j < b.len() && (b[j] == b'\'' || b[j] == b'"') {
                    let q = b[j];
                    j += 1;
                    while j < b.len() && b[j] != q {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    j = (j + 1).min(b.len());
                } else {
                    while j < b.len()
                        && !b[j].is_ascii_whitespace()
                        && !(in_url && (b[j] == b'&' || b[j] == b'#'))
                    {
                        j += if b[j] == b'\\' && !in_url { 2 } else { 1 };
                    }
                    j = j.min(b.len());
                }
                out.push_str(&text[copied..vstart]);
                out.push_str("***");
                copied = j;
                i = j;
                continue;
            }
        }
        i += 1;
    }
    // `copied` always sits on a char boundary: it is set just after ASCII delimiters or at
    // positions found by `find` on ASCII characters.
    out.push_str(&text[copied.min(text.len())..]);
    out
}
