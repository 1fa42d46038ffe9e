//! A [`Plan`] carried out: the one sequence every run follows, whichever front end planned it
//! and whichever family of workloads it runs.
//!
//! Order of work, each phase exported before the next can fail (hyperfine's habit): open the
//! target (starting the embedded server when none is given, and loading the workload's tables
//! there); read the environment; the family's preparation (find the data and its size, pgbench's
//! pre-run vacuum, the baselines of the workload's own checks); the sizes (`sizes`); the commit
//! baseline; the header; the engine, with progress lines and the server watcher; the checks; the
//! sizes again; the result, printed and saved. Ctrl-C during the run ends it cleanly with a
//! partial result, still printed and saved.
//!
//! A family ([`Family`]: `pgbench` for the TPC-B builtins and scripts, `sysbench` for the OLTP
//! family) supplies only what differs: its tables, its preparation, how its transactions map to
//! server commits, its own checks and its part of the result. What is printed and how follows
//! the plan's front end (`output`).

pub(crate) mod fault;
mod faulted;
pub(crate) mod fleet_result;
mod member;
mod output;
mod prewarm;
mod result;
pub(crate) mod sizes;
mod split;
mod sweep;
mod verify;
pub(crate) mod voice;

use std::time::Instant;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use report::Check;
use sut::Dialect;

use crate::checks;
use crate::console::{self, Failure};
use crate::plan::sweep::Param;
use crate::plan::{Frontend, Plan};
use crate::runtime;
use crate::{environment, families, interrupt, targeting};

pub(crate) use crate::families::{after, skipped, Ctx, Family, Finish};

/// Carry out a plan: the process's exit code.
pub fn execute(plan: Plan) -> Result<i32> {
    let Plan {
        frontend,
        target: target_args,
        mut spec,
        job,
        out,
    } = plan;
    // Said on the worker threads as it happens, in order with a script's `--debug` trace.
    spec.say = Some(engine::Say(std::sync::Arc::new(move |e| {
        output::said(frontend, e)
    })));
    let mut family = match job {
        families::Job::Engine(f) => f,
        // Not an engine run: a sequence of its own (the cache curve).
        families::Job::Own(sequence) => return sequence.execute(target_args, out),
    };
    if targeting::names_mysql(&target_args) {
        if let Some((cause, todo)) = family.mysql_refusal() {
            return Err(Failure::usage(cause, todo));
        }
    }
    let rt = runtime::setup()?;
    let target = targeting::open(&target_args, frontend != Frontend::Native)?;
    let ctx = Ctx {
        frontend,
        spec: &spec,
        out: &out,
        target: &target,
        rt: &rt,
    };
    let outcome = match &out.sweep {
        Some(s) => sweep::run(&ctx, family.as_mut(), s),
        None => run_on(&ctx, family.as_mut()),
    };
    let closed = targeting::close(target, target_args.keep_server);
    let code = outcome?;
    closed?;
    Ok(code)
}

fn interrupted_before() -> anyhow::Error {
    Failure::interrupted("interrupted before the run started; nothing was measured")
}

/// The commit count's baseline, in the target's protocol.
enum Baseline {
    Pg(Box<checks::CommitBaseline>),
    /// Several PostgreSQL hosts: one baseline each (`checks::hosts`).
    PgHosts(checks::hosts::HostsBaseline),
    MySql(checks::mysql::MySqlBaseline),
}

fn run_on(ctx: &Ctx, family: &mut dyn Family) -> Result<i32> {
    let Measured { mut result, fleet } = measure(ctx, family, true)?;
    // A step after the result was saved and checked, which can only add (`cloud`).
    if let Some(req) = &ctx.out.cloudwatch {
        let conn = ctx.conn();
        let hosts: Vec<String> = (0..conn.endpoints())
            .filter_map(|i| conn.endpoint_name(i).map(|(h, _)| h))
            .collect();
        result.cloudwatch = Some(crate::cloud::fetch(
            ctx.rt,
            req,
            &hosts,
            &result.started_at,
            result.measured_duration_s,
            ctx.out.check_timeout,
        ));
    }
    match fleet {
        None => output::emit(ctx, &result),
        Some((joined, spec)) => {
            // Printed with the spec the member ran (its share of the fleet's rate, its client
            // ids), then stored for the fleet (module `member`).
            let ctx = &Ctx {
                spec: &spec,
                ..*ctx
            };
            let code = output::emit(ctx, &result)?;
            joined.finish(ctx, &result, code)
        }
    }
}

