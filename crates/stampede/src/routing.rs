//! The routing check: before a run on sharded tables, EXPLAIN each distinct statement of the
//! workload with representative values and say which reach one shard and which scatter
//! (seed 000: "Aurora Limitless can't push statements down to the data unless it knows the shard
//! key. Therefore, we need to check the workload"). `--require-single-shard` refuses the run
//! when any statement scatters, naming it.
//!
//! How the plan is read, per layout:
//! - fdw (hash partitions on postgres_fdw foreign tables): the foreign servers of the
//!   partitions left in the plan after pruning (`EXPLAIN (FORMAT JSON)`, every "Relation
//!   Name"). An INSERT is routed when it runs, not in its plan: its shard is the one a SELECT
//!   of the same key value prunes to (`SELECT 1 FROM t WHERE key = value`).
//! - Citus: the "Task Count" of the distributed plan.
//! - Aurora Limitless: its plan nodes; a plan that names a single shard is single-shard. This
//!   reading is from the documentation only: no server here runs Limitless.
//!
//! Representative values: every variable is 1 (`delta` 0), which keeps pgbench's rows
//! consistent (account 1, teller 1 and branch 1 belong together). Detection of sharded tables
//! reads the catalog: foreign partitions, the citus extension, the Limitless settings; a plain
//! database is not checked.

use std::collections::{BTreeSet, HashMap};

use anyhow::Result;
use report::Routing;
use sut::{Dialect, Session};
use workload::script::{CommandKind, ScriptSet, SqlPart};

use crate::console::{self, Failure};

/// How the tables are sharded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fdw,
    Citus,
    Limitless,
}

/// Check the workload's statements when the tables are sharded; print and return the verdicts.
pub(crate) async fn before_run(
    s: &mut Session,
    set: &ScriptSet,
    require: bool,
) -> Result<Vec<Routing>> {
    check_statements(s, &statements(set), require).await
}

/// The check of `stmts`: (as shown, with representative values).
pub(crate) async fn check_statements(
    s: &mut Session,
    stmts: &[(String, String)],
    require: bool,
) -> Result<Vec<Routing>> {
    if s.dialect() != Dialect::Postgres {
        return Ok(Vec::new());
    }
    let verdicts = match detect(s).await? {
        None => None,
        Some(kind) => {
            let mut out = Vec::new();
            for (shown, sql) in stmts {
                out.push(classify(s, kind, shown, sql).await?);
            }
            Some(out)
        }
    };
    let Some(verdicts) = verdicts else {
        if require {
            console::note(
                "--require-single-shard: the tables are not sharded (no foreign partitions, \
                 Citus or Aurora Limitless found): nothing to check",
            );
        }
        return Ok(Vec::new());
    };
    eprint!("{}", render(&verdicts));
    let scattered: Vec<&Routing> = verdicts.iter().filter(|v| !v.single_shard).collect();
    if require && !scattered.is_empty() {
        let list: Vec<String> = scattered
            .iter()
            .map(|v| format!("{} ({})", v.statement, touched(v)))
            .collect();
        return Err(Failure::usage(
            format!(
                "--require-single-shard: {} statement(s) of the workload are not single-shard: {}",
                scattered.len(),
                list.join("; ")
            ),
            "give every statement an equality on the shard key (bid for pgbench's tables: \
             `stampede run tpcb-sharded`), or leave --require-single-shard out",
        ));
    }
    Ok(verdicts)
}

fn touched(v: &Routing) -> String {
    match v.shards_total {
        0 => format!("{} shard(s)", v.shards_touched),
        n => format!("{} of {n} shards", v.shards_touched),
    }
}

/// The check as printed before the run.
pub(crate) fn render(verdicts: &[Routing]) -> String {
    let mut s = format!(
        "routing check ({}):\n",
        verdicts.first().map_or("", |v| v.basis.as_str())
    );
    for v in verdicts {
        let label = if v.single_shard {
            "single-shard"
        } else {
            "SCATTERS"
        };
        s.push_str(&format!(
            "  {label:<12} {:<16} {}\n",
            touched(v),
            v.statement
        ));
    }
    s
}

/// Each distinct SQL statement of the scripts that EXPLAIN can plan: (as written, with values).
fn statements(set: &ScriptSet) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for script in set.scripts() {
        for c in &script.commands {
            let CommandKind::Sql(q) = &c.kind else {
                continue;
            };
            let text = q.text.trim().trim_end_matches(';').trim().to_string();
            let first = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if !matches!(
                first.as_str(),
                "select" | "insert" | "update" | "delete" | "with"
            ) {
                continue;
            }
            if !seen.insert(text.clone()) {
                continue;
            }
            let mut sql = String::new();
            for p in &q.parts {
                match p {
                    SqlPart::Text(r) => sql.push_str(&q.text[r.clone()]),
                    SqlPart::Var { range, .. }
                    | SqlPart::Literal { range, .. }
                    | SqlPart::Ident { range, .. } => {
                        let name = q.text[range.clone()]
                            .trim_matches(|c| c == ':' || c == '\'' || c == '"');
                        sql.push_str(representative(name));
                    }
                }
            }
            let sql = sql.trim().trim_end_matches(';').to_string();
            out.push((text, sql));
        }
    }
    out
}

