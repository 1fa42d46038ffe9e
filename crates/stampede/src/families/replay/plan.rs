//! The plan of a replay (`stampede replay CAPTURE`, `run replay --capture CAPTURE`), decided
//! before any connection: the capture is read (a log is parsed, a replay file loaded) and its
//! sessions mapped here, so that an unreadable log or a capture with nothing left after the
//! filters fails before anything connects.
//!
//! The run's clients are the captured sessions (`-c` is refused: the capture decides); `-j`
//! spreads them over threads as for any run. The run ends when every session has sent its
//! last statement; `-T` cuts it shorter. `-M`, `-t`, `-R`, `--max-tries` and `-C` are
//! refused: the capture decides how each statement is sent and when, and a replayed statement
//! is sent once.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;
use engine::RunSpec;

use super::capture::Capture;
use super::workload::{types_of, Play, Speed};
use super::Job as ReplayJob;
use crate::console::Failure;
use crate::families::planning::{common_spec, no_log, not_a_script};
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner};

fn usage(cause: impl Into<String>, todo: &str) -> anyhow::Error {
    Failure::usage(cause.into(), todo)
}

/// `--speed`: a positive factor, or `max`.
pub(crate) fn speed(v: Option<&str>) -> Result<Speed> {
    match v.map(str::trim) {
        None => Ok(Speed::Factor(1.0)),
        Some(s) if s.eq_ignore_ascii_case("max") => Ok(Speed::Max),
        Some(s) => match s.parse::<f64>() {
            Ok(f) if f > 0.0 && f.is_finite() => Ok(Speed::Factor(f)),
            _ => Err(usage(
                format!("--speed {s:?} is neither a positive factor nor max"),
                "--speed 1 replays at the captured pace, 2 twice as fast, max as fast as the \
                 server answers",
            )),
        },
    }
}

/// `--map-user`/`--map-db`'s FROM=TO pairs (`*` matches every name).
pub(crate) fn mapping(flag: &str, given: &[String]) -> Result<BTreeMap<String, String>> {
    let mut m = BTreeMap::new();
    for g in given {
        match g.split_once('=') {
            Some((from, to)) if !from.is_empty() && !to.is_empty() => {
                m.insert(from.to_string(), to.to_string());
            }
            _ => {
                return Err(usage(
                    format!("{flag} {g:?} is not FROM=TO"),
                    &format!("{flag} app=app_copy, or {flag} '*=app_copy' for every name"),
                ))
            }
        }
    }
    Ok(m)
}

fn mapped(m: &BTreeMap<String, String>, name: &str) -> String {
    m.get(name)
        .or_else(|| m.get("*"))
        .cloned()
        .unwrap_or_else(|| name.to_string())
}

pub(crate) fn plan_replay(a: &RunArgs) -> Result<(ReplayJob, RunSpec)> {
    not_a_script(a, "a replay", None)?;
    no_log(a, "a replay")?;
    if crate::targeting::wants_embedded(&a.target) {
        return Err(usage(
            "a replay runs on a copy of the database its capture ran on: give the target",
            "-d (a conninfo or URL) or -h/-p/-U",
        ));
    }
    let o = &a.replay;
    let Some(path) = o.capture.clone() else {
        return Err(usage(
            "a replay needs its capture",
            "`stampede replay LOG` or `stampede replay FILE.replay` (`stampede replay parse \
             LOG -o FILE` makes one, `stampede replay --capture SECONDS -o FILE` records one)",
        ));
    };
    let refuse = |given: bool, flag: &str, why: &str| -> Result<()> {
        match given {
            true => Err(usage(
                format!("{flag} does not apply to a replay: {why}"),
                "",
            )),
            false => Ok(()),
        }
    };
    refuse(
        a.clients.is_some(),
        "-c",
        "its clients are the captured sessions",
    )?;
    refuse(
        a.transactions.is_some(),
        "-t",
        "it ends with the capture (-T cuts it shorter)",
    )?;
    refuse(
        a.rate.is_some(),
        "-R",
        "the capture's times pace it (--speed)",
    )?;
    refuse(
        a.protocol.is_some(),
        "-M",
        "each statement is sent as it was captured",
    )?;
    refuse(
        a.max_tries.is_some(),
        "--max-tries",
        "a captured statement is sent once",
    )?;
    refuse(
        a.connect,
        "-C",
        "each captured session keeps its connection",
    )?;
    refuse(
        !a.sweep.is_empty(),
        "--sweep",
        "replay the capture once per setting",
    )?;
    let speed = speed(o.speed.as_deref())?;
    let strict = o.order == Some(super::options::Order::Strict);
    if strict && a.fleet.fleet.is_some() {
        return Err(usage(
            "--order strict cannot be kept by a fleet: a statement would wait for statements \
             another process replays",
            "replay a capture that needs its global order in one process, or drop --order \
             strict to keep each session's order only",
        ));
    }
    let users = mapping("--map-user", &o.map_user)?;
    let dbs = mapping("--map-db", &o.map_db)?;
    let (capture, format) = super::capture::read_path(&path, &o.read)?;
    let (mut plays, fingerprints) = plays(&capture, &users, &dbs);
    if a.fleet.fleet.is_some() {
        let all = plays.len();
        let (index, size) = fleet_share(a)?;
        plays.retain(|p| session_hash(&p.session.id) % u64::from(size) == u64::from(index));
        if plays.is_empty() {
            return Err(usage(
                format!(
                    "fleet process {index} of {size} gets none of the capture's {all} sessions"
                ),
                "run fewer processes than the capture has sessions",
            ));
        }
    }
    if plays.is_empty() {
        return Err(Failure::usage(
            format!(
                "{}: no session left to replay ({} lines read, {} skipped)",
                path.display(),
                capture.stats.lines,
                capture.stats.skipped.values().sum::<u64>()
            ),
            "check --format and the --only-* filters; the log needs log_min_duration_statement \
             = 0 or log_statement = all (PostgreSQL), or the general log (MySQL)",
        ));
    }
    let clients = u32::try_from(plays.len()).map_err(|_| usage("too many sessions", ""))?;
    let jobs = a.jobs.unwrap_or(1);
    if jobs < 1 {
        return Err(usage("-j/--jobs must be at least 1", ""));
    }
    let stop = match a.time {
        Some(0) => return Err(usage("-T/--time must be at least 1", "")),
        Some(t) => engine::Stop::Duration(Duration::from_secs(t)),
        None => engine::Stop::UNTIL_DONE,
    };
    let spec = RunSpec {
        mode: sut::QueryMode::Simple,
        max_tries: 1,
        ..common_spec(a, clients, jobs.min(clients), stop)
    };
    engine::check_io(spec.io, false).map_err(|e| usage(e, ""))?;
    Ok((
        ReplayJob {
            path,
            format,
            speed,
            strict,
            stats: capture.stats,
            family: capture.family,
            plays,
            fingerprints,
        },
        spec,
    ))
}

