//! The plan of a pgbench-family run: pgbench's builtins and `-f` scripts, mixed in command-line
//! order as pgbench numbers them, with the engine's [`RunSpec`].
//!
//! Every `-f` file is read and compiled, and every `-D` checked, before any connection opens: a
//! bad script fails with `file:line:column`, the line and a caret (pgbench's `syntax_error`).

use std::time::Duration;

use anyhow::{Context, Result};
use engine::{RunSpec, Stop};
use sut::QueryMode;
use workload::script::{parse_define, ScriptSet};
use workload::tpcb::{self, Builtin};

use crate::console::Failure;
use crate::families::planning::{parse_seed, positive};
use crate::families::{Asked, Job, Planner};
use crate::families::{Protocol, RunArgs, ScriptArg};

/// pgbench's pre-run vacuum (`-n`, `-v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vacuum {
    None,
    /// Vacuum branches and tellers, truncate the history.
    Standard,
    /// Also vacuum accounts (and, in stampede's own runs, the history).
    All,
}

/// Everything a pgbench-family run decided from its command line.
pub struct PgbenchJob {
    /// The builtin each script is (`None`: a `-f` file), in order.
    pub builtins: Vec<Option<Builtin>>,
    pub weights: Vec<u32>,
    /// The compiled scripts; taken when the workload is built.
    pub set: Option<ScriptSet>,
    pub defines: Vec<(String, String)>,
    pub seed: u64,
    /// `-s`: for builtins, what the data must be (a different count in pgbench_branches wins,
    /// with a warning) and what the embedded server loads; for files only, `:scale`.
    pub scale: Option<i64>,
    pub vacuum: Vacuum,
    pub protocol: Protocol,
    /// `--debug` (pgbench's): each client's commands and values on standard error.
    pub debug: bool,
    /// `--failures-detailed`: the summary splits failures by kind.
    pub failures_detailed: bool,
    /// `--require-single-shard`: the routing check refuses a run that would scatter.
    pub require_single_shard: bool,
}

impl PgbenchJob {
    /// Some script is a `-f` file.
    pub fn custom(&self) -> bool {
        self.builtins.iter().any(Option::is_none)
    }

    /// Some script is a builtin (pgbench's `internal_script_used`: `:scale` from the tables).
    pub fn uses_builtin(&self) -> bool {
        self.builtins.iter().any(Option::is_some)
    }
}

fn usage(cause: String) -> anyhow::Error {
    Failure::usage(cause, "")
}

/// The job and the engine's spec. `workload`: a builtin named as `run`'s positional, first in
/// the mix.
pub(crate) fn plan(
    a: &RunArgs,
    workload: Option<&str>,
    compiled: Option<ScriptSet>,
) -> Result<(PgbenchJob, RunSpec)> {
    let clients = a.clients.unwrap_or(1);
    let jobs = a.jobs.unwrap_or(1);
    if clients < 1 {
        return Err(usage("-c/--client must be at least 1".into()));
    }
    if jobs < 1 {
        return Err(usage("-j/--jobs must be at least 1".into()));
    }
    if a.time == Some(0) {
        return Err(usage("-T/--time must be at least 1 second".into()));
    }
    if a.transactions == Some(0) {
        return Err(usage("-t/--transactions must be at least 1".into()));
    }
    if a.scale.is_some_and(|s| s < 1) {
        return Err(usage("-s/--scale must be at least 1".into()));
    }
    let rate = positive(a.rate, "-R/--rate")?;
    let limit = positive(a.latency_limit, "-L/--latency-limit")?;
    let max_tries = a.max_tries.unwrap_or(1);
    if max_tries == 0 && a.time.is_none() && limit.is_none() {
        return Err(Failure::usage(
            "--max-tries=0 (unlimited) needs -T/--time or -L/--latency-limit, or the run might \
             never end",
            "give -T",
        ));
    }
    let log = log_spec(a, clients, jobs)?;
    let mut defines = a
        .define
        .iter()
        .map(|d| parse_define(d).map_err(usage))
        .collect::<Result<Vec<_>>>()?;
    let protocol = a.protocol.unwrap_or(Protocol::Simple);
    let set = match compiled {
        Some(set) => set,
        None => select_scripts(a, workload, protocol)?,
    };
    let builtins = set.builtins();
    cross_shard(a, &builtins, &mut defines)?;
    let weights = set.weights();
    let seed = parse_seed(a.random_seed.as_deref())?;
    let stop = match a.time {
        Some(t) => Stop::Duration(Duration::from_secs(t)),
        None => Stop::Transactions(a.transactions.unwrap_or(10)),
    };
    let spec = RunSpec {
        rate_tps: rate,
        latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        mode: protocol.mode(),
        max_tries,
        seed,
        weights: weights.clone(),
        log,
        ..crate::families::planning::common_spec(a, clients, jobs, stop)
    };
    engine::check_io(spec.io, spec.connect_per_txn).map_err(usage)?;
    if spec.io == engine::IoMode::Threads && spec.log.is_some() && spec.threads < clients {
        // pgbench's -l writes one file per -j thread; threads mode has one thread per client.
        return Err(usage(
            "--io threads with -l needs -j equal to -c: the logs are one per thread".into(),
        ));
    }
    let vacuum = if a.no_vacuum {
        Vacuum::None
    } else if a.vacuum_all {
        Vacuum::All
    } else {
        Vacuum::Standard
    };
    Ok((
        PgbenchJob {
            builtins,
            weights,
            set: Some(set),
            defines,
            seed,
            scale: a.scale,
            vacuum,
            protocol,
            debug: a.debug,
            failures_detailed: a.failures_detailed,
            require_single_shard: a.sharding.require_single_shard,
        },
        spec,
    ))
}

