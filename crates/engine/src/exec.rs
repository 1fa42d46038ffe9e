//! The engine thread's hot loop: a hand-written join set of client futures and a per-thread
//! microsecond timer, on a current-thread tokio runtime built with `enable_io()` only.
//!
//! Why not `LocalSet` + `spawn_local` and tokio's time driver (what this replaced): measured with
//! callgrind, 1 client, select-only prepared, instructions of a `-t 12000` run minus a
//! `-t 2000` run divided by 10,000 (`valgrind --tool=callgrind stampede run -S -c 1 -j 1 -t N
//! -n -M prepared ...`), a transaction cost ~1,300 instructions outside the client's own code:
//! `LocalSet::tick`, task harness and `schedule` ~900 (a woken task goes through the LocalSet's
//! shared queue, a thread-local lookup, the task harness, and the `block_on` future around the
//! LocalSet is polled too), and the time driver ~550 on every park even with no timer armed
//! (`time::Driver::park_internal` reads the clock and processes the wheel). Here:
//!
//! * [`JoinSet`] owns the client futures (boxed once) and gives each a waker that pushes its index
//!   on a ready list and wakes the `block_on` future; a poll runs exactly the woken clients. No
//!   task allocation, no reference counting per wake beyond the waker's own.
//! * [`Timer`] is one `timerfd` per thread, registered with the runtime's epoll like a socket,
//!   armed (`timerfd_settime`, absolute `CLOCK_MONOTONIC`, microseconds) only when something
//!   sleeps: `-R` slots, `-P` ticks, a script's `\sleep`, a connection's `connect_timeout`
//!   (`pg::session::timer`). A run without them never touches it, and the runtime has no time
//!   driver at all. It also fixes `-R`'s precision: tokio's wheel rounds sleeps up to
//!   the next millisecond (~0.5 ms of lag on average at high rates); a timerfd wakes on the
//!   microsecond.
//! * [`Clock`]: `clock_gettime(CLOCK_MONOTONIC)` through the vDSO, microseconds since the start as
//!   one integer (no `Instant` subtraction and `Duration` division per reading).
//!
//! Effect (same callgrind measurement, with the session changes of the same issue already in):
//! 4,890 -> 4,157 instructions per transaction (pgbench 15: 6,148); `strace -f -c`, 1 client,
//! 10,000 transactions: 1 sendto + 1 recvfrom + ~1.1 epoll_wait per transaction, unchanged (the
//! floor for epoll with one client). `-R 2000 -c 4 -j 2 -T 4`: average schedule lag 1.128 ms ->
//! 0.065 ms (pgbench: 0.156 ms).
//!
//! Trade-off: the join set is simpler than a task system (no spawning while it runs, no
//! cross-thread scheduling); both are what an engine thread needs and nothing more.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use tokio::io::unix::AsyncFd;

pub(crate) use sut::ring::mono_us;

/// Microseconds since the measured start, one vDSO call per reading.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    /// `mono_us()` at the start.
    t0: u64,
}

impl Clock {
    /// The clock whose zero is `t0` (an `Instant` taken on any thread).
    pub fn from_instant(t0: Instant) -> Clock {
        let now = mono_us();
        let since = t0.elapsed().as_micros() as u64;
        Clock {
            t0: now.saturating_sub(since),
        }
    }

    #[inline]
    pub fn now_us(&self) -> u64 {
        mono_us().saturating_sub(self.t0)
    }
}

// ----- the join set -----

struct Ready {
    /// Indices woken since the last poll, each once.
    list: Vec<u32>,
    queued: Vec<bool>,
    /// The waker of the future that owns the set (the runtime's `block_on`).
    parent: Option<Waker>,
    /// The set is inside its poll loop, which runs the list until it finds it empty: a wake now
    /// needs no wake of the parent. Waking it anyway made the runtime poll the set once more
    /// after every timer expiry and every wake-up within the loop, each time after a
    /// non-blocking `epoll_wait` (one extra system call per transaction under -R).
    polling: bool,
}

