//! The SQL of TPC-C's transactions, one place per dialect: the transaction files say what each
//! step reads and writes and with which inputs; a [`Dialect`] says it in one server's SQL
//! ([`for_target`] picks it by the session's protocol). Every statement takes its inputs as
//! `$n` parameters in the order its comment gives (the MySQL session rewrites `$n` to `?`).
//!
//! ## Steps
//! A [`Step`] is one statement, or where a dialect lacks what makes it one (MySQL has neither
//! `RETURNING` nor data-modifying CTEs) a few run in order, with these rules:
//! - each statement takes the step's parameters up to its own largest `$n`;
//! - when the first statement finds nothing (no row returned, no row affected) the others do
//!   not run, and the step found nothing (Delivery's empty district, New-Order's unused item);
//! - otherwise the first column of the first statement's first row, as an integer, is one more
//!   parameter for the others, after the step's own (Delivery's order id, Payment's customer
//!   chosen by last name);
//! - the step's result, what the transaction reads, is that of the last statement run.
//!
//! ## PostgreSQL
//! Steps that read a row and then update it (the district's next order id, the warehouse's and
//! district's year-to-date, the customer's balance) are one `UPDATE ... RETURNING`; the steps of
//! one order line (item, stock, order line) are one statement with data-modifying CTEs. The rows
//! read and written are those of the transaction profiles of clause 2; fewer round trips keep the
//! driver cheap and the locks held for less time, as HammerDB's stored procedures do. A row that
//! is read to be updated is locked by the UPDATE that reads it, as `SELECT ... FOR UPDATE` would.
//!
//! ## MySQL / MariaDB
//! On tpcc-mysql's tables (`load::tpcc`: `new_orders`, not `new_order`), InnoDB, the server's
//! default REPEATABLE READ. Each step is its statements of clause 2 in the order the profile
//! gives, the read that decides first where the step may find nothing:
//! - the updates that read the row they change (`d_next_o_id + 1`, `w_ytd + amount`, the
//!   customer's balance, the stock's quantity rule) compute from the row's current version under
//!   its exclusive lock, as PostgreSQL's `UPDATE ... RETURNING`; the values the transaction reads
//!   back (the order id, the names for H_DATA, the customer's new balance) are then read by a
//!   plain SELECT, which sees the transaction's own change;
//! - the oldest undelivered order is taken with `SELECT ... ORDER BY no_o_id LIMIT 1 FOR
//!   UPDATE` (a concurrent Delivery of the same district waits, then takes the next one);
//! - an order line is `UPDATE stock` (guarded by the item's existence, as PostgreSQL's) and
//!   `INSERT INTO order_line ... SELECT` from `item` and `stock`, which reads I_PRICE and
//!   S_DIST_xx in the statement that writes OL_AMOUNT and OL_DIST_INFO. The display-only values
//!   of a line (I_NAME, the new S_QUANTITY, brand-generic) are not sent back: the transaction
//!   does not use them, and a SELECT more per line would cost ten round trips per New-Order;
//! - the middle customer of a last name (clause 2.5.2.2) is found with window functions
//!   (`ROW_NUMBER`, `COUNT(*) OVER ()`: MariaDB 10.2+, MySQL 8.0+), since MySQL's `LIMIT`
//!   takes no expression;
//! - amounts are sent as doubles and written as `CAST(... AS DECIMAL(6, 2))`, the exact cents;
//!   times are `NOW()` (the columns are `datetime`).
//!
//! Stock-Level is one autocommitted SELECT in both dialects; every other transaction is
//! `BEGIN` ... `COMMIT` (or `ROLLBACK`, New-Order's 1%).

use sut::Dialect as Protocol;

/// One step's statements (module header, "Steps").
pub type Step = &'static [&'static str];

/// The most statements a step has (MySQL's Delivery).
pub const MAX_STATEMENTS: usize = 5;

