//! The MySQL/MariaDB observer's SQL, chosen by what the server has, and the parsing of what comes
//! back.
//!
//! Owns every statement the MySQL sampler sends, the capability probe's results ([`Caps`]), the
//! mapping of `performance_schema` event names into the model's `Type:Event` form
//! ([`wait_event`]), and pure functions from rows to numbers. Must not touch: the connection (see
//! `mysql_sampler`), time.
//!
//! Sources, with the manual page each follows (MySQL 8.0 Reference Manual and MariaDB's
//! Knowledge Base; the two agree on everything read here unless said):
//! - `SHOW GLOBAL STATUS` ("Server Status Variables"; "InnoDB Status Variables"; MariaDB "Server
//!   Status Variables", "InnoDB Status Variables"; Galera's "Galera Status Variables" for
//!   `wsrep_*`). Read in full every counter interval (the 500-odd rows cost the server well under
//!   a millisecond), so every counter is in the record; those that never changed leave the
//!   series ([`always_kept`]). MariaDB has `Innodb_history_list_length` and
//!   `Innodb_deadlocks`; MySQL has neither: its history list length is the InnoDB metric
//!   `trx_rseg_history_len` of `information_schema.INNODB_METRICS` ("The INFORMATION_SCHEMA
//!   INNODB_METRICS Table"; it needs PROCESS; enabled by default in both, and MariaDB 10.11's
//!   status variable is the same number). Every enabled metric of that table is read with the
//!   status, under `innodb_metrics.`.
//! - `information_schema.PROCESSLIST` ("The INFORMATION_SCHEMA PROCESSLIST Table"): every session
//!   with its `COMMAND` (`Sleep` = idle) and `STATE` (the thread's current stage). Without the
//!   PROCESS privilege a user sees only its own sessions.
//! - `information_schema.INNODB_TRX` ("The INFORMATION_SCHEMA INNODB_TRX Table", needs PROCESS):
//!   which sessions have a transaction open (idle in transaction) and which wait for a row lock
//!   (`trx_state = 'LOCK WAIT'`), PostgreSQL's ungranted `pg_locks`.
//! - `performance_schema` ("MySQL Performance Schema"; MariaDB "Performance Schema Overview"),
//!   only when the server was started with it ON (it cannot be turned on at run time):
//!   `setup_consumers` and `setup_instruments` (what is collected), `threads` (processlist id to
//!   thread id), `events_waits_current` (each thread's most recent wait; `END_EVENT_ID IS NULL`
//!   while it is still waiting; filled only with the `events_waits_current` consumer, OFF by
//!   default in both), the wait summaries ("Wait Event Summary Tables": every timed wait summed
//!   by event, fed by the instruments whatever the consumers; see [`wait_summary`] for why the
//!   per-user one), `events_statements_summary_by_digest` (statements by normalised text, with
//!   the `statements_digest` consumer, ON by default) and, on MariaDB,
//!   `prepared_statements_instances` ("Performance Schema prepared_statements_instances Table"):
//!   MariaDB computes no digest for a statement executed through the binary protocol
//!   (`COM_STMT_EXECUTE`, counted only as `statement/com/Execute`), so a client's prepared
//!   statements are read from their instances, which live as long as the statement does. Timer
//!   columns are picoseconds ("Performance Schema Event Timing": "all timer values are
//!   normalized to picoseconds").
//!
//! Statements are tagged with the same comment as PostgreSQL's ([`crate::sql::TAG`], added by
//! the sampler as it sends them), so that another stampede's observer sampling the same server
//! (a fleet's other processes) sees them in `PROCESSLIST_INFO` and counts that session apart
//! from the load ([`background_kind`]). `DIGEST_TEXT` drops comments, so the digests cannot
//! tell them by it: the observer's own statements are kept out of the digests another way: its
//! session has no default database, so they are counted under `SCHEMA_NAME` NULL, and the
//! workload's are read under the target's database (see [`digests`]).

use std::collections::BTreeMap;

