//! The plan of a TPC-H run (`stampede run tpch`, `stampede run tpch-qN`), decided before any
//! I/O.
//!
//! - `tpch`: the performance test (clause 5.3), `--test` choosing the power test, the
//!   throughput test or both. Its clients are its streams (one for the power test, `--streams`
//!   query streams and a refresh stream for the throughput test), so `-c` is refused; it ends
//!   when every stream is done (`-T` may cut it shorter, and then no metric is computed).
//! - `tpch-qN`: query N alone, a closed loop on `-c` clients (default 1) for `-t`
//!   executions each (default 1) or `-T` seconds, with fresh parameters each time: a tuning
//!   loop.
//!
//! Both send each query as its text with its parameters substituted, as qgen writes them
//! (the simple protocol); a statement is never retried.

use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};

use super::options::Test;
use crate::console::Failure;
use crate::families::planning::{common_spec, no_log, not_a_script, parse_seed};
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

/// What a TPC-H run decided from its command line.
pub struct TpchJob {
    /// `None`: one query alone (`tpch-qN`).
    pub test: Option<Test>,
    /// `tpch-qN`'s query.
    pub query: Option<u8>,
    /// The throughput test's query streams.
    pub streams: u32,
    pub timeout_ms: Option<u64>,
    pub validation: bool,
}

fn usage(what: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
    Failure::usage(what, hint)
}

/// `tpch-qN`'s query number, from the name as given.
pub(crate) fn query_of(name: &str) -> Result<u8> {
    let n = name.strip_prefix("tpch-q").unwrap_or_default();
    match n.parse::<u8>() {
        Ok(q @ 1..=22) => Ok(q),
        _ => Err(usage(
            format!("{name}: TPC-H has queries 1 to 22"),
            "e.g. `stampede run tpch-q5` runs query 5 alone; `stampede run tpch` runs them all",
        )),
    }
}

/// `--query-timeout` in milliseconds (TPC-H's queries, CH-benCHmark's analytic ones).
pub(crate) fn query_timeout_ms(a: &RunArgs) -> Result<Option<u64>> {
    match a.tpch.query_timeout {
        None => Ok(None),
        Some(s) if s > 0.0 && s.is_finite() => Ok(Some((s * 1000.0).ceil() as u64)),
        Some(s) => Err(usage(
            format!("--query-timeout must be positive, got {s}"),
            "",
        )),
    }
}

pub(crate) fn plan(a: &RunArgs, single: Option<u8>) -> Result<(TpchJob, RunSpec)> {
    let what = if single.is_some() {
        "a TPC-H query"
    } else {
        "TPC-H"
    };
    not_a_script(
        a,
        what,
        Some("its size is the loaded scale (`init tpch --scale SF`)"),
    )?;
    no_log(a, what)?;
    let o = &a.tpch;
    let refuse = |given: bool, flag: &str, why: &str| -> Result<()> {
        match given {
            true => Err(usage(format!("{flag} does not apply to {what}: {why}"), "")),
            false => Ok(()),
        }
    };
    refuse(
        a.rate.is_some(),
        "-R",
        "a query runs as soon as its stream is free",
    )?;
    refuse(
        a.protocol
            .is_some_and(|p| p.mode() != sut::QueryMode::Simple),
        "-M",
        "each query is sent as its text with its parameters substituted, as qgen writes it",
    )?;
    refuse(a.max_tries.is_some(), "--max-tries", "a query is sent once")?;
    refuse(
        a.connect,
        "-C",
        "each stream is one session (clause 5.1.2.3)",
    )?;
    refuse(!a.sweep.is_empty(), "--sweep", "run it once per setting")?;
    let timeout_ms = query_timeout_ms(a)?;
    let streams = o.streams.unwrap_or(2);
    if streams < 1 {
        return Err(usage("--streams must be at least 1", ""));
    }
    let jobs = a.jobs.unwrap_or(1);
    if jobs < 1 {
        return Err(usage("-j/--jobs must be at least 1", ""));
    }
    let (clients, stop) = match single {
        Some(_) => {
            refuse(
                o.test.is_some(),
                "--test",
                "it runs one query; `run tpch` runs the tests",
            )?;
            refuse(o.streams.is_some(), "--streams", "its clients are -c")?;
            let clients = a.clients.unwrap_or(1);
            if clients < 1 {
                return Err(usage("-c/--client must be at least 1", ""));
            }
            let stop = match (a.transactions, a.time) {
                (Some(_), Some(_)) => return Err(usage("-t and -T: give one of them", "")),
                (Some(0), _) => return Err(usage("-t/--transactions must be at least 1", "")),
                (_, Some(0)) => return Err(usage("-T/--time must be at least 1", "")),
                (_, Some(t)) => Stop::Duration(Duration::from_secs(t)),
                (t, None) => Stop::Transactions(t.unwrap_or(1)),
            };
            (clients, stop)
        }
        None => {
            refuse(
                a.clients.is_some(),
                "-c",
                "its clients are its streams (--streams)",
            )?;
            refuse(
                a.transactions.is_some(),
                "-t",
                "each stream runs its queries once",
            )?;
            let test = o.test.unwrap_or_default();
            refuse(
                test == Test::Power && o.streams.is_some(),
                "--streams",
                "the power test has one stream (--test throughput or full has more)",
            )?;
            let clients = match test {
                Test::Power => 1,
                Test::Throughput => streams + 1,
                Test::Full => streams + 2,
            };
            let stop = match a.time {
                Some(0) => return Err(usage("-T/--time must be at least 1", "")),
                Some(t) => Stop::Duration(Duration::from_secs(t)),
                None => Stop::UNTIL_DONE,
            };
            (clients, stop)
        }
    };
    let spec = RunSpec {
        mode: sut::QueryMode::Simple,
        max_tries: 1,
        seed: parse_seed(a.random_seed.as_deref())?,
        ..common_spec(a, clients, jobs.min(clients), stop)
    };
    engine::check_io(spec.io, false).map_err(|e| usage(e, ""))?;
    Ok((
        TpchJob {
            test: single.is_none().then(|| o.test.unwrap_or_default()),
            query: single,
            streams,
            timeout_ms,
            validation: o.validation,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    /// A stream count, not `-c 8`; a run to the end of the streams, not `-T 10`.
    fn takes_run_defaults(&self) -> bool {
        false
    }

    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)> {
        let single = match asked.name {
            Some("tpch-qN") => Some(query_of(asked.given.as_deref().unwrap_or_default())?),
            _ => None,
        };
        let (job, spec) = plan(a, single)?;
        Ok((Job::Engine(Box::new(super::run::Runner::new(job))), spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_query_is_named_by_its_number() {
        assert_eq!(query_of("tpch-q5").unwrap(), 5);
        assert_eq!(query_of("tpch-q22").unwrap(), 22);
        for bad in ["tpch-q0", "tpch-q23", "tpch-qN", "tpch-q"] {
            let e = format!("{:#}", query_of(bad).unwrap_err());
            assert!(e.contains("queries 1 to 22"), "{bad}: {e}");
        }
    }
}
