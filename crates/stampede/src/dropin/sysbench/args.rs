//! sysbench 1.0.20's command line: `sysbench [options]... [testname] [command]`, options as
//! `--name=value` (a flag's value may be left out: `--skip_trx` is `--skip_trx=on`; a value in
//! the next argument is not one: sysbench takes it for the test name), `-` and `_` the same in
//! names, the last of a repeated option winning.
//!
//! sysbench checks its general options (and a general option's value) before it prints its
//! banner, and the test's options after loading the test: an unknown option is reported after
//! the banner ("invalid option: --x=1"), a bad value of a general option before it ("Invalid
//! value for the 'threads' option: 'abc'"). Both on standard error, exit 1.

use std::collections::BTreeMap;

/// The kinds of values sysbench's options take (`sb_option_type_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `[=on|off]`
    Bool,
    /// `=N`
    Int,
    /// `=N` (a real number)
    Float,
    /// `=STRING`
    Str,
    /// `=[LIST,...]`
    List,
}

/// One option: its name (with `-`), kind, default, and what `--help` says of it.
#[derive(Clone, Copy)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
}

macro_rules! opt {
    ($n:expr, $k:ident, $d:expr, $h:expr) => {
        Opt {
            name: $n,
            kind: Kind::$k,
            default: $d,
            help: $h,
        }
    };
}

/// sysbench's general options, its random-numbers and database options, the pgsql driver's,
/// and the mysql driver's (`sysbench --help` of 1.0.20).
pub const GENERAL: &[Opt] = &[
    opt!("threads", Int, "1", "number of threads to use"),
    opt!("events", Int, "0", "limit for total number of events"),
    opt!("time", Int, "10", "limit for total execution time in seconds"),
    opt!("forced-shutdown", Str, "off", "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable"),
    opt!("thread-stack-size", Str, "64K", "size of stack per thread"),
    opt!("rate", Int, "0", "average transactions rate. 0 for unlimited rate"),
    opt!("report-interval", Int, "0", "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports"),
    opt!("report-checkpoints", List, "", "dump full statistics and reset all counters at specified points in time. The argument is a list of comma-separated values representing the amount of time in seconds elapsed from start of test when report checkpoint(s) must be performed. Report checkpoints are off by default."),
    opt!("debug", Bool, "off", "print more debugging info"),
    opt!("validate", Bool, "off", "perform validation checks where possible"),
    opt!("help", Bool, "off", "print help and exit"),
    opt!("version", Bool, "off", "print version and exit"),
    opt!("config-file", Str, "", "File containing command line options"),
    opt!("tx-rate", Int, "0", "deprecated alias for --rate"),
    opt!("max-requests", Int, "0", "deprecated alias for --events"),
    opt!("max-time", Int, "0", "deprecated alias for --time"),
    opt!("num-threads", Int, "1", "deprecated alias for --threads"),
    opt!("rand-type", Str, "special", "random numbers distribution {uniform,gaussian,special,pareto}"),
    opt!("rand-spec-iter", Int, "12", "number of iterations used for numbers generation"),
    opt!("rand-spec-pct", Int, "1", "percentage of values to be treated as 'special' (for special distribution)"),
    opt!("rand-spec-res", Int, "75", "percentage of 'special' values to use (for special distribution)"),
    opt!("rand-seed", Int, "0", "seed for random number generator. When 0, the current time is used as a RNG seed."),
    opt!("rand-pareto-h", Float, "0.2", "parameter h for pareto distribution"),
    opt!("rand-zipfian-exp", Float, "0.8", "shape parameter (exponent, theta) for the Zipfian distribution"),
    opt!("verbosity", Int, "3", "verbosity level {5 - debug, 0 - only critical messages}"),
    opt!("percentile", Int, "95", "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations"),
    opt!("histogram", Bool, "off", "print latency histogram in report"),
    opt!("db-driver", Str, "mysql", "specifies database driver to use ('help' to get list of available drivers)"),
    opt!("db-ps-mode", Str, "auto", "prepared statements usage mode {auto, disable}"),
    opt!("db-debug", Bool, "off", "print database-specific debug information"),
    opt!("mysql-host", List, "localhost", "MySQL server host"),
    opt!("mysql-port", List, "3306", "MySQL server port"),
    opt!("mysql-socket", List, "", "MySQL socket"),
    opt!("mysql-user", Str, "sbtest", "MySQL user"),
    opt!("mysql-password", Str, "", "MySQL password"),
    opt!("mysql-db", Str, "sbtest", "MySQL database name"),
    opt!("mysql-ssl", Bool, "off", "use SSL connections, if available in the client library"),
    opt!("mysql-ssl-cipher", Str, "", "use specific cipher for SSL connections"),
    opt!("mysql-compression", Bool, "off", "use compression, if available in the client library"),
    opt!("mysql-debug", Bool, "off", "trace all client library calls"),
    opt!("mysql-ignore-errors", List, "1213,1020,1205", "list of errors to ignore, or \"all\""),
    opt!("mysql-dry-run", Bool, "off", "Dry run, pretend that all MySQL client API calls are successful without executing them"),
    opt!("pgsql-host", Str, "localhost", "PostgreSQL server host"),
    opt!("pgsql-port", Int, "5432", "PostgreSQL server port"),
    opt!("pgsql-user", Str, "sbtest", "PostgreSQL user"),
    opt!("pgsql-password", Str, "", "PostgreSQL password"),
    opt!("pgsql-db", Str, "sbtest", "PostgreSQL database name"),
];

