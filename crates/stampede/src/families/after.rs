//! After the engine stops: the steps that verify a result (the commit count and the statement
//! ledger, maintenance, a fault run's audit, the family's own checks) and what keeps them from
//! losing it (issue 30, item 5; STYLE.md habit 14).
//!
//! The result is saved as soon as the engine stops (`output::save`); then each step runs with
//! its own deadline (`--check-timeout`) and gives up on Ctrl-C or SIGTERM, and a step that
//! cannot finish becomes a check of its own, "not verified" with the reason, instead of an
//! error that throws the measured numbers away. What ends a step: a server that was killed
//! (connection refused), restarted (the checking session ended; it started again after the
//! run), that ended stampede's checking session (`pg_terminate_backend`), or that stopped
//! answering (SIGSTOP: the deadline). After a step that found the server not answering, the
//! later steps that need it are not tried: each would wait its whole deadline for nothing.
//!
//! The deadline reaches every database call a step makes through [`Ctx::block_on`] (and
//! [`Ctx::with_session`]), which the steps use instead of the runtime's own `block_on`: a
//! step is ordinary code that makes several calls, and cancelling the one in flight at the
//! deadline drops its session (closing the socket), so nothing lingers.
//!
//! [`Ctx::block_on`]: super::Ctx::block_on
//! [`Ctx::with_session`]: super::Ctx::with_session

use std::cell::Cell;
use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Result;
use report::{Check, CheckStatus};

use crate::interrupt;

/// Why a step stopped before it finished (in an `anyhow` chain).
#[derive(Debug)]
pub(crate) enum Stopped {
    Timeout(u64),
    Interrupted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::Timeout(s) => {
                write!(
                    f,
                    "no answer from the server within {s} s (--check-timeout)"
                )
            }
            Stopped::Interrupted => write!(f, "interrupted (Ctrl-C or SIGTERM) during the checks"),
        }
    }
}

impl std::error::Error for Stopped {}

/// The step running now: its deadline, and the interrupts counted when it started.
#[derive(Clone, Copy)]
struct Guard {
    deadline: Instant,
    timeout_s: u64,
    interrupts: u32,
}

thread_local! {
    static GUARD: Cell<Option<Guard>> = const { Cell::new(None) };
}

/// Drive `fut` on `rt`; inside a step, give up at its deadline or on a new interrupt.
pub(crate) fn block_on<T>(
    rt: &tokio::runtime::Runtime,
    fut: impl Future<Output = Result<T>>,
) -> Result<T> {
    let Some(g) = GUARD.get() else {
        return rt.block_on(fut);
    };
    rt.block_on(async move {
        let interrupted = async {
            while interrupt::count() == g.interrupts {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::select! {
            r = fut => r,
            _ = tokio::time::sleep_until(g.deadline.into()) => {
                Err(Stopped::Timeout(g.timeout_s).into())
            }
            _ = interrupted => Err(Stopped::Interrupted.into()),
        }
    })
}

/// The post-run steps of one run.
pub(crate) struct Steps {
    timeout: Duration,
    /// Why the later steps are not tried (the server stopped answering; an interrupt).
    stop: Option<String>,
    /// Why the server could not answer, found once (a restart, a refusal), for every check
    /// that failed for it.
    cause: Option<String>,
    /// When the server started, read before the run (seconds since the epoch).
    started: Option<f64>,
}

impl Steps {
    pub(crate) fn new(timeout: Duration, started: Option<f64>) -> Steps {
        Steps {
            timeout,
            stop: None,
            cause: None,
            started,
        }
    }

    /// Run step `name`. Its error is the check `name`, not verified, with the reason.
    pub(crate) fn run<T>(
        &mut self,
        ctx: &super::Ctx,
        name: &str,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T, Check> {
        if let Some(why) = &self.stop {
            return Err(unverified(name, why));
        }
        let g = Guard {
            deadline: Instant::now() + self.timeout,
            timeout_s: self.timeout.as_secs(),
            interrupts: interrupt::count(),
        };
        GUARD.set(Some(g));
        let r = f();
        GUARD.set(None);
        r.map_err(|e| {
            let why = self.why(ctx, &e);
            unverified(name, &why)
        })
    }

    /// The reason a step failed, in words a person acts on.
    fn why(&mut self, ctx: &super::Ctx, e: &anyhow::Error) -> String {
        if let Some(s) = e.downcast_ref::<Stopped>() {
            let why = s.to_string();
            self.stop = Some(match s {
                Stopped::Interrupted => {
                    "not run: the checks were interrupted (Ctrl-C or SIGTERM)".to_string()
                }
                Stopped::Timeout(_) => format!("not run: an earlier check got {why}"),
            });
            return why;
        }
        let text = sut::conninfo::redact(&format!("{e:#}"));
        let lost = e.chain().any(|c| {
            c.downcast_ref::<sut::Error>()
                .is_some_and(|t| t.class() == sut::ErrorClass::ConnectionLost)
        });
        if !lost {
            return text;
        }
        if self.cause.is_none() {
            self.cause = Some(self.server_state(ctx));
        }
        format!("{} ({text})", self.cause.as_deref().unwrap_or_default())
    }

    /// Whether the server restarted since the run began, is gone, or ended our session.
    fn server_state(&self, ctx: &super::Ctx) -> String {
        let started = self.started;
        let tolerance = crate::environment::start_tolerance_s(ctx.conn().dialect());
        let now = ctx.rt.block_on(async {
            let connect = sut::Session::connect(ctx.conn());
            match tokio::time::timeout(Duration::from_secs(5), connect).await {
                Err(_) => Err("it does not answer a new connection within 5 s".to_string()),
                Ok(Err(e)) => Err(format!(
                    "it refuses new connections: {}",
                    sut::conninfo::redact(&e.to_string())
                )),
                Ok(Ok(mut s)) => {
                    let r = crate::environment::server_started(&mut s).await;
                    s.close().await;
                    Ok(r.ok().flatten())
                }
            }
        });
        match now {
            Err(why) => format!("the server is down: {why}"),
            Ok(Some(t)) if started.is_some_and(|s| (t - s).abs() > tolerance) => {
                "the server restarted since the run began".to_string()
            }
            Ok(_) => "the server ended stampede's checking session (an administrator's \
                      pg_terminate_backend or KILL, or a shutdown)"
                .to_string(),
        }
    }
}

/// A check that could not be done.
pub(crate) fn unverified(name: &str, why: &str) -> Check {
    Check {
        name: name.into(),
        status: CheckStatus::Unverified,
        detail: format!("not verified: {why}"),
    }
}

/// The check that stands in a result saved before its checks ran.
pub(crate) fn pending() -> Check {
    Check {
        name: "checks".into(),
        status: CheckStatus::Skipped,
        detail: "not run yet: this result was saved when the clients stopped; the checks' \
                 verdicts replace this line when they finish"
            .into(),
    }
}
