//! Reading the values inside PostgreSQL log entries: timestamps (`%m`, `%t`, csvlog's and
//! jsonlog's `log_time`), `duration:` milliseconds, `DETAIL:  parameters:` lists, a
//! statement's kind, and lines of text from bytes that may not be UTF-8.
//!
//! Owns: these pure functions, shared by `pg_log` (the assembler) and the three format
//! readers. Must not touch: log structure (which entry means what: `pg_log`) or any format's
//! field layout (`pg_stderr`, `pg_csv`, `pg_json`), so each can be tested on its own strings.
//! Kept apart from `pg_log.rs` only to keep each file short.

use super::filter::ParseError;
#[cfg(test)]
use super::Statement;

/// Days from 1970-01-01 to a civil date (proleptic Gregorian), Howard Hinnant's
/// `days_from_civil`: enough to turn log timestamps into Unix time without a date crate.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let s = b.get(at..at + n)?;
    let mut v = 0i64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

/// Offset east of UTC, in seconds, of a zone as `log_timezone` prints it: `UTC`, `+01`,
/// `-05:30`, `+0530`, or one of the common abbreviations.
fn zone_offset_s(z: &str) -> Option<i64> {
    let b = z.as_bytes();
    if let Some(&sign @ (b'+' | b'-')) = b.first() {
        let h = digits(b, 1, 2)?;
        let rest = &b[3..];
        let m = match rest.len() {
            0 => 0,
            2 => digits(rest, 0, 2)?,
            3 if rest[0] == b':' => digits(rest, 1, 2)?,
            _ => return None,
        };
        let s = h * 3600 + m * 60;
        return Some(if sign == b'-' { -s } else { s });
    }
    let h = match z {
        "UTC" | "GMT" | "Z" | "UCT" | "WET" => 0,
        "CET" | "WEST" | "BST" | "MET" => 1,
        "CEST" | "EET" | "SAST" | "MEST" => 2,
        "EEST" | "MSK" => 3,
        "JST" | "KST" => 9,
        "AEST" => 10,
        "AEDT" => 11,
        "NZST" => 12,
        "NZDT" => 13,
        "AST" | "EDT" => -4,
        "EST" | "CDT" => -5,
        "CST" | "MDT" => -6,
        "MST" | "PDT" => -7,
        "PST" => -8,
        _ => return None,
    };
    Some(h * 3600)
}

/// Parses `2026-11-29 09:40:01[.123] UTC` (`%m`, `%t`, csvlog's and jsonlog's `log_time`)
/// into Unix microseconds and the number of bytes it used. The zone is optional (then UTC);
/// a zone this does not know makes the whole timestamp unknown rather than wrong.
pub(crate) fn parse_timestamp(s: &str) -> Option<(i64, usize)> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (h, mi, sec) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 24 || mi > 59 || sec > 60 {
        return None;
    }
    let mut at = 19;
    let mut us = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let mut scale = 100_000;
        while let Some(c) = b.get(at).filter(|c| c.is_ascii_digit()) {
            us += i64::from(c - b'0') * scale;
            scale /= 10;
            at += 1;
        }
    }
    let mut offset = 0;
    if b.get(at) == Some(&b' ') {
        // The zone is a name (`UTC`, `CET`) or a signed offset (`+01`, `-05:30`); what
        // follows it belongs to the rest of the line (`%t:%r:` puts a colon right after it).
        let zs = at + 1;
        let mut ze = zs;
        if matches!(b.get(zs), Some(b'+' | b'-')) {
            ze += 1;
            while ze < b.len() && ze - zs <= 4 && b[ze].is_ascii_digit() {
                ze += 1;
            }
            if b.get(ze) == Some(&b':') && digits(b, ze + 1, 2).is_some() {
                ze += 3;
            }
        } else {
            while ze < b.len() && b[ze].is_ascii_alphabetic() {
                ze += 1;
            }
        }
        if ze > zs {
            offset = zone_offset_s(&s[zs..ze])?;
            at = ze;
        }
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    Some((secs * 1_000_000 + us, at))
}

/// `0.327` (milliseconds, as `duration:` prints them) in microseconds.
pub(crate) fn parse_ms(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut us: u64 = int.parse::<u64>().ok()?.checked_mul(1000)?;
    let mut scale = 100;
    for c in frac.bytes() {
        if !c.is_ascii_digit() {
            return None;
        }
        us += u64::from(c - b'0') * scale;
        scale /= 10;
    }
    Some(us)
}

/// `$1 = '-4704', $2 = NULL, $3 = 'it''s'` (the `DETAIL:  parameters:` text, quotes doubled as
/// in SQL) into the values by position; `None` when it is not that shape.
pub(crate) fn parse_params(s: &str) -> Option<Vec<Option<String>>> {
    let mut out: Vec<Option<String>> = Vec::new();
    let mut rest = s.trim_end();
    while !rest.is_empty() {
        rest = rest.strip_prefix('$')?;
        let n_end = rest.find(|c: char| !c.is_ascii_digit())?;
        let n: usize = rest[..n_end].parse().ok()?;
        rest = rest[n_end..].strip_prefix(" = ")?;
        let value = if let Some(r) = rest.strip_prefix("NULL") {
            rest = r;
            None
        } else {
            let body = rest.strip_prefix('\'')?;
            let mut v = String::new();
            let mut it = body.char_indices();
            let end = loop {
                let (i, c) = it.next()?;
                if c == '\'' {
                    if body[i + 1..].starts_with('\'') {
                        v.push('\'');
                        it.next();
                    } else {
                        break i + 1;
                    }
                } else {
                    v.push(c);
                }
            };
            rest = &body[end..];
            Some(v)
        };
        if n == 0 || n > 65_535 {
            return None;
        }
        if out.len() < n {
            out.resize(n, None);
        }
        out[n - 1] = value;
        rest = match rest.strip_prefix(", ") {
            Some(r) => r,
            None if rest.is_empty() => rest,
            None => return None,
        };
    }
    Some(out)
}

