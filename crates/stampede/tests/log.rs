//! `-l` and its options: pgbench's per-transaction and aggregated log files, against a real
//! server. Timings are never asserted, only the files' shape and their consistency with the run.

mod common;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use common::{number_after, stampede_cmd, Run, Server};

fn run_in(dir: &Path, srv: Option<&Server>, args: &[&str]) -> Run {
    let mut c = stampede_cmd();
    c.current_dir(dir).arg("run").args(args);
    match srv {
        Some(s) => c.args(s.target("pgb")),
        // Nothing listens there: anything that tried to connect would fail with another error.
        None => c.args(["-h", "/nonexistent-socket-dir", "-p", "1", "-U", "postgres"]),
    };
    let out = c.output().expect("stampede runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The log files in `dir` as (name, lines), sorted by name (the first thread's file first).
fn logs(dir: &Path, prefix: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&format!("{prefix}.")))
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).unwrap();
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "{n}: incomplete line"
            );
            let lines = text
                .lines()
                .map(|l| l.split(' ').map(String::from).collect())
                .collect();
            (n, lines)
        })
        .collect();
    v.sort_by_key(|(n, _)| (n.len(), n.clone()));
    v
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn ok(r: &Run) {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

fn num(s: &str) -> u64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not a number"))
}

const FAST: [&str; 4] = ["-S", "-n", "--no-check", "--no-observe"];

fn server() -> Server {
    let srv = Server::start();
    srv.create_db("pgb");
    let init = srv.pgbench("pgb", &["-i", "-q"]);
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    srv
}

#[test]
fn per_transaction_logs_one_file_per_thread_and_one_line_per_transaction() {
    let srv = server();

    // -l -t: every transaction, pgbench's file names and fields.
    let dir = tempfile::tempdir().unwrap();
    let before = now_s();
    let mut args = vec!["-l", "-c", "4", "-j", "2", "-t", "25", "--random-seed", "3"];
    args.extend(FAST);
    let r = run_in(dir.path(), Some(&srv), &args);
    ok(&r);
    let after = now_s();
    let files = logs(dir.path(), "pgbench_log");
    assert_eq!(files.len(), 2, "{files:?}");
    let pid = files[0].0.strip_prefix("pgbench_log.").unwrap().to_string();
    num(&pid);
    assert_eq!(files[1].0, format!("pgbench_log.{pid}.1"));
    let mut total = 0;
    let mut last = [0u64; 4];
    for (t, (name, lines)) in files.iter().enumerate() {
        for f in lines {
            assert_eq!(f.len(), 6, "{name}: {f:?}");
            let client = num(&f[0]);
            assert!(client < 4, "{f:?}");
            assert_eq!(client as usize % 2, t, "client {client} is on thread {t}");
            let no = num(&f[1]);
            assert_eq!(no, last[client as usize] + 1, "{f:?}");
            last[client as usize] = no;
            assert!(num(&f[2]) > 0, "{f:?}");
            assert_eq!(f[3], "0");
            let epoch = num(&f[4]);
            assert!(
                before <= epoch && epoch <= after,
                "{f:?} not in [{before}, {after}]"
            );
            assert!(num(&f[5]) < 1_000_000);
            total += 1;
        }
    }
    assert_eq!(total, 100);
    assert_eq!(last, [25; 4]);

    // --log-prefix, --sampling-rate: a seeded fraction.
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec![
        "-l",
        "--log-prefix",
        "sampled",
        "--sampling-rate",
        "0.5",
        "-c",
        "2",
        "-j",
        "1",
        "-t",
        "100",
        "--random-seed",
        "42",
    ];
    args.extend(FAST);
    ok(&run_in(dir.path(), Some(&srv), &args));
    let files = logs(dir.path(), "sampled");
    assert_eq!(files.len(), 1, "{files:?}");
    let n = files[0].1.len();
    assert!(n > 0 && n < 200, "{n} lines of 200 sampled at 0.5");

    // -R adds the schedule lag; --max-tries other than 1 the retries.
    for (extra, fields) in [
        (vec!["-R", "500"], 7),
        (vec!["--max-tries", "3"], 7),
        (vec!["-R", "500", "--max-tries", "3"], 8),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["-l", "-c", "2", "-j", "1", "-t", "20"];
        args.extend(extra.iter().copied());
        args.extend(FAST);
        ok(&run_in(dir.path(), Some(&srv), &args));
        let files = logs(dir.path(), "pgbench_log");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].1.len(), 40, "{extra:?}");
        for f in &files[0].1 {
            assert_eq!(f.len(), fields, "{extra:?}: {f:?}");
            num(&f[6]);
            if fields == 8 {
                num(&f[7]);
            }
            if extra.contains(&"--max-tries") {
                assert_eq!(f[fields - 1], "0", "select-only never retries: {f:?}");
            }
        }
    }
}

