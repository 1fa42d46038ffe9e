//! `--cloudwatch` against a real CloudWatch-compatible server: moto's (PyPI `moto[server]`,
//! installed by `scripts/install-deps.sh --tests`; boto3 comes with it and puts the data), on a
//! free loopback port, reached through `AWS_ENDPOINT_URL` with dummy credentials as the AWS
//! SDK's standard configuration reads them. Nothing inside stampede is mocked.
//!
//! The metrics of a made-up instance are put one a second around the run, at high resolution;
//! the run's JSON must hold exactly those whose second overlaps the run's window (none before
//! or after it, none of another instance), the HTML a chart of them, the summary its line; and
//! without credentials or region the run still succeeds, with a note.
//!
//! Under `CI=true` a missing moto server fails the test; elsewhere the test says why it skips.

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{outcome, stampede_cmd, Server};
use serde_json::Value;

/// `moto_server` on PATH, or where a user install of pip put it (`~/.local/bin`, which a fresh
/// machine's PATH may lack; `scripts/install-deps.sh --tests` installs it there).
fn moto_server() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let local = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/bin"));
    (std::env::split_paths(&path).chain(local))
        .map(|d| d.join("moto_server"))
        .find(|p| p.is_file())
}

/// A moto server on a free loopback port, killed on drop.
struct Moto {
    child: Child,
    port: u16,
    /// The Python that has boto3: the one beside `moto_server` (a virtual environment's), else
    /// `python3` (a user install's).
    python: PathBuf,
}

