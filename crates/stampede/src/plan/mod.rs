//! The command line becomes one value, once: a [`Plan`] (the target, the workload's job, the
//! engine's [`RunSpec`], the outputs), decided and validated before any connection opens. `run`,
//! `pgbench` and `sysbench` are translators into it: stampede's own command line through
//! [`Plan::from_run`], the drop-ins by filling the same [`RunArgs`] with their peer's options
//! and defaults. Nothing after the plan reads the command line again.
//!
//! ## Positionals of `stampede run`
//! `stampede run [WORKLOAD] [DBNAME]`: the first is a workload of the one table
//! ([`crate::workloads`]). One that names no workload is the database, as in pgbench, with a
//! note saying so (`-d` says it without one); one that is close to a workload's name (a typo) is
//! an error rather than a database nobody meant.
//!
//! ## Defaults
//! One set per front end ([`Frontend`]): stampede's own for `stampede run` and the bare
//! `stampede` (8 clients, one engine thread per CPU, 10 s, prepared statements, a progress line
//! every 5 s, the checks and the server watching on), pgbench's for `stampede pgbench` (1
//! client, 10 transactions, simple protocol, nothing added), sysbench's for `stampede sysbench`
//! (1 thread, 10 s, prepared). The defaults a stampede run used are printed in its header.

pub mod sweep;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use engine::RunSpec;

pub use crate::choices::{FaultSpec, FleetPlan, Frontend, Outputs};
use crate::console::Failure;
use crate::families::{Protocol, RunArgs};
use crate::files::RunOutputs;
use crate::targeting::TargetArgs;
use crate::workloads::{self, Family};
use crate::{environment, families, targeting};

pub(crate) use crate::families::Job;

/// Everything a run needs, decided before any I/O.
pub struct Plan {
    pub frontend: Frontend,
    pub target: TargetArgs,
    pub spec: RunSpec,
    pub(crate) job: Job,
    pub out: Outputs,
}

/// stampede's own defaults (module notes).
pub struct Defaults;

impl Defaults {
    pub const CLIENTS: u32 = 8;
    pub const TIME_S: u64 = 10;
    pub const PROTOCOL: Protocol = Protocol::Prepared;
    pub const PROGRESS_S: f64 = 5.0;
    /// `--check-timeout`: each check after the run gets this long.
    pub const CHECK_TIMEOUT_S: u64 = 120;
}

fn cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Which workload and database the positionals name (module notes).
fn positionals(a: &mut RunArgs) -> Result<(Option<&'static workloads::Workload>, Option<String>)> {
    let first = a.workload.take();
    let second = a.positional_dbname.take();
    if a.target.embedded
        && first
            .as_deref()
            .is_some_and(|w| workloads::find(w).is_none())
    {
        return Err(Failure::usage(
            "--embedded and a database name: the embedded server has its own database",
            "drop one of them",
        ));
    }
    let mut given = None;
    let (workload, db) = match (first, second) {
        (None, _) => (None, None),
        (Some(w), db) => match workloads::find(&w) {
            Some(found) => {
                given = Some(w);
                (Some(found), db)
            }
            None if db.is_some() => {
                return Err(Failure::usage(
                    format!("{w:?} is not a workload"),
                    "`stampede run --list` lists them; give the database with -d",
                ))
            }
            None => match workloads::near(&w) {
                Some(near) => {
                    return Err(Failure::usage(
                        format!("{w:?} is not a workload; did you mean {}?", near.name),
                        format!(
                        "`stampede run --list` lists them; a database of that name goes in -d {w}"
                    ),
                    ))
                }
                // A connection string or URL names a target, plainly.
                None if w.contains('=') || w.contains("://") => (None, Some(w)),
                None => {
                    crate::console::note(&format!(
                        "{w:?} is not a workload, so it is taken as the database (-d {w} says so \
                         without this note; `stampede run --list` lists the workloads)"
                    ));
                    (None, Some(w))
                }
            },
        },
    };
    if let Some(db) = db {
        if a.target.embedded {
            return Err(Failure::usage(
                "--embedded and a database name: the embedded server has its own database",
                "drop one of them",
            ));
        }
        if a.target.dbname.is_some() {
            return Err(Failure::usage(
                "the database is given twice (-d/--dbname and a positional DBNAME)",
                "give it once, with -d",
            ));
        }
        a.target.positional_dbname = Some(db);
    }
    Ok((workload, given))
}

