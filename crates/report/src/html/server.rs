//! The server's side of an observed run beyond its load: counters over time (commits, WAL,
//! blocks read) with checkpoints on the time axis, connections by state and lock waits, totals
//! over the run and I/O by backend type, client and server CPU, and the observation notes with
//! the observer's own cost.
//!
//! A MySQL or MariaDB run gets its own server's figures in the same places: commits and
//! rollbacks from `Com_commit`/`Com_rollback`, the redo log and data read instead of WAL and
//! blocks, row lock waits from `INNODB_TRX`, InnoDB's totals; and two sections PostgreSQL has no
//! source for: waits by time (`performance_schema`'s summary) and Galera's nodes (flow control,
//! queues, conflicts).
//!
//! Owns [`server`], the order of the server sections; database load and top SQL are in `load`.
//! Must not touch: the client's measurements.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use measure::server::CounterSample;
use measure::ServerMetrics;

use super::load::{load, top_sql};
use super::style::event_tag;
use super::{chart_block, dashed_if_any, f3, share_bar};
use crate::model::RunResult;
use crate::observed::{bytes, galera_node, hit_pct, innodb_hit_pct, machine_averages};
use crate::svg::{esc, Chart, Kind, Marker, Series};

/// Where the activity charts read their counters: the observed server's own.
struct Sources {
    commits: &'static str,
    rollbacks: &'static str,
    commits_title: &'static str,
    /// Log volume: PostgreSQL's WAL, InnoDB's redo log (bytes).
    log: &'static str,
    log_name: &'static str,
    /// Reads from disk and the factor to MiB.
    reads: &'static str,
    reads_to_mib: f64,
    reads_name: &'static str,
    log_title: &'static str,
    log_chart: &'static str,
    locks_name: &'static str,
    locks_title: &'static str,
}

const PG_SOURCES: Sources = Sources {
    commits: "database.xact_commit",
    rollbacks: "database.xact_rollback",
    commits_title: "Commits per second (pg_stat_database)",
    log: "wal.wal_bytes",
    log_name: "WAL written",
    reads: "database.blks_read",
    reads_to_mib: 8192.0 / (1024.0 * 1024.0),
    reads_name: "blocks read (8 KiB)",
    log_title: "WAL generated and blocks read, with checkpoints",
    log_chart: "WAL",
    locks_name: "ungranted lock requests",
    locks_title: "Lock waits (pg_locks not granted)",
};

const MYSQL_SOURCES: Sources = Sources {
    commits: "mysql.Com_commit",
    rollbacks: "mysql.Com_rollback",
    commits_title: "COMMIT and ROLLBACK statements per second (Com_commit, Com_rollback)",
    log: "mysql.Innodb_os_log_written",
    log_name: "redo log written",
    reads: "mysql.Innodb_data_read",
    reads_to_mib: 1.0 / (1024.0 * 1024.0),
    reads_name: "InnoDB data read",
    log_title: "Redo log written and InnoDB data read from disk",
    log_chart: "Redo log",
    locks_name: "transactions waiting for a row lock",
    locks_title: "Row lock waits (InnoDB transactions in LOCK WAIT)",
};

/// Checkpoint markers: every counter sample where the checkpoint count went up.
pub(super) fn checkpoint_markers(m: &ServerMetrics) -> Vec<Marker> {
    let count = |v: &BTreeMap<String, f64>| -> Option<f64> {
        let g = |k: &str| v.get(k).copied();
        Some(
            g("checkpointer.num_timed").or(g("bgwriter.checkpoints_timed"))?
                + g("checkpointer.num_requested")
                    .or(g("bgwriter.checkpoints_req"))
                    .unwrap_or(0.0),
        )
    };
    let mut out = Vec::new();
    for w in m.counters.windows(2) {
        if let (Some(a), Some(b)) = (count(&w[0].values), count(&w[1].values)) {
            if b > a {
                out.push(Marker {
                    x: w[1].t_ms as f64 / 1000.0,
                    label: if b - a > 1.0 {
                        format!("{} checkpoints", b - a)
                    } else {
                        "checkpoint".into()
                    },
                });
            }
        }
    }
    out
}

/// Per-second rate of counter `key` between consecutive counter samples, at the later time.
pub(super) fn rate(m: &ServerMetrics, key: &str, scale: f64) -> Vec<(f64, f64)> {
    rate_of(&m.counters, key, scale)
}

