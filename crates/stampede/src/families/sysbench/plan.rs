//! The plan of a sysbench-family run (`run oltp_*`, `run bulk_insert`, `stampede sysbench`),
//! decided before any I/O: the test, `oltp_common`'s options with sysbench's defaults, the
//! engine's [`RunSpec`] and sysbench's options as used, for the result.
//!
//! Mappings that are not one to one:
//! - `--events=N` is sysbench's total over all threads; the engine stops each client after its
//!   own count, so each client runs `ceil(N / clients)` (the total is printed when it differs).
//!   With `--events`, `--time` must be 0 or absent (sysbench stops at whichever comes first).
//! - `--warmup-time=N`: the run lasts `--time` seconds; the first N of them are left out of the
//!   sysbench summary (computed from the per-second intervals after the warm-up), while
//!   stampede's pgbench-style summary covers the whole run.
//! - errors sysbench ignores (40001, 40P01, 23505) are retried without limit under `--time`
//!   (1,000,000 tries under `--events`), as sysbench restarts the event; `--max-tries N` caps
//!   them. They are counted as retries, and printed as sysbench's "ignored errors".
//! - statements are prepared (sysbench's `--db-ps-mode=auto`); `--db-ps-mode=disable` is the
//!   simple protocol with the values in the text (sysbench's client-side emulation).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};
use sut::QueryMode;
use workload::oltp::{BulkInsert, Dist, OltpWorkload, Options, RandType, Test};

use crate::console::Failure;
use crate::families::planning;
use crate::families::{Asked, Job, Planner};
use crate::families::{Protocol, RunArgs};
use planning::parse_seed;

/// `bulk_insert`, which is not one of `workload::oltp::Test` (it shares only the table names).
pub const BULK_INSERT: &str = "bulk_insert";

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// For a run that is not sysbench's: sysbench's options are a mistake, say so rather than
/// ignore them (but for --tables and --table-size when the run's family, `sized_elsewhere`,
/// sizes its own tables with them: the CRUD mix).
pub fn reject_options(a: &RunArgs, sized_elsewhere: bool) -> Result<()> {
    let mut given = a.sysbench.given();
    given.extend(a.sysbench.pgsql.given());
    let sizes = ["--tables", "--table-size"];
    given.retain(|g| *g != "--progress-style" && !(sized_elsewhere && sizes.contains(g)));
    if !given.is_empty() {
        return Err(Failure::usage(
            format!("{} only apply to sysbench's workloads", given.join(", ")),
            format!(
                "name one first: `stampede run oltp_read_write {} ...` (`stampede run --list` \
                 lists them)",
                given[0]
            ),
        ));
    }
    Ok(())
}

/// A sysbench test: one of `oltp_common`'s family, or `bulk_insert`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SbTest {
    Oltp(Test),
    BulkInsert,
}

impl SbTest {
    pub fn from_name(name: &str) -> Option<SbTest> {
        let base = name.strip_suffix(".lua").unwrap_or(name);
        if base == BULK_INSERT {
            return Some(SbTest::BulkInsert);
        }
        Test::from_name(base).map(SbTest::Oltp)
    }

    pub fn name(self) -> &'static str {
        match self {
            SbTest::Oltp(t) => t.name(),
            SbTest::BulkInsert => BULK_INSERT,
        }
    }
}

/// Everything a sysbench-family run decided from its command line.
pub struct SysbenchJob {
    pub test: SbTest,
    /// `oltp_common`'s options (for `bulk_insert`: the defaults, unused but for `tables`, which
    /// is the clients).
    pub opts: Options,
    pub warmup_s: u64,
    pub percentile: f64,
    /// `--events` as given, when it is not a multiple of the clients (the total actually run
    /// differs).
    pub events_note: Option<String>,
    pub sysbench_options: BTreeMap<String, String>,
    /// `--require-single-shard`: the routing check refuses a run that would scatter.
    pub require_single_shard: bool,
}

