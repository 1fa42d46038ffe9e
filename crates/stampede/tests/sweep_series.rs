//! Sweeps as first-class series (issue 32, item 3): each step keeps its own server counters,
//! checks and the family's figures, and a sweep over scale re-initialises the tables per step.
//!
//! - A TPC-C sweep over 2 and 8 clients on a private MariaDB (testkit): each step has tpmC and
//!   NOPM that agree with its own New-Order count and length (not the last step's copied), and
//!   its own `Com_select` from its own observer (the steps' changes add up to no more than the
//!   server's own change over the whole sweep: one observer's running total shared by the steps
//!   would exceed it); the HTML charts them and `stampede report --sweep-csv` writes them.
//! - A TPC-B sweep over scale 1 and 2 on a private PostgreSQL: each step re-initialises
//!   pgbench's tables, reports their rows (100,000 accounts per unit) and its own commits.
//! - Bad forms (two parameters, a script's run, a family that cannot re-initialise) are usage
//!   errors (exit 64) before anything connects.

mod common;

use serde_json::Value;

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `stampede run ARGS TARGET --json J`, which must exit 0: its output and the result.
fn run_ok(args: &[&str], target: &[String], j: &std::path::Path) -> (common::Run, Value) {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.extend(["--json".to_string(), j.to_str().unwrap().to_string()]);
    all.extend(target.iter().cloned());
    let r = common::stampede(&all);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = json(j);
    (r, v)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

fn metric(step: &Value, name: &str) -> f64 {
    let m = step["metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("{step}"));
    f(&m.iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {step}"))["value"])
}

fn check_passed(step: &Value, name: &str) {
    let checks = step["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{step}"));
    let c = checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {step}"));
    assert_eq!(c["status"], "passed", "{c}");
}

#[test]
fn a_tpcc_sweep_on_mariadb_keeps_each_step_s_tpmc_and_com_select() {
    let db = testkit::MariaDb::start(&["--innodb-buffer-pool-size=256M"]);
    db.fresh_database("sweep_tpcc");
    let url = db.tcp_url("root", None, "sweep_tpcc");
    let (code, _, err) = common::stampede3(&["init", "tpcc", "-w", "1", "-q", "-d", &url]);
    assert_eq!(code, 0, "{err}");
    let status = |name: &str| -> f64 {
        let line = db.sql(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let selects_before = status("Com_select");

    let dir = tempfile::tempdir().unwrap();
    let (j, html) = (dir.path().join("s.json"), dir.path().join("s.html"));
    let (code, out, err) = common::stampede3(&[
        "run",
        "tpcc",
        "-w",
        "1",
        "--sweep",
        "clients=2,8",
        "-T",
        "4",
        "--warmup",
        "1",
        "-d",
        &url,
        "--json",
        j.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let selects = status("Com_select") - selects_before;
    let v = json(&j);
    let steps = v["sweep"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let mut step_selects = Vec::new();
    for (x, clients) in steps.iter().zip([2, 8]) {
        assert_eq!(x["clients"], clients, "{x}");
        // The step's tpmC is its own New-Orders per minute of its own length.
        let new_orders = x["committed_by_type"]["new-order"].as_u64().unwrap();
        assert!(new_orders > 0, "{x}");
        let own = new_orders as f64 * 60.0 / f(&x["step_s"]);
        let tpmc = metric(x, "tpmC");
        assert!(
            (tpmc - own).abs() <= 1e-6 * own,
            "tpmC {tpmc} vs own {own}: {x}"
        );
        assert!(metric(x, "NOPM") <= tpmc, "{x}");
        // Its own observer's counters: Com_select changed, at its own rate.
        let c = &x["counters"]["mysql.Com_select"];
        let (delta, per_s) = (f(&c["delta"]), f(&c["per_s"]));
        assert!(delta > 0.0, "{x}");
        let window = f(&x["counters_s"]);
        assert!(window > 0.0 && (per_s - delta / window).abs() < 1e-6 * per_s.max(1.0));
        step_selects.push(delta);
        // Its own checks, with their verdicts.
        check_passed(x, "commit count");
        assert!(f(&x["counters"]["mysql.Com_commit"]["delta"]) >= new_orders as f64);
        // TPC-C says its size in its own section (warehouses), not in config.scale.
        assert_eq!(x["scale"], 0, "{x}");
    }
    // Steps with one observer's running total would add up to more than the server counted.
    assert!(
        step_selects.iter().sum::<f64>() <= selects,
        "{step_selects:?} vs the server's {selects}"
    );
    assert_ne!(metric(&steps[0], "tpmC"), metric(&steps[1], "tpmC"));
    // The result's own section is the last step's, its tpmC the last step's too.
    assert_eq!(f(&v["tpcc"]["tpmc"]), metric(&steps[1], "tpmC"));
    assert!(
        out.contains("clients=2: ") && out.contains(", tpmC "),
        "{out}"
    );

    let page = std::fs::read_to_string(&html).unwrap();
    for id in ["chart-sweep-metric-0", "chart-sweep-counters-4"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("tpmC, NOPM against clients"));

    // The CSV of the steps: a row each, a column per counter.
    let csv = dir.path().join("s.csv");
    let again = dir.path().join("again.html");
    let (code, _, err) = common::stampede3(&[
        "report",
        j.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
        "--sweep-csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    let head: Vec<&str> = lines[0].split(',').collect();
    let at = head.iter().position(|h| *h == "mysql.Com_select").unwrap();
    for (i, d) in step_selects.iter().enumerate() {
        let cell: f64 = lines[1 + i].split(',').nth(at).unwrap().parse().unwrap();
        assert_eq!(cell, *d);
    }
    assert!(head.contains(&"metric:tpmC"));
}

#[test]
fn a_scale_sweep_on_postgresql_reinitialises_the_tables_at_each_step() {
    let pg = testkit::Pg::start(&[]);
    pg.psql("CREATE DATABASE sweep_scale");
    let target = common::pg_target(&pg, "sweep_scale");
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("s.json");
    let args = [
        "run",
        "tpcb-like",
        "--sweep",
        "scale=1,2",
        "-c",
        "2",
        "-T",
        "2",
        "--warmup",
        "0",
    ];
    let (r, v) = run_ok(&args, &target, &j);
    assert_eq!(v["sweep"]["parameter"], "scale");
    let steps = v["sweep"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let mut commits = Vec::new();
    for (x, scale) in steps.iter().zip([1u64, 2]) {
        assert_eq!(x["value"], scale.to_string());
        assert_eq!(x["scale"], scale, "{x}");
        let rows = &x["rows"];
        assert_eq!(rows["pgbench_branches"], scale, "{x}");
        assert_eq!(rows["pgbench_tellers"], 10 * scale, "{x}");
        assert_eq!(rows["pgbench_accounts"], 100_000 * scale, "{x}");
        assert_eq!(rows["pgbench_history"], 0, "{x}");
        check_passed(x, "commit count");
        check_passed(x, "TPC-B invariant");
        // The step's own commits: at least its transactions, from its own observer.
        let committed: u64 = (x["committed_by_type"].as_object().unwrap().values())
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert!(committed > 0, "{x}");
        let c = f(&x["counters"]["database.xact_commit"]["delta"]);
        assert!(c >= committed as f64, "{c} < {committed}: {x}");
        commits.push(c);
    }
    assert_ne!(commits[0], commits[1]);
    // The last step's tables stay: scale 2.
    let n = pg.psql_on("sweep_scale", "SELECT count(*) FROM pgbench_accounts");
    assert_eq!(n.trim(), "200000");
    assert!(
        r.stderr.contains("re-initialising the tables at scale 2"),
        "{}",
        r.stderr
    );
}

/// pgbench-tools' matrix: every client count at each scale, the tables loaded once per scale
/// whichever `--sweep` comes first, each scale's knee found among its own steps.
#[test]
fn a_scale_by_clients_matrix_loads_each_scale_once_and_runs_every_client_count_on_it() {
    let pg = testkit::Pg::start(&[]);
    pg.psql("CREATE DATABASE sweep_matrix");
    let target = common::pg_target(&pg, "sweep_matrix");
    let dir = tempfile::tempdir().unwrap();
    let (j, csv) = (dir.path().join("m.json"), dir.path().join("m.csv"));
    let args = [
        "run",
        "tpcb-like",
        "--sweep",
        "clients=1,2",
        "--sweep",
        "scale=1,2",
        "-T",
        "1",
        "--warmup",
        "0",
    ];
    let (r, v) = run_ok(&args, &target, &j);
    assert_eq!(
        r.stderr
            .matches("re-initialising the tables at scale")
            .count(),
        2,
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("sweep step 4/4: scale=2, clients=2"),
        "{}",
        r.stdout
    );
    let s = &v["sweep"];
    assert_eq!(
        (s["parameter"].as_str(), s["group_parameter"].as_str()),
        (Some("clients"), Some("scale"))
    );
    let steps = s["steps"].as_array().unwrap();
    let got: Vec<(u64, u64)> = (steps.iter())
        .map(|x| {
            (
                x["group"].as_str().unwrap().parse().unwrap(),
                x["clients"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(1, 1), (1, 2), (2, 1), (2, 2)]);
    for x in steps {
        let scale = x["scale"].as_u64().unwrap();
        assert_eq!(x["group"], scale.to_string(), "{x}");
        assert_eq!(x["rows"]["pgbench_accounts"], 100_000 * scale, "{x}");
        check_passed(x, "commit count");
        check_passed(x, "TPC-B invariant");
    }
    // The step names carry both values, in the checks and in the CSV's first two columns.
    let names: Vec<&str> = (v["checks"].as_array().unwrap().iter())
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("scale=2, clients=1: ")),
        "{names:?}"
    );
    let out = common::stampede(&[
        "report".to_string(),
        j.to_str().unwrap().to_string(),
        "--sweep-csv".to_string(),
        csv.to_str().unwrap().to_string(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("scale,clients,"), "{}", rows[0]);
    assert!(rows[3].starts_with("2,1,"), "{}", rows[3]);
}

#[test]
fn bad_scale_sweeps_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    for (args, says) in [
        (
            vec!["tpcb-like", "--sweep", "scale=1,2:clients=2,8"],
            "names two parameters",
        ),
        (vec!["tpcb-like", "--sweep", "scale=0"], "positive integers"),
        // A matrix has two parameters, not three, and not one twice.
        (
            vec![
                "tpcb-like",
                "--sweep",
                "scale=1,2",
                "--sweep",
                "clients=2,8",
                "--sweep",
                "rate=10",
            ],
            "3 sweeps given",
        ),
        (
            vec!["tpcb-like", "--sweep", "clients=1", "--sweep", "c=2,8"],
            "swept twice",
        ),
        (
            vec!["-f", script.to_str().unwrap(), "--sweep", "scale=1,2"],
            "builtins only",
        ),
        (vec!["tpcc", "--sweep", "scale=1,2"], "--sweep scale:"),
    ] {
        let mut all = vec!["run"];
        all.extend(args.iter().copied());
        // A port nothing listens on: refused before connecting.
        all.extend(["-h", "127.0.0.1", "-p", "1", "-d", "nowhere"]);
        let (code, out, err) = common::stampede3(&all);
        assert_eq!(code, 64, "{args:?}\n{out}\n{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
