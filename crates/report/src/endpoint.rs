//! The per-endpoint parts of a result beyond its counts: latency percentiles and failures by
//! kind of the transactions that ran on one host, in the units every output prints.
//!
//! Why percentiles and not the host's histogram: the endpoints table is a summary to spot a slow
//! or failing host at a glance, and the run's own histograms (in `intervals`/`total`) already
//! carry every latency losslessly. Five numbers per host keep `run.json` small at any number of
//! hosts. Both types default (serde) so results written before they existed still read.

use measure::{FailureKind, Histogram};
use serde::{Deserialize, Serialize};

use crate::Endpoint;

impl Endpoint {
    /// Set its rate from its transactions over `secs` of measured time (0 when no time was
    /// measured).
    pub fn set_tps(&mut self, secs: f64) {
        self.tps = if secs > 0.0 {
            self.transactions as f64 / secs
        } else {
            0.0
        };
    }
}

/// Latency of one host's committed transactions, ms, from the scheduled start as the run's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointLatency {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl EndpointLatency {
    /// From a histogram of microseconds; `None` when it is empty (a host that committed nothing
    /// has no latency, which is not zero).
    pub fn of(h: &Histogram) -> Option<EndpointLatency> {
        if h.is_empty() {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(EndpointLatency {
            mean: h.mean_us() / 1000.0,
            p50: ms(h.percentile_us(50.0)),
            p95: ms(h.percentile_us(95.0)),
            p99: ms(h.percentile_us(99.0)),
            max: ms(h.max_us()),
        })
    }
}

/// One host's failed transactions, by kind as the run's failures are classified
/// ([`FailureKind`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointFailures {
    pub serialization: u64,
    pub deadlock: u64,
    pub other: u64,
}

impl EndpointFailures {
    pub fn add(&mut self, kind: FailureKind, n: u64) {
        match kind {
            FailureKind::Serialization => self.serialization += n,
            FailureKind::Deadlock => self.deadlock += n,
            FailureKind::Other => self.other += n,
        }
    }

    pub fn of(&self, kind: FailureKind) -> u64 {
        match kind {
            FailureKind::Serialization => self.serialization,
            FailureKind::Deadlock => self.deadlock,
            FailureKind::Other => self.other,
        }
    }

    pub fn total(&self) -> u64 {
        self.serialization + self.deadlock + self.other
    }
}

/// The rest of a host's line in the text summary, after its counts: `, latency ms mean 1.234
/// p50 .. max .., 0 failures, 0 reconnects` (failures by kind when there are any).
pub(crate) fn text_details(e: &crate::Endpoint) -> String {
    let mut s = String::new();
    if let Some(l) = &e.latency_ms {
        s.push_str(&format!(
            ", latency ms mean {:.3} p50 {:.3} p95 {:.3} p99 {:.3} max {:.3}",
            l.mean, l.p50, l.p95, l.p99, l.max
        ));
    }
    s.push_str(&format!(", {} failures", e.failures.total()));
    let f = &e.failures;
    if f.total() > 0 {
        let kinds: Vec<String> = [
            (f.serialization, "serialization"),
            (f.deadlock, "deadlock"),
            (f.other, "other"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{n} {k}"))
        .collect();
        s.push_str(&format!(" ({})", kinds.join(", ")));
    }
    s.push_str(&format!(", {} reconnects", e.reconnects));
    s
}

/// The HTML report's endpoints table: one row per host, its counts, latency and failures.
pub(crate) fn html_table(o: &mut String, endpoints: &[crate::Endpoint]) {
    use crate::svg::esc;
    use std::fmt::Write as _;
    o.push_str(
        "<table><thead><tr><th>host</th><th>port</th><th>clients</th><th>transactions</th>\
         <th>tps</th><th>mean ms</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th>\
         <th>max ms</th><th>failures</th><th>reconnects</th></tr></thead><tbody>",
    );
    for e in endpoints {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td>",
            esc(&e.host),
            e.port,
            // --read-from: writer sessions, then reader sessions (model::Endpoint).
            if e.reader_clients > 0 {
                format!("{} + {} readers", e.clients, e.reader_clients)
            } else {
                e.clients.to_string()
            },
            e.transactions,
            e.tps
        );
        match &e.latency_ms {
            Some(l) => {
                for v in [l.mean, l.p50, l.p95, l.p99, l.max] {
                    let _ = write!(o, "<td>{v:.3}</td>");
                }
            }
            None => o.push_str(&"<td>-</td>".repeat(5)),
        }
        let f = &e.failures;
        let _ = write!(
            o,
            "<td title=\"serialization {}, deadlock {}, other {}\">{}</td><td>{}</td></tr>",
            f.serialization,
            f.deadlock,
            f.other,
            f.total(),
            e.reconnects
        );
    }
    o.push_str("</tbody></table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_in_milliseconds_and_absent_when_nothing_committed() {
        assert_eq!(EndpointLatency::of(&Histogram::new()), None);
        let mut h = Histogram::new();
        for us in [1_000, 2_000, 3_000, 40_000] {
            h.record(us);
        }
        let l = EndpointLatency::of(&h).unwrap();
        assert!((l.mean - 11.5).abs() < 1e-9, "{l:?}");
        assert!(l.p50 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.max, "{l:?}");
        assert!((l.max - 40.0).abs() < 0.1, "{l:?}");
    }

    #[test]
    fn a_hosts_text_line_gives_its_latency_and_failures_by_kind() {
        let mut e = crate::Endpoint {
            host: "h".into(),
            port: 1,
            ..Default::default()
        };
        assert_eq!(text_details(&e), ", 0 failures, 0 reconnects");
        e.latency_ms = Some(EndpointLatency {
            mean: 1.0,
            p50: 1.0,
            p95: 2.0,
            p99: 3.0,
            max: 4.0,
        });
        e.failures.add(FailureKind::Serialization, 2);
        e.failures.add(FailureKind::Other, 1);
        e.reconnects = 5;
        assert_eq!(
            text_details(&e),
            ", latency ms mean 1.000 p50 1.000 p95 2.000 p99 3.000 max 4.000, \
             3 failures (2 serialization, 1 other), 5 reconnects"
        );
    }

    #[test]
    fn failures_add_up_by_kind() {
        let mut f = EndpointFailures::default();
        f.add(FailureKind::Deadlock, 2);
        f.add(FailureKind::Other, 1);
        assert_eq!(
            (f.serialization, f.deadlock, f.other, f.total()),
            (0, 2, 1, 3)
        );
    }
}
