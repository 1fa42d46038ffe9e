//! The cache curve in time: every measured scan as a point (when it ran, at which size, its
//! pages hit and read, its storage read time and duration), each size's phases (growing, scans,
//! point reads) with the wait events the observer sampled in them, and the storage pages read
//! per ms of I/O, per scan and per size: seed 003's `read / I/O Timings: read` figure, which it
//! computed by hand with awk from a log of `EXPLAIN (ANALYZE, BUFFERS)` and read over time (the
//! step from 78 to 42 pages/ms at 62 GB).
//!
//! Owns [`ScanPoint`] and [`Phase`] (parts of the `cache_curve` section), the arithmetic of pages
//! per ms of I/O ([`per_io_ms`], [`size_io`]), folding the observer's activity samples into the
//! phases ([`fill_waits`]), and their text lines and HTML (the charts over time and the table of
//! each size's I/O and waits). Must not touch: how scans are run and timed (`sql`, the runner in
//! `mod.rs`) or the observer's sampling (`observe`): it reads its samples only.
//!
//! Times are ms since the curve's start, the instant the observer's window opens on
//! (`observe::SamplerHandle::mark_start`), so a scan's `t_ms` and an activity sample's `t_ms`
//! are on one axis.

use std::fmt::Write as _;

use measure::server::{wait_totals, ServerMetrics, WaitTotal};
use serde::{Deserialize, Serialize};

use report::html::chart_block;
use report::svg::{esc, Chart, Kind, Marker, Series};

use super::section::{size_text, CacheCurve, CachePoint};

/// One measured scan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScanPoint {
    /// When it started, ms since the curve's start.
    pub t_ms: f64,
    /// The table's size then.
    pub size_bytes: u64,
    /// Rows it returned.
    pub rows: u64,
    /// Its buffer hits and reads (`EXPLAIN`'s shared hit and read; InnoDB's counters' deltas).
    pub pages_hit: u64,
    pub pages_read: u64,
    /// Time its reads from storage took (`I/O Timings: shared read`), ms; `None` when not
    /// timed (`track_io_timing` off, MySQL).
    pub io_read_ms: Option<f64>,
    /// `pages_read / io_read_ms`; `None` when not timed, nothing read, or no time measured.
    pub read_pages_per_io_ms: Option<f64>,
    /// Its execution time (`EXPLAIN`'s; the client's clock on MySQL), ms.
    pub duration_ms: f64,
}

/// One stretch of a size's measurement, and what the server's sessions waited on during it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// `growing` (the inserts and the warm-up scan), `scans`, `point reads`.
    pub name: String,
    /// Its start and end, ms since the curve's start.
    pub start_ms: f64,
    pub end_ms: f64,
    /// The observer's activity samples inside it (0: none fell inside, or not observed).
    pub samples: u64,
    /// Active client sessions by wait event in those samples, most first.
    pub waits: Vec<WaitTotal>,
}

impl Phase {
    pub fn new(name: &str, start_ms: f64, end_ms: f64) -> Phase {
        Phase {
            name: name.into(),
            start_ms,
            end_ms,
            ..Default::default()
        }
    }
}

/// Storage pages read per ms of I/O read time: `None` without a time, a read, or time > 0.
pub fn per_io_ms(pages_read: u64, io_read_ms: Option<f64>) -> Option<f64> {
    io_read_ms
        .filter(|t| *t > 0.0 && pages_read > 0)
        .map(|t| pages_read as f64 / t)
}

/// A size's I/O from its scans: the mean read time of a scan (only when every scan was
/// timed), and its pages read over its read time, all scans together.
pub fn size_io(scans: &[ScanPoint]) -> (Option<f64>, Option<f64>) {
    let times: Option<Vec<f64>> = scans.iter().map(|s| s.io_read_ms).collect();
    let Some(times) = times.filter(|t| !t.is_empty()) else {
        return (None, None);
    };
    let total: f64 = times.iter().sum();
    let read: u64 = scans.iter().map(|s| s.pages_read).sum();
    (
        Some(total / times.len() as f64),
        per_io_ms(read, Some(total)),
    )
}

