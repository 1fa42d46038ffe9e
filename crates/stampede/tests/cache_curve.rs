//! `stampede run cache-curve` against real servers: a PostgreSQL with a 16MB shared_buffers
//! shows every page a hit for tables well below the cache and a measured drop above it, the
//! knee within one size step of the cache; the JSON has the section and validates against the
//! schema; the HTML (at the end of the run and from `stampede report`) has the charts; the
//! table is the run's own (dropped after, and one it did not create is refused and left alone).
//! The embedded server starts with a small cache by itself; bad `--sizes` are refused before
//! anything starts.

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
}

fn curve(r: &RunResult) -> CacheCurve {
    let v = r
        .sections
        .get("cache_curve")
        .expect("a cache_curve section");
    serde_json::from_value(v.clone()).unwrap()
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
    assert!(run.stdout.contains("PASSED   row counts"), "{}", run.stdout);

    // The HTML has the charts, with the cache marked; `stampede report` draws them again.
    let page = std::fs::read_to_string(&html).unwrap();
    for id in ["chart-cache-scan", "chart-cache-hits", "chart-cache-point"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("shared_buffers 16 MB"));
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
