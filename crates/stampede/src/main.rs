//! stampede: the binary. Decides whose command line it reads (stampede's own, or pgbench's or
//! sysbench's when called as `stampede pgbench`, `stampede sysbench`, or through a link named
//! `pgbench` or `sysbench`), runs one command, prints what went wrong in that command line's
//! conventions and picks the exit code (`console` has the table). Only this crate touches argv,
//! files, signals and exit codes.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod checks;
mod choices;
mod cli;
mod cloud;
mod commands;
mod console;
mod dropin;
mod environment;
mod failpoint;
mod families;
mod files;
mod interrupt;
mod plan;
mod routing;
mod run;
mod runtime;
mod targeting;
mod workloads;

use console::Voice;

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let program = std::path::Path::new(argv.first().map_or("stampede", |s| s.as_str()))
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("stampede")
        .to_string();
    // A drop-in by its link's name or as the first argument.
    let (voice, dropin_args) = match (program.as_str(), argv.get(1).map(String::as_str)) {
        ("pgbench", _) => (Voice::Pgbench, Some(argv[1..].to_vec())),
        ("sysbench", _) => (Voice::Sysbench, Some(argv[1..].to_vec())),
        (_, Some("pgbench")) => (Voice::Pgbench, Some(argv[2..].to_vec())),
        (_, Some("sysbench")) => (Voice::Sysbench, Some(argv[2..].to_vec())),
        _ => (Voice::Stampede, None),
    };
    console::set_voice(voice);
    families::install_views();
    interrupt::install();
    let result = match (voice, dropin_args) {
        (Voice::Pgbench, Some(args)) => dropin::pgbench::main(args),
        (Voice::Sysbench, Some(args)) => dropin::sysbench::main(args),
        _ => commands::dispatch(cli::parse()),
    };
    let code = match result {
        // A command that says "failed" (1) after Ctrl-C or SIGTERM failed because it was
        // interrupted: 130, as the README's exit codes say, whatever path it took (a drop-in's
        // load included: its peer, killed by the signal, would give its shell 130 too).
        Ok(console::EXIT_FAILED) if interrupt::requested() => console::EXIT_INTERRUPTED,
        Ok(code) => code,
        // Every message passes through redaction: a password never reaches the terminal.
        Err(e) => {
            let code = console::report(&e);
            // Whatever failed after Ctrl-C or SIGTERM (a step cut short, a connection the
            // server dropped), the command ended because it was interrupted.
            match interrupt::requested() {
                true => console::EXIT_INTERRUPTED,
                false => code,
            }
        }
    };
    interrupt::exit(code);
}
