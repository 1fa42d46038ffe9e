//! The statistics every output prints for a latency histogram, in milliseconds as pgbench prints.

use crate::Histogram;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub avg_ms: f64,
    pub stddev_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub p9999_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    pub fn of(h: &Histogram) -> Summary {
        let ms = |us: u64| us as f64 / 1000.0;
        Summary {
            count: h.count(),
            avg_ms: h.mean_us() / 1000.0,
            stddev_ms: h.stddev_us() / 1000.0,
            min_ms: ms(h.min_us()),
            p50_ms: ms(h.percentile_us(50.0)),
            p90_ms: ms(h.percentile_us(90.0)),
            p95_ms: ms(h.percentile_us(95.0)),
            p99_ms: ms(h.percentile_us(99.0)),
            p999_ms: ms(h.percentile_us(99.9)),
            p9999_ms: ms(h.percentile_us(99.99)),
            max_ms: ms(h.max_us()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_in_milliseconds() {
        let mut h = Histogram::new();
        h.record(2_000);
        h.record(4_000);
        let s = Summary::of(&h);
        assert_eq!(s.count, 2);
        assert_eq!(s.avg_ms, 3.0);
        assert!((s.max_ms - 4.0).abs() < 0.01);
    }

    #[test]
    fn empty_histogram_summarises_to_zeros() {
        assert_eq!(Summary::of(&Histogram::new()).count, 0);
    }
}
