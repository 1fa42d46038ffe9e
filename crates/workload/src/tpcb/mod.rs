//! TPC-B as pgbench defines it: the builtins `tpcb-like`, `simple-update`, `select-only`, with
//! pgbench's exact statements and random ranges (pgbench.c, `builtin_script[]`), and the TPC-B
//! consistency check sum(abalance) = sum(tbalance) = sum(bbalance) = sum(history.delta).
//!
//! Each builtin is kept as the script text pgbench shows (`pgbench --show-script=NAME`), one line
//! per command; the statements sent to the server are derived from it by pgbench's own rule
//! (`:name` becomes `$1, $2, ...` in order of appearance, one parameter per occurrence), so the
//! texts a server sees are the texts pgbench sends, `;` included.
//!
//! `-r` statement indexes: [`TxnType::statements`] lists every line of the script, the `\set`
//! lines included, exactly as pgbench's per-statement report does; a `\set` line is timed too (it
//! is the time to draw the value: about 0.000 ms, as in pgbench's report).
//!
//! Random values are drawn in pgbench's order (`aid`, `bid`, `tid`, `delta`) from the client's
//! stream, so with the same `--random-seed` a client updates the same rows as pgbench's client of
//! the same number.
//!
//! Besides pgbench's three builtins there is `tpcb-like-pipelined` (not a pgbench builtin): the
//! `tpcb-like` statements sent as one pipeline with one Sync, as pgbench runs a `tpcb-like` script
//! wrapped in `\startpipeline` / `\endpipeline`. Extended and prepared modes only.
//!
//! `tpcb-sharded` (not a pgbench builtin) is tpcb-like for tables sharded on `bid` (seed 000's
//! `limitless_pgbench_tpcb.sql`): every statement carries the shard key, and the teller and the
//! account are drawn within the branch (`aid` in `100000 * (bid - 1) + 1 ..= 100000 * bid`, as
//! pgbench's loader places them), so `WHERE aid = :aid AND bid = :abid` finds the row; the
//! seed's script draws `aid` and `bid` apart, so most of its account updates match no row. A
//! share `:cross_shard` percent of transactions (`--cross-shard`, TPC-B's clause 5.3.5 "remote"
//! accounts, 15% there) takes its account from another branch, hence usually another shard. It
//! runs as a script (it needs `\if`), with the same TPC-B invariant.
//!
//! On MySQL and MariaDB ([`Builtin::lines`] with [`Dialect::MySql`]) the builtins are the same
//! statements but for pgbench's `END;`, which is PostgreSQL's synonym of COMMIT and no MySQL
//! statement: it becomes `COMMIT;`. (`BEGIN`, `CURRENT_TIMESTAMP` and the rest are MySQL's too.)

use std::fmt;

use sut::{Dialect, Error, QueryMode, Session, StmtId, Value};

use crate::{ClientWorkload, TxnContext, TxnType, Workload};

/// A builtin transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    TpcbLike,
    SimpleUpdate,
    SelectOnly,
    /// `tpcb-like` as one pipeline (stampede's; pgbench runs it as a `\startpipeline` script).
    TpcbLikePipelined,
    /// `tpcb-like` with the shard key in every statement (stampede's; module notes).
    TpcbSharded,
}

const SET_AID: &str = "\\set aid random(1, 100000 * :scale)";
const SET_BID: &str = "\\set bid random(1, 1 * :scale)";
const SET_TID: &str = "\\set tid random(1, 10 * :scale)";
const SET_DELTA: &str = "\\set delta random(-5000, 5000)";
const BEGIN: &str = "BEGIN;";
const UPDATE_ACCOUNTS: &str =
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;";
const SELECT_ACCOUNT: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;";
const UPDATE_TELLERS: &str =
    "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;";
const UPDATE_BRANCHES: &str =
    "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;";
const INSERT_HISTORY: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);";
const END: &str = "END;";
/// `END;` on MySQL.
const COMMIT: &str = "COMMIT;";
/// tpcb-sharded's lines (module notes): the branch first, teller and account within it, unless
/// the transaction is one of the `:cross_shard` percent whose account is in another branch.
const SHARDED_SET_BID: &str = "\\set bid random(1, 1 * :scale)";
const SHARDED_SET_TID: &str = "\\set tid 10 * (:bid - 1) + random(1, 10)";
const SHARDED_SET_ABID: &str = "\\set abid :bid";
const SHARDED_IF_CROSS: &str = "\\if :scale > 1 and random(1, 100) <= :cross_shard";
const SHARDED_OTHER_BRANCH: &str = "\\set abid (:bid + random(0, :scale - 2)) % :scale + 1";
const SHARDED_ENDIF: &str = "\\endif";
const SHARDED_SET_AID: &str = "\\set aid 100000 * (:abid - 1) + random(1, 100000)";
const SHARDED_UPDATE_ACCOUNTS: &str =
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :abid;";
const SHARDED_SELECT_ACCOUNT: &str =
    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :abid;";