/// Each phase's wait events, from the observer's activity samples whose time falls inside it.
pub fn fill_waits(points: &mut [CachePoint], m: &ServerMetrics) {
    for p in points.iter_mut().flat_map(|p| p.phases.iter_mut()) {
        let inside: Vec<_> = (m.activity.iter())
            .filter(|s| (s.t_ms as f64) >= p.start_ms && (s.t_ms as f64) <= p.end_ms)
            .collect();
        p.samples = inside.len() as u64;
        p.waits = wait_totals(inside);
    }
}

/// `IO:DataFileRead 3, CPU 1`: a phase's top events with their session-samples.
fn top(waits: &[WaitTotal], n: usize) -> String {
    let v: Vec<String> = (waits.iter().take(n))
        .map(|w| format!("{} {}", w.event, w.samples))
        .collect();
    v.join(", ")
}

/// The text summary's lines after the table: how the scans' I/O was timed, and the notes.
pub fn text(c: &CacheCurve) -> String {
    let mut o = String::new();
    if c.io_timed {
        let timed = c.scan_series.iter().filter(|s| s.io_read_ms.is_some());
        let _ = writeln!(
            o,
            "I/O: track_io_timing on, {} scans timed; \"io ms\" is a scan's storage read time, \
             \"rd/io-ms\" the pages it read per ms of it",
            timed.count()
        );
    }
    for n in &c.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}

/// The HTML: each scan over time (pages, times, pages per ms of I/O), with the cache's size
/// and the knee marked where the table reached them, then each size's I/O and waits.
pub(super) fn html(o: &mut String, c: &CacheCurve) {
    if c.scan_series.is_empty() {
        return;
    }
    o.push_str("<h3>Each scan over time</h3>");
    let secs = |s: &ScanPoint| s.t_ms / 1000.0;
    let mut markers = Vec::new();
    let first_at = |b: u64| c.scan_series.iter().find(|s| s.size_bytes >= b);
    if let Some(s) = first_at(c.cache_bytes) {
        markers.push(Marker {
            x: secs(s),
            label: format!("{} reached", c.cache_setting),
        });
    }
    // As on the size charts: the knee apart only when it is not the cache's size.
    let knee = c.knee_bytes.filter(|k| *k != c.cache_bytes);
    if let Some(s) = knee.and_then(first_at) {
        markers.push(Marker {
            x: secs(s),
            label: format!("knee {}", size_text(s.size_bytes)),
        });
    }
    let chart = |id: &str, title: &str, y: &str| {
        let mut ch = Chart::new(id, title, "seconds since the curve's start", y, Kind::Lines);
        ch.markers = markers.clone();
        ch
    };
    let at = |f: &dyn Fn(&ScanPoint) -> Option<f64>| -> Vec<(f64, f64)> {
        (c.scan_series.iter())
            .filter_map(|s| Some((secs(s), f(s)?)))
            .collect()
    };
    let mut pages = chart("chart-cache-scan-pages", "Pages per scan", "pages");
    pages.series.push(Series::line(
        "read from storage",
        "#d6336c",
        at(&|s| Some(s.pages_read as f64)),
    ));
    pages.series.push(Series::line(
        "found in the cache",
        "#3056d3",
        at(&|s| Some(s.pages_hit as f64)),
    ));
    let mut times = chart("chart-cache-scan-times", "Time per scan", "ms");
    times.series.push(Series::line(
        "scan",
        "#3056d3",
        at(&|s| Some(s.duration_ms)),
    ));
    if c.io_timed {
        times.series.push(Series::line(
            "storage reads (I/O)",
            "#d6336c",
            at(&|s| s.io_read_ms),
        ));
    }
    o.push_str("<div class=\"grid2\">");
    chart_block(o, "Pages read and hit by each scan", &pages.render());
    chart_block(
        o,
        "Each scan's time and its storage read time",
        &times.render(),
    );
    if c.io_timed {
        let mut rate = chart(
            "chart-cache-scan-io-rate",
            "Storage pages per ms of I/O",
            "pages / ms of I/O",
        );
        rate.series.push(Series::line(
            "pages read / I/O read ms",
            "#7048e8",
            at(&|s| s.read_pages_per_io_ms),
        ));
        chart_block(
            o,
            "Storage pages read per ms of I/O, each scan that read",
            &rate.render(),
        );
    }
    o.push_str("</div>");
    for n in &c.notes {
        let _ = write!(o, "<div class=\"banner\">{}</div>", esc(n));
    }
    io_table(o, c);
}

