//! The CRUD mix's part of a result (`stampede run crud`), under the key `crud`: the rows its
//! committed statements wrote, inserted and deleted, as each statement's answer counted them
//! (the "row counts" check holds the same counts against the tables), and the rows written per
//! second: the figure a sweep keeps per step for batched writes (`--batch`, `View::metrics`),
//! as iibench's inserted rows per second. Updates are not counted: an update of a drawn id that
//! a delete removed changes nothing, and the workload keeps no count of updated rows.
//!
//! The counts cover the whole run (the workload counts per statement, not per interval), so the
//! rate is over the whole run's time too, warm-up included. Must not touch: the counting (the
//! workload's `Counters`), the checks.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The CRUD mix's section of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CrudSection {
    /// Rows of each batched operation (`--batch`).
    pub batch: u32,
    pub tables: u32,
    /// Rows inserted by committed inserts and batch inserts.
    pub rows_inserted: u64,
    /// Rows deleted by committed deletes.
    pub rows_deleted: u64,
    /// (`rows_inserted` + `rows_deleted`) per second of the whole run.
    pub rows_written_per_s: f64,
}

impl CrudSection {
    /// The section of a run that took `seconds` (the whole run).
    pub(crate) fn new(batch: u32, tables: u32, inserted: u64, deleted: u64, seconds: f64) -> Self {
        CrudSection {
            batch,
            tables,
            rows_inserted: inserted,
            rows_deleted: deleted,
            rows_written_per_s: rate(inserted + deleted, seconds),
        }
    }
}

fn rate(rows: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        rows as f64 / seconds
    } else {
        0.0
    }
}

/// The run's whole time: its measured time, or before `--warmup` cut it.
pub(crate) fn whole_run_s(r: &report::RunResult) -> f64 {
    (r.warmup.as_ref()).map_or(r.measured_duration_s, |w| w.whole_run_duration_s)
}

impl report::section::Section for CrudSection {
    const KEY: &'static str = "crud";
}

/// How the section renders (`report::section`).
pub(crate) struct View;
pub(crate) static VIEW: View = View;

fn line(c: &CrudSection) -> String {
    format!(
        "crud: {} rows inserted, {} deleted by committed statements ({:.0} rows written/s, \
         batch {}, {} table{})",
        c.rows_inserted,
        c.rows_deleted,
        c.rows_written_per_s,
        c.batch,
        c.tables,
        if c.tables == 1 { "" } else { "s" }
    )
}

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <CrudSection as report::section::Section>::KEY
    }

    fn summary_lines(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(c) = CrudSection::deserialize(v) {
            let _ = writeln!(o, "{}", line(&c));
        }
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(c) = CrudSection::deserialize(v) {
            let _ = write!(
                o,
                "<section id=\"crud\"><h2>CRUD mix: rows written</h2><p>{}</p></section>",
                report::svg::esc(&line(&c))
            );
        }
    }

    /// Exact for a fleet: the rows add up, over the fleet's time.
    fn merge(
        &self,
        parts: &[Option<&serde_json::Value>],
        merged: &report::RunResult,
    ) -> Option<serde_json::Value> {
        let mut all: Option<CrudSection> = None;
        for p in parts {
            let c = CrudSection::deserialize((*p)?).ok()?;
            let a = all.get_or_insert_with(|| CrudSection {
                batch: c.batch,
                tables: c.tables,
                ..Default::default()
            });
            a.rows_inserted += c.rows_inserted;
            a.rows_deleted += c.rows_deleted;
        }
        let mut a = all?;
        a.rows_written_per_s = rate(a.rows_inserted + a.rows_deleted, whole_run_s(merged));
        serde_json::to_value(a).ok()
    }

    /// A sweep's step keeps its rows written per second.
    fn metrics(
        &self,
        _r: &report::RunResult,
        v: &serde_json::Value,
    ) -> Vec<report::section::Metric> {
        CrudSection::deserialize(v)
            .map(|c| {
                vec![report::section::Metric {
                    name: "rows written/s".into(),
                    unit: "rows/s".into(),
                    value: c.rows_written_per_s,
                }]
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::section::View as _;

    #[test]
    fn the_section_is_what_the_schema_declares_and_merges_exactly() {
        let c = CrudSection::new(10, 2, 300, 100, 4.0);
        assert_eq!(c.rows_written_per_s, 100.0);
        let v = serde_json::to_value(&c).unwrap();
        let wrong = report::section::schema_mismatches("crud", &v, &[], &[]);
        assert_eq!(wrong, Vec::<String>::new());
        // Two processes of a fleet over a merged 5 s: 800 rows written, 160 rows/s.
        let merged = report::RunResult {
            measured_duration_s: 5.0,
            ..Default::default()
        };
        let m = VIEW.merge(&[Some(&v), Some(&v)], &merged).unwrap();
        let m = CrudSection::deserialize(&m).unwrap();
        assert_eq!((m.rows_inserted, m.rows_deleted), (600, 200));
        assert_eq!(m.rows_written_per_s, 160.0);
        // A process without the section: no merged section (one process is not the fleet).
        assert!(VIEW.merge(&[Some(&v), None], &merged).is_none());
        let metrics = VIEW.metrics(&merged, &v);
        assert_eq!(metrics[0].value, 100.0);
        let mut o = String::new();
        VIEW.summary_lines(&merged, &v, &mut o);
        assert!(o.starts_with("crud: 300 rows inserted, 100 deleted"), "{o}");
    }
}
