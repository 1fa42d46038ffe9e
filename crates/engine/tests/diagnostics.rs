//! What the engine reports as it happens, against a real PostgreSQL: a client whose setup the
//! server refuses aborts (the run goes on and ends), a server's notices reach the caller, and
//! with `RunSpec::say` they are said on the worker's thread, in order with what the workload
//! printed itself.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use engine::{Event, RunSpec, Stop};
use sut::{Error, QueryMode, Session, StmtId};
use testkit::{Pg, THROWAWAY};
use workload::{ClientWorkload, TxnContext, TxnType, Workload};

/// One statement per transaction; `setup` is prepared on connect.
struct OneStatement {
    types: Vec<TxnType>,
    setup: &'static str,
    sql: &'static str,
    /// Where each client writes "sent" before each statement, as a script's `--debug` trace
    /// does (`None`: it says nothing).
    trace: Option<Arc<Mutex<Vec<String>>>>,
}

struct Client {
    setup: &'static str,
    sql: &'static str,
    stmt: Option<StmtId>,
    trace: Option<Arc<Mutex<Vec<String>>>>,
}

impl Workload for OneStatement {
    type Client = Client;
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }
    fn new_client(&self, _id: u32) -> Client {
        Client {
            setup: self.setup,
            sql: self.sql,
            stmt: None,
            trace: self.trace.clone(),
        }
    }
}

impl ClientWorkload for Client {
    async fn on_connect(&mut self, s: &mut Session, mode: QueryMode) -> Result<(), Error> {
        s.register(self.setup, QueryMode::Prepared);
        self.stmt = Some(s.register(self.sql, mode));
        s.prepare_all().await
    }
    async fn execute(
        &mut self,
        _txn: usize,
        s: &mut Session,
        _cx: &mut TxnContext<'_>,
    ) -> Result<(), Error> {
        if let Some(t) = &self.trace {
            t.lock().unwrap().push("sent".into());
        }
        s.execute(self.stmt.expect("registered"), &[])
            .await
            .map(|_| ())
    }
}

fn spec(clients: u32) -> RunSpec {
    RunSpec {
        seed: 1,
        ..RunSpec::new(clients, 2, Stop::Transactions(3), QueryMode::Simple)
    }
}

fn run(pg: &Pg, w: OneStatement, clients: u32) -> (engine::Outcome, Vec<String>, Vec<String>) {
    run_spec(pg, w, &spec(clients))
}

fn run_spec(
    pg: &Pg,
    w: OneStatement,
    spec: &RunSpec,
) -> (engine::Outcome, Vec<String>, Vec<String>) {
    let w = Arc::new(OneStatement {
        types: vec![TxnType {
            name: "one".into(),
            statements: vec![w.sql.into()],
        }],
        ..w
    });
    let (mut aborts, mut notices) = (Vec::new(), Vec::new());
    let out = engine::run(
        spec,
        w,
        &sut::Target::from(pg.conn_config().clone()),
        Arc::new(AtomicBool::new(false)),
        &mut |e| match e {
            Event::Aborted(a) => aborts.push(format!("{}: {}", a.client_id, a.reason)),
            Event::Notice(n) => notices.push(n.to_string()),
            _ => {}
        },
    )
    .expect("the run itself succeeds");
    (out, aborts, notices)
}

#[test]
fn a_refused_setup_aborts_its_clients_and_the_run_still_ends() {
    let pg = Pg::start(&[THROWAWAY]);
    let w = OneStatement {
        types: vec![],
        setup: "SELEC 1",
        sql: "SELECT 1",
        trace: None,
    };
    let (out, aborts, _) = run(&pg, w, 4);
    // Every client aborted before its first transaction: nothing ran, nothing failed.
    assert_eq!(out.aborted.len(), 4);
    assert_eq!(aborts.len(), 4, "each abort is reported as it happens");
    assert!(
        aborts[0].contains("ERROR:  syntax error at or near \"SELEC\""),
        "{aborts:?}"
    );
    assert_eq!(out.total.total().committed(), 0);
    assert_eq!(out.total.total().failed(), 0);
    assert_eq!(out.connections, 4);
}

#[test]
fn notices_reach_the_caller_as_they_arrive() {
    let pg = Pg::start(&[THROWAWAY]);
    let w = OneStatement {
        types: vec![],
        setup: "SELECT 1",
        sql: "SET LOCAL work_mem = '8MB'",
        trace: None,
    };
    let (out, aborts, notices) = run(&pg, w, 2);
    assert!(aborts.is_empty(), "{aborts:?}");
    assert_eq!(out.total.total().committed(), 6);
    // One warning per transaction: 2 clients x 3.
    assert_eq!(notices.len(), 6, "{notices:?}");
    assert!(notices
        .iter()
        .all(|n| n == "WARNING:  SET LOCAL can only be used in transaction blocks"));
}

#[test]
fn said_in_place_notices_fall_in_order_with_the_workload_s_own_lines() {
    let pg = Pg::start(&[THROWAWAY]);
    let trace = Arc::new(Mutex::new(Vec::new()));
    let caller = std::thread::current().id();
    let said = trace.clone();
    let spec = RunSpec {
        say: Some(engine::Say(Arc::new(move |e| {
            assert_ne!(std::thread::current().id(), caller, "said on a worker");
            if let Event::Notice(n) = e {
                said.lock().unwrap().push(n.to_string());
            }
        }))),
        ..RunSpec::new(1, 1, Stop::Transactions(3), QueryMode::Simple)
    };
    let w = OneStatement {
        types: vec![],
        setup: "SELECT 1",
        sql: "SET LOCAL work_mem = '8MB'",
        trace: Some(trace.clone()),
    };
    let (out, aborts, notices) = run_spec(&pg, w, &spec);
    assert!(aborts.is_empty(), "{aborts:?}");
    assert_eq!(out.total.total().committed(), 3);
    assert!(notices.is_empty(), "said in place, not again: {notices:?}");
    // Each statement's warning before the next statement is sent, as pgbench prints them.
    let warning = "WARNING:  SET LOCAL can only be used in transaction blocks";
    assert_eq!(
        *trace.lock().unwrap(),
        ["sent", warning, "sent", warning, "sent", warning]
    );
}
