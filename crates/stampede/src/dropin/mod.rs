//! The drop-ins: `stampede pgbench ARGS` and `stampede sysbench ARGS` (or a link named
//! `pgbench` / `sysbench`) read their peer's command line exactly, print what it prints where it
//! prints it, and exit as it exits. Each translates its command line into the same
//! [`crate::plan::Plan`] stampede's own `run` builds; what stampede adds (checks, JSON, HTML,
//! server watching) is off unless asked for with stampede's long options.
//!
//! Layout: `pgbench/` (pgbench 18: `args` its option loop and checks, `opts` the value it
//! produces, `help` what it prints without running, `host` the process-side answers the parser
//! asks for, `init` its `-i` steps, `mod.rs` the command), `sysbench/` (sysbench 1.0.20), and
//! what they share with C programs: `getopt` (glibc's `getopt_long`, the rules every pgbench on
//! Linux parses with) and `cnum` (the C number conversions pgbench applies to option values).

pub mod cnum;
pub mod getopt;
pub mod pgbench;
pub mod sysbench;
