//! Which database a command talks to: a remote one described by libpq's conventions, or the
//! embedded private server (no target given). The embedded server lives exactly as long as the
//! returned [`Target`]: dropping it stops the server and removes its directory (unless kept),
//! also when a command fails or is interrupted. Its options, `-h -p -U -d` and the embedded
//! server's, are [`TargetArgs`] (`options.rs`), flattened into every command that has a target.

pub mod kept;
mod options;

pub use options::TargetArgs;

use anyhow::{Context, Result};
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::mysql::embedded::{EmbeddedMariaDb, EmbeddedMariaDbOptions};
use sut::{ConnConfig, ConnFlags};

use crate::console::Failure;

pub struct Target {
    pub conn: sut::Target,
    /// Present when stampede started the server itself.
    pub embedded: Option<EmbeddedServer>,
    /// The embedded MariaDB, when stampede started it.
    pub embedded_mysql: Option<EmbeddedMariaDb>,
}

/// The database of the embedded MariaDB to use, when the options ask for it: `--db-driver=mysql`
/// without a host or socket, or a `mysql://` URL without a host (`mysql:///sbtest`).
pub fn embedded_mysql_database(args: &TargetArgs) -> Option<String> {
    if let Some(db) = &args.mysql_embedded {
        return Some(db.clone());
    }
    let url = args
        .dbname
        .as_deref()
        .or(args.positional_dbname.as_deref())?;
    let rest = url.strip_prefix("mysql://")?;
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if !host.is_empty() {
        return None;
    }
    let db = rest[authority.len()..]
        .strip_prefix('/')
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("");
    Some(if db.is_empty() {
        sut::mysql::embedded::DATABASE.to_string()
    } else {
        db.to_string()
    })
}

