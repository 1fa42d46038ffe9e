//! The workload families: what the run asks of each ([`Family`], [`Ctx`]) and one folder per
//! family that holds all of it: its transactions, its tables and loader, its runner (checks,
//! ledger claims, configuration), its section of the result and how that renders, its tests.
//!
//! The house above (`run`, `plan`, `commands`) knows a family through [`Family`], its plan
//! step ([`Planner`]) and the one registry of those (`workloads::Family::planner`); `report` knows a
//! family's section only by its key and its [`report::section::View`] ([`VIEWS`]). Every
//! family has its folder, with its options (`options.rs`, flattened into [`RunArgs`]), its plan
//! step (`plan.rs`) and its runner (`mod.rs`): TPC-B and pgbench scripts (`pgbench`), sysbench
//! OLTP (`sysbench`), TPC-C (`tpcc`), YCSB (`ycsb`), the insert benchmark (`iibench`), the CRUD
//! mix (`crud`), the connection storm (`storm`), the failover probe (`probe`), the cache
//! curve (`cache_curve`) and the replay of a captured workload (`replay`). YCSB, iibench, CRUD, the storm and the cache curve hold all of
//! theirs; the others' transactions and loaders are still in the `workload` and `load` crates
//! (TPC-C's section is in its folder), and sysbench's section is a typed field of `report` (its
//! text voice reads it). What every plan step shares is `planning`.
//!
//! Layers (ARCHITECTURE.md): a family may use `checks`, `targeting`, `choices` and what lies
//! below them, never `run`, `plan` or `commands`.

pub(crate) mod after;
pub(crate) mod cache_curve;
pub(crate) mod ch;
pub(crate) mod crud;
pub(crate) mod iibench;
pub(crate) mod loading;
mod options;
pub mod pgbench;
pub(crate) mod planning;
pub(crate) mod probe;
pub(crate) mod replay;
pub(crate) mod storm;
pub mod sysbench;
pub mod tpcc;
pub(crate) mod tpch;
pub mod ycsb;

pub(crate) use options::script_order;
pub use options::{FleetArgs, IoArg, Protocol, ReadFromArg, RunArgs, ScriptArg, SpreadArg};

use std::collections::BTreeMap;

use anyhow::Result;
use engine::{Event, Outcome, RunError, RunSpec};
use report::{Check, CheckStatus, RunConfig, SysbenchSection};
use sut::Session;

use crate::checks::{self, CommitCheck};
use crate::choices::{Frontend, Outputs};
use crate::targeting::TargetArgs;
use crate::{console, interrupt, targeting};

/// The families' views of their sections, for every rendering of a result
/// (`report::section::install`, called once by `main`).
pub(crate) static VIEWS: &[&dyn report::section::View] = &[
    &tpcc::section::VIEW,
    &iibench::section::VIEW,
    &storm::section::VIEW,
    &cache_curve::section::VIEW,
    &loading::section::VIEW,
    &crud::section::VIEW,
    &replay::section::VIEW,
    &tpch::section::VIEW,
    &ch::section::VIEW,
];

/// Install [`VIEWS`] (idempotent).
pub(crate) fn install_views() {
    report::section::install(VIEWS);
}

/// What a fault run's audit found in the probe's table (`probe`).
pub(crate) struct Audited {
    /// The host it read from, as `host:port`.
    pub host: String,
    /// Each sequence number present, with how many rows carry it.
    pub rows: Vec<(u64, u64)>,
}

pub(crate) fn skipped(name: &str, why: &str) -> Check {
    Check {
        name: name.into(),
        status: CheckStatus::Skipped,
        detail: format!("skipped ({why})"),
    }
}

/// Every one of `names` skipped for the same reason.
pub(crate) fn skipped_all(names: &[&str], why: &str) -> Vec<Check> {
    names.iter().map(|n| skipped(n, why)).collect()
}

/// What a family's steps may read: the run's decisions and where it runs.
pub(crate) struct Ctx<'a> {
    pub frontend: Frontend,
    pub spec: &'a engine::RunSpec,
    pub out: &'a Outputs,
    pub target: &'a targeting::Target,
    pub rt: &'a tokio::runtime::Runtime,
}

impl Ctx<'_> {
    pub fn conn(&self) -> &sut::Target {
        &self.target.conn
    }

    /// stampede started the server (PostgreSQL or MariaDB): the family loads its data.
    pub fn embedded(&self) -> bool {
        self.target.embedded.is_some() || self.target.embedded_mysql.is_some()
    }

    /// Drive a future on the run's runtime. Before the engine starts, a signal abandons it
    /// (`interrupt::or_interrupted`: a server that accepts the connection and never answers
    /// does not hold Ctrl-C up); within a check after the run, it runs under that check's
    /// deadline and interrupt (`after`).
    pub fn block_on<T>(&self, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        after::block_on(self.rt, interrupt::or_interrupted(f))
    }

    /// One session for a step, closed afterwards; its notices are printed.
    pub fn with_session<T>(&self, f: impl AsyncFnOnce(&mut Session) -> Result<T>) -> Result<T> {
        self.block_on(async {
            let mut s = Session::connect(self.conn()).await?;
            let r = f(&mut s).await;
            for n in s.take_notices() {
                console::server_notice(&n);
            }
            s.close().await;
            r
        })
    }
}

