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
//! Keywords accepted but without effect (documented deviations): `hostaddr` is used as the host
//! only when no `host` is given; `keepalives*` and `tcp_user_timeout` are ignored;
//! `client_encoding` must be UTF8 (the session always asks for UTF8); `gssencmode` may be
//! `disable` or `prefer` (no GSSAPI here, as a libpq built without it); `target_session_attrs`
//! may only be `any`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
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
}

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
            "target_session_attrs" => {
                return match v.as_deref() {
                    None | Some("any") => Ok(()),
                    Some(o) => Err(Error::Config(format!(
                        "target_session_attrs={o} is not supported; only \"any\""
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

/// libpq's test for "this dbname is really a connection string": a URI prefix or an `=`.
fn is_conn_string(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://") || s.contains('=')
}

/// Parse a `key=value ...` string or a URL into (keyword, value) pairs, in order.
pub fn parse_conn_string(s: &str) -> Result<Vec<(String, String)>, Error> {
    if let Some(rest) = s
        .strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
    {
        parse_url(rest)
    } else {
        parse_kv(s)
    }
}

/// `key = value` pairs separated by whitespace; values may be single-quoted; a backslash escapes
/// the next character (libpq `conninfo_parse`).
fn parse_kv(s: &str) -> Result<Vec<(String, String)>, Error> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return Ok(out);
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &s[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() || b[i] != b'=' {
            return Err(Error::Config(format!(
                "missing \"=\" after \"{key}\" in connection info string"
            )));
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut val = Vec::new();
        if i < b.len() && b[i] == b'\'' {
            i += 1;
            loop {
                if i == b.len() {
                    return Err(Error::Config(
                        "unterminated quoted string in connection info string".into(),
                    ));
                }
                match b[i] {
                    b'\\' if i + 1 < b.len() => {
                        val.push(b[i + 1]);
                        i += 2;
                    }
                    b'\'' => {
                        i += 1;
                        break;
                    }
                    c => {
                        val.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                val.push(b[i]);
                i += 1;
            }
        }
        // Only ASCII backslashes were removed, so the bytes are still UTF-8.
        let val = String::from_utf8(val)
            .map_err(|_| Error::Config("connection info string is not valid UTF-8".into()))?;
        out.push((key.to_string(), val));
    }
}

/// Decode `%XX` escapes. `what` names the part for the error message; the value itself is never
/// echoed (it may be a password).
fn percent_decode(s: &str, what: &str) -> Result<String, Error> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) else {
                return Err(Error::Config(format!(
                    "invalid percent-encoded token in the URI's {what}"
                )));
            };
            let byte = (h * 16 + l) as u8;
            if byte == 0 {
                return Err(Error::Config(format!(
                    "forbidden value %00 in percent-encoded value (the URI's {what})"
                )));
            }
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error::Config(format!("the URI's {what} is not valid UTF-8 once decoded")))
}

/// `[user[:password]@][host[:port][,...]][/dbname][?param=value&...]` (libpq
/// `conninfo_uri_parse_options`), after the scheme.
fn parse_url(rest: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    let (main, query) = match rest.find('?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    let path_at = main.find('/').unwrap_or(main.len());
    let (authority, path) = main.split_at(path_at);
    // The last '@' before the path ends the user info: more forgiving than libpq (which takes the
    // first) for a password with a raw '@', identical for correctly encoded URLs.
    let hostlist = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let (user, pw) = match userinfo.find(':') {
                Some(c) => (&userinfo[..c], Some(&userinfo[c + 1..])),
                None => (userinfo, None),
            };
            out.push(("user".to_string(), percent_decode(user, "user name")?));
            if let Some(pw) = pw {
                out.push(("password".to_string(), percent_decode(pw, "password")?));
            }
            &authority[at + 1..]
        }
        None => authority,
    };
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    if !hostlist.is_empty() {
        for entry in hostlist.split(',') {
            let (h, p) = if let Some(inner) = entry.strip_prefix('[') {
                let close = inner.find(']').ok_or_else(|| {
                    Error::Config(format!(
                        "end of string reached when looking for matching \"]\" in IPv6 host \
                         address in URI: \"{entry}\""
                    ))
                })?;
                let after = &inner[close + 1..];
                let port = match after.strip_prefix(':') {
                    Some(p) => p,
                    None if after.is_empty() => "",
                    None => {
                        return Err(Error::Config(format!(
                            "unexpected character \"{}\" after IPv6 host address in URI: \
                             \"{entry}\"",
                            &after[..1]
                        )))
                    }
                };
                if close == 0 {
                    return Err(Error::Config(format!(
                        "IPv6 host address may not be empty in URI: \"{entry}\""
                    )));
                }
                (&inner[..close], port)
            } else {
                match entry.find(':') {
                    Some(c) => (&entry[..c], &entry[c + 1..]),
                    None => (entry, ""),
                }
            };
            hosts.push(percent_decode(h, "host")?);
            ports.push(percent_decode(p, "port")?);
        }
    }
    if hosts.iter().any(|h| !h.is_empty()) {
        out.push(("host".to_string(), hosts.join(",")));
    }
    if ports.iter().any(|p| !p.is_empty()) {
        out.push(("port".to_string(), ports.join(",")));
    }
    if let Some(db) = path.strip_prefix('/') {
        if !db.is_empty() {
            out.push(("dbname".to_string(), percent_decode(db, "database name")?));
        }
    }
    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let Some(eq) = pair.find('=') else {
                return Err(Error::Config(format!(
                    "missing key/value separator \"=\" in URI query parameter: \"{}\"",
                    redact(pair)
                )));
            };
            let k = percent_decode(&pair[..eq], "query parameter name")?;
            let v = percent_decode(&pair[eq + 1..], &format!("query parameter \"{k}\""))?;
            // libpq accepts the JDBC spelling `ssl=true` as sslmode=require.
            if k == "ssl" {
                if v == "true" {
                    out.push(("sslmode".to_string(), "require".to_string()));
                    continue;
                }
                return Err(Error::Config(format!(
                    "invalid ssl value \"{v}\" in URI (only ssl=true is accepted)"
                )));
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

fn parse_port(p: &str) -> Result<u16, Error> {
    if p.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    match p.trim().parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::Config(format!("invalid port number: \"{p}\""))),
    }
}

/// Split comma-separated host and port lists into host specs: one port for all hosts, or one per
/// host; an empty entry means the default (libpq).
fn host_specs(host: &str, port: &str) -> Result<Vec<HostSpec>, Error> {
    let hosts: Vec<&str> = host.split(',').map(str::trim).collect();
    let ports: Vec<&str> = port.split(',').map(str::trim).collect();
    if ports.len() != 1 && ports.len() != hosts.len() {
        return Err(Error::Config(format!(
            "could not match {} port numbers to {} hosts",
            ports.len(),
            hosts.len()
        )));
    }
    hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let p = if ports.len() == 1 { ports[0] } else { ports[i] };
            Ok(HostSpec {
                host: if h.is_empty() {
                    default_socket_dir().to_string()
                } else {
                    h.to_string()
                },
                port: parse_port(p)?,
            })
        })
        .collect()
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
            None => None,
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

    /// The same target with another database name (for admin connections, `CREATE DATABASE`).
    pub fn with_dbname(&self, dbname: &str) -> ConnConfig {
        let mut c = self.clone();
        c.dbname = dbname.to_string();
        c
    }
}

/// Quote a value for a `key=value` string when it needs it (libpq rules).
fn quote(v: &str) -> Cow<'_, str> {
    if !v.is_empty()
        && !v
            .bytes()
            .any(|c| c.is_ascii_whitespace() || c == b'\'' || c == b'\\')
    {
        return Cow::Borrowed(v);
    }
    let mut q = String::with_capacity(v.len() + 2);
    q.push('\'');
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('\'');
    Cow::Owned(q)
}

