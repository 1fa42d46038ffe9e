//! 001, last part: throttling and the latency limit, the transaction log files (`-l`, sampling,
//! their names and line format), client aborts, serialization failures and deadlocks retried
//! (`--max-tries`, `--verbose-errors`, the `--debug` trace), `--exit-on-abort`, and COPY.
//!
//! Perl constructs rewritten: the serialization case's stderr pattern uses backreferences
//! (`(client (0|1) sending UPDATE ...).*client \2 got an error ....*\1`, `/s`), checked here by
//! looking, after each match of the first group, for the error line of the same client and then
//! for the same UPDATE text again; this is what Perl's backtracking search accepts.

use std::path::Path;

use regex::Regex;

use crate::node::{file, Node};
use crate::tap::{qr, qr_rewritten, Check};

const SERIALIZATION: &str = r#"
-- What's happening:
-- The first client starts the transaction with the isolation level Repeatable
-- Read:
--
-- BEGIN;
-- UPDATE xy SET y = ... WHERE x = 1;
--
-- The second client starts a similar transaction with the same isolation level:
--
-- BEGIN;
-- UPDATE xy SET y = ... WHERE x = 1;
-- <waiting for the first client>
--
-- The first client commits its transaction, and the second client gets a
-- serialization error.

\set delta random(-5000, 5000)

-- The second client will stop here
SELECT pg_advisory_lock(0);

-- Start transaction with concurrent update
BEGIN;
UPDATE xy SET y = y + :delta WHERE x = 1 AND pg_advisory_lock(1) IS NOT NULL;

-- Wait for the second client
DO $$
DECLARE
  exists boolean;
  waiters integer;
BEGIN
  -- The second client always comes in second, and the number of rows in the
  -- table first_client_table reflect this. Here the first client inserts a row,
  -- so the second client will see a non-empty table when repeating the
  -- transaction after the serialization error.
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF NOT exists THEN
	-- Let the second client begin
	PERFORM pg_advisory_unlock(0);
	-- And wait until the second client tries to get the same lock
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 1::bigint) AND NOT granted;
	  IF waiters = 1 THEN
		INSERT INTO first_client_table VALUES (1);

		-- Exit loop
		EXIT;
	  END IF;
	END LOOP;
  END IF;
END$$;

COMMIT;
SELECT pg_advisory_unlock_all();
"#;

const DEADLOCK: &str = r#"
-- What's happening:
-- The first client gets the lock 2.
-- The second client gets the lock 3 and tries to get the lock 2.
-- The first client tries to get the lock 3 and one of them gets a deadlock
-- error.
--
-- A client that does not get a deadlock error must hold a lock at the
-- transaction start. Thus in the end it releases all of its locks before the
-- client with the deadlock error starts a retry (we do not want any errors
-- again).

-- Since the client with the deadlock error has not released the blocking locks,
-- let's do this here.
SELECT pg_advisory_unlock_all();

-- The second client and the client with the deadlock error stop here
SELECT pg_advisory_lock(0);
SELECT pg_advisory_lock(1);

-- The second client and the client with the deadlock error always come after
-- the first and the number of rows in the table first_client_table reflects
-- this. Here the first client inserts a row, so in the future the table is
-- always non-empty.
DO $$
DECLARE
  exists boolean;
BEGIN
  SELECT EXISTS (SELECT * FROM first_client_table) INTO STRICT exists;
  IF exists THEN
	-- We are the second client or the client with the deadlock error

	-- The first client will take care by itself of this lock (see below)
	PERFORM pg_advisory_unlock(0);

	PERFORM pg_advisory_lock(3);

	-- The second client can get a deadlock here
	PERFORM pg_advisory_lock(2);
  ELSE
	-- We are the first client

	-- This code should not be used in a new transaction after an error
	INSERT INTO first_client_table VALUES (1);

	PERFORM pg_advisory_lock(2);
  END IF;
END$$;

DO $$
DECLARE
  num_rows integer;
  waiters integer;
BEGIN
  -- Check if we are the first client
  SELECT COUNT(*) FROM first_client_table INTO STRICT num_rows;
  IF num_rows = 1 THEN
	-- This code should not be used in a new transaction after an error
	INSERT INTO first_client_table VALUES (2);

	-- Let the second client begin
	PERFORM pg_advisory_unlock(0);
	PERFORM pg_advisory_unlock(1);

	-- Make sure the second client is ready for deadlock
	LOOP
	  SELECT COUNT(*) INTO STRICT waiters FROM pg_locks WHERE
	  locktype = 'advisory' AND
	  objsubid = 1 AND
	  ((classid::bigint << 32) | objid::bigint = 2::bigint) AND
	  NOT granted;

	  IF waiters = 1 THEN
	    -- Exit loop
		EXIT;
	  END IF;
	END LOOP;

	PERFORM pg_advisory_lock(0);
    -- And the second client took care by itself of the lock 1
  END IF;
