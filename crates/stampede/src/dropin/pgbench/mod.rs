//! `stampede pgbench`: pgbench 18's command line, output and exit statuses.
//!
//! The command line is parsed exactly as pgbench parses it (`args`: glibc's getopt_long rules,
//! pgbench's option loop and checks in its order, its messages), with each `-f` file read and
//! compiled at the point pgbench reads it. `-i` runs pgbench's initialization steps (`init`);
//! a benchmark becomes the same [`crate::plan::Plan`] as `stampede run`, with pgbench's
//! defaults and pgbench's output: its version line, "starting vacuum...end.", its progress
//! lines and summary, client aborts as `pgbench: error: ...` when they happen, "Run was
//! aborted; the above results are incomplete." and exit 2 when a client aborted.
//!
//! What stampede adds is off unless asked for, with long options of stampede's own, taken out
//! of the command line before pgbench's parser sees it: `--json FILE`, `--html FILE`,
//! `--check` (the commit count and the TPC-B invariant; a failed check exits 2), `--observe`
//! (the server watcher), `--io auto|epoll|uring|threads`.

mod args;
#[cfg(test)]
mod args_tests;
mod help;
mod host;
mod init;
mod opts;

use std::path::PathBuf;

use anyhow::Result;
use sut::QueryMode;
use workload::script::ScriptSet;

use self::args::{Host, Msg, Options, Outcome, ScriptSource, ScriptSpec};
use self::host::SystemHost;
use crate::families::{IoArg, Protocol, RunArgs};
use crate::plan::{Frontend, Plan};
pub(crate) use crate::run::voice::pgbench::{libpq_connect_error, PGBENCH_VERSION};
use crate::targeting::TargetArgs;

/// stampede's own options in a pgbench command line.
#[derive(Default)]
struct Additions {
    json: Option<PathBuf>,
    html: Option<PathBuf>,
    check: bool,
    observe: bool,
    io: Option<IoArg>,
}

/// Take stampede's long options out of `argv` (exact spellings only: pgbench's parser would
/// take an unambiguous prefix of its own options, and none of pgbench's starts with these).
fn take_additions(argv: Vec<String>) -> Result<(Vec<String>, Additions), String> {
    let mut out = Vec::new();
    let mut add = Additions::default();
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let mut value = |n: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("option '{n}' requires an argument"))
        };
        match name.as_str() {
            "--json" => add.json = Some(value("--json")?.into()),
            "--html" => add.html = Some(value("--html")?.into()),
            "--check" if inline.is_none() => add.check = true,
            "--observe" if inline.is_none() => add.observe = true,
            "--io" => {
                add.io = Some(match value("--io")?.as_str() {
                    "auto" => IoArg::Auto,
                    "epoll" => IoArg::Epoll,
                    "uring" => IoArg::Uring,
                    "threads" => IoArg::Threads,
                    v => {
                        return Err(format!(
                            "invalid --io: \"{v}\" (auto, epoll, uring or threads)"
                        ))
                    }
                })
            }
            _ => out.push(a),
        }
    }
    Ok((out, add))
}

/// The parser's questions, answered by the process (`SystemHost`) and by this command: the
/// scripts are read and compiled when pgbench reads them, in one set.
struct CommandHost {
    sys: SystemHost,
    /// Each `-f` file's text, in command-line order (standard input cannot be read twice).
    files: Vec<(String, String)>,
    set: Option<ScriptSet>,
}

fn os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}

/// A compile error as pgbench prints a syntax error: the first line through its logger, the
/// script's line and the caret as they are.
fn compile_messages(text: &str) -> Vec<Msg> {
    let mut lines = text.lines();
    let mut v: Vec<Msg> = lines
        .next()
        .map(|l| Msg::Error(l.to_string()))
        .into_iter()
        .collect();
    v.extend(lines.map(|l| Msg::Raw(l.to_string())));
    v
}

impl Host for CommandHost {
    fn env(&self, name: &str) -> Option<String> {
        self.sys.env(name)
    }

    fn file_script(&mut self, path: &str, weight: u32) -> Result<(), Vec<Msg>> {
        let text = if path == "-" {
            let mut t = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map_err(|e| {
                vec![Msg::Error(format!(
                    "could not read file \"{path}\": {}",
                    os_error(&e)
                ))]
            })?;
            t
        } else {
            std::fs::read_to_string(path).map_err(|e| {
                vec![Msg::Error(format!(
                    "could not open file \"{path}\": {}",
                    os_error(&e)
                ))]
            })?
        };
        // Compiled alone now, for pgbench's order of errors; again with the others below.
        ScriptSet::new()
            .add_file(path, &text, weight)
            .map_err(|e| compile_messages(&e.to_string()))?;
        self.files.push((path.to_string(), text));
        Ok(())
    }

