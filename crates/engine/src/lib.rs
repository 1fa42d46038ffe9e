//! # engine: when transactions run, and how long they took
//!
//! Owns time. Runs `clients` client tasks on `threads` OS threads (one current-thread tokio
//! runtime each, so a client never migrates and its thread's [`measure::Recorder`] needs no lock),
//! schedules transactions (closed loop, or a Poisson schedule for `-R` with latency from the
//! scheduled start), retries serialization failures and deadlocks with the same random values,
//! reconnects per transaction for `-C`, ticks intervals for `-P`, and stops on `-T`, `-t` or
//! cancellation (Ctrl-C), finishing in-flight transactions.
//!
//! Must not touch: any particular workload (it is generic over [`workload::Workload`]), argv,
//! output formats. It reports through [`Event`]s and returns an [`Outcome`].
//!
//! ## Threads
//! (In threads mode, `--io threads` or `--io auto`'s choice for few clients per core, there is
//! one OS thread per client and its socket blocks: `io` says why and when.)
//! `threads` OS threads (capped at `clients`), each running a tokio *current-thread* runtime
//! (I/O driver only) whose one future polls the thread's clients as a hand-written join set with
//! a timerfd timer (`exec`: why, and the measurements); client `i` runs on thread
//! `i % threads` and never moves. Why not one
//! multi-threaded (work-stealing) runtime: a stolen client migrates between cores with its socket
//! and its recorder, so the recorder would need a lock or an atomic on every transaction, and the
//! wake-ups cross cores. Measured for issue 4 (`issues show 4`, PostgreSQL 15, 2 cores, 8 clients,
//! select-only prepared): tokio-postgres on one current-thread runtime per core cost 7.5 us of
//! client CPU per transaction against 8.3 us on the multi-thread runtime (pgbench: 5.8), and the
//! hand-written session on per-core current-thread runtimes 4.3-4.8 us. Each thread owns one
//! [`measure::Recorder`] in an `Rc<RefCell<_>>` shared by its clients: no lock, no atomic, no
//! allocation on the hot path; one clock read per transaction boundary (`clock_gettime` through
//! the vDSO, no syscall): the read that ends a transaction starts the next one in a closed loop,
//! as in pgbench.
//!
//! ## Phases
//! 1. Every thread opens its clients' connections (at most [`CONNECT_CONCURRENCY`] = 32 attempts
//!    in flight per thread, by 32 opener futures taking clients in turn) and runs the workload's
//!    `on_connect`; the first failure calls the run off ([`RunError::Connect`]). An attempt
//!    that finds the server's listen queue full (EAGAIN on a unix socket: a connection storm) is
//!    retried after a pause, not failed. Under `-C` nothing is opened here (pgbench connects per
//!    transaction). This time is [`Outcome::connect_time`], outside the measured run: `t0`, the
//!    zero of every latency, schedule slot, tick and `-T` deadline, is taken after the barrier.
//!
//! ## Memory per client (issue 4: <= 24 KiB per connection at 10,000 connections)
//! A client costs its session (buffers: see `sut::Session`'s module header), its boxed
//! future (~1.7 KiB for tpcb; the connect future is boxed apart so the ~2 KiB it needs is not
//! carried by every client for its whole life), a waker in the thread's join set and its
//! registration with the runtime's epoll. Connecting creates at most [`CONNECT_CONCURRENCY`]
//! futures per thread at a time, so the peak is not N half-made connections.
//! 2. A barrier: the calling thread emits [`Event::Starting`] (its handler may take a moment:
//!    the observer's baseline snapshot, so the server's deltas hold the clients' first
//!    statements), takes the common start `t0` (all times are microseconds since it), emits
//!    [`Event::Connected`] and releases the threads.
//! 3. Clients loop as pgbench's state machine does: choose the transaction type (weighted, own
//!    stream), under `-R` take the next slot of the thread's Poisson schedule (see
//!    [`schedule`]; with `-L`, slots already later than the limit are skipped and counted), sleep
//!    until it, run the transaction, record it. Latency runs from the scheduled start (the actual
//!    start without `-R`); lag = actual - scheduled start.
//! 4. Closing: a client that is done keeps its session open; each thread counts its sessions'
//!    commits, reports, and waits until *every* thread has reported before it closes them.
//!    Disconnecting, like connecting, is outside the measured run: under `-R` with thousands of
//!    clients most of them are done at once (their first slot is beyond `-T`'s end), and
//!    thousands of backends exiting together took the cores from the clients that had slots
//!    (`-c 5000 -R 100 -T 3` ran 9 transactions of ~300; at 2,000 clients the lag averaged
//!    0.3-0.6 s, 0.2 ms since). Under `-C` sessions still close per transaction (pgbench's
//!    meaning of `-C`).
//!
//! ## Ticks
//! With `-P`, every thread takes its recorder at the same nominal boundaries `k * P` and sends the
//! interval to the calling thread, which merges one interval per tick across threads, calls
//! [`Event::Progress`] with it and keeps it in [`Outcome::intervals`]. When a thread's clients are
//! done it sends the rest as a tail; the tails make the last (partial, not announced) interval.
//! Without `-P` there are no ticks: the tails make one interval for the whole run. Under `-T` no
//! tick falls at or after the deadline, so the last interval includes the in-flight transactions
//! that finished after it (pgbench counts them too).
//!
//! ## Retries and failures
//! A serialization failure (40001) or deadlock (40P01) ends the try; the engine sends ROLLBACK
//! when the session is left in a (failed) transaction block, and if tries remain (`max_tries`, 0 = unlimited; with `-L` also while within the limit since
//! the scheduled start) restores the client's random stream to its state at the transaction's
//! start and runs it again: same values, as pgbench. Out of tries, the transaction counts as
//! failed by kind. Any other error (a different SQLSTATE, a lost connection) fails the
//! transaction as `Other` and aborts the client, as pgbench aborts it ([`Outcome::aborted`]).
//! Counting identity per transaction type: `scheduled = committed + failed + skipped`; under
//! `-t n` every client that was not aborted has `scheduled = n` (skipped ones count, as pgbench).
//!
//! ## Random streams
//! From `seed` by pgbench's derivation ([`workload::Streams`]): client `i`'s workload stream is
//! pgbench's client `i` stream; its choice stream and its thread's schedule stream are pgbench's
//! thread `i` streams. So with one client per thread every stream is exactly pgbench's.
//!
//! ## Commits
//! [`Outcome::server_commits`] sums every session's wire-level count of committed server
//! transactions; [`Outcome::setup_commits`] is the part made outside measured transactions
//! (`on_connect`, ROLLBACK after an error). Identity (tested): `total committed +
//! setup_commits = server_commits` — each committed transaction commits exactly once on the
//! server, failed ones never.

