//! A run as one process of a fleet (`--fleet NAME --fleet-size N`): join before the run, start
//! at the fleet's instant with global client ids, store the result after; process 0 then waits
//! for the others and prints the merged result with the fleet's commit check.
//!
//! What changes for a fleet member (the rest of the run is as alone):
//! - its random seed is the fleet's plus its index, so no two processes draw the same values
//!   (pgbench derives every client's stream from the seed and the client's position);
//! - its own commit count and workload checks are skipped: the other processes' transactions
//!   land in the same counters and tables. The fleet's commit check replaces the count;
//!   process 0 checks TPC-C's consistency conditions once all are done
//!   (`commands::fleet::workload_checks`); the invariants that are deltas over one run
//!   (TPC-B's balances, sysbench's row counts) are checked with `stampede check` afterwards.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use report::{FleetProcess, FleetSection, RunResult};

use super::Ctx;
use crate::console::{self, EXIT_OK, EXIT_UNTRUSTED};
use crate::plan::FleetPlan;

/// What a process's run committed on the server, in its counter's terms (`run::measure`).
pub(crate) struct SessionCommits {
    /// PostgreSQL: counted transactions and setup commits; MySQL: the COMMIT statements of the
    /// counted transactions (`Family::mysql_commits`).
    pub commits: u64,
    /// The sessions it opened (each a start-up commit on PostgreSQL, none on MySQL).
    pub connections: u64,
    /// COMMITs that failed, which the server may have counted (MySQL).
    pub failed: u64,
    /// Why the server cannot count them (MySQL: autocommitted statements).
    pub uncounted: Option<String>,
}

/// A process that joined and knows its start.
pub(crate) struct Joined {
    member: fleet::Member,
    start: fleet::Start,
    plan: FleetPlan,
    cpu_at_start: Option<(Duration, Instant)>,
}

/// Join the fleet and wait for its start (process 0 decides it).
pub(crate) fn join(ctx: &Ctx, plan: &FleetPlan) -> Result<Joined> {
    let spec = plan.spec();
    let me = fleet::Identity {
        hostname: crate::environment::client_info().hostname,
        clients: ctx.spec.clients,
    };
    let (member, start) = ctx.rt.block_on(async {
        let mut m = fleet::join(ctx.conn(), &spec, &me).await?;
        let s = m.wait_start().await?;
        Ok::<_, anyhow::Error>((m, s))
    })?;
    console::note(&format!(
        "fleet {}: process {} of {}, clients {} to {}, clock offset {} us (rtt {} us); \
         starting with the others",
        plan.name,
        member.index,
        plan.size,
        start.first_client_id,
        start.first_client_id + ctx.spec.clients - 1,
        start.offset_us,
        start.rtt_us
    ));
    Ok(Joined {
        member,
        start,
        plan: plan.clone(),
        cpu_at_start: None,
    })
}

impl Joined {
    /// The engine's spec for this process: global client ids, the common start, its own seed.
    pub(crate) fn spec(&self, spec: &engine::RunSpec) -> engine::RunSpec {
        let mut s = spec.clone();
        s.first_client_id = self.start.first_client_id;
        s.start_at = Some(self.start.local);
        s.seed = spec.seed.wrapping_add(u64::from(self.member.index));
        s
    }

    pub(crate) fn mark_start(&mut self) {
        self.cpu_at_start = Some((process_cpu(), Instant::now()));
    }

    /// This process's part of the fleet section, with what its run's sessions committed.
    pub(crate) fn section(
        &self,
        r: &RunResult,
        outcome_started: std::time::SystemTime,
        c: SessionCommits,
    ) -> FleetSection {
        let cpu_pct = match self.cpu_at_start {
            Some((cpu, at)) => {
                let wall = at.elapsed().as_secs_f64() * r.environment.client.cpus.max(1) as f64;
                if wall > 0.0 {
                    100.0 * (process_cpu() - cpu).as_secs_f64() / wall
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        let t = r.total.total();
        let mut p = FleetProcess {
            index: self.member.index,
            hostname: r.environment.client.hostname.clone(),
            clients: r.config.clients,
            first_client_id: self.start.first_client_id,
            transactions: t.committed(),
            failed: t.failed(),
            tps: r.tps(),
            share_pct: 100.0,
            clock_offset_us: self.start.offset_us,
            rtt_us: self.start.rtt_us,
            started_server_us: self.start.to_server_us(outcome_started),
            duration_s: r.measured_duration_s,
            cpu_pct,
            rate_tps: r.config.rate_tps,
            server_commits: c.commits
                + c.connections * self.start.per_connection.max(0) as u64
                + self.member.fleet_commits(),
            lagging: Vec::new(),
            failed_commits: c.failed,
            uncounted: c.uncounted,
        };
        p.lagging = p.lag_reasons();
        FleetSection {
            name: self.plan.name.clone(),
            size: self.plan.size,
            start_server_us: self.start.server_us,
            processes: vec![p],
            lost: Vec::new(),
            commit_check: None,
        }
    }

    /// Store the result in the fleet's table; process 0 then waits for every other result and
    /// prints the merged one. The exit code: `code` (this process's), or the fleet's verdict.
    pub(crate) fn finish(self, ctx: &Ctx, r: &RunResult, code: i32) -> Result<i32> {
        let mut json = Vec::new();
        report::write_json(r, &mut json)?;
        let json = String::from_utf8(json).context("the result as JSON")?;
        let name = self.plan.name.clone();
        let coordinator = ctx.rt.block_on(self.member.report(&json))?;
        let Some(c) = coordinator else {
            console::note(&format!(
                "fleet {name}: result stored; process 0 prints the merged result \
                 (`stampede fleet report {name}` prints it again)"
            ));
            return Ok(code);
        };
        console::note(&format!(
            "fleet {name}: waiting for the other processes' results"
        ));
        // A process whose session is gone without a result is lost; one still running is
        // waited for (its -T is the fleet's).
        let done = ctx.rt.block_on(c.finish(Duration::from_secs(24 * 3600)))?;
        let mut merged = super::fleet_result::merged(&done.stored, &name)?;
        super::fleet_result::workload_checks(ctx.rt, ctx.conn(), &mut merged)?;
        println!("\nfleet {name}: the merged result of its processes");
        let fleet_code = super::fleet_result::emit(&merged, &Default::default());
        Ok(match (code, fleet_code) {
            (EXIT_OK, c) => c,
            (c, EXIT_OK) => c,
            (_, _) => EXIT_UNTRUSTED,
        })
    }
}

/// The CPU time this process has used (user and system), from getrusage(2).
fn process_cpu() -> Duration {
    // SAFETY: getrusage writes one rusage struct, zeroed here first.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}
