//! Where the database is: libpq's flags, and the embedded server's options. Nothing given (and
//! no PG* variables naming a server) means the embedded server.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Database server host or socket directory (PGHOST).
    #[arg(
        short = 'h',
        long = "host",
        value_name = "HOSTNAME",
        help_heading = "Target"
    )]
    pub host: Option<String>,
    /// Database server port (PGPORT).
    #[arg(
        short = 'p',
        long = "port",
        value_name = "PORT",
        help_heading = "Target"
    )]
    pub port: Option<String>,
    /// Connect as this user (PGUSER).
    #[arg(
        short = 'U',
        long = "username",
        value_name = "USERNAME",
        help_heading = "Target"
    )]
    pub username: Option<String>,
    /// Database name, `key=value` connection string or postgresql:// URL (PGDATABASE).
    #[arg(
        short = 'd',
        long = "dbname",
        value_name = "DBNAME",
        help_heading = "Target"
    )]
    pub dbname: Option<String>,
    /// A DBNAME given as a positional argument (filled by the command that reads its
    /// positionals; `-d` is the way to name a database).
    #[arg(skip)]
    pub positional_dbname: Option<String>,
    /// A password given on the command line (sysbench's `--pgsql-password`): it wins over
    /// PGPASSWORD and the password file, not over one written in a connection string (libpq's
    /// order: connection string, then options, then the environment).
    #[arg(skip)]
    pub password: Option<sut::conninfo::Password>,
    /// A MySQL target named by options rather than a URL (sysbench's `--mysql-host`,
    /// `--mysql-port`, ... with `--db-driver=mysql`): one entry per host.
    #[arg(skip)]
    pub mysql: Option<Vec<sut::mysql::Conninfo>>,
    /// `--db-driver=mysql` without a host, or a `mysql://` URL without one: the embedded
    /// MariaDB, with this database.
    #[arg(skip)]
    pub mysql_embedded: Option<String>,
    /// Use the embedded server even if PG* environment variables are set.
    #[arg(
        long = "embedded",
        conflicts_with_all = ["host", "port", "username", "dbname"],
        help_heading = "Embedded server (when no target is given)"
    )]
    pub embedded: bool,
    /// The PostgreSQL bin directory to use (default: pg_config --bindir, the newest
    /// /usr/lib/postgresql/*/bin, then PATH).
    #[arg(
        long = "pg-bindir",
        value_name = "DIR",
        help_heading = "Embedded server (when no target is given)"
    )]
    pub pg_bindir: Option<PathBuf>,
    /// Leave it running afterwards and print how to reach and stop it.
    #[arg(
        long = "keep-server",
        help_heading = "Embedded server (when no target is given)"
    )]
    pub keep_server: bool,
    /// A server setting NAME=VALUE on top of stampede's defaults (repeatable).
    #[arg(
        long = "set",
        value_name = "NAME=VALUE",
        help_heading = "Embedded server (when no target is given)"
    )]
    pub settings: Vec<String>,
}
