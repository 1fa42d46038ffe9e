//! Peer tools the tests run beside stampede, found where scripts/install-deps.sh puts them.

use std::path::PathBuf;

/// go-tpc 1.0.12's binary: `$GO_TPC`, else /usr/local/bin/go-tpc (install-deps.sh --tests
/// builds it there). Absent under CI is a failure (the comparison would silently not run);
/// elsewhere a note, and `None`.
pub fn go_tpc() -> Option<PathBuf> {
    let found = [
        std::env::var_os("GO_TPC").map(PathBuf::from),
        Some(PathBuf::from("/usr/local/bin/go-tpc")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "go-tpc is not installed (scripts/install-deps.sh --tests builds it)"
        );
        eprintln!("note: go-tpc not found: the checks against it are not run");
    }
    found
}

/// Whether go-tpc's `tpcc check` output says every condition passed: it prints a failed check
/// and still exits 0, so the text is what counts.
pub fn go_tpc_check_passed(output: &str) -> bool {
    !output.contains("failed") && output.contains("Finished")
}