/// Each size's I/O figures and the wait events of its phases.
fn io_table(o: &mut String, c: &CacheCurve) {
    o.push_str(
        "<h3>I/O and wait events per size</h3><table><thead><tr><th>size</th>\
         <th>reads/scan</th><th>I/O ms/scan</th><th>pages/ms of I/O</th>\
         <th class=\"l\">waits while growing</th><th class=\"l\">waits during scans</th>\
         <th class=\"l\">waits during point reads</th></tr></thead><tbody>",
    );
    let opt = |v: Option<f64>, digits: usize| v.map_or("–".into(), |v| format!("{v:.digits$}"));
    for p in &c.points {
        let phase = |name: &str| match p.phases.iter().find(|x| x.name == name) {
            Some(x) if x.samples > 0 => format!(
                "{} <span class=\"muted\">({} samples)</span>",
                esc(&top(&x.waits, 3)),
                x.samples
            ),
            Some(_) => "<span class=\"muted\">no sample</span>".into(),
            None => String::new(),
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&size_text(p.size_bytes)),
            p.scan_reads,
            opt(p.io_read_ms, 3),
            opt(p.read_pages_per_io_ms, 1),
            phase("growing"),
            phase("scans"),
            phase("point reads"),
        );
    }
    o.push_str(
        "</tbody></table><p class=\"muted\">Waits are the observer's samples of the client \
         sessions (every 100 ms by default) falling inside each phase, as session-samples: a \
         phase shorter than the sampling period may have none.</p>",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::server::ActivitySample;

    fn scan(t: f64, read: u64, io: Option<f64>) -> ScanPoint {
        ScanPoint {
            t_ms: t,
            pages_read: read,
            io_read_ms: io,
            read_pages_per_io_ms: per_io_ms(read, io),
            ..Default::default()
        }
    }

    #[test]
    fn pages_per_ms_of_io_is_reads_over_read_time() {
        // Seed 003's figures: 2635144 reads in 33838.515 ms is 78 pages/ms.
        let r = per_io_ms(2_635_144, Some(33_838.515)).unwrap();
        assert!((r - 77.87).abs() < 0.01, "{r}");
        assert_eq!(per_io_ms(0, Some(1.0)), None, "nothing read");
        assert_eq!(per_io_ms(10, Some(0.0)), None, "no time measured");
        assert_eq!(per_io_ms(10, None), None, "not timed");
        // A size: the mean time per scan, and all reads over all time (not a mean of rates).
        let (mean, rate) = size_io(&[scan(0.0, 100, Some(1.0)), scan(5.0, 300, Some(3.0))]);
        assert_eq!(mean, Some(2.0));
        assert_eq!(rate, Some(100.0));
        // One scan not timed: the size is not.
        assert_eq!(
            size_io(&[scan(0.0, 100, Some(1.0)), scan(5.0, 300, None)]),
            (None, None)
        );
        assert_eq!(size_io(&[]), (None, None));
    }

    #[test]
    fn a_phase_gets_the_samples_inside_it() {
        let sample = |t: i64, e: &str| ActivitySample {
            t_ms: t,
            active: 1,
            waits: [(e.to_string(), 1)].into(),
            ..Default::default()
        };
        let m = ServerMetrics {
            activity: vec![
                sample(50, "IO:DataFileWrite"),
                sample(150, "IO:DataFileRead"),
                sample(250, "IO:DataFileRead"),
                sample(350, "CPU"),
            ],
            ..Default::default()
        };
        let mut p = CachePoint {
            phases: vec![
                Phase::new("growing", 0.0, 100.0),
                Phase::new("scans", 100.0, 260.0),
                Phase::new("point reads", 300.0, 310.0),
            ],
            ..Default::default()
        };
        fill_waits(std::slice::from_mut(&mut p), &m);
        let [g, s, r] = &p.phases[..] else { panic!() };
        assert_eq!(
            (g.samples, g.waits[0].event.as_str()),
            (1, "IO:DataFileWrite")
        );
        assert_eq!(s.samples, 2);
        assert_eq!(
            (s.waits[0].event.as_str(), s.waits[0].samples),
            ("IO:DataFileRead", 2)
        );
        assert_eq!(
            (r.samples, r.waits.len()),
            (0, 0),
            "shorter than the period"
        );
    }
}
