//! Unit tests of the script language without a server. The values pgbench itself computes are
//! checked against pgbench in `tests/script_vs_pgbench.rs`.

use super::exec::{params, simple_sql, store_row, Action, Interp, NoTimer, Param, StoreError};
use super::expr::{hash_fnv1a, hash_murmur2, permute};
use super::parse::{CommandKind, ParseError, ResultVars, Script, ShellArg, SleepArg};
use super::vars::{Symbols, Value, Vars, CLIENT_ID, DEFAULT_SEED, RANDOM_SEED, SCALE};
use crate::random::Rng;

fn compile(text: &str) -> (Script, Symbols) {
    let mut sy = Symbols::new();
    let s = Script::parse("t.sql", text, &mut sy).unwrap_or_else(|e| panic!("{e}"));
    (s, sy)
}

fn parse_err(text: &str) -> ParseError {
    let mut sy = Symbols::new();
    match Script::parse("bad.sql", text, &mut sy) {
        Ok(s) => panic!("parsed: {s:?}"),
        Err(e) => e,
    }
}

fn vars_for(sy: &Symbols) -> Vars {
    let mut v = Vars::new(sy);
    v.set_value(SCALE, Value::Int(1));
    v.set_value(CLIENT_ID, Value::Int(0));
    v.set_value(RANDOM_SEED, Value::Int(7));
    v.set_value(DEFAULT_SEED, Value::Int(12345));
    v
}

/// Run a script of meta-commands to its end; SQL, sleeps and pipelines are skipped.
fn run(text: &str, rng: &mut Rng) -> Result<(Symbols, Vars, Vec<Action>), String> {
    let (s, sy) = compile(text);
    let mut v = vars_for(&sy);
    let mut it = Interp::new();
    let mut actions = Vec::new();
    loop {
        match it.next(&s, 0, &mut v, rng, &mut NoTimer) {
            Ok(Action::Done) => return Ok((sy, v, actions)),
            Ok(a) => actions.push(a),
            Err(e) => return Err(e.message),
        }
    }
}

/// `\set x <expr>` and the value of x.
fn ev(expr: &str) -> Result<Value, String> {
    let mut rng = Rng::from_seed(1);
    let (sy, v, _) = run(&format!("\\set x {expr}\n"), &mut rng)?;
    Ok(v.peek(sy.get("x").unwrap()).unwrap())
}

fn int(expr: &str) -> i64 {
    match ev(expr) {
        Ok(Value::Int(i)) => i,
        other => panic!("{expr}: {other:?}"),
    }
}

fn dbl(expr: &str) -> f64 {
    match ev(expr) {
        Ok(Value::Double(d)) => d,
        other => panic!("{expr}: {other:?}"),
    }
}

fn boolean(expr: &str) -> bool {
    match ev(expr) {
        Ok(Value::Bool(b)) => b,
        other => panic!("{expr}: {other:?}"),
    }
}

fn fails(expr: &str, msg: &str) {
    assert_eq!(ev(expr), Err(msg.to_string()), "{expr}");
}

// ------------------------------------------------------------------------------------------
// Expressions
// ------------------------------------------------------------------------------------------

#[test]
fn integer_arithmetic_is_pgbench_s() {
    assert_eq!(int("1 + 2 * 3"), 7);
    assert_eq!(int("(1 + 2) * 3"), 9);
    assert_eq!(int("7 / 2"), 3);
    assert_eq!(int("-7 / 2"), -3);
    assert_eq!(int("7 % 3"), 1);
    assert_eq!(int("-7 % 3"), -1);
    assert_eq!(int("7 % -3"), 1);
    assert_eq!(int("mod(-7, 3)"), -1);
    assert_eq!(int("10 - 2 - 3"), 5);
    assert_eq!(int("100 / 10 / 5"), 2);
    assert_eq!(int("-9223372036854775808"), i64::MIN);
    assert_eq!(int("9223372036854775807"), i64::MAX);
    assert_eq!(int("5 / -1"), -5);
    assert_eq!(int("-9223372036854775808 % -1"), 0);
    assert_eq!(int("+ 5"), 5);
    assert_eq!(int("- - 5"), 5);
    assert_eq!(int("- 2 * 3"), -6);
    // `%` coerces doubles to int (rint, half to even).
    assert_eq!(int("5.5 % 4"), 2);
    assert_eq!(int("4.5 % 3"), 1);
    assert_eq!(int("mod(7, 2.5)"), 1);
}

#[test]
fn integer_overflow_and_division_errors() {
    fails("9223372036854775807 + 1", "bigint add out of range");
    fails("-9223372036854775808 - 1", "bigint sub out of range");
    fails("- (-9223372036854775808)", "bigint sub out of range");
    fails("4611686018427387904 * 2", "bigint mul out of range");
    fails("-9223372036854775808 / -1", "bigint div out of range");
    fails("1 / 0", "division by zero");
    fails("1 % 0", "division by zero");
    fails("mod(1, 0)", "division by zero");
}

#[test]
fn double_arithmetic() {
    assert_eq!(dbl("1 + 0.5"), 1.5);
    assert_eq!(dbl("1.0 / 0"), f64::INFINITY);
    assert!(dbl("0.0 / 0").is_nan());
    assert_eq!(dbl("7 / 2.0"), 3.5);
    assert_eq!(dbl("1e3"), 1000.0);
    assert_eq!(dbl(".5 * 2"), 1.0);
    assert_eq!(dbl("1. + 1"), 2.0);
    assert_eq!(dbl("-0.0"), 0.0);
    assert!(dbl("-0.0").is_sign_positive(), "unary minus is 0 - x");
    assert_eq!(dbl("2.5E-1"), 0.25);
}

