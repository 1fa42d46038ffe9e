//! The rows a load reported, second by second: the loaders' [`load::Event`]s (each table's rows
//! so far, about every 100 ms and once at the end of the rows step; each step's start and
//! length) become the `load` section's steps, rows per table and per-second series.
//!
//! Owns the arithmetic only (pure, given the instant of each event). Must not touch the
//! loaders, the observer or output.
//!
//! The counting identity: each second's rows are the difference of the tables' rows so far at
//! the last event in it and at the last event before it, so the series adds up to the rows of
//! the last event, which is the loader's own count (`load::driver` sends its final counts last,
//! the same numbers its report gives). A table's rows so far restart at 0 when a step starts
//! (each rows step has its own progress slots), so the rows of the steps before are carried.

use std::time::Instant;

use load::Event;

use super::section::{LoadStep, LoadedTable, RowsSecond};

/// What a load reported so far.
pub(crate) struct Recorder {
    t0: Instant,
    /// The tables, in the order the loader first reported them.
    names: Vec<String>,
    /// Rows of each table in the steps before the current one.
    earlier: Vec<u64>,
    /// Rows of each table so far in the current step.
    current: Vec<u64>,
    /// Rows of each table so far at the end of each second (index s: the second ending at
    /// s + 1), from the last event in it.
    seconds: Vec<Vec<u64>>,
    steps: Vec<LoadStep>,
    /// The current step and when it started (s since `t0`).
    open: Option<(&'static str, f64)>,
    /// When the last event came (s since `t0`).
    last_s: f64,
}

/// What [`Recorder::finish`] gives.
pub(crate) struct Recorded {
    pub steps: Vec<LoadStep>,
    pub tables: Vec<LoadedTable>,
    pub series: Vec<RowsSecond>,
    /// From `t0` to the last event, s (0 when there was none).
    pub seconds: f64,
}

impl Recorder {
    /// Seconds count from `t0`, the load's start (the observer's window opens at the same
    /// instant).
    pub(crate) fn new(t0: Instant) -> Recorder {
        Recorder {
            t0,
            names: Vec::new(),
            earlier: Vec::new(),
            current: Vec::new(),
            seconds: Vec::new(),
            steps: Vec::new(),
            open: None,
            last_s: 0.0,
        }
    }

    fn since(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.t0).as_secs_f64()
    }

    /// One event of the loader, which came at `at`.
    pub(crate) fn event(&mut self, e: &Event<'_>, at: Instant) {
        let s = self.since(at);
        self.last_s = self.last_s.max(s);
        match e {
            Event::StepStarted(name) => {
                for (e, c) in self.earlier.iter_mut().zip(&mut self.current) {
                    *e += std::mem::take(c);
                }
                self.open = Some((name, s));
            }
            Event::Rows { tables, .. } => {
                for t in tables.iter() {
                    let i = match self.names.iter().position(|n| *n == t.table) {
                        Some(i) => i,
                        None => {
                            self.names.push(t.table.clone());
                            self.earlier.push(0);
                            self.current.push(0);
                            self.names.len() - 1
                        }
                    };
                    self.current[i] = t.rows_done;
                }
                self.mark(s);
            }
            Event::StepFinished { step, elapsed } => {
                let start_s = match self.open.take() {
                    Some((name, start)) if name == *step => start,
                    _ => (s - elapsed.as_secs_f64()).max(0.0),
                };
                self.steps.push(LoadStep {
                    name: step.to_string(),
                    start_s,
                    seconds: elapsed.as_secs_f64(),
                });
            }
            Event::Notice(_) => {}
        }
    }

    fn so_far(&self) -> Vec<u64> {
        self.earlier
            .iter()
            .zip(&self.current)
            .map(|(e, c)| e + c)
            .collect()
    }

    /// The rows so far become the figure of the second `s` falls in; the seconds before it
    /// without an event keep the figure of the one before them.
    fn mark(&mut self, s: f64) {
        let i = s.floor() as usize;
        self.fill(i);
        let now = self.so_far();
        match self.seconds.get_mut(i) {
            Some(x) => *x = now,
            None => self.seconds.push(now),
        }
    }

    /// Seconds up to (not including) `i`, each with the figure of the one before.
    fn fill(&mut self, i: usize) {
        while self.seconds.len() < i {
            let last = self.seconds.last().cloned().unwrap_or_default();
            self.seconds.push(last);
        }
    }

