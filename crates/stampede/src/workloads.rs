//! The one table of workloads: every name `stampede run NAME` and `stampede init NAME` accept,
//! with what it is, which tables it needs, and which checks run after it. `run --list`, `init
//! --list`, the help text, the book's table (docs/src/workloads.md; a test compares them) and
//! the command line's reading of its positional argument all come from [`WORKLOADS`], so a
//! workload added here is known everywhere at once.
//!
//! A workload belongs to a family, the part of stampede that runs it: pgbench's (the TPC-B
//! builtins and custom scripts in pgbench's language) or sysbench's (the OLTP family). A family
//! reads its own options; the table only names and describes.

use std::fmt::Write as _;

use anyhow::Result;

use crate::console::Failure;
use crate::families::{self, RunArgs};

/// The part of stampede that runs a workload (`families::pgbench`, `families::sysbench`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// pgbench's builtins (and `-f` scripts, which have no entry of their own).
    Pgbench,
    /// sysbench's OLTP family, `bulk_insert` included.
    Sysbench,
    /// TPC-C (`families::tpcc`).
    Tpcc,
    /// The failover probe (`families::probe`, `stampede failover`).
    Probe,
    /// YCSB's core workloads A to F (`families::ycsb`).
    Ycsb,
    /// The cache curve (`families::cache_curve`).
    CacheCurve,
    /// The insert benchmark (`families::iibench`).
    Iibench,
    /// The CRUD mix (`families::crud`).
    Crud,
    /// The connection storm (`families::storm`): idle connections opened at a rate, and select-only
    /// on pgbench's tables meanwhile.
    Storm,
    /// A captured workload sent again (`families::replay`, `stampede replay`).
    Replay,
    /// TPC-H's performance test and its single queries (`families::tpch`).
    Tpch,
    /// CH-benCHmark: TPC-C and analytic queries at once (`families::ch`).
    Ch,
}

impl Family {
    /// Every family, for what the plan asks of each; in this order a run given several
    /// families' options names the first (a test holds it to the variants).
    pub(crate) const ALL: [Family; 12] = [
        Family::Pgbench,
        Family::Sysbench,
        Family::Iibench,
        Family::Crud,
        Family::Tpcc,
        Family::Ycsb,
        Family::CacheCurve,
        Family::Storm,
        Family::Replay,
        Family::Tpch,
        Family::Ch,
        Family::Probe,
    ];

    /// The registry: each family's plan step, in its folder (`families/<family>/plan.rs`).
    /// The plan knows a family only through it; a new family is a variant, a line here, one
    /// in [`Family::refuse_options`] and its place in [`Family::ALL`].
    pub(crate) fn planner(self) -> Box<dyn families::Planner> {
        match self {
            Family::Pgbench => Box::new(families::pgbench::plan::Step),
            Family::Sysbench => Box::new(families::sysbench::plan::Step),
            Family::Tpcc => Box::new(families::tpcc::plan::Step),
            Family::Probe => Box::new(families::probe::plan::Step),
            Family::Ycsb => Box::new(families::ycsb::plan::Step),
            Family::CacheCurve => Box::new(families::cache_curve::plan::Step),
            Family::Iibench => Box::new(families::iibench::plan::Step),
            Family::Crud => Box::new(families::crud::plan::Step),
            Family::Storm => Box::new(families::storm::plan::Step::default()),
            Family::Replay => Box::new(families::replay::plan::Step),
            Family::Tpch => Box::new(families::tpch::plan::Step),
            Family::Ch => Box::new(families::ch::plan::Step),
        }
    }

