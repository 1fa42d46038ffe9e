//! [`AutoFailover`]: a pg_auto_failover formation on this machine (Debian's
//! `pg-auto-failover-cli` and `postgresql-15-auto-failover`): a monitor and two Postgres nodes,
//! each `pg_autoctl run` as a background process of the server account, each member in its own
//! directory on its own free loopback port. For tests that fail over the way an operator does,
//! `pg_autoctl perform failover`, and measure it.
//!
//! Each member gets its own HOME, XDG_CONFIG_HOME and XDG_DATA_HOME: pg_autoctl keeps its
//! configuration and state files there, keyed by PGDATA, and members sharing them would share
//! (and overwrite) one another's state; the server account's own home is not ours to write.
//! Postgres' unix sockets stay in the packaged default directory (/var/run/postgresql), which
//! pg_autoctl itself connects through; the ports are unique, so they never collide there.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::account::{as_server_user, free_port, run, run_as, server_dir};
use crate::server::bindir;

/// How long a formation may take to come up or settle before the test fails.
const SETTLE: Duration = Duration::from_secs(120);

/// pg_autoctl sizes shared_buffers from the machine's memory (6 GB on a 24 GB machine) for each
/// of the three servers; a test needs none of that.
const SETTINGS: &str = "shared_buffers = '128MB'\n";

/// One member: its directory (HOME, XDG dirs, PGDATA and logs inside) and its `pg_autoctl run`.
struct Member {
    dir: tempfile::TempDir,
    port: u16,
    run: Option<Child>,
}

impl Member {
    fn new(prefix: &str) -> Member {
        Member {
            dir: server_dir(prefix),
            port: free_port(),
            run: None,
        }
    }

    fn pgdata(&self) -> PathBuf {
        self.dir.path().join("pgdata")
    }

    /// The member's private pg_autoctl environment (see the module header).
    fn env(&self) -> Vec<(&'static str, PathBuf)> {
        let d = self.dir.path();
        vec![
            ("HOME", d.to_path_buf()),
            ("XDG_CONFIG_HOME", d.join("config")),
            ("XDG_DATA_HOME", d.join("data")),
            ("PGDATA", self.pgdata()),
        ]
    }

