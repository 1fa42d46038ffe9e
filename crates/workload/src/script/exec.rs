//! Running a compiled script, without I/O: the meta-commands that need no server or clock
//! (`\set`, `\if`/`\elif`/`\else`/`\endif`, `\shell`, `\setshell`) execute here; SQL commands,
//! `\sleep` and the pipeline commands are handed to the caller as [`Action`]s. The execution part
//! (a `Workload` over `sut::Session`) drives an [`Interp`]; the tests drive it with a stub.
//!
//! Owns: pgbench's run-time semantics of meta-commands (pgbench.c `executeMetaCommand`,
//! `evaluateSleep`, `runShellCommand`, the conditional state machine of `advanceConnectionState`
//! flattened into precomputed jumps), the text of SQL commands in simple mode (`assignVariables`)
//! and their parameters in extended/prepared modes (`getQueryParams`), and storing `\gset` /
//! `\aset` results (`readCommandResponse`). Must not touch: the server, time, output (except
//! `debug()`'s stderr line, as pgbench).
//!
//! Conditionals: pgbench keeps a stack of branch states and skips commands one by one; here each
//! `\if`/`\elif` knows where a false condition continues and each `\elif`/`\else` where an executed
//! branch ends (computed by `parse`), which visits, evaluates and times exactly the commands
//! pgbench's state machine does.

use std::fmt;
use std::io::Read;
use std::process::{Command as Process, Stdio};

use sut::Dialect;

use crate::random::Rng;
use crate::StatementTimer;

use super::expr::{eval, EvalCtx, Expr};
use super::parse::{atoi, CommandKind, Script, ShellArg, SleepArg, SqlCommand, SqlPart};
use super::vars::{valid_variable_name, Symbols, Value, Vars};

/// pgbench's `SHELL_COMMAND_SIZE`.
pub const SHELL_COMMAND_SIZE: usize = 256;

/// A run-time failure of a script's command: pgbench logs it and aborts the client (the engine
/// counts it as a failure of kind "other").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    /// Index of the command in the script.
    pub command: usize,
    pub message: String,
    /// The value was computed but could not be stored (`\set` into an invalid name): pgbench then
    /// says "assignment of meta-command failed" instead of "evaluation of meta-command failed".
    pub assignment: bool,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (in command {} of the script)",
            self.message, self.command
        )
    }
}

impl std::error::Error for ScriptError {}

/// What the caller must do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Run SQL command `index` (see [`simple_sql`], [`params`], [`store_results`]).
    Sql(usize),
    /// `\sleep`: wait this many microseconds (nothing when not positive), then continue.
    Sleep {
        index: usize,
        micros: i64,
    },
    StartPipeline(usize),
    SyncPipeline(usize),
    EndPipeline(usize),
    /// The end of the script.
    Done,
}

/// A meta-command as pgbench's `--debug` shows it (`executeMetaCommand`: its argv, where the
/// expression of `\set`, `\if` and `\elif` is not a word); `None` for SQL.
fn debug_words(cmd: &super::parse::Command, vars: &Vars) -> Option<String> {
    Some(match &cmd.kind {
        CommandKind::Sql(_) => return None,
        CommandKind::Set { var, .. } => format!("set {}", vars.name(*var)),
        CommandKind::If { .. } => "if".into(),
        CommandKind::Elif { .. } => "elif".into(),
        _ => cmd.first_line.trim_start_matches('\\').to_string(),
    })
}

/// A statement timer that does nothing (tests, or `-r` off).
pub struct NoTimer;

impl StatementTimer for NoTimer {
    fn start(&mut self) {}
    fn end(&mut self, _index: usize, _ok: bool) {}
}

/// The position of a client in a script.
#[derive(Clone, Debug, Default)]
pub struct Interp {
    pc: usize,
    /// The last jump landed on an `\elif` whose condition must be evaluated.
    eval_elif: bool,
    /// pgbench's `--debug`: before each meta-command, this line's start (`pgbench: debug:
    /// client N executing \`), then the command as pgbench's argv shows it.
    pub debug: Option<String>,
}

impl Interp {
    pub fn new() -> Interp {
        Interp::default()
    }

    /// Back to the first command (a new transaction, or a retry).
    pub fn restart(&mut self) {
        self.pc = 0;
        self.eval_elif = false;
    }

