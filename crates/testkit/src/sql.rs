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

/// The query listing the columns of the public tables named like `pattern` (a LIKE pattern):
/// name, position, type, length, nullability and default, in table and column order. One part
/// of the catalog a loader must reproduce as its reference tool makes it.
pub fn columns_query(pattern: &str) -> String {
    format!(
        "select table_name, column_name, ordinal_position, data_type, character_maximum_length, \
                is_nullable, column_default \
         from information_schema.columns where table_schema = 'public' and table_name like '{pattern}' \
         order by 1, 3"
    )
}

/// Run `f` to completion on a fresh current-thread runtime (for synchronous tests).
pub fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}
