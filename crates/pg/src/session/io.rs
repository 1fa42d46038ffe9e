//! The session's connection: `Session::connect` (onto a `transport::Transport`, shared with
//! the MySQL session) with its per-host attempts and libpq's sslmode fall-back rules, the SSLRequest / TLS
//! handshake, and the buffer I/O every reader and writer uses: `fill`, message framing
//! (`buffered_msg`, `next_msg`) and `write_out`.

use std::collections::VecDeque;
use std::io;

use bytes::BytesMut;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use super::decode::Capture;
use super::socket::PlainSocket;
use super::transport::Transport;
use super::{be_i32, protocol, Session, IN_KEEP, IN_START, MAX_MESSAGE, OUT_START, QUEUE_START};
use crate::conninfo::{HostSpec, LoadBalance, SslMode};
use crate::{tls, ConnConfig, Error};

fn connect_error(h: &HostSpec, e: io::Error) -> Error {
    let hint = if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) {
        "this process has no file descriptor left for the connection; raise the open-file limit \
         (`ulimit -n`, or LimitNOFILE= / /etc/security/limits.conf) or use fewer clients"
            .to_string()
    } else if e.kind() == io::ErrorKind::WouldBlock && h.is_unix() {
        // EAGAIN from connect() on a unix socket: the listen queue is full. Callers that open
        // many connections at once retry this (engine); the kind is kept for them.
        format!(
            "the server's listen queue on \"{}\" is full (too many connections at once)",
            h.socket_path().display()
        )
    } else if h.is_unix() {
        format!(
            "is the server running locally and accepting connections on Unix domain socket \"{}\"?",
            h.socket_path().display()
        )
    } else {
        format!(
            "is the server running on host \"{}\" and accepting TCP/IP connections on port {}?",
            h.host, h.port
        )
    };
    Error::Connect {
        target: h.describe(),
        cause: io::Error::new(e.kind(), format!("{e}; {hint}")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TlsWant {
    No,
    /// Ask; fall back to plaintext if the server says no.
    Prefer,
    Required,
}

/// Why one connection attempt failed, with what the sslmode fall-back rules need to know.
struct Failure {
    err: Error,
    tls_used: bool,
    /// The server refused the connection at pg_hba (SQLSTATE 28000), before any password.
    hba_reject: bool,
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure {
            err,
            tls_used: false,
            hba_reject: false,
        }
    }
}

impl Session {
    /// Connect (TCP or unix socket, TLS per sslmode), authenticate (trust, password, md5,
    /// SCRAM-SHA-256), and wait for ReadyForQuery. Tries each host in order (shuffled with
    /// `load_balance_hosts=random`) until one gives a session `target_session_attrs` accepts;
    /// stops at an authentication failure, as libpq does. `connect_timeout` applies to each
    /// host, on tokio's timer ([`Session::connect_timed`] takes another).
    ///
    /// sslmode, as libpq: `disable` plaintext; `allow` plaintext first, TLS if the server refuses
    /// the plaintext connection at pg_hba; `prefer` TLS if the server offers it, plaintext if it
    /// does not, if the handshake fails, or if the server refuses the TLS connection at pg_hba;
    /// `require`/`verify-ca`/`verify-full` TLS or nothing. Unix sockets never use TLS.
    pub async fn connect(cfg: &ConnConfig) -> Result<Session, Error> {
        Self::connect_timed(cfg, &super::TokioTimer).await
    }

    /// [`Session::connect`], timing `connect_timeout` on `timer` (`session::timer`).
    pub async fn connect_timed<T: super::ConnectTimer>(
        cfg: &ConnConfig,
        timer: &T,
    ) -> Result<Session, Error> {
        if cfg.hosts.is_empty() {
            return Err(Error::Config("no host to connect to".into()));
        }
        let order = host_order(cfg);
        let mut last = None;
        // target_session_attrs: a session that does not qualify is closed and the next host
        // tried; prefer-standby makes a second pass that takes any (conninfo::attrs).
        for &pass in cfg.target_session_attrs.passes() {
            for &i in &order {
                let h = &cfg.hosts[i];
                match Self::connect_one(cfg, h, timer).await {
                    Ok(s) if !pass.checks() => return Ok(s),
                    Ok(mut s) => match s.server_state().await {
                        Ok((hot_standby, read_only)) => {
                            match pass.refusal(hot_standby, read_only) {
                                None => return Ok(s),
                                Some(why) => {
                                    s.close().await;
                                    last = Some(Error::Connect {
                                        target: h.describe(),
                                        cause: io::Error::other(why),
                                    });
                                }
                            }
                        }
                        Err(e) => last = Some(e),
                    },
                    Err(e @ Error::Auth { .. }) => return Err(e),
                    Err(e) => last = Some(e),
                }
            }
        }
        Err(last.expect("at least one host"))
    }

    /// One host, within `connect_timeout`: past it, an error naming the host, and the next
    /// host is tried (as libpq does).
    async fn connect_one<T: super::ConnectTimer>(
        cfg: &ConnConfig,
        h: &HostSpec,
        timer: &T,
    ) -> Result<Session, Error> {
        let attempt = Self::connect_host(cfg, h);
        let Some(t) = cfg.connect_timeout else {
            return attempt.await;
        };
        match super::timer::within(timer, t, attempt).await {
            Some(r) => r,
            None => Err(Error::Connect {
                target: h.describe(),
                cause: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no answer within {} s (connect_timeout{}); is the server up and \
                         answering? connect_timeout=N in the target or PGCONNECT_TIMEOUT sets \
                         another limit (0: none)",
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

    /// (in hot standby, default_transaction_read_only) of the connected server: from the
    /// parameters PostgreSQL 14+ reports at start-up, else (older servers) by asking.
    async fn server_state(&mut self) -> Result<(bool, bool), Error> {
        let on = |v: Option<&str>| v == Some("on");
        if let (Some(hs), Some(ro)) = (
            self.parameter("in_hot_standby"),
            self.parameter("default_transaction_read_only"),
        ) {
            return Ok((hs == "on", ro == "on"));
        }
        let rows = self
            .simple_query(
                "SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN 'on' ELSE 'off' END, \
                 pg_catalog.current_setting('default_transaction_read_only')",
            )
            .await?;
        let row = rows.into_iter().next().unwrap_or_default();
        let get = |i: usize| row.get(i).cloned().flatten();
        Ok((on(get(0).as_deref()), on(get(1).as_deref())))
    }

    async fn connect_host(cfg: &ConnConfig, h: &HostSpec) -> Result<Session, Error> {
        let want = match cfg.sslmode {
            _ if h.is_unix() => TlsWant::No,
            SslMode::Disable | SslMode::Allow => TlsWant::No,
            SslMode::Prefer => TlsWant::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => TlsWant::Required,
        };
        match Self::attempt(cfg, h, want).await {
            Ok(s) => Ok(s),
            Err(f) if cfg.sslmode == SslMode::Allow && f.hba_reject && !h.is_unix() => {
                Self::attempt(cfg, h, TlsWant::Required)
                    .await
                    .map_err(|f| f.err)
            }
            Err(f)
                if want == TlsWant::Prefer
                    && f.tls_used
                    && (f.hba_reject || matches!(f.err, Error::Tls(_))) =>
            {
                Self::attempt(cfg, h, TlsWant::No).await.map_err(|f| f.err)
            }
            Err(f) => Err(f.err),
        }
    }

    async fn attempt(cfg: &ConnConfig, h: &HostSpec, want: TlsWant) -> Result<Session, Failure> {
        let mut tls_used = false;
        let io = if h.is_unix() {
            let unix = UnixStream::connect(h.socket_path())
                .await
                .map_err(|e| connect_error(h, e))?;
            Transport::Plain(PlainSocket::unix(unix).map_err(|e| connect_error(h, e))?)
        } else {
            let tcp = TcpStream::connect((h.host.as_str(), h.port))
                .await
                .map_err(|e| connect_error(h, e))?;
            // Each round trip is one small write the server waits for: never delay it (Nagle).
            tcp.set_nodelay(true).map_err(|e| connect_error(h, e))?;
            if want == TlsWant::No {
                Transport::Plain(PlainSocket::tcp(tcp).map_err(|e| connect_error(h, e))?)
            } else {
                match Self::negotiate_tls(cfg, h, tcp, want).await? {
                    t @ Transport::Tls(_) => {
                        tls_used = true;
                        t
                    }
                    t => t,
                }
            }
        };
        let mut s = Session {
            io,
            // Small to start, grown on demand: see "Buffer sizes" in the module header.
            inb: BytesMut::with_capacity(IN_START),
            out: BytesMut::with_capacity(OUT_START),
            target: h.describe(),
            endpoint: h.clone(),
            stmts: Vec::new(),
            params: String::new(),
            read_size: IN_START,
            pid: 0,
            secret_key: 0,
            version_num: 0,
            broken: false,
            status: b'I',
            commits: 0,
            open_work: false,
            parse_only: false,
            parse_commits: 0,
            tally: measure::ledger::Tally::default(),
            unrecorded: false,
            cur_rows: 0,
            row: Vec::new(),
            has_row: false,
            sent: VecDeque::with_capacity(QUEUE_START),
            pipe: VecDeque::with_capacity(QUEUE_START),
            aborted: false,
            deferred: None,
            collect: None,
            in_copy: false,
            cap: Capture::default(),
            notices: Vec::new(),
            copied: false,
        };
        match s.startup(cfg, h).await {
            Ok(()) => Ok(s),
            Err((err, hba_reject)) => Err(Failure {
                err,
                tls_used,
                hba_reject,
            }),
        }
    }

    /// SSLRequest, then the TLS handshake if the server answers 'S' ("Message Flow", "SSL
    /// Session Encryption"). Exactly one byte is read before the handshake, so nothing the server
    /// sent in plaintext can be mistaken for data inside TLS.
    async fn negotiate_tls(
        cfg: &ConnConfig,
        h: &HostSpec,
        mut tcp: TcpStream,
        want: TlsWant,
    ) -> Result<Transport, Failure> {
        // Build the configuration first: a missing root certificate should fail before any I/O.
        let config = tls::client_config(cfg)?;
        let mut req = BytesMut::with_capacity(8);
        frontend::ssl_request(&mut req);
        tcp.write_all(&req).await.map_err(|e| connect_error(h, e))?;
        let mut answer = [0u8; 1];
        tcp.read_exact(&mut answer)
            .await
            .map_err(|e| connect_error(h, e))?;
        match answer[0] {
            b'S' => {
                let name = match tls::server_name(&h.host) {
                    Ok(n) => n,
                    Err(e) if cfg.sslmode == SslMode::VerifyFull => return Err(e.into()),
                    // Without host-name checks any syntactically valid name will do for SNI.
                    Err(_) => tls::server_name("localhost")?,
                };
                let stream = tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await
                    .map_err(|e| Failure {
                        err: Error::Tls(format!("TLS handshake with {} failed: {e}", h.describe())),
                        tls_used: true,
                        hba_reject: false,
                    })?;
                Ok(Transport::Tls(Box::new(stream)))
            }
            b'N' if want == TlsWant::Prefer => Ok(Transport::Plain(
                PlainSocket::tcp(tcp).map_err(|e| connect_error(h, e))?,
            )),
            b'N' => Err(Error::Tls(format!(
                "{}: the server does not support SSL, but sslmode={} requires it",
                h.describe(),
                cfg.sslmode
            ))
            .into()),
            b'E' => Err(Error::Tls(format!(
                "{}: the server answered the SSL request with an error (a pre-7.0 server?)",
                h.describe()
            ))
            .into()),
            other => Err(protocol(format!(
                "unexpected answer {other:#04x} to the SSL request from {}",
                h.describe()
            ))
            .into()),
        }
    }

    // ----- reading -----

    /// Read more bytes into the input buffer: one `read` call, as large as the buffer allows
    /// (at least half of `read_size`, which doubles while reads fill the buffer: see "Buffer
    /// sizes" in the module header).
    pub(super) async fn fill(&mut self) -> Result<(), Error> {
        match self
            .io
            .fill(&mut self.inb, &mut self.read_size, IN_KEEP)
            .await
        {
            Ok(0) => {
                self.broken = true;
                Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the server ({}) closed the connection unexpectedly; it may have \
                         terminated abnormally or been shut down",
                        self.target
                    ),
                )))
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(Error::Io(e))
            }
        }
    }

    /// Type and total length of the next message if it is complete in the input buffer;
    /// otherwise room is made for it and `None` returned. No await point: a reply that arrived
    /// whole (the usual case: BindComplete, DataRow, CommandComplete and ReadyForQuery in one
    /// segment) is parsed in one synchronous pass.
    #[inline]
    pub(super) fn buffered_msg(&mut self) -> Result<Option<(u8, usize)>, Error> {
        let b = &self.inb[..];
        if b.len() < 5 {
            return Ok(None);
        }
        let len = be_i32(&b[1..5]);
        if len < 4 || len as usize > MAX_MESSAGE {
            self.broken = true;
            return Err(protocol(format!("invalid message length {len}")));
        }
        let total = len as usize + 1;
        if b.len() >= total {
            return Ok(Some((b[0], total)));
        }
        let more = total - b.len();
        self.inb.reserve(more);
        Ok(None)
    }

    /// Type and total length of the next complete message in the input buffer, reading as needed.
    /// The message stays in the buffer until the caller advances past it.
    pub(super) async fn next_msg(&mut self) -> Result<(u8, usize), Error> {
        loop {
            if let Some(m) = self.buffered_msg()? {
                return Ok(m);
            }
            self.fill().await?;
        }
    }

    /// One write of everything buffered.
    pub(super) async fn write_out(&mut self) -> Result<(), Error> {
        let r = self.io.write_all(&self.out).await;
        self.out.clear();
        match r {
            Ok(()) => Ok(()),
            Err(e) => {
                self.broken = true;
                // As libpq does when a send fails: a server that closed the connection may have
                // said why first (a FATAL ErrorResponse: pg_terminate_backend's or a shutdown's
                // 57P01, idle_session_timeout's 57P05), and that message, not the failed send,
                // is the error: it is classified by its SQLSTATE instead of as a lost
                // connection. Only when the peer is gone (EPIPE, ECONNRESET): its socket then
                // reads what it sent and then end of file, never waits.
                if matches!(
                    e.kind(),
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
                ) {
                    if let Some(db) = self.last_words().await {
                        return Err(Error::Db(Box::new(db)));
                    }
                }
                Err(Error::Io(e))
            }
        }
    }

    /// The ErrorResponse a closed connection's server sent before closing, if one is left to
    /// read (messages before it are passed over: the session is broken, nothing else is read).
    async fn last_words(&mut self) -> Option<crate::DbError> {
        use bytes::Buf;
        loop {
            match self.buffered_msg() {
                Ok(Some((b'E', total))) => {
                    return Some(super::decode::parse_error(&self.inb[5..total]));
                }
                Ok(Some((_, total))) => self.inb.advance(total),
                Ok(None) => self.fill().await.ok()?,
                Err(_) => return None,
            }
        }
    }
}

/// The order in which hosts are tried: as given, or (`load_balance_hosts=random`) shuffled
/// anew for each connection (libpq 16 shuffles the host list once per connection attempt).
fn host_order(cfg: &ConnConfig) -> Vec<usize> {
    let mut order: Vec<usize> = (0..cfg.hosts.len()).collect();
    if cfg.load_balance_hosts == LoadBalance::Random && order.len() > 1 {
        // Not the benchmark's random streams (a connection's host is not a transaction's
        // input): the clock's low bits and a counter, through SplitMix64.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ CALLS
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in (1..order.len()).rev() {
            order.swap(i, (next() % (i as u64 + 1)) as usize);
        }
    }
    order
}
