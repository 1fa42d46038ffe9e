//! pgbench's option loop, message by message: a table of command lines and the exact standard
//! error and status pgbench 18 gives them (pgbench.c `main()`; where pgbench 15, installed here,
//! behaves the same, its output was compared by hand), then the values of command lines that
//! parse.

use std::collections::HashMap;

use sut::QueryMode;
use workload::tpcb::Builtin;

use super::args::*;
use super::help::builtin_list;

/// A host with a fixed environment, clock and user; `-f` files named `bad*` fail to open.
#[derive(Default)]
struct Fake {
    env: HashMap<String, String>,
    no_strong_random: bool,
    no_user: bool,
    files: Vec<(String, u32)>,
    done: Vec<QueryMode>,
}

impl Host for Fake {
    fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }
    fn file_script(&mut self, path: &str, weight: u32) -> Result<(), Vec<Msg>> {
        if path.starts_with("bad") {
            return Err(vec![Msg::Error(format!(
                "could not open file \"{path}\": No such file or directory"
            ))]);
        }
        self.files.push((path.to_string(), weight));
        Ok(())
    }
    fn scripts_done(&mut self, mode: QueryMode, _: &[ScriptSpec]) -> Result<(), Vec<Msg>> {
        self.done.push(mode);
        Ok(())
    }
    fn time_seed(&mut self) -> u64 {
        777
    }
    fn strong_seed(&mut self) -> Option<u64> {
        (!self.no_strong_random).then_some(4242)
    }
    fn os_user(&mut self) -> Result<String, String> {
        if self.no_user {
            Err("could not look up effective user ID 1234: user does not exist".into())
        } else {
            Ok("osuser".into())
        }
    }
}

fn argv(line: &str) -> Vec<String> {
    std::iter::once("pgbench")
        .chain(line.split_whitespace())
        .map(String::from)
        .collect()
}

fn run_with(host: &mut Fake, args: &[String]) -> Outcome {
    parse(args, host)
}

fn outcome(line: &str) -> Outcome {
    run_with(&mut Fake::default(), &argv(line))
}

fn exit(line: &str) -> Exit {
    match outcome(line) {
        Outcome::Exit(e) => e,
        other => panic!("{line}: {other:?}"),
    }
}

fn run(line: &str) -> Options {
    match outcome(line) {
        Outcome::Run(o) => *o,
        other => panic!("{line}: {other:?}"),
    }
}

fn init(line: &str) -> Options {
    match outcome(line) {
        Outcome::Init(o) => *o,
        other => panic!("{line}: {other:?}"),
    }
}

const HINT: &str = "pgbench: hint: Try \"pgbench --help\" for more information.\n";