/// A fleet process's index and the fleet's size: each replays the sessions whose id hashes to
/// its index, so the index must be known before the run (`--fleet-index`, or
/// `JOB_COMPLETION_INDEX` in a Kubernetes Indexed Job).
fn fleet_share(a: &RunArgs) -> Result<(u32, u32)> {
    let size = a.fleet.fleet_size.filter(|n| *n >= 1).ok_or_else(|| {
        usage(
            "--fleet needs --fleet-size N: the number of processes to wait for",
            "",
        )
    })?;
    let index = match a.fleet.fleet_index {
        Some(i) => Some(i),
        None => std::env::var("JOB_COMPLETION_INDEX")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok()),
    };
    match index {
        Some(i) if i < size => Ok((i, size)),
        Some(i) => Err(usage(
            format!("--fleet-index {i} is not below --fleet-size {size}"),
            "",
        )),
        None => Err(usage(
            "a fleet's replay splits the capture's sessions by each process's index: it must be \
             known before the run",
            "give each process its --fleet-index (or run it as a Kubernetes Indexed Job)",
        )),
    }
}

/// A session's place in a fleet: FNV-1a of its id (stable across processes and builds).
fn session_hash(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The capture's sessions as the run's clients, fingerprinted and their names mapped; with
/// the fingerprints (the run's transaction types).
fn plays(
    c: &Capture,
    users: &BTreeMap<String, String>,
    dbs: &BTreeMap<String, String>,
) -> (Vec<Play>, Vec<String>) {
    let (names, types) = types_of(&c.sessions);
    let plays = (c.sessions.iter())
        .zip(types)
        .filter(|(s, _)| !s.statements.is_empty())
        .map(|(s, t)| Play {
            user: mapped(users, &s.user),
            database: mapped(dbs, &s.database),
            session: s.clone(),
            types: t,
            gates: Vec::new(),
        })
        .collect();
    (plays, names)
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn takes_run_defaults(&self) -> bool {
        false
    }

    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan_replay(a)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_and_mappings_are_read_or_refused_by_flag() {
        assert_eq!(speed(None).unwrap(), Speed::Factor(1.0));
        assert_eq!(speed(Some("MAX")).unwrap(), Speed::Max);
        assert_eq!(speed(Some("2.5")).unwrap(), Speed::Factor(2.5));
        for bad in ["0", "-1", "fast", "inf"] {
            let e = format!("{:#}", speed(Some(bad)).unwrap_err());
            assert!(e.contains("--speed"), "{e}");
        }
        let m = mapping("--map-db", &["bench=copy".into(), "*=other".into()]).unwrap();
        assert_eq!(mapped(&m, "bench"), "copy");
        assert_eq!(mapped(&m, "shop"), "other");
        assert_eq!(mapped(&BTreeMap::new(), "shop"), "shop");
        let e = format!("{:#}", mapping("--map-user", &["app".into()]).unwrap_err());
        assert!(e.contains("--map-user \"app\" is not FROM=TO"), "{e}");
    }

    #[test]
    fn a_fleet_splits_the_sessions_by_a_stable_hash() {
        // FNV-1a's published test vectors: the split never changes between builds.
        assert_eq!(session_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(session_hash("a"), 0xaf63_dc4c_8601_ec8c);
        let ids: Vec<String> = (0..1000).map(|i| format!("65a1f0.{i:x}")).collect();
        let in0 = ids.iter().filter(|i| session_hash(i) & 1 == 0).count();
        assert!((400..600).contains(&in0), "{in0} of 1000 in process 0");
    }
}
