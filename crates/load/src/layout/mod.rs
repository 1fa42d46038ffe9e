//! # Sharded layouts of the TPC-B and sysbench schemas
//!
//! `init tpcb|oltp --layout citus|limitless|fdw` creates the same tables as the plain layout,
//! sharded on one key, and loads them without `COPY ... FREEZE` (refused on partitioned and
//! foreign tables, postgres commit 401a695, and pointless through a router).
//!
//! ## The shard key
//! TPC-B's tables are all sharded on `bid`, collocated with `pgbench_branches`: the shape of
//! seed 000's `limitless_create_tables.sql` (Aurora Limitless, "the clear choice is branch_id
//! because it's in all four tables"), and the one Citus' documentation uses for pgbench
//! (`create_distributed_table` on `bid` with `colocate_with`). A key of `aid` would leave the
//! teller and branch updates on other shards than their account; with `bid` a transaction whose
//! statements all carry its `bid` (the `tpcb-sharded` builtin) touches one shard. Unique keys must
//! contain the shard key (seed 000's `limitless_creidx.psql`): `(tid, bid)`, `(aid, bid)`.
//! sysbench's `sbtestN` are sharded on `id` (every statement of oltp_* names it, or a range of
//! it), each table collocated with `sbtest1`.
//!
//! No table is a reference table by default: branches and tellers are updated by every TPC-B
//! transaction, and a reference table is written on every node ("less suited for
//! high-performance DML", seed 000). `--reference-table` makes one anyway, to measure exactly that.
//!
//! ## The plan as data
//! A layout is a [`Plan`]: phases run one after the other, each a set of [`Step`]s run in
//! parallel, each step a list of statements on one connection (the coordinator, or shard `i`),
//! in order (Limitless' `SET rds_aurora.limitless_create_table_*` are per session). `--dry-run`
//! prints the plan; `init` runs the same plan, so what is printed is what would run.
//!
//! ## Loading
//! Data is generated on the server (`INSERT ... SELECT generate_series`, pgbench's `-I G`; seed
//! 000's `limitless_pgbench_load.psql`), one statement per slice of branches (or ids) so that
//! several connections load at once:
//! - citus, limitless: through the coordinator/router, `jobs` connections, each a slice of keys.
//! - fdw: directly into each shard's own tables, all shards at once. Which keys belong to shard
//!   `i` is PostgreSQL's own hash partitioning: a session-local partitioned table hashed on the
//!   same type answers `satisfies_hash_partition(t, n, i, key)` exactly as the coordinator's
//!   `FOR VALUES WITH (MODULUS n, REMAINDER i)` routes (hash partitioning is stable across
//!   versions, as pg_upgrade requires).
//!
//! sysbench's rows generated this way have `k` uniform in `1..table_size` and random-hex `c` and
//! `pad` (not sysbench's "special" `k` and digit groups): the shapes and sizes match, the values
//! are not sysbench's.
//!
//! Must not drop what stampede did not create: every DROP names stampede's tables
//! (`pgbench_*`, `sbtestN`, `*_shardI`) and foreign servers (`stampede_shardI`); never CASCADE.

mod citus;
mod fdw;
mod limitless;
mod run;
mod sql;

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use sut::ConnConfig;

pub use fdw::{server_name, suffix as shard_suffix};
pub use run::{check_server, execute};

/// How the tables are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One server, plain tables (today's `init`).
    Plain,
    /// Citus: distributed tables (`create_distributed_table`), collocated.
    Citus,
    /// Aurora PostgreSQL Limitless: sharded tables (`rds_aurora.limitless_create_table_*`).
    Limitless,
    /// Plain PostgreSQL: hash-partitioned tables whose partitions are postgres_fdw foreign
    /// tables on the shard servers.
    Fdw,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Plain => "plain",
            Layout::Citus => "citus",
            Layout::Limitless => "limitless",
            Layout::Fdw => "fdw",
        }
    }
}

/// Which tables, how many rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// pgbench's four tables at `scale` (100,000 accounts per branch).
    Tpcb { scale: i64 },
    /// sysbench's `sbtest1..tables`, `table_size` rows each.
    Oltp { tables: u32, table_size: u64 },
}

/// Everything a sharded `init` needs.
#[derive(Clone, Debug)]
pub struct ShardedOptions {
    pub layout: Layout,
    pub shape: Shape,
    /// fdw: the shard servers, in remainder order (shard `i` holds `REMAINDER i`).
    pub shards: Vec<ConnConfig>,
    /// Tables created as reference tables (citus, limitless).
    pub reference: Vec<String>,
    /// Loader connections (citus, limitless); fdw uses one per shard.
    pub jobs: usize,
    pub no_vacuum: bool,
    pub cancel: Arc<AtomicBool>,
}

