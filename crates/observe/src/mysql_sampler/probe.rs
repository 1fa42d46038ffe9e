//! The probe at start: what the server offers (performance_schema and its consumers and
//! instruments, privileges, MariaDB or MySQL, Galera), a note with the fix for each thing that
//! cannot be seen, the other Galera nodes' sessions, and the server's process when local.

use super::*;

impl MySqlSampler {
    pub(super) async fn probe(&mut self) -> Result<(), Error> {
        let rows = self.query(&sql::variables()).await.map_err(Error::Query)?;
        let var = |name: &str| -> Option<String> {
            rows.iter()
                .find(|r| r.first().and_then(|c| c.as_deref()) == Some(name))
                .and_then(|r| r.get(1).cloned().flatten())
        };
        let pfs_on = matches!(var("performance_schema").as_deref(), Some("ON" | "1"));
        self.caps.wsrep = matches!(var("wsrep_on").as_deref(), Some("ON" | "1"));
        // A limit this server does not know is no reason not to observe.
        if let Err(e) = self.query(&sql::session_setup(&self.caps)).await {
            if !self.session.is_usable() {
                return Err(Error::Query(e));
            }
        }
        let current = self
            .query("SELECT CURRENT_USER()")
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
            .unwrap_or_else(|| self.conn.user.clone());
        let user = account(&current);
        self.caps.process = self.query(&sql::process_probe()).await.is_ok();
        if !self.caps.process {
            self.rec.notes.push(note(
                "privileges",
                format!(
                    "user {user} lacks the PROCESS privilege: other users' sessions, InnoDB \
                     transactions and row lock waits (information_schema.INNODB_TRX){} are not \
                     seen; GRANT PROCESS ON *.* TO {user}",
                    if self.caps.mariadb {
                        ""
                    } else {
                        " and the history list length (INNODB_METRICS)"
                    }
                ),
            ));
        }
        if !pfs_on {
            self.rec.notes.push(note(
                "performance_schema",
                "performance_schema is OFF: no wait events (sessions are shown by their thread \
                 state), no waits by time and no top statements; start the server with \
                 --performance-schema=ON (performance_schema = ON in its configuration file; it \
                 cannot be turned on while the server runs)",
            ));
            return Ok(());
        }
        let consumers = match self.query(&sql::consumers()).await {
            Ok(rows) => rows,
            Err(e) => {
                self.rec.notes.push(note(
                    "performance_schema",
                    format!(
                        "performance_schema cannot be read ({e}): no wait events, waits by time \
                         or top statements; GRANT SELECT ON performance_schema.* TO {user}"
                    ),
                ));
                return Ok(());
            }
        };
        self.caps.pfs = true;
        let on = |name: &str| {
            consumers.iter().any(|r| {
                r.first().and_then(|c| c.as_deref()) == Some(name)
                    && r.get(1).and_then(|c| c.as_deref()) == Some("YES")
            })
        };
        let enable = |names: &[&str]| {
            let list: Vec<String> = names.iter().map(|n| sql::quote_literal(n)).collect();
            let opts: Vec<String> = names
                .iter()
                .map(|n| format!("--performance-schema-consumer-{}=ON", n.replace('_', "-")))
                .collect();
            format!(
                "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN \
                 ({}), or start the server with {}",
                list.join(", "),
                opts.join(" ")
            )
        };
        let global = on("global_instrumentation") && on("thread_instrumentation");
        if !global {
            self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "performance_schema collects nothing (consumers global_instrumentation and \
                     thread_instrumentation must be on): no wait events, waits by time or top \
                     statements; {}",
                    enable(&["global_instrumentation", "thread_instrumentation"])
                ),
            ));
            return Ok(());
        }
        self.caps.waits_current = on("events_waits_current");
        if self.caps.waits_current {
            self.rec.notes.push(note(
                "query_id",
                "waits are not joined to statements: performance_schema gives a running \
                 statement its digest only when it ends",
            ));
        } else {
            self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "the events_waits_current consumer is off (the default): active sessions are \
                     shown by their thread state (Stage:...), not their wait event; {}",
                    enable(&["events_waits_current"])
                ),
            ));
        }
        if on("statements_digest") {
            match self.query(&format!("{} LIMIT 0", sql::digests(&self.caps, true))).await {
                Ok(_) => {
                    self.caps.digests = true;
                    self.digests_ok = true;
                }
                Err(e) => self.rec.notes.push(note(
                    "performance_schema",
                    format!("events_statements_summary_by_digest cannot be read ({e}): no top statements"),
                )),
            }
        } else {
            self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "the statements_digest consumer is off: no top statements; {}",
                    enable(&["statements_digest"])
                ),
            ));
        }
        if self
            .query(&format!("{} LIMIT 0", sql::wait_summary(true)))
            .await
            .is_ok()
        {
            self.caps.waits_by_user = true;
        }
        if !self.caps.waits_by_user {
            self.rec.notes.push(note(
                "performance_schema",
                "events_waits_summary_by_user_by_event_name cannot be read: waits by time \
                 include the server's background threads (events_waits_summary_global_by_event_name)",
            ));
        }
        let waits = sql::wait_summary(self.caps.waits_by_user);
        match self.query(&format!("{waits} LIMIT 0")).await {
            Ok(_) => {
                self.caps.wait_summary = true;
                self.waits_ok = true;
            }
            Err(e) => self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "the wait summaries cannot be read ({e}): no waits \
                     by time"
                ),
            )),
        }
        // MariaDB counts a prepared statement's executions in its instance only while statement
        // events are collected (seen on 10.11: COUNT_EXECUTE stays 0 with the consumer off).
        if self.caps.mariadb && !on("events_statements_current") {
            self.rec.notes.push(note(
                "performance_schema",
                format!(
                    "the events_statements_current consumer is off (the default): statements \
                     run through the binary protocol (prepared), which MariaDB does not digest, \
                     are missing from top SQL; {}",
                    enable(&["events_statements_current"])
                ),
            ));
        } else if self.caps.mariadb {
            match self
                .query(&format!("{} LIMIT 0", sql::prepared(&self.caps)))
                .await
            {
                Ok(_) => {
                    self.caps.prepared = true;
                    self.prepared_ok = true;
                }
                Err(e) => self.rec.notes.push(note(
                    "performance_schema",
                    format!(
                        "prepared_statements_instances cannot be read ({e}): statements run \
                         through the binary protocol (prepared) are missing from top SQL"
                    ),
                )),
            }
        }
        // Instruments off are waits neither timed nor sampled.
        if let Ok(rows) = self.query(&sql::wait_instruments()).await {
            let off: Vec<String> = rows
                .iter()
                .filter(|r| r.len() == 3)
                .filter(|r| sql::num(&r[1]) < sql::num(&r[2]))
                .map(|r| {
                    format!(
                        "{} ({:.0} of {:.0} on)",
                        r[0].as_deref().unwrap_or("?"),
                        sql::num(&r[1]),
                        sql::num(&r[2])
                    )
                })
                .collect();
            if !off.is_empty() {
                self.rec.notes.push(note(
                    "performance_schema",
                    format!(
                        "wait instruments that are off are neither timed nor sampled: {}; \
                         UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', \
                         TIMED = 'YES' WHERE NAME LIKE 'wait/%', or start the server with \
                         --performance-schema-instrument='wait/%=ON'",
                        off.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Where the history list length comes from: MariaDB's status variable, else MySQL's
    /// `INNODB_METRICS` (needs PROCESS and the metric enabled, as it is by default).
    /// `INNODB_METRICS`, read with the status variables when the PROCESS privilege allows: every
    /// enabled metric (`innodb_metrics.<name>`), and the history list length from it where the
    /// server has no status variable for it (MySQL).
    pub(super) async fn probe_history(&mut self) {
        let Some(first) = self.read_counters().await else {
            return;
        };
        let history_in_status =
            first.contains_key(&format!("{MYSQL_PREFIX}Innodb_history_list_length"));
        if !self.caps.process {
            return; // Said in the PROCESS note.
        }
        let col = self
            .query(&sql::metrics_columns())
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()));
        let Some(col) = col else {
            self.rec.notes.push(note(
                "innodb_metrics",
                "information_schema.INNODB_METRICS has neither STATUS nor ENABLED: no InnoDB \
                 metrics and no history list length",
            ));
            return;
        };
        let q = sql::enabled_metrics(&col);
        match self.query(&q).await {
            Ok(rows) => {
                let mut m = BTreeMap::new();
                sql::metrics_numbers(&rows, &mut m);
                self.metrics_sql = Some(q);
                let history = format!("{MYSQL_PREFIX}Innodb_history_list_length");
                if m.contains_key(&history) {
                    self.caps.history_metric = !history_in_status;
                } else if !history_in_status {
                    self.rec.notes.push(note(
                        "innodb_metrics",
                        "the InnoDB metric trx_rseg_history_len is disabled: no history list \
                         length; SET GLOBAL innodb_monitor_enable = 'trx_rseg_history_len'",
                    ));
                }
            }
            Err(e) => self.rec.notes.push(note(
                "innodb_metrics",
                format!("INNODB_METRICS cannot be read ({e}): no InnoDB metrics"),
            )),
        }
    }

    pub(super) async fn connect_nodes(&mut self, others: &[Conninfo]) {
        for ci in others {
            let mut ci = ci.clone();
            ci.database = None;
            let name = endpoint_name(&ci);
            match Session::connect(&ci).await {
                Ok(session) => {
                    self.rec.cost.connections += 1;
                    self.nodes.push(Node {
                        name,
                        session: Some(session),
                        counters: Vec::new(),
                    });
                }
                Err(e) => self.rec.notes.push(note(
                    "galera",
                    format!("node {name} cannot be reached ({e}): its wsrep status is not read"),
                )),
            }
        }
    }

    /// The device of the data directory (`@@datadir`, readable by every user), watched on its
    /// own.
    pub(super) async fn watch_devices(&mut self) {
        let dir = self
            .query("SELECT @@datadir")
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()));
        match dir {
            Some(dir) => {
                let dir = dir.trim_end_matches('/').to_string();
                self.rec.watch_devices(&[(dir, "data directory")]);
            }
            None => self.rec.notes.push(note(
                "os",
                "@@datadir cannot be read: the data directory's device is not watched on its own",
            )),
        }
    }

    pub(super) async fn find_server_process(&mut self) {
        let tid = self
            .query(&sql::own_os_thread(&self.caps))
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.first().cloned().flatten()))
            .and_then(|v| v.parse::<i64>().ok());
        self.server_pid = tid.and_then(server_process);
        if self.server_pid.is_none() {
            self.rec.notes.push(note(
                "os",
                format!(
                    "the server's process is not visible from here (its thread {} is not a \
                     mariadbd or mysqld process on this machine): server CPU is not shown",
                    tid.map_or("?".into(), |t| t.to_string())
                ),
            ));
        }
    }
}
