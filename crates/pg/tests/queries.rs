//! Statements against a real PostgreSQL 15 (the embedded server, over its private unix socket):
//! the three query modes, errors mid-session, pipelines, COPY, and the wire-level commit count
//! reconciled with pg_stat_database.

mod trips;

use std::time::{Duration, Instant};

use pg::embedded::{EmbeddedOptions, EmbeddedServer};
use pg::{Error, QueryMode, Session, StmtResult, Value};

fn server() -> EmbeddedServer {
    let opts = EmbeddedOptions {
        settings: vec![
            ("shared_buffers".into(), "32MB".into()),
            ("max_connections".into(), "20".into()),
            ("fsync".into(), "off".into()),
            ("autovacuum".into(), "off".into()),
        ],
        ..Default::default()
    };
    EmbeddedServer::start(&opts).expect("embedded server")
}

async fn connect(srv: &EmbeddedServer) -> Session {
    Session::connect(&srv.conn_config())
        .await
        .expect("connect over the unix socket")
}

fn db_code(r: Result<StmtResult, Error>) -> String {
    match r {
        Err(Error::Db(e)) => e.code,
        other => panic!("expected Error::Db, got {other:?}"),
    }
}

const MODES: [QueryMode; 3] = [QueryMode::Simple, QueryMode::Extended, QueryMode::Prepared];

#[tokio::test]
async fn three_modes_return_rows_and_counts() {
    let srv = server();
    let mut s = connect(&srv).await;
    s.simple_query(
        "CREATE TABLE t (id int PRIMARY KEY, v text, f float8, b bool);
         INSERT INTO t SELECT g, 'v' || g, 0, false FROM generate_series(1, 10) g;",
    )
    .await
    .unwrap();
    for (m, mode) in MODES.into_iter().enumerate() {
        s.simple_query("UPDATE t SET f = 0, b = false")
            .await
            .unwrap();
        let sel = s.register("SELECT id, v, f, b FROM t WHERE id = $1", mode);
        let upd = s.register("UPDATE t SET f = $2, b = $3 WHERE id <= $1", mode);
        let ins = s.register("INSERT INTO t (id, v) VALUES ($1, $2)", mode);
        let range = s.register(
            "SELECT id FROM t WHERE id BETWEEN $1 AND $2 ORDER BY id",
            mode,
        );
        if mode == QueryMode::Prepared {
            // `sel` is prepared on first use; the others by prepare_all.
            assert_eq!(
                s.execute(sel, &[Value::Int(3)]).await.unwrap(),
                StmtResult {
                    rows: 1,
                    affected: 1
                }
            );
            s.prepare_all().await.unwrap();
        }
        let r = s.execute(sel, &[Value::Int(2)]).await.unwrap();
        assert_eq!(
            r,
            StmtResult {
                rows: 1,
                affected: 1
            },
            "{mode:?}"
        );
        assert_eq!(
            s.first_row().unwrap(),
            vec![Some("2"), Some("v2"), Some("0"), Some("f")]
        );

        let r = s
            .execute(upd, &[Value::Int(3), Value::Float(0.25), Value::Bool(true)])
            .await
            .unwrap();
        assert_eq!(
            r,
            StmtResult {
                rows: 0,
                affected: 3
            },
            "{mode:?}"
        );
        assert_eq!(s.first_row(), None);
        s.execute(sel, &[Value::Int(3)]).await.unwrap();
        assert_eq!(s.first_row().unwrap()[2..], [Some("0.25"), Some("t")]);

        let id = 100 + m as i64;
        let r = s
            .execute(ins, &[Value::Int(id), Value::Null])
            .await
            .unwrap();
        assert_eq!(
            r,
            StmtResult {
                rows: 0,
                affected: 1
            }
        );
        s.execute(sel, &[Value::Int(id)]).await.unwrap();
        assert_eq!(
            s.first_row().unwrap(),
            vec![Some(id.to_string().as_str()), None, None, None]
        );

        // Several rows: counted, only the first kept.
        let r = s
            .execute(range, &[Value::Int(4), Value::Int(9)])
            .await
            .unwrap();
        assert_eq!(
            r,
            StmtResult {
                rows: 6,
                affected: 6
            }
        );
        assert_eq!(s.first_row().unwrap(), vec![Some("4")]);
        // No rows.
        let r = s.execute(sel, &[Value::Int(-1)]).await.unwrap();
        assert_eq!(
            r,
            StmtResult {
                rows: 0,
                affected: 0
            }
        );
        assert_eq!(s.first_row(), None);
        assert_eq!(s.transaction_status(), b'I');
    }
    // Text parameters: verbatim in simple mode (the caller quotes), typed by the server otherwise.
    let q = s.register("SELECT $1::text || '!'", QueryMode::Simple);
    s.execute(q, &[Value::Text("'it''s'")]).await.unwrap();
    assert_eq!(s.first_row().unwrap(), vec![Some("it's!")]);
    let q = s.register("SELECT $1::text || '!'", QueryMode::Extended);
    s.execute(q, &[Value::Text("it's")]).await.unwrap();
    assert_eq!(s.first_row().unwrap(), vec![Some("it's!")]);
    // Prepared statements are named s0, s1, ... and parsed once.
    let names = s
        .simple_query("SELECT name FROM pg_prepared_statements ORDER BY name")
        .await
        .unwrap();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names
        .iter()
        .all(|r| r[0].as_deref().unwrap().starts_with('s')));
    // simple_query returns every row of every result, NULL as None.
    let rows = s
        .simple_query("SELECT 1, NULL::int; SELECT 'a' UNION ALL SELECT 'b'")
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Some("1".into()), None],
            vec![Some("a".into())],
            vec![Some("b".into())]
        ]
    );
    assert!(s.simple_query("").await.unwrap().is_empty());
    s.close().await;
}

