//! The observer's SQL, chosen by what the server has, and the parsing of what comes back.
//!
//! Owns every statement the observer sends (all tagged with [`TAG`] so they can be told apart
//! from the workload's in `pg_stat_statements`), the capability probe's results ([`Caps`]), and
//! pure functions from rows to numbers. Must not touch: the connection (see `sampler`), time.
//!
//! Views and columns follow the PostgreSQL docs, "Monitoring Database Activity" / "The Cumulative
//! Statistics System" (chapter 28 in 15), and the `pg_stat_statements` module's page:
//! - `pg_stat_activity` (10+ has `backend_type` and wait events for every process; 14+ has
//!   `query_id`, filled when `compute_query_id` is `on`, or `auto` with pg_stat_statements loaded).
//!   A role without `pg_read_all_stats` sees other roles' sessions with `state`, wait events and
//!   `query_id` NULL and `query = '<insufficient privilege>'`.
//! - `pg_stat_statements`: `total_time`/`mean_time` became `total_exec_time`/`mean_exec_time` in
//!   13 (extension 1.8); `wal_bytes` appeared in 13; `toplevel` in 14; 17 renamed
//!   `blk_read_time` to `shared_blk_read_time` (not read here). Columns are looked up in the
//!   catalog, not assumed from the server version, because an extension can be older than its
//!   server after `pg_upgrade`.
//! - `pg_stat_wal` (14+), `pg_stat_io` (16+), `pg_stat_checkpointer` (17+: the checkpoint columns
//!   of `pg_stat_bgwriter` moved there and were renamed). Those views are read whole with
//!   `row_to_json`, so every numeric column of the version at hand is kept under its own name.
//! - With `stats_fetch_consistency = cache` (15+, and the stats collector's snapshot before it),
//!   statistics read in a transaction are frozen until `pg_stat_clear_snapshot()`; the observer
//!   reads inside one transaction, so each read starts with that call.

use std::collections::BTreeMap;

/// Leading comment on every statement the observer sends.
pub const TAG: &str = "/* stampede observe */";

/// What the server offers, found once at start.
#[derive(Clone, Debug, Default)]
pub struct Caps {
    pub version_num: u32,
    /// `pg_stat_activity.query_id` exists (14+).
    pub activity_query_id: bool,
    pub wal_view: bool,
    pub checkpointer_view: bool,
    pub io_view: bool,
    pub statements: Option<StatementCols>,
}

/// How to read `pg_stat_statements` on this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementCols {
    /// Schema of the extension, quoted for SQL.
    pub schema: String,
    /// `total_exec_time` (13+) or `total_time`.
    pub total_time: &'static str,
    pub wal_bytes: bool,
}

impl StatementCols {
    /// From the extension's schema and the view's column names.
    pub fn from_columns(schema: &str, cols: &[String]) -> Option<StatementCols> {
        let has = |c: &str| cols.iter().any(|x| x == c);
        let total_time = if has("total_exec_time") {
            "total_exec_time"
        } else if has("total_time") {
            "total_time"
        } else {
            return None;
        };
        if ![
            "queryid",
            "calls",
            "rows",
            "shared_blks_hit",
            "shared_blks_read",
        ]
        .iter()
        .all(|c| has(c))
        {
            return None;
        }
        Some(StatementCols {
            schema: quote_ident(schema),
            total_time,
            wal_bytes: has("wal_bytes"),
        })
    }
}

/// SQL identifier quoting (`quote_ident`): always quoted, `"` doubled.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// SQL string literal quoting, for values we put in statements ourselves.
pub fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub fn begin() -> String {
    format!("{TAG} BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY")
}

pub fn rollback() -> String {
    format!("{TAG} ROLLBACK")
}

