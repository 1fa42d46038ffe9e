//! The drop-ins: `stampede pgbench ARGS` and `stampede sysbench ARGS` (or a link named
//! `pgbench` / `sysbench`) read their peer's command line exactly, print what it prints where it
//! prints it, and exit as it exits. Each translates its command line into the same
//! [`crate::plan::Plan`] stampede's own `run` builds; what stampede adds (checks, JSON, HTML,
//! server watching) is off unless asked for with stampede's long options.

pub mod pgbench;
pub mod sysbench;
