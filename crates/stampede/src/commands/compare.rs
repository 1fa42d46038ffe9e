//! `stampede compare A.json B.json [...]`: saved runs side by side, with a verdict per metric
//! that accounts for noise (`report::compare`, which owns the statistics and explains them).
//!
//! Owns the files: every input is read and checked before anything is printed, runs of
//! different workloads are refused unless `--force`, the table goes to stdout and `-o FILE`
//! writes the HTML page.

use anyhow::{bail, Result};
use report::compare::{self, Input, Options};

use crate::cli::CompareArgs;
use crate::commands::report::{read_run, write_output};

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
    if args.output.as_ref().is_some_and(|p| p.as_os_str() == "-") {
        bail!("-o -: the table already goes to standard output; give -o a file name");
    }
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
    let forced = match compare::check_comparable(&inputs) {
        Ok(()) => None,
        Err(why) if args.force => Some(why),
        Err(why) => bail!("{why}. Pass --force to compare them anyway."),
    };
    let options = Options {
        seed: args.seed,
        min_effect: args.min_effect / 100.0,
        warmup_s: args.warmup,
        ..Options::default()
    };
    let c = compare::compare(&inputs, &options, forced);
    print!("{}", compare::render_text(&c, &inputs));
    if let Some(path) = &args.output {
        write_output(Some(path), "-o", &compare::render_html(&c, &inputs))?;
        eprintln!("comparison written to {}", path.display());
    }
    Ok(0)
}
