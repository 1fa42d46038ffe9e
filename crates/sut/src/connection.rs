//! [`Session`]: one connection, over either protocol. Each method forwards to the protocol's
//! session; the few things only PostgreSQL has (pipelines, notices, COPY, io_uring) answer on
//! MySQL with their neutral value (no notices, nothing copied) or with an [`Error::Config`]
//! naming the limitation. Captured results (`\gset`, `\aset`) come in a protocol-neutral
//! [`CapturedResult`].

use pg::{DbError, Error, QueryMode, StmtId, StmtResult, Value};

use crate::{Dialect, Target};

/// A captured result of either protocol (see [`Session::capture_results`]): as pgbench's
/// `readCommandResponse` sees a result, whether it returns rows, how many, the column names
/// and the last row's values.
#[derive(Clone, Copy)]
pub enum CapturedResult<'a> {
    Pg(pg::CapturedResult<'a>),
    MySql(mysql::CapturedResult<'a>),
}

impl<'a> CapturedResult<'a> {
    /// Rows received.
    pub fn rows(&self) -> u64 {
        match self {
            CapturedResult::Pg(r) => r.rows(),
            CapturedResult::MySql(r) => r.rows(),
        }
    }

    /// The statement returns rows (a SELECT with no row included); false for a command.
    pub fn returns_rows(&self) -> bool {
        match self {
            CapturedResult::Pg(r) => r.returns_rows(),
            CapturedResult::MySql(r) => r.returns_rows(),
        }
    }

    /// `(column name, value of the last row)` per column (`None` = NULL, or no row at all), in
    /// text form. No allocation.
    pub fn columns(&self) -> Columns<'a> {
        match self {
            CapturedResult::Pg(r) => Columns::Pg(r.columns()),
            CapturedResult::MySql(r) => Columns::MySql(r.columns()),
        }
    }
}

/// Iterator over a captured result's columns (see [`CapturedResult::columns`]).
pub enum Columns<'a> {
    Pg(pg::Columns<'a>),
    MySql(mysql::CapturedColumns<'a>),
}

impl<'a> Iterator for Columns<'a> {
    type Item = (&'a str, Option<&'a str>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Columns::Pg(c) => c.next(),
            Columns::MySql(c) => c.next(),
        }
    }
}

/// One of two iterators with the same items: [`Session::captured`] without boxing.
enum Either<A, B> {
    A(A),
    B(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            Either::A(a) => a.next(),
            Either::B(b) => b.next(),
        }
    }
}

/// What [`Session::connect`] takes: a [`Target`] or a protocol's configuration, borrowed.
pub enum TargetRef<'a> {
    Pg(&'a pg::ConnConfig),
    MySql(&'a [mysql::Conninfo]),
}

impl<'a> From<&'a Target> for TargetRef<'a> {
    fn from(t: &'a Target) -> Self {
        match t {
            Target::Pg(c) => TargetRef::Pg(c),
            Target::MySql(c) => TargetRef::MySql(c),
        }
    }
}

impl<'a> From<&'a pg::ConnConfig> for TargetRef<'a> {
    fn from(c: &'a pg::ConnConfig) -> Self {
        TargetRef::Pg(c)
    }
}

impl<'a> From<&'a mysql::Conninfo> for TargetRef<'a> {
    fn from(c: &'a mysql::Conninfo) -> Self {
        TargetRef::MySql(std::slice::from_ref(c))
    }
}

/// One connection to the target.
pub enum Session {
    Pg(pg::Session),
    /// The session and the endpoint it connected to (`host:port` or the socket path).
    MySql(mysql::Session, Box<str>),
}

/// A MySQL endpoint's identity: its socket, or `host:port`.
fn endpoint_key(c: &mysql::Conninfo) -> String {
    match &c.socket {
        Some(p) => p.display().to_string(),
        None => format!("{}:{}", c.host, c.port),
    }
}

fn pg_only(what: &str) -> Error {
    Error::Config(format!(
        "{what} needs PostgreSQL: the MySQL protocol has no equivalent"
    ))
}

