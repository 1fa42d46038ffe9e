//! The metrics compared, as data: for each, how to read its whole-run value and its
//! per-interval samples from a run, which way is better, the statistic the bootstrap estimates
//! and the smallest absolute change that counts. Client metrics come from the engine's
//! intervals; server metrics (commits, WAL, hit ratio, active sessions, top wait events) from
//! the observer's samples, and only when the baseline and another run were observed. Each run's
//! server figures are read from its own server's counters ([`Counters`]): PostgreSQL's
//! `xact_commit`, WAL bytes and shared-buffer hits, or MySQL's `Com_commit`, redo log bytes and
//! InnoDB buffer pool hits; the rows are named for the baseline's server.

use std::collections::BTreeMap;

use measure::ServerMetrics;

use super::stats::Statistic;
use super::{usable_intervals, Better, Group, Input, Options, Words, MIN_AAS};
use crate::model::RunResult;

/// Reads a whole-run value from a run.
type WholeFn<'a> = Box<dyn Fn(&RunResult) -> Option<f64> + 'a>;
/// Reads per-interval samples from a run (`None`: not measured in it).
type SamplesFn<'a> = Box<dyn Fn(&RunResult) -> Option<Vec<f64>> + 'a>;

/// A metric: how to read the whole-run value and the per-interval samples from a run.
pub(super) struct Metric<'a> {
    pub(super) name: String,
    pub(super) unit: &'a str,
    pub(super) group: Group,
    pub(super) better: Better,
    pub(super) words: Words,
    pub(super) statistic: Statistic,
    /// Changes smaller than this in absolute terms never count (e.g. 0.05 active sessions).
    pub(super) min_abs: f64,
    pub(super) whole: WholeFn<'a>,
    pub(super) samples: SamplesFn<'a>,
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

fn latency_metric<'a>(
    name: &str,
    warmup_s: f64,
    f: impl Fn(&measure::Histogram) -> f64 + Copy + 'a,
) -> Metric<'a> {
    Metric {
        name: name.to_string(),
        unit: "ms",
        group: Group::Client,
        better: Better::Lower,
        words: Words::Level,
        statistic: Statistic::Median,
        min_abs: 0.0,
        whole: Box::new(move |r| {
            let t = r.total.total();
            (t.committed() > 0).then(|| f(&t.latency))
        }),
        samples: Box::new(move |r| {
            Some(
                usable_intervals(r, warmup_s)
                    .iter()
                    .map(|i| i.total())
                    .filter(|t| t.committed() > 0)
                    .map(|t| f(&t.latency))
                    .collect(),
            )
        }),
    }
}

/// Per-second rate of counter `key` between consecutive counter samples after the ramp-up and
/// inside the window, times `scale`.
fn counter_rates(m: &ServerMetrics, key: &str, scale: f64, warmup_s: f64) -> Vec<f64> {
    let half = (m.counter_interval_ms / 2) as i64;
    let from = (warmup_s * 1000.0) as i64 - half;
    m.counters
        .windows(2)
        .filter(|w| w[0].t_ms >= from && w[1].t_ms <= m.window_end_ms + half)
        .filter_map(|w| {
            let a = w[0].values.get(key)?;
            let b = w[1].values.get(key)?;
            let dt = (w[1].t_ms - w[0].t_ms) as f64 / 1000.0;
            (dt > 0.0).then(|| (b - a).max(0.0) / dt * scale)
        })
        .collect()
}

/// The counters a server figure is read from, by server.
struct Counters {
    commits: &'static str,
    log_bytes: &'static str,
    /// Reads that found the page in memory (PostgreSQL), or all logical reads (InnoDB's read
    /// requests, which include those that went to disk).
    hits: &'static str,
    reads: &'static str,
    hits_include_reads: bool,
}

const PG: Counters = Counters {
    commits: "database.xact_commit",
    log_bytes: "wal.wal_bytes",
    hits: "database.blks_hit",
    reads: "database.blks_read",
    hits_include_reads: false,
};

const MYSQL: Counters = Counters {
    commits: "mysql.Com_commit",
    log_bytes: "mysql.Innodb_os_log_written",
    hits: "mysql.Innodb_buffer_pool_read_requests",
    reads: "mysql.Innodb_buffer_pool_reads",
    hits_include_reads: true,
};

fn counters_of(m: &ServerMetrics) -> &'static Counters {
    if m.is_mysql() {
        &MYSQL
    } else {
        &PG
    }
}

/// Hit ratio from (hits or logical reads, reads from disk).
fn hit_ratio(c: &Counters, hits: f64, reads: f64) -> Option<f64> {
    let hits = if c.hits_include_reads {
        (hits - reads).max(0.0)
    } else {
        hits
    };
    crate::observed::hit_pct(hits, reads)
}

fn hit_ratios(m: &ServerMetrics, warmup_s: f64) -> Vec<f64> {
    let c = counters_of(m);
    let hits = counter_rates(m, c.hits, 1.0, warmup_s);
    let reads = counter_rates(m, c.reads, 1.0, warmup_s);
    hits.iter()
        .zip(&reads)
        .filter_map(|(h, r)| hit_ratio(c, *h, *r))
        .collect()
}

fn window_s(m: &ServerMetrics) -> f64 {
    (m.window_end_ms - m.window_start_ms).max(0) as f64 / 1000.0
}

fn activity_after_warmup(
    m: &ServerMetrics,
    warmup_s: f64,
) -> impl Iterator<Item = &measure::server::ActivitySample> {
    let from = (warmup_s * 1000.0) as i64;
    m.activity
        .iter()
        .filter(move |s| s.t_ms >= from && s.t_ms <= m.window_end_ms)
}

