//! The plans of the insert benchmark (`stampede run iibench`) and the CRUD mix (`stampede run
//! crud`), decided before any I/O. Both are stampede's own workloads: each statement is its own
//! autocommitted transaction, the simple protocol is allowed (values are interpolated), and a
//! transaction that meets a deadlock or a serialization failure is tried again with the same
//! values (unlimited under `-T`, as for TPC-C; `--max-tries` caps it), so the counts the checks
//! rely on are those of committed statements.
//!
//! iibench's clients: `-c` insert, `--query-clients` more query; `-R` is in inserts (of
//! `--rows-per-commit` rows) per second, and the engine's rate paces every client, so it is
//! refused with query clients (the original paces only its inserts: `--inserts_per_second`).

use crate::families::crud::txn::Mix;
use crate::families::crud::Job as CrudJob;
use crate::families::iibench::Job as IibenchJob;
use anyhow::Result;
use engine::RunSpec;
use sut::QueryMode;

use crate::cli::RunArgs;
use crate::console::Failure;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// The engine's spec for `clients` clients, shared by both (module notes).
fn spec(a: &RunArgs, name: &str, clients: u32, weights: Vec<u32>) -> Result<RunSpec> {
    if !a.builtin.is_empty() || !a.file.is_empty() || a.skip_some_updates || a.select_only {
        bail!("{name} is the workload: -b, -f, -N and -S cannot be added to it");
    }
    if !a.define.is_empty() || a.scale.is_some() || a.show_script.is_some() {
        bail!("-D, -s and --show-script do not apply to {name}");
    }
    if a.log {
        bail!("--log is not supported for {name}; the JSON result holds every interval");
    }
    let jobs = a.jobs.unwrap_or(1);
    if jobs < 1 {
        bail!("-j/--jobs must be at least 1");
    }
    let stop = super::stop_rule(a)?;
    let (rate, limit) = super::rate_and_limit(a)?;
    let max_tries = super::retrying_max_tries(a, stop)?;
    let mode = a.protocol.map_or(QueryMode::Prepared, |p| p.mode());
    let mut spec = super::family_spec(a, (clients, jobs, stop), mode, (rate, limit), max_tries)?;
    spec.weights = weights;
    Ok(spec)
}

pub(crate) fn plan_iibench(a: &RunArgs) -> Result<(IibenchJob, RunSpec)> {
    let inserters = a.clients.unwrap_or(1);
    if inserters < 1 {
        bail!("-c/--client (the inserting clients) must be at least 1");
    }
    let defaults = crate::families::iibench::txn::Options::default();
    let query_clients = a.iibench.query_clients.unwrap_or(0);
    if query_clients > 0 && a.rate.is_some() {
        return Err(Failure::usage(
            "-R paces every client, and iibench's query clients run unpaced",
            "drop -R, or --query-clients (the original paces only its inserts)",
        ));
    }
    let opts = crate::families::iibench::txn::Options {
        rows_per_commit: a
            .iibench
            .rows_per_commit
            .unwrap_or(defaults.rows_per_commit),
        rows_per_query: a.iibench.rows_per_query.unwrap_or(defaults.rows_per_query),
        query_clients,
        ..defaults
    };
    if opts.rows_per_commit == 0 {
        bail!("--rows-per-commit must be at least 1");
    }
    // 5 parameters a row: both protocols carry at most 65,535 in one statement.
    if opts.rows_per_commit > 13_000 {
        bail!(
            "--rows-per-commit {} is over 13000 (5 parameters a row, at most 65535 in a statement)",
            opts.rows_per_commit
        );
    }
    if opts.rows_per_query == 0 {
        bail!("--rows-per-query must be at least 1");
    }
    let clients = inserters
        .checked_add(query_clients)
        .ok_or_else(|| Failure::usage("too many clients", ""))?;
    let spec = spec(a, "iibench", clients, vec![1, 1, 1, 1])?;
    Ok((IibenchJob { opts }, spec))
}

pub(crate) fn plan_crud(a: &RunArgs) -> Result<(CrudJob, RunSpec)> {
    let clients = a.clients.unwrap_or(1);
    if clients < 1 {
        bail!("-c/--client must be at least 1");
    }
    let mix = match &a.crud.mix {
        Some(m) => Mix::parse(m).map_err(|e| {
            Failure::usage(
                e,
                "e.g. --mix point=40,index=20,range=10,in=10,insert=10,update=5,delete=5",
            )
        })?,
        None => Mix::default(),
    };
    let tables = a.sysbench.tables.unwrap_or(1);
    if tables == 0 {
        bail!("--tables must be at least 1");
    }
    let rows = u64::from(a.sysbench.table_size.unwrap_or(10_000));
    if rows == 0 {
        bail!("--table-size must be at least 1");
    }
    let batch = a.crud.batch.unwrap_or(10);
    if !(1..=10_000).contains(&batch) {
        bail!("--batch must be between 1 and 10000, got {batch}");
    }
    let spec = spec(a, "crud", clients, mix.0.to_vec())?;
    Ok((
        CrudJob {
            tables,
            rows,
            batch,
            mix,
        },
        spec,
    ))
}
