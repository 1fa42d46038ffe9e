//! Faults for failover tests: what an operator (or a crash) does to a cluster, on the test's
//! servers. Promote a standby (`pg_ctl promote`), crash a server (SIGKILL to the postmaster and
//! every process under it, as a power loss or an OOM kill would leave it), hold a standby back
//! (stop its WAL receiver, so it misses what the primary commits from then on), and make a
//! standby synchronous.
//!
//! Each waits for the effect it promises (the standby out of recovery, the processes gone, the
//! receiver stopped) rather than sleeping, so tests can rely on the state that follows.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::account::{as_server_user, run};
use crate::cluster::Cluster;
use crate::server::Pg;
use crate::sql::block_on;

impl Pg {
    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        (self.with_server(|s| s.data_dir().to_path_buf())).expect("the server was stopped")
    }

    /// The postmaster's pid, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.with_server(|s| s.pid()).flatten()
    }

    /// `pg_ctl promote -w`: out of recovery, taking writes, when this returns.
    pub fn promote(&self) {
        run(as_server_user(
            Command::new(self.bin("pg_ctl"))
                .arg("promote")
                .arg("-w")
                .arg("-D")
                .arg(self.data_dir()),
        ));
        self.wait_for("SELECT (NOT pg_is_in_recovery())::text", "true");
    }

    /// SIGKILL to the postmaster and every process under it, at once: no shutdown checkpoint,
    /// no goodbye to clients or standbys. Returns when none of them is left.
    pub fn crash(&self) {
        let Some(pm) = self.pid() else { return };
        let mut pids = descendants(pm);
        pids.push(pm);
        for &p in &pids {
            // SAFETY: signalling processes this test started.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        // The postmaster is this process's child: reap it, or its zombie would hold the
        // data directory's lock (postmaster.pid names a live pid) against a restart.
        // SAFETY: waiting for a child this process started; ECHILD otherwise, harmless.
        unsafe { libc::waitpid(pm, std::ptr::null_mut(), 0) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while pids.iter().any(|&p| alive(p)) {
            assert!(
                Instant::now() < deadline,
                "processes of {pm} outlived SIGKILL"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Start the server again after [`Pg::crash`] (crash recovery replays its WAL), on its own
    /// socket and port, with `pg_ctl start -w`. It is stopped (immediate) when the returned
    /// guard drops: the handle's own postmaster is gone, so the handle cannot stop it.
    pub fn start_again(&self) -> Restarted {
        // Killed by someone else (a fault command): reap the old postmaster, this process's
        // child, whose zombie would hold the data directory's lock.
        if let Some(pm) = self.pid() {
            let deadline = Instant::now() + Duration::from_secs(10);
            // SAFETY: waiting for a child this process started; ECHILD otherwise.
            while unsafe { libc::waitpid(pm, std::ptr::null_mut(), libc::WNOHANG) } == 0 {
                assert!(
                    Instant::now() < deadline,
                    "the old postmaster {pm} still runs"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let data = self.data_dir();
        run(as_server_user(
            Command::new(self.bin("pg_ctl"))
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(data.join("restart.log")),
        ));
        Restarted {
            pg_ctl: self.bin("pg_ctl"),
            data,
        }
    }

    /// Poll `sql` until it returns `want` (60 s at most).
    pub fn wait_for(&self, sql: &str, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = block_on(try_scalar(self.conn_config(), sql));
            if got.as_deref() == Some(want) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{sql}: never {want} (last {got:?})"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Cluster {
    /// Stop standby `i`'s WAL receiver (an empty `primary_conninfo`, reloaded) and wait until it
    /// is gone: from now on the standby misses what the primary commits.
    pub fn hold_back(&self, i: usize) {
        let s = &self.standbys[i];
        s.psql("ALTER SYSTEM SET primary_conninfo = ''");
        s.psql("SELECT pg_reload_conf()");
        s.wait_for(
            "SELECT (count(*) = 0)::text FROM pg_stat_wal_receiver",
            "true",
        );
    }

    /// Make standby `i` (its `application_name`, `standby{i+1}`) the primary's synchronous
    /// standby, with `synchronous_commit = on`, and wait until the primary reports it as sync.
    pub fn make_synchronous(&self, i: usize) {
        let name = format!("standby{}", i + 1);
        let p = &self.primary;
        p.psql(&format!(
            "ALTER SYSTEM SET synchronous_standby_names = '{name}'"
        ));
        p.psql("ALTER SYSTEM SET synchronous_commit = on");
        p.psql("SELECT pg_reload_conf()");
        p.wait_for(
            &format!(
                "SELECT coalesce((SELECT sync_state FROM pg_stat_replication \
                 WHERE application_name = '{name}'), 'none')"
            ),
            "sync",
        );
    }
}

/// A server started again by [`Pg::start_again`]; stopped when dropped.
pub struct Restarted {
    pg_ctl: PathBuf,
    data: PathBuf,
}

impl Drop for Restarted {
    fn drop(&mut self) {
        let _ = as_server_user(
            Command::new(&self.pg_ctl)
                .args(["stop", "-w", "-m", "immediate", "-D"])
                .arg(&self.data),
        )
        .output();
    }
}

/// Every process whose ancestry leads to `pid` (from /proc).
fn descendants(pid: i32) -> Vec<i32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses; ppid follows the
        // last ')'.
        let ppid = (stat.rsplit_once(')'))
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i32>().ok());
        if let Some(pp) = ppid {
            parent_of.push((p, pp));
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parent_of {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); /proc says whether it is one.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !(s.rsplit_once(')')).is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// A query that may fail (the server starting, a connection refused): `None` then.
async fn try_scalar(cfg: &pg::ConnConfig, sql: &str) -> Option<String> {
    let mut s = pg::Session::connect(cfg).await.ok()?;
    let rows = s.simple_query(sql).await.ok()?;
    s.close().await;
    rows.into_iter().next()?.into_iter().next()?
}
