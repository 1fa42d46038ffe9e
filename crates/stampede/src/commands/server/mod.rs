//! `stampede server start|status|stop|list`: a persistent embedded PostgreSQL (or, with
//! `--mysql`, MariaDB) for repeated runs without reloading. Its data directory is kept until
//! `server stop --remove` removes it (only a directory that holds a server stampede made:
//! `list.rs`, with `server list`).
//!
//! A server started here is as observable as one a run starts (issue 35): on PostgreSQL,
//! `pg_stat_statements` (preloaded by the embedded server's settings) is created in `postgres`,
//! the database the printed command names, and in `template1`, so every database made later
//! with `createdb` has it too: the observer's top SQL and the statement ledger read its view in
//! the run's database (`observe::sql`). The MariaDB's performance_schema consumers are its
//! startup options (`mysql::embedded`). What is printed to paste is quoted for a shell
//! (`console::shell_word`).

mod list;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use sut::embedded::{EmbeddedOptions, EmbeddedServer};
use sut::mysql::embedded::{EmbeddedMariaDb, EmbeddedMariaDbOptions};

use crate::cli::{ServerAction, ServerArgs, ServerDirArgs, ServerStopArgs};
use crate::console::shell_word;
use crate::targeting::{self, kept};

/// The data directory: `server` for PostgreSQL, `mariadb` beside it for `--mysql`, in
/// `$XDG_DATA_HOME/stampede` or `~/.local/share/stampede`; as root `/var/lib/stampede`: the
/// server then runs as another account (PostgreSQL refuses to run as root), which cannot enter
/// root's home.
fn data_dir(args: &ServerDirArgs) -> Result<PathBuf> {
    match &args.data_dir {
        Some(d) => Ok(kept::absolute(d)),
        None => Ok(kept::home()?.join(if args.mysql { "mariadb" } else { "server" })),
    }
}

/// How to reach the server, printed by `server start|status`: `-d URL`, quoted for a shell. Over
/// TCP the URL carries the password: saying how to connect is these commands' purpose (a run
/// never prints it; its summary names the file that holds it).
fn mariadb_url(server: &EmbeddedMariaDb) -> String {
    let ci = server.conninfo();
    // stampede's passwords are letters and digits; a `stampede.cnf` edited by hand may hold
    // others, which the URL percent-encodes.
    let url = match (&ci.password, server.tcp_password()) {
        (Some(_), Some(pw)) => ci.url_with_password(pw),
        _ => ci.redacted(),
    };
    format!("-d {}", shell_word(&url))
}

