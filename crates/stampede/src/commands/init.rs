//! `stampede init tpcb` (pgbench -i) and `stampede reset tpcb`: the loader's options from the
//! command line, a progress bar with rows/s and ETA on a terminal (a line every 5 s otherwise),
//! and pgbench's closing timing line.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use load::tpcb::{Generate, InitOptions, PartitionMethod};
use load::{Event, LoadError};
use target::{ConnConfig, Session};

use crate::cli::{InitArgs, PartitionMethod as CliMethod, ResetArgs};
use crate::commands::setup_runtime;
use crate::{interrupt, targeting};

/// Loader connections when `-j` is not given. An unpartitioned pgbench_accounts loads fastest
/// through one connection: a single COPY FREEZE in the transaction that created the table is the
/// only way to write frozen rows, and the VACUUM that parallel plain COPY needs afterwards costs
/// more than it saved (scale 50 on 2 cores: 1 connection 6.58 s, 2 connections 7.60 s, pgbench -i
/// 6.97 s; `cargo run --release -p load --example measure_load`). Partitions load in parallel,
/// each frozen, one connection per partition up to the CPU count.
fn default_jobs(partitions: u32) -> usize {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    (partitions as usize).clamp(1, cpus.max(1))
}

fn options(a: &InitArgs) -> Result<InitOptions> {
    if a.scale < 1 {
        bail!("-s/--scale must be at least 1");
    }
    if a.jobs == Some(0) {
        bail!("-j/--jobs must be at least 1");
    }
    if !(10..=100).contains(&a.fillfactor) {
        bail!(
            "--fillfactor must be between 10 and 100, got {}",
            a.fillfactor
        );
    }
    let opts = InitOptions {
        scale: a.scale,
        fillfactor: a.fillfactor,
        partitions: a.partitions,
        partition_method: (a.partitions > 0).then_some(match a.partition_method {
            CliMethod::Range => PartitionMethod::Range,
            CliMethod::Hash => PartitionMethod::Hash,
        }),
        unlogged: a.unlogged,
        foreign_keys: a.foreign_keys,
        no_vacuum: a.no_vacuum,
        generate: if a.server_side {
            Generate::ServerSide
        } else {
            Generate::ClientSide
        },
        jobs: a
            .jobs
            .map(|j| j as usize)
            .unwrap_or_else(|| default_jobs(a.partitions)),
        cancel: interrupt::flag(),
    };
    opts.validate()?;
    Ok(opts)
}

pub fn init(args: InitArgs) -> Result<i32> {
    if args.workload == crate::cli::InitWorkload::Oltp {
        return super::oltp::init(args);
    }
    let opts = options(&args)?;
    targeting::validate(&args.target)?;
    let rt = setup_runtime()?;
    let target = targeting::open(&args.target, args.quiet)?;
    if target.embedded.is_some() && !args.target.keep_server {
        eprintln!(
            "note: no target given, so this loads the embedded server, which is removed afterwards; \
             pass --keep-server to keep it, or use `stampede server start`"
        );
    }
    let r = load_tpcb(&target.conn, &opts, args.quiet, &rt);
    let closed = targeting::close(target, args.target.keep_server);
    let code = r?;
    closed?;
    Ok(code)
}

/// Load TPC-B on the embedded server before a run: the defaults plus `scale`.
pub fn load_tpcb_defaults(
    conn: &ConnConfig,
    scale: i64,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    let opts = InitOptions {
        scale,
        jobs: default_jobs(0),
        cancel: interrupt::flag(),
        ..Default::default()
    };
    opts.validate()?;
    match load_tpcb(conn, &opts, false, rt)? {
        0 => Ok(()),
        _ => bail!("interrupted while loading; nothing was measured"),
    }
}

/// Returns the exit code: 0, or 130 when interrupted (after the loader dropped what it created).
fn load_tpcb(
    conn: &ConnConfig,
    opts: &InitOptions,
    quiet: bool,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let mut view = LoadView::new(quiet);
    let r = rt.block_on(load::tpcb::init(conn, opts, &mut |e| view.event(e)));
    view.finish();
    match r {
        Ok(report) => {
            if report.freeze_refused {
                eprintln!("note: the server refused COPY FREEZE; the data was loaded without it");
            }
            eprintln!("{}", report.timings);
            Ok(0)
        }
        Err(LoadError::Interrupted) => {
            eprintln!("initialisation interrupted: no pgbench table is left looking loaded");
            Ok(130)
        }
        Err(e) => Err(e).context(format!("initialising TPC-B on {}", conn.redacted())),
    }
}

/// What the user sees while loading: pgbench's step lines, and during generation a progress bar
/// (terminal) or a line every 5 s (pipe, log file).
struct LoadView {
    quiet: bool,
    bar: Option<ProgressBar>,
    last_line: Instant,
}

impl LoadView {
    fn new(quiet: bool) -> Self {
        LoadView {
            quiet,
            bar: None,
            last_line: Instant::now(),
        }
    }

    fn event(&mut self, e: &Event<'_>) {
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

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

pub fn reset(args: ResetArgs) -> Result<i32> {
    if args.workload == crate::cli::InitWorkload::Oltp {
        bail!("reset oltp is not supported: run `stampede init oltp` again");
    }
    targeting::validate(&args.target)?;
    if targeting::wants_embedded(&args.target) {
        bail!(
            "reset needs a target (-h/-p/-U/-d or DBNAME): an embedded server is new and empty \
             every time"
        );
    }
    let conn = targeting::resolve_remote(&args.target)?;
    let rt = setup_runtime()?;
    let timings = rt.block_on(async {
        let mut s = Session::connect(&conn).await?;
        let r = load::tpcb::reset(&mut s, &mut |e| {
            if let Event::StepStarted(step) = e {
                eprintln!("{step}...");
            }
        })
        .await;
        s.close().await;
        anyhow::Ok(r?)
    })?;
    eprintln!("{timings}");
    Ok(0)
}
