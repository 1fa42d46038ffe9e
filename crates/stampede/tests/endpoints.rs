//! Several hosts in one target through the binary: a primary and two streaming standbys
//! (testkit's `Cluster`, one for the whole binary: the tests take turns, since each reads the
//! servers' commit counters). A select-only run over the three hosts puts a third of the
//! clients on each (`--spread round-robin`, the default); the JSON's `endpoints` says so, with
//! each host's latency percentiles, failures and reconnects; its transaction counts add up, each
//! server's own commit counter moved by that host's transactions (plus its clients' connection
//! start-ups and setup), and the binary's per-host commit check passes. `--spread first` puts
//! every client on the first host, and the summary warns about it. A host made slow on purpose
//! (a script that sleeps only on that server) serves fewer transactions per client: the
//! imbalance warning shows in the text summary, the JSON and the HTML report. Under `-C` every
//! transaction reconnects on its client's host, and the per-host check still adds up.

use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use testkit::Cluster;

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

static CLUSTER: OnceLock<Mutex<Option<Cluster>>> = OnceLock::new();

extern "C" fn stop_cluster() {
    if let Some(m) = CLUSTER.get() {
        if let Ok(mut g) = m.lock() {
            drop(g.take());
        }
    }
}

/// The binary's cluster, loaded with TPC-B at scale 1 and replayed on the standbys; the guard
/// keeps the other tests off it (a run of one would move the counters another test reads).
fn cluster() -> MutexGuard<'static, Option<Cluster>> {
    let m = CLUSTER.get_or_init(|| {
        let c = Cluster::start(2, &[]);
        let (hosts, ports) = c.hosts_and_ports();
        testkit::run(
            Command::new(BIN)
                .args(["init", "tpcb", "-s", "1", "-q"])
                .args(["-h", &hosts, "-p", &ports, "-U", "postgres"])
                .args(["-d", "dbname=postgres target_session_attrs=read-write"]),
        );
        c.wait_replayed();
        // SAFETY: registering a plain extern "C" fn.
        unsafe { libc::atexit(stop_cluster) };
        Mutex::new(Some(c))
    });
    // A test that failed while holding the guard poisons it; the cluster is still fine.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Ran {
    stdout: String,
    json: serde_json::Value,
    html: String,
}

/// `stampede run <args> -h <the three hosts>` with the commit check on, without the observer
/// (its sessions would be in the servers' counts the first test reads itself).
fn run(c: &Cluster, args: &[&str]) -> Ran {
    run_observed(c, args, false)
}

fn run_observed(c: &Cluster, args: &[&str], observe: bool) -> Ran {
    let (hosts, ports) = c.hosts_and_ports();
    run_on(&hosts, &ports, args, observe)
}

