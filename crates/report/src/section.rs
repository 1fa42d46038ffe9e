//! A workload family's own part of a result, known to this crate only by its key.
//!
//! A family (its folder in the app crate) defines a typed section, stores it in
//! [`RunResult::sections`](crate::RunResult) under its key (a field of the JSON's top level,
//! declared in the schema's `$defs` under the same name) and renders it through a [`View`]. The
//! binary installs the views of every family it knows once, at start ([`install`]); each
//! rendering (the text summary, the HTML report) asks them for their blocks, in the order they
//! were installed. A result read back from JSON keeps every section, known or not, and writes it
//! out again unchanged; a section that no installed view claims is not rendered.
//!
//! Why a process-wide table and not a parameter of every renderer: the renderers are called
//! from many places (the end of a run, `stampede report`, a fleet's merge, `compare`), and the
//! set of families is a property of the program, not of a call.

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::RunResult;

/// How one family's section renders.
pub trait View: Sync {
    /// The section's key in the result (and in the schema's `$defs`).
    fn key(&self) -> &'static str;
    /// The line that says the data's size in the pgbench voice's header, in place of
    /// `scaling factor: N` (TPC-C's `warehouses: N`).
    fn size_line(&self, _r: &RunResult, _v: &serde_json::Value) -> Option<String> {
        None
    }
    /// Headline numbers of the HTML report before the run's own (with [`crate::html::kpi`]):
    /// TPC-C's tpmC.
    fn headline(&self, _r: &RunResult, _v: &serde_json::Value, _o: &mut String) {}
    /// Lines in stampede's summary, after the run's own lines (each ending in `\n`).
    fn summary_lines(&self, _r: &RunResult, _v: &serde_json::Value, _o: &mut String) {}
    /// A block of its own after the summaries, or `None` (each line ending in `\n`).
    fn text_block(&self, _r: &RunResult, _v: &serde_json::Value) -> Option<String> {
        None
    }
    /// Its `<section>` of the HTML report.
    fn html(&self, _r: &RunResult, _v: &serde_json::Value, _o: &mut String) {}
    /// A family whose run measured no transactions (the cache curve) writes the report's
    /// headline numbers itself (with [`crate::html::kpi`]) and returns true: the report then
    /// shows that headline, the checks, its [`View::html`] and what ran where, without the
    /// run's throughput, latency and client sections (which would all be empty).
    fn own_headline(&self, _r: &RunResult, _v: &serde_json::Value, _o: &mut String) -> bool {
        false
    }
    /// The section of a merged result (a fleet's, `stampede merge`) from each result's, in
    /// order (`None` where a result has none), given the merged result (its totals and
    /// measured time are the fleet's). `None`, the default, leaves the section out: a section
    /// that cannot be merged exactly (percentiles of summaries, samples of one table seen by
    /// each process) must not show one process's numbers as the fleet's.
    fn merge(
        &self,
        _parts: &[Option<&serde_json::Value>],
        _merged: &RunResult,
    ) -> Option<serde_json::Value> {
        None
    }
    /// The family's own figures of a run, each a number with its unit: what a sweep keeps per
    /// step and charts against the swept value (`report::sweep`): TPC-C's tpmC and NOPM,
    /// iibench's inserted rows per second. Empty, the default, for a family whose numbers are
    /// the generic ones.
    fn metrics(&self, _r: &RunResult, _v: &serde_json::Value) -> Vec<Metric> {
        Vec::new()
    }
    /// The family's figures that `compare` judges one by one, each measured once per run (no
    /// per-interval samples: TPC-H's per-query times): `crate::compare::single`. Empty, the
    /// default, for a family whose numbers are the generic ones.
    fn singles(
        &self,
        _r: &RunResult,
        _v: &serde_json::Value,
    ) -> Vec<crate::compare::single::Single> {
        Vec::new()
    }
}

/// Every installed view's single figures of `r` ([`View::singles`]), in installation order.
pub fn singles(r: &RunResult) -> Vec<crate::compare::single::Single> {
    present(r).flat_map(|(v, s)| v.singles(r, s)).collect()
}

