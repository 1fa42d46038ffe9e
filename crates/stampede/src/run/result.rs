//! Putting a run's `RunResult` together, the same way for every family: the command line
//! (redacted), times, target, environment, connections, intervals, checks; and starting the
//! server sampler.

use report::{Check, RunResult};

use crate::{environment, targeting};

/// What every run puts into its result the same way, beside its own configuration.
pub(super) struct Parts<'a> {
    pub target: &'a targeting::Target,
    pub server: &'a environment::ServerInfo,
    pub outcome: &'a engine::Outcome,
    pub checks: Vec<Check>,
    pub server_metrics: Option<measure::server::ServerMetrics>,
}

/// The one place a `RunResult` is put together: command line (redacted), times, target,
/// environment, connections, intervals, checks.
pub(super) fn assemble(
    config: report::RunConfig,
    parts: Parts<'_>,
    sysbench: Option<report::SysbenchSection>,
) -> RunResult {
    let Parts {
        target,
        server,
        outcome,
        checks,
        server_metrics,
    } = parts;
    let client = environment::client_info();
    let endpoints = endpoints(&target.conn, outcome);
    let endpoints_warning = crate::run::split::imbalance(&endpoints);
    RunResult {
        command_line: environment::command_line(),
        started_at: report::format_rfc3339_utc(outcome.started_at),
        measured_duration_s: outcome.total.duration_s(),
        target: targeting::target_info(target),
        environment: environment::environment_info(server, client),
        connections: report::ConnectionStats {
            initial_connect_ms: outcome.connect_time.as_secs_f64() * 1000.0,
            clients: config.clients,
            reconnect_total_ms: config
                .connect_per_txn
                .then_some(outcome.reconnect_time.as_secs_f64() * 1000.0),
            aborted: outcome
                .aborted
                .iter()
                .map(|a| report::AbortedClient {
                    client_id: a.client_id,
                    reason: a.reason.clone(),
                })
                .collect(),
            setup: Some(report::ConnectionSetup {
                opened: outcome.initial_connections,
                rate_per_s: if outcome.connect_time.is_zero() {
                    0.0
                } else {
                    outcome.initial_connections as f64 / outcome.connect_time.as_secs_f64()
                },
                concurrency: outcome.connect_concurrency,
                retries: outcome.connect_retries,
                socket_io: Some(io_description(outcome)),
                abandoned: (outcome.abandoned > 0).then_some(outcome.abandoned),
            }),
        },
        config,
        intervals: outcome.intervals.clone(),
        total: outcome.total.clone(),
        checks,
        interrupted: outcome.interrupted,
        server_metrics,
        sysbench,
        endpoints,
        endpoints_warning,
        ..Default::default()
    }
}

/// Per host of a target with several: its clients and the transactions it served (none with
/// one host). Counted as they ran (`engine::EndpointStats`), so a client that moved during the
/// run (a failover's reconnection) leaves what it ran before on the host it ran on, and is one
/// of the clients of each host it had a session on.
fn endpoints(conn: &sut::Target, outcome: &engine::Outcome) -> Vec<report::Endpoint> {
    if conn.endpoints() < 2 {
        return Vec::new();
    }
    let secs = outcome.total.duration_s();
    let mut eps: Vec<report::Endpoint> = (0..conn.endpoints())
        .filter_map(|i| conn.endpoint_name(i))
        .map(|(host, port)| report::Endpoint {
            host,
            port,
            ..Default::default()
        })
        .collect();
    // --read-from: the reader sessions, which never move (a reader that breaks is not
    // reopened: its client's reads go to the writer), and the part of each host's
    // transactions they ran.
    for c in &outcome.clients {
        if let Some(e) = c.reader_endpoint.and_then(|i| eps.get_mut(i)) {
            e.reader_clients += 1;
            e.reader_transactions += c.reader_committed;
        }
    }
    // What ran on each host, keyed by the host of the session that ran it (engine::endpoint).
    for (e, s) in eps.iter_mut().zip(&outcome.endpoints) {
        e.clients = s.clients;
        e.transactions = s.latency.count();
        e.latency_ms = report::EndpointLatency::of(&s.latency);
        for kind in measure::FailureKind::ALL {
            e.failures.add(kind, s.failures_of(kind));
        }
        e.reconnects = s.reconnects;
    }
    for e in &mut eps {
        e.set_tps(secs);
    }
    eps
}

/// The result's `I/O:` words: which engine threads ran the measured run on io_uring, and why the
/// others used epoll.
fn io_description(outcome: &engine::Outcome) -> String {
    let (threads, ring, blocking) = (
        outcome.threads,
        outcome.ring_threads,
        outcome.blocking_threads,
    );
    let why = outcome.epoll_why.as_deref().unwrap_or("unknown");
    let choice = outcome.io_choice.as_deref().unwrap_or("--io threads");
    if blocking > 0 && blocking >= threads {
        format!("threads (a blocking socket per client on its own thread; {choice})")
    } else if blocking > 0 {
        format!(
            "threads on {blocking} of {threads} engine threads ({choice}), epoll on the others \
             ({why})"
        )
    } else if ring == 0 {
        format!("epoll ({why})")
    } else if ring >= threads {
        format!("io_uring ({ring} of {threads} engine threads)")
    } else {
        format!("io_uring on {ring} of {threads} engine threads, epoll on the others ({why})")
    }
}
