//! The knee's rule, a step's figures from its result, and the rows of the text and HTML.

use super::*;

fn steps(series: &[(&str, f64, f64)]) -> Vec<SweepStep> {
    series
        .iter()
        .map(|(v, tps, p99)| SweepStep {
            value: (*v).into(),
            tps: *tps,
            p99_ms: *p99,
            ..Default::default()
        })
        .collect()
}

#[test]
fn knee_where_doubling_clients_stops_paying_and_p99_climbs() {
    // Linear up to 8 clients, then flat with p99 doubling per doubling (Little's law).
    let s = steps(&[
        ("1", 1000.0, 1.1),
        ("2", 1980.0, 1.1),
        ("4", 3900.0, 1.2),
        ("8", 7600.0, 1.3),
        ("16", 8000.0, 2.6),
        ("32", 8050.0, 5.3),
        ("64", 7900.0, 10.9),
    ]);
    let k = find_knee(&s).expect("a knee");
    assert_eq!((k.index, k.value.as_str()), (3, "8"));
    assert!(k.reason.contains("from 8 to 16"), "{}", k.reason);
}

#[test]
fn no_knee_while_every_step_scales() {
    let s = steps(&[
        ("1", 100.0, 2.0),
        ("2", 195.0, 2.1),
        ("4", 380.0, 2.3),
        ("8", 700.0, 2.6),
    ]);
    assert_eq!(find_knee(&s), None);
}

#[test]
fn no_knee_when_throughput_flattens_with_latency_flat() {
    // A rate sweep on a server that is never saturated cannot flatten, but a flat series
    // with flat latency (noise) is not a knee either.
    let s = steps(&[
        ("100", 100.0, 1.0),
        ("200", 110.0, 1.05),
        ("400", 112.0, 1.1),
    ]);
    assert_eq!(find_knee(&s), None);
}

#[test]
fn no_knee_with_fewer_than_two_steps_or_no_throughput() {
    assert_eq!(find_knee(&steps(&[("8", 100.0, 1.0)])), None);
    assert_eq!(find_knee(&[]), None);
    assert_eq!(find_knee(&steps(&[("1", 0.0, 0.0), ("2", 0.0, 0.0)])), None);
}

#[test]
fn throughput_falling_with_latency_climbing_is_a_knee() {
    let s = steps(&[("16", 5000.0, 4.0), ("32", 4000.0, 9.0)]);
    assert_eq!(find_knee(&s).map(|k| k.index), Some(0));
}

#[test]
fn small_parameter_steps_ask_for_a_proportional_gain() {
    // 10 -> 12 clients (+20%): +8% tps is scaling well enough (needs +5%), so no knee;
    // +2% with p99 up 30% is one.
    let ok = steps(&[("10", 1000.0, 1.0), ("12", 1080.0, 1.3)]);
    assert_eq!(find_knee(&ok), None);
    let knee = steps(&[("10", 1000.0, 1.0), ("12", 1020.0, 1.3)]);
    assert_eq!(find_knee(&knee).map(|k| k.index), Some(0));
}

#[test]
fn settings_values_need_a_quarter_more_throughput() {
    let s = steps(&[("off", 1000.0, 1.0), ("on", 1100.0, 2.0)]);
    assert_eq!(find_knee(&s).map(|k| k.value), Some("off".into()));
}

fn aborted(mut s: SweepStep, clients: u32) -> SweepStep {
    s.aborted_clients = clients;
    s
}

