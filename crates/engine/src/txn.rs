//! One transaction of a client, with its retries (pgbench's `CSTATE_START_TX` .. `CSTATE_END_TX`):
//! connecting first when the client has no session (`-C`, or a fault run's reconnection), the
//! statements through the workload, the outcome recorded (latency from the schedule, lag,
//! failures by kind, retries with the same random values), and the statement timers and script
//! sleeps the workload is handed. Split from `worker` (the thread's life and the client loop),
//! which calls [`run_txn`] once per transaction.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::time::Instant;

use measure::attempts::Outcome as Attempted;
use measure::{FailureKind, Recorder};
use sut::{Error, ErrorClass, Session};
use workload::{ClientWorkload, Sleeper, StatementTimer, TxnContext, Workload};

use crate::connect::connect_retrying;
use crate::exec::Timer;
use crate::fault;
use crate::schedule::may_retry;
use crate::txnlog::Logged;
use crate::worker::{close, wire_commits, Client, ThreadCtx};
use crate::Shared;

/// How one transaction ended.
pub(crate) enum TxnEnd {
    Done,
    /// The client must stop (aborted).
    Abort,
    /// The client stops quietly: the run ended while it was reconnecting (a fault run).
    Stop,
}

/// `-r` on: time each statement into the thread's recorder.
struct RecTimer<'a> {
    rec: &'a RefCell<Recorder>,
    txn: usize,
    start: Instant,
}

impl StatementTimer for RecTimer<'_> {
    #[inline]
    fn start(&mut self) {
        self.start = Instant::now();
    }
    #[inline]
    fn end(&mut self, index: usize, ok: bool) {
        let us = self.start.elapsed().as_micros() as u64;
        self.rec.borrow_mut().statement(self.txn, index, us, ok);
    }
}

/// A script's `\sleep` on the thread's runtime timer: runs to its end (past `-T`'s deadline too,
/// as pgbench's `CSTATE_SLEEP`), cut short by cancellation.
struct ScriptSleep<'a> {
    shared: &'a Shared,
    timer: &'a Timer,
}

impl Sleeper for ScriptSleep<'_> {
    fn sleep(&mut self, micros: u64) -> Pin<Box<dyn Future<Output = bool> + '_>> {
        Box::pin(async move {
            let notified = self.shared.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.shared.stopping.load(Ordering::Relaxed) {
                return false;
            }
            tokio::select! {
                _ = self.timer.sleep_until(self.timer.now_us().saturating_add(micros)) => true,
                _ = notified => false,
            }
        })
    }
}

/// `-r` off: no clock is read.
struct NoTimer;

impl StatementTimer for NoTimer {
    #[inline]
    fn start(&mut self) {}
    #[inline]
    fn end(&mut self, _: usize, _: bool) {}
}

/// One transaction, on the client's reader when `--read-from` sends its type there
/// (`crate::route`): the reader takes the session slot for the transaction, so the rest of the
/// path is the same for both, and what commits on it is counted for the reader's host.
pub(crate) async fn run_txn<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    scheduled: Option<u64>,
    now: u64,
) -> TxnEnd {
    let on_reader = c.reader.is_some() && ctx.route.as_ref().is_some_and(|r| r.on_reader(txn));
    if !on_reader {
        return run_txn_on_session(ctx, c, txn, scheduled, now).await;
    }
    // The reader takes the session's slot and its host the client's endpoint, so the
    // per-endpoint tally (`crate::endpoint`) counts the transaction on the host that ran it.
    std::mem::swap(&mut c.session, &mut c.reader);
    std::mem::swap(&mut c.stats.endpoint, &mut c.stats.reader_endpoint);
    let committed = c.stats.committed;
    let end = run_txn_on_session(ctx, c, txn, scheduled, now).await;
    std::mem::swap(&mut c.session, &mut c.reader);
    std::mem::swap(&mut c.stats.endpoint, &mut c.stats.reader_endpoint);
    c.stats.reader_committed += c.stats.committed - committed;
    end
}

/// A new session in client `c`'s slot, from either way of reconnecting: counted as a
/// connection, its host noted as the client's and as reconnected to. Returns the time it was
/// ready, from which the transaction then runs.
fn adopt<W: Workload>(ctx: &ThreadCtx<W>, c: &mut Client<W::Client>, s: Session) -> u64 {
    ctx.totals.borrow_mut().connections += 1;
    let now = ctx.now_us();
    c.stats.endpoint = ctx.endpoint_of(&s);
    ctx.endpoint_client(&mut c.hosts, c.stats.endpoint);
    ctx.endpoint_reconnected(&s);
    c.session = Some(s);
    now
}

