//! TPC-C (revision 5.11): the five transactions of clause 2 over the nine tables of clause 1,
//! on go-tpc 1.0.12's schema on PostgreSQL and tpcc-mysql's on MySQL/MariaDB (`load::tpcc`
//! creates and loads both).
//!
//! Owns: each transaction's inputs (clause 2.x.1, one file per transaction), its steps (2.x.2),
//! the mix (5.2.4), keying and think times (5.2.5.7), the terminals' home warehouse and
//! district, and counters the result needs (rollbacks, skipped deliveries). The SQL of each step
//! sits in [`sql`], one [`sql::Dialect`] per server family, which each client takes from its
//! session's protocol when it connects; the logic here is written once.
//! Not owned: time, retries (the engine re-submits a transaction that failed with a
//! serialization failure or deadlock, with the same inputs, clause 2.1.2's "re-submitted"),
//! the tables, the consistency checks ([`consistency`]).
//!
//! ## Terminals (clause 2.4.1.1, 2.8.1.1, 4.2.2)
//! Client `i` is terminal `i`: its home warehouse is `i % W + 1` for the whole run (clients are
//! spread over the warehouses evenly), and its Stock-Level district `(i / W) % 10 + 1`, so with
//! 10 clients per warehouse (`--spec`) every (warehouse, district) pair has one terminal, as
//! clause 2.8.1.1 asks.
//!
//! ## The mix (clause 5.2.4.2, 5.2.3)
//! Each terminal deals its transaction types from its own deck of 100 cards, 45 New-Order,
//! 43 Payment and 4 each of Order-Status, Delivery and Stock-Level, shuffled each time it is
//! used up: every 100 transactions of a terminal hold exactly the specification's minimum
//! percentages (Payment 43%, the three others 4%), New-Order the rest.
//!
//! ## Rollbacks (clause 2.4.1.4, 2.4.2.3)
//! 1% of New-Orders carry an unused item id as their last line; the line's statement finds no
//! item, and the transaction is rolled back on the server (a real ROLLBACK, not a client-side
//! skip). It counts as a completed New-Order (clause 5.4.2 counts rolled-back New-Orders in
//! tpmC) and in [`Counters::rollbacks`], so the commit check expects one server commit fewer.

pub mod consistency;
mod delivery;
mod new_order;
mod order_status;
mod payment;
pub mod spec;
pub mod sql;
mod stock_level;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sut::{Error, QueryMode, Session, StmtId, Value};

use crate::{ClientWorkload, Rng, TxnContext, TxnType, Workload};
use spec::{NuC, Uniform, DISTRICTS};

/// The five transaction types, in the order of `txn_types()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::NewOrder,
        Kind::Payment,
        Kind::OrderStatus,
        Kind::Delivery,
        Kind::StockLevel,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new-order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order-status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock-level",
        }
    }

    /// Cards in a deck of 100 (module header).
    pub fn cards(self) -> u32 {
        match self {
            Kind::NewOrder => 45,
            Kind::Payment => 43,
            _ => 4,
        }
    }
}

/// How the run is done.
#[derive(Clone, Debug)]
pub struct Options {
    /// Warehouses in the database (`-w`): the range of remote warehouses.
    pub warehouses: u32,
    /// NURand's run-time constants (C_LAST chosen against the load's, clause 2.1.6.1).
    pub c: NuC,
    /// Keying and think times of clause 5.2.5.7 (`--spec`), negative exponential think times
    /// truncated at 10 times their mean.
    pub think: bool,
}

/// What the transactions count beyond the engine's counts (shared by all clients).
#[derive(Debug, Default)]
pub struct Counters {
    /// New-Orders rolled back on purpose (clause 2.4.2.3), counted as completed transactions.
    pub rollbacks: AtomicU64,
    /// Districts a Delivery found without an undelivered order (clause 2.7.4.2).
    pub delivery_skipped: AtomicU64,
    /// Order lines supplied by a remote warehouse (clause 2.4.1.5: about 1%).
    pub remote_lines: AtomicU64,
    /// Order lines in committed New-Orders.
    pub lines: AtomicU64,
    /// Payments and Order-Status calls that chose the customer by last name (about 60%).
    pub by_last_name: AtomicU64,
}

/// The TPC-C workload.
pub struct Tpcc {
    opts: Options,
    types: Vec<TxnType>,
    counters: Arc<Counters>,
}

