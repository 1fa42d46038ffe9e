//! pgbench scripts run by the engine against a real PostgreSQL (one private server for the
//! tests of this file, one database per test): a script repeating `tpcb-like` against the
//! builtin, `\gset`/`\aset`, pipelines, `\sleep`, `\if`, `-D`, run-time errors, and seed 000's two
//! scripts at their scales against tables holding just the rows they touch. Timings are never
//! asserted. A test that cannot start PostgreSQL fails; it never skips.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::stampede3 as stampede;
use engine::{Outcome, RunError, RunSpec, Stop};
use measure::FailureKind;
use sut::{ConnConfig, QueryMode, Session};
use testkit::{WhileUsed, THROWAWAY};
use workload::script::exec::NoTimer;
use workload::script::vars::{CLIENT_ID, DEFAULT_SEED, RANDOM_SEED, SCALE};
use workload::script::{
    builtin_text, Action, Interp, Script, ScriptConfig, ScriptSet, ScriptWorkload, Symbols, Value,
    Vars,
};
use workload::tpcb::{Builtin, TpcbWorkload};
use workload::{Streams, Workload};

/// One server shared by the tests running at the same time (stopped when the last drops it).
static PG: WhileUsed = WhileUsed::new(&[THROWAWAY, &[("shared_buffers", "64MB")]]);

/// A fresh database on the shared server.
struct Db {
    pg: Arc<testkit::Pg>,
    cfg: ConnConfig,
    name: String,
}

fn db(tag: &str) -> Db {
    static N: AtomicUsize = AtomicUsize::new(0);
    let pg = PG.get();
    let name = format!("{tag}_{}", N.fetch_add(1, Ordering::Relaxed));
    sql(pg.conn_config(), &format!("CREATE DATABASE {name}"));
    let cfg = pg.conn_config().with_dbname(&name);
    Db { pg, cfg, name }
}

impl Db {
    fn pgbench_init(&self, scale: u32) {
        (self.pg).pgbench(&self.name, &["-i", "-q", "-s", &scale.to_string()]);
    }

    fn sql(&self, q: &str) -> Vec<Vec<Option<String>>> {
        sql(&self.cfg, q)
    }

