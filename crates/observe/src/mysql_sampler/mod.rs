//! The MySQL/MariaDB sampling loop: one session (plus one per other Galera node), one thread, one
//! current-thread runtime — the shape both protocols share (`sampling`), with MySQL's sources.
//!
//! Owns the observer's sessions on a MySQL-protocol target and everything read through them: the
//! probe at start (performance_schema ON and collecting? PROCESS privilege? MariaDB or MySQL?
//! Galera?), with a note for each thing that cannot be seen and how to fix it; the activity
//! sample every `sample_interval` (the sessions of `performance_schema.threads`, or of
//! `information_schema.PROCESSLIST` without it, with each session's current `performance_schema`
//! wait and InnoDB transaction state); `SHOW GLOBAL STATUS` every `counter_interval` (and every
//! Galera node's `wsrep_*` status); MariaDB's prepared statements while they live; the
//! window-start and end snapshots of the cumulative views (status, statement digests, waits by
//! event); OS readings when the server is on this machine; folding it all into
//! [`ServerMetrics`]. SQL and parsing are in `mysql_sql`, with the manual pages they follow.
//!
//! Must not touch: the engine's sessions or runtimes, the terminal, anything on the server that
//! writes. Every statement is a read (`SELECT`, `SHOW`) or a session setting (`SET SESSION`).
//! None is a `COMMIT`, so the run's commit count (`Com_commit`) is not disturbed at all; the
//! statement counters that do move (`Com_select`, `Questions`, `Created_tmp_tables` for the
//! `information_schema` reads) include the observer's statements, which [`ObserverCost::queries`]
//! counts; the text summary shows none of those. The sessions are closed before `finish` returns, so the commit check, which waits
//! for sessions other than its own to go, does not wait for them.
//!
//! Why the session has no default database: MySQL's digests drop comments, so the observer's
//! statements, tagged as PostgreSQL's are (for other observers' processlist reads), cannot be
//! told from the workload's by their tag there; connected to no database they are counted
//! under `SCHEMA_NAME` NULL and the workload's under its own database.
//!
//! What is load: the clients' sessions running a command. The server's own threads (a
//! replica's `Binlog Dump` session, replication's and Galera's appliers, the event scheduler's
//! workers) and other observers' sessions are counted apart by kind
//! ([`ActivitySample::background`]), never in the average active sessions or the wait events;
//! this session itself is in neither.
//!
//! With several endpoints the server metrics are the first one's (noted), except on a Galera
//! cluster, where every node's flow control, queues and conflicts are its own: each node gets a
//! session that reads its `wsrep_*` status every second ([`ServerMetrics::nodes`]).

mod deltas;
mod probe;

use std::collections::BTreeMap;
use std::time::Instant;

use measure::server::{
    ActivitySample, BackgroundSessions, CounterSample, NodeMetrics, ServerMetrics, StatementDelta,
    WaitTime, CPU, MYSQL_PREFIX,
};
use sut::mysql::{Conninfo, Session};
use sut::Error as DbErr;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::mysql_sql::{self as sql, Caps};
use crate::os;
use crate::sampler::Ctl;
use crate::sampling::{self, note, Flavour, Record};
use crate::{Error, Options};

/// Waits by time kept in the result.
const TOP_WAITS: usize = 20;

/// Up to this many prepared statements on the server, they are read at every activity sample
/// (a few clients' dozen statements each: well under a millisecond); more, once a counter
/// interval. A statement's statistics go with its session, so what it ran after its last read
/// is lost: the more often read, the less.
const PREPARED_EVERY_SAMPLE: usize = 400;

/// The sources read by [`MySqlSampler::read_source`]: (topic, what, what is lost without it).
const COUNTERS: (&str, &str, &str) = ("counters", "SHOW GLOBAL STATUS", "no counters");
const DIGESTS: (&str, &str, &str) = (
    "performance_schema",
    "statement digests",
    "top SQL is incomplete",
);
const PREPARED: (&str, &str, &str) = (
    "performance_schema",
    "prepared statements",
    "top SQL is incomplete",
);
const WAITS: (&str, &str, &str) = ("performance_schema", "waits by event", "no waits by time");

/// One digest's counters.
#[derive(Clone, Debug, Default)]
struct DigestRow {
    text: Option<String>,
    calls: f64,
    /// Picoseconds.
    time_ps: f64,
    rows: f64,
    examined: f64,
}

