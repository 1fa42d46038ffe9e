//! The insert benchmark (iibench): batched inserts into one table with an auto-increment primary
//! key and three secondary indexes, optionally with query clients reading through those indexes.
//!
//! After Mark Callaghan's `iibench.py` (github.com/mdcallag/mytools, bench/ibench/iibench.py),
//! itself a version of Tokutek's insert benchmark:
//! - the table `purchases_index`: `transactionid` (auto-increment primary key), `dateandtime`,
//!   `cashregisterid`, `customerid`, `productid`, `price`, `data`, with the original's three
//!   secondary indexes `marketsegment (price, customerid)`, `registersegment (cashregisterid,
//!   price, customerid)` and `pdc (price, dateandtime, customerid)`;
//! - an insert is one multi-row INSERT of `rows_per_commit` rows (default 1000, the original's
//!   `--rows_per_commit`), autocommitted: one statement, one commit (the original's
//!   `autocommit=True` connection). The row's values are the original's draws: a cash register
//!   in `[0, cashregisters)`, a product in `[0, products)`, a customer in `[0, customers)`,
//!   `price = (uniform * max_price + customerid) / 100` and `dateandtime` the server's `now()`
//!   (the original sends the client's wall clock; the server's keeps the workload off clocks);
//!   `data` is 10 characters, half of them random (`--data_length_min/max 10`,
//!   `--data_random_pct 50`);
//! - a query client runs, one after another and unpaced, one of the original's queries over a
//!   secondary index, chosen uniformly (`Query()`'s `random.randrange(0, len(query_generators))`),
//!   each fetching `rows_per_query` rows (default 10) from a random start: `price >= p ORDER BY
//!   price, customerid` (marketsegment), `cashregisterid > c ORDER BY cashregisterid, price,
//!   customerid` (registersegment), `price >= p ORDER BY price, dateandtime, customerid` (pdc).
//!   MySQL's queries name the index with FORCE INDEX, as the original's do.
//!
//! Clients: the first `clients - query_clients` insert, the rest query (`next_txn`), so the
//! engine runs both roles in one run and results break down by transaction type.

use sut::{Dialect, Error, QueryMode, Session, StmtId, Value};

use workload::{ClientWorkload, Rng, TxnContext, TxnType, Workload};

pub const TABLE: &str = "purchases_index";
/// The table's comment: how stampede recognises a table of its own (it drops no other).
pub const MARK: &str = "created by stampede iibench";

/// The secondary indexes: name and columns, as in the original.
pub const INDEXES: [(&str, &str); 3] = [
    ("marketsegment", "price, customerid"),
    ("registersegment", "cashregisterid, price, customerid"),
    ("pdc", "price, dateandtime, customerid"),
];

/// Transaction types, in `txn_types()` order.
pub const INSERT: usize = 0;
pub const QUERY_MARKET: usize = 1;
pub const QUERY_REGISTER: usize = 2;
pub const QUERY_PDC: usize = 3;

/// What a run of iibench is: its sizes and the original's value ranges.
#[derive(Clone, Debug)]
pub struct Options {
    pub rows_per_commit: u32,
    pub rows_per_query: u32,
    /// Clients that only query (the last ones); the others insert.
    pub query_clients: u32,
    pub cashregisters: i64,
    pub products: i64,
    pub customers: i64,
    pub max_price: f64,
}

impl Default for Options {
    /// The original's defaults.
    fn default() -> Options {
        Options {
            rows_per_commit: 1000,
            rows_per_query: 10,
            query_clients: 0,
            cashregisters: 1000,
            products: 10_000,
            customers: 100_000,
            max_price: 500.0,
        }
    }
}

/// The statements that create the table and its indexes, in order.
pub fn create_sql(dialect: Dialect) -> Vec<String> {
    match dialect {
        Dialect::Postgres => {
            let mut v = vec![
                "CREATE TABLE purchases_index (transactionid bigserial PRIMARY KEY, \
                 dateandtime timestamp NOT NULL, cashregisterid integer NOT NULL, \
                 customerid integer NOT NULL, productid integer NOT NULL, price real NOT NULL, \
                 data varchar(4000))"
                    .to_string(),
            ];
            for (name, cols) in INDEXES {
                v.push(format!("CREATE INDEX {name} ON purchases_index ({cols})"));
            }
            v.push(format!("COMMENT ON TABLE purchases_index IS '{MARK}'"));
            v
        }
        Dialect::MySql => {
            let keys: Vec<String> = INDEXES
                .iter()
                .map(|(name, cols)| format!("KEY {name} ({cols})"))
                .collect();
            vec![format!(
                "CREATE TABLE purchases_index (transactionid BIGINT NOT NULL AUTO_INCREMENT, \
                 dateandtime DATETIME NOT NULL, cashregisterid INT NOT NULL, \
                 customerid INT NOT NULL, productid INT NOT NULL, price FLOAT NOT NULL, \
                 data VARCHAR(4000), PRIMARY KEY (transactionid), {}) ENGINE=InnoDB \
                 COMMENT='{MARK}'",
                keys.join(", ")
            )]
        }
    }
}

