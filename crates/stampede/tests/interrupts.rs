//! Ctrl-C and SIGTERM (issue 30), against real servers: one SIGINT or SIGTERM mid-run prints
//! and saves the partial result (exit 130), and one during the checks lets them finish; a
//! second stops a step the first could not; three
//! during a run or a load on the embedded PostgreSQL leave no server process and no directory;
//! a directory that cannot be removed is named; one signal ends a connection attempt to a
//! server that accepts and never answers.
//!
//! Signals are sent when a condition says the process is where the test wants it (a progress
//! line, a session waiting on a lock, a connection accepted), never after a sleep. One
//! PostgreSQL serves the remote-target tests (a database each); the embedded-server tests start
//! their own, through stampede, in a TMPDIR of their own, which is how their leftovers are
//! found.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{number_after, stampede_cmd, Holder, Server};

/// How long a test waits for a condition before it fails; generous, since the machine is
/// shared. Not a timing assertion: every wait ends as soon as its condition holds.
const PATIENCE: Duration = Duration::from_secs(120);

/// One PostgreSQL for this binary's remote-target tests (stopped at exit).
fn server() -> std::sync::MutexGuard<'static, Option<Server>> {
    common::shared_server(|_| {})
}

/// A running stampede: its stderr read line by line as it comes (kept, and sent to the test).
struct Running {
    child: Child,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    stdout: std::thread::JoinHandle<String>,
}

fn spawn(args: &[String], tmpdir: Option<&Path>) -> Running {
    let mut cmd = stampede_cmd();
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(t) = tmpdir {
        cmd.env("TMPDIR", t);
    }
    let mut child = cmd.spawn().expect("stampede runs");
    let (lines, stderr) = common::stderr_lines(&mut child);
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    Running {
        child,
        lines,
        stderr,
        stdout,
    }
}

