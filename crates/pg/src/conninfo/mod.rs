//! Where and how to connect, by libpq's conventions (PostgreSQL docs, "Connection Strings" and
//! "Environment Variables"): `postgresql://` URLs and `key=value` strings, `-h -p -U -d` flags,
//! PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGPASSFILE, PGSSLMODE, PGSSLROOTCERT,
//! PGSSLCERT, PGSSLKEY, PGAPPNAME, PGCONNECT_TIMEOUT, PGOPTIONS, `~/.pgpass`, sslmode
//! disable/allow/prefer/require/verify-ca/verify-full.
//!
//! Precedence, as pgbench's `doConnect` gets it from libpq: values in the connection string win
//! over `-h/-p/-U` flags, which win over environment variables, which win over defaults. As in
//! libpq, an empty value counts as not given.
//!
//! Written here rather than borrowed from a driver because stampede must accept exactly what
//! `pgbench`/`psql` accept (same strings, same variables, same password file) and must never let a
//! password reach a printable form: [`ConnConfig::redacted`] and [`redact`] are the only ways a
//! target is printed.
//!
//! One deviation in a default: `connect_timeout` is 10 s per host when neither the string nor
//! `PGCONNECT_TIMEOUT` gives one ([`DEFAULT_CONNECT_TIMEOUT`]; libpq waits forever).
//!
//! Keywords accepted but without effect (documented deviations): `hostaddr` is used as the host
//! only when no `host` is given; `keepalives*` and `tcp_user_timeout` are ignored;
//! `client_encoding` must be UTF8 (the session always asks for UTF8); `gssencmode` may be
//! `disable` or `prefer` (no GSSAPI here, as a libpq built without it).
//!
//! Several hosts (`host=a,b port=1,2`, `postgresql://a:1,b:2/db`, `-h a,b -p 1,2`) are tried
//! as libpq tries them, with `target_session_attrs` and `load_balance_hosts` ([`attrs`]);
//! stampede's placement of clients over them (`--spread`) rotates each client's order
//! ([`ConnConfig::starting_at`]).
//!
//! Module layout: this file owns the types ([`ConnConfig`], [`HostSpec`], [`SslMode`],
//! [`ConnFlags`], [`Password`]), the keyword table and [`ConnConfig::resolve`] (precedence and
//! defaults, including the OS user and home directory); `parse` reads `key=value` strings and
//! URLs; `redact` owns the printable forms (quoting, [`redact`]); `pgpass` the password file.

pub mod attrs;
mod parse;
mod pgpass;
mod redact;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Error;

pub use attrs::{LoadBalance, SessionAttrs};
pub use parse::parse_conn_string;
use parse::{host_specs, is_conn_string};
pub use pgpass::{pgpass_host, pgpass_lookup, pgpass_match};
use redact::quote;
pub use redact::{may_spill_password, redact, redact_args, userinfo_end};

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

impl SslMode {
    /// The libpq spelling (`verify-full`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SslMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<SslMode, Error> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(Error::Config(format!(
                    "invalid sslmode value: \"{other}\" (use disable, allow, prefer, require, \
                     verify-ca or verify-full)"
                )))
            }
        })
    }
}

/// One host of a (possibly multi-host) target. A `host` starting with `/` is a unix-socket
/// directory, as in libpq.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    pub host: String,
    pub port: u16,
}

impl HostSpec {
    /// True when `host` names a unix-socket directory (libpq: an absolute path, or `@` for the
    /// Linux abstract namespace, which is not supported here).
    pub fn is_unix(&self) -> bool {
        self.host.starts_with('/')
    }

    /// The socket file: `<dir>/.s.PGSQL.<port>` (libpq's `UNIXSOCK_PATH`).
    pub fn socket_path(&self) -> PathBuf {
        Path::new(&self.host).join(format!(".s.PGSQL.{}", self.port))
    }

    /// `host=... port=...`, for messages (never holds a secret).
    pub fn describe(&self) -> String {
        format!("host={} port={}", quote(&self.host), self.port)
    }
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
    /// libpq `target_session_attrs` (PGTARGETSESSIONATTRS).
    pub target_session_attrs: SessionAttrs,
    /// libpq `load_balance_hosts` (PGLOADBALANCEHOSTS).
    pub load_balance_hosts: LoadBalance,
}

/// How long a connection attempt to one host may take when `connect_timeout` and
/// `PGCONNECT_TIMEOUT` say nothing. libpq waits forever, so a server that accepts the connection
/// and never answers hangs the command without a word; stampede gives up on the host and says
/// so. `connect_timeout=0` still waits forever.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// libpq's default port (`DEF_PGPORT`).
pub const DEFAULT_PORT: u16 = 5432;

/// The application name used unless the user gives one (libpq `fallback_application_name`).
pub const DEFAULT_APPLICATION_NAME: &str = "stampede";

