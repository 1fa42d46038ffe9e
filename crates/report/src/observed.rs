//! "Where the time went": the text section about the server, printed after the summary.
//!
//! Owns the layout of the server section of the text output, from [`ServerMetrics`] alone: the
//! database load by wait event (average active sessions, Performance Insights' measure), the
//! background sessions on a line of their own (a standby's walsender, autovacuum workers, the
//! server's threads: sampled like the load, never part of it), the top statements by execution time with the wait each spent most in, the server's counters over
//! the run, the machine, what observing cost, and what could not be observed and why. Must not
//! touch: I/O, clocks. Shared helpers here (short statement text, byte sizes, the InnoDB and
//! Galera figures) serve the HTML report too.
//!
//! The counters' lines are the observed server's own: PostgreSQL's (rollbacks, deadlocks, temp
//! files, buffer hits, WAL, checkpoints) or, for MySQL and MariaDB, InnoDB's (rollbacks, row lock
//! waits, buffer pool hits, redo log, history list length, threads) with Galera's flow control
//! and conflicts node by node and the waits by time `performance_schema` measured. A server's
//! lines never appear with zeros for the other's counters.

use std::fmt::Write as _;

use measure::server::{max_in, DeviceSample, NodeMetrics, StatementDelta};
use measure::ServerMetrics;

/// Wait events shown in the text section.
const TOP_WAITS: usize = 6;
/// Statements shown in the text section.
const TOP_STATEMENTS: usize = 5;

/// A statement on one line: whitespace collapsed, cut at `max` characters with `...`.
pub fn one_line(sql: &str, max: usize) -> String {
    let s: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= max {
        s
    } else {
        let cut: String = s.chars().take(max.saturating_sub(3)).collect();
        format!("{cut}...")
    }
}

/// The top `top` wait events in words, with their average active sessions (`CPU 0.80,
/// IO:DataFileRead 0.02`), or `none sampled`: the one-line account of a load or a curve.
pub fn waits_words(m: &ServerMetrics, top: usize) -> String {
    let waits: Vec<String> = (m.waits.iter().take(top))
        .map(|w| format!("{} {:.2}", w.event, w.aas))
        .collect();
    if waits.is_empty() {
        "none sampled".into()
    } else {
        waits.join(", ")
    }
}

/// Bytes with a binary unit: `512 B`, `1.5 KiB`, `12.3 MiB`.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[0])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The wait a statement's sessions were seen in most, if the waits could be joined.
pub fn top_wait_of(m: &ServerMetrics, s: &StatementDelta) -> Option<String> {
    let id = s.query_id?;
    m.waits_of(id).first().map(|w| w.event.clone())
}

/// Hit ratio in percent, `None` when nothing was read.
pub fn hit_pct(hit: f64, read: f64) -> Option<f64> {
    (hit + read > 0.0).then(|| 100.0 * hit / (hit + read))
}

/// InnoDB's buffer pool hit ratio over the window: read requests (logical reads) that did not
/// have to read the page from disk (`Innodb_buffer_pool_reads`).
pub fn innodb_hit_pct(m: &ServerMetrics) -> Option<f64> {
    let requests = m.mysql_delta("Innodb_buffer_pool_read_requests")?;
    let reads = m.mysql_delta("Innodb_buffer_pool_reads").unwrap_or(0.0);
    hit_pct((requests - reads).max(0.0), reads)
}

/// One Galera node over the window.
pub struct GaleraNode {
    /// Time replication was paused by flow control (`wsrep_flow_control_paused_ns`), ms.
    pub paused_ms: f64,
    /// That as a share of the window, %.
    pub paused_pct: f64,
    /// Longest receive and send queues sampled.
    pub recv_queue_max: f64,
    pub send_queue_max: f64,
    pub cert_failures: f64,
    pub bf_aborts: f64,
}

