//! The script language against pgbench itself (the PostgreSQL binaries found by
//! `EmbeddedServer::find_binaries`, version 15 here): parse errors (pgbench parses scripts before
//! connecting, so no server is needed), the deterministic functions and the arithmetic (a private
//! server: pgbench stores its values into a table, read back with psql), run-time errors, and the
//! random distributions (the same seed gives the same draws; a chi-square test over 100,000 draws
//! per distribution with different seeds).
//!
//! A test that cannot find or start PostgreSQL fails; it never skips silently.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use testkit::{bindir, Pg, WhileUsed, THROWAWAY};
use workload::script::exec::NoTimer;
use workload::script::vars::{CLIENT_ID, DEFAULT_SEED, RANDOM_SEED, SCALE};
use workload::script::{Action, Interp, Script, Symbols, Value, Vars};
use workload::Streams;

/// A script file in a directory of its own, removed when dropped.
struct TempFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for TempFile {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for TempFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

fn temp_file(name: &str, text: &str) -> TempFile {
    let dir = tempfile::Builder::new()
        .prefix("stampede-script-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    TempFile { _dir: dir, path }
}

/// One private server shared by the tests running at the same time (stopped when the last one
/// drops it).
fn pg() -> Arc<Pg> {
    static PG: WhileUsed = WhileUsed::new(&[THROWAWAY, &[("shared_buffers", "64MB")]]);
    PG.get()
}

/// pgbench without the initial vacuum, on database postgres: (success, stdout + stderr).
fn pgbench(pg: &Pg, args: &[&str]) -> (bool, String) {
    pg.try_pgbench("postgres", &[&["-n"], args].concat())
}

/// Run `text` with stampede's interpreter as pgbench's client 0 of a one-client run with
/// `--random-seed=seed`, `transactions` times; `on_sql` sees every SQL command reached.
fn run_mine(
    text: &str,
    seed: u64,
    scale: i64,
    defines: &[(&str, &str)],
    transactions: usize,
    mut on_sql: impl FnMut(&Script, usize, &Symbols, &mut Vars),
) {
    let mut sy = Symbols::new();
    let script = Script::parse("mine.sql", text, &mut sy).unwrap_or_else(|e| panic!("{e}"));
    let streams = Streams::new(seed, 1);
    let mut rng = streams.client_func(0);
    let mut vars = Vars::new(&sy);
    vars.set_value(SCALE, Value::Int(scale));
    vars.set_value(CLIENT_ID, Value::Int(0));
    vars.set_value(RANDOM_SEED, Value::Int(seed as i64));
    vars.set_value(DEFAULT_SEED, Value::Int(streams.default_seed() as i64));
    for (k, v) in defines {
        if let Some(id) = sy.get(k) {
            vars.set_text(id, v);
        }
    }
    let mut it = Interp::new();
    for _ in 0..transactions {
        it.restart();
        loop {
            match it
                .next(&script, 0, &mut vars, &mut rng, &mut NoTimer)
                .unwrap_or_else(|e| panic!("{e}"))
            {
                Action::Done => break,
                Action::Sql(i) => on_sql(&script, i, &sy, &mut vars),
                _ => {}
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Parse errors
// ------------------------------------------------------------------------------------------

/// pgbench's report of a bad script: (line, message, caret column).
fn pgbench_parse_error(text: &str) -> (u32, String, Option<u32>) {
    let f = temp_file("bad.sql", text);
    let out = Command::new(bindir().join("pgbench"))
        .args(["-n", "-t", "1", "-h", "/nonexistent-socket-dir", "-f"])
        .arg(&f)
        .output()
        .expect("run pgbench");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut lines = err.lines();
    let first = lines.next().unwrap_or_default();
    let prefix = format!("{}:", f.display());
    let rest = first
        .split_once(&prefix)
        .unwrap_or_else(|| panic!("unexpected pgbench output: {err}"))
        .1;
    let (line, msg) = rest.split_once(": ").unwrap();
    let _text_line = lines.next();
    let caret = lines.next().and_then(|l| l.find('^')).map(|c| c as u32 + 1);
    (line.parse().unwrap(), msg.to_string(), caret)
}

#[test]
fn parse_errors_match_pgbench() {
    let cases = [
        "\\set x 1 + * 2\n",
        "SELECT 1;\n\\set x 1 +\n",
        "\\set x 1 +",
        "\\set x 1 2\n",
        "\\set x (1\n",
        "\\set x 1 < 2 < 3\n",
        "\\set x 9223372036854775808\n",
        "\\set x 1 - 9223372036854775808\n",
        "\\set x 99999999999999999999\n",
        "\\set x 1e400\n",
        "\\set x 1 + @\n",
        "\\set x foo(1)\n",
        "\\set x random(1)\n",
        "\\set x POWER(1)\n",
        "\\set x least()\n",
        "\\set x hash(1, 2, 3)\n",
        "\\set x permute(1)\n",
        "\\set x abs\n",
        "\\set x CASE 1 WHEN\n",
        "\\set x 1 IS 2\n",
        "\\set x :\n",
        "\\set x 1 = 2 <> 3\n",
        "\\set x NOT\n",
        "\\set x random(1,)\n",
        "\\set x (1 + 2))\n",
        "\\if 1 +\n\\endif\n",
        "\\if true\n\\elif )\n\\endif\n",
        "\\set\n",
        "\\foo bar\n",
        "\\sleep\n",
        "\\sleep 1 ms extra\n",
        "\\sleep abc\n",
        "\\sleep 1x ms\n",
        "\\sleep 1 min\n",
        "\\sleep 10min\n",
        "\\setshell x\n",
        "\\shell\n",
        "\\else x\n",
        "\\endif x\n",
        "\\startpipeline x\n",
        "\\endpipeline x\n",
        "SELECT 1 \\gset a b\n",
        "\\gset\n",
        "\\set x 1\n\\aset\n",
        "SELECT 1 \\gset\n\\gset\n",
    ];
    for text in cases {
        let (line, msg, caret) = pgbench_parse_error(text);
        let mut sy = Symbols::new();
        let mine = Script::parse("bad.sql", text, &mut sy).expect_err(text);
        assert_eq!(mine.message, msg, "message for {text:?}");
        assert_eq!(mine.line, line, "line for {text:?}");
        if let Some(c) = caret {
            assert_eq!(mine.column, c, "caret column for {text:?}");
        }
    }

    // Conditional structure: pgbench reports these by command number.
    for (text, msg) in [
        ("\\if true\nSELECT 1;\n", "\\if without matching \\endif"),
        ("\\else\n", "\\else without matching \\if"),
        ("\\elif 1\n", "\\elif without matching \\if"),
        ("\\endif\n", "\\endif without matching \\if"),
        ("\\if 1\n\\else\n\\else\n\\endif\n", "\\else after \\else"),
        ("\\if 1\n\\else\n\\elif 2\n\\endif\n", "\\elif after \\else"),
    ] {
        let f = temp_file("cond.sql", text);
        let out = Command::new(bindir().join("pgbench"))
            .args(["-n", "-t", "1", "-h", "/nonexistent-socket-dir", "-f"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "pgbench said {err}");
        // pgbench's whole message, `condition error in script "FILE" command N: ...`.
        let mut sy = Symbols::new();
        let source = f.display().to_string();
        let mine = Script::parse(&source, text, &mut sy).expect_err(text);
        assert!(
            err.contains(&format!("pgbench: error: {}\n", mine.message)),
            "pgbench said {err}, stampede {}",
            mine.message
        );
    }
}

// ------------------------------------------------------------------------------------------
// Deterministic values
// ------------------------------------------------------------------------------------------

const EXPRESSIONS: &[&str] = &[
    // hashes, with explicit seeds and with :default_seed
    "hash(0)",
    "hash(1)",
    "hash(-1)",
    "hash(9223372036854775807)",
    "hash(-9223372036854775808)",
    "hash(42, 0)",
    "hash(42, -1)",
    "hash(42, 123456789)",
    "hash_murmur2(7, 7)",
    "hash_murmur2(123456789012, 987654321)",
    "hash_fnv1a(0)",
    "hash_fnv1a(1)",
    "hash_fnv1a(-1)",
    "hash_fnv1a(42, 0)",
    "hash_fnv1a(42, -1)",
    "hash_fnv1a(9223372036854775807, 5)",
    "hash_fnv1a(-9223372036854775808, 5)",
    "hash(1.6, 2.4)",
    // permute
    "permute(0, 10, 1)",
    "permute(9, 10, 1)",
    "permute(5, 2, 3)",
    "permute(5, 3, 3)",
    "permute(3, 4, 3)",
    "permute(-5, 100, 7)",
    "permute(7, 100)",
    "permute(12345, 1000000000, 42)",
    "permute(99999999999, 100000000000, -1)",
    "permute(9223372036854775806, 9223372036854775807, 0)",
    "permute(123, 1000, 9223372036854775807)",
    "permute(1, 1, 5)",
    // integer arithmetic
    "7 / 2",
    "-7 / 2",
    "7 % 3",
    "-7 % 3",
    "7 % -3",
    "5.5 % 4",
    "mod(-9223372036854775808, -1)",
    "5 / -1",
    "-9223372036854775808",
    "9223372036854775807",
    "-9223372036854775807 - 1",
    "1 << 63",
    "1 << 64",
    "-16 >> 2",
    "-1 >> 70",
    "~5",
    "~1 + 2",
    "~1 | 8",
    "12 & 10",
    "12 | 10",
    "12 # 10",
    "2 + 3 * 4 - 5",
    "- 3 + 5",
    "abs(-9223372036854775807)",
    "abs(-9223372036854775808)",
    "int(2.5)",
    "int(3.5)",
    "int(-2.5)",
    "int(1e18)",
    "int(-0.5)",
    "least(1, 2.5, -3)",
    "greatest(1, 2.5)",
    "least(5, 3, 9)",
    "greatest(-1, -9)",
    // doubles, printed as pgbench prints them (%.15g)
    "0.1 + 0.2",
    "1.0 / 3",
    "2.0 / 3",
    "pi()",
    "sqrt(2)",
    "ln(10)",
    "exp(1)",
    "exp(10)",
    "pow(2, 0.5)",
    "power(10, 20)",
    "1e15",
    "1e14 + 0.5",
    "123456789012345678.0",
    "1e-4",
    "1e-5",
    "2.5e-308",
    "1.0 / 0",
    "-1.0 / 0",
    "0.0 / 0",
    "sqrt(-1)",
    "-0.0",
    "double(7)",
    "7 / 2.0",
    "1.5 * 4",
    "1e300 * 1e10",
    "ln(0)",
    "pow(-8, 1.0 / 3)",
    // comparisons, logic, NULL
    "1 = 1.0",
    "1 < 2 AND 3 < 4 OR false",
    "NOT 1 > 2",
    "NULL",
    "NULL + 1",
    "NULL OR true",
    "NULL IS NULL",
    "1 IS NOT NULL",
    "true IS TRUE",
    "1 < 2 IS TRUE",
    "NOT NULL IS NOT NULL",
    "NULL ISNULL",
    "2 NOTNULL",
    "CASE WHEN 1 = 2 THEN 10 WHEN 2 = 2 THEN 20 ELSE 30 END",
    "CASE WHEN false THEN 1 END",
    "CASE WHEN 0.0 THEN 1 ELSE 2 END",
    "debug(3)",
    // automatic variables
    ":scale",
    ":client_id",
    ":random_seed",
    ":default_seed",
    ":scale * 100000",
    // random draws from the client's stream, in order
    "random(1, 1000000)",
    "random(-5000, 5000)",
    "random(1, 10000000000)",
    "random_exponential(1, 1000, 2.5)",
    "random_gaussian(1, 1000, 2.5)",
    "random_zipfian(1, 1000, 1.07)",
    "random_zipfian(1, 1000, 2.5)",
    "random(1, random(10, 20))",
];

#[test]
fn deterministic_values_match_pgbench() {
    let pg = pg();
    pg.psql("DROP TABLE IF EXISTS det; CREATE TABLE det (i int, v text)");
    let mut script = String::new();
    for (i, e) in EXPRESSIONS.iter().enumerate() {
        script.push_str(&format!("\\set r{i} {e}\n"));
    }
    script.push_str("INSERT INTO det (i, v) VALUES ");
    let rows: Vec<String> = (0..EXPRESSIONS.len())
        .map(|i| format!("({i}, ':r{i}')"))
        .collect();
    script.push_str(&rows.join(", "));
    script.push_str(";\n");
    let f = temp_file("det.sql", &script);
    let (ok, out) = pgbench(
        &pg,
        &[
            "-t",
            "1",
            "-s",
            "5",
            "--random-seed=42",
            "-f",
            f.to_str().unwrap(),
        ],
    );
    assert!(ok, "pgbench failed:\n{out}");
    let theirs: Vec<String> = pg
        .psql("SELECT v FROM det ORDER BY i")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(theirs.len(), EXPRESSIONS.len());

    let mut mine: Vec<String> = Vec::new();
    run_mine(&script, 42, 5, &[], 1, |_, _, sy, vars| {
        for i in 0..EXPRESSIONS.len() {
            let id = sy.get(&format!("r{i}")).unwrap();
            mine.push(vars.text(id).unwrap().to_string());
        }
    });
    let mut bad = Vec::new();
    for (i, e) in EXPRESSIONS.iter().enumerate() {
        if mine[i] != theirs[i] {
            bad.push(format!("{e}: pgbench {} stampede {}", theirs[i], mine[i]));
        }
    }
    assert!(bad.is_empty(), "differences:\n{}", bad.join("\n"));
}

#[test]
fn simple_mode_sql_text_matches_pgbench() {
    // The whole statement text stampede sends in simple mode is the one pgbench sends: log it
    // from the server side by storing it with a query that returns its own text.
    let pg = pg();
    pg.psql("DROP TABLE IF EXISTS txt; CREATE TABLE txt (q text)");
    let script = "\\set a 0.1 + 0.2\n\\set b 5\n\\set c NULL\n\\set d true\n\\set e 1e20\nINSERT INTO txt SELECT current_query() -- :a :b::int :c :d :e :undefined ::x\n;\n";
    let f = temp_file("txt.sql", script);
    let (ok, out) = pgbench(&pg, &["-t", "1", "-f", f.to_str().unwrap()]);
    assert!(ok, "{out}");
    let theirs = pg.psql("SELECT q FROM txt");
    let mut mine = String::new();
    run_mine(script, 1, 1, &[], 1, |s, i, _, vars| {
        let workload::script::CommandKind::Sql(q) = &s.commands[i].kind else {
            panic!()
        };
        workload::script::simple_sql(q, vars, &mut mine);
    });
    assert_eq!(theirs.trim_end(), mine.trim_end());
}

#[test]
fn runtime_errors_match_pgbench() {
    let pg = pg();
    let cases = [
        ("9223372036854775807 + 1", "bigint add out of range"),
        ("-9223372036854775808 - 1", "bigint sub out of range"),
        ("4611686018427387904 * 2", "bigint mul out of range"),
        ("-9223372036854775808 / -1", "bigint div out of range"),
        ("1 / 0", "division by zero"),
        ("1 % 0", "division by zero"),
        (":nope + 1", "undefined variable \"nope\""),
        (
            "int(1e19)",
            "double to int overflow for 10000000000000000000.000000",
        ),
        ("int(0.0 / 0)", "double to int overflow for NaN"),
        ("true + 1", "cannot coerce boolean to int"),
        ("true + 1.5", "cannot coerce boolean to double"),
        ("1 AND true", "cannot coerce int to boolean"),
        ("random(2, 1)", "empty range given to random"),
        (
            "random(-9223372036854775808, 9223372036854775807)",
            "random range is too large",
        ),
        (
            "random_gaussian(1, 10, 1.5)",
            "gaussian parameter must be at least 2.000000 (not 1.500000)",
        ),
        (
            "random_exponential(1, 10, 0)",
            "exponential parameter must be greater than zero (not 0.000000)",
        ),
        (
            "random_zipfian(1, 10, 1.0)",
            "zipfian parameter must be in range [1.001, 1000] (not 1.000000)",
        ),
        (
            "permute(1, 0)",
            "permute size parameter must be greater than zero",
        ),
        (
            "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)",
            "too many function arguments, maximum is 16",
        ),
    ];
    for (expr, msg) in cases {
        let text = format!("\\set x {expr}\nSELECT 1;\n");
        let f = temp_file("rt.sql", &text);
        let (ok, out) = pgbench(&pg, &["-t", "1", "-f", f.to_str().unwrap()]);
        assert!(!ok, "pgbench accepted {expr}");
        assert!(
            out.contains(&format!("error: {msg}\n")),
            "pgbench's message for {expr}:\n{out}"
        );
        let mut sy = Symbols::new();
        let s = Script::parse("rt.sql", &text, &mut sy).unwrap();
        let mut v = Vars::new(&sy);
        v.set_value(DEFAULT_SEED, Value::Int(1));
        let mut rng = Streams::new(1, 1).client_func(0);
        let e = Interp::new()
            .next(&s, 0, &mut v, &mut rng, &mut NoTimer)
            .expect_err(expr);
        assert_eq!(e.message, msg, "{expr}");
    }

    // A name that cannot be a variable fails when the command runs (after the expression), as
    // an assignment failure for \set, an execution failure for \setshell.
    for (text, msg, what, assignment) in [
        (
            "\\set . 1\nSELECT 1;\n",
            "set: invalid variable name: \".\"",
            "(set) of script 0; assignment of meta-command failed",
            true,
        ),
        (
            "\\setshell 1x echo 5\nSELECT 1;\n",
            "setshell: invalid variable name: \"1x\"",
            "(setshell) of script 0; execution of meta-command failed",
            false,
        ),
    ] {
        let f = temp_file("name.sql", text);
        let (ok, out) = pgbench(&pg, &["-t", "1", "-f", f.to_str().unwrap()]);
        assert!(!ok, "pgbench accepted {text}");
        assert!(out.contains(&format!("error: {msg}\n")), "{out}");
        assert!(out.contains(what), "{out}");
        let mut sy = Symbols::new();
        let s = Script::parse("name.sql", text, &mut sy).unwrap();
        let mut v = Vars::new(&sy);
        let mut rng = Streams::new(1, 1).client_func(0);
        let e = Interp::new()
            .next(&s, 0, &mut v, &mut rng, &mut NoTimer)
            .expect_err(text);
        assert_eq!((e.message.as_str(), e.assignment), (msg, assignment));
    }
}

// ------------------------------------------------------------------------------------------
// Random distributions
// ------------------------------------------------------------------------------------------

const DISTRIBUTIONS: &[(&str, &str)] = &[
    ("u", "random(1, 100)"),
    ("g", "random_gaussian(1, 100, 2.5)"),
    ("e", "random_exponential(1, 100, 3.0)"),
    ("z", "random_zipfian(1, 100, 1.5)"),
];
const PER_TXN: usize = 100;
const TXNS: usize = 1000;

fn draw_script() -> String {
    let mut s = String::from("\\set k :k + 1\n");
    let mut rows = Vec::new();
    for (d, f) in DISTRIBUTIONS {
        for j in 0..PER_TXN {
            s.push_str(&format!("\\set {d}{j} {f}\n"));
            rows.push(format!("(:k, {j}, '{d}', :{d}{j})"));
        }
    }
    s.push_str(&format!(
        "INSERT INTO draws (k, j, d, v) VALUES {};\n",
        rows.join(", ")
    ));
    s
}

/// stampede's draws: per distribution, in draw order.
fn my_draws(seed: u64) -> Vec<Vec<i64>> {
    let script = draw_script();
    let mut out = vec![Vec::new(); DISTRIBUTIONS.len()];
    run_mine(&script, seed, 1, &[("k", "0")], TXNS, |_, _, sy, vars| {
        for (n, (d, _)) in DISTRIBUTIONS.iter().enumerate() {
            for j in 0..PER_TXN {
                let id = sy.get(&format!("{d}{j}")).unwrap();
                match vars.value(id) {
                    Ok(Value::Int(v)) => out[n].push(v),
                    other => panic!("{other:?}"),
                }
            }
        }
    });
    out
}

/// Two-sample chi-square statistic over the values 1..=100, bins with few draws merged, and its
/// degrees of freedom.
fn chi_square(a: &[i64], b: &[i64]) -> (f64, usize) {
    let mut ca = [0f64; 101];
    let mut cb = [0f64; 101];
    for &v in a {
        ca[v as usize] += 1.0;
    }
    for &v in b {
        cb[v as usize] += 1.0;
    }
    // Merge consecutive values until each bin expects at least 10 draws per sample.
    let mut bins: Vec<(f64, f64)> = Vec::new();
    let (mut x, mut y) = (0.0, 0.0);
    for v in 1..=100 {
        x += ca[v];
        y += cb[v];
        if (x + y) / 2.0 >= 10.0 {
            bins.push((x, y));
            x = 0.0;
            y = 0.0;
        }
    }
    if x + y > 0.0 {
        let last = bins.last_mut().unwrap();
        last.0 += x;
        last.1 += y;
    }
    let stat = bins.iter().map(|&(x, y)| (x - y).powi(2) / (x + y)).sum();
    (stat, bins.len() - 1)
}

/// Chi-square critical value at p = 0.001 (Wilson-Hilferty).
fn critical(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

#[test]
fn distributions_match_pgbench() {
    let pg = pg();
    let seed = 7u64;
    pg.psql(
        "DROP TABLE IF EXISTS draws; CREATE UNLOGGED TABLE draws (k int, j int, d text, v bigint)",
    );
    let f = temp_file("draws.sql", &draw_script());
    let (ok, out) = pgbench(
        &pg,
        &[
            "-t",
            &TXNS.to_string(),
            "-D",
            "k=0",
            &format!("--random-seed={seed}"),
            "-f",
            f.to_str().unwrap(),
        ],
    );
    assert!(ok, "pgbench failed:\n{out}");
    let theirs: Vec<Vec<i64>> = DISTRIBUTIONS
        .iter()
        .map(|(d, _)| {
            pg.psql(&format!(
                "SELECT v FROM draws WHERE d = '{d}' ORDER BY k, j"
            ))
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
        })
        .collect();
    for t in &theirs {
        assert_eq!(t.len(), PER_TXN * TXNS);
    }

    // Same seed: the very same draws, in the same order.
    let same = my_draws(seed);
    for (n, (d, f)) in DISTRIBUTIONS.iter().enumerate() {
        let first_diff = same[n].iter().zip(&theirs[n]).position(|(a, b)| a != b);
        assert_eq!(
            first_diff, None,
            "{d} = {f}: first difference at draw {first_diff:?}"
        );
    }

    // Another seed: the same distribution (chi-square, p = 0.001).
    let other = my_draws(seed + 1000);
    for (n, (_, f)) in DISTRIBUTIONS.iter().enumerate() {
        assert!(other[n].iter().all(|v| (1..=100).contains(v)));
        let (stat, df) = chi_square(&other[n], &theirs[n]);
        assert!(
            stat < critical(df),
            "{f}: chi-square {stat:.1} with {df} degrees of freedom (critical {:.1})",
            critical(df)
        );
    }
}
