//! pgbench's expression language (`\set`, `\if`, `\elif`): the lexer of `exprscan.l` (EXPR
//! state), the grammar of `exprparse.y`, and the evaluation of `pgbench.c` (`evaluateExpr`,
//! `evalLazyFunc`, `evalStandardFunc`, the random distributions and hash functions).
//!
//! Owns: tokens, the precedence table, the function table with its argument-count rules, the
//! compiled [`Expr`] tree (variables resolved to [`VarId`] slots, constants folded into nodes), and
//! evaluation against a client's [`Vars`] and random stream. Must not touch: scripts as a whole
//! (`parse.rs`), the server, time.
//!
//! Hand-written (no parser generator) because the grammar is small, because error positions must
//! be pgbench's (the caret goes under the last character of the token at which bison detects the
//! error), and because it keeps the crate free of build-time code generation. The parser is
//! precedence climbing over exprparse.y's `%left/%right/%nonassoc` table; the comments at each
//! rule say how it reproduces bison's resolution of that grammar.
//!
//! Evaluation allocates nothing on success: arguments of a call are evaluated into a fixed array
//! of [`MAX_FARGS`] values, as pgbench does.

use std::fmt;

use crate::random::Rng;

use super::vars::{
    format_g15, non_finite, range_ok, strtoint64, Symbols, Value, VarId, Vars, DEFAULT_SEED,
};

/// pgbench's `MAX_FARGS`: a non-lazy function call evaluates at most this many arguments.
pub const MAX_FARGS: usize = 16;
/// pgbench's `MIN_GAUSSIAN_PARAM`.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// pgbench's `MIN_ZIPFIAN_PARAM` and `MAX_ZIPFIAN_PARAM`.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// The functions and operators (pgbench's `PgBenchFunction`; operators are functions too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Abs,
    Least,
    Greatest,
    Debug,
    Pi,
    Sqrt,
    Ln,
    Exp,
    Int,
    Double,
    Random,
    RandomGaussian,
    RandomExponential,
    RandomZipfian,
    Pow,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
    Eq,
    Ne,
    Le,
    Lt,
    Is,
    Case,
    HashMurmur2,
    HashFnv1a,
    Permute,
}

/// How many arguments a function takes (exprparse.y `PGBENCH_NARGS_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arity {
    Fixed(usize),
    /// least, greatest: at least one.
    Variadic,
    /// hash functions: the value, and an optional seed (default `:default_seed`).
    Hash,
    /// permute: value, size, and an optional seed (default `:default_seed`).
    Permute,
}

/// exprparse.y's `PGBENCH_FUNCTIONS`, the callable part (names matched case-insensitively).
const FUNCTIONS: &[(&str, Arity, Func)] = &[
    ("mod", Arity::Fixed(2), Func::Mod),
    ("abs", Arity::Fixed(1), Func::Abs),
    ("least", Arity::Variadic, Func::Least),
    ("greatest", Arity::Variadic, Func::Greatest),
    ("debug", Arity::Fixed(1), Func::Debug),
    ("pi", Arity::Fixed(0), Func::Pi),
    ("sqrt", Arity::Fixed(1), Func::Sqrt),
    ("ln", Arity::Fixed(1), Func::Ln),
    ("exp", Arity::Fixed(1), Func::Exp),
    ("int", Arity::Fixed(1), Func::Int),
    ("double", Arity::Fixed(1), Func::Double),
    ("random", Arity::Fixed(2), Func::Random),
    ("random_gaussian", Arity::Fixed(3), Func::RandomGaussian),
    (
        "random_exponential",
        Arity::Fixed(3),
        Func::RandomExponential,
    ),
    ("random_zipfian", Arity::Fixed(3), Func::RandomZipfian),
    ("pow", Arity::Fixed(2), Func::Pow),
    ("power", Arity::Fixed(2), Func::Pow),
    ("hash", Arity::Hash, Func::HashMurmur2),
    ("hash_murmur2", Arity::Hash, Func::HashMurmur2),
    ("hash_fnv1a", Arity::Hash, Func::HashFnv1a),
    ("permute", Arity::Permute, Func::Permute),
];

