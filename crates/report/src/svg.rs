//! Charts as inline SVG, for the HTML report: time series (lines or stacked areas) with event
//! markers, and bar charts. A chart is a string of SVG drawn from numbers, so the report stays
//! one file that opens anywhere and prints.
//!
//! Owns axis scaling ("nice" ticks of 1, 2 or 5 times a power of ten), the drawing, and escaping
//! every text it draws. Must not touch: what the numbers mean (the HTML module picks them).
//!
//! Charts over named categories, grouped bars and lanes (a Gantt chart), are in `categories`.
//!
//! Both kinds of chart, time series ([`Chart`]) and bars ([`bars`]), draw the same frame (the
//! "no data" note, the `<figure>` with its title, the grid with its y ticks, the x ticks, the
//! axes and their labels) through one `Frame`, so a change to the frame is made once.
//!
//! A time series ([`Chart::render`]) also carries its data (`crate::live`), from which the
//! page's script draws it again with uPlot: values under the cursor, zoom, series toggles. The
//! SVG stays beside it for print and for readers without scripts; callers build a `Chart` the
//! same way whichever draws it.

mod categories;

pub use categories::{grouped_bars, lanes, BarGroup, Lane, Segment};

use std::fmt::Write as _;

/// Escape text for HTML and SVG (element content and attribute values).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A compact number for axes and labels: `950`, `1.2k`, `3.4M`, `0.25`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = if x == x.trunc() || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// A logarithmic axis covering `[lo, hi]` (positive): ticks at 1, 2 and 5 x 10^k, fewer when
/// the range spans many decades. Returns (ticks, bottom, top), bottom and top being ticks.
pub fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, f64, f64) {
    let (lo, hi) = if lo.is_finite() && lo > 0.0 && hi >= lo {
        (lo, hi.max(lo * 1.0001))
    } else {
        (1.0, 10.0)
    };
    let decades = (hi / lo).log10();
    let mantissas: &[f64] = if decades <= 2.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut all = Vec::new();
    let mut k = lo.log10().floor() as i32;
    while all.last().is_none_or(|t: &f64| *t < hi) && all.len() < 60 {
        for m in mantissas {
            all.push(m * 10f64.powi(k));
        }
        k += 1;
    }
    let bottom = all
        .iter()
        .copied()
        .filter(|t| *t <= lo)
        .fold(all[0], f64::max);
    let top = all.iter().copied().find(|t| *t >= hi).unwrap_or(hi);
    let ticks: Vec<f64> = all
        .into_iter()
        .filter(|t| *t >= bottom && *t <= top)
        .map(|t| (t * 1e9).round() / 1e9)
        .collect();
    (ticks, bottom, top)
}

/// Ticks covering `[lo, hi]`: about `n` steps of 1, 2 or 5 x 10^k. Returns (ticks, top).
pub fn nice_ticks(lo: f64, hi: f64, n: usize) -> (Vec<f64>, f64) {
    let span = (hi - lo).max(1e-9);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut ticks = Vec::new();
    let mut t = start;
    while t < hi + step * 0.5 && ticks.len() < 50 {
        ticks.push((t * 1e9).round() / 1e9);
        if t >= hi {
            break;
        }
        t += step;
    }
    let top = *ticks.last().unwrap_or(&hi);
    (ticks, top.max(hi))
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub color: String,
    /// (x, y), x increasing.
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

impl Series {
    /// A solid line of `points`.
    pub fn line(name: &str, color: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color: color.into(),
            points,
            dashed: false,
        }
    }
}

/// A vertical marker on the time axis (a checkpoint, say).
#[derive(Clone, Debug)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Lines,
    /// Series stacked in order, first at the bottom; all share the x of the first.
    StackedArea,
}

#[derive(Clone, Debug)]
pub struct Chart {
    /// Used for the element id and the accessible title.
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    /// A horizontal reference line (value, label), e.g. the number of CPUs.
    pub reference: Option<(f64, String)>,
    pub x_range: Option<(f64, f64)>,
    pub y_max: Option<f64>,
    /// A logarithmic y axis (line charts of positive values: latencies, whose p50 and max
    /// differ by orders of magnitude, so that p50..p99 stay readable under a tall max).
    pub y_log: bool,
    /// X tick positions and their labels, instead of round numbers of x (the percentile view
    /// passes "nines" as x and labels them 90, 99, 99.9).
    pub x_ticks: Option<Vec<(f64, String)>>,
}

