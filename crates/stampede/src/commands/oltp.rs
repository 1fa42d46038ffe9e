//! sysbench's OLTP workloads: `stampede init oltp` and `stampede run oltp_<name>`.
//!
//! `init oltp` makes sysbench's `sbtestN` tables (`load::oltp`), with `k` drawn from sysbench's
//! default distribution (`--rand-type=special`, `workload::oltp::Dist`), as
//! `sysbench oltp_common prepare` draws it.
//!
//! ## `stampede run oltp_read_write [options] [-d DBNAME]`
//! `run`'s positional is pgbench's DBNAME; a positional that is a sysbench test name
//! (`oltp_read_write`, `oltp_read_only`, `oltp_write_only`, `oltp_point_select`,
//! `oltp_update_index`, `oltp_update_non_index`, `oltp_insert`, `oltp_delete`, `bulk_insert`;
//! `.lua` allowed) names the workload instead, and the database is then given with `-d`. sysbench's
//! options ([`SysbenchArgs`]: `--tables`, `--table-size`, the mix, `--rand-*`, `--events`,
//! `--warmup-time`, `--percentile`) are only accepted with such a workload. sysbench's other run
//! options map onto stampede's: `--threads` is `-c`, `--time` is `-T`, `--rate` is `-R` (0: none),
//! `--report-interval` is `-P`.
//!
//! Mappings that are not one to one:
//! - `--events=N` is sysbench's total over all threads; the engine stops each client after its
//!   own count, so each client runs `ceil(N / clients)` (the total is printed when it differs).
//!   With `--events`, `--time` must be 0 or absent (sysbench stops at whichever comes first).
//!   Neither given: `--time=10`, sysbench's default.
//! - `--warmup-time=N`: the run lasts `--time` seconds; the first N of them are left out of the
//!   sysbench summary (computed from the per-second intervals after the warm-up), while stampede's
//!   pgbench-style summary covers the whole run. Both are printed, and saved in the JSON.
//! - errors sysbench ignores (40001, 40P01, 23505) are retried without limit under `--time`
//!   (1,000,000 tries under `--events`), as sysbench restarts the event; `--max-tries N` other
//!   than 1 caps them. They are counted as retries, and printed as sysbench's "ignored errors".
//! - statements are prepared (sysbench's `--db-ps-mode=auto`); `-M extended` is honoured, `-M
//!   simple` (the default) is not.
//!
//! Checks after the run: the commit count (as for every run; a small surplus of server commits
//! while autovacuum/autoanalyze ran is inconclusive, not failed: [`commit_status`]) and the row
//! counts of the tables (`load::oltp::row_counts` before and after): unchanged, except
//! `oltp_insert` (+1 per transaction), `oltp_delete` (-1 per transaction at most), and
//! delete+insert pairs on tables that missed ids (+1 per pair at most).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use engine::{Event as EngineEvent, RunSpec, Stop};
use load::oltp::{InitOptions, KeyDraw};
use load::{Event, LoadError};
use report::{Check, CheckStatus, RunResult};
use target::{ConnConfig, QueryMode, Session};
use workload::oltp::{Dist, OltpWorkload, Options, RandType, Test};
use workload::Workload;

use crate::checks;
use crate::cli::{InitArgs, Protocol, RunArgs};
use crate::commands::run::{
    assemble_result, emit_result, parse_seed, short_version, skipped, ResultParts,
};
use crate::commands::setup_runtime;
use crate::{environment, interrupt, targeting};

/// `k` from a sysbench distribution, on the loader's per-row uniform stream.
struct DistKey(Dist);

impl KeyDraw for DistKey {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64 {
        self.0.draw_with(uniform, 1, table_size.max(1) as u32) as i64
    }
}

fn options(a: &InitArgs) -> Result<InitOptions> {
    if a.tables == 0 {
        bail!("--tables must be at least 1");
    }
    if a.table_size > i32::MAX as u64 {
        bail!("--table-size must fit sysbench's INTEGER id (at most 2147483647)");
    }
    if a.jobs == Some(0) {
        bail!("-j/--jobs must be at least 1");
    }
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let opts = InitOptions {
        tables: a.tables,
        table_size: a.table_size,
        no_vacuum: a.no_vacuum,
        key: Arc::new(DistKey(Dist::default())),
        jobs: a.jobs.map(|j| j as usize).unwrap_or(cpus),
        cancel: interrupt::flag(),
        ..Default::default()
    };
    opts.validate()?;
    Ok(opts)
}