/// A compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Const(Value),
    Var(VarId),
    /// A function or operator with its arguments. `Case` arguments are `[when1, then1, ...,
    /// else]` (the else is a NULL constant when absent).
    Call(Func, Box<[Expr]>),
}

/// An error found while compiling an expression, at a byte offset of the script text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    /// Offset of the character the caret goes under (pgbench: the last character of the token
    /// being read when the error was found).
    pub at: usize,
    pub message: String,
    /// pgbench's parenthesized detail (the function name, the bad constant, ...).
    pub more: Option<String>,
}

/// A run-time error of a meta-command (pgbench logs it and aborts the client: a script failure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

impl From<String> for EvalError {
    fn from(s: String) -> Self {
        EvalError(s)
    }
}

// ------------------------------------------------------------------------------------------
// Lexer (exprscan.l, EXPR state)
// ------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
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
struct Token {
    tok: Tok,
    /// Offset just past the token (past the newline for `Eol`).
    end: usize,
}

impl Token {
    /// Where pgbench puts the caret for an error detected at this token.
    fn caret(&self) -> usize {
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

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn err(at: usize, message: &str, more: Option<String>) -> ExprError {
        ExprError {
            at,
            message: message.to_string(),
            more,
        }
    }

    fn next(&mut self) -> Result<Token, ExprError> {
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

// ------------------------------------------------------------------------------------------
// Parser (exprparse.y)
// ------------------------------------------------------------------------------------------

/// Binding powers, from exprparse.y's precedence declarations (lowest first):
/// `%left OR`, `%left AND`, `%right NOT`, `%nonassoc IS ISNULL NOTNULL`,
/// `%nonassoc < > = <= >= <>`, `%left | # & << >> ~`, `%left + -`, `%left * / %`,
/// `%right UNARY`.
const BP_OR: u8 = 1;
const BP_AND: u8 = 2;
const BP_NOT: u8 = 3;
const BP_IS: u8 = 4;
const BP_CMP: u8 = 5;
const BP_BIT: u8 = 6;
const BP_ADD: u8 = 7;
const BP_MUL: u8 = 8;
const BP_UNARY: u8 = 9;

struct Parser<'a, 's> {
    lx: Lexer<'a>,
    la: Token,
    symbols: &'s mut Symbols,
}

/// Parse one expression starting at `pos` of `src`, up to and including the end of the line.
/// Returns the expression and the offset just past it (past its newline).
pub fn parse_expr(
    src: &str,
    pos: usize,
    symbols: &mut Symbols,
) -> Result<(Expr, usize), ExprError> {
    let mut lx = Lexer { src, pos };
    let la = lx.next()?;
    let mut p = Parser { lx, la, symbols };
    let e = p.expr(0)?;
    if p.la.tok != Tok::Eol {
        return Err(p.syntax_error());
    }
    Ok((e, p.la.end))
}

fn call(f: Func, args: Vec<Expr>) -> Expr {
    Expr::Call(f, args.into_boxed_slice())
}

impl Parser<'_, '_> {
    fn bump(&mut self) -> Result<Token, ExprError> {
        let next = self.lx.next()?;
        Ok(std::mem::replace(&mut self.la, next))
    }

    fn syntax_error(&self) -> ExprError {
        ExprError {
            at: self.la.caret(),
            message: "syntax error".into(),
            more: None,
        }
    }

    fn expect(&mut self, t: Tok) -> Result<Token, ExprError> {
        if self.la.tok == t {
            self.bump()
        } else {
            Err(self.syntax_error())
        }
    }

    /// Precedence climbing: operators binding at least as tightly as `min`.
    fn expr(&mut self, min: u8) -> Result<Expr, ExprError> {
        let mut lhs = self.prefix()?;
        // `%nonassoc` comparisons: `a < b < c` is a syntax error at the second operator (bison
        // meets `expr CMP expr . CMP` with equal precedence).
        let mut after_cmp = false;
        loop {
            let (bp, f) = match self.la.tok {
                Tok::Or => (BP_OR, Func::Or),
                Tok::And => (BP_AND, Func::And),
                Tok::Is | Tok::IsNull | Tok::NotNull => (BP_IS, Func::Is),
                Tok::Lt | Tok::Gt | Tok::Eq | Tok::Le | Tok::Ge | Tok::Ne => (BP_CMP, Func::Lt),
                Tok::Pipe => (BP_BIT, Func::BitOr),
                Tok::Hash => (BP_BIT, Func::BitXor),
                Tok::Amp => (BP_BIT, Func::BitAnd),
                Tok::Shl => (BP_BIT, Func::LShift),
                Tok::Shr => (BP_BIT, Func::RShift),
                Tok::Plus => (BP_ADD, Func::Add),
                Tok::Minus => (BP_ADD, Func::Sub),
                Tok::Star => (BP_MUL, Func::Mul),
                Tok::Slash => (BP_MUL, Func::Div),
                Tok::Percent => (BP_MUL, Func::Mod),
                _ => break,
            };
            if bp < min {
                break;
            }
            if bp == BP_IS {
                // `expr ISNULL`, `expr NOTNULL`, `expr IS [NOT] {NULL|TRUE|FALSE}`: these rules
                // end in a token, so nothing conflicts with what follows them.
                lhs = self.postfix_is(lhs)?;
                after_cmp = false;
                continue;
            }
            if bp == BP_CMP && after_cmp {
                return Err(self.syntax_error());
            }
            let op = self.bump()?;
            // Left associative: the right operand binds strictly tighter.
            let rhs = self.expr(bp + 1)?;
            lhs = match op.tok {
                // `a > b` is `b < a`, `a >= b` is `b <= a` (exprparse.y).
                Tok::Lt => call(Func::Lt, vec![lhs, rhs]),
                Tok::Gt => call(Func::Lt, vec![rhs, lhs]),
                Tok::Le => call(Func::Le, vec![lhs, rhs]),
                Tok::Ge => call(Func::Le, vec![rhs, lhs]),
                Tok::Eq => call(Func::Eq, vec![lhs, rhs]),
                Tok::Ne => call(Func::Ne, vec![lhs, rhs]),
                _ => call(f, vec![lhs, rhs]),
            };
            after_cmp = bp == BP_CMP;
        }
        Ok(lhs)
    }

    fn postfix_is(&mut self, lhs: Expr) -> Result<Expr, ExprError> {
        let is_null = |e: Expr| call(Func::Is, vec![e, Expr::Const(Value::Null)]);
        let op = self.bump()?;
        match op.tok {
            Tok::IsNull => Ok(is_null(lhs)),
            Tok::NotNull => Ok(call(Func::Not, vec![is_null(lhs)])),
            _ => {
                let negate = if self.la.tok == Tok::Not {
                    self.bump()?;
                    true
                } else {
                    false
                };
                let rhs = match self.la.tok {
                    Tok::Null => Value::Null,
                    Tok::Bool(b) => Value::Bool(b),
                    _ => return Err(self.syntax_error()),
                };
                self.bump()?;
                let e = call(Func::Is, vec![lhs, Expr::Const(rhs)]);
                Ok(if negate { call(Func::Not, vec![e]) } else { e })
            }
        }
    }

    fn prefix(&mut self) -> Result<Expr, ExprError> {
        match self.la.tok.clone() {
            Tok::LParen => {
                self.bump()?;
                let e = self.expr(0)?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            Tok::Plus => {
                self.bump()?;
                self.expr(BP_UNARY)
            }
            Tok::Minus => {
                self.bump()?;
                // `'-' MAXINT_PLUS_ONE_CONST`: the only way to write INT64_MIN.
                if self.la.tok == Tok::MaxIntPlusOne {
                    self.bump()?;
                    return Ok(Expr::Const(Value::Int(i64::MIN)));
                }
                // "-x" is "0 - x".
                let e = self.expr(BP_UNARY)?;
                Ok(call(Func::Sub, vec![Expr::Const(Value::Int(0)), e]))
            }
            Tok::Tilde => {
                self.bump()?;
                // `'~' expr` has no %prec: it takes '~''s precedence (with | # & << >>), so
                // `~1 + 2` is `~(1 + 2)` and `~1 | 2` is `(~1) | 2`. "~x" is "-1 # x".
                let e = self.expr(BP_BIT + 1)?;
                Ok(call(Func::BitXor, vec![Expr::Const(Value::Int(-1)), e]))
            }
            Tok::Not => {
                self.bump()?;
                // %right NOT: the operand takes everything binding at least as tightly.
                let e = self.expr(BP_NOT)?;
                Ok(call(Func::Not, vec![e]))
            }
            Tok::Null => {
                self.bump()?;
                Ok(Expr::Const(Value::Null))
            }
            Tok::Bool(b) => {
                self.bump()?;
                Ok(Expr::Const(Value::Bool(b)))
            }
            Tok::Int(i) => {
                self.bump()?;
                Ok(Expr::Const(Value::Int(i)))
            }
            Tok::Double(d) => {
                self.bump()?;
                Ok(Expr::Const(Value::Double(d)))
            }
            Tok::Var(name) => {
                self.bump()?;
                Ok(Expr::Var(self.symbols.intern(&name)))
            }
            Tok::Func(name) => self.function(&name),
            Tok::Case => self.case(),
            _ => Err(self.syntax_error()),
        }
    }

    fn function(&mut self, name: &str) -> Result<Expr, ExprError> {
        // `function: FUNCTION` is reduced (and the name looked up) before the '(' is read.
        let Some(&(fname, arity, f)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(ExprError {
                at: self.la.caret(),
                message: "unexpected function name".into(),
                more: Some(name.to_string()),
            });
        };
        self.bump()?;
        self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        if self.la.tok != Tok::RParen {
            loop {
                args.push(self.expr(0)?);
                if self.la.tok == Tok::Comma {
                    self.bump()?;
                } else {
                    break;
                }
            }
        }
        if self.la.tok != Tok::RParen {
            return Err(self.syntax_error());
        }
        // make_func runs when `')'` is shifted and the rule reduced: the caret is under ')'.
        let at = self.la.caret();
        let err = |msg: &str| ExprError {
            at,
            message: msg.into(),
            more: Some(fname.to_string()),
        };
        let n = args.len();
        let bad_count = match arity {
            Arity::Fixed(k) => k != n,
            Arity::Variadic => {
                if n == 0 {
                    return Err(err("at least one argument expected"));
                }
                false
            }
            Arity::Hash => !(1..=2).contains(&n),
            Arity::Permute => !(2..=3).contains(&n),
        };
        if bad_count {
            return Err(err("unexpected number of arguments"));
        }
        // The optional seed of the hash functions and permute is `:default_seed`.
        if (arity == Arity::Hash && n == 1) || (arity == Arity::Permute && n == 2) {
            args.push(Expr::Var(DEFAULT_SEED));
        }
        self.bump()?;
        Ok(call(f, args))
    }

    fn case(&mut self) -> Result<Expr, ExprError> {
        self.bump()?;
        let mut args = Vec::new();
        loop {
            self.expect(Tok::When)?;
            args.push(self.expr(0)?);
            self.expect(Tok::Then)?;
            args.push(self.expr(0)?);
            if self.la.tok != Tok::When {
                break;
            }
        }
        if self.la.tok == Tok::Else {
            self.bump()?;
            args.push(self.expr(0)?);
        } else {
            args.push(Expr::Const(Value::Null));
        }
        self.expect(Tok::End)?;
        Ok(call(Func::Case, args))
    }
}

// ------------------------------------------------------------------------------------------
// Evaluation (pgbench.c)
// ------------------------------------------------------------------------------------------

/// What an expression is evaluated against.
pub struct EvalCtx<'a> {
    pub vars: &'a mut Vars,
    /// The client's stream for `random*()` (pgbench `cs_func_rs`).
    pub rng: &'a mut Rng,
    /// For `debug()`'s message: the script number and the command index (0-based).
    pub script: usize,
    pub command: usize,
}

fn coerce_bool(v: Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(EvalError(format!(
            "cannot coerce {} to boolean",
            other.type_name()
        ))),
    }
}

/// `%f` for an error message (PostgreSQL's snprintf: `NaN`, `Infinity`).
fn c_f(d: f64) -> String {
    match non_finite(d) {
        Some(s) => s.into(),
        None => format!("{d:.6}"),
    }
}

/// pgbench's `coerceToInt`: doubles are rounded half to even (`rint`) and must fit.
fn coerce_int(v: Value) -> Result<i64, EvalError> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            // FLOAT8_FITS_IN_INT64
            if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                Err(EvalError(format!("double to int overflow for {}", c_f(r))))
            } else {
                Ok(r as i64)
            }
        }
        other => Err(EvalError(format!(
            "cannot coerce {} to int",
            other.type_name()
        ))),
    }
}

