//! The insert benchmark's part of a result (`stampede run iibench`), stored under the key `iibench`: the insert and query rates
//! over time, the secondary indexes' size against the server's cache as sampled during the run,
//! and the point where the indexes outgrew the cache with the insert rate before and after it
//! (the question iibench exists to answer: what happens to inserts when the indexes no longer
//! fit in memory). Model, text lines and HTML section in one place, as the section is small.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use report::svg::{Chart, Kind, Marker, Series};

/// iibench's section of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Iibench {
    /// Rows of each insert (one statement, one commit).
    pub rows_per_commit: u32,
    pub insert_clients: u32,
    pub query_clients: u32,
    /// Rows inserted by committed inserts (committed inserts x rows_per_commit).
    pub rows_inserted: u64,
    /// Over the measured run.
    pub insert_rows_per_s: f64,
    pub queries_per_s: f64,
    /// One point per progress interval (`-P`).
    pub series: Vec<Point>,
    /// The server's cache, bytes, and the setting it comes from (`shared_buffers`,
    /// `innodb_buffer_pool_size`).
    pub cache_bytes: u64,
    pub cache_setting: String,
    /// The secondary indexes' total size as sampled during the run.
    pub index_samples: Vec<IndexSample>,
    /// The first sample at which the indexes were larger than the cache; `None` when they
    /// never were during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outgrown: Option<Outgrown>,
}

/// The rates of one progress interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The interval's end, seconds since the measured start.
    pub t_s: f64,
    pub insert_rows_per_s: f64,
    pub queries_per_s: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexSample {
    /// Seconds since the measured start (negative: before it).
    pub t_s: f64,
    pub index_bytes: u64,
}

/// Where the secondary indexes outgrew the cache.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outgrown {
    /// The first sample above the cache, seconds since the measured start.
    pub at_s: f64,
    pub index_bytes: u64,
    /// Rows inserted by then: those of the intervals that ended before, and the share of the
    /// interval the point falls in that elapsed (its rate taken as even).
    pub rows_before: u64,
    /// Insert rate over the whole intervals before the point, and after it; `None` when no
    /// whole interval lies on that side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_rows_per_s_before: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_rows_per_s_after: Option<f64>,
}

impl Iibench {
    /// Find the outgrow point from the samples and the series (`series` intervals start where
    /// the previous ended, the first at 0).
    pub fn locate_outgrown(&mut self) {
        let Some(s) = (self.index_samples.iter()).find(|s| s.index_bytes > self.cache_bytes) else {
            self.outgrown = None;
            return;
        };
        let at = s.t_s.max(0.0);
        let mut before = (0u64, 0.0f64);
        let mut after = (0u64, 0.0f64);
        let mut start = 0.0;
        let mut straddling = 0;
        for p in &self.series {
            let d = p.t_s - start;
            let rows = (p.insert_rows_per_s * d).round() as u64;
            if p.t_s <= at {
                before = (before.0 + rows, before.1 + d);
            } else if start >= at {
                after = (after.0 + rows, after.1 + d);
            } else if d > 0.0 {
                // The interval the point falls in: its rows pro rata, in neither rate.
                straddling = ((at - start) / d * rows as f64).round() as u64;
            }
            start = p.t_s;
        }
        let rate = |(r, d): (u64, f64)| (d > 0.0).then(|| r as f64 / d);
        self.outgrown = Some(Outgrown {
            at_s: s.t_s,
            index_bytes: s.index_bytes,
            rows_before: before.0 + straddling,
            insert_rows_per_s_before: rate(before),
            insert_rows_per_s_after: rate(after),
        });
    }
}

impl report::section::Section for Iibench {
    const KEY: &'static str = "iibench";
}

