//! Where and how to reach a MySQL or MariaDB server, by MySQL's conventions: the URL form
//! `mysql://user:pass@host:port/db?ssl-mode=REQUIRED&socket=/path/mysqld.sock` (the URI syntax of
//! MySQL Shell and Connector/J, "Connecting to the Server Using URI-Like Strings"), with the
//! option names of the `mysql` client (`--ssl-mode`, `--ssl-ca`, `--ssl-cert`, `--ssl-key`,
//! `--socket`, `--connect-timeout`), `MYSQL_PWD` for the password and `$USER` for the user, as
//! the `mysql` client takes them.
//!
//! Owns: parsing (percent-decoding of every part), defaults, and the only printable forms of a
//! target ([`Conninfo::redacted`], [`Conninfo::describe`]), which never contain the password.
//!
//! Defaults and choices (each the `mysql` client's unless said):
//! * user: `$USER`, else the login name of the effective uid; port 3306; no database;
//!   ssl-mode PREFERRED.
//! * connect-timeout 10 s (not the client's: it waits forever; [`DEFAULT_CONNECT_TIMEOUT`]),
//!   from the URL's `connect-timeout` or `~/.my.cnf`'s; 0 waits forever.
//! * A password may hold any character percent-encoded, and a raw `@` or `?`: the user info
//!   ends where PostgreSQL's URLs' does (`pg::conninfo::userinfo_end`).
//! * `localhost` without a port and without `socket=` means the unix socket at
//!   `$MYSQL_UNIX_PORT`, else Debian's `/run/mysqld/mysqld.sock` (as libmysqlclient). Unlike
//!   libmysqlclient, `localhost:3306` (an explicit port) means TCP: a port given is a port used.
//! * A unix socket counts as a secure transport (MySQL 8's rule for `--ssl-mode=REQUIRED`): no
//!   TLS on it, whatever the mode.
//! * `~/.my.cnf`'s `[client]` section ("Using Option Files"): `user`, `password`, `host`,
//!   `port`, `socket`, `database`, `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key`, as the `mysql`
//!   client reads them: above `$USER` and `MYSQL_PWD`, below what a URL says. Only the user's
//!   own file (`$HOME/.my.cnf`): a benchmark should not pick up a server's `/etc/mysql` setup.
//!   For a URL, the file's host, port and socket do not apply (the URL names the server).

use std::path::PathBuf;
use std::time::Duration;

use pg::Error;

/// `--ssl-mode` (MySQL 5.7.11+ client option; the names are the server documentation's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SslMode {
    /// No TLS.
    Disabled,
    /// TLS when the server offers it, else plaintext; the certificate is not checked. A TLS
    /// handshake that fails is an error (no second, plaintext attempt).
    #[default]
    Preferred,
    /// TLS or no connection; the certificate is not checked.
    Required,
    /// TLS, and the server's certificate chain must lead to a trusted CA (`ssl-ca`, else the
    /// system's roots); the host name is not checked.
    VerifyCa,
    /// As VERIFY_CA, and the certificate must name the host.
    VerifyIdentity,
}

impl SslMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// Whether a TCP connection must be encrypted.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Required | SslMode::VerifyCa | SslMode::VerifyIdentity
        )
    }
}

impl std::fmt::Display for SslMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SslMode {
    type Err = Error;
    /// Case-insensitive, `-` or `_` (`verify-ca` = `VERIFY_CA`).
    fn from_str(s: &str) -> Result<SslMode, Error> {
        Ok(match s.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(Error::Config(format!(
                    "invalid ssl-mode \"{s}\": expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA \
                     or VERIFY_IDENTITY"
                )))
            }
        })
    }
}

/// A password: its `Debug` never shows it, and nothing in this crate formats it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(***)")
    }
}