/// Every error of pgbench's option loop and of its checks after the loop: the command line, then
/// standard error (`{H}` stands for the `--help` hint line, `{L}` for the builtin list).
const ERRORS: &[(&str, &str)] = &[
    // getopt_long's own messages, then pgbench's hint.
    ("-h home -p 5432 -U calvin ---debug --bad-option", "pgbench: unrecognized option '---debug'\n{H}"),
    ("--bad-option=3", "pgbench: unrecognized option '--bad-option=3'\n{H}"),
    ("-x", "pgbench: invalid option -- 'x'\n{H}"),
    ("-nSV", "pgbench: invalid option -- 'V'\n{H}"),
    ("-n --help", "pgbench: unrecognized option '--help'\n{H}"),
    ("-c", "pgbench: option requires an argument -- 'c'\n{H}"),
    ("--cli", "pgbench: option '--client' requires an argument\n{H}"),
    ("--connect=yes", "pgbench: option '--connect' doesn't allow an argument\n{H}"),
    (
        "--p=5",
        "pgbench: option '--p=5' is ambiguous; possibilities: '--port' '--progress' '--protocol' \
         '--progress-timestamp' '--partitions' '--partition-method'\n{H}",
    ),
    // option_parse_int
    ("-c three", "pgbench: error: invalid value \"three\" for option -c/--clients\n"),
    ("-c 0", "pgbench: error: -c/--clients must be in range 1..2147483647\n"),
    ("-c 99999999999", "pgbench: error: -c/--clients must be in range 1..2147483647\n"),
    ("-j eleven", "pgbench: error: invalid value \"eleven\" for option -j/--jobs\n"),
    ("-j 0", "pgbench: error: -j/--jobs must be in range 1..2147483647\n"),
    ("-i -s two", "pgbench: error: invalid value \"two\" for option -s/--scale\n"),
    ("-s -1", "pgbench: error: -s/--scale must be in range 1..2147483647\n"),
    ("-t zil", "pgbench: error: invalid value \"zil\" for option -t/--transactions\n"),
    ("-t 0", "pgbench: error: -t/--transactions must be in range 1..2147483647\n"),
    ("-T ten", "pgbench: error: invalid value \"ten\" for option -T/--time\n"),
    ("-T 0", "pgbench: error: -T/--time must be in range 1..2147483647\n"),
    ("-F 1", "pgbench: error: -F/--fillfactor must be in range 10..100\n"),
    ("-F 101x", "pgbench: error: invalid value \"101x\" for option -F/--fillfactor\n"),
    ("--progress=0", "pgbench: error: -P/--progress must be in range 1..2147483647\n"),
    ("-P p", "pgbench: error: invalid value \"p\" for option -P/--progress\n"),
    ("--aggregate-interval=-3", "pgbench: error: --aggregate-interval must be in range 1..2147483647\n"),
    ("-i --partitions -1", "pgbench: error: --partitions must be in range 0..2147483647\n"),
    ("-i --partitions=many", "pgbench: error: invalid value \"many\" for option --partitions\n"),
    // -D
    ("--define foobla", "pgbench: error: invalid variable definition: \"foobla\"\n"),
    ("-D =5", "pgbench: error: invalid variable definition: \"=5\"\n"),
    ("-D x=", "pgbench: error: invalid variable definition: \"x=\"\n"),
    ("-D 1x=5", "pgbench: error: option: invalid variable name: \"1x\"\n"),
    // -M, -R, -L, --sampling-rate, --max-tries, --partition-method
    ("-M no-such-mode", "pgbench: error: invalid query mode (-M): \"no-such-mode\"\n"),
    ("--rate=0.0", "pgbench: error: invalid rate limit: \"0.0\"\n"),
    ("-R abc", "pgbench: error: invalid rate limit: \"abc\"\n"),
    ("--latency-limit=0.0", "pgbench: error: invalid latency limit: \"0.0\"\n"),
    ("--sampling-rate=0", "pgbench: error: invalid sampling rate: \"0\"\n"),
    ("--sampling-rate=1.01", "pgbench: error: invalid sampling rate: \"1.01\"\n"),
    ("--max-tries -10", "pgbench: error: invalid number of maximum tries: \"-10\"\n"),
    ("--max-tries 4294967295", "pgbench: error: invalid number of maximum tries: \"4294967295\"\n"),
    (
        "-i --partition-method=BAD",
        "pgbench: error: invalid partition method, expecting \"range\" or \"hash\", got: \"BAD\"\n",
    ),
    // scripts
    ("-b no-such-builtin", "pgbench: error: no builtin script found for name \"no-such-builtin\"\n{L}"),
    ("-b s", "pgbench: error: ambiguous builtin name: 2 builtin scripts found for prefix \"s\"\n{L}"),
    ("-b @1", "pgbench: error: ambiguous builtin name: 3 builtin scripts found for prefix \"\"\n{L}"),
    ("-b list@1", "pgbench: error: no builtin script found for name \"list\"\n{L}"),
    ("--show-script nope", "pgbench: error: no builtin script found for name \"nope\"\n{L}"),
    ("--file=b@c.sql", "pgbench: error: invalid weight specification: @c.sql\n"),
    ("--builtin=select-only@one", "pgbench: error: invalid weight specification: @one\n"),
    ("-b se@", "pgbench: error: invalid weight specification: @\n"),
    ("-b se@5x", "pgbench: error: invalid weight specification: @5x\n"),
    ("-b se@99999999999999999999", "pgbench: error: invalid weight specification: @99999999999999999999\n"),
    (
        "-b select-only@-1",
        "pgbench: error: weight specification out of range (0 .. 2147483647): -1\n",
    ),
    (
        "-b se@2147483648",
        "pgbench: error: weight specification out of range (0 .. 2147483647): 2147483648\n",
    ),
    ("-f bad.sql", "pgbench: error: could not open file \"bad.sql\": No such file or directory\n"),
    ("-b se@0 -b si@0 -b tpcb@0", "pgbench: error: total script weight must not be zero\n"),
    ("-f x@0", "pgbench: error: total script weight must not be zero\n"),
    // -I
    ("-i -I dta", "pgbench: error: unrecognized initialization step \"a\"\npgbench: detail: Allowed step characters are: \"dtgGvpf\".\n"),
    ("-I x", "pgbench: error: unrecognized initialization step \"x\"\npgbench: detail: Allowed step characters are: \"dtgGvpf\".\n"),
    // --random-seed
    (
        "--random-seed=one",
        "pgbench: error: unrecognized random seed option \"one\"\npgbench: detail: Expecting an unsigned integer, \"time\" or \"rand\".\npgbench: error: error while setting random seed from --random-seed option\n",
    ),
    // DBNAME
    ("a b", "pgbench: error: too many command-line arguments (first is \"b\")\n{H}"),
    ("-d a b", "pgbench: error: too many command-line arguments (first is \"b\")\n{H}"),
    ("-i -d x y", "pgbench: error: too many command-line arguments (first is \"y\")\n{H}"),
    // modes
    ("-i -S", "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"),
    ("-i -f x", "pgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"),
    ("-i --random-seed=3", "pgbench: setting random seed to 3\npgbench: error: some of the specified options cannot be used in initialization (-i) mode\n"),
    ("-S -F 90", "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"),
    ("-I dtg", "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"),
    ("--foreign-keys", "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"),
    ("-q", "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"),
    ("--tablespace=x", "pgbench: error: some of the specified options cannot be used in benchmarking mode\n"),
    ("-i --partition-method=hash", "pgbench: error: --partition-method requires greater than zero --partitions\n"),
    // benchmarking checks
    (
        "-N -l --aggregate-interval=5 --log-prefix=notused -t 1000 -T 1",
        "pgbench: error: specify either a number of transactions (-t) or a duration (-T), not both\n",
    ),
    ("--sampling-rate=0.01", "pgbench: error: log sampling (--sampling-rate) is allowed only when logging transactions (-l)\n"),
    (
        "-l --sampling-rate=0.1 --aggregate-interval=3",
        "pgbench: error: log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time\n",
    ),
    ("--aggregate-interval=3", "pgbench: error: log aggregation is allowed only when actually logging transactions\n"),
    ("--log-prefix=x", "pgbench: error: log file prefix (--log-prefix) is allowed only when logging transactions (-l)\n"),
    (
        "-l -T 1 --aggregate-interval=3",
        "pgbench: error: number of seconds for aggregation (3) must not be higher than test duration (1)\n",
    ),
    ("-l -T 5 --aggregate-interval=3", "pgbench: error: duration (5) must be a multiple of aggregation interval (3)\n"),
    ("--progress-timestamp", "pgbench: error: --progress-timestamp is allowed only under --progress\n"),
    (
        "--max-tries 0",
        "pgbench: error: an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)\n",
    ),
];

