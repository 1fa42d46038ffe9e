//! The small pieces every loader's steps share: a step's start/finish events and timing
//! ([`Step`]), running one setup statement or query (and reading a number from its row),
//! honouring the cancel flag between statements, and undoing a half-finished `init` so that no table is left
//! looking loaded (what `init tpcb` and `init oltp` both promise after an error or Ctrl-C).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use sut::{Session, Target};

use crate::{Event, LoadError, Timings};

/// One named step of an `init` (pgbench's "drop tables", "primary keys", ...): announced when
/// started, timed, and recorded in the timings with its finish event.
pub struct Step {
    name: &'static str,
    t: Instant,
}

impl Step {
    pub fn start(name: &'static str, on_event: &mut dyn FnMut(&Event<'_>)) -> Step {
        on_event(&Event::StepStarted(name));
        Step {
            name,
            t: Instant::now(),
        }
    }

    pub fn finish(self, timings: &mut Timings, on_event: &mut dyn FnMut(&Event<'_>)) {
        let elapsed = self.t.elapsed();
        timings.steps.push((self.name, elapsed));
        on_event(&Event::StepFinished {
            step: self.name,
            elapsed,
        });
    }
}

/// Run one statement; an error names the statement.
pub async fn exec(s: &mut Session, sql: &str) -> Result<(), LoadError> {
    s.simple_query(sql)
        .await
        .map(|_| ())
        .map_err(|e| LoadError::db(sql.to_string(), e))
}

/// `Err(Interrupted)` once the cancel flag is raised.
pub fn check_cancel(cancel: &AtomicBool) -> Result<(), LoadError> {
    if cancel.load(Ordering::Relaxed) {
        Err(LoadError::Interrupted)
    } else {
        Ok(())
    }
}

/// After an `init` failed (or was interrupted) once it had created its tables: run `drop_sql`
/// on the admin session, or on a new one if that session broke, and say what happened through
/// a Notice. Best effort: the original error is what the caller returns. Closes `admin`.
pub async fn undo_create(
    cfg: &Target,
    mut admin: Session,
    created: bool,
    drop_sql: &[&str],
    what: &str,
    on_event: &mut dyn FnMut(&Event<'_>),
) {
    if created {
        let dropped = if admin.is_usable() {
            exec_all(&mut admin, drop_sql).await
        } else {
            match Session::connect(cfg).await {
                Ok(mut s) => {
                    let r = exec_all(&mut s, drop_sql).await;
                    s.close().await;
                    r
                }
                Err(e) => Err(LoadError::db("reconnecting to drop the tables", e)),
            }
        };
        let msg = match dropped {
            Ok(()) => format!("initialisation stopped: dropped the {what} tables again"),
            Err(d) => format!(
                "initialisation stopped, and dropping the partly loaded {what} tables failed too: {d}"
            ),
        };
        on_event(&Event::Notice(&msg));
    }
    if admin.is_usable() {
        admin.close().await;
    }
}

/// An init's steps on one admin session, connected here and closed after: `steps` gets the
/// session, the timings to record its steps in, and a flag to raise once it has created its
/// tables. When the steps fail (or are interrupted) after that, the tables are dropped again
/// with `drop_sql` ([`undo_create`]), so no table is left looking loaded. Returns what the
/// steps returned and their timings.
pub async fn on_admin<R>(
    cfg: &Target,
    drop_sql: &[&str],
    what: &str,
    on_event: &mut dyn FnMut(&Event<'_>),
    steps: impl AsyncFnOnce(
        &mut Session,
        &mut Timings,
        &mut bool,
        &mut dyn FnMut(&Event<'_>),
    ) -> Result<R, LoadError>,
) -> Result<(R, Timings), LoadError> {
    let mut admin = Session::connect(cfg)
        .await
        .map_err(|e| LoadError::db("connecting", e))?;
    let mut timings = Timings::default();
    let mut created = false;
    match steps(&mut admin, &mut timings, &mut created, on_event).await {
        Ok(r) => {
            admin.close().await;
            Ok((r, timings))
        }
        Err(e) => {
            undo_create(cfg, admin, created, drop_sql, what, on_event).await;
            Err(e)
        }
    }
}

async fn exec_all(s: &mut Session, sqls: &[&str]) -> Result<(), LoadError> {
    for sql in sqls {
        exec(s, sql).await?;
    }
    Ok(())
}

/// Run a query; an error says what was being done (`context`).
pub(crate) async fn query(
    s: &mut Session,
    sql: &str,
    context: &str,
) -> Result<Vec<Vec<Option<String>>>, LoadError> {
    s.simple_query(sql)
        .await
        .map_err(|e| LoadError::db(context, e))
}

/// The first row of a query's result (empty when there is none).
pub(crate) async fn first_row(
    s: &mut Session,
    sql: &str,
    context: &str,
) -> Result<Vec<Option<String>>, LoadError> {
    Ok(query(s, sql, context)
        .await?
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// Field `i` of a result row as a number: 0 when it is missing, NULL or not a number.
pub(crate) fn num<T: std::str::FromStr + Default>(row: &[Option<String>], i: usize) -> T {
    row.get(i)
        .and_then(|v| v.as_deref())
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}
