//! The `sweep` section of a result: one run repeated over a parameter (`--sweep clients=1..64`,
//! `--sweep rate=...`, `--sweep set:NAME=...`), one step per value, and where it stops scaling.
//!
//! Each step is a run of its own. Its figures leave out the step's first `warmup_s` seconds
//! (whole intervals starting before the cut are dropped, as `compare` drops its ramp-up), since
//! the first second of a step holds each new backend's first parse and plan and cold caches.
//!
//! ## The knee
//! Steps are taken in the order given (the parameter rising). Going from step `k` to step `k+1`:
//! - *throughput stops rising* when the relative gain in tps is less than [`KNEE_GAIN`] (a
//!   quarter) of the relative growth of the parameter, `(tps[k+1]/tps[k] - 1) <
//!   KNEE_GAIN * (v[k+1]/v[k] - 1)`: doubling the clients and gaining under 25% is past the point
//!   of scaling. For values that are not numbers (a setting such as `on`/`off`, sizes with
//!   units) the parameter's growth is taken as 1 (the gain must be at least 25%).
//! - *latency climbs* when p99 rises by at least [`KNEE_P99_RISE`] (25%): `p99[k+1] >= 1.25 *
//!   p99[k]`.
//!
//! The knee is the first step `k` for which both hold: the last value before throughput
//! flattens while latency climbs, the value to run at. A sweep where every step scales, or where
//! throughput flattens with latency flat (an idle server that a rate sweep never saturates), or
//! of fewer than two steps, has no knee (`knee` is `null`). Closed-loop clients past saturation
//! show exactly this shape by Little's law (latency grows with the clients, throughput does not),
//! and so does a rate above capacity (the queue grows, latency from the scheduled start climbs).
//!
//! Only *sound* steps take part: a step where a client aborted or a check failed is left out of
//! the knee altogether, neither the knee nor the step it is compared with (the next sound step
//! is, with the parameter's growth up to it). Its throughput is not the parameter's doing: on
//! MariaDB, sysbench's oltp tests at 200 and 400 clients lost 136 and 351 clients to error 1461
//! (`max_prepared_stmt_count`), and the fewer clients left made a flat curve that read as
//! saturation (issue 30). Such steps stay in the table with what went wrong.
//!
//! ## A matrix
//! Two parameters (`--sweep scale=1,10 --sweep clients=1..16`, pgbench-tools' scale-by-clients
//! matrix): `group_parameter` names the outer one, each step carries its value (`group`), steps
//! come group by group, and each group is a sweep of its own for the knee (`group_knees`; `knee`
//! is for a sweep of one parameter). The charts draw one line per group against the inner
//! parameter.
//!
//! ## What a step's row carries
//! tps and latency after the warm-up; failures (by kind), aborted clients (with each distinct
//! reason) and failed checks over the whole step, warm-up included: a failure in the first
//! second is a failure all the same, and a client refused at connect time (a prepared statement
//! the server would not create) aborts before the first interval. The text, the JSON and the
//! HTML show them all on the step's row. Besides, each step keeps its own series (`series`):
//! the server's counters over the step from its own observer, every check with its verdict, the
//! family's own figures (tpmC, rows/s) and, for a sweep over scale, the rows it ran on; the
//! HTML charts them against the parameter and `render_csv` writes them a row per step.
//!
//! Must not touch: I/O. The runner (the binary) fills the steps from each step's result with
//! [`SweepStep::of`].

use std::fmt::Write as _;

use measure::{FailureKind, Interval};
use serde::{Deserialize, Serialize};

use crate::model::RunResult;
use crate::svg::{esc, Chart, Kind, Series};

mod series;
pub use series::{counter_sets, metrics_text, render_csv, StepCounter, StepSeries};