struct ReadyQueue(Mutex<Ready>);

struct Member {
    idx: u32,
    q: Arc<ReadyQueue>,
}

impl Wake for Member {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    #[inline]
    fn wake_by_ref(self: &Arc<Self>) {
        let mut r = self.q.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = self.idx as usize;
        if !r.queued[i] {
            r.queued[i] = true;
            r.list.push(self.idx);
            if !r.polling {
                if let Some(p) = &r.parent {
                    p.wake_by_ref();
                }
            }
        }
    }
}

/// Runs a fixed set of futures to completion on the current task; resolves to their outputs in
/// order. Drives the thread's [`Timer`] too, when one is given and armed.
pub(crate) struct JoinSet<'t, F: Future> {
    futs: Vec<Option<Pin<Box<F>>>>,
    out: Vec<Option<F::Output>>,
    wakers: Vec<Waker>,
    q: Arc<ReadyQueue>,
    /// The ready list being run (swapped with the queue's, so neither allocates).
    batch: Vec<u32>,
    left: usize,
    timer: Option<&'t Timer>,
}

impl<'t, F: Future> JoinSet<'t, F> {
    pub fn new(futs: Vec<F>, timer: Option<&'t Timer>) -> JoinSet<'t, F> {
        let n = futs.len();
        // Slot `n` is the timer's: its waker is the one registered for the timerfd, so the
        // timerfd is looked at only when epoll reports it (not on every poll of the set).
        let mut queued = vec![true; n + 1];
        queued[n] = false;
        let q = Arc::new(ReadyQueue(Mutex::new(Ready {
            // Everything runs once first.
            list: (0..n as u32).collect(),
            queued,
            parent: None,
            polling: false,
        })));
        let wakers = (0..=n as u32)
            .map(|idx| Waker::from(Arc::new(Member { idx, q: q.clone() })))
            .collect();
        JoinSet {
            futs: futs.into_iter().map(|f| Some(Box::pin(f))).collect(),
            out: (0..n).map(|_| None).collect(),
            wakers,
            q,
            batch: Vec::with_capacity(n),
            left: n,
            timer,
        }
    }
}

impl<F: Future> Future for JoinSet<'_, F> {
    type Output = Vec<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Nothing here is structurally pinned: the futures are boxed.
        let this = unsafe { self.get_unchecked_mut() };
        let timer_slot = this.futs.len();
        loop {
            {
                let mut r = this.q.0.lock().unwrap_or_else(|e| e.into_inner());
                match &r.parent {
                    Some(p) if p.will_wake(cx.waker()) => {}
                    _ => r.parent = Some(cx.waker().clone()),
                }
                // Cleared under the same lock that finds the list empty: a wake from another
                // thread either lands in the list before that (and is run) or sees `polling`
                // false (and wakes the parent).
                if r.list.is_empty() {
                    r.polling = false;
                    break;
                }
                r.polling = true;
                std::mem::swap(&mut r.list, &mut this.batch);
                for &i in &this.batch {
                    r.queued[i as usize] = false;
                }
            }
            let mut timer_fired = false;
            for k in 0..this.batch.len() {
                let i = this.batch[k] as usize;
                if i == timer_slot {
                    timer_fired = true;
                } else if let Some(f) = &mut this.futs[i] {
                    let mut ccx = Context::from_waker(&this.wakers[i]);
                    if let Poll::Ready(v) = f.as_mut().poll(&mut ccx) {
                        this.futs[i] = None;
                        this.out[i] = Some(v);
                        this.left -= 1;
                    }
                }
            }
            this.batch.clear();
            if let Some(t) = this.timer {
                if t.park.get() {
                    // Threads mode: the executor does not wait between batches while a client
                    // runs; a due deadline is noticed here.
                    sut::ring::Deadline::expire(t);
                }
                // Fired, or newly armed by a sleeper (its waker must be registered).
                if timer_fired || t.rearmed.get() {
                    t.poll_fire(&mut Context::from_waker(&this.wakers[timer_slot]));
                }
            }
        }
        if this.left == 0 {
            return Poll::Ready(
                this.out
                    .iter_mut()
                    .map(|o| o.take().expect("every future finished"))
                    .collect(),
            );
        }
        Poll::Pending
    }
}

