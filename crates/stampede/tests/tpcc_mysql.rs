//! TPC-C on MariaDB through the stampede binary (the MySQL issue's "TPC-C on MariaDB: load, run
//! 16 clients, all consistency conditions pass"): `init tpcc -w 2` loads tpcc-mysql's tables
//! (`new_orders`, InnoDB, its primary keys and indexes), `run tpcc -w 2 -c 16` runs the MySQL
//! dialect of the five transactions, and the run's checks pass: the twelve consistency
//! conditions of clause 3.3.2 and the commit count (`Com_commit`: the committed transactions'
//! COMMITs, the rolled-back New-Orders and the autocommitted Stock-Levels left out); then
//! `check tpcc` passes on its own. Beyond the twelve conditions, what the run wrote is checked
//! against clause 2's rules they do not cover: each new order line's amount and district info,
//! each stock row's quantity rule and counters, Payment's bad-credit C_DATA, the rolled-back
//! New-Orders reaching the server as ROLLBACKs, and the middle customer of a last name as the
//! MySQL statements choose it. A private MariaDB server (testkit, Debian's mariadb-server).

mod common;

use std::process::Command;

use sut::{QueryMode, Session, Value};
use testkit::MariaDb;
use workload::tpcc::{spec, sql};

fn stampede(args: &[&str], url: &str) -> (i32, String, String) {
    common::outcome(
        Command::new(env!("CARGO_BIN_EXE_stampede"))
            .args(args)
            .args(["-d", url]),
    )
}

