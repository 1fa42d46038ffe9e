//! Help, the manual page and shell completions, as a user gets them from the binary: generated
//! from the one command-line definition, each subcommand with its own options (failover's
//! help shows the probe's, not run's), and a run option given to failover refused (exit 64).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn failover_help_lists_its_own_options_and_refuses_runs() {
    let (code, help, _) = run(&["failover", "--help"]);
    assert_eq!(code, 0);
    assert!(
        help.contains("Usage: stampede failover [TARGET] [OPTIONS]"),
        "{help}"
    );
    for own in ["--fault-at", "--fault-cmd", "--rate", "--json", "--host"] {
        assert!(help.contains(own), "{own}:\n{help}");
    }
    for other in [
        "[DBNAME]",
        "--sweep",
        "--warehouses",
        "--builtin",
        "TPC-H",
        "--fleet",
    ] {
        assert!(!help.contains(other), "{other}:\n{help}");
    }
    let (code, _, err) = run(&["failover", "--sweep", "clients=1,2", "host=a,b"]);
    assert_eq!(code, 64, "{err}");
    assert!(
        err.contains("--sweep is an option of `stampede run`"),
        "{err}"
    );
    // The top lines say what stampede is today: both protocol families, not PostgreSQL alone.
    let (_, top, _) = run(&["--help"]);
    let first = top.lines().next().unwrap();
    assert!(
        first.contains("MySQL") && first.contains("TPC-C"),
        "{first}"
    );
}

#[test]
fn completions_are_generated_for_each_shell() {
    let (code, bash, err) = run(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        bash.contains("failover") && bash.contains("--fault-at"),
        "bash"
    );
    // The script parses as bash.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("stampede.bash");
    std::fs::write(&f, &bash).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&f).output().unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let (code, text, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(text.contains("warehouses"), "{shell}");
    }
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert_eq!(code, 64, "{err}");
}

#[test]
fn the_manual_pages_are_generated() {
    let (code, page, err) = run(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        page.starts_with(".ie \\n(.g") || page.contains(".TH stampede"),
        "{page}"
    );
    assert!(
        page.contains(".TH stampede"),
        "{}",
        &page[..200.min(page.len())]
    );
    let (code, runpage, _) = run(&["man", "run"]);
    assert_eq!(code, 0);
    assert!(runpage.contains(".TH stampede-run"), "{}", &runpage[..300]);
    assert!(runpage.contains("\\-\\-warehouses"));
    let (code, _, err) = run(&["man", "nosuch"]);
    assert_eq!(code, 64, "{err}");
    assert!(err.contains("nosuch"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    let (code, _, err) = run(&["man", "--dir", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let failover = std::fs::read_to_string(out.join("stampede-failover.1")).unwrap();
    assert!(failover.contains("\\-\\-fault\\-at"), "{failover}");
    assert!(
        !failover.contains("warehouses"),
        "failover's page is its own"
    );
    assert!(out.join("stampede.1").exists() && out.join("stampede-run.1").exists());
}
