//! Folding the window's snapshots into [`ServerMetrics`]' parts: status counter deltas,
//! statement deltas (digests and MariaDB's prepared statements), waits by time, and each Galera
//! node's figures.

use super::*;

/// End minus start of every counter present in both; whether any went down (a reset).
pub(super) fn counters(
    a: &BTreeMap<String, f64>,
    b: &BTreeMap<String, f64>,
) -> (BTreeMap<String, f64>, bool) {
    // Gauges go down as they please; a counter going down is a reset.
    sampling::deltas(a, b, is_gauge)
}

/// Count `d` in the statements' `total`.
fn add(total: &mut StatementDelta, d: &StatementDelta) {
    total.calls += d.calls;
    total.total_exec_time_ms += d.total_exec_time_ms;
    total.rows += d.rows;
    total.rows_examined = Some(total.rows_examined.unwrap_or(0) + d.rows_examined.unwrap_or(0));
}

/// Whether a counter going down says nothing of a reset: a level, not a count, or one whose
/// kind is not known here. The whole status list holds many levels (`Open_files`,
/// `Innodb_buffer_pool_pages_free`, `Memory_used`), so a reset is judged only on the counts
/// [`sql::always_kept`] names.
fn is_gauge(key: &str) -> bool {
    if !sql::always_kept(key) {
        return true;
    }
    let name = key.strip_prefix(MYSQL_PREFIX).unwrap_or(key);
    matches!(
        name,
        "Threads_running"
            | "Threads_connected"
            | "Open_files"
            | "Innodb_history_list_length"
            | "Innodb_buffer_pool_pages_dirty"
            | "Innodb_row_lock_current_waits"
            | "Innodb_checkpoint_age"
            | "wsrep_flow_control_paused"
            | "wsrep_local_recv_queue"
            | "wsrep_local_send_queue"
            | "wsrep_cluster_size"
    )
}

