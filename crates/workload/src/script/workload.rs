//! Running pgbench scripts against a server: [`ScriptWorkload`], the [`Workload`] of `-f` files and
//! of the builtins (pgbench's builtins are scripts too: `pgbench --show-script`).
//!
//! Owns: the set of scripts of a run with their weights ([`ScriptSet`]), the run's starting
//! variables (`-D NAME=VALUE`, and pgbench's automatic `:scale`, `:client_id`, `:random_seed`,
//! `:default_seed`, each set only when `-D` did not define it: pgbench.c `main`), registering each
//! SQL command on a session per query mode, and the I/O side of pgbench's client state machine
//! (`advanceConnectionState`): sending SQL commands (`sendCommand`), reading and storing their
//! results (`readCommandResponse`: `\gset`, `\aset`), pipelines (`\startpipeline`,
//! `\syncpipeline`, `\endpipeline`), `\sleep` through the engine's [`crate::Sleeper`], and the
//! end-of-script checks. The meta-commands that need no I/O run in [`super::exec::Interp`].
//! Must not touch: time (the engine's timer and sleeper), threads, argv, output.
//!
//! How SQL is sent, as pgbench does (`sendCommand`):
//! * simple mode: the command's text with each variable's text substituted (`assignVariables`),
//!   sent as one Query (MySQL: one COM_QUERY). The session statement is registered verbatim
//!   (`Session::register_verbatim`) and the whole substituted text is its parameter, so nothing
//!   of the script's own text (`$1` or `?` in a literal) is mistaken for a placeholder;
//! * extended and prepared modes: the text with `$1..$n` for its variable references
//!   ([`super::SqlCommand::dollar_text`]), the variables as text parameters (an undefined one is
//!   NULL, as pgbench passes a NULL pointer). In prepared mode every statement is prepared once
//!   per connection, before the run (pgbench prepares each command just before its first
//!   execution; here a statement the server cannot prepare fails the run before it is measured).
//!   On MySQL the session sends `$1..$n` as the `?` placeholders of a server-side prepared
//!   statement (COM_STMT_PREPARE; extended mode prepares and closes it each time), integers as
//!   BIGINT and other values as strings.
//!
//! Run-time errors end the transaction with [`Error::Script`] (failure "other", client aborted),
//! with pgbench's messages: `client N aborted in command C (set) of script S; evaluation of
//! meta-command failed` after the specific error, `client N script S command C query Q: expected
//! one row, got K`, `client N aborted: end of script reached with pipeline open`, `client N
//! aborted: end of script reached without completing the last transaction`. A server error that
//! is not retryable is reported as pgbench does (`client N script S aborted in command C query
//! Q: ...`); serialization failures and deadlocks stay [`Error::Db`] so the engine retries them.
//!
//! Per-statement timings (`-r`): one statement per command, its first line as pgbench prints it
//! ([`super::Script::statements`]); pipelined SQL commands take the time to queue them and
//! `\endpipeline` the time to read every result, as in pgbench.
//!
//! Steady state allocates nothing per transaction: parameters are built in a fixed array (up to
//! [`STACK_PARAMS`], a vector beyond), simple-mode text in a reused buffer, `\gset`/`\aset` results
//! in the session's reused capture buffers and the variables' own text buffers.

use std::sync::Arc;

use sut::{Dialect, Error, ErrorClass, QueryMode, Session, StmtId, Value};

use super::exec::{simple_sql_in, store_row, Action, Interp, ScriptError};
use super::parse::{CommandKind, ParseError, ResultVars, Script, SqlCommand, SqlPart, MAX_ARGS};
use super::vars::{
    valid_variable_name, Symbols, Value as VarValue, Vars, CLIENT_ID, DEFAULT_SEED, RANDOM_SEED,
    SCALE,
};
use crate::tpcb::Builtin;
use crate::{ClientWorkload, Streams, TxnContext, TxnType, Workload};

mod client;

pub use client::ScriptClient;

/// Separates the log records of one error message (a failed parse, then the abort it led to):
/// the caller prints each as its own line of the log (pgbench: two `pg_log_error`s).
pub const RECORD: char = '\u{1e}';

/// Parameters of one SQL command kept on the stack; more go to a vector.
pub const STACK_PARAMS: usize = 32;

/// pgbench's `-D NAME=VALUE`: the name and the value; pgbench's messages for a missing `=` and an
/// invalid name.
pub fn parse_define(spec: &str) -> Result<(String, String), String> {
    let Some((name, value)) = spec.split_once('=') else {
        return Err(format!("invalid variable definition: \"{spec}\""));
    };
    if !valid_variable_name(name) {
        return Err(format!("option: invalid variable name: \"{name}\""));
    }
    Ok((name.to_string(), value.to_string()))
}

