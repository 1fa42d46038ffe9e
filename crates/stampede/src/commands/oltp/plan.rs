//! What a `run oltp_*` / `run bulk_insert` command line asks for, decided before any I/O: the
//! test, `oltp_common`'s options with sysbench's defaults, the engine's [`RunSpec`] (module notes
//! of `oltp` for the mappings that are not one to one) and sysbench's options as used, for the
//! result.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Result};
use engine::{RunSpec, Stop};
use target::QueryMode;
use workload::oltp::{BulkInsert, Dist, OltpWorkload, Options, RandType, Test};

use super::args::BULK_INSERT;
use crate::cli::{Protocol, RunArgs};
use crate::commands::run::parse_seed;

/// A sysbench test: one of `oltp_common`'s family, or `bulk_insert`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SbTest {
    Oltp(Test),
    BulkInsert,
}

impl SbTest {
    pub(super) fn from_name(name: &str) -> Option<SbTest> {
        let base = name.strip_suffix(".lua").unwrap_or(name);
        if base == BULK_INSERT {
            return Some(SbTest::BulkInsert);
        }
        Test::from_name(base).map(SbTest::Oltp)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            SbTest::Oltp(t) => t.name(),
            SbTest::BulkInsert => BULK_INSERT,
        }
    }
}

/// Which progress line `-P`/`--report-interval` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProgressStyle {
    Sysbench,
    Pgbench,
}

/// Everything decided from the command line alone.
pub(super) struct OltpPlan {
    pub test: SbTest,
    /// `oltp_common`'s options (for `bulk_insert`: the defaults, unused but for `tables`, which
    /// is the clients).
    pub opts: Options,
    pub spec: RunSpec,
    pub warmup_s: u64,
    pub percentile: f64,
    pub progress_style: ProgressStyle,
    /// `--events` as given, when it is not a multiple of the clients (the total actually run
    /// differs).
    pub events_note: Option<String>,
    pub sysbench_options: BTreeMap<String, String>,
}

