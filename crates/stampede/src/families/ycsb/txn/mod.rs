//! YCSB's core workloads A to F (Cooper et al., "Benchmarking Cloud Serving Systems with YCSB",
//! SoCC 2010; YCSB 0.17's `CoreWorkload` and `workloads/workloada` ... `workloadf`) on YCSB's
//! `usertable`, over both protocols.
//!
//! Owns: the operation chosen for each transaction ([`gen::OpChooser`] over the proportions,
//! from the engine's choice stream), the key (uniform, scrambled zipfian, or latest, redrawn
//! while it is above the highest acknowledged insert, as `CoreWorkload.nextKeynum`), the scan
//! length, the values written, and the insert keys shared by every client ([`gen::InsertKeys`]).
//! Not owned: time, retries, the table ([`load`'s ycsb module] creates and loads it).
//!
//! ## One operation, one transaction type
//! Each of YCSB's operations is a transaction type named as YCSB's measurements name it (READ,
//! UPDATE, INSERT, SCAN, READ-MODIFY-WRITE), so the text, JSON, HTML and compare show them as
//! YCSB reports them. The statements are those of YCSB's JDBC binding (`DefaultDBFlavor`):
//! `SELECT * ... WHERE YCSB_KEY = ?`, `SELECT * ... WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT
//! ?`, `UPDATE ... SET FIELDn = ? WHERE YCSB_KEY = ?`, `INSERT ... VALUES (?, ...)`, each
//! autocommitted as that binding runs them by default. READ-MODIFY-WRITE differs: the binding
//! runs its read and its update as two autocommitted statements; here they are one transaction
//! (BEGIN, read, update, COMMIT), so the write is of the row as read and the server's commit
//! counter can check it on MySQL too (which counts COMMIT statements only).
//!
//! ## Values
//! Field values are `fieldlength` characters of a 64-character alphabet (letters, digits, `_`
//! and `~`: nothing COPY or SQL quoting must escape, no sign or point a number could absorb),
//! six bits of the random stream each. A loaded or inserted row is a pure function of
//! (seed, key number) ([`row_values`]), so any loader connection can write any range and an
//! insert of the run writes what a load of that key would; updates draw from the transaction's
//! stream. (YCSB's `RandomByteIterator` writes printable bytes from Java's generator: the
//! length, which is what a benchmark measures, is the same.)

pub mod gen;
pub mod props;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sut::{Dialect, Error, QueryMode, Session, StmtId, Value};

use gen::{InsertKeys, OpChooser, ScrambledZipfian, SkewedLatest, Zipfian};
pub use props::{Distribution, InsertOrder, Op, Options};
use workload::{ClientWorkload, Rng, TxnContext, TxnType, Workload};

/// The table (YCSB's `table` default).
pub const TABLE: &str = "usertable";

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~";

/// Append `len` random characters of the alphabet (module header, "Values").
pub fn fill_value(rng: &mut Rng, len: usize, out: &mut String) {
    let mut left = len;
    while left > 0 {
        let mut bits = rng.next_u64();
        for _ in 0..left.min(10) {
            out.push(ALPHABET[(bits & 63) as usize] as char);
            bits >>= 6;
        }
        left -= left.min(10);
    }
}

