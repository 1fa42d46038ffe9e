//! # sut: the system under test, whichever protocol it speaks
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
//! [`ErrorClass`]. Everything else of `pg` is re-exported too (`sut::ConnConfig`,
//! `sut::embedded`, ...), so PostgreSQL's names keep one path.
//!
//! Must not touch: time measurement, workloads, argv, output formatting. Nothing here formats a
//! password: [`Target::redacted`] is the printable form.

mod connection;

pub use connection::{CapturedResult, Columns, Session, TargetRef};
pub use mysql;
pub use pg::*;

/// What a client should do about an error from either protocol's session: MySQL's errors by
/// their error number (`mysql::classify`: 1205 lock wait timeout has SQLSTATE HY000, which no
/// SQLSTATE table can tell apart), everything else by SQLSTATE ([`Error::class`]).
pub fn classify(e: &Error) -> ErrorClass {
    match mysql::error_number(e) {
        Some(_) => mysql::classify(e),
        None => e.class(),
    }
}

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
// Built once per run and cloned only while connecting: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Target {
    /// PostgreSQL, with libpq's host list, `target_session_attrs` and `load_balance_hosts`.
    Pg(ConnConfig),
    /// MySQL/MariaDB: one or more endpoints (a Galera cluster's nodes, Aurora's writer and
    /// readers), tried in order as libpq tries its hosts. Never empty.
    MySql(Vec<mysql::Conninfo>),
}

/// Parse a `mysql://` URL whose host part may list several endpoints, libpq's way:
/// `mysql://root@h1:3306,h2:3307/db?ssl-mode=REQUIRED` (each endpoint gets the rest of the URL).
pub fn parse_mysql_url(url: &str) -> Result<Vec<mysql::Conninfo>, Error> {
    let Some(rest) = url.strip_prefix("mysql://") else {
        return Ok(vec![mysql::Conninfo::parse(url)?]);
    };
    // The user info ends where the parsers say (a password may hold a raw '@' or '?').
    let host_start = pg::conninfo::userinfo_end(rest).map_or(0, |i| i + 1);
    let host_end = rest[host_start..]
        .find(['/', '?'])
        .map_or(rest.len(), |i| host_start + i);
    let hosts = &rest[host_start..host_end];
    if !hosts.contains(',') {
        return Ok(vec![mysql::Conninfo::parse(url)?]);
    }
    hosts
        .split(',')
        .map(|h| {
            if h.is_empty() {
                return Err(Error::Config(format!(
                    "an empty host in the host list of {}",
                    mysql::Conninfo::new().redacted()
                )));
            }
            mysql::Conninfo::parse(&format!(
                "mysql://{}{h}{}",
                &rest[..host_start],
                &rest[host_end..]
            ))
        })
        .collect()
}

impl From<ConnConfig> for Target {
    fn from(c: ConnConfig) -> Target {
        Target::Pg(c)
    }
}

impl From<mysql::Conninfo> for Target {
    fn from(c: mysql::Conninfo) -> Target {
        Target::MySql(vec![c])
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

    /// The first MySQL endpoint, when this is a MySQL target.
    pub fn mysql(&self) -> Option<&mysql::Conninfo> {
        match self {
            Target::MySql(c) => c.first(),
            Target::Pg(_) => None,
        }
    }

    /// The target without its password, for every message and report.
    pub fn redacted(&self) -> String {
        match self {
            Target::Pg(c) => c.redacted(),
            Target::MySql(c) => c
                .iter()
                .map(mysql::Conninfo::redacted)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// How many endpoints (hosts) the target lists.
    pub fn endpoints(&self) -> usize {
        match self {
            Target::Pg(c) => c.hosts.len().max(1),
            Target::MySql(c) => c.len().max(1),
        }
    }

    /// Endpoint `i` as `host:port` (or the socket path), for results.
    pub fn endpoint_name(&self, i: usize) -> Option<(String, u16)> {
        match self {
            Target::Pg(c) => c.hosts.get(i).map(|h| (h.host.clone(), h.port)),
            Target::MySql(c) => c.get(i).map(|c| match &c.socket {
                Some(p) => (p.display().to_string(), c.port),
                None => (c.host.clone(), c.port),
            }),
        }
    }

    /// The same target with its host list rotated to start at host `k` (libpq's order from
    /// there on): how clients are spread over endpoints.
    pub fn starting_at(&self, k: usize) -> Target {
        match self {
            Target::Pg(c) => Target::Pg(c.starting_at(k)),
            Target::MySql(c) => {
                let mut c = c.clone();
                let n = c.len().max(1);
                c.rotate_left(k % n);
                Target::MySql(c)
            }
        }
    }

    /// How long a connection attempt may take (`connect_timeout`), if limited.
    pub fn connect_timeout(&self) -> Option<std::time::Duration> {
        match self {
            Target::Pg(c) => c.connect_timeout,
            Target::MySql(c) => c.first().and_then(|c| c.connect_timeout),
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
            Target::MySql(c) => Target::MySql(c.iter().map(|c| c.with_database(db)).collect()),
        }
    }

    /// This target as another user (its password, if any, kept: a captured session replayed
    /// as its own user finds its password where the target's is, or in `.pgpass`).
    pub fn with_user(&self, user: &str) -> Target {
        match self {
            Target::Pg(c) => {
                let mut c = c.clone();
                c.user = user.to_string();
                Target::Pg(c)
            }
            Target::MySql(c) => Target::MySql(
                c.iter()
                    .map(|c| mysql::Conninfo {
                        user: user.to_string(),
                        ..c.clone()
                    })
                    .collect(),
            ),
        }
    }

    /// The database the target names ("" when none).
    pub fn database(&self) -> &str {
        match self {
            Target::Pg(c) => &c.dbname,
            Target::MySql(c) => c.first().and_then(|c| c.database.as_deref()).unwrap_or(""),
        }
    }
}
