//! What `stampede pgbench` prints without running anything: `--help` (pgbench 18's usage: the
//! same sections, the same options in the same order and columns, descriptions in our words),
//! `-V`, `-b list` and `--show-script`.
//!
//! `-V` names the pgbench release whose behaviour is followed and the stampede that implements it.
//! The help's last lines say where to report bugs and the home page, as pgbench's do; they point at
//! stampede, since stampede's bugs are not PostgreSQL's.

use workload::tpcb::Builtin;

use super::args::{ALL_INIT_STEPS, DEFAULT_INIT_STEPS};

use super::PGBENCH_VERSION;

/// `pgbench -V` / `--version` (standard output).
pub fn version_line() -> String {
    format!(
        "pgbench (PostgreSQL) {PGBENCH_VERSION} (stampede {})\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What `--help` adds after pgbench's text: stampede's own options of `stampede pgbench`.
pub fn stampede_additions() -> String {
    "\nstampede's additions (off unless given):\n\
     \x20 --check                  check the commit count (and the TPC-B invariant) afterwards\n\
     \x20 --html=FILE              write a self-contained HTML report\n\
     \x20 --io=auto|epoll|uring|threads  the measured run's socket I/O (default: auto)\n\
     \x20 --json=FILE              write the full result as JSON\n\
     \x20 --observe                watch the server (wait events, statements, checkpoints)\n"
        .to_string()
}

/// `pgbench --help` / `-?` (standard output), `progname` as invoked.
pub fn usage(progname: &str) -> String {
    let repo = env!("CARGO_PKG_REPOSITORY");
    format!(
        "{progname} is a benchmarking tool for PostgreSQL (this one is stampede's).

Usage:
  {progname} [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         run in initialization mode
  -I, --init-steps=[{ALL_INIT_STEPS}]+ (default \"{DEFAULT_INIT_STEPS}\")
                           the initialization steps to run, in this order
                           d: drop the pgbench tables that exist
                           t: create the tables of the standard pgbench scenario
                           g: generate the data in the client
                           G: generate the data in the server
                           v: VACUUM the standard tables
                           p: create the primary keys of the standard tables
                           f: create foreign keys between the standard tables
  -F, --fillfactor=NUM     fill factor of the tables
  -n, --no-vacuum          leave out VACUUM during initialization
  -q, --quiet              log progress only every 5 seconds
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between the tables
  --index-tablespace=TABLESPACE
                           tablespace of the indexes
  --partition-method=(range|hash)
                           how pgbench_accounts is partitioned (default: range)
  --partitions=NUM         number of partitions of pgbench_accounts (default: 0)
  --tablespace=TABLESPACE  tablespace of the tables
  --unlogged-tables        create the tables unlogged

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME with weight W (default: 1)
                           (\"-b list\" lists the builtin scripts)
  -f, --file=FILENAME[@W]  add script FILENAME with weight W (default: 1)
  -N, --skip-some-updates  no updates of pgbench_tellers and pgbench_branches
                           (as \"-b simple-update\")
  -S, --select-only        run SELECT-only transactions
                           (as \"-b select-only\")

Benchmarking options:
  -c, --client=NUM         database clients running at once (default: 1)
  -C, --connect            open a new connection for every transaction
  -D, --define=VARNAME=VALUE
                           set a variable for the custom scripts
  -j, --jobs=NUM           number of threads (default: 1)
  -l, --log                write the time of every transaction to a log file
  -L, --latency-limit=NUM  count the transactions that take over NUM ms as late
  -M, --protocol=simple|extended|prepared
                           how queries are sent to the server (default: simple)
  -n, --no-vacuum          do not VACUUM before the run
  -P, --progress=NUM       report progress every NUM seconds
  -r, --report-per-command report latency, failures and retries of every command
  -R, --rate=NUM           aim at this many transactions per second
  -s, --scale=NUM          scaling factor to report in the output
  -t, --transactions=NUM   transactions each client runs (default: 10)
  -T, --time=NUM           length of the run in seconds
  -v, --vacuum-all         VACUUM all four standard tables before the run
  --aggregate-interval=NUM log aggregates over NUM seconds
  --exit-on-abort          stop the whole run when a client aborts
  --failures-detailed      report failures by kind
  --log-prefix=PREFIX      prefix of the transaction log files
                           (default: \"pgbench_log\")
  --max-tries=NUM          most tries of a transaction (default: 1)
  --progress-timestamp     Unix epoch timestamps in progress reports
  --random-seed=SEED       random seed (\"time\", \"rand\", an integer)
  --sampling-rate=NUM      share of the transactions to log (e.g., 0.01 for 1%)
  --show-script=NAME       print the code of a builtin script, then exit
  --verbose-errors         print the message of every error

Common options:
  --debug                  print debugging output
  -d, --dbname=DBNAME      database to connect to
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port
  -U, --username=USERNAME  database user to connect as
  -V, --version            print the version, then exit
  -?, --help               print this help, then exit

Report bugs to <{repo}/issues>.
stampede home page: <{repo}>
"
    )
}

/// pgbench's `listAvailableScripts` (standard error): pgbench's three builtins.
pub fn builtin_list() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in Builtin::PGBENCH {
        s.push_str(&format!("  {:>13}: {}\n", b.name(), b.description()));
    }
    s.push('\n');
    s
}

/// `--show-script NAME` (standard error): `-- name: description`, then the script.
pub fn show_script(b: Builtin) -> String {
    let mut s = format!("-- {}: {}\n", b.name(), b.description());
    for line in b.script() {
        s.push_str(line);
        s.push('\n');
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_has_pgbench_s_sections_and_options() {
        let u = usage("pgbench");
        let sections: Vec<&str> = u
            .lines()
            .filter(|l| l.ends_with(':') && !l.starts_with(' ') && l != &"Usage:")
            .collect();
        assert_eq!(
            sections,
            [
                "Initialization options:",
                "Options to select what to run:",
                "Benchmarking options:",
                "Common options:"
            ]
        );
        // Every option of pgbench 18's usage, in its order.
        let options: Vec<&str> = u
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter(|l| l.starts_with('-'))
            .map(|l| l.split_whitespace().next().unwrap().trim_end_matches(','))
            .collect();
        let expected = [
            "-i",
            "-I",
            "-F",
            "-n",
            "-q",
            "-s",
            "--foreign-keys",
            "--index-tablespace=TABLESPACE",
            "--partition-method=(range|hash)",
            "--partitions=NUM",
            "--tablespace=TABLESPACE",
            "--unlogged-tables",
            "-b",
            "-f",
            "-N",
            "-S",
            "-c",
            "-C",
            "-D",
            "-j",
            "-l",
            "-L",
            "-M",
            "-n",
            "-P",
            "-r",
            "-R",
            "-s",
            "-t",
            "-T",
            "-v",
            "--aggregate-interval=NUM",
            "--exit-on-abort",
            "--failures-detailed",
            "--log-prefix=PREFIX",
            "--max-tries=NUM",
            "--progress-timestamp",
            "--random-seed=SEED",
            "--sampling-rate=NUM",
            "--show-script=NAME",
            "--verbose-errors",
            "--debug",
            "-d",
            "-h",
            "-p",
            "-U",
            "-V",
            "-?",
        ];
        assert_eq!(options, expected);
        // Descriptions start in column 28 (27 characters before them), as pgbench's.
        for l in u.lines().filter(|l| l.starts_with("  -") && l.len() > 27) {
            let (opt, desc) = l.split_at(27);
            if !opt.ends_with(' ') || desc.starts_with(' ') {
                continue; // an option too long for the column; its description is on the next line
            }
            assert!(!desc.is_empty(), "{l}");
        }
        assert!(u.contains("Report bugs to <"));
        // PostgreSQL's limit for --help lines is 95 characters; its programs aim for 80.
        assert!(u.lines().all(|l| l.len() <= 80), "{u}");
    }

    #[test]
    fn version_and_lists() {
        assert!(version_line().starts_with("pgbench (PostgreSQL) 18."));
        assert_eq!(
            builtin_list(),
            "Available builtin scripts:\n      tpcb-like: <builtin: TPC-B (sort of)>\n  \
             simple-update: <builtin: simple update>\n    select-only: <builtin: select only>\n\n"
        );
        assert_eq!(
            show_script(Builtin::SelectOnly),
            "-- select-only: <builtin: select only>\n\\set aid random(1, 100000 * :scale)\n\
             SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\n"
        );
    }
}
