//! `stampede report RUN.json -o report.html`: the HTML report of a saved run, rendered again
//! from the JSON alone (`report::html::render`), as `run --html` writes it at the end of a run;
//! with `--csv`, `--counters-csv` and `--sweep-csv`, its series as CSV (`report::render_csv`,
//! `report::render_counters_csv`, a sweep's steps: `report::sweep::render_csv`).
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
    let csvs = [&args.csv, &args.counters_csv, &args.sweep_csv];
    let html = match &args.output {
        Some(o) => Some(o.as_path()),
        None if csvs.iter().all(|c| c.is_none()) => Some(Path::new("-")),
        None => None,
    };
    // Each output: its flag, what it is called once written, its path.
    let mut requests = Vec::new();
    let mut labels = Vec::new();
    for (flag, label, path) in [
        ("-o", "report", html),
        ("--csv", "interval CSV", args.csv.as_deref()),
        (
            "--counters-csv",
            "counters CSV",
            args.counters_csv.as_deref(),
        ),
        ("--sweep-csv", "sweep steps", args.sweep_csv.as_deref()),
    ] {
        // `files::check` refuses two outputs on standard output.
        if let Some(path) = path {
            labels.push(label);
            requests.push(Request {
                flag,
                path,
                dash: Dash::Stdout,
            });
        }
    }
    let outs = files::check(&requests, &[&args.input])?;
    let r = read_run(&args.input)?;
    // Everything is rendered before anything is written: a CSV the result cannot give is refused
    // with no file written.
    let mut texts = Vec::new();
    for req in &requests {
        texts.push(match req.flag {
            "-o" => report::html::render(&r, Some(&args.input)),
            "--csv" => report::render_csv(&r),
            "--counters-csv" => {
                match &r.server_metrics {
                    Some(m) => report::render_counters_csv(m),
                    None => return Err(Failure::usage(
                        format!(
                            "--counters-csv: {} has no server metrics (the run was not observed)",
                            args.input.display()
                        ),
                        "run with the observer on (no --no-observe) to keep the server's counters",
                    )),
                }
            }
            _ => match &r.sweep {
                Some(s) => report::sweep::render_csv(s),
                None => {
                    return Err(Failure::usage(
                        format!(
                            "--sweep-csv: {} is not a sweep's result",
                            args.input.display()
                        ),
                        "give the result of `stampede run --sweep ... --json FILE`",
                    ))
                }
            },
        });
    }
    for ((label, out), text) in labels.iter().zip(&outs).zip(texts) {
        out.write_str(&text)
            .map_err(|e| Failure::setup(e.to_string(), ""))?;
        if !out.is_stdout() {
            eprintln!("{label} written to {}", out.path().display());
        }
    }
    Ok(0)
}
