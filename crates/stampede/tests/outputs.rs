//! What a run saves when saving fails, where a password with reserved characters goes, a silent
//! host in a host list, and what an observed run keeps of the server and its machine (every
//! counter per interval, the data directory's device, the counters CSV), against one private
//! PostgreSQL shared by this binary's tests.

mod common;

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use common::tmpfs::Tmpfs;
use common::{stampede, Server};

static SERVER: OnceLock<Mutex<Option<Server>>> = OnceLock::new();

extern "C" fn stop_server() {
    if let Some(m) = SERVER.get() {
        if let Ok(mut g) = m.lock() {
            drop(g.take());
        }
    }
}

/// The shared server's socket directory and port, and a psql on it.
fn server() -> (String, String, impl Fn(&str) -> String) {
    let m = SERVER.get_or_init(|| {
        // SAFETY: registering a plain extern "C" fn.
        unsafe { libc::atexit(stop_server) };
        let s = Server::start();
        // A run's commit count is its database's: each test whose run is checked gets a
        // database no other test of this binary connects to, made before any test runs
        // (a CI run failed the password test's count by the silent-host test's commits on
        // a shared `postgres`).
        for db in ["dropin_check", "password", "full_disk"] {
            s.create_db(db);
        }
        Mutex::new(Some(s))
    });
    let g = m.lock().unwrap();
    let s = g.as_ref().expect("running");
    let (host, port) = (s.host(), s.port());
    drop(g);
    let psql = move |sql: &str| {
        let g = SERVER.get().unwrap().lock().unwrap();
        g.as_ref().unwrap().psql("postgres", sql)
    };
    (host, port, psql)
}

/// A script that needs no tables: a run of it needs nothing loaded.
fn script(dir: &Path) -> String {
    let p = dir.join("select1.sql");
    std::fs::write(&p, "SELECT 1;\n").unwrap();
    p.display().to_string()
}

/// `stampede run -f SCRIPT -t TXNS -c 1 --json JSON --html HTML TARGET`.
fn run_script(
    script: &str,
    txns: &str,
    (json, html): (&Path, &Path),
    target: &[&str],
) -> common::Run {
    let files = [
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ];
    let run = ["run", "-f", script, "-t", txns, "-c", "1"];
    stampede(&[&run[..], &files, target].concat())
}

#[test]
fn a_full_disk_keeps_the_previous_json_and_the_html_is_still_written() {
    let Some(disk) = Tmpfs::mount(512, false) else {
        return;
    };
    let (host, port, _) = server();
    let d = tempfile::tempdir().unwrap();
    let json = disk.path().join("run.json");
    let old = "{\"the previous run\": true}\n";
    std::fs::write(&json, old).unwrap();
    // Room for the probe and a block, not for a result.
    disk.fill(4096);
    let html = d.path().join("run.html");
    let target = common::target_at(&host, &port, "full_disk");
    let target: Vec<&str> = target.iter().map(String::as_str).collect();
    let r = run_script(&script(d.path()), "20", (&json, &html), &target);
    // The numbers are printed and the other file written; the exit code says to look.
    assert_eq!(r.code, 2, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 20"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains(&format!(
            "--json {}: not written: No space left on device",
            json.display()
        )) && r.stderr.contains("the previous one, unchanged"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&json).unwrap(), old);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.trim_end().ends_with("</html>"), "the HTML is whole");
    let mut left: Vec<String> = std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["filler", "run.json"], "a temporary file was left");
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (c as char).to_string()
            }
            _ => format!("%{c:02X}"),
        })
        .collect()
}

/// A piece of `secret` (3 characters or more) found in `text`.
fn leak(text: &str, secret: &str) -> Option<String> {
    let chars: Vec<char> = secret.chars().collect();
    (3..=chars.len())
        .flat_map(|len| (0..=chars.len() - len).map(move |s| (s, len)))
        .map(|(s, len)| chars[s..s + len].iter().collect::<String>())
        .find(|piece| text.contains(piece.as_str()))
}