    /// Execute meta-commands until something needs the caller. `script_no` is only for
    /// `debug()`'s message.
    pub fn next(
        &mut self,
        script: &Script,
        script_no: usize,
        vars: &mut Vars,
        rng: &mut Rng,
        timer: &mut dyn StatementTimer,
    ) -> Result<Action, ScriptError> {
        loop {
            let i = self.pc;
            let Some(cmd) = script.commands.get(i) else {
                return Ok(Action::Done);
            };
            let fail = |message: String| ScriptError {
                command: i,
                message,
                assignment: false,
            };
            if let Some(d) = &self.debug {
                if let Some(words) = debug_words(cmd, vars) {
                    eprintln!("{d}{words}");
                }
            }
            let jump = |me: &mut Interp, target: usize| {
                me.pc = target;
                me.eval_elif = matches!(
                    script.commands.get(target).map(|c| &c.kind),
                    Some(CommandKind::Elif { .. })
                );
            };
            match &cmd.kind {
                CommandKind::Sql(_) => {
                    self.pc += 1;
                    return Ok(Action::Sql(i));
                }
                CommandKind::StartPipeline => {
                    self.pc += 1;
                    return Ok(Action::StartPipeline(i));
                }
                CommandKind::SyncPipeline => {
                    self.pc += 1;
                    return Ok(Action::SyncPipeline(i));
                }
                CommandKind::EndPipeline => {
                    self.pc += 1;
                    return Ok(Action::EndPipeline(i));
                }
                CommandKind::Sleep { amount, unit_us } => {
                    let n = match amount {
                        SleepArg::Const(n) => *n,
                        SleepArg::Var(id) => {
                            let name = vars.name(*id).to_string();
                            let Some(t) = vars.text(*id) else {
                                return Err(fail(format!("sleep: undefined variable \"{name}\"")));
                            };
                            let n = atoi(t);
                            if n == 0 && !t.starts_with(|c: char| c.is_ascii_digit()) {
                                return Err(fail(format!(
                                    "sleep: invalid sleep time \"{t}\" for variable \"{name}\""
                                )));
                            }
                            n
                        }
                    };
                    self.pc += 1;
                    return Ok(Action::Sleep {
                        index: i,
                        micros: n.saturating_mul(*unit_us),
                    });
                }
                CommandKind::Set {
                    var,
                    expr,
                    valid_name,
                } => {
                    let v = timed_eval(expr, vars, rng, timer, script_no, i).map_err(fail)?;
                    if !valid_name {
                        // pgbench's putVariableValue -> lookupCreateVariable.
                        return Err(ScriptError {
                            assignment: true,
                            ..fail(invalid_name("set", vars.name(*var)))
                        });
                    }
                    vars.set_value(*var, v);
                    self.pc += 1;
                }
                CommandKind::Elif { end, .. } if !self.eval_elif => {
                    // After an executed branch: no evaluation, on to the \endif's successor.
                    timer.start();
                    timer.end(i, true);
                    jump(self, *end);
                }
                // An `\elif` reached by a false condition's jump evaluates as an `\if` (no `\if`
                // finds `eval_elif` set: only a jump onto an `\elif` sets it).
                CommandKind::If { cond, on_false } | CommandKind::Elif { cond, on_false, .. } => {
                    self.eval_elif = false;
                    if timed_eval(cond, vars, rng, timer, script_no, i)
                        .map_err(fail)?
                        .truth()
                    {
                        self.pc += 1;
                    } else {
                        jump(self, *on_false);
                    }
                }
                CommandKind::Else { end } => {
                    // Only reached at the end of an executed branch (a false condition jumps
                    // past it).
                    timer.start();
                    timer.end(i, true);
                    jump(self, *end);
                }
                CommandKind::Endif => {
                    timer.start();
                    timer.end(i, true);
                    self.pc += 1;
                }
                CommandKind::Shell { args } => {
                    timer.start();
                    let r = run_shell(args, vars, None).map_err(fail);
                    timer.end(i, r.is_ok());
                    r?;
                    self.pc += 1;
                }
                CommandKind::SetShell {
                    var,
                    args,
                    valid_name,
                } => {
                    timer.start();
                    let r = run_shell(args, vars, Some((*var, *valid_name))).map_err(fail);
                    timer.end(i, r.is_ok());
                    r?;
                    self.pc += 1;
                }
            }
        }
    }
}

/// Evaluate the expression of command `command` (`\set`, `\if`, `\elif`), timed for `-r` as
/// pgbench times a meta-command: the evaluation only.
fn timed_eval(
    expr: &Expr,
    vars: &mut Vars,
    rng: &mut Rng,
    timer: &mut dyn StatementTimer,
    script: usize,
    command: usize,
) -> Result<Value, String> {
    timer.start();
    let r = eval(
        expr,
        &mut EvalCtx {
            vars,
            rng,
            script,
            command,
        },
    );
    timer.end(command, r.is_ok());
    r.map_err(|e| e.0)
}

