//! The insert benchmark's family (`stampede run iibench`): `purchases_index`
//! (`workload::iibench`), its inserts and queries, the secondary indexes' size sampled against
//! the server's cache while it runs, and the checks after it.
//!
//! The sampler: one session of its own, on a thread of its own, reads the secondary indexes'
//! total size every [`SAMPLE_EVERY`] (PostgreSQL: `pg_relation_size` of each index; MySQL:
//! InnoDB's persistent statistics, refreshed by `ANALYZE TABLE` before each read, since they
//! are otherwise recalculated only after 10% of the table changed) and compares it with the
//! cache (`shared_buffers`, `innodb_buffer_pool_size`). The first sample above the cache is the
//! outgrow point (`section`). Its statements are autocommitted: on PostgreSQL each is a
//! commit the commit count is told about (`Finish`), on MySQL none is a COMMIT.
//!
//! On a server you name, the table must exist (`stampede init iibench`, or iibench.py's
//! `--setup`); the embedded server creates it. Checks after the run: the table's rows grew by
//! exactly the rows of the committed inserts, and each secondary index agrees with the table
//! (`workload::tables::check_indexes`).

pub(crate) mod options;
pub(crate) mod plan;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use report::{Check, CheckStatus, RunConfig, RunResult};
use section::{Iibench, IndexSample, Point};
use sut::{Dialect, Session};
use txn::{IiBench, INSERT, MARK, TABLE};
use workload::tables::{self, Existing};
use workload::Workload as _;

use super::{skipped_all, Ctx, Family, Finish};
use crate::checks::ledger::{self, Part};
use crate::console::{self, Failure};
use crate::interrupt;

const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// Create `purchases_index`, replacing one stampede made; refuse someone else's.
pub(crate) async fn create(s: &mut Session, dialect: Dialect) -> Result<()> {
    match tables::existing(s, dialect, TABLE, MARK).await? {
        Existing::Foreign => {
            return Err(Failure::setup(
                format!("a table {TABLE} exists in this database and stampede did not create it"),
                "stampede never drops a table it did not create: run on it as it is (`stampede \
                 run iibench`), drop it yourself, or use another database (-d)",
            ))
        }
        Existing::Ours => {
            s.simple_query(&format!("DROP TABLE {TABLE}")).await?;
        }
        Existing::Absent => {}
    }
    for sql in txn::create_sql(dialect) {
        s.simple_query(&sql).await?;
    }
    Ok(())
}

/// The cache the indexes are measured against: bytes and the setting's name.
async fn cache(s: &mut Session, dialect: Dialect) -> Result<(u64, String)> {
    let (sql, name) = match dialect {
        Dialect::Postgres => (
            "SELECT setting::bigint * pg_size_bytes(unit) FROM pg_settings \
             WHERE name = 'shared_buffers'",
            "shared_buffers",
        ),
        Dialect::MySql => (
            "SELECT @@innodb_buffer_pool_size",
            "innodb_buffer_pool_size",
        ),
    };
    let v = first(s.simple_query(sql).await?);
    let bytes = v
        .as_deref()
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("reading {name}: unexpected {v:?}"))?;
    Ok((bytes, name.into()))
}

fn first(rows: Vec<Vec<Option<String>>>) -> Option<String> {
    rows.into_iter().next()?.into_iter().next()?
}

/// The secondary indexes' total size, bytes (module notes).
async fn index_bytes(s: &mut Session, dialect: Dialect) -> Result<u64> {
    let sql = match dialect {
        Dialect::Postgres => {
            "SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index \
             WHERE indrelid = 'purchases_index'::regclass AND NOT indisprimary"
        }
        Dialect::MySql => {
            s.simple_query("ANALYZE TABLE purchases_index").await?;
            "SELECT coalesce(sum(stat_value), 0) * @@innodb_page_size \
             FROM mysql.innodb_index_stats WHERE database_name = DATABASE() \
             AND table_name = 'purchases_index' AND index_name <> 'PRIMARY' \
             AND stat_name = 'size'"
        }
    };
    let v = first(s.simple_query(sql).await?);
    v.as_deref()
        .and_then(|v| v.parse::<f64>().ok())
        .map(|b| b as u64)
        .with_context(|| format!("reading the indexes' size: unexpected {v:?}"))
}

/// What the sampler thread hands back.
struct Sampled {
    samples: Vec<(Instant, u64)>,
    /// Commits its session made (PostgreSQL), and whether it connected.
    commits: u64,
    connections: u64,
    error: Option<String>,
}

struct Sampler {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Sampled>,
}

