//! pgbench's workloads on MariaDB (the MySQL issue, item 4): `stampede init tpcb` with a
//! `mysql://` target, the TPC-B builtins in every `-M` mode, and custom scripts in pgbench's
//! language (`\set`, `\if`, `\sleep`, `\gset`, `\aset`, compound statements), against the shared
//! private MariaDB of the test binary.
//!
//! What is checked: the tables and rows are pgbench's (counts, sums, primary keys inline), every
//! run's commit count (Com_commit) and TPC-B invariant pass (or the commit count says why it
//! cannot be exact: select-only's autocommitted SELECTs), a script's captured values reach the
//! later statements (read back from the table after the run), and what cannot work on MySQL is
//! refused before connecting with a clear message.
//!
//! The runs are one test, one after the other: `Com_commit` is the server's global counter, and
//! a run beside another would only get "inconclusive".

mod common;

use common::stampede3 as stampede;
use testkit::MariaDb;

/// `stampede run ARGS -d URL --json FILE`: must succeed; the result and the committed
/// transactions (the text output's "actually processed").
fn run(url: &str, args: &[&str]) -> (serde_json::Value, u64) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-d", url, "--json", json.to_str().unwrap()]);
    let (code, out, err) = stampede(&all);
    assert_eq!(code, 0, "{args:?}\n{out}\n{err}");
    let committed = out
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.split('/').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{args:?}: no transaction count\n{out}"));
    let r = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (r, committed)
}

/// A check of a result: (status, detail).
fn check(r: &serde_json::Value, name: &str) -> (String, String) {
    let checks = r["checks"].as_array().unwrap();
    let c = checks
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {checks:?}"));
    (
        c["status"].as_str().unwrap().to_string(),
        c["detail"].as_str().unwrap_or("").to_string(),
    )
}

/// Both checks passed, the commit count with exactly `commits` COMMITs.
fn passed(r: &serde_json::Value, what: &str, commits: u64) {
    let (status, detail) = check(r, "commit count");
    assert_eq!(status, "passed", "{what}: {detail}");
    assert!(
        detail.contains(&format!("Com_commit moved by {commits} = {commits}")),
        "{what}: {detail}"
    );
    let (status, detail) = check(r, "TPC-B invariant");
    assert_eq!(status, "passed", "{what}: {detail}");
}

