//! pgbench 18's command line, parsed as pgbench parses it: the same options (short and long, with
//! getopt_long's rules, [`crate::dropin::getopt`]), the same checks in the same order, the same messages
//! and exit statuses. The result is one value ([`Outcome`]): what to initialize, what to run, or
//! what to print before exiting. Nothing here reads a file, connects, or prints; what pgbench does
//! in the middle of its option loop that needs the outside world (reading and compiling a `-f`
//! script, raising the open-files limit for `-c`, drawing a seed from the clock) is asked of a
//! [`Host`], at the point pgbench does it, so that a command line with several faults reports the
//! one pgbench reports.
//!
//! The reference is `main()` of `src/bin/pgbench/pgbench.c` on REL_18_STABLE: the `long_options[]`
//! table and the option string `b:c:Cd:D:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v`, the `switch` on
//! each option (with `option_parse_int`, `parseScriptWeight`, `findBuiltin`, `checkInitSteps`,
//! `set_random_seed`), then, after the loop: the default script, the scripts' final compilation
//! (`postprocess_sql_command`, where `-M` matters), the total weight, DBNAME, the
//! initialization-mode checks and the benchmarking-mode checks. pgbench's messages are printed by
//! its logging library as `pgbench: error: ...`, `pgbench: detail: ...`, `pgbench: hint: ...`,
//! and plain `pgbench: ...` for information; getopt's own complaints start with `argv[0]`.
//!
//! Exit statuses: 0 for `--help`, `-V`, `-b list`, `--show-script`; 1 for every error here.

use sut::QueryMode;
use workload::tpcb::Builtin;

use super::help::{builtin_list, show_script, usage, version_line};
pub use super::opts::{
    DbNameFrom, Exit, Host, Msg, Options, Outcome, PartitionMethod, ScriptSource, ScriptSpec,
};
use crate::dropin::cnum::{atof, atoi, scan_u64_exact, strtoint, strtol};
use crate::dropin::getopt::{Found, Getopt, HasArg, LongOpt, ShortOpt};

/// pgbench's `ALL_INIT_STEPS`: the characters `-I` accepts (and a space, which does nothing).
pub const ALL_INIT_STEPS: &str = "dtgGvpf";
/// pgbench's `DEFAULT_INIT_STEPS`.
pub const DEFAULT_INIT_STEPS: &str = "dtgvp";
/// pgbench's `MAX_SCRIPTS`.
pub const MAX_SCRIPTS: usize = 128;
/// pgbench's `DEFAULT_NXACTS`: transactions per client when neither `-t` nor `-T` is given.
pub const DEFAULT_TRANSACTIONS: i32 = 10;

/// The option loop's identifiers: pgbench's short letters and its codes for long-only options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    Builtin,
    Client,
    Connect,
    Dbname,
    Define,
    File,
    Fillfactor,
    Host,
    Initialize,
    InitSteps,
    Jobs,
    Log,
    LatencyLimit,
    NoVacuum,
    Port,
    Progress,
    Protocol,
    Quiet,
    ReportPerCommand,
    Rate,
    Scale,
    SelectOnly,
    SkipSomeUpdates,
    Time,
    Transactions,
    Username,
    VacuumAll,
    UnloggedTables,
    Tablespace,
    IndexTablespace,
    SamplingRate,
    AggregateInterval,
    ProgressTimestamp,
    LogPrefix,
    ForeignKeys,
    RandomSeed,
    ShowScript,
    Partitions,
    PartitionMethod,
    FailuresDetailed,
    MaxTries,
    VerboseErrors,
    ExitOnAbort,
    Debug,
}

const fn long(name: &'static str, has_arg: HasArg, key: K) -> LongOpt<K> {
    LongOpt { name, has_arg, key }
}

const fn short(letter: char, has_arg: HasArg, key: K) -> ShortOpt<K> {
    ShortOpt {
        letter,
        has_arg,
        key,
    }
}

use HasArg::{No, Required as Req};

