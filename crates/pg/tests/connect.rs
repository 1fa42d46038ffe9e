//! Connecting to a real PostgreSQL 15: transports, authentication methods, TLS modes, and the
//! errors for each way a connection fails.

mod common;

use std::time::{Duration, Instant};

use common::{resolve, TestServer, MD5_PASSWORD, SCRAM_PASSWORD};
use pg::{Error, Session};

async fn one_value(s: &mut Session, sql: &str) -> String {
    let rows = s.simple_query(sql).await.unwrap();
    rows[0][0].clone().unwrap()
}

#[tokio::test]
async fn unix_socket_and_tcp() {
    let srv = TestServer::start();
    let mut s = srv.admin().await;
    assert!(s.is_usable());
    assert!(s.backend_pid() > 0);
    assert_eq!(s.server_version_num() / 10000, 15);
    assert_eq!(s.parameter("client_encoding"), Some("UTF8"));
    assert_eq!(s.parameter("application_name"), Some("stampede"));
    assert_eq!(
        one_value(&mut s, "SELECT pg_backend_pid()").await,
        s.backend_pid().to_string()
    );
    // Unix socket: no client address.
    let addr = s
        .simple_query("SELECT client_addr FROM pg_stat_activity WHERE pid = pg_backend_pid()")
        .await
        .unwrap();
    assert_eq!(addr[0][0], None);
    s.close().await;

    let cfg = srv.config(&format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres sslmode=disable \
         application_name=tcp-test options='-c work_mem=7MB'",
        srv.port
    ));
    let mut s = Session::connect(&cfg).await.unwrap();
    assert_eq!(
        one_value(
            &mut s,
            "SELECT client_addr::text FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        )
        .await,
        "127.0.0.1/32"
    );
    assert_eq!(one_value(&mut s, "SHOW application_name").await, "tcp-test");
    assert_eq!(one_value(&mut s, "SHOW work_mem").await, "7MB");
    assert_eq!(
        one_value(
            &mut s,
            "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
        )
        .await,
        "false"
    );
    s.close().await;

    // A URL naming the same server.
    let cfg = resolve(&format!(
        "postgresql://postgres@127.0.0.1:{}/postgres?sslmode=disable",
        srv.port
    ));
    Session::connect(&cfg).await.unwrap().close().await;
}

#[tokio::test]
async fn md5_and_scram_passwords() {
    let srv = TestServer::start();
    srv.create_roles().await;
    let base = |user: &str, extra: &str| {
        format!(
            "host=127.0.0.1 port={} user={user} dbname=postgres sslmode=disable {extra}",
            srv.port
        )
    };
    for (user, pw) in [("md5_user", MD5_PASSWORD), ("scram_user", SCRAM_PASSWORD)] {
        let quoted = pw.replace('\\', "\\\\").replace('\'', "\\'");
        let mut cfg = srv.config(&base(user, &format!("password='{quoted}'")));
        let mut s = Session::connect(&cfg)
            .await
            .unwrap_or_else(|e| panic!("{user}: {e}"));
        assert_eq!(one_value(&mut s, "SELECT current_user").await, user);
        s.close().await;

        // Wrong password: Error::Auth with the server's message and no password anywhere.
        cfg.password = Some(pg::conninfo::Password("Wr0ngPassw0rd".into()));
        match Session::connect(&cfg).await {
            Err(e @ Error::Auth { .. }) => {
                let shown = format!("{e} {e:?}");
                assert!(shown.contains("password authentication failed"), "{shown}");
                assert!(
                    !shown.contains("Wr0ngPassw0rd") && !shown.contains(pw),
                    "{shown}"
                );
            }
            Err(e) => panic!("{user}: expected Error::Auth, got {e:?}"),
            Ok(_) => panic!("{user}: wrong password accepted"),
        }

        // No password at all.
        cfg.password = None;
        match Session::connect(&cfg).await {
            Err(Error::Auth { message, .. }) => {
                assert!(message.contains("none was supplied"), "{message}")
            }
            other => panic!("{user}: expected Error::Auth, got {:?}", other.err()),
        }
    }

    // The password file, consulted only because the server asked.
    let pgpass = srv.dir.path().join("pgpass");
    let escaped = SCRAM_PASSWORD.replace('\\', "\\\\").replace(':', "\\:");
    std::fs::write(
        &pgpass,
        format!("# test\n127.0.0.1:{}:*:scram_user:{escaped}\n", srv.port),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let cfg = srv.config(&base(
        "scram_user",
        &format!("passfile={}", pgpass.display()),
    ));
    let mut s = Session::connect(&cfg)
        .await
        .expect("password from the password file");
    assert_eq!(one_value(&mut s, "SELECT current_user").await, "scram_user");
    s.close().await;
    // A group-readable file is ignored, as libpq does.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(matches!(
        Session::connect(&cfg).await,
        Err(Error::Auth { .. })
    ));
}

