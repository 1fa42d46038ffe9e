use super::binaries::{parse_version, version_key};
use super::*;

#[test]
fn versions_parse_and_sort() {
    assert_eq!(
        parse_version("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n").as_deref(),
        Some("15.18")
    );
    assert_eq!(
        parse_version("postgres (PostgreSQL) 17beta1\n").as_deref(),
        Some("17beta1")
    );
    let mut v = vec!["9.6", "15", "10", "16"];
    v.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
    assert_eq!(v, vec!["16", "15", "10", "9.6"]);
}

#[test]
fn settings_merge_and_quote() {
    let m = merge_settings(
        vec![
            ("max_connections".into(), "1100".into()),
            ("fsync".into(), "on".into()),
        ],
        &[
            ("MAX_CONNECTIONS".into(), "50".into()),
            ("work_mem".into(), "64MB".into()),
        ],
    );
    assert_eq!(m[0], ("max_connections".into(), "50".into()));
    assert_eq!(m[2], ("work_mem".into(), "64MB".into()));
    assert_eq!(conf_value("64MB"), "64MB");
    assert_eq!(
        conf_value("pg_stat_statements,auto_explain"),
        "'pg_stat_statements,auto_explain'"
    );
    assert_eq!(conf_value("''"), "''");
    assert_eq!(conf_value("127.0.0.1"), "'127.0.0.1'");
    assert_eq!(conf_value("0.9"), "0.9");
    assert_eq!(conf_value("on"), "on");
    assert_eq!(conf_value("15min"), "15min");
    assert_eq!(conf_value("it's"), "'it''s'");
    assert_eq!(unquote("'a''b'"), "a'b");
}

#[test]
fn defaults_are_honest() {
    let s = default_settings(Path::new("/nonexistent"));
    let get = |n: &str| s.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    assert_eq!(get("fsync").as_deref(), Some("on"));
    assert_eq!(get("synchronous_commit").as_deref(), Some("on"));
    let sb: u64 = get("shared_buffers")
        .unwrap()
        .trim_end_matches("MB")
        .parse()
        .unwrap();
    assert!((128..=4096).contains(&sb));
}

#[test]
fn bogus_bindir_gives_install_hint() {
    let e = EmbeddedServer::find_binaries(Some(Path::new("/nonexistent/bin"))).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("apt-get install postgresql-15"), "{msg}");
    assert!(msg.contains("--pg-bindir"), "{msg}");
}

#[test]
fn max_connections_grows_with_the_clients_beyond_the_default() {
    assert_eq!(max_connections_for(8), 1100);
    assert_eq!(max_connections_for(1000), 1100);
    assert_eq!(max_connections_for(1001), 1101);
    assert_eq!(max_connections_for(5000), 5100);
    assert_eq!(max_connections_for(u32::MAX), u32::MAX);
}
