//! `$node` of 001: the test's server and what `PostgreSQL::Test::Cluster` does with it for pgbench's
//! tests: `pgbench` (script files written to the node's directory, passed with `--file` in the
//! order of their names, the pgbench under test run with the node's `PGHOST`/`PGPORT` and
//! `PGDATABASE=postgres`), `safe_psql`, `psql`, changing settings and reloading, the server log.
//!
//! Differences from the Perl harness, none changing what a case checks:
//! - the server is the test binary's private one (`testkit::PerBinary`, Debian's PostgreSQL 15,
//!   `initdb --no-locale`, i.e. upstream's `--locale C`), with fsync off and autovacuum off;
//! - its superuser is `postgres`, not the account running the tests, so `PGUSER=postgres` is set
//!   (upstream connects as the OS user, which owns its cluster);
//! - `append_conf` + `reload` become `ALTER SYSTEM` + `pg_reload_conf()`, and the reload is waited
//!   for (a new session sees the values) instead of assumed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use testkit::{PerBinary, Pg, THROWAWAY};

use crate::tap::{run, split_opts, strip_weight, write_file, Check, Env, Output, Pgbench, Tap};

static PG: PerBinary = PerBinary::new(&[THROWAWAY, &[("shared_buffers", "128MB")]]);

pub struct Node {
    pub tap: Tap,
    pub pg: &'static Pg,
    pub pgbench: Pgbench,
    pub env: Env,
    basedir: tempfile::TempDir,
    pub server_version_num: i32,
}

impl Node {
    pub fn start() -> Node {
        let pg = PG.get();
        let mut env = Env::new("001_pgbench_with_server.pl");
        env.set("PGHOST", &pg.socket_dir().display().to_string());
        env.set("PGPORT", &pg.port().to_string());
        env.set("PGDATABASE", "postgres");
        env.set("PGUSER", "postgres");
        let basedir = tempfile::Builder::new()
            .prefix("001_pgbench_main")
            .tempdir()
            .unwrap();
        let mut node = Node {
            tap: Tap::new("001_pgbench_with_server"),
            pg,
            pgbench: Pgbench::under_test(),
            env,
            basedir,
            server_version_num: 0,
        };
        node.server_version_num = node
            .safe_psql("postgres", "SHOW server_version_num")
            .parse()
            .unwrap();
        node
    }

    pub fn basedir(&self) -> &Path {
        self.basedir.path()
    }

    pub fn logfile(&self) -> PathBuf {
        self.pg.log_file().to_path_buf()
    }

    /// `$node->pgbench($opts, $stat, $out, $err, $name, $files, @args)`
    #[allow(clippy::too_many_arguments)]
    pub fn pgbench(
        &mut self,
        opts: &str,
        stat: i32,
        out: &[Check],
        err: &[Check],
        name: &str,
        files: &[(&str, String)],
        args: &[String],
    ) {
        let output = self.run_pgbench(opts, files, args);
        self.tap.command_checks_all(&output, stat, out, err, name);
    }

    /// The command line of `$node->pgbench`, run; the files written first.
    pub fn run_pgbench(&mut self, opts: &str, files: &[(&str, String)], args: &[String]) -> Output {
        let mut cmd = self.pgbench.prefix.clone();
        cmd.extend(split_opts(opts));
        let mut files: Vec<&(&str, String)> = files.iter().collect();
        files.sort_by_key(|(n, _)| *n);
        for (fname, contents) in files {
            let path = self.basedir().join(fname);
            cmd.push("--file".into());
            cmd.push(path.display().to_string());
            let path = self.basedir().join(strip_weight(fname));
            if path.exists() {
                self.tap.ok(
                    false,
                    &format!("{} must not already exist", path.display()),
                    String::new,
                );
                std::fs::remove_file(&path).unwrap();
            }
            write_file(&path, contents);
        }
        cmd.extend(args.iter().cloned());
        run(&self.pgbench.program, &cmd, &self.env)
    }

    /// `$node->psql($db, $sql)`: (status, stdout without its last newline, stderr), psql as the
    /// Perl harness runs it (`-X -A -t -q`, ON_ERROR_STOP, the SQL on standard input).
    pub fn psql(&self, db: &str, sql: &str) -> (i32, String, String) {
        let mut child = Command::new(self.pg.bin("psql"))
            .args(["--no-psqlrc", "--no-align", "--tuples-only", "--quiet"])
            .args(["--dbname", db, "--file", "-", "--set", "ON_ERROR_STOP=1"])
            .env("PGHOST", self.pg.socket_dir())
            .env("PGPORT", self.pg.port().to_string())
            .env("PGUSER", "postgres")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run psql");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(sql.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let chomp = |b: &[u8]| {
            let s = String::from_utf8_lossy(b).replace('\r', "");
            s.strip_suffix('\n').unwrap_or(&s).to_string()
        };
        (
            out.status.code().unwrap_or(-1),
            chomp(&out.stdout),
            chomp(&out.stderr),
        )
    }

    /// `$node->safe_psql($db, $sql)`: psql's output. Where upstream's test dies when psql fails,
    /// this records a failed check and goes on (so one missing feature does not hide the rest of
    /// the listing); messages on standard error alone (NOTICEs) do not count, as upstream.
    pub fn safe_psql(&mut self, db: &str, sql: &str) -> String {
        let (ret, out, err) = self.psql(db, sql);
        if ret != 0 {
            self.tap
                .ok(false, &format!("safe_psql: {sql}"), || err.clone());
        }
        out
    }

    /// `$node->append_conf('postgresql.conf', ...); $node->reload;`, waiting until a new session
    /// sees every value.
    pub fn set_and_reload(&mut self, settings: &[(&str, &str)]) {
        for (k, v) in settings {
            self.safe_psql("postgres", &format!("ALTER SYSTEM SET {k} = '{v}'"));
        }
        self.safe_psql("postgres", "SELECT pg_reload_conf()");
        let names: Vec<String> = settings.iter().map(|(k, _)| format!("'{k}'")).collect();
        let want: String = {
            let mut s: Vec<(&str, &str)> = settings.to_vec();
            s.sort();
            s.iter()
                .map(|(k, v)| format!("{k}|{v}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let sql = format!(
            "SELECT name, setting FROM pg_settings WHERE name IN ({}) ORDER BY name",
            names.join(", ")
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.safe_psql("postgres", &sql) != want {
            assert!(
                std::time::Instant::now() < deadline,
                "the server never reloaded {settings:?}"
            );
        }
    }

    /// Whether the server is at least `version_num` (`server_version_num`); a check that needs
    /// more is recorded as skipped with `why`.
    pub fn server_at_least(&mut self, version_num: i32, name: &str, why: &str) -> bool {
        if self.server_version_num >= version_num {
            return true;
        }
        self.tap.skip(
            name,
            &format!(
                "needs a server >= {}; this one is {} ({why})",
                version_num / 10000,
                self.server_version_num
            ),
        );
        false
    }
}

/// `'name' => contents` of a `$files` hash.
pub fn file(name: &'static str, contents: impl Into<String>) -> (&'static str, String) {
    (name, contents.into())
}
