//! Failpoints: named places where a test makes stampede misbehave on purpose, or wait, to
//! check what happens then (a server killed while the checks run; a family that miscounts).
//! Read once from `STAMPEDE_FAILPOINTS`, a comma-separated list of `name` or `name=value`;
//! unset (every real run), each is one lookup in an empty list.
//!
//! The places: `pause-before-checks=MS` (`run::measure`: after the result is first saved, before
//! the checks); `probe-reads-as-writes` (the failover probe counts its reads as writes, the
//! defect the statement ledger must catch).

use std::sync::OnceLock;

fn all() -> &'static [(String, String)] {
    static ALL: OnceLock<Vec<(String, String)>> = OnceLock::new();
    ALL.get_or_init(|| {
        std::env::var("STAMPEDE_FAILPOINTS")
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| match s.split_once('=') {
                Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
                None => (s.trim().to_string(), String::new()),
            })
            .collect()
    })
}

/// Whether failpoint `name` is set, and its value.
pub fn get(name: &str) -> Option<&'static str> {
    all()
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `pause-before-checks=MS`: sleep there, saying so on standard error.
pub fn pause(name: &str) {
    if let Some(ms) = get(name).and_then(|v| v.parse::<u64>().ok()) {
        eprintln!("stampede: failpoint {name}: pausing {ms} ms");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