impl DigestRow {
    /// Columns 2 to 7 of a digest's or a prepared statement's row (`mysql_sql::digests`,
    /// `mysql_sql::prepared`): text, calls, time, rows sent and affected, rows examined.
    fn read(r: &[Option<String>]) -> DigestRow {
        DigestRow {
            text: r[2].clone(),
            calls: sql::num(&r[3]),
            time_ps: sql::num(&r[4]),
            rows: sql::num(&r[5]) + sql::num(&r[6]),
            examined: sql::num(&r[7]),
        }
    }
}

/// (schema, digest) as the digest table keys its rows.
type DigestKey = (Option<String>, Option<String>);

/// (owner thread, statement id): one prepared statement of one session.
type PreparedKey = (String, String);

/// One snapshot of the cumulative sources (window start or end).
#[derive(Clone, Debug, Default)]
struct Snapshot {
    at: Option<Instant>,
    counters: BTreeMap<String, f64>,
    digests: Option<BTreeMap<DigestKey, DigestRow>>,
    /// event name -> (count, picoseconds).
    waits: Option<BTreeMap<String, (f64, f64)>>,
    /// MariaDB's prepared statements (their text in `DigestRow::text`).
    prepared: Option<BTreeMap<PreparedKey, DigestRow>>,
    /// `statement/com/Execute` executions server-wide.
    executions: Option<f64>,
    /// Per other Galera node: its `wsrep_*` counters.
    nodes: Vec<BTreeMap<String, f64>>,
}

/// Another node of a Galera cluster, read for its `wsrep_*` status only.
struct Node {
    name: String,
    session: Option<Session>,
    counters: Vec<(Instant, BTreeMap<String, f64>)>,
}

pub struct MySqlSampler {
    session: Session,
    conn: Conninfo,
    endpoint: String,
    caps: Caps,
    /// Activity samples, each with its background sessions by (kind, wait event).
    samples: Vec<(Instant, ActivitySample, BackgroundSessions)>,
    rec: Record,
    /// The server's process, when it is on this machine and could be found.
    server_pid: Option<i32>,
    baseline: Snapshot,
    nodes: Vec<Node>,
    wsrep_sql: String,
    /// `INNODB_METRICS`' enabled metrics (with the PROCESS privilege), read with the status.
    metrics_sql: Option<String>,
    activity_sql: String,
    counters_ok: bool,
    digests_ok: bool,
    waits_ok: bool,
    prepared_ok: bool,
    /// Each prepared statement as last read: read every counter interval during the run,
    /// since a statement's row goes when its session closes, before the end snapshot.
    prepared_last: BTreeMap<PreparedKey, DigestRow>,
    /// Rows of the last read of prepared statements.
    prepared_rows: usize,
}

/// Whether the target is this machine: a unix socket or a loopback address.
pub fn is_local(ci: &Conninfo) -> bool {
    ci.socket.is_some() || matches!(ci.host.as_str(), "localhost" | "127.0.0.1" | "::1" | "")
}

/// `host:port`, or the socket path.
fn endpoint_name(ci: &Conninfo) -> String {
    match &ci.socket {
        Some(p) => p.display().to_string(),
        None => format!("{}:{}", ci.host, ci.port),
    }
}

/// `CURRENT_USER()` (`user@host`) as GRANT names an account: `'user'@'host'`.
fn account(current_user: &str) -> String {
    let (user, host) = current_user.rsplit_once('@').unwrap_or((current_user, "%"));
    format!("{}@{}", sql::quote_literal(user), sql::quote_literal(host))
}

/// The server's process from one of its threads (`/proc/<tid>/status` names the thread group),
/// if it is a MySQL or MariaDB server on this machine.
fn server_process(tid: i64) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let pid: i32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    matches!(comm.trim(), "mariadbd" | "mysqld").then_some(pid)
}