/// The multi-row INSERT of `rows` rows (five parameters a row).
pub fn insert_sql(dialect: Dialect, rows: u32) -> String {
    let mut s = String::from(
        "INSERT INTO purchases_index \
         (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ",
    );
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        match dialect {
            Dialect::Postgres => {
                let b = r * 5;
                s.push_str(&format!(
                    "(now(), ${}, ${}, ${}, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5
                ));
            }
            Dialect::MySql => s.push_str("(now(), ?, ?, ?, ?, ?)"),
        }
    }
    s
}

/// The query of type `txn` (QUERY_*), fetching `limit` rows.
pub fn query_sql(dialect: Dialect, txn: usize, limit: u32) -> String {
    let (index, cols, cond) = match txn {
        QUERY_MARKET => ("marketsegment", "price, customerid", "price >= "),
        QUERY_REGISTER => (
            "registersegment",
            "cashregisterid, price, customerid",
            "cashregisterid > ",
        ),
        _ => ("pdc", "price, dateandtime, customerid", "price >= "),
    };
    match dialect {
        Dialect::Postgres => format!(
            "SELECT {cols} FROM purchases_index WHERE {cond}$1 ORDER BY {cols} LIMIT {limit}"
        ),
        Dialect::MySql => format!(
            "SELECT {cols} FROM purchases_index FORCE INDEX ({index}) WHERE {cond}? \
             ORDER BY {cols} LIMIT {limit}"
        ),
    }
}

/// One row's values, drawn as the original draws them (module notes).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub cashregisterid: i64,
    pub customerid: i64,
    pub productid: i64,
    pub price: f64,
    pub data: String,
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Row {
    pub fn draw(o: &Options, rng: &mut Rng) -> Row {
        let cashregisterid = rng.range(0, o.cashregisters - 1);
        let productid = rng.range(0, o.products - 1);
        let customerid = rng.range(0, o.customers - 1);
        let price = (rng.double() * o.max_price + customerid as f64) / 100.0;
        // 10 characters, the first half random (data_random_pct 50).
        let mut data = String::with_capacity(10);
        for _ in 0..5 {
            data.push(LETTERS[rng.range(0, LETTERS.len() as i64 - 1) as usize] as char);
        }
        data.push_str("aaaaa");
        Row {
            cashregisterid,
            customerid,
            productid,
            price,
            data,
        }
    }
}

/// iibench, shared by all clients.
pub struct IiBench {
    dialect: Dialect,
    opts: Options,
    clients: u32,
    types: Vec<TxnType>,
}

impl IiBench {
    /// `clients` counts every client of the run, query clients included.
    pub fn new(dialect: Dialect, opts: Options, clients: u32) -> Result<IiBench, String> {
        if opts.rows_per_commit == 0 {
            return Err("--rows-per-commit must be at least 1".into());
        }
        if opts.rows_per_query == 0 {
            return Err("--rows-per-query must be at least 1".into());
        }
        if opts.query_clients >= clients {
            return Err(format!(
                "--query-clients {} leaves no inserting client of {clients}",
                opts.query_clients
            ));
        }
        let mut types = vec![TxnType {
            name: "iibench insert".into(),
            statements: vec![format!(
                "INSERT INTO purchases_index (...) VALUES ... ({} rows)",
                opts.rows_per_commit
            )],
        }];
        for (txn, name) in [
            (QUERY_MARKET, "iibench query marketsegment"),
            (QUERY_REGISTER, "iibench query registersegment"),
            (QUERY_PDC, "iibench query pdc"),
        ] {
            types.push(TxnType {
                name: name.into(),
                statements: vec![query_sql(dialect, txn, opts.rows_per_query)],
            });
        }
        Ok(IiBench {
            dialect,
            opts,
            clients,
            types,
        })
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The clients that insert.
    pub fn insert_clients(&self) -> u32 {
        self.clients - self.opts.query_clients
    }
}

impl Workload for IiBench {
    type Client = IiBenchClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> IiBenchClient {
        IiBenchClient {
            dialect: self.dialect,
            opts: self.opts.clone(),
            queries: client_id >= self.insert_clients(),
            stmts: Vec::new(),
            rows: Vec::new(),
        }
    }

