//! The hot path does not allocate: after warm-up, `execute` in each mode (a point select that
//! returns a row, an update) makes no heap allocation on the calling thread, over the unix
//! socket and over TCP. Counted with a global allocator that counts only while a thread-local
//! switch is on, so the server and the runtime's other threads do not interfere.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use mysql::{Conninfo, Session};
use target::{QueryMode, StmtId, Value};
use testkit::MariaDb;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
                let before = ALLOCS.load(Ordering::Relaxed);
                ON.with(|c| c.set(true));
                run(&mut s, sel, upd, 500).await;
                ON.with(|c| c.set(false));
                let n = ALLOCS.load(Ordering::Relaxed) - before;
                assert_eq!(n, 0, "{url} {mode:?}: {n} allocations in 500 iterations");
            }
            s.close().await;
        }
    });
    // The counter does see allocations (a positive control).
    ON.with(|c| c.set(true));
    let v: Vec<u8> = (0..100).collect();
    ON.with(|c| c.set(false));
    assert!(ALLOCS.load(Ordering::Relaxed) >= 1 && v.len() == 100);
}
