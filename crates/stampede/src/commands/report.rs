//! `stampede report RUN.json -o report.html`: the HTML report of a saved run, rendered again
//! from the JSON alone (`report::html::render`), as `run --html` writes it at the end of a run;
//! with `--sweep-csv FILE`, a sweep's steps as CSV too (`report::sweep::render_csv`).
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
    let mut requests = vec![Request {
        flag: "-o",
        path: args.output.as_deref().unwrap_or(Path::new("-")),
        dash: Dash::Stdout,
    }];
    if let Some(csv) = &args.sweep_csv {
        requests.push(Request {
            flag: "--sweep-csv",
            path: csv,
            dash: Dash::Refused("the HTML report goes there"),
        });
    }
    let mut outs = files::check(&requests, &[&args.input])?;
    let out = outs.remove(0);
    let r = read_run(&args.input)?;
    // The CSV of a sweep's steps (`report::sweep::render_csv`), refused for a run that is none.
    let csv = match (outs.pop(), &r.sweep) {
        (Some(o), Some(s)) => Some((o, report::sweep::render_csv(s))),
        (Some(_), None) => {
            return Err(Failure::usage(
                format!(
                    "--sweep-csv: {} is not a sweep's result",
                    args.input.display()
                ),
                "give the result of `stampede run --sweep ... --json FILE`",
            ))
        }
        (None, _) => None,
    };
    out.write_str(&report::html::render(&r, Some(&args.input)))
        .map_err(|e| Failure::setup(e.to_string(), ""))?;
    if !out.is_stdout() {
        eprintln!("report written to {}", out.path().display());
    }
    if let Some((o, text)) = csv {
        o.write_str(&text)
            .map_err(|e| Failure::setup(e.to_string(), ""))?;
        eprintln!("sweep steps written to {}", o.path().display());
    }
    Ok(0)
}
