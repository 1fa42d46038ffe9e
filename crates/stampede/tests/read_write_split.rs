//! `--read-from standby` through the binary, on a primary and two streaming standbys
//! (testkit's `Cluster`): each server's own commit counter (pg_stat_database.xact_commit) proves
//! where the transactions ran. A mix of select-only and tpcb-like sends every tpcb-like to the
//! primary (pgbench_history grows by exactly their count, none failed: a standby would have
//! refused the writes) and every select-only to the standbys; sysbench's oltp_read_only puts
//! nothing on the primary; TPC-C's Order-Status and Stock-Level run on the standbys and the rest
//! on the primary; the replication section has an entry per standby; and the refusals
//! (one host, no standby among the hosts) say what to do.

mod common;

use testkit::{block_on, scalar, Cluster};

/// pgbench's select-only mixed with tpcb-like, five to one, on six clients.
const MIXED: [&str; 6] = ["-b", "select-only@5", "-b", "tpcb-like@1", "-c", "6"];

fn stampede(args: &[&str]) -> (bool, String, String) {
    let (code, out, err) = common::stampede3(args);
    (code == 0, out, err)
}

/// `stampede run ARGS --read-from standby` over the cluster's three hosts: stdout and the
/// JSON, raw and as the result model.
fn run_split(c: &Cluster, args: &[&str]) -> (String, serde_json::Value, report::RunResult) {
    run_reading_from(c, "standby", args)
}

fn run_reading_from(
    c: &Cluster,
    read_from: &str,
    args: &[&str],
) -> (String, serde_json::Value, report::RunResult) {
    let (hosts, ports) = c.hosts_and_ports();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let mut all: Vec<&str> = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--read-from", read_from, "--no-observe"]);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    all.extend_from_slice(&["--html", html.to_str().unwrap()]);
    all.extend_from_slice(&[
        "-h", &hosts, "-p", &ports, "-U", "postgres", "-d", "postgres",
    ]);
    let (ok, stdout, stderr) = stampede(&all);
    assert!(ok, "{stdout}{stderr}");
    let text = std::fs::read_to_string(&json).unwrap();
    let html = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        html.contains("<section id=\"replication\">") && html.contains("standby1"),
        read_from != "primary",
        "the HTML report has the replication section when reads go to standbys"
    );
    let r = report::read_json(text.as_bytes()).unwrap();
    (stdout, serde_json::from_str(&text).unwrap(), r)
}

/// Replication entries: one per standby (testkit names them standby1, standby2), each sampled.
fn assert_replication(stdout: &str, v: &serde_json::Value) -> u64 {
    let rep = v["replication"].as_array().expect("a replication array");
    let names: Vec<&str> = rep.iter().map(|e| e["standby"].as_str().unwrap()).collect();
    assert_eq!(names, ["standby1", "standby2"], "{v}");
    for e in rep {
        // At least the first and the last sample (one a second between).
        assert!(e["samples"].as_u64().unwrap() >= 2, "{e}");
        assert!(e["max_lag_bytes"].as_u64().unwrap() >= e["p95_lag_bytes"].as_u64().unwrap());
    }
    assert!(
        stdout.contains("replication (lag behind the primary"),
        "{stdout}"
    );
    // The watch runs one query a sample on the primary: its cost there.
    rep.iter()
        .map(|e| e["samples"].as_u64().unwrap())
        .max()
        .unwrap()
}

fn history(c: &Cluster) -> i64 {
    block_on(scalar(
        c.primary.conn_config(),
        "SELECT count(*) FROM pgbench_history",
    ))
    .parse()
    .unwrap()
}