/// The statements of the five transactions in one dialect.
#[derive(Debug)]
pub struct Dialect {
    /// Run once on every new session, before the transactions (not measured).
    pub session_setup: &'static [&'static str],
    pub begin: &'static str,
    pub commit: &'static str,
    pub rollback: &'static str,
    /// New-Order 2.4.2.2, customer and warehouse: $1 w_id, $2 d_id, $3 c_id ->
    /// c_discount, c_last, c_credit, w_tax.
    pub no_customer: Step,
    /// New-Order, district: $1 w_id, $2 d_id -> the order id (d_next_o_id before the
    /// increment), d_tax.
    pub no_district: Step,
    /// New-Order, ORDER and NEW-ORDER rows: $1 o_id, $2 d_id, $3 w_id, $4 c_id, $5 o_ol_cnt,
    /// $6 o_all_local.
    pub no_order: Step,
    /// New-Order, one order line (item, stock, order line): $1 o_id, $2 d_id, $3 w_id,
    /// $4 ol_number, $5 ol_i_id, $6 ol_supply_w_id, $7 ol_quantity, $8 1 if remote else 0;
    /// finds nothing when the item does not exist (the rollback of clause 2.4.2.3).
    /// PostgreSQL returns ol_amount, i_name, i_price, s_quantity, brand-generic.
    pub no_line: Step,
    /// Payment 2.5.2.2, warehouse and district: $1 w_id, $2 d_id, $3 h_amount -> w_name,
    /// d_name (and their addresses).
    pub pay_district: Step,
    /// Payment, customer by id and history: $1 w_id, $2 d_id, $3 c_id, $4 h_amount,
    /// $5 c_w_id, $6 c_d_id, $7 h_data -> c_id, c_balance, c_credit.
    pub pay_customer_id: Step,
    /// Payment, customer by last name (the middle one of clause 2.5.2.2) and history: as
    /// `pay_customer_id` with $3 c_last.
    pub pay_customer_name: Step,
    /// Order-Status 2.6.2.2, customer by id: $1 w_id, $2 d_id, $3 c_id -> c_id, c_balance,
    /// c_first, c_middle, c_last.
    pub os_customer_id: Step,
    /// Order-Status, customer by last name: $1 w_id, $2 d_id, $3 c_last -> as above.
    pub os_customer_name: Step,
    /// Order-Status, the customer's last order: $1 w_id, $2 d_id, $3 c_id -> o_id, o_entry_d,
    /// o_carrier_id.
    pub os_order: Step,
    /// Order-Status, its lines: $1 w_id, $2 d_id, $3 o_id -> the lines.
    pub os_lines: Step,
    /// Delivery 2.7.4.2, one district: $1 w_id, $2 d_id, $3 o_carrier_id; finds nothing when
    /// the district has no undelivered order (PostgreSQL returns the delivered o_id).
    pub delivery: Step,
    /// Stock-Level 2.8.2.2: $1 w_id, $2 d_id, $3 threshold -> low_stock.
    pub stock_level: Step,
}

/// The dialect of a protocol's servers.
pub fn for_target(p: Protocol) -> &'static Dialect {
    match p {
        Protocol::Postgres => &POSTGRES,
        Protocol::MySql => &MYSQL,
    }
}

/// The parameters a statement takes: its largest `$n` (the statements here have no `$` in a
/// string or identifier).
pub fn params(sql: &str) -> usize {
    let b = sql.as_bytes();
    let mut max = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            let mut n = 0usize;
            while j < b.len() && b[j].is_ascii_digit() {
                n = n * 10 + (b[j] - b'0') as usize;
                j += 1;
            }
            max = max.max(n);
            i = j;
        } else {
            i += 1;
        }
    }
    max
}