pub fn init(args: InitArgs) -> Result<i32> {
    let opts = options(&args)?;
    targeting::validate(&args.target)?;
    let rt = setup_runtime()?;
    let target = targeting::open(&args.target, args.quiet)?;
    let quiet = args.quiet;
    let r = rt.block_on(load::oltp::init(&target.conn, &opts, &mut |e| {
        if quiet {
            return;
        }
        match e {
            Event::StepStarted(s) => eprintln!("{s}..."),
            Event::Notice(n) => eprintln!("note: {n}"),
            _ => {}
        }
    }));
    let code = match r {
        Ok(report) => {
            eprintln!("{}", report.plan);
            eprintln!("{}", report.timings);
            Ok(0)
        }
        Err(LoadError::Interrupted) => {
            eprintln!("initialisation interrupted: the sbtest tables were dropped again");
            Ok(130)
        }
        Err(e) => Err(e).context(format!(
            "initialising sysbench's OLTP tables on {}",
            target.conn.redacted()
        )),
    };
    let closed = targeting::close(target, args.target.keep_server);
    let code = code?;
    closed?;
    Ok(code)
}

/// sysbench's options of `oltp_common.lua` and of `sysbench` itself that `run oltp_*` takes (the
/// others map to stampede's own flags: module notes). `None`: sysbench's default.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "sysbench workloads (`run oltp_*`, sysbench's option names)")]
pub struct SysbenchArgs {
    /// Number of sbtest tables [1].
    #[arg(long = "tables", value_name = "N")]
    pub tables: Option<u32>,
    /// Rows per table [10000].
    #[arg(long = "table-size", value_name = "N")]
    pub table_size: Option<u32>,
    /// Rows per range query [100].
    #[arg(long = "range-size", value_name = "N")]
    pub range_size: Option<u32>,
    /// Point SELECTs per transaction [10].
    #[arg(long = "point-selects", value_name = "N")]
    pub point_selects: Option<u32>,
    /// Simple range SELECTs per transaction [1].
    #[arg(long = "simple-ranges", value_name = "N")]
    pub simple_ranges: Option<u32>,
    /// SELECT SUM() ranges per transaction [1].
    #[arg(long = "sum-ranges", value_name = "N")]
    pub sum_ranges: Option<u32>,
    /// SELECT ORDER BY ranges per transaction [1].
    #[arg(long = "order-ranges", value_name = "N")]
    pub order_ranges: Option<u32>,
    /// SELECT DISTINCT ranges per transaction [1].
    #[arg(long = "distinct-ranges", value_name = "N")]
    pub distinct_ranges: Option<u32>,
    /// UPDATEs of the indexed column per transaction [1].
    #[arg(long = "index-updates", value_name = "N")]
    pub index_updates: Option<u32>,
    /// UPDATEs of a non-indexed column per transaction [1].
    #[arg(long = "non-index-updates", value_name = "N")]
    pub non_index_updates: Option<u32>,
    /// DELETE+INSERT pairs per transaction [1].
    #[arg(long = "delete-inserts", value_name = "N")]
    pub delete_inserts: Option<u32>,
    /// Enable the range SELECTs [on].
    #[arg(long = "range-selects", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub range_selects: Option<bool>,
    /// Do not use BEGIN/COMMIT [off].
    #[arg(long = "skip-trx", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub skip_trx: Option<bool>,
    /// oltp_insert: let the server assign ids [on].
    #[arg(long = "auto-inc", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub auto_inc: Option<bool>,
    /// Distribution of ids: uniform, gaussian, special, pareto, zipfian [special].
    #[arg(long = "rand-type", value_name = "TYPE")]
    pub rand_type: Option<String>,
    /// Iterations of the special distribution [12].
    #[arg(long = "rand-spec-iter", value_name = "N")]
    pub rand_spec_iter: Option<u32>,
    /// Percentage of values treated as special [1].
    #[arg(long = "rand-spec-pct", value_name = "N")]
    pub rand_spec_pct: Option<u32>,
    /// Percentage of draws that hit the special values [75].
    #[arg(long = "rand-spec-res", value_name = "N")]
    pub rand_spec_res: Option<u32>,
    /// The pareto distribution's h [0.2].
    #[arg(long = "rand-pareto-h", value_name = "H")]
    pub rand_pareto_h: Option<f64>,
    /// The zipfian distribution's exponent [0.8].
    #[arg(long = "rand-zipfian-exp", value_name = "E")]
    pub rand_zipfian_exp: Option<f64>,
    /// Total transactions over all clients (each runs ceil(N / clients)); 0: no limit [0].
    #[arg(long = "events", value_name = "N")]
    pub events: Option<u64>,
    /// Seconds at the start left out of the sysbench summary [0].
    #[arg(long = "warmup-time", value_name = "N")]
    pub warmup_time: Option<u64>,
    /// The latency percentile sysbench prints (1-100) [95]; all of stampede's are printed too.
    #[arg(long = "percentile", value_name = "P")]
    pub percentile: Option<f64>,
}

