//! `stampede run`: pgbench's benchmarking mode.
//!
//! Order of work, each phase exported before the next can fail (hyperfine's habit): validate the
//! whole command line (no I/O); open the target (starting and loading the embedded server when no
//! target is given); read the environment and the data's scale; pgbench's pre-run vacuum; take
//! the check baselines; run the engine (progress on stderr); reconcile the checks; print the
//! summary on stdout and save the JSON. Ctrl-C during the run ends it cleanly with a partial
//! result, still printed and saved.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use engine::{Event, RunSpec, Stop};
use report::{Check, CheckStatus, RunResult};
use target::{QueryMode, Session};
use workload::tpcb::{self, Builtin, TpcbWorkload};
use workload::Workload;

use crate::checks::{self, TpcbCoverage};
use crate::cli::{Protocol, RunArgs};
use crate::commands::{init, setup_runtime};
use crate::{environment, interrupt, targeting};

/// Default scale for the embedded server when `-s` is not given: 1,000,000 accounts, ~150 MB,
/// loads in a few seconds and is large enough that tpcb-like's updates rarely collide.
const EMBEDDED_DEFAULT_SCALE: i64 = 10;

pub fn run(args: RunArgs) -> Result<i32> {
    if args.builtin.iter().any(|b| b == "list") {
        println!("{}", tpcb::available_list());
        return Ok(0);
    }
    if let Some(name) = &args.show_script {
        let b = tpcb::builtin(name)?;
        println!(
            "-- {}: {}\n{}",
            b.name(),
            b.description(),
            b.script().join("\n")
        );
        return Ok(0);
    }
    let plan = Plan::from_args(&args)?;
    targeting::validate(&args.target)?;

    let rt = setup_runtime()?;
    let target = targeting::open(&args.target, false)?;
    let outcome = run_on(&args, &plan, &target, &rt);
    let closed = targeting::close(target, args.target.keep_server);
    let code = outcome?;
    closed?;
    Ok(code)
}

/// Everything decided from the command line alone.
struct Plan {
    scripts: Vec<(Builtin, u32)>,
    spec: RunSpec,
    seed: u64,
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
        let scripts = select_scripts(a)?;
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
            progress: progress.map(Duration::from_secs_f64),
            seed,
            per_statement: a.report_per_command,
            weights: scripts.iter().map(|(_, w)| *w).collect(),
        };
        Ok(Plan {
            scripts,
            spec,
            seed,
        })
    }
}

/// `-b name[@weight]`, `-N`, `-S`, in the order given (pgbench's order of options); tpcb-like
/// when none.
fn select_scripts(a: &RunArgs) -> Result<Vec<(Builtin, u32)>> {
    let mut out = Vec::new();
    for spec in &a.builtin {
        out.push(tpcb::parse_weighted(spec)?);
    }
    if a.skip_some_updates {
        out.push((Builtin::SimpleUpdate, 1));
    }
    if a.select_only {
        out.push((Builtin::SelectOnly, 1));
    }
    if out.is_empty() {
        out.push((Builtin::TpcbLike, 1));
    }
    if out.iter().all(|(_, w)| *w == 0) {
        bail!("total script weight must not be zero");
    }
    let mode = a.protocol;
    if let Some((b, _)) = out
        .iter()
        .find(|(b, _)| mode == Protocol::Simple && !b.supports(QueryMode::Simple))
    {
        bail!("-b {b} pipelines its statements, which needs -M extended or -M prepared");
    }
    Ok(out)
}

