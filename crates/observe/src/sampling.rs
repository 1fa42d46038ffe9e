//! One sampler shape for both protocols: the loop (an activity sample every `sample_interval`,
//! the counters and the OS figures every `counter_interval`, the window opened at
//! [`Ctl::Open`] (or [`Ctl::Start`]) and the end snapshot at [`Ctl::Finish`]), reopening a session that broke, the
//! record every sampler keeps ([`Record`]: the cost, the notes, counter and OS samples) and the
//! window's fold of it into [`ServerMetrics`]. Each protocol's sampler (`sampler` for
//! PostgreSQL, `mysql_sampler`) brings its sources through [`Flavour`]: what it reads, and how.
//!
//! Must not touch: any server; this module reads nothing itself but the OS figures.

use std::collections::BTreeMap;
use std::time::Instant;

use measure::server::{
    background_totals, wait_totals, ActivitySample, BackgroundSessions, BackgroundTotal,
    CounterSample, Note, ObserverCost, OsSample, ServerMetrics, WaitTotal,
};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::os::OsReader;
use crate::sampler::Ctl;
use crate::Options;

pub(crate) fn note(topic: &str, message: impl Into<String>) -> Note {
    Note {
        topic: topic.into(),
        message: message.into(),
    }
}

/// What a sampler keeps whatever the protocol.
pub(crate) struct Record {
    pub opts: Options,
    pub notes: Vec<Note>,
    pub cost: ObserverCost,
    pub started: Instant,
    /// The measured run's start (t = 0), once told.
    pub t0: Option<Instant>,
    pub counters: Vec<(Instant, BTreeMap<String, f64>)>,
    pub os_samples: Vec<(Instant, OsSample)>,
    pub os: Option<OsReader>,
    /// The server runs on this machine: the OS figures are its machine's.
    pub local: bool,
}

impl Record {
    /// A sampler's record from its first connection. The machine's OS figures are read either
    /// way: the server's machine when the server is `local`, else the client's (a note says
    /// when they cannot be read).
    pub fn new(opts: Options, local: bool) -> Record {
        let os = OsReader::new();
        let mut notes = Vec::new();
        if os.is_none() {
            notes.push(note("os", "/proc cannot be read: no OS metrics"));
        }
        Record {
            opts,
            notes,
            cost: ObserverCost {
                connections: 1,
                ..Default::default()
            },
            started: Instant::now(),
            t0: None,
            counters: Vec::new(),
            os_samples: Vec::new(),
            os,
            local,
        }
    }

    /// Watch the devices that hold the server's `files` ((path, what) pairs: the data directory,
    /// the WAL) when the server is on this machine; a note for each that cannot be.
    pub fn watch_devices(&mut self, files: &[(String, &str)]) {
        let Some(os) = self.os.as_mut() else {
            return;
        };
        if !self.local {
            return;
        }
        for (path, what) in files {
            if let Err(why) = os.watch(path, what) {
                self.notes.push(note(
                    "os",
                    format!("the {what}'s device is not watched on its own: {why}"),
                ));
            }
        }
    }

    /// The OS figures now, of the machine and of the server's processes `pids`.
    pub fn read_os(&mut self, pids: &[i32]) {
        let Some(os) = self.os.as_mut() else {
            return;
        };
        let r = Instant::now();
        if let Some(s) = os.read(pids) {
            self.os_samples.push((Instant::now(), s));
        }
        self.cost.busy_ms += r.elapsed().as_secs_f64() * 1000.0;
    }

    /// The window from `start` (the baseline's time) to `end` (the end snapshot's, or now when
    /// there is none), in milliseconds from the run's start (or the sampler's, when the run
    /// never started).
    pub fn window(&self, start: Option<Instant>, end: Option<Instant>) -> Window {
        let mut w = Window {
            t0: self.t0.unwrap_or(self.started),
            start_ms: 0,
            end_ms: 0,
        };
        w.start_ms = start.map(|at| w.rel(at)).unwrap_or(0);
        w.end_ms = w.rel(end.unwrap_or_else(Instant::now));
        w
    }

