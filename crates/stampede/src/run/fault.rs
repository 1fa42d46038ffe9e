//! The fault of a fault run (`--fault-at T [--fault-cmd CMD]`): at T seconds into the measured
//! run, run CMD with `sh -c`, or only mark the time when someone else triggers the fault.
//!
//! On its own thread, started when the engine reports its clients connected (the origin of the
//! run's clock), so T means the same as the progress lines' times. The command's output goes to
//! stderr (stdout carries results only) and its start is printed there too, so a person watching
//! the run sees when the fault came. The time recorded is when the command was started, measured
//! on the run's clock, not when it was due: that is when the fault began.
//!
//! The command runs in its own process group: Ctrl-C stops the run, and the run stops the
//! command (SIGTERM to its group) rather than leaving a `patronictl` or `aws` call behind. A fault
//! not yet due when the run ends is not injected, and the result says so.

use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::console;
pub(crate) use crate::plan::FaultSpec;

/// What happened.
#[derive(Clone, Debug, Default)]
pub(crate) struct Injected {
    /// When the fault came, from the run's origin; `None` when the run ended first.
    pub at_us: Option<u64>,
    /// The command, redacted; `None` when only marked.
    pub cmd: Option<String>,
    /// Its exit status (`None`: not run, still running at the end, or killed by a signal).
    pub exit_status: Option<i32>,
}

#[derive(Default)]
struct State {
    /// The run is over: do not start the command any more; stop it if it runs.
    ended: bool,
    /// The fault came (set under the same lock as `child`, before the command is spawned).
    fired: bool,
    child: Option<i32>,
}

pub(crate) struct Injector {
    shared: Arc<(Mutex<State>, Condvar)>,
    thread: Option<JoinHandle<Injected>>,
}

/// How long the end of the run waits for a fault command that is still running before it
/// stops it.
const FINISH_GRACE: Duration = Duration::from_secs(30);

impl Injector {
    /// Arms the fault, `spec.at` after `origin`.
    pub fn start(spec: FaultSpec, origin: Instant) -> Injector {
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("stampede-fault".into())
            .spawn(move || inject(spec, origin, &s))
            .expect("spawn the fault thread");
        Injector {
            shared,
            thread: Some(thread),
        }
    }

    /// The run is over: disarm a fault not yet due, wait a while for a running command (then
    /// stop it), and say what happened.
    pub fn finish(mut self) -> Injected {
        let (lock, cv) = &*self.shared;
        let deadline = Instant::now() + FINISH_GRACE;
        {
            let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
            st.ended = true;
            cv.notify_all();
            let mut said = false;
            while let Some(pid) = st.child {
                let now = Instant::now();
                if now >= deadline || crate::interrupt::requested() {
                    console::warning(&format!(
                        "the fault command is still running; stopping it (process group {pid})"
                    ));
                    // SAFETY: signalling the process group this run started.
                    unsafe { libc::kill(-pid, libc::SIGTERM) };
                    break;
                }
                if !said {
                    console::note("waiting for the fault command to end");
                    said = true;
                }
                st = cv
                    .wait_timeout(st, (deadline - now).min(Duration::from_millis(200)))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        let thread = self.thread.take().expect("finished once");
        thread.join().unwrap_or_default()
    }
}

fn inject(spec: FaultSpec, origin: Instant, shared: &(Mutex<State>, Condvar)) -> Injected {
    let (lock, cv) = shared;
    let due = origin + spec.at;
    let redacted = spec.cmd.as_deref().map(sut::conninfo::redact);
    let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if st.ended {
            return Injected {
                cmd: redacted,
                ..Injected::default()
            };
        }
        let now = Instant::now();
        if now >= due {
            break;
        }
        st = cv
            .wait_timeout(st, due - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    let at_us = origin.elapsed().as_micros() as u64;
    st.fired = true;
    let Some(cmd) = spec.cmd else {
        console::note(&format!("fault marked at {:.1} s", at_us as f64 / 1e6));
        return Injected {
            at_us: Some(at_us),
            ..Injected::default()
        };
    };
    let shown = redacted.clone().unwrap_or_default();
    console::note(&format!("fault at {:.1} s: {shown}", at_us as f64 / 1e6));
    let mut c = Command::new("sh");
    c.arg("-c").arg(&cmd).stdin(Stdio::null()).process_group(0);
    // Its output is a diagnostic: stdout carries results only.
    if let Ok(err) = std::io::stderr().as_fd().try_clone_to_owned() {
        c.stdout(Stdio::from(err));
    }
    let mut child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => {
            console::warning(&format!("the fault command could not start: {e}"));
            return Injected {
                at_us: Some(at_us),
                cmd: redacted,
                exit_status: None,
            };
        }
    };
    st.child = Some(child.id() as i32);
    drop(st);
    let status = child.wait();
    let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
    st.child = None;
    cv.notify_all();
    let exit_status = status.ok().and_then(|s| s.code());
    if exit_status != Some(0) {
        console::warning(&format!(
            "the fault command ended with {}",
            exit_status.map_or("a signal".to_string(), |c| format!("exit status {c}"))
        ));
    }
    Injected {
        at_us: Some(at_us),
        cmd: redacted,
        exit_status,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_runs_when_due_and_its_status_is_kept() {
        let origin = Instant::now();
        let inj = Injector::start(
            FaultSpec {
                at: Duration::from_millis(50),
                cmd: Some("exit 3".into()),
            },
            origin,
        );
        // Wait for the command to have run (a condition, not a guess at a duration).
        loop {
            let st = inj.shared.0.lock().unwrap();
            if st.fired && st.child.is_none() {
                break;
            }
            drop(st);
            std::thread::sleep(Duration::from_millis(5));
        }
        let done = inj.finish();
        assert!(done.at_us.unwrap() >= 50_000, "{done:?}");
        assert_eq!(done.exit_status, Some(3));
        assert_eq!(done.cmd.as_deref(), Some("exit 3"));
    }

    #[test]
    fn a_fault_not_yet_due_at_the_end_is_not_injected() {
        let inj = Injector::start(
            FaultSpec {
                at: Duration::from_secs(3600),
                cmd: Some("touch /nonexistent/x".into()),
            },
            Instant::now(),
        );
        let done = inj.finish();
        assert_eq!(done.at_us, None);
        assert_eq!(done.exit_status, None);
    }

    #[test]
    fn passwords_in_the_command_are_never_kept() {
        let inj = Injector::start(
            FaultSpec {
                at: Duration::from_secs(3600),
                cmd: Some("psql 'host=h password=secret' -c 'select 1'".into()),
            },
            Instant::now(),
        );
        let done = inj.finish();
        assert!(!done.cmd.unwrap().contains("secret"));
    }
}
