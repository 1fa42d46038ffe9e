//! TPC-H's numbers (clause 5.4 of TPC-H v3.0.1): Power@Size, Throughput@Size, QphH@Size, and
//! the minimum number of query streams of the throughput test (clause 5.3.4), as pure
//! functions of the measured seconds.
//!
//! Owns: the formulas and the rules on timing intervals they apply. Must not own: measuring
//! anything (the runner passes seconds in), nor how the numbers are printed.
//!
//! The rules, in the order applied. The clause numbers are those other implementations quote
//! (the specification's text was not at hand here; the rules are cited by content as well, so
//! a renumbering between revisions does not mislead):
//! 1. Clause 5.3.7.5: each query's and refresh function's timing interval is rounded to the
//!    nearest 0.1 second, and a value under 0.05 second is rounded up to 0.1 second "to avoid
//!    zero values" (a zero would make the geometric mean zero and Power@Size infinite).
//! 2. Clause 5.4.1's rule on a ratio above 1000: if the longest query interval of the power
//!    test is more than 1000 times the shortest, every query interval under max/1000 is raised
//!    to max/1000, itself treated as a timing interval of clause 5.3.7.5 (rounded as in 1).
//!    Query intervals only: the refresh functions' are not raised, and do not count for the
//!    ratio.
//! 3. Clause 5.4.1 (computed in logarithms, the specification's second form of the formula,
//!    so 24 long intervals do not overflow the product):
//!    Power@Size = 3600 * SF / (prod QI(i,0) * prod RI(j,0))^(1/24).
//! 4. Clause 5.4.2: Throughput@Size = (S * 22 * 3600 / Ts) * SF, Ts the measurement interval
//!    of the throughput test in seconds (not a query's interval: not rounded here).
//! 5. Clause 5.4.3: QphH@Size = sqrt(Power@Size * Throughput@Size).

/// Clause 5.3.7.5: a timing interval as it enters the metrics, in seconds: rounded to the
/// nearest 0.1 s (23.75 to 23.8), at least 0.1 s.
pub fn reported_interval_s(raw_s: f64) -> f64 {
    // The 1e-9 keeps a tenth's midpoint that binary floating point stores a hair low (0.15 is
    // 0.1499999...) rounding up, as the clause's decimal rule does.
    let rounded = ((raw_s * 10.0) + 0.5 + 1e-9).floor() / 10.0;
    rounded.max(0.1)
}

/// The query intervals of the power test after clause 5.3.7.5 and the ratio rule (rules 1 and
/// 2 of the module header): what Power@Size multiplies.
pub fn power_query_intervals_s(queries_s: &[f64; 22]) -> [f64; 22] {
    let q = queries_s.map(reported_interval_s);
    let max = q.iter().cloned().fold(f64::MIN, f64::max);
    let min = q.iter().cloned().fold(f64::MAX, f64::min);
    if max / min <= 1000.0 {
        return q;
    }
    let floor = max / 1000.0;
    q.map(|s| {
        if s < floor {
            reported_interval_s(floor)
        } else {
            s
        }
    })
}

/// Clause 5.4.1: Power@Size of a power test at scale factor `scale`, from the 22 queries'
/// timing intervals (by query number: `queries_s[0]` is Q1) and RF1's and RF2's, in seconds.
pub fn power_at_size(scale: f64, queries_s: &[f64; 22], refresh_s: &[f64; 2]) -> f64 {
    let q = power_query_intervals_s(queries_s);
    let r = refresh_s.map(reported_interval_s);
    let ln_sum: f64 = q.iter().chain(r.iter()).map(|s| s.ln()).sum();
    3600.0 * scale / (ln_sum / 24.0).exp()
}

/// Clause 5.4.2: Throughput@Size of `streams` query streams whose throughput test took
/// `measurement_s` seconds (Ts), at scale factor `scale`.
pub fn throughput_at_size(scale: f64, streams: usize, measurement_s: f64) -> f64 {
    streams as f64 * 22.0 * 3600.0 / measurement_s * scale
}

/// Clause 5.4.3: QphH@Size, the geometric mean of Power@Size and Throughput@Size.
pub fn qphh_at_size(power: f64, throughput: f64) -> f64 {
    (power * throughput).sqrt()
}

/// Clause 5.3.4's table: the minimum number of query streams of the throughput test for each
/// scale factor the specification allows (clause 4.1.3.1: 1, 10, 30, 100, ... 100000).
const MIN_STREAMS: [(f64, usize); 10] = [
    (1.0, 2),
    (10.0, 3),
    (30.0, 4),
    (100.0, 5),
    (300.0, 6),
    (1000.0, 7),
    (3000.0, 8),
    (10000.0, 9),
    (30000.0, 10),
    (100000.0, 11),
];

