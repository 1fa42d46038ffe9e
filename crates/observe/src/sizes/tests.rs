//! The parts of the sizes' readings that need no server: the layouts' words as kinds, the
//! Limitless rows as the documentation shows them, a foreign server's options as a connection.
//! The readings themselves are tested against real servers through the binary
//! (`crates/stampede/tests/sizes.rs`).

use measure::sizes::{LOCAL, REFERENCE, SHARDED};
use serde_json::json;

use super::{citus, fdw, limitless};

#[test]
fn each_layouts_table_types_are_kinds() {
    assert_eq!(citus::kind("distributed"), SHARDED);
    assert_eq!(citus::kind("reference"), REFERENCE);
    assert_eq!(citus::kind("local"), LOCAL);
    assert_eq!(limitless::kind("sharded"), SHARDED);
    assert_eq!(limitless::kind("reference"), REFERENCE);
    assert_eq!(limitless::kind("standard"), LOCAL);
}

#[test]
fn limitless_relation_sizes_keep_the_shards_and_leave_the_routers_out() {
    let rows = vec![
        json!({"subcluster_id": "2", "subcluster_type": "router", "pg_table_size": 0,
               "pg_indexes_size": 0}),
        json!({"subcluster_id": "4", "subcluster_type": "shard", "pg_relation_size": 8192,
               "pg_table_size": 16384, "pg_indexes_size": 4096,
               "pg_total_relation_size": 20480}),
        json!({"subcluster_id": 5, "subcluster_type": "shard", "table_size": "100",
               "indexes_size": "20"}),
    ];
    let p = limitless::parts(&rows);
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(p[0].shard, "shard 4");
    // The table's size is pg_table_size's, not pg_relation_size's (the heap alone).
    assert_eq!(
        (p[0].table_bytes, p[0].index_bytes, p[0].total_bytes),
        (Some(16384), Some(4096), 20480)
    );
    assert_eq!(p[1].shard, "shard 5");
    assert_eq!(
        (p[1].table_bytes, p[1].index_bytes, p[1].total_bytes),
        (Some(100), Some(20), 120)
    );
}

#[test]
fn a_foreign_servers_options_become_its_connection() {
    let flags = sut::ConnFlags {
        dbname: Some("host=/tmp port=5432 user=coordinator dbname=bench".into()),
        ..Default::default()
    };
    let base = sut::ConnConfig::resolve(&flags, &|_| None).unwrap();
    let row = vec![
        Some("stampede_shard1".to_string()),
        Some("10.0.0.2,10.0.0.3".to_string()),
        Some("5433,5434".to_string()),
        Some("shard_db".to_string()),
        Some("shard_user".to_string()),
        Some("s3cret".to_string()),
    ];
    let (c, location) = fdw::shard_conn(&base, &row);
    assert_eq!(c.hosts.len(), 2);
    assert_eq!(
        (c.hosts[1].host.as_str(), c.hosts[1].port),
        ("10.0.0.3", 5434)
    );
    assert_eq!(
        (c.dbname.as_str(), c.user.as_str()),
        ("shard_db", "shard_user")
    );
    assert_eq!(c.password.as_ref().map(|p| p.0.as_str()), Some("s3cret"));
    assert_eq!(
        location,
        "host=10.0.0.2,10.0.0.3 port=5433,5434 dbname=shard_db"
    );
    assert!(!location.contains("s3cret"));
    // No options: the coordinator's host, libpq's port, the coordinator's database and user.
    let (c, _) = fdw::shard_conn(&base, &[Some("s".into()), None, None, None, None, None]);
    assert_eq!((c.hosts[0].host.as_str(), c.hosts[0].port), ("/tmp", 5432));
    assert_eq!(
        (c.dbname.as_str(), c.user.as_str()),
        ("bench", "coordinator")
    );
    assert_eq!(fdw::shard_key("HASH (bid)"), "bid");
}