#[test]
fn the_knee_is_never_a_step_whose_clients_aborted_nor_compared_with_one() {
    // Step 4 lost half its clients: its flat tps and climbing p99 would make 2 the knee.
    let mut s = steps(&[
        ("1", 1000.0, 1.0),
        ("2", 1980.0, 1.05),
        ("4", 2000.0, 3.0),
        ("8", 7800.0, 1.2),
    ]);
    assert_eq!(find_knee(&s).map(|k| k.index), Some(1), "as if sound");
    s[2] = aborted(s[2].clone(), 2);
    // 2 is compared with 8 instead: +294% where tripling the clients needs +75%.
    assert_eq!(find_knee(&s), None);

    // The step that would be the knee lost clients: the knee is found across it, from the
    // sound step before to the sound step after, with the parameter's growth between them.
    let mut s = steps(&[("4", 3900.0, 1.2), ("8", 7600.0, 1.3), ("16", 6000.0, 2.6)]);
    assert_eq!(find_knee(&s).map(|k| k.index), Some(1), "as if sound");
    s[1] = aborted(s[1].clone(), 3);
    let k = find_knee(&s).expect("a knee across the aborted step");
    assert_eq!((k.index, k.value.as_str()), (0, "4"));
    assert!(
        k.reason
            .starts_with("from 4 to 16 (8 left out): tps +54% (scaling needs +75%)"),
        "{}",
        k.reason
    );

    // A failed check leaves a step out the same way; the last step, aborted, cannot be a
    // knee's comparison either.
    let mut s = steps(&[("1", 1000.0, 1.0), ("2", 1100.0, 2.0), ("4", 1150.0, 4.0)]);
    s[0].failed_checks = vec!["commit count".into()];
    assert_eq!(find_knee(&s).map(|k| k.index), Some(1));
    s[2] = aborted(s[2].clone(), 1);
    assert_eq!(find_knee(&s), None);
}

#[test]
fn a_steps_failures_and_aborts_count_the_whole_step() {
    let mut r = crate::testdata::multi_rate_tries();
    // Failures: one serialization failure and two others over the run, some of them in
    // the warm-up's interval; three clients aborted, two for the same reason.
    r.total.txns[1].failures = [1, 0, 2];
    r.connections.aborted.push(crate::AbortedClient {
        client_id: 5,
        reason: "connection to server was lost".into(),
    });
    r.connections.aborted.push(crate::AbortedClient {
        client_id: 6,
        reason: "1461 (42000): Can't create more than max_prepared_stmt_count statements".into(),
    });
    r.checks[0].status = crate::CheckStatus::Failed;
    let x = SweepStep::of("4", &r, 1.0);
    assert_eq!(x.failures, 3);
    assert_eq!(
        (
            x.failures_by_kind.serialization,
            x.failures_by_kind.deadlock,
            x.failures_by_kind.other
        ),
        (1, 0, 2)
    );
    assert_eq!(x.aborted_clients, 3);
    assert_eq!(
        x.aborts,
        [
            AbortReason {
                reason: "connection to server was lost".into(),
                clients: 2
            },
            AbortReason {
                reason: "1461 (42000): Can't create more than max_prepared_stmt_count \
                         statements"
                    .into(),
                clients: 1
            },
        ]
    );
    assert_eq!(x.failed_checks, ["commit count reconciliation"]);
    assert!(!x.sound());
    // tps is still after the warm-up: the second interval only.
    assert_eq!(x.transactions, r.intervals[1].total().committed());
}

