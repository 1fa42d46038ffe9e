//! The binary against real private PostgreSQL servers: what a user does, checked by what the
//! server says.

mod common;

use common::{stampede, stampede_cmd, Server};

#[test]
fn stampede_runs_on_data_loaded_by_pgbench_and_its_counts_match_the_server() {
    let srv = Server::start();
    srv.create_db("pgb");
    let init = srv.pgbench("pgb", &["-i", "-s", "2", "-q"]);
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let mut args = vec![
        "run",
        "-c",
        "4",
        "-j",
        "2",
        "-t",
        "50",
        "-M",
        "prepared",
        "--random-seed",
        "7",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    args.extend(srv.target("pgb"));
    let r = stampede(&args);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("transaction type: <builtin: TPC-B (sort of)>"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("scaling factor: 2"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 200/200"),
        "{}",
        r.stdout
    );
    // pgbench truncates history before a run (no -n), so history holds exactly this run.
    assert_eq!(
        srv.psql("pgb", "SELECT count(*) FROM pgbench_history"),
        "200"
    );
    assert!(r.stdout.contains("PASSED   commit count"), "{}", r.stdout);
    assert!(
        r.stdout.contains("PASSED   TPC-B invariant"),
        "{}",
        r.stdout
    );
}

#[test]
fn pgbench_runs_on_data_loaded_by_stampede() {
    let srv = Server::start();
    srv.create_db("stp");
    let mut args: Vec<String> = ["init", "tpcb", "-s", "2", "-q"].map(String::from).to_vec();
    args.extend(srv.target("stp"));
    let r = stampede(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = srv.pgbench("stp", &["-c", "2", "-t", "50", "-M", "prepared"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("number of transactions actually processed: 100/100"),
        "{text}"
    );
    assert!(text.contains("scaling factor: 2"), "{text}");
    assert_eq!(
        srv.psql("stp", "SELECT count(*) FROM pgbench_accounts"),
        "200000"
    );
}

#[test]
fn missing_tables_say_to_run_init_and_create_nothing() {
    let srv = Server::start();
    srv.create_db("empty");
    let mut args: Vec<String> = ["run", "-t", "1"].map(String::from).to_vec();
    args.extend(srv.target("empty"));
    let r = stampede(&args);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("stampede init tpcb"), "{}", r.stderr);
    assert_eq!(
        srv.psql(
            "empty",
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        "0"
    );
}

#[test]
fn a_scale_that_does_not_match_the_data_is_ignored_with_pgbench_s_warning() {
    let srv = Server::start();
    srv.create_db("s1");
    assert!(srv.pgbench("s1", &["-i", "-s", "1", "-q"]).status.success());
    let mut args: Vec<String> = ["run", "-t", "1", "-c", "1", "-s", "5", "--no-observe"]
        .map(String::from)
        .to_vec();
    args.extend(srv.target("s1"));
    let r = stampede(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // pgbench's GetTableInfo: the tables' count wins, said on standard error.
    assert!(
        r.stderr
            .contains("warning: scale option ignored, using count from pgbench_branches table (1)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("scaling factor: 1\n"), "{}", r.stdout);
}

#[test]
fn a_missing_database_is_named() {
    let srv = Server::start();
    let mut args: Vec<String> = ["run", "-t", "1"].map(String::from).to_vec();
    args.extend(srv.target("nosuchdb"));
    let r = stampede(&args);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("nosuchdb") && r.stderr.contains("does not exist"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_wrong_password_is_refused_without_echoing_it() {
    let srv = Server::start();
    srv.psql("postgres", "CREATE ROLE bench LOGIN PASSWORD 'right-pw'");
    // Require a password for `bench` on the socket; everyone else keeps trust.
    let hba = srv.pg.data_dir().join("pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(&hba, format!("local all bench scram-sha-256\n{old}")).unwrap();
    srv.psql("postgres", "SELECT pg_reload_conf()");
    let r = stampede_cmd()
        .args([
            "run",
            "-t",
            "1",
            "-h",
            &srv.host(),
            "-p",
            &srv.port(),
            "-U",
            "bench",
            "-d",
            "postgres",
        ])
        .env("PGPASSWORD", "wrong-pw-123")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("wrong-pw-123"), "{err}");
}

#[test]
fn no_postgres_binaries_gives_the_install_hint() {
    let empty = tempfile::tempdir().unwrap();
    let r = stampede(&[
        "run",
        "-t",
        "1",
        "--pg-bindir",
        empty.path().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("apt-get install postgresql"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_embedded_default_runs_validates_against_the_schema_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let r = stampede(&[
        "run",
        "-s",
        "1",
        "-c",
        "2",
        "-t",
        "25",
        "-r",
        "--random-seed",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("embedded PostgreSQL"), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 50/50"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("statement latencies in milliseconds"),
        "{}",
        r.stdout
    );
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../schema/run-result.v1.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(value["config"]["transactions_per_client"], 25);
    // The embedded server is gone: its data directory, printed at start, no longer exists.
    let line = r.stderr.lines().find(|l| l.contains(", data in ")).unwrap();
    let data_dir = line.rsplit(", data in ").next().unwrap().trim();
    assert!(
        !std::path::Path::new(data_dir).exists(),
        "{data_dir} still exists"
    );
}

#[test]
fn ctrl_c_during_init_leaves_no_table_that_looks_loaded() {
    let srv = Server::start();
    srv.create_db("half");
    // Scale 100 takes several seconds to load here; the signal lands in the middle of it.
    let mut args: Vec<String> = ["init", "tpcb", "-s", "100", "-q"]
        .map(String::from)
        .to_vec();
    args.extend(srv.target("half"));
    let child = stampede_cmd()
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(
        srv.psql(
            "half",
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgbench_%'"
        ),
        "0",
        "a half-loaded table was left behind:\n{stderr}"
    );
    // And a run on that database says to load it first.
    let mut run: Vec<String> = ["run", "-t", "1"].map(String::from).to_vec();
    run.extend(srv.target("half"));
    let r = stampede(&run);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("stampede init tpcb"), "{}", r.stderr);
}

#[test]
fn a_persistent_server_starts_serves_runs_reports_status_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    // The server runs as an unprivileged account when tests run as root: the directory must be
    // traversable by it.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let start = stampede(&[
        "server",
        "start",
        "--data-dir",
        data,
        "--set",
        "port=55499",
        "--set",
        "shared_buffers=128MB",
    ]);
    assert_eq!(start.code, 0, "{}", start.stderr);
    // stdout is the target, ready to paste after `stampede run`.
    let target: Vec<&str> = start.stdout.split_whitespace().collect();
    assert_eq!(target[0], "-h", "{}", start.stdout);
    let again = stampede(&["server", "start", "--data-dir", data]);
    assert_eq!(again.code, 0);
    assert!(again.stderr.contains("already running"), "{}", again.stderr);

    let mut init = vec!["init", "tpcb", "-s", "1", "-q"];
    init.extend(&target[..target.len() - 1]);
    init.extend(["-d", target[target.len() - 1]]);
    let r = stampede(&init);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut run = vec!["run", "-c", "2", "-t", "10", "-S"];
    run.extend(&target[..target.len() - 1]);
    run.extend(["-d", target[target.len() - 1]]);
    let r = stampede(&run);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 20/20"),
        "{}",
        r.stdout
    );

    let status = stampede(&["server", "status", "--data-dir", data]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let stop = stampede(&["server", "stop", "--data-dir", data]);
    assert_eq!(stop.code, 0, "{}", stop.stderr);
    let status = stampede(&["server", "status", "--data-dir", data]);
    assert_eq!(status.code, 3, "{}", status.stderr);
    assert!(
        std::path::Path::new(data).join("PG_VERSION").exists(),
        "the data directory is the user's: kept"
    );
    let stop = stampede(&["server", "stop", "--data-dir", data]);
    assert_eq!(stop.code, 1);
    assert!(
        stop.stderr.contains("no stampede server is running"),
        "{}",
        stop.stderr
    );
}

#[test]
fn exit_on_abort_ends_the_run_when_one_client_aborts() {
    let srv = Server::start();
    let dir = tempfile::tempdir().unwrap();
    // Client 0 divides by zero on its first transaction; the others would run for a minute.
    let script = dir.path().join("abort.sql");
    std::fs::write(&script, "\\set x 10 / :client_id\nSELECT :x;\n").unwrap();
    let json = dir.path().join("r.json");
    let script_arg = script.to_str().unwrap().to_string();
    let mut args: Vec<String> = [
        "run",
        "-c",
        "3",
        "-j",
        "1",
        "-T",
        "60",
        "--exit-on-abort",
        "-n",
        "--no-observe",
        "-f",
    ]
    .map(String::from)
    .to_vec();
    args.push(script_arg);
    args.extend(["--json".into(), json.to_str().unwrap().into()]);
    args.extend(srv.target("postgres"));
    let r = stampede(&args);
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("aborted clients: 1 of 3"), "{}", r.stdout);
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(value["interrupted"], false);
    // Stopped by the abort, not by -T: far short of the 60 s asked for.
    assert!(
        value["measured_duration_s"].as_f64().unwrap() < 45.0,
        "{value}"
    );
}

/// `--io`: a thread per client by default with few clients per core (4 here), io_uring when
/// asked (or by default with many clients per core) where the machine allows it (this one
/// does), epoll when asked, when -C connects per transaction, or when io_uring is off (here by
/// STAMPEDE_NO_IO_URING, as a container's seccomp filter would); the result says which and why,
/// and the counts are exact on every path. `--io uring` where it is unavailable, or with -C,
/// and `--io threads` with -C, are refused before connecting.
#[test]
fn the_socket_io_is_chosen_reported_and_falls_back_to_epoll() {
    let srv = Server::start();
    srv.create_db("io");
    assert!(srv.pgbench("io", &["-i", "-s", "1", "-q"]).status.success());
    let run = |extra: &[&str], env: Option<(&str, &str)>| {
        let mut args: Vec<String> = ["run", "-c", "4", "-j", "2", "-t", "30", "-M", "prepared"]
            .map(String::from)
            .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(srv.target("io"));
        let mut cmd = stampede_cmd();
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        common::outcome(cmd.args(&args))
    };
    let off = Some(("STAMPEDE_NO_IO_URING", "1"));
    let logs = tempfile::tempdir().unwrap();
    let log_prefix = logs.path().join("log").display().to_string();
    // 4 clients: a thread each where each has its cores to itself (engine::THREADS_CORES_PER_CLIENT),
    // else the ring.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let auto = if 4 * engine::THREADS_CORES_PER_CLIENT <= cores {
        "I/O: threads (a blocking socket per client on its own thread; auto: 4 clients on "
    } else {
        "I/O: io_uring (2 of 2 engine threads)"
    };
    let cases: [(&[&str], _, &str); 6] = [
        (&[], None, auto),
        (
            &["--io", "threads"],
            None,
            "I/O: threads (a blocking socket per client on its own thread; --io threads)",
        ),
        (
            &["--io", "uring"],
            None,
            "I/O: io_uring (2 of 2 engine threads)",
        ),
        (&["--io", "epoll"], None, "I/O: epoll (--io epoll)"),
        // -l with fewer threads than clients: one log per -j thread, so auto keeps the event
        // loops (and io_uring is off).
        (
            &["-l", "--log-prefix", &log_prefix],
            off,
            "I/O: epoll (io_uring turned off by STAMPEDE_NO_IO_URING)",
        ),
        (
            &["-C"],
            None,
            "I/O: epoll (-C connects through the runtime)",
        ),
    ];
    for (extra, env, io) in cases {
        let (code, out, err) = run(extra, env);
        assert_eq!(code, 0, "{extra:?} {env:?}\n{out}\n{err}");
        assert!(out.contains(io), "{extra:?} {env:?}: want {io:?} in\n{out}");
        assert!(
            out.contains("number of transactions actually processed: 120/120"),
            "{out}"
        );
        assert!(out.contains("PASSED   commit count"), "{extra:?}: {out}");
        assert!(out.contains("PASSED   TPC-B invariant"), "{extra:?}: {out}");
    }
    let before = srv.psql("io", "SELECT count(*) FROM pgbench_history");
    for (extra, env, msg) in [
        (
            &["--io", "uring"][..],
            off,
            "--io uring: io_uring is not available here (io_uring turned off by STAMPEDE_NO_IO_URING)",
        ),
        (
            &["--io", "uring", "-C"][..],
            None,
            "--io uring cannot be used with -C",
        ),
        (
            &["--io", "threads", "-C"][..],
            None,
            "--io threads cannot be used with -C",
        ),
    ] {
        let (code, out, err) = run(extra, env);
        assert_ne!(code, 0, "{extra:?}: {out}");
        assert!(err.contains(msg), "{extra:?}: want {msg:?} in\n{err}");
    }
    assert_eq!(
        srv.psql("io", "SELECT count(*) FROM pgbench_history"),
        before,
        "a refused run ran nothing"
    );
    // One client with two cores to itself: `--io auto` gives it a thread, and says why.
    if cores >= engine::THREADS_CORES_PER_CLIENT {
        let out = stampede_cmd()
            .args(["run", "-c", "1", "-t", "30", "-M", "prepared"])
            .args(srv.target("io"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(
            text.contains(&format!(
                "I/O: threads (a blocking socket per client on its own thread; auto: 1 client \
                 on {cores} cores"
            )),
            "{text}"
        );
    }
}

/// In every I/O mode, a client blocked in a read (its UPDATE waits on a row lock this test
/// holds) does not hold the run past `-T`'s end, nor past Ctrl-C: threads mode's socket gives the
/// wait up, epoll's and io_uring's thread cuts it off (`engine::cutoff`); the run returns while
/// the lock is still held (the blocked backend is still waiting on it), and the summary is
/// printed as in any run (exit 0; 130 and the partial result after Ctrl-C). The abandoned
/// transaction is counted neither committed nor failed.
/// Inserts blocked on a table lock at -T's end are abandoned after the grace; when the lock goes
/// after that, the server commits them with nobody reading the reply. The rows then add up only
/// with those inserts, so the row check says "in doubt" (as the commit count does), not FAILED.
/// Every poll of the test runs on the `postgres` database, and the holder connects before the
/// run and rolls back, so nothing but the run's sessions commits on the run's database.
#[test]
fn rows_an_abandoned_insert_committed_after_the_run_are_in_doubt_not_failed() {
    let srv = Server::start();
    srv.create_db("doubt");
    let target = srv.target("doubt");
    let args = |a: &[&str]| -> Vec<String> {
        a.iter()
            .map(|s| s.to_string())
            .chain(target.clone())
            .collect()
    };
    let init = stampede(&args(&[
        "init",
        "oltp",
        "--tables",
        "1",
        "--table-size",
        "100",
    ]));
    assert_eq!(init.code, 0, "{}", init.stderr);
    let mut holder = srv.session("doubt", "rowholder");
    let run = stampede_cmd()
        .args(args(&[
            "run",
            "oltp_insert",
            "--tables=1",
            "--table-size=100",
            "-c",
            "2",
            "-j",
            "2",
            "-T",
            "2",
            "--no-observe",
        ]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let clients = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'doubt' \
                   AND application_name <> 'rowholder'";
    // Both clients have inserted (their last statement is an INSERT), then the lock is taken.
    srv.wait_for(
        "postgres",
        &format!("{clients} AND query LIKE 'INSERT%'"),
        "2",
    );
    holder.send("BEGIN; LOCK TABLE sbtest1 IN SHARE MODE;");
    srv.wait_for(
        "postgres",
        &format!("{clients} AND wait_event_type = 'Lock'"),
        "2",
    );
    // The run has ended (its clients cut off after the grace) once its commit-count session
    // queries again: it is the one session of the run not waiting on the lock.
    srv.wait_for(
        "postgres",
        &format!(
            "{clients} AND wait_event_type IS DISTINCT FROM 'Lock' AND query_start > \
             (SELECT xact_start FROM pg_stat_activity WHERE application_name = 'rowholder')"
        ),
        "1",
    );
    holder.rollback();
    let out = run.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let ctx = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("2 transactions abandoned in flight at the end"),
        "{ctx}"
    );
    let row_line = stdout
        .lines()
        .find(|l| l.contains("row counts"))
        .unwrap_or_else(|| panic!("no row counts check: {ctx}"));
    assert!(row_line.contains("in doubt:"), "{row_line}\n{ctx}");
    assert!(
        row_line.contains("2 transactions were abandoned"),
        "{row_line}\n{ctx}"
    );
    assert!(!stdout.contains("FAILED"), "{ctx}");
    assert_eq!(out.status.code(), Some(0), "{ctx}");
}

#[test]
fn every_io_mode_ends_on_time_and_on_ctrl_c_while_a_client_waits_on_a_row_lock() {
    let srv = Server::start();
    srv.create_db("lock");
    assert!(srv
        .pgbench("lock", &["-i", "-s", "1", "-q"])
        .status
        .success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("update.sql");
    std::fs::write(
        &script,
        "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;\n",
    )
    .unwrap();
    // The run's backends waiting on the held lock, and the holder still holding it.
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    let holding = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lockholder' \
                   AND state = 'idle in transaction'";
    // (--io, extra options, the I/O line): -C connects inside each transaction, on epoll.
    let mut modes = vec![
        ("threads", None, "I/O: threads"),
        ("epoll", None, "I/O: epoll"),
        ("auto", Some("-C"), "I/O: epoll"),
    ];
    match sut::ring::unavailable() {
        None => modes.push(("uring", None, "I/O: io_uring (2 of 2 engine threads)")),
        Some(why) => eprintln!("io_uring is not available here ({why}): its run is left out"),
    }
    for (mode, extra, io) in modes {
        let args = |time: &str| -> Vec<String> {
            let mut a: Vec<String> = ["run", "-f", script.to_str().unwrap(), "-c", "2", "-j", "2"]
                .map(String::from)
                .to_vec();
            a.extend(extra.map(String::from));
            // --no-check: the holder is another session on the database, which the commit
            // count cannot tell apart from the run's.
            for x in ["-T", time, "--io", mode, "-n", "--no-check"] {
                a.push(x.into());
            }
            a.extend(srv.target("lock"));
            a
        };
        let holder = srv.hold(
            "lock",
            "lockholder",
            "SELECT aid FROM pgbench_accounts WHERE aid = 1 FOR UPDATE",
        );

        // -T 2: returns while the lock is held.
        let r = stampede(&args("2"));
        let ctx = format!(
            "--io {mode} {extra:?}\nstdout:\n{}\nstderr:\n{}",
            r.stdout, r.stderr
        );
        assert_eq!(r.code, 0, "{ctx}");
        assert_eq!(
            srv.psql("lock", holding),
            "1",
            "the run did not wait for the lock: {ctx}"
        );
        assert_eq!(
            srv.psql("lock", waiting),
            "2",
            "both clients were blocked on it: {ctx}"
        );
        assert!(
            r.stdout
                .contains("number of transactions actually processed: 0"),
            "{ctx}"
        );
        // Abandoned, not failed.
        assert!(
            r.stdout
                .contains("failed transactions by kind: serialization 0 (0.000%), deadlock 0 (0.000%), other 0 (0.000%)"),
            "{ctx}"
        );
        assert!(r.stdout.contains("aborted clients: 0 of 2"), "{ctx}");
        assert!(r.stdout.contains(io), "{ctx}");
        assert!(
            r.stdout.contains(
                "2 transactions abandoned in flight at the end (blocked waiting for the server"
            ),
            "{ctx}"
        );

        // Ctrl-C once the new run's clients are blocked too (4 waiting): the partial result.
        let child = stampede_cmd()
            .args(args("60"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        srv.wait_for("lock", waiting, "4");
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ctx = format!("--io {mode} {extra:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        assert_eq!(out.status.code(), Some(130), "{ctx}");
        assert_eq!(
            srv.psql("lock", holding),
            "1",
            "Ctrl-C did not wait for the lock: {ctx}"
        );
        assert!(
            stdout.contains("number of transactions actually processed: 0"),
            "{ctx}"
        );
        assert!(stdout.contains("interrupted"), "{ctx}");
        assert!(
            stdout.contains("2 transactions abandoned in flight at the end"),
            "{ctx}"
        );

        // Once the lock goes, the abandoned UPDATEs run on the server (their requests were
        // sent); the run counted none of them, as none was seen to commit.
        holder.commit();
        srv.wait_for("lock", waiting, "0");
    }
}
