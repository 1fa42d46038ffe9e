//! The socket under a session, for both protocols (`mysql`'s session uses this one): TCP or a
//! unix socket without TLS, TLS over TCP, a plain socket on the engine thread's io_uring ring,
//! or TCP before TLS is or is not started (MySQL's greeting). An enum, not a trait object, so
//! reads and writes on the hot path are direct calls; and the one `fill` both sessions read
//! with.

use std::io;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::socket::{PlainSocket, Unblock};
use crate::ring::RingSocket;

pub enum Transport {
    /// Unix socket or TCP without TLS: registered for read readiness only (see `socket`).
    Plain(PlainSocket),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    /// A plain socket moved onto the engine thread's io_uring ring (see `crate::ring`: the ring
    /// moves bytes and knows no protocol, so both sessions share it).
    Ring(RingSocket),
    /// TCP during MySQL's greeting, before TLS is or is not started.
    Greeting(TcpStream),
    /// Only while TLS is being set up or a plain socket is being moved onto a ring.
    Moving,
}

fn moving() -> io::Error {
    io::Error::other("the session's transport is being set up (TLS, or a move onto a ring)")
}

impl Transport {
    #[inline]
    pub async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read_buf(buf).await,
            Transport::Tls(s) => s.read_buf(buf).await,
            Transport::Ring(s) => s.read_buf(buf).await,
            Transport::Greeting(s) => s.read_buf(buf).await,
            Transport::Moving => Err(moving()),
        }
    }

    /// Read more bytes into `inb`: one `read` call, as large as the buffer allows (at least half
    /// of `read_size`, which doubles up to `keep` while reads fill the buffer: see "Buffer
    /// sizes" in the session's module header). Ok(0): the server closed the connection.
    #[inline]
    pub async fn fill(
        &mut self,
        inb: &mut BytesMut,
        read_size: &mut usize,
        keep: usize,
    ) -> io::Result<usize> {
        if inb.capacity() - inb.len() < *read_size / 2 {
            // Reclaims consumed space in place when the buffer is drained (no allocation).
            inb.reserve(*read_size);
        }
        let free = inb.capacity() - inb.len();
        let n = self.read_buf(inb).await?;
        if n == free && *read_size < keep {
            // More was probably waiting: read more at a time from now on.
            *read_size *= 2;
        }
        Ok(n)
    }

    #[inline]
    pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.write_all(data).await,
            // rustls buffers records: flush pushes them to the socket.
            Transport::Tls(s) => {
                s.write_all(data).await?;
                s.flush().await
            }
            Transport::Ring(s) => s.write_all(data).await,
            Transport::Greeting(s) => s.write_all(data).await,
            Transport::Moving => Err(moving()),
        }
    }

    pub async fn shutdown(&mut self) {
        match self {
            Transport::Plain(s) => s.shutdown(),
            Transport::Tls(s) => {
                let _ = s.shutdown().await;
            }
            Transport::Ring(s) => s.shutdown().await,
            Transport::Greeting(s) => {
                let _ = s.shutdown().await;
            }
            Transport::Moving => {}
        }
    }

    /// Whether [`Transport::use_ring`] can move it onto a ring (a plain socket; TLS stays on the
    /// runtime's epoll).
    pub fn can_use_ring(&self) -> bool {
        matches!(self, Transport::Plain(_) | Transport::Ring(_))
    }

    /// Whether it can go into blocking mode (a plain socket; TLS cannot).
    pub fn can_block(&self) -> bool {
        matches!(self, Transport::Plain(_))
    }

    /// Put a plain socket in blocking mode (see `socket`'s "Blocking mode"); others stay as
    /// they are.
    pub fn use_blocking(&mut self, unblock: std::sync::Arc<Unblock>) -> io::Result<()> {
        match self {
            Transport::Plain(p) => p.use_blocking(unblock),
            _ => Ok(()),
        }
    }

    /// Whether a blocking wait of this transport was given up because the run was over.
    pub fn released(&self) -> bool {
        matches!(self, Transport::Plain(p) if p.released())
    }

    /// The socket's descriptor (none only while moving).
    pub fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        match self {
            Transport::Plain(s) => Some(s.raw_fd()),
            Transport::Tls(s) => Some(s.get_ref().0.as_raw_fd()),
            Transport::Ring(s) => s.raw_fd(),
            Transport::Greeting(s) => Some(s.as_raw_fd()),
            Transport::Moving => None,
        }
    }

    /// Move a plain socket onto the thread's ring (which must exist); others stay as they are.
    pub fn use_ring(&mut self) -> io::Result<()> {
        if !matches!(self, Transport::Plain(_)) {
            return Ok(());
        }
        if !crate::ring::current() {
            return Err(io::Error::other("no io_uring ring on this thread"));
        }
        if let Transport::Plain(p) = std::mem::replace(self, Transport::Moving) {
            *self = Transport::Ring(RingSocket::new(p.into_fd())?);
        }
        Ok(())
    }
}
