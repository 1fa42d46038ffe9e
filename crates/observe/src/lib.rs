//! # observe: what the server was doing while the benchmark ran
//!
//! Owns watching a PostgreSQL (or MySQL/MariaDB, below) server during a run, from one extra session of its own on its own
//! thread: active sessions by wait event every second (database load, as Performance Insights
//! calls it), `pg_stat_statements` deltas over the run joined to those waits by query id,
//! checkpoints, background writer, WAL, database and I/O counters, connections by state, lock
//! waits, and — when the server runs on this machine — the machine's CPU, memory and disks and
//! the client's and server's CPU. The result is plain data ([`measure::ServerMetrics`]), ready
//! for `report::RunResult::server_metrics`; notes in it say what could not be seen and how to
//! fix that (a missing extension, a role without `pg_monitor`, an older server).
//!
//! Must not touch: the engine's sessions or threads, the terminal, files, anything that writes on
//! the server. It only reads, inside one read-only transaction (see `sampler` for why), so the
//! run's commit count is disturbed by exactly one start-up transaction per observer connection
//! ([`measure::server::ObserverCost::connections`]).
//!
//! Why a thread with a current-thread runtime: the engine runs one current-thread runtime per
//! core; a sampler task on one of them would delay that core's clients (and be delayed by them).
//! Its own thread never competes for an engine runtime, and its cost is measured and reported
//! ([`measure::server::ObserverCost`]): statements sent, time spent, CPU of its thread.
//!
//! Behaviour follows the PostgreSQL docs, "Monitoring Database Activity": "Viewing Statistics"
//! (`pg_stat_activity`, wait events, `pg_stat_database`, `pg_stat_bgwriter`,
//! `pg_stat_checkpointer`, `pg_stat_wal`, `pg_stat_io`, `pg_locks`), and the `pg_stat_statements`
//! page (F.32 in 15); details in `sql`.
//!
//! A MySQL or MariaDB target ([`sut::Target::MySql`]) is watched the same way by
//! `mysql_sampler` into the same [`ServerMetrics`]: the processlist's sessions with their current
//! `performance_schema` wait, statement digests, waits by time, `SHOW GLOBAL
//! STATUS` (InnoDB's buffer pool, redo log, row locks, history list; Galera's flow control and
//! queues, node by node); the manual pages it follows are in `mysql_sql`. What such a server
//! cannot show (performance_schema OFF, consumers or instruments off, no PROCESS privilege) is a
//! note with the fix, never a failure.
//!
//! A PostgreSQL target of several hosts is watched host by host, one such observer (session,
//! thread) each, and their results folded into one (`endpoints`: what is summed and what is
//! the first host's); one run's commit count then has one observer start-up per host.
//!
//! Module layout: `sampling` (the one sampler shape: the loop, reconnecting, the record and the
//! window's fold), `sampler` and `sql` (PostgreSQL's sources), `mysql_sampler` and `mysql_sql`
//! (MySQL's and MariaDB's), `os` (the machine, for both), `endpoints` (several PostgreSQL
//! hosts); `observer_thread` starts each observer (and the `replication` watch) on its thread;
//! `sizes` reads the database's, tables' and shards' sizes (one reading, its own session).

mod endpoints;
mod mysql_sampler;
mod mysql_sql;
mod os;
pub mod replication;
mod sampler;
mod sampling;
pub mod sizes;
mod sql;

use std::time::{Duration, Instant};

pub use measure::server::ServerMetrics;
use sut::Target;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

pub use sampler::is_local;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    // The target error's text is in the message, so it is not marked #[source] (a chain
    // printed with `{:#}` would repeat it).
    #[error("observer: cannot connect: {0}")]
    Connect(pg::Error),
    #[error("observer: {0}")]
    Query(pg::Error),
    #[error("observer: {0}")]
    Unsupported(String),
    #[error("observer: cannot start its thread: {0}")]
    Thread(String),
}

/// How to watch.
#[derive(Clone, Debug)]
pub struct Options {
    /// Period of the `pg_stat_activity` samples (default 100 ms: with a handful of sessions
    /// that each spend microseconds per statement on CPU, one sample a second over a 10-second
    /// run rarely sees one there; ten a second cost the server well under 1% of a core).
    pub sample_interval: Duration,
    /// Period of the cumulative-counter samples for the time series (default 1 s).
    pub counter_interval: Duration,
    /// Statements kept in the top-SQL list (default 20).
    pub top_statements: usize,
    /// Read OS metrics: `None` decides from the target (a unix socket or a loopback address).
    pub local: Option<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sample_interval: Duration::from_millis(100),
            counter_interval: Duration::from_secs(1),
            top_statements: 20,
            local: None,
        }
    }
}

/// Starts the observer.
pub struct Sampler;

impl Sampler {
    /// Connect (on the observer's own thread), probe what the server offers and start sampling.
    /// Returns once the first snapshot is taken, or with the reason it could not start (the run
    /// can go on without it). A PostgreSQL target is watched through its libpq host list; a
    /// MySQL target through its first endpoint (and, on a Galera cluster, every node's wsrep
    /// status through a session of its own).
    pub fn start(target: &Target, opts: &Options) -> Result<SamplerHandle, Error> {
        // Several PostgreSQL hosts: one observer per host (`endpoints`).
        if let Target::Pg(conn) = target {
            if conn.hosts.len() > 1 {
                return endpoints::start_each(conn, opts);
            }
        }
        Ok(SamplerHandle {
            parts: vec![Self::start_one(target, opts, String::new())?],
            unobserved: Vec::new(),
            top_statements: opts.top_statements,
        })
    }

