//! The TPC-H run on the engine: each query stream is a client (TPC-H v3.0.1, clause 5.1.2.3:
//! a stream is one session sending its queries one after the other), and each (stream, query)
//! is a transaction type of its own, so the engine's per-type histograms are the per-stream,
//! per-query times the report shows and the metrics are computed from (clause 5.4).
//!
//! The performance test (clause 5.3) in one engine run:
//! - client 0 is the power test's stream 00 (clause 5.3.3): RF1, the 22 queries in
//!   Appendix A's order 0, RF2;
//! - clients 1..=S are the throughput test's query streams (clause 5.3.4), each in its own
//!   Appendix A order, and client S+1 its refresh stream, S pairs of RF1 and RF2 one after
//!   the other (clause 5.3.5). They wait, held by an order between clients
//!   (`workload::Order`), until the power test's last item was answered: the two tests never
//!   overlap, and the time held is reported apart, never as any query's latency.
//!
//! `--test power` or `--test throughput` runs one of them; a single query (`tpch-q5`) is a
//! closed loop of that query on `-c` clients with fresh substitution parameters each time
//! (`--validation`: qgen's validation values each time), for tuning.
//!
//! A query that fails (a `--query-timeout`, an error) is counted failed and its stream goes
//! on to the next (`Workload::continues_after`): a timed-out query is reported as such, the
//! run is not aborted. Rows returned are counted per type; a validation run at SF 1 also keeps
//! the values of each type's first execution, as text, for `queries::compare`
//! ([`Tpch::keeping_values`]; any other run reads only the row count, as before).
//!
//! Must not touch: clocks (the engine times each query), argv, output.

use std::sync::{Arc, Mutex};

use sut::{Error, QueryMode, Session, StmtId, Value};
use workload::{ClientWorkload, Due, Order, Rng, TxnContext, TxnType, Workload};

use super::queries::{self, Dialect};

/// One thing a stream sends: a query's text (its parameters substituted when the stream was
/// built), or a refresh function's statements (RF1's inserts, RF2's deletes; one transaction).
#[derive(Clone, Debug)]
pub enum Item {
    Query(String),
    Refresh(Vec<String>),
}

/// One stream: what it sends, in order, and each item's transaction type.
#[derive(Clone, Debug)]
pub struct Stream {
    pub items: Vec<(u32, Item)>,
    /// Held until the power test is over (the throughput test's streams).
    pub after_power: bool,
}

/// How the run draws its queries.
#[derive(Clone, Debug)]
pub enum Plan {
    /// The performance test's streams, one per client.
    Streams(Vec<Arc<Stream>>),
    /// One query again and again on every client (`tpch-qN`); parameters drawn per
    /// execution, or qgen's validation values.
    Repeat { query: u8, validation: bool },
}

/// Rows returned, per transaction type: executions that returned, rows in all, least and
/// most; and the executions `--query-timeout` cancelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    pub executions: u64,
    pub total: u64,
    pub min: u64,
    pub max: u64,
    pub timed_out: u64,
}

impl Rows {
    pub(crate) fn add(&mut self, n: u64) {
        if self.executions == 0 {
            (self.min, self.max) = (n, n);
        }
        self.executions += 1;
        self.total += n;
        self.min = self.min.min(n);
        self.max = self.max.max(n);
    }

    /// One execution's outcome: its rows, or a timeout counted apart (any other error is
    /// the engine's to count); the outcome passed on.
    pub(crate) fn outcome(&mut self, r: Result<u64, Error>) -> Result<(), Error> {
        match r {
            Ok(rows) => {
                self.add(rows);
                Ok(())
            }
            Err(e) => {
                if matches!(&e, Error::Db(d) if is_timeout(&d.code)) {
                    self.timed_out += 1;
                }
                Err(e)
            }
        }
    }

    /// A client's rows per type added to the run's, when the client is dropped.
    pub(crate) fn merge_into(merged: &Mutex<Vec<Rows>>, mine: &[Rows]) {
        if let Ok(mut m) = merged.lock() {
            for (a, b) in m.iter_mut().zip(mine) {
                a.merge(b);
            }
        }
    }

