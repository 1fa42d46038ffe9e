//! A pgbench script file -> a compiled [`Script`]: pgbench.c's `ParseScript`,
//! `process_backslash_command`, `create_sql_command`, `parseQuery` and `CheckConditional`, with the
//! SQL splitting of psql's lexer (`src/fe_utils/psqlscan.l`) that pgbench uses.
//!
//! Owns: splitting a script into commands (SQL up to `;` at parenthesis depth 0, `\;` inside a
//! compound statement, a backslash that starts a meta-command), the meta-commands' arguments and
//! their checks, the merging of `\gset`/`\aset` into the preceding SQL command, the static check of
//! `\if`/`\elif`/`\else`/`\endif` (with the jump targets the interpreter uses), variable references
//! in SQL, and parse errors rendered with file, line, column and a caret as pgbench's
//! `syntax_error` does. Must not touch: evaluation (`expr`), the server, time.
//!
//! Hand-written: the SQL side only needs psqlscan's notion of where a command ends (quotes,
//! dollar quotes, comments, parentheses, `BEGIN ... END` bodies), not an SQL grammar, and the
//! meta-command side is a word splitter plus `expr`. A generated lexer would add a build step
//! for no gain and make pgbench's error positions harder to reproduce.
//!
//! Deliberate differences from pgbench, none changing what a valid script does: errors carry a
//! column (and the line with a caret) even where pgbench prints none; an unclosed `\if` is shown
//! at the `\if`; `:'var'` and `:"var"` in SQL are psql's quoted interpolations (pgbench sends them
//! verbatim, which the server rejects). An invalid variable name in `\set`/`\setshell` is, as in
//! pgbench, a run-time error (the command fails when it runs), so a drop-in pgbench exits as
//! pgbench does (status 2, the client aborted) rather than refusing the script.
//!
//! Layout: this file holds the compiled script (the command types), the parser's driver (SQL,
//! then a meta-command, until the end of the text) and the conditional checks; `lexer` is the
//! psqlscan.l side (where an SQL command ends), `sql` the SQL command and its variable
//! references, `meta` the backslash commands, `error` the error type and its positions.

mod error;
mod lexer;
mod meta;
mod sql;

use super::expr::Expr;
use super::vars::{Symbols, VarId};
use error::{message, Lines};
use lexer::{is_blank_sql, scan_sql, SqlState, SqlStop};
use meta::Meta;
use sql::{sql_first_line, sql_parts};

pub use error::ParseError;
pub(crate) use meta::atoi;
pub use sql::{SqlCommand, SqlPart};

/// pgbench's `MAX_ARGS`: words of a meta-command, and variables of an SQL command in extended and
/// prepared modes (the command itself counts as one).
pub const MAX_ARGS: usize = 256;

/// A compiled script.
#[derive(Clone, Debug)]
pub struct Script {
    /// The name pgbench prints: the file name, or `<builtin: ...>`.
    pub desc: String,
    pub commands: Vec<Command>,
}

/// One command of a script.
#[derive(Clone, Debug)]
pub struct Command {
    /// 1-based line of the command's first character.
    pub line: u32,
    /// pgbench's `first_line`: what `-r` prints for the command (a meta-command's whole text, an
    /// SQL command's first line).
    pub first_line: String,
    pub kind: CommandKind,
}