/// `stampede server ... --mysql`: the same three actions on an embedded MariaDB.
fn run_mariadb(action: ServerAction) -> Result<i32> {
    match action {
        ServerAction::Start(a) => {
            let dir = data_dir(&a)?;
            if let Some(s) = EmbeddedMariaDb::attach(&dir, None)? {
                already_running(s.pid(), &dir, kept::Kind::MariaDb, &mariadb_url(&s));
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
            started(&dir, kept::Kind::MariaDb, &mariadb_url(&server), &a);
            Ok(0)
        }
        ServerAction::Status(a) => {
            let dir = data_dir(&a)?;
            let s = EmbeddedMariaDb::attach(&dir, None)?;
            Ok(status(&dir, s.map(|s| (s.pid(), mariadb_url(&s)))))
        }
        ServerAction::Stop(a) => {
            let dir = data_dir(&a.dir)?;
            let stopped = EmbeddedMariaDb::stop_data_dir(&dir)?;
            finish_stop(kept::Kind::MariaDb, &dir, &a, stopped)
        }
        ServerAction::List => list::run(),
    }
}

/// How to reach the PostgreSQL, printed by `server start|status`: its socket directory (quoted
/// for a shell when it must be), port, user and database.
fn how_to_connect(server: &EmbeddedServer) -> String {
    format!(
        "-h {} -p {} -U postgres postgres",
        shell_word(&server.socket_dir().display().to_string()),
        server.port()
    )
}

/// `CREATE EXTENSION pg_stat_statements` in `postgres` and `template1` (module header), when
/// the server preloads it; a failure is a warning (the server runs; top SQL is what is lost).
fn create_pg_stat_statements(server: &EmbeddedServer) {
    let preloaded = (server.settings().iter()).any(|(k, v)| {
        k.eq_ignore_ascii_case("shared_preload_libraries") && v.contains("pg_stat_statements")
    });
    if !preloaded {
        crate::console::note(
            "pg_stat_statements is not installed beside the server's binaries: no top SQL \
             (Debian: it is in postgresql-contrib)",
        );
        return;
    }
    let created = crate::runtime::setup().and_then(|rt| {
        rt.block_on(async {
            for db in ["postgres", "template1"] {
                let mut conn = server.conn_config();
                conn.dbname = db.into();
                let mut s = sut::Session::connect(&sut::Target::from(conn)).await?;
                let r = s
                    .simple_query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    .await;
                s.close().await;
                r.with_context(|| format!("in database {db}"))?;
            }
            anyhow::Ok(())
        })
    });
    if let Err(e) = created {
        crate::console::warning(&format!(
            "pg_stat_statements could not be created ({e:#}): no top SQL"
        ));
    }
}

/// After `server stop`: say what was kept, or with `--remove` remove the data directory (one
/// stampede made, running or not) and unlist it. `stopped` says whether a server was running.
fn finish_stop(
    kind: kept::Kind,
    dir: &std::path::Path,
    a: &ServerStopArgs,
    stopped: bool,
) -> Result<i32> {
    if a.remove {
        let size = list::remove(kind, dir)?;
        eprintln!(
            "{}removed {} ({})",
            if stopped { "stopped; " } else { "" },
            dir.display(),
            report::bytes(size as f64)
        );
        return Ok(0);
    }
    if !stopped {
        bail!(
            "no stampede {} is running with data directory {}",
            match kind {
                kept::Kind::Postgres => "server",
                kept::Kind::MariaDb => "MariaDB",
            },
            dir.display()
        );
    }
    eprintln!(
        "stopped; data kept in {} ({}); remove it with `stampede server stop{} --remove`",
        dir.display(),
        report::bytes(list::disk_usage(dir) as f64),
        dir_flag(&a.dir)
    );
    Ok(0)
}

pub fn run(args: ServerArgs) -> Result<i32> {
    let mysql = match &args.action {
        ServerAction::Start(a) | ServerAction::Status(a) => a.mysql,
        ServerAction::Stop(a) => a.dir.mysql,
        ServerAction::List => false,
    };
    if mysql {
        return run_mariadb(args.action);
    }
    match args.action {
        ServerAction::Start(a) => {
            let dir = data_dir(&a)?;
            let settings = targeting::parse_settings(&a.settings)?;
            if let Some(s) = EmbeddedServer::attach(&dir, a.pg_bindir.as_deref())? {
                // A server started by an older stampede may lack it.
                create_pg_stat_statements(&s);
                already_running(s.pid(), &dir, kept::Kind::Postgres, &how_to_connect(&s));
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
            create_pg_stat_statements(&server);
            started(&dir, kept::Kind::Postgres, &how_to_connect(&server), &a);
            Ok(0)
        }
        ServerAction::Status(a) => {
            let dir = data_dir(&a)?;
            let s = EmbeddedServer::attach(&dir, a.pg_bindir.as_deref())?;
            Ok(status(&dir, s.map(|s| (s.pid(), how_to_connect(&s)))))
        }
        ServerAction::Stop(a) => {
            let dir = data_dir(&a.dir)?;
            let stopped = match EmbeddedServer::attach(&dir, a.dir.pg_bindir.as_deref())? {
                Some(s) => {
                    s.stop().context("stopping the embedded PostgreSQL")?;
                    true
                }
                None => false,
            };
            finish_stop(kept::Kind::Postgres, &dir, &a, stopped)
        }
        ServerAction::List => list::run(),
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

/// ` --mysql --data-dir DIR` as the command was given them, for the next command to paste.
/// `server start` on a server that runs already: where it is and how to connect (stdout).
fn already_running(pid: Option<i32>, dir: &std::path::Path, kind: kept::Kind, connect: &str) {
    eprintln!(
        "already running (pid {}), data in {}",
        pid.unwrap_or(0),
        dir.display()
    );
    kept::add(kind, dir);
    println!("{connect}");
}

/// `server start` done: the server is listed (`server list`), how to connect is on stdout, and
/// how to stop it on stderr.
fn started(dir: &std::path::Path, kind: kept::Kind, connect: &str, a: &ServerDirArgs) {
    kept::add(kind, dir);
    eprintln!("started; run benchmarks against it with:");
    println!("{connect}");
    eprintln!("stop it with `stampede server stop{}`", dir_flag(a));
}

fn dir_flag(a: &ServerDirArgs) -> String {
    let mut s = String::new();
    if a.mysql {
        s.push_str(" --mysql");
    }
    if let Some(d) = &a.data_dir {
        s.push_str(&format!(
            " --data-dir {}",
            shell_word(&d.display().to_string())
        ));
    }
    s
}