/// Below this share of the parameter's relative growth, a step's tps gain means throughput has
/// stopped rising (module notes).
pub const KNEE_GAIN: f64 = 0.25;
/// A rise of p99 by this share or more means latency climbs (module notes).
pub const KNEE_P99_RISE: f64 = 0.25;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepSection {
    /// What was swept: `clients`, `rate`, `scale` or `set:NAME` (a matrix's inner parameter).
    pub parameter: String,
    /// A matrix's outer parameter (module notes); absent for a sweep of one parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_parameter: Option<String>,
    /// Seconds at the start of each step left out of its figures.
    pub warmup_s: f64,
    /// The knee (module notes); `None` when the sweep shows none.
    pub knee: Option<Knee>,
    /// A matrix's knees, one per group that has one (module notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_knees: Vec<Knee>,
    pub steps: Vec<SweepStep>,
}

impl SweepSection {
    /// Every knee: the sweep's, or each group's of a matrix.
    pub fn knees(&self) -> impl Iterator<Item = &Knee> {
        self.knee.iter().chain(&self.group_knees)
    }

    /// The knee at step `i`, if one is there.
    pub fn knee_at(&self, i: usize) -> Option<&Knee> {
        self.knees().find(|k| k.index == i)
    }

    /// The groups of a matrix in order, each with its steps' indices; one unnamed group holding
    /// every step for a sweep of one parameter.
    pub fn groups(&self) -> Vec<(Option<&str>, Vec<usize>)> {
        groups(&self.steps)
    }

    /// A step's name: `8`, or `scale=10, clients=8` in a matrix.
    /// What the whole sweep covered, for a title: "clients 1, 2, 4, 8 (4 steps)".
    pub fn scope(&self) -> String {
        let values: Vec<String> = self.steps.iter().map(|x| self.step_name(x)).collect();
        let name = match &self.group_parameter {
            Some(_) => String::new(),
            None => format!("{} ", self.parameter),
        };
        format!(
            "{name}{} ({} step{})",
            values.join(", "),
            values.len(),
            if values.len() == 1 { "" } else { "s" }
        )
    }

    /// The heading over the last step's own figures, which a sweep's result carries as a
    /// run's (its summary, charts and checks): "the last step, clients=8".
    pub fn last_step(&self) -> String {
        match self.steps.last() {
            Some(x) => match &self.group_parameter {
                Some(_) => format!("the last step, {}", self.step_name(x)),
                None => format!("the last step, {}={}", self.parameter, x.value),
            },
            None => "the last step".into(),
        }
    }

    pub fn step_name(&self, x: &SweepStep) -> String {
        match (&self.group_parameter, &x.group) {
            (Some(gp), Some(g)) => format!("{gp}={g}, {}={}", self.parameter, x.value),
            _ => x.value.clone(),
        }
    }
}

/// `steps` by group, in order of first appearance (see [`SweepSection::groups`]).
fn groups(steps: &[SweepStep]) -> Vec<(Option<&str>, Vec<usize>)> {
    let mut out: Vec<(Option<&str>, Vec<usize>)> = Vec::new();
    for (i, x) in steps.iter().enumerate() {
        let g = x.group.as_deref();
        match out.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(i),
            None => out.push((g, vec![i])),
        }
    }
    out
}

/// Where throughput stops rising and latency climbs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Index of the knee's step in `steps`.
    pub index: usize,
    /// Its value, as in `steps`.
    pub value: String,
    /// Why, in words: the next step's gain and p99 rise.
    pub reason: String,
    /// In a matrix, the group (outer value) it is the knee of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// One step: the parameter's value and the step's figures after its warm-up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// The value as given (`8`, `500`, `64MB`).
    pub value: String,
    /// In a matrix, the outer parameter's value the step ran at (module notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Committed transactions per second after the warm-up.
    pub tps: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Committed transactions after the warm-up.
    pub transactions: u64,
    /// Failed transactions of the whole step, warm-up included (all kinds; module notes).
    pub failures: u64,
    /// `failures` by kind; absent from results written before it was recorded.
    #[serde(default)]
    pub failures_by_kind: crate::EndpointFailures,
    /// Seconds the figures cover (after the warm-up).
    pub measured_s: f64,
    /// Clients the step ran with.
    pub clients: u32,
    /// Clients that aborted (stopped for good) during the step; absent from results written
    /// before it was recorded.
    #[serde(default)]
    pub aborted_clients: u32,
    /// Why they aborted: each distinct reason with the clients it stopped, most first (at most
    /// [`ABORT_REASONS`]; `aborted_clients` counts them all). Absent when none aborted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aborts: Vec<AbortReason>,
    /// Checks of the step that failed, by name (the step's own commit count and workload checks).
    #[serde(default)]
    pub failed_checks: Vec<String>,
    /// The step's own series (`series`): what its counts, figures and counters cover, each
    /// absent from results written before steps kept them.
    #[serde(flatten)]
    pub own: StepSeries,
}

