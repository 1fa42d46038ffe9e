//! A measured result survives whatever the server does after (issue 30, item 5): the result is
//! saved when the clients stop, every check after runs with its own deadline, and a check the
//! server's fault stops becomes "not verified" with the reason; the summary, the JSON and the
//! HTML are all written, and the exit status is 2.
//!
//! Each fault strikes while the checks are about to run: the failpoint
//! `pause-before-checks` holds stampede there (after its first save), the test waits for that
//! save, then kills the server, restarts it, ends stampede's checking session or stops the
//! server (SIGSTOP); and once mid-run. One server per test: each breaks its own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::pg_target;
use serde_json::Value;
use testkit::{MariaDb, Pg};

/// A stampede run in the background, its files in `dir`.
struct Running {
    child: Child,
    dir: tempfile::TempDir,
}

impl Running {
    fn json(&self) -> PathBuf {
        self.dir.path().join("r.json")
    }

    fn html(&self) -> PathBuf {
        self.dir.path().join("r.html")
    }

    /// Wait until the result is saved with its checks still to run (the first save).
    fn wait_saved_before_checks(&self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let text = std::fs::read_to_string(self.json()).unwrap_or_default();
            if text.contains("not run yet") {
                return;
            }
            assert!(Instant::now() < deadline, "no first save:\n{text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for the end: (exit status, stdout, stderr, result).
    fn finish(self) -> (i32, String, String, Value) {
        let (json, html) = (self.json(), self.html());
        let (code, out, err) = common::parts(self.child.wait_with_output().unwrap());
        let text = std::fs::read_to_string(json)
            .unwrap_or_else(|e| panic!("no result ({e})\n{out}\n{err}"));
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert!(
            std::fs::metadata(html).is_ok_and(|m| m.len() > 0),
            "no HTML\n{out}\n{err}"
        );
        (code, out, err, v)
    }
}

/// `stampede ARGS --json --html` in the background, paused before its checks for `pause_ms`.
fn start(args: &[&str], pause_ms: u64) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let child = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .env(
            "STAMPEDE_FAILPOINTS",
            format!("pause-before-checks={pause_ms}"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Running { child, dir }
}

/// A server with pgbench's tables at scale 1.
fn pg_loaded() -> Pg {
    let pg = Pg::start(&[testkit::THROWAWAY]);
    sh(Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args(["init", "tpcb", "-s", "1"])
        .args(pg_target(&pg, "postgres")));
    pg
}

/// A tpcb-like run of 200 transactions on `pg`, in the background.
fn tpcb(pg: &Pg, extra: &[&str], pause_ms: u64) -> Running {
    let mut args = vec!["run", "tpcb-like", "-t", "100", "-c", "2", "--no-observe"];
    args.extend(extra);
    let target = pg_target(pg, "postgres");
    args.extend(target.iter().map(String::as_str));
    start(&args, pause_ms)
}

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    (v["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {}", v["checks"]))
}

/// The run's numbers are all there: 200 transactions committed.
fn measured(v: &Value, out: &str) {
    assert!(
        out.contains("number of transactions actually processed: 200"),
        "{out}"
    );
    assert_eq!(v["interrupted"], false);
    assert!(v["total"]["txns"][0].is_object(), "{}", v["total"]);
}

/// The end of a run the server failed under before its checks: exit status 2, every number
/// measured, the commit count not verified for a reason containing `why`. Its stdout, stderr
/// and result.
fn ended_unverified(run: Running, why: &str) -> (String, String, Value) {
    let (code, out, err, v) = run.finish();
    assert_eq!(code, 2, "{out}\n{err}");
    measured(&v, &out);
    unverified(&v, "commit count", why, &out);
    (out, err, v)
}

/// Check `name` was not verified, for a reason containing `why`.
fn unverified(v: &Value, name: &str, why: &str, out: &str) {
    let c = check(v, name);
    assert_eq!(c["status"], "unverified", "{c}\n{out}");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("not verified: ") && detail.contains(why),
        "{name}: {detail}"
    );
    assert!(
        out.contains(&format!("NOT VERIFIED  {name}: not verified: ")),
        "{out}"
    );
}

fn sh(cmd: &mut Command) {
    testkit::run(cmd);
}

/// Signal a process of a server this test started. One that ended since the list was read (an
/// autovacuum worker, a session's backend) is not an error: there is nothing left to signal.
fn signal(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) on a pid this test read from /proc; no memory is passed.
    let rc = unsafe { libc::kill(pid, sig) };
    let gone = std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    assert!(rc == 0 || gone, "kill({pid}, {sig}) failed");
}

/// The server's processes stopped (SIGSTOP) until this is dropped, even by a failed assertion:
/// a server left stopped would hang the test's own shutdown of it.
struct Stopped(Vec<i32>);