/// pgbench's `runShellCommand`: the words joined by spaces (`:var` replaced by the variable's
/// text) run by the shell; with `var`, the first line of its output must be an integer.
fn run_shell(
    args: &[ShellArg],
    vars: &mut Vars,
    var: Option<(super::vars::VarId, bool)>,
) -> Result<(), String> {
    let argv0 = match &args[0] {
        ShellArg::Lit(s) => s.clone(),
        ShellArg::Var(id) => format!(":{}", vars.name(*id)),
    };
    let mut command = String::new();
    for (i, a) in args.iter().enumerate() {
        let arg = match a {
            ShellArg::Lit(s) => s.clone(),
            ShellArg::Var(id) => {
                let name = vars.name(*id).to_string();
                vars.text(*id)
                    .ok_or_else(|| format!("{argv0}: undefined variable \":{name}\""))?
                    .to_string()
            }
        };
        if command.len() + arg.len() + usize::from(i > 0) >= SHELL_COMMAND_SIZE - 1 {
            return Err(format!("{argv0}: shell command is too long"));
        }
        if i > 0 {
            command.push(' ');
        }
        command.push_str(&arg);
    }
    let Some((var, valid_name)) = var else {
        let ok = Process::new("/bin/sh")
            .arg("-c")
            .arg(&command)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("{argv0}: could not launch shell command"));
        }
        return Ok(());
    };
    let mut child = Process::new("/bin/sh")
        .arg("-c")
        .arg(&command)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|_| format!("{argv0}: could not launch shell command"))?;
    let mut out = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        let _ = so.read_to_end(&mut out);
    }
    let _ = child.wait();
    // fgets(res, 64): the first line, at most 63 bytes, newline included.
    let mut line: Vec<u8> = Vec::new();
    for &c in out.iter().take(63) {
        line.push(c);
        if c == b'\n' {
            break;
        }
    }
    if line.is_empty() {
        return Err(format!("{argv0}: could not read result of shell command"));
    }
    let res = String::from_utf8_lossy(&line).into_owned();
    // (int) strtol(res, &endptr, 10), then only white space may follow.
    let t = res.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (neg, d) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let ndig = d.bytes().take_while(|c| c.is_ascii_digit()).count();
    let rest = if ndig == 0 { res.as_str() } else { &d[ndig..] };
    if !rest
        .trim_start_matches(|c: char| c.is_ascii_whitespace())
        .is_empty()
    {
        return Err(format!(
            "{argv0}: shell command must return an integer (not \"{res}\")"
        ));
    }
    let mut v: i64 = 0;
    for c in d[..ndig].bytes() {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    let v = if neg { -v } else { v };
    if !valid_name {
        // pgbench's putVariableInt -> lookupCreateVariable.
        return Err(invalid_name("setshell", vars.name(var)));
    }
    vars.set_value(var, Value::Int(v as i32 as i64));
    Ok(())
}

/// pgbench's `lookupCreateVariable` message for a name that cannot be a variable.
fn invalid_name(context: &str, name: &str) -> String {
    format!("{context}: invalid variable name: \"{name}\"")
}