fn run_on(hosts: &str, ports: &str, args: &[&str], observe: bool) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    let out = Command::new(BIN)
        .arg("run")
        .args(args)
        .arg("-n")
        .args(if observe { None } else { Some("--no-observe") })
        .args(["--json", json.to_str().unwrap()])
        .args(["--html", html.to_str().unwrap()])
        .args(["-h", hosts, "-p", ports, "-U", "postgres", "-d", "postgres"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ran {
        stdout,
        json: serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap(),
        html: std::fs::read_to_string(&html).unwrap(),
    }
}

fn processed(stdout: &str) -> u64 {
    (stdout.lines())
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect(stdout)
}

/// The binary's commit count passed, with a line for every host.
fn assert_commit_check_passed_per_host(c: &Cluster, v: &serde_json::Value) {
    let check = (v["checks"].as_array().unwrap().iter())
        .find(|ch| ch["name"] == "commit count")
        .expect("a commit count check");
    assert_eq!(check["status"], "passed", "{check}");
    let detail = check["detail"].as_str().unwrap();
    for h in c.hosts() {
        assert!(
            detail.contains(&format!("{}:{}: server committed", h.host, h.port)),
            "{detail}"
        );
    }
}

/// Each host's new fields are sane: latency percentiles ordered (none for a host that committed
/// nothing), no failures, no reconnects without `-C`.
fn assert_endpoint_fields_sane(e: &serde_json::Value, reconnects: u64) {
    let t = e["transactions"].as_u64().unwrap();
    if t == 0 {
        assert!(e.get("latency_ms").is_none(), "{e}");
    } else {
        let l = &e["latency_ms"];
        let get = |k: &str| l[k].as_f64().unwrap_or_else(|| panic!("{k} in {e}"));
        let (p50, p95, p99, max) = (get("p50"), get("p95"), get("p99"), get("max"));
        assert!(0.0 < p50 && p50 <= p95 && p95 <= p99 && p99 <= max, "{e}");
        assert!(get("mean") > 0.0 && get("mean") <= max, "{e}");
    }
    for kind in ["serialization", "deadlock", "other"] {
        assert_eq!(e["failures"][kind], 0, "{e}");
    }
    assert_eq!(e["reconnects"], reconnects, "{e}");
}

#[test]
fn clients_spread_over_a_primary_and_two_standbys() {
    let guard = cluster();
    let c = guard.as_ref().unwrap();

    let before = c.settled_xact_commits();
    let r = run(c, &["select-only", "-c", "6", "-j", "2", "-T", "2"]);
    let after = c.settled_xact_commits();
    let eps = r.json["endpoints"].as_array().expect("an endpoints array");
    assert_eq!(eps.len(), 3);
    let total = processed(&r.stdout);
    let mut sum = 0;
    for (i, e) in eps.iter().enumerate() {
        assert_eq!(e["host"], c.hosts()[i].host.as_str());
        assert_eq!(e["clients"], 2, "{e}");
        let t = e["transactions"].as_u64().unwrap();
        assert!(t > 0, "{e}");
        assert_endpoint_fields_sane(e, 0);
        sum += t;
        // Each server counted this host's transactions, plus a few commits per client
        // connection (start-up, prepare), the commit check's two (its session's and its
        // calibration probe's start-ups) and this test's own reads (two commits each); the
        // first host also serves the run's own queries (server version, scale) and may run
        // autovacuum, the standbys nothing else.
        let delta = (after[i] - before[i]) as u64;
        let slack = if i == 0 { 40 } else { 2 * 2 + 12 + 2 };
        assert!(
            delta >= t && delta <= t + slack,
            "host {i}: {t} transactions, the server counted {delta}"
        );
    }
    assert_eq!(sum, total, "the hosts' transactions add up to the run's");
    assert!(r.stdout.contains("endpoints:"), "{}", r.stdout);
    // The clients are spread; how many transactions each host serves is the machine's
    // scheduling (three servers and the client on two cores: a host's share was seen 26% off
    // its clients' share), so an "uneven hosts" warning may come, never "all on one host".
    if let Some(w) = r.json.get("endpoints_warning") {
        assert!(w.as_str().unwrap().starts_with("uneven hosts: "), "{w}");
    }
    assert_commit_check_passed_per_host(c, &r.json);
    // Every host's line in the summary carries its latency.
    let lines: Vec<&str> = (r.stdout.lines())
        .skip_while(|l| *l != "endpoints:")
        .skip(1)
        .take(3)
        .collect();
    for (l, h) in lines.iter().zip(c.hosts()) {
        assert!(
            l.contains(&format!("{}:{}  2 clients", h.host, h.port)),
            "{l}"
        );
        assert!(l.contains(", latency ms mean "), "{l}");
        assert!(l.ends_with(", 0 failures, 0 reconnects"), "{l}");
    }

    // All on the first host: the standbys committed nothing of the run's, and the per-host
    // check says so exactly.
    let r = run(
        c,
        &[
            "select-only",
            "-c",
            "6",
            "-j",
            "2",
            "-T",
            "1",
            "--spread",
            "first",
        ],
    );
    assert_eq!(r.json["endpoints"][0]["clients"], 6);
    assert_eq!(r.json["endpoints"][1]["transactions"], 0);
    assert_endpoint_fields_sane(&r.json["endpoints"][1], 0);
    assert!(
        r.stdout
            .contains("warning: all 6 clients are on one host of 3"),
        "{}",
        r.stdout
    );
    assert_commit_check_passed_per_host(c, &r.json);
}

#[test]
fn a_slow_host_shows_the_imbalance_warning_in_text_json_and_html() {
    let guard = cluster();
    let c = guard.as_ref().unwrap();
    let slow = &c.hosts()[2];
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("slow.sql");
    // Every transaction sleeps 10 ms on the last standby only (the servers share a port
    // number, each on a socket directory of its own): its clients (a third) serve far fewer
    // than a third of the transactions in a closed loop.
    std::fs::write(
        &script,
        format!(
            "SELECT pg_sleep(0.01) \
             WHERE current_setting('unix_socket_directories') = '{}';\n",
            slow.host
        ),
    )
    .unwrap();
    let r = run(
        c,
        &[
            "-f",
            script.to_str().unwrap(),
            "-c",
            "6",
            "-j",
            "2",
            "-T",
            "2",
        ],
    );
    let eps = r.json["endpoints"].as_array().unwrap();
    for e in eps {
        assert_eq!(e["clients"], 2, "{e}");
        assert_endpoint_fields_sane(e, 0);
    }
    // pg_sleep's 10 ms is a floor of every transaction there, not a timing to hope for.
    assert!(
        eps[2]["latency_ms"]["p50"].as_f64().unwrap() >= 10.0,
        "{}",
        eps[2]
    );
    let words = format!("{}:{} has 33% of the clients but ", slow.host, slow.port);
    let warning =
        (r.json["endpoints_warning"].as_str()).unwrap_or_else(|| panic!("a warning: {}", r.stdout));
    assert!(warning.starts_with("uneven hosts: "), "{warning}");
    assert!(warning.contains(&words), "{warning}");
    assert!(
        r.stdout.contains(&format!("  warning: {warning}")),
        "{}",
        r.stdout
    );
    assert!(r.html.contains("<section id=\"endpoints\">"));
    assert!(r.html.contains(&words), "the HTML report shows the warning");
    assert!(r.html.contains("<th>p99 ms</th>"));
    assert_commit_check_passed_per_host(c, &r.json);
}

#[test]
fn reconnecting_per_transaction_counts_reconnects_per_host() {
    let guard = cluster();
    let c = guard.as_ref().unwrap();
    let r = run(c, &["select-only", "-c", "3", "-j", "1", "-t", "5", "-C"]);
    for e in r.json["endpoints"].as_array().unwrap() {
        // One client per host, five transactions, a session each.
        assert_eq!(e["clients"], 1, "{e}");
        assert_eq!(e["transactions"], 5, "{e}");
        assert_endpoint_fields_sane(e, 5);
    }
    assert_commit_check_passed_per_host(c, &r.json);
}

#[test]
fn the_observer_watches_every_host_and_the_check_counts_its_sessions_per_host() {
    let guard = cluster();
    let c = guard.as_ref().unwrap();
    let r = run_observed(c, &["select-only", "-c", "3", "-j", "1", "-T", "1"], true);
    let m = &r.json["server_metrics"];
    let hosts = m["endpoints"].as_array().expect("one observation per host");
    let names: Vec<String> = (c.hosts().iter())
        .map(|h| format!("{}:{}", h.host, h.port))
        .collect();
    let seen: Vec<&str> = hosts
        .iter()
        .map(|h| h["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(seen, names);
    // The summed cost is every host's observer; each opened its own session.
    let per_host: u64 = (hosts.iter())
        .map(|h| h["cost"]["connections"].as_u64().unwrap())
        .sum();
    assert_eq!(m["cost"]["connections"].as_u64(), Some(per_host));
    assert!(hosts.iter().all(|h| h["cost"]["connections"] == 1), "{m}");
    assert!(
        r.stdout
            .contains("  per host (3 hosts, each observed on its own session"),
        "{}",
        r.stdout
    );
    for n in &names {
        assert!(r.stdout.contains(&format!("    {n}: ")), "{}", r.stdout);
    }
    assert!(r.html.contains("<section id=\"server-hosts\">"));
    // Each observer's start-up commit is put on its own host: the check stays exact.
    assert_commit_check_passed_per_host(c, &r.json);
}

#[test]
fn a_host_that_is_down_leaves_the_check_to_the_others() {
    let guard = cluster();
    let c = guard.as_ref().unwrap();
    let (hosts, ports) = c.hosts_and_ports();
    // A socket directory no server listens in: the client placed there fails over to the
    // next host, as libpq's host list does.
    let down = tempfile::tempdir().unwrap();
    let down = down.path().to_str().unwrap();
    let r = run_on(
        &format!("{hosts},{down}"),
        &format!("{ports},5432"),
        &["select-only", "-c", "4", "-j", "1", "-t", "20"],
        false,
    );
    let eps = r.json["endpoints"].as_array().unwrap();
    assert_eq!(eps.len(), 4);
    assert_eq!(eps[3]["clients"], 0, "{}", eps[3]);
    assert_eq!(eps[0]["clients"], 2, "{}", eps[0]);
    let check = (r.json["checks"].as_array().unwrap().iter())
        .find(|ch| ch["name"] == "commit count")
        .unwrap();
    assert_eq!(check["status"], "passed", "{check}");
    assert!(
        (check["detail"].as_str().unwrap())
            .contains(&format!("{down}:5432: not reachable for the check")),
        "{check}"
    );
}
