//! The run's end for a transaction still waiting on the server, on epoll and io_uring (threads
//! mode has its sockets' own time-outs: `sut::Unblock`).
//!
//! An event loop's thread waits for every one of its clients before it reports, so one client
//! waiting on a row lock, or on a server that stopped answering, held the whole run open: `-T 2`
//! with a client blocked behind a lock the test held did not end, and neither did Ctrl-C.
//! Now, [`DEADLINE_GRACE_US`] after `-T`'s deadline, or [`STOP_GRACE_US`] after a stop (Ctrl-C,
//! `--exit-on-abort`), a client still inside a transaction has its socket shut down
//! (`shutdown(2)`): the kernel wakes
//! the read waiting on it, through epoll and on the ring alike, and the read returns end of
//! file. The transaction is then abandoned as in threads mode: neither committed nor failed,
//! counted in `Outcome::abandoned`, and in doubt for the commit check (its COMMIT may have run
//! on the server). At `-T`'s end a transaction in flight is waited for as pgbench waits for it: a
//! long one (an iibench insert of 1,000 rows into a cache-starved index takes 300 ms) must
//! complete and be counted, or the run's row-count checks see rows no transaction counted; only
//! a wait past the grace (a lock held elsewhere, a server that stopped answering) is cut. Ctrl-C
//! asks for the result now: threads mode's slice (`sut::session::socket::BLOCKING_SLICE_MS`).
//! Threads mode gives up on the same waits (`sut::Unblock`'s deadline is `-T`'s plus the
//! same grace).
//!
//! The registry holds a duplicate of each in-flight client's descriptor, not its number: a
//! client may close its session and open another (a reconnect, `-C`), and a number can be reused
//! by any thread's new connection meanwhile; a duplicate keeps its own socket. It is made once
//! per session, when the session a client starts a transaction on is not the one registered
//! (compared by connection id and descriptor), or opened inside the transaction (`-C`, a
//! reconnect); the hot path sets and clears a flag. A connection attempt itself is not cut off:
//! it has its own time-outs (`connect_timeout`, the engine's retry budget).

use std::cell::{Cell, RefCell};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use sut::Session;

/// How long after `-T`'s deadline a transaction may still wait for the server.
pub(crate) const DEADLINE_GRACE_US: u64 = 5_000_000;

/// How long after a stop (Ctrl-C) a transaction may still wait for the server.
pub(crate) const STOP_GRACE_US: u64 = sut::session::socket::BLOCKING_SLICE_MS * 1000;

/// One client's sockets: its session and its `--read-from` reader.
#[derive(Default)]
struct Slot {
    busy: bool,
    socks: [Option<Held>; 2],
}

struct Held {
    /// The session's connection id and descriptor number when duplicated.
    key: (i32, RawFd),
    fd: OwnedFd,
}

/// The thread's clients in flight, by their index on the thread.
pub(crate) struct InFlight {
    slots: RefCell<Vec<Slot>>,
    cut: Cell<bool>,
}

impl InFlight {
    pub(crate) fn new(clients: usize) -> InFlight {
        InFlight {
            slots: RefCell::new((0..clients).map(|_| Slot::default()).collect()),
            cut: Cell::new(false),
        }
    }

    /// Client `slot` starts a transaction on `session` (and may run it on `reader`).
    #[inline]
    pub(crate) fn begin(&self, slot: usize, session: Option<&Session>, reader: Option<&Session>) {
        let mut slots = self.slots.borrow_mut();
        let Some(s) = slots.get_mut(slot) else {
            return;
        };
        s.busy = true;
        for (held, sess) in s.socks.iter_mut().zip([session, reader]) {
            let Some(sess) = sess else {
                *held = None;
                continue;
            };
            let Some(raw) = sess.socket_fd() else {
                *held = None;
                continue;
            };
            let key = (sess.backend_pid(), raw);
            if held.as_ref().is_some_and(|h| h.key == key) {
                continue;
            }
            // SAFETY: `sess` holds `raw` open for the length of this call.
            let fd = unsafe { BorrowedFd::borrow_raw(raw) };
            *held = fd.try_clone_to_owned().ok().map(|fd| Held { key, fd });
        }
    }

    /// Client `slot`'s transaction is over.
    #[inline]
    pub(crate) fn end(&self, slot: usize) {
        if let Some(s) = self.slots.borrow_mut().get_mut(slot) {
            s.busy = false;
        }
    }

    /// Whether this thread's clients in flight have been cut off: an error from the server's
    /// connection is then the cut, not the server's doing.
    #[inline]
    pub(crate) fn was_cut(&self) -> bool {
        self.cut.get()
    }

    /// Shut down the sockets of every client still in a transaction.
    pub(crate) fn cut(&self) {
        self.cut.set(true);
        for s in self.slots.borrow().iter().filter(|s| s.busy) {
            for h in s.socks.iter().flatten() {
                // SAFETY: a plain system call on a descriptor this registry owns.
                unsafe { libc::shutdown(h.fd.as_raw_fd(), libc::SHUT_RDWR) };
            }
        }
    }
}
