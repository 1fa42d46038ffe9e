//! Sweeps and the connection storm (issue 18, items 2 and 6): a client sweep on the embedded
//! server into one result with every step and its knee, compared step by step; a setting sweep
//! and its refusals; a storm of 2,000 connections on the embedded server (max_connections sized
//! by stampede) and one of 10,000 client connections through pgbouncer.

mod common;
#[path = "common/pgbouncer.rs"]
mod pgbouncer;

use common::stampede;
use serde_json::Value;
use sut::embedded::{EmbeddedOptions, EmbeddedServer};

/// The tests take turns: each loads the machine (64 clients, thousands of connections), and
/// a storm's connect latency is what it measures.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `stampede run ARGS --no-observe --json JSON`, which must exit 0: its output and result.
fn run(args: &[&str], json: &std::path::Path) -> (common::Run, Value) {
    let tail = ["--no-observe", "--json", json.to_str().unwrap()];
    let r = stampede(&[&["run"][..], args, &tail].concat());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    (r, self::json(json))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

#[test]
fn a_client_sweep_from_1_to_64_writes_one_result_with_every_step_and_a_knee_and_compares_step_by_step(
) {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let html = dir.path().join("a.html");
    let (r, v) = run(
        &[
            "select-only",
            "-s",
            "1",
            "--sweep",
            "clients=1..64",
            "-T",
            "3",
            "--warmup",
            "1",
            "-j",
            "2",
            "--html",
            html.to_str().unwrap(),
        ],
        &a,
    );
    let s = &v["sweep"];
    assert_eq!(s["parameter"], "clients");
    assert_eq!(f(&s["warmup_s"]), 1.0);
    let steps = s["steps"].as_array().unwrap();
    let values: Vec<&str> = steps.iter().map(|x| x["value"].as_str().unwrap()).collect();
    assert_eq!(values, ["1", "2", "4", "8", "16", "32", "64"]);
    for x in steps {
        // Each step ran with its clients, measured after its warm-up: about 2 of its 3 s.
        assert_eq!(x["clients"].to_string(), x["value"].as_str().unwrap());
        assert!(f(&x["tps"]) > 0.0 && f(&x["p99_ms"]) > 0.0, "{x}");
        assert!(f(&x["measured_s"]) < 2.9, "the warm-up second is cut: {x}");
        assert_eq!(x["failures"], 0, "{x}");
        assert_eq!(x["failed_checks"].as_array().unwrap().len(), 0, "{x}");
    }
    // 64 clients on this machine's cores cannot scale from 1: the knee is found, and it is
    // where the definition says (the next step gains under a quarter of the clients' growth
    // in tps while its p99 rises by a quarter or more).
    let k = &s["knee"];
    let i = k["index"].as_u64().expect("a knee") as usize;
    assert!(i < 6, "{k}");
    assert_eq!(k["value"], steps[i]["value"]);
    let (a0, a1) = (&steps[i], &steps[i + 1]);
    assert!(f(&a1["tps"]) / f(&a0["tps"]) - 1.0 < 0.25, "{k}");
    assert!(f(&a1["p99_ms"]) >= 1.25 * f(&a0["p99_ms"]), "{k}");
    // The result is the last step's, with every step's checks named by step.
    assert_eq!(v["config"]["clients"], 64);
    let checks = v["checks"].as_array().unwrap();
    for c in ["clients=1: commit count", "clients=64: TPC-B invariant"] {
        let c = checks
            .iter()
            .find(|x| x["name"] == c)
            .unwrap_or_else(|| panic!("{c}"));
        assert_eq!(c["status"], "passed", "{c}");
    }
    assert!(
        r.stdout.contains("sweep over clients (7 steps"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("<- knee"), "{}", r.stdout);
    // The whole sweep first, then the last step's summary under a heading naming it; the
    // header's defaults never name the -c the sweep replaced.
    let at = |s: &str| {
        r.stdout
            .find(s)
            .unwrap_or_else(|| panic!("{s}:\n{}", r.stdout))
    };
    assert!(at("sweep over clients (7 steps") < at("the last step, clients=64, in full:"));
    assert!(
        at("the last step, clients=64, in full:") < at("number of transactions actually processed")
    );
    assert!(!r.stdout.contains("defaults used: -c"), "{}", r.stdout);
    assert!(!r.stdout.contains(" 1 clients on"), "{}", r.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    // The page is about the sweep: its title names the steps; the sweep's section comes
    // before the last step's headline numbers.
    assert!(
        page.contains("sweep of clients 1, 2, 4, 8, 16, 32, 64 (7 steps)"),
        "title"
    );
    let (sweep, last) = (
        page.find("id=\"chart-sweep-tps\"").unwrap(),
        page.find("id=\"last-step\"").unwrap(),
    );
    assert!(sweep < last);
    assert!(page.contains("id=\"chart-sweep-tps\"") && page.contains("id=\"chart-sweep-p99\""));
    assert!(page.contains(&format!("knee {}", steps[i]["value"].as_str().unwrap())));

    // A second, shorter sweep, compared step by step: the values both ran paired, the others
    // shown with a dash.
    let b = dir.path().join("b.json");
    let (_, bv) = run(
        &[
            "select-only",
            "-s",
            "1",
            "--sweep",
            "clients=1,2,4",
            "-T",
            "2",
            "-j",
            "2",
        ],
        &b,
    );
    assert_eq!(
        bv["sweep"]["warmup_s"], 0.0,
        "a fifth of -T 2, whole seconds"
    );
    let c = stampede(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(c.code == 0 || c.code == 3, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout
            .contains("sweep over clients step by step (B against A):"),
        "{}",
        c.stdout
    );
    let row = |value: &str| -> Vec<String> {
        c.stdout
            .lines()
            .map(str::split_whitespace)
            .map(|w| w.map(String::from).collect::<Vec<_>>())
            .find(|w| w.first().map(String::as_str) == Some(value) && w.len() == 7)
            .unwrap_or_else(|| panic!("no row for {value}:\n{}", c.stdout))
    };
    for (i, value) in ["1", "2", "4"].iter().enumerate() {
        let w = row(value);
        let tps_a = f(&steps[i]["tps"]);
        let tps_b = f(&bv["sweep"]["steps"][i]["tps"]);
        assert_eq!(w[1], format!("{tps_a:.1}"), "{w:?}");
        assert_eq!(w[2], format!("{tps_b:.1}"), "{w:?}");
        assert!(w[3].ends_with('%'), "{w:?}");
    }
    assert_eq!(row("64")[2], "-");
}

#[test]
fn a_setting_sweep_applies_each_value_on_the_embedded_server_and_refuses_what_it_cannot_do() {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let (r, v) = run(
        &[
            "select-only",
            "-s",
            "1",
            "-c",
            "2",
            "-T",
            "1",
            "--sweep",
            "set:work_mem=1MB,8MB",
        ],
        &out,
    );
    // Each step started after the server showed the value.
    for value in ["1MB", "8MB"] {
        let want = format!("set work_mem = {value} (the server shows {value})");
        assert!(r.stderr.contains(&want), "{}", r.stderr);
    }
    assert_eq!(v["sweep"]["parameter"], "set:work_mem");
    assert_eq!(v["sweep"]["steps"].as_array().unwrap().len(), 2);

    // A setting on a server stampede did not start, one that needs a restart, and what cannot
    // be swept or storms alone: each a usage error that names it.
    let refused: [(&[&str], &str); 4] = [
        (
            &["run", "--sweep", "set:work_mem=1MB", "-h", "/nonexistent"],
            "--sweep set:work_mem changes a server setting",
        ),
        (
            &[
                "run",
                "select-only",
                "-s",
                "1",
                "-T",
                "1",
                "--sweep",
                "set:shared_buffers=64MB,128MB",
            ],
            "takes effect only at a server restart",
        ),
        (
            &["run", "--sweep", "threads=1,2"],
            "--sweep: cannot sweep \"threads\"",
        ),
        (
            &["run", "--connect-rate", "10"],
            "--connect-rate only applies to connection-storm",
        ),
    ];
    for (args, says) in refused {
        let r = stampede(args);
        assert_eq!(r.code, 64, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
    }
}

/// What every storm result must say when all connections opened.
fn assert_storm(v: &Value, connections: u64) {
    let s = &v["connection_storm"];
    assert_eq!(s["target_connections"], connections, "{s}");
    assert_eq!(s["attempted"], connections, "{s}");
    assert_eq!(s["opened"], connections, "{s}");
    assert_eq!(s["held_at_end"], connections, "{s}");
    assert_eq!(s["failures"].as_array().unwrap().len(), 0, "{s}");
    let l = &s["connect_latency_ms"];
    assert!(f(&l["p50"]) > 0.0, "{l}");
    assert!(
        f(&l["p50"]) <= f(&l["p99"]) && f(&l["p99"]) <= f(&l["max"]),
        "{l}"
    );
    // The busy clients ran at every step, in rising order of open connections, the last
    // with at least half of them open: all of them only when the machine kept up with the
    // rate, since the run holds for a fixed time after the planned ramp and connections that
    // open late (a loaded 2-core machine takes seconds per connect) open after the busy
    // clients' last interval.
    let steps = s["steps"].as_array().unwrap();
    assert!(steps.len() >= 2, "{s}");
    let open: Vec<u64> = (steps.iter())
        .map(|x| x["open_connections"].as_u64().unwrap())
        .collect();
    assert!(open.windows(2).all(|w| w[0] < w[1]), "{s}");
    assert!(
        *open.last().unwrap() >= connections / 2 && *open.last().unwrap() <= connections,
        "{s}"
    );
    assert!(steps.iter().all(|x| f(&x["tps"]) > 0.0), "{s}");
    assert_eq!(v["config"]["workload"], "connection-storm");
    assert_eq!(
        v["config"]["clients"], 2,
        "the busy clients are the engine's"
    );
}

#[test]
fn a_storm_of_2000_connections_on_the_embedded_server_reports_connect_latency_memory_and_busy_throughput(
) {
    let _turn = turn();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("storm.json");
    let (r, v) = run(
        &[
            "connection-storm",
            "-c",
            "2000",
            "--connect-rate",
            "250",
            "--busy-clients",
            "2",
            "-s",
            "1",
        ],
        &out,
    );
    assert_storm(&v, 2000);
    // stampede sized max_connections for the storm and its busy clients.
    let mc = &v["target"]["embedded"]["settings"]["max_connections"];
    assert!(mc.as_str().unwrap().parse::<u32>().unwrap() >= 2002, "{mc}");
    // The backends are local: their memory is read from /proc.
    let m = &v["connection_storm"]["memory"];
    assert!(
        m["source"].as_str().unwrap().contains("smaps_rollup"),
        "{m}"
    );
    assert!(f(&m["private_bytes_per_backend"]) > 0.0, "{m}");
    assert!(
        f(&m["rss_bytes_per_backend"]) >= f(&m["private_bytes_per_backend"]),
        "{m}"
    );
    // Every held connection is accounted for in the server's commit counter.
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["status"] == "passed"), "{checks:?}");
    assert!(
        r.stdout
            .contains("connection storm: 2000 of 2000 connections opened"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("busy clients by open connections:"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_storm_of_10000_client_connections_through_pgbouncer_holds_them_all() {
    let _turn = turn();
    const N: u32 = 10_000;
    let limit = pgbouncer::raise_fd_limit();
    assert!(
        limit > u64::from(N) + 200,
        "the test needs {N} open files, the limit is {limit}"
    );
    let pg = EmbeddedServer::start(&EmbeddedOptions {
        settings: vec![("shared_buffers".into(), "128MB".into())],
        ..Default::default()
    })
    .expect("these tests need PostgreSQL server binaries (scripts/install-deps.sh)");
    let (host, port) = (pg.socket_dir().display().to_string(), pg.port().to_string());
    let init = stampede(&[
        "init", "tpcb", "-q", "-s", "1", "-h", &host, "-p", &port, "-U", "postgres", "-d",
        "postgres",
    ]);
    assert_eq!(init.code, 0, "{}", init.stderr);
    let bouncer = pgbouncer::Pgbouncer::start(&pgbouncer::Options {
        server_socket_dir: pg.socket_dir(),
        server_port: pg.port(),
        max_client_conn: N + 100,
        pool_size: 20,
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pooled.json");
    let bhost = bouncer.socket_dir().display().to_string();
    let bport = bouncer.port().to_string();
    let n = N.to_string();
    let mut args = vec![
        "run",
        "connection-storm",
        "-c",
        &n,
        "--connect-rate",
        "2500",
        "-M",
        "extended",
        "-n",
        "--no-observe",
        "--json",
        out.to_str().unwrap(),
    ];
    let target = common::target_at(&bhost, &bport, "postgres");
    args.extend(target.iter().map(String::as_str));
    let r = stampede(&args);
    assert_eq!(r.code, 0, "{}\n{}\n{}", r.stdout, r.stderr, bouncer.log());
    let v = json(&out);
    assert_storm(&v, u64::from(N));
    // Not local to stampede: /proc is not read, and the result says so.
    let m = &v["connection_storm"]["memory"];
    assert!(m["source"].as_str().unwrap().contains("not local"), "{m}");
}
