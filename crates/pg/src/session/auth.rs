//! Start-up and authentication ("Message Flow", "Start-up"): the StartupMessage, the answers
//! to the server's authentication requests (trust, cleartext, md5, SCRAM-SHA-256 through
//! `postgres_protocol::authentication`), the password's sources (connection string, then
//! `~/.pgpass`), and the ParameterStatus/BackendKeyData messages up to the first ReadyForQuery.

use bytes::Buf;
use postgres_protocol::authentication::{md5_hash, sasl};
use postgres_protocol::message::frontend;

use super::decode::{parse_error, version_num, Event};
use super::{be_i32, protocol, Session};
use crate::conninfo::{pgpass_lookup, HostSpec};
use crate::{ConnConfig, Error};

impl Session {
    fn password(cfg: &ConnConfig, h: &HostSpec) -> Result<String, Error> {
        if let Some(p) = &cfg.password {
            return Ok(p.0.clone());
        }
        if let Some(file) = &cfg.passfile {
            if let Some(p) = pgpass_lookup(file, h, &cfg.dbname, &cfg.user) {
                return Ok(p);
            }
        }
        Err(Error::Auth {
            target: h.describe(),
            message: format!(
                "the server asked for a password for user \"{}\" but none was supplied; set \
                 PGPASSWORD, add password=... to the connection string, or add an entry to \
                 ~/.pgpass",
                cfg.user
            ),
        })
    }

    /// StartupMessage, authentication, then ParameterStatus/BackendKeyData up to ReadyForQuery
    /// ("Message Flow", "Start-up"). The error's flag says the server refused at pg_hba (28000).
    pub(super) async fn startup(
        &mut self,
        cfg: &ConnConfig,
        h: &HostSpec,
    ) -> Result<(), (Error, bool)> {
        let plain = |e: Error| (e, false);
        let mut params: Vec<(&str, &str)> = vec![
            ("user", cfg.user.as_str()),
            ("database", cfg.dbname.as_str()),
            ("application_name", cfg.application_name.as_str()),
            ("client_encoding", "UTF8"),
        ];
        if let Some(o) = &cfg.options {
            params.push(("options", o.as_str()));
        }
        frontend::startup_message(params.iter().copied(), &mut self.out).map_err(|_| {
            plain(Error::Config(
                "user, database, application name and options may not contain NUL".into(),
            ))
        })?;
        self.write_out().await.map_err(plain)?;

        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            let (tag, total) = self.next_msg().await.map_err(plain)?;
            let body = &self.inb[5..total];
            match tag {
                b'R' => {
                    if body.len() < 4 {
                        return Err(plain(protocol("short authentication request")));
                    }
                    let code = be_i32(body);
                    let data = body[4..].to_vec();
                    self.inb.advance(total);
                    self.authenticate(cfg, h, code, &data, &mut scram)
                        .await
                        .map_err(plain)?;
                }
                b'E' => {
                    let e = parse_error(body);
                    self.inb.advance(total);
                    self.broken = true;
                    let hba = e.code == "28000";
                    return Err(if e.code.starts_with("28") {
                        (
                            Error::Auth {
                                target: h.describe(),
                                message: e.message,
                            },
                            hba,
                        )
                    } else {
                        (Error::Db(Box::new(e)), false)
                    });
                }
                _ => {
                    let ev = self.handle(tag, total);
                    self.inb.advance(total);
                    match ev.map_err(plain)? {
                        None => {}
                        Some(Event::Ready) => break,
                        Some(_) => {
                            return Err(plain(protocol(format!(
                                "unexpected message '{}' during start-up",
                                tag as char
                            ))))
                        }
                    }
                }
            }
        }
        self.version_num = self
            .parameter("server_version")
            .map(version_num)
            .unwrap_or(0);
        Ok(())
    }

    /// One authentication request ("Message Formats", Authentication*), answered with the
    /// password, its md5 hash, or the next SCRAM message. The password is never formatted into
    /// anything but the wire message.
    async fn authenticate(
        &mut self,
        cfg: &ConnConfig,
        h: &HostSpec,
        code: i32,
        data: &[u8],
        scram: &mut Option<sasl::ScramSha256>,
    ) -> Result<(), Error> {
        let auth_err = |message: String| Error::Auth {
            target: h.describe(),
            message,
        };
        match code {
            0 => return Ok(()),
            3 => {
                let pw = Self::password(cfg, h)?;
                frontend::password_message(pw.as_bytes(), &mut self.out)
                    .map_err(|_| auth_err("the password contains a NUL byte".into()))?;
            }
            5 => {
                if data.len() < 4 {
                    return Err(protocol("short md5 authentication request"));
                }
                let pw = Self::password(cfg, h)?;
                let salt = [data[0], data[1], data[2], data[3]];
                let hash = md5_hash(cfg.user.as_bytes(), pw.as_bytes(), salt);
                frontend::password_message(hash.as_bytes(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
            }
            10 => {
                let offered = data.split(|&c| c == 0).any(|m| m == b"SCRAM-SHA-256");
                if !offered {
                    return Err(auth_err(
                        "the server offers no SASL mechanism stampede supports (needs \
                         SCRAM-SHA-256)"
                            .into(),
                    ));
                }
                let pw = Self::password(cfg, h)?;
                // No channel binding ("n,,"): we do not offer SCRAM-SHA-256-PLUS.
                let s = sasl::ScramSha256::new(pw.as_bytes(), sasl::ChannelBinding::unsupported());
                frontend::sasl_initial_response("SCRAM-SHA-256", s.message(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
                *scram = Some(s);
            }
            11 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| protocol("SASLContinue without SASL"))?;
                s.update(data)
                    .map_err(|e| auth_err(format!("SCRAM exchange failed: {e}")))?;
                frontend::sasl_response(s.message(), &mut self.out)
                    .map_err(|e| protocol(e.to_string()))?;
            }
            12 => {
                let s = scram
                    .as_mut()
                    .ok_or_else(|| protocol("SASLFinal without SASL"))?;
                s.finish(data).map_err(|e| {
                    auth_err(format!("the server's SCRAM signature did not verify: {e}"))
                })?;
                return Ok(());
            }
            2 | 7 | 8 | 9 => {
                return Err(auth_err(format!(
                    "the server asks for an authentication method stampede does not support \
                     (Kerberos/GSSAPI/SSPI, code {code}); use password, md5 or scram-sha-256 in \
                     pg_hba.conf"
                )))
            }
            other => return Err(protocol(format!("unknown authentication request {other}"))),
        }
        self.write_out().await
    }
}
