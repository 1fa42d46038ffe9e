//! One engine thread: a current-thread tokio runtime (I/O driver only) running this thread's
//! clients in one [`JoinSet`] with the thread's [`Timer`] (see [`crate::exec`] for why and the
//! measurements), the thread's [`Recorder`] (shared by its clients through a `RefCell`, never locked),
//! its `-R` schedule, and a ticker that hands the recorder's interval to the calling thread on
//! every progress boundary.
//!
//! Connecting runs on the runtime's epoll. The measured run and closing run on the thread's
//! io_uring ring instead when it can have one ([`choose_io`], `target::ring`): the sessions are
//! moved onto it before the barrier and the same join set is then driven by the ring's
//! `block_on`, the timer by the ring's timed waits.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use measure::attempts::{Attempt, History, Op, Outcome as Attempted};
use measure::{FailureKind, Interval, Recorder};
use target::{Error, ErrorClass, Session, Target};
use tokio::sync::{oneshot, Notify};

use crate::exec::{Clock, JoinSet, Timer};
use workload::{ClientStreams, ClientWorkload, Rng, Sleeper, StatementTimer, TxnContext, Workload};

use crate::fault;
use crate::route::Route;
use crate::schedule::{choose, may_retry, Slot, StopRule, Throttle};
use crate::txnlog::{Logged, TxnLog};
use crate::{Abort, ClientStats, RunSpec, Shared};

/// At most this many connection attempts in flight per thread while opening the initial
/// connections (a connection storm helps nobody; the server's accept queue is finite, and
/// PostgreSQL forks a backend per connection: on 2 cores more in flight only queues).
pub(crate) const CONNECT_CONCURRENCY: usize = 32;

/// A connection attempt that failed because the server's listen queue was full (a unix socket's
/// `connect` returns EAGAIN then, where TCP would retransmit the SYN) is retried after a pause
/// that doubles from [`RETRY_FIRST_US`] up to [`RETRY_MAX_US`], for at most this long in all.
const RETRY_FOR_US: u64 = 30_000_000;
const RETRY_FIRST_US: u64 = 1_000;
const RETRY_MAX_US: u64 = 100_000;

/// True for a connection error worth retrying in a connection storm: the socket's listen queue
/// was full (EAGAIN / WouldBlock from `connect`). Refusals (nothing listening, "too many clients"
/// from the server) are not retried: waiting would not change them.
fn storm_full(e: &Error) -> bool {
    matches!(e, Error::Connect { cause, .. } if cause.kind() == std::io::ErrorKind::WouldBlock)
}

/// `Session::connect`, retrying while the listen queue is full (see [`RETRY_FOR_US`]); pauses on
/// the thread's timer (the runtime has no time driver). Returns the session and the retries.
async fn connect_retrying(conn: &Target, timer: &Timer) -> Result<(Session, u64), Error> {
    let mut pause = RETRY_FIRST_US;
    let mut retries = 0;
    let give_up = timer.now_us().saturating_add(RETRY_FOR_US);
    loop {
        // Boxed: the connect future (~2 KiB) would otherwise be part of every client's future
        // for its whole life, though it runs only at the start (or per transaction under -C).
        match Box::pin(Session::connect(conn)).await {
            Err(e) if storm_full(&e) && timer.now_us() < give_up => {
                retries += 1;
                timer.sleep_until(timer.now_us() + pause).await;
                pause = (pause * 2).min(RETRY_MAX_US);
            }
            Err(e) => return Err(e),
            Ok(s) => return Ok((s, retries)),
        }
    }
}

/// From an engine thread to the calling thread.
pub(crate) enum Msg {
    /// Phase 1 finished on this thread: all its clients connected, or the first error.
    Connected { result: Result<(), Error> },
    /// Tick `k`: the thread's recorder over `[(k-1)P, kP]`.
    Tick {
        thread: usize,
        k: u64,
        interval: Interval,
    },
    /// A client aborted (also kept in the thread's totals), sent as it happens.
    Aborted(Abort),
    /// A notice a client's session received, sent as it arrives.
    Notice(target::DbError),
    /// `--verbose-errors`: a line for information.
    Info(String),
    /// All this thread's clients are done: its last interval and its counters.
    Done {
        thread: usize,
        tail: Interval,
        totals: Totals,
    },
}

/// Per-thread counters that are not per-interval.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub aborted: Vec<Abort>,
    pub server_commits: u64,
    /// COMMIT statements that committed, per endpoint of the target
    /// (`Session::explicit_commits`), for the per-node commit count on MySQL.
    pub endpoint_commits: Vec<u64>,
    /// COMMIT statements that failed, per endpoint (`Session::failed_commits`).
    pub endpoint_failed_commits: Vec<u64>,
    pub setup_commits: u64,
    pub reconnects: u64,
    pub reconnect_time: Duration,
    pub connections: u64,
    /// Connection attempts retried because the listen queue was full.
    pub connect_retries: u64,
    /// Threads whose measured run went through an io_uring ring, and why the others did not.
    pub ring_threads: u32,
    pub epoll_why: Option<String>,
    /// Each client's committed transactions and their time.
    pub clients: Vec<ClientStats>,
    /// A fault run's record of every attempt (`crate::fault`); empty otherwise.
    pub history: History,
    /// Per endpoint: latency, failures, sessions and commits (`crate::endpoint`).
    pub endpoints: crate::endpoint::Tally,
}

