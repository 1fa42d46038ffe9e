//! # fleet: many stampede processes, one benchmark
//!
//! Processes started by whatever the user already runs (a Kubernetes Indexed Job, ssh/pdsh,
//! Slurm) meet in a small table of the target database itself, `stampede_fleet`: every driver
//! can reach the database by definition, so no port of their own is needed (HammerDB's
//! primary/replica mode needs its own channel between drivers; k6 and YCSB have no meeting point
//! at all and drivers started 11-14 s apart, gridgain/yardstick#4).
//!
//! ## The table
//! One row per process (`idx` >= 0: its host, pid, clients, the backend pid of its fleet
//! session, later its result JSON) and one header row (`idx = -1`: the size, the common start,
//! the commit snapshots). Created by the first process that needs it, removed by `stampede fleet
//! report NAME --forget` (results stay there until then, so the fleet can be reported again).
//!
//! ## One run of a fleet
//! 1. [`join`]: a process takes its index (`--fleet-index`, the orchestrator's
//!    `JOB_COMPLETION_INDEX`, else the next free one) by inserting its row.
//! 2. [`Member::wait_start`]: process 0 waits until all have joined, reads the server's commit
//!    counter (the fleet's snapshot S0), and sets the start a little ahead on the server's clock;
//!    every process measures its clock's offset to the server's (the round trip with the least
//!    delay) and turns the start into an instant of its own clock. Its clients connect, then
//!    wait for that instant (`engine::RunSpec::start_at`). A process that does not join in time
//!    fails the fleet, with a message naming how many joined.
//! 3. [`Member::report`]: each stores its result. Process 0 then ([`Coordinator::finish`]) waits
//!    for every result (or for the process's session to be gone: killed, crashed), lets the
//!    statistics settle and reads S1.
//!
//! ## Why the commit check is exact
//! `S1 - S0` must equal the commits the processes' sessions made in between, which each
//! process counts and reports ([`FLEET_COMMITS_COORDINATOR`], [`FLEET_COMMITS_MEMBER`] for the
//! bookkeeping here, and its run's transactions, setup commits and connection start-ups). The
//! fleet's own waiting runs inside read-only transactions ended by ROLLBACK, which the server
//! does not count as commits; a process makes its joining commits visible to the statistics
//! before it waits (`pg_stat_force_next_flush()`, PostgreSQL 15+) so none of them lands after
//! S0.
//!
//! ## On MySQL and MariaDB
//! The counter is the server's `Com_commit`, which counts COMMIT statements (the single-run
//! check's, `stampede`'s `checks::mysql`): current when read (no flush to wait for), blind to
//! connection start-ups and to autocommitted statements. So the fleet's bookkeeping, made of
//! autocommitted INSERTs and UPDATEs, costs no commit there ([`Member::fleet_commits`] is 0),
//! and its waits are autocommitted SELECTs (they move `Com_select` and `Handler_commit`, not
//! `Com_commit`) rather than one long transaction, which REPEATABLE READ would pin to a single
//! snapshot. Two things it cannot tell apart, which make a mismatch inconclusive instead of a
//! failure, as for a single run: a workload of autocommitted statements (nothing to count),
//! and sessions that are not the fleet's (the counter is the whole server's, not one
//! database's): process 0 counts those at S0 and S1 and keeps the larger count in the header.
//! On a target of several MySQL hosts (a Galera cluster's nodes) each node counts its own
//! clients' COMMITs: S0 and S1 are sums over the nodes (module `coordinator`), and a COMMIT that
//! failed certification may count or not (the check allows for the processes' failed COMMITs).

mod coordinator;
mod sql;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use sut::{Dialect, Session};

pub use coordinator::{Coordinator, Finished, Stored};
pub use sql::maintenance_runs;

/// Commits process 0's fleet session makes between S0 and S1: the header's start, its result.
pub const FLEET_COMMITS_COORDINATOR: u64 = 2;
/// Commits every other process's fleet session makes between S0 and S1: its result.
pub const FLEET_COMMITS_MEMBER: u64 = 1;

/// How long after all have joined the fleet starts: time for every process to see the start
/// and connect its clients. A process whose clients take longer starts late, and says so.
pub const DEFAULT_LEAD: Duration = Duration::from_secs(2);

/// What one process asks of the fleet.
#[derive(Clone, Debug)]
pub struct Spec {
    /// `--fleet NAME` (checked by [`check_name`]).
    pub name: String,
    /// `--fleet-size N`.
    pub size: u32,
    /// `--fleet-index I` or `JOB_COMPLETION_INDEX`; `None`: assigned on joining.
    pub index: Option<u32>,
    /// How long process 0 waits for the others to join, and the others for the start.
    pub join_timeout: Duration,
    /// [`DEFAULT_LEAD`] unless a test asks otherwise.
    pub lead: Duration,
    /// Set by Ctrl-C: every wait of the fleet ends with an error.
    pub cancel: Arc<AtomicBool>,
}