/// The middle customer of those with a last name, by c_first (clause 2.5.2.2: "the row at
/// position n/2 rounded up"; 0-based offset (n - 1) / 2).
macro_rules! by_last_name {
    ($w:literal, $d:literal, $last:literal) => {
        concat!(
            "(SELECT c_id FROM customer WHERE c_w_id = ",
            $w,
            " AND c_d_id = ",
            $d,
            " AND c_last = ",
            $last,
            " ORDER BY c_first OFFSET (SELECT (count(*) - 1) / 2 FROM customer WHERE c_w_id = ",
            $w,
            " AND c_d_id = ",
            $d,
            " AND c_last = ",
            $last,
            ") LIMIT 1)"
        )
    };
}

/// The customer update and history insert of Payment, with `$c` naming the customer.
macro_rules! payment_customer {
    ($c:expr) => {
        concat!(
            "WITH c AS (UPDATE customer SET c_balance = c_balance - $4, \
             c_ytd_payment = c_ytd_payment + $4, c_payment_cnt = c_payment_cnt + 1, \
             c_data = CASE WHEN c_credit = 'BC' THEN substr(c_id || ' ' || c_d_id || ' ' || \
             c_w_id || ' ' || $2::int || ' ' || $1::int || ' ' || $4::numeric(6, 2) || ' | ' || c_data, \
             1, 500) ELSE c_data END \
             WHERE c_w_id = $5 AND c_d_id = $6 AND c_id = ",
            $c,
            " RETURNING c_id, c_balance, c_credit) \
             INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, \
             h_data) SELECT c_id, $6, $5, $2, $1, LOCALTIMESTAMP, $4, $7 FROM c \
             RETURNING h_c_id, (SELECT c_balance FROM c), (SELECT c_credit FROM c)"
        )
    };
}

/// Order-Status's customer columns.
macro_rules! os_customer {
    ($c:expr) => {
        concat!(
            "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer \
             WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = ",
            $c
        )
    };
}

