//! The sizes of the database under test before and after a run, and after `init` (issue 32,
//! item 2): when each reading is taken and what bounds it. The SQL is `observe::sizes`'s.
//!
//! Before the run: with the other baselines, before the commit count's (whose session must see
//! no other session start), each by its own session, bounded by `--check-timeout`. After the run:
//! the last of the steps after it (`after::Steps`), once every check has read the server's
//! counters, so its statements are in none of them; a reading that cannot finish is a note in
//! the reading, never a failed check and never a lost result. `init` reads once it has loaded.
//! Which runs read them ([`wanted`]): stampede's own. A fleet member reads none (the fleet's
//! commit check spans every member's run, and one member's readings would fall inside
//! another's), nor do the drop-ins: `stampede pgbench` and `stampede sysbench` send the server
//! what their peers send, and the statements of a reading would be extra (sysbench's users
//! compare the server's `Com_select` per transaction).
//!
//! Must not touch: the run's sessions, the result's other parts.

use std::time::Duration;

use measure::sizes::Sizes;

use super::{after, Ctx};

/// A reading that could not be taken at all: only its note.
fn not_read(when: &str, why: &str) -> Sizes {
    Sizes {
        when: when.to_string(),
        notes: vec![format!("not read: {why}")],
        ..Default::default()
    }
}

/// One reading of `target`, given up after `timeout`; never an error.
pub(crate) fn read(
    rt: &tokio::runtime::Runtime,
    target: &sut::Target,
    when: &str,
    timeout: Duration,
) -> Sizes {
    let r = rt.block_on(async {
        tokio::time::timeout(timeout, observe::sizes::read(target, when)).await
    });
    match r {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => not_read(when, &sut::conninfo::redact(&e.to_string())),
        Err(_) => not_read(
            when,
            &format!("no answer within {} s (--check-timeout)", timeout.as_secs()),
        ),
    }
}

/// Whether this run reads the sizes (module header).
pub(super) fn wanted(ctx: &Ctx) -> bool {
    ctx.out.fleet.is_none() && ctx.frontend == crate::plan::Frontend::Native
}

/// Before the run.
pub(super) fn before(ctx: &Ctx) -> Sizes {
    read(ctx.rt, ctx.conn(), "before", ctx.out.check_timeout)
}

/// After the run: a step of `steps` (its deadline, Ctrl-C, not tried after a server that
/// stopped answering).
pub(super) fn after(ctx: &Ctx, steps: &mut after::Steps) -> Sizes {
    let r = steps.run(ctx, "sizes", || {
        ctx.block_on(async {
            observe::sizes::read(ctx.conn(), "after")
                .await
                .map_err(anyhow::Error::from)
        })
    });
    match r {
        Ok(s) => s,
        Err(c) => not_read(
            "after",
            c.detail.strip_prefix("not verified: ").unwrap_or(&c.detail),
        ),
    }
}