impl Running {
    /// Wait for a stderr line containing `text`; the line.
    fn wait_line(&self, text: &str) -> String {
        let give_up = Instant::now() + PATIENCE;
        loop {
            let left = give_up.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(text) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line with {text:?} on stderr ({e})"),
            }
        }
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: plain kill(2) to our child (ESRCH after it exited is ignored).
        unsafe { libc::kill(self.child.id() as i32, sig) };
    }

    /// Wait for the exit (at most `within`): exit code, stdout, stderr.
    fn finish(mut self, within: Duration) -> (i32, String, String) {
        let give_up = Instant::now() + within;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > give_up {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let err = self.stderr.join().unwrap();
                panic!("stampede still running after {within:?}; stderr:\n{err}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = self.stdout.join().unwrap();
        let err = self.stderr.join().unwrap();
        (status.code().unwrap_or(-1), out, err)
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// A TMPDIR of the test's own, which the server's account can enter (stampede runs as root in
/// CI and the server as `postgres`).
fn own_tmpdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::Builder::new()
        .prefix("stampede-int-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

/// The processes whose working directory or command line is inside `dir`: a server of that
/// directory (the postmaster's cwd and `-D`; its backends' cwd).
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let cwd = std::fs::read_link(p.path().join("cwd"))
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cmd = std::fs::read(p.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .unwrap_or_default();
        if cwd.starts_with(&dir) || cmd.contains(&dir) {
            found.push(format!("{pid}: {cmd} (in {cwd})"));
        }
    }
    found
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect()
}

/// A fresh database `db` with pgbench's tables at scale 1.
fn loaded(srv: &Server, db: &str) {
    srv.create_db(db);
    assert!(srv.pgbench(db, &["-i", "-s", "1", "-q"]).status.success());
}

/// `stampede ARGS` on `db`, once it reports progress, held up by a lock on `table` that
/// another session takes: the run, the lock's holder, and the query counting the sessions of
/// `db` that wait on a lock (1 when this returns).
fn blocked_on(
    srv: &Server,
    db: &str,
    mut args: Vec<String>,
    table: &str,
) -> (Running, Holder, String) {
    args.extend(srv.target(db));
    let run = spawn(&args, None);
    run.wait_line("progress:");
    let holder = srv.hold(db, "locker", &format!("LOCK TABLE {table}"));
    let waiting = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}' \
         AND wait_event_type = 'Lock'"
    );
    srv.wait_for("postgres", &waiting, "1");
    (run, holder, waiting)
}

#[test]
fn one_sigint_or_sigterm_mid_run_prints_and_saves_the_partial_result() {
    let guard = server();
    let srv = guard.as_ref().unwrap();
    for (sig, db) in [(libc::SIGINT, "cc_int"), (libc::SIGTERM, "cc_term")] {
        loaded(srv, db);
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("partial.json");
        let mut args = strings(&["run", "-c", "2", "-T", "600", "-P", "1", "--json"]);
        args.push(json.to_str().unwrap().into());
        args.extend(srv.target(db));
        let run = spawn(&args, None);
        run.wait_line("progress:");
        run.signal(sig);
        let (code, stdout, stderr) = run.finish(PATIENCE);
        assert_eq!(code, 130, "{db}: stdout:\n{stdout}\nstderr:\n{stderr}");
        let done = number_after(&stdout, "number of transactions actually processed: ");
        assert!(done > 0, "{stdout}");
        assert!(stdout.contains("interrupted"), "{stdout}");
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(value["interrupted"], true);
        // Every counted transaction is in the history: in-flight ones finished, none was lost.
        assert_eq!(
            srv.psql(db, "SELECT count(*) FROM pgbench_history"),
            done.to_string(),
            "{db}"
        );
    }
}

/// The first SIGTERM stops the engine, and the check after it waits on a table another session
/// holds locked; the second SIGTERM ends the process at once (without it, it would wait for the
/// lock).
#[test]
fn a_second_sigterm_ends_a_step_that_the_first_could_not() {
    let guard = server();
    let srv = guard.as_ref().unwrap();
    let db = "second";
    loaded(srv, db);
    let args = strings(&[
        "run",
        "-n",
        "-c",
        "1",
        "-T",
        "600",
        "-P",
        "1",
        "--no-observe",
    ]);
    // Every transaction updates pgbench_branches, and the TPC-B check reads it.
    let (run, holder, waiting) = blocked_on(srv, db, args, "pgbench_branches");
    run.signal(libc::SIGTERM);
    run.wait_line("interrupted");
    // The client's transaction was cut off (its backend still waits); the check waits too.
    srv.wait_for("postgres", &waiting, "2");
    run.signal(libc::SIGTERM);
    let (code, stdout, stderr) = run.finish(Duration::from_secs(30));
    holder.rollback();
    assert_eq!(code, 130, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("interrupted again (SIGTERM)"), "{stderr}");
}

/// A run that ended by itself (-T) and is checking, waiting on a table another session holds
/// locked, when one SIGINT comes: the waiting check ends at once as NOT VERIFIED (the user
/// asked to stop waiting), the measured result is printed and saved all the same, and the exit
/// code says the run was interrupted.
#[test]
fn one_sigint_during_the_checks_ends_them_and_keeps_the_result() {
    let guard = server();
    let srv = guard.as_ref().unwrap();
    let db = "checking";
    loaded(srv, db);
    let dir = own_tmpdir();
    let json = dir.path().join("checking.json");
    // select-only: the clients never touch pgbench_history; the TPC-B check reads it.
    let mut args = strings(&["run", "-b", "select-only", "-n", "-c", "1", "-T", "3"]);
    args.extend(strings(&["-P", "1", "--no-observe", "--json"]));
    args.push(json.display().to_string());
    let (run, holder, waiting) = blocked_on(srv, db, args, "pgbench_history");
    run.signal(libc::SIGINT);
    let (code, stdout, stderr) = run.finish(PATIENCE);
    holder.rollback();
    assert_eq!(code, 130, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("number of transactions actually processed: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("NOT VERIFIED  TPC-B invariant: not verified: interrupted"),
        "{stdout}\n{stderr}"
    );
    // Nothing cut the checker's wait but the signal: no check waited out --check-timeout.
    assert!(!stdout.contains("--check-timeout"), "{stdout}");
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let checks = value["checks"].as_array().expect("checks in the JSON");
    assert!(
        checks
            .iter()
            .any(|c| c["name"] == "TPC-B invariant" && c["status"] == "unverified"),
        "{checks:?}"
    );
    // The check's session was dropped with the step: nothing of stampede's still waits.
    srv.wait_for("postgres", &waiting, "0");
}

/// A long run of `clients` clients on an embedded server of its own (its directory in `tmp`),
/// once it reports progress.
fn long_embedded_run(tmp: &Path, clients: &str) -> Running {
    let args = [
        "run",
        "-c",
        clients,
        "-T",
        "600",
        "-P",
        "1",
        "-s",
        "1",
        "--no-observe",
    ];
    let run = spawn(&strings(&args), Some(tmp));
    run.wait_line("progress:");
    run
}

/// Three SIGINTs on a run that started its own PostgreSQL: the second stops the server at once
/// and removes its directory (the third, arriving meanwhile, only hurries it).
#[test]
fn three_sigints_mid_run_on_the_embedded_server_leave_no_process_and_no_directory() {
    let tmp = own_tmpdir();
    let run = long_embedded_run(tmp.path(), "2");
    three_sigints_leave_nothing(run, tmp.path());
}

/// The same during the load that precedes the run on a fresh embedded server: the loader is
/// writing pgbench_accounts (scale 20: 2,000,000 rows) when the signals come.
#[test]
fn three_sigints_while_loading_the_embedded_server_leave_no_process_and_no_directory() {
    let tmp = own_tmpdir();
    let args = strings(&["run", "-c", "1", "-t", "1", "-s", "20", "--no-observe"]);
    let run = spawn(&args, Some(tmp.path()));
    let line = run.wait_line(", data in ");
    let data = PathBuf::from(line.rsplit(", data in ").next().unwrap().trim());
    wait_until(|| largest_table_file(&data) > 0);
    three_sigints_leave_nothing(run, tmp.path());
}

fn three_sigints_leave_nothing(run: Running, tmp: &Path) {
    assert_eq!(entries(tmp).len(), 1, "{:?}", entries(tmp));
    run.signal(libc::SIGINT);
    run.wait_line("interrupted");
    run.signal(libc::SIGINT);
    run.signal(libc::SIGINT);
    let (code, stdout, stderr) = run.finish(PATIENCE);
    assert_eq!(code, 130, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stderr.contains("interrupted again (SIGINT)"), "{stderr}");
    assert_eq!(processes_in(tmp), Vec::<String>::new(), "{stderr}");
    assert_eq!(
        entries(tmp),
        Vec::<PathBuf>::new(),
        "left in TMPDIR; {stderr}"
    );
}

/// The largest file under `data/base` once it passes 16 MiB (0 before): no catalog of a new
/// cluster is that large, so it is pgbench_accounts, which the loader is writing.
fn largest_table_file(data: &Path) -> u64 {
    let Ok(dbs) = std::fs::read_dir(data.join("base")) else {
        return 0;
    };
    dbs.flatten()
        .filter_map(|d| std::fs::read_dir(d.path()).ok())
        .flat_map(|files| files.flatten())
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .filter(|&n| n > 16 << 20)
        .max()
        .unwrap_or(0)
}

fn wait_until(mut cond: impl FnMut() -> bool) {
    let give_up = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < give_up, "condition not met");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// After one SIGINT the embedded server stops as after any run, but its directory holds a file
/// nobody may remove (immutable: root included): the message names the directory, and no
/// server process is left.
#[test]
fn a_directory_that_cannot_be_removed_is_named() {
    let tmp = own_tmpdir();
    let run = long_embedded_run(tmp.path(), "1");
    let root = entries(tmp.path()).pop().unwrap();
    let stuck = root.join("stuck");
    std::fs::write(&stuck, "x").unwrap();
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&stuck)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        // Only root may make a file immutable (CI runs as root: there it must work).
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "chattr +i failed as root");
        run.signal(libc::SIGINT);
        run.finish(PATIENCE);
        return;
    }
    run.signal(libc::SIGINT);
    let (code, stdout, stderr) = run.finish(PATIENCE);
    assert!(chattr("-i"));
    assert_eq!(code, 130, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot remove the embedded server's directory {}",
            root.display()
        )),
        "{stderr}"
    );
    assert_eq!(processes_in(tmp.path()), Vec::<String>::new(), "{stderr}");
}

