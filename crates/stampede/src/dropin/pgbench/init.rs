//! `stampede pgbench -i`: pgbench 18's initialization, step by step (`-I`, default `dtgvp`), on
//! one connection, with its messages on standard error and its closing "done in ..." line.
//!
//! pgbench.c `runInitSteps`: `d` drop tables, `t` create tables (and partitions), `g`
//! client-side generate (one transaction: TRUNCATE, then COPY of branches, tellers, accounts,
//! FREEZE on servers from 14 for ordinary tables), `G` server-side generate (`INSERT ... SELECT
//! generate_series`), `v` vacuum, `p` primary keys, `f` foreign keys, a space nothing. The SQL is
//! pgbench's, from `load::tpcb` (which `stampede init tpcb` shares); the rows are pgbench's.
//! `stampede init tpcb` is the parallel loader; this keeps pgbench's plan so `-I` orders such as
//! `dtpvg` (keys before the data) behave exactly as pgbench's.

use std::io::Write as _;
use std::time::Instant;

use anyhow::Result;
use load::tpcb::{self, InitOptions, NACCOUNTS, NBRANCHES, NTELLERS};
use load::RowSource;
use sut::session::Session;
use sut::ConnConfig;

use super::libpq_connect_error;
use crate::console::{self, Failure};
use crate::interrupt;
use crate::runtime;

/// pgbench's `LOG_STEP_SECONDS`: with `-q`, a progress line every 5 s.
const LOG_STEP_SECONDS: f64 = 5.0;

pub struct InitPlan {
    pub steps: String,
    pub opts: InitOptions,
    pub quiet: bool,
}

/// A failed statement, as pgbench's `executeStatement` reports it: `query failed: ...` and the
/// query as detail; exit 1.
fn query_failed(e: sut::Error, sql: &str) -> anyhow::Error {
    let mut f = Failure::setup(format!("query failed: {e}"), "");
    if let Some(x) = f.downcast_mut::<Failure>() {
        x.detail = Some(format!("Query was: {sql}"));
    }
    f
}

async fn exec(s: &mut Session, sql: &str) -> Result<()> {
    let r = s.simple_query(sql).await;
    for n in s.take_notices() {
        console::server_notice(&n);
    }
    r.map(|_| ()).map_err(|e| query_failed(e, sql))
}

pub fn run(plan: &InitPlan, conn: &ConnConfig) -> Result<i32> {
    let rt = runtime::setup()?;
    // Connecting is abandoned by a signal (a host that never answers); the steps are not.
    let connected = rt.block_on(interrupt::or_interrupted(async {
        Ok(Session::connect(conn).await)
    }))?;
    rt.block_on(async {
        let mut s = match connected {
            Ok(s) => s,
            Err(e) => {
                console::error(&libpq_connect_error(&e, &conn.clone().into()));
                return Err(Failure::setup(
                    "could not create connection for initialization",
                    "",
                ));
            }
        };
        let r = steps(plan, &mut s).await;
        s.close().await;
        r
    })
}

async fn steps(plan: &InitPlan, s: &mut Session) -> Result<i32> {
    let opts = &plan.opts;
    let mut stats = Vec::new();
    let mut total = 0.0;
    for step in plan.steps.chars() {
        if interrupt::requested() {
            return Err(Failure::setup("initialization interrupted", ""));
        }
        let start = Instant::now();
        let op = match step {
            'd' => {
                eprintln!("dropping old tables...");
                exec(s, tpcb::DROP_SQL).await?;
                "drop tables"
            }
            't' => {
                eprintln!("creating tables...");
                // pgbench 18 never creates the partitioned parent unlogged.
                let sqls = tpcb::create_sql(opts, 180000);
                let tables = sqls.len() - opts.partitions as usize;
                for (i, sql) in sqls.iter().enumerate() {
                    if i == tables {
                        eprintln!("creating {} partitions...", opts.partitions);
                    }
                    exec(s, sql).await?;
                }
                "create tables"
            }
            'g' => {
                eprintln!("generating data (client-side)...");
                client_side(plan, s).await?;
                "client-side generate"
            }
            'G' => {
                eprintln!("generating data (server-side)...");
                server_side(opts, s).await?;
                "server-side generate"
            }
            'v' => {
                eprintln!("vacuuming...");
                for sql in tpcb::VACUUM_SQL {
                    exec(s, sql).await?;
                }
                "vacuum"
            }
            'p' => {
                eprintln!("creating primary keys...");
                for sql in tpcb::pkey_sql(opts) {
                    exec(s, &sql).await?;
                }
                "primary keys"
            }
            'f' => {
                eprintln!("creating foreign keys...");
                for sql in tpcb::FKEY_SQL {
                    exec(s, sql).await?;
                }
                "foreign keys"
            }
            ' ' => continue,
            other => {
                return Err(Failure::setup(
                    format!("unrecognized initialization step \"{other}\""),
                    "",
                ))
            }
        };
        let secs = start.elapsed().as_secs_f64();
        stats.push(format!("{op} {secs:.2} s"));
        total += secs;
    }
    eprintln!("done in {total:.2} s ({}).", stats.join(", "));
    Ok(0)
}

