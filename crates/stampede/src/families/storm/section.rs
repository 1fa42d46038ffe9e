//! The `connection_storm` section of a result (`stampede run connection-storm`): connections
//! opened at a set rate up to a target count and held, while a few busy clients run a stream
//! of transactions.
//!
//! What it answers (seed 001's 20,000-connection test): how long a connection takes to open as
//! the count grows (HDR percentiles of each attempt, from the socket's connect to the session
//! ready for queries), how attempts fail and why (too many connections, PostgreSQL 53300 or
//! MySQL 1040; timeouts; refused; other), what each held backend costs the server in memory,
//! and what the busy clients still get done as the idle count grows (their throughput and p99
//! for each step of open connections, from the run's per-second intervals).
//!
//! Must not touch: I/O. The runner (the binary) fills it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use report::svg::{esc, Chart, Kind, Series};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionStorm {
    /// `-c`: the idle connections asked for.
    pub target_connections: u64,
    /// `--connect-rate`: attempts per second.
    pub connect_rate_per_s: f64,
    /// The clients that ran transactions meanwhile (`--busy-clients`).
    pub busy_clients: u32,
    /// Attempts made, and of them the ones that opened a session.
    pub attempted: u64,
    pub opened: u64,
    /// Idle connections still open when the run ended (a server or pooler may close some).
    pub held_at_end: u64,
    /// From the first attempt to the end of the last one.
    pub ramp_s: f64,
    /// Connect latency of the attempts that opened a session.
    pub connect_latency_ms: ConnectLatency,
    /// Failed attempts by kind: `too_many_connections`, `timeout`, `refused`, `other`.
    #[serde(default)]
    pub failures: Vec<StormFailure>,
    /// What the server spent on its backends; see [`BackendMemory`].
    pub memory: BackendMemory,
    /// The busy clients' throughput by step of open idle connections.
    #[serde(default)]
    pub steps: Vec<StormStep>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectLatency {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl ConnectLatency {
    pub fn of(h: &measure::Histogram) -> ConnectLatency {
        let ms = |p: f64| h.percentile_us(p) as f64 / 1000.0;
        ConnectLatency {
            mean: h.mean_us() / 1000.0,
            p50: ms(50.0),
            p90: ms(90.0),
            p99: ms(99.0),
            p999: ms(99.9),
            max: h.max_us() as f64 / 1000.0,
        }
    }

    /// "mean 1.000 p50 ... max 9.000", the figures joined by `sep`.
    fn words(&self, sep: &str) -> String {
        [
            ("mean", self.mean),
            ("p50", self.p50),
            ("p90", self.p90),
            ("p99", self.p99),
            ("p99.9", self.p999),
            ("max", self.max),
        ]
        .iter()
        .map(|(k, v)| format!("{k} {v:.3}"))
        .collect::<Vec<_>>()
        .join(sep)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StormFailure {
    pub kind: String,
    pub count: u64,
    /// The first such error's message (redacted by the caller).
    pub example: String,
}

/// Server memory per backend, measured where it can be (the runner says how, or why not).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendMemory {
    /// How it was measured (`/proc/PID/smaps_rollup of N backends`), or why it was not.
    pub source: String,
    /// Backends measured.
    pub backends: u64,
    /// Mean private memory (Private_Clean + Private_Dirty) per backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_bytes_per_backend: Option<f64>,
    /// Mean proportional set size per backend (shared pages divided among their users).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pss_bytes_per_backend: Option<f64>,
    /// Mean resident set per backend (shared pages counted in full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes_per_backend: Option<f64>,
}

/// The busy clients while a number of idle connections was open.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StormStep {
    /// Idle connections open at the end of the seconds counted here (rounded down to the step).
    pub open_connections: u64,
    pub seconds: f64,
    pub tps: f64,
    pub p99_ms: f64,
}

/// "private 1065 kB, pss 1079 kB, rss 16555 kB (how)": the figures measured, or "not measured
/// (why)"; `source` already escaped for HTML where needed.
impl report::section::Section for ConnectionStorm {
    const KEY: &'static str = "connection_storm";
}

/// How the section renders (`report::section`): a block after the summaries, and a section of
/// the HTML report.
pub(crate) struct View;
pub(crate) static VIEW: View = View;

impl report::section::View for View {
    fn key(&self) -> &'static str {
        <ConnectionStorm as report::section::Section>::KEY
    }

    fn text_block(&self, _r: &report::RunResult, v: &serde_json::Value) -> Option<String> {
        ConnectionStorm::deserialize(v)
            .ok()
            .map(|s| render_text(&s))
    }

    fn html(&self, _r: &report::RunResult, v: &serde_json::Value, o: &mut String) {
        if let Ok(s) = ConnectionStorm::deserialize(v) {
            html_section(o, &s);
        }
    }
}

fn memory_words(m: &BackendMemory, sep: &str, source: &str) -> String {
    let parts: Vec<String> = [
        ("private", m.private_bytes_per_backend),
        ("pss", m.pss_bytes_per_backend),
        ("rss", m.rss_bytes_per_backend),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some(format!("{k} {:.0} kB", v? / 1024.0)))
    .collect();
    if parts.is_empty() {
        format!("not measured ({source})")
    } else {
        format!("{} ({source})", parts.join(sep))
    }
}

/// What was opened and held, in the words of the text and the HTML alike.
fn headline(s: &ConnectionStorm) -> String {
    format!(
        "{} of {} connections opened ({} attempted at {}/s over {:.1} s), {} held at the end; {} \
         busy clients",
        s.opened,
        s.target_connections,
        s.attempted,
        s.connect_rate_per_s,
        s.ramp_s,
        s.held_at_end,
        s.busy_clients
    )
}

