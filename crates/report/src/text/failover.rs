//! The fault block of the text summary: when the fault came, how long writes and reads were
//! down, what the clients saw, and the audit, in the order an operator asks.

use std::fmt::Write as _;

use crate::failover::{FailoverSection, Latency, Window};

pub(super) fn lines(o: &mut String, f: &FailoverSection) {
    if f.no_fault_time {
        o.push_str("fault: no time given (no --fault-at): the windows cover the whole run");
    } else {
        let _ = write!(o, "fault: at {:.3} s", f.fault_at_s);
    }
    if let Some(cmd) = &f.fault_cmd {
        let _ = write!(o, " ({cmd}");
        match f.fault_exit_status {
            Some(0) => {}
            Some(c) => {
                let _ = write!(o, ", exit status {c}");
            }
            None => o.push_str(", no exit status"),
        }
        o.push(')');
    }
    o.push('\n');
    match f.detect_s {
        Some(d) => {
            let since = if f.no_fault_time {
                "the start"
            } else {
                "the fault"
            };
            let _ = writeln!(o, "  first error: {d:.3} s after {since}");
        }
        None => {
            let after = if f.no_fault_time {
                ""
            } else {
                " after the fault"
            };
            let _ = writeln!(o, "  no client saw an error{after}");
        }
    }
    let calm = |w: Option<&Window>, attempted: u64, what: &str| match w {
        None if attempted > 0 => format!(" (no {what} failed or stalled)"),
        w => window(w),
    };
    let _ = writeln!(
        o,
        "  write downtime: {:.3} s{}",
        f.write_downtime_s,
        calm(f.write_window.as_ref(), f.writes.attempted, "write")
    );
    if f.read_window.is_some() || f.reads.attempted > 0 {
        let _ = writeln!(
            o,
            "  read downtime: {:.3} s{}",
            f.read_downtime_s,
            calm(f.read_window.as_ref(), f.reads.attempted, "read")
        );
    }
    if let Some(h) = &f.last_write_old_primary {
        let _ = writeln!(o, "  last write on {}: {:.3} s", h.host, h.at_s);
    }
    if let Some(h) = &f.first_write_new_primary {
        let _ = writeln!(o, "  first write on {}: {:.3} s", h.host, h.at_s);
    }
    let r = &f.reconnects;
    let _ = write!(
        o,
        "  reconnects: {} attempts, {} succeeded",
        r.attempts, r.succeeded
    );
    if let Some(l) = &r.latency_ms {
        let _ = write!(o, " ({})", latency(l));
    }
    o.push('\n');
    if !f.errors.is_empty() {
        let _ = writeln!(o, "  errors: {}", f.errors_by_kind());
    }
    if !f.clients_ended_on.is_empty() {
        let parts: Vec<String> = (f.clients_ended_on.iter())
            .map(|h| format!("{} on {}", h.clients, h.host))
            .collect();
        let _ = writeln!(o, "  clients ended: {}", parts.join(", "));
    }
    for (name, l) in [
        ("before", &f.latency.before),
        ("during", &f.latency.during),
        ("after", &f.latency.after),
    ] {
        if let Some(l) = l {
            let _ = writeln!(o, "  latency {name}: {}", latency(l));
        }
    }
    let w = &f.writes;
    let _ = writeln!(
        o,
        "  writes: {} attempted, {} acknowledged, {} failed, {} unknown",
        w.attempted, w.acknowledged, w.failed, w.unknown
    );
    let r = &f.reads;
    if r.attempted > 0 {
        let _ = writeln!(
            o,
            "  reads: {} attempted, {} succeeded, {} failed",
            r.attempted, r.succeeded, r.failed
        );
    }
    // Where they ran, when that was more than one host (a failover).
    if f.hosts.len() > 1 {
        for h in &f.hosts {
            let _ = writeln!(
                o,
                "    on {}: {} writes, {} reads, {} failed",
                h.host, h.writes, h.reads, h.failed
            );
        }
    }
    match (&f.audited_on, &f.audit_error) {
        (Some(host), _) => {
            let _ = writeln!(
                o,
                "  audit on {host}: {} lost, {} in doubt, {} duplicate, {} unexpected",
                f.lost_writes, f.in_doubt_writes, f.duplicate_writes, f.unexpected_writes
            );
            if !f.lost_seqs.is_empty() {
                let _ = writeln!(o, "    lost: {}", seqs(&f.lost_seqs, f.lost_writes));
            }
        }
        (None, Some(e)) => {
            let _ = writeln!(o, "  audit: not done: {e}");
        }
        (None, None) => {}
    }
}

