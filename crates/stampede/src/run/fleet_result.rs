//! A fleet's merged result: the processes' stored results merged (`report::merge`, pure), the
//! fleet's commit check from the server's snapshots, the workload's checks that hold for the
//! whole fleet, printed and saved as any run's. Used by the fleet's first process at the end of
//! its run (`member`) and by `stampede fleet report`.

use anyhow::{Context, Result};
use report::RunResult;

use crate::console::{Failure, EXIT_OK, EXIT_UNTRUSTED};
use crate::files::RunOutputs;

/// The merged result of a fleet's stored results, with the fleet's commit check when both
/// snapshots were taken.
pub(crate) fn merged(stored: &fleet::Stored, name: &str) -> Result<RunResult> {
    let mut results = Vec::new();
    for (i, json) in &stored.results {
        if let Some(j) = json {
            results.push(
                report::read_json(j.as_bytes())
                    .with_context(|| format!("fleet {name}: process {i}'s stored result"))?,
            );
        }
    }
    if results.is_empty() {
        let why = stored
            .failure
            .as_deref()
            .unwrap_or("no process has stored a result yet");
        return Err(Failure::setup(format!("fleet {name}: {why}"), ""));
    }
    let mut m =
        report::merge::merge(&results, Some(stored.size)).map_err(|e| anyhow::anyhow!(e))?;
    m.command_line = vec![
        "stampede".into(),
        "fleet".into(),
        "report".into(),
        name.into(),
    ];
    if let Some(f) = &mut m.fleet {
        if let (Some(s0), Some(s1)) = (stored.s0, stored.s1) {
            let c = report::fleet::commit_check(
                f,
                &report::fleet::Snapshots {
                    before: s0,
                    after: s1,
                    counter: stored.counter,
                    others: stored.others,
                    maintenance: stored.maintenance,
                },
            );
            m.checks.insert(0, c.clone());
            f.commit_check = Some(c);
        }
    }
    Ok(m)
}

/// The workload's checks that hold for the whole fleet, run once every process is done
/// (TPC-C's consistency conditions: `families::tpcc::fleet_checks`).
pub(crate) fn workload_checks(
    rt: &tokio::runtime::Runtime,
    conn: &sut::Target,
    m: &mut RunResult,
) -> Result<()> {
    crate::families::tpcc::fleet_checks(rt, conn, m)
}

/// Print the merged result; save it as asked; the exit code of a run (a file not written is a
/// result that needs a look, as a failed check is).
pub(crate) fn emit(m: &RunResult, files: &RunOutputs) -> i32 {
    emit_saved(m, files).0
}

/// [`emit`], and whether every file was written.
pub(crate) fn emit_saved(m: &RunResult, files: &RunOutputs) -> (i32, bool) {
    print!("{}", report::render_text(m));
    let saved = files.save(m, "merged result");
    let failed = m.checks.iter().any(|c| c.status.untrusted());
    let code = if failed || !saved {
        EXIT_UNTRUSTED
    } else {
        EXIT_OK
    };
    (code, saved)
}