// ----- threads mode's executor -----

/// Wakes the thread parked in [`park_block_on`].
struct Unparker {
    thread: std::thread::Thread,
    woken: std::sync::atomic::AtomicBool,
}

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.thread.unpark();
        }
    }
}

/// Threads mode's executor: polls `fut`; while it is pending, parks the thread until a waker
/// unparks it (a `tokio::sync` primitive, the calling thread's release) or the timer's next
/// deadline, then expires the timer. No runtime and no epoll: the client's socket blocks in
/// `recv` itself, so on the hot path the future never returns `Pending` and this loop is not
/// entered at all. Why `park_timeout` rather than `clock_nanosleep` for the timer: a sleeping
/// client (`-R`, `\sleep`) must also wake on Ctrl-C, which unparks it; both are one system call
/// (a futex wait with a timeout vs a nanosleep) on the same high-resolution timer.
pub(crate) fn park_block_on<F: Future>(fut: F, timer: &Timer) -> F::Output {
    let un = Arc::new(Unparker {
        thread: std::thread::current(),
        woken: std::sync::atomic::AtomicBool::new(false),
    });
    let waker = Waker::from(un.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        while !un.woken.swap(false, std::sync::atomic::Ordering::SeqCst) {
            let at = sut::ring::Deadline::next_deadline_us(timer);
            match at {
                Some(at) if at > mono_us() => {
                    let left = at.saturating_sub(mono_us());
                    std::thread::park_timeout(std::time::Duration::from_micros(left));
                    // Wakes the join set's timer slot (and so this thread) if it passed.
                    sut::ring::Deadline::expire(timer);
                }
                Some(_) => {
                    sut::ring::Deadline::expire(timer);
                    // A deadline nobody waits for any more (a sleep dropped with its join
                    // set): wait for a waker, not spin on it.
                    if !un.woken.load(std::sync::atomic::Ordering::SeqCst) {
                        std::thread::park();
                    }
                }
                None => std::thread::park(),
            }
        }
    }
}

// ----- the timer -----

/// One thread's timers: a heap of deadlines (microseconds since the start) and one timerfd armed
/// at the earliest.
pub(crate) struct Timer {
    fd: AsyncFd<OwnedFd>,
    clock: Cell<Clock>,
    heap: RefCell<BinaryHeap<Entry>>,
    seq: Cell<u64>,
    /// The deadline the timerfd is armed at, if armed.
    armed: Cell<Option<u64>>,
    /// Armed since the join set last registered its waker for the timerfd.
    rearmed: Cell<bool>,
    /// Driven by an io_uring ring (`sut::ring`): no timerfd; the ring's wait ends at the
    /// deadline and calls [`Timer::expire`](sut::ring::Deadline::expire).
    ring: Cell<bool>,
    /// Ring mode: the join set's timer-slot waker.
    slot: RefCell<Option<Waker>>,
    /// Driven by [`park_block_on`] (threads mode): as ring mode, and the join set also expires
    /// the timer between batches, since a client on a blocking socket polls for a whole run of
    /// transactions without the executor waiting in between.
    park: Cell<bool>,
}

