//! Fleets: three `stampede run --fleet` processes on this machine against one server.
//!
//! - They start together by the server's clock: each transaction inserts a row stamped with
//!   `clock_timestamp()`, and each process's first row is within 50 ms of the others'.
//! - Client ids are global (`:client_id` 0..5 across three processes of -c 2).
//! - The merged result (`stampede fleet report`) counts exactly the rows the server holds and
//!   the sum of the three results, the fleet's commit check passes against the server's
//!   counter, and its histogram equals, bucket for bucket, a histogram of every latency the
//!   three wrote to their `-l` logs (so its percentiles are those of the union).
//! - A process killed mid-run: process 0 names it as lost, merges the others, and the commit
//!   check says why it cannot be exact.
//! - `init oltp`, `init tpcb` (range partitions) and `init tpcc` split across three processes
//!   (indexes assigned as they join) load the same rows, keys, indexes (and sequences) as one
//!   process: checksums of every table equal (TPC-C's dates set alike first, after checking
//!   every process wrote the first one's load time).
//! - The Kubernetes manifest has the Job API's fields; bad fleet options are refused by name.
//! - A fleet table left by an older stampede gets its new column and keeps its rows.

mod common;

use std::path::Path;
use std::process::{Child, Command};

use common::fleet::{
    fleet_report, in_fleet, kill_2_and_check_the_others, load_one_and_three, ok, read, spread_ms,
    start, three,
};
use common::oltp::{database, fixture, query, rt, scalar_i64};

fn base(db: &str) -> Vec<String> {
    fixture().target(db)
}

/// A fresh database `db` with the probe script's table; its config.
fn probe_database(db: &str) -> sut::ConnConfig {
    let cfg = rt().block_on(database(db));
    rt().block_on(query(
        &cfg,
        "CREATE TABLE fleet_probe (client int, at timestamptz)",
    ));
    cfg
}

/// The probe script: one autocommitted insert per transaction, stamped by the server.
fn script(dir: &Path) -> String {
    let p = dir.join("probe.sql");
    // Written once: a process started earlier may be reading it.
    if !p.exists() {
        std::fs::write(
            &p,
            "INSERT INTO fleet_probe (client, at) VALUES (:client_id, clock_timestamp());\n",
        )
        .unwrap();
    }
    p.display().to_string()
}

/// Process `index` of fleet `fleet` running the probe script on `db`, logging every
/// transaction (`-l`) to `dir/pINDEX.*`.
fn spawn(db: &str, fleet: &str, index: u32, dir: &Path, extra: &[&str]) -> Child {
    let prefix = dir.join(format!("p{index}")).display().to_string();
    let mut flags = vec!["-l", "--log-prefix", &prefix];
    flags.extend(extra);
    let script = script(dir);
    common::fleet::spawn(Path::new(&script), fleet, index, dir, &flags, &base(db))
}

/// Every committed latency the processes logged (pgbench's `-l` format: the third field).
fn logged_latencies(dir: &Path) -> Vec<u64> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with('p') && name.contains('.') && !name.ends_with(".sql")) {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let Ok(us) = f[2].parse::<u64>() {
                all.push(us);
            }
        }
    }
    all
}