#[test]
fn every_error_of_the_option_loop() {
    let list = builtin_list();
    for (line, want) in ERRORS {
        let want = want.replace("{H}", HINT).replace("{L}", &list);
        let e = exit(line);
        assert_eq!((e.code, e.stdout.as_str()), (1, ""), "{line}");
        assert_eq!(e.stderr, want, "{line}");
    }
}

#[test]
fn errors_that_need_the_environment() {
    let mut h = Fake::default();
    h.env.insert("PGBENCH_RANDOM_SEED".into(), "x".into());
    let Outcome::Exit(e) = run_with(&mut h, &argv("-n")) else {
        panic!()
    };
    assert_eq!(
        e.stderr,
        "pgbench: error: unrecognized random seed option \"x\"\n\
         pgbench: detail: Expecting an unsigned integer, \"time\" or \"rand\".\n\
         pgbench: error: error while setting random seed from PGBENCH_RANDOM_SEED environment variable\n"
    );
    let mut h = Fake {
        no_strong_random: true,
        ..Fake::default()
    };
    let Outcome::Exit(e) = run_with(&mut h, &argv("--random-seed=rand")) else {
        panic!()
    };
    assert_eq!(
        e.stderr,
        "pgbench: error: could not generate random seed\n\
         pgbench: error: error while setting random seed from --random-seed option\n"
    );
    let mut h = Fake {
        no_user: true,
        ..Fake::default()
    };
    let Outcome::Exit(e) = run_with(&mut h, &argv("-n")) else {
        panic!()
    };
    assert_eq!(
        (e.code, e.stderr.as_str()),
        (
            1,
            "pgbench: could not look up effective user ID 1234: user does not exist\n"
        )
    );
    // POSIXLY_CORRECT: the first non-option ends the options.
    let mut h = Fake::default();
    h.env.insert("POSIXLY_CORRECT".into(), String::new());
    let Outcome::Exit(e) = run_with(&mut h, &argv("db -c three")) else {
        panic!()
    };
    assert_eq!(
        e.stderr,
        format!("pgbench: error: too many command-line arguments (first is \"-c\")\n{HINT}")
    );
}