#[test]
fn tpcb_builtins_and_scripts_run_on_mariadb() {
    let m = MariaDb::shared();
    m.fresh_database("tpcb_my");
    let url = m.tcp_url("root", None, "tpcb_my");
    let (code, out, err) = stampede(&["init", "tpcb", "-s", "1", "-d", &url]);
    assert_eq!(code, 0, "init\n{out}\n{err}");
    let q = |sql: &str| m.sql(&format!("USE tpcb_my; {sql}")).trim().to_string();
    assert_eq!(
        q("SELECT COUNT(*), SUM(aid), SUM(abalance), SUM(bid) FROM pgbench_accounts"),
        "100000\t5000050000\t0\t100000"
    );
    assert_eq!(
        q("SELECT COUNT(*), SUM(bid), SUM(tbalance) FROM pgbench_tellers"),
        "10\t10\t0"
    );
    assert_eq!(
        q("SELECT COUNT(*), SUM(bbalance), COUNT(filler) FROM pgbench_branches"),
        "1\t0\t0"
    );
    assert_eq!(q("SELECT COUNT(*) FROM pgbench_history"), "0");
    let accounts = q("SHOW CREATE TABLE pgbench_accounts");
    assert!(accounts.contains("PRIMARY KEY (`aid`)"), "{accounts}");
    assert!(accounts.contains("ENGINE=InnoDB"), "{accounts}");

    // tpcb-like, simple mode: one COMMIT per transaction, the sums in step, one history row
    // per transaction (the history is emptied before the run, as pgbench does).
    let (r, n) = run(&url, &["tpcb-like", "-c", "4", "-t", "50"]);
    assert_eq!(n, 200);
    passed(&r, "tpcb-like", 200);
    assert_eq!(q("SELECT COUNT(*) FROM pgbench_history"), "200");
    let sums = q("SELECT (SELECT SUM(abalance) FROM pgbench_accounts) = \
                         (SELECT SUM(tbalance) FROM pgbench_tellers) AND \
                         (SELECT SUM(tbalance) FROM pgbench_tellers) = \
                         (SELECT SUM(bbalance) FROM pgbench_branches) AND \
                         (SELECT SUM(bbalance) FROM pgbench_branches) = \
                         (SELECT SUM(delta) FROM pgbench_history)");
    assert_eq!(sums, "1", "the four sums are equal");

    // simple-update, prepared statements (COM_STMT_PREPARE / EXECUTE).
    let (r, n) = run(
        &url,
        &["simple-update", "-c", "2", "-t", "30", "-M", "prepared"],
    );
    assert_eq!(n, 60);
    passed(&r, "simple-update -M prepared", 60);

    // select-only, extended mode: autocommitted SELECTs, which Com_commit does not count.
    let (r, n) = run(
        &url,
        &["select-only", "-c", "2", "-t", "50", "-M", "extended"],
    );
    assert_eq!(n, 100);
    let (status, detail) = check(&r, "commit count");
    assert_eq!(status, "skipped", "select-only: {detail}");
    assert!(detail.contains("autocommitted"), "{detail}");
    assert_eq!(check(&r, "TPC-B invariant").0, "passed");

    // A mix of builtins, prepared: the COMMITs are tpcb-like's (the history has one row per
    // tpcb-like transaction, emptied before the run).
    let (r, n) = run(
        &url,
        &[
            "-b",
            "tpcb-like@1",
            "-b",
            "select-only@1",
            "-c",
            "2",
            "-t",
            "20",
            "-M",
            "prepared",
        ],
    );
    assert_eq!(n, 40);
    let writes: u64 = q("SELECT COUNT(*) FROM pgbench_history").parse().unwrap();
    passed(&r, "tpcb-like + select-only", writes);

    // A custom script: \set, \gset, \aset, \if, \sleep, :var in SQL, an explicit transaction.
    // Each client owns one account (99001 + client_id), reads its balance into :bal with
    // \gset and writes :bal + 1 back: after N transactions the balance is N, and the filler
    // says which branch of the \if ran.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("own.sql");
    std::fs::write(
        &script,
        "\\set aid 99001 + :client_id\n\
         SELECT abalance AS bal, aid AS got FROM pgbench_accounts WHERE aid = :aid \\gset\n\
         SELECT 5 AS five, 7 AS seven \\aset\n\
         \\set total :five + :seven\n\
         \\if :got = :aid and :total = 12\n\
         UPDATE pgbench_accounts SET filler = 'seen' WHERE aid = :aid;\n\
         \\else\n\
         UPDATE pgbench_accounts SET filler = 'wrong' WHERE aid = :aid;\n\
         \\endif\n\
         \\sleep 1 ms\n\
         BEGIN;\n\
         UPDATE pgbench_accounts SET abalance = :bal + 1 WHERE aid = :aid;\n\
         COMMIT;\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    for mode in ["simple", "prepared", "extended"] {
        q("UPDATE pgbench_accounts SET abalance = 0, filler = '' WHERE aid IN (99001, 99002)");
        let (r, n) = run(&url, &["-f", script, "-c", "2", "-t", "10", "-M", mode]);
        assert_eq!(n, 20, "{mode}");
        let (status, detail) = check(&r, "commit count");
        assert_eq!(status, "passed", "script -M {mode}: {detail}");
        assert!(detail.contains("moved by 20 = 20"), "{mode}: {detail}");
        assert_eq!(
            q("SELECT aid, abalance, filler FROM pgbench_accounts \
               WHERE aid IN (99001, 99002) ORDER BY aid"),
            "99001\t10\tseen\n99002\t10\tseen",
            "-M {mode}"
        );
    }

    // Compound statements (`\;`) in simple mode: one COM_QUERY, several results, \aset
    // stores each; a NULL stores as an empty value. psql's :'name' is quoted in MySQL's way.
    let compound = dir.path().join("compound.sql");
    std::fs::write(
        &compound,
        "SELECT 40 AS a \\; SELECT 2 AS b \\; SELECT NULL AS c \\aset\n\
         UPDATE pgbench_accounts SET abalance = :a + :b, filler = 'c=:c.' WHERE aid = 99003;\n\
         UPDATE pgbench_accounts SET filler = :'q' WHERE aid = 99004;\n",
    )
    .unwrap();
    let (r, n) = run(
        &url,
        &[
            "-f",
            compound.to_str().unwrap(),
            "-D",
            "q=it's a\\b",
            "-c",
            "1",
            "-t",
            "1",
            "-M",
            "simple",
        ],
    );
    assert_eq!(n, 1);
    let (status, detail) = check(&r, "commit count");
    assert_eq!(status, "skipped", "autocommitted statements only: {detail}");
    assert_eq!(
        q("SELECT abalance, filler FROM pgbench_accounts WHERE aid = 99003"),
        "42\tc=."
    );
    // :'q' quoted for MySQL (a backslash means the same whatever the sql_mode).
    assert_eq!(
        q("SELECT HEX(filler) = HEX('it''s a\\\\b') FROM pgbench_accounts WHERE aid = 99004"),
        "1"
    );
}

