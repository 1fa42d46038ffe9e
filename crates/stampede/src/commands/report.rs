//! `stampede report RUN.json -o report.html`: the HTML report of a saved run, rendered again
//! from the JSON alone (`report::html::render`), as `run --html` writes it at the end of a run.
//!
//! Owns reading a saved result with errors that name the file and what is wrong with it
//! ([`read_run`], shared with `compare`), and where the page goes.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use report::RunResult;

use crate::cli::ReportArgs;

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

/// Write `text` to `output`, or to standard output when it is absent or `-`.
pub fn write_output(output: Option<&PathBuf>, flag: &str, text: &str) -> Result<()> {
    match output {
        Some(p) if p.as_os_str() != "-" => std::fs::write(p, text)
            .with_context(|| format!("{flag} {}: cannot write the file", p.display())),
        _ => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("cannot write to standard output")
        }
    }
}

pub fn run(args: ReportArgs) -> Result<i32> {
    let r = read_run(&args.input)?;
    write_output(
        args.output.as_ref(),
        "-o",
        &report::html::render(&r, Some(&args.input)),
    )?;
    if let Some(p) = args.output.as_ref().filter(|p| p.as_os_str() != "-") {
        eprintln!("report written to {}", p.display());
    }
    Ok(0)
}