/// Distinct abort reasons kept per step.
pub const ABORT_REASONS: usize = 5;

/// One reason clients of a step aborted, and how many it stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortReason {
    /// The error, redacted as in [`crate::AbortedClient::reason`].
    pub reason: String,
    pub clients: u32,
}

impl SweepStep {
    /// The step's figures from its result, leaving out intervals that start before `warmup_s`.
    /// When the cut would leave nothing (a step shorter than its warm-up, or one interval), the
    /// whole step is used: a figure from all of it beats none.
    pub fn of(value: &str, r: &RunResult, warmup_s: f64) -> SweepStep {
        let mut cut = Interval::default();
        for i in (r.intervals.iter()).filter(|i| crate::warmup::after(i, warmup_s)) {
            cut.merge(i);
        }
        let t = if cut.total().committed() > 0 && cut.duration_s() > 0.0 {
            cut
        } else {
            r.total.clone()
        };
        let stats = t.total();
        let secs = t.duration_s();
        let h = &stats.latency;
        let ms = |us: u64| us as f64 / 1000.0;
        // Failures over the whole step (module notes).
        let whole = r.total.total();
        let mut failures_by_kind = crate::EndpointFailures::default();
        for kind in FailureKind::ALL {
            failures_by_kind.add(kind, whole.failures_of(kind));
        }
        let mut reasons: Vec<AbortReason> = Vec::new();
        for a in &r.connections.aborted {
            match reasons.iter_mut().find(|x| x.reason == a.reason) {
                Some(x) => x.clients += 1,
                None => reasons.push(AbortReason {
                    reason: a.reason.clone(),
                    clients: 1,
                }),
            }
        }
        // Most first; the first seen first among equals.
        reasons.sort_by_key(|x| std::cmp::Reverse(x.clients));
        reasons.truncate(ABORT_REASONS);
        SweepStep {
            value: value.into(),
            group: None,
            tps: if secs > 0.0 {
                stats.committed() as f64 / secs
            } else {
                0.0
            },
            mean_ms: h.mean_us() / 1000.0,
            p50_ms: ms(h.percentile_us(50.0)),
            p95_ms: ms(h.percentile_us(95.0)),
            p99_ms: ms(h.percentile_us(99.0)),
            max_ms: ms(h.max_us()),
            transactions: stats.committed(),
            failures: whole.failed(),
            failures_by_kind,
            measured_s: secs,
            clients: r.config.clients,
            aborted_clients: r.connections.aborted.len() as u32,
            aborts: reasons,
            failed_checks: (r.checks.iter())
                .filter(|c| c.status.untrusted())
                .map(|c| c.name.clone())
                .collect(),
            own: StepSeries::of(r),
        }
    }
}

impl SweepStep {
    /// Whether the step may place the knee: no client aborted and no check failed (module
    /// notes).
    pub fn sound(&self) -> bool {
        self.aborted_clients == 0 && self.failed_checks.is_empty()
    }

    /// What went wrong in the step, in words (`4 of 8 clients aborted`, `failed checks: commit
    /// count`); empty for a sound step.
    pub fn troubles(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.aborted_clients > 0 {
            v.push(format!(
                "{} of {} clients aborted",
                self.aborted_clients, self.clients
            ));
        }
        if !self.failed_checks.is_empty() {
            v.push(format!("failed checks: {}", self.failed_checks.join(", ")));
        }
        v
    }
}