/// One of a family's own figures of a run ([`View::metrics`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Metric {
    /// Its name as the family says it (`tpmC`, `insert rows/s`).
    pub name: String,
    /// Its unit (`New-Orders/min`, `rows/s`).
    pub unit: String,
    pub value: f64,
}

/// Every installed view's figures of `r` ([`View::metrics`]), in installation order.
pub fn metrics(r: &RunResult) -> Vec<Metric> {
    present(r).flat_map(|(v, s)| v.metrics(r, s)).collect()
}

static VIEWS: OnceLock<&'static [&'static dyn View]> = OnceLock::new();

/// Install the families' views; the first call wins (the binary calls it once at start; tests
/// may call it again with the same table).
pub fn install(views: &'static [&'static dyn View]) {
    let _ = VIEWS.set(views);
}

/// The installed view of the section `key`, if any.
pub(crate) fn view(key: &str) -> Option<&'static dyn View> {
    let views: &'static [&'static dyn View] = VIEWS.get().copied().unwrap_or(&[]);
    views.iter().copied().find(|v| v.key() == key)
}

/// The installed views whose sections `r` holds, in installation order, with each section.
pub(crate) fn present(
    r: &RunResult,
) -> impl Iterator<Item = (&'static dyn View, &serde_json::Value)> {
    let views: &'static [&'static dyn View] = VIEWS.get().copied().unwrap_or(&[]);
    views
        .iter()
        .filter_map(move |v| r.sections.get(v.key()).map(|s| (*v, s)))
}

/// A typed section's key (for [`keyed`]).
pub trait Section: Serialize + DeserializeOwned {
    const KEY: &'static str;
}

/// The schema's declaration of a family section against a value of it: every key written is
/// declared, every required key is written (`optional` lists the keys a section may omit),
/// recursively for the objects named in `nested` (a JSON pointer into the value and the
/// matching pointer into the declaration). Empty when they agree. For the families' tests: the
/// schema file is this crate's ([`crate::SCHEMA`]).
pub fn schema_mismatches(
    key: &str,
    value: &serde_json::Value,
    optional: &[&str],
    nested: &[(&str, &str)],
) -> Vec<String> {
    let schema: serde_json::Value = match serde_json::from_str(crate::SCHEMA) {
        Ok(s) => s,
        Err(e) => return vec![format!("the schema does not parse: {e}")],
    };
    let def = &schema["$defs"][key];
    let mut out = Vec::new();
    let mut pairs = vec![(String::new(), def, value)];
    for (vp, dp) in nested {
        match (def.pointer(dp), value.pointer(vp)) {
            (Some(d), Some(v)) => pairs.push((vp.to_string(), d, v)),
            _ => out.push(format!(
                "{key}{vp}: not in the value or not declared at {dp}"
            )),
        }
    }
    for (at, d, v) in pairs {
        let (Some(written), Some(declared)) = (v.as_object(), d["properties"].as_object()) else {
            out.push(format!(
                "{key}{at}: not an object, or declared without properties"
            ));
            continue;
        };
        let required: Vec<&str> = (d["required"].as_array().into_iter().flatten())
            .filter_map(|k| k.as_str())
            .collect();
        for k in written.keys() {
            if !declared.contains_key(k) {
                out.push(format!("{key}{at}: `{k}` is written but not declared"));
            }
        }
        for k in declared.keys() {
            if !written.contains_key(k) {
                out.push(format!("{key}{at}: `{k}` is declared but not written"));
            }
        }
        for k in written.keys() {
            let must = !optional.contains(&k.as_str());
            if must != required.contains(&k.as_str()) {
                out.push(format!(
                    "{key}{at}: `{k}` should be {} in the schema",
                    if must { "required" } else { "optional" }
                ));
            }
        }
    }
    out
}

