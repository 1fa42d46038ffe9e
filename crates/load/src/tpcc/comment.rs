//! The comment on `customer` that records a TPC-C load: the NURand constants of clause
//! 2.1.6 (runs draw theirs at the distance clause 2.1.6.1 allows), the seed, and the load time
//! written into the rows' dates (a fleet's other processes generate with it, so the parts of
//! a split load write the same dates). On PostgreSQL a `COMMENT ON TABLE`, on MySQL the table's
//! `COMMENT`.

use sut::{Dialect, Session};
use workload::tpcc::spec::NuC;

use super::table_exists;
use crate::LoadError;

/// The comment on `customer` that records the load's constants (module header).
pub fn comment_text(c: &NuC, seed: u64, load_time: &str) -> String {
    format!(
        "stampede tpcc: c_last_c={} c_id_c={} ol_i_id_c={} seed={seed} loaded={}",
        c.last,
        c.customer_id,
        c.item_id,
        load_time.replace(' ', "T")
    )
}

/// PostgreSQL: the statement that sets [`comment_text`] on `customer`.
pub fn comment_sql(c: &NuC, seed: u64, load_time: &str) -> String {
    format!(
        "COMMENT ON TABLE customer IS '{}'",
        comment_text(c, seed, load_time)
    )
}

/// The constants in a comment written by [`comment_sql`]; None for any other text. (`loaded=`
/// is absent from comments of loads before it was recorded.)
pub fn parse_comment(comment: &str) -> Option<NuC> {
    let rest = comment.strip_prefix("stampede tpcc: ")?;
    let (mut last, mut customer_id, mut item_id) = (None, None, None);
    for part in rest.split(' ') {
        let (k, v) = part.split_once('=')?;
        if k == "loaded" {
            continue;
        }
        let v: i64 = v.parse().ok()?;
        match k {
            "c_last_c" => last = Some(v),
            "c_id_c" => customer_id = Some(v),
            "ol_i_id_c" => item_id = Some(v),
            "seed" => {}
            _ => return None,
        }
    }
    Some(NuC {
        last: last?,
        customer_id: customer_id?,
        item_id: item_id?,
    })
}

/// The load time a comment written by [`comment_sql`] recorded (`YYYY-MM-DD HH:MM:SS`).
pub fn parse_load_time(comment: &str) -> Option<String> {
    parse_comment(comment)?;
    let rest = comment.strip_prefix("stampede tpcc: ")?;
    (rest.split(' '))
        .find_map(|p| p.strip_prefix("loaded="))
        .map(|t| t.replace('T', " "))
}

/// The load's NURand constants as `init` recorded them on `customer` (module header); None when
/// the comment is absent or not stampede's (data loaded by another tool). [`LoadError::Missing`]
/// when there is no `customer` table.
pub async fn load_constants(s: &mut Session) -> Result<Option<NuC>, LoadError> {
    Ok(customer_comment(s).await?.and_then(|c| parse_comment(&c)))
}

/// The comment on `customer`; [`LoadError::Missing`] when there is no such table.
pub(super) async fn customer_comment(s: &mut Session) -> Result<Option<String>, LoadError> {
    if !table_exists(s, "customer").await? {
        return Err(LoadError::Missing {
            table: "customer",
            workload: "tpcc",
        });
    }
    let sql = match s.dialect() {
        Dialect::Postgres => "SELECT pg_catalog.obj_description('customer'::regclass, 'pg_class')",
        Dialect::MySql => {
            "SELECT table_comment FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'customer'"
        }
    };
    let rows = s
        .simple_query(sql)
        .await
        .map_err(|e| LoadError::db("reading the comment on customer", e))?;
    Ok(rows.first().and_then(|r| r.first().cloned().flatten()))
}
