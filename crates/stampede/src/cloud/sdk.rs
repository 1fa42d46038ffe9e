//! The only code that sees the AWS SDK for Rust: the standard configuration (`aws-config`'s
//! defaults: credentials from the environment, profiles, SSO's cache, web identity, the
//! container and instance metadata; the region likewise; `AWS_ENDPOINT_URL` for another
//! endpoint, a local CloudWatch-compatible server in the tests) and CloudWatch's
//! `GetMetricData`, its pages followed (`NextToken`) by the SDK's paginator.
//!
//! Must not touch: what is asked or how the answer is kept (`cloud`); it gets the queries and
//! the window and gives back the raw points. The HTTPS client is the SDK's own hyper client on
//! rustls with *ring* (the crypto stampede's TLS already builds), not its default aws-lc, which
//! needs a C toolchain with CMake and several minutes to build.

use anyhow::{anyhow, bail, Result};
use aws_config::{BehaviorVersion, Region};
use aws_sdk_cloudwatch::error::DisplayErrorContext;
use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDataQuery, MetricStat, ScanBy};
use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};

use super::{Fetched, Metric, Query, Window, NAMESPACE};

/// `GetMetricData` takes at most 500 queries in one request (CloudWatch API Reference).
const QUERIES_PER_REQUEST: usize = 500;

/// Every metric of every query over the window: the region used and each series' points
/// (epoch seconds, value). `region` is the one the host name names, which wins over the
/// configured one (the metrics are in the resource's region).
pub(super) async fn fetch(
    queries: &[Query],
    w: &Window,
    region: Option<String>,
) -> Result<(Option<String>, Vec<Fetched>)> {
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(Provider::Rustls(CryptoMode::Ring))
        .build_https();
    let mut loader = aws_config::defaults(BehaviorVersion::latest()).http_client(http);
    if let Some(r) = region {
        loader = loader.region(Region::new(r));
    }
    let conf = loader.load().await;
    let Some(region) = conf.region().map(|r| r.to_string()) else {
        bail!(
            "no AWS region configured (set AWS_REGION or a profile's region, or connect by the \
             RDS host name, which names it)"
        );
    };
    if conf.credentials_provider().is_none() {
        bail!("no AWS credentials provider");
    }
    let client = aws_sdk_cloudwatch::Client::new(&conf);
    let asked: Vec<(usize, Metric)> = (queries.iter().enumerate())
        .flat_map(|(i, q)| q.metrics.iter().map(move |m| (i, *m)))
        .collect();
    let mut out = Vec::with_capacity(asked.len());
    for chunk in asked.chunks(QUERIES_PER_REQUEST) {
        let mut req = client
            .get_metric_data()
            .start_time(DateTime::from_secs(w.ask_from_s))
            .end_time(DateTime::from_secs(w.ask_to_s))
            .scan_by(ScanBy::TimestampAscending);
        for (i, (q, m)) in chunk.iter().enumerate() {
            let dims = (queries[*q].dimensions.iter())
                .map(|(n, v)| Dimension::builder().name(n).value(v).build())
                .collect();
            let metric = aws_sdk_cloudwatch::types::Metric::builder()
                .namespace(NAMESPACE)
                .metric_name(m.name)
                .set_dimensions(Some(dims))
                .build();
            let stat = MetricStat::builder()
                .metric(metric)
                .period(w.period_s as i32)
                .stat("Average")
                .build();
            req = req.metric_data_queries(
                MetricDataQuery::builder()
                    .id(format!("m{i}"))
                    .metric_stat(stat)
                    .return_data(true)
                    .build(),
            );
        }
        let mut points: Vec<Vec<(i64, f64)>> = vec![Vec::new(); chunk.len()];
        let mut pages = req.into_paginator().send();
        while let Some(page) = pages.next().await {
            let page =
                page.map_err(|e| anyhow!("CloudWatch GetMetricData: {}", DisplayErrorContext(&e)))?;
            for r in page.metric_data_results() {
                let Some(i) = (r.id())
                    .and_then(|id| id.strip_prefix('m'))
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|i| *i < chunk.len())
                else {
                    continue;
                };
                points[i].extend(
                    r.timestamps()
                        .iter()
                        .map(DateTime::secs)
                        .zip(r.values().iter().copied()),
                );
            }
        }
        for ((query, metric), points) in chunk.iter().zip(points) {
            out.push(Fetched {
                query: *query,
                metric: *metric,
                points,
            });
        }
    }
    Ok((Some(region), out))
}
