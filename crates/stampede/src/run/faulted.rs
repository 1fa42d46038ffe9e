//! After a fault run: the failover section from the clients' record (the `failover` crate) and
//! the checks that say whether the fault run went as asked.
//!
//! Two checks: "fault", failed when the fault was not injected (the run ended first) or its
//! command failed; and "errors during the fault run", failed when any transaction failed, with
//! the errors by kind. A failover without a single failed transaction passes; one with errors
//! exits 2 like any run whose numbers need a look, and the section says what the errors were.

use failover::{analyse, Fault, History};
use report::{Check, CheckStatus};

use super::fault::Injected;
use super::Ctx;

/// The section and the checks. `end_us`: the end of the measured run on the engine's clock.
pub(crate) fn section(
    ctx: &Ctx,
    history: &History,
    injected: &Injected,
    end_us: u64,
) -> (report::failover::FailoverSection, Vec<Check>) {
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
    let s = analyse(history, &hosts, &fault, end_us);

    let mut checks = Vec::new();
    let (status, detail) = match (injected.at_us, &injected.cmd, injected.exit_status) {
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
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for e in &s.errors {
        match kinds.iter_mut().find(|(k, _)| *k == e.kind) {
            Some((_, n)) => *n += e.count,
            None => kinds.push((e.kind.clone(), e.count)),
        }
    }
    let by_kind: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
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
                by_kind.join(", ")
            )
        },
    });
    (s, checks)
}