/// Committed server transactions seen on a session's wire (`Session::server_commits`: explicit
/// COMMITs that committed, and implicit transactions that ran work and ended without error).
#[inline]
fn wire_commits(s: &Session) -> u64 {
    s.server_commits()
}

/// Everything a thread's clients share. Lives in an `Rc` on the thread.
pub(crate) struct ThreadCtx<W: Workload> {
    pub spec: RunSpec,
    pub conn: Target,
    pub workload: Arc<W>,
    pub shared: Arc<Shared>,
    pub weights: Vec<u32>,
    pub total_weight: u64,
    pub stop: StopRule,
    pub limit_us: Option<u64>,
    /// The measured start; set at the barrier.
    pub t0: Cell<Instant>,
    pub rec: RefCell<Recorder>,
    pub throttle: Option<RefCell<Throttle>>,
    pub totals: RefCell<Totals>,
    /// Clients still running; the last one to finish notifies `all_done`.
    pub live: Cell<usize>,
    pub all_done: Notify,
    /// The thread's clock (from `t0`) and timer for `-R`, `-P` and `\sleep`.
    pub timer: Timer,
    /// `-l`: this thread's log.
    pub log: Option<RefCell<TxnLog>>,
    /// To the calling thread, for what is reported as it happens (aborts, notices).
    pub diag: Sender<Msg>,
    /// A fault run's record (`crate::fault`), moved into the totals when the thread is done.
    pub history: RefCell<History>,
    /// `--read-from`: the read/write split (`crate::route`).
    pub route: Option<Route>,
    /// Reader sessions of clients that are done, closed with the others after the run.
    pub readers: RefCell<Vec<Session>>,
}

impl<W: Workload> ThreadCtx<W> {
    #[inline]
    fn now_us(&self) -> u64 {
        self.timer.now_us()
    }

    /// A fault run's record of one attempt (`crate::fault`): a write when the workload says
    /// which row it wrote, or when its transaction type is not read-only.
    fn record<C: ClientWorkload>(
        &self,
        c: &Client<C>,
        txn: usize,
        start_us: u64,
        end_us: u64,
        outcome: Attempted,
    ) {
        let op = match c.wl.write_seq() {
            Some(seq) => Op::Write { seq: Some(seq) },
            None if self.workload.read_only(txn) => Op::Read,
            None => Op::Write { seq: None },
        };
        self.history.borrow_mut().attempts.push(Attempt {
            client: c.id,
            op,
            start_us,
            end_us,
            host: c.session.as_ref().and_then(|s| self.endpoint_of(s)),
            outcome,
        });
    }

    #[inline]
    fn stopping(&self) -> bool {
        self.shared.stopping.load(Ordering::Relaxed)
    }

    /// Sleep until `us` (since the start). False if the run is being cancelled.
    /// The target as client `id` connects to it: with several hosts, its hosts tried from
    /// the one `--spread` gives it (setup path: one clone per connection).
    fn client_conn(&self, id: u32) -> std::borrow::Cow<'_, Target> {
        if let Some(r) = &self.route {
            return std::borrow::Cow::Owned(r.writer(&self.conn));
        }
        let n = self.conn.endpoints();
        match self.spec.spread.first_host(id, n, self.spec.seed) {
            0 => std::borrow::Cow::Borrowed(&self.conn),
            k => std::borrow::Cow::Owned(self.conn.starting_at(k)),
        }
    }

    /// Add a session's wire commits to the thread's totals (when it closes or the run ends).
    fn count_commits(&self, s: &Session) {
        if let Some(e) = self.endpoint_of(s) {
            self.endpoint_session_counted(e, wire_commits(s));
        }
        let mut t = self.totals.borrow_mut();
        t.server_commits += wire_commits(s);
        if let Some(e) = self.endpoint_of(s) {
            if t.endpoint_commits.len() <= e {
                t.endpoint_commits.resize(e + 1, 0);
                t.endpoint_failed_commits.resize(e + 1, 0);
            }
            t.endpoint_commits[e] += s.explicit_commits();
            t.endpoint_failed_commits[e] += s.failed_commits();
        }
    }

    /// Which of the target's hosts a session is on.
    pub(crate) fn endpoint_of(&self, s: &Session) -> Option<usize> {
        s.endpoint_index(&self.conn)
    }

    async fn sleep_until_us(&self, us: u64) -> bool {
        if self.now_us() >= us {
            return !self.stopping();
        }
        let notified = self.shared.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.stopping() {
            return false;
        }
        tokio::select! {
            _ = self.timer.sleep_until(us) => !self.stopping(),
            _ = notified => false,
        }
    }

    /// `-l`: log one transaction (one branch when logging is off).
    #[inline]
    fn log(&self, client: u32, cnt: u64, txn: usize, now_us: u64, what: Logged, retries: u32) {
        if let Some(log) = &self.log {
            log.borrow_mut()
                .txn(client, cnt, txn, now_us, what, retries);
        }
    }

    /// Hand the notices a session received to the calling thread (one comparison when there
    /// are none, which is always on the hot path of a well-behaved workload).
    #[inline]
    fn forward_notices(&self, s: &mut Session) {
        if s.has_notices() {
            for n in s.take_notices() {
                let _ = self.diag.send(Msg::Notice(n));
            }
        }
    }

    fn info(&self, line: String) {
        let _ = self.diag.send(Msg::Info(line));
    }

    pub(crate) fn abort(&self, client_id: u32, e: &Error, at: Option<String>) {
        let reason = target::conninfo::redact(&e.to_string());
        let a = Abort {
            client_id,
            reason,
            at,
        };
        let _ = self.diag.send(Msg::Aborted(a.clone()));
        self.totals.borrow_mut().aborted.push(a);
        if self.spec.exit_on_abort {
            // Every thread's clients check `stopping` before their next transaction.
            self.shared.stopping.store(true, Ordering::SeqCst);
            self.shared.wake.notify_waiters();
        }
    }
}

