//! The consistency conditions of TPC-C clause 3.3.2, checked on the whole database: after a
//! load, and after every run (`stampede check tpcc`, and automatically at the end of `stampede
//! run tpcc`). Each condition is one query counting the rows (warehouses, districts, orders or
//! customers) that violate it, so a failure says how much is wrong, not just that something is.
//!
//! Condition 11 (orders minus new-orders = 2100 per district) describes the initial population:
//! every Delivery moves an order out of NEW-ORDER, so it holds only while no order entered
//! after the load has been delivered; once one has, it is reported as not applicable.
//!
//! The same queries in both dialects, except: MySQL's NEW-ORDER table is tpcc-mysql's
//! `new_orders`; `a IS DISTINCT FROM b` is `NOT (a <=> b)` there; and condition 4's FULL JOIN,
//! which MySQL lacks, is a UNION ALL of the two sides' per-district sums, grouped again (the
//! same districts compared, a missing side counting 0).

use sut::{Dialect, Error, Session};

/// One condition's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// "3.3.2.1" ..
    pub clause: &'static str,
    /// What must hold, in the specification's words, shortened.
    pub rule: &'static str,
    /// Rows that violate it; 0 when it holds.
    pub violations: i64,
    /// False when the condition does not apply to this database's state (11 after a Delivery).
    pub applies: bool,
}

impl Condition {
    pub fn holds(&self) -> bool {
        !self.applies || self.violations == 0
    }
}

/// Sums of delivered order-line amounts per customer.
const DELIVERED: &str = "SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, sum(ol_amount) AS s \
     FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
     WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3";

/// Payments per customer.
const PAID: &str = "SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, sum(h_amount) AS s \
     FROM history GROUP BY 1, 2, 3";

/// (clause, rule, query returning the count of violating rows) in `dialect`.
fn conditions(dialect: Dialect) -> Vec<(&'static str, &'static str, String)> {
    let mysql = dialect == Dialect::MySql;
    let no = if mysql { "new_orders" } else { "new_order" };
    // `a IS DISTINCT FROM b`: NULL-safe inequality.
    let distinct = |a: &str, b: &str| -> String {
        if mysql {
            format!("NOT ({a} <=> {b})")
        } else {
            format!("{a} IS DISTINCT FROM {b}")
        }
    };
    let condition_4 = if mysql {
        "SELECT count(*) FROM (SELECT w, d, sum(s) s, sum(n) n FROM (\
         SELECT o_w_id w, o_d_id d, coalesce(sum(o_ol_cnt), 0) s, 0 n FROM orders GROUP BY 1, 2 \
         UNION ALL SELECT ol_w_id, ol_d_id, 0, count(*) FROM order_line GROUP BY 1, 2) u \
         GROUP BY w, d) t WHERE s <> n"
            .to_string()
    } else {
        "SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders \
         GROUP BY 1, 2) o FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) n FROM order_line \
         GROUP BY 1, 2) l ON ol_w_id = o_w_id AND ol_d_id = o_d_id \
         WHERE s IS DISTINCT FROM n"
            .to_string()
    };
    vec![
        (
            "3.3.2.1",
            "W_YTD = sum(D_YTD) of the warehouse's districts",
            "SELECT count(*) FROM warehouse JOIN (SELECT d_w_id, sum(d_ytd) s FROM district \
             GROUP BY d_w_id) d ON d_w_id = w_id WHERE w_ytd <> s"
                .into(),
        ),
        (
            "3.3.2.2",
            "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district",
            format!(
                "SELECT count(*) FROM district \
                 LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) m FROM orders GROUP BY 1, 2) o \
                   ON o_w_id = d_w_id AND o_d_id = d_id \
                 LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) m FROM {no} GROUP BY 1, 2) n \
                   ON no_w_id = d_w_id AND no_d_id = d_id \
                 WHERE {} OR (n.m IS NOT NULL AND n.m <> d_next_o_id - 1)",
                distinct("o.m", "d_next_o_id - 1")
            ),
        ),
        (
            "3.3.2.3",
            "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
            format!(
                "SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 - count(*) diff \
                 FROM {no} GROUP BY no_w_id, no_d_id) t WHERE diff <> 0"
            ),
        ),
        (
            "3.3.2.4",
            "sum(O_OL_CNT) = rows in ORDER-LINE per district",
            condition_4,
        ),
        (
            "3.3.2.5",
            "O_CARRIER_ID is null exactly when the order has a NEW-ORDER row",
            format!(
                "SELECT count(*) FROM orders LEFT JOIN {no} ON no_w_id = o_w_id \
                 AND no_d_id = o_d_id AND no_o_id = o_id \
                 WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)"
            ),
        ),
        (
            "3.3.2.6",
            "O_OL_CNT = the order's rows in ORDER-LINE",
            format!(
                "SELECT count(*) FROM orders LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, \
                 count(*) n FROM order_line GROUP BY 1, 2, 3) l ON ol_w_id = o_w_id \
                 AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE {}",
                distinct("n", "o_ol_cnt")
            ),
        ),
        (
            "3.3.2.7",
            "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is",
            "SELECT count(*) FROM orders JOIN order_line ON ol_w_id = o_w_id \
             AND ol_d_id = o_d_id AND ol_o_id = o_id \
             WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)"
                .into(),
        ),
        (
            "3.3.2.8",
            "W_YTD = sum(H_AMOUNT) of the warehouse",
            format!(
                "SELECT count(*) FROM warehouse LEFT JOIN (SELECT h_w_id, sum(h_amount) s \
                 FROM history GROUP BY 1) h ON h_w_id = w_id WHERE {}",
                distinct("w_ytd", "s")
            ),
        ),
        (
            "3.3.2.9",
            "D_YTD = sum(H_AMOUNT) of the district",
            format!(
                "SELECT count(*) FROM district LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) s \
                 FROM history GROUP BY 1, 2) h ON h_w_id = d_w_id AND h_d_id = d_id WHERE {}",
                distinct("d_ytd", "s")
            ),
        ),
        (
            "3.3.2.10",
            "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
            format!(
                "SELECT count(*) FROM customer LEFT JOIN ({DELIVERED}) o ON o.w = c_w_id \
                 AND o.d = c_d_id AND o.c = c_id LEFT JOIN ({PAID}) h ON h.w = c_w_id \
                 AND h.d = c_d_id AND h.c = c_id \
                 WHERE c_balance <> coalesce(o.s, 0) - coalesce(h.s, 0)"
            ),
        ),
        (
            "3.3.2.11",
            "rows in ORDER - rows in NEW-ORDER = 2100 per district (initial population)",
            format!(
                "SELECT count(*) FROM district \
                 LEFT JOIN (SELECT o_w_id, o_d_id, count(*) n FROM orders GROUP BY 1, 2) o \
                   ON o_w_id = d_w_id AND o_d_id = d_id \
                 LEFT JOIN (SELECT no_w_id, no_d_id, count(*) n FROM {no} GROUP BY 1, 2) n \
                   ON no_w_id = d_w_id AND no_d_id = d_id \
                 WHERE coalesce(o.n, 0) - coalesce(n.n, 0) <> 2100"
            ),
        ),
        (
            "3.3.2.12",
            "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
            format!(
                "SELECT count(*) FROM customer LEFT JOIN ({DELIVERED}) o ON o.w = c_w_id \
                 AND o.d = c_d_id AND o.c = c_id \
                 WHERE c_balance + c_ytd_payment <> coalesce(o.s, 0)"
            ),
        ),
    ]
}