    /// Refuses this family's own options (its folder's group in [`RunArgs`]) on a run of
    /// another family, `running`, by name: an option that would be ignored is a mistake.
    pub(crate) fn refuse_options(self, a: &RunArgs, running: Family) -> Result<()> {
        let (given, applies, example) = match self {
            Family::Pgbench | Family::Probe => return Ok(()),
            // The CRUD mix sizes its tables with sysbench's --tables and --table-size.
            Family::Sysbench => {
                return families::sysbench::plan::reject_options(a, running == Family::Crud)
            }
            // CH-benCHmark runs TPC-C with its options.
            Family::Tpcc if running == Family::Ch => return Ok(()),
            Family::Tpcc => (a.tpcc.given(), "tpcc", "`stampede run tpcc ...`"),
            Family::Ch => (
                a.ch.given(),
                "run ch",
                "`stampede run ch --analytic-clients N`",
            ),
            Family::Ycsb => (
                a.ycsb.given(),
                "YCSB's workloads",
                "`stampede run ycsb-a -p recordcount=N ...`; the port is -p PORT",
            ),
            Family::CacheCurve => (
                a.cache_curve.given(),
                "cache-curve",
                "`stampede run cache-curve ...`",
            ),
            Family::Iibench => (a.iibench.given(), "iibench", "`stampede run iibench ...`"),
            Family::Replay => (
                a.replay.given(),
                "a replay",
                "`stampede replay CAPTURE ...`",
            ),
            Family::Crud => (a.crud.given(), "crud", "`stampede run crud ...`"),
            // CH-benCHmark's plan reads --query-timeout and refuses TPC-H's others itself.
            Family::Tpch if running == Family::Ch => return Ok(()),
            Family::Tpch => (
                a.tpch.given(),
                "TPC-H",
                "`stampede run tpch --test power ...` or `stampede run tpch-q5 ...`",
            ),
            Family::Storm => (
                a.storm.given(),
                "connection-storm",
                "`stampede run connection-storm -c 2000 --connect-rate 500`",
            ),
        };
        match given.first() {
            Some(g) => Err(Failure::usage(
                format!("{g} only applies to {applies}"),
                example,
            )),
            None => Ok(()),
        }
    }
}

/// The tables a workload runs on: what `stampede init` loads, and what the embedded server
/// loads before a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    /// pgbench's four tables (`pgbench -i`).
    Tpcb,
    /// sysbench's `sbtestN` tables (`sysbench oltp_common prepare`).
    Oltp,
    /// sysbench bulk_insert's empty `sbtestN` tables, one per client.
    OltpBulk,
    /// TPC-C's nine tables (go-tpc's schema; tpcc-mysql's on MySQL).
    Tpcc,
    /// The failover probe's table, which the run creates and drops itself.
    Probe,
    /// YCSB's `usertable`.
    Ycsb,
    /// The cache curve's table, grown and dropped by the run.
    CacheCurve,
    /// iibench's `purchases_index`, empty, with its three secondary indexes.
    Iibench,
    /// The CRUD mix's `crudN` tables.
    Crud,
    /// A replay's: the tables of the database its capture ran on, as they were before it.
    Capture,
    /// TPC-H's eight tables (`families::tpch::load`), at a scale factor.
    Tpch,
    /// TPC-C's nine and CH-benCHmark's three (`families::ch`).
    Ch,
}

impl Dataset {
    /// Its tables as SQL `LIKE` patterns (`--prewarm` reads those it finds); none for the
    /// tables a run makes itself.
    pub fn tables_like(self) -> &'static [&'static str] {
        match self {
            Dataset::Tpcb => &load::tpcb::TABLES,
            Dataset::Oltp | Dataset::OltpBulk => &["sbtest%"],
            Dataset::Tpcc => &load::tpcc::TABLES,
            Dataset::Ch => &[
                "warehouse",
                "district",
                "customer",
                "history",
                "new_order%",
                "orders",
                "order_line",
                "item",
                "stock",
                "region",
                "nation",
                "supplier",
            ],
            Dataset::Ycsb => &[crate::families::ycsb::txn::TABLE],
            Dataset::Iibench => &[crate::families::iibench::txn::TABLE],
            Dataset::Crud => &["crud%"],
            Dataset::Tpch => &[
                "region", "nation", "supplier", "customer", "part", "partsupp", "orders",
                "lineitem",
            ],
            Dataset::Probe | Dataset::CacheCurve | Dataset::Capture => &[],
        }
    }

    /// The name `stampede init` takes for it (besides any workload name that uses it).
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Tpcb => "tpcb",
            Dataset::Oltp => "oltp",
            Dataset::OltpBulk => "oltp --bulk-insert",
            Dataset::Tpcc => "tpcc -w N",
            Dataset::Probe => "stampede_probe, made by the run",
            Dataset::Ycsb => "ycsb",
            Dataset::CacheCurve => "stampede_cache_curve, made by the run",
            Dataset::Iibench => "iibench",
            Dataset::Crud => "crud --tables N --table-size N",
            Dataset::Capture => "a copy of the captured database",
            Dataset::Tpch => "tpch --scale SF",
            Dataset::Ch => "ch -w N",
        }
    }
}

/// One workload.
#[derive(Debug)]
pub struct Workload {
    pub name: &'static str,
    pub family: Family,
    pub dataset: Dataset,
    /// One line for `--list` and the book.
    pub about: &'static str,
    /// The peer command line it reproduces.
    pub peer: &'static str,
    /// The checks that run after it (besides nothing: every run has the commit count).
    pub checks: &'static [&'static str],
}

