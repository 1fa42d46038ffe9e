//! Running a layout's [`Plan`]: the server check first (nothing is created on a server that
//! cannot hold the layout), then each phase's steps at once, each on its own connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use sut::{Session, Target};

use super::{plan_with, Layout, On, ShardedOptions};
use crate::steps::check_cancel;
use crate::{Event, LoadError, Timings};

/// Refuse a server that cannot hold the layout, saying what to do, before anything is created.
pub async fn check_server(s: &mut Session, layout: Layout) -> Result<(), LoadError> {
    let (sql, what) = match layout {
        Layout::Plain => return Ok(()),
        Layout::Citus => (
            ("select exists (select 1 from pg_extension where extname = 'citus'), \
                 exists (select 1 from pg_available_extensions where name = 'citus')"),
            "Citus",
        ),
        Layout::Limitless => (
            ("select exists (select 1 from pg_settings \
                 where name = 'rds_aurora.limitless_create_table_mode'), false"),
            "Aurora Limitless",
        ),
        Layout::Fdw => (
            ("select exists (select 1 from pg_available_extensions where name = 'postgres_fdw'), \
                 false"),
            "postgres_fdw",
        ),
    };
    let rows = s
        .simple_query(sql)
        .await
        .map_err(|e| LoadError::db(format!("checking the server for {what}"), e))?;
    let yes = |i: usize| {
        rows.first()
            .and_then(|r| r.get(i))
            .and_then(|v| v.as_deref())
            == Some("t")
    };
    if yes(0) {
        return Ok(());
    }
    Err(LoadError::Invalid(match layout {
        Layout::Citus if yes(1) => "--layout citus: the citus extension is installed on this \
             server but not created in this database: run CREATE EXTENSION citus (citus must be \
             in shared_preload_libraries), then init again"
            .into(),
        Layout::Citus => "--layout citus: this server has no Citus (no citus in \
             pg_available_extensions); connect to a Citus coordinator, or use --layout fdw for \
             plain PostgreSQL shards"
            .into(),
        Layout::Limitless => "--layout limitless: this server is not an Aurora PostgreSQL \
             Limitless Database (it has no rds_aurora.limitless_create_table_mode setting); \
             connect to the DB shard group's endpoint, or use --layout fdw for plain PostgreSQL \
             shards"
            .into(),
        _ => "--layout fdw: the coordinator has no postgres_fdw (PostgreSQL's contrib); install \
              it there"
            .into(),
    }))
}

/// Create and load the layout: the coordinator is `coordinator`, the shards `opts.shards`.
pub async fn execute(
    coordinator: &Target,
    opts: &ShardedOptions,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Timings, LoadError> {
    opts.validate().map_err(LoadError::Invalid)?;
    {
        let mut s = Session::connect(coordinator)
            .await
            .map_err(|e| LoadError::db("connecting to the coordinator", e))?;
        let r = check_server(&mut s, opts.layout).await;
        s.close().await;
        r?;
    }
    let targets: Vec<Target> = opts.shards.iter().cloned().map(Target::Pg).collect();
    let plan = plan_with(opts, true);
    let mut timings = Timings::default();
    for phase in plan.phases {
        check_cancel(&opts.cancel)?;
        on_event(&Event::StepStarted(phase.name));
        let t = Instant::now();
        // Raised when a step fails: the phase's other steps stop after their statement.
        let stop = Arc::new(AtomicBool::new(false));
        let mut set = tokio::task::JoinSet::new();
        for step in phase.steps {
            let target = match step.on {
                On::Coordinator => coordinator.clone(),
                On::Shard(i) => targets[i].clone(),
            };
            let (cancel, stop) = (opts.cancel.clone(), stop.clone());
            set.spawn(async move {
                let place = match step.on {
                    On::Coordinator => "the coordinator".to_string(),
                    On::Shard(i) => format!(
                        "shard {i} ({})",
                        super::describe(target.pg().expect("a PostgreSQL shard"))
                    ),
                };
                let mut s = Session::connect(&target)
                    .await
                    .map_err(|e| LoadError::db(format!("connecting to {place}"), e))?;
                for sql in &step.sql {
                    if let Err(e) = check_cancel(&cancel).and_then(|()| check_cancel(&stop)) {
                        s.close().await;
                        return Err(e);
                    }
                    if let Err(e) = s.simple_query(sql).await {
                        s.close().await;
                        return Err(LoadError::db(format!("on {place}: {}", redact(sql)), e));
                    }
                }
                s.close().await;
                Ok(())
            });
        }
        let mut first: Option<LoadError> = None;
        while let Some(r) = set.join_next().await {
            let r =
                r.unwrap_or_else(|e| Err(LoadError::Invalid(format!("a loader task failed: {e}"))));
            if let (Err(e), None) = (r, &first) {
                // The others stop after their statement; nothing is left that a new init
                // would not drop first.
                stop.store(true, Ordering::Relaxed);
                first = Some(e);
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
        let elapsed = t.elapsed();
        timings.steps.push((phase.name, elapsed));
        on_event(&Event::StepFinished {
            step: phase.name,
            elapsed,
        });
    }
    Ok(timings)
}

/// A failed statement as an error names it: a user mapping's password replaced.
fn redact(sql: &str) -> String {
    match sql.find(", password '") {
        Some(i) if sql.starts_with("create user mapping") => {
            format!("{}, password '********')", &sql[..i])
        }
        _ => sql.to_string(),
    }
}
