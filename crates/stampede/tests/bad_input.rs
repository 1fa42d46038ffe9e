//! Bad command lines fail before any connection opens, with a message that names the flag at
//! fault, a non-zero exit, and nothing touched. No server is needed: every case here must fail
//! during validation (the target given, 127.0.0.1:1, would refuse any connection, and a case that
//! reached it would fail with a different message). Output paths are checked against a target
//! that accepts connections and never answers: a case that got past the check would hang there,
//! and the listener would hold its connection.

mod common;

use std::io::ErrorKind;
use std::net::TcpListener;

use common::stampede3 as stampede;
use common::tmpfs;

/// (arguments, text the error must contain)
const CASES: &[(&[&str], &str)] = &[
    (&["run", "-T", "5", "-t", "10"], "cannot be used with"),
    (&["run", "-L", "5"], "--rate"),
    (&["run", "-c", "0"], "-c/--client must be at least 1"),
    (&["run", "-j", "0"], "-j/--jobs must be at least 1"),
    (&["run", "-T", "0"], "-T/--time must be at least 1"),
    (&["run", "-t", "0"], "-t/--transactions must be at least 1"),
    (&["run", "-R", "0"], "-R/--rate must be positive"),
    (&["run", "-R", "-5"], "-R"),
    (
        &["run", "-R", "100", "-L", "0"],
        "-L/--latency-limit must be positive",
    ),
    (&["run", "-P", "-1"], "-P/--progress must be positive"),
    (
        &["run", "-t", "5", "--max-tries", "0"],
        "--max-tries=0 (unlimited) needs -T",
    ),
    (&["run", "-M", "fast"], "invalid value 'fast'"),
    (
        &["run", "-b", "nosuch"],
        "no builtin script found for name \"nosuch\"",
    ),
    (&["run", "-b", "tpcb-like@x"], "invalid weight"),
    (&["run", "-b", "tpcb-like@-1"], "invalid weight"),
    (
        &["run", "-b", "tpcb-like@0", "-b", "select-only@0"],
        "total script weight must not be zero",
    ),
    (&["run", "--random-seed", "abc"], "--random-seed"),
    (
        &["run", "--frobnicate"],
        "unexpected argument '--frobnicate'",
    ),
    (&["run", "-d", "db1", "db2"], "given twice"),
    (
        &["run", "-h", "127.0.0.1", "-p", "1", "--keep-server"],
        "embedded server only",
    ),
    (&["run", "--set", "shared_buffers"], "expected NAME=VALUE"),
    (&["run", "-s", "0"], "-s/--scale must be at least 1"),
    (&["run", "-n", "-v"], "cannot be used with"),
    (
        &["init", "tpcb", "-s", "0"],
        "-s/--scale must be at least 1",
    ),
    (
        &["init", "tpcb", "-F", "5"],
        "--fillfactor must be between 10 and 100",
    ),
    (
        &["init", "tpcb", "-F", "101"],
        "--fillfactor must be between 10 and 100",
    ),
    (
        &[
            "init",
            "tpcb",
            "--partitions",
            "3",
            "--partition-method",
            "list",
        ],
        "invalid value 'list'",
    ),
    (
        &["init", "nosuch"],
        "\"nosuch\" is neither a workload nor a set of tables",
    ),
    (&["init", "tpcb", "-j", "0"], "-j/--jobs must be at least 1"),
    // sysbench's workloads and options.
    (
        &["run", "--embedded", "mydb", "--set", "a=b"],
        "--embedded and a database name",
    ),
    (
        &["init", "tpcb", "--bulk-insert"],
        "--bulk-insert only apply to sysbench's tables (`init oltp`)",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "--db-driver=mysql",
            "--mysql-port=abc",
        ],
        "-h/-p/-U are PostgreSQL's options: with --db-driver=mysql use --mysql-host",
    ),
    (
        &["run", "oltp_point_select", "--db-driver=oracle"],
        "--db-driver=oracle: unknown driver",
    ),
    (
        &["run", "oltp_point_select", "--pgsql-host", "db1"],
        "--pgsql-host and -h/--host give the same setting: give one",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "--pgsql-user",
            "u",
            "-d",
            "x",
            "-U",
            "v",
        ],
        "--pgsql-user and -U/--username give the same setting",
    ),
    (
        &["run", "bulk_insert", "--tables", "4"],
        "--tables do not apply to bulk_insert",
    ),
    (
        &["run", "oltp_point_select", "--db-ps-mode=sometimes"],
        "invalid value 'sometimes'",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "--db-ps-mode=disable",
            "-M",
            "prepared",
        ],
        "--db-ps-mode=disable and -M extended/prepared: give one",
    ),
    (
        &["run", "--pgsql-db", "x"],
        "only apply to sysbench's workloads",
    ),
    (
        &["run", "--read-from", "standby"],
        "--read-from standby needs several hosts",
    ),
    (
        &[
            "run",
            "--read-from",
            "any",
            "-C",
            "-h",
            "127.0.0.1,127.0.0.1",
            "-p",
            "1,2",
        ],
        "--read-from any cannot be used with -C/--connect",
    ),
    (
        &[
            "run",
            "oltp_point_select",
            "--read-from",
            "standby",
            "-d",
            "mysql://root@127.0.0.1:1,127.0.0.1:2/x",
        ],
        "--read-from standby: only PostgreSQL targets",
    ),
    (
        &["run", "--read-from", "replica"],
        "possible values: standby, any, primary",
    ),
    (
        &["run", "-T", "10", "--fault-at", "12"],
        "--fault-at 12 is not inside the run (-T 10)",
    ),
    (
        &["run", "-t", "10", "--fault-at", "1"],
        "--fault-at needs a timed run",
    ),
    (
        &["run", "-T", "10", "--fault-at", "1", "-C"],
        "--fault-at cannot be combined with -C/--connect",
    ),
    (
        &["run", "-T", "10", "--fault-at", "1", "--io", "threads"],
        "--fault-at cannot be combined with --io threads",
    ),
    (
        &["run", "-t", "10", "-C", "--io", "threads"],
        "--io threads cannot be used with -C",
    ),
    (&["run", "--fault-cmd", "true"], "--fault-at <SECONDS>"),
    (
        &["run", "-T", "10", "--warmup", "10"],
        "--warmup 10 leaves nothing of the run (-T 10)",
    ),
    (
        &["run", "-T", "10", "--warmup=-1"],
        "--warmup must be 0 or more seconds, got -1",
    ),
    (
        &["run", "cache-curve", "--warmup", "1"],
        "--warmup applies to runs of transactions",
    ),
    (
        &[
            "run",
            "-T",
            "10",
            "--prewarm",
            "--fleet",
            "f",
            "--fleet-size",
            "2",
        ],
        "--prewarm cannot be combined with --fleet",
    ),
    (
        &["failover", "-t", "5"],
        "the failover probe runs for a time: give -T, not -t",
    ),
    (
        &["init", "failover-probe"],
        "failover-probe has nothing to load",
    ),
];

