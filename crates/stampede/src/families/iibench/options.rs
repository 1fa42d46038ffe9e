//! `stampede run iibench`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

const IIBENCH: &str = "Insert benchmark (run iibench)";

/// `stampede run iibench`'s options (iibench.py's names in brackets).
#[derive(Args, Debug, Default, Clone)]
#[group(id = "iibench_options")]
pub struct Options {
    /// Rows per INSERT, each its own commit [--rows_per_commit; 1000]. With -R, the rate is in
    /// these inserts per second (rows/s = rate x rows per commit).
    #[arg(long = "rows-per-commit", value_name = "N", help_heading = IIBENCH)]
    pub rows_per_commit: Option<u32>,
    /// Clients that run the original's queries over the secondary indexes, unpaced, besides
    /// the -c inserting clients [--query_threads; 0].
    #[arg(long = "query-clients", value_name = "N", help_heading = IIBENCH)]
    pub query_clients: Option<u32>,
    /// Rows each query fetches [--rows_per_query; 10].
    #[arg(long = "rows-per-query", value_name = "N", help_heading = IIBENCH)]
    pub rows_per_query: Option<u32>,
}

impl Options {
    /// The options given, for a run that is not iibench's.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.rows_per_commit.is_some(), "--rows-per-commit"),
            (self.query_clients.is_some(), "--query-clients"),
            (self.rows_per_query.is_some(), "--rows-per-query"),
        ])
    }
}
