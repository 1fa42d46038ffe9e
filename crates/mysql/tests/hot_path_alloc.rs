//! The hot path does not allocate: after warm-up, `execute` in each mode (a point select that
//! returns a row, an update) makes no heap allocation on the calling thread, over the unix
//! socket and over TCP. Counted with a global allocator that counts only while a thread-local
//! switch is on, so the server and the runtime's other threads do not interfere.

use mysql::{Conninfo, Session};
use pg::{QueryMode, StmtId, Value};
use testkit::MariaDb;

#[global_allocator]
static GLOBAL: testkit::CountingAlloc = testkit::CountingAlloc;

async fn run(s: &mut Session, sel: StmtId, upd: StmtId, n: i64) {
    for i in 0..n {
        let id = Value::Int(i % 100 + 1);
        assert_eq!(s.execute(sel, &[id]).await.unwrap().rows, 1);
        assert!(s.row_value(1).is_some_and(|c| c.len() == 20));
        let r = s.execute(upd, &[Value::Int(1), id]).await.unwrap();
        assert_eq!(r.affected, 1);
    }
}

#[test]
fn steady_state_makes_no_allocation() {
    let db = MariaDb::shared();
    db.fresh_database("alloc");
    db.sql(
        "CREATE TABLE alloc.acc (id INT PRIMARY KEY, k INT, c CHAR(20), d DOUBLE);
         INSERT INTO alloc.acc SELECT seq, 0, 'abcdefghijklmnopqrst', seq / 3 FROM alloc.seq_1_to_100",
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for url in [
            db.socket_url("root", None, "alloc"),
            db.tcp_url("root", None, "alloc"),
        ] {
            let mut s = Session::connect(&Conninfo::parse(&url).unwrap())
                .await
                .unwrap();
            for mode in [QueryMode::Prepared, QueryMode::Simple, QueryMode::Extended] {
                let sel = s.register("SELECT k, c, d FROM acc WHERE id = $1", mode);
                let upd = s.register("UPDATE acc SET k = k + $1 WHERE id = $2", mode);
                s.prepare_all().await.unwrap();
                run(&mut s, sel, upd, 50).await; // warm-up: buffers reach their working size
                let before = testkit::allocations();
                testkit::count_allocations(true);
                run(&mut s, sel, upd, 500).await;
                testkit::count_allocations(false);
                let n = testkit::allocations() - before;
                assert_eq!(n, 0, "{url} {mode:?}: {n} allocations in 500 iterations");
            }
            // pgbench's simple mode with \gset: a verbatim text, its results captured and read.
            let v = s.register_verbatim();
            s.capture_results(v);
            let mut text = String::with_capacity(128);
            for round in [50, 500] {
                let before = testkit::allocations();
                testkit::count_allocations(round == 500);
                for i in 0..round {
                    text.clear();
                    text.push_str("BEGIN; SELECT k AS kk, c FROM acc WHERE id = ");
                    text.push_str(itoa::Buffer::new().format(i % 100 + 1));
                    text.push_str("; COMMIT;");
                    s.execute(v, &[Value::Text(&text)]).await.unwrap();
                    let r = s.captured().nth(1).unwrap();
                    let n: usize = r
                        .columns()
                        .map(|(n, v)| n.len() + v.map_or(0, str::len))
                        .sum();
                    assert_eq!(
                        n,
                        2 + 1 + 20 + (r.columns().next().unwrap().1.unwrap().len())
                    );
                }
                testkit::count_allocations(false);
                let n = testkit::allocations() - before;
                if round == 500 {
                    assert_eq!(n, 0, "{url} verbatim + capture: {n} allocations");
                }
            }
            s.close().await;
        }
    });
    // The counter does see allocations (a positive control).
    testkit::count_allocations(true);
    let v: Vec<u8> = (0..100).collect();
    testkit::count_allocations(false);
    assert!(testkit::allocations() >= 1 && v.len() == 100);
}
