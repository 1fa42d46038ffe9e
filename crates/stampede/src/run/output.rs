//! What a run prints, in its front end's conventions: the header, the progress lines, client
//! aborts as they happen, the summary, and the files; and the exit code.
//!
//! - stampede's own runs: a header naming the workload, the shape and the defaults used
//!   (standard output); pgbench-style progress lines with the interval's p99 (standard error);
//!   pgbench's summary block, stampede's additions, sysbench's blocks for its workloads and
//!   what the server did (standard output).
//! - `stampede pgbench`: what pgbench 18 prints, and nothing more: its version line, its
//!   progress lines, its summary, "Run was aborted" (`run::voice`).
//! - `stampede sysbench`: sysbench 1.0.20's banner, options block, progress lines (standard
//!   output, as sysbench prints them) and summary blocks.

use anyhow::Result;
use engine::Abort;
use report::{RunResult, SysbenchSection};

use super::Ctx;
use crate::console::{self, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNTRUSTED};
use crate::environment::short_version;
use crate::environment::ServerInfo;
use crate::plan::Frontend;

pub(super) fn header(ctx: &Ctx, server: &ServerInfo, describe: &str) {
    let spec = ctx.spec;
    match ctx.frontend {
        Frontend::Native => {
            let stop = match spec.stop {
                engine::Stop::Duration(d) => format!("{} s", d.as_secs()),
                engine::Stop::UNTIL_DONE => "until every client is done".to_string(),
                engine::Stop::Transactions(n) => format!("{n} transactions per client"),
            };
            let threads = engine::engine_threads(spec);
            let mut line = format!(
                "stampede {} (server {}): {describe}; {} client{} on {} thread{}, {stop}, {} protocol",
                env!("CARGO_PKG_VERSION"),
                short_version(&server.version),
                spec.clients,
                if spec.clients == 1 { "" } else { "s" },
                // One per client in threads mode (the I/O line says why).
                threads,
                if threads == 1 { "" } else { "s" },
                format!("{:?}", spec.mode).to_lowercase(),
            );
            if let Some(r) = spec.rate_tps {
                line.push_str(&format!(", -R {r}"));
            }
            println!("{line}");
            let defaulted = defaults_in_effect(ctx);
            if !defaulted.is_empty() {
                println!("defaults used: {}", defaulted.join(" "));
            }
        }
        Frontend::Pgbench => println!("{}", super::voice::pgbench::version_line(&server.version)),
        Frontend::Sysbench => {
            print!("{}", super::voice::sysbench::run_header(ctx.spec, ctx.out));
        }
    }
}

/// The defaults the header names: a sweep over clients sets -c and -j (no more threads than
/// clients) in each step, so the defaults it replaced are not in effect and not named.
fn defaults_in_effect<'a>(ctx: &'a Ctx<'a>) -> Vec<&'a str> {
    use crate::plan::sweep::Param;
    let sweeps_clients =
        (ctx.out.sweep.iter()).any(|s| s.axes().iter().any(|(p, _)| **p == Param::Clients));
    (ctx.out.defaulted.iter())
        .map(String::as_str)
        .filter(|d| !(sweeps_clients && (d.starts_with("-c ") || d.starts_with("-j "))))
        .collect()
}

/// Progress lines every `-P` seconds, made of the engine's (shorter or equal) ticks.
pub(super) struct Progress {
    every_us: Option<u64>,
    /// Intervals seen (the engine's ticks).
    ticks: usize,
    pending: measure::Interval,
    pgbench: report::ProgressStyle,
    sysbench: Option<(SysbenchSection, report::SysbenchProgress)>,
}

impl Progress {
    pub(super) fn new(ctx: &Ctx, section: Option<&SysbenchSection>) -> Progress {
        let spec = ctx.spec;
        let sysbench = match (ctx.out.sysbench_progress, section) {
            (true, Some(s)) => Some((
                s.clone(),
                report::SysbenchProgress {
                    threads: spec.clients,
                    connect_per_txn: spec.connect_per_txn,
                },
            )),
            _ => None,
        };
        Progress {
            every_us: ctx.out.progress_s.map(|p| (p * 1e6) as u64),
            ticks: 0,
            pending: measure::Interval::default(),
            pgbench: report::ProgressStyle {
                rate_limited: spec.rate_tps.is_some(),
                latency_limited: spec.latency_limit.is_some(),
                max_tries: spec.max_tries,
                pgbench_only: ctx.frontend == Frontend::Pgbench,
                epoch_start_s: None,
            },
            sysbench,
        }
    }

    /// `--progress-timestamp`: lines carry the time of day.
    pub(super) fn with_timestamps(&mut self, epoch_start_s: f64) {
        self.pgbench.epoch_start_s = Some(epoch_start_s);
    }

    /// After the run: the last interval (partial, never announced by the engine) completes a
    /// line when it reaches the next boundary, as the last report of `-T 60 -P 60` does in
    /// pgbench and sysbench.
    pub(super) fn finish(&mut self, outcome: &engine::Outcome) {
        if let Some(last) = outcome.intervals.get(self.ticks) {
            if outcome.intervals.len() == self.ticks + 1 {
                self.tick(last);
            }
        }
    }