const TPCB_CHECKS: &[&str] = &["commit count", "statement ledger", "TPC-B invariant"];
const OLTP_CHECKS: &[&str] = &["commit count", "statement ledger", "row counts"];
const YCSB_CHECKS: &[&str] = &[
    "commit count",
    "statement ledger",
    "row count",
    "field lengths",
];

/// Every workload, in the order `--list` prints them.
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "tpcb-like",
        family: Family::Pgbench,
        dataset: Dataset::Tpcb,
        about: "TPC-B (sort of): 3 updates, 1 select, 1 insert per transaction (the default)",
        peer: "pgbench -b tpcb-like",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "simple-update",
        family: Family::Pgbench,
        dataset: Dataset::Tpcb,
        about: "TPC-B without the teller and branch updates",
        peer: "pgbench -N",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "select-only",
        family: Family::Pgbench,
        dataset: Dataset::Tpcb,
        about: "one primary-key select on pgbench_accounts",
        peer: "pgbench -S",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "tpcb-like-pipelined",
        family: Family::Pgbench,
        dataset: Dataset::Tpcb,
        about: "tpcb-like sent as one pipeline (needs -M extended or prepared)",
        peer: "pgbench -f (tpcb-like in \\startpipeline ... \\endpipeline)",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "tpcb-sharded",
        family: Family::Pgbench,
        dataset: Dataset::Tpcb,
        about: "tpcb-like with the shard key bid in every statement (--cross-shard PCT)",
        peer: "pgbench -f limitless_pgbench_tpcb.sql (seed 000), account within the branch",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "oltp_read_write",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "sysbench's read/write mix: 14 selects, 2 updates, delete+insert",
        peer: "sysbench oltp_read_write",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_read_only",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "sysbench's read-only mix: 10 point selects, 4 range selects",
        peer: "sysbench oltp_read_only",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_write_only",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "sysbench's write-only mix: 2 updates, delete+insert",
        peer: "sysbench oltp_write_only",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_point_select",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "one primary-key select on an sbtest table",
        peer: "sysbench oltp_point_select",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_update_index",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "one update of the indexed column k",
        peer: "sysbench oltp_update_index",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_update_non_index",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "one update of the non-indexed column c",
        peer: "sysbench oltp_update_non_index",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_insert",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "one insert (the tables grow by one row per transaction)",
        peer: "sysbench oltp_insert",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "oltp_delete",
        family: Family::Sysbench,
        dataset: Dataset::Oltp,
        about: "one delete by primary key",
        peer: "sysbench oltp_delete",
        checks: OLTP_CHECKS,
    },
    Workload {
        name: "bulk_insert",
        family: Family::Sysbench,
        dataset: Dataset::OltpBulk,
        about: "multi-row inserts into one empty table per client",
        peer: "sysbench bulk_insert",
        checks: &["commit count", "statement ledger", "row counts"],
    },
    Workload {
        name: "tpcc",
        family: Family::Tpcc,
        dataset: Dataset::Tpcc,
        about: "TPC-C 5.11: New-Order, Payment, Order-Status, Delivery, Stock-Level; tpmC",
        peer: "go-tpc tpcc run",
        checks: &[
            "commit count",
            "statement ledger",
            "TPC-C consistency (3.3.2)",
        ],
    },
    Workload {
        name: "tpch",
        family: Family::Tpch,
        dataset: Dataset::Tpch,
        about: "TPC-H 3.0.1's performance test: the power test (RF1, 22 queries, RF2), then \
                --streams query streams and a refresh stream; QphH@Size (--test power or throughput alone)",
        peer: "HammerDB TPROC-H, go-tpc tpch",
        checks: &["commit count", "statement ledger", "row counts", "refresh"],
    },
    Workload {
        name: "tpch-qN",
        family: Family::Tpch,
        dataset: Dataset::Tpch,
        about: "one TPC-H query (tpch-q1 to tpch-q22) in a loop on -c clients, fresh parameters \
                each time (--validation: qgen's), for tuning",
        peer: "qgen N, then psql",
        checks: &["commit count", "statement ledger", "row counts", "answers"],
    },
    Workload {
        name: "ch",
        family: Family::Ch,
        dataset: Dataset::Ch,
        about: "CH-benCHmark: -c TPC-C clients and --analytic-clients clients sending 22 \
                analytic queries at once, measured apart (tpmC, OLTP p99, queries/h)",
        peer: "go-tpc ch",
        checks: crate::families::ch::CHECKS,
    },
    Workload {
        name: "failover-probe",
        family: Family::Probe,
        dataset: Dataset::Probe,
        about:
            "one-row writes with audited sequence numbers, and reads, at -R (`stampede failover`)",
        peer: "a psql loop around a failover",
        checks: &[
            "statement ledger",
            "fault",
            "errors during the fault run",
            "audit",
        ],
    },
    Workload {
        name: "ycsb-a",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload A (update heavy): 50% READ, 50% UPDATE, zipfian",
        peer: "ycsb run jdbc -P workloads/workloada",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "ycsb-b",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload B (read mostly): 95% READ, 5% UPDATE, zipfian",
        peer: "ycsb run jdbc -P workloads/workloadb",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "ycsb-c",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload C (read only): 100% READ, zipfian",
        peer: "ycsb run jdbc -P workloads/workloadc",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "ycsb-d",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload D (read latest): 95% READ, 5% INSERT, latest",
        peer: "ycsb run jdbc -P workloads/workloadd",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "ycsb-e",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload E (short ranges): 95% SCAN of 1-100 rows, 5% INSERT, zipfian",
        peer: "ycsb run jdbc -P workloads/workloade",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "ycsb-f",
        family: Family::Ycsb,
        dataset: Dataset::Ycsb,
        about: "YCSB workload F (read-modify-write): 50% READ, 50% READ-MODIFY-WRITE, zipfian",
        peer: "ycsb run jdbc -P workloads/workloadf",
        checks: YCSB_CHECKS,
    },
    Workload {
        name: "cache-curve",
        family: Family::CacheCurve,
        dataset: Dataset::CacheCurve,
        about: "scans and point reads as a table grows past the server's cache (--sizes); \
                hit ratio, pages/ms, the knee",
        peer: "seed 003: inserts and EXPLAIN (ANALYZE, BUFFERS) in a psql loop",
        checks: &["row counts", "point reads"],
    },
    Workload {
        name: "iibench",
        family: Family::Iibench,
        dataset: Dataset::Iibench,
        about: "the insert benchmark: batched inserts into a table with 3 secondary indexes, \
                optional query clients; where the indexes outgrow the cache",
        peer: "iibench.py --rows_per_commit 1000 --query_threads N",
        checks: &[
            "commit count",
            "statement ledger",
            "row count",
            "index consistency",
        ],
    },
    Workload {
        name: "crud",
        family: Family::Crud,
        dataset: Dataset::Crud,
        about: "a mix of point, index, range and IN-list reads, single and batched inserts, \
                batched updates and deletes over N tables (--mix)",
        peer: "seed 001's CRUD stress tool",
        checks: &[
            "commit count",
            "statement ledger",
            "row counts",
            "index consistency",
        ],
    },
    Workload {
        name: "connection-storm",
        family: Family::Storm,
        dataset: Dataset::Tpcb,
        about: "-c idle connections opened at --connect-rate and held, while --busy-clients run \
                select-only",
        peer: "seed 001's 20,000-connection test (a shell loop of psql sessions)",
        checks: TPCB_CHECKS,
    },
    Workload {
        name: "replay",
        family: Family::Replay,
        dataset: Dataset::Capture,
        about: "a captured workload (PostgreSQL stderr/csvlog/jsonlog, MySQL general/slow log) \
                sent again session by session at --speed (`stampede replay`)",
        peer: "pgreplay",
        checks: &["commit count", "statement ledger", "statements sent"],
    },
];

