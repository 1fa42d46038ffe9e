//! Live charts: what makes a time-series [`Chart`] of the HTML pages readable in a browser
//! (values under the cursor, drag to zoom with a reset, a click on a legend entry to hide a
//! series), drawn by uPlot (<https://github.com/leeoniya/uPlot>, MIT), which is vendored in
//! `assets/uplot/` and inlined in the page with our own glue (`assets/charts.js`).
//!
//! Owns: each chart's data as JSON in the page (a `<script type="application/json">` inside its
//! `<figure>`, escaped so that no `</` or `<!--` in a series name or label can end the element,
//! per the HTML standard's restrictions on script content), and the assets a page appends once
//! ([`assets`]). Must not touch: how a chart is built (callers use `svg::Chart` as before; the
//! static SVG stays in the figure for print and for readers without scripts) nor any I/O: the
//! library is compiled in with `include_str!`, the page fetches nothing.

use serde_json::{json, Value};

use crate::svg::{Chart, Kind};

/// uPlot's version, as vendored (`assets/uplot/README.md`).
pub const UPLOT_VERSION: &str = "1.6.32";

const UPLOT_JS: &str = include_str!("../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uplot/uPlot.min.css");
const GLUE_JS: &str = include_str!("../assets/charts.js");

/// How live charts look beside the page's stylesheet (whose table cells' borders and shading the
/// legend, a table, must not take): the static SVG and its legend hidden on
/// screen once the live chart is drawn, and shown again in print (a canvas prints at screen
/// resolution and at the screen's width; the SVG scales to the paper).
const CSS: &str = "figure.chart[data-drawn]>svg,figure.chart[data-drawn]>figcaption{display:none}\
figure.chart .live{position:relative}\
figure.chart .u-legend{font-size:12px;color:#374151}\
figure.chart .u-legend .u-series>*{padding:1px 4px;border:none;background:none;color:inherit}\
figure.chart .u-axis{font-size:10.5px;color:#6b7482}\
.chart-reset{position:absolute;top:0;right:0;font:11px sans-serif;padding:1px 8px;border:1px solid #c9cfd8;\
border-radius:4px;background:#fff;color:#3056d3;cursor:pointer}\
@media print{figure.chart[data-drawn]>svg{display:block}figure.chart[data-drawn]>figcaption{display:flex}\
figure.chart .live{display:none}}";

