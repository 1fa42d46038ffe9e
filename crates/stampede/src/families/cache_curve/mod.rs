//! `stampede run cache-curve`: seed 003's experiment. One table, `stampede_cache_curve`, grows
//! from a small fraction of the server's cache (`shared_buffers`, `innodb_buffer_pool_size`) to
//! several times it; at each size it is warmed, scanned, and read by primary key, and the
//! throughput and hit ratio of both are recorded. The knee, where the scans stop finding their
//! pages in the cache, is located against the cache size (`section::CacheCurve`).
//!
//! ## How the cache is filled, and why by inserts
//! The table grows by `INSERT ... SELECT` (seed 003's way): each new page is made in the
//! server's buffer pool, so the cache holds the table as a working set gets there, and once the
//! table is larger than the cache it holds the pages written last. Then one scan, unmeasured,
//! warms what inserting left (it sets hint bits, which would otherwise make the first measured
//! scan write). A scan alone cannot fill the cache on PostgreSQL: a sequential scan of a table
//! larger than a quarter of `shared_buffers` reads through a 256 kB ring of buffers
//! (`GetAccessStrategy(BAS_BULKREAD)`), so the curve would measure the ring rather than the
//! cache. `pg_prewarm` would fill it regardless, but needs the contrib extension in the target
//! database, and it reads a table into the cache as no workload does. InnoDB's scans go through
//! its LRU's old sublist the same way; growing by inserts treats both servers alike.
//!
//! ## What is measured at each size
//! - scans (`--scans`, 3): rows/s, pages/ms, and each scan's buffer hits and reads, from
//!   `EXPLAIN (ANALYZE, BUFFERS)` on PostgreSQL, and the table's `pg_statio_user_tables` deltas
//!   over all of them (`sql` says how, and InnoDB's counterparts);
//! - point reads by primary key, uniformly over the rows: a closed loop of `-c` clients (4) for
//!   `-T` seconds (1) per size, each on a session of its own running a prepared `SELECT` as fast
//!   as the server answers. A direct loop, not the engine: the engine measures latency per
//!   transaction type over a fixed run, while this needs only counts, many short runs, and the
//!   buffer counters around each. Their hit ratio is the table's and index's statistics delta.
//!
//! Each scan is also kept as a point in time with its storage read time (`track_io_timing`,
//! set by the scanning session where the role may: `sql::configure`), so the pages read per ms
//! of I/O show per scan and per size (`timeline`).
//!
//! ## Watched like a run
//! The observer (`observe::Sampler`, as `run::measure` starts it for the other families, and
//! off with `--no-observe`) watches the curve from its start: the wait events and top SQL over
//! the whole curve, the host when the server is local, all in the result's `server_metrics`;
//! its window opens at the curve's start, the instant the scans' times count from, so each
//! size's phases (growing, scans, point reads) get the wait events sampled inside them. It
//! finishes after the scanning session closed (it waits for client sessions to go).
//!
//! The sizes run smallest first (the table only grows); Ctrl-C stops after the size being
//! measured, keeping what was measured. The table is dropped at the end, also after an error.

pub(crate) mod options;
pub(crate) mod plan;
pub(crate) mod section;

mod sql;
mod timeline;

use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use report::{Check, CheckStatus, RunResult};
use section::{CacheCurve, CachePoint};
use serde::Deserialize as _;
use sut::{Dialect, Session};
use timeline::{Phase, ScanPoint};

use crate::choices::Outputs;
use crate::console::{self, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNTRUSTED};
use crate::environment::{self, ServerInfo};
use crate::runtime;
use crate::targeting::TargetArgs;
use crate::{interrupt, targeting};
use plan::{sizes_for, CacheCurveJob};

/// Carry out a cache curve: the process's exit code.
pub(crate) fn execute(target_args: TargetArgs, job: CacheCurveJob, out: Outputs) -> Result<i32> {
    let rt = runtime::setup()?;
    let target = targeting::open(&target_args, false)?;
    let ran = rt.block_on(run(&target, &job, &out));
    let closed = targeting::close(target, target_args.keep_server);
    let code = ran?;
    closed?;
    Ok(code)
}

/// What the sizes measured, and the checks' findings.
struct Measured {
    points: Vec<CachePoint>,
    /// Every measured scan, in order.
    scans: Vec<ScanPoint>,
    /// Sizes whose scans did not count the rows inserted: (size, inserted, counted).
    miscounted: Vec<(u64, u64, u64)>,
    /// Point reads that found no row.
    missed_reads: u64,
    interrupted: bool,
}

