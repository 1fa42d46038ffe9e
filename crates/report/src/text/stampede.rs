//! stampede's additions to the end-of-run summary, after pgbench's block: latency percentiles
//! (overall, and per transaction type when there are several), failures by kind, aborted
//! clients, how the connections were opened, the warm-up, steady state and prewarm, the checks
//! and the interrupted note.
//!
//! The percentile table is shared with sysbench's summary.

use std::fmt::Write as _;

use measure::{FailureKind, Histogram};

use super::{ms, pct};
use crate::model::RunResult;
use crate::PERCENTILES;

/// The header of [`percentile_row`]'s table.
pub(crate) fn percentile_header(out: &mut String) {
    for (name, _) in PERCENTILES {
        let _ = write!(out, " {name:>10}");
    }
    let _ = writeln!(out, " {:>10}", "max");
}

pub(crate) fn percentile_row(out: &mut String, h: &Histogram, label: &str) {
    for (_, p) in PERCENTILES {
        if h.is_empty() {
            let _ = write!(out, " {:>10}", "-");
        } else {
            let _ = write!(out, " {:10.3}", ms(h.percentile_us(p) as f64));
        }
    }
    if h.is_empty() {
        let _ = write!(out, " {:>10}", "-");
    } else {
        let _ = write!(out, " {:10.3}", ms(h.max_us() as f64));
    }
    let _ = writeln!(out, "  {label}");
}

/// How the connections were opened and what the open-file limit allowed (absent from results
/// that predate them):
/// `connections: 500 opened in 1.234 s (405.2/s, at most 64 in flight, 0 retries); open files:
/// limit 20000 (hard 20000, raised from 1024), needed 600`.
fn connections_line(o: &mut String, r: &RunResult) {
    let setup = r.connections.setup.as_ref();
    let fd = r.environment.client.fd_limit.as_ref();
    if setup.is_none() && fd.is_none() {
        return;
    }
    let mut parts = Vec::new();
    if let Some(c) = setup {
        parts.push(format!(
            "{} opened in {:.3} s ({:.1}/s, at most {} in flight, {} retries)",
            c.opened,
            r.connections.initial_connect_ms / 1000.0,
            c.rate_per_s,
            c.concurrency,
            c.retries
        ));
        if let Some(io) = &c.socket_io {
            parts.push(format!("I/O: {io}"));
        }
        if let Some(n) = c.abandoned {
            parts.push(format!(
                "{n} transactions abandoned in flight at the end (blocked waiting for the \
                 server; neither committed nor failed)"
            ));
        }
    }
    if let Some(f) = fd {
        let hard = f.hard.map_or("unlimited".to_string(), |h| h.to_string());
        let raised = f
            .raised_from
            .map_or(String::new(), |v| format!(", raised from {v}"));
        parts.push(format!(
            "open files: limit {} (hard {hard}{raised}), needed {}",
            f.soft, f.needed
        ));
    }
    let _ = writeln!(o, "connections: {}", parts.join("; "));
}

/// The warm-up left out of the figures, the steady-state verdict and the prewarm, each one line
/// when the result has it (`crate::warmup`, `crate::steady`).
fn warmup_lines(o: &mut String, r: &RunResult) {
    if let Some(p) = &r.prewarm {
        let _ = writeln!(o, "{}", p.line());
    }
    if let Some(w) = &r.warmup {
        let _ = writeln!(
            o,
            "warm-up: the first {} s ({} intervals) left out of the figures above; the whole \
             run committed {} transactions in {:.3} s (the checks count them all)",
            w.seconds, w.intervals_excluded, w.whole_run_transactions, w.whole_run_duration_s
        );
    }
    if let Some(s) = &r.steady_state {
        let _ = writeln!(o, "{}", s.line());
    }
}

