//! The README is run: every command of its `sh` blocks, top to bottom in one working directory,
//! against a private server that stands for the README's `db1` (user `bench`, databases `mydb`
//! and `sbtest`), with durations and sizes shortened; and its workload table is what
//! `stampede run --list=markdown` prints.
//!
//! Commands run through bash with `stampede`, `pgbench` and `sysbench` on PATH all being this
//! build's binary (the last two by their names, as the drop-ins). Not run here: `./test.sh` (the
//! suite itself) and `bench/run` (the benchmark harness: timings live there, not in tests);
//! `./quickstart.sh ARGS` is run as the `stampede ARGS` it ends with (its install and release
//! build are the CI's fresh-machine job).

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// The commands of every ```sh block: continuation lines joined, comments dropped.
fn sh_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if !in_sh {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if line.trim() == "```" {
            in_sh = false;
            continue;
        }
        let code = match line.find(" #") {
            Some(i) => &line[..i],
            None => line,
        };
        let code = code.trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(code);
        let cmd = pending.trim().to_string();
        pending.clear();
        if !cmd.is_empty() {
            out.push(cmd);
        }
    }
    out
}

/// A README command as the test runs it: `db1` is the private server, durations are 4 s (three
/// full intervals after compare's 1 s of ramp-up), scales, warehouses and table sizes small.
fn shortened(cmd: &str, host: &str, port: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut it = cmd.split_whitespace().peekable();
    while let Some(tok) = it.next() {
        let replace_next = |v: &str, out: &mut Vec<String>| {
            out.push(tok.to_string());
            out.push(v.to_string());
        };
        match tok {
            "-h" if it.peek() == Some(&"db1") => {
                it.next();
                out.extend(["-h".into(), host.into(), "-p".into(), port.into()]);
            }
            "--pgsql-host=db1" => {
                out.push(format!("--pgsql-host={host}"));
                out.push(format!("--pgsql-port={port}"));
            }
            "-T" | "--time" => {
                it.next();
                replace_next("4", &mut out);
            }
            "-s" | "-w" => {
                it.next();
                replace_next("1", &mut out);
            }
            "--table-size" => {
                it.next();
                replace_next("1000", &mut out);
            }
            t if t.starts_with("--time=") => out.push("--time=4".into()),
            t if t.starts_with("--table-size=") => out.push("--table-size=1000".into()),
            t => out.push(t.to_string()),
        }
    }
    out.join(" ")
}

#[test]
fn the_workload_table_is_run_list_markdown() {
    let text = readme();
    let start = "<!-- workloads: stampede run --list=markdown -->\n";
    let i = text.find(start).expect("the table's start marker") + start.len();
    let j = text[i..]
        .find("<!-- /workloads -->")
        .expect("its end marker")
        + i;
    let out = Command::new(BIN)
        .args(["run", "--list=markdown"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        &text[i..j],
        String::from_utf8_lossy(&out.stdout),
        "README's workload table differs from `stampede run --list=markdown`: paste its output"
    );
}

#[test]
fn the_quick_start_has_exactly_two_commands() {
    let text = readme();
    let i = text.find("## Quick start").unwrap();
    let j = text[i + 1..].find("\n## ").unwrap() + i + 1;
    assert_eq!(
        sh_commands(&text[i..j]),
        vec!["./quickstart.sh".to_string(), "./test.sh".to_string()]
    );
    let qs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../quickstart.sh"))
            .unwrap();
    assert!(
        qs.trim_end()
            .ends_with("exec ./target/release/stampede \"$@\""),
        "quickstart.sh runs stampede with its arguments: {qs}"
    );
}

#[test]
fn every_readme_command_runs() {
    let text = readme();
    let commands = sh_commands(&text);
    assert!(commands.len() >= 20, "{commands:?}");

    let server = Server::start();
    let (host, port) = (server.host(), server.port());
    server.psql("postgres", "CREATE ROLE bench SUPERUSER LOGIN");
    server.psql("postgres", "CREATE DATABASE mydb OWNER bench");
    server.psql("postgres", "CREATE DATABASE sbtest OWNER bench");

    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for name in ["stampede", "pgbench", "sysbench"] {
        std::os::unix::fs::symlink(BIN, bin.join(name)).unwrap();
    }
    // The README's own script, as a user would have one.
    std::fs::write(
        work.path().join("my.sql"),
        "\\set aid random(1, 100000 * :scale)\n\
         SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND :region > 0;\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let server_dir = work.path().join("server");

    let mut ran = 0;
    for cmd in &commands {
        let cmd = match cmd.as_str() {
            "./test.sh" => continue,
            c if c.starts_with("bench/run") || c.starts_with("python3 bench/") => continue,
            c => match c.strip_prefix("./quickstart.sh") {
                Some(args) => format!("stampede{args}"),
                None => c.to_string(),
            },
        };
        let mut line = shortened(&cmd, &host, &port);
        if line.starts_with("stampede server ") {
            line = format!("{line} --data-dir {}", server_dir.display());
        }
        let out = Command::new("bash")
            .args(["-c", &line])
            .current_dir(work.path())
            .env("PATH", &path)
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGDATABASE")
            .env_remove("PGUSER")
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "README command: {cmd}\nran as: {line}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
        assert!(
            !stdout.trim().is_empty() || !stderr.trim().is_empty(),
            "{line}: said nothing"
        );
        ran += 1;
    }
    // The files the README's commands write are there.
    for f in [
        "a.json",
        "b.json",
        "b.html",
        "compare.html",
        "a.html",
        "run.json",
    ] {
        assert!(work.path().join(f).exists(), "{f} was not written");
    }
    assert!(ran >= 20, "{ran} commands ran");
    // `stampede server stop` ran last among the server commands: nothing left running.
    let status = Command::new(BIN)
        .args(["server", "status", "--data-dir"])
        .arg(&server_dir)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3));
}
