//! pgbench's tests that need no server (`src/bin/pgbench/t/002_pgbench_no_server.pl`,
//! REL_18_STABLE), reproduced against `stampede pgbench`: every bad option and its message, help,
//! version, the builtin list and listing, and the script errors found before connecting. Same
//! case names, command lines (split on white space as upstream does), statuses and regular
//! expressions; script files are written to a temporary directory and passed with `--file`, in
//! the order of their names, as upstream's `pgbench_scripts` does.
//!
//! `STAMPEDE_PGBENCH_UNDER_TEST=/usr/bin/pgbench` runs the same cases against a real pgbench.
//!
//! Perl constructs rewritten: `qr{(?!UPDATE)}` and `qr{(?!INSERT)}` (a lookahead alone, which
//! matches any string in Perl) are checks that always pass, as upstream's do.

#[path = "common/pgbench_tap.rs"]
mod tap;

use tap::{
    qr, qr_not_followed_by, run, split_opts, strip_weight, write_file, Check, Env, Pgbench, Tap,
};

struct Suite {
    tap: Tap,
    pgbench: Pgbench,
    env: Env,
    dir: tempfile::TempDir,
}

impl Suite {
    /// upstream `pgbench($opts, $stat, $out, $err, $name)`
    fn pgbench(&mut self, opts: &str, stat: i32, out: &[Check], err: &[Check], name: &str) {
        self.pgbench_scripts(opts, stat, out, err, name, &[]);
    }

    /// upstream `pgbench_scripts($opts, $stat, $out, $err, $name, $files)`
    fn pgbench_scripts(
        &mut self,
        opts: &str,
        stat: i32,
        out: &[Check],
        err: &[Check],
        name: &str,
        files: &[(&str, &str)],
    ) {
        let mut args = self.pgbench.prefix.clone();
        args.extend(split_opts(opts));
        let mut files = files.to_vec();
        files.sort();
        for (fname, contents) in files {
            let path = self.dir.path().join(strip_weight(fname));
            let _ = std::fs::remove_file(&path);
            write_file(&path, contents);
            args.push("--file".into());
            args.push(path.display().to_string());
        }
        let output = run(&self.pgbench.program, &args, &self.env);
        self.tap.command_checks_all(&output, stat, out, err, name);
    }
}

