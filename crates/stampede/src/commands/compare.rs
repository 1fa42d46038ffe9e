//! `stampede compare A.json B.json [...]`: saved runs side by side, with a verdict per metric
//! that accounts for noise (`report::compare`, which owns the statistics and explains them).
//!
//! Owns the files: every input is read and checked before anything is printed, runs of
//! different workloads are refused unless `--force`, the table goes to stdout and `-o FILE`
//! writes the HTML page. `--against-log`: one replay against its capture's own durations, per
//! statement (`report::compare::statements`).

use anyhow::{bail, Result};
use report::compare::{self, Input, Options};

use crate::cli::CompareArgs;
use crate::commands::report::read_run;
use crate::console::Failure;
use crate::files::{self, Dash, Request};

pub fn run(args: CompareArgs) -> Result<i32> {
    if !(args.min_effect >= 0.0 && args.min_effect < 1000.0) {
        bail!(
            "--min-effect must be a percentage of at least 0, got {}",
            args.min_effect
        );
    }
    if !(args.warmup >= 0.0 && args.warmup.is_finite()) {
        bail!("--warmup must be 0 or more seconds, got {}", args.warmup);
    }
    match (args.inputs.len(), args.against_log) {
        (1, true) | (2.., false) => {}
        (_, true) => {
            return Err(Failure::usage(
                "--against-log compares one replay's RUN.json with its own log, and got more",
                "give one replay result",
            ))
        }
        (_, false) => {
            return Err(Failure::usage(
                "compare needs two or more RUN.json files (or one replay with --against-log)",
                "give the baseline first, then the runs to compare with it",
            ))
        }
    }
    let read: Vec<&std::path::Path> = args.inputs.iter().map(|p| p.as_path()).collect();
    let requests: Vec<Request<'_>> = (args.output.iter())
        .map(|path| Request {
            flag: "-o",
            path,
            dash: Dash::Refused("standard output carries the table"),
        })
        .collect();
    let output = files::check(&requests, &read)?.pop();
    let runs = args
        .inputs
        .iter()
        .map(|p| read_run(p))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let inputs: Vec<Input<'_>> = names
        .iter()
        .zip(&runs)
        .map(|(name, run)| Input { name, run })
        .collect();
    let options = Options {
        seed: args.seed,
        min_effect: args.min_effect / 100.0,
        warmup_s: args.warmup,
        ..Options::default()
    };
    if args.against_log {
        let (name, run) = (&names[0], &runs[0]);
        let s = compare::statements::against_log(run, &options)
            .map_err(|why| Failure::usage(format!("{name}: {why}"), ""))?;
        println!("comparing the replay {name} with the durations its capture recorded:");
        print!("{}", compare::statements::render_text(&s));
        if let Some(out) = &output {
            out.write_str(&compare::statements::render_log_html(name, &s))
                .map_err(|e| Failure::setup(e.to_string(), ""))?;
            eprintln!("comparison written to {}", out.path().display());
        }
        return Ok(0);
    }
    let forced = match compare::check_comparable(&inputs) {
        Ok(()) => None,
        Err(why) if args.force => Some(why),
        Err(why) => bail!("{why}. Pass --force to compare them anyway."),
    };
    let c = compare::compare(&inputs, &options, forced);
    print!("{}", compare::render_text(&c, &inputs));
    if let Some(out) = &output {
        out.write_str(&compare::render_html(&c, &inputs))
            .map_err(|e| Failure::setup(e.to_string(), ""))?;
        eprintln!("comparison written to {}", out.path().display());
    }
    Ok(0)
}