const SHARDED_UPDATE_TELLERS: &str =
    "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;";
const START_PIPELINE: &str = "\\startpipeline";
const END_PIPELINE: &str = "\\endpipeline";

const TPCB_LIKE: &[&str] = &[
    SET_AID,
    SET_BID,
    SET_TID,
    SET_DELTA,
    BEGIN,
    UPDATE_ACCOUNTS,
    SELECT_ACCOUNT,
    UPDATE_TELLERS,
    UPDATE_BRANCHES,
    INSERT_HISTORY,
    END,
];
const SIMPLE_UPDATE: &[&str] = &[
    SET_AID,
    SET_BID,
    SET_TID,
    SET_DELTA,
    BEGIN,
    UPDATE_ACCOUNTS,
    SELECT_ACCOUNT,
    INSERT_HISTORY,
    END,
];
const SELECT_ONLY: &[&str] = &[SET_AID, SELECT_ACCOUNT];
const TPCB_LIKE_PIPELINED: &[&str] = &[
    SET_AID,
    SET_BID,
    SET_TID,
    SET_DELTA,
    START_PIPELINE,
    BEGIN,
    UPDATE_ACCOUNTS,
    SELECT_ACCOUNT,
    UPDATE_TELLERS,
    UPDATE_BRANCHES,
    INSERT_HISTORY,
    END,
    END_PIPELINE,
];

const TPCB_SHARDED: &[&str] = &[
    SHARDED_SET_BID,
    SHARDED_SET_TID,
    SHARDED_SET_ABID,
    SHARDED_IF_CROSS,
    SHARDED_OTHER_BRANCH,
    SHARDED_ENDIF,
    SHARDED_SET_AID,
    SET_DELTA,
    BEGIN,
    SHARDED_UPDATE_ACCOUNTS,
    SHARDED_SELECT_ACCOUNT,
    SHARDED_UPDATE_TELLERS,
    UPDATE_BRANCHES,
    INSERT_HISTORY,
    END,
];

impl Builtin {
    /// pgbench's builtins, in pgbench's order (its prefix matching and listing use this order).
    pub const PGBENCH: [Builtin; 3] = [
        Builtin::TpcbLike,
        Builtin::SimpleUpdate,
        Builtin::SelectOnly,
    ];
    /// stampede's additions, matched by exact name or by a prefix no pgbench builtin has.
    pub const EXTRA: [Builtin; 2] = [Builtin::TpcbLikePipelined, Builtin::TpcbSharded];

    /// The name for `-b`.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
            Builtin::TpcbLikePipelined => "tpcb-like-pipelined",
            Builtin::TpcbSharded => "tpcb-sharded",
        }
    }

    /// The description pgbench prints (`transaction type: <builtin: TPC-B (sort of)>`).
    pub fn description(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "<builtin: TPC-B (sort of)>",
            Builtin::SimpleUpdate => "<builtin: simple update>",
            Builtin::SelectOnly => "<builtin: select only>",
            Builtin::TpcbLikePipelined => "<builtin: TPC-B (sort of), pipelined>",
            Builtin::TpcbSharded => "<builtin: TPC-B (sort of), shard key in every statement>",
        }
    }

    /// The script, one line per command, as `pgbench --show-script` prints it.
    pub fn script(self) -> &'static [&'static str] {
        match self {
            Builtin::TpcbLike => TPCB_LIKE,
            Builtin::SimpleUpdate => SIMPLE_UPDATE,
            Builtin::SelectOnly => SELECT_ONLY,
            Builtin::TpcbLikePipelined => TPCB_LIKE_PIPELINED,
            Builtin::TpcbSharded => TPCB_SHARDED,
        }
    }

    /// The script in `dialect`: [`Builtin::script`], with `END;` as `COMMIT;` on MySQL (see the
    /// module header).
    pub fn lines(self, dialect: Dialect) -> impl Iterator<Item = &'static str> {
        self.script().iter().map(move |&l| match (l, dialect) {
            (END, Dialect::MySql) => COMMIT,
            (l, _) => l,
        })
    }

    /// Whether only the script engine runs it (it uses `\if` and expressions, and the variable
    /// `cross_shard`, which the run defines): never [`TpcbWorkload`].
    pub fn needs_script(self) -> bool {
        self == Builtin::TpcbSharded
    }

    /// Whether the transaction ends in a COMMIT (`END`): tpcb-like and simple-update, not
    /// select-only (one autocommitted SELECT).
    pub fn commits(self) -> bool {
        !matches!(self, Builtin::SelectOnly)
    }

    /// Whether the transaction writes to `pgbench_history` (one row per committed transaction).
    pub fn inserts_history(self) -> bool {
        !matches!(self, Builtin::SelectOnly)
    }

    /// Whether it can run in `mode` (the pipelined variant needs the extended protocol).
    pub fn supports(self, mode: QueryMode) -> bool {
        !(self == Builtin::TpcbLikePipelined && mode == QueryMode::Simple)
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `-b NAME` that names no builtin, or more than one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuiltinError {
    #[error("no builtin script found for name \"{0}\"\n{list}", list = available_list())]
    NotFound(String),
    #[error(
        "ambiguous builtin name: {n} builtin scripts found for prefix \"{prefix}\"\n{list}",
        n = .matches.len(),
        list = available_list()
    )]
    Ambiguous {
        prefix: String,
        matches: Vec<Builtin>,
    },
    #[error("invalid weight specification: {0}")]
    Weight(String),
}