/// sysbench's statements as listed (`sbtest%u`, `?`): table 1, ids 1, strings empty (`c` and
/// `pad`, by their column).
pub(crate) fn sysbench_statements(types: &[workload::TxnType]) -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for text in types.iter().flat_map(|t| t.statements.iter()) {
        let first = text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !matches!(first.as_str(), "select" | "insert" | "update" | "delete")
            || !seen.insert(text)
        {
            continue;
        }
        let sql = text.replace("%u", "1");
        // The columns the `?`s stand for: an INSERT's list, else what precedes each `?`.
        let insert_cols: Vec<String> =
            match (sql.find('('), sql.to_ascii_lowercase().find(" values")) {
                (Some(o), Some(v)) if first == "insert" && o < v => sql[o + 1..v]
                    .trim_end()
                    .trim_end_matches(')')
                    .split(',')
                    .map(|c| c.trim().to_string())
                    .collect(),
                _ => Vec::new(),
            };
        let mut filled = String::new();
        let mut n = 0;
        for ch in sql.chars() {
            if ch != '?' {
                filled.push(ch);
                continue;
            }
            let col = match insert_cols.get(n) {
                Some(c) => c.clone(),
                None => filled
                    .trim_end()
                    .trim_end_matches('=')
                    .trim_end()
                    .rsplit(' ')
                    .next()
                    .unwrap_or("")
                    .to_string(),
            };
            filled.push_str(if matches!(col.as_str(), "c" | "pad") {
                "''"
            } else {
                "1"
            });
            n += 1;
        }
        out.push((text.clone(), filled));
    }
    out
}

fn representative(var: &str) -> &'static str {
    match var {
        "delta" => "0",
        _ => "1",
    }
}

/// The sharded layout, from the catalog (`observe::sizes::layout`: one probe for the sizes and
/// this check); `None` for plain tables.
async fn detect(s: &mut Session) -> Result<Option<Kind>> {
    use observe::sizes::Layout;
    Ok(match observe::sizes::layout(s).await? {
        Layout::Citus => Some(Kind::Citus),
        Layout::Limitless => Some(Kind::Limitless),
        Layout::Fdw => Some(Kind::Fdw),
        Layout::Plain => None,
    })
}

async fn one_value(s: &mut Session, sql: &str) -> Result<String> {
    let rows = s.simple_query(sql).await?;
    Ok(rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .collect::<Vec<_>>()
        .join("\n"))
}

async fn classify(s: &mut Session, kind: Kind, shown: &str, sql: &str) -> Result<Routing> {
    let mut r = Routing {
        statement: shown.to_string(),
        ..Default::default()
    };
    match kind {
        Kind::Citus => {
            let plan = one_value(s, &format!("explain {sql}")).await?;
            r.basis = "citus: Task Count of the distributed plan".into();
            r.shards_touched = plan
                .lines()
                .find_map(|l| l.trim().strip_prefix("Task Count:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            r.single_shard = r.shards_touched == 1;
        }
        Kind::Limitless => {
            let plan = one_value(s, &format!("explain {sql}")).await?;
            r.basis = "limitless: plan nodes".into();
            r.single_shard = plan.to_ascii_lowercase().contains("single shard");
            r.shards_touched = u32::from(r.single_shard);
        }
        Kind::Fdw => fdw(s, &mut r, sql).await?,
    }
    Ok(r)
}

/// fdw: the foreign servers of the partitions the plan keeps.
async fn fdw(s: &mut Session, r: &mut Routing, sql: &str) -> Result<()> {
    r.basis = "fdw: foreign partitions after pruning".into();
    // partition -> (parent, server)
    let rows = s
        .simple_query(
            "select c.relname, i.inhparent::regclass::text, srv.srvname \
             from pg_catalog.pg_foreign_table ft \
             join pg_catalog.pg_class c on c.oid = ft.ftrelid \
             join pg_catalog.pg_inherits i on i.inhrelid = ft.ftrelid \
             join pg_catalog.pg_foreign_server srv on srv.oid = ft.ftserver",
        )
        .await?;
    let mut server_of: HashMap<String, (String, String)> = HashMap::new();
    let mut servers_of_parent: HashMap<String, BTreeSet<String>> = HashMap::new();
    for row in rows {
        let get = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        server_of.insert(get(0), (get(1), get(2)));
        servers_of_parent.entry(get(1)).or_default().insert(get(2));
    }
    let explained = match insert_probe(s, sql).await? {
        Probe::NotInsert => sql.to_string(),
        Probe::Select(q) => q,
        Probe::NoKey(table, key) => {
            r.shards_touched = servers_of_parent.get(&table).map_or(0, |v| v.len() as u32);
            r.shards_total = r.shards_touched;
            r.basis = format!("fdw: INSERT into {table} without its shard key {key}");
            return Ok(());
        }
    };
    let plan = one_value(s, &format!("explain (format json) {explained}")).await?;
    let v: serde_json::Value = serde_json::from_str(&plan)?;
    let mut rels = BTreeSet::new();
    relations(&v, &mut rels);
    let mut touched = BTreeSet::new();
    let mut total = BTreeSet::new();
    for rel in &rels {
        // A pruned plan names only the partitions left: their parents say how many there are.
        let parent = match server_of.get(rel) {
            Some((parent, srv)) => {
                touched.insert(srv.clone());
                parent
            }
            None => rel,
        };
        if let Some(all) = servers_of_parent.get(parent) {
            total.extend(all.iter().cloned());
        }
    }
    r.shards_touched = touched.len() as u32;
    r.shards_total = total.len().max(touched.len()) as u32;
    r.single_shard = r.shards_touched == 1;
    Ok(())
}

/// Every "Relation Name" in an EXPLAIN (FORMAT JSON) tree.
fn relations(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::String(n)) = m.get("Relation Name") {
                out.insert(n.clone());
            }
            m.values().for_each(|x| relations(x, out));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| relations(x, out)),
        _ => {}
    }
}

