//! The plan hash of each (stream, query) text a TPC-H run sent (issue 34: "per-query time,
//! rows and plan hash per stream"): after the run, on a session of its own, each text is
//! explained (PostgreSQL's `EXPLAIN (FORMAT JSON)`, MySQL's and MariaDB's `EXPLAIN
//! FORMAT=JSON`), the plan reduced to its shape and the shape hashed.
//!
//! The shape is what the planner chose, not what it estimated: node types and access types,
//! relations, index names, join types and strategies, and the tree itself (a node's children in
//! order, so the join order). Costs, row estimates, widths, conditions and sort keys (which
//! carry the substitution parameters' literal values) are left out, so the same plan for
//! other parameters hashes the same, and a hash that differs between two streams is a plan that
//! differs. The hash is FNV-1a, 64 bits, as 16 hex digits: written out here because std's
//! `DefaultHasher` may change between Rust versions, and a hash must compare across results.
//!
//! When: in the runner's checks, after the commit count and the statement ledger read the
//! server's counters (`run::measure` reads them first), so no EXPLAIN is counted as the
//! workload's, and skipped with the checks (`--no-check`). The plan is the planner's choice
//! on the data as the run left it (the refresh pairs put it back), which is what each
//! execution chose unless statistics moved during the run.
//!
//! A text EXPLAIN refuses gets no hash; the reason is counted, never a failed run. The
//! refresh functions are statements of a transaction, not queries: they have none.
//!
//! Must not touch: the run's timing and counters (a session of its own, after them), the data
//! (EXPLAIN without ANALYZE executes nothing).

use std::collections::BTreeMap;

use serde_json::Value;
use sut::Session;

use super::queries::Dialect;
use super::section::Plans;

/// What explaining the texts found: a hash per text given (same order), or why there is none,
/// and those reasons counted.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Taken {
    pub hashes: Vec<Option<String>>,
    pub refused: BTreeMap<String, u64>,
}

impl Taken {
    /// Every text refused for the same reason (no session, say).
    pub(crate) fn none(n: usize, why: &str) -> Taken {
        let mut refused = BTreeMap::new();
        if n > 0 {
            refused.insert(why.to_string(), n as u64);
        }
        Taken {
            hashes: vec![None; n],
            refused,
        }
    }
}

/// No plan taken, and why (`--no-check`).
pub(crate) fn skipped(why: &str) -> (Vec<Option<String>>, Plans) {
    let plans = Plans {
        skipped: Some(why.into()),
        ..Plans::default()
    };
    (Vec::new(), plans)
}

/// The statement that explains `sql` as JSON.
pub(crate) fn explain_sql(d: Dialect, sql: &str) -> String {
    match d {
        Dialect::Postgres => format!("EXPLAIN (FORMAT JSON) {sql}"),
        Dialect::Mysql => format!("EXPLAIN FORMAT=JSON {sql}"),
    }
}

/// Scalar fields that are the plan's choices (kept with their values). PostgreSQL's names
/// (docs: "Using EXPLAIN", the JSON format's keys) and MySQL's/MariaDB's (`table_name`,
/// `access_type`, `key`, ...). Every other scalar (costs, rows, widths, conditions, keys'
/// lengths, filtered shares) is left out.
const KEPT: &[&str] = &[
    // PostgreSQL
    "Node Type",
    "Relation Name",
    "Index Name",
    "Join Type",
    "Strategy",
    "Partial Mode",
    "Parent Relationship",
    "Subplan Name",
    "CTE Name",
    "Scan Direction",
    "Parallel Aware",
    "Inner Unique",
    "Command",
    // MySQL and MariaDB
    "table_name",
    "access_type",
    "key",
    "join_type",
    "using_index",
    "using_filesort",
    "using_temporary_table",
    "using_join_buffer",
    "materialized_from_subquery",
    "loose_scan",
    "first_match",
];

/// Objects and arrays left out whole: estimates and the candidates the planner did not choose.
const DROPPED: &[&str] = &[
    "cost_info",
    "possible_keys",
    "used_columns",
    "used_key_parts",
    "ref",
    "attached_condition",
    "Sort Key",
    "Group Key",
    "Presorted Key",
    "Hash Key",
    "Output",
    "Workers",
];

/// The plan's shape as a string: the tree of kept fields, in the plan's order.
pub(crate) fn shape(plan: &Value) -> String {
    let mut out = String::new();
    walk(plan, &mut out);
    out
}

fn walk(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (k, v) in m {
                if DROPPED.contains(&k.as_str()) {
                    continue;
                }
                match v {
                    Value::Object(_) | Value::Array(_) => {
                        out.push_str(k);
                        walk(v, out);
                    }
                    _ if KEPT.contains(&k.as_str()) => {
                        out.push_str(k);
                        out.push('=');
                        match v {
                            Value::String(s) => out.push_str(s),
                            other => out.push_str(&other.to_string()),
                        }
                        out.push(';');
                    }
                    _ => {}
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for v in a.iter().filter(|v| v.is_object() || v.is_array()) {
                walk(v, out);
            }
            out.push(']');
        }
        _ => {}
    }
}