/// A listener that accepts connections and never says a word: one SIGINT while stampede waits
/// for the server's first reply ends the run (the connect timeout is 10 minutes: it is not what
/// ends it).
#[test]
fn one_sigint_while_connecting_to_a_server_that_never_answers_exits_130() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, accepted) = mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
            let _ = tx.send(());
        }
    });
    let targets = [
        format!("host=127.0.0.1 port={port} user=u dbname=d connect_timeout=600"),
        format!("mysql://u@127.0.0.1:{port}/d?connect-timeout=600"),
    ];
    // A run, a load (whose loader must not be dropped half-way, so its first connection is
    // made alone) and a reset.
    let commands: [&[&str]; 3] = [
        &["run", "-t", "1"],
        &["init", "tpcb", "-q"],
        &["reset", "tpcb"],
    ];
    for target in &targets {
        for command in commands {
            if command[0] == "reset" && target.starts_with("mysql") {
                continue; // reset restores pgbench's tables on PostgreSQL
            }
            let args = [command, &["-d", target]].concat();
            let run = spawn(&strings(&args), None);
            accepted.recv_timeout(PATIENCE).expect("stampede connects");
            run.signal(libc::SIGINT);
            let (code, stdout, stderr) = run.finish(Duration::from_secs(30));
            assert_eq!(code, 130, "{args:?}: stdout:\n{stdout}\nstderr:\n{stderr}");
            assert!(
                stderr.contains("interrupted while waiting for the server"),
                "{args:?}: {stderr}"
            );
        }
    }
    // The drop-ins' loads, pgbench -i and sysbench's prepare, speak their peers' words; the
    // exit code says it.
    let sysbench_port = format!("--pgsql-port={port}");
    let dropins: [&[&str]; 2] = [
        &["pgbench", "-i", &targets[0]],
        &[
            "sysbench",
            "oltp_read_write",
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            &sysbench_port,
            "--pgsql-user=u",
            "--pgsql-db=d",
            "prepare",
        ],
    ];
    for args in dropins {
        let run = spawn(&strings(args), None);
        accepted.recv_timeout(PATIENCE).expect("stampede connects");
        run.signal(libc::SIGINT);
        let (code, stdout, stderr) = run.finish(Duration::from_secs(30));
        assert_eq!(code, 130, "{args:?}: stdout:\n{stdout}\nstderr:\n{stderr}");
    }
}
