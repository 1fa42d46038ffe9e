//! # pg: PostgreSQL as a target
//!
//! The PostgreSQL side of the two protocols (`mysql` is the other); the engine, workloads and
//! loaders reach both through `sut`'s interface, never this crate's session directly, except
//! for PostgreSQL-only features (COPY, io_uring, pg_stat views).
//!
//! Owns: how to reach a server (libpq's conventions in [`conninfo`]: URLs, `key=value` strings,
//! `PG*` variables, `~/.pgpass`, sslmode), the wire-protocol [`Session`] every workload and loader
//! talks through, TLS, the sorting of server errors into retryable / fatal classes by SQLSTATE
//! ([`error`], one place), and the [`embedded`] private PostgreSQL that runs when no target is given.
//!
//! Must not touch: time measurement, workloads, argv, output formatting. Nothing here ever prints
//! or formats a password: [`conninfo::ConnConfig::redacted`] is the only printable form of a
//! target.
//!
//! Shared with `mysql`: the value, statement and error types ([`Value`], [`StmtId`], [`QueryMode`],
//! [`StmtResult`], [`Error`], [`DbError`], [`ErrorClass`]), the read-readiness socket
//! ([`PlainSocket`]), the [`Transport`] over it, the TLS verifier pieces in [`tls`], and the
//! embedded servers' life cycle ([`embedded::lifecycle`]): defined once here, used by both.

pub mod conninfo;
pub mod embedded;
pub mod error;
pub mod ring;
pub mod session;
pub mod tls;

pub use conninfo::{ConnConfig, ConnFlags, SslMode};
pub use error::{DbError, Error, ErrorClass};
pub use session::socket::{PlainSocket, Unblock};
pub use session::transport::Transport;
pub use session::{
    CapturedResult, Columns, ConnectTimer, QueryMode, Session, StmtId, StmtResult, TokioTimer,
    Value,
};