#[tokio::test]
async fn errors_leave_the_session_usable() {
    let srv = server();
    let mut s = connect(&srv).await;
    s.simple_query("CREATE TABLE e (id int PRIMARY KEY)")
        .await
        .unwrap();
    for mode in MODES {
        let div = s.register("SELECT 10 / $1", mode);
        let ins = s.register("INSERT INTO e VALUES ($1)", mode);
        assert_eq!(
            db_code(s.execute(div, &[Value::Int(0)]).await),
            "22012",
            "{mode:?}"
        );
        assert!(s.is_usable());
        assert_eq!(s.transaction_status(), b'I');
        assert_eq!(s.execute(div, &[Value::Int(5)]).await.unwrap().rows, 1);
        assert_eq!(s.first_row().unwrap(), vec![Some("2")]);
        // Inside a transaction block: failed state, then ROLLBACK.
        s.simple_query("BEGIN").await.unwrap();
        assert_eq!(s.transaction_status(), b'T');
        s.execute(ins, &[Value::Int(1)]).await.unwrap();
        assert_eq!(db_code(s.execute(ins, &[Value::Int(1)]).await), "23505");
        assert_eq!(s.transaction_status(), b'E');
        assert_eq!(db_code(s.execute(div, &[Value::Int(1)]).await), "25P02");
        s.simple_query("ROLLBACK").await.unwrap();
        assert_eq!(s.transaction_status(), b'I');
    }
    // A prepared statement whose Parse fails stays unprepared: the same error comes back, not
    // "prepared statement does not exist".
    let bad = s.register("SELEC 1", QueryMode::Prepared);
    let good = s.register("SELECT 1", QueryMode::Prepared);
    match s.prepare_all().await {
        Err(Error::Db(e)) => assert_eq!(e.code, "42601"),
        other => panic!("{other:?}"),
    }
    assert_eq!(db_code(s.execute(bad, &[]).await), "42601");
    assert_eq!(db_code(s.execute(bad, &[]).await), "42601");
    assert_eq!(s.execute(good, &[]).await.unwrap().rows, 1);
    // Wrong number of parameters: the server's error in extended modes.
    let two = s.register("SELECT $1::int + $2::int", QueryMode::Extended);
    assert_eq!(db_code(s.execute(two, &[Value::Int(1)]).await), "08P01");
    assert!(s.is_usable());
    assert!(matches!(s.simple_query("SELECT 1/0").await, Err(Error::Db(e)) if e.code == "22012"));
    assert_eq!(
        s.simple_query("SELECT 7").await.unwrap(),
        vec![vec![Some("7".to_string())]]
    );
    s.close().await;
}

