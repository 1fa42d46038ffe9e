//! Connecting ("Connection Phase"): the socket, the server's Protocol::HandshakeV10, TLS
//! (Protocol::SSLRequest, then the TLS handshake, then the rest inside it), the
//! Protocol::HandshakeResponse41, and authentication up to the OK packet: the first answer for
//! the server's default plugin, Protocol::AuthSwitchRequest (0xFE) to the user's plugin, and
//! caching_sha2_password's Protocol::AuthMoreData (0x01) exchanges (fast path; full path with the
//! cleartext password over TLS or a unix socket, or RSA-encrypted with the server's public key
//! over plain TCP). The password is never formatted into anything but the wire message.

use std::io;

use bytes::BytesMut;
use tokio::net::{TcpStream, UnixStream};

use super::io::protocol;
use super::{Phase, Session, IN_START, OUT_START};
use crate::auth;
use crate::error::{db_error, ER_ACCESS_DENIED};
use crate::wire::*;
use crate::{tls, Conninfo, SslMode};
use pg::Error;
use pg::PlainSocket;
use pg::Transport;

/// The capabilities this client asks for (each kept only if the server offers it; see the
/// module header of `session` for CLIENT_FOUND_ROWS).
const WANTED: u32 = CLIENT_LONG_PASSWORD
    | CLIENT_FOUND_ROWS
    | CLIENT_LONG_FLAG
    | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION
    | CLIENT_MULTI_STATEMENTS
    | CLIENT_MULTI_RESULTS
    | CLIENT_PS_MULTI_RESULTS
    | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
    | CLIENT_CONNECT_ATTRS
    | CLIENT_DEPRECATE_EOF;

/// The largest packet this client accepts (max_packet_size in the handshake response): 1 GiB,
/// the server's own limit for max_allowed_packet.
const MAX_PACKET: u32 = 1 << 30;

/// What the server's greeting says.
#[derive(Debug)]
pub(super) struct Greeting {
    pub version: String,
    pub connection_id: u32,
    pub caps: u32,
    pub status: u16,
    pub scramble: Vec<u8>,
    pub plugin: String,
}

pub(super) fn parse_greeting(p: &[u8]) -> Result<Greeting, Error> {
    let short = || protocol("short handshake packet");
    if p.first() != Some(&10) {
        return Err(protocol(format!(
            "the server speaks handshake protocol {} (this client speaks 10: MySQL >= 4.1, \
             MariaDB)",
            p.first().copied().unwrap_or(0)
        )));
    }
    let (version, k) = nul_str(&p[1..]);
    let mut i = 1 + k;
    let fixed = p.get(i..i + 4 + 8 + 1 + 2).ok_or_else(short)?;
    let connection_id = u32_le(fixed);
    let mut scramble = fixed[4..12].to_vec();
    i += 13;
    let mut caps = u16_le(fixed[13..15].as_ref()) as u32;
    i += 2;
    let mut status = 0;
    let mut data_len = 0usize;
    if let Some(rest) = p.get(i..i + 1 + 2 + 2 + 1 + 10) {
        status = u16_le(&rest[1..3]);
        caps |= (u16_le(&rest[3..5]) as u32) << 16;
        data_len = rest[5] as usize;
        i += 16;
    }
    let mut plugin = String::new();
    if caps & CLIENT_SECURE_CONNECTION != 0 {
        let n = data_len.saturating_sub(8).max(13);
        let part2 = p.get(i..(i + n).min(p.len())).ok_or_else(short)?;
        scramble.extend_from_slice(auth::scramble_of(part2));
        i += part2.len();
    }
    if caps & CLIENT_PLUGIN_AUTH != 0 {
        let (name, _) = nul_str(p.get(i..).unwrap_or_default());
        plugin = String::from_utf8_lossy(name).into_owned();
    }
    let version = String::from_utf8_lossy(version).into_owned();
    // MariaDB prefixes "5.5.5-" so that old replication clients accept it.
    let version = match version.strip_prefix("5.5.5-") {
        Some(v) if v.contains("MariaDB") => v.to_string(),
        _ => version,
    };
    Ok(Greeting {
        version,
        connection_id,
        caps,
        status,
        scramble,
        plugin,
    })
}

fn connect_error(ci: &Conninfo, e: io::Error) -> Error {
    let hint = match &ci.socket {
        Some(p) => format!(
            "is the server running locally and accepting connections on socket \"{}\"?",
            p.display()
        ),
        None => format!(
            "is the server running on host \"{}\" and accepting TCP/IP connections on port {}?",
            ci.host, ci.port
        ),
    };
    Error::Connect {
        target: ci.describe(),
        cause: io::Error::new(e.kind(), format!("{e}; {hint}")),
    }
}

