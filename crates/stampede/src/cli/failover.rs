//! `stampede failover`'s face: it parses into `run`'s options (a failover is `run
//! failover-probe` with its own defaults, `commands::failover`), but its help, man page and
//! completions show only the options a failover measurement reads, and the others are refused
//! with the command that takes them. One list ([`OPTIONS`]) says which; a new `run` option stays
//! out of failover's help until it is added here on purpose.

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

/// The ids (field names of `RunArgs` and its flattened groups) of the options `stampede
/// failover` takes, besides its positional TARGET.
pub const OPTIONS: &[&str] = &[
    // The probe's load: clients, threads, the schedule and the protocol.
    "clients",
    "jobs",
    "time",
    "rate",
    "protocol",
    "spread",
    "read_from",
    // The fault.
    "fault_at",
    "fault_cmd",
    "keep_probe",
    // Output.
    "progress",
    "json",
    "html",
    "failures_detailed",
    "verbose_errors",
    // Checks and watching: the audit is the check; the observer sees the server's side.
    "no_check",
    "no_observe",
    "check_timeout",
    // The target.
    "host",
    "port",
    "username",
    "dbname",
    // Aurora and RDS: the instance's metrics over the failover's window.
    "cloudwatch",
    "instances",
    "dimensions",
];

/// Hidden, but refused by the probe's plan in words of its own ("the failover probe runs for a
/// time: give -T, not -t"), which say more than "not failover's".
const WORDED_BY_THE_PLAN: &[&str] = &["transactions"];

/// The positional that `commands::failover` reads as the target.
const TARGET: &str = "workload";

/// Failover's view of `run`'s options: the others hidden, the positional named TARGET.
pub fn view(cmd: Command) -> Command {
    let hidden: Vec<clap::Id> = cmd
        .get_arguments()
        .filter(|a| !shown(a.get_id().as_str()))
        .map(|a| a.get_id().clone())
        .collect();
    let cmd = hidden
        .into_iter()
        .fold(cmd, |c, id| c.mut_arg(id, |a| a.hide(true)));
    // `mut_arg` moves an argument to the end of the list, and positionals are numbered in list
    // order: the target keeps index 1 (and run's DBNAME, hidden, 2) by saying so.
    let cmd = cmd.mut_arg("positional_dbname", |a| a.index(2));
    cmd.mut_arg(TARGET, |a| {
        a.index(1)
            .value_name("TARGET")
            .help("The server: a conninfo or URL, as -d (`host=a,b dbname=app`, `postgres://a,b/app`, `mysql://h/db`)")
            .long_help(None)
            .help_heading(None)
    })
}

fn shown(id: &str) -> bool {
    id == TARGET || id == "help" || id == "version" || OPTIONS.contains(&id)
}

/// A `run` option given to `stampede failover` on the command line: a usage error naming it
/// (exit 64), rather than an option quietly read or quietly ignored.
pub fn refuse_run_options(root: &Command, m: &ArgMatches) -> Result<(), clap::Error> {
    // Built from the root, so the subcommand has the root's global `-?/--help` and not an
    // automatic `-h` beside the host's.
    let mut root = root.clone();
    root.build();
    let Some(cmd) = root.find_subcommand("failover") else {
        return Ok(());
    };
    for id in m.ids() {
        let name = id.as_str();
        // A flattened group's id (`TargetArgs`) is present when one of its options is: only
        // arguments are judged.
        let Some(arg) = cmd.get_arguments().find(|a| a.get_id() == id) else {
            continue;
        };
        // A second positional is `commands::failover`'s to refuse ("one positional argument,
        // the target"), in its words; so are the options the probe's plan words itself.
        if shown(name)
            || arg.is_positional()
            || WORDED_BY_THE_PLAN.contains(&name)
            || m.value_source(name) != Some(ValueSource::CommandLine)
        {
            continue;
        }
        let flag = (arg.get_long().map(|l| format!("--{l}")))
            .or(arg.get_short().map(|s| format!("-{s}")))
            .unwrap_or_else(|| name.to_string());
        let mut cmd = cmd.clone();
        return Err(cmd.error(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "{flag} is an option of `stampede run`, not of `stampede failover` \
                 (`stampede failover --help` lists its options; `stampede run failover-probe {flag} ...` \
                 takes all of run's)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help() -> String {
        let mut root = crate::cli::command();
        root.build();
        let cmd = root.find_subcommand_mut("failover").expect("failover");
        cmd.render_long_help().to_string()
    }

    #[test]
    fn failover_help_shows_its_own_options_only() {
        let h = help();
        for own in [
            "--fault-at",
            "--fault-cmd",
            "--rate",
            "--json",
            "--host",
            "--cloudwatch",
        ] {
            assert!(h.contains(own), "{own} missing from failover --help:\n{h}");
        }
        // run's positionals, workload options and other families' groups are not failover's.
        for other in [
            "[DBNAME]",
            "[WORKLOAD]",
            "--builtin",
            "--sweep",
            "--warehouses",
            "--list",
            "TPC-H",
            "--fleet",
            "--embedded",
        ] {
            assert!(!h.contains(other), "{other} in failover --help:\n{h}");
        }
        assert!(h.contains("[TARGET]"), "{h}");
    }

    #[test]
    fn every_listed_option_exists() {
        // A renamed field would otherwise drop silently out of the help.
        let root = crate::cli::command();
        let cmd = root.find_subcommand("failover").unwrap();
        for id in OPTIONS {
            let arg = cmd.get_arguments().find(|a| a.get_id() == *id);
            assert!(arg.is_some_and(|a| !a.is_hide_set()), "{id}");
        }
    }

    #[test]
    fn a_run_option_is_refused_with_its_name() {
        let root = crate::cli::command();
        let m = root
            .clone()
            .try_get_matches_from(["stampede", "failover", "--sweep", "clients=1,2"])
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        let e = refuse_run_options(&root, sub).unwrap_err().to_string();
        assert!(e.contains("--sweep is an option of `stampede run`"), "{e}");
        let m = root
            .clone()
            .try_get_matches_from(["stampede", "failover", "postgres://a,b/x", "-c", "2"])
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        let ok = refuse_run_options(&root, sub);
        assert!(ok.is_ok(), "{:?}", ok.map_err(|e| e.to_string()));
        // The one positional is the target, whatever the view moved.
        assert_eq!(
            sub.get_one::<String>(TARGET).map(String::as_str),
            Some("postgres://a,b/x")
        );
        assert!(sub.get_one::<String>("positional_dbname").is_none());
        // Target options (a flattened group) and -t (refused by the plan in its own words) pass.
        for argv in [
            &[
                "stampede", "failover", "-h", "/tmp", "-p", "1", "-d", "postgres",
            ][..],
            &["stampede", "failover", "-t", "5"][..],
        ] {
            let m = root.clone().try_get_matches_from(argv).unwrap();
            let (_, sub) = m.subcommand().unwrap();
            assert!(refuse_run_options(&root, sub).is_ok(), "{argv:?}");
        }
    }
}