#[test]
fn three_processes_start_together_and_merge_exactly() {
    let cfg = probe_database("fleet_three");
    let dir = tempfile::tempdir().unwrap();
    let outs = three(|i| spawn("fleet_three", "three", i, dir.path(), &["-t", "40"]));
    let p0 = &outs[0].1;
    assert!(p0.contains("fleet three: the merged result"), "{p0}");

    // A common start on the server's clock.
    let firsts = rt().block_on(query(
        &cfg,
        "SELECT client / 2, extract(epoch FROM min(at)) * 1000000 FROM fleet_probe \
         GROUP BY 1 ORDER BY 1",
    ));
    assert_eq!(firsts.len(), 3, "{firsts:?}");
    let starts: Vec<f64> = (firsts.iter())
        .map(|r| r[1].as_deref().unwrap().parse().unwrap())
        .collect();
    let spread_ms = spread_ms(&starts);
    assert!(spread_ms < 50.0, "first transactions {spread_ms} ms apart");
    // Global client ids: 0..5, 40 transactions each.
    let per_client = rt().block_on(query(
        &cfg,
        "SELECT client, count(*) FROM fleet_probe GROUP BY 1 ORDER BY 1",
    ));
    let ids: Vec<String> = per_client.iter().map(|r| r[0].clone().unwrap()).collect();
    assert_eq!(ids, ["0", "1", "2", "3", "4", "5"]);
    assert!(per_client.iter().all(|r| r[1].as_deref() == Some("40")));

    // The merged result, from the fleet's table.
    let (m, text) = fleet_report(
        "three",
        &dir.path().join("merged.json"),
        &base("fleet_three"),
    );
    let rows = rt().block_on(scalar_i64(&cfg, "SELECT count(*) FROM fleet_probe"));
    let parts: Vec<report::RunResult> = (0..3)
        .map(|i| read(&dir.path().join(format!("{i}.json"))))
        .collect();
    let sum: u64 = parts.iter().map(|r| r.total.total().committed()).sum();
    assert_eq!(m.total.total().committed(), 240);
    assert_eq!(sum, 240);
    assert_eq!(rows, 240);
    let f = m.fleet.as_ref().unwrap();
    assert_eq!(f.processes.len(), 3);
    assert!(f.lost.is_empty());
    let c = f.commit_check.as_ref().expect("the fleet's commit check");
    eprintln!("{text}");
    eprintln!("first transactions' spread: {spread_ms:.3} ms");
    assert_eq!(c.status, report::CheckStatus::Passed, "{}", c.detail);
    // The server's commit delta is the sum of what the processes committed.
    assert!(
        c.detail.starts_with(&format!(
            "server xact_commit delta {}",
            f.processes.iter().map(|p| p.server_commits).sum::<u64>()
        )),
        "{}",
        c.detail
    );

    // The merged histogram is the histogram of every latency the three logged.
    let logged = logged_latencies(dir.path());
    assert_eq!(logged.len(), 240);
    let mut union = measure::Histogram::new();
    for l in &logged {
        union.record(*l);
    }
    let merged = &m.total.txns[0].latency;
    assert_eq!(merged.encode(), union.encode());
    for p in [50.0, 90.0, 99.0, 100.0] {
        assert_eq!(merged.percentile_us(p), union.percentile_us(p), "p{p}");
    }
    // `stampede merge` of the three files gives the same numbers.
    let files_path = dir.path().join("files.json");
    let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .arg("merge")
        .args((0..3).map(|i| dir.path().join(format!("{i}.json"))))
        .arg("--json")
        .arg(&files_path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = read(&files_path);
    assert_eq!(files.total.txns[0].latency.encode(), union.encode());
    assert_eq!(files.intervals.len(), m.intervals.len());
    // --forget removed the fleet's table.
    let left = rt().block_on(scalar_i64(
        &cfg,
        "SELECT count(*) FROM pg_class WHERE relname = 'stampede_fleet'",
    ));
    assert_eq!(left, 0);
}

#[test]
fn a_process_killed_mid_run_is_named_and_the_others_merged() {
    let cfg = probe_database("fleet_kill");
    let dir = tempfile::tempdir().unwrap();
    let rate = ["-T", "4", "-R", "300"];
    // Process 2 is killed once its clients (ids 4 and 5) have committed.
    kill_2_and_check_the_others(
        |i| spawn("fleet_kill", "kill", i, dir.path(), &rate),
        || {
            rt().block_on(scalar_i64(
                &cfg,
                "SELECT count(*) FROM fleet_probe WHERE client >= 4",
            )) > 0
        },
    );
}

#[test]
fn the_manifest_is_an_indexed_job_with_the_password_from_a_secret() {
    // What each worker runs: the manifest's args are these and the fleet's flags.
    const RUN: [&str; 8] = [
        "run",
        "tpcc",
        "-w",
        "1000",
        "-T",
        "600",
        "-h",
        "db.internal",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
        .args(["fleet", "manifest", "--workers", "4", "--name", "tpcc-big"])
        .args([
            "--image",
            "registry.example/stampede:1.2",
            "--secret",
            "db-pass",
        ])
        .arg("--")
        .args(RUN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["apiVersion"], "batch/v1");
    assert_eq!(j["kind"], "Job");
    assert_eq!(j["metadata"]["name"], "tpcc-big");
    let spec = &j["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 4);
    assert_eq!(spec["parallelism"], 4);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/stampede:1.2");
    // An image loaded into the nodes under `--image`'s default (`:latest`) is not pulled.
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["command"], serde_json::json!(["stampede"]));
    let args: Vec<&str> = (c["args"].as_array().unwrap().iter())
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [&RUN[..], &["--fleet", "tpcc-big", "--fleet-size", "4"]].concat()
    );
    let env = &c["env"][0];
    assert_eq!(env["name"], "PGPASSWORD");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], "db-pass");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["key"], "password");

    // A password in the args is refused, and not printed, in any spelling.
    for spelled in [
        &["-d", "postgresql://u:s3cret@db/x"][..],
        &["-d", "postgresql://u:s3cr'et@db/x"],
        &["-d", "postgresql://u:s3c?r#et@db/x"],
        &["-d", "host=db password='s3c ret'"],
        &["oltp_point_select", "--pgsql-password", "s3cret"],
        &["oltp_point_select", "--mysql-password=s3cret"],
        &["--fault-cmd", "mysql -uroot -ps3cret -e 'SHUTDOWN'"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
            .args(["fleet", "manifest", "--workers", "2", "--", "run"])
            .args(spelled)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{spelled:?}: {err}");
        assert!(err.contains("hold a password"), "{err}");
        assert!(!err.contains("s3c") && out.stdout.is_empty(), "{err}");
    }
}

