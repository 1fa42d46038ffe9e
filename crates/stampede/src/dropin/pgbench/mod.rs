//! `stampede pgbench`: pgbench 18's command line, output and exit statuses.

use report::RunResult;

/// The pgbench whose behaviour `stampede pgbench` follows (PG_VERSION of its `printVersion`).
pub const PGBENCH_VERSION: &str = "18.1";

/// pgbench's `printVersion`: `pgbench (18.1, server 15.18)` (the server's full version string,
/// as libpq's `server_version` parameter reports it).
pub fn version_line(server_version: &str) -> String {
    let server = server_version
        .split_whitespace()
        .next()
        .unwrap_or(server_version);
    format!("pgbench ({PGBENCH_VERSION}, server {server})")
}

/// pgbench's `printResults`, and nothing more.
pub fn summary(r: &RunResult) -> String {
    report::render_pgbench_summary(r)
}