/// Who we are and what we may see: user, superuser, member of pg_read_all_stats, of pg_monitor;
/// then compute_query_id (NULL before 14), whether pg_stat_statements is loaded (its GUCs exist
/// only then; `shared_preload_libraries` itself needs pg_read_all_settings), the optional views,
/// and the schema of the pg_stat_statements extension in this database (NULL when not created).
pub fn probe() -> String {
    format!(
        "{TAG} SELECT current_user, r.rolsuper, \
         pg_has_role(current_user, 'pg_read_all_stats', 'USAGE'), \
         pg_has_role(current_user, 'pg_monitor', 'USAGE'), \
         current_setting('compute_query_id', true), \
         current_setting('pg_stat_statements.max', true) IS NOT NULL, \
         to_regclass('pg_catalog.pg_stat_wal') IS NOT NULL, \
         to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL, \
         to_regclass('pg_catalog.pg_stat_io') IS NOT NULL, \
         (SELECT n.nspname FROM pg_catalog.pg_extension e \
            JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace \
          WHERE e.extname = 'pg_stat_statements') \
         FROM pg_catalog.pg_roles r WHERE r.rolname = current_user"
    )
}

/// Column names of the pg_stat_statements view in `schema` (unquoted name).
pub fn statement_columns(schema: &str) -> String {
    format!(
        "{TAG} SELECT attname FROM pg_catalog.pg_attribute \
         WHERE attrelid = ({}||'.pg_stat_statements')::regclass AND attnum > 0 AND NOT attisdropped",
        quote_literal(&quote_ident(schema))
    )
}

/// `application_name` of the observer's sessions (the replication watch's starts with it too):
/// how an observer tells another one's session (a fleet's other processes) from the load.
pub const APPLICATION_NAME: &str = "stampede observe";

/// One activity sample: `pg_stat_clear_snapshot()` (one row, one column), then rows of
/// (state, wait type, wait event, query_id, backend_type, another observer's session (`t`/`f`),
/// sessions, hidden sessions, lock waits, pids separated by spaces — for the server's CPU when
/// it runs on this machine).
pub fn activity(caps: &Caps) -> String {
    let qid = if caps.activity_query_id {
        "query_id"
    } else {
        "NULL::bigint"
    };
    format!(
        "{TAG} SELECT pg_catalog.pg_stat_clear_snapshot(); \
         {TAG} WITH l AS (SELECT count(*) AS n FROM pg_catalog.pg_locks WHERE NOT granted) \
         SELECT coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), \
                {qid}, coalesce(backend_type, ''), \
                coalesce(application_name, '') LIKE {observer}, count(*), \
                count(*) FILTER (WHERE query = '<insufficient privilege>'), (SELECT n FROM l), \
                string_agg(pid::text, ' ') \
         FROM pg_catalog.pg_stat_activity WHERE pid <> pg_catalog.pg_backend_pid() \
         GROUP BY 1, 2, 3, 4, 5, 6",
        observer = quote_literal(&format!("{APPLICATION_NAME}%"))
    )
}

/// The kind of background session a `pg_stat_activity` row is, or `None` when it is load: a
/// client's session (`client backend`) or a worker of a client's parallel query (`parallel
/// worker`). Every other `backend_type` works for the server or for someone else (a standby's
/// `walsender`, an `autovacuum worker`, a subscription's `logical replication worker`, an
/// extension's background worker) and is counted apart, under its type; so is another
/// observer's session, whatever its type. An empty type (a row the role may not see) is left
/// with the load, where it was counted before.
pub fn background_kind(backend_type: &str, observer: bool) -> Option<&str> {
    if observer {
        return Some(measure::server::OBSERVER);
    }
    match backend_type {
        "client backend" | "parallel worker" | "" => None,
        other => Some(other),
    }
}

/// Client sessions on our database other than ours (to wait for the run's sessions to go, so
/// their statistics are flushed, before the final snapshot).
pub fn other_clients() -> String {
    format!(
        "{TAG} SELECT pg_catalog.pg_stat_clear_snapshot(); \
         {TAG} SELECT count(*) FROM pg_catalog.pg_stat_activity \
         WHERE datname = current_database() AND backend_type = 'client backend' \
           AND pid <> pg_catalog.pg_backend_pid()"
    )
}