async fn run(target: &targeting::Target, job: &CacheCurveJob, out: &Outputs) -> Result<i32> {
    let conn = &target.conn;
    let mut s = Session::connect(conn)
        .await
        .context("connecting to the target")?;
    let server = environment::server_info(&mut s).await?;
    let cache = sql::cache(&mut s).await?;
    let sizes = sizes_for(job, cache.bytes, cache.page_bytes);
    println!(
        "stampede {} (server {}): cache-curve, {} sizes from {} to {}; {} = {}; {} scans and \
         {} s of point reads by {} clients per size",
        env!("CARGO_PKG_VERSION"),
        environment::short_version(&server.version),
        sizes.len(),
        section::size_text(sizes[0]),
        section::size_text(*sizes.last().unwrap_or(&0)),
        cache.setting,
        section::size_text(cache.bytes),
        job.scans,
        job.point_read.as_secs_f64(),
        job.clients,
    );
    if conn.dialect() == Dialect::Postgres && server.version_num < 150000 {
        console::warning(
            "PostgreSQL before 15 cannot flush a session's statistics on demand \
             (pg_stat_force_next_flush): the statistics columns are 0 and the point reads' hit \
             ratio is not measured (shown as 100%); the scans' figures come from EXPLAIN and hold",
        );
    }
    let io_timing = sql::configure(&mut s).await?;
    if let (true, Some(n)) = (conn.dialect() == Dialect::Postgres, &io_timing.note) {
        console::warning(n);
    }
    sql::create(&mut s).await?;
    let observer = match out.observe {
        true => super::start_observer(conn),
        false => None,
    };
    let started = SystemTime::now();
    let t0 = Instant::now();
    if let Some(h) = &observer {
        h.mark_start(t0);
    }
    let measured = measure(&mut s, conn, job, &server, &sizes, cache.page_bytes, t0).await;
    // The table is stampede's own (created above): dropped whatever happened.
    let dropped = sql::drop_table(&mut s).await;
    s.close().await;
    // After the session closed: the observer waits for the clients' sessions to go.
    let server_metrics = observer.map(|h| h.finish());
    let mut measured = measured?;
    dropped?;
    if let Some(m) = &server_metrics {
        timeline::fill_waits(&mut measured.points, m);
    }

    let knee = CacheCurve::locate_knee(&measured.points);
    let curve = CacheCurve {
        cache_setting: cache.setting.into(),
        cache_bytes: cache.bytes,
        knee_bytes: knee,
        page_bytes: cache.page_bytes,
        scans: job.scans,
        point_read_clients: job.clients,
        point_read_s: job.point_read.as_secs_f64(),
        method: method(conn.dialect()),
        points: measured.points.clone(),
        io_timed: io_timing.on,
        notes: io_timing.note.into_iter().collect(),
        scan_series: measured.scans.clone(),
    };
    let checks = checks(&measured);
    let mut result = result(target, &server, job, curve, checks, started, t0.elapsed());
    result.server_metrics = server_metrics;
    result_out(&result, out, measured.interrupted)
}

fn method(d: Dialect) -> String {
    match d {
        Dialect::Postgres => {
            "The table (fillfactor 10: a row per page) grew by INSERT ... SELECT, \
             its pages made in shared_buffers; one unmeasured scan warmed it; scans are EXPLAIN \
             (ANALYZE, BUFFERS) with parallel workers off, hits and reads its shared hit and \
             read blocks; point reads' hit ratio from pg_statio_user_tables."
                .into()
        }
        Dialect::MySql => "The table grew by multi-row INSERTs, its pages made in the buffer \
             pool; one unmeasured scan warmed it; scans are SELECT COUNT(*), SUM(LENGTH(filler)) \
             timed by the client, hits and reads the deltas of Innodb_buffer_pool_read_requests \
             and Innodb_buffer_pool_reads + _read_ahead (global counters)."
            .into(),
    }
}

