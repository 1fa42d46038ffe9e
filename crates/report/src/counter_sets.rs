//! Which server counters answer which question, as data: the named sets the run's HTML draws
//! over time (`html::counters`: rows by operation, handlers, pages, blocks hit and read,
//! sessions) and the sweep's HTML draws against the swept value (`sweep::series`: commits,
//! rows, blocks, WAL, statements, buffer pool reads, per step). One table, so that a set both
//! draw (MySQL's statements and InnoDB rows) is named once.
//!
//! Must not touch: the counters' reading (observe) or their drawing; every counter of a result
//! is in its JSON and CSV whether a set names it or not.

/// How a counter becomes a line: a per-second rate of a cumulative count (times a scale), or
/// the level as read (a gauge). A sweep step keeps each counter's change over the step, so a
/// sweep draws only the rates.
#[derive(Clone, Copy)]
pub(crate) enum How {
    Rate(f64),
    Level,
}

/// One line of a set: the counter's key, its label, how it is drawn.
pub(crate) struct Line(pub &'static str, pub &'static str, pub How);

/// Where a set is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// The run's counters over time (the commits and the WAL are in the run's server activity
    /// section instead).
    Run,
    /// A sweep's counters against the swept value.
    Sweep,
    Both,
}

/// A question and the counters that answer it, drawn as one chart.
pub(crate) struct Set {
    pub id: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    pub lines: &'static [Line],
    pub shown: Shown,
}

impl Set {
    pub fn on_run_page(&self) -> bool {
        self.shown != Shown::Sweep
    }

    pub fn in_sweeps(&self) -> bool {
        self.shown != Shown::Run
    }
}

const R: How = How::Rate(1.0);
const L: How = How::Level;
use Shown::{Both, Run, Sweep};

/// Every set, PostgreSQL's then MySQL's (the sweep's chart ids count the sweep's sets in this
/// order).
pub(crate) fn all() -> impl Iterator<Item = &'static Set> {
    PG_SETS.iter().chain(MYSQL_SETS)
}

/// PostgreSQL: the user tables' activity (`pg_stat_user_tables`, `pg_statio_user_tables`),
/// the background writer's and checkpointer's buffers (the commits and the WAL are charted in
/// the server activity section).
pub(crate) const PG_SETS: &[Set] = &[
    Set {
        id: "set-commits",
        title: "Commits and rollbacks (pg_stat_database)",
        unit: "per s",
        lines: &[
            Line("database.xact_commit", "commits", R),
            Line("database.xact_rollback", "rollbacks", R),
        ],
        shown: Sweep,
    },
    Set {
        id: "set-db-rows",
        title: "Rows returned, fetched and changed (pg_stat_database)",
        unit: "rows / s",
        lines: &[
            Line("database.tup_returned", "returned", R),
            Line("database.tup_fetched", "fetched", R),
            Line("database.tup_inserted", "inserted", R),
            Line("database.tup_updated", "updated", R),
            Line("database.tup_deleted", "deleted", R),
        ],
        shown: Sweep,
    },
    Set {
        id: "set-db-blocks",
        title: "Blocks hit in shared buffers and read (pg_stat_database)",
        unit: "blocks / s",
        lines: &[
            Line("database.blks_hit", "hit", R),
            Line("database.blks_read", "read", R),
        ],
        shown: Sweep,
    },
    Set {
        id: "set-wal",
        title: "WAL bytes (pg_stat_wal)",
        unit: "bytes / s",
        lines: &[Line("wal.wal_bytes", "WAL", R)],
        shown: Sweep,
    },
    Set {
        id: "set-rows",
        title: "Rows by operation, all user tables (pg_stat_user_tables)",
        unit: "rows / s",
        lines: &[
            Line("tables.n_tup_ins", "inserted", R),
            Line("tables.n_tup_upd", "updated", R),
            Line("tables.n_tup_hot_upd", "HOT updated", R),
            Line("tables.n_tup_del", "deleted", R),
            Line("tables.idx_tup_fetch", "fetched by index", R),
            Line("tables.seq_tup_read", "read by seq scans", R),
        ],
        shown: Run,
    },
    Set {
        id: "set-scans",
        title: "Scans (pg_stat_user_tables)",
        unit: "scans / s",
        lines: &[
            Line("tables.idx_scan", "index scans", R),
            Line("tables.seq_scan", "sequential scans", R),
        ],
        shown: Run,
    },
    Set {
        id: "set-blocks",
        title: "Table and index blocks: hit in shared buffers and read (pg_statio_user_tables)",
        unit: "blocks / s",
        lines: &[
            Line("statio.heap_blks_hit", "table hit", R),
            Line("statio.heap_blks_read", "table read", R),
            Line("statio.idx_blks_hit", "index hit", R),
            Line("statio.idx_blks_read", "index read", R),
        ],
        shown: Run,
    },
    Set {
        id: "set-tuples",
        title: "Live and dead tuples (pg_stat_user_tables)",
        unit: "tuples",
        lines: &[
            Line("tables.n_live_tup", "live", L),
            Line("tables.n_dead_tup", "dead", L),
        ],
        shown: Run,
    },
    Set {
        id: "set-buffers",
        title: "Buffers written, by whom (pg_stat_bgwriter, pg_stat_checkpointer)",
        unit: "buffers / s",
        lines: &[
            Line("checkpointer.buffers_written", "checkpointer", R),
            Line("bgwriter.buffers_checkpoint", "checkpointer", R),
            Line("bgwriter.buffers_clean", "background writer", R),
            Line("bgwriter.buffers_backend", "backends", R),
        ],
        shown: Run,
    },
];