#[tokio::test]
async fn pipeline_with_an_error_in_the_middle() {
    let srv = server();
    let mut s = connect(&srv).await;
    s.simple_query("CREATE TABLE p (id int)").await.unwrap();
    for mode in [QueryMode::Extended, QueryMode::Prepared] {
        s.simple_query("TRUNCATE p").await.unwrap();
        let ins = s.register("INSERT INTO p VALUES ($1)", mode);
        let div = s.register("SELECT 1 / $1", mode);
        let cnt = s.register("SELECT count(*) FROM p", mode);
        // Segment 1: insert, failing division, insert -> the insert is rolled back (one implicit
        // transaction up to Sync), the third statement is skipped.
        s.queue(ins, &[Value::Int(1)]);
        s.queue(div, &[Value::Int(0)]);
        s.queue(ins, &[Value::Int(2)]);
        s.queue_sync();
        // Segment 2: runs normally.
        s.queue(ins, &[Value::Int(3)]);
        s.queue(cnt, &[]);
        s.queue_sync();
        s.flush().await.unwrap();
        assert_eq!(
            s.read_result().await.unwrap(),
            StmtResult {
                rows: 0,
                affected: 1
            }
        );
        match s.read_result().await {
            Err(Error::Db(e)) => assert_eq!(e.code, "22012"),
            other => panic!("{other:?}"),
        }
        match s.read_result().await {
            Err(e) => assert_eq!(e.sqlstate(), Some("PIPAB")),
            other => panic!("{other:?}"),
        }
        s.read_ready().await.unwrap();
        assert_eq!(s.read_result().await.unwrap().affected, 1);
        assert_eq!(s.read_result().await.unwrap().rows, 1);
        assert_eq!(s.first_row().unwrap(), vec![Some("1")]);
        s.read_ready().await.unwrap();
        // Skipping read_ready between segments works too.
        s.queue(cnt, &[]);
        s.queue_sync();
        s.queue(div, &[Value::Int(1)]);
        s.queue_sync();
        s.flush().await.unwrap();
        assert_eq!(s.read_result().await.unwrap().rows, 1);
        assert_eq!(s.read_result().await.unwrap().rows, 1);
        s.read_ready().await.unwrap();
        // An error nobody read is reported by read_ready; the session stays usable.
        s.queue(div, &[Value::Int(0)]);
        s.queue_sync();
        s.flush().await.unwrap();
        assert!(matches!(s.read_ready().await, Err(Error::Db(e)) if e.code == "22012"));
        assert_eq!(s.execute(cnt, &[]).await.unwrap().rows, 1);
        assert_eq!(s.first_row().unwrap(), vec![Some("1")]);
    }
    s.close().await;
}

#[tokio::test]
async fn copy_in_100k_rows() {
    let srv = server();
    let mut s = connect(&srv).await;
    s.simple_query("CREATE TABLE c (a int, b text)")
        .await
        .unwrap();
    trips::copy_rows(&mut s, "c", 100_000).await;

    // CopyFail rolls back; the session carries on.
    s.copy_in("COPY c FROM STDIN").await.unwrap();
    s.copy_data(b"1\tx\n").await.unwrap();
    s.copy_fail("test abort").await.unwrap();
    assert_eq!(
        s.simple_query("SELECT count(*) FROM c").await.unwrap()[0][0].as_deref(),
        Some("100000")
    );
    // Bad data: the server's error at copy_finish.
    s.copy_in("COPY c FROM STDIN").await.unwrap();
    s.copy_data(b"not-a-number\tx\n").await.unwrap();
    assert!(matches!(s.copy_finish().await, Err(Error::Db(e)) if e.code == "22P02"));
    // copy_in on a statement that is not COPY FROM STDIN.
    assert!(matches!(s.copy_in("SELECT 1").await, Err(Error::Config(_))));
    assert!(
        matches!(s.copy_in("COPY nosuch FROM STDIN").await, Err(Error::Db(e)) if e.code == "42P01")
    );
    assert!(s.is_usable());
    assert_eq!(s.simple_query("SELECT 1").await.unwrap().len(), 1);
    s.close().await;
}

