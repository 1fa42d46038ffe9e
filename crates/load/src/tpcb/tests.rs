use std::ops::Range;

use super::*;
use crate::driver::{RowSource, TaskKind};

fn rows_of(src: &dyn RowSource, r: Range<u64>) -> String {
    let mut out = Vec::new();
    for i in r {
        src.write_row(i, &mut out);
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn rows_are_pgbench_rows() {
    assert_eq!(rows_of(&Branches, 0..2), "1\t0\t\\N\n2\t0\t\\N\n");
    assert_eq!(rows_of(&Tellers, 9..11), "10\t1\t0\t\\N\n11\t2\t0\t\\N\n");
    assert_eq!(
        rows_of(&Accounts, 99_999..100_001),
        "100000\t1\t0\t\n100001\t2\t0\t\n"
    );
}

#[test]
fn create_statements_match_pgbench() {
    let opts = InitOptions::default();
    assert_eq!(
        create_sql(&opts, 150000),
        vec![
            "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
            "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
            "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
            "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
        ]
    );
    let big = InitOptions {
        scale: 20_000,
        unlogged: true,
        fillfactor: 90,
        ..Default::default()
    };
    let sql = create_sql(&big, 150000);
    assert!(sql[0].starts_with("create unlogged table pgbench_history("));
    assert!(sql[0].contains("aid bigint"));
    assert!(sql[2].contains("aid bigint not null"));
    assert!(sql[2].ends_with("with (fillfactor=90)"));
}

#[test]
fn partitions_match_pgbench_bounds() {
    let opts = InitOptions {
        partitions: 3,
        ..Default::default()
    };
    let sql = create_sql(&opts, 150000);
    assert_eq!(sql[2], "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid)");
    assert_eq!(sql[4], "create table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values from (minvalue) to (33335) with (fillfactor=100)");
    assert_eq!(sql[5], "create table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values from (33335) to (66669) with (fillfactor=100)");
    assert_eq!(sql[6], "create table pgbench_accounts_3\n  partition of pgbench_accounts\n  for values from (66669) to (maxvalue) with (fillfactor=100)");
    assert_eq!(range_partition_rows(1, 3, 100_000), 0..33_334);
    assert_eq!(range_partition_rows(2, 3, 100_000), 33_334..66_668);
    assert_eq!(range_partition_rows(3, 3, 100_000), 66_668..100_000);
    // aid = row + 1: partition 2 holds aids 33335..=66668, i.e. [33335, 66669).

    let hash = InitOptions {
        partitions: 2,
        partition_method: Some(PartitionMethod::Hash),
        unlogged: true,
        ..Default::default()
    };
    let sql = create_sql(&hash, 150000);
    assert!(sql[2].starts_with("create unlogged table pgbench_accounts("));
    assert!(sql[2].ends_with("partition by hash (aid)"));
    assert_eq!(sql[5], "create unlogged table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values with (modulus 2, remainder 1) with (fillfactor=100)");
    // PostgreSQL 18 rejects UNLOGGED on the partitioned parent; pgbench 18 then creates all four
    // tables logged (a logged table's foreign key cannot reference an unlogged one) and only
    // the partitions unlogged.
    let v18 = create_sql(&hash, 180000);
    for t in &v18[..4] {
        assert!(t.starts_with("create table "), "{t}");
    }
    assert!(v18[5].starts_with("create unlogged table pgbench_accounts_2\n"));
}

#[test]
fn range_partition_rows_cover_everything_once() {
    for (parts, total) in [(1u64, 100_000u64), (7, 300_000), (64, 100_000), (3, 10)] {
        let mut next = 0;
        for p in 1..=parts {
            let r = range_partition_rows(p, parts, total);
            assert_eq!(r.start, next.min(total));
            next = r.end.max(next);
        }
        assert_eq!(next, total);
    }
}

#[test]
fn split_rows_is_exact() {
    assert_eq!(split_rows(10, 3), vec![0..3, 3..6, 6..10]);
    assert_eq!(split_rows(2, 5), vec![0..1, 1..2]);
    let r = split_rows(100_000 * 7, 4);
    assert_eq!(r.iter().map(|r| r.end - r.start).sum::<u64>(), 700_000);
}

/// A fleet's parts of `init tpcb` (client side, plain, range and hash partitions; server
/// side): together every account once; branches and tellers from the first part only; FREEZE
/// only on a range partition that lies wholly inside one part.
#[test]
fn parts_together_load_every_row_once() {
    for (partitions, method, generate) in [
        (0, None, Generate::ClientSide),
        (4, Some(PartitionMethod::Range), Generate::ClientSide),
        (3, Some(PartitionMethod::Hash), Generate::ClientSide),
        (0, None, Generate::ServerSide),
    ] {
        let count = 3;
        let mut accounts: Vec<Range<u64>> = Vec::new();
        let mut small = 0;
        for index in 0..count {
            let opts = InitOptions {
                scale: 2,
                partitions,
                partition_method: method,
                generate,
                jobs: 2,
                part: Some(Part { index, count }),
                ..Default::default()
            };
            let tasks = match generate {
                Generate::ClientSide => client_side_tasks(&opts).0,
                Generate::ServerSide => server_side_tasks(&opts).0,
            };
            for t in tasks {
                match t.kind {
                    TaskKind::Copy {
                        relation,
                        rows,
                        whole,
                        ..
                    } if relation.starts_with("pgbench_accounts") => {
                        if whole {
                            let p: u64 = relation.rsplit('_').next().unwrap().parse().unwrap();
                            assert_eq!(rows, range_partition_rows(p, 4, 200_000));
                        }
                        accounts.push(rows);
                    }
                    TaskKind::Copy { .. } => small += 1,
                    TaskKind::Sql { sql, rows } => {
                        if sql.contains("pgbench_accounts") {
                            // "... generate_series(lo + 1, hi)"
                            let args = sql.rsplit("generate_series(").next().unwrap();
                            let (lo, hi) = args.split_once(", ").unwrap();
                            let hi = hi.split(')').next().unwrap();
                            let lo: u64 = lo.parse().unwrap();
                            accounts.push(lo - 1..hi.parse().unwrap());
                        } else {
                            assert_eq!(index, 0, "{sql}");
                            small += rows.len();
                        }
                    }
                }
            }
        }
        assert_eq!(small, 2, "branches and tellers once, by the first part");
        accounts.sort_by_key(|r| r.start);
        let mut next = 0;
        for r in &accounts {
            assert_eq!(r.start, next, "{accounts:?}");
            next = r.end;
        }
        assert_eq!(next, 200_000);
    }
}

#[test]
fn options_are_validated_like_pgbench() {
    let bad = |o: InitOptions| o.validate().unwrap_err().to_string();
    assert!(bad(InitOptions {
        scale: 0,
        ..Default::default()
    })
    .contains("invalid scaling factor"));
    assert!(bad(InitOptions {
        fillfactor: 9,
        ..Default::default()
    })
    .contains("invalid fillfactor"));
    assert!(bad(InitOptions {
        partition_method: Some(PartitionMethod::Hash),
        ..Default::default()
    })
    .contains("requires greater than zero --partitions"));
    assert!(InitOptions::default().validate().is_ok());
}

#[test]
fn plans() {
    let one = client_side_tasks(&InitOptions::default());
    assert_eq!(one.0.len(), 3);
    assert!(matches!(one.0[0].kind, TaskKind::Copy { whole: true, .. }));
    let par = client_side_tasks(&InitOptions {
        jobs: 4,
        ..Default::default()
    });
    assert_eq!(par.0.len(), 6);
    assert!(matches!(par.0[0].kind, TaskKind::Copy { whole: false, .. }));
    let ranged = client_side_tasks(&InitOptions {
        partitions: 3,
        jobs: 2,
        ..Default::default()
    });
    assert_eq!(ranged.0.len(), 5);
    match &ranged.0[1].kind {
        TaskKind::Copy {
            relation,
            whole,
            rows,
            ..
        } => {
            assert_eq!(relation, "pgbench_accounts_2");
            assert!(*whole);
            assert_eq!(*rows, 33_334..66_668);
        }
        _ => panic!(),
    }
    let server = server_side_tasks(&InitOptions {
        scale: 3,
        jobs: 2,
        ..Default::default()
    });
    assert_eq!(server.0.len(), 4);
}

#[test]
fn mysql_tables_have_their_keys_inline_and_refuse_postgresql_options() {
    let opts = InitOptions::default();
    let sql = create_sql_mysql(&opts);
    assert_eq!(sql.len(), 4);
    assert!(sql[2].starts_with("create table pgbench_accounts(aid int not null,"));
    assert!(
        sql[2].ends_with("primary key (aid)) engine=InnoDB"),
        "{}",
        sql[2]
    );
    assert!(!sql[0].contains("primary key"), "pgbench_history has none");
    assert!(sql[0].contains("mtime datetime"));
    let big = InitOptions {
        scale: 20_000,
        ..Default::default()
    };
    assert!(create_sql_mysql(&big)[2].contains("aid bigint not null"));
    assert!(create_sql_mysql(&big)[0].contains("aid bigint,"));

    assert!(opts.validate_for(Dialect::MySql).is_ok());
    let bad = InitOptions {
        unlogged: true,
        fillfactor: 90,
        partitions: 2,
        tablespace: Some("t".into()),
        index_tablespace: Some("i".into()),
        generate: Generate::ServerSide,
        ..Default::default()
    };
    assert!(bad.validate_for(Dialect::Postgres).is_ok());
    let e = bad.validate_for(Dialect::MySql).unwrap_err().to_string();
    for opt in [
        "--unlogged-tables",
        "-F/--fillfactor",
        "--partitions",
        "--tablespace",
        "--index-tablespace",
        "--server-side",
    ] {
        assert!(e.contains(opt), "{opt}: {e}");
    }
}
