//! The CRUD mix's operations and their weights, read from `--mix point=40,index=20,...`.
//!
//! A weight is a share of the transactions (the engine's weighted choice, as pgbench's
//! `-b name@weight`); operations not named keep weight 0 once any is named, so the mix given
//! is the mix run. The default follows seed 001's description (reads by primary key, index,
//! range and IN-list, single and batched inserts, batched updates and deletes), reads first.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Point,
    Index,
    Range,
    In,
    Insert,
    BatchInsert,
    Update,
    Delete,
}

impl Op {
    /// Every operation, in transaction-type order.
    pub const ALL: [Op; 8] = [
        Op::Point,
        Op::Index,
        Op::Range,
        Op::In,
        Op::Insert,
        Op::BatchInsert,
        Op::Update,
        Op::Delete,
    ];

    /// The key in `--mix`.
    pub fn key(self) -> &'static str {
        match self {
            Op::Point => "point",
            Op::Index => "index",
            Op::Range => "range",
            Op::In => "in",
            Op::Insert => "insert",
            Op::BatchInsert => "batch-insert",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }

    /// The transaction type's name in results.
    pub fn name(self) -> &'static str {
        match self {
            Op::Point => "crud point read",
            Op::Index => "crud index read",
            Op::Range => "crud range read",
            Op::In => "crud in-list read",
            Op::Insert => "crud insert",
            Op::BatchInsert => "crud batch insert",
            Op::Update => "crud batch update",
            Op::Delete => "crud batch delete",
        }
    }

    pub fn reads(self) -> bool {
        matches!(self, Op::Point | Op::Index | Op::Range | Op::In)
    }
}

/// A weight per operation, `Op::ALL` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix(pub [u32; 8]);

impl Default for Mix {
    fn default() -> Mix {
        Mix([40, 20, 10, 10, 5, 5, 5, 5])
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = (Op::ALL.iter().zip(self.0))
            .filter(|(_, w)| *w > 0)
            .map(|(op, w)| format!("{}={w}", op.key()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl Mix {
    /// Read `point=40,index=20,...` (module notes); the message names the part at fault.
    pub fn parse(s: &str) -> Result<Mix, String> {
        let keys = || {
            Op::ALL
                .iter()
                .map(|o| o.key())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut w = [0u32; 8];
        let mut seen = [false; 8];
        for part in s.split(',').map(str::trim) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!(
                    "--mix: {part:?} is not OP=WEIGHT (operations: {})",
                    keys()
                ));
            };
            let Some(i) = Op::ALL.iter().position(|o| o.key() == k.trim()) else {
                return Err(format!(
                    "--mix: unknown operation {:?} (operations: {})",
                    k.trim(),
                    keys()
                ));
            };
            if seen[i] {
                return Err(format!("--mix: {} is given twice", k.trim()));
            }
            seen[i] = true;
            w[i] = v.trim().parse().map_err(|_| {
                format!(
                    "--mix: the weight of {} must be a whole number, got {:?}",
                    k.trim(),
                    v.trim()
                )
            })?;
        }
        if w.iter().all(|&x| x == 0) {
            return Err("--mix: every weight is 0; give at least one operation a weight".into());
        }
        Ok(Mix(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_reads_back_and_unnamed_operations_do_not_run() {
        let m =
            Mix::parse("point=40, index=20,range=10,in=10,insert=10,update=5,delete=5").unwrap();
        assert_eq!(m.0, [40, 20, 10, 10, 10, 0, 5, 5]);
        assert_eq!(
            m.to_string(),
            "point=40,index=20,range=10,in=10,insert=10,update=5,delete=5"
        );
        assert_eq!(
            Mix::parse(&Mix::default().to_string()).unwrap(),
            Mix::default()
        );
    }

    #[test]
    fn a_bad_mix_is_refused_naming_the_part_at_fault() {
        for (bad, says) in [
            ("point", "not OP=WEIGHT"),
            ("select=3", "unknown operation \"select\""),
            ("point=x", "whole number"),
            ("point=-1", "whole number"),
            ("point=1,point=2", "given twice"),
            ("point=0,delete=0", "every weight is 0"),
        ] {
            let e = Mix::parse(bad).unwrap_err();
            assert!(e.starts_with("--mix") && e.contains(says), "{bad}: {e}");
        }
    }
}