/// `--cross-shard PCT` becomes tpcb-sharded's variable `cross_shard` (0 when not given), which
/// also makes the run use the script engine that tpcb-sharded needs.
fn cross_shard(
    a: &RunArgs,
    builtins: &[Option<Builtin>],
    defines: &mut Vec<(String, String)>,
) -> Result<()> {
    let sharded = builtins.contains(&Some(Builtin::TpcbSharded));
    match (a.sharding.cross_shard, sharded) {
        (Some(_), false) => Err(Failure::usage(
            "--cross-shard applies to the tpcb-sharded workload",
            "run tpcb-sharded, or leave --cross-shard out",
        )),
        (Some(p), true) if p > 100 => Err(usage(format!(
            "--cross-shard is a percentage (0..100), got {p}"
        ))),
        (_, false) => Ok(()),
        (p, true) => {
            if defines.iter().any(|(k, _)| k == "cross_shard") {
                return Err(Failure::usage(
                    "-D cross_shard is tpcb-sharded's own variable",
                    "give the share with --cross-shard PCT",
                ));
            }
            defines.push(("cross_shard".into(), p.unwrap_or(0).to_string()));
            Ok(())
        }
    }
}

/// `-l` and its options, validated as pgbench does (before any connection). The files are named
/// as pgbench names them: `PREFIX.PID` for the first thread, `PREFIX.PID.N` for thread N.
fn log_spec(a: &RunArgs, clients: u32, jobs: u32) -> Result<Option<engine::LogSpec>> {
    if !a.log {
        if a.aggregate_interval.is_some() {
            return Err(usage(
                "--aggregate-interval needs -l/--log (aggregation is only done when logging)"
                    .into(),
            ));
        }
        if a.sampling_rate.is_some() {
            return Err(usage(
                "--sampling-rate needs -l/--log (sampling is only done when logging)".into(),
            ));
        }
        if a.log_prefix.is_some() {
            return Err(usage("--log-prefix needs -l/--log".into()));
        }
        return Ok(None);
    }
    if let Some(r) = a.sampling_rate {
        if !(r > 0.0 && r <= 1.0) {
            return Err(usage(format!(
                "--sampling-rate must be greater than 0 and at most 1, got {r}"
            )));
        }
    }
    if let Some(n) = a.aggregate_interval {
        if n == 0 {
            return Err(usage(
                "--aggregate-interval must be at least 1 second".into(),
            ));
        }
        if a.sampling_rate.is_some() {
            return Err(usage(
                "--sampling-rate and --aggregate-interval cannot be used together (as in pgbench)"
                    .into(),
            ));
        }
        if let Some(t) = a.time {
            if t % n != 0 {
                return Err(usage(format!(
                    "-T/--time ({t}) must be a multiple of --aggregate-interval ({n})"
                )));
            }
        }
    }
    let prefix = a.log_prefix.as_deref().unwrap_or("pgbench_log");
    if prefix.is_empty() {
        return Err(usage("--log-prefix must not be empty".into()));
    }
    // The logs are written as the run goes, so only their directory can be checked up front.
    let flag = if a.log_prefix.is_some() {
        "--log-prefix"
    } else {
        "-l"
    };
    crate::files::check_prefix(flag, prefix)?;
    let pid = std::process::id();
    let threads = jobs.min(clients).max(1);
    let paths = (0..threads)
        .map(|t| {
            if t == 0 {
                format!("{prefix}.{pid}").into()
            } else {
                format!("{prefix}.{pid}.{t}").into()
            }
        })
        .collect();
    Ok(Some(engine::LogSpec {
        paths,
        aggregate: a.aggregate_interval.map(Duration::from_secs),
        sampling_rate: a.sampling_rate,
        failures_detailed: a.failures_detailed,
    }))
}

