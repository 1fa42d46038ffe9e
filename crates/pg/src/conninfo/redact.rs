//! The printable forms of a target: quoting a value for a `key=value` string; [`redact`], which
//! removes passwords from any text that may hold one (error messages, a fault command, logs);
//! and [`redact_args`], the same for a command line, argument by argument.
//!
//! One redaction for every spelling of a password stampede, libpq or the MySQL clients accept,
//! so that no printed form (the terminal, the JSON's `command_line`, the HTML, the fleet's
//! table, a manifest's check) has a path of its own:
//!
//! * URLs (`postgresql://`, `mysql://`, any `scheme://`): the password runs from the first `:`
//!   of the user info to the `@` that ends it ([`userinfo_end`], the parsers' own rule), so any
//!   reserved character may be in it, raw or percent-encoded. When that rule finds no user info
//!   but an `@` follows (a raw `/` in the password), everything up to the last `@` goes.
//! * `KEY=VALUE` where the key ends in `password`, `passwd` or `_pwd`: `password=`,
//!   `PGPASSWORD=`, `sslpassword=`, `MYSQL_PWD=`, `--mysql-password=`, in a URL's query too.
//!   The value may be quoted (`'...'` with `\` escapes, libpq's; a doubled `''` is taken as
//!   part of the value too) or run to the next blank (`\ ` escapes a blank).
//! * A long option ending in `password`/`passwd` followed by a blank: the next word
//!   (`--pgsql-password X`, `--mysql-password X`).
//! * `-pVALUE` once a MySQL client (`mysql`, `mariadb`, `mysqldump`, ...) has been named in the
//!   text: its attached password. Elsewhere `-p` is a port and stays.
//!
//! Errs on the side of removing too much: an `@` in a URL's query can hide its host and port,
//! a `-p5432` after a MySQL client's name its port. A URL's password with a raw blank is found
//! whole only in [`redact_args`], where an argument is one URL.

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

/// Where a URL's user info ends: the index of its `@` in `rest` (the text after `scheme://`),
/// or `None` when it has none. Whether there is one is libpq's rule (an `@` before the first
/// `/`); which `@` ends it is more forgiving than libpq, which takes the first: the last one
/// before the first `?` or `/` after the first `@`, so a password may hold a raw `@` or `?`
/// (`#` has no meaning in these URLs). Shared by both protocols' parsers and [`redact`].
pub fn userinfo_end(rest: &str) -> Option<usize> {
    let slash = rest.find('/').unwrap_or(rest.len());
    let first = rest[..slash].find('@')?;
    let stop = rest[first..]
        .find(['?', '/'])
        .map_or(rest.len(), |i| first + i);
    rest[..stop].rfind('@')
}

/// True when a URL's password may have spilled into its other parts: an `@` that
/// [`userinfo_end`] does not take as the end of a user info (a raw `/` in the password). A
/// parser's errors about such a URL must not quote any part of it.
pub fn may_spill_password(rest: &str) -> bool {
    userinfo_end(rest).is_none() && rest.contains('@')
}

/// Remove passwords from `text` (module notes). A URL ends at the next blank.
pub fn redact(text: &str) -> String {
    Scan::new(text, false).run()
}

/// Remove passwords from a command line, argument by argument (module notes): a URL runs to
/// the end of its argument, and the argument after a long password option is replaced whole.
/// When the program (the first argument) is a MySQL client, `-pVALUE` is its password.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mysql = args.first().is_some_and(|a| {
        let name = a.rsplit('/').next().unwrap_or(a);
        is_mysql_client(name)
    });
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for a in args {
        if std::mem::take(&mut hide_next) {
            out.push("***".to_string());
            continue;
        }
        let mut scan = Scan::new(a, true);
        scan.mysql = mysql;
        out.push(scan.run());
        hide_next = a.starts_with("--") && password_key(&a[2..]);
    }
    out
}

/// A key naming a password: ends in `password`, `passwd` or `_pwd`/`-pwd` (case-insensitive).
fn password_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.ends_with("password") || k.ends_with("passwd") || k.ends_with("_pwd") || k.ends_with("-pwd")
}

