//! The fault helpers do what they promise on real servers: a synchronous standby is reported
//! sync; a held-back standby misses later commits; a crashed primary's processes are gone and
//! its clients are refused; a promoted standby takes writes.

use testkit::{block_on, query, Cluster};

#[test]
fn hold_back_crash_and_promote() {
    let c = Cluster::start(2, &[]);
    c.make_synchronous(0);
    c.primary.psql("CREATE TABLE t (v int)");
    c.primary.psql("INSERT INTO t VALUES (1)");
    c.wait_replayed();

    c.hold_back(1);
    c.primary.psql("INSERT INTO t VALUES (2)");
    // The synchronous standby has the row the moment the INSERT returned (remote_flush); the
    // held-back one never gets it.
    c.standbys[0].wait_for("SELECT count(*)::text FROM t", "2");
    assert_eq!(c.standbys[1].psql("SELECT count(*) FROM t").trim(), "1");

    c.primary.crash();
    let refused = std::thread::spawn({
        let cfg = c.primary.conn_config().clone();
        move || block_on(async { pg::Session::connect(&cfg).await.is_err() })
    });
    assert!(
        refused.join().unwrap(),
        "a crashed server accepted a session"
    );

    c.standbys[0].promote();
    c.standbys[0].psql("INSERT INTO t VALUES (3)");
    let rows = block_on(query(c.standbys[0].conn_config(), "SELECT count(*) FROM t"));
    assert_eq!(rows[0][0].as_deref(), Some("3"));
}
