//! `stampede server start|list|stop --remove` against the servers it starts (issue 35, point 5):
//! what `server start` prints works when pasted into a shell (`bash -c`), a run on the server
//! it started is fully observed (PostgreSQL: pg_stat_statements exists and top SQL has the
//! workload's statements; MariaDB: the performance_schema consumers and wait instruments the
//! observer reads are on, and no note asks the user to turn them on), `server list` shows the
//! server running and then stopped, and `server stop --remove` takes the data directory away.
//!
//! Each test keeps its list of servers apart (`XDG_DATA_HOME` in a directory of its own) and its
//! data directories in a temporary directory the server's account can enter (the tests run as
//! root, the servers as `postgres` and `mysql`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{outcome, stampede_cmd};

/// A directory of the test's own, which the server's account can enter.
fn own_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::Builder::new()
        .prefix("stampede-srv-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

/// `stampede server ARGS` with the test's own list of servers: (code, stdout, stderr).
fn server(xdg: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        stampede_cmd()
            .arg("server")
            .args(args)
            .env("XDG_DATA_HOME", xdg),
    )
}

/// `bash -c "stampede ARGS PRINTED"`: the printed words pasted as a person would paste them.
fn pasted(args: &str, printed: &str) -> (i32, String, String) {
    let bin = env!("CARGO_BIN_EXE_stampede");
    let mut c = Command::new("bash");
    c.arg("-c").arg(format!("exec {bin} {args} {printed}"));
    for k in ["PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD"] {
        c.env_remove(k);
    }
    outcome(&mut c)
}

