//! The run's description and its result, as the caller sees them: when it stops ([`Stop`]),
//! what it runs ([`RunSpec`], [`Spread`]), what it reports while running ([`Event`]) and at the
//! end ([`Outcome`], [`ClientStats`], [`Abort`]), and why it could not run ([`RunError`]).

use std::time::{Duration, Instant, SystemTime};

use measure::Interval;
use sut::QueryMode;

use crate::{EndpointStats, IoMode, LogSpec, ReadFrom};

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `-T`: measured seconds (connecting is not counted).
    Duration(Duration),
    /// `-t`: transactions per client.
    Transactions(u64),
}

impl Stop {
    /// No count and no time: each client runs until its workload's timetable is over
    /// (`workload::Due::Done`, a replayed session's last statement).
    pub const UNTIL_DONE: Stop = Stop::Transactions(u64::MAX);
}

/// Everything the engine needs to know about a run, validated by the caller.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub clients: u32,
    pub threads: u32,
    pub stop: Stop,
    /// `-R`: target transactions per second across all clients (Poisson arrivals per client).
    pub rate_tps: Option<f64>,
    /// `-L`: with `-R`, transactions already this late when due are skipped; committed ones slower
    /// than this are counted late.
    pub latency_limit: Option<Duration>,
    pub mode: QueryMode,
    /// `--max-tries` (pgbench's default 1: no retries). 0 means unlimited (only allowed with `-T`).
    pub max_tries: u32,
    /// `-C`: a new connection for every transaction, its time included in latency (as pgbench).
    pub connect_per_txn: bool,
    /// `-P`: progress interval.
    pub progress: Option<Duration>,
    /// Base seed of every random stream (`--random-seed`).
    pub seed: u64,
    /// `-r`: per-statement latencies.
    pub per_statement: bool,
    /// Weight of each transaction type (pgbench `-b name@weight`), same order as `txn_types()`.
    /// Empty means 1 each.
    pub weights: Vec<u32>,
    /// `-l`: per-thread transaction logs (see [`LogSpec`]); `None`: no logging (one branch per
    /// transaction).
    pub log: Option<LogSpec>,
    /// `--exit-on-abort`: when one client aborts, stop the whole run (pgbench: "exit immediately
    /// when any client is aborted"); in-flight transactions of the others still finish.
    pub exit_on_abort: bool,
    /// `--io`: how the measured run's sessions do their I/O.
    pub io: IoMode,
    /// pgbench's `--verbose-errors`: each retryable error, and whether its transaction is
    /// tried again, reported as it happens ([`Event::Info`]).
    pub verbose_errors: bool,
    /// With several hosts: which host each client connects to first (`--spread`).
    pub spread: Spread,
    /// A fault run (`--fault-at`, `stampede failover`): clients reconnect after their session
    /// breaks instead of aborting, and every attempt is recorded in [`Outcome::history`]
    /// (`fault` module).
    pub fault_run: bool,
    /// `--read-from`: read-only transactions on a reader session, the rest on a writer (see
    /// `route`); `None`: every transaction on the client's one session.
    pub read_from: Option<ReadFrom>,
    /// A fleet run (`--fleet`): the global id of this process's first client, so that ids (a
    /// script's `:client_id`, the `-l` logs, aborts) are unique across the fleet's processes.
    /// 0 for a run alone.
    pub first_client_id: u32,
    /// A fleet run: the instant, on this process's clock, of the fleet's common start. Clients
    /// connect first, then wait for it at the barrier, so every process's `t0` is this instant
    /// (or, when connecting took longer, as soon as connected). `None`: start when connected.
    pub start_at: Option<Instant>,
    /// Where the worker threads say what happens to their clients (aborts, server notices,
    /// `--verbose-errors`' lines) as it happens, on their own thread. pgbench prints these from
    /// the thread that meets them, so they fall in order with what a workload prints itself
    /// (its `--debug` trace: "sending ...", then "got an error", then the retry's "sending").
    /// `None`: they reach the caller's `on_event` through the coordinator, which may print
    /// them after lines the workers wrote since.
    pub say: Option<Say>,
}