/// One client: its workload state, its session and its random streams.
struct Client<C> {
    id: u32,
    wl: C,
    session: Option<Session>,
    /// `--read-from`: the reader session (`crate::route`); swapped into `session` for the
    /// transactions that run on it.
    reader: Option<Session>,
    rng: Rng,
    choose: Rng,
    /// Transactions done (committed, failed or skipped), for `-t`.
    cnt: u64,
    /// The clock read that ended the last transaction, which is also the start of the next in a
    /// closed loop (pgbench reuses it the same way): one clock read per transaction boundary.
    clock_hint: Option<u64>,
    /// Aborted before the run (the server refused its setup): runs no transaction.
    aborted: bool,
    /// Committed transactions and the time they took, for sysbench's "threads fairness".
    stats: ClientStats,
}

/// `-r` on: time each statement into the thread's recorder.
struct RecTimer<'a> {
    rec: &'a RefCell<Recorder>,
    txn: usize,
    start: Instant,
}

impl StatementTimer for RecTimer<'_> {
    #[inline]
    fn start(&mut self) {
        self.start = Instant::now();
    }
    #[inline]
    fn end(&mut self, index: usize, ok: bool) {
        let us = self.start.elapsed().as_micros() as u64;
        self.rec.borrow_mut().statement(self.txn, index, us, ok);
    }
}

/// A script's `\sleep` on the thread's runtime timer: runs to its end (past `-T`'s deadline too,
/// as pgbench's `CSTATE_SLEEP`), cut short by cancellation.
struct ScriptSleep<'a> {
    shared: &'a Shared,
    timer: &'a Timer,
}

impl Sleeper for ScriptSleep<'_> {
    fn sleep(&mut self, micros: u64) -> Pin<Box<dyn Future<Output = bool> + '_>> {
        Box::pin(async move {
            let notified = self.shared.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.shared.stopping.load(Ordering::Relaxed) {
                return false;
            }
            tokio::select! {
                _ = self.timer.sleep_until(self.timer.now_us().saturating_add(micros)) => true,
                _ = notified => false,
            }
        })
    }
}

/// `-r` off: no clock is read.
struct NoTimer;

impl StatementTimer for NoTimer {
    #[inline]
    fn start(&mut self) {}
    #[inline]
    fn end(&mut self, _: usize, _: bool) {}
}

/// A client's initial connection.
pub(crate) enum Opened {
    /// Connected and set up; with the server commits `on_connect` made (setup commits).
    Ready(Session, u64),
    /// Connected, but the server refused the workload's setup (`on_connect` returned a server
    /// error, say a statement that does not parse): the client aborts before its first
    /// transaction, as pgbench's client aborts at its first command, and the run goes on.
    Refused(Session, Error),
}

/// Open a session and run the workload's `on_connect` on it. A connection that cannot be made
/// is an error (the run is called off: nothing can be measured); a setup the server refuses is
/// [`Opened::Refused`].
pub(crate) async fn open<W: Workload>(
    ctx: &ThreadCtx<W>,
    conn: &Target,
    wl: &mut W::Client,
) -> Result<Opened, Error> {
    let (mut s, retries) = connect_retrying(conn, &ctx.timer).await?;
    ctx.totals.borrow_mut().connect_retries += retries;
    let before = wire_commits(&s);
    let r = wl.on_connect(&mut s, ctx.spec.mode).await;
    ctx.forward_notices(&mut s);
    let setup = wire_commits(&s) - before;
    match r {
        Ok(()) => Ok(Opened::Ready(s, setup)),
        Err(e @ Error::Db(_)) if s.is_usable() => {
            ctx.add_setup_commits(&s, setup);
            Ok(Opened::Refused(s, e))
        }
        Err(e) => Err(e),
    }
}

/// Close a session, adding its wire commits to the thread's total.
async fn close<W: Workload>(ctx: &ThreadCtx<W>, s: Session) {
    ctx.count_commits(&s);
    s.close().await;
}