enum Probe {
    NotInsert,
    /// The SELECT that prunes as the INSERT routes.
    Select(String),
    /// (table, key): the INSERT does not give the key.
    NoKey(String, String),
}

/// `INSERT INTO t (cols) VALUES (vals)` into a hash-partitioned `t`: the SELECT of its key value.
async fn insert_probe(s: &mut Session, sql: &str) -> Result<Probe> {
    let lower = sql.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("insert into ") else {
        return Ok(Probe::NotInsert);
    };
    let (Some(open), Some(values)) = (rest.find('('), rest.find(" values ")) else {
        return Ok(Probe::NotInsert);
    };
    let table = rest[..open].trim().to_string();
    let cols_end = rest[..values].rfind(')').unwrap_or(values);
    let cols: Vec<String> = rest[open + 1..cols_end]
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    let vals_text = rest[values + " values ".len()..].trim();
    let vals = split_top(vals_text.trim_start_matches('(').trim_end_matches(')'));
    let key = one_value(
        s,
        &format!(
            "select a.attname from pg_catalog.pg_partitioned_table p \
             join pg_catalog.pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0] \
             where p.partrelid = to_regclass('{}')",
            table.replace('\'', "''")
        ),
    )
    .await?;
    if key.is_empty() {
        return Ok(Probe::NotInsert);
    }
    match cols
        .iter()
        .position(|c| *c == key)
        .and_then(|i| vals.get(i))
    {
        Some(v) => Ok(Probe::Select(format!(
            "select 1 from {table} where {key} = {v}"
        ))),
        None => Ok(Probe::NoKey(table, key)),
    }
}

/// `a, f(b, c), d` split at the commas outside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_statements_get_values_of_their_columns_types() {
        let types = [workload::TxnType {
            name: "t".into(),
            statements: vec![
                "SELECT c FROM sbtest%u WHERE id=?".into(),
                "UPDATE sbtest%u SET c=? WHERE id=?".into(),
                "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)".into(),
                "BEGIN".into(),
            ],
        }];
        let got: Vec<String> = sysbench_statements(&types)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        assert_eq!(
            got,
            [
                "SELECT c FROM sbtest1 WHERE id=1",
                "UPDATE sbtest1 SET c='' WHERE id=1",
                "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 1, '', '')",
            ]
        );
    }

    #[test]
    fn values_split_outside_parentheses() {
        assert_eq!(
            split_top("1, f(2, 3), CURRENT_TIMESTAMP"),
            vec!["1", "f(2, 3)", "CURRENT_TIMESTAMP"]
        );
    }

    #[test]
    fn the_shard_key_builtin_gets_consistent_representative_values() {
        let mut set = ScriptSet::new();
        set.add_builtin(workload::tpcb::Builtin::TpcbSharded, 1);
        let st = statements(&set);
        assert!(st.iter().any(|(shown, sql)| shown
            == "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :abid"
            && sql == "UPDATE pgbench_accounts SET abalance = abalance + 0 WHERE aid = 1 AND bid = 1"));
        // BEGIN and END are not statements EXPLAIN plans.
        assert_eq!(st.len(), 5, "{st:?}");
    }
}
