//! # replication: each standby's lag, sampled on the primary while a run reads from standbys
//!
//! Once a second, on its own thread and its own session on the primary (libpq's
//! `target_session_attrs=read-write` over the target's hosts), one query of
//! `pg_stat_replication`: per standby its `application_name` and `client_addr`, the WAL bytes
//! it has not replayed (`pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)`) and PostgreSQL's
//! `write_lag` / `flush_lag` / `replay_lag`. At the end, per standby, the max and p95
//! ([`measure::replication::ReplicaLag`]).
//!
//! Apart from the server sampler (`sampler`) on purpose: it watches the replication of the
//! cluster, not one server's activity, it runs only with `--read-from` (the one case where a
//! standby's lag changes what the run's reads see), and its only hook is start/finish.
//!
//! Cost on the primary, for whoever reconciles the primary's commit counter: one connection
//! start-up and one (read-only, autocommitted) transaction per sample ([`Watch::queries`]).

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use measure::replication::{p95, ReplicaLag};
use sut::conninfo::SessionAttrs;
use sut::{Session, Target};

use crate::Error;

const PERIOD: Duration = Duration::from_secs(1);

/// One sample's query. Lags are in milliseconds; NULL lags (nothing to time) stay NULL.
pub(crate) const SQL: &str = "SELECT coalesce(application_name, ''), \
     coalesce(host(client_addr), ''), \
     coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::bigint, \
     extract(epoch FROM write_lag) * 1000, \
     extract(epoch FROM flush_lag) * 1000, \
     extract(epoch FROM replay_lag) * 1000 \
     FROM pg_stat_replication ORDER BY 1, 2";

/// A running replication watch. Dropping it stops the thread and discards what it saw.
pub struct Watch {
    stop: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Seen>,
}

/// Everything one watch saw.
#[derive(Default)]
struct Seen {
    by_standby: BTreeMap<String, Samples>,
    /// The host (index into the target's) the watch's session was on.
    host: Option<usize>,
    queries: u64,
    error: Option<String>,
}

#[derive(Default)]
struct Samples {
    bytes: Vec<u64>,
    write_ms: Vec<f64>,
    flush_ms: Vec<f64>,
    replay_ms: Vec<f64>,
}

/// What a finished watch reports.
pub struct Watched {
    pub standbys: Vec<ReplicaLag>,
    /// Transactions the watch ran on the primary (one per sample), in its one session.
    pub queries: u64,
    /// The host (index into the target's hosts) that session was on, for the per-host commit
    /// count; `None` when it never connected.
    pub host: Option<usize>,
    /// Why sampling stopped early, if it did.
    pub error: Option<String>,
}

impl Watch {
    /// Connect to the primary and take the first sample; an error when the target is not
    /// PostgreSQL or no host accepts writes.
    pub fn start(target: &Target) -> Result<Watch, Error> {
        let Some(conn) = target.pg() else {
            return Err(Error::Unsupported(
                "replication lag is sampled on PostgreSQL only".into(),
            ));
        };
        let mut conn = conn.clone();
        conn.target_session_attrs = SessionAttrs::ReadWrite;
        // Named as the observer's sessions are, so the server sampler counts it apart from the
        // load (`sql::background_kind`), not as one of the run's clients.
        conn.application_name = format!("{} replication", crate::sql::APPLICATION_NAME);
        let whole = target.clone();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = crate::observer_thread(
            "stampede-replication",
            "the replication watch",
            move |rt, ready| {
                let connected = rt
                    .block_on(Session::connect(&Target::Pg(conn)))
                    .map_err(Error::Connect);
                let Some(mut session) = crate::said(ready, connected) else {
                    return Seen::default();
                };
                let mut seen = Seen {
                    host: session.endpoint_index(&whole),
                    ..Seen::default()
                };
                // A sample at the start, one a second, and one when asked to finish (the lag
                // the run's last writes left); a dropped watch takes no last sample.
                let mut finishing = false;
                loop {
                    match rt.block_on(session.simple_query(SQL)) {
                        Ok(rows) => {
                            seen.queries += 1;
                            seen.add(&rows);
                        }
                        Err(e) => {
                            seen.error = Some(sut::conninfo::redact(&e.to_string()));
                            break;
                        }
                    }
                    if finishing {
                        break;
                    }
                    match stop_rx.recv_timeout(PERIOD) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) => finishing = true,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                rt.block_on(session.close());
                seen
            },
        )?;
        Ok(Watch {
            stop: stop_tx,
            thread,
        })
    }

    /// Take one last sample, stop, and summarise per standby.
    pub fn finish(self) -> Watched {
        let _ = self.stop.send(());
        let seen = self.thread.join().unwrap_or_else(|_| Seen {
            error: Some("the replication watch panicked".into()),
            ..Default::default()
        });
        Watched {
            standbys: seen.summary(),
            queries: seen.queries,
            host: seen.host,
            error: seen.error,
        }
    }
}

impl Seen {
    fn add(&mut self, rows: &[Vec<Option<String>>]) {
        for r in rows {
            let col = |i: usize| r.get(i).and_then(|v| v.as_deref());
            let name = match (col(0).unwrap_or(""), col(1).unwrap_or("")) {
                (n, "") => n.to_string(),
                ("", a) => a.to_string(),
                (n, a) => format!("{n} ({a})"),
            };
            let s = self.by_standby.entry(name).or_default();
            s.bytes.push(
                col(2)
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(0)
                    .max(0) as u64,
            );
            let ms = |i: usize| col(i).and_then(|v| v.parse::<f64>().ok());
            s.write_ms.extend(ms(3));
            s.flush_ms.extend(ms(4));
            s.replay_ms.extend(ms(5));
        }
    }

    fn summary(&self) -> Vec<ReplicaLag> {
        let max = |v: &[f64]| v.iter().copied().reduce(f64::max);
        self.by_standby
            .iter()
            .map(|(name, s)| ReplicaLag {
                standby: name.clone(),
                samples: s.bytes.len() as u32,
                max_lag_bytes: s.bytes.iter().copied().max().unwrap_or(0),
                p95_lag_bytes: p95(&s.bytes),
                max_write_lag_ms: max(&s.write_ms),
                max_flush_lag_ms: max(&s.flush_ms),
                max_replay_lag_ms: max(&s.replay_ms),
                p95_replay_lag_ms: (!s.replay_ms.is_empty()).then(|| p95(&s.replay_ms)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Seen;

    fn row(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|x| x.map(str::to_string)).collect()
    }

    #[test]
    fn samples_summarise_per_standby() {
        let mut seen = Seen::default();
        for i in 0..20u64 {
            seen.add(&[
                row(&[
                    Some("s1"),
                    Some(""),
                    Some(&(i * 100).to_string()),
                    Some("0.5"),
                    Some("0.7"),
                    Some(&format!("{}", i as f64)),
                ]),
                row(&[
                    Some("walreceiver"),
                    Some("10.0.0.2"),
                    Some("0"),
                    None,
                    None,
                    None,
                ]),
            ]);
        }
        let s = seen.summary();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].standby, "s1");
        assert_eq!(s[0].samples, 20);
        assert_eq!(s[0].max_lag_bytes, 1900);
        assert_eq!(s[0].p95_lag_bytes, 1800);
        assert_eq!(s[0].max_replay_lag_ms, Some(19.0));
        assert_eq!(s[0].p95_replay_lag_ms, Some(18.0));
        assert_eq!(s[1].standby, "walreceiver (10.0.0.2)");
        assert_eq!(s[1].max_replay_lag_ms, None);
    }
}
