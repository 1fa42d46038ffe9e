//! The plan of a TPC-C run (`stampede run tpcc`), decided before any I/O: the warehouses (or
//! "all the database holds", found before the run), by the book or not, and the engine's
//! [`RunSpec`].
//!
//! Defaults that differ from the other workloads':
//! - retries: a transaction that fails with a serialization failure or a deadlock is
//!   re-submitted with the same inputs until it commits (clause 2.1.2 counts the re-submission,
//!   not the failure): unlimited tries under `-T`, 1,000,000 under `-t`; `--max-tries` caps them.
//! - `--spec` (by the book): 10 clients per warehouse unless `-c` is given, and `-w` is needed to
//!   know them; the keying and think times make each terminal's cycle seconds long, so a short
//!   `-T` measures little (a note says so under 10 minutes).
//! - the simple protocol is refused: TPC-C's inputs are sent as parameters.

use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};
use sut::QueryMode;

use super::parse_seed;
use crate::cli::RunArgs;
use crate::console::Failure;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// Everything a TPC-C run decided from its command line.
pub struct TpccJob {
    /// `-w`: `None` runs on every warehouse the database holds.
    pub warehouses: Option<u32>,
    /// `--spec`: keying and think times.
    pub spec: bool,
}

/// `--spec` without `-c`: 10 terminals per warehouse (clause 4.2.2). Called before stampede's
/// defaults fill `-c`.
pub(crate) fn default_clients(a: &mut RunArgs) -> Result<()> {
    if !a.tpcc.spec || a.clients.is_some() {
        return Ok(());
    }
    match a.tpcc.warehouses {
        Some(w) => a.clients = Some(w.saturating_mul(10)),
        None => {
            return Err(Failure::usage(
                "--spec runs 10 terminals per warehouse: give the warehouses with -w",
                "e.g. `stampede run tpcc --spec -w 10` (or give the clients with -c)",
            ))
        }
    }
    Ok(())
}

pub(crate) fn plan(a: &RunArgs) -> Result<(TpccJob, RunSpec)> {
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        bail!("tpcc is the workload: -b, -f, -N and -S cannot be added to it");
    }
    if !a.define.is_empty() || a.scale.is_some() || a.show_script.is_some() {
        bail!("-D, -s and --show-script do not apply to tpcc (its size is -w, the warehouses)");
    }
    if a.log {
        bail!("--log is not supported for tpcc yet; the JSON result holds every interval");
    }
    let clients = a.clients.unwrap_or(1);
    let jobs = a.jobs.unwrap_or(1);
    if clients < 1 {
        bail!("-c/--client must be at least 1");
    }
    if jobs < 1 {
        bail!("-j/--jobs must be at least 1");
    }
    if a.tpcc.warehouses == Some(0) {
        bail!("-w/--warehouses must be at least 1");
    }
    let stop = match (a.transactions, a.time) {
        (Some(_), Some(_)) => bail!("-t and -T: give one of them"),
        (Some(0), None) => bail!("-t/--transactions must be at least 1"),
        (Some(t), None) => Stop::Transactions(t),
        (None, Some(0)) => bail!("-T/--time must be at least 1"),
        (None, t) => Stop::Duration(Duration::from_secs(t.unwrap_or(10))),
    };
    let mode = a.protocol.map_or(QueryMode::Prepared, |p| p.mode());
    if mode == QueryMode::Simple {
        return Err(Failure::usage(
            "tpcc sends its inputs as parameters: -M simple cannot carry them",
            "use -M prepared (the default) or -M extended",
        ));
    }
    let rate = a.rate;
    if rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        bail!("-R/--rate must be positive");
    }
    if rate.is_some() && a.tpcc.spec {
        bail!("--spec paces each terminal with keying and think times: -R cannot be added");
    }
    let limit = a.latency_limit;
    if limit.is_some_and(|l| !(l > 0.0 && l.is_finite())) {
        bail!("-L/--latency-limit must be positive");
    }
    let max_tries = match (a.max_tries, stop) {
        (None, Stop::Duration(_)) => 0,
        (None, Stop::Transactions(_)) => 1_000_000,
        (Some(0), Stop::Transactions(_)) => {
            bail!("--max-tries=0 (unlimited) needs -T, or the run might never end")
        }
        (Some(n), _) => n,
    };
    if a.tpcc.spec {
        if let Stop::Duration(d) = stop {
            if d < Duration::from_secs(600) {
                crate::console::note(&format!(
                    "--spec: each terminal waits 10-30 s between transactions (keying and think \
                     times), so a {} s run completes few; the specification measures for at \
                     least 2 hours (clause 5.5.1.2)",
                    d.as_secs()
                ));
            }
        }
    }
    let spec = RunSpec {
        rate_tps: rate,
        latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        mode,
        max_tries,
        seed: parse_seed(a.random_seed.as_deref())?,
        ..super::common_spec(a, clients, jobs, stop)
    };
    engine::check_io(spec.io, spec.connect_per_txn).map_err(|e| Failure::usage(e, ""))?;
    Ok((
        TpccJob {
            warehouses: a.tpcc.warehouses,
            spec: a.tpcc.spec,
        },
        spec,
    ))
}
