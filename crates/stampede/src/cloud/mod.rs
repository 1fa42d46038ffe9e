//! `--cloudwatch`: the target's RDS/Aurora metrics from CloudWatch for the run's exact window,
//! added to the result after it was saved (issue 32, item 5).
//!
//! Owns the options (`--cloudwatch`, `--cloudwatch-instance`, `--cloudwatch-dimension`), what
//! to ask CloudWatch for (the dimension sets found from the endpoints' host names, `endpoint`,
//! or given; the metrics of each kind of resource; the period the window's age allows) and the
//! section it fills (`report::cloudwatch`). Only `sdk` sees the AWS SDK, and only when the
//! binary is built with the `cloudwatch` feature (the default): the rest of stampede never
//! names it, and without the feature `--cloudwatch` is a usage error at plan time.
//!
//! Must not touch: the run's numbers, its checks, its exit code. The fetch is a step after the
//! result was saved (STYLE.md habit 14) and can only add: no credentials or region, an endpoint
//! that names no instance, a metric with no data, a CloudWatch error or its deadline
//! (`--check-timeout`) each become a note in the section, never a failed run.
//!
//! The period: the finest CloudWatch keeps for the window's age (`GetMetricData`'s `Period`,
//! CloudWatch API Reference, MetricStat): 1 s when the window began less than 3 hours ago, then
//! 60 s (15 days), 300 s (63 days), 3600 s. RDS publishes its metrics once a minute, and a
//! high-resolution metric once a second; asked at 1 s, each comes at its own resolution, so the
//! window is widened to whole minutes and each point is kept when the time it covers (a minute,
//! or a second, read from the points' timestamps) overlaps the run's window.

mod endpoint;
#[cfg(feature = "cloudwatch")]
mod sdk;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use clap::Args;
use report::cloudwatch::{CloudWatchMetric, CloudWatchPoint, CloudWatchSection};

use crate::console::Failure;
use endpoint::Resource;

const CLOUD: &str = "Cloud metrics";

/// The namespace RDS and Aurora publish in.
pub(crate) const NAMESPACE: &str = "AWS/RDS";

/// `stampede run`'s cloud options.
#[derive(Args, Debug, Default, Clone)]
pub struct CloudArgs {
    /// After the run, add the target's RDS/Aurora metrics for the run's window from CloudWatch
    /// (CPU, DBLoad, IOPS, I/O latency, queue depth, memory, ACUs) to the result and report.
    /// AWS's standard credentials and region (AWS_PROFILE, AWS_ACCESS_KEY_ID, AWS_REGION,
    /// AWS_ENDPOINT_URL, ...); the instance, cluster or shard group from the host's RDS name.
    #[arg(long = "cloudwatch", help_heading = CLOUD)]
    pub cloudwatch: bool,
    /// Read the metrics of this RDS instance instead of the one the host name names (a host that
    /// is no RDS name: an address, a DNS alias, a tunnel). Repeatable.
    #[arg(
        long = "cloudwatch-instance",
        value_name = "ID",
        requires = "cloudwatch",
        help_heading = CLOUD
    )]
    pub instances: Vec<String>,
    /// Read the metrics of this dimension instead: DBClusterIdentifier=ID,
    /// DBShardGroupIdentifier=ID, DBInstanceIdentifier=ID. Repeatable.
    #[arg(
        long = "cloudwatch-dimension",
        value_name = "NAME=VALUE",
        requires = "cloudwatch",
        help_heading = CLOUD
    )]
    pub dimensions: Vec<String>,
}

/// `--cloudwatch` as planned: the dimension sets given instead of the host's (empty: found from
/// the host names after the run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request {
    pub given: Vec<Query>,
}

/// One dimension set to ask about, with the metrics that exist for it and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub dimensions: Vec<(String, String)>,
    pub metrics: &'static [Metric],
    /// The region the host name names, if it does.
    pub region: Option<String>,
    pub from: String,
}

/// A metric and the unit RDS documents for it (GetMetricData's answer carries no unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
}

const fn m(name: &'static str, unit: &'static str) -> Metric {
    Metric { name, unit }
}

/// An instance's and a cluster's metrics (Amazon RDS User Guide, "Amazon CloudWatch metrics
/// for Amazon RDS"; Aurora User Guide, "Amazon CloudWatch metrics for Amazon Aurora"): a
/// serverless instance has the last two, a provisioned one not.
pub(crate) const DB_METRICS: &[Metric] = &[
    m("CPUUtilization", "Percent"),
    m("DBLoad", "Sessions"),
    m("ReadIOPS", "Count/Second"),
    m("WriteIOPS", "Count/Second"),
    m("ReadLatency", "Seconds"),
    m("WriteLatency", "Seconds"),
    m("DiskQueueDepth", "Count"),
    m("FreeableMemory", "Bytes"),
    m("ServerlessDatabaseCapacity", "ACUs"),
    m("ACUUtilization", "Percent"),
];

