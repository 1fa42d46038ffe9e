//! `stampede run cache-curve`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

const CACHE_CURVE: &str = "Cache curve (run cache-curve)";

/// `stampede run cache-curve`'s options (`-c` and `-T` are the point reads' clients and seconds
/// per size).
#[derive(Args, Debug, Default, Clone)]
#[group(id = "cache_curve_options")]
pub struct Options {
    /// Table sizes to measure, smallest first (`8MB,16MB,32MB`); default: an eighth of the
    /// server's cache to four times it.
    #[arg(long = "sizes", value_name = "SIZE,...", help_heading = CACHE_CURVE)]
    pub sizes: Option<String>,
    /// Measured scans per size, after one warm-up scan [3].
    #[arg(long = "scans", value_name = "NUM", help_heading = CACHE_CURVE)]
    pub scans: Option<u32>,
}

impl Options {
    /// The options given, for a run that is not a cache curve.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.sizes.is_some(), "--sizes"),
            (self.scans.is_some(), "--scans"),
        ])
    }
}
