//! Fault runs through the binary (`--fault-at`, `--fault-cmd`), on servers the tests start.
//!
//! - A primary and a streaming standby: while tpcb-like runs over both hosts with
//!   `target_session_attrs=read-write`, the fault command promotes the standby and shuts the
//!   primary down. The result's fault time is the injection's, the write downtime is positive and
//!   no longer than what an independent probe (a loop of its own, connecting and inserting every
//!   20 ms) saw plus its resolution, and every client ends on the new primary.
//! - One server whose client sessions are terminated by the fault command: every error is
//!   classified ("terminated by administrator"), the clients reconnect and go on, the result is
//!   written, and the exit status says the run had failures.
//! - One server made read-only for 2 s by the fault command: the probe's writes fail with their
//!   own kind while its reads go on; the write downtime is an independent writer's, the read
//!   downtime none, and every acknowledged write is a row of the probe's table.
//! - A primary killed (-9) and its standby promoted under the probe: each host's transactions
//!   are the ones its sessions served, and no advice to spread the clients is given.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::stampede3 as stampede;
use testkit::{block_on, Cluster, Pg};

/// The connection a conninfo string names (no environment variable read).
fn config(conninfo: String) -> sut::ConnConfig {
    let flags = sut::ConnFlags {
        dbname: Some(conninfo),
        ..Default::default()
    };
    sut::ConnConfig::resolve(&flags, &|_| None).unwrap()
}

