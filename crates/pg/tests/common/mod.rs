//! A private PostgreSQL for the connection tests that the embedded server cannot host: it listens
//! on TCP (127.0.0.1, a free port) as well as a private unix socket, has TLS on with a CA and a
//! server certificate generated here with the `openssl` CLI, and a pg_hba.conf with md5,
//! scram-sha-256, hostssl-only and hostnossl-only roles. The query tests use
//! `pg::embedded::EmbeddedServer` instead.
//!
//! As root, initdb and postgres run as `postgres` (or `nobody`): PostgreSQL refuses to run as root.
//! That handling, the private directory and the commands that must succeed are `testkit`'s; only
//! what makes this server unlike the embedded one (TCP, TLS, pg_hba.conf, roles) is here.
//! Dropping the handle stops the server (SIGINT, fast shutdown) and removes the directory.

#![allow(dead_code)]

mod certs;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pg::embedded::read_postmaster_pid;
use pg::{ConnConfig, ConnFlags, Session};
use testkit::{as_server_user, give, run};

pub use testkit::free_port;

pub const MD5_PASSWORD: &str = "md5-Secret!";
pub const SCRAM_PASSWORD: &str = "scram Secret:'x";

pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub ca_cert: PathBuf,
    child: Child,
}

/// CA + server certificate (SAN DNS:localhost only, so 127.0.0.1 fails verify-full), readable
/// by the server's account, the key by it only.
fn make_certs(dir: &Path) {
    certs::make_certs(dir, &["ca"]);
    for f in ["server.key", "server.crt", "ca.crt"] {
        give(&dir.join(f));
    }
    fs::set_permissions(dir.join("server.key"), fs::Permissions::from_mode(0o600)).unwrap();
}

impl TestServer {
    pub fn start() -> TestServer {
        let bindir = testkit::bindir();
        let dir = testkit::server_dir("stampede-target-test");
        let data = dir.path().join("data");
        run(as_server_user(Command::new(bindir.join("initdb")).args([
            "-D",
            data.to_str().unwrap(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-locale",
            "-N",
        ])));
        make_certs(dir.path());
        let port = free_port();
        let d = dir.path().display();
        let conf = format!(
            "\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{d}'\n\
             ssl = on\nssl_cert_file = '{d}/server.crt'\nssl_key_file = '{d}/server.key'\n\
             fsync = off\nshared_buffers = 32MB\nmax_connections = 40\nautovacuum = off\n"
        );
        let mut pgconf = fs::read_to_string(data.join("postgresql.conf")).unwrap();
        pgconf.push_str(&conf);
        fs::write(data.join("postgresql.conf"), pgconf).unwrap();
        fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\n\
             hostssl all ssl_only 127.0.0.1/32 trust\n\
             host all ssl_only 127.0.0.1/32 reject\n\
             hostnossl all nossl_only 127.0.0.1/32 trust\n\
             host all nossl_only 127.0.0.1/32 reject\n\
             host all md5_user 127.0.0.1/32 md5\n\
             host all scram_user 127.0.0.1/32 scram-sha-256\n\
             host all all 127.0.0.1/32 trust\n",
        )
        .unwrap();
        let log = fs::File::create(dir.path().join("server.log")).unwrap();
        give(&dir.path().join("server.log"));
        let child = as_server_user(
            Command::new(bindir.join("postgres"))
                .arg("-D")
                .arg(&data)
                .process_group(0),
        )
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("start postgres");
        let server = TestServer {
            ca_cert: dir.path().join("ca.crt"),
            dir,
            port,
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if read_postmaster_pid(&data).is_some_and(|p| p.status == "ready") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "server did not start: {}",
                fs::read_to_string(server.dir.path().join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A config from a connection string, with no environment (and a password file that does not
    /// exist unless the string names one).
    pub fn config(&self, conninfo: &str) -> ConnConfig {
        resolve(conninfo)
    }

    /// Superuser over the unix socket.
    pub fn admin_config(&self) -> ConnConfig {
        resolve(&format!(
            "host={} port={} user=postgres dbname=postgres",
            self.socket_dir().display(),
            self.port
        ))
    }

    pub async fn admin(&self) -> Session {
        Session::connect(&self.admin_config())
            .await
            .expect("admin connection")
    }

    /// Roles for the password tests: md5_user's password stored as md5, scram_user's as SCRAM.
    pub async fn create_roles(&self) {
        let mut s = self.admin().await;
        s.simple_query(&format!(
            "SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD '{MD5_PASSWORD}';
             SET password_encryption = 'scram-sha-256';
             CREATE ROLE scram_user LOGIN PASSWORD '{}';
             CREATE ROLE ssl_only LOGIN; CREATE ROLE nossl_only LOGIN;",
            SCRAM_PASSWORD.replace('\'', "''")
        ))
        .await
        .unwrap();
        s.close().await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT);
        }
        let _ = self.child.wait();
    }
}

pub fn resolve(conninfo: &str) -> ConnConfig {
    let flags = ConnFlags {
        dbname: Some(conninfo.to_string()),
        ..Default::default()
    };
    let mut c = ConnConfig::resolve(&flags, &|_| None).expect("valid conninfo");
    if !conninfo.contains("passfile") {
        c.passfile = Some(PathBuf::from("/nonexistent/stampede/pgpass"));
    }
    c
}