impl Plan {
    /// The plan of a `stampede run` (or of a drop-in that filled `RunArgs` with its peer's
    /// options and defaults, `frontend` saying whose).
    pub fn from_run(mut a: RunArgs, frontend: Frontend) -> Result<Plan> {
        let (workload, given) = positionals(&mut a)?;
        let family = match workload {
            Some(w) => w.family,
            None => Family::Pgbench,
        };
        if family == Family::Sysbench {
            // sysbench's connection options are spellings of -h -p -U -d and the password.
            let pgsql = a.sysbench.pgsql.clone();
            pgsql.apply(&mut a.target)?;
        }
        for other in Family::ALL {
            if other != family {
                other.refuse_options(&a, family)?;
            }
        }
        let mut planner = family.planner();
        planner.before_defaults(&mut a)?;
        let mut defaulted = Vec::new();
        if frontend == Frontend::Native && planner.takes_run_defaults() {
            apply_defaults(&mut a, &mut defaulted);
        }
        let progress_s = match a.progress {
            Some(p) if p == 0.0 && frontend == Frontend::Native => None,
            Some(p) if !(p > 0.0 && p.is_finite()) => {
                return Err(Failure::usage(
                    format!("-P/--progress must be positive, got {p}"),
                    "give the seconds between progress lines (0: none)",
                ))
            }
            p => p,
        };
        let asked = families::Asked {
            name: workload.map(|w| w.name),
            given,
            frontend,
        };
        let (job, spec) = planner.plan(&mut a, &asked)?;
        let fault = fault_spec(&a, &spec)?;
        let mut spec = spec;
        let fleet = fleet_plan(&a, fault.is_some() || family == Family::Probe)?;
        if let (Some(f), Some(r)) = (&fleet, spec.rate_tps) {
            // --rate is the fleet's: each process runs its share.
            spec.rate_tps = Some(r / f64::from(f.size));
        }
        // The probe always outlives its sessions: reconnecting and recording is what it is for.
        spec.fault_run = fault.is_some() || family == Family::Probe;
        let sysbench_progress = match a.sysbench.progress_style.as_deref() {
            Some("sysbench") => true,
            Some(_) => false,
            None => frontend == Frontend::Sysbench,
        };
        let sweep = match a.sweep.is_empty() {
            true => None,
            false => {
                let s = &a.sweep;
                if frontend != Frontend::Native {
                    return Err(Failure::usage("--sweep is stampede run's own", ""));
                }
                if fault.is_some() || family == Family::Probe {
                    return Err(Failure::usage(
                        "--sweep cannot be combined with a fault run",
                        "sweep without --fault-at",
                    ));
                }
                let step_s = match spec.stop {
                    engine::Stop::Duration(d) => Some(d.as_secs()),
                    engine::Stop::Transactions(_) => None,
                };
                let sw = sweep::parse(s, a.warmup, step_s)?;
                let params: Vec<&sweep::Param> = sw.axes().into_iter().map(|(p, _)| p).collect();
                if let Some(sweep::Param::Setting(n)) = params
                    .iter()
                    .find(|p| matches!(p, sweep::Param::Setting(_)))
                {
                    if !targeting::wants_embedded(&a.target) || targeting::names_mysql(&a.target) {
                        return Err(Failure::usage(
                            format!(
                                "--sweep set:{n} changes a server setting, which stampede does \
                                 only on the embedded PostgreSQL server it starts"
                            ),
                            "run without a target (-h/-p/-d), or sweep clients or rate",
                        ));
                    }
                }
                for p in &params {
                    // Each scale step re-initialises the tables, as `stampede init` does: only a
                    // family whose runner can (`Family::rescale_refusal`); a family's own
                    // parameter only on its runs (`Family::sweep_refusal`).
                    let refusal = match &job {
                        Job::Engine(f) => f.sweep_refusal(p),
                        Job::Own(_) => {
                            matches!(p, sweep::Param::Scale | sweep::Param::AnalyticClients)
                                .then(|| "this workload runs no sweep".into())
                        }
                    };
                    if let Some(why) = refusal {
                        let hint = match p {
                            sweep::Param::Scale => {
                                "sweep clients or rate, or run `stampede init` once per scale"
                            }
                            _ => "",
                        };
                        return Err(Failure::usage(format!("--sweep {}: {why}", p.name()), hint));
                    }
                }
                Some(sw)
            }
        };
        let (warmup_s, prewarm) = warmup_and_prewarm(&a, &spec, &job, &fleet, &sweep, workload)?;
        // The outputs are checked last among the options, before anything connects or starts:
        // a bad --json path is refused at once, not after the run (`crate::files`).
        let scripts = script_files(&a.file);
        let inputs: Vec<&Path> = scripts.iter().map(PathBuf::as_path).collect();
        let files = RunOutputs::check(a.json.as_deref(), a.html.as_deref(), &inputs)?;
        let out = Outputs {
            progress_s,
            sysbench_progress,
            files,
            checks: !a.no_check,
            check_timeout: std::time::Duration::from_secs(
                a.check_timeout.unwrap_or(Defaults::CHECK_TIMEOUT_S),
            ),
            observe: !a.no_observe,
            defaulted,
            progress_timestamp: a.progress_timestamp,
            fault,
            sweep,
            fleet,
            warmup_s,
            prewarm,
            cloudwatch: crate::cloud::plan(&a.cloud)?,
        };
        // The metrics are added to one run's result after it (`run::run_on`): a sweep's steps
        // and the cache curve's own sequence have no such place yet.
        if out.cloudwatch.is_some() && (out.sweep.is_some() || matches!(job, Job::Own(_))) {
            return Err(Failure::usage(
                "--cloudwatch is for a single run: not with --sweep or the cache curve",
                "run without --cloudwatch, or one step at a time",
            ));
        }
        let mut plan = Plan {
            frontend,
            target: a.target,
            spec,
            job,
            out,
        };
        plan.prepare_for_clients()?;
        targeting::validate(&plan.target)?;
        Ok(plan)
    }