fn check_cancel(cancel: &AtomicBool, name: &str) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        bail!("interrupted while waiting for fleet {name}");
    }
    Ok(())
}

/// A fleet name: 1 to 63 letters, digits, `_`, `-` or `.` (it is written into SQL literals,
/// and into Kubernetes object names by `stampede fleet manifest`).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    match ok {
        true => Ok(()),
        false => Err(format!(
            "--fleet {name:?}: a fleet name is 1 to 63 letters, digits, '_', '-' or '.'"
        )),
    }
}

/// A process that joined its fleet, holding its fleet session.
pub struct Member {
    session: Session,
    spec: Spec,
    pub index: u32,
    /// Process 0's snapshot session, opened on joining.
    coordinator: Option<Coordinator>,
}

/// When and how this process starts, as the fleet decided.
#[derive(Clone, Debug)]
pub struct Start {
    /// The common start on the server's clock, microseconds since the Unix epoch.
    pub server_us: i64,
    /// The same instant on this process's clock.
    pub local: Instant,
    /// This process's clock minus the server's, in microseconds.
    pub offset_us: i64,
    /// The round trip of the measurement the offset comes from (its error is at most half).
    pub rtt_us: u64,
    /// The global id of this process's first client: the clients of the processes before it.
    pub first_client_id: u32,
    /// Commits one connection start-up costs on the server (process 0 calibrates it).
    pub per_connection: i64,
}

impl Start {
    /// A local wall-clock time on the server's clock, microseconds since the Unix epoch.
    pub fn to_server_us(&self, t: SystemTime) -> i64 {
        epoch_us(t) - self.offset_us
    }
}

