use super::*;

#[test]
fn versions_parse() {
    assert_eq!(
        parse_version(
            "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on \
             x86_64 (Debian 12)\n"
        )
        .as_deref(),
        Some("10.11.19-MariaDB")
    );
    assert_eq!(
        parse_version("/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community)")
            .as_deref(),
        Some("8.0.36")
    );
    assert_eq!(parse_version("nonsense"), None);
}

#[test]
fn settings_merge_by_normalised_name_and_own_ones_are_refused() {
    let m = merge_settings(
        default_settings(),
        &[
            ("MAX-CONNECTIONS".into(), "50".into()),
            ("innodb_io_capacity".into(), "2000".into()),
        ],
    );
    assert_eq!(find(&m, "max_connections"), Some("50"));
    assert_eq!(
        m.iter()
            .filter(|(k, _)| norm(k) == "max_connections")
            .count(),
        1
    );
    assert_eq!(
        m.last().unwrap(),
        &("innodb_io_capacity".into(), "2000".into())
    );
    for own in ["socket", "--datadir", "pid-file", "log_error", "user"] {
        let e = check_settings(&[(own.into(), "/x".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("stampede's own"), "{own}: {e}");
    }
    assert_eq!(option_arg("skip-log-bin", ""), "--skip-log-bin");
    assert_eq!(option_arg("port", "3307"), "--port=3307");
}

#[test]
fn defaults_are_honest_and_sized_from_memory() {
    let s = default_settings();
    assert_eq!(find(&s, "innodb_flush_log_at_trx_commit"), Some("1"));
    assert_eq!(find(&s, "innodb_doublewrite"), Some("ON"));
    assert_eq!(find(&s, "performance_schema"), Some("ON"));
    // What the observer reads is on (issue 35): no `Stage:(none)`, no note asking for it.
    for consumer in ["events_waits_current", "events_statements_current"] {
        let name = format!("performance_schema_consumer_{consumer}");
        assert_eq!(find(&s, &name), Some("ON"), "{name}");
    }
    assert_eq!(find(&s, "performance_schema_instrument"), Some("wait/%=ON"));
    let pool: u64 = find(&s, "innodb_buffer_pool_size")
        .unwrap()
        .trim_end_matches('M')
        .parse()
        .unwrap();
    assert!((128..=4096).contains(&pool), "{pool}");
    assert_eq!(max_connections_for(8), 10_000);
    assert_eq!(max_connections_for(20_000), 20_100);
    assert_eq!(max_connections_for(u32::MAX), u32::MAX);
}

#[test]
fn client_host_and_flags() {
    assert_eq!(client_host(None), "127.0.0.1");
    assert_eq!(client_host(Some("0.0.0.0")), "127.0.0.1");
    assert_eq!(client_host(Some("::1,127.0.0.1")), "::1");
    assert!(is_on(Some("")) && is_on(Some("ON")) && !is_on(Some("off")) && !is_on(None));
}

#[test]
fn the_record_round_trips_odd_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(RECORD_FILE);
    let values = [
        ("socket", "/tmp/a b#c/mysqld.sock"),
        ("performance_schema_instrument", "wait/synch/%=ON"),
        ("init_connect", "SET @x = \"a\\b\""),
        ("skip_log_bin", ""),
    ];
    let mut text = format!("[client]\nuser = root\n[{RECORD_GROUP}]\n");
    for (k, v) in values {
        if v.is_empty() {
            text.push_str(&format!("{k}\n"));
        } else {
            text.push_str(&format!("{k} = {}\n", cnf_value(v)));
        }
    }
    fs::write(&path, text).unwrap();
    let back = read_record(&path);
    let want: Vec<(String, String)> = values
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(back, want);
}

#[test]
fn a_missing_bindir_names_the_package() {
    let e = EmbeddedMariaDb::find_binaries(Some(Path::new("/nonexistent/bin")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("apt-get install mariadb-server"), "{e}");
    assert!(e.contains("/nonexistent/bin"), "{e}");
}
