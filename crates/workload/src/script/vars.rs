//! Script variables: names resolved to slots at compile time ([`Symbols`]), one store of values
//! per client ([`Vars`]), and pgbench's conversions between a variable's text and its value.
//!
//! pgbench keeps a variable either as a string (from `-D`, `\gset`, `\aset`, `\setshell`) or as a
//! typed value (from `\set`), and converts lazily both ways (pgbench.c `getVariable`,
//! `makeVariableValue`). The same happens here, per slot, with the slot's text buffer reused so
//! that steady-state execution does not allocate.
//!
//! Names: every name that any script of a run mentions (in an expression, an SQL command, `\set`,
//! `\sleep`, `\setshell`, `\shell`) gets a slot when the scripts are compiled. A name that no
//! script mentions can still be assigned at run time (`\gset` of an unreferenced column, `-D`); as
//! nothing can read it, it is validated (as pgbench does) and otherwise dropped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// A variable slot, valid for the [`Symbols`] that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(pub u32);

/// The automatic variables, pre-registered in every [`Symbols`] (pgbench.c `main`).
pub const SCALE: VarId = VarId(0);
pub const CLIENT_ID: VarId = VarId(1);
pub const RANDOM_SEED: VarId = VarId(2);
/// The seed of `hash()`/`permute()` when none is given (exprparse.y `make_func`).
pub const DEFAULT_SEED: VarId = VarId(3);

/// The names of a set of scripts, each with its slot.
#[derive(Clone, Debug)]
pub struct Symbols {
    names: Vec<String>,
    index: HashMap<String, VarId>,
}

impl Default for Symbols {
    fn default() -> Self {
        Symbols::new()
    }
}

impl Symbols {
    pub fn new() -> Symbols {
        let mut s = Symbols {
            names: Vec::new(),
            index: HashMap::new(),
        };
        for (name, id) in [
            ("scale", SCALE),
            ("client_id", CLIENT_ID),
            ("random_seed", RANDOM_SEED),
            ("default_seed", DEFAULT_SEED),
        ] {
            let got = s.intern(name);
            debug_assert_eq!(got, id);
        }
        s
    }

    /// The slot of `name`, created if new.
    pub fn intern(&mut self, name: &str) -> VarId {
        if let Some(id) = self.index.get(name) {
            return *id;
        }
        let id = VarId(self.names.len() as u32);
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), id);
        id
    }

    pub fn get(&self, name: &str) -> Option<VarId> {
        self.index.get(name).copied()
    }

    pub fn name(&self, id: VarId) -> &str {
        &self.names[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// pgbench's `valid_variable_name`: ASCII letters, `_` or any non-ASCII byte first; then also
/// digits.
pub fn valid_variable_name(name: &str) -> bool {
    let b = name.as_bytes();
    match b.first() {
        None => false,
        Some(&c) if c.is_ascii_digit() => false,
        Some(_) => b
            .iter()
            .all(|&c| c >= 0x80 || c.is_ascii_alphanumeric() || c == b'_'),
    }
}

/// A typed value (pgbench's `PgBenchValue`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Value {
    /// pgbench's `valueTypeName`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "int",
            Value::Double(_) => "double",
        }
    }

    /// pgbench's `valueTruth` (`\if`, `CASE WHEN`): NULL and zero are false.
    pub fn truth(&self) -> bool {
        match *self {
            Value::Null => false,
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Double(d) => d != 0.0,
        }
    }

    /// The text pgbench substitutes for the value (`getVariable`): `NULL`, `true`/`false`, the
    /// integer, or the double as `%.15g`.
    pub fn write_text(&self, out: &mut String) {
        match *self {
            Value::Null => out.push_str("NULL"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Double(d) => format_g15(d, out),
        }
    }
}

/// pgbench's `snprintf("%.15g", v)` (doubles with `DBL_DIG` = 15 significant digits). pgbench
/// links PostgreSQL's own `snprintf` (src/port/snprintf.c), which prints `NaN`, `Infinity` and
/// `-Infinity` where the C library would print `nan` or `inf`; finite values are C's `%g`.
pub fn format_g15(v: f64, out: &mut String) {
    const P: i32 = 15;
    if let Some(s) = non_finite(v) {
        out.push_str(s);
        return;
    }
    // %g: the exponent X is the one of the value rounded to P significant digits.
    let start = out.len();
    let _ = write!(out, "{:.*e}", (P - 1) as usize, v);
    let epos = out[start..]
        .find('e')
        .map(|p| start + p)
        .unwrap_or(out.len());
    let x: i32 = out[epos + 1..].parse().unwrap_or(0);
    if !(-4..P).contains(&x) {
        // Exponential: strip the mantissa's trailing zeros, exponent with sign and 2+ digits.
        out.truncate(epos);
        strip_fraction_zeros(out, start);
        out.push('e');
        out.push(if x < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", x.unsigned_abs());
    } else {
        out.truncate(start);
        let _ = write!(out, "{:.*}", (P - 1 - x) as usize, v);
        strip_fraction_zeros(out, start);
    }
}

/// src/port/snprintf.c's spelling of the non-finite doubles (for every float format).
pub(crate) fn non_finite(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("Infinity")
    } else if v == f64::NEG_INFINITY {
        Some("-Infinity")
    } else {
        None
    }
}

