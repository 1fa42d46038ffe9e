//! `stampede run crud`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

const CRUD: &str = "CRUD mix (run crud)";

/// `stampede run crud`'s options; its tables are --tables and --table-size.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "crud_options")]
pub struct Options {
    /// The operations' weights: point, index, range, in, insert, batch-insert, update, delete
    /// [point=40,index=20,range=10,in=10,insert=5,batch-insert=5,update=5,delete=5].
    #[arg(long = "mix", value_name = "OP=W,...", help_heading = CRUD)]
    pub mix: Option<String>,
    /// Rows of each batched operation: IN-list reads, batch inserts, updates, deletes [10].
    #[arg(long = "batch", value_name = "N", help_heading = CRUD)]
    pub batch: Option<u32>,
}

impl Options {
    /// The options given, for a run that is not the CRUD mix's.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.mix.is_some(), "--mix"),
            (self.batch.is_some(), "--batch"),
        ])
    }
}