pub const POSTGRES: Dialect = Dialect {
    // No parallel plans: on freshly loaded data the planner can run Stock-Level's join with
    // parallel workers (seen at 2 warehouses: 24 parallel workers in 6 s), which gains nothing
    // for 200 rows and breaks the exact commit count, since PostgreSQL counts each parallel
    // worker's transaction in pg_stat_database.xact_commit.
    session_setup: &["SET max_parallel_workers_per_gather = 0"],
    begin: "BEGIN",
    commit: "COMMIT",
    rollback: "ROLLBACK",
    no_customer: &["SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
                  WHERE w_id = $1 AND c_w_id = $1 AND c_d_id = $2 AND c_id = $3"],
    no_district: &["UPDATE district SET d_next_o_id = d_next_o_id + 1 \
                  WHERE d_w_id = $1 AND d_id = $2 RETURNING d_next_o_id - 1, d_tax"],
    no_order: &["WITH o AS (INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, \
               o_carrier_id, o_ol_cnt, o_all_local) \
               VALUES ($1, $2, $3, $4, LOCALTIMESTAMP, NULL, $5, $6) \
               RETURNING o_id, o_d_id, o_w_id) \
               INSERT INTO new_order (no_o_id, no_d_id, no_w_id) SELECT o_id, o_d_id, o_w_id FROM o"],
    // Clause 2.4.2.2: S_QUANTITY drops by OL_QUANTITY if that leaves 10 or more, else it is
    // also raised by 91; OL_AMOUNT = OL_QUANTITY * I_PRICE; brand-generic is "B" when both
    // I_DATA and S_DATA contain "ORIGINAL". The stock is updated only when the item exists.
    no_line: &["WITH i AS (SELECT i_price, i_name, i_data FROM item WHERE i_id = $5), \
              s AS (UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $7::int + 10 \
              THEN s_quantity - $7::int ELSE s_quantity - $7::int + 91 END, \
              s_ytd = s_ytd + $7::int, s_order_cnt = s_order_cnt + 1, \
              s_remote_cnt = s_remote_cnt + $8::int \
              WHERE s_w_id = $6 AND s_i_id = $5 AND EXISTS (SELECT 1 FROM i) \
              RETURNING s_quantity, s_data, CASE $2::int WHEN 1 THEN s_dist_01 \
              WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 \
              WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 \
              WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END AS s_dist) \
              INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
              ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
              SELECT $1, $2, $3, $4, $5, $6, NULL, $7::int, $7::int * i.i_price, s.s_dist \
              FROM i, s \
              RETURNING ol_amount, (SELECT i_name FROM i), (SELECT i_price FROM i), \
              (SELECT s_quantity FROM s), (SELECT CASE WHEN i.i_data LIKE '%ORIGINAL%' \
              AND s.s_data LIKE '%ORIGINAL%' THEN 'B' ELSE 'G' END FROM i, s)"],
    pay_district: &["WITH w AS (UPDATE warehouse SET w_ytd = w_ytd + $3 WHERE w_id = $1 \
                   RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip) \
                   UPDATE district SET d_ytd = d_ytd + $3 FROM w WHERE d_w_id = $1 AND d_id = $2 \
                   RETURNING w.w_name, d_name, w.w_street_1, w.w_street_2, w.w_city, w.w_state, \
                   w.w_zip, d_street_1, d_street_2, d_city, d_state, d_zip"],
    pay_customer_id: &[payment_customer!("$3")],
    pay_customer_name: &[payment_customer!(by_last_name!("$5", "$6", "$3"))],
    os_customer_id: &[os_customer!("$3")],
    os_customer_name: &[os_customer!(by_last_name!("$1", "$2", "$3"))],
    os_order: &["SELECT o_id, o_entry_d, o_carrier_id FROM orders \
               WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1"],
    os_lines: &["SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
               FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"],
    // Clause 2.7.4.2: the oldest undelivered order of the district leaves NEW-ORDER, gets its
    // carrier, its lines their delivery date, and its customer the sum of their amounts and one
    // more delivery. A district with no undelivered order (or whose oldest one a concurrent
    // Delivery took: the DELETE then finds no row) is skipped.
    delivery: &["WITH no AS (DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 \
               AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = $1 \
               AND no_d_id = $2) RETURNING no_o_id), \
               o AS (UPDATE orders SET o_carrier_id = $3 FROM no WHERE o_w_id = $1 \
               AND o_d_id = $2 AND o_id = no.no_o_id RETURNING o_id, o_c_id), \
               ol AS (UPDATE order_line SET ol_delivery_d = LOCALTIMESTAMP FROM o \
               WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = o.o_id RETURNING ol_amount) \
               UPDATE customer SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) \
               FROM ol), c_delivery_cnt = c_delivery_cnt + 1 FROM o \
               WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = o.o_c_id RETURNING o.o_id"],
    // Clause 2.8.2.2: distinct items of the district's last 20 orders whose stock at the home
    // warehouse is below the threshold.
    stock_level: &["SELECT count(DISTINCT s_i_id) FROM district \
                  JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id \
                  AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20 \
                  JOIN stock ON s_w_id = d_w_id AND s_i_id = ol_i_id \
                  WHERE d_w_id = $1 AND d_id = $2 AND s_quantity < $3"],
};

/// MySQL: the c_id of the middle customer of those with a last name, by c_first (clause
/// 2.5.2.2: position n/2 rounded up, 1-based `(n + 1) DIV 2`), as a SELECT of one row.
macro_rules! mysql_by_last_name {
    ($w:literal, $d:literal, $last:literal) => {
        concat!(
            "SELECT c_id FROM (SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first) AS n, \
             COUNT(*) OVER () AS total FROM customer WHERE c_w_id = ",
            $w,
            " AND c_d_id = ",
            $d,
            " AND c_last = ",
            $last,
            ") AS named WHERE n = (total + 1) DIV 2"
        )
    };
}

/// MySQL: Payment's customer update, history row and the customer's new balance, with `$c`
/// naming the customer.
macro_rules! mysql_payment_customer {
    ($c:literal) => {
        [
            concat!(
                "UPDATE customer SET c_balance = c_balance - CAST($4 AS DECIMAL(6, 2)), \
                 c_ytd_payment = c_ytd_payment + CAST($4 AS DECIMAL(6, 2)), \
                 c_payment_cnt = c_payment_cnt + 1, \
                 c_data = CASE WHEN c_credit = 'BC' THEN SUBSTR(CONCAT(c_id, ' ', c_d_id, ' ', \
                 c_w_id, ' ', $2, ' ', $1, ' ', CAST($4 AS DECIMAL(6, 2)), ' | ', c_data), 1, 500) \
                 ELSE c_data END WHERE c_w_id = $5 AND c_d_id = $6 AND c_id = ",
                $c
            ),
            concat!(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
                 h_amount, h_data) VALUES (",
                $c,
                ", $6, $5, $2, $1, NOW(), CAST($4 AS DECIMAL(6, 2)), $7)"
            ),
            concat!(
                "SELECT c_id, c_balance, c_credit FROM customer \
                 WHERE c_w_id = $5 AND c_d_id = $6 AND c_id = ",
                $c
            ),
        ]
    };
}

const MYSQL_PAY_BY_ID: [&str; 3] = mysql_payment_customer!("$3");
const MYSQL_PAY_BY_NAME: [&str; 4] = {
    let [update, insert, select] = mysql_payment_customer!("$8");
    [
        mysql_by_last_name!("$5", "$6", "$3"),
        update,
        insert,
        select,
    ]
};

/// MySQL and MariaDB, on tpcc-mysql's tables (module header).
pub const MYSQL: Dialect = Dialect {
    session_setup: &[],
    begin: "BEGIN",
    commit: "COMMIT",
    rollback: "ROLLBACK",
    no_customer: &[
        "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
                  WHERE w_id = $1 AND c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
    ],
    no_district: &[
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2",
        "SELECT d_next_o_id - 1, d_tax FROM district WHERE d_w_id = $1 AND d_id = $2",
    ],
    no_order: &[
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, \
         o_all_local) VALUES ($1, $2, $3, $4, NOW(), NULL, $5, $6)",
        "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)",
    ],
    // Clause 2.4.2.2, as PostgreSQL's. The assignments do not read a column assigned before
    // them (MySQL evaluates a single-table UPDATE's assignments left to right, each seeing the
    // ones before).
    no_line: &[
        "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $7 + 10 THEN s_quantity - $7 \
         ELSE s_quantity - $7 + 91 END, s_ytd = s_ytd + $7, s_order_cnt = s_order_cnt + 1, \
         s_remote_cnt = s_remote_cnt + $8 \
         WHERE s_w_id = $6 AND s_i_id = $5 AND EXISTS (SELECT 1 FROM item WHERE i_id = $5)",
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
         SELECT $1, $2, $3, $4, $5, $6, NULL, $7, $7 * i_price, CASE $2 WHEN 1 THEN s_dist_01 \
         WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 \
         WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 \
         WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END \
         FROM item, stock WHERE i_id = $5 AND s_w_id = $6 AND s_i_id = $5",
    ],
    pay_district: &[
        "UPDATE warehouse SET w_ytd = w_ytd + CAST($3 AS DECIMAL(6, 2)) WHERE w_id = $1",
        "UPDATE district SET d_ytd = d_ytd + CAST($3 AS DECIMAL(6, 2)) \
         WHERE d_w_id = $1 AND d_id = $2",
        "SELECT w_name, d_name, w_street_1, w_street_2, w_city, w_state, w_zip, d_street_1, \
         d_street_2, d_city, d_state, d_zip FROM warehouse, district \
         WHERE w_id = $1 AND d_w_id = $1 AND d_id = $2",
    ],
    pay_customer_id: &MYSQL_PAY_BY_ID,
    pay_customer_name: &MYSQL_PAY_BY_NAME,
    os_customer_id: &[os_customer!("$3")],
    os_customer_name: &[concat!(
        "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer \
         WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = (",
        mysql_by_last_name!("$1", "$2", "$3"),
        ")"
    )],
    os_order: &["SELECT o_id, o_entry_d, o_carrier_id FROM orders \
               WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1"],
    os_lines: &[
        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
               FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
    ],
    // Clause 2.7.4.2, as PostgreSQL's; $4 is the order id the first statement found.
    delivery: &[
        "SELECT no_o_id FROM new_orders WHERE no_w_id = $1 AND no_d_id = $2 \
         ORDER BY no_o_id LIMIT 1 FOR UPDATE",
        "DELETE FROM new_orders WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $4",
        "UPDATE orders SET o_carrier_id = $3 WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $4",
        "UPDATE order_line SET ol_delivery_d = NOW() \
         WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $4",
        "UPDATE customer SET c_balance = c_balance + (SELECT COALESCE(SUM(ol_amount), 0) \
         FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $4), \
         c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = $1 AND c_d_id = $2 \
         AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = $1 AND o_d_id = $2 AND o_id = $4)",
    ],
    stock_level: POSTGRES.stock_level,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// (step, the parameters the transaction passes) for every step of a dialect.
    fn steps(d: &Dialect) -> Vec<(&'static str, Step, usize)> {
        vec![
            ("no_customer", d.no_customer, 3),
            ("no_district", d.no_district, 2),
            ("no_order", d.no_order, 6),
            ("no_line", d.no_line, 8),
            ("pay_district", d.pay_district, 3),
            ("pay_customer_id", d.pay_customer_id, 7),
            ("pay_customer_name", d.pay_customer_name, 7),
            ("os_customer_id", d.os_customer_id, 3),
            ("os_customer_name", d.os_customer_name, 3),
            ("os_order", d.os_order, 3),
            ("os_lines", d.os_lines, 3),
            ("delivery", d.delivery, 3),
            ("stock_level", d.stock_level, 3),
        ]
    }

    /// Each statement takes at most the step's parameters, PostgreSQL's exactly (it binds them
    /// all), the ones after the first at most one more (the first's value); no step has more
    /// statements than the client registers.
    #[test]
    fn steps_take_the_parameters_they_are_given() {
        for (name, d) in [("PostgreSQL", &POSTGRES), ("MySQL", &MYSQL)] {
            for (step, sqls, n) in steps(d) {
                assert!(
                    !sqls.is_empty() && sqls.len() <= MAX_STATEMENTS,
                    "{name} {step}"
                );
                let first = params(sqls[0]);
                assert!(first <= n, "{name} {step}: {}", sqls[0]);
                if name == "PostgreSQL" {
                    assert_eq!(first, n, "{step}: {}", sqls[0]);
                }
                for sql in &sqls[1..] {
                    assert!(params(sql) <= n + 1, "{name} {step}: {sql}");
                }
            }
            assert_eq!(d.pay_customer_id.len() > 1, name == "MySQL");
        }
        // PostgreSQL: one statement a step.
        assert!(steps(&POSTGRES).iter().all(|(_, s, _)| s.len() == 1));
        assert_eq!(params("SELECT $1, $12, $3"), 12);
        assert_eq!(params("SELECT 1"), 0);
    }

    /// The table names of each schema: go-tpc's `new_order` on PostgreSQL, tpcc-mysql's
    /// `new_orders` on MySQL.
    #[test]
    fn each_dialect_names_its_schema_s_tables() {
        let all = |d: &Dialect| -> String {
            steps(d)
                .iter()
                .flat_map(|(_, s, _)| s.iter().copied())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (pg, my) = (all(&POSTGRES), all(&MYSQL));
        assert!(pg.contains("new_order ") && !pg.contains("new_orders"));
        assert!(my.contains("new_orders ") && !my.contains("new_order "));
        for not_mysql in ["RETURNING", "::", "||", "LOCALTIMESTAMP", "WITH ", "OFFSET"] {
            assert!(!my.contains(not_mysql), "{not_mysql}");
        }
        assert_eq!(for_target(Protocol::MySql).delivery.len(), 5);
        assert_eq!(for_target(Protocol::Postgres).delivery.len(), 1);
    }
}
