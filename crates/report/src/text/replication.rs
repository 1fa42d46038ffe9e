//! The summary's `replication:` lines (`--read-from`): each standby's lag as the primary saw
//! it, max and p95 over the run's once-a-second samples.

use std::fmt::Write as _;

use measure::replication::ReplicaLag;

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1} ms"))
}

pub(crate) fn lines(o: &mut String, standbys: &[ReplicaLag]) {
    if standbys.is_empty() {
        return;
    }
    let _ = writeln!(o, "replication (lag behind the primary, max / p95):");
    for s in standbys {
        let _ = writeln!(
            o,
            "  {}  {} / {} bytes not replayed, replay lag {} / {}, {} samples",
            s.standby,
            s.max_lag_bytes,
            s.p95_lag_bytes,
            ms(s.max_replay_lag_ms),
            ms(s.p95_replay_lag_ms),
            s.samples
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_standby_with_max_and_p95() {
        let mut o = String::new();
        lines(
            &mut o,
            &[ReplicaLag {
                standby: "s1".into(),
                samples: 3,
                max_lag_bytes: 800,
                p95_lag_bytes: 700,
                max_replay_lag_ms: Some(2.5),
                p95_replay_lag_ms: Some(2.0),
                ..Default::default()
            }],
        );
        assert_eq!(
            o,
            "replication (lag behind the primary, max / p95):\n  s1  800 / 700 bytes not \
             replayed, replay lag 2.5 ms / 2.0 ms, 3 samples\n"
        );
        let mut none = String::new();
        lines(&mut none, &[]);
        assert!(none.is_empty());
    }
}
