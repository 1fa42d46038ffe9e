//! The embedded default: with no target given, stampede runs a private PostgreSQL in a temporary
//! directory, on a private unix socket, and removes it afterwards (also after an error or Ctrl-C).
//!
//! STUB: the interface is fixed; the implementation is being written.

use std::path::PathBuf;

use crate::{ConnConfig, Error};

/// Where the PostgreSQL server binaries were found, and which version they are.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub bindir: PathBuf,
    /// e.g. "15.18"
    pub version: String,
    /// How they were found: "pg_config --bindir", "/usr/lib/postgresql/<N>/bin", "PATH", "--pg-bindir".
    pub found_by: String,
}

#[derive(Clone, Debug, Default)]
pub struct EmbeddedOptions {
    /// Explicit bindir (`--pg-bindir`); otherwise `pg_config --bindir`, the newest
    /// `/usr/lib/postgresql/*/bin`, then PATH.
    pub bindir: Option<PathBuf>,
    /// Use (and keep) this data directory instead of a temporary one (`stampede server start`).
    pub data_dir: Option<PathBuf>,
    /// Do not stop or remove the server when the handle is dropped (`--keep-server`).
    pub keep: bool,
    /// Extra `name=value` server settings, applied after stampede's defaults.
    pub settings: Vec<(String, String)>,
}

/// A running private server. Dropping it stops the server and removes its directory unless
/// `keep` was set.
pub struct EmbeddedServer {
    _private: (),
}

impl EmbeddedServer {
    pub fn find_binaries(explicit: Option<&std::path::Path>) -> Result<Binaries, Error> {
        let _ = explicit;
        todo!()
    }

    /// initdb (if the data directory is new), start, wait until it accepts connections.
    pub fn start(opts: &EmbeddedOptions) -> Result<EmbeddedServer, Error> {
        let _ = opts;
        todo!()
    }

    /// How to connect: unix socket in the private directory, trust auth, database `postgres`.
    pub fn conn_config(&self) -> ConnConfig {
        todo!()
    }

    pub fn binaries(&self) -> &Binaries {
        todo!()
    }

    /// The settings the server was started with, for printing (`name = value`).
    pub fn settings(&self) -> &[(String, String)] {
        todo!()
    }

    pub fn data_dir(&self) -> &std::path::Path {
        todo!()
    }

    /// Stop now (fast shutdown) and remove the directory unless kept.
    pub fn stop(self) -> Result<(), Error> {
        todo!()
    }
}