/// An independent writer: every 20 ms, a fresh session (read-write over both hosts) inserts a
/// row; the instants of its successes, from `origin`.
fn independent_probe(conn: String, stop: Arc<AtomicBool>, origin: Instant) -> Vec<f64> {
    let cfg = config(conn);
    let mut ok = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let done = block_on(async {
            let mut s = sut::Session::connect(&cfg).await.ok()?;
            s.simple_query("INSERT INTO probe_loop VALUES (1)")
                .await
                .ok()?;
            s.close().await;
            Some(())
        });
        if done.is_some() {
            ok.push(origin.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    ok
}

/// `pg_ctl promote -w` of `standby`, as the server's account (pg_ctl refuses root), as a shell
/// command for --fault-cmd. The old primary's fast shutdown is SIGINT, what `pg_ctl stop -m
/// fast` sends.
fn promote(standby: &Pg) -> String {
    let as_server = match testkit::run_as() {
        Some((uid, gid)) => format!("setpriv --reuid={uid} --regid={gid} --clear-groups "),
        None => String::new(),
    };
    format!(
        "{as_server}{} promote -w -D {}",
        standby.bin("pg_ctl").display(),
        standby.data_dir().display()
    )
}

/// An independent writer on one session of its own: an insert every 5 ms; the instants of its
/// successes. Its session stays open through a read-only spell (the inserts fail with 25006
/// and the session is still usable), as a pooled application connection would.
fn inserting_session(conn: String, stop: Arc<AtomicBool>) -> Vec<f64> {
    let cfg = config(conn);
    let origin = Instant::now();
    block_on(async {
        let mut s = sut::Session::connect(&cfg).await.unwrap();
        let mut ok = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match s.simple_query("INSERT INTO probe_loop VALUES (1)").await {
                Ok(_) => ok.push(origin.elapsed().as_secs_f64()),
                Err(e) => assert!(e.to_string().contains("read-only"), "{e}"),
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        s.close().await;
        ok
    })
}

fn longest_gap(t: &[f64]) -> f64 {
    t.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
}

/// `stampede failover TARGET` for `secs` s, 4 clients on 2 threads at `rate` transactions a
/// second, the fault command `fault` at `fault_at` s, then `extra` flags: the exit status,
/// stdout, stderr and the JSON result (which must be written, whatever the status).
fn failover(
    target: &str,
    (secs, rate): (&str, &str),
    (fault_at, fault): (&str, &str),
    extra: &[&str],
) -> (i32, String, String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args = vec![
        "failover",
        target,
        "-T",
        secs,
        "-c",
        "4",
        "-j",
        "2",
        "-R",
        rate,
        "--no-observe",
        "--fault-at",
        fault_at,
        "--fault-cmd",
        fault,
    ];
    args.extend(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    let (code, stdout, stderr) = stampede(&args);
    let v = serde_json::from_slice(
        &std::fs::read(&json).unwrap_or_else(|e| panic!("no result ({e}): {stdout}{stderr}")),
    )
    .unwrap();
    (code, stdout, stderr, v)
}

/// The result's check named `name`.
fn check<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    (v["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check: {}", v["checks"]))
}

#[test]
fn a_promotion_reads_as_one_outage_and_every_client_moves() {
    let c = Cluster::start(1, &[]);
    let (hosts, ports) = c.hosts_and_ports();
    let rw = format!(
        "host={hosts} port={ports} user=postgres dbname=postgres target_session_attrs=read-write"
    );
    let (code, _, err) = stampede(&["init", "tpcb", "-s", "1", "-q", "-d", &rw]);
    assert_eq!(code, 0, "{err}");
    c.primary.psql("CREATE TABLE probe_loop (v int)");
    c.wait_replayed();

    let standby = &c.standbys[0];
    let promote_and_stop = format!(
        "{} && kill -INT {}",
        promote(standby),
        c.primary.pid().unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let stop = Arc::new(AtomicBool::new(false));
    let origin = Instant::now();
    let probe = std::thread::spawn({
        let (rw, stop) = (rw.clone(), stop.clone());
        move || independent_probe(rw, stop, origin)
    });
    let (code, stdout, stderr) = stampede(&[
        "run",
        "tpcb-like",
        "-c",
        "4",
        "-j",
        "2",
        "-T",
        "6",
        "-R",
        "200",
        "-n",
        "--no-observe",
        "--fault-at",
        "2",
        "--fault-cmd",
        &promote_and_stop,
        "-d",
        &rw,
        "--json",
        json.to_str().unwrap(),
    ]);
    stop.store(true, Ordering::Relaxed);
    let seen = probe.join().unwrap();
    // Clients saw errors: the run says so in its exit status, and writes its result anyway.
    assert_eq!(code, 2, "{stdout}{stderr}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the result is written")).unwrap();
    let f = &v["failover"];
    let at = f["fault_at_s"].as_f64().unwrap();
    assert!((2.0..2.5).contains(&at), "the fault came at {at}");
    assert!(stderr.contains("fault at 2."), "{stderr}");
    let down = f["write_downtime_s"].as_f64().unwrap();
    let independent = longest_gap(&seen);
    assert!(down > 0.0, "{f}");
    // Both saw the same outage; the independent loop's resolution is its 20 ms pause plus a
    // connection.
    assert!(
        down <= independent + 0.25,
        "stampede saw {down} s without a write, the independent probe {independent} s"
    );
    let new_primary = format!("{}:{}", c.hosts()[1].host, c.hosts()[1].port);
    assert_eq!(
        f["clients_ended_on"],
        serde_json::json!([{ "host": new_primary, "clients": 4 }]),
        "{f}"
    );
    assert_eq!(f["first_write_new_primary"]["host"], new_primary.as_str());
    let old_primary = format!("{}:{}", c.hosts()[0].host, c.hosts()[0].port);
    assert_eq!(f["last_write_old_primary"]["host"], old_primary.as_str());
    assert!(f["reconnects"]["succeeded"].as_u64().unwrap() >= 4, "{f}");
    assert!(stdout.contains("write downtime: "), "{stdout}");
    let fault = check(&v, "fault");
    assert_eq!(fault["status"], "passed", "{fault}");
}

#[test]
fn errors_of_a_fault_without_failover_are_classified_and_the_run_goes_on() {
    let pg = Pg::start(&[]);
    let host = pg.socket_dir().display().to_string();
    let port = pg.port().to_string();
    let target = [
        "-h",
        host.as_str(),
        "-p",
        port.as_str(),
        "-U",
        "postgres",
        "-d",
        "postgres",
    ];
    let mut init = vec!["init", "tpcb", "-s", "1", "-q"];
    init.extend(target);
    let (code, _, err) = stampede(&init);
    assert_eq!(code, 0, "{err}");
    let psql = pg.bin("psql").display().to_string();
    let terminate = format!(
        "{psql} -X -q -h {host} -p {port} -U postgres -d postgres -c \
         \"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
           WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() \
           AND query NOT LIKE '%pg_stat_activity%'\""
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut run = vec![
        "run",
        "select-only",
        "-c",
        "3",
        "-j",
        "1",
        "-T",
        "4",
        "-n",
        "--no-observe",
        "--fault-at",
        "1.5",
        "--fault-cmd",
        &terminate,
        "--json",
        json.to_str().unwrap(),
    ];
    run.extend(target);
    let (code, stdout, stderr) = stampede(&run);
    assert_eq!(
        code, 2,
        "failures make the exit status 2:\n{stdout}{stderr}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let f = &v["failover"];
    let kinds: Vec<&str> = (f["errors"].as_array().unwrap().iter())
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.is_empty(), "{f}");
    // Each error has its kind: the server's "terminated by administrator" (57P01), or the
    // connection found closed when the FATAL message was not read first; never "other".
    assert!(kinds.contains(&"terminated by administrator"), "{kinds:?}");
    assert!(
        (kinds.iter()).all(|k| ["terminated by administrator", "connection lost"].contains(k)),
        "{kinds:?}"
    );
    // Every client reconnected and went on: no client aborted, transactions after the fault.
    assert_eq!(v["connections"]["aborted"], serde_json::json!([]), "{v}");
    assert!(f["latency"]["after"]["count"].as_u64().unwrap() > 0, "{f}");
    assert_eq!(f["reconnects"]["succeeded"], 3, "{f}");
    let errs = check(&v, "errors during the fault run");
    assert_eq!(errs["status"], "failed");
    assert!(
        errs["detail"]
            .as_str()
            .unwrap()
            .contains("terminated by administrator"),
        "{errs}"
    );
}

/// `stampede failover` over a primary and a synchronous standby: the standby is promoted and the
/// old primary shut down while the probe writes. Every acknowledged write is on the new
/// primary (the audit finds none lost), every client ends there, and the probe's table is gone
/// afterwards.
#[test]
fn failover_with_synchronous_replication_loses_no_acknowledged_write() {
    let c = Cluster::start(1, &[]);
    c.make_synchronous(0);
    let (hosts, ports) = c.hosts_and_ports();
    let standby = &c.standbys[0];
    let promote_and_stop = format!(
        "{} && kill -INT {}",
        promote(standby),
        c.primary.pid().unwrap()
    );
    // Several hosts, no target_session_attrs: `stampede failover` reconnects to the writer.
    let target = format!("host={hosts} port={ports} user=postgres dbname=postgres");
    let (code, stdout, stderr, v) = failover(&target, ("6", "200"), ("2", &promote_and_stop), &[]);
    let f = &v["failover"];
    let new_primary = format!("{}:{}", c.hosts()[1].host, c.hosts()[1].port);
    assert_eq!(f["audited_on"], new_primary.as_str(), "{stdout}{stderr}");
    assert_eq!(f["lost_writes"], 0, "{f}");
    assert_eq!(f["duplicate_writes"], 0, "{f}");
    assert_eq!(f["unexpected_writes"], 0, "{f}");
    let w = &f["writes"];
    let acked = w["acknowledged"].as_u64().unwrap();
    assert!(acked > 100, "{w}");
    assert_eq!(
        w["attempted"].as_u64().unwrap(),
        acked + w["failed"].as_u64().unwrap() + w["unknown"].as_u64().unwrap()
    );
    assert_eq!(
        f["clients_ended_on"],
        serde_json::json!([{ "host": new_primary, "clients": 4 }])
    );
    assert!(f["write_downtime_s"].as_f64().unwrap() > 0.0);
    let audit = check(&v, "audit");
    assert_eq!(audit["status"], "passed", "{audit}");
    assert!(stdout.contains("audit on "), "{stdout}");
    // Errors during the failover make the exit status 2; nothing else failed.
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(
        standby
            .psql("SELECT to_regclass('stampede_probe') IS NULL")
            .trim(),
        "t",
        "the probe's table is dropped"
    );
}

/// A table named stampede_probe that stampede did not create is never touched.
#[test]
fn a_foreign_probe_table_is_refused_and_kept() {
    let pg = Pg::start(&[]);
    pg.psql("CREATE TABLE stampede_probe (x int); INSERT INTO stampede_probe VALUES (42)");
    let host = pg.socket_dir().display().to_string();
    let port = pg.port().to_string();
    let (code, _, stderr) = stampede(&[
        "failover", "-h", &host, "-p", &port, "-U", "postgres", "-d", "postgres", "-T", "2",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("stampede did not create it"), "{stderr}");
    assert_eq!(pg.psql("SELECT x FROM stampede_probe").trim(), "42");
}

/// Asynchronous replication, the standby held back while writes flow, the primary killed (-9)
/// and the standby promoted: the audit reports as lost exactly the acknowledged writes the new
/// primary lacks, checked against the old primary's own data (started again afterwards).
#[test]
fn a_crash_with_a_lagging_standby_reports_exactly_the_lost_writes() {
    let c = Cluster::start(1, &[]);
    let (hosts, ports) = c.hosts_and_ports();
    let standby = &c.standbys[0];
    let psql = standby.bin("psql").display().to_string();
    let on_standby = format!(
        "{psql} -X -q -h {} -p {} -U postgres -d postgres -c",
        standby.socket_dir().display(),
        standby.port()
    );
    let ppid = c.primary.pid().unwrap();
    // Hold the standby back (its WAL receiver stopped), let writes flow for half a second,
    // crash the primary (every process at once), promote the standby.
    let fault = format!(
        "{on_standby} \"ALTER SYSTEM SET primary_conninfo = ''\" && \
         {on_standby} 'SELECT pg_reload_conf()' && sleep 0.5 && \
         pkill -KILL -P {ppid}; kill -KILL {ppid}; {}",
        promote(standby)
    );
    let target = format!("host={hosts} port={ports} user=postgres dbname=postgres");
    let (_, stdout, stderr, v) =
        failover(&target, ("5", "100"), ("1.5", &fault), &["--keep-probe"]);
    let f = &v["failover"];
    let lost = f["lost_writes"]
        .as_u64()
        .unwrap_or_else(|| panic!("{stdout}{stderr}"));
    let lost_seqs: Vec<u64> = (f["lost_seqs"].as_array().unwrap().iter())
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert!(
        lost > 0,
        "half a second of writes never reached the standby: {f}"
    );
    assert!(lost <= 100, "the sample lists them all: {lost}");
    assert_eq!(lost_seqs.len() as u64, lost);

    let seqs = |pg: &Pg| -> std::collections::BTreeSet<u64> {
        (pg.psql("SELECT seq FROM stampede_probe").lines())
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    let new = seqs(standby);
    let _old_primary = c.primary.start_again();
    let old = seqs(&c.primary);
    // Every write reported lost committed on the old primary and is absent from the new one.
    for s in &lost_seqs {
        assert!(old.contains(s), "seq {s} reported lost was never committed");
        assert!(
            !new.contains(s),
            "seq {s} reported lost is on the new primary"
        );
    }
    // And nothing else the old primary committed is missing, beyond the writes in flight when
    // it crashed (their acknowledgements never came: at most one per client).
    let missing: Vec<&u64> = old.difference(&new).collect();
    let unreported = missing.iter().filter(|s| !lost_seqs.contains(s)).count();
    assert!(
        unreported <= 4,
        "{unreported} committed writes missing and not reported"
    );
    assert_eq!(
        f["audited_on"],
        format!("{}:{}", c.hosts()[1].host, c.hosts()[1].port)
    );
}

/// `default_transaction_read_only = on` for 2 s on the one server, reloaded (every session,
/// stampede's and the independent writer's, takes it at its next statement), then reset: the
/// probe's writes fail with "read-only transaction" and its reads go on. The write downtime is
/// measured from writes alone, so it is the independent writer's (within 0.5 s); the reads saw
/// no outage; and the acknowledged writes are exactly the probe table's rows (the audit passes).
#[test]
fn a_read_only_primary_is_write_downtime_of_its_own_kind_while_reads_go_on() {
    let pg = Pg::start(&[]);
    pg.psql("CREATE TABLE probe_loop (v int)");
    let host = pg.socket_dir().display().to_string();
    let port = pg.port().to_string();
    let target = format!("host={host} port={port} user=postgres dbname=postgres");
    // The fault's own sessions are not read-only (PGOPTIONS), or the reset could not run.
    let psql = format!(
        "PGOPTIONS='-c default_transaction_read_only=off' {} -X -q -h {host} -p {port} -U postgres \
         -d postgres",
        pg.bin("psql").display()
    );
    let fault = format!(
        "{psql} -c 'ALTER SYSTEM SET default_transaction_read_only = on' \
         -c 'SELECT pg_reload_conf()' && sleep 2 && \
         {psql} -c 'ALTER SYSTEM RESET default_transaction_read_only' \
         -c 'SELECT pg_reload_conf()'"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let writer = std::thread::spawn({
        let (target, stop) = (target.clone(), stop.clone());
        move || inserting_session(target, stop)
    });
    let (code, stdout, stderr, v) =
        failover(&target, ("6", "100"), ("1.5", &fault), &["--keep-probe"]);
    stop.store(true, Ordering::Relaxed);
    let independent = longest_gap(&writer.join().unwrap());
    let f = &v["failover"];
    eprintln!(
        "read-only for 2 s: write downtime {} s (independent writer {independent:.3} s), read \
         downtime {} s, writes {}, reads {}",
        f["write_downtime_s"], f["read_downtime_s"], f["writes"], f["reads"]
    );
    // The fault did what it says: the independent writer saw about 2 s without a write.
    assert!(
        (1.9..3.5).contains(&independent),
        "the independent writer's longest gap: {independent} s"
    );
    let down = f["write_downtime_s"].as_f64().unwrap();
    assert!(
        (down - independent).abs() <= 0.5,
        "stampede saw {down} s without a write, the independent writer {independent} s: {f}"
    );
    // The reads went on: none failed nor stalled, so there is no read downtime at all (their
    // gaps are the schedule's, about 50 reads a second).
    let reads = &f["reads"];
    assert!(reads["succeeded"].as_u64().unwrap() > 100, "{reads}");
    assert_eq!(reads["failed"], 0, "{reads}");
    assert_eq!(
        reads["attempted"].as_u64().unwrap(),
        reads["succeeded"].as_u64().unwrap()
    );
    assert_eq!(f["read_downtime_s"], 0.0, "{f}");
    assert!(f.get("read_window").is_none(), "{f}");
    assert!(
        stdout.contains("read downtime: 0.000 s (no read failed or stalled)"),
        "{stdout}"
    );
    // Every error is a write's, of the read-only kind (reconnections to the same host succeed).
    let errors = f["errors"].as_array().unwrap();
    assert!(!errors.is_empty(), "{f}");
    for e in errors {
        assert_eq!(
            (e["op"].as_str(), e["kind"].as_str()),
            (Some("write"), Some("read-only transaction")),
            "{f}"
        );
    }
    assert!(
        stdout.contains(" read-only transaction (writes)"),
        "{stdout}"
    );
    // Each acknowledged write is one row; the failed ones were answered with an error, so none
    // is in doubt.
    let w = &f["writes"];
    let acked = w["acknowledged"].as_u64().unwrap();
    assert!(w["failed"].as_u64().unwrap() > 0, "{w}");
    assert_eq!(w["unknown"], 0, "{w}");
    let rows: u64 = pg
        .psql("SELECT count(*) FROM stampede_probe")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(acked, rows, "{w}");
    assert_eq!(f["in_doubt_writes"], 0, "{f}");
    let audit = check(&v, "audit");
    assert_eq!(audit["status"], "passed", "{audit}");
    // The failed writes fail the run's error check: exit status 2.
    assert_eq!(code, 2, "{stdout}{stderr}");
}

/// A primary killed (-9, every process at once) and its standby promoted while the probe runs
/// over both: each host's transactions are the ones its sessions served, as the clients' record
/// of every attempt has them (the old primary's up to the crash, the new primary's after), every
/// client counts on both hosts, and the summary gives no advice to spread the clients: they
/// moved because the primary did.
#[test]
fn a_kill_and_promote_counts_each_transaction_on_the_host_that_served_it() {
    // A promote request that comes while the standby waits for WAL from its dead primary was
    // acted on only at the next retry, wal_retrieve_retry_interval (5 s) later: seen here in one
    // run of four, the clients then found no writer before the run's end.
    let c = Cluster::start(1, &[&[("wal_retrieve_retry_interval", "100ms")]]);
    let (hosts, ports) = c.hosts_and_ports();
    let ppid = c.primary.pid().unwrap();
    let fault = format!(
        "pkill -KILL -P {ppid}; kill -KILL {ppid}; {}",
        promote(&c.standbys[0])
    );
    let target = format!("host={hosts} port={ports} user=postgres dbname=postgres");
    let (_, stdout, _, v) = failover(&target, ("5", "100"), ("1.5", &fault), &[]);
    let f = &v["failover"];
    let name = |i: usize| format!("{}:{}", c.hosts()[i].host, c.hosts()[i].port);
    // What the record of attempts says each host served.
    let served = |host: &str| -> u64 {
        (f["hosts"].as_array().unwrap().iter())
            .find(|h| h["host"] == host)
            .map_or(0, |h| {
                h["writes"].as_u64().unwrap() + h["reads"].as_u64().unwrap()
            })
    };
    let eps = v["endpoints"].as_array().unwrap();
    assert_eq!(eps.len(), 2, "{v}");
    for (i, e) in eps.iter().enumerate() {
        assert_eq!(
            format!("{}:{}", e["host"].as_str().unwrap(), e["port"]),
            name(i)
        );
        let txns = e["transactions"].as_u64().unwrap();
        assert!(txns > 0, "host {} served nothing: {e}\n{f}", name(i));
        assert_eq!(
            txns,
            served(&name(i)),
            "host {}: {e}\n{}",
            name(i),
            f["hosts"]
        );
        assert!(e["latency_ms"].is_object(), "{e}");
        // Every client had a session on the old primary, then on the new one.
        assert_eq!(e["clients"], 4, "{e}");
    }
    // Every transaction is on one host: they add up to the probe's successes.
    let all: u64 = eps
        .iter()
        .map(|e| e["transactions"].as_u64().unwrap())
        .sum();
    assert_eq!(
        all,
        f["writes"]["acknowledged"].as_u64().unwrap() + f["reads"]["succeeded"].as_u64().unwrap()
    );
    assert_eq!(f["last_write_old_primary"]["host"], name(0).as_str(), "{f}");
    assert_eq!(
        f["first_write_new_primary"]["host"],
        name(1).as_str(),
        "{f}"
    );
    assert!(v.get("endpoints_warning").is_none(), "{v}");
    assert!(!stdout.contains("--spread"), "{stdout}");
    assert!(stdout.contains("endpoints:"), "{stdout}");
}