const W: f64 = 640.0;
const H: f64 = 260.0;
const ML: f64 = 56.0;
const MR: f64 = 16.0;
const MT: f64 = 14.0;
const MB: f64 = 40.0;

/// Width and height of the plot area inside the margins.
const PW: f64 = W - ML - MR;
const PH: f64 = H - MT - MB;

/// What a chart shows instead of an empty plot.
fn no_data(id: &str, title: &str) -> String {
    format!(
        "<div class=\"chart empty\" id=\"{}\"><div class=\"nodata\">{}: no data</div></div>",
        esc(id),
        esc(title)
    )
}

/// The plot area of one chart: data coordinates (x from `x0` to `x1`, y from 0 to `ytop`) onto
/// SVG pixels, and the parts of the drawing that every kind of chart shares.
struct Frame {
    x0: f64,
    x1: f64,
    /// Linear: 0 to `ytop`. Logarithmic: `ybottom` to `ytop`, both positive.
    ybottom: f64,
    ytop: f64,
    ylog: bool,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        ML + (x - self.x0) / (self.x1 - self.x0) * PW
    }

    fn sy(&self, y: f64) -> f64 {
        let frac = if self.ylog {
            let lo = self.ybottom.log10();
            (y.max(self.ybottom).log10() - lo) / (self.ytop.log10() - lo)
        } else {
            y / self.ytop
        };
        MT + PH - frac * PH
    }

    /// The `<figure>` and `<svg>` with the accessible title, then the horizontal grid with its
    /// y tick labels.
    /// `live`: the figure carries its data for the page's script (`crate::live`).
    fn open(&self, o: &mut String, id: &str, title: &str, yticks: &[f64], live: bool) {
        let _ = write!(
            o,
            "<figure class=\"chart\" id=\"{id}\"{live}><svg viewBox=\"0 0 {W} {H}\" role=\"img\" \
             aria-label=\"{t}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{t}</title>",
            id = esc(id),
            t = esc(title),
            live = if live { " data-live" } else { "" }
        );
        for t in yticks {
            let y = self.sy(*t);
            let _ = write!(
                o,
                "<line class=\"grid\" x1=\"{ML}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - MR,
                ML - 6.0,
                y + 4.0,
                esc(&short(*t))
            );
        }
    }

    /// The x tick labels inside the range, each with a tick mark above it when `marks`.
    fn x_ticks(&self, o: &mut String, xticks: &[(f64, String)], marks: bool) {
        for (t, label) in xticks
            .iter()
            .filter(|(t, _)| *t >= self.x0 - 1e-9 && *t <= self.x1 + 1e-9)
        {
            let x = self.sx(*t);
            if marks {
                let _ = write!(
                    o,
                    "<line class=\"xtick\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
                    MT + PH,
                    MT + PH + 4.0,
                );
            }
            // A label centred on the last tick would run past the right edge of the drawing
            // (and be clipped): anchor it there by its end instead.
            let half_width = 3.2 * label.chars().count() as f64;
            let anchor = if x + half_width > W - 2.0 {
                "end"
            } else {
                "middle"
            };
            let _ = write!(
                o,
                "<text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text>",
                MT + PH + 17.0,
                esc(label)
            );
        }
    }

    /// The x axis line and both axis labels.
    fn axes(&self, o: &mut String, x_label: &str, y_label: &str) {
        let _ = write!(
            o,
            "<line class=\"axis\" x1=\"{ML}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>\
             <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text class=\"label\" transform=\"translate(13 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            W - MR,
            MT + PH,
            MT + PH,
            ML + PW / 2.0,
            H - 6.0,
            esc(x_label),
            MT + PH / 2.0,
            esc(y_label)
        );
    }
}