/// A sink for [`RunSpec::say`]: called on a worker thread with [`Event::Aborted`],
/// [`Event::Notice`] and [`Event::Info`] only.
#[derive(Clone)]
pub struct Say(pub std::sync::Arc<dyn Fn(Event<'_>) + Send + Sync>);

impl std::fmt::Debug for Say {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Say(..)")
    }
}

impl RunSpec {
    /// `clients` clients on `threads` threads until `stop`, in `mode`, and every other field at
    /// what a command line gives when no flag says otherwise: no rate, no retries, no
    /// progress, seed 0, no per-statement latencies, no log, the I/O the engine picks. A caller
    /// sets what it needs with `RunSpec { seed: 7, ..RunSpec::new(...) }`.
    pub fn new(clients: u32, threads: u32, stop: Stop, mode: QueryMode) -> RunSpec {
        RunSpec {
            clients,
            threads,
            stop,
            rate_tps: None,
            latency_limit: None,
            mode,
            max_tries: 1,
            connect_per_txn: false,
            progress: None,
            seed: 0,
            per_statement: false,
            weights: Vec::new(),
            log: None,
            exit_on_abort: false,
            io: IoMode::Auto,
            verbose_errors: false,
            spread: Default::default(),
            fault_run: false,
            read_from: None,
            first_client_id: 0,
            start_at: None,
            say: None,
        }
    }
}

/// How clients are placed over a target's hosts (stampede's `--spread`). Each client still
/// goes on through the rest of the host list, as libpq does, when its first host refuses it
/// (down, or not what `target_session_attrs` asks for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spread {
    /// Client `i` starts at host `i mod n`: the clients are spread evenly (the default).
    #[default]
    RoundRobin,
    /// Each client starts at a host drawn from the run's seed.
    Random,
    /// Every client starts at the first host (libpq's order, as pgbench connects).
    First,
}

impl Spread {
    /// The host client `client` tries first, of `hosts`.
    pub fn first_host(self, client: u32, hosts: usize, seed: u64) -> usize {
        if hosts <= 1 {
            return 0;
        }
        match self {
            Spread::RoundRobin => client as usize % hosts,
            Spread::First => 0,
            Spread::Random => {
                // SplitMix64 of (seed, client): a fixed, seed-reproducible placement.
                let mut z = seed ^ (u64::from(client) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) % hosts as u64) as usize
            }
        }
    }
}

