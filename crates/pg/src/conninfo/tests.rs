use super::*;
use std::collections::HashMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| m.get(k).cloned()
}

fn resolve(dbname: Option<&str>, env: &[(&str, &str)]) -> Result<ConnConfig, Error> {
    let flags = ConnFlags {
        dbname: dbname.map(String::from),
        ..Default::default()
    };
    ConnConfig::resolve(&flags, &env_of(env))
}

fn hs(host: &str, port: u16) -> HostSpec {
    HostSpec {
        host: host.into(),
        port,
    }
}

fn config_err(r: Result<ConnConfig, Error>) -> String {
    match r {
        Err(Error::Config(m)) => m,
        Err(e) => panic!("expected Error::Config, got {e}"),
        Ok(c) => panic!("expected an error, got {}", c.redacted()),
    }
}

#[test]
fn defaults_are_libpqs() {
    let c = resolve(None, &[("USER", "ignored-when-getpwuid-works")]).unwrap();
    assert_eq!(c.hosts, vec![hs(default_socket_dir(), 5432)]);
    let me = os_user_name().unwrap();
    assert_eq!(c.user, me);
    assert_eq!(c.dbname, me);
    assert_eq!(c.sslmode, SslMode::Prefer);
    assert_eq!(c.application_name, "stampede");
    assert_eq!(c.password, None);
    // Not libpq's: it waits forever (conninfo::DEFAULT_CONNECT_TIMEOUT says why).
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(10)));
    assert_eq!(c.options, None);
    let c = resolve(Some("connect_timeout=0"), &[("PGCONNECT_TIMEOUT", "5")]).unwrap();
    assert_eq!(c.connect_timeout, None, "0 waits forever, as in libpq");
    let c = resolve(None, &[("PGCONNECT_TIMEOUT", "5")]).unwrap();
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(5)));
}

#[test]
fn plain_dbname() {
    let c = resolve(Some("bench"), &[("PGDATABASE", "other")]).unwrap();
    assert_eq!(c.dbname, "bench");
}

#[test]
fn url_forms() {
    let c = resolve(Some("postgresql://alice:s%40cret@db.example:6543/my%20db?sslmode=require&application_name=x"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("db.example", 6543)]);
    assert_eq!(c.user, "alice");
    assert_eq!(c.password, Some(Password("s@cret".into())));
    assert_eq!(c.dbname, "my db");
    assert_eq!(c.sslmode, SslMode::Require);
    assert_eq!(c.application_name, "x");

    let c = resolve(Some("postgres://[::1]:5433,[fe80::2],h3:7/db"), &[]).unwrap();
    assert_eq!(
        c.hosts,
        vec![hs("::1", 5433), hs("fe80::2", 5432), hs("h3", 7)]
    );

    let c = resolve(Some("postgresql:///bench?host=/run/pg&port=5499"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("/run/pg", 5499)]);
    assert_eq!(c.dbname, "bench");

    let c = resolve(Some("postgresql://%2Ftmp%2Fsock/db"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("/tmp/sock", 5432)]);

    let c = resolve(
        Some("postgresql://bob@host?ssl=true&connect_timeout=1"),
        &[],
    )
    .unwrap();
    assert_eq!(c.user, "bob");
    assert_eq!(c.dbname, "bob");
    assert_eq!(c.sslmode, SslMode::Require);
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(2)));

    let c = resolve(Some("postgresql://"), &[("PGHOST", "envhost")]).unwrap();
    assert_eq!(c.hosts, vec![hs("envhost", 5432)]);
}

#[test]
fn kv_forms_and_quoting() {
    let c = resolve(
        Some(r"host=h1 port = 6000 user='o\'brien' password='a b\\c' dbname=x\ y options='-c work_mem=64MB'"),
        &[],
    )
    .unwrap();
    assert_eq!(c.hosts, vec![hs("h1", 6000)]);
    assert_eq!(c.user, "o'brien");
    assert_eq!(c.password, Some(Password(r"a b\c".into())));
    assert_eq!(c.dbname, "x y");
    assert_eq!(c.options.as_deref(), Some("-c work_mem=64MB"));

    let c = resolve(Some("dbname=d fallback_application_name=fb"), &[]).unwrap();
    assert_eq!(c.application_name, "fb");
    let c = resolve(
        Some("dbname=d fallback_application_name=fb"),
        &[("PGAPPNAME", "env")],
    )
    .unwrap();
    assert_eq!(c.application_name, "env");
    let c = resolve(Some("hostaddr=127.0.0.1 dbname=d"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("127.0.0.1", 5432)]);
    // Empty values count as not given.
    let c = resolve(Some("host='' dbname=d"), &[("PGHOST", "eh")]).unwrap();
    assert_eq!(c.hosts, vec![hs("eh", 5432)]);
}