/// A typed section as [`RunResult::sections`] holds it: its key and its JSON value.
pub fn keyed<S: Section>(s: &S) -> Option<(&'static str, serde_json::Value)> {
    serde_json::to_value(s).ok().map(|v| (S::KEY, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Counted {
        n: u64,
    }

    impl Section for Counted {
        const KEY: &'static str = "counted";
    }

    struct CountedView;

    impl View for CountedView {
        fn key(&self) -> &'static str {
            Counted::KEY
        }
        fn summary_lines(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
            o.push_str(&format!("counted: {}\n", v["n"]));
        }
        fn text_block(&self, _r: &RunResult, v: &serde_json::Value) -> Option<String> {
            Some(format!("counted block: {}\n", v["n"]))
        }
        fn html(&self, _r: &RunResult, v: &serde_json::Value, o: &mut String) {
            o.push_str(&format!("<section id=\"counted\">{}</section>", v["n"]));
        }
        fn merge(
            &self,
            parts: &[Option<&serde_json::Value>],
            _merged: &RunResult,
        ) -> Option<serde_json::Value> {
            let n: Option<u64> = parts.iter().map(|p| p.and_then(|v| v["n"].as_u64())).sum();
            Some(serde_json::json!({ "n": n? }))
        }
    }

    static VIEWS: &[&dyn View] = &[&CountedView];

    #[test]
    fn a_family_section_is_kept_through_json_and_rendered_by_its_view() {
        install(VIEWS);
        let mut r = crate::testdata::sysbench_run();
        let (key, value) = keyed(&Counted { n: 42 }).unwrap();
        r.sections.insert(key.into(), value);
        // One no view claims: kept as read, written again, not rendered.
        r.sections
            .insert("unclaimed".into(), serde_json::json!({"x": [1, 2]}));
        let mut json = Vec::new();
        crate::write_json(&r, &mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["counted"]["n"], 42, "a field of the top level");
        let back = crate::read_json(&json[..]).unwrap();
        let read: Counted = serde_json::from_value(back.sections["counted"].clone()).unwrap();
        assert_eq!(read, Counted { n: 42 });
        assert_eq!(back.sections["unclaimed"], serde_json::json!({"x": [1, 2]}));
        let text = crate::render_text(&back);
        assert!(text.contains("counted: 42\n"), "{text}");
        assert!(text.contains("\ncounted block: 42\n"), "{text}");
        assert!(!text.contains("unclaimed"), "{text}");
        let html = crate::html::render(&back, None);
        assert!(html.contains("<section id=\"counted\">42</section>"));
    }

    #[test]
    fn a_merge_asks_each_section_s_view_and_leaves_out_what_none_can_merge() {
        install(VIEWS);
        let with = |n: u64| {
            let mut r = crate::testdata::sysbench_run();
            let (key, value) = keyed(&Counted { n }).unwrap();
            r.sections.insert(key.into(), value);
            r.sections
                .insert("unclaimed".into(), serde_json::json!({"x": n}));
            r
        };
        let m = crate::merge::merge(&[with(2), with(40)], None).unwrap();
        assert_eq!(m.sections["counted"], serde_json::json!({"n": 42}));
        // Not process 1's numbers shown as the fleet's: left out.
        assert!(!m.sections.contains_key("unclaimed"), "{:?}", m.sections);
        // A result without the section: this view cannot merge it, so it is left out too.
        let mut bare = with(1);
        bare.sections.remove("counted");
        let m = crate::merge::merge(&[with(2), bare], None).unwrap();
        assert!(!m.sections.contains_key("counted"), "{:?}", m.sections);
    }

    #[test]
    fn schema_mismatches_name_what_differs() {
        // `sweep` is declared in the schema; a value with an extra key and a missing one.
        let v = serde_json::json!({"parameter": "clients", "bogus": 1});
        let wrong = schema_mismatches("sweep", &v, &[], &[]);
        assert!(wrong
            .iter()
            .any(|w| w.contains("`bogus` is written but not declared")));
        assert!(wrong
            .iter()
            .any(|w| w.contains("`steps` is declared but not written")));
    }
}
