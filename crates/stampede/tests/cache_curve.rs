//! `stampede run cache-curve` against real servers: a PostgreSQL with a 16MB shared_buffers
//! shows every page a hit for tables well below the cache and a measured drop above it, the
//! knee within one size step of the cache; the JSON has the section and validates against the
//! schema; the HTML (at the end of the run and from `stampede report`) has the charts; the
//! table is the run's own (dropped after, and one it did not create is refused and left alone).
//! The embedded server starts with a small cache by itself; bad `--sizes` are refused before
//! anything starts. The curve is watched like a run: each scan is a point in time with its
//! storage read time (`track_io_timing`), its reads the ones EXPLAIN and the table's statistics
//! counted, pages per ms of I/O their quotient, each size's phases carrying the wait events
//! sampled in them; a role that may not set `track_io_timing` gets a note with the fix.

mod common;

use common::stampede;
use report::RunResult;
use testkit::{PerBinary, Pg};

/// One server for the binary, with the small cache the curve is measured against.
static PG: PerBinary = PerBinary::new(&[&[("shared_buffers", "16MB")]]);

/// [`Pg::psql_on`], trimmed.
fn psql(pg: &Pg, db: &str, sql: &str) -> String {
    pg.psql_on(db, sql).trim().to_string()
}

/// A fresh database `db` and stampede's target flags for it.
fn database(pg: &Pg, db: &str) -> Vec<String> {
    psql(pg, "postgres", &format!("DROP DATABASE IF EXISTS {db}"));
    psql(pg, "postgres", &format!("CREATE DATABASE {db}"));
    common::pg_target(pg, db)
}

fn read(path: &std::path::Path) -> RunResult {
    report::read_json(std::fs::File::open(path).unwrap()).unwrap()
}

/// The result's `cache_curve` section as the schema declares it (its type is the binary's).
#[derive(serde::Deserialize, Debug)]
struct CacheCurve {
    cache_setting: String,
    cache_bytes: u64,
    page_bytes: u64,
    knee_bytes: Option<u64>,
    points: Vec<Point>,
    io_timed: bool,
    notes: Vec<String>,
    scan_series: Vec<Scan>,
}

#[derive(serde::Deserialize, Debug, Clone)]
struct Scan {
    t_ms: f64,
    size_bytes: u64,
    rows: u64,
    pages_hit: u64,
    pages_read: u64,
    io_read_ms: Option<f64>,
    read_pages_per_io_ms: Option<f64>,
    duration_ms: f64,
}

#[derive(serde::Deserialize, Debug, Clone)]
struct Phase {
    name: String,
    start_ms: f64,
    end_ms: f64,
    samples: u64,
    waits: Vec<measure::server::WaitTotal>,
}

#[derive(serde::Deserialize, Debug, Clone)]
struct Point {
    size_bytes: u64,
    target_bytes: u64,
    rows: u64,
    hit_ratio: f64,
    rows_per_s: f64,
    pages_per_ms: f64,
    scan_reads: u64,
    stat_hits: u64,
    stat_reads: u64,
    point_reads: u64,
    point_hit_ratio: f64,
    scan_hits: u64,
    io_read_ms: Option<f64>,
    read_pages_per_io_ms: Option<f64>,
    phases: Vec<Phase>,
}

fn curve(r: &RunResult) -> CacheCurve {
    let v = r
        .sections
        .get("cache_curve")
        .expect("a cache_curve section");
    serde_json::from_value(v.clone()).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Every scan a point in time, a size's scans adding up to what it reports and to what the
/// table's statistics counted (PostgreSQL), `scans` of them per size.
fn scans_agree(c: &CacheCurve, scans: usize) {
    assert_eq!(c.scan_series.len(), scans * c.points.len());
    for w in c.scan_series.windows(2) {
        // In time order, one after the other ended (EXPLAIN's time is inside the client's).
        assert!(w[1].t_ms >= w[0].t_ms + w[0].duration_ms, "{w:?}");
        assert!(w[1].size_bytes >= w[0].size_bytes, "{w:?}");
    }
    for p in &c.points {
        let of: Vec<&Scan> = (c.scan_series.iter())
            .filter(|s| s.size_bytes == p.size_bytes)
            .collect();
        assert_eq!(of.len(), scans, "{p:?}");
        let n = scans as u64;
        let read: u64 = of.iter().map(|s| s.pages_read).sum();
        let hit: u64 = of.iter().map(|s| s.pages_hit).sum();
        assert_eq!(read / n, p.scan_reads, "{p:?}");
        assert_eq!(hit / n, p.scan_hits, "{p:?}");
        // The server's own count of the table's blocks over the scans is EXPLAIN's.
        assert_eq!(read, p.stat_reads, "{p:?} {of:?}");
        assert_eq!(hit, p.stat_hits, "{p:?} {of:?}");
        for s in &of {
            // A row per page: a sequential scan touches each page once, hit or read.
            assert_eq!(s.pages_hit + s.pages_read, p.rows, "{s:?}");
            assert_eq!(s.rows, p.rows, "{s:?}");
        }
        // Phases in order, inside the curve, and the scans inside theirs.
        let names: Vec<&str> = p.phases.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["growing", "scans", "point reads"], "{p:?}");
        for w in p.phases.windows(2) {
            assert!(
                w[0].start_ms <= w[0].end_ms && w[0].end_ms <= w[1].start_ms,
                "{p:?}"
            );
        }
        let scans_phase = &p.phases[1];
        assert!(of
            .iter()
            .all(|s| s.t_ms >= scans_phase.start_ms && s.t_ms <= scans_phase.end_ms));
    }
}

