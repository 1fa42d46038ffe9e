//! `stampede fleet report NAME`, `stampede fleet manifest --workers N -- ARGS`, and
//! `stampede merge A.json B.json ...`: what comes after (or before) a fleet run.
//!
//! The merge itself is `report::merge` (pure); this module reads the results (files, or the
//! fleet's table through the `fleet` crate), adds the fleet's commit check from the server's
//! snapshots, and prints and saves the merged result as any run's.
//!
//! The manifest is JSON, which `kubectl apply -f` takes as it takes YAML, so no YAML writer is
//! needed and a test reads it back with serde_json.

use std::path::Path;

use anyhow::Result;
use serde_json::json;

use crate::cli::{FleetAction, FleetCmdArgs, FleetReportArgs, ManifestArgs, MergeArgs};
use crate::commands::report::read_run;
use crate::console::{self, Failure, EXIT_OK};
use crate::files::{self, Dash, Request, RunOutputs};
use crate::run::fleet_result::{emit, emit_saved, merged, workload_checks};
use crate::runtime;
use crate::targeting;

pub fn run(args: FleetCmdArgs) -> Result<i32> {
    match args.action {
        FleetAction::Report(a) => report(a),
        FleetAction::Manifest(a) => {
            let out = files::check(
                &[Request {
                    flag: "-o",
                    path: a.output.as_deref().unwrap_or(Path::new("-")),
                    dash: Dash::Stdout,
                }],
                &[],
            )?
            .remove(0);
            let job = manifest(&a)?;
            out.write_str(&format!("{job}\n"))
                .map_err(|e| Failure::setup(e.to_string(), ""))?;
            // Written to a file: say where, and what applies it (standard output had nothing).
            if let Some(p) = a.output.as_deref().filter(|p| *p != Path::new("-")) {
                eprintln!(
                    "stampede: the Job is in {}; `kubectl apply -f {}` starts it",
                    p.display(),
                    p.display()
                );
            }
            Ok(EXIT_OK)
        }
    }
}

fn report(a: FleetReportArgs) -> Result<i32> {
    fleet::check_name(&a.name).map_err(|e| Failure::usage(e, ""))?;
    let files = RunOutputs::check(a.json.as_deref(), a.html.as_deref(), &[])?;
    targeting::validate(&a.target)?;
    if targeting::wants_embedded(&a.target) {
        return Err(Failure::usage(
            "fleet report needs the target the fleet ran on (-h -p -U -d)",
            "give the fleet's database",
        ));
    }
    let conn = targeting::resolve_remote(&a.target)?;
    let rt = runtime::setup()?;
    let stored = rt.block_on(fleet::stored(&conn, &a.name))?;
    let mut m = merged(&stored, &a.name)?;
    workload_checks(&rt, &conn, &mut m)?;
    let (code, saved) = emit_saved(&m, &files);
    if a.forget && !saved {
        // The stored results are the only copy of what was not written.
        console::warning(&format!(
            "fleet {} kept in stampede_fleet (--forget skipped): a file was not written",
            a.name
        ));
    } else if a.forget {
        rt.block_on(fleet::forget(&conn, &a.name))?;
        console::note(&format!("fleet {} removed from stampede_fleet", a.name));
    }
    Ok(code)
}

pub fn merge(a: MergeArgs) -> Result<i32> {
    let inputs: Vec<&Path> = a.inputs.iter().map(|p| p.as_path()).collect();
    let files = RunOutputs::check(a.json.as_deref(), a.html.as_deref(), &inputs)?;
    let results = (a.inputs.iter())
        .map(|p| read_run(p))
        .collect::<Result<Vec<_>>>()?;
    let mut m = report::merge::merge(&results, None).map_err(|e| Failure::usage(e, ""))?;
    m.command_line = std::iter::once("stampede merge".to_string())
        .chain(a.inputs.iter().map(|p| p.display().to_string()))
        .collect();
    Ok(emit(&m, &files))
}

/// A Kubernetes Job (batch/v1) running `stampede ARGS --fleet NAME --fleet-size N` as N
/// indexed pods: completionMode Indexed gives each pod JOB_COMPLETION_INDEX, which `--fleet`
/// takes as the index; the password comes from a Secret as PGPASSWORD (MYSQL_PWD for a MySQL
/// target, which the MySQL client conventions read), never from the args. The container's
/// `command` is `stampede`, found on the image's PATH (Kubernetes' `command` replaces the
/// image's ENTRYPOINT), so any image with stampede on its PATH serves; `scripts/image.sh` and
/// the Containerfile build one, and `tests/image.rs` runs this Job's pods from such an image.
pub(crate) fn manifest(a: &ManifestArgs) -> Result<String> {
    fleet::check_name(&a.name).map_err(|e| Failure::usage(e.replace("--fleet", "--name"), ""))?;
    if a.workers == 0 {
        return Err(Failure::usage(
            "--workers 0: a fleet has at least one process",
            "",
        ));
    }
    if a.args.first().map(String::as_str) != Some("run") {
        return Err(Failure::usage(
            "fleet manifest runs `stampede run ...` in each pod",
            "give the run after --: `stampede fleet manifest --workers N -- run WORKLOAD ...`",
        ));
    }
    if a.args.iter().any(|x| x.starts_with("--fleet")) {
        return Err(Failure::usage(
            "the manifest sets --fleet, --fleet-size and the index itself",
            "leave them out of the args after --",
        ));
    }
    if sut::conninfo::redact_args(&a.args) != a.args {
        return Err(Failure::usage(
            "the args after -- hold a password; a manifest must not",
            format!("store it in the Secret {} (key {})", a.secret, a.secret_key),
        ));
    }
    let mysql = a.args.iter().any(|x| {
        x.starts_with("mysql://") || x == "--db-driver=mysql" || x.starts_with("--mysql-")
    });
    let password_env = if mysql { "MYSQL_PWD" } else { "PGPASSWORD" };
    let mut args = a.args.clone();
    args.extend([
        "--fleet".into(),
        a.name.clone(),
        "--fleet-size".into(),
        a.workers.to_string(),
    ]);
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": a.name, "labels": { "app": "stampede", "stampede-fleet": a.name } },
        "spec": {
            "completionMode": "Indexed",
            "completions": a.workers,
            "parallelism": a.workers,
            // A retried pod would join a fleet that has already started: fail instead.
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": { "app": "stampede", "stampede-fleet": a.name } },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "stampede",
                        "image": a.image,
                        // An image loaded into the nodes (kind, minikube) under a `:latest`
                        // tag, as `--image`'s default, would otherwise be pulled and not found.
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["stampede"],
                        "args": args,
                        "env": [{
                            "name": password_env,
                            "valueFrom": { "secretKeyRef": { "name": a.secret, "key": a.secret_key } }
                        }]
                    }]
                }
            }
        }
    });
    Ok(serde_json::to_string_pretty(&job)?)
}