/// What every page with live charts appends once, at the end of its `<body>`: uPlot's
/// stylesheet and script, then the glue that draws each chart of the page. Empty when `page`
/// holds no live chart.
pub fn assets(page: &str) -> String {
    if !page.contains(" data-live") {
        return String::new();
    }
    format!("<style>{UPLOT_CSS}{CSS}</style><script>{UPLOT_JS}</script><script>{GLUE_JS}</script>")
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` as `\u` escapes (they can only
/// be in strings of JSON, where the escape means the same character), and the line separators
/// JavaScript once refused in strings. No `</script`, `<!--` or `-->` can then occur.
pub fn script_safe(json: &str) -> String {
    let mut o = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            '\u{2028}' => o.push_str("\\u2028"),
            '\u{2029}' => o.push_str("\\u2029"),
            c => o.push(c),
        }
    }
    o
}

/// A number for JSON: non-finite values as null (JSON has no NaN).
fn n(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The chart's data as uPlot reads it: one x array (every series' x, in order, once; the
/// chart's x range, when set, bounds it and its ends are in it so the first view is that
/// range), and each series' y at those x (null where it has none).
pub(crate) fn data(c: &Chart) -> Value {
    let inside = |x: f64| c.x_range.is_none_or(|(a, b)| x >= a && x <= b);
    let mut xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite() && inside(*x))
        .collect();
    if let Some((a, b)) = c.x_range {
        xs.extend([a, b]);
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let series: Vec<Value> = c
        .series
        .iter()
        .map(|s| {
            let mut y = vec![Value::Null; xs.len()];
            for (x, v) in &s.points {
                if let Ok(i) = xs.binary_search_by(|p| p.total_cmp(x)) {
                    y[i] = n(*v);
                }
            }
            json!({"name": s.name, "color": s.color, "dashed": s.dashed, "y": y})
        })
        .collect();
    json!({
        "title": c.title,
        "x_label": c.x_label,
        "y_label": c.y_label,
        "stacked": c.kind == Kind::StackedArea,
        "y_log": c.y_log && c.kind != Kind::StackedArea,
        "y_max": c.y_max.map(n),
        "x": xs.into_iter().map(n).collect::<Vec<_>>(),
        "series": series,
        "markers": c.markers.iter().map(|m| json!({"x": n(m.x), "label": m.label})).collect::<Vec<_>>(),
        "reference": c.reference.as_ref().map(|(y, label)| json!({"y": n(*y), "label": label})),
        "x_ticks": c.x_ticks.as_ref().map(|t| t.iter().map(|(x, l)| json!([n(*x), l])).collect::<Vec<_>>()),
    })
}

/// The `<script>` element with the chart's data, for the end of its `<figure>`.
pub(crate) fn data_element(c: &Chart) -> String {
    format!(
        "<script type=\"application/json\" class=\"chart-data\">{}</script>",
        script_safe(&data(c).to_string())
    )
}

/// The data of every live chart in `page`, by the chart's id, read back as the page's script
/// reads it (for tests).
#[cfg(test)]
pub(crate) fn charts_in(page: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<figure class=\"chart\" id=\"") {
        let after = &rest[i + 26..];
        let id = after[..after.find('"').unwrap()].to_string();
        let end = after.find("</figure>").expect("figure closed");
        let body = &after[..end];
        if after[..after.find('>').unwrap()].contains(" data-live") {
            let open = "<script type=\"application/json\" class=\"chart-data\">";
            let s = &body[body.find(open).expect("data element") + open.len()..];
            let s = &s[..s.find("</script>").expect("data element closed")];
            out.push((id, serde_json::from_str(s).expect("chart data is JSON")));
        }
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{Marker, Series};

    #[test]
    fn script_safe_json_cannot_end_its_element_and_reads_back_the_same() {
        let nasty = "</script><script>alert(1)</script> <!-- x --> & \u{2028}";
        let json = json!({"name": nasty}).to_string();
        let safe = script_safe(&json);
        for bad in ["</", "<!--", "-->", "<script", "\u{2028}"] {
            assert!(!safe.contains(bad), "{bad} in {safe}");
        }
        let back: Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["name"], nasty);
    }

    #[test]
    fn a_chart_carries_its_series_aligned_on_one_x_and_its_markers() {
        let mut c = Chart::new("c", "T </script>", "seconds", "tps", Kind::Lines);
        c.series.push(Series {
            name: "a<!--".into(),
            color: "#123".into(),
            points: vec![(1.0, 10.0), (2.0, 20.0), (3.0, f64::NAN)],
            dashed: false,
        });
        c.series.push(Series {
            name: "b".into(),
            color: "#456".into(),
            points: vec![(2.0, 5.0), (4.0, 7.0)],
            dashed: true,
        });
        c.markers.push(Marker {
            x: 2.5,
            label: "checkpoint".into(),
        });
        let html = c.render();
        let el = data_element(&c);
        assert!(html.contains(&el) && html.contains(" data-live"));
        assert!(!el["<script ".len()..el.len() - "</script>".len()].contains("</"));
        let (id, d) = charts_in(&html).pop().unwrap();
        assert_eq!(id, "c");
        assert_eq!(d["title"], "T </script>");
        assert_eq!(d["x"], json!([1.0, 2.0, 3.0, 4.0]));
        assert_eq!(d["series"][0]["name"], "a<!--");
        assert_eq!(d["series"][0]["y"], json!([10.0, 20.0, null, null]));
        assert_eq!(d["series"][1]["y"], json!([null, 5.0, null, 7.0]));
        assert_eq!(d["series"][1]["dashed"], true);
        assert_eq!(d["markers"][0]["label"], "checkpoint");
        // An x range bounds the data and is the first view.
        c.x_range = Some((1.5, 5.0));
        let d = data(&c);
        assert_eq!(d["x"], json!([1.5, 2.0, 3.0, 4.0, 5.0]));
        assert_eq!(d["series"][0]["y"], json!([null, 20.0, null, null, null]));
    }

    #[test]
    fn the_inlined_scripts_cannot_end_their_elements() {
        for (name, js) in [("uPlot", UPLOT_JS), ("charts.js", GLUE_JS)] {
            for bad in ["</", "<!--"] {
                assert!(!js.contains(bad), "{name} contains {bad}");
            }
        }
        assert!(UPLOT_JS.contains(&format!("(v{UPLOT_VERSION})")));
        assert!(assets("<p>no chart</p>").is_empty());
        assert!(assets("<figure class=\"chart\" id=\"x\" data-live>").contains("uPlot"));
    }
}
