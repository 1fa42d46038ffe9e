//! The timeline: downtime windows, detection, errors per second, reconnects, where clients
//! ended, and latency before, during and after the fault.
//!
//! Downtime is the longest window between two successful completions of the same kind (write
//! or read), anywhere in the run, or from the last success to the end of the run when none
//! followed (then the window is `open`), in which that kind was in trouble: an attempt of the
//! kind failed in it, a client could not reconnect in it, or an attempt of the kind was stuck
//! across it (sent in its first half, not done before its end, and waiting on the server more
//! than ten times the kind's median and at least 100 ms). A window without trouble is the schedule's ordinary interval, not an
//! outage: a kind that never failed nor stalled has no downtime (0, no window), whatever its
//! rate. Counting from completions rather than from the fault is what a user of the system
//! sees: writes that were already stuck when the fault was injected are part of the outage. An
//! outage's window includes one ordinary interval of the probe's rate (at 100 writes/s, 10 ms),
//! which is the resolution of the measurement.
//!
//! Writes and reads are apart throughout ([`Op`], from the workload's
//! `read_only`): a write window is measured from write completions alone, so a primary that
//! turns read-only is write downtime (its writes fail with "read-only transaction") while its
//! reads go on and leave the read window short. Each error is counted with what failed (a
//! write, a read, a reconnection), and each host with the writes and reads its sessions ran.

use std::collections::BTreeMap;

use report::failover::{
    ErrorSecond, HostAttempts, HostClients, HostTime, Latency, Phases, ReadCounts, Reconnects,
    Second, Window, WriteCounts,
};

use crate::{seconds, Attempt, Connect, FailoverSection, Fault, History, Op, Outcome};

