//! Charts over named categories rather than a numeric x: grouped bars ([`grouped_bars`]: a
//! value per category and group, each bar with an optional range drawn as a whisker: TPC-H's
//! per-query times, the power test's beside the mean over the throughput test's streams with
//! their least and most) and lanes ([`lanes`]: each lane a row of segments from a start to an
//! end on a time axis, a Gantt chart: TPC-H's streams over time).
//!
//! Owns their layout only; the bars share the parent's `Frame` (grid, ticks, axes) so they look
//! like every other chart, the lanes grow in height with their number (a frame's fixed height
//! would squeeze ten streams into slivers). Must not touch: what the numbers mean.

use std::fmt::Write as _;

use super::{esc, nice_ticks, no_data, short, Frame, MB, ML, MR, MT, PH, PW, W};

/// One group of bars: its name (the legend), colour and a value per category (`None`: no bar),
/// with an optional range per category (least, most) drawn as a whisker over the bar.
#[derive(Clone, Debug, Default)]
pub struct BarGroup {
    pub name: String,
    pub color: String,
    pub values: Vec<Option<f64>>,
    pub ranges: Vec<Option<(f64, f64)>>,
}

/// Bars side by side per category, a group each, on a linear y axis from 0.
pub fn grouped_bars(
    id: &str,
    title: &str,
    y_label: &str,
    categories: &[String],
    groups: &[BarGroup],
) -> String {
    let values = || groups.iter().flat_map(|g| g.values.iter().flatten());
    if categories.is_empty() || values().next().is_none() {
        return no_data(id, title);
    }
    let top = (groups.iter().flat_map(|g| g.ranges.iter().flatten()))
        .map(|r| r.1)
        .chain(values().copied())
        .fold(0.0, f64::max)
        .max(1e-9);
    let (yticks, ytop) = nice_ticks(0.0, top, 4);
    let n = categories.len() as f64;
    let f = Frame {
        x0: 0.0,
        x1: n,
        ybottom: 0.0,
        ytop,
        ylog: false,
    };
    let mut o = String::new();
    f.open(&mut o, id, title, &yticks, false);
    let slot = PW / n;
    let width = (slot * 0.8) / groups.len().max(1) as f64;
    for (gi, g) in groups.iter().enumerate() {
        for (ci, cat) in categories.iter().enumerate() {
            let Some(v) = g.values.get(ci).copied().flatten() else {
                continue;
            };
            let x = f.sx(ci as f64) + slot * 0.1 + width * gi as f64;
            let range = g.ranges.get(ci).copied().flatten();
            let tip = match range {
                Some((lo, hi)) => format!(
                    "{cat} {}: {} ({}-{})",
                    g.name,
                    short(v),
                    short(lo),
                    short(hi)
                ),
                None => format!("{cat} {}: {}", g.name, short(v)),
            };
            let _ = write!(
                o,
                "<rect class=\"bar\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                 fill=\"{}\"><title>{}</title></rect>",
                f.sy(v),
                (width - 0.6).max(0.6),
                (MT + PH - f.sy(v)).max(0.0),
                esc(&g.color),
                esc(&tip)
            );
            if let Some((lo, hi)) = range {
                let cx = x + width / 2.0;
                let _ = write!(
                    o,
                    "<path class=\"whisker\" d=\"M{cx:.1},{lo:.1}V{hi:.1}M{a:.1},{lo:.1}H{b:.1}\
                     M{a:.1},{hi:.1}H{b:.1}\" stroke=\"#333\" fill=\"none\"/>",
                    lo = f.sy(lo),
                    hi = f.sy(hi),
                    a = cx - width / 4.0,
                    b = cx + width / 4.0,
                );
            }
        }
    }
    let xticks: Vec<(f64, String)> = (categories.iter().enumerate())
        .map(|(i, c)| (i as f64 + 0.5, c.clone()))
        .collect();
    f.x_ticks(&mut o, &xticks, false);
    f.axes(&mut o, "", y_label);
    o.push_str("</svg>");
    legend(
        &mut o,
        groups.iter().map(|g| (g.name.as_str(), g.color.as_str())),
    );
    o.push_str("</figure>");
    o
}

/// One segment of a lane: from `start` to `end` (x units), its label (a tooltip, and drawn
/// inside when it fits) and colour.
#[derive(Clone, Debug)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub label: String,
    pub color: String,
}

/// One lane: its name (left of it) and its segments.
#[derive(Clone, Debug)]
pub struct Lane {
    pub name: String,
    pub segments: Vec<Segment>,
}

/// Height of one lane, pixels.
const LANE: f64 = 22.0;

