//! `stampede init`'s side of a watched load (`families::loading::observed`): which inits may
//! write a result (`--json`, `--html`), and what follows a single process's load: the
//! observer's line, the sizes (read here: `run::sizes` is above `families`), the result files
//! and the exit code.
//!
//! Must not touch: the loaders' own lines on standard error, which stay as they were, nor the
//! drop-ins (`stampede pgbench -i`, `sysbench prepare`), which never come here.

use anyhow::Result;

use crate::cli::InitArgs;
use crate::console::{Failure, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNTRUSTED};
use crate::families::loading::observed::{Described, InitOutputs, Watcher};
use crate::targeting;

/// `--json`, `--html` and `--no-observe`, checked before any I/O. A fleet's or a sharded
/// layout's init writes no result: a fleet's process loads a part of the rows and sees a part of
/// the load, and a layout's steps run on several servers that one observer does not watch.
pub(super) fn outputs(args: &InitArgs) -> Result<InitOutputs> {
    let files = args.json.is_some() || args.html.is_some();
    if files && args.fleet.fleet.is_some() {
        return Err(Failure::usage(
            "--json and --html keep one process's load: with --fleet each process loads a part \
             of the rows, and none of them sees the whole load",
            "leave --json and --html out of a fleet's init, or load from one process without \
             --fleet to keep its result",
        ));
    }
    if files && super::sharded::wanted(args) {
        return Err(Failure::usage(
            "--json and --html are not written for a sharded layout's init (--layout, --shard, \
             --reference-table, --dry-run): its steps run on several servers",
            "leave them out: init prints each table's size on each shard, and a run after it \
             (`stampede run WORKLOAD --json FILE`) keeps the layout's sizes",
        ));
    }
    InitOutputs::check(args.json.as_deref(), args.html.as_deref(), args.no_observe)
}

/// After a single process's load that returned `code`: stop watching (the observer's line),
/// the sizes (said on standard error when `say`, as `init::say_sizes` does; read for the result
/// in any case), the result files. A file that could not be written makes a loaded init exit 2,
/// as a run's does.
pub(super) fn after_load(
    rt: &tokio::runtime::Runtime,
    target: &targeting::Target,
    out: &InitOutputs,
    watcher: Watcher,
    d: Described,
    code: Result<i32>,
    say: bool,
) -> Result<i32> {
    let watched = watcher.stop();
    let code = code?;
    let sizes = match code == EXIT_OK && (say || out.wants_result()) {
        true if say => Some(super::init::say_sizes(rt, &target.conn)),
        true => Some(crate::run::sizes::read(
            rt,
            &target.conn,
            "init",
            super::init::SIZES_TIMEOUT,
        )),
        false => None,
    };
    let saved = watched.save(rt, target, out, d, sizes, code == EXIT_INTERRUPTED);
    Ok(if code == EXIT_OK && !saved {
        EXIT_UNTRUSTED
    } else {
        code
    })
}

/// The parameters of the `load` section, by option name.
pub(super) fn params<const N: usize>(
    p: [(&str, serde_json::Value); N],
) -> std::collections::BTreeMap<String, serde_json::Value> {
    p.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
