//! `stampede init` watched like a run (issue 32, item 2; seed 000 reads the top SQL, the wait
//! events and the rows/s of the load): the observer around the load, the loader's events
//! counted per second (`rows`), one line on standard error with what the server waited on and
//! the statements that took its time, and, with `--json`/`--html`, a result: the `load`
//! section (`section`), `server_metrics`, the sizes after the load, written by the run's own
//! output files (`files::RunOutputs`).
//!
//! Owns [`InitOutputs`] (what init was asked to keep), [`Watcher`] (the observer and the
//! counting during the load) and [`Watched::save`] (the result). Must not touch the loaders,
//! their options or their existing lines on standard error (init's and the drop-ins' output
//! stays as it was; the drop-ins never come here), nor read the sizes itself: `run::sizes` is
//! above `families`, so `commands::init_observed` reads them and hands them in.
//!
//! The observer is on by default and `--no-observe` turns it off, as for `stampede run`: a run
//! watches the server whether or not it writes a file, because its summary says where the time
//! went, and init says the same in its one line; seed 000 asks for the load's top SQL from any
//! init. The window opens (`SamplerHandle::open_window`, the baseline snapshot) and the times
//! start (`mark_start`) before the loader's first statement, so the statement deltas hold all
//! of the load's; it closes after the last step (`finish` waits for the loaders' sessions to go,
//! so their statistics are flushed).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime};

use anyhow::Result;
use load::Event;
use measure::ServerMetrics;
use report::RunResult;

use super::rows::Recorder;
use super::section::{Load, LoadStep, LoadedTable, RowsSecond};
use crate::environment;
use crate::files::RunOutputs;
use crate::targeting;

/// What `init` keeps besides its tables: `--json`, `--html` (checked before any I/O, as a
/// run's) and whether the server is watched (`--no-observe`).
#[derive(Default)]
pub(crate) struct InitOutputs {
    files: RunOutputs,
    /// A result file was asked for.
    result: bool,
    observe: bool,
}

impl InitOutputs {
    /// From init's options; a bad path is a usage error now, before anything connects.
    pub(crate) fn check(
        json: Option<&Path>,
        html: Option<&Path>,
        no_observe: bool,
    ) -> Result<InitOutputs> {
        Ok(InitOutputs {
            files: RunOutputs::check(json, html, &[])?,
            result: json.is_some() || html.is_some(),
            observe: !no_observe,
        })
    }

    /// Whether a result is to be written (`--json` or `--html`).
    pub(crate) fn wants_result(&self) -> bool {
        self.result
    }
}

/// A load being watched: the observer (when on) and the loader's events counted.
pub(crate) struct Watcher {
    sampler: Option<observe::SamplerHandle>,
    started: SystemTime,
    rows: Recorder,
    t0: Instant,
}

impl Watcher {
    /// Start watching, just before the load's first statement (module notes).
    pub(crate) fn start(
        rt: &tokio::runtime::Runtime,
        target: &targeting::Target,
        out: &InitOutputs,
    ) -> Watcher {
        if out.observe && target.embedded.is_some() {
            // As a run on it does (`run::measure`): the embedded server preloads
            // pg_stat_statements, whose views need the extension in the database (never created
            // on a server stampede did not start).
            let created = rt.block_on(async {
                let mut s = sut::Session::connect(&target.conn).await?;
                let r = s
                    .simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    .await;
                s.close().await;
                r.map(|_| ())
            });
            if let Err(e) = created {
                crate::console::warning(&format!(
                    "pg_stat_statements could not be created on the embedded server ({e}): no \
                     top SQL"
                ));
            }
        }
        let sampler = match out.observe {
            true => crate::families::start_observer(&target.conn),
            false => None,
        };
        if let Some(h) = &sampler {
            h.open_window();
        }
        let t0 = Instant::now();
        if let Some(h) = &sampler {
            h.mark_start(t0);
        }
        Watcher {
            sampler,
            started: SystemTime::now(),
            rows: Recorder::new(t0),
            t0,
        }
    }

    /// One of the loader's events (beside the `LoadView` that shows it).
    pub(crate) fn event(&mut self, e: &Event<'_>) {
        self.rows.event(e, Instant::now());
    }

    /// Stop watching once the load ended: the observer's end snapshot, and its line on
    /// standard error.
    pub(crate) fn stop(self) -> Watched {
        let took = self.t0.elapsed().as_secs_f64();
        let metrics = self.sampler.map(|h| h.finish());
        if let Some(m) = &metrics {
            eprintln!("{}", said(m));
        }
        let rec = self.rows.finish();
        Watched {
            metrics,
            started: self.started,
            // The last step's end when the loader said it; else until now.
            seconds: if rec.steps.is_empty() {
                took
            } else {
                rec.seconds
            },
            steps: rec.steps,
            tables: rec.tables,
            series: rec.series,
        }
    }
}

