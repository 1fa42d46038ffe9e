//! 001's pipeline cases: `\startpipeline`/`\syncpipeline`/`\endpipeline` in extended and prepared
//! modes, their errors, and which commands the server runs inside the pipeline's implicit
//! transaction block. Two of these need a PostgreSQL 18 server: before it (commit d0eb4297,
//! "Handle better implicit transaction state of pipeline mode"), `SET LOCAL` warned and `LOCK`
//! failed at every position of a pipeline, not only at the first.

use crate::node::{file, Node};
use crate::tap::qr;

const SERVER_18: &str = "the server treats a pipeline's later commands as inside its implicit \
                         transaction block from PostgreSQL 18 on";

pub fn run(n: &mut Node) {
    // Working \startpipeline
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[
            qr(r"type: .*/001_pgbench_pipeline"),
            qr(r"actually processed: 1/1"),
        ],
        &[],
        r"working \startpipeline",
        &[file(
            "001_pgbench_pipeline",
            format!(
                "\n-- test startpipeline\n\\startpipeline\n{}\n\\endpipeline\n",
                "select 1;\n".repeat(10)
            ),
        )],
        &[],
    );

    // Working \startpipeline with \syncpipeline
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[
            qr(r"type: .*/001_pgbench_pipeline_sync"),
            qr(r"actually processed: 1/1"),
        ],
        &[],
        r"working \startpipeline with \syncpipeline",
        &[file(
            "001_pgbench_pipeline_sync",
            r"
-- test startpipeline
\startpipeline
select 1;
\syncpipeline
\syncpipeline
select 2;
\syncpipeline
select 3;
\endpipeline
",
        )],
        &[],
    );

    // Working \startpipeline in prepared query mode
    n.pgbench(
        "-t 1 -n -M prepared",
        0,
        &[
            qr(r"type: .*/001_pgbench_pipeline_prep"),
            qr(r"actually processed: 1/1"),
        ],
        &[],
        r"working \startpipeline",
        &[file(
            "001_pgbench_pipeline_prep",
            format!(
                "\n-- test startpipeline\n\\startpipeline\n\\endpipeline\n\\startpipeline\n{}\n\\endpipeline\n",
                "select 1;\n".repeat(10)
            ),
        )],
        &[],
    );

    // Try \startpipeline twice
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[qr(r"already in pipeline mode")],
        r"error: call \startpipeline twice",
        &[file(
            "001_pgbench_pipeline_2",
            "\n-- startpipeline twice\n\\startpipeline\n\\startpipeline\n",
        )],
        &[],
    );

    // Try to end a pipeline that hasn't started
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[qr(r"not in pipeline mode")],
        r"error: \endpipeline with no start",
        &[file(
            "001_pgbench_pipeline_3",
            "\n-- pipeline not started\n\\endpipeline\n",
        )],
        &[],
    );

    // Try \gset in pipeline mode
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[qr(r"gset is not allowed in pipeline mode")],
        r"error: \gset not allowed in pipeline mode",
        &[file(
            "001_pgbench_pipeline_4",
            "\n\\startpipeline\nselect 1 \\gset f\n\\endpipeline\n",
        )],
        &[],
    );

    // Try \startpipeline without \endpipeline in a single transaction
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[qr(r"end of script reached with pipeline open")],
        r"error: call \startpipeline without \endpipeline in a single transaction",
        &[file(
            "001_pgbench_pipeline_5",
            "\n-- startpipeline only with single transaction\n\\startpipeline\n",
        )],
        &[],
    );

    // Try \startpipeline without \endpipeline
    n.pgbench(
        "-t 2 -n -M extended",
        2,
        &[],
        &[qr(r"end of script reached with pipeline open")],
        r"error: call \startpipeline without \endpipeline",
        &[file(
            "001_pgbench_pipeline_6",
            "\n-- startpipeline only\n\\startpipeline\n",
        )],
        &[],
    );

    // Try \startpipeline with \syncpipeline without \endpipeline
    n.pgbench(
        "-t 2 -n -M extended",
        2,
        &[],
        &[qr(r"end of script reached with pipeline open")],
        r"error: call \startpipeline and \syncpipeline without \endpipeline",
        &[file(
            "001_pgbench_pipeline_7",
            "\n-- startpipeline with \\syncpipeline only\n\\startpipeline\n\\syncpipeline\n",
        )],
        &[],
    );

    implicit_transaction_block(n);

    // Working \startpipeline in prepared query mode with serializable
    n.pgbench(
        "-c4 -t 10 -n -M prepared",
        0,
        &[
            qr(r"type: .*/001_pgbench_pipeline_serializable"),
            super::scripts::processed_all(),
        ],
        &[],
        r"working \startpipeline with serializable",
        &[file(
            "001_pgbench_pipeline_serializable",
            format!(
                "\n-- test startpipeline with serializable\n\\startpipeline\nBEGIN ISOLATION LEVEL SERIALIZABLE;\n{}\nEND;\n\\endpipeline\n",
                "select 1;\n".repeat(10)
            ),
        )],
        &[],
    );
}

