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

/// What a pipeline has queued, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queued {
    Stmt,
    Sync,
}

/// One client's state: its variables, its position in the script, its statements on the
/// current session.
pub struct ScriptClient {
    shared: Arc<Shared>,
    id: u32,
    vars: Vars,
    interp: Interp,
    /// Per script, per command: the registered statement of an SQL command.
    stmts: Vec<Vec<Option<StmtId>>>,
    /// Simple mode: the command's text with the variables substituted.
    sql: String,
    name_buf: String,
    /// What the open pipeline has queued, in order.
    pipe: Vec<Queued>,
    /// The command being run (script, command), for [`ClientWorkload::failed_at`].
    at: (usize, usize),
    /// [`ClientWorkload::stop_after`]'s answer for the transaction just run.
    stop: Option<Error>,
}

impl ScriptClient {
    /// The client's variables (tests).
    pub fn vars(&self) -> &Vars {
        &self.vars
    }

    /// pgbench's `commandFailed` after a meta-command's own error message.
    fn meta_failed(&self, script: usize, e: ScriptError) -> Error {
        let cmd = &self.shared.scripts[script].commands[e.command];
        let (name, what) = match &cmd.kind {
            CommandKind::Set { .. } if e.assignment => ("set", "assignment of meta-command failed"),
            CommandKind::Set { .. } => ("set", "evaluation of meta-command failed"),
            CommandKind::If { .. } => ("if", "evaluation of meta-command failed"),
            CommandKind::Elif { .. } => ("elif", "evaluation of meta-command failed"),
            CommandKind::Sleep { .. } => ("sleep", "execution of meta-command failed"),
            CommandKind::Shell { .. } => ("shell", "execution of meta-command failed"),
            CommandKind::SetShell { .. } => ("setshell", "execution of meta-command failed"),
            _ => (cmd.kind.meta_name().unwrap_or("SQL"), "execution failed"),
        };
        Error::Script(format!(
            "{}{RECORD}client {} aborted in command {} ({}) of script {}; {}",
            e.message, self.id, e.command, name, script, what
        ))
    }

    /// pgbench's `commandFailed` with its own message.
    fn command_failed(&self, script: usize, command: usize, name: &str, msg: &str) -> Error {
        Error::Script(format!(
            "client {} aborted in command {} ({}) of script {}; {}",
            self.id, command, name, script, msg
        ))
    }

    /// A server error: retryable ones (and lost connections) as they are, for the engine;
    /// others with pgbench's message (`readCommandResponse`, PGRES_FATAL_ERROR).
    fn sql_failed(&self, script: usize, command: usize, query: usize, e: Error) -> Error {
        match (&e, sut::classify(&e)) {
            (Error::Db(db), ErrorClass::Other) => Error::Script(format!(
                "client {} script {} aborted in command {} query {}: {}",
                self.id, script, command, query, db
            )),
            _ => e,
        }
    }

    /// `--debug`: what pgbench's sendCommand and its wait for results say.
    fn debug_send(&self, shared: &Shared, script: usize, i: usize, mode: QueryMode) {
        let Some(p) = &shared.debug else {
            return;
        };
        match mode {
            QueryMode::Simple => eprintln!("{p}client {} sending {}", self.id, self.sql),
            QueryMode::Extended => eprintln!(
                "{p}client {} sending {}",
                self.id,
                shared.dollar[script][i].as_deref().unwrap_or_default()
            ),
            QueryMode::Prepared => eprintln!(
                "{p}client {} sending P_{}",
                self.id, shared.prepnum[script][i]
            ),
        }
        eprintln!("{p}client {} receiving", self.id);
    }

