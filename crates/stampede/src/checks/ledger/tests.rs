use super::*;

fn tally(k: Kind, n: u64, rows: u64) -> Tally {
    let mut t = Tally::default();
    for _ in 0..n {
        t.done(k, rows / n.max(1));
    }
    t
}

fn pg_counters(statements: [i64; 7], rows: [i64; 7], tables: &[(&str, [i64; 7])]) -> Counters {
    Counters {
        statements: Ok(statements),
        statements_source: "pg_stat_statements.calls",
        rows,
        rows_source: "pg_stat_user_tables.n_tup_*",
        tables: Some(tables.iter().map(|(n, v)| (n.to_string(), *v)).collect()),
        rollbacks: Some(0),
        evicted: Some(0),
        galera: false,
        remote_tables: false,
    }
}

/// A probe run of 10 acknowledged writes and 5 reads, the server agreeing.
fn probe(writes_claimed: u64) -> (Vec<Claim>, Tally, Counters) {
    let claims = vec![
        Claim {
            kind: Kind::Insert,
            table: "stampede_probe".into(),
            statements: Some(Bounds::exact(writes_claimed)),
            rows: Some(Bounds::exact(writes_claimed)),
            from: "acknowledged writes".into(),
        },
        Claim {
            kind: Kind::Select,
            table: "stampede_probe".into(),
            statements: Some(Bounds::exact(5)),
            rows: None,
            from: "reads".into(),
        },
    ];
    let mut clients = tally(Kind::Insert, 10, 10);
    clients.merge(&tally(Kind::Select, 5, 5));
    let mut by_kind = [0; 7];
    by_kind[Kind::Insert as usize] = 10;
    by_kind[Kind::Select as usize] = 5;
    let mut rows = [0; 7];
    rows[Kind::Insert as usize] = 10;
    let server = pg_counters(by_kind, rows, &[("stampede_probe", rows)]);
    (claims, clients, server)
}

fn inputs<'a>(claims: &'a [Claim], clients: Tally, server: Counters) -> Inputs<'a> {
    Inputs {
        claims,
        clients,
        setup: Tally::default(),
        all: clients,
        in_doubt: 0,
        server: Ok(server),
        others: false,
        rows_unreported: false,
        window_functions: false,
        dialect: Dialect::Postgres,
    }
}

#[test]
fn an_idle_server_agrees_line_by_line() {
    let (claims, clients, server) = probe(10);
    let l = build(&inputs(&claims, clients, server));
    assert!(
        l.lines.iter().all(|l| l.verdict == Verdict::Exact),
        "{l:#?}"
    );
    let subjects: Vec<String> = l.lines.iter().map(|l| l.subject()).collect();
    assert_eq!(
        subjects,
        [
            "select statements",
            "insert statements",
            "rows inserted",
            "rows inserted into stampede_probe"
        ]
    );
    assert_eq!(l.status().0, report::CheckStatus::Passed);
}

#[test]
fn a_workload_that_counts_its_reads_as_writes_fails() {
    // The probe's old bug: 10 writes and 5 reads reported as 15 acknowledged writes.
    let (claims, clients, server) = probe(15);
    let l = build(&inputs(&claims, clients, server));
    let insert = (l.lines.iter())
        .find(|l| l.subject() == "insert statements")
        .expect("line");
    assert_eq!(insert.verdict, Verdict::Failed);
    assert_eq!(
        insert.detail,
        "the workload counted 15 insert statements (acknowledged writes), but its sessions sent \
         10 in its transactions"
    );
    let table = (l.lines.iter())
        .find(|l| l.table.is_some())
        .expect("table line");
    assert_eq!(table.verdict, Verdict::Failed);
    assert_eq!(l.status().0, report::CheckStatus::Failed);
}

