//! Counting allocations on the hot path: a test binary installs [`CountingAlloc`] as its global
//! allocator (`#[global_allocator] static A: testkit::CountingAlloc = testkit::CountingAlloc;`)
//! and measures a closure with [`counted`]. Only the calling thread's allocations inside the
//! closure count (a current-thread runtime runs the session on it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct CountingAlloc;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call is passed to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

/// Run `f`; its result and the allocations (and reallocations) it made on this thread.
pub fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCS.load(Ordering::Relaxed);
    ON.with(|c| c.set(true));
    let r = f();
    ON.with(|c| c.set(false));
    (r, ALLOCS.load(Ordering::Relaxed) - before)
}

/// Allocations counted so far (for code that cannot sit in a closure: an `.await` inside an
/// async block); with [`count_allocations`].
pub fn allocations() -> u64 {
    ALLOCS.load(Ordering::Relaxed)
}

/// Start (`true`) or stop counting this thread's allocations.
pub fn count_allocations(on: bool) {
    ON.with(|c| c.set(on));
}