impl MySqlSampler {
    /// Connect to the first endpoint that answers, in the target's order (and, on a Galera
    /// cluster, to the others), probe, and take the first snapshot.
    pub async fn connect(endpoints: &[Conninfo], opts: Options) -> Result<MySqlSampler, Error> {
        let mut unreachable = Vec::new();
        let mut found = None;
        for (i, ci) in endpoints.iter().enumerate() {
            let mut conn = ci.clone();
            conn.database = None;
            match Session::connect(&conn).await {
                Ok(session) => {
                    found = Some((i, conn, session));
                    break;
                }
                Err(e) if i + 1 == endpoints.len() => return Err(Error::Connect(e)),
                Err(e) => unreachable.push(format!("{} ({e})", endpoint_name(&conn))),
            }
        }
        let Some((first, conn, session)) = found else {
            return Err(Error::Unsupported(
                "a MySQL target without an endpoint".into(),
            ));
        };
        let schema = endpoints[first].database.clone().filter(|d| !d.is_empty());
        let local = opts.local.unwrap_or_else(|| is_local(&conn));
        let caps = Caps {
            mariadb: session.is_mariadb(),
            version_num: sql::version_num(session.server_version()),
            schema,
            ..Default::default()
        };
        let mut s = MySqlSampler {
            session,
            endpoint: endpoint_name(&conn),
            conn,
            caps,
            samples: Vec::new(),
            rec: Record::new(opts, local),
            server_pid: None,
            baseline: Snapshot::default(),
            nodes: Vec::new(),
            wsrep_sql: format!("{} {}", crate::sql::TAG, sql::status(sql::WSREP)),
            metrics_sql: None,
            activity_sql: String::new(),
            counters_ok: true,
            digests_ok: false,
            waits_ok: false,
            prepared_ok: false,
            prepared_last: BTreeMap::new(),
            prepared_rows: 0,
        };
        if !unreachable.is_empty() {
            s.rec.notes.push(note(
                "endpoints",
                format!(
                    "not reachable when the run started: {}; the server metrics are {}'s",
                    unreachable.join(", "),
                    s.endpoint
                ),
            ));
        }
        s.probe().await?;
        s.activity_sql = sql::activity(&s.caps);
        s.probe_history().await;
        if s.caps.wsrep {
            let others: Vec<Conninfo> = endpoints[first + 1..].to_vec();
            s.connect_nodes(&others).await;
        } else if endpoints.len() > 1 {
            s.rec.notes.push(note(
                "endpoints",
                format!(
                    "{} endpoints: the server metrics are {}'s only (every node is read on its \
                     own only on a Galera cluster, for its wsrep status)",
                    endpoints.len(),
                    s.endpoint
                ),
            ));
        }
        if s.rec.os.is_some() && s.rec.local {
            s.find_server_process().await;
            if s.server_pid.is_some() {
                s.watch_devices().await;
            }
        }
        let pids: Vec<i32> = s.server_pid.into_iter().collect();
        if let Some(os) = s.rec.os.as_mut() {
            os.single_process();
            os.read(&pids);
        }
        s.baseline = s.snapshot(false).await;
        Ok(s)
    }

    /// A statement on the main session, tagged ([`crate::sql::TAG`]: `mysql_sql`'s header says
    /// why), counted in the cost.
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbErr> {
        let t = Instant::now();
        self.rec.cost.queries += 1;
        let r = (self.session)
            .simple_query(&format!("{} {sql}", crate::sql::TAG))
            .await;
        self.rec.cost.busy_ms += t.elapsed().as_secs_f64() * 1000.0;
        r
    }

    /// `sql`'s rows while the source `ok` picks is readable. Its first error on a session still
    /// usable turns it off, with a note under `topic`: "`what` could not be read (the error):
    /// `lost`" (a broken session is reopened, and the source read again).
    async fn read_source(
        &mut self,
        sql: &str,
        ok: fn(&mut Self) -> &mut bool,
        (topic, what, lost): (&str, &str, &str),
    ) -> Option<Vec<Vec<Option<String>>>> {
        if !*ok(self) {
            return None;
        }
        match self.query(sql).await {
            Ok(rows) => Some(rows),
            Err(e) => {
                if self.session.is_usable() {
                    *ok(self) = false;
                    self.rec.notes.push(note(
                        topic,
                        format!("{what} could not be read ({e}): {lost}"),
                    ));
                }
                None
            }
        }
    }

    async fn read_counters(&mut self) -> Option<BTreeMap<String, f64>> {
        let sql = sql::all_status();
        let rows = self
            .read_source(&sql, |s| &mut s.counters_ok, COUNTERS)
            .await?;
        let mut m = BTreeMap::new();
        sql::status_numbers(&rows, &mut m);
        if let Some(q) = self.metrics_sql.clone() {
            if let Ok(rows) = self.query(&q).await {
                sql::metrics_numbers(&rows, &mut m);
            }
        }
        Some(m)
    }

    /// Every other node's `wsrep_*` status; a node whose session breaks is read no more.
    async fn read_nodes(&mut self) -> Vec<BTreeMap<String, f64>> {
        let mut out = Vec::new();
        for n in &mut self.nodes {
            let mut m = BTreeMap::new();
            if let Some(s) = n.session.as_mut() {
                let t = Instant::now();
                self.rec.cost.queries += 1;
                match s.simple_query(&self.wsrep_sql).await {
                    Ok(rows) => sql::status_numbers(&rows, &mut m),
                    Err(e) => {
                        self.rec.cost.errors += 1;
                        if !s.is_usable() {
                            n.session = None;
                            self.rec.notes.push(note(
                                "galera",
                                format!(
                                    "node {}'s session broke ({e}): its wsrep status was read \
                                     no more",
                                    n.name
                                ),
                            ));
                        }
                    }
                }
                self.rec.cost.busy_ms += t.elapsed().as_secs_f64() * 1000.0;
            }
            out.push(m);
        }
        out
    }