#[tokio::test]
async fn connection_failures() {
    let srv = TestServer::start();
    // Nothing listens on this port.
    let dead = common::free_port();
    let cfg = resolve(&format!(
        "host=127.0.0.1 port={dead} user=postgres sslmode=disable"
    ));
    match Session::connect(&cfg).await {
        Err(e @ Error::Connect { .. }) => {
            let m = e.to_string();
            assert!(m.contains(&format!("port={dead}")), "{m}");
            assert!(m.contains("accepting TCP/IP connections"), "{m}");
        }
        other => panic!("expected Error::Connect, got {:?}", other.err()),
    }
    // No socket file.
    let cfg = resolve(&format!(
        "host={} port={dead} user=postgres",
        srv.socket_dir().display()
    ));
    match Session::connect(&cfg).await {
        Err(e @ Error::Connect { .. }) => assert!(e.to_string().contains(".s.PGSQL."), "{e}"),
        other => panic!("expected Error::Connect, got {:?}", other.err()),
    }
    // Missing database: the server's 3D000.
    let cfg = srv.admin_config().with_dbname("no_such_db");
    match Session::connect(&cfg).await {
        Err(Error::Db(e)) => assert_eq!(e.code, "3D000", "{e}"),
        other => panic!("expected Error::Db, got {:?}", other.err()),
    }
    // Multi-host: the dead host is skipped.
    let cfg = resolve(&format!(
        "host=127.0.0.1,localhost port={dead},{} user=postgres dbname=postgres sslmode=disable",
        srv.port
    ));
    Session::connect(&cfg)
        .await
        .expect("second host")
        .close()
        .await;
    // All dead: the error names the last host.
    let cfg = resolve(&format!(
        "host=localhost,127.0.0.1 port={dead} user=postgres sslmode=disable"
    ));
    match Session::connect(&cfg).await {
        Err(e @ Error::Connect { .. }) => assert!(e.to_string().contains("host=127.0.0.1"), "{e}"),
        other => panic!("expected Error::Connect, got {:?}", other.err()),
    }
    // connect_timeout: a listener that accepts and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let cfg = resolve(&format!(
        "host=127.0.0.1 port={port} user=postgres sslmode=disable connect_timeout=2"
    ));
    let t0 = Instant::now();
    match Session::connect(&cfg).await {
        Err(e @ Error::Connect { .. }) => assert!(e.to_string().contains("timeout"), "{e}"),
        other => panic!("expected a timeout, got {:?}", other.err()),
    }
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(10),
        "{took:?}"
    );
    drop(silent);
}

