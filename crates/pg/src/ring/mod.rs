//! An io_uring driver for one engine thread: its sessions' sends and receives and its waits go
//! through one ring, so the system calls of all the thread's connections are batched into one
//! `io_uring_enter` per wake-up instead of a `send` and a `recv` per statement plus an
//! `epoll_wait`.
//!
//! Why by hand (and not tokio-uring or monoio): the engine thread already runs its own join set
//! and timer (engine's `exec`); what it lacks is only a different way to block, so this module is
//! that and nothing more: a `block_on` that waits in `io_uring_enter` (a timeout operation in the
//! ring, armed at the thread timer's next deadline and moved only when that changes, wakes it, so
//! `-R` and `-P` need no timerfd either), and a socket type the session's transport can hold.
//!
//! Measured (issue 4, this project's 2-core machine, PostgreSQL 15 with the embedded settings,
//! `stampede run -S -c 8 -j 2 -n -M prepared -T 10 --no-check --no-observe --io uring|epoll`,
//! 10 rounds alternating the two, client user + system CPU per transaction from rusage, medians):
//! io_uring 5.31 us, epoll 6.09 us; io_uring lower in 8 of the 10 pairs; pgbench 15 in the same
//! setup 7.4-7.7. `bench/run --cases io` repeats it beside pgbench. tpcb-like (wake-ups dominate:
//! each reply finds the client asleep) shows no difference (72.9 vs 74.9 us, 3 of 6 pairs), and a
//! rate-limited trickle costs more on the ring (`-R 500`: 74 vs 62 us between the first and last
//! progress lines), so the engine keeps epoll under `-R` unless `--io uring` is given. A
//! stand-alone prototype measured before this was built (not kept) found no gain with sends left
//! as direct system calls, so sends go through the ring too. The timeout operation replaced a
//! timeout on every wait (which armed and cancelled a kernel timer per sleep): select-only above,
//! 8 alternating rounds, 6.00 vs 6.33 us; the `-R 500` trickle, 5 rounds: 84.3 vs 85.9 us (epoll
//! 81.5 in the same rounds): within this machine's noise, but never worse.
//!
//! How it works:
//! * Receives are **multishot** with **provided buffers** (`IORING_RECV_MULTISHOT`, a buffer ring
//!   of [`BUFS`] x [`BUF_SIZE`] per thread, kernel 6.0+): one submission per connection keeps
//!   receiving; an idle connection holds no buffer (what lets thousands of connections share a
//!   few hundred buffers); each completion's bytes are copied to the socket's queue and the
//!   buffer goes straight back to the ring. After a completion without `F_MORE` (the buffers ran
//!   out: the data stays in the socket) the reader re-arms when it next finds nothing queued.
//! * Sends are queued: `write_all` copies the bytes into the socket's send buffer and submits one
//!   `send` (`MSG_WAITALL`, so a short send is retried by the kernel) unless one is in flight; it
//!   returns at once, and the submission goes out with the thread's next `io_uring_enter`. Bytes
//!   written while a send is in flight wait in a second buffer (in order; at most one send per
//!   socket in flight). A send error is reported by the next read or write on the socket.
//! * Cross-thread wakes (Ctrl-C, the release of finished clients) write an eventfd that has a
//!   read in the ring; same-thread wakes only set a flag. Waits are not counted as I/O wait
//!   (`IORING_ENTER_NO_IOWAIT`, 6.15+) and the ring's fd is registered (no fd lookup per enter).
//! * Memory the kernel may write to is never owned by a future: the receive buffers belong to the
//!   ring, and a socket dropped with operations in flight leaves its state to the driver until
//!   their completions arrive (its multishot receive is cancelled).
//!
//! Availability: kernels before 6.0, `kernel.io_uring_disabled`, or seccomp filters (containers
//! often forbid io_uring) make [`Ring::new`] fail; the engine then keeps epoll ("auto").
//!
//! Layout: this file is the driver (its state, completions, waits and teardown); `pool` the
//! receive buffers; `socket` the `RingSocket` a session's transport holds.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use bytes::BytesMut;
use io_uring::{cqueue, opcode, squeue, types, IoUring};

mod pool;
mod socket;

use pool::Pool;
pub use socket::RingSocket;

