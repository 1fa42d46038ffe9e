//! The MySQL/MariaDB sampling loop: one session (plus one per other Galera node), one thread, one
//! current-thread runtime — the PostgreSQL sampler's shape (`sampler`), with MySQL's sources.
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
//! statements cannot be tagged as PostgreSQL's are; connected to no database they are counted
//! under `SCHEMA_NAME` NULL and the workload's under its own database.
//!
//! With several endpoints the server metrics are the first one's (noted), except on a Galera
//! cluster, where every node's flow control, queues and conflicts are its own: each node gets a
//! session that reads its `wsrep_*` status every second ([`ServerMetrics::nodes`]).

use std::collections::BTreeMap;
use std::time::Instant;

use measure::server::{
    wait_totals, ActivitySample, CounterSample, NodeMetrics, Note, ObserverCost, OsSample,
    ServerMetrics, StatementDelta, WaitTime, CPU, MYSQL_PREFIX,
};
use target::mysql::{Conninfo, Session};
use target::Error as DbErr;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::mysql_sql::{self as sql, Caps};
use crate::os::{self, OsReader};
use crate::sampler::Ctl;
use crate::{Error, Options};

/// Waits by time kept in the result.
const TOP_WAITS: usize = 20;

/// Up to this many prepared statements on the server, they are read at every activity sample
/// (a few clients' dozen statements each: well under a millisecond); more, once a counter
/// interval. A statement's statistics go with its session, so what it ran after its last read
/// is lost: the more often read, the less.
const PREPARED_EVERY_SAMPLE: usize = 400;

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
    opts: Options,
    caps: Caps,
    notes: Vec<Note>,
    cost: ObserverCost,
    started: Instant,
    t0: Option<Instant>,
    samples: Vec<(Instant, ActivitySample)>,
    counters: Vec<(Instant, BTreeMap<String, f64>)>,
    os_samples: Vec<(Instant, OsSample)>,
    os: Option<OsReader>,
    /// The server's process, when it is on this machine and could be found.
    server_pid: Option<i32>,
    baseline: Snapshot,
    nodes: Vec<Node>,
    status_sql: String,
    wsrep_sql: String,
    /// `INNODB_METRICS`' history list length (MySQL, which has no status variable for it).
    history_sql: Option<String>,
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

