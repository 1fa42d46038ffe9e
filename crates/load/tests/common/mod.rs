//! What the loaders' test binaries share: the runtime, and the checks of a cancelled load.

use std::sync::atomic::{AtomicBool, Ordering};

use load::{Event, LoadError, TableProgress};
use sut::{ConnConfig, Session};

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A target where no server listens: options that fail before connecting fail there.
pub fn nowhere(cfg: &ConnConfig) -> ConnConfig {
    ConnConfig {
        hosts: vec![sut::conninfo::HostSpec {
            host: "/nonexistent".into(),
            port: 1,
        }],
        ..cfg.clone()
    }
}

/// Run `init` (given its event callback) and raise `cancel` as soon as `loading` sees rows
/// going in: the load must stop with [`LoadError::Interrupted`], having said that it dropped
/// its tables again. Then, with the flag raised before the start, `init` must stop at once.
pub async fn cancel_while_loading<T: std::fmt::Debug>(
    cancel: &AtomicBool,
    loading: impl Fn(&[TableProgress]) -> bool,
    init: impl AsyncFn(&mut dyn FnMut(&Event<'_>)) -> Result<T, LoadError>,
) {
    let mut notices = Vec::new();
    let mut saw_rows = false;
    let r = init(&mut |e| match e {
        Event::Rows { tables, .. } if loading(tables) => {
            saw_rows = true;
            cancel.store(true, Ordering::Relaxed);
        }
        Event::Notice(n) => notices.push(n.to_string()),
        _ => {}
    })
    .await;
    assert!(matches!(r, Err(LoadError::Interrupted)), "{r:?}");
    assert!(saw_rows);
    assert!(notices.iter().any(|n| n.contains("dropped")), "{notices:?}");
    let r = init(&mut |_| {}).await;
    assert!(matches!(r, Err(LoadError::Interrupted)), "{r:?}");
}

/// No loader is left holding a connection to database `db` (backends exit shortly after the
/// client's Terminate: poll until none is left, or fail).
pub async fn assert_no_loader_left(s: &mut Session, db: &str) {
    let sql = format!(
        "select count(*) from pg_stat_activity where datname = '{db}' and pid <> pg_backend_pid()"
    );
    let mut others = None;
    for _ in 0..100 {
        let r = s.simple_query(&sql).await.unwrap();
        others = r[0][0].clone();
        if others.as_deref() == Some("0") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(others.as_deref(), Some("0"));
}
