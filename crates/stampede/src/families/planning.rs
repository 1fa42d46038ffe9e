//! What every family's plan step reads the same way from `run`'s options: `-c`/`-j`, `-t`/`-T`,
//! `-M` for parameter-sending workloads, `-R`/`-L`, `--max-tries` where failures are retried,
//! `--random-seed`, and the engine spec built from them ([`common_spec`], [`family_spec`]).
//! Below the families, so that each family's own plan step (`<family>/plan.rs`) uses them
//! without reaching up into `plan`.

use std::time::Duration;

use anyhow::Result;
use engine::RunSpec;

use crate::console::Failure;
use crate::families::RunArgs;

/// The engine's spec with what every family reads the same way from `run`'s options (`-j`
/// capped at the clients, -P, -r, -C, --exit-on-abort, --io, --verbose-errors, --spread,
/// --read-from) and neutral values for the rest, which each family then sets with struct update
/// syntax (`RunSpec { rate_tps, mode, .. common_spec(a, clients, jobs, stop) }`): a field added
/// to the spec is defaulted here once.
pub(crate) fn common_spec(a: &RunArgs, clients: u32, jobs: u32, stop: engine::Stop) -> RunSpec {
    RunSpec {
        connect_per_txn: a.connect,
        progress: tick(a.progress.filter(|p| *p > 0.0)),
        per_statement: a.report_per_command,
        exit_on_abort: a.exit_on_abort,
        io: a.io.mode(),
        verbose_errors: a.verbose_errors,
        spread: a.spread.spread(),
        read_from: a.read_from.map(crate::families::ReadFromArg::read_from),
        // pgbench: more threads than clients is pointless; it uses one per client.
        ..RunSpec::new(clients, jobs.min(clients), stop, sut::QueryMode::Prepared)
    }
}

/// The engine ticks at least every second so the result always holds a time series (for the
/// JSON, the HTML charts, comparisons, the warm-up cut); `-P` only decides what is printed.
pub fn tick(progress_s: Option<f64>) -> Option<Duration> {
    Some(Duration::from_secs_f64(
        progress_s.map_or(1.0, |p| p.min(1.0)),
    ))
}

/// `-c` and `-j` of a family whose runs default both to 1: each at least 1.
pub(crate) fn clients_and_jobs(a: &RunArgs) -> Result<(u32, u32)> {
    let (clients, jobs) = (a.clients.unwrap_or(1), a.jobs.unwrap_or(1));
    if clients < 1 {
        return Err(Failure::usage("-c/--client must be at least 1", ""));
    }
    if jobs < 1 {
        return Err(Failure::usage("-j/--jobs must be at least 1", ""));
    }
    Ok((clients, jobs))
}

/// `-t N` or `-T S` (one of them, each at least 1); `-T 10` when neither is given.
pub(crate) fn stop_rule(a: &RunArgs) -> Result<engine::Stop> {
    use engine::Stop;
    let bad = |why: &str| Err(Failure::usage(why, ""));
    match (a.transactions, a.time) {
        (Some(_), Some(_)) => bad("-t and -T: give one of them"),
        (Some(0), None) => bad("-t/--transactions must be at least 1"),
        (Some(t), None) => Ok(Stop::Transactions(t)),
        (None, Some(0)) => bad("-T/--time must be at least 1"),
        (None, t) => Ok(Stop::Duration(Duration::from_secs(t.unwrap_or(10)))),
    }
}

/// `-M` of a workload that sends its values as parameters: `-M simple` cannot carry them.
pub(crate) fn parameter_mode(a: &RunArgs, what: &str) -> Result<sut::QueryMode> {
    let mode = a.protocol.map_or(sut::QueryMode::Prepared, |p| p.mode());
    if mode == sut::QueryMode::Simple {
        return Err(Failure::usage(
            format!("{what} sends its keys and values as parameters: -M simple cannot carry them"),
            "use -M prepared (the default) or -M extended",
        ));
    }
    Ok(mode)
}

/// `--max-tries` where failed transactions are retried by default: unlimited under `-T`, a
/// million under `-t` (so that a run of N transactions ends); `0` only with `-T`.
pub(crate) fn retrying_max_tries(a: &RunArgs, stop: engine::Stop) -> Result<u32> {
    use engine::Stop;
    match (a.max_tries, stop) {
        (None, Stop::Duration(_)) => Ok(0),
        (None, Stop::Transactions(_)) => Ok(1_000_000),
        (Some(0), Stop::Transactions(_)) => Err(Failure::usage(
            "--max-tries=0 (unlimited) needs -T, or the run might never end",
            "",
        )),
        (Some(n), _) => Ok(n),
    }
}