    /// One observer thread on `target` (its libpq host list, or a MySQL target's first
    /// endpoint); `endpoint` names it when it is one host of several.
    fn start_one(target: &Target, opts: &Options, endpoint: String) -> Result<Part, Error> {
        let (ctl_tx, ctl_rx) = unbounded_channel();
        let target = target.clone();
        let opts = opts.clone();
        let thread = observer_thread(
            "stampede-observe",
            "the observer thread",
            move |rt, ready| {
                rt.block_on(async move {
                    Some(match target {
                        Target::Pg(conn) => {
                            said(ready, sampler::Sampler::connect(&conn, opts).await)?
                                .run(ctl_rx)
                                .await
                        }
                        Target::MySql(endpoints) => {
                            said(
                                ready,
                                mysql_sampler::MySqlSampler::connect(&endpoints, opts).await,
                            )?
                            .run(ctl_rx)
                            .await
                        }
                    })
                })
            },
        )?;
        Ok(Part {
            endpoint,
            ctl: ctl_tx,
            thread,
        })
    }
}

/// The started-or-not message of an observer's thread.
type Ready = std::sync::mpsc::Sender<Result<(), Error>>;

/// Run `work` on a thread of its own named `name`, with a current-thread runtime (an
/// observer never shares the engine's); `work` says on its [`Ready`] when it has started (see
/// [`said`]), or why it could not. Returns the thread once started, or that error (the thread
/// joined); `what` names the thread in the error when it ended without a word.
pub(crate) fn observer_thread<T: Default + Send + 'static>(
    name: &str,
    what: &str,
    work: impl FnOnce(tokio::runtime::Runtime, &Ready) -> T + Send + 'static,
) -> Result<std::thread::JoinHandle<T>, Error> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => work(rt, &ready_tx),
                Err(e) => {
                    let _ = ready_tx.send(Err(Error::Thread(e.to_string())));
                    T::default()
                }
            }
        })
        .map_err(|e| Error::Thread(e.to_string()))?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(thread),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => Err(Error::Thread(format!("{what} ended during start"))),
    }
}

/// Tell `ready` whether the observer started (`connected`): the observer, or None.
pub(crate) fn said<S>(ready: &Ready, connected: Result<S, Error>) -> Option<S> {
    match connected {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            Some(s)
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            None
        }
    }
}

/// How long [`SamplerHandle::open_window`] holds the run's start for the baseline snapshots.
pub const OPEN_WAIT: Duration = Duration::from_secs(2);

/// A running observer (one thread per observed host). Dropping it stops the threads and
/// discards what they saw.
pub struct SamplerHandle {
    parts: Vec<Part>,
    /// Hosts of several that could not be observed: notes for the result.
    unobserved: Vec<measure::server::Note>,
    top_statements: usize,
}

/// One observer thread.
struct Part {
    /// `host:port` when it watches one host of several; empty for a whole target.
    endpoint: String,
    ctl: UnboundedSender<sampler::Ctl>,
    thread: std::thread::JoinHandle<Option<ServerMetrics>>,
}

impl SamplerHandle {
    /// Take every host's baseline snapshot and wait for it (up to [`OPEN_WAIT`]): called
    /// before the run's clients start (engine's `Event::Starting`), so the deltas hold every
    /// statement of the run. A snapshot sent after the clients started would miss their first
    /// statements (on a busy MariaDB, `SHOW GLOBAL STATUS` and `INNODB_METRICS` take tens of
    /// milliseconds: 256 inserts).
    pub fn open_window(&self) {
        let (done, opened) = std::sync::mpsc::sync_channel(self.parts.len());
        for p in &self.parts {
            let _ = p.ctl.send(sampler::Ctl::Open(done.clone()));
        }
        drop(done);
        let deadline = Instant::now() + OPEN_WAIT;
        for _ in &self.parts {
            let left = deadline.saturating_duration_since(Instant::now());
            if opened.recv_timeout(left).is_err() {
                // A host that takes longer opens its window late; its window's start says when.
                break;
            }
        }
    }

    /// The measured run starts at `at` (engine's `Event::Connected`): times become relative to
    /// it, and the window of the deltas opens with a snapshot taken now unless
    /// [`open_window`](Self::open_window) opened it. Without it, times are relative to the
    /// observer's start and the window covers everything observed.
    pub fn mark_start(&self, at: Instant) {
        for p in &self.parts {
            let _ = p.ctl.send(sampler::Ctl::Start(at));
        }
    }

    /// Take the end snapshot (after waiting up to 1 s for the run's sessions to go so their
    /// statistics are flushed), stop and return everything seen.
    pub fn finish(self) -> ServerMetrics {
        // Every host's end snapshot at once, then each result.
        for p in &self.parts {
            let _ = p.ctl.send(sampler::Ctl::Finish);
        }
        let mut seen: Vec<(String, ServerMetrics)> = (self.parts.into_iter())
            .map(|p| {
                let m = match p.thread.join() {
                    Ok(Some(m)) => m,
                    Ok(None) => failed("the observer stopped without a result"),
                    Err(_) => failed("the observer thread panicked"),
                };
                (p.endpoint, m)
            })
            .collect();
        if seen.len() == 1 && self.unobserved.is_empty() {
            return seen.pop().map(|(_, m)| m).unwrap_or_default();
        }
        endpoints::combine(seen, self.unobserved, self.top_statements)
    }
}

fn failed(why: &str) -> ServerMetrics {
    ServerMetrics {
        notes: vec![measure::server::Note {
            topic: "sampling".into(),
            message: why.into(),
        }],
        ..Default::default()
    }
}