/// pgbench's `listAvailableScripts` text, plus stampede's additions.
pub fn available_list() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in Builtin::PGBENCH.iter().chain(Builtin::EXTRA.iter()) {
        s.push_str(&format!("{:>20}: {}\n", b.name(), b.description()));
    }
    s.pop();
    s
}

/// Find a builtin by name as pgbench's `findBuiltin` does: any unambiguous prefix of a pgbench
/// builtin (`-b tpcb`, `-b select`); an ambiguous prefix is an error listing the matches. An exact
/// name always wins, and stampede's additions are matched only by exact name or by a prefix that
/// no pgbench builtin has (so `tpcb` still means `tpcb-like`).
pub fn builtin(name: &str) -> Result<Builtin, BuiltinError> {
    let all = Builtin::PGBENCH.iter().chain(Builtin::EXTRA.iter());
    if let Some(b) = all.clone().find(|b| b.name() == name) {
        return Ok(*b);
    }
    for group in [&Builtin::PGBENCH[..], &Builtin::EXTRA[..]] {
        let matches: Vec<Builtin> = group
            .iter()
            .copied()
            .filter(|b| b.name().starts_with(name))
            .collect();
        match matches.len() {
            0 => continue,
            1 => return Ok(matches[0]),
            _ => {
                return Err(BuiltinError::Ambiguous {
                    prefix: name.to_string(),
                    matches,
                })
            }
        }
    }
    Err(BuiltinError::NotFound(name.to_string()))
}

/// `-b NAME[@WEIGHT]` as pgbench parses it (weight after the last `@`, default 1, 0..=i32::MAX).
pub fn parse_weighted(spec: &str) -> Result<(Builtin, u32), BuiltinError> {
    match spec.rsplit_once('@') {
        None => Ok((builtin(spec)?, 1)),
        Some((name, w)) => {
            let weight: u32 = w
                .parse()
                .ok()
                .filter(|w| *w <= i32::MAX as u32)
                .ok_or_else(|| BuiltinError::Weight(spec.to_string()))?;
            Ok((builtin(name)?, weight))
        }
    }
}

/// The script variables of TPC-B, indexes into a client's value array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Var {
    Aid = 0,
    Bid = 1,
    Tid = 2,
    Delta = 3,
}

impl Var {
    fn from_name(s: &str) -> Option<Var> {
        match s {
            "aid" => Some(Var::Aid),
            "bid" => Some(Var::Bid),
            "tid" => Some(Var::Tid),
            "delta" => Some(Var::Delta),
            _ => None,
        }
    }
}

/// One compiled line of a builtin.
#[derive(Clone, Debug)]
enum Line {
    /// `\set var random(lo, hi)`
    Set {
        var: Var,
        lo: i64,
        hi: i64,
    },
    /// An SQL statement, `$n` form, with the variable of each parameter.
    Sql {
        sql: String,
        params: Vec<Var>,
    },
    StartPipeline,
    EndPipeline,
}