/// What [`measure`] gives back: the result, and for a fleet member its membership and the spec
/// it ran (the fleet's share), which its output and the fleet's merge need.
struct Measured {
    result: report::RunResult,
    fleet: Option<(member::Joined, engine::RunSpec)>,
}

/// One run, up to its assembled result: `first` says whether it is the first on this target
/// (the embedded server loads the workload's tables then; a sweep's later steps reuse them).
///
/// Everything before the engine may fail the run (nothing was measured yet). Once the engine
/// has returned, nothing may: the result is saved at once, and every later step runs under
/// `after::Steps`, whose failures become checks ("not verified: ...").
fn measure(ctx: &Ctx, family: &mut dyn Family, first: bool) -> Result<Measured> {
    split::check(ctx.spec, ctx.target)?;
    let conn = ctx.conn();
    // A scale sweep loads each step's tables itself (`sweep`).
    let rescaled =
        (ctx.out.sweep.as_ref()).is_some_and(|s| s.axes().iter().any(|(p, _)| **p == Param::Scale));
    if ctx.embedded() && first {
        if !rescaled {
            family.load_embedded(ctx)?;
        }
        if (ctx.out.observe || ctx.out.checks) && ctx.target.embedded.is_some() {
            // The embedded server preloads pg_stat_statements; its views need the extension in
            // the database (never created on a server stampede did not start): the observer's
            // top statements and the statement ledger's counts read them.
            ctx.with_session(async |s| {
                s.simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    .await?;
                Ok(())
            })
            .context("creating pg_stat_statements on the embedded server")?;
        }
    }
    if interrupt::requested() {
        return Err(interrupted_before());
    }
    let (server, started) = ctx
        .with_session(async |s| {
            let info = environment::server_info(s).await?;
            Ok((info, environment::server_started(s).await.ok().flatten()))
        })
        .map_err(|e| first_connection(ctx, e))?;
    // pgbench prints its version line before it reads the tables and vacuums; stampede's
    // header says the data's size, known after.
    if ctx.frontend != Frontend::Native {
        output::header(ctx, &server, "");
    }
    family.before(ctx)?;
    // The sizes before the run: before the commit count's baseline, whose session must see no
    // other session start (module `sizes`; which runs read them: `sizes::wanted`).
    let sizes_before = sizes::wanted(ctx).then(|| sizes::before(ctx));
    // --prewarm reads the tables before the commit baseline: its reads commit transactions of
    // their own, which the commit count must not see.
    let prewarmed = match &ctx.out.prewarm {
        Some(tables) if first => Some(prewarm::run(ctx, tables)?),
        _ => None,
    };
    // A fleet member meets the others now: after its own preparation, before anything the
    // fleet's commit check counts (module `member`).
    let mut joined = match &ctx.out.fleet {
        Some(plan) => Some(member::join(ctx, plan)?),
        None => None,
    };
    let fleet_spec = joined.as_ref().map(|j| j.spec(ctx.spec));
    let run_ctx = Ctx {
        spec: fleet_spec.as_ref().unwrap_or(ctx.spec),
        ..*ctx
    };
    let ctx = &run_ctx;
    // With several hosts each server counts only its own commits: they are counted host by
    // host (`checks::hosts`), as MySQL's nodes are (each counts its own clients' COMMITs).
    let several_hosts = conn.endpoints() > 1 && conn.dialect() == Dialect::Postgres;
    // A fault run's servers may restart or change roles: their counters are read as any
    // run's, and what did not survive makes the checks inconclusive, not failed (`commit`).
    let fault_run = ctx.spec.fault_run;
    let checked = ctx.out.checks && joined.is_none();
    // Autovacuum and autoanalyze commit transactions of their own, which the server counts with
    // the clients' (`checks::commit_status`): counted before the baseline, whose session must
    // see no other session start.
    let maintenance_before = match checked {
        true if conn.dialect() == Dialect::Postgres && !several_hosts => {
            Some(ctx.block_on(checks::maintenance_runs(conn))?)
        }
        _ => None,
    };
    let closed_before = measure::ledger::closed();
    let baseline = match (checked, conn.dialect()) {
        (true, Dialect::Postgres) if several_hosts => Some(Baseline::PgHosts(
            ctx.block_on(checks::hosts::commit_baseline(conn, true))?,
        )),
        (true, Dialect::Postgres) => Some(Baseline::Pg(Box::new(
            ctx.block_on(checks::commit_baseline(conn, true))?,
        ))),
        (true, Dialect::MySql) => Some(Baseline::MySql(
            ctx.block_on(checks::mysql::commit_baseline(conn, true))?,
        )),
        (false, _) => None,
    };
    if interrupt::requested() {
        return Err(interrupted_before());
    }
    if ctx.frontend == Frontend::Native {
        output::header(ctx, &server, family.describe().as_str());
    }

    // The observer starts after the commit baseline (which would count it as a foreign
    // session) and finishes before the checks; its own connections are reconciled like the
    // clients'.
    let observer = match ctx.out.observe {
        true => families::start_observer(conn),
        false => None,
    };
    let section = family.sysbench_section();
    let mut progress = output::Progress::new(ctx, section.as_ref());
    let injector = std::cell::RefCell::new(None);
    let mut on_event = |e: Event<'_>| match e {
        Event::Starting => {
            if let Some(h) = &observer {
                h.open_window();
            }
        }
        Event::Connected { .. } => {
            if let Some(f) = &ctx.out.fault {
                *injector.borrow_mut() = Some(fault::Injector::start(f.clone(), Instant::now()));
            }
            if let Some(h) = &observer {
                h.mark_start(Instant::now());
            }
            if ctx.out.progress_timestamp {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                progress.with_timestamps(now.as_secs_f64());
            }
        }
        Event::Progress(interval) => progress.tick(interval),
        // Said in place on the workers (`RunSpec::say`); here only for a spec without it.
        e @ (Event::Aborted(_) | Event::Notice(_) | Event::Info(_)) => {
            output::said(ctx.frontend, e)
        }
    };
    let replication = split::watch(ctx.spec, conn);
    if let Some(j) = &mut joined {
        j.mark_start();
    }
    // A result exists from here: a signal stops the engine, not the checks after it.
    interrupt::measuring();
    let ran = family.run(ctx, &mut on_event);
    let injected = injector.take().map(fault::Injector::finish);
    let mut steps = after::Steps::new(ctx.out.check_timeout, started);
    let mut check_list = Vec::new();
    // The rows still buffered go out now: a step of its own, which may fail like the checks.
    let fin = steps.run(ctx, "finishing the run", || family.finish(ctx));
    let outcome = ran.map_err(run_error)?;
    let history = &outcome.history;
    progress.finish(&outcome);
    let fin = fin.unwrap_or_else(|c| {
        check_list.push(c);
        Finish::default()
    });
    let server_metrics = observer.map(|h| h.finish());
    let replication = split::stop(replication);
    let observer_connections = server_metrics
        .as_ref()
        .map_or(0, |m| u64::from(m.cost.connections));
    let end_us = outcome.total.end_us;
    let started_at = outcome.started_at;

    // The result as measured, saved before any check can fail or hang.
    let mut result = assembled(ctx, family, &outcome, &fin, &server, server_metrics);
    result.prewarm = prewarmed;
    split::finish(replication.as_ref(), &mut result);
    result.sizes = sizes_before.into_iter().collect();
    if fault_run {
        let (s, _) = faulted::section(ctx, history, injected.as_ref(), end_us, None);
        result.failover = Some(s);
        // Clients move by design in a fault run: no spreading advice (`endpoints_advice`).
        result.endpoints_warning = None;
    }
    if ctx.out.sweep.is_none() {
        result.checks = vec![after::pending()];
        output::save(ctx, &result);
    }
    crate::failpoint::pause("pause-before-checks");

    // The commit count and the statement ledger, from the baseline's sessions.
    let mut ledger = None;
    let mut conflicts = None;
    match baseline {
        Some(b) => {
            let counted = verify::Counted {
                family: &*family,
                outcome: &outcome,
                fin: &fin,
                observer_connections,
                conn,
                server_metrics: result.server_metrics.as_ref(),
                watched: replication.as_ref(),
            };
            let verdicts = steps.run(ctx, "commit count", || {
                verify::commit(ctx, b, &counted, maintenance_before)
            });
            match verdicts {
                Ok(v) => {
                    check_list.push(v.commit);
                    conflicts = v.conflicts;
                    ledger = Some((v.ledger, closed_before));
                }
                Err(c) if fault_run => {
                    check_list.push(skipped(
                        "commit count",
                        &format!(
                            "a fault run, and the server's counters could not be read \
                                  after it ({})",
                            c.detail
                        ),
                    ));
                }
                Err(c) => {
                    let why = c.detail.strip_prefix("not verified: ").unwrap_or(&c.detail);
                    let ledger = after::unverified("statement ledger", why);
                    check_list.push(c);
                    check_list.push(ledger);
                }
            }
        }
        None if joined.is_some() && ctx.out.checks => check_list.push(skipped(
            "commit count",
            "a fleet member: the other processes commit on the same server; the fleet's commit \
             check counts them all (`stampede fleet report NAME`)",
        )),
        None => check_list.push(skipped("commit count", "--no-check")),
    }
    if let Some((read, closed_before)) = ledger {
        let statements = || (result.config.txn_types.iter()).flat_map(|t| &t.statements);
        let unreported = statements().any(|s| measure::ledger::writes_unreported(s));
        let windowed = conn.dialect() == Dialect::MySql
            && statements().any(|s| measure::ledger::uses_window_functions(s));
        let section = verify::ledger_section(
            ctx,
            family,
            &outcome,
            &fin,
            (read, unreported, windowed),
            closed_before,
        );
        let (status, detail) = section.status();
        let faulted = verify::faulted(ctx, &outcome);
        let status = match (faulted, status) {
            // A fault may restart or replace the server: a mismatch says nothing for sure.
            (true, report::CheckStatus::Failed) => report::CheckStatus::Skipped,
            (_, s) => s,
        };
        check_list.push(Check {
            name: "statement ledger".into(),
            status,
            detail: match (faulted, status) {
                (true, report::CheckStatus::Skipped) => {
                    format!("inconclusive in a fault run: {detail}")
                }
                _ => detail,
            },
        });
        result.ledger = Some(section);
    }
    check_list.extend(conflicts);
    if fault_run {
        let audited = match steps.run(ctx, "audit", || family.audit(ctx).transpose()) {
            Ok(a) => a.map(Ok),
            Err(c) => Some(Err(anyhow::anyhow!(c.detail))),
        };
        let (section, checks) = faulted::section(ctx, history, injected.as_ref(), end_us, audited);
        check_list.extend(checks);
        result.failover = Some(section);
    }
    // The fleet's commits: what this process's sessions committed, for the fleet's check, in
    // the server's counter's terms (as the single-run checks count them).
    let connections = outcome.connections + observer_connections + fin.connections;
    let fleet_commits = match conn.dialect() {
        Dialect::Postgres => member::SessionCommits {
            commits: family.counted_commits(&outcome, &fin) + outcome.setup_commits,
            connections,
            failed: 0,
            uncounted: None,
        },
        Dialect::MySql => {
            let expected = family.mysql_commits(&outcome, &fin);
            member::SessionCommits {
                commits: expected.unwrap_or(0),
                connections,
                failed: outcome.endpoint_failed_commits.iter().sum(),
                uncounted: expected.is_none().then(|| {
                    "its transactions are autocommitted statements, which MySQL's Com_commit \
                     does not count"
                        .to_string()
                }),
            }
        }
    };
    match &joined {
        // Other processes write the same tables: the workload's invariants hold for the
        // fleet, not for one process (`stampede check` after the fleet).
        Some(_) if ctx.out.checks => check_list.push(skipped(
            "workload checks",
            "a fleet member: check the fleet's data after it ran (`stampede check`)",
        )),
        Some(_) => {}
        None => match steps.run(ctx, "workload checks", || family.checks(ctx, &outcome)) {
            Ok(c) => check_list.extend(c),
            Err(c) if family.check_names().is_empty() => check_list.push(c),
            Err(c) => check_list.extend(family.check_names().iter().map(|&name| Check {
                name: name.into(),
                ..c.clone()
            })),
        },
    }
    // The sizes after the run: the last step, so no check counts its statements.
    if sizes::wanted(ctx) {
        result.sizes.push(sizes::after(ctx, &mut steps));
    }
    result.checks = check_list;
    // The family's section, made again: it may carry what the checks found (TPC-C's
    // consistency conditions), which the result saved when the engine stopped had empty.
    if let Some((key, section)) = family.section(&result) {
        result.sections.insert(key.into(), section);
    }
    let fleet = match joined {
        Some(j) => {
            result.fleet = Some(j.section(&result, started_at, fleet_commits));
            Some((j, fleet_spec.expect("a fleet member's spec")))
        }
        None => None,
    };
    Ok(Measured { result, fleet })
}

