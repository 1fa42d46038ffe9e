//! Several hosts in one target through the binary: a primary and two streaming standbys
//! (testkit's `Cluster`). A select-only run over the three hosts puts a third of the clients on
//! each (`--spread round-robin`, the default); the JSON's `endpoints` says so, its transaction
//! counts add up, and each server's own commit counter moved by that host's transactions (plus
//! its clients' connection start-ups and setup); `--spread first` puts every client on the first
//! host, and the summary warns about it.

use std::process::Command;

use testkit::{block_on, scalar, Cluster};

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn commits(c: &Cluster) -> Vec<i64> {
    c.servers()
        .iter()
        .map(|p| {
            block_on(scalar(
                p.conn_config(),
                "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'",
            ))
            .parse()
            .unwrap()
        })
        .collect()
}

/// The counters once statistics have arrived (a session's reach them when it ends): read until
/// they move by no more than the reading session's own (its start-up and its query).
fn settled_commits(c: &Cluster) -> Vec<i64> {
    let mut last = commits(c);
    for _ in 0..30 {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let again = commits(c);
        if again.iter().zip(&last).all(|(a, b)| a - b <= 2) {
            return again;
        }
        last = again;
    }
    last
}

fn run(c: &Cluster, extra: &[&str]) -> (String, serde_json::Value) {
    let (hosts, ports) = c.hosts_and_ports();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = Command::new(BIN)
        .args(["run", "select-only", "-c", "6", "-j", "2", "-T", "2", "-n"])
        .args(["--no-observe", "--no-check"])
        .args(extra)
        .args(["--json", json.to_str().unwrap()])
        .args([
            "-h", &hosts, "-p", &ports, "-U", "postgres", "-d", "postgres",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (stdout, v)
}

#[test]
fn clients_spread_over_a_primary_and_two_standbys() {
    let c = Cluster::start(2, &[]);
    let (hosts, ports) = c.hosts_and_ports();
    let out = Command::new(BIN)
        .args(["init", "tpcb", "-s", "1", "-q"])
        .args(["-h", &hosts, "-p", &ports, "-U", "postgres"])
        .args(["-d", "dbname=postgres target_session_attrs=read-write"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.wait_replayed();

    let before = settled_commits(&c);
    let (stdout, v) = run(&c, &[]);
    let after = settled_commits(&c);
    let eps = v["endpoints"].as_array().expect("an endpoints array");
    assert_eq!(eps.len(), 3);
    let total: u64 = (stdout.lines())
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect(&stdout);
    let mut sum = 0;
    for (i, e) in eps.iter().enumerate() {
        assert_eq!(e["host"], c.hosts()[i].host.as_str());
        assert_eq!(e["clients"], 2, "{e}");
        let t = e["transactions"].as_u64().unwrap();
        assert!(t > 0, "{e}");
        sum += t;
        // Each server counted this host's transactions, plus a few commits per client
        // connection (start-up, prepare) and this test's own reads (two commits each); the first
        // host also serves the run's own queries (server version, scale) and may run
        // autovacuum, the standbys nothing else.
        let delta = (after[i] - before[i]) as u64;
        let slack = if i == 0 { 40 } else { 2 * 2 + 12 };
        assert!(
            delta >= t && delta <= t + slack,
            "host {i}: {t} transactions, the server counted {delta}"
        );
    }
    assert_eq!(sum, total, "the hosts' transactions add up to the run's");
    assert!(stdout.contains("endpoints:"), "{stdout}");
    assert!(v.get("endpoints_warning").is_none(), "{v}");

    let (stdout, v) = run(&c, &["--spread", "first"]);
    assert_eq!(v["endpoints"][0]["clients"], 6);
    assert!(
        stdout.contains("warning: all 6 clients are on one host of 3"),
        "{stdout}"
    );
}