/// The random stream of row `keynum`'s values for a load seeded `seed`.
fn row_rng(seed: u64, keynum: u64) -> Rng {
    Rng::from_seed(seed ^ keynum.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Append row `keynum`'s `fieldcount` values, `fieldlength` characters each, one after the
/// other (a pure function of seed and key).
pub fn row_values(seed: u64, keynum: u64, fieldcount: u32, fieldlength: u32, out: &mut String) {
    let mut rng = row_rng(seed, keynum);
    for _ in 0..fieldcount {
        fill_value(&mut rng, fieldlength as usize, out);
    }
}

/// The column list: `YCSB_KEY, FIELD0, ..., FIELDn-1`.
pub fn columns(fieldcount: u32) -> String {
    let mut s = String::from("YCSB_KEY");
    for i in 0..fieldcount {
        s.push_str(&format!(", FIELD{i}"));
    }
    s
}

/// The statements of one dialect.
struct Sql {
    read_all: String,
    read_field: Vec<String>,
    scan_all: String,
    scan_field: Vec<String>,
    update_field: Vec<String>,
    update_all: String,
    insert: String,
}

impl Sql {
    fn new(dialect: Dialect, fieldcount: u32) -> Sql {
        let p = |i: usize| match dialect {
            Dialect::Postgres => format!("${i}"),
            Dialect::MySql => "?".into(),
        };
        let fields = 0..fieldcount;
        let sets: Vec<String> = fields
            .clone()
            .map(|f| format!("FIELD{f} = {}", p(f as usize + 1)))
            .collect();
        let values: Vec<String> = (1..=fieldcount as usize + 1).map(p).collect();
        Sql {
            read_all: format!("SELECT * FROM usertable WHERE YCSB_KEY = {}", p(1)),
            read_field: fields
                .clone()
                .map(|f| format!("SELECT FIELD{f} FROM usertable WHERE YCSB_KEY = {}", p(1)))
                .collect(),
            scan_all: format!(
                "SELECT * FROM usertable WHERE YCSB_KEY >= {} ORDER BY YCSB_KEY LIMIT {}",
                p(1),
                p(2)
            ),
            scan_field: fields
                .clone()
                .map(|f| {
                    format!(
                        "SELECT FIELD{f} FROM usertable WHERE YCSB_KEY >= {} ORDER BY YCSB_KEY \
                         LIMIT {}",
                        p(1),
                        p(2)
                    )
                })
                .collect(),
            update_field: fields
                .map(|f| {
                    format!(
                        "UPDATE usertable SET FIELD{f} = {} WHERE YCSB_KEY = {}",
                        p(1),
                        p(2)
                    )
                })
                .collect(),
            update_all: format!(
                "UPDATE usertable SET {} WHERE YCSB_KEY = {}",
                sets.join(", "),
                p(fieldcount as usize + 1)
            ),
            insert: format!(
                "INSERT INTO usertable ({}) VALUES ({})",
                columns(fieldcount),
                values.join(", ")
            ),
        }
    }

    fn read(&self, o: &Options) -> &str {
        if o.readallfields {
            &self.read_all
        } else {
            &self.read_field[0]
        }
    }

    fn scan(&self, o: &Options) -> &str {
        if o.readallfields {
            &self.scan_all
        } else {
            &self.scan_field[0]
        }
    }

    fn update(&self, o: &Options) -> &str {
        if o.writeallfields {
            &self.update_all
        } else {
            &self.update_field[0]
        }
    }
}

/// What the run needs besides the options: where the table stands when it starts.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// Rows in the table: the keys `0..rows` exist, inserts continue from `rows`.
    pub rows: u64,
    /// Seed of inserted rows' values.
    pub seed: u64,
}

/// Counts the result and the checks need, shared by all clients.
#[derive(Debug, Default)]
pub struct Counters {
    /// INSERTs that committed.
    pub inserted: AtomicU64,
    /// Rows returned by SCANs.
    pub scanned_rows: AtomicU64,
    /// READs (and the reads of READ-MODIFY-WRITE) that found no row.
    pub reads_not_found: AtomicU64,
}

/// The workload, shared by all clients.
pub struct Ycsb {
    opts: Options,
    ops: Vec<Op>,
    chooser: OpChooser,
    types: Vec<TxnType>,
    keys: Arc<InsertKeys>,
    counters: Arc<Counters>,
    start: Start,
    /// The key chooser, made once (zeta can take a while) and cloned into each client.
    chooser_proto: KeyChooser,
    scan_proto: ScanLength,
}

#[derive(Clone, Debug)]
enum KeyChooser {
    Uniform { max: u64 },
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
}

#[derive(Clone, Debug)]
enum ScanLength {
    Uniform { min: u64, max: u64 },
    Zipfian(Zipfian),
}

impl Ycsb {
    /// The workload for `opts` on a table that holds `start.rows` rows, for a target of
    /// `protocol` (whose statements the transaction types list).
    pub fn new(opts: Options, start: Start, protocol: Dialect) -> Ycsb {
        let rows = start.rows.max(1);
        let mix = opts.ops();
        let sql = Sql::new(protocol, opts.fieldcount);
        let types = mix
            .iter()
            .map(|(op, _)| TxnType {
                name: op.name().into(),
                statements: match op {
                    Op::Read => vec![sql.read(&opts).into()],
                    Op::Update => vec![sql.update(&opts).into()],
                    Op::Insert => vec![sql.insert.clone()],
                    Op::Scan => vec![sql.scan(&opts).into()],
                    Op::ReadModifyWrite => vec![
                        "BEGIN".into(),
                        sql.read(&opts).into(),
                        sql.update(&opts).into(),
                        "COMMIT".into(),
                    ],
                },
            })
            .collect();
        let theta = opts.zipfianconstant;
        let chooser_proto = match opts.distribution {
            Distribution::Uniform => KeyChooser::Uniform { max: rows - 1 },
            Distribution::Zipfian => {
                // CoreWorkload: room for the inserts it expects (twice operationcount times the
                // insert proportion), so the popular keys stay put as the table grows.
                let expected = (opts.operationcount as f64 * opts.proportions[2] * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfian::new(0, rows + expected, theta))
            }
            Distribution::Latest => KeyChooser::Latest(SkewedLatest::new(rows - 1, theta)),
        };
        let scan_proto = if opts.scanlength_zipfian {
            ScanLength::Zipfian(Zipfian::new(opts.minscanlength, opts.maxscanlength, theta))
        } else {
            ScanLength::Uniform {
                min: opts.minscanlength,
                max: opts.maxscanlength,
            }
        };
        Ycsb {
            chooser: OpChooser::new(mix.iter().map(|(_, p)| *p).collect()),
            ops: mix.iter().map(|(o, _)| *o).collect(),
            opts,
            types,
            keys: Arc::new(InsertKeys::new(rows)),
            counters: Arc::new(Counters::default()),
            start,
            chooser_proto,
            scan_proto,
        }
    }

    /// The operation of each transaction type, in `txn_types()` order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl Workload for Ycsb {
    type Client = YcsbClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, _client_id: u32) -> YcsbClient {
        YcsbClient {
            opts: self.opts.clone(),
            ops: self.ops.clone(),
            chooser: self.chooser.clone(),
            keys: self.keys.clone(),
            counters: self.counters.clone(),
            seed: self.start.seed,
            key_chooser: self.chooser_proto.clone(),
            scan: self.scan_proto.clone(),
            stmts: None,
            key: String::with_capacity(32),
            value: String::new(),
        }
    }

    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        match mode {
            QueryMode::Simple => Err("ycsb sends its keys and values as parameters (as YCSB's \
                                      JDBC binding does): use -M extended or -M prepared"
                .into()),
            _ => Ok(()),
        }
    }

    /// READ and SCAN only read.
    fn read_only(&self, txn: usize) -> bool {
        matches!(self.ops.get(txn), Some(Op::Read | Op::Scan))
    }
}

