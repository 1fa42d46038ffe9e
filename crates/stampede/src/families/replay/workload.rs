//! The replay workload: every captured session is a client with its own connection (as its
//! captured user, to its captured database, both mapped by `--map-user`/`--map-db`), sending
//! that session's statements in its order, each at its captured offset divided by `--speed`
//! (`workload::Due::At`; the engine waits, and splits any lag between the server and itself),
//! or as fast as the session allows (`--speed max`).
//!
//! One engine transaction is one captured statement, and its transaction type is the
//! statement's fingerprint (`super::fingerprint`), so the engine's per-type histograms are the
//! per-fingerprint latencies, and its failures the per-fingerprint errors. Only the
//! [`MAX_TYPES`] most frequent fingerprints get a type of their own (each costs a dense
//! histogram per engine thread while it records); the rest share one, "other statements".
//!
//! A statement is sent as it was captured: simple ones as their text (PostgreSQL's simple
//! query, MySQL's COM_QUERY), extended ones (PostgreSQL) as Parse/Bind/Execute with their
//! parameters as untyped text, as pgbench's extended mode sends them. A statement that fails
//! is counted failed and the session goes on (`Workload::continues_after`): the captured
//! session went on too, and a ROLLBACK the capture did not send would change what follows.
//!
//! `--order strict` ([`Replay::new`]'s `strict`) adds an order across sessions
//! (`workload::Order`): statement B waits until every statement that *ended* before B *began*
//! in the capture has been answered. Statements that overlapped in the capture ran
//! concurrently there, so the log does not say which came first and the replay does not
//! decide it either; the ones that had ended could have been what B depended on (a row it
//! updates, a lock it needs). Ranks follow the captured end (ties by start), and B's wait
//! is a prefix of them, so the gate is one number. It cannot deadlock on itself: B's prefix
//! holds only statements that began before B, never B's own nor a later one of its session.
//!
//! Must not touch: clocks (the engine owns time), argv, output.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sut::{Error, QueryMode, Session, StmtId, Value};
use workload::{ClientWorkload, Due, Order, Rng, TxnContext, TxnType, Workload};

use super::capture::{self, Protocol};
use super::fingerprint;

/// Fingerprints with a transaction type of their own; the others share the last type.
pub const MAX_TYPES: usize = 100;

/// The name of the type the rarer fingerprints share.
pub const OTHER: &str = "other statements";

/// How fast the capture is replayed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    /// Each statement at its captured offset divided by this factor.
    Factor(f64),
    /// Each session as fast as the server answers it.
    Max,
}

/// A captured session, ready to replay: its statements and their transaction types.
pub struct Play {
    pub session: capture::Session,
    pub types: Vec<u32>,
    /// Whom it connects as, and to which database (after the mappings).
    pub user: String,
    pub database: String,
    /// `--order strict`: per statement, its rank by captured end and the answered prefix it
    /// waits for (empty otherwise).
    pub gates: Vec<(u64, u64)>,
}

/// Errors of the replay, by (transaction type, SQLSTATE or error code): merged from every
/// client when it is dropped.
pub type ErrorCounts = HashMap<(u32, String), u64>;

pub struct Replay {
    plays: Vec<Arc<Play>>,
    types: Vec<TxnType>,
    speed: Speed,
    /// A fleet's process replays a share of the sessions: client ids start here.
    first_client: u32,
    errors: Arc<Mutex<ErrorCounts>>,
    /// `--order strict`'s gate over every statement replayed.
    order: Option<Arc<Order>>,
}

/// The fingerprints of a capture's statements, most frequent first, and each statement's type.
pub fn types_of(sessions: &[capture::Session]) -> (Vec<String>, Vec<Vec<u32>>) {
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut names: Vec<(String, u64)> = Vec::new();
    let per: Vec<Vec<usize>> = sessions
        .iter()
        .map(|s| {
            s.statements
                .iter()
                .map(|st| {
                    let f = fingerprint::of(&st.sql);
                    let k = *ids.entry(f.clone()).or_insert_with(|| {
                        names.push((f, 0));
                        names.len() - 1
                    });
                    names[k].1 += 1;
                    k
                })
                .collect()
        })
        .collect();
    // Most frequent first, ties by first appearance: stable for a given capture.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(names[k].1));
    let mut rank = vec![0u32; names.len()];
    let mut out = Vec::new();
    for (r, &k) in order.iter().enumerate() {
        if r < MAX_TYPES {
            rank[k] = r as u32;
            out.push(names[k].0.clone());
        } else {
            rank[k] = MAX_TYPES as u32;
        }
    }
    if names.len() > MAX_TYPES {
        out.push(OTHER.to_string());
    }
    let types = per
        .into_iter()
        .map(|v| v.into_iter().map(|k| rank[k]).collect())
        .collect();
    (out, types)
}

