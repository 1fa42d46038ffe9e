//! # mysql: the MySQL client/server protocol, for MySQL and MariaDB targets
//!
//! The sibling of `pg`'s PostgreSQL session (issue 15, item 1): a hand-written protocol
//! session with the same surface, so that the engine and the workloads can drive either
//! protocol. It reuses `pg`'s value and error types ([`pg::Value`], [`pg::StmtId`],
//! [`pg::QueryMode`], [`pg::StmtResult`], [`pg::Error`], [`pg::DbError`],
//! [`pg::ErrorClass`]) rather than defining its own.
//!
//! Owns: MySQL's way of naming a target ([`Conninfo`]: `mysql://` URLs, `MYSQL_PWD`, ssl-mode),
//! the [`Session`] (handshake v10, authentication, TLS, text and binary prepared statements,
//! multi-statements and multi-results), the authentication plugins' arithmetic (`auth`), the
//! classification of MySQL errors by error number ([`classify`], one place), and the embedded
//! MariaDB server ([`embedded`]: stampede's private server when a MySQL workload has no target).
//!
//! Must not touch: time measurement, workloads, argv, output formatting. Nothing here formats a
//! password: [`Conninfo::redacted`] and [`Conninfo::describe`] are the only printable forms of a
//! target.
//!
//! Module layout: `conninfo`; `session` (and its parts); `wire` the protocol's packets and
//! flags as pure functions; `sql` placeholders, statement splitting and transaction statements;
//! `auth` the plugins' scrambles; `error` ERR packets and the classification; `tls` rustls for
//! ssl-mode; `embedded` a private MariaDB server (the counterpart of `pg::embedded`). The plain socket is `pg::PlainSocket` (read readiness only, shared).

mod auth;
mod conninfo;
pub mod embedded;
mod error;
mod session;
mod sql;
mod tls;
mod wire;

pub use conninfo::{Conninfo, Password, SslMode, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SOCKET};
pub use error::{classify, classify_number, db_error_number, error_number};
pub use session::{CapturedColumns, CapturedResult, Session};
