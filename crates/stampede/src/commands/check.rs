//! `stampede check WORKLOAD`: a loaded database's consistency, without running anything (the
//! same checks a run does afterwards, in their absolute form).
//!
//! - `tpcb`: the TPC-B consistency condition on balances: sum(abalance) = sum(tbalance) =
//!   sum(bbalance) = sum(pgbench_history.delta). It holds on a database that only pgbench's
//!   tpcb-like transactions changed since it was loaded or reset (`simple-update` changes
//!   accounts and history only, so after it the condition fails by design).
//! - `oltp`: every `sbtestN` table of `--tables` exists, is not empty, and has sysbench's
//!   secondary index on `k`.
//!
//! - `tpcc`: the consistency conditions of TPC-C clause 3.3.2 (`workload::tpcc::consistency`),
//!   one line each with the rows that violate it.
//!
//! Exit 0 when every check passed, 2 when one failed (the `console` table).

use anyhow::Result;

use crate::cli::CheckArgs;
use crate::commands::init::dataset;
use crate::console::{self, Failure, EXIT_OK, EXIT_UNTRUSTED};
use crate::runtime;
use crate::targeting;
use crate::workloads::Dataset;

pub fn check(mut args: CheckArgs) -> Result<i32> {
    let d = dataset(&args.workload, false)?;
    if matches!(d, Dataset::Iibench | Dataset::Crud) {
        return Err(Failure::usage(
            "iibench and crud check their tables after each run (row counts, index consistency)",
            "",
        ));
    }
    if d == Dataset::Tpch {
        return Err(Failure::usage(
            "TPC-H's tables have no consistency condition to check: `init tpch` loads dbgen's \
             rows and its row counts are the spec's",
            "",
        ));
    }
    if d == Dataset::Probe {
        return Err(Failure::usage(
            "failover-probe keeps no tables to check: its audit runs at the end of its run",
            "",
        ));
    }
    if d == Dataset::Capture {
        return Err(Failure::usage(
            "a replay keeps no tables of its own to check: its checks run after it",
            "",
        ));
    }
    if d == Dataset::CacheCurve {
        return Err(Failure::usage(
            "cache-curve keeps no tables to check: its row counts are checked during its run",
            "",
        ));
    }
    if args.positional_dbname.is_some() {
        args.target.positional_dbname = args.positional_dbname.take();
    }
    targeting::validate(&args.target)?;
    if targeting::wants_embedded(&args.target) {
        return Err(Failure::usage(
            "check needs a target: an embedded server is new and empty every time",
            "name the database with -h/-p/-U/-d",
        ));
    }
    let conn = targeting::resolve_remote(&args.target)?;
    let rt = runtime::setup()?;
    let lines: Vec<(bool, String)> = rt.block_on(async {
        let mut s = sut::Session::connect(&conn).await?;
        let r = match d {
            Dataset::Tpcb => tpcb(&mut s).await,
            Dataset::Oltp | Dataset::OltpBulk => oltp(&mut s, args.tables).await,
            // CH-benCHmark's data is TPC-C's with three tables only its queries read.
            Dataset::Tpcc | Dataset::Ch => tpcc(&mut s).await,
            Dataset::Ycsb => super::ycsb::check(&mut s).await,
            Dataset::Probe
            | Dataset::CacheCurve
            | Dataset::Iibench
            | Dataset::Crud
            | Dataset::Tpch
            | Dataset::Capture => {
                unreachable!("refused above")
            }
        };
        s.close().await;
        r
    })?;
    let mut ok = true;
    for (passed, line) in &lines {
        ok &= passed;
        println!("  {:<7}  {line}", if *passed { "PASSED" } else { "FAILED" });
    }
    if !ok {
        console::error("a consistency check failed");
    }
    Ok(if ok { EXIT_OK } else { EXIT_UNTRUSTED })
}

async fn tpcb(s: &mut sut::Session) -> Result<Vec<(bool, String)>> {
    if let load::tpcb::TpcbTables::Missing(t) = load::tpcb::inspect(s).await? {
        return Err(Failure::setup(
            format!("table {t} does not exist"),
            "load pgbench's tables with `stampede init tpcb`",
        ));
    }
    let r = workload::tpcb::check_tpcb_invariant(s).await?;
    Ok(vec![(
        r.passed,
        format!(
            "TPC-B balances: sum(abalance) {}, sum(tbalance) {}, sum(bbalance) {}, \
             sum(history.delta) {} over {} history rows",
            r.sum_abalance, r.sum_tbalance, r.sum_bbalance, r.sum_delta, r.history_rows
        ),
    )])
}

async fn oltp(s: &mut sut::Session, tables: u32) -> Result<Vec<(bool, String)>> {
    let mut out = Vec::new();
    for t in 1..=tables {
        let rows = s
            .simple_query(&format!(
                "SELECT to_regclass('sbtest{t}') IS NOT NULL, \
                        (SELECT count(*) FROM pg_catalog.pg_index i \
                           JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid \
                            AND a.attnum = i.indkey[0] \
                          WHERE i.indrelid = to_regclass('sbtest{t}') AND a.attname = 'k')"
            ))
            .await?;
        let row = rows.first().cloned().unwrap_or_default();
        let exists = row.first().cloned().flatten().as_deref() == Some("t");
        if !exists {
            out.push((false, format!("sbtest{t}: missing")));
            continue;
        }
        let indexed = row.get(1).cloned().flatten().is_some_and(|n| n != "0");
        let n: i64 = s
            .simple_query(&format!("SELECT count(*) FROM sbtest{t}"))
            .await?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        out.push((
            n > 0 && indexed,
            format!(
                "sbtest{t}: {n} rows, {} the secondary index on k",
                if indexed { "with" } else { "without" }
            ),
        ));
    }
    Ok(out)
}

async fn tpcc(s: &mut sut::Session) -> Result<Vec<(bool, String)>> {
    let w = crate::families::tpcc::loaded_warehouses(s).await?;
    let conditions = workload::tpcc::consistency::check(s).await?;
    let mut out = vec![(true, format!("{w} warehouse(s) loaded"))];
    for c in conditions {
        let what = match (c.applies, c.violations) {
            (false, _) => "does not apply after a Delivery".to_string(),
            (true, 0) => "holds".to_string(),
            (true, n) => format!("{n} rows violate it"),
        };
        out.push((c.holds(), format!("{} {}: {what}", c.clause, c.rule)));
    }
    Ok(out)
}