/// Lanes over a shared x axis from 0 (a Gantt chart); the height grows with the lanes. The
/// legend names the colours: (name, colour).
pub fn lanes(
    id: &str,
    title: &str,
    x_label: &str,
    rows: &[Lane],
    legend_items: &[(&str, &str)],
) -> String {
    let ends = || rows.iter().flat_map(|l| l.segments.iter().map(|s| s.end));
    if ends().next().is_none() {
        return no_data(id, title);
    }
    let (xt, x1) = nice_ticks(0.0, ends().fold(0.0, f64::max).max(1e-9), 8);
    let plot_h = LANE * rows.len() as f64;
    let h = MT + plot_h + MB;
    let sx = |x: f64| ML + x / x1 * PW;
    let mut o = String::new();
    let _ = write!(
        o,
        "<figure class=\"chart\" id=\"{id}\"><svg viewBox=\"0 0 {W} {h}\" role=\"img\" \
         aria-label=\"{t}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{t}</title>",
        id = esc(id),
        t = esc(title),
    );
    for t in &xt {
        let x = sx(*t);
        let _ = write!(
            o,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{MT}\" y2=\"{:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            MT + plot_h,
            MT + plot_h + 17.0,
            esc(&short(*t))
        );
    }
    for (i, lane) in rows.iter().enumerate() {
        let y = MT + LANE * i as f64;
        let _ = write!(
            o,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            ML - 6.0,
            y + LANE / 2.0 + 4.0,
            esc(&lane.name)
        );
        for s in &lane.segments {
            let (a, b) = (sx(s.start), sx(s.end.max(s.start)));
            let w = (b - a).max(0.8);
            let _ = write!(
                o,
                "<rect class=\"segment\" x=\"{a:.1}\" y=\"{:.1}\" width=\"{w:.1}\" \
                 height=\"{:.1}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{}: \
                 {}-{}</title></rect>",
                y + 2.0,
                LANE - 4.0,
                esc(&s.color),
                esc(&s.label),
                esc(&short(s.start)),
                esc(&short(s.end))
            );
            // The label inside when it fits (about 6 px a character at the tick's size).
            if w > 6.5 * s.label.chars().count() as f64 + 4.0 {
                let _ = write!(
                    o,
                    "<text class=\"seglabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" \
                     fill=\"#fff\" font-size=\"10\">{}</text>",
                    a + w / 2.0,
                    y + LANE / 2.0 + 3.5,
                    esc(&s.label)
                );
            }
        }
    }
    let _ = write!(
        o,
        "<line class=\"axis\" x1=\"{ML}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></svg>",
        W - MR,
        ML + PW / 2.0,
        h - 6.0,
        esc(x_label),
        y = MT + plot_h,
    );
    legend(&mut o, legend_items.iter().copied());
    o.push_str("</figure>");
    o
}

/// The legend below a chart (HTML, so it wraps), as the time series draw theirs.
fn legend<'a>(o: &mut String, items: impl Iterator<Item = (&'a str, &'a str)>) {
    o.push_str("<figcaption class=\"legend\">");
    for (name, color) in items {
        let _ = write!(
            o,
            "<span><i style=\"background:{}\"></i>{}</span>",
            esc(color),
            esc(name)
        );
    }
    o.push_str("</figcaption>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_bars_draw_a_bar_per_value_and_a_whisker_per_range() {
        let cats: Vec<String> = ["Q1", "Q2", "Q<3>"].iter().map(|s| s.to_string()).collect();
        let groups = [
            BarGroup {
                name: "power".into(),
                color: "#123".into(),
                values: vec![Some(1.0), None, Some(3.0)],
                ranges: Vec::new(),
            },
            BarGroup {
                name: "streams".into(),
                color: "#456".into(),
                values: vec![Some(2.0), Some(0.5), Some(4.0)],
                ranges: vec![Some((1.5, 2.5)), None, Some((3.0, 6.0))],
            },
        ];
        let svg = grouped_bars("q", "per query", "s", &cats, &groups);
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), 5);
        assert_eq!(svg.matches("class=\"whisker\"").count(), 2);
        // The range's top counts for the axis: 6 is inside the ticks.
        assert!(svg.contains(">6<") || svg.contains(">8<"), "{svg}");
        assert!(svg.contains("Q&lt;3&gt;") && !svg.contains("Q<3>"));
        assert!(svg.contains("Q1 streams: 2 (1.5-2.5)"), "{svg}");
        assert!(grouped_bars("q", "t", "s", &cats, &[]).contains("no data"));
    }

    #[test]
    fn lanes_grow_with_their_number_and_place_segments_in_time() {
        let lane = |name: &str, segs: &[(f64, f64, &str)]| Lane {
            name: name.into(),
            segments: segs
                .iter()
                .map(|(a, b, l)| Segment {
                    start: *a,
                    end: *b,
                    label: l.to_string(),
                    color: "#4a7ab5".into(),
                })
                .collect(),
        };
        let two = [
            lane("power", &[(0.0, 4.0, "Q14"), (4.0, 10.0, "Q2")]),
            lane("stream 1", &[(10.0, 20.0, "Q21")]),
        ];
        let svg = lanes("l", "streams over time", "s", &two, &[("query", "#4a7ab5")]);
        assert_eq!(svg.matches("<rect class=\"segment\"").count(), 3);
        assert!(
            svg.contains(">stream 1<") && svg.contains("Q2: 4-10"),
            "{svg}"
        );
        // 20 s ends at the plot's right edge: x = ML + PW.
        assert!(
            svg.contains(&format!(
                "x=\"{:.1}\" y=\"38.0\" width=\"{:.1}\"",
                ML + PW / 2.0,
                PW / 2.0
            )),
            "{svg}"
        );
        let mut four = two.to_vec();
        four.push(lane("stream 2", &[(10.0, 12.0, "Q1")]));
        four.push(lane("refresh", &[]));
        let h = |s: &str| {
            let at = s.find("viewBox=\"0 0 640 ").unwrap() + 17;
            s[at..].split('"').next().unwrap().parse::<f64>().unwrap()
        };
        let svg4 = lanes("l", "t", "s", &four, &[]);
        assert_eq!(h(&svg4) - h(&svg), 2.0 * LANE);
        assert!(lanes("l", "t", "s", &[lane("x", &[])], &[]).contains("no data"));
    }
}