impl SysbenchArgs {
    /// The options given, as `--name=value`, for the error when there is no sysbench workload.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |set: bool, name: &'static str| {
            if set {
                v.push(name);
            }
        };
        add(self.tables.is_some(), "--tables");
        add(self.table_size.is_some(), "--table-size");
        add(self.range_size.is_some(), "--range-size");
        add(self.point_selects.is_some(), "--point-selects");
        add(self.simple_ranges.is_some(), "--simple-ranges");
        add(self.sum_ranges.is_some(), "--sum-ranges");
        add(self.order_ranges.is_some(), "--order-ranges");
        add(self.distinct_ranges.is_some(), "--distinct-ranges");
        add(self.index_updates.is_some(), "--index-updates");
        add(self.non_index_updates.is_some(), "--non-index-updates");
        add(self.delete_inserts.is_some(), "--delete-inserts");
        add(self.range_selects.is_some(), "--range-selects");
        add(self.skip_trx.is_some(), "--skip-trx");
        add(self.auto_inc.is_some(), "--auto-inc");
        add(self.rand_type.is_some(), "--rand-type");
        add(self.rand_spec_iter.is_some(), "--rand-spec-iter");
        add(self.rand_spec_pct.is_some(), "--rand-spec-pct");
        add(self.rand_spec_res.is_some(), "--rand-spec-res");
        add(self.rand_pareto_h.is_some(), "--rand-pareto-h");
        add(self.rand_zipfian_exp.is_some(), "--rand-zipfian-exp");
        add(self.events.is_some(), "--events");
        add(self.warmup_time.is_some(), "--warmup-time");
        add(self.percentile.is_some(), "--percentile");
        v
    }
}

