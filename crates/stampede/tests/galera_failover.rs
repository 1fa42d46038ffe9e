//! `stampede failover` on a 3-node MariaDB Galera cluster (the MySQL protocol's probe table):
//! clients spread over the nodes, one node killed (-9) while they write. The killed node's
//! clients reconnect to the others and everyone ends on a surviving node; Galera's commits are
//! certified on every node before they are acknowledged, so the audit (on the first surviving
//! node) finds no acknowledged write lost.

use std::process::Command;

use testkit::Galera;

#[test]
fn a_killed_galera_node_loses_no_acknowledged_write() {
    let g = Galera::start(3);
    g.sql(0, "CREATE DATABASE probe");
    let hosts: Vec<String> = (0..3).map(|i| format!("127.0.0.1:{}", g.port(i))).collect();
    let url = format!("mysql://root@{}/probe", hosts.join(","));
    let pid = g.pid(0).expect("node 0 runs");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let kill = format!("kill -KILL -{pid}");
    let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args([
            "failover", &url, "-T", "14", "-c", "6", "-j", "2", "-R", "100",
        ])
        .args(["--no-observe", "--fault-at", "3", "--fault-cmd", &kill])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    g.kill_node(0); // reaps it
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap_or_else(|_| panic!("{text}"))).unwrap();
    let f = &v["failover"];
    eprintln!(
        "galera node kill: write downtime {} s, read downtime {} s, detect {} s, lost {}, in \
         doubt {}, hosts {}",
        f["write_downtime_s"],
        f["read_downtime_s"],
        f["detect_s"],
        f["lost_writes"],
        f["in_doubt_writes"],
        f["hosts"]
    );
    assert_eq!(f["audited_on"], hosts[1].as_str(), "{text}");
    assert_eq!(f["lost_writes"], 0, "{f}");
    assert_eq!(f["duplicate_writes"], 0, "{f}");
    assert_eq!(f["unexpected_writes"], 0, "{f}");
    assert!(f["writes"]["acknowledged"].as_u64().unwrap() > 100, "{f}");
    let ended: u64 = (f["clients_ended_on"].as_array().unwrap().iter())
        .inspect(|h| assert_ne!(h["host"], hosts[0].as_str(), "{f}"))
        .map(|h| h["clients"].as_u64().unwrap())
        .sum();
    assert_eq!(ended, 6, "every client ended on a surviving node: {f}");
    let fault = (v["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == "fault")
        .unwrap();
    assert_eq!(fault["status"], "passed", "{fault}");
    // The killed node's clients saw their connections end, and reconnected.
    assert!(f["reconnects"]["succeeded"].as_u64().unwrap() >= 2, "{f}");
    assert!(!f["errors"].as_array().unwrap().is_empty(), "{f}");
}