/// FNV-1a, 64 bits (the published offset basis and prime), as 16 hex digits.
pub(crate) fn hash(shape: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in shape.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The hash of one explained text, or why there is none.
async fn one(s: &mut Session, d: Dialect, sql: &str) -> Result<String, String> {
    let rows = s
        .simple_query(&explain_sql(d, sql))
        .await
        .map_err(|e| match e {
            sut::Error::Db(db) => format!("EXPLAIN refused it ({})", db.code),
            e => format!("EXPLAIN failed ({})", first_line(&e.to_string())),
        })?;
    let text = (rows.first())
        .and_then(|r| r.first().cloned().flatten())
        .ok_or("EXPLAIN returned no plan")?;
    let plan: Value =
        serde_json::from_str(&text).map_err(|_| "EXPLAIN's output is not JSON".to_string())?;
    Ok(hash(&shape(&plan)))
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    l.chars().take(80).collect()
}

/// The plans of `texts` (per transaction type; `None`: no query text) on a session of the
/// run's target opened for them: a hash per type and the section's summary. Never an error:
/// a session that cannot be had refuses every text with its reason.
pub(crate) fn after_run(
    ctx: &crate::families::Ctx,
    texts: &[Option<&str>],
) -> (Vec<Option<String>>, Plans) {
    let d = match ctx.conn().dialect() {
        sut::Dialect::Postgres => Dialect::Postgres,
        sut::Dialect::MySql => Dialect::Mysql,
    };
    let queries: Vec<&str> = texts.iter().flatten().copied().collect();
    let taken = ctx
        .with_session(async |s| Ok(take(s, d, &queries).await))
        .unwrap_or_else(|e| {
            Taken::none(
                queries.len(),
                &format!("no session ({})", first_line(&format!("{e:#}"))),
            )
        });
    let mut hashes = taken.hashes.into_iter();
    let per_type = (texts.iter())
        .map(|t| t.and_then(|_| hashes.next().flatten()))
        .collect::<Vec<_>>();
    let plans = Plans {
        hashed: per_type.iter().flatten().count() as u64,
        refused: taken.refused,
        skipped: None,
    };
    (per_type, plans)
}

/// Explain each text on `s`, one after the other. A connection lost on the way refuses the
/// rest with its reason (each later EXPLAIN fails the same way).
pub(crate) async fn take(s: &mut Session, d: Dialect, texts: &[&str]) -> Taken {
    let mut t = Taken::default();
    for sql in texts {
        match one(s, d, sql).await {
            Ok(h) => t.hashes.push(Some(h)),
            Err(why) => {
                *t.refused.entry(why).or_default() += 1;
                t.hashes.push(None);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_published_function() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo: the offset basis for "", "a", "foobar").
        assert_eq!(hash(""), "cbf29ce484222325");
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
        assert_eq!(hash("foobar"), "85944171f73967e8");
    }

    #[test]
    fn the_shape_keeps_choices_and_leaves_out_estimates_and_literals() {
        let a: Value = serde_json::from_str(
            r#"[{"Plan": {"Node Type": "Hash Join", "Join Type": "Inner", "Total Cost": 12.5,
                "Plan Rows": 40, "Hash Cond": "(o.o_custkey = c.c_custkey)",
                "Plans": [{"Node Type": "Seq Scan", "Relation Name": "orders",
                           "Filter": "(o_orderdate < '1995-03-15'::date)", "Plan Rows": 7},
                          {"Node Type": "Index Scan", "Relation Name": "customer",
                           "Index Name": "customer_pkey", "Plan Width": 8}]}}]"#,
        )
        .unwrap();
        let mut b = a.clone();
        b[0]["Plan"]["Total Cost"] = 99.0.into();
        b[0]["Plan"]["Plans"][0]["Filter"] = "(o_orderdate < '1996-01-01'::date)".into();
        b[0]["Plan"]["Plans"][0]["Plan Rows"] = 900.into();
        assert_eq!(shape(&a), shape(&b));
        assert!(!shape(&a).contains("1995") && !shape(&a).contains("12.5"));
        assert!(
            shape(&a).contains("Index Name=customer_pkey;"),
            "{}",
            shape(&a)
        );
        // Another index, or the join's inputs the other way round: another plan.
        let mut c = a.clone();
        c[0]["Plan"]["Plans"][1]["Index Name"] = "c_nationkey_idx".into();
        assert_ne!(hash(&shape(&a)), hash(&shape(&c)));
        let mut d = a.clone();
        let kids = d[0]["Plan"]["Plans"].as_array_mut().unwrap();
        kids.swap(0, 1);
        assert_ne!(hash(&shape(&a)), hash(&shape(&d)));
    }

    #[test]
    fn mysql_plans_keep_tables_access_and_keys() {
        let a: Value = serde_json::from_str(
            r#"{"query_block": {"select_id": 1, "cost": 0.31, "nested_loop": [
                {"table": {"table_name": "nation", "access_type": "ALL", "rows": 25,
                           "filtered": 100, "attached_condition": "nation.n_name = 'GERMANY'"}},
                {"table": {"table_name": "supplier", "access_type": "ref",
                           "possible_keys": ["s_nationkey"], "key": "s_nationkey",
                           "key_length": "4", "used_key_parts": ["s_nationkey"],
                           "ref": ["tpch.nation.n_nationkey"], "rows": 400}}]}}"#,
        )
        .unwrap();
        let s = shape(&a);
        assert!(
            s.contains("table_name=supplier;") && s.contains("key=s_nationkey;"),
            "{s}"
        );
        assert!(!s.contains("GERMANY") && !s.contains("400"), "{s}");
        assert_eq!(
            explain_sql(Dialect::Mysql, "select 1"),
            "EXPLAIN FORMAT=JSON select 1"
        );
    }

    #[test]
    fn a_refusal_for_every_text_is_counted_once_per_text() {
        let t = Taken::none(3, "no session");
        assert_eq!(t.hashes, vec![None, None, None]);
        assert_eq!(t.refused.get("no session"), Some(&3));
        assert!(Taken::none(0, "x").refused.is_empty());
    }
}