impl Chart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str, kind: Kind) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            kind,
            series: Vec::new(),
            markers: Vec::new(),
            reference: None,
            x_range: None,
            y_max: None,
            y_log: false,
            x_ticks: None,
        }
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }

    fn stacked(&self) -> Vec<Vec<(f64, f64, f64)>> {
        // (x, y0, y1) per series.
        let mut base: Vec<f64> = Vec::new();
        let mut out = Vec::new();
        for s in &self.series {
            if base.len() < s.points.len() {
                base.resize(s.points.len(), 0.0);
            }
            let v: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .enumerate()
                .map(|(i, (x, y))| {
                    let y0 = base[i];
                    base[i] += y.max(0.0);
                    (*x, y0, base[i])
                })
                .collect();
            out.push(v);
        }
        out
    }

    /// The chart as an `<svg>` element with a legend below it (HTML) and its data for the live
    /// chart (`crate::live`), or a "no data" note.
    pub fn render(&self) -> String {
        if self.is_empty() {
            return no_data(&self.id, &self.title);
        }
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let (mut x0, mut x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        if let Some((a, b)) = self.x_range {
            x0 = a;
            x1 = b;
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let stacked = (self.kind == Kind::StackedArea).then(|| self.stacked());
        let ymax_data = match &stacked {
            Some(st) => st
                .iter()
                .flat_map(|v| v.iter().map(|p| p.2))
                .fold(0.0, f64::max),
            None => self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .fold(0.0, f64::max),
        };
        let ymax_data = ymax_data
            .max(self.reference.as_ref().map_or(0.0, |r| r.0))
            .max(self.y_max.unwrap_or(0.0));
        let ylog = self.y_log && stacked.is_none();
        let (yticks, ybottom, ytop) = if ylog {
            let ymin_data = self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .filter(|y| *y > 0.0)
                .fold(f64::MAX, f64::min);
            log_ticks(ymin_data.min(ymax_data), ymax_data)
        } else {
            let (t, top) = nice_ticks(0.0, if ymax_data > 0.0 { ymax_data } else { 1.0 }, 4);
            (t, 0.0, top)
        };
        let xticks: Vec<(f64, String)> = match &self.x_ticks {
            Some(t) => t.clone(),
            None => (nice_ticks(x0, x1, 8).0.into_iter())
                .map(|t| (t, short(t)))
                .collect(),
        };
        let f = Frame {
            x0,
            x1,
            ybottom,
            ytop,
            ylog,
        };
        let mut o = String::new();
        f.open(&mut o, &self.id, &self.title, &yticks, true);
        f.x_ticks(&mut o, &xticks, true);
        f.axes(&mut o, &self.x_label, &self.y_label);
        // Data.
        match &stacked {
            Some(st) => {
                for (s, pts) in self.series.iter().zip(st) {
                    if pts.is_empty() {
                        continue;
                    }
                    let mut d = String::new();
                    for (i, (x, _, y1)) in pts.iter().enumerate() {
                        let _ = write!(
                            d,
                            "{}{:.1},{:.1}",
                            if i == 0 { "M" } else { "L" },
                            f.sx(*x),
                            f.sy(*y1)
                        );
                    }
                    for (x, y0, _) in pts.iter().rev() {
                        let _ = write!(d, "L{:.1},{:.1}", f.sx(*x), f.sy(*y0));
                    }
                    let _ = write!(
                        o,
                        "<path class=\"area\" d=\"{d}Z\" fill=\"{c}\" stroke=\"{c}\"><title>{n}</title></path>",
                        c = esc(&s.color),
                        n = esc(&s.name)
                    );
                }
            }
            None => {
                for s in &self.series {
                    if s.points.is_empty() {
                        continue;
                    }
                    let mut d = String::new();
                    for (i, (x, y)) in s.points.iter().enumerate() {
                        let _ = write!(
                            d,
                            "{}{:.1},{:.1}",
                            if i == 0 { "M" } else { "L" },
                            f.sx(*x),
                            f.sy(*y)
                        );
                    }
                    let dash = if s.dashed {
                        " stroke-dasharray=\"5 3\""
                    } else {
                        ""
                    };
                    let _ = write!(
                        o,
                        "<path class=\"line\" d=\"{d}\" stroke=\"{c}\"{dash}><title>{n}</title></path>",
                        c = esc(&s.color),
                        n = esc(&s.name)
                    );
                    if s.points.len() <= 60 {
                        for (x, y) in &s.points {
                            let _ = write!(
                                o,
                                "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.2\" fill=\"{}\">\
                                 <title>{}: {} at {}</title></circle>",
                                f.sx(*x),
                                f.sy(*y),
                                esc(&s.color),
                                esc(&s.name),
                                esc(&short(*y)),
                                esc(&short(*x))
                            );
                        }
                    }
                }
            }
        }
        if let Some((v, label)) = &self.reference {
            let y = f.sy(*v);
            let _ = write!(
                o,
                "<line class=\"ref\" x1=\"{ML}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"reflabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - MR,
                W - MR - 4.0,
                y - 4.0,
                esc(label)
            );
        }
        for m in self.markers.iter().filter(|m| m.x >= x0 && m.x <= x1) {
            let x = f.sx(m.x);
            let _ = write!(
                o,
                "<g class=\"marker\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{MT}\" y2=\"{:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">{}</text><title>{}</title></g>",
                MT + PH,
                x + 3.0,
                MT + 10.0,
                esc(&m.label),
                esc(&m.label)
            );
        }
        o.push_str("</svg>");
        // Legend (HTML, so it wraps).
        o.push_str("<figcaption class=\"legend\">");
        let order: Vec<&Series> = if self.kind == Kind::StackedArea {
            self.series.iter().rev().collect()
        } else {
            self.series.iter().collect()
        };
        for s in order {
            let _ = write!(
                o,
                "<span><i style=\"background:{}\"></i>{}</span>",
                esc(&s.color),
                esc(&s.name)
            );
        }
        o.push_str("</figcaption>");
        o.push_str(&crate::live::data_element(self));
        o.push_str("</figure>");
        o
    }
}

/// A bar chart of (label, lower edge, upper edge, value) with a linear x axis.
pub fn bars(
    id: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    bins: &[(f64, f64, f64)],
    color: &str,
) -> String {
    if bins.is_empty() {
        return no_data(id, title);
    }
    let x0 = bins.first().map_or(0.0, |b| b.0);
    let x1 = bins.last().map_or(1.0, |b| b.1).max(x0 + 1e-9);
    let ymax = bins.iter().map(|b| b.2).fold(0.0, f64::max).max(1e-9);
    let (yticks, ytop) = nice_ticks(0.0, ymax, 4);
    let xticks: Vec<(f64, String)> = (nice_ticks(x0, x1, 8).0.into_iter())
        .map(|t| (t, short(t)))
        .collect();
    let f = Frame {
        x0,
        x1,
        ybottom: 0.0,
        ytop,
        ylog: false,
    };
    let mut o = String::new();
    f.open(&mut o, id, title, &yticks, false);
    for (lo, hi, v) in bins {
        let (a, b) = (f.sx(*lo), f.sx(*hi));
        let _ = write!(
            o,
            "<rect class=\"bar\" x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
             <title>{}-{}: {}</title></rect>",
            f.sy(*v),
            (b - a - 0.6).max(0.6),
            (MT + PH - f.sy(*v)).max(0.0),
            esc(color),
            esc(&short(*lo)),
            esc(&short(*hi)),
            esc(&short(*v))
        );
    }
    f.x_ticks(&mut o, &xticks, false);
    f.axes(&mut o, x_label, y_label);
    o.push_str("</svg></figure>");
    o
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(950.0), "950");
        assert_eq!(short(12_500.0), "12.5k");
        assert_eq!(short(3_400_000.0), "3.4M");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(2.5), "2.5");
    }

    #[test]
    fn log_ticks_cover_the_range_at_round_values() {
        let (t, lo, hi) = log_ticks(0.8, 19.3);
        assert_eq!((lo, hi), (0.5, 20.0));
        assert_eq!(t, vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0]);
        // Many decades: powers of ten only.
        let (t, lo, hi) = log_ticks(0.05, 3000.0);
        assert_eq!((lo, hi), (0.01, 10000.0));
        assert_eq!(t, vec![0.01, 0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let (t, top) = nice_ticks(0.0, 7.3, 4);
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(top, 8.0);
        let (t, _) = nice_ticks(0.0, 1000.0, 4);
        assert_eq!(t, vec![0.0, 250.0, 500.0, 750.0, 1000.0]);
    }

    #[test]
    fn charts_draw_or_say_no_data() {
        let mut c = Chart::new("c", "A <chart>", "s", "tps", Kind::StackedArea);
        assert!(c.render().contains("no data"));
        c.series.push(Series {
            name: "CPU".into(),
            color: "#2e9e44".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
            dashed: false,
        });
        c.series.push(Series {
            name: "IO:<x>".into(),
            color: "#1f6fd1".into(),
            points: vec![(0.0, 1.0), (1.0, 1.0)],
            dashed: false,
        });
        c.markers.push(Marker {
            x: 0.5,
            label: "checkpoint".into(),
        });
        let svg = c.render();
        assert_eq!(svg.matches("<path class=\"area\"").count(), 2);
        assert!(svg.contains("A &lt;chart&gt;") && svg.contains("IO:&lt;x&gt;"));
        assert!(svg.contains("class=\"marker\""));
        assert!(!svg.contains("<x>"));
        let b = bars(
            "b",
            "t",
            "ms",
            "n",
            &[(0.0, 1.0, 3.0), (1.0, 2.0, 5.0)],
            "#123",
        );
        assert_eq!(b.matches("<rect").count(), 2);
    }
}
