//! `stampede report RUN.json -o report.html`: the HTML report of a saved run, rendered again
//! from the JSON alone (`report::html::render`), as `run --html` writes it at the end of a run.
//!
//! Owns reading a saved result with errors that name the file and what is wrong with it
//! ([`read_run`], shared with `compare`), and where the page goes.

use std::path::Path;

use anyhow::{Context, Result};
use report::RunResult;

use crate::cli::ReportArgs;
use crate::console::Failure;
use crate::files::{self, Dash, Request};

/// Read a result written by `run --json`: a missing or unreadable file, a file that is not a
/// run result, and a result from an incompatible stampede each say so with the path.
pub fn read_run(path: &Path) -> Result<RunResult> {
    let f = std::fs::File::open(path)
        .with_context(|| format!("cannot read run result {}", path.display()))?;
    report::read_json(std::io::BufReader::new(f)).with_context(|| {
        format!(
            "{}: cannot use it (write one with `stampede run --json FILE`)",
            path.display()
        )
    })
}

pub fn run(args: ReportArgs) -> Result<i32> {
    // Checked before the input is read: `-o` absent or `-` is standard output.
    let out = files::check(
        &[Request {
            flag: "-o",
            path: args.output.as_deref().unwrap_or(Path::new("-")),
            dash: Dash::Stdout,
        }],
        &[&args.input],
    )?
    .remove(0);
    let r = read_run(&args.input)?;
    out.write_str(&report::html::render(&r, Some(&args.input)))
        .map_err(|e| Failure::setup(e.to_string(), ""))?;
    if !out.is_stdout() {
        eprintln!("report written to {}", out.path().display());
    }
    Ok(0)
}
