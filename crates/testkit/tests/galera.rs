//! testkit's Galera cluster itself: three nodes on loopback ports that see each other, replicate
//! DDL and rows, turn a write conflict between two nodes into error 1213 on the loser, and let
//! a node leave (cleanly or killed) and rejoin with what it missed. One test, one cluster: the
//! steps share the cluster's start (10 s on an idle 2-core machine, 20 s on a busy one), and
//! two clusters side by side on a small machine would slow each other's joins.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use testkit::Galera;

/// Every statement of these tests waits for what the cluster committed before it (reads,
/// updates and inserts alike): another node's transactions are applied asynchronously.
const SYNC: &str = "SET SESSION wsrep_sync_wait=15;";

#[test]
fn three_node_cluster() {
    let t = Instant::now();
    let g = Galera::start(3);
    eprintln!("cluster of 3 started in {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(g.nodes(), 3);

    for i in 0..3 {
        assert_eq!(g.status(i, "wsrep_cluster_size"), "3", "node {i}");
        assert_eq!(g.status(i, "wsrep_ready"), "ON", "node {i}");
        assert_eq!(
            g.status(i, "wsrep_local_state_comment"),
            "Synced",
            "node {i}"
        );
        // The client port answers root over TCP too (the URL's way in).
        let out = testkit::run(
            Command::new("mariadb")
                .args(["--no-defaults", "-h127.0.0.1", "-uroot", "-N", "-B"])
                .arg(format!("-P{}", g.port(i)))
                .args(["-e", "SELECT @@wsrep_node_name"]),
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("node{i}")
        );
    }
    let ports: Vec<String> = (0..3).map(|i| g.port(i).to_string()).collect();
    assert_eq!(
        g.hosts_and_ports(),
        ("127.0.0.1,127.0.0.1,127.0.0.1".to_string(), ports.join(","))
    );
    assert_eq!(
        g.url(1, "rep"),
        format!("mysql://root@127.0.0.1:{}/rep", g.port(1))
    );

    // DDL on node 0, rows on node 1, read on node 2.
    g.sql(
        0,
        "CREATE DATABASE rep; CREATE TABLE rep.t (id INT PRIMARY KEY, v INT NOT NULL)",
    );
    g.sql(
        1,
        &format!("{SYNC} INSERT INTO rep.t VALUES (1, 0), (2, 0), (3, 0)"),
    );
    assert_eq!(
        g.sql(2, &format!("{SYNC} SELECT id, v FROM rep.t ORDER BY id")),
        "1\t0\n2\t0\n3\t0\n"
    );

    // The same row updated in open transactions on nodes 0 and 1: the first to commit wins,
    // the other is aborted by the winner's write set (or fails certification) with 1213.
    let mut a = Client::open(g.socket(0));
    let mut b = Client::open(g.socket(1));
    a.run(&format!(
        "{SYNC} BEGIN; UPDATE rep.t SET v = 10 WHERE id = 1"
    ));
    b.run(&format!(
        "{SYNC} BEGIN; UPDATE rep.t SET v = 20 WHERE id = 1"
    ));
    a.run("COMMIT");
    let (ok, err) = b.finish("COMMIT");
    assert!(!ok && err.contains("ERROR 1213"), "node 1's commit: {err}");
    let (ok, err) = a.finish("");
    assert!(ok, "{err}");
    for i in 0..3 {
        assert_eq!(
            g.sql(i, &format!("{SYNC} SELECT v FROM rep.t WHERE id = 1")),
            "10\n",
            "node {i}"
        );
    }

    // A clean stop: the others shrink to 2 at once; writes meanwhile reach node 2 by IST.
    let t = Instant::now();
    g.stop_node(2);
    assert!(!g.is_running(2));
    g.wait_synced();
    assert_eq!(g.status(0, "wsrep_cluster_size"), "2");
    g.sql(0, &format!("{SYNC} INSERT INTO rep.t VALUES (4, 0)"));
    g.start_node(2);
    assert_eq!(g.status(2, "wsrep_cluster_size"), "3");
    assert_eq!(
        g.sql(2, &format!("{SYNC} SELECT count(*) FROM rep.t")),
        "4\n"
    );
    eprintln!(
        "node 2 stopped and rejoined in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // A crash: the others evict node 1 after the suspect timeout; it rejoins by SST (a killed
    // node has no saved position).
    let t = Instant::now();
    g.kill_node(1);
    g.wait_synced();
    assert_eq!(g.status(2, "wsrep_cluster_size"), "2");
    g.sql(2, &format!("{SYNC} INSERT INTO rep.t VALUES (5, 0)"));
    g.start_node(1);
    assert_eq!(
        g.sql(1, &format!("{SYNC} SELECT count(*) FROM rep.t")),
        "5\n"
    );
    eprintln!(
        "node 1 killed and rejoined in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let dir = g.dir().to_path_buf();
    let t = Instant::now();
    drop(g);
    eprintln!("cluster stopped in {:.1} s", t.elapsed().as_secs_f64());
    assert!(!dir.exists());
}

/// A `mariadb` client kept open on a node, for transactions that span several steps.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Client {
    fn open(socket: &Path) -> Client {
        let mut child = Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            // --unbuffered: each result is written as it comes (see `run`).
            .args(["-uroot", "--batch", "--skip-column-names", "--unbuffered"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the mariadb client");
        Client {
            stdin: child.stdin.take(),
            out: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    /// Run `sql` and wait until it is done: a marker row selected after it has come back.
    /// Panics with stderr when the client stops (an error ends a batch-mode client).
    fn run(&mut self, sql: &str) -> String {
        const MARK: &str = "step-done";
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{sql};\nSELECT '{MARK}';").unwrap();
        let mut got = String::new();
        loop {
            let mut line = String::new();
            if self.out.read_line(&mut line).unwrap() == 0 {
                let err = std::io::read_to_string(self.child.stderr.take().unwrap()).unwrap();
                panic!("{sql}: the client stopped: {err}");
            }
            if line.trim_end() == MARK {
                return got;
            }
            got.push_str(&line);
        }
    }

    /// Send `sql`, end the input, wait for the client: (succeeded, stderr).
    fn finish(mut self, sql: &str) -> (bool, String) {
        let mut stdin = self.stdin.take().unwrap();
        writeln!(stdin, "{sql}").unwrap();
        drop(stdin);
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}