/// The thread's whole life: phase 1 (connect), the barrier, phase 3 (run), the final report.
pub(crate) async fn thread_main<W: Workload>(
    ctx: Rc<ThreadCtx<W>>,
    thread: usize,
    mine: Vec<(u32, ClientStreams)>,
    tx: Sender<Msg>,
    start: oneshot::Receiver<Option<Instant>>,
) {
    // Phase 1: open every client's connection (none under -C: pgbench connects per transaction).
    // CONNECT_CONCURRENCY openers take the clients in order: at most that many attempts (and
    // their futures, ~3 KiB each) exist at a time, so a 10,000-client thread does not hold
    // 10,000 half-made connections at once (peak memory), and the first failure stops the
    // openers from starting more.
    let queue = RefCell::new(mine.into_iter().rev().collect::<Vec<_>>());
    let opened = RefCell::new(Vec::with_capacity(queue.borrow().len()));
    let first_err: RefCell<Option<Error>> = RefCell::new(None);
    let openers = CONNECT_CONCURRENCY.min(queue.borrow().len()).max(1);
    let (queue_r, opened_r, err_r, cx) = (&queue, &opened, &first_err, &*ctx);
    let mut workers = Vec::with_capacity(openers);
    for _ in 0..openers {
        workers.push(async move {
            loop {
                if err_r.borrow().is_some() {
                    break;
                }
                let Some((id, streams)) = queue_r.borrow_mut().pop() else {
                    break;
                };
                let mut wl = cx.workload.new_client(id);
                let mut aborted = false;
                let session = if cx.spec.connect_per_txn {
                    None
                } else {
                    match open(cx, &cx.client_conn(id), &mut wl).await {
                        Ok(Opened::Ready(s, setup)) => {
                            cx.add_setup_commits(&s, setup);
                            cx.totals.borrow_mut().connections += 1;
                            Some(s)
                        }
                        Ok(Opened::Refused(s, e)) => {
                            cx.totals.borrow_mut().connections += 1;
                            cx.abort(id, &e, None);
                            aborted = true;
                            Some(s)
                        }
                        Err(e) => {
                            err_r.borrow_mut().get_or_insert(e);
                            break;
                        }
                    }
                };
                let endpoint = session.as_ref().and_then(|s| cx.endpoint_of(s));
                // --read-from: the reader, once the writer is there (crate::route).
                let mut reader = None;
                if session.is_some() && !aborted {
                    match crate::route::open_reader(cx, id, endpoint, &mut wl).await {
                        Ok(r) => (reader, aborted) = r,
                        Err(e) => {
                            if let Some(w) = session {
                                close(cx, w).await;
                            }
                            err_r.borrow_mut().get_or_insert(e);
                            break;
                        }
                    }
                }
                let reader_endpoint = reader.as_ref().and_then(|s| cx.endpoint_of(s));
                opened_r.borrow_mut().push(Client {
                    id,
                    wl,
                    session,
                    reader,
                    rng: streams.func,
                    choose: streams.choose,
                    cnt: 0,
                    clock_hint: None,
                    aborted,
                    stats: ClientStats {
                        client_id: id,
                        endpoint,
                        reader_endpoint,
                        ..Default::default()
                    },
                });
            }
        });
    }
    // The timer serves the retry pauses of a connection storm.
    JoinSet::new(workers, Some(&ctx.timer)).await;
    let mut clients = opened.into_inner();
    // In client order, as before (the openers finish in any order).
    clients.sort_by_key(|c| c.id);
    // The measured run's I/O: the thread's io_uring ring when it can have one (see
    // `target::ring`), else the runtime's epoll. Chosen and the sessions moved before the
    // barrier, so none of it is measured.
    let ring = choose_io(&ctx, &mut clients);

    let first_err = first_err.into_inner();
    let result = match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    };
    let _ = tx.send(Msg::Connected { result });

    // Phase 2: the barrier. None (or a dropped sender) means the run is called off.
    let t0 = match start.await {
        Ok(Some(t0)) => t0,
        _ => {
            let close_all = async {
                for c in clients {
                    for s in c.session.into_iter().chain(c.reader) {
                        close(&ctx, s).await;
                    }
                }
            };
            match &ring {
                Some(r) => r.block_on(close_all, &ctx.timer),
                None => close_all.await,
            }
            let mut totals = std::mem::take(&mut *ctx.totals.borrow_mut());
            totals.history = ctx.history.take();
            let _ = tx.send(Msg::Done {
                thread,
                tail: Interval::default(),
                totals,
            });
            return;
        }
    };
    ctx.t0.set(t0);
    ctx.timer.set_clock(Clock::from_instant(t0));
    if let Some(log) = &ctx.log {
        // Wall clock at t0: now, less the time since t0.
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .saturating_sub(t0.elapsed());
        log.borrow_mut().set_epoch(wall.as_micros() as u64);
    }

    match &ring {
        Some(r) => r.block_on(run_and_close(&ctx, clients, thread, &tx), &ctx.timer),
        None => run_and_close(&ctx, clients, thread, &tx).await,
    }
}

