//! TPC-C's transactions against a real server, one at a time, each checked against what the
//! specification says it must do (clause 2.x.2), computed by hand in the test from the rows
//! before and after: New-Order's stock rule and amounts, its rollbacks reaching the server,
//! Payment's balances, history and bad-credit data, the middle customer of a last name,
//! Delivery's carrier, dates and balances, and the read-only transactions changing nothing.
//! The consistency conditions of clause 3.3.2 hold after each. The command line (init, run
//! with 16 clients, check, go-tpc's check) is in tests/tpcc_cli.rs.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::oltp::{database, query, rt, scalar_i64};
use sut::{ConnConfig, QueryMode, Session};
use workload::tpcc::spec::{self, NuC, Uniform};
use workload::tpcc::{consistency, Kind, Options, Tpcc, TpccClient};
use workload::{ClientWorkload, Rng, Sleeper, StatementTimer, TxnContext, Workload};

struct NoTimer;
impl StatementTimer for NoTimer {
    fn start(&mut self) {}
    fn end(&mut self, _: usize, _: bool) {}
}
struct NoSleep;
impl Sleeper for NoSleep {
    fn sleep(&mut self, _: u64) -> Pin<Box<dyn Future<Output = bool> + '_>> {
        Box::pin(async { true })
    }
}

const C: NuC = NuC {
    last: 100,
    customer_id: 200,
    item_id: 300,
};

fn workload(w: u32) -> Tpcc {
    Tpcc::new(
        Options {
            warehouses: w,
            c: C,
            think: false,
        },
        sut::Dialect::Postgres,
    )
    .unwrap()
}

async fn load(cfg: &ConnConfig, warehouses: u32) {
    load::tpcc::init(
        &cfg.clone().into(),
        &load::tpcc::InitOptions {
            warehouses,
            seed: 11,
            jobs: 2,
            no_vacuum: true,
            cancel: Arc::new(AtomicBool::new(false)),
            part: None,
        },
        &mut |_| {},
    )
    .await
    .unwrap();
}

/// Run transaction `kind` once with the random stream `rng`.
async fn exec(c: &mut TpccClient, s: &mut Session, kind: Kind, rng: &mut Rng) {
    let mut cx = TxnContext {
        rng,
        timer: &mut NoTimer,
        mode: QueryMode::Prepared,
        sleep: &mut NoSleep,
    };
    c.execute(kind as usize, s, &mut cx)
        .await
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    assert_eq!(
        s.transaction_status(),
        b'I',
        "{kind:?} left a transaction open"
    );
}

async fn i64s(cfg: &ConnConfig, sql: &str) -> Vec<i64> {
    query(cfg, sql)
        .await
        .into_iter()
        .flatten()
        .map(|v| v.unwrap_or_default().parse::<f64>().unwrap() as i64)
        .collect()
}

/// (quantity, YTD, order count, remote count) of item `item` of warehouse `sw` in `table`
/// (`stock`, or the copy taken before the run).
async fn stock_row(cfg: &ConnConfig, table: &str, sw: i64, item: i64) -> (i64, i64, i64, i64) {
    let v = i64s(
        cfg,
        &format!(
            "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM {table} \
             WHERE s_w_id = {sw} AND s_i_id = {item}"
        ),
    )
    .await;
    (v[0], v[1], v[2], v[3])
}

/// Cents of a numeric column, exactly.
async fn cents(cfg: &ConnConfig, sql: &str) -> i64 {
    scalar_i64(cfg, &format!("SELECT (({sql}) * 100)::bigint")).await
}

async fn conditions_hold(cfg: &ConnConfig, when: &str) {
    let mut s = Session::connect(cfg).await.unwrap();
    let cs = consistency::check(&mut s).await.unwrap();
    s.close().await;
    assert_eq!(cs.len(), 12);
    for c in cs {
        assert!(
            c.holds(),
            "{when}: {} ({}) violated by {} rows",
            c.clause,
            c.rule,
            c.violations
        );
    }
}

