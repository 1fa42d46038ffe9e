//! Process 0's second session: the fleet's commit snapshots and the wait for every result.
//!
//! On PostgreSQL it stays inside one read-only transaction from before S0 until after S1
//! (ended by ROLLBACK), reading the statistics with `pg_stat_clear_snapshot()` first, so its own
//! reads are never counted as commits, as the single-process commit check does (`stampede`'s
//! `checks`). On MySQL its reads are autocommitted SELECTs and SHOW STATUS, which `Com_commit`
//! does not count, and it also counts the sessions that are not the fleet's (crate notes). A
//! MySQL target of several hosts (a Galera cluster's nodes) counts on every node, each of which
//! counts its own clients' COMMITs (replicated write sets are no COMMIT statement there): one
//! more session per other node reads that node's counter and sessions, and S0 and S1 are the
//! sums.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use sut::{Dialect, Session};

use crate::{begin_wait, end_wait, settle_own_stats, sql};

pub struct Coordinator {
    session: Session,
    /// MySQL with several hosts: a session on each node but the one `session` is on.
    nodes: Vec<Session>,
    conn: sut::Target,
    name: String,
    cancel: Arc<AtomicBool>,
}

/// What the fleet table holds for a fleet.
#[derive(Debug, Default)]
pub struct Stored {
    pub size: u32,
    /// The server's commit counter at the fleet's start and after every result (`None` until
    /// taken).
    pub s0: Option<i64>,
    pub s1: Option<i64>,
    /// The start on the server's clock (microseconds since the epoch).
    pub start_us: Option<i64>,
    /// Why the fleet failed to start, if it did.
    pub failure: Option<String>,
    /// The counter S0 and S1 read (`xact_commit`, `Com_commit`).
    pub counter: &'static str,
    /// MySQL: the most sessions that were not the fleet's at S0 or S1 (their COMMITs count in
    /// the server's counter too); `None` on PostgreSQL, whose counter is the database's.
    pub others: Option<i64>,
    /// PostgreSQL: autovacuum and autoanalyze runs between S0 and S1 (their transactions count
    /// in `xact_commit`); `None` on MySQL or for a fleet stored by an older stampede.
    pub maintenance: Option<i64>,
    /// Each process that joined: its index and its result JSON (`None`: it never reported).
    pub results: Vec<(u32, Option<String>)>,
}

/// What process 0 reads at the fleet's start ([`Coordinator::snapshot`]).
pub(crate) struct Snapshot {
    pub s0: i64,
    pub per_connection: i64,
    pub others: Option<i64>,
    pub maintenance: Option<i64>,
}

/// The end of a fleet, as process 0 saw it.
#[derive(Debug)]
pub struct Finished {
    pub stored: Stored,
    /// Processes whose session left without a result.
    pub lost: Vec<u32>,
}

/// Read the counter until it stops moving (statistics reach shared memory lazily): three equal
/// reads 100 ms apart, with no other stampede session when `alone`, or `limit`. MySQL's
/// counter is current when read: there only the other sessions are waited for.
async fn settle(c: &mut Coordinator, limit: Duration, alone: bool) -> Result<i64> {
    let deadline = Instant::now() + limit;
    if c.session.dialect() == Dialect::MySql {
        while alone && c.other_sessions().await? > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        return c.commits().await;
    }
    let s = &mut c.session;
    let mut last = sql::commits(s).await?;
    let mut stable = 0;
    while Instant::now() < deadline && stable < 3 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = sql::commits(s).await?;
        let others = match alone {
            true => sql::other_sessions(s).await?,
            false => 0,
        };
        stable = if now == last && others == 0 {
            stable + 1
        } else {
            0
        };
        last = now;
    }
    Ok(last)
}

impl Coordinator {
    pub(crate) async fn open(
        conn: &sut::Target,
        name: &str,
        cancel: Arc<AtomicBool>,
    ) -> Result<Coordinator> {
        let mut session = Session::connect(conn).await?;
        settle_own_stats(&mut session).await;
        begin_wait(&mut session).await?;
        let mut nodes = Vec::new();
        if conn.dialect() == Dialect::MySql && conn.endpoints() > 1 {
            let on = session.endpoint_index(conn);
            for i in (0..conn.endpoints()).filter(|i| Some(*i) != on) {
                let one = conn.starting_at(i);
                let node = one.mysql().expect("a MySQL target's endpoint");
                nodes.push(Session::connect(node).await?);
            }
        }
        Ok(Coordinator {
            session,
            nodes,
            conn: conn.clone(),
            name: name.to_string(),
            cancel,
        })
    }

