//! `stampede run`: pgbench's benchmarking mode.
//!
//! Order of work, each phase exported before the next can fail (hyperfine's habit): validate the
//! whole command line (no I/O); open the target (starting and loading the embedded server when no
//! target is given); read the environment and the data's scale; pgbench's pre-run vacuum; take
//! the check baselines; run the engine (progress on stderr); reconcile the checks; print the
//! summary on stdout and save the JSON. Ctrl-C during the run ends it cleanly with a partial
//! result, still printed and saved.
//!
//! Scripts: `-b` builtins and `-f` files mix in command-line order, as pgbench numbers them. Every
//! `-f` file is read and compiled, and every `-D` checked, before any connection opens: a bad
//! script exits 1 with `file:line:column`, the line and a caret. As in pgbench, a mix that uses a
//! builtin takes `:scale` from `pgbench_branches` (and needs the tables); a mix of files only takes
//! it from `-s` (default 1) and does not need them: the pre-run vacuum then ignores errors
//! (pgbench's `tryExecuteStatement`), and the TPC-B invariant is skipped ("custom scripts"),
//! since a custom script's writes are its own. The commit-count check stays; for custom scripts it
//! reconciles the server's count with the commits seen on the wire (a script transaction may
//! commit any number of server transactions).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use engine::{Event, RunSpec, Stop};
use report::{Check, CheckStatus, RunResult};
use target::{QueryMode, Session};
use workload::script::{builtin_text, parse_define, ScriptConfig, ScriptSet, ScriptWorkload};
use workload::tpcb::{self, Builtin, TpcbWorkload};
use workload::{TxnType, Workload};

use crate::checks::{self, TpcbCoverage};
use crate::cli::{Protocol, RunArgs, ScriptArg};
use crate::commands::result::{
    assemble_result, emit_result, short_version, skipped, start_observer, ResultParts,
};
use crate::commands::{init, oltp, setup_runtime};
use crate::{environment, interrupt, targeting};

/// Default scale for the embedded server when `-s` is not given: 1,000,000 accounts, ~150 MB,
/// loads in a few seconds and is large enough that tpcb-like's updates rarely collide.
const EMBEDDED_DEFAULT_SCALE: i64 = 10;

pub fn run(mut args: RunArgs) -> Result<i32> {
    engine::check_io(args.io.mode(), args.connect).map_err(anyhow::Error::msg)?;
    prepare_for_clients(&mut args)?;
    // `run oltp_read_write ...`: sysbench's workloads (commands/oltp.rs).
    if oltp::is_sysbench_test(args.target.positional_dbname.as_deref()) {
        return oltp::run(args);
    }
    oltp::reject_without_test(&args)?;
    if args.builtin.iter().any(|b| b == "list") {
        println!("{}", tpcb::available_list());
        return Ok(0);
    }
    if let Some(name) = &args.show_script {
        let b = tpcb::builtin(name)?;
        print!("-- {}: {}\n{}", b.name(), b.description(), builtin_text(b));
        return Ok(0);
    }
    let plan = Plan::from_args(&args)?;
    targeting::validate(&args.target)?;

    let rt = setup_runtime()?;
    let target = targeting::open(&args.target, false)?;
    let outcome = run_on(&args, plan, &target, &rt);
    let closed = targeting::close(target, args.target.keep_server);
    let code = outcome?;
    closed?;
    Ok(code)
}

/// What every run command (`run`, `run oltp_*`) needs for its clients before anything connects
/// or the embedded server starts: enough open files (raising the soft limit when allowed,
/// refusing with how to raise it otherwise; see `environment::ensure_fd_limit`), and an
/// embedded server that accepts them all (`max_connections` from `-c` unless `--set`, the rule
/// in `target::embedded::max_connections_for`).
fn prepare_for_clients(args: &mut RunArgs) -> Result<()> {
    let clients = args.clients.max(1);
    environment::ensure_fd_limit(clients, args.jobs.min(clients), "-c/--client")?;
    // The sysbench test name takes DBNAME's place: it names no server.
    let mut t = args.target.clone();
    if oltp::is_sysbench_test(t.positional_dbname.as_deref()) {
        t.positional_dbname = None;
    }
    let user_set = args.target.settings.iter().any(|kv| {
        kv.split_once('=')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("max_connections"))
    });
    let wanted = target::embedded::max_connections_for(clients);
    if targeting::wants_embedded(&t)
        && !user_set
        && wanted > target::embedded::max_connections_for(0)
    {
        args.target
            .settings
            .push(format!("max_connections={wanted}"));
    }
    Ok(())
}

