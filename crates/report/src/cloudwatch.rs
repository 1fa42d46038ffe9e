//! The cloud's record of the run window (`--cloudwatch`, issue 32 item 5): the target's RDS or
//! Aurora metrics as CloudWatch kept them for the run's exact window, and their renderings
//! (one line of text, time-series charts in the HTML).
//!
//! Owns the section's shape ([`CloudWatchSection`]: per metric and dimension set, timestamped
//! points with their unit and statistic, and notes for what could not be had) and how it is
//! shown. Must not touch: AWS, the network, clocks: the binary fetches the points (its `cloud`
//! module, the only code that sees the AWS SDK) and fills the section; a saved result renders
//! the same without credentials.
//!
//! The section only ever adds to a result: it is fetched after the result was saved, and what
//! could not be fetched (no credentials or region, a metric with no data in the window) is a
//! note, never a failed run.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::svg::{esc, Chart, Kind, Series};

/// What CloudWatch kept for the run's window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchSection {
    /// The CloudWatch namespace read (`AWS/RDS`).
    pub namespace: String,
    /// The AWS region asked, `None` when none was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The run's window, RFC 3339 in UTC: the measured run's start and end.
    pub window_start: String,
    pub window_end: String,
    /// The period asked for, in seconds: the finest CloudWatch keeps for the window's age (1 s
    /// within 3 hours, where high-resolution metrics have it and standard ones come at their
    /// own 60 s; then 60, 300, 3600; `GetMetricData`'s `Period`).
    pub period_s: u32,
    /// What was asked for and how it was found: each dimension set (`DBInstanceIdentifier=db1`)
    /// with where it came from (the endpoint's host name, `--cloudwatch-instance`).
    pub resources: Vec<String>,
    /// Each metric and dimension set that had data in the window.
    pub metrics: Vec<CloudWatchMetric>,
    /// What could not be had, and why (no credentials or region, a metric without data).
    pub notes: Vec<String>,
}

/// One metric of one dimension set: its points in the window, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchMetric {
    /// CloudWatch's metric name (`CPUUtilization`).
    pub name: String,
    /// The dimensions, name to value (`DBInstanceIdentifier`: `db1`).
    pub dimensions: BTreeMap<String, String>,
    /// The statistic of each point over its period (`Average`).
    pub statistic: String,
    /// The metric's unit as RDS documents it (`Percent`, `Seconds`, `Count/Second`, `Bytes`).
    pub unit: String,
    pub points: Vec<CloudWatchPoint>,
}

/// One point: the statistic over the period that starts at `timestamp`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchPoint {
    /// The period's start, RFC 3339 in UTC.
    pub timestamp: String,
    /// The same, in seconds from the run's start (negative: the period began before it).
    pub t_s: f64,
    pub value: f64,
}