#[test]
fn precedence_string_over_flags_over_env_over_defaults() {
    let env = env_of(&[
        ("PGHOST", "envhost"),
        ("PGPORT", "1111"),
        ("PGUSER", "envuser"),
        ("PGDATABASE", "envdb"),
        ("PGPASSWORD", "envpw"),
        ("PGSSLMODE", "disable"),
        ("PGAPPNAME", "envapp"),
        ("PGCONNECT_TIMEOUT", "7"),
        ("PGOPTIONS", "-c x=1"),
        ("PGSSLROOTCERT", "/env/root.crt"),
        ("PGPASSFILE", "/env/pgpass"),
    ]);
    // Env over defaults.
    let c = ConnConfig::resolve(&ConnFlags::default(), &env).unwrap();
    assert_eq!(c.hosts, vec![hs("envhost", 1111)]);
    assert_eq!(c.user, "envuser");
    assert_eq!(c.dbname, "envdb");
    assert_eq!(c.password, Some(Password("envpw".into())));
    assert_eq!(c.sslmode, SslMode::Disable);
    assert_eq!(c.application_name, "envapp");
    assert_eq!(c.connect_timeout, Some(Duration::from_secs(7)));
    assert_eq!(c.options.as_deref(), Some("-c x=1"));
    assert_eq!(c.sslrootcert, Some(PathBuf::from("/env/root.crt")));
    assert_eq!(c.passfile, Some(PathBuf::from("/env/pgpass")));
    // Flags over env.
    let flags = ConnFlags {
        host: Some("flaghost".into()),
        port: Some("2222".into()),
        user: Some("flaguser".into()),
        dbname: Some("flagdb".into()),
    };
    let c = ConnConfig::resolve(&flags, &env).unwrap();
    assert_eq!(c.hosts, vec![hs("flaghost", 2222)]);
    assert_eq!((c.user.as_str(), c.dbname.as_str()), ("flaguser", "flagdb"));
    // Connection string over flags.
    let flags = ConnFlags {
        dbname: Some("host=strhost port=3333 user=struser dbname=strdb sslmode=verify-full".into()),
        ..flags
    };
    let c = ConnConfig::resolve(&flags, &env).unwrap();
    assert_eq!(c.hosts, vec![hs("strhost", 3333)]);
    assert_eq!((c.user.as_str(), c.dbname.as_str()), ("struser", "strdb"));
    assert_eq!(c.sslmode, SslMode::VerifyFull);
    // A connection string without host keeps the flag's host.
    let flags = ConnFlags {
        dbname: Some("postgresql:///x".into()),
        ..flags
    };
    let c = ConnConfig::resolve(&flags, &env).unwrap();
    assert_eq!(c.hosts, vec![hs("flaghost", 2222)]);
    assert_eq!(c.dbname, "x");
    // PGHOME-less passfile default: ~/.pgpass under $HOME.
    let c = resolve(None, &[("HOME", "/home/zed")]).unwrap();
    assert_eq!(c.passfile, Some(PathBuf::from("/home/zed/.pgpass")));
}

#[test]
fn multi_host_lists() {
    let c = resolve(Some("host=a,b,c port=1"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 1), hs("c", 1)]);
    let c = resolve(Some("host=a,b port=1,2"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 2)]);
    let c = resolve(Some("host=a,,/s port=,9,"), &[]).unwrap();
    assert_eq!(
        c.hosts,
        vec![hs("a", 5432), hs(default_socket_dir(), 9), hs("/s", 5432)]
    );
    let c = resolve(Some("postgresql://a:1,b/db"), &[]).unwrap();
    assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 5432)]);
    let m = config_err(resolve(Some("host=a,b,c port=1,2"), &[]));
    assert_eq!(m, "could not match 2 port numbers to 3 hosts");
    let c = resolve(Some("host=a,b port=1,2"), &[]).unwrap();
    assert_eq!(
        c.redacted(),
        format!(
            "host=a,b port=1,2 user={0} dbname={0} sslmode=prefer",
            c.user
        )
    );
}