/// Everything decided from the command line alone (script files read and compiled).
struct Plan {
    /// The builtin each script is (`None`: a `-f` file), in order.
    builtins: Vec<Option<Builtin>>,
    weights: Vec<u32>,
    /// The compiled scripts; taken when the workload is built.
    set: Option<ScriptSet>,
    defines: Vec<(String, String)>,
    spec: RunSpec,
    seed: u64,
}

impl Plan {
    /// Some script is a `-f` file.
    fn custom(&self) -> bool {
        self.builtins.iter().any(Option::is_none)
    }

    /// Some script is a builtin (pgbench's `internal_script_used`: `:scale` from the tables).
    fn uses_builtin(&self) -> bool {
        self.builtins.iter().any(Option::is_some)
    }
}

/// The workload a run drives. Builtin-only mixes run the compiled `TpcbWorkload`: the same
/// statements and random draws as the builtins' scripts (tests/scripts.rs compares them), for
/// fewer client instructions (select-only prepared, callgrind, 1 client: 4,157 instructions per
/// transaction compiled, 5,030 through the script interpreter; pgbench 6,148). Any `-f` file or
/// `-D` variable puts the whole mix on the interpreter, as pgbench numbers all scripts together.
enum Driven {
    Tpcb(Arc<TpcbWorkload>),
    Script(Arc<ScriptWorkload>),
}

impl Driven {
    fn txn_types(&self) -> &[TxnType] {
        match self {
            Driven::Tpcb(w) => w.txn_types(),
            Driven::Script(w) => w.txn_types(),
        }
    }