/// The default unix-socket directory: `/var/run/postgresql` (libpq's compiled-in default on
/// Debian and Ubuntu) if it exists, else `/tmp` (upstream's default).
pub fn default_socket_dir() -> &'static str {
    if Path::new("/var/run/postgresql").is_dir() {
        "/var/run/postgresql"
    } else {
        "/tmp"
    }
}

/// Raw keyword values, before defaults. `None` = not given (libpq treats empty as not given).
#[derive(Default)]
struct Raw {
    host: Option<String>,
    hostaddr: Option<String>,
    port: Option<String>,
    user: Option<String>,
    password: Option<String>,
    dbname: Option<String>,
    passfile: Option<String>,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    sslcert: Option<String>,
    sslkey: Option<String>,
    application_name: Option<String>,
    fallback_application_name: Option<String>,
    connect_timeout: Option<String>,
    options: Option<String>,
    target_session_attrs: Option<String>,
    load_balance_hosts: Option<String>,
}

impl Raw {
    fn set(&mut self, key: &str, value: String) -> Result<(), Error> {
        let v = if value.is_empty() { None } else { Some(value) };
        let slot = match key {
            "host" => &mut self.host,
            "hostaddr" => &mut self.hostaddr,
            "port" => &mut self.port,
            "user" => &mut self.user,
            "password" => &mut self.password,
            "dbname" => &mut self.dbname,
            "passfile" => &mut self.passfile,
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.sslrootcert,
            "sslcert" => &mut self.sslcert,
            "sslkey" => &mut self.sslkey,
            "application_name" => &mut self.application_name,
            "fallback_application_name" => &mut self.fallback_application_name,
            "connect_timeout" => &mut self.connect_timeout,
            "options" => &mut self.options,
            "target_session_attrs" => &mut self.target_session_attrs,
            "load_balance_hosts" => &mut self.load_balance_hosts,
            // Accepted without effect (see the module header).
            "keepalives"
            | "keepalives_idle"
            | "keepalives_interval"
            | "keepalives_count"
            | "tcp_user_timeout"
            | "sslcompression"
            | "sslsni" => return Ok(()),
            "client_encoding" => {
                return match v.as_deref().map(str::to_ascii_uppercase).as_deref() {
                    None | Some("UTF8") | Some("UTF-8") => Ok(()),
                    Some(_) => Err(Error::Config(
                        "client_encoding: stampede always uses UTF8; remove this option".into(),
                    )),
                };
            }
            "gssencmode" => {
                return match v.as_deref() {
                    None | Some("disable") | Some("prefer") => Ok(()),
                    Some(o) => Err(Error::Config(format!(
                        "gssencmode={o}: GSSAPI encryption is not supported; use disable"
                    ))),
                };
            }
            other => {
                return Err(Error::Config(format!(
                    "invalid connection option \"{other}\" (not a libpq keyword stampede knows)"
                )))
            }
        };
        *slot = v;
        Ok(())
    }
}

/// The effective user name of this process (libpq `pg_fe_getauthname`).
fn os_user_name() -> Option<String> {
    pw_entry().map(|(name, _)| name)
}

/// (name, home) from the password database for the effective uid.
fn pw_entry() -> Option<(String, String)> {
    // SAFETY: getpwuid_r writes into our buffer and struct; we read the C strings it points to
    // only while `buf` is alive.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut buf = vec![0 as libc::c_char; 4096];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(pwd.pw_name)
            .to_string_lossy()
            .into_owned();
        let home = if pwd.pw_dir.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(pwd.pw_dir)
                .to_string_lossy()
                .into_owned()
        };
        Some((name, home))
    }
}

/// The home directory as libpq finds it: `$HOME`, else the password database.
pub(crate) fn home_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| pw_entry().map(|(_, h)| h).filter(|h| !h.is_empty()))
        .map(PathBuf::from)
}