/// How long connecting (and logging in) may take when neither the URL's `connect-timeout` nor
/// `~/.my.cnf`'s says: the `mysql` client waits forever, so a server that accepts the connection
/// and never answers would hang the command without a word. `connect-timeout=0` waits forever.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Debian's default server socket (`/run/mysqld/mysqld.sock`, MariaDB's and MySQL's packages).
pub const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// A MySQL target. Build it with [`Conninfo::parse`] or fill the fields; print it only with
/// [`Conninfo::redacted`] or [`Conninfo::describe`].
#[derive(Clone, Debug, PartialEq)]
pub struct Conninfo {
    pub host: String,
    pub port: u16,
    /// Connect to this unix socket instead of `host:port`.
    pub socket: Option<PathBuf>,
    pub user: String,
    pub password: Option<Password>,
    /// The default database (`CLIENT_CONNECT_WITH_DB`); none when empty.
    pub database: Option<String>,
    pub ssl_mode: SslMode,
    /// `ssl-ca`: trusted CA certificates (PEM) for VERIFY_CA / VERIFY_IDENTITY.
    pub ssl_ca: Option<PathBuf>,
    /// `ssl-cert` / `ssl-key`: a client certificate and its key (PEM).
    pub ssl_cert: Option<PathBuf>,
    pub ssl_key: Option<PathBuf>,
    pub connect_timeout: Option<Duration>,
}

impl Conninfo {
    /// A target with every default (user from the environment, `localhost`'s default socket,
    /// `MYSQL_PWD`).
    pub fn new() -> Conninfo {
        Self::with_env(&|k| std::env::var(k).ok())
    }

    fn with_env(env: &dyn Fn(&str) -> Option<String>) -> Conninfo {
        Self::plain_env(env)
            .with_option_file(env, true)
            .default_socket(env, false)
    }

    /// The defaults and the environment, without the option file.
    fn plain_env(env: &dyn Fn(&str) -> Option<String>) -> Conninfo {
        Conninfo {
            host: "localhost".into(),
            port: 3306,
            socket: None,
            user: env("USER")
                .filter(|u| !u.is_empty())
                .or_else(os_user)
                .unwrap_or_else(|| "root".into()),
            password: env("MYSQL_PWD").filter(|p| !p.is_empty()).map(Password),
            database: None,
            ssl_mode: SslMode::Preferred,
            ssl_ca: None,
            ssl_cert: None,
            ssl_key: None,
            connect_timeout: Some(DEFAULT_CONNECT_TIMEOUT),
        }
    }

    /// `$HOME/.my.cnf`'s `[client]` section on top (see the module header); `server` says
    /// whether its host, port and socket apply. An unreadable or absent file changes nothing.
    fn with_option_file(mut self, env: &dyn Fn(&str) -> Option<String>, server: bool) -> Self {
        let Some(home) = env("HOME").filter(|h| !h.is_empty()) else {
            return self;
        };
        let Ok(text) = std::fs::read_to_string(PathBuf::from(home).join(".my.cnf")) else {
            return self;
        };
        for (k, v) in client_options(&text) {
            let path = || (!v.is_empty()).then(|| PathBuf::from(&v));
            match k.as_str() {
                "user" if !v.is_empty() => self.user = v,
                "password" => self.password = Some(Password(v)),
                "database" if !v.is_empty() => self.database = Some(v),
                "ssl-mode" => {
                    if let Ok(m) = v.parse() {
                        self.ssl_mode = m;
                    }
                }
                "ssl-ca" => self.ssl_ca = path(),
                "ssl-cert" => self.ssl_cert = path(),
                "ssl-key" => self.ssl_key = path(),
                "host" if server && !v.is_empty() => self.host = v,
                "port" if server => {
                    if let Ok(p) = v.parse() {
                        self.port = p;
                    }
                }
                "socket" if server => self.socket = path(),
                "connect-timeout" => {
                    if let Ok(t) = v.parse::<u64>() {
                        self.connect_timeout = (t > 0).then(|| Duration::from_secs(t));
                    }
                }
                _ => {}
            }
        }
        self
    }