/// The minimum number of query streams for scale factor `scale` (clause 5.3.4). A scale
/// between the table's takes the row of the largest scale factor not above it, and a scale
/// under 1 (for tests only: the specification has none) the first row's 2.
pub fn min_streams(scale: f64) -> usize {
    MIN_STREAMS
        .iter()
        .rev()
        .find(|(sf, _)| scale >= *sf)
        .map_or(MIN_STREAMS[0].1, |r| r.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn intervals_round_to_a_tenth_and_never_to_zero() {
        assert_eq!(reported_interval_s(23.74), 23.7);
        assert_eq!(reported_interval_s(23.75), 23.8);
        assert_eq!(reported_interval_s(0.15), 0.2);
        assert_eq!(reported_interval_s(0.049), 0.1);
        assert_eq!(reported_interval_s(0.0), 0.1);
        assert_eq!(reported_interval_s(0.06), 0.1);
    }

    #[test]
    fn power_of_equal_intervals_is_3600_sf_over_the_interval() {
        // All 24 intervals 10 s: the geometric mean is 10, 3600 * 1 / 10 = 360.
        assert!(close(power_at_size(1.0, &[10.0; 22], &[10.0; 2]), 360.0));
        // SF 10, all 2 s: 3600 * 10 / 2 = 18000.
        assert!(close(power_at_size(10.0, &[2.0; 22], &[2.0; 2]), 18000.0));
        // Intervals that round to 9.9 count as 9.9, not as measured: 3600 / 9.9 = 363.6363...
        assert!(close(
            power_at_size(1.0, &[9.93; 22], &[9.93; 2]),
            3600.0 / 9.9
        ));
    }

    #[test]
    fn tiny_intervals_count_as_a_tenth_of_a_second() {
        // 24 intervals of 10 ms: each 0.1 s by clause 5.3.7.5, so 3600 / 0.1 = 36000 (without
        // the rule it would be 360000).
        assert!(close(power_at_size(1.0, &[0.01; 22], &[0.01; 2]), 36000.0));
    }

    #[test]
    fn queries_under_a_thousandth_of_the_longest_are_raised() {
        // Q1 2000 s, the 21 other queries 1 s, RF1 and RF2 1 s. 2000/1 > 1000, so the 21
        // queries become 2000/1000 = 2 s; the refresh functions stay at 1 s.
        // By hand: ln(2000) + 21 ln(2) + 2 ln(1) = 7.600902 + 14.556091 = 22.156993;
        // / 24 = 0.923208; e^0.923208 = 2.517375; 3600 / 2.517375 = 1430.073.
        let mut q = [1.0; 22];
        q[0] = 2000.0;
        let p = power_at_size(1.0, &q, &[1.0, 1.0]);
        assert!((p - 1430.073).abs() < 0.001, "{p}");
        let adjusted = power_query_intervals_s(&q);
        assert_eq!(adjusted[0], 2000.0);
        assert!(adjusted[1..].iter().all(|s| *s == 2.0), "{adjusted:?}");
    }

    #[test]
    fn a_ratio_of_exactly_1000_is_left_alone() {
        // "greater than 1000": 1000 s against 1 s is not adjusted. 3600 / 1000^(1/24) =
        // 3600 / 10^(0.125) = 3600 / 1.333521 = 2699.619.
        let mut q = [1.0; 22];
        q[5] = 1000.0;
        assert_eq!(power_query_intervals_s(&q), q);
        let p = power_at_size(1.0, &q, &[1.0, 1.0]);
        assert!((p - 2699.619).abs() < 0.001, "{p}");
    }

    #[test]
    fn throughput_and_qphh_by_hand() {
        // 2 streams in 1584 s at SF 1: 2 * 22 * 3600 / 1584 = 100.
        assert!(close(throughput_at_size(1.0, 2, 1584.0), 100.0));
        // 3 streams in 3600 s at SF 10: 3 * 22 * 3600 / 3600 * 10 = 660.
        assert!(close(throughput_at_size(10.0, 3, 3600.0), 660.0));
        assert!(close(qphh_at_size(400.0, 100.0), 200.0));
        assert!(close(qphh_at_size(360.0, 100.0), 189.736_659_610_1));
    }

    #[test]
    fn minimum_streams_follow_clause_5_3_4s_table() {
        let table = [
            (1.0, 2),
            (10.0, 3),
            (30.0, 4),
            (100.0, 5),
            (300.0, 6),
            (1000.0, 7),
            (3000.0, 8),
            (10000.0, 9),
            (30000.0, 10),
            (100000.0, 11),
        ];
        for (sf, s) in table {
            assert_eq!(min_streams(sf), s, "SF {sf}");
        }
        assert_eq!(min_streams(0.01), 2);
        assert_eq!(min_streams(0.1), 2);
        assert_eq!(min_streams(50.0), 4);
    }
}
