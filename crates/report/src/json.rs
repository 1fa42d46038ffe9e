//! The machine-readable result: `run.json` and its JSON Schema.
//!
//! Owns reading and writing [`RunResult`] as JSON and the schema text ([`SCHEMA`], kept in the
//! repository at `schema/run-result.v1.json`). Must not touch: files by name (the caller opens
//! them), rendering.

use std::fmt;
use std::io::{Read, Write};

use crate::model::{RunResult, SCHEMA_VERSION};

/// JSON Schema (draft 2020-12) of a `schema_version` 1 result.
pub const SCHEMA: &str = include_str!("../../../schema/run-result.v1.json");

/// Write `r` as pretty-printed JSON followed by a newline.
pub fn write_json<W: Write>(r: &RunResult, mut w: W) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut w, r)?;
    w.write_all(b"\n")?;
    w.flush()
}

/// Why a result could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Not JSON, or not the shape of a result (missing field, wrong type, bad histogram).
    Json(serde_json::Error),
    /// `schema_version` is absent or not one this build reads.
    UnsupportedVersion(Option<u64>),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Json(e) => write!(f, "not a stampede run result: {e}"),
            ReadError::UnsupportedVersion(Some(v)) => write!(
                f,
                "run result has schema_version {v}; this stampede reads version {SCHEMA_VERSION}"
            ),
            ReadError::UnsupportedVersion(None) => {
                write!(f, "not a stampede run result: no numeric schema_version")
            }
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Json(e) => Some(e),
            ReadError::UnsupportedVersion(_) => None,
        }
    }
}

