//! The engine and the TPC-B workload against a real PostgreSQL: the embedded server (one per test,
//! autovacuum off so that nothing but the run commits), loaded with `pgbench -i -s 1`.
//!
//! A test that cannot start a server fails (it never skips silently).
//!
//! The engine's behaviours (`-t`/`-T`, `-R` with lag, `-L` skips, `-P` intervals, `-r`, retries
//! and failures by kind, cancellation, the commit reconciliation) are checked in every way the
//! engine can do its I/O, by one loop over [`io_modes`] in each test (one server per test, the
//! modes one after the other on it): the modes differ only in how a client waits, so every
//! count must come out the same in each.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::{Event, IoMode, Outcome, RunSpec, Stop};
use measure::FailureKind;
use sut::{ConnConfig, QueryMode, Session};
use testkit::{block_on, Pg, THROWAWAY};
use workload::tpcb::{check_tpcb_invariant, Builtin, InvariantReport, TpcbWorkload};
use workload::Streams;

/// A server of its own for each test, `extra` settings last, loaded with `pgbench -i -s 1`.
fn start_pg(extra: &[(&str, &str)]) -> Pg {
    let pg = Pg::start(&[
        THROWAWAY,
        &[("shared_buffers", "64MB"), ("max_connections", "120")],
        extra,
    ]);
    pg.pgbench("postgres", &["-i", "-q", "-s", "1"]);
    pg
}

fn scalar(cfg: &ConnConfig, q: &str) -> i64 {
    block_on(testkit::scalar(cfg, q)).parse().unwrap()
}

/// `stampede reset tpcb`'s effect: balances 0, history empty.
fn reset(cfg: &ConnConfig) {
    block_on(testkit::query(
        cfg,
        "UPDATE pgbench_accounts SET abalance = 0 WHERE abalance <> 0; \
         UPDATE pgbench_tellers SET tbalance = 0 WHERE tbalance <> 0; \
         UPDATE pgbench_branches SET bbalance = 0 WHERE bbalance <> 0; \
         TRUNCATE pgbench_history",
    ));
}

fn invariant(cfg: &ConnConfig) -> InvariantReport {
    block_on(async {
        let mut s = Session::connect(cfg).await.unwrap();
        let r = check_tpcb_invariant(&mut s).await.unwrap();
        s.close().await;
        r
    })
}

fn spec(clients: u32, threads: u32, stop: Stop, mode: QueryMode) -> RunSpec {
    RunSpec {
        seed: 1,
        ..RunSpec::new(clients, threads, stop, mode)
    }
}

/// Every I/O mode a behaviour test runs in: a thread per client on a blocking socket, io_uring
/// (where this machine allows it: `sut::ring`), epoll.
fn io_modes() -> Vec<IoMode> {
    let mut modes = vec![IoMode::Threads, IoMode::Uring, IoMode::Epoll];
    if let Some(why) = sut::ring::unavailable() {
        eprintln!("io_uring is not available here ({why}): its runs are left out");
        modes.retain(|m| *m != IoMode::Uring);
    }
    modes
}

/// The run went through `io` as asked: every engine thread on it.
fn assert_io(out: &Outcome, io: IoMode, ctx: &str) {
    match io {
        IoMode::Threads => {
            assert_eq!(
                out.threads,
                out.clients.len() as u32,
                "{ctx}: a thread per client"
            );
            assert_eq!(
                out.blocking_threads, out.threads,
                "{ctx}: {:?}",
                out.epoll_why
            );
        }
        IoMode::Uring => assert_eq!((out.ring_threads, out.blocking_threads), (out.threads, 0)),
        IoMode::Epoll => {
            assert_eq!((out.ring_threads, out.blocking_threads), (0, 0), "{ctx}");
            assert_eq!(out.epoll_why.as_deref(), Some("--io epoll"), "{ctx}");
        }
        IoMode::Auto => {}
    }
}

fn run(pg: &Pg, spec: &RunSpec, scripts: Vec<(Builtin, u32)>) -> Outcome {
    run_with_cancel(pg, spec, scripts, Arc::new(AtomicBool::new(false)))
}

fn run_with_cancel(
    pg: &Pg,
    spec: &RunSpec,
    scripts: Vec<(Builtin, u32)>,
    cancel: Arc<AtomicBool>,
) -> Outcome {
    let w = Arc::new(TpcbWorkload::new(scripts, 1));
    let mut spec = spec.clone();
    if spec.weights.is_empty() {
        spec.weights = w.weights();
    }
    let mut connected = 0;
    let out = engine::run(
        &spec,
        w,
        &sut::Target::from(pg.conn_config().clone()),
        cancel,
        &mut |e| {
            if let Event::Connected { clients, .. } = e {
                connected = clients;
            }
        },
    )
    .expect("run");
    assert_eq!(connected, spec.clients);
    assert_commit_identity(&out);
    out
}

