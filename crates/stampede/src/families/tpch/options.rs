//! `stampede run tpch`'s own options (flattened into the run's, `families::RunArgs`).

use clap::{Args, ValueEnum};

const TPCH: &str = "TPC-H (run tpch, run tpch-qN)";

/// Which of TPC-H's performance tests a `run tpch` runs (clause 5.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Test {
    /// The power test, then the throughput test: what QphH@Size is computed from.
    #[default]
    Full,
    /// One stream: RF1, the 22 queries in the spec's order, RF2 (clause 5.3.3).
    Power,
    /// S query streams and a refresh stream at once (clause 5.3.4).
    Throughput,
}

/// `stampede run tpch`'s options.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "tpch_options")]
pub struct Options {
    /// The test to run [full].
    #[arg(long = "test", value_enum, value_name = "TEST", help_heading = TPCH)]
    pub test: Option<Test>,
    /// Query streams of the throughput test (clause 5.3.4's minimum: 2 up to SF 1, 3 at
    /// SF 10, ...) [2].
    #[arg(long = "streams", value_name = "S", help_heading = TPCH)]
    pub streams: Option<u32>,
    /// A query that runs longer is cancelled and reported as timed out; its stream goes on
    /// (`run ch`: its analytic client goes on to the next query).
    #[arg(long = "query-timeout", value_name = "SECONDS", help_heading = TPCH)]
    pub query_timeout: Option<f64>,
    /// qgen's validation parameters (clause 2.4.N.4) for every query instead of seeded
    /// random ones: the answers can then be checked against the answer set.
    #[arg(long = "validation", help_heading = TPCH)]
    pub validation: bool,
}

impl Options {
    /// The options given, for a run that is not TPC-H's.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.test.is_some(), "--test"),
            (self.streams.is_some(), "--streams"),
            (self.query_timeout.is_some(), "--query-timeout"),
            (self.validation, "--validation"),
        ])
    }
}
