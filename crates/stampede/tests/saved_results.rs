//! `stampede report` and `stampede compare` on files that are not usable run results: each
//! fails with the path and what is wrong, before anything is written. No server is needed.

mod common;

use common::stampede;

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nosuch.json");
    let out = dir.path().join("r.html");
    let r = stampede(&[
        "report",
        missing.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("cannot read run result") && r.stderr.contains("nosuch.json"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("No such file"), "{}", r.stderr);
    assert!(!out.exists());
    let r = stampede(&[
        "compare",
        missing.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("nosuch.json"), "{}", r.stderr);
}

#[test]
fn a_file_that_is_not_a_run_result_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "garbage.json",
            "this is not json",
            "not a stampede run result",
        ),
        ("other.json", "{\"hello\": 1}", "no numeric schema_version"),
        (
            "future.json",
            "{\"schema_version\": 99}",
            "schema_version 99",
        ),
        (
            "partial.json",
            "{\"schema_version\": 1, \"stampede_version\": \"0.1.0\"}",
            "missing field",
        ),
    ];
    for (name, text, want) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let r = stampede(&["report", p.to_str().unwrap()]);
        assert_eq!(r.code, 1, "{name}");
        assert!(r.stderr.contains(name), "{name}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{name}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{name}: nothing written");
    }
}

#[test]
fn compare_needs_two_files_and_sane_options() {
    // A usage error: exit 64, never 2 (which says a run's numbers are not to be trusted).
    let r = stampede(&["compare", "a.json"]);
    assert_eq!(r.code, 64);
    assert!(r.stderr.contains("RUN.json"), "{}", r.stderr);
    let r = stampede(&["compare", "a.json", "b.json", "--min-effect", "-3"]);
    assert_ne!(r.code, 0);
    let r = stampede(&["compare", "a.json", "b.json", "-o", "-"]);
    assert_eq!(r.code, 64);
    assert!(r.stderr.contains("-o -"), "{}", r.stderr);
}
