//! The replay family (`stampede replay CAPTURE`): a workload captured in a server's log, sent
//! again session by session, at its captured pace or faster, and measured like any run
//! (progress, per-fingerprint latency, the observer, the commit count and statement ledger,
//! JSON and HTML).
//!
//! - `capture/`: the captured-workload model and the log readers (PostgreSQL's stderr, csvlog
//!   and jsonlog; MySQL's and MariaDB's general and slow logs);
//! - `file`: the replay file (`stampede replay parse LOG -o FILE`);
//! - `fingerprint`: statements grouped as pg_stat_statements and pt-query-digest group them;
//! - `workload`: one client per captured session, on the engine's timetable (`Due`);
//! - `plan`, `options`: the command line; `section`: the result's `replay` part.
//!
//! The run's counts: one engine transaction is one statement; what the server committed is
//! what the sessions' wire saw commit (COMMITs and autocommitted statements), which the commit
//! count holds against the server's own counter. Checks after the run: every captured
//! statement was sent (unless -T or Ctrl-C cut the replay short).

pub(crate) mod capture;
pub(crate) mod file;
pub(crate) mod fingerprint;
pub(crate) mod locks;
pub(crate) mod options;
pub(crate) mod plan;
pub(crate) mod record;
pub(crate) mod section;
pub(crate) mod workload;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use ::workload::Workload as _;
use anyhow::Result;
use engine::{Event, Outcome, RunError, ScheduleLag};
use report::compare::statements::LogDurations;
use report::{Check, CheckStatus, RunConfig};

use self::capture::{Family as CaptureFamily, Stats};
use self::section::{Behind, FingerprintErrors, ReplaySection};
use self::workload::{Play, Replay, Speed};
use super::{skipped_all, Ctx, Family, Finish};
use crate::console::Failure;
use crate::interrupt;

/// What a replay's plan decided: the capture read and mapped.
pub struct Job {
    pub path: PathBuf,
    /// The format it was read as (`stderr`, `csvlog`, ..., `replay`).
    pub format: &'static str,
    pub speed: Speed,
    /// `--order strict`: the capture's order across sessions is kept too.
    pub strict: bool,
    pub stats: Stats,
    pub family: CaptureFamily,
    pub plays: Vec<Play>,
    pub fingerprints: Vec<String>,
}

pub(crate) struct Runner {
    path: PathBuf,
    format: &'static str,
    speed: Speed,
    strict: bool,
    stats: Stats,
    family: CaptureFamily,
    /// Until `before` builds the workload.
    job: Option<(Vec<Play>, Vec<String>)>,
    workload: Option<Arc<Replay>>,
    statements: u64,
    schedule: ScheduleLag,
    /// PostgreSQL: databases the sessions replay on besides the target's, whose commits the
    /// commit count (the target database's `xact_commit`) cannot see.
    elsewhere: Vec<String>,
    sampler: Option<locks::Sampler>,
    lock_waits: Vec<locks::LockWait>,
}

impl Runner {
    pub(crate) fn new(job: Job) -> Runner {
        Runner {
            statements: job
                .plays
                .iter()
                .map(|p| p.session.statements.len() as u64)
                .sum(),
            path: job.path,
            format: job.format,
            speed: job.speed,
            strict: job.strict,
            stats: job.stats,
            family: job.family,
            job: Some((job.plays, job.fingerprints)),
            workload: None,
            schedule: ScheduleLag::default(),
            elsewhere: Vec::new(),
            sampler: None,
            lock_waits: Vec::new(),
        }
    }

