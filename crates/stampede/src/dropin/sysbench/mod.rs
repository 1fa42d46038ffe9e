//! `stampede sysbench`: sysbench 1.0.20's command line for its database tests (`oltp_*`,
//! `bulk_insert`), its output on standard output (sysbench prints its reports, and its FATAL
//! errors, there), its messages on standard error where sysbench puts them, and its exit
//! statuses (0, or 1 for any failure).
//!
//! `run` is a [`crate::plan::Plan`] like any stampede run, in sysbench's conventions: its
//! defaults (1 thread, 10 s, prepared statements), its progress lines and summary blocks, no
//! checks or server watching. `prepare` loads the tables with stampede's loader (in parallel
//! across tables and within them, keys and the index after the data) but keeps sysbench's
//! rules: existing tables are an error, never dropped; no VACUUM afterwards. Its lines are
//! sysbench's, per step rather than per table. `cleanup` drops `sbtest1..N`. `prewarm` is
//! MySQL-only in sysbench, as here.
//!
//! Both drivers: `--db-driver=pgsql` with the `--pgsql-*` options, and `--db-driver=mysql`
//! (sysbench's default) with the `--mysql-*` options, as sysbench's mysql driver reads them:
//! `--mysql-host` and `--mysql-port` (and `--mysql-socket`) are lists, connections go round
//! robin over the hosts, `localhost` without a socket or port is the default socket.

mod args;

use std::sync::Arc;

use anyhow::Result;
use load::Event;
use sut::conninfo::Password;

use self::args::{on, Args, GENERAL, OLTP};
use crate::families::sysbench::DistKey;
use crate::families::RunArgs;
use crate::plan::{Frontend, Plan};
use crate::runtime;
use crate::targeting::TargetArgs;
use crate::{interrupt, targeting};

/// sysbench's banner, the first line of everything it prints.
pub const BANNER: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)";

/// sysbench's FATAL: on standard output, exit 1.
fn fatal(msg: &str) -> Result<i32> {
    // Every message passes through redaction, as stampede's own errors do (`console::report`).
    println!("FATAL: {}", sut::conninfo::redact(msg));
    Ok(1)
}

/// The tests stampede runs, and sysbench's built-in ones it does not.
enum Test {
    Oltp(&'static str),
    BulkInsert,
}

fn test_named(name: &str) -> Option<Test> {
    // A path to sysbench's script names its test too (`/usr/share/sysbench/oltp_read_write.lua`).
    let base = std::path::Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(name);
    let base = base.strip_suffix(".lua").unwrap_or(base);
    if base == crate::families::sysbench::plan::BULK_INSERT {
        return Some(Test::BulkInsert);
    }
    crate::workloads::find(base)
        .filter(|w| w.family == crate::workloads::Family::Sysbench)
        .map(|w| Test::Oltp(w.name))
}

pub fn main(argv: Vec<String>) -> Result<i32> {
    let mut a = match args::parse(&argv) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("{msg}");
            return Ok(1);
        }
    };
    if on(&a.get("help")) {
        print!("{}", help());
        return Ok(0);
    }
    if on(&a.get("version")) {
        println!("sysbench 1.0.20");
        return Ok(0);
    }
    println!("{BANNER}\n");
    let Some(name) = a.test.clone() else {
        // sysbench reads a Lua script from standard input then: there is none to run here.
        return Ok(0);
    };
    let test = match test_named(&name) {
        Some(t) => t,
        None if ["fileio", "cpu", "memory", "threads", "mutex"].contains(&name.as_str()) => {
            return fatal(&format!(
                "'{name}' is one of sysbench's built-in tests; stampede sysbench runs the \
                 database tests (oltp_*, bulk_insert): run it with sysbench itself"
            ))
        }
        None => {
            return fatal(&format!(
                "Cannot find benchmark '{name}': no such built-in test, file or module"
            ))
        }
    };
    let table = match test {
        Test::Oltp(_) => OLTP,
        Test::BulkInsert => &[],
    };
    if let Err(msg) = a.take_test_options(table) {
        eprintln!("{msg}");
        return Ok(1);
    }
    let command = a.command.clone();
    match (command.as_deref(), &test) {
        (None, Test::BulkInsert) => Ok(0),
        (None, Test::Oltp(_)) => fatal(
            "/usr/share/sysbench/oltp_common.lua:28: Command is required. Supported commands: \
             prepare, prewarm, run, cleanup, help",
        ),
        (Some("help"), Test::Oltp(t)) => {
            print!("{t} options:\n{}\n", args::help_lines(OLTP, true));
            Ok(0)
        }
        (Some("help"), Test::BulkInsert) => {
            println!("'bulk_insert' test does not implement the 'help' command.");
            Ok(1)
        }
        (Some(c @ ("prepare" | "cleanup" | "run" | "prewarm")), _) => {
            if let Some(code) = driver(&a)? {
                return Ok(code);
            }
            let target = match target_of(&a) {
                Ok(t) => t,
                Err(e) => return fatal(&format!("{e:#}")),
            };
            match c {
                "prepare" => prepare(&a, &test, &target),
                "cleanup" => cleanup(&a, &test, &target),
                "prewarm" if is_mysql(&a) => prewarm(&a, &test, &target),
                "prewarm" => fatal(
                    "`sysbench.cmdline.call_command' function failed: \
                     /usr/share/sysbench/oltp_common.lua:100: prewarm is currently MySQL only",
                ),
                _ => run(a, &test, target),
            }
        }
        (Some(other), _) => {
            eprintln!("Unknown command: {other}");
            Ok(1)
        }
    }
}

