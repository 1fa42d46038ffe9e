//! The `fleet` section of a result: several stampede processes that ran one benchmark together
//! (`--fleet NAME --fleet-size N`), what each did, and the fleet-wide commit check.
//!
//! A member's own result carries a section with one process (itself); the merged result
//! (`merge::merge`) carries one with every process. Plain data, like the rest of the model;
//! rendered by [`render_text`] and [`html_section`].

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::model::{Check, CheckStatus};

/// A fleet of driver processes and what each contributed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetSection {
    /// `--fleet NAME`.
    pub name: String,
    /// `--fleet-size N`: the processes that were to run.
    pub size: u32,
    /// The common start, on the server's clock, in microseconds since the Unix epoch: every
    /// process started its clients at this instant of the server's clock.
    pub start_server_us: i64,
    /// One per process that reported, by index.
    pub processes: Vec<FleetProcess>,
    /// Indexes that joined but never reported a result (killed, crashed, cut off).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<u32>,
    /// The commit count across the fleet (server snapshots at the fleet's start and after
    /// every process reported), when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_check: Option<Check>,
}

/// One driver process of a fleet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetProcess {
    pub index: u32,
    pub hostname: String,
    /// Its `-c`, and the first of its global client ids (`index` x clients of the earlier ones).
    pub clients: u32,
    pub first_client_id: u32,
    /// Committed and failed transactions of its run.
    pub transactions: u64,
    pub failed: u64,
    pub tps: f64,
    /// Its share of the fleet's committed transactions, in percent (set by the merge).
    #[serde(default)]
    pub share_pct: f64,
    /// Its clock minus the server's, in microseconds (positive: the process's clock is ahead),
    /// measured over the round trip with the smallest delay; `rtt_us` bounds the error.
    pub clock_offset_us: i64,
    pub rtt_us: u64,
    /// When its clients actually started, on the server's clock (microseconds since the epoch):
    /// its own start corrected by its offset.
    pub started_server_us: i64,
    /// Its measured seconds.
    pub duration_s: f64,
    /// The CPU this process used during the run, in percent of the machine's CPUs.
    pub cpu_pct: f64,
    /// Its share of `--rate` (transactions per second), when rate-limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_tps: Option<f64>,
    /// The commits this process's sessions made on the server during the fleet's window:
    /// counted transactions, setup commits, connection start-ups and its fleet bookkeeping.
    pub server_commits: u64,
    /// Why this process may have held the fleet back (its CPU saturated, its rate behind its
    /// schedule); empty when it kept up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lagging: Vec<String>,
    /// COMMITs of its sessions that failed: the server may have counted them or not (MySQL's
    /// `Com_commit` counts a COMMIT the server ran, Galera's certification failures included),
    /// so the fleet's check allows up to this many more than `server_commits`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_commits: u64,
    /// Why its commits cannot be counted on the server (MySQL: its transactions are
    /// autocommitted statements, which `Com_commit` does not count); the fleet's check is then
    /// inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The server's counter around a fleet: read at the fleet's start (`before`) and once every
/// process had reported and its sessions had left (`after`).
#[derive(Clone, Debug)]
pub struct Snapshots<'a> {
    pub before: i64,
    pub after: i64,
    /// The counter's name: `xact_commit` (PostgreSQL, the database's), `Com_commit` (MySQL,
    /// the server's COMMIT statements).
    pub counter: &'a str,
    /// MySQL: the most client sessions that were not the fleet's at either snapshot. Their
    /// COMMITs count in the server-wide counter too, so a mismatch with any is inconclusive.
    pub others: Option<i64>,
    /// PostgreSQL: autovacuum and autoanalyze runs between the snapshots, whose transactions
    /// count in `xact_commit` too ([`CheckStatus::of_commit_surplus`]).
    pub maintenance: Option<i64>,
}

/// CPU use above which a driver is called saturated: above this its clients queue for the CPU
/// and the latency it reports includes its own waiting.
pub const CPU_SATURATED_PCT: f64 = 90.0;
/// A rate-limited driver that ran fewer than this share of its scheduled transactions fell
/// behind its schedule.
pub const BEHIND_SCHEDULE: f64 = 0.95;