/// Cumulative counters: `pg_stat_clear_snapshot()`, then (view, row as JSON) rows: the
/// database's row of `pg_stat_database`, `pg_stat_bgwriter`, `pg_stat_wal` (14+),
/// `pg_stat_checkpointer` (17+); the user tables' activity and block I/O summed over the
/// database (`tables.*` from `pg_stat_user_tables`, `statio.*` from `pg_statio_user_tables`)
/// and per table (`table.<name>.*`, both views' columns, the [`TABLES_EACH`] largest by
/// size); each standby's lag (`replication.<application_name>.*`, from `pg_stat_replication`);
/// `pg_stat_io` (16+) summed per backend type (`io.<backend_type>.*`).
pub fn counters(caps: &Caps) -> String {
    let mut parts = vec![
        "SELECT 'database', row_to_json(d)::text FROM pg_catalog.pg_stat_database d \
         WHERE datname = current_database()"
            .to_string(),
        "SELECT 'bgwriter', row_to_json(b)::text FROM pg_catalog.pg_stat_bgwriter b".to_string(),
        format!(
            "SELECT 'tables', row_to_json(t)::text FROM (SELECT {} \
             FROM pg_catalog.pg_stat_user_tables) t",
            sums(TABLE_COLUMNS)
        ),
        format!(
            "SELECT 'statio', row_to_json(t)::text FROM (SELECT {} \
             FROM pg_catalog.pg_statio_user_tables) t",
            sums(STATIO_COLUMNS)
        ),
        // One row per table: both views' columns under `table.<schema-less name>`. The largest
        // tables only, so a schema of thousands of partitions does not swell every sample.
        format!(
            "SELECT 'table.' || s.relname, row_to_json(t)::text \
             FROM pg_catalog.pg_stat_user_tables s \
             JOIN pg_catalog.pg_statio_user_tables i USING (relid) \
             CROSS JOIN LATERAL (SELECT {}, {}) t \
             WHERE s.relid IN (SELECT relid FROM pg_catalog.pg_stat_user_tables \
                               ORDER BY pg_catalog.pg_relation_size(relid) DESC LIMIT {TABLES_EACH})",
            cols("s", TABLE_COLUMNS),
            cols("i", STATIO_COLUMNS)
        ),
    ];
    // Each standby streaming from this server (none on a standby or a lone server): its lag
    // in WAL bytes not yet replayed and PostgreSQL's three lag times, as levels. On a standby
    // pg_current_wal_lsn() fails, so the bytes are only asked of a primary.
    parts.push(
        "SELECT 'replication.' || coalesce(nullif(r.application_name, ''), \
                host(r.client_addr), r.pid::text), row_to_json(t)::text \
         FROM pg_catalog.pg_stat_replication r CROSS JOIN LATERAL (SELECT \
           CASE WHEN pg_catalog.pg_is_in_recovery() THEN NULL \
                ELSE pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), r.replay_lsn) \
           END AS replay_lag_bytes, \
           extract(epoch FROM r.write_lag) * 1000 AS write_lag_ms, \
           extract(epoch FROM r.flush_lag) * 1000 AS flush_lag_ms, \
           extract(epoch FROM r.replay_lag) * 1000 AS replay_lag_ms) t"
            .into(),
    );
    if caps.wal_view {
        parts.push("SELECT 'wal', row_to_json(w)::text FROM pg_catalog.pg_stat_wal w".into());
    }
    if caps.checkpointer_view {
        parts.push(
            "SELECT 'checkpointer', row_to_json(c)::text FROM pg_catalog.pg_stat_checkpointer c"
                .into(),
        );
    }
    if caps.io_view {
        parts.push(format!(
            "SELECT 'io.' || backend_type, row_to_json(t)::text FROM (SELECT backend_type, {} \
             FROM pg_catalog.pg_stat_io GROUP BY backend_type) t",
            sums(IO_COLUMNS)
        ));
    }
    format!(
        "{TAG} SELECT pg_catalog.pg_stat_clear_snapshot(); {TAG} {}",
        parts.join(" UNION ALL ")
    )
}

/// Tables read one by one in [`counters`].
pub const TABLES_EACH: usize = 16;

/// `pg_stat_user_tables`' counters that every version since 10 has.
const TABLE_COLUMNS: &[&str] = &[
    "seq_scan",
    "seq_tup_read",
    "idx_scan",
    "idx_tup_fetch",
    "n_tup_ins",
    "n_tup_upd",
    "n_tup_del",
    "n_tup_hot_upd",
    "n_live_tup",
    "n_dead_tup",
    "n_mod_since_analyze",
    "vacuum_count",
    "autovacuum_count",
    "analyze_count",
    "autoanalyze_count",
];

