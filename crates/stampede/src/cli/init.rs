//! `stampede init`, `check` and `reset`: a workload's tables, by the workload's name or by the
//! name of its tables (`tpcb`, `oltp`).

use clap::{Args, ValueEnum};

use crate::families::sysbench::options::PgsqlArgs;
use crate::targeting::TargetArgs;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum PartitionMethod {
    Range,
    Hash,
}

/// How the tables are laid out (`--layout`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    /// One server, plain tables (pgbench -i, sysbench prepare).
    Plain,
    /// Citus distributed tables on the shard key, collocated (the target is the coordinator).
    Citus,
    /// Aurora PostgreSQL Limitless sharded tables, collocated (the target is a router).
    Limitless,
    /// Hash partitions on postgres_fdw foreign tables over the --shard servers.
    Fdw,
}

/// `-s/--scale`: pgbench's scale, a whole number (`Scale::whole`), or TPC-H's scale factor,
/// which may be a fraction (`init tpch --scale 0.1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale(pub f64);

impl std::str::FromStr for Scale {
    type Err = String;

    fn from_str(s: &str) -> Result<Scale, String> {
        match s.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Scale(v)),
            _ => Err(format!("{s:?} is not a number")),
        }
    }
}

impl Scale {
    /// The scale as a whole number, when it is one.
    pub fn whole(self) -> Option<i64> {
        let v = self.0;
        (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
    }
}

const SHARDED: &str = "Sharded layouts (init tpcb|oltp --layout)";
const TPCB: &str = "pgbench's tables (init tpcb, pgbench -i)";
const OLTP: &str = "sysbench's tables (init oltp, sysbench prepare)";
const OUTPUT: &str = "Output (one process's plain load)";

#[derive(Args, Debug)]
pub struct InitArgs {
    /// What to load: a workload (`stampede run --list`) or its tables' name: tpcb, oltp, tpcc,
    /// ycsb.
    #[arg(value_name = "WORKLOAD")]
    pub workload: Option<String>,
    /// The database, as pgbench's positional DBNAME (prefer -d).
    #[arg(value_name = "DBNAME")]
    pub positional_dbname: Option<String>,
    /// List what can be loaded and exit.
    #[arg(long = "list")]
    pub list: bool,
    /// Scale factor (100,000 accounts per unit; for `init tpch` TPC-H's, fractions allowed).
    #[arg(short = 's', long = "scale", value_name = "NUM", default_value = "1", help_heading = TPCB)]
    pub scale: Scale,
    /// Fill factor of the tables (10..100).
    #[arg(
        short = 'F',
        long = "fillfactor",
        value_name = "NUM",
        default_value_t = 100,
        help_heading = TPCB
    )]
    pub fillfactor: u32,
    /// Partition pgbench_accounts into NUM parts.
    #[arg(long = "partitions", value_name = "NUM", default_value_t = 0, help_heading = TPCB)]
    pub partitions: u32,
    /// Partitioning method (with --partitions).
    #[arg(long = "partition-method", value_enum, default_value = "range", help_heading = TPCB)]
    pub partition_method: PartitionMethod,
    /// Create the tables unlogged.
    #[arg(long = "unlogged-tables", visible_alias = "unlogged", help_heading = TPCB)]
    pub unlogged: bool,
    /// Create foreign keys between the tables.
    #[arg(long = "foreign-keys", help_heading = TPCB)]
    pub foreign_keys: bool,
    /// Create the tables in this tablespace.
    #[arg(long = "tablespace", value_name = "TABLESPACE", help_heading = TPCB)]
    pub tablespace: Option<String>,
    /// Create the primary keys' indexes in this tablespace.
    #[arg(long = "index-tablespace", value_name = "TABLESPACE", help_heading = TPCB)]
    pub index_tablespace: Option<String>,
    /// Generate the data on the server (INSERT ... SELECT generate_series) instead of COPY.
    #[arg(long = "server-side", help_heading = TPCB)]
    pub server_side: bool,
    /// Do not VACUUM ANALYZE after loading.
    #[arg(short = 'n', long = "no-vacuum")]
    pub no_vacuum: bool,
    /// Loader connections (default: 1, or one per partition up to the CPU count).
    #[arg(short = 'j', long = "jobs", value_name = "NUM")]
    pub jobs: Option<u32>,
    /// No progress bar.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Number of sbtest tables (sysbench's --tables).
    #[arg(long = "tables", value_name = "N", default_value_t = 1, help_heading = OLTP)]
    pub tables: u32,
    /// Rows per table (sysbench's --table-size).
    #[arg(long = "table-size", value_name = "N", default_value_t = 10_000, help_heading = OLTP)]
    pub table_size: u64,
    /// Create sysbench bulk_insert's tables instead (sbtest1..N, id and k, empty; N =
    /// --tables = the run's clients).
    #[arg(long = "bulk-insert", help_heading = OLTP)]
    pub bulk_insert: bool,
    /// MySQL: the sbtest tables' storage engine (sysbench's --mysql-storage-engine).
    #[arg(long = "mysql-storage-engine", value_name = "ENGINE", default_value = "innodb", help_heading = OLTP)]
    pub mysql_storage_engine: String,
    /// MySQL: table options appended to CREATE TABLE (e.g. "ROW_FORMAT=COMPRESSED").
    #[arg(long = "mysql-table-options", value_name = "OPTIONS", default_value = "", help_heading = OLTP)]
    pub mysql_table_options: String,
    /// Warehouses to load (TPC-C, `init tpcc`).
    #[arg(
        short = 'w',
        long = "warehouses",
        value_name = "N",
        help_heading = "TPC-C (init tpcc)"
    )]
    pub warehouses: Option<u32>,
    /// Also create the usual secondary indexes (foreign-key columns, l_shipdate, o_orderdate).
    #[arg(long = "indexes", help_heading = "TPC-H (init tpch --scale SF)")]
    pub indexes: bool,
    /// Lay the tables out sharded: on the shard key bid (tpcb) or id (oltp).
    #[arg(long = "layout", value_enum, default_value = "plain", help_heading = SHARDED)]
    pub layout: LayoutArg,
    /// A shard server of --layout fdw, as a libpq connection string ('host=... port=...
    /// dbname=...'); once per shard, shard i holds hash remainder i.
    #[arg(long = "shard", value_name = "CONNINFO", help_heading = SHARDED)]
    pub shard: Vec<String>,
    /// Create this table as a reference table (citus, limitless): pgbench_branches or
    /// pgbench_tellers.
    #[arg(long = "reference-table", value_name = "TABLE", help_heading = SHARDED)]
    pub reference_table: Vec<String>,
    /// Print the layout's SQL, step by step and where each runs, without connecting.
    #[arg(long = "dry-run", help_heading = SHARDED)]
    pub dry_run: bool,
    /// sysbench's pgsql connection options.
    #[command(flatten)]
    pub pgsql: PgsqlArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    /// A YCSB property for `init ycsb`: `-p recordcount=N`, fieldcount, fieldlength,
    /// insertorder=hashed|ordered, zeropadding (`-p` with a KEY=VALUE is a property; with a
    /// number, the port).
    #[arg(
        long = "property",
        value_name = "KEY=VALUE",
        help_heading = "YCSB's usertable (init ycsb)"
    )]
    pub property: Vec<String>,
    /// `--fleet`: this process loads its part of `init oltp`'s, `init tpcb`'s or `init tpcc`'s
    /// rows (`commands::init_fleet`).
    #[command(flatten)]
    pub fleet: crate::families::FleetArgs,

    /// Write the load's result as JSON: its steps, rows per table and per second, and the
    /// server as observed during it (wait events, top SQL, counters), as `run --json` does.
    #[arg(long = "json", value_name = "FILE", help_heading = OUTPUT)]
    pub json: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML report of the load (rows/s, steps, wait events, top
    /// SQL) to FILE.
    #[arg(long = "html", value_name = "FILE", help_heading = OUTPUT)]
    pub html: Option<std::path::PathBuf>,
    /// Do not watch the server during the load (wait events, pg_stat_statements, counters, OS).
    #[arg(long = "no-observe", help_heading = OUTPUT)]
    pub no_observe: bool,
}

#[derive(Args, Debug)]
pub struct ResetArgs {
    /// The workload (or its tables' name) whose data to restore: tpcb.
    #[arg(value_name = "WORKLOAD")]
    pub workload: String,
    /// The database, as pgbench's positional DBNAME (prefer -d).
    #[arg(value_name = "DBNAME")]
    pub positional_dbname: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The workload (or its tables' name) whose consistency to check: tpcb, oltp, tpcc, ycsb.
    #[arg(value_name = "WORKLOAD")]
    pub workload: String,
    /// The database, as pgbench's positional DBNAME (prefer -d).
    #[arg(value_name = "DBNAME")]
    pub positional_dbname: Option<String>,
    /// Number of sbtest tables (sysbench's --tables), for `check oltp`.
    #[arg(long = "tables", value_name = "N", default_value_t = 1)]
    pub tables: u32,
    #[command(flatten)]
    pub target: TargetArgs,
}
