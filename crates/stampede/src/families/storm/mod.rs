//! `stampede run connection-storm`: pgbench's select-only on a few busy clients (the engine's
//! run, as `families::pgbench` runs it) while a thread of its own opens idle connections at
//! `--connect-rate` up to `-c` and holds them to the end of the run.
//!
//! Why a thread with its own runtime: the engine blocks the calling thread for the whole run,
//! and the run's runtime is single-threaded, so the storm's sessions live on a runtime that keeps
//! running meanwhile (and are closed on it: a session belongs to the runtime whose reactor
//! registered its socket). Attempts start on a fixed schedule (attempt `i` at `i / rate` seconds
//! after the busy clients' start, the same origin as the run's intervals), each in a task of its
//! own, so a slow connect does not hold back the next: the rate is offered load, as `-R` is.
//!
//! What is measured, in `section`'s terms:
//! - connect latency: from the attempt's start to a session ready for queries (startup,
//!   authentication, the server's parameters), into an HDR histogram; an attempt gives up after
//!   [`CONNECT_TIMEOUT`] and counts as a timeout;
//! - failures by kind ([`failure_kind`]);
//! - the busy clients' tps and p99 by step of open connections: each of the run's one-second
//!   intervals goes to the step of the idle count open at its end;
//! - memory per backend while they are all held: on the embedded PostgreSQL server (local, so
//!   `/proc` shows its backends) `smaps_rollup` of a sample of the held sessions' backends;
//!   elsewhere `pg_backend_memory_contexts` of one held backend when the server allows it
//!   (memory contexts only); on MySQL nothing (said so);
//! - at the end, each held session answers `SELECT 1` (a session the server or a pooler closed
//!   does not), the count held; those statements are counted as commits by the commit check.

pub(crate) mod options;
pub(crate) mod plan;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use engine::{Event, Outcome, RunError};
use report::{Check, CheckStatus, RunConfig};
use section::{BackendMemory, ConnectLatency, ConnectionStorm, StormFailure, StormStep};
use sut::{Dialect, Session};

use super::{Ctx, Family, Finish};

/// An attempt that has not opened a session after this long is a timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Backends whose `/proc` memory is read, at most (spread over the held ones).
const MEMORY_SAMPLE: usize = 200;

pub(crate) mod section;

/// What the storm does beside the busy clients' run.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub connections: u64,
    pub rate: f64,
    pub busy: u32,
}

impl Job {
    /// Seconds the attempts take at the rate.
    pub fn ramp_s(&self) -> f64 {
        self.connections as f64 / self.rate
    }
}

pub(crate) struct Runner {
    inner: Box<dyn Family>,
    job: Job,
    stormed: Option<Stormed>,
}

/// What the storm's thread saw.
#[derive(Default)]
struct Stormed {
    attempted: u64,
    opened: u64,
    held_at_end: u64,
    ramp_s: f64,
    latency: measure::Histogram,
    /// (kind, count, first message), in the order first seen.
    failures: Vec<(String, u64, String)>,
    /// (µs since the start, idle connections open then), one entry per change.
    timeline: Vec<(u64, u64)>,
    memory: BackendMemory,
    /// The memory probe's own session (not local: `pg_backend_memory_contexts`): its start-up
    /// and its query's commit, for the commit count.
    probe_connections: u64,
    probe_commits: u64,
}

impl Runner {
    /// The storm around `inner`, the busy clients' run (pgbench's select-only).
    pub(crate) fn new(inner: Box<dyn Family>, storm: Job) -> Runner {
        Runner {
            inner,
            job: storm,
            stormed: None,
        }
    }
}

/// The kind of a failed attempt: `too_many_connections` (PostgreSQL's 53300, MySQL's 1040,
/// pgbouncer's "no more connections allowed"), `timeout`, `refused` (nothing listens, or the
/// listen queue is full: a unix socket says EAGAIN then), `other`.
pub fn failure_kind(e: &sut::Error) -> &'static str {
    use std::io::ErrorKind as K;
    if e.sqlstate() == Some("53300")
        || sut::mysql::error_number(e) == Some(1040)
        || e.to_string().contains("no more connections allowed")
    {
        return "too_many_connections";
    }
    let io = match e {
        sut::Error::Connect { cause, .. } => Some(cause),
        sut::Error::Io(cause) => Some(cause),
        _ => None,
    };
    match io.map(std::io::Error::kind) {
        Some(K::TimedOut) => "timeout",
        Some(K::ConnectionRefused | K::WouldBlock | K::NotFound) => "refused",
        _ => "other",
    }
}

impl Stormed {
    fn fail(&mut self, kind: &str, msg: String) {
        match self.failures.iter_mut().find(|f| f.0 == kind) {
            Some(f) => f.1 += 1,
            None => self.failures.push((kind.into(), 1, msg)),
        }
    }
}

