//! stampede: the binary. Parses the command line, runs one command, prints `Error: ...` with its
//! context and picks the exit code. Only this crate touches argv, files, signals and exit codes.
//!
//! Exit codes: 0 success; 1 bad input or a setup failure (nothing was measured); 2 the run
//! finished but clients aborted or a check failed; 130 interrupted by Ctrl-C (partial result
//! printed and saved).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod checks;
mod cli;
mod commands;
mod dropin;
mod environment;
mod interrupt;
mod targeting;

fn main() {
    let cli = cli::parse();
    interrupt::install();
    let code = match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            // Every message passes through redaction: a password never reaches the terminal.
            eprintln!("Error: {}", target::conninfo::redact(&format!("{e:#}")));
            1
        }
    };
    std::process::exit(code);
}
