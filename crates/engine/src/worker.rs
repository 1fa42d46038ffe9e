//! One engine thread: a current-thread tokio runtime (I/O driver only) running this thread's
//! clients in one [`JoinSet`] with the thread's [`Timer`] (see [`crate::exec`] for why and the
//! measurements), the thread's [`Recorder`] (shared by its clients through a `RefCell`, never locked),
//! its `-R` schedule, and a ticker that hands the recorder's interval to the calling thread on
//! every progress boundary.
//!
//! Connecting runs on the runtime's epoll. The measured run and closing run on the thread's
//! io_uring ring instead when it can have one ([`choose_io`], `sut::ring`): the sessions are
//! moved onto it before the barrier and the same join set is then driven by the ring's
//! `block_on`, the timer by the ring's timed waits.
//!
//! ## Threads mode (`--io threads`, or `--io auto`'s choice for few clients per core)
//! The thread has one client. Connecting runs on the runtime's epoll as in the other modes; then,
//! before the barrier, the sessions go into blocking mode (`sut::Session::use_blocking`:
//! deregistered, blocking `recv`/`send`) and the same join set, clients and timer are driven by
//! [`crate::exec::park_block_on`] instead of the runtime: a client's read returns the reply
//! directly (the kernel wakes this thread, and only it, when the reply comes), so a closed-loop
//! client polls once for its whole run. Two things follow from that: the client yields when the
//! thread's timer is due (a `-P` tick: [`run_client`]), and a read blocked past the run's end is
//! given up by its socket (`sut::Unblock`: within 100 ms of Ctrl-C, or 5 s after `-T`'s deadline); the
//! transaction is then abandoned, neither committed nor failed ([`crate::Outcome::abandoned`]).
//! On epoll and io_uring the thread cuts off such a wait itself ([`crate::cutoff`]).
//! A session that cannot block (TLS) keeps its thread on epoll, with the reason recorded.
//!
//! One transaction (connecting when needed, retries, what is recorded) is [`crate::txn`].

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use measure::attempts::History;
use measure::{Interval, Recorder};
use sut::{Error, Session, Target};
use tokio::sync::{oneshot, Notify};

use crate::connect::{open, Opened, CONNECT_CONCURRENCY};
use crate::exec::{Clock, JoinSet, Timer};
use workload::{ClientStreams, ClientWorkload, Due, Rng, Workload};

use crate::route::Route;
use crate::schedule::{choose, Slot, StopRule, Throttle};
use crate::txn::{run_txn, TxnEnd};
use crate::txnlog::{Logged, TxnLog};
use crate::{Abort, ClientStats, Event, RunSpec, Shared};

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
    Notice(sut::DbError),
    /// `--verbose-errors`: a line for information.
    Info(String),
    /// All this thread's clients are done: its last interval and its counters.
    Done {
        thread: usize,
        tail: Interval,
        /// Boxed: the largest message by far, sent once per thread.
        totals: Box<Totals>,
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
    /// Threads whose client ran on a blocking socket (threads mode).
    pub blocking_threads: u32,
    /// Transactions given up in flight at the run's end (`crate::Outcome::abandoned`).
    pub abandoned: u64,
    /// Each client's committed transactions and their time.
    pub clients: Vec<ClientStats>,
    /// A fault run's record of every attempt (`crate::fault`); empty otherwise.
    pub history: History,
    /// Per endpoint: latency, failures, sessions and commits (`crate::endpoint`).
    pub endpoints: crate::endpoint::Tally,
    /// Every client session's statements by kind, counted on the wire ([`Outcome::tally`]).
    ///
    /// [`Outcome::tally`]: crate::Outcome::tally
    pub tally: measure::ledger::Tally,
    /// The part of `tally` sent by the workload's `on_connect` (setup, not transactions).
    pub setup_tally: measure::ledger::Tally,
    /// A timetable's lag, split (`crate::ScheduleLag`).
    pub schedule: crate::ScheduleLag,
}

/// Committed server transactions seen on a session's wire (`Session::server_commits`: explicit
/// COMMITs that committed, and implicit transactions that ran work and ended without error).
#[inline]
pub(crate) fn wire_commits(s: &Session) -> u64 {
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
    /// The clients in a transaction, cut off if still waiting after the run's end (epoll and
    /// io_uring: `crate::cutoff`).
    pub in_flight: crate::cutoff::InFlight,
}