    fn run(
        &self,
        spec: &RunSpec,
        conn: &target::ConnConfig,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<engine::Outcome, engine::RunError> {
        match self {
            Driven::Tpcb(w) => engine::run(spec, w.clone(), conn, interrupt::flag(), on_event),
            Driven::Script(w) => engine::run(spec, w.clone(), conn, interrupt::flag(), on_event),
        }
    }
}

fn positive(v: Option<f64>, flag: &str) -> Result<Option<f64>> {
    match v {
        Some(x) if !(x > 0.0 && x.is_finite()) => bail!("{flag} must be positive, got {x}"),
        v => Ok(v),
    }
}

impl Plan {
    fn from_args(a: &RunArgs) -> Result<Plan> {
        if a.clients < 1 {
            bail!("-c/--client must be at least 1");
        }
        if a.jobs < 1 {
            bail!("-j/--jobs must be at least 1");
        }
        if a.time == Some(0) {
            bail!("-T/--time must be at least 1 second");
        }
        if a.transactions == Some(0) {
            bail!("-t/--transactions must be at least 1");
        }
        if a.scale.is_some_and(|s| s < 1) {
            bail!("-s/--scale must be at least 1");
        }
        let rate = positive(a.rate, "-R/--rate")?;
        let limit = positive(a.latency_limit, "-L/--latency-limit")?;
        let progress = positive(a.progress, "-P/--progress")?;
        if a.max_tries == 0 && a.time.is_none() {
            bail!("--max-tries=0 (unlimited) needs -T/--time, or the run might never end");
        }
        let log = log_spec(a)?;
        let defines = a
            .define
            .iter()
            .map(|d| parse_define(d).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        let set = select_scripts(a)?;
        let builtins = set.builtins();
        let weights = set.weights();
        let seed = parse_seed(a.random_seed.as_deref())?;
        let stop = match a.time {
            Some(t) => Stop::Duration(Duration::from_secs(t)),
            None => Stop::Transactions(a.transactions.unwrap_or(10)),
        };
        let spec = RunSpec {
            clients: a.clients,
            // pgbench: more threads than clients is pointless; it uses one per client.
            threads: a.jobs.min(a.clients),
            stop,
            rate_tps: rate,
            latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
            mode: match a.protocol {
                Protocol::Simple => QueryMode::Simple,
                Protocol::Extended => QueryMode::Extended,
                Protocol::Prepared => QueryMode::Prepared,
            },
            max_tries: a.max_tries,
            connect_per_txn: a.connect,
            // The engine ticks at least every second so the result always holds a time series
            // (for the JSON, the HTML charts, comparisons); `-P` only decides what is printed.
            progress: Some(Duration::from_secs_f64(
                progress.map_or(1.0, |p| p.min(1.0)),
            )),
            seed,
            per_statement: a.report_per_command,
            weights: weights.clone(),
            log,
            exit_on_abort: a.exit_on_abort,
            io: a.io.mode(),
        };
        Ok(Plan {
            builtins,
            weights,
            set: Some(set),
            defines,
            spec,
            seed,
        })
    }
}

/// `-l` and its options, validated as pgbench does (before any connection). The files are named
/// as pgbench names them: `PREFIX.PID` for the first thread, `PREFIX.PID.N` for thread N.
fn log_spec(a: &RunArgs) -> Result<Option<engine::LogSpec>> {
    if !a.log {
        if a.aggregate_interval.is_some() {
            bail!("--aggregate-interval needs -l/--log (aggregation is only done when logging)");
        }
        if a.sampling_rate.is_some() {
            bail!("--sampling-rate needs -l/--log (sampling is only done when logging)");
        }
        if a.log_prefix.is_some() {
            bail!("--log-prefix needs -l/--log");
        }
        return Ok(None);
    }
    if let Some(r) = a.sampling_rate {
        if !(r > 0.0 && r <= 1.0) {
            bail!("--sampling-rate must be greater than 0 and at most 1, got {r}");
        }
    }
    if let Some(n) = a.aggregate_interval {
        if n == 0 {
            bail!("--aggregate-interval must be at least 1 second");
        }
        if a.sampling_rate.is_some() {
            bail!(
                "--sampling-rate and --aggregate-interval cannot be used together (as in pgbench)"
            );
        }
        if let Some(t) = a.time {
            if t % n != 0 {
                bail!("-T/--time ({t}) must be a multiple of --aggregate-interval ({n})");
            }
        }
    }
    let prefix = a.log_prefix.as_deref().unwrap_or("pgbench_log");
    if prefix.is_empty() {
        bail!("--log-prefix must not be empty");
    }
    let pid = std::process::id();
    let threads = a.jobs.min(a.clients).max(1);
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

/// `-b name[@weight]`, `-N`, `-S` and `-f file[@weight]`, in the order given (pgbench's order of
/// options); tpcb-like when none. Files are read and compiled here, before any connection.
fn select_scripts(a: &RunArgs) -> Result<ScriptSet> {
    let order: Vec<ScriptArg> = if a.script_order.is_empty() {
        // Not parsed from argv (the default benchmark, tests): builtins, -N, -S, then files.
        let mut v: Vec<ScriptArg> = a.builtin.iter().cloned().map(ScriptArg::Builtin).collect();
        if a.skip_some_updates {
            v.push(ScriptArg::Builtin("simple-update".into()));
        }
        if a.select_only {
            v.push(ScriptArg::Builtin("select-only".into()));
        }
        v.extend(a.file.iter().cloned().map(ScriptArg::File));
        v
    } else {
        a.script_order.clone()
    };
    let mut set = ScriptSet::new();
    for arg in &order {
        match arg {
            ScriptArg::Builtin(spec) => {
                let (b, w) = tpcb::parse_weighted(spec)?;
                if a.protocol == Protocol::Simple && !b.supports(QueryMode::Simple) {
                    bail!(
                        "-b {b} pipelines its statements, which needs -M extended or -M prepared"
                    );
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
                    std::fs::read_to_string(path)
                        .with_context(|| format!("could not open file \"{path}\""))?
                };
                // pgbench's syntax_error: file:line:column, the line, a caret; exit 1.
                set.add_file(path, &text, w).map_err(anyhow::Error::msg)?;
            }
        }
    }
    if set.is_empty() {
        set.add_builtin(Builtin::TpcbLike, 1);
    }
    if set.weights().iter().all(|w| *w == 0) {
        bail!("total script weight must not be zero");
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
                .map_err(|_| anyhow::anyhow!("invalid weight specification: @{w}"))?;
            if !(0..=i32::MAX as i64).contains(&n) {
                bail!("weight specification out of range (0 .. {}): {n}", i32::MAX);
            }
            Ok((path, n as u32))
        }
    }
}

/// pgbench's `--random-seed`: `time` (the default), `rand`, or an unsigned integer.
pub(super) fn parse_seed(s: Option<&str>) -> Result<u64> {
    match s.unwrap_or("time") {
        "time" => Ok(SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)),
        "rand" => {
            let mut buf = [0u8; 8];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
                .context("--random-seed=rand: cannot read /dev/urandom")?;
            Ok(u64::from_ne_bytes(buf))
        }
        n => n.parse::<u64>().with_context(|| {
            format!("--random-seed must be \"time\", \"rand\" or an unsigned integer, got {n:?}")
        }),
    }
}

fn coverage(builtins: &[Option<Builtin>], weights: &[u32]) -> TpcbCoverage {
    let writes = |b: Builtin| {
        builtins
            .iter()
            .zip(weights)
            .any(|(x, w)| *x == Some(b) && *w > 0)
    };
    if writes(Builtin::SimpleUpdate) {
        TpcbCoverage::AccountsAndHistory
    } else if writes(Builtin::TpcbLike) || writes(Builtin::TpcbLikePipelined) {
        TpcbCoverage::Full
    } else {
        TpcbCoverage::ReadOnly
    }
}

fn run_on(
    args: &RunArgs,
    mut plan: Plan,
    target: &targeting::Target,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let conn = &target.conn;
    if target.embedded.is_some() {
        // For files only, -s is just the value of :scale (pgbench): load the default size.
        let scale = match plan.uses_builtin() {
            true => args.scale.unwrap_or(EMBEDDED_DEFAULT_SCALE),
            false => EMBEDDED_DEFAULT_SCALE,
        };
        init::load_tpcb_defaults(conn, scale, rt)?;
        // The embedded server preloads pg_stat_statements; the extension's views need it created
        // in the database (never done on a server stampede did not start).
        rt.block_on(async {
            let mut s = Session::connect(conn).await?;
            let r = s
                .simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .await;
            s.close().await;
            r
        })
        .context("creating pg_stat_statements on the embedded server")?;
    }
    let uses_builtin = plan.uses_builtin();
    let custom = plan.custom();
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }

