//! [`RingSocket`]: what a session's transport holds for a socket on the thread's ring; its
//! reads and writes go through the ring's queues (see the parent module's header).

use super::*;

/// A socket whose I/O goes through the thread's [`Ring`].
pub struct RingSocket {
    slot: u32,
    fd: Option<OwnedFd>,
}

impl RingSocket {
    /// Move `fd` (a connected, non-blocking stream socket) onto the thread's ring.
    pub fn new(fd: OwnedFd) -> io::Result<RingSocket> {
        let raw = fd.as_raw_fd();
        let slot = with_inner(|i| {
            let sock = |gen| Sock {
                gen,
                fd: raw,
                live: true,
                inq: Vec::new(),
                inq_off: 0,
                eof: false,
                err: None,
                recv_armed: false,
                out: Vec::new(),
                out_off: 0,
                sending: false,
                next: Vec::new(),
                reader: None,
                writer: None,
            };
            match i.free.pop() {
                Some(slot) => {
                    let gen = i.socks[slot as usize].gen;
                    i.socks[slot as usize] = sock(gen);
                    slot
                }
                None => {
                    i.socks.push(sock(0));
                    (i.socks.len() - 1) as u32
                }
            }
        })?;
        Ok(RingSocket { slot, fd: Some(fd) })
    }

    /// The socket's descriptor (none once shut down).
    pub fn raw_fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(|f| f.as_raw_fd())
    }

    /// Bytes received, copied into the spare capacity of `buf` (which must have some), waiting
    /// when none are queued. `Ok(0)`: the peer closed the connection.
    pub async fn read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        let slot = self.slot as usize;
        std::future::poll_fn(|cx| {
            with_inner(|i| {
                let s = &mut i.socks[slot];
                if s.inq_off < s.inq.len() {
                    let want = buf.capacity() - buf.len();
                    let n = want.min(s.inq.len() - s.inq_off);
                    buf.extend_from_slice(&s.inq[s.inq_off..s.inq_off + n]);
                    s.inq_off += n;
                    if s.inq_off == s.inq.len() {
                        s.inq.clear();
                        s.inq_off = 0;
                        if s.inq.capacity() > 1 << 16 {
                            s.inq = Vec::new();
                        }
                    }
                    return Poll::Ready(Ok(n));
                }
                if let Some(e) = s.err {
                    return Poll::Ready(Err(io::Error::from_raw_os_error(e)));
                }
                if s.eof {
                    return Poll::Ready(Ok(0));
                }
                match &s.reader {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => s.reader = Some(cx.waker().clone()),
                }
                i.arm_recv(slot as u32);
                Poll::Pending
            })?
        })
        .await
    }

    /// Queue all of `data` for sending (see the module header); waits only while more than
    /// [`QUEUE_LIMIT`] is queued behind a send in flight.
    pub async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        let slot = self.slot as usize;
        std::future::poll_fn(|cx| {
            with_inner(|i| {
                let s = &mut i.socks[slot];
                if let Some(e) = s.err {
                    return Poll::Ready(Err(io::Error::from_raw_os_error(e)));
                }
                if !s.sending {
                    s.out.extend_from_slice(data);
                    s.out_off = 0;
                    i.submit_send(slot as u32);
                    return Poll::Ready(Ok(()));
                }
                if s.next.len() < QUEUE_LIMIT {
                    s.next.extend_from_slice(data);
                    return Poll::Ready(Ok(()));
                }
                s.writer = Some(cx.waker().clone());
                Poll::Pending
            })?
        })
        .await
    }

    /// Half-close once every queued byte is sent.
    pub async fn shutdown(&mut self) {
        let slot = self.slot as usize;
        std::future::poll_fn(|cx| {
            with_inner(|i| {
                let s = &mut i.socks[slot];
                if s.sending && s.err.is_none() {
                    s.writer = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Poll::Ready(())
            })
            .unwrap_or(Poll::Ready(()))
        })
        .await;
        if let Some(fd) = &self.fd {
            // SAFETY: a valid descriptor; errors (already closed by the peer) do not matter.
            unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_WR) };
        }
    }
}

impl Drop for RingSocket {
    fn drop(&mut self) {
        let slot = self.slot;
        let _ = with_inner(|i| {
            let s = &mut i.socks[slot as usize];
            s.live = false;
            s.reader = None;
            s.writer = None;
            if s.recv_armed {
                // The kernel holds the socket until its multishot receive ends: end it, or the
                // server would never see the connection close.
                let ud = user_data(KIND_RECV, slot, s.gen);
                let e = opcode::AsyncCancel::new(ud).build().user_data(user_data(
                    KIND_CANCEL,
                    slot,
                    s.gen,
                ));
                i.push(e);
            }
            i.release(slot);
        });
        // Closing the descriptor number is safe with operations in flight: they hold the file.
        drop(self.fd.take());
    }
}