/// The scripts of a run, compiled against one [`Symbols`], in `-b`/`-f` order.
#[derive(Debug, Default)]
pub struct ScriptSet {
    symbols: Symbols,
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    script: Script,
    weight: u32,
    builtin: Option<Builtin>,
}

/// What a run adds to its scripts: the values of the automatic variables and `-D`.
#[derive(Clone, Debug, Default)]
pub struct ScriptConfig {
    /// `:scale` (pgbench: `-s`, else the database's for builtins, else 1).
    pub scale: i64,
    /// `--random-seed`: `:random_seed`, and the base of `:default_seed`.
    pub seed: u64,
    /// Number of clients (`:default_seed` is drawn after the clients' streams).
    pub clients: u32,
    /// `-D NAME=VALUE`, in order (a later definition of a name wins).
    pub defines: Vec<(String, String)>,
    /// pgbench's `--debug`: each client's steps on standard error, each line after this prefix
    /// (`pgbench: debug: `): the script it runs, the meta-commands it executes, the SQL it
    /// sends (prepared mode: the statement's name, `P_N` counting SQL commands over all
    /// scripts, as pgbench names them), and when it waits for results.
    pub debug: Option<String>,
}

impl ScriptSet {
    pub fn new() -> ScriptSet {
        ScriptSet::default()
    }

    /// Parse and add a script file's text (`-f FILE@W`); `source` names it in errors and reports.
    pub fn add_file(&mut self, source: &str, text: &str, weight: u32) -> Result<(), ParseError> {
        let script = Script::parse(source, text, &mut self.symbols)?;
        self.entries.push(Entry {
            script,
            weight,
            builtin: None,
        });
        Ok(())
    }

    /// Add a builtin, compiled from its script text (`-b NAME@W`), PostgreSQL's
    /// ([`ScriptSet::use_dialect`] changes it).
    pub fn add_builtin(&mut self, b: Builtin, weight: u32) {
        let script = self.compile_builtin(b, Dialect::Postgres);
        self.entries.push(Entry {
            script,
            weight,
            builtin: Some(b),
        });
    }

    fn compile_builtin(&mut self, b: Builtin, dialect: Dialect) -> Script {
        let mut script = Script::parse(b.name(), &builtin_text_in(b, dialect), &mut self.symbols)
            .expect("the builtin scripts parse");
        script.desc = b.description().to_string();
        script
    }