/// stampede's additions: latency percentiles (overall, and per transaction type when there are
/// several), failures by kind, aborted clients, checks, and the interrupted note.
pub fn render_stampede_summary(r: &RunResult) -> String {
    let mut out = String::new();
    let o = &mut out;
    let total = r.total.total();
    let total_cnt = total.scheduled();

    let _ = writeln!(
        o,
        "latency percentiles in milliseconds (committed transactions):"
    );
    percentile_header(o);
    percentile_row(o, &total.latency, "all");
    if r.config.txn_types.len() > 1 {
        for (tt, s) in r.config.txn_types.iter().zip(&r.total.txns) {
            percentile_row(o, &s.latency, &tt.name);
        }
    }

    let _ = write!(o, "failed transactions by kind:");
    for (i, kind) in FailureKind::ALL.into_iter().enumerate() {
        let name = match kind {
            FailureKind::Serialization => "serialization",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Other => "other",
        };
        let n = total.failures_of(kind);
        let sep = if i == 0 { " " } else { ", " };
        let _ = write!(o, "{sep}{name} {n} ({:.3}%)", pct(n, total_cnt));
    }
    o.push('\n');

    let aborted = &r.connections.aborted;
    let _ = writeln!(
        o,
        "aborted clients: {} of {}",
        aborted.len(),
        r.connections.clients
    );
    // Each abort's error was printed on standard error as it happened; the result (JSON,
    // HTML) keeps them. Here, which clients.
    if !aborted.is_empty() {
        let ids: Vec<String> = aborted.iter().map(|a| a.client_id.to_string()).collect();
        let _ = writeln!(
            o,
            "  clients {} (their errors are on standard error)",
            ids.join(", ")
        );
    }
    connections_line(o, r);
    warmup_lines(o, r);

    for (view, v) in crate::section::present(r) {
        view.summary_lines(r, v, o);
    }
    if !r.endpoints.is_empty() {
        let _ = writeln!(o, "endpoints:");
        // --read-from: each client holds a writer and a reader session (model::Endpoint).
        let split = r.endpoints.iter().any(|e| e.reader_clients > 0);
        for e in &r.endpoints {
            if split {
                let _ = writeln!(
                    o,
                    "  {}:{}  {} writer + {} reader sessions, {} transactions ({} on readers), \
                     {:.1} tps{}",
                    e.host,
                    e.port,
                    e.clients,
                    e.reader_clients,
                    e.transactions,
                    e.reader_transactions,
                    e.tps,
                    crate::endpoint::text_details(e)
                );
            } else {
                let _ = writeln!(
                    o,
                    "  {}:{}  {} clients, {} transactions, {:.1} tps{}",
                    e.host,
                    e.port,
                    e.clients,
                    e.transactions,
                    e.tps,
                    crate::endpoint::text_details(e)
                );
            }
        }
        if let Some(w) = r.endpoints_advice() {
            let _ = writeln!(o, "  warning: {w}");
        }
    }
    crate::text::replication::lines(o, &r.replication);
    if let Some(l) = crate::sizes::text_line(&r.sizes) {
        let _ = writeln!(o, "{l}");
    }

    if let Some(f) = &r.failover {
        super::failover::lines(o, f);
    }
    if let Some(l) = &r.ledger {
        o.push_str(&crate::ledger::render_ledger(l));
    }
    if r.checks.is_empty() {
        let _ = writeln!(o, "checks: none");
    } else {
        let _ = writeln!(o, "checks:");
        o.push_str(&render_checks(r));
    }

    if r.interrupted {
        let _ = writeln!(
            o,
            "interrupted: the run was cut short; the results above are incomplete"
        );
    }
    out
}

/// The checks' verdicts, a line each ("  passed   commit count: ..."): under the summary's
/// "checks:", and on standard error after a drop-in's output (`stampede pgbench --check`), where
/// pgbench's own standard output must stay pgbench's.
pub fn render_checks(r: &RunResult) -> String {
    let mut o = String::new();
    for ch in &r.checks {
        let _ = write!(o, "  {:<7}  {}", ch.status.label(), ch.name);
        if !ch.detail.is_empty() {
            let _ = write!(o, ": {}", ch.detail);
        }
        o.push('\n');
    }
    o
}
