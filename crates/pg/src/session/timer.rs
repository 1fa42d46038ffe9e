//! What a connection attempt waits on for its `connect_timeout`.
//!
//! tokio's timer needs the runtime's time driver, which costs an engine thread ~550
//! instructions on every park, armed or not (`engine::exec` has the measurement): the engine's
//! runtimes have none and wait on their own timerfd. So the clock a connection attempt is timed
//! by is a parameter ([`Session::connect_timed`](super::Session::connect_timed), and
//! `mysql::Session::connect_timed`): [`TokioTimer`] on the setup runtimes (built with
//! `enable_all`), the engine's own timer on its threads. Shared with `mysql`.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// A clock that can wait: a connection attempt's `connect_timeout` runs on it.
pub trait ConnectTimer {
    type Sleep<'a>: Future<Output = ()>
    where
        Self: 'a;
    /// A future that completes `d` from now.
    fn sleep(&self, d: Duration) -> Self::Sleep<'_>;
}

/// tokio's timer: the runtime must have its time driver (`enable_time`, `enable_all`).
pub struct TokioTimer;

impl ConnectTimer for TokioTimer {
    type Sleep<'a> = tokio::time::Sleep;
    fn sleep(&self, d: Duration) -> tokio::time::Sleep {
        tokio::time::sleep(d)
    }
}

/// `fut`'s output, or `None` once `limit` has passed on `timer` first.
pub async fn within<T: ConnectTimer, F: Future>(
    timer: &T,
    limit: Duration,
    fut: F,
) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut sleep = pin!(timer.sleep(limit));
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        sleep.as_mut().poll(cx).map(|()| None)
    })
    .await
}