    pub(crate) fn merge(&mut self, o: &Rows) {
        self.timed_out += o.timed_out;
        if o.executions == 0 {
            return;
        }
        if self.executions == 0 {
            *self = Rows {
                timed_out: self.timed_out,
                ..*o
            };
            return;
        }
        self.executions += o.executions;
        self.total += o.total;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }
}

/// The result a validation run keeps of a type's first execution: the rows it returned in
/// all, and the first of them (at most the answer set's number), each value as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kept {
    pub total: u64,
    pub rows: Vec<Vec<Option<String>>>,
}

pub struct Tpch {
    dialect: Dialect,
    scale: f64,
    types: Vec<TxnType>,
    /// Per type: a refresh function (it writes).
    refresh: Vec<bool>,
    plan: Plan,
    /// The power test's items, answered one by one; the throughput streams wait for all.
    power: Option<Arc<Order>>,
    power_items: u64,
    /// `--query-timeout`, milliseconds.
    timeout_ms: Option<u64>,
    rows: Arc<Mutex<Vec<Rows>>>,
    /// Per type: the rows to keep of its first result (`None`: only count them).
    keep: Arc<[Option<usize>]>,
    kept: Arc<Mutex<Vec<Option<Kept>>>>,
}

impl Tpch {
    pub fn new(
        dialect: Dialect,
        scale: f64,
        types: Vec<TxnType>,
        plan: Plan,
        timeout_ms: Option<u64>,
    ) -> Tpch {
        let power_items = match &plan {
            Plan::Streams(s) => (s.iter())
                .filter(|s| !s.after_power)
                .map(|s| s.items.len() as u64)
                .sum(),
            Plan::Repeat { .. } => 0,
        };
        let held = matches!(&plan, Plan::Streams(s) if s.iter().any(|s| s.after_power));
        let mut refresh = vec![false; types.len()];
        if let Plan::Streams(streams) = &plan {
            for (t, item) in streams.iter().flat_map(|s| &s.items) {
                if let Some(r) = refresh.get_mut(*t as usize) {
                    *r = matches!(item, Item::Refresh(_));
                }
            }
        }
        Tpch {
            refresh,
            dialect,
            scale,
            rows: Arc::new(Mutex::new(vec![Rows::default(); types.len()])),
            types,
            plan,
            power: held.then(|| Arc::new(Order::new(power_items))),
            power_items,
            timeout_ms,
            keep: Arc::from([]),
            kept: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// The query text of each transaction type, where it has one (a stream's query); `None`
    /// for a refresh function and a loop's query (drawn per execution). For the plans
    /// (`super::plans`), after the run.
    pub fn texts(&self) -> Vec<Option<&str>> {
        let mut t = vec![None; self.types.len()];
        if let Plan::Streams(streams) = &self.plan {
            for (k, item) in streams.iter().flat_map(|s| &s.items) {
                if let (Some(slot), Item::Query(sql)) = (t.get_mut(*k as usize), item) {
                    *slot = Some(sql.as_str());
                }
            }
        }
        t
    }

    /// Keep the values of each type's first result, at most `keep[type]` rows of it (a
    /// validation run at SF 1, whose answers are known). Those types' queries are sent as
    /// `Session::simple_query`, which returns every row as text (the same Query message, or
    /// COM_QUERY, as a counted execution: the server and the statement ledger see no
    /// difference); the time of a query then includes building its rows' strings.
    pub fn keeping_values(mut self, keep: Vec<Option<usize>>) -> Tpch {
        self.kept = Arc::new(Mutex::new(vec![None; keep.len()]));
        self.keep = keep.into();
        self
    }

    /// The kept results per type (see [`Tpch::keeping_values`]), once the clients are gone.
    pub fn kept(&self) -> Vec<Option<Kept>> {
        self.kept.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// Rows per transaction type, once the clients are gone (after the engine returned).
    pub fn rows(&self) -> Vec<Rows> {
        self.rows.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Workload for Tpch {
    type Client = Client;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> Client {
        let stream = match &self.plan {
            Plan::Streams(s) => s.get(client_id as usize).cloned(),
            Plan::Repeat { .. } => None,
        };
        Client {
            dialect: self.dialect,
            scale: self.scale,
            repeat: match self.plan {
                Plan::Repeat { query, validation } => Some((query, validation)),
                Plan::Streams(_) => None,
            },
            is_power: stream.as_ref().is_some_and(|s| !s.after_power),
            stream,
            next: 0,
            power: self.power.clone(),
            power_items: self.power_items,
            timeout_ms: self.timeout_ms,
            text: None,
            rows: vec![Rows::default(); self.types.len()],
            merged: self.rows.clone(),
            keep: self.keep.clone(),
            kept: self.kept.clone(),
        }
    }

    /// A failed or timed-out query is reported as such; its stream goes on (clause 5.3 asks
    /// for every query's time, and one slow query must not cost the others theirs).
    fn continues_after(&self, _e: &Error) -> bool {
        true
    }

    fn read_only(&self, txn: usize) -> bool {
        !self.refresh.get(txn).copied().unwrap_or(true)
    }
}

pub struct Client {
    dialect: Dialect,
    scale: f64,
    repeat: Option<(u8, bool)>,
    stream: Option<Arc<Stream>>,
    is_power: bool,
    next: usize,
    power: Option<Arc<Order>>,
    power_items: u64,
    timeout_ms: Option<u64>,
    text: Option<StmtId>,
    rows: Vec<Rows>,
    merged: Arc<Mutex<Vec<Rows>>>,
    keep: Arc<[Option<usize>]>,
    kept: Arc<Mutex<Vec<Option<Kept>>>>,
}

impl Drop for Client {
    fn drop(&mut self) {
        // A power stream that ends early (-T, Ctrl-C) frees the throughput streams.
        if self.is_power {
            if let Some(o) = &self.power {
                let n = self.stream.as_ref().map_or(0, |s| s.items.len());
                for i in self.next..n {
                    o.answered(i as u64);
                }
            }
        }
        Rows::merge_into(&self.merged, &self.rows);
    }
}

/// The statement that bounds every statement of the session (`--query-timeout`): PostgreSQL's
/// `statement_timeout`, MariaDB's `max_statement_time` (seconds) and MySQL's
/// `max_execution_time` (milliseconds, SELECT only), tried in that order on MySQL.
fn timeout_sql(d: Dialect, ms: u64) -> Vec<String> {
    match d {
        Dialect::Postgres => vec![format!("SET statement_timeout = {ms}")],
        Dialect::Mysql => vec![
            format!("SET SESSION max_statement_time = {}", ms as f64 / 1000.0),
            format!("SET SESSION max_execution_time = {ms}"),
        ],
    }
}

/// Bound every statement of `session` to `ms` (`--query-timeout`): the first of
/// [`timeout_sql`]'s statements the server takes; its error when it takes none.
pub(crate) async fn set_query_timeout(
    session: &mut Session,
    d: Dialect,
    ms: u64,
) -> Result<(), Error> {
    let mut last = None;
    for sql in timeout_sql(d, ms) {
        match session.simple_query(&sql).await {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Whether an error is a statement timeout (`--query-timeout`): PostgreSQL's 57014
/// (query_canceled), MariaDB's 1969 (ER_STATEMENT_TIMEOUT), MySQL's 3024
/// (ER_QUERY_TIMEOUT).
pub fn is_timeout(code: &str) -> bool {
    matches!(code, "57014" | "1969" | "3024")
}

impl ClientWorkload for Client {
    async fn on_connect(&mut self, session: &mut Session, _mode: QueryMode) -> Result<(), Error> {
        self.text = Some(session.register_verbatim());
        match self.timeout_ms {
            Some(ms) => set_query_timeout(session, self.dialect, ms).await,
            None => Ok(()),
        }
    }

    fn due(&mut self) -> Due {
        match &self.stream {
            Some(s) if self.next >= s.items.len() => Due::Done,
            Some(_) => Due::Now,
            None if self.repeat.is_some() => Due::Now,
            None => Due::Done,
        }
    }

    fn held_by(&self) -> Option<(&Order, u64)> {
        match &self.stream {
            Some(s) if s.after_power => Some((self.power.as_deref()?, self.power_items)),
            _ => None,
        }
    }

    fn next_txn(&mut self, _rng: &mut Rng) -> Option<usize> {
        match &self.stream {
            Some(s) => s.items.get(self.next).map(|(t, _)| *t as usize),
            None => Some(0),
        }
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let id = match self.text {
            Some(id) => id,
            None => *self.text.insert(session.register_verbatim()),
        };
        let at = self.next;
        self.next += 1;
        // A stream's items are its own (shared, never copied); a loop's query is drawn now.
        let stream = self.stream.clone();
        let fresh;
        let item = match (&stream, self.repeat) {
            (Some(s), _) => match s.items.get(at) {
                Some((_, i)) => i,
                None => return Ok(()),
            },
            (None, Some((q, validation))) => {
                let p = match validation {
                    true => queries::validation(q, self.scale),
                    false => {
                        queries::params(q, self.scale, &mut queries::Rng::new(cx.rng.next_u64()))
                    }
                };
                fresh = Item::Query(queries::text(self.dialect, &p));
                &fresh
            }
            (None, None) => return Ok(()),
        };
        // A type's first result is kept, whichever client returns it; once it is, the
        // type's executions only count their rows again (a loop on many clients holds one).
        let keep = (self.keep.get(txn).copied().flatten()).filter(|_| {
            self.kept
                .lock()
                .is_ok_and(|k| k.get(txn).is_some_and(Option::is_none))
        });
        let mut fetched = None;
        cx.timer.start();
        let r = match item {
            Item::Query(sql) if keep.is_none() => session
                .execute(id, &[Value::Text(sql)])
                .await
                .map(|r| r.rows),
            Item::Query(sql) => session.simple_query(sql).await.map(|rows| {
                let n = rows.len() as u64;
                fetched = Some(rows);
                n
            }),
            Item::Refresh(statements) => refresh(session, id, statements).await.map(|_| 0),
        };
        cx.timer.end(0, r.is_ok());
        if let (Some(mut rows), Some(n)) = (fetched, keep) {
            if let Some(slot) = (self.kept.lock().ok().as_deref_mut())
                .and_then(|k| k.get_mut(txn))
                .filter(|k| k.is_none())
            {
                let total = rows.len() as u64;
                rows.truncate(n);
                *slot = Some(Kept { total, rows });
            }
        }
        if self.is_power {
            if let Some(o) = &self.power {
                o.answered(at as u64);
            }
        }
        match (r, item) {
            (Ok(_), Item::Refresh(_)) => Ok(()),
            (r, _) => self.rows[txn].outcome(r),
        }
    }
}

/// A refresh function as one transaction: its statements between BEGIN and COMMIT, rolled
/// back when one fails (the engine counts it failed).
async fn refresh(session: &mut Session, id: StmtId, statements: &[String]) -> Result<(), Error> {
    session.execute(id, &[Value::Text("BEGIN")]).await?;
    for sql in statements {
        if let Err(e) = session.execute(id, &[Value::Text(sql)]).await {
            let _ = session.execute(id, &[Value::Text("ROLLBACK")]).await;
            return Err(e);
        }
    }
    session.execute(id, &[Value::Text("COMMIT")]).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_executions_total_and_range() {
        let mut a = Rows::default();
        a.add(10);
        a.add(4);
        let mut b = Rows::default();
        b.add(7);
        a.merge(&b);
        a.merge(&Rows::default());
        assert_eq!(
            a,
            Rows {
                executions: 3,
                total: 21,
                min: 4,
                max: 10,
                timed_out: 0
            }
        );
    }

    #[test]
    fn timeouts_are_told_apart_from_other_errors() {
        assert!(is_timeout("57014") && is_timeout("1969") && is_timeout("3024"));
        assert!(!is_timeout("42P01") && !is_timeout("1064"));
    }
}

#[cfg(test)]
mod ledger_tests {
    use super::*;
    use measure::ledger::Kind;

    /// The statement ledger counts each query as a select, as the server does (MySQL's
    /// `Com_select`, PostgreSQL's `pg_stat_statements`): its kind is read from the text.
    #[test]
    fn every_query_text_is_a_select_to_the_ledger() {
        for q in 1..=22u8 {
            for d in [Dialect::Postgres, Dialect::Mysql] {
                let sql = queries::text(d, &queries::validation(q, 1.0));
                assert_eq!(Kind::of_sql(&sql), Kind::Select, "Q{q} {d:?}:\n{sql}");
            }
        }
    }
}