/// A MySQL or MariaDB client program's name (`mysql`, `mysqladmin`, `mariadb-dump`, ...).
fn is_mysql_client(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.starts_with("mysql") || w.starts_with("mariadb")
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// One pass over a text: what is copied as it is, what is replaced by `***`.
struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    out: String,
    /// `text[copied..]` is not yet in `out`.
    copied: usize,
    /// A URL runs to the end of the text (one command-line argument), not to the next blank.
    whole: bool,
    /// A MySQL client was named: `-pVALUE` is a password.
    mysql: bool,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str, whole: bool) -> Scan<'a> {
        Scan {
            text,
            b: text.as_bytes(),
            out: String::with_capacity(text.len()),
            copied: 0,
            whole,
            mysql: false,
        }
    }

    /// Replace `text[from..to]` by `***`. Positions are always at ASCII bytes or the ends, so
    /// they are char boundaries.
    fn hide(&mut self, from: usize, to: usize) {
        self.out.push_str(&self.text[self.copied..from]);
        self.out.push_str("***");
        self.copied = to;
    }

    fn run(mut self) -> String {
        let b = self.b;
        let mut i = 0;
        while i < b.len() {
            if b[i..].starts_with(b"://") {
                i = self.url(i + 3);
                continue;
            }
            let word_start = i == 0 || !is_ident(b[i - 1]);
            if word_start && is_ident(b[i]) {
                let mut j = i;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                i = self.word(i, j);
                continue;
            }
            i += 1;
        }
        self.out
            .push_str(&self.text[self.copied.min(self.text.len())..]);
        self.out
    }

    /// The user info of a URL whose authority starts at `start`; where to scan on.
    fn url(&mut self, start: usize) -> usize {
        let b = self.b;
        let end = if self.whole {
            b.len()
        } else {
            (start..b.len())
                .find(|&k| b[k].is_ascii_whitespace())
                .unwrap_or(b.len())
        };
        let token = &self.text[start..end];
        let Some(at) = userinfo_end(token).or_else(|| token.rfind('@')) else {
            return start;
        };
        if let Some(colon) = token[..at].find(':') {
            self.hide(start + colon + 1, start + at);
        }
        start + at
    }

    /// The word `text[i..j]`: a password key, a long password option, `-pVALUE`, a MySQL
    /// client's name, or nothing of note; where to scan on.
    fn word(&mut self, i: usize, j: usize) -> usize {
        let b = self.b;
        let word = &self.text[i..j];
        if word.len() > 2 && word.starts_with("-p") && !word.starts_with("--") && self.mysql {
            let end = self.value_end(i + 2, false);
            self.hide(i + 2, end);
            return end;
        }
        let is_key = password_key(word.trim_start_matches('-'));
        let mut k = j;
        while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
            k += 1;
        }
        if is_key && k < b.len() && b[k] == b'=' {
            k += 1;
            while k < b.len() && (b[k] == b' ' || b[k] == b'\t') {
                k += 1;
            }
            let in_query = i > 0 && (b[i - 1] == b'?' || b[i - 1] == b'&');
            // `--mysql-password=VALUE` as one argument: the value is the rest of it.
            let end = if self.whole && i == 0 && word.starts_with("--") {
                b.len()
            } else {
                self.value_end(k, in_query)
            };
            self.hide(k, end);
            return end;
        }
        if is_key && word.starts_with("--") && k > j && k < b.len() {
            let end = self.value_end(k, false);
            self.hide(k, end);
            return end;
        }
        // A program's name, not a URL's scheme (`mysql://`).
        if is_mysql_client(word) && !b[j..].starts_with(b"://") {
            self.mysql = true;
        }
        j
    }

    /// The end of a value starting at `k`: quoted (libpq's `\` escapes; `''` inside taken as
    /// part of it), or up to a blank (`\` escapes the next byte), or in a URL's query up to
    /// `&` or `#` too.
    fn value_end(&self, mut k: usize, in_query: bool) -> usize {
        let b = self.b;
        if k < b.len() && (b[k] == b'\'' || b[k] == b'"') && !in_query {
            let q = b[k];
            k += 1;
            loop {
                while k < b.len() && b[k] != q {
                    k += if b[k] == b'\\' { 2 } else { 1 };
                }
                k = (k + 1).min(b.len());
                // `'it''s'`: the quote doubled, as SQL writes it, is still the value.
                if k < b.len() && b[k] == q {
                    k += 1;
                    continue;
                }
                return k;
            }
        }
        while k < b.len()
            && !b[k].is_ascii_whitespace()
            && !(in_query && (b[k] == b'&' || b[k] == b'#'))
        {
            k += if b[k] == b'\\' && !in_query { 2 } else { 1 };
        }
        k.min(b.len())
    }
}

#[cfg(test)]
mod tests;