/// `--db-driver`: pgsql or mysql (sysbench's default).
fn driver(a: &Args) -> Result<Option<i32>> {
    match a.get("db-driver").as_str() {
        "pgsql" | "mysql" => Ok(None),
        d => fatal(&format!("invalid database driver name: '{d}'")).map(Some),
    }
}

fn is_mysql(a: &Args) -> bool {
    a.get("db-driver") == "mysql"
}

/// The mysql driver's endpoints (`drv_mysql.c`): one per `--mysql-host` (or per
/// `--mysql-socket` when sockets are given), each with the `--mysql-port` at the same position
/// (the ports cycle when fewer); user, password and database from their options (sysbench's
/// defaults `sbtest`, empty, `sbtest`); `--mysql-ssl=on` requires TLS, off disables it.
fn mysql_endpoints(a: &Args) -> Result<Vec<sut::mysql::Conninfo>> {
    use sut::mysql::{Conninfo, Password, SslMode};
    let list = |k: &str| -> Vec<String> {
        a.get(k)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let (hosts, ports, sockets) = (list("mysql-host"), list("mysql-port"), list("mysql-socket"));
    let mut base = Conninfo::new();
    base.user = a.get("mysql-user");
    let password = a.get("mysql-password");
    base.password = (!password.is_empty()).then_some(Password(password));
    base.database = Some(a.get("mysql-db")).filter(|d| !d.is_empty());
    base.ssl_mode = if on(&a.get("mysql-ssl")) {
        SslMode::Required
    } else {
        SslMode::Disabled
    };
    let port_at = |i: usize| -> Result<u16> {
        let p = ports
            .get(i % ports.len().max(1))
            .map_or("3306", |s| s.as_str());
        p.parse()
            .map_err(|_| anyhow::anyhow!("Invalid value for --mysql-port: '{p}'"))
    };
    if !sockets.is_empty() {
        return Ok(sockets
            .iter()
            .map(|s| {
                let mut c = base.clone();
                c.host = "localhost".into();
                c.socket = Some(s.into());
                c
            })
            .collect());
    }
    let hosts = if hosts.is_empty() {
        vec!["localhost".to_string()]
    } else {
        hosts
    };
    hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut c = base.clone();
            c.host = h.clone();
            c.port = port_at(i)?;
            // libmysqlclient: "localhost" is the unix socket unless told otherwise.
            c.socket = (h == "localhost" && !a.opts.contains_key("mysql-port"))
                .then(|| sut::mysql::DEFAULT_SOCKET.into());
            Ok(c)
        })
        .collect()
}