END$$;

-- The first client can get a deadlock here
SELECT pg_advisory_lock(3);

SELECT pg_advisory_unlock_all();
"#;

const EXIT_ON_ABORT: &str = r"
update counter set i = i+1 returning i \gset
\if :i = 5
\set y 1/0
\endif
";

/// Upstream's `check_pgbench_logs`: `nb` files named `prefix.PID[.N]` in `dir`, each with
/// `min..=max` lines, every line matching `re`.
fn check_pgbench_logs(
    n: &mut Node,
    dir: &Path,
    prefix: &str,
    nb: usize,
    min: usize,
    max: usize,
    re: &Check,
) {
    let name_re = Regex::new(&format!(r"^{}\..*(?:\n?\z)", regex::escape(prefix))).unwrap();
    let mut logs: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| name_re.is_match(f))
        .map(|f| format!("{}/{f}", dir.display()))
        .collect();
    n.tap.ok(logs.len() == nb, "number of log files", || {
        format!("{logs:?}")
    });
    let format_re = Regex::new(&format!(
        r"/{}\.\d+(\.\d+)?(?:\n?\z)",
        regex::escape(prefix)
    ))
    .unwrap();
    let good = logs.iter().filter(|l| format_re.is_match(l)).count();
    n.tap
        .ok(good == nb, "file name format", || format!("{logs:?}"));
    logs.sort();
    for log in &logs {
        let raw = std::fs::read_to_string(log).unwrap();
        // Perl's split /\n/ drops trailing empty fields.
        let mut lines: Vec<&str> = raw.split('\n').collect();
        while lines.last() == Some(&"") {
            lines.pop();
        }
        let clen = lines.len();
        n.tap.ok(
            min <= clen && clen <= max,
            &format!("transaction count for {log} ({clen})"),
            || raw.clone(),
        );
        let bad: Vec<&&str> = lines.iter().filter(|l| !re.is_match(l)).collect();
        n.tap.ok(
            bad.is_empty(),
            &format!("transaction format for {prefix}"),
            || {
                bad.iter()
                    .map(|l| format!("Log entry not matching: {l}\n"))
                    .collect()
            },
        );
    }
}

/// The serialization case's stderr: `(A).*client \2 B.*\1` under `/s`, where A is
/// `client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b` and B the error of the same client.
fn serialization_pattern() -> Check {
    let first = Regex::new(r"client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b").unwrap();
    qr_rewritten(
        r"(client (0|1) sending UPDATE xy SET y = y \+ -?\d+\b).*client \2 got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update\b.*\1",
        "s",
        move |text| {
            first.captures_iter(text).any(|c| {
                let whole = c.get(0).unwrap();
                let error = Regex::new(&format!(
                    r"client {} got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update\b",
                    &c[1]
                ))
                .unwrap();
                match error.find(&text[whole.end()..]) {
                    Some(e) => text[whole.end() + e.end()..].contains(whole.as_str()),
                    None => false,
                }
            })
        },
    )
}