#[test]
fn stampede_s_own_sessions_are_taken_off_and_others_make_a_surplus_inconclusive() {
    let (claims, clients, mut server) = probe(10);
    // The observer sent 7 selects, which the server counted too.
    let mut all = clients;
    all.merge(&tally(Kind::Select, 7, 7));
    if let Ok(s) = &mut server.statements {
        s[Kind::Select as usize] += 7;
    }
    let mut i = inputs(&claims, clients, server.clone());
    i.all = all;
    let l = build(&i);
    let select = &l.lines[0];
    assert_eq!((select.verdict, select.server), (Verdict::Exact, Some(5)));
    assert!(l.sources.last().unwrap().contains("sent 7 statements"));
    // Someone else's 3 selects: a surplus, inconclusive with others connected, else failed.
    if let Ok(s) = &mut server.statements {
        s[Kind::Select as usize] += 3;
    }
    i.server = Ok(server);
    i.others = true;
    assert_eq!(build(&i).lines[0].verdict, Verdict::Inconclusive);
    i.others = false;
    let l = build(&i);
    assert_eq!(l.lines[0].verdict, Verdict::Failed);
    assert_eq!(
        l.lines[0].detail,
        "the server counted 8, but the clients' sessions saw 5 complete"
    );
}

#[test]
fn mysql_counts_failed_statements_so_they_bound_the_surplus() {
    let (claims, mut clients, server) = probe(10);
    clients.failed();
    clients.failed();
    let mut my = server;
    my.statements_source = "Com_*";
    my.tables = None;
    my.rollbacks = None;
    if let Ok(s) = &mut my.statements {
        s[Kind::Insert as usize] += 2;
    }
    let mut i = inputs(&claims, clients, my);
    i.dialect = Dialect::MySql;
    let l = build(&i);
    let insert = (l.lines.iter())
        .find(|l| l.subject() == "insert statements")
        .expect("line");
    assert_eq!(insert.verdict, Verdict::Within, "{insert:#?}");
    assert!(
        insert.detail.contains("2 statements failed"),
        "{}",
        insert.detail
    );
    assert!(
        l.lines.iter().all(|l| l.table.is_none()),
        "no per-table rows on MySQL"
    );
}

#[test]
fn without_the_server_s_counters_the_lines_say_why() {
    let (claims, clients, _) = probe(10);
    let mut i = inputs(&claims, clients, Counters::default());
    i.server = Err("the server restarted after the run".into());
    let l = build(&i);
    assert!(l
        .lines
        .iter()
        .all(|l| l.verdict == Verdict::Inconclusive && l.detail.contains("restarted")));
    assert_eq!(l.status().0, report::CheckStatus::Skipped);
}

#[test]
fn claims_bound_what_failed_attempts_ran_and_merge_by_table() {
    let parts = [
        Part::one_row(Kind::Update, "pgbench_accounts"),
        Part::read("pgbench_accounts"),
        Part::one_row(Kind::Insert, "pgbench_history"),
    ];
    let mut c = claims_of(100, 2, "tpcb-like", &parts);
    c.extend(claims_of(50, 0, "simple-update", &parts));
    let c = merged(c);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].statements, Some(Bounds { min: 150, max: 152 }));
    assert_eq!(c[0].rows, Some(Bounds { min: 150, max: 152 }));
    assert_eq!(c[0].from, "tpcb-like, simple-update");
    assert_eq!(c[1].rows, None);
}

#[test]
fn a_table_pattern_sums_every_table_it_starts() {
    let claims = vec![Claim {
        kind: Kind::Update,
        table: "sbtest*".into(),
        statements: Some(Bounds::exact(4)),
        rows: Some(Bounds { min: 0, max: 4 }),
        from: "oltp_update_index".into(),
    }];
    let mut rows = [0; 7];
    rows[Kind::Update as usize] = 2;
    let server = pg_counters(
        [0, 0, 4, 0, 0, 0, 0],
        [0, 0, 3, 0, 0, 0, 0],
        &[("sbtest1", rows), ("sbtest2", [0, 0, 1, 0, 0, 0, 0])],
    );
    let clients = tally(Kind::Update, 4, 3);
    let l = build(&inputs(&claims, clients, server));
    let t = l.lines.iter().find(|l| l.table.is_some()).expect("table");
    assert_eq!((t.server, t.verdict), (Some(3), Verdict::Within));
}

