//! `stampede server start|status|stop`: a persistent embedded PostgreSQL (or, with `--mysql`,
//! MariaDB) for repeated runs without reloading. Its data directory is the user's and is never
//! removed by stampede.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::mysql::embedded::{EmbeddedMariaDb, EmbeddedMariaDbOptions};

use crate::cli::{ServerAction, ServerArgs, ServerDirArgs};
use crate::targeting;

/// `$XDG_DATA_HOME/stampede/server` or `~/.local/share/stampede/server`; as root,
/// `/var/lib/stampede/server`: the server then runs as another account (PostgreSQL refuses to
/// run as root), which cannot enter root's home.
fn default_data_dir(name: &str) -> Result<PathBuf> {
    if sut::embedded::is_root() {
        return Ok(PathBuf::from("/var/lib/stampede").join(name));
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(x).join("stampede").join(name));
    }
    let home = std::env::var_os("HOME").context("HOME is not set: pass --data-dir")?;
    Ok(PathBuf::from(home).join(".local/share/stampede").join(name))
}

/// The data directory: `server` for PostgreSQL, `mariadb` beside it for `--mysql`.
fn data_dir(args: &ServerDirArgs) -> Result<PathBuf> {
    match &args.data_dir {
        Some(d) => Ok(d.clone()),
        None => default_data_dir(if args.mysql { "mariadb" } else { "server" }),
    }
}

/// How to reach the server, printed by `server start|status`: `-d URL`, quoted for a shell. Over
/// TCP the URL carries the password: saying how to connect is these commands' purpose (a run
/// never prints it; its summary names the file that holds it).
fn mariadb_url(server: &EmbeddedMariaDb) -> String {
    let ci = server.conninfo();
    let mut url = ci.redacted();
    if let (Some(_), Some(pw)) = (&ci.password, server.tcp_password()) {
        url = url.replacen(":***@", &format!(":{}@", percent_encode(pw)), 1);
    }
    format!("-d {}", shell_quote(&url))
}

/// A URL's userinfo part: what is not unreserved (RFC 3986) as `%XX`. stampede's passwords
/// are letters and digits; a `stampede.cnf` edited by hand may hold others.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One shell word: single quotes, with each `'` as `'\''`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `stampede server ... --mysql`: the same three actions on an embedded MariaDB.
fn run_mariadb(action: ServerAction) -> Result<i32> {
    match action {
        ServerAction::Start(a) => {
            let dir = data_dir(&a)?;
            if let Some(s) = EmbeddedMariaDb::attach(&dir, None)? {
                eprintln!(
                    "already running (pid {}), data in {}",
                    s.pid().unwrap_or(0),
                    dir.display()
                );
                println!("{}", mariadb_url(&s));
                return Ok(0);
            }
            let opts = EmbeddedMariaDbOptions {
                bindir: None,
                data_dir: Some(dir.clone()),
                keep: true,
                settings: targeting::parse_settings(&a.settings)?,
            };
            let server = EmbeddedMariaDb::start(&opts).context("starting the embedded MariaDB")?;
            targeting::describe_mariadb(&server);
            eprintln!("started; run benchmarks against it with:");
            println!("{}", mariadb_url(&server));
            eprintln!(
                "stop it with `stampede server stop --mysql{}`",
                dir_flag(&a)
            );
            Ok(0)
        }
        ServerAction::Status(a) => {
            let dir = data_dir(&a)?;
            let s = EmbeddedMariaDb::attach(&dir, None)?;
            Ok(status(&dir, s.map(|s| (s.pid(), mariadb_url(&s)))))
        }
        ServerAction::Stop(a) => {
            let dir = data_dir(&a)?;
            if EmbeddedMariaDb::stop_data_dir(&dir)? {
                eprintln!("stopped; data kept in {}", dir.display());
                Ok(0)
            } else {
                bail!(
                    "no stampede MariaDB is running with data directory {}",
                    dir.display()
                )
            }
        }
    }
}

fn how_to_connect(server: &EmbeddedServer) -> String {
    format!(
        "-h {} -p {} -U postgres postgres",
        server.socket_dir().display(),
        server.port()
    )
}

pub fn run(args: ServerArgs) -> Result<i32> {
    let mysql = match &args.action {
        ServerAction::Start(a) | ServerAction::Status(a) | ServerAction::Stop(a) => a.mysql,
    };
    if mysql {
        return run_mariadb(args.action);
    }
    match args.action {
        ServerAction::Start(a) => {
            let dir = data_dir(&a)?;
            let settings = targeting::parse_settings(&a.settings)?;
            if let Some(s) = EmbeddedServer::attach(&dir, a.pg_bindir.as_deref())? {
                eprintln!(
                    "already running (pid {}), data in {}",
                    s.pid().unwrap_or(0),
                    dir.display()
                );
                println!("{}", how_to_connect(&s));
                // Attached handles are kept: dropping one leaves the server running.
                return Ok(0);
            }
            if let Some(primary) = &a.standby_of {
                if EmbeddedServer::clone_standby(a.pg_bindir.as_deref(), &dir, primary)
                    .context("copying the primary for a standby")?
                {
                    eprintln!("copied {primary} into {} as its standby", dir.display());
                }
            }
            let opts = EmbeddedOptions {
                bindir: a.pg_bindir.clone(),
                data_dir: Some(dir.clone()),
                keep: true,
                settings,
            };
            let server =
                EmbeddedServer::start(&opts).context("starting the embedded PostgreSQL")?;
            targeting::describe_embedded(&server);
            eprintln!("started; run benchmarks against it with:");
            println!("{}", how_to_connect(&server));
            eprintln!("stop it with `stampede server stop{}`", dir_flag(&a));
            Ok(0)
        }
        ServerAction::Status(a) => {
            let dir = data_dir(&a)?;
            let s = EmbeddedServer::attach(&dir, a.pg_bindir.as_deref())?;
            Ok(status(&dir, s.map(|s| (s.pid(), how_to_connect(&s)))))
        }
        ServerAction::Stop(a) => {
            let dir = data_dir(&a)?;
            match EmbeddedServer::attach(&dir, a.pg_bindir.as_deref())? {
                Some(s) => {
                    s.stop().context("stopping the embedded PostgreSQL")?;
                    eprintln!("stopped; data kept in {}", dir.display());
                    Ok(0)
                }
                None => bail!(
                    "no stampede server is running with data directory {}",
                    dir.display()
                ),
            }
        }
    }
}

/// `server status`: the running server's pid and how to connect (stdout), or "not running"
/// and its exit code.
fn status(dir: &std::path::Path, running: Option<(Option<i32>, String)>) -> i32 {
    match running {
        Some((pid, connect)) => {
            eprintln!(
                "running (pid {}), data in {}",
                pid.unwrap_or(0),
                dir.display()
            );
            println!("{connect}");
            0
        }
        None => {
            crate::console::note(&format!("not running (data directory {})", dir.display()));
            crate::console::EXIT_NOT_RUNNING
        }
    }
}

fn dir_flag(a: &ServerDirArgs) -> String {
    match &a.data_dir {
        Some(d) => format!(" --data-dir {}", d.display()),
        None => String::new(),
    }
}