impl Session {
    /// Connect (unix socket or TCP, TLS per `ssl_mode`), authenticate, and return the session
    /// ready for commands. `connect_timeout` bounds the whole of it, on tokio's timer
    /// ([`Session::connect_timed`] takes another).
    pub async fn connect(ci: &Conninfo) -> Result<Session, Error> {
        Self::connect_timed(ci, &pg::session::TokioTimer).await
    }

    /// [`Session::connect`], timing `connect_timeout` on `timer` (`pg::session::timer`).
    pub async fn connect_timed<T: pg::session::ConnectTimer>(
        ci: &Conninfo,
        timer: &T,
    ) -> Result<Session, Error> {
        let Some(t) = ci.connect_timeout else {
            return Self::connect_inner(ci).await;
        };
        match pg::session::timer::within(timer, t, Self::connect_inner(ci)).await {
            Some(r) => r,
            None => Err(Error::Connect {
                target: ci.describe(),
                cause: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no answer within {} s (connect-timeout{}); is the server up and \
                         answering? connect-timeout=N in the URL or in ~/.my.cnf sets another \
                         limit (0: none)",
                        t.as_secs(),
                        if t == crate::conninfo::DEFAULT_CONNECT_TIMEOUT {
                            ", stampede's default"
                        } else {
                            ""
                        }
                    ),
                ),
            }),
        }
    }

    async fn connect_inner(ci: &Conninfo) -> Result<Session, Error> {
        // Certificate files are read before any I/O, so a missing one fails first.
        let tls_config = if ci.socket.is_none() && ci.ssl_mode != SslMode::Disabled {
            Some(tls::client_config(ci)?)
        } else {
            None
        };
        let (io, secure) = match &ci.socket {
            Some(path) => {
                let s = UnixStream::connect(path)
                    .await
                    .map_err(|e| connect_error(ci, e))?;
                let p = PlainSocket::unix(s).map_err(|e| connect_error(ci, e))?;
                (Transport::Plain(p), true)
            }
            None => {
                let s = TcpStream::connect((ci.host.as_str(), ci.port))
                    .await
                    .map_err(|e| connect_error(ci, e))?;
                // Each round trip is one small write the server waits for: never delay it.
                s.set_nodelay(true).map_err(|e| connect_error(ci, e))?;
                (Transport::Greeting(s), false)
            }
        };
        let mut s = Session {
            io,
            inb: BytesMut::with_capacity(IN_START),
            out: BytesMut::with_capacity(OUT_START),
            target: ci.describe(),
            caps: 0,
            server_version: String::new(),
            connection_id: 0,
            secure,
            tls: false,
            status: 0,
            broken: false,
            seq: 0,
            packet_start: 0,
            read_size: IN_START,
            joined: 0,
            stmts: Vec::new(),
            phase: Phase::Head,
            binary: false,
            columns: Vec::new(),
            cur_rows: 0,
            row: Vec::new(),
            has_row: false,
            collect: None,
            kinds: Vec::with_capacity(1),
            kind_at: 0,
            warnings: 0,
            last_insert_id: 0,
            commits: 0,
            explicit_commits: 0,
            commit_errors: 0,
            tally: measure::ledger::Tally::default(),
            unrecorded: false,
            cap: Default::default(),
        };
        match s.handshake(ci, tls_config).await {
            Ok(()) => Ok(s),
            Err(e) => {
                s.io.shutdown().await;
                Err(e)
            }
        }
    }

    async fn handshake(
        &mut self,
        ci: &Conninfo,
        tls_config: Option<std::sync::Arc<rustls::ClientConfig>>,
    ) -> Result<(), Error> {
        self.seq = 0;
        let len = self.next_packet().await?;
        let p = &self.inb[4..4 + len];
        if p.first() == Some(&0xff) {
            // Refused before the handshake: 1040 too many connections, 1129 host blocked, ...
            let e = db_error(parse_err(p));
            self.broken = true;
            return Err(Error::Db(Box::new(e)));
        }
        let g = parse_greeting(p)?;
        self.consume(len);
        if g.caps & CLIENT_PROTOCOL_41 == 0 || g.caps & CLIENT_SECURE_CONNECTION == 0 {
            return Err(protocol(format!(
                "the server ({}) does not speak protocol 4.1 with secure authentication",
                g.version
            )));
        }
        self.server_version = g.version;
        self.connection_id = g.connection_id;
        self.status = g.status;
        let mut caps = WANTED & g.caps;
        if ci.database.is_some() {
            caps |= CLIENT_CONNECT_WITH_DB & g.caps;
        }

        // TLS: SSLRequest with the first 32 bytes of the response, then the TLS handshake.
        if let Some(config) = tls_config {
            if g.caps & CLIENT_SSL != 0 {
                caps |= CLIENT_SSL;
                self.begin_packet();
                self.put_response_head(caps);
                self.end_command();
                self.write_out().await?;
                self.start_tls(ci, config).await?;
            } else if ci.ssl_mode.requires_tls() {
                return Err(Error::Tls(format!(
                    "{}: the server does not offer TLS (have_ssl is not YES: start it with \
                     ssl-cert and ssl-key), but ssl-mode={} requires it",
                    self.target, ci.ssl_mode
                )));
            }
        }
        if let Transport::Greeting(_) = self.io {
            if let Transport::Greeting(tcp) = std::mem::replace(&mut self.io, Transport::Moving) {
                self.io =
                    Transport::Plain(PlainSocket::tcp(tcp).map_err(|e| connect_error(ci, e))?);
            }
        }
        self.caps = caps;

        // HandshakeResponse41, answering for the server's default plugin when this client has
        // it, else for mysql_native_password (the server switches to the user's plugin).
        let password = ci.password.as_ref().map_or(&[][..], |p| p.0.as_bytes());
        let (plugin, answer) = match self.first_answer(&g.plugin, password, &g.scramble) {
            Some(a) => (g.plugin.as_str(), a),
            None => (auth::NATIVE, auth::native(password, &g.scramble)),
        };
        self.begin_packet();
        self.put_response_head(caps);
        self.out.extend_from_slice(ci.user.as_bytes());
        self.out.extend_from_slice(&[0]);
        if caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc_str(&mut self.out, &answer);
        } else {
            self.out.extend_from_slice(&[answer.len() as u8]);
            self.out.extend_from_slice(&answer);
        }
        if caps & CLIENT_CONNECT_WITH_DB != 0 {
            if let Some(db) = &ci.database {
                self.out.extend_from_slice(db.as_bytes());
                self.out.extend_from_slice(&[0]);
            }
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 {
            self.out.extend_from_slice(plugin.as_bytes());
            self.out.extend_from_slice(&[0]);
        }
        if caps & CLIENT_CONNECT_ATTRS != 0 {
            let mut attrs = BytesMut::new();
            for (k, v) in [
                ("_client_name", "stampede"),
                ("_client_version", env!("CARGO_PKG_VERSION")),
            ] {
                put_lenenc_str(&mut attrs, k.as_bytes());
                put_lenenc_str(&mut attrs, v.as_bytes());
            }
            put_lenenc_str(&mut self.out, &attrs);
        }
        self.end_command();
        self.write_out().await?;
        self.authenticate(ci, plugin.to_string(), g.scramble, password)
            .await
    }

    /// client_flag, max_packet_size, character set, 23 bytes of filler: the SSLRequest, and
    /// the start of HandshakeResponse41.
    fn put_response_head(&mut self, caps: u32) {
        self.out.extend_from_slice(&caps.to_le_bytes());
        self.out.extend_from_slice(&MAX_PACKET.to_le_bytes());
        self.out.extend_from_slice(&[UTF8MB4_GENERAL_CI]);
        self.out.extend_from_slice(&[0; 23]);
    }

    async fn start_tls(
        &mut self,
        ci: &Conninfo,
        config: std::sync::Arc<rustls::ClientConfig>,
    ) -> Result<(), Error> {
        let Transport::Greeting(tcp) = std::mem::replace(&mut self.io, Transport::Moving) else {
            return Err(protocol("TLS requested twice"));
        };
        let name = tls::server_name(ci)?;
        let stream = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| {
                self.broken = true;
                Error::Tls(format!("TLS handshake with {} failed: {e}", self.target))
            })?;
        self.io = Transport::Tls(Box::new(stream));
        self.tls = true;
        self.secure = true;
        Ok(())
    }

    /// The answer to `plugin`'s scramble when this client speaks the plugin; `None` otherwise.
    fn first_answer(&self, plugin: &str, password: &[u8], scramble: &[u8]) -> Option<Vec<u8>> {
        match plugin {
            auth::NATIVE | "" => Some(auth::native(password, scramble)),
            auth::CACHING_SHA2 => Some(auth::caching_sha2(password, scramble)),
            auth::CLEAR if self.secure => Some(auth::cleartext(password)),
            _ => None,
        }
    }

    /// The server's replies up to OK: auth switches, caching_sha2_password's more-data
    /// exchanges, or the error.
    async fn authenticate(
        &mut self,
        ci: &Conninfo,
        mut plugin: String,
        mut scramble: Vec<u8>,
        password: &[u8],
    ) -> Result<(), Error> {
        let auth_err = |message: String| Error::Auth {
            target: ci.describe(),
            message,
        };
        loop {
            let len = self.next_packet().await?;
            let p = &self.inb[4..4 + len];
            match p.first().copied() {
                Some(0x00) => {
                    let ok = parse_ok(p).ok_or_else(|| protocol("malformed OK packet"))?;
                    self.status = ok.status;
                    self.consume(len);
                    return Ok(());
                }
                Some(0xff) => {
                    let e = parse_err(p);
                    self.consume(len);
                    self.broken = true;
                    // 1045 access denied; 1251/1524/1698: the plugin refused us.
                    return Err(
                        if matches!(e.number, ER_ACCESS_DENIED | 1251 | 1524 | 1698) {
                            auth_err(format!(
                                "{} (MySQL error {}, SQLSTATE {})",
                                e.message,
                                e.number,
                                String::from_utf8_lossy(&e.sqlstate)
                            ))
                        } else {
                            Error::Db(Box::new(db_error(e)))
                        },
                    );
                }
                Some(0xfe) => {
                    // AuthSwitchRequest: plugin name, NUL, the plugin's data.
                    if len == 1 {
                        return Err(auth_err(
                            "the server asks for the pre-4.1 mysql_old_password method, which \
                             this client refuses (insecure); give the user a \
                             mysql_native_password or caching_sha2_password password"
                                .into(),
                        ));
                    }
                    let (name, k) = nul_str(&p[1..]);
                    plugin = String::from_utf8_lossy(name).into_owned();
                    scramble = auth::scramble_of(&p[1 + k..]).to_vec();
                    self.consume(len);
                    let answer = self
                        .first_answer(&plugin, password, &scramble)
                        .ok_or_else(|| unsupported_plugin(ci, &plugin, self.secure))?;
                    self.send_auth_data(&answer).await?;
                }
                Some(0x01) if plugin == auth::CACHING_SHA2 => {
                    let data = p[1..].to_vec();
                    self.consume(len);
                    match data.as_slice() {
                        [auth::FAST_AUTH_OK] => {}
                        [auth::FULL_AUTH] if self.secure => {
                            self.send_auth_data(&auth::cleartext(password)).await?;
                        }
                        [auth::FULL_AUTH] => {
                            self.send_auth_data(&[auth::REQUEST_PUBLIC_KEY]).await?;
                        }
                        pem if pem.starts_with(b"-----BEGIN") => {
                            let enc = auth::rsa_encrypt_password(password, &scramble, pem)
                                .map_err(auth_err)?;
                            self.send_auth_data(&enc).await?;
                        }
                        _ => return Err(protocol("unexpected caching_sha2_password data")),
                    }
                }
                Some(other) => {
                    return Err(protocol(format!(
                        "unexpected packet 0x{other:02x} during authentication ({plugin})"
                    )))
                }
                None => return Err(protocol("empty packet during authentication")),
            }
        }
    }

    /// One packet of authentication data (it continues the handshake's sequence).
    async fn send_auth_data(&mut self, data: &[u8]) -> Result<(), Error> {
        self.begin_packet();
        self.out.extend_from_slice(data);
        self.end_command();
        self.write_out().await
    }
}

fn unsupported_plugin(ci: &Conninfo, plugin: &str, secure: bool) -> Error {
    let message = match plugin {
        auth::CLEAR if !secure => format!(
            "user \"{}\" authenticates with mysql_clear_password, which would send the password \
             in clear over an unencrypted connection; use ssl-mode=REQUIRED or a unix socket",
            ci.user
        ),
        "client_ed25519" => format!(
            "user \"{}\" authenticates with MariaDB's ed25519 plugin (client_ed25519), which \
             stampede does not support; give the user a mysql_native_password password \
             (ALTER USER ... IDENTIFIED VIA mysql_native_password USING PASSWORD('...'))",
            ci.user
        ),
        other => format!(
            "user \"{}\" authenticates with the \"{other}\" plugin, which stampede does not \
             support (it speaks mysql_native_password, caching_sha2_password and, over TLS or a \
             unix socket, mysql_clear_password)",
            ci.user
        ),
    };
    Error::Auth {
        target: ci.describe(),
        message,
    }
}
