//! SQL against a server, one short session per call, rows as strings (what `simple_query`
//! returns): the test-side `psql -c`, without the process.

use std::future::Future;

use pg::{ConnConfig, Session};

/// Rows of text values (None for NULL), as `Session::simple_query` returns them.
pub type Rows = Vec<Vec<Option<String>>>;

/// Connect, run `sql` (one or more statements, simple protocol), close. Panics on any error.
pub async fn query(cfg: &ConnConfig, sql: &str) -> Rows {
    let mut s = Session::connect(cfg)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let rows = s
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    s.close().await;
    rows
}

/// The first value of the first row ("" for NULL).
pub async fn scalar(cfg: &ConnConfig, sql: &str) -> String {
    query(cfg, sql).await[0][0].clone().unwrap_or_default()
}

/// Run `f` to completion on a fresh current-thread runtime (for synchronous tests).
pub fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}