/// The section's timeline fields (the audit's are left at zero: see [`crate::audit`]).
/// `hosts` names the target's hosts by index; `end_us` is when the run ended.
pub fn analyse(history: &History, hosts: &[String], fault: &Fault, end_us: u64) -> FailoverSection {
    let mut attempts: Vec<&Attempt> = history.attempts.iter().collect();
    attempts.sort_by_key(|a| (a.end_us, a.start_us, a.client));
    let name = |h: Option<usize>| match h {
        Some(i) => hosts.get(i).cloned().unwrap_or_else(|| format!("host {i}")),
        None => "(none)".to_string(),
    };

    let ok_writes: Vec<&Attempt> = (attempts.iter().copied())
        .filter(|a| matches!(a.op, Op::Write { .. }) && a.outcome == Outcome::Ok)
        .collect();
    let ok_reads: Vec<u64> = (attempts.iter())
        .filter(|a| a.op == Op::Read && a.outcome == Outcome::Ok)
        .map(|a| a.end_us)
        .collect();
    let write_ends: Vec<u64> = ok_writes.iter().map(|a| a.end_us).collect();
    let first_start = attempts.iter().map(|a| a.start_us).min().unwrap_or(0);
    let has_reads = attempts.iter().any(|a| a.op == Op::Read);
    let has_writes = (attempts.iter()).any(|a| matches!(a.op, Op::Write { .. }));
    let is_write = |a: &Attempt| matches!(a.op, Op::Write { .. });
    let is_read = |a: &Attempt| a.op == Op::Read;
    // A run that never writes (select-only) has no write window, not one open all along.
    let write_window = if has_writes {
        let trouble = Trouble::of(&attempts, &history.connects, &is_write);
        outage(&write_ends, first_start, end_us, |f, t| {
            trouble.within(f, t)
        })
    } else {
        None
    };
    let read_window = if has_reads {
        let trouble = Trouble::of(&attempts, &history.connects, &is_read);
        outage(&ok_reads, first_start, end_us, |f, t| trouble.within(f, t))
    } else {
        None
    };

    // The host taking writes when the fault came: that of the last write acknowledged before
    // it (or of the first one at all, for a fault at the very start). With writes on several
    // hosts before the fault (a multi-writer cluster such as Galera) there is no old and new
    // primary to name.
    let mut writers: Vec<Option<usize>> = (ok_writes.iter())
        .filter(|a| a.end_us <= fault.at_us)
        .map(|a| a.host)
        .collect();
    writers.sort_unstable();
    writers.dedup();
    let old = (ok_writes.iter().rev())
        .find(|a| a.end_us <= fault.at_us)
        .or(ok_writes.first())
        .map(|a| a.host)
        .filter(|_| writers.len() <= 1);
    let last_old = old.and_then(|h| ok_writes.iter().rev().find(|a| a.host == h));
    let first_new =
        old.and_then(|h| (ok_writes.iter()).find(|a| a.end_us > fault.at_us && a.host != h));

    // Errors after the fault, from the attempts and the reconnections alike.
    let errors_after = (attempts.iter())
        .filter_map(|a| match a.outcome {
            Outcome::Ok => None,
            Outcome::Failed(_) | Outcome::Unknown(_) => Some(a.end_us),
        })
        .chain(
            (history.connects.iter())
                .filter(|c| c.outcome.is_err())
                .map(|c| c.end_us),
        )
        .filter(|&t| t >= fault.at_us);
    let detect_us = errors_after.min().map(|t| t - fault.at_us);

    // Every second from 0 to the end of the run, so the timeline shows the silence too.
    let mut timeline: Vec<Second> = (0..=(end_us / 1_000_000) as u32)
        .map(|second| Second {
            second,
            ..Second::default()
        })
        .collect();
    let mut per_second: BTreeMap<(u32, &'static str, &'static str), u64> = BTreeMap::new();
    let mut error = |us: u64, op: &'static str, k: &'static str| {
        *per_second
            .entry(((us / 1_000_000) as u32, op, k))
            .or_default() += 1;
    };
    for a in &attempts {
        let op = match a.op {
            Op::Write { .. } => ErrorSecond::WRITE,
            Op::Read => ErrorSecond::READ,
        };
        match (a.outcome, a.op) {
            (Outcome::Ok, Op::Read) => slot(&mut timeline, a.end_us).reads += 1,
            (Outcome::Ok, Op::Write { .. }) => slot(&mut timeline, a.end_us).writes += 1,
            (Outcome::Failed(k) | Outcome::Unknown(k), _) => {
                slot(&mut timeline, a.end_us).errors += 1;
                error(a.end_us, op, k.as_str());
            }
        }
    }
    for c in &history.connects {
        if let Err(k) = c.outcome {
            slot(&mut timeline, c.end_us).errors += 1;
            error(c.end_us, ErrorSecond::RECONNECT, k.as_str());
        }
    }

    // Where each client ended: the host of its last success (an attempt or a reconnection).
    let mut last_host: BTreeMap<u32, (u64, Option<usize>)> = BTreeMap::new();
    let successes = (attempts.iter())
        .filter(|a| a.outcome == Outcome::Ok)
        .map(|a| (a.client, a.end_us, a.host))
        .chain(
            (history.connects.iter())
                .filter(|c| c.outcome.is_ok())
                .map(|c| (c.client, c.end_us, c.host)),
        );
    for (client, at, host) in successes {
        let e = last_host.entry(client).or_insert((at, host));
        if at >= e.0 {
            *e = (at, host);
        }
    }
    let mut ended: BTreeMap<String, u32> = BTreeMap::new();
    for (_, host) in last_host.values() {
        *ended.entry(name(*host)).or_default() += 1;
    }

    // The outage for the latency phases: from the fault to the end of the write window when
    // the window reaches past the fault, else to the first write after the fault.
    // (The read window and reads for a run that only reads.)
    let (outage, ends) = match has_writes {
        true => (&write_window, &write_ends),
        false => (&read_window, &ok_reads),
    };
    let recovered_us = match outage {
        Some((_, to, _)) if *to >= fault.at_us => *to,
        _ => (ends.iter().copied())
            .find(|&t| t > fault.at_us)
            .unwrap_or(end_us),
    };
    let mut before = Vec::new();
    let mut during = Vec::new();
    let mut after = Vec::new();
    for a in attempts.iter().filter(|a| a.outcome == Outcome::Ok) {
        let l = a.end_us.saturating_sub(a.start_us);
        if a.end_us < fault.at_us {
            before.push(l);
        } else if a.end_us <= recovered_us {
            during.push(l);
        } else {
            after.push(l);
        }
    }

    // The counts, and each host's (by index: `None`, no session, is no host).
    let mut writes = WriteCounts::default();
    let mut reads = ReadCounts::default();
    let mut per_host: BTreeMap<usize, HostAttempts> = BTreeMap::new();
    for a in &attempts {
        let ok = a.outcome == Outcome::Ok;
        match a.op {
            Op::Write { .. } => {
                writes.attempted += 1;
                match a.outcome {
                    Outcome::Ok => writes.acknowledged += 1,
                    Outcome::Failed(_) => writes.failed += 1,
                    Outcome::Unknown(_) => writes.unknown += 1,
                }
            }
            Op::Read => {
                reads.attempted += 1;
                match ok {
                    true => reads.succeeded += 1,
                    false => reads.failed += 1,
                }
            }
        }
        if let Some(h) = a.host {
            let e = per_host.entry(h).or_insert_with(|| HostAttempts {
                host: name(Some(h)),
                ..HostAttempts::default()
            });
            match (ok, a.op) {
                (true, Op::Write { .. }) => e.writes += 1,
                (true, Op::Read) => e.reads += 1,
                (false, _) => e.failed += 1,
            }
        }
    }

    let window = |w: Option<(u64, u64, bool)>| {
        w.map(|(from, to, open)| Window {
            from_s: seconds(from),
            to_s: seconds(to),
            open,
        })
    };
    let downtime = |w: &Option<(u64, u64, bool)>| w.map_or(0.0, |(f, t, _)| seconds(t - f));
    let connect_latencies: Vec<u64> = (history.connects.iter())
        .map(|c| c.end_us.saturating_sub(c.start_us))
        .collect();
    FailoverSection {
        fault_at_s: seconds(fault.at_us),
        no_fault_time: false,
        fault_cmd: fault.cmd.clone(),
        fault_exit_status: fault.exit_status,
        detect_s: detect_us.map(seconds),
        write_downtime_s: downtime(&write_window),
        write_window: window(write_window),
        read_downtime_s: downtime(&read_window),
        read_window: window(read_window),
        last_write_old_primary: last_old.map(|a| HostTime {
            host: name(a.host),
            at_s: seconds(a.end_us),
        }),
        first_write_new_primary: first_new.map(|a| HostTime {
            host: name(a.host),
            at_s: seconds(a.end_us),
        }),
        errors: (per_second.into_iter())
            .map(|((second, op, kind), count)| ErrorSecond {
                second,
                op: op.to_string(),
                kind: kind.to_string(),
                count,
            })
            .collect(),
        timeline,
        reconnects: Reconnects {
            attempts: history.connects.len() as u64,
            succeeded: history
                .connects
                .iter()
                .filter(|c| c.outcome.is_ok())
                .count() as u64,
            latency_ms: latency(connect_latencies),
        },
        clients_ended_on: (ended.into_iter())
            .map(|(host, clients)| HostClients { host, clients })
            .collect(),
        latency: Phases {
            before: latency(before),
            during: latency(during),
            after: latency(after),
        },
        writes,
        reads,
        hosts: per_host.into_values().collect(),
        ..FailoverSection::default()
    }
}