#[test]
fn reads_go_to_the_standbys_and_writes_to_the_primary() {
    let c = Cluster::start(2, &[]);
    let (hosts, ports) = c.hosts_and_ports();
    let rw = "dbname=postgres target_session_attrs=read-write";
    let (ok, out, err) = stampede(&[
        "init", "tpcb", "-s", "1", "-q", "-h", &hosts, "-p", &ports, "-U", "postgres", "-d", rw,
    ]);
    assert!(ok, "{out}{err}");
    c.wait_replayed();

    // ----- pgbench's select-only mixed with tpcb-like -----
    let hist_before = history(&c);
    let before = c.settled_xact_commits();
    let (stdout, v, r) = run_split(&c, &[&MIXED[..], &["-j", "2", "-t", "100", "-n"]].concat());
    let after = c.settled_xact_commits();
    let delta: Vec<u64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| (a - b) as u64)
        .collect();
    let selects = r.total.txns[0].latency.count();
    let tpcbs = r.total.txns[1].latency.count();
    assert_eq!(selects + tpcbs, 600, "every transaction committed");
    assert!(tpcbs > 0 && selects > 0);
    for t in &r.total.txns {
        assert_eq!(t.failures, [0, 0, 0], "no failures");
    }
    assert!(
        r.connections.aborted.is_empty(),
        "{:?}",
        r.connections.aborted
    );
    assert_eq!(
        history(&c) - hist_before,
        tpcbs as i64,
        "pgbench_history grew by exactly the tpcb-like count"
    );
    let watch = assert_replication(&stdout, &v);

    // Where the JSON says they ran: writers all on the primary, readers on the standbys.
    let eps = &r.endpoints;
    assert_eq!(eps.len(), 3);
    assert_eq!((eps[0].clients, eps[0].reader_clients), (6, 0), "{eps:?}");
    assert_eq!(eps[0].transactions, tpcbs, "{eps:?}");
    for e in &eps[1..] {
        assert_eq!((e.clients, e.reader_clients), (0, 3), "{eps:?}");
        assert_eq!(e.transactions, e.reader_transactions);
    }
    assert_eq!(eps[1].transactions + eps[2].transactions, selects);
    assert!(r.endpoints_warning.is_none(), "{:?}", r.endpoints_warning);

    // What each server counted. The primary: the tpcb-likes, plus per writer session its
    // start-up (and setup), the run's own queries (server version, scale, vacuum is off) and
    // the replication watch (a start-up and a query a sample); never the selects, which are
    // five times as many. Each standby: its selects plus its reader sessions' start-ups and
    // this test's reads (two commits each).
    eprintln!(
        "select-only {selects}, tpcb-like {tpcbs}; per host {:?}; xact_commit deltas {delta:?}; \
         watch samples {watch}",
        eps.iter().map(|e| e.transactions).collect::<Vec<_>>()
    );
    let primary_slack = 40 + watch + 2;
    assert!(
        delta[0] >= tpcbs && delta[0] <= tpcbs + primary_slack,
        "primary: {tpcbs} tpcb-like, the server counted {}",
        delta[0]
    );
    for i in 1..3 {
        let t = eps[i].transactions;
        assert!(
            delta[i] >= t && delta[i] <= t + 2 * 2 + 12,
            "standby {i}: {t} select-only, the server counted {}",
            delta[i]
        );
    }
    assert!(stdout.contains("0 writer + 3 reader sessions"), "{stdout}");
    let summary: Vec<&str> = (stdout.lines())
        .skip_while(|l| !l.starts_with("endpoints:"))
        .take(7)
        .collect();
    eprintln!("{}", summary.join("\n"));

    // ----- --read-from any: readers on every host; primary: no readers -----
    for (read_from, readers) in [("any", [2, 2, 2]), ("primary", [0, 0, 0])] {
        let hist_before = history(&c);
        let (_, _, r) =
            run_reading_from(&c, read_from, &[&MIXED[..], &["-t", "20", "-n"]].concat());
        let eps = &r.endpoints;
        let got: Vec<u32> = eps.iter().map(|e| e.reader_clients).collect();
        assert_eq!(got, readers, "{read_from}: {eps:?}");
        let tpcbs = r.total.txns[1].latency.count();
        assert_eq!(history(&c) - hist_before, tpcbs as i64, "{read_from}");
        // The writer ran the tpcb-likes (with `primary`, everything).
        let on_writer = if read_from == "primary" { 120 } else { tpcbs };
        assert_eq!(
            eps[0].transactions - eps[0].reader_transactions,
            on_writer,
            "{read_from}: {eps:?}"
        );
        assert!(r.total.txns.iter().all(|t| t.failures == [0, 0, 0]));
    }

    // ----- sysbench's oltp_read_only: nothing on the primary -----
    let sb = ["--tables", "1", "--table-size", "1000"];
    let mut init = vec!["init", "oltp"];
    init.extend_from_slice(&sb);
    init.extend_from_slice(&["-h", &hosts, "-p", &ports, "-U", "postgres", "-d", rw]);
    let (ok, out, err) = stampede(&init);
    assert!(ok, "{out}{err}");
    c.wait_replayed();
    let before = c.settled_xact_commits();
    let mut args = vec!["oltp_read_only", "-c", "4", "-t", "50"];
    args.extend_from_slice(&sb);
    let (stdout, v, r) = run_split(&c, &args);
    let after = c.settled_xact_commits();
    let total = r.total.txns[0].latency.count();
    assert_eq!(total, 200);
    let eps = &r.endpoints;
    assert_eq!(
        eps[0].transactions, 0,
        "nothing ran on the primary: {eps:?}"
    );
    assert_eq!(eps[1].transactions + eps[2].transactions, total);
    let watch = assert_replication(&stdout, &v);
    // The primary saw only the writer sessions' start-ups and setup, the run's own queries
    // and the watch: far fewer than the 200 transactions.
    let primary = (after[0] - before[0]) as u64;
    eprintln!("oltp_read_only: {total} transactions, the primary counted {primary}");
    assert!(primary <= 40 + watch + 2, "primary counted {primary}");

    // ----- TPC-C: Order-Status and Stock-Level on the standbys -----
    let (ok, out, err) = stampede(&[
        "init", "tpcc", "-w", "1", "-q", "-h", &hosts, "-p", &ports, "-U", "postgres", "-d", rw,
    ]);
    assert!(ok, "{out}{err}");
    c.wait_replayed();
    let (_, _, r) = run_split(&c, &["tpcc", "-c", "4", "-t", "25"]);
    let count = |i: usize| r.total.txns[i].latency.count();
    // txn_types: New-Order, Payment, Order-Status, Delivery, Stock-Level.
    assert_eq!(
        (0..5).map(count).sum::<u64>(),
        100,
        "every transaction completed"
    );
    assert!(count(2) + count(4) > 0, "the deck dealt some reads");
    for t in &r.total.txns {
        assert_eq!(t.failures, [0, 0, 0], "no failures");
    }
    let eps = &r.endpoints;
    eprintln!(
        "tpcc: by type {:?}, per host {:?}",
        (0..5).map(count).collect::<Vec<_>>(),
        eps.iter().map(|e| e.transactions).collect::<Vec<_>>()
    );
    assert_eq!(
        eps[0].transactions,
        count(0) + count(1) + count(3),
        "{eps:?}"
    );
    assert_eq!(
        eps[1].transactions + eps[2].transactions,
        count(2) + count(4)
    );

    let p = &c.primary;
    let (sock, port) = (p.socket_dir().display().to_string(), p.port().to_string());
    background_sessions_are_not_load(&sock, &port);

    // ----- refusals -----
    // A select-only run reading from a standby, on `hosts` and `ports`.
    let read_from_standby = |hosts: &str, ports: &str| {
        let run = [
            "run",
            "-b",
            "select-only",
            "-t",
            "1",
            "--read-from",
            "standby",
        ];
        let target = common::target_at(hosts, ports, "postgres");
        let target: Vec<&str> = target.iter().map(String::as_str).collect();
        stampede(&[&run[..], &["--no-observe"], &target].concat())
    };
    let (ok, _, err) = read_from_standby(&sock, &port);
    assert!(!ok);
    assert!(
        err.contains("--read-from standby needs several hosts"),
        "{err}"
    );
    // The primary listed twice: no standby anywhere; the message names the hosts tried.
    let (ok, _, err) = read_from_standby(&format!("{sock},{sock}"), &format!("{port},{port}"));
    assert!(!ok);
    assert!(
        err.contains("no host other than the writer's is a standby")
            && err.contains(&format!("{sock}:{port}")),
        "{err}"
    );
}