/// Which commands of a pipeline run inside its implicit transaction block.
fn implicit_transaction_block(n: &mut Node) {
    // SET LOCAL as first pipeline command: outside the implicit block, a WARNING.
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[],
        &[qr(
            r"WARNING:  SET LOCAL can only be used in transaction blocks",
        )],
        "SET LOCAL outside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_set_local_1",
            "\n\\startpipeline\nSET LOCAL statement_timeout='1h';\n\\endpipeline\n",
        )],
        &[],
    );

    // SET LOCAL as second pipeline command: no WARNING.
    let name = "SET LOCAL inside implicit transaction block of pipeline";
    if n.server_at_least(180000, name, SERVER_18) {
        n.pgbench(
            "-t 1 -n -M extended",
            0,
            &[],
            &[qr(r"^$")],
            name,
            &[file(
                "001_pgbench_pipeline_set_local_2",
                "\n\\startpipeline\nSELECT 1;\nSET LOCAL statement_timeout='1h';\n\\endpipeline\n",
            )],
            &[],
        );
    }

    // SET LOCAL after \syncpipeline: outside the implicit block again, a WARNING.
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[],
        &[qr(r"WARNING:  SET LOCAL can only be used in transaction blocks")],
        r"SET LOCAL and \syncpipeline",
        &[file(
            "001_pgbench_pipeline_set_local_3",
            "\n\\startpipeline\nSELECT 1;\n\\syncpipeline\nSET LOCAL statement_timeout='1h';\n\\endpipeline\n",
        )],
        &[],
    );

    // REINDEX CONCURRENTLY first: outside the block, succeeds.
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[],
        &[],
        "REINDEX CONCURRENTLY outside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_reindex_1",
            "\n\\startpipeline\nREINDEX TABLE CONCURRENTLY pgbench_accounts;\nSELECT 1;\n\\endpipeline\n",
        )],
        &[],
    );

    // REINDEX CONCURRENTLY second: inside the block, fails.
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[],
        "error: REINDEX CONCURRENTLY inside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_reindex_2",
            "\n\\startpipeline\nSELECT 1;\nREINDEX TABLE CONCURRENTLY pgbench_accounts;\n\\endpipeline\n",
        )],
        &[],
    );

    // VACUUM first: succeeds.
    n.pgbench(
        "-t 1 -n -M extended",
        0,
        &[],
        &[],
        "VACUUM outside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_vacuum_1",
            "\n\\startpipeline\nVACUUM pgbench_accounts;\n\\endpipeline\n",
        )],
        &[],
    );

    // VACUUM second: fails.
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[],
        "error: VACUUM inside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_vacuum_2",
            "\n\\startpipeline\nSELECT 1;\nVACUUM pgbench_accounts;\n\\endpipeline\n",
        )],
        &[],
    );

    // Subtransactions are forbidden in implicit transaction blocks.
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[],
        "error: subtransactions not allowed in pipeline",
        &[file(
            "001_pgbench_pipeline_subtrans",
            "\n\\startpipeline\nSAVEPOINT a;\nSELECT 1;\nROLLBACK TO SAVEPOINT a;\nSELECT 2;\n\\endpipeline\n",
        )],
        &[],
    );

    // LOCK TABLE first: outside the block, fails.
    n.pgbench(
        "-t 1 -n -M extended",
        2,
        &[],
        &[],
        "error: LOCK TABLE outside implicit transaction block of pipeline",
        &[file(
            "001_pgbench_pipeline_lock_1",
            "\n\\startpipeline\nLOCK pgbench_accounts;\nSELECT 1;\n\\endpipeline\n",
        )],
        &[],
    );

    // LOCK TABLE second: inside the block, succeeds.
    let name = "LOCK TABLE inside implicit transaction block of pipeline";
    if n.server_at_least(180000, name, SERVER_18) {
        n.pgbench(
            "-t 1 -n -M extended",
            0,
            &[],
            &[],
            name,
            &[file(
                "001_pgbench_pipeline_lock_2",
                "\n\\startpipeline\nSELECT 1;\nLOCK pgbench_accounts;\n\\endpipeline\n",
            )],
            &[],
        );
    }
}