#[test]
fn what_mysql_cannot_do_is_refused_before_connecting() {
    let m = MariaDb::shared();
    m.fresh_database("tpcb_bad");
    let url = m.tcp_url("root", None, "tpcb_bad");

    // pgbench's PostgreSQL-only load options.
    for opt in [
        &["--unlogged-tables"][..],
        &["--partitions", "2"],
        &["--tablespace", "x"],
        &["-F", "90"],
    ] {
        let mut args = vec!["init", "tpcb", "-d", &url];
        args.extend_from_slice(opt);
        let (code, _, err) = stampede(&args);
        assert_ne!(code, 0, "{opt:?}");
        assert!(err.contains("pgbench's tables on MySQL"), "{opt:?}: {err}");
        assert!(err.contains(opt[0]), "{opt:?}: {err}");
    }
    assert_eq!(
        m.sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'tpcb_bad'")
            .trim(),
        "0",
        "nothing created"
    );

    // A pipeline: MySQL has none.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("pipe.sql");
    std::fs::write(&script, "\\startpipeline\nSELECT 1;\n\\endpipeline\n").unwrap();
    let (code, _, err) = stampede(&[
        "run",
        "-f",
        script.to_str().unwrap(),
        "-M",
        "extended",
        "-d",
        &url,
        "-t",
        "1",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("\\startpipeline"), "{err}");
    assert!(err.contains("no pipeline mode"), "{err}");
    let (code, _, err) = stampede(&[
        "run",
        "tpcb-like-pipelined",
        "-M",
        "prepared",
        "-d",
        &url,
        "-t",
        "1",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("pipelines its statements"), "{err}");

    // pgbench's drop-in is a PostgreSQL client.
    let (code, _, err) = stampede(&["pgbench", "-d", &url, "-t", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("pgbench's drop-in"), "{err}");

    // pgbench's END in a user's script is the user's SQL: MySQL's own syntax error, with the
    // script's file and line.
    let script = dir.path().join("end.sql");
    std::fs::write(&script, "BEGIN;\nSELECT 1;\nEND;\n").unwrap();
    let (code, out, err) = stampede(&[
        "run",
        "-f",
        script.to_str().unwrap(),
        "-d",
        &url,
        "-t",
        "1",
        "--no-check",
    ]);
    assert_ne!(code, 0, "{out}\n{err}");
    let all = format!("{out}\n{err}");
    assert!(all.contains("SQL syntax"), "{all}");
    assert!(all.contains("end.sql:3"), "{all}");
}