    /// What every run needs for its clients before anything connects or the embedded server
    /// starts: enough open files (raising the soft limit when allowed, refusing with how to raise
    /// it otherwise; see `environment::ensure_fd_limit`), and an embedded server that accepts them
    /// all (`max_connections` from the clients unless `--set`, the rule in
    /// `sut::embedded::max_connections_for`).
    fn prepare_for_clients(&mut self) -> Result<()> {
        // A sweep's largest step, and the storm's idle connections besides its busy clients.
        let mut clients = self.spec.clients.max(1);
        if let Some(s) = &self.out.sweep {
            clients = clients.max(s.max_clients(clients));
        }
        if let Job::Engine(f) = &self.job {
            let besides = f.connections_besides_clients();
            clients = clients.saturating_add(u32::try_from(besides).unwrap_or(u32::MAX));
        }
        // Threads mode (`--io threads`, or auto's choice) has one engine thread per client.
        let threads = engine::engine_threads(&RunSpec {
            clients,
            ..self.spec.clone()
        });
        environment::ensure_fd_limit(clients, threads, "-c/--client")?;
        let user_set = self.target.settings.iter().any(|kv| {
            kv.split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("max_connections"))
        });
        let wanted = sut::embedded::max_connections_for(clients);
        if targeting::wants_embedded(&self.target)
            && !user_set
            && wanted > sut::embedded::max_connections_for(0)
        {
            self.target
                .settings
                .push(format!("max_connections={wanted}"));
        }
        Ok(())
    }
}

