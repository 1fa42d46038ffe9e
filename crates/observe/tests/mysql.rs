//! The observer against private MariaDB servers started by the test itself (Debian's
//! `mariadb-server`, and its `galera-4` provider for the wsrep test), with load sent through
//! `mysql::Session`. A missing server fails the test, it never skips.
//!
//! Each test has a server of its own: the status counters are global, and the assertions are
//! exact (`Com_commit` moved by the commits done, a digest counted the statements run).

use std::time::{Duration, Instant};

use measure::ServerMetrics;
use observe::{Options, Sampler};
use sut::mysql::{Conninfo, Session};
use sut::{QueryMode, Target, Value};
use testkit::{block_on, MariaDb};

/// Rows in the test table.
const ROWS: i64 = 2000;

fn conninfo(m: &MariaDb, user: &str, db: &str) -> Conninfo {
    Conninfo::parse(&m.tcp_url(user, None, db)).unwrap()
}

async fn session(m: &MariaDb, db: &str) -> Session {
    Session::connect(&conninfo(m, "root", db))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"))
}

/// `obs.t` with [`ROWS`] rows.
fn load_table(m: &MariaDb) {
    m.fresh_database("obs");
    m.sql(&format!(
        "CREATE TABLE obs.t (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB; \
         INSERT INTO obs.t SELECT seq, 0 FROM obs.seq_1_to_{ROWS}"
    ));
}

/// `n` transactions on one session: BEGIN, an UPDATE and a SELECT by primary key, COMMIT.
async fn transactions(s: &mut Session, n: i64) {
    for i in 0..n {
        let id = 1 + (i * 7919) % ROWS;
        s.simple_query("BEGIN").await.unwrap();
        s.simple_query(&format!("UPDATE t SET v = v + 1 WHERE id = {id}"))
            .await
            .unwrap();
        s.simple_query(&format!("SELECT v FROM t WHERE id = {id}"))
            .await
            .unwrap();
        s.simple_query("COMMIT").await.unwrap();
    }
}

fn com_commit(m: &MariaDb) -> i64 {
    m.sql("SHOW GLOBAL STATUS LIKE 'Com_commit'")
        .split_whitespace()
        .last()
        .unwrap()
        .parse()
        .unwrap()
}

/// Sample `target` every 100 ms while `load` runs: start, mark the start (and give the observer
/// a moment to take the window's first snapshot, so the load is all inside it), load, finish.
fn observe_while(target: &Target, load: impl FnOnce()) -> ServerMetrics {
    let opts = Options {
        sample_interval: Duration::from_millis(100),
        ..Options::default()
    };
    let handle = Sampler::start(target, &opts).expect("sampler starts");
    handle.mark_start(Instant::now());
    std::thread::sleep(Duration::from_millis(300));
    load();
    handle.finish()
}

/// The load of the first tests: 200 transactions on one session (text protocol) while another
/// sleeps in a query (a session the 100 ms samples cannot miss) and a third runs a prepared
/// SELECT 150 times (binary protocol), then stays a moment longer than the observer's one-second
/// read of prepared statements.
fn workload(m: &MariaDb) {
    block_on(async {
        let mut a = session(m, "obs").await;
        let mut b = session(m, "obs").await;
        let mut c = session(m, "obs").await;
        let sleeper = async {
            b.simple_query("SELECT SLEEP(1)").await.unwrap();
        };
        let prepared = async {
            let stmt = c.register("SELECT v FROM t WHERE id = ?", QueryMode::Prepared);
            for i in 0..150 {
                c.execute(stmt, &[Value::Int(1 + i)]).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(1500)).await;
        };
        tokio::join!(transactions(&mut a, 200), sleeper, prepared);
        for s in [a, b, c] {
            s.close().await;
        }
    });
}

fn note_about<'a>(m: &'a ServerMetrics, what: &str) -> Option<&'a str> {
    m.notes
        .iter()
        .map(|n| n.message.as_str())
        .find(|n| n.contains(what))
}

