//! TPC-H's runner (`stampede run tpch`, `stampede run tpch-qN`): finds the loaded scale,
//! builds the streams ([`super::workload`]: the power test's, the throughput test's query
//! streams and its refresh stream, or one query in a loop), runs them on the engine, and
//! makes the section ([`super::section`]) with the metrics of clause 5.4.
//!
//! The scale is read from the data (`supplier` holds SF * 10,000 rows, clause 4.2.5.1), so a
//! load made by dbgen or any other tool runs too. Checks after the run:
//! - "row counts": each query returned the answer set's number of rows where it is known
//!   (qgen's validation parameters, `--validation`, at a scale the answers are known for),
//!   and otherwise no more than its grouping allows (`queries::rows_at_most`);
//! - "answers": with `--validation` at scale 1 and no refresh function (`tpch-qN`), each
//!   query's values against the answer set (`super::answer_check`);
//! - "refresh": the refresh functions left `orders` and `lineitem` as they found them (each
//!   pair's RF2 deletes what its RF1 inserted: `super::refresh`).
//!
//! Must not touch: the engine's timing; tables but TPC-H's, and in `orders` and `lineitem`
//! only the refresh slots' keys.

use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{ClientStats, Event, Outcome, RunError};
use report::{Check, CheckStatus, RunConfig};
use sut::Dialect;
use workload::{TxnType, Workload as _};

use super::answer_check::{self, Answer};
use super::options::Test;
use super::plan::TpchJob;
use super::queries::{self, Params};
use super::refresh;
use super::section::{Item as SectionItem, Plans, TpchSection};
use super::workload::{Item, Plan, Stream, Tpch};
use crate::console::{self, Failure};
use crate::families::{skipped_all, Ctx, Family, Finish};

/// The scale the embedded server is loaded at for a run without a target.
const EMBEDDED_SCALE: f64 = 0.01;

const CHECKS: &[&str] = &["row counts", answer_check::NAME, "refresh"];