    /// The steps, each table's rows and the rows loaded in each second, up to the last event.
    pub(crate) fn finish(mut self) -> Recorded {
        let n = self.names.len();
        let at = |v: &Vec<u64>, j: usize| v.get(j).copied().unwrap_or(0);
        if !self.seconds.is_empty() {
            self.fill(self.last_s.ceil() as usize);
        }
        let mut before = vec![0u64; n];
        let series = (self.seconds.iter().enumerate())
            .map(|(i, so_far)| {
                let by_table: Vec<u64> = (0..n)
                    .map(|j| at(so_far, j).saturating_sub(before[j]))
                    .collect();
                before = (0..n).map(|j| at(so_far, j)).collect();
                RowsSecond {
                    t_s: i as u64 + 1,
                    rows: by_table.iter().sum(),
                    by_table,
                }
            })
            .collect();
        let rows = self.so_far();
        Recorded {
            steps: self.steps,
            tables: (self.names.into_iter().zip(rows))
                .map(|(name, rows)| LoadedTable { name, rows })
                .collect(),
            series,
            seconds: self.last_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use load::TableProgress;

    use super::*;

    fn rows(r: &mut Recorder, t0: Instant, ms: u64, done: &[(&str, u64)]) {
        let tables: Vec<TableProgress> = (done.iter())
            .map(|(t, n)| TableProgress {
                table: t.to_string(),
                rows_done: *n,
                rows_total: 0,
            })
            .collect();
        let e = Event::Rows {
            tables: &tables,
            elapsed: Duration::ZERO,
        };
        r.event(&e, t0 + Duration::from_millis(ms));
    }

    #[test]
    fn each_second_holds_the_rows_loaded_in_it_and_they_add_up_to_the_loaders_count() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0);
        r.event(&Event::StepStarted("client-side generate"), t0);
        rows(&mut r, t0, 400, &[("a", 10), ("b", 100)]);
        rows(&mut r, t0, 900, &[("a", 20), ("b", 300)]);
        // Nothing reported in the second second; the third brings the rest.
        rows(&mut r, t0, 2_500, &[("a", 20), ("b", 1_000)]);
        r.event(
            &Event::StepFinished {
                step: "client-side generate",
                elapsed: Duration::from_millis(2_500),
            },
            t0 + Duration::from_millis(2_500),
        );
        r.event(
            &Event::StepStarted("primary keys"),
            t0 + Duration::from_millis(2_600),
        );
        r.event(
            &Event::StepFinished {
                step: "primary keys",
                elapsed: Duration::from_millis(1_000),
            },
            t0 + Duration::from_millis(3_600),
        );
        let d = r.finish();
        let per_s: Vec<(u64, u64, Vec<u64>)> = (d.series.iter())
            .map(|s| (s.t_s, s.rows, s.by_table.clone()))
            .collect();
        assert_eq!(
            per_s,
            [
                (1, 320, vec![20, 300]),
                (2, 0, vec![0, 0]),
                (3, 700, vec![0, 700]),
                (4, 0, vec![0, 0]),
            ]
        );
        let total: u64 = d.series.iter().map(|s| s.rows).sum();
        let loaded: u64 = d.tables.iter().map(|t| t.rows).sum();
        assert_eq!((total, loaded), (1_020, 1_020));
        assert_eq!(d.tables[1].name, "b");
        assert_eq!(d.steps.len(), 2);
        assert_eq!((d.steps[1].start_s, d.steps[1].seconds), (2.6, 1.0));
        assert_eq!(d.seconds, 3.6);
    }

    #[test]
    fn a_second_rows_step_adds_to_the_first_s_rows() {
        let t0 = Instant::now();
        let mut r = Recorder::new(t0);
        r.event(&Event::StepStarted("one"), t0);
        rows(&mut r, t0, 100, &[("a", 5)]);
        r.event(&Event::StepStarted("two"), t0 + Duration::from_millis(200));
        rows(&mut r, t0, 300, &[("a", 2), ("c", 7)]);
        let d = r.finish();
        assert_eq!(d.tables[0].rows, 7);
        assert_eq!(d.tables[1].rows, 7);
        assert_eq!(d.series.len(), 1);
        assert_eq!(d.series[0].rows, 14);
    }

    #[test]
    fn a_load_without_progress_events_has_no_series() {
        let t0 = Instant::now();
        let d = Recorder::new(t0).finish();
        assert!(d.series.is_empty() && d.tables.is_empty() && d.steps.is_empty());
    }
}
