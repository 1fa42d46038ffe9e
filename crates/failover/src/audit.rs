//! The audit: the probe's writes against the rows the new primary holds after the run.
//!
//! Jepsen's set checker, by sequence number: every write carries its own number, so each row
//! answers for exactly one attempt. Acknowledged and absent is *lost* (the fault broke
//! durability: asynchronous replication, or a failover to a standby that had not received the
//! commit). Present but not acknowledged is *in doubt*: the COMMIT reached the server and the
//! answer did not reach the client, which every system may do and a client must be written to
//! tolerate. Present twice is a *duplicate*; present and never sent is *unexpected*. Only lost,
//! duplicate and unexpected rows are errors of the system (or of stampede).

use std::collections::HashMap;

use report::failover::SAMPLE;

use crate::{FailoverSection, History, Op, Outcome};

/// The findings, each sorted by sequence number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audit {
    pub lost: Vec<u64>,
    pub in_doubt: Vec<u64>,
    pub duplicates: Vec<u64>,
    pub unexpected: Vec<u64>,
}

impl Audit {
    /// Writes the counts and the first sequence numbers of each finding into the section.
    pub fn fill(&self, s: &mut FailoverSection, audited_on: String) {
        s.lost_writes = self.lost.len() as u64;
        s.in_doubt_writes = self.in_doubt.len() as u64;
        s.duplicate_writes = self.duplicates.len() as u64;
        s.unexpected_writes = self.unexpected.len() as u64;
        s.lost_seqs = self.lost.iter().take(SAMPLE).copied().collect();
        s.in_doubt_seqs = self.in_doubt.iter().take(SAMPLE).copied().collect();
        s.duplicate_seqs = self.duplicates.iter().take(SAMPLE).copied().collect();
        s.audited_on = Some(audited_on);
        s.audit_error = None;
    }
}

/// Compares the history's writes with `rows`: each present sequence number with how many rows
/// carry it (`SELECT seq, count(*) FROM stampede_probe GROUP BY seq`).
pub fn audit(history: &History, rows: impl IntoIterator<Item = (u64, u64)>) -> Audit {
    let mut sent: HashMap<u64, Outcome> = HashMap::with_capacity(history.attempts.len());
    for a in &history.attempts {
        if let Op::Write { seq: Some(seq) } = a.op {
            sent.insert(seq, a.outcome);
        }
    }
    let mut found = Audit::default();
    let mut present: HashMap<u64, u64> = HashMap::new();
    for (seq, count) in rows {
        *present.entry(seq).or_default() += count;
    }
    for (&seq, &count) in &present {
        if count > 1 {
            found.duplicates.push(seq);
        }
        match sent.get(&seq) {
            None => found.unexpected.push(seq),
            Some(Outcome::Ok) => {}
            Some(Outcome::Failed(_) | Outcome::Unknown(_)) => found.in_doubt.push(seq),
        }
    }
    for (&seq, &o) in &sent {
        if o == Outcome::Ok && !present.contains_key(&seq) {
            found.lost.push(seq);
        }
    }
    found.lost.sort_unstable();
    found.in_doubt.sort_unstable();
    found.duplicates.sort_unstable();
    found.unexpected.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Attempt, ErrorKind};

    fn write(seq: u64, outcome: Outcome) -> Attempt {
        Attempt {
            client: 0,
            op: Op::Write { seq: Some(seq) },
            start_us: seq,
            sent_us: seq,
            end_us: seq + 1,
            host: Some(0),
            outcome,
        }
    }

    #[test]
    fn every_finding_is_told_apart() {
        let lost = ErrorKind::ConnectionLost;
        let h = History {
            attempts: vec![
                write(1, Outcome::Ok),
                write(2, Outcome::Ok),
                write(3, Outcome::Ok),
                write(4, Outcome::Unknown(lost)),
                write(5, Outcome::Unknown(lost)),
                write(6, Outcome::Failed(ErrorKind::ReadOnly)),
                write(7, Outcome::Ok),
            ],
            connects: vec![],
        };
        // 2 and 7 acknowledged and missing; 4 committed without its acknowledgement, 5 not;
        // 3 twice; 99 never sent.
        let a = audit(&h, [(1, 1), (3, 2), (4, 1), (99, 1)]);
        assert_eq!(a.lost, vec![2, 7]);
        assert_eq!(a.in_doubt, vec![4]);
        assert_eq!(a.duplicates, vec![3]);
        assert_eq!(a.unexpected, vec![99]);

        let mut s = FailoverSection::default();
        a.fill(&mut s, "new".into());
        assert_eq!(
            (
                s.lost_writes,
                s.in_doubt_writes,
                s.duplicate_writes,
                s.unexpected_writes
            ),
            (2, 1, 1, 1)
        );
        assert_eq!(s.lost_seqs, vec![2, 7]);
        assert_eq!(s.audited_on.as_deref(), Some("new"));
    }

    #[test]
    fn a_clean_run_finds_nothing() {
        let h = History {
            attempts: (1..=1000).map(|s| write(s, Outcome::Ok)).collect(),
            connects: vec![],
        };
        assert_eq!(audit(&h, (1..=1000).map(|s| (s, 1))), Audit::default());
    }

    #[test]
    fn the_sample_is_capped_but_the_count_is_not() {
        let h = History {
            attempts: (1..=500).map(|s| write(s, Outcome::Ok)).collect(),
            connects: vec![],
        };
        let a = audit(&h, []);
        let mut s = FailoverSection::default();
        a.fill(&mut s, "x".into());
        assert_eq!(s.lost_writes, 500);
        assert_eq!(s.lost_seqs.len(), SAMPLE);
        assert_eq!(s.lost_seqs[0], 1);
    }
}