/// The one line init says about the server after the load: its top waits and the three
/// statements that took it the most time.
fn said(m: &ServerMetrics) -> String {
    let top: Vec<String> = (m.statements.iter().take(3))
        .map(|s| {
            format!(
                "{:.0} ms {}",
                s.total_exec_time_ms,
                report::one_line(&s.query, 60)
            )
        })
        .collect();
    format!(
        "waits during the load (average active sessions): {}; top SQL by time: {}",
        report::waits_words(m, 5),
        if top.is_empty() {
            "none recorded".to_string()
        } else {
            top.join("; ")
        }
    )
}

/// A load watched, for its result.
pub(crate) struct Watched {
    metrics: Option<ServerMetrics>,
    started: SystemTime,
    seconds: f64,
    steps: Vec<LoadStep>,
    tables: Vec<LoadedTable>,
    series: Vec<RowsSecond>,
}

/// What was loaded, as the command line said it: for the `load` section.
pub(crate) struct Described {
    /// The tables' name as `init` takes it: tpcb, oltp, tpcc, ycsb, iibench, crud.
    pub workload: String,
    pub parameters: BTreeMap<String, serde_json::Value>,
    pub jobs: u32,
    /// The tables and their rows, for a loader that reports no progress (`init iibench`,
    /// `init crud`, `init oltp --bulk-insert`); ignored when the loader reported its own.
    pub tables: Vec<LoadedTable>,
    /// The one step of a loader that reports none.
    pub step: &'static str,
}

impl Watched {
    /// The `load` section.
    fn section(&self, d: Described) -> Load {
        let mut notes = Vec::new();
        let tables = if self.tables.is_empty() {
            notes.push(
                "this loader reports no progress while it loads: the rows per second are not \
                 known, only the rows over the whole load"
                    .into(),
            );
            d.tables
        } else {
            self.tables.clone()
        };
        let steps = if self.steps.is_empty() {
            vec![LoadStep {
                name: d.step.into(),
                start_s: 0.0,
                seconds: self.seconds,
            }]
        } else {
            self.steps.clone()
        };
        Load {
            workload: d.workload,
            parameters: d.parameters,
            jobs: d.jobs,
            seconds: self.seconds,
            steps,
            tables,
            series: self.series.clone(),
            notes,
        }
    }

    /// The result of the load (cache curve's shape: a family section in place of the run's
    /// figures, the server as observed), written to `--json` and `--html`: true when every
    /// file was written (each failure said). Nothing when no file was asked for.
    pub(crate) fn save(
        self,
        rt: &tokio::runtime::Runtime,
        target: &targeting::Target,
        out: &InitOutputs,
        d: Described,
        sizes: Option<measure::sizes::Sizes>,
        interrupted: bool,
    ) -> bool {
        if !out.wants_result() {
            return true;
        }
        // What ran where; a server that does not answer now leaves the environment empty
        // rather than the load unsaved.
        let server = rt.block_on(async {
            let mut s = sut::Session::connect(&target.conn).await.ok()?;
            let info = environment::server_info(&mut s).await.ok();
            s.close().await;
            info
        });
        let environment = server
            .map(|i| environment::environment_info(&i, environment::client_info()))
            .unwrap_or_default();
        let jobs = d.jobs;
        let workload = format!("init {}", d.workload);
        let load = self.section(d);
        let r = RunResult {
            command_line: environment::command_line(),
            started_at: report::format_rfc3339_utc(self.started),
            measured_duration_s: load.seconds,
            config: report::RunConfig {
                workload,
                clients: jobs,
                threads: 1,
                // The loaders send simple queries and COPY (the schema names pgbench's modes).
                query_mode: "simple".into(),
                ..Default::default()
            },
            target: targeting::target_info(target),
            environment,
            connections: report::ConnectionStats {
                clients: jobs,
                ..Default::default()
            },
            sections: report::section::keyed(&load)
                .map(|(k, v)| (k.to_string(), v))
                .into_iter()
                .collect(),
            server_metrics: self.metrics,
            sizes: sizes.into_iter().collect(),
            interrupted,
            ..Default::default()
        };
        out.files.save(&r, "result")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_top_waits_and_three_statements_on_one_line_each() {
        let mut m = ServerMetrics::default();
        m.waits.push(measure::server::WaitTotal {
            event: "CPU".into(),
            samples: 9,
            aas: 0.9,
        });
        for (q, ms) in [
            (
                "copy pgbench_accounts\n  from stdin with (freeze on)",
                812.4,
            ),
            ("vacuum analyze pgbench_accounts", 120.0),
            ("alter table pgbench_accounts add primary key (aid)", 90.0),
            ("select 1", 1.0),
        ] {
            m.statements.push(measure::server::StatementDelta {
                query: q.into(),
                total_exec_time_ms: ms,
                ..Default::default()
            });
        }
        let line = said(&m);
        assert_eq!(
            line,
            "waits during the load (average active sessions): CPU 0.90; top SQL by time: 812 ms \
             copy pgbench_accounts from stdin with (freeze on); 120 ms vacuum analyze \
             pgbench_accounts; 90 ms alter table pgbench_accounts add primary key (aid)"
        );
        assert!(said(&ServerMetrics::default())
            .ends_with("none sampled; top SQL by time: none recorded"));
        // Cut as the report's top SQL is: at 60 characters, the last three "...".
        assert_eq!(report::one_line(&"x".repeat(70), 60).len(), 60);
    }
}