/// A `stampede_fleet` table left by an older stampede (none of the columns added since, an old
/// fleet's rows in it) gets the columns, keeps its rows, and a new fleet runs on it and keeps
/// its autovacuum readings there (the commit check's allowance for autovacuum's commits).
#[test]
fn an_older_fleet_table_gets_its_new_column_and_keeps_its_rows() {
    let cfg = rt().block_on(database("fleet_old"));
    rt().block_on(query(
        &cfg,
        "CREATE TABLE fleet_probe (client int, at timestamptz); \
         CREATE TABLE stampede_fleet (fleet text NOT NULL, idx integer NOT NULL, size integer, \
         hostname text, os_pid bigint, backend_pid bigint, clients integer, joined_us bigint, \
         start_us bigint, s0 bigint, s1 bigint, per_connection bigint, failure text, \
         result text, stage integer NOT NULL DEFAULT 0, PRIMARY KEY (fleet, idx)); \
         INSERT INTO stampede_fleet (fleet, idx, size) VALUES ('before', -1, 2)",
    ));
    let dir = tempfile::tempdir().unwrap();
    let script = script(dir.path());
    let target = base("fleet_old");
    let mut args = vec!["run", "-f", &script, "-c", "2", "-t", "5", "--no-observe"];
    args.extend([
        "--fleet",
        "after",
        "--fleet-size",
        "1",
        "--fleet-timeout",
        "30",
    ]);
    args.extend(target.iter().map(String::as_str));
    let stdout = ok(&args);
    assert!(
        stdout.contains("number of transactions actually processed: 10"),
        "{stdout}"
    );
    assert_eq!(
        rt().block_on(scalar_i64(&cfg, "SELECT count(*) FROM fleet_probe")),
        10
    );
    assert_eq!(
        rt().block_on(scalar_i64(
            &cfg,
            "SELECT count(*) FROM stampede_fleet WHERE fleet = 'before'"
        )),
        1,
        "the older fleet's row was kept"
    );
    assert_eq!(
        rt().block_on(scalar_i64(
            &cfg,
            "SELECT count(*) FROM information_schema.columns WHERE table_name = \
             'stampede_fleet' AND column_name IN ('others', 'maintenance0', 'maintenance1')"
        )),
        3
    );
    // Both readings taken, and no run of autovacuum went backwards.
    assert_eq!(
        rt().block_on(scalar_i64(
            &cfg,
            "SELECT count(*) FROM stampede_fleet WHERE fleet = 'after' AND idx = -1 \
             AND maintenance1 >= maintenance0 AND maintenance0 >= 0"
        )),
        1
    );
    assert!(stdout.contains("fleet commit count"), "{stdout}");
}

