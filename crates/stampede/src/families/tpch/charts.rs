//! The TPC-H section's HTML charts, drawn with `report::svg`'s category charts:
//! - per query (Q1..Q22 by number): the power test's time beside the throughput test's mean
//!   over its streams, whose least and most are the whisker (one bar per query and test, so 22
//!   queries stay readable whatever the number of streams);
//! - the streams over time: a lane per stream (the power test, each query stream, the refresh
//!   stream), each item a segment from its start to its end (`super::timeline`); the refresh
//!   functions and the failed items in colours of their own.
//!
//! A single query's loop (`tpch-qN`) has neither: its one row in the table says it all.
//!
//! Must not touch: the numbers (the section holds them), the page around the section.

use report::svg::{self, BarGroup, Lane, Segment};

use super::section::TpchSection;

const QUERY: &str = "#4a7ab5";
const POWER: &str = "#e07b39";
const REFRESH: &str = "#7a9a3a";
const FAILED: &str = "#c23b3b";

/// Both charts, or nothing for a loop.
pub(crate) fn render(t: &TpchSection) -> String {
    if t.test == "query" {
        return String::new();
    }
    let mut o = String::new();
    o.push_str(&per_query(t));
    o.push_str(&over_time(t));
    o
}

/// Each query's time in the power test, and the mean (least, most) over the query streams.
fn per_query(t: &TpchSection) -> String {
    let cats: Vec<String> = (1..=22).map(|q| format!("Q{q}")).collect();
    let time = |stream: u32, q: &str| {
        (t.items.iter())
            .find(|i| i.stream == stream && i.item == q && i.failed == 0)
            .and_then(|i| i.seconds)
    };
    let mut groups = Vec::new();
    if t.test != "throughput" {
        groups.push(BarGroup {
            name: "power test".into(),
            color: POWER.into(),
            values: cats.iter().map(|q| time(0, q)).collect(),
            ranges: Vec::new(),
        });
    }
    if t.streams > 0 {
        let mut values = Vec::new();
        let mut ranges = Vec::new();
        for q in &cats {
            let v: Vec<f64> = (1..=t.streams).filter_map(|s| time(s, q)).collect();
            if v.is_empty() {
                values.push(None);
                ranges.push(None);
                continue;
            }
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
            values.push(Some(v.iter().sum::<f64>() / v.len() as f64));
            ranges.push((v.len() > 1).then_some((lo, hi)));
        }
        groups.push(BarGroup {
            name: format!(
                "throughput test: mean of {} streams (whisker: least to most)",
                t.streams
            ),
            color: QUERY.into(),
            values,
            ranges,
        });
    }
    svg::grouped_bars(
        "tpch-queries",
        "Each query's time",
        "seconds",
        &cats,
        &groups,
    )
}

/// A lane per stream, each item a segment.
fn over_time(t: &TpchSection) -> String {
    let mut streams: Vec<u32> = t.items.iter().map(|i| i.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    let lanes: Vec<Lane> = (streams.iter())
        .map(|&s| Lane {
            name: super::section::stream_label(t, s),
            segments: (t.items.iter())
                .filter(|i| i.stream == s)
                .filter_map(|i| {
                    Some(Segment {
                        start: i.start_s?,
                        end: i.end_s?,
                        label: i.item.clone(),
                        color: match (i.failed > 0, i.item.starts_with("RF")) {
                            (true, _) => FAILED,
                            (false, true) => REFRESH,
                            (false, false) if s == 0 => POWER,
                            (false, false) => QUERY,
                        }
                        .into(),
                    })
                })
                .collect(),
        })
        .collect();
    svg::lanes(
        "tpch-streams",
        "The streams over time",
        "seconds since the start",
        &lanes,
        &[
            ("power test query", POWER),
            ("throughput test query", QUERY),
            ("refresh function", REFRESH),
            ("failed or timed out", FAILED),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::super::section::Item;
    use super::*;

    fn item(stream: u32, name: &str, seconds: f64, at: f64) -> Item {
        Item {
            stream,
            item: name.into(),
            executions: 1,
            seconds: Some(seconds),
            start_s: Some(at),
            end_s: Some(at + seconds),
            ..Item::default()
        }
    }

    #[test]
    fn the_charts_show_a_bar_per_query_and_test_and_a_segment_per_item() {
        let t = TpchSection {
            test: "full".into(),
            streams: 2,
            items: vec![
                item(0, "Q1", 2.0, 0.0),
                item(0, "Q2", 1.0, 2.0),
                item(1, "Q2", 1.5, 3.0),
                item(1, "Q1", 3.0, 4.5),
                item(2, "Q1", 1.0, 3.0),
                item(3, "RF1", 0.5, 3.0),
            ],
            ..TpchSection::default()
        };
        let html = render(&t);
        // Q1 and Q2 in the power test, both means over the streams.
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 4, "{html}");
        // Q1 ran in both streams: a whisker from 1 s to 3 s, mean 2 s.
        assert_eq!(html.matches("class=\"whisker\"").count(), 1);
        assert!(
            html.contains("Q1 throughput test: mean of 2 streams"),
            "{html}"
        );
        assert_eq!(html.matches("<rect class=\"segment\"").count(), 6);
        assert!(
            html.contains(">refresh<") && html.contains(">stream 2<"),
            "{html}"
        );
        assert!(html.contains(&format!("fill=\"{REFRESH}\"")));
        let loop_ = TpchSection {
            test: "query".into(),
            ..t
        };
        assert!(render(&loop_).is_empty());
    }
}
