//! TLS against a real MariaDB started with a certificate made here with the `openssl` CLI (a CA,
//! and a server certificate for DNS:localhost signed by it): each ssl-mode's behaviour, a user
//! that REQUIRE SSL, prepared statements over TLS, and the unix socket as a secure transport.

use std::path::{Path, PathBuf};

use mysql::{Conninfo, Session, SslMode};
use pg::{Error, QueryMode, Value};
use testkit::MariaDb;

#[path = "../../pg/tests/common/certs.rs"]
mod certs;

struct Certs {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    other_ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn make_certs() -> Certs {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    certs::make_certs(d, &["ca", "other-ca"]);
    // The server runs as the mysql account: it must read these.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in ["server.crt", "server.key", "ca.crt"] {
        std::fs::set_permissions(d.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    Certs {
        ca: d.join("ca.crt"),
        other_ca: d.join("other-ca.crt"),
        cert: d.join("server.crt"),
        key: d.join("server.key"),
        _dir: dir,
    }
}

fn server(certs: &Certs) -> MariaDb {
    let db = MariaDb::start(&[
        &format!("--ssl-cert={}", certs.cert.display()),
        &format!("--ssl-key={}", certs.key.display()),
    ]);
    db.sql(
        "CREATE USER 'tls'@'%' IDENTIFIED BY 'tls pw' REQUIRE SSL;
         CREATE USER 'any'@'%' IDENTIFIED BY 'any pw'",
    );
    db
}

fn tcp(db: &MariaDb, user: &str, pw: &str, mode: SslMode, ca: Option<&Path>) -> Conninfo {
    let mut ci = Conninfo::parse(&db.tcp_url(user, Some(pw), "")).unwrap();
    ci.ssl_mode = mode;
    ci.ssl_ca = ca.map(Path::to_path_buf);
    ci
}

/// The session's TLS version as the server sees it ('' without TLS).
/// The account `any` (no REQUIRE SSL) over TCP.
fn any(db: &MariaDb, mode: SslMode, ca: Option<&Path>) -> Conninfo {
    tcp(db, "any", "any pw", mode, ca)
}

/// Connecting with `ci` gives a session over TLS.
async fn over_tls(ci: &Conninfo) {
    let s = Session::connect(ci).await.unwrap();
    assert!(s.is_tls());
    s.close().await;
}

/// Connecting with `ci` fails on TLS (`why`): the error.
async fn tls_refused(ci: &Conninfo, why: &str) -> Error {
    let e = Session::connect(ci).await.err().expect(why);
    assert!(matches!(e, Error::Tls(_)), "{e}");
    e
}

async fn ssl_version(s: &mut Session) -> String {
    let rows = s
        .simple_query("SHOW SESSION STATUS LIKE 'Ssl_version'")
        .await
        .unwrap();
    rows[0][1].clone().unwrap_or_default()
}

#[tokio::test]
async fn each_ssl_mode_does_what_it_says() {
    let certs = make_certs();
    let db = server(&certs);
    for mode in [SslMode::Preferred, SslMode::Required] {
        let mut s = Session::connect(&any(&db, mode, None)).await.unwrap();
        assert!(s.is_tls(), "{mode}");
        let v = ssl_version(&mut s).await;
        assert!(v.starts_with("TLSv1."), "{mode}: {v:?}");
        s.close().await;
    }
    let mut s = Session::connect(&any(&db, SslMode::Disabled, None))
        .await
        .unwrap();
    assert!(!s.is_tls());
    assert_eq!(ssl_version(&mut s).await, "");
    s.close().await;

    // VERIFY_CA: the chain is checked, the name (127.0.0.1, not in the certificate) is not.
    let ci = any(&db, SslMode::VerifyCa, Some(&certs.ca));
    over_tls(&ci).await;
    let ci = any(&db, SslMode::VerifyCa, Some(&certs.other_ca));
    let e = tls_refused(&ci, "an unknown CA").await;
    assert!(e.to_string().contains("TLS handshake"), "{e}");

    // VERIFY_IDENTITY: 127.0.0.1 is not the certificate's name; localhost (on TCP: a port is
    // given) is.
    let ci = any(&db, SslMode::VerifyIdentity, Some(&certs.ca));
    tls_refused(&ci, "a name mismatch").await;
    let mut ci = ci;
    ci.host = "localhost".into();
    assert_eq!(ci.socket, None);
    over_tls(&ci).await;

    // A missing CA file fails before any I/O, naming the file.
    let ci = any(
        &db,
        SslMode::VerifyCa,
        Some(Path::new("/nonexistent/ca.pem")),
    );
    let e = Session::connect(&ci).await.err().unwrap().to_string();
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");
}

#[tokio::test]
async fn a_user_that_requires_ssl_works_over_tls_and_prepared_statements_too() {
    let certs = make_certs();
    let db = server(&certs);
    let mut s = Session::connect(&tcp(&db, "tls", "tls pw", SslMode::Required, None))
        .await
        .unwrap();
    let st = s.register("SELECT CONCAT(?, REPEAT('x', ?))", QueryMode::Prepared);
    for n in [0, 10, 100_000] {
        let r = s
            .execute(st, &[Value::Text("tls:"), Value::Int(n)])
            .await
            .unwrap();
        assert_eq!(r.rows, 1);
        assert_eq!(s.row_value(0).map(str::len), Some(4 + n as usize));
    }
    s.close().await;
    // Without TLS the server refuses the user.
    let e = Session::connect(&tcp(&db, "tls", "tls pw", SslMode::Disabled, None))
        .await
        .err()
        .expect("REQUIRE SSL");
    assert!(matches!(e, Error::Auth { .. }), "{e}");
    assert!(!e.to_string().contains("tls pw"), "{e}");
}

#[tokio::test]
async fn a_unix_socket_is_a_secure_transport_without_tls() {
    let certs = make_certs();
    let db = server(&certs);
    // (MariaDB does not count the socket as SSL for a user that REQUIRE SSL: `any` here.)
    let mut ci = Conninfo::parse(&db.socket_url("any", Some("any pw"), "")).unwrap();
    ci.ssl_mode = SslMode::Required;
    let mut s = Session::connect(&ci).await.unwrap();
    assert!(!s.is_tls());
    assert_eq!(ssl_version(&mut s).await, "");
    s.close().await;
}