/// The options of `oltp_common.lua` (every `oltp_*` test; `sysbench oltp_read_write help`).
pub const OLTP: &[Opt] = &[
    opt!("auto-inc", Bool, "on", "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs"),
    opt!("create-secondary", Bool, "on", "Create a secondary index in addition to the PRIMARY KEY"),
    opt!("delete-inserts", Int, "1", "Number of DELETE/INSERT combinations per transaction"),
    opt!("distinct-ranges", Int, "1", "Number of SELECT DISTINCT queries per transaction"),
    opt!("index-updates", Int, "1", "Number of UPDATE index queries per transaction"),
    opt!("mysql-storage-engine", Str, "innodb", "Storage engine, if MySQL is used"),
    opt!("non-index-updates", Int, "1", "Number of UPDATE non-index queries per transaction"),
    opt!("order-ranges", Int, "1", "Number of SELECT ORDER BY queries per transaction"),
    opt!("pgsql-variant", Str, "", "Use this PostgreSQL variant when running with the PostgreSQL driver. The only currently supported variant is 'redshift'. When enabled, create_secondary is automatically disabled, and delete_inserts is set to 0"),
    opt!("point-selects", Int, "10", "Number of point SELECT queries per transaction"),
    opt!("range-selects", Bool, "on", "Enable/disable all range SELECT queries"),
    opt!("range-size", Int, "100", "Range size for range SELECT queries"),
    opt!("secondary", Bool, "off", "Use a secondary index in place of the PRIMARY KEY"),
    opt!("simple-ranges", Int, "1", "Number of simple range SELECT queries per transaction"),
    opt!("skip-trx", Bool, "off", "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode"),
    opt!("sum-ranges", Int, "1", "Number of SELECT SUM() queries per transaction"),
    opt!("table-size", Int, "10000", "Number of rows per table"),
    opt!("tables", Int, "1", "Number of tables"),
];

/// A parsed command line: options by name (with `-`), the test and the command.
#[derive(Debug, Default)]
pub struct Args {
    pub opts: BTreeMap<String, String>,
    pub test: Option<String>,
    pub command: Option<String>,
    /// Options no table knows yet (the test's, or unknown ones), as given.
    pub unknown: Vec<String>,
}

/// What sysbench says of a value its option cannot take.
pub fn invalid_value(name: &str, value: &str) -> String {
    format!(
        "Invalid value for the '{}' option: '{value}'",
        name.replace('-', "_")
    )
}

fn valid(kind: Kind, v: &str) -> bool {
    match kind {
        Kind::Bool => matches!(
            v.to_ascii_lowercase().as_str(),
            "on" | "off" | "true" | "false" | "yes" | "no" | "1" | "0"
        ),
        Kind::Int => v.parse::<i64>().is_ok(),
        Kind::Float => v.parse::<f64>().is_ok(),
        Kind::Str | Kind::List => true,
    }
}

/// The value of an option given without `=value`: on for a flag; sysbench reads nothing, that
/// is 0 or the empty string, for the others.
fn bare(kind: Kind) -> &'static str {
    match kind {
        Kind::Bool => "on",
        Kind::Int | Kind::Float => "0",
        Kind::Str | Kind::List => "",
    }
}

/// A boolean option's value.
pub fn on(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "on" | "true" | "yes" | "1")
}

fn find<'a>(table: &'a [Opt], name: &str) -> Option<&'a Opt> {
    table.iter().find(|o| o.name == name)
}

