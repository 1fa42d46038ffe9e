//! # Which SQL may run on a read-only server (a hot standby, a reader endpoint)
//!
//! `--read-from` sends a workload's read-only transaction types to readers. A builtin knows
//! what it is; a custom script is judged here, by its text, before the run. The judgement is
//! conservative on purpose: a write sent to a standby fails the transaction (25006, "cannot
//! execute ... in a read-only transaction") and aborts the client, while a read sent to the
//! primary only costs the primary some work. So only what is certainly read-only counts:
//!
//! - `SELECT ...` and `VALUES ...`, without `INTO` (SELECT INTO creates a table), without a
//!   locking clause (`FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE`: they write row locks and
//!   a standby refuses them), and without a call of any function not on a short list of
//!   built-ins that cannot write ([`SAFE_FUNCTIONS`]: `count`, `sum`, `coalesce`, ...). A
//!   user-defined function, `nextval`, `pg_advisory_lock`, `set_config` or a set-returning
//!   function all make the statement count as a write.
//! - `SHOW name`.
//! - Transaction control that a standby accepts: `BEGIN`/`START TRANSACTION` (optionally
//!   `READ ONLY`, `ISOLATION LEVEL READ COMMITTED | REPEATABLE READ`; not `SERIALIZABLE`,
//!   which a hot standby refuses), `COMMIT`, `END`, `ROLLBACK`, `ABORT`.
//! - Everything else is a write: `WITH` (a CTE may hold an INSERT), `TABLE`, `EXPLAIN ANALYZE`,
//!   `SET`, DO blocks, dollar-quoted text, `LOCK`, ...
//!
//! The scan knows SQL's lexical shapes (quoted strings and identifiers, comments, `$n`
//! parameters, pgbench's `:var` references, `;` between statements): a keyword inside a string
//! literal does not count, and every statement of a compound command is judged.

/// Built-in functions that never write, so a SELECT calling them stays read-only.
pub const SAFE_FUNCTIONS: &[&str] = &[
    "abs",
    "array_agg",
    "avg",
    "bool_and",
    "bool_or",
    "cast",
    "ceil",
    "ceiling",
    "char_length",
    "coalesce",
    "concat",
    "count",
    "date_trunc",
    "dense_rank",
    "extract",
    "floor",
    "greatest",
    "least",
    "length",
    "lower",
    "max",
    "min",
    "mod",
    "now",
    "nullif",
    "power",
    "random",
    "rank",
    "round",
    "row_number",
    "sqrt",
    "stddev",
    "string_agg",
    "substr",
    "substring",
    "sum",
    "trim",
    "upper",
    "variance",
];

/// Keywords that may stand before `(` without being a function call.
const KEYWORDS_BEFORE_PAREN: &[&str] = &[
    "all",
    "and",
    "any",
    "array",
    "as",
    "between",
    "by",
    "case",
    "distinct",
    "else",
    "except",
    "exists",
    "filter",
    "from",
    "group",
    "having",
    "in",
    "intersect",
    "is",
    "join",
    "lateral",
    "limit",
    "not",
    "offset",
    "on",
    "or",
    "over",
    "partition",
    "row",
    "select",
    "some",
    "then",
    "union",
    "using",
    "values",
    "when",
    "where",
    "within",
];

#[derive(Debug, PartialEq)]
enum Token {
    /// An unquoted word, lower-cased.
    Word(String),
    /// A double-quoted identifier (never a keyword; before `(` a function we cannot vouch for).
    Quoted,
    /// A literal, a number, a `$n` parameter or a `:var` reference.
    Value,
    Punct(char),
}

/// Split `sql` into tokens; `None` for text the scan does not understand well enough to vouch
/// for (an unterminated literal or comment, dollar quoting).
fn tokens(sql: &str) -> Option<Vec<Token>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            c if c.is_ascii_whitespace() => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = sql[i + 2..].find("*/")?;
                i += 2 + end + 2;
            }
            b'\'' => {
                i += 1;
                loop {
                    match b.get(i)? {
                        b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
                        b'\'' => break,
                        _ => i += 1,
                    }
                }
                i += 1;
                out.push(Token::Value);
            }
            b'"' => {
                i += 1 + sql[i + 1..].find('"')? + 1;
                out.push(Token::Quoted);
            }
            b'$' => {
                // `$1` is a parameter; anything else (`$$`, `$tag$`) is dollar quoting.
                i += 1;
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i == start {
                    return None;
                }
                out.push(Token::Value);
            }
            b':' if b
                .get(i + 1)
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == b'_') =>
            {
                // pgbench's `:var` (a `::type` cast starts with two colons and is punctuation).
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push(Token::Value);
            }
            c if c.is_ascii_digit() => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                out.push(Token::Value);
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                out.push(Token::Word(sql[start..i].to_ascii_lowercase()));
            }
            c => {
                out.push(Token::Punct(c as char));
                i += 1;
            }
        }
    }
    Some(out)
}

/// Whether `sql` (one command's text, possibly several statements separated by `;`) is certainly
/// read-only: see the module header for what counts.
pub fn is_read_only_sql(sql: &str) -> bool {
    let Some(toks) = tokens(sql) else {
        return false;
    };
    toks.split(|t| *t == Token::Punct(';'))
        .filter(|s| !s.is_empty())
        .all(statement_read_only)
}

fn word(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token::Word(w)) => Some(w),
        _ => None,
    }
}