impl Stopped {
    fn all(pids: Vec<i32>) -> Stopped {
        pids.iter().for_each(|&p| signal(p, libc::SIGSTOP));
        Stopped(pids)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: as in `signal`; errors are ignored here (the process may have ended).
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
    }
}

#[test]
fn a_server_killed_after_the_run_leaves_the_result_and_unverified_checks() {
    let pg = pg_loaded();
    let run = tpcb(&pg, &[], 3000);
    run.wait_saved_before_checks();
    pg.crash();
    let (out, err, v) = ended_unverified(run, "the server is down");
    unverified(&v, "TPC-B invariant", "refuses new connections", &out);
    // The statement ledger could not read the counters either, and says so.
    assert_eq!(check(&v, "statement ledger")["status"], "unverified");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_restart_after_the_run_is_named_and_the_later_checks_still_run() {
    let pg = pg_loaded();
    let run = tpcb(&pg, &[], 3000);
    run.wait_saved_before_checks();
    let data = pg.data_dir();
    sh(testkit::as_server_user(
        Command::new(pg.bin("pg_ctl"))
            .args(["restart", "-m", "fast", "-w", "-D"])
            .arg(&data)
            .arg("-l")
            .arg(data.join("restart.log")),
    ));
    let (out, _, v) = ended_unverified(run, "the server restarted since the run began");
    // The data survived the restart: the invariant is checked on a new session.
    assert_eq!(check(&v, "TPC-B invariant")["status"], "passed", "{out}");
}

#[test]
fn the_checking_session_terminated_by_an_administrator_is_named() {
    let pg = pg_loaded();
    let run = tpcb(&pg, &[], 3000);
    run.wait_saved_before_checks();
    // stampede's commit baseline: the one session idle in its transaction.
    let n = pg.psql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE state = 'idle in transaction' AND pid <> pg_backend_pid()",
    );
    assert_eq!(n.trim(), "1");
    let (out, _, v) = ended_unverified(run, "ended stampede's checking session");
    assert_eq!(check(&v, "TPC-B invariant")["status"], "passed", "{out}");
}

#[test]
fn a_server_that_stops_answering_costs_one_deadline_not_a_hang() {
    let pg = pg_loaded();
    let run = tpcb(&pg, &["--check-timeout", "2"], 3000);
    run.wait_saved_before_checks();
    let pm = pg.pid().expect("the postmaster");
    // Every process of the server stops: the backends too.
    let stopped = Stopped::all(descendants_and(pm));
    let t0 = Instant::now();
    let r = std::panic::catch_unwind(move || run.finish());
    drop(stopped);
    let (code, out, err, v) = r.unwrap();
    assert_eq!(code, 2, "{out}\n{err}");
    measured(&v, &out);
    unverified(
        &v,
        "commit count",
        "no answer from the server within 2 s",
        &out,
    );
    unverified(
        &v,
        "TPC-B invariant",
        "an earlier check got no answer",
        &out,
    );
    // One deadline (and the pause), not one per check, nor a hang.
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
}

#[test]
fn a_server_killed_mid_run_leaves_every_output_and_exit_2() {
    let pg = pg_loaded();
    let target = pg_target(&pg, "postgres");
    let mut args = vec!["run", "tpcb-like", "-T", "30", "-c", "2", "--no-observe"];
    args.extend(target.iter().map(String::as_str));
    let run = start(&args, 0);
    pg.wait_for("SELECT (count(*) > 50)::text FROM pgbench_history", "true");
    pg.crash();
    let (code, out, err, v) = run.finish();
    assert_eq!(code, 2, "{out}\n{err}");
    assert_eq!(
        v["connections"]["aborted"].as_array().unwrap().len(),
        2,
        "{out}"
    );
    unverified(&v, "commit count", "the server is down", &out);
}

#[test]
fn mariadb_killed_after_the_run_leaves_the_result_and_unverified_checks() {
    let m = MariaDb::start(&[]);
    m.fresh_database("survive");
    let url = m.socket_url("root", None, "survive");
    sh(Command::new(env!("CARGO_BIN_EXE_stampede")).args(["init", "tpcb", "-s", "1", "-d", &url]));
    let run = start(
        &[
            "run",
            "tpcb-like",
            "-t",
            "100",
            "-c",
            "2",
            "--no-observe",
            "-d",
            &url,
        ],
        3000,
    );
    run.wait_saved_before_checks();
    signal(m.pid().expect("mariadbd"), libc::SIGKILL);
    let (out, _, v) = ended_unverified(run, "the server is down");
    unverified(&v, "TPC-B invariant", "refuses new connections", &out);
}

/// `pid` and every process under it.
fn descendants_and(pid: i32) -> Vec<i32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(Path::new("/proc").join(p.to_string()).join("stat"))
                .unwrap_or_default();
            // pid (comm) state ppid ...: comm may hold spaces, so read after its ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
            if ppid == Some(parent) && !all.contains(&p) {
                all.push(p);
            }
        }
        i += 1;
    }
    all
}