/// The scans were timed: each has its read time, pages per ms of I/O is reads over it, and
/// each size's figures are its scans'.
fn io_timed(c: &CacheCurve) {
    assert!(c.io_timed && c.notes.is_empty(), "{:?}", c.notes);
    for s in &c.scan_series {
        let t = s.io_read_ms.expect("every scan timed");
        assert!(t >= 0.0, "{s:?}");
        if s.pages_read >= 100 {
            assert!(t > 0.0, "a hundred reads take time: {s:?}");
        }
        match s.read_pages_per_io_ms {
            Some(r) => assert!(close(r, s.pages_read as f64 / t), "{s:?}"),
            None => assert!(s.pages_read == 0 || t == 0.0, "{s:?}"),
        }
    }
    for p in &c.points {
        let of: Vec<&Scan> = (c.scan_series.iter())
            .filter(|s| s.size_bytes == p.size_bytes)
            .collect();
        let io: f64 = of.iter().filter_map(|s| s.io_read_ms).sum();
        let read: u64 = of.iter().map(|s| s.pages_read).sum();
        assert!(close(p.io_read_ms.unwrap(), io / of.len() as f64), "{p:?}");
        match p.read_pages_per_io_ms {
            Some(r) => assert!(close(r, read as f64 / io), "{p:?}"),
            None => assert!(read == 0 || io == 0.0, "{p:?}"),
        }
    }
}

/// Each phase holds the observer's activity samples inside it and their wait events.
fn phases_hold_the_samples(c: &CacheCurve, r: &RunResult) {
    let m = r.server_metrics.as_ref().expect("the curve was observed");
    let mut waits = 0;
    for x in c.points.iter().flat_map(|p| &p.phases) {
        let inside: Vec<_> = (m.activity.iter())
            .filter(|s| s.t_ms as f64 >= x.start_ms && s.t_ms as f64 <= x.end_ms)
            .collect();
        assert_eq!(x.samples, inside.len() as u64, "{x:?}");
        let active: u64 = inside.iter().map(|s| u64::from(s.active)).sum();
        assert_eq!(
            x.waits.iter().map(|w| w.samples).sum::<u64>(),
            active,
            "{x:?}"
        );
        waits += x.waits.len();
    }
    // A second of point reads per size by busy clients: some sample saw them.
    assert!(waits > 0, "no wait event in any phase");
    assert!(!m.waits.is_empty(), "wait events over the curve");
}

