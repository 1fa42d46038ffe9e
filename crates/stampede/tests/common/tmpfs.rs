//! Small tmpfs mounts for the output tests: a read-only file system, a full disk. Mounting needs
//! root (CI runs as root): elsewhere [`Tmpfs::mount`] says why it skips and returns `None`; under
//! CI it fails the test instead.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs of `kib` KiB on a new directory, read-only when asked.
    pub fn mount(kib: u64, read_only: bool) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let fs = CString::new("tmpfs").unwrap();
        let at = CString::new(dir.path().as_os_str().as_bytes()).unwrap();
        let opts = CString::new(format!("size={kib}k,mode=0755")).unwrap();
        let flags = if read_only { libc::MS_RDONLY } else { 0 };
        // SAFETY: NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::mount(
                fs.as_ptr(),
                at.as_ptr(),
                fs.as_ptr(),
                flags,
                opts.as_ptr().cast(),
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            assert!(
                std::env::var_os("CI").is_none(),
                "cannot mount a tmpfs, which CI (as root) must: {e}"
            );
            eprintln!("skipped: mounting a tmpfs needs root ({e})");
            return None;
        }
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fill the file system with `filler` until at most `leave` bytes are free (0: full).
    pub fn fill(&self, leave: u64) {
        let mut f = std::fs::File::create(self.path().join("filler")).unwrap();
        let page = [0u8; 4096];
        while self.free_bytes() > leave {
            if let Err(e) = f.write_all(&page) {
                assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                break;
            }
            f.flush().unwrap();
        }
    }

    fn free_bytes(&self) -> u64 {
        let at = CString::new(self.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: statvfs fills a caller-owned struct.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(at.as_ptr(), &mut s) }, 0);
        s.f_bfree * s.f_frsize
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let at = CString::new(self.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: plain syscall; a lazy unmount never fails on a busy mount.
        unsafe { libc::umount2(at.as_ptr(), libc::MNT_DETACH) };
    }
}
