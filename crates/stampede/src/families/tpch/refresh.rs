//! TPC-H's refresh functions (TPC-H v3.0.1, clause 2.5): RF1 ("new sales") inserts SF * 1500
//! orders, each with its one to seven line items; RF2 ("old sales") deletes SF * 1500 orders
//! and their line items.
//!
//! The new rows are dbgen's, from `tpchgen` like the load's: pair `p` of a run takes part
//! `p + 1` of [`PARTS`] of the orders and line items generators (SF * 1,500,000 orders / 1000
//! = SF * 1500 per part, clause 4.2.5.2's size of an update set), with each order key moved
//! into a slot the load never uses. dbgen's keys are sparse (clause 4.2.3: of every 32 keys
//! the first 8 are used: `key % 32` is 0 to 7), and dbgen's own update sets take keys from
//! the unused slots the same way; here the new key is the row's key + 8 (`key % 32` is 8 to
//! 15), so no new row can meet a loaded one, nor another pair's.
//!
//! Unlike dbgen's delete sets, which remove loaded orders, RF2 deletes the orders its own
//! pair's RF1 inserted: the same number of rows and the same statements, and the database is
//! left as loaded, so the performance test can run again without a new load (a tuning loop
//! runs it many times). A run cut between a pair's RF1 and RF2 leaves its rows behind;
//! [`leftovers_sql`] finds them and [`cleanup_sql`] removes them before the next run.
//!
//! Must not touch: any table but `orders` and `lineitem`, and in those only the keys of the
//! refresh slots.

use std::fmt::Write as _;

use tpchgen::generators::{LineItemGenerator, OrderGenerator};

/// Parts the orders are cut into: one part is one refresh pair's orders.
pub const PARTS: i32 = 1000;

/// Added to a loaded order's key to make a new one (module header).
const SLOT: u64 = 8;

/// Rows per INSERT statement.
const BATCH: usize = 200;

/// Pair `pair`'s two refresh functions: RF1's statements and RF2's.
pub struct Pair {
    pub rf1: Vec<String>,
    pub rf2: Vec<String>,
}

/// The statements of refresh pair `pair` (0: the power test's, 1..=S: the throughput test's
/// refresh stream) at scale `scale`.
pub fn pair(scale: f64, pair: usize) -> Pair {
    let part = (pair as i32 % PARTS) + 1;
    let mut keys = Vec::new();
    let orders = rows(
        OrderGenerator::new(scale, part, PARTS)
            .iter()
            .map(|r| r.to_string()),
    );
    let lines = rows(
        LineItemGenerator::new(scale, part, PARTS)
            .iter()
            .map(|r| r.to_string()),
    );
    for o in &orders {
        keys.push(o[0].clone());
    }
    let mut rf1 = inserts("orders", &orders);
    rf1.extend(inserts("lineitem", &lines));
    // Line items first: they reference their orders (clause 2.5.3's order of deletes).
    let mut rf2 = Vec::new();
    for chunk in keys.chunks(BATCH) {
        let list = chunk.join(", ");
        rf2.push(format!("DELETE FROM lineitem WHERE l_orderkey IN ({list})"));
        rf2.push(format!("DELETE FROM orders WHERE o_orderkey IN ({list})"));
    }
    Pair { rf1, rf2 }
}

/// TBL lines (`a|b|c|`) as fields, the first (the order key) moved to its refresh slot.
fn rows(lines: impl Iterator<Item = String>) -> Vec<Vec<String>> {
    lines
        .map(|l| {
            let mut f: Vec<String> = l
                .trim_end_matches('|')
                .split('|')
                .map(str::to_string)
                .collect();
            let key: u64 = f[0].parse().expect("dbgen's order key is a number");
            f[0] = (key + SLOT).to_string();
            f
        })
        .collect()
}

/// Multi-row INSERTs of `rows` into `table`, every value a quoted literal (both dialects cast
/// it to the column's type; dbgen's text holds no quote nor backslash, and a quote would be
/// doubled).
fn inserts(table: &str, rows: &[Vec<String>]) -> Vec<String> {
    rows.chunks(BATCH)
        .map(|chunk| {
            let mut s = format!("INSERT INTO {table} VALUES ");
            for (i, r) in chunk.iter().enumerate() {
                s.push_str(if i == 0 { "(" } else { ", (" });
                for (j, v) in r.iter().enumerate() {
                    if j > 0 {
                        s.push_str(", ");
                    }
                    let _ = write!(s, "'{}'", v.replace('\'', "''"));
                }
                s.push(')');
            }
            s
        })
        .collect()
}

/// Counts the orders in refresh slots (a run cut between RF1 and RF2 left them).
pub fn leftovers_sql() -> &'static str {
    "SELECT count(*) FROM orders WHERE o_orderkey % 32 BETWEEN 8 AND 15"
}

/// Removes what [`leftovers_sql`] found, line items first.
pub fn cleanup_sql() -> [&'static str; 2] {
    [
        "DELETE FROM lineitem WHERE l_orderkey % 32 BETWEEN 8 AND 15",
        "DELETE FROM orders WHERE o_orderkey % 32 BETWEEN 8 AND 15",
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_inserts_and_deletes_sf_times_1500_orders_in_unused_slots() {
        let p = pair(0.1, 0);
        let rows = |sql: &[String], table: &str| -> u64 {
            (sql.iter())
                .filter(|s| s.starts_with(&format!("INSERT INTO {table} ")))
                .map(|s| s.matches("), (").count() as u64 + 1)
                .sum()
        };
        let (orders, lineitems) = (rows(&p.rf1, "orders"), rows(&p.rf1, "lineitem"));
        assert_eq!(orders, 150);
        assert!((150..=7 * 150).contains(&lineitems), "{lineitems}");
        // Every new key in a refresh slot, none a loaded one.
        for sql in &p.rf1 {
            for v in sql
                .split("), (")
                .map(|r| r.trim_start_matches(|c| c != '\''))
            {
                let key: u64 = v
                    .trim_start_matches('\'')
                    .split('\'')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!((8..16).contains(&(key % 32)), "{key}: {sql:.80}");
            }
        }
        assert_eq!(p.rf1.len(), 1 + lineitems.div_ceil(BATCH as u64) as usize);
        assert!(p.rf2[0].starts_with("DELETE FROM lineitem WHERE l_orderkey IN (9, "));
        // Another pair, other orders.
        let q = pair(0.1, 1);
        assert_ne!(p.rf2[0], q.rf2[0]);
    }
}