/// A family's spec from what its plan step read, with the run's seed and the common rest
/// (`common_spec`); an I/O mode the engine cannot drive so is a usage error.
pub(crate) fn family_spec(
    a: &RunArgs,
    (clients, jobs, stop): (u32, u32, engine::Stop),
    mode: sut::QueryMode,
    (rate_tps, latency_limit): (Option<f64>, Option<Duration>),
    max_tries: u32,
) -> Result<RunSpec> {
    let spec = RunSpec {
        rate_tps,
        latency_limit,
        mode,
        max_tries,
        seed: parse_seed(a.random_seed.as_deref())?,
        ..common_spec(a, clients, jobs, stop)
    };
    engine::check_io(spec.io, spec.connect_per_txn).map_err(|e| Failure::usage(e, ""))?;
    Ok(spec)
}

/// `-R` and `-L` (positive when given), into the spec's rate and latency limit.
pub(crate) fn rate_and_limit(a: &RunArgs) -> Result<(Option<f64>, Option<Duration>)> {
    let rate = positive(a.rate, "-R/--rate")?;
    let limit = positive(a.latency_limit, "-L/--latency-limit")?;
    Ok((rate, limit.map(|ms| Duration::from_secs_f64(ms / 1000.0))))
}

/// A value that must be positive and finite, or absent.
pub fn positive(v: Option<f64>, flag: &str) -> Result<Option<f64>> {
    match v {
        Some(x) if !(x > 0.0 && x.is_finite()) => Err(Failure::usage(
            format!("{flag} must be positive, got {x}"),
            "",
        )),
        v => Ok(v),
    }
}

/// pgbench's `--random-seed`: `time` (the default), `rand`, or an unsigned integer.
pub fn parse_seed(s: Option<&str>) -> Result<u64> {
    use std::time::SystemTime;
    match s.unwrap_or("time") {
        "time" => Ok(SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)),
        "rand" => {
            let mut buf = [0u8; 8];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
                .map_err(|e| {
                    Failure::setup(
                        format!("--random-seed=rand: cannot read /dev/urandom: {e}"),
                        "give an integer seed instead",
                    )
                })?;
            Ok(u64::from_ne_bytes(buf))
        }
        n => n.parse::<u64>().map_err(|_| {
            Failure::usage(
                format!(
                    "--random-seed must be \"time\", \"rand\" or an unsigned integer, got {n:?}"
                ),
                "",
            )
        }),
    }
}

/// The engine's spec of a workload whose statements are each their own autocommitted
/// transaction (iibench, the CRUD mix): the simple protocol is allowed (values are
/// interpolated), and a transaction that meets a deadlock or a serialization failure is tried
/// again with the same values (unlimited under `-T`, as for TPC-C; `--max-tries` caps it), so
/// the counts the checks rely on are those of committed statements.
pub(crate) fn statement_spec(
    a: &RunArgs,
    name: &str,
    clients: u32,
    weights: Vec<u32>,
) -> Result<RunSpec> {
    not_a_script(a, name, None)?;
    no_log(a, name)?;
    let jobs = a.jobs.unwrap_or(1);
    if jobs < 1 {
        return Err(Failure::usage("-j/--jobs must be at least 1", ""));
    }
    let stop = stop_rule(a)?;
    let (rate, limit) = rate_and_limit(a)?;
    let max_tries = retrying_max_tries(a, stop)?;
    let mode = a.protocol.map_or(sut::QueryMode::Prepared, |p| p.mode());
    let mut spec = family_spec(a, (clients, jobs, stop), mode, (rate, limit), max_tries)?;
    spec.weights = weights;
    Ok(spec)
}

/// A workload of its own (not pgbench's scripts): pgbench's workload options are refused, and
/// `-D`, `-s` and `--show-script` too (`size`: how this workload is sized instead).
pub(crate) fn not_a_script(a: &RunArgs, name: &str, size: Option<&str>) -> Result<()> {
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        return Err(Failure::usage(
            format!("{name} is the workload: -b, -f, -N and -S cannot be added to it"),
            "",
        ));
    }
    if !a.define.is_empty() || a.scale.is_some() || a.show_script.is_some() {
        let size = size.map_or(String::new(), |s| format!(" ({s})"));
        return Err(Failure::usage(
            format!("-D, -s and --show-script do not apply to {name}{size}"),
            "",
        ));
    }
    Ok(())
}

/// `--log` (pgbench's per-transaction log), which only pgbench's scripts write.
pub(crate) fn no_log(a: &RunArgs, name: &str) -> Result<()> {
    if a.log {
        return Err(Failure::usage(
            format!("--log is not supported for {name}; the JSON result holds every interval"),
            "",
        ));
    }
    Ok(())
}