/// xact_commit of database `db`, once the backend `pid` has exited (a backend flushes its
/// statistics before it leaves pg_stat_activity).
async fn xact_commit_after_exit(obs: &mut Session, db: &str, pid: i32) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = obs
            .simple_query(&format!(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}"
            ))
            .await
            .unwrap();
        if n[0][0].as_deref() == Some("0") {
            break;
        }
        assert!(Instant::now() < deadline, "backend {pid} did not exit");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = obs
        .simple_query(&format!(
            "SELECT pg_stat_clear_snapshot(); SELECT xact_commit FROM pg_stat_database WHERE datname = '{db}'"
        ))
        .await
        .unwrap();
    r.last().unwrap()[0].as_deref().unwrap().parse().unwrap()
}

#[tokio::test]
async fn server_commits_match_pg_stat_database() {
    let srv = server();
    let mut obs = connect(&srv).await;
    obs.simple_query("CREATE DATABASE commits").await.unwrap();
    let cfg = srv.conn_config().with_dbname("commits");

    // What connecting and disconnecting alone costs, as the server counts it.
    let x0 = xact_commit_after_exit(&mut obs, "commits", 0).await;
    let s = Session::connect(&cfg).await.unwrap();
    let pid = s.backend_pid();
    s.close().await;
    let x1 = xact_commit_after_exit(&mut obs, "commits", pid).await;
    let baseline = x1 - x0;

    let mut s = Session::connect(&cfg).await.unwrap();
    s.simple_query("CREATE TABLE a (id int PRIMARY KEY, n int); INSERT INTO a VALUES (1, 0)")
        .await
        .unwrap(); // 1
    let sel = s.register("SELECT 1", QueryMode::Simple);
    let upd = s.register("UPDATE a SET n = n + 1 WHERE id = $1", QueryMode::Simple);
    let div = s.register("SELECT 1 / $1", QueryMode::Extended);
    s.execute(sel, &[]).await.unwrap(); // 2
    s.simple_query("BEGIN").await.unwrap();
    s.execute(upd, &[Value::Int(1)]).await.unwrap();
    s.simple_query("COMMIT").await.unwrap(); // 3
    s.simple_query("BEGIN").await.unwrap();
    s.execute(upd, &[Value::Int(1)]).await.unwrap();
    s.simple_query("ROLLBACK").await.unwrap();
    s.execute(div, &[Value::Int(0)]).await.unwrap_err();
    s.simple_query("BEGIN").await.unwrap();
    s.execute(div, &[Value::Int(0)]).await.unwrap_err();
    s.simple_query("COMMIT").await.unwrap(); // tagged ROLLBACK
    let p1 = s.register("SELECT n FROM a WHERE id = $1", QueryMode::Prepared);
    let p2 = s.register("UPDATE a SET n = n + 1 WHERE id = $1", QueryMode::Prepared);
    s.prepare_all().await.unwrap(); // 4
    s.execute(p1, &[Value::Int(1)]).await.unwrap(); // 5
    s.execute(p2, &[Value::Int(1)]).await.unwrap(); // 6
    s.queue(p1, &[Value::Int(1)]);
    s.queue(p2, &[Value::Int(1)]);
    s.queue_sync(); // 7
    s.queue(p2, &[Value::Int(1)]);
    s.queue(div, &[Value::Int(0)]);
    s.queue_sync();
    s.flush().await.unwrap();
    s.read_result().await.unwrap();
    s.read_result().await.unwrap();
    s.read_ready().await.unwrap();
    s.read_result().await.unwrap();
    s.read_result().await.unwrap_err();
    s.read_ready().await.unwrap();
    s.simple_query("BEGIN; SELECT 1; COMMIT; SELECT 2")
        .await
        .unwrap(); // 8, 9
    s.execute(div, &[Value::Int(1)]).await.unwrap(); // 10
    s.simple_query("COMMIT").await.unwrap(); // 11: no transaction in progress, still a commit
    assert_eq!(s.server_commits(), 11);
    let pid = s.backend_pid();
    s.close().await;
    let x2 = xact_commit_after_exit(&mut obs, "commits", pid).await;
    assert_eq!(
        x2 - x1 - baseline,
        11,
        "server delta {} (baseline {baseline})",
        x2 - x1
    );
    obs.close().await;
}