/// In every I/O mode (one thread per client here, so threads mode writes the same two files).
#[test]
fn aggregated_logs_add_up_to_the_processed_count() {
    let srv = server();
    let mut modes = vec![("threads", "I/O: threads"), ("epoll", "I/O: epoll")];
    if sut::ring::unavailable().is_none() {
        modes.push(("uring", "I/O: io_uring"));
    }
    for (io, want) in modes {
        aggregated_logs_once(&srv, io, want);
    }
}

fn aggregated_logs_once(srv: &Server, io: &str, want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let before = now_s();
    let mut args = vec![
        "-l",
        "--aggregate-interval",
        "1",
        "-T",
        "3",
        "-c",
        "2",
        "-j",
        "2",
        "--io",
        io,
    ];
    args.extend(FAST);
    let r = run_in(dir.path(), Some(srv), &args);
    ok(&r);
    assert!(r.stdout.contains(want), "--io {io}: {}", r.stdout);
    let after = now_s();
    let processed = number_after(&r.stdout, "number of transactions actually processed: ");
    assert!(processed > 0);
    let files = logs(dir.path(), "pgbench_log");
    assert_eq!(files.len(), 2, "--io {io}: {files:?}");
    let mut sum = 0;
    for (name, lines) in &files {
        assert!(!lines.is_empty() && lines.len() <= 5, "{name}: {lines:?}");
        let mut prev = 0;
        for f in lines {
            // interval_start num sum sum2 min max, then lag (4), skipped, retried, retries and
            // the failures by kind (2): pgbench 15 writes them all, 0 when not meaningful.
            assert_eq!(f.len(), 15, "{name}: {f:?}");
            let start = num(&f[0]);
            assert!(before <= start && start <= after, "{f:?}");
            assert!(start > prev, "intervals in order: {lines:?}");
            prev = start;
            let n = num(&f[1]);
            let (s, min, max) = (num(&f[2]), num(&f[4]), num(&f[5]));
            if n > 0 {
                assert!(
                    min > 0 && min <= max && s >= n * min && s <= n * max,
                    "{f:?}"
                );
            }
            assert!(f[6..].iter().all(|v| v == "0"), "{f:?}");
            sum += n;
        }
    }
    assert_eq!(sum, processed, "--io {io}: {files:?}\n{}", r.stdout);
}

#[test]
fn log_options_are_validated_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["--aggregate-interval", "1", "-t", "1"], "--log"),
        (vec!["--sampling-rate", "0.5", "-t", "1"], "--log"),
        (
            vec!["-l", "--sampling-rate", "0", "-t", "1"],
            "--sampling-rate",
        ),
        (
            vec!["-l", "--sampling-rate", "1.5", "-t", "1"],
            "--sampling-rate",
        ),
        (
            vec![
                "-l",
                "--sampling-rate",
                "0.5",
                "--aggregate-interval",
                "1",
                "-t",
                "1",
            ],
            "--sampling-rate and --aggregate-interval",
        ),
        (
            vec!["-l", "--aggregate-interval", "0", "-t", "1"],
            "--aggregate-interval",
        ),
        (
            vec!["-l", "--aggregate-interval", "2", "-T", "3"],
            "--aggregate-interval",
        ),
        // Threads mode has a thread per client, and -l a file per -j thread.
        (
            vec!["-l", "--io", "threads", "-c", "2", "-j", "1", "-t", "1"],
            "--io threads with -l needs -j equal to -c",
        ),
    ] {
        let r = run_in(dir.path(), None, &args);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(
            !r.stderr.contains("nonexistent"),
            "{args:?} connected: {}",
            r.stderr
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
