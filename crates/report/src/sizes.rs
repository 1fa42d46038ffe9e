//! The sizes of the database under test, rendered: a short line in stampede's summary (the
//! database before and after, the table that grew most), a table per reading for `init`'s
//! standard error, and the HTML report's Sizes section (each table's kind, collocation, data and
//! index bytes before and after, and its part on each shard). The readings are
//! [`measure::sizes::Sizes`], filled by `observe::sizes` and kept in `RunResult::sizes`.
//!
//! Must not touch: how the sizes are read (`observe`), I/O. Every string from the result goes
//! through [`esc`] in HTML.

use std::fmt::Write as _;

use measure::sizes::{Sizes, TableSize};

use crate::observed::bytes;
use crate::svg::esc;

fn b(v: u64) -> String {
    bytes(v as f64)
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".to_string(), b)
}

/// The change from `a` to `b`, signed: `+1.2 MiB`, `-8.0 KiB`, `+0 B`.
fn change(a: u64, b2: u64) -> String {
    if b2 >= a {
        format!("+{}", b(b2 - a))
    } else {
        format!("-{}", b(a - b2))
    }
}

/// The reading taken `when`.
pub fn reading<'a>(all: &'a [Sizes], when: &str) -> Option<&'a Sizes> {
    all.iter().find(|s| s.when == when)
}

/// stampede's summary line: `sizes: database 22.1 MiB before, 22.4 MiB after (+312.0 KiB);
/// grew most: pgbench_history +304.0 KiB (0 B -> 304.0 KiB); layout fdw, 2 shards`. `None`
/// without readings.
pub fn text_line(all: &[Sizes]) -> Option<String> {
    let before = reading(all, "before");
    let after = reading(all, "after");
    let any = after.or(before)?;
    let mut parts = Vec::new();
    match (
        before.and_then(|s| s.database_bytes),
        after.and_then(|s| s.database_bytes),
    ) {
        (Some(x), Some(y)) => parts.push(format!(
            "database {} before, {} after ({})",
            b(x),
            b(y),
            change(x, y)
        )),
        (Some(x), None) => parts.push(format!("database {} before", b(x))),
        (None, Some(y)) => parts.push(format!("database {} after", b(y))),
        (None, None) => {}
    }
    if let (Some(x), Some(y)) = (before, after) {
        let grown = y
            .tables
            .iter()
            .filter_map(|t| {
                let was = x.table(&t.name).map_or(0, TableSize::total_bytes);
                (t.total_bytes() > was).then(|| (t.total_bytes() - was, t, was))
            })
            .max_by_key(|g| g.0);
        if let Some((_, t, was)) = grown {
            parts.push(format!(
                "grew most: {} {} ({} -> {})",
                t.name,
                change(was, t.total_bytes()),
                b(was),
                b(t.total_bytes())
            ));
        }
    }
    if !any.shards.is_empty() {
        parts.push(format!(
            "layout {}, {} shard{}",
            any.layout,
            any.shards.len(),
            if any.shards.len() == 1 { "" } else { "s" }
        ));
    }
    let notes: usize = all.iter().map(|s| s.notes.len()).sum();
    if notes > 0 {
        parts.push(format!("{notes} not read (see the JSON's notes)"));
    }
    Some(format!("sizes: {}", parts.join("; ")))
}

/// One reading as a table, for `init`'s standard error: the database, each table with its
/// kind, collocation and bytes, its part on each shard, each shard's database, and the notes.
pub fn text_table(s: &Sizes) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sizes ({} layout): database {}",
        s.layout,
        opt(s.database_bytes)
    );
    let _ = writeln!(
        o,
        "  {:<28} {:<10} {:>12} {:>12}  collocation",
        "table", "kind", "data", "indexes"
    );
    for t in &s.tables {
        let _ = writeln!(
            o,
            "  {:<28} {:<10} {:>12} {:>12}  {}",
            t.name,
            t.kind,
            b(t.table_bytes),
            b(t.index_bytes),
            t.colocation.as_deref().unwrap_or("-")
        );
        for p in &t.shards {
            let _ = writeln!(
                o,
                "    on {:<24} {:>10} {:>12} {:>12}",
                p.shard,
                "",
                opt(p.table_bytes),
                opt(p.index_bytes)
            );
        }
    }
    for sh in &s.shards {
        let _ = writeln!(
            o,
            "  shard {}{}: database {}",
            sh.shard,
            sh.location
                .as_deref()
                .map_or(String::new(), |l| format!(" ({l})")),
            opt(sh.database_bytes)
        );
    }
    for n in &s.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