    /// `localhost` without an explicit port or socket means the default socket (see the module
    /// header).
    fn default_socket(mut self, env: &dyn Fn(&str) -> Option<String>, port_given: bool) -> Self {
        if self.socket.is_none() && self.host == "localhost" && !port_given {
            self.socket = Some(PathBuf::from(
                env("MYSQL_UNIX_PORT")
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| DEFAULT_SOCKET.into()),
            ));
        }
        self
    }

    /// Parse a `mysql://` URL; what it leaves out comes from the environment (`$USER`,
    /// `MYSQL_PWD`, `MYSQL_UNIX_PORT`) and the defaults.
    pub fn parse(url: &str) -> Result<Conninfo, Error> {
        Self::parse_with_env(url, &|k| std::env::var(k).ok())
    }

    /// [`Conninfo::parse`] with the environment given as a function (for tests).
    pub fn parse_with_env(
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Conninfo, Error> {
        let bad = |what: String| Error::Config(format!("invalid MySQL URL: {what}"));
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| bad("it must start with mysql://".into()))?;
        // A password's pieces may have spilled into the other parts: no error quotes them.
        if pg::conninfo::may_spill_password(rest) {
            return Self::parse_rest(rest, env).map_err(|e| match e {
                Error::Config(_) => bad(
                    "it has an '@' after a '/', so where its user name and password end is \
                     unclear (write a '/' in a password as %2F; any character may be \
                     percent-encoded)"
                        .into(),
                ),
                e => e,
            });
        }
        Self::parse_rest(rest, env)
    }

    /// The URL after its scheme; errors may quote its parts.
    fn parse_rest(rest: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Conninfo, Error> {
        let bad = |what: String| Error::Config(format!("invalid MySQL URL: {what}"));
        let mut c = Conninfo::plain_env(env).with_option_file(env, false);
        // The user info ends where PostgreSQL's URLs' does: a password may hold a raw '@' or
        // '?' (percent-encoded, any character).
        let (userinfo, rest) = match pg::conninfo::userinfo_end(rest) {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((a, q)) => (a, Some(q)),
            None => (rest, None),
        };
        let (hostport, path) = match rest.split_once('/') {
            Some((a, p)) => (a, p),
            None => (rest, ""),
        };
        if let Some(ui) = userinfo {
            let (u, p) = match ui.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (ui, None),
            };
            let u = decode(u).map_err(|e| bad(format!("user: {e}")))?;
            if !u.is_empty() {
                c.user = u;
            }
            if let Some(p) = p {
                // The message names the part, never the text.
                c.password = Some(Password(
                    decode(p).map_err(|e| bad(format!("password: {e}")))?,
                ));
            }
        }
        let mut port_given = false;
        let (h, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("unterminated [IPv6 address]".into()))?;
            (h, after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        let h = decode(h).map_err(|e| bad(format!("host: {e}")))?;
        if !h.is_empty() {
            c.host = h;
        }
        if let Some(p) = port.filter(|p| !p.is_empty()) {
            c.port = p
                .parse()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| bad(format!("port \"{p}\" is not a number from 1 to 65535")))?;
            port_given = true;
        }
        let db = decode(path).map_err(|e| bad(format!("database: {e}")))?;
        if !db.is_empty() {
            c.database = Some(db);
        }
        for kv in query.unwrap_or("").split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let k = decode(k).map_err(|e| bad(format!("option name: {e}")))?;
            let v = decode(v).map_err(|e| bad(format!("option {k}: {e}")))?;
            let path = || (!v.is_empty()).then(|| PathBuf::from(&v));
            match k.replace('_', "-").to_ascii_lowercase().as_str() {
                "ssl-mode" | "sslmode" => c.ssl_mode = v.parse()?,
                "ssl-ca" => c.ssl_ca = path(),
                "ssl-cert" => c.ssl_cert = path(),
                "ssl-key" => c.ssl_key = path(),
                "socket" => c.socket = path(),
                "connect-timeout" => {
                    let s: u64 = v.parse().map_err(|_| {
                        bad(format!(
                            "connect-timeout \"{v}\" is not a number of seconds"
                        ))
                    })?;
                    c.connect_timeout = (s > 0).then(|| Duration::from_secs(s));
                }
                _ => {
                    return Err(bad(format!(
                        "unknown option \"{k}\" (known: ssl-mode, ssl-ca, ssl-cert, ssl-key, \
                         socket, connect-timeout)"
                    )))
                }
            }
        }
        Ok(c.default_socket(env, port_given))
    }

    /// The target as a URL without its password (`mysql://root:***@127.0.0.1:3306/db`): the
    /// only form of a whole target that may be printed.
    pub fn redacted(&self) -> String {
        self.url(self.password.as_ref().map(|_| "***"))
    }

    /// The URL with `password` in it, percent-encoded (`/` included): for a command whose
    /// purpose is to say how to connect (`stampede server start --mysql`), never for a report.
    pub fn url_with_password(&self, password: &str) -> String {
        self.url(Some(&encode_keeping(password, b"-._~")))
    }

    /// The URL, with `password` (already encoded) after the user when given.
    fn url(&self, password: Option<&str>) -> String {
        let mut s = format!("mysql://{}", encode(&self.user));
        if let Some(pw) = password {
            s.push(':');
            s.push_str(pw);
        }
        s.push('@');
        if self.host.contains(':') {
            s.push_str(&format!("[{}]", self.host));
        } else {
            s.push_str(&encode(&self.host));
        }
        if self.socket.is_none() {
            s.push_str(&format!(":{}", self.port));
        }
        s.push('/');
        if let Some(db) = &self.database {
            s.push_str(&encode(db));
        }
        let mut opts = Vec::new();
        if let Some(p) = &self.socket {
            opts.push(format!("socket={}", encode(&p.to_string_lossy())));
        }
        if self.ssl_mode != SslMode::Preferred {
            opts.push(format!("ssl-mode={}", self.ssl_mode));
        }
        for (k, v) in [
            ("ssl-ca", &self.ssl_ca),
            ("ssl-cert", &self.ssl_cert),
            ("ssl-key", &self.ssl_key),
        ] {
            if let Some(p) = v {
                opts.push(format!("{k}={}", encode(&p.to_string_lossy())));
            }
        }
        match self.connect_timeout {
            Some(DEFAULT_CONNECT_TIMEOUT) => {}
            Some(t) => opts.push(format!("connect-timeout={}", t.as_secs())),
            None => opts.push("connect-timeout=0".into()),
        }
        if !opts.is_empty() {
            s.push('?');
            s.push_str(&opts.join("&"));
        }
        s
    }

    /// Where the session goes, for messages: `socket "/run/mysqld/mysqld.sock"` or
    /// `host "127.0.0.1" port 3306`.
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(p) => format!("socket \"{}\"", p.display()),
            None => format!("host \"{}\" port {}", self.host, self.port),
        }
    }

    /// This target with another default database.
    pub fn with_database(&self, db: &str) -> Conninfo {
        Conninfo {
            database: (!db.is_empty()).then(|| db.to_string()),
            ..self.clone()
        }
    }
}