pub fn galera_node(m: &ServerMetrics, n: &NodeMetrics) -> GaleraNode {
    let d = |k: &str| n.deltas.get(&format!("mysql.{k}")).copied().unwrap_or(0.0);
    let max = |k: &str| {
        max_in(
            &n.counters,
            &format!("mysql.{k}"),
            m.window_start_ms,
            m.window_end_ms,
        )
        .unwrap_or(0.0)
    };
    let window_ms = (m.window_end_ms - m.window_start_ms).max(1) as f64;
    let paused_ms = d("wsrep_flow_control_paused_ns") / 1e6;
    GaleraNode {
        paused_ms,
        paused_pct: 100.0 * paused_ms / window_ms,
        recv_queue_max: max("wsrep_local_recv_queue"),
        send_queue_max: max("wsrep_local_send_queue"),
        cert_failures: d("wsrep_local_cert_failures"),
        bf_aborts: d("wsrep_local_bf_aborts"),
    }
}

/// Machine averages over the window: (user, system, iowait, client, server, disk read/s,
/// disk write/s), `None` without OS samples.
pub struct MachineAverages {
    pub user: f64,
    pub system: f64,
    pub iowait: f64,
    pub client: f64,
    pub server: Option<f64>,
    pub read_bps: f64,
    pub write_bps: f64,
}

pub fn machine_averages(m: &ServerMetrics) -> Option<MachineAverages> {
    let v: Vec<_> = m.window_os().collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let avg =
        |f: &dyn Fn(&measure::server::OsSample) -> f64| v.iter().map(|s| f(s)).sum::<f64>() / n;
    let server: Vec<f64> = v.iter().filter_map(|s| s.server_cpu_pct).collect();
    Some(MachineAverages {
        user: avg(&|s| s.cpu_user_pct),
        system: avg(&|s| s.cpu_system_pct),
        iowait: avg(&|s| s.cpu_iowait_pct),
        client: avg(&|s| s.client_cpu_pct),
        server: (!server.is_empty()).then(|| server.iter().sum::<f64>() / server.len() as f64),
        read_bps: avg(&|s| s.disk_read_bytes_per_s),
        write_bps: avg(&|s| s.disk_write_bytes_per_s),
    })
}

/// One watched device over the window: operations per second, the mean latency of a read and
/// of a write weighted by the operations (a second with one slow read does not weigh as much as a
/// second with a thousand fast ones), mean queue depth and busy share.
pub struct DeviceAverages {
    pub device: String,
    pub holds: Option<String>,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_latency_ms: Option<f64>,
    pub write_latency_ms: Option<f64>,
    pub queue_depth: f64,
    pub util_pct: f64,
}

/// The devices that hold the server's files, averaged over the window, in the samples' order.
pub fn device_averages(m: &ServerMetrics) -> Vec<DeviceAverages> {
    let v: Vec<_> = m.window_os().collect();
    let mut out: Vec<DeviceAverages> = Vec::new();
    let names = v
        .iter()
        .flat_map(|s| &s.devices)
        .filter(|d| d.holds.is_some());
    for d0 in names {
        if out.iter().any(|o| o.device == d0.device) {
            continue;
        }
        let ds: Vec<_> = (v.iter())
            .filter_map(|s| s.devices.iter().find(|d| d.device == d0.device))
            .collect();
        let n = ds.len() as f64;
        let weighted = |lat: fn(&DeviceSample) -> Option<f64>, ops: fn(&DeviceSample) -> f64| {
            let w: f64 = ds.iter().filter(|d| lat(d).is_some()).map(|d| ops(d)).sum();
            (w > 0.0).then(|| {
                ds.iter()
                    .filter_map(|d| Some(lat(d)? * ops(d)))
                    .sum::<f64>()
                    / w
            })
        };
        out.push(DeviceAverages {
            device: d0.device.clone(),
            holds: d0.holds.clone(),
            reads_per_s: ds.iter().map(|d| d.reads_per_s).sum::<f64>() / n,
            writes_per_s: ds.iter().map(|d| d.writes_per_s).sum::<f64>() / n,
            read_latency_ms: weighted(|d| d.read_latency_ms, |d| d.reads_per_s),
            write_latency_ms: weighted(|d| d.write_latency_ms, |d| d.writes_per_s),
            queue_depth: ds.iter().map(|d| d.queue_depth).sum::<f64>() / n,
            util_pct: ds.iter().map(|d| d.util_pct).sum::<f64>() / n,
        });
    }
    out
}