fn starts_with_ci(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.len() >= i + word.len() && b[i..i + word.len()].eq_ignore_ascii_case(word)
}

/// Remove passwords from any text that may hold a connection string or URL (error messages,
/// echoed command lines): `password=secret` -> `password=***`, `postgres://u:secret@h` ->
/// `postgres://u:***@h`. Also `PGPASSWORD=secret`. Errs on the side of removing too much: an
/// unquoted value runs to the next blank (or `&`/`#` in a URL query).
pub fn redact(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0; // text[copied..i] is pending verbatim output
    while i < b.len() {
        if b[i..].starts_with(b"://") {
            let start = i + 3;
            let mut end = start;
            while end < b.len() && !b"/?# \t\r\n'\"".contains(&b[end]) {
                end += 1;
            }
            if let Some(at) = text[start..end].rfind('@') {
                let userinfo = &text[start..start + at];
                if let Some(c) = userinfo.find(':') {
                    out.push_str(&text[copied..start + c + 1]);
                    out.push_str("***");
                    copied = start + at;
                }
                i = start + at;
            } else {
                i = start;
            }
            continue;
        }
        let word_start = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        let kw_len = if word_start && starts_with_ci(b, i, b"password") {
            8
        } else if word_start && starts_with_ci(b, i, b"pgpassword") {
            10
        } else {
            0
        };
        if kw_len > 0 {
            let mut j = i + kw_len;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            if j < b.len() && b[j] == b'=' {
                j += 1;
                while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                    j += 1;
                }
                let in_url = i > 0 && (b[i - 1] == b'?' || b[i - 1] == b'&');
                let vstart = j;
                if j < b.len() && (b[j] == b'\'' || b[j] == b'"') {
                    let q = b[j];
                    j += 1;
                    while j < b.len() && b[j] != q {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    j = (j + 1).min(b.len());
                } else {
                    while j < b.len()
                        && !b[j].is_ascii_whitespace()
                        && !(in_url && (b[j] == b'&' || b[j] == b'#'))
                    {
                        j += if b[j] == b'\\' && !in_url { 2 } else { 1 };
                    }
                    j = j.min(b.len());
                }
                out.push_str(&text[copied..vstart]);
                out.push_str("***");
                copied = j;
                i = j;
                continue;
            }
        }
        i += 1;
    }
    // `copied` always sits on a char boundary: it is set just after ASCII delimiters or at
    // positions found by `find` on ASCII characters.
    out.push_str(&text[copied.min(text.len())..]);
    out
}