fn rate_of(counters: &[CounterSample], key: &str, scale: f64) -> Vec<(f64, f64)> {
    counters
        .windows(2)
        .filter_map(|w| {
            let a = w[0].values.get(key)?;
            let b = w[1].values.get(key)?;
            let dt = (w[1].t_ms - w[0].t_ms) as f64 / 1000.0;
            (dt > 0.0).then(|| (w[1].t_ms as f64 / 1000.0, (b - a).max(0.0) / dt * scale))
        })
        .collect()
}

/// The server sections, in page order.
pub(super) fn server(o: &mut String, r: &RunResult, m: &ServerMetrics) {
    let x_range = Some((
        (m.window_start_ms.min(0)) as f64 / 1000.0,
        m.window_end_ms as f64 / 1000.0,
    ));
    load(o, r, m, x_range);
    top_sql(o, m);
    crate::observed_hosts::html(o, m);
    wait_times(o, m);
    o.push_str("<section id=\"server-activity\"><h2>Server activity</h2>");
    activity(o, m, x_range);
    if m.is_mysql() {
        mysql_totals(o, m);
    } else {
        totals(o, m);
    }
    o.push_str("</section>");
    super::counters::sets(o, m, x_range);
    galera(o, m, x_range);
    cpu(o, r, m, x_range);
    super::counters::devices(o, m, x_range);
    notes(o, m);
}

/// MySQL: waits by time over the run, as `performance_schema` timed them (nothing for
/// PostgreSQL, whose waits are only sampled).
fn wait_times(o: &mut String, m: &ServerMetrics) {
    if m.wait_times.is_empty() {
        return;
    }
    o.push_str(
        "<section id=\"wait-times\"><h2>Waits by time (performance_schema)</h2>\
         <table><tr><th class=\"l\">wait event</th><th>total ms</th><th class=\"l\">share</th>\
         <th>waits</th><th>mean µs</th></tr>",
    );
    let all: f64 = m
        .wait_times
        .iter()
        .map(|w| w.total_ms)
        .sum::<f64>()
        .max(1e-9);
    for w in &m.wait_times {
        let frac = w.total_ms / all;
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td>{:.1}</td><td class=\"l\">{} {:.1}%</td><td>{}</td>\
             <td>{}</td></tr>",
            event_tag(&w.event),
            w.total_ms,
            share_bar(frac),
            100.0 * frac,
            w.count,
            f3(1000.0 * w.total_ms / w.count.max(1) as f64)
        );
    }
    o.push_str(
        "</table><p class=\"muted\">Every instrumented and timed wait of the client sessions over \
         the run (events_waits_summary_by_user_by_event_name, end minus start), measured by the \
         server rather than sampled; shares are of the waits listed.</p></section>",
    );
}

/// Galera: each node's flow control, queues and conflicts.
fn galera(o: &mut String, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    if m.nodes.is_empty() {
        return;
    }
    const COLORS: [&str; 6] = [
        "#3056d3", "#d6336c", "#2e9e44", "#f08c00", "#7048e8", "#0b7285",
    ];
    o.push_str("<section id=\"galera\"><h2>Galera nodes</h2><div class=\"grid2\">");
    let mut paused = Chart::new(
        "chart-flow-control",
        "Flow control",
        "seconds",
        "ms paused per second",
        Kind::Lines,
    );
    let mut queue = Chart::new(
        "chart-recv-queue",
        "Receive queue",
        "seconds",
        "write sets",
        Kind::Lines,
    );
    for (i, n) in m.nodes.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        paused.series.push(Series {
            name: n.endpoint.clone(),
            color: color.into(),
            points: rate_of(&n.counters, "mysql.wsrep_flow_control_paused_ns", 1e-6),
            dashed: false,
        });
        queue.series.push(Series {
            name: n.endpoint.clone(),
            color: color.into(),
            points: n
                .counters
                .iter()
                .filter_map(|c| {
                    let v = c.values.get("mysql.wsrep_local_recv_queue")?;
                    Some((c.t_ms as f64 / 1000.0, *v))
                })
                .collect(),
            dashed: false,
        });
    }
    paused.x_range = x_range;
    queue.x_range = x_range;
    chart_block(
        o,
        "Replication paused by flow control (wsrep_flow_control_paused_ns)",
        &paused.render(),
    );
    chart_block(
        o,
        "Receive queue length (wsrep_local_recv_queue)",
        &queue.render(),
    );
    o.push_str(
        "</div><table><tr><th class=\"l\">node</th><th>flow control paused ms</th>\
         <th>% of the run</th><th>receive queue max</th><th>send queue max</th>\
         <th>certification failures</th><th>brute-force aborts</th></tr>",
    );
    for n in &m.nodes {
        let g = galera_node(m, n);
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td>{:.1}</td><td>{:.2}</td><td>{:.0}</td><td>{:.0}</td>\
             <td>{:.0}</td><td>{:.0}</td></tr>",
            esc(&n.endpoint),
            g.paused_ms,
            g.paused_pct,
            g.recv_queue_max,
            g.send_queue_max,
            g.cert_failures,
            g.bf_aborts
        );
    }
    o.push_str(
        "</table><p class=\"muted\">Each node read on a session of its own every second: a \
         node pauses replication when its receive queue passes the flow control limit; \
         certification failures and brute-force aborts are transactions failed to resolve \
         conflicting writes on different nodes.</p></section>",
    );
}

