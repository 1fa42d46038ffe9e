//! PostgreSQL's TAP helpers for pgbench's own tests, in Rust: what `command_checks_all`, `like`,
//! `ok`, `is`, TODO blocks and skips do in `PostgreSQL::Test::Utils`/`Test::More`, so the cases
//! of `src/bin/pgbench/t/001_pgbench_with_server.pl` and `002_pgbench_no_server.pl` (REL_18_STABLE)
//! read as they do upstream: same names, same command lines, same expected statuses, the same
//! regular expressions on standard output and standard error.
//!
//! Like TAP, a failing check does not stop the suite: every check is recorded, and
//! [`Tap::finish`] prints the whole listing (`ok 12 - name`, `not ok 13 - name`, with the output
//! that failed) and fails the test when a check outside a TODO block failed.
//!
//! The program under test is `stampede pgbench` (this package's binary), or the program named by
//! `STAMPEDE_PGBENCH_UNDER_TEST` (e.g. `/usr/bin/pgbench`, to check the suite itself against a
//! real pgbench).
//!
//! Perl's regular expressions are mapped onto the `regex` crate by [`qr`]: `$` (without `/m`)
//! matches at the end or before a final newline, as Perl's does; `/i`, `/m`, `/s` become inline
//! flags. The few Perl-only constructs of the upstream files (lookahead, backreferences) are
//! rewritten by hand where they occur, each with a note saying why the rewrite means the same.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use regex::Regex;

/// A run that takes longer is killed and counted as failed (upstream relies on the harness's
/// global timeout; the slowest case here takes seconds).
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// How to start the pgbench under test.
#[derive(Clone, Debug)]
pub struct Pgbench {
    pub program: PathBuf,
    /// Words before pgbench's own arguments (`pgbench` for `stampede pgbench`).
    pub prefix: Vec<String>,
}

impl Pgbench {
    /// `STAMPEDE_PGBENCH_UNDER_TEST`, else `stampede pgbench`.
    pub fn under_test() -> Pgbench {
        match std::env::var_os("STAMPEDE_PGBENCH_UNDER_TEST") {
            Some(p) if !p.is_empty() => Pgbench {
                program: PathBuf::from(p),
                prefix: Vec::new(),
            },
            _ => Pgbench {
                program: PathBuf::from(env!("CARGO_BIN_EXE_stampede")),
                prefix: vec!["pgbench".into()],
            },
        }
    }

    /// Whether this is a real pgbench (the override), not stampede.
    pub fn is_override(&self) -> bool {
        self.prefix.is_empty()
    }
}

/// What a command did.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The exit status; None when killed by a signal or the timeout.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Why there is no status.
    pub died: Option<String>,
}

/// The environment of every command, as `PostgreSQL::Test::Utils` sets it: the connection
/// variables of the caller removed (`PG*`), untranslated messages, `PGAPPNAME`; plus what the
/// suite adds (the server's `PGHOST`/`PGPORT`/`PGDATABASE`, `PGOPTIONS`).
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
}

impl Env {
    pub fn new(appname: &str) -> Env {
        let mut vars = BTreeMap::new();
        vars.insert("LC_MESSAGES".into(), "C".into());
        vars.insert("PGAPPNAME".into(), appname.into());
        Env { vars }
    }

    pub fn set(&mut self, k: &str, v: &str) {
        self.vars.insert(k.into(), v.into());
    }

    fn apply(&self, cmd: &mut Command) {
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("PG") || k == "LANGUAGE" || k == "LC_ALL" {
                cmd.env_remove(&*k);
            }
        }
        cmd.envs(&self.vars);
    }
}

