//! The README and the book (`docs/`) are run: every command of their `sh` blocks, file by file
//! in the book's order (README first), top to bottom in one working directory, against private
//! servers that stand for the docs' hosts: `db1` is a PostgreSQL (user `bench`, databases
//! `mydb`, `sbtest`, `tpch`, `ch`, `ycsb`) and, in `mysql://` URLs, a MariaDB (user `bench`;
//! `node1`..`node3` are three endpoints of it), `bouncer` a pgbouncer in front of the
//! PostgreSQL. Durations, scales, warehouses and table sizes are shortened (`shortened`), never
//! the command's shape.
//!
//! Commands run through bash with `stampede`, `pgbench` and `sysbench` on PATH all being this
//! build's binary (the last two by their names, as the drop-ins). Not run: `./test.sh` (the
//! suite itself), `bench/run` and `python3 bench/...` (the benchmark harness: timings live
//! there); `./quickstart.sh ARGS` is run as the `stampede ARGS` it ends with (its install and
//! release build are the CI's fresh-machine job). A `console` block is shown, not run: it is
//! allowed only for commands that need other machines (ssh, kubectl, a registry) or a release
//! build (`cargo install`), which
//! [`console_blocks_need_other_machines`] holds them to. The book itself is built with mdBook's
//! library, and every page is in its summary.

mod common;
#[path = "common/pgbouncer.rs"]
mod pgbouncer;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Server;
use testkit::MariaDb;

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The book's pages in its summary's order.
fn book_pages() -> Vec<String> {
    let summary = read("docs/src/SUMMARY.md");
    summary
        .lines()
        .filter_map(|l| {
            let i = l.find("](")?;
            let j = l[i + 2..].find(')')? + i + 2;
            Some(format!("docs/src/{}", &l[i + 2..j]))
        })
        .collect()
}

/// README.md, then the book's pages: (file, text).
fn documents() -> Vec<(String, String)> {
    std::iter::once("README.md".to_string())
        .chain(book_pages())
        .map(|f| {
            let t = read(&f);
            (f, t)
        })
        .collect()
}

/// The commands of every block of `lang`: continuation lines joined, comments dropped.
fn commands(text: &str, lang: &str) -> Vec<String> {
    blocks(text, lang).into_iter().flatten().collect()
}

/// The commands of each block of `lang`, block by block.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in text.lines() {
        if !inside {
            inside = line.trim() == format!("```{lang}");
            if inside {
                out.push(Vec::new());
            }
            continue;
        }
        if line.trim() == "```" {
            inside = false;
            continue;
        }
        let code = match line.find(" #") {
            Some(i) if !line[..i].contains('\'') || line[..i].matches('\'').count() % 2 == 0 => {
                &line[..i]
            }
            _ => line,
        };
        let code = code.trim_end();
        if code.trim_start().starts_with('#') {
            continue;
        }
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(code.trim_start());
        let cmd = pending.trim().to_string();
        pending.clear();
        if !cmd.is_empty() {
            out.last_mut().unwrap().push(cmd);
        }
    }
    out
}

/// The test's stand-ins for the docs' hosts.
struct Hosts {
    pg_host: String,
    pg_port: String,
    mysql: String,
    bouncer_host: String,
    bouncer_port: String,
    /// Free ports for the docs' 5433 and 5434 (the one-machine failover's two servers).
    ports: [String; 2],
}

/// A port nothing listens on now.
fn free_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port().to_string()
}