/// sysbench's boolean option values.
fn parse_switch(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

const BULK_INSERT: &str = "bulk_insert";

/// `run`'s positional names a sysbench test (module notes).
pub fn is_sysbench_test(positional: Option<&str>) -> bool {
    positional.is_some_and(|p| {
        Test::from_name(p).is_some() || p.strip_suffix(".lua").unwrap_or(p) == BULK_INSERT
    })
}

/// sysbench's options without a sysbench workload are a mistake: say so rather than ignore them.
pub fn reject_without_test(a: &RunArgs) -> Result<()> {
    let given = a.sysbench.given();
    if !given.is_empty() {
        bail!(
            "{} only apply to sysbench's workloads: `stampede run oltp_read_write {} ...` \
             (the workload is the positional argument; the database then goes in -d)",
            given.join(", "),
            given[0]
        );
    }
    Ok(())
}

/// Everything decided from the command line alone.
struct OltpPlan {
    test: Test,
    opts: Options,
    spec: RunSpec,
    warmup_s: u64,
    percentile: f64,
    /// `--events` as given, when it is not a multiple of the clients (the total actually run
    /// differs).
    events_note: Option<String>,
    sysbench_options: BTreeMap<String, String>,
}

fn plan(a: &RunArgs, name: &str) -> Result<OltpPlan> {
    let base = name.strip_suffix(".lua").unwrap_or(name);
    let Some(test) = Test::from_name(base) else {
        bail!("{base} is not implemented yet (the oltp_* tests are)");
    };
    // pgbench's workload options make no sense with sysbench's tests.
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        bail!("{base} is the workload: -b, -f, -N and -S cannot be added to it");
    }
    if !a.define.is_empty() || a.scale.is_some() || a.show_script.is_some() {
        bail!("-D, -s and --show-script do not apply to {base}");
    }
    if a.log {
        bail!("--log is not supported yet");
    }
    if a.clients < 1 {
        bail!("-c/--client/--threads must be at least 1");
    }
    if a.jobs < 1 {
        bail!("-j/--jobs must be at least 1");
    }
    let sb = &a.sysbench;
    let d = Options::default();
    let defaults = Dist::default();
    let rand_type = match &sb.rand_type {
        Some(t) => RandType::parse(t).map_err(anyhow::Error::msg)?,
        None => defaults.kind,
    };
    let dist = Dist::new(
        rand_type,
        sb.rand_spec_iter.unwrap_or(defaults.spec_iter),
        sb.rand_spec_pct.unwrap_or(defaults.spec_pct),
        sb.rand_spec_res.unwrap_or(defaults.spec_res),
        sb.rand_pareto_h.unwrap_or(defaults.pareto_h),
        sb.rand_zipfian_exp.unwrap_or(defaults.zipfian_exp),
    )
    .map_err(anyhow::Error::msg)?;
    let opts = Options {
        tables: sb.tables.unwrap_or(d.tables),
        table_size: sb.table_size.unwrap_or(d.table_size),
        range_size: sb.range_size.unwrap_or(d.range_size),
        point_selects: sb.point_selects.unwrap_or(d.point_selects),
        simple_ranges: sb.simple_ranges.unwrap_or(d.simple_ranges),
        sum_ranges: sb.sum_ranges.unwrap_or(d.sum_ranges),
        order_ranges: sb.order_ranges.unwrap_or(d.order_ranges),
        distinct_ranges: sb.distinct_ranges.unwrap_or(d.distinct_ranges),
        index_updates: sb.index_updates.unwrap_or(d.index_updates),
        non_index_updates: sb.non_index_updates.unwrap_or(d.non_index_updates),
        delete_inserts: sb.delete_inserts.unwrap_or(d.delete_inserts),
        range_selects: sb.range_selects.unwrap_or(d.range_selects),
        auto_inc: sb.auto_inc.unwrap_or(d.auto_inc),
        skip_trx: sb.skip_trx.unwrap_or(d.skip_trx),
        dist,
    };
    if opts.table_size as u64 > i32::MAX as u64 {
        bail!("--table-size must fit sysbench's INTEGER id (at most 2147483647)");
    }
    // Validated by the workload itself (tables, table size).
    OltpWorkload::new(test, opts.clone()).map_err(anyhow::Error::msg)?;

    let events = sb.events.filter(|&e| e > 0);
    let time = a.time;
    let mut events_note = None;
    let stop = match (events, time, a.transactions) {
        (Some(_), Some(t), _) if t > 0 => bail!(
            "--events and --time: stampede stops on one of them; give --time=0 (or no --time) \
             with --events"
        ),
        (Some(_), _, Some(_)) => bail!("--events and -t/--transactions: give one of them"),
        (Some(e), _, None) => {
            let per_client = e.div_ceil(u64::from(a.clients));
            if per_client * u64::from(a.clients) != e {
                events_note = Some(format!(
                    "--events={e} over {} clients: {per_client} each, {} in all",
                    a.clients,
                    per_client * u64::from(a.clients)
                ));
            }
            Stop::Transactions(per_client)
        }
        (None, _, Some(0)) => bail!("-t/--transactions must be at least 1"),
        (None, _, Some(t)) => Stop::Transactions(t),
        (None, Some(0), None) => bail!("--time=0 runs without end: give --events too"),
        (None, t, None) => Stop::Duration(Duration::from_secs(t.unwrap_or(10))),
    };
    let warmup_s = sb.warmup_time.unwrap_or(0);
    if let Stop::Duration(d) = stop {
        if warmup_s >= d.as_secs() {
            bail!(
                "--warmup-time={warmup_s} leaves nothing of a {} s run",
                d.as_secs()
            );
        }
    }
    let percentile = sb.percentile.unwrap_or(95.0);
    if !(percentile > 0.0 && percentile <= 100.0) {
        bail!("--percentile must be in 1..100, got {percentile}");
    }
    // sysbench: --rate=0 is no limit.
    let rate = a.rate.filter(|&r| r != 0.0);
    if rate.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
        bail!("-R/--rate must be positive");
    }
    let limit = a.latency_limit;
    if limit.is_some_and(|l| !(l > 0.0 && l.is_finite())) {
        bail!("-L/--latency-limit must be positive");
    }
    if a.progress.is_some_and(|p| !(p > 0.0 && p.is_finite())) {
        bail!("-P/--progress/--report-interval must be positive");
    }
    let max_tries = match (a.max_tries, stop) {
        (1, Stop::Duration(_)) => 0,
        (1, Stop::Transactions(_)) => 1_000_000,
        (0, Stop::Transactions(_)) => {
            bail!("--max-tries=0 (unlimited) needs --time, or the run might never end")
        }
        (n, _) => n,
    };
    let seed = parse_seed(a.random_seed.as_deref())?;
    let spec = RunSpec {
        clients: a.clients,
        threads: a.jobs.min(a.clients),
        stop,
        rate_tps: rate,
        latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        mode: match a.protocol {
            Protocol::Extended => QueryMode::Extended,
            Protocol::Simple | Protocol::Prepared => QueryMode::Prepared,
        },
        max_tries,
        connect_per_txn: a.connect,
        // At least one tick a second: the warm-up is cut on these intervals.
        progress: Some(Duration::from_secs_f64(
            a.progress.map_or(1.0, |p| p.min(1.0)),
        )),
        seed,
        per_statement: a.report_per_command,
        weights: vec![1],
        log: None,
        exit_on_abort: false,
    };
    let o = &opts;
    let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
    let mut sysbench_options: BTreeMap<String, String> = [
        ("tables", o.tables.to_string()),
        ("table-size", o.table_size.to_string()),
        ("range-size", o.range_size.to_string()),
        ("point-selects", o.point_selects.to_string()),
        ("simple-ranges", o.simple_ranges.to_string()),
        ("sum-ranges", o.sum_ranges.to_string()),
        ("order-ranges", o.order_ranges.to_string()),
        ("distinct-ranges", o.distinct_ranges.to_string()),
        ("index-updates", o.index_updates.to_string()),
        ("non-index-updates", o.non_index_updates.to_string()),
        ("delete-inserts", o.delete_inserts.to_string()),
        ("range-selects", on_off(o.range_selects)),
        ("skip-trx", on_off(o.skip_trx)),
        ("auto-inc", on_off(o.auto_inc)),
        ("rand-type", o.dist.kind.name().to_string()),
        ("rand-spec-iter", o.dist.spec_iter.to_string()),
        ("rand-spec-pct", o.dist.spec_pct.to_string()),
        ("rand-spec-res", o.dist.spec_res.to_string()),
        ("rand-pareto-h", o.dist.pareto_h.to_string()),
        ("rand-zipfian-exp", o.dist.zipfian_exp.to_string()),
        ("threads", a.clients.to_string()),
        ("warmup-time", warmup_s.to_string()),
        ("percentile", percentile.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    match stop {
        Stop::Duration(d) => {
            sysbench_options.insert("time".into(), d.as_secs().to_string());
        }
        Stop::Transactions(n) => {
            sysbench_options.insert("time".into(), "0".into());
            sysbench_options.insert("events".into(), (n * u64::from(a.clients)).to_string());
        }
    }
    sysbench_options.insert("rate".into(), rate.unwrap_or(0.0).to_string());
    Ok(OltpPlan {
        test,
        opts,
        spec,
        warmup_s,
        percentile,
        events_note,
        sysbench_options,
    })
}

/// `stampede run oltp_<name> ...`.
pub fn run(mut args: RunArgs) -> Result<i32> {
    let name = args
        .target
        .positional_dbname
        .take()
        .expect("called with a sysbench test as the positional");
    let plan = plan(&args, &name)?;
    targeting::validate(&args.target)?;
    let rt = setup_runtime()?;
    let target = targeting::open(&args.target, false)?;
    let outcome = run_on(&args, plan, &target, &rt);
    let closed = targeting::close(target, args.target.keep_server);
    let code = outcome?;
    closed?;
    Ok(code)
}

/// Rows per table, with a hint when the tables are missing.
async fn rows(conn: &ConnConfig, tables: u32) -> Result<Vec<i64>> {
    let mut s = Session::connect(conn).await?;
    let r = load::oltp::row_counts(&mut s, tables).await;
    s.close().await;
    r.with_context(|| {
        format!(
            "the sbtest tables are not there: load them first with `stampede init oltp --tables \
             {tables} --table-size N` (same target options), or `sysbench oltp_common prepare`"
        )
    })
}

/// Autovacuum and autoanalyze runs so far on the database's tables. Their transactions count in
/// `pg_stat_database.xact_commit` like the clients': sysbench's writes trigger them within seconds
/// on small tables.
async fn maintenance_runs(conn: &ConnConfig) -> Result<i64> {
    let mut s = Session::connect(conn).await?;
    let r = s
        .simple_query(
            "SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables",
        )
        .await;
    s.close().await;
    Ok(r?
        .first()
        .and_then(|row| row.first().cloned().flatten())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// The commit-count check's status: a surplus of server commits while autovacuum or autoanalyze
/// ran (at most a few transactions per run) cannot be told apart from the clients' commits, so the
/// check is inconclusive (skipped, with the numbers), not failed. A deficit always fails.
fn commit_status(c: &checks::CommitCheck, maintenance: i64) -> (CheckStatus, String) {
    if c.passed {
        (CheckStatus::Passed, c.detail.clone())
    } else if maintenance > 0 && c.difference > 0 && c.difference <= 4 * i128::from(maintenance) {
        (
            CheckStatus::Skipped,
            format!(
                "inconclusive: {}; autovacuum/autoanalyze ran {maintenance} times during the run \
                 and the server counts their transactions too",
                c.detail
            ),
        )
    } else {
        (CheckStatus::Failed, c.detail.clone())
    }
}

/// The row-count check: `(passed, detail)` from the counts before and after the run.
fn row_check(
    test: Test,
    opts: &Options,
    before: &[i64],
    after: &[i64],
    committed: u64,
) -> (bool, String) {
    let b: i64 = before.iter().sum();
    let a: i64 = after.iter().sum();
    let delta = a - b;
    let c = committed as i64;
    let tables = if opts.tables == 1 {
        "sbtest1".to_string()
    } else {
        format!("sbtest1..{}", opts.tables)
    };
    let pairs = match test {
        Test::ReadWrite | Test::WriteOnly => c * i64::from(opts.delete_inserts),
        _ => 0,
    };
    let full = before.iter().all(|&n| n == i64::from(opts.table_size));
    let (ok, expected) = match test {
        Test::Insert => (delta == c, format!("+{c}: one insert per transaction")),
        Test::Delete => (
            (-c..=0).contains(&delta),
            format!("-{c}..0: at most one row deleted per transaction"),
        ),
        _ if pairs > 0 && full => (
            delta == 0,
            format!("+0: {pairs} delete+insert pairs on full tables"),
        ),
        _ if pairs > 0 => (
            (0..=pairs).contains(&delta),
            format!("0..+{pairs}: {pairs} delete+insert pairs, the tables missed ids"),
        ),
        _ => (delta == 0, "+0: no inserts or deletes".to_string()),
    };
    let detail = format!("{tables}: {b} rows before, {a} after ({delta:+}; expected {expected})");
    (ok, detail)
}

/// The intervals from `warmup_s` on, merged (a tick ending within 1 ms of the boundary belongs
/// to the warm-up: tick clocks jitter).
fn after_warmup(
    intervals: &[measure::Interval],
    warmup_s: u64,
    n_types: usize,
) -> measure::Interval {
    let cut = warmup_s * 1_000_000;
    let mut w = measure::Interval::new(n_types, cut);
    let mut first = true;
    for i in intervals.iter().filter(|i| i.end_us > cut + 1_000) {
        if first {
            w.start_us = i.start_us.max(cut.saturating_sub(1_000));
            w.end_us = w.start_us;
            first = false;
        }
        w.merge(i);
    }
    w
}

fn run_on(
    args: &RunArgs,
    plan: OltpPlan,
    target: &targeting::Target,
    rt: &tokio::runtime::Runtime,
) -> Result<i32> {
    let conn = &target.conn;
    let o = &plan.opts;
    if target.embedded.is_some() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let init = InitOptions {
            tables: o.tables,
            table_size: u64::from(o.table_size),
            auto_inc: o.auto_inc,
            key: Arc::new(DistKey(o.dist.clone())),
            jobs: cpus,
            cancel: interrupt::flag(),
            ..Default::default()
        };
        eprintln!(
            "loading {} sbtest table(s) of {} rows on the embedded server...",
            o.tables, o.table_size
        );
        rt.block_on(load::oltp::init(conn, &init, &mut |_| {}))
            .context("loading the sbtest tables on the embedded server")?;
        rt.block_on(async {
            let mut s = Session::connect(conn).await?;
            let r = s
                .simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .await;
            s.close().await;
            r
        })
        .context("creating pg_stat_statements on the embedded server")?;
    }
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }
    let server = rt.block_on(async {
        let mut s = Session::connect(conn).await?;
        let info = environment::server_info(&mut s).await;
        s.close().await;
        info
    })?;
    let rows_before = if args.no_check {
        None
    } else {
        let r = rt.block_on(rows(conn, o.tables))?;
        for (t, n) in r.iter().enumerate() {
            if *n < i64::from(o.table_size) {
                eprintln!(
                    "note: sbtest{} has {n} rows, fewer than --table-size={} (ids are drawn in \
                     1..{})",
                    t + 1,
                    o.table_size,
                    o.table_size
                );
            }
        }
        Some(r)
    };
    let workload = Arc::new(OltpWorkload::new(plan.test, o.clone()).map_err(anyhow::Error::msg)?);
    let q = workload.query_counts();
    let (baseline, maintenance_before) = if args.no_check {
        (None, 0)
    } else {
        let m = rt.block_on(maintenance_runs(conn))?;
        (Some(rt.block_on(checks::commit_baseline(conn))?), m)
    };
    if interrupt::requested() {
        bail!("interrupted before the run started; nothing was measured");
    }
    println!(
        "stampede {} (server {}): sysbench {}",
        env!("CARGO_PKG_VERSION"),
        short_version(&server.version),
        plan.test.name()
    );
    if let Some(n) = &plan.events_note {
        eprintln!("note: {n}");
    }
    let spec = &plan.spec;
    let observer = if args.no_observe {
        None
    } else {
        match observe::Sampler::start(conn, &observe::Options::default()) {
            Ok(h) => Some(h),
            Err(e) => {
                eprintln!(
                    "warning: {}; running without server metrics",
                    target::conninfo::redact(&format!("{e:#}"))
                );
                None
            }
        }
    };
    let print_every_us = args.progress.map(|p| (p * 1e6) as u64);
    let mut pending = measure::Interval::default();
    let style = report::ProgressStyle {
        rate_limited: spec.rate_tps.is_some(),
        latency_limited: spec.latency_limit.is_some(),
        max_tries: spec.max_tries,
    };
    let mut on_event = |e: EngineEvent<'_>| {
        if let (EngineEvent::Connected { .. }, Some(h)) = (&e, &observer) {
            h.mark_start(std::time::Instant::now());
        }
        let (EngineEvent::Progress(interval), Some(every)) = (e, print_every_us) else {
            return;
        };
        pending.merge(interval);
        if pending.end_us - pending.start_us + 1_000 < every {
            return;
        }
        eprintln!(
            "{}",
            report::render_progress(&pending, pending.end_us as f64 / 1e6, &style)
        );
        pending = measure::Interval::default();
    };
    let outcome = engine::run(
        spec,
        workload.clone(),
        conn,
        interrupt::flag(),
        &mut on_event,
    )
    .map_err(|e| anyhow::anyhow!(target::conninfo::redact(&format!("{e:#}"))))?;
    let server_metrics = observer.map(|h| h.finish());
    let observer_connections = server_metrics
        .as_ref()
        .map_or(0, |m| u64::from(m.cost.connections));

    let committed = outcome.total.total().committed();
    let mut check_list = Vec::new();
    match baseline {
        Some(b) => {
            // One server commit per transaction, unless --skip-trx splits a multi-statement
            // transaction into autocommitted statements: then count those on the wire.
            let per_txn = q.other > 0 || q.total() == 1;
            let counted = if per_txn {
                committed
            } else {
                outcome.server_commits - outcome.setup_commits
            };
            let c = rt.block_on(b.finish(
                counted,
                outcome.setup_commits,
                outcome.connections + observer_connections,
            ))?;
            let maintenance = rt.block_on(maintenance_runs(conn))? - maintenance_before;
            let (status, detail) = commit_status(&c, maintenance);
            check_list.push(Check {
                name: "commit count".into(),
                status,
                detail,
            });
        }
        None => check_list.push(skipped("commit count", "--no-check")),
    }
    match &rows_before {
        Some(before) => {
            let after = rt.block_on(rows(conn, o.tables))?;
            let (ok, detail) = row_check(plan.test, o, before, &after, committed);
            check_list.push(Check {
                name: "row counts".into(),
                status: if ok {
                    CheckStatus::Passed
                } else {
                    CheckStatus::Failed
                },
                detail,
            });
        }
        None => check_list.push(skipped("row counts", "--no-check")),
    }

    let window = after_warmup(&outcome.intervals, plan.warmup_s, 1);
    let sysbench = report::SysbenchSection {
        test: plan.test.name().into(),
        options: plan.sysbench_options.clone(),
        reads_per_txn: q.reads,
        writes_per_txn: q.writes,
        other_per_txn: q.other,
        warmup_s: plan.warmup_s as f64,
        window: if plan.warmup_s == 0 {
            outcome.total.clone()
        } else {
            window
        },
        percentile: plan.percentile,
        reconnects: outcome.reconnects,
    };
    let result = build_result(
        args,
        &plan,
        target,
        &server,
        workload.txn_types(),
        outcome,
        check_list,
        server_metrics,
        sysbench,
    );
    emit_result(args, &result)
}