/// An Aurora Limitless shard group's (Aurora User Guide, "Monitoring Aurora PostgreSQL
/// Limitless Database with Amazon CloudWatch").
pub(crate) const SHARD_GROUP_METRICS: &[Metric] = &[
    m("DBShardGroupCapacity", "ACUs"),
    m("DBShardGroupACUUtilization", "Percent"),
];

fn metrics_for(dimension: &str) -> &'static [Metric] {
    match dimension {
        "DBShardGroupIdentifier" => SHARD_GROUP_METRICS,
        _ => DB_METRICS,
    }
}

/// `--cloudwatch` and its options read, before any I/O.
pub(crate) fn plan(a: &CloudArgs) -> Result<Option<Request>> {
    if !a.cloudwatch {
        return Ok(None);
    }
    if !cfg!(feature = "cloudwatch") {
        return Err(Failure::usage(
            "--cloudwatch: this stampede was built without CloudWatch support",
            "build it with `cargo build --release --features cloudwatch` (a default feature)",
        ));
    }
    let mut given: Vec<Query> = (a.instances.iter())
        .map(|id| Query {
            dimensions: vec![("DBInstanceIdentifier".into(), id.clone())],
            metrics: DB_METRICS,
            region: None,
            from: "--cloudwatch-instance".into(),
        })
        .collect();
    for d in &a.dimensions {
        let Some((name, value)) = d
            .split_once('=')
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        else {
            return Err(Failure::usage(
                format!("--cloudwatch-dimension {d}: not NAME=VALUE"),
                "e.g. --cloudwatch-dimension DBClusterIdentifier=my-cluster",
            ));
        };
        given.push(Query {
            dimensions: vec![(name.into(), value.into())],
            metrics: metrics_for(name),
            region: None,
            from: "--cloudwatch-dimension".into(),
        });
    }
    Ok(Some(Request { given }))
}

/// What to ask for: the queries given, else those the host names name; and a note for each
/// host that names none.
fn queries(req: &Request, hosts: &[String]) -> (Vec<Query>, Vec<String>) {
    if !req.given.is_empty() {
        return (req.given.clone(), Vec::new());
    }
    let mut out: Vec<Query> = Vec::new();
    let mut notes = Vec::new();
    for h in hosts {
        let q = match endpoint::parse(h) {
            Some(Resource::Instance { id, region }) => Query {
                dimensions: vec![("DBInstanceIdentifier".into(), id)],
                metrics: DB_METRICS,
                region: Some(region),
                from: format!("the host name {h}"),
            },
            // CloudWatch's cluster dimensions (Aurora User Guide, "Amazon CloudWatch
            // dimensions for Aurora"): the cluster as a whole, or its readers by Role.
            Some(Resource::Cluster {
                id,
                region,
                readers,
            }) => Query {
                dimensions: match readers {
                    false => vec![("DBClusterIdentifier".into(), id)],
                    true => vec![
                        ("DBClusterIdentifier".into(), id),
                        ("Role".into(), "READER".into()),
                    ],
                },
                metrics: DB_METRICS,
                region: Some(region),
                from: format!("the host name {h}"),
            },
            Some(Resource::ShardGroup { id, region }) => Query {
                dimensions: vec![("DBShardGroupIdentifier".into(), id)],
                metrics: SHARD_GROUP_METRICS,
                region: Some(region),
                from: format!("the host name {h}"),
            },
            Some(Resource::Unresolvable { what, name }) => {
                notes.push(format!(
                    "{h} is {what} ({name}), which names no instance or cluster: give \
                     --cloudwatch-instance ID or --cloudwatch-dimension NAME=VALUE"
                ));
                continue;
            }
            None => {
                notes.push(format!(
                    "{h} is no RDS endpoint name: give --cloudwatch-instance ID or \
                     --cloudwatch-dimension NAME=VALUE"
                ));
                continue;
            }
        };
        if !out.iter().any(|o| o.dimensions == q.dimensions) {
            out.push(q);
        }
    }
    (out, notes)
}

/// The run's window, as CloudWatch is asked about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub start: SystemTime,
    pub end: SystemTime,
    /// `GetMetricData`'s Period.
    pub period_s: u32,
    /// What is asked: the window widened to whole minutes (or periods), epoch seconds.
    pub ask_from_s: i64,
    pub ask_to_s: i64,
}

