//! SQL commands: splitting like psqlscan, statement texts, variables as parameters or text.

use super::{compile, run, vars_for};
use crate::random::Rng;
use crate::script::exec::{params, simple_sql, simple_sql_in, Action, Param};
use crate::script::parse::{CommandKind, Script};
use crate::script::vars::{Symbols, Value};
use sut::Dialect;

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
    // MySQL: identifiers in backticks; a literal with a backslash as hex, which means the same
    // with or without NO_BACKSLASH_ESCAPES.
    v.set_text(sy.get("d").unwrap(), "Col`1");
    simple_sql_in(q, &mut v, &mut out, Dialect::MySql);
    assert_eq!(
        out,
        "SELECT 5, 5::int, 'x:b', _utf8mb4 X'615C62', `Col``1`, a::text, :1, :, :e_1\n"
    );
    v.set_text(sy.get("c").unwrap(), "it's");
    simple_sql_in(q, &mut v, &mut out, Dialect::MySql);
    assert!(out.contains(", 'it''s', "), "{out}");
    v.set_text(sy.get("c").unwrap(), "a\\b");
    v.set_text(sy.get("d").unwrap(), "Col\"1");

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