/// name, options, stderr checks
fn option_errors() -> Vec<(&'static str, String, Vec<Check>)> {
    let c = |name: &'static str, opts: &str, checks: Vec<Check>| (name, opts.to_string(), checks);
    vec![
        c(
            "bad option",
            "-h home -p 5432 -U calvin ---debug --bad-option",
            vec![qr(r"--help.*more information")],
        ),
        c(
            "no file",
            "-f no-such-file",
            vec![qr(r#"could not open file "no-such-file":"#)],
        ),
        c(
            "no builtin",
            "-b no-such-builtin",
            vec![qr(r#"no builtin script .* "no-such-builtin""#)],
        ),
        c(
            "invalid weight",
            "--builtin=select-only@one",
            vec![qr(r"invalid weight specification: \@one")],
        ),
        c(
            "invalid weight",
            "-b select-only@-1",
            vec![qr(r"weight spec.* out of range .*: -1")],
        ),
        c(
            "too many scripts",
            &"-S ".repeat(129),
            vec![qr(r"at most 128 SQL scripts")],
        ),
        c(
            "bad #clients",
            "-c three",
            vec![qr(r#"invalid value "three" for option -c/--client"#)],
        ),
        c(
            "bad #threads",
            "-j eleven",
            vec![qr(r#"invalid value "eleven" for option -j/--jobs"#)],
        ),
        c(
            "bad scale",
            "-i -s two",
            vec![qr(r#"invalid value "two" for option -s/--scale"#)],
        ),
        c(
            "invalid #transactions",
            "-t zil",
            vec![qr(r#"invalid value "zil" for option -t/--transactions"#)],
        ),
        c(
            "invalid duration",
            "-T ten",
            vec![qr(r#"invalid value "ten" for option -T/--time"#)],
        ),
        c(
            "-t XOR -T",
            "-N -l --aggregate-interval=5 --log-prefix=notused -t 1000 -T 1",
            vec![qr(r"specify either ")],
        ),
        c(
            "-T XOR -t",
            "-P 1 --progress-timestamp -l --sampling-rate=0.001 -T 10 -t 1000",
            vec![qr(r"specify either ")],
        ),
        c(
            "bad variable",
            "--define foobla",
            vec![qr(r"invalid variable definition")],
        ),
        c(
            "invalid fillfactor",
            "-F 1",
            vec![qr(r"-F/--fillfactor must be in range")],
        ),
        c(
            "invalid query mode",
            "-M no-such-mode",
            vec![qr(r"invalid query mode")],
        ),
        c(
            "invalid progress",
            "--progress=0",
            vec![qr(r"-P/--progress must be in range")],
        ),
        c(
            "invalid rate",
            "--rate=0.0",
            vec![qr(r"invalid rate limit")],
        ),
        c(
            "invalid latency",
            "--latency-limit=0.0",
            vec![qr(r"invalid latency limit")],
        ),
        c(
            "invalid sampling rate",
            "--sampling-rate=0",
            vec![qr(r"invalid sampling rate")],
        ),
        c(
            "invalid aggregate interval",
            "--aggregate-interval=-3",
            vec![qr(r"--aggregate-interval must be in range")],
        ),
        c(
            "weight zero",
            "-b se@0 -b si@0 -b tpcb@0",
            vec![qr(r"weight must not be zero")],
        ),
        c(
            "init vs run",
            "-i -S",
            vec![qr(r"cannot be used in initialization")],
        ),
        c(
            "run vs init",
            "-S -F 90",
            vec![qr(r"cannot be used in benchmarking")],
        ),
        c("ambiguous builtin", "-b s", vec![qr(r"ambiguous")]),
        c(
            "--progress-timestamp => --progress",
            "--progress-timestamp",
            vec![qr(r"allowed only under")],
        ),
        c(
            "-I without init option",
            "-I dtg",
            vec![qr(r"cannot be used in benchmarking mode")],
        ),
        c(
            "invalid init step",
            "-i -I dta",
            vec![
                qr(r"unrecognized initialization step"),
                qr(r"Allowed step characters are"),
            ],
        ),
        c(
            "bad random seed",
            "--random-seed=one",
            vec![
                qr(r#"unrecognized random seed option "one""#),
                qr(r#"Expecting an unsigned integer, "time" or "rand""#),
                qr(r"error while setting random seed from --random-seed option"),
            ],
        ),
        c(
            "bad partition method",
            "-i --partition-method=BAD",
            vec![qr(r#""range""#), qr(r#""hash""#), qr(r#""BAD""#)],
        ),
        c(
            "bad partition number",
            "-i --partitions -1",
            vec![qr(r"--partitions must be in range")],
        ),
        c(
            "partition method without partitioning",
            "-i --partition-method=hash",
            vec![qr(
                r"partition-method requires greater than zero --partitions",
            )],
        ),
        c(
            "bad maximum number of tries",
            "--max-tries -10",
            vec![qr(r#"invalid number of maximum tries: "-10""#)],
        ),
        c(
            "an infinite number of tries",
            "--max-tries 0",
            vec![qr(
                r"an unlimited number of transaction tries can only be used with --latency-limit or a duration",
            )],
        ),
        // logging sub-options
        c(
            "sampling => log",
            "--sampling-rate=0.01",
            vec![qr(r"log sampling .* only when")],
        ),
        c(
            "sampling XOR aggregate",
            "-l --sampling-rate=0.1 --aggregate-interval=3",
            vec![qr(
                r"sampling .* aggregation .* cannot be used at the same time",
            )],
        ),
        c(
            "aggregate => log",
            "--aggregate-interval=3",
            vec![qr(r"aggregation .* only when")],
        ),
        c(
            "log-prefix => log",
            "--log-prefix=x",
            vec![qr(r"prefix .* only when")],
        ),
        c(
            "duration & aggregation",
            "-l -T 1 --aggregate-interval=3",
            vec![qr(r"aggr.* not be higher")],
        ),
        c(
            "duration % aggregation",
            "-l -T 5 --aggregate-interval=3",
            vec![qr(r"multiple")],
        ),
    ]
}

/// name, stderr checks, { file => contents }
fn script_errors() -> Vec<(&'static str, Vec<Check>, (&'static str, &'static str))> {
    vec![
        (
            "missing endif",
            vec![qr(r"\\if without matching \\endif")],
            ("if-noendif.sql", "\\if 1"),
        ),
        (
            "missing if on elif",
            vec![qr(r"\\elif without matching \\if")],
            ("elif-noif.sql", "\\elif 1"),
        ),
        (
            "missing if on else",
            vec![qr(r"\\else without matching \\if")],
            ("else-noif.sql", "\\else"),
        ),
        (
            "missing if on endif",
            vec![qr(r"\\endif without matching \\if")],
            ("endif-noif.sql", "\\endif"),
        ),
        (
            "elif after else",
            vec![qr(r"\\elif after \\else")],
            ("else-elif.sql", "\\if 1\n\\else\n\\elif 0\n\\endif"),
        ),
        (
            "else after else",
            vec![qr(r"\\else after \\else")],
            ("else-else.sql", "\\if 1\n\\else\n\\else\n\\endif"),
        ),
        (
            "if syntax error",
            vec![qr(r#"syntax error in command "if""#)],
            ("if-bad.sql", "\\if\n\\endif\n"),
        ),
        (
            "elif syntax error",
            vec![qr(r#"syntax error in command "elif""#)],
            ("elif-bad.sql", "\\if 0\n\\elif +\n\\endif\n"),
        ),
        (
            "else syntax error",
            vec![qr(r#"unexpected argument in command "else""#)],
            ("else-bad.sql", "\\if 0\n\\else BAD\n\\endif\n"),
        ),
        (
            "endif syntax error",
            vec![qr(r#"unexpected argument in command "endif""#)],
            ("endif-bad.sql", "\\if 0\n\\endif BAD\n"),
        ),
        (
            "not enough arguments for least",
            vec![qr(r"at least one argument expected \(least\)")],
            ("bad-least.sql", "\\set i least()\n"),
        ),
        (
            "not enough arguments for greatest",
            vec![qr(r"at least one argument expected \(greatest\)")],
            ("bad-greatest.sql", "\\set i greatest()\n"),
        ),
        (
            "not enough arguments for hash",
            vec![qr(r"unexpected number of arguments \(hash\)")],
            ("bad-hash-1.sql", "\\set i hash()\n"),
        ),
        (
            "too many arguments for hash",
            vec![qr(r"unexpected number of arguments \(hash\)")],
            ("bad-hash-2.sql", "\\set i hash(1,2,3)\n"),
        ),
        // overflow
        (
            "bigint overflow 1",
            vec![qr(r"bigint constant overflow")],
            ("overflow-1.sql", "\\set i 100000000000000000000\n"),
        ),
        (
            "double overflow 2",
            vec![qr(r"double constant overflow")],
            ("overflow-2.sql", "\\set d 1.0E309\n"),
        ),
        (
            "double overflow 3",
            vec![qr(r"double constant overflow")],
            ("overflow-3.sql", "\\set d .1E310\n"),
        ),
        (
            "set i",
            vec![qr(r"set i 1 "), qr(r"\^ error found here")],
            ("set_i_op", "\\set i 1 +\n"),
        ),
        (
            "not enough arguments to permute",
            vec![qr(r"unexpected number of arguments \(permute\)")],
            ("bad-permute-1.sql", "\\set i permute(1)\n"),
        ),
        (
            "too many arguments to permute",
            vec![qr(r"unexpected number of arguments \(permute\)")],
            ("bad-permute-2.sql", "\\set i permute(1, 2, 3, 4)\n"),
        ),
    ]
}

#[test]
fn pgbench_002_no_server() {
    let mut s = Suite {
        tap: Tap::new("002_pgbench_no_server"),
        pgbench: Pgbench::under_test(),
        env: Env::new("002_pgbench_no_server.pl"),
        dir: tempfile::Builder::new()
            .prefix("t_002_pgbench_no_server_stuff")
            .tempdir()
            .unwrap(),
    };

    for (name, opts, err_checks) in option_errors() {
        s.pgbench(
            &opts,
            1,
            &[qr(r"^$")],
            &err_checks,
            &format!("pgbench option error: {name}"),
        );
    }

    // Help
    s.pgbench(
        "--help",
        0,
        &[
            qr(r"benchmarking tool for PostgreSQL"),
            qr(r"Usage"),
            qr(r"Initialization options:"),
            qr(r"Common options:"),
            qr(r"Report bugs to"),
        ],
        &[qr(r"^$")],
        "pgbench help",
    );

    // Version
    s.pgbench(
        "-V",
        0,
        &[qr(r"^pgbench .PostgreSQL. ")],
        &[qr(r"^$")],
        "pgbench version",
    );

    // list of builtins
    s.pgbench(
        "-b list",
        0,
        &[qr(r"^$")],
        &[
            qr(r"Available builtin scripts:"),
            qr(r"tpcb-like"),
            qr(r"simple-update"),
            qr(r"select-only"),
        ],
        "pgbench builtin list",
    );

    // builtin listing
    s.pgbench(
        "--show-script se",
        0,
        &[qr(r"^$")],
        &[
            qr(r"select-only: "),
            qr(r"SELECT abalance FROM pgbench_accounts WHERE"),
            qr_not_followed_by(r"(?!UPDATE)"),
            qr_not_followed_by(r"(?!INSERT)"),
        ],
        "pgbench builtin listing",
    );

    for (name, err, file) in script_errors() {
        s.pgbench_scripts(
            "",
            1,
            &[qr(r"^$")],
            &err,
            &format!("pgbench option error: {name}"),
            &[file],
        );
    }

    s.tap.finish();
}