/// MySQL's and MariaDB's totals over the run.
fn mysql_totals(o: &mut String, m: &ServerMetrics) {
    let d = |k: &str| m.mysql_delta(k);
    let n = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.0}"));
    let mut kv: Vec<(String, String)> = Vec::new();
    kv.push(("COMMIT statements".into(), n(d("Com_commit"))));
    kv.push(("rollbacks".into(), n(d("Com_rollback"))));
    if let Some(x) = d("Innodb_deadlocks") {
        kv.push(("deadlocks".into(), format!("{x:.0}")));
    }
    kv.push((
        "row lock waits".into(),
        format!(
            "{} ({} ms waited)",
            n(d("Innodb_row_lock_waits")),
            n(d("Innodb_row_lock_time"))
        ),
    ));
    if let Some(h) = innodb_hit_pct(m) {
        kv.push((
            "buffer pool hit ratio".into(),
            format!(
                "{h:.2}% ({} read requests, {} read from disk)",
                n(d("Innodb_buffer_pool_read_requests")),
                n(d("Innodb_buffer_pool_reads"))
            ),
        ));
    }
    if let Some(b) = d("Innodb_os_log_written") {
        kv.push((
            "redo log".into(),
            format!(
                "{} in {} writes, {} waits for log buffer space",
                bytes(b),
                n(d("Innodb_log_writes")),
                n(d("Innodb_log_waits"))
            ),
        ));
    }
    if let Some(h) = m.counter_max("mysql.Innodb_history_list_length") {
        kv.push(("history list length".into(), format!("up to {h:.0}")));
    }
    if let Some(p) = d("Innodb_buffer_pool_pages_flushed") {
        kv.push(("buffer pool pages flushed".into(), format!("{p:.0}")));
    }
    if let (Some(r), Some(w)) = (d("Innodb_data_read"), d("Innodb_data_written")) {
        kv.push((
            "InnoDB data".into(),
            format!("{} read, {} written", bytes(r), bytes(w)),
        ));
    }
    if let Some(r) = m.counter_max("mysql.Threads_running") {
        kv.push((
            "threads".into(),
            format!(
                "up to {r:.0} running, up to {} connected",
                n(m.counter_max("mysql.Threads_connected"))
            ),
        ));
    }
    o.push_str("<h3>Over the run</h3><div class=\"kv\">");
    for (k, v) in kv {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(&k), esc(&v));
    }
    o.push_str("</div>");
}

