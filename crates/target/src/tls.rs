//! TLS for sessions (rustls, ring provider): sslmode require (encrypt, no verification, as
//! libpq), verify-ca (chain only), verify-full (chain and host name); root certificates from
//! `sslrootcert`, `~/.postgresql/root.crt`, or the system store for `sslrootcert=system`.
//!
//! STUB: being written.
