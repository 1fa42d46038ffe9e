//! Where and how to connect, by libpq's conventions (PostgreSQL docs, "Connection Strings" and
//! "Environment Variables"): `postgresql://` URLs and `key=value` strings, `-h -p -U -d` flags,
//! PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE, PGSSLMODE, PGSSLROOTCERT,
//! PGAPPNAME, PGCONNECT_TIMEOUT, `~/.pgpass`, sslmode disable/allow/prefer/require/verify-ca/verify-full.
//!
//! Precedence, as pgbench's `doConnect` gets it from libpq: values in the connection string win
//! over `-h/-p/-U` flags, which win over environment variables, which win over defaults.
//!
//! STUB: the interface is fixed; the implementation is being written.

use std::path::PathBuf;
use std::time::Duration;

use crate::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    Allow,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// One host of a (possibly multi-host) target. A `host` starting with `/` is a unix-socket
/// directory, as in libpq.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    pub host: String,
    pub port: u16,
}

/// A password that cannot be printed by accident: its `Debug` shows `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// The `-h -p -U -d` command-line flags (pgbench's names). `None` means not given.
#[derive(Clone, Debug, Default)]
pub struct ConnFlags {
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    /// A database name, or a whole connection string / URL (as libpq's `dbname` expansion).
    pub dbname: Option<String>,
}

/// A fully resolved target. Every field has its final value; nothing is looked up later except
/// the password file, which is consulted at connect time only if the server asks for a password.
#[derive(Clone, Debug)]
pub struct ConnConfig {
    pub hosts: Vec<HostSpec>,
    pub user: String,
    pub dbname: String,
    pub password: Option<Password>,
    pub passfile: Option<PathBuf>,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
    pub sslcert: Option<PathBuf>,
    pub sslkey: Option<PathBuf>,
    pub application_name: String,
    pub connect_timeout: Option<Duration>,
    /// libpq `options` (sent as the `options` startup parameter, e.g. `-c work_mem=64MB`).
    pub options: Option<String>,
}

impl ConnConfig {
    /// Resolve flags + connection string + environment (`env` looks up a variable; pass
    /// `|k| std::env::var(k).ok()` in production) into a config.
    pub fn resolve(
        flags: &ConnFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ConnConfig, Error> {
        let _ = (flags, env);
        todo!("conninfo::resolve")
    }

    /// A printable description with no password: `host=... port=... user=... dbname=... sslmode=...`.
    pub fn redacted(&self) -> String {
        todo!("conninfo::redacted")
    }

    /// The same target with another database name (for admin connections, `CREATE DATABASE`).
    pub fn with_dbname(&self, dbname: &str) -> ConnConfig {
        let mut c = self.clone();
        c.dbname = dbname.to_string();
        c
    }
}

/// Remove passwords from any text that may hold a connection string or URL (error messages,
/// echoed command lines): `password=secret` -> `password=***`, `postgres://u:secret@h` ->
/// `postgres://u:***@h`.
pub fn redact(text: &str) -> String {
    let _ = text;
    todo!("conninfo::redact")
}