/// The pgsql driver's connection, with sysbench's defaults (localhost, 5432, sbtest, sbtest):
/// given explicitly, as sysbench hands them to libpq, so PGHOST and friends do not apply (a
/// password left empty falls back to PGPASSWORD and the password file, as libpq does).
fn target_of(a: &Args) -> Result<TargetArgs> {
    if is_mysql(a) {
        return Ok(TargetArgs {
            mysql: Some(mysql_endpoints(a)?),
            ..Default::default()
        });
    }
    let password = a.get("pgsql-password");
    Ok(TargetArgs {
        host: Some(a.get("pgsql-host")),
        port: Some(a.get("pgsql-port")),
        username: Some(a.get("pgsql-user")),
        dbname: Some(a.get("pgsql-db")),
        password: (!password.is_empty()).then_some(Password(password)),
        ..Default::default()
    })
}

fn tables(a: &Args, test: &Test) -> u32 {
    match test {
        Test::BulkInsert => a.int("threads").max(1) as u32,
        Test::Oltp(_) => a.int("tables").max(0) as u32,
    }
}

/// `prepare`: sysbench's tables, which must not exist yet (sysbench's `CREATE TABLE` fails on
/// an existing one).
fn prepare(a: &Args, test: &Test, t: &TargetArgs) -> Result<i32> {
    let n = tables(a, test);
    let conn = targeting::resolve_remote(t)?;
    let rt = runtime::setup()?;
    // The first connection (and the look for existing tables) is abandoned by a signal: a
    // host that never answers must not hold Ctrl-C up for the connect timeout.
    let existing = rt.block_on(interrupt::or_interrupted(async {
        let mut s = sut::Session::connect(&conn).await?;
        let r = load::oltp::existing_tables(&mut s, n).await;
        s.close().await;
        anyhow::Ok(r?)
    }));
    let existing = match existing {
        Ok(e) => e,
        Err(e) if interrupt::count() > 0 => return Err(e),
        Err(e) => return fatal(&format!("Connection to database failed: {e:#}")),
    };
    if let Some(first) = existing.first() {
        println!("Creating table 'sbtest{first}'...");
        if is_mysql(a) {
            return fatal(&format!(
                "mysql_drv_query() returned error 1050 (Table 'sbtest{first}' already exists) \
                 for query 'CREATE TABLE sbtest{first}(...)'\n\
                 FATAL: `sysbench.cmdline.call_command' function failed: \
                 /usr/share/sysbench/oltp_common.lua:197: SQL error, errno = 1050, state = \
                 '42S01': Table 'sbtest{first}' already exists"
            ));
        }
        return fatal(&format!(
            "PQexec() failed: 7 relation \"sbtest{first}\" already exists\n\
             FATAL: `sysbench.cmdline.call_command' function failed: \
             /usr/share/sysbench/oltp_common.lua:197: SQL error, errno = 0, state = '42P07': \
             relation \"sbtest{first}\" already exists"
        ));
    }
    if let Test::BulkInsert = test {
        for i in 1..=n {
            println!("Creating table 'sbtest{i}'...");
        }
        return Ok(match rt.block_on(load::oltp::init_bulk(&conn, n)) {
            Ok(()) => 0,
            Err(e) => fatal(&format!("{e}"))?,
        });
    }
    let size = a.int("table-size").max(0) as u64;
    let dist = match workload::oltp::Dist::new(
        workload::oltp::RandType::parse(&a.get("rand-type")).map_err(anyhow::Error::msg)?,
        a.int("rand-spec-iter") as u32,
        a.int("rand-spec-pct") as u32,
        a.int("rand-spec-res") as u32,
        a.get("rand-pareto-h").parse().unwrap_or(0.2),
        a.get("rand-zipfian-exp").parse().unwrap_or(0.8),
    ) {
        Ok(d) => d,
        Err(e) => return fatal(&e),
    };
    let opts = load::oltp::InitOptions {
        tables: n,
        table_size: size,
        auto_inc: on(&a.get("auto-inc")),
        create_secondary: on(&a.get("create-secondary")),
        // sysbench's prepare does not vacuum.
        no_vacuum: true,
        key: Arc::new(DistKey(dist)),
        jobs: a.int("threads").max(1) as usize,
        cancel: interrupt::flag(),
        mysql_storage_engine: a.get("mysql-storage-engine"),
        ..Default::default()
    };
    let r = rt.block_on(load::oltp::init(&conn, &opts, &mut |e| {
        if let Event::StepStarted(step) = e {
            for i in 1..=n {
                match *step {
                    "create tables" => println!("Creating table 'sbtest{i}'..."),
                    "client-side generate" => {
                        println!("Inserting {size} records into 'sbtest{i}'")
                    }
                    "secondary indexes" => {
                        println!("Creating a secondary index on 'sbtest{i}'...")
                    }
                    _ => {}
                }
            }
        }
    }));
    match r {
        Ok(_) => Ok(0),
        // sysbench has no handler for SIGINT: the signal ends it, and its shell sees 130, as
        // for an interrupted connection above and `stampede pgbench -i` (issue 35).
        Err(load::LoadError::Interrupted) => Ok(crate::console::EXIT_INTERRUPTED),
        Err(e) => fatal(&sut::conninfo::redact(&e.to_string())),
    }
}

