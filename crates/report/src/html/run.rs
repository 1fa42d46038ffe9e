//! The sections about the run itself: the verdicts (checks and aborted clients) and "what ran,
//! where" (command, target, configuration, server settings, embedded server, client machine).
//!
//! Must not touch: measurements (the client and server sections draw them).

use std::fmt::Write as _;

use crate::model::{CheckStatus, RunResult};
use crate::observed::bytes;
use crate::svg::esc;

pub(super) fn verdicts(o: &mut String, r: &RunResult) {
    o.push_str("<section id=\"verdicts\"><h2>Verdicts</h2>");
    if r.checks.is_empty() {
        o.push_str("<p class=\"muted\">No checks ran.</p>");
    } else {
        o.push_str("<table class=\"checks\">");
        for ch in &r.checks {
            let cls = match ch.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "failed",
                CheckStatus::Skipped => "skipped",
                CheckStatus::Unverified => "failed",
            };
            let _ = write!(
                o,
                "<tr><td style=\"width:90px\"><span class=\"badge {cls}\">{}</span></td>\
                 <td style=\"width:240px\"><b>{}</b></td><td>{}</td></tr>",
                ch.status.label(),
                esc(&ch.name),
                esc(&ch.detail)
            );
        }
        o.push_str("</table>");
    }
    if let Some(l) = &r.ledger {
        ledger(o, l);
    }
    let a = &r.connections.aborted;
    if !a.is_empty() {
        let _ = write!(
            o,
            "<div class=\"banner\">{} of {} clients aborted:<ul>",
            a.len(),
            r.connections.clients
        );
        for x in a {
            let _ = write!(o, "<li>client {}: {}</li>", x.client_id, esc(&x.reason));
        }
        o.push_str("</ul></div>");
    }
    o.push_str("</section>");
}

pub(super) fn run_details(o: &mut String, r: &RunResult) {
    let c = &r.config;
    o.push_str("<section id=\"run\"><h2>What ran, where</h2><div class=\"grid2\"><div>");
    let _ = write!(
        o,
        "<h3>Command</h3><pre>{}</pre><h3>Target</h3><pre>{}</pre>",
        esc(&r.command_line.join(" ")),
        esc(&r.target.conninfo)
    );
    let mut kv: Vec<(String, String)> = vec![
        ("workload".into(), c.workload.clone()),
        ("scale".into(), c.scale_text()),
        (
            "clients / threads".into(),
            format!("{} / {}", c.clients, c.threads),
        ),
        (
            "stop".into(),
            match (c.duration_s, c.transactions_per_client) {
                (Some(t), _) if r.interrupted => format!(
                    "interrupted after {:.1} s (of {t} s)",
                    r.measured_duration_s
                ),
                (_, Some(n)) if r.interrupted => format!(
                    "interrupted after {:.1} s (of {n} transactions per client)",
                    r.measured_duration_s
                ),
                (Some(t), _) => format!("after {t} s"),
                (None, Some(n)) => format!("after {n} transactions per client"),
                _ => "-".into(),
            },
        ),
        ("query mode".into(), c.query_mode.clone()),
        ("random seed".into(), c.random_seed.to_string()),
        (
            "initial connections".into(),
            format!("{:.1} ms", r.connections.initial_connect_ms),
        ),
    ];
    if let Some(rate) = c.rate_tps {
        kv.push(("rate limit".into(), format!("{rate} tps")));
    }
    if let Some(l) = c.latency_limit_ms {
        kv.push(("latency limit".into(), format!("{l} ms")));
    }
    if c.max_tries != 1 {
        kv.push(("max tries".into(), c.max_tries.to_string()));
    }
    o.push_str("<h3>Run</h3><div class=\"kv\">");
    for (k, v) in kv {
        let _ = write!(o, "<div>{}</div><div>{}</div>", esc(&k), esc(&v));
    }
    o.push_str("</div></div><div>");
    let s = &r.environment.server;
    let _ = write!(
        o,
        "<h3>Server</h3><div class=\"kv\"><div>version</div><div>{}</div>",
        esc(&s.version)
    );
    // Each setting once: the value the server reported, marked when stampede's embedded server
    // set it; the embedded section lists only what the server did not report.
    let embedded = r.target.embedded.as_ref();
    let set_by_us = |k: &str| embedded.is_some_and(|e| e.settings.contains_key(k));
    for (k, v) in &s.settings {
        let mark = if set_by_us(k) {
            " <span class=\"muted\">(set by stampede)</span>"
        } else {
            ""
        };
        let _ = write!(o, "<div>{}</div><div>{}{mark}</div>", esc(k), esc(v));
    }
    o.push_str("</div>");
    if let Some(e) = embedded {
        let _ = write!(
            o,
            "<h3>Embedded server</h3><div class=\"kv\"><div>binaries</div><div>{}</div>",
            esc(&e.bin_dir)
        );
        for (k, v) in e
            .settings
            .iter()
            .filter(|(k, _)| !s.settings.contains_key(*k))
        {
            let _ = write!(o, "<div>{}</div><div>{}</div>", esc(k), esc(v));
        }
        o.push_str("</div>");
    }
    let cl = &r.environment.client;
    let _ = write!(
        o,
        "<h3>Client</h3><div class=\"kv\"><div>host</div><div>{}</div><div>CPUs</div><div>{}{}</div>\
         <div>memory</div><div>{}</div><div>OS</div><div>{}</div><div>network</div><div>{}</div></div>",
        esc(&cl.hostname),
        cl.cpus,
        cl.cpu_model
            .as_deref()
            .map(|m| format!(" × {}", esc(m)))
            .unwrap_or_default(),
        cl.memory_bytes
            .map(|b| bytes(b as f64))
            .unwrap_or_else(|| "-".into()),
        esc(&cl.os),
        if cl.network.is_empty() {
            "-".to_string()
        } else {
            esc(&(cl.network.iter())
                .map(|n| match n.speed_mbps {
                    Some(s) => format!("{} {s} Mb/s", n.name),
                    None => format!("{} (speed not reported)", n.name),
                })
                .collect::<Vec<_>>()
                .join(", "))
        }
    );
    o.push_str("</div></div></section>");
}

/// The statement ledger: each line's counts and verdict (`crate::ledger`).
fn ledger(o: &mut String, l: &crate::ledger::LedgerSection) {
    use crate::ledger::Verdict;
    if l.lines.is_empty() {
        return;
    }
    o.push_str(
        "<h3>Statement ledger</h3><table class=\"checks\"><tr><th>what</th><th>workload</th>\
         <th>sent</th><th>server</th><th>verdict</th><th>server's counter</th><th>detail</th></tr>",
    );
    let num = |v: Option<String>| v.unwrap_or_else(|| "&ndash;".into());
    for line in &l.lines {
        let cls = match line.verdict {
            Verdict::Exact | Verdict::Within => "passed",
            Verdict::Inconclusive => "skipped",
            Verdict::Failed => "failed",
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td><span class=\"badge {cls}\">{}</span></td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&line.subject()),
            num(line.workload.map(|b| b.to_string())),
            num(line.sent.map(|v| v.to_string())),
            num(line.server.map(|v| v.to_string())),
            line.verdict.label(),
            esc(&line.source),
            esc(&line.detail),
        );
    }
    o.push_str("</table>");
    if !l.sources.is_empty() {
        let _ = write!(
            o,
            "<p class=\"muted\">Server's counters: {}</p>",
            esc(&l.sources.join("; "))
        );
    }
}
