//! A 3-node MariaDB Galera cluster as one target (issue 15, item 6): clients spread over the
//! nodes, each node's commit count checked against the COMMITs its clients sent, and write
//! conflicts between nodes (certification failures, error 1213) retried and counted.

mod common;

use common::stampede3 as stampede;
use testkit::Galera;

/// `mysql://root@127.0.0.1:P0,127.0.0.1:P1,127.0.0.1:P2/db`: every node.
fn cluster_url(g: &Galera, db: &str) -> String {
    let hosts: Vec<String> = (0..g.nodes())
        .map(|i| format!("127.0.0.1:{}", g.port(i)))
        .collect();
    format!("mysql://root@{}/{db}", hosts.join(","))
}

/// `stampede run ARGS --json FILE`, which must exit 0: its result.
fn run(args: &[&str], file: &std::path::Path) -> serde_json::Value {
    let (code, out, err) =
        stampede(&[&["run"][..], args, &["--json", file.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{args:?}\n{out}\n{err}");
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn check<'a>(r: &'a serde_json::Value, name: &str) -> (&'a str, &'a str) {
    let c = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {}", r["checks"]));
    (
        c["status"].as_str().unwrap(),
        c["detail"].as_str().unwrap_or(""),
    )
}

#[test]
fn a_galera_cluster_is_one_target_with_exact_counts_per_node() {
    let g = Galera::shared();
    g.sql(0, "DROP DATABASE IF EXISTS sbgal; CREATE DATABASE sbgal");
    let url = cluster_url(g, "sbgal");
    let dir = tempfile::tempdir().unwrap();

    // Loaded through the cluster (the first node that answers), replicated to all.
    common::init_oltp(&url, &["--tables", "2", "--table-size", "2000"]);
    for i in 0..g.nodes() {
        let n = g.sql(
            i,
            "SET SESSION wsrep_sync_wait=15; SELECT COUNT(*) FROM sbgal.sbtest2",
        );
        assert_eq!(n.trim(), "2000", "node {i} has the rows");
    }

    // oltp_read_write over the three nodes, two clients each.
    let r = run(
        &[
            "oltp_read_write",
            "-d",
            &url,
            "--tables",
            "2",
            "--table-size",
            "2000",
            "-c",
            "6",
            "-t",
            "40",
        ],
        &dir.path().join("rw.json"),
    );
    let eps = r["endpoints"].as_array().expect("an endpoints array");
    assert_eq!(eps.len(), 3, "{eps:?}");
    let mut sum = 0;
    for (i, e) in eps.iter().enumerate() {
        assert_eq!(e["port"].as_u64(), Some(u64::from(g.port(i))), "{e}");
        assert_eq!(e["clients"].as_u64(), Some(2), "round robin: {e}");
        assert_eq!(e["transactions"].as_u64(), Some(80), "{e}");
        sum += e["transactions"].as_u64().unwrap();
    }
    assert_eq!(sum, 240);
    let (status, detail) = check(&r, "commit count");
    assert_eq!(status, "passed", "{detail}");
    assert!(detail.contains("per node:"), "{detail}");
    let (status, detail) = check(&r, "Galera conflicts");
    assert_ne!(status, "failed", "{detail}");
    let (status, detail) = check(&r, "row counts");
    assert_eq!(status, "passed", "{detail}");

    // A conflicting workload: every client writes the same 5 rows from all three nodes, in
    // transactions; certification failures fail COMMITs, which are retried until each client
    // has committed its 30. The counts still add up, node by node.
    let r = run(
        &[
            "oltp_write_only",
            "-d",
            &url,
            "--tables",
            "1",
            "--table-size",
            "5",
            "--delete-inserts",
            "0",
            "-c",
            "6",
            "-t",
            "30",
        ],
        &dir.path().join("conflict.json"),
    );
    let committed: u64 = r["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["transactions"].as_u64().unwrap())
        .sum();
    assert_eq!(committed, 180, "every client committed its transactions");
    let (status, detail) = check(&r, "Galera conflicts");
    assert_eq!(status, "passed", "{detail}");
    let certs: i64 = detail
        .split("; the nodes report ")
        .nth(1)
        .and_then(|p| p.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{detail}"));
    assert!(certs > 0, "the workload conflicts: {detail}");
    let (status, detail) = check(&r, "commit count");
    assert_eq!(status, "passed", "{detail}");
    assert!(detail.contains("failed"), "{detail}");
}
