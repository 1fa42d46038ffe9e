//! The table of what goes wrong and what stampede says: for each situation, the stream the
//! message goes to, its wording, and the exit status, in each of stampede's voices: its own
//! commands (`error: ...` and `hint: ...` on standard error; 64 for a bad command line, 1 when
//! nothing could be measured, 2 when the numbers are not to be trusted, 3 for `server status`
//! with nothing running), `stampede pgbench` (pgbench 18's messages and statuses) and `stampede
//! sysbench` (sysbench 1.0.20's: FATAL on standard output, option errors on standard error,
//! status 1). One shared server for the situations that need one; none of them touches data it
//! did not create.

mod common;

use std::process::Command;

use testkit::{PerBinary, THROWAWAY};

static PG: PerBinary = PerBinary::new(&[THROWAWAY]);

/// Where the message must be.
#[derive(Clone, Copy, Debug)]
enum Stream {
    Stderr,
    Stdout,
}

struct Case {
    name: &'static str,
    args: Vec<String>,
    code: i32,
    stream: Stream,
    /// Every one must be in that stream.
    says: &'static [&'static str],
    /// The other stream must be empty (a drop-in that prints a banner first says so with
    /// `false`).
    other_empty: bool,
}

fn case(
    name: &'static str,
    args: &[&str],
    code: i32,
    stream: Stream,
    says: &'static [&'static str],
) -> Case {
    Case {
        name,
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        stream,
        says,
        other_empty: true,
    }
}

fn run(args: &[String], stdin_null: bool) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stampede"));
    for k in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        c.env_remove(k);
    }
    if stdin_null {
        c.stdin(std::process::Stdio::null());
    }
    common::outcome(c.args(args))
}

