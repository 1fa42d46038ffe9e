//! Sessions moved onto an io_uring ring (`pg::ring`) against a real PostgreSQL: every kind of
//! round trip, statements and replies far larger than the socket buffers and than the ring's
//! receive buffers (so receives run out of buffers and re-arm), many sessions receiving at once,
//! a dropped session's disconnect reaching the server, a killed backend surfacing as an error
//! instead of a hang, and the ring's timeout following the thread timer's deadline.
//!
//! Each test runs on a thread of its own and fails when it has not finished within its limit: a
//! lost completion or wake-up shows up as a failure, not as a hung test binary.

mod trips;

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::Poll;
use std::time::{Duration, Instant};

use pg::ring::{mono_us, Deadline, Ring};
use pg::{ConnConfig, Error, QueryMode, Session, Value};
use testkit::{WhileUsed, THROWAWAY};

static PG: WhileUsed = WhileUsed::new(&[THROWAWAY, &[("max_connections", "60")]]);

struct NoTimers;

impl Deadline for NoTimers {
    fn next_deadline_us(&self) -> Option<u64> {
        None
    }
    fn expire(&self) {}
}

/// Connect `n` sessions on a tokio runtime (as the engine does), move them onto a ring on the
/// same thread, and run `body` on the ring; fail if that takes longer than `limit`.
fn on_ring<F, Fut>(cfg: &ConnConfig, n: usize, limit: Duration, body: F)
where
    F: FnOnce(Vec<Session>) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let cfg = cfg.clone();
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut sessions = Vec::new();
            for _ in 0..n {
                sessions.push(Session::connect(&cfg).await.expect("connect"));
            }
            let ring = Ring::new()
                .unwrap_or_else(|e| panic!("io_uring must be available on the test machine: {e}"));
            for s in &mut sessions {
                assert!(s.can_use_ring());
                s.use_ring().expect("move onto the ring");
            }
            ring.block_on(body(sessions), &NoTimers);
        });
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => t.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The thread panicked: show its panic.
            if let Err(p) = t.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the ring test did not finish in {limit:?}: a lost completion or wake-up")
        }
    }
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Poll every future of `futs` until all are done (the ring drives one task).
async fn join_all<T>(futs: Vec<Boxed<'_, T>>) -> Vec<T> {
    let mut futs: Vec<_> = futs.into_iter().map(Some).collect();
    let mut out: Vec<Option<T>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in futs.iter_mut().zip(out.iter_mut()) {
            if let Some(fut) = f {
                match fut.as_mut().poll(cx) {
                    Poll::Ready(v) => {
                        *o = Some(v);
                        *f = None;
                    }
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|o| o.unwrap()).collect()
}

#[test]
fn every_kind_of_round_trip_and_megabytes_each_way_over_the_ring() {
    let pg = PG.get();
    let cfg = testkit::block_on(pg.fresh_database("ring_trips"));
    on_ring(&cfg, 1, Duration::from_secs(120), |mut v| async move {
        let s = &mut v[0];
        s.simple_query("CREATE TABLE c (a int, b text)")
            .await
            .unwrap();
        for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
            let div = s.register("SELECT 10 / $1", mode);
            match s.execute(div, &[Value::Int(0)]).await {
                Err(Error::Db(e)) => assert_eq!(e.code, "22012", "{mode:?}"),
                other => panic!("{mode:?}: {other:?}"),
            }
            assert!(s.is_usable());
            assert_eq!(s.execute(div, &[Value::Int(5)]).await.unwrap().rows, 1);
            assert_eq!(s.first_row().unwrap(), vec![Some("2")], "{mode:?}");
        }
        // Larger than the socket buffers and than all the ring's receive buffers together
        // (256 x 8 KiB).
        trips::large_statements_and_replies(s).await;
        // COPY: many writes queue behind the send in flight (and wait past the queue limit).
        trips::copy_rows(s, "c", 200_000).await;
        for s in v {
            s.close().await;
        }
    });
}

#[test]
fn twenty_sessions_receiving_megabytes_at_once_share_the_receive_buffers() {
    let pg = PG.get();
    let cfg = testkit::block_on(pg.fresh_database("ring_many"));
    on_ring(&cfg, 20, Duration::from_secs(120), |mut v| async move {
        for round in 0..3 {
            let futs: Vec<Boxed<'_, (usize, String)>> = v
                .iter_mut()
                .enumerate()
                .map(|(k, s)| {
                    Box::pin(async move {
                        // Each reply is 2 MiB: 20 at once need ~5,000 buffers of the ring's 256.
                        let sql = format!("SELECT repeat(chr(97 + {}), {})", k % 26, 2 << 20);
                        let rows = s.simple_query(&sql).await.expect("query");
                        (k, rows[0][0].clone().unwrap())
                    }) as Boxed<'_, _>
                })
                .collect();
            for (k, text) in join_all(futs).await {
                let c = b'a' + (k % 26) as u8;
                assert_eq!(text.len(), 2 << 20, "round {round}, session {k}");
                assert!(
                    text.bytes().all(|b| b == c),
                    "round {round}, session {k}: bytes of another session or out of order"
                );
            }
        }
        for s in v {
            s.close().await;
        }
    });
}

#[test]
fn a_dropped_session_disconnects_and_a_killed_backend_is_an_error_not_a_hang() {
    let pg = PG.get();
    let cfg = testkit::block_on(pg.fresh_database("ring_drop"));
    on_ring(&cfg, 3, Duration::from_secs(60), |mut v| async move {
        let mut killed = v.pop().unwrap();
        let mut dropped = v.pop().unwrap();
        dropped.simple_query("SELECT 1").await.unwrap();
        let mut obs = v.pop().unwrap();
        let (dpid, kpid) = (dropped.backend_pid(), killed.backend_pid());
        // The dropped session has a receive armed (it has done a round trip on the ring): dropping it must
        // cancel that, or the kernel keeps the socket open and the server never sees it go.
        drop(dropped);
        let alive = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {dpid}");
        let t0 = Instant::now();
        loop {
            let n = obs.simple_query(&alive).await.unwrap()[0][0].clone();
            if n.as_deref() == Some("0") {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "the dropped session's backend still runs after 30 s"
            );
        }
        obs.simple_query(&format!("SELECT pg_terminate_backend({kpid})"))
            .await
            .unwrap();
        let r = killed.simple_query("SELECT 1").await;
        assert!(r.is_err(), "a query on a terminated backend fails: {r:?}");
        assert!(!killed.is_usable());
        obs.close().await;
    });
}

/// A timer as the engine's looks to the ring: one deadline; `expire` fires it once it is due.
#[derive(Default)]
struct OneTimer {
    at: std::cell::Cell<Option<u64>>,
    fired: std::cell::Cell<u32>,
    waker: std::cell::RefCell<Option<std::task::Waker>>,
}

impl Deadline for OneTimer {
    fn next_deadline_us(&self) -> Option<u64> {
        self.at.get()
    }
    fn expire(&self) {
        if let Some(at) = self.at.get() {
            if mono_us() >= at {
                self.at.set(None);
                self.fired.set(self.fired.get() + 1);
                if let Some(w) = self.waker.borrow_mut().take() {
                    w.wake();
                }
            }
        }
    }
}

/// The ring's wait ends at the timer's deadline (armed once, not on every wait), follows a
/// deadline moved earlier while it sleeps (the old one is 20 s away: the test's limit ends
/// first), is armed afresh after it fired, and is woken from another thread in between.
#[test]
fn the_ring_wakes_at_the_timer_deadline_and_follows_it_when_it_moves() {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let ring = Ring::new().expect("io_uring must be available on the test machine");
        let timer = OneTimer::default();
        timer.at.set(Some(mono_us() + 20_000_000));
        let mut phase = 0;
        let t0 = Instant::now();
        ring.block_on(
            std::future::poll_fn(|cx| {
                *timer.waker.borrow_mut() = Some(cx.waker().clone());
                match phase {
                    0 => {
                        // Sleeping on the far deadline until another thread wakes us.
                        let w = cx.waker().clone();
                        std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_millis(50));
                            w.wake();
                        });
                        phase = 1;
                    }
                    1 if timer.fired.get() == 0
                        && timer.at.get().unwrap() > mono_us() + 1_000_000 =>
                    {
                        // Woken from the other thread: move the deadline 30 ms ahead.
                        timer.at.set(Some(mono_us() + 30_000));
                        phase = 2;
                    }
                    2 if timer.fired.get() == 1 => {
                        // Fired; a new deadline, armed from scratch.
                        timer.at.set(Some(mono_us() + 20_000));
                        phase = 3;
                    }
                    3 if timer.fired.get() == 2 => return Poll::Ready(()),
                    _ => {}
                }
                Poll::Pending
            }),
            &timer,
        );
        let _ = tx.send((t0.elapsed(), timer.fired.get(), phase));
    });
    let (elapsed, fired, phase) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the ring missed a moved deadline or a wake (the first deadline was 20 s away)");
    t.join().unwrap();
    assert_eq!((fired, phase), (2, 3));
    assert!(
        elapsed >= Duration::from_millis(100),
        "{elapsed:?}: a deadline fired early"
    );
}
