//! [`Galera`]: a private MariaDB Galera cluster on loopback ports, for the tests of several
//! MySQL-protocol endpoints that all take writes (spreading clients over nodes, certification
//! conflicts surfacing as error 1213, failover when a node goes away). From the machine's
//! binaries: Debian's `mariadb-server` and its `galera-4` provider
//! (`/usr/lib/galera/libgalera_smm.so`). Each node is a [`crate::MariaDb`]-style server (the
//! same directory layout, throwaway settings, server account and `mariadb` client; the helpers
//! are shared) plus wsrep, all in one temporary directory: `node0/`, `node1/`, ...
//!
//! Ports: every node has its own, all on 127.0.0.1 and all free ports at start: the client port,
//! group communication (`gmcast.listen_addr`, also the node's address in `wsrep_cluster_address`),
//! incremental state transfer (`ist.recv_addr`) and full state transfer
//! (`wsrep_sst_receive_address`). Galera's defaults (4567, 4568, 4444) would collide between
//! nodes on one machine, and with another test's cluster.
//!
//! Start: node 0 bootstraps a new cluster (`--wsrep-new-cluster`) from a `mariadb-install-db`
//! data directory; the others then join one at a time, each with an empty data directory that
//! it receives whole from a synced node by state snapshot transfer (SST) — an install there
//! would only be overwritten. One at a time because a cluster of one has one possible donor:
//! a second joiner waits for it, and two starting together were seen to churn through
//! non-primary views for seconds before either could join. Each step waits by condition
//! (`wsrep_ready` ON, `Synced`, the expected `wsrep_cluster_size`), never a fixed sleep.
//!
//! SST method: `rsync` (the `wsrep_sst_rsync` script of mariadb-server; it needs `rsync` and
//! `ss` or `lsof`, which Debian's mariadb-server depends on). It copies the donor's data
//! directory (writes paused on the donor meanwhile) over loopback, needs no account or
//! password, and works as the unprivileged server account. Not `mariabackup`: a separate
//! package (mariadb-backup, not installed here) and a backup account; not `mysqldump`: it needs
//! the joiner's server up and an account over TCP. Skipping SST (identical install-db
//! directories plus a hand-written `grastate.dat`) was tried and fails: the bootstrap node
//! writes a few transactions at start, so the joiners ask for IST, and the rsync script's IST
//! path hands the server an undefined position ("SST received: 00000000-...:-1"), on which the
//! node aborts. A join costs 5 to 7 s, about half of it the transfer script's own polling.
//!
//! Reads right after a write on another node: Galera applies other nodes' transactions
//! asynchronously after certification (commit waits for certification only). A test that must
//! see them sets `wsrep_sync_wait` in its session (`SET SESSION wsrep_sync_wait=15`), the same
//! for DDL followed by writes on another node.
//!
//! Processes: each `mariadbd` leads its own process group, so that stopping a node also ends
//! the SST scripts and rsync daemons it started (a node stopped during a transfer would leave
//! them holding ports). Accounts: `root` with an empty password, as [`crate::MariaDb`] (over
//! the socket, and over TCP from 127.0.0.1); the joiners' copies come with the donor's.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::account::free_port;
use crate::mariadb::{client_sql, install_db, mariadbd, server_dirs, spawn, terminate};

/// Galera's provider library, as Debian's `galera-4` installs it.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// How long one node may take to join (or the first to bootstrap): a join takes 5 to 7 s on
/// a 2-core machine, idle or busy; this leaves room for a much slower one.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);

/// A running private Galera cluster: [`Galera::start`] or [`Galera::shared`]. Dropping it stops
/// every node and removes the directory. Nodes are numbered from 0; node 0 bootstrapped it.
pub struct Galera {
    dir: tempfile::TempDir,
    nodes: Vec<Node>,
}

/// One member: its directory (as [`crate::MariaDb`]'s) and ports.
struct Node {
    dir: PathBuf,
    socket: PathBuf,
    port: u16,
    gcomm_port: u16,
    ist_port: u16,
    sst_port: u16,
    /// None while stopped; a Mutex so that a `static` cluster can be stopped at exit.
    child: Mutex<Option<Child>>,
}

