//! What the session must know about SQL text without parsing it: where the parameter
//! placeholders are, where one statement of a multi-statement string ends, and whether a
//! statement begins, commits or rolls back a transaction (for [`crate::Session::server_commits`]).
//!
//! The lexer follows MySQL's ("Schema Object Names", "String Literals", "Comments"): strings in
//! `'...'` and `"..."` with backslash escapes (unless the server runs with
//! NO_BACKSLASH_ESCAPES, which the caller passes in) and doubled quotes, identifiers in
//! backticks, comments `-- ` (two dashes and a space or control character), `#` to the end of
//! the line and `/* ... */` (MySQL's executable `/*! ... */` comments are skipped as comments
//! too).
//!
//! Placeholders: MySQL's `?`, or PostgreSQL's `$1..$n` so that one statement text serves both
//! protocols (`$n` rewritten to `?` at registration with the order recorded; `$` inside an
//! identifier such as `a$1` is not a placeholder, as in PostgreSQL). One statement may not
//! mix the two styles.

/// How a statement bears on the transaction state (see [`crate::Session::server_commits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// BEGIN, START TRANSACTION.
    Begin,
    /// COMMIT [WORK] [AND [NO] CHAIN] [[NO] RELEASE].
    Commit,
    /// ROLLBACK [WORK] (not ROLLBACK ... TO SAVEPOINT).
    Rollback,
    /// The statements the ledger counts by kind (`measure::ledger`); for the transaction state
    /// they are as [`Kind::Other`].
    Select,
    /// INSERT and REPLACE.
    Insert,
    Update,
    Delete,
    Other,
}

impl Kind {
    /// The statement ledger's kind (`measure::ledger::Kind`).
    #[inline]
    pub(crate) fn ledger(self) -> measure::ledger::Kind {
        use measure::ledger::Kind as L;
        match self {
            Kind::Commit => L::Commit,
            Kind::Rollback => L::Rollback,
            Kind::Select => L::Select,
            Kind::Insert => L::Insert,
            Kind::Update => L::Update,
            Kind::Delete => L::Delete,
            Kind::Begin | Kind::Other => L::Other,
        }
    }
}

/// A placeholder found by [`scan`]: its byte range in the text and its 0-based parameter
/// index (`?`: its ordinal; `$n`: n - 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placeholder {
    pub start: u32,
    pub end: u32,
    pub param: u16,
    pub dollar: bool,
}

/// What [`scan`] finds.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    pub placeholders: Vec<Placeholder>,
    /// Byte ranges of the statements (split at top-level `;`), empty ones left out.
    pub statements: Vec<(usize, usize)>,
}

/// Scan `sql` (see the module header). `backslash_escapes`: whether `\` escapes in strings
/// (the server's default).
pub(crate) fn scan(sql: &str, backslash_escapes: bool) -> Scan {
    let mut placeholders = Vec::new();
    let mut statements = Vec::new();
    walk(
        sql,
        backslash_escapes,
        |p| placeholders.push(p),
        |a, z| statements.push((a, z)),
    );
    Scan {
        placeholders,
        statements,
    }
}

/// The transaction kind of each statement of `sql`, appended to `out` (see [`kind`]). No
/// allocation beyond `out`'s growth: for the statements whose text is only known at execution
/// (a script's simple-mode text, [`crate::Session::register_verbatim`]).
pub(crate) fn push_kinds(sql: &str, backslash_escapes: bool, out: &mut Vec<Kind>) {
    walk(
        sql,
        backslash_escapes,
        |_| {},
        |a, z| out.push(kind(&sql[a..z])),
    );
}

