//! The pgbench family: the TPC-B builtins and custom scripts in pgbench's language.
//!
//! As in pgbench, a mix that uses a builtin takes `:scale` from `pgbench_branches` (and needs the
//! tables; a `-s` that differs is a warning, "scale option ignored"); a mix of files only takes
//! it from `-s` under `stampede pgbench` (default 1) and does not need the tables: the pre-run
//! vacuum then ignores errors (pgbench's `tryExecuteStatement`). stampede's own runs of files
//! read the scale from `pgbench_branches` too when the tables exist and `-s` is not given, and
//! say so (a script written for pgbench's tables would otherwise see `:scale` = 1 on data of
//! scale 10).
//!
//! Checks: the commit count (a builtin commits once per transaction; a script any number of
//! times, so its commits are counted on the wire), and after builtins the TPC-B invariant (the
//! sums of the balances and of the history's deltas move together), skipped for custom scripts,
//! whose writes are their own.
//!
//! On MySQL and MariaDB (`stampede run`, not the pgbench drop-in, which is a PostgreSQL client
//! as pgbench is): the tables `stampede init tpcb` made there, the builtins with COMMIT for
//! pgbench's END, scripts as written (pgbench's meta-commands, `\gset`/`\aset`, every `-M`
//! mode; pipelines refused before connecting), the pre-run step reduced to emptying the
//! history, and the commit count against `Com_commit`.

pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use engine::{Event, Outcome, RunError};
use report::{Check, CheckStatus, RunConfig};
use sut::{Dialect, Session};
use workload::script::{ScriptConfig, ScriptWorkload};
use workload::tpcb::{Builtin, TpcbWorkload};
use workload::{TxnType, Workload};

use super::loading;
use super::{skipped, Ctx, Family, Finish};
use crate::checks::ledger::{self, Part};
use crate::checks::{self, TpcbCoverage, TpcbSums};
use crate::choices::Frontend;
use crate::console;
use crate::interrupt;
use measure::ledger::{Claim, Kind};
use plan::{PgbenchJob, Vacuum};

/// Default scale for the embedded server when `-s` is not given: 1,000,000 accounts, ~150 MB,
/// loads in a few seconds and is large enough that tpcb-like's updates rarely collide.
pub const EMBEDDED_DEFAULT_SCALE: i64 = 10;

/// The workload a run drives. Builtin-only mixes run the compiled `TpcbWorkload`: the same
/// statements and random draws as the builtins' scripts (tests/scripts.rs compares them), for
/// fewer client instructions (select-only prepared, callgrind, 1 client: 4,157 instructions per
/// transaction compiled, 5,030 through the script interpreter; pgbench 6,148). Any `-f` file or
/// `-D` variable puts the whole mix on the interpreter, as pgbench numbers all scripts together.
enum Driven {
    Tpcb(Arc<TpcbWorkload>),
    Script(Arc<ScriptWorkload>),
}

pub(crate) struct Runner {
    job: PgbenchJob,
    frontend: Frontend,
    scale: i64,
    /// The partitioning pgbench_accounts has (pgbench prints it).
    partitions: Option<(load::tpcb::PartitionMethod, u32)>,
    sums_before: Option<TpcbSums>,
    driven: Option<Driven>,
    types: Vec<TxnType>,
    /// The routing check's verdicts (sharded tables only).
    routing: Vec<report::Routing>,
    /// A scale sweep reloaded the tables since the workload was built (`Family::rescale`).
    rescaled: bool,
}

impl Runner {
    /// The workload's name as the header, the result and `compare` show it: the builtin's
    /// (`select-only`), the scripts' and builtins' names joined with " + " for a mix.
    fn workload_name(&self) -> String {
        let names: Vec<String> = (self.job.builtins.iter())
            .zip(&self.types)
            .map(|(b, t)| match b {
                Some(b) => b.name().to_string(),
                None => t.name.clone(),
            })
            .collect();
        names.join(" + ")
    }

    pub(crate) fn new(job: PgbenchJob, frontend: Frontend) -> Runner {
        Runner {
            job,
            frontend,
            scale: 1,
            partitions: None,
            sums_before: None,
            driven: None,
            types: Vec::new(),
            routing: Vec::new(),
            rescaled: false,
        }
    }