fn strip_fraction_zeros(out: &mut String, start: usize) {
    if out[start..].contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
}

/// pgbench's `is_an_int`: `^\s*[-+]?[0-9]*$` (an empty digit run passes; `strtoint64` then
/// rejects it).
fn is_an_int(s: &str) -> bool {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    t.bytes().all(|c| c.is_ascii_digit())
}

/// pgbench's `strtoint64`: optional surrounding white space, optional sign, digits; the errors
/// are pgbench's messages.
pub fn strtoint64(s: &str) -> Result<i64, String> {
    let ws = |c: char| c.is_ascii_whitespace() || c == '\x0b';
    let t = s.trim_matches(ws);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("invalid input syntax for type bigint: \"{s}\""));
    }
    // Accumulate negatively so that i64::MIN parses.
    let mut acc: i64 = 0;
    for c in digits.bytes() {
        acc = acc
            .checked_mul(10)
            .and_then(|a| a.checked_sub((c - b'0') as i64))
            .ok_or_else(|| format!("value \"{s}\" is out of range for type bigint"))?;
    }
    if neg {
        Ok(acc)
    } else {
        acc.checked_neg()
            .ok_or_else(|| format!("value \"{s}\" is out of range for type bigint"))
    }
}

/// pgbench's `strtodouble` (C `strtod` on the whole string, range errors rejected). Accepts what
/// `strtod` accepts in practice: leading white space, decimal notation, `inf`/`infinity`/`nan`,
/// and hexadecimal integers (`0x1f`).
pub fn strtodouble(s: &str) -> Option<f64> {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan" {
        f64::NAN
    } else if let Some(hex) = lower.strip_prefix("0x") {
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        hex.bytes().fold(0.0f64, |a, c| {
            a * 16.0 + (c as char).to_digit(16).unwrap() as f64
        })
    } else {
        // Only plain decimal notation is left (one sign was stripped above).
        if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            || !body
                .bytes()
                .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
            || !body.bytes().any(|c| c.is_ascii_digit())
        {
            return None;
        }
        let v: f64 = body.parse().ok()?;
        if !range_ok(body, v) {
            return None;
        }
        v
    };
    Some(if neg { -v } else { v })
}

/// `strtod` sets ERANGE on overflow and on underflow to zero or a subnormal.
pub(crate) fn range_ok(text: &str, v: f64) -> bool {
    if v.is_infinite() {
        return false;
    }
    if v == 0.0 {
        // Underflow unless every mantissa digit is zero.
        let mantissa = text.split(['e', 'E']).next().unwrap_or("");
        return !mantissa.bytes().any(|c| (b'1'..=b'9').contains(&c));
    }
    v.abs() >= f64::MIN_POSITIVE
}