#[tokio::test]
async fn tls_modes() {
    let srv = TestServer::start();
    srv.create_roles().await;
    let ca = srv.ca_cert.display().to_string();
    let conn = |host: &str, user: &str, extra: &str| {
        resolve(&format!(
            "host={host} port={} user={user} dbname=postgres {extra}",
            srv.port
        ))
    };
    async fn ssl_in_use(cfg: &pg::ConnConfig) -> Result<bool, Error> {
        let mut s = Session::connect(cfg).await?;
        let v = one_value(
            &mut s,
            "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        )
        .await;
        s.close().await;
        Ok(v == "true")
    }
    // require: encrypted, no verification (no root certificate given; none in ~/.postgresql).
    let home_root =
        std::env::var("HOME").map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"));
    if !home_root.as_ref().is_ok_and(|p| p.exists()) {
        assert!(
            ssl_in_use(&conn("127.0.0.1", "postgres", "sslmode=require"))
                .await
                .unwrap()
        );
    }
    // prefer (the default): TLS when offered.
    assert!(ssl_in_use(&conn("127.0.0.1", "postgres", ""))
        .await
        .unwrap());
    assert!(
        !ssl_in_use(&conn("127.0.0.1", "postgres", "sslmode=disable"))
            .await
            .unwrap()
    );
    // verify-full against our CA, by the name in the certificate.
    let full = format!("sslmode=verify-full sslrootcert={ca}");
    assert!(ssl_in_use(&conn("localhost", "postgres", &full))
        .await
        .unwrap());
    // verify-full by a name not in the certificate fails; verify-ca accepts it.
    match ssl_in_use(&conn("127.0.0.1", "postgres", &full)).await {
        Err(Error::Tls(m)) => assert!(m.contains("handshake") && m.contains("127.0.0.1"), "{m}"),
        other => panic!("verify-full with a wrong host name must fail, got {other:?}"),
    }
    let ca_only = format!("sslmode=verify-ca sslrootcert={ca}");
    assert!(ssl_in_use(&conn("127.0.0.1", "postgres", &ca_only))
        .await
        .unwrap());
    // verify-ca with another CA fails.
    let other_ca = srv.dir.path().join("other-ca.crt");
    std::fs::copy("/etc/ssl/certs/ca-certificates.crt", &other_ca)
        .or_else(|_| std::fs::write(&other_ca, "").map(|_| 0))
        .unwrap();
    match ssl_in_use(&conn(
        "localhost",
        "postgres",
        &format!("sslmode=verify-ca sslrootcert={}", other_ca.display()),
    ))
    .await
    {
        Err(Error::Tls(_)) => {}
        other => panic!("verify-ca with an unrelated CA must fail, got {other:?}"),
    }
    // verify-full without any root certificate: a clear configuration message.
    let no_root = resolve(&format!(
        "host=localhost port={} user=postgres sslmode=verify-full sslrootcert={}/missing.crt",
        srv.port,
        srv.dir.path().display()
    ));
    match Session::connect(&no_root).await {
        Err(Error::Tls(m)) => assert!(m.contains("missing.crt"), "{m}"),
        other => panic!("expected Error::Tls, got {:?}", other.err()),
    }
    // SCRAM over TLS.
    let mut cfg = conn("localhost", "scram_user", &full);
    cfg.password = Some(pg::conninfo::Password(SCRAM_PASSWORD.into()));
    assert!(ssl_in_use(&cfg).await.unwrap());
    // hostssl-only role: disable is refused at pg_hba, allow retries with TLS, prefer uses TLS.
    match ssl_in_use(&conn("127.0.0.1", "ssl_only", "sslmode=disable")).await {
        Err(Error::Auth { message, .. }) => assert!(message.contains("pg_hba.conf"), "{message}"),
        other => panic!("expected Error::Auth, got {other:?}"),
    }
    assert!(ssl_in_use(&conn("127.0.0.1", "ssl_only", "sslmode=allow"))
        .await
        .unwrap());
    assert!(ssl_in_use(&conn("127.0.0.1", "ssl_only", "sslmode=prefer"))
        .await
        .unwrap());
    // hostnossl-only role: prefer falls back to plaintext when TLS is refused.
    assert!(
        !ssl_in_use(&conn("127.0.0.1", "nossl_only", "sslmode=prefer"))
            .await
            .unwrap()
    );
    assert!(matches!(
        ssl_in_use(&conn("127.0.0.1", "nossl_only", "sslmode=require")).await,
        Err(Error::Auth { .. })
    ));
    // Unix sockets never use TLS, whatever the mode (libpq).
    let mut unix = srv.admin_config();
    unix.sslmode = pg::SslMode::Require;
    assert!(!ssl_in_use(&unix).await.unwrap());
}
