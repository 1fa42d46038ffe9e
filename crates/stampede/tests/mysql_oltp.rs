//! sysbench's OLTP family on MariaDB (issue 15): `stampede sysbench --db-driver=mysql` with
//! sysbench 1.0.20's command lines, and `stampede init oltp` / `run oltp_*` with a `mysql://`
//! target, against private MariaDB servers the tests start.
//!
//! What is checked: the tables are sysbench's (SHOW CREATE TABLE of stampede's prepare equals
//! sysbench's own), each tool runs on the other's tables, every test's statements per
//! transaction as the server counts them (Com_* deltas) equal sysbench's, every run's commit
//! count (Com_commit) and row counts pass, and bad input gets a clear error.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::outcome as output;
use common::SYSBENCH_TESTS;
use testkit::MariaDb;

/// sysbench's mysql driver options for `db` on `m`, over TCP as root.
fn driver(m: &MariaDb, db: &str) -> Vec<String> {
    vec![
        "--db-driver=mysql".into(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={}", m.port()),
        "--mysql-user=root".into(),
        format!("--mysql-db={db}"),
    ]
}

/// `stampede sysbench TEST ... CMD` (prog "stampede") or `sysbench TEST ... CMD`.
fn sb(prog: &str, m: &MariaDb, db: &str, args: &[&str]) -> (i32, String, String) {
    let mut c = if prog == "stampede" {
        let mut c = Command::new(env!("CARGO_BIN_EXE_stampede"));
        c.arg("sysbench");
        c
    } else {
        Command::new("sysbench")
    };
    output(c.args(driver(m, db)).args(args))
}

fn stampede(args: &[&str]) -> (i32, String, String) {
    output(Command::new(env!("CARGO_BIN_EXE_stampede")).args(args))
}

/// The server's global status counters.
fn status(m: &MariaDb) -> BTreeMap<String, i64> {
    m.sql("SHOW GLOBAL STATUS LIKE 'Com\\_%'")
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('\t')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The statement counters that a transaction moves, per transaction, over `events` events.
fn per_txn(
    before: &BTreeMap<String, i64>,
    after: &BTreeMap<String, i64>,
    events: i64,
) -> Vec<(String, f64)> {
    const WATCHED: &[&str] = &[
        "Com_begin",
        "Com_commit",
        "Com_rollback",
        "Com_select",
        "Com_update",
        "Com_insert",
        "Com_delete",
        "Com_stmt_execute",
    ];
    WATCHED
        .iter()
        .map(|k| {
            let d = after.get(*k).copied().unwrap_or(0) - before.get(*k).copied().unwrap_or(0);
            (k.to_string(), d as f64 / events as f64)
        })
        .collect()
}

fn create_table(m: &MariaDb, db: &str) -> String {
    m.sql(&format!("SHOW CREATE TABLE `{db}`.sbtest1"))
        .replace(&format!("`{db}`."), "")
        // The next AUTO_INCREMENT value depends on the rows, not the schema.
        .split(" AUTO_INCREMENT=")
        .map(|p| p.split_once(' ').map_or(p, |(_, rest)| rest))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One server of its own: the Com_* counters are global, so nothing else may run on it.
#[test]
fn sysbench_and_stampede_share_tables_and_send_the_same_statements() {
    let m = MariaDb::start(&[]);
    m.fresh_database("sb_sysbench");
    m.fresh_database("sb_stampede");
    let size = ["--tables=2", "--table-size=500"];
    const EVENTS: i64 = 60;
    for (test, (r, w, o)) in SYSBENCH_TESTS {
        // Each tool prepares its own database; the schemas are the same.
        for (prog, db) in [("sysbench", "sb_sysbench"), ("stampede", "sb_stampede")] {
            let (code, out, err) = sb(prog, &m, db, &[&[*test][..], &size, &["prepare"]].concat());
            assert_eq!(code, 0, "{prog} {test} prepare\n{out}\n{err}");
        }
        assert_eq!(
            create_table(&m, "sb_sysbench"),
            create_table(&m, "sb_stampede"),
            "{test}: the tables differ"
        );
        let rows = m.sql("SELECT COUNT(*), SUM(id) FROM sb_stampede.sbtest2");
        assert_eq!(rows.trim(), "500\t125250", "{test}: stampede's rows");

        // Each tool runs on the other's tables, the same events on one thread; the server
        // counts the same statements per transaction.
        let mut counts = Vec::new();
        for (prog, db) in [("stampede", "sb_sysbench"), ("sysbench", "sb_stampede")] {
            let events = format!("--events={EVENTS}");
            let before = status(&m);
            let (code, out, err) = sb(
                prog,
                &m,
                db,
                &[
                    &[*test][..],
                    &size,
                    &[&events, "--time=0", "--threads=1", "run"],
                ]
                .concat(),
            );
            let after = status(&m);
            assert_eq!(code, 0, "{prog} {test} run\n{out}\n{err}");
            assert!(
                out.contains(&format!("transactions:                        {EVENTS} ")),
                "{prog} {test}: {EVENTS} transactions\n{out}"
            );
            let q = |class: &str| -> u64 {
                let l = out
                    .lines()
                    .find(|l| l.trim_start().starts_with(class))
                    .unwrap_or_else(|| panic!("{prog} {test}: no {class}\n{out}"));
                l.split_whitespace().last().unwrap().parse().unwrap()
            };
            // sysbench counts a write that changed no row as "other" (drv_mysql.c: no result
            // set and no affected rows), so only their sum is fixed: oltp_delete's random ids
            // repeat under --rand-type=special.
            assert_eq!(
                (q("read:"), q("write:") + q("other:")),
                (r * EVENTS as u64, (w + o) * EVENTS as u64),
                "{prog} {test}: queries by class"
            );
            counts.push(per_txn(&before, &after, EVENTS));
        }
        assert_eq!(
            counts[0], counts[1],
            "{test}: statements per transaction as the server counts them (stampede, sysbench)"
        );
        for (prog, db) in [("sysbench", "sb_sysbench"), ("stampede", "sb_stampede")] {
            let (code, out, err) = sb(prog, &m, db, &[&[*test][..], &size, &["cleanup"]].concat());
            assert_eq!(code, 0, "{prog} {test} cleanup\n{out}\n{err}");
        }
    }
    // The two tables per database are gone again.
    assert_eq!(
        m.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema LIKE 'sb\\_%'")
            .trim(),
        "0"
    );
}

/// `stampede init oltp` and `run oltp_*` with a mysql:// target: every test's commit count
/// (Com_commit) and row counts pass, or the commit count says why it cannot be exact, in every
/// I/O mode (a blocking socket per client, the io_uring ring, epoll): one session code, the
/// same exact counts.
#[test]
fn every_oltp_run_on_mariadb_passes_its_checks() {
    let m = MariaDb::shared();
    m.fresh_database("sb_native");
    let url = m.tcp_url("root", None, "sb_native");
    let err = common::init_oltp(&url, &["--tables", "2", "--table-size", "1000"]);
    assert!(err.contains("multi-row INSERTs"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let mut modes = vec![
        ("threads", "threads (a blocking socket per client"),
        ("epoll", "epoll (--io epoll)"),
    ];
    match sut::ring::unavailable() {
        None => modes.push(("uring", "io_uring (")),
        Some(why) => eprintln!("io_uring is not available here ({why}): its runs are left out"),
    }
    for ((test, (_, _, other)), (mode, want_io)) in SYSBENCH_TESTS
        .iter()
        .flat_map(|t| modes.iter().map(move |m| (t, *m)))
    {
        let json = dir.path().join(format!("{test}-{mode}.json"));
        let (code, out, err) = stampede(&[
            "run",
            test,
            "-d",
            &url,
            "--tables",
            "2",
            "--table-size",
            "1000",
            "-c",
            "4",
            "-t",
            "40",
            "--io",
            mode,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{test} --io {mode}\n{out}\n{err}");
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let checks = r["checks"].as_array().unwrap();
        let status = |name: &str| -> (String, String) {
            let c = checks
                .iter()
                .find(|c| c["name"] == name)
                .unwrap_or_else(|| panic!("{test}: no {name} check in {checks:?}"));
            (
                c["status"].as_str().unwrap().to_string(),
                c["detail"].as_str().unwrap_or("").to_string(),
            )
        };
        let (commit, detail) = status("commit count");
        if *other > 0 {
            assert_eq!(commit, "passed", "{test}: {detail}");
            assert!(
                detail.contains("Com_commit moved by 160 = 160"),
                "{test}: {detail}"
            );
        } else {
            // Autocommitted statements: Com_commit does not count them, and the check says so.
            assert_eq!(commit, "skipped", "{test}: {detail}");
            assert!(detail.contains("autocommitted"), "{test}: {detail}");
        }
        let (rows, detail) = status("row counts");
        assert_eq!(rows, "passed", "{test}: {detail}");
        // The mode asked for is the one that ran.
        let io = r["connections"]["setup"]["socket_io"]
            .as_str()
            .unwrap_or("");
        assert!(io.starts_with(want_io), "{test} --io {mode}: {io}");
        assert!(
            r["environment"]["server"]["settings"]["innodb_buffer_pool_size"].is_string(),
            "{test}: MySQL's settings recorded"
        );
    }
}

#[test]
fn bad_mysql_targets_get_a_clear_error() {
    let m = MariaDb::shared();
    m.sql(
        "CREATE USER IF NOT EXISTS 'sbbad'@'%' IDENTIFIED BY 'right-pw'; \
         GRANT ALL ON *.* TO 'sbbad'@'%'",
    );
    m.fresh_database("sb_bad");
    // A wrong password: refused, said so, the password never printed.
    let url = m.tcp_url("sbbad", Some("Wr0ng-s3cret"), "sb_bad");
    let (code, out, err) = stampede(&["run", "oltp_point_select", "-d", &url, "-T", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("Access denied"), "{err}");
    assert!(
        !out.contains("Wr0ng-s3cret") && !err.contains("Wr0ng-s3cret"),
        "{out}\n{err}"
    );

    // An unknown database.
    let url = m.tcp_url("root", None, "no_such_db");
    let (code, _, err) = stampede(&["run", "oltp_point_select", "-d", &url, "-T", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("Unknown database 'no_such_db'"), "{err}");

    // No tables yet: what to do.
    let url = m.tcp_url("root", None, "sb_bad");
    let (code, _, err) = stampede(&["run", "oltp_read_only", "-d", &url, "-T", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("stampede init oltp"), "{err}");

    // sysbench's mysql options without --db-driver=mysql, and PostgreSQL's with it.
    let (code, _, err) = stampede(&["run", "oltp_read_only", "--mysql-host=127.0.0.1"]);
    assert_ne!(code, 0);
    assert!(err.contains("need --db-driver=mysql"), "{err}");
    let (code, _, err) = stampede(&[
        "run",
        "oltp_read_only",
        "--db-driver=mysql",
        "--pgsql-host=127.0.0.1",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--pgsql-host is a pgsql option"), "{err}");

    // pgbench's workloads without their tables: what to do; pgbench's drop-in, a PostgreSQL
    // client: refused (tests/tpcb_mysql.rs runs them on MySQL).
    let url = m.tcp_url("root", None, "sb_bad");
    let (code, _, err) = stampede(&["run", "tpcb-like", "-d", &url, "-T", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("stampede init tpcb"), "{err}");
    let (code, _, err) = stampede(&["pgbench", "-d", &url, "-T", "1"]);
    assert_eq!(code, 1, "pgbench's exit status for bad input");
    assert!(err.contains("pgbench's drop-in"), "{err}");
}

/// max_connections reached and the server going away mid-run: clear errors, results kept.
#[test]
fn a_full_or_vanishing_server_is_reported() {
    let m = MariaDb::start(&["--max-connections=5"]);
    m.fresh_database("sb_small");
    let url = m.tcp_url("root", None, "sb_small");
    common::init_oltp(&url, &["--tables", "1", "--table-size", "200", "-j", "1"]);
    let (code, _, err) = stampede(&[
        "run",
        "oltp_point_select",
        "-d",
        &url,
        "-c",
        "12",
        "-T",
        "2",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("max_connections"), "{err}");

    // The server stops during a 20 s run: the clients abort with the connection lost, and what
    // was measured before is printed.
    let child = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args([
            "run",
            "oltp_point_select",
            "-d",
            &url,
            "-c",
            "2",
            "-T",
            "20",
            "--no-check",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the clients to be connected (their sessions show in the processlist).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while m
        .try_sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = 'sb_small'")
        .map_or(0, |s| s.trim().parse::<i32>().unwrap_or(0))
        < 2
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the clients never connected"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    m.stop();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_ne!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("aborted clients: 2 of 2") || stderr.contains("aborted"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("number of transactions actually processed"),
        "{stdout}\n{stderr}"
    );
}

/// `stampede run` observes a MySQL target as a PostgreSQL one (issue 15, item 5): the summary's
/// server lines are InnoDB's (buffer pool, redo log, history list), never PostgreSQL's, the
/// top statements are the workload's prepared statements, the JSON says what was observed, and
/// the commit check is not disturbed by the observer.
#[test]
fn a_run_on_mariadb_is_observed_with_innodb_figures() {
    let m = MariaDb::start(&[
        "--performance-schema=ON",
        "--performance-schema-consumer-events-statements-current=ON",
    ]);
    m.fresh_database("sb_observed");
    let url = m.tcp_url("root", None, "sb_observed");
    let size = ["--tables", "2", "--table-size", "1000"];
    common::init_oltp(&url, &size);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("observed.json");
    let html = dir.path().join("observed.html");
    let (code, out, err) = stampede(
        &[
            &["run", "oltp_read_write", "-d", &url, "-c", "2", "-T", "2"][..],
            &size,
            &[
                "--json",
                json.to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("observed on PostgreSQL only"), "{err}");
    let section = &out[out
        .find("where the time went")
        .unwrap_or_else(|| panic!("no server section\n{out}\n{err}"))..];
    for line in [
        "  database load by wait event (average active sessions):",
        "  top statements by total execution time:",
        "SELECT c FROM sbtest1 WHERE id=?",
        "  waits by time (performance_schema, client sessions over the run):",
        // oltp_read_write's delete+insert pairs may deadlock on InnoDB's gap locks: the
        // counts vary, the line does not.
        "  server: ",
        " rollbacks, ",
        " deadlocks, ",
        "buffer pool hits ",
        "  redo log ",
        "history list length up to ",
        "  threads: up to ",
        "  observer: ",
    ] {
        assert!(section.contains(line), "no {line:?} in\n{section}");
    }
    for pg in ["WAL", "checkpoints", "temp files", "ungranted"] {
        assert!(!section.contains(pg), "{pg} in a MariaDB run\n{section}");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let sm = &r["server_metrics"];
    assert_eq!(sm["product"], "MariaDB");
    assert!(sm["deltas"]["mysql.Com_commit"].as_f64().unwrap() > 0.0);
    assert!(!sm["statements"].as_array().unwrap().is_empty());
    assert!(!sm["wait_times"].as_array().unwrap().is_empty());
    let checks = r["checks"].as_array().unwrap();
    let commit = checks.iter().find(|c| c["name"] == "commit count").unwrap();
    assert_eq!(commit["status"], "passed", "{commit}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("· MariaDB ") && page.contains("id=\"wait-times\""));
    assert!(!page.contains("pg_stat_database"));

    a_sweep_step_that_loses_clients_says_so(&m, &url, &size);
}

/// Issue 30: a sweep whose middle step loses clients to error 1461. oltp_point_select on two
/// tables prepares two statements per client: with `max_prepared_stmt_count` at 5, one and two
/// clients fit and eight cannot (at most two of them get both statements). The step's row in
/// the text, the JSON and the HTML carries its aborted clients and why, its failures by kind
/// and its failed checks; the knee is not placed on it; and the sweep's exit status is 2 though
/// its last step (the result's own figures) lost nobody.
fn a_sweep_step_that_loses_clients_says_so(m: &MariaDb, url: &str, size: &[&str]) {
    m.sql("SET GLOBAL max_prepared_stmt_count = 5");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let html = dir.path().join("sweep.html");
    let (code, out, err) = stampede(
        &[
            &[
                "run",
                "oltp_point_select",
                "-d",
                url,
                "--sweep",
                "clients=1,8,2",
            ][..],
            &["-T", "2", "--warmup", "0", "--no-observe"],
            size,
            &[
                "--json",
                json.to_str().unwrap(),
                "--html",
                html.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    m.sql("SET GLOBAL max_prepared_stmt_count = DEFAULT");
    assert_eq!(code, 2, "a step lost clients\n{out}\n{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let steps = r["sweep"]["steps"].as_array().unwrap();
    let values: Vec<&str> = steps.iter().map(|x| x["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["1", "8", "2"]);
    let aborted: Vec<u64> = (steps.iter())
        .map(|x| x["aborted_clients"].as_u64().unwrap())
        .collect();
    assert_eq!((aborted[0], aborted[2]), (0, 0), "{aborted:?}");
    assert!((6..=8).contains(&aborted[1]), "{aborted:?}");
    let eight = &steps[1];
    let aborts = eight["aborts"].as_array().unwrap();
    assert!(
        aborts.iter().all(|a| a["reason"]
            .as_str()
            .unwrap()
            .contains("max_prepared_stmt_count")),
        "{aborts:?}"
    );
    let by_reason: u64 = aborts.iter().map(|a| a["clients"].as_u64().unwrap()).sum();
    assert_eq!(by_reason, aborted[1]);
    let kinds = &eight["failures_by_kind"];
    let sum = ["serialization", "deadlock", "other"]
        .iter()
        .map(|k| kinds[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(sum, eight["failures"].as_u64().unwrap(), "{eight}");
    assert!(eight["failed_checks"].is_array(), "{eight}");
    // The result's own figures are the last step's, which lost nobody.
    assert!(r["connections"]["aborted"].as_array().unwrap().is_empty());
    // Never the knee: the aborted step is left out, and the one before it is compared with
    // the one after.
    assert_ne!(r["sweep"]["knee"]["value"], "8", "{}", r["sweep"]["knee"]);
    assert_ne!(r["sweep"]["knee"]["index"], 1);

    // The text: the step's row and what went wrong under it.
    let lost = format!("{} of 8", aborted[1]);
    let row = out
        .lines()
        .find(|l| l.starts_with("  8 ") && l.ends_with(&lost))
        .unwrap_or_else(|| panic!("no row for 8 clients ending in {lost:?}\n{out}"));
    assert!(!row.contains("knee"), "{row}");
    assert!(
        out.contains(&format!("{row}\n    aborted: {} clients: ", aborted[1]))
            || out.contains(&format!("{row}\n    failures by kind: ")),
        "{out}"
    );
    assert!(out.contains("max_prepared_stmt_count"), "{out}");
    assert!(
        out.contains("not considered for the knee (clients aborted or checks failed): 8\n"),
        "{out}"
    );
    assert!(
        out.contains("  clients=8: ") && out.contains(&format!(", {lost} clients aborted")),
        "the step's own line says it as it ends\n{out}"
    );
    // The HTML: the row, marked, with the count and the reason.
    let page = std::fs::read_to_string(&html).unwrap();
    let at = page.find("<td>8</td>").expect("a row for 8 clients");
    let tr = &page[page[..at].rfind("<tr").unwrap()..];
    let tr = &tr[..tr.find("</tr>").unwrap()];
    assert!(
        tr.starts_with("<tr class=\"unsound\">")
            && tr.contains(&format!("<td>{lost}</td>"))
            && tr.contains("max_prepared_stmt_count"),
        "{tr}"
    );
    assert!(page.contains("Not considered for the knee: clients=8"));
}

/// The embedded MariaDB kept by `server start --mysql`: on its socket only by default; with
/// `--set bind_address=127.0.0.1`, on TCP, and the URL `server start` prints (quoted for a
/// shell, with the random password) is what `init` and `run` use. The password appears on that
/// line only: never on stderr, never in a run's output.
#[test]
fn server_start_mysql_prints_a_url_that_works_and_no_run_prints_its_password() {
    let parent = tempfile::Builder::new()
        .prefix("stampede-srv-")
        .tempdir()
        .unwrap();
    if let Some(u) = sut::embedded::os::server_account("MariaDB", "mysql").unwrap() {
        sut::embedded::os::chown(parent.path(), &u).unwrap();
    }
    let data = parent.path().join("m");
    let data = data.to_str().unwrap();
    let start = |set: &[&str]| {
        let mut args = vec!["server", "start", "--mysql", "--data-dir", data];
        args.extend(set);
        stampede(&args)
    };
    let stop = || stampede(&["server", "stop", "--mysql", "--data-dir", data]);

    let (code, out, err) = start(&[]);
    assert_eq!(code, 0, "{err}");
    let socket = format!("{data}/mysqld.sock");
    assert_eq!(
        out.trim(),
        format!("-d 'mysql://root@localhost/stampede?socket={socket}&ssl-mode=DISABLED'"),
        "{err}"
    );
    assert!(err.contains("skip_networking=ON"), "{err}");
    assert_eq!(stop().0, 0);

    let (code, out, err) = start(&["--set", "bind_address=127.0.0.1"]);
    assert_eq!(code, 0, "{err}");
    let url = out
        .trim()
        .strip_prefix("-d '")
        .and_then(|u| u.strip_suffix('\''))
        .unwrap_or_else(|| panic!("not a quoted -d URL: {out}"))
        .to_string();
    let cnf = std::fs::read_to_string(format!("{data}/stampede.cnf")).unwrap();
    let password = cnf
        .lines()
        .find_map(|l| l.strip_prefix("password = "))
        .expect("a password in stampede.cnf");
    assert!(
        url.starts_with(&format!("mysql://stampede:{password}@127.0.0.1:")),
        "{url}"
    );
    assert!(!err.contains(password), "the password on stderr: {err}");

    let shape = ["--tables", "1", "--table-size", "100"];
    common::init_oltp(&url, &shape);
    let mut run = vec![
        "run",
        "oltp_point_select",
        "-d",
        &url,
        "-t",
        "20",
        "--no-observe",
    ];
    run.extend(shape);
    let (code, out, err) = stampede(&run);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASSED"), "{out}");
    assert!(
        !out.contains(password) && !err.contains(password),
        "{out}{err}"
    );
    assert_eq!(stop().0, 0);
}