/// Run `program args...` with `env`, collecting both streams (Perl's `IPC::Run::run`).
pub fn run(program: &Path, args: &[String], env: &Env) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    env.apply(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Output {
                died: Some(format!("cannot start {}: {e}", program.display())),
                ..Output::default()
            }
        }
    };
    let pid = child.id() as i32;
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let (status, died) = match rx.recv_timeout(RUN_TIMEOUT) {
        Ok(Ok(st)) => match st.code() {
            Some(c) => (Some(c), None),
            None => (None, Some(format!("killed by a signal: {st}"))),
        },
        Ok(Err(e)) => (None, Some(format!("wait: {e}"))),
        Err(_) => {
            // SAFETY: the child has not been reaped (its waiter is still blocked), so the pid is
            // still ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let _ = rx.recv();
            (None, Some(format!("timed out after {RUN_TIMEOUT:?}")))
        }
    };
    Output {
        status,
        stdout: String::from_utf8_lossy(&out_t.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_t.join().unwrap()).into_owned(),
        died,
    }
}

/// A regular expression check, as written upstream (`perl`), and how it is evaluated here.
pub enum Check {
    Re {
        perl: String,
        re: Regex,
    },
    /// A Perl-only construct rewritten by hand (see where it is built).
    Custom {
        perl: String,
        matches: Box<dyn Fn(&str) -> bool>,
    },
}

impl Check {
    pub fn perl(&self) -> &str {
        match self {
            Check::Re { perl, .. } | Check::Custom { perl, .. } => perl,
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Check::Re { re, .. } => re.is_match(text),
            Check::Custom { matches, .. } => matches(text),
        }
    }
}

/// Perl's `qr{...}` without flags.
pub fn qr(perl: &str) -> Check {
    qr_flags(perl, "")
}

/// Perl's `qr{...}flags` (`i`, `m`, `s`).
pub fn qr_flags(perl: &str, flags: &str) -> Check {
    let re =
        Regex::new(&translate(perl, flags)).unwrap_or_else(|e| panic!("qr{{{perl}}}{flags}: {e}"));
    Check::Re {
        // How Perl prints a qr// (the name of a check in upstream's TAP output).
        perl: format!("(?^{flags}:{perl})"),
        re,
    }
}

/// `qr{(?!word)}` alone: Perl finds a position not followed by `word` in any string (its end, at
/// least), so the check always passes. Upstream uses it to say "no vacuum" without testing it;
/// kept so that the listing has the same checks.
pub fn qr_not_followed_by(perl: &str) -> Check {
    Check::Custom {
        perl: format!("(?^:{perl})"),
        matches: Box::new(|_| true),
    }
}

/// A Perl regex the `regex` crate cannot express (backreferences), rewritten as `matches`; the
/// caller says why the rewrite means the same.
pub fn qr_rewritten(perl: &str, flags: &str, matches: impl Fn(&str) -> bool + 'static) -> Check {
    Check::Custom {
        perl: format!("(?^{flags}:{perl})"),
        matches: Box::new(matches),
    }
}

