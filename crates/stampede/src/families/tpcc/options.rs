//! `stampede run tpcc`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

const TPCC: &str = "TPC-C (run tpcc)";

/// `stampede run tpcc`'s options.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "tpcc_options")]
pub struct Options {
    /// Warehouses to run on (default: all the database holds; on the embedded server 1,
    /// loaded first).
    #[arg(short = 'w', long = "warehouses", value_name = "N", help_heading = TPCC)]
    pub warehouses: Option<u32>,
    /// Run by the book (TPC-C clause 5.2.5): keying and think times, 10 clients (terminals)
    /// per warehouse unless -c says otherwise; efficiency against 12.86 tpmC per warehouse.
    #[arg(long = "spec", help_heading = TPCC)]
    pub spec: bool,
}

impl Options {
    /// The options given, for a run that is not TPC-C's.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.warehouses.is_some(), "-w/--warehouses"),
            (self.spec, "--spec"),
        ])
    }
}
