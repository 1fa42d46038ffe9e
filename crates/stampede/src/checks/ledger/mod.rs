//! The statement ledger (issue 30, item 1): after every run, what the clients sent by kind,
//! beside what the server counted in the same window, with a verdict per line.
//!
//! Three counts meet on a line (`report::ledger`):
//!
//! - **workload**: what the family's own counters say its transactions did ([`Claim`]s: a
//!   probe's acknowledged writes and reads, tpcb-like's transactions times the statements of
//!   one, TPC-C's order lines). A range when failed attempts may have run part of a
//!   transaction.
//! - **sent**: what the clients' sessions saw the server complete, counted on the wire by kind
//!   (`measure::ledger::Tally`), setup included. The workload's count must hold the part sent
//!   in its transactions (sent less the `on_connect` setup): a family that counts a read as a
//!   write fails here.
//! - **server**: the server's counter over the run (`server`: `pg_stat_statements`,
//!   `pg_stat_user_tables`, `pg_stat_database`; `Com_*`, `Handler_*`), less what stampede's
//!   own other sessions sent in the window (the observer, the checks, a sampler: every
//!   session of the process counts itself when it closes, `measure::ledger::closed`, and the
//!   baseline sessions count their own). So on an idle server the lines are exact.
//!
//! The identities, per kind `k` (statements) and per table `t` (rows):
//!
//! ```text
//! workload(k)      contains  sent(k) - setup(k)
//! server(k)        =  sent(k)                        PostgreSQL: completed statements only
//! server(k)        in [sent(k), sent(k) + failed]    MySQL's Com_* count failed ones too
//! server rows(t)   in workload rows(t)               PostgreSQL's n_tup_* (aborted rows too)
//! ```
//!
//! plus, for either, up to the transactions abandoned in flight at the run's end (each may
//! have run on the server, its reply never read). A surplus while other sessions were connected
//! is inconclusive (their statements count too), not failed.

pub mod server;

use measure::ledger::{Bounds, Claim, Kind, Tally};
use report::ledger::{LedgerLine, LedgerSection, Unit, Verdict};
use sut::Dialect;

pub use server::Counters;

/// What the ledger compares.
pub struct Inputs<'a> {
    /// The family's claims (empty: it makes none, as a custom script).
    pub claims: &'a [Claim],
    /// What the clients' sessions (and the family's finishing session) sent.
    pub clients: Tally,
    /// The part of `clients` the workload's `on_connect` sent.
    pub setup: Tally,
    /// What every session of stampede's sent in the window: the clients and its own others.
    pub all: Tally,
    /// Transactions whose outcome the clients never learned: abandoned in flight at the run's
    /// end, or (a fault run) a write whose answer was lost. Each may have run on the server.
    pub in_doubt: u64,
    /// The server's counters' movement over the run (summed over hosts or nodes), or why there
    /// is none.
    pub server: Result<Counters, String>,
    /// Sessions other than stampede's were connected to the server during the run.
    pub others: bool,
    /// Some of the workload's statements write rows their replies do not report (a
    /// data-modifying WITH clause): the sessions' row counts fall short of the server's.
    pub rows_unreported: bool,
    /// MySQL: some of the workload's statements call window functions, whose internal
    /// temporary tables' row updates `Handler_update` counts.
    pub window_functions: bool,
    pub dialect: Dialect,
}

/// The kinds whose statements the ledger counts: PostgreSQL's `pg_stat_statements` counts
/// COMMIT and ROLLBACK only with `track_utility`, and their transactions are the commit
/// count's and the rollback line's; MySQL counts COMMIT and ROLLBACK statements in `Com_*`.
fn kinds(d: Dialect) -> &'static [Kind] {
    match d {
        Dialect::Postgres => &[Kind::Select, Kind::Insert, Kind::Update, Kind::Delete],
        Dialect::MySql => &[
            Kind::Select,
            Kind::Insert,
            Kind::Update,
            Kind::Delete,
            Kind::Commit,
            Kind::Rollback,
        ],
    }
}

