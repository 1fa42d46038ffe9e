//! The fault section of the HTML report: a timeline of successful writes, reads and errors per
//! second with the fault marked, the downtime figures, and the audit.

use std::fmt::Write as _;

use super::{esc, f3};
use crate::failover::FailoverSection;
use crate::svg::{Chart, Kind, Marker, Series};

pub(super) fn section(o: &mut String, f: &FailoverSection) {
    o.push_str("<section id=\"failover\"><h2>Fault</h2>");
    let at = if f.no_fault_time {
        "no time given (the windows cover the whole run)".to_string()
    } else {
        format!("at <b>{:.3} s</b>", f.fault_at_s)
    };
    let _ = write!(
        o,
        "<p>Fault {at}{} · write downtime <b>{} s</b> · read downtime {} s",
        f.fault_cmd
            .as_deref()
            .map(|c| format!(" (<code>{}</code>)", esc(c)))
            .unwrap_or_default(),
        f3(f.write_downtime_s),
        f3(f.read_downtime_s),
    );
    if let Some(d) = f.detect_s {
        let since = if f.no_fault_time {
            "the start"
        } else {
            "the fault"
        };
        let _ = write!(o, " · first error {} s after {since}", f3(d));
    }
    o.push_str("</p>");
    if f.timeline.len() >= 2 {
        let mut c = Chart::new(
            "chart-failover",
            "Successful writes, reads and errors per second",
            "seconds",
            "per second",
            Kind::Lines,
        );
        for (name, color, pick) in [
            ("writes", "#3056d3", 0usize),
            ("reads", "#2a9d8f", 1),
            ("errors", "#d62828", 2),
        ] {
            let points: Vec<(f64, f64)> = (f.timeline.iter())
                .map(|s| {
                    let v = [s.writes, s.reads, s.errors][pick];
                    (f64::from(s.second), v as f64)
                })
                .collect();
            if points.iter().any(|p| p.1 > 0.0) {
                c.series.push(Series {
                    name: name.into(),
                    color: color.into(),
                    points,
                    dashed: pick == 2,
                });
            }
        }
        if !f.no_fault_time {
            c.markers.push(Marker {
                x: f.fault_at_s,
                label: "fault".into(),
            });
        }
        o.push_str(&c.render());
    }
    o.push_str("<table><tbody>");
    let mut row = |k: &str, v: String| {
        let _ = write!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), v);
    };
    if let Some(h) = &f.last_write_old_primary {
        row(
            "last write on the old primary",
            format!("{} at {:.3} s", esc(&h.host), h.at_s),
        );
    }
    if let Some(h) = &f.first_write_new_primary {
        row(
            "first write on the new primary",
            format!("{} at {:.3} s", esc(&h.host), h.at_s),
        );
    }
    let r = &f.reconnects;
    row(
        "reconnects",
        format!(
            "{} attempts, {} succeeded{}",
            r.attempts,
            r.succeeded,
            r.latency_ms
                .as_ref()
                .map(|l| format!(", p50 {} ms, max {} ms", f3(l.p50_ms), f3(l.max_ms)))
                .unwrap_or_default()
        ),
    );
    for (name, l) in [
        ("latency before", &f.latency.before),
        ("latency during", &f.latency.during),
        ("latency after", &f.latency.after),
    ] {
        if let Some(l) = l {
            row(
                name,
                format!(
                    "p50 {} ms · p99 {} ms · max {} ms ({})",
                    f3(l.p50_ms),
                    f3(l.p99_ms),
                    f3(l.max_ms),
                    l.count
                ),
            );
        }
    }
    let ended: Vec<String> = (f.clients_ended_on.iter())
        .map(|h| format!("{} on {}", h.clients, esc(&h.host)))
        .collect();
    if !ended.is_empty() {
        row("clients ended", ended.join(", "));
    }
    let w = &f.writes;
    row(
        "writes",
        format!(
            "{} attempted, {} acknowledged, {} failed, {} unknown",
            w.attempted, w.acknowledged, w.failed, w.unknown
        ),
    );
    let r = &f.reads;
    if r.attempted > 0 {
        row(
            "reads",
            format!(
                "{} attempted, {} succeeded, {} failed",
                r.attempted, r.succeeded, r.failed
            ),
        );
    }
    if f.hosts.len() > 1 {
        for h in &f.hosts {
            row(
                &format!("on {}", h.host),
                format!(
                    "{} writes, {} reads, {} failed",
                    h.writes, h.reads, h.failed
                ),
            );
        }
    }
    match (&f.audited_on, &f.audit_error) {
        (Some(host), _) => row(
            "audit",
            format!(
                "on {}: <b>{} lost</b>, {} in doubt, {} duplicate, {} unexpected",
                esc(host),
                f.lost_writes,
                f.in_doubt_writes,
                f.duplicate_writes,
                f.unexpected_writes
            ),
        ),
        (None, Some(e)) => row("audit", format!("not done: {}", esc(e))),
        (None, None) => {}
    }
    o.push_str("</tbody></table>");
    if !f.errors.is_empty() {
        o.push_str(
            "<table><thead><tr><th>second</th><th>failed</th><th>error</th><th>count</th></tr>\
             </thead><tbody>",
        );
        for e in &f.errors {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                e.second,
                esc(crate::failover::ErrorSecond::plural(&e.op).unwrap_or("")),
                esc(&e.kind),
                e.count
            );
        }
        o.push_str("</tbody></table>");
    }
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_marks_the_fault_and_the_audit_is_shown() {
        let mut f = crate::testdata::failover_section();
        f.fault_cmd = Some("kill <pid> && echo 'x'".into());
        let mut o = String::new();
        section(&mut o, &f);
        assert!(o.contains("id=\"chart-failover\""), "{o}");
        assert!(o.contains(">fault<"), "the fault marker: {o}");
        assert!(o.contains("<b>0 lost</b>"), "{o}");
        assert!(
            o.contains("<td>10</td><td>writes</td><td>terminated by administrator</td>"),
            "{o}"
        );
        assert!(
            o.contains("1000 attempted, 1000 succeeded, 0 failed"),
            "{o}"
        );
        assert!(o.contains("<th>on /tmp/a:5432</th><td>500 writes, 500 reads, 4 failed"));
        // The command is escaped, never raw HTML.
        assert!(o.contains("kill &lt;pid&gt;"), "{o}");
        assert!(!o.contains("<pid>"));
    }
}
