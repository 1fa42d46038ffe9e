//! `stampede run WORKLOAD`: every name of the workload table runs, on a real server named with
//! `-d` and, for the acceptance's three command lines, on the embedded server with no target;
//! `stampede init WORKLOAD` loads what the workload runs on; a bare database name in the
//! positional still works, with a one-line note; a copy of the binary named `pgbench` or
//! `sysbench` is that tool.

mod common;

use std::process::Command;

use common::{stampede, Server};

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn run(args: &[&str]) -> (i32, String, String) {
    let r = stampede(args);
    (r.code, r.stdout, r.stderr)
}

/// The names `stampede run --list` prints: the first word of each indented line.
fn listed_workloads() -> Vec<String> {
    let (code, out, _) = run(&["run", "--list"]);
    assert_eq!(code, 0);
    let names: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert!(names.len() >= 13, "{out}");
    names
}

#[test]
fn every_listed_workload_runs_by_name_on_a_server_named_with_dash_d() {
    let server = Server::start();
    let (host, port) = (server.host(), server.port());
    let target = ["-h", host.as_str(), "-p", port.as_str(), "-U", "postgres"];
    server.create_db("wl");
    server.create_db("bulk");
    let with = |extra: &[&str]| -> Vec<String> {
        target
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let args = |a: &[&str], extra: &[&str]| -> (i32, String, String) {
        let mut v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        v.extend(with(extra));
        run(&v.iter().map(String::as_str).collect::<Vec<_>>())
    };

    // `init WORKLOAD` loads the tables the workload runs on.
    let (code, _, err) = args(&["init", "select-only", "-s", "1"], &["-d", "wl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        server.psql("wl", "SELECT count(*) FROM pgbench_branches"),
        "1"
    );
    let (code, _, err) = args(
        &[
            "init",
            "oltp_point_select",
            "--tables",
            "2",
            "--table-size",
            "100",
        ],
        &["-d", "wl"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.psql("wl", "SELECT count(*) FROM sbtest2"), "100");
    let (code, _, err) = args(&["init", "tpcc", "-w", "1", "-q"], &["-d", "wl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.psql("wl", "SELECT count(*) FROM district"), "10");
    let (code, _, err) = args(&["init", "ycsb", "-p", "recordcount=200"], &["-d", "wl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.psql("wl", "SELECT count(*) FROM usertable"), "200");
    let (code, _, err) = args(&["init", "iibench"], &["-d", "wl"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = args(
        &["init", "crud", "--tables", "2", "--table-size", "100"],
        &["-d", "wl"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.psql("wl", "SELECT count(*) FROM crud2"), "100");
    let (code, _, err) = args(&["init", "bulk_insert", "--tables", "2"], &["-d", "bulk"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(server.psql("bulk", "SELECT count(*) FROM sbtest2"), "0");

    for name in listed_workloads() {
        // The failover probe runs for a time with its own checks (no commit count: its
        // servers' counters do not survive a failover); tests/fault_runs.rs runs it by name.
        if name == "failover-probe" {
            continue;
        }
        // The cache curve is no run of transactions (no -t, no commit count): it grows a
        // table of its own past the server's cache; tests/cache_curve.rs runs it by name.
        if name == "cache-curve" {
            continue;
        }
        // A replay's transactions are a capture's statements (`stampede replay CAPTURE`;
        // `run replay` without one is refused): tests/replay.rs replays captures by name.
        if name == "replay" {
            let (code, _, err) = args(&["run", "replay"], &["-d", "wl"]);
            assert_eq!(code, 64, "{err}");
            assert!(err.contains("a replay needs its capture"), "{err}");
            continue;
        }
        // TPC-H's runs are its streams (`-c` is refused) on tables `init tpch` loads:
        // tests/tpch_run.rs runs `tpch` and `tpch-q6` by name on a loaded database.
        if name == "tpch" || name == "tpch-qN" {
            let (code, _, err) = args(&["run", "tpch", "-c", "2"], &["-d", "wl"]);
            assert_eq!(code, 64, "{err}");
            assert!(err.contains("its clients are its streams"), "{err}");
            let (code, _, err) = args(&["run", "tpch-qN"], &["-d", "wl"]);
            assert_eq!(code, 64, "{err}");
            assert!(err.contains("TPC-H has queries 1 to 22"), "{err}");
            continue;
        }
        // CH-benCHmark needs CH's three tables beside TPC-C's (`init ch`): a run on TPC-C's
        // alone says so; tests/ch.rs runs `ch` by name on a database `init ch` loaded.
        if name == "ch" {
            let (code, _, err) = args(&["run", "ch", "-c", "2", "-t", "10"], &["-d", "wl"]);
            assert_ne!(code, 0, "{err}");
            assert!(err.contains("stampede init ch"), "{err}");
            continue;
        }
        let (db, sizing): (&str, &[&str]) = match name.as_str() {
            "bulk_insert" => ("bulk", &[]),
            n if n.starts_with("oltp_") || n == "crud" => {
                ("wl", &["--tables", "2", "--table-size", "100"])
            }
            _ => ("wl", &[]),
        };
        let mut a = vec![
            "run",
            name.as_str(),
            "-c",
            "2",
            "-t",
            "10",
            "-M",
            "prepared",
        ];
        a.extend_from_slice(&["--no-observe"]);
        a.extend_from_slice(sizing);
        let (code, out, err) = args(&a, &["-d", db]);
        assert_eq!(code, 0, "{name}\n{out}\n{err}");
        let first = out.lines().next().unwrap_or_default();
        assert!(
            first.contains(&format!("): {name}, ")) || first.contains(&format!("): {name}; ")),
            "{name}: the header names the workload: {first}"
        );
        assert!(
            out.contains("number of transactions actually processed: 20/20"),
            "{name}\n{out}"
        );
        assert!(out.contains("  PASSED   commit count: "), "{name}\n{out}");
        assert!(!out.contains("FAILED"), "{name}\n{out}");
    }

    // A bare database name in the positional: unambiguous (no workload of that name), so it
    // runs the default workload there and says so in one line.
    let (code, out, err) = args(&["run", "wl", "-c", "1", "-t", "5", "--no-observe"], &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("stampede "), "{out}");
    assert!(
        out.lines().next().unwrap().contains("): tpcb-like, "),
        "{out}"
    );
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("wl")).collect();
    assert_eq!(notes.len(), 1, "one note about the positional: {err}");
    assert!(notes[0].starts_with("note: "), "{err}");
}

/// The acceptance's three command lines, verbatim but for -T: no target, so each loads and
/// runs on an embedded server that it removes afterwards.
#[test]
fn the_acceptance_s_command_lines_run_on_the_embedded_server() {
    for line in [
        "run select-only -T 3",
        "run tpcb-like",
        "run oltp_point_select -T 3",
    ] {
        let a: Vec<&str> = line.split(' ').collect();
        let (code, out, err) = run(&a);
        assert_eq!(code, 0, "{line}\n{out}\n{err}");
        let workload = a[1];
        assert!(
            out.lines()
                .next()
                .unwrap()
                .contains(&format!("): {workload}, ")),
            "{line}\n{out}"
        );
        assert!(err.contains("embedded"), "{line}: says where it ran\n{err}");
        assert!(out.contains("  PASSED   commit count: "), "{line}\n{out}");
        assert!(!out.contains("FAILED"), "{line}\n{out}");
    }
}

/// argv[0] decides: a symlink named `pgbench` is pgbench 18's command line, one named
/// `sysbench` is sysbench 1.0.20's, both with their own voice and exit statuses.
#[test]
fn a_link_named_pgbench_or_sysbench_is_that_tool() {
    let dir = tempfile::tempdir().unwrap();
    let pgbench = dir.path().join("pgbench");
    let sysbench = dir.path().join("sysbench");
    std::os::unix::fs::symlink(BIN, &pgbench).unwrap();
    std::os::unix::fs::symlink(BIN, &sysbench).unwrap();

    let out = Command::new(&pgbench).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("pgbench (PostgreSQL) 18"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = Command::new(&pgbench)
        .arg("--no-such-option")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("pgbench: unrecognized option '--no-such-option'\n"),
        "{err}"
    );
    assert!(
        err.contains("pgbench: hint: Try \"pgbench --help\" for more information."),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = Command::new(&sysbench).arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sysbench 1.0.20\n");
}