/// The positional builtin, then `-b name[@weight]`, `-N`, `-S` and `-f file[@weight]` in the
/// order given (pgbench's order of options); tpcb-like when none. Files are read and compiled
/// here, before any connection.
fn select_scripts(a: &RunArgs, workload: Option<&str>, protocol: Protocol) -> Result<ScriptSet> {
    let mut order: Vec<ScriptArg> = workload
        .map(|w| ScriptArg::Builtin(w.to_string()))
        .into_iter()
        .collect();
    if a.script_order.is_empty() {
        // Not parsed from argv (a drop-in's translation, tests): builtins, -N, -S, then files.
        order.extend(a.builtin.iter().cloned().map(ScriptArg::Builtin));
        if a.skip_some_updates {
            order.push(ScriptArg::Builtin("simple-update".into()));
        }
        if a.select_only {
            order.push(ScriptArg::Builtin("select-only".into()));
        }
        order.extend(a.file.iter().cloned().map(ScriptArg::File));
    } else {
        order.extend(a.script_order.iter().cloned());
    }
    let mut set = ScriptSet::new();
    for arg in &order {
        match arg {
            ScriptArg::Builtin(spec) => {
                let (b, w) = tpcb::parse_weighted(spec).map_err(|e| usage(e.to_string()))?;
                if protocol == Protocol::Simple && !b.supports(QueryMode::Simple) {
                    return Err(Failure::usage(
                        format!(
                            "-b {b} pipelines its statements, which the simple protocol cannot"
                        ),
                        "add -M extended or -M prepared",
                    ));
                }
                set.add_builtin(b, w);
            }
            ScriptArg::File(spec) => {
                let (path, w) = parse_file_weight(spec)?;
                let text = if path == "-" {
                    let mut t = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
                        .context("-f -: cannot read the script from standard input")?;
                    t
                } else {
                    std::fs::read_to_string(path).map_err(|e| {
                        Failure::usage(
                            format!("could not open file \"{path}\": {e}"),
                            "check the path given to -f",
                        )
                    })?
                };
                // pgbench's syntax_error: file:line:column, the line, a caret.
                set.add_file(path, &text, w)
                    .map_err(|e| usage(e.to_string()))?;
            }
        }
    }
    if set.is_empty() {
        set.add_builtin(Builtin::TpcbLike, 1);
    }
    if set.weights().iter().all(|w| *w == 0) {
        return Err(usage("total script weight must not be zero".into()));
    }
    Ok(set)
}

/// `-f FILE[@W]` as pgbench's `parseScriptWeight`: the weight after the last `@` (an integer in
/// 0..=INT_MAX), default 1.
fn parse_file_weight(spec: &str) -> Result<(&str, u32)> {
    match spec.rsplit_once('@') {
        None => Ok((spec, 1)),
        Some((path, w)) => {
            let n: i64 = w
                .parse()
                .map_err(|_| usage(format!("invalid weight specification: @{w}")))?;
            if !(0..=i32::MAX as i64).contains(&n) {
                return Err(usage(format!(
                    "weight specification out of range (0 .. {}): {n}",
                    i32::MAX
                )));
            }
            Ok((path, n as u32))
        }
    }
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)> {
        let compiled = a.compiled.take();
        let (job, spec) = plan(a, asked.name, compiled)?;
        let runner = super::Runner::new(job, asked.frontend);
        Ok((Job::Engine(Box::new(runner)), spec))
    }
}
