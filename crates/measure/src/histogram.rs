//! Latency histogram in microseconds, a thin wrapper over `hdrhistogram` so the rest of stampede
//! never depends on its API or its error types.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Highest trackable latency: one hour, in microseconds. Values above are clamped (and still
/// counted), so a pathological stall never drops a sample.
const MAX_US: u64 = 3_600_000_000;
/// Three significant digits: 0.1% relative error on every percentile.
const SIGFIG: u8 = 3;

#[derive(Clone, Debug)]
pub struct Histogram {
    inner: hdrhistogram::Histogram<u64>,
    /// Exact sum of recorded values, so `mean()` is exact rather than bucket-rounded (pgbench's
    /// average latency is an exact mean; ours must agree with it).
    sum_us: u128,
    /// Exact sum of squares for an exact standard deviation, as pgbench computes it.
    sum_sq: u128,
    /// Exact extremes: the HDR buckets round the max up by up to 0.1%; pgbench prints exact
    /// values. `min_us` is `u64::MAX` while empty.
    min_us: u64,
    max_us: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot decode histogram: {0}")]
pub struct DecodeError(String);

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        let mut inner = hdrhistogram::Histogram::new_with_bounds(1, MAX_US, SIGFIG)
            .expect("static histogram bounds are valid");
        inner.auto(false);
        Histogram {
            inner,
            sum_us: 0,
            sum_sq: 0,
            min_us: u64::MAX,
            max_us: 0,
        }
    }

    /// Record one latency. Zero is recorded as 1 us (the lowest bucket); values over an hour are
    /// clamped to an hour. Never fails, never allocates.
    #[inline]
    pub fn record(&mut self, latency_us: u64) {
        let v = latency_us.clamp(1, MAX_US);
        // Cannot fail: v is within the histogram's bounds.
        let _ = self.inner.record(v);
        self.sum_us += latency_us as u128;
        self.sum_sq += (latency_us as u128) * (latency_us as u128);
        self.min_us = self.min_us.min(latency_us);
        self.max_us = self.max_us.max(latency_us);
    }

    pub fn merge(&mut self, other: &Histogram) {
        // Cannot fail: both histograms have the same bounds.
        let _ = self.inner.add(&other.inner);
        self.sum_us += other.sum_us;
        self.sum_sq += other.sum_sq;
        self.min_us = self.min_us.min(other.min_us);
        self.max_us = self.max_us.max(other.max_us);
    }

    pub fn reset(&mut self) {
        self.inner.reset();
        self.sum_us = 0;
        self.sum_sq = 0;
        self.min_us = u64::MAX;
        self.max_us = 0;
    }

    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    pub fn sum_us(&self) -> u128 {
        self.sum_us
    }

    /// Exact mean in microseconds (0 when empty).
    pub fn mean_us(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            0.0
        } else {
            self.sum_us as f64 / n as f64
        }
    }

    /// Exact population standard deviation in microseconds, as pgbench prints it.
    pub fn stddev_us(&self) -> f64 {
        let n = self.count();
        if n == 0 {
            return 0.0;
        }
        let mean = self.mean_us();
        let var = self.sum_sq as f64 / n as f64 - mean * mean;
        var.max(0.0).sqrt()
    }

    /// Exact smallest recorded value (0 when empty).
    pub fn min_us(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.min_us
        }
    }

    /// Exact largest recorded value (0 when empty).
    pub fn max_us(&self) -> u64 {
        self.max_us
    }

    /// Value at percentile `p` (0..=100), in microseconds; 0 when empty. Never above the exact
    /// max (the bucket's upper edge can be).
    pub fn percentile_us(&self, p: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.value_at_percentile(p).min(self.max_us)
        }
    }

    /// Lossless text form: HDR V2 + DEFLATE, base64 (the format HdrHistogram's tools read), with the
    /// exact sums and extremes appended so mean, stddev, min and max survive a round trip:
    /// `"<base64>;<sum>;<sum_sq>;<min>;<max>"`.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.inner, &mut buf)
            .expect("serializing into a Vec cannot fail");
        format!(
            "{};{};{};{};{}",
            base64::engine::general_purpose::STANDARD.encode(buf),
            self.sum_us,
            self.sum_sq,
            self.min_us(),
            self.max_us
        )
    }

    pub fn decode(text: &str) -> Result<Histogram, DecodeError> {
        let mut parts = text.split(';');
        let b64 = parts.next().unwrap_or_default();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| DecodeError(e.to_string()))?;
        let mut inner: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| DecodeError(format!("{e:?}")))?;
        inner.auto(false);
        let num = |s: Option<&str>| -> Result<u128, DecodeError> {
            s.ok_or_else(|| DecodeError("missing sums".into()))?
                .parse()
                .map_err(|e: std::num::ParseIntError| DecodeError(e.to_string()))
        };
        let sum_us = num(parts.next())?;
        let sum_sq = num(parts.next())?;
        let min_us = num(parts.next())? as u64;
        let max_us = num(parts.next())? as u64;
        let min_us = if inner.is_empty() { u64::MAX } else { min_us };
        Ok(Histogram {
            inner,
            sum_us,
            sum_sq,
            min_us,
            max_us,
        })
    }
}

impl serde::Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for Histogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Histogram::decode(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev_are_exact_not_bucketed() {
        let mut h = Histogram::new();
        for v in [1001, 1003, 1005, 1007] {
            h.record(v);
        }
        assert_eq!(h.mean_us(), 1004.0);
        assert!((h.stddev_us() - 5f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn percentiles_are_within_three_significant_digits() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v);
        }
        let p99 = h.percentile_us(99.0) as f64;
        assert!((p99 - 99_000.0).abs() / 99_000.0 < 0.001, "p99 = {p99}");
        assert_eq!(h.max_us(), 100_000);
        assert_eq!(h.min_us(), 1);
    }

    #[test]
    fn encoding_round_trips_losslessly() {
        let mut h = Histogram::new();
        for v in [3, 70, 70, 9_000, 123_456_789] {
            h.record(v);
        }
        let back = Histogram::decode(&h.encode()).unwrap();
        assert_eq!(back.count(), 5);
        assert_eq!(back.sum_us(), h.sum_us());
        assert_eq!(back.stddev_us(), h.stddev_us());
        assert_eq!(back.percentile_us(50.0), h.percentile_us(50.0));
        assert_eq!(back.max_us(), 123_456_789);
        assert_eq!(back.min_us(), 3);
    }

    #[test]
    fn merge_adds_counts_and_sums() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        a.record(10);
        b.record(30);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.mean_us(), 20.0);
    }

    #[test]
    fn extreme_values_are_clamped_but_counted() {
        let mut h = Histogram::new();
        h.record(0);
        h.record(u64::MAX / 4);
        assert_eq!(h.count(), 2);
    }

    #[test]
    fn garbage_does_not_decode() {
        assert!(Histogram::decode("not base64!;1;2").is_err());
        assert!(Histogram::decode("").is_err());
    }
}