pub mod schedule;

mod collect;
mod connect;
mod cutoff;
mod endpoint;
mod exec;
mod fault;
mod io;
mod route;
mod spec;
mod txn;
mod txnlog;
mod worker;

pub use endpoint::EndpointStats;
pub use io::{check_io, engine_threads, IoMode, THREADS_CORES_PER_CLIENT, THREADS_MAX_CLIENTS};
pub use route::ReadFrom;
pub use spec::{
    Abort, ClientStats, Event, Outcome, RunError, RunSpec, Say, ScheduleLag, Spread, Stop,
};
pub use txnlog::LogSpec;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use measure::{Interval, Recorder};
use sut::Target;
use tokio::sync::{oneshot, Notify};
use workload::Streams;

use crate::collect::Collector;
use crate::schedule::{StopRule, Throttle};
use crate::worker::{Msg, ThreadCtx, Totals};

/// Most initial connection attempts in flight per engine thread.
pub const CONNECT_CONCURRENCY: usize = connect::CONNECT_CONCURRENCY;

/// State shared by the calling thread and every engine thread.
pub(crate) struct Shared {
    /// Set on cancellation: clients start no new transaction.
    pub stopping: AtomicBool,
    /// Wakes clients sleeping until a scheduled start when `stopping` is set.
    pub wake: Notify,
    /// Set (and `release` notified) once every thread has reported its clients done: only then
    /// are the sessions closed (see "Closing" in the module header).
    pub released: AtomicBool,
    pub release: Notify,
    /// When blocking sockets (threads mode) give up waiting: Ctrl-C, `-T`'s deadline.
    pub unblock: Arc<sut::Unblock>,
}

impl Shared {
    /// Let the engine threads close their sessions.
    fn release_sessions(&self) {
        self.released.store(true, Ordering::SeqCst);
        self.release.notify_waiters();
    }
}

