//! One client of a script run: [`ScriptClient`], the I/O side of pgbench's client state machine
//! (`advanceConnectionState`), as the parent module's header describes: sending each SQL
//! command in the run's query mode, reading and storing results, pipelines, `\sleep`, and
//! pgbench's messages for what went wrong.

use super::*;
use sut::CapturedResult;

/// What a pipeline has queued, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Queued {
    Stmt,
    Sync,
}

/// One client's state: its variables, its position in the script, its statements on the
/// current session.
pub struct ScriptClient {
    pub(super) shared: Arc<Shared>,
    pub(super) id: u32,
    pub(super) vars: Vars,
    pub(super) interp: Interp,
    /// Per script, per command: the registered statement of an SQL command.
    pub(super) stmts: Vec<Vec<Option<StmtId>>>,
    /// Simple mode: the command's text with the variables substituted.
    pub(super) sql: String,
    pub(super) name_buf: String,
    /// What the open pipeline has queued, in order.
    pub(super) pipe: Vec<Queued>,
    /// The command being run (script, command), for [`ClientWorkload::failed_at`].
    pub(super) at: (usize, usize),
    /// [`ClientWorkload::stop_after`]'s answer for the transaction just run.
    pub(super) stop: Option<Error>,
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
                self.store(prefix, &res, shared, script, i, last_query)
            }
            ResultVars::Aset(prefix) => {
                for (q, res) in session.captured().enumerate() {
                    // pgbench: an empty result (or a command) is skipped under \aset.
                    if !res.returns_rows() || res.rows() == 0 {
                        continue;
                    }
                    self.store(prefix, &res, shared, script, i, q)?;
                }
                Ok(())
            }
        }
    }

    /// Store a result's row under `prefix` (`\gset`, `\aset`); the error names query `q` of
    /// command `i`, as pgbench's.
    fn store(
        &mut self,
        prefix: &str,
        res: &CapturedResult<'_>,
        shared: &Shared,
        script: usize,
        i: usize,
        q: usize,
    ) -> Result<(), Error> {
        store_row(
            prefix,
            res.columns(),
            &shared.symbols,
            &mut self.vars,
            &mut self.name_buf,
        )
        .map_err(|e| {
            Error::Script(format!(
                "client {} script {} command {} query {q}: {e}",
                self.id, script, i
            ))
        })
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