/// The background sessions, apart from the load: each kind's average active sessions and the
/// wait it was seen in most, the first `top` kinds (`walsender 0.98 (Activity:WalSenderMain),
/// autovacuum worker 0.04 (CPU)`), the rest summed.
pub fn background_words(m: &ServerMetrics, top: usize) -> String {
    let mut words: Vec<String> = (m.background.iter().take(top))
        .map(|b| match b.waits.first() {
            Some(w) => format!("{} {:.2} ({})", b.kind, b.aas, w.event),
            None => format!("{} {:.2}", b.kind, b.aas),
        })
        .collect();
    if m.background.len() > top {
        let rest: f64 = m.background.iter().skip(top).map(|b| b.aas).sum();
        words.push(format!("{} others {rest:.2}", m.background.len() - top));
    }
    words.join(", ")
}

/// The section, every line ending in `\n`. Starts with a header line, no leading blank line.
pub fn render_server_summary(m: &ServerMetrics) -> String {
    let mut out = String::new();
    let o = &mut out;
    let window_s = (m.window_end_ms - m.window_start_ms).max(0) as f64 / 1000.0;
    let _ = writeln!(
        o,
        "where the time went (server sampled every {} ms over {:.1} s: {:.2} average active sessions):",
        m.sample_interval_ms,
        window_s,
        crate::observed_hosts::average_active(m)
    );

    let total_samples: u64 = m.waits.iter().map(|w| w.samples).sum();
    if m.waits.is_empty() {
        let _ = writeln!(o, "  database load: no active sessions were seen");
    } else {
        let _ = writeln!(
            o,
            "  database load by wait event (average active sessions):"
        );
        let max = m.waits.first().map_or(0.0, |w| w.aas);
        // PostgreSQL's events fit in 28 columns; MySQL's instrument paths are longer.
        let width = m
            .waits
            .iter()
            .take(TOP_WAITS)
            .map(|w| w.event.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(28, 48);
        for w in m.waits.iter().take(TOP_WAITS) {
            let share = 100.0 * w.samples as f64 / total_samples.max(1) as f64;
            let bar = if max > 0.0 {
                "#".repeat(((w.aas / max) * 20.0).round() as usize)
            } else {
                String::new()
            };
            let _ = writeln!(
                o,
                "    {:<width$} {:>7.2}  {:>5.1}%  {bar}",
                w.event, w.aas, share
            );
        }
        if m.waits.len() > TOP_WAITS {
            let rest: f64 = m.waits.iter().skip(TOP_WAITS).map(|w| w.aas).sum();
            let _ = writeln!(
                o,
                "    {:<width$} {:>7.2}",
                format!("({} others)", m.waits.len() - TOP_WAITS),
                rest
            );
        }
    }

    if !m.background.is_empty() {
        let _ = writeln!(
            o,
            "  background sessions, not in the load (average active sessions): {}",
            background_words(m, TOP_WAITS)
        );
    }

    if !m.statements.is_empty() {
        let all = m
            .statements_total
            .as_ref()
            .map_or(0.0, |t| t.total_exec_time_ms);
        // MySQL's digests have no buffer counts but the rows examined.
        let mysql = m.is_mysql();
        let _ = writeln!(o, "  top statements by total execution time:");
        let col = if mysql { 9 } else { 6 };
        let _ = writeln!(
            o,
            "    {:>10} {:>6} {:>9} {:>9} {:>9} {:>col$}  {:<20} statement",
            "total ms",
            "share",
            "calls",
            "mean ms",
            "rows",
            if mysql { "examined" } else { "hit %" },
            "top wait"
        );
        for s in m.statements.iter().take(TOP_STATEMENTS) {
            let share = if all > 0.0 {
                format!("{:.1}%", 100.0 * s.total_exec_time_ms / all)
            } else {
                "-".into()
            };
            let hit = if mysql {
                s.rows_examined.map_or("-".into(), |r| r.to_string())
            } else {
                hit_pct(s.shared_blks_hit as f64, s.shared_blks_read as f64)
                    .map_or("-".into(), |h| format!("{h:.1}"))
            };
            let _ = writeln!(
                o,
                "    {:>10.3} {:>6} {:>9} {:>9.3} {:>9} {:>col$}  {:<20} {}",
                s.total_exec_time_ms,
                share,
                s.calls,
                s.mean_exec_time_ms,
                s.rows,
                hit,
                top_wait_of(m, s).unwrap_or_else(|| "-".into()),
                one_line(&s.query, 60)
            );
        }
    }

    crate::observed_hosts::text(o, m);
    if m.is_mysql() {
        mysql_counters(o, m);
    } else {
        pg_counters(o, m);
    }
    machine_and_cost(o, m);
    out
}

/// MySQL's and MariaDB's counters over the window (see the module header).
fn mysql_counters(o: &mut String, m: &ServerMetrics) {
    if !m.wait_times.is_empty() {
        let _ = writeln!(
            o,
            "  waits by time (performance_schema, client sessions over the run):"
        );
        for w in m.wait_times.iter().take(TOP_WAITS) {
            let _ = writeln!(
                o,
                "    {:<40} {:>12.3} ms {:>10} waits",
                w.event, w.total_ms, w.count
            );
        }
    }
    let d = |k: &str| m.mysql_delta(k);
    // Commits are the commit check's (see pg_counters).
    if d("Com_rollback").is_some() {
        let mut parts = vec![format!("{:.0} rollbacks", d("Com_rollback").unwrap_or(0.0))];
        if let Some(x) = d("Innodb_deadlocks") {
            parts.push(format!("{x:.0} deadlocks"));
        }
        if let Some(w) = d("Innodb_row_lock_waits") {
            parts.push(format!(
                "{w:.0} row lock waits ({:.0} ms)",
                d("Innodb_row_lock_time").unwrap_or(0.0)
            ));
        }
        if let Some(h) = innodb_hit_pct(m) {
            parts.push(format!(
                "buffer pool hits {h:.2}% ({:.0} read requests, {:.0} from disk)",
                d("Innodb_buffer_pool_read_requests").unwrap_or(0.0),
                d("Innodb_buffer_pool_reads").unwrap_or(0.0)
            ));
        }
        let _ = writeln!(o, "  server: {}", parts.join(", "));
    }
    let mut redo = Vec::new();
    if let Some(b) = d("Innodb_os_log_written") {
        redo.push(format!(
            "redo log {} written in {:.0} writes, {:.0} waits for log buffer space",
            bytes(b),
            d("Innodb_log_writes").unwrap_or(0.0),
            d("Innodb_log_waits").unwrap_or(0.0)
        ));
    }
    if let Some(h) = m.counter_max("mysql.Innodb_history_list_length") {
        redo.push(format!("history list length up to {h:.0}"));
    }
    if !redo.is_empty() {
        let _ = writeln!(o, "  {}", redo.join("; "));
    }
    if let Some(r) = m.counter_max("mysql.Threads_running") {
        let _ = writeln!(
            o,
            "  threads: up to {r:.0} running, up to {:.0} connected",
            m.counter_max("mysql.Threads_connected").unwrap_or(0.0)
        );
    }
    let max_locks = m.window_samples().map(|s| s.lock_waits).max().unwrap_or(0);
    if max_locks > 0 {
        let _ = writeln!(
            o,
            "  row lock waits: up to {max_locks} transactions waiting at once (INNODB_TRX)"
        );
    }
    for n in &m.nodes {
        let g = galera_node(m, n);
        let _ = writeln!(
            o,
            "  galera {}: flow control paused {:.1} ms ({:.2}% of the run), receive queue up to \
             {:.0}, send queue up to {:.0}, {:.0} certification failures, {:.0} brute-force aborts",
            n.endpoint,
            g.paused_ms,
            g.paused_pct,
            g.recv_queue_max,
            g.send_queue_max,
            g.cert_failures,
            g.bf_aborts
        );
    }
}

/// PostgreSQL's counters over the window.
fn pg_counters(o: &mut String, m: &ServerMetrics) {
    let d = |k: &str| m.delta(k);
    // Commits are not repeated here: the commit count check gives the one number (the
    // server's delta over the run, reconciled with the clients' count), and a second count
    // over this slightly different window would only differ from it.
    if d("database.xact_commit").is_some() {
        let mut line = format!(
            "  server: {:.0} rollbacks, {:.0} deadlocks, {:.0} temp files ({})",
            d("database.xact_rollback").unwrap_or(0.0),
            d("database.deadlocks").unwrap_or(0.0),
            d("database.temp_files").unwrap_or(0.0),
            bytes(d("database.temp_bytes").unwrap_or(0.0)),
        );
        if let Some(h) = hit_pct(
            d("database.blks_hit").unwrap_or(0.0),
            d("database.blks_read").unwrap_or(0.0),
        ) {
            let _ = write!(line, ", buffer hits {h:.2}%");
        }
        let _ = writeln!(o, "{line}");
    }
    let mut wal = Vec::new();
    if let Some(b) = d("wal.wal_bytes") {
        wal.push(format!(
            "WAL {} ({:.0} records, {:.0} full-page images, {:.0} syncs)",
            bytes(b),
            d("wal.wal_records").unwrap_or(0.0),
            d("wal.wal_fpi").unwrap_or(0.0),
            d("wal.wal_sync").unwrap_or(0.0)
        ));
    }
    if let Some((timed, req)) = m.checkpoints() {
        wal.push(format!(
            "checkpoints: {:.0} ({timed:.0} timed, {req:.0} requested)",
            timed + req
        ));
    }
    if !wal.is_empty() {
        let _ = writeln!(o, "  {}", wal.join("; "));
    }
    let max_locks = m.window_samples().map(|s| s.lock_waits).max().unwrap_or(0);
    if max_locks > 0 {
        let _ = writeln!(
            o,
            "  lock waits: up to {max_locks} ungranted lock requests at once"
        );
    }
}

/// The machine, what observing cost, and what could not be seen.
fn machine_and_cost(o: &mut String, m: &ServerMetrics) {
    if let Some(a) = machine_averages(m) {
        let server = a
            .server
            .map_or(String::new(), |s| format!(", server {s:.0}% of a CPU"));
        let whose = if m.os_is_servers() {
            "machine"
        } else {
            "client's machine"
        };
        let _ = writeln!(
            o,
            "  {whose}: CPU {:.0}% user, {:.0}% system, {:.0}% iowait; client {:.0}% of a CPU{server}; \
             disks {}/s read, {}/s written",
            a.user,
            a.system,
            a.iowait,
            a.client,
            bytes(a.read_bps),
            bytes(a.write_bps)
        );
    }
    for d in device_averages(m) {
        let ms = |l: Option<f64>| l.map_or("-".to_string(), |l| format!("{l:.2} ms"));
        let _ = writeln!(
            o,
            "  {} on {}: {:.0} reads/s ({}), {:.0} writes/s ({}), queue {:.2}, {:.0}% busy",
            d.holds.as_deref().unwrap_or("disk"),
            d.device,
            d.reads_per_s,
            ms(d.read_latency_ms),
            d.writes_per_s,
            ms(d.write_latency_ms),
            d.queue_depth,
            d.util_pct
        );
    }
    let c = &m.cost;
    let _ = writeln!(
        o,
        "  observer: {} samples, {} statements, {:.0} ms waiting on the server, {:.0} ms CPU",
        c.samples, c.queries, c.busy_ms, c.cpu_ms
    );
    if !m.notes.is_empty() {
        let _ = writeln!(o, "  not observed:");
        for n in &m.notes {
            let _ = writeln!(o, "    {}", n.message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{multi_rate_tries, observed_run, server_metrics};

    #[test]
    fn statement_text_on_one_line() {
        assert_eq!(
            one_line("UPDATE  t\n   SET x = 1", 40),
            "UPDATE t SET x = 1"
        );
        assert_eq!(one_line("abcdefghij", 6), "abc...");
        assert_eq!(one_line("ééééé", 5), "ééééé");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(12.0 * 1024.0 * 1024.0), "12.0 MiB");
    }

    #[test]
    fn section_shows_waits_statements_counters_and_notes() {
        let m = server_metrics();
        let text = render_server_summary(&m);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("where the time went (server sampled every 1000 ms over 3.0 s:"),
            "{text}"
        );
        assert_eq!(
            lines[1],
            "  database load by wait event (average active sessions):"
        );
        assert!(
            lines[2].starts_with("    LWLock:WALWrite")
                && lines[2].ends_with("####################"),
            "{text}"
        );
        // The walsender apart from the load, under its table.
        assert!(
            text.contains(
                "\n  background sessions, not in the load (average active sessions): walsender \
                 1.00 (Activity:WalSenderMain)\n  top statements"
            ),
            "{text}"
        );
        assert!(text.contains("top statements by total execution time:"));
        let end = lines.iter().find(|l| l.ends_with(" END")).expect("END row");
        assert!(end.contains("LWLock:WALWrite"), "{end}");
        assert!(text.contains("server: 2 rollbacks, "), "{text}");
        assert!(
            !text.contains("commits"),
            "one commit count, the check's: {text}"
        );
        assert!(
            text.contains("checkpoints: 1 (0 timed, 1 requested)"),
            "{text}"
        );
        assert!(text.contains("  machine: CPU"), "{text}");
        // The data directory's device over the window, latencies weighted by operations.
        assert!(
            text.contains(
                "  data directory, WAL on nvme0n1: 20 reads/s (0.20 ms), 3000 writes/s \
                 (0.10 ms), queue 1.50, 40% busy\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("not observed:\n    pg_stat_io needs PostgreSQL 16"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_mysql_section_shows_innodb_galera_and_waits_by_time_not_postgresql() {
        let m = crate::testdata::mysql_server_metrics();
        let text = render_server_summary(&m);
        eprintln!("{text}");
        for pg in [
            "WAL",
            "checkpoints",
            "temp files",
            "buffer hits",
            "ungranted",
            "hit %",
        ] {
            assert!(!text.contains(pg), "{pg} in a MySQL section:\n{text}");
        }
        assert!(text.contains("IO:file/innodb/innodb_log_file"), "{text}");
        assert!(
            text.contains(
                "waits by time (performance_schema, client sessions over the run):\n    \
                 IO:file/innodb/innodb_log_file               1830.500 ms       2700 waits\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  server: 9 rollbacks, 0 deadlocks, 12 row lock waits (21 ms), buffer pool hits \
                 99.99% (1200000 read requests, 120 from disk)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  redo log 8.6 MiB written in 2700 writes, 0 waits for log buffer space; history \
                 list length up to 140\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  threads: up to 9 running, up to 9 connected\n"),
            "{text}"
        );
        assert!(text.contains("row lock waits: up to 2 transactions waiting at once"));
        assert!(
            text.contains(
                "  galera db1:3306: flow control paused 6.0 ms (0.20% of the run), receive queue \
                 up to 3, send queue up to 0, 6 certification failures, 3 brute-force aborts\n"
            ),
            "{text}"
        );
        assert!(text.contains("  galera db2:3306: flow control paused 0.0 ms"));
        // Digests: rows examined where PostgreSQL's hit ratio is.
        let head = text.lines().find(|l| l.contains("total ms")).unwrap();
        assert!(head.contains(" examined "), "{head}");
        let sel = text.lines().find(|l| l.contains("BETWEEN")).unwrap();
        assert!(sel.contains(" 600000 "), "{sel}");
        assert!(text.contains("not observed:\n    waits are not joined to statements"));
    }

    #[test]
    fn text_output_ends_with_the_section_when_observed() {
        let plain = crate::render_text(&multi_rate_tries());
        let observed = crate::render_text(&observed_run());
        let section = render_server_summary(&server_metrics());
        assert_eq!(observed, format!("{plain}\n{section}"));
        assert!(!plain.contains("where the time went"));
    }

    #[test]
    fn section_for_an_idle_unequipped_server() {
        let m = ServerMetrics {
            sample_interval_ms: 1000,
            notes: vec![measure::server::Note {
                topic: "pg_stat_statements".into(),
                message: "pg_stat_statements is not installed".into(),
            }],
            ..Default::default()
        };
        let text = render_server_summary(&m);
        assert!(text.contains("no active sessions were seen"), "{text}");
        assert!(!text.contains("top statements"));
        assert!(!text.contains("machine:"));
        assert!(text.contains("not observed:\n    pg_stat_statements is not installed\n"));
    }
}