/// Server counters over time, connections by state and lock waits.
fn activity(o: &mut String, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    let src = if m.is_mysql() {
        &MYSQL_SOURCES
    } else {
        &PG_SOURCES
    };
    o.push_str("<div class=\"grid2\">");
    let markers = checkpoint_markers(m);
    let mut commits = Chart::new(
        "chart-commits",
        "Commits and rollbacks",
        "seconds",
        "per second",
        Kind::Lines,
    );
    commits.series.push(Series {
        name: "commits/s".into(),
        color: "#3056d3".into(),
        points: rate(m, src.commits, 1.0),
        dashed: false,
    });
    dashed_if_any(
        &mut commits,
        "rollbacks/s",
        "#c5221f",
        rate(m, src.rollbacks, 1.0),
    );
    commits.markers = markers.clone();
    commits.x_range = x_range;
    chart_block(o, src.commits_title, &commits.render());
    let mut wal = Chart::new(
        "chart-wal",
        src.log_chart,
        "seconds",
        "MiB / s",
        Kind::Lines,
    );
    wal.series.push(Series {
        name: src.log_name.into(),
        color: "#7048e8".into(),
        points: rate(m, src.log, 1.0 / (1024.0 * 1024.0)),
        dashed: false,
    });
    dashed_if_any(
        &mut wal,
        src.reads_name,
        "#1f6fd1",
        rate(m, src.reads, src.reads_to_mib),
    );
    wal.markers = markers.clone();
    wal.x_range = x_range;
    chart_block(o, src.log_title, &wal.render());

    // Connections by state and lock waits.
    let mut states: Vec<String> = m
        .activity
        .iter()
        .flat_map(|s| s.states.keys().cloned())
        .collect();
    states.sort();
    states.dedup();
    let state_color = |s: &str| match s {
        "active" => "#2e9e44",
        "idle in transaction" => "#f08c00",
        "idle in transaction (aborted)" => "#c5221f",
        "idle" => "#adb5bd",
        _ => "#7048e8",
    };
    let mut conns = Chart::new(
        "chart-connections",
        "Connections",
        "seconds",
        "connections",
        Kind::StackedArea,
    );
    for st in &states {
        conns.series.push(Series {
            name: st.clone(),
            color: state_color(st).into(),
            points: m
                .activity
                .iter()
                .map(|s| {
                    (
                        s.t_ms as f64 / 1000.0,
                        f64::from(s.states.get(st).copied().unwrap_or(0)),
                    )
                })
                .collect(),
            dashed: false,
        });
    }
    conns.x_range = x_range;
    chart_block(o, "Client connections by state", &conns.render());
    let mut locks = Chart::new(
        "chart-locks",
        "Lock waits",
        "seconds",
        "requests",
        Kind::Lines,
    );
    locks.series.push(Series {
        name: src.locks_name.into(),
        color: "#f08c00".into(),
        points: m
            .activity
            .iter()
            .map(|s| (s.t_ms as f64 / 1000.0, f64::from(s.lock_waits)))
            .collect(),
        dashed: false,
    });
    locks.x_range = x_range;
    chart_block(o, src.locks_title, &locks.render());
    o.push_str("</div>");
}

/// Totals over the run, and I/O by backend type when pg_stat_io was read.
fn totals(o: &mut String, m: &ServerMetrics) {
    let d = |k: &str| m.delta(k);
    let mut kv: Vec<(String, String)> = Vec::new();
    let n = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.0}"));
    kv.push(("rollbacks".into(), n(d("database.xact_rollback"))));
    kv.push(("deadlocks".into(), n(d("database.deadlocks"))));
    kv.push(("conflicts".into(), n(d("database.conflicts"))));
    kv.push((
        "temp files".into(),
        format!(
            "{} ({})",
            n(d("database.temp_files")),
            bytes(d("database.temp_bytes").unwrap_or(0.0))
        ),
    ));
    if let Some(h) = hit_pct(
        d("database.blks_hit").unwrap_or(0.0),
        d("database.blks_read").unwrap_or(0.0),
    ) {
        kv.push(("buffer hit ratio".into(), format!("{h:.2}%")));
    }
    if let Some(b) = d("wal.wal_bytes") {
        kv.push((
            "WAL".into(),
            format!(
                "{} in {} records, {} full-page images, {} syncs",
                bytes(b),
                n(d("wal.wal_records")),
                n(d("wal.wal_fpi")),
                n(d("wal.wal_sync"))
            ),
        ));
    }
    if let Some((t, q)) = m.checkpoints() {
        kv.push((
            "checkpoints".into(),
            format!("{:.0} ({t:.0} timed, {q:.0} requested)", t + q),
        ));
    }
    if let Some(b) = m.delta_any(&["bgwriter.buffers_clean"]) {
        kv.push((
            "buffers written by the background writer".into(),
            format!("{b:.0}"),
        ));
    }
    o.push_str("<h3>Over the run</h3><div class=\"kv\">");
    for (k, v) in kv {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(&k), esc(&v));
    }
    o.push_str("</div>");
    if !m.io.is_empty() {
        o.push_str(
            "<h3>I/O by backend type (pg_stat_io)</h3><table><tr><th class=\"l\">backend</th>\
             <th class=\"l\">object</th><th class=\"l\">context</th><th>reads</th><th>writes</th>\
             <th>extends</th><th>hits</th><th>evictions</th><th>fsyncs</th></tr>",
        );
        for io in &m.io {
            let g = |k: &str| io.values.get(k).map_or("-".into(), |v| format!("{v:.0}"));
            let _ = write!(
                o,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&io.backend_type),
                esc(&io.object),
                esc(&io.context),
                g("reads"),
                g("writes"),
                g("extends"),
                g("hits"),
                g("evictions"),
                g("fsyncs")
            );
        }
        o.push_str("</table>");
    }
}

