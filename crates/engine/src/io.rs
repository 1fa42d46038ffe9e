//! How a run's clients wait for the server: the `--io` modes, what `--io auto` picks, and each
//! engine thread's choice of driver for its measured run.
//!
//! * **threads**: one OS thread per client, its socket blocking (`sut::Session::use_blocking`),
//!   the thread's futures driven by [`crate::exec::park_block_on`]. The kernel wakes exactly the
//!   thread whose reply came and the read returns the data: 2.0 system calls per transaction
//!   (`strace -f -c`, 1 client, select-only prepared: one sendto, one recvfrom, no epoll_wait;
//!   epoll makes it 3.0). That wins while the client's thread and its backend each have a core
//!   (1 client on 2 cores: 0.79x pgbench's CPU, 0.73x its wall time); with more clients than
//!   that, threads and backends share the cores and each reply is a context switch, and the
//!   ring does as well or better (the table at [`THREADS_CORES_PER_CLIENT`]). So a mode for a
//!   client or two per machine (a latency test, a CI job), beside the ring.
//! * **uring**: the thread's io_uring ring (`sut::ring`, for either protocol's sessions), one
//!   `io_uring_enter` per wake-up for all of a thread's connections: best with many clients per
//!   thread (bench/IO_MODES.md; on MariaDB, bench/MYSQL.md: 16 clients, point selects, 0.70x
//!   sysbench's CPU per transaction where epoll took 0.90x).
//! * **epoll**: the runtime's epoll, always available (TLS, `-C`, `-R` under auto, a fault run).
//!
//! `--io auto` (the default) picks threads while each client has [`THREADS_CORES_PER_CLIENT`]
//! cores to itself (and at most [`THREADS_MAX_CLIENTS`] in all), unless the run connects per
//! transaction (`-C`), is a fault run (both connect through the runtime, mid-run) or writes `-l`
//! logs per `-j` thread with fewer threads than clients; otherwise each thread takes its ring
//! where it can and epoll where it cannot ([`choose_io`]), as before threads existed. The choice
//! and its reason are in the result (`Outcome::io_choice`, `blocking_threads`).

use workload::Workload;

use crate::worker::{Client, ThreadCtx};
use crate::RunSpec;

/// How engine threads do their sessions' I/O during the measured run (connecting always uses
/// the runtime's epoll).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IoMode {
    /// io_uring (`sut::ring`) where the kernel allows it, every session of the thread is a
    /// plain socket (no TLS, no `-C`) and the run is not rate-limited (`-R`: see `choose_io`);
    /// epoll otherwise.
    #[default]
    Auto,
    /// The runtime's epoll, always.
    Epoll,
    /// io_uring; the run fails before connecting if this machine does not allow it.
    Uring,
    /// One OS thread per client with a blocking socket (`worker`'s "Threads mode"); a thread
    /// whose session cannot block (TLS) runs its client on epoll.
    Threads,
}

/// Whether a run can use `io` (`--io uring` can be refused: io_uring unavailable here, or -C;
/// `--io threads` with -C, a fault run or -l logs fewer than the clients). Callers check it
/// before they connect anything; [`run`] checks it again.
pub fn check_io(io: IoMode, connect_per_txn: bool) -> Result<(), String> {
    if io == IoMode::Threads && connect_per_txn {
        return Err(
            "--io threads cannot be used with -C (connecting goes through epoll); use --io auto"
                .into(),
        );
    }
    if io != IoMode::Uring {
        return Ok(());
    }
    if connect_per_txn {
        return Err(
            "--io uring cannot be used with -C (connecting goes through epoll); use --io auto"
                .into(),
        );
    }
    match sut::ring::unavailable() {
        Some(why) => Err(format!(
            "--io uring: io_uring is not available here ({why}); use --io auto or epoll"
        )),
        None => Ok(()),
    }
}

/// `--io auto` gives every client its own OS thread (`--io threads`) while every client has
/// this many cores to itself: the client's thread and its server backend each run on a core of
/// their own, and the blocking read costs one wake-up per reply. With more clients, threads and
/// backends share cores and every reply is a context switch, which costs more than an event
/// loop's wake-ups. Measured on this 2-core machine, PostgreSQL 15 on the same machine (scale
/// 10), unix socket: `stampede run -S -M prepared -c C -j J -t N -n --no-check --no-observe
/// --io threads|uring` against `pgbench -S -M prepared -c C -j J -t N -n` or the other mode,
/// N = 160,000 or 240,000 transactions / C, each command timed as a whole process (user +
/// system CPU, wall), alternating A B A B, medians of the pairs' ratios over 5 to 8 pairs:
///
/// | clients | threads against | CPU | wall |
/// |---|---|---|---|
/// | 1 | pgbench (`-j 1`) | 0.79x | 0.73x |
/// | 1 | io_uring's against pgbench | 0.98x | 0.99x |
/// | 2 | io_uring, `-j 2` | 1.21x | 1.16x |
/// | 4 | io_uring, `-j 2` | 1.07x | 0.93x |
/// | 8 | io_uring, `-j 2` | 1.16x | 1.01x |
/// | 16 | io_uring, `-j 2` | 1.57x | 1.10x |
///
/// So threads only for a client with two cores to itself (1 client here).
pub const THREADS_CORES_PER_CLIENT: u32 = 2;