    fn scalar(&self, q: &str) -> i64 {
        self.sql(q)[0][0].as_deref().unwrap().parse().unwrap()
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn sql(cfg: &ConnConfig, q: &str) -> Vec<Vec<Option<String>>> {
    block_on(async {
        let mut s = Session::connect(cfg).await.expect("connect");
        let r = s
            .simple_query(q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        s.close().await;
        r
    })
}

/// At most two threads, per-statement latencies (`-r`).
fn spec(clients: u32, txns: u64, mode: QueryMode, seed: u64) -> RunSpec {
    let stop = Stop::Transactions(txns);
    RunSpec {
        seed,
        per_statement: true,
        ..engine::RunSpec::new(clients, clients.min(2), stop, mode)
    }
}

fn scripts(
    files: &[(&str, &str)],
    spec: &RunSpec,
    scale: i64,
    defines: &[(&str, &str)],
) -> ScriptWorkload {
    let mut set = ScriptSet::new();
    for (name, text) in files {
        set.add_file(name, text, 1)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    set.into_workload(&ScriptConfig {
        scale,
        seed: spec.seed,
        clients: spec.clients,
        defines: defines
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        debug: None,
    })
}

fn run<W: Workload>(db: &Db, spec: &RunSpec, w: W) -> Result<Outcome, RunError> {
    let mut spec = spec.clone();
    if spec.weights.is_empty() {
        spec.weights = vec![1; w.txn_types().len()];
    }
    engine::run(
        &spec,
        Arc::new(w),
        &db.cfg.clone().into(),
        Arc::new(AtomicBool::new(false)),
        &mut |_| {},
    )
}

/// Committed per script, and the commit identity on the wire.
fn committed(out: &Outcome) -> u64 {
    out.total.total().committed()
}

/// The TPC-B sums, and history as a sorted list of (tid, bid, aid, delta).
fn tpcb_state(db: &Db) -> ([i64; 4], Vec<String>) {
    let r = db.sql(
        "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), \
                (SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers), \
                (SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches), \
                (SELECT coalesce(sum(delta), 0) FROM pgbench_history)",
    );
    let sums = [0, 1, 2, 3].map(|i| r[0][i].as_deref().unwrap().parse::<i64>().unwrap());
    let hist = db
        .sql("SELECT tid || ',' || bid || ',' || aid || ',' || delta FROM pgbench_history ORDER BY 1")
        .into_iter()
        .map(|r| r[0].clone().unwrap())
        .collect();
    (sums, hist)
}

fn reset(db: &Db) {
    db.sql(
        "UPDATE pgbench_accounts SET abalance = 0 WHERE abalance <> 0; \
         UPDATE pgbench_tellers SET tbalance = 0 WHERE tbalance <> 0; \
         UPDATE pgbench_branches SET bbalance = 0 WHERE bbalance <> 0; \
         TRUNCATE pgbench_history",
    );
}

#[test]
fn a_script_repeating_tpcb_like_does_exactly_what_the_builtin_does() {
    let db = db("tpcb");
    db.pgbench_init(1);
    let text = builtin_text(Builtin::TpcbLike);
    for mode in [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared] {
        let sp = spec(2, 40, mode, 11);
        reset(&db);
        let b = run(&db, &sp, TpcbWorkload::new(vec![(Builtin::TpcbLike, 1)], 1)).unwrap();
        let (b_sums, b_hist) = tpcb_state(&db);
        reset(&db);
        let s = run(&db, &sp, scripts(&[("tpcb.sql", &text)], &sp, 1, &[])).unwrap();
        let (s_sums, s_hist) = tpcb_state(&db);
        assert_eq!(committed(&b), 80, "{mode:?}");
        assert_eq!(committed(&s), 80, "{mode:?}");
        assert_eq!(
            s.total.total().committed() + s.setup_commits,
            s.server_commits
        );
        // Same seed, same draws: the same rows were changed by the same amounts.
        assert_eq!(s_hist.len(), 80);
        assert_eq!(s_hist, b_hist, "{mode:?}");
        assert_eq!(s_sums, b_sums, "{mode:?}");
        assert!(
            s_sums.iter().all(|v| *v == s_sums[0]),
            "invariant: {s_sums:?}"
        );
        assert!(s.aborted.is_empty());
        // -r: one statement per script line.
        assert_eq!(s.total.txns[0].statements.len(), 11);
    }
    // The builtin run through the script path, mixed with a file, by weight.
    reset(&db);
    let sp = spec(2, 30, QueryMode::Prepared, 5);
    let mut set = ScriptSet::new();
    set.add_builtin(Builtin::TpcbLike, 1);
    set.add_file("sel.sql", "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", 3)
        .unwrap();
    let w = set.into_workload(&ScriptConfig {
        scale: 1,
        seed: 5,
        clients: 2,
        defines: vec![],
        debug: None,
    });
    let mut sp2 = sp.clone();
    sp2.weights = w.weights();
    let out = run(&db, &sp2, w).unwrap();
    assert_eq!(committed(&out), 60);
    let (sums, hist) = tpcb_state(&db);
    assert_eq!(hist.len() as u64, out.total.txns[0].committed());
    assert!(sums.iter().all(|v| *v == sums[0]), "{sums:?}");
}

#[test]
fn gset_and_aset_values_flow_into_later_commands() {
    let db = db("gset");
    db.sql(
        "CREATE TABLE r (client int, answer int, twice int, t text, s text, a int, b int, n text)",
    );
    let common = "SELECT 41 + :client_id + 1 AS answer \\gset\n\
                  \\set twice :answer * 2\n\
                  SELECT :twice AS t, 'x''y' AS s, NULL AS n \\gset p_\n";
    // Simple mode: compound statements with \aset (each query's last row).
    let simple = format!(
        "{common}SELECT 1 AS a \\; SELECT 5 AS b UNION ALL SELECT 2 \\; SELECT 9 AS z WHERE false \\aset\n\
         INSERT INTO r VALUES (:client_id, :answer, :twice, :p_t, :'p_s', :a, :b, :'p_n');\n"
    );
    let sp = spec(2, 3, QueryMode::Simple, 1);
    let out = run(&db, &sp, scripts(&[("g.sql", &simple)], &sp, 1, &[])).unwrap();
    assert_eq!(committed(&out), 6, "{:?}", out.aborted);
    let rows = db.sql("SELECT DISTINCT client, answer, twice, t, s, a, b, n FROM r ORDER BY 1");
    let want = |c: &str, ans: &str, tw: &str| {
        vec![
            Some(c.to_string()),
            Some(ans.to_string()),
            Some(tw.to_string()),
            Some(tw.to_string()),
            Some("x'y".to_string()),
            Some("1".to_string()),
            Some("2".to_string()),
            Some(String::new()),
        ]
    };
    assert_eq!(rows, vec![want("0", "42", "84"), want("1", "43", "86")]);

    // Extended and prepared modes: \gset needs the portal's description.
    db.sql("TRUNCATE r");
    let ext = format!(
        "{common}SELECT 7 AS a \\aset\nINSERT INTO r VALUES (:client_id, :answer, :twice, :p_t, :p_s, :a, 0, :p_n);\n"
    );
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        let sp = spec(1, 2, mode, 1);
        let out = run(&db, &sp, scripts(&[("g.sql", &ext)], &sp, 1, &[])).unwrap();
        assert_eq!(committed(&out), 2, "{mode:?} {:?}", out.aborted);
    }
    assert_eq!(
        db.scalar("SELECT count(*) FROM r WHERE answer = 42 AND twice = 84 AND t = '84' AND s = 'x''y' AND a = 7 AND n = ''"),
        4
    );
}

#[test]
fn pipelines_send_everything_and_read_every_result() {
    let db = db("pipe");
    db.sql("CREATE TABLE p (client int, k int)");
    let text = "\\startpipeline\n\
                INSERT INTO p VALUES (:client_id, 1);\n\
                INSERT INTO p VALUES (:client_id, 2);\n\
                \\syncpipeline\n\
                INSERT INTO p VALUES (:client_id, 3);\n\
                \\endpipeline\n";
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        db.sql("TRUNCATE p");
        let sp = spec(2, 5, mode, 1);
        let out = run(&db, &sp, scripts(&[("p.sql", text)], &sp, 1, &[])).unwrap();
        assert_eq!(committed(&out), 10, "{mode:?} {:?}", out.aborted);
        assert_eq!(db.scalar("SELECT count(*) FROM p"), 30);
        assert_eq!(db.scalar("SELECT sum(k) FROM p WHERE client = 1"), 30);
        // Two Sync segments per transaction, each one implicit transaction.
        assert_eq!(out.server_commits - out.setup_commits, 20);
    }
    // Simple mode is refused before connecting.
    let sp = spec(1, 1, QueryMode::Simple, 1);
    match run(&db, &sp, scripts(&[("p.sql", text)], &sp, 1, &[])) {
        Err(RunError::Invalid(m)) => assert!(m.contains("pipeline"), "{m}"),
        other => panic!("{other:?}"),
    }
    // A failing statement inside a pipeline fails the transaction; the session stays usable for
    // the rollback, and the client is aborted (not retryable) with pgbench's message.
    let bad = "\\startpipeline\nINSERT INTO p VALUES (1, 1);\nSELECT 1/0;\nINSERT INTO p VALUES (1, 2);\n\\endpipeline\n";
    let sp = spec(1, 3, QueryMode::Extended, 1);
    let out = run(&db, &sp, scripts(&[("bad.sql", bad)], &sp, 1, &[])).unwrap();
    assert_eq!(out.total.total().failures_of(FailureKind::Other), 1);
    assert_eq!(out.aborted.len(), 1);
    assert!(
        out.aborted[0]
            .reason
            .contains("client 0 script 0 aborted in command 4 query 0")
            && out.aborted[0].reason.contains("division by zero"),
        "{}",
        out.aborted[0].reason
    );
    // \gset is not allowed inside a pipeline.
    let g = "\\startpipeline\nSELECT 1 AS one \\gset\n\\endpipeline\n";
    let out = run(&db, &sp, scripts(&[("g.sql", g)], &sp, 1, &[])).unwrap();
    assert!(
        out.aborted[0]
            .reason
            .contains("\\gset is not allowed in pipeline mode"),
        "{}",
        out.aborted[0].reason
    );
}

#[test]
fn sleep_if_branches_and_defines() {
    let db = db("ifs");
    db.sql("CREATE TABLE b (client int, branch text, v text)");
    let text = "\\set d 2\n\
                \\sleep :d ms\n\
                \\sleep 1000 us\n\
                \\if :client_id = 0\n\
                INSERT INTO b VALUES (:client_id, 'zero', :'who');\n\
                \\elif :client_id = 1\n\
                INSERT INTO b VALUES (:client_id, 'one', :'who');\n\
                \\else\n\
                INSERT INTO b VALUES (:client_id, 'other', :'who');\n\
                \\endif\n";
    let sp = spec(3, 2, QueryMode::Extended, 1);
    let out = run(
        &db,
        &sp,
        scripts(&[("if.sql", text)], &sp, 1, &[("who", "me")]),
    )
    .unwrap();
    assert_eq!(committed(&out), 6, "{:?}", out.aborted);
    let rows = db.sql("SELECT DISTINCT client, branch, v FROM b ORDER BY 1");
    let r = |c: &str, b: &str| vec![Some(c.into()), Some(b.into()), Some("me".into())];
    assert_eq!(rows, vec![r("0", "zero"), r("1", "one"), r("2", "other")]);
    // -D overrides an automatic variable.
    db.sql("TRUNCATE b");
    let sp = spec(2, 1, QueryMode::Simple, 1);
    let out = run(
        &db,
        &sp,
        scripts(
            &[("if.sql", text)],
            &sp,
            1,
            &[("client_id", "1"), ("who", "x")],
        ),
    )
    .unwrap();
    assert_eq!(committed(&out), 2);
    assert_eq!(db.scalar("SELECT count(*) FROM b WHERE branch = 'one'"), 2);
}

#[test]
fn run_time_errors_fail_the_transaction_and_abort_the_client_as_pgbench() {
    let db = db("errs");
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT 1;\n\\set x 1 / 0\n",
            &["division by zero", "client 0 aborted in command 1 (set) of script 0; evaluation of meta-command failed"],
        ),
        (
            "\\set x 9223372036854775807 + 1\n",
            &["bigint add out of range", "(set) of script 0"],
        ),
        ("\\set x :nope + 1\n", &["undefined variable \"nope\""]),
        (
            "SELECT 1 AS a WHERE false \\gset\n",
            &["client 0 script 0 command 0 query 0: expected one row, got 0"],
        ),
        (
            "SELECT 1 AS a UNION ALL SELECT 2 \\gset\n",
            &["expected one row, got 2"],
        ),
        ("\\sleep :nope\n", &["sleep: undefined variable \"nope\"", "(sleep) of script 0"]),
        ("BEGIN;\n", &["end of script reached without completing the last transaction"]),
        ("SELECT * FROM no_such_table;\n", &["client 0 script 0 aborted in command 0 query 0", "no_such_table"]),
    ];
    for (text, wants) in cases {
        let sp = spec(1, 3, QueryMode::Simple, 1);
        let out = run(&db, &sp, scripts(&[("e.sql", text)], &sp, 1, &[])).unwrap();
        let t = out.total.total();
        if text.starts_with("BEGIN") {
            // pgbench's CSTATE_END_TX: the transaction is counted, then the client aborts.
            assert_eq!(t.failed(), 0, "{text}");
            assert_eq!(t.committed(), 1, "{text}");
        } else {
            assert_eq!(t.failures_of(FailureKind::Other), 1, "{text}");
            assert_eq!(t.committed(), 0, "{text}");
        }
        assert_eq!(out.aborted.len(), 1, "{text}");
        for w in *wants {
            assert!(
                out.aborted[0].reason.contains(w),
                "{text}: {}",
                out.aborted[0].reason
            );
        }
    }
}