/// pgbench's `--random-seed`: `time` (the default), `rand`, or an unsigned integer.
fn parse_seed(s: Option<&str>) -> Result<u64> {
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

fn coverage(scripts: &[(Builtin, u32)]) -> TpcbCoverage {
    let writes = |b: Builtin| scripts.iter().any(|(x, w)| *x == b && *w > 0);
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
    plan: &Plan,
    target: &targeting::Target,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let conn = &target.conn;
    if target.embedded.is_some() {
        let scale = args.scale.unwrap_or(EMBEDDED_DEFAULT_SCALE);
        init::load_tpcb_defaults(conn, scale, rt)?;
    }
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }

    // Environment, scale, pgbench's pre-run vacuum, check baselines.
    let (server, scale, sums_before) = rt.block_on(async {
        let mut s = Session::connect(conn).await?;
        let server = environment::server_info(&mut s).await?;
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
        let sums = if args.no_check { None } else { Some(checks::tpcb_sums(&mut s).await?) };
        s.close().await;
        anyhow::Ok((server, scale, sums))
    })?;

    let workload = Arc::new(TpcbWorkload::new(plan.scripts.clone(), scale as u32));
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
    let mut on_event = |e: Event<'_>| {
        if let Event::Progress(interval) = e {
            let style = report::ProgressStyle {
                rate_limited: spec.rate_tps.is_some(),
                latency_limited: spec.latency_limit.is_some(),
                max_tries: spec.max_tries,
            };
            eprintln!(
                "{}",
                report::render_progress(interval, interval.end_us as f64 / 1e6, &style)
            );
        }
    };
    let outcome = engine::run(
        spec,
        workload.clone(),
        conn,
        interrupt::flag(),
        &mut on_event,
    )
    .map_err(|e| anyhow::anyhow!(target::conninfo::redact(&format!("{e:#}"))))?;

    // Checks.
    let total = outcome.total.total();
    let mut check_list = Vec::new();
    if let Some(b) = baseline {
        let c = rt.block_on(b.finish(
            total.committed(),
            outcome.setup_commits,
            outcome.connections,
        ))?;
        check_list.push(Check {
            name: "commit count".into(),
            status: if c.passed {
                CheckStatus::Passed
            } else {
                CheckStatus::Failed
            },
            detail: c.detail,
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
            let writers: u64 = workload
                .txn_types()
                .iter()
                .enumerate()
                .filter(|(i, _)| plan.scripts[*i].0.inserts_history())
                .map(|(i, _)| outcome.total.txns[i].committed())
                .sum();
            let (ok, detail) = checks::check_tpcb(before, after, coverage(&plan.scripts), writers);
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
        None => check_list.push(skipped("TPC-B invariant", "--no-check")),
    }

    let result = build_result(
        args, plan, target, &server, scale, &workload, outcome, check_list,
    );
    print!("{}", report::render_text(&result));
    if let Some(path) = &args.json {
        let f = std::fs::File::create(path)
            .with_context(|| format!("--json {}: cannot create the file", path.display()))?;
        report::write_json(&result, std::io::BufWriter::new(f))
            .with_context(|| format!("--json {}: cannot write the result", path.display()))?;
        eprintln!("result saved to {}", path.display());
    }
    Ok(exit_code(&result))
}

fn skipped(name: &str, why: &str) -> Check {
    Check {
        name: name.into(),
        status: CheckStatus::Skipped,
        detail: format!("skipped ({why})"),
    }
}

fn exit_code(r: &RunResult) -> i32 {
    if r.interrupted {
        130
    } else if !r.connections.aborted.is_empty()
        || r.checks.iter().any(|c| c.status == CheckStatus::Failed)
    {
        2
    } else {
        0
    }
}

/// "PostgreSQL 15.18 (Debian ...) on x86_64..." -> "15.18".
fn short_version(v: &str) -> String {
    v.split_whitespace().nth(1).unwrap_or(v).to_string()
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

#[allow(clippy::too_many_arguments)]
fn build_result(
    args: &RunArgs,
    plan: &Plan,
    target: &targeting::Target,
    server: &environment::ServerInfo,
    scale: i64,
    workload: &TpcbWorkload,
    outcome: engine::Outcome,
    checks: Vec<Check>,
) -> RunResult {
    let spec = &plan.spec;
    let client = environment::client_info();
    let measured_duration_s = outcome.total.duration_s();
    RunResult {
        schema_version: report::SCHEMA_VERSION,
        stampede_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args()
            .map(|a| target::conninfo::redact(&a))
            .collect(),
        started_at: report::format_rfc3339_utc(outcome.started_at),
        measured_duration_s,
        config: report::RunConfig {
            workload: "tpcb".into(),
            txn_types: workload
                .txn_types()
                .iter()
                .zip(&plan.scripts)
                .map(|(t, (_, w))| report::TxnTypeConfig {
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
        },
        target: report::TargetInfo {
            conninfo: target.conn.redacted(),
            embedded: target.embedded.as_ref().map(|e| report::EmbeddedTarget {
                bin_dir: e.binaries().bindir.display().to_string(),
                settings: e.settings().iter().cloned().collect(),
            }),
        },
        environment: report::Environment {
            server: report::ServerEnvironment {
                version: server.version.clone(),
                version_num: Some(server.version_num),
                settings: server.settings.clone(),
            },
            client: report::ClientEnvironment {
                cpus: client.cpus as u32,
                cpu_model: Some(client.cpu_model),
                memory_bytes: Some(client.memory_bytes),
                os: client.os,
                hostname: client.hostname,
                stampede_version: env!("CARGO_PKG_VERSION").into(),
            },
        },
        connections: report::ConnectionStats {
            initial_connect_ms: outcome.connect_time.as_secs_f64() * 1000.0,
            clients: spec.clients,
            reconnect_total_ms: spec
                .connect_per_txn
                .then_some(outcome.reconnect_time.as_secs_f64() * 1000.0),
            aborted: outcome
                .aborted
                .iter()
                .map(|a| report::AbortedClient {
                    client_id: a.client_id,
                    reason: a.reason.clone(),
                })
                .collect(),
        },
        intervals: outcome.intervals,
        total: outcome.total,
        checks,
        interrupted: outcome.interrupted,
        server_metrics: None,
    }
}