fn validates(path: &std::path::Path) {
    let schema: serde_json::Value = serde_json::from_str(report::SCHEMA).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn the_curve_bends_at_the_cache_size() {
    let pg = PG.get();
    let target = database(pg, "curve");
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("c.json"), dir.path().join("c.html"));
    let mut args = vec!["run".to_string(), "cache-curve".into()];
    args.extend(target);
    args.extend(["-c", "2", "-T", "1", "--random-seed", "7"].map(String::from));
    args.extend(["--json".into(), json.display().to_string()]);
    args.extend(["--html".into(), html.display().to_string()]);
    let run = stampede(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    validates(&json);
    let r = read(&json);
    let c = curve(&r);
    assert_eq!(c.cache_setting, "shared_buffers");
    assert_eq!(c.cache_bytes, 16 << 20, "the server's setting, read back");
    // Chosen from the cache: an eighth of it to four times it.
    assert_eq!(c.points.len(), 10);
    assert_eq!(c.points[0].target_bytes, 2 << 20);
    assert_eq!(c.points[9].target_bytes, 64 << 20);
    for p in &c.points {
        // A row per page (fillfactor 10), grown to the size asked.
        assert!(p.size_bytes >= p.target_bytes, "{p:?}");
        assert_eq!(p.rows, p.size_bytes / 8192, "{p:?}");
        assert!(
            p.rows_per_s > 0.0 && p.pages_per_ms > 0.0 && p.point_reads > 0,
            "{p:?}"
        );
        let ratio = p.size_bytes as f64 / c.cache_bytes as f64;
        if ratio <= 0.5 {
            // Well below the cache: every page of every scan, and every point read, a hit.
            assert!(p.hit_ratio >= 0.999, "{p:?}");
            assert_eq!(p.scan_reads, 0, "{p:?}");
            assert!(p.point_hit_ratio >= 0.99, "{p:?}");
            // pg_statio agrees: the scans' hits, no reads.
            assert!(p.stat_hits >= 3 * p.rows && p.stat_reads == 0, "{p:?}");
        }
        if ratio >= 2.0 {
            // Twice the cache and more: at most about half the pages can be there.
            assert!(p.hit_ratio < 0.75, "{p:?}");
            assert!(p.scan_reads > p.rows / 4, "{p:?}");
            assert!(p.stat_reads > 0, "{p:?}");
            assert!(p.point_hit_ratio < 0.9, "{p:?}");
        }
    }
    // The knee within one step of the cache size.
    let knee = c.knee_bytes.expect("a knee");
    let at = |b: u64| c.points.iter().position(|p| p.size_bytes == b).unwrap();
    let cache_step = c
        .points
        .iter()
        .position(|p| p.target_bytes == c.cache_bytes)
        .unwrap();
    assert!(
        at(knee).abs_diff(cache_step) <= 1,
        "knee {knee} at step {}, cache at step {cache_step}",
        at(knee)
    );
    assert!(r
        .checks
        .iter()
        .all(|ch| ch.status == report::CheckStatus::Passed));
    assert!(run.stdout.contains("knee: "), "{}", run.stdout);
    scans_agree(&c, 3);
    io_timed(&c);
    phases_hold_the_samples(&c, &r);
    // Twice the cache and more: the scans read from storage, at a measured rate.
    for p in c
        .points
        .iter()
        .filter(|p| p.size_bytes >= 2 * c.cache_bytes)
    {
        assert!(p.read_pages_per_io_ms.is_some_and(|r| r > 0.0), "{p:?}");
    }
    assert!(
        run.stdout
            .contains("I/O: track_io_timing on, 30 scans timed"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("waits during the curve"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("PASSED   row counts"), "{}", run.stdout);

    // The HTML has the charts, with the cache marked; `stampede report` draws them again.
    let page = std::fs::read_to_string(&html).unwrap();
    for id in ["chart-cache-scan", "chart-cache-hits", "chart-cache-point"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("shared_buffers 16 MB"));
    for id in [
        "chart-cache-io-rate",
        "chart-cache-scan-pages",
        "chart-cache-scan-times",
        "chart-cache-scan-io-rate",
        "chart-load",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    let again = dir.path().join("again.html");
    let rep = stampede(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    assert!(std::fs::read_to_string(&again)
        .unwrap()
        .contains("id=\"chart-cache-hits\""));

    // The table was the run's own: gone afterwards.
    assert_eq!(
        psql(
            pg,
            "curve",
            "SELECT to_regclass('stampede_cache_curve') IS NULL"
        ),
        "t"
    );
}

#[test]
fn a_role_that_may_not_set_track_io_timing_gets_a_note_with_the_fix() {
    let pg = PG.get();
    psql(pg, "postgres", "DROP DATABASE IF EXISTS plain");
    psql(
        pg,
        "postgres",
        "DROP ROLE IF EXISTS curve_user; CREATE ROLE curve_user LOGIN NOSUPERUSER",
    );
    psql(pg, "postgres", "CREATE DATABASE plain OWNER curve_user");
    // The test servers run with track_io_timing on (pg::embedded's settings), as a server
    // whose administrator never turned it on would not: off for this database.
    psql(
        pg,
        "postgres",
        "ALTER DATABASE plain SET track_io_timing = off",
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let socket = pg.socket_dir().display().to_string();
    let port = pg.port().to_string();
    let run = stampede(&[
        "run",
        "cache-curve",
        "-h",
        &socket,
        "-p",
        &port,
        "-U",
        "curve_user",
        "-d",
        "plain",
        "--sizes",
        "1MB,40MB",
        "--scans",
        "2",
        "-T",
        "1",
        "-c",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    validates(&json);
    let r = read(&json);
    let c = curve(&r);
    assert!(!c.io_timed);
    let note = c.notes.join(" ");
    for says in [
        "track_io_timing",
        "curve_user may not set it",
        "ALTER SYSTEM SET track_io_timing = on",
        "GRANT SET ON PARAMETER track_io_timing TO curve_user",
    ] {
        assert!(note.contains(says), "{says}: {note}");
    }
    assert!(
        run.stderr.contains("curve_user may not set it"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("note: the scans' I/O time"),
        "{}",
        run.stdout
    );
    // Not timed is no time: no number stands for it, and the rest is measured as before.
    assert!(c
        .scan_series
        .iter()
        .all(|s| s.io_read_ms.is_none() && s.read_pages_per_io_ms.is_none()));
    assert!(c
        .points
        .iter()
        .all(|p| p.io_read_ms.is_none() && p.read_pages_per_io_ms.is_none()));
    scans_agree(&c, 2);
    assert!(c.points[1].scan_reads > 0, "{:?}", c.points[1]);
}

#[test]
fn a_table_stampede_did_not_create_is_refused_and_left_alone() {
    let pg = PG.get();
    let target = database(pg, "theirs");
    psql(
        pg,
        "theirs",
        "CREATE TABLE stampede_cache_curve (id int); INSERT INTO stampede_cache_curve VALUES (42)",
    );
    let mut args = vec!["run".to_string(), "cache-curve".into()];
    args.extend(target);
    args.extend(["--sizes", "1MB", "-T", "1"].map(String::from));
    let run = stampede(&args);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("stampede did not create it"),
        "{}",
        run.stderr
    );
    assert_eq!(
        psql(pg, "theirs", "SELECT id FROM stampede_cache_curve"),
        "42"
    );
}

#[test]
fn the_embedded_server_starts_with_a_small_cache() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("e.json");
    let run = stampede(&[
        "run",
        "cache-curve",
        "--sizes",
        "2MB,40MB",
        "-T",
        "1",
        "-c",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("shared_buffers=16MB"), "{}", run.stderr);
    let r = read(&json);
    let c = curve(&r);
    assert_eq!(c.cache_bytes, 16 << 20);
    assert_eq!(c.points.len(), 2);
    assert!(c.points[0].hit_ratio >= 0.999, "{:?}", c.points[0]);
    assert!(c.points[1].hit_ratio < 0.75, "{:?}", c.points[1]);
    assert_eq!(c.knee_bytes, Some(c.points[1].size_bytes));
}

#[test]
fn bad_sizes_are_refused_before_anything_starts() {
    for (args, says) in [
        (
            &["run", "cache-curve", "--sizes", "8MB,4MB"][..],
            "smallest first",
        ),
        (&["run", "cache-curve", "--sizes", "lots"][..], "not a size"),
        (&["run", "cache-curve", "--scans", "0"][..], "--scans"),
        (
            &["run", "select-only", "--sizes", "8MB"][..],
            "--sizes only applies to cache-curve",
        ),
    ] {
        let run = stampede(args);
        assert_eq!(run.code, 64, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

#[test]
fn on_mariadb_the_buffer_pool_counters_show_the_knee() {
    let m = testkit::MariaDb::start(&["--innodb-buffer-pool-size=16M"]);
    m.fresh_database("curve");
    let pool: u64 = m
        .sql("SELECT @@innodb_buffer_pool_size")
        .trim()
        .parse()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let run = stampede(&[
        "run",
        "cache-curve",
        "-d",
        &m.socket_url("root", None, "curve"),
        "--sizes",
        "1MB,2MB,48MB",
        "-T",
        "1",
        "-c",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let c = curve(&read(&json));
    assert_eq!(c.cache_setting, "innodb_buffer_pool_size");
    assert_eq!(c.cache_bytes, pool);
    assert_eq!(c.page_bytes, 16384);
    // Far below the pool: every page a hit; three times it: most of them read. (InnoDB's
    // scans fall out of the pool well before its size, at about the old sublist's 3/8 of it:
    // the knee is somewhere up to the last size, not necessarily at the pool's size.)
    assert!(c.points[0].hit_ratio >= 0.99, "{:?}", c.points[0]);
    assert!(c.points[0].point_hit_ratio >= 0.99, "{:?}", c.points[0]);
    assert!(c.points[2].hit_ratio < 0.5, "{:?}", c.points[2]);
    assert!(c.points[2].scan_reads > 0, "{:?}", c.points[2]);
    assert!(c.points[2].point_hit_ratio < 0.9, "{:?}", c.points[2]);
    let knee = c.knee_bytes.expect("a knee");
    assert!(knee > c.points[0].size_bytes, "{knee}");
    // The table is gone afterwards.
    assert_eq!(
        m.sql(
            "SELECT COUNT(*) FROM information_schema.tables \
             WHERE table_schema = 'curve' AND table_name = 'stampede_cache_curve'"
        )
        .trim(),
        "0"
    );
}