    async fn read_digests(&mut self, text: bool) -> Option<BTreeMap<DigestKey, DigestRow>> {
        let sql = sql::digests(&self.caps, text);
        let rows = self
            .read_source(&sql, |s| &mut s.digests_ok, DIGESTS)
            .await?;
        Some(
            rows.into_iter()
                .filter(|r| r.len() == 8)
                .map(|r| ((r[0].clone(), r[1].clone()), DigestRow::read(&r)))
                .collect(),
        )
    }

    /// MariaDB's prepared statements now; each also updates [`MySqlSampler::prepared_last`].
    async fn read_prepared(&mut self) -> Option<BTreeMap<PreparedKey, DigestRow>> {
        let sql = sql::prepared(&self.caps);
        let rows = self
            .read_source(&sql, |s| &mut s.prepared_ok, PREPARED)
            .await?;
        let now: BTreeMap<PreparedKey, DigestRow> = rows
            .into_iter()
            .filter(|r| r.len() == 8)
            .map(|r| {
                (
                    (
                        r[0].clone().unwrap_or_default(),
                        r[1].clone().unwrap_or_default(),
                    ),
                    DigestRow::read(&r),
                )
            })
            .collect();
        for (k, v) in &now {
            self.prepared_last.insert(k.clone(), v.clone());
        }
        self.prepared_rows = now.len();
        Some(now)
    }

    async fn read_executions(&mut self) -> Option<f64> {
        if !self.prepared_ok {
            return None;
        }
        let rows = self.query(&sql::executions()).await.ok()?;
        rows.first().and_then(|r| r.first()).map(sql::num)
    }

    async fn read_waits(&mut self) -> Option<BTreeMap<String, (f64, f64)>> {
        let sql = sql::wait_summary(self.caps.waits_by_user);
        let rows = self.read_source(&sql, |s| &mut s.waits_ok, WAITS).await?;
        Some(
            rows.into_iter()
                .filter(|r| r.len() == 3)
                .filter_map(|r| {
                    let name = r[0].clone()?;
                    Some((name, (sql::num(&r[1]), sql::num(&r[2]))))
                })
                .collect(),
        )
    }

    async fn snapshot(&mut self, text: bool) -> Snapshot {
        let counters = self.read_counters().await.unwrap_or_default();
        let digests = self.read_digests(text).await;
        let prepared = self.read_prepared().await;
        let executions = self.read_executions().await;
        let waits = self.read_waits().await;
        let nodes = self.read_nodes().await;
        Snapshot {
            at: Some(Instant::now()),
            counters,
            digests,
            waits,
            prepared,
            executions,
            nodes,
        }
    }

    async fn sample_activity(&mut self) -> Result<(), DbErr> {
        let at = Instant::now();
        let sql = self.activity_sql.clone();
        let rows = self.query(&sql).await?;
        // One session per processlist id: a thread may have nested current waits (a mutex
        // inside a file wait); the latest (highest event id) is where it is now.
        struct Seen {
            command: Option<String>,
            state: Option<String>,
            wait: Option<(f64, String)>,
            trx: Option<String>,
            /// A background session's kind; `None` for a client's.
            kind: Option<String>,
        }
        let mut by_id: BTreeMap<String, Seen> = BTreeMap::new();
        for r in rows.into_iter().filter(|r| r.len() == 10) {
            let id = r[0].clone().unwrap_or_default();
            let wait = r[4].clone().map(|w| (sql::num(&r[5]), w));
            let e = by_id.entry(id).or_insert_with(|| Seen {
                command: r[2].clone(),
                state: r[3].clone(),
                wait: None,
                trx: r[6].clone(),
                kind: sql::background_kind(
                    r[9].as_deref() == Some("1"),
                    r[7].as_deref(),
                    r[8].as_deref(),
                    r[1].as_deref(),
                    r[2].as_deref(),
                ),
            });
            if let Some(w) = wait {
                if e.wait.as_ref().is_none_or(|cur| w.0 > cur.0) {
                    e.wait = Some(w);
                }
            }
        }
        let mut s = ActivitySample::default();
        let mut background: BackgroundSessions = BTreeMap::new();
        for x in by_id.values() {
            let command = x.command.as_deref().unwrap_or("");
            let idle = command == "Sleep";
            if x.trx.as_deref() == Some("LOCK WAIT") {
                s.lock_waits += 1;
            }
            // Active: running a command; the server's daemons are always there and are not
            // counted at all. The server's other threads (replication, events, Galera's
            // appliers while they apply) are counted apart from the clients' load.
            if !idle && command != "Daemon" {
                let event = if self.caps.waits_current {
                    match &x.wait {
                        Some((_, name)) => sql::wait_event(name),
                        None => CPU.to_string(),
                    }
                } else {
                    sql::stage_event(x.state.as_deref())
                };
                match &x.kind {
                    Some(kind) => {
                        *s.background.entry(kind.clone()).or_default() += 1;
                        *background.entry((kind.clone(), event)).or_default() += 1;
                    }
                    None => {
                        s.active += 1;
                        *s.waits.entry(event).or_default() += 1;
                    }
                }
            }
            if x.kind.is_none() {
                let st = match (idle, x.trx.is_some()) {
                    (false, _) => "active",
                    (true, true) => "idle in transaction",
                    (true, false) => "idle",
                };
                *s.states.entry(st.to_string()).or_default() += 1;
            }
        }
        self.samples.push((at, s, background));
        self.rec.cost.samples += 1;
        Ok(())
    }