    /// `pg_autoctl args...` as the server account, in the member's environment.
    fn autoctl(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("pg_autoctl");
        as_server_user(&mut cmd);
        cmd.current_dir(self.dir.path());
        for v in ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE"] {
            cmd.env_remove(v);
        }
        cmd.envs(self.env()).args(args);
        cmd
    }

    /// `pg_autoctl create KIND ...` (`monitor` or `postgres`), then the test settings (before
    /// the first `run`, which starts Postgres with them).
    fn create(&self, kind: &str, args: &[&str]) {
        let pgdata = self.pgdata();
        let pg_ctl = bindir().join("pg_ctl");
        let port = self.port.to_string();
        let mut all = vec![
            "create",
            kind,
            "--pgctl",
            pg_ctl.to_str().unwrap(),
            "--pgdata",
            pgdata.to_str().unwrap(),
            "--pgport",
            &port,
            "--hostname",
            "127.0.0.1",
            "--auth",
            "trust",
            "--no-ssl",
        ];
        all.extend_from_slice(args);
        let mut cmd = self.autoctl(&all);
        let out = cmd.output().unwrap_or_else(|e| {
            panic!(
                "{cmd:?}: {e} (apt-get install pg-auto-failover-cli postgresql-15-auto-failover)"
            )
        });
        assert!(
            out.status.success(),
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // A standby's data comes from pg_basebackup during its first run, settings included.
        if let Ok(mut f) = OpenOptions::new()
            .append(true)
            .open(pgdata.join("postgresql.auto.conf"))
        {
            f.write_all(SETTINGS.as_bytes()).unwrap();
        }
    }

    /// `pg_autoctl run` in the background, its output in `run.log`; in its own process group so
    /// that [`Member::stop`] can reach Postgres too if pg_autoctl does not stop it.
    fn start(&mut self) {
        let log = File::create(self.log()).unwrap();
        let pgdata = self.pgdata();
        let child = self
            .autoctl(&["run", "--pgdata", pgdata.to_str().unwrap()])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .unwrap();
        self.run = Some(child);
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("run.log")
    }

    /// SIGTERM (pg_autoctl stops Postgres with a fast shutdown and exits), waited for; after
    /// a minute, SIGKILL to the whole process group.
    fn stop(&mut self) {
        let Some(mut child) = self.run.take() else {
            return;
        };
        let pid = child.id() as i32;
        // SAFETY: signalling our own child, still unreaped, so its pid is not reused.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                // SAFETY: the process group is the child's own (process_group(0)).
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A monitor and two Postgres nodes, one primary and one secondary once [`AutoFailover::start`]
/// returns. Dropping it stops every `pg_autoctl run` (nodes first, then the monitor) and removes
/// the directories.
pub struct AutoFailover {
    nodes: Vec<Member>,
    monitor: Member,
}

impl AutoFailover {
    /// Create and run the monitor, then node1 (the first primary), then node2 (cloned from it),
    /// and wait until the monitor reports one primary and one secondary. Panics when it cannot.
    pub fn start() -> AutoFailover {
        let mut monitor = Member::new("stampede-monitor-");
        monitor.create("monitor", &[]);
        monitor.start();
        let mut af = AutoFailover {
            nodes: Vec::new(),
            monitor,
        };
        af.wait_for_monitor("SELECT 1", "1");
        let uri = af.monitor_uri();
        for name in ["node1", "node2"] {
            let mut node = Member::new(&format!("stampede-{name}-"));
            node.create("postgres", &["--name", name, "--monitor", &uri]);
            node.start();
            af.nodes.push(node);
            // node2 must register while node1 is the primary, or the monitor could make it one.
            if name == "node1" {
                af.wait_for_monitor(
                    "SELECT count(*) FROM pgautofailover.node \
                     WHERE reportedstate IN ('single', 'primary')",
                    "1",
                );
            }
        }
        af.wait_settled();
        af
    }

    /// The URI the nodes reach the monitor at.
    pub fn monitor_uri(&self) -> String {
        format!(
            "postgres://autoctl_node@127.0.0.1:{}/pg_auto_failover?sslmode=disable",
            self.monitor.port
        )
    }

    /// The nodes' ports, node1 first; their host is `127.0.0.1`.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// `host=` and `port=` values listing both nodes (node1 first).
    pub fn hosts_and_ports(&self) -> (String, String) {
        let hosts: Vec<&str> = self.nodes.iter().map(|_| "127.0.0.1").collect();
        let ports: Vec<String> = self.ports().iter().map(u16::to_string).collect();
        (hosts.join(","), ports.join(","))
    }

    /// The port of the node the monitor has as primary, both reported and assigned (call
    /// [`AutoFailover::wait_settled`] first if a failover may be under way).
    pub fn primary_port(&self) -> u16 {
        let port = self.monitor_sql(
            "SELECT nodeport FROM pgautofailover.node \
             WHERE reportedstate = 'primary' AND goalstate = 'primary'",
        );
        port.trim()
            .parse()
            .unwrap_or_else(|_| panic!("no settled primary: {}", self.states()))
    }

    /// Wait until the monitor reports one primary and one secondary, each in the state it was
    /// assigned.
    pub fn wait_settled(&self) {
        self.wait_for_monitor(
            "SELECT (count(*) FILTER (WHERE reportedstate = 'primary' AND goalstate = 'primary')
                     = 1 AND count(*) FILTER (WHERE reportedstate = 'secondary'
                     AND goalstate = 'secondary') = 1)::text
             FROM pgautofailover.node",
            "true",
        );
    }

    /// A shell command line (for `--fault-cmd`) running `pg_autoctl perform failover` as the
    /// server account from node1's configuration (which names the monitor). It returns once
    /// the failover is done: the new primary promoted and the old one back as a secondary.
    /// Tried up to 3 times, as a user would: the monitor's `perform_failover` can die of a
    /// deadlock with a keeper's concurrent `node_active` (seen in CI: "deadlock detected ...
    /// while updating tuple in relation node", exit status 6), which rolls it back whole.
    pub fn perform_failover_cmd(&self) -> String {
        let node = &self.nodes[0];
        let setpriv = match run_as() {
            Some((uid, gid)) => format!("setpriv --reuid={uid} --regid={gid} --clear-groups "),
            None => String::new(),
        };
        let env: Vec<String> = (node.env().iter())
            .map(|(k, v)| format!("{k}={}", v.display()))
            .collect();
        format!(
            "cd {dir} && for try in 1 2 3; do {setpriv}env {env} pg_autoctl perform failover \
             --pgdata {pgdata}; rc=$?; [ $rc -eq 0 ] && break; done; exit $rc",
            dir = node.dir.path().display(),
            env = env.join(" "),
            pgdata = node.pgdata().display(),
        )
    }

    /// Each node's name, reported and assigned state, for a failing test's message.
    pub fn states(&self) -> String {
        self.monitor_sql(
            "SELECT string_agg(format('%s:%s %s/%s', nodename, nodeport, reportedstate, \
             goalstate), ', ' ORDER BY nodeid) FROM pgautofailover.node",
        )
    }

    /// Where the members' `pg_autoctl run` logs are (monitor first).
    pub fn logs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.monitor)
            .chain(self.nodes.iter())
            .map(Member::log)
            .collect()
    }

    fn psql(&self, sql: &str) -> Command {
        let mut cmd = Command::new(bindir().join("psql"));
        cmd.args(["-X", "-A", "-t", "-h", "127.0.0.1", "-p"])
            .arg(self.monitor.port.to_string())
            .args(["-U", "autoctl_node", "-d", "pg_auto_failover", "-c", sql]);
        cmd
    }

    fn monitor_sql(&self, sql: &str) -> String {
        let out = run(&mut self.psql(sql));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Poll the monitor until `sql` returns `want` (connection failures count as not yet: the
    /// monitor may still be starting).
    fn wait_for_monitor(&self, sql: &str, want: &str) {
        let deadline = Instant::now() + SETTLE;
        loop {
            let out = self.psql(sql).output().unwrap();
            if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the monitor never answered {want} to {sql}: {}; logs: {:?}",
                String::from_utf8_lossy(&out.stderr),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for AutoFailover {
    fn drop(&mut self) {
        // Nodes first: a monitor stopped first would leave them retrying it.
        for n in self.nodes.iter_mut().rev() {
            n.stop();
        }
        self.monitor.stop();
    }
}
