//! Parse errors: message, line, column (pgbench's caret) and rendering.

use crate::script::parse::{ParseError, Script};
use crate::script::vars::Symbols;

fn parse_err(text: &str) -> ParseError {
    let mut sy = Symbols::new();
    match Script::parse("bad.sql", text, &mut sy) {
        Ok(s) => panic!("parsed: {s:?}"),
        Err(e) => e,
    }
}

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
    // About the whole script: no position, as pgbench prints it.
    assert_eq!(e.to_string(), "empty command list for script \"bad.sql\"");
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
    // pgbench's ConditionError: the script and the 1-based command (one past the last for an
    // \if left open); the position is the faulty command's.
    let ce =
        |n: u32, msg: &str| format!("condition error in script \"bad.sql\" command {n}: {msg}");
    assert_eq!(
        err_at("SELECT 1;\n\\if true\nSELECT 2;\n"),
        (ce(4, "\\if without matching \\endif"), 2, 1)
    );
    assert_eq!(
        err_at("\\else\n"),
        (ce(1, "\\else without matching \\if"), 1, 1)
    );
    assert_eq!(
        err_at("\\elif true\n"),
        (ce(1, "\\elif without matching \\if"), 1, 1)
    );
    assert_eq!(
        err_at("\\endif\n"),
        (ce(1, "\\endif without matching \\if"), 1, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\else\n\\else\n\\endif\n"),
        (ce(3, "\\else after \\else"), 3, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\else\n\\elif 2\n\\endif\n"),
        (ce(3, "\\elif after \\else"), 3, 1)
    );
    assert_eq!(
        err_at("\\if 1\n\\if 2\n\\endif\n"),
        (ce(4, "\\if without matching \\endif"), 1, 1)
    );
}

#[test]
fn an_invalid_variable_name_fails_when_the_command_runs() {
    use super::run;
    use crate::random::Rng;
    let mut rng = Rng::from_seed(1);
    assert_eq!(
        run("\\set 1x 2\n", &mut rng).err().as_deref(),
        Some("set: invalid variable name: \"1x\"")
    );
    assert_eq!(
        run("\\setshell . echo 5\n", &mut rng).err().as_deref(),
        Some("setshell: invalid variable name: \".\"")
    );
    // pgbench then says "assignment of meta-command failed", not "evaluation ...".
    let (script, sy) = super::compile("\\set 1x 2\n");
    let mut vars = super::vars_for(&sy);
    let e = crate::script::exec::Interp::new()
        .next(
            &script,
            0,
            &mut vars,
            &mut rng,
            &mut crate::script::exec::NoTimer,
        )
        .unwrap_err();
    assert!(e.assignment);
    // The expression is evaluated first: its own error wins.
    assert_eq!(
        run("\\set . 1/0\n", &mut rng).err().as_deref(),
        Some("division by zero")
    );
}