/// Receive buffers per thread (a power of two) and their size: 2 MiB per engine thread, touched
/// only as replies arrive.
const BUFS: u16 = 256;
const BUF_SIZE: usize = 8192;
const BGID: u16 = 7;
/// Submission queue entries (completions: twice as many; the kernel keeps overflowing ones).
const ENTRIES: u32 = 1024;
/// A writer waits for its in-flight send once this much is queued behind it (COPY data, huge
/// statements), so queued bytes stay bounded.
const QUEUE_LIMIT: usize = 1 << 20;

const KIND_RECV: u64 = 0;
const KIND_SEND: u64 = 1;
const KIND_WAKE: u64 = 2;
const KIND_CANCEL: u64 = 3;
const KIND_TIMER: u64 = 4;

fn user_data(kind: u64, slot: u32, gen: u32) -> u64 {
    kind << 61 | (slot as u64) << 32 | gen as u64
}

fn split(ud: u64) -> (u64, u32, u32) {
    (ud >> 61, ((ud >> 32) & 0x1fff_ffff) as u32, ud as u32)
}

/// Why io_uring is not used here, if it is not: for `--io auto`'s report and `--io uring`'s error.
pub fn unavailable() -> Option<String> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    WHY.get_or_init(|| match Ring::new() {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    })
    .clone()
}

/// One socket's state, owned by the driver (so it outlives a dropped [`RingSocket`] while the
/// kernel still has its operations).
struct Sock {
    gen: u32,
    fd: RawFd,
    /// The owning RingSocket is alive.
    live: bool,
    inq: Vec<u8>,
    inq_off: usize,
    eof: bool,
    err: Option<i32>,
    recv_armed: bool,
    /// The bytes of the send in flight, and how far the kernel has sent them.
    out: Vec<u8>,
    out_off: usize,
    sending: bool,
    /// Written while a send was in flight.
    next: Vec<u8>,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

impl Sock {
    fn idle(&self) -> bool {
        !self.live && !self.recv_armed && !self.sending
    }
}

/// The flag a wake sets, and the eventfd a wake from another thread writes while the driver
/// sleeps.
struct Wakeup {
    flag: AtomicBool,
    sleeping: AtomicBool,
    efd: OwnedFd,
}

impl Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            let one: u64 = 1;
            // SAFETY: an 8-byte write to our eventfd.
            unsafe { libc::write(self.efd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        }
    }
}

struct Inner {
    uring: IoUring,
    socks: Vec<Sock>,
    free: Vec<u32>,
    /// Always `Some` but while the ring is dropped.
    pool: Option<Pool>,
    wake: Arc<Wakeup>,
    efd_buf: Box<[u8; 8]>,
    /// Waits are not accounted as I/O wait (Linux 6.15+).
    no_iowait: bool,
    /// The deadline (absolute CLOCK_MONOTONIC microseconds) of the ring's timeout operation,
    /// while one is armed, and its timespec (read by the kernel when the entry is submitted).
    timer_at: Option<u64>,
    timer_ts: Box<types::Timespec>,
}

thread_local! {
    /// The thread's ring, for its sockets (a session holds plain numbers, so it stays `Send`).
    static CURRENT: RefCell<Option<Rc<RefCell<Inner>>>> = const { RefCell::new(None) };
}

/// Whether this thread has a ring.
pub fn current() -> bool {
    CURRENT.with(|c| c.borrow().is_some())
}

fn with_inner<R>(f: impl FnOnce(&mut Inner) -> R) -> io::Result<R> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(i) => Ok(f(&mut i.borrow_mut())),
        None => Err(io::Error::other(
            "an io_uring session was used outside the thread of its ring",
        )),
    })
}

impl Inner {
    fn pool_mut(&mut self) -> &mut Pool {
        self.pool.as_mut().expect("pool")
    }

    fn push(&mut self, e: squeue::Entry) {
        // SAFETY: every entry's buffers outlive the operation (see the module header).
        unsafe {
            if self.uring.submission().push(&e).is_err() {
                // Full: hand what is queued to the kernel, then there is room.
                let _ = self.uring.submit();
                self.uring
                    .submission()
                    .push(&e)
                    .expect("the submission queue has room after a submit");
            }
        }
    }