/// `--io auto` never gives more clients than this a thread each, whatever the cores: thousands
/// of connections are the event loops' (a thread's stack and its scheduling per connection).
pub const THREADS_MAX_CLIENTS: u32 = 256;

/// The run's I/O after `--io auto` has decided between threads and the event loops (`Auto` left
/// means io_uring or epoll, decided per thread by `worker::choose_io`), and why.
pub(crate) fn resolve_io(spec: &RunSpec, cores: u32) -> (IoMode, Option<String>) {
    let logs_per_thread = spec
        .log
        .as_ref()
        .is_some_and(|_| spec.threads < spec.clients);
    match spec.io {
        IoMode::Threads => (IoMode::Threads, Some("--io threads".into())),
        IoMode::Auto if spec.connect_per_txn || spec.fault_run || logs_per_thread => {
            (IoMode::Auto, None)
        }
        IoMode::Auto
            if spec.clients <= THREADS_MAX_CLIENTS
                && spec.clients * THREADS_CORES_PER_CLIENT <= cores =>
        {
            (
                IoMode::Threads,
                Some(format!(
                    "auto: {} client{} on {cores} cores, {THREADS_CORES_PER_CLIENT} cores per \
                     client run best on a thread each",
                    spec.clients,
                    if spec.clients == 1 { "" } else { "s" }
                )),
            )
        }
        io => (io, None),
    }
}

/// The OS threads a run of `spec` uses for its clients: one per client in threads mode
/// (`--io threads`, or `--io auto`'s choice), else `-j` capped at the clients.
pub fn engine_threads(spec: &RunSpec) -> u32 {
    match resolve_io(spec, cores()).0 {
        IoMode::Threads => spec.clients.max(1),
        _ => spec.threads.clamp(1, spec.clients.max(1)),
    }
}

/// The cores this process may run on.
pub(crate) fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Decide this thread's I/O for the measured run (see [`crate::IoMode`]) and move its sessions
/// onto the ring if it has one. Records the choice in the thread's totals.
pub(crate) fn choose_io<W: Workload>(
    ctx: &ThreadCtx<W>,
    clients: &mut [Client<W::Client>],
) -> Driver {
    if ctx.spec.io == crate::IoMode::Threads {
        let mut sessions = clients
            .iter_mut()
            .flat_map(|c| c.session.iter_mut().chain(c.reader.iter_mut()));
        let mut tot = ctx.totals.borrow_mut();
        if sessions.any(|s| !s.can_block()) {
            tot.epoll_why = Some("TLS sessions stay on epoll".to_string());
            return Driver::Epoll;
        }
        for s in clients
            .iter_mut()
            .flat_map(|c| c.session.iter_mut().chain(c.reader.iter_mut()))
        {
            // On failure the session is marked broken: its client aborts on first use.
            let _ = s.use_blocking(ctx.shared.unblock.clone());
        }
        ctx.timer.use_park();
        tot.blocking_threads += 1;
        return Driver::Park;
    }
    let why = if ctx.spec.io == crate::IoMode::Epoll {
        Some("--io epoll".to_string())
    } else if ctx.spec.io == crate::IoMode::Auto && ctx.spec.rate_tps.is_some() {
        // Measured (issue 4; `-S -c 8 -j 2 -M prepared -R 500`, CPU between the first and last
        // progress lines, 5 alternating rounds): io_uring 74 us per transaction, epoll 62. A
        // rate-limited client sleeps before every transaction and the ring's timed waits cost
        // more per wake-up than epoll's; unthrottled, the ring's batching wins (13% less CPU).
        Some("-R: epoll wakes more cheaply for rate-limited clients".to_string())
    } else if ctx.spec.connect_per_txn {
        Some("-C connects through the runtime".to_string())
    } else if ctx.spec.fault_run {
        Some("a fault run reconnects through the runtime".to_string())
    } else if clients
        .iter()
        .flat_map(|c| c.session.iter().chain(&c.reader))
        .any(|s| !s.can_use_ring())
    {
        Some("TLS sessions stay on epoll".to_string())
    } else {
        None
    };
    let ring = match why {
        Some(w) => Err(w),
        None => sut::ring::Ring::new().map_err(|e| e.to_string()),
    };
    let mut tot = ctx.totals.borrow_mut();
    match ring {
        Ok(r) => {
            for s in clients
                .iter_mut()
                .flat_map(|c| c.session.iter_mut().chain(c.reader.iter_mut()))
            {
                // On failure the session is marked broken: its client aborts on first use.
                let _ = s.use_ring();
            }
            ctx.timer.use_ring();
            tot.ring_threads += 1;
            Driver::Ring(r)
        }
        Err(w) => {
            tot.epoll_why = Some(w);
            Driver::Epoll
        }
    }
}

/// What drives a thread's measured run ([`choose_io`]).
pub(crate) enum Driver {
    /// The runtime's epoll.
    Epoll,
    /// The thread's io_uring ring.
    Ring(sut::ring::Ring),
    /// Threads mode: blocking sockets, [`crate::exec::park_block_on`].
    Park,
}