/// Decide this thread's I/O for the measured run (see [`crate::IoMode`]) and move its sessions
/// onto the ring if it has one. Records the choice in the thread's totals.
fn choose_io<W: Workload>(
    ctx: &ThreadCtx<W>,
    clients: &mut [Client<W::Client>],
) -> Option<target::ring::Ring> {
    let why = if ctx.spec.io == crate::IoMode::Epoll {
        Some("--io epoll".to_string())
    } else if ctx.spec.io == crate::IoMode::Auto && ctx.spec.rate_tps.is_some() {
        // Measured (issue 4; `-S -c 8 -j 2 -M prepared -R 500`, CPU between the first and last
        // progress lines, 5 alternating rounds): io_uring 74 us per transaction, epoll 62. A
        // rate-limited client sleeps before every transaction and the ring's timed waits cost
        // more per wake-up than epoll's; unthrottled, the ring's batching wins (13% less CPU).
        Some("-R: epoll wakes more cheaply for rate-limited clients".to_string())
    } else if ctx.spec.connect_per_txn {
        Some("-C connects through the runtime".to_string())
    } else if ctx.spec.fault_run {
        Some("a fault run reconnects through the runtime".to_string())
    } else if ctx.conn.dialect() == target::Dialect::MySql {
        Some("the MySQL session runs on epoll".to_string())
    } else if clients
        .iter()
        .flat_map(|c| c.session.iter().chain(&c.reader))
        .any(|s| !s.can_use_ring())
    {
        Some("TLS sessions stay on epoll".to_string())
    } else {
        None
    };
    let ring = match why {
        Some(w) => Err(w),
        None => target::ring::Ring::new().map_err(|e| e.to_string()),
    };
    let mut tot = ctx.totals.borrow_mut();
    match ring {
        Ok(r) => {
            for s in clients
                .iter_mut()
                .flat_map(|c| c.session.iter_mut().chain(c.reader.iter_mut()))
            {
                // On failure the session is marked broken: its client aborts on first use.
                let _ = s.use_ring();
            }
            ctx.timer.use_ring();
            tot.ring_threads += 1;
            Some(r)
        }
        Err(w) => {
            tot.epoll_why = Some(w);
            None
        }
    }
}

/// Phase 3 (the measured run) and closing, on whichever I/O [`choose_io`] picked.
async fn run_and_close<W: Workload>(
    ctx: &ThreadCtx<W>,
    clients: Vec<Client<W::Client>>,
    thread: usize,
    tx: &Sender<Msg>,
) {
    // Phase 3: run. The clients and the ticker are the members of one join set.
    ctx.live.set(clients.len());
    let cx: &ThreadCtx<W> = ctx;
    let ticks = Cell::new(0u64);
    let period_us = ctx.spec.progress.map(|p| (p.as_micros() as u64).max(1));
    // A member's output is its client's session, still open: see "Closing" below.
    let mut members: Vec<Pin<Box<dyn Future<Output = Option<Session>> + '_>>> =
        Vec::with_capacity(clients.len() + 1);
    for c in clients {
        members.push(Box::pin(async move {
            let session = run_client(cx, c).await;
            let left = cx.live.get() - 1;
            cx.live.set(left);
            if left == 0 {
                cx.all_done.notify_one();
            }
            session
        }));
    }
    if let Some(p) = period_us {
        let ticks = &ticks;
        members.push(Box::pin(async move {
            let mut done = cx.live.get() == 0;
            while !done {
                let boundary = (ticks.get() + 1) * p;
                // Under -T no tick at or after the deadline: the last interval runs to the real
                // end.
                if !cx.stop.before_end(boundary) {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = cx.all_done.notified() => done = true,
                    _ = cx.timer.sleep_until(boundary) => {
                        let interval = cx.rec.borrow_mut().take(boundary);
                        ticks.set(ticks.get() + 1);
                        let _ = tx.send(Msg::Tick { thread, k: ticks.get(), interval });
                    }
                }
            }
            None
        }));
    }
    let mut sessions: Vec<Session> = JoinSet::new(members, Some(&ctx.timer))
        .await
        .into_iter()
        .flatten()
        .collect();
    sessions.append(&mut ctx.readers.borrow_mut());
    let mut ticks = ticks.get();
    let end = ctx.now_us();
    // Boundaries that passed while the last clients were finishing.
    if let Some(p) = period_us {
        while (ticks + 1) * p <= end && ctx.stop.before_end((ticks + 1) * p) {
            let interval = ctx.rec.borrow_mut().take((ticks + 1) * p);
            ticks += 1;
            let _ = tx.send(Msg::Tick {
                thread,
                k: ticks,
                interval,
            });
        }
    }
    if let Some(log) = &ctx.log {
        log.borrow_mut().finish(end);
    }
    let tail = ctx.rec.borrow_mut().take(end);
    // Closing. A client that is done keeps its session open until every client of every thread
    // is done (the calling thread's release): closing is not part of the measured run any more
    // than connecting is. Closing as each client finished made a disconnect storm inside it:
    // under -R with thousands of clients most clients find their first slot beyond -T's end and
    // finish at once, and thousands of backends exiting together took the machine's cores for
    // seconds (PostgreSQL forks a process per connection; its exit is not free), starving the
    // clients that did have slots: 9 of ~300 transactions ran at -c 5000 -R 100 -T 3, and at
    // -c 2000 the schedule lag averaged 0.3-0.6 s. A thread that finished early would likewise
    // disturb the others' measured transactions. The wire commits are counted now, for Done.
    for s in &sessions {
        ctx.count_commits(s);
    }
    let mut totals = std::mem::take(&mut *ctx.totals.borrow_mut());
    totals.history = ctx.history.take();
    let _ = tx.send(Msg::Done {
        thread,
        tail,
        totals,
    });
    let released = ctx.shared.release.notified();
    tokio::pin!(released);
    released.as_mut().enable();
    if !ctx.shared.released.load(Ordering::SeqCst) {
        released.await;
    }
    for s in sessions {
        s.close().await;
    }
}

