//! `init tpcc` against a real server: one private server for this test binary, one database per
//! test. The data is checked against TPC-C 5.11 itself — clause 4.3.1's cardinalities, clause
//! 3.3.2's consistency conditions written here in SQL, clause 4.3.3.1's fields — against
//! go-tpc's catalog (a snapshot of what `go-tpc tpcc prepare` creates) and against
//! `go-tpc tpcc check` itself (`testkit::go_tpc`).

mod common;

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use common::rt;
use load::tpcc::{self, InitOptions, InitReport, TABLES};
use load::LoadError;
use sut::{ConnConfig, Session};
use testkit::{query, scalar, PerBinary, Pg, THROWAWAY};
use workload::tpcc::spec::{valid_delta, NuC};

fn fixture() -> &'static Pg {
    // Small (several test binaries may run at once) and not durable (nothing must survive).
    static PG: PerBinary = PerBinary::new(&[
        THROWAWAY,
        &[
            ("shared_buffers", "128MB"),
            ("max_connections", "100"),
            ("maintenance_work_mem", "64MB"),
        ],
    ]);
    PG.get()
}

/// Load `opts` into a fresh database `name`.
async fn load(name: &str, opts: &InitOptions) -> (ConnConfig, InitReport) {
    let cfg = fixture().fresh_database(name).await;
    let report = tpcc::init(&cfg.clone().into(), opts, &mut |_| {})
        .await
        .unwrap_or_else(|e| panic!("init {name}: {e}"));
    (cfg, report)
}

const SEED: u64 = 42;

/// Two warehouses, seed 42, loaded once for the tests that only read them, with three
/// connections (so the big tables are cut into warehouse ranges).
fn two_warehouses() -> &'static (ConnConfig, InitReport) {
    static LOADED: OnceLock<(ConnConfig, InitReport)> = OnceLock::new();
    LOADED.get_or_init(|| {
        rt().block_on(load(
            "two_warehouses",
            &InitOptions {
                warehouses: 2,
                seed: SEED,
                jobs: 3,
                ..Default::default()
            },
        ))
    })
}

/// Each SQL returns one row; all its values must be `t` (for "true").
async fn assert_all_true(cfg: &ConnConfig, what: &str, sqls: &[(&str, &str)]) {
    for (name, sql) in sqls {
        let rows = query(cfg, sql).await;
        assert!(!rows.is_empty(), "{what} {name}: no rows");
        for row in &rows {
            for v in row {
                assert_eq!(v.as_deref(), Some("t"), "{what} {name}: {sql}\n{rows:?}");
            }
        }
    }
}

#[test]
fn two_warehouses_have_clause_4_3_1_cardinalities() {
    let (cfg, report) = two_warehouses();
    rt().block_on(async {
        // Per warehouse: 10 districts, 30,000 customers, history rows and orders, 9,000 new
        // orders, 100,000 stock; order lines as many as the orders' o_ol_cnt; 100,000 items.
        let per_w = query(
            cfg,
            "select w_id, \
               (select count(*) from district where d_w_id = w_id), \
               (select count(*) from customer where c_w_id = w_id), \
               (select count(*) from history where h_w_id = w_id), \
               (select count(*) from orders where o_w_id = w_id), \
               (select count(*) from new_order where no_w_id = w_id), \
               (select count(*) from stock where s_w_id = w_id), \
               (select count(*) from order_line where ol_w_id = w_id) \
                 = (select sum(o_ol_cnt) from orders where o_w_id = w_id) \
             from warehouse order by w_id",
        )
        .await;
        let want = |w: &str| {
            [w, "10", "30000", "30000", "30000", "9000", "100000", "t"]
                .map(|s| Some(s.to_string()))
                .to_vec()
        };
        assert_eq!(per_w, vec![want("1"), want("2")]);
        assert_eq!(scalar(cfg, "select count(*) from item").await, "100000");
        // The report counts what the server holds, table by table.
        for (t, n) in TABLES.iter().zip(&report.rows) {
            assert_eq!(
                scalar(cfg, &format!("select count(*) from {t}")).await,
                n.to_string(),
                "{t}"
            );
        }
        let steps: Vec<&str> = report.timings.steps.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            steps,
            [
                "drop tables",
                "create tables",
                "client-side generate",
                "primary keys",
                "vacuum"
            ]
        );
        // Small tables kept COPY FREEZE; big ones were cut into warehouse ranges.
        assert!(
            report.frozen_tasks > 0 && report.plain_tasks > 0,
            "{report:?}"
        );
        assert!(!report.freeze_refused);
    });
}

