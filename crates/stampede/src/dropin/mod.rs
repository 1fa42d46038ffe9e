//! Drop-in command lines: `stampede pgbench ...` (and a `pgbench` symlink) must accept pgbench
//! 18's command line exactly and answer bad input with pgbench's words and exit statuses. This
//! module owns that translation's first half: argv -> a value ([`pgbench_args::Outcome`]) with
//! pgbench's meaning, before any I/O. What the value becomes (stampede's plan, output streams,
//! libpq-style messages) is the `pgbench` command's business.
//!
//! Layout: `getopt` is glibc's `getopt_long` (the rules every pgbench on Linux parses with),
//! `cnum` the C number conversions pgbench applies to option values, `pgbench_args` pgbench's
//! option loop and checks, `pgbench_opts` the value it produces (and the [`pgbench_opts::Host`]
//! it asks), `pgbench_help` what it prints without running (`--help`, `-V`,
//! `-b list`, `--show-script`), `host` the process-side answers the parser asks for (environment,
//! clock and random seeds, the user name).
//!
//! Use (the `pgbench` command):
//! ```text
//! let args: Vec<String> = /* ["pgbench", pgbench's arguments...]; argv[0] as invoked via a symlink */;
//! let mut host = MyHost { sys: SystemHost, .. };   // Host: file_script, clients, scripts_done
//! match pgbench_args::parse(&args, &mut host) {
//!     Outcome::Exit(e) => { print!("{}", e.stdout); eprint!("{}", e.stderr); exit(e.code) }
//!     Outcome::Init(o) => { eprint!("{}", o.stderr); /* run o.init_steps */ }
//!     Outcome::Run(o) => { eprint!("{}", o.stderr); /* o.scripts, o.clients, ... */ }
//! }
//! ```

// Wired into `main` by the `pgbench` command; until then only the tests use it.
#![allow(dead_code)]

pub mod cnum;
pub mod getopt;
pub mod host;
pub mod pgbench_args;
pub mod pgbench_help;
pub mod pgbench_opts;

#[cfg(test)]
mod pgbench_args_tests;
