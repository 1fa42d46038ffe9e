//! # pgbench's script language
//!
//! Custom workloads written as pgbench scripts (`-f FILE`), compatible with pgbench as the
//! PostgreSQL 18 documentation defines the language: SQL commands with `:variable` references,
//! the meta-commands `\set \sleep \setshell \shell \if \elif \else \endif \gset \aset
//! \startpipeline \syncpipeline \endpipeline`, and the whole expression grammar with every
//! function and pgbench's random distributions.
//!
//! Owns everything under `script/`: parsing a script into a compiled [`Script`] ([`parse`]),
//! expressions ([`expr`]), variables ([`vars`]), the run-time semantics that need neither a
//! server nor a clock ([`exec`]), and running scripts on a server as a `Workload`
//! ([`workload`]: `-f` files and the builtins, which are scripts too). Must not touch: the PRNG
//! itself (`crate::random`), the engine, time; only [`workload`] talks to the session
//! (`target`).
//!
//! A script is compiled once: commands become an enum, expressions a tree of enums whose
//! variables are slot indexes into a per-client [`Vars`], SQL text is pre-split at its variable
//! references, and `\if` chains know their jump targets. Executing a transaction re-parses
//! nothing and, on its usual path, allocates nothing.
//!
//! Everything is hand-written after pgbench's sources (`src/bin/pgbench/pgbench.c`,
//! `exprparse.y`, `exprscan.l`, and psql's `src/fe_utils/psqlscan.l` for where an SQL command
//! ends); each module says why and cites the functions it follows.

pub mod exec;
pub mod expr;
pub mod parse;
pub mod vars;
pub mod workload;

pub use exec::{
    params, simple_sql, simple_sql_in, store_row, Action, Interp, NoTimer, Param, ScriptError,
};
pub use expr::{eval, EvalCtx, EvalError, Expr, Func};
pub use parse::{
    Command, CommandKind, ParseError, ResultVars, Script, ShellArg, SleepArg, SqlCommand, SqlPart,
};
pub use vars::{Symbols, Value, VarId, Vars};
pub use workload::{
    builtin_text, builtin_text_in, parse_define, ScriptClient, ScriptConfig, ScriptSet,
    ScriptWorkload, RECORD,
};

#[cfg(test)]
mod tests;