/// What happened after the engine returned that the commit count must know (sysbench
/// bulk_insert's rows still buffered when the run ended, sent on a session of their own).
#[derive(Default)]
pub(crate) struct Finish {
    pub commits: u64,
    pub connections: u64,
    /// What the finishing session sent (the workload's own statements), for the ledger.
    pub tally: measure::ledger::Tally,
}

/// What differs between families of workloads (module notes).
pub(crate) trait Family {
    /// Load the workload's tables on a new embedded server.
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()>;
    /// Before the run: find the data and its size, pre-run maintenance, the baselines of the
    /// workload's own checks (when `ctx.out.checks`).
    fn before(&mut self, ctx: &Ctx) -> Result<()>;
    /// The workload in the header's words (`tpcb-like, scale 10`).
    fn describe(&self) -> String;
    /// The routing check's verdicts, made in `before` (sharded tables only).
    fn routing(&self) -> Vec<report::Routing> {
        Vec::new()
    }
    /// sysbench's section, for its progress lines and summary; `None` for other families.
    fn sysbench_section(&self) -> Option<SysbenchSection> {
        None
    }
    /// The measured run.
    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError>;
    /// After the engine, even after an error or Ctrl-C: what the workload still must send.
    fn finish(&mut self, _ctx: &Ctx) -> Result<Finish> {
        Ok(Finish::default())
    }
    /// The transactions the server must have committed for this outcome (not counting setup).
    fn counted_commits(&self, outcome: &Outcome, fin: &Finish) -> u64;
    /// What of this run cannot be done on a MySQL target, refused before connecting: the
    /// cause and what to do instead; `None` when it runs there.
    fn mysql_refusal(&self) -> Option<(String, String)> {
        None
    }
    /// On MySQL: the COMMIT statements the counted transactions sent (what `Com_commit`
    /// counts), or `None` when they are autocommitted statements, which it does not count.
    fn mysql_commits(&self, outcome: &Outcome, fin: &Finish) -> Option<u64> {
        Some(self.counted_commits(outcome, fin))
    }
    /// The verdict of an exact commit count (sysbench's runs call a surplus during autovacuum
    /// inconclusive).
    fn commit_status(
        &self,
        _ctx: &Ctx,
        c: CommitCheck,
        maintenance: i64,
    ) -> Result<(CheckStatus, String)> {
        Ok(checks::commit_status(&c, maintenance))
    }
    /// The workload's own checks after the run.
    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>>;
    /// The names of the checks `checks` makes, so that when it cannot finish (the server went
    /// away after the run) each is named as not verified. Empty (the default): one line,
    /// "workload checks".
    fn check_names(&self) -> &'static [&'static str] {
        &[]
    }
    /// What the workload's own counters say its transactions did, table by table, for the
    /// statement ledger (`checks::ledger`): built from its transaction types' statements and
    /// counts. None (the default) leaves the ledger to the sessions' tally and the server.
    fn ledger_claims(&self, _outcome: &Outcome, _fin: &Finish) -> Vec<measure::ledger::Claim> {
        Vec::new()
    }
    /// The result's configuration.
    fn config(&self, ctx: &Ctx) -> RunConfig;
    /// sysbench's section of the result, measured.
    fn sysbench_result(&self, _outcome: &Outcome, _fin: &Finish) -> Option<SysbenchSection> {
        None
    }
    /// A fault run's audit: the rows the probe's table holds after the run (`probe`); `None`
    /// for a family whose writes are not audited.
    fn audit(&mut self, _ctx: &Ctx) -> Option<Result<Audited>> {
        None
    }
    /// The family's own section of the result (`report::section`), from the assembled
    /// result: its key and value; `None` for a family whose numbers are the generic ones.
    fn section(&self, _result: &report::RunResult) -> Option<(&'static str, serde_json::Value)> {
        None
    }
    /// Connections the run opens besides its clients' (the storm's idle ones): the open-file
    /// limit and the embedded server's `max_connections` must allow them too.
    fn connections_besides_clients(&self) -> u64 {
        0
    }
    /// Why this run cannot be a sweep over scale (`--sweep scale=...`), whose every step
    /// re-initialises the family's tables as `stampede init` makes them; `None` when it can
    /// ([`Family::rescale`]). Asked when planning, before anything connects.
    fn rescale_refusal(&self) -> Option<String> {
        Some(
            "this workload's tables are not re-initialised per step (a scale sweep runs the \
             TPC-B builtins)"
                .into(),
        )
    }
    /// Before a scale sweep's step: drop and load the family's tables at `scale`, as `stampede
    /// init` does (only tables of the family's own names, which init would drop too), and say
    /// each table's rows as the server counts them. Only called when
    /// [`Family::rescale_refusal`] is `None`.
    fn rescale(&mut self, _ctx: &Ctx, scale: u32) -> Result<BTreeMap<String, u64>> {
        anyhow::bail!("cannot re-initialise this workload's tables at scale {scale}")
    }
    /// A sweep step's value of a parameter the family reads its own way, set in the step's
    /// engine spec: true when it did (CH-benCHmark's clients are TPC-C's `-c` and its
    /// analytic clients, both engine clients); false (the default) leaves the value to the
    /// sweep (`run::sweep`).
    fn shape_step(
        &mut self,
        _param: &crate::choices::sweep::Param,
        _value: &str,
        _spec: &mut RunSpec,
    ) -> Result<bool> {
        Ok(false)
    }
    /// Why this run cannot be swept over `param`; `None` when it can. Asked when planning,
    /// before anything connects.
    fn sweep_refusal(&self, param: &crate::choices::sweep::Param) -> Option<String> {
        use crate::choices::sweep::Param;
        match param {
            Param::Scale => self.rescale_refusal(),
            Param::AnalyticClients => {
                Some("only `run ch` has analytic clients (--analytic-clients)".into())
            }
            Param::Clients | Param::Rate | Param::Setting(_) => None,
        }
    }
}

