//! A replay's part of a result (`stampede replay`), under the key `replay`: what was read
//! (the parse statistics pgreplay prints), how it was replayed (speed, sessions, statements
//! sent), how far behind the captured schedule it ran and whose fault that was (the server's:
//! a session still waiting for its previous answer; the client's: its own loop late), and per
//! fingerprint the errors the log recorded beside the errors the replay met. The latency of
//! each fingerprint is the run's per-type latency (one type per fingerprint,
//! `super::workload`), so it is not repeated here; the durations the log recorded for each
//! fingerprint are (`log_durations`, the baseline of `stampede compare --against-log`).
//!
//! Must not touch: the replay itself, the checks.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::capture::Stats;
use super::locks::LockWait;
use report::compare::statements::LogDurations;

/// Lag behind the captured schedule, split (`engine::ScheduleLag`), in seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Behind {
    /// Statements sent on the schedule (0 at `--speed max`).
    pub due: u64,
    /// Of those, the ones sent more than 1 ms late.
    pub late: u64,
    /// Summed lateness while the session still waited for the server's previous answer.
    pub server_s: f64,
    /// Summed lateness of the client itself (its thread busy, its timer late).
    pub client_s: f64,
    pub max_server_ms: f64,
    pub max_client_ms: f64,
    /// `--order strict`: statements held until the statements that ended before them in the
    /// capture were answered, and for how long (part of the lag, neither the server's share
    /// nor the client's; also at `--speed max`).
    #[serde(default)]
    pub held: u64,
    #[serde(default)]
    pub held_s: f64,
    #[serde(default)]
    pub max_held_ms: f64,
}

/// One fingerprint's errors: the log's and the replay's, by SQLSTATE or error code.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FingerprintErrors {
    pub fingerprint: String,
    pub captured: u64,
    pub log_errors: BTreeMap<String, u64>,
    pub replay_errors: BTreeMap<String, u64>,
}

/// A replay's section of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplaySection {
    /// The capture's file name (no directories).
    pub capture: String,
    /// `stderr`, `csvlog`, `jsonlog`, `general`, `slow` or `replay` (a replay file).
    pub format: String,
    /// The parse statistics of the whole capture (before a fleet's share).
    pub parsed: Stats,
    /// The speed factor; `None` for `--speed max`.
    pub speed: Option<f64>,
    /// `session` (each session's own order) or `strict` (the capture's order across
    /// sessions too, `--order strict`).
    #[serde(default)]
    pub order: String,
    /// Sessions and statements this process replayed.
    pub sessions: u64,
    pub statements: u64,
    /// Statements sent and answered without error, and with one.
    pub ok: u64,
    pub failed: u64,
    /// From the first captured statement's start to the last one's end, seconds.
    pub captured_s: f64,
    /// The replay's measured time, seconds.
    pub replayed_s: f64,
    pub behind: Behind,
    /// Every fingerprint with errors in the log or in the replay (the text names those
    /// whose errors differ).
    pub errors: Vec<FingerprintErrors>,
    /// Pairs of statements seen waiting one for the other's lock, most often seen first
    /// (`super::locks`).
    #[serde(default)]
    pub lock_waits: Vec<LockWait>,
    /// Per fingerprint with a transaction type, the durations the log recorded for the
    /// statements this process replayed that did not fail there (empty when the log records
    /// none: `log_statement = all`, MySQL's general log). The baseline of `stampede compare
    /// --against-log`, whose reader owns the type.
    #[serde(default)]
    pub log_durations: Vec<LogDurations>,
}

/// What a log writes for an error whose SQLSTATE it does not record (a stderr log without
/// `%e` in its `log_line_prefix`).
pub const UNNAMED: &str = "unnamed";

impl FingerprintErrors {
    /// Whether the log's errors and the replay's differ: in number, or in their codes where
    /// the log names them.
    pub fn differ(&self) -> bool {
        let sum = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
        if self.log_errors.contains_key(UNNAMED) {
            return sum(&self.log_errors) != sum(&self.replay_errors);
        }
        self.log_errors != self.replay_errors
    }
}

impl report::section::Section for ReplaySection {
    const KEY: &'static str = "replay";
}

pub(crate) struct View;
pub(crate) static VIEW: View = View;