/// How one transaction ended.
enum TxnEnd {
    Done,
    /// The client must stop (aborted).
    Abort,
    /// The client stops quietly: the run ended while it was reconnecting (a fault run).
    Stop,
}

/// A client's loop (pgbench's `advanceConnectionState`, as straight-line async code). Returns
/// the client's session, still open.
async fn run_client<W: Workload>(ctx: &ThreadCtx<W>, mut c: Client<W::Client>) -> Option<Session> {
    while !c.aborted {
        if ctx.stopping() || ctx.stop.count_reached(c.cnt) {
            break;
        }
        // CSTATE_CHOOSE_SCRIPT
        let txn = match c.wl.next_txn(&mut c.choose) {
            Some(t) => t,
            None => choose(&ctx.weights, ctx.total_weight, &mut c.choose),
        };
        let pause = c.wl.pause_before_us(txn, &mut c.choose);
        if pause > 0 {
            let now = ctx.now_us();
            // A transaction whose pause ends after -T's end would never start: the client is
            // done (it must not hold the run's end waiting).
            if ctx.stop.beyond_end(now + pause) || !ctx.sleep_until_us(now + pause).await {
                break;
            }
            c.clock_hint = None;
        }
        let mut now = match c.clock_hint.take() {
            Some(t) => t,
            None => ctx.now_us(),
        };
        if ctx.stop.time_is_up(now) {
            break;
        }
        // CSTATE_PREPARE_THROTTLE / CSTATE_THROTTLE
        let scheduled = match &ctx.throttle {
            None => None,
            Some(th) => {
                let mut finished = false;
                let slot = loop {
                    match th.borrow_mut().draw(now, ctx.limit_us) {
                        Slot::Run(s) => break s,
                        Slot::Skip(_) => {
                            ctx.rec.borrow_mut().skipped(txn, None);
                            c.cnt += 1;
                            ctx.log(c.id, c.cnt, txn, now, Logged::Skipped, 0);
                            if ctx.stop.time_is_up(now) || ctx.stop.count_reached(c.cnt) {
                                finished = true;
                                break 0;
                            }
                        }
                    }
                };
                if finished || ctx.stop.beyond_end(slot) {
                    break;
                }
                if !ctx.sleep_until_us(slot).await {
                    break;
                }
                now = ctx.now_us();
                if ctx.stop.time_is_up(now) {
                    break;
                }
                Some(slot)
            }
        };
        match run_txn(ctx, &mut c, txn, scheduled, now).await {
            TxnEnd::Done => c.cnt += 1,
            TxnEnd::Abort | TxnEnd::Stop => break,
        }
    }
    ctx.totals.borrow_mut().clients.push(c.stats);
    // Closed after the run (see "Closing" in thread_main).
    if let Some(r) = c.reader.take() {
        ctx.readers.borrow_mut().push(r);
    }
    c.session.take()
}

/// One transaction, on the client's reader when `--read-from` sends its type there
/// (`crate::route`): the reader takes the session slot for the transaction, so the rest of the
/// path is the same for both, and what commits on it is counted for the reader's host.
async fn run_txn<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    scheduled: Option<u64>,
    now: u64,
) -> TxnEnd {
    let on_reader = c.reader.is_some() && ctx.route.as_ref().is_some_and(|r| r.on_reader(txn));
    if !on_reader {
        return run_txn_on_session(ctx, c, txn, scheduled, now).await;
    }
    // The reader takes the session's slot and its host the client's endpoint, so the
    // per-endpoint tally (`crate::endpoint`) counts the transaction on the host that ran it.
    std::mem::swap(&mut c.session, &mut c.reader);
    std::mem::swap(&mut c.stats.endpoint, &mut c.stats.reader_endpoint);
    let committed = c.stats.committed;
    let end = run_txn_on_session(ctx, c, txn, scheduled, now).await;
    std::mem::swap(&mut c.session, &mut c.reader);
    std::mem::swap(&mut c.stats.endpoint, &mut c.stats.reader_endpoint);
    c.stats.reader_committed += c.stats.committed - committed;
    end
}

