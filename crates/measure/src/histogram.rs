//! Latency histogram in microseconds, a thin wrapper over `hdrhistogram` so the rest of stampede
//! never depends on its API or its error types.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Highest trackable latency: one hour, in microseconds. Values above are clamped (and still
/// counted), so a pathological stall never drops a sample.
const MAX_US: u64 = 3_600_000_000;
/// Three significant digits: 0.1% relative error on every percentile.
const SIGFIG: u8 = 3;

/// A latency histogram: hdrhistogram's buckets plus the exact sums and extremes.
///
/// Two forms, one behaviour. *Dense* is hdrhistogram's counts array (1 us .. 1 h at three
/// significant digits: 23,552 buckets, 184 KiB), needed to record at hot-path speed; a histogram
/// becomes dense on its first `record` and stays so. *Packed* is every other histogram: only the
/// non-empty buckets, as varint-coded (value step, count) pairs, a few KiB for a second of
/// OLTP latencies and nothing when empty. A run keeps one interval per second (the time series)
/// and, before packing, kept 184 KiB per histogram per second: 1.4 GiB an hour for a plain run,
/// several more with `-r` (issue 4, RSS of `stampede run -T 40 -R 500` grew 410 KiB/s). Every
/// reader (counts, percentiles, merges, the JSON) gives the same answer for both forms; the
/// tests compare them bucket for bucket.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Counts,
    /// Recorded values (the sum of the buckets' counts).
    count: u64,
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

#[derive(Clone, Debug)]
enum Counts {
    /// The non-empty buckets in ascending order, each as two LEB128 varints: the bucket's value
    /// (its highest equivalent value, as hdrhistogram's iterators report it) minus the previous
    /// bucket's, and its count.
    Packed(Vec<u8>),
    Dense(Box<hdrhistogram::Histogram<u64>>),
}

#[derive(Debug, thiserror::Error)]
#[error("cannot decode histogram: {0}")]
pub struct DecodeError(String);

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn dense() -> Box<hdrhistogram::Histogram<u64>> {
    let mut h = hdrhistogram::Histogram::new_with_bounds(1, MAX_US, SIGFIG)
        .expect("static histogram bounds are valid");
    h.auto(false);
    Box::new(h)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

/// Pack ascending (value, count) pairs.
fn pack(entries: impl Iterator<Item = (u64, u64)>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut prev = 0;
    for (v, c) in entries {
        put_varint(&mut out, v - prev);
        put_varint(&mut out, c);
        prev = v;
    }
    out.shrink_to_fit();
    out
}

/// The non-empty buckets of either form, ascending: (highest equivalent value, count).
enum Entries<'a> {
    Packed {
        bytes: &'a [u8],
        at: usize,
        prev: u64,
    },
    Dense(
        hdrhistogram::iterators::HistogramIterator<
            'a,
            u64,
            hdrhistogram::iterators::recorded::Iter,
        >,
    ),
}

impl Iterator for Entries<'_> {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        match self {
            Entries::Packed { bytes, at, prev } => {
                if *at >= bytes.len() {
                    return None;
                }
                *prev += get_varint(bytes, at);
                Some((*prev, get_varint(bytes, at)))
            }
            Entries::Dense(it) => it
                .next()
                .map(|v| (v.value_iterated_to(), v.count_at_value())),
        }
    }
}

/// Merge two ascending entry streams, adding the counts of equal buckets.
fn merge_entries(
    mut a: impl Iterator<Item = (u64, u64)>,
    mut b: impl Iterator<Item = (u64, u64)>,
) -> impl Iterator<Item = (u64, u64)> {
    let (mut x, mut y) = (a.next(), b.next());
    std::iter::from_fn(move || match (x, y) {
        (None, None) => None,
        (Some(e), None) => {
            x = a.next();
            Some(e)
        }
        (None, Some(e)) => {
            y = b.next();
            Some(e)
        }
        (Some(e), Some(f)) => {
            if e.0 < f.0 {
                x = a.next();
                Some(e)
            } else if f.0 < e.0 {
                y = b.next();
                Some(f)
            } else {
                x = a.next();
                y = b.next();
                Some((e.0, e.1 + f.1))
            }
        }
    })
}

impl Histogram {
    /// An empty histogram; it holds no bucket memory until something is recorded into it.
    pub fn new() -> Self {
        Histogram {
            counts: Counts::Packed(Vec::new()),
            count: 0,
            sum_us: 0,
            sum_sq: 0,
            min_us: u64::MAX,
            max_us: 0,
        }
    }