/// Each committed transaction committed exactly once on the server; nothing else committed
/// except the setup (prepare) — counted on the wire.
fn assert_commit_identity(out: &Outcome) {
    assert_eq!(
        out.total.total().committed() + out.setup_commits,
        out.server_commits,
        "committed + setup commits = server commits"
    );
    // Per endpoint (one here, the server's): the same, and the run's totals are the sums.
    assert_eq!(out.endpoints.len(), 1);
    let e = &out.endpoints[0];
    assert_eq!(e.latency.count(), out.total.total().committed());
    assert_eq!(e.server_commits, out.server_commits);
    assert_eq!(e.setup_commits, out.setup_commits);
    assert_eq!(e.connections, out.connections);
    assert_eq!(e.reconnects, out.reconnects);
    // Every client had its session on the one host, counted once however often it
    // reconnected (-C).
    assert_eq!(e.clients, out.clients.len() as u32);
    for kind in FailureKind::ALL {
        assert_eq!(e.failures_of(kind), out.total.total().failures_of(kind));
    }
}

/// Both I/O paths (epoll, and io_uring where this machine allows it: `sut::ring`) run every
/// builtin in every mode with the same exact counts and invariants.
#[test]
fn every_builtin_in_every_query_mode_commits_exactly_clients_times_t() {
    let pg = start_pg(&[]);
    let (clients, t) = (4u32, 25u64);
    let mut modes = io_modes();
    modes.push(IoMode::Auto);
    for (io, mode) in modes.into_iter().flat_map(|io| {
        [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared].map(|m| (io, m))
    }) {
        let mut builtins = vec![
            Builtin::TpcbLike,
            Builtin::SimpleUpdate,
            Builtin::SelectOnly,
        ];
        if mode != QueryMode::Simple {
            builtins.push(Builtin::TpcbLikePipelined);
        }
        for b in builtins {
            reset(pg.conn_config());
            let out = run(
                &pg,
                &RunSpec {
                    io,
                    ..spec(clients, 2, Stop::Transactions(t), mode)
                },
                vec![(b, 1)],
            );
            let tot = out.total.total();
            let ctx = format!("{b} {mode:?} {io:?}");
            assert_io(&out, io, &ctx);
            if io == IoMode::Auto {
                // 4 clients: a thread each only where each has its cores to itself, and why.
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
                if clients * engine::THREADS_CORES_PER_CLIENT <= cores {
                    assert_eq!(out.blocking_threads, clients, "{ctx}");
                    let why = out.io_choice.as_deref().unwrap_or_default();
                    assert!(why.starts_with("auto: 4 clients on "), "{ctx}: {why}");
                } else {
                    assert_eq!(out.blocking_threads, 0, "{ctx}: {:?}", out.io_choice);
                }
            }
            assert_eq!(tot.committed(), clients as u64 * t, "{ctx}");
            assert_eq!((tot.failed(), tot.skipped, tot.retries), (0, 0, 0), "{ctx}");
            assert!(out.aborted.is_empty(), "{ctx}: {:?}", out.aborted);
            assert!(!out.interrupted);
            assert_eq!(out.intervals.len(), 1, "no -P: one interval");
            assert_eq!(out.connections, clients as u64);
            let setup = if mode == QueryMode::Prepared {
                clients as u64
            } else {
                0
            };
            assert_eq!(
                out.setup_commits, setup,
                "{ctx}: prepare_all commits once per session"
            );
            let history = scalar(pg.conn_config(), "SELECT count(*) FROM pgbench_history");
            let inv = invariant(pg.conn_config());
            match b {
                Builtin::SelectOnly => {
                    assert_eq!(history, 0);
                    assert_eq!(inv.sum_abalance, 0, "{ctx}");
                }
                // Runs only as a script (tests/sharding.rs in the binary's tests).
                Builtin::TpcbSharded => unreachable!("not in the list"),
                Builtin::SimpleUpdate => {
                    assert_eq!(history as u64, tot.committed(), "{ctx}");
                    assert_eq!(inv.sum_abalance, inv.sum_delta, "{ctx}");
                }
                Builtin::TpcbLike | Builtin::TpcbLikePipelined => {
                    assert_eq!(history as u64, tot.committed(), "{ctx}");
                    assert!(inv.passed, "{ctx}: {inv:?}");
                    // The values are pgbench's: each client draws aid, bid, tid, delta in order
                    // from its stream, so the sum of deltas is known in advance.
                    let mut expected = 0i64;
                    for mut c in Streams::new(1, clients)
                        .client_streams()
                        .into_iter()
                        .map(|s| s.func)
                    {
                        for _ in 0..t {
                            c.range(1, 100_000);
                            c.range(1, 1);
                            c.range(1, 10);
                            expected += c.range(-5000, 5000);
                        }
                    }
                    assert_eq!(inv.sum_delta, expected, "{ctx}");
                }
            }
        }
    }
}

