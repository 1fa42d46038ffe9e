//! The answers [`args::Host`] needs from the running process, as pgbench gets them: the
//! environment, a seed from the clock (`pg_time_now()`: `CLOCK_MONOTONIC` in microseconds) or
//! from the kernel's random source (`pg_strong_random`), and the effective user's name
//! (`get_user_name_or_exit`, with its messages). Reading scripts, the open-files limit and the
//! final compilation are left to the command that owns them (the trait's defaults do nothing).
//!
//! [`args::Host`]: super::args::Host

use super::args::Host;

/// The process's environment, clock, random source and user.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemHost;

impl Host for SystemHost {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }

    fn time_seed(&mut self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        (ts.tv_sec as u64)
            .wrapping_mul(1_000_000)
            .wrapping_add(ts.tv_nsec as u64 / 1000)
    }

    fn strong_seed(&mut self) -> Option<u64> {
        let mut buf = [0u8; 8];
        // SAFETY: getrandom writes at most buf.len() bytes into buf.
        let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
        (n == buf.len() as isize).then(|| u64::from_ne_bytes(buf))
    }

    fn os_user(&mut self) -> Result<String, String> {
        // SAFETY: getpwuid_r fills `pw` and `buf`; the name is copied out before they go.
        unsafe {
            let uid = libc::geteuid();
            let mut pw: libc::passwd = std::mem::zeroed();
            let mut buf = vec![0 as libc::c_char; 16 * 1024];
            let mut result: *mut libc::passwd = std::ptr::null_mut();
            let rc = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut result);
            if result.is_null() {
                let why = if rc == 0 {
                    "user does not exist".to_string()
                } else {
                    // strerror's text, without Rust's " (os error N)".
                    let e = std::io::Error::from_raw_os_error(rc).to_string();
                    e.split(" (os error").next().unwrap_or_default().to_string()
                };
                return Err(format!("could not look up effective user ID {uid}: {why}"));
            }
            Ok(std::ffi::CStr::from_ptr(pw.pw_name)
                .to_string_lossy()
                .into_owned())
        }
    }
}