/// Failures by kind in words: `serialization 0, deadlock 2, other 5`.
pub fn kinds_text(f: &crate::EndpointFailures) -> String {
    (FailureKind::ALL.iter())
        .map(|k| format!("{} {}", kind_name(*k), f.of(*k)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind_name(k: FailureKind) -> &'static str {
    match k {
        FailureKind::Serialization => "serialization",
        FailureKind::Deadlock => "deadlock",
        FailureKind::Other => "other",
    }
}

/// The parameter's relative growth from `a` to `b`: 1 when either is not a positive number.
fn growth(a: &str, b: &str) -> f64 {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) if x > 0.0 && y > x => y / x - 1.0,
        _ => 1.0,
    }
}

/// The knees of `steps` (module notes): the sweep's knee, or for a matrix (steps with a
/// `group`) none and each group's.
pub fn find_knees(steps: &[SweepStep]) -> (Option<Knee>, Vec<Knee>) {
    if steps.iter().all(|x| x.group.is_none()) {
        return (find_knee(steps), Vec::new());
    }
    let mut knees = Vec::new();
    for (g, idx) in groups(steps) {
        let of: Vec<SweepStep> = idx.iter().map(|&i| steps[i].clone()).collect();
        if let Some(mut k) = find_knee(&of) {
            k.index = idx[k.index];
            k.group = g.map(str::to_string);
            knees.push(k);
        }
    }
    (None, knees)
}

/// The knee of a series of steps (module notes): compared sound step to sound step, or `None`.
pub fn find_knee(steps: &[SweepStep]) -> Option<Knee> {
    let sound: Vec<usize> = (0..steps.len()).filter(|&i| steps[i].sound()).collect();
    sound.windows(2).find_map(|w| {
        let (k, next) = (w[0], w[1]);
        let (a, b) = (&steps[k], &steps[next]);
        if a.tps <= 0.0 || a.p99_ms <= 0.0 {
            return None;
        }
        let gain = b.tps / a.tps - 1.0;
        let rise = b.p99_ms / a.p99_ms - 1.0;
        let wanted = KNEE_GAIN * growth(&a.value, &b.value);
        let skipped: Vec<&str> = (steps[k + 1..next].iter())
            .map(|x| x.value.as_str())
            .collect();
        let skipped = if skipped.is_empty() {
            String::new()
        } else {
            format!(" ({} left out)", skipped.join(", "))
        };
        (gain < wanted && rise >= KNEE_P99_RISE).then(|| Knee {
            index: k,
            group: None,
            value: a.value.clone(),
            reason: format!(
                "from {} to {}{skipped}: tps {:+.0}% (scaling needs {:+.0}%), p99 {:+.0}%",
                a.value,
                b.value,
                gain * 100.0,
                wanted * 100.0,
                rise * 100.0
            ),
        })
    })
}

/// The sweep as a text table, every line ending in `\n`: a row per step, with the step's
/// failures by kind, aborted clients (and why) and failed checks under it when it has any.
pub fn render_text(s: &SweepSection) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sweep over {} ({} steps; tps and latency leave out the first {} s of each, failures \
         and aborts count the whole step):",
        swept(s),
        s.steps.len(),
        s.warmup_s
    );
    let head = match &s.group_parameter {
        Some(_) => "step",
        None => s.parameter.as_str(),
    };
    let w = (s.steps.iter())
        .map(|x| s.step_name(x).chars().count())
        .chain([head.chars().count()])
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        o,
        "  {:<w$}  {:>10}  {:>9}  {:>9}  {:>9}  {:>8}  {:>10}",
        head, "tps", "mean ms", "p95 ms", "p99 ms", "failures", "aborted"
    );
    for (i, x) in s.steps.iter().enumerate() {
        let mark = match s.knee_at(i) {
            Some(_) => "  <- knee",
            None => "",
        };
        let aborted = if x.aborted_clients == 0 {
            "0".to_string()
        } else {
            format!("{} of {}", x.aborted_clients, x.clients)
        };
        let _ = writeln!(
            o,
            "  {:<w$}  {:>10.1}  {:>9.3}  {:>9.3}  {:>9.3}  {:>8}  {:>10}{mark}",
            s.step_name(x),
            x.tps,
            x.mean_ms,
            x.p95_ms,
            x.p99_ms,
            x.failures,
            aborted
        );
        if x.failures > 0 {
            let _ = writeln!(
                o,
                "    failures by kind: {}",
                kinds_text(&x.failures_by_kind)
            );
        }
        for a in &x.aborts {
            let _ = writeln!(o, "    aborted: {} clients: {}", a.clients, a.reason);
        }
        if !x.failed_checks.is_empty() {
            let _ = writeln!(o, "    failed checks: {}", x.failed_checks.join(", "));
        }
        let figures = metrics_text(x);
        if !figures.is_empty() {
            let _ = writeln!(o, "    {figures}");
        }
    }
    let unsound: Vec<String> = (s.steps.iter())
        .filter(|x| !x.sound())
        .map(|x| s.step_name(x))
        .collect();
    if !unsound.is_empty() {
        let _ = writeln!(
            o,
            "  not considered for the knee (clients aborted or checks failed): {}",
            // A matrix's step names hold a comma themselves.
            unsound.join(match s.group_parameter {
                Some(_) => "; ",
                None => ", ",
            })
        );
    }
    for line in knee_lines(s) {
        let _ = writeln!(o, "  {line}");
    }
    o
}