#[test]
fn the_first_fault_in_command_line_order_is_the_one_reported() {
    assert!(exit("-c three -j eleven").stderr.contains("\"three\""));
    assert!(exit("-j eleven -c three").stderr.contains("\"eleven\""));
    // An option error comes before the end-of-loop checks, wherever it stands.
    assert!(exit("-i -S -c x").stderr.contains("invalid value \"x\""));
    assert!(exit("a b -c x").stderr.contains("invalid value \"x\""));
    // getopt stops at its first complaint.
    assert!(exit("--bad -c x").stderr.contains("'--bad'"));
    // -b list and --show-script exit at once, successfully, before later faults.
    assert_eq!(exit("-b list -c x").code, 0);
    assert_eq!(exit("-c x -b list").code, 1);
}

#[test]
fn the_129th_script_is_refused() {
    let e = exit(&"-S ".repeat(129));
    assert_eq!(
        e.stderr,
        "pgbench: error: at most 128 SQL scripts are allowed\n"
    );
    assert_eq!(run(&"-S ".repeat(128)).scripts.len(), 128);
}

#[test]
fn help_version_and_lists_exit_zero() {
    for line in ["--help", "-?"] {
        let e = exit(line);
        assert_eq!((e.code, e.stderr.as_str()), (0, ""));
        assert!(e
            .stdout
            .starts_with("pgbench is a benchmarking tool for PostgreSQL"));
    }
    for line in ["-V", "--version", "-V -x"] {
        let e = exit(line);
        assert_eq!((e.code, e.stderr.as_str()), (0, ""));
        assert!(
            e.stdout.starts_with("pgbench (PostgreSQL) 18."),
            "{}",
            e.stdout
        );
    }
    let e = exit("-b list");
    assert_eq!((e.code, e.stdout.as_str()), (0, ""));
    assert_eq!(e.stderr, builtin_list());
    let e = exit("--show-script se");
    assert_eq!((e.code, e.stdout.as_str()), (0, ""));
    assert!(e
        .stderr
        .starts_with("-- select-only: <builtin: select only>\n"));
    // The program name printed is the last component of argv[0]; getopt prints argv[0] itself.
    let args: Vec<String> = ["/opt/bin/pgbench", "--help"].map(String::from).to_vec();
    let Outcome::Exit(e) = parse(&args, &mut Fake::default()) else {
        panic!()
    };
    assert!(e.stdout.contains("\n  pgbench [OPTION]... [DBNAME]\n"));
    let args: Vec<String> = ["/opt/bin/pgbench", "-x"].map(String::from).to_vec();
    let Outcome::Exit(e) = parse(&args, &mut Fake::default()) else {
        panic!()
    };
    assert_eq!(
        e.stderr,
        format!("/opt/bin/pgbench: invalid option -- 'x'\n{HINT}")
    );
}

