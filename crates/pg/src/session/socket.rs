//! A plain socket (unix or TCP) registered with the runtime for **read** readiness only, with
//! `send`/`recv` called directly. Public: the MySQL protocol's session (`crates/mysql`) uses it
//! too, since its round trips have the same shape and the same measurement applies.
//!
//! Why not tokio's `UnixStream`/`TcpStream`: they register every socket for reads and writes
//! (`EPOLLIN | EPOLLOUT | EPOLLET`). On a unix stream socket the kernel signals write space each
//! time the peer consumes data (`unix_write_space`, called when a sent buffer is freed), so every
//! request the server reads wakes the client's `epoll_wait` once for nothing (no task waits to
//! write), just before the reply wakes it again. Measured (issue 4, `strace -f -c`, 8 clients,
//! `-S -M prepared -R 500`, unix socket): 2.0 `epoll_wait` per transaction, one of them this
//! write-space wake; each is a sleep/wake pair of the engine thread. A benchmark session's writes
//! are small and never find the socket buffer full, so the session asks only for read readiness
//! and sends without asking.
//!
//! When a send does hit `EAGAIN` (COPY data, a long pipeline, a slow server), the socket is
//! re-registered once for reads and writes and stays so for the rest of the session (a session
//! that filled its send buffer once is likely to again: a loader), and the send waits for write
//! readiness as tokio's streams do.
//!
//! Readiness is cleared after a short read, as tokio's `PollEvented` does (edge-triggered epoll:
//! a read that did not fill the buffer drained the socket), so the next read waits in
//! `epoll_wait` instead of first calling `recv` for an `EAGAIN`. The clear is tick-checked by
//! tokio, so data arriving between the `recv` and the clear is not lost.
//!
//! ## Blocking mode (the engine's `--io threads`)
//! [`PlainSocket::use_blocking`] deregisters the socket from the runtime and makes it blocking:
//! `recv` and `send` are then plain blocking system calls, the futures resolve on their first
//! poll, and the kernel wakes exactly the thread whose reply came (one thread per client). Both
//! protocols get it from here (the MySQL session holds a `PlainSocket` too).
//!
//! A blocked read must never outlive the run (a client waiting on a row lock at `-T`'s end or at
//! Ctrl-C). The socket gets `SO_RCVTIMEO`/`SO_SNDTIMEO` of [`BLOCKING_SLICE_MS`]: a call that
//! waited that long returns `EAGAIN`, the socket asks its [`Unblock`] whether the run is over
//! (Ctrl-C, or the deadline passed), and gives up with an error if so ([`PlainSocket::released`]
//! says why it failed), else yields once to its executor (so a progress tick can run) and calls
//! again. The timeout costs nothing on the hot path (no extra system call: a reply that comes
//! within the slice is returned by the same `recv`). Why not the controller shutting the sockets
//! down from its own thread: it would need a registry of every client's descriptor, and a
//! `shutdown` racing a descriptor closed and reused meanwhile hits another file.

use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::BytesMut;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

pub struct PlainSocket {
    /// Always `Some` between calls unless blocking; taken only while re-registering.
    fd: Option<AsyncFd<OwnedFd>>,
    /// Registered for write readiness too (after a send found the buffer full).
    writes: bool,
    /// Blocking mode: the descriptor (no longer registered) and when to give up waiting.
    blocking: Option<(OwnedFd, Arc<Unblock>)>,
    /// A blocking call gave up because the run was over ([`Unblock`]).
    released: bool,
}

/// How long one blocking `recv`/`send` waits before the socket looks at its [`Unblock`]: the
/// longest a client blocked in a read outlives Ctrl-C or the run's deadline (the run's
/// controller polls Ctrl-C every 100 ms too).
pub const BLOCKING_SLICE_MS: u64 = 100;

/// When blocking sockets stop waiting for the server: on [`Unblock::stop`] (Ctrl-C), or once
/// `CLOCK_MONOTONIC` passes the deadline (`-T`'s end). Shared by every client of a run.
#[derive(Debug)]
pub struct Unblock {
    stop: AtomicBool,
    /// `CLOCK_MONOTONIC` microseconds ([`crate::ring::mono_us`]); `u64::MAX`: none.
    deadline_us: AtomicU64,
}