/// The storm's thread: wait for the busy clients' start, open the connections on schedule,
/// hold them until `stop`, measure, close.
fn storm(
    conn: sut::Target,
    job: Job,
    local_pg: bool,
    start: tokio::sync::oneshot::Receiver<Instant>,
    stop: tokio::sync::oneshot::Receiver<()>,
) -> Stormed {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return Stormed::default(),
    };
    rt.block_on(async move {
        let mut stop = stop;
        let t0 = tokio::select! {
            t = start => match t { Ok(t) => t, Err(_) => return Stormed::default() },
            _ = &mut stop => return Stormed::default(),
        };
        let state = Arc::new(Mutex::new(Stormed::default()));
        let sessions = Arc::new(Mutex::new(Vec::<Session>::new()));
        let mut tasks = tokio::task::JoinSet::new();
        let mut stopped = false;
        for i in 0..job.connections {
            let at = t0 + Duration::from_secs_f64(i as f64 / job.rate);
            tokio::select! {
                _ = tokio::time::sleep_until(at.into()) => {}
                _ = &mut stop => { stopped = true; break; }
            }
            let (conn, state, sessions) = (conn.clone(), state.clone(), sessions.clone());
            tasks.spawn(async move {
                let began = Instant::now();
                let r = tokio::time::timeout(CONNECT_TIMEOUT, Session::connect(&conn)).await;
                let done = Instant::now();
                let mut st = state.lock().expect("storm state");
                st.attempted += 1;
                match r {
                    Ok(Ok(s)) => {
                        st.latency.record((done - began).as_micros().max(1) as u64);
                        st.opened += 1;
                        let mut held = sessions.lock().expect("storm sessions");
                        held.push(s);
                        let open = held.len() as u64;
                        st.timeline.push(((done - t0).as_micros() as u64, open));
                    }
                    Ok(Err(e)) => {
                        let msg = sut::conninfo::redact(&format!("{e:#}"));
                        st.fail(failure_kind(&e), msg);
                    }
                    Err(_) => st.fail(
                        "timeout",
                        format!("no session after {} s", CONNECT_TIMEOUT.as_secs()),
                    ),
                }
            });
        }
        while tasks.join_next().await.is_some() {}
        let ramp_s = t0.elapsed().as_secs_f64();
        if !stopped {
            let _ = stop.await;
        }
        let mut held: Vec<Session> = std::mem::take(&mut *sessions.lock().expect("storm sessions"));
        let mut probe = (0, 0);
        let memory = backend_memory(&conn, &held, local_pg, &mut probe).await;
        // Still open? A session the server (or a pooler) closed does not answer.
        let mut alive = 0u64;
        for chunk in held.chunks_mut(256) {
            let answers = chunk.iter_mut().map(|s| s.simple_query("SELECT 1"));
            for r in join_all(answers).await {
                alive += u64::from(r.is_ok());
            }
        }
        let closing: Vec<_> = held.into_iter().map(Session::close).collect();
        join_all(closing).await;
        let mut st = std::mem::take(&mut *state.lock().expect("storm state"));
        st.ramp_s = ramp_s;
        st.held_at_end = alive;
        st.memory = memory;
        (st.probe_connections, st.probe_commits) = probe;
        st.timeline.sort_unstable();
        st
    })
}

