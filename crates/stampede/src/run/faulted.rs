//! After a fault run: the failover section from the clients' record (the `failover` crate) and
//! the checks that say whether the fault run went as asked.
//!
//! The checks: "fault", failed when the fault was not injected (the run ended first) or its
//! command failed; "errors during the fault run", failed when any transaction failed, with
//! the errors by kind (a failover without a single failed transaction passes; one with errors
//! exits 2 like any run whose numbers need a look, and the section says what the errors were);
//! and, for the probe, "audit": failed when an acknowledged write is missing, a row is
//! duplicated or a row was never sent (in-doubt rows are reported, not failed: a client cannot
//! know whether a commit whose answer was lost took effect).

use anyhow::Result;
use failover::{analyse, audit, Fault, History};
use report::{Check, CheckStatus};

use super::fault::Injected;
use super::Ctx;
use crate::families::Audited;

/// The section and the checks. `end_us`: the end of the measured run on the engine's clock.
pub(crate) fn section(
    ctx: &Ctx,
    history: &History,
    injected: Option<&Injected>,
    end_us: u64,
    audited: Option<Result<Audited>>,
) -> (report::failover::FailoverSection, Vec<Check>) {
    let none = Injected::default();
    let injected = injected.unwrap_or(&none);
    let conn = ctx.conn();
    let hosts: Vec<String> = (0..conn.endpoints())
        .map(|i| match conn.endpoint_name(i) {
            Some((h, p)) => format!("{h}:{p}"),
            None => format!("host {i}"),
        })
        .collect();
    let asked = ctx
        .out
        .fault
        .as_ref()
        .map_or(0, |f| f.at.as_micros() as u64);
    let fault = Fault {
        at_us: injected.at_us.unwrap_or(asked),
        cmd: injected.cmd.clone(),
        exit_status: injected.exit_status,
    };
    let mut s = analyse(history, &hosts, &fault, end_us);
    s.no_fault_time = injected.at_us.is_none() && ctx.out.fault.is_none();

    let mut checks = Vec::new();
    let (status, detail) = match (injected.at_us, &injected.cmd, injected.exit_status) {
        (None, _, _) if ctx.out.fault.is_none() => (
            CheckStatus::Skipped,
            "no --fault-at: the windows are measured over the whole run".to_string(),
        ),
        (None, _, _) => (
            CheckStatus::Failed,
            format!(
                "not injected: the run ended before --fault-at {:.1} s",
                asked as f64 / 1e6
            ),
        ),
        (Some(at), None, _) => (
            CheckStatus::Passed,
            format!("marked at {:.3} s", at as f64 / 1e6),
        ),
        (Some(at), Some(_), Some(0)) => (
            CheckStatus::Passed,
            format!("injected at {:.3} s", at as f64 / 1e6),
        ),
        (Some(at), Some(_), code) => (
            CheckStatus::Failed,
            format!(
                "the command started at {:.3} s ended with {}",
                at as f64 / 1e6,
                code.map_or("a signal".to_string(), |c| format!("exit status {c}"))
            ),
        ),
    };
    checks.push(Check {
        name: "fault".into(),
        status,
        detail,
    });
    let failed: u64 = (history.attempts.iter())
        .filter(|a| a.outcome != failover::Outcome::Ok)
        .count() as u64;
    checks.push(Check {
        name: "errors during the fault run".into(),
        status: if failed == 0 {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        detail: if failed == 0 {
            "no transaction failed".into()
        } else {
            format!(
                "{failed} transactions failed; errors (reconnections included): {}",
                s.errors_by_kind()
            )
        },
    });
    match audited {
        None => {}
        Some(Ok(a)) => {
            let found = audit(history, a.rows);
            found.fill(&mut s, a.host);
            let bad = !found.lost.is_empty()
                || !found.duplicates.is_empty()
                || !found.unexpected.is_empty();
            checks.push(Check {
                name: "audit".into(),
                status: if bad {
                    CheckStatus::Failed
                } else {
                    CheckStatus::Passed
                },
                detail: format!(
                    "{} acknowledged writes: {} lost, {} in doubt (committed, answer lost), {} \
                     duplicated, {} never sent",
                    s.writes.acknowledged,
                    found.lost.len(),
                    found.in_doubt.len(),
                    found.duplicates.len(),
                    found.unexpected.len()
                ),
            });
        }
        Some(Err(e)) => {
            let e = sut::conninfo::redact(&format!("{e:#}"));
            s.audit_error = Some(e.clone());
            checks.push(Check {
                name: "audit".into(),
                status: CheckStatus::Failed,
                detail: format!("not done: {e}"),
            });
        }
    }
    (s, checks)
}