fn coerce_double(v: Value) -> Result<f64, EvalError> {
    match v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        other => Err(EvalError(format!(
            "cannot coerce {} to double",
            other.type_name()
        ))),
    }
}

fn err<T>(msg: &str) -> Result<T, EvalError> {
    Err(EvalError(msg.to_string()))
}

/// Evaluate an expression (pgbench `evaluateExpr`).
pub fn eval(e: &Expr, cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match e {
        Expr::Const(v) => Ok(*v),
        Expr::Var(id) => cx.vars.value(*id).map_err(EvalError),
        Expr::Call(f, args) => match f {
            Func::And | Func::Or | Func::Case => eval_lazy(*f, args, cx),
            _ => eval_standard(*f, args, cx),
        },
    }
}

/// pgbench's `evalLazyFunc`: AND, OR (NULL-propagating from the left), CASE.
fn eval_lazy(f: Func, args: &[Expr], cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    match f {
        Func::And | Func::Or => {
            let a1 = eval(&args[0], cx)?;
            if a1 == Value::Null {
                return Ok(Value::Null);
            }
            let b1 = coerce_bool(a1)?;
            if (f == Func::And) != b1 {
                // false AND x, true OR x
                return Ok(Value::Bool(b1));
            }
            let a2 = eval(&args[1], cx)?;
            if a2 == Value::Null {
                return Ok(Value::Null);
            }
            Ok(Value::Bool(coerce_bool(a2)?))
        }
        _ => {
            let mut i = 0;
            while i + 1 < args.len() {
                if eval(&args[i], cx)?.truth() {
                    return eval(&args[i + 1], cx);
                }
                i += 2;
            }
            eval(&args[args.len() - 1], cx)
        }
    }
}