/// Await every future, in order (a small stand-in for `futures::join_all`: the futures here
/// borrow distinct sessions and run on one thread).
async fn join_all<F: std::future::Future>(futs: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = (0..futs.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in futs.iter_mut().zip(out.iter_mut()) {
            if o.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *o = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter()
        .map(|o| o.expect("every future ready"))
        .collect()
}

/// Memory of the held sessions' backends (module notes).
/// `probe` counts the session it opens and the commits it made there.
async fn backend_memory(
    conn: &sut::Target,
    held: &[Session],
    local_pg: bool,
    probe: &mut (u64, u64),
) -> BackendMemory {
    if held.is_empty() {
        return BackendMemory {
            source: "no connection was held".into(),
            ..Default::default()
        };
    }
    if held[0].dialect() == Dialect::MySql {
        return BackendMemory {
            source: "MySQL runs a connection as a thread of mysqld: no memory of its own to read"
                .into(),
            ..Default::default()
        };
    }
    if local_pg {
        let step = held.len().div_ceil(MEMORY_SAMPLE).max(1);
        let (mut n, mut private, mut pss, mut rss) = (0u64, 0f64, 0f64, 0f64);
        for s in held.iter().step_by(step) {
            if let Some(m) = smaps_rollup(s.backend_pid()) {
                n += 1;
                private += m.0;
                pss += m.1;
                rss += m.2;
            }
        }
        if n > 0 {
            let k = n as f64;
            return BackendMemory {
                source: format!(
                    "/proc/PID/smaps_rollup of {n} of the {} held backends",
                    held.len()
                ),
                backends: n,
                private_bytes_per_backend: Some(private / k),
                pss_bytes_per_backend: Some(pss / k),
                rss_bytes_per_backend: Some(rss / k),
            };
        }
    }
    // Not local (or /proc unreadable): one backend's memory contexts, where the server lets
    // this user read them (PostgreSQL 14+; superuser or pg_read_all_stats).
    let why_not_proc = if local_pg {
        "/proc of the backends could not be read"
    } else {
        "the server is not local to stampede, so /proc shows no backend"
    };
    let contexts = async {
        let mut s = Session::connect(conn).await.ok()?;
        probe.0 += 1;
        let r = s
            .simple_query("SELECT sum(total_bytes)::text FROM pg_backend_memory_contexts")
            .await;
        s.close().await;
        probe.1 += u64::from(r.is_ok());
        r.ok()?.first()?.first()?.as_deref()?.parse::<f64>().ok()
    };
    match contexts.await {
        Some(b) => BackendMemory {
            source: format!(
                "{why_not_proc}; pg_backend_memory_contexts of one idle backend (its memory \
                 contexts only, not its share of shared memory or its stack)"
            ),
            backends: 1,
            private_bytes_per_backend: Some(b),
            ..Default::default()
        },
        None => BackendMemory {
            source: format!(
                "{why_not_proc}, and pg_backend_memory_contexts could not be read (PostgreSQL \
                 14+, superuser or pg_read_all_stats)"
            ),
            ..Default::default()
        },
    }
}

/// (private, pss, rss) bytes of a process, from `/proc/PID/smaps_rollup`.
fn smaps_rollup(pid: i32) -> Option<(f64, f64, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let kb = |key: &str| -> f64 {
        (text.lines())
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or(0.0)
            * 1024.0
    };
    let rss = kb("Rss:");
    (rss > 0.0).then(|| (kb("Private_Clean:") + kb("Private_Dirty:"), kb("Pss:"), rss))
}

/// The busy clients' intervals grouped by the idle count open at each one's end, in steps of a
/// tenth of the target (at least 1).
fn steps(target: u64, timeline: &[(u64, u64)], intervals: &[measure::Interval]) -> Vec<StormStep> {
    let step = (target / 10).max(1);
    let open_at = |us: u64| {
        let i = timeline.partition_point(|(t, _)| *t <= us);
        if i == 0 {
            0
        } else {
            timeline[i - 1].1
        }
    };
    let mut groups: Vec<(u64, measure::Interval)> = Vec::new();
    for iv in intervals.iter().filter(|i| i.end_us > i.start_us) {
        let open = open_at(iv.end_us) / step * step;
        match groups.iter_mut().find(|g| g.0 == open) {
            Some(g) => g.1.merge(iv),
            None => {
                let mut m = measure::Interval::default();
                m.merge(iv);
                groups.push((open, m));
            }
        }
    }
    groups.sort_by_key(|g| g.0);
    groups
        .into_iter()
        .map(|(open, m)| {
            let t = m.total();
            // The merged span, not the sum of lengths: steps are made of whole intervals.
            let secs: f64 = intervals
                .iter()
                .filter(|i| i.end_us > i.start_us && open_at(i.end_us) / step * step == open)
                .map(measure::Interval::duration_s)
                .sum();
            StormStep {
                open_connections: open,
                seconds: secs,
                tps: if secs > 0.0 {
                    t.committed() as f64 / secs
                } else {
                    0.0
                },
                p99_ms: t.latency.percentile_us(99.0) as f64 / 1000.0,
            }
        })
        .collect()
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        self.inner.load_embedded(ctx)
    }
    fn connections_besides_clients(&self) -> u64 {
        self.job.connections
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        self.inner.before(ctx)
    }

    fn describe(&self) -> String {
        format!(
            "connection-storm, {} idle connections at {}/s while {} busy clients run {}",
            self.job.connections,
            self.job.rate,
            self.job.busy,
            self.inner.describe()
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let (start_tx, start_rx) = tokio::sync::oneshot::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let conn = ctx.conn().clone();
        let job = self.job.clone();
        let local_pg = ctx.target.embedded.is_some();
        let thread = std::thread::Builder::new()
            .name("storm".into())
            .spawn(move || storm(conn, job, local_pg, start_rx, stop_rx))
            .map_err(RunError::Threads)?;
        let mut start = Some(start_tx);
        let mut wrapped = |e: Event<'_>| {
            if let Event::Connected { .. } = e {
                if let Some(tx) = start.take() {
                    let _ = tx.send(Instant::now());
                }
            }
            on_event(e)
        };
        let ran = self.inner.run(ctx, &mut wrapped);
        let _ = stop_tx.send(());
        self.stormed = Some(thread.join().unwrap_or_default());
        ran
    }

    fn finish(&mut self, ctx: &Ctx) -> Result<Finish> {
        let mut f = self.inner.finish(ctx)?;
        if let Some(s) = &self.stormed {
            // Each held session's start-up (its `SELECT 1` is in `counted_commits`).
            f.connections += s.opened + s.probe_connections;
        }
        Ok(f)
    }

    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        // The `SELECT 1` each live held session answered commits once, and so does the memory
        // probe's query.
        let held = (self.stormed.as_ref()).map_or(0, |s| s.held_at_end + s.probe_commits);
        self.inner.counted_commits(outcome, fin) + held
    }

    fn mysql_refusal(&self) -> Option<(String, String)> {
        self.inner.mysql_refusal()
    }

    fn commit_status(
        &self,
        ctx: &Ctx,
        c: crate::checks::CommitCheck,
        maintenance: i64,
    ) -> Result<(CheckStatus, String)> {
        // A failed attempt may still have started a backend (one that timed out on this side
        // starts later, and commits its start-up), or not (a refused one): no count tells.
        if let Some(s) = self.stormed.as_ref().filter(|s| !s.failures.is_empty()) {
            let failed: u64 = s.failures.iter().map(|f| f.1).sum();
            return Ok((
                CheckStatus::Skipped,
                format!(
                    "inconclusive: {failed} connection attempts failed, and a failed attempt may \
                     or may not have started a server session ({})",
                    c.detail
                ),
            ));
        }
        self.inner.commit_status(ctx, c, maintenance)
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        self.inner.checks(ctx, outcome)
    }

    /// The busy clients' select-only transactions (the held connections send nothing).
    fn ledger_claims(&self, outcome: &Outcome, fin: &Finish) -> Vec<measure::ledger::Claim> {
        self.inner.ledger_claims(outcome, fin)
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let mut c = self.inner.config(ctx);
        c.workload = "connection-storm".into();
        c
    }

    fn section(&self, result: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        report::section::keyed(&self.storm_section(result)?)
    }
}