/// CSTATE_START_TX .. CSTATE_END_TX: one transaction with its retries.
async fn run_txn_on_session<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    scheduled: Option<u64>,
    mut now: u64,
) -> TxnEnd {
    // -C: connect first; as pgbench 14+, the connection time is not part of the latency (it is
    // reported apart), but on_connect (prepare in prepared mode) is, like pgbench's lazy prepare.
    let mut fresh_session = false;
    if c.session.is_none() && ctx.spec.fault_run && !ctx.spec.connect_per_txn {
        // A fault run: the session broke; reconnect through the host list (crate::fault).
        let t = Instant::now();
        let over = |next: u64| ctx.stopping() || ctx.stop.time_is_up(next);
        let conn = ctx.client_conn(c.id);
        let s = fault::reconnect(&conn, &ctx.timer, c.id, &over, &ctx.history).await;
        let mut tot = ctx.totals.borrow_mut();
        tot.reconnect_time += t.elapsed();
        let Some(s) = s else {
            return TxnEnd::Stop;
        };
        tot.reconnects += 1;
        tot.connections += 1;
        drop(tot);
        now = ctx.now_us();
        c.stats.endpoint = ctx.endpoint_of(&s);
        ctx.endpoint_reconnected(&s);
        c.session = Some(s);
        fresh_session = true;
    }
    if c.session.is_none() {
        let t = Instant::now();
        let r = connect_retrying(&ctx.client_conn(c.id), &ctx.timer).await;
        {
            let mut tot = ctx.totals.borrow_mut();
            tot.reconnects += 1;
            tot.reconnect_time += t.elapsed();
        }
        match r {
            Ok((s, retries)) => {
                ctx.totals.borrow_mut().connect_retries += retries;
                ctx.totals.borrow_mut().connections += 1;
                now = ctx.now_us();
                c.stats.endpoint = ctx.endpoint_of(&s);
                ctx.endpoint_reconnected(&s);
                c.session = Some(s);
                fresh_session = true;
            }
            Err(e) => {
                ctx.rec.borrow_mut().failed(txn, FailureKind::Other, None);
                ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
                ctx.abort(c.id, &e, None);
                return TxnEnd::Abort;
            }
        }
    }
    let begin = now;
    let sched = scheduled.unwrap_or(begin);
    if fresh_session {
        let s = c.session.as_mut().expect("just connected");
        let before = wire_commits(s);
        let r = c.wl.on_connect(s, ctx.spec.mode).await;
        ctx.forward_notices(s);
        ctx.add_setup_commits(s, wire_commits(s) - before);
        if let Err(e) = r {
            ctx.rec.borrow_mut().failed(txn, FailureKind::Other, None);
            ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
            if ctx.spec.fault_run {
                ctx.record(
                    c,
                    txn,
                    sched,
                    ctx.now_us(),
                    Attempted::Failed(fault::kind_of(&e)),
                );
                if let Some(s) = c.session.take() {
                    ctx.count_commits(&s);
                }
                return TxnEnd::Done;
            }
            ctx.abort(c.id, &e, None);
            return TxnEnd::Abort;
        }
    }

    // Remember the random state: a retry draws the same values.
    let snapshot = c.rng.clone();
    let mut tries: u32 = 1;
    let end = loop {
        let session = c.session.as_mut().expect("connected");
        let r = {
            let mut rt;
            let mut nt = NoTimer;
            let timer: &mut dyn StatementTimer = if ctx.spec.per_statement {
                rt = RecTimer {
                    rec: &ctx.rec,
                    txn,
                    start: Instant::now(),
                };
                &mut rt
            } else {
                &mut nt
            };
            let mut sleeper = ScriptSleep {
                shared: &ctx.shared,
                timer: &ctx.timer,
            };
            let mut cx = TxnContext {
                rng: &mut c.rng,
                timer,
                mode: ctx.spec.mode,
                sleep: &mut sleeper,
            };
            let parses = session.parse_commits();
            let r = c.wl.execute(txn, session, &mut cx).await;
            // A statement parsed on its own before its first execution (scripts in prepared
            // mode) commits an implicit transaction of its own: setup, as on_connect's.
            let parsed = session.parse_commits() - parses;
            ctx.add_setup_commits(session, parsed);
            r
        };
        ctx.forward_notices(session);
        match r {
            Ok(()) => {
                let end = ctx.now_us();
                let latency = end.saturating_sub(sched);
                c.stats.committed += 1;
                c.stats.busy_us += end.saturating_sub(begin);
                let lag = scheduled.map(|s| begin.saturating_sub(s));
                let late = ctx.limit_us.is_some_and(|l| latency > l);
                let mut rec = ctx.rec.borrow_mut();
                rec.committed(txn, latency, lag, late);
                rec.retries(txn, tries - 1);
                drop(rec);
                if ctx.spec.fault_run {
                    ctx.record(c, txn, sched, end, Attempted::Ok);
                }
                ctx.endpoint_committed(c.stats.endpoint, latency);
                ctx.log(
                    c.id,
                    c.cnt + 1,
                    txn,
                    end,
                    Logged::Committed {
                        latency,
                        lag: lag.unwrap_or(0),
                    },
                    tries - 1,
                );
                if !ctx.spec.connect_per_txn {
                    c.clock_hint = Some(end);
                }
                // Counted; the workload may still stop the client (pgbench's incomplete
                // transaction block).
                if let Some(e) = c.wl.stop_after() {
                    ctx.abort(c.id, &e, c.wl.failed_at());
                    c.cnt += 1;
                    break TxnEnd::Abort;
                }
                break TxnEnd::Done;
            }
            Err(e) => {
                if ctx.spec.fault_run
                    && !matches!(
                        ctx.workload.classify(&e),
                        ErrorClass::Serialization | ErrorClass::Deadlock
                    )
                {
                    break fault_failure(ctx, c, txn, sched, tries, &e).await;
                }
                let kind = match ctx.workload.classify(&e) {
                    ErrorClass::Serialization => FailureKind::Serialization,
                    ErrorClass::Deadlock => FailureKind::Deadlock,
                    ErrorClass::ConnectionLost | ErrorClass::Other => {
                        let mut rec = ctx.rec.borrow_mut();
                        rec.failed(txn, FailureKind::Other, None);
                        rec.retries(txn, tries - 1);
                        drop(rec);
                        ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
                        ctx.abort(c.id, &e, c.wl.failed_at());
                        break TxnEnd::Abort;
                    }
                };
                if ctx.spec.verbose_errors {
                    // pgbench's commandError.
                    ctx.info(format!(
                        "client {} got an error in command {} (SQL) of script {}; {e}",
                        c.id,
                        c.wl.failed_command().unwrap_or(0),
                        txn
                    ));
                }
                // CSTATE_ERROR: end the failed transaction block, if any.
                if let Err(e2) = rollback(ctx, session).await {
                    let mut rec = ctx.rec.borrow_mut();
                    rec.failed(txn, kind, None);
                    rec.retries(txn, tries - 1);
                    drop(rec);
                    ctx.endpoint_failed(c.stats.endpoint, kind);
                    ctx.abort(c.id, &e2, None);
                    break TxnEnd::Abort;
                }
                let now = ctx.now_us();
                // Unlike pgbench (which drops a transaction that fails after -T's end uncounted),
                // a failure at the end of the run is counted as a failure, so the counts add up.
                let retry = may_retry(
                    tries,
                    ctx.spec.max_tries,
                    now.saturating_sub(sched),
                    ctx.limit_us,
                ) && !ctx.stopping()
                    && !ctx.stop.time_is_up(now);
                if ctx.spec.verbose_errors {
                    ctx.info(verbose_try(
                        c.id,
                        retry,
                        tries,
                        ctx.spec.max_tries,
                        ctx.limit_us.map(|l| (now.saturating_sub(sched), l)),
                    ));
                }
                if retry {
                    tries += 1;
                    c.rng = snapshot.clone();
                    continue;
                }
                let mut rec = ctx.rec.borrow_mut();
                rec.failed(txn, kind, None);
                rec.retries(txn, tries - 1);
                drop(rec);
                ctx.endpoint_failed(c.stats.endpoint, kind);
                ctx.log(c.id, c.cnt + 1, txn, now, Logged::Failed(kind), tries - 1);
                break TxnEnd::Done;
            }
        }
    };
    if ctx.spec.connect_per_txn {
        if let Some(s) = c.session.take() {
            let t = Instant::now();
            close(ctx, s).await;
            ctx.totals.borrow_mut().reconnect_time += t.elapsed();
        }
    }
    end
}