#[test]
fn comparisons_and_logic() {
    assert!(boolean("1 < 2"));
    assert!(!boolean("2 < 1"));
    assert!(boolean("2 > 1"));
    assert!(boolean("1 <= 1"));
    assert!(boolean("1 >= 1"));
    assert!(boolean("1 = 1"));
    assert!(boolean("1 <> 2"));
    assert!(boolean("1 != 2"));
    assert!(boolean("1 = 1.0"));
    assert!(boolean("1.5 > 1"));
    assert!(boolean("true AND true"));
    assert!(!boolean("true and false"));
    assert!(boolean("false OR true"));
    assert!(boolean("NOT false"));
    assert!(boolean("not 1 = 2"));
    assert!(boolean("1 < 2 AND 3 < 4 OR false"));
    // Lazy: the right side is not evaluated (else: division by zero).
    assert!(!boolean("false AND 1/0 = 1"));
    assert!(boolean("true OR 1/0 = 1"));
    // NULL on the left propagates, even through OR true.
    assert_eq!(ev("NULL OR true"), Ok(Value::Null));
    assert_eq!(ev("NULL AND false"), Ok(Value::Null));
    assert_eq!(ev("true AND NULL"), Ok(Value::Null));
    assert_eq!(ev("false OR NULL"), Ok(Value::Null));
    fails("1 AND true", "cannot coerce int to boolean");
    fails("true AND 1.5", "cannot coerce double to boolean");
    fails("NOT 1", "cannot coerce int to boolean");
    fails("true = true", "cannot coerce boolean to int");
    fails("true + 1", "cannot coerce boolean to int");
    fails("true + 1.5", "cannot coerce boolean to double");
}

#[test]
fn null_and_is() {
    assert_eq!(ev("NULL"), Ok(Value::Null));
    assert_eq!(ev("NULL + 1"), Ok(Value::Null));
    assert_eq!(ev("abs(NULL)"), Ok(Value::Null));
    assert_eq!(ev("1 < NULL"), Ok(Value::Null));
    assert!(boolean("NULL IS NULL"));
    assert!(boolean("NULL ISNULL"));
    assert!(!boolean("1 IS NULL"));
    assert!(boolean("1 IS NOT NULL"));
    assert!(boolean("1 NOTNULL"));
    assert!(!boolean("NULL NOTNULL"));
    assert!(boolean("true IS TRUE"));
    assert!(boolean("false IS FALSE"));
    assert!(boolean("false IS NOT TRUE"));
    assert!(!boolean("1 IS TRUE"));
    assert!(boolean("NULL IS NOT TRUE"));
    assert!(boolean("(1 < 2) IS TRUE"));
    assert!(boolean("1 < 2 IS TRUE"), "IS binds looser than <");
    assert!(boolean("NULL IS NULL IS TRUE"));
    // NOT binds looser than IS: NOT (NULL IS NOT NULL).
    assert!(boolean("NOT NULL IS NOT NULL"));
}

#[test]
fn bitwise() {
    assert_eq!(int("12 & 10"), 8);
    assert_eq!(int("12 | 10"), 14);
    assert_eq!(int("12 # 10"), 6);
    assert_eq!(int("~0"), -1);
    assert_eq!(int("~5"), -6);
    assert_eq!(int("1 << 10"), 1024);
    assert_eq!(int("1024 >> 3"), 128);
    assert_eq!(int("-16 >> 2"), -4);
    assert_eq!(int("1 << 64"), 1, "x86: count modulo 64");
    assert_eq!(int("1 << 63"), i64::MIN);
    // `~` has the precedence of the bitwise operators: ~(1 + 2), (~1) | 2.
    assert_eq!(int("~1 + 2"), !3);
    assert_eq!(int("~1 | 8"), !1 | 8);
    // + binds tighter than <<.
    assert_eq!(int("1 << 2 + 1"), 8);
    assert_eq!(int("3.4 & 7"), 3);
    fails("true & 1", "cannot coerce boolean to int");
}

#[test]
fn case_expressions() {
    assert_eq!(int("CASE WHEN 1 = 1 THEN 10 ELSE 20 END"), 10);
    assert_eq!(int("case when false then 1 when true then 2 else 3 end"), 2);
    assert_eq!(ev("CASE WHEN false THEN 1 END"), Ok(Value::Null));
    assert_eq!(int("CASE WHEN 0 THEN 1 WHEN 2 THEN 3 END"), 3);
    assert_eq!(int("CASE WHEN NULL THEN 1 ELSE 2 END"), 2);
    assert_eq!(int("CASE WHEN 0.0 THEN 1 ELSE 2 END"), 2);
    // Lazy: branches not taken are not evaluated.
    assert_eq!(int("CASE WHEN true THEN 1 ELSE 1/0 END"), 1);
    assert_eq!(int("1 + CASE WHEN true THEN 1 END * 2"), 3);
}