    /// Run SQL command `i` outside a pipeline and store its results (`\gset`, `\aset`).
    async fn run_sql(
        &mut self,
        shared: &Shared,
        script: usize,
        i: usize,
        session: &mut Session,
        mode: QueryMode,
    ) -> Result<(), Error> {
        let CommandKind::Sql(cmd) = &shared.scripts[script].commands[i].kind else {
            unreachable!("Action::Sql names an SQL command");
        };
        let id = self.stmts[script][i].expect("SQL commands are registered on connect");
        // pgbench's prepareCommand: a statement is parsed on its own before its first
        // execution; a parse that fails is reported, and the statement is still taken as
        // prepared (its execution then fails with "prepared statement ... does not exist").
        let mut prepare_failed = None;
        if mode == QueryMode::Prepared && !session.is_prepared(id) {
            match session.prepare(&[id]).await {
                Ok(()) => {}
                Err(Error::Db(db)) => {
                    prepare_failed = Some(db.to_string());
                    session.assume_prepared(id);
                }
                Err(e) => return Err(e),
            }
        }
        let r = if mode == QueryMode::Simple {
            simple_sql_in(cmd, &mut self.vars, &mut self.sql, session.dialect());
            self.debug_send(shared, script, i, mode);
            session.execute(id, &[Value::Text(&self.sql)]).await
        } else {
            self.debug_send(shared, script, i, mode);
            let mut arr = [Value::Null; STACK_PARAMS];
            let mut big = Vec::new();
            let params = fill_params(cmd, &mut self.vars, &mut arr, &mut big);
            session.execute(id, params).await
        };
        let last_query = session.captured().count().saturating_sub(1);
        if session.copied() {
            // pgbench's readCommandResponse: PGRES_COPY_IN / PGRES_COPY_OUT.
            return Err(Error::Script(
                "COPY is not supported in pgbench, aborting".into(),
            ));
        }
        if let Err(e) = r {
            return Err(
                match (prepare_failed, self.sql_failed(script, i, last_query, e)) {
                    // Two messages, as pgbench logs them: the parse's error, then the abort.
                    (Some(p), Error::Script(m)) => Error::Script(format!("{p}{RECORD}{m}")),
                    (_, e) => e,
                },
            );
        }
        match &cmd.result {
            ResultVars::None => Ok(()),
            ResultVars::Gset(prefix) => {
                let Some(res) = session.captured().last() else {
                    return Err(Error::Script(format!(
                        "client {} command {}: no results",
                        self.id, i
                    )));
                };
                let n = if res.returns_rows() { res.rows() } else { 0 };
                if n != 1 {
                    return Err(Error::Script(format!(
                        "client {} script {} command {} query {}: expected one row, got {}",
                        self.id, script, i, last_query, n
                    )));
                }
                store_row(
                    prefix,
                    res.columns(),
                    &shared.symbols,
                    &mut self.vars,
                    &mut self.name_buf,
                )
                .map_err(|e| {
                    Error::Script(format!(
                        "client {} script {} command {} query {}: {}",
                        self.id, script, i, last_query, e
                    ))
                })
            }
            ResultVars::Aset(prefix) => {
                for (q, res) in session.captured().enumerate() {
                    // pgbench: an empty result (or a command) is skipped under \aset.
                    if !res.returns_rows() || res.rows() == 0 {
                        continue;
                    }
                    store_row(
                        prefix,
                        res.columns(),
                        &shared.symbols,
                        &mut self.vars,
                        &mut self.name_buf,
                    )
                    .map_err(|e| {
                        Error::Script(format!(
                            "client {} script {} command {} query {}: {}",
                            self.id, script, i, q, e
                        ))
                    })?;
                }
                Ok(())
            }
        }
    }