/// Clause 3.3.2's consistency conditions, all twelve, as they hold right after loading.
#[test]
fn loaded_data_meets_consistency_conditions_3_3_2_1_to_12() {
    let (cfg, _) = two_warehouses();
    rt().block_on(async {
        let conditions = [
            // 1: W_YTD = sum(D_YTD).
            (
                "3.3.2.1",
                "select bool_and(w_ytd = (select sum(d_ytd) from district where d_w_id = w_id)) from warehouse",
            ),
            // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district.
            (
                "3.3.2.2",
                "select bool_and(d_next_o_id - 1 = (select max(o_id) from orders where o_w_id = d_w_id and o_d_id = d_id) \
                       and d_next_o_id - 1 = (select max(no_o_id) from new_order where no_w_id = d_w_id and no_d_id = d_id)) \
                 from district",
            ),
            // 3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(*) of NEW-ORDER per district.
            (
                "3.3.2.3",
                "select bool_and(mx - mn + 1 = n), count(*) = 20 from \
                 (select max(no_o_id) mx, min(no_o_id) mn, count(*) n from new_order group by no_w_id, no_d_id) x",
            ),
            // 4: sum(O_OL_CNT) = count(*) of ORDER-LINE per district.
            (
                "3.3.2.4",
                "select bool_and(s = (select count(*) from order_line where ol_w_id = o_w_id and ol_d_id = o_d_id)), count(*) = 20 \
                 from (select o_w_id, o_d_id, sum(o_ol_cnt) s from orders group by 1, 2) x",
            ),
            // 5: O_CARRIER_ID is null exactly for the orders with a NEW-ORDER row.
            (
                "3.3.2.5",
                "select bool_and((o_carrier_id is null) = (no_o_id is not null)) from orders \
                 left join new_order on no_w_id = o_w_id and no_d_id = o_d_id and no_o_id = o_id",
            ),
            // 6: O_OL_CNT = the order's number of ORDER-LINE rows.
            (
                "3.3.2.6",
                "select bool_and(o_ol_cnt = coalesce(n, 0)) from orders left join \
                 (select ol_w_id, ol_d_id, ol_o_id, count(*) n from order_line group by 1, 2, 3) l \
                 on ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id",
            ),
            // 7: OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is.
            (
                "3.3.2.7",
                "select bool_and((ol_delivery_d is null) = (o_carrier_id is null)) from order_line \
                 join orders on o_w_id = ol_w_id and o_d_id = ol_d_id and o_id = ol_o_id",
            ),
            // 8: W_YTD = sum(H_AMOUNT).
            (
                "3.3.2.8",
                "select bool_and(w_ytd = (select sum(h_amount) from history where h_w_id = w_id)) from warehouse",
            ),
            // 9: D_YTD = sum(H_AMOUNT) per district.
            (
                "3.3.2.9",
                "select bool_and(d_ytd = (select sum(h_amount) from history where h_w_id = d_w_id and h_d_id = d_id)) from district",
            ),
            // 10: C_BALANCE = sum(OL_AMOUNT of delivered lines) - sum(H_AMOUNT).
            (
                "3.3.2.10",
                "select bool_and(c_balance = coalesce(ol, 0) - coalesce(h, 0)), count(*) = 60000 from customer \
                 left join (select o_w_id, o_d_id, o_c_id, sum(ol_amount) ol from orders join order_line \
                   on ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id where ol_delivery_d is not null group by 1, 2, 3) d \
                   on o_w_id = c_w_id and o_d_id = c_d_id and o_c_id = c_id \
                 left join (select h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) h from history group by 1, 2, 3) hh \
                   on h_c_w_id = c_w_id and h_c_d_id = c_d_id and h_c_id = c_id",
            ),
            // 11: count(ORDER) - count(NEW-ORDER) = 2100 per district.
            (
                "3.3.2.11",
                "select bool_and((select count(*) from orders where o_w_id = d_w_id and o_d_id = d_id) \
                     - (select count(*) from new_order where no_w_id = d_w_id and no_d_id = d_id) = 2100) from district",
            ),
            // 12: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered lines).
            (
                "3.3.2.12",
                "select bool_and(c_balance + c_ytd_payment = coalesce(ol, 0)) from customer \
                 left join (select o_w_id, o_d_id, o_c_id, sum(ol_amount) ol from orders join order_line \
                   on ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id where ol_delivery_d is not null group by 1, 2, 3) d \
                   on o_w_id = c_w_id and o_d_id = c_d_id and o_c_id = c_id",
            ),
        ];
        assert_all_true(cfg, "consistency condition", &conditions).await;
        // Not vacuous: undelivered orders have amounts, so condition 10 would see a wrong one.
        assert_eq!(
            scalar(cfg, "select count(*) > 0 from order_line where ol_amount > 0 and ol_delivery_d is null").await,
            "t"
        );
    });
}