/// How the section renders (`report::section`): lines in stampede's summary, and a section of
/// the HTML report.
pub(crate) struct View;
pub(crate) static VIEW: View = View;

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <Iibench as report::section::Section>::KEY
    }

    fn summary_lines(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(t) = Iibench::deserialize(v) {
            text_lines(o, &t);
        }
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(t) = Iibench::deserialize(v) {
            html_section(o, &t);
        }
    }

    /// A sweep's step keeps its rows inserted per second and its queries per second.
    fn metrics(
        &self,
        _r: &report::RunResult,
        v: &serde_json::Value,
    ) -> Vec<report::section::Metric> {
        let Ok(t) = Iibench::deserialize(v) else {
            return Vec::new();
        };
        vec![
            report::section::Metric {
                name: "insert rows/s".into(),
                unit: "rows/s".into(),
                value: t.insert_rows_per_s,
            },
            report::section::Metric {
                name: "queries/s".into(),
                unit: "queries/s".into(),
                value: t.queries_per_s,
            },
        ]
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn rate(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.0} rows/s"))
}

/// The text summary's lines.
pub(crate) fn text_lines(o: &mut String, t: &Iibench) {
    let _ = writeln!(
        o,
        "iibench: {} rows inserted ({:.0} rows/s, {} per commit, {} insert client{}), \
         {:.1} queries/s ({} query client{})",
        t.rows_inserted,
        t.insert_rows_per_s,
        t.rows_per_commit,
        t.insert_clients,
        if t.insert_clients == 1 { "" } else { "s" },
        t.queries_per_s,
        t.query_clients,
        if t.query_clients == 1 { "" } else { "s" },
    );
    let last = t.index_samples.last().map_or(0, |s| s.index_bytes);
    match &t.outgrown {
        Some(g) => {
            let _ = writeln!(
                o,
                "iibench: secondary indexes outgrew {} ({:.1} MiB) at {:.1} s, after {} rows; \
                 inserts {} before, {} after",
                t.cache_setting,
                mib(t.cache_bytes),
                g.at_s,
                g.rows_before,
                rate(g.insert_rows_per_s_before),
                rate(g.insert_rows_per_s_after)
            );
        }
        None => {
            let _ = writeln!(
                o,
                "iibench: secondary indexes {:.1} MiB at the end, within {} ({:.1} MiB)",
                mib(last),
                t.cache_setting,
                mib(t.cache_bytes)
            );
        }
    }
}