#[test]
fn functions() {
    assert_eq!(int("abs(-5)"), 5);
    assert_eq!(dbl("abs(-5.5)"), 5.5);
    assert_eq!(int("abs(-9223372036854775808)"), i64::MIN);
    assert_eq!(dbl("double(3)"), 3.0);
    assert_eq!(int("int(2.5)"), 2);
    assert_eq!(int("int(3.5)"), 4);
    assert_eq!(int("int(-2.5)"), -2);
    assert_eq!(int("int(7)"), 7);
    fails(
        "int(1e19)",
        "double to int overflow for 10000000000000000000.000000",
    );
    fails("int(0.0/0)", "double to int overflow for NaN");
    fails("int(true)", "cannot coerce boolean to int");
    assert_eq!(dbl("pi()"), std::f64::consts::PI);
    assert_eq!(dbl("sqrt(16)"), 4.0);
    assert!(dbl("sqrt(-1)").is_nan());
    assert_eq!(dbl("ln(1)"), 0.0);
    assert_eq!(dbl("ln(0)"), f64::NEG_INFINITY);
    assert_eq!(dbl("exp(0)"), 1.0);
    assert_eq!(dbl("exp(1)"), std::f64::consts::E);
    assert_eq!(dbl("pow(2, 10)"), 1024.0);
    assert_eq!(dbl("power(2, 0.5)"), 2f64.sqrt());
    assert_eq!(int("least(3, 1, 2)"), 1);
    assert_eq!(int("greatest(3, 1, 2)"), 3);
    assert_eq!(dbl("least(3, 1.5, 2)"), 1.5);
    assert_eq!(dbl("greatest(3, 1.5, 2)"), 3.0);
    assert_eq!(int("least(7)"), 7);
    assert_eq!(ev("least(1, NULL)"), Ok(Value::Null));
    fails("least(1.5, true)", "cannot coerce boolean to double");
    fails("greatest(1, false)", "cannot coerce boolean to int");
    assert_eq!(int("debug(5)"), 5);
    assert_eq!(ev("debug(NULL)"), Ok(Value::Null));
    assert_eq!(int("ABS(-1) + Abs(-1)"), 2);
    assert_eq!(int("least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)"), 1);
    fails(
        "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)",
        "too many function arguments, maximum is 16",
    );
}

#[test]
fn hash_and_permute_functions() {
    assert_eq!(int("hash(42, 7)"), hash_murmur2(42, 7));
    assert_eq!(int("hash_murmur2(42, 7)"), hash_murmur2(42, 7));
    assert_eq!(int("hash_fnv1a(42, 7)"), hash_fnv1a(42, 7));
    // Without a seed: :default_seed.
    assert_eq!(int("hash(42)"), hash_murmur2(42, 12345));
    assert_eq!(int("hash_fnv1a(42)"), hash_fnv1a(42, 12345));
    assert_eq!(int("permute(3, 10, 5)"), permute(3, 10, 5));
    assert_eq!(int("permute(3, 10)"), permute(3, 10, 12345));
    fails(
        "permute(1, 0)",
        "permute size parameter must be greater than zero",
    );
    assert_eq!(int("permute(5, 1)"), 0);
    // A permutation of [0, size): every value exactly once, for several sizes and seeds.
    for size in [1i64, 2, 3, 4, 5, 7, 8, 100, 1000] {
        for seed in [0i64, 1, -1, 12345] {
            let mut seen = vec![false; size as usize];
            for v in 0..size {
                let p = permute(v, size, seed);
                assert!((0..size).contains(&p));
                assert!(!seen[p as usize], "size {size} seed {seed}");
                seen[p as usize] = true;
            }
        }
    }
    // Values outside [0, size) are taken modulo size (as unsigned).
    assert_eq!(permute(13, 10, 5), permute(3, 10, 5));
}

#[test]
fn random_functions_check_their_arguments() {
    fails("random(2, 1)", "empty range given to random");
    fails(
        "random(-9223372036854775808, 9223372036854775807)",
        "random range is too large",
    );
    fails(
        "random(0, 9223372036854775807)",
        "random range is too large",
    );
    fails(
        "random_gaussian(1, 10, 1.5)",
        "gaussian parameter must be at least 2.000000 (not 1.500000)",
    );
    fails(
        "random_exponential(1, 10, 0)",
        "exponential parameter must be greater than zero (not 0.000000)",
    );
    fails(
        "random_zipfian(1, 10, 1.0)",
        "zipfian parameter must be in range [1.001, 1000] (not 1.000000)",
    );
    fails(
        "random_zipfian(1, 10, 1001)",
        "zipfian parameter must be in range [1.001, 1000] (not 1001.000000)",
    );
    fails("random(1, true)", "cannot coerce boolean to int");
    assert_eq!(ev("random(1, NULL)"), Ok(Value::Null));
    for _ in 0..100 {
        let r = int("random(5, 7)");
        assert!((5..=7).contains(&r));
    }
    assert_eq!(int("random(3, 3)"), 3);
    assert_eq!(int("random(1.4, 1.4)"), 1);
    let g = int("random_gaussian(1, 10, 2.5)");
    assert!((1..=10).contains(&g));
    let e = int("random_exponential(1, 10, 2.5)");
    assert!((1..=10).contains(&e));
    let z = int("random_zipfian(1, 10, 1.5)");
    assert!((1..=10).contains(&z));
    assert_eq!(int("random_zipfian(5, 5, 2)"), 5);
}

#[test]
fn random_draws_come_from_the_client_stream_in_order() {
    // `random(lo, hi)` is `Rng::range`; arguments are evaluated left to right.
    let mut rng = Rng::from_seed(99);
    let (sy, mut v, _) = run(
        "\\set a random(1, 1000)\n\\set b random(1, random(10, 20))\n",
        &mut rng,
    )
    .unwrap();
    let mut r = Rng::from_seed(99);
    let a = r.range(1, 1000);
    let inner = r.range(10, 20);
    let b = r.range(1, inner);
    assert_eq!(v.value(sy.get("a").unwrap()), Ok(Value::Int(a)));
    assert_eq!(v.value(sy.get("b").unwrap()), Ok(Value::Int(b)));
    assert_eq!(rng, r);
}