#[test]
fn fields_follow_clause_4_3_3_1() {
    let (cfg, report) = two_warehouses();
    rt().block_on(async {
        let syllables = "(array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])";
        let name_of = |n: &str| {
            format!("{syllables}[{n} / 100 + 1] || {syllables}[{n} / 10 % 10 + 1] || {syllables}[{n} % 10 + 1]")
        };
        let checks = [
            // C_LAST of c_id 1..1000 is the name of c_id - 1 (4.3.2.3); the others are names too.
            (
                "c_last",
                format!(
                    "select bool_and(c_last = {}), count(*) = 20000 from customer where c_id <= 1000",
                    name_of("(c_id - 1)")
                ),
            ),
            (
                "c_last NURand",
                format!(
                    "select bool_and(c_last in (select {} from generate_series(0, 999) n)), \
                     count(distinct c_last) > 500 from customer where c_id > 1000",
                    name_of("n")
                ),
            ),
            // O_C_ID: a permutation of 1..3000 in every district, not the identity.
            (
                "o_c_id",
                "select bool_and(n = 3000 and mn = 1 and mx = 3000), bool_and(same < 30), count(*) = 20 from \
                 (select count(distinct o_c_id) n, min(o_c_id) mn, max(o_c_id) mx, count(*) filter (where o_c_id = o_id) same \
                  from orders group by o_w_id, o_d_id) x"
                    .into(),
            ),
            // ORIGINAL in about 10% of I_DATA and of each warehouse's S_DATA.
            (
                "i_data",
                "select avg((i_data like '%ORIGINAL%')::int) between 0.09 and 0.11, \
                        bool_and(length(i_data) between 26 and 50) from item"
                    .into(),
            ),
            (
                "s_data",
                "select bool_and(o between 0.09 and 0.11) from (select avg((s_data like '%ORIGINAL%')::int) o \
                 from stock where length(s_data) between 26 and 50 group by s_w_id having count(*) = 100000) x"
                    .into(),
            ),
            // C_CREDIT "BC" for about 10%, the constants, the ranges.
            (
                "customer",
                "select avg((c_credit = 'BC')::int) between 0.09 and 0.11, \
                        bool_and(c_credit in ('GC', 'BC') and c_middle = 'OE' and c_credit_lim = 50000 \
                          and c_balance = -10 and c_ytd_payment = 10 and c_payment_cnt = 1 and c_delivery_cnt = 0), \
                        min(c_discount) >= 0 and max(c_discount) <= 0.5 and max(c_discount) > 0.45, \
                        bool_and(length(c_data) between 300 and 500 and length(c_first) between 8 and 16 \
                          and length(c_phone) = 16 and c_zip like '____11111'), \
                        count(distinct c_since) = 1 from customer"
                    .into(),
            ),
            (
                "warehouse, district",
                "select bool_and(w_ytd = 300000 and w_tax between 0 and 0.2 and length(w_name) between 6 and 10), \
                        (select bool_and(d_ytd = 30000 and d_next_o_id = 3001 and d_tax between 0 and 0.2) from district) \
                 from warehouse"
                    .into(),
            ),
            (
                "history",
                "select bool_and(h_amount = 10 and length(h_data) between 12 and 24 and h_c_w_id = h_w_id \
                   and h_c_d_id = h_d_id), count(distinct h_date) = 1 from history"
                    .into(),
            ),
            (
                "orders",
                "select bool_and(o_ol_cnt between 5 and 15 and o_all_local = 1), \
                        bool_and((o_carrier_id between 1 and 10) = (o_id < 2101)), \
                        bool_and((o_carrier_id is null) = (o_id >= 2101)), \
                        avg(o_ol_cnt) between 9.8 and 10.2 from orders"
                    .into(),
            ),
            (
                "order_line",
                "select bool_and(ol_i_id between 1 and 100000 and ol_supply_w_id = ol_w_id and ol_quantity = 5 \
                          and length(ol_dist_info) = 24), \
                        bool_and(case when ol_o_id < 2101 then ol_amount = 0 and ol_delivery_d is not null \
                                 else ol_amount between 0.01 and 9999.99 and ol_delivery_d is null end), \
                        max(ol_amount) > 9000 from order_line"
                    .into(),
            ),
            (
                "stock, item",
                "select bool_and(s_quantity between 10 and 100 and s_ytd = 0 and s_order_cnt = 0 and s_remote_cnt = 0 \
                          and length(s_dist_01) = 24 and length(s_dist_10) = 24), \
                        (select bool_and(i_im_id between 1 and 10000 and i_price between 1 and 100 \
                           and length(i_name) between 14 and 24) from item) from stock"
                    .into(),
            ),
        ];
        let checks: Vec<(&str, &str)> = checks.iter().map(|(n, s)| (*n, s.as_str())).collect();
        assert_all_true(cfg, "clause 4.3.3.1", &checks).await;
        // One load time everywhere.
        assert_eq!(
            scalar(
                cfg,
                "select count(distinct t) from (select c_since t from customer union select h_date from history \
                 union select o_entry_d from orders union select ol_delivery_d from order_line where ol_delivery_d is not null) x"
            )
            .await,
            "1"
        );
        // The C_LAST of c_id > 1000 follow NURand(255, 0, 999) with the recorded C: with the
        // same C, a name's share is its NURand probability, so the most frequent names are those
        // whose number n has (n - C) mod 1000 with many bits set.
        let c = report.constants.last;
        let top = scalar(
            cfg,
            &format!(
                "select avg(length(replace(((((n - {c}) % 1000 + 1000) % 1000)::bit(10))::text, '0', ''))) from \
                 (select n from (select c_last, count(*) k from customer where c_id > 1000 group by 1) x \
                  join (select n, {} nm from generate_series(0, 999) n) y on nm = c_last order by k desc limit 50) z",
                name_of("n")
            ),
        )
        .await;
        let bits: f64 = top.parse().unwrap();
        // Uniform names would average 5 bits of 10.
        assert!(bits > 6.5, "mean set bits of the 50 most frequent names: {bits}");
    });
}