/// Process and machine CPU: the server's machine when the server is on the client's, else the
/// client's machine alone.
fn cpu(o: &mut String, r: &RunResult, m: &ServerMetrics, x_range: Option<(f64, f64)>) {
    o.push_str("<section id=\"cpu\"><h2>Client and server CPU</h2>");
    if m.os.is_empty() {
        o.push_str(
            "<p class=\"muted\">The machine's CPU, memory and disks were not sampled (see the \
             notes).</p>",
        );
    } else {
        if !m.os_is_servers() {
            o.push_str(
                "<p class=\"muted\">The server is not on the machine that ran the client: the \
                 machine below is the client's (its CPU, memory and disks), not the server's.</p>",
            );
        }
        o.push_str("<div class=\"grid2\">");
        let mut cpu = Chart::new(
            "chart-cpu",
            "Process CPU",
            "seconds",
            "% of one CPU",
            Kind::Lines,
        );
        cpu.series.push(Series {
            name: "client (stampede)".into(),
            color: "#3056d3".into(),
            points: m
                .os
                .iter()
                .map(|s| (s.t_ms as f64 / 1000.0, s.client_cpu_pct))
                .collect(),
            dashed: false,
        });
        let srv: Vec<(f64, f64)> =
            m.os.iter()
                .filter_map(|s| s.server_cpu_pct.map(|v| (s.t_ms as f64 / 1000.0, v)))
                .collect();
        if !srv.is_empty() {
            cpu.series.push(Series {
                name: if m.is_mysql() {
                    format!("server (the {} process)", m.product_name())
                } else {
                    "server (all PostgreSQL processes)".into()
                },
                color: "#2e9e44".into(),
                points: srv,
                dashed: false,
            });
        }
        if r.environment.client.cpus > 0 {
            cpu.reference = Some((
                100.0 * f64::from(r.environment.client.cpus),
                format!("{} CPUs", r.environment.client.cpus),
            ));
        }
        cpu.x_range = x_range;
        chart_block(o, "Client and server CPU (% of one CPU)", &cpu.render());
        let mut mach = Chart::new(
            "chart-machine",
            "Machine CPU",
            "seconds",
            "% of all CPUs",
            Kind::StackedArea,
        );
        for (name, color, f) in [
            (
                "user",
                "#2e9e44",
                (|s: &measure::server::OsSample| s.cpu_user_pct) as fn(&_) -> f64,
            ),
            ("system", "#d6336c", |s| s.cpu_system_pct),
            ("iowait", "#1f6fd1", |s| s.cpu_iowait_pct),
        ] {
            mach.series.push(Series {
                name: name.into(),
                color: color.into(),
                points: m
                    .os
                    .iter()
                    .map(|s| (s.t_ms as f64 / 1000.0, f(s)))
                    .collect(),
                dashed: false,
            });
        }
        mach.y_max = Some(100.0);
        mach.x_range = x_range;
        let title = if m.os_is_servers() {
            "Machine CPU (/proc/stat)"
        } else {
            "Client machine CPU (/proc/stat)"
        };
        chart_block(o, title, &mach.render());
        o.push_str("</div>");
        if let Some(a) = machine_averages(m) {
            let _ = write!(
                o,
                "<p class=\"muted\">Averages over the run: machine {:.0}% user, {:.0}% system, \
                 {:.0}% iowait; client {:.0}% of a CPU{}; disks {}/s read, {}/s written.</p>",
                a.user,
                a.system,
                a.iowait,
                a.client,
                a.server
                    .map_or(String::new(), |s| format!(", server {s:.0}% of a CPU")),
                esc(&bytes(a.read_bps)),
                esc(&bytes(a.write_bps))
            );
        }
    }
    o.push_str("</section>");
}

/// What could not be observed and why, and what observing cost.
fn notes(o: &mut String, m: &ServerMetrics) {
    o.push_str("<section id=\"notes\"><h2>Observation notes</h2>");
    if m.notes.is_empty() {
        o.push_str("<p class=\"muted\">Everything was observed.</p>");
    }
    for n in &m.notes {
        let _ = write!(
            o,
            "<div class=\"note\"><b>{}</b>: {}</div>",
            esc(&n.topic),
            esc(&n.message)
        );
    }
    let c = &m.cost;
    let _ = write!(
        o,
        "<p class=\"muted\">Observer cost: {} samples, {} statements in {} session{}, {:.0} ms \
         waiting on the server (slowest sample {:.1} ms), {:.0} ms of CPU.</p></section>",
        c.samples,
        c.queries,
        c.connections,
        if c.connections == 1 { "" } else { "s" },
        c.busy_ms,
        c.max_sample_ms,
        c.cpu_ms
    );
}