impl Sampler {
    fn start(conn: sut::Target) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut out = Sampled {
                samples: Vec::new(),
                commits: 0,
                connections: 0,
                error: None,
            };
            let rt = match crate::runtime::setup() {
                Ok(rt) => rt,
                Err(e) => {
                    out.error = Some(format!("{e:#}"));
                    return out;
                }
            };
            let dialect = conn.dialect();
            rt.block_on(async {
                let mut s = match Session::connect(&conn).await {
                    Ok(s) => s,
                    Err(e) => {
                        out.error = Some(e.to_string());
                        return;
                    }
                };
                out.connections = 1;
                loop {
                    match index_bytes(&mut s, dialect).await {
                        Ok(b) => out.samples.push((Instant::now(), b)),
                        Err(e) => {
                            out.error = Some(format!("{e:#}"));
                            break;
                        }
                    }
                    // Waits for the stop signal, at most until the next sample is due.
                    match stopped.recv_timeout(SAMPLE_EVERY) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        _ => break,
                    }
                }
                out.commits = s.server_commits();
                s.close().await;
            });
            out
        });
        Sampler { stop, thread }
    }

    fn finish(self) -> Sampled {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_else(|_| Sampled {
            samples: Vec::new(),
            commits: 0,
            connections: 0,
            error: Some("the sampler thread panicked".into()),
        })
    }
}

pub(crate) mod section;
pub mod txn;

/// What an iibench run decided.
pub struct Job {
    pub opts: txn::Options,
}

pub(crate) struct Runner {
    job: Job,
    workload: Option<Arc<IiBench>>,
    rows_before: u64,
    cache: (u64, String),
    sampler: Option<Sampler>,
    sampled: Option<Sampled>,
    started: Option<Instant>,
}

impl Runner {
    pub(crate) fn new(job: Job) -> Runner {
        Runner {
            job,
            workload: None,
            rows_before: 0,
            cache: (0, String::new()),
            sampler: None,
            sampled: None,
            started: None,
        }
    }

    fn rows_inserted(&self, outcome_inserts: u64) -> u64 {
        outcome_inserts * u64::from(self.job.opts.rows_per_commit)
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        ctx.with_session(async |s| create(s, dialect).await)
            .context("creating purchases_index on the embedded server")
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        let (rows, cache) = ctx.with_session(async |s| {
            if tables::existing(s, dialect, TABLE, MARK).await? == Existing::Absent {
                return Err(Failure::setup(
                    format!("the table {TABLE} does not exist"),
                    "create it with `stampede init iibench` (or iibench.py --setup)",
                ));
            }
            let rows = tables::count(s, TABLE).await?;
            Ok((rows, cache(s, dialect).await?))
        })?;
        self.rows_before = rows;
        self.cache = cache;
        let w = IiBench::new(dialect, self.job.opts.clone(), ctx.spec.clients)
            .map_err(|e| Failure::usage(e, ""))?;
        self.workload = Some(Arc::new(w));
        Ok(())
    }