#[derive(Clone, Debug)]
pub enum CommandKind {
    Sql(SqlCommand),
    /// `\set var expr`. A `var` that is not a valid variable name compiles (pgbench finds it
    /// when the command runs: `set: invalid variable name`, the client aborts); `valid_name` says
    /// which.
    Set {
        var: VarId,
        expr: Expr,
        valid_name: bool,
    },
    /// `\sleep N [us|ms|s]`: the delay is `amount * unit_us` microseconds.
    Sleep {
        amount: SleepArg,
        unit_us: i64,
    },
    /// `\setshell var command [args]` (`valid_name` as for `Set`).
    SetShell {
        var: VarId,
        args: Vec<ShellArg>,
        valid_name: bool,
    },
    /// `\shell command [args]`
    Shell {
        args: Vec<ShellArg>,
    },
    /// `\if expr`: when false, continue at `on_false` (an `\elif` to evaluate, or the command after
    /// an `\else` or `\endif`).
    If {
        cond: Expr,
        on_false: usize,
    },
    /// `\elif expr`: reached after an executed branch, continue at `end` (after the `\endif`);
    /// reached from a false condition, evaluate and continue at the next command or `on_false`.
    Elif {
        cond: Expr,
        on_false: usize,
        end: usize,
    },
    /// `\else`: reached after an executed branch, continue at `end`.
    Else {
        end: usize,
    },
    Endif,
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

impl CommandKind {
    /// The meta-command's name, `None` for SQL.
    pub fn meta_name(&self) -> Option<&'static str> {
        Some(match self {
            CommandKind::Sql(_) => return None,
            CommandKind::Set { .. } => "set",
            CommandKind::Sleep { .. } => "sleep",
            CommandKind::SetShell { .. } => "setshell",
            CommandKind::Shell { .. } => "shell",
            CommandKind::If { .. } => "if",
            CommandKind::Elif { .. } => "elif",
            CommandKind::Else { .. } => "else",
            CommandKind::Endif => "endif",
            CommandKind::StartPipeline => "startpipeline",
            CommandKind::SyncPipeline => "syncpipeline",
            CommandKind::EndPipeline => "endpipeline",
        })
    }
}

/// The argument of `\sleep`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SleepArg {
    /// A number, as C's `atoi` reads it.
    Const(i64),
    /// `:name`, read with `atoi` at run time.
    Var(VarId),
}

/// A word of `\shell`/`\setshell`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellArg {
    /// A literal word (`::x` is the literal `:x`).
    Lit(String),
    /// `:name`: the variable's text.
    Var(VarId),
}

/// What happens to the rows of an SQL command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultVars {
    /// Discarded.
    None,
    /// `\gset [prefix]`: the last query must return one row; its columns become variables.
    Gset(String),
    /// `\aset [prefix]`: every query of the compound command stores its last row, if any.
    Aset(String),
}

struct Parser<'a, 's> {
    source: &'a str,
    text: &'a str,
    lines: Lines<'a>,
    symbols: &'s mut Symbols,
}

impl Parser<'_, '_> {
    fn error(&self, pos: usize, msg: String) -> ParseError {
        self.lines.error(self.source, pos, msg)
    }

    fn script(&mut self) -> Result<Vec<Command>, ParseError> {
        let mut commands: Vec<Command> = Vec::new();
        // Backslash position of each meta-command, for the conditional checks' messages.
        let mut positions: Vec<usize> = Vec::new();
        let mut st = SqlState::default();
        let mut pos = 0;
        let mut buf = String::new();
        loop {
            buf.clear();
            let (stop, next, first) = scan_sql(self.text, pos, &mut st, &mut buf);
            if !is_blank_sql(&buf) {
                let start = first.unwrap_or(pos);
                let text = std::mem::take(&mut buf);
                let parts = sql_parts(&text, self.symbols);
                commands.push(Command {
                    line: self.lines.line_of(start),
                    first_line: sql_first_line(&text),
                    kind: CommandKind::Sql(SqlCommand {
                        text,
                        parts,
                        result: ResultVars::None,
                    }),
                });
                positions.push(start);
            }
            pos = next;
            match stop {
                SqlStop::Semicolon => continue,
                SqlStop::Eof => break,
                SqlStop::Backslash => {
                    let bs = pos;
                    let (meta, after) = self.backslash(bs)?;
                    pos = after;
                    let Some((meta, first_line)) = meta else {
                        continue;
                    };
                    let (is_gset, prefix) = match meta {
                        Meta::Gset(prefix) => (true, prefix),
                        Meta::Aset(prefix) => (false, prefix),
                        Meta::Command(kind) => {
                            commands.push(Command {
                                line: self.lines.line_of(bs),
                                first_line,
                                kind,
                            });
                            positions.push(bs);
                            continue;
                        }
                    };
                    // \gset and \aset merge into the preceding command, which must be SQL
                    // without one already (pgbench reports both as \gset).
                    match commands.last_mut() {
                        Some(Command {
                            kind: CommandKind::Sql(s),
                            ..
                        }) if s.result == ResultVars::None => {
                            s.result = if is_gset {
                                ResultVars::Gset(prefix)
                            } else {
                                ResultVars::Aset(prefix)
                            };
                        }
                        prev => {
                            // pgbench names the previous command only if it is a meta-command
                            // (an SQL command's first line is not set yet at that point).
                            let more = prev
                                .filter(|c| !matches!(c.kind, CommandKind::Sql(_)))
                                .map(|c| c.first_line.clone());
                            return Err(self.error(
                                bs,
                                message("\\gset must follow an SQL command", more.as_deref(), None),
                            ));
                        }
                    }
                }
            }
        }
        if commands.is_empty() {
            return Err(ParseError {
                source: self.source.to_string(),
                line: 0,
                column: 0,
                message: format!("empty command list for script \"{}\"", self.source),
                line_text: String::new(),
            });
        }
        self.conditionals(&mut commands, &positions)?;
        Ok(commands)
    }