/// The ledger's lines.
pub fn build(i: &Inputs) -> LedgerSection {
    let mut lines = Vec::new();
    let ours = i.all.since(&i.clients);
    let server = i.server.as_ref();
    for &k in kinds(i.dialect) {
        let line = statements_line(i, k, &ours);
        if line.workload.is_some_and(|b| b.max > 0)
            || line.sent.is_some_and(|v| v > 0)
            || line.server.is_some_and(|v| v != 0)
        {
            lines.push(line);
        }
    }
    for k in [Kind::Insert, Kind::Update, Kind::Delete] {
        let line = rows_line(i, k, &ours);
        if line.sent.is_some_and(|v| v > 0) || line.server.is_some_and(|v| v != 0) {
            lines.push(line);
        }
    }
    lines.extend(table_lines(i));
    if i.dialect == Dialect::Postgres {
        if let Some(l) = rollback_line(i, &ours) {
            lines.push(l);
        }
    }
    let mut sources = Vec::new();
    match server {
        Ok(c) => {
            match &c.statements {
                Ok(_) => sources.push(format!("statements: {}", c.statements_source)),
                Err(why) => sources.push(format!("statements: not counted ({why})")),
            }
            sources.push(format!("rows: {}", c.rows_source));
            if c.rollbacks.is_some() {
                sources.push("rolled-back transactions: pg_stat_database.xact_rollback".into());
            }
        }
        Err(why) => sources.push(format!("none: {why}")),
    }
    let own = ours.statements.iter().sum::<u64>();
    if own > 0 {
        sources.push(format!(
            "stampede's own sessions (observer, checks) sent {own} statements in the window, \
             taken off the server's counts"
        ));
    }
    LedgerSection { sources, lines }
}

/// The workload's claims of one kind, summed over tables; `None` when it makes none at all.
fn claimed(claims: &[Claim], k: Kind) -> Option<(Bounds, String)> {
    // A family that claims any statements claims every select, insert, update and delete its
    // transactions make (none of a kind is a claim of 0); COMMIT and ROLLBACK it leaves to the
    // commit count unless it says.
    let transactional = matches!(k, Kind::Commit | Kind::Rollback | Kind::Other);
    // A family whose claims are all of rows (TPC-C's) counts no statements at all.
    if claims.iter().all(|c| c.statements.is_none())
        || transactional && !claims.iter().any(|c| c.kind == k)
    {
        return None;
    }
    // Claims of rows only (a table's inserted rows) say nothing of statements.
    let of_kind: Vec<&Claim> = (claims.iter())
        .filter(|c| c.kind == k && c.statements.is_some())
        .collect();
    if of_kind.is_empty() && claims.iter().any(|c| c.kind == k) {
        return None;
    }
    let b = (of_kind.iter()).fold(Bounds::exact(0), |acc, c| {
        acc + c.statements.unwrap_or_default()
    });
    let mut from: Vec<&str> = of_kind.iter().map(|c| c.from.as_str()).collect();
    from.dedup();
    Some((b, from.join(", ")))
}

/// Compare the server's count `raw` (stampede's own other sessions included) with what the
/// clients sent: `lo..=hi` is what the clients' statements explain.
fn against_server(
    i: &Inputs,
    raw: i64,
    ours: u64,
    lo: u64,
    hi: u64,
    why_hi: &str,
) -> (Verdict, String, i64) {
    let server = raw - ours as i64;
    let evicted = i.server.as_ref().ok().and_then(|c| c.evicted).unwrap_or(0);
    if server == lo as i64 {
        return (
            Verdict::Exact,
            format!("the server counted {server}"),
            server,
        );
    }
    if (lo as i64..=hi as i64).contains(&server) {
        return (
            Verdict::Within,
            format!(
                "the server counted {} more than the clients saw complete: {why_hi}",
                server - lo as i64
            ),
            server,
        );
    }
    if evicted > 0 {
        return (
            Verdict::Inconclusive,
            format!(
                "inconclusive: the server counted {server}, the clients {lo}, but \
                 pg_stat_statements evicted {evicted} entries during the run (raise \
                 pg_stat_statements.max)"
            ),
            server,
        );
    }
    if i.others && server > hi as i64 {
        return (
            Verdict::Inconclusive,
            format!(
                "inconclusive: the server counted {server}, the clients {lo}; other sessions \
                 were connected, and theirs count too"
            ),
            server,
        );
    }
    (
        Verdict::Failed,
        format!("the server counted {server}, but the clients' sessions saw {lo} complete"),
        server,
    )
}

