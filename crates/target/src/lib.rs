//! # target: the system under test, whichever protocol it speaks
//!
//! The interface the engine, the workloads and the loaders use (issue 15: "a target interface
//! that the engine and workloads use without knowing which protocol is underneath"). A
//! [`Target`] names a server in its protocol's conventions (libpq's for PostgreSQL, `mysql://`
//! for MySQL/MariaDB); a [`Session`] is one connection to it, an enum over the two hand-written
//! protocol sessions (`pg::Session`, `mysql::Session`). Both sessions have the same surface
//! (register, prepare, execute, simple queries, the first row in place, transaction status,
//! commits seen on the wire), so a workload's transaction is written once.
//!
//! Why an enum and not a trait object: the hot path (`execute`) stays a direct, inlinable call
//! behind one predictable branch, with no boxing of the futures it returns; and the set of
//! protocols is closed (two).
//!
//! What only one protocol has stays reachable, explicitly: [`Session::pg_mut`] for COPY,
//! io_uring and the pg_stat views; [`Session::mysql_mut`] for MySQL's own counters. A
//! PostgreSQL-only feature asked of a MySQL session (a pipeline) is an [`Error::Config`] that
//! says so, never a silent no-op.
//!
//! The value, statement and error types are `pg`'s, re-exported here (`mysql` uses the same
//! ones): [`Value`], [`StmtId`], [`QueryMode`], [`StmtResult`], [`Error`], [`DbError`],
//! [`ErrorClass`]. Everything else of `pg` is re-exported too (`target::ConnConfig`,
//! `target::embedded`, ...), so PostgreSQL's names keep one path.
//!
//! Must not touch: time measurement, workloads, argv, output formatting. Nothing here formats a
//! password: [`Target::redacted`] is the printable form.

mod connection;

pub use connection::{Session, TargetRef};
pub use mysql;
pub use pg::*;

/// Which protocol (and SQL dialect) a target speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    MySql,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Postgres => "PostgreSQL",
            Dialect::MySql => "MySQL",
        }
    }
}

/// A server to connect to, in its protocol's conventions.
#[derive(Clone, Debug)]
pub enum Target {
    Pg(ConnConfig),
    MySql(mysql::Conninfo),
}

impl From<ConnConfig> for Target {
    fn from(c: ConnConfig) -> Target {
        Target::Pg(c)
    }
}

impl From<mysql::Conninfo> for Target {
    fn from(c: mysql::Conninfo) -> Target {
        Target::MySql(c)
    }
}

impl Target {
    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Pg(_) => Dialect::Postgres,
            Target::MySql(_) => Dialect::MySql,
        }
    }

    /// The PostgreSQL configuration, when this is a PostgreSQL target.
    pub fn pg(&self) -> Option<&ConnConfig> {
        match self {
            Target::Pg(c) => Some(c),
            Target::MySql(_) => None,
        }
    }

    pub fn pg_mut(&mut self) -> Option<&mut ConnConfig> {
        match self {
            Target::Pg(c) => Some(c),
            Target::MySql(_) => None,
        }
    }

    pub fn mysql(&self) -> Option<&mysql::Conninfo> {
        match self {
            Target::MySql(c) => Some(c),
            Target::Pg(_) => None,
        }
    }

    /// The target without its password, for every message and report.
    pub fn redacted(&self) -> String {
        match self {
            Target::Pg(c) => c.redacted(),
            Target::MySql(c) => c.redacted(),
        }
    }

    /// How many endpoints (hosts) the target lists.
    pub fn endpoints(&self) -> usize {
        match self {
            Target::Pg(c) => c.hosts.len().max(1),
            Target::MySql(_) => 1,
        }
    }

    /// Endpoint `i` as `host:port` (or the socket path), for results.
    pub fn endpoint_name(&self, i: usize) -> Option<(String, u16)> {
        match self {
            Target::Pg(c) => c.hosts.get(i).map(|h| (h.host.clone(), h.port)),
            Target::MySql(c) if i == 0 => Some(match &c.socket {
                Some(p) => (p.display().to_string(), c.port),
                None => (c.host.clone(), c.port),
            }),
            Target::MySql(_) => None,
        }
    }

    /// The same target with its host list rotated to start at host `k` (libpq's order from
    /// there on): how clients are spread over endpoints.
    pub fn starting_at(&self, k: usize) -> Target {
        match self {
            Target::Pg(c) => Target::Pg(c.starting_at(k)),
            Target::MySql(c) => Target::MySql(c.clone()),
        }
    }

    /// How long a connection attempt may take (`connect_timeout`), if limited.
    pub fn connect_timeout(&self) -> Option<std::time::Duration> {
        match self {
            Target::Pg(c) => c.connect_timeout,
            Target::MySql(c) => c.connect_timeout,
        }
    }

    /// The same target naming another database.
    pub fn with_database(&self, db: &str) -> Target {
        match self {
            Target::Pg(c) => {
                let mut c = c.clone();
                c.dbname = db.to_string();
                Target::Pg(c)
            }
            Target::MySql(c) => Target::MySql(c.with_database(db)),
        }
    }

    /// The database the target names ("" when none).
    pub fn database(&self) -> &str {
        match self {
            Target::Pg(c) => &c.dbname,
            Target::MySql(c) => c.database.as_deref().unwrap_or(""),
        }
    }
}
