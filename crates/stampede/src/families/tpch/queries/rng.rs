//! The substitution parameters' random stream: SplitMix64 (Steele, Lea and Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014; the constants of Vigna's reference
//! `splitmix64.c`), written here so the module needs std only.
//!
//! Owns: one seeded stream and its uniform draws. Must not own: which values a query draws
//! (`params`), nor any other purpose's randomness (STYLE.md, habit 9: one stream per purpose).
//!
//! Reproducibility: [`Rng::derive`] gives each (seed, stream, query) its own stream, so a
//! query's parameters depend on the seed, the stream number and the query only, never on the
//! order the queries ran in or on how many draws another query made (qgen, by contrast, seeds
//! once per stream and draws in query order).

/// A SplitMix64 stream: 64 bits of state, advanced by the golden-ratio increment and mixed.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (the finalizer of MurmurHash3 with Stafford's variant-13
/// constants): a bijection on u64, so distinct states give distinct outputs.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The stream of one query in one query stream of a run with `seed`: the three numbers
    /// mixed (each through [`mix`]) into a seed, so neighbouring streams or queries do not
    /// start on neighbouring states.
    pub fn derive(seed: u64, stream: usize, query: u8) -> Rng {
        let s = mix(seed ^ mix((stream as u64).wrapping_add(1).wrapping_mul(GOLDEN)));
        Rng::new(mix(s ^ mix(
            u64::from(query).wrapping_mul(0x2545_f491_4f6c_dd1d)
        )))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A uniform integer in `lo..=hi` (inclusive, as the specification writes its ranges,
    /// e.g. "[60..120]"). Unbiased: Lemire's multiply-shift with rejection ("Fast Random
    /// Integer Generation in an Interval", ACM TOMACS 2019).
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        let span = u64::from(hi - lo) + 1;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(span);
            let low = m as u64;
            // The rejection threshold (2^64 mod span) keeps every value equally likely.
            if low >= span.wrapping_neg() % span {
                return lo + (m >> 64) as u32;
            }
        }
    }

    /// A uniformly chosen element of a non-empty list.
    pub fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[self.range(0, list.len() as u32 - 1) as usize]
    }

    /// `n` distinct values of `lo..=hi`, in the order drawn (a partial Fisher-Yates shuffle),
    /// for Q16's sizes and Q22's country codes ("a set of different values").
    pub fn distinct(&mut self, n: usize, lo: u32, hi: u32) -> Vec<u32> {
        let mut all: Vec<u32> = (lo..=hi).collect();
        assert!(n <= all.len(), "{n} distinct values of {lo}..={hi}");
        for i in 0..n {
            let j = self.range(i as u32, all.len() as u32 - 1) as usize;
            all.swap(i, j);
        }
        all.truncate(n);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_output() {
        // Vigna's splitmix64.c seeded with 1234567: its first outputs (the values every
        // port checks against).
        let mut r = Rng::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn range_stays_inside_and_reaches_both_ends() {
        let mut r = Rng::new(7);
        let mut seen = [false; 61];
        for _ in 0..5000 {
            let v = r.range(60, 120);
            assert!((60..=120).contains(&v));
            seen[(v - 60) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s), "every value of 60..=120 drawn");
        assert_eq!(Rng::new(1).range(5, 5), 5);
    }

    #[test]
    fn distinct_values_are_distinct_and_in_range() {
        let mut r = Rng::new(99);
        for _ in 0..200 {
            let v = r.distinct(8, 1, 50);
            let mut s = v.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 8);
            assert!(v.iter().all(|x| (1..=50).contains(x)));
        }
    }

    #[test]
    fn derived_streams_differ_by_stream_and_query_and_repeat_by_seed() {
        let a = Rng::derive(42, 0, 1).next_u64();
        assert_eq!(a, Rng::derive(42, 0, 1).next_u64());
        assert_ne!(a, Rng::derive(42, 1, 1).next_u64());
        assert_ne!(a, Rng::derive(42, 0, 2).next_u64());
        assert_ne!(a, Rng::derive(43, 0, 1).next_u64());
    }
}