/// What was swept: `clients`, or `scale × clients` for a matrix.
fn swept(s: &SweepSection) -> String {
    match &s.group_parameter {
        Some(g) => format!("{g} × {}", s.parameter),
        None => s.parameter.clone(),
    }
}

/// The knee in words, or a matrix's knee of each group (a line each).
pub fn knee_lines(s: &SweepSection) -> Vec<String> {
    const NONE: &str = "no knee: throughput did not stop rising while p99 climbed";
    let Some(gp) = &s.group_parameter else {
        return vec![match &s.knee {
            Some(k) => format!("knee at {}={} ({})", s.parameter, k.value, k.reason),
            None => NONE.into(),
        }];
    };
    (s.groups().into_iter())
        .map(|(g, _)| {
            let g = g.unwrap_or("");
            match s.group_knees.iter().find(|k| k.group.as_deref() == Some(g)) {
                Some(k) => format!(
                    "{gp}={g}: knee at {}={} ({})",
                    s.parameter, k.value, k.reason
                ),
                None => format!("{gp}={g}: {NONE}"),
            }
        })
        .collect()
}

/// Two sweeps step by step (`la` the baseline's label, `lb` the other's): each value either ran,
/// each run's tps and p99 and the change. Values only one of them ran show a dash for the other.
pub fn render_compare_text(a: &SweepSection, b: &SweepSection, la: &str, lb: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sweep over {} step by step ({lb} against {la}):",
        a.parameter
    );
    if a.parameter != b.parameter {
        let _ = writeln!(
            o,
            "  WARNING: {la} swept {} and {lb} swept {}",
            a.parameter, b.parameter
        );
    }
    let _ = writeln!(
        o,
        "  {:<10}  {:>10}  {:>10}  {:>8}  {:>9}  {:>9}  {:>8}",
        a.parameter,
        format!("tps {la}"),
        format!("tps {lb}"),
        "change",
        format!("p99 {la}"),
        format!("p99 {lb}"),
        "change"
    );
    for r in compare_rows(a, b) {
        let f = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
        let ch = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
            _ => "-".into(),
        };
        let _ = writeln!(
            o,
            "  {:<10}  {:>10}  {:>10}  {:>8}  {:>9}  {:>9}  {:>8}",
            r.value,
            f(r.tps.0, 1),
            f(r.tps.1, 1),
            ch(r.tps.0, r.tps.1),
            f(r.p99_ms.0, 3),
            f(r.p99_ms.1, 3),
            ch(r.p99_ms.0, r.p99_ms.1),
        );
    }
    let knee = |s: &SweepSection| {
        let k: Vec<String> = (s.knees())
            .map(|k| match (&s.group_parameter, &k.group) {
                (Some(gp), Some(g)) => format!("{} at {gp}={g}", k.value),
                _ => k.value.clone(),
            })
            .collect();
        if k.is_empty() {
            "none".into()
        } else {
            k.join(", ")
        }
    };
    let _ = writeln!(o, "  knee: {la} {}, {lb} {}", knee(a), knee(b));
    o
}