pub fn run(n: &mut Node) {
    // throttling
    n.pgbench(
        "-t 100 -S --rate=100000 --latency-limit=1000000 -c 2 -n -r",
        0,
        &[qr(r"processed: 200/200"), qr(r"builtin: select only")],
        &[qr(r"^$")],
        "pgbench throttling",
        &[],
        &[],
    );
    // given the expected rate and the 2 ms tx duration, at most one is executed
    n.pgbench(
        "-t 10 --rate=100000 --latency-limit=1 -n -r",
        0,
        &[
            qr(r"processed: [01]/10"),
            qr(r"type: .*/001_pgbench_sleep"),
            qr(r"above the 1.0 ms latency limit: [01]/"),
        ],
        &[qr(r"^$")],
        "pgbench late throttling",
        &[file("001_pgbench_sleep", r"\sleep 2ms")],
        &[],
    );

    let bdir = n.basedir().to_path_buf();
    // Run with sampling rate, 2 clients with 50 transactions each.
    n.pgbench(
        "-n -S -t 50 -c 2 --log --sampling-rate=0.5",
        0,
        &[qr(r"select only"), qr(r"processed: 100/100")],
        &[qr(r"^$")],
        "pgbench logs",
        &[],
        &[format!("--log-prefix={}/001_pgbench_log_2", bdir.display())],
    );
    // The IDs of the clients (1st field) in the logs should be either 0 or 1.
    check_pgbench_logs(
        n,
        &bdir,
        "001_pgbench_log_2",
        1,
        8,
        92,
        &qr(r"^[01] \d{1,2} \d+ \d \d+ \d+$"),
    );

    // Run with different read-only option pattern, 1 client with 10 transactions.
    n.pgbench(
        "-n -b select-only -t 10 -l",
        0,
        &[qr(r"select only"), qr(r"processed: 10/10")],
        &[qr(r"^$")],
        "pgbench logs contents",
        &[],
        &[format!("--log-prefix={}/001_pgbench_log_3", bdir.display())],
    );
    // The ID of a single client (1st field) should match 0.
    check_pgbench_logs(
        n,
        &bdir,
        "001_pgbench_log_3",
        1,
        10,
        10,
        &qr(r"^0 \d{1,2} \d+ \d \d+ \d+$"),
    );

    // abortion of the client if the script contains an incomplete transaction block
    n.pgbench(
        "--no-vacuum",
        2,
        &[qr(r"processed: 1/10")],
        &[qr(
            r"client 0 aborted: end of script reached without completing the last transaction",
        )],
        "incomplete transaction block",
        &[file(
            "001_pgbench_incomplete_transaction_block",
            "BEGIN;SELECT 1;",
        )],
        &[],
    );

    retries(n);

    // Test --exit-on-abort
    n.safe_psql(
        "postgres",
        "CREATE TABLE counter(i int); INSERT INTO counter VALUES (0);",
    );
    n.pgbench(
        "-t 10 -c 2 -j 2 --exit-on-abort",
        2,
        &[],
        &[
            qr(r"division by zero"),
            qr(r"Run was aborted due to an error in thread"),
        ],
        "test --exit-on-abort",
        &[file("001_exit_on_abort", EXIT_ON_ABORT)],
        &[],
    );

    // Test copy in pgbench
    n.pgbench(
        "-t 10",
        2,
        &[],
        &[qr(r"COPY is not supported in pgbench, aborting")],
        "Test copy in script",
        &[file("001_copy", " COPY pgbench_accounts FROM stdin ")],
        &[],
    );

    // Clean up
    n.safe_psql("postgres", "DROP TABLE counter;");
}

/// Serialization failures and deadlocks, retried.
fn retries(n: &mut Node) {
    n.safe_psql(
        "postgres",
        "CREATE UNLOGGED TABLE first_client_table (value integer); CREATE UNLOGGED TABLE xy (x integer, y integer); INSERT INTO xy VALUES (1, 2);",
    );

    // Serialization error and retry
    n.env.set(
        "PGOPTIONS",
        "-c default_transaction_isolation=repeatable\\ read",
    );

    // Check that we have a serialization error and the same random value of the delta variable
    // in the next try
    n.pgbench(
        "-n -c 2 -t 1 --debug --verbose-errors --max-tries 2",
        0,
        &[
            qr(r"processed: 2/2\b"),
            qr(r"number of transactions retried: 1\b"),
            qr(r"total number of retries: 1\b"),
        ],
        &[serialization_pattern()],
        "concurrent update with retrying",
        &[file("001_pgbench_serialization", SERIALIZATION)],
        &[],
    );

    // Clean up
    n.safe_psql("postgres", "DELETE FROM first_client_table;");

    n.env.set(
        "PGOPTIONS",
        "-c default_transaction_isolation=read\\ committed",
    );

    // Deadlock error and retry

    // Check that we have a deadlock error
    n.pgbench(
        "-n -c 2 -t 1 --max-tries 2 --verbose-errors",
        0,
        &[
            qr(r"processed: 2/2\b"),
            qr(r"number of transactions retried: 1\b"),
            qr(r"total number of retries: 1\b"),
        ],
        &[qr(r"client (0|1) got an error in command (3|5) \(SQL\) of script 0; ERROR:  deadlock detected\b")],
        "deadlock with retrying",
        &[file("001_pgbench_deadlock", DEADLOCK)],
        &[],
    );

    // Clean up
    n.safe_psql("postgres", "DROP TABLE first_client_table, xy;");
}
