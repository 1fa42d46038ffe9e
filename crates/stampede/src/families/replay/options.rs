//! `stampede replay`'s own options (flattened into the run's, `families::RunArgs`), and the
//! capture options `stampede replay parse` shares with it.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

const REPLAY: &str = "Replay (stampede replay)";

/// The log's format; `auto` tells them apart by their first lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Auto,
    /// PostgreSQL's `stderr` log with a `log_line_prefix` (--log-line-prefix).
    Stderr,
    /// PostgreSQL's `csvlog` (RDS and Aurora's downloadable logs included).
    Csvlog,
    /// PostgreSQL 15+'s `jsonlog`.
    Jsonlog,
    /// MySQL's or MariaDB's general query log (a file).
    General,
    /// MySQL's or MariaDB's slow query log with long_query_time = 0.
    Slow,
    /// A replay file (`stampede replay parse`).
    Replay,
}

/// Which order the replay keeps between statements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Order {
    /// Each session's own order; sessions run side by side as the schedule says.
    #[default]
    Session,
    /// Also across sessions: a statement waits until every statement that ended before it
    /// began in the capture has been answered.
    Strict,
}

/// What to read from a captured log, shared by `replay` and `replay parse`.
#[derive(Args, Debug, Default, Clone)]
pub struct CaptureArgs {
    /// The log's format [auto].
    #[arg(long = "format", value_enum, value_name = "FORMAT", help_heading = REPLAY)]
    pub format: Option<Format>,
    /// A stderr log's log_line_prefix, as postgresql.conf has it (default: the common forms,
    /// recognised from the log).
    #[arg(long = "log-line-prefix", value_name = "PREFIX", help_heading = REPLAY)]
    pub log_line_prefix: Option<String>,
    /// Keep only the sessions of these databases (repeatable).
    #[arg(long = "only-database", value_name = "NAME", help_heading = REPLAY)]
    pub only_database: Vec<String>,
    /// Keep only the sessions of these users (repeatable).
    #[arg(long = "only-user", value_name = "NAME", help_heading = REPLAY)]
    pub only_user: Vec<String>,
    /// Keep only the sessions of these application names (repeatable).
    #[arg(long = "only-application", value_name = "NAME", help_heading = REPLAY)]
    pub only_application: Vec<String>,
    /// Keep only statements from this time on (`2026-11-29 09:40:00`, the log's time zone
    /// or UTC).
    #[arg(long = "begin", value_name = "TIME", help_heading = REPLAY)]
    pub begin: Option<String>,
    /// Keep only statements before this time.
    #[arg(long = "end", value_name = "TIME", help_heading = REPLAY)]
    pub end: Option<String>,
}

/// `stampede replay CAPTURE`'s options.
#[derive(Args, Debug, Default, Clone)]
#[group(id = "replay_options")]
pub struct Options {
    /// The captured log or replay file (`stampede replay CAPTURE` sets it).
    #[arg(long = "capture-file", value_name = "FILE", help_heading = REPLAY)]
    pub capture: Option<PathBuf>,
    /// Replay at this multiple of the captured pace (2: twice as fast), or `max`: each
    /// session as fast as the server answers it [1].
    #[arg(long = "speed", value_name = "X|max", help_heading = REPLAY)]
    pub speed: Option<String>,
    /// `strict`: hold a statement until every statement that ended before it began in the
    /// capture has been answered, for logs where one session's statement must not overtake
    /// another's [session].
    #[arg(long = "order", value_enum, value_name = "ORDER", help_heading = REPLAY)]
    pub order: Option<Order>,
    /// Connect a captured user's sessions as another user: FROM=TO, or *=TO for all
    /// (repeatable). Passwords come from the target, PGPASSWORD or .pgpass.
    #[arg(long = "map-user", value_name = "FROM=TO", help_heading = REPLAY)]
    pub map_user: Vec<String>,
    /// Replay a captured database's sessions on another database: FROM=TO, or *=TO
    /// (repeatable).
    #[arg(long = "map-db", value_name = "FROM=TO", help_heading = REPLAY)]
    pub map_db: Vec<String>,
    #[command(flatten)]
    pub read: CaptureArgs,
}

impl Options {
    /// The options given, for a run that is not a replay.
    pub fn given(&self) -> Vec<&'static str> {
        let r = &self.read;
        crate::families::options::given(&[
            (self.capture.is_some(), "--capture-file"),
            (self.speed.is_some(), "--speed"),
            (self.order.is_some(), "--order"),
            (!self.map_user.is_empty(), "--map-user"),
            (!self.map_db.is_empty(), "--map-db"),
            (r.format.is_some(), "--format"),
            (r.log_line_prefix.is_some(), "--log-line-prefix"),
            (!r.only_database.is_empty(), "--only-database"),
            (!r.only_user.is_empty(), "--only-user"),
            (!r.only_application.is_empty(), "--only-application"),
            (r.begin.is_some(), "--begin"),
            (r.end.is_some(), "--end"),
        ])
    }
}

/// `stampede replay parse LOG -o FILE`, or `--general-log-table -d URL -o FILE`.
#[derive(Args, Debug, Clone)]
pub struct ParseArgs {
    /// The captured log.
    #[arg(value_name = "LOG", required_unless_present = "general_log_table")]
    pub log: Option<PathBuf>,
    /// Read the capture from MySQL's `mysql.general_log` table (log_output = TABLE, times to
    /// the microsecond) on the target instead of a file.
    #[arg(long = "general-log-table", conflicts_with = "log")]
    pub general_log_table: bool,
    /// Where `--general-log-table` reads from.
    #[command(flatten)]
    pub target: crate::targeting::TargetArgs,
    /// The replay file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub read: CaptureArgs,
}