/// The comparison page's sweep section: throughput and p99 of every run's sweep against the
/// parameter (overlaid, values in the baseline's order), and the step-by-step table of each run
/// against the baseline.
pub fn html_compare(o: &mut String, sweeps: &[(&str, &SweepSection)]) {
    let Some((la, base)) = sweeps.first() else {
        return;
    };
    let _ = write!(
        o,
        "<section id=\"sweep\"><h2>Sweep over {} step by step</h2>",
        esc(&base.parameter)
    );
    // One x position per value, in the order the runs give them.
    let mut values: Vec<String> = Vec::new();
    for (_, s) in sweeps {
        for x in &s.steps {
            if !values.contains(&s.step_name(x)) {
                values.push(s.step_name(x));
            }
        }
    }
    let colors = ["#3056d3", "#d62828", "#2a9d8f", "#e9c46a", "#6a4c93"];
    for (what, unit, pick) in [("throughput", "tps", 0usize), ("p99 latency", "ms", 1)] {
        let mut c = Chart::new(
            &format!("chart-cmp-sweep-{}", ["tps", "p99"][pick]),
            &format!("{what} against {}", base.parameter),
            &base.parameter,
            unit,
            Kind::Lines,
        );
        for (i, (label, s)) in sweeps.iter().enumerate() {
            let mut points: Vec<(f64, f64)> = (s.steps.iter())
                .filter_map(|x| {
                    let at = values.iter().position(|v| *v == s.step_name(x))?;
                    Some((at as f64, [x.tps, x.p99_ms][pick]))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            c.series.push(Series {
                name: (*label).into(),
                color: colors[i % colors.len()].into(),
                points,
                dashed: i > 0,
            });
        }
        c.x_ticks = Some(
            (values.iter().enumerate())
                .map(|(i, v)| (i as f64, v.clone()))
                .collect(),
        );
        if values.len() == 1 {
            c.x_range = Some((-0.5, 0.5));
        }
        o.push_str(&c.render());
    }
    for (lb, s) in &sweeps[1..] {
        let _ = write!(
            o,
            "<table><thead><tr><th>{p}</th><th>tps {a}</th><th>tps {b}</th><th>change</th>\
             <th>p99 ms {a}</th><th>p99 ms {b}</th><th>change</th></tr></thead><tbody>",
            p = esc(&base.parameter),
            a = esc(la),
            b = esc(lb)
        );
        for r in compare_rows(base, s) {
            let f = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
            let ch = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
                _ => "-".into(),
            };
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td></tr>",
                esc(&r.value),
                f(r.tps.0, 1),
                f(r.tps.1, 1),
                ch(r.tps.0, r.tps.1),
                f(r.p99_ms.0, 3),
                f(r.p99_ms.1, 3),
                ch(r.p99_ms.0, r.p99_ms.1)
            );
        }
        o.push_str("</tbody></table>");
    }
    o.push_str("</section>");
}

/// One value of a step-by-step comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    pub value: String,
    pub tps: (Option<f64>, Option<f64>),
    pub p99_ms: (Option<f64>, Option<f64>),
}

