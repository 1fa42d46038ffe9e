//! Loading over the MySQL protocol: the rows every [`RowSource`] writes as COPY text, sent as
//! multi-row `INSERT ... VALUES (...),(...)` statements (issue 15: "LOAD DATA LOCAL INFILE or
//! batched multi-row INSERT for loading").
//!
//! Why INSERT and not LOAD DATA LOCAL INFILE: LOCAL INFILE is off by default on both servers
//! (`local_infile`, and MariaDB's client-side counterpart) and needs the client capability the
//! server may refuse; a multi-row INSERT works on every MySQL-compatible server, Galera
//! included (it replicates a LOAD DATA as one huge write set). Sources stay protocol-neutral:
//! they write COPY text once and this module translates it.
//!
//! The translation (PostgreSQL docs, COPY, "Text Format"): fields split on tabs, rows on
//! newlines, `\N` is NULL, backslash escapes `\b \f \n \r \t \v \\` and `\ooo`. A field that is
//! a plain decimal number goes unquoted; other fields as `'...'` with `'` doubled; a field with a
//! backslash or a control character as a hex literal `X'...'`, which means the same bytes with
//! or without `NO_BACKSLASH_ESCAPES` in the session's sql_mode.

use std::fmt::Write as _;

/// Rows per INSERT statement at most, and its size at most (well under the servers' default
/// `max_allowed_packet`: 16 MiB on MariaDB 10.11, 64 MiB on MySQL 8).
pub(crate) const ROWS_PER_INSERT: u64 = 1000;
pub(crate) const BYTES_PER_INSERT: usize = 1024 * 1024;

/// Append one COPY-text row (without its newline) as a `(v1, v2, ...)` tuple.
pub(crate) fn push_tuple(sql: &mut String, line: &[u8]) {
    sql.push('(');
    for (i, field) in line.split(|&b| b == b'\t').enumerate() {
        if i > 0 {
            sql.push(',');
        }
        push_value(sql, field);
    }
    sql.push(')');
}

fn is_number(f: &[u8]) -> bool {
    let digits = f.strip_prefix(b"-").unwrap_or(f);
    let mut parts = digits.splitn(2, |&b| b == b'.');
    let int = parts.next().unwrap_or(&[]);
    let frac = parts.next();
    !int.is_empty()
        && int.iter().all(u8::is_ascii_digit)
        && frac.is_none_or(|f| !f.is_empty() && f.iter().all(u8::is_ascii_digit))
        // A leading zero would be read as a number and lose a zip code's zeros.
        && (int.len() == 1 || int[0] != b'0')
}

fn push_value(sql: &mut String, f: &[u8]) {
    if f == b"\\N" {
        sql.push_str("NULL");
    } else if is_number(f) {
        // ASCII by construction.
        sql.push_str(std::str::from_utf8(f).unwrap_or("0"));
    } else if f.iter().any(|&b| b == b'\\' || b < 0x20 || b == 0x7f)
        || std::str::from_utf8(f).is_err()
    {
        sql.push_str("X'");
        for b in unescape(f) {
            let _ = write!(sql, "{b:02X}");
        }
        sql.push('\'');
    } else {
        sql.push('\'');
        for ch in std::str::from_utf8(f).unwrap_or("").chars() {
            if ch == '\'' {
                sql.push('\'');
            }
            sql.push(ch);
        }
        sql.push('\'');
    }
}

/// COPY text's backslash escapes, decoded.
fn unescape(f: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(f.len());
    let mut i = 0;
    while i < f.len() {
        let b = f[i];
        if b != b'\\' || i + 1 == f.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let c = f[i + 1];
        i += 2;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < f.len() && (b'0'..=b'7').contains(&f[i]) {
                    v = v * 8 + (f[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    out
}

/// Split a buffer of COPY text into its rows (each without the newline).
pub(crate) fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(line: &str) -> String {
        let mut s = String::new();
        push_tuple(&mut s, line.as_bytes());
        s
    }

    #[test]
    fn copy_text_becomes_sql_literals() {
        assert_eq!(tuple("1\t42\tabc"), "(1,42,'abc')");
        assert_eq!(tuple("-7\t3.25\t\\N"), "(-7,3.25,NULL)");
        // Leading zeros, odd numbers and quotes stay strings.
        assert_eq!(
            tuple("0123\t1.\t-\tO'Brien"),
            "('0123','1.','-','O''Brien')"
        );
        assert_eq!(tuple("0\t\t"), "(0,'','')");
        // Escapes become the bytes they stand for, as hex.
        assert_eq!(tuple("a\\tb\\\\c"), "(X'6109625C63')");
        assert_eq!(tuple("\\101"), "(X'41')");
    }

    #[test]
    fn lines_skip_the_trailing_newline() {
        let v: Vec<&[u8]> = lines(b"1\ta\n2\tb\n").collect();
        assert_eq!(v, vec![&b"1\ta"[..], &b"2\tb"[..]]);
    }
}
