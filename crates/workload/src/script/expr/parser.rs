//! exprparse.y: the grammar and its precedence table, the function table with its
//! argument-count rules, and the compiled tree it builds (variables interned into slots,
//! `a > b` rewritten as `b < a`, the optional seed of the hash functions filled in).

use super::lexer::{Lexer, Tok, Token};
use super::{Expr, ExprError, Func};
use crate::script::vars::{Symbols, Value, DEFAULT_SEED};

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