#[test]
fn bad_fleet_options_are_refused_by_name() {
    let cases: [(&[&str], &str); 4] = [
        (&["--fleet", "x"], "--fleet needs --fleet-size"),
        (
            &["--fleet", "x", "--fleet-size", "3", "--fleet-index", "3"],
            "--fleet-index 3",
        ),
        (&["--fleet", "a b", "--fleet-size", "2"], "--fleet \"a b\""),
        (
            &["--fleet", "x", "--fleet-size", "0"],
            "--fleet-size must be at least 1",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_stampede"))
            .args(["run", "-h", "/nonexistent", "-T", "1"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Every sbtest table's rows (md5 of all columns in id order), its indexes and its sequence.
fn oltp_checksums(db: &str, tables: u32) -> Vec<Vec<Option<String>>> {
    let cfg = fixture().cfg.with_dbname(db);
    let mut all = Vec::new();
    for t in 1..=tables {
        all.extend(rt().block_on(query(
            &cfg,
            &format!(
                "SELECT count(*), md5(string_agg(id || ':' || k || ':' || c || ':' || pad, ',' \
                 ORDER BY id)), (SELECT string_agg(indexdef, '; ' ORDER BY indexname) \
                 FROM pg_indexes WHERE tablename = 'sbtest{t}'), \
                 (SELECT last_value FROM sbtest{t}_id_seq) FROM sbtest{t}"
            ),
        )));
    }
    all
}

/// Load `init` into database `one` from one process and into `three` from a fleet of three
/// ([`common::fleet::load_one_and_three`]); the fleet's table is gone after.
fn load_one_and_three_dbs(init: &[&str], one: &str, three: &str) {
    rt().block_on(database(one));
    rt().block_on(database(three));
    load_one_and_three(init, &base(one), &base(three));
    let cfg = fixture().cfg.with_dbname(three);
    let left = rt().block_on(scalar_i64(
        &cfg,
        "SELECT count(*) FROM pg_class WHERE relname = 'stampede_fleet'",
    ));
    assert_eq!(left, 0, "the fleet's table is removed after the load");
}

/// Per table: its rows (count and md5 of every row's text in key order) and its indexes.
fn checksums(db: &str, tables: &[(&str, &str)]) -> Vec<Vec<Option<String>>> {
    let cfg = fixture().cfg.with_dbname(db);
    let mut all = Vec::new();
    for (t, key) in tables {
        all.extend(rt().block_on(query(
            &cfg,
            &format!(
                "SELECT count(*), md5(string_agg(x::text, ',' ORDER BY {key})), \
                 (SELECT string_agg(indexdef, '; ' ORDER BY indexname) FROM pg_indexes \
                 WHERE tablename = '{t}') FROM {t} x"
            ),
        )));
    }
    all
}

#[test]
fn init_oltp_split_across_three_processes_loads_what_one_loads() {
    let init = ["init", "oltp", "--tables", "2", "--table-size", "3000"];
    load_one_and_three_dbs(&init, "fleet_init_one", "fleet_init_three");
    let one = oltp_checksums("fleet_init_one", 2);
    assert_eq!(one[0][0].as_deref(), Some("3000"));
    assert!(one[0][2].as_deref().unwrap().contains("k_1"), "{one:?}");
    assert_eq!(oltp_checksums("fleet_init_three", 2), one);
}

/// `init tpcb` with range partitions: each process loads its third of the accounts (FREEZE
/// on a partition that lies wholly in its third), the first the branches and tellers.
#[test]
fn init_tpcb_split_across_three_processes_loads_what_one_loads() {
    let init = ["init", "tpcb", "-s", "2", "--partitions", "4"];
    load_one_and_three_dbs(&init, "fleet_tpcb_one", "fleet_tpcb_three");
    let tables = [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
        ("pgbench_accounts_3", "aid"),
        ("pgbench_history", "tid"),
    ];
    let one = checksums("fleet_tpcb_one", &tables);
    assert_eq!(one[2][0].as_deref(), Some("200000"));
    assert_eq!(one[3][0].as_deref(), Some("50000"));
    assert!(one[2][2].as_deref().unwrap().contains("aid"), "{one:?}");
    assert_eq!(checksums("fleet_tpcb_three", &tables), one);
}

/// `init tpcc -w 2` across three processes: the first loads `item` and no warehouse, the
/// others one warehouse each, all with the first one's load time (one distinct date per
/// date column); with the dates set alike, every table equals a one-process load.
#[test]
fn init_tpcc_split_across_three_processes_loads_what_one_loads() {
    let init = ["init", "tpcc", "-w", "2"];
    load_one_and_three_dbs(&init, "fleet_tpcc_one", "fleet_tpcc_three");
    let dates = [
        ("customer", "c_since"),
        ("history", "h_date"),
        ("orders", "o_entry_d"),
        ("order_line", "ol_delivery_d"),
    ];
    for db in ["fleet_tpcc_one", "fleet_tpcc_three"] {
        let cfg = fixture().cfg.with_dbname(db);
        for (t, c) in dates {
            let n = rt().block_on(scalar_i64(
                &cfg,
                &format!("SELECT count(DISTINCT {c}) FROM {t}"),
            ));
            assert_eq!(n, 1, "{db}: {t}.{c} has one load time");
            rt().block_on(query(
                &cfg,
                &format!("UPDATE {t} SET {c} = '2000-01-01' WHERE {c} IS NOT NULL"),
            ));
        }
    }
    let tables = [
        ("warehouse", "w_id"),
        ("district", "d_w_id, d_id"),
        ("customer", "c_w_id, c_d_id, c_id"),
        ("history", "x::text"),
        ("orders", "o_w_id, o_d_id, o_id"),
        ("new_order", "no_w_id, no_d_id, no_o_id"),
        ("order_line", "ol_w_id, ol_d_id, ol_o_id, ol_number"),
        ("item", "i_id"),
        ("stock", "s_w_id, s_i_id"),
    ];
    let one = checksums("fleet_tpcc_one", &tables);
    assert_eq!(one[0][0].as_deref(), Some("2"));
    assert_eq!(one[7][0].as_deref(), Some("100000"));
    assert_eq!(checksums("fleet_tpcc_three", &tables), one);
}

/// A TPC-C run by a fleet of three: the merged result's TPC-C section is the fleet's (counts
/// summed, tpmC from the merged New-Orders and time, each limit's count the union's) and
/// process 0 checked the consistency conditions once all were done.
#[test]
fn a_tpcc_fleet_reports_the_fleet_s_tpmc_and_consistency() {
    let db = "fleet_tpcc_run";
    rt().block_on(database(db));
    let target = base(db);
    let mut init = vec!["init", "tpcc", "-w", "2", "-q"];
    init.extend(target.iter().map(String::as_str));
    ok(&init);
    let dir = tempfile::tempdir().unwrap();
    let json = |i: &str| dir.path().join(format!("{i}.json"));
    let run = [
        "run",
        "tpcc",
        "-w",
        "2",
        "-c",
        "1",
        "-t",
        "30",
        "--no-observe",
    ];
    three(|i| {
        let (i, json) = (i.to_string(), json(&i.to_string()).display().to_string());
        let mut args = in_fleet(&run, "tpccrun");
        args.extend(["--fleet-index", &i, "--json", &json]);
        args.extend(target.iter().map(String::as_str));
        start(&args)
    });
    fleet_report("tpccrun", &json("merged"), &target);
    let m = read(&json("merged"));
    let parts: Vec<report::RunResult> = (0..3).map(|i| read(&json(&i.to_string()))).collect();
    // TPC-C's section as the JSON has it (its type is the binary's).
    let tpcc = |r: &report::RunResult| r.sections.get("tpcc").cloned().expect("a TPC-C section");
    let t = tpcc(&m);
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let new_orders: u64 = parts.iter().map(|r| r.total.txns[0].committed()).sum();
    assert_eq!(m.total.txns[0].committed(), new_orders);
    assert_eq!(n(&t["response_limits"][0]["count"]), new_orders);
    let rollbacks: u64 = parts.iter().map(|r| n(&tpcc(r)["rollbacks"])).sum();
    assert_eq!(n(&t["rollbacks"]), rollbacks);
    let want = new_orders as f64 / (m.measured_duration_s / 60.0);
    let tpmc = t["tpmc"].as_f64().unwrap();
    assert!((tpmc - want).abs() < 1e-6 * want, "{tpmc} vs {want}");
    // Each process skipped the conditions; the fleet's are checked once, and hold.
    assert!(parts.iter().all(|r| tpcc(r)["consistency"]
        .as_array()
        .is_none_or(|c| c.is_empty())));
    let conditions = t["consistency"].as_array().unwrap();
    assert!(conditions.len() >= 10, "{conditions:?}");
    assert!(
        conditions.iter().all(|c| c["violations"] == 0),
        "{conditions:?}"
    );
    let c = (m.checks.iter())
        .find(|c| c.name.starts_with("fleet: ") && c.name.contains("consisten"))
        .unwrap_or_else(|| panic!("{:?}", m.checks));
    assert_eq!(c.status, report::CheckStatus::Passed, "{}", c.detail);
}