/// The draws of `clients` clients running `text` `txns` times with `seed`, as the engine's
/// clients draw them: the (name -> value) variables at each SQL command.
fn simulate(text: &str, seed: u64, clients: u32, txns: usize, names: &[&str]) -> Vec<Vec<i64>> {
    let mut sy = Symbols::new();
    let script = Script::parse("sim.sql", text, &mut sy).unwrap();
    let ids: Vec<_> = names.iter().map(|n| sy.get(n).unwrap()).collect();
    let mut out = Vec::new();
    let streams = Streams::new(seed, clients);
    for c in 0..clients {
        let mut rng = streams.client_func(c);
        let mut vars = Vars::new(&sy);
        vars.set_value(SCALE, Value::Int(1));
        vars.set_value(CLIENT_ID, Value::Int(c as i64));
        vars.set_value(RANDOM_SEED, Value::Int(seed as i64));
        vars.set_value(DEFAULT_SEED, Value::Int(streams.default_seed() as i64));
        for _ in 0..txns {
            let mut it = Interp::new();
            let mut seen = false;
            loop {
                match it
                    .next(&script, 0, &mut vars, &mut rng, &mut NoTimer)
                    .unwrap()
                {
                    Action::Done => break,
                    Action::Sql(_) if !seen => {
                        seen = true;
                        out.push(
                            ids.iter()
                                .map(|id| match vars.peek(*id) {
                                    Some(Value::Int(i)) => i,
                                    v => panic!("{v:?}"),
                                })
                                .collect(),
                        );
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// Tables as pgbench creates them for scale >= 20000 (bigint account ids), without keys.
fn big_tables(db: &Db) {
    db.sql(
        "CREATE TABLE pgbench_accounts (aid bigint NOT NULL, bid int, abalance int, filler char(84)); \
         CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)); \
         CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)); \
         CREATE TABLE pgbench_history (tid int, bid int, aid bigint, delta int, mtime timestamp, filler char(22))",
    );
}

/// seed 000 (the Aurora Limitless article), `limitless_pgbench_tpcb.sql`, with the backslashes
/// the article lost restored.
const LIMITLESS_TPCB: &str = r"\set scale 10000
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND bid = :bid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid AND bid = :bid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

/// seed 000, `limitless_pgbench_update.sql` (scale 1,000,000: account ids up to 10^11).
const LIMITLESS_UPDATE: &str = r"\set scale 1000000
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set delta random(-5000, 5000)
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid AND bid = :bid;
";

/// Every account the script updates was inserted beforehand (the draws are known from the seed),
/// so each UPDATE hits exactly its row: each account ends with the sum of its deltas.
#[test]
fn seed_000_scripts_run_unchanged_at_their_scales() {
    let (clients, txns, seed) = (2u32, 25usize, 424242u64);
    for (name, text, mode) in [
        (
            "limitless_pgbench_tpcb.sql",
            LIMITLESS_TPCB,
            QueryMode::Simple,
        ),
        (
            "limitless_pgbench_update.sql",
            LIMITLESS_UPDATE,
            QueryMode::Simple,
        ),
        (
            "limitless_pgbench_update.sql",
            LIMITLESS_UPDATE,
            QueryMode::Prepared,
        ),
    ] {
        let db = db("seed");
        big_tables(&db);
        let tpcb = text.contains("tid");
        let draws = simulate(text, seed, clients, txns, &["aid", "bid", "delta"]);
        let tids = if tpcb {
            simulate(text, seed, clients, txns, &["tid"])
        } else {
            vec![]
        };
        let max_aid = if tpcb { 1_000_000_000 } else { 100_000_000_000 };
        assert!(draws.iter().all(|d| (1..=max_aid).contains(&d[0])));
        if !tpcb {
            assert!(
                draws.iter().any(|d| d[0] > i32::MAX as i64),
                "ids past 2^31"
            );
        }
        let mut expect: BTreeMap<(i64, i64), i64> = BTreeMap::new();
        let mut values = Vec::new();
        for d in &draws {
            *expect.entry((d[0], d[1])).or_default() += d[2];
        }
        for (aid, bid) in expect.keys() {
            values.push(format!("({aid}, {bid}, 0)"));
        }
        db.sql(&format!(
            "INSERT INTO pgbench_accounts (aid, bid, abalance) VALUES {}",
            values.join(", ")
        ));
        if tpcb {
            let mut tellers: Vec<String> = draws
                .iter()
                .zip(&tids)
                .map(|(d, t)| format!("({}, {}, 0)", t[0], d[1]))
                .collect();
            tellers.sort();
            tellers.dedup();
            db.sql(&format!(
                "INSERT INTO pgbench_tellers (tid, bid, tbalance) VALUES {}",
                tellers.join(", ")
            ));
            let mut branches: Vec<String> =
                draws.iter().map(|d| format!("({}, 0)", d[1])).collect();
            branches.sort();
            branches.dedup();
            db.sql(&format!(
                "INSERT INTO pgbench_branches (bid, bbalance) VALUES {}",
                branches.join(", ")
            ));
        }
        let sp = spec(clients, txns as u64, mode, seed);
        // :scale is what the script sets, whatever -s says.
        let out = run(&db, &sp, scripts(&[(name, text)], &sp, 1, &[])).unwrap();
        assert_eq!(
            committed(&out),
            clients as u64 * txns as u64,
            "{name}: {:?}",
            out.aborted
        );
        let got: BTreeMap<(i64, i64), i64> = db
            .sql("SELECT aid, bid, abalance FROM pgbench_accounts")
            .into_iter()
            .map(|r| {
                let n = |i: usize| r[i].as_deref().unwrap().parse::<i64>().unwrap();
                ((n(0), n(1)), n(2))
            })
            .collect();
        assert_eq!(got, expect, "{name}: every UPDATE hit its row");
        if tpcb {
            let (sums, hist) = tpcb_state(&db);
            assert_eq!(hist.len(), clients as usize * txns);
            assert!(sums.iter().all(|v| *v == sums[0]), "invariant: {sums:?}");
            let total: i64 = draws.iter().map(|d| d[2]).sum();
            assert_eq!(sums[0], total);
        }
    }
}

/// Script errors are found before any connection opens (the target, port 1, would refuse one):
/// file:line:column, the line, a caret; exit 64 (bad input, like a bad option).
#[test]
fn a_bad_script_fails_before_connecting_with_file_line_column_and_caret() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.sql");
    std::fs::write(&bad, "SELECT 1;\n\\set x 1 +\n").unwrap();
    let bad = bad.to_str().unwrap();
    let target = ["-h", "127.0.0.1", "-p", "1"];
    let (code, _, err) = stampede(&[&["run", "-f", bad][..], &target].concat());
    assert_eq!(code, 64, "{err}");
    assert!(err.contains(&format!("{bad}:2:11: ")), "{err}");
    assert!(
        err.contains("\\set x 1 +\n          ^ error found here"),
        "{err}"
    );
    assert!(!err.contains("connect"), "{err}");

    let unknown = dir.path().join("unknown.sql");
    std::fs::write(&unknown, "\\if true\nSELECT 1;\n\\bogus 1\n\\endif\n").unwrap();
    let (code, _, err) =
        stampede(&[&["run", "-f", unknown.to_str().unwrap()][..], &target].concat());
    assert_eq!(code, 64, "{err}");
    assert!(
        err.contains("unknown.sql:3:2: invalid command in command \"bogus\""),
        "{err}"
    );

    let (code, _, err) =
        stampede(&[&["run", "-b", "select-only", "-D", "1x=2"][..], &target].concat());
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("invalid variable name: \"1x\""), "{err}");

    let (code, _, err) = stampede(&[&["run", "-f", "/nonexistent/x.sql"][..], &target].concat());
    assert_eq!(code, 64, "{err}");
    assert!(
        err.contains("could not open file \"/nonexistent/x.sql\""),
        "{err}"
    );
}

/// `-b` and `-f` mix in command-line order with their weights, as pgbench numbers scripts; `-r`
/// prints each script's lines; the TPC-B invariant is skipped for custom scripts.
#[test]
fn builtins_and_files_mix_on_the_command_line() {
    let db = db("cli");
    db.pgbench_init(1);
    let dir = tempfile::tempdir().unwrap();
    let my = dir.path().join("my.sql");
    std::fs::write(
        &my,
        "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid \\gset\n\\set x :abalance + :k\n",
    )
    .unwrap();
    let my = my.to_str().unwrap();
    let weighted = format!("{my}@3");
    let mut args = vec![
        "run",
        "--builtin",
        "tpcb-like@1",
        "--file",
        &weighted,
        "--define",
        "k=5",
        "--client",
        "2",
        "--jobs",
        "2",
        "--transactions",
        "20",
        "--protocol",
        "extended",
        "--report-per-command",
        "--random-seed",
        "3",
        "-n",
    ];
    let target = common::pg_target(&db.pg, &db.name);
    args.extend(target.iter().map(String::as_str));
    let (code, out, err) = stampede(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    let i1 = out
        .find("SQL script 1: <builtin: TPC-B (sort of)>")
        .unwrap_or_else(|| panic!("{out}"));
    let i2 = out
        .find(&format!("SQL script 2: {my}"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(i1 < i2);
    assert!(out.contains("weight: 3 (targets 75.0% of total)"), "{out}");
    assert!(out.contains("\\set x :abalance + :k"), "{out}");
    assert!(
        out.contains("number of transactions actually processed: 40/40"),
        "{out}"
    );
    assert!(out.contains("PASSED   commit count"), "{out}");
    assert!(
        out.contains("SKIPPED  TPC-B invariant: skipped (custom scripts)"),
        "{out}"
    );
}
