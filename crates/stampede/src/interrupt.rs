//! Ctrl-C and SIGTERM, alike (`timeout` and systemd stop a process with SIGTERM):
//! - The first asks every phase to stop cleanly: the engine finishes or cuts off the
//!   transactions in flight and returns a partial result, which is printed and saved; the
//!   loader aborts its COPYs and drops what it half made; a setup step before the run, waiting
//!   on the server (a connection attempt to a server that accepts and never answers), is
//!   abandoned at once ([`or_interrupted`]); the checks after a run the signal cut short run
//!   to their end (they verify the partial result), and a signal that comes while the checks
//!   run ends them, each "not verified", the result kept (`families::after`, through [`count`]);
//!   the embedded server is stopped and its directory removed as after any run. Exit 130.
//! - The second stops now, on the signal thread: the embedded servers are stopped at once
//!   (PostgreSQL's immediate shutdown, SIGKILL for MariaDB; SIGKILL for whatever is left after
//!   [`GRACE`], or at a third signal) and their temporary directories removed, a directory that
//!   cannot be removed named (`pg::embedded::last_resort`). Exit 130; nothing more is printed
//!   or saved.
//!
//! ## Shape
//! SIGINT and SIGTERM are blocked in every thread (the mask is set by [`install`], first thing
//! in `main`, and threads inherit it; programs we start get an empty mask from std's spawn) and
//! taken by one thread of ours with sigwait(2). What happens on a signal is then ordinary code,
//! not a handler's async-signal-safe subset: it can lock the registry of embedded servers, wait
//! for them and remove directories. The handler this replaces could only `_exit`, leaving the
//! embedded server running and its directory (870 MB after a load at scale 100) in TMPDIR.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::console::{Failure, EXIT_INTERRUPTED};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Set when the engine starts ([`measuring`]): from then on there is a result to keep, and a
/// signal no longer abandons a step.
static MEASURING: AtomicBool = AtomicBool::new(false);

/// The number of signals so far, for the futures that [`or_interrupted`] races.
static SIGNALS: LazyLock<watch::Sender<u32>> = LazyLock::new(|| watch::channel(0).0);

/// Held by the signal thread from the second signal until it exits the process, and taken by
/// [`exit`]: the main thread must not end the process while the embedded servers are being
/// stopped, or they would outlive it.
static LAST_RESORT: Mutex<()> = Mutex::new(());

/// How long the embedded servers get to stop after the second signal before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// The shared cancellation flag handed to the engine and the loader.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

pub fn requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Signals received so far: a step that began after some can tell a new one (`families::after`).
pub fn count() -> u32 {
    *SIGNALS.borrow()
}

/// The engine starts: from now on a signal must not abandon a step (module header).
pub fn measuring() {
    MEASURING.store(true, Ordering::SeqCst);
}

/// `fut`, unless SIGINT or SIGTERM arrives while it runs before the engine started: then it is
/// dropped (its connection closed) and the error says so, with the exit code 130. For setup
/// steps, which measure nothing and leave nothing half done: dropping the engine's or the
/// loader's future would lose a result or leave a half-loaded table, and once the engine ran,
/// the steps after it complete a result that the first signal must keep. A signal that arrived
/// before the call does not count either.
pub async fn or_interrupted<T>(fut: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    if MEASURING.load(Ordering::SeqCst) {
        return fut.await;
    }
    let mut signals = SIGNALS.subscribe();
    tokio::select! {
        r = fut => r,
        _ = signals.changed() => Err(Failure::interrupted(
            "interrupted while waiting for the server",
        )),
    }
}

/// Block SIGINT and SIGTERM in this thread (and so in every thread started after) and start
/// the thread that takes them. Call before any other thread exists.
pub fn install() {
    let _ = flag();
    let set = signal_set();
    // SAFETY: set is a valid, initialised sigset_t; the old mask is not asked for.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "pthread_sigmask");
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || take_signals(set))
        .expect("cannot start the signal thread");
}

/// End the process with `code`, unless the signal thread is stopping the embedded servers: then
/// wait for it, which ends the process itself.
pub fn exit(code: i32) -> ! {
    let _wait = LAST_RESORT.lock();
    std::process::exit(code)
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before sigaddset reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        set
    }
}

fn take_signals(set: libc::sigset_t) {
    let mut count = 0;
    loop {
        let mut sig = 0;
        // SAFETY: set is initialised and blocked in this thread; sig is written by sigwait.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            continue;
        }
        count += 1;
        if count == 1 {
            flag().store(true, Ordering::SeqCst);
            SIGNALS.send_modify(|n| *n += 1);
            eprintln!(
                "\nstampede: interrupted ({}), finishing in-flight work (interrupt again to stop \
                 at once)",
                name(sig)
            );
            continue;
        }
        SIGNALS.send_modify(|n| *n += 1);
        stop_now(&set, sig);
    }
}

/// The second signal: stop the embedded servers, remove their directories, exit 130.
fn stop_now(set: &libc::sigset_t, sig: libc::c_int) -> ! {
    // Never released: the process ends here.
    let _held = LAST_RESORT.lock();
    eprintln!(
        "\nstampede: interrupted again ({}), stopping at once",
        name(sig)
    );
    let problems = sut::embedded::last_resort::stop_all(GRACE, &mut |wait| more(set, wait));
    for p in problems {
        eprintln!("stampede: {p}");
    }
    // SAFETY: _exit ends the process without running other threads' destructors, which may be
    // halfway through the same servers.
    unsafe { libc::_exit(EXIT_INTERRUPTED) }
}

/// Wait up to `wait` for one more signal (a third: hurry).
fn more(set: &libc::sigset_t, wait: Duration) -> bool {
    let timeout = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    // SAFETY: set and timeout are valid; no siginfo is asked for.
    unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &timeout) > 0 }
}

fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        _ => "SIGINT",
    }
}