/// What the server offers, found once at start.
#[derive(Clone, Debug, Default)]
pub struct Caps {
    pub mariadb: bool,
    pub version_num: u32,
    /// `performance_schema` is ON and readable by us.
    pub pfs: bool,
    /// `events_waits_current` is collected: sampled sessions show their wait event.
    pub waits_current: bool,
    /// `events_waits_summary_global_by_event_name` is readable.
    pub wait_summary: bool,
    /// `events_statements_summary_by_digest` is readable and collected.
    pub digests: bool,
    /// MariaDB's `prepared_statements_instances` is readable: prepared statements' executions.
    pub prepared: bool,
    /// Waits by time come from the per-user summary (client sessions only), not the global one.
    pub waits_by_user: bool,
    /// The PROCESS privilege: everyone's sessions, `INNODB_TRX`, `INNODB_METRICS`.
    pub process: bool,
    /// Galera: `wsrep_on` is ON.
    pub wsrep: bool,
    /// The history list length comes from `INNODB_METRICS` (MySQL), not a status variable.
    pub history_metric: bool,
    /// The target's database: the workload's digests are read under it.
    pub schema: Option<String>,
}

/// The status variables the report's charts and the checks read, kept as `mysql.<name>` in
/// every sample even when they never changed ([`always_kept`]; the whole list is read every
/// interval, [`all_status`]; see the module header for the pages). Gauges among them
/// (`Threads_running`, `Open_files`, `Innodb_history_list_length`, the queues) are read for
/// their values over time, not their deltas.
pub const STATUS: &[&str] = &[
    // Transactions and statements.
    "Com_commit",
    "Com_rollback",
    "Com_begin",
    "Com_select",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Questions",
    "Handler_commit",
    "Handler_rollback",
    // Rows asked of the storage engine, by kind of access.
    "Handler_write",
    "Handler_read_key",
    "Handler_read_next",
    "Handler_read_rnd",
    "Handler_read_rnd_next",
    "Handler_update",
    "Handler_delete",
    "Slow_queries",
    "Created_tmp_tables",
    "Created_tmp_disk_tables",
    // Buffer pool: read requests are logical reads, reads are the ones that went to disk.
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_write_requests",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_pages_dirty",
    "Innodb_buffer_pool_wait_free",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_data_fsyncs",
    "Innodb_pages_read",
    "Innodb_pages_created",
    "Innodb_pages_written",
    // Redo log.
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_writes",
    "Innodb_log_write_requests",
    "Innodb_log_waits",
    "Innodb_checkpoint_age",
    // Rows and locks.
    "Innodb_rows_read",
    "Innodb_rows_inserted",
    "Innodb_rows_updated",
    "Innodb_rows_deleted",
    "Innodb_row_lock_waits",
    "Innodb_row_lock_time",
    "Innodb_row_lock_current_waits",
    "Innodb_deadlocks",
    "Innodb_history_list_length",
    // Connections and files.
    "Threads_running",
    "Threads_connected",
    "Open_files",
    "Opened_tables",
    "Aborted_clients",
    "Bytes_received",
    "Bytes_sent",
];

/// Galera's status variables, read on every node when `wsrep_on` is ON ("Galera Cluster Status
/// Variables"): `wsrep_flow_control_paused` is the fraction of time paused since the last
/// `FLUSH STATUS` (so only its `_ns` sibling, a cumulative count, gives the run's share);
/// `wsrep_local_recv_queue` and `wsrep_local_send_queue` are queue lengths now; certification
/// failures and brute-force aborts count the conflicts a multi-writer cluster resolves by
/// failing a transaction.
pub const WSREP: &[&str] = &[
    "wsrep_flow_control_paused",
    "wsrep_flow_control_paused_ns",
    "wsrep_flow_control_sent",
    "wsrep_flow_control_recv",
    "wsrep_local_recv_queue",
    "wsrep_local_send_queue",
    "wsrep_local_cert_failures",
    "wsrep_local_bf_aborts",
    "wsrep_replicated",
    "wsrep_received",
    "wsrep_cluster_size",
];

/// SQL string literal: `'...'` with `\` and `'` escaped (the server's default sql_mode reads
/// backslash escapes; with NO_BACKSLASH_ESCAPES a doubled quote still works and names given
/// here have no backslash in practice).
pub fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// The server's settings the probe needs (`SHOW GLOBAL VARIABLES`, which unlike `@@name` does
/// not fail for a variable this server lacks: MySQL without Galera has no `wsrep_on`).
pub fn variables() -> String {
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
     ('performance_schema', 'wsrep_on', 'version')"
        .into()
}

/// Per-statement time limits for the observer's session, so that a read can never hang a
/// sample for long: MariaDB's `max_statement_time` (seconds, every statement), MySQL's
/// `max_execution_time` (milliseconds, SELECTs); `lock_wait_timeout` for metadata locks.
pub fn session_setup(caps: &Caps) -> String {
    if caps.mariadb {
        "SET SESSION max_statement_time = 10, lock_wait_timeout = 5".into()
    } else {
        "SET SESSION max_execution_time = 10000, lock_wait_timeout = 5".into()
    }
}

