//! [`Cluster`]: a primary and streaming standbys on this machine, each a private server (its own
//! unix socket directory), the standbys made by `pg_basebackup -R` from the primary (Debian's
//! postgresql-15, as the tests ask). For tests of several endpoints: host lists,
//! `target_session_attrs`, clients spread over hosts, reads on standbys.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use pg::conninfo::HostSpec;
use pg::embedded::EmbeddedOptions;

use crate::account::{as_server_user, run, server_dir};
use crate::server::{flatten, Pg, Settings};
use crate::sql::{block_on, scalar};

/// Settings every member needs: WAL for standbys and hot standby reads.
const REPLICATION: Settings = &[
    ("wal_level", "replica"),
    ("max_wal_senders", "10"),
    ("hot_standby", "on"),
    ("shared_buffers", "64MB"),
];

pub struct Cluster {
    pub primary: Pg,
    pub standbys: Vec<Pg>,
    /// The standbys' directories (given data directories are never removed by the server).
    _dirs: Vec<tempfile::TempDir>,
}

impl Cluster {
    /// A primary and `standbys` streaming standbys, each caught up before this returns.
    pub fn start(standbys: usize, settings: &[Settings]) -> Cluster {
        let mut all: Vec<Settings> = vec![REPLICATION];
        all.extend_from_slice(settings);
        let primary = Pg::start(&all);
        let mut members = Vec::new();
        let mut dirs = Vec::new();
        for i in 1..=standbys {
            let dir = server_dir("stampede-standby-");
            let data = dir.path().join("data");
            run(as_server_user(
                Command::new(primary.bin("pg_basebackup"))
                    .arg("-h")
                    .arg(primary.socket_dir())
                    .args(["-p", &primary.port().to_string(), "-U", "postgres"])
                    .arg("-D")
                    .arg(&data)
                    .args(["-X", "stream", "--no-sync", "-R"])
                    .args(["-d", &format!("application_name=standby{i}")]),
            ));
            // The primary's socket lock and its log came along with the copy.
            for entry in std::fs::read_dir(&data).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with(".s.PGSQL.") || name.ends_with(".log") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
            let standby = Pg::start_with(EmbeddedOptions {
                data_dir: Some(data),
                settings: flatten(&all),
                ..Default::default()
            });
            members.push(standby);
            dirs.push(dir);
        }
        let c = Cluster {
            primary,
            standbys: members,
            _dirs: dirs,
        };
        c.wait_replayed();
        c
    }

    /// Primary first, then the standbys.
    pub fn servers(&self) -> Vec<&Pg> {
        std::iter::once(&self.primary)
            .chain(self.standbys.iter())
            .collect()
    }

    /// The members as a host list (primary first), e.g. for `-h a,b,c -p 1,2,3`.
    pub fn hosts(&self) -> Vec<HostSpec> {
        self.servers()
            .iter()
            .map(|p| HostSpec {
                host: p.socket_dir().display().to_string(),
                port: p.port(),
            })
            .collect()
    }

    /// `-h` and `-p` values listing every member (primary first).
    pub fn hosts_and_ports(&self) -> (String, String) {
        let hosts: Vec<String> = self.hosts().iter().map(|h| h.host.clone()).collect();
        let ports: Vec<String> = self.hosts().iter().map(|h| h.port.to_string()).collect();
        (hosts.join(","), ports.join(","))
    }

    /// Wait until every standby has replayed the primary's WAL as of now.
    pub fn wait_replayed(&self) {
        let lsn = block_on(scalar(
            self.primary.conn_config(),
            "SELECT pg_current_wal_lsn()::text",
        ));
        let deadline = Instant::now() + Duration::from_secs(60);
        for s in &self.standbys {
            let sql = format!(
                "SELECT coalesce(pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn, false)::text"
            );
            while block_on(scalar(s.conn_config(), &sql)) != "true" {
                assert!(Instant::now() < deadline, "a standby never replayed {lsn}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Each member's `pg_stat_database.xact_commit` for database `postgres` (primary first).
    pub fn xact_commits(&self) -> Vec<i64> {
        (self.servers().iter())
            .map(|p| {
                block_on(scalar(
                    p.conn_config(),
                    "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'",
                ))
                .parse()
                .expect("xact_commit is a number")
            })
            .collect()
    }

    /// [`Cluster::xact_commits`] once statistics have arrived (a session's reach them when it
    /// ends): read until they move by no more than the reading session's own (its start-up and
    /// its query), 9 s at most.
    pub fn settled_xact_commits(&self) -> Vec<i64> {
        let mut last = self.xact_commits();
        for _ in 0..30 {
            std::thread::sleep(Duration::from_millis(300));
            let again = self.xact_commits();
            if again.iter().zip(&last).all(|(a, b)| a - b <= 2) {
                return again;
            }
            last = again;
        }
        last
    }

    /// Where the servers' logs are, for a failing test's message.
    pub fn logs(&self) -> Vec<PathBuf> {
        self.servers()
            .iter()
            .map(|p| p.log_file().to_path_buf())
            .collect()
    }
}