/// The statement's first keyword, as `Stats::statements` counts it: `END` is `COMMIT`, `START
/// TRANSACTION` is `BEGIN`, `ABORT` is `ROLLBACK` (the SQL commands' own aliases).
pub(crate) fn kind(sql: &str) -> &'static str {
    let word = first_keyword(sql);
    // Compared without case and without allocating: this runs once per statement.
    let is = |k: &str| word.eq_ignore_ascii_case(k);
    if is("select") {
        "select"
    } else if is("insert") {
        "insert"
    } else if is("update") {
        "update"
    } else if is("delete") {
        "delete"
    } else if is("begin") || is("start") {
        "begin"
    } else if is("commit") || is("end") {
        "commit"
    } else if is("rollback") || is("abort") {
        "rollback"
    } else if is("copy") {
        "copy"
    } else {
        "other"
    }
}

/// The first word of a statement, past blanks, `--` and `/* */` comments and `(`.
fn first_keyword(sql: &str) -> &str {
    let mut s = sql;
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(r) = s.strip_prefix("--") {
            s = r.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.split_once("*/").map_or("", |(_, r)| r);
        } else {
            break;
        }
    }
    let end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    &s[..end]
}

/// Reads one line (through `\n`) as text, replacing bad UTF-8 (a log may carry any bytes a
/// client sent); `Ok(false)` at the end of input.
pub(crate) fn read_line(
    input: &mut impl std::io::BufRead,
    raw: &mut Vec<u8>,
    out: &mut String,
    line: u64,
) -> Result<bool, ParseError> {
    raw.clear();
    out.clear();
    let n = input.read_until(b'\n', raw).map_err(|e| ParseError {
        line: line + 1,
        column: None,
        message: format!("cannot read: {e}"),
    })?;
    if n == 0 {
        return Ok(false);
    }
    let mut end = raw.len();
    if raw[..end].ends_with(b"\n") {
        end -= 1;
    }
    if raw[..end].ends_with(b"\r") {
        end -= 1;
    }
    match std::str::from_utf8(&raw[..end]) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(&raw[..end])),
    }
    Ok(true)
}

/// Test helper: the statement with its parameters written in as literals, to compare an
/// extended-protocol statement with the SQL the client meant.
#[cfg(test)]
pub(crate) fn inline_params(st: &Statement) -> String {
    let mut sql = st.sql.clone();
    // Highest first, so `$1` does not eat the start of `$10`.
    for (i, p) in st.params.iter().enumerate().rev() {
        let lit = p.as_ref().map_or("NULL".to_owned(), |v| {
            format!("'{}'", v.replace('\'', "''"))
        });
        sql = sql.replace(&format!("${}", i + 1), &lit);
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        let base = days_from_civil(2026, 11, 29) * 86_400_000_000 + 9 * 3_600_000_000;
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        let t = |s: &str| parse_timestamp(s).map(|(t, _)| t - base);
        assert_eq!(t("2026-11-29 09:40:01.123 UTC"), Some(2_401_123_000));
        assert_eq!(t("2026-11-29 10:40:01.123 +01"), Some(2_401_123_000));
        assert_eq!(t("2026-11-29 04:10:01 -05:30"), Some(2_401_000_000));
        assert_eq!(t("2026-11-29 10:40:01 CET"), Some(2_401_000_000));
        assert_eq!(t("2026-11-29 09:40:01 Mars/Base"), None);
        let s = "2026-11-29 09:10:21 UTC::@:[12361]:LOG:";
        assert_eq!(
            parse_timestamp(s).map(|(_, n)| &s[n..]),
            Some("::@:[12361]:LOG:")
        );
        assert_eq!(parse_ms("0.327"), Some(327));
        assert_eq!(parse_ms("102.309"), Some(102_309));
    }

    #[test]
    fn params() {
        let p = parse_params("$1 = '-4704', $2 = NULL, $3 = 'it''s, $4 = x'").unwrap();
        assert_eq!(
            p,
            vec![Some("-4704".into()), None, Some("it's, $4 = x".into())]
        );
        assert_eq!(parse_params("$1 = 'open"), None);
        assert_eq!(parse_params("$1 = 5"), None);
    }

    #[test]
    fn kinds() {
        assert_eq!(kind("END;"), "commit");
        assert_eq!(kind("start transaction"), "begin");
        assert_eq!(kind(" /* x */ -- y\n(SELECT 1)"), "select");
        assert_eq!(kind("Copy t from stdin"), "copy");
        assert_eq!(kind("vacuum"), "other");
    }
}