#[test]
fn transactions_have_their_specified_effects() {
    rt().block_on(async {
        let cfg = database("tpcc_effects").await;
        load(&cfg, 2).await;
        conditions_hold(&cfg, "after the load").await;
        let w = workload(2);
        let mut s = Session::connect(&cfg).await.unwrap();
        let mut c = w.new_client(0); // home warehouse 1, Stock-Level district 1
        c.on_connect(&mut s, QueryMode::Prepared).await.unwrap();

        new_order(&cfg, &w, &mut c, &mut s).await;
        payment(&cfg, &w, &mut c, &mut s).await;
        delivery(&cfg, &mut c, &mut s).await;
        read_only(&cfg, &mut c, &mut s).await;
        s.close().await;
        conditions_hold(&cfg, "after the transactions").await;
    });
}

/// New-Order's inputs drawn as the transaction draws them (clause 2.4.1, with two warehouses):
/// whether it rolls back.
fn new_order_draws(r: &mut Rng) -> bool {
    r.uniform(1, 10);
    spec::customer_id(r, &C);
    let lines = r.uniform(5, 15);
    let rollback = r.uniform(1, 100) == 1;
    for i in 0..lines {
        if !(rollback && i == lines - 1) {
            spec::item_id(r, &C);
        }
        if r.uniform(1, 100) == 1 {
            r.uniform(1, 1);
        }
        r.uniform(1, 10);
    }
    rollback
}

