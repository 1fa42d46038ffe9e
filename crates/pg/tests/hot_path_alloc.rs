//! The hot path does not allocate: after warm-up, `execute` in all three modes and a pipeline
//! (`queue`, `queue_sync`, `flush`, `read_result`, `read_ready`) make no heap allocation on the
//! calling thread. Counted with a global allocator that counts only while a thread-local switch is
//! on, so the server's helper threads do not interfere.

use pg::embedded::{EmbeddedOptions, EmbeddedServer};
use pg::{QueryMode, Session, StmtId, Value};
use testkit::counted;

#[global_allocator]
static GLOBAL: testkit::CountingAlloc = testkit::CountingAlloc;

async fn run(s: &mut Session, mode: QueryMode, sel: StmtId, upd: StmtId, n: i64) {
    for i in 0..n {
        let aid = Value::Int(i % 1000 + 1);
        assert_eq!(s.execute(sel, &[aid]).await.unwrap().rows, 1);
        assert_eq!(
            s.execute(upd, &[aid, Value::Int(-5)])
                .await
                .unwrap()
                .affected,
            1
        );
        if mode != QueryMode::Simple {
            s.queue(sel, &[aid]);
            s.queue(upd, &[aid, Value::Int(2)]);
            s.queue_sync();
            s.flush().await.unwrap();
            s.read_result().await.unwrap();
            s.read_result().await.unwrap();
            s.read_ready().await.unwrap();
        }
    }
}

#[test]
fn steady_state_makes_no_allocation() {
    let opts = EmbeddedOptions {
        settings: vec![
            ("shared_buffers".into(), "32MB".into()),
            ("max_connections".into(), "10".into()),
        ],
        ..Default::default()
    };
    let srv = EmbeddedServer::start(&opts).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut s = Session::connect(&srv.conn_config()).await.unwrap();
        s.simple_query(
            "CREATE TABLE acc (aid int PRIMARY KEY, abalance int, filler char(84));
             INSERT INTO acc SELECT g, 0, '' FROM generate_series(1, 1000) g;",
        )
        .await
        .unwrap();
        let mut ids = Vec::new();
        for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
            ids.push((
                mode,
                s.register("SELECT abalance FROM acc WHERE aid = $1", mode),
                s.register(
                    "UPDATE acc SET abalance = abalance + $2 WHERE aid = $1",
                    mode,
                ),
            ));
        }
        s.prepare_all().await.unwrap();
        for &(mode, sel, upd) in &ids {
            run(&mut s, mode, sel, upd, 50).await; // warm-up: buffers reach their working size
            let before = testkit::allocations();
            testkit::count_allocations(true);
            run(&mut s, mode, sel, upd, 500).await;
            testkit::count_allocations(false);
            let n = testkit::allocations() - before;
            assert_eq!(
                n, 0,
                "{mode:?}: {n} allocations in 500 steady-state iterations"
            );
        }
        // The counter does see allocations (a positive control).
        let (v, n) = counted(|| vec![7u8; 100]);
        assert!(n >= 1 && v.len() == 100);
        let (_, n) = counted(|| s.first_row().map(|r| r.len()));
        assert!(n <= 1, "first_row allocates only its Vec");
        s.close().await;
    });
}