pub(crate) fn plan(a: &RunArgs, name: &str) -> Result<(SysbenchJob, RunSpec)> {
    let clients = a.clients.unwrap_or(1);
    let jobs = a.jobs.unwrap_or(1);
    let Some(sb_test) = SbTest::from_name(name) else {
        bail!("{name} is not a sysbench test");
    };
    let base = sb_test.name();
    let bulk = sb_test == SbTest::BulkInsert;
    if bulk {
        let mix = a.sysbench.mix_given();
        if !mix.is_empty() {
            bail!(
                "{} do not apply to bulk_insert: it writes one table per client (--threads N: \
                 sbtest1..N, id and k only)",
                mix.join(", ")
            );
        }
    }
    // pgbench's workload options make no sense with sysbench's tests.
    planning::not_a_script(a, base, None)?;
    planning::no_log(a, base)?;
    if clients < 1 {
        bail!("-c/--client/--threads must be at least 1");
    }
    if jobs < 1 {
        bail!("-j/--jobs must be at least 1");
    }
    let sb = &a.sysbench;
    let d = Options::default();
    let defaults = Dist::default();
    let rand_type = match &sb.rand_type {
        Some(t) => RandType::parse(t).map_err(|e| Failure::usage(e, ""))?,
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
    .map_err(|e| Failure::usage(e, ""))?;
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
    let opts = if bulk {
        Options {
            tables: clients,
            ..opts
        }
    } else {
        opts
    };
    // Validated by the workload itself (tables, table size).
    match sb_test {
        SbTest::Oltp(test) => {
            OltpWorkload::new(test, opts.clone()).map_err(|e| Failure::usage(e, ""))?;
        }
        SbTest::BulkInsert => {
            BulkInsert::new(clients).map_err(|e| Failure::usage(e, ""))?;
        }
    }

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
            let per_client = e.div_ceil(u64::from(clients));
            if per_client * u64::from(clients) != e {
                events_note = Some(format!(
                    "--events={e} over {clients} clients: {per_client} each, {} in all",
                    per_client * u64::from(clients)
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
    let max_tries = match (a.max_tries, stop) {
        // bulk_insert ignores no error (workload::oltp::bulk): one try.
        (None, _) if bulk => 1,
        (None, Stop::Duration(_)) => 0,
        (None, Stop::Transactions(_)) => 1_000_000,
        (Some(0), Stop::Transactions(_)) => {
            bail!("--max-tries=0 (unlimited) needs --time, or the run might never end")
        }
        (Some(n), _) => n,
    };
    let seed = parse_seed(a.random_seed.as_deref())?;
    // sysbench's --db-ps-mode: auto prepares on the server, disable interpolates on the client
    // (drv_pgsql.c's emulation), which is stampede's simple protocol.
    let mode = match (sb.db_ps_mode.as_deref(), a.protocol) {
        (Some("disable"), None | Some(Protocol::Simple)) => QueryMode::Simple,
        (Some("disable"), _) => bail!("--db-ps-mode=disable and -M extended/prepared: give one"),
        (_, Some(p)) => p.mode(),
        (_, None) => QueryMode::Prepared,
    };
    let spec = RunSpec {
        rate_tps: rate,
        latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        mode,
        max_tries,
        seed,
        // bulk_insert's queries are its INSERTs, counted per interval from the per-statement
        // records (one clock read per ~33,000 events).
        per_statement: a.report_per_command || bulk,
        weights: vec![1],
        exit_on_abort: false,
        verbose_errors: false,
        ..planning::common_spec(a, clients, jobs, stop)
    };
    let o = &opts;
    let mysql_target = a.target.mysql.is_some()
        || a.target.mysql_embedded.is_some()
        || (a.target.dbname.as_deref()).is_some_and(crate::targeting::is_mysql_url);
    let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
    let ps_mode = if mode == QueryMode::Simple {
        "disable"
    } else {
        "auto"
    };
    let mut sysbench_options: BTreeMap<String, String> = if bulk {
        Vec::new()
    } else {
        vec![
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
        ]
    }
    .into_iter()
    .chain([
        ("threads", clients.to_string()),
        ("warmup-time", warmup_s.to_string()),
        ("percentile", percentile.to_string()),
        ("db-ps-mode", ps_mode.to_string()),
        (
            "db-driver",
            match mysql_target {
                true => "mysql",
                false => "pgsql",
            }
            .to_string(),
        ),
    ])
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    match stop {
        Stop::Duration(d) => {
            sysbench_options.insert("time".into(), d.as_secs().to_string());
        }
        Stop::Transactions(n) => {
            sysbench_options.insert("time".into(), "0".into());
            sysbench_options.insert("events".into(), (n * u64::from(clients)).to_string());
        }
    }
    sysbench_options.insert("rate".into(), rate.unwrap_or(0.0).to_string());
    engine::check_io(spec.io, spec.connect_per_txn).map_err(|e| Failure::usage(e, ""))?;
    Ok((
        SysbenchJob {
            test: sb_test,
            opts,
            warmup_s,
            percentile,
            events_note,
            sysbench_options,
            require_single_shard: a.sharding.require_single_shard,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn plan(self: Box<Self>, a: &mut RunArgs, asked: &Asked) -> Result<(Job, RunSpec)> {
        let name = asked.name.expect("a sysbench run names its workload");
        let (job, spec) = plan(a, name)?;
        Ok((Job::Engine(Box::new(super::Runner::new(job))), spec))
    }
}
