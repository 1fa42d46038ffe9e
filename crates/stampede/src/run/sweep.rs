//! `--sweep`: one plan run once per value of a parameter, on one target, into one result; with
//! two `--sweep`s, once per pair of values (a matrix: every inner value at each outer value, the
//! outer value's setting or scale applied once before its steps).
//!
//! Each step is a run of its own ([`super::measure`]: its own commit baseline, engine run and
//! checks) with the step's spec: `clients` sets -c (and no more engine threads than clients),
//! `rate` sets -R, `set:NAME` changes the setting on the embedded server before the step
//! (`ALTER SYSTEM` and a reload; a setting that needs a restart is refused before the first
//! step, and the setting is reset after the last), `scale` drops and loads the family's tables
//! at that scale before the step, as `stampede init` does (`Family::rescale`; the step keeps
//! each table's rows as the server counts them). Otherwise the tables are loaded once, before
//! the first step. Each step's own series (its observer's counters, its checks, the family's
//! figures: `report::sweep::StepSeries`) is read from that step's result alone. The result is the last step's, with `sweep` holding every step's figures after its
//! warm-up and the knee (`report::sweep`), every step's failures, aborted clients and failed
//! checks on its row, and every step's checks, named by step. A step whose clients aborted
//! makes the sweep's exit status 2 as a single run's would, whichever step it was (the result's
//! own `connections` are the last step's). A Ctrl-C ends the sweep after the step it
//! interrupts, with the steps done.

use anyhow::{Context, Result};
use report::{Check, RunResult};

use super::{measure, output, Ctx, Family};
use crate::console::{self, Failure};
use crate::interrupt;
use crate::plan::sweep::{Param, SweepSpec};

/// Run every step, then print and save the one result.
pub(crate) fn run(ctx: &Ctx, family: &mut dyn Family, sweep: &SweepSpec) -> Result<i32> {
    let setting = (sweep.axes().into_iter()).find_map(|(p, _)| match p {
        Param::Setting(n) => Some(n.clone()),
        _ => None,
    });
    if let Some(name) = &setting {
        check_setting(ctx, name)?;
    }
    let parameter = sweep.parameter();
    // A sweep of one parameter is a matrix of one unnamed group.
    let groups: Vec<Option<&str>> = match &sweep.outer {
        Some(o) => o.values.iter().map(|v| Some(v.as_str())).collect(),
        None => vec![None],
    };
    let total = sweep.steps();
    let mut steps = Vec::new();
    let mut checks: Vec<Check> = Vec::new();
    let mut last: Option<RunResult> = None;
    let ran = (|| -> Result<()> {
        for group in groups {
            // The outer value's own preparation, once for its steps: a setting, or the tables
            // loaded at its scale.
            let mut group_rows = Default::default();
            if let (Some(o), Some(g)) = (&sweep.outer, group) {
                println!("sweep {}={g}", o.param.name());
                group_rows = prepare(ctx, family, &o.param, g)?;
            }
            for value in &sweep.values {
                let mut spec = ctx.spec.clone();
                if let (Some(o), Some(g)) = (&sweep.outer, group) {
                    shape(family, &mut spec, &o.param, g)?;
                }
                shape(family, &mut spec, &sweep.param, value)?;
                let name = match (&sweep.outer, group) {
                    (Some(o), Some(g)) => format!("{}={g}, {parameter}={value}", o.param.name()),
                    _ => format!("{parameter}={value}"),
                };
                println!("sweep step {}/{total}: {name}", steps.len() + 1);
                let rows = prepare(ctx, family, &sweep.param, value)?;
                let step_ctx = Ctx {
                    frontend: ctx.frontend,
                    spec: &spec,
                    out: ctx.out,
                    target: ctx.target,
                    rt: ctx.rt,
                };
                let r = measure(&step_ctx, family, steps.is_empty())?.result;
                let mut step = report::sweep::SweepStep::of(value, &r, sweep.warmup_s);
                step.group = group.map(str::to_string);
                step.own.rows = match sweep.param {
                    Param::Scale => rows,
                    _ => group_rows.clone(),
                };
                say_step(&name, &step, sweep.warmup_s);
                steps.push(step);
                checks.extend(r.checks.iter().map(|c| Check {
                    name: format!("{name}: {}", c.name),
                    status: c.status,
                    detail: c.detail.clone(),
                }));
                let interrupted = r.interrupted;
                last = Some(r);
                if interrupted || interrupt::requested() {
                    return Ok(());
                }
            }
        }
        Ok(())
    })();
    if let Some(name) = &setting {
        // The embedded server may be a kept one (`stampede server start`): leave it as found.
        if let Err(e) = reset_setting(ctx, name) {
            console::warning(&format!(
                "--sweep set:{name}: could not reset the setting: {e:#}"
            ));
        }
    }
    ran?;
    let Some(mut result) = last else {
        return Err(Failure::setup("the sweep ran no step", ""));
    };
    result.interrupted |= steps.len() < total;
    result.checks = checks;
    // Analytic clients add load beside the clients measured: no count of theirs is a point
    // where the run stops scaling (the steps' OLTP latency is the figure, `ch::section`).
    let (knee, group_knees) = match sweep
        .axes()
        .iter()
        .any(|(p, _)| **p == Param::AnalyticClients)
    {
        true => (None, Vec::new()),
        false => report::sweep::find_knees(&steps),
    };
    result.sweep = Some(report::sweep::SweepSection {
        parameter,
        group_parameter: sweep.outer.as_ref().map(|o| o.param.name()),
        warmup_s: sweep.warmup_s,
        knee,
        group_knees,
        steps,
    });
    output::emit(ctx, &result)
}

