//! `stampede replay` of a MariaDB capture (issue 33): sysbench's oltp_write_only, two threads,
//! captured in the general query log written to its file and to `mysql.general_log` at once,
//! replayed on a copy of the table as it was before the capture: from the file, and from the
//! table through a replay file (`replay parse --general-log-table`). Each replay must leave the
//! table as the run left it (CHECKSUM TABLE), send every captured statement, and MariaDB's
//! statement counters must agree with what was sent. A reader that loses a statement or a
//! value of an Execute line, a session split wrong at a reused thread id, or a replay that
//! reorders a session's statements, fails here.
//!
//! The two sysbench threads draw rows uniformly from 100,000, 40 events in all: two sessions'
//! events on one row close enough in time for a replay to order them otherwise are not
//! expected in a run this small.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{outcome, stampede};
use serde_json::Value;
use testkit::MariaDb;

/// MariaDB's counters (`Com_*`, which the commit count and the ledger read) are the whole
/// server's: this binary's tests take turns, or one's statements would count in another's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct Captured {
    db: MariaDb,
    /// Keeps the log's directory.
    _dir: tempfile::TempDir,
    log: PathBuf,
    checksum: String,
}

fn checksum(m: &MariaDb, db: &str) -> String {
    let out = m.sql(&format!("CHECKSUM TABLE `{db}`.sbtest1"));
    // `db.sbtest1<TAB>checksum`: the table's name differs between copies, the sum must not.
    out.split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string()
}

fn captured() -> &'static Captured {
    static C: OnceLock<Captured> = OnceLock::new();
    C.get_or_init(|| {
        let m = MariaDb::start(&[]);
        m.fresh_database("sbtest");
        let sysbench = |cmd: &str, extra: &[&str]| {
            let mut c = std::process::Command::new("sysbench");
            c.args(["oltp_write_only", "--db-driver=mysql", "--mysql-user=root"])
                .arg(format!("--mysql-socket={}", m.socket().display()))
                .args(["--mysql-db=sbtest", "--tables=1", "--table-size=100000"])
                .args(extra)
                .arg(cmd);
            let (code, out, err) = outcome(&mut c);
            assert_eq!(code, 0, "sysbench {cmd}: {out}\n{err}");
        };
        sysbench("prepare", &[]);
        copy_from(&m, "sbtest", "before_capture");
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("general.log");
        // The server writes the log: its directory must be the server's to write.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        m.sql(&format!(
            "SET GLOBAL log_output = 'FILE,TABLE'; SET GLOBAL general_log_file = '{}'; \
             TRUNCATE TABLE mysql.general_log; SET GLOBAL general_log = ON",
            log.display()
        ));
        sysbench(
            "run",
            &[
                "--threads=2",
                "--events=40",
                "--time=0",
                "--rand-type=uniform",
            ],
        );
        m.sql("SET GLOBAL general_log = OFF");
        let checksum = checksum(&m, "sbtest");
        Captured {
            db: m,
            _dir: dir,
            log,
            checksum,
        }
    })
}

/// A copy of `from.sbtest1` in a new database `to`.
fn copy_from(m: &MariaDb, from: &str, to: &str) {
    m.fresh_database(to);
    m.sql(&format!(
        "CREATE TABLE `{to}`.sbtest1 LIKE `{from}`.sbtest1; \
         INSERT INTO `{to}`.sbtest1 SELECT * FROM `{from}`.sbtest1"
    ));
}

