//! Loading from the command line's side: what a person sees while tables fill (pgbench's step
//! lines, a progress bar or a line every 5 s), and TPC-B's load as `stampede init` and a run on
//! the embedded server do it. Here in `families`, whose runners load the embedded server;
//! `commands` (`init`, `ycsb`), above it, use it too. `stampede init` watched like a run (the
//! observer, the rows per second, the `load` section of its result) is `observed`, `rows` and
//! `section`.

pub(crate) mod observed;
mod rows;
pub(crate) mod section;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use load::tpcb::InitOptions;
use load::{Event, LoadError};

use crate::console::{self, Failure};
use crate::interrupt;

/// Loader connections when `-j` is not given. An unpartitioned pgbench_accounts loads fastest
/// through one connection: a single COPY FREEZE in the transaction that created the table is the
/// only way to write frozen rows, and the VACUUM that parallel plain COPY needs afterwards costs
/// more than it saved (scale 50 on 2 cores: 1 connection 6.58 s, 2 connections 7.60 s, pgbench -i
/// 6.97 s; `cargo run --release -p load --example measure_load`). Partitions load in parallel,
/// each frozen, one connection per partition up to the CPU count.
pub(crate) fn default_jobs(partitions: u32) -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    (partitions as usize).clamp(1, cpus.max(1))
}

/// Load TPC-B on the embedded server before a run: the defaults plus `scale`.
pub fn load_tpcb_defaults(
    conn: &sut::Target,
    scale: i64,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    match load_tpcb_at(conn, scale, None, false, rt)? {
        0 => Ok(()),
        _ => Err(Failure::setup(
            "interrupted while loading; nothing was measured",
            "",
        )),
    }
}

/// `stampede init tpcb -s SCALE` with its defaults, partitioned as `partitions` says (a scale
/// sweep keeps the partitioning its first step found): the exit code, as [`load_tpcb`]'s.
pub(crate) fn load_tpcb_at(
    conn: &sut::Target,
    scale: i64,
    partitions: Option<(load::tpcb::PartitionMethod, u32)>,
    quiet: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let n = partitions.map_or(0, |p| p.1);
    let opts = InitOptions {
        scale,
        partitions: n,
        partition_method: partitions.map(|p| p.0),
        jobs: default_jobs(n),
        cancel: interrupt::flag(),
        ..Default::default()
    };
    opts.validate()?;
    load_tpcb(conn, &opts, quiet, rt)
}

/// Returns the exit code: 0, or 130 when interrupted (after the loader dropped what it created).
pub(crate) fn load_tpcb(
    conn: &sut::Target,
    opts: &InitOptions,
    quiet: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    load_tpcb_watched(conn, opts, quiet, rt, &mut |_| {})
}

/// [`load_tpcb`], each of the loader's events also given to `also` (`init`'s watcher).
pub(crate) fn load_tpcb_watched(
    conn: &sut::Target,
    opts: &InitOptions,
    quiet: bool,
    rt: &tokio::runtime::Runtime,
    also: &mut dyn FnMut(&Event<'_>),
) -> Result<i32> {
    let mut view = LoadView::new(quiet);
    let r = rt.block_on(load::tpcb::init(conn, opts, &mut |e| {
        view.event(e);
        also(e);
    }));
    view.finish();
    match r {
        Ok(report) => {
            if report.freeze_refused {
                console::note("the server refused COPY FREEZE; the data was loaded without it");
            }
            eprintln!("{}", report.timings);
            Ok(0)
        }
        Err(LoadError::Interrupted) => {
            console::note("initialisation interrupted: no pgbench table is left looking loaded");
            Ok(crate::console::EXIT_INTERRUPTED)
        }
        Err(e) => Err(e).context(format!("initialising TPC-B on {}", conn.redacted())),
    }
}

/// What the user sees while loading: pgbench's step lines, and during generation a progress bar
/// (terminal) or a line every 5 s (pipe, log file).
pub(crate) struct LoadView {
    quiet: bool,
    bar: Option<ProgressBar>,
    last_line: Instant,
}

impl LoadView {
    pub(crate) fn new(quiet: bool) -> Self {
        LoadView {
            quiet,
            bar: None,
            last_line: Instant::now(),
        }
    }

    pub(crate) fn event(&mut self, e: &Event<'_>) {
        match e {
            Event::StepStarted(step) => {
                if !self.quiet {
                    eprintln!("{step}...");
                }
            }
            Event::Rows { tables, elapsed } => {
                let done: u64 = tables.iter().map(|t| t.rows_done).sum();
                let total: u64 = tables.iter().map(|t| t.rows_total).sum();
                if self.quiet {
                    return;
                }
                let bar = self.bar.get_or_insert_with(|| {
                    let b = ProgressBar::new(total);
                    b.set_style(
                        ProgressStyle::with_template(
                            "{bar:40} {pos}/{len} rows ({percent}%) {per_sec} elapsed {elapsed} ETA {eta}",
                        )
                        .expect("static template"),
                    );
                    b
                });
                bar.set_length(total);
                bar.set_position(done);
                if bar.is_hidden() && self.last_line.elapsed() >= Duration::from_secs(5) {
                    self.last_line = Instant::now();
                    let secs = elapsed.as_secs_f64();
                    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
                    let remaining = if rate > 0.0 {
                        (total - done) as f64 / rate
                    } else {
                        0.0
                    };
                    eprintln!(
                        "{done} of {total} tuples ({}%) done (elapsed {secs:.2} s, remaining {remaining:.2} s, {rate:.0} rows/s)",
                        (done * 100).checked_div(total).unwrap_or(100)
                    );
                }
            }
            Event::StepFinished { .. } => {
                if let Some(b) = self.bar.take() {
                    b.finish_and_clear();
                }
            }
            Event::Notice(msg) => eprintln!("{msg}"),
        }
    }

    pub(crate) fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