/// Wait events worth a row: the top 5 of each observed run, most load first, at most 8.
fn wait_events(runs: &[Input<'_>]) -> Vec<String> {
    let mut best: BTreeMap<String, f64> = BTreeMap::new();
    for x in runs {
        if let Some(m) = &x.run.server_metrics {
            for w in m.waits.iter().take(5) {
                let e = best.entry(w.event.clone()).or_default();
                *e = e.max(w.aas);
            }
        }
    }
    let mut v: Vec<(String, f64)> = best.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.into_iter().take(8).map(|(e, _)| e).collect()
}

pub(super) fn metrics<'a>(runs: &[Input<'_>], o: &Options) -> Vec<Metric<'a>> {
    let w = o.warmup_s;
    let mut v = vec![Metric {
        name: "throughput".into(),
        unit: "tps",
        group: Group::Client,
        better: Better::Higher,
        words: Words::Speed,
        statistic: Statistic::Mean,
        min_abs: 0.0,
        whole: Box::new(|r| Some(r.tps())),
        samples: Box::new(move |r| {
            Some(
                usable_intervals(r, w)
                    .iter()
                    .map(|i| i.total().committed() as f64 / i.duration_s())
                    .collect(),
            )
        }),
    }];
    v.push(latency_metric("latency average", w, |h| ms(h.mean_us())));
    for (name, p) in [
        ("latency p50", 50.0),
        ("latency p90", 90.0),
        ("latency p99", 99.0),
        ("latency p99.9", 99.9),
    ] {
        v.push(latency_metric(name, w, move |h| {
            ms(h.percentile_us(p) as f64)
        }));
    }
    v.push(latency_metric("latency max", w, |h| ms(h.max_us() as f64)));
    type Count = fn(&measure::TxnStats) -> u64;
    for (name, count) in [
        ("failed", (|t: &measure::TxnStats| t.failed()) as Count),
        ("retried", |t: &measure::TxnStats| t.retried),
    ] {
        let share = move |t: &measure::TxnStats| {
            let n = t.scheduled();
            (n > 0).then(|| 100.0 * count(t) as f64 / n as f64)
        };
        v.push(Metric {
            name: name.into(),
            unit: "% of txns",
            group: Group::Client,
            better: Better::Lower,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: 0.01,
            whole: Box::new(move |r| share(&r.total.total()).or(Some(0.0))),
            samples: Box::new(move |r| {
                Some(
                    usable_intervals(r, w)
                        .iter()
                        .filter_map(|i| share(&i.total()))
                        .collect(),
                )
            }),
        });
    }
    // Server metrics: rows appear when at least the baseline and one other run were observed.
    let observed = runs
        .iter()
        .filter(|x| x.run.server_metrics.is_some())
        .count();
    if observed < 2 || runs[0].run.server_metrics.is_none() {
        return v;
    }
    type Key = fn(&Counters) -> &'static str;
    let log_name = match runs[0]
        .run
        .server_metrics
        .as_ref()
        .is_some_and(|m| m.is_mysql())
    {
        true => "redo log written",
        false => "WAL written",
    };
    for (name, unit, key, scale, better) in [
        (
            "server commits",
            "/s",
            (|c: &Counters| c.commits) as Key,
            1.0,
            Better::Higher,
        ),
        (
            log_name,
            "MiB/s",
            |c: &Counters| c.log_bytes,
            1.0 / (1024.0 * 1024.0),
            Better::Neither,
        ),
    ] {
        v.push(Metric {
            name: name.into(),
            unit,
            group: Group::Server,
            better,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: 0.0,
            whole: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                let s = window_s(m);
                (s > 0.0).then_some(())?;
                Some(m.delta(key(counters_of(m)))? / s * scale)
            }),
            samples: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                let key = key(counters_of(m));
                m.delta(key)?;
                Some(counter_rates(m, key, scale, w))
            }),
        });
    }
    v.push(Metric {
        name: "buffer hit ratio".into(),
        unit: "%",
        group: Group::Server,
        better: Better::Higher,
        words: Words::Level,
        statistic: Statistic::Median,
        min_abs: 0.0,
        whole: Box::new(|r| {
            let m = r.server_metrics.as_ref()?;
            let c = counters_of(m);
            hit_ratio(c, m.delta(c.hits)?, m.delta(c.reads)?)
        }),
        samples: Box::new(move |r| Some(hit_ratios(r.server_metrics.as_ref()?, w))),
    });
    v.push(Metric {
        name: "active sessions".into(),
        unit: "AAS",
        group: Group::Server,
        better: Better::Neither,
        words: Words::Level,
        statistic: Statistic::Mean,
        min_abs: MIN_AAS,
        whole: Box::new(|r| Some(r.server_metrics.as_ref()?.average_active())),
        samples: Box::new(move |r| {
            Some(
                activity_after_warmup(r.server_metrics.as_ref()?, w)
                    .map(|s| f64::from(s.active))
                    .collect(),
            )
        }),
    });
    for event in wait_events(runs) {
        let (e1, e2) = (event.clone(), event.clone());
        v.push(Metric {
            name: event,
            unit: "AAS",
            group: Group::Waits,
            better: Better::Lower,
            words: Words::Level,
            statistic: Statistic::Mean,
            min_abs: MIN_AAS,
            whole: Box::new(move |r| {
                let m = r.server_metrics.as_ref()?;
                Some(
                    m.waits
                        .iter()
                        .find(|x| x.event == e1)
                        .map_or(0.0, |x| x.aas),
                )
            }),
            samples: Box::new(move |r| {
                Some(
                    activity_after_warmup(r.server_metrics.as_ref()?, w)
                        .map(|s| f64::from(s.waits.get(&e2).copied().unwrap_or(0)))
                        .collect(),
                )
            }),
        });
    }
    v
}