impl ConnConfig {
    /// Resolve flags + connection string + environment (`env` looks up a variable; pass
    /// `|k| std::env::var(k).ok()` in production) into a config.
    pub fn resolve(
        flags: &ConnFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ConnConfig, Error> {
        let spilled = (flags.dbname.as_deref())
            .and_then(parse::url_rest)
            .is_some_and(redact::may_spill_password);
        Self::resolve_quoting(flags, env).map_err(|e| match e {
            // Its parts may hold a piece of the password: no message may quote them.
            Error::Config(_) if spilled => Error::Config(parse::SPILLED.into()),
            e => e,
        })
    }

    fn resolve_quoting(
        flags: &ConnFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ConnConfig, Error> {
        let nonempty = |v: Option<String>| v.filter(|s| !s.is_empty());
        let envv = |k: &str| nonempty(env(k));
        let flag = |v: &Option<String>| nonempty(v.clone());

        let mut s = Raw::default();
        if let Some(d) = flag(&flags.dbname) {
            if is_conn_string(&d) {
                for (k, v) in parse_conn_string(&d)? {
                    s.set(&k, v)?;
                }
            } else {
                s.dbname = Some(d);
            }
        }

        let host = s
            .host
            .take()
            .or_else(|| s.hostaddr.take())
            .or_else(|| flag(&flags.host))
            .or_else(|| envv("PGHOST"))
            .unwrap_or_else(|| default_socket_dir().to_string());
        let port = s
            .port
            .take()
            .or_else(|| flag(&flags.port))
            .or_else(|| envv("PGPORT"))
            .unwrap_or_default();
        let hosts = host_specs(&host, &port)?;

        let user = match s
            .user
            .take()
            .or_else(|| flag(&flags.user))
            .or_else(|| envv("PGUSER"))
        {
            Some(u) => u,
            None => os_user_name().or_else(|| envv("USER")).ok_or_else(|| {
                Error::Config(
                    "could not determine the local user name; give -U or set PGUSER".into(),
                )
            })?,
        };
        let dbname = s
            .dbname
            .take()
            .or_else(|| envv("PGDATABASE"))
            .unwrap_or_else(|| user.clone());
        let password = s
            .password
            .take()
            .or_else(|| envv("PGPASSWORD"))
            .map(Password);
        let passfile = s
            .passfile
            .take()
            .or_else(|| envv("PGPASSFILE"))
            .map(PathBuf::from)
            .or_else(|| home_dir(env).map(|h| h.join(".pgpass")));
        let sslmode = match s.sslmode.take().or_else(|| envv("PGSSLMODE")) {
            Some(m) => m.parse()?,
            None => SslMode::default(),
        };
        let path = |v: Option<String>| v.map(PathBuf::from);
        let sslrootcert = path(s.sslrootcert.take().or_else(|| envv("PGSSLROOTCERT")));
        let sslcert = path(s.sslcert.take().or_else(|| envv("PGSSLCERT")));
        let sslkey = path(s.sslkey.take().or_else(|| envv("PGSSLKEY")));
        let application_name = s
            .application_name
            .take()
            .or_else(|| envv("PGAPPNAME"))
            .or_else(|| s.fallback_application_name.take())
            .unwrap_or_else(|| DEFAULT_APPLICATION_NAME.to_string());
        let connect_timeout = match s
            .connect_timeout
            .take()
            .or_else(|| envv("PGCONNECT_TIMEOUT"))
        {
            None => Some(DEFAULT_CONNECT_TIMEOUT),
            Some(t) => {
                let secs: i64 = t.trim().parse().map_err(|_| {
                    Error::Config(format!(
                        "invalid integer value \"{t}\" for connection option \"connect_timeout\""
                    ))
                })?;
                // libpq: zero or negative waits forever; 1 is raised to 2 seconds.
                match secs {
                    s if s <= 0 => None,
                    1 => Some(Duration::from_secs(2)),
                    s => Some(Duration::from_secs(s as u64)),
                }
            }
        };
        let options = s.options.take().or_else(|| envv("PGOPTIONS"));
        let target_session_attrs = match s
            .target_session_attrs
            .take()
            .or_else(|| envv("PGTARGETSESSIONATTRS"))
        {
            Some(v) => v.parse()?,
            None => SessionAttrs::default(),
        };
        let load_balance_hosts = match s
            .load_balance_hosts
            .take()
            .or_else(|| envv("PGLOADBALANCEHOSTS"))
        {
            Some(v) => v.parse()?,
            None => LoadBalance::default(),
        };

        Ok(ConnConfig {
            hosts,
            user,
            dbname,
            password,
            passfile,
            sslmode,
            sslrootcert,
            sslcert,
            sslkey,
            application_name,
            connect_timeout,
            options,
            target_session_attrs,
            load_balance_hosts,
        })
    }

    /// A printable description with no password: `host=... port=... user=... dbname=... sslmode=...`.
    pub fn redacted(&self) -> String {
        let hosts: Vec<&str> = self.hosts.iter().map(|h| h.host.as_str()).collect();
        let mut ports: Vec<String> = self.hosts.iter().map(|h| h.port.to_string()).collect();
        if ports.iter().all(|p| *p == ports[0]) {
            ports.truncate(1);
        }
        format!(
            "host={} port={} user={} dbname={} sslmode={}",
            quote(&hosts.join(",")),
            ports.join(","),
            quote(&self.user),
            quote(&self.dbname),
            self.sslmode
        )
    }

    /// The same target with its hosts tried from host `k` (modulo their number) on, then the
    /// rest in order: how `--spread round-robin` gives client `k` its first host, while
    /// `target_session_attrs` can still move on to the others.
    pub fn starting_at(&self, k: usize) -> ConnConfig {
        let mut c = self.clone();
        if !c.hosts.is_empty() {
            let n = c.hosts.len();
            c.hosts.rotate_left(k % n);
        }
        c
    }

    /// The same target with another database name (for admin connections, `CREATE DATABASE`).
    pub fn with_dbname(&self, dbname: &str) -> ConnConfig {
        let mut c = self.clone();
        c.dbname = dbname.to_string();
        c
    }
}
