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

/// The commit identity across a fleet: the server's `xact_commit` moved from `before` (read at
/// the fleet's start) to `after` (read once every process had reported and its sessions had
/// left) by exactly the commits the processes' sessions made. With a process lost the identity
/// cannot be exact: its commits reached the server but were never reported.
pub fn commit_check(f: &FleetSection, before: i64, after: i64) -> Check {
    let delta = after - before;
    let reported: u64 = f.processes.iter().map(|p| p.server_commits).sum();
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
    let passed = delta == reported as i64;
    Check {
        name,
        status: if passed {
            CheckStatus::Passed
        } else {
            CheckStatus::Failed
        },
        detail: format!(
            "server xact_commit delta {delta}, processes' commits {reported} ({})",
            (f.processes.iter())
                .map(|p| format!("{}: {}", p.index, p.server_commits))
                .collect::<Vec<_>>()
                .join(", ")
        ),
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
