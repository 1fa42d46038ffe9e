//! What the fleet tests on PostgreSQL (`fleet.rs`) and MariaDB (`fleet_mysql.rs`) share: a
//! process's outcome, a saved result, and the verdict on a fleet that lost its process 2.

use std::path::Path;
use std::process::Child;

/// Wait for a stampede process: (exit code, stdout, stderr).
pub fn finish(c: Child) -> (i32, String, String) {
    let out = c.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn read(path: &Path) -> report::RunResult {
    report::read_json(std::fs::File::open(path).unwrap()).unwrap()
}

/// Kill process 2 of fleet `kill` (it has run), then: process 1 stores its result; process 0
/// names 2 as lost, merges the two others, and its commit check says why it cannot be exact.
pub fn kill_2_and_check_the_others(p0: Child, p1: Child, mut p2: Child) {
    p2.kill().unwrap();
    p2.wait().unwrap();
    let (_, out1, err1) = finish(p1);
    assert!(err1.contains("result stored"), "{out1}{err1}");
    let (code, out, err) = finish(p0);
    assert!(
        out.contains("lost: process 2 joined but never reported"),
        "{out}{err}"
    );
    assert!(
        out.contains("fleet kill: 2 of 3 processes reported"),
        "{out}"
    );
    assert!(
        out.contains("fleet commit count: SKIPPED (cannot be exact: process 2 was lost"),
        "{out}"
    );
    assert_eq!(code, 0, "{out}{err}");
}