async fn measure(
    s: &mut Session,
    conn: &sut::Target,
    job: &CacheCurveJob,
    server: &ServerInfo,
    sizes: &[u64],
    page_bytes: u64,
    t0: Instant,
) -> Result<Measured> {
    let since = |at: Instant| at.duration_since(t0).as_secs_f64() * 1000.0;
    let mut m = Measured {
        points: Vec::new(),
        scans: Vec::new(),
        miscounted: Vec::new(),
        missed_reads: 0,
        interrupted: false,
    };
    let mut rows = 0u64;
    let mut seed = job.seed;
    for &target_bytes in sizes {
        if interrupt::requested() {
            m.interrupted = true;
            break;
        }
        let built = Instant::now();
        rows = grow(s, rows, target_bytes).await?;
        let size_bytes = sql::size(s).await?;
        // Warm-up, unmeasured (module notes).
        sql::scan(s).await?;
        let growing = Phase::new("growing", since(built), since(Instant::now()));
        let before = sql::counters(s, server.version_num).await?;
        let mut point = CachePoint {
            size_bytes,
            target_bytes,
            rows,
            ..Default::default()
        };
        let (mut hits, mut reads, mut ms, mut counted) = (0u64, 0u64, 0f64, 0u64);
        let first_scan = m.scans.len();
        let scans_start = Instant::now();
        for _ in 0..job.scans {
            let at = Instant::now();
            let scan = sql::scan(s).await?;
            m.scans.push(ScanPoint {
                t_ms: since(at),
                size_bytes,
                rows: scan.rows,
                pages_hit: scan.buffers.hits,
                pages_read: scan.buffers.reads,
                io_read_ms: scan.io_read_ms,
                read_pages_per_io_ms: timeline::per_io_ms(scan.buffers.reads, scan.io_read_ms),
                duration_ms: scan.ms,
            });
            hits += scan.buffers.hits;
            reads += scan.buffers.reads;
            ms += scan.ms;
            counted = scan.rows;
            if scan.rows != rows {
                m.miscounted.push((size_bytes, rows, scan.rows));
            }
        }
        let scans_phase = Phase::new("scans", since(scans_start), since(Instant::now()));
        (point.io_read_ms, point.read_pages_per_io_ms) = timeline::size_io(&m.scans[first_scan..]);
        let after = sql::counters(s, server.version_num).await?;
        let n = u64::from(job.scans);
        let scan_buffers = sql::Counters { hits, reads };
        point.scan_hits = hits / n;
        point.scan_reads = reads / n;
        // InnoDB's read requests are not pages (a scan asks for a page again as its cursor
        // moves on): its pages per scan are the table's.
        point.pages = match conn.dialect() {
            Dialect::Postgres => (hits + reads) / n,
            Dialect::MySql => size_bytes / page_bytes.max(1),
        };
        point.hit_ratio = scan_buffers.ratio();
        if ms > 0.0 {
            point.rows_per_s = (counted * n) as f64 / (ms / 1000.0);
            point.pages_per_ms = (point.pages * n) as f64 / ms;
        }
        let stat = after.since(before);
        point.stat_hits = stat.hits;
        point.stat_reads = stat.reads;

        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let reads_start = Instant::now();
        let reads = point_reads(conn, job, rows, seed).await?;
        point.phases = vec![
            growing,
            scans_phase,
            Phase::new("point reads", since(reads_start), since(Instant::now())),
        ];
        let after_reads = sql::counters(s, server.version_num).await?;
        let point_buffers = after_reads.since(after);
        point.point_reads = reads.done;
        point.point_reads_per_s = reads.done as f64 / reads.secs.max(1e-9);
        point.point_hit_ratio = point_buffers.ratio();
        m.missed_reads += reads.missed;
        let io = match (point.io_read_ms, point.read_pages_per_io_ms) {
            (Some(t), Some(r)) => format!(", {t:.3} ms of I/O per scan, {r:.1} pages/ms of I/O"),
            (Some(t), None) => format!(", {t:.3} ms of I/O per scan"),
            _ => String::new(),
        };
        eprintln!(
            "size {} ({} rows, built in {:.1} s): scans {:.2}% hits, {:.0} pages/ms{io}; point \
             reads {:.0}/s, {:.2}% hits",
            section::size_text(size_bytes),
            rows,
            built.elapsed().as_secs_f64(),
            100.0 * point.hit_ratio,
            point.pages_per_ms,
            point.point_reads_per_s,
            100.0 * point.point_hit_ratio
        );
        m.points.push(point);
    }
    Ok(m)
}

/// Insert rows until the table is at least `target_bytes`: from the bytes per row seen so far
/// (a page per row on PostgreSQL, about 1.1 kB on InnoDB until the table says), in statements
/// of at most 4,096 rows, checking the size after each. Returns the rows the table holds.
async fn grow(s: &mut Session, mut rows: u64, target_bytes: u64) -> Result<u64> {
    loop {
        let size = sql::size(s).await?;
        if size >= target_bytes {
            return Ok(rows);
        }
        let per_row = match (rows, s.dialect()) {
            (0, Dialect::Postgres) => 8192,
            (0, Dialect::MySql) => 1100,
            (r, _) => (size / r).max(64),
        };
        let add = (target_bytes - size).div_ceil(per_row).clamp(1, 4096);
        sql::insert(s, rows + 1, rows + add)
            .await
            .with_context(|| format!("growing {} to {}", sql::TABLE, target_bytes))?;
        rows += add;
    }
}

struct PointReads {
    done: u64,
    missed: u64,
    secs: f64,
}