#[test]
fn a_steps_row_carries_its_failures_aborts_and_failed_checks_in_text_and_html() {
    let s = crate::testdata::sweep_section();
    let t = render_text(&s);
    eprintln!("{t}");
    let row = |v: &str| -> &str {
        t.lines()
            .find(|l| l.split_whitespace().next() == Some(v))
            .unwrap_or_else(|| panic!("no row {v}:\n{t}"))
    };
    // 8: five of eight clients aborted, three failures, by kind and with the reason.
    let eight = row("8");
    let cols: Vec<&str> = eight.split_whitespace().collect();
    assert_eq!(&cols[5..], ["3", "5", "of", "8"], "{eight}");
    assert!(t.contains(&format!(
        "{eight}\n    failures by kind: serialization 0, deadlock 0, other 3\n    aborted: 5 \
         clients: 1461 (42000): Can't create more than max_prepared_stmt_count statements \
         (current value: 4)\n"
    )));
    assert!(row("2").ends_with("  0           0  <- knee"), "{t}");
    assert!(t.contains(&format!("{}\n    failed checks: commit count\n", row("1"))));
    assert!(t.contains(
        "  not considered for the knee (clients aborted or checks failed): 1, 8\n  knee at \
         clients=2 (from 2 to 4: "
    ));

    let mut html = String::new();
    html_section(&mut html, &s);
    let tr = |v: &str| -> String {
        let at = html
            .find(&format!("<td>{v}</td>"))
            .unwrap_or_else(|| panic!("no row {v}: {html}"));
        let start = html[..at].rfind("<tr").unwrap();
        let end = at + html[at..].find("</tr>").unwrap();
        html[start..end].to_string()
    };
    let eight = tr("8");
    assert!(eight.starts_with("<tr class=\"unsound\">"), "{eight}");
    for cell in [
        "<td>3</td><td class=\"l\">serialization 0, deadlock 0, other 3</td>",
        "<td>5 of 8</td>",
        "5: 1461 (42000): Can&#39;t create more than max_prepared_stmt_count",
    ] {
        assert!(eight.contains(cell), "{cell} not in {eight}");
    }
    assert!(tr("1").contains("<td class=\"l\">commit count</td>"));
    assert!(html.contains(
        "Not considered for the knee: clients=1 (failed checks: commit \
                           count), clients=8 (5 of 8 clients aborted)."
    ));
    assert!(html.contains("<tr class=\"knee\"><td>2 (knee)</td>"));
}

#[test]
fn results_written_before_aborts_were_recorded_still_read() {
    let mut v = serde_json::to_value(crate::testdata::sweep_section()).unwrap();
    for x in v["steps"].as_array_mut().unwrap() {
        let o = x.as_object_mut().unwrap();
        for k in ["failures_by_kind", "aborted_clients", "aborts"] {
            o.remove(k);
        }
    }
    let s: SweepSection = serde_json::from_value(v).unwrap();
    assert!(s
        .steps
        .iter()
        .all(|x| x.aborted_clients == 0 && x.aborts.is_empty()));
}

#[test]
fn compare_rows_pair_values_and_keep_unmatched_ones() {
    let a = SweepSection {
        parameter: "clients".into(),
        steps: steps(&[("1", 100.0, 1.0), ("2", 200.0, 1.0)]),
        ..Default::default()
    };
    let b = SweepSection {
        parameter: "clients".into(),
        steps: steps(&[("2", 150.0, 2.0), ("4", 300.0, 2.0)]),
        ..Default::default()
    };
    let rows = compare_rows(&a, &b);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].tps, (Some(100.0), None));
    assert_eq!(rows[1].tps, (Some(200.0), Some(150.0)));
    assert_eq!(rows[2].value, "4");
    let text = render_compare_text(&a, &b, "A", "B");
    assert!(text.contains("-25.0%"), "{text}");
    assert!(text.contains("+100.0%"), "{text}");
}

#[test]
fn the_text_table_marks_the_knee() {
    let mut s = SweepSection {
        parameter: "clients".into(),
        warmup_s: 1.0,
        steps: steps(&[("4", 400.0, 1.0), ("8", 410.0, 2.0)]),
        ..Default::default()
    };
    s.knee = find_knee(&s.steps);
    let t = render_text(&s);
    assert!(
        t.lines()
            .any(|l| l.trim_start().starts_with("4 ") && l.ends_with("<- knee")),
        "{t}"
    );
    let mut html = String::new();
    html_section(&mut html, &s);
    assert!(html.contains("knee 4"), "the chart marks the knee");
}