fn lines(r: &ReplaySection) -> Vec<String> {
    let speed = r.speed.map_or("max".to_string(), |s| format!("{s}x"));
    let mut v = vec![format!(
        "replay: {} statements of {} sessions ({} ok, {} failed) at speed {speed}; captured \
         over {:.3} s, replayed in {:.3} s",
        r.statements, r.sessions, r.ok, r.failed, r.captured_s, r.replayed_s
    )];
    let b = &r.behind;
    if b.held > 0 {
        v.push(format!(
            "held for the capture's order: {} statements, {:.3} s in all (max {:.1} ms)",
            b.held, b.held_s, b.max_held_ms
        ));
    }
    if b.due > 0 {
        v.push(format!(
            "behind schedule: {} of {} statements late; the server's share {:.3} s (max {:.1} \
             ms), the client's {:.3} s (max {:.1} ms)",
            b.late, b.due, b.server_s, b.max_server_ms, b.client_s, b.max_client_ms
        ));
    }
    for l in &r.lock_waits {
        v.push(format!(
            "lock wait: {} waited for {} ({} sample{}, longest {:.0} ms)",
            report::one_line(&l.waiting, 60),
            report::one_line(&l.blocking, 60),
            l.samples,
            if l.samples == 1 { "" } else { "s" },
            l.longest_ms
        ));
    }
    for e in r.errors.iter().filter(|e| e.differ()) {
        let show = |m: &BTreeMap<String, u64>| {
            if m.is_empty() {
                "none".to_string()
            } else {
                m.iter()
                    .map(|(k, n)| format!("{k} x{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        v.push(format!(
            "errors differ: {} (log: {}; replay: {})",
            report::one_line(&e.fingerprint, 80),
            show(&e.log_errors),
            show(&e.replay_errors)
        ));
    }
    v
}

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <ReplaySection as report::section::Section>::KEY
    }

    fn summary_lines(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(r) = ReplaySection::deserialize(v) {
            for l in lines(&r) {
                let _ = writeln!(o, "{l}");
            }
        }
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(r) = ReplaySection::deserialize(v) {
            let _ = write!(o, "<section id=\"replay\"><h2>Replay</h2>");
            for l in lines(&r) {
                let _ = write!(o, "<p>{}</p>", report::svg::esc(&l));
            }
            let _ = write!(o, "</section>");
        }
    }

    /// A fleet's processes replay disjoint sessions: counts and lags add up, the captured
    /// time is the capture's, the replayed time the merged run's. The log's durations merge
    /// exactly: each fingerprint's histograms are merged and its count, p50, p99 and total
    /// read again from the merged one.
    fn merge(
        &self,
        parts: &[Option<&serde_json::Value>],
        merged: &report::RunResult,
    ) -> Option<serde_json::Value> {
        let mut all: Option<ReplaySection> = None;
        let mut errors: BTreeMap<String, FingerprintErrors> = BTreeMap::new();
        let mut waits: BTreeMap<(String, String), LockWait> = BTreeMap::new();
        let mut durations: BTreeMap<String, measure::Histogram> = BTreeMap::new();
        for p in parts {
            let r = ReplaySection::deserialize((*p)?).ok()?;
            for d in &r.log_durations {
                (durations.entry(d.fingerprint.clone()).or_default()).merge(&d.latency);
            }
            for l in &r.lock_waits {
                let m =
                    (waits.entry((l.waiting.clone(), l.blocking.clone()))).or_insert_with(|| {
                        LockWait {
                            waiting: l.waiting.clone(),
                            blocking: l.blocking.clone(),
                            ..Default::default()
                        }
                    });
                m.samples += l.samples;
                m.longest_ms = m.longest_ms.max(l.longest_ms);
            }
            for e in &r.errors {
                let m = errors
                    .entry(e.fingerprint.clone())
                    .or_insert_with(|| FingerprintErrors {
                        fingerprint: e.fingerprint.clone(),
                        ..Default::default()
                    });
                m.captured += e.captured;
                for (k, n) in &e.log_errors {
                    *m.log_errors.entry(k.clone()).or_default() += n;
                }
                for (k, n) in &e.replay_errors {
                    *m.replay_errors.entry(k.clone()).or_default() += n;
                }
            }
            let Some(a) = &mut all else {
                all = Some(ReplaySection {
                    errors: Vec::new(),
                    lock_waits: Vec::new(),
                    log_durations: Vec::new(),
                    ..r
                });
                continue;
            };
            a.sessions += r.sessions;
            a.statements += r.statements;
            a.ok += r.ok;
            a.failed += r.failed;
            let (b, o) = (&mut a.behind, &r.behind);
            b.due += o.due;
            b.late += o.late;
            b.server_s += o.server_s;
            b.client_s += o.client_s;
            b.max_server_ms = b.max_server_ms.max(o.max_server_ms);
            b.max_client_ms = b.max_client_ms.max(o.max_client_ms);
            b.held += o.held;
            b.held_s += o.held_s;
            b.max_held_ms = b.max_held_ms.max(o.max_held_ms);
        }
        let mut a = all?;
        a.replayed_s = merged.measured_duration_s;
        a.errors = errors.into_values().collect();
        a.lock_waits = waits.into_values().collect();
        a.lock_waits.sort_by_key(|w| std::cmp::Reverse(w.samples));
        a.log_durations = (durations.into_iter())
            .map(|(f, h)| LogDurations::new(f, h))
            .collect();
        serde_json::to_value(a).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::section::View as _;

    /// `sessions` statements of 100, 200, ... us.
    fn durations(sessions: u64) -> measure::Histogram {
        let mut h = measure::Histogram::new();
        for i in 1..=sessions {
            h.record(100 * i);
        }
        h
    }

    fn part(sessions: u64, replay_errors: &[(&str, u64)]) -> ReplaySection {
        ReplaySection {
            capture: "pg.csv".into(),
            format: "csvlog".into(),
            speed: Some(1.0),
            order: "session".into(),
            sessions,
            statements: 10 * sessions,
            ok: 10 * sessions - 1,
            failed: 1,
            captured_s: 2.0,
            replayed_s: 2.1,
            behind: Behind {
                due: 10 * sessions,
                late: 2,
                server_s: 0.5,
                client_s: 0.25,
                max_server_ms: 300.0,
                max_client_ms: 10.0,
                ..Behind::default()
            },
            errors: vec![FingerprintErrors {
                fingerprint: "INSERT INTO t VALUES (?)".into(),
                captured: sessions,
                log_errors: [("23505".to_string(), 1)].into(),
                replay_errors: (replay_errors.iter())
                    .map(|(k, n)| (k.to_string(), *n))
                    .collect(),
            }],
            lock_waits: vec![LockWait {
                waiting: "UPDATE t SET v = ? WHERE id = ?".into(),
                blocking: "UPDATE t SET v = ? WHERE id = ?".into(),
                samples: sessions,
                longest_ms: 120.0,
            }],
            log_durations: vec![LogDurations::new(
                "INSERT INTO t VALUES (?)".into(),
                durations(sessions),
            )],
            ..Default::default()
        }
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        let v = serde_json::to_value(part(2, &[("23505", 1)])).unwrap();
        let wrong = report::section::schema_mismatches("replay", &v, &[], &[]);
        assert_eq!(wrong, Vec::<String>::new());
    }

    #[test]
    fn the_text_names_only_the_fingerprints_whose_errors_differ() {
        let same = lines(&part(2, &[("23505", 1)])).join("\n");
        assert!(!same.contains("errors differ"), "{same}");
        assert!(same.contains("the server's share 0.500 s"), "{same}");
        let mut unnamed = part(2, &[("23505", 1)]);
        unnamed.errors[0].log_errors = [(UNNAMED.to_string(), 1)].into();
        assert!(!lines(&unnamed).join("\n").contains("errors differ"));
        unnamed.errors[0].replay_errors.clear();
        assert!(lines(&unnamed).join("\n").contains("errors differ"));
        let differ = lines(&part(2, &[("40P01", 1)])).join("\n");
        assert!(
            differ.contains(
                "errors differ: INSERT INTO t VALUES (?) (log: 23505 x1; replay: 40P01 x1)"
            ),
            "{differ}"
        );
    }

    #[test]
    fn a_fleet_merge_adds_counts_lags_and_errors() {
        let (a, b) = (
            serde_json::to_value(part(2, &[("23505", 1)])).unwrap(),
            serde_json::to_value(part(3, &[])).unwrap(),
        );
        let merged = report::RunResult {
            measured_duration_s: 2.5,
            ..Default::default()
        };
        let m = VIEW.merge(&[Some(&a), Some(&b)], &merged).unwrap();
        let m = ReplaySection::deserialize(&m).unwrap();
        assert_eq!((m.sessions, m.statements, m.failed), (5, 50, 2));
        assert_eq!((m.behind.due, m.behind.late), (50, 4));
        assert_eq!(m.behind.server_s, 1.0);
        assert_eq!(m.replayed_s, 2.5);
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].captured, 5);
        assert_eq!(m.errors[0].log_errors["23505"], 2);
        assert_eq!(m.errors[0].replay_errors["23505"], 1);
        assert_eq!(m.lock_waits.len(), 1);
        assert_eq!(m.lock_waits[0].samples, 5);
        // The log's durations: 100, 200 and 100, 200, 300 us merged, read again.
        let d = &m.log_durations[0];
        assert_eq!((d.count, d.total_us, d.p99_us), (5, 900, 300));
        assert_eq!(d.p50_us, 200);
        assert_eq!(d.latency.count(), 5);
    }
}