/// The timeline's second holding `us`, growing the timeline when an attempt ended after the
/// run's end (a client finishing its last transaction).
fn slot(timeline: &mut Vec<Second>, us: u64) -> &mut Second {
    let i = (us / 1_000_000) as usize;
    if timeline.len() <= i {
        let from = timeline.len() as u32;
        timeline.extend((from..=i as u32).map(|second| Second {
            second,
            ..Second::default()
        }));
    }
    &mut timeline[i]
}

/// The least wait on the server that counts as a stall: a busy machine's ordinary queueing (a
/// read behind a reload and a burst of reconnections on 2 cores waited 47 ms) is not an outage.
const STALL_FLOOR_US: u64 = 100_000;

/// What went wrong for one kind of attempt (writes or reads), to tell an outage from the
/// schedule's ordinary interval: the ends of its failed attempts and of every failed
/// reconnection (a client that cannot reconnect runs neither kind), and its stuck attempts.
struct Trouble {
    /// Ends of failures, sorted.
    failed: Vec<u64>,
    /// `(sent, end)` of attempts of the kind that waited on the server more than ten times the
    /// kind's median and [`STALL_FLOOR_US`] (from when each was sent: a client busy reconnecting after another kind
    /// failed has not sent its attempt, and that wait is not this kind's).
    slow: Vec<(u64, u64)>,
}

impl Trouble {
    fn of(attempts: &[&Attempt], connects: &[Connect], kind: &dyn Fn(&Attempt) -> bool) -> Self {
        let mine: Vec<&Attempt> = attempts.iter().copied().filter(|a| kind(a)).collect();
        let mut failed: Vec<u64> = (mine.iter())
            .filter(|a| a.outcome != Outcome::Ok)
            .map(|a| a.end_us)
            .chain(
                connects
                    .iter()
                    .filter(|c| c.outcome.is_err())
                    .map(|c| c.end_us),
            )
            .collect();
        failed.sort_unstable();
        let waited = |a: &Attempt| a.end_us.saturating_sub(a.sent_us);
        let mut ok: Vec<u64> = (mine.iter())
            .filter(|a| a.outcome == Outcome::Ok)
            .map(|a| waited(a))
            .collect();
        ok.sort_unstable();
        let median = ok.get(ok.len() / 2).copied().unwrap_or(0);
        let slow_us = (10 * median).max(STALL_FLOOR_US);
        let slow = (mine.iter())
            .filter(|a| waited(a) > slow_us)
            .map(|a| (a.sent_us, a.end_us))
            .collect();
        Trouble { failed, slow }
    }