    /// pgbench's `CheckConditional`, and the jump targets of each branch.
    fn conditionals(
        &self,
        commands: &mut [Command],
        positions: &[usize],
    ) -> Result<(), ParseError> {
        // Per open \if: the indexes of its branches (\if, \elif..., \else) and whether an \else
        // was seen.
        let mut stack: Vec<(Vec<usize>, bool)> = Vec::new();
        // pgbench's ConditionError: `condition error in script "desc" command N: msg`, N 1-based
        // (one past the last command for an \if left open); here at the faulty command's place.
        let condition_error = |at: usize, n: usize, msg: &str| {
            self.error(
                at,
                format!(
                    "condition error in script \"{}\" command {n}: {msg}",
                    self.source
                ),
            )
        };
        for i in 0..commands.len() {
            let fail = |msg: &str| condition_error(positions[i], i + 1, msg);
            match commands[i].kind {
                CommandKind::If { .. } => stack.push((vec![i], false)),
                CommandKind::Elif { .. } => match stack.last_mut() {
                    None => return Err(fail("\\elif without matching \\if")),
                    Some((_, true)) => return Err(fail("\\elif after \\else")),
                    Some((b, false)) => b.push(i),
                },
                CommandKind::Else { .. } => match stack.last_mut() {
                    None => return Err(fail("\\else without matching \\if")),
                    Some((_, true)) => return Err(fail("\\else after \\else")),
                    Some((b, seen)) => {
                        b.push(i);
                        *seen = true;
                    }
                },
                CommandKind::Endif => {
                    let Some((branches, _)) = stack.pop() else {
                        return Err(fail("\\endif without matching \\if"));
                    };
                    let after = i + 1;
                    for (k, &b) in branches.iter().enumerate() {
                        let next = branches.get(k + 1).copied();
                        // Where a false condition goes: the next \elif (to evaluate), past the
                        // \else, or past the \endif.
                        let on_false_target = match next {
                            Some(n) if matches!(commands[n].kind, CommandKind::Elif { .. }) => n,
                            Some(n) => n + 1,
                            None => after,
                        };
                        match &mut commands[b].kind {
                            CommandKind::If { on_false, .. } => *on_false = on_false_target,
                            CommandKind::Elif { on_false, end, .. } => {
                                *on_false = on_false_target;
                                *end = after;
                            }
                            CommandKind::Else { end } => *end = after,
                            _ => unreachable!(),
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some((branches, _)) = stack.last() {
            return Err(condition_error(
                positions[branches[0]],
                commands.len() + 1,
                "\\if without matching \\endif",
            ));
        }
        Ok(())
    }
}

impl Script {
    /// Parse and compile a script. `source` names it in error messages (the file name as given
    /// to `-f`). Variables are resolved into `symbols`, shared by all scripts of a run.
    pub fn parse(source: &str, text: &str, symbols: &mut Symbols) -> Result<Script, ParseError> {
        let mut p = Parser {
            source,
            text,
            lines: Lines::new(text),
            symbols,
        };
        let commands = p.script()?;
        Ok(Script {
            desc: source.to_string(),
            commands,
        })
    }

    /// The statement texts as `-r` prints them, one per command.
    pub fn statements(&self) -> Vec<String> {
        self.commands.iter().map(|c| c.first_line.clone()).collect()
    }

    /// Whether the script uses a pipeline (needs extended or prepared mode).
    pub fn uses_pipeline(&self) -> bool {
        self.commands
            .iter()
            .any(|c| matches!(c.kind, CommandKind::StartPipeline))
    }
}