    /// The fleet's snapshot S0, the commits one connection start-up costs (a connection that
    /// connects and leaves, measured as the single-process check calibrates it), on MySQL the
    /// sessions that are not the fleet's, and on PostgreSQL the maintenance runs so far.
    pub(crate) async fn snapshot(&mut self) -> Result<Snapshot> {
        if self.session.dialect() == Dialect::MySql {
            // A connection's start-up is no COMMIT statement: nothing to calibrate (and the
            // server-wide counter would measure everyone else's commits meanwhile).
            let others = self.foreign_sessions().await?;
            let s0 = settle(self, Duration::ZERO, false).await?;
            return Ok(Snapshot {
                s0,
                per_connection: 0,
                others: Some(others),
                maintenance: None,
            });
        }
        // Read before S0: a run that starts in between counts in the window, which can only
        // make a surplus inconclusive, never hide a deficit.
        let maintenance = sql::maintenance_runs(&mut self.session).await?;
        let before = settle(self, Duration::from_secs(3), false).await?;
        let probe = Session::connect(&self.conn).await?;
        probe.close().await;
        let s0 = settle(self, Duration::from_secs(3), false).await?;
        Ok(Snapshot {
            s0,
            per_connection: (s0 - before).max(0),
            others: None,
            maintenance,
        })
    }

    /// Wait until every process that joined reported or left without a result (its fleet
    /// session gone: killed, crashed), at most `limit`; then, once no other stampede session
    /// is left, read S1 and keep it in the header.
    pub async fn finish(mut self, limit: Duration) -> Result<Finished> {
        let deadline = Instant::now() + limit;
        let lost = loop {
            let members = sql::members(&mut self.session, &self.name).await?;
            let waiting: Vec<u32> = (members.iter())
                .filter(|(_, done, gone)| !done && !gone)
                .map(|m| m.0)
                .collect();
            if waiting.is_empty() || Instant::now() >= deadline {
                break (members.iter())
                    .filter(|(_, done, _)| !done)
                    .map(|m| m.0)
                    .collect::<Vec<u32>>();
            }
            crate::check_cancel(&self.cancel, &self.name)?;
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let s1 = settle(&mut self, Duration::from_secs(10), true).await?;
        let others = match self.session.dialect() {
            Dialect::MySql => Some(self.foreign_sessions().await?),
            Dialect::Postgres => None,
        };
        // Read after S1, for the same reason as before S0.
        let maintenance = sql::maintenance_runs(&mut self.session).await?;
        end_wait(&mut self.session).await?;
        self.session
            .simple_query(&sql::set_s1(&self.name, s1, others, maintenance))
            .await?;
        let stored = read_stored(&mut self.session, &self.name).await?;
        self.close().await;
        Ok(Finished { stored, lost })
    }

    pub(crate) async fn close(self) {
        self.session.close().await;
        for n in self.nodes {
            n.close().await;
        }
    }

    /// The counter, summed over the nodes.
    async fn commits(&mut self) -> Result<i64> {
        let mut sum = sql::commits(&mut self.session).await?;
        for n in &mut self.nodes {
            sum += sql::commits(n).await?;
        }
        Ok(sum)
    }

    /// The other sessions (module `sql`), summed over the nodes; each node's counter session
    /// leaves itself out.
    async fn other_sessions(&mut self) -> Result<i64> {
        let mut sum = sql::other_sessions(&mut self.session).await?;
        for n in &mut self.nodes {
            sum += sql::other_sessions(n).await?;
        }
        Ok(sum)
    }

    /// MySQL: the sessions that are not the fleet's, over the nodes (the fleet's own sessions
    /// are on the node of this one, as every fleet session connects to the first node that
    /// answers).
    async fn foreign_sessions(&mut self) -> Result<i64> {
        let mut sum = sql::foreign_sessions(&mut self.session, &self.name).await?;
        for n in &mut self.nodes {
            sum += sql::other_sessions(n).await?;
        }
        Ok(sum)
    }
}

pub(crate) async fn read_stored(s: &mut Session, name: &str) -> Result<Stored> {
    let h = sql::header(s, name).await?;
    Ok(Stored {
        size: h.size,
        s0: h.s0,
        s1: h.s1,
        start_us: h.start_us,
        failure: h.failure,
        counter: sql::counter_name(s.dialect()),
        others: h.others,
        maintenance: h.maintenance1.zip(h.maintenance0).map(|(m1, m0)| m1 - m0),
        results: sql::results(s, name).await?,
    })
}
