//! The receive buffers a thread's ring shares among its sockets: a provided-buffer ring of
//! [`BUFS`] x [`BUF_SIZE`] bytes (see the parent module's header).

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::types;

use super::{BUFS, BUF_SIZE};

pub(super) struct Pool {
    /// The buffer ring (page-aligned, `BUFS` entries) and the buffers. Freed when the ring is
    /// dropped after every receive has ended (see `Ring`'s `Drop`), leaked if that cannot be
    /// confirmed (the kernel could still write into them).
    pub(super) ring: *mut types::BufRingEntry,
    bufs: *mut u8,
    tail: u16,
}

const RING_BYTES: usize = BUFS as usize * std::mem::size_of::<types::BufRingEntry>();

impl Pool {
    pub(super) fn free(self) {
        // SAFETY: both were allocated in `new` with these sizes and nothing refers to them now.
        unsafe {
            libc::munmap(self.ring.cast(), RING_BYTES);
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.bufs,
                BUFS as usize * BUF_SIZE,
            )));
        }
    }
}

impl Pool {
    pub(super) fn new() -> io::Result<Pool> {
        // SAFETY: an anonymous private mapping; checked below.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RING_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ring == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let bufs = Box::leak(vec![0u8; BUFS as usize * BUF_SIZE].into_boxed_slice()).as_mut_ptr();
        let mut p = Pool {
            ring: ring.cast(),
            bufs,
            tail: 0,
        };
        for bid in 0..BUFS {
            p.put(bid);
        }
        Ok(p)
    }

    /// Give buffer `bid` back to the kernel.
    pub(super) fn put(&mut self, bid: u16) {
        let idx = (self.tail & (BUFS - 1)) as usize;
        // SAFETY: idx < BUFS entries of the mapping; the buffer is within the leaked allocation.
        unsafe {
            let e = &mut *self.ring.add(idx);
            e.set_addr(self.bufs.add(bid as usize * BUF_SIZE) as u64);
            e.set_len(BUF_SIZE as u32);
            e.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field of the ring's first entry, written with release ordering so
        // the kernel sees the entry before the new tail.
        unsafe {
            let tail = types::BufRingEntry::tail(self.ring) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }

    pub(super) fn buf(&self, bid: u16, len: usize) -> &[u8] {
        // SAFETY: the kernel wrote `len` <= BUF_SIZE bytes into buffer `bid` and handed it back.
        unsafe { std::slice::from_raw_parts(self.bufs.add(bid as usize * BUF_SIZE), len) }
    }
}
