//! # report: results for people and machines
//!
//! Owns the result of a run ([`RunResult`], versioned and self-describing, see `model`) and its
//! renderings: the pgbench-compatible text summary plus stampede's additions ([`render_text`]),
//! the progress line ([`render_progress`]), JSON with a schema ([`write_json`], [`read_json`],
//! [`SCHEMA`]), a per-interval CSV ([`render_csv`]) and the "where the time went" section about
//! the server ([`render_server_summary`], part of [`render_text`] when the run was observed), and
//! the self-contained HTML report ([`html::render`]), and the comparison of runs with a verdict
//! per metric that accounts for noise ([`compare`]).
//!
//! Must not touch: async runtimes, database drivers, the engine, files by name, the terminal.
//! Depends on `measure` (the numbers), serde and serde_json only. The caller fills the result
//! (redacting secrets first) and decides where each rendering goes.

pub mod cloudwatch;
pub mod compare;
mod counter_sets;
mod csv;
mod endpoint;
pub mod failover;
pub mod fleet;
pub mod html;
mod json;
pub mod ledger;
pub mod live;
pub mod merge;
mod model;
mod observed;
mod observed_hosts;
mod routing;
pub mod section;
pub mod sizes;
pub mod steady;
pub mod svg;
pub mod sweep;
mod sysbench;
mod text;
pub mod warmup;

#[cfg(test)]
mod testdata;

/// The latency percentiles the text and HTML tables show, with their labels.
pub(crate) const PERCENTILES: [(&str, f64); 6] = [
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("p99.99", 99.99),
];

pub use csv::{render_counters_csv, render_csv, COUNTERS_CSV_HEADER, CSV_HEADER};
pub use endpoint::{EndpointFailures, EndpointLatency};
pub use fleet::{FleetProcess, FleetSection};
pub use json::{read_json, write_json, ReadError, SCHEMA};
pub use ledger::{render_ledger, LedgerLine, LedgerSection};
pub use model::{
    format_rfc3339_utc, AbortedClient, Check, CheckStatus, ClientEnvironment, ConnectionSetup,
    ConnectionStats, EmbeddedTarget, Endpoint, Environment, Fairness, FdLimit, NetInterface,
    RunConfig, RunResult, ServerEnvironment, SysbenchSection, TargetInfo, TxnTypeConfig,
    SCHEMA_VERSION,
};
pub use observed::{bytes, one_line, render_server_summary, waits_words};
pub use routing::Routing;
pub use sysbench::{
    render_sysbench_output, render_sysbench_progress, render_sysbench_summary, SysbenchProgress,
};
pub use text::{
    render_checks, render_pgbench_summary, render_progress, render_stampede_summary, render_text,
    ProgressStyle,
};

/// A result of this schema and version with nothing in it: a maker of a result names what its
/// run has and takes the rest from here (`RunResult { config, total, ..Default::default() }`), so
/// each family's section is absent wherever no one fills it, and a new section needs no edit
/// at the places that do not.
impl Default for RunResult {
    fn default() -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            stampede_version: env!("CARGO_PKG_VERSION").into(),
            command_line: Vec::new(),
            started_at: String::new(),
            measured_duration_s: 0.0,
            config: RunConfig::default(),
            target: TargetInfo::default(),
            environment: Environment::default(),
            connections: ConnectionStats::default(),
            intervals: Vec::new(),
            total: measure::Interval::default(),
            checks: Vec::new(),
            interrupted: false,
            server_metrics: None,
            sysbench: None,
            endpoints: Vec::new(),
            endpoints_warning: None,
            failover: None,
            replication: Vec::new(),
            routing: Vec::new(),
            sizes: Vec::new(),
            sweep: None,
            ledger: None,
            fleet: None,
            cloudwatch: None,
            sections: Default::default(),
            warmup: None,
            steady_state: None,
            prewarm: None,
        }
    }
}
