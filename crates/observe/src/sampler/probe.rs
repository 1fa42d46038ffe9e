//! The probe at start: who the observer's role is and what it may see, which optional views
//! and `pg_stat_statements` columns the server has, whether `query_id` is computed; a note for
//! each thing that cannot be seen, with the fix.

use super::*;

impl Sampler {
    pub(super) async fn probe(&mut self) -> Result<(), Error> {
        let rows = self.query(&sql::probe()).await.map_err(Error::Query)?;
        let r = rows
            .first()
            .ok_or_else(|| Error::Unsupported("the current role is not in pg_roles".into()))?;
        self.role = r[0].clone().unwrap_or_default();
        let (superuser, read_all, monitor) = (sql::flag(&r[1]), sql::flag(&r[2]), sql::flag(&r[3]));
        self.sees_all = superuser || read_all || monitor;
        let compute_query_id = r[4].clone();
        let preloaded = sql::flag(&r[5]);
        self.caps.wal_view = sql::flag(&r[6]);
        self.caps.checkpointer_view = sql::flag(&r[7]);
        self.caps.io_view = sql::flag(&r[8]);
        self.io_ok = self.caps.io_view;
        let pss_schema = r[9].clone();

        if !self.sees_all {
            self.rec.notes.push(note(
                "privileges",
                format!(
                    "role {role} is not a member of pg_read_all_stats or pg_monitor: wait events, \
                     states and query texts of other roles' sessions and of the server's \
                     background processes are hidden (NULL / \"<insufficient privilege>\"), and \
                     so are other roles' statements in pg_stat_statements; \
                     GRANT pg_monitor TO {role}",
                    role = sql::quote_ident(&self.role)
                ),
            ));
        }
        match pss_schema {
            None => {
                let how = if preloaded {
                    "pg_stat_statements is loaded but not installed in this database: \
                     CREATE EXTENSION pg_stat_statements"
                } else {
                    "pg_stat_statements is not installed: add it to shared_preload_libraries \
                     and CREATE EXTENSION pg_stat_statements"
                };
                self.rec.notes.push(note(
                    "pg_stat_statements",
                    format!("{how}; top SQL is not available"),
                ));
            }
            Some(schema) => {
                let cols: Vec<String> = self
                    .query(&sql::statement_columns(&schema))
                    .await
                    .map(|rows| rows.into_iter().filter_map(|r| r[0].clone()).collect())
                    .unwrap_or_default();
                match StatementCols::from_columns(&schema, &cols) {
                    None => self.rec.notes.push(note(
                        "pg_stat_statements",
                        "pg_stat_statements has columns this stampede does not know; top SQL \
                         is not available",
                    )),
                    Some(c) => {
                        // A test read: created but not preloaded fails here.
                        match self.query(&sql::statements(&c, false)).await {
                            Ok(_) => {
                                self.caps.statements = Some(c);
                                self.stmts_ok = true;
                            }
                            Err(e) => self.rec.notes.push(note(
                                "pg_stat_statements",
                                format!(
                                    "pg_stat_statements cannot be read ({e}); add it to \
                                     shared_preload_libraries and restart the server; top SQL \
                                     is not available"
                                ),
                            )),
                        }
                    }
                }
            }
        }
        if self.caps.activity_query_id {
            let on = matches!(compute_query_id.as_deref(), Some("on" | "regress"))
                || (compute_query_id.as_deref() == Some("auto") && preloaded);
            if !on {
                self.caps.activity_query_id = false;
                self.rec.notes.push(note(
                    "query_id",
                    format!(
                        "compute_query_id is {}: waits cannot be joined to statements; \
                         set compute_query_id = on (or auto with pg_stat_statements loaded)",
                        compute_query_id.as_deref().unwrap_or("unknown")
                    ),
                ));
            }
        } else {
            self.rec.notes.push(note(
                "query_id",
                "PostgreSQL before 14 has no pg_stat_activity.query_id: waits are not joined \
                 to statements",
            ));
        }
        if !self.caps.wal_view {
            self.rec.notes.push(note(
                "pg_stat_wal",
                "pg_stat_wal needs PostgreSQL 14 or later: no WAL counters",
            ));
        }
        if !self.caps.io_view {
            self.rec.notes.push(note(
                "pg_stat_io",
                "pg_stat_io needs PostgreSQL 16 or later: no I/O by backend type",
            ));
        }
        Ok(())
    }
}
