//! The app crate's top-level modules import one another one way only (ARCHITECTURE.md): the
//! command line and the drop-ins become a plan, the plan is run, the run's result is checked
//! and reported. Each module may import only those after it in [`LAYERS`]; a `use crate::x`
//! that points back up is named here, and so is a cycle. It reads the sources, as a reviewer
//! would: paths written `crate::module`, comments aside.

/// The app crate's top-level modules, from the top (ARCHITECTURE.md, "The app crate").
const LAYERS: &[&str] = &[
    "main",
    "commands",
    "cli",
    "dropin",
    "run",
    "plan",
    "workloads",
    "families",
    "checks",
    "targeting",
    "choices",
    "cloud",
    "environment",
    "files",
    "routing",
    "runtime",
    "failpoint",
    "interrupt",
    "console",
];

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
}

/// The top-level module a file belongs to (`run/sweep.rs` -> `run`).
fn top(src: &Path, file: &str) -> String {
    let rel = Path::new(file).strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_str()
        .unwrap();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::name` a file names outside comments, `use crate::{a, b}` included.
fn named(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Comments off, lines joined: a `use crate::{...}` group that rustfmt wrapped is one.
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

#[test]
fn the_app_crates_top_modules_import_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let tops: BTreeSet<String> = files.iter().map(|(f, _)| top(&src, f)).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (file, text) in &files {
        let from = top(&src, file);
        for to in named(text) {
            if to != from && tops.contains(&to) && from != "main" {
                edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert(file.clone());
            }
        }
    }
    let unplaced: Vec<&String> = tops
        .iter()
        .filter(|t| !LAYERS.contains(&t.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules not in LAYERS (place each in the list, and in ARCHITECTURE.md): {unplaced:?}"
    );
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m).unwrap();
    let upward: Vec<String> = edges
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |(t, file)| (from, t, file)))
        .filter(|(from, to, _)| rank(to) <= rank(from))
        .map(|(from, to, file)| format!("{from} -> {to} ({file})"))
        .collect();
    assert!(
        upward.is_empty(),
        "imports that point up the layers:\n  {}",
        upward.join("\n  ")
    );
    assert!(
        edges.get("run").is_some_and(|e| e.contains_key("plan")),
        "the scan found no edge run -> plan: it no longer reads the sources ({edges:?})"
    );
    // A depth-first search; a module met again on the current path closes a cycle.
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut cycle = path[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for next in edges.get(n).into_iter().flat_map(|e| e.keys()) {
            if let Some(c) = visit(next, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for t in &tops {
        if let Some(cycle) = visit(t, &edges, &mut Vec::new(), &mut done) {
            let by: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], edges[&w[0]][&w[1]]))
                .collect();
            panic!(
                "a cycle among the app crate's modules:\n  {}",
                by.join("\n  ")
            );
        }
    }
}
