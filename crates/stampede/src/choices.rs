//! What a plan decided besides the engine's spec and the workload: whose command line it came
//! from ([`Frontend`]), what the run writes and adds ([`Outputs`]: files, checks, the observer,
//! a fault, a sweep, a fleet). Below the families, which read it through their `Ctx`; `plan`
//! fills it.

use crate::files::RunOutputs;

/// Which command line the plan came from: it decides the defaults and whose conventions the
/// output follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frontend {
    Native,
    Pgbench,
    Sysbench,
}

/// What the run writes, and what it adds to the measurement.
pub struct Outputs {
    /// A progress line every this many seconds.
    pub progress_s: Option<f64>,
    /// sysbench's progress lines on standard output instead of stampede's on standard error.
    pub sysbench_progress: bool,
    /// `--json` and `--html`, checked before any I/O (`crate::files`).
    pub files: RunOutputs,
    /// The commit count and the workload's own checks after the run.
    pub checks: bool,
    /// `--check-timeout`: each check's deadline (`families::after`).
    pub check_timeout: std::time::Duration,
    /// Watch the server during the run.
    pub observe: bool,
    /// stampede's defaults this run used, as the options that would have given them.
    pub defaulted: Vec<String>,
    /// pgbench's `--progress-timestamp`: progress lines say the time of day.
    pub progress_timestamp: bool,
    /// `--fault-at`: a fault run (`run::fault`).
    pub fault: Option<FaultSpec>,
    /// `--sweep`: the run repeated over a parameter (`run::sweep`).
    pub sweep: Option<sweep::SweepSpec>,
    /// `--fleet`: this process is one of a fleet (`run::member`).
    pub fleet: Option<FleetPlan>,
    /// `--warmup` of a run that is no sweep: seconds at the start left out of the figures
    /// (`report::warmup`); 0 for none. A sweep's is `sweep.warmup_s`.
    pub warmup_s: f64,
    /// `--prewarm`: the workload's tables as SQL `LIKE` patterns, read into the server's cache
    /// before the run (`run::prewarm`); `None` without it.
    pub prewarm: Option<Vec<&'static str>>,
    /// `--cloudwatch`: CloudWatch's metrics for the run's window, added after it (`cloud`).
    pub cloudwatch: Option<crate::cloud::Request>,
}

/// `--fleet NAME --fleet-size N [--fleet-index I]`, validated.
#[derive(Clone, Debug)]
pub struct FleetPlan {
    pub name: String,
    pub size: u32,
    /// `--fleet-index`, else `JOB_COMPLETION_INDEX`; `None`: assigned on joining.
    pub index: Option<u32>,
    /// `--fleet-timeout` (default 60 s).
    pub timeout: std::time::Duration,
}

impl FleetPlan {
    /// The fleet crate's terms for joining it; a signal cancels the wait.
    pub fn spec(&self) -> fleet::Spec {
        fleet::Spec {
            name: self.name.clone(),
            size: self.size,
            index: self.index,
            join_timeout: self.timeout,
            lead: fleet::DEFAULT_LEAD,
            cancel: crate::interrupt::flag(),
        }
    }
}

/// The fault of a fault run, as asked for (`--fault-at T [--fault-cmd CMD]`; `run::fault`
/// injects it).
#[derive(Clone, Debug)]
pub struct FaultSpec {
    pub at: std::time::Duration,
    pub cmd: Option<String>,
}

/// `--sweep` read (`plan::sweep`).
pub mod sweep {
    /// What a sweep varies.
    #[derive(Clone, Debug, PartialEq)]
    pub enum Param {
        Clients,
        Rate,
        /// The data's size: the family's tables re-initialised at each step (`run::sweep`).
        Scale,
        /// A server setting, by name.
        Setting(String),
        /// CH-benCHmark's analytic clients (`run ch --analytic-clients`), beside its TPC-C
        /// clients: 0 is a step of its own (TPC-C alone).
        AnalyticClients,
    }

    #[derive(Clone, Debug, PartialEq)]
    pub struct SweepSpec {
        pub param: Param,
        /// The values, as given (`set:` values are passed to the server as written).
        pub values: Vec<String>,
        /// A matrix's outer parameter (a second `--sweep`): every value of `param` is run at
        /// each of its values in turn (pgbench-tools' scale-by-clients matrix: the tables loaded
        /// once per scale, then every client count).
        pub outer: Option<Axis>,
        /// Seconds left out at the start of each step.
        pub warmup_s: f64,
    }

    /// One parameter of a matrix and its values.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Axis {
        pub param: Param,
        pub values: Vec<String>,
    }

    impl Param {
        /// The parameter's name in the result: `clients`, `rate`, `scale`, `set:NAME`.
        pub fn name(&self) -> String {
            match self {
                Param::Clients => "clients".into(),
                Param::Rate => "rate".into(),
                Param::Scale => "scale".into(),
                Param::Setting(n) => format!("set:{n}"),
                Param::AnalyticClients => "analytic-clients".into(),
            }
        }
    }

    impl SweepSpec {
        /// The (inner) parameter's name in the result.
        pub fn parameter(&self) -> String {
            self.param.name()
        }

        /// Every parameter swept with its values, the outer first.
        pub fn axes(&self) -> Vec<(&Param, &[String])> {
            let mut v: Vec<(&Param, &[String])> = Vec::new();
            if let Some(o) = &self.outer {
                v.push((&o.param, &o.values));
            }
            v.push((&self.param, &self.values));
            v
        }

        /// Steps in all: the values, times the outer values of a matrix.
        pub fn steps(&self) -> usize {
            self.values.len() * self.outer.as_ref().map_or(1, |o| o.values.len())
        }

        /// The most clients any step runs (for the open-files limit and max_connections), at
        /// most: the largest client count (or `base`, the run's) and the most analytic
        /// clients added to it.
        pub fn max_clients(&self, base: u32) -> u32 {
            let most = |param: Param| {
                (self.axes().into_iter())
                    .filter(|(p, _)| **p == param)
                    .flat_map(|(_, vals)| vals.iter().filter_map(|v| v.parse::<u32>().ok()))
                    .max()
            };
            let analytic = most(Param::AnalyticClients).unwrap_or(0);
            most(Param::Clients)
                .unwrap_or(base)
                .saturating_add(analytic)
        }
    }
}