/// psql's quoting of `:'name'` (`PQescapeLiteral`): quotes doubled; with backslashes, an `E''`
/// literal with the backslashes doubled.
fn push_literal(out: &mut String, s: &str) {
    if s.contains('\\') {
        out.push_str(" E'");
    } else {
        out.push('\'');
    }
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// A string literal for MySQL that means the same whether or not the server's sql_mode has
/// NO_BACKSLASH_ESCAPES: quotes doubled; a value with a backslash as a hex literal with a
/// character set introducer (`_utf8mb4 X'...'`), since `\` is an escape in one mode and a
/// character in the other.
fn push_literal_mysql(out: &mut String, s: &str) {
    if s.contains('\\') {
        out.push_str("_utf8mb4 X'");
        for b in s.bytes() {
            let _ = fmt::Write::write_fmt(out, format_args!("{b:02X}"));
        }
        out.push('\'');
        return;
    }
    push_quoted(out, s, '\'');
}

/// `s` in `q` quotes, each `q` doubled: psql's quoting of `:"name"` (`PQescapeIdentifier`),
/// MySQL's of identifiers (backticks) and plain literals.
fn push_quoted(out: &mut String, s: &str, q: char) {
    out.push(q);
    for c in s.chars() {
        if c == q {
            out.push(q);
        }
        out.push(c);
    }
    out.push(q);
}

/// Simple mode: the command's text with each defined variable's text substituted, undefined
/// ones left as written (pgbench's `assignVariables`). `out` is cleared first.
pub fn simple_sql(cmd: &SqlCommand, vars: &mut Vars, out: &mut String) {
    simple_sql_in(cmd, vars, out, Dialect::Postgres)
}

/// [`simple_sql`] for a server of `dialect`: `:'name'` and `:"name"` are quoted in its SQL
/// (MySQL: [`push_literal_mysql`], identifiers in backticks).
pub fn simple_sql_in(cmd: &SqlCommand, vars: &mut Vars, out: &mut String, dialect: Dialect) {
    out.clear();
    for p in &cmd.parts {
        match p {
            SqlPart::Text(r) => out.push_str(&cmd.text[r.clone()]),
            SqlPart::Var { id, range } => match vars.text(*id) {
                Some(t) => out.push_str(t),
                None => out.push_str(&cmd.text[range.clone()]),
            },
            SqlPart::Literal { id, range } => match vars.text(*id) {
                Some(t) if dialect == Dialect::MySql => push_literal_mysql(out, t),
                Some(t) => push_literal(out, t),
                None => out.push_str(&cmd.text[range.clone()]),
            },
            SqlPart::Ident { id, range } => match vars.text(*id) {
                Some(t) if dialect == Dialect::MySql => push_quoted(out, t, '`'),
                Some(t) => push_quoted(out, t, '"'),
                None => out.push_str(&cmd.text[range.clone()]),
            },
        }
    }
}

/// A parameter of an extended/prepared statement, as pgbench sends it (text format).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    /// The variable is undefined: SQL NULL (pgbench passes a NULL pointer).
    Null,
    /// An integer value (sent as its decimal text).
    Int(i64),
    /// Any other value: its text (`NULL`, `true`, a `%.15g` double, or text as received).
    Text(&'a str),
}

/// Extended and prepared modes: the parameters of `$1..$n` for `cmd`, in order (pgbench's
/// `getQueryParams`). `out` is cleared first.
pub fn params<'v>(cmd: &SqlCommand, vars: &'v mut Vars, out: &mut Vec<Param<'v>>) {
    out.clear();
    // Format every needed value first (mutable), then borrow the texts.
    for p in &cmd.parts {
        if let SqlPart::Var { id, .. } | SqlPart::Literal { id, .. } | SqlPart::Ident { id, .. } = p
        {
            if vars.int_value(*id).is_none() {
                let _ = vars.text(*id);
            }
        }
    }
    let vars: &'v Vars = vars;
    for p in &cmd.parts {
        if let SqlPart::Var { id, .. } | SqlPart::Literal { id, .. } | SqlPart::Ident { id, .. } = p
        {
            out.push(match vars.int_value(*id) {
                Some(i) => Param::Int(i),
                None => match vars.formatted_text(*id) {
                    Some(t) => Param::Text(t),
                    None => Param::Null,
                },
            });
        }
    }
}

/// How a `\gset`/`\aset` result is stored.
#[derive(Debug, PartialEq, Eq)]
pub enum StoreError {
    /// `\gset`: the last query did not return exactly one row.
    RowCount(u64),
    /// A column name (with the prefix) is not a valid variable name.
    BadName(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::RowCount(n) => write!(f, "expected one row, got {n}"),
            StoreError::BadName(n) => write!(f, "error storing into variable {n}"),
        }
    }
}

/// Store one query's row into variables named `prefix` + column name (pgbench's
/// `readCommandResponse`). NULL columns are stored as empty text, as `PQgetvalue` returns them.
/// Names no script reads are only validated. `name_buf` is scratch space.
pub fn store_row<'a>(
    prefix: &str,
    columns: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    symbols: &Symbols,
    vars: &mut Vars,
    name_buf: &mut String,
) -> Result<(), StoreError> {
    for (col, value) in columns {
        name_buf.clear();
        name_buf.push_str(prefix);
        name_buf.push_str(col);
        match symbols.get(name_buf) {
            Some(id) => vars.set_text(id, value.unwrap_or("")),
            None if valid_variable_name(name_buf) => {}
            None => return Err(StoreError::BadName(name_buf.clone())),
        }
    }
    Ok(())
}