/// The HTML report's section: rates over time, index size against the cache.
pub(crate) fn html_section(o: &mut String, t: &Iibench) {
    o.push_str("<section id=\"iibench\"><h2>Insert benchmark</h2>");
    let mut s = String::new();
    text_lines(&mut s, t);
    for line in s.lines() {
        let _ = write!(o, "<p>{}</p>", report::svg::esc(line));
    }
    let marker = |c: &mut Chart| {
        if let Some(g) = &t.outgrown {
            c.markers.push(Marker {
                x: g.at_s,
                label: "indexes outgrow the cache".into(),
            });
        }
    };
    if t.series.len() >= 2 {
        let mut c = Chart::new(
            "chart-iibench-rates",
            "Inserts and queries over time",
            "seconds",
            "per second",
            Kind::Lines,
        );
        c.series.push(Series {
            name: "insert rows/s".into(),
            color: "#3056d3".into(),
            points: t
                .series
                .iter()
                .map(|p| (p.t_s, p.insert_rows_per_s))
                .collect(),
            dashed: false,
        });
        if t.query_clients > 0 {
            c.series.push(Series {
                name: "queries/s".into(),
                color: "#d35f30".into(),
                points: t.series.iter().map(|p| (p.t_s, p.queries_per_s)).collect(),
                dashed: false,
            });
        }
        marker(&mut c);
        o.push_str(&c.render());
    }
    let samples: Vec<(f64, f64)> = (t.index_samples.iter())
        .filter(|s| s.t_s >= 0.0)
        .map(|s| (s.t_s, mib(s.index_bytes)))
        .collect();
    if samples.len() >= 2 {
        let mut c = Chart::new(
            "chart-iibench-index",
            "Secondary indexes against the cache",
            "seconds",
            "MiB",
            Kind::Lines,
        );
        c.series.push(Series {
            name: "secondary indexes".into(),
            color: "#2a9d4b".into(),
            points: samples,
            dashed: false,
        });
        c.reference = Some((mib(t.cache_bytes), t.cache_setting.clone()));
        marker(&mut c);
        o.push_str(&c.render());
    }
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An iibench section whose indexes outgrew the cache halfway.
    pub(crate) fn full() -> Iibench {
        let mut t = Iibench {
            rows_per_commit: 1000,
            insert_clients: 1,
            query_clients: 1,
            rows_inserted: 40_000,
            insert_rows_per_s: 10_000.0,
            queries_per_s: 120.0,
            series: (1..=4)
                .map(|i| Point {
                    t_s: f64::from(i),
                    insert_rows_per_s: 10_000.0,
                    queries_per_s: 120.0,
                })
                .collect(),
            cache_bytes: 1 << 20,
            cache_setting: "shared_buffers".into(),
            index_samples: (0..8)
                .map(|i| IndexSample {
                    t_s: f64::from(i) * 0.5,
                    index_bytes: (i as u64 + 1) << 18,
                })
                .collect(),
            outgrown: None,
        };
        t.locate_outgrown();
        t
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        let v = serde_json::to_value(full()).unwrap();
        let optional = [
            "outgrown",
            "insert_rows_per_s_before",
            "insert_rows_per_s_after",
        ];
        let nested = [
            ("/series/0", "/properties/series/items"),
            ("/index_samples/0", "/properties/index_samples/items"),
            ("/outgrown", "/properties/outgrown"),
        ];
        let key = <Iibench as report::section::Section>::KEY;
        let wrong = report::section::schema_mismatches(key, &v, &optional, &nested);
        assert_eq!(wrong, Vec::<String>::new());
    }

    fn section() -> Iibench {
        Iibench {
            rows_per_commit: 100,
            insert_clients: 1,
            query_clients: 1,
            rows_inserted: 6000,
            insert_rows_per_s: 2000.0,
            queries_per_s: 50.0,
            series: (1..=3)
                .map(|i| Point {
                    t_s: i as f64,
                    insert_rows_per_s: [3000.0, 2000.0, 1000.0][i - 1],
                    queries_per_s: 50.0,
                })
                .collect(),
            cache_bytes: 1000,
            cache_setting: "shared_buffers".into(),
            index_samples: vec![
                IndexSample {
                    t_s: 0.5,
                    index_bytes: 500,
                },
                IndexSample {
                    t_s: 1.5,
                    index_bytes: 900,
                },
                IndexSample {
                    t_s: 2.0,
                    index_bytes: 1200,
                },
            ],
            outgrown: None,
        }
    }

    #[test]
    fn the_outgrow_point_is_the_first_sample_above_the_cache_with_rates_either_side() {
        let mut t = section();
        t.locate_outgrown();
        let g = t.outgrown.clone().unwrap();
        assert_eq!((g.at_s, g.index_bytes, g.rows_before), (2.0, 1200, 5000));
        assert_eq!(g.insert_rows_per_s_before, Some(2500.0));
        assert_eq!(g.insert_rows_per_s_after, Some(1000.0));
        let mut text = String::new();
        text_lines(&mut text, &t);
        assert!(text.contains("outgrew shared_buffers"), "{text}");
        let mut html = String::new();
        html_section(&mut html, &t);
        assert!(html.contains("chart-iibench-rates") && html.contains("chart-iibench-index"));
        // A point inside an interval: its rows pro rata, the interval in neither rate.
        t.index_samples[2].t_s = 1.5;
        t.index_samples[1].index_bytes = 1100;
        t.locate_outgrown();
        let g = t.outgrown.clone().unwrap();
        assert_eq!((g.at_s, g.rows_before), (1.5, 4000));
        assert_eq!(g.insert_rows_per_s_before, Some(3000.0));
        assert_eq!(g.insert_rows_per_s_after, Some(1000.0));
        t.cache_bytes = 5000;
        t.locate_outgrown();
        assert!(t.outgrown.is_none());
    }
}