    fn coverage(&self) -> TpcbCoverage {
        let writes = |b: Builtin| {
            (self.job.builtins.iter())
                .zip(&self.job.weights)
                .any(|(x, w)| *x == Some(b) && *w > 0)
        };
        if writes(Builtin::SimpleUpdate) {
            TpcbCoverage::AccountsAndHistory
        } else if writes(Builtin::TpcbLike)
            || writes(Builtin::TpcbLikePipelined)
            || writes(Builtin::TpcbSharded)
        {
            TpcbCoverage::Full
        } else {
            TpcbCoverage::ReadOnly
        }
    }

    /// Build the workload once the scale is known, for a server of `dialect` (the builtins end
    /// in COMMIT on MySQL, where pgbench's END is no statement).
    fn build(&mut self, clients: u32, dialect: Dialect) {
        let mut set = self.job.set.take().expect("the scripts are compiled once");
        set.use_dialect(dialect);
        let driven = if self.job.custom() || !self.job.defines.is_empty() || self.job.debug {
            Driven::Script(Arc::new(set.into_workload(&ScriptConfig {
                scale: self.scale,
                seed: self.job.seed,
                clients,
                defines: self.job.defines.clone(),
                debug: self.job.debug.then(|| "pgbench: debug: ".to_string()),
            })))
        } else {
            self.tpcb(dialect)
        };
        self.types = match &driven {
            Driven::Tpcb(w) => w.txn_types().to_vec(),
            Driven::Script(w) => w.txn_types().to_vec(),
        };
        self.driven = Some(driven);
    }
}

impl Runner {
    /// The builtins' workload at the scale found.
    fn tpcb(&self, dialect: Dialect) -> Driven {
        let builtins = self.job.builtins.iter().flatten().copied();
        Driven::Tpcb(Arc::new(TpcbWorkload::new_in(
            builtins.zip(self.job.weights.iter().copied()).collect(),
            self.scale as u32,
            dialect,
        )))
    }
}

/// The statements of one builtin's transaction, for the ledger's claims (`checks::ledger`):
/// pgbench's scripts (`src/bin/pgbench/pgbench.c`, "builtin_script"), each update and insert
/// one row.
fn builtin_parts(b: Builtin) -> &'static [Part] {
    const ACCOUNT: Part = Part::one_row(Kind::Update, "pgbench_accounts");
    const READ: Part = Part::read("pgbench_accounts");
    const TELLER: Part = Part::one_row(Kind::Update, "pgbench_tellers");
    const BRANCH: Part = Part::one_row(Kind::Update, "pgbench_branches");
    const HISTORY: Part = Part::one_row(Kind::Insert, "pgbench_history");
    match b {
        Builtin::TpcbLike | Builtin::TpcbLikePipelined | Builtin::TpcbSharded => {
            &[ACCOUNT, READ, TELLER, BRANCH, HISTORY]
        }
        Builtin::SimpleUpdate => &[ACCOUNT, READ, HISTORY],
        Builtin::SelectOnly => &[READ],
    }
}

impl Family for Runner {
    fn load_embedded(&mut self, ctx: &Ctx) -> Result<()> {
        // For files only, -s is just the value of :scale (pgbench): load the default size.
        let scale = match self.job.uses_builtin() {
            true => self.job.scale.unwrap_or(EMBEDDED_DEFAULT_SCALE),
            false => EMBEDDED_DEFAULT_SCALE,
        };
        loading::load_tpcb_defaults(ctx.conn(), scale, ctx.rt)
    }