impl<W: Workload> ThreadCtx<W> {
    #[inline]
    pub(crate) fn now_us(&self) -> u64 {
        self.timer.now_us()
    }

    #[inline]
    pub(crate) fn stopping(&self) -> bool {
        self.shared.stopping.load(Ordering::Relaxed)
    }

    /// Sleep until `us` (since the start). False if the run is being cancelled.
    /// The target as client `id` connects to it: with several hosts, its hosts tried from
    /// the one `--spread` gives it (setup path: one clone per connection).
    pub(crate) fn client_conn(&self, id: u32) -> std::borrow::Cow<'_, Target> {
        if let Some(t) = self.workload.client_target(id, &self.conn) {
            return std::borrow::Cow::Owned(t);
        }
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
    pub(crate) fn count_commits(&self, s: &Session) {
        if let Some(e) = self.endpoint_of(s) {
            self.endpoint_session_counted(e, wire_commits(s));
        }
        let mut t = self.totals.borrow_mut();
        t.server_commits += wire_commits(s);
        t.tally.merge(s.tally());
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

    pub(crate) async fn sleep_until_us(&self, us: u64) -> bool {
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

    /// Wait until an order between clients lets a transaction go (`ClientWorkload::held_by`):
    /// the microseconds held (0 without a clock read when it was not), `None` if the run is
    /// being cancelled meanwhile.
    pub(crate) async fn hold(&self, order: &workload::Order, k: u64) -> Option<u64> {
        if order.reached(k) {
            return Some(0);
        }
        let from = self.now_us();
        let notified = self.shared.wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.stopping() {
            return None;
        }
        tokio::select! {
            _ = order.wait(k) => {}
            _ = notified => return None,
        }
        let held = self.now_us().saturating_sub(from);
        self.totals.borrow_mut().schedule.hold(held);
        Some(held)
    }

    /// `-l`: log one transaction (one branch when logging is off).
    #[inline]
    pub(crate) fn log(
        &self,
        client: u32,
        cnt: u64,
        txn: usize,
        now_us: u64,
        what: Logged,
        retries: u32,
    ) {
        if let Some(log) = &self.log {
            log.borrow_mut()
                .txn(client, cnt, txn, now_us, what, retries);
        }
    }

    /// Hand the notices a session received to the calling thread (one comparison when there
    /// are none, which is always on the hot path of a well-behaved workload).
    #[inline]
    pub(crate) fn forward_notices(&self, s: &mut Session) {
        if s.has_notices() {
            for n in s.take_notices() {
                if !self.said(Event::Notice(&n)) {
                    let _ = self.diag.send(Msg::Notice(n));
                }
            }
        }
    }

    /// Say `e` on this thread when the spec asks for it (`RunSpec::say`); false: the caller
    /// hands it to the coordinator.
    fn said(&self, e: Event<'_>) -> bool {
        self.spec.say.as_ref().map(|say| (say.0)(e)).is_some()
    }

    pub(crate) fn info(&self, line: String) {
        if !self.said(Event::Info(&line)) {
            let _ = self.diag.send(Msg::Info(line));
        }
    }

    pub(crate) fn abort(&self, client_id: u32, e: &Error, at: Option<String>) {
        let reason = sut::conninfo::redact(&e.to_string());
        let a = Abort {
            client_id,
            reason,
            at,
        };
        if !self.said(Event::Aborted(&a)) {
            let _ = self.diag.send(Msg::Aborted(a.clone()));
        }
        self.totals.borrow_mut().aborted.push(a);
        if self.spec.exit_on_abort {
            // Every thread's clients check `stopping` before their next transaction.
            self.shared.stopping.store(true, Ordering::SeqCst);
            self.shared.wake.notify_waiters();
        }
    }
}

/// One client: its workload state, its session and its random streams.
pub(crate) struct Client<C> {
    pub(crate) id: u32,
    pub(crate) wl: C,
    pub(crate) session: Option<Session>,
    /// `--read-from`: the reader session (`crate::route`); swapped into `session` for the
    /// transactions that run on it.
    pub(crate) reader: Option<Session>,
    pub(crate) rng: Rng,
    pub(crate) choose: Rng,
    /// Transactions done (committed, failed or skipped), for `-t`.
    pub(crate) cnt: u64,
    /// The clock read that ended the last transaction, which is also the start of the next in a
    /// closed loop (pgbench reuses it the same way): one clock read per transaction boundary.
    pub(crate) clock_hint: Option<u64>,
    /// Aborted before the run (the server refused its setup): runs no transaction.
    pub(crate) aborted: bool,
    /// Committed transactions and the time they took, for sysbench's "threads fairness".
    pub(crate) stats: ClientStats,
    /// The client's index on its thread (its place in `ThreadCtx::in_flight`).
    pub(crate) slot: usize,
    /// The hosts its (writer) sessions were on, each of which counts it once as its client
    /// (`ThreadCtx::endpoint_client`).
    pub(crate) hosts: Vec<usize>,
    /// The workload gives this client a timetable (`Due::At`): its latency runs from the
    /// transaction's actual start, and the lag from the timetable is reported apart.
    pub(crate) timetabled: bool,
}

/// Close a session, adding its wire commits to the thread's total.
pub(crate) async fn close<W: Workload>(ctx: &ThreadCtx<W>, s: Session) {
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
                let mut hosts = Vec::new();
                cx.endpoint_client(&mut hosts, endpoint);
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
                    slot: 0,
                    hosts,
                    timetabled: false,
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
    // The timer serves the retry pauses of connects refused by a full listen queue.
    JoinSet::new(workers, Some(&ctx.timer)).await;
    let mut clients = opened.into_inner();
    // In client order, as before (the openers finish in any order).
    clients.sort_by_key(|c| c.id);
    for (slot, c) in clients.iter_mut().enumerate() {
        c.slot = slot;
    }
    // The measured run's I/O: the thread's io_uring ring when it can have one (see
    // `sut::ring`), else the runtime's epoll. Chosen and the sessions moved before the
    // barrier, so none of it is measured.
    let driver = crate::io::choose_io(&ctx, &mut clients);

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
            match &driver {
                crate::io::Driver::Ring(r) => r.block_on(close_all, &ctx.timer),
                crate::io::Driver::Park => crate::exec::park_block_on(close_all, &ctx.timer),
                crate::io::Driver::Epoll => close_all.await,
            }
            let mut totals = std::mem::take(&mut *ctx.totals.borrow_mut());
            totals.history = ctx.history.take();
            let _ = tx.send(Msg::Done {
                thread,
                tail: Interval::default(),
                totals: Box::new(totals),
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

    match &driver {
        crate::io::Driver::Ring(r) => {
            r.block_on(run_and_close(&ctx, clients, thread, &tx, true), &ctx.timer)
        }
        // The thread's one client blocks in its reads: its socket's time-outs end a wait at the
        // run's end (`sut::Unblock`), not a timer this thread could not run meanwhile.
        crate::io::Driver::Park => {
            crate::exec::park_block_on(run_and_close(&ctx, clients, thread, &tx, false), &ctx.timer)
        }
        crate::io::Driver::Epoll => run_and_close(&ctx, clients, thread, &tx, true).await,
    }
}

/// Phase 3 (the measured run) and closing, on whichever I/O [`crate::io::choose_io`] picked;
/// `cut_off`: transactions still waiting after the run's end are cut off (`crate::cutoff`).
async fn run_and_close<W: Workload>(
    ctx: &ThreadCtx<W>,
    clients: Vec<Client<W::Client>>,
    thread: usize,
    tx: &Sender<Msg>,
    cut_off: bool,
) {
    // Phase 3: run. The clients and the ticker are the members of one join set.
    ctx.live.set(clients.len());
    let cx: &ThreadCtx<W> = ctx;
    let ticks = Cell::new(0u64);
    let period_us = ctx.spec.progress.map(|p| (p.as_micros() as u64).max(1));
    // A member's output is its client's session, still open: see "Closing" below.
    let mut members: Vec<Pin<Box<dyn Future<Output = Option<Session>> + '_>>> =
        Vec::with_capacity(clients.len() + 1);
    // The ticker first: the join set polls its members in order, and in threads mode a client
    // runs transaction after transaction inside one poll, yielding only when a timer deadline
    // is due (`Timer::due`); polled after its client, the ticker would never have armed one and
    // every transaction would land in the first interval.
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
    if cut_off {
        members.push(Box::pin(async move {
            cut_off_at_end(cx).await;
            None
        }));
    }
    for c in clients {
        members.push(Box::pin(async move {
            let session = run_client(cx, c).await;
            let left = cx.live.get() - 1;
            cx.live.set(left);
            if left == 0 {
                // The ticker and the cut-off both wait for it; each registered its wait before
                // it went pending (the join set polls one member at a time).
                cx.all_done.notify_waiters();
            }
            session
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
        totals: Box::new(totals),
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

/// The run's end for transactions still waiting on the server (`crate::cutoff`): the clients
/// still in a transaction [`crate::cutoff::DEADLINE_GRACE_US`] after `-T`'s deadline, or
/// [`crate::cutoff::STOP_GRACE_US`] after a stop, are cut off. Returns when every client is done.
async fn cut_off_at_end<W: Workload>(cx: &ThreadCtx<W>) {
    let deadline = cx
        .stop
        .deadline_us
        .map(|d| d + crate::cutoff::DEADLINE_GRACE_US);
    loop {
        let done = cx.all_done.notified();
        let stop = cx.shared.wake.notified();
        tokio::pin!(done, stop);
        done.as_mut().enable();
        stop.as_mut().enable();
        if cx.live.get() == 0 {
            return;
        }
        if cx.stopping() {
            break;
        }
        tokio::select! {
            biased;
            _ = done => return,
            _ = stop => {}
            _ = cx.timer.sleep_until(deadline.unwrap_or(u64::MAX)), if deadline.is_some() => {
                cx.in_flight.cut();
                return;
            }
        }
    }
    let done = cx.all_done.notified();
    tokio::pin!(done);
    done.as_mut().enable();
    if cx.live.get() == 0 {
        return;
    }
    tokio::select! {
        biased;
        _ = done => return,
        _ = cx.timer.sleep_until(cx.now_us() + crate::cutoff::STOP_GRACE_US) => {}
    }
    if cx.live.get() > 0 {
        cx.in_flight.cut();
    }
    // The clients cut off end their transactions; the join set ends with the last of them.
}

/// A client's loop (pgbench's `advanceConnectionState`, as straight-line async code). Returns
/// the client's session, still open.
async fn run_client<W: Workload>(ctx: &ThreadCtx<W>, mut c: Client<W::Client>) -> Option<Session> {
    while !c.aborted {
        if ctx.stopping() || ctx.stop.count_reached(c.cnt) {
            break;
        }
        // A timetable (a replayed session): when its next transaction is due, or its end.
        let due = match c.wl.due() {
            Due::Now => None,
            Due::At(us) => Some(us),
            Due::Done => break,
        };
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
            None if due.is_some() => {
                let at = due.unwrap_or(0);
                if ctx.stop.beyond_end(at) || !ctx.sleep_until_us(at).await {
                    break;
                }
                // `now` is when the client was free: the end of its last transaction. What it
                // was late by then is the server's (the session was still waiting for its
                // answer); the rest, from then to the actual start, is the client's own
                // (its thread busy, its timer late).
                let free = now;
                let held = match c.wl.held_by() {
                    None => 0,
                    Some((order, k)) => match ctx.hold(order, k).await {
                        Some(us) => us,
                        None => break,
                    },
                };
                now = ctx.now_us();
                c.timetabled = true;
                ctx.totals.borrow_mut().schedule.add(at, free, now, held);
                Some(at)
            }
            None => {
                // Checked in place (no future of its own): every workload but one with an
                // order between clients pays one call here.
                if let Some((order, k)) = c.wl.held_by() {
                    match ctx.hold(order, k).await {
                        None => break,
                        Some(0) => {}
                        Some(_) => now = ctx.now_us(),
                    }
                }
                None
            }
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
        ctx.in_flight
            .begin(c.slot, c.session.as_ref(), c.reader.as_ref());
        c.stats.first_us.get_or_insert(now);
        let end = run_txn(ctx, &mut c, txn, scheduled, now).await;
        ctx.in_flight.end(c.slot);
        if let Some(end) = c.clock_hint {
            c.stats.last_us = end;
        }
        match end {
            TxnEnd::Done => c.cnt += 1,
            TxnEnd::Abort | TxnEnd::Stop => break,
        }
        // Threads mode: the client's reads block instead of returning to the executor, so it
        // lets the thread's timer run (a -P tick) when that is due. Elsewhere the timer is
        // never due here without the client having waited first.
        if let Some(end) = c.clock_hint {
            if ctx.timer.due(end) {
                ctx.timer.after_due().await;
            }
        }
    }
    ctx.totals.borrow_mut().clients.push(c.stats);
    // Closed after the run (see "Closing" in thread_main).
    if let Some(r) = c.reader.take() {
        ctx.readers.borrow_mut().push(r);
    }
    c.session.take()
}
