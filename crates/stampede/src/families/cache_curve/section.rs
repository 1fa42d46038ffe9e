//! The cache curve (`stampede run cache-curve`): scan and point-read throughput and the buffer
//! cache's hit ratio as one table grows from a fraction of the server's cache to several times
//! it, and the knee where the table stops fitting. Seed 003's experiment (a table grown by
//! 100 MB inserts, scanned three times per size with `EXPLAIN (ANALYZE, BUFFERS)`, pages per
//! millisecond plotted by hand against the size) as one result.
//!
//! Owns the section's data ([`CacheCurve`], [`CachePoint`]; `cache_curve` in the JSON, a family
//! section of `report::section`), where the knee is ([`CacheCurve::locate_knee`]), its text
//! table ([`render_cache_curve`]) and its HTML report ([`View`]: its own headline in place of a
//! run's, since it measures no transactions, and [`html_section`]: throughput and hit ratio
//! against size, the cache size marked; each scan over time and each size's I/O and waits are
//! `timeline`'s). Must not touch: how the numbers are measured (the runner, `mod.rs`).
//!
//! The knee is placed by the hit ratio, not by the throughput: the buffer counters are exact
//! while a scan's time moves with whatever else the machine does, and a table that outgrows the
//! server's cache may still be served from the operating system's page cache at nearly the same
//! speed (seed 003's first drop is small for that reason on a server with a file-system cache).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use report::html::{chart_block, kpi};
use report::svg::{esc, Chart, Kind, Marker, Series};

use super::timeline::{self, Phase, ScanPoint};

/// The hit ratio under which a size is past the knee: more than 2% of the scanned pages came
/// from outside the server's cache ("clearly below ~100%": below the cache every page is a hit,
/// so 2% is well above the catalog and index pages a scan may have to read).
pub const KNEE_HIT_RATIO: f64 = 0.98;

/// A cache-curve run's result (`cache_curve` in the JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheCurve {
    /// The setting that sizes the cache: `shared_buffers` or `innodb_buffer_pool_size`.
    pub cache_setting: String,
    /// Its value in bytes, as the server reported it.
    pub cache_bytes: u64,
    /// The first size whose scans' hit ratio is below [`KNEE_HIT_RATIO`]; `None` when every
    /// size fits.
    pub knee_bytes: Option<u64>,
    /// The server's page (block) size.
    pub page_bytes: u64,
    /// Measured scans per size (after one warm-up scan).
    pub scans: u32,
    /// Point reads: clients and seconds per size.
    pub point_read_clients: u32,
    pub point_read_s: f64,
    /// How the cache was filled and the table warmed, in words (for the reader of the result).
    pub method: String,
    /// One per size, smallest first.
    pub points: Vec<CachePoint>,
    /// Whether the scans' storage reads were timed (`track_io_timing` on in the scanning
    /// session). Absent from results written before they were: false.
    #[serde(default)]
    pub io_timed: bool,
    /// What could not be measured, and how to make it measurable (`track_io_timing`).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Every measured scan in the order it ran, as a point in time (`timeline`).
    #[serde(default)]
    pub scan_series: Vec<ScanPoint>,
}

