//! Meta-commands: parsing, `\sleep`, `\shell` / `\setshell` and `\gset` / `\aset` storage.

use super::{compile, run, vars_for};
use crate::random::Rng;
use crate::script::exec::{store_row, Action, StoreError};
use crate::script::parse::{CommandKind, ResultVars, ShellArg, SleepArg};
use crate::script::vars::Value;

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
        CommandKind::SetShell { var, args, .. } => {
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