/// A Perl regex in the `regex` crate's syntax: flags inline; `$` outside a character class and
/// not under `/m` becomes "end, or before a final newline" (Perl's meaning; the crate's `$` is the
/// end only).
fn translate(perl: &str, flags: &str) -> String {
    let multiline = flags.contains('m');
    let mut out = String::new();
    let inline: String = flags.chars().filter(|c| "ims".contains(*c)).collect();
    if !inline.is_empty() {
        out.push_str(&format!("(?{inline})"));
    }
    let mut chars = perl.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` or `[^` is a literal.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap());
                }
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '$' if !in_class && !multiline => out.push_str("(?:\\n?\\z)"),
            _ => out.push(c),
        }
    }
    out
}

/// One recorded check.
struct Res {
    name: String,
    ok: bool,
    todo: Option<String>,
    skip: Option<String>,
    diag: String,
}

/// The checks of one suite, in order.
pub struct Tap {
    suite: String,
    results: Vec<Res>,
    todo: Option<String>,
}

impl Tap {
    pub fn new(suite: &str) -> Tap {
        Tap {
            suite: suite.to_string(),
            results: Vec::new(),
            todo: None,
        }
    }

    /// Test::More's `ok`.
    pub fn ok(&mut self, ok: bool, name: &str, diag: impl FnOnce() -> String) {
        let diag = if ok { String::new() } else { diag() };
        self.results.push(Res {
            name: name.to_string(),
            ok,
            todo: self.todo.clone(),
            skip: None,
            diag,
        });
    }

    /// Test::More's `like`.
    pub fn like(&mut self, text: &str, check: &Check, name: &str) {
        self.ok(check.is_match(text), name, || {
            format!("'{}'\n    doesn't match '{}'", text, check.perl())
        });
    }

    /// Test::More's `unlike`.
    pub fn unlike(&mut self, text: &str, check: &Check, name: &str) {
        self.ok(!check.is_match(text), name, || {
            format!("'{}'\n    matches '{}'", text, check.perl())
        });
    }

    /// Test::More's `is` on strings.
    pub fn is(&mut self, got: &str, want: &str, name: &str) {
        self.ok(got == want, name, || {
            format!("got: '{got}'\n    expected: '{want}'")
        });
    }

    /// A check that cannot run here, with the reason (e.g. it needs a newer server).
    pub fn skip(&mut self, name: &str, reason: &str) {
        self.results.push(Res {
            name: name.to_string(),
            ok: true,
            todo: None,
            skip: Some(reason.to_string()),
            diag: String::new(),
        });
    }

    /// Test::More's TODO block: failures inside are reported but do not fail the suite.
    pub fn todo_start(&mut self, why: &str) {
        self.todo = Some(why.to_string());
    }

    pub fn todo_end(&mut self) {
        self.todo = None;
    }

    /// `command_checks_all`: the status, then every regex on stdout, then on stderr.
    pub fn command_checks_all(
        &mut self,
        out: &Output,
        expected: i32,
        stdout: &[Check],
        stderr: &[Check],
        name: &str,
    ) {
        let ret = out.status.unwrap_or(-1);
        let status_name = format!("{name} status (got {ret} vs expected {expected})");
        match &out.died {
            Some(why) => self.ok(false, &status_name, || why.clone()),
            None => self.ok(ret == expected, &status_name, || {
                format!("stdout:\n{}\nstderr:\n{}", out.stdout, out.stderr)
            }),
        }
        for c in stdout {
            self.like(&out.stdout, c, &format!("{name} stdout /{}/", c.perl()));
        }
        for c in stderr {
            self.like(&out.stderr, c, &format!("{name} stderr /{}/", c.perl()));
        }
    }

    /// The names of the failed checks outside TODO blocks.
    pub fn failures(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| !r.ok && r.todo.is_none())
            .map(|r| r.name.clone())
            .collect()
    }

    /// Print the TAP listing; fail when a check outside a TODO block failed.
    pub fn finish(self) {
        let mut text = format!("# {}\n", self.suite);
        for (i, r) in self.results.iter().enumerate() {
            let n = i + 1;
            let status = if r.ok { "ok" } else { "not ok" };
            text.push_str(&format!("{status} {n} - {}", r.name));
            if let Some(t) = &r.todo {
                text.push_str(&format!(" # TODO {t}"));
            }
            if let Some(s) = &r.skip {
                text.push_str(&format!(" # skip {s}"));
            }
            text.push('\n');
            if !r.ok {
                for l in r.diag.lines() {
                    text.push_str(&format!("#   {l}\n"));
                }
            }
        }
        text.push_str(&format!("1..{}\n", self.results.len()));
        println!("{text}");
        let failed = self.failures();
        assert!(
            failed.is_empty(),
            "{} of {} checks failed:\n  {}",
            failed.len(),
            self.results.len(),
            failed.join("\n  ")
        );
    }
}

/// Write a script file (Perl's `append_to_file` into a fresh file).
pub fn write_file(path: &Path, contents: &str) {
    std::fs::write(path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Perl's `$name =~ s/\@\d+$//`: the file name without its `@weight`.
pub fn strip_weight(name: &str) -> &str {
    match name.rfind('@') {
        Some(i) if i + 1 < name.len() && name[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            &name[..i]
        }
        _ => name,
    }
}

/// Perl's `split /\s+/, $opts` (no leading white space in any upstream case).
pub fn split_opts(opts: &str) -> Vec<String> {
    opts.split_whitespace().map(String::from).collect()
}