/// One size of the table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CachePoint {
    /// The table's size as the server reports it (`pg_table_size`; InnoDB's data length).
    pub size_bytes: u64,
    /// The size asked for (`--sizes`, or chosen from the cache).
    pub target_bytes: u64,
    /// Rows in the table (counted after it was built).
    pub rows: u64,
    /// Pages the scans touched, per scan (hits plus reads).
    pub pages: u64,
    /// The scans' buffer hits over hits plus reads.
    pub hit_ratio: f64,
    /// Rows and pages scanned per unit of time, averaged over the measured scans.
    pub rows_per_s: f64,
    pub pages_per_ms: f64,
    /// Buffer hits and reads of one scan (the measured scans' mean): `EXPLAIN (ANALYZE,
    /// BUFFERS)`'s `shared hit` and `read` on PostgreSQL, the buffer pool's read requests and
    /// reads on InnoDB.
    pub scan_hits: u64,
    pub scan_reads: u64,
    /// The same over all measured scans from the server's table statistics
    /// (`pg_statio_user_tables` deltas; on InnoDB the global counters again).
    pub stat_hits: u64,
    pub stat_reads: u64,
    /// Point reads by primary key done, per second, and their hit ratio (table and index).
    pub point_reads: u64,
    pub point_reads_per_s: f64,
    pub point_hit_ratio: f64,
    /// A scan's storage read time, the measured scans' mean (`I/O Timings: shared read`), ms;
    /// `None` when not timed.
    #[serde(default)]
    pub io_read_ms: Option<f64>,
    /// Pages the scans read from storage per ms of their read time, all scans together (seed
    /// 003's "pages per millisecond" of I/O); `None` when not timed or nothing was read.
    #[serde(default)]
    pub read_pages_per_io_ms: Option<f64>,
    /// The size's phases in time (growing, scans, point reads) and the wait events sampled in
    /// each (`timeline`).
    #[serde(default)]
    pub phases: Vec<Phase>,
}

impl CacheCurve {
    /// The knee: the first size (smallest first) whose scans' hit ratio is below
    /// [`KNEE_HIT_RATIO`].
    pub fn locate_knee(points: &[CachePoint]) -> Option<u64> {
        points
            .iter()
            .find(|p| p.hit_ratio < KNEE_HIT_RATIO)
            .map(|p| p.size_bytes)
    }

    /// The knee as a multiple of the cache size.
    pub fn knee_ratio(&self) -> Option<f64> {
        let k = self.knee_bytes?;
        (self.cache_bytes > 0).then(|| k as f64 / self.cache_bytes as f64)
    }
}

/// Bytes as people write sizes: `512 kB`, `16 MB`, `1.5 GB` (powers of 1024, PostgreSQL's units).
pub fn size_text(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 {
        format!("{:.0} {}", v, UNITS[u])
    } else {
        format!("{:.1} {}", v, UNITS[u])
    }
}

impl report::section::Section for CacheCurve {
    const KEY: &'static str = "cache_curve";
}

/// How the section renders (`report::section`): a cache curve measured no transactions, so its
/// HTML report has its own headline (the cache, the knee, the best scan) and its section in
/// place of the run's throughput and latency.
pub(crate) struct View;
pub(crate) static VIEW: View = View;

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <CacheCurve as report::section::Section>::KEY
    }

    fn own_headline(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) -> bool {
        let Ok(c) = CacheCurve::deserialize(v) else {
            return false;
        };
        kpi(o, &size_text(c.cache_bytes), "", &c.cache_setting);
        match c.knee_bytes {
            Some(k) => kpi(o, &size_text(k), "", "knee (hit ratio below 98%)"),
            None => kpi(o, "none", "", "knee"),
        }
        let best = c.points.iter().map(|p| p.pages_per_ms).fold(0.0, f64::max);
        kpi(o, &format!("{best:.0}"), "pages/ms", "best scan throughput");
        true
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(c) = CacheCurve::deserialize(v) {
            html_section(o, &c);
        }
    }
}