    fn arm_recv(&mut self, slot: u32) {
        let s = &mut self.socks[slot as usize];
        if s.recv_armed || s.eof || s.err.is_some() || !s.live {
            return;
        }
        s.recv_armed = true;
        let e = opcode::RecvMulti::new(types::Fd(s.fd), BGID)
            .build()
            .user_data(user_data(KIND_RECV, slot, s.gen));
        self.push(e);
    }

    fn submit_send(&mut self, slot: u32) {
        let s = &mut self.socks[slot as usize];
        let rest = &s.out[s.out_off..];
        let e = opcode::Send::new(types::Fd(s.fd), rest.as_ptr(), rest.len() as u32)
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build()
            .user_data(user_data(KIND_SEND, slot, s.gen));
        s.sending = true;
        self.push(e);
    }

    fn arm_wake(&mut self) {
        let e = opcode::Read::new(
            types::Fd(self.wake.efd.as_raw_fd()),
            self.efd_buf.as_mut_ptr(),
            8,
        )
        .build()
        .user_data(user_data(KIND_WAKE, 0, 0));
        self.push(e);
    }

    /// Make the ring's timeout fire at `at`: armed once and moved when the deadline moves, so
    /// the waits themselves carry no timeout (a timed wait arms and cancels a kernel timer on
    /// every sleep, which costs a rate-limited run more than it costs epoll's timerfd).
    fn arm_timer(&mut self, at: u64) {
        if self.timer_at == Some(at) {
            return;
        }
        *self.timer_ts = types::Timespec::new()
            .sec(at / 1_000_000)
            .nsec((at % 1_000_000) as u32 * 1_000);
        let ts: *const types::Timespec = &*self.timer_ts;
        let ud = user_data(KIND_TIMER, 0, 0);
        let e = if self.timer_at.is_some() {
            // Moved in place. If it fired meanwhile the update fails (its completion is
            // ignored) and the timeout's own completion, already queued, wakes the wait.
            opcode::TimeoutUpdate::new(ud, ts)
                .flags(types::TimeoutFlags::ABS)
                .build()
                .flags(squeue::Flags::SKIP_SUCCESS)
                .user_data(user_data(KIND_CANCEL, 0, 0))
        } else {
            opcode::Timeout::new(ts)
                .flags(types::TimeoutFlags::ABS)
                .build()
                .user_data(ud)
        };
        self.timer_at = Some(at);
        self.push(e);
    }

    fn release(&mut self, slot: u32) {
        let s = &mut self.socks[slot as usize];
        if s.idle() {
            s.gen = s.gen.wrapping_add(1);
            s.inq = Vec::new();
            s.out = Vec::new();
            s.next = Vec::new();
            self.free.push(slot);
        }
    }

    /// Handle every completion waiting in the queue.
    fn dispatch(&mut self) {
        loop {
            let Some(cqe) = self.uring.completion().next() else {
                return;
            };
            let (kind, slot, gen) = split(cqe.user_data());
            let (res, flags) = (cqe.result(), cqe.flags());
            match kind {
                KIND_WAKE => self.arm_wake(),
                KIND_CANCEL => {}
                // Fired (or cancelled with the ring): the next wait arms it again if needed.
                KIND_TIMER => self.timer_at = None,
                KIND_RECV => self.on_recv(slot, gen, res, flags),
                KIND_SEND => self.on_send(slot, gen, res),
                _ => {}
            }
        }
    }

    fn on_recv(&mut self, slot: u32, gen: u32, res: i32, flags: u32) {
        let bid = cqueue::buffer_select(flags);
        if let Some(bid) = bid {
            let s = &mut self.socks[slot as usize];
            if s.gen == gen && s.live && res > 0 {
                let pool = self.pool.as_ref().expect("pool");
                s.inq.extend_from_slice(pool.buf(bid, res as usize));
            }
            self.pool_mut().put(bid);
        }
        let s = &mut self.socks[slot as usize];
        if s.gen != gen {
            return;
        }
        let more = cqueue::more(flags);
        if !more {
            s.recv_armed = false;
        }
        if res == 0 {
            s.eof = true;
        } else if res < 0 && res != -libc::ENOBUFS && res != -libc::ECANCELED {
            s.err.get_or_insert(-res);
        }
        if let Some(w) = s.reader.take() {
            w.wake();
        }
        if !more {
            // Out of buffers (ENOBUFS) the data stays in the socket: the reader, woken above,
            // re-arms when it finds nothing queued (`read_buf`).
            self.release(slot);
        }
    }