impl MySqlSampler {
    /// Top statements by execution time over the window, and the sum of all of them.
    pub(super) fn statement_deltas(
        &mut self,
        end: &Snapshot,
    ) -> (Vec<StatementDelta>, Option<StatementDelta>) {
        let (Some(a), Some(b)) = (&self.baseline.digests, &end.digests) else {
            return (Vec::new(), None);
        };
        let prepared = self.prepared_deltas();
        let mut total = StatementDelta {
            query: "all statements".into(),
            rows_examined: Some(0),
            ..Default::default()
        };
        let mut undigested = 0.0;
        let mut v = Vec::new();
        for (key, e) in b {
            let s = a.get(key).cloned().unwrap_or_default();
            // A digest table truncated during the run restarts from zero.
            let s = if e.calls < s.calls {
                DigestRow::default()
            } else {
                s
            };
            let calls = e.calls - s.calls;
            if calls <= 0.0 {
                continue;
            }
            let digest = key.1.as_deref();
            if digest.is_none() {
                undigested += calls;
            }
            let ms = (e.time_ps - s.time_ps).max(0.0) / 1e9;
            let d = StatementDelta {
                query_id: sql::digest_id(digest),
                query: match (&e.text, digest) {
                    (Some(t), Some(_)) => t.trim().to_string(),
                    (_, None) => "(statements not digested: the digest table was full)".into(),
                    (None, Some(d)) => format!("(digest {d})"),
                },
                calls: calls as u64,
                total_exec_time_ms: ms,
                mean_exec_time_ms: ms / calls,
                rows: (e.rows - s.rows).max(0.0) as u64,
                shared_blks_hit: 0,
                shared_blks_read: 0,
                wal_bytes: None,
                rows_examined: Some((e.examined - s.examined).max(0.0) as u64),
            };
            add(&mut total, &d);
            v.push(d);
        }
        if let Some((by_text, seen)) = prepared {
            for d in by_text {
                add(&mut total, &d);
                v.push(d);
            }
            let executed = match (self.baseline.executions, end.executions) {
                (Some(x), Some(y)) if y >= x => y - x,
                _ => seen,
            };
            // The few executions of a session's last sample interval are always missing; a
            // note for more than 1% of them.
            if executed - seen > 0.01 * executed {
                self.rec.notes.push(note(
                    "performance_schema",
                    format!(
                        "prepared statements: {seen:.0} of the {executed:.0} executions on the \
                         server are in top SQL; the rest ran on other databases, or in a \
                         session's last moments before it closed (a prepared statement's \
                         statistics go with it; they are read every sample, or every counter \
                         interval when there are more than {PREPARED_EVERY_SAMPLE})"
                    ),
                ));
            }
        }
        if total.calls > 0 {
            total.mean_exec_time_ms = total.total_exec_time_ms / total.calls as f64;
        }
        if undigested > 0.0 {
            self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "{undigested} statements found the digest table full and were counted \
                     together; raise performance_schema_digests_size (a server option)"
                ),
            ));
        }
        v.sort_by(|x, y| y.total_exec_time_ms.total_cmp(&x.total_exec_time_ms));
        v.truncate(self.rec.opts.top_statements);
        (v, Some(total))
    }

    /// MariaDB's prepared statements over the window, summed by text (each session prepares its
    /// own), and the executions they add up to; `None` when they are not read. A statement's last
    /// reading counts, less its reading at the window's start if it existed then.
    pub(super) fn prepared_deltas(&self) -> Option<(Vec<StatementDelta>, f64)> {
        let base = self.baseline.prepared.as_ref()?;
        let mut by_text: BTreeMap<String, DigestRow> = BTreeMap::new();
        for (k, last) in &self.prepared_last {
            let start = base
                .get(k)
                .filter(|s| s.text == last.text && s.calls <= last.calls)
                .cloned()
                .unwrap_or_default();
            let calls = last.calls - start.calls;
            if calls <= 0.0 {
                continue;
            }
            let text = last
                .text
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let e = by_text.entry(text).or_default();
            e.calls += calls;
            e.time_ps += (last.time_ps - start.time_ps).max(0.0);
            e.rows += (last.rows - start.rows).max(0.0);
            e.examined += (last.examined - start.examined).max(0.0);
        }
        let seen = by_text.values().fold(0.0, |n, r| n + r.calls);
        let v = by_text
            .into_iter()
            .map(|(text, r)| {
                let ms = r.time_ps / 1e9;
                StatementDelta {
                    query_id: Some(sql::text_id(&text)),
                    query: text,
                    calls: r.calls as u64,
                    total_exec_time_ms: ms,
                    mean_exec_time_ms: ms / r.calls,
                    rows: r.rows as u64,
                    rows_examined: Some(r.examined as u64),
                    ..Default::default()
                }
            })
            .collect();
        Some((v, seen))
    }

    /// Waits by time over the window, most first.
    pub(super) fn wait_deltas(&self, end: &Snapshot) -> Vec<WaitTime> {
        let (Some(a), Some(b)) = (&self.baseline.waits, &end.waits) else {
            return Vec::new();
        };
        let mut v: Vec<WaitTime> = b
            .iter()
            .filter_map(|(name, (count, ps))| {
                let (c0, p0) = a.get(name).copied().unwrap_or_default();
                let (dc, dp) = (count - c0, ps - p0);
                (dc > 0.0 && dp >= 0.0).then(|| WaitTime {
                    event: sql::wait_event(name),
                    count: dc as u64,
                    total_ms: dp / 1e9,
                })
            })
            .collect();
        v.sort_by(|x, y| {
            y.total_ms
                .total_cmp(&x.total_ms)
                .then(y.count.cmp(&x.count))
        });
        v.truncate(TOP_WAITS);
        v
    }

    /// Galera: every node's `wsrep_*` counters (the first node's from the main session's status
    /// reads); none for a single server.
    pub(super) fn node_metrics(
        &self,
        end: &Snapshot,
        rel: &dyn Fn(Instant) -> i64,
    ) -> Vec<NodeMetrics> {
        if !self.caps.wsrep {
            return Vec::new();
        }
        let wsrep = |m: &BTreeMap<String, f64>| -> BTreeMap<String, f64> {
            m.iter()
                .filter(|(k, _)| k.starts_with(&format!("{MYSQL_PREFIX}wsrep_")))
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        };
        let mut out = vec![NodeMetrics {
            endpoint: self.endpoint.clone(),
            counters: self
                .rec
                .counters
                .iter()
                .map(|(at, v)| CounterSample {
                    t_ms: rel(*at),
                    values: wsrep(v),
                })
                .collect(),
            deltas: counters(&wsrep(&self.baseline.counters), &wsrep(&end.counters)).0,
        }];
        for (i, n) in self.nodes.iter().enumerate() {
            let empty = BTreeMap::new();
            let a = self.baseline.nodes.get(i).unwrap_or(&empty);
            let b = end.nodes.get(i).unwrap_or(&empty);
            out.push(NodeMetrics {
                endpoint: n.name.clone(),
                counters: n
                    .counters
                    .iter()
                    .map(|(at, v)| CounterSample {
                        t_ms: rel(*at),
                        values: v.clone(),
                    })
                    .collect(),
                deltas: counters(a, b).0,
            });
        }
        out
    }
}