/// The lexer behind [`scan`] and [`push_kinds`]: each placeholder, and each non-blank
/// statement's byte range, in order.
fn walk(
    sql: &str,
    backslash_escapes: bool,
    mut on_placeholder: impl FnMut(Placeholder),
    mut on_statement: impl FnMut(usize, usize),
) {
    let b = sql.as_bytes();
    let mut i = 0;
    let mut stmt_start = 0;
    let mut question = 0u16;
    let mut push_stmt = |a: usize, z: usize| {
        if !is_blank(&b[a..z]) {
            on_statement(a, z);
        }
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < b.len() {
                    if b[i] == b'\\' && c != b'`' && backslash_escapes {
                        i += 2;
                        continue;
                    }
                    if b[i] == c {
                        if b.get(i + 1) == Some(&c) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'#' => i = line_end(b, i),
            b'-' if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_none_or(|&n| n <= b' ') => {
                i = line_end(b, i)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b';' => {
                push_stmt(stmt_start, i);
                i += 1;
                stmt_start = i;
            }
            b'?' => {
                on_placeholder(Placeholder {
                    start: i as u32,
                    end: i as u32 + 1,
                    param: question,
                    dollar: false,
                });
                question = question.saturating_add(1);
                i += 1;
            }
            b'$' => match pg::session::dollar_placeholder(b, i) {
                Some((param, j)) => {
                    if let Some(param) = param {
                        on_placeholder(Placeholder {
                            start: i as u32,
                            end: j as u32,
                            param,
                            dollar: true,
                        });
                    }
                    i = j;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    push_stmt(stmt_start, b.len());
}

fn line_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += 1;
    }
    i
}

/// Only whitespace and comments.
fn is_blank(b: &[u8]) -> bool {
    words(b).next().is_none()
}

/// The words (runs of letters, digits and `_`) of a statement's start, comments skipped, upper
/// case compared by the caller; stops at the first other character.
fn words(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut i = 0;
    std::iter::from_fn(move || {
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b[i..].starts_with(b"/*") {
                i += 2;
                while i < b.len() && !b[i..].starts_with(b"*/") {
                    i += 1;
                }
                i = (i + 2).min(b.len());
            } else if b[i..].starts_with(b"#")
                || (b[i..].starts_with(b"--") && b.get(i + 2).is_none_or(|&n| n <= b' '))
            {
                i = line_end(b, i);
            } else {
                break;
            }
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        (i > start).then(|| &b[start..i])
    })
}

/// How `stmt` (one statement's text) bears on the transaction state.
pub(crate) fn kind(stmt: &str) -> Kind {
    let mut w = words(stmt.as_bytes());
    let is = |w: Option<&[u8]>, k: &str| w.is_some_and(|w| w.eq_ignore_ascii_case(k.as_bytes()));
    let first = w.next();
    if is(first, "BEGIN") {
        // BEGIN NOT ATOMIC opens a compound statement (MariaDB), not a transaction.
        return if is(w.next(), "NOT") {
            Kind::Other
        } else {
            Kind::Begin
        };
    }
    if is(first, "START") {
        return if is(w.next(), "TRANSACTION") {
            Kind::Begin
        } else {
            Kind::Other
        };
    }
    if is(first, "COMMIT") {
        return Kind::Commit;
    }
    if is(first, "ROLLBACK") {
        let mut next = w.next();
        if is(next, "WORK") {
            next = w.next();
        }
        return if is(next, "TO") {
            Kind::Other
        } else {
            Kind::Rollback
        };
    }
    match first {
        _ if is(first, "SELECT") => Kind::Select,
        _ if is(first, "INSERT") || is(first, "REPLACE") => Kind::Insert,
        _ if is(first, "UPDATE") => Kind::Update,
        _ if is(first, "DELETE") => Kind::Delete,
        // WITH ... SELECT is a select to the server (`Com_select`), WITH ... UPDATE an update
        // (MySQL 8, MariaDB 10.2+): the statement the clause leads to.
        _ if is(first, "WITH") => {
            use measure::ledger::Kind as L;
            match L::of_sql(stmt) {
                L::Select => Kind::Select,
                L::Insert => Kind::Insert,
                L::Update => Kind::Update,
                L::Delete => Kind::Delete,
                _ => Kind::Other,
            }
        }
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_with_clause_is_the_kind_of_the_statement_it_leads_to() {
        let q15 = "with revenue0 (supplier_no, total_revenue) as (select l_suppkey, \
                   sum(l_extendedprice) from lineitem where l_shipdate >= date '1996-01-01' \
                   group by l_suppkey) select s_suppkey from supplier, revenue0";
        assert_eq!(kind(q15), Kind::Select);
        assert_eq!(
            kind("WITH c AS (SELECT 1) DELETE FROM t WHERE id IN (SELECT * FROM c)"),
            Kind::Delete
        );
        assert_eq!(kind("WITH c AS (SELECT 1)"), Kind::Other);
    }

    fn params(sql: &str) -> Vec<(String, u16)> {
        scan(sql, true)
            .placeholders
            .iter()
            .map(|p| (sql[p.start as usize..p.end as usize].to_string(), p.param))
            .collect()
    }

    fn statements(sql: &str) -> Vec<&str> {
        scan(sql, true)
            .statements
            .iter()
            .map(|&(a, z)| sql[a..z].trim())
            .collect()
    }

    #[test]
    fn placeholders_outside_quotes_and_comments() {
        assert_eq!(
            params("SELECT c FROM t WHERE id = ? AND k BETWEEN ? AND ?"),
            [("?".into(), 0), ("?".into(), 1), ("?".into(), 2)]
        );
        assert_eq!(
            params("UPDATE t SET a = a + $2 WHERE aid = $1"),
            [("$2".into(), 1), ("$1".into(), 0)]
        );
        assert!(params(
            "SELECT '?', \"?\", `?`, 'it''s ?', 'a\\'?' -- ?\n # ?\n /* ? */, a$1, `x$1`"
        )
        .is_empty());
        // Without backslash escapes, \ ends nothing: 'a\' is a whole string.
        let s = scan("SELECT 'a\\', ?", false);
        assert_eq!(s.placeholders.len(), 1);
        let s = scan("SELECT 'a\\', ?", true);
        assert_eq!(s.placeholders.len(), 0, "the string runs to the end");
        // `--` needs a following space to be a comment (MySQL: 1--1 is 1 - -1).
        assert_eq!(params("SELECT 1--?").len(), 1);
    }

    #[test]
    fn statements_split_at_top_level_semicolons() {
        assert_eq!(
            statements("BEGIN; UPDATE t SET c = ';' WHERE id = 1;\n-- done\nCOMMIT;  "),
            [
                "BEGIN",
                "UPDATE t SET c = ';' WHERE id = 1",
                "-- done\nCOMMIT"
            ]
        );
        assert_eq!(statements("SELECT 1"), ["SELECT 1"]);
        assert!(statements(" ; -- nothing\n").is_empty());
    }

    #[test]
    fn kinds_of_a_text_follow_its_statements() {
        let mut k = Vec::new();
        push_kinds("BEGIN; UPDATE t SET c = ';'; COMMIT; -- x\n", true, &mut k);
        assert_eq!(k, [Kind::Begin, Kind::Update, Kind::Commit]);
        k.clear();
        push_kinds("COMMIT", true, &mut k);
        push_kinds(" ; ", true, &mut k);
        assert_eq!(k, [Kind::Commit]);
    }

    #[test]
    fn transaction_statements_are_recognised() {
        for (sql, k) in [
            ("BEGIN", Kind::Begin),
            ("begin work", Kind::Begin),
            ("START TRANSACTION READ ONLY", Kind::Begin),
            ("/* x */ COMMIT", Kind::Commit),
            ("commit work and no chain", Kind::Commit),
            ("ROLLBACK", Kind::Rollback),
            ("ROLLBACK WORK", Kind::Rollback),
            ("ROLLBACK TO SAVEPOINT a", Kind::Other),
            ("rollback work to a", Kind::Other),
            ("BEGIN NOT ATOMIC SELECT 1; END", Kind::Other),
            ("START SLAVE", Kind::Other),
            ("SELECT 1", Kind::Select),
            ("/* a */ replace INTO t VALUES (1)", Kind::Insert),
            ("UPDATE t SET a = 1", Kind::Update),
            ("delete from t", Kind::Delete),
            ("  ", Kind::Other),
        ] {
            assert_eq!(kind(sql), k, "{sql}");
        }
    }
}
