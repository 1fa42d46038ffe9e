//! A streaming standby of a running server, in a new data directory that
//! [`EmbeddedServer::start`] then starts like any kept server (`stampede server start
//! --standby-of HOST:PORT`): a one-machine primary and standby for failover measurements.
//!
//! The copy is `pg_basebackup -R -X stream` (the PostgreSQL docs' way to make a standby,
//! "Setting Up a Standby Server" in High Availability), run as the account the server will run
//! as, so every file it writes is already that account's. `-R` writes `standby.signal` and
//! `primary_conninfo`; the primary's `stampede.conf` comes along and is rewritten at start with
//! this server's own port and socket. Must not touch: a directory that already holds a server
//! (it is started as it is, never copied over).

use std::path::Path;
use std::process::Command;

use super::{embedded_err, run_as_account, EmbeddedServer, DEFAULT_PORT};
use crate::Error;

impl EmbeddedServer {
    /// Copy the server at `primary` (`HOST[:PORT]`, reached as the `postgres` user as the
    /// embedded server's trust rules allow) into `data_dir` as its standby. A `data_dir` that
    /// already holds a server is left alone: `Ok(false)`.
    pub fn clone_standby(
        bindir: Option<&Path>,
        data_dir: &Path,
        primary: &str,
    ) -> Result<bool, Error> {
        if data_dir.join("PG_VERSION").is_file() {
            return Ok(false);
        }
        // pg_basebackup runs from the directory's parent (the server account may not read the
        // current one): the path must not be relative to here.
        let data_dir = &std::path::absolute(data_dir)
            .map_err(|e| embedded_err(format!("{}: {e}", data_dir.display())))?;
        let (host, port) = match primary.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>().map_err(|_| {
                    embedded_err(format!("--standby-of {primary}: `{p}` is not a port"))
                })?,
            ),
            None => (primary, DEFAULT_PORT),
        };
        let binaries = Self::find_binaries(bindir)?;
        let run_as = run_as_account()?;
        super::lifecycle::make_private(data_dir, run_as.as_ref())?;
        let mut cmd = Command::new(binaries.bindir.join("pg_basebackup"));
        cmd.arg("-D")
            .arg(data_dir)
            .args(["-h", host, "-p", &port.to_string(), "-U", "postgres"])
            .args(["-R", "-X", "stream", "-c", "fast", "--no-password"])
            .env_remove("PGDATA")
            .env("LC_ALL", "C");
        if let Some(parent) = data_dir.parent() {
            cmd.current_dir(parent);
        }
        if let Some(u) = &run_as {
            use std::os::unix::process::CommandExt;
            cmd.uid(u.uid).gid(u.gid);
        }
        let out = cmd
            .output()
            .map_err(|e| embedded_err(format!("cannot run pg_basebackup: {e}")))?;
        if !out.status.success() {
            // Leave no half copy behind: the next start would take it for a server.
            let _ = std::fs::remove_dir_all(data_dir);
            return Err(embedded_err(format!(
                "pg_basebackup from {host}:{port} failed ({}): {}; the primary must accept \
                 replication connections over TCP from this machine (`stampede server start \
                 --set listen_addresses=127.0.0.1` does)",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(true)
    }
}