/// A command as the test runs it: the docs' hosts are the private servers; durations are 4 s
/// (three full intervals after compare's 1 s of ramp-up) unless a fault is timed within them;
/// scales, warehouses, sizes and connection counts small; a sweep's values few.
fn shortened(cmd: &str, h: &Hosts) -> String {
    let timed_fault = cmd.contains("--fault-at");
    let cmd = cmd
        .replace("5433", &h.ports[0])
        .replace("5434", &h.ports[1])
        .replace(
            "mysql://bench@db1:3306/",
            &format!("mysql://bench@{}/", h.mysql),
        )
        .replace(
            "node1:3306,node2:3306,node3:3306",
            &format!("{m},{m},{m}", m = h.mysql),
        );
    let (mhost, mport) = h.mysql.split_once(':').unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut it = cmd.split(' ').filter(|t| !t.is_empty()).peekable();
    while let Some(tok) = it.next() {
        // The option's value, replaced by `v`.
        let mut swap = |v: &str, it: &mut std::iter::Peekable<_>| {
            let _: Option<&str> = it.next();
            out.push(tok.to_string());
            out.push(v.to_string());
        };
        match tok {
            "-h" if it.peek() == Some(&"db1") => {
                it.next();
                out.extend([
                    "-h".into(),
                    h.pg_host.clone(),
                    "-p".into(),
                    h.pg_port.clone(),
                ]);
            }
            "-h" if it.peek() == Some(&"bouncer") => {
                it.next();
                out.extend(["-h".into(), h.bouncer_host.clone()]);
            }
            "6432" => out.push(h.bouncer_port.clone()),
            "--pgsql-host=db1" => {
                out.push(format!("--pgsql-host={}", h.pg_host));
                out.push(format!("--pgsql-port={}", h.pg_port));
            }
            "--mysql-host=db1" => {
                out.push(format!("--mysql-host={mhost}"));
                out.push(format!("--mysql-port={mport}"));
            }
            "-T" | "--time" if !timed_fault => swap("4", &mut it),
            // TPC-H's scale factors are fractions; TPC-B's and TPC-C's whole numbers.
            "--scale" => swap("0.01", &mut it),
            "-s" | "-w" => swap("1", &mut it),
            "--table-size" => swap("1000", &mut it),
            "--warmup" => swap("1", &mut it),
            // A client count (psql's `-c 'SQL'` in a fault command is no number: left alone).
            "-c" | "--client" if it.peek().is_some_and(|v| v.parse::<u32>().is_ok()) => {
                let n: u32 = it.peek().unwrap().parse().unwrap();
                swap(&n.min(32).to_string(), &mut it)
            }
            "--connect-rate" => swap("500", &mut it),
            t if t.starts_with("--time=") && !timed_fault => out.push("--time=4".into()),
            t if t.starts_with("--table-size=") => out.push("--table-size=1000".into()),
            t if t.starts_with("--threads=") => {
                let n: u32 = t["--threads=".len()..].parse().unwrap_or(1);
                out.push(format!("--threads={}", n.min(32)));
            }
            t if t.starts_with("clients=1..") => out.push("clients=1..4".into()),
            t if t.starts_with("scale=") => out.push("scale=1,2".into()),
            t if t.starts_with("recordcount=") => out.push("recordcount=1000".into()),
            t => out.push(t.to_string()),
        }
    }
    out.join(" ")
}

#[test]
fn the_workload_table_is_run_list_markdown() {
    let text = read("docs/src/workloads.md");
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
        "docs/src/workloads.md's table differs from `stampede run --list=markdown`: paste its output"
    );
}

#[test]
fn the_quick_start_has_exactly_two_commands_and_shows_the_build() {
    let text = read("README.md");
    let i = text.find("## Quick start").unwrap();
    let j = text[i + 1..].find("\n## ").unwrap() + i + 1;
    assert_eq!(
        commands(&text[i..j], "sh"),
        vec!["./quickstart.sh".to_string(), "./test.sh".to_string()]
    );
    let qs = read("quickstart.sh");
    assert!(
        qs.trim_end()
            .ends_with("exec ./target/release/stampede \"$@\""),
        "quickstart.sh runs stampede with its arguments: {qs}"
    );
    // A first build takes minutes: cargo's progress must show (no --quiet), and the script
    // says how long to expect.
    let build = qs.lines().find(|l| l.starts_with("cargo build")).unwrap();
    assert!(!build.contains("-q"), "{build}");
    assert!(qs.contains("minutes"), "{qs}");
}

