//! Lock waits between replayed sessions, seen from the server while the replay runs: on a
//! thread and session of its own, every [`POLL`] the sampler asks which sessions wait for a
//! lock and which hold it (PostgreSQL: `pg_stat_activity` with `pg_blocking_pids`; MariaDB:
//! `information_schema.INNODB_LOCK_WAITS` with `INNODB_TRX`; MySQL 8:
//! `performance_schema.data_lock_waits`), with each side's statement. A pair of statements
//! (fingerprints) seen waiting is counted once per sample, with the longest wait seen.
//!
//! A replay sends each session's statements in order, but the sessions' statements may
//! overtake each other where the capture's did not (a late server, `--speed`), and then
//! sessions block each other where the capture's did not, or deadlock: this names the
//! statements involved instead of leaving a hang unexplained. Polling sees waits longer than
//! its period; shorter ones are below what it can tell.
//!
//! Its statements are stampede's own (each session counts itself for the statement ledger
//! when it closes); on PostgreSQL each commits (autocommitted reads), which the commit count is
//! told about (`Finish`). Must not touch: the replay's sessions.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sut::{Dialect, Session};

use super::fingerprint;

/// How often the sampler looks.
pub const POLL: Duration = Duration::from_millis(50);

/// One pair of statements seen in a lock wait.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LockWait {
    /// The waiting session's statement (fingerprint).
    pub waiting: String,
    /// The statement the blocking session runs or last ran (it may be idle in its
    /// transaction, holding what the other waits for).
    pub blocking: String,
    /// Samples in which the pair was seen.
    pub samples: u64,
    /// The longest wait seen, milliseconds.
    pub longest_ms: f64,
}

/// What the sampler hands back.
#[derive(Default)]
pub struct Sampled {
    pub waits: Vec<LockWait>,
    pub commits: u64,
    pub connections: u64,
    pub error: Option<String>,
}

const PG_SQL: &str = "SELECT w.query, b.query, \
     extract(epoch FROM clock_timestamp() - w.query_start) * 1000 \
     FROM pg_stat_activity w \
     CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS p(pid) \
     JOIN pg_stat_activity b ON b.pid = p.pid \
     WHERE w.wait_event_type = 'Lock' AND w.pid <> pg_backend_pid()";

const MARIADB_SQL: &str = "SELECT r.trx_query, b.trx_query, \
     TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000 \
     FROM information_schema.INNODB_LOCK_WAITS w \
     JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
     JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id";

const MYSQL8_SQL: &str = "SELECT r.trx_query, b.trx_query, \
     TIMESTAMPDIFF(MICROSECOND, r.trx_wait_started, NOW(6)) / 1000 \
     FROM performance_schema.data_lock_waits w \
     JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID \
     JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID";

pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Sampled>,
}

impl Sampler {
    pub fn start(conn: sut::Target) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut out = Sampled::default();
            let rt = match crate::runtime::setup() {
                Ok(rt) => rt,
                Err(e) => {
                    out.error = Some(format!("{e:#}"));
                    return out;
                }
            };
            rt.block_on(sample(conn, stopped, &mut out));
            out
        });
        Sampler { stop, thread }
    }

    pub fn finish(self) -> Sampled {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_else(|_| Sampled {
            error: Some("the lock sampler's thread panicked".into()),
            ..Sampled::default()
        })
    }
}

async fn sample(conn: sut::Target, stopped: mpsc::Receiver<()>, out: &mut Sampled) {
    let mut s = match Session::connect(&conn).await {
        Ok(s) => s,
        Err(e) => {
            out.error = Some(e.to_string());
            return;
        }
    };
    out.connections = 1;
    let mut sqls: Vec<&str> = match conn.dialect() {
        Dialect::Postgres => vec![PG_SQL],
        Dialect::MySql => vec![MARIADB_SQL, MYSQL8_SQL],
    };
    let mut seen: BTreeMap<(String, String), LockWait> = BTreeMap::new();
    loop {
        match s.simple_query(sqls[0]).await {
            Ok(rows) => {
                // One sample counts each pair once, however many sessions it holds up.
                let mut now: BTreeMap<(String, String), f64> = BTreeMap::new();
                for r in rows {
                    let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
                    let (w, b) = (fingerprint::of(&text(0)), fingerprint::of(&text(1)));
                    let ms = text(2).parse::<f64>().unwrap_or(0.0);
                    let e = now.entry((w, b)).or_insert(0.0);
                    *e = e.max(ms);
                }
                for ((w, b), ms) in now {
                    let e = seen
                        .entry((w.clone(), b.clone()))
                        .or_insert_with(|| LockWait {
                            waiting: w,
                            blocking: b,
                            ..Default::default()
                        });
                    e.samples += 1;
                    e.longest_ms = e.longest_ms.max(ms);
                }
            }
            // MariaDB's view first, then MySQL 8's; a server with neither says why once.
            Err(e) if sqls.len() > 1 && s.is_usable() => {
                let _ = e;
                sqls.remove(0);
                continue;
            }
            Err(e) => {
                out.error = Some(e.to_string());
                break;
            }
        }
        match stopped.recv_timeout(POLL) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    out.commits = s.server_commits();
    s.close().await;
    let mut waits: Vec<LockWait> = seen.into_values().collect();
    waits.sort_by_key(|w| std::cmp::Reverse(w.samples));
    out.waits = waits;
}