impl Timer {
    /// Needs a runtime with I/O enabled (the timerfd is registered with its epoll).
    pub fn new(clock: Clock) -> io::Result<Timer> {
        // SAFETY: plain syscall; the fd is owned below.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the OwnedFd is moved into the AsyncFd and stays open as long as it lives.
        let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }?;
        Ok(Timer {
            fd,
            clock: Cell::new(clock),
            heap: RefCell::new(BinaryHeap::new()),
            seq: Cell::new(0),
            armed: Cell::new(None),
            rearmed: Cell::new(false),
            ring: Cell::new(false),
            slot: RefCell::new(None),
            park: Cell::new(false),
        })
    }

    /// From now on the thread's io_uring ring drives this timer (see [`Timer::ring`]).
    pub fn use_ring(&self) {
        self.ring.set(true);
        if self.armed.get().is_some() {
            self.set_timerfd(None);
            // The join set registers its waker for the ring's expiry on its next poll.
            self.rearmed.set(true);
        }
    }

    /// From now on [`park_block_on`] drives this timer (threads mode).
    pub fn use_park(&self) {
        self.use_ring();
        self.park.set(true);
    }

    /// Threads mode only: a deadline is due (a client yields then, so the tick or sleeper
    /// runs). Always false in the other modes, where clients return to the executor on every
    /// read.
    #[inline]
    pub fn due(&self, now_us: u64) -> bool {
        self.park.get() && self.armed.get().is_some_and(|a| a <= now_us)
    }

    /// Threads mode: a client that found a deadline due ([`Timer::due`]) waits behind the
    /// sleepers of that deadline (a `-P` tick), which the timer wakes first (its heap orders
    /// equal deadlines by arrival). Waking itself instead would queue the client before them:
    /// it would run on, the tick not yet re-armed, and every later transaction would land in
    /// the tick's interval.
    pub fn after_due(&self) -> AfterDue<'_> {
        AfterDue {
            timer: self,
            registered: false,
        }
    }

    pub fn set_clock(&self, clock: Clock) {
        self.clock.set(clock);
    }

    #[inline]
    pub fn now_us(&self) -> u64 {
        self.clock.get().now_us()
    }

    /// A future that resolves at `at_us` (microseconds since the start). It must be polled
    /// inside the [`JoinSet`] that drives this timer.
    pub fn sleep_until(&self, at_us: u64) -> Sleep<'_> {
        Sleep {
            timer: self,
            at: at_us,
            waiting: None,
        }
    }

    /// Add a sleeper; its id ([`Timer::cancel`]).
    fn add(&self, at: u64, waker: Waker) -> u64 {
        let id = self.seq.get();
        self.seq.set(id + 1);
        self.heap.borrow_mut().push(Entry {
            key: Reverse((at, id)),
            waker,
        });
        if self.armed.get().is_none_or(|a| at < a) {
            self.arm(at);
        }
        id
    }

    /// Remove sleeper `id` before its deadline (a connection's timeout when it connected in
    /// time): left in the heap, it would wake its client for nothing later, and under -C the
    /// heap would grow by one per connection for the timeout's length. Linear in the sleepers,
    /// paid once per cancelled sleep only. A timerfd armed for it fires with nothing due and is
    /// re-armed for the next.
    fn cancel(&self, id: u64) {
        if let Ok(mut heap) = self.heap.try_borrow_mut() {
            heap.retain(|e| e.key.0 .1 != id);
        }
    }

    fn arm(&self, at: u64) {
        if !self.ring.get() {
            self.set_timerfd(Some(self.clock.get().t0 + at.max(1)));
        }
        self.armed.set(Some(at));
        self.rearmed.set(true);
    }

    /// Arm the timerfd at `abs` (`CLOCK_MONOTONIC` microseconds), or disarm it.
    fn set_timerfd(&self, abs: Option<u64>) {
        let abs = abs.unwrap_or(0);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (abs / 1_000_000) as libc::time_t,
                tv_nsec: ((abs % 1_000_000) * 1_000) as libc::c_long,
            },
        };
        // SAFETY: valid fd and pointers.
        let r = unsafe {
            libc::timerfd_settime(
                self.fd.get_ref().as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        assert!(
            r == 0,
            "timerfd_settime: {}",
            std::io::Error::last_os_error()
        );
    }

    /// Ring mode's `poll_fire`: wake the due sleepers, re-arm for the next.
    fn poll_fire_ring(&self, cx: &mut Context<'_>) {
        let mut slot = self.slot.borrow_mut();
        match &*slot {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *slot = Some(cx.waker().clone()),
        }
        drop(slot);
        let now = self.now_us();
        if self.armed.get().is_none_or(|a| a > now) {
            return;
        }
        self.armed.set(None);
        if let Some(at) = self.wake_due(now) {
            self.arm(at);
        }
        self.rearmed.set(false);
    }

    /// Wake every sleeper due at `now`; the next deadline, if any sleeper is left. Waking a
    /// client only queues it on the join set: no re-entry into the timer.
    fn wake_due(&self, now: u64) -> Option<u64> {
        let mut heap = self.heap.borrow_mut();
        while heap.peek().is_some_and(|e| e.key.0 .0 <= now) {
            if let Some(e) = heap.pop() {
                e.waker.wake();
            }
        }
        heap.peek().map(|e| e.key.0 .0)
    }

    /// If the timerfd fired: wake every sleeper that is due and re-arm for the next. Registers
    /// `cx`'s waker for the timerfd while armed.
    fn poll_fire(&self, cx: &mut Context<'_>) {
        if self.ring.get() {
            return self.poll_fire_ring(cx);
        }
        self.rearmed.set(false);
        if self.armed.get().is_none() {
            return;
        }
        let Poll::Ready(Ok(mut guard)) = self.fd.poll_read_ready(cx) else {
            return;
        };
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer; EAGAIN (a spurious readiness) is fine.
        let n = unsafe {
            libc::read(
                self.fd.get_ref().as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n < 0 {
            guard.clear_ready();
            // Not fired yet: poll again to register the waker.
            let _ = self.fd.poll_read_ready(cx);
            return;
        }
        guard.clear_ready();
        self.armed.set(None);
        if let Some(at) = self.wake_due(self.now_us()) {
            self.arm(at);
            self.rearmed.set(false);
            // Register the waker for the new arming.
            if let Poll::Ready(Ok(mut g)) = self.fd.poll_read_ready(cx) {
                // Already due: handled on the next poll.
                g.retain_ready();
                cx.waker().wake_by_ref();
            }
        }
    }
}

impl sut::ring::Deadline for Timer {
    fn next_deadline_us(&self) -> Option<u64> {
        self.armed.get().map(|at| self.clock.get().t0 + at.max(1))
    }

    fn expire(&self) {
        if self.armed.get().is_some_and(|at| at <= self.now_us()) {
            if let Some(w) = self.slot.borrow_mut().take() {
                w.wake();
            }
        }
    }
}

/// A sleeper in the timer's heap, earliest deadline first (ties in arrival order).
struct Entry {
    key: Reverse<(u64, u64)>,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.key == other.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// See [`Timer::sleep_until`].
pub(crate) struct Sleep<'a> {
    timer: &'a Timer,
    at: u64,
    /// Its heap entry while it waits: dropped before its deadline, it is removed.
    waiting: Option<u64>,
}

impl Future for Sleep<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.timer.now_us() >= self.at {
            self.waiting = None;
            return Poll::Ready(());
        }
        if self.waiting.is_none() {
            self.waiting = Some(self.timer.add(self.at, cx.waker().clone()));
        }
        Poll::Pending
    }
}