/// What the engine tells its caller while running (on the caller's thread, through a callback).
#[derive(Debug)]
pub enum Event<'a> {
    /// All initial connections are open and the clients wait: what must see the server
    /// before their first statement (the observer's baseline) happens now, briefly; the
    /// measured run's time starts after it.
    Starting,
    /// All initial connections are open; the measured run starts now.
    Connected { clients: u32, elapsed: Duration },
    /// One progress interval (`-P`), merged across threads: every full tick, in order. The last,
    /// partial interval of the run is not announced (it is the last of [`Outcome::intervals`]).
    Progress(&'a Interval),
    /// A client stopped for good, as it happens (pgbench prints "client N aborted ..." then,
    /// not at the end); it is also in [`Outcome::aborted`].
    Aborted(&'a Abort),
    /// The server sent a client a notice or warning (a NoticeResponse), as it arrives.
    Notice(&'a sut::DbError),
    /// Something said for information (pgbench's `pg_log_info`): `--verbose-errors`' lines.
    Info(&'a str),
}

/// One client's share of the run: its committed transactions and the time they took (from
/// their actual start; sysbench's "threads fairness" is made of these).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClientStats {
    pub client_id: u32,
    pub committed: u64,
    pub busy_us: u64,
    /// The host (index into the target's hosts) the client's session is on; `None` when it
    /// never connected. After the run, the last session's (`-C`, or a fault run's
    /// reconnection, may have moved it): what each host served is counted per transaction in
    /// [`EndpointStats`](crate::EndpointStats), not from this. With `--read-from`, the writer's.
    pub endpoint: Option<usize>,
    /// With `--read-from`: the host of the client's reader session, if it has one.
    pub reader_endpoint: Option<usize>,
    /// With `--read-from`: the part of `committed` that ran on the reader (the rest ran on
    /// `endpoint`).
    pub reader_committed: u64,
    /// When the client's first transaction started and its last one ended, microseconds
    /// from the measured start (TPC-H's throughput test is measured from its streams' first
    /// query to their last, clause 5.3.7); `None` for a client that ran none.
    pub first_us: Option<u64>,
    pub last_us: u64,
}

/// A client that stopped for good before the end of the run (pgbench: "client N aborted").
#[derive(Clone, Debug)]
pub struct Abort {
    pub client_id: u32,
    /// Redacted message.
    pub reason: String,
    /// Where in the workload's source it failed (`file:line: command`), when it can say.
    pub at: Option<String>,
}

#[derive(Debug)]
pub struct Outcome {
    /// Wall-clock start of the measured run.
    pub started_at: SystemTime,
    /// Time spent opening the initial connections (excluded from tps).
    pub connect_time: Duration,
    /// Every interval (of length `-P` when given, else the whole run in one), in order.
    pub intervals: Vec<Interval>,
    /// All intervals merged.
    pub total: Interval,
    pub aborted: Vec<Abort>,
    /// True when the run was cut short by cancellation.
    pub interrupted: bool,
    /// Committed server transactions over every session of the run, counted on the wire
    /// (`sut::Session::server_commits`; connection start-up is not counted there).
    pub server_commits: u64,
    /// COMMIT statements that committed, per endpoint of the target (index into its hosts): on
    /// MySQL each node's `Com_commit` counts these (and the COMMITs that failed certification).
    pub endpoint_commits: Vec<u64>,
    /// COMMIT statements that failed, per endpoint (a Galera conflict).
    pub endpoint_failed_commits: Vec<u64>,
    /// The part of `server_commits` made outside measured transactions (`on_connect`, ROLLBACK
    /// after an error). `total.total().committed() + setup_commits == server_commits`.
    pub setup_commits: u64,
    /// Every client session's statements, by kind, as the server acknowledged them on the
    /// wire (`sut::Session::tally`; setup included): the client's side of the statement
    /// ledger. Readers' sessions included.
    pub tally: measure::ledger::Tally,
    /// The part of `tally` the workload's `on_connect` sent (statement setup, not
    /// transactions).
    pub setup_tally: measure::ledger::Tally,
    /// `-C`: connections opened during the measured run (one per transaction).
    pub reconnects: u64,
    /// `-C`: time spent opening and closing them; not part of any latency (pgbench 14+ reports it
    /// as "average connection time").
    pub reconnect_time: Duration,
    /// Sessions opened (initial ones and `-C` ones). Each costs the server one start-up
    /// transaction, which `pg_stat_database.xact_commit` counts and `server_commits` does not:
    /// `xact_commit` delta over the run = `server_commits + connections` (plus whatever the
    /// observer's own sessions commit).
    pub connections: u64,
    /// Engine threads actually used (`threads` capped at `clients`).
    pub threads: u32,
    /// Initial connections opened before the measured run (0 under `-C`); with
    /// `connect_time`, the connection setup rate.
    pub initial_connections: u64,
    /// Most connection attempts in flight while opening them: [`CONNECT_CONCURRENCY`] per
    /// thread.
    pub connect_concurrency: u32,
    /// Connection attempts retried because the server's listen queue was full (a unix socket's
    /// `connect` fails with EAGAIN then); each waits 1-100 ms, at most 30 s in all per
    /// connection.
    pub connect_retries: u64,
    /// Engine threads whose measured run did its I/O through io_uring (the rest used epoll).
    pub ring_threads: u32,
    /// Why a thread used epoll, when one did.
    pub epoll_why: Option<String>,
    /// Engine threads whose client ran on a blocking socket (`--io threads`, or auto's choice).
    pub blocking_threads: u32,
    /// Why the run used a thread per client, when it did (`--io threads`, or auto's reason).
    pub io_choice: Option<String>,
    /// Transactions given up in flight because the run ended while their client was still
    /// waiting for the server 5 s after `-T`'s deadline or 100 ms after Ctrl-C
    /// (`crate::cutoff`): counted neither
    /// committed nor failed. Each may still commit on the server (at most once): the commit
    /// check treats that many surplus server commits as in doubt.
    pub abandoned: u64,
    /// Every client's committed transactions and busy time, by client id.
    pub clients: Vec<ClientStats>,
    /// A fault run's record of every transaction and reconnection attempt, in no particular
    /// order; empty in other runs.
    pub history: measure::attempts::History,
    /// Per endpoint of the target (index into its hosts; every host listed): latency, failures,
    /// sessions, re-connections and commits of the sessions on it ([`EndpointStats`]).
    pub endpoints: Vec<EndpointStats>,
    /// A timetable's lag, split between the server and the client ([`ScheduleLag`]); all
    /// zero for a run without one.
    pub schedule: ScheduleLag,
}

/// How late a timetable's transactions started (a replayed capture's, `workload::Due::At`),
/// and whose the lateness was: the *server*'s when the client was still waiting for the
/// answer to its previous transaction at the time the next was due (a replayed session sends
/// one statement at a time, as the captured one did); the *client*'s from the time it was
/// free to the time it started (its thread busy with other clients, its timer late). pgreplay
/// prints one "Execution is N minutes behind schedule" for both. A transaction may also be
/// *held* by an order between clients (`workload::Order`, a replay's `--order strict`):
/// waiting for other sessions' earlier statements is neither the server's slowness on this
/// session nor the client's own, and is counted apart, with or without a timetable. Identity:
/// `late_server_us + late_client_us + held_us` (the holds of due transactions) is the sum of
/// every due transaction's lag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleLag {
    /// Transactions started from the timetable.
    pub due: u64,
    /// Of those, the ones that started more than [`ScheduleLag::LATE_US`] late.
    pub late: u64,
    pub late_server_us: u64,
    pub late_client_us: u64,
    pub max_server_us: u64,
    pub max_client_us: u64,
    /// Transactions held by an order between clients, and for how long.
    pub held: u64,
    pub held_us: u64,
    pub max_held_us: u64,
}

impl ScheduleLag {
    /// Lateness below this is the timer's and the loop's ordinary grain, not a late start.
    pub const LATE_US: u64 = 1_000;

    /// One transaction due at `at`, its client free at `free`, started at `start` (all
    /// microseconds from the measured start), of which `held` µs it waited for an order
    /// between clients ([`ScheduleLag::hold`], counted there).
    pub fn add(&mut self, at: u64, free: u64, start: u64, held: u64) {
        self.due += 1;
        let server = free.saturating_sub(at);
        let client = start.saturating_sub(at.max(free)).saturating_sub(held);
        if server + client + held > Self::LATE_US {
            self.late += 1;
        }
        self.late_server_us += server;
        self.late_client_us += client;
        self.max_server_us = self.max_server_us.max(server);
        self.max_client_us = self.max_client_us.max(client);
    }

    /// One transaction held `us` by an order between clients.
    pub fn hold(&mut self, us: u64) {
        self.held += 1;
        self.held_us += us;
        self.max_held_us = self.max_held_us.max(us);
    }

    pub fn merge(&mut self, o: &ScheduleLag) {
        self.held += o.held;
        self.held_us += o.held_us;
        self.max_held_us = self.max_held_us.max(o.max_held_us);
        self.due += o.due;
        self.late += o.late;
        self.late_server_us += o.late_server_us;
        self.late_client_us += o.late_client_us;
        self.max_server_us = self.max_server_us.max(o.max_server_us);
        self.max_client_us = self.max_client_us.max(o.max_client_us);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Initial connections failed (first error, redacted), nothing was measured.
    #[error("cannot open the initial connections: {0}")]
    Connect(sut::Error),
    #[error("cannot start engine threads: {0}")]
    Threads(std::io::Error),
    /// The spec or the workload cannot run as given (no clients, weights that do not match the
    /// transaction types or sum to zero, a query mode the workload cannot use).
    #[error("{0}")]
    Invalid(String),
    /// A `-l` log file cannot be created.
    #[error("could not open logfile \"{path}\": {source}")]
    Log {
        path: String,
        source: std::io::Error,
    },
}
