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
