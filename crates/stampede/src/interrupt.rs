//! Ctrl-C: the first SIGINT (or SIGTERM) asks every phase to stop cleanly — the engine finishes
//! in-flight transactions and returns a partial result, the loader aborts its COPYs — so results
//! gathered so far are printed and saved and the embedded server is stopped and removed. A third
//! signal exits at once.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static COUNT: AtomicU32 = AtomicU32::new(0);

/// The shared cancellation flag handed to the engine and the loader.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

pub fn requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Interrupts received so far: a step that began after some can tell a new one
/// (`run::after`).
pub fn count() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only async-signal-safe work here: atomics and write(2).
    let n = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(f) = FLAG.get() {
        f.store(true, Ordering::SeqCst);
    }
    let msg: &[u8] = if n >= 3 {
        b"\nstampede: interrupted three times, exiting now\n"
    } else {
        b"\nstampede: interrupted, finishing in-flight work (Ctrl-C twice more to exit at once)\n"
    };
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        if n >= 3 {
            libc::_exit(130);
        }
    }
}

pub fn install() {
    let _ = flag();
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}