/// Statements registered on a session.
struct Stmts {
    begin: StmtId,
    commit: StmtId,
    read: Vec<StmtId>,
    scan: Vec<StmtId>,
    update: Vec<StmtId>,
    update_all: StmtId,
    insert: StmtId,
}

/// One client.
pub struct YcsbClient {
    opts: Options,
    ops: Vec<Op>,
    chooser: OpChooser,
    keys: Arc<InsertKeys>,
    counters: Arc<Counters>,
    seed: u64,
    key_chooser: KeyChooser,
    scan: ScanLength,
    stmts: Option<Stmts>,
    key: String,
    value: String,
}

impl YcsbClient {
    /// `CoreWorkload.nextKeynum`: a key at most the highest acknowledged insert.
    fn next_keynum(&mut self, rng: &mut Rng) -> u64 {
        loop {
            let last = self.keys.last();
            let k = match &mut self.key_chooser {
                KeyChooser::Uniform { max } => rng.uint64_range(0, *max),
                KeyChooser::Zipfian(z) => z.next(rng),
                KeyChooser::Latest(l) => l.next(last.max(0) as u64, rng),
            };
            if k as i64 <= last {
                return k;
            }
        }
    }

    fn set_key(&mut self, keynum: u64) {
        let hashed = self.opts.insertorder == InsertOrder::Hashed;
        gen::key_name(keynum, hashed, self.opts.zeropadding, &mut self.key);
    }