    fn read_only(&self, txn: usize) -> bool {
        txn != INSERT
    }
}

pub struct IiBenchClient {
    dialect: Dialect,
    opts: Options,
    /// A query client (else an inserting one).
    queries: bool,
    /// Insert, then the three queries (`txn_types()` order).
    stmts: Vec<StmtId>,
    rows: Vec<Row>,
}

impl ClientWorkload for IiBenchClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        self.stmts.clear();
        let insert = insert_sql(self.dialect, self.opts.rows_per_commit);
        self.stmts.push(session.register(&insert, mode));
        for txn in [QUERY_MARKET, QUERY_REGISTER, QUERY_PDC] {
            let sql = query_sql(self.dialect, txn, self.opts.rows_per_query);
            self.stmts.push(session.register(&sql, mode));
        }
        workload::prepare_registered(session, mode).await
    }

    fn next_txn(&mut self, rng: &mut Rng) -> Option<usize> {
        if self.queries {
            Some(QUERY_MARKET + rng.range(0, 2) as usize)
        } else {
            Some(INSERT)
        }
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let stmt = self.stmts[txn];
        let r = if txn == INSERT {
            self.rows.clear();
            for _ in 0..self.opts.rows_per_commit {
                self.rows.push(Row::draw(&self.opts, cx.rng));
            }
            let mut params = Vec::with_capacity(self.rows.len() * 5);
            for r in &self.rows {
                params.extend([
                    Value::Int(r.cashregisterid),
                    Value::Int(r.customerid),
                    Value::Int(r.productid),
                    Value::Float(r.price),
                    Value::Text(&r.data),
                ]);
            }
            cx.timer.start();
            session.execute(stmt, &params).await
        } else {
            // The original's starting points: a price up to max_price/100 above the lowest
            // customers' (prices run from 0 to (max_price + customers) / 100), a register.
            let start = match txn {
                QUERY_REGISTER => Value::Int(cx.rng.range(0, self.opts.cashregisters - 1)),
                _ => Value::Float(
                    cx.rng.double() * (self.opts.max_price + self.opts.customers as f64) / 100.0,
                ),
            };
            cx.timer.start();
            session.execute(stmt, &[start]).await
        };
        cx.timer.end(0, r.is_ok());
        r.map(|_| ())
    }

    fn failed_command(&self) -> Option<usize> {
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_the_original_s_three_secondary_indexes_and_stampede_s_mark() {
        let pg = create_sql(Dialect::Postgres).join(";\n");
        assert!(pg.contains("CREATE INDEX marketsegment ON purchases_index (price, customerid)"));
        assert!(
            pg.contains("registersegment ON purchases_index (cashregisterid, price, customerid)")
        );
        assert!(pg.contains("pdc ON purchases_index (price, dateandtime, customerid)"));
        assert!(pg.contains(MARK));
        let my = create_sql(Dialect::MySql).join("");
        assert!(
            my.contains("AUTO_INCREMENT")
                && my.contains("KEY pdc (price, dateandtime, customerid)")
        );
        assert!(my.contains(MARK));
    }

    #[test]
    fn the_insert_carries_five_parameters_a_row_in_each_dialect() {
        let pg = insert_sql(Dialect::Postgres, 3);
        assert!(pg.ends_with("(now(), $11, $12, $13, $14, $15)"), "{pg}");
        let my = insert_sql(Dialect::MySql, 2);
        assert_eq!(my.matches('?').count(), 10);
        assert!(query_sql(Dialect::MySql, QUERY_PDC, 10).contains("FORCE INDEX (pdc)"));
        assert!(query_sql(Dialect::Postgres, QUERY_REGISTER, 7).ends_with(
            "WHERE cashregisterid > $1 ORDER BY cashregisterid, price, customerid LIMIT 7"
        ));
    }

    #[test]
    fn rows_are_a_function_of_the_stream_and_within_the_original_s_ranges() {
        let o = Options::default();
        let mut a = Rng::from_seed(7);
        let mut b = Rng::from_seed(7);
        for _ in 0..1000 {
            let r = Row::draw(&o, &mut a);
            assert_eq!(r, Row::draw(&o, &mut b));
            assert!((0..1000).contains(&r.cashregisterid));
            assert!((0..10_000).contains(&r.productid));
            assert!((0..100_000).contains(&r.customerid));
            assert!(r.price >= r.customerid as f64 / 100.0);
            assert!(r.price < (r.customerid as f64 + 500.0) / 100.0);
            assert_eq!(r.data.len(), 10);
        }
    }

    #[test]
    fn query_clients_are_the_last_ones_and_never_insert() {
        let o = Options {
            query_clients: 2,
            ..Options::default()
        };
        let w = IiBench::new(Dialect::Postgres, o, 5).unwrap();
        assert_eq!(w.insert_clients(), 3);
        let mut rng = Rng::from_seed(1);
        assert_eq!(w.new_client(2).next_txn(&mut rng), Some(INSERT));
        let mut q = w.new_client(3);
        let mut seen = [0u32; 4];
        for _ in 0..300 {
            seen[q.next_txn(&mut rng).unwrap()] += 1;
        }
        assert_eq!(seen[INSERT], 0);
        assert!(seen[1..].iter().all(|&n| n > 50), "{seen:?}");
        let bad = Options {
            query_clients: 5,
            ..Options::default()
        };
        assert!(IiBench::new(Dialect::Postgres, bad, 5).is_err());
    }
}