/// A fault run's failed attempt: recorded, counted, and the client goes on (on a new session
/// when this one broke or its host no longer takes writes: `crate::fault`). Serialization
/// failures and deadlocks do not come here: they are retried (`--max-tries`) as in any run.
async fn fault_failure<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    sched: u64,
    tries: u32,
    e: &Error,
) -> TxnEnd {
    let class = ctx.workload.classify(e);
    let now = ctx.now_us();
    ctx.record(c, txn, sched, now, fault::outcome_of(e, class));
    let kind = match class {
        ErrorClass::Serialization => FailureKind::Serialization,
        ErrorClass::Deadlock => FailureKind::Deadlock,
        _ => FailureKind::Other,
    };
    {
        let mut rec = ctx.rec.borrow_mut();
        rec.failed(txn, kind, None);
        rec.retries(txn, tries - 1);
    }
    ctx.log(c.id, c.cnt + 1, txn, now, Logged::Failed(kind), tries - 1);
    let mut broken = match c.session.as_ref() {
        Some(s) => fault::breaks_session(e, class, s),
        None => true,
    };
    if !broken {
        if let Some(s) = c.session.as_mut() {
            broken = rollback(ctx, s).await.is_err();
        }
    }
    if broken {
        // Counted, then dropped rather than closed: the server may be gone, and a goodbye
        // would wait on it.
        if let Some(s) = c.session.take() {
            ctx.count_commits(&s);
        }
    }
    TxnEnd::Done
}

/// pgbench's `printVerboseErrorMessages`: whether a failed try is repeated, which try it was
/// and, under `-L`, how much of the time allowed for tries it used.
fn verbose_try(
    client: u32,
    retry: bool,
    tries: u32,
    max_tries: u32,
    used_of_limit: Option<(u64, u64)>,
) -> String {
    let mut s = format!(
        "client {client} {} (try {tries}",
        if retry {
            "repeats the transaction after the error"
        } else {
            "ends the failed transaction"
        }
    );
    if max_tries != 0 {
        s.push_str(&format!("/{max_tries}"));
    }
    if let Some((used, limit)) = used_of_limit {
        s.push_str(&format!(
            ", {:.3}% of the maximum time of tries was used",
            100.0 * used as f64 / limit.max(1) as f64
        ));
    }
    s.push(')');
    s
}

/// pgbench's CSTATE_ERROR: after an error, roll back if the session is in a (failed)
/// transaction block (ReadyForQuery status `T` or `E`); nothing to do when idle.
async fn rollback<W: Workload>(ctx: &ThreadCtx<W>, s: &mut Session) -> Result<(), Error> {
    if s.transaction_status() == b'I' {
        return Ok(());
    }
    let before = wire_commits(s);
    let r = s.simple_query("ROLLBACK").await.map(|_| ());
    ctx.add_setup_commits(s, wire_commits(s) - before);
    r
}