/// CSTATE_START_TX .. CSTATE_END_TX: one transaction with its retries.
async fn run_txn_on_session<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    scheduled: Option<u64>,
    mut now: u64,
) -> TxnEnd {
    // -C: connect first; as pgbench 14+, the connection time is not part of the latency (it is
    // reported apart), but on_connect (prepare in prepared mode) is, like pgbench's lazy prepare.
    let mut fresh_session = false;
    if c.session.is_none() && ctx.spec.fault_run && !ctx.spec.connect_per_txn {
        // A fault run: the session broke; reconnect through the host list (crate::fault).
        let t = Instant::now();
        let over = |next: u64| ctx.stopping() || ctx.stop.time_is_up(next);
        let conn = ctx.client_conn(c.id);
        let s = fault::reconnect(&conn, &ctx.timer, c.id, &over, &ctx.history).await;
        let mut tot = ctx.totals.borrow_mut();
        tot.reconnect_time += t.elapsed();
        let Some(s) = s else {
            return TxnEnd::Stop;
        };
        tot.reconnects += 1;
        drop(tot);
        now = adopt(ctx, c, s);
        fresh_session = true;
    }
    if c.session.is_none() {
        let t = Instant::now();
        let r = connect_retrying(&ctx.client_conn(c.id), &ctx.timer).await;
        {
            let mut tot = ctx.totals.borrow_mut();
            tot.reconnects += 1;
            tot.reconnect_time += t.elapsed();
        }
        match r {
            Ok((s, retries)) => {
                ctx.totals.borrow_mut().connect_retries += retries;
                now = adopt(ctx, c, s);
                fresh_session = true;
            }
            Err(e) => {
                ctx.rec.borrow_mut().failed(txn, FailureKind::Other, None);
                ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
                ctx.abort(c.id, &e, None);
                return TxnEnd::Abort;
            }
        }
    }
    let begin = now;
    // A timetable's latency runs from the actual start (the statement's own time on the
    // server); its lag is apart. `-R`'s runs from the schedule, as pgbench's.
    let sched = match scheduled {
        Some(s) if !c.timetabled => s,
        _ => begin,
    };
    if fresh_session {
        // The run's end may cut this transaction off too (`crate::cutoff`).
        ctx.in_flight.begin(c.slot, c.session.as_ref(), None);
        let s = c.session.as_mut().expect("just connected");
        let before = wire_commits(s);
        let sent = *s.tally();
        let r = c.wl.on_connect(s, ctx.spec.mode).await;
        ctx.forward_notices(s);
        ctx.add_setup_commits(s, wire_commits(s) - before);
        (ctx.totals.borrow_mut().setup_tally).merge(&s.tally().since(&sent));
        if let Err(e) = r {
            ctx.rec.borrow_mut().failed(txn, FailureKind::Other, None);
            ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
            if ctx.spec.fault_run {
                ctx.record(
                    c,
                    txn,
                    (sched, begin),
                    ctx.now_us(),
                    Attempted::Failed(fault::kind_of(&e)),
                );
                if let Some(s) = c.session.take() {
                    ctx.count_commits(&s);
                }
                return TxnEnd::Done;
            }
            ctx.abort(c.id, &e, None);
            return TxnEnd::Abort;
        }
    }

    // Remember the random state: a retry draws the same values.
    let snapshot = c.rng.clone();
    let mut tries: u32 = 1;
    let end = loop {
        let session = c.session.as_mut().expect("connected");
        let r = {
            let mut rt;
            let mut nt = NoTimer;
            let timer: &mut dyn StatementTimer = if ctx.spec.per_statement {
                rt = RecTimer {
                    rec: &ctx.rec,
                    txn,
                    start: Instant::now(),
                };
                &mut rt
            } else {
                &mut nt
            };
            let mut sleeper = ScriptSleep {
                shared: &ctx.shared,
                timer: &ctx.timer,
            };
            let mut cx = TxnContext {
                rng: &mut c.rng,
                timer,
                mode: ctx.spec.mode,
                sleep: &mut sleeper,
            };
            let parses = session.parse_commits();
            let r = c.wl.execute(txn, session, &mut cx).await;
            // A statement parsed on its own before its first execution (scripts in prepared
            // mode) commits an implicit transaction of its own: setup, as on_connect's.
            let parsed = session.parse_commits() - parses;
            ctx.add_setup_commits(session, parsed);
            r
        };
        ctx.forward_notices(session);
        match r {
            Ok(()) => {
                let end = ctx.now_us();
                let latency = end.saturating_sub(sched);
                c.stats.committed += 1;
                c.stats.busy_us += end.saturating_sub(begin);
                let lag = scheduled.map(|s| begin.saturating_sub(s));
                let late = ctx.limit_us.is_some_and(|l| latency > l);
                let mut rec = ctx.rec.borrow_mut();
                rec.committed(txn, latency, lag, late);
                rec.retries(txn, tries - 1);
                drop(rec);
                if ctx.spec.fault_run {
                    ctx.record(c, txn, (sched, begin), end, Attempted::Ok);
                }
                ctx.endpoint_committed(c.stats.endpoint, latency);
                ctx.log(
                    c.id,
                    c.cnt + 1,
                    txn,
                    end,
                    Logged::Committed {
                        latency,
                        lag: lag.unwrap_or(0),
                    },
                    tries - 1,
                );
                if !ctx.spec.connect_per_txn {
                    c.clock_hint = Some(end);
                }
                // Counted; the workload may still stop the client (pgbench's incomplete
                // transaction block).
                if let Some(e) = c.wl.stop_after() {
                    ctx.abort(c.id, &e, c.wl.failed_at());
                    c.cnt += 1;
                    break TxnEnd::Abort;
                }
                break TxnEnd::Done;
            }
            Err(_) if session.released() || ctx.in_flight.was_cut() => {
                // The run ended while the client was waiting for the server: threads mode's
                // socket gave up (`sut::Unblock`), or the event loop cut it off
                // (`crate::cutoff`). Not a failure of the transaction and not a commit:
                // abandoned, and in doubt for the commit check.
                ctx.totals.borrow_mut().abandoned += 1;
                break TxnEnd::Stop;
            }
            Err(e @ Error::Db(_)) if session.is_usable() && ctx.workload.continues_after(&e) => {
                let end = ctx.now_us();
                let kind = match ctx.workload.classify(&e) {
                    ErrorClass::Serialization => FailureKind::Serialization,
                    ErrorClass::Deadlock => FailureKind::Deadlock,
                    ErrorClass::ConnectionLost | ErrorClass::Other => FailureKind::Other,
                };
                let lag = scheduled.map(|s| begin.saturating_sub(s));
                ctx.rec.borrow_mut().failed(txn, kind, lag);
                ctx.endpoint_failed(c.stats.endpoint, kind);
                c.stats.busy_us += end.saturating_sub(begin);
                if !ctx.spec.connect_per_txn {
                    c.clock_hint = Some(end);
                }
                break TxnEnd::Done;
            }
            Err(e) => {
                if ctx.spec.fault_run
                    && !matches!(
                        ctx.workload.classify(&e),
                        ErrorClass::Serialization | ErrorClass::Deadlock
                    )
                {
                    break fault_failure(ctx, c, txn, (sched, begin), tries, &e).await;
                }
                let kind = match ctx.workload.classify(&e) {
                    ErrorClass::Serialization => FailureKind::Serialization,
                    ErrorClass::Deadlock => FailureKind::Deadlock,
                    ErrorClass::ConnectionLost | ErrorClass::Other => {
                        let mut rec = ctx.rec.borrow_mut();
                        rec.failed(txn, FailureKind::Other, None);
                        rec.retries(txn, tries - 1);
                        drop(rec);
                        ctx.endpoint_failed(c.stats.endpoint, FailureKind::Other);
                        ctx.abort(c.id, &e, c.wl.failed_at());
                        break TxnEnd::Abort;
                    }
                };
                if ctx.spec.verbose_errors {
                    // pgbench's commandError.
                    ctx.info(format!(
                        "client {} got an error in command {} (SQL) of script {}; {e}",
                        c.id,
                        c.wl.failed_command().unwrap_or(0),
                        txn
                    ));
                }
                // CSTATE_ERROR: end the failed transaction block, if any.
                if let Err(e2) = rollback(ctx, session).await {
                    let mut rec = ctx.rec.borrow_mut();
                    rec.failed(txn, kind, None);
                    rec.retries(txn, tries - 1);
                    drop(rec);
                    ctx.endpoint_failed(c.stats.endpoint, kind);
                    if session.released() || ctx.in_flight.was_cut() {
                        // The run ended during the ROLLBACK (a socket given up or cut
                        // off): failed, not aborted; the failed transaction cannot commit.
                        break TxnEnd::Stop;
                    }
                    ctx.abort(c.id, &e2, None);
                    break TxnEnd::Abort;
                }
                let now = ctx.now_us();
                // Unlike pgbench (which drops a transaction that fails after -T's end uncounted),
                // a failure at the end of the run is counted as a failure, so the counts add up.
                let retry = may_retry(
                    tries,
                    ctx.spec.max_tries,
                    now.saturating_sub(sched),
                    ctx.limit_us,
                ) && !ctx.stopping()
                    && !ctx.stop.time_is_up(now);
                if ctx.spec.verbose_errors {
                    ctx.info(verbose_try(
                        c.id,
                        retry,
                        tries,
                        ctx.spec.max_tries,
                        ctx.limit_us.map(|l| (now.saturating_sub(sched), l)),
                    ));
                }
                if retry {
                    tries += 1;
                    c.rng = snapshot.clone();
                    continue;
                }
                let mut rec = ctx.rec.borrow_mut();
                rec.failed(txn, kind, None);
                rec.retries(txn, tries - 1);
                drop(rec);
                ctx.endpoint_failed(c.stats.endpoint, kind);
                ctx.log(c.id, c.cnt + 1, txn, now, Logged::Failed(kind), tries - 1);
                break TxnEnd::Done;
            }
        }
    };
    if ctx.spec.connect_per_txn {
        if let Some(s) = c.session.take() {
            let t = Instant::now();
            close(ctx, s).await;
            ctx.totals.borrow_mut().reconnect_time += t.elapsed();
        }
    }
    end
}