#[test]
fn every_bad_command_line_fails_before_connecting_with_a_clear_message() {
    let mut failures = Vec::new();
    for (args, expected) in CASES {
        // Point each case at a port nothing listens on, unless it sets its own target: a case
        // that got past validation would fail there with a connection error instead.
        let mut full: Vec<&str> = args.to_vec();
        let has_target = args.iter().any(|a| *a == "-h" || *a == "-d");
        if !has_target && !args.contains(&"--set") {
            full.extend(["-h", "127.0.0.1", "-p", "1"]);
        }
        let (code, _out, err) = stampede(&full);
        // Every bad command line is a usage error: 64 (README, "Exit codes").
        if code != 64 || !err.contains(expected) || err.contains("cannot connect") {
            failures.push(format!(
                "{full:?}: exit {code}, stderr:\n{err}\n  expected: {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

/// A warm-up longer than the run, or negative, is a bad command line: exit 64 (EX_USAGE).
#[test]
fn a_warmup_longer_than_the_run_or_negative_is_a_usage_error() {
    for args in [
        &["run", "-T", "10", "--warmup", "12"][..],
        &["run", "-T", "10", "--warmup=-1"],
        &["run", "-T", "10", "--warmup", "nan"],
    ] {
        let mut full = args.to_vec();
        full.extend(["-h", "127.0.0.1", "-p", "1"]);
        let (code, _out, err) = stampede(&full);
        assert_eq!(code, 64, "{full:?}: {err}");
        assert!(err.contains("--warmup"), "{full:?}: {err}");
    }
}

#[test]
fn builtin_list_and_show_script_need_no_server() {
    let (code, out, _) = stampede(&["run", "-b", "list"]);
    assert_eq!(code, 0);
    for name in ["tpcb-like", "simple-update", "select-only"] {
        assert!(out.contains(name), "missing {name} in {out}");
    }
    let (code, out, _) = stampede(&["run", "--show-script", "select-only"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"),
        "{out}"
    );
}

#[test]
fn an_unreachable_server_is_named_and_no_password_is_printed() {
    let (code, out, err) = stampede(&[
        "run",
        "-t",
        "1",
        "postgresql://bench:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=2",
    ]);
    assert_eq!(code, 1, "stderr: {err}");
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    assert!(
        !err.contains("s3cr3t-pw") && !out.contains("s3cr3t-pw"),
        "password leaked: {err}"
    );
}

#[test]
fn a_pgsql_password_is_never_printed() {
    let (code, out, err) = stampede(&[
        "run",
        "oltp_point_select",
        "--pgsql-host",
        "127.0.0.1",
        "--pgsql-port",
        "1",
        "--pgsql-password",
        "s3cr3t-sb",
        "--events=1",
        "--time=0",
    ]);
    assert_eq!(code, 1, "stderr: {err}");
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(
        !err.contains("s3cr3t-sb") && !out.contains("s3cr3t-sb"),
        "password leaked: {err}"
    );
}

#[test]
fn help_is_available_as_question_mark_because_h_is_the_host() {
    let (code, out, _) = stampede(&["run", "-?"]);
    assert_eq!(code, 0);
    assert!(out.contains("--latency-limit"), "{out}");
    assert!(out.contains("-h, --host"), "{out}");
}

/// A listener that accepts connections (the kernel's backlog) and never answers.
fn silent() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    (l, port)
}

/// A connection was made to the listener.
fn reached(l: &TcpListener) -> bool {
    match l.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

#[test]
fn every_bad_output_path_is_refused_before_anything_connects() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap().to_string();
    let saved = d.path().join("run.json");
    std::fs::write(&saved, "{\"saved\": true}\n").unwrap();
    std::fs::write(d.path().join("plain"), "a file").unwrap();
    let ro = tmpfs::Tmpfs::mount(64, true);
    let full = tmpfs::Tmpfs::mount(64, false);
    if let Some(f) = &full {
        f.fill(0);
    }
    let (listener, port) = silent();
    // (arguments, whether they name a target of their own, exit code, what stderr says)
    let mut cases: Vec<(Vec<String>, bool, i32, String)> = Vec::new();
    let mut case = |args: &[&str], code: i32, says: &str| {
        let sub = |s: &str| s.replace("{dir}", &dir);
        let args: Vec<String> = args.iter().map(|a| sub(a)).collect();
        let own_target = matches!(args[0].as_str(), "report" | "compare" | "merge")
            || args.iter().any(|a| a == "--");
        cases.push((args, own_target, code, sub(says)));
    };
    case(
        &["run", "--json", "{dir}/missing/run.json"],
        64,
        "--json {dir}/missing/run.json: the directory {dir}/missing does not exist",
    );
    case(
        &["run", "--html", "{dir}"],
        64,
        "--html {dir}: is a directory",
    );
    case(
        &["run", "--json", "{dir}/plain/run.json"],
        64,
        "--json {dir}/plain/run.json: Not a directory",
    );
    case(
        &["run", "--json", "{dir}/r.json", "--html", "{dir}/./r.json"],
        64,
        "--json {dir}/r.json and --html {dir}/./r.json are the same file",
    );
    case(
        &["run", "--json", "-"],
        64,
        "--json -: standard output carries the summary",
    );
    case(
        &["run", "-l", "--log-prefix", "{dir}/missing/log"],
        64,
        "--log-prefix {dir}/missing/log: the directory {dir}/missing does not exist",
    );
    case(
        &["run", "cache-curve", "--html", "{dir}/missing/c.html"],
        64,
        "--html {dir}/missing/c.html",
    );
    case(
        &["run", "--sweep", "clients=1,2", "--json", "{dir}"],
        64,
        "is a directory",
    );
    // The drop-in refuses as pgbench refuses bad options: exit 1.
    case(
        &["pgbench", "-T", "1", "--json", "{dir}/missing/run.json"],
        1,
        "pgbench: error: --json {dir}/missing/run.json: the directory",
    );
    case(
        &["report", "{dir}/run.json", "-o", "{dir}/run.json"],
        64,
        "-o {dir}/run.json: is the input {dir}/run.json",
    );
    case(
        &[
            "compare",
            "{dir}/run.json",
            "{dir}/plain",
            "-o",
            "{dir}/./run.json",
        ],
        64,
        "is the input",
    );
    case(
        &["compare", "{dir}/run.json", "{dir}/plain", "-o", "-"],
        64,
        "-o -: standard output carries the table",
    );
    case(
        &["merge", "{dir}/run.json", "--json", "{dir}/run.json"],
        64,
        "--json {dir}/run.json: is the input",
    );
    case(
        &["fleet", "report", "f1", "--html", "{dir}/missing/f.html"],
        64,
        "--html {dir}/missing/f.html: the directory",
    );
    case(
        &[
            "fleet",
            "manifest",
            "--workers",
            "2",
            "-o",
            "{dir}",
            "--",
            "run",
        ],
        64,
        "-o {dir}: is a directory",
    );
    if let Some(ro) = &ro {
        let p = ro.path().join("run.json");
        let p = p.to_str().unwrap();
        case(&["run", "--json", p], 64, "Read-only file system");
    }
    if let Some(full) = &full {
        let p = full.path().join("run.json");
        let p = p.to_str().unwrap();
        case(
            &["run", "--html", p],
            64,
            "no space left on the file system",
        );
    }
    let mut failures = Vec::new();
    for (args, own_target, code, says) in &cases {
        let mut full_args = args.clone();
        if !own_target {
            full_args.extend(["-h".into(), "127.0.0.1".into(), "-p".into(), port.clone()]);
        }
        let args: Vec<&str> = full_args.iter().map(String::as_str).collect();
        let (got, _out, err) = stampede(&args);
        if got != *code || !err.contains(says.as_str()) {
            failures.push(format!(
                "{args:?}: exit {got}, stderr:\n{err}\n  expected exit {code} and: {says}"
            ));
        }
        if reached(&listener) {
            failures.push(format!("{args:?}: connected to the target"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        "{\"saved\": true}\n",
        "an input was overwritten"
    );
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "files were left behind: {left:?}");
}

#[test]
fn a_server_that_accepts_and_never_answers_is_named_when_connect_timeout_passes() {
    let (listener, port) = silent();
    let (code, out, err) = stampede(&[
        "run",
        "-t",
        "1",
        "-d",
        &format!("host=127.0.0.1 port={port} user=bench connect_timeout=1"),
    ]);
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    // libpq raises connect_timeout=1 to 2 s.
    assert!(
        err.contains(&format!("cannot connect to host=127.0.0.1 port={port}"))
            && err.contains("no answer within 2 s (connect_timeout)"),
        "{err}"
    );
    assert!(reached(&listener), "the timeout ended it, not a refusal");
}