fn check(name: &str, status: CheckStatus, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

/// What each transaction type is: its stream, its item, and (a query) its parameters.
#[derive(Clone, Debug)]
struct Label {
    stream: u32,
    item: String,
    params: Option<Params>,
}

pub(crate) struct Runner {
    job: TpchJob,
    scale: f64,
    seed: u64,
    workload: Option<Arc<Tpch>>,
    labels: Vec<Label>,
    /// `orders` and `lineitem` rows before the run.
    before: (u64, u64),
    clients: Vec<ClientStats>,
    cut: bool,
    /// Each type's plan hash and what explaining found (`super::plans`), after the run.
    plans: Option<(Vec<Option<String>>, Plans)>,
}

impl Runner {
    pub(crate) fn new(job: TpchJob) -> Runner {
        Runner {
            job,
            scale: 0.0,
            seed: 0,
            workload: None,
            labels: Vec::new(),
            before: (0, 0),
            clients: Vec::new(),
            cut: false,
            plans: None,
        }
    }

    fn refreshes(&self) -> bool {
        self.job.test.is_some()
    }

    fn answers_run(&self) -> answer_check::Run {
        answer_check::Run {
            validation: self.job.validation,
            scale: self.scale,
            refreshes: self.refreshes(),
        }
    }

    /// The streams of the performance test, and their types' labels.
    fn streams(&self, test: Test, dialect: queries::Dialect) -> (Vec<Arc<Stream>>, Vec<Label>) {
        let (sf, s) = (self.scale, self.job.streams);
        let mut labels = Vec::new();
        let mut streams = Vec::new();
        let mut add = |stream: u32, name: String, params: Option<Params>| {
            labels.push(Label {
                stream,
                item: name,
                params,
            });
            (labels.len() - 1) as u32
        };
        let query = |stream: u32, q: u8| match self.job.validation {
            true => queries::validation(q, sf),
            false => queries::stream_params(self.seed, stream as usize, q, sf),
        };
        let power = test != Test::Throughput;
        if power {
            let pair = refresh::pair(sf, 0);
            let mut items = vec![(add(0, "RF1".into(), None), Item::Refresh(pair.rf1))];
            for q in queries::order(0) {
                let p = query(0, q);
                let sql = queries::text(dialect, &p);
                items.push((add(0, format!("Q{q}"), Some(p)), Item::Query(sql)));
            }
            items.push((add(0, "RF2".into(), None), Item::Refresh(pair.rf2)));
            streams.push(Arc::new(Stream {
                items,
                after_power: false,
            }));
        }
        if test != Test::Power {
            for st in 1..=s {
                let mut items = Vec::new();
                for q in queries::order(st as usize) {
                    let p = query(st, q);
                    let sql = queries::text(dialect, &p);
                    items.push((add(st, format!("Q{q}"), Some(p)), Item::Query(sql)));
                }
                streams.push(Arc::new(Stream {
                    items,
                    after_power: power,
                }));
            }
            // The refresh stream: S pairs, one after the other (clause 5.3.5).
            let mut items = Vec::new();
            for p in 1..=s {
                let pair = refresh::pair(sf, p as usize);
                items.push((add(s + 1, "RF1".into(), None), Item::Refresh(pair.rf1)));
                items.push((add(s + 1, "RF2".into(), None), Item::Refresh(pair.rf2)));
            }
            streams.push(Arc::new(Stream {
                items,
                after_power: power,
            }));
        }
        (streams, labels)
    }

    fn types(&self) -> Vec<TxnType> {
        (self.labels.iter())
            .map(|l| {
                let name = match (self.job.test, l.stream) {
                    (None, _) => l.item.clone(),
                    (Some(_), 0) => format!("power {}", l.item),
                    (Some(_), s) if s == self.job.streams + 1 => format!("refresh {}", l.item),
                    (Some(_), s) => format!("stream {s} {}", l.item),
                };
                TxnType {
                    statements: vec![name.clone()],
                    name,
                }
            })
            .collect()
    }

    fn dialect(d: Dialect) -> queries::Dialect {
        match d {
            Dialect::Postgres => queries::Dialect::Postgres,
            Dialect::MySql => queries::Dialect::Mysql,
        }
    }

    /// The expected row count of a label's query, where the answer set knows it.
    fn expected(&self, l: &Label) -> Option<u64> {
        let p = l.params.as_ref()?;
        (*p == queries::validation(p.query(), self.scale))
            .then(|| queries::rows_validation(p.query(), self.scale))
            .flatten()
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        console::note(&format!(
            "loading TPC-H at scale {EMBEDDED_SCALE} on the embedded server..."
        ));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let opts = super::load::InitOptions {
            scale: EMBEDDED_SCALE,
            jobs: cpus,
            indexes: true,
            no_vacuum: false,
            cancel: crate::interrupt::flag(),
            part: None,
            set: Default::default(),
        };
        ctx.rt
            .block_on(super::load::init(ctx.conn(), &opts, &mut |_| {}))
            .context("loading TPC-H's tables on the embedded server")?;
        Ok(())
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let refreshes = self.refreshes();
        let (suppliers, before) = ctx.with_session(async |s| {
            let d = s.dialect();
            for t in ["supplier", "orders", "lineitem"] {
                if workload::tables::comment(s, d, t).await?.is_none() {
                    return Err(Failure::setup(
                        format!("the TPC-H table {t} does not exist"),
                        "load the tables with `stampede init tpch --scale SF`",
                    ));
                }
            }
            if refreshes {
                // A run cut between a pair's RF1 and RF2 left its new orders behind.
                let left = s.simple_query(refresh::leftovers_sql()).await?;
                if left.first().and_then(|r| r[0].as_deref()) != Some("0") {
                    for sql in refresh::cleanup_sql() {
                        s.simple_query(sql).await?;
                    }
                }
            }
            let n = workload::tables::count(s, "supplier").await?;
            let counts = (
                workload::tables::count(s, "orders").await?,
                workload::tables::count(s, "lineitem").await?,
            );
            Ok((n, counts))
        })?;
        if suppliers == 0 {
            return Err(Failure::setup(
                "the TPC-H table supplier is empty",
                "load the tables with `stampede init tpch --scale SF`",
            ));
        }
        // Clause 4.2.5.1: SF * 10,000 suppliers.
        self.scale = suppliers as f64 / 10_000.0;
        self.before = before;
        self.seed = ctx.spec.seed;
        let dialect = Self::dialect(ctx.conn().dialect());
        let plan = match (self.job.test, self.job.query) {
            (Some(test), _) => {
                let (streams, labels) = self.streams(test, dialect);
                self.labels = labels;
                Plan::Streams(streams)
            }
            (None, Some(q)) => {
                self.labels = vec![Label {
                    stream: 0,
                    item: format!("Q{q}"),
                    params: self
                        .job
                        .validation
                        .then(|| queries::validation(q, self.scale)),
                }];
                Plan::Repeat {
                    query: q,
                    validation: self.job.validation,
                }
            }
            (None, None) => unreachable!("the plan names a test or a query"),
        };
        let types = self.types();
        let w = Tpch::new(dialect, self.scale, types, plan, self.job.timeout_ms);
        // The values of each validation query, where the answer set knows them.
        let known = self.answers_run().known();
        let keep = (self.labels.iter())
            .map(|l| self.expected(l).filter(|_| known).map(|n| n as usize))
            .collect();
        self.workload = Some(Arc::new(w.keeping_values(keep)));
        Ok(())
    }

    fn describe(&self) -> String {
        match (self.job.test, self.job.query) {
            (None, Some(q)) => format!("tpch-q{q}, scale {}", self.scale),
            (Some(t), _) => format!(
                "tpch {} test, scale {}{}{}",
                match t {
                    Test::Full => "power and throughput",
                    Test::Power => "power",
                    Test::Throughput => "throughput",
                },
                self.scale,
                match t {
                    Test::Power => String::new(),
                    _ => format!(", {} streams", self.job.streams),
                },
                if self.job.validation {
                    ", validation parameters"
                } else {
                    ""
                }
            ),
            (None, None) => "tpch".into(),
        }
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built in before");
        let o = engine::run(ctx.spec, w, ctx.conn(), crate::interrupt::flag(), on_event)?;
        self.clients = o.clients.clone();
        self.cut = o.interrupted
            || !o.aborted.is_empty()
            || matches!(ctx.spec.stop, engine::Stop::Duration(_)) && self.job.test.is_some();
        Ok(o)
    }

    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        outcome.server_commits - outcome.setup_commits + fin.commits
    }

    /// MySQL's `Com_commit` counts the refresh functions' COMMITs (the queries autocommit).
    fn mysql_commits(&self, outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        Some(outcome.endpoint_commits.iter().sum())
    }

    fn commit_status(
        &self,
        ctx: &Ctx,
        c: crate::checks::CommitCheck,
        maintenance: i64,
    ) -> Result<(CheckStatus, String)> {
        parallel_query_status(ctx, c, maintenance)
    }

    fn check_names(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        if !ctx.out.checks {
            self.plans = Some(super::plans::skipped("--no-check"));
            return Ok(skipped_all(CHECKS, "--no-check"));
        }
        // After the commit count and the ledger read the server (`super::plans`).
        let texts = self
            .workload
            .as_ref()
            .map(|w| w.texts())
            .unwrap_or_default();
        self.plans = Some(super::plans::after_run(ctx, &texts));
        let rows = self.workload.as_ref().map(|w| w.rows()).unwrap_or_default();
        let mut wrong = Vec::new();
        let mut known = 0;
        for (l, r) in self.labels.iter().zip(&rows) {
            // Queries only (`Q6`); the refresh functions return no rows.
            let Some(q) = l.item.strip_prefix('Q').and_then(|q| q.parse::<u8>().ok()) else {
                continue;
            };
            if r.executions == 0 {
                continue;
            }
            match self.expected(l) {
                Some(want) => {
                    known += 1;
                    if (r.min, r.max) != (want, want) {
                        wrong.push(format!(
                            "{} returned {} rows, the answer set {want}",
                            l.item, r.max
                        ));
                    }
                }
                None => {
                    if let Some(most) = queries::rows_at_most(q) {
                        if r.max > most {
                            wrong.push(format!(
                                "{} returned {} rows, at most {most} possible",
                                l.item, r.max
                            ));
                        }
                    }
                }
            }
        }
        let queries_run: u64 = rows.iter().map(|r| r.executions).sum();
        let rows_check = match (wrong.is_empty(), queries_run) {
            (_, 0) => check(
                "row counts",
                CheckStatus::Skipped,
                "skipped: no query returned",
            ),
            (true, n) => check(
                "row counts",
                CheckStatus::Passed,
                format!(
                    "{n} executions returned plausible row counts; {known} checked exactly \
                     against the answer set"
                ),
            ),
            (false, _) => check("row counts", CheckStatus::Failed, wrong.join("; ")),
        };
        let kept = self.workload.as_ref().map(|w| w.kept()).unwrap_or_default();
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let answers: Vec<Answer> = (self.labels.iter().zip(&types).enumerate())
            .filter(|(_, (l, _))| self.expected(l).is_some())
            .filter_map(|(k, (l, t))| {
                Some(Answer {
                    name: &t.name,
                    query: l.params.as_ref()?.query(),
                    kept: kept.get(k).and_then(Option::as_ref),
                })
            })
            .collect();
        let answers_check = answer_check::check(self.answers_run(), &answers);
        let refresh_check = if !self.refreshes() {
            check(
                "refresh",
                CheckStatus::Skipped,
                "skipped: no refresh function ran",
            )
        } else {
            let after = ctx.with_session(async |s| {
                Ok((
                    workload::tables::count(s, "orders").await?,
                    workload::tables::count(s, "lineitem").await?,
                ))
            })?;
            let t = outcome.total.total();
            match (after == self.before, t.failed() > 0 || self.cut) {
                (true, _) => check(
                    "refresh",
                    CheckStatus::Passed,
                    format!(
                        "orders and lineitem hold {} and {} rows, as before the run",
                        after.0, after.1
                    ),
                ),
                (false, true) => check(
                    "refresh",
                    CheckStatus::Skipped,
                    format!(
                        "skipped: a refresh function failed or the run was cut (orders {} -> \
                         {}, lineitem {} -> {}); the next run removes the rows left",
                        self.before.0, after.0, self.before.1, after.1
                    ),
                ),
                (false, false) => check(
                    "refresh",
                    CheckStatus::Failed,
                    format!(
                        "orders {} -> {}, lineitem {} -> {}: RF2 did not delete what RF1 \
                         inserted",
                        self.before.0, after.0, self.before.1, after.1
                    ),
                ),
            }
        };
        Ok(vec![rows_check, answers_check, refresh_check])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let weights = vec![1; types.len()];
        let name = match self.job.query {
            Some(q) => format!("tpch-q{q}"),
            None => "tpch".into(),
        };
        RunConfig {
            scale_factor: Some(self.scale),
            ..crate::families::base_config(ctx, name, &types, weights)
        }
    }

    fn section(&self, r: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        let rows = self.workload.as_ref().map(|w| w.rows()).unwrap_or_default();
        let mut items = Vec::new();
        for (k, l) in self.labels.iter().enumerate() {
            let t = r.total.txns.get(k)?;
            let rw = rows.get(k).copied().unwrap_or_default();
            let ok = t.committed();
            items.push(SectionItem {
                stream: l.stream,
                item: l.item.clone(),
                executions: ok + t.failed(),
                failed: t.failed(),
                timed_out: rw.timed_out,
                seconds: (ok > 0).then(|| t.latency.mean_us() / 1e6),
                rows: (rw.executions > 0).then(|| rw.total as f64 / rw.executions as f64),
                expected_rows: self.expected(l),
                params: l.params.as_ref().map(Params::values).unwrap_or_default(),
                plan_hash: self
                    .plans
                    .as_ref()
                    .and_then(|p| p.0.get(k).cloned().flatten()),
                start_s: None,
                end_s: None,
            });
        }
        let mut s = TpchSection {
            scale: self.scale,
            test: match self.job.test {
                None => "query",
                Some(Test::Full) => "full",
                Some(Test::Power) => "power",
                Some(Test::Throughput) => "throughput",
            }
            .into(),
            streams: match self.job.test {
                Some(Test::Throughput | Test::Full) => self.job.streams,
                _ => 0,
            },
            validation: self.job.validation,
            query_timeout_s: self.job.timeout_ms.map(|ms| ms as f64 / 1000.0),
            items,
            plans: self.plans.as_ref().map(|p| p.1.clone()),
            ..Default::default()
        };
        if self.job.test.is_some() {
            super::metrics::fill(&mut s, &self.clients, self.cut);
            super::timeline::fill(&mut s, &self.clients);
        }
        report::section::keyed(&s)
    }
}