/// Whether a Delivery has run since the load: an order the load left undelivered (o_id 2101
/// and up) has a carrier (condition 11 then no longer describes the data).
const DELIVERED_SINCE_LOAD: &str = "SELECT EXISTS (SELECT 1 FROM orders WHERE o_id > 2100 \
     AND o_carrier_id IS NOT NULL)";

/// Check every condition.
pub async fn check(s: &mut Session) -> Result<Vec<Condition>, Error> {
    let scalar = |rows: Vec<Vec<Option<String>>>| -> String {
        rows.into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .unwrap_or_default()
    };
    // PostgreSQL's boolean is `t`, MySQL's 1.
    let delivered = matches!(
        scalar(s.simple_query(DELIVERED_SINCE_LOAD).await?).as_str(),
        "t" | "1"
    );
    let mut out = Vec::new();
    for (clause, rule, sql) in conditions(s.dialect()) {
        let applies = !(clause == "3.3.2.11" && delivered);
        let violations = if applies {
            scalar(s.simple_query(&sql).await?).parse().unwrap_or(-1)
        } else {
            0
        };
        out.push(Condition {
            clause,
            rule,
            violations,
            applies,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same twelve conditions in both dialects, each in its own SQL and table names.
    #[test]
    fn each_dialect_has_the_twelve_conditions_in_its_sql() {
        let pg = conditions(Dialect::Postgres);
        let my = conditions(Dialect::MySql);
        assert_eq!(pg.len(), 12);
        assert_eq!(my.len(), 12);
        for ((pc, pr, p), (mc, mr, m)) in pg.iter().zip(&my) {
            assert_eq!((pc, pr), (mc, mr));
            for pg_only in ["IS DISTINCT FROM", "FULL JOIN", "new_order ", "::"] {
                assert!(!m.contains(pg_only), "{mc}: {m}");
            }
            assert!(!p.contains("<=>") && !p.contains("new_orders"), "{pc}: {p}");
        }
        let uses_new_orders = my
            .iter()
            .filter(|(_, _, m)| m.contains("new_orders"))
            .count();
        assert_eq!(uses_new_orders, 4);
    }
}
