//! The server section's per-host part, for a PostgreSQL target of several hosts each observed
//! on its own ([`measure::ServerMetrics::endpoints`]): each host's load, top waits and top
//! statements, in the text summary and the HTML report. The section's usual tables above it
//! show the hosts summed; with one server nothing here is printed, so its output is unchanged.

use std::fmt::Write as _;

use measure::server::EndpointMetrics;
use measure::ServerMetrics;

use crate::observed::one_line;
use crate::svg::esc;

/// Waits and statements shown per host.
const TOP: usize = 3;

/// Average active sessions of the whole target: the hosts' summed, or the one server's.
pub(crate) fn average_active(m: &ServerMetrics) -> f64 {
    if m.endpoints.is_empty() {
        m.average_active()
    } else {
        m.endpoints.iter().map(|e| e.average_active).sum()
    }
}

fn waits_words(e: &EndpointMetrics) -> String {
    if e.waits.is_empty() {
        return "no active sessions seen".into();
    }
    let w: Vec<String> = (e.waits.iter().take(TOP))
        .map(|w| format!("{} {:.2}", w.event, w.aas))
        .collect();
    w.join(", ")
}

/// Text: one block per host, after the summed tables.
pub(crate) fn text(o: &mut String, m: &ServerMetrics) {
    if m.endpoints.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  per host ({} hosts, each observed on its own session; the tables above sum them):",
        m.endpoints.len()
    );
    for e in &m.endpoints {
        let _ = writeln!(
            o,
            "    {}: {:.2} average active sessions; waits: {}",
            e.endpoint,
            e.average_active,
            waits_words(e)
        );
        for s in e.statements.iter().take(TOP) {
            let _ = writeln!(
                o,
                "      {:>10.3} ms {:>9} calls  {}",
                s.total_exec_time_ms,
                s.calls,
                one_line(&s.query, 60)
            );
        }
    }
}

/// HTML: a table of hosts with their load, top waits and top statements.
pub(crate) fn html(o: &mut String, m: &ServerMetrics) {
    if m.endpoints.is_empty() {
        return;
    }
    o.push_str(
        "<section id=\"server-hosts\"><h2>Server load per host</h2><p class=\"muted\">Each host \
         observed on a session of its own; the load and top SQL above sum the hosts.</p>\
         <table><tr><th class=\"l\">host</th><th>average active</th><th class=\"l\">top waits\
         </th><th class=\"l\">top statements (total ms, calls)</th></tr>",
    );
    for e in &m.endpoints {
        let statements: Vec<String> = (e.statements.iter().take(TOP))
            .map(|s| {
                format!(
                    "{:.3} ms, {} calls: <code>{}</code>",
                    s.total_exec_time_ms,
                    s.calls,
                    esc(&one_line(&s.query, 60))
                )
            })
            .collect();
        let _ = write!(
            o,
            "<tr><td class=\"l\">{}</td><td>{:.2}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td></tr>",
            esc(&e.endpoint),
            e.average_active,
            esc(&waits_words(e)),
            statements.join("<br>")
        );
    }
    o.push_str("</table></section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::server::{StatementDelta, WaitTotal};

    fn host(name: &str, aas: f64) -> EndpointMetrics {
        EndpointMetrics {
            endpoint: name.into(),
            average_active: aas,
            waits: vec![WaitTotal {
                event: "CPU".into(),
                samples: 10,
                aas,
            }],
            statements: vec![StatementDelta {
                query: "SELECT abalance FROM pgbench_accounts WHERE aid = $1".into(),
                calls: 100,
                total_exec_time_ms: 12.5,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn one_server_prints_nothing_per_host() {
        let m = ServerMetrics::default();
        let mut o = String::new();
        text(&mut o, &m);
        html(&mut o, &m);
        assert_eq!(o, "");
    }

    #[test]
    fn each_host_gets_its_load_waits_and_statements() {
        let m = ServerMetrics {
            endpoints: vec![host("a:1", 0.5), host("b:2", 0.25)],
            ..Default::default()
        };
        assert!((average_active(&m) - 0.75).abs() < 1e-9);
        let mut o = String::new();
        text(&mut o, &m);
        assert!(o.starts_with("  per host (2 hosts,"), "{o}");
        assert!(
            o.contains("    b:2: 0.25 average active sessions; waits: CPU 0.25\n"),
            "{o}"
        );
        assert!(
            o.contains("        12.500 ms       100 calls  SELECT abalance FROM"),
            "{o}"
        );
        let mut h = String::new();
        html(&mut h, &m);
        assert!(h.contains("<td class=\"l\">a:1</td><td>0.50</td>"), "{h}");
    }
}