/// pgbench's rewriting of `:var` references into `$1, $2, ...` (`parseQuery`): each occurrence is
/// a new parameter, in order of appearance. Only the TPC-B variables occur in the builtins.
fn to_dollar_params(text: &str) -> (String, Vec<Var>) {
    let mut out = String::with_capacity(text.len());
    let mut params = Vec::new();
    let mut rest = text;
    while let Some(pos) = rest.find(':') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        match Var::from_name(&after[..len]) {
            Some(v) => {
                params.push(v);
                out.push('$');
                out.push_str(&params.len().to_string());
                rest = &after[len..];
            }
            None => {
                out.push(':');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, params)
}

fn compile(b: Builtin, scale: i64, dialect: Dialect) -> Vec<Line> {
    b.lines(dialect)
        .map(|text| match text {
            SET_AID => Line::Set {
                var: Var::Aid,
                lo: 1,
                hi: 100_000 * scale,
            },
            SET_BID => Line::Set {
                var: Var::Bid,
                lo: 1,
                hi: scale,
            },
            SET_TID => Line::Set {
                var: Var::Tid,
                lo: 1,
                hi: 10 * scale,
            },
            SET_DELTA => Line::Set {
                var: Var::Delta,
                lo: -5000,
                hi: 5000,
            },
            START_PIPELINE => Line::StartPipeline,
            END_PIPELINE => Line::EndPipeline,
            sql => {
                let (sql, params) = to_dollar_params(sql);
                Line::Sql { sql, params }
            }
        })
        .collect()
}

/// The TPC-B workload: a weighted mix of builtins at a scale.
#[derive(Debug)]
pub struct TpcbWorkload {
    scripts: Vec<(Builtin, u32)>,
    types: Vec<TxnType>,
    lines: std::sync::Arc<Vec<Vec<Line>>>,
}

impl TpcbWorkload {
    /// `scripts`: the builtins and their weights, in `-b` order (the same builtin may appear more
    /// than once, as in pgbench). `scale`: the database's scale factor (rows in pgbench_branches).
    /// For PostgreSQL; [`TpcbWorkload::new_in`] for another dialect.
    pub fn new(scripts: Vec<(Builtin, u32)>, scale: u32) -> TpcbWorkload {
        TpcbWorkload::new_in(scripts, scale, Dialect::Postgres)
    }

    /// [`TpcbWorkload::new`] for a server of `dialect` ([`Builtin::lines`]).
    pub fn new_in(scripts: Vec<(Builtin, u32)>, scale: u32, dialect: Dialect) -> TpcbWorkload {
        assert!(
            scripts.iter().all(|(b, _)| !b.needs_script()),
            "tpcb-sharded runs as a script (ScriptSet::add_builtin)"
        );
        let scale = scale.max(1) as i64;
        let types = scripts
            .iter()
            .map(|(b, _)| TxnType {
                name: b.description().to_string(),
                statements: b.lines(dialect).map(str::to_string).collect(),
            })
            .collect();
        let lines = scripts
            .iter()
            .map(|(b, _)| compile(*b, scale, dialect))
            .collect();
        TpcbWorkload {
            scripts,
            types,
            lines: std::sync::Arc::new(lines),
        }
    }

    /// The weights, in `txn_types()` order (for `engine::RunSpec::weights`).
    pub fn weights(&self) -> Vec<u32> {
        self.scripts.iter().map(|(_, w)| *w).collect()
    }

    pub fn builtins(&self) -> Vec<Builtin> {
        self.scripts.iter().map(|(b, _)| *b).collect()
    }
}

impl Workload for TpcbWorkload {
    type Client = TpcbClient;

    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn new_client(&self, _client_id: u32) -> TpcbClient {
        TpcbClient {
            lines: self.lines.clone(),
            stmts: Vec::new(),
            vals: [0; 4],
            at: 0,
        }
    }

    fn read_only(&self, txn: usize) -> bool {
        self.scripts
            .get(txn)
            .is_some_and(|(b, _)| *b == Builtin::SelectOnly)
    }

    fn validate(&self, mode: QueryMode) -> Result<(), String> {
        for (b, _) in &self.scripts {
            if !b.supports(mode) {
                return Err(format!(
                    "builtin {} needs -M extended or -M prepared (pipelining is not possible with the simple query protocol)",
                    b.name()
                ));
            }
        }
        Ok(())
    }
}

/// One client's TPC-B state: its statements on the current session and the current values.
pub struct TpcbClient {
    lines: std::sync::Arc<Vec<Vec<Line>>>,
    /// Per transaction type, per line: the registered statement of an SQL line.
    stmts: Vec<Vec<Option<StmtId>>>,
    vals: [i64; 4],
    /// The line being run, for [`ClientWorkload::failed_command`].
    at: usize,
}

impl TpcbClient {
    fn params<'a>(
        vals: &[i64; 4],
        params: &[Var],
        buf: &'a mut [Value<'static>; 4],
    ) -> &'a [Value<'static>] {
        for (slot, v) in buf.iter_mut().zip(params) {
            *slot = Value::Int(vals[*v as usize]);
        }
        &buf[..params.len()]
    }
}