/// A fault run's failed attempt: recorded, counted, and the client goes on (on a new session
/// when this one broke or its host no longer takes writes: `crate::fault`). Serialization
/// failures and deadlocks do not come here: they are retried (`--max-tries`) as in any run.
async fn fault_failure<W: Workload>(
    ctx: &ThreadCtx<W>,
    c: &mut Client<W::Client>,
    txn: usize,
    times: (u64, u64),
    tries: u32,
    e: &Error,
) -> TxnEnd {
    let class = ctx.workload.classify(e);
    let now = ctx.now_us();
    ctx.record(c, txn, times, now, fault::outcome_of(e, class));
    let kind = match class {
        ErrorClass::Serialization => FailureKind::Serialization,
        ErrorClass::Deadlock => FailureKind::Deadlock,
        _ => FailureKind::Other,
    };
    {
        let mut rec = ctx.rec.borrow_mut();
        rec.failed(txn, kind, None);
        rec.retries(txn, tries - 1);
    }
    ctx.log(c.id, c.cnt + 1, txn, now, Logged::Failed(kind), tries - 1);
    let mut broken = match c.session.as_ref() {
        Some(s) => fault::breaks_session(e, class, s),
        None => true,
    };
    if !broken {
        if let Some(s) = c.session.as_mut() {
            broken = rollback(ctx, s).await.is_err();
        }
    }
    if broken {
        // Counted, then dropped rather than closed: the server may be gone, and a goodbye
        // would wait on it.
        if let Some(s) = c.session.take() {
            ctx.count_commits(&s);
        }
    }
    TxnEnd::Done
}