#[test]
fn variables_in_expressions() {
    let mut rng = Rng::from_seed(1);
    let (sy, mut v, _) = run(
        "\\set a 5\n\\set b :a * 2 + :scale\n\\set c :b > 10\n\\set d :client_id\n",
        &mut rng,
    )
    .unwrap();
    assert_eq!(v.value(sy.get("b").unwrap()), Ok(Value::Int(11)));
    assert_eq!(v.value(sy.get("c").unwrap()), Ok(Value::Bool(true)));
    assert_eq!(v.value(sy.get("d").unwrap()), Ok(Value::Int(0)));
    assert_eq!(
        run("\\set a :nope + 1\n", &mut rng).unwrap_err(),
        "undefined variable \"nope\""
    );
    // Text values (from -D or \gset) convert lazily.
    let (s, sy) = compile("\\set y :x + 1\n");
    let mut v = vars_for(&sy);
    v.set_text(sy.get("x").unwrap(), "41");
    let mut it = Interp::new();
    assert_eq!(
        it.next(&s, 0, &mut v, &mut rng, &mut NoTimer),
        Ok(Action::Done)
    );
    assert_eq!(v.peek(sy.get("y").unwrap()), Some(Value::Int(42)));
    v.set_text(sy.get("x").unwrap(), "4x");
    it.restart();
    assert_eq!(
        it.next(&s, 0, &mut v, &mut rng, &mut NoTimer)
            .unwrap_err()
            .message,
        "malformed variable \"x\" value: \"4x\""
    );
}

#[test]
fn precedence_follows_exprparse_y() {
    assert_eq!(int("2 + 3 * 4 - 5"), 9);
    assert_eq!(int("2 * 3 % 4"), 2);
    assert!(boolean("1 + 1 = 2"));
    assert!(boolean("1 | 2 = 3"), "| binds tighter than =");
    assert!(boolean("NOT 1 > 2 AND 2 > 1"));
    assert!(
        boolean("true OR false AND false"),
        "AND binds tighter than OR"
    );
    assert!(!boolean("NOT true OR false"));
    assert!(boolean("NOT (true AND false)"));
    assert_eq!(int("- 3 + 5"), 2);
    assert_eq!(int("-(3 + 5)"), -8);
    assert!(boolean("-1 < 0"));
}

// ------------------------------------------------------------------------------------------
// Conditionals
// ------------------------------------------------------------------------------------------

fn branch(script: &str) -> Vec<i64> {
    // Each branch does `\set r<N> 1`; the list is the N set.
    let mut rng = Rng::from_seed(1);
    let (sy, mut v, _) = run(script, &mut rng).unwrap();
    (0..10)
        .filter(|n| {
            sy.get(&format!("r{n}"))
                .is_some_and(|id| v.value(id).is_ok())
        })
        .collect()
}

#[test]
fn if_elif_else_run_one_branch() {
    let s = |a: &str, b: &str| {
        format!(
            "\\if {a}\n\\set r1 1\n\\elif {b}\n\\set r2 1\n\\else\n\\set r3 1\n\\endif\n\\set r4 1\n"
        )
    };
    assert_eq!(branch(&s("true", "true")), vec![1, 4]);
    assert_eq!(branch(&s("false", "true")), vec![2, 4]);
    assert_eq!(branch(&s("false", "false")), vec![3, 4]);
    assert_eq!(branch(&s("0", "1.5")), vec![2, 4]);
    assert_eq!(branch(&s("NULL", "NULL")), vec![3, 4]);
    // The \elif after a taken branch is not evaluated.
    assert_eq!(branch(&s("true", "1/0")), vec![1, 4]);
    // No else, several elifs.
    assert_eq!(
        branch("\\if false\n\\set r1 1\n\\elif false\n\\set r2 1\n\\elif true\n\\set r3 1\n\\elif true\n\\set r4 1\n\\endif\n"),
        vec![3]
    );
    assert_eq!(
        branch("\\if false\n\\set r1 1\n\\endif\n\\set r2 1\n"),
        vec![2]
    );
    // Nested, in taken and skipped branches.
    let nested = |a: &str, b: &str| {
        format!(
            "\\if {a}\n\\if {b}\n\\set r1 1\n\\else\n\\set r2 1\n\\endif\n\\set r3 1\n\\else\n\\if {b}\n\\set r4 1\n\\endif\n\\set r5 1\n\\endif\n"
        )
    };
    assert_eq!(branch(&nested("true", "true")), vec![1, 3]);
    assert_eq!(branch(&nested("true", "false")), vec![2, 3]);
    assert_eq!(branch(&nested("false", "true")), vec![4, 5]);
    assert_eq!(branch(&nested("false", "false")), vec![5]);
    // An error in a condition is a script failure.
    let mut rng = Rng::from_seed(1);
    assert_eq!(
        run("\\if 1/0\n\\endif\n", &mut rng).unwrap_err(),
        "division by zero"
    );
}

