//! `stampede completions SHELL` and `stampede man [SUBCOMMAND] [--dir DIR]`: clap_complete's and
//! clap_mangen's output for `cli::command()`, the one definition the parser uses too. The
//! drop-ins (`pgbench`, `sysbench`) parse their peer's command line by hand and are listed as
//! subcommands taking their peer's arguments.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{CompletionsArgs, ManArgs};
use crate::console::Failure;

pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut cmd = crate::cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "stampede", &mut out);
    out.flush()?;
    Ok(0)
}

pub fn man(args: ManArgs) -> Result<i32> {
    // Built from the root: a subcommand's page then has the root's global `-?/--help`, not an
    // automatic `-h` that would clash with the host's.
    let mut cmd = crate::cli::command();
    cmd.build();
    if let Some(dir) = args.dir {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        clap_mangen::generate_to(cmd, &dir)
            .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
        eprintln!("stampede: manual pages written to {}", dir.display());
        return Ok(0);
    }
    let page = match args.subcommand.as_deref() {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            // clap_mangen names a subcommand's page `stampede-NAME` (its `generate_to` does
            // the same), so `man stampede-run` finds what `--dir` wrote.
            let sub = cmd.find_subcommand(name).cloned().ok_or_else(|| {
                Failure::usage(
                    format!("`{name}` is no subcommand of stampede"),
                    format!("one of: {}", names.join(", ")),
                )
            })?;
            // clap's names are `&'static str` (its `string` feature is off): a page is
            // rendered once per process, so the two short strings are leaked, not copied.
            let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
            let version = leak(cmd.get_version().unwrap_or_default().to_string());
            sub.name(leak(format!("stampede-{name}"))).version(version)
        }
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(page).render(&mut buf)?;
    std::io::stdout().lock().write_all(&buf)?;
    Ok(0)
}