#[test]
fn a_weighted_mix_runs_each_type_by_weight_with_per_statement_latencies() {
    let pg = start_pg(&[]);
    for io in io_modes() {
        reset(pg.conn_config());
        weighted_mix_once(&pg, io);
    }
}

fn weighted_mix_once(pg: &Pg, io: IoMode) {
    let mut s = spec(3, 3, Stop::Transactions(200), QueryMode::Prepared);
    s.per_statement = true;
    s.progress = Some(Duration::from_millis(100));
    s.io = io;
    let mut progress = 0;
    let w = Arc::new(TpcbWorkload::new(
        vec![(Builtin::SelectOnly, 3), (Builtin::TpcbLike, 1)],
        1,
    ));
    s.weights = w.weights();
    let out = engine::run(
        &s,
        w,
        &sut::Target::from(pg.conn_config().clone()),
        Arc::new(AtomicBool::new(false)),
        &mut |e| {
            if let Event::Progress(iv) = e {
                assert!(iv.end_us > iv.start_us);
                progress += 1;
            }
        },
    )
    .unwrap();
    let ctx = format!("{io:?}");
    assert_io(&out, io, &ctx);
    assert_commit_identity(&out);
    let sel = &out.total.txns[0];
    let tpcb = &out.total.txns[1];
    assert_eq!(sel.committed() + tpcb.committed(), 600, "{ctx}");
    // Weights 3:1 -> 450:150 expected; binomial sd ~ 10.6.
    assert!(
        (400..500).contains(&sel.committed()),
        "{ctx}: select-only {}",
        sel.committed()
    );
    assert_eq!(
        scalar(pg.conn_config(), "SELECT count(*) FROM pgbench_history") as u64,
        tpcb.committed(),
        "{ctx}"
    );
    // -r: one entry per script line, each statement timed once per committed transaction.
    assert_eq!(sel.statements.len(), 2);
    assert_eq!(tpcb.statements.len(), 11);
    for st in &tpcb.statements {
        assert_eq!(st.latency.count(), tpcb.committed(), "{ctx}");
    }
    // Intervals tile the run: contiguous, the progress ones announced.
    assert_eq!(progress, out.intervals.len() - 1, "{ctx}");
    for pair in out.intervals.windows(2) {
        assert_eq!(pair[0].end_us, pair[1].start_us, "{ctx}");
    }
    let sum: u64 = out.intervals.iter().map(|i| i.total().committed()).sum();
    assert_eq!(sum, 600, "{ctx}");
}

/// Under -T with -P, each interval holds the transactions that ended in it: none is empty, and
/// none holds most of the run (in threads mode a client runs inside one poll of its thread's
/// executor; if it did not let the tick run at the boundary, every transaction would land in
/// the first interval).
#[test]
fn progress_intervals_hold_their_own_transactions_in_every_io_mode() {
    let pg = start_pg(&[]);
    for io in io_modes() {
        let mut s = spec(
            2,
            2,
            Stop::Duration(Duration::from_millis(1500)),
            QueryMode::Prepared,
        );
        s.progress = Some(Duration::from_millis(300));
        s.io = io;
        let out = run(&pg, &s, vec![(Builtin::SelectOnly, 1)]);
        let ctx = format!("{io:?}");
        assert_io(&out, io, &ctx);
        let counts: Vec<u64> = (out.intervals.iter())
            .map(|i| i.total().committed())
            .collect();
        let total: u64 = counts.iter().sum();
        assert_eq!(total, out.total.total().committed(), "{ctx}");
        assert!(counts.len() >= 5, "{ctx}: {counts:?}");
        for (k, c) in counts.iter().enumerate().take(counts.len() - 1) {
            assert!(*c > 0, "{ctx}: interval {k} is empty: {counts:?}");
            assert!(
                2 * c < total,
                "{ctx}: interval {k} holds most of the run: {counts:?}"
            );
        }
    }
}