    fn before(&mut self, ctx: &Ctx) -> Result<()> {
        let dbname = ctx.conn().database().to_string();
        let custom_only = !self.job.uses_builtin();
        let pgbench = self.frontend == Frontend::Pgbench;
        let mut routing = Vec::new();
        let (scale, partitions, sums) = ctx.with_session(async |s| {
            // pgbench reads the count only when a builtin is used; stampede's runs of files
            // read it too, when the tables are there.
            let (found, missing) = if pgbench {
                match custom_only {
                    true => (None, None),
                    false => (count_branches(s, &dbname).await?, None),
                }
            } else {
                match load::tpcb::inspect(s).await? {
                    load::tpcb::TpcbTables::Present { scale, .. } => (Some(scale), None),
                    load::tpcb::TpcbTables::Missing(t) => (None, Some(t)),
                }
            };
            let scale = match (custom_only, found, self.job.scale) {
                // pgbench: files only take -s (default 1) and need no tables.
                (true, _, Some(s)) => s,
                (true, None, None) => 1,
                (true, Some(_), None) if pgbench => 1,
                (true, Some(found), None) => {
                    console::note(&format!(
                        ":scale = {found}, the row count of pgbench_branches (-s N sets it)"
                    ));
                    found
                }
                (false, None, _) => {
                    return Err(missing_tables(
                        missing.unwrap_or("pgbench_branches"),
                        &dbname,
                    ));
                }
                (false, Some(found), given) => {
                    // pgbench warns whenever -s was given; stampede when it differs.
                    if given.is_some_and(|g| pgbench || g != found) {
                        console::warning(&format!(
                            "scale option ignored, using count from pgbench_branches table \
                             ({found})"
                        ));
                    }
                    found
                }
            };
            let partitions = load::tpcb::partitioning(s).await.unwrap_or(None);
            match self.job.vacuum {
                Vacuum::None => {}
                v if s.dialect() == Dialect::MySql => {
                    // InnoDB needs no vacuum: what stays of pgbench's pre-run step is the
                    // emptied history (and with -v, fresh statistics for the accounts).
                    eprint!("truncating pgbench_history...");
                    mysql_before_run(s, custom_only, v == Vacuum::All).await?;
                    eprintln!("end.");
                }
                v => {
                    eprint!("starting vacuum...");
                    if custom_only {
                        vacuum_tolerant(s).await;
                    } else {
                        vacuum_before_run(s).await?;
                    }
                    eprintln!("end.");
                    if v == Vacuum::All {
                        eprint!("starting vacuum pgbench_accounts...");
                        vacuum_accounts(s, custom_only).await?;
                        eprintln!("end.");
                    }
                }
            }
            // A custom script's writes are its own: the invariant is skipped with any in the mix.
            let sums = match ctx.out.checks && !self.job.custom() {
                true => Some(checks::tpcb_sums(s).await?),
                false => None,
            };
            // On this session: another one just before the commit baseline would race its
            // statistics.
            if let Some(set) = &self.job.set {
                routing = crate::routing::before_run(s, set, self.job.require_single_shard).await?;
            }
            Ok((scale, partitions, sums))
        })?;
        self.scale = scale;
        self.partitions = partitions;
        self.sums_before = sums;
        // A sweep prepares each step (`run::sweep`): the workload (and the routing check made
        // from its scripts) is the first step's; a script's :default_seed, drawn from the
        // clients' streams, stays the first step's too.
        if self.driven.is_none() {
            self.routing = routing;
            self.build(ctx.spec.clients, ctx.conn().dialect());
        } else if self.rescaled {
            // A scale sweep's step reloaded the tables: the builtins draw from the new scale.
            self.driven = Some(self.tpcb(ctx.conn().dialect()));
        }
        self.rescaled = false;
        Ok(())
    }

    fn rescale_refusal(&self) -> Option<String> {
        let scripted = self.job.custom() || !self.job.defines.is_empty() || self.job.debug;
        (scripted || !self.job.uses_builtin()).then(|| {
            "a scale sweep runs pgbench's builtins only (a script's tables are its own)".into()
        })
    }

    /// `stampede init tpcb -s SCALE` with its defaults (and the partitioning the previous
    /// step found): pgbench's four tables dropped and loaded again (`load::tpcb`, which drops
    /// exactly those, as pgbench -i does).
    fn rescale(&mut self, ctx: &Ctx, scale: u32) -> Result<BTreeMap<String, u64>> {
        if loading::load_tpcb_at(ctx.conn(), i64::from(scale), self.partitions, true, ctx.rt)? != 0
        {
            return Err(crate::console::Failure::interrupted(
                "interrupted while re-initialising the tables for the next step",
            ));
        }
        self.rescaled = true;
        ctx.with_session(async |s| {
            let mut rows = BTreeMap::new();
            for t in load::tpcb::TABLES {
                let r = s.simple_query(&format!("SELECT count(*) FROM {t}")).await?;
                let n = (r.first().and_then(|r| r.first().cloned().flatten()))
                    .and_then(|v| v.parse().ok())
                    .with_context(|| format!("counting the rows of {t}"))?;
                rows.insert(t.to_string(), n);
            }
            Ok(rows)
        })
    }

    fn describe(&self) -> String {
        format!("{}, scale {}", self.workload_name(), self.scale)
    }

    fn routing(&self) -> Vec<report::Routing> {
        self.routing.clone()
    }