/// pgbench's `initTruncateTables`, in one command in case there are foreign keys.
const TRUNCATE_SQL: &str =
    "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// pgbench's `initGenerateDataClientSide`: one transaction, so COPY FREEZE is legal on the
/// tables it truncates.
async fn client_side(plan: &InitPlan, s: &mut Session) -> Result<()> {
    let scale = plan.opts.scale as u64;
    exec(s, "begin").await?;
    exec(s, TRUNCATE_SQL).await?;
    populate(
        plan,
        s,
        "pgbench_branches",
        NBRANCHES * scale,
        &tpcb::Branches,
    )
    .await?;
    populate(plan, s, "pgbench_tellers", NTELLERS * scale, &tpcb::Tellers).await?;
    populate(
        plan,
        s,
        "pgbench_accounts",
        NACCOUNTS * scale,
        &tpcb::Accounts,
    )
    .await?;
    exec(s, "commit").await
}

/// pgbench's `initPopulateTable`: COPY (FREEZE from 14 on, for an ordinary table), a progress
/// line every 100,000 rows (with `-q`: every 5 s), on one line when standard error is a
/// terminal.
async fn populate(
    plan: &InitPlan,
    s: &mut Session,
    table: &str,
    total: u64,
    rows: &dyn RowSource,
) -> Result<()> {
    let relkind = s
        .simple_query(&format!(
            "select relkind from pg_catalog.pg_class where oid = '{table}'::regclass"
        ))
        .await
        .map_err(|e| query_failed(e, table))?;
    let ordinary = relkind
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .as_deref()
        == Some("r");
    let sql = if s.server_version_num() >= 140000 && ordinary {
        format!("copy {table} from stdin with (freeze on)")
    } else {
        format!("copy {table} from stdin")
    };
    if let Err(e) = s.copy_in(&sql).await {
        return Err(Failure::setup(
            format!("unexpected copy in result: {e}"),
            "",
        ));
    }
    let tty = unsafe { libc::isatty(2) } == 1;
    let eol = if tty { '\r' } else { '\n' };
    let start = Instant::now();
    let mut buf = Vec::with_capacity(64 * 1024);
    let (mut chars, mut prev_chars) = (0usize, 0usize);
    let mut log_interval = 1.0f64;
    for k in 0..total {
        rows.write_row(k, &mut buf);
        if buf.len() >= 60 * 1024 {
            s.copy_data(&buf).await?;
            buf.clear();
            if interrupt::requested() {
                let _ = s.copy_fail("canceled").await;
                return Err(Failure::setup("initialization interrupted", ""));
            }
        }
        let j = k + 1;
        let report = if !plan.quiet {
            j % 100_000 == 0
        } else if j % 100 == 0 {
            let elapsed = start.elapsed().as_secs_f64();
            let due = j == total || elapsed >= log_interval * LOG_STEP_SECONDS;
            if due {
                log_interval = (elapsed / LOG_STEP_SECONDS).ceil();
            }
            due
        } else {
            false
        };
        if report {
            let elapsed = start.elapsed().as_secs_f64();
            let remaining = (total - j) as f64 * elapsed / j as f64;
            let line = format!(
                "{j} of {total} tuples ({}%) of {table} done (elapsed {elapsed:.2} s, remaining {remaining:.2} s)",
                j * 100 / total
            );
            chars = line.len();
            let pad = " ".repeat(prev_chars.saturating_sub(chars));
            eprint!("{line}{pad}{eol}");
            prev_chars = chars;
        }
    }
    if chars != 0 && tty {
        eprint!("{}\r", " ".repeat(chars));
    }
    let _ = std::io::stderr().flush();
    s.copy_data(&buf).await?;
    s.copy_finish()
        .await
        .map_err(|e| Failure::setup(format!("PQendcopy failed: {e}"), ""))?;
    Ok(())
}

/// pgbench's `initGenerateDataServerSide`.
async fn server_side(opts: &InitOptions, s: &mut Session) -> Result<()> {
    let scale = opts.scale as u64;
    exec(s, "begin").await?;
    exec(s, TRUNCATE_SQL).await?;
    exec(
        s,
        &format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            NBRANCHES * scale
        ),
    )
    .await?;
    exec(
        s,
        &format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {NTELLERS} + 1, 0 from generate_series(1, {}) as tid",
            NTELLERS * scale
        ),
    )
    .await?;
    exec(
        s,
        &format!(
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {NACCOUNTS} + 1, 0, '' from generate_series(1, {}) as aid",
            NACCOUNTS * scale
        ),
    )
    .await?;
    exec(s, "commit").await
}