#[test]
fn rate_with_an_impossible_latency_limit_skips_and_the_counts_add_up() {
    let pg = start_pg(&[]);
    for io in io_modes() {
        let mut s = spec(2, 2, Stop::Transactions(300), QueryMode::Prepared);
        s.rate_tps = Some(50_000.0);
        s.latency_limit = Some(Duration::from_micros(50));
        s.io = io;
        let out = run(&pg, &s, vec![(Builtin::SelectOnly, 1)]);
        assert_io(&out, io, &format!("{io:?}"));
        let t = out.total.total();
        assert_eq!(
            t.scheduled(),
            600,
            "{io:?}: committed + failed + skipped = clients * t"
        );
        eprintln!(
            "-R -L {io:?}: committed {} skipped {} late {} lag {:.0}us",
            t.committed(),
            t.skipped,
            t.late,
            t.lag.mean_us()
        );
        assert!(t.skipped > 0, "{io:?}: some slots were already too late");
        assert!(t.committed() > 0, "{io:?}");
        assert_eq!(
            t.lag.count(),
            t.committed(),
            "{io:?}: lag is recorded for every committed transaction"
        );
        assert!(
            t.late > 0,
            "{io:?}: committed ones slower than 50 us are late"
        );
    }
}

#[test]
fn rate_limit_is_kept_and_latency_includes_the_schedule_lag() {
    let pg = start_pg(&[]);
    for io in io_modes() {
        rate_limit_once(&pg, io);
    }
}

fn rate_limit_once(pg: &Pg, io: IoMode) {
    let mut s = spec(
        4,
        2,
        Stop::Duration(Duration::from_secs(2)),
        QueryMode::Prepared,
    );
    s.rate_tps = Some(200.0);
    s.io = io;
    let out = run(pg, &s, vec![(Builtin::SelectOnly, 1)]);
    assert_io(&out, io, &format!("{io:?}"));
    let t = out.total.total();
    // 200 tps for 2 s: 400 expected, Poisson sd 20.
    assert!(
        (320..480).contains(&t.committed()),
        "committed {}",
        t.committed()
    );
    assert_eq!(t.lag.count(), t.committed());
    eprintln!(
        "-R 200 {io:?}: committed {} lag mean {:.0} us p99 {} us, latency mean {:.0} us",
        t.committed(),
        t.lag.mean_us(),
        t.lag.percentile_us(99.0),
        t.latency.mean_us()
    );
    assert!(t.latency.mean_us() >= t.lag.mean_us());
}

#[test]
fn serialization_failures_are_retried_and_the_invariant_still_holds() {
    let pg = start_pg(&[("default_transaction_isolation", "'repeatable read'")]);
    for io in io_modes() {
        reset(pg.conn_config());
        retries_once(&pg, io);
    }
}

fn retries_once(pg: &Pg, io: IoMode) {
    // Scale 1: one branch row that every tpcb-like transaction updates.
    let (clients, t) = (12u32, 30u64);
    let mut s = spec(clients, 2, Stop::Transactions(t), QueryMode::Prepared);
    s.io = io;
    s.max_tries = 100;
    let out = run(pg, &s, vec![(Builtin::TpcbLike, 1)]);
    let tot = out.total.total();
    assert!(out.aborted.is_empty(), "{io:?}: {:?}", out.aborted);
    assert_io(&out, io, &format!("{io:?}"));
    assert_eq!(tot.committed() + tot.failed(), clients as u64 * t);
    eprintln!(
        "retries {io:?}: committed {} failed {} retries {} retried {}",
        tot.committed(),
        tot.failed(),
        tot.retries,
        tot.retried
    );
    assert!(
        tot.retries > 0,
        "{io:?}: repeatable read on one branch row must conflict"
    );
    assert!(tot.retried > 0 && tot.retried <= tot.retries);
    let inv = invariant(pg.conn_config());
    assert!(inv.passed, "{inv:?}");
    assert_eq!(inv.history_rows as u64, tot.committed());

    // Without retries the conflicts are failures, sorted by kind.
    reset(pg.conn_config());
    s.max_tries = 1;
    let out = run(pg, &s, vec![(Builtin::TpcbLike, 1)]);
    let tot = out.total.total();
    assert_eq!(tot.committed() + tot.failed(), clients as u64 * t);
    assert!(tot.failures_of(FailureKind::Serialization) > 0, "{io:?}");
    assert_eq!(tot.retries, 0);
    assert!(invariant(pg.conn_config()).passed);
    // The host's failures are the run's, by kind.
    assert_commit_identity(&out);
}