#[test]
fn a_benchmark_command_line() {
    let o = run(
        "-c8 -j 3 -nS --cli 9 -M prepared -T 60 -P 5 --progress-timestamp -R 100tps \
         -L 2.5 -l --log-prefix=x --sampling-rate 0.5 -r --max-tries=0 --verbose-errors \
         --failures-detailed --exit-on-abort -C -v -s 3 --debug -h h -p 5433 -U u \
         --random-seed=5432 -Dfoo=1 -D bar=2 -D foo=3 mydb",
    );
    assert_eq!(o.clients, 9);
    assert_eq!((o.jobs, o.threads), (3, 3));
    assert!(o.no_vacuum && o.connect && o.vacuum_all && o.log && o.report_per_command);
    assert_eq!(o.query_mode, QueryMode::Prepared);
    assert_eq!((o.transactions, o.duration), (0, 60));
    assert_eq!((o.progress, o.progress_timestamp), (5, true));
    assert_eq!(o.rate, 100.0);
    assert_eq!(o.latency_limit_us, 2500);
    assert_eq!((o.log_prefix.as_deref(), o.sample_rate), (Some("x"), 0.5));
    assert_eq!(o.max_tries, 0);
    assert!(o.verbose_errors && o.failures_detailed && o.exit_on_abort && o.debug);
    assert_eq!((o.scale, o.scale_given), (3, true));
    assert_eq!(
        (o.host.as_deref(), o.port.as_deref(), o.username.as_deref()),
        (Some("h"), Some("5433"), Some("u"))
    );
    assert_eq!(
        (o.dbname.as_str(), o.dbname_from),
        ("mydb", DbNameFrom::Positional)
    );
    assert_eq!(o.random_seed, 5432);
    assert_eq!(o.stderr, "pgbench: setting random seed to 5432\n");
    assert_eq!(
        o.defines,
        vec![
            ("foo".to_string(), "3".to_string()),
            ("bar".into(), "2".into())
        ]
    );
    assert_eq!(
        o.scripts,
        vec![ScriptSpec {
            source: ScriptSource::Builtin(Builtin::SelectOnly),
            weight: 1
        }]
    );
    assert!(o.internal_script_used);
}

#[test]
fn defaults_of_a_run() {
    let o = run("");
    assert_eq!(o.transactions, DEFAULT_TRANSACTIONS);
    assert_eq!((o.clients, o.threads, o.max_tries), (1, 1, 1));
    assert_eq!(o.random_seed, 777);
    assert_eq!(o.stderr, "");
    assert_eq!(
        o.scripts,
        vec![ScriptSpec {
            source: ScriptSource::Builtin(Builtin::TpcbLike),
            weight: 1
        }]
    );
    // More threads than clients: one per client.
    assert_eq!(run("-j 4 -c 2").threads, 2);
}

#[test]
fn scripts_keep_command_line_order_and_weights() {
    let mut h = Fake::default();
    let Outcome::Run(o) = run_with(
        &mut h,
        &argv("-f a.sql@2 -b si@3 --file=b@c.sql@1 -N -f - --builtin=tpcb@+7 -M extended"),
    ) else {
        panic!()
    };
    let src: Vec<(ScriptSource, u32)> = o
        .scripts
        .iter()
        .map(|s| (s.source.clone(), s.weight))
        .collect();
    assert_eq!(
        src,
        vec![
            (ScriptSource::File("a.sql".into()), 2),
            (ScriptSource::Builtin(Builtin::SimpleUpdate), 3),
            (ScriptSource::File("b@c.sql".into()), 1),
            (ScriptSource::Builtin(Builtin::SimpleUpdate), 1),
            (ScriptSource::File("-".into()), 1),
            (ScriptSource::Builtin(Builtin::TpcbLike), 7),
        ]
    );
    assert_eq!(
        h.files,
        vec![("a.sql".into(), 2), ("b@c.sql".into(), 1), ("-".into(), 1)]
    );
    assert_eq!(h.done, vec![QueryMode::Extended]);
    // Files only: no builtin, so pgbench does not read the scale from the database.
    assert!(!run("-f x").internal_script_used);
}

