//! `stampede run connection-storm`'s own options (flattened into the run's, `families::RunArgs`).

use clap::Args;

use crate::families::options::SWEEPS;

#[derive(Args, Debug, Default, Clone)]
#[group(id = "storm_options")]
pub struct Options {
    /// connection-storm: idle connections opened per second, up to -c [500].
    #[arg(long = "connect-rate", value_name = "N", help_heading = SWEEPS)]
    pub connect_rate: Option<f64>,
    /// connection-storm: clients running select-only while the idle connections open [2].
    #[arg(long = "busy-clients", value_name = "N", help_heading = SWEEPS)]
    pub busy_clients: Option<u32>,
}

impl Options {
    /// The options given, for a run that is not a connection storm.
    pub fn given(&self) -> Vec<&'static str> {
        crate::families::options::given(&[
            (self.connect_rate.is_some(), "--connect-rate"),
            (self.busy_clients.is_some(), "--busy-clients"),
        ])
    }
}