impl FleetProcess {
    /// The reasons it lagged: its CPU use, its rate against its share of `--rate`.
    pub fn lag_reasons(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.cpu_pct > CPU_SATURATED_PCT {
            why.push(format!("its CPU was saturated ({:.0}%)", self.cpu_pct));
        }
        if let Some(r) = self.rate_tps {
            let done = (self.transactions + self.failed) as f64;
            let due = r * self.duration_s;
            if due > 0.0 && done < BEHIND_SCHEDULE * due {
                why.push(format!(
                    "its rate fell behind schedule ({done:.0} of {due:.0} transactions)"
                ));
            }
        }
        why
    }
}

/// The fleet's block of the text summary.
pub fn render_text(f: &FleetSection) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "fleet {}: {} of {} processes reported",
        f.name,
        f.processes.len(),
        f.size
    );
    for p in &f.processes {
        let _ = writeln!(
            o,
            "  process {} ({}): {} clients from id {}, {} transactions ({:.1}%), tps {:.1}, \
             clock offset {} us (rtt {} us), started {} us after the fleet's start{}",
            p.index,
            p.hostname,
            p.clients,
            p.first_client_id,
            p.transactions,
            p.share_pct,
            p.tps,
            p.clock_offset_us,
            p.rtt_us,
            p.started_server_us - f.start_server_us,
            if p.lagging.is_empty() {
                String::new()
            } else {
                format!("; LAGGING: {}", p.lagging.join(", "))
            }
        );
    }
    if !f.lost.is_empty() {
        let lost: Vec<String> = f.lost.iter().map(u32::to_string).collect();
        let _ = writeln!(
            o,
            "  lost: process {} joined but never reported; the merge covers the others",
            lost.join(", ")
        );
    }
    if let Some(c) = &f.commit_check {
        let _ = writeln!(o, "  {}: {} ({})", c.name, c.status.label(), c.detail);
    }
    o
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The fleet's section of the HTML report: each driver's share, lagging drivers flagged.
pub fn html_section(o: &mut String, f: &FleetSection) {
    let _ = write!(
        o,
        "<section id=\"fleet\"><h2>Fleet {}</h2><p>{} of {} processes reported.</p>",
        esc(&f.name),
        f.processes.len(),
        f.size
    );
    o.push_str(
        "<table><thead><tr><th>process</th><th>host</th><th>clients</th><th>transactions</th>\
         <th>share</th><th>tps</th><th>clock offset (us)</th><th>start (us after fleet)</th>\
         <th>CPU</th><th>lagging</th></tr></thead><tbody>",
    );
    for p in &f.processes {
        let _ = write!(
            o,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{:.1}</td>\
             <td>{}</td><td>{}</td><td>{:.0}%</td><td>{}</td></tr>",
            if p.lagging.is_empty() {
                ""
            } else {
                " class=\"bad\""
            },
            p.index,
            esc(&p.hostname),
            p.clients,
            p.transactions,
            p.share_pct,
            p.tps,
            p.clock_offset_us,
            p.started_server_us - f.start_server_us,
            p.cpu_pct,
            esc(&p.lagging.join(", "))
        );
    }
    o.push_str("</tbody></table>");
    if !f.lost.is_empty() {
        let lost: Vec<String> = f.lost.iter().map(u32::to_string).collect();
        let _ = write!(
            o,
            "<p class=\"warn\">Lost: process {} joined but never reported; the merge covers \
             the others.</p>",
            lost.join(", ")
        );
    }
    if let Some(c) = &f.commit_check {
        let _ = write!(
            o,
            "<p>{}: <b>{}</b> ({})</p>",
            esc(&c.name),
            c.status.label(),
            esc(&c.detail)
        );
    }
    o.push_str("</section>");
}