fn epoch_us(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// Who this process is, for its row.
#[derive(Clone, Debug, Default)]
pub struct Identity {
    pub hostname: String,
    pub clients: u32,
}

/// Join the fleet: create the table if needed, check the fleet is new and of this size, take an
/// index. Validates the name and size before any I/O.
pub async fn join(conn: &sut::Target, spec: &Spec, me: &Identity) -> Result<Member> {
    check_name(&spec.name).map_err(|e| anyhow!(e))?;
    if spec.size == 0 {
        bail!("--fleet-size 0: a fleet has at least one process");
    }
    if let Some(i) = spec.index.filter(|i| *i >= spec.size) {
        bail!(
            "--fleet-index {i}: a fleet of {} processes has indexes 0 to {}",
            spec.size,
            spec.size - 1
        );
    }
    let d = conn.dialect();
    let mut s = Session::connect(conn)
        .await
        .context("connecting the fleet session")?;
    // Two processes creating the table at once: one of them fails on the catalog's unique
    // index; the table then exists.
    let create = sql::create(d);
    if s.simple_query(&create).await.is_err() {
        s.simple_query(&create)
            .await
            .context("creating the stampede_fleet table")?;
    }
    sql::upgrade(&mut s).await?;
    let name = &spec.name;
    s.simple_query(&sql::create_header(d, name, spec.size))
        .await?;
    let header = sql::header(&mut s, name).await?;
    if header.size != spec.size {
        bail!(
            "--fleet-size {}: fleet {name} was started with --fleet-size {}",
            spec.size,
            header.size
        );
    }
    if header.start_us.is_some() || header.failure.is_some() {
        bail!(
            "fleet {name} has already run; `stampede fleet report {name}` shows it and \
             `stampede fleet report {name} --forget` clears it for a new run"
        );
    }
    let pid = std::process::id();
    let index = match spec.index {
        Some(i) => {
            if sql::insert_member(&mut s, name, Some(i), me, pid)
                .await?
                .is_none()
            {
                bail!("--fleet-index {i}: process {i} has already joined fleet {name}");
            }
            i
        }
        None => {
            let mut taken = None;
            // Two processes may take the same free index: the loser's insert does nothing and
            // it tries the next one.
            for _ in 0..=spec.size {
                if let Some(v) = sql::insert_member(&mut s, name, None, me, pid).await? {
                    taken = Some(v);
                    break;
                }
            }
            match taken {
                Some(i) if i < i64::from(spec.size) => i as u32,
                Some(_) | None => {
                    // The row taken beyond the size is not a member.
                    s.simple_query(&sql::delete_beyond(name, spec.size)).await?;
                    bail!(
                        "fleet {name} already has its {} processes (--fleet-size)",
                        spec.size
                    );
                }
            }
        }
    };
    let coordinator = match index {
        0 => Some(Coordinator::open(conn, name, spec.cancel.clone()).await?),
        _ => None,
    };
    settle_own_stats(&mut s).await;
    begin_wait(&mut s).await?;
    Ok(Member {
        session: s,
        spec: spec.clone(),
        index,
        coordinator,
    })
}

/// Begin waiting: a read-only transaction on PostgreSQL (polls cost no commit), nothing on
/// MySQL (autocommitted SELECTs cost no COMMIT; module notes).
async fn begin_wait(s: &mut Session) -> Result<()> {
    if let Some(sql) = sql::begin_read_only(s.dialect()) {
        s.simple_query(sql).await?;
    }
    Ok(())
}

/// End waiting, before a write of the fleet's.
async fn end_wait(s: &mut Session) -> Result<()> {
    if let Some(sql) = sql::end_read_only(s.dialect()) {
        s.simple_query(sql).await?;
    }
    Ok(())
}

/// Make this session's commits so far visible in `pg_stat_database` before it answers (a
/// backend flushes its counters when it goes idle, at most once a second unless forced;
/// `pg_stat_force_next_flush()` is PostgreSQL 15's). On older servers the counters reach the
/// statistics within a second, which the coordinator's settling waits for.
async fn settle_own_stats(s: &mut Session) {
    if s.dialect() == Dialect::Postgres {
        let _ = s.simple_query("SELECT pg_stat_force_next_flush()").await;
    }
}

impl Member {
    /// Wait for the fleet's start (process 0: decide it), measure this process's clock offset
    /// to the server's, and say when to start.
    pub async fn wait_start(&mut self) -> Result<Start> {
        let name = self.spec.name.clone();
        let deadline = Instant::now() + self.spec.join_timeout;
        let poll = Duration::from_millis(20);
        if let Some(c) = &mut self.coordinator {
            loop {
                let joined = sql::joined(&mut self.session, &name).await?;
                if joined >= i64::from(self.spec.size) {
                    break;
                }
                if Instant::now() >= deadline {
                    let why = format!(
                        "only {joined} of {} processes joined within {} s",
                        self.spec.size,
                        self.spec.join_timeout.as_secs()
                    );
                    end_wait(&mut self.session).await?;
                    self.session.simple_query(&sql::fail(&name, &why)).await?;
                    bail!("fleet {name}: {why} (--fleet-timeout)");
                }
                check_cancel(&self.spec.cancel, &name)?;
                tokio::time::sleep(poll).await;
            }
            // Waiting ends without a commit; then the snapshot, then the start (one commit on
            // PostgreSQL, counted in FLEET_COMMITS_COORDINATOR; none on MySQL).
            end_wait(&mut self.session).await?;
            let snap = c.snapshot().await?;
            let lead_us = self.spec.lead.as_micros() as i64;
            let d = self.session.dialect();
            self.session
                .simple_query(&sql::set_start(d, &name, lead_us, &snap))
                .await?;
            begin_wait(&mut self.session).await?;
        }
        let header = loop {
            let h = sql::header(&mut self.session, &name).await?;
            if let Some(f) = &h.failure {
                bail!("fleet {name} failed: {f}");
            }
            if h.start_us.is_some() {
                break h;
            }
            if Instant::now() >= deadline {
                let joined = sql::joined(&mut self.session, &name).await?;
                bail!(
                    "process {}: fleet {name} did not start within {} s ({joined} of {} \
                     processes joined; process 0 starts it) (--fleet-timeout)",
                    self.index,
                    self.spec.join_timeout.as_secs(),
                    self.spec.size
                );
            }
            check_cancel(&self.spec.cancel, &name)?;
            tokio::time::sleep(poll).await;
        };
        let (offset_us, rtt_us) = self.clock_offset().await?;
        let server_us = header.start_us.unwrap_or_default();
        let first_client_id = sql::clients_before(&mut self.session, &name, self.index).await?;
        // The server's instant on this clock, as an Instant.
        let local_epoch_us = server_us + offset_us;
        let now_sys = epoch_us(SystemTime::now());
        let now = Instant::now();
        let local = if local_epoch_us >= now_sys {
            now + Duration::from_micros((local_epoch_us - now_sys) as u64)
        } else {
            now
        };
        Ok(Start {
            server_us,
            local,
            offset_us,
            rtt_us,
            first_client_id: first_client_id as u32,
            per_connection: header.per_connection.unwrap_or(1),
        })
    }

    /// This clock minus the server's, from the round trip with the least delay of a few (the
    /// server's reading is taken to be at the middle of the round trip, as NTP does).
    async fn clock_offset(&mut self) -> Result<(i64, u64)> {
        let mut best: Option<(i64, u64)> = None;
        let now_sql = sql::server_now_us(self.session.dialect());
        for _ in 0..8 {
            let before = SystemTime::now();
            let t = Instant::now();
            let rows = self.session.simple_query(&now_sql).await?;
            let rtt = t.elapsed();
            let server: i64 = (rows.first().and_then(|r| r.first().cloned().flatten()))
                .ok_or_else(|| anyhow!("the server did not say its time"))?
                .parse()?;
            let mid = epoch_us(before) + rtt.as_micros() as i64 / 2;
            let rtt_us = rtt.as_micros() as u64;
            if best.is_none_or(|(_, r)| rtt_us < r) {
                best = Some((mid - server, rtt_us));
            }
        }
        Ok(best.expect("eight samples"))
    }

    /// The commits this process's fleet session makes between the fleet's snapshots (none on
    /// MySQL: its writes are autocommitted statements, which `Com_commit` does not count).
    pub fn fleet_commits(&self) -> u64 {
        match (self.session.dialect(), self.index) {
            (Dialect::MySql, _) => 0,
            (Dialect::Postgres, 0) => FLEET_COMMITS_COORDINATOR,
            (Dialect::Postgres, _) => FLEET_COMMITS_MEMBER,
        }
    }

    /// Store this process's result (JSON) in its row and leave. Process 0 gets its
    /// [`Coordinator`] back, to wait for the others.
    pub async fn report(mut self, result_json: &str) -> Result<Option<Coordinator>> {
        end_wait(&mut self.session).await?;
        let d = self.session.dialect();
        self.session
            .simple_query(&sql::store_result(
                d,
                &self.spec.name,
                self.index,
                result_json,
            ))
            .await
            .context("storing the result in the fleet table")?;
        self.session.close().await;
        Ok(self.coordinator)
    }

    /// Leave without a result (the run failed): the others see this process as lost.
    pub async fn abandon(self) {
        self.session.close().await;
        if let Some(c) = self.coordinator {
            c.close().await;
        }
    }
}

/// Stages: a fleet that loads data (`stampede init --fleet`) moves through numbered stages
/// instead of a timed start (process 0 creates the tables, all load their part, process 0 builds
/// the indexes).
impl Member {
    /// Wait until all processes have joined (no start, no snapshot: loading is not measured).
    pub async fn wait_joined(&mut self) -> Result<()> {
        let name = self.spec.name.clone();
        let deadline = Instant::now() + self.spec.join_timeout;
        loop {
            let joined = sql::joined(&mut self.session, &name).await?;
            if joined >= i64::from(self.spec.size) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "fleet {name}: only {joined} of {} processes joined within {} s \
                     (--fleet-timeout)",
                    self.spec.size,
                    self.spec.join_timeout.as_secs()
                );
            }
            check_cancel(&self.spec.cancel, &name)?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Say this process has reached `stage`.
    pub async fn set_stage(&mut self, stage: i32) -> Result<()> {
        end_wait(&mut self.session).await?;
        self.session
            .simple_query(&sql::set_stage(&self.spec.name, self.index, stage))
            .await?;
        begin_wait(&mut self.session).await
    }

    /// Wait until process `who` (or every process) has reached `stage`; a process whose
    /// session is gone before it fails the wait, naming it.
    pub async fn wait_stage(&mut self, who: Option<u32>, stage: i32) -> Result<()> {
        let name = self.spec.name.clone();
        loop {
            let (behind, gone) = sql::behind(&mut self.session, &name, who, stage).await?;
            if behind == 0 {
                return Ok(());
            }
            if gone > 0 {
                let whom = who.map_or_else(|| "a process".to_string(), |i| format!("process {i}"));
                bail!("fleet {name}: {whom} left before it finished its part");
            }
            check_cancel(&self.spec.cancel, &name)?;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Wait until every other process has left (process 0, before it removes the fleet).
    pub async fn wait_others_gone(&mut self) -> Result<()> {
        let name = self.spec.name.clone();
        while sql::still_connected(&mut self.session, &name, self.index).await? > 0 {
            check_cancel(&self.spec.cancel, &name)?;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// Read every stored result of fleet `name`, with its header (for `stampede fleet report`).
pub async fn stored(conn: &sut::Target, name: &str) -> Result<Stored> {
    check_name(name).map_err(|e| anyhow!(e))?;
    let mut s = Session::connect(conn).await?;
    let r = coordinator::read_stored(&mut s, name).await;
    s.close().await;
    r
}

/// Remove fleet `name`'s rows, and the table when no fleet is left in it.
pub async fn forget(conn: &sut::Target, name: &str) -> Result<()> {
    check_name(name).map_err(|e| anyhow!(e))?;
    let mut s = Session::connect(conn).await?;
    s.simple_query(&sql::forget(name)).await?;
    let left = s
        .simple_query("SELECT count(*) FROM stampede_fleet")
        .await?;
    if left
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .as_deref()
        == Some("0")
    {
        s.simple_query("DROP TABLE stampede_fleet").await?;
    }
    s.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_names_are_short_and_plain() {
        assert!(check_name("nightly-2026.11_a").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a'b").unwrap_err().contains("--fleet"));
        assert!(check_name(&"x".repeat(64)).is_err());
    }
}
