//! Execution of `\if` / `\elif` / `\else` / `\endif` and which commands get timed.

use super::{compile, run, vars_for};
use crate::random::Rng;
use crate::script::exec::{Action, Interp};

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