impl Session {
    /// Connect to `target` (every host in libpq's order for PostgreSQL): a [`Target`], or
    /// either protocol's own configuration.
    pub async fn connect<'a>(target: impl Into<TargetRef<'a>>) -> Result<Session, Error> {
        Self::connect_timed(target, &pg::session::TokioTimer).await
    }

    /// [`Session::connect`], timing each host's `connect_timeout` on `timer`
    /// (`pg::session::timer`: the engine's threads have no tokio timer).
    pub async fn connect_timed<'a, T: pg::session::ConnectTimer>(
        target: impl Into<TargetRef<'a>>,
        timer: &T,
    ) -> Result<Session, Error> {
        match target.into() {
            TargetRef::Pg(c) => pg::Session::connect_timed(c, timer).await.map(Session::Pg),
            TargetRef::MySql(endpoints) => {
                // libpq's way with several hosts: the first that accepts the connection; a
                // server's refusal of the login (wrong password, unknown database) is final.
                let mut last = None;
                for c in endpoints {
                    match mysql::Session::connect_timed(c, timer).await {
                        Ok(s) => return Ok(Session::MySql(s, endpoint_key(c).into())),
                        Err(e @ (Error::Io(_) | Error::Connect { .. })) => last = Some(e),
                        Err(e) => return Err(e),
                    }
                }
                Err(last.unwrap_or_else(|| Error::Config("no MySQL endpoint given".into())))
            }
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self {
            Session::Pg(_) => Dialect::Postgres,
            Session::MySql(..) => Dialect::MySql,
        }
    }

    /// The PostgreSQL session, for what only PostgreSQL has (COPY, io_uring, pg_stat views).
    pub fn pg_mut(&mut self) -> Option<&mut pg::Session> {
        match self {
            Session::Pg(s) => Some(s),
            Session::MySql(..) => None,
        }
    }

    pub fn pg(&self) -> Option<&pg::Session> {
        match self {
            Session::Pg(s) => Some(s),
            Session::MySql(..) => None,
        }
    }

    pub fn mysql_mut(&mut self) -> Option<&mut mysql::Session> {
        match self {
            Session::MySql(s, _) => Some(s),
            Session::Pg(_) => None,
        }
    }

    pub fn mysql(&self) -> Option<&mysql::Session> {
        match self {
            Session::MySql(s, _) => Some(s),
            Session::Pg(_) => None,
        }
    }

    /// Register a statement (`$n` placeholders, or `?` on MySQL) for use in `mode`; nothing is
    /// sent.
    pub fn register(&mut self, sql: &str, mode: QueryMode) -> StmtId {
        match self {
            Session::Pg(s) => s.register(sql, mode),
            Session::MySql(s, _) => s.register(sql, mode),
        }
    }

    pub fn is_prepared(&self, stmt: StmtId) -> bool {
        match self {
            Session::Pg(s) => s.is_prepared(stmt),
            Session::MySql(s, _) => s.is_prepared(stmt),
        }
    }

    /// PostgreSQL: mark a statement prepared by an earlier `PREPARE` of the same name. MySQL
    /// prepares at first use, so this does nothing there.
    pub fn assume_prepared(&mut self, stmt: StmtId) {
        if let Session::Pg(s) = self {
            s.assume_prepared(stmt)
        }
    }

    /// Prepare every registered statement of prepared mode not yet prepared.
    pub async fn prepare_all(&mut self) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.prepare_all().await,
            Session::MySql(s, _) => s.prepare_all().await,
        }
    }

    /// Prepare these statements (PostgreSQL in one round trip; MySQL: each one not yet
    /// prepared, one COM_STMT_PREPARE each).
    pub async fn prepare(&mut self, ids: &[StmtId]) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.prepare(ids).await,
            Session::MySql(s, _) => s.prepare(ids).await,
        }
    }

    /// Execute a registered statement and wait for its result.
    #[inline]
    pub async fn execute(
        &mut self,
        stmt: StmtId,
        params: &[Value<'_>],
    ) -> Result<StmtResult, Error> {
        match self {
            Session::Pg(s) => s.execute(stmt, params).await,
            Session::MySql(s, _) => s.execute(stmt, params).await,
        }
    }

    /// Run SQL text (several statements allowed) and return every row as text.
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, Error> {
        match self {
            Session::Pg(s) => s.simple_query(sql).await,
            Session::MySql(s, _) => s.simple_query(sql).await,
        }
    }

    /// Column `i` of the first row of the last statement's result, read in place.
    #[inline]
    pub fn row_value(&self, i: usize) -> Option<&str> {
        match self {
            Session::Pg(s) => s.row_value(i),
            Session::MySql(s, _) => s.row_value(i),
        }
    }

    /// Every column of the first row of the last statement's result.
    pub fn first_row(&self) -> Option<Vec<Option<&str>>> {
        match self {
            Session::Pg(s) => s.first_row(),
            Session::MySql(s, _) => s.first_row(),
        }
    }

    /// Register a simple-mode statement whose one parameter, a [`Value::Text`], is the whole
    /// SQL text, sent as it is (several `;`-separated statements allowed): text substituted on
    /// the client, as pgbench's simple mode sends it, in which nothing is a placeholder.
    /// PostgreSQL: the statement `$1` (its simple mode interpolates values verbatim).
    pub fn register_verbatim(&mut self) -> StmtId {
        match self {
            Session::Pg(s) => s.register("$1", QueryMode::Simple),
            Session::MySql(s, _) => s.register_verbatim(),
        }
    }

    /// Keep the results of `stmt`'s executions (column names, row count, last row) for
    /// [`Session::captured`]: pgbench's `\gset`/`\aset`. Statements without capture cost
    /// nothing more.
    pub fn capture_results(&mut self, stmt: StmtId) {
        match self {
            Session::Pg(s) => s.capture_results(stmt),
            Session::MySql(s, _) => s.capture_results(stmt),
        }
    }

    /// The results captured by the last execution, in order (several for a multi-statement
    /// text); empty for a statement without capture. No allocation.
    pub fn captured(&self) -> impl Iterator<Item = CapturedResult<'_>> + '_ {
        match self {
            Session::Pg(s) => Either::A(s.captured().map(CapturedResult::Pg)),
            Session::MySql(s, _) => Either::B(s.captured().map(CapturedResult::MySql)),
        }
    }

    // ----- pipelines (PostgreSQL) -----

    pub fn queue(&mut self, stmt: StmtId, params: &[Value<'_>]) {
        if let Session::Pg(s) = self {
            s.queue(stmt, params)
        }
    }

    pub fn queue_sync(&mut self) {
        if let Session::Pg(s) = self {
            s.queue_sync()
        }
    }

    pub async fn flush(&mut self) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.flush().await,
            Session::MySql(..) => Err(pg_only("a pipeline")),
        }
    }

    pub async fn read_result(&mut self) -> Result<StmtResult, Error> {
        match self {
            Session::Pg(s) => s.read_result().await,
            Session::MySql(..) => Err(pg_only("a pipeline")),
        }
    }

    pub async fn read_ready(&mut self) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.read_ready().await,
            Session::MySql(..) => Err(pg_only("a pipeline")),
        }
    }

    // ----- state -----

    /// False once the session must be dropped (I/O error, protocol violation, lost connection).
    pub fn is_usable(&self) -> bool {
        match self {
            Session::Pg(s) => s.is_usable(),
            Session::MySql(s, _) => s.is_usable(),
        }
    }

    /// `b'I'` idle, `b'T'` in a transaction, `b'E'` in a failed one (PostgreSQL only).
    pub fn transaction_status(&self) -> u8 {
        match self {
            Session::Pg(s) => s.transaction_status(),
            Session::MySql(s, _) => s.transaction_status(),
        }
    }

    /// Transactions this session saw the server commit (explicit COMMITs and autocommitted
    /// statements that write), for the commit check.
    pub fn server_commits(&self) -> u64 {
        match self {
            Session::Pg(s) => s.server_commits(),
            Session::MySql(s, _) => s.server_commits(),
        }
    }

    /// The statements this session's server completed and refused, by kind, with their rows:
    /// the client's side of the statement ledger (`measure::ledger`).
    pub fn tally(&self) -> &measure::ledger::Tally {
        match self {
            Session::Pg(s) => s.tally(),
            Session::MySql(s, _) => s.tally(),
        }
    }

    /// Leave this session out of the process's record of closed sessions (its statements are
    /// counted apart: the statement ledger's baseline).
    pub fn unrecorded(&mut self) {
        match self {
            Session::Pg(s) => s.unrecorded(),
            Session::MySql(s, _) => s.unrecorded(),
        }
    }

    /// MySQL: the COMMIT statements that committed (part of what its `Com_commit` counts);
    /// PostgreSQL: the commits seen on the wire, as [`Session::server_commits`].
    pub fn explicit_commits(&self) -> u64 {
        match self {
            Session::Pg(s) => s.server_commits(),
            Session::MySql(s, _) => s.explicit_commits(),
        }
    }

    /// MySQL: the COMMIT statements the server answered with an error (on Galera, a
    /// certification failure or a brute-force abort); PostgreSQL: 0 (not counted).
    pub fn failed_commits(&self) -> u64 {
        match self {
            Session::Pg(_) => 0,
            Session::MySql(s, _) => s.commit_statements() - s.explicit_commits(),
        }
    }

    /// PostgreSQL: the commits of Parse messages (prepared statements count one each in
    /// xact_commit); MySQL: none.
    pub fn parse_commits(&self) -> u64 {
        match self {
            Session::Pg(s) => s.parse_commits(),
            Session::MySql(..) => 0,
        }
    }

    pub fn has_notices(&self) -> bool {
        match self {
            Session::Pg(s) => s.has_notices(),
            Session::MySql(..) => false,
        }
    }

    pub fn take_notices(&mut self) -> Vec<DbError> {
        match self {
            Session::Pg(s) => s.take_notices(),
            Session::MySql(..) => Vec::new(),
        }
    }

    /// The server's id for this connection (PostgreSQL's backend pid, MySQL's connection id).
    pub fn backend_pid(&self) -> i32 {
        match self {
            Session::Pg(s) => s.backend_pid(),
            Session::MySql(s, _) => s.connection_id() as i32,
        }
    }

    /// Whether the last statement's result came through COPY (PostgreSQL).
    pub fn copied(&self) -> bool {
        match self {
            Session::Pg(s) => s.copied(),
            Session::MySql(..) => false,
        }
    }

    /// Whether the session can move onto an io_uring ring (a plain socket, either protocol).
    pub fn can_use_ring(&self) -> bool {
        match self {
            Session::Pg(s) => s.can_use_ring(),
            Session::MySql(s, _) => s.can_use_ring(),
        }
    }

    pub fn use_ring(&mut self) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.use_ring(),
            Session::MySql(s, _) => s.use_ring(),
        }
    }

    /// Whether the session can go into blocking mode (a plain socket, either protocol).
    pub fn can_block(&self) -> bool {
        match self {
            Session::Pg(s) => s.can_block(),
            Session::MySql(s, _) => s.can_block(),
        }
    }

    /// Blocking mode for a thread-per-client run (`pg::PlainSocket::use_blocking`).
    pub fn use_blocking(&mut self, unblock: std::sync::Arc<pg::Unblock>) -> Result<(), Error> {
        match self {
            Session::Pg(s) => s.use_blocking(unblock),
            Session::MySql(s, _) => s.use_blocking(unblock),
        }
    }

    /// Whether the session failed because a blocking wait was given up at the run's end (what
    /// it had in flight may or may not have happened on the server).
    pub fn released(&self) -> bool {
        match self {
            Session::Pg(s) => s.released(),
            Session::MySql(s, _) => s.released(),
        }
    }

    /// The session's socket descriptor (`pg::Session::socket_fd`).
    pub fn socket_fd(&self) -> Option<std::os::fd::RawFd> {
        match self {
            Session::Pg(s) => s.socket_fd(),
            Session::MySql(s, _) => s.socket_fd(),
        }
    }

    /// Which endpoint of `target` this session landed on (its index in the host list).
    pub fn endpoint_index(&self, target: &Target) -> Option<usize> {
        match (self, target) {
            (Session::Pg(s), Target::Pg(c)) => c.hosts.iter().position(|h| h == s.host()),
            (Session::MySql(_, key), Target::MySql(list)) => {
                list.iter().position(|c| endpoint_key(c) == **key)
            }
            _ => None,
        }
    }

    pub async fn close(self) {
        match self {
            Session::Pg(s) => s.close().await,
            Session::MySql(s, _) => s.close().await,
        }
    }
}