/// A table's rows as one md5, without the load time (it differs between loads; one value per
/// load is checked elsewhere) — but with whether `ol_delivery_d` is null.
fn md5_sql(table: &str) -> String {
    let cols: Vec<String> = tpcc::Table::ALL
        .iter()
        .find(|t| t.name() == table)
        .unwrap()
        .columns()
        .split(", ")
        .map(|c| match c {
            "c_since" | "h_date" | "o_entry_d" => "0".to_string(),
            "ol_delivery_d" => "(ol_delivery_d is null)".to_string(),
            c => c.to_string(),
        })
        .collect();
    format!(
        "select count(*), md5(string_agg(r, E'\\n' order by r)) from \
         (select row({})::text r from {table}) x",
        cols.join(", ")
    )
}

#[test]
fn the_same_seed_loads_the_same_rows_whatever_the_jobs() {
    let (cut, _) = two_warehouses();
    rt().block_on(async {
        let opts = InitOptions {
            warehouses: 2,
            seed: SEED,
            jobs: 1,
            no_vacuum: true,
            ..Default::default()
        };
        let (one, report) = load("one_job", &opts).await;
        // One connection: every table one COPY FREEZE.
        assert_eq!(
            (report.frozen_tasks, report.plain_tasks),
            (9, 0),
            "{report:?}"
        );
        for t in TABLES {
            let sql = md5_sql(t);
            assert_eq!(query(cut, &sql).await, query(&one, &sql).await, "{t}");
        }
        // Another seed, other rows (and other constants).
        let (other, r2) = load(
            "other_seed",
            &InitOptions {
                seed: SEED + 1,
                warehouses: 1,
                ..opts
            },
        )
        .await;
        assert_ne!(r2.constants, report.constants);
        let sql = md5_sql("item");
        assert_ne!(query(&other, &sql).await, query(&one, &sql).await);
    });
}

