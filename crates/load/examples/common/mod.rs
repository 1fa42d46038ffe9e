//! What the measuring examples share: the server they measure (one given by its socket
//! directory, port and database, or an embedded one with stampede's settings) and the runtime.

use sut::conninfo::ConnFlags;
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::ConnConfig;

/// The server of `<socket dir> <port> <db>` (the first three arguments), as user `postgres`
/// without TLS; a socket directory of `-` (or none) starts an embedded server, which is
/// removed when the returned handle is dropped.
pub fn server(args: &[String]) -> (ConnConfig, Option<EmbeddedServer>) {
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    if arg(0) == "-" || arg(0).is_empty() {
        let s = EmbeddedServer::start(&EmbeddedOptions::default()).expect("embedded server");
        return (s.conn_config(), Some(s));
    }
    let flags = ConnFlags {
        host: Some(arg(0)),
        port: Some(arg(1)),
        user: Some("postgres".into()),
        dbname: Some(arg(2)),
    };
    // Only these two of the environment: the measurement must not depend on the caller's.
    let env = |k: &str| match k {
        "PGSSLMODE" => Some("disable".to_string()),
        "PGAPPNAME" => Some("stampede-measure".to_string()),
        _ => None,
    };
    (ConnConfig::resolve(&flags, &env).expect("connection"), None)
}

/// A multi-threaded runtime: row generation runs on several threads, as in `stampede init`.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}