    /// Per fingerprint with errors in the log or the replay: both counts by code.
    fn errors(&self) -> Vec<FingerprintErrors> {
        let Some(w) = &self.workload else {
            return Vec::new();
        };
        let types = w.txn_types();
        let mut by: BTreeMap<u32, FingerprintErrors> = BTreeMap::new();
        fn at<'a>(
            by: &'a mut BTreeMap<u32, FingerprintErrors>,
            types: &[::workload::TxnType],
            t: u32,
        ) -> &'a mut FingerprintErrors {
            by.entry(t).or_insert_with(|| FingerprintErrors {
                fingerprint: types
                    .get(t as usize)
                    .map_or(String::new(), |x| x.name.clone()),
                ..Default::default()
            })
        }
        let mut captured: BTreeMap<u32, u64> = BTreeMap::new();
        for p in w.plays() {
            for (st, &t) in p.session.statements.iter().zip(&p.types) {
                *captured.entry(t).or_default() += 1;
                if let Some(code) = &st.error {
                    let code = if code.is_empty() {
                        section::UNNAMED
                    } else {
                        code
                    };
                    *at(&mut by, types, t)
                        .log_errors
                        .entry(code.to_string())
                        .or_default() += 1;
                }
            }
        }
        for ((t, code), n) in w.errors() {
            *at(&mut by, types, t).replay_errors.entry(code).or_default() += n;
        }
        by.into_iter()
            .map(|(t, mut e)| {
                e.captured = captured.get(&t).copied().unwrap_or(0);
                e
            })
            .collect()
    }

    /// Per transaction type, the durations the log recorded for the statements that did not
    /// fail there (a failed statement's time is not a latency, as the replay's own latency
    /// leaves failures out); empty when the log recorded none.
    fn log_durations(&self) -> Vec<LogDurations> {
        let Some(w) = &self.workload else {
            return Vec::new();
        };
        let types = w.txn_types();
        let mut by: BTreeMap<u32, measure::Histogram> = BTreeMap::new();
        for p in w.plays() {
            for (st, &t) in p.session.statements.iter().zip(&p.types) {
                if let (Some(d), None) = (st.duration_us, &st.error) {
                    by.entry(t).or_default().record(d);
                }
            }
        }
        (by.into_iter())
            .filter_map(|(t, h)| Some(LogDurations::new(types.get(t as usize)?.name.clone(), h)))
            .collect()
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, _ctx: &Ctx) -> Result<()> {
        Err(Failure::usage(
            "a replay runs on a copy of the database its capture ran on",
            "give the target with -d/-h/-p/-U",
        ))
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let dialect = ctx.conn().dialect();
        let capture_on = match self.family {
            CaptureFamily::Postgres => sut::Dialect::Postgres,
            CaptureFamily::Mysql => sut::Dialect::MySql,
        };
        if dialect != capture_on {
            return Err(Failure::usage(
                format!(
                    "{} holds a {} capture, and the target is {}",
                    self.path.display(),
                    capture_on.name(),
                    dialect.name()
                ),
                "replay it on a server of the protocol it was captured on",
            ));
        }
        if let Some((plays, _)) = &self.job {
            if dialect == sut::Dialect::Postgres {
                let here = ctx.conn().database();
                let mut other: Vec<String> = (plays.iter())
                    .filter(|p| p.database != here)
                    .map(|p| p.database.clone())
                    .collect();
                other.sort();
                other.dedup();
                self.elsewhere = other;
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        let speed = match self.speed {
            Speed::Max => "max".to_string(),
            Speed::Factor(f) => format!("{f}x"),
        };
        let sessions = match (&self.workload, &self.job) {
            (Some(w), _) => w.plays().len(),
            (None, Some((plays, _))) => plays.len(),
            (None, None) => 0,
        };
        format!(
            "replay of {} ({}, {sessions} sessions, {} statements, speed {speed}{})",
            file_name(&self.path),
            self.format,
            self.statements,
            if self.strict { ", order strict" } else { "" }
        )
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        // Built now: a fleet's process knows its first client's id only once it joined.
        if let Some((plays, names)) = self.job.take() {
            let first = ctx.spec.first_client_id;
            let w = Replay::new(plays, names, self.speed, first, self.strict);
            self.workload = Some(Arc::new(w));
        }
        let w = self.workload.clone().expect("built just above");
        self.sampler = Some(locks::Sampler::start(ctx.conn().clone()));
        let o = engine::run(ctx.spec, w, ctx.conn(), interrupt::flag(), on_event)?;
        self.schedule = o.schedule;
        Ok(o)
    }

    fn finish(&mut self, _ctx: &Ctx) -> Result<Finish> {
        let Some(s) = self.sampler.take() else {
            return Ok(Finish::default());
        };
        let sampled = s.finish();
        if let Some(e) = &sampled.error {
            crate::console::warning(&format!(
                "replay: lock waits could not be sampled: {}",
                sut::conninfo::redact(e)
            ));
        }
        self.lock_waits = sampled.waits;
        Ok(Finish {
            commits: sampled.commits,
            connections: sampled.connections,
            ..Finish::default()
        })
    }

    /// What the sessions' wire saw commit: COMMITs and autocommitted statements (setup apart).
    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64 {
        outcome.server_commits - outcome.setup_commits + fin.commits
    }

    /// MySQL's `Com_commit` counts the COMMIT statements that were sent and committed.
    fn mysql_commits(&self, outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        Some(outcome.endpoint_commits.iter().sum())
    }

    /// The commit count reads the target database's `xact_commit`: sessions replayed on other
    /// databases commit where it cannot see.
    fn commit_status(
        &self,
        _ctx: &Ctx,
        c: crate::checks::CommitCheck,
        maintenance: i64,
    ) -> Result<(CheckStatus, String)> {
        if self.elsewhere.is_empty() {
            return Ok(crate::checks::commit_status(&c, maintenance));
        }
        Ok((
            CheckStatus::Skipped,
            format!(
                "skipped: sessions replayed on {} besides the target's database (run one replay \
                 per database with --only-database, each with its -d)",
                self.elsewhere.join(", ")
            ),
        ))
    }

    fn check_names(&self) -> &'static [&'static str] {
        &["statements sent"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        if !ctx.out.checks {
            return Ok(skipped_all(self.check_names(), "--no-check"));
        }
        let t = outcome.total.total();
        let sent = t.committed() + t.failed();
        let cut = outcome.interrupted
            || matches!(ctx.spec.stop, engine::Stop::Duration(_))
            || !outcome.aborted.is_empty();
        let status = match (sent == self.statements, cut) {
            (true, _) => CheckStatus::Passed,
            (false, true) => CheckStatus::Skipped,
            (false, false) => CheckStatus::Failed,
        };
        let why = match (&status, outcome.aborted.first()) {
            (CheckStatus::Skipped, Some(a)) => {
                format!(" (cut short: client {} aborted)", a.client_id)
            }
            (CheckStatus::Skipped, None) => " (cut short by -T or Ctrl-C)".to_string(),
            _ => String::new(),
        };
        Ok(vec![Check {
            name: "statements sent".into(),
            status,
            detail: format!(
                "{sent} of the capture's {} statements sent ({} answered, {} failed){why}",
                self.statements,
                t.committed(),
                t.failed()
            ),
        }])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        let types = (self.workload.as_ref())
            .map(|w| w.txn_types().to_vec())
            .unwrap_or_default();
        let weights = vec![1; types.len()];
        super::base_config(ctx, "replay".into(), &types, weights)
    }

    fn section(&self, r: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        let t = r.total.total();
        let s = &self.schedule;
        let captured_s = self.stats.duration_us as f64 / 1e6;
        report::section::keyed(&ReplaySection {
            capture: file_name(&self.path),
            format: self.format.to_string(),
            parsed: self.stats.clone(),
            speed: match self.speed {
                Speed::Max => None,
                Speed::Factor(f) => Some(f),
            },
            sessions: self.workload.as_ref().map_or(0, |w| w.plays().len() as u64),
            statements: self.statements,
            ok: t.committed(),
            failed: t.failed(),
            captured_s,
            replayed_s: r.measured_duration_s,
            behind: Behind {
                due: s.due,
                late: s.late,
                server_s: s.late_server_us as f64 / 1e6,
                client_s: s.late_client_us as f64 / 1e6,
                max_server_ms: s.max_server_us as f64 / 1e3,
                max_client_ms: s.max_client_us as f64 / 1e3,
                held: s.held,
                held_s: s.held_us as f64 / 1e6,
                max_held_ms: s.max_held_us as f64 / 1e3,
            },
            order: if self.strict { "strict" } else { "session" }.to_string(),
            errors: self.errors(),
            lock_waits: self.lock_waits.clone(),
            log_durations: self.log_durations(),
        })
    }
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