/// `job.clients` sessions reading random rows by primary key for `job.point_read` (module
/// notes); each flushes its statistics before it closes.
async fn point_reads(
    conn: &sut::Target,
    job: &CacheCurveJob,
    rows: u64,
    seed: u64,
) -> Result<PointReads> {
    let mut sessions = Vec::new();
    for _ in 0..job.clients {
        sessions.push(Session::connect(conn).await?);
    }
    let start = Instant::now();
    let deadline = start + job.point_read;
    let tasks: Vec<_> = (sessions.into_iter().enumerate())
        .map(|(i, mut s)| {
            let mut x = seed ^ (i as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            tokio::spawn(async move {
                let stmt = s.register(&sql::point_read_sql(s.dialect()), sut::QueryMode::Prepared);
                let (mut done, mut missed) = (0u64, 0u64);
                while Instant::now() < deadline {
                    let id = 1 + splitmix(&mut x) % rows.max(1);
                    let r = s.execute(stmt, &[sut::Value::Int(id as i64)]).await?;
                    done += 1;
                    missed += u64::from(r.rows != 1);
                }
                sql::flush(&mut s).await?;
                s.close().await;
                anyhow::Ok((done, missed))
            })
        })
        .collect();
    let mut r = PointReads {
        done: 0,
        missed: 0,
        secs: 0.0,
    };
    for t in tasks {
        let (done, missed) = t.await.context("a point-read client")??;
        r.done += done;
        r.missed += missed;
    }
    r.secs = start.elapsed().as_secs_f64();
    Ok(r)
}

/// SplitMix64 (Steele, Lea, Flood 2014): uniform ids, seeded from `--random-seed`.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn checks(m: &Measured) -> Vec<Check> {
    let sizes = m.points.len();
    let rows = match m.miscounted.first() {
        None => Check {
            name: "row counts".into(),
            status: CheckStatus::Passed,
            detail: format!(
                "{sizes} sizes: every scan counted the rows inserted ({})",
                (m.points.iter().map(|p| p.rows.to_string()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        Some((size, inserted, counted)) => Check {
            name: "row counts".into(),
            status: CheckStatus::Failed,
            detail: format!(
                "at {}: {inserted} rows inserted, a scan counted {counted} ({} scans miscounted)",
                section::size_text(*size),
                m.miscounted.len()
            ),
        },
    };
    let done: u64 = m.points.iter().map(|p| p.point_reads).sum();
    let reads = Check {
        name: "point reads".into(),
        status: if m.missed_reads == 0 && done > 0 {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        detail: format!(
            "{} of {done} reads by primary key found their row",
            done - m.missed_reads
        ),
    };
    vec![rows, reads]
}

fn result(
    target: &targeting::Target,
    server: &ServerInfo,
    job: &CacheCurveJob,
    curve: CacheCurve,
    checks: Vec<Check>,
    started: SystemTime,
    took: Duration,
) -> RunResult {
    RunResult {
        command_line: environment::command_line(),
        started_at: report::format_rfc3339_utc(started),
        measured_duration_s: took.as_secs_f64(),
        config: report::RunConfig {
            workload: "cache-curve".into(),
            clients: job.clients,
            threads: 1,
            duration_s: Some(job.point_read.as_secs().max(1)),
            query_mode: "prepared".into(),
            random_seed: job.seed,
            ..Default::default()
        },
        target: targeting::target_info(target),
        environment: environment::environment_info(server, environment::client_info()),
        connections: report::ConnectionStats {
            clients: job.clients,
            ..Default::default()
        },
        checks,
        sections: report::section::keyed(&curve)
            .map(|(k, v)| (k.to_string(), v))
            .into_iter()
            .collect(),
        ..Default::default()
    }
}

/// The table, the checks, the files, and the exit code.
fn result_out(r: &RunResult, out: &Outputs, interrupted: bool) -> Result<i32> {
    let mut r = r.clone();
    r.interrupted = interrupted;
    if let Some(c) = (r
        .sections
        .get(<CacheCurve as report::section::Section>::KEY))
    .and_then(|v| CacheCurve::deserialize(v).ok())
    {
        print!("{}", section::render_cache_curve(&c));
    }
    if let Some(m) = &r.server_metrics {
        println!(
            "waits during the curve (average active sessions): {}",
            report::waits_words(m, 5)
        );
    }
    println!("checks:");
    for ch in &r.checks {
        println!("  {:<7}  {}: {}", ch.status.label(), ch.name, ch.detail);
    }
    let saved = out.files.save(&r, "result");
    let failed = !saved || r.checks.iter().any(|c| c.status.untrusted());
    Ok(if interrupted {
        EXIT_INTERRUPTED
    } else if failed {
        EXIT_UNTRUSTED
    } else {
        EXIT_OK
    })
}