#[test]
fn initialization_steps_and_options() {
    let o = init("-i");
    assert_eq!(o.init_steps, DEFAULT_INIT_STEPS);
    assert_eq!((o.scale, o.fillfactor, o.partitions), (1, 100, 0));
    assert_eq!(o.partition_method, PartitionMethod::None);
    // 001's command lines.
    let o = init(
        "--initialize --init-steps=dtpvg --scale=1 --unlogged-tables --fillfactor=98 \
         --foreign-keys --quiet --tablespace=ts --index-tablespace=its --partitions=2 \
         --partition-method=hash",
    );
    assert_eq!(o.init_steps, "dtpvgf");
    assert!(o.unlogged_tables && o.quiet && o.foreign_keys);
    assert_eq!(o.fillfactor, 98);
    assert_eq!(
        (o.tablespace.as_deref(), o.index_tablespace.as_deref()),
        (Some("ts"), Some("its"))
    );
    assert_eq!(
        (o.partitions, o.partition_method),
        (2, PartitionMethod::Hash)
    );
    let o = init(
        "--initialize --init-steps=dtpvGvv --no-vacuum --foreign-keys --unlogged-tables \
         --partitions=3",
    );
    assert_eq!(o.init_steps, "dtp G  f");
    assert_eq!(
        (o.partitions, o.partition_method),
        (3, PartitionMethod::Range)
    );
    // The last -I wins; -n and -s belong to both modes; --debug and the target too.
    let o = init("-I dt -i -I gv -n -s 5 --debug -d db");
    assert_eq!(o.init_steps, "g ");
    assert_eq!(o.scale, 5);
    assert!(o.debug);
    assert_eq!(o.dbname, "db");
}

#[test]
fn dbname_as_pgbench_finds_it() {
    let db = |line: &str, env: &[(&str, &str)]| {
        let mut h = Fake::default();
        for (k, v) in env {
            h.env.insert(k.to_string(), v.to_string());
        }
        match run_with(&mut h, &argv(line)) {
            Outcome::Run(o) => (o.dbname.clone(), o.dbname_from),
            other => panic!("{other:?}"),
        }
    };
    let pgdb = [("PGDATABASE", "pgdb"), ("PGUSER", "pguser")];
    assert_eq!(db("-d a -d b", &pgdb), ("b".into(), DbNameFrom::Option));
    assert_eq!(db("-n pos", &pgdb), ("pos".into(), DbNameFrom::Positional));
    assert_eq!(db("-n", &pgdb), ("pgdb".into(), DbNameFrom::PgDatabase));
    let empty_db = [("PGDATABASE", ""), ("PGUSER", "pguser")];
    assert_eq!(db("-n", &empty_db), ("pguser".into(), DbNameFrom::PgUser));
    assert_eq!(db("-n", &[]), ("osuser".into(), DbNameFrom::OsUser));
    // An empty -d still counts as given: a positional is then one too many.
    let args: Vec<String> = ["pgbench", "-d", "", "x"].map(String::from).to_vec();
    let Outcome::Exit(e) = parse(&args, &mut Fake::default()) else {
        panic!()
    };
    assert!(e.stderr.contains("(first is \"x\")"));
    // After `--`, everything is an operand, even what looks like an option.
    let args: Vec<String> = ["pgbench", "-n", "--", "-S"].map(String::from).to_vec();
    let Outcome::Run(o) = parse(&args, &mut Fake::default()) else {
        panic!()
    };
    assert_eq!((o.dbname.as_str(), o.scripts.len()), ("-S", 1));
}

/// The table above against the pgbench installed here (Debian's pgbench 15, the tests' server
/// binaries): on every case but those that read a script file (this table's host fakes files),
/// pgbench 15 and 18 give the same output, so the parser must print exactly what pgbench 15
/// prints. getopt's messages start with pgbench's own `argv[0]`, replaced here by `pgbench`.
#[test]
fn every_error_is_what_pgbench_15_prints() {
    let real = testkit::bindir().join("pgbench");
    let dir = tempfile::tempdir().unwrap();
    for (line, _) in ERRORS {
        if line.split_whitespace().any(|w| w == "-f") {
            continue;
        }
        let mut cmd = std::process::Command::new(&real);
        cmd.args(line.split_whitespace()).current_dir(dir.path());
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("PG") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.output().unwrap();
        let theirs =
            String::from_utf8_lossy(&out.stderr).replace(&*real.to_string_lossy(), "pgbench");
        let mine = exit(line);
        assert_eq!(
            (mine.code, mine.stderr.as_str(), mine.stdout.as_str()),
            (
                out.status.code().unwrap(),
                theirs.as_str(),
                &*String::from_utf8_lossy(&out.stdout)
            ),
            "{line}"
        );
    }
}
