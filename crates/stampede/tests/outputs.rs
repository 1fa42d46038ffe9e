//! What a run saves when saving fails, where a password with reserved characters goes, and a
//! silent host in a host list, against one private PostgreSQL shared by this binary's tests.

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
        Mutex::new(Some(Server::start()))
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
    let target = common::target_at(&host, &port, "postgres");
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
        |spelled: &str| format!("postgresql://pwuser:{spelled}@/postgres?host={host}&port={port}");
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