#[test]
fn a_password_with_reserved_characters_connects_and_is_never_printed() {
    let (host, port, psql) = server();
    // Letters that appear nowhere else in the output, so a piece found can only be the
    // password's.
    let pw = "Zq?W#k@x/9'Y";
    psql(&format!(
        "CREATE ROLE pwuser LOGIN PASSWORD '{}'",
        pw.replace('\'', "''")
    ));
    // A password is asked of pwuser on the socket; everyone else keeps trust.
    let data_dir = {
        let g = SERVER.get().unwrap().lock().unwrap();
        g.as_ref().unwrap().pg.data_dir().to_path_buf()
    };
    let hba = data_dir.join("pg_hba.conf");
    let before = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(&hba, format!("local all pwuser scram-sha-256\n{before}")).unwrap();
    psql("SELECT pg_reload_conf()");
    let d = tempfile::tempdir().unwrap();
    let sql = script(d.path());
    let url =
        |spelled: &str| format!("postgresql://pwuser:{spelled}@/password?host={host}&port={port}");
    let (json, html) = (d.path().join("run.json"), d.path().join("run.html"));
    let run = |url: &str| run_script(&sql, "5", (&json, &html), &[url]);
    // Percent-encoded, then raw with what libpq takes raw (all but '/').
    let raw = pw.replace('/', "%2F");
    for spelled in [encode(pw), raw] {
        let r = run(&url(&spelled));
        assert_eq!(r.code, 0, "{spelled}: {}\n{}", r.stdout, r.stderr);
        let saved = std::fs::read_to_string(&json).unwrap();
        let page = std::fs::read_to_string(&html).unwrap();
        for (what, text) in [
            ("stdout", &r.stdout),
            ("stderr", &r.stderr),
            ("JSON", &saved),
            ("HTML", &page),
        ] {
            let found = leak(text, pw).or_else(|| leak(text, &spelled));
            assert!(found.is_none(), "{spelled}: {what} holds {found:?}");
        }
        assert!(
            saved.contains("pwuser:***@"),
            "the command line keeps its shape"
        );
    }
    // The password was checked: a wrong one is refused, and not printed either.
    let r = run(&url("Zq-wrong-Wk9"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("password authentication failed"),
        "{}",
        r.stderr
    );
    assert!(leak(&r.stderr, "Zq-wrong-Wk9").is_none(), "{}", r.stderr);
}

#[test]
fn a_silent_host_in_the_list_is_passed_over_after_its_connect_timeout() {
    let (host, port, _) = server();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let d = tempfile::tempdir().unwrap();
    // Every connection tries the silent host first: the setup's and the client's (on an
    // engine thread, whose runtime has no tokio timer) here, the checks' and the observer's
    // left out to keep it short.
    let r = stampede(&[
        "run",
        "-f",
        &script(d.path()),
        "-t",
        "3",
        "-c",
        "1",
        "--no-check",
        "--no-observe",
        "-d",
        &format!(
            "host=127.0.0.1,{host} port={silent_port},{port} user=postgres dbname=postgres \
             connect_timeout=1"
        ),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 3"),
        "{}",
        r.stdout
    );
    silent.set_nonblocking(true).unwrap();
    assert!(silent.accept().is_ok(), "the silent host was tried first");
}

/// The block device that holds `dir` as `df` names its source (`/dev/root` and other links
/// resolved): a reading independent of the observer's (`st_dev` looked up in /proc/diskstats).
/// `None` where the file system has no block device of its own (overlay, tmpfs).
fn device_of(dir: &str) -> Option<String> {
    let out = std::process::Command::new("df")
        .args(["--output=source", dir])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let source = text.lines().nth(1)?.trim().to_string();
    let real = std::fs::canonicalize(&source).ok()?;
    let name = real.file_name()?.to_str()?.to_string();
    Path::new("/sys/class/block")
        .join(&name)
        .exists()
        .then_some(name)
}

#[test]
fn an_observed_run_keeps_every_counter_per_interval_and_the_data_directory_s_device() {
    let (host, port, psql) = server();
    psql("DROP DATABASE IF EXISTS counters");
    psql("CREATE DATABASE counters");
    {
        let g = SERVER.get().unwrap().lock().unwrap();
        g.as_ref()
            .unwrap()
            .psql("counters", "CREATE TABLE c (i int)");
    }
    let data_dir = psql("SHOW data_directory").trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let sql = dir.path().join("insert.sql");
    std::fs::write(&sql, "INSERT INTO c VALUES (1);\n").unwrap();
    let (json, html, csv) = (
        dir.path().join("r.json"),
        dir.path().join("r.html"),
        dir.path().join("counters.csv"),
    );
    let run = [
        "run",
        "-f",
        sql.to_str().unwrap(),
        "-c",
        "2",
        "-T",
        "3",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ];
    let target = common::target_at(&host, &port, "counters");
    let run = stampede(
        &[
            &run[..],
            &target.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &v["server_metrics"];
    let rows: f64 = {
        let g = SERVER.get().unwrap().lock().unwrap();
        g.as_ref()
            .unwrap()
            .psql("counters", "SELECT count(*) FROM c")
            .trim()
            .parse()
            .unwrap()
    };
    assert!(rows > 0.0);
    // The table's own counters, per interval and over the run: the run inserted every row the
    // table holds (the end snapshot waits for the clients' statistics to be flushed).
    assert_eq!(m["deltas"]["table.c.n_tup_ins"].as_f64(), Some(rows));
    assert_eq!(m["deltas"]["tables.n_tup_ins"].as_f64(), Some(rows));
    let (start, end) = (
        m["window_start_ms"].as_i64().unwrap(),
        m["window_end_ms"].as_i64().unwrap(),
    );
    let in_window: Vec<&serde_json::Value> = (m["counters"].as_array().unwrap().iter())
        .filter(|c| (start..=end).contains(&c["t_ms"].as_i64().unwrap()))
        .collect();
    assert!(in_window.len() >= 2, "{}", m["counters"]);
    for key in [
        "table.c.n_tup_ins",
        "statio.heap_blks_hit",
        "database.xact_commit",
    ] {
        assert!(
            in_window.iter().all(|c| c["values"][key].is_number()),
            "{key} missing from a sample"
        );
    }
    let inserted: Vec<f64> = (in_window.iter())
        .map(|c| c["values"]["table.c.n_tup_ins"].as_f64().unwrap())
        .collect();
    assert!(inserted.windows(2).all(|w| w[1] >= w[0]), "{inserted:?}");
    assert!(inserted.last() > inserted.first(), "{inserted:?}");

    // The machine is the server's, and the data directory's device is watched on its own: the
    // one df names.
    assert_eq!(m["os_machine"], "server");
    let samples = m["os"].as_array().unwrap();
    assert!(samples.len() >= 2);
    let holding: Vec<&serde_json::Value> = (samples.iter())
        .flat_map(|s| s["devices"].as_array().into_iter().flatten())
        .filter(|d| {
            d["holds"]
                .as_str()
                .is_some_and(|h| h.contains("data directory"))
        })
        .collect();
    match device_of(&data_dir) {
        Some(dev) => {
            assert!(holding.len() >= 2, "{}", m["os"]);
            for d in &holding {
                assert_eq!(d["device"], dev.as_str());
                for f in ["reads_per_s", "writes_per_s", "queue_depth", "util_pct"] {
                    assert!(d[f].as_f64().is_some_and(|x| x >= 0.0), "{f}: {d}");
                }
                // A latency is a number when the period had such operations, else null.
                assert!(d["write_latency_ms"].is_number() || d["writes_per_s"] == 0.0);
            }
            let modes = samples[1]["cpu_modes_pct"].as_object().unwrap();
            assert_eq!(modes.len(), 8, "{modes:?}");
        }
        None => {
            let notes = m["notes"].to_string();
            assert!(notes.contains("not a block device"), "{notes}");
        }
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<section id=\"counters\">"));
    assert!(page.contains("set-rows") && page.contains("set-blocks"));
    assert_eq!(
        page.contains("<section id=\"storage\">"),
        device_of(&data_dir).is_some()
    );

    // Every counter as CSV, from the saved result.
    let rep = stampede(&[
        "report",
        json.to_str().unwrap(),
        "--counters-csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("t_s,source,counter,value,per_s\n"));
    let last_ins = text
        .lines()
        .rfind(|l| l.contains(",\"server\",\"table.c.n_tup_ins\","))
        .expect("the table's inserts in the CSV");
    let value: f64 = last_ins.split(',').nth(3).unwrap().parse().unwrap();
    let last_sample = m["counters"].as_array().unwrap().last().unwrap();
    assert_eq!(
        Some(value),
        last_sample["values"]["table.c.n_tup_ins"].as_f64()
    );
    if let Some(dev) = device_of(&data_dir) {
        assert!(text.contains(&format!("\"host\",\"device.{dev}.writes_per_s\",")));
    }
    // A CSV the result cannot give is a usage error, and nothing is written.
    let steps = dir.path().join("steps.csv");
    let bad = stampede(&[
        "report",
        json.to_str().unwrap(),
        "--csv",
        dir.path().join("iv.csv").to_str().unwrap(),
        "--sweep-csv",
        steps.to_str().unwrap(),
    ]);
    assert_eq!(bad.code, 64, "{}", bad.stderr);
    assert!(bad.stderr.contains("--sweep-csv") && bad.stderr.contains("is not a sweep"));
    assert!(!steps.exists() && !dir.path().join("iv.csv").exists());
    // Without a CSV asked for, the page still goes to standard output; with one alone, not.
    let out = stampede(&["report", json.to_str().unwrap()]);
    assert!(
        out.stdout.starts_with("<!DOCTYPE html>"),
        "{}",
        &out.stdout[..40.min(out.stdout.len())]
    );
}

/// `stampede pgbench --check`: pgbench's standard output stays pgbench's (no stampede line in
/// it), and the verdicts are on standard error, after it; without `--check`, none.
#[test]
fn a_drop_in_check_prints_its_verdicts_on_stderr() {
    // Its own database (made with the server): the commit count is the database's, and this
    // binary's other tests run on `postgres` at the same time.
    let (host, port, _) = server();
    let dir = tempfile::tempdir().unwrap();
    let s = script(dir.path());
    let target = [
        "-h",
        host.as_str(),
        "-p",
        port.as_str(),
        "-U",
        "postgres",
        "dropin_check",
    ];
    let run = |check: bool| {
        let mut a = vec!["pgbench", "-n", "-f", s.as_str(), "-t", "20", "-c", "1"];
        if check {
            a.push("--check");
        }
        a.extend(target);
        stampede(&a)
    };
    let r = run(true);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("number of transactions actually processed: 20/20"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("stampede checks"), "{}", r.stdout);
    assert!(!r.stdout.contains("commit count"), "{}", r.stdout);
    let i = r
        .stderr
        .find("stampede checks:\n")
        .unwrap_or_else(|| panic!("{}", r.stderr));
    let verdict = r.stderr[i..]
        .lines()
        .find(|l| l.contains("commit count"))
        .unwrap();
    assert!(verdict.trim_start().starts_with("PASSED"), "{verdict}");
    let r = run(false);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("stampede checks"), "{}", r.stderr);
}