/// pgbench's `evalStandardFunc`: every argument is evaluated (in order), then NULL propagates
/// (except through IS and debug), then the function runs.
fn eval_standard(f: Func, args: &[Expr], cx: &mut EvalCtx<'_>) -> Result<Value, EvalError> {
    let mut v = [Value::Null; MAX_FARGS];
    let mut has_null = false;
    for (slot, a) in v.iter_mut().zip(args.iter()) {
        *slot = eval(a, cx)?;
        has_null |= *slot == Value::Null;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError(format!(
            "too many function arguments, maximum is {MAX_FARGS}"
        )));
    }
    let n = args.len();
    if has_null && f != Func::Is && f != Func::Debug {
        return Ok(Value::Null);
    }
    match f {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Le
        | Func::Lt => {
            let (l, r) = (v[0], v[1]);
            let any_double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
            if any_double && f != Func::Mod {
                let (ld, rd) = (coerce_double(l)?, coerce_double(r)?);
                Ok(match f {
                    Func::Add => Value::Double(ld + rd),
                    Func::Sub => Value::Double(ld - rd),
                    Func::Mul => Value::Double(ld * rd),
                    Func::Div => Value::Double(ld / rd),
                    Func::Eq => Value::Bool(ld == rd),
                    Func::Ne => Value::Bool(ld != rd),
                    Func::Le => Value::Bool(ld <= rd),
                    _ => Value::Bool(ld < rd),
                })
            } else {
                let (li, ri) = (coerce_int(l)?, coerce_int(r)?);
                match f {
                    Func::Add => li
                        .checked_add(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint add out of range".into())),
                    Func::Sub => li
                        .checked_sub(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint sub out of range".into())),
                    Func::Mul => li
                        .checked_mul(ri)
                        .map(Value::Int)
                        .ok_or_else(|| EvalError("bigint mul out of range".into())),
                    Func::Eq => Ok(Value::Bool(li == ri)),
                    Func::Ne => Ok(Value::Bool(li != ri)),
                    Func::Le => Ok(Value::Bool(li <= ri)),
                    Func::Lt => Ok(Value::Bool(li < ri)),
                    _ => {
                        if ri == 0 {
                            return err("division by zero");
                        }
                        if ri == -1 {
                            // Special case of the -1 divisor (INT64_MIN / -1 overflows).
                            if f == Func::Div {
                                return li
                                    .checked_neg()
                                    .map(Value::Int)
                                    .ok_or_else(|| EvalError("bigint div out of range".into()));
                            }
                            return Ok(Value::Int(0));
                        }
                        // C truncating division and remainder, as Rust's.
                        Ok(Value::Int(if f == Func::Div { li / ri } else { li % ri }))
                    }
                }
            }
        }
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::LShift | Func::RShift => {
            let (li, ri) = (coerce_int(v[0])?, coerce_int(v[1])?);
            Ok(Value::Int(match f {
                Func::BitAnd => li & ri,
                Func::BitOr => li | ri,
                Func::BitXor => li ^ ri,
                // C shifts of int64 as x86-64 executes them: the count is taken modulo 64.
                Func::LShift => li.wrapping_shl(ri as u32),
                _ => li.wrapping_shr(ri as u32),
            }))
        }
        Func::Not => Ok(Value::Bool(!coerce_bool(v[0])?)),
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Abs => match v[0] {
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            // pgbench asserts a double here (a boolean is undefined behaviour there): an error.
            other => Ok(Value::Double(coerce_double(other)?.abs())),
        },
        Func::Debug => {
            let a = v[0];
            let mut s = format!("debug(script={},command={}): ", cx.script, cx.command + 1);
            match a {
                Value::Null => s.push_str("null"),
                Value::Bool(b) => s.push_str(if b { "boolean true" } else { "boolean false" }),
                Value::Int(i) => s.push_str(&format!("int {i}")),
                Value::Double(d) => {
                    s.push_str("double ");
                    format_g15(d, &mut s);
                }
            }
            eprintln!("{s}");
            Ok(a)
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = coerce_double(v[0])?;
            Ok(Value::Double(match f {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            }))
        }
        Func::Int => Ok(Value::Int(coerce_int(v[0])?)),
        Func::Least | Func::Greatest => {
            let least = f == Func::Least;
            if v[..n].iter().any(|x| matches!(x, Value::Double(_))) {
                let mut ext = coerce_double(v[0])?;
                for x in &v[1..n] {
                    let d = coerce_double(*x)?;
                    // C's Min/Max macros, NaN behaviour included.
                    ext = if least {
                        if ext < d {
                            ext
                        } else {
                            d
                        }
                    } else if ext > d {
                        ext
                    } else {
                        d
                    };
                }
                Ok(Value::Double(ext))
            } else {
                let mut ext = coerce_int(v[0])?;
                for x in &v[1..n] {
                    let i = coerce_int(*x)?;
                    ext = if least { ext.min(i) } else { ext.max(i) };
                }
                Ok(Value::Int(ext))
            }
        }
        Func::Random | Func::RandomGaussian | Func::RandomExponential | Func::RandomZipfian => {
            let (imin, imax) = (coerce_int(v[0])?, coerce_int(v[1])?);
            if imin > imax {
                return err("empty range given to random");
            }
            if imax
                .checked_sub(imin)
                .and_then(|d| d.checked_add(1))
                .is_none()
            {
                return err("random range is too large");
            }
            if f == Func::Random {
                return Ok(Value::Int(cx.rng.range(imin, imax)));
            }
            let param = coerce_double(v[2])?;
            match f {
                Func::RandomGaussian => {
                    if param < MIN_GAUSSIAN_PARAM {
                        return Err(EvalError(format!(
                            "gaussian parameter must be at least {} (not {})",
                            c_f(MIN_GAUSSIAN_PARAM),
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(gaussian_rand(cx.rng, imin, imax, param)))
                }
                Func::RandomZipfian => {
                    if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                        return Err(EvalError(format!(
                            "zipfian parameter must be in range [{MIN_ZIPFIAN_PARAM:.3}, \
                             {MAX_ZIPFIAN_PARAM:.0}] (not {})",
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(zipfian_rand(cx.rng, imin, imax, param)))
                }
                _ => {
                    if param <= 0.0 {
                        return Err(EvalError(format!(
                            "exponential parameter must be greater than zero (not {})",
                            c_f(param)
                        )));
                    }
                    Ok(Value::Int(exponential_rand(cx.rng, imin, imax, param)))
                }
            }
        }
        Func::Pow => Ok(Value::Double(
            coerce_double(v[0])?.powf(coerce_double(v[1])?),
        )),
        Func::Is => {
            // The right side is a NULL or boolean constant (grammar): same type and same value.
            Ok(Value::Bool(match (v[0], v[1]) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                _ => false,
            }))
        }
        Func::HashMurmur2 | Func::HashFnv1a => {
            let (val, seed) = (coerce_int(v[0])?, coerce_int(v[1])?);
            Ok(Value::Int(if f == Func::HashMurmur2 {
                hash_murmur2(val, seed as u64)
            } else {
                hash_fnv1a(val, seed as u64)
            }))
        }
        Func::Permute => {
            let (val, size, seed) = (coerce_int(v[0])?, coerce_int(v[1])?, coerce_int(v[2])?);
            if size <= 0 {
                return err("permute size parameter must be greater than zero");
            }
            Ok(Value::Int(permute(val, size, seed)))
        }
        Func::And | Func::Or | Func::Case => unreachable!("lazy functions"),
    }
}

// ------------------------------------------------------------------------------------------
// Distributions and hashes (pgbench.c, pg_prng.c)
// ------------------------------------------------------------------------------------------

/// pg_prng.c `pg_prng_double_normal`: Box-Muller on two uniforms in (0, 1], one output.
pub fn double_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.double();
    let u2 = 1.0 - rng.double();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
}

/// pgbench's `getExponentialRand`: the density at `max` is `exp(-parameter)` of the one at `min`.
pub fn exponential_rand(rng: &mut Rng, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

/// pgbench's `getGaussianRand`: a normal draw kept in `[-parameter, parameter)`, mapped onto the
/// range.
pub fn gaussian_rand(rng: &mut Rng, min: i64, max: i64, parameter: f64) -> i64 {
    let stdev = loop {
        let s = double_normal(rng);
        if !(s < -parameter || s >= parameter) {
            break s;
        }
    };
    let rand = (stdev + parameter) / (parameter * 2.0);
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

/// pgbench's `computeIterativeZipfian`: Devroye's rejection method (Non-Uniform Random Variate
/// Generation, p. 550-551), for s > 1.
fn iterative_zipfian(rng: &mut Rng, n: i64, s: f64) -> i64 {
    let b = 2.0f64.powf(s - 1.0);
    if n <= 1 {
        return 1;
    }
    loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        // reject if too large or out of bound
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return x as i64;
        }
    }
}

/// pgbench's `getZipfianRand`: zipfian on `[min, max]`, parameter in [1.001, 1000].
pub fn zipfian_rand(rng: &mut Rng, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    min.wrapping_sub(1)
        .wrapping_add(iterative_zipfian(rng, n, s))
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// pgbench's `getHashFnv1a`: FNV-1a over the 8 bytes of the value, low byte first.
pub fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed;
    let mut v = val;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        result ^= octet;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// pgbench's `getHashMurmur2`: MurmurHash64A of one 64-bit value.
pub fn hash_murmur2(val: i64, seed: u64) -> i64 {
    let mut result = seed ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench's `permute`: a pseudorandom permutation of `[0, size)` chosen by `seed`; six rounds of
/// an odd multiply, xor and rotate on the lower and upper overlapping halves, then a random
/// offset, with the random numbers from a PRNG seeded with `seed`.
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut state = Rng::from_seed(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    // Mask to work modulo the largest power of 2 not above size.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = state.uint64_range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}