fn statement_read_only(s: &[Token]) -> bool {
    let rest = &s[1..];
    let only_words = |allowed: &[&str]| {
        rest.iter()
            .all(|t| word(Some(t)).is_some_and(|w| allowed.contains(&w)))
    };
    match word(s.first()) {
        Some("select" | "values") => query_read_only(s),
        Some("show") => rest.iter().all(|t| matches!(t, Token::Word(_))),
        Some("begin" | "start") => only_words(&[
            "transaction",
            "work",
            "read",
            "only",
            "isolation",
            "level",
            "committed",
            "repeatable",
        ]),
        Some("commit" | "end" | "rollback" | "abort") => only_words(&["transaction", "work"]),
        _ => false,
    }
}

/// A SELECT or VALUES: no INTO, no locking clause, no call we cannot vouch for.
fn query_read_only(s: &[Token]) -> bool {
    for (i, t) in s.iter().enumerate() {
        let next = s.get(i + 1);
        match t {
            Token::Word(w) => {
                if w == "into" {
                    return false;
                }
                if w == "for"
                    && word(next).is_some_and(|n| matches!(n, "update" | "share" | "no" | "key"))
                {
                    return false;
                }
                if next == Some(&Token::Punct('('))
                    && !KEYWORDS_BEFORE_PAREN.contains(&w.as_str())
                    && !SAFE_FUNCTIONS.contains(&w.as_str())
                {
                    return false;
                }
            }
            Token::Quoted if next == Some(&Token::Punct('(')) => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_read_only_sql;

    /// (SQL, read-only?) — each `false` is a statement a hot standby refuses or one we cannot
    /// vouch for; each `true` one it runs.
    const CASES: &[(&str, bool)] = &[
        // pgbench's builtins.
        ("SELECT abalance FROM pgbench_accounts WHERE aid = :aid;", true),
        ("BEGIN;", true),
        ("END;", true),
        (
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
            false,
        ),
        (
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
            false,
        ),
        // sysbench's reads.
        ("SELECT c FROM sbtest1 WHERE id=$1", true),
        ("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2", true),
        ("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c", true),
        // Shapes of read-only SQL.
        ("select count(*) from t where a in (1, 2) and exists (select 1 from u)", true),
        ("SELECT x::int FROM t", true),
        ("SELECT 'for update; delete from t' FROM t", true),
        ("SELECT 1 -- for update\n", true),
        ("SELECT /* into */ 1", true),
        ("VALUES (1), (2)", true),
        ("SHOW server_version", true),
        ("BEGIN ISOLATION LEVEL REPEATABLE READ", true),
        ("START TRANSACTION READ ONLY", true),
        ("SELECT 1; SELECT 2;", true),
        ("COMMIT", true),
        // Writes, locks and what cannot be vouched for.
        ("SELECT * FROM t WHERE a = 1 FOR UPDATE", false),
        ("SELECT * FROM t FOR NO KEY UPDATE", false),
        ("SELECT * FROM t FOR SHARE", false),
        ("SELECT * FROM t FOR KEY SHARE", false),
        ("SELECT * INTO t2 FROM t", false),
        ("SELECT nextval('s')", false),
        ("SELECT my_function(1)", false),
        ("SELECT \"MyFunc\"(1)", false),
        ("SELECT pg_advisory_lock(1)", false),
        ("SELECT * FROM generate_series(1, 10)", false),
        ("SELECT 1; DELETE FROM t", false),
        ("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", false),
        ("WITH x AS (SELECT 1) SELECT * FROM x", false),
        ("BEGIN ISOLATION LEVEL SERIALIZABLE", false),
        ("BEGIN READ WRITE", false),
        ("SELECT $$a$$", false),
        ("SELECT 'unterminated", false),
        ("SET search_path = x", false),
        ("TABLE t", false),
        ("LOCK t", false),
        ("ROLLBACK TO SAVEPOINT a", false),
        ("COMMIT PREPARED 'x'", false),
        ("", true),
    ];

    /// The builtins' declared read-only-ness agrees with their SQL: a read-only type's every
    /// statement is accepted, a write type has one that is refused.
    #[test]
    fn builtins_declare_what_their_sql_says() {
        use crate::oltp::{OltpWorkload, Options, Test};
        use crate::tpcb::{Builtin, TpcbWorkload};
        use crate::Workload;
        let sql_ro = |w: &dyn Fn(usize) -> (bool, Vec<String>), i: usize| {
            let (declared, stmts) = w(i);
            let by_sql = stmts
                .iter()
                .filter(|s| !s.starts_with('\\'))
                .all(|s| is_read_only_sql(s));
            (declared, by_sql)
        };
        let tpcb = TpcbWorkload::new(
            vec![
                (Builtin::TpcbLike, 1),
                (Builtin::SimpleUpdate, 1),
                (Builtin::SelectOnly, 1),
            ],
            1,
        );
        let f = |i: usize| (tpcb.read_only(i), tpcb.txn_types()[i].statements.clone());
        assert_eq!(sql_ro(&f, 0), (false, false));
        assert_eq!(sql_ro(&f, 1), (false, false));
        assert_eq!(sql_ro(&f, 2), (true, true));
        for (test, want) in [
            (Test::ReadOnly, true),
            (Test::PointSelect, true),
            (Test::ReadWrite, false),
            (Test::WriteOnly, false),
            (Test::UpdateIndex, false),
            (Test::UpdateNonIndex, false),
            (Test::Insert, false),
            (Test::Delete, false),
        ] {
            let w = OltpWorkload::new(test, Options::default()).unwrap();
            let f = |i: usize| (w.read_only(i), w.txn_types()[i].statements.clone());
            assert_eq!(sql_ro(&f, 0), (want, want), "{test:?}");
        }
    }

    #[test]
    fn read_only_classification_of_sql() {
        let wrong: Vec<String> = CASES
            .iter()
            .filter(|(sql, want)| is_read_only_sql(sql) != *want)
            .map(|(sql, want)| format!("{sql:?}: expected read_only={want}"))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
