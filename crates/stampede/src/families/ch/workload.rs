//! CH-benCHmark on the engine: one run whose first `oltp` clients are TPC-C's terminals
//! (`workload::tpcc`, unchanged: the same deck, inputs, keying and think times) and whose other
//! clients are analytic clients sending the 22 queries (`super::queries`), each query once per
//! round, round after round, until the run ends.
//!
//! Transaction types: TPC-C's five first, at the indices `workload::tpcc::Kind` gives them, so
//! everything TPC-C's runner reads by index (its ledger claims, its section) reads the same;
//! then one type per query, `Q1` to `Q22`. The engine's per-type histograms are then TPC-C's
//! latencies and each query's times, measured apart.
//!
//! The order: analytic client `k` (from 0) sends the queries in the order of TPC-H's query
//! stream `k + 1` (TPC-H 3.0.1 Appendix A, `tpch::queries::order`), so two analytic clients
//! rarely run the same query at once; CH-benCHmark's paper leaves the order to the
//! implementation (go-tpc starts thread `k` at query `k mod 22` and goes on in number order).
//!
//! An analytic query is sent as its text on the simple protocol, whatever `-M` says for TPC-C
//! (it has no parameters), in autocommit: one read-only transaction. A query cancelled by
//! `--query-timeout` is counted failed and its client goes on to the next query
//! ([`Workload::continues_after`]); any other error is the engine's as for TPC-C.
//!
//! Must not touch: clocks, argv, output.

use std::sync::{Arc, Mutex};

use sut::{Error, QueryMode, Session, StmtId, Value};
use workload::tpcc::{Tpcc, TpccClient};
use workload::{ClientWorkload, Rng, TxnContext, TxnType, Workload};

use super::queries::{self, QUERIES};
use crate::families::tpch::queries::{order, Dialect as TpchDialect};
use crate::families::tpch::workload::{is_timeout, set_query_timeout, Rows};

/// TPC-C's transaction types, first in `txn_types()`.
pub const OLTP_TYPES: usize = workload::tpcc::Kind::ALL.len();

/// The transaction type of query `q` (1 to 22).
pub fn query_type(q: u8) -> usize {
    OLTP_TYPES + usize::from(q) - 1
}

pub struct Ch {
    tpcc: Arc<Tpcc>,
    oltp: u32,
    dialect: TpchDialect,
    texts: Arc<Vec<String>>,
    types: Vec<TxnType>,
    timeout_ms: Option<u64>,
    rows: Arc<Mutex<Vec<Rows>>>,
}

impl Ch {
    /// `oltp` TPC-C clients, the rest analytic, on a target of `dialect`.
    pub fn new(tpcc: Arc<Tpcc>, oltp: u32, dialect: sut::Dialect, timeout_ms: Option<u64>) -> Ch {
        let texts: Vec<String> = (1..=QUERIES).map(|q| queries::text(dialect, q)).collect();
        let mut types = tpcc.txn_types().to_vec();
        types.extend((1..=QUERIES).zip(&texts).map(|(q, t)| TxnType {
            name: format!("Q{q}"),
            statements: vec![t.clone()],
        }));
        Ch {
            tpcc,
            oltp,
            dialect: match dialect {
                sut::Dialect::Postgres => TpchDialect::Postgres,
                sut::Dialect::MySql => TpchDialect::Mysql,
            },
            texts: Arc::new(texts),
            types,
            timeout_ms,
            rows: Arc::new(Mutex::new(vec![Rows::default(); usize::from(QUERIES)])),
        }
    }