    /// Whether the window from `from` to `to` (`None`: to the end of the record) had a failure
    /// in it, or a slow attempt sent in its first half (or before) and not done before its end.
    fn within(&self, from: u64, to: Option<u64>) -> bool {
        let i = self.failed.partition_point(|&e| e <= from);
        let failed = (self.failed.get(i)).is_some_and(|&e| to.is_none_or(|t| e <= t));
        failed
            || (self.slow.iter()).any(|&(due, end)| match to {
                Some(t) => due <= from + (t - from) / 2 && end >= t,
                None => end > from,
            })
    }
}

/// The longest window in trouble (`troubled(from, to)`, `to` `None` for the tail) between
/// consecutive times in `ends` (sorted), or from the last one to `end_us` (then open). With no
/// times at all, the whole run from `start_us` is one open window. `None` when no window was in
/// trouble. Returns `(from, to, open)`.
fn outage(
    ends: &[u64],
    start_us: u64,
    end_us: u64,
    troubled: impl Fn(u64, Option<u64>) -> bool,
) -> Option<(u64, u64, bool)> {
    let Some(&last) = ends.last() else {
        return (end_us > start_us).then_some((start_us, end_us, true));
    };
    let mut best = (ends.windows(2))
        .filter(|w| troubled(w[0], Some(w[1])))
        .map(|w| (w[0], w[1], false))
        .max_by_key(|&(f, t, _)| (t - f, std::cmp::Reverse(f)));
    if end_us > last && troubled(last, None) {
        let tail = (last, end_us, true);
        if best.is_none_or(|(f, t, _)| end_us - last > t - f) {
            best = Some(tail);
        }
    }
    best
}