pub(super) fn plan(a: &RunArgs, name: &str) -> Result<OltpPlan> {
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
    let opts = if bulk {
        Options {
            tables: a.clients,
            ..opts
        }
    } else {
        opts
    };
    // Validated by the workload itself (tables, table size).
    match sb_test {
        SbTest::Oltp(test) => {
            OltpWorkload::new(test, opts.clone()).map_err(anyhow::Error::msg)?;
        }
        SbTest::BulkInsert => {
            BulkInsert::new(a.clients).map_err(anyhow::Error::msg)?;
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
        // bulk_insert ignores no error (workload::oltp::bulk): one try.
        (1, _) if bulk => 1,
        (1, Stop::Duration(_)) => 0,
        (1, Stop::Transactions(_)) => 1_000_000,
        (0, Stop::Transactions(_)) => {
            bail!("--max-tries=0 (unlimited) needs --time, or the run might never end")
        }
        (n, _) => n,
    };
    let seed = parse_seed(a.random_seed.as_deref())?;
    // sysbench's --db-ps-mode: auto prepares on the server, disable interpolates on the client
    // (drv_pgsql.c's emulation), which is stampede's simple protocol. -M's default (simple) is
    // pgbench's and means "not given" here.
    let mode = match (sb.db_ps_mode.as_deref(), a.protocol) {
        (Some("disable"), Protocol::Simple) => QueryMode::Simple,
        (Some("disable"), _) => bail!("--db-ps-mode=disable and -M extended/prepared: give one"),
        (_, Protocol::Extended) => QueryMode::Extended,
        _ => QueryMode::Prepared,
    };
    let progress_style = match sb.progress_style.as_deref() {
        Some("pgbench") => ProgressStyle::Pgbench,
        _ => ProgressStyle::Sysbench,
    };
    let spec = RunSpec {
        clients: a.clients,
        threads: a.jobs.min(a.clients),
        stop,
        rate_tps: rate,
        latency_limit: limit.map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        mode,
        max_tries,
        connect_per_txn: a.connect,
        // At least one tick a second: the warm-up is cut on these intervals.
        progress: Some(Duration::from_secs_f64(
            a.progress.map_or(1.0, |p| p.min(1.0)),
        )),
        seed,
        // bulk_insert's queries are its INSERTs, counted per interval from the per-statement
        // records (one clock read per ~33,000 events).
        per_statement: a.report_per_command || bulk,
        weights: vec![1],
        log: None,
        exit_on_abort: false,
        io: a.io.mode(),
    };
    let o = &opts;
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
        ("threads", a.clients.to_string()),
        ("warmup-time", warmup_s.to_string()),
        ("percentile", percentile.to_string()),
        ("db-ps-mode", ps_mode.to_string()),
        ("db-driver", "pgsql".to_string()),
    ])
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
        test: sb_test,
        opts,
        spec,
        warmup_s,
        percentile,
        progress_style,
        events_note,
        sysbench_options,
    })
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
        assert_eq!(p.test, SbTest::Oltp(Test::WriteOnly));
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
        assert!(plan_of(&["oltp_point_select", "-b", "select-only"]).is_err());
        // Defaults: sysbench's 10 s.
        let p = plan_of(&["oltp_read_write.lua"]).unwrap();
        assert!(matches!(p.spec.stop, Stop::Duration(d) if d.as_secs() == 10));
        assert_eq!(p.opts.point_selects, 10);
        assert!(!p.opts.skip_trx);
    }

    #[test]
    fn sysbench_options_without_a_sysbench_test_are_refused() {
        assert!(super::super::reject_without_test(&args(&["--tables=4"])).is_err());
        assert!(super::super::reject_without_test(&args(&["-c", "4", "mydb"])).is_ok());
        assert!(super::super::is_sysbench_test(Some("oltp_delete")));
        assert!(super::super::is_sysbench_test(Some("bulk_insert.lua")));
        assert!(!super::super::is_sysbench_test(Some("postgres")));
    }

    #[test]
    fn bulk_insert_takes_threads_as_tables_and_refuses_the_mix_options() {
        let p = plan_of(&["bulk_insert", "--threads=3", "--events=30", "--time=0"]).unwrap();
        assert_eq!(p.test, SbTest::BulkInsert);
        assert_eq!(p.opts.tables, 3);
        assert!(matches!(p.spec.stop, Stop::Transactions(10)));
        // Nothing is ignorable: one try; the INSERTs are counted per statement.
        assert_eq!(p.spec.max_tries, 1);
        assert!(p.spec.per_statement);
        assert_eq!(p.sysbench_options["threads"], "3");
        assert!(!p.sysbench_options.contains_key("table-size"));
        let e = plan_of(&["bulk_insert.lua", "--tables=4", "--point-selects=1"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("--tables, --point-selects do not apply to bulk_insert"),
            "{e}"
        );
    }

    #[test]
    fn db_ps_mode_and_progress_style_choose_the_protocol_and_the_line() {
        let p = plan_of(&["oltp_point_select", "--db-ps-mode=disable"]).unwrap();
        assert_eq!(p.spec.mode, QueryMode::Simple);
        assert_eq!(p.sysbench_options["db-ps-mode"], "disable");
        assert_eq!(p.progress_style, ProgressStyle::Sysbench);
        let p = plan_of(&["oltp_point_select", "--db-ps-mode=auto", "-M", "extended"]).unwrap();
        assert_eq!(p.spec.mode, QueryMode::Extended);
        assert!(plan_of(&[
            "oltp_point_select",
            "--db-ps-mode=disable",
            "-M",
            "prepared"
        ])
        .is_err());
        let p = plan_of(&["oltp_point_select", "--progress-style", "pgbench"]).unwrap();
        assert_eq!(p.progress_style, ProgressStyle::Pgbench);
    }
}