fn statements_line(i: &Inputs, k: Kind, ours: &Tally) -> LedgerLine {
    let sent = i.clients.statements(k);
    let measured = sent - i.setup.statements(k).min(sent);
    let claim = claimed(i.claims, k);
    let mut line = LedgerLine {
        kind: k,
        table: None,
        host: None,
        unit: Unit::Statements,
        workload: claim.as_ref().map(|c| c.0),
        workload_from: claim
            .as_ref()
            .map(|c| c.1.clone())
            .filter(|s| !s.is_empty()),
        sent: Some(sent),
        server: None,
        source: String::new(),
        verdict: Verdict::Exact,
        detail: String::new(),
    };
    let setup = match sent - measured {
        0 => String::new(),
        n => format!(" ({n} of them in the clients' setup)"),
    };
    if let Some((b, from)) = &claim {
        if !b.contains(measured) {
            line.verdict = Verdict::Failed;
            line.detail = format!(
                "the workload counted {b} {} statements ({from}), but its sessions sent {measured} \
                 in its transactions",
                k.as_str()
            );
        }
    }
    let server = i.server.as_ref();
    line.source = server.map_or("-", |c| c.statements_source).to_string();
    let counted = match server {
        Ok(c) => c.statements.as_ref().map(|s| s[k as usize]),
        Err(why) => Err(why),
    };
    let galera = server.is_ok_and(|c| c.galera) && k.writes();
    match counted {
        Err(why) => {
            if line.verdict != Verdict::Failed {
                line.verdict = Verdict::Inconclusive;
                line.detail = format!("inconclusive: {why}{setup}");
            }
        }
        Ok(raw) if galera => {
            line.server = Some(raw - ours.statements(k) as i64);
            if line.verdict != Verdict::Failed {
                line.verdict = Verdict::Inconclusive;
                line.detail = "inconclusive on a Galera cluster: each node's appliers count the \
                               writes replicated to it in its own Com_*"
                    .into();
            }
        }
        Ok(raw) => {
            // MySQL counts a statement when it starts, failed ones too; PostgreSQL's
            // pg_stat_statements when it completes.
            let (extra, why) = match i.dialect {
                Dialect::MySql => (
                    i.all.failed + i.in_doubt,
                    format!(
                        "{} statements failed (Com_* counts them) or their outcome was never learned",
                        i.all.failed + i.in_doubt
                    ),
                ),
                Dialect::Postgres => (
                    i.in_doubt,
                    format!(
                        "{} transactions' outcome was never learned (abandoned in flight, or their \
                         answer lost)",
                        i.in_doubt
                    ),
                ),
            };
            let (v, detail, s) = against_server(
                i,
                raw,
                ours.statements(k),
                sent,
                sent + extra,
                if extra > 0 { &why } else { "" },
            );
            line.server = Some(s);
            if line.verdict != Verdict::Failed {
                line.verdict = v;
                line.detail = format!("{detail}{setup}");
            }
        }
    }
    line
}

