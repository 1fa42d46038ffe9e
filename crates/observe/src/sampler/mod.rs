//! The PostgreSQL sampler: one session, one thread, one current-thread runtime, in the shape
//! both protocols share (`sampling`: the loop, reconnecting, the record and the window's fold).
//!
//! Owns the observer's session and everything it reads: the probe at start (in `probe`), the
//! activity sample every `sample_interval`, the counter sample every `counter_interval`, the
//! window-start snapshot (at [`Ctl::Start`]) and the end snapshot (at [`Ctl::Finish`]), and
//! what is PostgreSQL's in the [`ServerMetrics`] (statements, I/O, waits by query). Must not
//! touch: the engine's sessions or runtimes, the terminal, anything on the server that writes.
//!
//! Why one read-only transaction for the whole run: each statement outside a transaction block
//! commits, and `pg_stat_database.xact_commit` counts read-only commits too, so a sampler issuing
//! two statements a second would add hundreds of commits that stampede's commit-count check
//! would have to explain. Inside `BEGIN READ ONLY` (read committed) nothing commits, no xid is
//! assigned, and between statements no snapshot is held, so no vacuum horizon is held back
//! either. The session's only commit is its start-up transaction ([`ObserverCost::connections`]).
//! An error inside the block (an extension that is created but not loaded, say) aborts the
//! transaction: the sampler rolls back (counted as a rollback, not a commit), begins again and
//! carries on without the part that failed.
//!
//! What is load: sessions in state `active` that are clients' (`backend_type` `client backend`,
//! and the `parallel worker`s of their queries). The server's other processes that report
//! themselves active — a standby's `walsender` for as long as it streams, autovacuum and
//! logical replication workers — and another observer's session (`application_name` starting
//! with [`sql::APPLICATION_NAME`]) are counted apart by kind, with their waits
//! ([`ActivitySample::background`], [`ServerMetrics::background`]), never in the average
//! active sessions or the wait events; this session itself is in neither.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use measure::server::{
    ActivitySample, BackgroundSessions, IoDelta, QueryWait, ServerMetrics, StatementDelta, CPU,
};
use pg::{ConnConfig, Session};
use tokio::sync::mpsc::UnboundedReceiver;

mod probe;

use crate::os;
use crate::sampling::{self, note, Flavour, Record};
use crate::sql::{self, Caps, StatementCols, TAG};
use crate::{Error, Options};

/// Messages from the handle.
pub enum Ctl {
    /// Take the baseline snapshot now, before the run's clients start (so the deltas hold
    /// every statement of the run), and say so on the channel.
    Open(std::sync::mpsc::SyncSender<()>),
    /// The measured run starts at this instant: t = 0, and the delta window opens if
    /// [`Ctl::Open`] did not open it.
    Start(Instant),
    /// Take the end snapshot and stop.
    Finish,
}

/// `pg_stat_statements` summed by queryid.
#[derive(Clone, Debug, Default)]
struct StmtRow {
    query: Option<String>,
    calls: f64,
    total_ms: f64,
    rows: f64,
    hit: f64,
    read: f64,
    wal_bytes: Option<f64>,
}

/// One snapshot of the cumulative views (window start or end).
#[derive(Clone, Debug, Default)]
struct Snapshot {
    at: Option<Instant>,
    counters: BTreeMap<String, f64>,
    /// queryid (None = hidden from us) -> counters.
    statements: Option<BTreeMap<Option<i64>, StmtRow>>,
    io: BTreeMap<(String, String, String), BTreeMap<String, f64>>,
}

struct Sample {
    at: Instant,
    s: ActivitySample,
    query_waits: Vec<(i64, String, u32)>,
    /// Active background sessions by (kind, wait event).
    background: BackgroundSessions,
}

pub struct Sampler {
    session: Session,
    conn_cfg: ConnConfig,
    caps: Caps,
    role: String,
    /// Sees other roles' sessions (superuser, pg_read_all_stats or pg_monitor).
    sees_all: bool,
    samples: Vec<Sample>,
    rec: Record,
    server_pids: Vec<i32>,
    /// Our backend is a process on this machine (server CPU can be read).
    server_visible: bool,
    baseline: Snapshot,
    /// Client sessions on the database when the sampler started (not the run's).
    foreign_clients: i64,
    stmts_ok: bool,
    io_ok: bool,
    counters_ok: bool,
}