/// The values of both sweeps in A's order, then those only B ran.
pub fn compare_rows(a: &SweepSection, b: &SweepSection) -> Vec<CompareRow> {
    // A matrix's steps by their whole name (`scale=10, clients=8`): a value recurs per group.
    let find = |s: &SweepSection, v: &str| s.steps.iter().find(|x| s.step_name(x) == v).cloned();
    let mut values: Vec<String> = a.steps.iter().map(|x| a.step_name(x)).collect();
    for x in &b.steps {
        let v = b.step_name(x);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    values
        .into_iter()
        .map(|v| {
            let (x, y) = (find(a, &v), find(b, &v));
            CompareRow {
                tps: (x.as_ref().map(|s| s.tps), y.as_ref().map(|s| s.tps)),
                p99_ms: (x.as_ref().map(|s| s.p99_ms), y.as_ref().map(|s| s.p99_ms)),
                value: v,
            }
        })
        .collect()
}

/// Charts against the parameter, the knee marked (`series`: throughput, latency percentiles,
/// the family's figures, key server counters). The x axis places the steps evenly (a doubling
/// sweep reads as a log scale), labelled with their values.
pub fn charts(s: &SweepSection, id: &str) -> String {
    series::charts(s, id)
}

/// The HTML section of a result with a sweep: the charts and the table.
pub fn html_section(o: &mut String, s: &SweepSection) {
    let _ = write!(
        o,
        "<section id=\"sweep\"><h2>Sweep over {}</h2><p>{} steps, the first {} s of each left \
         out. {}</p>",
        esc(&swept(s)),
        s.steps.len(),
        s.warmup_s,
        match (&s.group_parameter, &s.knee) {
            (None, Some(k)) => format!("Knee at <b>{}</b>: {}.", esc(&k.value), esc(&k.reason)),
            (None, None) => "No knee: throughput did not stop rising while p99 climbed.".into(),
            (Some(_), _) => esc(&knee_lines(s).join("; ")),
        }
    );
    o.push_str(&charts(s, "chart-sweep"));
    let _ = write!(
        o,
        "<table><thead><tr>{}<th>{}</th><th>tps</th><th>mean ms</th><th>p95 ms</th>\
         <th>p99 ms</th><th>failures</th><th class=\"l\">failures by kind</th>\
         <th>aborted clients</th><th class=\"l\">why they aborted</th>\
         <th class=\"l\">failed checks</th></tr></thead><tbody>",
        group_th(s),
        esc(&s.parameter)
    );
    for (i, x) in s.steps.iter().enumerate() {
        let knee = s.knee_at(i).is_some();
        let class = match (knee, x.sound()) {
            (true, _) => " class=\"knee\"",
            (false, false) => " class=\"unsound\"",
            (false, true) => "",
        };
        let kinds = if x.failures > 0 {
            esc(&kinds_text(&x.failures_by_kind))
        } else {
            String::new()
        };
        let why: Vec<String> = (x.aborts.iter())
            .map(|a| format!("{}: {}", a.clients, esc(&a.reason)))
            .collect();
        let _ = write!(
            o,
            "<tr{class}>{}<td>{}{}</td><td>{:.1}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td>\
             <td>{}</td><td class=\"l\">{kinds}</td><td>{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td></tr>",
            group_td(x),
            esc(&x.value),
            if knee { " (knee)" } else { "" },
            x.tps,
            x.mean_ms,
            x.p95_ms,
            x.p99_ms,
            x.failures,
            if x.aborted_clients == 0 {
                "0".to_string()
            } else {
                format!("{} of {}", x.aborted_clients, x.clients)
            },
            why.join("<br>"),
            esc(&x.failed_checks.join(", "))
        );
    }
    o.push_str("</tbody></table>");
    series::html_table(o, s);
    let unsound: Vec<String> = (s.steps.iter())
        .filter(|x| !x.sound())
        .map(|x| {
            let name = match &s.group_parameter {
                Some(_) => s.step_name(x),
                None => format!("{}={}", s.parameter, x.value),
            };
            format!("{name} ({})", x.troubles().join("; "))
        })
        .collect();
    if !unsound.is_empty() {
        let _ = write!(
            o,
            "<p class=\"muted\">Not considered for the knee: {}.</p>",
            esc(&unsound.join(", "))
        );
    }
    o.push_str("</section>");
}

/// A matrix's group column head, empty otherwise.
fn group_th(s: &SweepSection) -> String {
    (s.group_parameter.as_ref()).map_or(String::new(), |g| format!("<th>{}</th>", esc(g)))
}

/// A step's group cell in a matrix, empty otherwise.
fn group_td(x: &SweepStep) -> String {
    (x.group.as_ref()).map_or(String::new(), |g| format!("<td>{}</td>", esc(g)))
}

#[cfg(test)]
mod tests;
