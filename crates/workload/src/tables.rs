//! Tables stampede creates for a workload of its own (iibench, the CRUD mix): how it knows a
//! table is its own before it drops one, and the checks that a table's secondary indexes agree
//! with the table after a run.
//!
//! Ownership: each such table carries a comment (`COMMENT ON TABLE` on PostgreSQL, the table's
//! `COMMENT` on MySQL) naming what created it; a table of the same name without it belongs to
//! someone else and is never dropped.
//!
//! Index consistency:
//! - PostgreSQL: amcheck's `bt_index_check(index, heapallindexed => true)` (contrib since 10),
//!   which verifies the B-tree's structure and that every heap tuple has its index entry; when
//!   the extension is not installed (and stampede may not install it: a server it did not
//!   start), each index's entries are counted through an index-only scan (sequential and
//!   bitmap scans off, the index's leading column in the predicate) and compared with the
//!   table's count.
//! - MySQL: `CHECK TABLE` (InnoDB checks each index and that the secondary indexes hold as many
//!   records as the clustered one), and each index counted with `FORCE INDEX`.

use sut::{Dialect, Error, Session};

/// The first column of the first row.
async fn scalar(s: &mut Session, sql: &str) -> Result<Option<String>, Error> {
    Ok(s.simple_query(sql)
        .await?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .flatten())
}

/// Whether `table` exists, and its comment if it does.
pub async fn comment(
    s: &mut Session,
    dialect: Dialect,
    table: &str,
) -> Result<Option<Option<String>>, Error> {
    match dialect {
        Dialect::Postgres => {
            let exists = scalar(s, &format!("SELECT to_regclass('{table}') IS NOT NULL")).await?;
            if exists.as_deref() != Some("t") {
                return Ok(None);
            }
            let c = scalar(
                s,
                &format!("SELECT obj_description(to_regclass('{table}'), 'pg_class')"),
            )
            .await?;
            Ok(Some(c))
        }
        Dialect::MySql => {
            let rows = s
                .simple_query(&format!(
                    "SELECT table_comment FROM information_schema.tables \
                     WHERE table_schema = DATABASE() AND table_name = '{table}'"
                ))
                .await?;
            Ok(rows
                .into_iter()
                .next()
                .map(|r| r.into_iter().next().flatten()))
        }
    }
}

/// What `table` is before stampede creates it.
#[derive(Debug, PartialEq, Eq)]
pub enum Existing {
    Absent,
    /// Carries `mark`: stampede's, may be replaced.
    Ours,
    /// Someone else's: never touched.
    Foreign,
}

pub async fn existing(
    s: &mut Session,
    dialect: Dialect,
    table: &str,
    mark: &str,
) -> Result<Existing, Error> {
    Ok(match comment(s, dialect, table).await? {
        None => Existing::Absent,
        Some(Some(c)) if c == mark => Existing::Ours,
        Some(_) => Existing::Foreign,
    })
}

/// `SELECT count(*)` of `table`.
pub async fn count(s: &mut Session, table: &str) -> Result<u64, Error> {
    let v = scalar(s, &format!("SELECT count(*) FROM {table}")).await?;
    v.as_deref()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::Config(format!("count(*) of {table}: unexpected {v:?}")))
}

/// One index's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexVerdict {
    pub index: String,
    pub ok: bool,
    pub detail: String,
}

/// Check each of `indexes` (name, leading column) of `table` against the table (module notes).
/// `may_install`: stampede started the server, so it may create amcheck there.
pub async fn check_indexes(
    s: &mut Session,
    dialect: Dialect,
    table: &str,
    indexes: &[(&str, &str)],
    may_install: bool,
) -> Result<Vec<IndexVerdict>, Error> {
    let rows = count(s, table).await?;
    let mut out = Vec::new();
    match dialect {
        Dialect::Postgres => {
            let installed = scalar(
                s,
                "SELECT count(*) FROM pg_extension WHERE extname = 'amcheck'",
            )
            .await?;
            let mut amcheck = installed.as_deref() == Some("1");
            if !amcheck && may_install {
                let available = scalar(
                    s,
                    "SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'",
                )
                .await?;
                if available.as_deref() == Some("1") {
                    s.simple_query("CREATE EXTENSION IF NOT EXISTS amcheck")
                        .await?;
                    amcheck = true;
                }
            }
            for (index, lead) in indexes {
                if amcheck {
                    let r = s
                        .simple_query(&format!("SELECT bt_index_check('{index}'::regclass, true)"))
                        .await;
                    out.push(match r {
                        Ok(_) => IndexVerdict {
                            index: index.to_string(),
                            ok: true,
                            detail: "bt_index_check: every row indexed".into(),
                        },
                        Err(Error::Db(e)) => IndexVerdict {
                            index: index.to_string(),
                            ok: false,
                            detail: format!("bt_index_check: {}", e.message),
                        },
                        Err(e) => return Err(e),
                    });
                } else {
                    s.simple_query("SET enable_seqscan = off; SET enable_bitmapscan = off")
                        .await?;
                    let n = scalar(
                        s,
                        &format!("SELECT count(*) FROM {table} WHERE {lead} IS NOT NULL"),
                    )
                    .await;
                    s.simple_query("RESET enable_seqscan; RESET enable_bitmapscan")
                        .await?;
                    out.push(counted(
                        index,
                        n?,
                        rows,
                        "through an index scan (no amcheck)",
                    ));
                }
            }
        }
        Dialect::MySql => {
            let check = s.simple_query(&format!("CHECK TABLE {table}")).await?;
            // Rows of (Table, Op, Msg_type, Msg_text): any error, or a last status not OK.
            let col = |r: &Vec<Option<String>>, i: usize| r.get(i).cloned().flatten();
            let errors: Vec<String> = (check.iter())
                .filter(|r| col(r, 2).as_deref() == Some("error"))
                .filter_map(|r| col(r, 3))
                .collect();
            let last = check.last().and_then(|r| col(r, 3)).unwrap_or_default();
            let table_ok = errors.is_empty() && last == "OK";
            for (index, _) in indexes {
                let n = scalar(
                    s,
                    &format!("SELECT count(*) FROM {table} FORCE INDEX ({index})"),
                )
                .await?;
                let mut v = counted(index, n, rows, "with FORCE INDEX");
                if !table_ok {
                    v.ok = false;
                    v.detail = format!("CHECK TABLE: {last} {}; {}", errors.join("; "), v.detail);
                } else {
                    v.detail = format!("CHECK TABLE OK; {}", v.detail);
                }
                out.push(v);
            }
        }
    }
    Ok(out)
}

fn counted(index: &str, n: Option<String>, rows: u64, how: &str) -> IndexVerdict {
    let n: Option<u64> = n.as_deref().and_then(|v| v.parse().ok());
    IndexVerdict {
        index: index.to_string(),
        ok: n == Some(rows),
        detail: match n {
            Some(n) => format!("{n} entries counted {how}, the table has {rows} rows"),
            None => format!("no count {how}"),
        },
    }
}
