//! An order between clients: [`Order`] holds a transaction until a number of others, on any
//! client and any engine thread, have been answered. It is what a replay's `--order strict`
//! needs (`families::replay`): a captured statement may depend on what another session did
//! before it, and sent concurrently it could overtake it.
//!
//! The others are numbered by rank, `0..n`, in the order the workload chooses (a replay: by
//! the captured end of each statement). A transaction that must wait for the first `k` ranks
//! asks for [`Order::wait`]`(k)`; each answered transaction calls [`Order::answered`] with its
//! rank, in any order. The gate opens as the answered prefix grows: `k` is reached once every
//! rank below it was answered, not merely `k` of them.
//!
//! Why a hand-made gate and no channel or semaphore: the condition is a prefix of a set that
//! fills out of order, read by thousands of clients on several threads, each waiting for its
//! own prefix length. A reader whose prefix is already reached pays one atomic load; a waiter
//! parks its waker (the engine's, which wakes its thread's executor from any thread) until an
//! answer moves the prefix past its mark.
//!
//! Must not touch: clocks (the engine measures how long a transaction was held), output.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

/// The answered prefix of `n` ranks, and who waits for it.
pub struct Order {
    /// Every rank below this one was answered (read without the lock).
    prefix: AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// One bit per rank: answered.
    answered: Vec<u64>,
    prefix: u64,
    ranks: u64,
    /// Waiters by the prefix they need, the smallest first.
    waiting: BinaryHeap<Reverse<Waiter>>,
}

struct Waiter {
    needs: u64,
    waker: Waker,
}

impl PartialEq for Waiter {
    fn eq(&self, o: &Self) -> bool {
        self.needs == o.needs
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Waiter {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.needs.cmp(&o.needs)
    }
}

impl Order {
    /// A gate over `ranks` transactions, none answered.
    pub fn new(ranks: u64) -> Order {
        Order {
            prefix: AtomicU64::new(0),
            state: Mutex::new(State {
                answered: vec![0; ranks.div_ceil(64) as usize],
                prefix: 0,
                ranks,
                waiting: BinaryHeap::new(),
            }),
        }
    }

    /// Whether every rank below `k` was answered.
    #[inline]
    pub fn reached(&self, k: u64) -> bool {
        self.prefix.load(Ordering::Acquire) >= k
    }

    /// How many ranks form the answered prefix.
    pub fn prefix(&self) -> u64 {
        self.prefix.load(Ordering::Acquire)
    }

    /// Rank `r` was answered (successfully or not: either way the statement is over). Twice
    /// is harmless; a rank out of range is ignored.
    pub fn answered(&self, r: u64) {
        let woken = {
            let Ok(mut s) = self.state.lock() else {
                return;
            };
            if r >= s.ranks {
                return;
            }
            s.answered[(r / 64) as usize] |= 1 << (r % 64);
            if r != s.prefix {
                return;
            }
            while s.prefix < s.ranks
                && s.answered[(s.prefix / 64) as usize] & (1 << (s.prefix % 64)) != 0
            {
                s.prefix += 1;
            }
            self.prefix.store(s.prefix, Ordering::Release);
            let mut woken = Vec::new();
            while s.waiting.peek().is_some_and(|w| w.0.needs <= s.prefix) {
                woken.extend(s.waiting.pop().map(|w| w.0.waker));
            }
            woken
        };
        // Woken outside the lock: a waker may run its executor's code at once.
        for w in woken {
            w.wake();
        }
    }

    /// Ready once every rank below `k` was answered.
    pub fn wait(&self, k: u64) -> Wait<'_> {
        Wait {
            order: self,
            needs: k,
        }
    }
}

/// [`Order::wait`]'s future.
pub struct Wait<'a> {
    order: &'a Order,
    needs: u64,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.order.reached(self.needs) {
            return Poll::Ready(());
        }
        let Ok(mut s) = self.order.state.lock() else {
            // A poisoned gate can never open: let the transaction go rather than hang.
            return Poll::Ready(());
        };
        // Checked again under the lock: an answer between the load and the lock woke nobody.
        if s.prefix >= self.needs {
            return Poll::Ready(());
        }
        s.waiting.push(Reverse(Waiter {
            needs: self.needs,
            waker: cx.waker().clone(),
        }));
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(w: &mut Wait<'_>, c: &Arc<Count>) -> bool {
        let waker = Waker::from(c.clone());
        Pin::new(w)
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
    }

    #[test]
    fn the_gate_opens_on_the_answered_prefix_not_on_a_count() {
        let o = Order::new(130);
        let c = Arc::new(Count(AtomicUsize::new(0)));
        let mut w = o.wait(2);
        assert!(!poll(&mut w, &c));
        // Two answers, but rank 0 is not one of them: still held.
        o.answered(1);
        o.answered(2);
        assert!(!o.reached(2));
        assert_eq!(c.0.load(Ordering::SeqCst), 0);
        o.answered(0);
        assert_eq!(o.prefix(), 3);
        assert_eq!(c.0.load(Ordering::SeqCst), 1, "the waiter was woken once");
        assert!(poll(&mut w, &c));
    }

    #[test]
    fn only_the_waiters_whose_prefix_is_reached_are_woken() {
        let o = Order::new(200);
        let (a, b) = (
            Arc::new(Count(AtomicUsize::new(0))),
            Arc::new(Count(AtomicUsize::new(0))),
        );
        let (mut wa, mut wb) = (o.wait(1), o.wait(100));
        assert!(!poll(&mut wa, &a) && !poll(&mut wb, &b));
        o.answered(0);
        assert_eq!(
            (a.0.load(Ordering::SeqCst), b.0.load(Ordering::SeqCst)),
            (1, 0)
        );
        // Ranks across the 64-bit words, out of order.
        for r in (1..100).rev() {
            o.answered(r);
        }
        assert_eq!(b.0.load(Ordering::SeqCst), 1);
        assert!(poll(&mut wb, &b));
        assert!(o.wait(0).order.reached(0), "nothing to wait for");
        o.answered(1000);
        o.answered(5);
        assert_eq!(
            o.prefix(),
            100,
            "out-of-range and repeated answers change nothing"
        );
    }
}