fn rows_line(i: &Inputs, k: Kind, ours: &Tally) -> LedgerLine {
    let sent = i.clients.rows(k);
    let mut line = LedgerLine {
        kind: k,
        table: None,
        host: None,
        unit: Unit::Rows,
        workload: None,
        workload_from: None,
        sent: Some(sent),
        server: None,
        source: i.server.as_ref().map_or("-", |c| c.rows_source).to_string(),
        verdict: Verdict::Inconclusive,
        detail: String::new(),
    };
    match i.server.as_ref() {
        Err(why) => line.detail = format!("inconclusive: {why}"),
        Ok(c) if i.rows_unreported => {
            line.server = Some(c.rows[k as usize] - ours.rows(k) as i64);
            line.detail = "inconclusive: some of the workload's statements write inside WITH \
                           clauses, whose rows no reply reports (the tables' lines compare the \
                           workload's counts with the server's)"
                .into();
        }
        Ok(c) if c.galera => {
            line.server = Some(c.rows[k as usize] - ours.rows(k) as i64);
            line.detail = "inconclusive on a Galera cluster: every node's appliers write the \
                           replicated rows again"
                .into();
        }
        Ok(c) if i.window_functions && k == Kind::Update => {
            line.server = Some(c.rows[k as usize] - ours.rows(k) as i64);
            line.detail = "inconclusive: some of the workload's statements call window \
                           functions, whose temporary tables' rows Handler_update counts too"
                .into();
        }
        Ok(c) if c.remote_tables => {
            line.server = Some(c.rows[k as usize] - ours.rows(k) as i64);
            line.detail = "inconclusive: this database has foreign or distributed tables \
                           (postgres_fdw, Citus), whose rows are written and counted on other \
                           servers"
                .into();
        }
        // MySQL's Handler_update counts the rows an UPDATE changed; the clients count the rows
        // it matched (CLIENT_FOUND_ROWS, as PostgreSQL reports them): an UPDATE that leaves a
        // row as it was (`SET x = x + 0`) lowers the server's count, never raises it.
        Ok(c)
            if i.dialect == Dialect::MySql
                && k == Kind::Update
                && (0..sent as i64).contains(&(c.rows[k as usize] - ours.rows(k) as i64)) =>
        {
            let s = c.rows[k as usize] - ours.rows(k) as i64;
            line.server = Some(s);
            line.verdict = Verdict::Within;
            line.detail = format!(
                "the server counted {} fewer than the clients saw complete: MySQL counts the \
                 rows an UPDATE changed, the clients the rows it matched (as PostgreSQL \
                 reports them), so a row an UPDATE left as it was counts on the clients' side \
                 only",
                sent as i64 - s
            );
        }
        Ok(c) => {
            // Rows a failed statement wrote before its error count on the server too.
            let failed = i.all.failed + i.in_doubt;
            let why = format!(
                "{failed} statements failed or their outcome was never learned, and the rows they wrote \
                 before that count on the server"
            );
            let hi = if failed > 0 { u64::MAX / 4 } else { sent };
            let (v, detail, s) = against_server(
                i,
                c.rows[k as usize],
                ours.rows(k),
                sent,
                hi,
                if failed > 0 { &why } else { "" },
            );
            line.server = Some(s);
            line.verdict = v;
            line.detail = detail;
        }
    }
    line
}

/// Per table, the rows the workload says it wrote against the table's own counter
/// (PostgreSQL's `pg_stat_user_tables`; MySQL keeps none without performance_schema).
fn table_lines(i: &Inputs) -> Vec<LedgerLine> {
    let Ok(server) = i.server.as_ref() else {
        return Vec::new();
    };
    let Some(tables) = &server.tables else {
        return Vec::new();
    };
    let mut keys: Vec<(Kind, &str)> = (i.claims.iter())
        .filter(|c| c.rows.is_some() && c.kind.writes())
        .map(|c| (c.kind, c.table.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    let mut lines = Vec::new();
    for (k, table) in keys {
        let mine: Vec<&Claim> = (i.claims.iter())
            .filter(|c| c.kind == k && c.table == table)
            .collect();
        let rows = (mine.iter()).fold(Bounds::exact(0), |acc, c| acc + c.rows.unwrap_or_default());
        let from = mine.first().map(|c| c.from.clone());
        let matching: Vec<&[i64; 7]> = match table.strip_suffix('*') {
            Some(prefix) => (tables.iter())
                .filter(|(n, _)| n.starts_with(prefix))
                .map(|(_, v)| v)
                .collect(),
            None => tables.get(table).into_iter().collect(),
        };
        let counted: Option<i64> =
            (!matching.is_empty()).then(|| matching.iter().map(|v| v[k as usize]).sum());
        let mut line = LedgerLine {
            kind: k,
            table: Some(table.to_string()),
            host: None,
            unit: Unit::Rows,
            workload: Some(rows),
            workload_from: from,
            sent: None,
            server: counted,
            source: format!("pg_stat_user_tables.n_tup_{}", short(k)),
            verdict: Verdict::Exact,
            detail: String::new(),
        };
        match counted {
            // A table that did not move is absent from the delta: 0, unless the workload
            // wrote to it.
            None if rows.min == 0 => {
                line.server = Some(0);
                line.detail = "the server counted 0".into();
            }
            None => {
                line.verdict = Verdict::Inconclusive;
                line.detail = format!(
                    "inconclusive: this server keeps no row counter for {table} that moved (a \
                     foreign, distributed or remote table keeps its rows elsewhere)"
                );
            }
            Some(n) if n >= 0 && rows.contains(n as u64) => {
                line.verdict = if rows.is_exact() {
                    Verdict::Exact
                } else {
                    Verdict::Within
                };
                line.detail = format!("the server counted {n}, within the workload's {rows}");
            }
            Some(n) if i.others => {
                line.verdict = Verdict::Inconclusive;
                line.detail = format!(
                    "inconclusive: the server counted {n}, the workload {rows}; other sessions \
                     were connected, and theirs count too"
                );
            }
            Some(n) => {
                line.verdict = Verdict::Failed;
                line.detail = format!(
                    "the server counted {n} rows, but the workload {rows} ({})",
                    line.workload_from.as_deref().unwrap_or("its counters")
                );
            }
        }
        lines.push(line);
    }
    lines
}

fn short(k: Kind) -> &'static str {
    match k {
        Kind::Insert => "ins",
        Kind::Update => "upd",
        Kind::Delete => "del",
        _ => "?",
    }
}

/// PostgreSQL's rolled-back transactions: a ROLLBACK the clients sent (or a COMMIT of a failed
/// block, tagged ROLLBACK) is one; a failed statement outside a block (autocommit) is one with
/// no ROLLBACK on the wire, and so may be a failed one inside a block the session then left.
fn rollback_line(i: &Inputs, ours: &Tally) -> Option<LedgerLine> {
    let c = i.server.as_ref().ok()?;
    let raw = c.rollbacks?;
    let sent = i.clients.statements(Kind::Rollback);
    let failed = i.all.failed + i.in_doubt;
    let why = format!(
        "{failed} statements failed (an autocommitted one rolls back with no ROLLBACK sent) or \
         their outcome was never learned"
    );
    let (verdict, detail, server) = against_server(
        i,
        raw,
        ours.statements(Kind::Rollback),
        sent,
        sent + failed,
        if failed > 0 { &why } else { "" },
    );
    (sent > 0 || server != 0).then(|| LedgerLine {
        kind: Kind::Rollback,
        table: None,
        host: None,
        unit: Unit::Transactions,
        workload: None,
        workload_from: None,
        sent: Some(sent),
        server: Some(server),
        source: "pg_stat_database.xact_rollback".into(),
        verdict,
        detail,
    })
}

/// One statement of a transaction type, as a family describes its transactions for its
/// claims: `count` statements of `kind` on `table`, each changing `rows` rows (writes; `None`
/// when the workload cannot know).
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub kind: Kind,
    pub table: &'static str,
    pub count: u64,
    pub rows: Option<Bounds>,
}