impl Window {
    /// The window of a run that started at `start` and ran `measured_s`, asked at `now`.
    pub fn new(start: SystemTime, measured_s: f64, now: SystemTime) -> Window {
        let end = start + Duration::from_secs_f64(measured_s.max(0.0));
        let age = now.duration_since(start).unwrap_or_default().as_secs();
        const HOUR: u64 = 3600;
        let period_s: u32 = match age {
            a if a < 3 * HOUR => 1,
            a if a < 15 * 24 * HOUR => 60,
            a if a < 63 * 24 * HOUR => 300,
            _ => 3600,
        };
        let grain = i64::from(period_s.max(60));
        let epoch = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let (s, e) = (epoch(start), epoch(end));
        let ask_from_s = s.as_secs() as i64 / grain * grain;
        let end_s = e.as_secs() as i64 + i64::from(e.subsec_nanos() > 0);
        let ask_to_s = ((end_s + grain - 1) / grain * grain).max(ask_from_s + grain);
        Window {
            start,
            end,
            period_s,
            ask_from_s,
            ask_to_s,
        }
    }

    fn secs(t: SystemTime) -> f64 {
        t.duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64()
    }

    /// The points of one series (epoch seconds, value), oldest first, that cover part of the
    /// window; each covers its resolution: a minute when every timestamp is a whole minute
    /// (a standard metric asked at 1 s), else the period.
    pub fn keep(&self, points: &[(i64, f64)]) -> Vec<CloudWatchPoint> {
        let minutes = self.period_s < 60 && points.iter().all(|(t, _)| t % 60 == 0);
        let covers = if minutes {
            60
        } else {
            i64::from(self.period_s)
        };
        let (start, end) = (Window::secs(self.start), Window::secs(self.end));
        let mut kept: Vec<CloudWatchPoint> = (points.iter())
            .filter(|(t, _)| ((t + covers) as f64) > start && (*t as f64) < end)
            .map(|&(t, value)| CloudWatchPoint {
                timestamp: report::format_rfc3339_utc(UNIX_EPOCH + Duration::from_secs(t as u64)),
                t_s: t as f64 - start,
                value,
            })
            .collect();
        kept.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        kept
    }
}

/// What one query's metric gave: its points, or why none.
pub(crate) struct Fetched {
    pub query: usize,
    pub metric: Metric,
    pub points: Vec<(i64, f64)>,
}

