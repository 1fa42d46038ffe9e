//! Expression evaluation: operators, precedence, NULL logic, CASE, functions, variables.

use super::{compile, run, vars_for};
use crate::random::Rng;
use crate::script::exec::{Action, Interp, NoTimer};
use crate::script::expr::{hash_fnv1a, hash_murmur2, permute};
use crate::script::vars::Value;

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