/// What a value sets in the step's engine spec: the family's own reading of it
/// (`Family::shape_step`), or -c (and no more engine threads than clients) or -R; the other
/// parameters act on the server (`prepare`).
fn shape(
    family: &mut dyn Family,
    spec: &mut engine::RunSpec,
    param: &Param,
    value: &str,
) -> Result<()> {
    if family.shape_step(param, value, spec)? {
        return Ok(());
    }
    match param {
        Param::Clients => {
            let c: u32 = value.parse().context("a sweep's clients")?;
            spec.clients = c;
            spec.threads = spec.threads.min(c).max(1);
        }
        Param::Rate => spec.rate_tps = Some(value.parse().context("a sweep's rate")?),
        Param::Scale | Param::Setting(_) => {}
        // Refused when planning for a family that does not read it (`Family::sweep_refusal`).
        Param::AnalyticClients => anyhow::bail!("this workload has no analytic clients"),
    }
    Ok(())
}

/// What a value does to the server before its step(s): a setting applied, or the family's
/// tables loaded again at a scale, as `stampede init` would (each table's rows as the server
/// counts them); nothing for clients and rate.
fn prepare(
    ctx: &Ctx,
    family: &mut dyn Family,
    param: &Param,
    value: &str,
) -> Result<std::collections::BTreeMap<String, u64>> {
    match param {
        Param::Scale => {
            let scale: u32 = value.parse().context("a sweep's scale")?;
            eprintln!("  re-initialising the tables at scale {scale}");
            family.rescale(ctx, scale)
        }
        Param::Setting(name) => {
            apply_setting(ctx, name, value)?;
            Ok(Default::default())
        }
        Param::Clients | Param::Rate | Param::AnalyticClients => Ok(Default::default()),
    }
}

/// A step's line: its figures after the warm-up, the family's, and what went wrong.
fn say_step(name: &str, step: &report::sweep::SweepStep, warmup_s: f64) {
    let troubles = step.troubles();
    let figures = report::sweep::metrics_text(step);
    println!(
        "  {name}: {:.1} tps, p99 {:.3} ms (after the first {warmup_s} s), {} failures{}{}",
        step.tps,
        step.p99_ms,
        step.failures,
        if figures.is_empty() {
            String::new()
        } else {
            format!(", {figures}")
        },
        if troubles.is_empty() {
            String::new()
        } else {
            format!(", {}", troubles.join(", "))
        }
    );
}

/// A setting may be swept when the server has it and a reload applies it.
fn check_setting(ctx: &Ctx, name: &str) -> Result<()> {
    let context = ctx.with_session(async |s| {
        let rows = s
            .simple_query(&format!(
                "SELECT context FROM pg_settings WHERE name = {}",
                literal(name)
            ))
            .await?;
        Ok(rows.first().and_then(|r| r.first().cloned().flatten()))
    })?;
    match context.as_deref() {
        None => Err(Failure::usage(
            format!("--sweep set:{name}: the server has no setting {name:?}"),
            "SHOW ALL lists them",
        )),
        Some("postmaster") => Err(Failure::usage(
            format!(
                "--sweep set:{name}: {name} takes effect only at a server restart, which a sweep \
                 does not do"
            ),
            format!("run once per value with --set {name}=VALUE"),
        )),
        Some("internal") => Err(Failure::usage(
            format!("--sweep set:{name}: {name} cannot be changed"),
            "",
        )),
        Some(_) => Ok(()),
    }
}

/// A SQL string literal.
fn literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// `ALTER SYSTEM SET` and a reload, then wait until a new session starts with it: the
/// postmaster rereads the files on SIGHUP at its own pace, and a backend started after that
/// inherits the new load time (`pg_conf_load_time()`).
fn apply_setting(ctx: &Ctx, name: &str, value: &str) -> Result<()> {
    let before = ctx.with_session(async |s| {
        s.simple_query(&format!("ALTER SYSTEM SET {name} = {}", literal(value)))
            .await?;
        let rows = s
            .simple_query("SELECT pg_conf_load_time()::text, pg_reload_conf()")
            .await?;
        Ok(rows.first().and_then(|r| r.first().cloned().flatten()))
    });
    let before =
        before.map_err(|e| Failure::usage(format!("--sweep set:{name}={value}: {e:#}"), ""))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (loaded, shown) = ctx.with_session(async |s| {
            let rows = s
                .simple_query(&format!(
                    "SELECT pg_conf_load_time()::text, current_setting({})",
                    literal(name)
                ))
                .await?;
            let row = rows.into_iter().next().unwrap_or_default();
            Ok((
                row.first().cloned().flatten(),
                row.get(1).cloned().flatten().unwrap_or_default(),
            ))
        })?;
        if loaded != before {
            console::note(&format!("set {name} = {value} (the server shows {shown})"));
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(Failure::setup(
                format!(
                    "--sweep set:{name}={value}: the server did not reload its settings in 30 s"
                ),
                "",
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn reset_setting(ctx: &Ctx, name: &str) -> Result<()> {
    ctx.with_session(async |s| {
        s.simple_query(&format!("ALTER SYSTEM RESET {name}"))
            .await?;
        s.simple_query("SELECT pg_reload_conf()").await?;
        Ok(())
    })
}