/// The text table: one line per size, then the knee.
pub fn render_cache_curve(c: &CacheCurve) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "cache curve: {} = {} ({} pages of {}); {} scan{} and {} s of point reads ({} client{}) \
         per size",
        c.cache_setting,
        size_text(c.cache_bytes),
        c.cache_bytes / c.page_bytes.max(1),
        size_text(c.page_bytes),
        c.scans,
        if c.scans == 1 { "" } else { "s" },
        c.point_read_s,
        c.point_read_clients,
        if c.point_read_clients == 1 { "" } else { "s" },
    );
    let _ = writeln!(
        o,
        "{:>10} {:>7} {:>9} {:>7} {:>11} {:>9} {:>10} {:>10} {:>10} {:>7} {:>9} {:>8}",
        "size",
        "x cache",
        "rows",
        "hit %",
        "rows/s",
        "pages/ms",
        "hits/scan",
        "reads/scan",
        "reads/s",
        "pt hit%",
        "io ms",
        "rd/io-ms"
    );
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    for p in &c.points {
        let _ = writeln!(
            o,
            "{:>10} {:>7.2} {:>9} {:>7.2} {:>11.0} {:>9.1} {:>10} {:>10} {:>10.0} {:>7.2} {:>9} {:>8}",
            size_text(p.size_bytes),
            p.size_bytes as f64 / c.cache_bytes.max(1) as f64,
            p.rows,
            100.0 * p.hit_ratio,
            p.rows_per_s,
            p.pages_per_ms,
            p.scan_hits,
            p.scan_reads,
            p.point_reads_per_s,
            100.0 * p.point_hit_ratio,
            opt(p.io_read_ms, 3),
            opt(p.read_pages_per_io_ms, 1),
        );
    }
    match (c.knee_bytes, c.knee_ratio()) {
        (Some(k), Some(r)) => {
            let _ = writeln!(
                o,
                "knee: {} ({r:.2} x {}): the first size whose scans found less than {:.0}% of \
                 their pages in the cache",
                size_text(k),
                c.cache_setting,
                100.0 * KNEE_HIT_RATIO
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "knee: none: every size's scans found at least {:.0}% of their pages in the \
                 cache (try larger --sizes)",
                100.0 * KNEE_HIT_RATIO
            );
        }
    }
    o.push_str(&timeline::text(c));
    o
}

/// The x axis of the charts: log2 of the size, so that sizes from an eighth of the cache to
/// four times it are spread evenly; ticks labelled with the sizes.
fn x_of(bytes: u64) -> f64 {
    (bytes.max(1) as f64).log2()
}

fn chart(c: &CacheCurve, id: &str, title: &str, y_label: &str) -> Chart {
    let mut ch = Chart::new(id, title, "table size", y_label, Kind::Lines);
    let xs = c.points.iter().map(|p| x_of(p.size_bytes));
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    // A label per size, but none closer to the one before than a fourteenth of the axis (sizes
    // a quarter of the cache apart crowd together on a log axis); their dots stay.
    let mut ticks: Vec<(f64, String)> = Vec::new();
    for p in &c.points {
        let x = x_of(p.size_bytes);
        if ticks.last().is_none_or(|t| x - t.0 >= (hi - lo) / 14.0) {
            ticks.push((x, size_text(p.size_bytes)));
        }
    }
    ch.x_ticks = Some(ticks);
    let cx = x_of(c.cache_bytes);
    ch.x_range = Some((lo.min(cx) - 0.1, hi.max(cx) + 0.1));
    ch.markers.push(Marker {
        x: cx,
        label: format!("{} {}", c.cache_setting, size_text(c.cache_bytes)),
    });
    if let Some(k) = c.knee_bytes.filter(|k| *k != c.cache_bytes) {
        ch.markers.push(Marker {
            x: x_of(k),
            label: format!("knee {}", size_text(k)),
        });
    }
    ch
}