    fn on_send(&mut self, slot: u32, gen: u32, res: i32) {
        let s = &mut self.socks[slot as usize];
        if s.gen != gen {
            return;
        }
        s.sending = false;
        if res < 0 {
            s.err.get_or_insert(-res);
            s.out.clear();
            s.next.clear();
            s.out_off = 0;
        } else {
            s.out_off += res as usize;
            if s.out_off >= s.out.len() {
                s.out.clear();
                s.out_off = 0;
                std::mem::swap(&mut s.out, &mut s.next);
            }
        }
        let again = !s.out.is_empty() && s.err.is_none();
        for w in [s.writer.take(), s.reader.take()].into_iter().flatten() {
            w.wake();
        }
        if again {
            self.submit_send(slot);
        } else {
            self.release(slot);
        }
    }
}

/// The thread's timers, as the driver sees them: the next deadline (absolute `CLOCK_MONOTONIC`
/// microseconds) bounds each wait, and `expire` runs after every wait.
pub trait Deadline {
    fn next_deadline_us(&self) -> Option<u64>;
    fn expire(&self);
}

/// A thread's ring. Creating one makes it the thread's current ring (sessions moved onto it with
/// [`crate::Session::use_ring`] find it there); dropping it ends that.
pub struct Ring {
    inner: Rc<RefCell<Inner>>,
}

impl Ring {
    pub fn new() -> io::Result<Ring> {
        if std::env::var_os("STAMPEDE_NO_IO_URING").is_some() {
            // For tests of the fall-back, and for users who want it off without a flag.
            return Err(io::Error::other(
                "io_uring turned off by STAMPEDE_NO_IO_URING",
            ));
        }
        let uring = IoUring::builder()
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_cqsize(ENTRIES * 2)
            .build(ENTRIES)
            .map_err(|e| io::Error::new(e.kind(), format!("io_uring_setup: {e}")))?;
        let pool = Pool::new()?;
        // SAFETY: the ring memory is page-aligned (mmap) and lives until the ring's teardown.
        let reg = unsafe {
            uring
                .submitter()
                .register_buf_ring_with_flags(pool.ring as u64, BUFS, BGID, 0)
        };
        if let Err(e) = reg {
            drop(uring);
            pool.free();
            return Err(io::Error::new(
                e.kind(),
                format!("io_uring buffer ring (needs Linux 5.19): {e}"),
            ));
        }
        let mut probe = io_uring::Probe::new();
        uring.submitter().register_probe(&mut probe)?;
        for (code, name) in [
            (opcode::Send::CODE, "send"),
            (opcode::Recv::CODE, "recv"),
            (opcode::Read::CODE, "read"),
            (opcode::AsyncCancel::CODE, "cancel"),
            (opcode::Timeout::CODE, "timeout"),
            (opcode::TimeoutUpdate::CODE, "timeout update"),
        ] {
            if !probe.is_supported(code) {
                return Err(io::Error::other(format!("io_uring without {name}")));
            }
        }
        if !uring.params().is_feature_ext_arg() || !kernel_at_least(6, 0) {
            // Multishot receive needs 6.0; the timed wait needs EXT_ARG (5.11).
            return Err(io::Error::other(
                "io_uring here lacks multishot receive (Linux 6.0+)",
            ));
        }
        // SAFETY: a fresh descriptor we own.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let efd = unsafe { OwnedFd::from_raw_fd(efd) };
        let mut inner = Inner {
            uring,
            socks: Vec::new(),
            free: Vec::new(),
            pool: Some(pool),
            wake: Arc::new(Wakeup {
                flag: AtomicBool::new(false),
                sleeping: AtomicBool::new(false),
                efd,
            }),
            efd_buf: Box::new([0; 8]),
            no_iowait: false,
            timer_at: None,
            timer_ts: Box::new(types::Timespec::new()),
        };
        inner.no_iowait = inner.uring.params().is_feature_no_iowait();
        // The ring's fd registered: io_uring_enter skips the fd lookup.
        let _ = inner.uring.submitter().register_ring_fd();
        inner.arm_wake();
        let inner = Rc::new(RefCell::new(inner));
        CURRENT.with(|c| *c.borrow_mut() = Some(inner.clone()));
        Ok(Ring { inner })
    }