/// Exact nearest-rank percentiles of microsecond values, in milliseconds.
fn latency(mut us: Vec<u64>) -> Option<Latency> {
    if us.is_empty() {
        return None;
    }
    us.sort_unstable();
    let n = us.len();
    let at = |p: f64| {
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        us[rank.clamp(1, n) - 1] as f64 / 1e3
    };
    Some(Latency {
        count: n as u64,
        p50_ms: at(50.0),
        p95_ms: at(95.0),
        p99_ms: at(99.0),
        max_ms: us[n - 1] as f64 / 1e3,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Connect, ErrorKind};

    fn w(client: u32, seq: u64, start_ms: u64, end_ms: u64, host: usize, o: Outcome) -> Attempt {
        Attempt {
            client,
            op: Op::Write { seq: Some(seq) },
            start_us: start_ms * 1000,
            end_us: end_ms * 1000,
            sent_us: start_ms * 1000,
            host: Some(host),
            outcome: o,
        }
    }

    fn hosts() -> Vec<String> {
        vec!["old".into(), "new".into()]
    }

    /// Writes every 10 ms on host 0 until 1,000 ms, a fault at 1,000 ms, errors, then writes on
    /// host 1 from 3,000 ms.
    fn promoted() -> History {
        let mut h = History::default();
        let mut seq = 0;
        for t in (10..=1000).step_by(10) {
            seq += 1;
            h.attempts
                .push(w((seq % 2) as u32, seq, t - 2, t, 0, Outcome::Ok));
        }
        seq += 1;
        h.attempts.push(w(
            0,
            seq,
            1005,
            1020,
            0,
            Outcome::Unknown(ErrorKind::AdminShutdown),
        ));
        seq += 1;
        h.attempts.push(w(
            1,
            seq,
            1010,
            1030,
            0,
            Outcome::Failed(ErrorKind::AdminShutdown),
        ));
        for (i, t) in [1100u64, 1500, 2100].into_iter().enumerate() {
            h.connects.push(Connect {
                client: (i % 2) as u32,
                start_us: t * 1000,
                end_us: (t + 1) * 1000,
                host: Some(0),
                outcome: Err(ErrorKind::Refused),
            });
        }
        for c in 0..2 {
            h.connects.push(Connect {
                client: c,
                start_us: 2990 * 1000,
                end_us: 2995 * 1000,
                host: Some(1),
                outcome: Ok(()),
            });
        }
        for t in (3000..=4000).step_by(10) {
            seq += 1;
            h.attempts
                .push(w((seq % 2) as u32, seq, t - 3, t, 1, Outcome::Ok));
        }
        h
    }

    #[test]
    fn a_promotion_reads_as_one_write_window_from_the_last_old_write_to_the_first_new() {
        let fault = Fault {
            at_us: 1_000_000,
            cmd: Some("pg_ctl promote".into()),
            exit_status: Some(0),
        };
        let s = analyse(&promoted(), &hosts(), &fault, 4_500_000);
        assert_eq!(s.fault_at_s, 1.0);
        assert_eq!(s.write_downtime_s, 2.0);
        let win = s.write_window.clone().unwrap();
        assert_eq!((win.from_s, win.to_s, win.open), (1.0, 3.0, false));
        assert_eq!(s.last_write_old_primary.as_ref().unwrap().host, "old");
        let new = s.first_write_new_primary.clone().unwrap();
        assert_eq!((new.host.as_str(), new.at_s), ("new", 3.0));
        // The first error after the fault ended at 1,020 ms.
        assert!((s.detect_s.unwrap() - 0.020).abs() < 1e-9);
        assert_eq!(s.read_downtime_s, 0.0, "no reads, no read window");
        assert!(s.read_window.is_none());
        assert_eq!(s.reconnects.attempts, 5);
        assert_eq!(s.reconnects.succeeded, 2);
        assert_eq!(
            s.clients_ended_on,
            vec![HostClients {
                host: "new".into(),
                clients: 2
            }]
        );
        // Both errors of second 1 by kind, and the refused reconnections of seconds 1 and 2.
        let by: Vec<(u32, &str, &str, u64)> = (s.errors.iter())
            .map(|e| (e.second, e.op.as_str(), e.kind.as_str(), e.count))
            .collect();
        assert_eq!(
            by,
            vec![
                (1, "reconnect", "connection refused", 2),
                (1, "write", "terminated by administrator", 2),
                (2, "reconnect", "connection refused", 1)
            ]
        );
        assert_eq!(
            s.errors_by_kind(),
            "3 connection refused (reconnects), 2 terminated by administrator (writes)"
        );
        // Each host with what ran on it: the old primary its 100 writes and the two that
        // failed there, the new one the 101 after.
        let per_host: Vec<(&str, u64, u64, u64)> = (s.hosts.iter())
            .map(|h| (h.host.as_str(), h.writes, h.reads, h.failed))
            .collect();
        assert_eq!(per_host, vec![("old", 100, 0, 2), ("new", 101, 0, 0)]);
        let w = s.writes;
        assert_eq!(
            (w.attempted, w.acknowledged, w.failed, w.unknown),
            (203, 201, 1, 1)
        );
        assert_eq!(w.attempted, w.acknowledged + w.failed + w.unknown);
        // The timeline covers the whole run, silence included: second 2 had no write.
        assert_eq!(s.timeline.len(), 5);
        assert_eq!(s.timeline[0].writes, 99);
        assert_eq!(s.timeline[2].writes, 0);
        assert_eq!(s.timeline[2].errors, 1);
        assert_eq!(s.timeline[3].writes, 100);
        let t: u64 = s.timeline.iter().map(|x| x.writes).sum();
        assert_eq!(t, w.acknowledged);
        let before = s.latency.before.unwrap();
        assert_eq!((before.count, before.max_ms), (99, 2.0));
        // The write at exactly 1,000 ms and the first one after the outage are "during".
        assert_eq!(s.latency.during.unwrap().count, 2);
        assert_eq!(s.latency.after.unwrap().count, 100);
    }

    #[test]
    fn no_recovery_leaves_the_window_open_to_the_end_of_the_run() {
        let mut h = promoted();
        h.attempts.retain(|a| a.host != Some(1));
        let fault = Fault {
            at_us: 1_000_000,
            ..Fault::default()
        };
        let s = analyse(&h, &hosts(), &fault, 5_000_000);
        let win = s.write_window.unwrap();
        assert_eq!((win.from_s, win.to_s, win.open), (1.0, 5.0, true));
        assert_eq!(s.write_downtime_s, 4.0);
        assert!(s.first_write_new_primary.is_none());
        assert!(s.latency.after.is_none());
    }

    #[test]
    fn reads_get_their_own_window() {
        let mut h = promoted();
        for t in (10..=4000).step_by(10) {
            // Reads stop only between 1,500 and 2,000 ms (a standby kept answering): the
            // read due at 1,495 ms is stuck until 2,000 ms.
            if !(1500..2000).contains(&t) {
                h.attempts.push(Attempt {
                    client: 2,
                    op: Op::Read,
                    start_us: if t == 2000 { 1_495_000 } else { t * 1000 - 500 },
                    sent_us: if t == 2000 { 1_495_000 } else { t * 1000 - 500 },
                    end_us: t * 1000,
                    host: Some(1),
                    outcome: Outcome::Ok,
                });
            }
        }
        let fault = Fault {
            at_us: 1_000_000,
            ..Fault::default()
        };
        let s = analyse(&h, &hosts(), &fault, 4_000_000);
        assert!(
            (s.read_downtime_s - 0.51).abs() < 1e-9,
            "{}",
            s.read_downtime_s
        );
        assert_eq!(s.write_downtime_s, 2.0);
    }

    #[test]
    fn a_run_that_only_reads_has_no_write_window_and_its_phases_follow_the_reads() {
        let mut h = History::default();
        // Reads every 10 ms, but the one due at 995 ms is stuck until 1,500 ms.
        for t in (10..=3000u64)
            .step_by(10)
            .filter(|t| !(1000..1500).contains(t))
        {
            h.attempts.push(Attempt {
                client: 0,
                op: Op::Read,
                start_us: if t == 1500 { 995_000 } else { t * 1000 - 100 },
                sent_us: if t == 1500 { 995_000 } else { t * 1000 - 100 },
                end_us: t * 1000,
                host: Some(0),
                outcome: Outcome::Ok,
            });
        }
        let fault = Fault {
            at_us: 1_000_000,
            ..Fault::default()
        };
        let s = analyse(&h, &hosts(), &fault, 3_000_000);
        assert!(s.write_window.is_none());
        assert_eq!(s.write_downtime_s, 0.0);
        assert!((s.read_downtime_s - 0.51).abs() < 1e-9);
        assert_eq!(s.latency.during.unwrap().count, 1);
        assert_eq!(s.latency.after.unwrap().count, 150);
        assert_eq!(s.writes.attempted, 0);
    }

    /// A primary read-only from 1,000 to 3,000 ms (`default_transaction_read_only`): writes
    /// every 10 ms fail there with 25006 and each failing client reconnects to the same host;
    /// reads every 10 ms (offset by 5) succeed throughout.
    fn read_only_for_two_seconds() -> History {
        let mut h = History::default();
        let mut seq = 0;
        for t in (10..=4000u64).step_by(10) {
            seq += 1;
            let outcome = match (1000..3000).contains(&t) {
                true => Outcome::Failed(ErrorKind::ReadOnly),
                false => Outcome::Ok,
            };
            h.attempts.push(w(0, seq, t - 2, t, 0, outcome));
            if outcome != Outcome::Ok {
                h.connects.push(Connect {
                    client: 0,
                    start_us: t * 1000,
                    end_us: t * 1000 + 500,
                    host: Some(0),
                    outcome: Ok(()),
                });
            }
            h.attempts.push(Attempt {
                client: 1,
                op: Op::Read,
                start_us: (t - 5) * 1000 - 300,
                sent_us: (t - 5) * 1000 - 300,
                end_us: (t - 5) * 1000,
                host: Some(0),
                outcome: Outcome::Ok,
            });
        }
        h
    }

    #[test]
    fn a_read_only_primary_is_write_downtime_and_no_read_downtime() {
        let fault = Fault {
            at_us: 995_000,
            ..Fault::default()
        };
        let s = analyse(&read_only_for_two_seconds(), &hosts(), &fault, 4_000_000);
        // From the last write acknowledged (990 ms) to the first after (3,000 ms).
        let win = s.write_window.clone().unwrap();
        assert_eq!((win.from_s, win.to_s, win.open), (0.99, 3.0, false));
        assert!(
            (s.write_downtime_s - 2.01).abs() < 1e-9,
            "{}",
            s.write_downtime_s
        );
        // Reads went on every 10 ms, none failed nor stalled: no read downtime at all (their
        // intervals are the schedule's, not an outage).
        assert_eq!(s.read_downtime_s, 0.0);
        assert!(s.read_window.is_none());
        // Every error is a write's, of the read-only kind.
        assert!(!s.errors.is_empty());
        assert!(
            (s.errors.iter()).all(|e| e.op == "write" && e.kind == "read-only transaction"),
            "{:?}",
            s.errors
        );
        assert_eq!(s.errors_by_kind(), "200 read-only transaction (writes)");
        assert!((s.detect_s.unwrap() - 0.005).abs() < 1e-9);
        let w = &s.writes;
        assert_eq!(
            (w.attempted, w.acknowledged, w.failed, w.unknown),
            (400, 200, 200, 0)
        );
        let r = &s.reads;
        assert_eq!((r.attempted, r.succeeded, r.failed), (400, 400, 0));
        // Writes never moved: the host that took them before is named, no new one.
        assert_eq!(s.last_write_old_primary.as_ref().unwrap().host, "old");
        assert!(s.first_write_new_primary.is_none());
        assert_eq!(
            s.hosts,
            vec![HostAttempts {
                host: "old".into(),
                writes: 200,
                reads: 400,
                failed: 200
            }]
        );
        // The timeline's seconds 1 and 2 have reads and errors, no write.
        assert_eq!(
            (
                s.timeline[1].writes,
                s.timeline[1].reads,
                s.timeline[1].errors
            ),
            (0, 100, 100)
        );
    }

    #[test]
    fn reads_taken_for_writes_would_have_hidden_the_outage() {
        // The bug this guards against: the same history with its reads recorded as writes
        // (unaudited, `seq: None`) shows a write window of one read interval.
        let mut h = read_only_for_two_seconds();
        for a in &mut h.attempts {
            if a.op == Op::Read {
                a.op = Op::Write { seq: None };
            }
        }
        let s = analyse(&h, &hosts(), &Fault::default(), 4_000_000);
        assert!(s.write_downtime_s < 0.02, "{}", s.write_downtime_s);
        assert_eq!(s.writes.acknowledged, 600);
        assert!(s.read_window.is_none());
    }

    #[test]
    fn reads_and_writes_are_counted_apart_on_the_host_that_ran_them() {
        let mut h = promoted();
        // Reads every 20 ms on the old primary before the fault, a failed one at the fault,
        // then on the new primary.
        for t in (20..=4000u64).step_by(20) {
            let (host, outcome) = if t <= 1000 {
                (0, Outcome::Ok)
            } else if t == 1020 {
                (0, Outcome::Failed(ErrorKind::AdminShutdown))
            } else if t < 3000 {
                continue;
            } else {
                (1, Outcome::Ok)
            };
            h.attempts.push(Attempt {
                client: 2,
                op: Op::Read,
                start_us: t * 1000 - 400,
                sent_us: t * 1000 - 400,
                end_us: t * 1000,
                host: Some(host),
                outcome,
            });
        }
        let fault = Fault {
            at_us: 1_000_000,
            ..Fault::default()
        };
        let s = analyse(&h, &hosts(), &fault, 4_500_000);
        let r = &s.reads;
        assert_eq!((r.attempted, r.succeeded, r.failed), (102, 101, 1));
        assert_eq!(r.attempted, r.succeeded + r.failed);
        // Unchanged by the reads: writes are measured from writes alone.
        assert_eq!(s.write_downtime_s, 2.0);
        assert_eq!(s.writes.acknowledged, 201);
        // The read window: from the last read on the old primary to the first on the new.
        let win = s.read_window.unwrap();
        assert_eq!((win.from_s, win.to_s), (1.0, 3.0));
        let per_host: Vec<(&str, u64, u64, u64)> = (s.hosts.iter())
            .map(|h| (h.host.as_str(), h.writes, h.reads, h.failed))
            .collect();
        assert_eq!(per_host, vec![("old", 100, 50, 3), ("new", 101, 51, 0)]);
        // Every successful attempt is on one host: the hosts add up to the run's counts.
        let served: u64 = s.hosts.iter().map(|h| h.writes + h.reads).sum();
        assert_eq!(served, s.writes.acknowledged + s.reads.succeeded);
        let read_errors = (s.errors.iter())
            .filter(|e| e.op == "read")
            .map(|e| (e.second, e.kind.as_str(), e.count));
        assert_eq!(
            read_errors.collect::<Vec<_>>(),
            vec![(1, "terminated by administrator", 1)]
        );
    }

    #[test]
    fn several_writers_name_no_old_or_new_primary() {
        let mut h = promoted();
        // A write on host 1 before the fault: two writers (a multi-writer cluster).
        h.attempts.push(w(3, 9999, 500, 505, 1, Outcome::Ok));
        let fault = Fault {
            at_us: 1_000_000,
            ..Fault::default()
        };
        let s = analyse(&h, &hosts(), &fault, 4_500_000);
        assert!(s.last_write_old_primary.is_none());
        assert!(s.first_write_new_primary.is_none());
        assert_eq!(s.write_downtime_s, 2.0);
    }

    #[test]
    fn gaps_pick_the_longest_and_the_earliest_of_equals() {
        let any = |_: u64, _: Option<u64>| true;
        assert_eq!(outage(&[], 5, 10, any), Some((5, 10, true)));
        assert_eq!(outage(&[], 5, 5, any), None);
        assert_eq!(outage(&[1, 3, 5], 0, 5, any), Some((1, 3, false)));
        assert_eq!(outage(&[1, 3, 9], 0, 10, any), Some((3, 9, false)));
        assert_eq!(outage(&[1, 3], 0, 10, any), Some((3, 10, true)));
        assert_eq!(outage(&[4], 0, 4, any), None);
        // Only windows in trouble count: the longest quiet one is the schedule's.
        let after_3 = |f: u64, _: Option<u64>| f >= 3;
        assert_eq!(outage(&[1, 3, 4, 9], 0, 9, after_3), Some((4, 9, false)));
        assert_eq!(outage(&[1, 3, 4], 0, 9, after_3), Some((4, 9, true)));
        assert_eq!(outage(&[1, 2], 0, 9, after_3), None);
    }

    #[test]
    fn trouble_is_a_failure_a_failed_reconnection_or_an_attempt_stuck_across_the_window() {
        let read = |start_ms: u64, end_ms: u64, outcome| Attempt {
            client: 0,
            op: Op::Read,
            start_us: start_ms * 1000,
            end_us: end_ms * 1000,
            sent_us: start_ms * 1000,
            host: Some(0),
            outcome,
        };
        let mut reads: Vec<Attempt> = (1..=10)
            .map(|t| read(t * 10 - 1, t * 10, Outcome::Ok))
            .collect();
        // Due at 200 ms, done at 700 ms: stuck across 100..700.
        reads.push(read(200, 700, Outcome::Ok));
        reads.push(read(850, 900, Outcome::Failed(ErrorKind::Timeout)));
        // Due at 1,200 ms but sent at 1,690 ms (its client was reconnecting after a failed
        // write), done at 1,700 ms: late, but the server did not keep it waiting.
        let mut late = read(1200, 1700, Outcome::Ok);
        late.sent_us = 1_690_000;
        reads.push(late);
        let refs: Vec<&Attempt> = reads.iter().collect();
        let connects = [Connect {
            client: 1,
            start_us: 1_000_000,
            end_us: 1_010_000,
            host: None,
            outcome: Err(ErrorKind::Refused),
        }];
        let t = Trouble::of(&refs, &connects, &|a| a.op == Op::Read);
        let ms = |v: u64| v * 1000;
        assert!(!t.within(ms(10), Some(ms(20))), "an ordinary interval");
        assert!(t.within(ms(100), Some(ms(700))), "stuck across it");
        assert!(
            !t.within(ms(100), Some(ms(150))),
            "due after its first half"
        );
        assert!(t.within(ms(800), Some(ms(900))), "a failure ended in it");
        assert!(t.within(ms(950), None), "a failed reconnection in the tail");
        assert!(
            !t.within(ms(1100), Some(ms(1700))),
            "waiting on its own client"
        );
        assert!(!t.within(ms(1700), None), "nothing after");
        // The failed reconnection is nothing to writes: there are none.
        let w = Trouble::of(&refs, &[], &|a| matches!(a.op, Op::Write { .. }));
        assert!(!w.within(0, None));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let l = latency((1..=100).map(|v| v * 1000).collect()).unwrap();
        assert_eq!(
            (l.p50_ms, l.p95_ms, l.p99_ms, l.max_ms),
            (50.0, 95.0, 99.0, 100.0)
        );
        let one = latency(vec![7000]).unwrap();
        assert_eq!((one.p50_ms, one.p99_ms), (7.0, 7.0));
        assert!(latency(vec![]).is_none());
    }

    #[test]
    fn errors_are_sorted_by_sqlstate_and_io_kind() {
        use std::io::ErrorKind as Io;
        assert_eq!(
            ErrorKind::of(Some("57P01"), None, false),
            ErrorKind::AdminShutdown
        );
        assert_eq!(
            ErrorKind::of(Some("25006"), None, false),
            ErrorKind::ReadOnly
        );
        assert_eq!(
            ErrorKind::of(Some("57P03"), None, false),
            ErrorKind::ServerUnavailable
        );
        assert_eq!(
            ErrorKind::of(Some("08006"), None, false),
            ErrorKind::ConnectionLost
        );
        assert_eq!(
            ErrorKind::of(None, Some(Io::ConnectionRefused), false),
            ErrorKind::Refused
        );
        assert_eq!(
            ErrorKind::of(None, Some(Io::NotFound), false),
            ErrorKind::Refused
        );
        assert_eq!(
            ErrorKind::of(None, Some(Io::UnexpectedEof), false),
            ErrorKind::ConnectionLost
        );
        assert_eq!(ErrorKind::of(Some("23505"), None, true), ErrorKind::Timeout);
        assert_eq!(ErrorKind::of(Some("23505"), None, false), ErrorKind::Other);
    }
}