#[test]
fn a_galera_cluster_leaves_write_statements_inconclusive_and_reads_exact() {
    // Every node's appliers run the writes replicated to it, in its own Com_*: the cluster's
    // sum is about one count per node, whatever the clients sent.
    let (claims, clients, server) = probe(10);
    let mut g = server;
    g.statements_source = "Com_*";
    g.tables = None;
    g.galera = true;
    if let Ok(s) = &mut g.statements {
        s[Kind::Insert as usize] *= 3;
    }
    let mut i = inputs(&claims, clients, g);
    i.dialect = Dialect::MySql;
    let l = build(&i);
    let line = |s: &str| {
        (l.lines.iter())
            .find(|l| l.subject() == s)
            .unwrap_or_else(|| panic!("no {s} line: {l:#?}"))
    };
    let insert = line("insert statements");
    assert_eq!(insert.verdict, Verdict::Inconclusive, "{insert:#?}");
    assert!(insert.detail.contains("Galera"), "{}", insert.detail);
    assert_eq!(line("select statements").verdict, Verdict::Exact);
    assert!(!l.status().0.untrusted(), "{:?}", l.status());
}

#[test]
fn rows_on_foreign_or_distributed_tables_are_inconclusive_not_failed() {
    // A postgres_fdw coordinator: the clients' rows are written on the shards, and this
    // server's pg_stat_user_tables never sees them.
    let (claims, clients, server) = probe(10);
    let mut fdw = server;
    fdw.rows = [0; 7];
    fdw.tables = Some(std::collections::BTreeMap::new());
    fdw.remote_tables = true;
    let l = build(&inputs(&claims, clients, fdw));
    let rows = (l.lines.iter())
        .find(|l| l.subject() == "rows inserted")
        .unwrap_or_else(|| panic!("{l:#?}"));
    assert_eq!(rows.verdict, Verdict::Inconclusive, "{rows:#?}");
    assert!(rows.detail.contains("foreign"), "{}", rows.detail);
    assert!(!l.status().0.untrusted(), "{:?}", l.status());
}

#[test]
fn mysql_s_changed_rows_may_fall_short_of_the_matched_ones_but_never_exceed_them() {
    // 10 UPDATEs matched a row each; MySQL's Handler_update counts the rows they changed.
    let clients = tally(Kind::Update, 10, 10);
    let counters = |changed: i64| {
        let mut statements = [0; 7];
        statements[Kind::Update as usize] = 10;
        let mut rows = [0; 7];
        rows[Kind::Update as usize] = changed;
        let mut c = pg_counters(statements, rows, &[]);
        c.statements_source = "Com_*";
        c.rows_source = "Handler_write/update/delete";
        c.tables = None;
        c.rollbacks = None;
        c
    };
    let rows_line = |changed: i64, dialect: Dialect| {
        let mut i = inputs(&[], clients, counters(changed));
        i.dialect = dialect;
        let l = build(&i);
        (l.lines.iter())
            .find(|l| l.subject() == "rows updated")
            .cloned()
            .expect("a rows updated line")
    };
    // One UPDATE left its row as it was (SET x = x + 0): within, and the detail says why.
    let l = rows_line(9, Dialect::MySql);
    assert_eq!(l.verdict, Verdict::Within, "{l:#?}");
    assert!(l.detail.contains("changed"), "{}", l.detail);
    assert_eq!(rows_line(10, Dialect::MySql).verdict, Verdict::Exact);
    // More rows than the clients matched, with nothing failed: a miscount.
    assert_eq!(rows_line(11, Dialect::MySql).verdict, Verdict::Failed);
    // PostgreSQL counts every row an UPDATE matched: fewer is a miscount there.
    assert_eq!(rows_line(9, Dialect::Postgres).verdict, Verdict::Failed);
}