/// The commit identity across a fleet: the server's counter moved from `s.before` to `s.after`
/// by exactly the commits the processes' sessions made (plus, at most, the COMMITs that failed,
/// which the server may have counted). With a process lost the identity cannot be exact: its
/// commits reached the server but were never reported. Where the server cannot count them (a
/// MySQL process of autocommitted statements) or sessions that are not the fleet's shared the
/// counter, a mismatch is inconclusive, as a single run's MySQL check says.
pub fn commit_check(f: &FleetSection, s: &Snapshots<'_>) -> Check {
    let delta = s.after - s.before;
    let counter = s.counter;
    let reported: u64 = f.processes.iter().map(|p| p.server_commits).sum();
    let failed: u64 = f.processes.iter().map(|p| p.failed_commits).sum();
    let name = "fleet commit count".to_string();
    if !f.lost.is_empty() {
        let lost: Vec<String> = f.lost.iter().map(u32::to_string).collect();
        return Check {
            name,
            status: CheckStatus::Skipped,
            detail: format!(
                "cannot be exact: process {} was lost, its commits reached the server but were \
                 never reported (server delta {delta}, reported by the others {reported}, \
                 difference {})",
                lost.join(", "),
                delta - reported as i64
            ),
        };
    }
    if let Some(p) = f.processes.iter().find(|p| p.uncounted.is_some()) {
        return Check {
            name,
            status: CheckStatus::Skipped,
            detail: format!(
                "inconclusive: process {}: {} (server {counter} delta {delta})",
                p.index,
                p.uncounted.as_deref().unwrap_or_default()
            ),
        };
    }
    let failed_words = match failed {
        0 => String::new(),
        n => format!(" + up to {n} COMMITs that failed"),
    };
    let detail = format!(
        "server {counter} delta {delta}, processes' commits {reported}{failed_words} ({})",
        (f.processes.iter())
            .map(|p| format!("{}: {}", p.index, p.server_commits))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (lo, hi) = (reported as i64, (reported + failed) as i64);
    let status = match s.others {
        _ if (lo..=hi).contains(&delta) => CheckStatus::Passed,
        Some(o) if o > 0 => {
            return Check {
                name,
                status: CheckStatus::Skipped,
                detail: format!(
                    "inconclusive: {detail}; {o} other sessions were connected, whose COMMITs \
                     count too"
                ),
            }
        }
        // PostgreSQL: autovacuum's own commits count in the database's counter too.
        _ => match s.maintenance {
            Some(m) if CheckStatus::of_commit_surplus((delta - hi).into(), m).is_skipped() => {
                return Check {
                    name,
                    status: CheckStatus::Skipped,
                    detail: format!(
                        "inconclusive: {detail}; {}",
                        CheckStatus::maintenance_words(m)
                    ),
                }
            }
            _ => CheckStatus::Failed,
        },
    };
    Check {
        name,
        status,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_html_name_each_process_the_lost_and_the_laggards() {
        let f = crate::testdata::fleet_section();
        let t = render_text(&f);
        assert!(
            t.contains("fleet nightly: 1 of 3 processes reported"),
            "{t}"
        );
        assert!(t.contains("LAGGING: its CPU was saturated (95%)"), "{t}");
        assert!(
            t.contains("lost: process 2 joined but never reported"),
            "{t}"
        );
        let mut h = String::new();
        html_section(&mut h, &f);
        assert!(
            h.contains("<tr class=\"bad\"><td>0</td><td>driver-0</td>"),
            "{h}"
        );
        assert!(h.contains("Lost: process 2"), "{h}");
    }

    #[test]
    fn a_driver_lags_when_its_cpu_is_saturated_or_its_rate_falls_behind() {
        let mut p = FleetProcess {
            cpu_pct: 50.0,
            rate_tps: Some(100.0),
            duration_s: 10.0,
            transactions: 960,
            ..Default::default()
        };
        assert!(p.lag_reasons().is_empty());
        p.transactions = 900;
        assert_eq!(
            p.lag_reasons(),
            ["its rate fell behind schedule (900 of 1000 transactions)"]
        );
        p.cpu_pct = 97.0;
        assert_eq!(p.lag_reasons().len(), 2);
    }
}