/// `setup_consumers`: name, enabled.
pub fn consumers() -> String {
    "SELECT NAME, ENABLED FROM performance_schema.setup_consumers".into()
}

/// Wait instruments by class (`wait/io/file`, `wait/synch/mutex`, ...): class, enabled and
/// timed, all.
pub fn wait_instruments() -> String {
    "SELECT SUBSTRING_INDEX(NAME, '/', 3), SUM(ENABLED = 'YES' AND TIMED = 'YES'), COUNT(*) \
     FROM performance_schema.setup_instruments WHERE NAME LIKE 'wait/%' GROUP BY 1 ORDER BY 1"
        .into()
}

/// A read that fails without the PROCESS privilege (and tells nothing else).
pub fn process_probe() -> String {
    "SELECT COUNT(*) FROM information_schema.INNODB_TRX".into()
}

/// Which column of `INNODB_METRICS` says whether a metric is on: MySQL's `STATUS`
/// ('enabled'/'disabled') or MariaDB's `ENABLED` (1/0).
pub fn metrics_columns() -> String {
    "SELECT COLUMN_NAME FROM information_schema.COLUMNS \
     WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'INNODB_METRICS' \
       AND COLUMN_NAME IN ('STATUS', 'ENABLED')"
        .into()
}

/// Every enabled `INNODB_METRICS` metric: name, count. `status_column` is what
/// [`metrics_columns`] found.
pub fn enabled_metrics(status_column: &str) -> String {
    let enabled = if status_column == "STATUS" {
        "STATUS = 'enabled'"
    } else {
        "ENABLED = 1"
    };
    format!("SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE {enabled}")
}

/// Prefix of the `INNODB_METRICS` counters (`innodb_metrics.lock_deadlocks`).
pub const METRICS_PREFIX: &str = "innodb_metrics.";

/// (name, count) rows of [`enabled_metrics`] as `innodb_metrics.<name>` -> count; the history
/// list length (`trx_rseg_history_len`) also as `mysql.Innodb_history_list_length` when the
/// status variables have none (MySQL), so both servers' charts read one key.
pub fn metrics_numbers(rows: &[Vec<Option<String>>], out: &mut BTreeMap<String, f64>) {
    let history = format!(
        "{}Innodb_history_list_length",
        measure::server::MYSQL_PREFIX
    );
    for r in rows.iter().filter(|r| r.len() >= 2) {
        if let (Some(name), Some(v)) = (&r[0], &r[1]) {
            let Ok(x) = v.trim().parse::<f64>() else {
                continue;
            };
            out.insert(format!("{METRICS_PREFIX}{}", name.to_lowercase()), x);
            if name.eq_ignore_ascii_case("trx_rseg_history_len") && !out.contains_key(&history) {
                out.insert(history.clone(), x);
            }
        }
    }
}

/// The operating-system thread of our own connection, to find the server's process: MariaDB's
/// `PROCESSLIST.TID`, or `performance_schema.threads.THREAD_OS_ID` (both servers, with
/// performance_schema).
pub fn own_os_thread(caps: &Caps) -> String {
    if caps.pfs {
        "SELECT THREAD_OS_ID FROM performance_schema.threads \
         WHERE PROCESSLIST_ID = CONNECTION_ID()"
            .into()
    } else {
        "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()".into()
    }
}

/// `SHOW GLOBAL STATUS` for `names`: rows of (name, value).
pub fn status(names: &[&str]) -> String {
    let list: Vec<String> = names.iter().map(|n| quote_literal(n)).collect();
    format!(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
        list.join(", ")
    )
}

/// `SHOW GLOBAL STATUS`, every variable: rows of (name, value). Read in full every interval (a
/// few hundred rows, well under a millisecond on the server) so that any counter a question
/// needs (`Handler_write`, `Innodb_pages_written`, `Open_files`) is in the record.
pub fn all_status() -> String {
    "SHOW GLOBAL STATUS".into()
}

/// Whether a counter stays in every sample of the series even when it never changed: the status
/// variables [`STATUS`] and [`WSREP`] name (the ones the report's charts and the checks read);
/// the rest, and `INNODB_METRICS`, leave the series when constant.
pub fn always_kept(key: &str) -> bool {
    key.strip_prefix(measure::server::MYSQL_PREFIX)
        .is_some_and(|n| STATUS.contains(&n) || WSREP.contains(&n))
}