/// A surplus of commits on PostgreSQL is inconclusive where parallel query may run: each
/// parallel worker's transaction is counted in `xact_commit`, and PostgreSQL before 18 counts
/// the workers launched nowhere. A deficit fails as ever. (TPC-H's queries, CH-benCHmark's
/// analytic ones.)
pub(crate) fn parallel_query_status(
    ctx: &Ctx,
    c: crate::checks::CommitCheck,
    maintenance: i64,
) -> Result<(CheckStatus, String)> {
    if c.passed || c.difference < 0 || ctx.conn().dialect() != Dialect::Postgres {
        return Ok(crate::checks::commit_status(&c, maintenance));
    }
    let workers = ctx.with_session(async |s| {
        let r = s
            .simple_query("SHOW max_parallel_workers_per_gather")
            .await?;
        Ok(r.first().and_then(|r| r[0].as_deref()?.parse::<u64>().ok()))
    })?;
    match workers {
        Some(w) if w > 0 => Ok((
            CheckStatus::Skipped,
            format!(
                "inconclusive: {}; each parallel query worker's transaction is counted in \
                 xact_commit (up to {w} per query here, max_parallel_workers_per_gather), \
                 and PostgreSQL before 18 counts the workers launched nowhere",
                c.detail
            ),
        )),
        _ => Ok(crate::checks::commit_status(&c, maintenance)),
    }
}