impl Replay {
    /// `plays[k]` is client `first_client + k`'s; `strict`: `--order strict` (every
    /// statement ranked by its captured end and given the prefix of ranks it waits for: the
    /// module's header says why this order).
    pub fn new(
        mut plays: Vec<Play>,
        fingerprints: Vec<String>,
        speed: Speed,
        first_client: u32,
        strict: bool,
    ) -> Replay {
        let order = strict.then(|| {
            let gates = capture_order(&plays);
            let n = gates.iter().map(Vec::len).sum::<usize>() as u64;
            for (p, g) in plays.iter_mut().zip(gates) {
                p.gates = g;
            }
            Arc::new(Order::new(n))
        });
        Replay {
            plays: plays.into_iter().map(Arc::new).collect(),
            types: fingerprints
                .into_iter()
                .map(|f| TxnType {
                    name: f.clone(),
                    statements: vec![f],
                })
                .collect(),
            speed,
            first_client,
            errors: Arc::default(),
            order,
        }
    }

    pub fn plays(&self) -> &[Arc<Play>] {
        &self.plays
    }

    /// The errors the replay met, once its clients are gone (after the engine returned).
    pub fn errors(&self) -> ErrorCounts {
        self.errors.lock().map(|e| e.clone()).unwrap_or_default()
    }

    fn play(&self, client_id: u32) -> Option<&Arc<Play>> {
        self.plays
            .get(client_id.checked_sub(self.first_client)? as usize)
    }
}

/// Per play and statement: (rank by captured end, ties by start, then session and place;
/// the number of statements that ended before it began, or at its start having begun
/// earlier). A statement never counts itself nor a later one of its own session: those
/// began at or after its start.
fn capture_order(plays: &[Play]) -> Vec<Vec<(u64, u64)>> {
    let span = |st: &capture::Statement| (st.offset_us + st.duration_us.unwrap_or(0), st.offset_us);
    let mut keys: Vec<((u64, u64), u32, u32)> = Vec::new();
    for (k, p) in plays.iter().enumerate() {
        for (i, st) in p.session.statements.iter().enumerate() {
            keys.push((span(st), k as u32, i as u32));
        }
    }
    keys.sort_unstable();
    let mut out: Vec<Vec<(u64, u64)>> = (plays.iter())
        .map(|p| vec![(0, 0); p.session.statements.len()])
        .collect();
    for (rank, &(_, k, i)) in keys.iter().enumerate() {
        out[k as usize][i as usize].0 = rank as u64;
    }
    for (k, p) in plays.iter().enumerate() {
        for (i, st) in p.session.statements.iter().enumerate() {
            let start = st.offset_us;
            // Ended before it began, or ended at its start having begun before it.
            let before = keys.partition_point(|&(e, _, _)| e < (start, start));
            out[k][i].1 = before as u64;
        }
    }
    out
}

impl Workload for Replay {
    type Client = Client;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, client_id: u32) -> Client {
        Client {
            play: self.play(client_id).cloned(),
            next: 0,
            speed: self.speed,
            verbatim: None,
            extended: HashMap::new(),
            errors: HashMap::new(),
            merged: self.errors.clone(),
            order: self.order.clone(),
        }
    }

    fn continues_after(&self, _e: &Error) -> bool {
        true
    }

    fn client_target(&self, client_id: u32, base: &sut::Target) -> Option<sut::Target> {
        let p = self.play(client_id)?;
        let mut t = base.with_user(&p.user).with_database(&p.database);
        if let (sut::Target::Pg(c), false) = (&mut t, p.session.application.is_empty()) {
            c.application_name = p.session.application.clone();
        }
        Some(t)
    }
}

pub struct Client {
    play: Option<Arc<Play>>,
    /// The next statement to send.
    next: usize,
    speed: Speed,
    verbatim: Option<StmtId>,
    /// Extended statements registered on this session, by text.
    extended: HashMap<String, StmtId>,
    errors: ErrorCounts,
    merged: Arc<Mutex<ErrorCounts>>,
    order: Option<Arc<Order>>,
}

