//! `stampede run ch`'s own options (flattened into the run's, `families::RunArgs`). TPC-C's
//! (`-w`, `--spec`) and `--query-timeout` (TPC-H's) apply to it too.

use clap::Args;

const CH: &str = "CH-benCHmark (run ch)";

/// `stampede run ch`'s options.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "ch_options")]
pub struct Options {
    /// Clients sending CH-benCHmark's 22 analytic queries, one after the other, beside the -c
    /// TPC-C clients [1]; 0 runs TPC-C alone on the same data (a sweep's baseline step).
    #[arg(long = "analytic-clients", value_name = "N", help_heading = CH)]
    pub analytic_clients: Option<u32>,
}

impl Options {
    /// The options given, for a run that is not CH-benCHmark's.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[(self.analytic_clients.is_some(), "--analytic-clients")])
    }
}