impl Drop for Sleep<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.waiting {
            self.timer.cancel(id);
        }
    }
}

/// Connection attempts on an engine thread time their `connect_timeout` here: the thread's
/// runtime has no tokio timer (module notes).
impl sut::ConnectTimer for Timer {
    type Sleep<'a> = Sleep<'a>;
    fn sleep(&self, d: std::time::Duration) -> Sleep<'_> {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.sleep_until(self.now_us().saturating_add(us))
    }
}

/// See [`Timer::after_due`].
pub(crate) struct AfterDue<'a> {
    timer: &'a Timer,
    registered: bool,
}

impl Future for AfterDue<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.registered {
            return Poll::Ready(());
        }
        self.registered = true;
        let at = self
            .timer
            .armed
            .get()
            .unwrap_or_else(|| self.timer.now_us());
        self.timer.add(at, cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap()
    }

    #[test]
    fn join_set_returns_outputs_in_order_and_wakes_only_what_is_ready() {
        let rt = runtime();
        let out = rt.block_on(async {
            let n = tokio::sync::Notify::new();
            let n = &n;
            let futs: Vec<Pin<Box<dyn Future<Output = u32> + '_>>> = vec![
                Box::pin(async move {
                    n.notified().await;
                    1
                }),
                Box::pin(async move {
                    tokio::task::yield_now().await;
                    n.notify_one();
                    2
                }),
                Box::pin(async { 3 }),
            ];
            JoinSet::new(futs, None).await
        });
        assert_eq!(out, vec![1, 2, 3]);
    }

    #[test]
    fn timer_wakes_sleepers_in_deadline_order_on_the_microsecond() {
        let rt = runtime();
        let timer = {
            let _g = rt.enter();
            Timer::new(Clock::from_instant(Instant::now())).unwrap()
        };
        let order = RefCell::new(Vec::new());
        let late = RefCell::new(Vec::new());
        rt.block_on(async {
            let t = &timer;
            let (order, late) = (&order, &late);
            let base = t.now_us();
            let futs: Vec<_> = [3_000u64, 1_000, 2_000, 2_500]
                .into_iter()
                .map(|d| async move {
                    t.sleep_until(base + d).await;
                    let now = t.now_us();
                    assert!(now >= base + d);
                    late.borrow_mut().push(now - (base + d));
                    order.borrow_mut().push(d);
                })
                .collect();
            JoinSet::new(futs, Some(t)).await;
        });
        assert_eq!(*order.borrow(), vec![1_000, 2_000, 2_500, 3_000]);
        // tokio's wheel rounds to the millisecond; a timerfd is far closer (generous bound for a
        // loaded machine).
        let worst = *late.borrow().iter().max().unwrap();
        assert!(worst < 20_000, "woke {worst} us late");
        // A deadline already past resolves without arming anything.
        rt.block_on(async {
            let t = &timer;
            JoinSet::new(vec![t.sleep_until(0)], Some(t)).await;
        });
    }

    /// A connection's timeout when it connected in time: the sleep is dropped before its
    /// deadline and leaves nothing behind, or the heap would grow by one per connection (-C).
    #[test]
    fn a_connect_timeout_that_did_not_expire_leaves_no_sleeper() {
        use std::time::Duration;
        use sut::session::timer::within;
        let rt = runtime();
        let timer = {
            let _g = rt.enter();
            Timer::new(Clock::from_instant(Instant::now())).unwrap()
        };
        let out = rt.block_on(async {
            let t = &timer;
            let futs: Vec<Pin<Box<dyn Future<Output = Option<u32>> + '_>>> = vec![
                // Done at once: the timeout is never registered.
                Box::pin(within(t, Duration::from_secs(10), async { 1 })),
                // Done after a short sleep: the timeout was registered, then cancelled.
                Box::pin(within(t, Duration::from_secs(10), async move {
                    t.sleep_until(t.now_us() + 1_000).await;
                    2
                })),
                // Never done: the timeout answers.
                Box::pin(within(
                    t,
                    Duration::from_millis(2),
                    std::future::pending::<u32>(),
                )),
            ];
            JoinSet::new(futs, Some(t)).await
        });
        assert_eq!(out, vec![Some(1), Some(2), None]);
        assert!(timer.heap.borrow().is_empty(), "a sleeper was left");
    }
}
