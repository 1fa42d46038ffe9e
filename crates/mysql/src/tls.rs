//! TLS for MySQL sessions (rustls with the ring provider, as `sut`'s sessions): the rustls
//! configuration for each `ssl-mode`. The SSLRequest exchange itself ("Protocol::SSLRequest":
//! the first 32 bytes of the handshake response with CLIENT_SSL, then the TLS handshake, then the
//! whole response inside TLS) is the session's (`session::handshake`).
//!
//! * REQUIRED: encrypt; the certificate is not checked (the `mysql` client's REQUIRED without
//!   `--ssl-ca`). The handshake signatures are still checked, so the session key is bound to
//!   the certificate the server showed.
//! * VERIFY_CA: the chain must lead to a root in `ssl-ca` (else the system's trusted roots);
//!   the host name is not checked.
//! * VERIFY_IDENTITY: VERIFY_CA and the certificate must name the host.
//! * A client certificate from `ssl-cert` and `ssl-key` when both are given.
//!
//! Separate from `sut`'s TLS module, which reads libpq's files (`~/.postgresql/root.crt`,
//! `sslrootcert=system`) and sets PostgreSQL's ALPN; what is common, the relaxed verifier,
//! reading PEM certificates, and building the configuration from the roots and the client
//! certificate, is `pg::tls`'s.

use std::sync::Arc;

use pg::tls::read_pem_certs;
use pg::Error;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};

use crate::{Conninfo, SslMode};

fn roots(ci: &Conninfo) -> Result<RootCertStore, Error> {
    let mut store = RootCertStore::empty();
    match &ci.ssl_ca {
        Some(path) => {
            for cert in read_pem_certs(path)? {
                store.add(cert).map_err(|e| {
                    Error::Tls(format!("bad CA certificate in \"{}\": {e}", path.display()))
                })?;
            }
        }
        None => {
            let (added, _) =
                store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            if added == 0 {
                return Err(Error::Tls(format!(
                    "ssl-mode={} needs trusted CA certificates: give ssl-ca=/path/ca.pem (none \
                     found in the system store either)",
                    ci.ssl_mode
                )));
            }
        }
    }
    Ok(store)
}

/// The rustls configuration for `ci.ssl_mode` (once per connection attempt, never on the hot
/// path). Reads the certificate files first, so a missing file fails before any I/O.
pub(crate) fn client_config(ci: &Conninfo) -> Result<Arc<ClientConfig>, Error> {
    let verify = matches!(ci.ssl_mode, SslMode::VerifyCa | SslMode::VerifyIdentity);
    let roots = if verify { Some(roots(ci)?) } else { None };
    let client = match (&ci.ssl_cert, &ci.ssl_key) {
        (Some(cert), Some(key)) => Some((cert.as_path(), key.as_path())),
        (None, None) => None,
        _ => {
            return Err(Error::Tls(
                "ssl-cert and ssl-key must be given together".into(),
            ))
        }
    };
    let config = pg::tls::config(roots, ci.ssl_mode == SslMode::VerifyIdentity, client)?;
    Ok(Arc::new(config))
}

/// The name to verify and send as SNI. Without host-name checks any valid name will do (a
/// unix-socket-style host or an odd name must not stop REQUIRED).
pub(crate) fn server_name(ci: &Conninfo) -> Result<ServerName<'static>, Error> {
    match ServerName::try_from(ci.host.clone()) {
        Ok(n) => Ok(n),
        Err(_) if ci.ssl_mode != SslMode::VerifyIdentity => {
            Ok(ServerName::try_from("localhost").expect("a valid name"))
        }
        Err(_) => Err(Error::Tls(format!(
            "\"{}\" is not a valid host name for TLS",
            ci.host
        ))),
    }
}