#[test]
fn if_timing_visits_the_commands_pgbench_executes() {
    // pgbench times the commands it executes: a false \if, the \elif it evaluates, but not the
    // \else or \endif it skips to.
    struct Rec(Vec<usize>);
    impl crate::StatementTimer for Rec {
        fn start(&mut self) {}
        fn end(&mut self, i: usize, _ok: bool) {
            self.0.push(i);
        }
    }
    let (s, sy) = compile(
        "\\if false\n\\set a 1\n\\elif false\n\\set a 2\n\\else\n\\set a 3\n\\endif\n\\set b 1\n",
    );
    let mut v = vars_for(&sy);
    let mut t = Rec(Vec::new());
    let mut rng = Rng::from_seed(1);
    let mut it = Interp::new();
    assert_eq!(it.next(&s, 0, &mut v, &mut rng, &mut t), Ok(Action::Done));
    assert_eq!(t.0, vec![0, 2, 5, 6, 7]);
    let (s, sy) = compile("\\if true\n\\set a 1\n\\elif 1/0\n\\else\n\\endif\n");
    let mut v = vars_for(&sy);
    let mut t = Rec(Vec::new());
    let mut it = Interp::new();
    assert_eq!(it.next(&s, 0, &mut v, &mut rng, &mut t), Ok(Action::Done));
    assert_eq!(t.0, vec![0, 1, 2]);
}

// ------------------------------------------------------------------------------------------
// Meta-commands and SQL parsing
// ------------------------------------------------------------------------------------------

#[test]
fn tpcb_like_script_compiles_as_pgbench_shows_it() {
    let text = "\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\n\\set tid random(1, 10 * :scale)\n\\set delta random(-5000, 5000)\nBEGIN;\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nUPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\nUPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\nINSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\nEND;\n";
    let (s, _) = compile(text);
    assert_eq!(s.commands.len(), 11);
    let want: Vec<&str> = text.lines().collect();
    assert_eq!(s.statements(), want);
    assert_eq!(
        s.commands.iter().map(|c| c.line).collect::<Vec<_>>(),
        (1..=11).collect::<Vec<u32>>()
    );
    let CommandKind::Sql(sql) = &s.commands[9].kind else {
        panic!()
    };
    assert_eq!(
        sql.dollar_text().0,
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);"
    );
    // The builtin's own texts are the same.
    for b in crate::tpcb::Builtin::PGBENCH {
        let mut sy = Symbols::new();
        let s = Script::parse(b.description(), &b.script().join("\n"), &mut sy).unwrap();
        assert_eq!(s.statements(), b.script());
    }
}

