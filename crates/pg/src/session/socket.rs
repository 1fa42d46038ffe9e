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

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use bytes::BytesMut;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

pub struct PlainSocket {
    /// Always `Some` between calls; taken only while re-registering.
    fd: Option<AsyncFd<OwnedFd>>,
    /// Registered for write readiness too (after a send found the buffer full).
    writes: bool,
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
        })
    }

    #[inline]
    fn afd(&self) -> &AsyncFd<OwnedFd> {
        self.fd.as_ref().expect("socket registered")
    }

    /// One `recv` into the spare capacity of `buf` (which must have some), waiting for read
    /// readiness when there is nothing to read. `Ok(0)`: the peer closed the connection.
    pub async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
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
        self.fd.take().expect("socket registered").into_inner()
    }

    /// Half-close (no more writes), as tokio's `shutdown` does for a plain stream.
    pub fn shutdown(&mut self) {
        // SAFETY: a valid descriptor; errors (already closed by the peer) do not matter here.
        unsafe { libc::shutdown(self.afd().as_raw_fd(), libc::SHUT_WR) };
    }
}