/// The snapshot of go-tpc's catalog (tests/testdata), compared line by line.
#[test]
fn catalog_is_go_tpc_s_and_constants_are_recorded() {
    let (cfg, report) = two_warehouses();
    rt().block_on(async {
        let columns = query(
            cfg,
            "select c.relname || ': ' || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) \
                || case when a.attnotnull then ' not null' else '' end \
                || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' order by a.attnum) \
             from pg_class c join pg_attribute a on a.attrelid = c.oid \
             left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum \
             where c.relnamespace = 'public'::regnamespace and c.relkind = 'r' and a.attnum > 0 \
               and not a.attisdropped group by c.relname order by 1",
        )
        .await;
        let constraints = query(
            cfg,
            "select conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) \
             from pg_constraint where connamespace = 'public'::regnamespace order by 1",
        )
        .await;
        let indexes = query(
            cfg,
            "select indexdef from pg_indexes where schemaname = 'public' order by indexname",
        )
        .await;
        let ours: Vec<String> = [columns, constraints, indexes]
            .concat()
            .into_iter()
            .map(|r| r[0].clone().unwrap())
            .collect();
        let theirs: Vec<&str> =
            include_str!("testdata/go-tpc-1.0.12-postgres-catalog.txt")
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect();
        assert_eq!(ours, theirs);

        let mut s = Session::connect(cfg).await.unwrap();
        assert_eq!(tpcc::warehouses(&mut s).await.unwrap(), 2);
        assert_eq!(tpcc::existing_tables(&mut s).await.unwrap(), TABLES.to_vec());
        let c = tpcc::load_constants(&mut s).await.unwrap();
        assert_eq!(c, Some(report.constants));
        assert_eq!(report.constants, load::tpcc::rows::constants_for_seed(SEED));
        let comment = scalar(cfg, "select obj_description('customer'::regclass, 'pg_class')").await;
        assert!(comment.contains(&format!(" seed={SEED} loaded=")), "{comment}");
        // A run's C_LAST keeps clause 2.1.6.1's distance from the recorded one.
        let mut r = workload::Rng::from_seed(1);
        let run = NuC::for_run(&c.unwrap(), &mut r);
        assert!(valid_delta(run.last, report.constants.last));
        s.close().await;
    });
}

#[test]
fn go_tpc_check_passes_on_one_warehouse() {
    let Some(go_tpc) = testkit::go_tpc() else {
        return;
    };
    rt().block_on(async {
        load(
            "go_tpc_check",
            &InitOptions {
                warehouses: 1,
                seed: 7,
                jobs: 2,
                ..Default::default()
            },
        )
        .await;
    });
    let pg = fixture();
    // A unix socket: lib/pq takes its directory as the `host` parameter. go-tpc writes each
    // target `HOST:PORT` (from -H and -P) into a URL, postgres://user:@HOST:PORT/db?PARAMS, so
    // HOST must be empty there (a path would become the URL's path, and lib/pq sorts the URL's
    // settings, so any other HOST would override the parameter); -H "" gives no target at all,
    // hence go-tpc's (hidden) --targets flag with ":PORT".
    let params = format!("sslmode=disable&host={}", pg.socket_dir().display());
    let out = Command::new(go_tpc)
        .args([
            "tpcc",
            "check",
            "--check-all",
            "--warehouses",
            "1",
            "-d",
            "postgres",
        ])
        .args(["--targets", &format!(":{}", pg.port())])
        .args([
            "-D",
            "go_tpc_check",
            "-U",
            "postgres",
            "--conn-params",
            &params,
        ])
        .output()
        .expect("run go-tpc");
    let text = testkit::ok_text(&out, "go-tpc");
    // go-tpc prints a failed check and exits 0: read what it says.
    assert!(testkit::go_tpc_check_passed(&text), "{text}");
    for c in 1..=12 {
        assert!(
            text.contains(&format!("at condition 3.3.2.{c}\n")),
            "condition {c} not checked:\n{text}"
        );
    }
    assert!(text.contains("Finished"), "{text}");
}