/// Requests and replies far larger than a socket buffer: the session is registered for read
/// readiness only (session/socket.rs) until a send finds the buffer full, then re-registered for
/// writes and waits for them. A lost wake-up would hang (the timeout turns that into a failure);
/// a wrong partial send would garble the statement, which the server's own comparison catches.
#[tokio::test]
async fn statements_larger_than_the_socket_buffer_go_out_whole_and_replies_come_back_whole() {
    let srv = server();
    let mut s = connect(&srv).await;
    tokio::time::timeout(
        Duration::from_secs(120),
        trips::large_statements_and_replies(&mut s),
    )
    .await
    .expect("large statements complete (no lost write or read readiness)");
    // Still usable for small round trips after the re-registration.
    let rows = s.simple_query("SELECT 1").await.unwrap();
    assert_eq!(rows[0][0].as_deref(), Some("1"));
}

/// Notices are kept for the caller, and errors carry what libpq shows: CONTEXT, and the cursor
/// display of a position (psql prints the same text for the same statements).
#[tokio::test]
async fn notices_and_error_fields_are_rendered_as_libpq_renders_them() {
    let srv = server();
    let mut s = connect(&srv).await;
    assert!(!s.has_notices());
    s.simple_query("SET LOCAL work_mem = '8MB'").await.unwrap();
    assert!(s.has_notices());
    let n = s.take_notices();
    assert_eq!(n.len(), 1);
    assert_eq!(
        n[0].to_string(),
        "WARNING:  SET LOCAL can only be used in transaction blocks"
    );
    assert!(!s.has_notices());

    // A syntax error: the position points into the text that was sent.
    match s.simple_query("select count(*) frm pgbench_branches").await {
        Err(Error::Db(e)) => assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \"pgbench_branches\"\n\
             LINE 1: select count(*) frm pgbench_branches\n\
             \x20                           ^"
        ),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    // In simple mode the values are interpolated before the server parses, so the cursor
    // points into the interpolated text.
    let st = s.register("SELECT $1 + , 1", QueryMode::Simple);
    match s.execute(st, &[Value::Int(42)]).await {
        Err(Error::Db(e)) => assert_eq!(
            e.to_string(),
            "ERROR:  syntax error at or near \",\"\nLINE 1: SELECT 42 + , 1\n\x20                   ^"
        ),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    // An error inside a bound portal: with log_parameter_max_length_on_error the server names
    // the parameters in CONTEXT (pgbench's TAP test sets it too).
    s.simple_query("SET log_parameter_max_length_on_error = -1")
        .await
        .unwrap();
    let div = s.register("SELECT $1::int / $2::int", QueryMode::Extended);
    match s.execute(div, &[Value::Int(1), Value::Int(0)]).await {
        Err(Error::Db(e)) => {
            assert_eq!(e.code, "22012");
            assert_eq!(
                e.to_string(),
                "ERROR:  division by zero\nCONTEXT:  unnamed portal with parameters: $1 = '1', $2 = '0'"
            );
        }
        other => panic!("expected division by zero, got {other:?}"),
    }
    // The session is still usable after each.
    let one = s.register("SELECT 1", QueryMode::Prepared);
    assert_eq!(s.execute(one, &[]).await.unwrap().rows, 1);
    s.close().await;
}

/// A backend terminated while its client was idle: the server sent FATAL 57P01 and closed the
/// socket, so the client's next send fails (EPIPE on a unix socket) before any read. The error
/// is still the server's message, as libpq reports it, not a lost connection: a fault run
/// classifies it as "terminated by administrator".
#[tokio::test]
async fn a_terminated_idle_session_reports_the_servers_fatal_message() {
    let srv = server();
    let mut s = connect(&srv).await;
    let mut obs = connect(&srv).await;
    let pid = s.backend_pid();
    obs.simple_query(&format!("SELECT pg_terminate_backend({pid})"))
        .await
        .unwrap();
    let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}");
    let t0 = Instant::now();
    while obs.simple_query(&gone).await.unwrap()[0][0].as_deref() != Some("0") {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "backend {pid} still runs"
        );
    }
    // The backend leaves pg_stat_activity before its process exits and its socket closes: wait
    // for the process itself (same machine), so the send below finds the socket closed.
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "backend {pid} exists"
        );
        tokio::task::yield_now().await;
    }
    match s.simple_query("SELECT 1").await {
        Err(Error::Db(e)) => assert_eq!(e.code, "57P01", "{e:?}"),
        other => panic!("expected the server's FATAL 57P01, got {other:?}"),
    }
    assert!(!s.is_usable());
    obs.close().await;
}