/// pgbench's `long_options[]`, in its order (getopt lists ambiguous matches in this order).
const LONGS: &[LongOpt<K>] = &[
    long("builtin", Req, K::Builtin),
    long("client", Req, K::Client),
    long("connect", No, K::Connect),
    long("dbname", Req, K::Dbname),
    long("define", Req, K::Define),
    long("file", Req, K::File),
    long("fillfactor", Req, K::Fillfactor),
    long("host", Req, K::Host),
    long("initialize", No, K::Initialize),
    long("init-steps", Req, K::InitSteps),
    long("jobs", Req, K::Jobs),
    long("log", No, K::Log),
    long("latency-limit", Req, K::LatencyLimit),
    long("no-vacuum", No, K::NoVacuum),
    long("port", Req, K::Port),
    long("progress", Req, K::Progress),
    long("protocol", Req, K::Protocol),
    long("quiet", No, K::Quiet),
    long("report-per-command", No, K::ReportPerCommand),
    long("rate", Req, K::Rate),
    long("scale", Req, K::Scale),
    long("select-only", No, K::SelectOnly),
    long("skip-some-updates", No, K::SkipSomeUpdates),
    long("time", Req, K::Time),
    long("transactions", Req, K::Transactions),
    long("username", Req, K::Username),
    long("vacuum-all", No, K::VacuumAll),
    long("unlogged-tables", No, K::UnloggedTables),
    long("tablespace", Req, K::Tablespace),
    long("index-tablespace", Req, K::IndexTablespace),
    long("sampling-rate", Req, K::SamplingRate),
    long("aggregate-interval", Req, K::AggregateInterval),
    long("progress-timestamp", No, K::ProgressTimestamp),
    long("log-prefix", Req, K::LogPrefix),
    long("foreign-keys", No, K::ForeignKeys),
    long("random-seed", Req, K::RandomSeed),
    long("show-script", Req, K::ShowScript),
    long("partitions", Req, K::Partitions),
    long("partition-method", Req, K::PartitionMethod),
    long("failures-detailed", No, K::FailuresDetailed),
    long("max-tries", Req, K::MaxTries),
    long("verbose-errors", No, K::VerboseErrors),
    long("exit-on-abort", No, K::ExitOnAbort),
    long("debug", No, K::Debug),
];

/// pgbench's option string `b:c:Cd:D:f:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v`.
const SHORTS: &[ShortOpt<K>] = &[
    short('b', Req, K::Builtin),
    short('c', Req, K::Client),
    short('C', No, K::Connect),
    short('d', Req, K::Dbname),
    short('D', Req, K::Define),
    short('f', Req, K::File),
    short('F', Req, K::Fillfactor),
    short('h', Req, K::Host),
    short('i', No, K::Initialize),
    short('I', Req, K::InitSteps),
    short('j', Req, K::Jobs),
    short('l', No, K::Log),
    short('L', Req, K::LatencyLimit),
    short('M', Req, K::Protocol),
    short('n', No, K::NoVacuum),
    short('N', No, K::SkipSomeUpdates),
    short('p', Req, K::Port),
    short('P', Req, K::Progress),
    short('q', No, K::Quiet),
    short('r', No, K::ReportPerCommand),
    short('R', Req, K::Rate),
    short('s', Req, K::Scale),
    short('S', No, K::SelectOnly),
    short('t', Req, K::Transactions),
    short('T', Req, K::Time),
    short('U', Req, K::Username),
    short('v', No, K::VacuumAll),
];

/// pgbench's `get_progname`: the last path component of `argv[0]`.
fn progname_of(argv0: &str) -> String {
    argv0.rsplit('/').next().unwrap_or(argv0).to_string()
}

/// Parse pgbench's command line. `args[0]` is the program name as invoked (getopt's messages
/// start with it; pgbench's own with its last path component).
pub fn parse(args: &[String], host: &mut dyn Host) -> Outcome {
    let progname = progname_of(args.first().map(String::as_str).unwrap_or("pgbench"));
    if let Some(first) = args.get(1) {
        if first == "--help" || first == "-?" {
            return Outcome::Exit(Exit {
                code: 0,
                stdout: usage(&progname),
                stderr: String::new(),
            });
        }
        if first == "--version" || first == "-V" {
            return Outcome::Exit(Exit {
                code: 0,
                stdout: version_line(),
                stderr: String::new(),
            });
        }
    }
    let mut p = Parser {
        o: Options::new(progname),
        host,
    };
    match p.parse(args) {
        Ok(o) => o,
        Err(e) => Outcome::Exit(e),
    }
}