impl Default for Unblock {
    fn default() -> Unblock {
        Unblock {
            stop: AtomicBool::new(false),
            deadline_us: AtomicU64::new(u64::MAX),
        }
    }
}

impl Unblock {
    /// Give up every blocked wait from now on.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Give up waits still blocked at `at_us` (`CLOCK_MONOTONIC` microseconds).
    pub fn set_deadline_us(&self, at_us: u64) {
        self.deadline_us.store(at_us, Ordering::SeqCst);
    }

    /// Whether a blocked wait should give up now.
    pub fn is_due(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || crate::ring::mono_us() >= self.deadline_us.load(Ordering::Relaxed)
    }
}

/// Returns `Pending` once (after waking its task), then `Ready`: lets the executor run the
/// thread's other futures (a progress tick) while a blocking wait goes on.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn released_error(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("the run ended while this client waited to {what} (a blocked wait was given up)"),
    )
}

fn send(fd: RawFd, data: &[u8]) -> io::Result<usize> {
    // SAFETY: a valid pointer and length; MSG_NOSIGNAL: a closed peer is an EPIPE error, not a
    // SIGPIPE that would kill the process.
    let n = unsafe { libc::send(fd, data.as_ptr().cast(), data.len(), libc::MSG_NOSIGNAL) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

fn register(fd: OwnedFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the OwnedFd is moved into the AsyncFd and stays open as long as it lives.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(io::Error::from)
}

impl PlainSocket {
    pub fn unix(s: tokio::net::UnixStream) -> io::Result<PlainSocket> {
        // into_std deregisters the stream and leaves it non-blocking.
        Self::new(OwnedFd::from(s.into_std()?))
    }

    pub fn tcp(s: tokio::net::TcpStream) -> io::Result<PlainSocket> {
        Self::new(OwnedFd::from(s.into_std()?))
    }

    fn new(fd: OwnedFd) -> io::Result<PlainSocket> {
        Ok(PlainSocket {
            fd: Some(register(fd, Interest::READABLE)?),
            writes: false,
            blocking: None,
            released: false,
        })
    }

    /// Blocking mode (see the module header): deregister the socket from the runtime, make it
    /// blocking with [`BLOCKING_SLICE_MS`] time-outs, and give up waits when `unblock` says so.
    /// From then on the socket needs no runtime. Call between requests.
    pub fn use_blocking(&mut self, unblock: Arc<Unblock>) -> io::Result<()> {
        let Some(afd) = self.fd.take() else {
            return Ok(());
        };
        let fd = afd.into_inner();
        let raw = fd.as_raw_fd();
        let slice = libc::timeval {
            tv_sec: (BLOCKING_SLICE_MS / 1000) as libc::time_t,
            tv_usec: ((BLOCKING_SLICE_MS % 1000) * 1000) as libc::suseconds_t,
        };
        // SAFETY: a valid descriptor; fcntl and setsockopt with their documented arguments.
        let ok = unsafe {
            let flags = libc::fcntl(raw, libc::F_GETFL);
            flags >= 0
                && libc::fcntl(raw, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
                && [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO].iter().all(|&opt| {
                    libc::setsockopt(
                        raw,
                        libc::SOL_SOCKET,
                        opt,
                        (&slice as *const libc::timeval).cast(),
                        std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                    ) == 0
                })
        };
        let err = (!ok).then(io::Error::last_os_error);
        self.blocking = Some((fd, unblock));
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether the socket is in blocking mode.
    pub fn is_blocking(&self) -> bool {
        self.blocking.is_some()
    }

    /// Whether a blocking wait was given up because the run was over (the error it returned
    /// then is not the server's doing).
    pub fn released(&self) -> bool {
        self.released
    }

    /// The socket's descriptor.
    pub fn raw_fd(&self) -> RawFd {
        match &self.blocking {
            Some((fd, _)) => fd.as_raw_fd(),
            None => self.afd().as_raw_fd(),
        }
    }

    /// Blocking mode: the run is over and a blocked wait gives up (only asked after a wait
    /// timed out, so the hot path touches nothing shared).
    fn unblock_due(&self) -> bool {
        self.blocking.as_ref().is_some_and(|(_, u)| u.is_due())
    }

    /// Blocking mode's `read_buf`.
    async fn read_blocking(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let raw = self.raw_fd();
        loop {
            let spare = buf.spare_capacity_mut();
            // SAFETY: recv writes at most `spare.len()` bytes into the spare capacity.
            let n = unsafe { libc::recv(raw, spare.as_mut_ptr().cast(), spare.len(), 0) };
            if n >= 0 {
                // SAFETY: recv initialised the first n bytes of the spare capacity.
                unsafe { buf.set_len(buf.len() + n as usize) };
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock if self.unblock_due() => {
                    self.released = true;
                    return Err(released_error("read the server's reply"));
                }
                io::ErrorKind::WouldBlock => YieldOnce(false).await,
                io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
        }
    }

    /// Blocking mode's `write_all`.
    async fn write_blocking(&mut self, mut data: &[u8]) -> io::Result<()> {
        let raw = self.raw_fd();
        while !data.is_empty() {
            match send(raw, data) {
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.unblock_due() {
                        self.released = true;
                        return Err(released_error("send to the server"));
                    }
                    YieldOnce(false).await;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    #[inline]
    fn afd(&self) -> &AsyncFd<OwnedFd> {
        self.fd.as_ref().expect("socket registered")
    }

    /// One `recv` into the spare capacity of `buf` (which must have some), waiting for read
    /// readiness when there is nothing to read. `Ok(0)`: the peer closed the connection.
    pub async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        if self.blocking.is_some() {
            return self.read_blocking(buf).await;
        }
        loop {
            let mut guard = self.afd().readable().await?;
            let spare = buf.spare_capacity_mut();
            let want = spare.len();
            // SAFETY: recv writes at most `want` bytes into the spare capacity.
            let n = unsafe {
                libc::recv(
                    guard.get_inner().as_raw_fd(),
                    spare.as_mut_ptr().cast(),
                    want,
                    0,
                )
            };
            if n >= 0 {
                let n = n as usize;
                // SAFETY: recv initialised the first n bytes of the spare capacity.
                unsafe { buf.set_len(buf.len() + n) };
                if n > 0 && n < want {
                    guard.clear_ready();
                }
                return Ok(n);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => guard.clear_ready(),
                io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
        }
    }

    /// Send all of `data`: directly, and only when the socket buffer is full, by waiting for
    /// write readiness (after registering for it once).
    pub async fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        if self.blocking.is_some() {
            return self.write_blocking(data).await;
        }
        while !data.is_empty() {
            match send(self.afd().as_raw_fd(), data) {
                Ok(n) => data = &data[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.register_writes()?;
                    let mut guard = self.afd().writable().await?;
                    match guard.try_io(|fd| send(fd.as_raw_fd(), data)) {
                        Ok(Ok(n)) => data = &data[n..],
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        Ok(Err(e)) => return Err(e),
                        // Readiness cleared by try_io: wait again.
                        Err(_would_block) => {}
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn register_writes(&mut self) -> io::Result<()> {
        if !self.writes {
            let fd = self.fd.take().expect("socket registered").into_inner();
            // On registration epoll reports the socket's current state, so a reply that arrived
            // meanwhile is not missed.
            // SAFETY: the OwnedFd is moved into the AsyncFd and stays open as long as it lives.
            match unsafe {
                AsyncFd::register_with_interest(fd, Interest::READABLE | Interest::WRITABLE)
            } {
                Ok(afd) => {
                    self.fd = Some(afd);
                    self.writes = true;
                }
                Err(e) => {
                    let (fd, err) = e.into_parts();
                    // Back as it was (reads only), so the session stays well-formed; the caller
                    // sees the error and marks the session broken.
                    self.fd = Some(register(fd, Interest::READABLE)?);
                    return Err(err);
                }
            }
        }
        Ok(())
    }

    /// The descriptor, deregistered from the runtime (to move it onto an io_uring ring).
    pub fn into_fd(mut self) -> OwnedFd {
        match self.blocking.take() {
            Some((fd, _)) => fd,
            None => self.fd.take().expect("socket registered").into_inner(),
        }
    }

    /// Half-close (no more writes), as tokio's `shutdown` does for a plain stream.
    pub fn shutdown(&mut self) {
        // SAFETY: a valid descriptor; errors (already closed by the peer) do not matter here.
        unsafe { libc::shutdown(self.raw_fd(), libc::SHUT_WR) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected unix socket pair: ours as a `PlainSocket` (registered with `rt`), the peer's.
    fn pair(rt: &tokio::runtime::Runtime) -> (PlainSocket, std::os::unix::net::UnixStream) {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let _in_rt = rt.enter();
        (PlainSocket::new(OwnedFd::from(a)).unwrap(), b)
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap()
    }

    #[test]
    fn a_blocking_socket_reads_and_writes_without_the_runtime_and_gives_up_when_told() {
        use std::io::{Read, Write};
        let rt = runtime();
        let (mut s, mut peer) = pair(&rt);
        let unblock = Arc::new(Unblock::default());
        s.use_blocking(unblock.clone()).unwrap();
        assert!(s.is_blocking());
        drop(rt);
        // No runtime any more: the futures resolve on their first poll (a plain executor).
        let poll_once = |f: &mut dyn FnMut(&mut Context<'_>) -> bool| {
            let mut cx = Context::from_waker(std::task::Waker::noop());
            f(&mut cx)
        };
        peer.write_all(b"reply").unwrap();
        let mut buf = BytesMut::with_capacity(64);
        let got = poll_once(&mut |cx| {
            let fut = s.read_buf(&mut buf);
            let mut fut = std::pin::pin!(fut);
            matches!(fut.as_mut().poll(cx), Poll::Ready(Ok(5)))
        });
        assert!(got && &buf[..] == b"reply");
        let sent = poll_once(&mut |cx| {
            let fut = s.write_all(b"request");
            let mut fut = std::pin::pin!(fut);
            matches!(fut.as_mut().poll(cx), Poll::Ready(Ok(())))
        });
        assert!(sent);
        let mut req = [0u8; 7];
        peer.read_exact(&mut req).unwrap();
        assert_eq!(&req, b"request");

        // Nothing to read: one slice, then a yield (still waiting, not given up).
        let pending = poll_once(&mut |cx| {
            let fut = s.read_buf(&mut buf);
            let mut fut = std::pin::pin!(fut);
            fut.as_mut().poll(cx).is_pending()
        });
        assert!(pending && !s.released());
        // The run is over: the next slice gives the wait up, and says so.
        unblock.stop();
        let err = poll_once(&mut |cx| {
            let fut = s.read_buf(&mut buf);
            let mut fut = std::pin::pin!(fut);
            match fut.as_mut().poll(cx) {
                Poll::Ready(Err(e)) => e.kind() == io::ErrorKind::TimedOut,
                _ => false,
            }
        });
        assert!(err && s.released());
        // The peer never sent more: what was read is all there is.
        assert_eq!(&buf[..], b"reply");
    }

    #[test]
    fn the_deadline_releases_a_blocked_read_as_stop_does() {
        let rt = runtime();
        let (mut s, _peer) = pair(&rt);
        let unblock = Arc::new(Unblock::default());
        assert!(!unblock.is_due());
        unblock.set_deadline_us(crate::ring::mono_us());
        assert!(unblock.is_due());
        s.use_blocking(unblock).unwrap();
        drop(rt);
        let mut buf = BytesMut::with_capacity(64);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        {
            let fut = s.read_buf(&mut buf);
            let mut fut = std::pin::pin!(fut);
            assert!(matches!(fut.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
        }
        assert!(s.released());
    }
}
