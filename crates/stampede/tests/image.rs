//! The container image and the Kubernetes Job, run as a cluster would run them, without one:
//!
//! - `scripts/image.sh` builds the offline image with podman from this build's binary and
//!   prints its name as its only line of stdout;
//! - the image's file system (`podman create` + `podman export`) holds what the binary loads:
//!   three "pods" run in it with `chroot`, as the image's user, with the image's PATH, each
//!   with its `JOB_COMPLETION_INDEX`, the password variable the Job sets from its Secret, and
//!   exactly the command and arguments of `stampede fleet manifest`'s Job (read from its JSON,
//!   not retyped), against a private PostgreSQL on loopback TCP (which a chroot shares);
//! - `stampede fleet report` merges them: the merged transactions are the ones the server holds
//!   (one pgbench_history row per TPC-B transaction) and the fleet's commit check against the
//!   server's counter passes.
//!
//! `podman run` is not used: where the container runtime may not set resource limits (this
//! sandbox: crun's setrlimit is refused) it fails, while building and exporting work. chroot
//! needs root. Under `CI=true` a missing podman (or not being root) fails the test; elsewhere
//! the test says why it skips. The image and the container are removed at the end, passed or
//! not.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::fleet::{fleet_report, three};
use common::oltp::{database, fixture, rt, scalar_i64};

const BIN: &str = env!("CARGO_BIN_EXE_stampede");

/// podman as the script runs it (`PODMAN`, e.g. `podman --storage-driver vfs`).
fn podman() -> Command {
    let spec = std::env::var("PODMAN").unwrap_or_else(|_| "podman".into());
    let mut words = spec.split_whitespace();
    let mut c = Command::new(words.next().expect("PODMAN names a program"));
    c.args(words);
    c
}

/// Run `c` to a zero exit: its stdout.
fn ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    assert!(
        out.status.success(),
        "{c:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// chroot's path on this machine (the pods' environment, PATH included, is the image's, so
/// the program is named by its path).
fn chroot() -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default() + ":/usr/sbin:/usr/bin";
    std::env::split_paths(&path)
        .map(|d| d.join("chroot"))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn missing() -> Option<String> {
    let has_podman = podman()
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_podman {
        return Some(
            "podman is not installed (scripts/install-deps.sh --tests installs it)".into(),
        );
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("chroot needs root".into());
    }
    if chroot().is_none() {
        return Some("chroot is not installed (coreutils)".into());
    }
    None
}

/// The image and the container this test made, removed when it ends.
struct Made {
    image: String,
    container: Option<String>,
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(c) = &self.container {
            let _ = podman().args(["rm", "-f", c]).output();
        }
        let _ = podman().args(["rmi", "-f", &self.image]).output();
    }
}

/// What the pods' runtime takes from the image's configuration.
struct Config {
    /// `USER uid:gid`, for chroot's --userspec.
    user: String,
    /// The image's `PATH`.
    path: String,
}