/// The HTML report's section: scan throughput, point reads and hit ratios against the table's
/// size with the cache size (and the knee) marked, then the table of sizes.
pub(crate) fn html_section(o: &mut String, c: &CacheCurve) {
    o.push_str("<section id=\"cache-curve\"><h2>Cache curve</h2>");
    let knee = match (c.knee_bytes, c.knee_ratio()) {
        (Some(k), Some(r)) => format!(
            "the knee is at <b>{}</b>, {r:.2} × {}: the first size whose scans found less than \
             {:.0}% of their pages in the cache",
            esc(&size_text(k)),
            esc(&c.cache_setting),
            100.0 * KNEE_HIT_RATIO
        ),
        _ => "no knee: every size fit in the cache".into(),
    };
    let _ = write!(
        o,
        "<p>{} = <b>{}</b>; {} scan{} and {} s of point reads by {} client{} per size; {knee}.</p>\
         <p class=\"muted\">{}</p>",
        esc(&c.cache_setting),
        esc(&size_text(c.cache_bytes)),
        c.scans,
        if c.scans == 1 { "" } else { "s" },
        c.point_read_s,
        c.point_read_clients,
        if c.point_read_clients == 1 { "" } else { "s" },
        esc(&c.method)
    );
    let at = |f: fn(&CachePoint) -> f64| -> Vec<(f64, f64)> {
        c.points
            .iter()
            .map(|p| (x_of(p.size_bytes), f(p)))
            .collect()
    };
    let mut scan = chart(c, "chart-cache-scan", "Scan throughput", "pages / ms");
    scan.series.push(Series::line(
        "scan pages/ms",
        "#3056d3",
        at(|p| p.pages_per_ms),
    ));
    let mut point = chart(c, "chart-cache-point", "Point reads", "reads / s");
    point.series.push(Series::line(
        "point reads/s",
        "#2a9d5c",
        at(|p| p.point_reads_per_s),
    ));
    let mut io = chart(
        c,
        "chart-cache-io-rate",
        "Storage pages per ms of I/O",
        "pages / ms of I/O",
    );
    io.series.push(Series::line(
        "pages read / I/O read ms",
        "#7048e8",
        (c.points.iter())
            .filter_map(|p| Some((x_of(p.size_bytes), p.read_pages_per_io_ms?)))
            .collect(),
    ));
    let mut hits = chart(c, "chart-cache-hits", "Hit ratio", "% of pages in cache");
    hits.y_max = Some(100.0);
    hits.series.push(Series::line(
        "scans",
        "#3056d3",
        at(|p| 100.0 * p.hit_ratio),
    ));
    hits.series.push(Series::line(
        "point reads",
        "#2a9d5c",
        at(|p| 100.0 * p.point_hit_ratio),
    ));
    o.push_str("<div class=\"grid2\">");
    for (title, ch) in [
        ("Scan throughput against table size", &scan),
        ("Hit ratio against table size", &hits),
        ("Point reads against table size", &point),
    ] {
        chart_block(o, title, &ch.render());
    }
    if c.io_timed {
        chart_block(
            o,
            "Storage pages read per ms of I/O against table size",
            &io.render(),
        );
    }
    o.push_str("</div>");
    o.push_str(
        "<table><thead><tr><th>size</th><th>× cache</th><th>rows</th><th>hit %</th>\
         <th>rows/s</th><th>pages/ms</th><th>hits/scan</th><th>reads/scan</th>\
         <th>statistics hits</th><th>statistics reads</th><th>point reads/s</th>\
         <th>point hit %</th></tr></thead><tbody>",
    );
    for p in &c.points {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.2}</td><td>{:.0}</td><td>{:.1}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.2}</td></tr>",
            esc(&size_text(p.size_bytes)),
            p.size_bytes as f64 / c.cache_bytes.max(1) as f64,
            p.rows,
            100.0 * p.hit_ratio,
            p.rows_per_s,
            p.pages_per_ms,
            p.scan_hits,
            p.scan_reads,
            p.stat_hits,
            p.stat_reads,
            p.point_reads_per_s,
            100.0 * p.point_hit_ratio
        );
    }
    o.push_str("</tbody></table>");
    timeline::html(o, c);
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve as a 16 MB shared_buffers gives it: every page a hit up to 3/4 of the cache.
    pub(crate) fn sample() -> CacheCurve {
        let mb = 1u64 << 20;
        let point = |size: u64, hit: f64| CachePoint {
            size_bytes: size,
            target_bytes: size,
            rows: size / 8192,
            pages: size / 8192,
            hit_ratio: hit,
            rows_per_s: 1e6,
            pages_per_ms: 1000.0,
            scan_hits: (hit * (size / 8192) as f64) as u64,
            scan_reads: ((1.0 - hit) * (size / 8192) as f64) as u64,
            stat_hits: 3 * (hit * (size / 8192) as f64) as u64,
            stat_reads: 3 * ((1.0 - hit) * (size / 8192) as f64) as u64,
            point_reads: 5000,
            point_reads_per_s: 5000.0,
            point_hit_ratio: hit,
            io_read_ms: Some(2.0),
            read_pages_per_io_ms: timeline::per_io_ms(
                ((1.0 - hit) * (size / 8192) as f64) as u64,
                Some(2.0),
            ),
            phases: vec![
                Phase::new("growing", 0.0, 10.0),
                Phase::new("scans", 10.0, 20.0),
                Phase::new("point reads", 20.0, 1020.0),
            ],
        };
        let points = vec![
            point(4 * mb, 1.0),
            point(8 * mb, 1.0),
            point(12 * mb, 0.999),
            point(16 * mb, 0.93),
            point(32 * mb, 0.45),
        ];
        CacheCurve {
            cache_setting: "shared_buffers".into(),
            cache_bytes: 16 * mb,
            knee_bytes: CacheCurve::locate_knee(&points),
            page_bytes: 8192,
            scans: 3,
            point_read_clients: 4,
            point_read_s: 1.0,
            method: "grown by inserts".into(),
            scan_series: (points.iter().enumerate())
                .map(|(i, p)| ScanPoint {
                    t_ms: 1000.0 * i as f64,
                    size_bytes: p.size_bytes,
                    rows: p.rows,
                    pages_hit: p.scan_hits,
                    pages_read: p.scan_reads,
                    io_read_ms: p.io_read_ms,
                    read_pages_per_io_ms: p.read_pages_per_io_ms,
                    duration_ms: 3.0,
                })
                .collect(),
            points,
            io_timed: true,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        let v = serde_json::to_value(sample()).unwrap();
        let key = <CacheCurve as report::section::Section>::KEY;
        // The fields added with the scans' timing are optional: older results lack them.
        let later = ["io_timed", "notes", "scan_series"];
        let mut wrong = report::section::schema_mismatches(key, &v, &later, &[]);
        wrong.extend(report::section::schema_mismatches(
            "cache_point",
            &v["points"][0],
            &["io_read_ms", "read_pages_per_io_ms", "phases"],
            &[],
        ));
        wrong.extend(report::section::schema_mismatches(
            "cache_scan",
            &v["scan_series"][0],
            &[],
            &[],
        ));
        wrong.extend(report::section::schema_mismatches(
            "cache_phase",
            &v["points"][0]["phases"][0],
            &[],
            &[],
        ));
        assert_eq!(wrong, Vec::<String>::new());
        // And its values: the schema's ranges refuse a broken point.
        let schema: serde_json::Value = serde_json::from_str(report::SCHEMA).unwrap();
        let def = serde_json::json!({"$defs": schema["$defs"], "$ref": "#/$defs/cache_curve"});
        let validator = jsonschema::draft202012::new(&def).unwrap();
        assert!(validator.is_valid(&v));
        let mut no_ratio = v.clone();
        no_ratio["points"][0]
            .as_object_mut()
            .unwrap()
            .remove("hit_ratio");
        assert!(
            !validator.is_valid(&no_ratio),
            "a point without its hit ratio"
        );
        let mut above = v.clone();
        above["points"][0]["hit_ratio"] = serde_json::json!(1.5);
        assert!(!validator.is_valid(&above), "a hit ratio above 1");
        let mut negative = v.clone();
        negative["scan_series"][0]["io_read_ms"] = serde_json::json!(-1.0);
        assert!(!validator.is_valid(&negative), "a negative I/O time");
        // A result saved before the scans were timed still loads, and still validates.
        let mut old = v.clone();
        for k in ["io_timed", "notes", "scan_series"] {
            old.as_object_mut().unwrap().remove(k);
        }
        for k in ["io_read_ms", "read_pages_per_io_ms", "phases"] {
            old["points"][0].as_object_mut().unwrap().remove(k);
        }
        assert!(validator.is_valid(&old));
        let back: CacheCurve = serde_json::from_value(old).unwrap();
        assert!(!back.io_timed && back.scan_series.is_empty());
    }

    #[test]
    fn the_html_report_has_the_curve_s_own_headline_and_no_run_charts() {
        crate::families::install_views();
        let mut r = report::RunResult::default();
        let (k, v) = report::section::keyed(&sample()).unwrap();
        r.sections.insert(k.into(), v);
        let html = report::html::render(&r, None);
        assert!(html.contains("best scan throughput"), "its headline");
        assert!(html.contains("id=\"chart-cache-scan\""), "its section");
        assert!(
            !html.contains("committed transactions per second"),
            "no run headline"
        );
        // The same result without the section is a run's page.
        r.sections.clear();
        let run = report::html::render(&r, None);
        assert!(run.contains("committed transactions per second"));
    }

    #[test]
    fn the_knee_is_the_first_size_clearly_below_all_hits() {
        let c = sample();
        assert_eq!(c.knee_bytes, Some(16 << 20));
        assert_eq!(c.knee_ratio(), Some(1.0));
        // A 99.9% hit ratio (a few catalog pages read) is no knee; nothing below 98%: none.
        let fits: Vec<CachePoint> = c.points[..3].to_vec();
        assert_eq!(CacheCurve::locate_knee(&fits), None);
        // Not the lowest ratio: the first one under the line.
        let mut later = c.points.clone();
        later[4].hit_ratio = 0.10;
        assert_eq!(CacheCurve::locate_knee(&later), Some(16 << 20));
    }

    #[test]
    fn sizes_are_written_as_people_write_them() {
        assert_eq!(size_text(16 << 20), "16 MB");
        assert_eq!(size_text(512 << 10), "512 kB");
        assert_eq!(size_text(3 << 29), "1.5 GB");
        assert_eq!(size_text(100), "100 B");
    }

    #[test]
    fn text_table_has_a_line_per_size_and_the_knee() {
        let t = render_cache_curve(&sample());
        assert!(t.starts_with("cache curve: shared_buffers = 16 MB (2048 pages of 8 kB)"));
        // The setting, the column heads, a line per size, the knee, how I/O was timed.
        assert_eq!(t.lines().count(), 2 + 5 + 1 + 1, "{t}");
        assert!(t.contains("I/O: track_io_timing on, 5 scans timed"), "{t}");
        // 32 MB at 45% hits: 2252 pages read in 2 ms of I/O each scan.
        assert!(t.contains("    2.000   1126.0\n"), "{t}");
        let mut off = sample();
        off.io_timed = false;
        off.notes.push("track_io_timing is off".into());
        off.points[4].io_read_ms = None;
        off.points[4].read_pages_per_io_ms = None;
        let t = render_cache_curve(&off);
        assert!(t.contains("note: track_io_timing is off"), "{t}");
        assert!(!t.contains("I/O: track_io_timing on"), "{t}");
        assert!(t.contains("        -        -\n"), "{t}");
        assert!(t.contains("     32 MB    2.00 "), "{t}");
        assert!(t.contains("knee: 16 MB (1.00 x shared_buffers)"), "{t}");
        let mut none = sample();
        none.knee_bytes = None;
        assert!(render_cache_curve(&none).contains("knee: none"));
    }

    #[test]
    fn html_charts_mark_the_cache_and_the_knee() {
        let mut c = sample();
        let mut o = String::new();
        html_section(&mut o, &c);
        for id in [
            "chart-cache-scan",
            "chart-cache-hits",
            "chart-cache-point",
            "chart-cache-io-rate",
            "chart-cache-scan-pages",
            "chart-cache-scan-times",
            "chart-cache-scan-io-rate",
        ] {
            assert!(o.contains(&format!("id=\"{id}\"")), "{id}");
        }
        assert!(o.contains("I/O and wait events per size"));
        assert!(o.contains("shared_buffers 16 MB"));
        // The knee is marked apart only when it is not the cache size itself.
        assert!(!o.contains("knee 16 MB"));
        c.knee_bytes = Some(32 << 20);
        let mut o = String::new();
        html_section(&mut o, &c);
        assert!(o.contains("knee 32 MB"));
        assert!(o.contains("<td>32 MB</td><td>2.00</td>"));
    }
}