// ----- password file -----

/// The host name a password-file entry is matched against (libpq `passwordFromFile`): the host,
/// except that a unix-socket connection through the default socket directory (or no host at all)
/// matches `localhost`.
pub fn pgpass_host(host: &str) -> &str {
    if host.is_empty() || host == default_socket_dir() {
        "localhost"
    } else {
        host
    }
}

/// One field of a password-file line: its unescaped text and whether it was a bare `*`.
fn pgpass_fields(line: &str) -> Vec<(String, bool)> {
    let mut fields = Vec::with_capacity(5);
    let mut cur = String::new();
    let mut raw_star = true;
    let mut raw_len = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if fields.len() < 4 && c == ':' {
            fields.push((std::mem::take(&mut cur), raw_star && raw_len == 1));
            raw_star = true;
            raw_len = 0;
            continue;
        }
        raw_len += 1;
        if c == '\\' {
            raw_star = false;
            if let Some(n) = chars.next() {
                cur.push(n);
            }
        } else {
            if c != '*' {
                raw_star = false;
            }
            cur.push(c);
        }
    }
    fields.push((cur, false));
    fields
}

/// Find the password for (host, port, dbname, user) in password-file text: lines
/// `hostname:port:database:username:password`, `*` matching anything in the first four fields,
/// `\:` and `\\` escaping, `#` comments, first match wins (PostgreSQL docs "The Password File").
/// `host` is matched as given; use [`pgpass_host`] to map unix sockets first.
pub fn pgpass_match(
    contents: &str,
    host: &str,
    port: u16,
    dbname: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    for line in contents.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = pgpass_fields(line);
        if f.len() < 5 {
            continue;
        }
        let want = [host, port.as_str(), dbname, user];
        if f[..4]
            .iter()
            .zip(want)
            .all(|((v, star), w)| *star || v == w)
        {
            let pw = f[4].0.clone();
            return if pw.is_empty() { None } else { Some(pw) };
        }
    }
    None
}