impl Tpcc {
    /// The workload for a target of `protocol`: the transaction types list its dialect's
    /// statements (each client takes the dialect of its own session, [`sql::for_target`]).
    pub fn new(opts: Options, protocol: sut::Dialect) -> Result<Tpcc, String> {
        if opts.warehouses == 0 {
            return Err("-w (warehouses) must be at least 1".into());
        }
        let d = sql::for_target(protocol);
        let types = vec![
            txn_type(
                Kind::NewOrder,
                &[
                    &[d.begin],
                    d.no_customer,
                    d.no_district,
                    d.no_order,
                    d.no_line,
                    &[d.commit],
                ],
            ),
            txn_type(
                Kind::Payment,
                &[
                    &[d.begin],
                    d.pay_district,
                    d.pay_customer_id,
                    d.pay_customer_name,
                    &[d.commit],
                ],
            ),
            txn_type(
                Kind::OrderStatus,
                &[
                    &[d.begin],
                    d.os_customer_id,
                    d.os_customer_name,
                    d.os_order,
                    d.os_lines,
                    &[d.commit],
                ],
            ),
            txn_type(Kind::Delivery, &[&[d.begin], d.delivery, &[d.commit]]),
            txn_type(Kind::StockLevel, &[d.stock_level]),
        ];
        Ok(Tpcc {
            opts,
            types,
            counters: Arc::new(Counters::default()),
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }
}

/// A type's statements for `-r`: one entry per step (its statements joined by `;`).
fn txn_type(k: Kind, steps: &[&[&str]]) -> TxnType {
    TxnType {
        name: k.name().into(),
        statements: steps.iter().map(|s| s.join("; ")).collect(),
    }
}

impl Workload for Tpcc {
    type Client = TpccClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> TpccClient {
        let w = self.opts.warehouses;
        TpccClient {
            opts: self.opts.clone(),
            counters: self.counters.clone(),
            home_w: (client_id % w + 1) as i64,
            stock_d: ((client_id / w) % DISTRICTS + 1) as i64,
            stmts: None,
            deck: Vec::with_capacity(100),
            last_think: None,
            lines: Vec::with_capacity(15),
            text: String::with_capacity(64),
        }
    }

    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        match mode {
            QueryMode::Simple => Err("tpcc sends its inputs as parameters: use -M extended or \
                                      -M prepared (the default)"
                .into()),
            _ => Ok(()),
        }
    }

    /// Order-Status (clause 2.6) and Stock-Level (clause 2.8) only read; the others write.
    fn read_only(&self, txn: usize) -> bool {
        txn == Kind::OrderStatus as usize || txn == Kind::StockLevel as usize
    }
}

/// A step registered on a session: its statements (one, or several on MySQL: [`sql`]'s
/// "Steps") and the parameters each takes.
#[derive(Clone, Copy)]
struct Step {
    ids: [StmtId; sql::MAX_STATEMENTS],
    needs: [u8; sql::MAX_STATEMENTS],
    len: u8,
}

impl Step {
    fn register(s: &mut Session, mode: QueryMode, sqls: sql::Step) -> Step {
        assert!(
            (1..=sql::MAX_STATEMENTS).contains(&sqls.len()),
            "a step has 1 to {} statements",
            sql::MAX_STATEMENTS
        );
        let mut st = Step {
            ids: [StmtId(0); sql::MAX_STATEMENTS],
            needs: [0; sql::MAX_STATEMENTS],
            len: sqls.len() as u8,
        };
        for (i, text) in sqls.iter().enumerate() {
            st.ids[i] = s.register(text, mode);
            st.needs[i] = sql::params(text) as u8;
        }
        st
    }
}

/// What each transaction's `run` starts from, so none of them repeats the head: the client, its
/// session and context, its statements, and its home warehouse.
struct Txn<'a, 'c> {
    cl: &'a mut TpccClient,
    s: &'a mut Session,
    cx: &'a mut TxnContext<'c>,
    st: Stmts,
    w: i64,
}

/// Statements registered on a session.
#[derive(Clone, Copy)]
struct Stmts {
    begin: StmtId,
    commit: StmtId,
    rollback: StmtId,
    no_customer: Step,
    no_district: Step,
    no_order: Step,
    no_line: Step,
    pay_district: Step,
    pay_customer_id: Step,
    pay_customer_name: Step,
    os_customer_id: Step,
    os_customer_name: Step,
    os_order: Step,
    os_lines: Step,
    delivery: Step,
    stock_level: Step,
}

/// One order line's inputs (clause 2.4.1.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Line {
    item: i64,
    supply_w: i64,
    quantity: i64,
}

/// One terminal.
pub struct TpccClient {
    opts: Options,
    counters: Arc<Counters>,
    home_w: i64,
    stock_d: i64,
    stmts: Option<Stmts>,
    /// Cards left in the deck, dealt from the end.
    deck: Vec<u8>,
    /// The type of the previous transaction, whose think time comes before the next one.
    last_think: Option<Kind>,
    lines: Vec<Line>,
    /// A reused buffer (last names, h_data).
    text: String,
}

