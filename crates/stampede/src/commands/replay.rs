//! `stampede replay CAPTURE [options]`: `stampede run replay --capture CAPTURE` (the replay
//! family, `families::replay`), the capture given as the positional argument; and `stampede
//! replay parse LOG -o FILE`, which reads a log once into a replay file and prints what it
//! holds (pgreplay's parse statistics: sessions, statements by kind, the capture's length,
//! what was skipped and why) on stdout.

use std::time::Instant;

use anyhow::Result;

use crate::cli::{ReplayAction, ReplayArgs};
use crate::console::Failure;
use crate::families::replay::{capture, file, options::ParseArgs, record};
use crate::families::RunArgs;
use crate::files;
use crate::plan::{Frontend, Plan};
use crate::{runtime, targeting};

pub fn run(args: ReplayArgs) -> Result<i32> {
    match (args.action, args.capture_s, args.output) {
        (Some(ReplayAction::Parse(p)), _, _) => parse(p),
        (None, Some(seconds), Some(out)) => record(args.run, seconds, &out),
        _ => replay(args.run),
    }
}

/// `stampede replay --capture SECONDS -o FILE`: the target's workload recorded into a replay
/// file (`families::replay::record`); only the target and the capture's filters apply.
fn record(a: RunArgs, seconds: u64, output: &std::path::Path) -> Result<i32> {
    if a.workload.is_some() || a.positional_dbname.is_some() || a.replay.capture.is_some() {
        return Err(Failure::usage(
            "--capture records a workload: it takes no capture to replay",
            "`stampede replay --capture 60 -d TARGET -o FILE`, then `stampede replay FILE -d COPY`",
        ));
    }
    targeting::validate(&a.target)?;
    if targeting::wants_embedded(&a.target) {
        return Err(Failure::usage(
            "--capture records the workload of a server you name",
            "give the target with -d (a conninfo or URL) or -h/-p/-U",
        ));
    }
    let out = files::check(
        &[files::Request {
            flag: "-o",
            path: output,
            dash: files::Dash::Refused("the capture's statistics"),
        }],
        &[],
    )?
    .remove(0);
    let conn = targeting::resolve_remote(&a.target)?;
    let rt = runtime::setup()?;
    let t = Instant::now();
    let r = rt.block_on(record::record(&conn, seconds, &a.replay.read))?;
    if let Err(e) = out.write(|w| file::write_to(w, &r.capture)) {
        return Err(Failure::setup(e.to_string(), "").context("writing the replay file"));
    }
    print!("{}", capture::describe(&r.capture, r.format, t.elapsed()));
    println!(
        "recorded {:.1} s{} into {}",
        r.seconds,
        if r.interrupted { " (interrupted)" } else { "" },
        output.display()
    );
    Ok(if r.interrupted {
        crate::console::EXIT_INTERRUPTED
    } else {
        0
    })
}

fn replay(mut a: RunArgs) -> Result<i32> {
    if a.list.is_some() || a.show_script.is_some() {
        return Err(Failure::usage(
            "--list and --show-script belong to `stampede run`",
            "`stampede run --list`",
        ));
    }
    if a.positional_dbname.is_some() {
        return Err(Failure::usage(
            "`stampede replay` takes one positional argument, the capture",
            "give the target with -d (a conninfo or URL) or -h/-p/-U",
        ));
    }
    if let Some(c) = a.workload.take() {
        if a.replay.capture.is_some() {
            return Err(Failure::usage(
                "the capture is given twice (a positional CAPTURE and --capture)",
                "give it once",
            ));
        }
        a.replay.capture = Some(c.into());
    }
    a.workload = Some("replay".into());
    let plan = Plan::from_run(a, Frontend::Native)?;
    crate::run::execute(plan)
}

fn parse(p: ParseArgs) -> Result<i32> {
    // The output is checked before the log is read (a long parse must not end in "cannot
    // write"), and is never the log itself.
    let inputs: Vec<&std::path::Path> = p.log.iter().map(|l| l.as_path()).collect();
    let out = files::check(
        &[files::Request {
            flag: "-o",
            path: &p.output,
            dash: files::Dash::Refused("the parse statistics"),
        }],
        &inputs,
    )?
    .remove(0);
    let t = Instant::now();
    let (c, format) = match &p.log {
        Some(log) => capture::read_path(log, &p.read)?,
        None => {
            targeting::validate(&p.target)?;
            if !targeting::names_mysql(&p.target) {
                return Err(Failure::usage(
                    "--general-log-table reads MySQL's mysql.general_log: the target must be a \
                     mysql:// URL",
                    "-d mysql://user@host/db",
                ));
            }
            let conn = targeting::resolve_remote(&p.target)?;
            let rt = runtime::setup()?;
            rt.block_on(capture::read_general_log_table(&conn, &p.read))?
        }
    };
    let took = t.elapsed();
    if let Err(e) = out.write(|w| file::write_to(w, &c)) {
        return Err(Failure::setup(e.to_string(), "").context("writing the replay file"));
    }
    let bytes = std::fs::metadata(&p.output).map_or(0, |m| m.len());
    print!("{}", capture::describe(&c, format, took));
    println!("wrote {} ({bytes} bytes)", p.output.display());
    Ok(0)
}