fn window(w: Option<&Window>) -> String {
    match w {
        Some(w) if w.open => format!(" (from {:.3} s to the end of the run)", w.from_s),
        Some(w) => format!(" (from {:.3} s to {:.3} s)", w.from_s, w.to_s),
        None => String::new(),
    }
}

fn latency(l: &Latency) -> String {
    format!(
        "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {}",
        l.p50_ms, l.p99_ms, l.max_ms, l.count
    )
}

fn seqs(v: &[u64], total: u64) -> String {
    let listed: Vec<String> = v.iter().map(u64::to_string).collect();
    let more = total.saturating_sub(v.len() as u64);
    if more > 0 {
        format!("{} and {more} more", listed.join(" "))
    } else {
        listed.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_says_when_how_long_and_what_was_lost() {
        let mut f = crate::testdata::failover_section();
        f.audit_error = None;
        let mut o = String::new();
        lines(&mut o, &f);
        for want in [
            "fault: at 10.000 s (pg_ctl promote -D /data)\n",
            "  first error: 0.012 s after the fault\n",
            "  write downtime: 1.750 s (from 9.990 s to 11.740 s)\n",
            "  read downtime: 0.500 s",
            "  last write on /tmp/a:5432: 9.990 s\n",
            "  first write on /tmp/b:5433: 11.740 s\n",
            "  reconnects: 9 attempts, 4 succeeded",
            "  errors: 4 terminated by administrator (writes)\n",
            "  clients ended: 4 on /tmp/b:5433\n",
            "  writes: 1004 attempted, 1000 acknowledged, 2 failed, 2 unknown\n",
            "  reads: 1000 attempted, 1000 succeeded, 0 failed\n",
            "    on /tmp/a:5432: 500 writes, 500 reads, 4 failed\n",
            "    on /tmp/b:5433: 500 writes, 500 reads, 0 failed\n",
            "  audit on /tmp/b:5433: 0 lost, 1 in doubt, 0 duplicate, 0 unexpected\n",
        ] {
            assert!(o.contains(want), "{want:?} missing from:\n{o}");
        }
        f.write_window.as_mut().unwrap().open = true;
        f.audited_on = None;
        f.audit_error = Some("the target refused".into());
        let mut o = String::new();
        lines(&mut o, &f);
        assert!(o.contains("(from 9.990 s to the end of the run)"), "{o}");
        assert!(o.contains("  audit: not done: the target refused\n"), "{o}");
        // Reads that never failed nor stalled: no read downtime, and the block says why.
        f.read_window = None;
        f.read_downtime_s = 0.0;
        let mut o = String::new();
        lines(&mut o, &f);
        assert!(
            o.contains("  read downtime: 0.000 s (no read failed or stalled)\n"),
            "{o}"
        );
    }

    #[test]
    fn without_a_fault_time_the_block_does_not_claim_one() {
        let mut f = crate::testdata::failover_section();
        f.no_fault_time = true;
        f.fault_at_s = 0.0;
        f.fault_cmd = None;
        let mut o = String::new();
        lines(&mut o, &f);
        assert!(
            o.starts_with(
                "fault: no time given (no --fault-at): the windows cover the whole run\n"
            ),
            "{o}"
        );
        assert!(
            o.contains("  first error: 0.012 s after the start\n"),
            "{o}"
        );
        assert!(!o.contains("at 0.000 s"), "{o}");
    }
}