impl CloudWatchMetric {
    /// `DBInstanceIdentifier=db1` (dimension sets joined by commas), for labels.
    pub fn dimension_label(&self) -> String {
        let parts: Vec<String> = (self.dimensions.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.join(",")
    }
}

/// The one line of the text summary.
pub fn render_text(c: &CloudWatchSection) -> String {
    let points: usize = c.metrics.iter().map(|m| m.points.len()).sum();
    let mut line = format!(
        "cloudwatch ({}, {} s period): {} series, {points} points",
        c.resources.first().map_or("no resource", String::as_str),
        c.period_s,
        c.metrics.len(),
    );
    if let Some(n) = c.notes.first() {
        let _ = write!(line, "; {n}");
        if c.notes.len() > 1 {
            let _ = write!(line, " (+{} notes in the JSON)", c.notes.len() - 1);
        }
    }
    line.push('\n');
    line
}

const COLORS: [&str; 6] = [
    "#3056d3", "#c5221f", "#2e9e44", "#f08c00", "#7048e8", "#1098ad",
];

/// The HTML section: one time-series chart per metric (a line per dimension set) over the
/// run's window, and the notes.
pub fn html_section(o: &mut String, c: &CloudWatchSection, measured_s: f64) {
    o.push_str("<section id=\"cloudwatch\"><h2>CloudWatch</h2>");
    let _ = write!(
        o,
        "<p class=\"muted\">{} for {} to {}, {} s period{}: {}.</p>",
        esc(&c.namespace),
        esc(&c.window_start),
        esc(&c.window_end),
        c.period_s,
        c.region
            .as_deref()
            .map(|r| format!(", region {}", esc(r)))
            .unwrap_or_default(),
        esc(&c.resources.join("; ")),
    );
    let mut names: Vec<&str> = c.metrics.iter().map(|m| m.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if !names.is_empty() {
        o.push_str("<div class=\"grid2\">");
    }
    for name in &names {
        let of: Vec<&CloudWatchMetric> = c.metrics.iter().filter(|m| m.name == *name).collect();
        let unit = of.first().map_or("", |m| m.unit.as_str());
        let mut chart = Chart::new(
            &format!("chart-cloudwatch-{name}"),
            &format!("{name} ({})", of[0].statistic),
            "seconds",
            unit,
            Kind::Lines,
        );
        for (i, m) in of.iter().enumerate() {
            chart.series.push(Series {
                name: m.dimension_label(),
                color: COLORS[i % COLORS.len()].into(),
                points: m.points.iter().map(|p| (p.t_s, p.value)).collect(),
                dashed: false,
            });
        }
        // The run's window, widened to a period that began before it.
        let first = (of.iter())
            .flat_map(|m| m.points.first())
            .map(|p| p.t_s)
            .fold(0.0, f64::min);
        chart.x_range = Some((first, measured_s.max(first + 1.0)));
        crate::html::chart_block(o, name, &chart.render());
    }
    if !names.is_empty() {
        o.push_str("</div>");
    }
    if !c.notes.is_empty() {
        for n in &c.notes {
            let _ = write!(o, "<div class=\"note\">{}</div>", esc(n));
        }
    }
    o.push_str("</section>");
}

#[cfg(test)]
pub(crate) fn sample() -> CloudWatchSection {
    CloudWatchSection {
        namespace: "AWS/RDS".into(),
        region: Some("us-east-1".into()),
        window_start: "2026-01-01T00:00:00.000Z".into(),
        window_end: "2026-01-01T00:00:03.000Z".into(),
        period_s: 1,
        resources: vec!["DBInstanceIdentifier=db1 (--cloudwatch-instance)".into()],
        metrics: vec![CloudWatchMetric {
            name: "CPUUtilization".into(),
            dimensions: [("DBInstanceIdentifier".to_string(), "db1".to_string())].into(),
            statistic: "Average".into(),
            unit: "Percent".into(),
            points: vec![
                CloudWatchPoint {
                    timestamp: "2026-01-01T00:00:01.000Z".into(),
                    t_s: 1.0,
                    value: 41.5,
                },
                CloudWatchPoint {
                    timestamp: "2026-01-01T00:00:02.000Z".into(),
                    t_s: 2.0,
                    value: 43.0,
                },
            ],
        }],
        notes: vec!["DBLoad: no data in the window".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_one_line_naming_the_resource_and_the_first_note() {
        let t = render_text(&sample());
        assert_eq!(t.lines().count(), 1);
        assert!(t.contains("DBInstanceIdentifier=db1"), "{t}");
        assert!(t.contains("1 series, 2 points"), "{t}");
        assert!(t.contains("DBLoad: no data"), "{t}");
    }

    #[test]
    fn html_charts_each_metric_with_its_points_and_lists_the_notes() {
        let mut o = String::new();
        html_section(&mut o, &sample(), 3.0);
        assert!(o.contains("id=\"chart-cloudwatch-CPUUtilization\""), "{o}");
        assert!(o.contains("<svg"), "a drawn chart, not a no-data note: {o}");
        assert!(o.contains("DBLoad: no data in the window"));
        // A section with notes only (no credentials) draws no chart.
        let mut o = String::new();
        let empty = CloudWatchSection {
            metrics: Vec::new(),
            ..sample()
        };
        html_section(&mut o, &empty, 3.0);
        assert!(!o.contains("<svg"));
        assert!(o.contains("DBLoad"));
    }
}