/// After the run: the section for the run that started at `started_at` (the result's RFC 3339
/// `started_at`) and ran `measured_s`, on the target's `hosts`. Never fails: what could not be
/// had is a note.
pub(crate) fn fetch(
    rt: &tokio::runtime::Runtime,
    req: &Request,
    hosts: &[String],
    started_at: &str,
    measured_s: f64,
    deadline: Duration,
) -> CloudWatchSection {
    let start = parse_rfc3339(started_at).unwrap_or_else(SystemTime::now);
    let window = Window::new(start, measured_s, SystemTime::now());
    let (queries, mut notes) = queries(req, hosts);
    let mut section = CloudWatchSection {
        namespace: NAMESPACE.into(),
        region: None,
        window_start: report::format_rfc3339_utc(window.start),
        window_end: report::format_rfc3339_utc(window.end),
        period_s: window.period_s,
        resources: (queries.iter())
            .map(|q| format!("{} ({})", dimension_label(&q.dimensions), q.from))
            .collect(),
        metrics: Vec::new(),
        notes: Vec::new(),
    };
    if queries.is_empty() {
        section.notes = notes;
        return section;
    }
    let region = queries.iter().find_map(|q| q.region.clone());
    #[cfg(feature = "cloudwatch")]
    let got = rt.block_on(async {
        // Given up at the checks' deadline, or on Ctrl-C (as `families::after` does).
        let interrupts = crate::interrupt::count();
        let interrupted = async {
            while crate::interrupt::count() == interrupts {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::select! {
            r = sdk::fetch(&queries, &window, region) => r,
            _ = tokio::time::sleep(deadline) => Err(anyhow::anyhow!(
                "no answer from CloudWatch within {} s (--check-timeout)",
                deadline.as_secs()
            )),
            _ = interrupted => Err(anyhow::anyhow!("interrupted (Ctrl-C or SIGTERM)")),
        }
    });
    #[cfg(not(feature = "cloudwatch"))]
    let got: Result<(Option<String>, Vec<Fetched>)> = {
        let _ = (rt, deadline, region);
        Err(anyhow::anyhow!("built without the cloudwatch feature"))
    };
    match got {
        Ok((region, fetched)) => {
            section.region = region;
            let mut empty: Vec<&str> = Vec::new();
            for f in fetched {
                let q = &queries[f.query];
                let points = window.keep(&f.points);
                if points.is_empty() {
                    if !empty.contains(&f.metric.name) {
                        empty.push(f.metric.name);
                    }
                    continue;
                }
                section.metrics.push(CloudWatchMetric {
                    name: f.metric.name.into(),
                    dimensions: q.dimensions.iter().cloned().collect::<BTreeMap<_, _>>(),
                    statistic: "Average".into(),
                    unit: f.metric.unit.into(),
                    points,
                });
            }
            if !empty.is_empty() {
                notes.push(format!(
                    "no data in the window for {} (ACU metrics exist only for serverless \
                     instances; CloudWatch has RDS's minute a minute or two after it ends)",
                    empty.join(", ")
                ));
            }
        }
        Err(e) => notes.push(format!(
            "not fetched: {}",
            sut::conninfo::redact(&format!("{e:#}"))
        )),
    }
    section.notes = notes;
    section
}

fn dimension_label(d: &[(String, String)]) -> String {
    let parts: Vec<String> = d.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(",")
}

/// `2024-05-01T12:00:00.123Z`, as `report::format_rfc3339_utc` writes it.
fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let (date, time) = s.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>());
    let (y, mo, da) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.splitn(3, ':').map(|x| x.parse::<u64>());
    let (h, mi, se) = (t.next()?.ok()?, t.next()?.ok()?, t.next()?.ok()?);
    // Days from civil (Howard Hinnant's algorithm, as `format_rfc3339_utc` inverts it).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    let nanos = format!("{frac:0<9}").get(..9)?.parse::<u32>().ok()?;
    Some(UNIX_EPOCH + Duration::new(days * 86_400 + h * 3600 + mi * 60 + se, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_s_start_reads_back() {
        for ms in [0u64, 1_700_000_000_123, 951_782_400_999, 4_102_444_799_500] {
            let t = UNIX_EPOCH + Duration::from_millis(ms);
            let s = report::format_rfc3339_utc(t);
            assert_eq!(parse_rfc3339(&s), Some(t), "{s}");
        }
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn the_period_is_the_finest_kept_for_the_window_s_age() {
        let start = UNIX_EPOCH + Duration::from_secs(1_700_000_010);
        let at = |h: u64| start + Duration::from_secs(h * 3600);
        assert_eq!(Window::new(start, 3.0, at(0)).period_s, 1);
        assert_eq!(Window::new(start, 3.0, at(4)).period_s, 60);
        assert_eq!(Window::new(start, 3.0, at(16 * 24)).period_s, 300);
        assert_eq!(Window::new(start, 3.0, at(64 * 24)).period_s, 3600);
        // Asked in whole minutes around the window.
        let w = Window::new(start, 3.0, at(0));
        assert_eq!((w.ask_from_s % 60, w.ask_to_s % 60), (0, 0));
        assert!(w.ask_from_s <= 1_700_000_010 && w.ask_to_s >= 1_700_000_013);
    }

    #[test]
    fn points_are_kept_when_what_they_cover_overlaps_the_window() {
        // A window from x.5 s to x+3.5 s.
        let s0 = 1_700_000_010i64;
        let start = UNIX_EPOCH + Duration::from_millis(s0 as u64 * 1000 + 500);
        let w = Window::new(start, 3.0, start);
        let secs: Vec<(i64, f64)> = (-3..7).map(|k| (s0 + k, k as f64)).collect();
        let kept: Vec<f64> = w.keep(&secs).iter().map(|p| p.value).collect();
        // The seconds from s0 (covering s0..s0+1, which the window's start is in) to s0+3.
        assert_eq!(kept, vec![0.0, 1.0, 2.0, 3.0]);
        // A standard metric's minutes: the minute that holds the window, not its neighbours.
        let minute = s0 / 60 * 60;
        let minutes = [(minute - 60, 1.0), (minute, 2.0), (minute + 60, 3.0)];
        let kept: Vec<f64> = w.keep(&minutes).iter().map(|p| p.value).collect();
        assert_eq!(kept, vec![2.0]);
    }

    #[test]
    fn given_dimensions_replace_the_host_s() {
        let a = CloudArgs {
            cloudwatch: true,
            instances: vec!["db-1".into()],
            dimensions: vec!["DBShardGroupIdentifier=sg".into()],
        };
        let Some(req) = plan(&a).unwrap() else {
            panic!("planned")
        };
        let (q, notes) = queries(&req, &["127.0.0.1".into()]);
        assert!(notes.is_empty());
        assert_eq!(q.len(), 2);
        assert_eq!(q[1].metrics, SHARD_GROUP_METRICS);
        // Without them, a host that is no RDS name is a note, an RDS name a query.
        let (q, notes) = queries(
            &Request::default(),
            &[
                "127.0.0.1".into(),
                "c.cluster-ro-abc.us-east-1.rds.amazonaws.com".into(),
            ],
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(q[0].dimensions.len(), 2);
        assert_eq!(q[0].region.as_deref(), Some("us-east-1"));
        let bad = CloudArgs {
            dimensions: vec!["Role".into()],
            ..a
        };
        assert!(plan(&bad).is_err());
    }
}
