//! What a sysbench run prints and saves beside the engine's numbers: the progress lines (one
//! style per run: sysbench's by default, stampede's pgbench-style one with `--progress-style
//! pgbench`), the sysbench section of the result (the window after `--warmup-time`), and the
//! result's configuration.

use engine::Stop;
use report::{Check, RunResult, SysbenchSection};
use workload::oltp::QueryCounts;

use super::plan::{OltpPlan, ProgressStyle, SbTest};
use crate::cli::RunArgs;
use crate::commands::result::{assemble_result, ResultParts};
use crate::{environment, targeting};

/// The sysbench section before the run: everything but the measured window.
pub(super) fn section(plan: &OltpPlan, q: QueryCounts) -> SysbenchSection {
    SysbenchSection {
        test: plan.test.name().into(),
        options: plan.sysbench_options.clone(),
        reads_per_txn: q.reads,
        writes_per_txn: q.writes,
        other_per_txn: q.other,
        warmup_s: plan.warmup_s as f64,
        percentile: plan.percentile,
        queries_from_statements: plan.test == SbTest::BulkInsert,
        ..Default::default()
    }
}

/// Prints the progress lines of `-P`/`--report-interval`: the engine ticks at least every
/// second (the warm-up is cut on ticks), so ticks are merged until a report interval is full.
/// sysbench's lines go to standard output, as sysbench prints them; stampede's to standard
/// error, as pgbench's.
pub(super) struct Progress {
    every_us: Option<u64>,
    pending: measure::Interval,
    style: ProgressStyle,
    pgbench: report::ProgressStyle,
    sysbench: report::SysbenchProgress,
    section: SysbenchSection,
}

impl Progress {
    pub(super) fn new(args: &RunArgs, plan: &OltpPlan, section: &SysbenchSection) -> Progress {
        let spec = &plan.spec;
        Progress {
            every_us: args.progress.map(|p| (p * 1e6) as u64),
            pending: measure::Interval::default(),
            style: plan.progress_style,
            pgbench: report::ProgressStyle {
                rate_limited: spec.rate_tps.is_some(),
                latency_limited: spec.latency_limit.is_some(),
                max_tries: spec.max_tries,
            },
            sysbench: report::SysbenchProgress {
                threads: spec.clients,
                connect_per_txn: spec.connect_per_txn,
            },
            section: section.clone(),
        }
    }

    pub(super) fn tick(&mut self, interval: &measure::Interval) {
        let Some(every) = self.every_us else {
            return;
        };
        self.pending.merge(interval);
        if self.pending.end_us - self.pending.start_us + 1_000 < every {
            return;
        }
        let p = std::mem::take(&mut self.pending);
        let elapsed = p.end_us as f64 / 1e6;
        match self.style {
            ProgressStyle::Sysbench => println!(
                "{}",
                report::render_sysbench_progress(&self.section, &p, elapsed, &self.sysbench)
            ),
            ProgressStyle::Pgbench => {
                eprintln!("{}", report::render_progress(&p, elapsed, &self.pgbench))
            }
        }
    }
}

/// The intervals from `warmup_s` on, merged (a tick ending within 1 ms of the boundary belongs
/// to the warm-up: tick clocks jitter).
pub(super) fn after_warmup(
    intervals: &[measure::Interval],
    warmup_s: u64,
    n_types: usize,
) -> measure::Interval {
    let cut = warmup_s * 1_000_000;
    let mut w = measure::Interval::new(n_types, cut);
    let mut first = true;
    for i in intervals.iter().filter(|i| i.end_us > cut + 1_000) {
        if first {
            w.start_us = i.start_us.max(cut.saturating_sub(1_000));
            w.end_us = w.start_us;
            first = false;
        }
        w.merge(i);
    }
    w
}

#[allow(clippy::too_many_arguments)]
pub(super) fn build_result(
    args: &RunArgs,
    plan: &OltpPlan,
    target: &targeting::Target,
    server: &environment::ServerInfo,
    txn_types: &[workload::TxnType],
    outcome: engine::Outcome,
    checks: Vec<Check>,
    server_metrics: Option<measure::server::ServerMetrics>,
    sysbench: SysbenchSection,
) -> RunResult {
    let spec = &plan.spec;
    let config = report::RunConfig {
        workload: plan.test.name().into(),
        txn_types: txn_types
            .iter()
            .map(|t| report::TxnTypeConfig {
                name: t.name.clone(),
                weight: 1,
                statements: t.statements.clone(),
            })
            .collect(),
        clients: spec.clients,
        threads: spec.threads,
        duration_s: match spec.stop {
            Stop::Duration(d) => Some(d.as_secs()),
            Stop::Transactions(_) => None,
        },
        transactions_per_client: match spec.stop {
            Stop::Transactions(n) => Some(n),
            Stop::Duration(_) => None,
        },
        rate_tps: spec.rate_tps,
        latency_limit_ms: args.latency_limit,
        // bulk_insert sends its INSERTs with db_query (text, simple protocol) whatever the mode.
        query_mode: match plan.test {
            SbTest::BulkInsert => "simple".into(),
            SbTest::Oltp(_) => format!("{:?}", spec.mode).to_lowercase(),
        },
        max_tries: spec.max_tries,
        connect_per_txn: spec.connect_per_txn,
        progress_s: args.progress,
        random_seed: spec.seed,
        per_statement: spec.per_statement,
        // No scale: sysbench's size is --tables x --table-size (in `sysbench.options`), printed
        // as "tables: ..." in place of pgbench's "scaling factor".
        scale: 0,
    };
    let parts = ResultParts {
        target,
        server,
        outcome,
        checks,
        server_metrics,
    };
    let mut r = assemble_result(config, parts, Some(sysbench));
    super::args::redact_argv(&mut r.command_line);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_drops_the_first_intervals() {
        let iv = |s: u64, n: u64| {
            let mut i = measure::Interval::new(1, s * 1_000_000);
            i.end_us = (s + 1) * 1_000_000;
            for _ in 0..n {
                i.txns[0].latency.record(1000);
            }
            i
        };
        let all = vec![iv(0, 5), iv(1, 7), iv(2, 11)];
        let w = after_warmup(&all, 1, 1);
        assert_eq!(w.total().committed(), 18);
        assert_eq!((w.start_us, w.end_us), (1_000_000, 3_000_000));
        assert_eq!(after_warmup(&all, 0, 1).total().committed(), 23);
    }
}