#[test]
fn every_error_says_what_happened_where_and_exits_as_documented() {
    let pg = PG.get();
    let host = pg.socket_dir().display().to_string();
    let port = pg.port().to_string();
    // An empty database (no pgbench or sysbench tables) and a script that fails when it runs.
    testkit::block_on(testkit::query(
        pg.conn_config(),
        "CREATE DATABASE errs_empty",
    ));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.sql");
    std::fs::write(&bad, "SELECT 1;\n\\set x 1 +\n").unwrap();
    let boom = dir.path().join("boom.sql");
    std::fs::write(&boom, "\\set x 1 / 0\n").unwrap();
    let (bad, boom) = (bad.display().to_string(), boom.display().to_string());
    // `args` and then the flags naming database `db` of the shared server.
    let at = |args: &[&str], db: &str| -> Vec<String> {
        (args
            .iter()
            .chain(&["-h", &host, "-p", &port, "-U", "postgres", "-d", db]))
        .map(|s| s.to_string())
        .collect()
    };
    let unreachable = ["-h", "127.0.0.1", "-p", "1"];
    use Stream::*;

    let mut cases = vec![
        // ---- stampede's own commands: the command line (64), before anything connects ----
        case(
            "unknown option",
            &["run", "--frobnicate"],
            64,
            Stderr,
            &["unexpected argument '--frobnicate'"],
        ),
        case(
            "no clients",
            &["run", "-c", "0", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &["error: -c/--client must be at least 1"],
        ),
        case(
            "zero duration",
            &["run", "-T", "0", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &["error: -T/--time must be at least 1 second"],
        ),
        case(
            "zero rate",
            &["run", "-R", "0", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &["error: -R/--rate must be positive, got 0"],
        ),
        case(
            "latency limit without a rate",
            &["run", "-L", "5"],
            64,
            Stderr,
            &["--rate"],
        ),
        case(
            "unknown protocol",
            &["run", "-M", "fast"],
            64,
            Stderr,
            &["invalid value 'fast'"],
        ),
        case(
            "unknown builtin",
            &["run", "-b", "nosuch", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &["error: no builtin script found for name \"nosuch\""],
        ),
        case(
            "a workload's name mistyped",
            &["run", "select-onyl"],
            64,
            Stderr,
            &[
                "error: \"select-onyl\" is not a workload; did you mean select-only?",
                "hint: `stampede run --list` lists them",
            ],
        ),
        case(
            "a script that cannot be read",
            &[
                "run",
                "-f",
                "/nonexistent/x.sql",
                "-h",
                "127.0.0.1",
                "-p",
                "1",
            ],
            64,
            Stderr,
            &[
                "error: could not open file \"/nonexistent/x.sql\"",
                "hint: check the path",
            ],
        ),
        Case {
            args: ["run", "-f", &bad, "-h", "127.0.0.1", "-p", "1"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            says: &[
                "bad.sql:2:11: syntax error in command \"set\"",
                "^ error found here",
            ],
            ..case("a script that does not compile", &[], 64, Stderr, &[])
        },
        case(
            "sysbench's options without a sysbench workload",
            &["run", "--tables=4", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &[
                "error: --tables only apply to sysbench's workloads",
                "hint: name one first",
            ],
        ),
        case(
            "the database given twice",
            &["run", "tpcb-like", "db2", "-d", "db1"],
            64,
            Stderr,
            &[
                "error: the database is given twice",
                "hint: give it once, with -d",
            ],
        ),
        case(
            "an embedded server's option with a target",
            &["run", "--keep-server", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &[
                "apply to the embedded server only",
                "hint: drop them, or pass --embedded",
            ],
        ),
        case(
            "an unknown sysbench driver",
            &["run", "oltp_point_select", "--db-driver=oracle"],
            64,
            Stderr,
            &["--db-driver=oracle: unknown driver"],
        ),
        case(
            "nothing to load",
            &["init", "nosuch"],
            64,
            Stderr,
            &[
                "error: \"nosuch\" is neither a workload nor a set of tables",
                "hint: `stampede init --list`",
            ],
        ),
        case(
            "a sysbench option on pgbench's tables",
            &[
                "init",
                "tpcb",
                "--bulk-insert",
                "-h",
                "127.0.0.1",
                "-p",
                "1",
            ],
            64,
            Stderr,
            &["error: --bulk-insert only apply to sysbench's tables"],
        ),
        case(
            "check with no target",
            &["check", "tpcb"],
            64,
            Stderr,
            &["error: check needs a target", "hint: name the database"],
        ),
        case(
            "reset of sysbench's tables",
            &["reset", "oltp", "-h", "127.0.0.1", "-p", "1"],
            64,
            Stderr,
            &["error: reset restores pgbench's tables only"],
        ),
        case(
            "compare with one file",
            &["compare", "a.json"],
            64,
            Stderr,
            &["RUN.json"],
        ),
        // ---- stampede's own commands: the target (1), nothing measured ----
        case(
            "an unreachable server",
            &["run", "-t", "1", "-h", "127.0.0.1", "-p", "1"],
            1,
            Stderr,
            &[
                "error: cannot connect to host=127.0.0.1 port=1: Connection refused",
                "hint: check that the server is running",
            ],
        ),
        case(
            "a report of a file that is not there",
            &["report", "/nonexistent/run.json"],
            1,
            Stderr,
            &["/nonexistent/run.json"],
        ),
        case(
            "server status with nothing running",
            &["server", "status", "--data-dir", "/tmp/stampede-none-here"],
            3,
            Stderr,
            &["not running"],
        ),
    ];
    let mut with_server = vec![
        Case {
            args: at(&["run", "-t", "1", "-c", "1", "--no-observe"], "errs_empty"),
            says: &[
                "error: table pgbench_accounts does not exist in database \"errs_empty\"",
                "hint: load it first with `stampede init tpcb -s N`",
            ],
            ..case("pgbench's tables missing", &[], 1, Stderr, &[])
        },
        Case {
            args: at(&["run", "-t", "1", "--no-observe"], "errs_nosuchdb"),
            says: &[
                "error: ",
                "database \"errs_nosuchdb\" does not exist",
                "hint: check the database name (-d)",
            ],
            ..case("a database that does not exist", &[], 1, Stderr, &[])
        },
        Case {
            args: at(
                &[
                    "run",
                    "-f",
                    &boom,
                    "-t",
                    "1",
                    "-c",
                    "1",
                    "-n",
                    "--no-observe",
                ],
                "errs_empty",
            ),
            says: &[
                "error: division by zero",
                "client 0 aborted in command 0 (set) of script 0",
                "detail: in ",
                "boom.sql:1: \\set x 1 / 0",
            ],
            other_empty: false,
            ..case("a script that fails when it runs", &[], 2, Stderr, &[])
        },
    ];
    cases.append(&mut with_server);

    // ---- stampede pgbench: pgbench 18's messages and statuses ----
    let mut pgbench = vec![
        case(
            "pgbench: a bad option value",
            &["pgbench", "-c", "three"],
            1,
            Stderr,
            // pgbench's option_parse_int: the error, no hint.
            &["pgbench: error: invalid value \"three\" for option -c/--client"],
        ),
        case(
            "pgbench: an unknown option",
            &["pgbench", "--bad-option"],
            1,
            Stderr,
            &["unrecognized option", "--help\" for more information"],
        ),
        case(
            "pgbench: a benchmarking option in initialization",
            &["pgbench", "-i", "-S"],
            1,
            Stderr,
            &["pgbench: error: some of the specified options cannot be used in initialization (-i) mode"],
        ),
        case(
            "pgbench: an unreachable server",
            &["pgbench", "-t", "1", "-h", "127.0.0.1", "-p", "1"],
            1,
            Stderr,
            &[
                "pgbench: error: connection to server at \"127.0.0.1\", port 1 failed: Connection refused",
                "Is the server running on that host and accepting TCP/IP connections?",
                "pgbench: error: could not create connection for setup",
            ],
        ),
        case(
            "pgbench: unreachable during -i",
            &["pgbench", "-i", "-h", "127.0.0.1", "-p", "1"],
            1,
            Stderr,
            &["pgbench: error: could not create connection for initialization"],
        ),
    ];
    let mut pgbench_server = vec![
        Case {
            args: at(&["pgbench", "-t", "1"], "errs_empty"),
            says: &[
                "pgbench: error: could not count number of branches: ERROR:  relation \"pgbench_branches\" does not exist",
                "pgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \"errs_empty\".",
            ],
            other_empty: false,
            ..case("pgbench: run without init", &[], 1, Stderr, &[])
        },
        Case {
            args: at(&["pgbench", "-n", "-t", "1", "-f", &boom], "errs_empty"),
            says: &[
                "pgbench: error: division by zero",
                "pgbench: error: client 0 aborted in command 0 (set) of script 0; evaluation of meta-command failed",
                "pgbench: error: Run was aborted; the above results are incomplete.",
            ],
            other_empty: false,
            ..case("pgbench: a client aborts", &[], 2, Stderr, &[])
        },
    ];
    cases.append(&mut pgbench);
    cases.append(&mut pgbench_server);

    // ---- stampede sysbench: sysbench 1.0.20's ----
    let sb_target = [
        "--db-driver=pgsql",
        "--pgsql-host=127.0.0.1",
        "--pgsql-port=1",
    ];
    let mut sysbench = vec![
        case(
            "sysbench: a bad general option value",
            &["sysbench", "--threads=abc", "oltp_point_select", "run"],
            1,
            Stderr,
            &["Invalid value for the 'threads' option: 'abc'"],
        ),
        Case {
            other_empty: false,
            ..case(
                "sysbench: an unknown test",
                &["sysbench", "oltp_nosuch", "run"],
                1,
                Stdout,
                &[
                    "sysbench 1.0.20",
                    "FATAL: Cannot find benchmark 'oltp_nosuch': no such built-in test, file or module",
                ],
            )
        },
        Case {
            other_empty: false,
            ..case(
                "sysbench: an unknown test option",
                &["sysbench", "oltp_read_write", "--nosuch=1", "run"],
                1,
                Stderr,
                &["invalid option: --nosuch=1"],
            )
        },
        Case {
            other_empty: false,
            ..case(
                "sysbench: an unknown command",
                &["sysbench", "oltp_read_write", "frobnicate"],
                1,
                Stderr,
                &["Unknown command: frobnicate"],
            )
        },
        Case {
            other_empty: false,
            ..case(
                "sysbench: no command",
                &["sysbench", "oltp_read_write"],
                1,
                Stdout,
                &["FATAL: ", "Command is required. Supported commands: prepare, prewarm, run, cleanup, help"],
            )
        },
        Case {
            other_empty: false,
            ..case(
                "sysbench: the mysql driver, no server",
                &["sysbench", "oltp_point_select", "--mysql-socket=/nonexistent/mysqld.sock", "run"],
                1,
                Stdout,
                &["FATAL: cannot connect to socket \"/nonexistent/mysqld.sock\""],
            )
        },
    ];
    let mut unreachable_sb: Vec<String> = ["sysbench"].iter().map(|s| s.to_string()).collect();
    unreachable_sb.extend(sb_target.iter().map(|s| s.to_string()));
    unreachable_sb.extend(
        [
            "--pgsql-password=s3cr3t-sb",
            "oltp_point_select",
            "--time=1",
            "run",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    sysbench.push(Case {
        args: unreachable_sb,
        other_empty: false,
        ..case(
            "sysbench: an unreachable server",
            &[],
            1,
            Stdout,
            &["FATAL: ", "127.0.0.1"],
        )
    });
    cases.append(&mut sysbench);
    let _ = unreachable;

    assert!(cases.len() >= 30, "{} situations", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let (code, out, err) = run(&c.args, true);
        let (said, other) = match c.stream {
            Stream::Stderr => (&err, &out),
            Stream::Stdout => (&out, &err),
        };
        let mut why = Vec::new();
        if code != c.code {
            why.push(format!("exit {code}, expected {}", c.code));
        }
        for s in c.says {
            if !said.contains(s) {
                why.push(format!("{:?} does not say {s:?}", c.stream));
            }
        }
        if c.other_empty && !other.trim().is_empty() {
            why.push("the other stream is not empty".to_string());
        }
        // No password ever reaches either stream.
        if out.contains("s3cr3t") || err.contains("s3cr3t") {
            why.push("a password was printed".to_string());
        }
        if !why.is_empty() {
            failures.push(format!(
                "{} ({:?}): {}\n--- stdout:\n{out}--- stderr:\n{err}",
                c.name,
                c.args,
                why.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