    /// Run `fut` to completion on this thread, waiting in the ring (at most until `timers`'
    /// next deadline) whenever it is pending.
    pub fn block_on<F: Future>(&self, fut: F, timers: &dyn Deadline) -> F::Output {
        let wake = self.inner.borrow().wake.clone();
        let waker = Waker::from(wake.clone());
        let mut cx = Context::from_waker(&waker);
        let mut fut = pin!(fut);
        loop {
            if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
                // What the last poll queued (a Terminate, a cancel) goes out now.
                let _ = self.inner.borrow_mut().uring.submit();
                return v;
            }
            while !wake.flag.swap(false, Ordering::SeqCst) {
                self.wait(&wake, timers);
            }
        }
    }

    fn wait(&self, wake: &Wakeup, timers: &dyn Deadline) {
        let deadline = timers.next_deadline_us();
        let due = deadline.is_some_and(|d| d <= mono_us());
        wake.sleeping.store(true, Ordering::SeqCst);
        let woken = wake.flag.load(Ordering::SeqCst);
        {
            let mut inner = self.inner.borrow_mut();
            let want: u32 = if woken || due { 0 } else { 1 };
            if let (1, Some(d)) = (want, deadline) {
                inner.arm_timer(d);
            }
            let mut flags = io_uring::EnterFlags::empty();
            if want > 0 {
                flags |= io_uring::EnterFlags::GETEVENTS;
            }
            if inner.no_iowait {
                flags |= io_uring::EnterFlags::NO_IOWAIT;
            }
            let to_submit = inner.uring.submission().len() as u32;
            // SAFETY: the arguments are what io_uring_enter(2) documents for them.
            let r = unsafe {
                (inner.uring.submitter()).enter::<libc::sigset_t>(
                    to_submit,
                    want,
                    flags.bits(),
                    None,
                )
            };
            wake.sleeping.store(false, Ordering::SeqCst);
            if let Err(e) = r {
                // EINTR: a signal; EBUSY: completions to reap first.
                let benign = [libc::EINTR, libc::EBUSY, libc::EAGAIN];
                if !e.raw_os_error().is_some_and(|c| benign.contains(&c)) {
                    panic!("io_uring_enter: {e}");
                }
            }
            inner.dispatch();
        }
        timers.expire();
    }
}

impl Drop for Ring {
    /// Ends every receive still armed (sockets dropped elsewhere, or never dropped) and waits for
    /// their completions, so the buffers can be freed: for at most a second, else they leak.
    fn drop(&mut self) {
        CURRENT.with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_some_and(|i| Rc::ptr_eq(i, &self.inner)) {
                *c = None;
            }
        });
        let mut inner = self.inner.borrow_mut();
        let armed: Vec<(u32, u32)> = (inner.socks.iter().enumerate())
            .filter(|(_, s)| s.recv_armed)
            .map(|(k, s)| (k as u32, s.gen))
            .collect();
        for (slot, gen) in armed {
            let e = opcode::AsyncCancel::new(user_data(KIND_RECV, slot, gen))
                .build()
                .user_data(user_data(KIND_CANCEL, slot, gen));
            inner.push(e);
        }
        let give_up = mono_us() + 1_000_000;
        while inner.socks.iter().any(|s| s.recv_armed) && mono_us() < give_up {
            let ts = types::Timespec::new().nsec(10_000_000);
            let args = types::SubmitArgs::new().timespec(&ts);
            let _ = inner.uring.submitter().submit_with_args(1, &args);
            inner.dispatch();
        }
        if !inner.socks.iter().any(|s| s.recv_armed) {
            if let Some(p) = inner.pool.take() {
                p.free();
            }
        }
    }
}

fn kernel_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: uname fills the struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return false;
    }
    // SAFETY: a NUL-terminated field.
    let rel = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }.to_string_lossy();
    let mut it = rel.split(|c: char| !c.is_ascii_digit());
    let maj: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let min: u32 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    (maj, min) >= (major, minor)
}

/// `CLOCK_MONOTONIC` in microseconds: the clock of [`Deadline::next_deadline_us`] and of the
/// engine's timers (the clock `Instant` and timerfd use).
#[inline]
pub fn mono_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}