struct Parser<'h> {
    o: Options,
    host: &'h mut dyn Host,
}

/// pgbench's flags that decide which options fit which mode.
#[derive(Default)]
struct Seen {
    init_mode: bool,
    benchmarking_option: bool,
    initialization_option: bool,
    init_steps: Option<String>,
    /// `-d` (an empty one counts: pgbench then takes no positional DBNAME).
    dbname: Option<String>,
}

impl Parser<'_> {
    fn say(&mut self, msgs: &[Msg]) {
        for m in msgs {
            m.render(&self.o.progname, &mut self.o.stderr);
        }
    }

    /// Print `msgs`, exit with status 1.
    fn fail(&mut self, msgs: &[Msg]) -> Exit {
        self.say(msgs);
        Exit {
            code: 1,
            stdout: String::new(),
            stderr: std::mem::take(&mut self.o.stderr),
        }
    }

    /// pgbench's `pg_fatal`.
    fn fatal(&mut self, text: String) -> Exit {
        self.fail(&[Msg::Error(text)])
    }

    /// Exit 0 with this on standard error (`-b list`, `--show-script`).
    fn done(&mut self, text: &str) -> Exit {
        self.o.stderr.push_str(text);
        Exit {
            code: 0,
            stdout: String::new(),
            stderr: std::mem::take(&mut self.o.stderr),
        }
    }

    fn hint(&self) -> Msg {
        Msg::Hint(format!(
            "Try \"{} --help\" for more information.",
            self.o.progname
        ))
    }

    fn parse(&mut self, args: &[String]) -> Result<Outcome, Exit> {
        let env_seed = self.host.env("PGBENCH_RANDOM_SEED");
        if !self.set_random_seed(env_seed.as_deref()) {
            return Err(self.fatal(
                "error while setting random seed from PGBENCH_RANDOM_SEED environment variable"
                    .into(),
            ));
        }
        let posix = self.host.env("POSIXLY_CORRECT").is_some();
        let mut seen = Seen::default();
        let mut g = Getopt::new(args, SHORTS, LONGS, posix);
        while let Some(found) = g.next() {
            match found {
                Found::Opt(key, arg) => self.option(key, arg.unwrap_or(""), &mut seen)?,
                Found::Error(line) => {
                    let hint = self.hint();
                    return Err(self.fail(&[Msg::Raw(line), hint]));
                }
            }
        }
        self.after_loop(seen, g.operands())
    }

    /// One option, as pgbench's `switch (c)`.
    fn option(&mut self, key: K, arg: &str, seen: &mut Seen) -> Result<(), Exit> {
        match key {
            K::Builtin => {
                if arg == "list" {
                    return Err(self.done(&builtin_list()));
                }
                let (name, weight) = self.script_weight(arg)?;
                let b = self.find_builtin(&name)?;
                self.add_script(ScriptSource::Builtin(b), weight)?;
                seen.benchmarking_option = true;
                self.o.internal_script_used = true;
            }
            K::Client => {
                seen.benchmarking_option = true;
                self.o.clients = self.parse_int(arg, "-c/--clients", 1, i32::MAX)?;
                let n = self.o.clients;
                if let Err(m) = self.host.clients(n) {
                    return Err(self.fail(&m));
                }
            }
            K::Connect => {
                seen.benchmarking_option = true;
                self.o.connect = true;
            }
            K::Dbname => seen.dbname = Some(arg.to_string()),
            K::Define => {
                seen.benchmarking_option = true;
                let Some((name, value)) = arg
                    .split_once('=')
                    .filter(|(n, v)| !n.is_empty() && !v.is_empty())
                else {
                    return Err(self.fatal(format!("invalid variable definition: \"{arg}\"")));
                };
                match self.o.defines.iter_mut().find(|(n, _)| n == name) {
                    Some(d) => d.1 = value.to_string(),
                    None if valid_variable_name(name) => {
                        self.o.defines.push((name.to_string(), value.to_string()))
                    }
                    None => {
                        return Err(self.fatal(format!("option: invalid variable name: \"{name}\"")))
                    }
                }
            }
            K::File => {
                let (path, weight) = self.script_weight(arg)?;
                if let Err(m) = self.host.file_script(&path, weight) {
                    return Err(self.fail(&m));
                }
                self.add_script(ScriptSource::File(path), weight)?;
                seen.benchmarking_option = true;
            }
            K::Fillfactor => {
                seen.initialization_option = true;
                self.o.fillfactor = self.parse_int(arg, "-F/--fillfactor", 10, 100)?;
            }
            K::Host => self.o.host = Some(arg.to_string()),
            K::Initialize => seen.init_mode = true,
            K::InitSteps => {
                self.check_init_steps(arg)?;
                seen.init_steps = Some(arg.to_string());
                seen.initialization_option = true;
            }
            K::Jobs => {
                seen.benchmarking_option = true;
                self.o.jobs = self.parse_int(arg, "-j/--jobs", 1, i32::MAX)?;
            }
            K::Log => {
                seen.benchmarking_option = true;
                self.o.log = true;
            }
            K::LatencyLimit => {
                let limit_ms = atof(arg);
                // NaN passes pgbench's `<= 0.0` test.
                if limit_ms <= 0.0 {
                    return Err(self.fatal(format!("invalid latency limit: \"{arg}\"")));
                }
                seen.benchmarking_option = true;
                self.o.latency_limit_us = (limit_ms * 1000.0) as i64;
            }
            K::Protocol => {
                seen.benchmarking_option = true;
                self.o.query_mode = match arg {
                    "simple" => QueryMode::Simple,
                    "extended" => QueryMode::Extended,
                    "prepared" => QueryMode::Prepared,
                    _ => return Err(self.fatal(format!("invalid query mode (-M): \"{arg}\""))),
                };
            }
            K::NoVacuum => self.o.no_vacuum = true,
            K::SkipSomeUpdates => {
                self.add_script(ScriptSource::Builtin(Builtin::SimpleUpdate), 1)?;
                seen.benchmarking_option = true;
                self.o.internal_script_used = true;
            }
            K::Port => self.o.port = Some(arg.to_string()),
            K::Progress => {
                seen.benchmarking_option = true;
                self.o.progress = self.parse_int(arg, "-P/--progress", 1, i32::MAX)?;
            }
            K::Quiet => {
                seen.initialization_option = true;
                self.o.quiet = true;
            }
            K::ReportPerCommand => {
                seen.benchmarking_option = true;
                self.o.report_per_command = true;
            }
            K::Rate => {
                let rate = atof(arg);
                seen.benchmarking_option = true;
                // NaN passes pgbench's `<= 0.0` test.
                if rate <= 0.0 {
                    return Err(self.fatal(format!("invalid rate limit: \"{arg}\"")));
                }
                self.o.rate = rate;
            }
            K::Scale => {
                self.o.scale_given = true;
                self.o.scale = self.parse_int(arg, "-s/--scale", 1, i32::MAX)?;
            }
            K::SelectOnly => {
                self.add_script(ScriptSource::Builtin(Builtin::SelectOnly), 1)?;
                seen.benchmarking_option = true;
                self.o.internal_script_used = true;
            }
            K::Transactions => {
                seen.benchmarking_option = true;
                self.o.transactions = self.parse_int(arg, "-t/--transactions", 1, i32::MAX)?;
            }
            K::Time => {
                seen.benchmarking_option = true;
                self.o.duration = self.parse_int(arg, "-T/--time", 1, i32::MAX)?;
            }
            K::Username => self.o.username = Some(arg.to_string()),
            K::VacuumAll => {
                seen.benchmarking_option = true;
                self.o.vacuum_all = true;
            }
            K::UnloggedTables => {
                seen.initialization_option = true;
                self.o.unlogged_tables = true;
            }
            K::Tablespace => {
                seen.initialization_option = true;
                self.o.tablespace = Some(arg.to_string());
            }
            K::IndexTablespace => {
                seen.initialization_option = true;
                self.o.index_tablespace = Some(arg.to_string());
            }
            K::SamplingRate => {
                seen.benchmarking_option = true;
                let rate = atof(arg);
                if rate <= 0.0 || rate > 1.0 {
                    return Err(self.fatal(format!("invalid sampling rate: \"{arg}\"")));
                }
                self.o.sample_rate = rate;
            }
            K::AggregateInterval => {
                seen.benchmarking_option = true;
                self.o.aggregate_interval =
                    self.parse_int(arg, "--aggregate-interval", 1, i32::MAX)?;
            }
            K::ProgressTimestamp => {
                self.o.progress_timestamp = true;
                seen.benchmarking_option = true;
            }
            K::LogPrefix => {
                seen.benchmarking_option = true;
                self.o.log_prefix = Some(arg.to_string());
            }
            K::ForeignKeys => {
                seen.initialization_option = true;
                self.o.foreign_keys = true;
            }
            K::RandomSeed => {
                seen.benchmarking_option = true;
                if !self.set_random_seed(Some(arg)) {
                    return Err(self.fatal(
                        "error while setting random seed from --random-seed option".into(),
                    ));
                }
            }
            K::ShowScript => {
                let b = self.find_builtin(arg)?;
                return Err(self.done(&show_script(b)));
            }
            K::Partitions => {
                seen.initialization_option = true;
                self.o.partitions = self.parse_int(arg, "--partitions", 0, i32::MAX)?;
            }
            K::PartitionMethod => {
                seen.initialization_option = true;
                self.o.partition_method = if arg.eq_ignore_ascii_case("range") {
                    PartitionMethod::Range
                } else if arg.eq_ignore_ascii_case("hash") {
                    PartitionMethod::Hash
                } else {
                    return Err(self.fatal(format!(
                        "invalid partition method, expecting \"range\" or \"hash\", got: \"{arg}\""
                    )));
                };
            }
            K::FailuresDetailed => {
                seen.benchmarking_option = true;
                self.o.failures_detailed = true;
            }
            K::MaxTries => {
                let tries = atoi(arg);
                if tries < 0 {
                    return Err(self.fatal(format!("invalid number of maximum tries: \"{arg}\"")));
                }
                seen.benchmarking_option = true;
                self.o.max_tries = tries as u32;
            }
            K::VerboseErrors => {
                seen.benchmarking_option = true;
                self.o.verbose_errors = true;
            }
            K::ExitOnAbort => {
                seen.benchmarking_option = true;
                self.o.exit_on_abort = true;
            }
            K::Debug => self.o.debug = true,
        }
        Ok(())
    }

    /// Everything after the option loop, in pgbench's order.
    fn after_loop(&mut self, seen: Seen, operands: &[&str]) -> Result<Outcome, Exit> {
        let mut benchmarking_option = seen.benchmarking_option;
        if self.o.scripts.is_empty() && !seen.init_mode {
            self.add_script(ScriptSource::Builtin(Builtin::TpcbLike), 1)?;
            benchmarking_option = true;
            self.o.internal_script_used = true;
        }
        let mode = self.o.query_mode;
        if let Err(m) = self.host.scripts_done(mode, &self.o.scripts) {
            return Err(self.fail(&m));
        }
        let total_weight: u64 = self.o.scripts.iter().map(|s| u64::from(s.weight)).sum();
        if total_weight == 0 && !seen.init_mode {
            return Err(self.fatal("total script weight must not be zero".into()));
        }
        self.o.threads = self.o.jobs.min(self.o.clients);

        let mut rest = operands.iter();
        match seen.dbname {
            Some(d) => {
                self.o.dbname = d;
                self.o.dbname_from = DbNameFrom::Option;
            }
            None => self.default_dbname(rest.next().copied())?,
        }
        if let Some(extra) = rest.next() {
            let hint = self.hint();
            return Err(self.fail(&[
                Msg::Error(format!(
                    "too many command-line arguments (first is \"{extra}\")"
                )),
                hint,
            ]));
        }

        if seen.init_mode {
            if benchmarking_option {
                return Err(self.fatal(
                    "some of the specified options cannot be used in initialization (-i) mode"
                        .into(),
                ));
            }
            if self.o.partitions == 0 && self.o.partition_method != PartitionMethod::None {
                return Err(
                    self.fatal("--partition-method requires greater than zero --partitions".into())
                );
            }
            if self.o.partitions > 0 && self.o.partition_method == PartitionMethod::None {
                self.o.partition_method = PartitionMethod::Range;
            }
            let mut steps = seen
                .init_steps
                .unwrap_or_else(|| DEFAULT_INIT_STEPS.to_string());
            if self.o.no_vacuum {
                steps = steps.replace('v', " ");
            }
            if self.o.foreign_keys && !steps.contains('f') {
                steps.push('f');
            }
            self.o.init_steps = steps;
            return Ok(Outcome::Init(Box::new(self.take())));
        }
        if seen.initialization_option {
            return Err(self.fatal(
                "some of the specified options cannot be used in benchmarking mode".into(),
            ));
        }
        self.benchmark_checks()?;
        Ok(Outcome::Run(Box::new(self.take())))
    }

    /// pgbench's checks of the benchmarking options among themselves.
    fn benchmark_checks(&mut self) -> Result<(), Exit> {
        let o = &mut self.o;
        if o.transactions > 0 && o.duration > 0 {
            return Err(self.fatal(
                "specify either a number of transactions (-t) or a duration (-T), not both".into(),
            ));
        }
        if o.transactions <= 0 && o.duration <= 0 {
            o.transactions = DEFAULT_TRANSACTIONS;
        }
        let o = &self.o;
        let fault = if o.sample_rate > 0.0 && !o.log {
            Some(
                "log sampling (--sampling-rate) is allowed only when logging transactions (-l)"
                    .to_string(),
            )
        } else if o.sample_rate > 0.0 && o.aggregate_interval > 0 {
            Some("log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time".to_string())
        } else if o.aggregate_interval > 0 && !o.log {
            Some("log aggregation is allowed only when actually logging transactions".to_string())
        } else if !o.log && o.log_prefix.is_some() {
            Some(
                "log file prefix (--log-prefix) is allowed only when logging transactions (-l)"
                    .to_string(),
            )
        } else if o.duration > 0 && o.aggregate_interval > o.duration {
            Some(format!(
                "number of seconds for aggregation ({}) must not be higher than test duration ({})",
                o.aggregate_interval, o.duration
            ))
        } else if o.duration > 0
            && o.aggregate_interval > 0
            && o.duration % o.aggregate_interval != 0
        {
            Some(format!(
                "duration ({}) must be a multiple of aggregation interval ({})",
                o.duration, o.aggregate_interval
            ))
        } else if o.progress_timestamp && o.progress == 0 {
            Some("--progress-timestamp is allowed only under --progress".to_string())
        } else if o.max_tries == 0 && o.latency_limit_us == 0 && o.duration <= 0 {
            Some("an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)".to_string())
        } else {
            None
        };
        match fault {
            Some(text) => Err(self.fatal(text)),
            None => Ok(()),
        }
    }

    fn take(&mut self) -> Options {
        std::mem::replace(&mut self.o, Options::new(String::new()))
    }

    /// DBNAME when `-d` was not given: the first non-option, else `PGDATABASE`, else `PGUSER`,
    /// else the operating-system user.
    fn default_dbname(&mut self, positional: Option<&str>) -> Result<(), Exit> {
        let nonempty = |v: Option<String>| v.filter(|s| !s.is_empty());
        let (name, from) = if let Some(p) = positional {
            (p.to_string(), DbNameFrom::Positional)
        } else if let Some(v) = nonempty(self.host.env("PGDATABASE")) {
            (v, DbNameFrom::PgDatabase)
        } else if let Some(v) = nonempty(self.host.env("PGUSER")) {
            (v, DbNameFrom::PgUser)
        } else {
            match self.host.os_user() {
                Ok(u) => (u, DbNameFrom::OsUser),
                Err(e) => return Err(self.fail(&[Msg::Info(e)])),
            }
        };
        self.o.dbname = name;
        self.o.dbname_from = from;
        Ok(())
    }

    /// pgbench's `option_parse_int`.
    fn parse_int(&mut self, arg: &str, name: &str, min: i32, max: i32) -> Result<i32, Exit> {
        let (v, end, erange) = strtoint(arg);
        if !arg[end..]
            .bytes()
            .all(|b| b.is_ascii_whitespace() || b == 0x0b)
        {
            return Err(self.fatal(format!("invalid value \"{arg}\" for option {name}")));
        }
        if erange || v < min || v > max {
            return Err(self.fatal(format!("{name} must be in range {min}..{max}")));
        }
        Ok(v)
    }

    /// pgbench's `parseScriptWeight`: `NAME@W` (the last `@`), W an integer in 0..=INT_MAX.
    fn script_weight(&mut self, arg: &str) -> Result<(String, u32), Exit> {
        let Some(at) = arg.rfind('@') else {
            return Ok((arg.to_string(), 1));
        };
        let spec = &arg[at..];
        let (w, end, erange) = strtol(&spec[1..]);
        if erange || end == 0 || end != spec.len() - 1 {
            return Err(self.fatal(format!("invalid weight specification: {spec}")));
        }
        if w > i64::from(i32::MAX) || w < 0 {
            return Err(self.fatal(format!(
                "weight specification out of range (0 .. {}): {w}",
                i32::MAX
            )));
        }
        Ok((arg[..at].to_string(), w as u32))
    }

    /// pgbench's `findBuiltin`: the builtin whose name starts with `name`, if only one does.
    fn find_builtin(&mut self, name: &str) -> Result<Builtin, Exit> {
        let found: Vec<Builtin> = Builtin::PGBENCH
            .iter()
            .copied()
            .filter(|b| b.name().starts_with(name))
            .collect();
        if let [one] = found.as_slice() {
            return Ok(*one);
        }
        let msg = if found.is_empty() {
            format!("no builtin script found for name \"{name}\"")
        } else {
            format!(
                "ambiguous builtin name: {} builtin scripts found for prefix \"{name}\"",
                found.len()
            )
        };
        let mut e = self.fatal(msg);
        e.stderr.push_str(&builtin_list());
        Err(e)
    }

    /// pgbench's `addScript` (the parsing and the empty-script check are the host's, for files).
    fn add_script(&mut self, source: ScriptSource, weight: u32) -> Result<(), Exit> {
        if self.o.scripts.len() >= MAX_SCRIPTS {
            return Err(self.fatal(format!("at most {MAX_SCRIPTS} SQL scripts are allowed")));
        }
        self.o.scripts.push(ScriptSpec { source, weight });
        Ok(())
    }

    /// pgbench's `checkInitSteps`.
    fn check_init_steps(&mut self, steps: &str) -> Result<(), Exit> {
        if steps.is_empty() {
            return Err(self.fatal("no initialization steps specified".into()));
        }
        if let Some(c) = steps
            .chars()
            .find(|c| !ALL_INIT_STEPS.contains(*c) && *c != ' ')
        {
            return Err(self.fail(&[
                Msg::Error(format!("unrecognized initialization step \"{c}\"")),
                Msg::Detail(format!(
                    "Allowed step characters are: \"{ALL_INIT_STEPS}\"."
                )),
            ]));
        }
        Ok(())
    }

    /// pgbench's `set_random_seed`: None (the default) and `time` take the clock, `rand` a strong
    /// random source, else an unsigned integer. An explicit seed is announced on standard error.
    fn set_random_seed(&mut self, seed: Option<&str>) -> bool {
        let value = match seed {
            None | Some("time") => self.host.time_seed(),
            Some("rand") => match self.host.strong_seed() {
                Some(v) => v,
                None => {
                    self.say(&[Msg::Error("could not generate random seed".into())]);
                    return false;
                }
            },
            Some(s) => match scan_u64_exact(s) {
                Some(v) => v,
                None => {
                    self.say(&[
                        Msg::Error(format!("unrecognized random seed option \"{s}\"")),
                        Msg::Detail("Expecting an unsigned integer, \"time\" or \"rand\".".into()),
                    ]);
                    return false;
                }
            },
        };
        if seed.is_some() {
            self.say(&[Msg::Info(format!("setting random seed to {value}"))]);
        }
        self.o.random_seed = value;
        true
    }
}

/// pgbench's `valid_variable_name`: a letter, `_` or a non-ASCII byte, then also digits.
pub fn valid_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok = |b: u8| b >= 0x80 || b.is_ascii_alphabetic() || b == b'_';
    match bytes.next() {
        Some(b) if first_ok(b) => bytes.all(|b| first_ok(b) || b.is_ascii_digit()),
        _ => false,
    }
}