/// The workload named exactly `name` (sysbench's `.lua` suffix allowed; `tpch-q1` to
/// `tpch-q22` are the entry `tpch-qN`, whose plan reads the number).
pub fn find(name: &str) -> Option<&'static Workload> {
    let base = name.strip_suffix(".lua").unwrap_or(name);
    let base = match base.strip_prefix("tpch-q") {
        Some(n) if n.parse::<u8>().is_ok() => "tpch-qN",
        _ => base,
    };
    WORKLOADS.iter().find(|w| w.name == base)
}

/// The workload a positional argument was probably meant to name, when it names none: one
/// edit away, or a prefix of exactly one name (`select`, `oltp_read`).
pub fn near(name: &str) -> Option<&'static Workload> {
    if name.len() < 4 {
        return None;
    }
    let prefixed: Vec<_> = WORKLOADS
        .iter()
        .filter(|w| w.name.starts_with(name))
        .collect();
    if prefixed.len() == 1 {
        return Some(prefixed[0]);
    }
    // Lengths within one: a database named `bench` is no typo of `iibench`.
    WORKLOADS
        .iter()
        .find(|w| w.name.len().abs_diff(name.len()) <= 1 && edit_distance(w.name, name) <= 2)
}

/// Levenshtein distance, for [`near`] (names are short: no need for anything clever).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `stampede run --list`: a line per workload.
pub fn list() -> String {
    let width = WORKLOADS.iter().map(|w| w.name.len()).max().unwrap_or(0);
    let mut s =
        String::from("workloads (stampede run NAME; stampede init NAME loads its tables):\n");
    for w in WORKLOADS {
        let _ = writeln!(s, "  {:width$}  {}", w.name, w.about);
    }
    s.push_str(
        "\nAlso: -f FILE runs a script in pgbench's language; -b NAME@W mixes pgbench's builtins.",
    );
    s
}