#[allow(clippy::too_many_arguments)]
fn build_result(
    args: &RunArgs,
    plan: &OltpPlan,
    target: &targeting::Target,
    server: &environment::ServerInfo,
    txn_types: &[workload::TxnType],
    outcome: engine::Outcome,
    checks: Vec<Check>,
    server_metrics: Option<measure::server::ServerMetrics>,
    sysbench: report::SysbenchSection,
) -> RunResult {
    let spec = &plan.spec;
    let config = report::RunConfig {
        workload: plan.test.name().into(),
        txn_types: txn_types
            .iter()
            .map(|t| report::TxnTypeConfig {
                name: t.name.clone(),
                weight: 1,
                statements: t.statements.clone(),
            })
            .collect(),
        clients: spec.clients,
        threads: spec.threads,
        duration_s: match spec.stop {
            Stop::Duration(d) => Some(d.as_secs()),
            Stop::Transactions(_) => None,
        },
        transactions_per_client: match spec.stop {
            Stop::Transactions(n) => Some(n),
            Stop::Duration(_) => None,
        },
        rate_tps: spec.rate_tps,
        latency_limit_ms: args.latency_limit,
        query_mode: format!("{:?}", spec.mode).to_lowercase(),
        max_tries: spec.max_tries,
        connect_per_txn: spec.connect_per_txn,
        progress_s: args.progress,
        random_seed: spec.seed,
        per_statement: spec.per_statement,
        // No scale: sysbench's size is --tables x --table-size (in `sysbench.options`).
        scale: 0,
    };
    let parts = ResultParts {
        target,
        server,
        outcome,
        checks,
        server_metrics,
    };
    assemble_result(config, parts, Some(sysbench))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(argv: &[&str]) -> RunArgs {
        let mut v = vec!["stampede", "run"];
        v.extend_from_slice(argv);
        match crate::cli::Cli::try_parse_from(v).unwrap().command {
            Some(crate::cli::Command::Run(a)) => a,
            _ => unreachable!(),
        }
    }

    fn plan_of(argv: &[&str]) -> Result<OltpPlan> {
        let mut a = args(argv);
        let name = a.target.positional_dbname.take().unwrap();
        plan(&a, &name)
    }

    #[test]
    fn seed_004_write_only_parses_with_sysbench_s_names() {
        let p = plan_of(&[
            "oltp_write_only",
            "--tables=16",
            "--table-size=10000",
            "--threads=64",
            "--time=60",
            "--report-interval=60",
            "--skip-trx",
            "--rand-type=uniform",
            "--warmup-time=5",
        ])
        .unwrap();
        assert_eq!(p.test, Test::WriteOnly);
        assert_eq!((p.opts.tables, p.opts.table_size), (16, 10000));
        assert!(p.opts.skip_trx);
        assert_eq!(p.opts.dist.kind, RandType::Uniform);
        assert_eq!(p.spec.clients, 64);
        assert!(matches!(p.spec.stop, Stop::Duration(d) if d.as_secs() == 60));
        assert_eq!(p.spec.max_tries, 0);
        assert_eq!(p.spec.mode, QueryMode::Prepared);
        assert_eq!(p.warmup_s, 5);
        assert_eq!(p.sysbench_options["skip-trx"], "on");
    }

    #[test]
    fn events_are_shared_between_clients_and_exclude_time() {
        let p = plan_of(&[
            "oltp_point_select",
            "--threads=3",
            "--events=10",
            "--time=0",
        ])
        .unwrap();
        assert!(matches!(p.spec.stop, Stop::Transactions(4)));
        assert!(p.events_note.unwrap().contains("12 in all"));
        assert!(plan_of(&["oltp_point_select", "--events=10", "--time=5"]).is_err());
        assert!(plan_of(&["oltp_point_select", "--time=0"]).is_err());
        assert!(plan_of(&["oltp_point_select", "--time=5", "--warmup-time=5"]).is_err());
        assert!(plan_of(&["bulk_insert"]).is_err());
        assert!(plan_of(&["oltp_point_select", "-b", "select-only"]).is_err());
        // Defaults: sysbench's 10 s.
        let p = plan_of(&["oltp_read_write.lua"]).unwrap();
        assert!(matches!(p.spec.stop, Stop::Duration(d) if d.as_secs() == 10));
        assert_eq!(p.opts.point_selects, 10);
        assert!(!p.opts.skip_trx);
    }

    #[test]
    fn sysbench_options_without_a_sysbench_test_are_refused() {
        assert!(reject_without_test(&args(&["--tables=4"])).is_err());
        assert!(reject_without_test(&args(&["-c", "4", "mydb"])).is_ok());
        assert!(is_sysbench_test(Some("oltp_delete")));
        assert!(is_sysbench_test(Some("bulk_insert.lua")));
        assert!(!is_sysbench_test(Some("postgres")));
    }

    #[test]
    fn row_check_expectations() {
        let o = Options {
            tables: 2,
            table_size: 10,
            ..Default::default()
        };
        assert!(row_check(Test::ReadWrite, &o, &[10, 10], &[10, 10], 5).0);
        assert!(!row_check(Test::ReadWrite, &o, &[10, 10], &[10, 11], 5).0);
        assert!(row_check(Test::ReadWrite, &o, &[9, 10], &[10, 10], 5).0);
        assert!(row_check(Test::Insert, &o, &[10, 10], &[13, 10], 3).0);
        assert!(!row_check(Test::Insert, &o, &[10, 10], &[12, 10], 3).0);
        assert!(row_check(Test::Delete, &o, &[10, 10], &[8, 10], 3).0);
        assert!(!row_check(Test::Delete, &o, &[10, 10], &[6, 10], 3).0);
        assert!(row_check(Test::PointSelect, &o, &[10, 10], &[10, 10], 3).0);
        let (_, d) = row_check(Test::WriteOnly, &o, &[10, 10], &[10, 10], 3);
        assert_eq!(
            d,
            "sbtest1..2: 20 rows before, 20 after (+0; expected +0: 3 delete+insert pairs on full tables)"
        );
    }

    #[test]
    fn a_surplus_of_commits_during_autovacuum_is_inconclusive_not_failed() {
        let c = |passed, difference| checks::CommitCheck {
            passed,
            detail: "numbers".into(),
            difference,
        };
        assert_eq!(commit_status(&c(true, 0), 3).0, CheckStatus::Passed);
        let (st, d) = commit_status(&c(false, 14), 8);
        assert_eq!(st, CheckStatus::Skipped);
        assert!(d.starts_with("inconclusive: numbers; autovacuum/autoanalyze ran 8 times"));
        assert_eq!(commit_status(&c(false, 14), 0).0, CheckStatus::Failed);
        assert_eq!(commit_status(&c(false, -1), 8).0, CheckStatus::Failed);
        assert_eq!(commit_status(&c(false, 100), 8).0, CheckStatus::Failed);
    }

    #[test]
    fn warmup_drops_the_first_intervals() {
        let iv = |s: u64, n: u64| {
            let mut i = measure::Interval::new(1, s * 1_000_000);
            i.end_us = (s + 1) * 1_000_000;
            for _ in 0..n {
                i.txns[0].latency.record(1000);
            }
            i
        };
        let all = vec![iv(0, 5), iv(1, 7), iv(2, 11)];
        let w = after_warmup(&all, 1, 1);
        assert_eq!(w.total().committed(), 18);
        assert_eq!((w.start_us, w.end_us), (1_000_000, 3_000_000));
        assert_eq!(after_warmup(&all, 0, 1).total().committed(), 23);
    }
}
