//! The integration tests' private PostgreSQL, written once: starting a throwaway server from the
//! machine's binaries (Debian's `postgresql-15`), reaching it over SQL and through its own
//! `psql`/`pgbench`, and the root handling a hand-made server needs.
//!
//! Owns: how long a test's server lives ([`Pg::start`] per test, [`PerBinary`] for a whole test
//! binary, [`WhileUsed`] while tests that overlap share one), the commands run next to it, and
//! the SQL helpers that return rows as strings. Must not own: anything a test asserts (counts,
//! invariants, settings a test needs are passed in by the test), nor what `pg::embedded`
//! already does (initdb, settings, readiness, stop on drop); this crate only wraps it.
//!
//! Dev-only (`publish = false`, a `[dev-dependencies]` entry only): it panics instead of
//! returning errors, since a test that cannot start its server must fail, never skip (STYLE.md,
//! Tests). `sut` depends on it too (its tests); Cargo allows that dev-dependency cycle, and
//! the integration tests see one `sut` crate.
//!
//! ## Module layout
//! `server`: [`Pg`] and its lifetimes, psql/pgbench; `sql`: [`query`], [`scalar`], [`block_on`];
//! `account`: running as the `postgres` account under root, private directories, commands that
//! must succeed, free ports — for tests that build a server by hand (target's TLS server);
//! `mariadb`: [`MariaDb`], a private MariaDB for the MySQL protocol's tests (issue 15);
//! `galera`: [`Galera`], a private MariaDB Galera cluster on loopback ports (nodes that all take
//! writes: several endpoints, certification conflicts, failover);
//! `cluster`: [`Cluster`], a primary and streaming standbys; `autofailover`: [`AutoFailover`], a
//! pg_auto_failover formation (a monitor and two nodes); `peers`: go-tpc.

mod account;
mod alloc;
mod autofailover;
mod cluster;
mod faults;
mod galera;
mod mariadb;
mod peers;
mod server;
mod sql;

pub use account::{as_server_user, free_port, give, ok_text, run, run_as, server_dir};
pub use alloc::{allocations, count_allocations, counted, CountingAlloc};
pub use autofailover::AutoFailover;
pub use cluster::Cluster;
pub use faults::Restarted;
pub use galera::Galera;
pub use mariadb::MariaDb;
pub use peers::{go_tpc, go_tpc_check_passed};
pub use server::{bindir, flatten, PerBinary, Pg, Settings, WhileUsed};
pub use sql::{block_on, columns_query, query, scalar, Rows};

/// Settings that make a throwaway server fast and quiet: no durability (nothing here must
/// survive a crash) and no autovacuum (so nothing but the test commits).
pub const THROWAWAY: Settings<'static> = &[
    ("fsync", "off"),
    ("synchronous_commit", "off"),
    ("full_page_writes", "off"),
    ("autovacuum", "off"),
];
