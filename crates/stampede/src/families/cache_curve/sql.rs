//! What the cache curve asks the server, in each dialect: the cache's size, the table (made,
//! grown, measured, dropped), one scan with its buffer hits and reads, and the buffer counters
//! before and after the point reads.
//!
//! PostgreSQL: the table has `fillfactor = 10` so each ~1 kB row takes a page of its own (seed
//! 003's table): rows scanned are pages scanned, and the table grows a page per row inserted.
//! Autovacuum is off on it, so no vacuum reads it behind the measurement's back. A scan is
//! `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT * FROM ...` with parallel
//! workers off, the seed's plan (one backend, `Seq Scan`): its `Shared Hit Blocks` and `Shared
//! Read Blocks` are the scan's hits and reads, its `Execution Time` the time (per-node timing is
//! off: it would cost a clock call per row). Its storage read time is the same node's `I/O Read
//! Time` (PostgreSQL 15 and 16: shared and local together) or `Shared I/O Read Time` (17, which
//! splits them), written whenever `track_io_timing` is on in the session (explain.c's
//! `show_buffer_usage`, non-text formats) and only then: the key's presence is the proof the scan
//! was timed. `track_io_timing` is a superuser setting ("Run-time Statistics", 20.9.2): the
//! scanning session sets it, and a role that may not gets a note with the fix
//! ([`configure`]). The server's own view, `pg_statio_user_tables`, is
//! read before and after, each session flushing its statistics first
//! (`pg_stat_force_next_flush()`, PostgreSQL 15 and later; older servers report zero there).
//!
//! MySQL/MariaDB: InnoDB has no fill factor; its rows pack ~15 to a 16 kB page. A scan is
//! `SELECT COUNT(*), SUM(LENGTH(filler))` (reading every row, not just counting), timed by the
//! client; its hits and reads are deltas of `Innodb_buffer_pool_read_requests` and of
//! `Innodb_buffer_pool_reads` plus `Innodb_buffer_pool_read_ahead` (pages a scan's read-ahead
//! brought in are found in the pool by the requests that follow, yet came from disk). These are
//! the server's global counters: the measurement assumes nothing else runs there. InnoDB keeps
//! scans from flooding its pool (midpoint insertion: a page read by a scan enters the LRU's old
//! sublist, `innodb_old_blocks_pct` = 37% of the pool, and is made young only when touched again
//! after `innodb_old_blocks_time`), so its scans stop finding their pages once the table
//! outgrows about 3/8 of the pool: the scans' knee comes there, well before the pool's size,
//! while point reads, which touch pages again, keep more of them.

use anyhow::{anyhow, Context, Result};
use sut::{Dialect, Session};

use crate::console::Failure;

pub const TABLE: &str = "stampede_cache_curve";
/// The table's comment: a table of that name without it is someone else's.
pub const MARK: &str = "created by stampede run cache-curve";

/// The server's cache: the setting's name, its bytes, and the page size.
pub struct Cache {
    pub setting: &'static str,
    pub bytes: u64,
    pub page_bytes: u64,
}

/// Buffer hits and reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub hits: u64,
    pub reads: u64,
}

impl Counters {
    pub fn since(self, before: Counters) -> Counters {
        Counters {
            hits: self.hits.saturating_sub(before.hits),
            reads: self.reads.saturating_sub(before.reads),
        }
    }