impl Part {
    /// One statement that reads `table`.
    pub const fn read(table: &'static str) -> Part {
        Part {
            kind: Kind::Select,
            table,
            count: 1,
            rows: None,
        }
    }

    /// One statement of `kind` that changes exactly one row of `table` (a key's update, a
    /// one-row insert).
    pub const fn one_row(kind: Kind, table: &'static str) -> Part {
        Part {
            kind,
            table,
            count: 1,
            rows: Some(Bounds { min: 1, max: 1 }),
        }
    }
}

/// The claims of one transaction type: `committed` transactions ran every part; `attempts`
/// more (failed or retried ones, and abandoned ones) ran some prefix of them.
pub fn claims_of(committed: u64, attempts: u64, from: &str, parts: &[Part]) -> Vec<Claim> {
    let times = Bounds::up_to(committed, attempts);
    parts
        .iter()
        .map(|p| Claim {
            kind: p.kind,
            table: p.table.to_string(),
            statements: Some(times.times(p.count)),
            rows: p.rows.map(|r| Bounds {
                min: times.min * p.count * r.min,
                max: times.max * p.count * r.max,
            }),
            from: from.to_string(),
        })
        .collect()
}

/// A transaction type's counts from an engine outcome: committed, and the attempts that may
/// have run part of it (failures, retries, and the run's abandoned transactions).
pub fn counts(outcome: &engine::Outcome, txn: usize) -> (u64, u64) {
    let t = outcome.total.txns.get(txn).cloned().unwrap_or_default();
    (t.committed(), t.failed() + t.retries + outcome.abandoned)
}

/// Claims on the same kind and table added up (several transaction types write the same
/// table).
pub fn merged(claims: Vec<Claim>) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    for c in claims {
        match out
            .iter_mut()
            .find(|o| o.kind == c.kind && o.table == c.table)
        {
            Some(o) => {
                o.statements = o.statements.zip(c.statements).map(|(a, b)| a + b);
                o.rows = match (o.rows, c.rows) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
                if !o.from.split(", ").any(|f| f == c.from) {
                    o.from = format!("{}, {}", o.from, c.from);
                }
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