impl Default for Conninfo {
    fn default() -> Self {
        Conninfo::new()
    }
}

/// The login name of the effective uid.
fn os_user() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage, read at once (single call site
    // at configuration time).
    unsafe {
        let p = libc::getpwuid(libc::geteuid());
        if p.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr((*p).pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// Percent-decoding (RFC 3986, 2.1); the result must be UTF-8.
fn decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent-encoding at byte {i}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 after percent-decoding".to_string())
}

/// Percent-encoding of everything but RFC 3986's unreserved characters and `/` (paths stay
/// readable).
fn encode(s: &str) -> String {
    encode_keeping(s, b"-._~/")
}

/// Percent-encoding of everything but letters, digits and `keep`.
fn encode_keeping(s: &str, keep: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || keep.contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

/// The `[client]` group of an option file as (name, value) pairs, names with `_` spelled `-`
/// and values unquoted ("Using Option Files": `#` and `;` start comments, `name=value` or a
/// bare `name`, values may be quoted; `!include` directives are not followed).
fn client_options(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_client = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';', '!']) {
            continue;
        }
        if let Some(group) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_client = group.trim().eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        out.push((
            k.trim().replace('_', "-").to_ascii_lowercase(),
            v.to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn my_cnf_client_section_sits_between_the_environment_and_the_url() {
        let home = std::env::temp_dir().join(format!("stampede-mycnf-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".my.cnf"),
            "# comment\n[mysqld]\nuser=server_user\n[client]\nuser = bench\npassword=\"s3 cret\"\n\
             ssl_mode=DISABLED\nhost=db.example\nport=3310\n; more\n[mysql]\ndatabase=x\n",
        )
        .unwrap();
        let h = home.to_string_lossy().into_owned();
        let env = |k: &str| match k {
            "USER" => Some("alice".to_string()),
            "MYSQL_PWD" => Some("from-env".to_string()),
            "HOME" => Some(h.clone()),
            _ => None,
        };
        let c = Conninfo::with_env(&env);
        assert_eq!(c.user, "bench", "[client] over $USER; [mysqld] ignored");
        assert_eq!(
            c.password,
            Some(Password("s3 cret".into())),
            "over MYSQL_PWD, unquoted"
        );
        assert_eq!(c.ssl_mode, SslMode::Disabled);
        assert_eq!(
            (c.host.as_str(), c.port, c.socket.clone()),
            ("db.example", 3310, None)
        );
        assert_eq!(c.database, None, "[mysql] is another group");
        // A URL names the server; the file still gives what the URL leaves out.
        let u = Conninfo::parse_with_env("mysql://127.0.0.1/db", &env).unwrap();
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", 3306));
        assert_eq!(u.user, "bench");
        assert_eq!(u.password, Some(Password("s3 cret".into())));
        let u = Conninfo::parse_with_env("mysql://root:pw@127.0.0.1/db", &env).unwrap();
        assert_eq!(
            (u.user.as_str(), u.password.clone()),
            ("root", Some(Password("pw".into())))
        );
        assert!(!u.redacted().contains("s3 cret") && !format!("{u:?}").contains("s3 cret"));
        std::fs::remove_dir_all(&home).unwrap();
    }

    fn env(k: &str) -> Option<String> {
        match k {
            "USER" => Some("alice".into()),
            _ => None,
        }
    }

    #[test]
    fn a_full_url_with_percent_encoding() {
        let c = Conninfo::parse_with_env(
            "mysql://bob:p%40ss%3Aw%2Fd@db.example:3307/sb%20test?ssl-mode=verify_identity&ssl-ca=/etc/ca.pem&connect-timeout=5",
            &env,
        )
        .unwrap();
        assert_eq!(c.user, "bob");
        assert_eq!(c.password, Some(Password("p@ss:w/d".into())));
        assert_eq!((c.host.as_str(), c.port), ("db.example", 3307));
        assert_eq!(c.database.as_deref(), Some("sb test"));
        assert_eq!(c.ssl_mode, SslMode::VerifyIdentity);
        assert_eq!(c.ssl_ca, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(5)));
        assert_eq!(c.socket, None);
        let shown = c.redacted();
        assert_eq!(
            shown,
            "mysql://bob:***@db.example:3307/sb%20test?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/ca.pem&connect-timeout=5"
        );
        assert!(!shown.contains("p@ss") && !shown.contains("p%40ss"));
        assert!(
            !format!("{c:?}").contains("p@ss"),
            "Debug shows no password"
        );
        assert_eq!(c.describe(), "host \"db.example\" port 3307");
        // The URL that says how to connect parses back to the same password, '/' included.
        let url = c.url_with_password("p@ss:w/d");
        assert!(
            url.starts_with("mysql://bob:p%40ss%3Aw%2Fd@db.example:3307/"),
            "{url}"
        );
        let back = Conninfo::parse_with_env(&url, &env).unwrap();
        assert_eq!(back.password, Some(Password("p@ss:w/d".into())));
    }

    #[test]
    fn defaults_come_from_the_environment() {
        let c = Conninfo::parse_with_env("mysql://127.0.0.1", &env).unwrap();
        assert_eq!(c.user, "alice");
        assert_eq!(c.port, 3306);
        assert_eq!(c.password, None);
        assert_eq!(c.database, None);
        assert_eq!(c.ssl_mode, SslMode::Preferred);
        let with_pwd = |k: &str| match k {
            "MYSQL_PWD" => Some("s3cret".into()),
            "MYSQL_UNIX_PORT" => Some("/tmp/my.sock".into()),
            k => env(k),
        };
        let c = Conninfo::parse_with_env("mysql://root@localhost/db", &with_pwd).unwrap();
        assert_eq!(c.password, Some(Password("s3cret".into())));
        assert_eq!(c.socket, Some(PathBuf::from("/tmp/my.sock")));
        assert_eq!(
            c.redacted(),
            "mysql://root:***@localhost/db?socket=/tmp/my.sock"
        );
        // A password in the URL wins over MYSQL_PWD.
        let c = Conninfo::parse_with_env("mysql://root:x@h/db", &with_pwd).unwrap();
        assert_eq!(c.password, Some(Password("x".into())));
    }

    #[test]
    fn localhost_means_the_socket_unless_a_port_is_given() {
        let c = Conninfo::parse_with_env("mysql://root@localhost/db", &env).unwrap();
        assert_eq!(c.socket, Some(PathBuf::from(DEFAULT_SOCKET)));
        let c = Conninfo::parse_with_env("mysql://root@localhost:3306/db", &env).unwrap();
        assert_eq!(c.socket, None);
        let c = Conninfo::parse_with_env(
            "mysql://root@localhost/db?socket=%2Ftmp%2Fx%2Fmysqld.sock",
            &env,
        )
        .unwrap();
        assert_eq!(c.socket, Some(PathBuf::from("/tmp/x/mysqld.sock")));
        assert_eq!(c.describe(), "socket \"/tmp/x/mysqld.sock\"");
        let c = Conninfo::parse_with_env("mysql://[::1]:3307/", &env).unwrap();
        assert_eq!((c.host.as_str(), c.port), ("::1", 3307));
        assert_eq!(c.redacted(), "mysql://alice@[::1]:3307/");
    }

    #[test]
    fn a_password_may_hold_reserved_characters() {
        for (url, pw) in [
            (
                "mysql://bob:Zq?Wk#9@db1:3307/sb?ssl-mode=disabled",
                "Zq?Wk#9",
            ),
            ("mysql://bob:Zq@Wk@db1:3307/sb", "Zq@Wk"),
            (
                "mysql://bob:Zq%3FW%23k%40x%2F9%27@db1:3307/sb",
                "Zq?W#k@x/9'",
            ),
        ] {
            let c = Conninfo::parse_with_env(url, &env).unwrap();
            assert_eq!(c.password, Some(Password(pw.into())), "{url}");
            assert_eq!(
                (
                    c.user.as_str(),
                    c.host.as_str(),
                    c.port,
                    c.database.as_deref()
                ),
                ("bob", "db1", 3307, Some("sb")),
                "{url}"
            );
        }
        // A raw '/' cannot be told from the path: refused, quoting nothing of the URL.
        for url in ["mysql://bob:Zq/Wk9@db1:3307/sb", "mysql://bob:Zq/Wk9:x@db1"] {
            let e = Conninfo::parse_with_env(url, &env).unwrap_err().to_string();
            assert!(
                e.contains("%2F") && !e.contains("Wk9") && !e.contains("Zq/"),
                "{e}"
            );
        }
        let c = Conninfo::parse_with_env("mysql://db1/sb", &env).unwrap();
        assert_eq!(c.connect_timeout, Some(DEFAULT_CONNECT_TIMEOUT));
        let c = Conninfo::parse_with_env("mysql://db1/sb?connect-timeout=0", &env).unwrap();
        assert_eq!(c.connect_timeout, None, "0 waits forever");
        assert_eq!(c.redacted(), "mysql://alice@db1:3306/sb?connect-timeout=0");
    }

    #[test]
    fn bad_urls_say_what_is_wrong_without_the_password() {
        for (url, needle) in [
            ("postgresql://x@h/db", "must start with mysql://"),
            ("mysql://h:99999/db", "port \"99999\""),
            ("mysql://h:abc/db", "port \"abc\""),
            (
                "mysql://h/db?ssl-mode=sometimes",
                "invalid ssl-mode \"sometimes\"",
            ),
            (
                "mysql://h/db?sslrootcert=x",
                "unknown option \"sslrootcert\"",
            ),
            ("mysql://u:se%ZZcret@h/db", "password: bad percent-encoding"),
            (
                "mysql://h/db?connect-timeout=soon",
                "connect-timeout \"soon\"",
            ),
        ] {
            let e = Conninfo::parse_with_env(url, &env).unwrap_err().to_string();
            assert!(e.contains(needle), "{url}: {e}");
            assert!(!e.contains("se%ZZcret"), "{e}");
        }
    }
}