/// `prewarm` (MySQL only, as in sysbench): read each table through its primary key, then
/// through the secondary index, so that both are in the buffer pool (oltp_common.lua's
/// `prewarm_table`, the same two statements).
fn prewarm(a: &Args, test: &Test, t: &TargetArgs) -> Result<i32> {
    let size = a.int("table-size").max(0);
    per_table(a, test, t, |i| {
        println!("Prewarming table sbtest{i}");
        vec![
            format!(
                "SELECT AVG(id) FROM (SELECT * FROM sbtest{i} FORCE KEY (PRIMARY) LIMIT {size}) t"
            ),
            format!(
                "SELECT COUNT(*) FROM (SELECT * FROM sbtest{i} WHERE k LIKE '%0%' LIMIT {size}) t"
            ),
        ]
    })
}

/// `cleanup`: `DROP TABLE IF EXISTS sbtestN` for every table of `--tables`.
fn cleanup(a: &Args, test: &Test, t: &TargetArgs) -> Result<i32> {
    per_table(a, test, t, |i| {
        println!("Dropping table 'sbtest{i}'...");
        vec![format!("DROP TABLE IF EXISTS sbtest{i}")]
    })
}

/// One session on the target; for each table of `--tables` in turn, `statements(i)` (which
/// says what it does, as sysbench does) run in order. sysbench's exit status: 0, or 1 after
/// its FATAL line.
fn per_table(
    a: &Args,
    test: &Test,
    t: &TargetArgs,
    mut statements: impl FnMut(u32) -> Vec<String>,
) -> Result<i32> {
    let n = tables(a, test);
    let conn = targeting::resolve_remote(t)?;
    let rt = runtime::setup()?;
    let r = rt.block_on(async {
        let mut s = sut::Session::connect(&conn).await?;
        for i in 1..=n {
            for sql in statements(i) {
                s.simple_query(&sql).await?;
            }
        }
        s.close().await;
        anyhow::Ok(())
    });
    match r {
        Ok(()) => Ok(0),
        Err(e) => fatal(&sut::conninfo::redact(&format!("{e:#}"))),
    }
}

