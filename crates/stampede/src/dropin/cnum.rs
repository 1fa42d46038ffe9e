//! The C library's number conversions as pgbench's option loop uses them (`strtol`, `strtoint`,
//! `atoi`, `atof`, `sscanf("%lu%c")`), so that an option value is accepted or refused exactly as
//! pgbench does: leading white space and a sign are accepted, a number followed by junk is a
//! prefix for `atof`/`atoi` and an error for `strtol`-based checks, out-of-range values saturate
//! (`strtol`) or wrap (`atoi`'s cast to `int`). Rust's `str::parse` refuses all of these, which
//! would turn `-R 100tps` (pgbench: 100) into an error.

/// C's `isspace` in the C locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strtol(s, &end, 10)` on a 64-bit `long`: the value (saturated on overflow), the byte offset
/// where parsing stopped (0 when no digits were found, as C sets `end = s`), and whether the
/// value overflowed (`errno == ERANGE`).
pub fn strtol(s: &str) -> (i64, usize, bool) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits_start = i;
    // Accumulate as a negative number: the negative range is the larger one.
    let mut acc: i64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = i64::from(b[i] - b'0');
        match acc.checked_mul(10).and_then(|v| v.checked_sub(d)) {
            Some(v) if !overflow => acc = v,
            _ => overflow = true,
        }
        i += 1;
    }
    if i == digits_start {
        return (0, 0, false);
    }
    let value = if overflow {
        if negative {
            i64::MIN
        } else {
            i64::MAX
        }
    } else if negative {
        acc
    } else {
        match acc.checked_neg() {
            Some(v) => v,
            None => {
                overflow = true;
                i64::MAX
            }
        }
    };
    (value, i, overflow)
}

/// PostgreSQL's `strtoint` (`src/common/string.c`): `strtol` whose result must fit an `int`
/// (else `ERANGE`), truncated to `int`.
pub fn strtoint(s: &str) -> (i32, usize, bool) {
    let (v, end, erange) = strtol(s);
    (v as i32, end, erange || v != i64::from(v as i32))
}

/// C's `atoi` as glibc implements it: `(int) strtol(s, NULL, 10)`; junk after the number is
/// ignored, no digits give 0, and a value beyond `int` keeps its low 32 bits.
pub fn atoi(s: &str) -> i32 {
    strtol(s).0 as i32
}

/// C's `atof` (`strtod` without the end pointer): the longest prefix that is a number (after
/// white space and a sign: decimal with an optional exponent, `0x` hexadecimal with an optional
/// `p` exponent, `inf`, `infinity`, `nan`, `nan(...)`), else 0.
pub fn atof(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let start = i;
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let lower = rest.to_ascii_lowercase();
    if lower.starts_with("inf") {
        return sign * f64::INFINITY;
    }
    if lower.starts_with("nan") {
        return f64::NAN;
    }
    if lower.starts_with("0x") {
        if let Some(v) = hex_float(&rest[2..]) {
            return sign * v;
        }
        // "0x" without hex digits: the "0" alone is the number.
        return sign * 0.0;
    }
    // Decimal: digits, an optional fraction, at least one digit in all, an optional exponent.
    let mut j = i;
    let int_start = j;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    let mut ndigits = j - int_start;
    if b.get(j) == Some(&b'.') {
        j += 1;
        let frac_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        ndigits += j - frac_start;
    }
    if ndigits == 0 {
        return 0.0;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let exp_start = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > exp_start {
            j = k;
        }
    }
    s[start..j].parse::<f64>().unwrap_or(0.0)
}

/// The part of a hexadecimal float after `0x`: hex digits, an optional fraction, an optional
/// binary exponent `p[+-]N`. None when there is no hex digit.
fn hex_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut mantissa = 0.0f64;
    let mut digits = 0;
    let mut scale = 0i32;
    while i < b.len() && b[i].is_ascii_hexdigit() {
        mantissa = mantissa * 16.0 + f64::from((b[i] as char).to_digit(16).unwrap());
        digits += 1;
        i += 1;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && b[i].is_ascii_hexdigit() {
            mantissa = mantissa * 16.0 + f64::from((b[i] as char).to_digit(16).unwrap());
            scale -= 4;
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'p' | b'P')) {
        let (e, end, _) = strtol(&s[i + 1..]);
        // "p" must be followed directly by an optionally signed number.
        if end > 0 && !is_c_space(b[i + 1]) {
            scale = scale.saturating_add(e.clamp(-100_000, 100_000) as i32);
        }
    }
    Some(mantissa * 2f64.powi(scale))
}

/// `sscanf(s, "%" SCNu64 "%c", &v, &c) == 1`: an unsigned 64-bit number (white space and a sign
/// allowed before it, a negative one wrapping as `strtoull` does) with nothing after it.
pub fn scan_u64_exact(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let digits_start = i;
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(b[i] - b'0')))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_start || i != b.len() {
        return None;
    }
    if overflow {
        return Some(u64::MAX);
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_like_c() {
        assert_eq!(strtol("42"), (42, 2, false));
        assert_eq!(strtol("  -7x"), (-7, 4, false));
        assert_eq!(strtol("+8 "), (8, 2, false));
        assert_eq!(strtol("three"), (0, 0, false));
        assert_eq!(strtol(""), (0, 0, false));
        assert_eq!(strtol("  "), (0, 0, false));
        assert_eq!(strtol("-"), (0, 0, false));
        assert_eq!(strtol("99999999999999999999"), (i64::MAX, 20, true));
        assert_eq!(strtol("-99999999999999999999"), (i64::MIN, 21, true));
        assert_eq!(strtol("-9223372036854775808"), (i64::MIN, 20, false));
        assert_eq!(strtol("9223372036854775808"), (i64::MAX, 19, true));
    }

    #[test]
    fn strtoint_and_atoi() {
        assert_eq!(strtoint("2147483647"), (i32::MAX, 10, false));
        assert!(strtoint("2147483648").2);
        assert!(strtoint("99999999999").2);
        assert_eq!(atoi("-10"), -10);
        assert_eq!(atoi("12abc"), 12);
        assert_eq!(atoi("abc"), 0);
        // glibc: (int) of a long keeps the low 32 bits.
        assert_eq!(atoi("4294967295"), -1);
    }

    #[test]
    fn atof_takes_the_longest_numeric_prefix() {
        assert_eq!(atof("0.5"), 0.5);
        assert_eq!(atof(" 100tps"), 100.0);
        assert_eq!(atof("1e3x"), 1000.0);
        assert_eq!(atof("1e"), 1.0);
        assert_eq!(atof(".5"), 0.5);
        assert_eq!(atof("5."), 5.0);
        assert_eq!(atof("-2.5e-1"), -0.25);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof("."), 0.0);
        assert_eq!(atof("0x10"), 16.0);
        assert_eq!(atof("0x1p-2"), 0.25);
        assert_eq!(atof("0x"), 0.0);
        assert_eq!(atof("-inf"), f64::NEG_INFINITY);
        assert_eq!(atof("Infinity"), f64::INFINITY);
        assert!(atof("nan").is_nan());
    }

    #[test]
    fn scan_u64_like_sscanf() {
        assert_eq!(scan_u64_exact("5432"), Some(5432));
        assert_eq!(scan_u64_exact(" 5432"), Some(5432));
        assert_eq!(scan_u64_exact("5432 "), None);
        assert_eq!(scan_u64_exact("one"), None);
        assert_eq!(scan_u64_exact(""), None);
        assert_eq!(scan_u64_exact("-1"), Some(u64::MAX));
        assert_eq!(scan_u64_exact("18446744073709551616"), Some(u64::MAX));
    }
}