/// The book's table of workloads (docs/src/workloads.md: `| name | what | tables | peer |
/// checks |`), which a test compares with the page.
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| workload | what it runs | tables (`stampede init`) | same as | checks after the run |\n\
         |---|---|---|---|---|\n",
    );
    for w in WORKLOADS {
        let _ = writeln!(
            s,
            "| `{}` | {} | `{}` | `{}` | {} |",
            w.name,
            w.about,
            w.dataset.name(),
            w.peer,
            w.checks.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_in_all_once() {
        // Exhaustive: a new variant does not compile here until it is placed in ALL.
        let place = |f: Family| match f {
            Family::Pgbench
            | Family::Sysbench
            | Family::Iibench
            | Family::Crud
            | Family::Tpcc
            | Family::Ycsb
            | Family::CacheCurve
            | Family::Storm
            | Family::Replay
            | Family::Tpch
            | Family::Ch
            | Family::Probe => Family::ALL.iter().filter(|&&g| g == f).count(),
        };
        for w in WORKLOADS {
            assert_eq!(place(w.family), 1, "{} ({:?})", w.name, w.family);
        }
        assert_eq!(place(Family::Probe), 1);
    }

    #[test]
    fn names_are_unique_and_found_exactly() {
        for (i, w) in WORKLOADS.iter().enumerate() {
            assert!(WORKLOADS[i + 1..].iter().all(|o| o.name != w.name));
            assert_eq!(find(w.name).map(|f| f.name), Some(w.name));
        }
        assert_eq!(find("oltp_read_write.lua").unwrap().name, "oltp_read_write");
        assert!(find("select").is_none());
        assert_eq!(find("tpch-q5").unwrap().name, "tpch-qN");
        assert_eq!(find("tpch-q22").unwrap().name, "tpch-qN");
        assert!(find("tpch-qx").is_none());
        assert!(find("postgres").is_none());
    }

    #[test]
    fn near_misses_are_recognised_and_databases_are_not() {
        assert_eq!(near("select-onyl").unwrap().name, "select-only");
        assert_eq!(near("oltp_point").unwrap().name, "oltp_point_select");
        assert_eq!(near("tpcb-lke").unwrap().name, "tpcb-like");
        assert!(near("postgres").is_none());
        assert!(near("mydb").is_none());
        assert!(near("bench").is_none());
        assert_eq!(near("iibenhc").unwrap().name, "iibench");
    }

    #[test]
    fn every_workload_has_a_family_s_runner_and_the_list_names_them_all() {
        let l = list();
        for w in WORKLOADS {
            assert!(l.contains(w.name));
            match w.family {
                Family::Pgbench => {
                    assert!(workload::tpcb::builtin(w.name).is_ok(), "{}", w.name)
                }
                Family::Sysbench => assert!(
                    workload::oltp::Test::from_name(w.name).is_some() || w.name == "bulk_insert"
                ),
                Family::Tpcc => assert_eq!(w.name, "tpcc"),
                Family::Probe => assert_eq!(w.name, "failover-probe"),
                Family::Ycsb => assert!(
                    (w.name.strip_prefix("ycsb-").and_then(|l| l.chars().next()))
                        .and_then(crate::families::ycsb::txn::props::core_workload)
                        .is_some(),
                    "{}",
                    w.name
                ),
                Family::CacheCurve => assert_eq!(w.name, "cache-curve"),
                Family::Iibench => assert_eq!(w.name, "iibench"),
                Family::Crud => assert_eq!(w.name, "crud"),
                Family::Storm => assert_eq!(w.name, "connection-storm"),
                Family::Replay => assert_eq!(w.name, "replay"),
                Family::Tpch => assert!(matches!(w.name, "tpch" | "tpch-qN"), "{}", w.name),
                Family::Ch => assert_eq!(w.name, "ch"),
            }
        }
    }
}