/// (name, value) rows as `mysql.<name>` -> number; values that are not numbers (`ON`, a UUID)
/// are left out.
pub fn status_numbers(rows: &[Vec<Option<String>>], out: &mut BTreeMap<String, f64>) {
    for r in rows.iter().filter(|r| r.len() >= 2) {
        if let (Some(name), Some(v)) = (&r[0], &r[1]) {
            if let Ok(x) = v.trim().parse::<f64>() {
                out.insert(format!("{}{name}", measure::server::MYSQL_PREFIX), x);
            }
        }
    }
}

/// One activity sample: every session but ours, with (id, user, command, state, current wait
/// event or NULL, that wait's event id, InnoDB transaction state or NULL, thread type, thread
/// name, whether it runs an observer's statement: 1, 0 or NULL). The joins that need what this server lacks are left out (their columns are NULL), and
/// so are the thread's type and name without `performance_schema`. A thread may have more than
/// one row in `events_waits_current` (nested waits): the caller keeps the latest.
///
/// The sessions come from `performance_schema.threads` when it can be read (its `PROCESSLIST_*`
/// columns are the processlist's, "The threads Table"): unlike `information_schema.PROCESSLIST`
/// it needs no temporary table (MariaDB's is an on-disk Aria table, for the `INFO` text column,
/// counted in `Created_tmp_disk_tables` at every sample) and no walk over every session under the
/// server's session-list lock. `information_schema.PROCESSLIST` otherwise.
pub fn activity(caps: &Caps) -> String {
    let (from, id, cols, ours, info) = if caps.pfs {
        (
            "performance_schema.threads p",
            "p.PROCESSLIST_ID",
            "p.PROCESSLIST_ID, p.PROCESSLIST_USER, p.PROCESSLIST_COMMAND, p.PROCESSLIST_STATE",
            "p.PROCESSLIST_ID IS NOT NULL AND p.PROCESSLIST_ID <> CONNECTION_ID()",
            "p.PROCESSLIST_INFO",
        )
    } else {
        (
            "information_schema.PROCESSLIST p",
            "p.ID",
            "p.ID, p.USER, p.COMMAND, p.STATE",
            "p.ID <> CONNECTION_ID()",
            "p.INFO",
        )
    };
    let (wait, wait_id, wait_join) = match (caps.waits_current, caps.pfs) {
        (true, true) => (
            "w.EVENT_NAME",
            "w.EVENT_ID",
            " LEFT JOIN performance_schema.events_waits_current w \
               ON w.THREAD_ID = p.THREAD_ID AND w.END_EVENT_ID IS NULL"
                .to_string(),
        ),
        (true, false) => (
            "w.EVENT_NAME",
            "w.EVENT_ID",
            format!(
                " LEFT JOIN performance_schema.threads t ON t.PROCESSLIST_ID = {id} \
                 LEFT JOIN performance_schema.events_waits_current w \
                   ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL"
            ),
        ),
        _ => ("NULL", "NULL", String::new()),
    };
    let (trx, trx_join) = if caps.process {
        (
            "x.trx_state",
            format!(" LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = {id}"),
        )
    } else {
        ("NULL", String::new())
    };
    let thread = if caps.pfs {
        "p.TYPE, p.NAME"
    } else {
        "NULL, NULL"
    };
    let observer = quote_literal(&format!("{}%", crate::sql::TAG));
    format!(
        "SELECT {cols}, {wait}, {wait_id}, {trx}, {thread}, {info} LIKE {observer} \
         FROM {from}{wait_join}{trx_join} WHERE {ours}"
    )
}

/// Waits by event: event, count, picoseconds; `idle` (a session waiting for its client's next
/// command, timed separately) left out.
///
/// Read from `events_waits_summary_by_user_by_event_name` for the users that are not NULL: the
/// client sessions' waits, live threads and those that have gone together ("Wait Event Summary
/// Tables"). The global summary (`events_waits_summary_global_by_event_name`) adds the server's
/// background threads, whose idle sleeps on timers and conditions are waits by the book but
/// not load: in a 3 s sysbench run on MariaDB 10.11 one background condition
/// (`wait/synch/cond/mysys/COND_timer`) took 2.9 s of the global table's 5.1 s and topped the
/// list. The global table is the fallback when the per-user one cannot be read (`by_user` false).
pub fn wait_summary(by_user: bool) -> String {
    if by_user {
        "SELECT EVENT_NAME, SUM(COUNT_STAR), SUM(SUM_TIMER_WAIT) \
         FROM performance_schema.events_waits_summary_by_user_by_event_name \
         WHERE USER IS NOT NULL AND COUNT_STAR > 0 AND EVENT_NAME <> 'idle' GROUP BY EVENT_NAME"
            .into()
    } else {
        "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
         FROM performance_schema.events_waits_summary_global_by_event_name \
         WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'"
            .into()
    }
}