/// The `-f FILE[@W]` scripts that exist as files: inputs an output must not overwrite.
fn script_files(args: &[String]) -> Vec<PathBuf> {
    args.iter()
        .filter_map(|f| {
            [Some(f.as_str()), f.rsplit_once('@').map(|(p, _)| p)]
                .into_iter()
                .flatten()
                .map(PathBuf::from)
                .find(|p| p.is_file())
        })
        .collect()
}

/// `--warmup` of a run that is no sweep (a sweep reads it per step, `sweep::parse`), checked
/// against -T, and `--prewarm`'s tables (the workload's, as SQL `LIKE` patterns). Both are for
/// runs of transactions (not the cache curve's own sequence) by one process: a fleet's members
/// would each cut their own part, which the fleet's merge does not line up.
fn warmup_and_prewarm(
    a: &RunArgs,
    spec: &RunSpec,
    job: &Job,
    fleet: &Option<FleetPlan>,
    sweep: &Option<crate::choices::sweep::SweepSpec>,
    workload: Option<&'static crate::workloads::Workload>,
) -> Result<(f64, Option<Vec<&'static str>>)> {
    let own = matches!(job, Job::Own(_));
    for (given, flag) in [(a.warmup.is_some(), "--warmup"), (a.prewarm, "--prewarm")] {
        if given && own {
            return Err(Failure::usage(
                format!(
                    "{flag} applies to runs of transactions; this workload runs its own sequence"
                ),
                format!("run without {flag}"),
            ));
        }
        if given && fleet.is_some() {
            return Err(Failure::usage(
                format!("{flag} cannot be combined with --fleet"),
                "compare the fleet's result with `stampede compare --warmup`",
            ));
        }
    }
    let warmup_s = match (a.warmup, sweep) {
        (Some(w), None) => {
            let run_s = match spec.stop {
                engine::Stop::Duration(d) => Some(d.as_secs()),
                engine::Stop::Transactions(_) => None,
            };
            sweep::check_warmup(w, run_s, "the run")?
        }
        _ => 0.0,
    };
    let dataset = workload.map_or(crate::workloads::Dataset::Tpcb, |w| w.dataset);
    Ok((warmup_s, a.prewarm.then(|| dataset.tables_like().to_vec())))
}

/// stampede's defaults for what the command line left out, each recorded as the option that
/// would have given it.
fn apply_defaults(a: &mut RunArgs, defaulted: &mut Vec<String>) {
    if a.clients.is_none() {
        a.clients = Some(Defaults::CLIENTS);
        defaulted.push(format!("-c {}", Defaults::CLIENTS));
    }
    if a.jobs.is_none() {
        let j = cpus().min(a.clients.unwrap_or(1)).max(1);
        a.jobs = Some(j);
        defaulted.push(format!("-j {j}"));
    }
    if a.time.is_none() && a.transactions.is_none() && a.sysbench.events.is_none() {
        a.time = Some(Defaults::TIME_S);
        defaulted.push(format!("-T {}", Defaults::TIME_S));
    }
    if a.protocol.is_none() && a.sysbench.db_ps_mode.is_none() {
        a.protocol = Some(Defaults::PROTOCOL);
        defaulted.push(format!("-M {}", Defaults::PROTOCOL.name()));
    }
    if a.progress.is_none() {
        a.progress = Some(Defaults::PROGRESS_S);
        defaulted.push(format!("-P {}", Defaults::PROGRESS_S));
    }
}

/// `--fleet`'s options, checked before any I/O: a name, a size, an index within it (from
/// `--fleet-index` or a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`), a shared server.
fn fleet_plan(a: &RunArgs, fault_run: bool) -> Result<Option<FleetPlan>> {
    if fault_run && a.fleet.fleet.is_some() {
        return Err(Failure::usage(
            "--fleet cannot be combined with a fault run",
            "run the fault from one process",
        ));
    }
    if !a.sweep.is_empty() && a.fleet.fleet.is_some() {
        return Err(Failure::usage(
            "--fleet cannot be combined with --sweep",
            "run each step as a fleet of its own",
        ));
    }
    fleet_of(&a.fleet, targeting::wants_embedded(&a.target))
}

