//! The client's side of the statement ledger: what stampede's sessions sent, by kind, counted on
//! the wire, and what a workload says its transactions did.
//!
//! Why on the wire: a workload's own counters (a probe's "acknowledged writes", YCSB's READ
//! operations, TPC-C's order lines) are claims about what happened; the server's counters
//! (`pg_stat_statements`, `pg_stat_user_tables`, MySQL's `Com_*` and `Handler_*`) are another
//! record. The wire tally sits between the two: each session counts the statements the server
//! acknowledged, by the kind the server named (PostgreSQL's CommandComplete tag: `INSERT 0 1`)
//! or the statement's first word (MySQL, whose OK packet names no kind), with the rows each one
//! affected or returned. So a mismatch says where it lies: a workload that miscounts (its claim
//! differs from its sessions' tally), or a server that saw other sessions (the tally differs from
//! the server's counter).
//!
//! Cost: one match on the tag's first byte and two additions per statement, into a fixed array
//! ([`Tally`] is `Copy`, no allocation); each session keeps its own and the engine sums them when
//! the session closes.

use serde::{Deserialize, Serialize};

/// What a statement does, as the ledger counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Select,
    Insert,
    Update,
    Delete,
    Commit,
    Rollback,
    /// Everything else: BEGIN, SET, DDL, COPY, CALL, MERGE...
    Other,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Select,
        Kind::Insert,
        Kind::Update,
        Kind::Delete,
        Kind::Commit,
        Kind::Rollback,
        Kind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Select => "select",
            Kind::Insert => "insert",
            Kind::Update => "update",
            Kind::Delete => "delete",
            Kind::Commit => "commit",
            Kind::Rollback => "rollback",
            Kind::Other => "other",
        }
    }

    /// The kinds that change rows, whose rows a server counts per table.
    pub fn writes(self) -> bool {
        matches!(self, Kind::Insert | Kind::Update | Kind::Delete)
    }

    /// The kind a PostgreSQL CommandComplete tag names ("Message Formats", CommandComplete:
    /// `SELECT rows`, `INSERT oid rows`, `UPDATE rows`, `DELETE rows`, `COMMIT`, `ROLLBACK`).
    /// `SELECT` also tags `CREATE TABLE AS` and `SELECT INTO`; `COMMIT` of a failed transaction
    /// block is tagged `ROLLBACK`, as the server did.
    #[inline]
    pub fn of_tag(tag: &[u8]) -> Kind {
        let word = |w: &[u8]| tag.starts_with(w) && matches!(tag.get(w.len()), None | Some(b' '));
        match tag.first() {
            Some(b'S') if word(b"SELECT") => Kind::Select,
            Some(b'I') if word(b"INSERT") => Kind::Insert,
            Some(b'U') if word(b"UPDATE") => Kind::Update,
            Some(b'D') if word(b"DELETE") => Kind::Delete,
            Some(b'C') if word(b"COMMIT") => Kind::Commit,
            Some(b'R') if word(b"ROLLBACK") => Kind::Rollback,
            _ => Kind::Other,
        }
    }

    /// The kind of a statement's text from its first word, comments and blanks skipped (MySQL's
    /// replies do not say; `REPLACE` counts as an insert, `WITH ...` and anything unknown as
    /// other). Not for the hot path: texts are classified once, when registered.
    pub fn of_sql(sql: &str) -> Kind {
        let word = first_word(sql);
        let is = |k: &str| word.eq_ignore_ascii_case(k);
        if is("select") {
            Kind::Select
        } else if is("insert") || is("replace") {
            Kind::Insert
        } else if is("update") {
            Kind::Update
        } else if is("delete") {
            Kind::Delete
        } else if is("commit") || is("end") {
            Kind::Commit
        } else if is("with") {
            main_verb(sql).map_or(Kind::Other, Kind::of_sql)
        } else if is("rollback") || is("abort") {
            // ROLLBACK TO SAVEPOINT ends no transaction.
            let rest = sql.trim_start()[word.len()..].trim_start();
            let rest = rest
                .strip_prefix("work")
                .or_else(|| rest.strip_prefix("WORK"))
                .unwrap_or(rest)
                .trim_start();
            if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case("to") {
                Kind::Other
            } else {
                Kind::Rollback
            }
        } else {
            Kind::Other
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The statement a `WITH` clause leads to (`WITH c AS (UPDATE ...) INSERT ...` is an insert,
/// as its CommandComplete tag says): the text from the first SELECT, INSERT, UPDATE or DELETE
/// outside every parenthesis and quote.
fn main_verb(sql: &str) -> Option<&str> {
    let b = sql.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            c if depth == 0 && c.is_ascii_alphabetic() && (i == 0 || !is_word(b[i - 1])) => {
                let end = (i..b.len()).find(|&j| !is_word(b[j])).unwrap_or(b.len());
                let w = &sql[i..end];
                if ["select", "insert", "update", "delete"]
                    .iter()
                    .any(|v| w.eq_ignore_ascii_case(v))
                {
                    return Some(&sql[i..]);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether a statement writes rows its reply does not report: a data-modifying `WITH` clause
/// (`WITH c AS (UPDATE ...) INSERT ...` reports the insert's rows alone).
pub fn writes_unreported(sql: &str) -> bool {
    if !first_word(sql).eq_ignore_ascii_case("with") {
        return false;
    }
    let main = main_verb(sql).map_or(sql.len(), |m| sql.len() - m.len());
    let head = sql[..main].to_ascii_lowercase();
    ["insert", "update", "delete"].iter().any(|w| {
        head.match_indices(w).any(|(i, _)| {
            let before = i == 0 || !is_word(head.as_bytes()[i - 1]);
            let after = head
                .as_bytes()
                .get(i + w.len())
                .is_none_or(|c| !is_word(*c));
            before && after
        })
    })
}

/// Whether a statement calls a window function (`... OVER (...)`): MySQL and MariaDB compute
/// them in an internal temporary table whose row updates `Handler_update` counts as if they
/// were a table's (one per row the window covers), though the statement only reads.
pub fn uses_window_functions(sql: &str) -> bool {
    let s = sql.to_ascii_lowercase();
    s.match_indices("over").any(|(i, _)| {
        let before = i == 0 || !is_word(s.as_bytes()[i - 1]);
        let rest = s[i + 4..].trim_start();
        before && rest.starts_with('(') && !s[i + 4..].starts_with(|c: char| is_word(c as u8))
    })
}

/// The first word of a statement, after blanks and comments (`-- ...`, `# ...`, `/* ... */`).
fn first_word(sql: &str) -> &str {
    let mut s = sql;
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("--").or_else(|| s.strip_prefix('#')) {
            s = r.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.split_once("*/").map_or("", |(_, r)| r);
        } else if let Some(r) = s.strip_prefix('(') {
            // A parenthesised query: `(SELECT ...) UNION ...`.
            s = r;
        } else {
            break;
        }
    }
    let end = s
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(s.len());
    &s[..end]
}

/// One session's (or, summed, a run's) statements acknowledged by the server, by kind, with the
/// rows they affected (writes) or returned (selects); and the statements the server refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Statements the server completed, by [`Kind::ALL`]'s order.
    pub statements: [u64; 7],
    /// Rows each kind's statements affected (the CommandComplete count, MySQL's affected rows)
    /// or, for selects, returned.
    pub rows: [u64; 7],
    /// Statements answered with an error (their kind is not known on PostgreSQL's wire).
    pub failed: u64,
}

impl Tally {
    /// A statement of `kind` completed with `rows`.
    #[inline]
    pub fn done(&mut self, kind: Kind, rows: u64) {
        let i = kind.index();
        self.statements[i] += 1;
        self.rows[i] += rows;
    }

    /// A statement failed.
    #[inline]
    pub fn failed(&mut self) {
        self.failed += 1;
    }

    pub fn statements(&self, kind: Kind) -> u64 {
        self.statements[kind.index()]
    }

    pub fn rows(&self, kind: Kind) -> u64 {
        self.rows[kind.index()]
    }

    pub fn merge(&mut self, o: &Tally) {
        for i in 0..7 {
            self.statements[i] += o.statements[i];
            self.rows[i] += o.rows[i];
        }
        self.failed += o.failed;
    }

    /// What was counted since `before` (a snapshot of the same session's tally).
    pub fn since(&self, before: &Tally) -> Tally {
        let mut d = *self;
        for i in 0..7 {
            d.statements[i] -= before.statements[i].min(d.statements[i]);
            d.rows[i] -= before.rows[i].min(d.rows[i]);
        }
        d.failed -= before.failed.min(d.failed);
        d
    }

    pub fn is_empty(&self) -> bool {
        *self == Tally::default()
    }
}

/// Every session of this process adds its tally here when it is dropped (`pg::Session` and
/// `mysql::Session` do, whatever they were used for): the difference of two readings is what
/// the process's sessions closed in between sent, clients and stampede's own sessions
/// (observer, checks, samplers) alike. The ledger compares the server's counters with it, so
/// stampede's own statements are accounted for by count, not by guessing which they were. A
/// lock per session closed; never on a statement's path.
static CLOSED: std::sync::Mutex<Tally> = std::sync::Mutex::new(Tally {
    statements: [0; 7],
    rows: [0; 7],
    failed: 0,
});

/// A session of this process is gone: add what it sent to [`closed`].
pub fn session_closed(t: &Tally) {
    if t.is_empty() {
        return;
    }
    if let Ok(mut c) = CLOSED.lock() {
        c.merge(t);
    }
}

/// What every session of this process that is gone sent, so far.
pub fn closed() -> Tally {
    CLOSED.lock().map(|c| *c).unwrap_or_default()
}

/// A count known to lie within `min..=max` (a transaction that failed part-way may have run
/// some of its statements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    pub min: u64,
    pub max: u64,
}

impl Bounds {
    pub fn exact(n: u64) -> Bounds {
        Bounds { min: n, max: n }
    }

    /// `committed` certainly, and up to `attempts` more that failed somewhere along the way.
    pub fn up_to(committed: u64, attempts: u64) -> Bounds {
        Bounds {
            min: committed,
            max: committed + attempts,
        }
    }

    pub fn contains(&self, n: u64) -> bool {
        self.min <= n && n <= self.max
    }

    pub fn is_exact(&self) -> bool {
        self.min == self.max
    }

    pub fn times(self, k: u64) -> Bounds {
        Bounds {
            min: self.min * k,
            max: self.max * k,
        }
    }
}

impl std::ops::Add for Bounds {
    type Output = Bounds;

    fn add(self, o: Bounds) -> Bounds {
        Bounds {
            min: self.min + o.min,
            max: self.max + o.max,
        }
    }
}

impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_exact() {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// What a workload says its transactions did to one table: statements of one kind (and, where
/// it knows them, the rows they changed), from its own counters. The ledger sets each claim
/// beside its sessions' wire tally and the server's counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub kind: Kind,
    pub table: String,
    /// Statements of `kind` on `table` the server completed; `None` when the workload counts
    /// rows only (TPC-C's statement counts depend on each transaction's draws).
    pub statements: Option<Bounds>,
    /// Rows they inserted, updated or deleted (writes only), where the workload knows.
    pub rows: Option<Bounds>,
    /// Which of the workload's counters the claim comes from ("acknowledged writes",
    /// "tpcb-like transactions x 1").
    pub from: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_kind() {
        for (tag, k) in [
            (&b"SELECT 1"[..], Kind::Select),
            (b"INSERT 0 5", Kind::Insert),
            (b"UPDATE 0", Kind::Update),
            (b"DELETE 3", Kind::Delete),
            (b"COMMIT", Kind::Commit),
            (b"ROLLBACK", Kind::Rollback),
            (b"BEGIN", Kind::Other),
            (b"COPY 10", Kind::Other),
            (b"CREATE TABLE", Kind::Other),
            (b"SET", Kind::Other),
            (b"SELECTED", Kind::Other),
            (b"", Kind::Other),
        ] {
            assert_eq!(Kind::of_tag(tag), k, "{}", String::from_utf8_lossy(tag));
        }
    }

    #[test]
    fn texts_name_their_kind_past_comments() {
        for (sql, k) in [
            ("SELECT 1", Kind::Select),
            ("  /* c */ -- x\n select c from t", Kind::Select),
            ("(SELECT 1) UNION (SELECT 2)", Kind::Select),
            ("INSERT INTO t VALUES (1)", Kind::Insert),
            ("replace into t values (1)", Kind::Insert),
            ("UPDATE t SET a = 1", Kind::Update),
            ("# note\nDELETE FROM t", Kind::Delete),
            ("COMMIT", Kind::Commit),
            ("end", Kind::Commit),
            ("ROLLBACK", Kind::Rollback),
            ("rollback work", Kind::Rollback),
            ("ROLLBACK TO SAVEPOINT a", Kind::Other),
            ("rollback work to a", Kind::Other),
            ("BEGIN", Kind::Other),
            ("WITH x AS (SELECT 1) SELECT * FROM x", Kind::Select),
            (
                "WITH c AS (UPDATE customer SET b = 1 RETURNING id) INSERT INTO h SELECT id FROM c",
                Kind::Insert,
            ),
            (
                "with no as (delete from t returning *) update o set x = ')' from no",
                Kind::Update,
            ),
            ("WITH x AS (SELECT 1)", Kind::Other),
            ("", Kind::Other),
        ] {
            assert_eq!(Kind::of_sql(sql), k, "{sql}");
        }
    }

    #[test]
    fn writes_inside_a_with_clause_are_unreported() {
        assert!(writes_unreported(
            "WITH c AS (UPDATE customer SET b = 1 RETURNING id) INSERT INTO h SELECT id FROM c"
        ));
        assert!(!writes_unreported(
            "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x"
        ));
        assert!(!writes_unreported("UPDATE t SET a = 1"));
        assert!(uses_window_functions(
            "SELECT c_id FROM (SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first) AS n FROM c) x"
        ));
        assert!(uses_window_functions("SELECT count(*) over() FROM t"));
        assert!(!uses_window_functions(
            "SELECT overall FROM t WHERE rover (1)"
        ));
        assert!(!uses_window_functions(
            "SELECT 1 FROM t WHERE a = 'x' OR b = 2"
        ));
        assert!(!writes_unreported("WITH updated_at AS (SELECT 1) SELECT 2"));
    }

    #[test]
    fn tallies_add_up_and_subtract_a_snapshot() {
        let mut a = Tally::default();
        a.done(Kind::Update, 1);
        a.done(Kind::Update, 2);
        a.failed();
        let snap = a;
        a.done(Kind::Insert, 10);
        a.done(Kind::Update, 1);
        let d = a.since(&snap);
        assert_eq!((d.statements(Kind::Update), d.rows(Kind::Update)), (1, 1));
        assert_eq!((d.statements(Kind::Insert), d.rows(Kind::Insert)), (1, 10));
        assert_eq!(d.failed, 0);
        let mut m = snap;
        m.merge(&d);
        assert_eq!(m, a);
    }

    #[test]
    fn bounds_hold_what_failed_attempts_may_have_done() {
        let b = Bounds::up_to(10, 2).times(3);
        assert_eq!((b.min, b.max), (30, 36));
        assert!(b.contains(31) && !b.contains(37) && !b.contains(29));
        assert_eq!(b.to_string(), "30-36");
        assert_eq!(Bounds::exact(4).to_string(), "4");
    }
}