    /// `\endpipeline`: send everything queued, read every result through the last Sync (so the
    /// session is at a ReadyForQuery boundary even after an error), return the first error.
    async fn end_pipeline(
        &mut self,
        script: usize,
        i: usize,
        session: &mut Session,
    ) -> Result<(), Error> {
        session.queue_sync();
        self.pipe.push(Queued::Sync);
        session.flush().await?;
        let mut first: Option<Error> = None;
        for q in 0..self.pipe.len() {
            let r = match self.pipe[q] {
                Queued::Stmt => session.read_result().await.map(|_| ()),
                Queued::Sync => session.read_ready().await,
            };
            match r {
                Ok(()) => {}
                Err(Error::Db(e)) if e.code == sut::session::PIPELINE_ABORTED => {}
                Err(e @ Error::Db(_)) => {
                    first.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        self.pipe.clear();
        match first {
            Some(e) => Err(self.sql_failed(script, i, 0, e)),
            None => Ok(()),
        }
    }
}

/// The parameters of `cmd` (pgbench's `getQueryParams`): an integer as such, any other defined
/// value as its text, an undefined variable as NULL. In `arr` when they fit, else in `big`.
fn fill_params<'a, 'v>(
    cmd: &SqlCommand,
    vars: &'v mut Vars,
    arr: &'a mut [Value<'v>; STACK_PARAMS],
    big: &'a mut Vec<Value<'v>>,
) -> &'a [Value<'v>] {
    // Format every needed text first (needs `&mut`), then borrow.
    let mut n = 0;
    for p in &cmd.parts {
        if let SqlPart::Var { id, .. } | SqlPart::Literal { id, .. } | SqlPart::Ident { id, .. } = p
        {
            if vars.int_value(*id).is_none() {
                let _ = vars.text(*id);
            }
            n += 1;
        }
    }
    let vars: &'v Vars = vars;
    let values = cmd.parts.iter().filter_map(|p| match p {
        SqlPart::Var { id, .. } | SqlPart::Literal { id, .. } | SqlPart::Ident { id, .. } => {
            Some(match vars.int_value(*id) {
                Some(i) => Value::Int(i),
                None => match vars.formatted_text(*id) {
                    Some(t) => Value::Text(t),
                    None => Value::Null,
                },
            })
        }
        SqlPart::Text(_) => None,
    });
    if n <= STACK_PARAMS {
        for (slot, v) in arr.iter_mut().zip(values) {
            *slot = v;
        }
        &arr[..n]
    } else {
        big.clear();
        big.extend(values);
        big
    }
}

impl ClientWorkload for ScriptClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        let shared = self.shared.clone();
        self.stmts = shared
            .scripts
            .iter()
            .zip(&shared.dollar)
            .map(|(script, dollar)| {
                script
                    .commands
                    .iter()
                    .zip(dollar)
                    .map(|(c, text)| {
                        let CommandKind::Sql(cmd) = &c.kind else {
                            return None;
                        };
                        let id = if mode == QueryMode::Simple {
                            // The whole substituted text is the one parameter, sent as it is.
                            session.register_verbatim()
                        } else {
                            session.register(text.as_deref().unwrap_or_default(), mode)
                        };
                        if cmd.result != ResultVars::None {
                            session.capture_results(id);
                        }
                        Some(id)
                    })
                    .collect()
            })
            .collect();
        // Prepared mode parses a statement with its first execution, as pgbench does
        // (`prepareCommand`): a statement the server rejects then fails its transaction and
        // aborts the client with pgbench's message, instead of failing every connection before
        // the run. The statements of pipelines are the exception, parsed here (pgbench's
        // `prepareCommandsInPipeline` parses them before the pipeline opens: a Parse inside the
        // pipeline would take a snapshot before a `BEGIN ISOLATION LEVEL ...`); doing it on
        // connect keeps it out of the measured transactions, as the builtins' prepare.
        if mode == QueryMode::Prepared {
            let mut ids = Vec::new();
            for (script, stmts) in shared.scripts.iter().zip(&self.stmts) {
                let mut inside = false;
                for (c, id) in script.commands.iter().zip(stmts) {
                    match c.kind {
                        CommandKind::StartPipeline => inside = true,
                        CommandKind::EndPipeline => inside = false,
                        _ if inside => ids.extend(*id),
                        _ => {}
                    }
                }
            }
            if !ids.is_empty() {
                session.prepare(&ids).await?;
            }
        }
        Ok(())
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let shared = self.shared.clone();
        let script = &shared.scripts[txn];
        if let Some(p) = &shared.debug {
            eprintln!("{p}client {} executing script \"{}\"", self.id, script.desc);
            self.interp.debug = Some(format!("{p}client {} executing \\", self.id));
        }
        self.interp.restart();
        self.pipe.clear();
        let mut in_pipeline = false;
        loop {
            let action = match self
                .interp
                .next(script, txn, &mut self.vars, cx.rng, cx.timer)
            {
                Ok(a) => a,
                Err(e) => {
                    self.at = (txn, e.command);
                    return Err(self.meta_failed(txn, e));
                }
            };
            if let Action::Sql(i)
            | Action::Sleep { index: i, .. }
            | Action::StartPipeline(i)
            | Action::SyncPipeline(i)
            | Action::EndPipeline(i) = action
            {
                self.at = (txn, i);
            }
            match action {
                Action::Done => break,
                Action::Sql(i) => {
                    cx.timer.start();
                    if in_pipeline {
                        let CommandKind::Sql(cmd) = &script.commands[i].kind else {
                            unreachable!("Action::Sql names an SQL command");
                        };
                        match cmd.result {
                            ResultVars::Gset(_) => {
                                cx.timer.end(i, false);
                                return Err(self.command_failed(
                                    txn,
                                    i,
                                    "gset",
                                    "\\gset is not allowed in pipeline mode",
                                ));
                            }
                            ResultVars::Aset(_) => {
                                cx.timer.end(i, false);
                                return Err(self.command_failed(
                                    txn,
                                    i,
                                    "aset",
                                    "\\aset is not allowed in pipeline mode",
                                ));
                            }
                            ResultVars::None => {}
                        }
                        let id = self.stmts[txn][i].expect("SQL commands are registered");
                        let mut arr = [Value::Null; STACK_PARAMS];
                        let mut big = Vec::new();
                        session.queue(id, fill_params(cmd, &mut self.vars, &mut arr, &mut big));
                        self.pipe.push(Queued::Stmt);
                        cx.timer.end(i, true);
                    } else {
                        let r = self.run_sql(&shared, txn, i, session, cx.mode).await;
                        cx.timer.end(i, r.is_ok());
                        r?;
                    }
                }
                Action::Sleep { index, micros } => {
                    cx.timer.start();
                    if micros > 0 {
                        cx.sleep.sleep(micros as u64).await;
                    }
                    cx.timer.end(index, true);
                }
                Action::StartPipeline(i) => {
                    cx.timer.start();
                    let err = if cx.mode == QueryMode::Simple {
                        Some("cannot use pipeline mode with the simple query protocol")
                    } else if in_pipeline {
                        Some("already in pipeline mode")
                    } else {
                        None
                    };
                    if let Some(msg) = err {
                        cx.timer.end(i, false);
                        return Err(self.command_failed(txn, i, "startpipeline", msg));
                    }
                    cx.timer.end(i, true);
                    in_pipeline = true;
                }
                Action::SyncPipeline(i) => {
                    cx.timer.start();
                    if !in_pipeline {
                        cx.timer.end(i, false);
                        return Err(self.command_failed(
                            txn,
                            i,
                            "syncpipeline",
                            "not in pipeline mode",
                        ));
                    }
                    session.queue_sync();
                    self.pipe.push(Queued::Sync);
                    cx.timer.end(i, true);
                }
                Action::EndPipeline(i) => {
                    cx.timer.start();
                    if !in_pipeline {
                        cx.timer.end(i, false);
                        return Err(self.command_failed(
                            txn,
                            i,
                            "endpipeline",
                            "not in pipeline mode",
                        ));
                    }
                    in_pipeline = false;
                    let r = self.end_pipeline(txn, i, session).await;
                    cx.timer.end(i, r.is_ok());
                    r?;
                }
            }
        }
        // CSTATE_START_COMMAND at the end of the script, then CSTATE_END_TX.
        if in_pipeline {
            return Err(Error::Script(format!(
                "client {} aborted: end of script reached with pipeline open",
                self.id
            )));
        }
        if session.transaction_status() != b'I' {
            // pgbench's CSTATE_END_TX: the transaction is counted, then the client aborts.
            self.stop = Some(Error::Script(format!(
                "client {} aborted: end of script reached without completing the last transaction",
                self.id
            )));
        }
        Ok(())
    }

    fn failed_command(&self) -> Option<usize> {
        Some(self.at.1)
    }

    fn stop_after(&mut self) -> Option<Error> {
        self.stop.take()
    }

    fn failed_at(&self) -> Option<String> {
        let (script, command) = self.at;
        let s = self.shared.scripts.get(script)?;
        let c = s.commands.get(command)?;
        Some(format!("{}:{}: {}", s.desc, c.line, c.first_line))
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

    #[test]
    fn automatic_variables_yield_to_defines() {
        let mut set = ScriptSet::new();
        set.add_file("t.sql", "SELECT :scale, :client_id, :x;\n", 1)
            .unwrap();
        let w = set.into_workload(&ScriptConfig {
            scale: 7,
            seed: 3,
            clients: 2,
            defines: vec![("x".into(), "abc".into()), ("nobody".into(), "1".into())],
            debug: None,
        });
        let mut c = w.new_client(1);
        let x = w.shared.symbols.get("x").unwrap();
        assert_eq!(c.vars.text(SCALE), Some("7"));
        assert_eq!(c.vars.text(CLIENT_ID), Some("1"));
        assert_eq!(c.vars.text(RANDOM_SEED), Some("3"));
        assert_eq!(c.vars.text(x), Some("abc"));
        let seed = Streams::new(3, 2).default_seed() as i64;
        assert_eq!(c.vars.peek(DEFAULT_SEED), Some(VarValue::Int(seed)));

        let mut set = ScriptSet::new();
        set.add_file("t.sql", "SELECT :scale, :client_id;\n", 1)
            .unwrap();
        let w = set.into_workload(&ScriptConfig {
            scale: 7,
            seed: 3,
            clients: 2,
            defines: vec![
                ("scale".into(), "10000".into()),
                ("client_id".into(), "9".into()),
            ],
            debug: None,
        });
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