/// The words bash makes of `printed`.
fn words(printed: &str) -> Vec<String> {
    let (code, out, err) = outcome(
        Command::new("bash")
            .arg("-c")
            .arg(format!("printf '%s\\n' {printed}")),
    );
    assert_eq!(code, 0, "{err}");
    out.lines().map(String::from).collect()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The observer's notes of a result, as text.
fn notes(r: &serde_json::Value) -> Vec<String> {
    (r["server_metrics"]["notes"].as_array())
        .map(|a| a.iter().map(|n| n.to_string()).collect())
        .unwrap_or_default()
}

/// `server list`'s line for `dir`, if any.
fn listed(xdg: &Path, dir: &Path) -> Option<String> {
    let (code, out, err) = server(xdg, &["list"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let d = dir.display().to_string();
    out.lines()
        .find(|l| l.split_whitespace().any(|w| w == d))
        .map(String::from)
}

/// `stop --remove`: the directory is gone and unlisted.
fn removed(xdg: &Path, dir: &Path, mysql: bool) {
    let d = dir.display().to_string();
    let mut args = vec!["stop", "--data-dir", &d, "--remove"];
    if mysql {
        args.push("--mysql");
    }
    let (code, out, err) = server(xdg, &args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains(&format!("removed {d}")), "{err}");
    assert!(!dir.exists(), "{d} is still there");
    assert_eq!(listed(xdg, dir), None);
}

#[test]
fn a_postgresql_from_server_start_shows_top_sql_is_listed_and_removed() {
    let tmp = own_dir();
    let xdg = tmp.path().join("xdg");
    let dir: PathBuf = tmp.path().join("pg");
    let d = dir.display().to_string();
    let (code, printed, err) = server(&xdg, &["start", "--data-dir", &d]);
    assert_eq!(code, 0, "{printed}\n{err}");
    let printed = printed.trim().to_string();
    assert_eq!(
        words(&printed),
        ["-h", &d, "-p", "5432", "-U", "postgres", "postgres"],
        "{printed}"
    );

    // pg_stat_statements exists where the printed command points, and in every database made
    // afterwards (template1).
    let psql = |db: &str, sql: &str| {
        let (code, out, err) = outcome(
            Command::new("psql")
                .args([
                    "-X", "-At", "-h", &d, "-p", "5432", "-U", "postgres", "-d", db,
                ])
                .args(["-c", sql]),
        );
        assert_eq!(code, 0, "{sql}: {err}");
        out.trim().to_string()
    };
    let has = "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'";
    assert_eq!(psql("postgres", has), "1");
    psql("postgres", "CREATE DATABASE later");
    assert_eq!(psql("later", has), "1");

    // A run on it, pasted from what was printed: top SQL has the workload's statements.
    let (code, out, err) = pasted("init tpcb -s 1 -q", &printed);
    assert_eq!(code, 0, "{out}\n{err}");
    let result = tmp.path().join("run.json");
    let run = format!("run -t 100 -c 2 --json {}", result.display());
    let (code, out, err) = pasted(&run, &printed);
    assert_eq!(code, 0, "{out}\n{err}");
    let r = json(&result);
    let statements = r["server_metrics"]["statements"].as_array().unwrap();
    assert!(
        statements.iter().any(|s| s["query"]
            .as_str()
            .unwrap_or("")
            .contains("pgbench_accounts")),
        "no pgbench_accounts statement in top SQL: {statements:#?}\n{:#?}",
        notes(&r)
    );
    assert!(
        notes(&r).iter().all(|n| !n.contains("pg_stat_statements")),
        "{:#?}",
        notes(&r)
    );

    // Listed while it runs, and after it stopped (with its data kept and said so).
    let line = listed(&xdg, &dir).expect("listed");
    assert!(
        line.starts_with("postgresql") && line.contains("running"),
        "{line}"
    );
    let (code, out, err) = server(&xdg, &["stop", "--data-dir", &d]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("data kept in") && err.contains("--remove"),
        "{err}"
    );
    let line = listed(&xdg, &dir).expect("listed when stopped");
    assert!(line.contains("stopped"), "{line}");
    assert!(dir.join("PG_VERSION").is_file());

    removed(&xdg, &dir, false);
}

#[test]
fn a_mariadb_from_server_start_is_fully_observed_its_url_pasted_and_removed() {
    let tmp = own_dir();
    let xdg = tmp.path().join("xdg");
    let dir = tmp.path().join("my");
    let d = dir.display().to_string();
    let (code, printed, err) = server(&xdg, &["start", "--mysql", "--data-dir", &d]);
    assert_eq!(code, 0, "{printed}\n{err}");
    let printed = printed.trim().to_string();
    // The URL survives a shell: one word, `&` and all.
    let w = words(&printed);
    assert_eq!(w.len(), 2, "{printed}: {w:?}");
    assert_eq!(w[0], "-d");
    assert!(w[1].starts_with("mysql://") && w[1].contains('&'), "{w:?}");

    // What the observer reads is on, from the server's start.
    let sql = |q: &str| {
        let cnf = format!("--defaults-file={}", dir.join("stampede.cnf").display());
        let (code, out, err) = outcome(Command::new("mariadb").args([&cnf, "-N", "-B", "-e", q]));
        assert_eq!(code, 0, "{q}: {err}");
        out.trim().to_string()
    };
    assert_eq!(
        sql(
            "SELECT GROUP_CONCAT(NAME ORDER BY NAME) FROM performance_schema.setup_consumers \
             WHERE ENABLED = 'YES' AND NAME IN ('events_waits_current', \
             'events_statements_current', 'global_instrumentation', 'thread_instrumentation', \
             'statements_digest')"
        ),
        "events_statements_current,events_waits_current,global_instrumentation,\
         statements_digest,thread_instrumentation"
    );
    assert_eq!(
        sql("SELECT COUNT(*) FROM performance_schema.setup_instruments \
             WHERE NAME LIKE 'wait/%' AND (ENABLED = 'NO' OR TIMED = 'NO')"),
        "0"
    );

    // A run on it, pasted: observed without a note asking to enable anything, and no session
    // shown by its thread state.
    let size = "--tables 1 --table-size 1000";
    let (code, out, err) = pasted(&format!("init oltp {size}"), &printed);
    assert_eq!(code, 0, "{out}\n{err}");
    let result = tmp.path().join("run.json");
    let run = format!(
        "run oltp_read_write {size} -t 200 -c 2 --json {}",
        result.display()
    );
    let (code, out, err) = pasted(&run, &printed);
    assert_eq!(code, 0, "{out}\n{err}");
    let r = json(&result);
    let sm = &r["server_metrics"];
    assert!(!sm["statements"].as_array().unwrap().is_empty());
    for n in notes(&r) {
        for asking in [
            "consumer is off",
            "instruments that are off",
            "start the server with",
        ] {
            assert!(!n.contains(asking), "{n}");
        }
    }
    let waits = sm["waits"].as_array().unwrap();
    assert!(
        waits
            .iter()
            .all(|w| !w["event"].as_str().unwrap_or("").starts_with("Stage:")),
        "{waits:#?}"
    );

    let line = listed(&xdg, &dir).expect("listed");
    assert!(
        line.starts_with("mariadb") && line.contains("running"),
        "{line}"
    );
    removed(&xdg, &dir, true);
}