    // Environment, scale, pgbench's pre-run vacuum, check baselines.
    let (server, scale, sums_before) = rt.block_on(async {
        let mut s = Session::connect(conn).await?;
        let server = environment::server_info(&mut s).await?;
        if !uses_builtin {
            // pgbench: custom scripts only; :scale is -s (default 1), the tables are optional.
            let scale = args.scale.unwrap_or(1);
            if !args.no_vacuum {
                eprint!("starting vacuum...");
                vacuum_tolerant(&mut s, args.vacuum_all).await;
                eprintln!("end.");
            }
            s.close().await;
            return anyhow::Ok((server, scale, None));
        }
        let scale = match load::tpcb::inspect(&mut s).await? {
            load::tpcb::TpcbTables::Present { scale, .. } => scale,
            load::tpcb::TpcbTables::Missing(table) => bail!(
                "table {table} does not exist in database {:?}: load it first with \
                 `stampede init tpcb -s N` (same target options)",
                conn.dbname
            ),
        };
        if let Some(asked) = args.scale {
            if target.embedded.is_none() && asked != scale {
                bail!(
                    "-s {asked} does not match the data: pgbench_branches has {scale} rows \
                     (scale {scale}); omit -s, or load scale {asked} with `stampede init tpcb -s {asked}`"
                );
            }
        }
        if !args.no_vacuum {
            eprint!("starting vacuum...");
            vacuum_before_run(&mut s, args.vacuum_all).await?;
            eprintln!("end.");
        }
        let sums = if args.no_check || custom {
            None
        } else {
            Some(checks::tpcb_sums(&mut s).await?)
        };
        s.close().await;
        anyhow::Ok((server, scale, sums))
    })?;