/// The section as text, every line ending in `\n`.
pub fn render_text(s: &ConnectionStorm) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "connection storm: {}", headline(s));
    let _ = writeln!(
        o,
        "  connect latency ms: {}",
        s.connect_latency_ms.words(" ")
    );
    if s.failures.is_empty() {
        let _ = writeln!(o, "  failed attempts: none");
    } else {
        for f in &s.failures {
            let _ = writeln!(
                o,
                "  failed attempts, {}: {} (first: {})",
                f.kind, f.count, f.example
            );
        }
    }
    let _ = writeln!(
        o,
        "  server memory per backend: {}",
        memory_words(&s.memory, ", ", &s.memory.source)
    );
    if !s.steps.is_empty() {
        let _ = writeln!(
            o,
            "  busy clients by open connections:\n    {:>8}  {:>7}  {:>10}  {:>9}",
            "open", "seconds", "tps", "p99 ms"
        );
        for x in &s.steps {
            let _ = writeln!(
                o,
                "    {:>8}  {:>7.0}  {:>10.1}  {:>9.3}",
                x.open_connections, x.seconds, x.tps, x.p99_ms
            );
        }
    }
    o
}

/// The section in HTML: the figures, and the busy clients' tps and p99 against the open count.
pub fn html_section(o: &mut String, s: &ConnectionStorm) {
    o.push_str("<section id=\"connection-storm\"><h2>Connection storm</h2>");
    let _ = write!(
        o,
        "<p>{}.</p><table><tbody><tr><th>connect latency ms</th><td>{}</td></tr>",
        headline(s),
        s.connect_latency_ms.words(" · ")
    );
    for f in &s.failures {
        let _ = write!(
            o,
            "<tr><th>failed: {}</th><td>{} (first: {})</td></tr>",
            esc(&f.kind),
            f.count,
            esc(&f.example)
        );
    }
    let mem = memory_words(&s.memory, " · ", &esc(&s.memory.source));
    let _ = write!(
        o,
        "<tr><th>server memory per backend</th><td>{mem}</td></tr></tbody></table>"
    );
    if !s.steps.is_empty() {
        for (what, unit, color, pick) in [
            ("busy clients' throughput", "tps", "#3056d3", 0usize),
            ("busy clients' p99", "ms", "#d62828", 1),
        ] {
            let mut c = Chart::new(
                &format!("chart-storm-{}", ["tps", "p99"][pick]),
                &format!("{what} against open idle connections"),
                "open idle connections",
                unit,
                Kind::Lines,
            );
            c.series.push(Series {
                name: what.into(),
                color: color.into(),
                points: (s.steps.iter())
                    .map(|x| (x.open_connections as f64, [x.tps, x.p99_ms][pick]))
                    .collect(),
                dashed: false,
            });
            if s.steps.len() == 1 {
                let x = s.steps[0].open_connections as f64;
                c.x_range = Some((x - 1.0, x + 1.0));
            }
            o.push_str(&c.render());
        }
    }
    o.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection storm with every part filled.
    pub(crate) fn full() -> ConnectionStorm {
        ConnectionStorm {
            target_connections: 2000,
            connect_rate_per_s: 500.0,
            busy_clients: 2,
            attempted: 2000,
            opened: 1990,
            held_at_end: 1990,
            ramp_s: 4.0,
            connect_latency_ms: ConnectLatency {
                mean: 2.0,
                p50: 1.5,
                p90: 3.0,
                p99: 9.0,
                p999: 20.0,
                max: 25.0,
            },
            failures: vec![StormFailure {
                kind: "too_many_connections".into(),
                count: 10,
                example: "FATAL 53300: sorry, too many clients already".into(),
            }],
            memory: BackendMemory {
                source: "/proc/PID/smaps_rollup of 1990 backends".into(),
                backends: 1990,
                private_bytes_per_backend: Some(1.5e6),
                pss_bytes_per_backend: Some(2.0e6),
                rss_bytes_per_backend: Some(9.0e6),
            },
            steps: vec![StormStep {
                open_connections: 1000,
                seconds: 2.0,
                tps: 3000.0,
                p99_ms: 1.2,
            }],
        }
    }

    #[test]
    fn the_section_is_what_the_schema_declares() {
        let v = serde_json::to_value(full()).unwrap();
        let optional = [
            "private_bytes_per_backend",
            "pss_bytes_per_backend",
            "rss_bytes_per_backend",
        ];
        let nested = [
            ("/connect_latency_ms", "/properties/connect_latency_ms"),
            ("/failures/0", "/properties/failures/items"),
            ("/memory", "/properties/memory"),
            ("/steps/0", "/properties/steps/items"),
        ];
        let key = <ConnectionStorm as report::section::Section>::KEY;
        let wrong = report::section::schema_mismatches(key, &v, &optional, &nested);
        assert_eq!(wrong, Vec::<String>::new());
    }

    #[test]
    fn text_and_html_say_what_was_not_measured() {
        let s = ConnectionStorm {
            target_connections: 100,
            opened: 90,
            attempted: 100,
            failures: vec![StormFailure {
                kind: "too_many_connections".into(),
                count: 10,
                example: "53300".into(),
            }],
            memory: BackendMemory {
                source: "the server is not local".into(),
                ..Default::default()
            },
            steps: vec![StormStep {
                open_connections: 50,
                seconds: 2.0,
                tps: 100.0,
                p99_ms: 1.0,
            }],
            ..Default::default()
        };
        let t = render_text(&s);
        assert!(t.contains("too_many_connections: 10"), "{t}");
        assert!(t.contains("not measured (the server is not local)"), "{t}");
        let mut h = String::new();
        html_section(&mut h, &s);
        assert!(h.contains("chart-storm-tps") && h.contains("not measured"));
    }
}
