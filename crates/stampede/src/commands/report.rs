//! `stampede report RUN.json -o report.html`: the HTML report of a saved run, rendered again
//! from the JSON alone (`report::html::render`), as `run --html` writes it at the end of a run;
//! with `--csv` and `--counters-csv`, its series as CSV (`report::render_csv`,
//! `report::render_counters_csv`).
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
    // Checked before the input is read. The HTML goes to `-o`, or to standard output when
    // neither `-o` nor a CSV is named (a CSV asked for alone is all that is wanted); at most one
    // output may be `-`.
    let html = match (&args.output, &args.csv, &args.counters_csv) {
        (Some(o), _, _) => Some(o.as_path()),
        (None, None, None) => Some(Path::new("-")),
        _ => None,
    };
    let mut requests = Vec::new();
    for (flag, path) in [
        ("-o", html),
        ("--csv", args.csv.as_deref()),
        ("--counters-csv", args.counters_csv.as_deref()),
    ] {
        if let Some(path) = path {
            let dash = if requests.iter().any(|r: &Request| r.path == Path::new("-")) {
                Dash::Refused("another output already goes to standard output")
            } else {
                Dash::Stdout
            };
            requests.push(Request { flag, path, dash });
        }
    }
    let outs = files::check(&requests, &[&args.input])?;
    let r = read_run(&args.input)?;
    for (req, out) in requests.iter().zip(&outs) {
        let text =
            match req.flag {
                "-o" => report::html::render(&r, Some(&args.input)),
                "--csv" => report::render_csv(&r),
                _ => match &r.server_metrics {
                    Some(m) => report::render_counters_csv(m),
                    None => return Err(Failure::usage(
                        format!(
                            "--counters-csv: {} has no server metrics (the run was not observed)",
                            args.input.display()
                        ),
                        "run with the observer on (no --no-observe) to keep the server's counters",
                    )),
                },
            };
        out.write_str(&text)
            .map_err(|e| Failure::setup(e.to_string(), ""))?;
        if !out.is_stdout() {
            let what = match req.flag {
                "-o" => "report",
                "--csv" => "interval CSV",
                _ => "counters CSV",
            };
            eprintln!("{what} written to {}", out.path().display());
        }
    }
    Ok(0)
}
