//! The OLTP and TPC-C tests' shared fixture (tests/oltp.rs, oltp_cli.rs, tpcc.rs, tpcc_cli.rs):
//! one embedded PostgreSQL per test binary (stopped at exit; on its socket and on a loopback
//! port, for peers that speak only TCP), a fresh database per test, small query helpers, and
//! `load::oltp`'s init with the workload's default key distribution.

use std::sync::{Arc, Mutex, OnceLock};

use load::oltp::{self as loader, KeyDraw};
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::{ConnConfig, Session};
use workload::oltp::Dist;

pub struct Fixture {
    pub cfg: ConnConfig,
    pub socket: String,
    pub port: u16,
}

static SERVER: OnceLock<Mutex<Option<EmbeddedServer>>> = OnceLock::new();

extern "C" fn stop_server() {
    if let Some(m) = SERVER.get() {
        if let Ok(mut g) = m.lock() {
            drop(g.take());
        }
    }
}

pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        // TCP on a free loopback port too, for peers that only speak TCP (go-tpc).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let server = EmbeddedServer::start(&EmbeddedOptions {
            settings: vec![
                ("shared_buffers".into(), "128MB".into()),
                ("max_connections".into(), "60".into()),
                ("listen_addresses".into(), "127.0.0.1".into()),
                ("port".into(), port.to_string()),
            ],
            ..Default::default()
        })
        .expect("start the embedded server (are the PostgreSQL binaries installed?)");
        let f = Fixture {
            cfg: server.conn_config(),
            socket: server.socket_dir().display().to_string(),
            port: server.port(),
        };
        SERVER.set(Mutex::new(Some(server))).ok().unwrap();
        // SAFETY: registering a plain extern "C" fn.
        unsafe { libc::atexit(stop_server) };
        f
    })
}

impl Fixture {
    /// stampede's arguments naming database `db` of the fixture's server (its socket).
    pub fn target(&self, db: &str) -> Vec<String> {
        super::target_at(&self.socket, &self.port.to_string(), db)
    }
}

/// `stampede ARGS` on database `db` of the fixture's server: (exit code, stdout, stderr).
pub fn stampede_on(db: &str, args: &[&str]) -> (i32, String, String) {
    let target = fixture().target(db);
    super::stampede3(&[args, &target.iter().map(String::as_str).collect::<Vec<_>>()].concat())
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub async fn database(name: &str) -> ConnConfig {
    let f = fixture();
    let mut admin = Session::connect(&f.cfg).await.unwrap();
    admin
        .simple_query(&format!("drop database if exists {name}"))
        .await
        .unwrap();
    admin
        .simple_query(&format!("create database {name}"))
        .await
        .unwrap();
    admin.close().await;
    f.cfg.with_dbname(name)
}

pub async fn query(cfg: &ConnConfig, sql: &str) -> Vec<Vec<Option<String>>> {
    let mut s = Session::connect(cfg).await.unwrap();
    let r = s.simple_query(sql).await.unwrap();
    s.close().await;
    r
}

pub async fn scalar_i64(cfg: &ConnConfig, sql: &str) -> i64 {
    query(cfg, sql).await[0][0]
        .as_deref()
        .unwrap_or("0")
        .parse()
        .unwrap()
}

/// The workload's distribution for `k`, as the binary wires it.
struct DistKey(Dist);
impl KeyDraw for DistKey {
    fn k(&self, table_size: u64, uniform: &mut dyn FnMut() -> f64) -> i64 {
        self.0.draw_with(uniform, 1, table_size as u32) as i64
    }
}

pub async fn init(
    cfg: &ConnConfig,
    tables: u32,
    table_size: u64,
    jobs: usize,
) -> loader::InitReport {
    loader::init(
        &cfg.clone().into(),
        &loader::InitOptions {
            tables,
            table_size,
            jobs,
            seed: 1,
            key: Arc::new(DistKey(Dist::default())),
            ..Default::default()
        },
        &mut |_| {},
    )
    .await
    .unwrap()
}