/// Start the embedded MariaDB (Debian's mariadb-server binaries, a private directory) and
/// create `db` in it.
fn open_mariadb(args: &TargetArgs, db: &str, quiet: bool) -> Result<Target> {
    if args.pg_bindir.is_some() {
        return Err(Failure::usage(
            "--pg-bindir names PostgreSQL's binaries, but the embedded server is MariaDB here",
            "drop --pg-bindir",
        ));
    }
    let opts = EmbeddedMariaDbOptions {
        bindir: None,
        data_dir: None,
        keep: args.keep_server,
        settings: parse_settings(&args.settings)?,
    };
    let server = EmbeddedMariaDb::start(&opts).context("starting the embedded MariaDB")?;
    if !quiet {
        describe_mariadb(&server);
    }
    let conn = server.conninfo().with_database(db);
    if db != sut::mysql::embedded::DATABASE {
        let mut admin = server.conninfo();
        admin.database = None;
        let rt = crate::runtime::setup()?;
        rt.block_on(async {
            let mut s = sut::Session::connect(&admin).await?;
            s.simple_query(&format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
                .await?;
            s.close().await;
            anyhow::Ok(())
        })
        .with_context(|| format!("creating database {db} on the embedded MariaDB"))?;
    }
    Ok(Target {
        conn: sut::Target::MySql(vec![conn]),
        embedded: None,
        embedded_mysql: Some(server),
    })
}

pub fn describe_mariadb(server: &EmbeddedMariaDb) {
    let b = server.binaries();
    crate::console::note(&format!(
        "embedded MariaDB {} from {} (found by {}), data in {}",
        b.version,
        b.server.display(),
        b.found_by,
        server.data_dir().display()
    ));
    let settings: Vec<String> = (server.settings().iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    crate::console::note(&format!("embedded settings: {}", settings.join(" ")));
    for n in server.notes() {
        crate::console::note(n);
    }
    crate::console::note(&mariadb_access(server));
}

/// How the embedded MariaDB is reached, without its password (a run's output never holds it).
fn mariadb_access(server: &EmbeddedMariaDb) -> String {
    let ci = server.conninfo();
    match ci.socket {
        Some(_) => format!(
            "embedded MariaDB on its unix socket only (no TCP; --set port=N opens it): {}",
            ci.redacted()
        ),
        None => format!(
            "embedded MariaDB over TCP: {} (the password is in {}, group [stampede-tcp]); as root \
             over the socket with `mariadb -S {} -uroot`",
            ci.redacted(),
            server.record_file().display(),
            server.socket().display()
        ),
    }
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// True when the command line and environment name no target, so the embedded server is used.
pub fn wants_embedded(args: &TargetArgs) -> bool {
    if args.embedded {
        return true;
    }
    let flags = args.host.is_some()
        || args.mysql.is_some()
        || args.port.is_some()
        || args.username.is_some()
        || args.dbname.is_some()
        || args.positional_dbname.is_some();
    // PGUSER or PGPASSWORD alone do not name a server; PGHOST, PGPORT, PGDATABASE do.
    !flags
        && ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE"]
            .iter()
            .all(|k| env(k).is_none())
}

/// Parse `NAME=VALUE` server settings (validated before anything starts).
pub fn parse_settings(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(Failure::usage(
                format!("--set {s:?}: expected NAME=VALUE"),
                "e.g. --set shared_buffers=1GB",
            )),
        })
        .collect()
}

/// Validate the target flags without any I/O (bad input fails before a connection opens).
pub fn validate(args: &TargetArgs) -> Result<()> {
    if args.dbname.is_some() && args.positional_dbname.is_some() {
        return Err(Failure::usage(
            "the database is given twice (-d/--dbname and a positional DBNAME)",
            "give it once, with -d",
        ));
    }
    let remote_only = !args.settings.is_empty() || args.keep_server || args.pg_bindir.is_some();
    let embedded = wants_embedded(args) || embedded_mysql_database(args).is_some();
    if remote_only && !embedded {
        return Err(Failure::usage(
            "--set, --keep-server and --pg-bindir apply to the embedded server only, but a \
             target was given (options or PGHOST/PGPORT/PGDATABASE)",
            "drop them, or pass --embedded",
        ));
    }
    parse_settings(&args.settings)?;
    Ok(())
}

/// A target that cannot be parsed (a malformed URL or `key=value` string, a port that is no
/// number, an unknown `sslmode`) is a wrong command line: exit 64 before anything connects, as
/// every other bad option (README, "Exit codes"). The message is the parser's, which never
/// quotes a password (`pg::conninfo`, `mysql::conninfo`).
/// The drop-ins keep their peers' words and codes (pgbench exits 1 here).
fn malformed(e: sut::Error) -> anyhow::Error {
    match e {
        sut::Error::Config(m) if crate::console::voice() == crate::console::Voice::Stampede => Failure::usage(
            format!("invalid target (-h/-p/-U/-d or PG* variables): {m}"),
            "give -d a database name, 'key=value ...' pairs, or a postgresql:// or mysql:// URL",
        ),
        e => e.into(),
    }
}

/// The target the options name: a `mysql://` URL given with `-d` is a MySQL target, anything
/// else follows libpq's conventions.
pub fn resolve_remote(args: &TargetArgs) -> Result<sut::Target> {
    if let Some(m) = &args.mysql {
        return Ok(sut::Target::MySql(m.clone()));
    }
    let db = args.dbname.as_deref().or(args.positional_dbname.as_deref());
    if let Some(url) = db.filter(|d| is_mysql_url(d)) {
        let mut list = sut::parse_mysql_url(url).map_err(malformed)?;
        for c in &mut list {
            if let (None, Some(p)) = (&c.password, &args.password) {
                c.password = Some(sut::mysql::Password(p.0.clone()));
            }
        }
        return Ok(sut::Target::MySql(list));
    }
    resolve_pg(args).map(sut::Target::Pg)
}

/// Whether the options name a MySQL target (before anything connects).
pub fn names_mysql(args: &TargetArgs) -> bool {
    args.mysql.is_some()
        || args.mysql_embedded.is_some()
        || (args.dbname.as_deref().or(args.positional_dbname.as_deref())).is_some_and(is_mysql_url)
}

/// Whether a `-d` value names a MySQL target.
pub fn is_mysql_url(d: &str) -> bool {
    d.starts_with("mysql://")
}

/// The PostgreSQL target the options name (libpq's conventions).
pub fn resolve_pg(args: &TargetArgs) -> Result<ConnConfig> {
    let flags = ConnFlags {
        host: args.host.clone(),
        port: args.port.clone(),
        user: args.username.clone(),
        dbname: args
            .dbname
            .clone()
            .or_else(|| args.positional_dbname.clone()),
    };
    let mut conn = ConnConfig::resolve(&flags, &env).map_err(malformed)?;
    if let Some(p) = &args.password {
        // Above the environment and the password file, below the connection string (libpq's
        // order): a password written in the connection string still wins.
        let no_env_password = |k: &str| (k != "PGPASSWORD").then(|| env(k)).flatten();
        let in_conninfo = ConnConfig::resolve(&flags, &no_env_password)
            .map(|c| c.password.is_some())
            .unwrap_or(false);
        if !in_conninfo {
            conn.password = Some(p.clone());
        }
    }
    Ok(conn)
}

/// Resolve the target; starts the embedded server when no target is given.
pub fn open(args: &TargetArgs, quiet: bool) -> Result<Target> {
    validate(args)?;
    if let Some(db) = embedded_mysql_database(args) {
        return open_mariadb(args, &db, quiet);
    }
    if !wants_embedded(args) {
        return Ok(Target {
            conn: resolve_remote(args)?,
            embedded: None,
            embedded_mysql: None,
        });
    }
    let opts = EmbeddedOptions {
        bindir: args.pg_bindir.clone(),
        data_dir: None,
        keep: args.keep_server,
        settings: parse_settings(&args.settings)?,
    };
    let server = EmbeddedServer::start(&opts).context("starting the embedded PostgreSQL")?;
    if !quiet {
        describe_embedded(&server);
    }
    Ok(Target {
        conn: server.conn_config().into(),
        embedded: Some(server),
        embedded_mysql: None,
    })
}

pub fn describe_embedded(server: &EmbeddedServer) {
    let b = server.binaries();
    crate::console::note(&format!(
        "embedded PostgreSQL {} from {} (found by {}), data in {}",
        b.version,
        b.bindir.display(),
        b.found_by,
        server.data_dir().display()
    ));
    let settings: Vec<String> = server
        .settings()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    crate::console::note(&format!("embedded settings: {}", settings.join(" ")));
}

/// After a command: stop the embedded server (removing its directory), or, with `--keep-server`,
/// say how to reach and stop it.
pub fn close(t: Target, keep: bool) -> Result<()> {
    let word = |p: &std::path::Path| crate::console::shell_word(&p.display().to_string());
    if let Some(server) = t.embedded_mysql {
        if keep {
            kept::add(kept::Kind::MariaDb, server.data_dir());
            eprintln!(
                "embedded MariaDB kept running: connect with `mariadb -S {} -uroot {}` or -d {}{}; \
                 stop it with `stampede server stop --mysql --data-dir {}` (--remove also \
                 removes its data)",
                word(server.socket()),
                t.conn.database(),
                crate::console::shell_word(&t.conn.redacted()),
                match server.port() {
                    Some(_) => format!(
                        " (its password is in {}, group [stampede-tcp])",
                        server.record_file().display()
                    ),
                    None => String::new(),
                },
                word(server.data_dir())
            );
            drop(server);
            return Ok(());
        }
        return server.stop().context("stopping the embedded MariaDB");
    }
    let Some(server) = t.embedded else {
        return Ok(());
    };
    if keep {
        kept::add(kept::Kind::Postgres, server.data_dir());
        let conn = server.conn_config();
        let h = &conn.hosts[0];
        eprintln!(
            "embedded server kept running: connect with `psql -h {} -p {} -U {} {}`; stop it with \
             `stampede server stop --data-dir {}` (--remove also removes its data)",
            crate::console::shell_word(&h.host),
            h.port,
            conn.user,
            conn.dbname,
            word(server.data_dir())
        );
        // Dropping a kept server leaves it running (EmbeddedOptions::keep).
        drop(server);
        return Ok(());
    }
    server.stop().context("stopping the embedded PostgreSQL")
}

/// The target as the result describes it (redacted), with the embedded server's settings.
pub(crate) fn target_info(target: &Target) -> report::TargetInfo {
    report::TargetInfo {
        conninfo: target.conn.redacted(),
        embedded: match (&target.embedded, &target.embedded_mysql) {
            (Some(e), _) => Some(report::EmbeddedTarget {
                bin_dir: e.binaries().bindir.display().to_string(),
                settings: e.settings().iter().cloned().collect(),
            }),
            (None, Some(m)) => Some(report::EmbeddedTarget {
                bin_dir: (m.binaries().server.parent())
                    .map_or_else(String::new, |d| d.display().to_string()),
                settings: m.settings().iter().cloned().collect(),
            }),
            (None, None) => None,
        },
    }
}