/// Whether the target is this machine: a unix socket or a loopback address.
pub fn is_local(cfg: &ConnConfig) -> bool {
    cfg.hosts
        .iter()
        .all(|h| h.is_unix() || matches!(h.host.as_str(), "localhost" | "127.0.0.1" | "::1" | ""))
}

impl Sampler {
    /// Connect, probe, open the read-only transaction and take the first snapshot.
    pub async fn connect(cfg: &ConnConfig, opts: Options) -> Result<Sampler, Error> {
        let mut cfg = cfg.clone();
        cfg.application_name = sql::APPLICATION_NAME.into();
        // Never block on a lock for long, never be killed for idling in our transaction.
        let extra = "-c statement_timeout=10000 -c lock_timeout=1000 \
                     -c idle_in_transaction_session_timeout=0";
        cfg.options = Some(match cfg.options.take() {
            Some(o) if !o.trim().is_empty() => format!("{o} {extra}"),
            _ => extra.to_string(),
        });
        let session = Session::connect(&cfg).await.map_err(Error::Connect)?;
        let version_num = session.server_version_num();
        if version_num < 100000 {
            return Err(Error::Unsupported(format!(
                "server_version_num {version_num}: observing needs PostgreSQL 10 or later \
                 (backend_type and wait events in pg_stat_activity); run with --no-observe"
            )));
        }
        let local = opts.local.unwrap_or_else(|| is_local(&cfg));
        let mut s = Sampler {
            session,
            conn_cfg: cfg,
            caps: Caps {
                version_num,
                activity_query_id: version_num >= 140000,
                ..Default::default()
            },
            role: String::new(),
            sees_all: false,
            samples: Vec::new(),
            rec: Record::new(opts, local),
            server_pids: Vec::new(),
            server_visible: false,
            baseline: Snapshot::default(),
            foreign_clients: 0,
            stmts_ok: false,
            io_ok: false,
            counters_ok: true,
        };
        s.query(&sql::begin()).await.map_err(Error::Query)?;
        s.probe().await?;
        s.foreign_clients = s.scalar(&sql::other_clients()).await.unwrap_or(0);
        if s.rec.os.is_some() && s.rec.local {
            let _ = s.sample_activity().await;
            s.samples.clear();
            s.rec.cost.samples = 0;
            let pid = s.session.backend_pid();
            s.server_visible = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().starts_with("postgres"))
                .unwrap_or(false);
            if s.server_visible {
                s.watch_devices().await;
            } else {
                s.rec.notes.push(note(
                    "os",
                    format!(
                        "the server's processes are not visible from here (backend pid {pid} is \
                         not a postgres process on this machine): server CPU is not shown"
                    ),
                ));
            }
        }
        if let Some(os) = s.rec.os.as_mut() {
            let pids = if s.server_visible {
                s.server_pids.clone()
            } else {
                Vec::new()
            };
            os.read(&pids);
        }
        s.baseline = s.snapshot(false).await;
        Ok(s)
    }

    /// The devices of the data directory and of `pg_wal` (a link to another disk, often),
    /// watched on their own. `data_directory` is shown only to superusers and members of
    /// `pg_read_all_settings`: for others `pg_settings` has no row, and a note says so.
    async fn watch_devices(&mut self) {
        let dir = match self.query(&sql::data_directory()).await {
            Ok(rows) => rows.last().and_then(|r| r.first().cloned().flatten()),
            Err(_) => None,
        };
        let Some(dir) = dir else {
            self.rec.notes.push(note(
                "os",
                "data_directory is not visible to this role (pg_read_all_settings or superuser \
                 shows it): the data directory's device is not watched on its own",
            ));
            return;
        };
        let wal = format!("{dir}/pg_wal");
        self.rec
            .watch_devices(&[(dir, "data directory"), (wal, "WAL")]);
    }

    /// A statement, counted in the cost. On a server error the transaction is rolled back and
    /// begun again, so the next statement runs.
    async fn query(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, pg::Error> {
        let t = Instant::now();
        self.rec.cost.queries += sql.matches(TAG).count() as u64;
        let r = self.session.simple_query(sql).await;
        if let Err(pg::Error::Db(_)) = &r {
            let _ = self.session.simple_query(&sql::rollback()).await;
            let _ = self.session.simple_query(&sql::begin()).await;
            self.rec.cost.queries += 2;
        }
        self.rec.cost.busy_ms += t.elapsed().as_secs_f64() * 1000.0;
        r
    }

    async fn scalar(&mut self, sql: &str) -> Result<i64, pg::Error> {
        let rows = self.query(sql).await?;
        Ok(rows.last().map(|r| sql::int(&r[0])).unwrap_or(0))
    }

    async fn read_counters(&mut self) -> Option<BTreeMap<String, f64>> {
        if !self.counters_ok {
            return None;
        }
        match self.query(&sql::counters(&self.caps)).await {
            Ok(rows) => {
                let mut m = BTreeMap::new();
                for r in rows.iter().filter(|r| r.len() == 2) {
                    if let (Some(view), Some(json)) = (&r[0], &r[1]) {
                        sql::json_numbers(view, json, &mut m);
                    }
                }
                Some(m)
            }
            Err(e) => {
                self.counters_ok = false;
                self.rec.notes.push(note(
                    "counters",
                    format!("cumulative statistics could not be read ({e}): no counters"),
                ));
                None
            }
        }
    }

    async fn read_statements(&mut self, text: bool) -> Option<BTreeMap<Option<i64>, StmtRow>> {
        if !self.stmts_ok {
            return None;
        }
        let c = self.caps.statements.clone()?;
        match self.query(&sql::statements(&c, text)).await {
            Ok(rows) => Some(
                rows.iter()
                    .filter(|r| r.len() == 8)
                    .map(|r| {
                        let id = r[0].as_deref().and_then(|s| s.parse::<i64>().ok());
                        (
                            id,
                            StmtRow {
                                query: r[1].clone(),
                                calls: sql::num(&r[2]),
                                total_ms: sql::num(&r[3]),
                                rows: sql::num(&r[4]),
                                hit: sql::num(&r[5]),
                                read: sql::num(&r[6]),
                                wal_bytes: r[7].as_ref().map(|_| sql::num(&r[7])),
                            },
                        )
                    })
                    .collect(),
            ),
            Err(e) => {
                self.stmts_ok = false;
                self.rec.notes.push(note(
                    "pg_stat_statements",
                    format!("pg_stat_statements could not be read ({e}): top SQL is incomplete"),
                ));
                None
            }
        }
    }

    async fn read_io(&mut self) -> BTreeMap<(String, String, String), BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        if !self.io_ok {
            return out;
        }
        match self.query(&sql::io()).await {
            Ok(rows) => {
                for r in rows.iter().filter(|r| r.len() == 4) {
                    let mut m = BTreeMap::new();
                    if let Some(j) = &r[3] {
                        sql::json_numbers("", j, &mut m);
                    }
                    let m = m
                        .into_iter()
                        .map(|(k, v)| (k.trim_start_matches('.').to_string(), v))
                        .collect();
                    let s = |i: usize| r[i].clone().unwrap_or_default();
                    out.insert((s(0), s(1), s(2)), m);
                }
            }
            Err(e) => {
                self.io_ok = false;
                self.rec.notes.push(note(
                    "pg_stat_io",
                    format!("pg_stat_io could not be read ({e})"),
                ));
            }
        }
        out
    }

    async fn snapshot(&mut self, text: bool) -> Snapshot {
        let counters = self.read_counters().await.unwrap_or_default();
        let statements = self.read_statements(text).await;
        let io = self.read_io().await;
        Snapshot {
            at: Some(Instant::now()),
            counters,
            statements,
            io,
        }
    }

    async fn sample_activity(&mut self) -> Result<(), pg::Error> {
        let at = Instant::now();
        let rows = self.query(&sql::activity(&self.caps)).await?;
        let mut s = ActivitySample::default();
        let mut qw: BTreeMap<(i64, String), u32> = BTreeMap::new();
        let mut background: BackgroundSessions = BTreeMap::new();
        // Every server process but ours is in some row: the pid list is fresh each sample, so a
        // backend born since the last one is counted from its start (see `os`).
        self.server_pids.clear();
        self.server_pids.push(self.session.backend_pid());
        for r in rows.iter().filter(|r| r.len() == 10) {
            if let Some(p) = &r[9] {
                self.server_pids
                    .extend(p.split(' ').filter_map(|x| x.parse::<i32>().ok()));
            }
            let state = r[0].as_deref().unwrap_or("");
            let (wtype, wevent) = (r[1].as_deref().unwrap_or(""), r[2].as_deref().unwrap_or(""));
            let qid = r[3].as_deref().and_then(|x| x.parse::<i64>().ok());
            let backend_type = r[4].as_deref().unwrap_or("");
            let kind = sql::background_kind(backend_type, sql::flag(&r[5]));
            let n = sql::int(&r[6]).max(0) as u32;
            let hidden = sql::int(&r[7]).max(0) as u32;
            s.lock_waits = sql::int(&r[8]).max(0) as u32;
            s.hidden += hidden;
            if state == "active" {
                let event = if wtype.is_empty() {
                    CPU.to_string()
                } else {
                    format!("{wtype}:{wevent}")
                };
                if let Some(kind) = kind {
                    *s.background.entry(kind.to_string()).or_default() += n;
                    *background.entry((kind.to_string(), event)).or_default() += n;
                    continue;
                }
                s.active += n;
                *s.waits.entry(event.clone()).or_default() += n;
                if let Some(q) = qid.filter(|q| *q != 0) {
                    *qw.entry((q, event)).or_default() += n;
                }
            }
            // Another observer's session is not one of the clients' connections.
            if backend_type == "client backend" && kind.is_none() && n > hidden {
                let st = if state.is_empty() { "unknown" } else { state };
                *s.states.entry(st.to_string()).or_default() += n - hidden;
            }
        }
        self.samples.push(Sample {
            at,
            s,
            query_waits: qw.into_iter().map(|((q, e), n)| (q, e, n)).collect(),
            background,
        });
        self.rec.cost.samples += 1;
        Ok(())
    }

    /// The loop (module `sampling`), until [`Ctl::Finish`] or the handle is dropped.
    pub async fn run(self, ctl: UnboundedReceiver<Ctl>) -> ServerMetrics {
        sampling::run(self, ctl).await
    }

    async fn finish(mut self) -> ServerMetrics {
        // Statistics reach shared memory when a backend exits (and at most once a second
        // before): wait up to a second for the run's sessions to go.
        if self.session.is_usable() && self.rec.t0.is_some() {
            let deadline = Instant::now() + Duration::from_secs(1);
            while Instant::now() < deadline {
                match self.scalar(&sql::other_clients()).await {
                    Ok(n) if n > self.foreign_clients => {
                        tokio::time::sleep(Duration::from_millis(50)).await
                    }
                    _ => break,
                }
            }
        }
        let end = if self.session.is_usable() {
            self.snapshot(true).await
        } else {
            Snapshot::default()
        };
        let _ = self.session.simple_query(&sql::rollback()).await;
        self.rec.cost.cpu_ms = os::thread_cpu_ms();
        let w = self.rec.window(self.baseline.at, end.at);
        let activity = w.activity(self.samples.iter().map(|x| (x.at, &x.s, &x.background)));
        let mut qw: BTreeMap<(i64, String), u64> = BTreeMap::new();
        for x in self.samples.iter().filter(|x| w.contains(w.rel(x.at))) {
            for (q, e, n) in &x.query_waits {
                *qw.entry((*q, e.clone())).or_default() += u64::from(*n);
            }
        }
        let mut query_waits: Vec<QueryWait> = qw
            .into_iter()
            .map(|((query_id, event), samples)| QueryWait {
                query_id,
                event,
                samples,
            })
            .collect();
        query_waits.sort_by_key(|q| std::cmp::Reverse(q.samples));

        let hidden: u64 = (activity.samples.iter())
            .filter(|s| w.contains(s.t_ms))
            .map(|s| u64::from(s.hidden))
            .sum();
        if hidden > 0 && self.sees_all {
            self.rec.notes.push(note(
                "privileges",
                format!("{hidden} session-samples were hidden from the observer's role"),
            ));
        }

        let (deltas, reset) =
            sampling::deltas(&self.baseline.counters, &end.counters, sql::is_level);
        if reset {
            self.rec.notes.push(note(
                "counters",
                "statistics were reset during the run: some deltas are negative and wrong",
            ));
        }

        let (statements, statements_total) = self.statement_deltas(&end);

        let mut io = Vec::new();
        for ((bt, obj, ctx), b) in &end.io {
            let Some(a) = self
                .baseline
                .io
                .get(&(bt.clone(), obj.clone(), ctx.clone()))
            else {
                continue;
            };
            let values: BTreeMap<String, f64> = b
                .iter()
                .filter_map(|(k, v)| a.get(k).map(|x| (k.clone(), v - x)))
                .filter(|(_, d)| *d != 0.0)
                .collect();
            if !values.is_empty() {
                io.push(IoDelta {
                    backend_type: bt.clone(),
                    object: obj.clone(),
                    context: ctx.clone(),
                    values,
                });
            }
        }

        ServerMetrics {
            query_waits,
            statements,
            statements_total,
            deltas,
            io,
            ..(self.rec).metrics(
                &w,
                activity,
                self.caps.version_num,
                "PostgreSQL",
                sql::always_kept,
            )
        }
    }

    /// Top statements by execution time over the window, and the sum of all of them. The
    /// observer's own statements (text starting with [`TAG`]) are left out.
    fn statement_deltas(
        &mut self,
        end: &Snapshot,
    ) -> (Vec<StatementDelta>, Option<StatementDelta>) {
        let (Some(a), Some(b)) = (&self.baseline.statements, &end.statements) else {
            return (Vec::new(), None);
        };
        let mut total = StatementDelta {
            query: "all statements".into(),
            ..Default::default()
        };
        let mut hidden_calls = 0.0;
        let mut v = Vec::new();
        for (id, e) in b {
            let q = e.query.clone().unwrap_or_default();
            if q.trim_start().starts_with(TAG) {
                continue;
            }
            let s = a.get(id).cloned().unwrap_or_default();
            // An entry evicted and re-created during the run restarts from zero.
            let s = if e.calls < s.calls {
                StmtRow::default()
            } else {
                s
            };
            let calls = e.calls - s.calls;
            if calls <= 0.0 {
                continue;
            }
            if id.is_none() {
                hidden_calls += calls;
            }
            let d = StatementDelta {
                query_id: *id,
                query: q,
                calls: calls as u64,
                total_exec_time_ms: e.total_ms - s.total_ms,
                mean_exec_time_ms: (e.total_ms - s.total_ms) / calls,
                rows: (e.rows - s.rows).max(0.0) as u64,
                shared_blks_hit: (e.hit - s.hit).max(0.0) as u64,
                shared_blks_read: (e.read - s.read).max(0.0) as u64,
                wal_bytes: e.wal_bytes.map(|w| w - s.wal_bytes.unwrap_or(0.0)),
                rows_examined: None,
            };
            total.calls += d.calls;
            total.total_exec_time_ms += d.total_exec_time_ms;
            total.rows += d.rows;
            total.shared_blks_hit += d.shared_blks_hit;
            total.shared_blks_read += d.shared_blks_read;
            if let Some(w) = d.wal_bytes {
                total.wal_bytes = Some(total.wal_bytes.unwrap_or(0.0) + w);
            }
            v.push(d);
        }
        if total.calls > 0 {
            total.mean_exec_time_ms = total.total_exec_time_ms / total.calls as f64;
        }
        if hidden_calls > 0.0 {
            self.rec.notes.push(note(
                "privileges",
                format!(
                    "{hidden_calls} calls of other roles' statements are hidden \
                     (\"<insufficient privilege>\"): GRANT pg_read_all_stats TO {}",
                    sql::quote_ident(&self.role)
                ),
            ));
        }
        v.sort_by(|x, y| {
            y.total_exec_time_ms
                .partial_cmp(&x.total_exec_time_ms)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        v.truncate(self.rec.opts.top_statements);
        (v, Some(total))
    }
}

impl Flavour for Sampler {
    type Err = pg::Error;

    fn record(&mut self) -> &mut Record {
        &mut self.rec
    }

    fn usable(&self) -> bool {
        self.session.is_usable()
    }

    async fn open_window(&mut self) {
        self.baseline = self.snapshot(false).await;
        // `foreign_clients` stays as counted at start-up, before the run's clients connected:
        // counted now, it would include them, and the final snapshot would not wait for their
        // statistics.
    }

    async fn sample_activity(&mut self) -> Result<(), pg::Error> {
        Sampler::sample_activity(self).await
    }

    async fn read_more(&mut self, counters_due: bool) {
        if counters_due {
            if let Some(c) = self.read_counters().await {
                self.rec.counters.push((Instant::now(), c));
            }
        }
    }

    fn server_pids(&self) -> Vec<i32> {
        if self.server_visible {
            self.server_pids.clone()
        } else {
            Vec::new()
        }
    }

    async fn reopen(&mut self) -> Result<bool, pg::Error> {
        self.session = Session::connect(&self.conn_cfg).await?;
        Ok(self.query(&sql::begin()).await.is_ok())
    }

    async fn finish(self) -> ServerMetrics {
        Sampler::finish(self).await
    }
}
