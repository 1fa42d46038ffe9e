//! pgbench's tests with a server (`src/bin/pgbench/t/001_pgbench_with_server.pl`,
//! REL_18_STABLE), reproduced against `stampede pgbench`, in upstream's order (later cases use
//! the tables earlier ones create): same case names, command lines, expected statuses, regular
//! expressions on standard output and standard error, script files, and the server-side checks
//! (table contents after `-i`, seeded random values stored by two runs, the server log's
//! parameter reports, the `-l` log files and their line format).
//!
//! One PostgreSQL 15 server for the binary (`node`). Cases that need a newer server are recorded
//! as skipped, with the reason, when the server is older:
//! - "parameter report does not truncate", "parameter report truncates": the server log says
//!   `DETAIL:  Parameters:` from 17 on (`parameters:` before);
//! - "SET LOCAL inside implicit transaction block of pipeline", "LOCK TABLE inside implicit
//!   transaction block of pipeline": a pipeline's later commands run inside its implicit
//!   transaction block from 18 on.
//!
//! `STAMPEDE_PGBENCH_UNDER_TEST=/usr/bin/pgbench` runs the suite against a real pgbench (the
//! harness's own check). The listing of every check is printed (`--nocapture` shows it); the test
//! fails when a check outside upstream's TODO block fails.

#[path = "common/pgbench_tap.rs"]
mod tap;

#[path = "pgbench_with_server/node.rs"]
mod node;

#[path = "pgbench_with_server/setup_init_runs.rs"]
mod setup_init_runs;

#[path = "pgbench_with_server/scripts.rs"]
mod scripts;

#[path = "pgbench_with_server/pipelines.rs"]
mod pipelines;

#[path = "pgbench_with_server/errors.rs"]
mod errors;

#[path = "pgbench_with_server/runs.rs"]
mod runs;

#[test]
fn pgbench_001_with_server() {
    let mut n = node::Node::start();
    // tablespace for testing, because partitioned tables cannot use pg_default explicitly
    let ts = setup_init_runs::tablespace(&mut n);

    setup_init_runs::run(&mut n);
    scripts::run(&mut n);
    errors::run(&mut n);
    runs::run(&mut n);

    // done
    n.safe_psql("postgres", "DROP TABLESPACE regress_pgbench_tap_1_ts");
    drop(ts);
    n.tap.finish();
}