/// pgbench's `makeVariableValue`: the value of a variable known only as text.
pub fn parse_text_value(name: &str, s: &str) -> Result<Value, String> {
    if s.is_empty() {
        return Err(format!("malformed variable \"{name}\" value: \"\""));
    }
    let prefix_of = |word: &str| s.len() <= word.len() && word[..s.len()].eq_ignore_ascii_case(s);
    if s.eq_ignore_ascii_case("null") {
        Ok(Value::Null)
    } else if prefix_of("true") || prefix_of("yes") || s.eq_ignore_ascii_case("on") {
        // Prefixes such as y, ye, t, tr are accepted, but "o" is neither on nor off.
        Ok(Value::Bool(true))
    } else if prefix_of("false")
        || prefix_of("no")
        || s.eq_ignore_ascii_case("off")
        || s.eq_ignore_ascii_case("of")
    {
        Ok(Value::Bool(false))
    } else if is_an_int(s) {
        strtoint64(s).map(Value::Int)
    } else {
        strtodouble(s)
            .map(Value::Double)
            .ok_or_else(|| format!("malformed variable \"{name}\" value: \"{s}\""))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Undefined,
    /// Known as a value; `text` holds its text form when `text_ok`.
    Value(Value),
    /// Known as text (`text`); the value is computed on first use.
    Text(Option<Value>),
}

#[derive(Clone, Debug)]
struct Slot {
    kind: Kind,
    text: String,
    text_ok: bool,
}

/// One client's variables.
#[derive(Clone, Debug)]
pub struct Vars {
    slots: Vec<Slot>,
    names: Arc<[String]>,
}

impl Vars {
    /// All variables undefined.
    pub fn new(symbols: &Symbols) -> Vars {
        Vars {
            slots: vec![
                Slot {
                    kind: Kind::Undefined,
                    text: String::new(),
                    text_ok: false,
                };
                symbols.len()
            ],
            names: symbols.names.clone().into(),
        }
    }

    pub fn name(&self, id: VarId) -> &str {
        &self.names[id.0 as usize]
    }

    pub fn is_defined(&self, id: VarId) -> bool {
        !matches!(self.slots[id.0 as usize].kind, Kind::Undefined)
    }

    /// Assign a value (`\set`).
    pub fn set_value(&mut self, id: VarId, v: Value) {
        let s = &mut self.slots[id.0 as usize];
        s.kind = Kind::Value(v);
        s.text_ok = false;
    }

    /// Assign text (`-D`, `\gset`, `\aset`, `\setshell`), reusing the slot's buffer.
    pub fn set_text(&mut self, id: VarId, text: &str) {
        let s = &mut self.slots[id.0 as usize];
        s.kind = Kind::Text(None);
        s.text.clear();
        s.text.push_str(text);
        s.text_ok = true;
    }

    /// Forget a value (used between tests; pgbench never undefines a variable).
    pub fn unset(&mut self, id: VarId) {
        let s = &mut self.slots[id.0 as usize];
        s.kind = Kind::Undefined;
        s.text_ok = false;
    }

    /// The value of a variable, for an expression (pgbench `evaluateExpr` on a variable):
    /// an error if it is undefined or its text is not a value.
    pub fn value(&mut self, id: VarId) -> Result<Value, String> {
        let name = &self.names[id.0 as usize];
        let s = &mut self.slots[id.0 as usize];
        match s.kind {
            Kind::Value(v) | Kind::Text(Some(v)) => Ok(v),
            Kind::Undefined => Err(format!("undefined variable \"{name}\"")),
            Kind::Text(None) => {
                let v = parse_text_value(name, &s.text)?;
                s.kind = Kind::Text(Some(v));
                Ok(v)
            }
        }
    }

    /// The value without converting or caching (for inspection); `None` if undefined.
    pub fn peek(&self, id: VarId) -> Option<Value> {
        match self.slots[id.0 as usize].kind {
            Kind::Value(v) | Kind::Text(Some(v)) => Some(v),
            Kind::Text(None) => parse_text_value(self.name(id), self.text_of(id)?).ok(),
            Kind::Undefined => None,
        }
    }

    fn text_of(&self, id: VarId) -> Option<&str> {
        let s = &self.slots[id.0 as usize];
        if s.text_ok {
            Some(&s.text)
        } else {
            None
        }
    }

    /// The text of a variable as pgbench substitutes it (`getVariable`); `None` if undefined.
    pub fn text(&mut self, id: VarId) -> Option<&str> {
        let s = &mut self.slots[id.0 as usize];
        match s.kind {
            Kind::Undefined => None,
            Kind::Text(_) => Some(&s.text),
            Kind::Value(v) => {
                if !s.text_ok {
                    s.text.clear();
                    v.write_text(&mut s.text);
                    s.text_ok = true;
                }
                Some(&s.text)
            }
        }
    }

    /// The text of a variable if it is available without formatting (text assigned, or already
    /// formatted by [`Vars::text`]); `None` if undefined or not yet formatted.
    pub fn formatted_text(&self, id: VarId) -> Option<&str> {
        let s = &self.slots[id.0 as usize];
        match s.kind {
            Kind::Undefined => None,
            Kind::Text(_) => Some(&s.text),
            Kind::Value(_) => s.text_ok.then_some(s.text.as_str()),
        }
    }

    /// The raw kind of a defined variable for parameter passing: an integer value is passed as
    /// such (no formatting needed); everything else as its text.
    pub fn int_value(&self, id: VarId) -> Option<i64> {
        match self.slots[id.0 as usize].kind {
            Kind::Value(Value::Int(i)) => Some(i),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64) -> String {
        let mut s = String::new();
        format_g15(v, &mut s);
        s
    }

    #[test]
    fn g15_matches_printf() {
        // Expected strings are pgbench's snprintf("%.15g").
        assert_eq!(g(0.0), "0");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(1.0), "1");
        assert_eq!(g(0.1 + 0.2), "0.3");
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(-2.25), "-2.25");
        assert_eq!(g(std::f64::consts::PI), "3.14159265358979");
        assert_eq!(g(1e15), "1e+15");
        assert_eq!(g(123456789012345.0), "123456789012345");
        assert_eq!(g(1e-4), "0.0001");
        assert_eq!(g(1e-5), "1e-05");
        assert_eq!(g(1.23456789e-7), "1.23456789e-07");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(9.999999999999999e14), "1e+15");
        // PostgreSQL's snprintf, not the C library's.
        assert_eq!(g(f64::INFINITY), "Infinity");
        assert_eq!(g(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(g(f64::NAN), "NaN");
        assert_eq!(g(-f64::NAN), "NaN");
        assert_eq!(g(2.5e-308), "2.5e-308");
    }

    #[test]
    fn text_values_convert_as_pgbench() {
        let p = |s: &str| parse_text_value("v", s);
        assert_eq!(p("null"), Ok(Value::Null));
        assert_eq!(p("NULL"), Ok(Value::Null));
        for t in ["t", "tr", "TRUE", "y", "yes", "on", "ON"] {
            assert_eq!(p(t), Ok(Value::Bool(true)), "{t}");
        }
        for f in ["f", "fal", "false", "n", "no", "off", "of"] {
            assert_eq!(p(f), Ok(Value::Bool(false)), "{f}");
        }
        assert!(p("o").is_err());
        assert!(p("truex").is_err());
        assert_eq!(p("42"), Ok(Value::Int(42)));
        assert_eq!(p(" -42"), Ok(Value::Int(-42)));
        assert_eq!(p("+7"), Ok(Value::Int(7)));
        assert_eq!(p("-9223372036854775808"), Ok(Value::Int(i64::MIN)));
        assert_eq!(
            p("9223372036854775808"),
            Err("value \"9223372036854775808\" is out of range for type bigint".into())
        );
        assert_eq!(
            p("-"),
            Err("invalid input syntax for type bigint: \"-\"".into())
        );
        assert_eq!(p("1.5"), Ok(Value::Double(1.5)));
        assert_eq!(p("1e3"), Ok(Value::Double(1000.0)));
        assert_eq!(p(".5"), Ok(Value::Double(0.5)));
        assert_eq!(p("0x10"), Ok(Value::Double(16.0)));
        assert!(matches!(p("inf"), Ok(Value::Double(d)) if d.is_infinite()));
        assert_eq!(
            p("1e400"),
            Err("malformed variable \"v\" value: \"1e400\"".into())
        );
        assert_eq!(
            p("abc"),
            Err("malformed variable \"v\" value: \"abc\"".into())
        );
        assert_eq!(p(""), Err("malformed variable \"v\" value: \"\"".into()));
        assert_eq!(
            p("1.5 "),
            Err("malformed variable \"v\" value: \"1.5 \"".into())
        );
    }

    #[test]
    fn names_and_slots() {
        let mut s = Symbols::new();
        assert_eq!(s.get("scale"), Some(SCALE));
        assert_eq!(s.get("default_seed"), Some(DEFAULT_SEED));
        let a = s.intern("aid");
        assert_eq!(s.intern("aid"), a);
        assert_eq!(s.name(a), "aid");
        assert!(valid_variable_name("aid"));
        assert!(valid_variable_name("_x1"));
        assert!(valid_variable_name("été"));
        assert!(!valid_variable_name("1x"));
        assert!(!valid_variable_name("?column?"));
        assert!(!valid_variable_name(""));

        let mut v = Vars::new(&s);
        assert_eq!(v.value(a), Err("undefined variable \"aid\"".into()));
        assert_eq!(v.text(a), None);
        v.set_value(a, Value::Double(0.5));
        assert_eq!(v.text(a), Some("0.5"));
        v.set_text(a, "0012");
        assert_eq!(v.value(a), Ok(Value::Int(12)));
        // Text from the server is substituted verbatim, not re-formatted.
        assert_eq!(v.text(a), Some("0012"));
        v.set_value(a, Value::Null);
        assert_eq!(v.text(a), Some("NULL"));
    }
}