impl Runner {
    fn storm_section(&self, result: &report::RunResult) -> Option<ConnectionStorm> {
        let s = self.stormed.as_ref()?;
        Some(ConnectionStorm {
            target_connections: self.job.connections,
            connect_rate_per_s: self.job.rate,
            busy_clients: self.job.busy,
            attempted: s.attempted,
            opened: s.opened,
            held_at_end: s.held_at_end,
            ramp_s: s.ramp_s,
            connect_latency_ms: ConnectLatency::of(&s.latency),
            failures: (s.failures.iter())
                .map(|(kind, count, example)| StormFailure {
                    kind: kind.clone(),
                    count: *count,
                    example: example.clone(),
                })
                .collect(),
            memory: s.memory.clone(),
            steps: steps(self.job.connections, &s.timeline, &result.intervals),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(start_s: u64, txns: u64, lat_us: u64) -> measure::Interval {
        let mut h = measure::Histogram::new();
        for _ in 0..txns {
            h.record(lat_us);
        }
        measure::Interval {
            start_us: start_s * 1_000_000,
            end_us: (start_s + 1) * 1_000_000,
            txns: vec![measure::TxnStats {
                latency: h,
                ..Default::default()
            }],
        }
    }

    #[test]
    fn intervals_go_to_the_step_open_at_their_end() {
        // 100 connections, steps of 10: 0 open in second 0, 25 at 1.5 s, 100 from 2.5 s.
        let timeline = [(1_500_000, 25), (2_500_000, 100)];
        let iv = [
            interval(0, 100, 1000),
            interval(1, 90, 1000),
            interval(2, 80, 2000),
            interval(3, 80, 2000),
        ];
        let s = steps(100, &timeline, &iv);
        let got: Vec<(u64, f64, f64)> = s
            .iter()
            .map(|x| (x.open_connections, x.seconds, x.tps))
            .collect();
        assert_eq!(got, [(0, 1.0, 100.0), (20, 1.0, 90.0), (100, 2.0, 80.0)]);
        assert!((s[2].p99_ms - 2.0).abs() < 0.01, "{}", s[2].p99_ms);
    }

    #[test]
    fn failures_are_sorted_by_kind() {
        let refused = sut::Error::Connect {
            target: "x".into(),
            cause: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(failure_kind(&refused), "refused");
        let timeout = sut::Error::Io(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert_eq!(failure_kind(&timeout), "timeout");
        let other = sut::Error::Protocol("bad".into());
        assert_eq!(failure_kind(&other), "other");
    }
}