    /// Rows each query returned (index `q - 1`), once the clients are gone.
    pub fn rows(&self) -> Vec<Rows> {
        self.rows.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Workload for Ch {
    type Client = Client;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> Client {
        if client_id < self.oltp {
            return Client::Oltp(self.tpcc.new_client(client_id));
        }
        let k = (client_id - self.oltp) as usize;
        Client::Analytic(Analytic {
            order: order(k + 1),
            next: 0,
            texts: self.texts.clone(),
            text: None,
            dialect: self.dialect,
            timeout_ms: self.timeout_ms,
            rows: vec![Rows::default(); usize::from(QUERIES)],
            merged: self.rows.clone(),
        })
    }

    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        self.tpcc.validate(mode)
    }

    /// A query `--query-timeout` cancelled: counted failed, the client goes on (module
    /// header). TPC-C's sessions carry no timeout, so this is never one of theirs.
    fn continues_after(&self, e: &Error) -> bool {
        matches!(e, Error::Db(d) if is_timeout(&d.code))
    }

    fn read_only(&self, txn: usize) -> bool {
        txn >= OLTP_TYPES || self.tpcc.read_only(txn)
    }
}

/// One per client, made on its engine thread and never moved: the size between variants costs
/// nothing, and boxing TPC-C's would add a pointer to follow on every transaction.
#[allow(clippy::large_enum_variant)]
pub enum Client {
    Oltp(TpccClient),
    Analytic(Analytic),
}

pub struct Analytic {
    /// The order of the 22 queries, round after round (module header).
    order: [u8; 22],
    /// Queries dealt so far.
    next: usize,
    texts: Arc<Vec<String>>,
    text: Option<StmtId>,
    dialect: TpchDialect,
    timeout_ms: Option<u64>,
    rows: Vec<Rows>,
    merged: Arc<Mutex<Vec<Rows>>>,
}

impl Drop for Analytic {
    fn drop(&mut self) {
        Rows::merge_into(&self.merged, &self.rows);
    }
}

impl Analytic {
    async fn query(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let id = match self.text {
            Some(id) => id,
            None => *self.text.insert(session.register_verbatim()),
        };
        let i = txn - OLTP_TYPES;
        let texts = self.texts.clone();
        let Some(sql) = texts.get(i) else {
            return Ok(());
        };
        cx.timer.start();
        let r = session.execute(id, &[Value::Text(sql)]).await;
        cx.timer.end(0, r.is_ok());
        self.rows[i].outcome(r.map(|r| r.rows))
    }
}

impl ClientWorkload for Client {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        match self {
            Client::Oltp(c) => c.on_connect(session, mode).await,
            Client::Analytic(a) => {
                a.text = Some(session.register_verbatim());
                match a.timeout_ms {
                    Some(ms) => set_query_timeout(session, a.dialect, ms).await,
                    None => Ok(()),
                }
            }
        }
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        match self {
            Client::Oltp(c) => c.execute(txn, session, cx).await,
            Client::Analytic(a) => a.query(txn, session, cx).await,
        }
    }

    fn failed_at(&self) -> Option<String> {
        match self {
            Client::Oltp(c) => c.failed_at(),
            Client::Analytic(_) => None,
        }
    }

    fn failed_command(&self) -> Option<usize> {
        match self {
            Client::Oltp(c) => c.failed_command(),
            Client::Analytic(_) => None,
        }
    }

    /// TPC-C's deck for a terminal; the next query of the round for an analytic client
    /// (asked once per new transaction, not for a retry).
    fn next_txn(&mut self, rng: &mut Rng) -> Option<usize> {
        match self {
            Client::Oltp(c) => c.next_txn(rng),
            Client::Analytic(a) => {
                let q = a.order[a.next % a.order.len()];
                a.next += 1;
                Some(query_type(q))
            }
        }
    }

    fn pause_before_us(&mut self, txn: usize, rng: &mut Rng) -> u64 {
        match self {
            Client::Oltp(c) => c.pause_before_us(txn, rng),
            Client::Analytic(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::tpcc::spec::NuC;

    fn ch(oltp: u32) -> Ch {
        let mut rng = Rng::from_seed(1);
        let c = NuC::for_load(&mut rng);
        let opts = workload::tpcc::Options {
            warehouses: 1,
            c: NuC::for_run(&c, &mut rng),
            think: false,
        };
        let tpcc = Tpcc::new(opts, sut::Dialect::Postgres).unwrap();
        Ch::new(Arc::new(tpcc), oltp, sut::Dialect::Postgres, None)
    }

    #[test]
    fn tpcc_keeps_its_indices_and_each_query_has_its_type() {
        let w = ch(2);
        let t = w.txn_types();
        assert_eq!(t.len(), OLTP_TYPES + 22);
        assert_eq!(t[0].name, "new-order");
        assert_eq!(t[OLTP_TYPES - 1].name, "stock-level");
        assert_eq!(t[query_type(1)].name, "Q1");
        assert_eq!(t[query_type(22)].name, "Q22");
        assert!(w.read_only(query_type(5)) && !w.read_only(0));
        assert!(w.read_only(workload::tpcc::Kind::StockLevel as usize));
    }

    #[test]
    fn the_first_clients_are_terminals_and_each_analytic_one_deals_every_query_per_round() {
        let w = ch(2);
        let mut rng = Rng::from_seed(7);
        for id in 0..2 {
            let mut c = w.new_client(id);
            assert!(matches!(c, Client::Oltp(_)));
            assert!(c.next_txn(&mut rng).is_some_and(|t| t < OLTP_TYPES));
        }
        let mut seen = Vec::new();
        for id in 2..4 {
            let mut c = w.new_client(id);
            let round: Vec<usize> = (0..44).filter_map(|_| c.next_txn(&mut rng)).collect();
            let mut first: Vec<usize> = round[..22].to_vec();
            first.sort_unstable();
            assert_eq!(first, (1..=22).map(query_type).collect::<Vec<_>>());
            // The second round repeats the first.
            assert_eq!(round[..22], round[22..]);
            seen.push(round[0]);
        }
        // Two analytic clients start on different queries (streams 1 and 2 of Appendix A).
        assert_ne!(seen[0], seen[1]);
    }
}