    let set = plan.set.take().expect("the scripts are compiled once");
    let workload = if plan.custom() || !plan.defines.is_empty() {
        Driven::Script(Arc::new(set.into_workload(&ScriptConfig {
            scale,
            seed: plan.seed,
            clients: plan.spec.clients,
            defines: plan.defines.clone(),
        })))
    } else {
        let builtins = plan.builtins.iter().flatten().copied();
        Driven::Tpcb(Arc::new(TpcbWorkload::new(
            builtins.zip(plan.weights.iter().copied()).collect(),
            scale as u32,
        )))
    };
    let baseline = if args.no_check {
        None
    } else {
        Some(rt.block_on(checks::commit_baseline(conn))?)
    };
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }

    println!(
        "stampede {} (server {})",
        env!("CARGO_PKG_VERSION"),
        short_version(&server.version)
    );
    let spec = &plan.spec;
    // The observer starts after the commit baseline (which would count it as a foreign session)
    // and finishes before the checks; its own connections are reconciled like the clients'.
    let observer = start_observer(conn, args.no_observe);
    // Progress lines every `-P` seconds, made of the engine's (shorter or equal) ticks.
    let print_every_us = args.progress.map(|p| (p * 1e6) as u64);
    let mut pending = measure::Interval::default();
    let mut on_event = |e: Event<'_>| {
        if let (Event::Connected { .. }, Some(h)) = (&e, &observer) {
            h.mark_start(std::time::Instant::now());
        }
        match &e {
            Event::Aborted(a) => eprintln!("error: {}", a.reason),
            Event::Notice(n) => eprintln!("{n}"),
            _ => {}
        }
        let (Event::Progress(interval), Some(every)) = (e, print_every_us) else {
            return;
        };
        pending.merge(interval);
        // A tick ending within 1 ms of the boundary completes the line (tick clocks jitter).
        if pending.end_us - pending.start_us + 1_000 < every {
            return;
        }
        let style = report::ProgressStyle {
            rate_limited: spec.rate_tps.is_some(),
            latency_limited: spec.latency_limit.is_some(),
            max_tries: spec.max_tries,
        };
        eprintln!(
            "{}",
            report::render_progress(&pending, pending.end_us as f64 / 1e6, &style)
        );
        pending = measure::Interval::default();
    };
    let outcome = workload
        .run(spec, conn, &mut on_event)
        .map_err(|e| anyhow::anyhow!(target::conninfo::redact(&format!("{e:#}"))))?;
    let server_metrics = observer.map(|h| h.finish());
    let observer_connections = server_metrics
        .as_ref()
        .map_or(0, |m| u64::from(m.cost.connections));

    // Checks.
    let total = outcome.total.total();
    let mut check_list = Vec::new();
    if let Some(b) = baseline {
        // A builtin commits once per committed transaction; a custom script any number of
        // times: count those on the wire.
        let committed = if custom {
            outcome.server_commits - outcome.setup_commits
        } else {
            total.committed()
        };
        let v = rt.block_on(b.verdict(
            committed,
            outcome.setup_commits,
            outcome.connections + observer_connections,
        ))?;
        check_list.push(match v {
            checks::CommitVerdict::Exact(c) => Check {
                name: "commit count".into(),
                status: if c.passed {
                    CheckStatus::Passed
                } else {
                    CheckStatus::Failed
                },
                detail: c.detail,
            },
            checks::CommitVerdict::Inconclusive(detail) => Check {
                name: "commit count".into(),
                status: CheckStatus::Skipped,
                detail,
            },
        });
    } else {
        check_list.push(skipped("commit count", "--no-check"));
    }
    match sums_before {
        Some(before) => {
            let after = rt.block_on(async {
                let mut s = Session::connect(conn).await?;
                let sums = checks::tpcb_sums(&mut s).await?;
                s.close().await;
                anyhow::Ok(sums)
            })?;
            let writers: u64 = plan
                .builtins
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_some_and(|b| b.inserts_history()))
                .map(|(i, _)| outcome.total.txns[i].committed())
                .sum();
            let (ok, detail) = checks::check_tpcb(
                before,
                after,
                coverage(&plan.builtins, &plan.weights),
                writers,
            );
            check_list.push(Check {
                name: "TPC-B invariant".into(),
                status: if ok {
                    CheckStatus::Passed
                } else {
                    CheckStatus::Failed
                },
                detail,
            });
        }
        None if custom => check_list.push(skipped("TPC-B invariant", "custom scripts")),
        None => check_list.push(skipped("TPC-B invariant", "--no-check")),
    }

    let result = build_result(
        args,
        &plan,
        target,
        &server,
        scale,
        workload.txn_types(),
        outcome,
        check_list,
        server_metrics,
    );
    emit_result(args, &result)
}