/// pgbench's `printVerboseErrorMessages`: whether a failed try is repeated, which try it was
/// and, under `-L`, how much of the time allowed for tries it used.
fn verbose_try(
    client: u32,
    retry: bool,
    tries: u32,
    max_tries: u32,
    used_of_limit: Option<(u64, u64)>,
) -> String {
    let mut s = format!(
        "client {client} {} (try {tries}",
        if retry {
            "repeats the transaction after the error"
        } else {
            "ends the failed transaction"
        }
    );
    if max_tries != 0 {
        s.push_str(&format!("/{max_tries}"));
    }
    if let Some((used, limit)) = used_of_limit {
        s.push_str(&format!(
            ", {:.3}% of the maximum time of tries was used",
            100.0 * used as f64 / limit.max(1) as f64
        ));
    }
    s.push(')');
    s
}

/// pgbench's CSTATE_ERROR: after an error, roll back if the session is in a (failed)
/// transaction block (ReadyForQuery status `T` or `E`); nothing to do when idle.
async fn rollback<W: Workload>(ctx: &ThreadCtx<W>, s: &mut Session) -> Result<(), Error> {
    if s.transaction_status() == b'I' {
        return Ok(());
    }
    let before = wire_commits(s);
    let r = s.simple_query("ROLLBACK").await.map(|_| ());
    ctx.add_setup_commits(s, wire_commits(s) - before);
    r
}