/// `pg_statio_user_tables`' block counters (10+).
const STATIO_COLUMNS: &[&str] = &[
    "heap_blks_read",
    "heap_blks_hit",
    "idx_blks_read",
    "idx_blks_hit",
    "toast_blks_read",
    "toast_blks_hit",
    "tidx_blks_read",
    "tidx_blks_hit",
];

/// `pg_stat_io`'s counters (16+; `*_time` need `track_io_timing`).
const IO_COLUMNS: &[&str] = &[
    "reads",
    "read_time",
    "writes",
    "write_time",
    "writebacks",
    "extends",
    "hits",
    "evictions",
    "reuses",
    "fsyncs",
    "fsync_time",
];

/// `sum(c) AS c, ...`.
fn sums(columns: &[&str]) -> String {
    let list: Vec<String> = columns.iter().map(|c| format!("sum({c}) AS {c}")).collect();
    list.join(", ")
}

/// `alias.c AS c, ...`.
fn cols(alias: &str, columns: &[&str]) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("{alias}.{c} AS {c}"))
        .collect();
    list.join(", ")
}

/// Whether a counter is one of those every result keeps in its series even when it never
/// changed (the views the report's charts and the checks read); the others (tables, I/O by
/// backend) are left out of the series when constant.
pub fn always_kept(key: &str) -> bool {
    ["database.", "bgwriter.", "wal.", "checkpointer."]
        .iter()
        .any(|p| key.starts_with(p))
}

/// Whether a key going down over the run says nothing of a statistics reset: levels (sessions,
/// live and dead tuples, replication lag) and the keys not always kept (a table dropped and
/// created again starts its counts over). A reset is judged on the views' counts alone.
pub fn is_level(key: &str) -> bool {
    !always_kept(key) || key == "database.numbackends"
}

/// The data directory, from `pg_settings` (no row for a role that may not see it).
pub fn data_directory() -> String {
    format!("{TAG} SELECT setting FROM pg_catalog.pg_settings WHERE name = 'data_directory'")
}

/// `pg_stat_io` rows: backend_type, object, context, row as JSON.
pub fn io() -> String {
    format!(
        "{TAG} SELECT pg_catalog.pg_stat_clear_snapshot(); \
         {TAG} SELECT backend_type, object, context, row_to_json(i)::text FROM pg_catalog.pg_stat_io i"
    )
}

/// Statements of the current database, summed by queryid: queryid, text (when `text`), calls,
/// total time, rows, shared hits, shared reads, WAL bytes.
pub fn statements(c: &StatementCols, text: bool) -> String {
    let wal = if c.wal_bytes {
        "sum(wal_bytes)"
    } else {
        "NULL::numeric"
    };
    let q = if text { "max(query)" } else { "NULL::text" };
    format!(
        "{TAG} SELECT queryid, {q}, sum(calls), sum({tt}), sum(rows), sum(shared_blks_hit), \
         sum(shared_blks_read), {wal} \
         FROM {schema}.pg_stat_statements({text}) \
         WHERE dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) \
         GROUP BY queryid",
        tt = c.total_time,
        schema = c.schema,
    )
}

/// A flat JSON object's numeric members, `prefix.key` -> value. Non-numbers (names, timestamps,
/// NULL) are skipped, and so are identifiers and gauges that have no meaningful delta.
pub fn json_numbers(prefix: &str, json: &str, out: &mut BTreeMap<String, f64>) {
    const SKIP: [&str; 3] = ["datid", "numbackends", "op_bytes"];
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(json) else {
        return;
    };
    for (k, v) in map {
        if SKIP.contains(&k.as_str()) {
            continue;
        }
        if let Some(x) = v.as_f64() {
            out.insert(format!("{prefix}.{k}"), x);
        }
    }
}

/// A number column in text form; NULL or garbage is 0.
pub fn num(v: &Option<String>) -> f64 {
    v.as_deref()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.0)
}

