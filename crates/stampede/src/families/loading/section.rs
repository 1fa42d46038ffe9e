//! `stampede init`'s own part of a result: what was loaded and how fast (`load` in the JSON, a
//! family section of `report::section`), for seed 000's question of what the server did while
//! the tables filled (issue 32, item 2: `init` watched like a run).
//!
//! Owns the section's data ([`Load`]: the workload and its parameters, the loader's steps with
//! their times, the rows of each table, the rows loaded in each second) and its renderings
//! ([`View`]: its own headline in place of a run's, since a load runs no transactions; the rows/s
//! chart with the steps marked, the steps' and tables' tables, the sizes after the load; a text
//! block for `stampede report`). The server's parts of the page (load by wait event, top SQL,
//! counters) are the report's own, drawn from `server_metrics` as for a run. Must not touch: how
//! the rows are counted or the server watched (`observed`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use report::html::{chart_block, kpi};
use report::svg::{esc, short, Chart, Kind, Marker, Series};

/// A load's result (`load` in the JSON).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// The tables loaded, by the name `stampede init` takes: tpcb, oltp, tpcc, ycsb, iibench,
    /// crud.
    pub workload: String,
    /// The load's shape as given or defaulted (`scale`, `warehouses`, `tables`, `table_size`,
    /// `recordcount`, ...), by option name.
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Loader connections.
    pub jobs: u32,
    /// From the first step's start to the last one's end, s.
    pub seconds: f64,
    /// The loader's steps in order (pgbench's names: drop tables, create tables, client-side
    /// generate, vacuum, primary keys, ...).
    pub steps: Vec<LoadStep>,
    /// Rows loaded into each table, in the loader's order (its own count, which the per-second
    /// series adds up to).
    pub tables: Vec<LoadedTable>,
    /// Rows loaded in each second since the load started; the last second may be partial.
    /// Empty when the loader reports no progress (`init iibench`, `init crud`).
    pub series: Vec<RowsSecond>,
    /// What the figures cannot say, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One step of the loader.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadStep {
    pub name: String,
    /// When it started, s since the load's start (the observer's samples count from the same
    /// instant).
    pub start_s: f64,
    pub seconds: f64,
}

/// One table's rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadedTable {
    pub name: String,
    pub rows: u64,
}

/// The rows loaded in one second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowsSecond {
    /// The second's end, s since the load's start (1 for the first second).
    pub t_s: u64,
    /// Rows loaded in it, all tables.
    pub rows: u64,
    /// Rows loaded in it per table, in the order of [`Load::tables`].
    pub by_table: Vec<u64>,
}

impl report::section::Section for Load {
    const KEY: &'static str = "load";
}

impl Load {
    /// Rows loaded, all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }

    /// Rows per second over the whole load (steps after the rows included).
    pub fn rows_per_s(&self) -> f64 {
        self.rows() as f64 / self.seconds.max(1e-9)
    }

    /// The parameters as `name=value, ...`.
    pub fn parameters_text(&self) -> String {
        (self.parameters.iter())
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The steps as pgbench's closing line lists them: `name 1.23 s, ...`.
    fn steps_text(&self) -> String {
        (self.steps.iter())
            .map(|s| format!("{} {:.2} s", s.name, s.seconds))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How the section renders (`report::section`): a load measured no transactions, so its page
/// has its own headline (rows, rows/s, time) and its section in place of a run's throughput
/// and latency; the report adds the server as observed.
pub(crate) struct View;
pub(crate) static VIEW: View = View;

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <Load as report::section::Section>::KEY
    }

    fn own_headline(&self, r: &report::RunResult, v: &serde_json::Value, o: &mut String) -> bool {
        let Ok(l) = Load::deserialize(v) else {
            return false;
        };
        kpi(o, &l.rows().to_string(), "rows", "loaded");
        kpi(
            o,
            &format!("{:.0}", l.rows_per_s()),
            "rows/s",
            "over the whole load",
        );
        kpi(o, &format!("{:.1}", l.seconds), "s", "load time");
        if let Some(w) = r.server_metrics.as_ref().and_then(|m| m.waits.first()) {
            kpi(o, &w.event, "", "top wait event");
        }
        true
    }

    fn html(&self, r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(l) = Load::deserialize(v) {
            html_section(o, &l, r);
        }
    }

    fn text_block(&self, _r: &report::RunResult, v: &serde_json::Value) -> Option<String> {
        Load::deserialize(v).ok().map(|l| text(&l))
    }
}

/// The text block (`stampede report` of a saved load).
pub fn text(l: &Load) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "init {} ({}; {} loader connection{}): {} rows in {:.1} s ({:.0} rows/s)",
        l.workload,
        l.parameters_text(),
        l.jobs,
        if l.jobs == 1 { "" } else { "s" },
        l.rows(),
        l.seconds,
        l.rows_per_s()
    );
    let _ = writeln!(o, "  steps: {}", l.steps_text());
    let tables: Vec<String> = (l.tables.iter())
        .map(|t| format!("{} {}", t.name, t.rows))
        .collect();
    let _ = writeln!(o, "  rows: {}", tables.join(", "));
    if let Some(peak) = l.series.iter().map(|s| s.rows).max() {
        let _ = writeln!(o, "  fastest second: {peak} rows");
    }
    for n in &l.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