    /// The loop (module `sampling`), until [`Ctl::Finish`] or the handle is dropped.
    pub async fn run(self, ctl: UnboundedReceiver<Ctl>) -> ServerMetrics {
        sampling::run(self, ctl).await
    }

    async fn finish(mut self) -> ServerMetrics {
        let end = if self.session.is_usable() {
            self.snapshot(true).await
        } else {
            Snapshot::default()
        };
        self.rec.cost.cpu_ms = os::thread_cpu_ms();
        let w = self.rec.window(self.baseline.at, end.at);
        let activity = w.activity(self.samples.iter().map(|(at, s, b)| (*at, s, b)));

        let (deltas, reset) = deltas::counters(&self.baseline.counters, &end.counters);
        if reset {
            self.rec.notes.push(note(
                "counters",
                "status counters were reset (FLUSH STATUS) during the run: some deltas are \
                 negative and wrong",
            ));
        }
        let (statements, statements_total) = self.statement_deltas(&end);
        let wait_times = self.wait_deltas(&end);
        let nodes = self.node_metrics(&end, &|at| w.rel(at));
        // Closed before returning, not when dropped: the commit check waits for sessions other
        // than its own to go before it reads Com_commit.
        for n in &mut self.nodes {
            if let Some(s) = n.session.take() {
                s.close().await;
            }
        }
        let (version_num, mariadb) = (self.caps.version_num, self.caps.mariadb);
        self.session.close().await;
        let product = if mariadb { "MariaDB" } else { "MySQL" };
        ServerMetrics {
            // A running statement has no digest yet (see the note): nothing to join on.
            query_waits: Vec::new(),
            statements,
            statements_total,
            deltas,
            wait_times,
            nodes,
            ..(self.rec).metrics(&w, activity, version_num, product, sql::always_kept)
        }
    }
}

impl Flavour for MySqlSampler {
    type Err = DbErr;

    fn record(&mut self) -> &mut Record {
        &mut self.rec
    }

    fn usable(&self) -> bool {
        self.session.is_usable()
    }

    async fn open_window(&mut self) {
        // Statements gone before the window opened are not the run's.
        self.prepared_last.clear();
        self.baseline = self.snapshot(false).await;
    }

    async fn sample_activity(&mut self) -> Result<(), DbErr> {
        MySqlSampler::sample_activity(self).await
    }

    async fn read_more(&mut self, counters_due: bool) {
        // Prepared statements only during the measured run: before it, the baseline has them.
        if self.rec.t0.is_some() && (counters_due || self.prepared_rows <= PREPARED_EVERY_SAMPLE) {
            self.read_prepared().await;
        }
        if counters_due {
            if let Some(c) = self.read_counters().await {
                self.rec.counters.push((Instant::now(), c));
            }
            let nodes = self.read_nodes().await;
            let now = Instant::now();
            for (n, c) in self.nodes.iter_mut().zip(nodes) {
                if !c.is_empty() {
                    n.counters.push((now, c));
                }
            }
        }
    }

    fn server_pids(&self) -> Vec<i32> {
        self.server_pid.into_iter().collect()
    }

    async fn reopen(&mut self) -> Result<bool, DbErr> {
        self.session = Session::connect(&self.conn).await?;
        let setup = sql::session_setup(&self.caps);
        let _ = self.query(&setup).await;
        Ok(true)
    }

    async fn finish(self) -> ServerMetrics {
        MySqlSampler::finish(self).await
    }
}
