//! `stampede run ycsb-X`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

const YCSB: &str = "YCSB (run ycsb-a ... ycsb-f)";

/// `stampede run ycsb-X`'s options.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "ycsb_options")]
pub struct Options {
    /// A YCSB property over the core workload's file, as YCSB takes it: `-p recordcount=N`,
    /// fieldcount, fieldlength, requestdistribution=zipfian|uniform|latest,
    /// insertorder=hashed|ordered, readproportion (and update, insert, scan,
    /// readmodifywrite), minscanlength, maxscanlength, scanlengthdistribution,
    /// zipfianconstant, readallfields, writeallfields, zeropadding, operationcount. `-p` with
    /// a KEY=VALUE is a property; with a number, the port.
    #[arg(long = "property", value_name = "KEY=VALUE", help_heading = YCSB)]
    pub property: Vec<String>,
}

impl Options {
    /// The options given, for a run that is not YCSB's.
    pub fn given(&self) -> Vec<&'static str> {
        if self.property.is_empty() {
            Vec::new()
        } else {
            vec!["-p KEY=VALUE (--property)"]
        }
    }
}