/// MySQL and MariaDB: `SHOW GLOBAL STATUS` (the commits and the redo log are charted in the
/// server activity section).
pub(crate) const MYSQL_SETS: &[Set] = &[
    Set {
        id: "set-handlers",
        title: "Handler calls: rows asked of the storage engine (Handler_*)",
        unit: "calls / s",
        lines: &[
            Line("mysql.Handler_write", "write", R),
            Line("mysql.Handler_read_key", "read_key", R),
            Line("mysql.Handler_read_next", "read_next", R),
            Line("mysql.Handler_read_rnd", "read_rnd", R),
            Line("mysql.Handler_read_rnd_next", "read_rnd_next", R),
            Line("mysql.Handler_update", "update", R),
            Line("mysql.Handler_delete", "delete", R),
        ],
        shown: Run,
    },
    Set {
        id: "set-statements",
        title: "Statements by kind (Com_*)",
        unit: "statements / s",
        lines: &[
            Line("mysql.Com_select", "select", R),
            Line("mysql.Com_insert", "insert", R),
            Line("mysql.Com_update", "update", R),
            Line("mysql.Com_delete", "delete", R),
            Line("mysql.Com_commit", "commit", R),
            Line("mysql.Com_rollback", "rollback", R),
        ],
        shown: Both,
    },
    Set {
        id: "set-innodb-rows",
        title: "InnoDB rows (Innodb_rows_*)",
        unit: "rows / s",
        lines: &[
            Line("mysql.Innodb_rows_read", "read", R),
            Line("mysql.Innodb_rows_inserted", "inserted", R),
            Line("mysql.Innodb_rows_updated", "updated", R),
            Line("mysql.Innodb_rows_deleted", "deleted", R),
        ],
        shown: Both,
    },
    Set {
        id: "set-innodb-pages",
        title: "InnoDB pages read, created and written (Innodb_pages_*)",
        unit: "pages / s",
        lines: &[
            Line("mysql.Innodb_pages_read", "read", R),
            Line("mysql.Innodb_pages_created", "created", R),
            Line("mysql.Innodb_pages_written", "written", R),
            Line("mysql.Innodb_buffer_pool_pages_flushed", "flushed", R),
        ],
        shown: Run,
    },
    Set {
        id: "set-threads",
        title: "Threads connected and running",
        unit: "threads",
        lines: &[
            Line("mysql.Threads_connected", "connected", L),
            Line("mysql.Threads_running", "running", L),
        ],
        shown: Run,
    },
    Set {
        id: "set-locks-files",
        title: "Row lock time and open files",
        unit: "ms / s, files",
        lines: &[
            Line("mysql.Innodb_row_lock_time", "row lock wait ms / s", R),
            Line("mysql.Innodb_row_lock_waits", "row lock waits / s", R),
            Line("mysql.Open_files", "open files", L),
        ],
        shown: Run,
    },
    Set {
        id: "set-buffer-pool",
        title: "InnoDB buffer pool: read requests and reads from disk",
        unit: "per s",
        lines: &[
            Line("mysql.Innodb_buffer_pool_read_requests", "read requests", R),
            Line("mysql.Innodb_buffer_pool_reads", "reads from disk", R),
        ],
        shown: Sweep,
    },
];