/// The result of a run as the engine left it: every family's sections, no checks yet.
fn assembled(
    ctx: &Ctx,
    family: &mut dyn Family,
    outcome: &Outcome,
    fin: &Finish,
    server: &environment::ServerInfo,
    server_metrics: Option<measure::server::ServerMetrics>,
) -> report::RunResult {
    let config = family.config(ctx);
    let sysbench = family.sysbench_result(outcome, fin);
    let mut result = result::assemble(
        config,
        result::Parts {
            target: ctx.target,
            server,
            outcome,
            checks: Vec::new(),
            server_metrics,
        },
        sysbench,
    );
    // --warmup leaves its intervals out of the figures (never out of the series, nor out of
    // the checks, which read `outcome`: the server's counters count the whole run), before the
    // family's section reads them; a sweep's steps are cut by the sweep (`sweep`).
    if ctx.out.sweep.is_none() {
        report::warmup::apply(&mut result, ctx.out.warmup_s);
    }
    let warmup_s = ctx
        .out
        .sweep
        .as_ref()
        .map_or(ctx.out.warmup_s, |s| s.warmup_s);
    result.steady_state = Some(report::steady::judge(&result.intervals, warmup_s));
    result.routing = family.routing();
    if let Some((key, section)) = family.section(&result) {
        result.sections.insert(key.into(), section);
    }
    result
}