#[test]
fn the_book_builds_and_holds_every_page() {
    let pages = book_pages();
    let mut on_disk: Vec<String> = std::fs::read_dir(root().join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .map(|n| format!("docs/src/{n}"))
        .collect();
    on_disk.sort();
    let mut listed = pages.clone();
    listed.sort();
    assert_eq!(
        listed, on_disk,
        "every page of docs/src is in SUMMARY.md, once"
    );
    let out = tempfile::tempdir().unwrap();
    let mut book = mdbook::MDBook::load(root().join("docs")).expect("docs/book.toml loads");
    book.config.build.build_dir = out.path().to_path_buf();
    book.build().expect("the book builds");
    for p in &pages {
        let html = Path::new(p)
            .file_stem()
            .map(|s| format!("{}.html", s.to_string_lossy()))
            .unwrap();
        assert!(out.path().join(&html).exists(), "{html} not rendered");
    }
    // Links between pages and to the repository's files resolve.
    for (file, text) in documents() {
        let dir = root().join(&file).parent().unwrap().to_path_buf();
        for (k, _) in text.match_indices("](") {
            let rest = &text[k + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.contains(' ') {
                continue;
            }
            assert!(
                dir.join(target).exists(),
                "{file}: link to {target} is broken"
            );
        }
    }
}

/// A `console` block (shown, not run) is one whose sequence needs what the test does not have:
/// another machine, a cluster, a registry or a release build. Each of its parts that can run
/// here runs elsewhere: the image and the manifest's pods in tests/image.rs, the fleet in
/// tests/fleet.rs, pg_auto_failover in tests/auto_failover.rs.
#[test]
fn console_blocks_need_other_machines() {
    const ELSEWHERE: [&str; 8] = [
        "ssh ",
        "kubectl ",
        "pdsh ",
        "podman push",
        // The Containerfile's base images come from a registry.
        "podman build",
        // A release build of minutes (tests/image.rs runs it with the test's binary).
        "scripts/image.sh",
        "cargo install",
        "docker push",
    ];
    for (file, text) in documents() {
        for block in blocks(&text, "console") {
            assert!(
                block
                    .iter()
                    .any(|c| ELSEWHERE.iter().any(|e| c.contains(e))),
                "{file}: a console block (not run) needs no other machine: make it a sh \
                 block: {block:?}"
            );
        }
        // Blocks of commands are sh or console: a ```text block holds output, not commands.
        let mut inside_text = false;
        for line in text.lines() {
            match line.trim() {
                "```text" => inside_text = true,
                "```" => inside_text = false,
                l if inside_text => assert!(
                    !(l.starts_with("stampede ") || l.starts_with("pgbench ")),
                    "{file}: a command in a text block is never run: `{l}`"
                ),
                _ => {}
            }
        }
    }
}

#[test]
fn every_documented_command_runs() {
    let docs = documents();
    let all: Vec<(String, String)> = docs
        .iter()
        .flat_map(|(f, t)| commands(t, "sh").into_iter().map(move |c| (f.clone(), c)))
        .collect();
    assert!(all.len() >= 60, "{} commands", all.len());

    // Autovacuum off: the fleet's commit check (README, fleets.md) compares the database's
    // xact_commit with the processes' commits, and autovacuum's and autoanalyze's own (which
    // the pages' earlier runs would set going on pgbench's tables) would make it merely
    // inconclusive; the recipes should show it passing.
    let server = Server::start_with(&[("autovacuum", "off")]);
    server.psql("postgres", "CREATE ROLE bench SUPERUSER LOGIN");
    for db in ["mydb", "sbtest", "tpch", "ch", "ycsb", "shop", "shop_copy"] {
        server.psql("postgres", &format!("CREATE DATABASE {db} OWNER bench"));
    }
    let maria = MariaDb::start(&[]);
    maria.sql(
        "CREATE USER bench@'%'; GRANT ALL ON *.* TO bench@'%' WITH GRANT OPTION; \
         CREATE DATABASE sbtest; CREATE DATABASE tpcc; CREATE DATABASE tpch; CREATE DATABASE ycsb; \
         CREATE DATABASE shop; CREATE DATABASE shop_copy",
    );
    pgbouncer::raise_fd_limit();
    let bouncer = pgbouncer::Pgbouncer::start(&pgbouncer::Options {
        server_socket_dir: server.pg.socket_dir(),
        server_port: server.pg.port(),
        max_client_conn: 200,
        pool_size: 20,
    });
    let hosts = Hosts {
        pg_host: server.host(),
        pg_port: server.port(),
        mysql: format!("127.0.0.1:{}", maria.port()),
        bouncer_host: bouncer.socket_dir().display().to_string(),
        bouncer_port: bouncer.port().to_string(),
        ports: [free_port(), free_port()],
    };

    let work = tempfile::tempdir().unwrap();
    // The embedded servers of `stampede server start` run as postgres when the test is root:
    // it must reach their data directories here.
    std::fs::set_permissions(
        work.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for name in ["stampede", "pgbench", "sysbench"] {
        std::os::unix::fs::symlink(BIN, bin.join(name)).unwrap();
    }
    // The docs' own script, as a user would have one.
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

    // While fixing a page: `STAMPEDE_DOCS_FROM=docs/src/tpch.md` starts there (the pages
    // before it are skipped, and so are the counts checked at the end).
    let from = std::env::var("STAMPEDE_DOCS_FROM").ok();
    let start = from.as_deref().map_or(0, |f| {
        all.iter()
            .position(|(file, _)| file == f)
            .expect("no such page")
    });
    if start > 0 {
        // What the skipped pages would have loaded: pgbench's tables in mydb.
        let init = Command::new(BIN)
            .args([
                "init",
                "tpcb",
                "-s",
                "1",
                "-h",
                &hosts.pg_host,
                "-p",
                &hosts.pg_port,
            ])
            .args(["-U", "bench", "-d", "mydb"])
            .output()
            .unwrap();
        assert!(
            init.status.success(),
            "{}",
            String::from_utf8_lossy(&init.stderr)
        );
    }
    let mut ran = 0;
    for (file, cmd) in &all[start..] {
        let cmd = match cmd.as_str() {
            "./test.sh" => continue,
            c if c.starts_with("bench/run") || c.starts_with("python3 bench/") => continue,
            c => match c.strip_prefix("./quickstart.sh") {
                Some(args) => format!("stampede{args}"),
                None => c.to_string(),
            },
        };
        let mut line = shortened(&cmd, &hosts);
        let per_dir = ["start", "status", "stop"]
            .iter()
            .any(|a| line.starts_with(&format!("stampede server {a}")));
        if per_dir && !line.contains("--data-dir") {
            line = format!("{line} --data-dir {}", server_dir.display());
        }
        eprintln!("{file}: {line}");
        let out = Command::new("bash")
            .args(["-c", &line])
            .current_dir(work.path())
            .env("PATH", &path)
            // `server list`'s register of kept servers: the test's own, not the machine's.
            .env("XDG_DATA_HOME", work.path().join("xdg"))
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
            "{file}: {cmd}\nran as: {line}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
        // Every command says something, unless its output goes to a file.
        assert!(
            !stdout.trim().is_empty() || !stderr.trim().is_empty() || line.contains(" > "),
            "{line}: said nothing"
        );
        ran += 1;
    }
    if start > 0 {
        return;
    }
    // The files the docs' commands write are there.
    for f in [
        "before.json",
        "after.json",
        "compare.html",
        "tpcc.json",
        "tpcc.html",
    ] {
        assert!(work.path().join(f).exists(), "{f} was not written");
    }
    assert!(ran >= 60, "{ran} commands ran");
    // The one-machine failover: every acknowledged write was on the promoted standby.
    let fo: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.path().join("failover.json")).unwrap()).unwrap();
    let audit = fo["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "audit")
        .unwrap_or_else(|| panic!("no audit check: {}", fo["checks"]));
    assert_eq!(audit["status"], "passed", "{audit}");
    // ... and the fault ran as written: the primary stopped and the standby promoted (a fault
    // command that failed would still exit 2, which the recipe accepts).
    let fault = (fo["checks"].as_array().unwrap().iter())
        .find(|c| c["name"] == "fault")
        .unwrap_or_else(|| panic!("no fault check: {}", fo["checks"]));
    assert_eq!(fault["status"], "passed", "{fault}");
    // The servers the docs start are stopped by the docs: nothing left running.
    let status = Command::new(BIN)
        .args(["server", "status", "--data-dir"])
        .arg(&server_dir)
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3));
}

