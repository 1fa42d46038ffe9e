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
mod tests;
