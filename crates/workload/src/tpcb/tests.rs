use super::*;

/// `pgbench --show-script=NAME` of PostgreSQL 15.18, verbatim.
const PGBENCH_TPCB: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";
const PGBENCH_SIMPLE: &str = r"\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";
const PGBENCH_SELECT: &str = r"\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
";

fn joined(b: Builtin) -> String {
    b.script().iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn scripts_are_pgbench_verbatim() {
    assert_eq!(joined(Builtin::TpcbLike), PGBENCH_TPCB);
    assert_eq!(joined(Builtin::SimpleUpdate), PGBENCH_SIMPLE);
    assert_eq!(joined(Builtin::SelectOnly), PGBENCH_SELECT);
}

/// If pgbench is installed, compare with its own `--show-script` output too.
#[test]
fn scripts_match_installed_pgbench() {
    let bin = std::path::Path::new("/usr/lib/postgresql/15/bin/pgbench");
    if !bin.exists() {
        return;
    }
    for b in Builtin::PGBENCH {
        let out = std::process::Command::new(bin)
            .arg(format!("--show-script={}", b.name()))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        let header = format!("-- {}: {}\n", b.name(), b.description());
        let body = text
            .strip_prefix(&header)
            .unwrap_or_else(|| panic!("header of {b}: {text}"));
        assert_eq!(body.trim_end(), joined(b).trim_end(), "{b}");
    }
}

#[test]
fn mysql_commits_where_pgbench_ends() {
    let my: Vec<&str> = Builtin::TpcbLike.lines(Dialect::MySql).collect();
    let pg: Vec<&str> = Builtin::TpcbLike.lines(Dialect::Postgres).collect();
    assert_eq!(pg, Builtin::TpcbLike.script());
    assert_eq!(my.last(), Some(&"COMMIT;"));
    assert_eq!(my[..my.len() - 1], pg[..pg.len() - 1]);
    let w = TpcbWorkload::new_in(vec![(Builtin::SimpleUpdate, 1)], 1, Dialect::MySql);
    assert_eq!(w.txn_types()[0].statements.last().unwrap(), "COMMIT;");
    let sel: Vec<&str> = Builtin::SelectOnly.lines(Dialect::MySql).collect();
    assert_eq!(sel, Builtin::SelectOnly.script());
}

#[test]
fn statements_become_dollar_parameters_in_order() {
    let (sql, p) = to_dollar_params(UPDATE_ACCOUNTS);
    assert_eq!(
        sql,
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"
    );
    assert_eq!(p, vec![Var::Delta, Var::Aid]);
    let (sql, p) = to_dollar_params(INSERT_HISTORY);
    assert_eq!(
        sql,
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);"
    );
    assert_eq!(p, vec![Var::Tid, Var::Bid, Var::Aid, Var::Delta]);
    assert_eq!(to_dollar_params("BEGIN;"), ("BEGIN;".to_string(), vec![]));
    assert_eq!(
        to_dollar_params("SELECT '1'::int, :x").0,
        "SELECT '1'::int, :x"
    );
}

#[test]
fn random_ranges_scale() {
    let lines = compile(Builtin::TpcbLike, 7, Dialect::Postgres);
    let sets: Vec<(Var, i64, i64)> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Set { var, lo, hi } => Some((*var, *lo, *hi)),
            _ => None,
        })
        .collect();
    assert_eq!(
        sets,
        vec![
            (Var::Aid, 1, 700_000),
            (Var::Bid, 1, 7),
            (Var::Tid, 1, 70),
            (Var::Delta, -5000, 5000)
        ]
    );
}

#[test]
fn builtin_lookup_is_pgbench_prefix_matching() {
    assert_eq!(builtin("tpcb-like"), Ok(Builtin::TpcbLike));
    assert_eq!(builtin("tpcb"), Ok(Builtin::TpcbLike));
    assert_eq!(builtin("t"), Ok(Builtin::TpcbLike));
    assert_eq!(builtin("select"), Ok(Builtin::SelectOnly));
    assert_eq!(builtin("simple"), Ok(Builtin::SimpleUpdate));
    assert_eq!(
        builtin("tpcb-like-pipelined"),
        Ok(Builtin::TpcbLikePipelined)
    );
    assert_eq!(builtin("tpcb-like-p"), Ok(Builtin::TpcbLikePipelined));
    let e = builtin("s").unwrap_err();
    assert!(matches!(&e, BuiltinError::Ambiguous { matches, .. } if matches.len() == 2));
    let msg = e.to_string();
    assert!(msg.starts_with("ambiguous builtin name: 2 builtin scripts found for prefix \"s\""));
    assert!(msg.contains("select-only: <builtin: select only>"), "{msg}");
    assert!(matches!(builtin("nope"), Err(BuiltinError::NotFound(_))));
}

#[test]
fn weights_parse_as_pgbench() {
    assert_eq!(parse_weighted("select@5"), Ok((Builtin::SelectOnly, 5)));
    assert_eq!(parse_weighted("tpcb"), Ok((Builtin::TpcbLike, 1)));
    assert_eq!(parse_weighted("tpcb@0"), Ok((Builtin::TpcbLike, 0)));
    assert!(matches!(
        parse_weighted("tpcb@x"),
        Err(BuiltinError::Weight(_))
    ));
    assert!(matches!(
        parse_weighted("tpcb@-1"),
        Err(BuiltinError::Weight(_))
    ));
}

#[test]
fn workload_lists_every_script_line_and_validates_modes() {
    let w = TpcbWorkload::new(vec![(Builtin::TpcbLike, 1), (Builtin::SelectOnly, 3)], 1);
    assert_eq!(w.txn_types()[0].name, "<builtin: TPC-B (sort of)>");
    assert_eq!(w.txn_types()[0].statements.len(), 11);
    assert_eq!(w.txn_types()[1].statements, vec![SET_AID, SELECT_ACCOUNT]);
    assert_eq!(w.weights(), vec![1, 3]);
    assert!(w.validate(QueryMode::Simple).is_ok());
    let p = TpcbWorkload::new(vec![(Builtin::TpcbLikePipelined, 1)], 1);
    assert!(p.validate(QueryMode::Simple).is_err());
    assert!(p.validate(QueryMode::Prepared).is_ok());
}