#[test]
fn bad_inputs_have_clear_messages() {
    let cases: &[(&str, &str)] = &[
        ("host=a bogus=1", "invalid connection option \"bogus\""),
        ("host=a port", "missing \"=\" after \"port\""),
        ("host='a", "unterminated quoted string"),
        ("port=70000", "invalid port number: \"70000\""),
        ("port=x", "invalid port number: \"x\""),
        ("sslmode=sometimes", "invalid sslmode value: \"sometimes\""),
        (
            "connect_timeout=soon",
            "invalid integer value \"soon\" for connection option \"connect_timeout\"",
        ),
        (
            "postgresql://h/db?nosuch=1",
            "invalid connection option \"nosuch\"",
        ),
        ("postgresql://h/db?sslmode", "missing key/value separator"),
        ("postgresql://[::1/db", "matching \"]\""),
        ("postgresql://h/d%zzb", "invalid percent-encoded token"),
        ("postgresql://h/d%00b", "forbidden value %00"),
        (
            "target_session_attrs=master",
            "invalid target_session_attrs value: \"master\"",
        ),
        ("load_balance_hosts=yes", "invalid load_balance_hosts value"),
    ];
    for (input, want) in cases {
        let m = config_err(resolve(Some(input), &[]));
        assert!(m.contains(want), "{input}: {m:?} should contain {want:?}");
    }
    let m = config_err(resolve(None, &[("PGSSLMODE", "nope")]));
    assert!(m.contains("nope"));
    // Errors never echo a password.
    let m = config_err(resolve(
        Some("postgresql://u:topsecret@h/db?password=x%zz"),
        &[],
    ));
    assert!(!m.contains("topsecret"), "{m}");
}

#[test]
fn redacted_never_shows_the_password() {
    let c = resolve(
        Some("postgresql://u:hunter2@h:5/d"),
        &[("PGPASSWORD", "pw2")],
    )
    .unwrap();
    let r = c.redacted();
    assert_eq!(r, "host=h port=5 user=u dbname=d sslmode=prefer");
    assert!(!format!("{c:?}").contains("hunter2"));
    let c = resolve(Some("user='a b' dbname=x host=/tmp"), &[]).unwrap();
    assert_eq!(
        c.redacted(),
        "host=/tmp port=5432 user='a b' dbname=x sslmode=prefer"
    );
}

#[test]
fn redact_scrubs_conninfo_and_urls() {
    let cases: &[(&str, &str)] = &[
        ("password=secret host=h", "password=*** host=h"),
        (
            "host=h PASSWORD = 'se cr\\'et' user=u",
            "host=h PASSWORD = *** user=u",
        ),
        ("postgres://u:secret@h/db", "postgres://u:***@h/db"),
        (
            "x postgresql://u:s%40c@h1,h2:5/db?sslmode=require y",
            "x postgresql://u:***@h1,h2:5/db?sslmode=require y",
        ),
        (
            "postgresql://h/db?password=secret&sslmode=require",
            "postgresql://h/db?password=***&sslmode=require",
        ),
        ("PGPASSWORD=secret pgbench", "PGPASSWORD=*** pgbench"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        (
            "password authentication failed for user \"u\"",
            "password authentication failed for user \"u\"",
        ),
        ("passfile=/x dbname=d", "passfile=/x dbname=d"),
        ("mypassword=x", "mypassword=***"),
        ("ünïcode password=sécret ok", "ünïcode password=*** ok"),
        ("password=", "password=***"),
    ];
    for (input, want) in cases {
        assert_eq!(redact(input), *want, "input {input:?}");
    }
    for secret in ["secret", "se cr\\'et", "s%40c"] {
        for (input, _) in cases {
            if input.contains(secret) {
                assert!(!redact(input).contains(secret));
            }
        }
    }
}

#[test]
fn pgpass_rules() {
    let file = "\
# comment
db.example:5432:bench:alice:pw1
*:5433:*:alice:pw2
localhost:*:*:bob:pw3
h\\:x:*:*:carol:pa\\:ss\\\\w
/run/sock:*:*:dave:pw5
*:*:*:*:
*:*:*:*:fallback
";
    assert_eq!(
        pgpass_match(file, "db.example", 5432, "bench", "alice").as_deref(),
        Some("pw1")
    );
    assert_eq!(
        pgpass_match(file, "other", 5433, "x", "alice").as_deref(),
        Some("pw2")
    );
    assert_eq!(
        pgpass_match(file, "localhost", 1, "x", "bob").as_deref(),
        Some("pw3")
    );
    assert_eq!(
        pgpass_match(file, "h:x", 1, "x", "carol").as_deref(),
        Some("pa:ss\\w")
    );
    assert_eq!(
        pgpass_match(file, "/run/sock", 1, "x", "dave").as_deref(),
        Some("pw5")
    );
    // First match wins, even when its password is empty (then: no password).
    assert_eq!(pgpass_match(file, "db.example", 1, "bench", "zed"), None);
    assert_eq!(
        pgpass_match("*:*:*:*:pw", "h", 1, "d", "u").as_deref(),
        Some("pw")
    );
    // `\*` is a literal star, not a wildcard.
    assert_eq!(pgpass_match("\\*:*:*:*:pw", "h", 1, "d", "u"), None);
    assert_eq!(
        pgpass_match("\\*:*:*:*:pw", "*", 1, "d", "u").as_deref(),
        Some("pw")
    );
    // Short lines are skipped; CRLF endings are fine.
    assert_eq!(
        pgpass_match("a:b\r\nh:1:d:u:pw\r\n", "h", 1, "d", "u").as_deref(),
        Some("pw")
    );
    // A password may itself contain colons.
    assert_eq!(
        pgpass_match("h:1:d:u:a:b", "h", 1, "d", "u").as_deref(),
        Some("a:b")
    );
    // The default socket directory matches `localhost`; other socket directories match as is.
    assert_eq!(pgpass_host(default_socket_dir()), "localhost");
    assert_eq!(pgpass_host("/elsewhere"), "/elsewhere");
    assert_eq!(pgpass_host("db"), "db");
}

#[test]
fn pgpass_file_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pgpass");
    std::fs::write(&p, "*:*:*:*:filepw\n").unwrap();
    let host = hs("db", 5432);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        pgpass_lookup(&p, &host, "d", "u").as_deref(),
        Some("filepw")
    );
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(pgpass_lookup(&p, &host, "d", "u"), None);
    assert_eq!(pgpass_lookup(dir.path(), &host, "d", "u"), None);
    assert_eq!(
        pgpass_lookup(&dir.path().join("missing"), &host, "d", "u"),
        None
    );
}