    /// The metrics both protocols have, from the record and the window's `activity`; the
    /// flavour sets the rest. Counters that `always` does not name and that never changed are
    /// moved out of the series into [`ServerMetrics::counter_constants`].
    pub fn metrics(
        &self,
        w: &Window,
        activity: Activity,
        server_version_num: u32,
        product: &str,
        always: impl Fn(&str) -> bool,
    ) -> ServerMetrics {
        let (counters, counter_constants) = split_constants(&self.counters, always);
        ServerMetrics {
            sample_interval_ms: self.opts.sample_interval.as_millis() as u64,
            counter_interval_ms: self.opts.counter_interval.as_millis() as u64,
            server_version_num,
            product: Some(product.into()),
            window_start_ms: w.start_ms,
            window_end_ms: w.end_ms,
            cost: self.cost.clone(),
            notes: self.notes.clone(),
            activity: activity.samples,
            waits: activity.waits,
            background: activity.background,
            counters: (self.counters.iter().zip(counters))
                .map(|((at, _), values)| CounterSample {
                    t_ms: w.rel(*at),
                    values,
                })
                .collect(),
            counter_constants,
            os_machine: (!self.os_samples.is_empty())
                .then(|| if self.local { "server" } else { "client" }.to_string()),
            os: (self.os_samples.iter())
                .map(|(at, s)| OsSample {
                    t_ms: w.rel(*at),
                    ..s.clone()
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Each sample's counters without those that `always` does not name and that had one value in
/// every sample (and in all of them), and those constants' values.
fn split_constants(
    samples: &[(Instant, BTreeMap<String, f64>)],
    always: impl Fn(&str) -> bool,
) -> (Vec<BTreeMap<String, f64>>, BTreeMap<String, f64>) {
    let mut constants: BTreeMap<String, f64> = BTreeMap::new();
    if let Some((_, first)) = samples.first() {
        for (k, v) in first {
            let same = |(_, s): &(Instant, BTreeMap<String, f64>)| s.get(k) == Some(v);
            if !always(k) && samples.len() > 1 && samples.iter().all(same) {
                constants.insert(k.clone(), *v);
            }
        }
    }
    let series = (samples.iter())
        .map(|(_, s)| {
            (s.iter())
                .filter(|(k, _)| !constants.contains_key(*k))
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        })
        .collect();
    (series, constants)
}

/// The measured window, in milliseconds from `t0`.
pub(crate) struct Window {
    t0: Instant,
    pub start_ms: i64,
    pub end_ms: i64,
}

/// The activity samples in milliseconds from t0, and the wait and background totals of those in
/// the window.
pub(crate) struct Activity {
    pub samples: Vec<ActivitySample>,
    pub waits: Vec<WaitTotal>,
    pub background: Vec<BackgroundTotal>,
}

impl Window {
    /// `at` in milliseconds from t0 (negative before it).
    pub fn rel(&self, at: Instant) -> i64 {
        if at >= self.t0 {
            at.duration_since(self.t0).as_millis() as i64
        } else {
            -(self.t0.duration_since(at).as_millis() as i64)
        }
    }

    pub fn contains(&self, t_ms: i64) -> bool {
        t_ms >= self.start_ms && t_ms <= self.end_ms
    }

    /// Fold the samples (each: when, what, its background sessions).
    pub fn activity<'a>(
        &self,
        samples: impl Iterator<Item = (Instant, &'a ActivitySample, &'a BackgroundSessions)> + Clone,
    ) -> Activity {
        let activity: Vec<ActivitySample> = samples
            .clone()
            .map(|(at, s, _)| ActivitySample {
                t_ms: self.rel(at),
                ..s.clone()
            })
            .collect();
        let waits = wait_totals(activity.iter().filter(|s| self.contains(s.t_ms)));
        let background = background_totals(
            samples
                .filter(|(at, _, _)| self.contains(self.rel(*at)))
                .map(|(_, _, b)| b),
        );
        Activity {
            samples: activity,
            waits,
            background,
        }
    }
}

/// End minus start of every counter present in both; whether any that `is_gauge` does not call a
/// level went down (a reset).
pub(crate) fn deltas(
    a: &BTreeMap<String, f64>,
    b: &BTreeMap<String, f64>,
    is_gauge: impl Fn(&str) -> bool,
) -> (BTreeMap<String, f64>, bool) {
    let mut out = BTreeMap::new();
    let mut reset = false;
    for (k, y) in b {
        if let Some(x) = a.get(k) {
            let d = y - x;
            if d < 0.0 && !is_gauge(k) {
                reset = true;
            }
            out.insert(k.clone(), d);
        }
    }
    (out, reset)
}

/// What a protocol's sampler brings to the loop.
pub(crate) trait Flavour {
    type Err: std::fmt::Display;
    fn record(&mut self) -> &mut Record;
    /// Whether the session can still be used (a broken one is reopened).
    fn usable(&self) -> bool;
    /// The window opens ([`Ctl::Start`]; the record's t0 is set): the baseline snapshot.
    async fn open_window(&mut self);
    async fn sample_activity(&mut self) -> Result<(), Self::Err>;
    /// What else a tick reads, after the activity: the counters when `counters_due`.
    async fn read_more(&mut self, counters_due: bool);
    /// The server's processes whose OS figures are read.
    fn server_pids(&self) -> Vec<i32>;
    /// A new session in place of the broken one, set up: Ok(false) when the setup failed.
    async fn reopen(&mut self) -> Result<bool, Self::Err>;
    /// The end snapshot and the metrics.
    async fn finish(self) -> ServerMetrics;
}

/// The loop: sample until [`Ctl::Finish`] (or the handle is dropped), then the final snapshot.
pub(crate) async fn run<F: Flavour>(mut f: F, mut ctl: UnboundedReceiver<Ctl>) -> ServerMetrics {
    let opts = f.record().opts.clone();
    let mut tick = tokio::time::interval(opts.sample_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_counters = Instant::now();
    let mut opened = false;
    loop {
        tokio::select! {
            biased;
            m = ctl.recv() => match m {
                Some(Ctl::Open(done)) => {
                    f.open_window().await;
                    opened = true;
                    let _ = done.send(());
                }
                Some(Ctl::Start(at)) => {
                    f.record().t0 = Some(at);
                    if !opened {
                        f.open_window().await;
                        opened = true;
                    }
                }
                Some(Ctl::Finish) | None => break,
            },
            _ = tick.tick() => {
                let t = Instant::now();
                if let Err(e) = f.sample_activity().await {
                    f.record().cost.errors += 1;
                    if !f.usable() && !reconnect(&mut f, &e).await {
                        break;
                    }
                }
                let counters_due = Instant::now() >= next_counters;
                if counters_due {
                    next_counters += opts.counter_interval;
                }
                f.read_more(counters_due).await;
                let pids = f.server_pids();
                let rec = f.record();
                // The machine at the counters' pace: a disk's latency or queue over 100 ms is
                // noise, and a device list ten times a second would swell the result.
                if counters_due {
                    rec.read_os(&pids);
                }
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                rec.cost.max_sample_ms = rec.cost.max_sample_ms.max(ms);
            }
        }
    }
    f.finish().await
}

/// The session broke (server restart, idle timeout): open a new one and carry on; false when
/// sampling must stop.
async fn reconnect<F: Flavour>(f: &mut F, e: &F::Err) -> bool {
    let first = f.record().cost.errors == 1;
    match f.reopen().await {
        Ok(ok) => {
            let rec = f.record();
            rec.cost.connections += 1;
            if first {
                rec.notes.push(note(
                    "sampling",
                    format!("the observer's session broke ({e}) and was reopened"),
                ));
            }
            ok
        }
        Err(e2) => {
            f.record().notes.push(note(
                "sampling",
                format!(
                    "the observer's session broke ({e}) and could not be reopened ({e2}): \
                     sampling stopped early"
                ),
            ));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_leave_the_series_unless_kept_and_nothing_is_lost() {
        let at = Instant::now();
        let sample = |pairs: &[(&str, f64)]| {
            let m: BTreeMap<String, f64> = pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            (at, m)
        };
        let samples = vec![
            sample(&[
                ("a.moves", 1.0),
                ("a.still", 7.0),
                ("kept.still", 3.0),
                ("late", 1.0),
            ]),
            sample(&[("a.moves", 2.0), ("a.still", 7.0), ("kept.still", 3.0)]),
        ];
        let (series, constants) = split_constants(&samples, |k| k.starts_with("kept."));
        assert_eq!(constants.len(), 1);
        assert_eq!(constants["a.still"], 7.0);
        // A counter missing from a sample is not constant; a kept one stays.
        assert_eq!(series[0].len(), 3);
        assert_eq!(series[1].len(), 2);
        assert!(series
            .iter()
            .all(|s| s.contains_key("kept.still") && !s.contains_key("a.still")));
        // One sample: nothing can be called constant.
        let (one, none) = split_constants(&samples[..1], |_| false);
        assert!(none.is_empty() && one[0].len() == 4);
    }
}