/// How a planned run is carried out: by the engine with the family's runner, or by a
/// sequence of the family's own (the cache curve: many short measurements, not one run).
pub(crate) enum Job {
    Engine(Box<dyn Family>),
    Own(Box<dyn Sequence>),
}

/// A family that is not one engine run: it opens the target and writes its outputs itself.
pub(crate) trait Sequence {
    fn execute(self: Box<Self>, target: TargetArgs, out: Outputs) -> Result<i32>;
}

/// What the plan tells a family's plan step besides the options.
pub(crate) struct Asked {
    /// The workload named on the command line (`tpcb-like`, `oltp_read_write`, `ycsb-a`);
    /// `None` for a pgbench run given by its options (`-b`, `-f`, `-S`) alone.
    pub name: Option<&'static str>,
    /// The workload's name as the command line gave it (`tpch-q5` for the entry `tpch-qN`).
    pub given: Option<String>,
    /// Whose command line it was: the options mean what that tool means by them.
    pub frontend: Frontend,
}

/// A family's plan step (`<family>/plan.rs`), as the plan calls it for the family a command
/// line names (the registry: `workloads::Family::planner`). Everything here happens before any
/// I/O; a wrong option is a usage error.
pub(crate) trait Planner {
    /// Before stampede's own defaults (`-c 8 -T 10`) fill what was not given: a family that
    /// reads `-c` or `-T` its own way rewrites them here (the storm's `-c` is its idle
    /// connections, TPC-C's clients default from its warehouses).
    fn before_defaults(&mut self, _a: &mut RunArgs) -> Result<()> {
        Ok(())
    }
    /// Whether stampede's own defaults apply (the cache curve has its own).
    fn takes_run_defaults(&self) -> bool {
        true
    }
    /// The family's job and the engine's spec.
    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)>;
}

/// The part of a result's configuration every family fills the same way, from the engine's
/// spec and the outputs: `workload`, its transaction types (with their weights) and the rest.
/// A family sets what differs afterwards (pgbench's scale and partitions, say).
pub(crate) fn base_config(
    ctx: &Ctx,
    workload: String,
    types: &[workload::TxnType],
    weights: impl IntoIterator<Item = u32>,
) -> RunConfig {
    let spec = ctx.spec;
    RunConfig {
        workload,
        txn_types: (types.iter())
            .zip(weights)
            .map(|(t, weight)| report::TxnTypeConfig {
                name: t.name.clone(),
                weight,
                statements: t.statements.clone(),
            })
            .collect(),
        clients: spec.clients,
        threads: spec.threads,
        duration_s: match spec.stop {
            engine::Stop::Duration(d) => Some(d.as_secs()),
            engine::Stop::Transactions(_) => None,
        },
        transactions_per_client: match spec.stop {
            engine::Stop::UNTIL_DONE => None,
            engine::Stop::Transactions(n) => Some(n),
            engine::Stop::Duration(_) => None,
        },
        rate_tps: spec.rate_tps,
        latency_limit_ms: spec.latency_limit.map(|d| d.as_secs_f64() * 1000.0),
        query_mode: format!("{:?}", spec.mode).to_lowercase(),
        max_tries: spec.max_tries,
        connect_per_txn: spec.connect_per_txn,
        progress_s: ctx.out.progress_s,
        random_seed: spec.seed,
        per_statement: spec.per_statement,
        ..Default::default()
    }
}

/// The server sampler for a run (and for the cache curve's sequence); a sampler that cannot
/// start is a warning (the run goes on without server metrics), never a failure. PostgreSQL and
/// MySQL/MariaDB targets alike (a MySQL target with several endpoints is observed on its first,
/// and on every node for Galera's wsrep status).
pub(crate) fn start_observer(conn: &sut::Target) -> Option<observe::SamplerHandle> {
    match observe::Sampler::start(conn, &observe::Options::default()) {
        Ok(h) => Some(h),
        Err(e) => {
            crate::console::warning(&format!(
                "{}; running without server metrics",
                sut::conninfo::redact(&format!("{e:#}"))
            ));
            None
        }
    }
}