/// Releases the sessions when dropped: a panic on the calling thread (in `on_event`, say) must
/// not leave the engine threads waiting for a release that never comes while the scope joins
/// them.
struct ReleaseOnDrop<'a>(&'a Shared);

impl Drop for ReleaseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.release_sessions();
    }
}

/// Run a workload. Blocks the calling thread until the run ends; calls `on_event` on the calling
/// thread. Setting `cancel` ends the run early: in-flight transactions finish (a client still
/// waiting for the server 100 ms later gives up, in every I/O mode: `Outcome::abandoned`; 5 s
/// after `-T`'s end), then
/// the partial outcome is returned with `interrupted = true`.
pub fn run<W: workload::Workload>(
    spec: &RunSpec,
    workload: Arc<W>,
    conn: &Target,
    cancel: Arc<AtomicBool>,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Outcome, RunError> {
    // ----- validate -----
    let n_types = workload.txn_types().len();
    if spec.clients == 0 {
        return Err(RunError::Invalid(
            "the number of clients must be at least 1".into(),
        ));
    }
    if n_types == 0 {
        return Err(RunError::Invalid(
            "the workload has no transaction types".into(),
        ));
    }
    let weights = if spec.weights.is_empty() {
        vec![1; n_types]
    } else {
        spec.weights.clone()
    };
    if weights.len() != n_types {
        return Err(RunError::Invalid(format!(
            "{} weights for {} transaction types",
            weights.len(),
            n_types
        )));
    }
    check_io(spec.io, spec.connect_per_txn).map_err(RunError::Invalid)?;
    let total_weight: u64 = weights.iter().map(|w| *w as u64).sum();
    if total_weight == 0 {
        return Err(RunError::Invalid(
            "total script weight must not be zero".into(),
        ));
    }
    if let Some(r) = spec.rate_tps {
        if !(r > 0.0 && r.is_finite()) {
            return Err(RunError::Invalid(format!("invalid rate limit: {r}")));
        }
    }
    workload.validate(spec.mode).map_err(RunError::Invalid)?;
    let route = route::Route::new(
        spec.read_from,
        conn,
        |i| workload.read_only(i),
        &weights,
        spec.connect_per_txn,
    )
    .map_err(RunError::Invalid)?;
    let (io, io_choice) = io::resolve_io(spec, io::cores());
    if io == IoMode::Threads && spec.fault_run {
        return Err(RunError::Invalid(
            "--io threads cannot be used in a fault run (reconnecting goes through epoll); use \
             --io auto"
                .into(),
        ));
    }
    // Threads mode: one OS thread per client.
    let threads = match io {
        IoMode::Threads => spec.clients,
        _ => spec.threads.clamp(1, spec.clients),
    };
    let spec = &RunSpec { io, ..spec.clone() };
    let stop = match spec.stop {
        Stop::Duration(d) => StopRule {
            deadline_us: Some(d.as_micros() as u64),
            per_client: None,
        },
        Stop::Transactions(n) => StopRule {
            deadline_us: None,
            per_client: Some(n),
        },
    };
    let shape: Vec<usize> = workload
        .txn_types()
        .iter()
        .map(|t| {
            if spec.per_statement {
                t.statements.len()
            } else {
                0
            }
        })
        .collect();

    // ----- log files (one per thread), before any connection -----
    let mut log_files: Vec<Option<std::fs::File>> = (0..threads).map(|_| None).collect();
    if let Some(log) = &spec.log {
        if log.paths.len() < threads as usize && io == IoMode::Threads {
            return Err(RunError::Invalid(
                "--io threads with -l needs -j equal to -c: the logs are one per thread".into(),
            ));
        }
        if log.paths.len() < threads as usize {
            return Err(RunError::Invalid(format!(
                "{} log files for {threads} threads",
                log.paths.len()
            )));
        }
        if let Some(r) = log.sampling_rate {
            if !(r > 0.0 && r <= 1.0) {
                return Err(RunError::Invalid(format!("invalid sampling rate: {r}")));
            }
        }
        if log.aggregate.is_some_and(|d| d.is_zero()) {
            return Err(RunError::Invalid("invalid aggregation interval: 0".into()));
        }
        for (slot, path) in log_files.iter_mut().zip(&log.paths) {
            *slot = Some(std::fs::File::create(path).map_err(|source| RunError::Log {
                path: path.display().to_string(),
                source,
            })?);
        }
    }
    let log_fields = txnlog::Fields {
        lag: spec.rate_tps.is_some(),
        retries: spec.max_tries != 1,
        detailed: spec.log.as_ref().is_some_and(|l| l.failures_detailed),
    };
    let streams = Streams::new(spec.seed, spec.clients);

    // ----- streams and client placement -----
    let mut per_thread: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, s) in Streams::new(spec.seed, spec.clients)
        .client_streams()
        .into_iter()
        .enumerate()
    {
        // Placed on a thread by the local index; named by the global id.
        per_thread[i % threads as usize].push((spec.first_client_id + i as u32, s));
    }

    let shared = Arc::new(Shared {
        stopping: AtomicBool::new(false),
        wake: Notify::new(),
        released: AtomicBool::new(false),
        release: Notify::new(),
        unblock: Arc::new(sut::Unblock::default()),
    });
    let (tx, rx) = mpsc::channel::<Msg>();
    let connect_start = Instant::now();

    std::thread::scope(|scope| {
        let _release_on_unwind = ReleaseOnDrop(&shared);
        let mut handles = Vec::with_capacity(threads as usize);
        let mut starts = Vec::with_capacity(threads as usize);
        for ((t, mine), log_file) in per_thread.into_iter().enumerate().zip(log_files) {
            let log = log_file.map(|f| {
                let spec = spec.log.as_ref().expect("files only with -l");
                let sample = streams.slot_streams(t as u32).2;
                RefCell::new(txnlog::TxnLog::new(f, spec, log_fields, sample))
            });
            let (start_tx, start_rx) = oneshot::channel::<Option<Instant>>();
            starts.push(start_tx);
            let throttle_rng = mine[0].1.throttle.clone();
            let ctx_parts = (
                spec.clone(),
                conn.clone(),
                workload.clone(),
                shared.clone(),
                weights.clone(),
                shape.clone(),
                tx.clone(),
                route.clone(),
            );
            let h = std::thread::Builder::new()
                .name(format!("stampede-engine-{t}"))
                .spawn_scoped(scope, move || {
                    let (spec, conn, workload, shared, weights, shape, tx, route) = ctx_parts;
                    // I/O only: the engine's own timer ([`exec::Timer`]) serves -R, -P,
                    // \sleep and the connections' `connect_timeout`. tokio's time driver costs
                    // ~550 instructions per park even with no timer armed.
                    let mut builder = tokio::runtime::Builder::new_current_thread();
                    builder.enable_io();
                    let rt_timer = builder.build().and_then(|rt| {
                        let timer = {
                            let _in_rt = rt.enter();
                            exec::Timer::new(exec::Clock::from_instant(Instant::now()))
                        }?;
                        Ok((rt, timer))
                    });
                    let (rt, timer) = match rt_timer {
                        Ok(x) => x,
                        Err(e) => {
                            let _ = tx.send(Msg::Connected {
                                result: Err(sut::Error::Io(e)),
                            });
                            let _ = tx.send(Msg::Done {
                                thread: t,
                                tail: Interval::default(),
                                totals: Box::default(),
                            });
                            return;
                        }
                    };
                    let throttle = spec
                        .rate_tps
                        .map(|r| RefCell::new(Throttle::new(r, threads, throttle_rng)));
                    let ctx = Rc::new(ThreadCtx {
                        limit_us: spec.latency_limit.map(|l| l.as_micros() as u64),
                        spec,
                        conn,
                        workload,
                        shared,
                        weights,
                        total_weight,
                        stop,
                        t0: Cell::new(Instant::now()),
                        rec: RefCell::new(Recorder::new(shape, 0)),
                        throttle,
                        totals: RefCell::new(Totals::default()),
                        live: Cell::new(0),
                        all_done: Notify::new(),
                        timer,
                        log,
                        diag: tx.clone(),
                        history: RefCell::new(Default::default()),
                        route,
                        readers: RefCell::new(Vec::new()),
                        in_flight: cutoff::InFlight::new(mine.len()),
                    });
                    rt.block_on(worker::thread_main(ctx, t, mine, tx, start_rx));
                })
                .map_err(RunError::Threads);
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Call off the threads already started.
                    for s in starts {
                        let _ = s.send(None);
                    }
                    return Err(e);
                }
            }
        }
        drop(tx);

        // Wait for a message; watch for cancellation and for threads that died (panicked).
        let mut done_flags = vec![false; threads as usize];
        let mut stopping_sent = false;
        let mut recv = |handles: &[std::thread::ScopedJoinHandle<'_, ()>],
                        done_flags: &[bool]|
         -> Option<Msg> {
            loop {
                // Checked before every wait, so a steady stream of ticks cannot hide it.
                if !stopping_sent && cancel.load(Ordering::Relaxed) {
                    stopping_sent = true;
                    // Clients blocked in a read (threads mode) give up within a slice.
                    shared.unblock.stop();
                    shared.stopping.store(true, Ordering::SeqCst);
                    shared.wake.notify_waiters();
                }
                // Every 100 ms: a wake-up of this thread costs ~50 us of CPU on a small VM, so
                // polling at 20 ms took 5 us of every transaction of a `-R 500` trickle
                // (schedstat of each thread, issue 4); 100 ms is still an instant Ctrl-C.
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(m) => return Some(m),
                    Err(RecvTimeoutError::Timeout) => {
                        let dead = handles
                            .iter()
                            .zip(done_flags)
                            .any(|(h, d)| h.is_finished() && !d);
                        if dead {
                            // A thread sends Done before it returns: if its messages are not all
                            // in the channel by now, it panicked.
                            match rx.try_recv() {
                                Ok(m) => return Some(m),
                                Err(_) => return None,
                            }
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => return None,
                }
            }
        };
        // A thread died: stop the others, then re-raise its panic.
        let fail = |handles: Vec<std::thread::ScopedJoinHandle<'_, ()>>| -> ! {
            shared.unblock.stop();
            shared.stopping.store(true, Ordering::SeqCst);
            shared.wake.notify_waiters();
            shared.release_sessions();
            let mut payload = None;
            for h in handles {
                if let Err(p) = h.join() {
                    payload.get_or_insert(p);
                }
            }
            match payload {
                Some(p) => std::panic::resume_unwind(p),
                None => panic!("an engine thread ended without reporting"),
            }
        };

        // ----- phase 1 -> 2: every thread connected, or the first error -----
        let mut connected = 0;
        let mut first_err: Option<sut::Error> = None;
        let mut early_done: Vec<(usize, Interval, Box<Totals>)> = Vec::new();
        while connected < threads {
            match recv(&handles, &done_flags) {
                Some(Msg::Connected { result, .. }) => {
                    connected += 1;
                    if let Err(e) = result {
                        if first_err.is_none() {
                            first_err = Some(e);
                        }
                    }
                }
                Some(Msg::Done {
                    thread,
                    tail,
                    totals,
                }) => {
                    done_flags[thread] = true;
                    early_done.push((thread, tail, totals));
                }
                Some(Msg::Tick { .. }) => {}
                Some(Msg::Aborted(a)) => on_event(Event::Aborted(&a)),
                Some(Msg::Notice(n)) => on_event(Event::Notice(&n)),
                Some(Msg::Info(i)) => on_event(Event::Info(&i)),
                None => {
                    for s in starts {
                        let _ = s.send(None);
                    }
                    fail(handles);
                }
            }
        }
        if let Some(e) = first_err {
            for s in starts {
                let _ = s.send(None);
            }
            for h in handles {
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
            }
            return Err(RunError::Connect(e));
        }
        let connect_time = connect_start.elapsed();
        // Before the fleet's common start, so a handler's moment does not move it.
        on_event(Event::Starting);
        // A fleet's common start: every process's clients begin at the same server instant.
        if let Some(at) = spec.start_at {
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
        }
        let t0 = Instant::now();
        let started_at = SystemTime::now();
        // Threads mode: a client still blocked in a read past -T's end and the grace gives up
        // (`Unblock`), as the event loops cut it off (`cutoff`).
        if let Stop::Duration(d) = spec.stop {
            let t0_mono = exec::mono_us().saturating_sub(t0.elapsed().as_micros() as u64);
            (shared.unblock).set_deadline_us(
                t0_mono
                    .saturating_add(d.as_micros() as u64)
                    .saturating_add(cutoff::DEADLINE_GRACE_US),
            );
        }
        on_event(Event::Connected {
            clients: spec.clients,
            elapsed: connect_time,
        });
        for s in starts {
            let _ = s.send(Some(t0));
        }

        // ----- phase 3: collect ticks until every thread is done -----
        let mut coll = Collector::new(threads as usize);
        let mut intervals = Vec::new();
        let mut totals = Totals::default();
        let add_totals = |t: Totals, totals: &mut Totals| {
            totals.aborted.extend(t.aborted);
            totals.server_commits += t.server_commits;
            if totals.endpoint_commits.len() < t.endpoint_commits.len() {
                totals.endpoint_commits.resize(t.endpoint_commits.len(), 0);
                totals
                    .endpoint_failed_commits
                    .resize(t.endpoint_commits.len(), 0);
            }
            for (a, b) in totals.endpoint_commits.iter_mut().zip(&t.endpoint_commits) {
                *a += b;
            }
            for (a, b) in
                (totals.endpoint_failed_commits.iter_mut()).zip(&t.endpoint_failed_commits)
            {
                *a += b;
            }
            totals.setup_commits += t.setup_commits;
            totals.tally.merge(&t.tally);
            totals.setup_tally.merge(&t.setup_tally);
            totals.reconnects += t.reconnects;
            totals.reconnect_time += t.reconnect_time;
            totals.connections += t.connections;
            totals.connect_retries += t.connect_retries;
            totals.ring_threads += t.ring_threads;
            totals.blocking_threads += t.blocking_threads;
            totals.abandoned += t.abandoned;
            totals.clients.extend(t.clients);
            totals.history.merge(t.history);
            totals.endpoints.merge(&t.endpoints);
            totals.schedule.merge(&t.schedule);
            if totals.epoll_why.is_none() {
                totals.epoll_why = t.epoll_why;
            }
        };
        for (thread, tail, t) in early_done {
            coll.finish(thread, tail);
            add_totals(*t, &mut totals);
        }
        while !coll.all_done() {
            match recv(&handles, &done_flags) {
                Some(Msg::Tick {
                    thread,
                    k,
                    interval,
                }) => coll.tick(thread, k, interval),
                Some(Msg::Done {
                    thread,
                    tail,
                    totals: t,
                }) => {
                    done_flags[thread] = true;
                    coll.finish(thread, tail);
                    add_totals(*t, &mut totals);
                }
                Some(Msg::Connected { .. }) => {}
                Some(Msg::Aborted(a)) => on_event(Event::Aborted(&a)),
                Some(Msg::Notice(n)) => on_event(Event::Notice(&n)),
                Some(Msg::Info(i)) => on_event(Event::Info(&i)),
                None => fail(handles),
            }
            while let Some(iv) = coll.next_full() {
                on_event(Event::Progress(&iv));
                intervals.push(iv);
            }
        }
        // Every client of every thread is done: now the sessions may close.
        shared.release_sessions();
        for h in handles {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        if let Some(iv) = coll.final_partial() {
            intervals.push(iv);
        }
        let mut total = Interval::default();
        for iv in &intervals {
            total.merge(iv);
        }
        totals.aborted.sort_by_key(|a| a.client_id);
        totals.clients.sort_by_key(|c| c.client_id);
        Ok(Outcome {
            started_at,
            connect_time,
            intervals,
            total,
            aborted: totals.aborted,
            // Ctrl-C only: a stop caused by `--exit-on-abort` is reported through `aborted`.
            interrupted: cancel.load(Ordering::Relaxed),
            server_commits: totals.server_commits,
            endpoint_commits: totals.endpoint_commits,
            endpoint_failed_commits: totals.endpoint_failed_commits,
            setup_commits: totals.setup_commits,
            tally: totals.tally,
            setup_tally: totals.setup_tally,
            reconnects: totals.reconnects,
            reconnect_time: totals.reconnect_time,
            connections: totals.connections,
            threads,
            initial_connections: totals.connections - totals.reconnects.min(totals.connections),
            connect_concurrency: threads * CONNECT_CONCURRENCY as u32,
            connect_retries: totals.connect_retries,
            ring_threads: totals.ring_threads,
            epoll_why: totals.epoll_why,
            blocking_threads: totals.blocking_threads,
            io_choice: io_choice.filter(|_| totals.blocking_threads > 0),
            abandoned: totals.abandoned,
            clients: totals.clients,
            history: totals.history,
            endpoints: totals.endpoints.into_vec(conn.endpoints()),
            schedule: totals.schedule,
        })
    })
}