/// Colours of the per-table lines (the total is drawn dark above them).
const COLORS: [&str; 6] = [
    "#3056d3", "#2a9d5c", "#e07b00", "#7048e8", "#c92a2a", "#0b7285",
];

/// Each second's figure held across the second (from its start to its end), so that a load of
/// a few seconds still draws as bars of its seconds rather than as a few dots.
fn steps_of(l: &Load, rows: impl Fn(&RowsSecond) -> u64) -> Vec<(f64, f64)> {
    (l.series.iter())
        .flat_map(|s| {
            let y = rows(s) as f64;
            [((s.t_s - 1) as f64, y), (s.t_s as f64 - 1e-3, y)]
        })
        .collect()
}

/// The rows/s chart: all tables, and each table that holds at least 1% of the rows when there
/// are several (pgbench's branches and tellers would only crowd the legend); the steps that
/// take at least 5% of the time marked.
fn rows_chart(l: &Load) -> Chart {
    let mut ch = Chart::new(
        "chart-load-rows",
        "Rows loaded per second",
        "seconds since the load started",
        "rows / s",
        Kind::Lines,
    );
    ch.series
        .push(Series::line("all tables", "#222", steps_of(l, |s| s.rows)));
    let all = l.rows();
    if l.tables.len() > 1 {
        for (i, t) in (l.tables.iter().enumerate()).filter(|(_, t)| t.rows * 100 >= all.max(1)) {
            ch.series.push(Series::line(
                &t.name,
                COLORS[i % COLORS.len()],
                steps_of(l, |s| s.by_table.get(i).copied().unwrap_or(0)),
            ));
        }
    }
    let end = l.series.last().map_or(0.0, |s| s.t_s as f64);
    ch.x_range = Some((0.0, end.max(l.seconds).max(1.0)));
    ch.markers = (l.steps.iter())
        .filter(|s| s.seconds >= 0.05 * l.seconds)
        .map(|s| Marker {
            x: s.start_s,
            label: s.name.clone(),
        })
        .collect();
    ch
}