impl ShardedOptions {
    /// What is wrong with the options, before any connection.
    pub fn validate(&self) -> Result<(), String> {
        match self.layout {
            Layout::Plain => return Err("the plain layout is not sharded".into()),
            Layout::Fdw if self.shards.is_empty() => {
                return Err(
                    "--layout fdw needs the shard servers: --shard 'host=... port=...' \
                            once per shard (at least one)"
                        .into(),
                )
            }
            Layout::Fdw if !self.reference.is_empty() => {
                return Err("--reference-table applies to --layout citus and limitless".into())
            }
            Layout::Citus | Layout::Limitless if !self.shards.is_empty() => {
                return Err(format!(
                    "--shard applies to --layout fdw; {} places the shards itself",
                    self.layout.name()
                ))
            }
            _ => {}
        }
        if self.jobs == 0 {
            return Err("-j/--jobs must be at least 1".into());
        }
        let allowed: &[&str] = match self.shape {
            Shape::Tpcb { scale } => {
                if scale < 1 {
                    return Err("-s/--scale must be at least 1".into());
                }
                &["pgbench_branches", "pgbench_tellers"]
            }
            Shape::Oltp { tables, .. } => {
                if tables == 0 {
                    return Err("--tables must be at least 1".into());
                }
                &[]
            }
        };
        for r in &self.reference {
            if !allowed.contains(&r.as_str()) {
                return Err(format!(
                    "--reference-table {r}: only {} can be a reference table here (the others \
                     are sharded on their key)",
                    if allowed.is_empty() {
                        "no table".to_string()
                    } else {
                        allowed.join(" or ")
                    }
                ));
            }
        }
        Ok(())
    }
}

/// Where a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// The `-d` target: Citus' coordinator, Limitless' router, the fdw coordinator.
    Coordinator,
    /// fdw: shard server `i`.
    Shard(usize),
}

/// Statements run in order on one connection.
#[derive(Clone, Debug)]
pub struct Step {
    pub on: On,
    /// What it does, for progress lines.
    pub what: String,
    pub sql: Vec<String>,
}

/// Steps run in parallel; the phase ends when all have.
#[derive(Clone, Debug)]
pub struct Phase {
    pub name: &'static str,
    pub steps: Vec<Step>,
}

/// A layout's whole `init`, in order.
#[derive(Clone, Debug)]
pub struct Plan {
    pub phases: Vec<Phase>,
    /// fdw: the shards' descriptions (no password), for the printed plan.
    pub shards: Vec<String>,
}

/// The plan for `opts` (validated).
pub fn plan(opts: &ShardedOptions) -> Plan {
    plan_with(opts, false)
}

/// The plan to run: with the user mappings' passwords (`secrets`), which a printed plan hides.
pub(crate) fn plan_with(opts: &ShardedOptions, secrets: bool) -> Plan {
    let phases = match opts.layout {
        Layout::Plain => Vec::new(),
        Layout::Citus => citus::plan(opts),
        Layout::Limitless => limitless::plan(opts),
        Layout::Fdw => fdw::plan_with(opts, secrets),
    };
    Plan {
        phases,
        shards: opts.shards.iter().map(describe).collect(),
    }
}

/// A shard server as printed: hosts, ports, database and user, never a password.
pub fn describe(c: &ConnConfig) -> String {
    let hosts: Vec<String> = c.hosts.iter().map(|h| h.host.clone()).collect();
    let ports: Vec<String> = c.hosts.iter().map(|h| h.port.to_string()).collect();
    format!(
        "host={} port={} dbname={} user={}",
        hosts.join(","),
        ports.join(","),
        c.dbname,
        c.user
    )
}

impl fmt::Display for Plan {
    /// The dry run's text: SQL a person could paste into psql, each step headed by where it runs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.phases {
            writeln!(f, "-- phase: {}", p.name)?;
            for s in &p.steps {
                let on = match s.on {
                    On::Coordinator => "coordinator".to_string(),
                    On::Shard(i) => format!(
                        "shard {i} ({})",
                        self.shards.get(i).map_or("?", String::as_str)
                    ),
                };
                writeln!(f, "-- on {on}: {}", s.what)?;
                for q in &s.sql {
                    writeln!(f, "{q};")?;
                }
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// The branch (or id) slices `jobs` connections load, `1..=n` cut in `jobs` nearly equal parts.
pub(crate) fn slices(n: i64, jobs: usize) -> Vec<(i64, i64)> {
    let jobs = (jobs as i64).clamp(1, n.max(1));
    let mut out = Vec::new();
    let mut lo = 1;
    for j in 0..jobs {
        let hi = n * (j + 1) / jobs;
        if hi >= lo {
            out.push((lo, hi));
        }
        lo = hi + 1;
    }
    out
}

#[cfg(test)]
mod tests;
