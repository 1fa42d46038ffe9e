//! `stampede failover` against a pg_auto_failover formation (a monitor and two nodes, Debian's
//! `pg-auto-failover-cli` and `postgresql-15-auto-failover`), the fault being a planned
//! failover, `pg_autoctl perform failover`: what an operator's switchover costs in downtime,
//! measured by the probe. A test of its own binary: it needs packages the other fault runs do
//! not.

use std::process::Command;

use testkit::AutoFailover;

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

/// The planned failover starts at 3 s; `pg_autoctl perform failover` returns once the old
/// primary is back as a secondary (about 5 s here), and the probe needs time after that to
/// show every client writing on the new primary.
const RUN_S: f64 = 20.0;

#[test]
fn a_planned_pg_auto_failover_moves_every_client_and_loses_no_write() {
    let af = AutoFailover::start();
    let old_primary = af.primary_port();
    // What makes a lossless failover possible: the primary waits for the secondary at commit.
    let sync_names = Command::new(testkit::bindir().join("psql"))
        .args([
            "-X",
            "-A",
            "-t",
            "-h",
            "127.0.0.1",
            "-p",
            &old_primary.to_string(),
        ])
        .args([
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            "SHOW synchronous_standby_names",
        ])
        .output()
        .unwrap();
    let sync_names = String::from_utf8_lossy(&sync_names.stdout);
    assert!(sync_names.starts_with("ANY 1 ("), "{sync_names}");
    let (hosts, ports) = af.hosts_and_ports();
    let target = format!("host={hosts} port={ports} user=postgres dbname=postgres");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let fault = af.perform_failover_cmd();
    let out = Command::new(BIN)
        .args(["failover", &target, "-T", &RUN_S.to_string()])
        .args(["-c", "4", "-R", "100", "--no-observe", "--fault-at", "3"])
        .args(["--fault-cmd", &fault, "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let v: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&json)
            .unwrap_or_else(|e| panic!("the result is written ({e}): {stdout}{stderr}")),
    )
    .unwrap();
    let f = &v["failover"];
    eprintln!(
        "pg_auto_failover planned failover: write downtime {} s, read downtime {} s, \
         first write on the new primary at {} s, errors {}, exit status {:?}",
        f["write_downtime_s"],
        f["read_downtime_s"],
        f["first_write_new_primary"]["at_s"],
        f["errors"],
        out.status.code()
    );

    let check = |name: &str| {
        (v["checks"].as_array().unwrap().iter())
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {}", v["checks"]))
            .clone()
    };
    let fault_check = check("fault");
    assert_eq!(
        fault_check["status"], "passed",
        "pg_autoctl perform failover failed: {fault_check}\n{stderr}"
    );
    let at = f["fault_at_s"].as_f64().unwrap();
    assert!((3.0..=3.5).contains(&at), "the fault came at {at}");
    let down = f["write_downtime_s"].as_f64().unwrap();
    assert!(down > 0.0 && down < RUN_S, "write downtime {down}: {f}");

    // The failover is over when the monitor has the old primary back as a secondary; the
    // command waited for that, this makes sure before asking which node is primary.
    af.wait_settled();
    let new_primary = af.primary_port();
    assert_ne!(new_primary, old_primary, "{}", af.states());
    let new_primary = format!("127.0.0.1:{new_primary}");
    assert_eq!(
        f["clients_ended_on"],
        serde_json::json!([{ "host": new_primary, "clients": 4 }]),
        "{f}"
    );
    assert_eq!(f["first_write_new_primary"]["host"], new_primary.as_str());
    assert_eq!(f["audited_on"], new_primary.as_str(), "{f}");
    // pg_auto_failover makes the secondary synchronous (synchronous_standby_names
    // 'ANY 1 (...)', checked above, even with the formation's number_sync_standbys = 0: the
    // secondary is in the write quorum), and a planned failover drains the primary before
    // promoting: nothing acknowledged is lost, nothing is written twice.
    assert_eq!(f["lost_writes"], 0, "{f}");
    assert_eq!(f["duplicate_writes"], 0, "{f}");
    assert_eq!(check("audit")["status"], "passed", "{f}");
    assert!(
        f["writes"]["acknowledged"].as_u64().unwrap() > 100,
        "{}",
        f["writes"]
    );
    // The old primary's sessions end when it is demoted (a fast shutdown): those errors fail
    // the `errors during the fault run` check, exit status 2; nothing else failed.
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
}