/// `run`: the plan of a stampede run, from sysbench's options.
fn run(a: Args, test: &Test, target: TargetArgs) -> Result<i32> {
    let threads = a.int("threads");
    if threads < 1 {
        return fatal(&format!("Invalid value for --threads: {threads}."));
    }
    if on(&a.get("histogram")) {
        return fatal(
            "--histogram is not supported by stampede sysbench; `stampede run ... --html FILE` \
             charts the latency distribution",
        );
    }
    if !a.get("report-checkpoints").is_empty() {
        return fatal("--report-checkpoints is not supported by stampede sysbench");
    }
    let mut r = RunArgs {
        workload: Some(match test {
            Test::Oltp(n) => n.to_string(),
            Test::BulkInsert => crate::families::sysbench::plan::BULK_INSERT.to_string(),
        }),
        clients: Some(threads as u32),
        jobs: Some(
            (threads as u32)
                .min(std::thread::available_parallelism().map_or(1, |n| n.get() as u32)),
        ),
        no_check: true,
        no_observe: true,
        random_seed: match a.int("rand-seed") {
            0 => None,
            s => Some(s.to_string()),
        },
        target,
        ..Default::default()
    };
    let events = a.int("events").max(0) as u64;
    let time = a.int("time").max(0) as u64;
    match (events, time) {
        (0, 0) => return fatal("You must provide either --time or --events (or both)"),
        (0, t) => r.time = Some(t),
        (e, 0) => r.sysbench.events = Some(e),
        // sysbench stops at whichever limit comes first; the engine has one stop rule: the
        // events, with the time as the run's bound noted.
        (e, _) => r.sysbench.events = Some(e),
    }
    let rate = a.int("rate");
    r.rate = (rate > 0).then_some(rate as f64);
    let interval = a.int("report-interval");
    r.progress = (interval > 0).then_some(interval as f64);
    let percentile = a.int("percentile");
    r.sysbench.percentile = Some(if percentile == 0 {
        95.0
    } else {
        percentile as f64
    });
    let sb = &mut r.sysbench;
    sb.db_ps_mode = Some(a.get("db-ps-mode"));
    sb.progress_style = Some("sysbench".into());
    if let Test::Oltp(_) = test {
        // bulk_insert draws no random keys; sysbench accepts and ignores its --rand-* there,
        // which stampede's plan would refuse as not applying.
        sb.rand_type = Some(a.get("rand-type"));
        sb.rand_spec_iter = Some(a.int("rand-spec-iter") as u32);
        sb.rand_spec_pct = Some(a.int("rand-spec-pct") as u32);
        sb.rand_spec_res = Some(a.int("rand-spec-res") as u32);
        sb.rand_pareto_h = a.get("rand-pareto-h").parse().ok();
        sb.rand_zipfian_exp = a.get("rand-zipfian-exp").parse().ok();
        let int = |n: &str| Some(a.int(n).max(0) as u32);
        sb.tables = int("tables");
        sb.table_size = int("table-size");
        sb.range_size = int("range-size");
        sb.point_selects = int("point-selects");
        sb.simple_ranges = int("simple-ranges");
        sb.sum_ranges = int("sum-ranges");
        sb.order_ranges = int("order-ranges");
        sb.distinct_ranges = int("distinct-ranges");
        sb.index_updates = int("index-updates");
        sb.non_index_updates = int("non-index-updates");
        sb.delete_inserts = int("delete-inserts");
        sb.range_selects = Some(on(&a.get("range-selects")));
        sb.skip_trx = Some(on(&a.get("skip-trx")));
        sb.auto_inc = Some(on(&a.get("auto-inc")));
    }
    let plan = match Plan::from_run(r, Frontend::Sysbench) {
        Ok(p) => p,
        Err(e) => return fatal(&format!("{e:#}")),
    };
    match crate::run::execute(plan) {
        Ok(0) => Ok(0),
        Ok(130) => Ok(130),
        Ok(_) => Ok(1),
        Err(e) => fatal(&sut::conninfo::redact(&format!("{e:#}"))),
    }
}

/// `sysbench --help`, for the options stampede sysbench reads.
fn help() -> String {
    let pick = |f: &dyn Fn(&str) -> bool| -> Vec<args::Opt> {
        GENERAL.iter().filter(|o| f(o.name)).copied().collect()
    };
    format!(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n\
         General options:\n{}\n\
         Compiled-in database drivers:\n  mysql - MySQL driver\n  pgsql - PostgreSQL driver\n\n\
         mysql options:\n{}\n\
         pgsql options:\n{}\n\
         Tests run by stampede sysbench: oltp_read_write oltp_read_only oltp_write_only \
         oltp_point_select oltp_update_index oltp_update_non_index oltp_insert oltp_delete \
         bulk_insert\n\n\
         See 'sysbench <testname> help' for a list of options for each test.\n",
        args::help_lines(
            &pick(&|n| !n.starts_with("mysql-") && !n.starts_with("pgsql-")),
            false
        ),
        args::help_lines(&pick(&|n| n.starts_with("mysql-")), false),
        args::help_lines(&pick(&|n| n.starts_with("pgsql-")), false),
    )
}