/// MariaDB's prepared statements of the target's database (their sessions' current database):
/// owner thread, statement id, text, executions, picoseconds, rows sent, rows affected, rows
/// examined.
pub fn prepared(caps: &Caps) -> String {
    let filter = match &caps.schema {
        Some(db) => format!(" AND t.PROCESSLIST_DB = {}", quote_literal(db)),
        None => String::new(),
    };
    format!(
        "SELECT p.OWNER_THREAD_ID, p.STATEMENT_ID, p.SQL_TEXT, p.COUNT_EXECUTE, \
         p.SUM_TIMER_EXECUTE, p.SUM_ROWS_SENT, p.SUM_ROWS_AFFECTED, p.SUM_ROWS_EXAMINED \
         FROM performance_schema.prepared_statements_instances p \
         JOIN performance_schema.threads t ON t.THREAD_ID = p.OWNER_THREAD_ID \
         WHERE p.COUNT_EXECUTE > 0{filter}"
    )
}

/// Executions of prepared statements through the binary protocol, server-wide (what the
/// prepared statements read should add up to).
pub fn executions() -> String {
    "SELECT COUNT_STAR FROM performance_schema.events_statements_summary_global_by_event_name \
     WHERE EVENT_NAME = 'statement/com/Execute'"
        .into()
}

