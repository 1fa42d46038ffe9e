//! Unit tests of the script language without a server. The values pgbench itself computes are
//! checked against pgbench in `tests/script_vs_pgbench.rs`.

mod conditionals;
mod errors;
mod expressions;
mod meta_commands;
mod pgbench_tap;
mod read_only;
mod sql;

use super::exec::{Action, Interp, NoTimer};
use super::parse::Script;
use super::vars::{Symbols, Value, Vars, CLIENT_ID, DEFAULT_SEED, RANDOM_SEED, SCALE};
use crate::random::Rng;

fn compile(text: &str) -> (Script, Symbols) {
    let mut sy = Symbols::new();
    let s = Script::parse("t.sql", text, &mut sy).unwrap_or_else(|e| panic!("{e}"));
    (s, sy)
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