    fn run(&mut self, ctx: &Ctx, on_event: &mut dyn FnMut(Event<'_>)) -> Result<Outcome, RunError> {
        let conn = ctx.conn();
        match self.driven.as_ref().expect("built before the run") {
            Driven::Tpcb(w) => engine::run(ctx.spec, w.clone(), conn, interrupt::flag(), on_event),
            Driven::Script(w) => {
                engine::run(ctx.spec, w.clone(), conn, interrupt::flag(), on_event)
            }
        }
    }

    fn mysql_refusal(&self) -> Option<(String, String)> {
        if self.frontend == Frontend::Pgbench {
            return Some((
                "stampede pgbench is pgbench's drop-in, a PostgreSQL client like pgbench itself, \
                 and the target is a MySQL server"
                    .into(),
                "on MySQL and MariaDB run pgbench's workloads with `stampede run` \
                 (`stampede init tpcb -d mysql://...`, then `stampede run tpcb-like -d \
                 mysql://...`, or -b/-f for scripts)"
                    .into(),
            ));
        }
        let set = self.job.set.as_ref()?;
        let (script, builtin) =
            (set.scripts().zip(set.builtins())).find(|(s, _)| s.uses_pipeline())?;
        let what = match builtin {
            Some(b) => format!("-b {b} pipelines its statements"),
            None => format!("script \"{}\" uses \\startpipeline", script.desc),
        };
        Some((
            format!(
                "{what}: pipelines are PostgreSQL's (the MySQL protocol has no pipeline mode), and \
                 the target is a MySQL server"
            ),
            match builtin {
                Some(_) => "run tpcb-like instead".into(),
                None => "leave \\startpipeline, \\syncpipeline and \\endpipeline out of the \
                         script on MySQL"
                    .into(),
            },
        ))
    }

    /// The builtins' statements times their counts; a script's statements are known only to
    /// its sessions' tally (no claims).
    fn ledger_claims(&self, outcome: &Outcome, _fin: &Finish) -> Vec<Claim> {
        if !matches!(self.driven, Some(Driven::Tpcb(_))) {
            return Vec::new();
        }
        let claims = (self.job.builtins.iter().enumerate())
            .filter_map(|(i, b)| b.map(|b| (i, b)))
            .flat_map(|(i, b)| {
                let (committed, attempts) = ledger::counts(outcome, i);
                ledger::claims_of(committed, attempts, b.name(), builtin_parts(b))
            })
            .collect();
        ledger::merged(claims)
    }

    fn counted_commits(&self, outcome: &Outcome, _fin: &Finish) -> u64 {
        // A builtin commits once per committed transaction; a custom script any number of
        // times: count those on the wire.
        if self.job.custom() {
            outcome.server_commits - outcome.setup_commits
        } else {
            outcome.total.total().committed()
        }
    }

    /// On MySQL `Com_commit` counts COMMIT statements: one per committed tpcb-like or
    /// simple-update transaction (their END is a COMMIT there), none for select-only (one
    /// autocommitted SELECT). A custom script commits as it says: its COMMITs are counted on the
    /// wire, and with none (autocommitted statements only) the count cannot be checked.
    fn mysql_commits(&self, outcome: &Outcome, _fin: &Finish) -> Option<u64> {
        if self.job.custom() {
            let sent: u64 = outcome.endpoint_commits.iter().sum();
            return (sent > 0).then_some(sent);
        }
        let committing =
            |i: usize| self.job.builtins[i].is_some_and(|b| b.commits()) && self.job.weights[i] > 0;
        (0..self.job.builtins.len()).any(committing).then(|| {
            (0..self.job.builtins.len())
                .filter(|&i| committing(i))
                .map(|i| outcome.total.txns[i].committed())
                .sum()
        })
    }

    fn check_names(&self) -> &'static [&'static str] {
        &["TPC-B invariant"]
    }

    fn checks(&mut self, ctx: &Ctx, outcome: &Outcome) -> Result<Vec<Check>> {
        let Some(before) = self.sums_before else {
            return Ok(vec![skipped(
                self.check_names()[0],
                if self.job.custom() {
                    "custom scripts"
                } else {
                    "--no-check"
                },
            )]);
        };
        let after = ctx.with_session(async |s| checks::tpcb_sums(s).await)?;
        let writers: u64 = (self.job.builtins.iter().enumerate())
            .filter(|(_, b)| b.is_some_and(|b| b.inserts_history()))
            .map(|(i, _)| outcome.total.txns[i].committed())
            .sum();
        let (ok, detail) = checks::check_tpcb(before, after, self.coverage(), writers);
        Ok(vec![Check {
            name: "TPC-B invariant".into(),
            status: if ok {
                CheckStatus::Passed
            } else {
                CheckStatus::Failed
            },
            detail,
        }])
    }