/// pgbench's pre-run vacuum (pgbench.c `doConnect` + "starting vacuum"): vacuum the small
/// tables and empty the history; with -v also vacuum accounts and history.
async fn vacuum_before_run(s: &mut Session, all: bool) -> Result<()> {
    let mut steps = vec![
        "VACUUM pgbench_branches",
        "VACUUM pgbench_tellers",
        "TRUNCATE pgbench_history",
    ];
    if all {
        steps.extend(["VACUUM ANALYZE pgbench_accounts", "VACUUM pgbench_history"]);
    }
    for sql in steps {
        s.simple_query(sql)
            .await
            .with_context(|| format!("pre-run vacuum: `{sql}` (skip it with -n)"))?;
    }
    Ok(())
}

/// The pre-run vacuum for custom scripts, as pgbench's `tryExecuteStatement`: an error (no
/// pgbench tables) is printed and ignored.
async fn vacuum_tolerant(s: &mut Session, all: bool) {
    let mut steps = vec![
        "vacuum pgbench_branches",
        "vacuum pgbench_tellers",
        "truncate pgbench_history",
    ];
    if all {
        steps.extend(["vacuum analyze pgbench_accounts", "vacuum pgbench_history"]);
    }
    for sql in steps {
        if let Err(e) = s.simple_query(sql).await {
            eprintln!("\n{e}\n(ignoring this error and continuing anyway)");
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_result(
    args: &RunArgs,
    plan: &Plan,
    target: &targeting::Target,
    server: &environment::ServerInfo,
    scale: i64,
    txn_types: &[TxnType],
    outcome: engine::Outcome,
    checks: Vec<Check>,
    server_metrics: Option<measure::server::ServerMetrics>,
) -> RunResult {
    let spec = &plan.spec;
    let config = report::RunConfig {
        workload: if plan.custom() { "script" } else { "tpcb" }.into(),
        txn_types: txn_types
            .iter()
            .zip(&plan.weights)
            .map(|(t, w)| report::TxnTypeConfig {
                name: t.name.clone(),
                weight: *w,
                statements: t.statements.clone(),
            })
            .collect(),
        clients: spec.clients,
        threads: spec.threads,
        duration_s: args.time,
        transactions_per_client: match spec.stop {
            Stop::Transactions(n) => Some(n),
            Stop::Duration(_) => None,
        },
        rate_tps: spec.rate_tps,
        latency_limit_ms: args.latency_limit,
        query_mode: format!("{:?}", args.protocol).to_lowercase(),
        max_tries: spec.max_tries,
        connect_per_txn: spec.connect_per_txn,
        progress_s: args.progress,
        random_seed: plan.seed,
        per_statement: spec.per_statement,
        scale: scale as u32,
    };
    let parts = ResultParts {
        target,
        server,
        outcome,
        checks,
        server_metrics,
    };
    assemble_result(config, parts, None)
}