#[test]
fn unix_socket_paths() {
    assert_eq!(
        hs("/tmp", 5433).socket_path(),
        PathBuf::from("/tmp/.s.PGSQL.5433")
    );
    assert!(hs("/tmp", 1).is_unix());
    assert!(!hs("localhost", 1).is_unix());
    assert_eq!(hs("/a b", 1).describe(), "host='/a b' port=1");
}

/// target_session_attrs and load_balance_hosts: from the string, from the environment
/// (PGTARGETSESSIONATTRS, PGLOADBALANCEHOSTS), the string winning.
#[test]
fn session_attrs_and_load_balance_are_read() {
    use super::{LoadBalance, SessionAttrs};
    let c = resolve(
        Some("host=a,b port=1,2 target_session_attrs=prefer-standby load_balance_hosts=random"),
        &[],
    )
    .unwrap();
    assert_eq!(c.target_session_attrs, SessionAttrs::PreferStandby);
    assert_eq!(c.load_balance_hosts, LoadBalance::Random);
    let c = resolve(Some("host=a"), &[("PGTARGETSESSIONATTRS", "standby")]).unwrap();
    assert_eq!(c.target_session_attrs, SessionAttrs::Standby);
    let c = resolve(
        Some("target_session_attrs=read-write"),
        &[
            ("PGTARGETSESSIONATTRS", "standby"),
            ("PGLOADBALANCEHOSTS", "random"),
        ],
    )
    .unwrap();
    assert_eq!(c.target_session_attrs, SessionAttrs::ReadWrite);
    assert_eq!(c.load_balance_hosts, LoadBalance::Random);
    let c = resolve(Some("host=a,b,c port=1,2,3"), &[]).unwrap();
    let ports: Vec<u16> = c.starting_at(4).hosts.iter().map(|h| h.port).collect();
    assert_eq!(ports, [2, 3, 1]);
}

#[test]
fn url_passwords_may_hold_reserved_characters() {
    for (url, pw) in [
        // Raw, as libpq takes them: '?' and '#' before the '@'; an '@' (libpq would end the
        // user info at the first); a quote.
        ("postgresql://u:Zq?Wk#9@h:5/d?sslmode=disable", "Zq?Wk#9"),
        ("postgresql://u:Zq@Wk9@h:5/d", "Zq@Wk9"),
        ("postgresql://u:Zq'Wk9@h:5/d", "Zq'Wk9"),
        // Percent-encoded: any character.
        ("postgresql://u:Zq%3FW%23k%40x%2F9%27@h:5/d", "Zq?W#k@x/9'"),
    ] {
        let c = resolve(Some(url), &[]).unwrap();
        assert_eq!(c.password, Some(Password(pw.into())), "{url}");
        assert_eq!(
            (c.user.as_str(), c.hosts.clone(), c.dbname.as_str()),
            ("u", vec![hs("h", 5)], "d"),
            "{url}"
        );
    }
    // A raw '/' cannot be told from the path (libpq neither): refused, quoting no part of it.
    for url in [
        "postgresql://u:Zq/Wk9@h:5/d",
        "postgresql://u:Zq/Wk9?x=1@h/d",
        "postgresql://u:Zq/Wk9:99999@h",
    ] {
        let m = config_err(resolve(Some(url), &[]));
        assert!(
            m.contains("%2F") && !m.contains("Zq") && !m.contains("Wk9"),
            "{url}: {m}"
        );
    }
}
