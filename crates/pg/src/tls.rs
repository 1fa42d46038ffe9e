//! TLS for sessions (rustls, ring provider): sslmode require (encrypt, no verification, as
//! libpq), verify-ca (chain only), verify-full (chain and host name); root certificates from
//! `sslrootcert`, `~/.postgresql/root.crt`, or the system store for `sslrootcert=system`; a client
//! certificate from `sslcert`/`sslkey` (default `~/.postgresql/postgresql.crt` / `.key` when they
//! exist, as libpq).
//!
//! Owns only the rustls configuration; the SSLRequest exchange and the fall-back rules per sslmode
//! are in `session.rs` (PostgreSQL docs, "Message Flow", "SSL Session Encryption").
//!
//! libpq compatibility: with sslmode=require and a root certificate available (given or at the
//! default path), libpq verifies the chain as verify-ca does; so does this module.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use crate::conninfo::{home_dir, SslMode};
use crate::{ConnConfig, Error};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn user_file(name: &str) -> Option<PathBuf> {
    home_dir(&|k| std::env::var(k).ok()).map(|h| h.join(".postgresql").join(name))
}

pub fn read_pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, Error> {
    let data = std::fs::read(path).map_err(|e| {
        Error::Tls(format!(
            "could not read certificate file \"{}\": {e}",
            path.display()
        ))
    })?;
    let certs: Result<Vec<_>, _> = rustls_pemfile::certs(&mut data.as_slice()).collect();
    let certs = certs.map_err(|e| {
        Error::Tls(format!(
            "could not parse certificate file \"{}\": {e}",
            path.display()
        ))
    })?;
    if certs.is_empty() {
        return Err(Error::Tls(format!(
            "certificate file \"{}\" holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// The trusted roots, or `None` when there are none and the mode does not need them.
fn roots(cfg: &ConnConfig, verify: bool) -> Result<Option<RootCertStore>, Error> {
    let path = match &cfg.sslrootcert {
        Some(p) if p.as_os_str() == "system" => {
            let loaded = rustls_native_certs::load_native_certs();
            let mut store = RootCertStore::empty();
            let (added, _) = store.add_parsable_certificates(loaded.certs);
            if added == 0 {
                return Err(Error::Tls(
                    "sslrootcert=system: no usable certificates in the system store".into(),
                ));
            }
            return Ok(Some(store));
        }
        Some(p) => p.clone(),
        None => match user_file("root.crt") {
            Some(p) if p.is_file() => p,
            other => {
                if !verify {
                    return Ok(None);
                }
                let shown = other
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "~/.postgresql/root.crt".into());
                return Err(Error::Tls(format!(
                    "root certificate file \"{shown}\" does not exist; either provide the file \
                     (sslrootcert=...), use the system's trusted roots with sslrootcert=system, \
                     or change sslmode to disable server certificate verification"
                )));
            }
        },
    };
    let mut store = RootCertStore::empty();
    for cert in read_pem_certs(&path)? {
        store.add(cert).map_err(|e| {
            Error::Tls(format!(
                "bad root certificate in \"{}\": {e}",
                path.display()
            ))
        })?;
    }
    Ok(Some(store))
}

/// Build the rustls client configuration for `cfg.sslmode` (called once per connection attempt,
/// never on the hot path).
pub(crate) fn client_config(cfg: &ConnConfig) -> Result<Arc<ClientConfig>, Error> {
    let verify = matches!(cfg.sslmode, SslMode::VerifyCa | SslMode::VerifyFull);
    let roots = roots(cfg, verify)?;
    let (cert, key) = match (&cfg.sslcert, &cfg.sslkey) {
        (Some(c), k) => (
            Some(c.clone()),
            k.clone().or_else(|| user_file("postgresql.key")),
        ),
        (None, k) => match user_file("postgresql.crt") {
            Some(c) if c.is_file() => (Some(c), k.clone().or_else(|| user_file("postgresql.key"))),
            _ => (None, None),
        },
    };
    let client = match (&cert, &key) {
        (Some(cert), Some(key)) => Some((cert.as_path(), key.as_path())),
        (Some(cert), None) => {
            return Err(Error::Tls(format!(
                "client certificate \"{}\" given without a key (sslkey)",
                cert.display()
            )))
        }
        _ => None,
    };
    let mut config = config(roots, cfg.sslmode == SslMode::VerifyFull, client)?;
    // PostgreSQL 17's direct-TLS handshake requires this ALPN; older servers ignore it.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(Arc::new(config))
}

/// The rustls configuration of both protocols' sessions: with no `roots`, encrypt and trust any
/// certificate; with `roots`, the chain must lead to one of them, and the certificate must name
/// the host too when `check_host` ([`Relaxed`] says what is checked either way). A client
/// certificate when `client` names its (certificate, key) files.
pub fn config(
    roots: Option<RootCertStore>,
    check_host: bool,
    client: Option<(&Path, &Path)>,
) -> Result<ClientConfig, Error> {
    let provider = provider();
    let algs = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        None => Arc::new(Relaxed { chain: None, algs }),
        Some(store) => {
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                    .build()
                    .map_err(|e| Error::Tls(format!("certificate verifier: {e}")))?;
            if check_host {
                webpki
            } else {
                Arc::new(Relaxed {
                    chain: Some(webpki),
                    algs,
                })
            }
        }
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let Some((cert, key)) = client else {
        return Ok(builder.with_no_client_auth());
    };
    let chain = read_pem_certs(cert)?;
    let data = std::fs::read(key).map_err(|e| {
        Error::Tls(format!(
            "could not read private key file \"{}\": {e}",
            key.display()
        ))
    })?;
    let key_der = rustls_pemfile::private_key(&mut data.as_slice())
        .map_err(|e| Error::Tls(format!("private key file \"{}\": {e}", key.display())))?
        .ok_or_else(|| Error::Tls(format!("no private key found in \"{}\"", key.display())))?;
    builder
        .with_client_auth_cert(chain, key_der)
        .map_err(|e| Error::Tls(format!("client certificate \"{}\": {e}", cert.display())))
}

/// The name to verify (and send as SNI): a DNS name or an IP address.
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    ServerName::try_from(host.to_string())
        .map_err(|_| Error::Tls(format!("\"{host}\" is not a valid host name for TLS")))
}

/// The verifier for the modes that check less than verify-full, with `chain`:
/// - `None`: sslmode=require without a root certificate: encrypt, trust any certificate (libpq
///   does the same);
/// - `Some`: verify-ca (or require with a root certificate, as libpq): the chain must lead to a
///   trusted root; the host name is not checked. webpki checks the chain before the name, so a
///   name mismatch means the chain was good.
///
/// Either way the handshake signatures are checked, with the provider's algorithms (those the
/// webpki verifier was built with, so verify-ca checks exactly what it would), so the session key
/// is bound to the certificate.
///
/// Public for the MySQL session (ssl-mode REQUIRED and VERIFY_CA mean the same), which builds
/// its configuration with [`config`] too.
#[derive(Debug)]
pub struct Relaxed {
    pub chain: Option<Arc<WebPkiServerVerifier>>,
    pub algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}