/// Look up a password in the password file `path` for `host`. Ignores the file (with libpq's
/// warning on stderr, naming the file, never its contents) when it is not a plain file or is
/// readable by group or others.
pub fn pgpass_lookup(path: &Path, host: &HostSpec, dbname: &str, user: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        eprintln!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        );
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "WARNING: password file \"{}\" has group or world access; permissions should be \
                 u=rw (0600) or less",
                path.display()
            );
            return None;
        }
    }
    let contents = std::fs::read_to_string(path).ok()?;
    pgpass_match(&contents, pgpass_host(&host.host), host.port, dbname, user)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| m.get(k).cloned()
    }

    fn resolve(dbname: Option<&str>, env: &[(&str, &str)]) -> Result<ConnConfig, Error> {
        let flags = ConnFlags {
            dbname: dbname.map(String::from),
            ..Default::default()
        };
        ConnConfig::resolve(&flags, &env_of(env))
    }

    fn hs(host: &str, port: u16) -> HostSpec {
        HostSpec {
            host: host.into(),
            port,
        }
    }

    fn config_err(r: Result<ConnConfig, Error>) -> String {
        match r {
            Err(Error::Config(m)) => m,
            Err(e) => panic!("expected Error::Config, got {e}"),
            Ok(c) => panic!("expected an error, got {}", c.redacted()),
        }
    }

    #[test]
    fn defaults_are_libpqs() {
        let c = resolve(None, &[("USER", "ignored-when-getpwuid-works")]).unwrap();
        assert_eq!(c.hosts, vec![hs(default_socket_dir(), 5432)]);
        let me = os_user_name().unwrap();
        assert_eq!(c.user, me);
        assert_eq!(c.dbname, me);
        assert_eq!(c.sslmode, SslMode::Prefer);
        assert_eq!(c.application_name, "stampede");
        assert_eq!(c.password, None);
        assert_eq!(c.connect_timeout, None);
        assert_eq!(c.options, None);
    }

    #[test]
    fn plain_dbname() {
        let c = resolve(Some("bench"), &[("PGDATABASE", "other")]).unwrap();
        assert_eq!(c.dbname, "bench");
    }

    #[test]
    fn url_forms() {
        let c = resolve(Some("postgresql://alice:s%40cret@db.example:6543/my%20db?sslmode=require&application_name=x"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("db.example", 6543)]);
        assert_eq!(c.user, "alice");
        assert_eq!(c.password, Some(Password("s@cret".into())));
        assert_eq!(c.dbname, "my db");
        assert_eq!(c.sslmode, SslMode::Require);
        assert_eq!(c.application_name, "x");

        let c = resolve(Some("postgres://[::1]:5433,[fe80::2],h3:7/db"), &[]).unwrap();
        assert_eq!(
            c.hosts,
            vec![hs("::1", 5433), hs("fe80::2", 5432), hs("h3", 7)]
        );

        let c = resolve(Some("postgresql:///bench?host=/run/pg&port=5499"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("/run/pg", 5499)]);
        assert_eq!(c.dbname, "bench");

        let c = resolve(Some("postgresql://%2Ftmp%2Fsock/db"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("/tmp/sock", 5432)]);

        let c = resolve(
            Some("postgresql://bob@host?ssl=true&connect_timeout=1"),
            &[],
        )
        .unwrap();
        assert_eq!(c.user, "bob");
        assert_eq!(c.dbname, "bob");
        assert_eq!(c.sslmode, SslMode::Require);
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(2)));

        let c = resolve(Some("postgresql://"), &[("PGHOST", "envhost")]).unwrap();
        assert_eq!(c.hosts, vec![hs("envhost", 5432)]);
    }

    #[test]
    fn kv_forms_and_quoting() {
        let c = resolve(
            Some(r"host=h1 port = 6000 user='o\'brien' password='a b\\c' dbname=x\ y options='-c work_mem=64MB'"),
            &[],
        )
        .unwrap();
        assert_eq!(c.hosts, vec![hs("h1", 6000)]);
        assert_eq!(c.user, "o'brien");
        assert_eq!(c.password, Some(Password(r"a b\c".into())));
        assert_eq!(c.dbname, "x y");
        assert_eq!(c.options.as_deref(), Some("-c work_mem=64MB"));

        let c = resolve(Some("dbname=d fallback_application_name=fb"), &[]).unwrap();
        assert_eq!(c.application_name, "fb");
        let c = resolve(
            Some("dbname=d fallback_application_name=fb"),
            &[("PGAPPNAME", "env")],
        )
        .unwrap();
        assert_eq!(c.application_name, "env");
        let c = resolve(Some("hostaddr=127.0.0.1 dbname=d"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("127.0.0.1", 5432)]);
        // Empty values count as not given.
        let c = resolve(Some("host='' dbname=d"), &[("PGHOST", "eh")]).unwrap();
        assert_eq!(c.hosts, vec![hs("eh", 5432)]);
    }

    #[test]
    fn precedence_string_over_flags_over_env_over_defaults() {
        let env = env_of(&[
            ("PGHOST", "envhost"),
            ("PGPORT", "1111"),
            ("PGUSER", "envuser"),
            ("PGDATABASE", "envdb"),
            ("PGPASSWORD", "envpw"),
            ("PGSSLMODE", "disable"),
            ("PGAPPNAME", "envapp"),
            ("PGCONNECT_TIMEOUT", "7"),
            ("PGOPTIONS", "-c x=1"),
            ("PGSSLROOTCERT", "/env/root.crt"),
            ("PGPASSFILE", "/env/pgpass"),
        ]);
        // Env over defaults.
        let c = ConnConfig::resolve(&ConnFlags::default(), &env).unwrap();
        assert_eq!(c.hosts, vec![hs("envhost", 1111)]);
        assert_eq!(c.user, "envuser");
        assert_eq!(c.dbname, "envdb");
        assert_eq!(c.password, Some(Password("envpw".into())));
        assert_eq!(c.sslmode, SslMode::Disable);
        assert_eq!(c.application_name, "envapp");
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(7)));
        assert_eq!(c.options.as_deref(), Some("-c x=1"));
        assert_eq!(c.sslrootcert, Some(PathBuf::from("/env/root.crt")));
        assert_eq!(c.passfile, Some(PathBuf::from("/env/pgpass")));
        // Flags over env.
        let flags = ConnFlags {
            host: Some("flaghost".into()),
            port: Some("2222".into()),
            user: Some("flaguser".into()),
            dbname: Some("flagdb".into()),
        };
        let c = ConnConfig::resolve(&flags, &env).unwrap();
        assert_eq!(c.hosts, vec![hs("flaghost", 2222)]);
        assert_eq!((c.user.as_str(), c.dbname.as_str()), ("flaguser", "flagdb"));
        // Connection string over flags.
        let flags = ConnFlags {
            dbname: Some(
                "host=strhost port=3333 user=struser dbname=strdb sslmode=verify-full".into(),
            ),
            ..flags
        };
        let c = ConnConfig::resolve(&flags, &env).unwrap();
        assert_eq!(c.hosts, vec![hs("strhost", 3333)]);
        assert_eq!((c.user.as_str(), c.dbname.as_str()), ("struser", "strdb"));
        assert_eq!(c.sslmode, SslMode::VerifyFull);
        // A connection string without host keeps the flag's host.
        let flags = ConnFlags {
            dbname: Some("postgresql:///x".into()),
            ..flags
        };
        let c = ConnConfig::resolve(&flags, &env).unwrap();
        assert_eq!(c.hosts, vec![hs("flaghost", 2222)]);
        assert_eq!(c.dbname, "x");
        // PGHOME-less passfile default: ~/.pgpass under $HOME.
        let c = resolve(None, &[("HOME", "/home/zed")]).unwrap();
        assert_eq!(c.passfile, Some(PathBuf::from("/home/zed/.pgpass")));
    }

    #[test]
    fn multi_host_lists() {
        let c = resolve(Some("host=a,b,c port=1"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 1), hs("c", 1)]);
        let c = resolve(Some("host=a,b port=1,2"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 2)]);
        let c = resolve(Some("host=a,,/s port=,9,"), &[]).unwrap();
        assert_eq!(
            c.hosts,
            vec![hs("a", 5432), hs(default_socket_dir(), 9), hs("/s", 5432)]
        );
        let c = resolve(Some("postgresql://a:1,b/db"), &[]).unwrap();
        assert_eq!(c.hosts, vec![hs("a", 1), hs("b", 5432)]);
        let m = config_err(resolve(Some("host=a,b,c port=1,2"), &[]));
        assert_eq!(m, "could not match 2 port numbers to 3 hosts");
        let c = resolve(Some("host=a,b port=1,2"), &[]).unwrap();
        assert_eq!(
            c.redacted(),
            format!(
                "host=a,b port=1,2 user={0} dbname={0} sslmode=prefer",
                c.user
            )
        );
    }

    #[test]
    fn bad_inputs_have_clear_messages() {
        let cases: &[(&str, &str)] = &[
            ("host=a bogus=1", "invalid connection option \"bogus\""),
            ("host=a port", "missing \"=\" after \"port\""),
            ("host='a", "unterminated quoted string"),
            ("port=70000", "invalid port number: \"70000\""),
            ("port=x", "invalid port number: \"x\""),
            ("sslmode=sometimes", "invalid sslmode value: \"sometimes\""),
            (
                "connect_timeout=soon",
                "invalid integer value \"soon\" for connection option \"connect_timeout\"",
            ),
            (
                "postgresql://h/db?nosuch=1",
                "invalid connection option \"nosuch\"",
            ),
            ("postgresql://h/db?sslmode", "missing key/value separator"),
            ("postgresql://[::1/db", "matching \"]\""),
            ("postgresql://h/d%zzb", "invalid percent-encoded token"),
            ("postgresql://h/d%00b", "forbidden value %00"),
            ("target_session_attrs=read-write", "target_session_attrs"),
        ];
        for (input, want) in cases {
            let m = config_err(resolve(Some(input), &[]));
            assert!(m.contains(want), "{input}: {m:?} should contain {want:?}");
        }
        let m = config_err(resolve(None, &[("PGSSLMODE", "nope")]));
        assert!(m.contains("nope"));
        // Errors never echo a password.
        let m = config_err(resolve(
            Some("postgresql://u:topsecret@h/db?password=x%zz"),
            &[],
        ));
        assert!(!m.contains("topsecret"), "{m}");
    }

    #[test]
    fn redacted_never_shows_the_password() {
        let c = resolve(
            Some("postgresql://u:hunter2@h:5/d"),
            &[("PGPASSWORD", "pw2")],
        )
        .unwrap();
        let r = c.redacted();
        assert_eq!(r, "host=h port=5 user=u dbname=d sslmode=prefer");
        assert!(!format!("{c:?}").contains("hunter2"));
        let c = resolve(Some("user='a b' dbname=x host=/tmp"), &[]).unwrap();
        assert_eq!(
            c.redacted(),
            "host=/tmp port=5432 user='a b' dbname=x sslmode=prefer"
        );
    }

    #[test]
    fn redact_scrubs_conninfo_and_urls() {
        let cases: &[(&str, &str)] = &[
            ("password=secret host=h", "password=*** host=h"),
            (
                "host=h PASSWORD = 'se cr\\'et' user=u",
                "host=h PASSWORD = *** user=u",
            ),
            ("postgres://u:secret@h/db", "postgres://u:***@h/db"),
            (
                "x postgresql://u:s%40c@h1,h2:5/db?sslmode=require y",
                "x postgresql://u:***@h1,h2:5/db?sslmode=require y",
            ),
            (
                "postgresql://h/db?password=secret&sslmode=require",
                "postgresql://h/db?password=***&sslmode=require",
            ),
            ("PGPASSWORD=secret pgbench", "PGPASSWORD=*** pgbench"),
            ("postgresql://u@h/db", "postgresql://u@h/db"),
            (
                "password authentication failed for user \"u\"",
                "password authentication failed for user \"u\"",
            ),
            ("passfile=/x dbname=d", "passfile=/x dbname=d"),
            ("mypassword=x", "mypassword=x"),
            ("ünïcode password=sécret ok", "ünïcode password=*** ok"),
            ("password=", "password=***"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), *want, "input {input:?}");
        }
        for secret in ["secret", "se cr\\'et", "s%40c"] {
            for (input, _) in cases {
                if input.contains(secret) {
                    assert!(!redact(input).contains(secret));
                }
            }
        }
    }

    #[test]
    fn pgpass_rules() {
        let file = "\
# comment
db.example:5432:bench:alice:pw1
*:5433:*:alice:pw2
localhost:*:*:bob:pw3
h\\:x:*:*:carol:pa\\:ss\\\\w
/run/sock:*:*:dave:pw5
*:*:*:*:
*:*:*:*:fallback
";
        assert_eq!(
            pgpass_match(file, "db.example", 5432, "bench", "alice").as_deref(),
            Some("pw1")
        );
        assert_eq!(
            pgpass_match(file, "other", 5433, "x", "alice").as_deref(),
            Some("pw2")
        );
        assert_eq!(
            pgpass_match(file, "localhost", 1, "x", "bob").as_deref(),
            Some("pw3")
        );
        assert_eq!(
            pgpass_match(file, "h:x", 1, "x", "carol").as_deref(),
            Some("pa:ss\\w")
        );
        assert_eq!(
            pgpass_match(file, "/run/sock", 1, "x", "dave").as_deref(),
            Some("pw5")
        );
        // First match wins, even when its password is empty (then: no password).
        assert_eq!(pgpass_match(file, "db.example", 1, "bench", "zed"), None);
        assert_eq!(
            pgpass_match("*:*:*:*:pw", "h", 1, "d", "u").as_deref(),
            Some("pw")
        );
        // `\*` is a literal star, not a wildcard.
        assert_eq!(pgpass_match("\\*:*:*:*:pw", "h", 1, "d", "u"), None);
        assert_eq!(
            pgpass_match("\\*:*:*:*:pw", "*", 1, "d", "u").as_deref(),
            Some("pw")
        );
        // Short lines are skipped; CRLF endings are fine.
        assert_eq!(
            pgpass_match("a:b\r\nh:1:d:u:pw\r\n", "h", 1, "d", "u").as_deref(),
            Some("pw")
        );
        // A password may itself contain colons.
        assert_eq!(
            pgpass_match("h:1:d:u:a:b", "h", 1, "d", "u").as_deref(),
            Some("a:b")
        );
        // The default socket directory matches `localhost`; other socket directories match as is.
        assert_eq!(pgpass_host(default_socket_dir()), "localhost");
        assert_eq!(pgpass_host("/elsewhere"), "/elsewhere");
        assert_eq!(pgpass_host("db"), "db");
    }

    #[test]
    fn pgpass_file_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pgpass");
        std::fs::write(&p, "*:*:*:*:filepw\n").unwrap();
        let host = hs("db", 5432);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            pgpass_lookup(&p, &host, "d", "u").as_deref(),
            Some("filepw")
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(pgpass_lookup(&p, &host, "d", "u"), None);
        assert_eq!(pgpass_lookup(dir.path(), &host, "d", "u"), None);
        assert_eq!(
            pgpass_lookup(&dir.path().join("missing"), &host, "d", "u"),
            None
        );
    }

    #[test]
    fn unix_socket_paths() {
        assert_eq!(
            hs("/tmp", 5433).socket_path(),
            PathBuf::from("/tmp/.s.PGSQL.5433")
        );
        assert!(hs("/tmp", 1).is_unix());
        assert!(!hs("localhost", 1).is_unix());
        assert_eq!(hs("/a b", 1).describe(), "host='/a b' port=1");
    }
}