pub fn int(v: &Option<String>) -> i64 {
    v.as_deref()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or(0)
}

/// `t`/`f` columns.
pub fn flag(v: &Option<String>) -> bool {
    v.as_deref() == Some("t")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    const BASE: [&str; 6] = [
        "queryid",
        "calls",
        "rows",
        "shared_blks_hit",
        "shared_blks_read",
        "query",
    ];

    #[test]
    fn statement_columns_across_versions() {
        // 12: total_time, no wal_bytes.
        let mut v12 = cols(&BASE);
        v12.push("total_time".into());
        let c = StatementCols::from_columns("public", &v12).unwrap();
        assert_eq!((c.total_time, c.wal_bytes), ("total_time", false));
        // 13..18: total_exec_time, wal_bytes.
        let mut v15 = cols(&BASE);
        v15.extend(["total_exec_time".into(), "wal_bytes".into()]);
        let c = StatementCols::from_columns("my\"schema", &v15).unwrap();
        assert_eq!((c.total_time, c.wal_bytes), ("total_exec_time", true));
        assert_eq!(c.schema, "\"my\"\"schema\"");
        let sql = statements(&c, true);
        assert!(
            sql.contains("\"my\"\"schema\".pg_stat_statements(true)"),
            "{sql}"
        );
        assert!(sql.contains("sum(total_exec_time)") && sql.contains("sum(wal_bytes)"));
        // Something that is not pg_stat_statements as we know it.
        assert!(StatementCols::from_columns("public", &cols(&["queryid"])).is_none());
    }

    #[test]
    fn every_statement_is_tagged() {
        let caps = Caps {
            version_num: 170000,
            activity_query_id: true,
            wal_view: true,
            checkpointer_view: true,
            io_view: true,
            statements: None,
        };
        for sql in [activity(&caps), counters(&caps), io(), other_clients()] {
            for stmt in sql.split("; ") {
                assert!(stmt.trim_start().starts_with(TAG), "{stmt}");
            }
        }
        assert!(activity(&caps).contains("query_id,"));
        assert!(counters(&caps).contains("pg_stat_checkpointer"));
        assert!(counters(&caps).contains("'io.' || backend_type"));
        let old = Caps {
            version_num: 130000,
            ..Default::default()
        };
        assert!(activity(&old).contains("NULL::bigint"));
        assert!(!counters(&old).contains("pg_stat_wal"));
        assert!(!counters(&old).contains("pg_stat_io"));
        assert!(counters(&old).contains("pg_statio_user_tables"));
        assert!(always_kept("database.xact_commit") && !always_kept("table.x.n_tup_ins"));
    }

    #[test]
    fn json_rows_keep_numbers_under_their_names() {
        let mut m = BTreeMap::new();
        json_numbers(
            "database",
            r#"{"datid":5,"datname":"x","numbackends":3,"xact_commit":42,"blk_read_time":1.5,"stats_reset":null}"#,
            &mut m,
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m["database.xact_commit"], 42.0);
        assert_eq!(m["database.blk_read_time"], 1.5);
        json_numbers("wal", "not json", &mut m);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn only_clients_and_their_parallel_workers_are_load() {
        for t in ["client backend", "parallel worker", ""] {
            assert_eq!(background_kind(t, false), None, "{t}");
        }
        for t in [
            "walsender",
            "autovacuum worker",
            "logical replication worker",
            "walreceiver",
            "pg_cron scheduler",
        ] {
            assert_eq!(background_kind(t, false), Some(t));
        }
        assert_eq!(
            background_kind("client backend", true),
            Some(measure::server::OBSERVER)
        );
        let sql = activity(&Caps::default());
        assert!(
            sql.contains("LIKE 'stampede observe%'") && sql.contains("GROUP BY 1, 2, 3, 4, 5, 6"),
            "{sql}"
        );
    }

    #[test]
    fn text_values() {
        assert_eq!(num(&Some("1.5".into())), 1.5);
        assert_eq!(num(&None), 0.0);
        assert_eq!(int(&Some("-7".into())), -7);
        assert!(flag(&Some("t".into())) && !flag(&Some("f".into())));
        assert_eq!(quote_literal("it's"), "'it''s'");
    }
}