#[test]
fn init_run_with_16_clients_and_check_on_mariadb() {
    // A buffer pool that holds two warehouses (~200 MB), so the run is not a disk test.
    let db = MariaDb::start(&["--innodb-buffer-pool-size=512M"]);
    db.fresh_database("tpcc_my");
    let url = db.tcp_url("root", None, "tpcc_my");

    let (code, _, err) = stampede(&["init", "tpcc", "-w", "2", "-q"], &url);
    assert_eq!(code, 0, "{err}\n{}", db.log());
    assert!(err.contains("2 warehouse(s):"), "{err}");
    // tpcc-mysql's tables and indexes.
    let sorted = |text: String| {
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    let tables = sorted(db.sql(
        "SELECT table_name, engine FROM information_schema.tables \
         WHERE table_schema = 'tpcc_my'",
    ));
    assert_eq!(
        tables,
        [
            "customer\tInnoDB",
            "district\tInnoDB",
            "history\tInnoDB",
            "item\tInnoDB",
            "new_orders\tInnoDB",
            "order_line\tInnoDB",
            "orders\tInnoDB",
            "stock\tInnoDB",
            "warehouse\tInnoDB"
        ]
    );
    let indexes = sorted(db.sql(
        "SELECT DISTINCT concat(table_name, '.', index_name) FROM information_schema.statistics \
         WHERE table_schema = 'tpcc_my' AND index_name <> 'PRIMARY'",
    ));
    assert_eq!(
        indexes,
        [
            "customer.idx_customer",
            "order_line.fkey_order_line_2",
            "orders.idx_orders",
            "stock.fkey_stock_2"
        ]
    );
    let counts = db.sql(
        "SELECT (SELECT count(*) FROM tpcc_my.warehouse), (SELECT count(*) FROM tpcc_my.stock), \
         (SELECT count(*) FROM tpcc_my.new_orders), (SELECT count(*) FROM tpcc_my.customer)",
    );
    assert_eq!(counts, "2\t200000\t18000\t60000\n");

    // The stock before the run, for its quantity rule.
    db.sql(
        "CREATE TABLE tpcc_my.stock_before AS \
         SELECT s_w_id, s_i_id, s_quantity FROM tpcc_my.stock",
    );
    let status = |name: &str| -> u64 {
        let line = db.sql(&format!("SHOW GLOBAL STATUS LIKE '{name}'"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let rollbacks_before = status("Com_rollback");

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tpcc.json");
    let (code, out, err) = stampede(
        &[
            "run",
            "tpcc",
            "-w",
            "2",
            "-c",
            "16",
            "-j",
            "2",
            "-T",
            "10",
            "--no-observe",
            "--json",
            json.to_str().unwrap(),
        ],
        &url,
    );
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("warehouses: 2"), "{out}");
    assert!(out.contains("PASSED   commit count"), "{out}");
    assert!(out.contains("PASSED   TPC-C consistency (3.3.2)"), "{out}");
    // The load's constants were found (recorded in customer's COMMENT).
    assert!(!err.contains("no record of its load-time"), "{err}");

    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let t = &v["tpcc"];
    assert_eq!(t["warehouses"], 2);
    assert!(t["tpmc"].as_f64().unwrap() > 0.0, "{t}");
    let limits = t["response_limits"].as_array().unwrap();
    let counts: Vec<u64> = limits
        .iter()
        .map(|l| l["count"].as_u64().unwrap())
        .collect();
    // Every type ran, Delivery and Stock-Level included.
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    assert!(t["lines"].as_u64().unwrap() > 0, "{t}");
    let conditions = t["consistency"].as_array().unwrap();
    assert_eq!(conditions.len(), 12);
    for c in conditions {
        assert_eq!(c["violations"], 0, "{c}");
    }
    let checks = v["checks"].as_array().unwrap();
    for name in ["commit count", "TPC-C consistency (3.3.2)"] {
        let c = checks.iter().find(|c| c["name"] == name).expect(name);
        assert_eq!(c["status"], "passed", "{c}");
    }

    // The rolled-back New-Orders reached the server (and only a retry adds a ROLLBACK).
    let rollbacks = t["rollbacks"].as_u64().unwrap();
    let retries = t["retries"].as_u64().unwrap();
    let sent = status("Com_rollback") - rollbacks_before;
    assert!(
        (rollbacks..=rollbacks + retries).contains(&sent),
        "Com_rollback moved by {sent}, {rollbacks} rollbacks, {retries} retries"
    );
    written_rows_follow_clause_2(&db);
    rt().block_on(middle_customers(&db, &url));

    let (code, out, err) = stampede(&["check", "tpcc"], &url);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 warehouse(s) loaded"), "{out}");
    assert_eq!(out.matches("PASSED").count(), 13, "{out}");
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Clause 2.4.2.2 and 2.5.2.2 on every row the run wrote (orders above the load's 3000).
fn written_rows_follow_clause_2(db: &MariaDb) {
    let none = |what: &str, sql: &str| {
        assert_eq!(db.sql(sql), "0\n", "{what}: {sql}");
    };
    none(
        "OL_AMOUNT = OL_QUANTITY * I_PRICE",
        "SELECT count(*) FROM tpcc_my.order_line JOIN tpcc_my.item ON i_id = ol_i_id \
         WHERE ol_o_id > 3000 AND ol_amount <> ol_quantity * i_price",
    );
    none(
        "OL_DIST_INFO = the supplying stock's S_DIST of the order's district",
        "SELECT count(*) FROM tpcc_my.order_line JOIN tpcc_my.stock \
         ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id WHERE ol_o_id > 3000 \
         AND ol_dist_info <> CASE ol_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 \
         WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 \
         WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 \
         WHEN 9 THEN s_dist_09 ELSE s_dist_10 END",
    );
    // S_YTD, S_ORDER_CNT, S_REMOTE_CNT start at 0 (clause 4.3.3.1) and grow by each line;
    // S_QUANTITY drops by each line's quantity, plus 91 whenever it would fall under 10, so it
    // stays in [10, 100] and moves by the lines' total modulo 91.
    none(
        "the stock rule",
        "SELECT count(*) FROM tpcc_my.stock s JOIN tpcc_my.stock_before b \
         ON b.s_w_id = s.s_w_id AND b.s_i_id = s.s_i_id \
         LEFT JOIN (SELECT ol_supply_w_id w, ol_i_id i, sum(ol_quantity) q, count(*) n, \
         sum(ol_supply_w_id <> ol_w_id) r FROM tpcc_my.order_line WHERE ol_o_id > 3000 \
         GROUP BY 1, 2) l ON l.w = s.s_w_id AND l.i = s.s_i_id \
         WHERE s.s_ytd <> coalesce(l.q, 0) OR s.s_order_cnt <> coalesce(l.n, 0) \
         OR s.s_remote_cnt <> coalesce(l.r, 0) OR s.s_quantity NOT BETWEEN 10 AND 100 \
         OR MOD(s.s_quantity - b.s_quantity + coalesce(l.q, 0), 91) <> 0",
    );
    assert_ne!(
        db.sql("SELECT count(*) FROM tpcc_my.stock WHERE s_order_cnt > 0"),
        "0\n"
    );
    // One HISTORY row per payment (the load's one included).
    none(
        "C_PAYMENT_CNT = the customer's HISTORY rows",
        "SELECT count(*) FROM tpcc_my.customer LEFT JOIN (SELECT h_c_w_id w, h_c_d_id d, \
         h_c_id c, count(*) n FROM tpcc_my.history GROUP BY 1, 2, 3) h \
         ON h.w = c_w_id AND h.d = c_d_id AND h.c = c_id WHERE c_payment_cnt <> coalesce(h.n, 0)",
    );
    // Bad credit: C_DATA starts with the last payment's ids and amount, at most 500 long.
    none(
        "C_DATA of paying BC customers",
        "SELECT count(*) FROM tpcc_my.customer WHERE c_credit = 'BC' AND c_payment_cnt > 1 \
         AND (length(c_data) > 500 OR c_data NOT REGEXP concat('^', c_id, ' ', c_d_id, ' ', \
         c_w_id, ' ([1-9]|10) [12] [0-9]+[.][0-9][0-9] [|] '))",
    );
    assert_ne!(
        db.sql("SELECT count(*) FROM tpcc_my.customer WHERE c_credit = 'BC' AND c_payment_cnt > 1"),
        "0\n"
    );
    none(
        "C_DATA of good-credit customers is not prefixed",
        "SELECT count(*) FROM tpcc_my.customer WHERE c_credit = 'GC' \
         AND c_data REGEXP concat('^', c_id, ' ', c_d_id, ' ', c_w_id, ' ')",
    );
}

/// Clause 2.5.2.2 / 2.6.2.2: of the customers with a last name, ordered by C_FIRST, the one at
/// position n/2 rounded up; as Order-Status's and Payment's MySQL statements find it.
async fn middle_customers(db: &MariaDb, url: &str) {
    let conn = sut::parse_mysql_url(url).unwrap();
    let mut s = Session::connect(&sut::Target::MySql(conn)).await.unwrap();
    let os = s.register(sql::MYSQL.os_customer_name[0], QueryMode::Prepared);
    let pay = s.register(sql::MYSQL.pay_customer_name[0], QueryMode::Prepared);
    let mut names: Vec<String> = (0..1000)
        .step_by(7)
        .map(|n| {
            let mut name = String::new();
            spec::last_name(n, &mut name);
            name
        })
        .collect();
    names.push("NOBODY".into());
    let mut seen = [false; 4];
    for name in &names {
        let ids: Vec<i64> = db
            .sql(&format!(
                "SELECT c_id FROM tpcc_my.customer WHERE c_w_id = 2 AND c_d_id = 3 \
                 AND c_last = '{name}' ORDER BY c_first"
            ))
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let expected = ids.get(ids.len().div_ceil(2).saturating_sub(1)).copied();
        seen[ids.len().min(3)] = true;
        let p = [Value::Int(2), Value::Int(3), Value::Text(name)];
        let r = s.execute(os, &p).await.unwrap();
        let got = s.row_value(0).map(|v| v.parse::<i64>().unwrap());
        assert_eq!(
            (r.rows, got),
            (expected.is_some() as u64, expected),
            "{name}"
        );
        // Payment's: $5, $6 the customer's warehouse and district, $3 the name.
        let p = [
            Value::Int(1),
            Value::Int(1),
            Value::Text(name),
            Value::Float(1.0),
            Value::Int(2),
            Value::Int(3),
        ];
        s.execute(pay, &p).await.unwrap();
        let got = s.row_value(0).map(|v| v.parse::<i64>().unwrap());
        assert_eq!(got, expected, "{name}");
    }
    // Names held by no customer, by one, by two and by more were all tried.
    assert_eq!(seen, [true; 4]);
    s.close().await;
}