    fn entries(&self) -> Entries<'_> {
        match &self.counts {
            Counts::Packed(bytes) => Entries::Packed {
                bytes,
                at: 0,
                prev: 0,
            },
            Counts::Dense(h) => Entries::Dense(h.iter_recorded()),
        }
    }

    fn dense_mut(&mut self) -> &mut hdrhistogram::Histogram<u64> {
        if let Counts::Packed(_) = self.counts {
            let mut h = dense();
            for (v, c) in self.entries() {
                // Cannot fail: the value came from a histogram of the same bounds.
                let _ = h.record_n(v, c);
            }
            self.counts = Counts::Dense(h);
        }
        match &mut self.counts {
            Counts::Dense(h) => h,
            Counts::Packed(_) => unreachable!("made dense above"),
        }
    }

    /// Record one latency. Zero is recorded as 1 us (the lowest bucket); values over an hour are
    /// clamped to an hour. Never fails; allocates only the first time (the dense form).
    #[inline]
    pub fn record(&mut self, latency_us: u64) {
        let v = latency_us.clamp(1, MAX_US);
        let h = match &mut self.counts {
            Counts::Dense(h) => h,
            Counts::Packed(_) => self.dense_mut(),
        };
        // Cannot fail: v is within the histogram's bounds.
        let _ = h.record(v);
        self.count += 1;
        self.sum_us += latency_us as u128;
        self.sum_sq += (latency_us as u128) * (latency_us as u128);
        self.min_us = self.min_us.min(latency_us);
        self.max_us = self.max_us.max(latency_us);
    }

    /// Add `other`'s values. A packed histogram stays packed (no dense array is made for it).
    pub fn merge(&mut self, other: &Histogram) {
        if other.count > 0 {
            let counts = match (&mut self.counts, &other.counts) {
                // Cannot fail: both histograms have the same bounds.
                (Counts::Dense(a), Counts::Dense(b)) => {
                    let _ = a.add(&**b);
                    None
                }
                (Counts::Dense(a), Counts::Packed(_)) => {
                    for (v, c) in other.entries() {
                        let _ = a.record_n(v, c);
                    }
                    None
                }
                (Counts::Packed(_), _) => {
                    Some(pack(merge_entries(self.entries(), other.entries())))
                }
            };
            if let Some(p) = counts {
                self.counts = Counts::Packed(p);
            }
        }
        self.count += other.count;
        self.sum_us += other.sum_us;
        self.sum_sq += other.sum_sq;
        self.min_us = self.min_us.min(other.min_us);
        self.max_us = self.max_us.max(other.max_us);
    }

    /// Empty it, keeping its form (a dense histogram keeps its array for the next records).
    pub fn reset(&mut self) {
        match &mut self.counts {
            Counts::Dense(h) => h.reset(),
            Counts::Packed(p) => *p = Vec::new(),
        }
        self.count = 0;
        self.sum_us = 0;
        self.sum_sq = 0;
        self.min_us = u64::MAX;
        self.max_us = 0;
    }

    /// A packed copy of what was recorded, and this histogram emptied (a dense one keeps its
    /// array): what the engine hands on at every interval tick.
    pub fn take(&mut self) -> Histogram {
        let out = Histogram {
            counts: Counts::Packed(pack(self.entries())),
            count: self.count,
            sum_us: self.sum_us,
            sum_sq: self.sum_sq,
            min_us: self.min_us,
            max_us: self.max_us,
        };
        self.reset();
        out
    }

    /// Bytes of bucket memory held (the dense array, or the packed pairs).
    pub fn heap_bytes(&self) -> usize {
        match &self.counts {
            Counts::Packed(p) => p.capacity(),
            Counts::Dense(h) => h.distinct_values() * std::mem::size_of::<u64>(),
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
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
    /// The bucket is found as hdrhistogram's `value_at_quantile` finds it (the first whose
    /// cumulative count reaches `ceil(q * count)`, at least 1; its highest equivalent value), for
    /// either form; percentile 0 is the exact minimum.
    pub fn percentile_us(&self, p: f64) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let q = (p / 100.0).min(1.0);
        if q <= 0.0 {
            return self.min_us;
        }
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (v, c) in self.entries() {
            seen += c;
            if seen >= target {
                return v.min(self.max_us);
            }
        }
        self.max_us
    }

    /// Lossless text form: HDR V2 + DEFLATE, base64 (the format HdrHistogram's tools read), with the
    /// exact sums and extremes appended so mean, stddev, min and max survive a round trip:
    /// `"<base64>;<sum>;<sum_sq>;<min>;<max>"`.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        let mut ser = V2DeflateSerializer::new();
        let done = match &self.counts {
            Counts::Dense(h) => ser.serialize(&**h, &mut buf),
            Counts::Packed(_) => {
                let mut h = dense();
                for (v, c) in self.entries() {
                    let _ = h.record_n(v, c);
                }
                ser.serialize(&*h, &mut buf)
            }
        };
        done.expect("serializing into a Vec cannot fail");
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
        let inner: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| DecodeError(format!("{e:?}")))?;
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
        // Buckets are re-recorded with the bounds this build uses, whatever the file's were.
        let mut h = dense();
        for v in inner.iter_recorded() {
            h.record_n(v.value_iterated_to().clamp(1, MAX_US), v.count_at_value())
                .map_err(|e| DecodeError(format!("{e:?}")))?;
        }
        Ok(Histogram {
            counts: Counts::Packed(pack(
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value())),
            )),
            count: h.len(),
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

    /// Deterministic latencies with a long tail (1 us .. ~40 s), many repeats.
    fn values(n: u64, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = x >> 33;
                match r % 10 {
                    0 => r % 40_000_000,
                    1..=3 => r % 20_000,
                    _ => 80 + r % 700,
                }
            })
            .collect()
    }

    fn filled(vals: &[u64]) -> Histogram {
        let mut h = Histogram::new();
        for &v in vals {
            h.record(v);
        }
        h
    }

    const POINTS: [f64; 12] = [
        0.0, 0.001, 1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 100.0,
    ];

    fn same(a: &Histogram, b: &Histogram) {
        assert_eq!(
            a.entries().collect::<Vec<_>>(),
            b.entries().collect::<Vec<_>>()
        );
        assert_eq!(
            (a.count(), a.sum_us(), a.min_us(), a.max_us()),
            (b.count(), b.sum_us(), b.min_us(), b.max_us())
        );
        for p in POINTS {
            assert_eq!(a.percentile_us(p), b.percentile_us(p), "p{p}");
        }
        assert_eq!(a.encode(), b.encode());
    }

    #[test]
    fn packed_and_dense_forms_agree_bucket_for_bucket() {
        let vals = values(50_000, 7);
        let mut dense = filled(&vals);
        let kept = dense.clone();
        let packed = dense.take();
        assert!(matches!(packed.counts, Counts::Packed(_)));
        same(&kept, &packed);
        // The dense form emptied in place, ready for more.
        assert!(dense.is_empty() && matches!(dense.counts, Counts::Dense(_)));
        assert_eq!(dense.percentile_us(99.0), 0);
        // Percentiles are hdrhistogram's own (0: the exact minimum).
        let mut raw = hdrhistogram::Histogram::<u64>::new_with_bounds(1, MAX_US, SIGFIG).unwrap();
        for &v in &vals {
            raw.record(v.clamp(1, MAX_US)).unwrap();
        }
        for p in POINTS.into_iter().skip(1) {
            let want = raw.value_at_percentile(p).min(kept.max_us());
            assert_eq!(packed.percentile_us(p), want, "p{p}");
        }
        assert_eq!(packed.percentile_us(0.0), *vals.iter().min().unwrap());
    }

    #[test]
    fn every_merge_of_the_two_forms_gives_the_same_histogram() {
        let (a, b) = (values(30_000, 1), values(20_000, 2));
        let all: Vec<u64> = a.iter().chain(&b).copied().collect();
        let want = filled(&all);
        let packed = |v: &[u64]| filled(v).take();
        for (mut x, y) in [
            (filled(&a), filled(&b)),
            (filled(&a), packed(&b)),
            (packed(&a), filled(&b)),
            (packed(&a), packed(&b)),
            (Histogram::new(), filled(&all)),
        ] {
            x.merge(&y);
            same(&x, &want);
        }
        let mut x = packed(&a);
        x.merge(&Histogram::new());
        same(&x, &filled(&a));
    }

    #[test]
    fn a_packed_second_is_small_and_an_empty_histogram_holds_nothing() {
        assert_eq!(Histogram::new().heap_bytes(), 0);
        // A busy second of OLTP latencies: 80,000 values between 40 us and 3 ms.
        let vals: Vec<u64> = values(80_000, 3).iter().map(|v| 40 + v % 3_000).collect();
        let mut h = filled(&vals);
        assert!(h.heap_bytes() > 180 << 10, "dense: {}", h.heap_bytes());
        let p = h.take();
        assert!(p.heap_bytes() < 8 << 10, "packed: {} bytes", p.heap_bytes());
        // Recording into a packed histogram makes it dense again, with everything kept.
        let mut q = p.clone();
        q.record(1_000_000);
        assert_eq!(q.count(), 80_001);
        assert_eq!(q.percentile_us(100.0), 1_000_000);
        assert_eq!(q.percentile_us(50.0), p.percentile_us(50.0));
    }

    #[test]
    fn both_forms_decode_to_the_same_histogram() {
        let mut h = filled(&values(10_000, 9));
        let kept = h.clone();
        let p = h.take();
        let back = Histogram::decode(&p.encode()).unwrap();
        same(&back, &kept);
        assert_eq!(back.stddev_us(), kept.stddev_us());
        assert!(matches!(back.counts, Counts::Packed(_)));
    }

    #[test]
    fn garbage_does_not_decode() {
        assert!(Histogram::decode("not base64!;1;2").is_err());
        assert!(Histogram::decode("").is_err());
    }
}