impl Galera {
    /// Start a cluster of `nodes` nodes (at least 1) and wait until every node is synced and
    /// sees all of them. Panics when it cannot, with the failing node's error log.
    pub fn start(nodes: usize) -> Galera {
        assert!(nodes >= 1, "a Galera cluster needs a node");
        let dir = tempfile::Builder::new()
            .prefix("stampede-galera-")
            .tempdir()
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let ports = distinct_free_ports(4 * nodes);
        let members = ports
            .chunks(4)
            .enumerate()
            .map(|(i, p)| {
                let node_dir = dir.path().join(format!("node{i}"));
                fs::create_dir(&node_dir).unwrap();
                server_dirs(&node_dir);
                Node {
                    socket: node_dir.join("mysqld.sock"),
                    dir: node_dir,
                    port: p[0],
                    gcomm_port: p[1],
                    ist_port: p[2],
                    sst_port: p[3],
                    child: Mutex::new(None),
                }
            })
            .collect();
        let cluster = Galera {
            dir,
            nodes: members,
        };
        install_db(&cluster.nodes[0].dir);
        for i in 0..nodes {
            cluster.spawn_node(i, i == 0);
            cluster.wait_joined(i, i + 1);
        }
        cluster.wait_synced();
        cluster
    }

    /// A 3-node cluster for the whole test binary, started on first use, stopped at exit.
    pub fn shared() -> &'static Galera {
        SHARED.get_or_init(|| {
            let cluster = Galera::start(3);
            static REGISTER: Once = Once::new();
            // SAFETY: registering a plain extern "C" fn.
            REGISTER.call_once(|| unsafe {
                libc::atexit(stop_shared_at_exit);
            });
            cluster
        })
    }

    /// How many nodes the cluster was started with (stopped ones included).
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Node `i`'s client TCP port on 127.0.0.1.
    pub fn port(&self, i: usize) -> u16 {
        self.nodes[i].port
    }

    /// Node `i`'s unix socket.
    pub fn socket(&self, i: usize) -> &Path {
        &self.nodes[i].socket
    }

    /// `mysql://root@127.0.0.1:port/db`: node `i` over TCP.
    pub fn url(&self, i: usize, db: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{db}", self.port(i))
    }

    /// Hosts and ports listing every node (node 0 first, stopped ones included), e.g.
    /// `("127.0.0.1,127.0.0.1,127.0.0.1", "33061,33062,33063")`.
    pub fn hosts_and_ports(&self) -> (String, String) {
        let hosts = vec!["127.0.0.1"; self.nodes.len()].join(",");
        let ports: Vec<String> = self.nodes.iter().map(|n| n.port.to_string()).collect();
        (hosts, ports.join(","))
    }

    /// The cluster's directory (a `nodeN` directory per node): a place for a test's files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Node `i`'s error log (the SST scripts log there too).
    pub fn log(&self, i: usize) -> String {
        fs::read_to_string(self.nodes[i].dir.join("error.log")).unwrap_or_default()
    }

    /// `sql` through the `mariadb` client as root on node `i`'s socket (batch mode: one line a
    /// row, tab-separated, no column names); its output. Panics with stderr when it fails.
    pub fn sql(&self, i: usize, sql: &str) -> String {
        self.try_sql(i, sql)
            .unwrap_or_else(|e| panic!("node {i}: mariadb -e {sql:?}: {e}"))
    }

    /// [`Galera::sql`] that may fail: the output, or stderr (`ERROR 1213 (40001) ...`).
    pub fn try_sql(&self, i: usize, sql: &str) -> Result<String, String> {
        client_sql(self.socket(i), sql)
    }

    /// Node `i`'s global status variable `name` (`wsrep_cluster_size`, ...); "" when unknown.
    pub fn status(&self, i: usize, name: &str) -> String {
        let out = self.sql(i, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        parse_status(&out).remove(name).unwrap_or_default()
    }

    /// Whether node `i` is running (not stopped or killed here).
    pub fn is_running(&self, i: usize) -> bool {
        self.nodes[i].child.lock().unwrap().is_some()
    }

    /// Stop node `i` cleanly (SIGTERM: it leaves the cluster, the others shrink their view at
    /// once) and wait for it; nothing when it is not running.
    pub fn stop_node(&self, i: usize) {
        let child = self.nodes[i]
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut c) = child {
            terminate(&c);
            reap_group(&mut c);
        }
    }

    /// Node `i`'s process id (it leads its own process group: `kill -9 -- -PID` kills the
    /// node as [`Galera::kill_node`] does, from a shell); `None` when it is not running. After
    /// killing it that way, call [`Galera::kill_node`] to reap it.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.lock().unwrap().as_ref().map(Child::id)
    }

    /// Kill node `i` (SIGKILL, a crash: the others notice only when it stops answering, after
    /// Galera's `evs.suspect_timeout`, 5 s) and wait for it; nothing when it is not running.
    pub fn kill_node(&self, i: usize) {
        let child = self.nodes[i].child.lock().unwrap().take();
        if let Some(mut c) = child {
            // SAFETY: signalling our own child's process group (mariadbd leads it).
            unsafe { libc::kill(-(c.id() as libc::pid_t), libc::SIGKILL) };
            reap_group(&mut c);
        }
    }

    /// Start stopped node `i` again and wait until it has rejoined (by IST from the others'
    /// write-set cache, else SST) and every running node sees it. Needs a running node to join;
    /// nothing when it is running.
    pub fn start_node(&self, i: usize) {
        if self.is_running(i) {
            return;
        }
        let running = (0..self.nodes()).filter(|&n| self.is_running(n)).count();
        assert!(
            running > 0,
            "node {i} has no running node to join (bootstrapping again is not supported)"
        );
        self.spawn_node(i, false);
        self.wait_joined(i, running + 1);
        self.wait_synced();
    }

    /// Wait until every running node is synced, ready and in a view of exactly the running
    /// nodes (after [`Galera::kill_node`]: until the others have evicted it).
    pub fn wait_synced(&self) {
        let running: Vec<usize> = (0..self.nodes()).filter(|&n| self.is_running(n)).collect();
        for &i in &running {
            self.wait_joined(i, running.len());
        }
    }

    /// Stop every node, one at a time (the last first); later calls do nothing. One at a time:
    /// a node leaving a live cluster exits within about a second, while nodes all told to
    /// stop at once took about 7 s here, waiting on each other's departures.
    pub fn stop(&self) {
        for i in (0..self.nodes()).rev() {
            self.stop_node(i);
        }
    }

    /// Start node `i`'s server: a new cluster when `bootstrap`, else joining the others.
    fn spawn_node(&self, i: usize, bootstrap: bool) {
        let n = &self.nodes[i];
        let peers: Vec<String> = self
            .nodes
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.gcomm_port))
            .collect();
        let mut cmd = mariadbd(&n.dir, n.port);
        cmd.args([
            // What Galera requires of the server: row events, InnoDB, interleaved
            // auto-increment locks (no table lock an applier could wait on).
            "--binlog-format=ROW",
            "--default-storage-engine=InnoDB",
            "--innodb-autoinc-lock-mode=2",
            "--wsrep-on=ON",
        ])
        .arg(format!("--wsrep-provider={PROVIDER}"))
        .arg("--wsrep-cluster-name=stampede")
        .arg(format!(
            "--wsrep-cluster-address=gcomm://{}",
            peers.join(",")
        ))
        .arg(format!("--wsrep-node-name=node{i}"))
        .arg(format!("--wsrep-node-address=127.0.0.1:{}", n.gcomm_port))
        // What the node advertises to clients (status wsrep_incoming_addresses).
        .arg(format!(
            "--wsrep-node-incoming-address=127.0.0.1:{}",
            n.port
        ))
        .arg("--wsrep-sst-method=rsync")
        .arg(format!(
            "--wsrep-sst-receive-address=127.0.0.1:{}",
            n.sst_port
        ))
        // A small write-set cache (the default is 128 MiB, preallocated on disk): enough for
        // a test's writes to reach a restarted node by IST.
        .arg(format!(
            "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{};\
             ist.recv_addr=127.0.0.1:{};gcache.size=32M",
            n.gcomm_port, n.ist_port
        ));
        if bootstrap {
            cmd.arg("--wsrep-new-cluster");
        }
        // Its own process group: stopping the node reaches the SST helpers it starts.
        cmd.process_group(0);
        if !Path::new(PROVIDER).exists() {
            panic!("no Galera provider at {PROVIDER} (apt-get install galera-4)");
        }
        *n.child.lock().unwrap() = Some(spawn(&mut cmd));
    }

    /// Wait until node `i` is ready (`wsrep_ready` ON, state `Synced`) in a view of `size`
    /// nodes. Panics on timeout or when the server exits, with what it last said and the tail
    /// of its error log.
    fn wait_joined(&self, i: usize, size: usize) {
        let deadline = Instant::now() + JOIN_TIMEOUT;
        let size = size.to_string();
        let mut last: String;
        loop {
            match self.try_sql(
                i,
                "SHOW GLOBAL STATUS WHERE Variable_name IN \
                 ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_size')",
            ) {
                Ok(out) => {
                    let s = parse_status(&out);
                    let get = |k: &str| s.get(k).map_or("", String::as_str);
                    if get("wsrep_ready") == "ON"
                        && get("wsrep_local_state_comment") == "Synced"
                        && get("wsrep_cluster_size") == size
                    {
                        return;
                    }
                    last = out.trim().replace('\n', ", ").replace('\t', "=");
                }
                Err(e) => last = e.trim().to_string(),
            }
            let exited = self.nodes[i]
                .child
                .lock()
                .unwrap()
                .as_mut()
                .map(|c| c.try_wait().ok().flatten());
            let why = match exited {
                None => Some("not running".to_string()),
                Some(Some(status)) => Some(format!("exited: {status}")),
                Some(None) if Instant::now() > deadline => Some(format!(
                    "timeout after {} s waiting for a synced view of {size}",
                    JOIN_TIMEOUT.as_secs()
                )),
                Some(None) => None,
            };
            if let Some(why) = why {
                panic!(
                    "Galera node {i} did not join ({why}); last status: {last}\n\
                     error log (tail):\n{}",
                    tail(&self.log(i), 60)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Galera {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The cluster of [`Galera::shared`].
static SHARED: OnceLock<Galera> = OnceLock::new();

extern "C" fn stop_shared_at_exit() {
    // A static is never dropped: stop the nodes and remove the directory here.
    if let Some(cluster) = SHARED.get() {
        cluster.stop();
        let _ = fs::remove_dir_all(cluster.dir.path());
    }
}

/// Wait for a node's `mariadbd` to exit (killed after 30 s), then end what is left of its
/// process group (SST scripts, an rsync daemon) and reap it. The group is signalled while the
/// server is an unreaped zombie, so its pid, the group's id, cannot have been reused.
fn reap_group(c: &mut Child) {
    let pid = c.id() as libc::pid_t;
    let mut deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // SAFETY: waitid on our own child with WNOWAIT (it stays a zombie, unreaped) into a
        // zeroed siginfo_t that outlives the call.
        let exited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            ) != 0
                || info.si_pid() != 0
        };
        if exited {
            break;
        }
        if Instant::now() > deadline {
            // SAFETY: signalling our own child (not reaped yet: its pid is still ours).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            deadline = Instant::now() + Duration::from_secs(30);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the process group our child leads (see above).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let _ = c.wait();
}

/// Distinct free ports: [`free_port`] may hand out one twice in a row.
fn distinct_free_ports(n: usize) -> Vec<u16> {
    let mut ports: Vec<u16> = Vec::with_capacity(n);
    while ports.len() < n {
        let p = free_port();
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    ports
}

/// `SHOW STATUS` batch output (`name\tvalue` lines) as a map.
fn parse_status(out: &str) -> std::collections::HashMap<String, String> {
    out.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