impl Moto {
    fn start(bin: &Path) -> Moto {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server starts");
        let beside = bin.with_file_name("python3");
        let python = match beside.is_file() {
            true => beside,
            false => PathBuf::from("python3"),
        };
        let m = Moto {
            child,
            port,
            python,
        };
        // Ready when it accepts connections (it imports its services first).
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "moto_server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        m
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Put `points` (epoch seconds, value) of `metric` for instance `id`, at 1 s resolution.
    fn put(&self, metric: &str, unit: &str, id: &str, points: &[(i64, f64)]) {
        let data: Vec<String> = points.iter().map(|(t, v)| format!("({t},{v})")).collect();
        let script = format!(
            "import boto3, datetime\n\
             cw = boto3.client('cloudwatch', endpoint_url='{url}', region_name='us-east-1',\n\
                 aws_access_key_id='testing', aws_secret_access_key='testing')\n\
             pts = [{pts}]\n\
             for i in range(0, len(pts), 20):\n\
             \x20   cw.put_metric_data(Namespace='AWS/RDS', MetricData=[dict(MetricName='{metric}',\n\
             \x20       Dimensions=[dict(Name='DBInstanceIdentifier', Value='{id}')],\n\
             \x20       Timestamp=datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc),\n\
             \x20       Value=v, Unit='{unit}', StorageResolution=1) for t, v in pts[i:i+20]])\n",
            url = self.url(),
            pts = data.join(","),
        );
        let out = Command::new(&self.python)
            .args(["-c", &script])
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "put_metric_data: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Epoch seconds of `2024-05-01T12:00:00.123Z` (the result's format).
fn epoch(s: &str) -> f64 {
    let (date, time) = s.strip_suffix('Z').unwrap().split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let t: Vec<f64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + (153 * m + 2) / 5 + d[2] - 1;
    let days = era * 146_097 + doe - 719_468;
    days as f64 * 86_400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

/// stampede with only the AWS configuration `env` gives (no profile files, no instance
/// metadata).
fn run(home: &Path, env: &[(&str, String)], args: &[String]) -> (i32, String, String) {
    let mut c = stampede_cmd();
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            c.env_remove(k);
        }
    }
    c.env("AWS_CONFIG_FILE", home.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.join("no-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true");
    for (k, v) in env {
        c.env(k, v);
    }
    outcome(c.args(args))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn cloudwatch_metrics_of_the_run_window_land_in_the_json_html_and_summary() {
    let Some(bin) = moto_server() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("moto_server is not installed (scripts/install-deps.sh --tests installs it)");
        }
        eprintln!("SKIPPED: moto_server is not installed (scripts/install-deps.sh --tests)");
        return;
    };
    let moto = Moto::start(&bin);
    let srv = Server::start();
    srv.create_db("cw");
    assert!(srv.pgbench("cw", &["-i", "-s", "1", "-q"]).status.success());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // One point a second from 30 s before now to 60 s after, each its own value; the same
    // seconds for another instance; WriteIOPS only long before the run.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let cpu: Vec<(i64, f64)> = (-30..60).map(|k| (now + k, 1000.0 + k as f64)).collect();
    moto.put("CPUUtilization", "Percent", "db-test", &cpu);
    let other: Vec<(i64, f64)> = (-30..60).map(|k| (now + k, 5.0)).collect();
    moto.put("CPUUtilization", "Percent", "db-other", &other);
    moto.put("WriteIOPS", "Count/Second", "db-test", &[(now - 3600, 7.0)]);

    let (r_json, r_html) = (d.join("r.json"), d.join("r.html"));
    let mut args: Vec<String> = ["run", "tpcb-like", "-T", "3", "-c", "2"]
        .map(String::from)
        .to_vec();
    args.extend(srv.target("cw"));
    args.extend(
        [
            "--cloudwatch",
            "--cloudwatch-instance",
            "db-test",
            "--json",
            r_json.to_str().unwrap(),
            "--html",
            r_html.to_str().unwrap(),
        ]
        .map(String::from),
    );
    let env = [
        ("AWS_ENDPOINT_URL", moto.url()),
        ("AWS_REGION", "us-east-1".to_string()),
        ("AWS_ACCESS_KEY_ID", "testing".to_string()),
        ("AWS_SECRET_ACCESS_KEY", "testing".to_string()),
    ];
    let (code, out, err) = run(d, &env, &args);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");

    let v = json(&r_json);
    let cw = &v["cloudwatch"];
    assert_eq!(cw["namespace"], "AWS/RDS");
    assert_eq!(cw["region"], "us-east-1", "{cw}");
    assert_eq!(cw["period_s"], 1, "a window less than 3 hours old: 1 s");
    let (start, end) = (
        epoch(cw["window_start"].as_str().unwrap()),
        epoch(cw["window_end"].as_str().unwrap()),
    );
    assert!(end - start > 2.5, "the window is the 3 s run: {cw}");
    assert!(
        (epoch(v["started_at"].as_str().unwrap()) - start).abs() < 1e-3,
        "the window starts with the run"
    );
    // Exactly the seconds that overlap the window, in order.
    let want: Vec<f64> = (cpu.iter())
        .filter(|(t, _)| (*t + 1) as f64 > start && (*t as f64) < end)
        .map(|(_, v)| *v)
        .collect();
    assert!(want.len() >= 3, "{want:?}");
    let metrics = cw["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 1, "only db-test's CPU had data: {cw}");
    let m = &metrics[0];
    assert_eq!(m["name"], "CPUUtilization");
    assert_eq!(m["dimensions"]["DBInstanceIdentifier"], "db-test");
    assert_eq!(
        (&m["statistic"], &m["unit"]),
        (&"Average".into(), &"Percent".into())
    );
    let points = m["points"].as_array().unwrap();
    let got: Vec<f64> = points
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect();
    assert_eq!(got, want, "the put points within the window: {cw}");
    for p in points {
        let t = epoch(p["timestamp"].as_str().unwrap());
        assert!((p["t_s"].as_f64().unwrap() - (t - start)).abs() < 1e-3);
    }
    let notes: Vec<&str> = (cw["notes"].as_array().unwrap().iter())
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("no data in the window") && n.contains("WriteIOPS")),
        "{notes:?}"
    );
    assert!(
        out.contains("cloudwatch (DBInstanceIdentifier=db-test"),
        "the summary's line:\n{out}"
    );
    let html = std::fs::read_to_string(&r_html).unwrap();
    assert!(html.contains("id=\"cloudwatch\""));
    assert!(
        html.contains("chart-cloudwatch-CPUUtilization"),
        "the chart"
    );

    // No region and no credentials: the run succeeds, the section says why it is empty.
    let (r2, r3) = (d.join("r2.json"), d.join("r3.json"));
    let short = |json: &Path| -> Vec<String> {
        let mut a: Vec<String> = ["run", "tpcb-like", "-t", "5", "-c", "1"]
            .map(String::from)
            .to_vec();
        a.extend(srv.target("cw"));
        a.extend(["--cloudwatch", "--cloudwatch-instance", "db-test", "--json"].map(String::from));
        a.push(json.to_str().unwrap().to_string());
        a
    };
    let (code, out, err) = run(d, &[("AWS_ENDPOINT_URL", moto.url())], &short(&r2));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let cw = &json(&r2)["cloudwatch"];
    assert!(cw["metrics"].as_array().unwrap().is_empty());
    let note = cw["notes"][0].as_str().unwrap();
    assert!(
        note.contains("not fetched") && note.contains("region"),
        "{note}"
    );
    assert!(out.contains("not fetched"), "{out}");
    // A region but no credentials.
    let env = [
        ("AWS_ENDPOINT_URL", moto.url()),
        ("AWS_REGION", "us-east-1".to_string()),
    ];
    let (code, out, err) = run(d, &env, &short(&r3));
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let cw = &json(&r3)["cloudwatch"];
    assert!(cw["metrics"].as_array().unwrap().is_empty());
    let note = cw["notes"][0].as_str().unwrap();
    assert!(
        note.contains("not fetched") && note.contains("credentials"),
        "{note}"
    );
}