/// Split the command line. General options' values are checked here (before the banner, as
/// sysbench does); the test's options are kept in `unknown` for [`Args::take_test_options`].
pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut positionals = Vec::new();
    for arg in argv {
        let Some(body) = arg.strip_prefix("--") else {
            positionals.push(arg.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.replace('_', "-"), Some(v.to_string())),
            None => (body.replace('_', "-"), None),
        };
        match find(GENERAL, &name) {
            Some(o) => {
                let v = value.unwrap_or_else(|| bare(o.kind).into());
                if !valid(o.kind, &v) {
                    return Err(invalid_value(o.name, &v));
                }
                a.opts.insert(o.name.to_string(), v);
            }
            None => a.unknown.push(arg.clone()),
        }
    }
    let mut it = positionals.into_iter();
    a.test = it.next();
    a.command = it.next();
    if let Some(x) = it.next() {
        return Err(format!("Unrecognized command line argument: {x}"));
    }
    // The deprecated aliases.
    for (old, new) in [
        ("tx-rate", "rate"),
        ("max-requests", "events"),
        ("max-time", "time"),
        ("num-threads", "threads"),
    ] {
        if let Some(v) = a.opts.remove(old) {
            a.opts.entry(new.to_string()).or_insert(v);
        }
    }
    Ok(a)
}

impl Args {
    /// The test's options out of `unknown`; an option neither table knows is sysbench's
    /// "invalid option: ARG".
    pub fn take_test_options(&mut self, table: &[Opt]) -> Result<(), String> {
        for arg in std::mem::take(&mut self.unknown) {
            let body = arg.trim_start_matches("--");
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n.replace('_', "-"), Some(v.to_string())),
                None => (body.replace('_', "-"), None),
            };
            let Some(o) = find(table, &name) else {
                return Err(format!("invalid option: {arg}"));
            };
            let v = value.unwrap_or_else(|| bare(o.kind).into());
            if !valid(o.kind, &v) {
                return Err(invalid_value(o.name, &v));
            }
            self.opts.insert(o.name.to_string(), v);
        }
        Ok(())
    }

    /// An option's value, or its default from `tables`.
    pub fn get(&self, name: &str) -> String {
        self.opts.get(name).cloned().unwrap_or_else(|| {
            (GENERAL.iter().chain(OLTP))
                .find(|o| o.name == name)
                .map_or(String::new(), |o| o.default.to_string())
        })
    }

    pub fn int(&self, name: &str) -> i64 {
        self.get(name).parse().unwrap_or(0)
    }
}

/// `--help` lines for a table of options, aligned as sysbench aligns them.
pub fn help_lines(table: &[Opt], underscores: bool) -> String {
    let spelled = |o: &Opt| {
        let n = if underscores {
            o.name.replace('-', "_")
        } else {
            o.name.to_string()
        };
        let v = match o.kind {
            Kind::Bool => "[=on|off]",
            Kind::Int | Kind::Float => "=N",
            Kind::Str => "=STRING",
            Kind::List => "=[LIST,...]",
        };
        format!("--{n}{v}")
    };
    let w = table.iter().map(|o| spelled(o).len()).max().unwrap_or(0);
    let mut s = String::new();
    for o in table {
        s.push_str(&format!("  {:w$} {} [{}]\n", spelled(o), o.help, o.default));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_test_and_command_as_sysbench_reads_them() {
        let a = p(&[
            "--db-driver=pgsql",
            "--threads=8",
            "oltp_read_write",
            "--table_size=100",
            "--skip-trx",
            "run",
        ])
        .unwrap();
        assert_eq!(a.get("threads"), "8");
        assert_eq!(a.get("time"), "10");
        assert_eq!(a.test.as_deref(), Some("oltp_read_write"));
        assert_eq!(a.command.as_deref(), Some("run"));
        assert_eq!(a.unknown, vec!["--table_size=100", "--skip-trx"]);
        let mut a = a;
        a.take_test_options(OLTP).unwrap();
        assert_eq!(a.get("table-size"), "100");
        assert!(on(&a.get("skip-trx")));
    }

    #[test]
    fn sysbench_s_messages_for_bad_options() {
        assert_eq!(
            p(&["--threads=abc", "oltp_read_write", "run"]).unwrap_err(),
            "Invalid value for the 'threads' option: 'abc'"
        );
        let mut a = p(&["oltp_read_write", "--nosuch=1", "run"]).unwrap();
        assert_eq!(
            a.take_test_options(OLTP).unwrap_err(),
            "invalid option: --nosuch=1"
        );
        // A value in the next argument is the test's name, as in sysbench: three positionals.
        let a = p(&["--threads", "2", "oltp_point_select", "run"]).unwrap_err();
        assert_eq!(a, "Unrecognized command line argument: run");
        assert_eq!(
            p(&["--threads", "oltp_point_select"])
                .unwrap()
                .get("threads"),
            "0"
        );
    }

    #[test]
    fn deprecated_aliases_map_to_their_options() {
        let a = p(&["--num-threads=4", "--max-time=3", "x", "run"]).unwrap();
        assert_eq!((a.get("threads"), a.get("time")), ("4".into(), "3".into()));
    }
}