/// The HTML report's Sizes section; nothing without readings.
pub fn html_section(o: &mut String, all: &[Sizes]) {
    let before = reading(all, "before");
    let after = reading(all, "after");
    let Some(any) = after.or(before) else { return };
    let _ = write!(
        o,
        "<section id=\"sizes\"><h2>Sizes</h2><p class=\"muted\">Read from the server before \
         and after the run ({} layout). Database: {} before, {} after.</p>",
        esc(&any.layout),
        opt(before.and_then(|s| s.database_bytes)),
        opt(after.and_then(|s| s.database_bytes)),
    );
    o.push_str(
        "<table><thead><tr><th class=\"l\">table</th><th class=\"l\">kind</th>\
         <th class=\"l\">collocation</th><th>data before</th><th>data after</th>\
         <th>indexes before</th><th>indexes after</th><th>change</th></tr></thead><tbody>",
    );
    let names: Vec<&str> = any.tables.iter().map(|t| t.name.as_str()).collect();
    for name in &names {
        let x = before.and_then(|s| s.table(name));
        let y = after.and_then(|s| s.table(name));
        let t = y.or(x).expect("a table of one reading");
        let total = |t: Option<&TableSize>| t.map_or(0, TableSize::total_bytes);
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            esc(&t.kind),
            esc(t.colocation.as_deref().unwrap_or("-")),
            opt(x.map(|t| t.table_bytes)),
            opt(y.map(|t| t.table_bytes)),
            opt(x.map(|t| t.index_bytes)),
            opt(y.map(|t| t.index_bytes)),
            match (x, y) {
                (Some(_), Some(_)) => change(total(x), total(y)),
                _ => "-".into(),
            }
        );
    }
    o.push_str("</tbody></table>");
    let sharded = any.tables.iter().any(|t| !t.shards.is_empty());
    if sharded {
        o.push_str(
            "<h3>Each table on each shard</h3><table><thead><tr><th class=\"l\">table</th>\
             <th class=\"l\">shard</th><th>before</th><th>after</th></tr></thead><tbody>",
        );
        for t in &any.tables {
            for p in &t.shards {
                let on = |s: Option<&Sizes>| {
                    s.and_then(|s| s.table(&t.name))
                        .and_then(|t| t.shards.iter().find(|q| q.shard == p.shard))
                        .map(|q| q.total_bytes)
                };
                let _ = write!(
                    o,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&t.name),
                    esc(&p.shard),
                    opt(on(before)),
                    opt(on(after))
                );
            }
        }
        o.push_str("</tbody></table>");
    }
    if !any.shards.is_empty() {
        o.push_str(
            "<h3>Shards</h3><table><thead><tr><th class=\"l\">shard</th>\
             <th class=\"l\">where</th><th>database before</th><th>database after</th></tr>\
             </thead><tbody>",
        );
        for sh in &any.shards {
            let db = |s: Option<&Sizes>| {
                s.and_then(|s| s.shards.iter().find(|q| q.shard == sh.shard))
                    .and_then(|q| q.database_bytes)
            };
            let _ = write!(
                o,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&sh.shard),
                esc(sh.location.as_deref().unwrap_or("-")),
                opt(db(before)),
                opt(db(after))
            );
        }
        o.push_str("</tbody></table>");
    }
    let notes: Vec<&String> = all.iter().flat_map(|s| &s.notes).collect();
    if !notes.is_empty() {
        o.push_str("<ul class=\"notes\">");
        for n in notes {
            let _ = write!(o, "<li>{}</li>", esc(n));
        }
        o.push_str("</ul>");
    }
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::sizes::{ShardSize, TableShard, SHARDED};

    fn reading(when: &str, history: u64, shard0: u64) -> Sizes {
        Sizes {
            when: when.into(),
            layout: "fdw".into(),
            database_bytes: Some(1_000_000 + history),
            tables: vec![
                TableSize {
                    name: "pgbench_accounts".into(),
                    kind: SHARDED.into(),
                    colocation: Some("hash(integer) modulus 2: s0, s1".into()),
                    shard_key: Some("bid".into()),
                    table_bytes: 900_000,
                    index_bytes: 100_000,
                    shards: vec![TableShard {
                        shard: "s0".into(),
                        total_bytes: shard0,
                        table_bytes: Some(shard0),
                        index_bytes: Some(0),
                    }],
                },
                TableSize {
                    name: "pgbench_history".into(),
                    kind: SHARDED.into(),
                    table_bytes: history,
                    index_bytes: 0,
                    ..Default::default()
                },
            ],
            shards: vec![ShardSize {
                shard: "s0".into(),
                location: Some("host=/tmp port=5433 dbname=d".into()),
                database_bytes: Some(500_000),
            }],
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_line_names_the_database_before_and_after_and_the_table_that_grew() {
        let all = [reading("before", 0, 10), reading("after", 8192, 20)];
        let line = text_line(&all).unwrap();
        assert!(
            line.contains("database 976.6 KiB before, 984.6 KiB after (+8.0 KiB)"),
            "{line}"
        );
        assert!(
            line.contains("grew most: pgbench_history +8.0 KiB (0 B -> 8.0 KiB)"),
            "{line}"
        );
        assert!(line.contains("layout fdw, 1 shard"), "{line}");
        assert_eq!(text_line(&[]), None);
    }

    #[test]
    fn the_html_shows_kinds_before_and_after_and_each_shard() {
        let all = [reading("before", 0, 10), reading("after", 8192, 20)];
        let mut o = String::new();
        html_section(&mut o, &all);
        assert!(o.contains("<td class=\"l\">pgbench_history</td><td class=\"l\">sharded</td>"));
        assert!(o.contains("hash(integer) modulus 2: s0, s1"));
        // Before, then after: 0 B then 8.0 KiB of data.
        assert!(o.contains("<td>0 B</td><td>8.0 KiB</td>"), "{o}");
        assert!(
            o.contains("<td class=\"l\">s0</td><td>10 B</td><td>20 B</td>"),
            "{o}"
        );
        assert!(o.contains("host=/tmp port=5433 dbname=d"));
        let mut empty = String::new();
        html_section(&mut empty, &[]);
        assert!(empty.is_empty());
        let t = text_table(&all[1]);
        assert!(t.contains("pgbench_accounts"), "{t}");
        assert!(t.contains("on s0"), "{t}");
    }
}