/// The HTML report's section: what was loaded, the rows/s chart, the steps, the tables and
/// their sizes after the load.
pub(crate) fn html_section(o: &mut String, l: &Load, r: &report::RunResult) {
    let _ = write!(
        o,
        "<section id=\"init-load\"><h2>Load</h2><p><code>init {}</code> ({}) through {} loader \
         connection{}: <b>{}</b> rows in <b>{:.1} s</b>, {} rows/s over the whole load.</p>",
        esc(&l.workload),
        esc(&l.parameters_text()),
        l.jobs,
        if l.jobs == 1 { "" } else { "s" },
        l.rows(),
        l.seconds,
        esc(&short(l.rows_per_s()))
    );
    for n in &l.notes {
        let _ = write!(o, "<p class=\"muted\">{}</p>", esc(n));
    }
    chart_block(
        o,
        "Rows loaded per second, steps marked",
        &rows_chart(l).render(),
    );
    o.push_str(
        "<div class=\"grid2\"><div><table><thead><tr><th>step</th><th>started (s)</th>\
         <th>seconds</th><th>share</th></tr></thead><tbody>",
    );
    for s in &l.steps {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.1}%</td></tr>",
            esc(&s.name),
            s.start_s,
            s.seconds,
            100.0 * s.seconds / l.seconds.max(1e-9)
        );
    }
    o.push_str(
        "</tbody></table></div><div><table><thead><tr><th>table</th><th>rows</th></tr></thead>\
         <tbody>",
    );
    for t in &l.tables {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(&t.name), t.rows);
    }
    o.push_str("</tbody></table></div></div>");
    if !r.sizes.is_empty() {
        o.push_str("<div class=\"chart-title\">Sizes after the load</div><pre>");
        for s in &r.sizes {
            o.push_str(&esc(&report::sizes::text_table(s)));
        }
        o.push_str("</pre>");
    }
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TPC-B load at scale 2 as `init tpcb -s 2` gives it, over three seconds.
    fn sample() -> Load {
        let step = |name: &str, start_s: f64, seconds: f64| LoadStep {
            name: name.into(),
            start_s,
            seconds,
        };
        Load {
            workload: "tpcb".into(),
            parameters: [("scale".to_string(), serde_json::json!(2))].into(),
            jobs: 1,
            seconds: 2.6,
            steps: vec![
                step("drop tables", 0.0, 0.01),
                step("create tables", 0.01, 0.02),
                step("client-side generate", 0.03, 1.9),
                step("vacuum", 1.93, 0.3),
                step("primary keys", 2.23, 0.37),
            ],
            tables: vec![
                LoadedTable {
                    name: "pgbench_branches".into(),
                    rows: 2,
                },
                LoadedTable {
                    name: "pgbench_tellers".into(),
                    rows: 20,
                },
                LoadedTable {
                    name: "pgbench_accounts".into(),
                    rows: 200_000,
                },
            ],
            series: vec![
                RowsSecond {
                    t_s: 1,
                    rows: 110_022,
                    by_table: vec![2, 20, 110_000],
                },
                RowsSecond {
                    t_s: 2,
                    rows: 90_000,
                    by_table: vec![0, 0, 90_000],
                },
                RowsSecond {
                    t_s: 3,
                    rows: 0,
                    by_table: vec![0, 0, 0],
                },
            ],
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        // Notes are written only when there are some: a section without them is valid too.
        let v = serde_json::to_value(sample()).unwrap();
        let mut noted = sample();
        noted.notes.push("a note".into());
        let n = serde_json::to_value(&noted).unwrap();
        let key = <Load as report::section::Section>::KEY;
        let wrong = report::section::schema_mismatches(
            key,
            &n,
            &["notes"],
            &[
                ("/steps/0", "/properties/steps/items"),
                ("/tables/0", "/properties/tables/items"),
                ("/series/0", "/properties/series/items"),
            ],
        );
        assert_eq!(wrong, Vec::<String>::new());
        let schema: serde_json::Value = serde_json::from_str(report::SCHEMA).unwrap();
        let def = serde_json::json!({"$defs": schema["$defs"], "$ref": "#/$defs/load"});
        let validator = jsonschema::draft202012::new(&def).unwrap();
        assert!(validator.is_valid(&v) && validator.is_valid(&n));
        let mut negative = v.clone();
        negative["steps"][0]["seconds"] = serde_json::json!(-1.0);
        assert!(!validator.is_valid(&negative), "a negative step time");
        let mut no_rows = v.clone();
        no_rows["tables"][0].as_object_mut().unwrap().remove("rows");
        assert!(!validator.is_valid(&no_rows), "a table without its rows");
        // The top level declares it, as a family section.
        assert_eq!(schema["properties"]["load"]["x-family-section"], true);
    }

    #[test]
    fn the_page_has_the_load_s_headline_chart_and_steps_and_no_run_charts() {
        crate::families::install_views();
        let mut r = report::RunResult::default();
        let (k, v) = report::section::keyed(&sample()).unwrap();
        r.sections.insert(k.into(), v);
        let html = report::html::render(&r, None);
        assert!(html.contains("id=\"chart-load-rows\""), "the rows/s chart");
        assert!(html.contains("<td>client-side generate</td><td>0.03</td><td>1.90</td>"));
        assert!(html.contains("<td>pgbench_accounts</td><td>200000</td>"));
        assert!(html.contains("over the whole load"), "its headline");
        assert!(!html.contains("committed transactions per second"));
        // The steps long enough to see are marked on the chart; "drop tables" is not.
        let ch = rows_chart(&sample());
        let marked: Vec<&str> = ch.markers.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(marked, ["client-side generate", "vacuum", "primary keys"]);
        // Besides all tables, a line for each table with at least 1% of the rows; each second
        // drawn across the second.
        assert_eq!(ch.series.len(), 2);
        assert_eq!(ch.series[1].name, "pgbench_accounts");
        assert_eq!(ch.series[1].points[2], (1.0, 90_000.0));
        assert_eq!(ch.series[0].points[0], (0.0, 110_022.0));
    }

    #[test]
    fn the_text_block_says_rows_steps_and_tables() {
        let t = text(&sample());
        assert_eq!(
            t.lines().next().unwrap(),
            "init tpcb (scale=2; 1 loader connection): 200022 rows in 2.6 s (76932 rows/s)"
        );
        assert!(t.contains("  steps: drop tables 0.01 s, create tables 0.02 s, client-side"));
        assert!(
            t.contains("  rows: pgbench_branches 2, pgbench_tellers 20, pgbench_accounts 200000\n")
        );
        assert!(t.contains("  fastest second: 110022 rows\n"));
    }
}