    pub fn ratio(self) -> f64 {
        let all = self.hits + self.reads;
        if all == 0 {
            1.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

/// One scan: rows returned, buffer hits and reads, milliseconds, and the time its reads from
/// storage took (`None`: not timed).
pub struct Scan {
    pub rows: u64,
    pub buffers: Counters,
    pub ms: f64,
    pub io_read_ms: Option<f64>,
}

/// Whether the scans' I/O is timed, and if not, why and how to make it so.
pub struct IoTiming {
    pub on: bool,
    pub note: Option<String>,
}

fn first(rows: Vec<Vec<Option<String>>>) -> Option<String> {
    rows.into_iter().next()?.into_iter().next().flatten()
}

fn number(rows: Vec<Vec<Option<String>>>, what: &str) -> Result<u64> {
    let v = first(rows).ok_or_else(|| anyhow!("{what}: no value"))?;
    v.trim()
        .parse::<f64>()
        .map(|f| f as u64)
        .map_err(|_| anyhow!("{what}: {v:?} is not a number"))
}

pub async fn cache(s: &mut Session) -> Result<Cache> {
    match s.dialect() {
        Dialect::Postgres => {
            let page = number(
                s.simple_query("SELECT current_setting('block_size')")
                    .await?,
                "block_size",
            )?;
            // shared_buffers' setting is in pages.
            let pages = number(
                s.simple_query("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'")
                    .await?,
                "shared_buffers",
            )?;
            Ok(Cache {
                setting: "shared_buffers",
                bytes: pages * page,
                page_bytes: page,
            })
        }
        Dialect::MySql => {
            let bytes = number(
                s.simple_query("SELECT @@innodb_buffer_pool_size").await?,
                "innodb_buffer_pool_size",
            )?;
            let page = number(
                s.simple_query("SELECT @@innodb_page_size").await?,
                "innodb_page_size",
            )?;
            Ok(Cache {
                setting: "innodb_buffer_pool_size",
                bytes,
                page_bytes: page,
            })
        }
    }
}

/// The session's settings for measuring (PostgreSQL: one backend per scan, as in the seed, and
/// its I/O timed where the role may set `track_io_timing`, or the server has it on already).
pub async fn configure(s: &mut Session) -> Result<IoTiming> {
    match s.dialect() {
        Dialect::Postgres => {
            s.simple_query("SET max_parallel_workers_per_gather = 0")
                .await?;
            let refused = s.simple_query("SET track_io_timing = on").await.err();
            let on = first(
                s.simple_query("SELECT current_setting('track_io_timing')")
                    .await?,
            );
            if on.as_deref() == Some("on") {
                return Ok(IoTiming {
                    on: true,
                    note: None,
                });
            }
            let version = s.pg().map_or(0, |p| p.server_version_num());
            let role = first(s.simple_query("SELECT current_user").await?).unwrap_or_default();
            // PostgreSQL 15 added GRANT SET ON PARAMETER (ddl.html, "Privileges").
            let grant = if version >= 150000 {
                format!(
                    ", or let the role set it: GRANT SET ON PARAMETER track_io_timing TO {role}"
                )
            } else {
                String::new()
            };
            let why = refused.map_or_else(
                || "it is off".to_string(),
                |e| format!("it is off and role {role} may not set it ({e})"),
            );
            Ok(IoTiming {
                on: false,
                note: Some(format!(
                    "the scans' I/O time and storage pages per ms of I/O are not measured:                      track_io_timing is a superuser setting and {why}. To measure them, as a                      superuser: ALTER SYSTEM SET track_io_timing = on; SELECT pg_reload_conf(){grant}"
                )),
            })
        }
        Dialect::MySql => {
            // MySQL 8 caches information_schema's sizes for a day; MariaDB has no such
            // variable (the error is expected there).
            let _ = s
                .simple_query("SET SESSION information_schema_stats_expiry = 0")
                .await;
            Ok(IoTiming {
                on: false,
                note: Some(
                    "the scans' I/O time is a PostgreSQL measurement (EXPLAIN's I/O Timings with                      track_io_timing): on InnoDB the waits by time over the curve are in the                      server section"
                        .into(),
                ),
            })
        }
    }
}

/// Make the table, replacing one an earlier run of stampede left; refuse anyone else's.
pub async fn create(s: &mut Session) -> Result<()> {
    let d = s.dialect();
    let mark = match d {
        Dialect::Postgres => {
            let exists = first(
                s.simple_query(&format!("SELECT to_regclass('{TABLE}') IS NOT NULL"))
                    .await?,
            );
            match exists.as_deref() {
                Some("t") => first(
                    s.simple_query(&format!(
                        "SELECT obj_description(to_regclass('{TABLE}'), 'pg_class')"
                    ))
                    .await?,
                )
                .map(Some)
                .unwrap_or(Some(String::new())),
                _ => None,
            }
        }
        Dialect::MySql => first(
            s.simple_query(&format!(
                "SELECT table_comment FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = '{TABLE}'"
            ))
            .await?,
        ),
    };
    match mark.as_deref() {
        None => {}
        Some(MARK) => drop_table(s).await?,
        Some(_) => {
            return Err(Failure::setup(
                format!("a table {TABLE} exists in this database and stampede did not create it"),
                "stampede never drops a table it did not create: rename or drop it, or run the \
                 cache curve in another database (-d)",
            ))
        }
    }
    let ddl: Vec<String> = match d {
        Dialect::Postgres => vec![
            format!(
                "CREATE TABLE {TABLE} (id bigint PRIMARY KEY, filler text NOT NULL) \
                 WITH (fillfactor = 10, autovacuum_enabled = off)"
            ),
            format!("COMMENT ON TABLE {TABLE} IS '{MARK}'"),
        ],
        Dialect::MySql => vec![format!(
            "CREATE TABLE {TABLE} (id BIGINT NOT NULL PRIMARY KEY, \
             filler VARCHAR(1000) NOT NULL) ENGINE=InnoDB COMMENT='{MARK}'"
        )],
    };
    for q in ddl {
        s.simple_query(&q)
            .await
            .with_context(|| format!("creating {TABLE}"))?;
    }
    Ok(())
}

pub async fn drop_table(s: &mut Session) -> Result<()> {
    s.simple_query(&format!("DROP TABLE IF EXISTS {TABLE}"))
        .await
        .with_context(|| format!("dropping {TABLE}"))?;
    Ok(())
}

/// Insert rows `from..=to` (ids), each with a 1,000-byte filler: one statement on PostgreSQL
/// (`generate_series`), multi-row inserts of 500 on MySQL.
pub async fn insert(s: &mut Session, from: u64, to: u64) -> Result<()> {
    match s.dialect() {
        Dialect::Postgres => {
            s.simple_query(&format!(
                "INSERT INTO {TABLE} SELECT g, lpad('', 1000, md5(g::text)) \
                 FROM generate_series({from}, {to}) g"
            ))
            .await?;
        }
        Dialect::MySql => {
            let mut at = from;
            while at <= to {
                let end = to.min(at + 499);
                let values: Vec<String> = (at..=end)
                    .map(|i| format!("({i}, RPAD('', 1000, MD5({i})))"))
                    .collect();
                s.simple_query(&format!(
                    "INSERT INTO {TABLE} (id, filler) VALUES {}",
                    values.join(",")
                ))
                .await?;
                at = end + 1;
            }
        }
    }
    Ok(())
}

/// The table's size in bytes: its main fork (`pg_relation_size`, what a scan reads); InnoDB's
/// clustered index (`data_length` after `ANALYZE TABLE`).
pub async fn size(s: &mut Session) -> Result<u64> {
    match s.dialect() {
        Dialect::Postgres => number(
            s.simple_query(&format!("SELECT pg_relation_size('{TABLE}')"))
                .await?,
            "pg_relation_size",
        ),
        Dialect::MySql => {
            s.simple_query(&format!("ANALYZE TABLE {TABLE}")).await?;
            number(
                s.simple_query(&format!(
                    "SELECT data_length FROM information_schema.tables \
                     WHERE table_schema = DATABASE() AND table_name = '{TABLE}'"
                ))
                .await?,
                "data_length",
            )
        }
    }
}

/// One full scan of the table (module notes).
pub async fn scan(s: &mut Session) -> Result<Scan> {
    match s.dialect() {
        Dialect::Postgres => {
            let json = first(
                s.simple_query(&format!(
                    "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT * FROM {TABLE}"
                ))
                .await?,
            )
            .ok_or_else(|| anyhow!("EXPLAIN returned nothing"))?;
            explain(&json)
        }
        Dialect::MySql => {
            let before = innodb(s).await?;
            let t = std::time::Instant::now();
            let rows = number(
                s.simple_query(&format!(
                    "SELECT COUNT(*), SUM(LENGTH(filler)) FROM {TABLE}"
                ))
                .await?,
                "COUNT(*)",
            )?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            let after = innodb(s).await?;
            Ok(Scan {
                rows,
                buffers: after.since(before),
                ms,
                io_read_ms: None,
            })
        }
    }
}

/// `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`'s top plan node: rows, shared hits and reads, the
/// execution time, and the read time where `track_io_timing` was on (module notes: the key of
/// 15 and 16, or of 17).
pub fn explain(json: &str) -> Result<Scan> {
    let v: serde_json::Value =
        serde_json::from_str(json).with_context(|| format!("EXPLAIN's JSON: {json}"))?;
    let top = &v[0];
    let plan = &top["Plan"];
    let n = |x: &serde_json::Value, k: &str| {
        x[k].as_f64()
            .ok_or_else(|| anyhow!("EXPLAIN's JSON has no {k:?}: {json}"))
    };
    Ok(Scan {
        rows: n(plan, "Actual Rows")? as u64,
        buffers: Counters {
            hits: n(plan, "Shared Hit Blocks")? as u64,
            reads: n(plan, "Shared Read Blocks")? as u64,
        },
        ms: n(top, "Execution Time")?,
        io_read_ms: ["Shared I/O Read Time", "I/O Read Time"]
            .iter()
            .find_map(|k| plan[*k].as_f64()),
    })
}

/// InnoDB's buffer pool counters (global): requests that found their page, and pages read.
async fn innodb(s: &mut Session) -> Result<Counters> {
    let rows = s
        .simple_query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_read_requests', \
             'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_read_ahead')",
        )
        .await?;
    let mut requests = 0;
    let mut reads = 0;
    for r in rows {
        let name = r.first().cloned().flatten().unwrap_or_default();
        let v: u64 = (r.get(1).cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        match name.to_ascii_lowercase().as_str() {
            "innodb_buffer_pool_read_requests" => requests = v,
            _ => reads += v,
        }
    }
    Ok(Counters {
        hits: requests.saturating_sub(reads),
        reads,
    })
}

/// The server's buffer counters of the table (heap and index), after this session's own
/// statistics are flushed. `version_num` 0 is MySQL.
pub async fn counters(s: &mut Session, version_num: u32) -> Result<Counters> {
    match s.dialect() {
        Dialect::Postgres if version_num < 150000 => Ok(Counters::default()),
        Dialect::Postgres => {
            flush(s).await?;
            let row = s
                .simple_query(&format!(
                    "SELECT coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0), \
                     coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0) \
                     FROM pg_statio_user_tables WHERE relid = '{TABLE}'::regclass"
                ))
                .await?;
            let get = |i: usize| -> u64 {
                (row.first().and_then(|r| r.get(i)).cloned().flatten())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            Ok(Counters {
                hits: get(0),
                reads: get(1),
            })
        }
        Dialect::MySql => innodb(s).await,
    }
}

/// PostgreSQL 15+: this session's pending statistics reach the shared ones when the statement
/// after this one ends (before its reply), so a later read sees them.
pub async fn flush(s: &mut Session) -> Result<()> {
    if s.dialect() == Dialect::Postgres && s.pg().is_some_and(|p| p.server_version_num() >= 150000)
    {
        s.simple_query("SELECT pg_stat_force_next_flush()").await?;
    }
    Ok(())
}

/// The point read: one row by primary key.
pub fn point_read_sql(d: Dialect) -> String {
    match d {
        Dialect::Postgres => format!("SELECT filler FROM {TABLE} WHERE id = $1"),
        Dialect::MySql => format!("SELECT filler FROM {TABLE} WHERE id = ?"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explain_json_gives_rows_buffers_and_time() {
        // PostgreSQL 15's output for a seq scan, abridged.
        let json = r#"[{"Plan": {"Node Type": "Seq Scan", "Relation Name": "stampede_cache_curve",
            "Actual Rows": 2048, "Actual Loops": 1, "Shared Hit Blocks": 2000,
            "Shared Read Blocks": 48, "Shared Dirtied Blocks": 0},
            "Planning": {"Shared Hit Blocks": 3}, "Planning Time": 0.05,
            "Triggers": [], "Execution Time": 1.5}]"#;
        let s = explain(json).unwrap();
        assert_eq!((s.rows, s.buffers.hits, s.buffers.reads), (2048, 2000, 48));
        assert_eq!(s.ms, 1.5);
        assert_eq!(s.io_read_ms, None, "track_io_timing off: no key, not timed");
        assert!(explain("[{}]").is_err());
    }

    #[test]
    fn explain_json_gives_the_read_time_of_15_16_and_17() {
        // 15 and 16: "I/O Read Time" (shared and local); 17: "Shared I/O Read Time", with the
        // planning's own buffers apart (not the scan's).
        let v15 = r#"[{"Plan": {"Actual Rows": 10, "Shared Hit Blocks": 4,
            "Shared Read Blocks": 6, "I/O Read Time": 0.25, "I/O Write Time": 0.0},
            "Planning": {"I/O Read Time": 9.0}, "Execution Time": 2.0}]"#;
        let v17 = r#"[{"Plan": {"Actual Rows": 10, "Shared Hit Blocks": 4,
            "Shared Read Blocks": 6, "Shared I/O Read Time": 0.5, "Shared I/O Write Time": 0.0,
            "Local I/O Read Time": 7.0, "Temp I/O Read Time": 8.0},
            "Planning": {"Shared I/O Read Time": 9.0}, "Execution Time": 2.0}]"#;
        assert_eq!(explain(v15).unwrap().io_read_ms, Some(0.25));
        assert_eq!(explain(v17).unwrap().io_read_ms, Some(0.5));
        // Timed and nothing read: zero, still timed.
        let zero = v15.replace("0.25", "0");
        assert_eq!(explain(&zero).unwrap().io_read_ms, Some(0.0));
    }

    #[test]
    fn counters_subtract_and_make_a_ratio() {
        let a = Counters { hits: 10, reads: 5 };
        let b = Counters {
            hits: 100,
            reads: 5,
        };
        assert_eq!(b.since(a), Counters { hits: 90, reads: 0 });
        assert_eq!(b.since(a).ratio(), 1.0);
        assert_eq!(Counters { hits: 3, reads: 1 }.ratio(), 0.75);
        // Nothing touched: nothing missed.
        assert_eq!(Counters::default().ratio(), 1.0);
    }
}
