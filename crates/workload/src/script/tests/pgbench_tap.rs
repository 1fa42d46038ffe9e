//! The script cases of pgbench's own TAP tests (REL_18_STABLE `001_pgbench_with_server.pl`, "trigger
//! many expression errors", and `002_pgbench_no_server.pl`'s script tests), against the compiler:
//! a case pgbench rejects before connecting (exit status 1) must fail to compile with a message
//! that upstream's regular expressions match; a case pgbench rejects while running (status 2)
//! must compile. The messages are checked as `ParseError` renders them (what follows
//! `pgbench: error: ` on standard error: `file:line:column: message`, the line, the caret).

use regex::Regex;

use crate::script::parse::Script;
use crate::script::vars::Symbols;

fn compile(text: &str) -> Result<Script, String> {
    let mut sy = Symbols::new();
    Script::parse("t.sql", text, &mut sy).map_err(|e| e.to_string())
}

/// (case, exit status upstream expects, regexes on stderr, script)
fn cases() -> Vec<(&'static str, i32, Vec<&'static str>, String)> {
    let c = |n, s, r: Vec<&'static str>, t: &str| (n, s, r, t.to_string());
    vec![
        // 001
        c(
            "sql syntax error",
            2,
            vec![],
            "-- SQL syntax error\n    SELECT 1 + ;\n",
        ),
        c("shell bad command", 2, vec![], r"\shell no-such-command"),
        c(
            "shell undefined variable",
            2,
            vec![],
            "-- undefined variable in shell\n\\shell echo ::foo :nosuchvariable\n",
        ),
        c(
            "shell missing command",
            1,
            vec![r"missing command "],
            r"\shell",
        ),
        c(
            "shell too many args",
            1,
            vec![r#"too many arguments in command "shell""#],
            &format!(
                "-- 256 arguments to \\shell\n\\shell echo {}",
                vec!["arg"; 255].join(" ")
            ),
        ),
        c(
            "set syntax error",
            1,
            vec![r#"syntax error in command "set""#],
            r"\set i 1 +",
        ),
        c(
            "set no such function",
            1,
            vec![r"unexpected function name"],
            r"\set i noSuchFunction()",
        ),
        c("set invalid variable name", 2, vec![], r"\set . 1"),
        c("set division by zero", 2, vec![], r"\set i 1/0"),
        c(
            "set undefined variable",
            2,
            vec![],
            r"\set i :nosuchvariable",
        ),
        c(
            "set unexpected char",
            1,
            vec![r"unexpected character .;."],
            r"\set i ;",
        ),
        c(
            "set too many args",
            2,
            vec![],
            r"\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)",
        ),
        c("set empty random range", 2, vec![], r"\set i random(5,3)"),
        c(
            "set random range too large",
            2,
            vec![],
            r"\set i random(:minint, :maxint)",
        ),
        c(
            "set gaussian param too small",
            2,
            vec![],
            r"\set i random_gaussian(0, 10, 1.0)",
        ),
        c(
            "set exponential param greater 0",
            2,
            vec![],
            r"\set i random_exponential(0, 10, 0.0)",
        ),
        c(
            "set zipfian param to 1",
            2,
            vec![],
            r"\set i random_zipfian(0, 10, 1)",
        ),
        c(
            "set zipfian param too large",
            2,
            vec![],
            r"\set i random_zipfian(0, 10, 1000000)",
        ),
        c("set non numeric value", 2, vec![], r"\set i :foo + 1"),
        c("set no expression", 1, vec![r"syntax error"], r"\set i"),
        c(
            "set missing argument",
            1,
            vec![r"(?i)missing argument"],
            r"\set",
        ),
        c("set not a bool", 2, vec![], r"\set b NOT 0.0"),
        c("set not an int", 2, vec![], r"\set i TRUE + 2"),
        c("set not a double", 2, vec![], r"\set d ln(TRUE)"),
        c(
            "set case error",
            1,
            vec![r#"syntax error in command "set""#],
            r"\set i CASE TRUE THEN 1 ELSE 0 END",
        ),
        c("set random error", 2, vec![], r"\set b random(FALSE, TRUE)"),
        c(
            "set number of args mismatch",
            1,
            vec![r"unexpected number of arguments"],
            r"\set d ln(1.0, 2.0))",
        ),
        c(
            "set at least one arg",
            1,
            vec![r"at least one argument expected"],
            r"\set i greatest())",
        ),
        c("set double to int overflow", 2, vec![], r"\set i int(1E32)"),
        c(
            "set bigint add overflow",
            2,
            vec![],
            r"\set i (1<<62) + (1<<62)",
        ),
        c(
            "set bigint sub overflow",
            2,
            vec![],
            r"\set i 0 - (1<<62) - (1<<62) - (1<<62)",
        ),
        c("set bigint mul overflow", 2, vec![], r"\set i 2 * (1<<62)"),
        c(
            "set bigint div out of range",
            2,
            vec![],
            r"\set i :minint / -1",
        ),
        c("setshell not an int", 2, vec![], r"\setshell i echo -n one"),
        c(
            "setshell missing arg",
            1,
            vec![r"missing argument "],
            r"\setshell var",
        ),
        c(
            "setshell no such command",
            2,
            vec![],
            r"\setshell var no-such-command",
        ),
        c(
            "sleep undefined variable",
            2,
            vec![],
            r"\sleep :nosuchvariable",
        ),
        c(
            "sleep too many args",
            1,
            vec![r"too many arguments"],
            r"\sleep too many args",
        ),
        c(
            "sleep missing arg",
            1,
            vec![r"missing argument", r"\\sleep"],
            r"\sleep",
        ),
        c(
            "sleep unknown unit",
            1,
            vec![r"unrecognized time unit"],
            r"\sleep 1 week",
        ),
        c(
            "misc invalid backslash command",
            1,
            vec![r#"invalid command .* "nosuchcommand""#],
            r"\nosuchcommand",
        ),
        c(
            "misc empty script",
            1,
            vec![r"empty command list for script"],
            "",
        ),
        c("bad boolean", 2, vec![], r"\set b :badtrue or true"),
        c("invalid permute size", 2, vec![], r"\set i permute(0, 0)"),
        c("gset no row", 2, vec![], r"SELECT WHERE FALSE \gset"),
        c(
            "gset alone",
            1,
            vec![r"gset must follow an SQL command"],
            r"\gset",
        ),
        c(
            "gset no SQL",
            1,
            vec![r"gset must follow an SQL command"],
            "\\set i +1\n\\gset",
        ),
        c(
            "gset too many arguments",
            1,
            vec![r"too many arguments"],
            r"SELECT 1 \gset a b",
        ),
        c(
            "gset after gset",
            1,
            vec![r"gset must follow an SQL command"],
            "SELECT 1 AS i \\gset\n\\gset",
        ),
        c(
            "gset non SELECT",
            2,
            vec![],
            r"DROP TABLE IF EXISTS no_such_table \gset",
        ),
        c("gset bad default name", 2, vec![], r"SELECT 1 \gset"),
        c(
            "gset bad name",
            2,
            vec![],
            r#"SELECT 1 AS "bad name!" \gset"#,
        ),
        // 002
        c(
            "missing endif",
            1,
            vec![r"\\if without matching \\endif"],
            r"\if 1",
        ),
        c(
            "missing if on elif",
            1,
            vec![r"\\elif without matching \\if"],
            r"\elif 1",
        ),
        c(
            "missing if on else",
            1,
            vec![r"\\else without matching \\if"],
            r"\else",
        ),
        c(
            "missing if on endif",
            1,
            vec![r"\\endif without matching \\if"],
            r"\endif",
        ),
        c(
            "elif after else",
            1,
            vec![r"\\elif after \\else"],
            "\\if 1\n\\else\n\\elif 0\n\\endif",
        ),
        c(
            "else after else",
            1,
            vec![r"\\else after \\else"],
            "\\if 1\n\\else\n\\else\n\\endif",
        ),
        c(
            "if syntax error",
            1,
            vec![r#"syntax error in command "if""#],
            "\\if\n\\endif\n",
        ),
        c(
            "elif syntax error",
            1,
            vec![r#"syntax error in command "elif""#],
            "\\if 0\n\\elif +\n\\endif\n",
        ),
        c(
            "else syntax error",
            1,
            vec![r#"unexpected argument in command "else""#],
            "\\if 0\n\\else BAD\n\\endif\n",
        ),
        c(
            "endif syntax error",
            1,
            vec![r#"unexpected argument in command "endif""#],
            "\\if 0\n\\endif BAD\n",
        ),
        c(
            "not enough arguments for least",
            1,
            vec![r"at least one argument expected \(least\)"],
            "\\set i least()\n",
        ),
        c(
            "not enough arguments for greatest",
            1,
            vec![r"at least one argument expected \(greatest\)"],
            "\\set i greatest()\n",
        ),
        c(
            "not enough arguments for hash",
            1,
            vec![r"unexpected number of arguments \(hash\)"],
            "\\set i hash()\n",
        ),
        c(
            "too many arguments for hash",
            1,
            vec![r"unexpected number of arguments \(hash\)"],
            "\\set i hash(1,2,3)\n",
        ),
        c(
            "bigint overflow 1",
            1,
            vec![r"bigint constant overflow"],
            "\\set i 100000000000000000000\n",
        ),
        c(
            "double overflow 2",
            1,
            vec![r"double constant overflow"],
            "\\set d 1.0E309\n",
        ),
        c(
            "double overflow 3",
            1,
            vec![r"double constant overflow"],
            "\\set d .1E310\n",
        ),
        c(
            "set i",
            1,
            vec![r"set i 1 ", r"\^ error found here"],
            "\\set i 1 +\n",
        ),
        c(
            "not enough arguments to permute",
            1,
            vec![r"unexpected number of arguments \(permute\)"],
            "\\set i permute(1)\n",
        ),
        c(
            "too many arguments to permute",
            1,
            vec![r"unexpected number of arguments \(permute\)"],
            "\\set i permute(1, 2, 3, 4)\n",
        ),
    ]
}

#[test]
fn pgbench_s_script_cases_fail_where_pgbench_fails_with_its_words() {
    let mut wrong = Vec::new();
    for (name, status, res, script) in cases() {
        match (status, compile(&script)) {
            (1, Ok(_)) => wrong.push(format!("{name}: compiles; pgbench refuses it")),
            (1, Err(e)) => {
                for r in res {
                    if !Regex::new(r).unwrap().is_match(&e) {
                        wrong.push(format!("{name}: /{r}/ does not match:\n{e}"));
                    }
                }
            }
            (_, Err(e)) => wrong.push(format!("{name}: refused, pgbench runs it: {e}")),
            (_, Ok(_)) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn sql_too_many_args_in_prepared_mode() {
    use crate::script::ScriptSet;
    use sut::QueryMode;
    let script = |n: usize| {
        format!(
            "-- MAX_ARGS=256 for prepared\n\\set i 0\nSELECT LEAST({})",
            vec![":i"; n].join(", ")
        )
    };
    let mut set = ScriptSet::new();
    set.add_file("t.sql", &script(256), 1).unwrap();
    let e = set.check_pgbench_params(QueryMode::Prepared).unwrap_err();
    assert!(
        Regex::new(r"statement has too many arguments.*\b255\b")
            .unwrap()
            .is_match(&e),
        "{e}"
    );
    assert!(e.starts_with("statement has too many arguments (maximum is 255): SELECT LEAST(:i, "));
    assert!(set.check_pgbench_params(QueryMode::Extended).is_err());
    assert_eq!(set.check_pgbench_params(QueryMode::Simple), Ok(()));
    let mut set = ScriptSet::new();
    set.add_file("t.sql", &script(255), 1).unwrap();
    assert_eq!(set.check_pgbench_params(QueryMode::Prepared), Ok(()));
}
