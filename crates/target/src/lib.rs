//! # target: the system under test, as seen from a client
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
//! Later dialects (MySQL wire family) come in as sibling modules behind the same session surface.

pub mod conninfo;
pub mod embedded;
pub mod error;
pub mod ring;
pub mod session;
pub mod tls;

pub use conninfo::{ConnConfig, ConnFlags, SslMode};
pub use error::{DbError, Error, ErrorClass};
pub use session::socket::PlainSocket;
pub use session::{CapturedResult, Columns, QueryMode, Session, StmtId, StmtResult, Value};
