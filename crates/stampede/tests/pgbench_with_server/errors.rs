//! 001's table of script errors ("trigger many expression errors"): each script run once with
//! the same `-D` variables in prepared mode. Status 1 is an error found before connecting (empty
//! standard output), status 2 one found while running (`processed: 0/1`).

use crate::node::Node;
use crate::tap::{qr, qr_flags, Check};

/// [ test name, expected status, expected stderr, script ]
fn errors() -> Vec<(&'static str, i32, Vec<Check>, String)> {
    let e = |name, status, re: Vec<Check>, script: &str| (name, status, re, script.to_string());
    vec![
        // SQL
        e(
            "sql syntax error",
            2,
            vec![
                qr(r"ERROR:  syntax error"),
                qr(r"prepared statement .* does not exist"),
            ],
            "-- SQL syntax error\n    SELECT 1 + ;\n",
        ),
        e(
            "sql too many args",
            1,
            vec![qr(r"statement has too many arguments.*\b255\b")],
            &format!(
                "-- MAX_ARGS=256 for prepared\n\\set i 0\nSELECT LEAST({})",
                vec![":i"; 256].join(", ")
            ),
        ),
        // SHELL
        e(
            "shell bad command",
            2,
            vec![qr(r"\(shell\) .* meta-command failed")],
            r"\shell no-such-command",
        ),
        e(
            "shell undefined variable",
            2,
            vec![qr(r#"undefined variable ":nosuchvariable""#)],
            "-- undefined variable in shell\n\\shell echo ::foo :nosuchvariable\n",
        ),
        e(
            "shell missing command",
            1,
            vec![qr(r"missing command ")],
            r"\shell",
        ),
        e(
            "shell too many args",
            1,
            vec![qr(r#"too many arguments in command "shell""#)],
            &format!(
                "-- 256 arguments to \\shell\n\\shell echo {}",
                vec!["arg"; 255].join(" ")
            ),
        ),
        // SET
        e(
            "set syntax error",
            1,
            vec![qr(r#"syntax error in command "set""#)],
            r"\set i 1 +",
        ),
        e(
            "set no such function",
            1,
            vec![qr(r"unexpected function name")],
            r"\set i noSuchFunction()",
        ),
        e(
            "set invalid variable name",
            2,
            vec![qr(r"invalid variable name")],
            r"\set . 1",
        ),
        e(
            "set division by zero",
            2,
            vec![qr(r"division by zero")],
            r"\set i 1/0",
        ),
        e(
            "set undefined variable",
            2,
            vec![qr(r#"undefined variable "nosuchvariable""#)],
            r"\set i :nosuchvariable",
        ),
        e(
            "set unexpected char",
            1,
            vec![qr(r"unexpected character .;.")],
            r"\set i ;",
        ),
        e(
            "set too many args",
            2,
            vec![qr(r"too many function arguments")],
            r"\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)",
        ),
        e(
            "set empty random range",
            2,
            vec![qr(r"empty range given to random")],
            r"\set i random(5,3)",
        ),
        e(
            "set random range too large",
            2,
            vec![qr(r"random range is too large")],
            r"\set i random(:minint, :maxint)",
        ),
        e(
            "set gaussian param too small",
            2,
            vec![qr(r"gaussian param.* at least 2")],
            r"\set i random_gaussian(0, 10, 1.0)",
        ),
        e(
            "set exponential param greater 0",
            2,
            vec![qr(r"exponential parameter must be greater ")],
            r"\set i random_exponential(0, 10, 0.0)",
        ),
        e(
            "set zipfian param to 1",
            2,
            vec![qr(r"zipfian parameter must be in range \[1\.001, 1000\]")],
            r"\set i random_zipfian(0, 10, 1)",
        ),
        e(
            "set zipfian param too large",
            2,
            vec![qr(r"zipfian parameter must be in range \[1\.001, 1000\]")],
            r"\set i random_zipfian(0, 10, 1000000)",
        ),
        e(
            "set non numeric value",
            2,
            vec![qr(r#"malformed variable "foo" value: "bla""#)],
            r"\set i :foo + 1",
        ),
        e("set no expression", 1, vec![qr(r"syntax error")], r"\set i"),
        e(
            "set missing argument",
            1,
            vec![qr_flags(r"missing argument", "i")],
            r"\set",
        ),
        e(
            "set not a bool",
            2,
            vec![qr(r"cannot coerce double to boolean")],
            r"\set b NOT 0.0",
        ),
        e(
            "set not an int",
            2,
            vec![qr(r"cannot coerce boolean to int")],
            r"\set i TRUE + 2",
        ),
        e(
            "set not a double",
            2,
            vec![qr(r"cannot coerce boolean to double")],
            r"\set d ln(TRUE)",
        ),
        e(
            "set case error",
            1,
            vec![qr(r#"syntax error in command "set""#)],
            r"\set i CASE TRUE THEN 1 ELSE 0 END",
        ),
        e(
            "set random error",
            2,
            vec![qr(r"cannot coerce boolean to int")],
            r"\set b random(FALSE, TRUE)",
        ),
        e(
            "set number of args mismatch",
            1,
            vec![qr(r"unexpected number of arguments")],
            r"\set d ln(1.0, 2.0))",
        ),
        e(
            "set at least one arg",
            1,
            vec![qr(r"at least one argument expected")],
            r"\set i greatest())",
        ),
        // SET: ARITHMETIC OVERFLOW DETECTION
        e(
            "set double to int overflow",
            2,
            vec![qr(r"double to int overflow for 100")],
            r"\set i int(1E32)",
        ),
        e(
            "set bigint add overflow",
            2,
            vec![qr(r"int add out")],
            r"\set i (1<<62) + (1<<62)",
        ),
        e(
            "set bigint sub overflow",
            2,
            vec![qr(r"int sub out")],
            r"\set i 0 - (1<<62) - (1<<62) - (1<<62)",
        ),
        e(
            "set bigint mul overflow",
            2,
            vec![qr(r"int mul out")],
            r"\set i 2 * (1<<62)",
        ),
        e(
            "set bigint div out of range",
            2,
            vec![qr(r"bigint div out of range")],
            r"\set i :minint / -1",
        ),
        // SETSHELL
        e(
            "setshell not an int",
            2,
            vec![qr(r"command must return an integer")],
            r"\setshell i echo -n one",
        ),
        e(
            "setshell missing arg",
            1,
            vec![qr(r"missing argument ")],
            r"\setshell var",
        ),
        e(
            "setshell no such command",
            2,
            vec![qr(r"could not read result ")],
            r"\setshell var no-such-command",
        ),
        // SLEEP
        e(
            "sleep undefined variable",
            2,
            vec![qr(r"sleep: undefined variable")],
            r"\sleep :nosuchvariable",
        ),
        e(
            "sleep too many args",
            1,
            vec![qr(r"too many arguments")],
            r"\sleep too many args",
        ),
        e(
            "sleep missing arg",
            1,
            vec![qr(r"missing argument"), qr(r"\\sleep")],
            r"\sleep",
        ),
        e(
            "sleep unknown unit",
            1,
            vec![qr(r"unrecognized time unit")],
            r"\sleep 1 week",
        ),
        // MISC
        e(
            "misc invalid backslash command",
            1,
            vec![qr(r#"invalid command .* "nosuchcommand""#)],
            r"\nosuchcommand",
        ),
        e(
            "misc empty script",
            1,
            vec![qr(r"empty command list for script")],
            "",
        ),
        e(
            "bad boolean",
            2,
            vec![qr(r"malformed variable.*trueXXX")],
            r"\set b :badtrue or true",
        ),
        e(
            "invalid permute size",
            2,
            vec![qr(r"permute size parameter must be greater than zero")],
            r"\set i permute(0, 0)",
        ),
        // GSET
        e(
            "gset no row",
            2,
            vec![qr(r"expected one row, got 0\b")],
            r"SELECT WHERE FALSE \gset",
        ),
        e(
            "gset alone",
            1,
            vec![qr(r"gset must follow an SQL command")],
            r"\gset",
        ),
        e(
            "gset no SQL",
            1,
            vec![qr(r"gset must follow an SQL command")],
            "\\set i +1\n\\gset",
        ),
        e(
            "gset too many arguments",
            1,
            vec![qr(r"too many arguments")],
            r"SELECT 1 \gset a b",
        ),
        e(
            "gset after gset",
            1,
            vec![qr(r"gset must follow an SQL command")],
            "SELECT 1 AS i \\gset\n\\gset",
        ),
        e(
            "gset non SELECT",
            2,
            vec![qr(r"expected one row, got 0")],
            r"DROP TABLE IF EXISTS no_such_table \gset",
        ),
        e(
            "gset bad default name",
            2,
            vec![qr(r"error storing into variable \?column\?")],
            r"SELECT 1 \gset",
        ),
        e(
            "gset bad name",
            2,
            vec![qr(r"error storing into variable bad name!")],
            r#"SELECT 1 AS "bad name!" \gset"#,
        ),
    ]
}

pub fn run(n: &mut Node) {
    for (name, status, re, script) in errors() {
        assert_ne!(status, 0, "invalid expected status for test \"{name}\"");
        let fname = format!("001_pgbench_error_{name}").replace(' ', "_");
        let fname: &'static str = Box::leak(fname.into_boxed_str());
        let stdout = if status == 1 {
            qr(r"^$")
        } else {
            qr(r"processed: 0/1")
        };
        n.pgbench(
            "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 -Dbadtrue=trueXXX -Dmaxint=9223372036854775807 -Dminint=-9223372036854775808 -M prepared",
            status,
            &[stdout],
            &re,
            &format!("pgbench script error: {name}"),
            &[(fname, script)],
            &[],
        );
    }
}