#[test]
fn sql_commands_split_as_psqlscan() {
    let (s, _) = compile(
        "-- a comment\n\n  SELECT 1;SELECT 2;\nSELECT 'a;b', \"x;y\", $$c;d$$, $t$e;$f$t$, (1;\n2);\nSELECT 3 -- trailing; comment\n, 4;\n/* c; */ SELECT 5\n;\nSELECT 6 \\; SELECT 7;\nSELECT E'\\';' ;\nSELECT 8",
    );
    let texts: Vec<String> = s
        .commands
        .iter()
        .map(|c| match &c.kind {
            CommandKind::Sql(q) => q.text.clone(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            "SELECT 1;",
            "SELECT 2;",
            "SELECT 'a;b', \"x;y\", $$c;d$$, $t$e;$f$t$, (1;\n2);",
            "SELECT 3 -- trailing; comment\n, 4;",
            "/* c; */ SELECT 5\n;",
            "SELECT 6 ; SELECT 7;",
            "SELECT E'\\';' ;",
            "SELECT 8",
        ]
    );
    assert_eq!(
        s.commands.iter().map(|c| c.line).collect::<Vec<_>>(),
        vec![3, 3, 4, 6, 8, 10, 11, 12]
    );
    assert_eq!(
        s.commands[2].first_line,
        "SELECT 'a;b', \"x;y\", $$c;d$$, $t$e;$f$t$, (1;"
    );
}

#[test]
fn create_function_bodies_keep_their_semicolons() {
    let (s, _) = compile(
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END;\nSELECT f();\n",
    );
    assert_eq!(s.commands.len(), 2);
}

#[test]
fn sql_variables_become_parameters_or_text() {
    let (s, sy) = compile("SELECT :a, :a::int, 'x:b', :'c', :\"d\", a::text, :1, :, :e_1\n");
    let CommandKind::Sql(q) = &s.commands[0].kind else {
        panic!()
    };
    let (dollar, ids) = q.dollar_text();
    assert_eq!(
        dollar,
        "SELECT $1, $2::int, 'x$3', $4, $5, a::text, :1, :, $6\n"
    );
    let names: Vec<&str> = ids.iter().map(|i| sy.name(*i)).collect();
    assert_eq!(names, vec!["a", "a", "b", "c", "d", "e_1"]);
    assert!(q.has_ident());
    assert_eq!(q.param_count(), 6);

    let mut v = vars_for(&sy);
    v.set_value(sy.get("a").unwrap(), Value::Int(5));
    v.set_text(sy.get("c").unwrap(), "it's");
    v.set_text(sy.get("d").unwrap(), "Col\"1");
    let mut out = String::new();
    simple_sql(q, &mut v, &mut out);
    // Undefined variables stay as written (pgbench's assignVariables).
    assert_eq!(
        out,
        "SELECT 5, 5::int, 'x:b', 'it''s', \"Col\"\"1\", a::text, :1, :, :e_1\n"
    );
    v.set_text(sy.get("c").unwrap(), "a\\b");
    simple_sql(q, &mut v, &mut out);
    assert!(out.contains(" E'a\\\\b'"), "{out}");

    v.set_value(sy.get("b").unwrap(), Value::Double(0.1 + 0.2));
    {
        let mut ps = Vec::new();
        params(q, &mut v, &mut ps);
        assert_eq!(
            ps,
            vec![
                Param::Int(5),
                Param::Int(5),
                Param::Text("0.3"),
                Param::Text("a\\b"),
                Param::Text("Col\"1"),
                Param::Null
            ]
        );
    }
    v.set_value(sy.get("a").unwrap(), Value::Null);
    v.set_value(sy.get("b").unwrap(), Value::Bool(true));
    let mut ps = Vec::new();
    params(q, &mut v, &mut ps);
    assert_eq!(ps[0], Param::Text("NULL"));
    assert_eq!(ps[2], Param::Text("true"));
}

#[test]
fn meta_commands_parse() {
    let (s, sy) = compile(
        "\\SET x 1\n\\sleep 10\n\\sleep 10 ms\n\\sleep 5us\n\\sleep :t s\n\\sleep 2 S\n\\setshell v echo :x ::y z\n\\shell true\n\\startpipeline\n\\syncpipeline\n\\endpipeline\nSELECT 1 AS a \\gset\nSELECT 2 AS b \\gset p_\nSELECT 3 \\; SELECT 4 \\aset\nSELECT 5 \\aset q_\n\\set y 1 + \\\n  2\n",
    );
    let k: Vec<&CommandKind> = s.commands.iter().map(|c| &c.kind).collect();
    assert!(matches!(k[0], CommandKind::Set { .. }));
    assert_eq!(s.commands[0].first_line, "\\SET x 1");
    let sleep = |i: usize| match k[i] {
        CommandKind::Sleep { amount, unit_us } => (amount.clone(), *unit_us),
        other => panic!("{other:?}"),
    };
    assert_eq!(sleep(1), (SleepArg::Const(10), 1_000_000));
    assert_eq!(sleep(2), (SleepArg::Const(10), 1_000));
    assert_eq!(sleep(3), (SleepArg::Const(5), 1));
    assert_eq!(sleep(4), (SleepArg::Var(sy.get("t").unwrap()), 1_000_000));
    assert_eq!(sleep(5), (SleepArg::Const(2), 1_000_000));
    match k[6] {
        CommandKind::SetShell { var, args } => {
            assert_eq!(*var, sy.get("v").unwrap());
            assert_eq!(
                args,
                &vec![
                    ShellArg::Lit("echo".into()),
                    ShellArg::Var(sy.get("x").unwrap()),
                    ShellArg::Lit(":y".into()),
                    ShellArg::Lit("z".into())
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(k[7], CommandKind::Shell { .. }));
    assert!(matches!(k[8], CommandKind::StartPipeline));
    assert!(matches!(k[9], CommandKind::SyncPipeline));
    assert!(matches!(k[10], CommandKind::EndPipeline));
    let result = |i: usize| match k[i] {
        CommandKind::Sql(q) => (q.text.clone(), q.result.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        result(11),
        ("SELECT 1 AS a ".into(), ResultVars::Gset(String::new()))
    );
    assert_eq!(
        result(12),
        ("SELECT 2 AS b ".into(), ResultVars::Gset("p_".into()))
    );
    assert_eq!(
        result(13),
        (
            "SELECT 3 ; SELECT 4 ".into(),
            ResultVars::Aset(String::new())
        )
    );
    assert_eq!(
        result(14),
        ("SELECT 5 ".into(), ResultVars::Aset("q_".into()))
    );
    assert!(matches!(k[15], CommandKind::Set { .. }));
    assert_eq!(s.commands.len(), 16);
    assert!(s.uses_pipeline());
}

#[test]
fn sleep_actions_and_variable_sleeps() {
    let mut rng = Rng::from_seed(1);
    let (_, _, a) = run("\\sleep 10 ms\n\\sleep 3\n\\sleep -5 us\n", &mut rng).unwrap();
    assert_eq!(
        a,
        vec![
            Action::Sleep {
                index: 0,
                micros: 10_000
            },
            Action::Sleep {
                index: 1,
                micros: 3_000_000
            },
            Action::Sleep {
                index: 2,
                micros: -5
            }
        ]
    );
    let (_, _, a) = run("\\set t 7\n\\sleep :t ms\n", &mut rng).unwrap();
    assert_eq!(
        a,
        vec![Action::Sleep {
            index: 1,
            micros: 7_000
        }]
    );
    assert_eq!(
        run("\\sleep :t\n", &mut rng).unwrap_err(),
        "sleep: undefined variable \"t\""
    );
    assert_eq!(
        run("\\set t true\n\\sleep :t\n", &mut rng).unwrap_err(),
        "sleep: invalid sleep time \"true\" for variable \"t\""
    );
}

#[test]
fn shell_commands() {
    let mut rng = Rng::from_seed(1);
    let (sy, mut v, _) = run(
        "\\set n 20\n\\setshell r echo :n\n\\setshell s printf '  -7\\n'\n\\shell true\n",
        &mut rng,
    )
    .unwrap();
    assert_eq!(v.value(sy.get("r").unwrap()), Ok(Value::Int(20)));
    assert_eq!(v.value(sy.get("s").unwrap()), Ok(Value::Int(-7)));
    // `::x` is the literal ":x": "20 :x" is not an integer.
    assert_eq!(
        run("\\set n 20\n\\setshell r echo :n ::x\n", &mut rng).unwrap_err(),
        "echo: shell command must return an integer (not \"20 :x\n\")"
    );
    assert_eq!(
        run("\\setshell r echo :nope\n", &mut rng).unwrap_err(),
        "echo: undefined variable \":nope\""
    );
    assert_eq!(
        run("\\shell false\n", &mut rng).unwrap_err(),
        "false: could not launch shell command"
    );
    assert_eq!(
        run("\\setshell r echo abc\n", &mut rng).unwrap_err(),
        "echo: shell command must return an integer (not \"abc\n\")"
    );
    assert_eq!(
        run("\\setshell r true\n", &mut rng).unwrap_err(),
        "true: could not read result of shell command"
    );
    let long = "x".repeat(300);
    assert_eq!(
        run(&format!("\\shell echo {long}\n"), &mut rng).unwrap_err(),
        "echo: shell command is too long"
    );
}

#[test]
fn gset_stores_columns() {
    let (_, sy) = compile("\\set a :x + :p_y\n");
    let mut v = vars_for(&sy);
    let mut buf = String::new();
    store_row(
        "",
        [("x", Some("5")), ("unused", None)],
        &sy,
        &mut v,
        &mut buf,
    )
    .unwrap();
    store_row("p_", [("y", Some("2.5"))], &sy, &mut v, &mut buf).unwrap();
    assert_eq!(v.peek(sy.get("x").unwrap()), Some(Value::Int(5)));
    assert_eq!(v.peek(sy.get("p_y").unwrap()), Some(Value::Double(2.5)));
    assert_eq!(
        store_row("", [("?column?", Some("1"))], &sy, &mut v, &mut buf),
        Err(StoreError::BadName("?column?".into()))
    );
    store_row("", [("x", None)], &sy, &mut v, &mut buf).unwrap();
    assert_eq!(v.text(sy.get("x").unwrap()), Some(""));
}

// ------------------------------------------------------------------------------------------
// Parse errors: message, line, column (pgbench's caret), rendering
// ------------------------------------------------------------------------------------------

fn err_at(text: &str) -> (String, u32, u32) {
    let e = parse_err(text);
    (e.message, e.line, e.column)
}

#[test]
fn parse_error_rendering() {
    let e = parse_err("SELECT 1;\n\n\\set x 1 + * 2\n");
    assert_eq!(
        e.to_string(),
        "bad.sql:3:12: syntax error in command \"set\"\n\\set x 1 + * 2\n           ^ error found here"
    );
    let e = parse_err("");
    assert_eq!(
        e.to_string(),
        "bad.sql: empty command list for script \"bad.sql\""
    );
    let e = parse_err("-- only a comment\n\n");
    assert_eq!(e.line, 0);
}

#[test]
fn expression_errors_carry_pgbench_s_positions() {
    let s = |m: &str| format!("{m} in command \"set\"");
    assert_eq!(err_at("\\set x 1 + * 2\n"), (s("syntax error"), 1, 12));
    // At the end of the line, the caret is past the last character (the newline's place) ...
    assert_eq!(err_at("\\set x 1 +\n"), (s("syntax error"), 1, 11));
    // ... and at the end of the file on the last character.
    assert_eq!(err_at("\\set x 1 +"), (s("syntax error"), 1, 10));
    assert_eq!(err_at("\\set x 1 2\n"), (s("syntax error"), 1, 10));
    assert_eq!(err_at("\\set x (1\n"), (s("syntax error"), 1, 10));
    assert_eq!(err_at("\\set x 1 < 2 < 3\n"), (s("syntax error"), 1, 14));
    assert_eq!(
        err_at("\\set x 9223372036854775808\n"),
        (s("syntax error"), 1, 26)
    );
    assert_eq!(
        err_at("\\set x 1 - 9223372036854775808\n"),
        (s("syntax error"), 1, 30)
    );
    assert_eq!(
        err_at("\\set x 99999999999999999999\n"),
        (s("bigint constant overflow (99999999999999999999)"), 1, 27)
    );
    assert_eq!(
        err_at("\\set x 1e400\n"),
        (s("double constant overflow (1e400)"), 1, 12)
    );
    assert_eq!(
        err_at("\\set x 1 + @\n"),
        (s("unexpected character (@)"), 1, 12)
    );
    assert_eq!(
        err_at("\\set x foo(1)\n"),
        (s("unexpected function name (foo)"), 1, 10)
    );
    assert_eq!(
        err_at("\\set x random(1)\n"),
        (s("unexpected number of arguments (random)"), 1, 16)
    );
    assert_eq!(
        err_at("\\set x POWER(1)\n"),
        (s("unexpected number of arguments (power)"), 1, 15)
    );
    assert_eq!(
        err_at("\\set x least()\n"),
        (s("at least one argument expected (least)"), 1, 14)
    );
    assert_eq!(
        err_at("\\set x hash(1, 2, 3)\n"),
        (s("unexpected number of arguments (hash)"), 1, 20)
    );
    assert_eq!(
        err_at("\\set x permute(1)\n"),
        (s("unexpected number of arguments (permute)"), 1, 17)
    );
    assert_eq!(err_at("\\set x abs\n"), (s("syntax error"), 1, 11));
    assert_eq!(err_at("\\set x CASE 1 WHEN\n"), (s("syntax error"), 1, 13));
    assert_eq!(err_at("\\set x 1 IS 2\n"), (s("syntax error"), 1, 13));
    assert_eq!(err_at("\\set x :\n"), (s("unexpected character (:)"), 1, 8));
    assert_eq!(
        err_at("\\if 1 +\n\\endif\n"),
        ("syntax error in command \"if\"".into(), 1, 8)
    );
    assert_eq!(
        err_at("\\if true\n\\elif )\n\\endif\n"),
        ("syntax error in command \"elif\"".into(), 2, 7)
    );
    // A continued line: the position is on the line of the error.
    assert_eq!(err_at("\\set x 1 + \\\n * 2\n"), (s("syntax error"), 2, 2));
}

#[test]
fn meta_command_errors() {
    assert_eq!(
        err_at("\\set\n"),
        ("missing argument in command \"set\"".into(), 1, 5)
    );
    assert_eq!(
        err_at("\\set 1x 2\n"),
        (
            "invalid variable name: \"1x\" in command \"set\"".into(),
            1,
            6
        )
    );
    assert_eq!(
        err_at("\\foo bar\n"),
        ("invalid command in command \"foo\"".into(), 1, 2)
    );
    assert_eq!(
        err_at("\\sleep\n"),
        ("missing argument in command \"sleep\"".into(), 1, 7)
    );
    assert_eq!(
        err_at("\\sleep 1 ms extra\n"),
        ("too many arguments in command \"sleep\"".into(), 1, 13)
    );
    assert_eq!(
        err_at("\\sleep abc\n"),
        (
            "invalid sleep time, must be an integer (abc) in command \"sleep\"".into(),
            1,
            8
        )
    );
    assert_eq!(
        err_at("\\sleep 1x ms\n"),
        (
            "invalid sleep time, must be an integer (1x) in command \"sleep\"".into(),
            1,
            8
        )
    );
    assert_eq!(
        err_at("\\sleep 1 min\n"),
        (
            "unrecognized time unit, must be us, ms or s (min) in command \"sleep\"".into(),
            1,
            10
        )
    );
    assert_eq!(
        err_at("\\sleep 10min\n"),
        (
            "unrecognized time unit, must be us, ms or s (min) in command \"sleep\"".into(),
            1,
            10
        )
    );
    assert_eq!(
        err_at("\\setshell x\n"),
        ("missing argument in command \"setshell\"".into(), 1, 12)
    );
    assert_eq!(
        err_at("\\shell\n"),
        ("missing command in command \"shell\"".into(), 1, 7)
    );
    for c in [
        "else",
        "endif",
        "startpipeline",
        "syncpipeline",
        "endpipeline",
    ] {
        assert_eq!(
            err_at(&format!("\\{c} x\n")),
            (
                format!("unexpected argument in command \"{c}\""),
                1,
                c.len() as u32 + 3
            )
        );
    }
    assert_eq!(
        err_at("SELECT 1 \\gset a b\n"),
        ("too many arguments in command \"gset\"".into(), 1, 18)
    );
    assert_eq!(
        err_at("\\gset\n"),
        ("\\gset must follow an SQL command".into(), 1, 1)
    );
    assert_eq!(
        err_at("\\set x 1\n\\aset\n"),
        ("\\gset must follow an SQL command (\\set x 1)".into(), 2, 1)
    );
    assert_eq!(
        err_at("SELECT 1 \\gset\n\\gset\n"),
        ("\\gset must follow an SQL command".into(), 2, 1)
    );
    let many: String = (0..300).map(|i| format!(" a{i}")).collect();
    assert_eq!(
        err_at(&format!("\\shell{many}\n")).0,
        "too many arguments in command \"shell\""
    );
}

#[test]
fn conditional_structure_errors() {
    assert_eq!(
        err_at("SELECT 1;\n\\if true\nSELECT 2;\n"),
        ("\\if without matching \\endif".into(), 2, 1)
    );
    assert_eq!(
        err_at("\\else\n"),
        ("\\else without matching \\if".into(), 1, 1)
    );
    assert_eq!(
        err_at("\\elif true\n"),
        ("\\elif without matching \\if".into(), 1, 1)
    );
    assert_eq!(
        err_at("\\endif\n"),
        ("\\endif without matching \\if".into(), 1, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\else\n\\else\n\\endif\n"),
        ("\\else after \\else".into(), 3, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\else\n\\elif 2\n\\endif\n"),
        ("\\elif after \\else".into(), 3, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\if 2\n\\endif\n"),
        ("\\if without matching \\endif".into(), 1, 1)
    );
}

#[test]
fn seed_000_scripts_parse_unchanged() {
    // Seed 000's two scripts (the article that quotes them lost the backslashes; these are the
    // scripts as pgbench runs them).
    let tpcb = "\\set scale 10000\n\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\n\\set tid random(1, 10 * :scale)\n\\set delta random(-5000, 5000)\nBEGIN;\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;\nUPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;\nUPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\nINSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\nEND;\n";
    let update = "\\set scale 1000000\n\\set aid random(1, 100000 * :scale)\n\\set bid random(1, 1 * :scale)\n\\set delta random(-5000, 5000)\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;\n";
    let mut rng = Rng::from_seed(3);
    let (sy, mut v, a) = run(tpcb, &mut rng).unwrap();
    assert_eq!(a.len(), 7);
    let aid = v.value(sy.get("aid").unwrap()).unwrap();
    assert!(matches!(aid, Value::Int(i) if (1..=1_000_000_000).contains(&i)));
    let (sy, mut v, a) = run(update, &mut rng).unwrap();
    assert_eq!(a, vec![Action::Sql(4)]);
    // Account ids past 2^31.
    let mut big = false;
    for _ in 0..20 {
        let (sy2, mut v2, _) = run(update, &mut rng).unwrap();
        if let Ok(Value::Int(i)) = v2.value(sy2.get("aid").unwrap()) {
            assert!((1..=100_000_000_000).contains(&i));
            big |= i > i32::MAX as i64;
        }
    }
    assert!(big);
    let _ = v.value(sy.get("bid").unwrap());
}