fn note(topic: &str, message: impl Into<String>) -> Note {
    Note {
        topic: topic.into(),
        message: message.into(),
    }
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
            opts,
            caps,
            notes: Vec::new(),
            cost: ObserverCost {
                connections: 1,
                ..Default::default()
            },
            started: Instant::now(),
            t0: None,
            samples: Vec::new(),
            counters: Vec::new(),
            os_samples: Vec::new(),
            os: if local { OsReader::new() } else { None },
            server_pid: None,
            baseline: Snapshot::default(),
            nodes: Vec::new(),
            status_sql: String::new(),
            wsrep_sql: sql::status(sql::WSREP),
            history_sql: None,
            activity_sql: String::new(),
            counters_ok: true,
            digests_ok: false,
            waits_ok: false,
            prepared_ok: false,
            prepared_last: BTreeMap::new(),
            prepared_rows: 0,
        };
        if local && s.os.is_none() {
            s.notes.push(note(
                "os",
                "the server is local but /proc cannot be read: no OS metrics",
            ));
        }
        if !unreachable.is_empty() {
            s.notes.push(note(
                "endpoints",
                format!(
                    "not reachable when the run started: {}; the server metrics are {}'s",
                    unreachable.join(", "),
                    s.endpoint
                ),
            ));
        }
        s.probe().await?;
        s.status_sql = sql::status(&sql::status_names(&s.caps));
        s.activity_sql = sql::activity(&s.caps);
        s.probe_history().await;
        if s.caps.wsrep {
            let others: Vec<Conninfo> = endpoints[first + 1..].to_vec();
            s.connect_nodes(&others).await;
        } else if endpoints.len() > 1 {
            s.notes.push(note(
                "endpoints",
                format!(
                    "{} endpoints: the server metrics are {}'s only (every node is read on its \
                     own only on a Galera cluster, for its wsrep status)",
                    endpoints.len(),
                    s.endpoint
                ),
            ));
        }
        if s.os.is_some() {
            s.find_server_process().await;
            let pids: Vec<i32> = s.server_pid.into_iter().collect();
            if let Some(os) = s.os.as_mut() {
                os.single_process();
                os.read(&pids);
            }
        }
        s.baseline = s.snapshot(false).await;
        Ok(s)
    }

    /// A statement on the main session, counted in the cost.
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbErr> {
        let t = Instant::now();
        self.cost.queries += 1;
        let r = self.session.simple_query(sql).await;
        self.cost.busy_ms += t.elapsed().as_secs_f64() * 1000.0;
        r
    }

    async fn probe(&mut self) -> Result<(), Error> {
        let rows = self.query(&sql::variables()).await.map_err(Error::Query)?;
        let var = |name: &str| -> Option<String> {
            rows.iter()
                .find(|r| r.first().and_then(|c| c.as_deref()) == Some(name))
                .and_then(|r| r.get(1).cloned().flatten())
        };
        let pfs_on = matches!(var("performance_schema").as_deref(), Some("ON" | "1"));
        self.caps.wsrep = matches!(var("wsrep_on").as_deref(), Some("ON" | "1"));
        // A limit this server does not know is no reason not to observe.
        if let Err(e) = self.query(&sql::session_setup(&self.caps)).await {
            if !self.session.is_usable() {
                return Err(Error::Query(e));
            }
        }
        let current = self
            .query("SELECT CURRENT_USER()")
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
            .unwrap_or_else(|| self.conn.user.clone());
        let user = account(&current);
        self.caps.process = self.query(&sql::process_probe()).await.is_ok();
        if !self.caps.process {
            self.notes.push(note(
                "privileges",
                format!(
                    "user {user} lacks the PROCESS privilege: other users' sessions, InnoDB \
                     transactions and row lock waits (information_schema.INNODB_TRX){} are not \
                     seen; GRANT PROCESS ON *.* TO {user}",
                    if self.caps.mariadb {
                        ""
                    } else {
                        " and the history list length (INNODB_METRICS)"
                    }
                ),
            ));
        }
        if !pfs_on {
            self.notes.push(note(
                "performance_schema",
                "performance_schema is OFF: no wait events (sessions are shown by their thread \
                 state), no waits by time and no top statements; start the server with \
                 --performance-schema=ON (performance_schema = ON in its configuration file; it \
                 cannot be turned on while the server runs)",
            ));
            return Ok(());
        }
        let consumers = match self.query(&sql::consumers()).await {
            Ok(rows) => rows,
            Err(e) => {
                self.notes.push(note(
                    "performance_schema",
                    format!(
                        "performance_schema cannot be read ({e}): no wait events, waits by time \
                         or top statements; GRANT SELECT ON performance_schema.* TO {user}"
                    ),
                ));
                return Ok(());
            }
        };
        self.caps.pfs = true;
        let on = |name: &str| {
            consumers.iter().any(|r| {
                r.first().and_then(|c| c.as_deref()) == Some(name)
                    && r.get(1).and_then(|c| c.as_deref()) == Some("YES")
            })
        };
        let enable = |names: &[&str]| {
            let list: Vec<String> = names.iter().map(|n| sql::quote_literal(n)).collect();
            let opts: Vec<String> = names
                .iter()
                .map(|n| format!("--performance-schema-consumer-{}=ON", n.replace('_', "-")))
                .collect();
            format!(
                "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN \
                 ({}), or start the server with {}",
                list.join(", "),
                opts.join(" ")
            )
        };
        let global = on("global_instrumentation") && on("thread_instrumentation");
        if !global {
            self.notes.push(note(
                "performance_schema",
                format!(
                    "performance_schema collects nothing (consumers global_instrumentation and \
                     thread_instrumentation must be on): no wait events, waits by time or top \
                     statements; {}",
                    enable(&["global_instrumentation", "thread_instrumentation"])
                ),
            ));
            return Ok(());
        }
        self.caps.waits_current = on("events_waits_current");
        if self.caps.waits_current {
            self.notes.push(note(
                "query_id",
                "waits are not joined to statements: performance_schema gives a running \
                 statement its digest only when it ends",
            ));
        } else {
            self.notes.push(note(
                "performance_schema",
                format!(
                    "the events_waits_current consumer is off (the default): active sessions are \
                     shown by their thread state (Stage:...), not their wait event; {}",
                    enable(&["events_waits_current"])
                ),
            ));
        }
        if on("statements_digest") {
            match self.query(&format!("{} LIMIT 0", sql::digests(&self.caps, true))).await {
                Ok(_) => {
                    self.caps.digests = true;
                    self.digests_ok = true;
                }
                Err(e) => self.notes.push(note(
                    "performance_schema",
                    format!("events_statements_summary_by_digest cannot be read ({e}): no top statements"),
                )),
            }
        } else {
            self.notes.push(note(
                "performance_schema",
                format!(
                    "the statements_digest consumer is off: no top statements; {}",
                    enable(&["statements_digest"])
                ),
            ));
        }
        if self
            .query(&format!("{} LIMIT 0", sql::wait_summary(true)))
            .await
            .is_ok()
        {
            self.caps.waits_by_user = true;
        }
        if !self.caps.waits_by_user {
            self.notes.push(note(
                "performance_schema",
                "events_waits_summary_by_user_by_event_name cannot be read: waits by time \
                 include the server's background threads (events_waits_summary_global_by_event_name)",
            ));
        }
        let waits = sql::wait_summary(self.caps.waits_by_user);
        match self.query(&format!("{waits} LIMIT 0")).await {
            Ok(_) => {
                self.caps.wait_summary = true;
                self.waits_ok = true;
            }
            Err(e) => self.notes.push(note(
                "performance_schema",
                format!(
                    "the wait summaries cannot be read ({e}): no waits \
                     by time"
                ),
            )),
        }
        // MariaDB counts a prepared statement's executions in its instance only while statement
        // events are collected (seen on 10.11: COUNT_EXECUTE stays 0 with the consumer off).
        if self.caps.mariadb && !on("events_statements_current") {
            self.notes.push(note(
                "performance_schema",
                format!(
                    "the events_statements_current consumer is off (the default): statements \
                     run through the binary protocol (prepared), which MariaDB does not digest, \
                     are missing from top SQL; {}",
                    enable(&["events_statements_current"])
                ),
            ));
        } else if self.caps.mariadb {
            match self
                .query(&format!("{} LIMIT 0", sql::prepared(&self.caps)))
                .await
            {
                Ok(_) => {
                    self.caps.prepared = true;
                    self.prepared_ok = true;
                }
                Err(e) => self.notes.push(note(
                    "performance_schema",
                    format!(
                        "prepared_statements_instances cannot be read ({e}): statements run \
                         through the binary protocol (prepared) are missing from top SQL"
                    ),
                )),
            }
        }
        // Instruments off are waits neither timed nor sampled.
        if let Ok(rows) = self.query(&sql::wait_instruments()).await {
            let off: Vec<String> = rows
                .iter()
                .filter(|r| r.len() == 3)
                .filter(|r| sql::num(&r[1]) < sql::num(&r[2]))
                .map(|r| {
                    format!(
                        "{} ({:.0} of {:.0} on)",
                        r[0].as_deref().unwrap_or("?"),
                        sql::num(&r[1]),
                        sql::num(&r[2])
                    )
                })
                .collect();
            if !off.is_empty() {
                self.notes.push(note(
                    "performance_schema",
                    format!(
                        "wait instruments that are off are neither timed nor sampled: {}; \
                         UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', \
                         TIMED = 'YES' WHERE NAME LIKE 'wait/%', or start the server with \
                         --performance-schema-instrument='wait/%=ON'",
                        off.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Where the history list length comes from: MariaDB's status variable, else MySQL's
    /// `INNODB_METRICS` (needs PROCESS and the metric enabled, as it is by default).
    async fn probe_history(&mut self) {
        let Some(first) = self.read_counters().await else {
            return;
        };
        if first.contains_key(&format!("{MYSQL_PREFIX}Innodb_history_list_length")) {
            return;
        }
        if !self.caps.process {
            return; // Said in the PROCESS note.
        }
        let col = self
            .query(&sql::metrics_columns())
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()));
        let Some(col) = col else {
            self.notes.push(note(
                "innodb_metrics",
                "information_schema.INNODB_METRICS has neither STATUS nor ENABLED: no history \
                 list length",
            ));
            return;
        };
        let q = sql::history_metric(&col);
        match self.query(&q).await {
            Ok(rows) => {
                let enabled = rows
                    .first()
                    .and_then(|r| r.get(1).cloned().flatten())
                    .is_some_and(|v| v == "1");
                if enabled {
                    self.caps.history_metric = true;
                    self.history_sql = Some(q);
                } else {
                    self.notes.push(note(
                        "innodb_metrics",
                        "the InnoDB metric trx_rseg_history_len is disabled: no history list \
                         length; SET GLOBAL innodb_monitor_enable = 'trx_rseg_history_len'",
                    ));
                }
            }
            Err(e) => self.notes.push(note(
                "innodb_metrics",
                format!("INNODB_METRICS cannot be read ({e}): no history list length"),
            )),
        }
    }

    async fn connect_nodes(&mut self, others: &[Conninfo]) {
        for ci in others {
            let mut ci = ci.clone();
            ci.database = None;
            let name = endpoint_name(&ci);
            match Session::connect(&ci).await {
                Ok(session) => {
                    self.cost.connections += 1;
                    self.nodes.push(Node {
                        name,
                        session: Some(session),
                        counters: Vec::new(),
                    });
                }
                Err(e) => self.notes.push(note(
                    "galera",
                    format!("node {name} cannot be reached ({e}): its wsrep status is not read"),
                )),
            }
        }
    }

    async fn find_server_process(&mut self) {
        let tid = self
            .query(&sql::own_os_thread(&self.caps))
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
            .and_then(|v| v.parse::<i64>().ok());
        self.server_pid = tid.and_then(server_process);
        if self.server_pid.is_none() {
            self.notes.push(note(
                "os",
                format!(
                    "the server's process is not visible from here (its thread {} is not a \
                     mariadbd or mysqld process on this machine): server CPU is not shown",
                    tid.map_or("?".into(), |t| t.to_string())
                ),
            ));
        }
    }

    async fn read_counters(&mut self) -> Option<BTreeMap<String, f64>> {
        if !self.counters_ok {
            return None;
        }
        let sql = self.status_sql.clone();
        match self.query(&sql).await {
            Ok(rows) => {
                let mut m = BTreeMap::new();
                sql::status_numbers(&rows, &mut m);
                if let Some(h) = self.history_sql.clone() {
                    if let Ok(rows) = self.query(&h).await {
                        if let Some(v) = rows.first().and_then(|r| r.first()) {
                            m.insert(
                                format!("{MYSQL_PREFIX}Innodb_history_list_length"),
                                sql::num(v),
                            );
                        }
                    }
                }
                Some(m)
            }
            Err(e) => {
                if self.session.is_usable() {
                    self.counters_ok = false;
                    self.notes.push(note(
                        "counters",
                        format!("SHOW GLOBAL STATUS could not be read ({e}): no counters"),
                    ));
                }
                None
            }
        }
    }

    /// Every other node's `wsrep_*` status; a node whose session breaks is read no more.
    async fn read_nodes(&mut self) -> Vec<BTreeMap<String, f64>> {
        let mut out = Vec::new();
        for n in &mut self.nodes {
            let mut m = BTreeMap::new();
            if let Some(s) = n.session.as_mut() {
                let t = Instant::now();
                self.cost.queries += 1;
                match s.simple_query(&self.wsrep_sql).await {
                    Ok(rows) => sql::status_numbers(&rows, &mut m),
                    Err(e) => {
                        self.cost.errors += 1;
                        if !s.is_usable() {
                            n.session = None;
                            self.notes.push(note(
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
                self.cost.busy_ms += t.elapsed().as_secs_f64() * 1000.0;
            }
            out.push(m);
        }
        out
    }

    async fn read_digests(&mut self, text: bool) -> Option<BTreeMap<DigestKey, DigestRow>> {
        if !self.digests_ok {
            return None;
        }
        match self.query(&sql::digests(&self.caps, text)).await {
            Ok(rows) => Some(
                rows.into_iter()
                    .filter(|r| r.len() == 8)
                    .map(|r| {
                        (
                            (r[0].clone(), r[1].clone()),
                            DigestRow {
                                text: r[2].clone(),
                                calls: sql::num(&r[3]),
                                time_ps: sql::num(&r[4]),
                                rows: sql::num(&r[5]) + sql::num(&r[6]),
                                examined: sql::num(&r[7]),
                            },
                        )
                    })
                    .collect(),
            ),
            Err(e) => {
                if self.session.is_usable() {
                    self.digests_ok = false;
                    self.notes.push(note(
                        "performance_schema",
                        format!("statement digests could not be read ({e}): top SQL is incomplete"),
                    ));
                }
                None
            }
        }
    }

    /// MariaDB's prepared statements now; each also updates [`MySqlSampler::prepared_last`].
    async fn read_prepared(&mut self) -> Option<BTreeMap<PreparedKey, DigestRow>> {
        if !self.prepared_ok {
            return None;
        }
        match self.query(&sql::prepared(&self.caps)).await {
            Ok(rows) => {
                let now: BTreeMap<PreparedKey, DigestRow> = rows
                    .into_iter()
                    .filter(|r| r.len() == 8)
                    .map(|r| {
                        (
                            (
                                r[0].clone().unwrap_or_default(),
                                r[1].clone().unwrap_or_default(),
                            ),
                            DigestRow {
                                text: r[2].clone(),
                                calls: sql::num(&r[3]),
                                time_ps: sql::num(&r[4]),
                                rows: sql::num(&r[5]) + sql::num(&r[6]),
                                examined: sql::num(&r[7]),
                            },
                        )
                    })
                    .collect();
                for (k, v) in &now {
                    self.prepared_last.insert(k.clone(), v.clone());
                }
                self.prepared_rows = now.len();
                Some(now)
            }
            Err(e) => {
                if self.session.is_usable() {
                    self.prepared_ok = false;
                    self.notes.push(note(
                        "performance_schema",
                        format!(
                            "prepared statements could not be read ({e}): top SQL is incomplete"
                        ),
                    ));
                }
                None
            }
        }
    }

    async fn read_executions(&mut self) -> Option<f64> {
        if !self.prepared_ok {
            return None;
        }
        let rows = self.query(&sql::executions()).await.ok()?;
        rows.first().and_then(|r| r.first()).map(sql::num)
    }

    async fn read_waits(&mut self) -> Option<BTreeMap<String, (f64, f64)>> {
        if !self.waits_ok {
            return None;
        }
        match self
            .query(&sql::wait_summary(self.caps.waits_by_user))
            .await
        {
            Ok(rows) => Some(
                rows.into_iter()
                    .filter(|r| r.len() == 3)
                    .filter_map(|r| {
                        let name = r[0].clone()?;
                        Some((name, (sql::num(&r[1]), sql::num(&r[2]))))
                    })
                    .collect(),
            ),
            Err(e) => {
                if self.session.is_usable() {
                    self.waits_ok = false;
                    self.notes.push(note(
                        "performance_schema",
                        format!("waits by event could not be read ({e}): no waits by time"),
                    ));
                }
                None
            }
        }
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
            user: Option<String>,
            command: Option<String>,
            state: Option<String>,
            wait: Option<(f64, String)>,
            trx: Option<String>,
        }
        let mut by_id: BTreeMap<String, Seen> = BTreeMap::new();
        for r in rows.into_iter().filter(|r| r.len() == 7) {
            let id = r[0].clone().unwrap_or_default();
            let wait = r[4].clone().map(|w| (sql::num(&r[5]), w));
            let e = by_id.entry(id).or_insert_with(|| Seen {
                user: r[1].clone(),
                command: r[2].clone(),
                state: r[3].clone(),
                wait: None,
                trx: r[6].clone(),
            });
            if let Some(w) = wait {
                if e.wait.as_ref().is_none_or(|cur| w.0 > cur.0) {
                    e.wait = Some(w);
                }
            }
        }
        let mut s = ActivitySample::default();
        for x in by_id.values() {
            let command = x.command.as_deref().unwrap_or("");
            let server_thread = sql::is_server_thread(x.user.as_deref(), x.command.as_deref());
            let idle = command == "Sleep";
            if x.trx.as_deref() == Some("LOCK WAIT") {
                s.lock_waits += 1;
            }
            // Active: running a command; the server's daemons are always there and are not
            // load (Galera's appliers, `system user`, are, while they apply).
            if !idle && command != "Daemon" {
                let event = if self.caps.waits_current {
                    match &x.wait {
                        Some((_, name)) => sql::wait_event(name),
                        None => CPU.to_string(),
                    }
                } else {
                    sql::stage_event(x.state.as_deref())
                };
                s.active += 1;
                *s.waits.entry(event).or_default() += 1;
            }
            if !server_thread {
                let st = match (idle, x.trx.is_some()) {
                    (false, _) => "active",
                    (true, true) => "idle in transaction",
                    (true, false) => "idle",
                };
                *s.states.entry(st.to_string()).or_default() += 1;
            }
        }
        self.samples.push((at, s));
        self.cost.samples += 1;
        Ok(())
    }

    /// The loop: sample until [`Ctl::Finish`] (or the handle is dropped), then the final snapshot.
    pub async fn run(mut self, mut ctl: UnboundedReceiver<Ctl>) -> ServerMetrics {
        let mut tick = tokio::time::interval(self.opts.sample_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut next_counters = Instant::now();
        loop {
            tokio::select! {
                biased;
                m = ctl.recv() => match m {
                    Some(Ctl::Start(at)) => {
                        self.t0 = Some(at);
                        // Statements gone before the window opened are not the run's.
                        self.prepared_last.clear();
                        self.baseline = self.snapshot(false).await;
                    }
                    Some(Ctl::Finish) | None => break,
                },
                _ = tick.tick() => {
                    let t = Instant::now();
                    if let Err(e) = self.sample_activity().await {
                        self.cost.errors += 1;
                        if !self.session.is_usable() && !self.reconnect(&e).await {
                            break;
                        }
                    }
                    // Prepared statements only during the measured run: before it, the
                    // baseline has them.
                    let counters_due = Instant::now() >= next_counters;
                    if self.t0.is_some()
                        && (counters_due || self.prepared_rows <= PREPARED_EVERY_SAMPLE)
                    {
                        self.read_prepared().await;
                    }
                    if counters_due {
                        next_counters += self.opts.counter_interval;
                        if let Some(c) = self.read_counters().await {
                            self.counters.push((Instant::now(), c));
                        }
                        let nodes = self.read_nodes().await;
                        let now = Instant::now();
                        for (n, c) in self.nodes.iter_mut().zip(nodes) {
                            if !c.is_empty() {
                                n.counters.push((now, c));
                            }
                        }
                    }
                    if self.os.is_some() {
                        let pids: Vec<i32> = self.server_pid.into_iter().collect();
                        let r = Instant::now();
                        if let Some(s) = self.os.as_mut().and_then(|os| os.read(&pids)) {
                            self.os_samples.push((Instant::now(), s));
                        }
                        self.cost.busy_ms += r.elapsed().as_secs_f64() * 1000.0;
                    }
                    let ms = t.elapsed().as_secs_f64() * 1000.0;
                    self.cost.max_sample_ms = self.cost.max_sample_ms.max(ms);
                }
            }
        }
        self.finish().await
    }

    /// The session broke (server restart, `wait_timeout`): open a new one and carry on.
    async fn reconnect(&mut self, e: &DbErr) -> bool {
        let first = self.cost.errors == 1;
        match Session::connect(&self.conn).await {
            Ok(s) => {
                self.session = s;
                self.cost.connections += 1;
                let setup = sql::session_setup(&self.caps);
                let _ = self.query(&setup).await;
                if first {
                    self.notes.push(note(
                        "sampling",
                        format!("the observer's session broke ({e}) and was reopened"),
                    ));
                }
                true
            }
            Err(e2) => {
                self.notes.push(note(
                    "sampling",
                    format!(
                        "the observer's session broke ({e}) and could not be reopened ({e2}): \
                         sampling stopped early"
                    ),
                ));
                false
            }
        }
    }

    async fn finish(mut self) -> ServerMetrics {
        let end = if self.session.is_usable() {
            self.snapshot(true).await
        } else {
            Snapshot::default()
        };
        self.cost.cpu_ms = os::thread_cpu_ms();
        let t0 = self.t0.unwrap_or(self.started);
        let rel = |at: Instant| -> i64 {
            if at >= t0 {
                at.duration_since(t0).as_millis() as i64
            } else {
                -(t0.duration_since(at).as_millis() as i64)
            }
        };
        let window_start_ms = self.baseline.at.map(rel).unwrap_or(0);
        let window_end_ms = end.at.map(rel).unwrap_or_else(|| rel(Instant::now()));
        let activity: Vec<ActivitySample> = self
            .samples
            .iter()
            .map(|(at, s)| ActivitySample {
                t_ms: rel(*at),
                ..s.clone()
            })
            .collect();
        let in_window = |t: i64| t >= window_start_ms && t <= window_end_ms;
        let waits = wait_totals(activity.iter().filter(|s| in_window(s.t_ms)));

        let (deltas, reset) = deltas(&self.baseline.counters, &end.counters);
        if reset {
            self.notes.push(note(
                "counters",
                "status counters were reset (FLUSH STATUS) during the run: some deltas are \
                 negative and wrong",
            ));
        }
        let (statements, statements_total) = self.statement_deltas(&end);
        let wait_times = self.wait_deltas(&end);
        let nodes = self.node_metrics(&end, &rel);
        let counters = self
            .counters
            .iter()
            .map(|(at, values)| CounterSample {
                t_ms: rel(*at),
                values: values.clone(),
            })
            .collect();
        let os = self
            .os_samples
            .iter()
            .map(|(at, s)| OsSample {
                t_ms: rel(*at),
                ..s.clone()
            })
            .collect();
        // Closed before returning, not when dropped: the commit check waits for sessions other
        // than its own to go before it reads Com_commit.
        for n in &mut self.nodes {
            if let Some(s) = n.session.take() {
                s.close().await;
            }
        }
        let (cost, notes) = (self.cost.clone(), self.notes.clone());
        let (sample_ms, counter_ms) = (self.opts.sample_interval, self.opts.counter_interval);
        let (version_num, mariadb) = (self.caps.version_num, self.caps.mariadb);
        self.session.close().await;
        ServerMetrics {
            sample_interval_ms: sample_ms.as_millis() as u64,
            counter_interval_ms: counter_ms.as_millis() as u64,
            server_version_num: version_num,
            product: Some(if mariadb { "MariaDB" } else { "MySQL" }.into()),
            window_start_ms,
            window_end_ms,
            cost,
            notes,
            activity,
            waits,
            // A running statement has no digest yet (see the note): nothing to join on.
            query_waits: Vec::new(),
            statements,
            statements_total,
            counters,
            deltas,
            io: Vec::new(),
            os,
            wait_times,
            nodes,
        }
    }

    /// Top statements by execution time over the window, and the sum of all of them.
    fn statement_deltas(
        &mut self,
        end: &Snapshot,
    ) -> (Vec<StatementDelta>, Option<StatementDelta>) {
        let (Some(a), Some(b)) = (&self.baseline.digests, &end.digests) else {
            return (Vec::new(), None);
        };
        let prepared = self.prepared_deltas();
        let mut total = StatementDelta {
            query: "all statements".into(),
            rows_examined: Some(0),
            ..Default::default()
        };
        let mut undigested = 0.0;
        let mut v = Vec::new();
        for (key, e) in b {
            let s = a.get(key).cloned().unwrap_or_default();
            // A digest table truncated during the run restarts from zero.
            let s = if e.calls < s.calls {
                DigestRow::default()
            } else {
                s
            };
            let calls = e.calls - s.calls;
            if calls <= 0.0 {
                continue;
            }
            let digest = key.1.as_deref();
            if digest.is_none() {
                undigested += calls;
            }
            let ms = (e.time_ps - s.time_ps).max(0.0) / 1e9;
            let d = StatementDelta {
                query_id: sql::digest_id(digest),
                query: match (&e.text, digest) {
                    (Some(t), Some(_)) => t.trim().to_string(),
                    (_, None) => "(statements not digested: the digest table was full)".into(),
                    (None, Some(d)) => format!("(digest {d})"),
                },
                calls: calls as u64,
                total_exec_time_ms: ms,
                mean_exec_time_ms: ms / calls,
                rows: (e.rows - s.rows).max(0.0) as u64,
                shared_blks_hit: 0,
                shared_blks_read: 0,
                wal_bytes: None,
                rows_examined: Some((e.examined - s.examined).max(0.0) as u64),
            };
            total.calls += d.calls;
            total.total_exec_time_ms += d.total_exec_time_ms;
            total.rows += d.rows;
            total.rows_examined =
                Some(total.rows_examined.unwrap_or(0) + d.rows_examined.unwrap_or(0));
            v.push(d);
        }
        if let Some((by_text, seen)) = prepared {
            for d in by_text {
                total.calls += d.calls;
                total.total_exec_time_ms += d.total_exec_time_ms;
                total.rows += d.rows;
                total.rows_examined =
                    Some(total.rows_examined.unwrap_or(0) + d.rows_examined.unwrap_or(0));
                v.push(d);
            }
            let executed = match (self.baseline.executions, end.executions) {
                (Some(x), Some(y)) if y >= x => y - x,
                _ => seen,
            };
            // The few executions of a session's last sample interval are always missing; a
            // note for more than 1% of them.
            if executed - seen > 0.01 * executed {
                self.notes.push(note(
                    "performance_schema",
                    format!(
                        "prepared statements: {seen:.0} of the {executed:.0} executions on the \
                         server are in top SQL; the rest ran on other databases, or in a \
                         session's last moments before it closed (a prepared statement's \
                         statistics go with it; they are read every sample, or every counter \
                         interval when there are more than {PREPARED_EVERY_SAMPLE})"
                    ),
                ));
            }
        }
        if total.calls > 0 {
            total.mean_exec_time_ms = total.total_exec_time_ms / total.calls as f64;
        }
        if undigested > 0.0 {
            self.notes.push(note(
                "performance_schema",
                format!(
                    "{undigested} statements found the digest table full and were counted \
                     together; raise performance_schema_digests_size (a server option)"
                ),
            ));
        }
        v.sort_by(|x, y| y.total_exec_time_ms.total_cmp(&x.total_exec_time_ms));
        v.truncate(self.opts.top_statements);
        (v, Some(total))
    }

    /// MariaDB's prepared statements over the window, summed by text (each session prepares its
    /// own), and the executions they add up to; `None` when they are not read. A statement's last
    /// reading counts, less its reading at the window's start if it existed then.
    fn prepared_deltas(&self) -> Option<(Vec<StatementDelta>, f64)> {
        let base = self.baseline.prepared.as_ref()?;
        let mut by_text: BTreeMap<String, DigestRow> = BTreeMap::new();
        for (k, last) in &self.prepared_last {
            let start = base
                .get(k)
                .filter(|s| s.text == last.text && s.calls <= last.calls)
                .cloned()
                .unwrap_or_default();
            let calls = last.calls - start.calls;
            if calls <= 0.0 {
                continue;
            }
            let text = last
                .text
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let e = by_text.entry(text).or_default();
            e.calls += calls;
            e.time_ps += (last.time_ps - start.time_ps).max(0.0);
            e.rows += (last.rows - start.rows).max(0.0);
            e.examined += (last.examined - start.examined).max(0.0);
        }
        let seen = by_text.values().fold(0.0, |n, r| n + r.calls);
        let v = by_text
            .into_iter()
            .map(|(text, r)| {
                let ms = r.time_ps / 1e9;
                StatementDelta {
                    query_id: Some(sql::text_id(&text)),
                    query: text,
                    calls: r.calls as u64,
                    total_exec_time_ms: ms,
                    mean_exec_time_ms: ms / r.calls,
                    rows: r.rows as u64,
                    rows_examined: Some(r.examined as u64),
                    ..Default::default()
                }
            })
            .collect();
        Some((v, seen))
    }

    /// Waits by time over the window, most first.
    fn wait_deltas(&self, end: &Snapshot) -> Vec<WaitTime> {
        let (Some(a), Some(b)) = (&self.baseline.waits, &end.waits) else {
            return Vec::new();
        };
        let mut v: Vec<WaitTime> = b
            .iter()
            .filter_map(|(name, (count, ps))| {
                let (c0, p0) = a.get(name).copied().unwrap_or_default();
                let (dc, dp) = (count - c0, ps - p0);
                (dc > 0.0 && dp >= 0.0).then(|| WaitTime {
                    event: sql::wait_event(name),
                    count: dc as u64,
                    total_ms: dp / 1e9,
                })
            })
            .collect();
        v.sort_by(|x, y| {
            y.total_ms
                .total_cmp(&x.total_ms)
                .then(y.count.cmp(&x.count))
        });
        v.truncate(TOP_WAITS);
        v
    }

    /// Galera: every node's `wsrep_*` counters (the first node's from the main session's status
    /// reads); none for a single server.
    fn node_metrics(&self, end: &Snapshot, rel: &dyn Fn(Instant) -> i64) -> Vec<NodeMetrics> {
        if !self.caps.wsrep {
            return Vec::new();
        }
        let wsrep = |m: &BTreeMap<String, f64>| -> BTreeMap<String, f64> {
            m.iter()
                .filter(|(k, _)| k.starts_with(&format!("{MYSQL_PREFIX}wsrep_")))
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        };
        let mut out = vec![NodeMetrics {
            endpoint: self.endpoint.clone(),
            counters: self
                .counters
                .iter()
                .map(|(at, v)| CounterSample {
                    t_ms: rel(*at),
                    values: wsrep(v),
                })
                .collect(),
            deltas: deltas(&wsrep(&self.baseline.counters), &wsrep(&end.counters)).0,
        }];
        for (i, n) in self.nodes.iter().enumerate() {
            let empty = BTreeMap::new();
            let a = self.baseline.nodes.get(i).unwrap_or(&empty);
            let b = end.nodes.get(i).unwrap_or(&empty);
            out.push(NodeMetrics {
                endpoint: n.name.clone(),
                counters: n
                    .counters
                    .iter()
                    .map(|(at, v)| CounterSample {
                        t_ms: rel(*at),
                        values: v.clone(),
                    })
                    .collect(),
                deltas: deltas(a, b).0,
            });
        }
        out
    }
}

/// End minus start of every counter present in both; whether any went down (a reset).
fn deltas(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> (BTreeMap<String, f64>, bool) {
    let mut out = BTreeMap::new();
    let mut reset = false;
    for (k, y) in b {
        if let Some(x) = a.get(k) {
            let d = y - x;
            // Gauges go down as they please; a counter going down is a reset.
            if d < 0.0 && !is_gauge(k) {
                reset = true;
            }
            out.insert(k.clone(), d);
        }
    }
    (out, reset)
}

/// Status variables that are levels, not counts.
fn is_gauge(key: &str) -> bool {
    let name = key.strip_prefix(MYSQL_PREFIX).unwrap_or(key);
    matches!(
        name,
        "Threads_running"
            | "Threads_connected"
            | "Innodb_history_list_length"
            | "Innodb_buffer_pool_pages_dirty"
            | "Innodb_row_lock_current_waits"
            | "Innodb_checkpoint_age"
            | "wsrep_flow_control_paused"
            | "wsrep_local_recv_queue"
            | "wsrep_local_send_queue"
            | "wsrep_cluster_size"
    )
}
