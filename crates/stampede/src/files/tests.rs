use super::*;

fn req<'a>(flag: &'static str, path: &'a Path) -> Request<'a> {
    Request {
        flag,
        path,
        dash: Dash::Refused("standard output carries the summary"),
    }
}

fn refusal(requests: &[Request<'_>], inputs: &[&Path]) -> String {
    match check(requests, inputs) {
        Ok(o) => panic!("expected a refusal, got {o:?}"),
        Err(e) => {
            let f = e
                .chain()
                .find_map(|c| c.downcast_ref::<Failure>())
                .expect("a usage failure");
            assert_eq!(f.code, console::EXIT_USAGE, "{e:#}");
            format!("{e:#}")
        }
    }
}

#[test]
fn bad_paths_are_refused_with_the_flag_and_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nope/run.json");
    let e = refusal(&[req("--json", &missing)], &[]);
    assert!(
        e.starts_with("--json ") && e.contains("does not exist"),
        "{e}"
    );
    let e = refusal(&[req("--html", d.path())], &[]);
    assert!(e.contains("is a directory"), "{e}");
    let file = d.path().join("f");
    fs::write(&file, "x").unwrap();
    let under_file = file.join("run.json");
    let e = refusal(&[req("--json", &under_file)], &[]);
    assert!(e.contains("--json") && e.contains("Not a directory"), "{e}");
    let e = refusal(&[req("--json", Path::new("-"))], &[]);
    assert!(e.contains("--json -: standard output carries"), "{e}");
}

#[test]
fn two_outputs_or_an_output_and_an_input_may_not_be_one_file() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.json");
    let e = refusal(&[req("--json", &a), req("--html", &a)], &[]);
    assert!(e.contains("are the same file"), "{e}");
    // The same file through another spelling, and through a symbolic link.
    let dotted = d.path().join(".").join("a.json");
    refusal(&[req("--json", &a), req("--html", &dotted)], &[]);
    fs::write(&a, "{}").unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    refusal(&[req("--json", &a), req("--html", &link)], &[]);
    let e = refusal(&[req("-o", &link)], &[&a]);
    assert!(e.contains("is the input"), "{e}");
    // Standard output twice.
    let out = |flag| Request {
        flag,
        path: Path::new("-"),
        dash: Dash::Stdout,
    };
    refusal(&[out("--json"), out("--html")], &[]);
    // Distinct files pass, and `-` where allowed.
    let b = d.path().join("b.html");
    let ok = check(&[req("--json", &a), req("--html", &b), out("-o")], &[]).unwrap();
    assert_eq!(ok.len(), 3);
    assert!(ok[2].is_stdout());
}

#[test]
fn a_failed_write_leaves_the_previous_file_and_no_temporary() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("run.json");
    fs::write(&p, "old").unwrap();
    let out = check(&[req("--json", &p)], &[]).unwrap().remove(0);
    let e = out
        .write(|w| {
            w.write_all(b"half of it")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
    assert_eq!(fs::read_to_string(&p).unwrap(), "old");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("--json {}: not written: disk full", p.display()))
            && msg.ends_with("the previous one, unchanged"),
        "{msg}"
    );
    out.write_str("new").unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "new");
    let names: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "a temporary file was left: {names:?}");
}

#[test]
fn a_symbolic_link_stays_and_its_target_is_replaced_keeping_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.json");
    fs::write(&real, "old").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = check(&[req("--json", &link)], &[]).unwrap().remove(0);
    out.write_str("new").unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_device_is_written_in_place() {
    let out = check(&[req("--json", Path::new("/dev/null"))], &[])
        .unwrap()
        .remove(0);
    out.write_str("anything").unwrap();
    use std::os::unix::fs::FileTypeExt;
    assert!(fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_log_prefix_needs_its_directory() {
    let d = tempfile::tempdir().unwrap();
    let ok = d.path().join("pgbench_log");
    check_prefix("--log-prefix", ok.to_str().unwrap()).unwrap();
    let bad = d.path().join("nope/pgbench_log");
    let e = format!(
        "{:#}",
        check_prefix("--log-prefix", bad.to_str().unwrap()).unwrap_err()
    );
    assert!(e.contains("does not exist"), "{e}");
}