/// Replay `capture` on a new copy `db` of the table before the capture.
fn replay(capture: &Path, db: &str, extra: &[&str]) -> Value {
    let c = captured();
    copy_from(&c.db, "before_capture", db);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let url = c.db.socket_url("root", None, db);
    let mut args: Vec<String> = vec!["replay".into(), capture.display().to_string()];
    args.extend(["-d".into(), url, "--only-database".into(), "sbtest".into()]);
    args.extend(["--map-db".into(), format!("sbtest={db}")]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--json".into(), json.display().to_string()]);
    let run = stampede(&args);
    assert_eq!(run.code, 0, "{args:?}\n{}\n{}", run.stdout, run.stderr);
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

fn replayed_like_the_capture(v: &Value, db: &str) {
    let c = captured();
    assert_eq!(
        checksum(&c.db, db),
        c.checksum,
        "{db} differs from the run's end"
    );
    let r = &v["replay"];
    let parsed = &r["parsed"]["statements"];
    let n = |k: &str| parsed[k].as_u64().unwrap_or(0);
    // oltp_write_only, per event: BEGIN, 2 UPDATEs, DELETE, INSERT, COMMIT (oltp_common.lua).
    assert_eq!((n("begin"), n("commit")), (40, 40), "{r}");
    assert_eq!((n("update"), n("delete"), n("insert")), (80, 40, 40), "{r}");
    assert_eq!(r["sessions"], 2, "{r}");
    assert_eq!(r["failed"], 0, "{r}");
    assert_eq!(r["ok"], r["statements"], "{r}");
    let sent = ["update", "insert", "delete"].map(|k| (k, n(k)));
    common::replay_checked(v, &sent);
}

#[test]
fn a_general_log_file_replays_to_the_same_table() {
    let _turn = one_at_a_time();
    let v = replay(&captured().log.clone(), "r_file", &["--speed", "max"]);
    replayed_like_the_capture(&v, "r_file");
    assert_eq!(v["replay"]["format"], "general");
}

/// `log_output = TABLE` keeps microseconds: parsed from the table into a replay file, and
/// replayed at the captured pace.
#[test]
fn the_general_log_table_replays_through_a_replay_file() {
    let _turn = one_at_a_time();
    let c = captured();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.replay");
    let url = c.db.socket_url("root", None, "mysql");
    let run = stampede(&[
        "replay",
        "parse",
        "--general-log-table",
        "-d",
        &url,
        "-o",
        &file.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("statements: "), "{}", run.stdout);
    let v = replay(&file, "r_table", &["--speed", "1"]);
    replayed_like_the_capture(&v, "r_table");
    assert_eq!(v["replay"]["format"], "replay");
}

/// `--capture` on MariaDB: the general log's table for the window, the settings put back.
#[test]
fn capture_records_a_window_of_the_server_s_workload() {
    let _turn = one_at_a_time();
    let c = captured();
    copy_from(&c.db, "before_capture", "live");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.replay");
    let url = c.db.socket_url("root", None, "mysql");
    let args: Vec<String> = ["replay", "--capture", "3", "-d", &url, "-o"]
        .iter()
        .map(|s| s.to_string())
        .chain([file.display().to_string()])
        .collect();
    let mut child = common::stampede_cmd()
        .args(&args)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::BufRead;
        let mut err = std::io::BufReader::new(child.stderr.as_mut().unwrap());
        let mut line = String::new();
        while !line.contains("capturing the server's statements") {
            line.clear();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "stampede ended early"
            );
        }
    }
    let mut sb = std::process::Command::new("sysbench");
    sb.args(["oltp_write_only", "--db-driver=mysql", "--mysql-user=root"])
        .arg(format!("--mysql-socket={}", c.db.socket().display()))
        .args(["--mysql-db=live", "--tables=1", "--table-size=100000"])
        .args([
            "--threads=1",
            "--events=10",
            "--time=0",
            "--rand-type=uniform",
            "run",
        ]);
    let (code, out, err) = outcome(&mut sb);
    assert_eq!(code, 0, "{out}\n{err}");
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stdout)
    );
    assert_eq!(
        c.db.sql("SELECT @@global.general_log, @@global.log_output")
            .trim(),
        "0\tFILE,TABLE",
        "the general log's settings were not put back"
    );
    let live = checksum(&c.db, "live");
    copy_from(&c.db, "before_capture", "r_live");
    let url = c.db.socket_url("root", None, "r_live");
    let run = stampede(&[
        "replay",
        &file.display().to_string(),
        "-d",
        &url,
        "--only-database",
        "live",
        "--map-db",
        "live=r_live",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(checksum(&c.db, "r_live"), live);
}