#[test]
fn the_shortening_keeps_a_command_whole() {
    let h = Hosts {
        pg_host: "/s".into(),
        pg_port: "5".into(),
        mysql: "127.0.0.1:7".into(),
        bouncer_host: "/b".into(),
        bouncer_port: "9".into(),
        ports: ["15433".into(), "15434".into()],
    };
    assert_eq!(
        shortened(
            "stampede run tpcb-like -c 64 -T 300 -h db1 -U bench -d mydb",
            &h
        ),
        "stampede run tpcb-like -c 32 -T 4 -h /s -p 5 -U bench -d mydb"
    );
    assert_eq!(
        shortened(
            "stampede run oltp_read_write -d mysql://bench@db1:3306/sbtest --table-size 100000",
            &h
        ),
        "stampede run oltp_read_write -d mysql://bench@127.0.0.1:7/sbtest --table-size 1000"
    );
    // A fault timed at 5 s keeps its duration, and psql's -c its SQL.
    let fault = "stampede failover X -T 20 --fault-at 5 --fault-cmd \"psql -c 'SELECT 1'\" -c 64";
    let short = shortened(fault, &h);
    assert!(
        short.contains("-T 20") && short.contains("psql -c 'SELECT 1'"),
        "{short}"
    );
    assert!(short.ends_with("-c 32"), "{short}");
    assert_eq!(
        commands(
            "```sh\na \\\n  b # note\n# only a comment\nc '#x' # y\n```\n",
            "sh"
        ),
        vec!["a b".to_string(), "c '#x'".to_string()]
    );
}