/// A 64-bit id for a statement text (FNV-1a), for statements without a digest: stable across
/// runs, so compare can match them.
pub fn text_id(text: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// Statement digests of the workload: schema, digest, text (when `text`), count, picoseconds,
/// rows sent, rows affected, rows examined. Read under the target's database when it names one
/// (our own session has none, so our statements are not among them); without one, the workload's
/// digests are under NULL with ours, and ours are told apart by what they read (the
/// `performance_schema`, the `information_schema`, `SHOW GLOBAL`, `SET SESSION`).
pub fn digests(caps: &Caps, text: bool) -> String {
    let text_col = if text { "DIGEST_TEXT" } else { "NULL" };
    let filter = match &caps.schema {
        Some(db) => format!("SCHEMA_NAME = {}", quote_literal(db)),
        None => "SCHEMA_NAME IS NULL AND NOT (DIGEST_TEXT LIKE '%performance\\_schema%' \
                 OR DIGEST_TEXT LIKE '%information\\_schema%' \
                 OR DIGEST_TEXT LIKE 'SHOW GLOBAL %' OR DIGEST_TEXT LIKE 'SET SESSION %')"
            .to_string(),
    };
    format!(
        "SELECT SCHEMA_NAME, DIGEST, {text_col}, COUNT_STAR, SUM_TIMER_WAIT, SUM_ROWS_SENT, \
         SUM_ROWS_AFFECTED, SUM_ROWS_EXAMINED \
         FROM performance_schema.events_statements_summary_by_digest WHERE {filter}"
    )
}

/// A `performance_schema` wait event name in the model's `Type:Event` form, the one PostgreSQL's
/// `wait_event_type:wait_event` fills, so that the load chart, the tables and compare treat both
/// alike. The instrument's class becomes the type and the rest of its path the event:
///
/// - `wait/io/file/innodb/innodb_log_file` -> `IO:file/innodb/innodb_log_file` (file I/O);
///   `wait/io/table/sql/handler` -> `IO:table/sql/handler` (row operations on a table, what
///   the manual calls table I/O). PostgreSQL's `IO` class covers the same ground.
/// - `wait/io/socket/sql/client_connection` -> `Client:socket/sql/client_connection` and `idle`
///   -> `Client:idle`: reading the client's statement or sending it the result, and waiting for
///   its next command, PostgreSQL's `Client:ClientRead`/`ClientWrite`. (A session seen running
///   a command may already be idle: the processlist and the waits are read in one statement but
///   not in one instant.)
/// - `wait/synch/mutex/...`, `.../rwlock/...`, `.../sxlock/...`, `.../cond/...` ->
///   `Synch:mutex/innodb/...` and so on: in-memory synchronisation, PostgreSQL's `LWLock`
///   territory, kept under MySQL's own name so that nobody reads a PostgreSQL lock into it.
/// - `wait/lock/table/sql/handler` and `wait/lock/metadata/sql/mdl` -> `Lock:table/sql/handler`,
///   `Lock:metadata/sql/mdl`: heavyweight locks, as PostgreSQL's `Lock` class.
/// - Anything else keeps its whole name under `Other:`.
///
/// A session that is active but in no wait is [`measure::server::CPU`], as in PostgreSQL (with
/// the same caveat: or in something not instrumented). Without wait sampling a session is shown
/// by its thread state: [`stage_event`].
pub fn wait_event(name: &str) -> String {
    if name == "idle" {
        return "Client:idle".into();
    }
    if let Some(socket) = name.strip_prefix("wait/io/socket/") {
        return format!("Client:socket/{socket}");
    }
    let rest = name.strip_prefix("wait/").unwrap_or(name);
    let (class, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let ty = match class {
        "io" => "IO",
        "synch" => "Synch",
        "lock" => "Lock",
        _ => return format!("Other:{name}"),
    };
    format!("{ty}:{tail}")
}

/// An active session without wait sampling (`events_waits_current` not collected, or
/// performance_schema OFF): its `PROCESSLIST.STATE`, the stage it is in (`Sending data`,
/// `Updating`, `Commit`, `Waiting for table metadata lock`), as `Stage:<state>`. Stages are not
/// waits, but they are the best the server says about where a session is.
pub fn stage_event(state: Option<&str>) -> String {
    match state.map(str::trim) {
        Some(s) if !s.is_empty() => format!("Stage:{s}"),
        _ => "Stage:(none)".into(),
    }
}

/// A digest (32 hex digits on MariaDB and MySQL 5.7, 64 on MySQL 8) as the model's 64-bit
/// statement id: its first 16 hex digits. `None` for the catch-all row of statements that found
/// the digest table full.
pub fn digest_id(digest: Option<&str>) -> Option<i64> {
    let d = digest?;
    let head = d.get(..16.min(d.len()))?;
    u64::from_str_radix(head, 16).ok().map(|x| x as i64)
}

/// `MYSQL_VERSION_ID` of a version string: `10.11.19-MariaDB-0+deb12u1` -> 101119,
/// `8.0.36` -> 80036.
pub fn version_num(v: &str) -> u32 {
    let mut parts = v
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b, c) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    a * 10000 + b * 100 + c
}

/// Whether a session is one of the server's own threads rather than a client's: InnoDB's and
/// replication's daemons, the event scheduler, Galera's appliers (`system user`).
pub fn is_server_thread(user: Option<&str>, command: Option<&str>) -> bool {
    matches!(user, Some("system user" | "event_scheduler"))
        || matches!(
            command,
            Some(
                "Daemon"
                    | "Binlog Dump"
                    | "Binlog Dump GTID"
                    | "Slave_IO"
                    | "Slave_SQL"
                    | "Slave_worker"
            )
        )
}

/// Threads of the server's own that a session-sampling query can meet, by the last part of
/// their `performance_schema` instrument name (`thread/sql/event_worker`): the event scheduler
/// and the events it runs, replication's receiver, applier and workers (MariaDB's and MySQL's
/// names before and after 8.0.26's renaming), Galera's appliers. MariaDB 10.11 lists them as
/// `FOREGROUND` threads with a processlist id, and its InnoDB and other daemons as `BACKGROUND`
/// ones without.
const SERVER_THREADS: &[&str] = &[
    "event_scheduler",
    "event_worker",
    "slave_io",
    "slave_sql",
    "slave_worker",
    "replica_io",
    "replica_sql",
    "replica_worker",
    "rpl_parallel_thread",
    "wsrep_applier",
    "wsrep_applier_thread",
    "wsrep_rollbacker",
    "wsrep_rollbacker_thread",
];

/// The kind of background session a sampled thread is, or `None` for a client's session (the
/// load): another observer's session (running a statement tagged as ours), a `BACKGROUND` thread or one of [`SERVER_THREADS`] by its instrument's name
/// (`event_worker`), else a server thread as the processlist shows it ([`is_server_thread`]),
/// by its command (`binlog dump`, a replica's dump thread on its source) or its user (`system
/// user`, Galera's appliers). Without `performance_schema` only the latter can be told.
pub fn background_kind(
    observer: bool,
    thread_type: Option<&str>,
    name: Option<&str>,
    user: Option<&str>,
    command: Option<&str>,
) -> Option<String> {
    if observer {
        return Some(measure::server::OBSERVER.to_string());
    }
    let last = name.map(|n| n.rsplit('/').next().unwrap_or(n));
    if let Some(last) = last {
        if thread_type == Some("BACKGROUND") || SERVER_THREADS.contains(&last) {
            return Some(last.to_string());
        }
    }
    if !is_server_thread(user, command) {
        return None;
    }
    Some(match (user, command) {
        (Some(u @ ("system user" | "event_scheduler")), _) => u.to_string(),
        (_, Some(c)) => c.to_ascii_lowercase(),
        _ => "server thread".to_string(),
    })
}

/// A number column in text form; NULL or garbage is 0.
pub fn num(v: &Option<String>) -> f64 {
    v.as_deref()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_events_in_the_models_form() {
        assert_eq!(
            wait_event("wait/io/file/innodb/innodb_log_file"),
            "IO:file/innodb/innodb_log_file"
        );
        assert_eq!(
            wait_event("wait/io/table/sql/handler"),
            "IO:table/sql/handler"
        );
        assert_eq!(
            wait_event("wait/synch/mutex/innodb/buf_pool_mutex"),
            "Synch:mutex/innodb/buf_pool_mutex"
        );
        assert_eq!(
            wait_event("wait/synch/cond/sql/Item_func_sleep::cond"),
            "Synch:cond/sql/Item_func_sleep::cond"
        );
        assert_eq!(
            wait_event("wait/lock/table/sql/handler"),
            "Lock:table/sql/handler"
        );
        assert_eq!(
            wait_event("wait/lock/metadata/sql/mdl"),
            "Lock:metadata/sql/mdl"
        );
        assert_eq!(wait_event("idle"), "Client:idle");
        assert_eq!(
            wait_event("wait/io/socket/sql/client_connection"),
            "Client:socket/sql/client_connection"
        );
        assert_eq!(
            wait_event("statement/sql/select"),
            "Other:statement/sql/select"
        );
        assert_eq!(stage_event(Some("Sending data")), "Stage:Sending data");
        assert_eq!(stage_event(Some("")), "Stage:(none)");
        assert_eq!(stage_event(None), "Stage:(none)");
    }

    #[test]
    fn digests_become_statement_ids() {
        assert_eq!(
            digest_id(Some("fd8f771ffffb218f50445ae082852262")),
            Some(0xfd8f771ffffb218fu64 as i64)
        );
        assert_eq!(digest_id(Some("0123")), Some(0x0123));
        assert_eq!(digest_id(Some("xyz")), None);
        assert_eq!(digest_id(None), None);
    }

    #[test]
    fn versions_as_numbers() {
        assert_eq!(version_num("10.11.19-MariaDB-0+deb12u1"), 101119);
        assert_eq!(version_num("8.0.36"), 80036);
        assert_eq!(version_num("8.4.0-commercial"), 80400);
        assert_eq!(version_num("garbage"), 0);
    }

    #[test]
    fn status_rows_keep_numbers_under_the_prefix() {
        let rows = vec![
            vec![Some("Com_commit".into()), Some("42".into())],
            vec![Some("wsrep_ready".into()), Some("ON".into())],
            vec![
                Some("wsrep_flow_control_paused".into()),
                Some("0.25".into()),
            ],
            vec![Some("short".into())],
        ];
        let mut m = BTreeMap::new();
        status_numbers(&rows, &mut m);
        assert_eq!(m.len(), 2);
        assert_eq!(m["mysql.Com_commit"], 42.0);
        assert_eq!(m["mysql.wsrep_flow_control_paused"], 0.25);
    }

    #[test]
    fn statements_follow_what_the_server_has() {
        let mut caps = Caps {
            mariadb: true,
            ..Default::default()
        };
        let bare = activity(&caps);
        assert!(!bare.contains("performance_schema") && !bare.contains("INNODB_TRX"));
        assert!(bare.contains("FROM information_schema.PROCESSLIST p WHERE"));
        caps.pfs = true;
        caps.waits_current = true;
        caps.process = true;
        let full = activity(&caps);
        assert!(
            full.contains("FROM performance_schema.threads p LEFT JOIN"),
            "{full}"
        );
        assert!(full.contains("events_waits_current") && full.contains("INNODB_TRX"));
        assert!(session_setup(&caps).contains("max_statement_time"));
        caps.mariadb = false;
        assert!(session_setup(&caps).contains("max_execution_time"));
        assert!(status(WSREP).contains("'wsrep_local_bf_aborts'"));
        assert!(always_kept("mysql.Com_commit") && always_kept("mysql.wsrep_local_recv_queue"));
        assert!(always_kept("mysql.Open_files") && always_kept("mysql.Handler_write"));
        assert!(!always_kept("mysql.Uptime") && !always_kept("innodb_metrics.lock_deadlocks"));
        caps.schema = Some("sb'x".into());
        assert!(digests(&caps, true).contains("SCHEMA_NAME = 'sb''x'"));
        assert!(digests(&caps, false).contains("NULL, COUNT_STAR"));
        caps.schema = None;
        assert!(digests(&caps, true).contains("SCHEMA_NAME IS NULL AND NOT"));
        assert_eq!(
            enabled_metrics("STATUS"),
            "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE STATUS = 'enabled'"
        );
        assert!(enabled_metrics("ENABLED").contains("ENABLED = 1"));
        let mut m = BTreeMap::new();
        let row = |n: &str, v: &str| vec![Some(n.to_string()), Some(v.to_string())];
        metrics_numbers(
            &[
                row("trx_rseg_history_len", "12"),
                row("lock_deadlocks", "3"),
                row("x", "n/a"),
            ],
            &mut m,
        );
        assert_eq!(m["innodb_metrics.lock_deadlocks"], 3.0);
        assert_eq!(m["mysql.Innodb_history_list_length"], 12.0);
        assert_eq!(m.len(), 3);
        assert!(wait_summary(true).contains("by_user_by_event_name"));
        assert!(wait_summary(false).contains("global_by_event_name"));
        caps.schema = Some("sb".into());
        assert!(prepared(&caps).ends_with("AND t.PROCESSLIST_DB = 'sb'"));
        caps.schema = None;
        assert!(prepared(&caps).ends_with("COUNT_EXECUTE > 0"));
    }

    #[test]
    fn statement_texts_get_stable_ids() {
        assert_eq!(text_id(""), 0xcbf2_9ce4_8422_2325u64 as i64);
        assert_eq!(text_id("SELECT 1"), text_id("SELECT 1"));
        assert_ne!(text_id("SELECT 1"), text_id("SELECT 2"));
    }

    #[test]
    fn server_threads_are_not_clients() {
        assert!(is_server_thread(Some("system user"), Some("Sleep")));
        assert!(is_server_thread(Some("root"), Some("Daemon")));
        assert!(!is_server_thread(Some("root"), Some("Query")));
        assert!(!is_server_thread(None, None));
    }

    #[test]
    fn background_threads_by_type_name_command_or_user() {
        let kind = |t, n, u, c| background_kind(false, t, n, u, c);
        let fg = Some("FOREGROUND");
        // A client's session, over performance_schema or the processlist.
        let client = Some("thread/sql/one_connection");
        assert_eq!(kind(fg, client, Some("sb"), Some("Query")), None);
        assert_eq!(kind(None, None, Some("sb"), Some("Query")), None);
        // MariaDB 10.11 shows its event worker as a foreground thread of user root.
        let worker = Some("thread/sql/event_worker");
        assert_eq!(
            kind(fg, worker, Some("root"), Some("Connect")).as_deref(),
            Some("event_worker")
        );
        let cleaner = Some("thread/innodb/page_cleaner_thread");
        assert_eq!(
            kind(Some("BACKGROUND"), cleaner, None, None).as_deref(),
            Some("page_cleaner_thread")
        );
        // A replica's dump thread is a connection by name, replication by its command.
        assert_eq!(
            kind(fg, client, Some("repl"), Some("Binlog Dump")).as_deref(),
            Some("binlog dump")
        );
        assert_eq!(
            kind(None, None, Some("system user"), Some("Query")).as_deref(),
            Some("system user")
        );
        // Another stampede's observer, seen running one of its tagged statements.
        assert_eq!(
            background_kind(true, fg, client, Some("root"), Some("Query")).as_deref(),
            Some(measure::server::OBSERVER)
        );
        let sql = activity(&Caps::default());
        assert!(
            sql.contains(", p.INFO LIKE '/* stampede observe */%' FROM"),
            "{sql}"
        );
    }
}