#[test]
fn cancellation_leaves_no_tpcc_tables() {
    rt().block_on(async {
        let cfg = fixture().fresh_database("cancelled").await;
        let cancel = Arc::new(AtomicBool::new(false));
        let opts = InitOptions {
            warehouses: 2,
            jobs: 2,
            cancel: cancel.clone(),
            ..Default::default()
        };
        common::cancel_while_loading(
            &cancel,
            |tables| tables.iter().any(|t| t.rows_done > 0),
            async |on_event| tpcc::init(&cfg.clone().into(), &opts, on_event).await,
        )
        .await;
        let mut s = Session::connect(&cfg).await.unwrap();
        assert!(tpcc::existing_tables(&mut s).await.unwrap().is_empty());
        let e = tpcc::warehouses(&mut s).await.unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Missing {
                    table: "warehouse",
                    workload: "tpcc"
                }
            ),
            "{e}"
        );
        common::assert_no_loader_left(&mut s, "cancelled").await;
        s.close().await;
    });
}

#[test]
fn init_and_drop_touch_only_the_nine_tables() {
    rt().block_on(async {
        let cfg = fixture().fresh_database("untouched").await;
        query(
            &cfg,
            "create table keep_me(x int); insert into keep_me values (1); \
             create table customer_old(x int); \
             create schema other; create table other.customer(x int); insert into other.customer values (7); \
             create table item(x int); create view item_view as select * from item",
        )
        .await;
        // A view of someone else's on `item`: the drop fails (no CASCADE) and nothing is lost.
        let opts = InitOptions {
            no_vacuum: true,
            ..Default::default()
        };
        let e = tpcc::init(&cfg.clone().into(), &opts, &mut |_| {}).await.unwrap_err();
        assert_eq!(e.sqlstate(), Some("2BP01"), "{e}");
        assert_eq!(scalar(&cfg, "select count(*) from item_view").await, "0");

        query(&cfg, "drop view item_view").await;
        tpcc::init(&cfg.clone().into(), &opts, &mut |_| {}).await.unwrap();
        let left = query(
            &cfg,
            "select (select count(*) from keep_me), (select count(*) from customer_old), \
                    (select sum(x) from other.customer), (select count(*) from item)",
        )
        .await;
        assert_eq!(
            left[0],
            ["1", "0", "7", "100000"].map(|s| Some(s.to_string())).to_vec()
        );
        let mut s = Session::connect(&cfg).await.unwrap();
        tpcc::drop_tables(&mut s).await.unwrap();
        assert!(tpcc::existing_tables(&mut s).await.unwrap().is_empty());
        let left = query(
            &cfg,
            "select string_agg(relname, ',' order by relname) from pg_class c join pg_namespace n \
             on n.oid = relnamespace where relkind = 'r' and nspname in ('public', 'other')",
        )
        .await;
        assert_eq!(left[0][0].as_deref(), Some("customer,customer_old,keep_me"));
        s.close().await;
    });
}

#[test]
fn missing_tables_are_named_and_foreign_data_has_no_constants() {
    rt().block_on(async {
        let cfg = fixture().fresh_database("foreign_data").await;
        let mut s = Session::connect(&cfg).await.unwrap();
        let e = tpcc::warehouses(&mut s).await.unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Missing {
                    table: "warehouse",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("stampede init tpcc"), "{e}");
        let e = tpcc::load_constants(&mut s).await.unwrap_err();
        assert!(
            matches!(
                e,
                LoadError::Missing {
                    table: "customer",
                    ..
                }
            ),
            "{e}"
        );
        // Tables another tool loaded (go-tpc writes no comment), or commented otherwise.
        for t in load::tpcc::Table::ALL {
            s.simple_query(load::tpcc::ddl(t).create).await.unwrap();
        }
        s.simple_query("insert into warehouse (w_id) values (1), (2), (3)")
            .await
            .unwrap();
        assert_eq!(tpcc::warehouses(&mut s).await.unwrap(), 3);
        assert_eq!(tpcc::load_constants(&mut s).await.unwrap(), None);
        s.simple_query("comment on table customer is 'loaded by hand'")
            .await
            .unwrap();
        assert_eq!(tpcc::load_constants(&mut s).await.unwrap(), None);
        s.close().await;
    });
}

#[test]
fn invalid_options_fail_before_connecting() {
    rt().block_on(async {
        let nowhere = common::nowhere(fixture().conn_config());
        for opts in [
            InitOptions {
                warehouses: 0,
                ..Default::default()
            },
            InitOptions {
                jobs: 0,
                ..Default::default()
            },
        ] {
            let e = tpcc::init(&nowhere.clone().into(), &opts, &mut |_| {})
                .await
                .unwrap_err();
            assert!(matches!(e, LoadError::Invalid(_)), "{e}");
        }
    });
}
