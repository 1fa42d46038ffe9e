//! What the queries return, for checking a run: the row counts of the specification's answer
//! set at scale factor 1 with the validation parameters (clause 2.4.N.4 points to the answers
//! the TPC distributes with dbgen, `answers/qN.out`), the counts measured at SF 0.1 and 0.01,
//! and [`row_limit`], the rows a query may return at most (clause 2.1.2.9).
//!
//! Owns: those numbers. Must not own: running a query or comparing values (a checker compares
//! a row count against these; the answer files' values are `answer_set`'s, compared by
//! `compare`).
//!
//! Source: TPC-H 2.17.3's `dbgen/answers/q1.out` ... `q22.out` as distributed in tpch-kit
//! (github.com/gregrahn/tpch-kit); each file is one header line and one line per row, and the
//! counts here are the lines less the header. This module's texts, run on `tpchgen-cli` 4.0.0's
//! SF 1 data by PostgreSQL 15 and MariaDB 10.11, returned these counts and the files' values
//! (numbers within 0.01), but Q17's 348406.05 against the file's 348406.02 on both servers (a
//! relative difference of 1e-7; clause 2.1.3.5 sets how close an answer must be).

/// Row counts at SF 1 with [`super::validation`]'s parameters, by query (index 0 is Q1).
pub const ROWS_SF1_VALIDATION: [u64; 22] = [
    4,     // Q1: the 4 (returnflag, linestatus) groups
    100,   // Q2: limited to 100
    10,    // Q3: limited to 10
    5,     // Q4: the 5 order priorities
    5,     // Q5: ASIA's 5 nations
    1,     // Q6
    4,     // Q7: 2 directions x 2 years
    2,     // Q8: 1995, 1996
    175,   // Q9: 25 nations x 7 years
    20,    // Q10: limited to 20
    1048,  // Q11
    2,     // Q12: the 2 modes
    42,    // Q13
    1,     // Q14
    1,     // Q15
    18314, // Q16
    1,     // Q17
    57,    // Q18
    1,     // Q19
    186,   // Q20
    100,   // Q21: limited to 100
    7,     // Q22: the 7 country codes
];

/// The expected rows of query `q` (1..=22) at SF 1 with the validation parameters.
#[cfg(test)]
pub fn rows_sf1_validation(q: u8) -> u64 {
    ROWS_SF1_VALIDATION[usize::from(q) - 1]
}

/// Row counts at SF 0.1 with [`super::validation`]'s parameters (Q11's FRACTION 0.001), by
/// query: measured, not the specification's. Source: `tpchgen-cli` 4.0.0 (PyPI; dbgen's data,
/// byte for byte) loaded into PostgreSQL 15 and MariaDB 10.11, this module's texts run by psql
/// and mariadb; both servers returned these counts, and the same values (numbers within 0.01).
pub const ROWS_SF0_1_VALIDATION: [u64; 22] = [
    4, 44, 10, 5, 5, 1, 4, 2, 175, 20, 22, 2, 37, 1, 1, 2762, 1, 5, 1, 9, 47, 7,
];

/// Row counts at SF 0.01 with [`super::validation`]'s parameters (Q11's FRACTION 0.01),
/// measured as [`ROWS_SF0_1_VALIDATION`].
pub const ROWS_SF0_01_VALIDATION: [u64; 22] = [
    4, 4, 10, 5, 5, 1, 4, 2, 173, 20, 1, 2, 33, 1, 1, 296, 1, 2, 1, 1, 1, 7,
];

/// The rows query `q` returns with the validation parameters at scale factor `scale`, for the
/// scales known here (1: the answer set; 0.1 and 0.01: measured), else `None`.
pub fn rows_validation(q: u8, scale: f64) -> Option<u64> {
    let i = usize::from(q) - 1;
    [
        (1.0, &ROWS_SF1_VALIDATION),
        (0.1, &ROWS_SF0_1_VALIDATION),
        (0.01, &ROWS_SF0_01_VALIDATION),
    ]
    .iter()
    .find(|(sf, _)| (scale - sf).abs() < 1e-9)
    .map(|(_, rows)| rows[i])
}

/// The most rows query `q` may return: the limits of clause 2.1.2.9 (Q2 100, Q3 10, Q10 20,
/// Q18 100, Q21 100), `None` for a query without one. The SQL of both dialects ends in these
/// limits (`sql`).
pub fn row_limit(q: u8) -> Option<u64> {
    match q {
        2 | 18 | 21 => Some(100),
        3 => Some(10),
        10 => Some(20),
        _ => None,
    }
}

/// An upper bound of a query's rows that holds at any scale factor and any parameters, where
/// the query's grouping gives one: Q1's (returnflag, linestatus) pairs that exist (4), Q4's 5
/// priorities, Q5's 5 nations of a region, Q7's 2 directions x 2 years, Q8's 2 years, Q9's 25
/// nations x 7 order years (1992..1998), Q12's 2 modes, Q22's 7 codes, and 1 for the
/// aggregates without a group (Q6, Q14, Q15 unless suppliers tie, Q17, Q19). A row count above
/// it means the query text is wrong, not the data.
pub fn rows_at_most(q: u8) -> Option<u64> {
    match q {
        1 => Some(4),
        4 | 5 => Some(5),
        7 => Some(4),
        8 | 12 => Some(2),
        9 => Some(175),
        22 => Some(7),
        6 | 14 | 17 | 19 => Some(1),
        _ => row_limit(q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limited_queries_reach_their_limit_at_sf1_but_q18() {
        // Q18's 57 orders over 300 units are fewer than its limit of 100; the others are cut.
        for q in 1..=22u8 {
            if let Some(limit) = row_limit(q) {
                let full = if q == 18 { 57 } else { limit };
                assert_eq!(rows_sf1_validation(q), full, "Q{q}");
            }
        }
    }

    #[test]
    fn known_answers_respect_the_bounds_at_every_scale() {
        for scale in [1.0, 0.1, 0.01] {
            for q in 1..=22u8 {
                let rows = rows_validation(q, scale).unwrap();
                if let Some(most) = rows_at_most(q) {
                    assert!(rows <= most, "Q{q} at SF {scale}");
                }
            }
        }
        assert_eq!(rows_validation(16, 1.0), Some(18314));
        assert_eq!(rows_validation(16, 0.1), Some(2762));
        assert_eq!(rows_validation(16, 10.0), None);
    }
}