/// Issue 30: an observed select-only run of one client on the primary, whose two walsenders
/// stream to the standbys all along. They are background sessions, apart from the load: the
/// average active sessions stay within the one client (with them it was at least two), the
/// walsenders are in the background part, and no background wait is a load's wait event or the
/// report's top wait event.
fn background_sessions_are_not_load(sock: &str, port: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("o.json"), dir.path().join("o.html"));
    let mut args = vec!["run", "-b", "select-only", "-c", "1", "-T", "3", "-n"];
    args.extend([
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let target = common::target_at(sock, port, "postgres");
    args.extend(target.iter().map(String::as_str));
    let (ok, stdout, stderr) = stampede(&args);
    assert!(ok, "{stdout}{stderr}");
    let r = report::read_json(std::fs::read(&json).unwrap().as_slice()).unwrap();
    let m = r.server_metrics.expect("observed");
    let load = m.average_active();
    let walsender = (m.background.iter())
        .find(|b| b.kind == "walsender")
        .unwrap_or_else(|| panic!("no walsender among {:?}", m.background));
    eprintln!(
        "load {load:.2} AAS, waits {:?}; background {:?}",
        m.waits, m.background
    );
    assert!(load <= 1.0, "one client, {load} average active sessions");
    // Two standbys, a walsender each, active whenever sampled.
    assert!(walsender.aas > 1.5, "{walsender:?}");
    assert!(
        walsender
            .waits
            .iter()
            .any(|w| w.event == "Activity:WalSenderMain"),
        "{walsender:?}"
    );
    // A client's session never waits in a background process's main loop (`Activity`).
    assert!(
        m.waits.iter().all(|w| !w.event.starts_with("Activity:")),
        "{:?}",
        m.waits
    );
    for s in m.window_samples() {
        let walsenders = s.background.get("walsender").copied().unwrap_or(0);
        assert!(s.active <= 1 && walsenders <= 2, "{s:?}");
    }
    assert!(
        stdout
            .contains("background sessions, not in the load (average active sessions): walsender "),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let top = page
        .find("top wait event</div>")
        .map(|at| &page[page[..at].rfind("<div class=\"kpi\">").unwrap()..at]);
    if let Some(top) = top {
        assert!(!top.contains("Activity:"), "{top}");
    }
    assert!(page.contains("<table id=\"background\">"), "{page}");
}
