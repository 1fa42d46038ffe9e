use super::*;

#[test]
fn comment_round_trips_and_foreign_text_is_none() {
    let c = NuC {
        last: 157,
        customer_id: 1000,
        item_id: 8191,
    };
    let sql = comment_sql(&c, 42, "2026-11-27 03:04:05");
    assert_eq!(
        sql,
        "COMMENT ON TABLE customer IS 'stampede tpcc: c_last_c=157 c_id_c=1000 ol_i_id_c=8191 seed=42 loaded=2026-11-27T03:04:05'"
    );
    let text = sql.split('\'').nth(1).unwrap();
    assert_eq!(parse_comment(text), Some(c));
    assert_eq!(
        parse_load_time(text).as_deref(),
        Some("2026-11-27 03:04:05")
    );
    // A comment of a load that did not record its time still gives the constants.
    let older = "stampede tpcc: c_last_c=157 c_id_c=1000 ol_i_id_c=8191 seed=42";
    assert_eq!(parse_comment(older), Some(c));
    assert_eq!(parse_load_time(older), None);
    assert_eq!(parse_comment("customers of go-tpc"), None);
    assert_eq!(parse_comment("stampede tpcc: c_last_c=1"), None);
    assert_eq!(
        parse_comment("stampede tpcc: c_last_c=x c_id_c=1 ol_i_id_c=2"),
        None
    );
}

fn units(tasks: &[Task], table: Table) -> (Vec<Range<u64>>, bool) {
    let mut r = Vec::new();
    let mut all_whole = true;
    for t in tasks {
        if let TaskKind::Copy {
            relation,
            rows,
            whole,
            ..
        } = &t.kind
        {
            if relation == table.name() {
                r.push(rows.clone());
                all_whole &= *whole;
            }
        }
    }
    r.sort_by_key(|r| r.start);
    (r, all_whole)
}

#[test]
fn plans_cover_every_row_once() {
    let g = Arc::new(Generator::new(0, "2024-01-01 00:00:00"));
    for (warehouses, jobs) in [(1, 1), (1, 4), (2, 2), (100, 2), (100, 1), (7, 16)] {
        let opts = InitOptions {
            warehouses,
            jobs,
            ..Default::default()
        };
        let (tasks, plan) = copy_tasks(&opts, &g, Dialect::Postgres);
        for t in Table::ALL {
            let (ranges, whole) = units(&tasks, t);
            let total = t
                .per_warehouse()
                .map_or(ITEMS as u64, |n| n * warehouses as u64);
            let mut next = 0;
            for r in &ranges {
                assert_eq!(r.start, next, "{t:?} {warehouses}/{jobs}: {ranges:?}");
                next = r.end;
            }
            assert_eq!(next, total, "{t:?}");
            assert_eq!(whole, ranges.len() == 1, "{t:?}");
            if jobs == 1 {
                assert_eq!(ranges.len(), 1, "{plan}");
            }
        }
        // The last task is the warehouse table.
        assert!(matches!(
            &tasks.last().unwrap().kind,
            TaskKind::Copy { relation, .. } if relation == "warehouse"
        ));
    }
    // 100 warehouses on 2 connections: the big tables are cut, the small keep FREEZE.
    let opts = InitOptions {
        warehouses: 100,
        jobs: 2,
        ..Default::default()
    };
    let (tasks, plan) = copy_tasks(&opts, &g, Dialect::Postgres);
    assert!(units(&tasks, Table::Stock).0.len() > 1, "{plan}");
    assert!(units(&tasks, Table::OrderLine).0.len() > 1, "{plan}");
    assert!(units(&tasks, Table::District).1, "{plan}");
}

/// A fleet's parts (`init tpcc --fleet`): together every row once, each part's rows in
/// its own warehouses, no FREEZE on a shared table, `item` loaded by the first part only.
#[test]
fn parts_together_cover_every_row_once() {
    let g = Arc::new(Generator::new(0, "2024-01-01 00:00:00"));
    for (warehouses, count, jobs) in [(10, 3, 2), (2, 3, 1), (7, 2, 4), (1, 1, 1)] {
        let mut all: Vec<Vec<Range<u64>>> = vec![Vec::new(); Table::ALL.len()];
        for index in 0..count {
            let opts = InitOptions {
                warehouses,
                jobs,
                part: Some(Part { index, count }),
                ..Default::default()
            };
            let (tasks, _) = copy_tasks(&opts, &g, Dialect::Postgres);
            let mine = opts.mine();
            for t in Table::ALL {
                let (ranges, whole) = units(&tasks, t);
                match t.per_warehouse() {
                    Some(n) => {
                        assert!(ranges
                            .iter()
                            .all(|r| r.start >= mine.start * n && r.end <= mine.end * n));
                        assert!(
                            ranges.is_empty() || !whole,
                            "{t:?}: FREEZE on a shared table"
                        );
                    }
                    None => assert_eq!(ranges.is_empty(), index != 0, "item: first part only"),
                }
                all[t as usize].extend(ranges);
            }
        }
        for t in Table::ALL {
            let ranges = &mut all[t as usize];
            ranges.sort_by_key(|r| r.start);
            let mut next = 0;
            for r in ranges.iter() {
                assert_eq!(r.start, next, "{t:?} {warehouses}/{count}: {ranges:?}");
                next = r.end;
            }
            let total = t
                .per_warehouse()
                .map_or(ITEMS as u64, |n| n * warehouses as u64);
            assert_eq!(next, total, "{t:?} {warehouses}/{count}");
        }
    }
}

/// On MySQL the same tasks load tpcc-mysql's tables: `new_orders`, INSERTs.
#[test]
fn mysql_plans_name_tpcc_mysql_s_tables() {
    let g = Arc::new(Generator::new(0, "2024-01-01 00:00:00"));
    let opts = InitOptions {
        warehouses: 100,
        jobs: 2,
        ..Default::default()
    };
    let (pg, _) = copy_tasks(&opts, &g, Dialect::Postgres);
    let (my, plan) = copy_tasks(&opts, &g, Dialect::MySql);
    assert_eq!(pg.len(), my.len());
    let relations = |tasks: &[Task]| -> Vec<String> {
        tasks
            .iter()
            .filter_map(|t| match &t.kind {
                TaskKind::Copy { relation, .. } => Some(relation.clone()),
                _ => None,
            })
            .collect()
    };
    let names = relations(&my);
    assert!(names.iter().any(|r| r == "new_orders"), "{names:?}");
    assert!(!names.iter().any(|r| r == "new_order"), "{names:?}");
    assert!(plan.contains("INSERT") && !plan.contains("COPY"), "{plan}");
    assert_eq!(Table::NewOrder.name_in(Dialect::Postgres), "new_order");
    assert_eq!(Table::Stock.name_in(Dialect::MySql), "stock");
    assert_eq!(
        comment_sql(
            &NuC {
                last: 1,
                customer_id: 2,
                item_id: 3
            },
            4,
            "2026-01-02 03:04:05"
        ),
        "COMMENT ON TABLE customer IS 'stampede tpcc: c_last_c=1 c_id_c=2 ol_i_id_c=3 seed=4 loaded=2026-01-02T03:04:05'"
    );
}

#[test]
fn invalid_options_are_named() {
    let bad = InitOptions {
        warehouses: 0,
        ..Default::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("--warehouses"));
    let bad = InitOptions {
        jobs: 0,
        ..Default::default()
    };
    assert!(bad.validate().unwrap_err().to_string().contains("--jobs"));
    InitOptions::default().validate().unwrap();
}