    fn describe(&self) -> String {
        let o = &self.job.opts;
        format!(
            "iibench, {} rows per commit, {} query client{}",
            o.rows_per_commit,
            o.query_clients,
            if o.query_clients == 1 { "" } else { "s" }
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let w = self.workload.clone().expect("built before the run");
        self.sampler = Some(Sampler::start(ctx.conn().clone()));
        let started = &mut self.started;
        let mut events = |e: Event<'_>| {
            if matches!(e, Event::Connected { .. }) {
                *started = Some(Instant::now());
            }
            on_event(e)
        };
        engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), &mut events)
    }

    fn finish(&mut self, _ctx: &Ctx) -> Result<Finish> {
        let Some(s) = self.sampler.take() else {
            return Ok(Finish::default());
        };
        let sampled = s.finish();
        if let Some(e) = &sampled.error {
            console::warning(&format!(
                "iibench: the indexes' size could not be sampled: {}",
                sut::conninfo::redact(e)
            ));
        }
        let fin = Finish {
            commits: sampled.commits,
            connections: sampled.connections,
            ..Finish::default()
        };
        self.sampled = Some(sampled);
        Ok(fin)
    }

    /// Each insert transaction one INSERT of `--rows-per-commit` rows; each query one select
    /// (the index-size sampler's statements are stampede's own, not the workload's).
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        use measure::ledger::{Bounds, Kind};
        let Some(w) = &self.workload else {
            return Vec::new();
        };
        let rows = u64::from(w.options().rows_per_commit);
        let insert = Part {
            rows: Some(Bounds::exact(rows)),
            ..Part::one_row(Kind::Insert, TABLE)
        };
        let claims = (0..w.txn_types().len())
            .flat_map(|i| {
                let (committed, attempts) = ledger::counts(outcome, i);
                let (from, part) = match i == INSERT {
                    true => ("iibench inserts", insert),
                    false => ("iibench queries", Part::read(TABLE)),
                };
                ledger::claims_of(committed, attempts, from, &[part])
            })
            .collect();
        ledger::merged(claims)
    }

    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        outcome.total.total().committed() + fin.commits
    }

    /// Autocommitted statements: MySQL's `Com_commit` does not count them.
    fn mysql_commits(&self, _outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        None
    }

    fn check_names(&self) -> &'static [&'static str] {
        &["row count", "index consistency"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        if !ctx.out.checks {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        }
        let inserts = outcome.total.txns.get(INSERT).map_or(0, |t| t.committed());
        let expected = self.rows_before + self.rows_inserted(inserts);
        let dialect = ctx.conn().dialect();
        let may_install = ctx.embedded();
        let (rows, verdicts) = ctx.with_session(async |s| {
            let rows = tables::count(s, TABLE).await?;
            let leads: Vec<(&str, &str)> = (txn::INDEXES.iter())
                .map(|(n, cols)| (*n, cols.split(',').next().unwrap_or(cols)))
                .collect();
            let v = tables::check_indexes(s, dialect, TABLE, &leads, may_install).await?;
            Ok((rows, v))
        })?;
        let per = u64::from(self.job.opts.rows_per_commit);
        let row_check = crate::checks::rows_verdict(
            "row count",
            outcome.abandoned,
            |k| rows == expected + k * per,
            format!(
                "{TABLE} has {rows} rows: {} before + {inserts} committed inserts x {per} rows = \
                 {expected}",
                self.rows_before
            ),
        );
        Ok(vec![row_check, index_check(&verdicts)])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let weights = vec![1; types.len()];
        super::base_config(ctx, "iibench".into(), &types, weights)
    }

    fn section(&self, result: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        report::section::keyed(&self.iibench_section(result)?)
    }
}

/// One check for every secondary index of one or more tables; the detail names each index
/// and what was found.
pub(crate) fn index_check(verdicts: &[tables::IndexVerdict]) -> Check {
    let failed = verdicts.iter().filter(|v| !v.ok).count();
    let detail = (verdicts.iter())
        .map(|v| format!("{}: {}", v.index, v.detail))
        .collect::<Vec<_>>()
        .join("; ");
    Check {
        name: "index consistency".into(),
        status: if failed == 0 && !verdicts.is_empty() {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        detail,
    }
}

impl Runner {
    fn iibench_section(&self, r: &RunResult) -> Option<Iibench> {
        let o = &self.job.opts;
        let per_commit = f64::from(o.rows_per_commit);
        let committed = |txns: &[measure::TxnStats], q: bool| -> u64 {
            (txns.iter().enumerate())
                .filter(|(i, _)| (*i != INSERT) == q)
                .map(|(_, t)| t.committed())
                .sum()
        };
        let series = (r.intervals.iter())
            .filter(|i| i.end_us > i.start_us)
            .map(|i| {
                let d = i.duration_s();
                Point {
                    t_s: i.end_us as f64 / 1e6,
                    insert_rows_per_s: committed(&i.txns, false) as f64 * per_commit / d,
                    queries_per_s: committed(&i.txns, true) as f64 / d,
                }
            })
            .collect();
        let d = r.measured_duration_s.max(1e-9);
        let started = self.started;
        let index_samples = (self.sampled.iter())
            .flat_map(|s| s.samples.iter())
            .map(|(at, b)| IndexSample {
                t_s: match started {
                    Some(s) if *at >= s => at.duration_since(s).as_secs_f64(),
                    Some(s) => -s.duration_since(*at).as_secs_f64(),
                    None => 0.0,
                },
                index_bytes: *b,
            })
            .collect();
        let inserts = committed(&r.total.txns, false);
        let mut t = Iibench {
            rows_per_commit: o.rows_per_commit,
            insert_clients: r.config.clients - o.query_clients,
            query_clients: o.query_clients,
            rows_inserted: self.rows_inserted(inserts),
            insert_rows_per_s: self.rows_inserted(inserts) as f64 / d,
            queries_per_s: committed(&r.total.txns, true) as f64 / d,
            series,
            cache_bytes: self.cache.0,
            cache_setting: self.cache.1.clone(),
            index_samples,
            outgrown: None,
        };
        t.locate_outgrown();
        Some(t)
    }
}