    fn config(&self, ctx: &Ctx) -> RunConfig {
        RunConfig {
            query_mode: self.job.protocol.name().into(),
            random_seed: self.job.seed,
            scale: self.scale as u32,
            partition_method: self.partitions.map(|p| p.0.sql().to_string()),
            partitions: self.partitions.as_ref().map(|p| p.1),
            failures_detailed: self.job.failures_detailed,
            ..super::base_config(
                ctx,
                self.workload_name(),
                &self.types,
                self.job.weights.iter().copied(),
            )
        }
    }
}

/// stampede's message when the tables are not there.
fn missing_tables(table: &str, dbname: &str) -> anyhow::Error {
    crate::console::Failure::setup(
        format!("table {table} does not exist in database {dbname:?}"),
        "load it first with `stampede init tpcb -s N` (same target options)",
    )
}

/// pgbench's `GetTableInfo`: `select count(*) from pgbench_branches`, and its messages when
/// that fails (the server's error as libpq renders it, then the hint to initialise).
async fn count_branches(s: &mut Session, dbname: &str) -> Result<Option<i64>> {
    match s
        .simple_query("select count(*) from pgbench_branches")
        .await
    {
        Ok(rows) => Ok(rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())),
        Err(sut::Error::Db(e)) => {
            let hint = match e.code.as_str() {
                "42P01" => format!(
                    "Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\"."
                ),
                _ => String::new(),
            };
            Err(crate::console::Failure::setup(
                format!("could not count number of branches: {e}"),
                hint,
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// pgbench's pre-run vacuum (pgbench.c `doConnect` + "starting vacuum"): vacuum the small
/// tables and empty the history.
async fn vacuum_before_run(s: &mut Session) -> Result<()> {
    for sql in [
        "vacuum pgbench_branches",
        "vacuum pgbench_tellers",
        "truncate pgbench_history",
    ] {
        s.simple_query(sql)
            .await
            .with_context(|| format!("pre-run vacuum: `{sql}` (skip it with -n)"))?;
    }
    Ok(())
}

/// `-v`: pgbench's "starting vacuum pgbench_accounts".
async fn vacuum_accounts(s: &mut Session, tolerant: bool) -> Result<()> {
    let r = s.simple_query("vacuum analyze pgbench_accounts").await;
    match r {
        Err(e) if tolerant => {
            eprintln!("\n{e}\n(ignoring this error and continuing anyway)");
            Ok(())
        }
        r => r
            .map(|_| ())
            .context("pre-run vacuum: `vacuum analyze pgbench_accounts` (skip it with -n)"),
    }
}

/// pgbench's pre-run step on MySQL: the history emptied (InnoDB has no vacuum); with `-v`, the
/// accounts' statistics refreshed. For custom scripts an error (no pgbench tables) is printed
/// and ignored, as pgbench's `tryExecuteStatement` does.
async fn mysql_before_run(s: &mut Session, tolerant: bool, all: bool) -> Result<()> {
    let mut sqls = vec!["truncate table pgbench_history"];
    if all {
        sqls.push("analyze table pgbench_accounts");
    }
    for sql in sqls {
        match s.simple_query(sql).await {
            Ok(_) => {}
            Err(e) if tolerant => eprintln!("\n{e}\n(ignoring this error and continuing anyway)"),
            Err(e) => {
                return Err(e).with_context(|| format!("pre-run step: `{sql}` (skip it with -n)"))
            }
        }
    }
    Ok(())
}

/// The pre-run vacuum for custom scripts, as pgbench's `tryExecuteStatement`: an error (no
/// pgbench tables) is printed and ignored.
async fn vacuum_tolerant(s: &mut Session) {
    for sql in [
        "vacuum pgbench_branches",
        "vacuum pgbench_tellers",
        "truncate pgbench_history",
    ] {
        if let Err(e) = s.simple_query(sql).await {
            eprintln!("\n{e}\n(ignoring this error and continuing anyway)");
        }
    }
}