/// The run's first connection failed: nothing can be measured. pgbench says libpq's words, then
/// "could not create connection for setup"; stampede says how to fix the target.
fn first_connection(ctx: &Ctx, e: anyhow::Error) -> anyhow::Error {
    let frontend = ctx.frontend;
    let Some(te) = e.downcast_ref::<sut::Error>() else {
        return e;
    };
    if !matches!(
        te,
        sut::Error::Connect { .. } | sut::Error::Auth { .. } | sut::Error::Db(_)
    ) {
        return e;
    }
    if frontend == Frontend::Pgbench {
        console::error(&sut::conninfo::redact(
            &voice::pgbench::libpq_connect_error(te, ctx.conn()),
        ));
        return Failure::setup("could not create connection for setup", "");
    }
    let todo = match te {
        sut::Error::Auth { .. } => "check the user and password (PGPASSWORD, ~/.pgpass)",
        sut::Error::Db(_) => "check the database name (-d) and the user's privileges",
        _ => "check that the server is running and the target (-h/-p/-d) is right",
    };
    Failure::setup(sut::conninfo::redact(&format!("{e:#}")), todo)
}

/// The engine's error, as the person reads it: a run that could not start is a setup failure
/// (exit 1), with what to do.
fn run_error(e: RunError) -> anyhow::Error {
    let text = sut::conninfo::redact(&format!("{e:#}"));
    match e {
        RunError::Invalid(_) => Failure::usage(text, ""),
        _ => Failure::setup(text, console::todo_for(&e).unwrap_or_default()),
    }
}