    /// The read of READ and READ-MODIFY-WRITE: all fields, or one chosen at random.
    async fn read(&mut self, s: &mut Session, rng: &mut Rng) -> Result<(), Error> {
        let st = self.stmts.as_ref().expect("registered on connect");
        let id = match self.opts.readallfields {
            true => st.read[0],
            false => st.read[rng.uint64_range(0, u64::from(self.opts.fieldcount) - 1) as usize],
        };
        let r = s.execute(id, &[Value::Text(&self.key)]).await?;
        if r.rows == 0 {
            self.counters
                .reads_not_found
                .fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The write of UPDATE and READ-MODIFY-WRITE: one random field, or all of them.
    async fn update(&mut self, s: &mut Session, rng: &mut Rng) -> Result<(), Error> {
        let len = self.opts.fieldlength as usize;
        let n = self.opts.fieldcount;
        self.value.clear();
        if self.opts.writeallfields {
            for _ in 0..n {
                fill_value(rng, len, &mut self.value);
            }
            let id = self
                .stmts
                .as_ref()
                .expect("registered on connect")
                .update_all;
            let mut params: Vec<Value> = (0..n as usize)
                .map(|i| Value::Text(&self.value[i * len..(i + 1) * len]))
                .collect();
            params.push(Value::Text(&self.key));
            s.execute(id, &params).await?;
        } else {
            let f = rng.uint64_range(0, u64::from(n) - 1) as usize;
            fill_value(rng, len, &mut self.value);
            let id = self.stmts.as_ref().expect("registered on connect").update[f];
            s.execute(id, &[Value::Text(&self.value), Value::Text(&self.key)])
                .await?;
        }
        Ok(())
    }

    async fn insert(&mut self, s: &mut Session) -> Result<(), Error> {
        let keynum = self.keys.next();
        self.set_key(keynum);
        self.value.clear();
        let (n, len) = (self.opts.fieldcount, self.opts.fieldlength as usize);
        row_values(self.seed, keynum, n, len as u32, &mut self.value);
        let st = self.stmts.as_ref().expect("registered on connect");
        let mut params = Vec::with_capacity(n as usize + 1);
        params.push(Value::Text(&self.key));
        params.extend((0..n as usize).map(|i| Value::Text(&self.value[i * len..(i + 1) * len])));
        let r = s.execute(st.insert, &params).await;
        // YCSB acknowledges the key whether the insert succeeded or not (`finally`).
        self.keys.acknowledge(keynum);
        if r.is_ok() {
            self.counters.inserted.fetch_add(1, Ordering::Relaxed);
        }
        r.map(|_| ())
    }

    async fn scan(&mut self, s: &mut Session, rng: &mut Rng) -> Result<(), Error> {
        let len = match &mut self.scan {
            ScanLength::Uniform { min, max } => rng.uint64_range(*min, *max),
            ScanLength::Zipfian(z) => z.next(rng),
        };
        let st = self.stmts.as_ref().expect("registered on connect");
        let id = match self.opts.readallfields {
            true => st.scan[0],
            false => st.scan[rng.uint64_range(0, u64::from(self.opts.fieldcount) - 1) as usize],
        };
        let r = s
            .execute(id, &[Value::Text(&self.key), Value::Int(len as i64)])
            .await?;
        self.counters
            .scanned_rows
            .fetch_add(r.rows, Ordering::Relaxed);
        Ok(())
    }
}

impl ClientWorkload for YcsbClient {
    async fn on_connect(&mut self, s: &mut Session, mode: QueryMode) -> Result<(), Error> {
        let sql = Sql::new(s.dialect(), self.opts.fieldcount);
        if s.dialect() == Dialect::Postgres {
            // As TPC-C: no parallel workers, whose transactions PostgreSQL counts in
            // xact_commit (and which a 100-row scan does not need).
            s.simple_query("SET max_parallel_workers_per_gather = 0")
                .await?;
        }
        let all = |s: &mut Session, one: &str, each: &[String], every: bool| -> Vec<StmtId> {
            match every {
                true => vec![s.register(one, mode)],
                false => each.iter().map(|q| s.register(q, mode)).collect(),
            }
        };
        let read = all(s, &sql.read_all, &sql.read_field, self.opts.readallfields);
        let scan = all(s, &sql.scan_all, &sql.scan_field, self.opts.readallfields);
        let update = (sql.update_field.iter())
            .map(|q| s.register(q, mode))
            .collect();
        self.stmts = Some(Stmts {
            begin: s.register("BEGIN", mode),
            commit: s.register("COMMIT", mode),
            read,
            scan,
            update,
            update_all: s.register(&sql.update_all, mode),
            insert: s.register(&sql.insert, mode),
        });
        workload::prepare_registered(s, mode).await
    }

    async fn execute(
        &mut self,
        txn: usize,
        s: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let op = self.ops[txn];
        cx.timer.start();
        let r = match op {
            Op::Insert => self.insert(s).await,
            _ => {
                let k = self.next_keynum(cx.rng);
                self.set_key(k);
                match op {
                    Op::Read => self.read(s, cx.rng).await,
                    Op::Update => self.update(s, cx.rng).await,
                    Op::Scan => self.scan(s, cx.rng).await,
                    _ => self.read_modify_write(s, cx.rng).await,
                }
            }
        };
        cx.timer.end(0, r.is_ok());
        r
    }

    fn next_txn(&mut self, rng: &mut Rng) -> Option<usize> {
        Some(self.chooser.next(rng))
    }
}

impl YcsbClient {
    async fn read_modify_write(&mut self, s: &mut Session, rng: &mut Rng) -> Result<(), Error> {
        let (begin, commit) = {
            let st = self.stmts.as_ref().expect("registered on connect");
            (st.begin, st.commit)
        };
        s.execute(begin, &[]).await?;
        self.read(s, rng).await?;
        self.update(s, rng).await?;
        s.execute(commit, &[]).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each core workload's operations come up in its file's proportions: within 1% (absolute)
    /// over 100,000 choices from a fixed seed.
    #[test]
    fn core_workloads_choose_their_operations_in_proportion() {
        for letter in ['a', 'b', 'c', 'd', 'e', 'f'] {
            let opts = props::core_workload(letter).unwrap();
            let w = Ycsb::new(
                opts.clone(),
                Start {
                    rows: 1000,
                    seed: 1,
                },
                Dialect::Postgres,
            );
            let mut client = w.new_client(0);
            let mut rng = Rng::from_seed(2026);
            let n = 100_000;
            let mut counts = [0u64; 5];
            for _ in 0..n {
                let t = client.next_txn(&mut rng).unwrap();
                let op = w.ops()[t];
                counts[Op::ALL.iter().position(|o| *o == op).unwrap()] += 1;
            }
            for (i, op) in Op::ALL.iter().enumerate() {
                let share = counts[i] as f64 / n as f64;
                assert!(
                    (share - opts.proportions[i]).abs() < 0.01,
                    "workload{letter}: {} {share} vs {}",
                    op.name(),
                    opts.proportions[i]
                );
            }
            // The transaction types are the operations with a share, named as YCSB names them.
            let names: Vec<&str> = w.txn_types().iter().map(|t| t.name.as_str()).collect();
            let want: Vec<&str> = (Op::ALL.iter().zip(opts.proportions))
                .filter(|(_, p)| *p > 0.0)
                .map(|(o, _)| o.name())
                .collect();
            assert_eq!(names, want, "workload{letter}");
        }
    }

    #[test]
    fn the_core_workloads_are_ycsb_s_files() {
        let d = props::core_workload('d').unwrap();
        assert_eq!(d.distribution, Distribution::Latest);
        assert_eq!(d.proportions, [0.95, 0.0, 0.05, 0.0, 0.0]);
        let e = props::core_workload('e').unwrap();
        assert_eq!((e.minscanlength, e.maxscanlength), (1, 100));
        assert!(!e.scanlength_zipfian);
        assert_eq!(e.distribution, Distribution::Zipfian);
        let f = props::core_workload('f').unwrap();
        assert_eq!(f.proportions, [0.5, 0.0, 0.0, 0.0, 0.5]);
        assert_eq!(f.describe(), "50% READ / 50% READ-MODIFY-WRITE, zipfian");
        assert!(props::core_workload('g').is_none());
        for o in [&d, &e, &f] {
            assert_eq!((o.fieldcount, o.fieldlength), (10, 100));
            assert!(o.readallfields && !o.writeallfields);
            assert_eq!(o.insertorder, InsertOrder::Hashed);
        }
    }

    #[test]
    fn properties_override_the_file_and_bad_ones_are_named() {
        let a = props::core_workload('a').unwrap();
        let p = |v: &[&str]| {
            props::parse(
                a.clone(),
                &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        let o = p(&[
            "recordcount=5000",
            "readproportion=0.9",
            "updateproportion=0.1",
        ])
        .unwrap();
        assert_eq!(o.recordcount, 5000);
        assert_eq!(o.proportions[..2], [0.9, 0.1]);
        assert!(o.was_given("recordcount") && !o.was_given("fieldcount"));
        let o = p(&["insertorder=ordered", "requestdistribution=uniform"]).unwrap();
        assert_eq!(o.insertorder, InsertOrder::Ordered);
        assert_eq!(o.distribution, Distribution::Uniform);
        for (bad, says) in [
            ("recordcnt=5", "recordcnt: unknown property"),
            ("recordcount=0", "recordcount=0: must be an integer"),
            ("recordcount", "KEY=VALUE"),
            ("readproportion=1.5", "between 0 and 1"),
            ("requestdistribution=hotspot", "uniform, zipfian and latest"),
            ("insertorder=random", "hashed or ordered"),
            ("zipfianconstant=1", "between 0 and 1"),
            ("fieldlengthdistribution=zipfian", "only the default"),
        ] {
            let e = p(&[bad]).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let e = p(&["readproportion=0", "updateproportion=0"]).unwrap_err();
        assert!(e.to_string().contains("every operation's proportion is 0"));
    }

    #[test]
    fn rows_are_a_pure_function_of_seed_and_key() {
        let (mut a, mut b, mut c) = (String::new(), String::new(), String::new());
        row_values(7, 42, 10, 100, &mut a);
        row_values(7, 42, 10, 100, &mut b);
        row_values(7, 43, 10, 100, &mut c);
        assert_eq!(a.len(), 1000);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)));
    }

    #[test]
    fn statements_are_ycsb_s_jdbc_ones_in_each_dialect() {
        let pg = Sql::new(Dialect::Postgres, 3);
        assert_eq!(pg.read_all, "SELECT * FROM usertable WHERE YCSB_KEY = $1");
        assert_eq!(
            pg.scan_all,
            "SELECT * FROM usertable WHERE YCSB_KEY >= $1 ORDER BY YCSB_KEY LIMIT $2"
        );
        assert_eq!(
            pg.update_field[2],
            "UPDATE usertable SET FIELD2 = $1 WHERE YCSB_KEY = $2"
        );
        assert_eq!(
            pg.insert,
            "INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1, FIELD2) VALUES ($1, $2, $3, $4)"
        );
        let my = Sql::new(Dialect::MySql, 2);
        assert_eq!(
            my.update_all,
            "UPDATE usertable SET FIELD0 = ?, FIELD1 = ? WHERE YCSB_KEY = ?"
        );
        assert_eq!(
            my.insert,
            "INSERT INTO usertable (YCSB_KEY, FIELD0, FIELD1) VALUES (?, ?, ?)"
        );
    }
}