impl TpccClient {
    fn stmts(&self) -> Stmts {
        self.stmts.expect("registered on connect")
    }

    /// A random warehouse other than the home one (clause 2.4.1.5, 2.5.1.2); the home one when
    /// there is only one.
    fn other_warehouse(&self, r: &mut Rng) -> i64 {
        let w = self.opts.warehouses as i64;
        if w == 1 {
            return self.home_w;
        }
        let x = r.uniform(1, w - 1);
        if x >= self.home_w {
            x + 1
        } else {
            x
        }
    }

    fn count(&self, c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }
}

/// Run one statement, timed for `-r` as statement `idx` of its type.
async fn stmt(
    s: &mut Session,
    cx: &mut TxnContext<'_>,
    idx: usize,
    id: StmtId,
) -> Result<sut::StmtResult, Error> {
    cx.timer.start();
    let r = s.execute(id, &[]).await;
    cx.timer.end(idx, r.is_ok());
    r
}

/// Run one step, timed for `-r` as statement `idx` of its type: its statements by [`sql`]'s
/// rules ("Steps"); the result is the last one's.
async fn step(
    s: &mut Session,
    cx: &mut TxnContext<'_>,
    idx: usize,
    st: &Step,
    params: &[Value<'_>],
) -> Result<sut::StmtResult, Error> {
    cx.timer.start();
    let r = run_step(s, st, params).await;
    cx.timer.end(idx, r.is_ok());
    r
}

async fn run_step(
    s: &mut Session,
    st: &Step,
    params: &[Value<'_>],
) -> Result<sut::StmtResult, Error> {
    let first = s
        .execute(st.ids[0], &params[..st.needs[0] as usize])
        .await?;
    if st.len == 1 || !found(&first) {
        return Ok(first);
    }
    // The step's parameters, then the first column of the first statement's row.
    let mut all = [Value::Null; 9];
    all[..params.len()].copy_from_slice(params);
    all[params.len()] = s
        .row_value(0)
        .and_then(|v| v.parse::<i64>().ok())
        .map_or(Value::Null, Value::Int);
    let mut last = first;
    for i in 1..st.len as usize {
        last = s.execute(st.ids[i], &all[..st.needs[i] as usize]).await?;
    }
    Ok(last)
}

/// Whether a step found what it looked for: a row returned or affected.
fn found(r: &sut::StmtResult) -> bool {
    r.rows > 0 || r.affected > 0
}

/// A negative exponential think time with mean `mean_s`, truncated at 10 times the mean
/// (clause 5.2.5.4), in microseconds.
fn think_us(r: &mut Rng, mean_s: f64) -> u64 {
    let u = 1.0 - r.double(); // in (0, 1]
    let t = (-u.ln() * mean_s).min(10.0 * mean_s);
    (t * 1e6) as u64
}

impl ClientWorkload for TpccClient {
    async fn on_connect(&mut self, s: &mut Session, mode: QueryMode) -> Result<(), Error> {
        // The session's own dialect (the workload was built for the target's protocol).
        let d = sql::for_target(s.dialect());
        for sql in d.session_setup {
            s.simple_query(sql).await?;
        }
        let begin = s.register(d.begin, mode);
        let commit = s.register(d.commit, mode);
        let rollback = s.register(d.rollback, mode);
        let mut reg = |sqls: sql::Step| Step::register(s, mode, sqls);
        self.stmts = Some(Stmts {
            begin,
            commit,
            rollback,
            no_customer: reg(d.no_customer),
            no_district: reg(d.no_district),
            no_order: reg(d.no_order),
            no_line: reg(d.no_line),
            pay_district: reg(d.pay_district),
            pay_customer_id: reg(d.pay_customer_id),
            pay_customer_name: reg(d.pay_customer_name),
            os_customer_id: reg(d.os_customer_id),
            os_customer_name: reg(d.os_customer_name),
            os_order: reg(d.os_order),
            os_lines: reg(d.os_lines),
            delivery: reg(d.delivery),
            stock_level: reg(d.stock_level),
        });
        crate::prepare_registered(s, mode).await
    }

    async fn execute(
        &mut self,
        txn: usize,
        s: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let kind = Kind::ALL[txn];
        let txn = Txn {
            st: self.stmts(),
            w: self.home_w,
            cl: self,
            s,
            cx,
        };
        match kind {
            Kind::NewOrder => new_order::run(txn).await,
            Kind::Payment => payment::run(txn).await,
            Kind::OrderStatus => order_status::run(txn).await,
            Kind::Delivery => delivery::run(txn).await,
            Kind::StockLevel => stock_level::run(txn).await,
        }
    }

    /// The deck (module header).
    fn next_txn(&mut self, rng: &mut Rng) -> Option<usize> {
        if self.deck.is_empty() {
            for k in Kind::ALL {
                self.deck
                    .extend(std::iter::repeat_n(k as u8, k.cards() as usize));
            }
            // Fisher-Yates.
            for i in (1..self.deck.len()).rev() {
                let j = rng.uniform(0, i as i64) as usize;
                self.deck.swap(i, j);
            }
        }
        self.deck.pop().map(usize::from)
    }

    /// `--spec`: the previous transaction's think time, then this one's keying time.
    fn pause_before_us(&mut self, txn: usize, rng: &mut Rng) -> u64 {
        if !self.opts.think {
            return 0;
        }
        let think = match self.last_think.replace(Kind::ALL[txn]) {
            Some(prev) => think_us(rng, spec::THINK_S[prev as usize]),
            None => 0,
        };
        think + (spec::KEYING_S[txn] * 1e6) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(w: u32) -> Tpcc {
        let c = NuC {
            last: 0,
            customer_id: 0,
            item_id: 0,
        };
        Tpcc::new(
            Options {
                warehouses: w,
                c,
                think: false,
            },
            sut::Dialect::Postgres,
        )
        .unwrap()
    }

    /// Clause 5.2.3's minimums hold in every 100 transactions of a terminal, and 10,000
    /// transactions give exactly 45/43/4/4/4 percent.
    #[test]
    fn the_deck_keeps_the_mix() {
        let w = workload(2);
        let mut c = w.new_client(3);
        let mut r = Rng::from_seed(1);
        let mut counts = [0u32; 5];
        let mut first = Vec::new();
        for i in 0..10_000 {
            let t = c.next_txn(&mut r).unwrap();
            counts[t] += 1;
            if i < 100 {
                first.push(t);
            }
            if (i + 1) % 100 == 0 {
                assert_eq!(counts.iter().sum::<u32>(), i + 1);
                assert!(counts[1] * 100 >= 43 * (i + 1));
                for n in &counts[2..] {
                    assert!(n * 100 >= 4 * (i + 1));
                }
            }
        }
        assert_eq!(counts, [4500, 4300, 400, 400, 400]);
        // Shuffled: the first deck is not dealt in type order.
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_ne!(first, sorted);
    }

    #[test]
    fn terminals_spread_over_warehouses_and_districts() {
        let w = workload(3);
        let mut pairs = std::collections::HashSet::new();
        for id in 0..30 {
            let c = w.new_client(id);
            assert!((1..=3).contains(&c.home_w));
            pairs.insert((c.home_w, c.stock_d));
        }
        // 10 terminals per warehouse: every (warehouse, district) pair exactly once.
        assert_eq!(pairs.len(), 30);
    }

    #[test]
    fn remote_warehouses_are_never_home() {
        let w = workload(4);
        let c = w.new_client(1);
        let mut r = Rng::from_seed(9);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let o = c.other_warehouse(&mut r);
            assert_ne!(o, c.home_w);
            seen[o as usize] = true;
        }
        assert_eq!(seen.iter().filter(|s| **s).count(), 3);
        let one = workload(1).new_client(0);
        assert_eq!(one.other_warehouse(&mut r), 1);
    }

    /// Think times: mean as specified, never above 10 times it (clause 5.2.5.4).
    #[test]
    fn think_times_are_truncated_negative_exponentials() {
        let mut r = Rng::from_seed(5);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let t = think_us(&mut r, 12.0) as f64 / 1e6;
            assert!(t <= 120.0);
            sum += t;
        }
        let mean = sum / n as f64;
        assert!((11.7..12.3).contains(&mean), "{mean}");
        let w = Tpcc::new(
            Options {
                think: true,
                ..workload(1).opts
            },
            sut::Dialect::Postgres,
        )
        .unwrap();
        let mut c = w.new_client(0);
        // The first transaction: keying time only.
        assert_eq!(c.pause_before_us(0, &mut r), 18_000_000);
        assert!(c.pause_before_us(1, &mut r) >= 3_000_000);
    }

    /// Order-Status and Stock-Level only, and their statements agree: every one is SQL the
    /// read-only classifier accepts, and each other type has one it refuses.
    #[test]
    fn order_status_and_stock_level_are_the_read_only_types() {
        let w = workload(1);
        let ro: Vec<bool> = (0..5).map(|i| w.read_only(i)).collect();
        assert_eq!(ro, [false, false, true, false, true]);
        for (i, t) in w.txn_types().iter().enumerate() {
            let all = t
                .statements
                .iter()
                .all(|s| crate::readonly::is_read_only_sql(s));
            assert_eq!(all, ro[i], "{}: {:?}", t.name, t.statements);
        }
    }
}