#[test]
fn a_step_keeps_its_own_counters_checks_and_counts_from_its_own_result() {
    // Two steps' results, each with its own observer: each step reads only its own deltas.
    let step_of = |com_select: f64, window_ms: i64| {
        let mut r = crate::testdata::mysql_observed_run();
        let m = r.server_metrics.as_mut().unwrap();
        m.window_start_ms = 0;
        m.window_end_ms = window_ms;
        m.deltas.insert("mysql.Com_select".into(), com_select);
        r.checks = vec![crate::Check {
            name: "commit count".into(),
            status: crate::CheckStatus::Failed,
            detail: "off by one".into(),
        }];
        SweepStep::of("2", &r, 0.0)
    };
    let (a, b) = (step_of(1000.0, 2000), step_of(9000.0, 3000));
    let c = |x: &SweepStep| x.own.counters["mysql.Com_select"];
    assert_eq!((c(&a).delta, c(&a).per_s), (1000.0, 500.0));
    assert_eq!((c(&b).delta, c(&b).per_s), (9000.0, 3000.0));
    assert_eq!((a.own.counters_s, b.own.counters_s), (2.0, 3.0));
    // Every check with its verdict, and the failed one named as before.
    assert_eq!(a.own.checks.len(), 1);
    assert_eq!(a.own.checks[0].status, crate::CheckStatus::Failed);
    assert_eq!(a.failed_checks, ["commit count"]);
    // Committed transactions of the whole step by type, as the result counts them.
    let r = crate::testdata::mysql_observed_run();
    let total: u64 = a.own.committed_by_type.values().sum();
    assert_eq!(total, r.total.total().committed());
    assert_eq!(a.own.step_s, r.measured_duration_s);
    // Without an observer: no counters, no window.
    let mut bare = crate::testdata::mysql_observed_run();
    bare.server_metrics = None;
    let x = SweepStep::of("2", &bare, 0.0);
    assert!(x.own.counters.is_empty() && x.own.counters_s == 0.0);
}

#[test]
fn the_csv_has_a_row_per_step_and_a_column_per_counter() {
    let s = crate::testdata::sweep_section();
    let csv = render_csv(&s);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + s.steps.len(), "{csv}");
    let head: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| {
        head.iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}: {}", lines[0]))
    };
    let cell = |step: usize, name: &str| lines[1 + step].split(',').nth(col(name)).unwrap();
    assert_eq!(head[0], "clients");
    // Each step its own numbers (the sample's step i has i+1 times the first's).
    for (i, x) in s.steps.iter().enumerate() {
        let n = (i + 1) as f64;
        assert_eq!(cell(i, "clients"), x.value);
        assert_eq!(cell(i, "mysql.Com_select"), (1000.0 * n).to_string());
        assert_eq!(cell(i, "mysql.Com_select/s"), (200.0 * n).to_string());
        assert_eq!(cell(i, "mysql.Innodb_rows_read"), (5000.0 * n).to_string());
        assert_eq!(cell(i, "metric:tpmC"), (1200.0 * n).to_string());
        assert_eq!(
            cell(i, "rows:pgbench_accounts"),
            (100_000 * (i + 1)).to_string()
        );
        assert_eq!(cell(i, "scale"), (i + 1).to_string());
    }
    // A step without a counter another step has: an empty cell, not a zero.
    let mut s = s;
    s.steps[1].own.counters.remove("mysql.Innodb_rows_read");
    let csv = render_csv(&s);
    let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
    assert_eq!(row[col("mysql.Innodb_rows_read")], "");
}