impl Client {
    /// `--order strict`: statement `i` of this session is over (answered, or never to be
    /// sent): the statements waiting for it may go.
    fn over(&self, i: usize) {
        if let (Some(o), Some(p)) = (&self.order, &self.play) {
            if let Some(&(rank, _)) = p.gates.get(i) {
                o.answered(rank);
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A session that ends early (-T, its connection lost) sends none of the rest: no
        // other session may wait for them.
        let left = self.play.as_ref().map_or(0, |p| p.gates.len());
        for i in self.next..left {
            self.over(i);
        }
        if let Ok(mut m) = self.merged.lock() {
            for (k, n) in self.errors.drain() {
                *m.entry(k).or_default() += n;
            }
        }
    }
}

impl ClientWorkload for Client {
    async fn on_connect(&mut self, session: &mut Session, _mode: QueryMode) -> Result<(), Error> {
        // A new session knows none of the last one's statements.
        self.extended.clear();
        self.verbatim = Some(session.register_verbatim());
        Ok(())
    }

    fn due(&mut self) -> Due {
        let Some(p) = &self.play else {
            return Due::Done;
        };
        let Some(st) = p.session.statements.get(self.next) else {
            return Due::Done;
        };
        match self.speed {
            Speed::Max => Due::Now,
            Speed::Factor(f) => Due::At((st.offset_us as f64 / f) as u64),
        }
    }

    fn held_by(&self) -> Option<(&Order, u64)> {
        let o = self.order.as_deref()?;
        let &(_, needs) = self.play.as_ref()?.gates.get(self.next)?;
        Some((o, needs))
    }

    fn next_txn(&mut self, _rng: &mut Rng) -> Option<usize> {
        let p = self.play.as_ref()?;
        Some(*p.types.get(self.next)? as usize)
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let Some(p) = self.play.clone() else {
            return Ok(());
        };
        let Some(st) = p.session.statements.get(self.next) else {
            return Ok(());
        };
        // Sent once, whatever its outcome: the captured session went on to its next one.
        self.next += 1;
        cx.timer.start();
        let r = match st.protocol {
            Protocol::Simple => {
                let id = match self.verbatim {
                    Some(id) => id,
                    None => *self.verbatim.insert(session.register_verbatim()),
                };
                session.execute(id, &[Value::Text(&st.sql)]).await
            }
            Protocol::Extended => {
                let id = match self.extended.get(&st.sql) {
                    Some(id) => *id,
                    None => {
                        let id = session.register(&st.sql, QueryMode::Extended);
                        self.extended.insert(st.sql.clone(), id);
                        id
                    }
                };
                let params: Vec<Value<'_>> = (st.params.iter())
                    .map(|v| v.as_deref().map_or(Value::Null, Value::Text))
                    .collect();
                session.execute(id, &params).await
            }
        };
        cx.timer.end(0, r.is_ok());
        self.over(self.next - 1);
        match r {
            Ok(_) => Ok(()),
            Err(e) => {
                if let Error::Db(d) = &e {
                    *self.errors.entry((txn as u32, d.code.clone())).or_default() += 1;
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(id: &str, spans: &[(u64, u64)]) -> Play {
        Play {
            session: capture::Session {
                id: id.into(),
                statements: (spans.iter())
                    .map(|&(at, took)| capture::Statement {
                        offset_us: at,
                        duration_us: Some(took),
                        sql: "SELECT 1".into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
            types: vec![0; spans.len()],
            user: "u".into(),
            database: "d".into(),
            gates: Vec::new(),
        }
    }

    /// A statement waits for exactly those that ended before it began: not for one that
    /// overlapped it, never for itself or its session's later ones.
    #[test]
    fn strict_order_waits_for_what_ended_before_a_statement_began() {
        // A: [0,300) [300,310); B: [320,330) begins after both of A's ended; C: [305,400)
        // overlaps A's second, and a zero-length statement at 400 on B's session.
        let plays = vec![
            play("a", &[(0, 300), (300, 10)]),
            play("b", &[(320, 10), (400, 0)]),
            play("c", &[(305, 95)]),
        ];
        let g = capture_order(&plays);
        // Ranks by end: A0 (300), A1 (310), B0 (330), C0 (400), B1 (400, begun later).
        let ranks: Vec<Vec<u64>> = (g.iter())
            .map(|v| v.iter().map(|x| x.0).collect())
            .collect();
        assert_eq!(ranks, vec![vec![0, 1], vec![2, 4], vec![3]]);
        let needs: Vec<Vec<u64>> = (g.iter())
            .map(|v| v.iter().map(|x| x.1).collect())
            .collect();
        // A0 waits for none; A1 (at 300) for A0 (ended at 300, begun before); B0 for A0, A1;
        // C0 (at 305) for A0 only: A1 overlapped it; B1 (at 400) for all but itself: C0
        // ended at 400, having begun before.
        assert_eq!(needs, vec![vec![0, 1], vec![2, 4], vec![1]]);
        let r = Replay::new(plays, vec!["SELECT ?".into()], Speed::Max, 0, true);
        let mut c = r.new_client(0);
        let (o, k) = c.held_by().expect("held under --order strict");
        assert_eq!((k, o.prefix()), (0, 0));
        // A's first statement answered; the session then ends early: its unsent second one
        // frees what waited for it too (B0 needs both).
        c.over(0);
        c.next = 1;
        drop(c);
        let o = r.order.as_deref().unwrap();
        assert_eq!(o.prefix(), 2);
    }
}