impl ClientWorkload for TpcbClient {
    async fn on_connect(&mut self, session: &mut Session, mode: QueryMode) -> Result<(), Error> {
        self.stmts = self
            .lines
            .iter()
            .map(|lines| {
                lines
                    .iter()
                    .map(|l| match l {
                        Line::Sql { sql, .. } => Some(session.register(sql, mode)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        crate::prepare_registered(session, mode).await
    }

    async fn execute(
        &mut self,
        txn: usize,
        session: &mut Session,
        cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        let lines = &self.lines[txn];
        let stmts = &self.stmts[txn];
        let mut buf = [Value::Null; 4];
        let mut pipelining = false;
        // Pipeline bookkeeping: how many results to read, and where the pipeline started.
        let mut queued = 0usize;
        for (i, line) in lines.iter().enumerate() {
            match line {
                Line::Set { var, lo, hi } => {
                    cx.timer.start();
                    self.vals[*var as usize] = cx.rng.range(*lo, *hi);
                    cx.timer.end(i, true);
                }
                Line::Sql { params, .. } => {
                    self.at = i;
                    let id = stmts[i].expect("SQL lines are registered on connect");
                    let p = Self::params(&self.vals, params, &mut buf);
                    cx.timer.start();
                    if pipelining {
                        session.queue(id, p);
                        queued += 1;
                        cx.timer.end(i, true);
                    } else {
                        let r = session.execute(id, p).await;
                        cx.timer.end(i, r.is_ok());
                        r?;
                    }
                }
                Line::StartPipeline => {
                    if cx.mode == QueryMode::Simple {
                        return Err(Error::Protocol(
                            "pipelining is not possible with the simple query protocol".into(),
                        ));
                    }
                    cx.timer.start();
                    pipelining = true;
                    cx.timer.end(i, true);
                }
                Line::EndPipeline => {
                    cx.timer.start();
                    session.queue_sync();
                    let r = finish_pipeline(session, queued).await;
                    cx.timer.end(i, r.is_ok());
                    r?;
                    pipelining = false;
                    queued = 0;
                }
            }
        }
        Ok(())
    }

    fn failed_command(&self) -> Option<usize> {
        Some(self.at)
    }
}

/// Send the queued pipeline and read every result through ReadyForQuery. Returns the first error;
/// after a server error the session is still at ReadyForQuery (usable); after an I/O error it is
/// not.
async fn finish_pipeline(session: &mut Session, queued: usize) -> Result<(), Error> {
    session.flush().await?;
    let mut first: Option<Error> = None;
    for _ in 0..queued {
        match session.read_result().await {
            Ok(_) => {}
            Err(e @ Error::Db(_)) => {
                if first.is_none() {
                    first = Some(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
    session.read_ready().await?;
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The TPC-B consistency check: after a fresh load (or `reset`), every delta added to an account
/// was added to a teller, a branch and a history row, so the four sums are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvariantReport {
    pub sum_abalance: i64,
    pub sum_tbalance: i64,
    pub sum_bbalance: i64,
    pub sum_delta: i64,
    /// Rows in pgbench_history.
    pub history_rows: i64,
    pub passed: bool,
}

/// Compute the sums (valid only after a fresh load or `reset`; the caller decides whether it
/// applies: `simple-update` and `select-only` leave tellers and branches untouched).
pub async fn check_tpcb_invariant(session: &mut Session) -> Result<InvariantReport, Error> {
    let rows = session
        .simple_query(
            "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), \
                    (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), \
                    (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), \
                    (SELECT coalesce(sum(delta), 0) FROM pgbench_history), \
                    (SELECT count(*) FROM pgbench_history)",
        )
        .await?;
    let row = rows
        .first()
        .ok_or_else(|| Error::Protocol("invariant query returned no row".into()))?;
    let num = |i: usize| -> Result<i64, Error> {
        row.get(i)
            .and_then(|v| v.as_deref())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                Error::Protocol(format!("invariant query: unexpected value in column {i}"))
            })
    };
    let (a, t, b, d, n) = (num(0)?, num(1)?, num(2)?, num(3)?, num(4)?);
    Ok(InvariantReport {
        sum_abalance: a,
        sum_tbalance: t,
        sum_bbalance: b,
        sum_delta: d,
        history_rows: n,
        passed: a == t && t == b && b == d,
    })
}

#[cfg(test)]
mod tests;