/// Read a result written by [`write_json`]. The version is checked before the shape, so a result
/// from an incompatible stampede says so instead of naming a missing field. Unknown fields are
/// ignored (later additions are optional fields within the same version).
pub fn read_json<R: Read>(r: R) -> Result<RunResult, ReadError> {
    let value: serde_json::Value = serde_json::from_reader(r).map_err(ReadError::Json)?;
    match value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        other => return Err(ReadError::UnsupportedVersion(other)),
    }
    serde_json::from_value(value).map_err(ReadError::Json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::observed_run;
    use crate::text::render_text;
    use serde_json::{json, Value};

    fn validator() -> jsonschema::Validator {
        let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
        jsonschema::meta::validate(&schema).expect("schema is a valid JSON Schema");
        jsonschema::draft202012::new(&schema).expect("schema compiles")
    }

    /// The fully populated result: every optional part present, server metrics included.
    /// A result with every optional part filled (partitions and sysbench's fairness too, which
    /// no single real run has together).
    fn sample_value() -> Value {
        let mut r = crate::testdata::sysbench_run();
        r.config.partition_method = Some("hash".into());
        r.config.partitions = Some(4);
        r.config.scale_factor = Some(0.01);
        r.config.failures_detailed = true;
        if let Some(s) = &mut r.sysbench {
            s.fairness = Some(crate::Fairness::of(&[(10.0, 1.0), (12.0, 1.1)]));
        }
        r.failover = Some(crate::failover::FailoverSection {
            // Every field written (a real run has one or the other).
            no_fault_time: true,
            ..crate::testdata::failover_section()
        });
        // Every field written: a matrix's too (a real sweep has `knee` or `group_knees`).
        let mut sweep = crate::testdata::sweep_section();
        sweep.group_parameter = Some("scale".into());
        for x in &mut sweep.steps {
            x.group = Some("1".into());
        }
        if let Some(k) = &mut sweep.knee {
            k.group = Some("1".into());
            sweep.group_knees = vec![k.clone()];
        }
        r.sweep = Some(sweep);
        r.fleet = Some(crate::testdata::fleet_section());
        r.ledger = Some(crate::ledger::LedgerSection {
            sources: vec!["statements: pg_stat_statements.calls".into()],
            lines: vec![crate::ledger::LedgerLine {
                kind: measure::ledger::Kind::Insert,
                table: Some("pgbench_history".into()),
                host: Some("db1:5432".into()),
                unit: crate::ledger::Unit::Rows,
                workload: Some(measure::ledger::Bounds::exact(10)),
                workload_from: Some("tpcb-like transactions".into()),
                sent: Some(10),
                server: Some(10),
                source: "pg_stat_user_tables.n_tup_ins".into(),
                verdict: crate::ledger::Verdict::Exact,
                detail: "the server counted 10".into(),
            }],
        });
        // MySQL's additions (no real run has them with PostgreSQL's counters).
        if let Some(m) = &mut r.server_metrics {
            let my = crate::testdata::mysql_server_metrics();
            m.wait_times = my.wait_times;
            m.nodes = my.nodes;
            m.statements[0].rows_examined = Some(12);
            // Several PostgreSQL hosts' (no real run has both).
            m.endpoints = vec![measure::server::EndpointMetrics {
                endpoint: "/tmp/a:5432".into(),
                average_active: 0.5,
                waits: m.waits.clone(),
                statements: m.statements.clone(),
                statements_total: m.statements_total.clone(),
                cost: m.cost.clone(),
            }];
        }
        r.endpoints = vec![crate::Endpoint {
            host: "/tmp/a".into(),
            port: 5432,
            clients: 2,
            transactions: 10,
            tps: 1.0,
            latency_ms: Some(crate::EndpointLatency {
                mean: 1.5,
                p50: 1.2,
                p95: 3.0,
                p99: 4.0,
                max: 5.0,
            }),
            failures: crate::EndpointFailures {
                serialization: 1,
                deadlock: 0,
                other: 0,
            },
            reconnects: 0,
            reader_clients: 2,
            reader_transactions: 4,
        }];
        r.replication = vec![measure::replication::ReplicaLag {
            standby: "walreceiver".into(),
            samples: 2,
            max_lag_bytes: 10,
            p95_lag_bytes: 5,
            max_write_lag_ms: Some(1.0),
            max_flush_lag_ms: Some(1.0),
            max_replay_lag_ms: Some(1.5),
            p95_replay_lag_ms: Some(1.0),
        }];
        r.endpoints_warning = Some("uneven".into());
        r.warmup = Some(crate::warmup::Warmup {
            seconds: 1.0,
            intervals_excluded: 1,
            whole_run_transactions: 12,
            whole_run_duration_s: 3.0,
        });
        r.steady_state = Some(crate::steady::SteadyState {
            verdict: crate::steady::Verdict::Ramping,
            intervals: 6,
            trend: Some(0.4),
            trend_stderr: Some(0.05),
            cv: Some(0.2),
            settled_interval: Some(2),
            settled_at_s: Some(2.0),
            reason: "rose".into(),
        });
        r.prewarm = Some(crate::warmup::Prewarm {
            method: "pg_prewarm".into(),
            seconds: 0.1,
            relations: vec![crate::warmup::PrewarmedRelation {
                kind: "index".into(),
                name: "t_pkey".into(),
                table: Some("t".into()),
                bytes: 8192,
            }],
        });
        r.cloudwatch = Some(crate::cloudwatch::sample());
        r.routing = vec![crate::Routing {
            statement: "SELECT 1 FROM t WHERE k = :k".into(),
            shards_touched: 1,
            shards_total: 2,
            single_shard: true,
            basis: "fdw: foreign partitions after pruning".into(),
        }];
        r.sizes = vec![measure::sizes::Sizes {
            when: "after".into(),
            layout: "fdw".into(),
            database_bytes: Some(100),
            tables: vec![measure::sizes::TableSize {
                name: "pgbench_history".into(),
                kind: measure::sizes::SHARDED.into(),
                colocation: Some("hash(integer) modulus 1: stampede_shard0".into()),
                shard_key: Some("bid".into()),
                table_bytes: 8192,
                index_bytes: 0,
                shards: vec![measure::sizes::TableShard {
                    shard: "stampede_shard0".into(),
                    total_bytes: 8192,
                    table_bytes: Some(8192),
                    index_bytes: Some(0),
                }],
            }],
            shards: vec![measure::sizes::ShardSize {
                shard: "stampede_shard0".into(),
                location: Some("host=/tmp port=5433 dbname=d".into()),
                database_bytes: None,
            }],
            notes: vec!["shard stampede_shard0: not read".into()],
        }];
        let mut buf = Vec::new();
        write_json(&r, &mut buf).unwrap();
        serde_json::from_slice(&buf).unwrap()
    }

    fn errors(v: &Value) -> Vec<String> {
        validator()
            .iter_errors(v)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }

    #[test]
    fn fully_populated_result_validates_against_the_schema() {
        let v = sample_value();
        // Fully populated: the optional parts are present, not null.
        assert!(v["target"]["embedded"].is_object());
        assert!(v["config"]["rate_tps"].is_number() && v["config"]["latency_limit_ms"].is_number());
        assert_eq!(
            v["environment"]["server"]["settings"]
                .as_object()
                .unwrap()
                .len(),
            8
        );
        assert!(!v["connections"]["aborted"].as_array().unwrap().is_empty());
        assert!(!v["intervals"].as_array().unwrap().is_empty());
        assert!(v["server_metrics"]["statements_total"].is_object());
        assert!(v["server_metrics"]["os"][0]["server_cpu_pct"].is_number());
        assert_eq!(v["schema_version"], 1);
        assert_eq!(errors(&v), Vec::<String>::new());
    }

    #[test]
    fn schema_rejects_missing_fields_and_wrong_types() {
        let v = sample_value();
        type Breakage = (&'static str, fn(&mut Value));
        let broken: Vec<Breakage> = vec![
            ("no total", |v| {
                drop(v.as_object_mut().unwrap().remove("total"))
            }),
            ("no config.clients", |v| {
                drop(v["config"].as_object_mut().unwrap().remove("clients"))
            }),
            ("clients as text", |v| v["config"]["clients"] = json!("4")),
            ("negative duration", |v| {
                v["measured_duration_s"] = json!(-1.0)
            }),
            ("interrupted as int", |v| v["interrupted"] = json!(0)),
            ("unknown check status", |v| {
                v["checks"][0]["status"] = json!("ok")
            }),
            ("unknown query mode", |v| {
                v["config"]["query_mode"] = json!("pipeline")
            }),
            ("not a histogram", |v| {
                v["total"]["txns"][0]["latency"] = json!("garbage")
            }),
            ("two failure kinds", |v| {
                v["total"]["txns"][0]["failures"] = json!([0, 0])
            }),
            ("local time", |v| {
                v["started_at"] = json!("2024-05-01 12:00:00")
            }),
            ("version 2", |v| v["schema_version"] = json!(2)),
            ("setting as number", |v| {
                v["environment"]["server"]["settings"]["fsync"] = json!(1)
            }),
            ("server metrics as text", |v| {
                v["server_metrics"] = json!("x")
            }),
            ("wait samples negative", |v| {
                v["server_metrics"]["waits"][0]["samples"] = json!(-1)
            }),
            ("wait time as text", |v| {
                v["server_metrics"]["wait_times"][0]["total_ms"] = json!("1.5")
            }),
            ("a node without its endpoint", |v| {
                drop(
                    v["server_metrics"]["nodes"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("endpoint"),
                )
            }),
            ("a node's counter as text", |v| {
                v["server_metrics"]["nodes"][0]["counters"][0]["values"]
                    ["mysql.wsrep_local_recv_queue"] = json!("1")
            }),
            ("product as a number", |v| {
                v["server_metrics"]["product"] = json!(1)
            }),
            ("counter as text", |v| {
                v["server_metrics"]["deltas"]["wal.wal_bytes"] = json!("1")
            }),
            ("an open-file limit as text", |v| {
                v["environment"]["client"]["fd_limit"]["soft"] = json!("1024")
            }),
            ("a connection setup without its rate", |v| {
                drop(
                    v["connections"]["setup"]
                        .as_object_mut()
                        .unwrap()
                        .remove("rate_per_s"),
                )
            }),
            ("a table's kind unknown", |v| {
                v["sizes"][0]["tables"][0]["kind"] = json!("distributed")
            }),
            ("a table's size negative", |v| {
                v["sizes"][0]["tables"][0]["index_bytes"] = json!(-1)
            }),
            ("statement without calls", |v| {
                drop(
                    v["server_metrics"]["statements"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("calls"),
                )
            }),
        ];
        for (what, f) in broken {
            let mut b = v.clone();
            f(&mut b);
            assert!(
                !errors(&b).is_empty(),
                "schema accepted a result with {what}"
            );
        }
        // Unknown properties are allowed: later additions are optional fields of version 1.
        let mut extra = v.clone();
        extra["drivers"] = json!({"xact_commit": 1});
        assert_eq!(errors(&extra), Vec::<String>::new());
        // And the added ones are optional: a result written before them still validates.
        let mut old = v.clone();
        let mut old_metrics = v["server_metrics"].clone();
        for k in ["product", "wait_times", "nodes", "endpoints"] {
            old_metrics.as_object_mut().unwrap().remove(k);
        }
        old_metrics["statements"][0]
            .as_object_mut()
            .unwrap()
            .remove("rows_examined");
        old["server_metrics"] = old_metrics;
        assert_eq!(errors(&old), Vec::<String>::new());
        old.as_object_mut().unwrap().remove("server_metrics");
        old["environment"]["client"]
            .as_object_mut()
            .unwrap()
            .remove("fd_limit");
        old["connections"].as_object_mut().unwrap().remove("setup");
        assert_eq!(errors(&old), Vec::<String>::new());
        // Endpoints written before they had latencies, failures and reconnects validate and
        // read, with those empty.
        for k in ["latency_ms", "failures", "reconnects"] {
            old["endpoints"][0].as_object_mut().unwrap().remove(k);
        }
        assert_eq!(errors(&old), Vec::<String>::new());
        let r = read_json(serde_json::to_vec(&old).unwrap().as_slice()).unwrap();
        assert_eq!(r.endpoints[0].transactions, 10);
        assert_eq!(r.endpoints[0].latency_ms, None);
        assert_eq!(r.endpoints[0].failures, crate::EndpointFailures::default());
    }

    /// Every key the model writes is declared in the schema, and every declared-required key is
    /// written, for each object the schema describes: schema and model cannot drift apart.
    /// Optional additions to version 1 (absent from older results) are declared, not required.
    #[test]
    fn schema_and_model_name_the_same_fields() {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let v = sample_value();
        let defs = &schema["$defs"];
        let sm = &defs["server_metrics"]["properties"];
        let m = &v["server_metrics"];
        const OPTIONAL: &[&str] = &[
            // The observer's additions (host figures, constants).
            "network",
            "cpu_modes_pct",
            "mem_cached_bytes",
            "mem_dirty_bytes",
            "devices",
            "holds",
            "os_machine",
            "counter_constants",
            // A sweep that is a matrix (`sweep` module notes).
            "group_parameter",
            "group_knees",
            "group",
            // A sweep step's own series, left out when empty (`sweep::series`).
            "committed_by_type",
            "metrics",
            "counters",
            "checks",
            "rows",
            "no_fault_time",
            "ledger",
            "table",
            "host",
            "workload",
            "workload_from",
            "sent",
            "server",
            "routing",
            "endpoints",
            "latency_ms",
            "failures",
            "reconnects",
            "reader_clients",
            "reader_transactions",
            "replication",
            "max_write_lag_ms",
            "max_flush_lag_ms",
            "max_replay_lag_ms",
            "p95_replay_lag_ms",
            "endpoints_warning",
            "failures_detailed",
            "server_metrics",
            "sysbench",
            "fd_limit",
            "setup",
            "socket_io",
            "abandoned",
            "partition_method",
            "partitions",
            "scale_factor",
            "fairness",
            "product",
            "wait_times",
            "nodes",
            "rows_examined",
            "failover",
            "fault_cmd",
            "fault_exit_status",
            "detect_s",
            "write_window",
            "read_window",
            "last_write_old_primary",
            "first_write_new_primary",
            "latency_ms",
            "before",
            "during",
            "after",
            "lost_seqs",
            "in_doubt_seqs",
            "duplicate_seqs",
            "audited_on",
            "audit_error",
            "sweep",
            "fleet",
            "lost",
            "commit_check",
            "rate_tps",
            "lagging",
            "failed_commits",
            "uncounted",
            "background",
            "aborts",
            "op",
            "reads",
            "hosts",
            "warmup",
            "steady_state",
            "prewarm",
            "trend",
            "trend_stderr",
            "cv",
            "settled_interval",
            "settled_at_s",
            "sizes",
            "notes",
            "colocation",
            "shard_key",
            "shards",
            "location",
            "table_bytes",
            "index_bytes",
            "cloudwatch",
            "region",
        ];
        let objects = [
            (&schema, &v),
            (&defs["config"], &v["config"]),
            (
                &defs["config"]["properties"]["txn_types"]["items"],
                &v["config"]["txn_types"][0],
            ),
            (&defs["target"], &v["target"]),
            (
                &defs["target"]["properties"]["embedded"]["anyOf"][1],
                &v["target"]["embedded"],
            ),
            (&defs["environment"], &v["environment"]),
            (
                &defs["environment"]["properties"]["server"],
                &v["environment"]["server"],
            ),
            (
                &defs["environment"]["properties"]["client"],
                &v["environment"]["client"],
            ),
            (&defs["connections"], &v["connections"]),
            (
                &defs["connections"]["properties"]["aborted"]["items"],
                &v["connections"]["aborted"][0],
            ),
            (&defs["fd_limit"], &v["environment"]["client"]["fd_limit"]),
            (&defs["connection_setup"], &v["connections"]["setup"]),
            (&defs["check"], &v["checks"][0]),
            (&defs["interval"], &v["total"]),
            (&defs["txn_stats"], &v["total"]["txns"][0]),
            (
                &defs["txn_stats"]["properties"]["statements"]["items"],
                &v["total"]["txns"][0]["statements"][0],
            ),
            (&defs["sysbench"], &v["sysbench"]),
            (&defs["warmup"], &v["warmup"]),
            (&defs["steady_state"], &v["steady_state"]),
            (&defs["prewarm"], &v["prewarm"]),
            (
                &defs["prewarm"]["properties"]["relations"]["items"],
                &v["prewarm"]["relations"][0],
            ),
            (
                &schema["properties"]["endpoints"]["items"],
                &v["endpoints"][0],
            ),
            (
                &schema["properties"]["endpoints"]["items"]["properties"]["latency_ms"],
                &v["endpoints"][0]["latency_ms"],
            ),
            (
                &schema["properties"]["endpoints"]["items"]["properties"]["failures"],
                &v["endpoints"][0]["failures"],
            ),
            (
                &schema["properties"]["replication"]["items"],
                &v["replication"][0],
            ),
            (&defs["failover"], &v["failover"]),
            (&defs["window"], &v["failover"]["write_window"]),
            (&defs["host_time"], &v["failover"]["last_write_old_primary"]),
            (&defs["exact_latency"], &v["failover"]["latency"]["before"]),
            (
                &defs["failover"]["properties"]["errors"]["items"],
                &v["failover"]["errors"][0],
            ),
            (
                &defs["failover"]["properties"]["timeline"]["items"],
                &v["failover"]["timeline"][0],
            ),
            (
                &defs["failover"]["properties"]["reconnects"],
                &v["failover"]["reconnects"],
            ),
            (
                &defs["failover"]["properties"]["clients_ended_on"]["items"],
                &v["failover"]["clients_ended_on"][0],
            ),
            (
                &defs["failover"]["properties"]["latency"],
                &v["failover"]["latency"],
            ),
            (
                &defs["failover"]["properties"]["writes"],
                &v["failover"]["writes"],
            ),
            (
                &defs["failover"]["properties"]["reads"],
                &v["failover"]["reads"],
            ),
            (
                &defs["failover"]["properties"]["hosts"]["items"],
                &v["failover"]["hosts"][0],
            ),
            (&schema["properties"]["routing"]["items"], &v["routing"][0]),
            (&defs["sizes"], &v["sizes"][0]),
            (
                &defs["sizes"]["properties"]["tables"]["items"],
                &v["sizes"][0]["tables"][0],
            ),
            (
                &defs["sizes"]["properties"]["tables"]["items"]["properties"]["shards"]["items"],
                &v["sizes"][0]["tables"][0]["shards"][0],
            ),
            (
                &defs["sizes"]["properties"]["shards"]["items"],
                &v["sizes"][0]["shards"][0],
            ),
            (&defs["sweep"], &v["sweep"]),
            (
                &defs["sweep"]["properties"]["knee"]["anyOf"][1],
                &v["sweep"]["knee"],
            ),
            (
                &defs["sweep"]["properties"]["group_knees"]["items"],
                &v["sweep"]["group_knees"][0],
            ),
            // The last step lost clients: every field is written.
            (
                &defs["sweep"]["properties"]["steps"]["items"],
                &v["sweep"]["steps"][3],
            ),
            (
                &defs["sweep"]["properties"]["steps"]["items"]["properties"]["aborts"]["items"],
                &v["sweep"]["steps"][3]["aborts"][0],
            ),
            (
                &defs["sweep"]["properties"]["steps"]["items"]["properties"]["failures_by_kind"],
                &v["sweep"]["steps"][3]["failures_by_kind"],
            ),
            (
                &defs["sweep"]["properties"]["steps"]["items"]["properties"]["metrics"]["items"],
                &v["sweep"]["steps"][3]["metrics"][0],
            ),
            (
                &defs["sweep"]["properties"]["steps"]["items"]["properties"]["counters"]
                    ["additionalProperties"],
                &v["sweep"]["steps"][3]["counters"]["mysql.Com_select"],
            ),
            (&defs["ledger"], &v["ledger"]),
            (&defs["ledger_line"], &v["ledger"]["lines"][0]),
            (
                &defs["ledger_line"]["properties"]["workload"],
                &v["ledger"]["lines"][0]["workload"],
            ),
            (&defs["fleet"], &v["fleet"]),
            (&defs["fleet_process"], &v["fleet"]["processes"][0]),
            (&defs["check"], &v["fleet"]["commit_check"]),
            (&defs["server_metrics"], m),
            (&defs["cloudwatch"], &v["cloudwatch"]),
            (
                &defs["cloudwatch"]["properties"]["metrics"]["items"],
                &v["cloudwatch"]["metrics"][0],
            ),
            (
                &defs["cloudwatch"]["properties"]["metrics"]["items"]["properties"]["points"]
                    ["items"],
                &v["cloudwatch"]["metrics"][0]["points"][0],
            ),
            (&sm["cost"], &m["cost"]),
            (&sm["notes"]["items"], &m["notes"][0]),
            (&sm["activity"]["items"], &m["activity"][0]),
            (&sm["waits"]["items"], &m["waits"][0]),
            (&sm["background"]["items"], &m["background"][0]),
            (
                &sm["background"]["items"]["properties"]["waits"]["items"],
                &m["background"][0]["waits"][0],
            ),
            (&sm["query_waits"]["items"], &m["query_waits"][0]),
            (&defs["statement_delta"], &m["statements"][0]),
            (&sm["counters"]["items"], &m["counters"][0]),
            (&sm["io"]["items"], &m["io"][0]),
            (&sm["os"]["items"], &m["os"][0]),
            (
                &sm["os"]["items"]["properties"]["devices"]["items"],
                &m["os"][0]["devices"][0],
            ),
            (&sm["wait_times"]["items"], &m["wait_times"][0]),
            (&sm["nodes"]["items"], &m["nodes"][0]),
            (&sm["endpoints"]["items"], &m["endpoints"][0]),
        ];
        for (s, inst) in objects {
            let mut written: Vec<&String> = inst.as_object().unwrap().keys().collect();
            // A family's section is declared here and checked by its family's tests
            // (`section::schema_mismatches`).
            let mut declared: Vec<&String> = (s["properties"].as_object().unwrap().iter())
                .filter(|(_, d)| d["x-family-section"] != true)
                .map(|(k, _)| k)
                .collect();
            let mut required: Vec<&str> = s["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            written.sort();
            declared.sort();
            required.sort();
            assert_eq!(written, declared, "schema properties");
            // A name optional in one object may be required in another (`failures`).
            written.retain(|k| !OPTIONAL.contains(&k.as_str()) || required.contains(&k.as_str()));
            assert_eq!(written, required, "schema required");
        }
    }

    #[test]
    fn round_trip_keeps_every_number() {
        let r = observed_run();
        let mut buf = Vec::new();
        write_json(&r, &mut buf).unwrap();
        assert!(buf.ends_with(b"}\n"));
        let back = read_json(buf.as_slice()).unwrap();

        assert_eq!(back.config, r.config);
        assert_eq!(back.target, r.target);
        assert_eq!(back.environment, r.environment);
        assert_eq!(back.connections, r.connections);
        assert_eq!(back.checks, r.checks);
        assert_eq!(back.server_metrics, r.server_metrics);
        assert_eq!(back.command_line, r.command_line);
        assert_eq!(
            back.measured_duration_s.to_bits(),
            r.measured_duration_s.to_bits()
        );
        assert_eq!(
            (back.interrupted, back.schema_version),
            (r.interrupted, r.schema_version)
        );
        assert_eq!(back.intervals.len(), r.intervals.len());

        // Histograms: lossless, down to the exact sums and every bucket.
        for (a, b) in r.total.txns.iter().zip(&back.total.txns) {
            for (ha, hb) in [(&a.latency, &b.latency), (&a.lag, &b.lag)] {
                assert_eq!(ha.count(), hb.count());
                assert_eq!(ha.sum_us(), hb.sum_us());
                assert_eq!(ha.stddev_us().to_bits(), hb.stddev_us().to_bits());
                for p in [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
                    assert_eq!(ha.percentile_us(p), hb.percentile_us(p));
                }
                assert_eq!(ha.max_us(), hb.max_us());
            }
            assert_eq!(
                (a.failures, a.retries, a.retried),
                (b.failures, b.retries, b.retried)
            );
            assert_eq!((a.skipped, a.late), (b.skipped, b.late));
            assert_eq!(a.statements.len(), b.statements.len());
        }
        // And everything rendered from it is identical.
        assert_eq!(render_text(&back), render_text(&r));
        let again: Value = serde_json::to_value(&back).unwrap();
        assert_eq!(again, serde_json::to_value(&r).unwrap());
    }

    #[test]
    fn read_rejects_other_versions_and_malformed_results() {
        let mut v = sample_value();
        v["schema_version"] = json!(2);
        let e = read_json(v.to_string().as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::UnsupportedVersion(Some(2))), "{e}");
        assert!(e.to_string().contains("schema_version 2"));

        v.as_object_mut().unwrap().remove("schema_version");
        let e = read_json(v.to_string().as_bytes()).unwrap_err();
        assert!(matches!(e, ReadError::UnsupportedVersion(None)), "{e}");

        let mut v = sample_value();
        v.as_object_mut().unwrap().remove("checks");
        let e = read_json(v.to_string().as_bytes()).unwrap_err();
        assert!(e.to_string().contains("checks"), "{e}");

        let mut v = sample_value();
        v["total"]["txns"][0]["latency"] = json!("garbage;1;2");
        assert!(matches!(
            read_json(v.to_string().as_bytes()),
            Err(ReadError::Json(_))
        ));

        assert!(matches!(read_json(&b"{"[..]), Err(ReadError::Json(_))));
    }
}