    pub(super) fn tick(&mut self, interval: &measure::Interval) {
        self.ticks += 1;
        let Some(every) = self.every_us else {
            return;
        };
        self.pending.merge(interval);
        // A tick ending within 1 ms of the boundary completes the line (tick clocks jitter).
        if self.pending.end_us - self.pending.start_us + 1_000 < every {
            return;
        }
        let p = std::mem::take(&mut self.pending);
        let elapsed = p.end_us as f64 / 1e6;
        match &self.sysbench {
            // sysbench prints its reports on standard output.
            Some((section, style)) => println!(
                "{}",
                report::render_sysbench_progress(section, &p, elapsed, style)
            ),
            None => eprintln!("{}", report::render_progress(&p, elapsed, &self.pgbench)),
        }
    }
}

/// The pgbench thread that runs `client`: pgbench deals the clients to its threads in
/// consecutive runs, the earlier threads taking the larger share (`main`, "nclients_dealt").
fn pgbench_thread(client: u32, clients: u32, threads: u32) -> u32 {
    let threads = threads.max(1);
    let mut dealt = 0;
    for i in 0..threads {
        let n = (clients - dealt + threads - i - 1) / (threads - i);
        if client < dealt + n {
            return i;
        }
        dealt += n;
    }
    threads - 1
}

/// What the engine says about the clients as it happens: aborts, server notices, the
/// `--verbose-errors` lines; the run's other events are `run::measure`'s.
pub(super) fn said(frontend: Frontend, e: engine::Event<'_>) {
    match e {
        engine::Event::Aborted(a) => aborted(frontend, a),
        engine::Event::Notice(n) => console::server_notice(n),
        engine::Event::Info(i) => console::note(i),
        engine::Event::Starting | engine::Event::Connected { .. } | engine::Event::Progress(_) => {}
    }
}

fn aborted(frontend: Frontend, a: &Abort) {
    match frontend {
        // The script workload's reasons are pgbench's messages already ("client N script S
        // aborted in command C query Q: ..."); other workloads' are errors of their own.
        Frontend::Pgbench => console::error(&a.reason),
        // A script's abort is pgbench's messages, which name the client.
        _ if a.reason.starts_with("client ") || a.reason.contains(workload::script::RECORD) => {
            console::error(&a.reason)
        }
        _ => console::error(&format!("client {} aborted: {}", a.client_id, a.reason)),
    }
    // stampede's own runs also say where: the script's file, line and command.
    if let (Frontend::Native, Some(at)) = (frontend, &a.at) {
        console::detail(&format!("in {at}"));
    }
}

/// The files alone, written as soon as the engine stopped, before the checks (`after`): a
/// check that hangs or a process killed during the checks leaves the measured result on disk.
/// A failure here is reported when [`emit`] writes them again.
pub(super) fn save(ctx: &Ctx, r: &RunResult) {
    let _ = ctx.out.files.write(r);
}

/// The summary on standard output, the files, and the exit code.
pub(super) fn emit(ctx: &Ctx, r: &RunResult) -> Result<i32> {
    // pgbench --exit-on-abort: the thread of the aborted client exits the process at once
    // (exit(2) in threadRun), so nothing of the summary is printed.
    if let (Frontend::Pgbench, true, Some(a)) = (
        ctx.frontend,
        ctx.spec.exit_on_abort,
        r.connections.aborted.first(),
    ) {
        let thread = pgbench_thread(a.client_id, ctx.spec.clients, ctx.spec.threads);
        console::error(&format!(
            "Run was aborted due to an error in thread {thread}"
        ));
        return Ok(EXIT_UNTRUSTED);
    }
    match ctx.frontend {
        Frontend::Native => print!("{}", report::render_text(r)),
        Frontend::Pgbench => print!("{}", super::voice::pgbench::summary(r)),
        Frontend::Sysbench => print!("{}", report::render_sysbench_output(r)),
    }
    // A drop-in's `--check`: the verdicts on standard error, after the peer's own output, so
    // standard output stays what pgbench or sysbench prints (stampede's own summary has them).
    // Without `--check` the result still lists its checks as skipped: nothing is printed then
    // (pgbench's TAP suites expect an empty standard error).
    if ctx.frontend != Frontend::Native && ctx.out.checks && !r.checks.is_empty() {
        eprint!("stampede checks:\n{}", report::render_checks(r));
    }
    // A file that cannot be written loses no other output and no number: the summary is
    // printed above, the other files written; the exit code says the run needs a look.
    let saved = ctx.out.files.save(r, "result");
    // A sweep's result is its last step's: an earlier step's aborts are on its row.
    let untrusted = !saved
        || !r.connections.aborted.is_empty()
        || (r.sweep.iter()).any(|s| s.steps.iter().any(|x| x.aborted_clients > 0))
        || (r.checks.iter()).any(|c| c.status.untrusted());
    if ctx.frontend == Frontend::Pgbench && !r.connections.aborted.is_empty() {
        console::error("Run was aborted; the above results are incomplete.");
    }
    // A signal that came during the checks ended them (each "not verified"), not the run: the
    // result says it ran its course, the exit code that the user stopped it.
    Ok(if r.interrupted || crate::interrupt::requested() {
        EXIT_INTERRUPTED
    } else if untrusted {
        EXIT_UNTRUSTED
    } else {
        EXIT_OK
    })
}
