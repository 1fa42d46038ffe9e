//! pgbench's expression language (`\set`, `\if`, `\elif`): the lexer of `exprscan.l` (EXPR
//! state), the grammar of `exprparse.y`, and the evaluation of `pgbench.c` (`evaluateExpr`,
//! `evalLazyFunc`, `evalStandardFunc`, the random distributions and hash functions).
//!
//! Owns: tokens, the precedence table, the function table with its argument-count rules, the
//! compiled [`Expr`] tree (variables resolved to [`VarId`] slots, constants folded into nodes), and
//! evaluation against a client's [`Vars`](super::vars::Vars) and random stream. Must not touch:
//! scripts as a whole (`parse`), the server, time.
//!
//! Hand-written (no parser generator) because the grammar is small, because error positions must
//! be pgbench's (the caret goes under the last character of the token at which bison detects the
//! error), and because it keeps the crate free of build-time code generation. The parser is
//! precedence climbing over exprparse.y's `%left/%right/%nonassoc` table; the comments at each
//! rule say how it reproduces bison's resolution of that grammar.
//!
//! Evaluation allocates nothing on success: arguments of a call are evaluated into a fixed array
//! of [`MAX_FARGS`] values, as pgbench does.
//!
//! Layout: this file holds the compiled form ([`Func`], [`Expr`]) and the errors; `lexer` is
//! exprscan.l, `parser` exprparse.y with the function table, `eval` pgbench.c's evaluation and
//! coercions, `functions` the random distributions, hashes and `permute` that `eval` calls.

mod eval;
mod functions;
mod lexer;
mod parser;

use std::fmt;

use super::vars::{Value, VarId};

pub use eval::{eval, EvalCtx, MAX_FARGS};
pub use functions::{
    double_normal, exponential_rand, gaussian_rand, hash_fnv1a, hash_murmur2, permute,
    zipfian_rand, MAX_ZIPFIAN_PARAM, MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM,
};
pub(crate) use lexer::{continuation_len, is_space};
pub use parser::parse_expr;

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
