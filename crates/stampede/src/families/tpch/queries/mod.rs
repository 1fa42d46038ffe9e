//! The TPC-H queries as data (TPC-H v3.0.1): the 22 query texts in the PostgreSQL and the
//! MySQL/MariaDB dialect, their substitution parameters (random and reproducible, or qgen's
//! validation values), the query streams' orders of Appendix A, the metrics of clause 5.4 and
//! the answer set's row counts.
//!
//! Owns: everything above, as pure functions of their inputs. Must not own: connections,
//! timing, the run's schedule or its output; it depends on std only (its own seeded random
//! stream, `rng`), so it is tested on its own and can be reused by any runner (the power and
//! throughput tests, a single `tpch-qN` run, CH-benCHmark's analytic clients).
//!
//! ## Use
//! ```text
//! let p = stream_params(seed, stream, q, scale);   // or validation(q, scale)
//! let sql = text(Dialect::Postgres, &p);           // one statement, no `;`
//! for q in order(stream) { ... }                    // Appendix A
//! power_at_size(scale, &query_s, &refresh_s)       // clause 5.4.1
//! rows_validation(q, scale)                        // the expected row count, where known
//! compare(q, &rows, total)                          // SF 1, validation: the first difference
//! ```
//!
//! ## Module layout
//! `params`: [`Params`], [`params`], [`validation`] (clauses 2.4.N.3/4); `words`: the lists
//! they draw from (clauses 4.2.2.13, 4.2.3); `sql`: the texts (clauses 2.4.N.2); `streams`:
//! [`order`] (Appendix A); `metrics`: Power@Size, Throughput@Size, QphH@Size,
//! [`min_streams`] (clauses 5.3.4, 5.3.7.5, 5.4); `answers`: row counts of the answer set, the
//! measured ones at SF 0.1 and 0.01, the row limits (clause 2.1.2.9); `answer_set`: the
//! answer set's values at SF 1 and each column's precision rule; `compare`: a result against
//! them (clause 2.1.3.5); `rng`: SplitMix64.

mod answer_set;
mod answers;
mod compare;
mod metrics;
mod params;
mod rng;
mod sql;
mod streams;
mod words;

pub use answers::{rows_at_most, rows_validation};
pub use compare::compare;
pub use metrics::{min_streams, power_at_size, qphh_at_size, throughput_at_size};
pub use params::{params, validation, Params};
pub use rng::Rng;
pub use streams::order;

/// The SQL dialect a query text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// PostgreSQL (checked against 15).
    Postgres,
    /// MySQL and MariaDB (checked against MariaDB 10.11).
    Mysql,
}

/// The text of query `p.query()` in dialect `d`, with `p`'s values substituted: one
/// statement, no trailing semicolon. (The query is the parameters' own, so it is not passed
/// apart: a Q5 text with Q6's parameters cannot be asked for.)
pub fn text(d: Dialect, p: &Params) -> String {
    sql::sql(d, p)
}

/// Query `q`'s parameters for stream `stream` of a run seeded with `seed`: the same three
/// numbers give the same parameters, whatever else the run drew (see `rng`).
pub fn stream_params(seed: u64, stream: usize, q: u8, scale: f64) -> Params {
    params(q, scale, &mut Rng::derive(seed, stream, q))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Dialect; 2] = [Dialect::Postgres, Dialect::Mysql];

    #[test]
    fn every_value_is_substituted_into_the_text() {
        for q in 1..=22u8 {
            for p in [validation(q, 1.0), stream_params(5, 1, q, 1.0)] {
                for d in BOTH {
                    let t = text(d, &p);
                    for v in p.values() {
                        assert!(t.contains(&v), "Q{q} {d:?}: {v} missing from\n{t}");
                    }
                    assert!(
                        !t.contains(':') || q == 0,
                        "Q{q}: a qgen placeholder left: {t}"
                    );
                    assert!(!t.trim_end().ends_with(';'), "Q{q}: one statement, no `;`");
                }
            }
        }
    }

    #[test]
    fn limited_queries_end_in_their_limit_and_others_have_none() {
        for q in 1..=22u8 {
            for d in BOTH {
                let t = text(d, &validation(q, 1.0));
                match answers::row_limit(q) {
                    Some(n) => assert!(t.ends_with(&format!("\nlimit {n}")), "Q{q} {d:?}"),
                    None => assert!(!t.contains("limit"), "Q{q} {d:?}"),
                }
            }
        }
    }

    #[test]
    fn dialects_differ_only_in_q13() {
        for q in 1..=22u8 {
            let p = validation(q, 1.0);
            let (pg, my) = (text(Dialect::Postgres, &p), text(Dialect::Mysql, &p));
            assert_eq!(pg == my, q != 13, "Q{q}");
        }
        let p = validation(13, 1.0);
        assert!(text(Dialect::Postgres, &p).contains("as c_orders (c_custkey, c_count)"));
        assert!(text(Dialect::Mysql, &p).contains("count(o_orderkey) as c_count"));
    }

    #[test]
    fn validation_texts_read_as_the_spec_writes_them() {
        // Snapshots of the lines a substitution fills, for the queries whose substitution has
        // a rule of its own (an arithmetic, a list, a suffix or prefix, a derived value).
        let cases: [(u8, &str); 10] = [
            (1, "l_shipdate <= date '1998-12-01' - interval '90' day\n"),
            (2, "and p_type like '%BRASS'\n"),
            (6, "and l_discount between 0.06 - 0.01 and 0.06 + 0.01\n"),
            (9, "and p_name like '%green%'\n"),
            (11, "sum(ps_supplycost * ps_availqty) * 0.0001000000\n"),
            (13, "and o_comment not like '%special%requests%'\n"),
            (16, "and p_size in (49, 14, 23, 45, 19, 3, 36, 9)\n"),
            (16, "and p_type not like 'MEDIUM POLISHED%'\n"),
            (20, "p_name like 'forest%'\n"),
            (22, "('13', '31', '23', '29', '30', '18', '17')"),
        ];
        for (q, line) in cases {
            let t = text(Dialect::Postgres, &validation(q, 1.0));
            assert!(t.contains(line), "Q{q}: {line:?} not in\n{t}");
        }
        let q15 = text(Dialect::Mysql, &validation(15, 1.0));
        assert!(
            q15.starts_with("with revenue0 (supplier_no, total_revenue) as ("),
            "{q15}"
        );
        assert!(q15.contains("l_shipdate < date '1996-01-01' + interval '3' month"));
    }

    #[test]
    fn stream_parameters_are_reproducible_and_vary_by_stream() {
        let a: Vec<Params> = (1..=22).map(|q| stream_params(11, 2, q, 1.0)).collect();
        let b: Vec<Params> = (1..=22).map(|q| stream_params(11, 2, q, 1.0)).collect();
        assert_eq!(a, b);
        let c: Vec<Params> = (1..=22).map(|q| stream_params(11, 3, q, 1.0)).collect();
        assert_ne!(a, c, "another stream draws other parameters");
    }
}
