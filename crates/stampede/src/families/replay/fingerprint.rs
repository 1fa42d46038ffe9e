//! A statement's fingerprint: its text with every literal and parameter made `?`, whitespace
//! collapsed and lists of values folded (`IN (?, ?, ?)` and multi-row `VALUES` become one),
//! so that the statements an application sends from one line of its code fall together,
//! as `pg_stat_statements` (normalised query text) and `pt-query-digest` (fingerprint) group
//! them. A replay measures latency and counts errors per fingerprint, and `compare` matches
//! two replays by it.
//!
//! A hand-written scanner, not a SQL parser: it needs only to tell literals (quoted strings,
//! numbers, `$n`, `?`) from the rest, in one pass without allocation beyond the result, which
//! keeps a million-statement log's fingerprints to well under a second. Identifiers in double
//! quotes or backticks are kept (they name things); keywords are kept as written (a
//! fingerprint is for reading).

/// The fingerprint of `sql`.
pub fn of(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len().min(256));
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                space = !out.is_empty();
                i += 1;
                continue;
            }
            _ => {}
        }
        if space {
            out.push(' ');
            space = false;
        }
        match c {
            // A string literal ('' doubles a quote; E'' strings may escape with a backslash).
            b'\'' => {
                let escapes = i > 0 && matches!(b[i - 1], b'E' | b'e');
                if escapes {
                    out.pop();
                }
                i += 1;
                while i < b.len() {
                    if escapes && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
                out.push('?');
            }
            // Quoted identifiers are kept whole.
            b'"' | b'`' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != c {
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.push_str(&sql[start..i]);
            }
            // `$1`: a parameter.
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                out.push('?');
            }
            // A number, unless it ends a name (`t1`, `col_2`).
            b'0'..=b'9' | b'.'
                if !prev_is_word(&out)
                    && (c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                // A sign right before a number after an operator or `(` is part of it.
                if out.ends_with('-') && !prev_is_word(&out[..out.len() - 1]) {
                    out.pop();
                }
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_')
                {
                    i += 1;
                }
                out.push('?');
            }
            _ => {
                // Multi-byte characters are copied whole.
                let len = utf8_len(c);
                let end = (i + len).min(b.len());
                out.push_str(sql.get(i..end).unwrap_or("?"));
                i = end;
            }
        }
        fold_lists(&mut out);
    }
    if out.ends_with(';') {
        out.pop();
        while out.ends_with(' ') {
            out.pop();
        }
    }
    out
}

fn prev_is_word(out: &str) -> bool {
    out.as_bytes()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Fold a list of values just closed: `(?, ?, ?)` to `(?)`, and `VALUES (?), (?)` to
/// `VALUES (?)`, so that a statement's fingerprint does not depend on how many values it
/// carries.
fn fold_lists(out: &mut String) {
    if out.ends_with(", ?") {
        // `(?, ?` -> `(?`: a list of values in parentheses (an IN list, a row) is one mark;
        // a select list's values are not folded.
        let cut = out.len() - 3;
        if out[..cut].ends_with("(?") {
            out.truncate(cut);
        }
    } else if out.ends_with(", (?)") {
        let cut = out.len() - 5;
        if out[..cut].ends_with("(?)") {
            out.truncate(cut);
        }
    }
    if out.ends_with(",?") {
        let cut = out.len() - 2;
        if out[..cut].ends_with("(?") {
            out.truncate(cut);
        }
    } else if out.ends_with(",(?)") {
        let cut = out.len() - 4;
        if out[..cut].ends_with("(?)") {
            out.truncate(cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::of;

    #[test]
    fn literals_and_parameters_become_one_mark() {
        assert_eq!(
            of("UPDATE pgbench_accounts SET abalance = abalance + -4211 WHERE aid = 77;"),
            "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?"
        );
        assert_eq!(
            of("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"),
            "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?"
        );
        assert_eq!(
            of("SELECT c FROM sbtest1 WHERE id=5034"),
            "SELECT c FROM sbtest1 WHERE id=?"
        );
        assert_eq!(
            of("INSERT INTO t (a, b) VALUES (1, 'it''s'), (2, E'a\\'b')"),
            "INSERT INTO t (a, b) VALUES (?)"
        );
        assert_eq!(
            of("SELECT * FROM t WHERE id IN (1,2,3)"),
            "SELECT * FROM t WHERE id IN (?)"
        );
    }

    #[test]
    fn names_with_digits_and_quoted_names_are_kept() {
        assert_eq!(
            of("SELECT t1.col_2 FROM \"Tab 9\" t1 WHERE x > 1.5e3"),
            "SELECT t1.col_2 FROM \"Tab 9\" t1 WHERE x > ?"
        );
        assert_eq!(
            of("select  `k1`\n from\tsbtest3"),
            "select `k1` from sbtest3"
        );
        assert_eq!(
            of("SELECT 'é', 'ü' || name FROM t"),
            "SELECT ?, ? || name FROM t"
        );
    }
}