/// `--fleet`'s options of `run` or `init`, checked: `embedded` when no target was given.
pub(crate) fn fleet_of(
    f: &crate::families::FleetArgs,
    embedded: bool,
) -> Result<Option<FleetPlan>> {
    let Some(name) = &f.fleet else {
        return Ok(None);
    };
    fleet::check_name(name).map_err(|e| Failure::usage(e, ""))?;
    let size = match f.fleet_size {
        Some(n) if n >= 1 => n,
        Some(_) => return Err(Failure::usage("--fleet-size must be at least 1", "")),
        None => {
            return Err(Failure::usage(
                "--fleet needs --fleet-size N: the number of processes to wait for",
                "",
            ))
        }
    };
    let index = match f.fleet_index {
        Some(i) => Some(i),
        None => match std::env::var("JOB_COMPLETION_INDEX") {
            Ok(v) => Some(v.trim().parse::<u32>().map_err(|_| {
                Failure::usage(
                    format!("JOB_COMPLETION_INDEX={v:?} is not an index"),
                    "give --fleet-index I",
                )
            })?),
            Err(_) => None,
        },
    };
    if let Some(i) = index.filter(|i| *i >= size) {
        return Err(Failure::usage(
            format!("--fleet-index {i} is not below --fleet-size {size}"),
            format!("indexes run from 0 to {}", size - 1),
        ));
    }
    if embedded {
        return Err(Failure::usage(
            "--fleet needs a server every process reaches: the embedded server is one process's",
            "give the target (-h -p -U -d)",
        ));
    }
    Ok(Some(FleetPlan {
        name: name.clone(),
        size,
        index,
        timeout: std::time::Duration::from_secs(f.fleet_timeout.unwrap_or(60)),
    }))
}

/// `--fault-at` and `--fault-cmd`, checked against the run's shape: inside a timed run, and
/// not with -C (a fault run keeps one session per client and reconnects it when it breaks).
fn fault_spec(a: &RunArgs, spec: &RunSpec) -> Result<Option<FaultSpec>> {
    let Some(at) = a.fault_at else {
        return Ok(None);
    };
    if !(at >= 0.0 && at.is_finite()) {
        return Err(Failure::usage(
            format!("--fault-at must be a number of seconds, 0 or more, got {at}"),
            "give the seconds into the measured run when the fault comes",
        ));
    }
    match spec.stop {
        engine::Stop::Duration(d) if at >= d.as_secs_f64() => {
            return Err(Failure::usage(
                format!("--fault-at {at} is not inside the run (-T {})", d.as_secs()),
                "give a -T longer than --fault-at, with time after it to see the recovery",
            ))
        }
        engine::Stop::Duration(_) => {}
        engine::Stop::Transactions(_) => {
            return Err(Failure::usage(
                "--fault-at needs a timed run: a run of -t transactions may end before the fault",
                "give -T",
            ))
        }
    }
    if matches!(spec.io, engine::IoMode::Uring | engine::IoMode::Threads) {
        let io = if spec.io == engine::IoMode::Uring {
            "uring"
        } else {
            "threads"
        };
        return Err(Failure::usage(
            format!(
                "--fault-at cannot be combined with --io {io} (reconnecting goes through epoll)"
            ),
            "use --io auto",
        ));
    }
    if spec.connect_per_txn {
        return Err(Failure::usage(
            "--fault-at cannot be combined with -C/--connect",
            "drop -C: a fault run reconnects its clients when their sessions break",
        ));
    }
    Ok(Some(FaultSpec {
        at: Duration::from_secs_f64(at),
        cmd: a.fault_cmd.clone(),
    }))
}