#[test]
fn connect_per_transaction_opens_one_session_per_transaction() {
    let pg = start_pg(&[]);
    for mode in [QueryMode::Simple, QueryMode::Prepared] {
        reset(pg.conn_config());
        let mut s = spec(3, 2, Stop::Transactions(10), mode);
        s.connect_per_txn = true;
        let out = run(&pg, &s, vec![(Builtin::TpcbLike, 1)]);
        assert_eq!(out.total.total().committed(), 30);
        assert_eq!(out.reconnects, 30);
        assert_eq!(out.connections, 30);
        assert_commit_identity(&out);
        assert!(out.reconnect_time > Duration::ZERO);
        assert!(invariant(pg.conn_config()).passed);
    }
    // Threads mode blocks on sockets connected before the run: -C is refused before any
    // connection, as for io_uring.
    let err = engine::check_io(IoMode::Threads, true).unwrap_err();
    assert!(err.contains("--io threads cannot be used with -C"), "{err}");
}

#[test]
fn cancellation_finishes_in_flight_transactions_and_returns_a_partial_result() {
    let pg = start_pg(&[]);
    for io in io_modes() {
        reset(pg.conn_config());
        cancellation_once(&pg, io);
    }
}

fn cancellation_once(pg: &Pg, io: IoMode) {
    // Closed loop.
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        c2.store(true, Ordering::SeqCst);
    });
    let started = Instant::now();
    let s = RunSpec {
        io,
        ..spec(
            4,
            2,
            Stop::Duration(Duration::from_secs(60)),
            QueryMode::Prepared,
        )
    };
    let out = run_with_cancel(pg, &s, vec![(Builtin::TpcbLike, 1)], cancel);
    t.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.interrupted, "{io:?}");
    assert_io(&out, io, &format!("{io:?}"));
    let tot = out.total.total();
    assert!(tot.committed() > 0);
    assert_eq!(
        tot.failed(),
        0,
        "{io:?}: in-flight transactions finish, they are not cut"
    );
    assert!(invariant(pg.conn_config()).passed);

    // Clients sleeping until a far scheduled start wake up at once.
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c2.store(true, Ordering::SeqCst);
    });
    let started = Instant::now();
    let mut s = spec(
        2,
        1,
        Stop::Duration(Duration::from_secs(60)),
        QueryMode::Prepared,
    );
    s.rate_tps = Some(0.01);
    s.io = io;
    let out = run_with_cancel(pg, &s, vec![(Builtin::SelectOnly, 1)], cancel);
    t.join().unwrap();
    assert!(out.interrupted);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn server_commits_reconcile_with_pg_stat_database() {
    let pg = start_pg(&[]);
    let q = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()";
    // Let the load's backends flush their statistics.
    std::thread::sleep(Duration::from_millis(1500));
    let before = scalar(pg.conn_config(), q);
    let mut s = spec(4, 2, Stop::Transactions(50), QueryMode::Prepared);
    s.max_tries = 1;
    let mut out = run(
        &pg,
        &s,
        vec![(Builtin::TpcbLike, 1), (Builtin::SelectOnly, 1)],
    );
    // The same in every I/O mode: what the wire counted is what the server committed.
    for io in io_modes() {
        let o = run(
            &pg,
            &RunSpec { io, ..s.clone() },
            vec![(Builtin::TpcbLike, 1), (Builtin::SelectOnly, 1)],
        );
        assert_io(&o, io, &format!("{io:?}"));
        out.server_commits += o.server_commits;
        out.connections += o.connections;
    }
    s.mode = QueryMode::Simple;
    let out2 = run(&pg, &s, vec![(Builtin::SimpleUpdate, 1)]);
    out.server_commits += out2.server_commits;
    out.connections += out2.connections;
    // Every observer session costs 2: its start-up transaction and its query. The run's backends
    // flush their statistics when they exit, shortly after the run returns.
    let expected =
        |polls: i64| before + 2 + out.server_commits as i64 + out.connections as i64 + 2 * polls;
    let mut polls = 0;
    let mut after;
    loop {
        std::thread::sleep(Duration::from_millis(500));
        after = scalar(pg.conn_config(), q);
        if after >= expected(polls) || polls >= 10 {
            break;
        }
        polls += 1;
    }
    eprintln!(
        "xact: before {before} after {after} polls {polls} server {} conns {}",
        out.server_commits, out.connections
    );
    assert_eq!(
        after,
        expected(polls),
        "xact_commit delta = server commits + session start-ups"
    );
}