    /// The builtins for a server of `dialect` ([`Builtin::lines`]: `END;` is `COMMIT;` on
    /// MySQL); the files stay as written (their SQL is the user's).
    pub fn use_dialect(&mut self, dialect: Dialect) {
        for i in 0..self.entries.len() {
            if let Some(b) = self.entries[i].builtin {
                self.entries[i].script = self.compile_builtin(b, dialect);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The builtin each script is, `None` for a file, in order.
    pub fn builtins(&self) -> Vec<Option<Builtin>> {
        self.entries.iter().map(|e| e.builtin).collect()
    }

    pub fn weights(&self) -> Vec<u32> {
        self.entries.iter().map(|e| e.weight).collect()
    }

    pub fn scripts(&self) -> impl Iterator<Item = &Script> {
        self.entries.iter().map(|e| &e.script)
    }

    /// pgbench's limit on the parameters of a statement in extended and prepared modes
    /// (`parseQuery`: at most `MAX_ARGS - 1` = 255 variable references), with its message. stampede
    /// itself has no such limit; a drop-in pgbench refuses what pgbench refuses.
    pub fn check_pgbench_params(&self, mode: QueryMode) -> Result<(), String> {
        if mode == QueryMode::Simple {
            return Ok(());
        }
        for cmd in self.entries.iter().flat_map(|e| &e.script.commands) {
            if let CommandKind::Sql(sql) = &cmd.kind {
                if sql.param_count() > MAX_ARGS - 1 {
                    return Err(format!(
                        "statement has too many arguments (maximum is {}): {}",
                        MAX_ARGS - 1,
                        sql.text
                    ));
                }
            }
        }
        Ok(())
    }

    /// The workload, with the run's variables.
    pub fn into_workload(self, cfg: &ScriptConfig) -> ScriptWorkload {
        let symbols = self.symbols;
        let mut init = Vars::new(&symbols);
        let mut defined = [false; 4];
        for (name, value) in &cfg.defines {
            // A name no script mentions cannot be read: nothing to keep.
            if let Some(id) = symbols.get(name) {
                init.set_text(id, value);
                if (id.0 as usize) < defined.len() {
                    defined[id.0 as usize] = true;
                }
            }
        }
        // pgbench.c main: the automatic variables never override -D.
        if !defined[SCALE.0 as usize] {
            init.set_value(SCALE, VarValue::Int(cfg.scale));
        }
        if !defined[RANDOM_SEED.0 as usize] {
            init.set_value(RANDOM_SEED, VarValue::Int(cfg.seed as i64));
        }
        if !defined[DEFAULT_SEED.0 as usize] {
            let seed = Streams::new(cfg.seed, cfg.clients.max(1)).default_seed();
            init.set_value(DEFAULT_SEED, VarValue::Int(seed as i64));
        }
        let mut types = Vec::with_capacity(self.entries.len());
        let mut weights = Vec::with_capacity(self.entries.len());
        let mut builtins = Vec::with_capacity(self.entries.len());
        let mut scripts = Vec::with_capacity(self.entries.len());
        let mut dollar = Vec::with_capacity(self.entries.len());
        for e in self.entries {
            types.push(TxnType {
                name: e.script.desc.clone(),
                statements: e.script.statements(),
            });
            weights.push(e.weight);
            builtins.push(e.builtin);
            dollar.push(
                e.script
                    .commands
                    .iter()
                    .map(|c| match &c.kind {
                        CommandKind::Sql(s) => Some(s.dollar_text().0),
                        _ => None,
                    })
                    .collect(),
            );
            scripts.push(e.script);
        }
        ScriptWorkload {
            shared: Arc::new(Shared {
                prepnum: {
                    let mut n = 0;
                    (scripts.iter())
                        .map(|s| {
                            (s.commands.iter())
                                .map(|c| match c.kind {
                                    CommandKind::Sql(_) => {
                                        n += 1;
                                        n - 1
                                    }
                                    _ => 0,
                                })
                                .collect()
                        })
                        .collect()
                },
                scripts,
                dollar,
                symbols,
                init,
                client_id_defined: defined[CLIENT_ID.0 as usize],
                debug: cfg.debug.clone(),
            }),
            types,
            weights,
            builtins,
        }
    }
}

/// A builtin's script text, as `pgbench --show-script` prints it.
pub fn builtin_text(b: Builtin) -> String {
    builtin_text_in(b, Dialect::Postgres)
}

/// A builtin's script text for a server of `dialect` ([`Builtin::lines`]).
pub fn builtin_text_in(b: Builtin, dialect: Dialect) -> String {
    let mut s = String::new();
    for line in b.lines(dialect) {
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// What every client of a run shares.
#[derive(Debug)]
struct Shared {
    scripts: Vec<Script>,
    /// Per script, per command: the `$n` text of an SQL command (extended and prepared modes).
    dollar: Vec<Vec<Option<String>>>,
    symbols: Symbols,
    /// The starting variables of every client (`:client_id` apart).
    init: Vars,
    client_id_defined: bool,
    debug: Option<String>,
    /// Per script, per command: pgbench's prepared-statement number (`P_N`), for `--debug`.
    prepnum: Vec<Vec<usize>>,
}

/// pgbench scripts as a workload: a weighted mix of files and builtins.
#[derive(Debug)]
pub struct ScriptWorkload {
    shared: Arc<Shared>,
    types: Vec<TxnType>,
    weights: Vec<u32>,
    builtins: Vec<Option<Builtin>>,
}

impl ScriptWorkload {
    /// The weights, in `txn_types()` order (for `engine::RunSpec::weights`).
    pub fn weights(&self) -> Vec<u32> {
        self.weights.clone()
    }

    /// The builtin each transaction type is, `None` for a file.
    pub fn builtins(&self) -> &[Option<Builtin>] {
        &self.builtins
    }

    pub fn scripts(&self) -> &[Script] {
        &self.shared.scripts
    }
}

impl Workload for ScriptWorkload {
    type Client = ScriptClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> ScriptClient {
        let mut vars = self.shared.init.clone();
        if !self.shared.client_id_defined {
            vars.set_value(CLIENT_ID, VarValue::Int(client_id as i64));
        }
        ScriptClient {
            shared: self.shared.clone(),
            id: client_id,
            vars,
            interp: Interp::new(),
            stmts: Vec::new(),
            sql: String::new(),
            name_buf: String::new(),
            pipe: Vec::new(),
            at: (0, 0),
            stop: None,
        }
    }

    /// A builtin by what it is (select-only); a script when every SQL command in it is
    /// certainly read-only ([`crate::readonly`]; a `:"name"` identifier substitution never is:
    /// it could name anything). Meta-commands touch no server.
    fn read_only(&self, txn: usize) -> bool {
        if let Some(Some(b)) = self.builtins.get(txn) {
            return *b == Builtin::SelectOnly;
        }
        let Some(script) = self.shared.scripts.get(txn) else {
            return false;
        };
        script.commands.iter().all(|c| match &c.kind {
            CommandKind::Sql(cmd) => {
                !cmd.parts.iter().any(|p| matches!(p, SqlPart::Ident { .. }))
                    && crate::readonly::is_read_only_sql(&cmd.text)
            }
            _ => true,
        })
    }

    /// pgbench refuses `\startpipeline` with the simple query protocol ("cannot use pipeline mode
    /// with the simple query protocol"); here before connecting, for any script that has one.
    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        if mode == QueryMode::Simple {
            if let Some(s) = self.shared.scripts.iter().find(|s| s.uses_pipeline()) {
                return Err(format!(
                    "script \"{}\" uses \\startpipeline: cannot use pipeline mode with the simple \
                     query protocol (use -M extended or -M prepared)",
                    s.desc
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_parse_as_pgbench() {
        assert_eq!(parse_define("a=1"), Ok(("a".into(), "1".into())));
        assert_eq!(parse_define("a=x=y"), Ok(("a".into(), "x=y".into())));
        assert_eq!(parse_define("a="), Ok(("a".into(), "".into())));
        assert_eq!(
            parse_define("a"),
            Err("invalid variable definition: \"a\"".into())
        );
        assert_eq!(
            parse_define("1a=2"),
            Err("option: invalid variable name: \"1a\"".into())
        );
    }

    /// A workload of the one script `sql` with these `-D` defines, at scale 7, seed 3, 2 clients.
    fn with_defines(sql: &str, defines: &[(&str, &str)]) -> ScriptWorkload {
        let mut set = ScriptSet::new();
        set.add_file("t.sql", sql, 1).unwrap();
        set.into_workload(&ScriptConfig {
            scale: 7,
            seed: 3,
            clients: 2,
            defines: defines
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            debug: None,
        })
    }

    #[test]
    fn automatic_variables_yield_to_defines() {
        let w = with_defines(
            "SELECT :scale, :client_id, :x;\n",
            &[("x", "abc"), ("nobody", "1")],
        );
        let mut c = w.new_client(1);
        let x = w.shared.symbols.get("x").unwrap();
        assert_eq!(c.vars.text(SCALE), Some("7"));
        assert_eq!(c.vars.text(CLIENT_ID), Some("1"));
        assert_eq!(c.vars.text(RANDOM_SEED), Some("3"));
        assert_eq!(c.vars.text(x), Some("abc"));
        let seed = Streams::new(3, 2).default_seed() as i64;
        assert_eq!(c.vars.peek(DEFAULT_SEED), Some(VarValue::Int(seed)));

        let w = with_defines(
            "SELECT :scale, :client_id;\n",
            &[("scale", "10000"), ("client_id", "9")],
        );
        let mut c = w.new_client(1);
        assert_eq!(c.vars.text(SCALE), Some("10000"));
        assert_eq!(c.vars.text(CLIENT_ID), Some("9"));
    }

    #[test]
    fn builtins_are_scripts_with_pgbench_s_names() {
        let mut set = ScriptSet::new();
        set.add_builtin(Builtin::TpcbLike, 1);
        set.add_builtin(Builtin::SelectOnly, 3);
        set.add_file("mine.sql", "SELECT 1;\n", 2).unwrap();
        assert_eq!(
            set.builtins(),
            vec![Some(Builtin::TpcbLike), Some(Builtin::SelectOnly), None]
        );
        let w = set.into_workload(&ScriptConfig {
            scale: 1,
            ..Default::default()
        });
        assert_eq!(w.txn_types()[0].name, "<builtin: TPC-B (sort of)>");
        assert_eq!(w.txn_types()[0].statements.len(), 11);
        assert_eq!(
            w.txn_types()[1].statements,
            vec![
                "\\set aid random(1, 100000 * :scale)",
                "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"
            ]
        );
        assert_eq!(w.txn_types()[2].name, "mine.sql");
        assert_eq!(w.weights(), vec![1, 3, 2]);
        assert!(w.validate(QueryMode::Simple).is_ok());

        let mut set = ScriptSet::new();
        set.add_builtin(Builtin::TpcbLikePipelined, 1);
        let w = set.into_workload(&ScriptConfig::default());
        assert!(w.validate(QueryMode::Simple).is_err());
        assert!(w.validate(QueryMode::Extended).is_ok());
    }
}