/// Clause 2.4.2.2 on 100 New-Orders: the district's next id, one ORDER, NEW-ORDER and O_OL_CNT
/// lines each, each line's stock rule, amount and district info; the rolled-back ones leave
/// nothing and reach the server as rollbacks.
async fn new_order(cfg: &ConnConfig, w: &Tpcc, c: &mut TpccClient, s: &mut Session) {
    query(cfg, "CREATE TABLE stock_before AS SELECT * FROM stock").await;
    let next_before = i64s(
        cfg,
        "SELECT sum(d_next_o_id) FROM district WHERE d_w_id = 1",
    )
    .await[0];
    let rollbacks_before = scalar_i64(
        cfg,
        "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()",
    )
    .await;
    // A seed whose 100 New-Orders include rollbacks, found by replaying the inputs' draws.
    let n = 100u64;
    let rolled = |seed: u64| {
        let mut r = Rng::from_seed(seed);
        (0..n).filter(|_| new_order_draws(&mut r)).count() as u64
    };
    let seed = (0..).find(|&s| rolled(s) >= 2).unwrap();
    let expected_rollbacks = rolled(seed);
    let mut rng = Rng::from_seed(seed);
    for _ in 0..n {
        exec(c, s, Kind::NewOrder, &mut rng).await;
    }
    let rollbacks = w.counters().rollbacks.load(Ordering::Relaxed);
    assert_eq!(rollbacks, expected_rollbacks);
    let committed = n - rollbacks;
    // Each committed New-Order took one order id; rolled-back ones took none.
    let next_after = i64s(
        cfg,
        "SELECT sum(d_next_o_id) FROM district WHERE d_w_id = 1",
    )
    .await[0];
    assert_eq!((next_after - next_before) as u64, committed);
    let orders = i64s(
        cfg,
        "SELECT count(*), coalesce(sum(o_ol_cnt), 0) FROM orders WHERE o_w_id = 1 AND o_id > 3000",
    )
    .await;
    assert_eq!(orders[0] as u64, committed);
    let lines = i64s(
        cfg,
        "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_o_id > 3000",
    )
    .await[0];
    assert_eq!(lines, orders[1], "O_OL_CNT = the order's lines");
    assert_eq!(
        i64s(
            cfg,
            "SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_o_id > 3000"
        )
        .await[0] as u64,
        committed
    );
    assert_eq!(
        i64s(
            cfg,
            "SELECT count(*) FROM order_line WHERE ol_i_id > 100000"
        )
        .await[0],
        0,
        "the unused item never reaches ORDER-LINE"
    );
    // Every line: OL_AMOUNT = OL_QUANTITY * I_PRICE, OL_DIST_INFO = S_DIST_xx of the district,
    // no delivery date, lines numbered 1..O_OL_CNT, all-local flag consistent.
    let bad = i64s(
        cfg,
        "SELECT count(*) FROM order_line JOIN item ON i_id = ol_i_id \
         JOIN stock_before ON s_w_id = ol_supply_w_id AND s_i_id = ol_i_id \
         JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
         WHERE ol_w_id = 1 AND ol_o_id > 3000 AND (ol_amount <> ol_quantity * i_price \
         OR ol_dist_info <> (ARRAY[s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, \
         s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10])[ol_d_id] \
         OR ol_delivery_d IS NOT NULL OR ol_number NOT BETWEEN 1 AND o_ol_cnt \
         OR ol_quantity NOT BETWEEN 1 AND 10 \
         OR (o_all_local = 1 AND ol_supply_w_id <> ol_w_id))",
    )
    .await[0];
    assert_eq!(bad, 0, "order lines that break clause 2.4.2.2");
    // The stock rule, replayed line by line in the order the transactions ran: quantity drops
    // by OL_QUANTITY when that leaves 10 or more, else also rises by 91; YTD grows by it, the
    // order count by one, the remote count when the line is remote.
    let rows = query(
        cfg,
        "SELECT ol_supply_w_id, ol_i_id, ol_quantity, ol_w_id FROM order_line \
         JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
         WHERE ol_w_id = 1 AND ol_o_id > 3000 ORDER BY o_entry_d, ol_number",
    )
    .await;
    let mut expect: std::collections::BTreeMap<(i64, i64), (i64, i64, i64, i64)> =
        Default::default();
    for r in &rows {
        let v: Vec<i64> = r
            .iter()
            .map(|x| x.as_deref().unwrap().parse().unwrap())
            .collect();
        let (sw, item, qty, home) = (v[0], v[1], v[2], v[3]);
        let e = match expect.get(&(sw, item)) {
            Some(e) => *e,
            None => stock_row(cfg, "stock_before", sw, item).await,
        };
        let q = if e.0 - qty >= 10 {
            e.0 - qty
        } else {
            e.0 - qty + 91
        };
        expect.insert(
            (sw, item),
            (q, e.1 + qty, e.2 + 1, e.3 + i64::from(sw != home)),
        );
    }
    for (&(sw, item), e) in &expect {
        let a = stock_row(cfg, "stock", sw, item).await;
        assert_eq!(a, *e, "stock ({sw}, {item})");
    }
    let changed = i64s(
        cfg,
        "SELECT count(*) FROM stock s JOIN stock_before b USING (s_w_id, s_i_id) \
         WHERE s.s_quantity <> b.s_quantity OR s.s_ytd <> b.s_ytd",
    )
    .await[0];
    assert_eq!(
        changed as usize,
        expect.len(),
        "only the ordered items' stock changed"
    );
    // The rollbacks reached the server: a session's statistics are flushed when it ends, so
    // the session is replaced and the count read until it arrives.
    let old = std::mem::replace(s, Session::connect(cfg).await.unwrap());
    old.close().await;
    c.on_connect(s, QueryMode::Prepared).await.unwrap();
    let mut seen = 0;
    for _ in 0..200 {
        seen = scalar_i64(
            cfg,
            "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()",
        )
        .await
            - rollbacks_before;
        if seen as u64 >= rollbacks {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(seen as u64, rollbacks, "rollbacks the server saw");
    query(cfg, "DROP TABLE stock_before").await;
}

/// Clause 2.5.2.2 on 80 Payments: the warehouse's and district's YTD grow by the amount, the
/// customer's balance falls by it, YTD payment and payment count grow, a bad-credit customer's
/// C_DATA gets the payment's ids in front, H_DATA names the warehouse and district; a
/// customer chosen by last name is the middle one by first name.
async fn payment(cfg: &ConnConfig, w: &Tpcc, c: &mut TpccClient, s: &mut Session) {
    query(
        cfg,
        "CREATE TABLE customer_before AS SELECT * FROM customer",
    )
    .await;
    let mut rng = Rng::from_seed(5);
    let by_name_before = w.counters().by_last_name.load(Ordering::Relaxed);
    let mut by_name = 0;
    for _ in 0..80 {
        // Inputs in the transaction's order: district, home/remote, by-name, name or id.
        let mut peek = rng.clone();
        let d = peek.uniform(1, 10);
        let home = peek.uniform(1, 100) <= 85;
        let (cw, cd) = if home {
            (1, d)
        } else {
            peek.uniform(1, 1); // the other warehouse: the only one
            (2, peek.uniform(1, 10))
        };
        let named = peek.uniform(1, 100) <= 60;
        let expected_c = if named {
            let n = spec::last_name_number(&mut peek, &C);
            let mut last = String::new();
            spec::last_name(n as u32, &mut last);
            let ids = i64s(
                cfg,
                &format!(
                    "SELECT c_id FROM customer WHERE c_w_id = {cw} AND c_d_id = {cd} \
                     AND c_last = '{last}' ORDER BY c_first"
                ),
            )
            .await;
            by_name += 1;
            ids[ids.len().div_ceil(2) - 1] // position n/2 rounded up
        } else {
            spec::customer_id(&mut peek, &C)
        };
        let amount = peek.uniform(100, 500_000);
        let wytd = cents(cfg, "SELECT w_ytd FROM warehouse WHERE w_id = 1").await;
        let dytd = cents(
            cfg,
            &format!("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = {d}"),
        )
        .await;
        let key = format!("c_w_id = {cw} AND c_d_id = {cd} AND c_id = {expected_c}");
        let bal = cents(cfg, &format!("SELECT c_balance FROM customer WHERE {key}")).await;
        let ytdp = cents(
            cfg,
            &format!("SELECT c_ytd_payment FROM customer WHERE {key}"),
        )
        .await;
        let cnt = scalar_i64(
            cfg,
            &format!("SELECT c_payment_cnt FROM customer WHERE {key}"),
        )
        .await;
        let hist = scalar_i64(cfg, "SELECT count(*) FROM history").await;

        exec(c, s, Kind::Payment, &mut rng).await;

        assert_eq!(
            cents(cfg, "SELECT w_ytd FROM warehouse WHERE w_id = 1").await,
            wytd + amount
        );
        assert_eq!(
            cents(
                cfg,
                &format!("SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = {d}")
            )
            .await,
            dytd + amount
        );
        assert_eq!(
            cents(cfg, &format!("SELECT c_balance FROM customer WHERE {key}")).await,
            bal - amount
        );
        assert_eq!(
            cents(
                cfg,
                &format!("SELECT c_ytd_payment FROM customer WHERE {key}")
            )
            .await,
            ytdp + amount
        );
        assert_eq!(
            scalar_i64(
                cfg,
                &format!("SELECT c_payment_cnt FROM customer WHERE {key}")
            )
            .await,
            cnt + 1
        );
        assert_eq!(
            scalar_i64(cfg, "SELECT count(*) FROM history").await,
            hist + 1
        );
        let h = query(
            cfg,
            &format!(
                "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, (h_amount * 100)::bigint, \
                 h_data = (SELECT w_name FROM warehouse WHERE w_id = 1) || '    ' || \
                 (SELECT d_name FROM district WHERE d_w_id = 1 AND d_id = {d}) \
                 FROM history WHERE h_date IS NOT NULL ORDER BY h_date DESC LIMIT 1"
            ),
        )
        .await;
        let h: Vec<String> = h[0].iter().map(|v| v.clone().unwrap()).collect();
        assert_eq!(
            h,
            [
                expected_c.to_string(),
                cd.to_string(),
                cw.to_string(),
                d.to_string(),
                "1".into(),
                amount.to_string(),
                "t".into()
            ]
        );
        // Bad credit: C_DATA = "C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT | " + old, at most 500.
        let credit = query(cfg, &format!("SELECT c_credit FROM customer WHERE {key}")).await;
        let data_ok = if credit[0][0].as_deref() == Some("BC") {
            format!(
                "SELECT c.c_data = left('{expected_c} {cd} {cw} {d} 1 ' || ({amount} / 100.0)::numeric(6,2) \
                 || ' | ' || b.c_data, 500) FROM customer c JOIN customer_before b \
                 USING (c_w_id, c_d_id, c_id) WHERE c.{key}",
                key = key.replace(" AND ", " AND c.")
            )
        } else {
            format!(
                "SELECT c.c_data = b.c_data FROM customer c JOIN customer_before b \
                 USING (c_w_id, c_d_id, c_id) WHERE c.{}",
                key.replace(" AND ", " AND c.")
            )
        };
        // The comparison is made on the text the server built from the same numeric, so an
        // amount like 12.50 reads the same on both sides.
        let ok = query(cfg, &data_ok).await;
        assert_eq!(ok[0][0].as_deref(), Some("t"), "C_DATA of {key}");
        query(
            cfg,
            &format!(
                "UPDATE customer_before b SET c_data = c.c_data FROM customer c \
                 WHERE b.c_w_id = c.c_w_id AND b.c_d_id = c.c_d_id AND b.c_id = c.c_id \
                 AND c.{}",
                key.replace(" AND ", " AND c.")
            ),
        )
        .await;
    }
    assert_eq!(
        w.counters().by_last_name.load(Ordering::Relaxed) - by_name_before,
        by_name
    );
    assert!(
        by_name > 30 && by_name < 65,
        "about 60% by last name: {by_name} of 80"
    );
    query(cfg, "DROP TABLE customer_before").await;
}

/// Clause 2.7.4.2: each district's oldest NEW-ORDER row goes, its order gets the carrier, its
/// lines the delivery date, its customer the lines' total and one more delivery.
async fn delivery(cfg: &ConnConfig, c: &mut TpccClient, s: &mut Session) {
    let oldest = i64s(
        cfg,
        "SELECT min(no_o_id) FROM new_order WHERE no_w_id = 1 GROUP BY no_d_id ORDER BY no_d_id",
    )
    .await;
    assert_eq!(oldest.len(), 10);
    let mut before = Vec::new();
    for (i, o) in oldest.iter().enumerate() {
        let d = i + 1;
        let cust = scalar_i64(
            cfg,
            &format!("SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = {d} AND o_id = {o}"),
        )
        .await;
        let key = format!("c_w_id = 1 AND c_d_id = {d} AND c_id = {cust}");
        let sum = cents(
            cfg,
            &format!(
                "SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = {d} \
                 AND ol_o_id = {o}"
            ),
        )
        .await;
        let bal = cents(cfg, &format!("SELECT c_balance FROM customer WHERE {key}")).await;
        let cnt = scalar_i64(
            cfg,
            &format!("SELECT c_delivery_cnt FROM customer WHERE {key}"),
        )
        .await;
        before.push((d, *o, key, sum, bal, cnt));
    }
    let mut rng = Rng::from_seed(8);
    let carrier = rng.clone().uniform(1, 10);
    exec(c, s, Kind::Delivery, &mut rng).await;
    for (d, o, key, sum, bal, cnt) in before {
        assert_eq!(
            scalar_i64(
                cfg,
                &format!("SELECT count(*) FROM new_order WHERE no_w_id = 1 AND no_d_id = {d} AND no_o_id = {o}")
            )
            .await,
            0
        );
        assert_eq!(
            scalar_i64(
                cfg,
                &format!("SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = {d} AND o_id = {o}")
            )
            .await,
            carrier
        );
        assert_eq!(
            scalar_i64(
                cfg,
                &format!(
                    "SELECT count(*) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = {d} \
                     AND ol_o_id = {o} AND ol_delivery_d IS NULL"
                )
            )
            .await,
            0
        );
        assert_eq!(
            cents(cfg, &format!("SELECT c_balance FROM customer WHERE {key}")).await,
            bal + sum
        );
        assert_eq!(
            scalar_i64(
                cfg,
                &format!("SELECT c_delivery_cnt FROM customer WHERE {key}")
            )
            .await,
            cnt + 1
        );
    }
}

/// Order-Status and Stock-Level change nothing: the tables' contents are the same after 50 of
/// each.
async fn read_only(cfg: &ConnConfig, c: &mut TpccClient, s: &mut Session) {
    let digest = "SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM (\
        SELECT c_id, c_d_id, c_w_id, c_balance, c_data FROM customer UNION ALL \
        SELECT s_i_id, s_w_id, s_quantity, s_ytd, s_data FROM stock) t";
    let before = query(cfg, digest).await;
    let mut rng = Rng::from_seed(13);
    for _ in 0..50 {
        exec(c, s, Kind::OrderStatus, &mut rng).await;
        exec(c, s, Kind::StockLevel, &mut rng).await;
    }
    assert_eq!(query(cfg, digest).await, before);
}