#[test]
fn the_html_charts_each_named_set_against_the_parameter() {
    let s = crate::testdata::sweep_section();
    let mut html = String::new();
    html_section(&mut html, &s);
    for id in [
        "chart-sweep-tps",
        "chart-sweep-p99",
        "chart-sweep-metric-0",
        // The MySQL sets present in the sample: statements (Com_*) and InnoDB rows.
        "chart-sweep-counters-4",
        "chart-sweep-counters-5",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(html.contains("tpmC against clients"), "the family's figure");
    assert!(html.contains("latency percentiles against clients"));
    // PostgreSQL's sets are not drawn for a MariaDB sweep.
    assert!(!html.contains("chart-sweep-counters-0"));
    assert!(!html.contains("Commits and rollbacks"));
    // The table of each step's own figures: tpmC, rows, counters per second, checks.
    assert!(html.contains("<th>tpmC (New-Orders/min)</th>"), "{html}");
    assert!(html.contains("<th>mysql.Com_select/s</th>"));
    assert!(html.contains("<td>800.0</td>"), "step 8's Com_select/s");
    assert!(html.contains("commit count: passed"));
    // And the text: the family's figures under each step's row.
    let t = render_text(&s);
    assert!(t.contains("\n    tpmC 4800.0\n"), "{t}");
}

#[test]
fn results_written_before_steps_kept_their_series_still_read() {
    let mut v = serde_json::to_value(crate::testdata::sweep_section()).unwrap();
    for x in v["steps"].as_array_mut().unwrap() {
        let o = x.as_object_mut().unwrap();
        for k in [
            "step_s",
            "committed_by_type",
            "metrics",
            "counters_s",
            "counters",
            "checks",
            "scale",
            "rows",
        ] {
            assert!(o.remove(k).is_some(), "{k} is written");
        }
    }
    let s: SweepSection = serde_json::from_value(v).unwrap();
    assert!(s.steps.iter().all(|x| x.own == StepSeries::default()));
}

/// A scale × clients matrix: two groups of the same client counts.
fn matrix() -> SweepSection {
    let mut st = steps(&[
        // scale 1: scales up to 4 clients, then flat while p99 doubles.
        ("1", 1000.0, 1.0),
        ("4", 3900.0, 1.0),
        ("16", 4000.0, 4.0),
        // scale 10: scales all the way.
        ("1", 900.0, 1.0),
        ("4", 3500.0, 1.0),
        ("16", 13000.0, 1.1),
    ]);
    for (i, x) in st.iter_mut().enumerate() {
        x.group = Some(if i < 3 { "1" } else { "10" }.into());
    }
    let (knee, group_knees) = find_knees(&st);
    SweepSection {
        parameter: "clients".into(),
        group_parameter: Some("scale".into()),
        knee,
        group_knees,
        steps: st,
        ..Default::default()
    }
}

#[test]
fn a_matrix_finds_each_groups_knee_apart() {
    let s = matrix();
    // Compared across groups, 16 clients at scale 1 (4,000 tps) against 1 client at scale 10
    // would read as a knee; each group is its own sweep.
    assert_eq!(s.knee, None);
    assert_eq!(s.group_knees.len(), 1, "{:?}", s.group_knees);
    let k = &s.group_knees[0];
    assert_eq!(
        (k.index, k.value.as_str(), k.group.as_deref()),
        (1, "4", Some("1"))
    );
    let text = render_text(&s);
    assert!(
        text.starts_with("sweep over scale × clients (6 steps"),
        "{text}"
    );
    assert!(text.contains("scale=1, clients=4"), "{text}");
    assert!(text.contains("scale=1: knee at clients=4"), "{text}");
    assert!(text.contains("scale=10: no knee"), "{text}");
    assert_eq!(text.matches("<- knee").count(), 1, "{text}");
    // One line per scale against the same client ticks.
    let html = charts(&s, "m");
    assert!(html.contains("throughput scale=1") && html.contains("throughput scale=10"));
    let csv = render_csv(&s);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("scale,clients,scale,"), "{}", lines[0]);
    assert!(lines[6].starts_with("10,16,"), "{}", lines[6]);
    // Compared step by step by the whole name: the same client count at two scales is two rows.
    let rows = compare_rows(&s, &s);
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[3].value, "scale=10, clients=1");
    // A result saved before matrices reads as a sweep of one parameter.
    let v: SweepSection = serde_json::from_str(
        r#"{"parameter":"clients","warmup_s":1,"knee":null,"steps":[{"value":"1","tps":1,
        "mean_ms":1,"p50_ms":1,"p95_ms":1,"p99_ms":1,"max_ms":1,"transactions":1,"failures":0,
        "measured_s":1,"clients":1}]}"#,
    )
    .unwrap();
    assert_eq!((v.group_parameter, v.steps[0].group.clone()), (None, None));
}