    fn clients(&mut self, n: i32) -> Result<(), Vec<Msg>> {
        let need = n as u64 + 3;
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit read and write the struct they are given.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
                return Err(vec![Msg::Error(format!(
                    "getrlimit failed: {}",
                    os_error(&std::io::Error::last_os_error())
                ))]);
            }
            let hint =
                "Reduce number of clients, or use limit/ulimit to increase the system limit.";
            if lim.rlim_max < need {
                return Err(vec![
                    Msg::Error(format!(
                        "need at least {need} open files, but system limit is {}",
                        lim.rlim_max
                    )),
                    Msg::Hint(hint.into()),
                ]);
            }
            if lim.rlim_cur < need {
                lim.rlim_cur = need;
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(vec![
                        Msg::Error(format!(
                            "need at least {need} open files, but couldn't raise the limit: {}",
                            os_error(&std::io::Error::last_os_error())
                        )),
                        Msg::Hint(hint.into()),
                    ]);
                }
            }
        }
        Ok(())
    }

    fn scripts_done(&mut self, mode: QueryMode, scripts: &[ScriptSpec]) -> Result<(), Vec<Msg>> {
        let mut set = ScriptSet::new();
        let mut files = self.files.iter();
        for s in scripts {
            match &s.source {
                ScriptSource::Builtin(b) => set.add_builtin(*b, s.weight),
                ScriptSource::File(_) => {
                    let (path, text) = files.next().expect("every file was read in the loop");
                    set.add_file(path, text, s.weight)
                        .map_err(|e| compile_messages(&e.to_string()))?;
                }
            }
        }
        set.check_pgbench_params(mode)
            .map_err(|m| vec![Msg::Error(m)])?;
        self.set = Some(set);
        Ok(())
    }

    fn time_seed(&mut self) -> u64 {
        self.sys.time_seed()
    }

    fn strong_seed(&mut self) -> Option<u64> {
        self.sys.strong_seed()
    }

    fn os_user(&mut self) -> Result<String, String> {
        self.sys.os_user()
    }
}

/// The target pgbench connects to: what its options say, the rest left to libpq's rules (the
/// environment, the password file). pgbench resolved DBNAME itself.
fn target_of(o: &Options) -> TargetArgs {
    TargetArgs {
        host: o.host.clone(),
        port: o.port.clone(),
        username: o.username.clone(),
        dbname: Some(o.dbname.clone()),
        ..Default::default()
    }
}

pub fn main(argv: Vec<String>) -> Result<i32> {
    let (argv, add) = match take_additions(argv) {
        Ok(x) => x,
        Err(m) => {
            eprintln!("pgbench: {m}");
            eprintln!("pgbench: hint: Try \"pgbench --help\" for more information.");
            return Ok(1);
        }
    };
    let mut host = CommandHost {
        sys: SystemHost,
        files: Vec::new(),
        set: None,
    };
    let args: Vec<String> = std::iter::once("pgbench".to_string()).chain(argv).collect();
    match args::parse(&args, &mut host) {
        Outcome::Exit(e) => {
            print!("{}", e.stdout);
            eprint!("{}", e.stderr);
            if e.code == 0 && e.stdout.contains("Usage:") {
                print!("{}", help::stampede_additions());
            }
            Ok(e.code)
        }
        Outcome::Init(o) => {
            eprint!("{}", o.stderr);
            initialize(&o)
        }
        Outcome::Run(o) => {
            eprint!("{}", o.stderr);
            let set = host.set.take().expect("scripts_done compiled the scripts");
            benchmark(&o, set, add)
        }
    }
}

fn initialize(o: &Options) -> Result<i32> {
    let opts = load::tpcb::InitOptions {
        scale: i64::from(o.scale),
        fillfactor: o.fillfactor as u32,
        partitions: o.partitions as u32,
        partition_method: match o.partition_method {
            opts::PartitionMethod::None => None,
            opts::PartitionMethod::Range => Some(load::tpcb::PartitionMethod::Range),
            opts::PartitionMethod::Hash => Some(load::tpcb::PartitionMethod::Hash),
        },
        unlogged: o.unlogged_tables,
        foreign_keys: o.foreign_keys,
        tablespace: o.tablespace.clone(),
        index_tablespace: o.index_tablespace.clone(),
        ..Default::default()
    };
    let conn = crate::targeting::resolve_pg(&target_of(o))?;
    init::run(
        &init::InitPlan {
            steps: o.init_steps.clone(),
            opts,
            quiet: o.quiet,
        },
        &conn,
    )
}

/// A benchmark: pgbench's options as a stampede run's.
fn benchmark(o: &Options, set: ScriptSet, add: Additions) -> Result<i32> {
    let a = RunArgs {
        clients: Some(o.clients as u32),
        jobs: Some(o.threads as u32),
        time: (o.duration > 0).then_some(o.duration as u64),
        transactions: (o.duration <= 0).then_some(o.transactions.max(1) as u64),
        rate: (o.rate > 0.0).then_some(o.rate),
        latency_limit: (o.latency_limit_us > 0).then_some(o.latency_limit_us as f64 / 1000.0),
        protocol: Some(match o.query_mode {
            QueryMode::Simple => Protocol::Simple,
            QueryMode::Extended => Protocol::Extended,
            QueryMode::Prepared => Protocol::Prepared,
        }),
        max_tries: Some(o.max_tries),
        connect: o.connect,
        random_seed: Some(o.random_seed.to_string()),
        no_vacuum: o.no_vacuum,
        vacuum_all: o.vacuum_all,
        exit_on_abort: o.exit_on_abort,
        io: add.io.unwrap_or_default(),
        progress: (o.progress > 0).then_some(f64::from(o.progress)),
        report_per_command: o.report_per_command,
        log: o.log,
        log_prefix: o.log_prefix.clone(),
        aggregate_interval: (o.aggregate_interval > 0).then_some(o.aggregate_interval as u64),
        sampling_rate: (o.sample_rate > 0.0).then_some(o.sample_rate),
        json: add.json,
        html: add.html,
        failures_detailed: o.failures_detailed,
        verbose_errors: o.verbose_errors,
        // pgbench connects every client through libpq's host order.
        spread: crate::families::SpreadArg::First,
        no_check: !add.check,
        no_observe: !add.observe,
        scale: o.scale_given.then_some(i64::from(o.scale)),
        define: (o.defines.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        compiled: Some(set),
        progress_timestamp: o.progress_timestamp,
        debug: o.debug,
        target: target_of(o),
        ..Default::default()
    };
    let plan = Plan::from_run(a, Frontend::Pgbench)?;
    crate::run::execute(plan)
}