/// Make `replica` a replica of `source` (binary log on, server id 1) and wait until the source
/// has the replica's dump thread: a session that is active, by its command, for as long as it
/// streams, as a PostgreSQL walsender is.
fn replicate(source: &MariaDb, replica: &MariaDb) {
    replica.sql(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', \
         MASTER_USE_GTID=no; START SLAVE",
        source.port()
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    while source
        .sql(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
        )
        .trim()
        != "1"
    {
        assert!(
            Instant::now() < deadline,
            "the replica never connected\n{}",
            replica.sql("SHOW SLAVE STATUS")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_mariadb_load_shows_commits_digests_innodb_and_waits() {
    let m = MariaDb::start(&[
        "--performance-schema=ON",
        "--performance-schema-consumer-events-waits-current=ON",
        "--performance-schema-consumer-events-statements-current=ON",
        "--performance-schema-instrument=wait/%=ON",
        "--log-bin",
        "--server-id=1",
    ]);
    assert_eq!(m.sql("SELECT @@performance_schema").trim(), "1");
    let replica = MariaDb::start(&["--server-id=2"]);
    replicate(&m, &replica);
    load_table(&m);
    let before = com_commit(&m);
    let target = Target::from(conninfo(&m, "root", "obs"));
    let metrics = observe_while(&target, || workload(&m));
    let after = com_commit(&m);
    let d = |k: &str| {
        metrics
            .mysql_delta(k)
            .unwrap_or_else(|| panic!("no {k} in {:?}", metrics.deltas))
    };

    assert_eq!(metrics.product.as_deref(), Some("MariaDB"));
    assert!(
        metrics.server_version_num >= 100000,
        "{}",
        metrics.server_version_num
    );
    // The run's commits, exactly: the observer commits nothing.
    assert_eq!(after - before, 200);
    assert_eq!(d("Com_commit"), 200.0, "{:?}", metrics.deltas);
    assert_eq!(d("Com_rollback"), 0.0);
    // InnoDB: logical reads, row updates, redo written.
    assert!(
        d("Innodb_buffer_pool_read_requests") >= 400.0,
        "{:?}",
        metrics.deltas
    );
    assert!(metrics.mysql_delta("Innodb_buffer_pool_reads").is_some());
    assert_eq!(d("Com_update"), 200.0);
    assert!(d("Innodb_os_log_written") > 0.0);
    assert!(metrics
        .counters
        .iter()
        .all(|c| c.values.contains_key("mysql.Innodb_history_list_length")));
    assert!(metrics.counters.len() >= 2, "{}", metrics.counters.len());
    assert!(metrics.counter_max("mysql.Threads_connected").unwrap() >= 2.0);

    // Top statements by digest: the UPDATE, counted once per transaction, with its rows.
    let upd = metrics
        .statements
        .iter()
        .find(|s| s.query.starts_with("UPDATE `t` SET"))
        .unwrap_or_else(|| panic!("no UPDATE in {:#?}", metrics.statements));
    assert_eq!(upd.calls, 200, "{upd:?}");
    assert_eq!(upd.rows, 200, "{upd:?}");
    assert!(upd.rows_examined.unwrap() >= 200, "{upd:?}");
    assert!(upd.total_exec_time_ms > 0.0 && upd.query_id.is_some());
    // Prepared statements (MariaDB gives them no digest): from their instances.
    let prepared = metrics
        .statements
        .iter()
        .find(|s| s.query == "SELECT v FROM t WHERE id = ?")
        .unwrap_or_else(|| {
            panic!(
                "no prepared SELECT in {:#?}\n{:#?}",
                metrics.statements, metrics.notes
            )
        });
    assert_eq!(prepared.calls, 150, "{prepared:?}");
    assert_eq!(prepared.rows, 150, "{prepared:?}");
    let commit = metrics
        .statements
        .iter()
        .find(|s| s.query == "COMMIT")
        .unwrap_or_else(|| panic!("no COMMIT in {:#?}", metrics.statements));
    assert_eq!(commit.calls, 200);
    // None of the observer's own statements (no default database: not under `obs`).
    assert!(metrics
        .statements
        .iter()
        .all(|s| !s.query.contains("performance_schema") && !s.query.contains("STATUS")));
    let total = metrics.statements_total.as_ref().unwrap();
    // Four statements a transaction, and the SLEEP.
    assert!(total.calls > 4 * 200 + 150, "{total:?}");

    // Sessions: the sleeping one was seen, in its wait (events_waits_current is collected).
    assert!(metrics.cost.samples >= 8, "{:?}", metrics.cost);
    assert!(metrics.average_active() > 0.0);
    let sleep = metrics
        .waits
        .iter()
        .find(|w| w.event.contains("Item_func_sleep"))
        .unwrap_or_else(|| panic!("no sleep wait in {:?}", metrics.waits));
    assert!(sleep.event.starts_with("Synch:cond/"), "{sleep:?}");
    assert!(sleep.samples >= 5, "{sleep:?}");
    assert!(metrics
        .activity
        .iter()
        .any(|s| s.states.get("active").copied().unwrap_or(0) > 0));
    // The load is the three clients' alone (issue 30): neither the observer's own session,
    // always running its sample, nor the replica's dump thread, always in `Binlog Dump`. Both
    // were there before the load started and after the clients went idle.
    assert!(
        metrics.window_samples().all(|s| s.active <= 3),
        "{:?}",
        metrics.activity
    );
    assert!(
        metrics.window_samples().any(|s| s.active == 0),
        "{:?}",
        metrics.activity
    );
    let dump = (metrics.background.iter())
        .find(|b| b.kind == "binlog dump")
        .unwrap_or_else(|| panic!("no dump thread in {:?}", metrics.background));
    assert_eq!(
        dump.samples,
        metrics.window_samples().count() as u64,
        "in every sample: {dump:?}"
    );
    assert!(metrics
        .window_samples()
        .all(|s| s.background.get("binlog dump") == Some(&1)));
    assert_eq!(metrics.background.len(), 1, "{:?}", metrics.background);
    // Waits by time over the run: timed by the server, in the model's form.
    assert!(!metrics.wait_times.is_empty());
    let slept = metrics
        .wait_times
        .iter()
        .find(|w| w.event.contains("Item_func_sleep"))
        .unwrap_or_else(|| panic!("no sleep in {:?}", metrics.wait_times));
    assert!(
        (900.0..5000.0).contains(&slept.total_ms),
        "{slept:?}: one SLEEP(1)"
    );
    assert!(metrics
        .wait_times
        .iter()
        .all(|w| !w.event.starts_with("Other:")));

    // The machine, and the server's process found from its thread.
    assert!(!metrics.os.is_empty());
    assert!(
        metrics
            .os
            .iter()
            .any(|s| s.server_cpu_pct.unwrap_or(0.0) > 0.0),
        "{:?}\n{:?}",
        metrics.os,
        metrics.notes
    );
    // Everything could be seen: the one note says what no setting changes.
    assert_eq!(
        metrics
            .notes
            .iter()
            .map(|n| n.topic.as_str())
            .collect::<Vec<_>>(),
        vec!["query_id"],
        "{:?}",
        metrics.notes
    );
    assert!(metrics.nodes.is_empty());
    // What it cost: two statements per activity sample (the sessions; the prepared statements,
    // so few here that they are read every sample), two per counter read (the whole status and
    // the enabled INNODB_METRICS), about 13 for the probe (the data directory and the metrics
    // among them) and 6 for each of the three snapshots.
    let c = &metrics.cost;
    assert!(
        c.queries <= 2 * c.samples + 2 * metrics.counters.len() as u64 + 33,
        "{c:?}"
    );
    assert_eq!(c.errors, 0);
    assert_eq!(c.connections, 1);
    // Its time is accounted (how small it is, is bench/'s to say: never a timing here).
    assert!(
        c.busy_ms > 0.0 && c.max_sample_ms > 0.0 && c.max_sample_ms <= c.busy_ms,
        "{c:?}"
    );
    eprintln!(
        "cost: {} samples, {} statements, {:.1} ms busy, {:.1} ms CPU over {} ms",
        c.samples, c.queries, c.busy_ms, c.cpu_ms, metrics.window_end_ms
    );
    // The observer's sessions are closed when finish returns.
    let others = m.sql(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER <> 'system user' \
           AND COMMAND NOT LIKE 'Binlog Dump%'",
    );
    assert_eq!(others.trim(), "0");
}

#[test]
fn performance_schema_off_gives_the_fix_not_a_failure() {
    // testkit's default: --performance-schema=OFF.
    let m = MariaDb::start(&[]);
    assert_eq!(m.sql("SELECT @@performance_schema").trim(), "0");
    load_table(&m);
    let target = Target::from(conninfo(&m, "root", "obs"));
    let metrics = observe_while(&target, || workload(&m));

    let off = note_about(&metrics, "performance_schema is OFF")
        .unwrap_or_else(|| panic!("no note in {:?}", metrics.notes));
    assert!(off.contains("--performance-schema=ON"), "{off}");
    assert!(metrics.statements.is_empty() && metrics.statements_total.is_none());
    assert!(metrics.wait_times.is_empty());
    // Still sampled: sessions by thread state, the status counters.
    let stage = metrics
        .waits
        .iter()
        .find(|w| w.event == "Stage:User sleep")
        .unwrap_or_else(|| panic!("no sleeping session in {:?}", metrics.waits));
    assert!(stage.samples >= 5, "{stage:?}");
    assert!(metrics.waits.iter().all(|w| w.event.starts_with("Stage:")));
    assert_eq!(metrics.mysql_delta("Com_commit"), Some(200.0));
    assert!(
        metrics
            .mysql_delta("Innodb_buffer_pool_read_requests")
            .unwrap()
            > 0.0
    );
}

#[test]
fn default_consumers_and_a_user_without_privileges_are_told_what_is_missing() {
    let m = MariaDb::start(&["--performance-schema=ON"]);
    load_table(&m);
    m.sql(
        "CREATE USER 'watcher'@'127.0.0.1'; \
         GRANT SELECT ON obs.* TO 'watcher'@'127.0.0.1'",
    );
    let target = Target::from(conninfo(&m, "watcher", "obs"));
    let metrics = observe_while(&target, || workload(&m));
    let messages: Vec<&str> = metrics.notes.iter().map(|n| n.message.as_str()).collect();
    let process = note_about(&metrics, "PROCESS")
        .unwrap_or_else(|| panic!("no PROCESS note in {messages:#?}"));
    assert!(
        process.contains("GRANT PROCESS ON *.* TO 'watcher'@'127.0.0.1'"),
        "{process}"
    );
    let pfs = note_about(&metrics, "performance_schema cannot be read")
        .unwrap_or_else(|| panic!("no performance_schema note in {messages:#?}"));
    assert!(
        pfs.contains("GRANT SELECT ON performance_schema.*"),
        "{pfs}"
    );
    // Counters need no privilege.
    assert_eq!(metrics.mysql_delta("Com_commit"), Some(200.0));

    // As root: performance_schema is readable, its default consumers leave out the current
    // waits, and MariaDB's default instruments leave out most synchronisation waits.
    let target = Target::from(conninfo(&m, "root", "obs"));
    let metrics = observe_while(&target, || workload(&m));
    let consumer = note_about(&metrics, "events_waits_current consumer is off")
        .unwrap_or_else(|| panic!("{:?}", metrics.notes));
    assert!(
        consumer.contains("--performance-schema-consumer-events-waits-current=ON"),
        "{consumer}"
    );
    let instruments = note_about(&metrics, "wait instruments that are off")
        .unwrap_or_else(|| panic!("{:?}", metrics.notes));
    assert!(instruments.contains("wait/synch/mutex"), "{instruments}");
    let statements = note_about(&metrics, "events_statements_current consumer is off")
        .unwrap_or_else(|| panic!("{:?}", metrics.notes));
    assert!(
        statements.contains("--performance-schema-consumer-events-statements-current=ON"),
        "{statements}"
    );
    // Digests and timed waits still come (statements_digest is on by default).
    assert!(metrics
        .statements
        .iter()
        .any(|s| s.query.starts_with("UPDATE `t` SET") && s.calls == 200));
    assert!(metrics.waits.iter().any(|w| w.event == "Stage:User sleep"));
}

#[test]
fn a_galera_node_is_read_for_its_wsrep_status_on_every_endpoint() {
    let gcomm = testkit::free_port();
    let listen = format!("--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{gcomm}");
    // A cluster of one node, bootstrapped (an empty gcomm:// address).
    let m = MariaDb::start(&[
        "--performance-schema=ON",
        "--wsrep-on=ON",
        "--wsrep-provider=/usr/lib/galera/libgalera_smm.so",
        "--wsrep-cluster-address=gcomm://",
        "--binlog-format=ROW",
        "--innodb-autoinc-lock-mode=2",
        &listen,
    ]);
    // Ready for clients only once synced.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !m
        .sql("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")
        .contains("ON")
    {
        assert!(Instant::now() < deadline, "wsrep not ready\n{}", m.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    load_table(&m);
    // The same node twice, over TCP and over the socket: two endpoints, as a cluster's.
    let tcp = conninfo(&m, "root", "obs");
    let socket = Conninfo::parse(&m.socket_url("root", None, "obs")).unwrap();
    let target = Target::MySql(vec![tcp, socket]);
    let metrics = observe_while(&target, || workload(&m));

    assert_eq!(metrics.nodes.len(), 2, "{:?}", metrics.nodes);
    assert_eq!(metrics.cost.connections, 2);
    assert_eq!(metrics.nodes[0].endpoint, format!("127.0.0.1:{}", m.port()));
    assert_eq!(metrics.nodes[1].endpoint, m.socket().display().to_string());
    for n in &metrics.nodes {
        // Each write set replicated once: 200 transactions.
        assert_eq!(
            n.deltas.get("mysql.wsrep_replicated").copied(),
            Some(200.0),
            "{n:?}"
        );
        for k in [
            "mysql.wsrep_flow_control_paused_ns",
            "mysql.wsrep_local_recv_queue",
            "mysql.wsrep_local_send_queue",
            "mysql.wsrep_local_cert_failures",
            "mysql.wsrep_local_bf_aborts",
        ] {
            assert!(
                n.deltas.contains_key(k),
                "{k} of {}: {:?}",
                n.endpoint,
                n.deltas
            );
        }
        assert!(n.counters.len() >= 2, "{n:?}");
        assert!(n
            .counters
            .iter()
            .all(|c| c.values.keys().all(|k| k.starts_with("mysql.wsrep_"))));
    }
    assert_eq!(metrics.mysql_delta("Com_commit"), Some(200.0));
    assert!(note_about(&metrics, "endpoints:").is_none());
}