fn config(image: &str) -> Config {
    let json = ok(podman().args(["image", "inspect", image]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let c = &v[0]["Config"];
    let path = (c["Env"].as_array().unwrap().iter())
        .filter_map(|e| e.as_str()?.strip_prefix("PATH="))
        .next()
        .expect("the image sets PATH")
        .to_string();
    let user = c["User"].as_str().unwrap_or("0:0").to_string();
    assert_ne!(user, "", "the image names its user");
    Config { user, path }
}

/// `command[0]` as a container runtime finds it: a path, or the first match on the image's PATH
/// inside the image's file system. The path inside the image.
fn resolve(rootfs: &Path, program: &str, path: &str) -> String {
    if program.contains('/') {
        return program.to_string();
    }
    path.split(':')
        .map(|d| format!("{d}/{program}"))
        .find(|p| rootfs.join(p.trim_start_matches('/')).is_file())
        .unwrap_or_else(|| panic!("{program} is not on the image's PATH {path}"))
}

/// One pod of the Job: `command args` in the image's file system as its user, with only the
/// environment the Job gives it (the image's PATH, the Secret's password variable, the index).
fn pod(rootfs: &Path, cfg: &Config, command: &str, args: &[String], env: &[(&str, &str)]) -> Child {
    Command::new(chroot().expect("chroot"))
        .arg(format!("--userspec={}", cfg.user))
        .arg(rootfs)
        .arg(command)
        .args(args)
        .env_clear()
        .env("PATH", &cfg.path)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chroot runs")
}

#[test]
fn the_offline_image_runs_the_manifest_s_three_pods_and_the_merge_counts_the_server_s_commits() {
    if let Some(why) = missing() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{why}");
        }
        eprintln!("SKIPPED: {why}");
        return;
    }
    let tag = format!("localhost/stampede-image-test:{}", std::process::id());
    let mut made = Made {
        image: tag.clone(),
        container: None,
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/image.sh");
    let out = ok(Command::new(&script).args(["--binary", BIN, "--tag", &tag]));
    assert_eq!(out, format!("{tag}\n"), "the image's name, alone on stdout");

    // The image's file system, as a container of it would see it.
    let dir = tempfile::tempdir().unwrap();
    let rootfs = dir.path().join("rootfs");
    std::fs::create_dir(&rootfs).unwrap();
    let id = ok(podman().args(["create", &tag])).trim().to_string();
    made.container = Some(id.clone());
    let tar = dir.path().join("image.tar");
    ok(podman().args(["export", "-o"]).arg(&tar).arg(&id));
    ok(Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(&rootfs));
    let cfg = config(&tag);

    // The fleet's database: TPC-B at scale 1, loaded from here.
    let db = "image_fleet";
    let pg = rt().block_on(database(db));
    let target = fixture().target(db);
    let mut init: Vec<&str> = vec!["init", "tpcb", "-s", "1", "-q"];
    init.extend(target.iter().map(String::as_str));
    common::fleet::ok(&init);

    // The Job, as a user would apply it; the pods reach the server over TCP (its socket is not
    // in the image), as they would reach a server's address from a cluster.
    let port = fixture().port.to_string();
    let run = [
        "run",
        "tpcb-like",
        "-c",
        "2",
        "-j",
        "1",
        "-t",
        "50",
        "--no-observe",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-U",
        "postgres",
        "-d",
        db,
    ];
    let manifest = ok(Command::new(BIN)
        .args([
            "fleet",
            "manifest",
            "--workers",
            "3",
            "--name",
            "imagefleet",
        ])
        .args(["--image", &tag, "--"])
        .args(run));
    let job: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 3);
    let c = &spec["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], tag.as_str());
    let strings = |v: &serde_json::Value| -> Vec<String> {
        (v.as_array().unwrap().iter())
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    let command = strings(&c["command"]);
    let args: Vec<String> = command[1..]
        .iter()
        .cloned()
        .chain(strings(&c["args"]))
        .collect();
    let program = resolve(&rootfs, &command[0], &cfg.path);
    let password_env = c["env"][0]["name"].as_str().unwrap().to_string();
    assert_eq!(password_env, "PGPASSWORD");

    // The three pods, process 0 (which starts the fleet) last.
    let outs = three(|i| {
        let index = i.to_string();
        pod(
            &rootfs,
            &cfg,
            &program,
            &args,
            &[
                ("JOB_COMPLETION_INDEX", &index),
                (&password_env, "from-the-secret"),
            ],
        )
    });
    assert!(
        outs[0].1.contains("fleet imagefleet: the merged result"),
        "{}",
        outs[0].1
    );

    // The merge, as the recipe runs it after the Job.
    let (m, text) = fleet_report("imagefleet", &dir.path().join("merged.json"), &target);
    eprintln!("{text}");
    let f = m.fleet.as_ref().expect("a fleet block");
    assert_eq!(f.processes.len(), 3);
    assert!(f.lost.is_empty(), "{:?}", f.lost);
    let history = rt().block_on(scalar_i64(&pg, "SELECT count(*) FROM pgbench_history"));
    assert_eq!(m.total.total().committed(), 300);
    assert_eq!(history, 300, "one history row per committed transaction");
    let check = f.commit_check.as_ref().expect("the fleet's commit check");
    assert_eq!(
        check.status,
        report::CheckStatus::Passed,
        "{}",
        check.detail
    );
    drop(made);
    let left = ok(podman().args(["images", "-q", "--filter", &format!("reference={tag}")]));
    assert_eq!(left.trim(), "", "the test's image was removed");
}

/// The offline build file's image and the Containerfile's agree on where stampede is and how it
/// starts, so the manifest's `command` finds it in either.
#[test]
fn the_containerfile_and_the_offline_image_put_stampede_on_the_path() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cf = std::fs::read_to_string(root.join("Containerfile")).unwrap();
    let sh = std::fs::read_to_string(root.join("scripts/image.sh")).unwrap();
    for text in [&cf, &sh] {
        assert!(
            text.contains(r#"ENTRYPOINT ["/usr/local/bin/stampede"]"#),
            "{text}"
        );
    }
    assert!(cf.contains("cargo build --release") && cf.contains("-p stampede"));
    assert!(cf.contains("/usr/local/bin/stampede"));
}
