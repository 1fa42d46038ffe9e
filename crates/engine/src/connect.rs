//! Opening a client's session: the connection, retried while the server's listen queue is
//! full ([`connect_retrying`]), and the workload's `on_connect` on it ([`open`]), with what
//! each costs counted in the thread's totals. Split from `worker` (the thread's life and the
//! client loop), which opens the initial sessions; `txn` reconnects through the same calls.

use sut::{Error, Session, Target};
use workload::{ClientWorkload, Workload};

use crate::exec::Timer;
use crate::worker::{wire_commits, ThreadCtx};

/// At most this many connection attempts in flight per thread while opening the initial
/// connections (a burst of connects helps nobody; the server's accept queue is finite, and
/// PostgreSQL forks a backend per connection: on 2 cores more in flight only queues).
pub(crate) const CONNECT_CONCURRENCY: usize = 32;

/// A connection attempt that failed because the server's listen queue was full (a unix socket's
/// `connect` returns EAGAIN then, where TCP would retransmit the SYN) is retried after a pause
/// that doubles from [`RETRY_FIRST_US`] up to [`RETRY_MAX_US`], for at most this long in all.
const RETRY_FOR_US: u64 = 30_000_000;
const RETRY_FIRST_US: u64 = 1_000;
const RETRY_MAX_US: u64 = 100_000;

/// True for a connection error worth retrying while many connections open at once: the socket's listen queue
/// was full (EAGAIN / WouldBlock from `connect`). Refusals (nothing listening, "too many clients"
/// from the server) are not retried: waiting would not change them.
fn listen_queue_full(e: &Error) -> bool {
    matches!(e, Error::Connect { cause, .. } if cause.kind() == std::io::ErrorKind::WouldBlock)
}

/// `Session::connect`, retrying while the listen queue is full (see [`RETRY_FOR_US`]); pauses on
/// the thread's timer (the runtime has no time driver). Returns the session and the retries.
pub(crate) async fn connect_retrying(
    conn: &Target,
    timer: &Timer,
) -> Result<(Session, u64), Error> {
    let mut pause = RETRY_FIRST_US;
    let mut retries = 0;
    let give_up = timer.now_us().saturating_add(RETRY_FOR_US);
    loop {
        // Boxed: the connect future (~2 KiB) would otherwise be part of every client's future
        // for its whole life, though it runs only at the start (or per transaction under -C).
        match Box::pin(Session::connect_timed(conn, timer)).await {
            Err(e) if listen_queue_full(&e) && timer.now_us() < give_up => {
                retries += 1;
                timer.sleep_until(timer.now_us() + pause).await;
                pause = (pause * 2).min(RETRY_MAX_US);
            }
            Err(e) => return Err(e),
            Ok(s) => return Ok((s, retries)),
        }
    }
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
    // A new session: all it sent so far is setup.
    ctx.totals.borrow_mut().setup_tally.merge(s.tally());
    match r {
        Ok(()) => Ok(Opened::Ready(s, setup)),
        Err(e @ Error::Db(_)) if s.is_usable() => {
            ctx.add_setup_commits(&s, setup);
            Ok(Opened::Refused(s, e))
        }
        Err(e) => Err(e),
    }
}
