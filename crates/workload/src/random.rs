//! pgbench's pseudo-random generator, bit for bit: PostgreSQL's `src/common/pg_prng.c`, with the
//! same seeding and the same range reduction, so a given `--random-seed` draws the same values
//! pgbench draws.
//!
//! Note on the algorithm: `pg_prng.c` is **xoroshiro128\*\*** (two 64-bit words of state), not
//! xoshiro256\*\*. `pg_prng_seed` fills the two words with two SplitMix64 outputs;
//! `pg_prng_uint64_range` reduces with a bitmask and rejection; `pg_prng_double` uses the top 52
//! bits. The unit tests pin values printed by `pgbench -d` (PostgreSQL 15.18) for fixed seeds.
//!
//! How pgbench derives its streams (`set_random_seed`, `initRandomState`): one *base* sequence is
//! seeded from `--random-seed`; then every stream is `pg_prng_seed(pg_prng_uint64(&base))`, drawn
//! in this order: each client's `random()` stream (client 0, 1, ... n-1), then one raw draw for the
//! `:default_seed` variable of the hash functions, then per thread its script-choice, throttle and
//! log-sampling streams. [`Streams`] reproduces that derivation (checked against pgbench's choices).

/// pg_prng_state: xoroshiro128** state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s0: u64,
    s1: u64,
}

/// SplitMix64, used only to expand a 64-bit seed into the state (pg_prng.c `splitmix64`).
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

impl Rng {
    /// pg_prng_seed: SplitMix64 expansion of one 64-bit seed (never the all-zero state).
    pub fn from_seed(seed: u64) -> Rng {
        let mut sm = seed;
        let s0 = splitmix64(&mut sm);
        let s1 = splitmix64(&mut sm);
        let mut r = Rng { s0, s1 };
        // pg_prng_seed_check: replace the all-zero fixed point with Knuth's LCG constants.
        if r.s0 == 0 && r.s1 == 0 {
            r.s0 = 0x5851_F42D_4C95_7F2D;
            r.s1 = 0x1405_7B7E_F767_814F;
        }
        r
    }

    /// pgbench's `initRandomState`: a new stream seeded from the next value of this one.
    pub fn derive(&mut self) -> Rng {
        let seed = self.next_u64();
        Rng::from_seed(seed)
    }

    /// pg_prng_uint64: the raw xoroshiro128** step.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// pg_prng_uint64_range: uniform in `[min, max]` by bitmask rejection; `min` if the range is
    /// empty.
    #[inline]
    pub fn uint64_range(&mut self, min: u64, max: u64) -> u64 {
        if max > min {
            let range = max - min;
            // 63 - pg_leftmost_one_pos64(range)
            let rshift = range.leading_zeros();
            loop {
                let v = self.next_u64() >> rshift;
                if v <= range {
                    return min + v;
                }
            }
        } else {
            min
        }
    }

    /// pgbench's `getrand(state, min, max)`: uniform in `[min, max]` inclusive, computed as
    /// `min + pg_prng_uint64_range(0, max - min)` (the difference must not overflow an i64; pgbench
    /// does not check it either).
    #[inline]
    pub fn range(&mut self, min: i64, max: i64) -> i64 {
        min.wrapping_add(self.uint64_range(0, max.wrapping_sub(min) as u64) as i64)
    }

    /// pg_prng_double: uniform in `[0, 1)` from the top 52 bits.
    #[inline]
    pub fn double(&mut self) -> f64 {
        let v = self.next_u64() >> (64 - 52);
        v as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// pgbench's `getPoissonRand(state, center)`: an exponentially distributed delay in
    /// microseconds with mean `center`, rounded to the nearest integer (inverse transform of a
    /// uniform in (0, 1]). Successive delays make a Poisson arrival process.
    #[inline]
    pub fn poisson_delay_us(&mut self, center: f64) -> u64 {
        let uniform = 1.0 - self.double();
        let v = -uniform.ln() * center + 0.5;
        v as i64 as u64
    }
}

/// pgbench's derivation of every random stream of a run from `--random-seed`.
///
/// `client_func(i)` is client `i`'s stream for `random()` in scripts (pgbench's `cs_func_rs`),
/// exactly pgbench's for every client. `slot_streams(i)` are the three streams pgbench gives to its
/// thread `i` (`ts_choose_rs`, `ts_throttle_rs`, `ts_sample_rs`): stampede's engine gives the i-th
/// set to client `i` (choice) and to thread `i` (throttle), so with one client per thread (or one
/// client) every stream is pgbench's.
#[derive(Clone, Debug)]
pub struct Streams {
    seed: u64,
    clients: u32,
}

impl Streams {
    pub fn new(seed: u64, clients: u32) -> Streams {
        Streams { seed, clients }
    }

    fn nth_derived(&self, n: u64) -> Rng {
        let mut base = Rng::from_seed(self.seed);
        for _ in 0..n {
            base.next_u64();
        }
        base.derive()
    }

    /// Client `i`'s stream for the workload's random values (pgbench `cs_func_rs`).
    pub fn client_func(&self, i: u32) -> Rng {
        self.nth_derived(i as u64)
    }

    /// pgbench's `:default_seed` (the seed of `hash()` in scripts): the draw after the clients'.
    pub fn default_seed(&self) -> u64 {
        let mut base = Rng::from_seed(self.seed);
        for _ in 0..self.clients {
            base.next_u64();
        }
        base.next_u64()
    }

    /// Every client's streams in one pass over the base sequence (O(clients)): client `i` gets its
    /// `random()` stream and the choice and throttle streams of pgbench's thread `i`.
    pub fn client_streams(&self) -> Vec<ClientStreams> {
        let mut base = Rng::from_seed(self.seed);
        let funcs: Vec<Rng> = (0..self.clients).map(|_| base.derive()).collect();
        base.next_u64(); // :default_seed
        funcs
            .into_iter()
            .map(|func| {
                let choose = base.derive();
                let throttle = base.derive();
                let _sample = base.derive();
                ClientStreams {
                    func,
                    choose,
                    throttle,
                }
            })
            .collect()
    }

    /// pgbench's per-thread streams for "thread" `i`: (choose, throttle, sample).
    pub fn slot_streams(&self, i: u32) -> (Rng, Rng, Rng) {
        let mut base = Rng::from_seed(self.seed);
        for _ in 0..(self.clients as u64 + 1 + 3 * i as u64) {
            base.next_u64();
        }
        (base.derive(), base.derive(), base.derive())
    }
}

/// The streams of one client (see [`Streams`]).
#[derive(Clone, Debug)]
pub struct ClientStreams {
    /// The workload's random values (pgbench `cs_func_rs`).
    pub func: Rng,
    /// The choice of transaction type (pgbench's `ts_choose_rs` of thread `i`).
    pub choose: Rng,
    /// The `-R` schedule (pgbench's `ts_throttle_rs` of thread `i`); the engine uses the one of
    /// each thread's first client for the thread's schedule.
    pub throttle: Rng,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by `pgbench -d --random-seed=42 -c 1 -t 5` (PostgreSQL 15.18) for the
    /// script `\set r random(1, 1000000)` `\set s random(-5000, 5000)` `\set u random(1, 10)`
    /// `SELECT :r, :s, :u;`.
    #[test]
    fn matches_pgbench_for_seed_42() {
        let mut r = Streams::new(42, 1).client_func(0);
        let got: Vec<(i64, i64, i64)> = (0..5)
            .map(|_| (r.range(1, 1_000_000), r.range(-5000, 5000), r.range(1, 10)))
            .collect();
        assert_eq!(
            got,
            vec![
                (668251, -4040, 5),
                (691120, -416, 5),
                (3615, -3381, 10),
                (720668, 10, 7),
                (748003, -1696, 8)
            ]
        );
    }

    /// `pgbench -d --random-seed=7 -c 2 -j 1 -t 3`, same script: client 1's stream is the second
    /// draw from the base sequence.
    #[test]
    fn matches_pgbench_for_two_clients() {
        let s = Streams::new(7, 2);
        let draw = |mut r: Rng| -> Vec<(i64, i64, i64)> {
            (0..3)
                .map(|_| (r.range(1, 1_000_000), r.range(-5000, 5000), r.range(1, 10)))
                .collect()
        };
        assert_eq!(
            draw(s.client_func(0)),
            vec![(869439, 813, 1), (960650, 1311, 6), (244112, -3405, 8)]
        );
        assert_eq!(
            draw(s.client_func(1)),
            vec![(467069, 3924, 1), (79606, -916, 6), (316868, 1478, 7)]
        );
    }

    /// pgbench's chooseScript with `-f a.sql@1 -f b.sql@3`, `--random-seed=99`: the sequence of
    /// scripts pgbench ran, with one client, and with two clients on two threads.
    #[test]
    fn script_choice_stream_matches_pgbench() {
        let choose = |r: &mut Rng| -> usize {
            let mut w = r.range(0, 3);
            let mut i = 0;
            loop {
                w -= [1, 3][i];
                i += 1;
                if w < 0 {
                    return i - 1;
                }
            }
        };
        let (mut c, _, _) = Streams::new(99, 1).slot_streams(0);
        let got: Vec<usize> = (0..12).map(|_| choose(&mut c)).collect();
        assert_eq!(got, vec![1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1]);

        let s = Streams::new(99, 2);
        let (mut c0, _, _) = s.slot_streams(0);
        let (mut c1, _, _) = s.slot_streams(1);
        assert_eq!(
            (0..6).map(|_| choose(&mut c0)).collect::<Vec<_>>(),
            vec![1; 6]
        );
        assert_eq!(
            (0..6).map(|_| choose(&mut c1)).collect::<Vec<_>>(),
            vec![0, 0, 1, 1, 0, 1]
        );
    }

    #[test]
    fn one_pass_derivation_equals_the_direct_one() {
        let s = Streams::new(5, 7);
        let all = s.client_streams();
        for (i, c) in all.iter().enumerate() {
            let (ch, th, _) = s.slot_streams(i as u32);
            assert_eq!(c.func, s.client_func(i as u32));
            assert_eq!(c.choose, ch);
            assert_eq!(c.throttle, th);
        }
    }

    #[test]
    fn same_seed_same_sequence_and_clone_restores() {
        let mut a = Rng::from_seed(1);
        let mut b = Rng::from_seed(1);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let snap = a.clone();
        let x: Vec<i64> = (0..10).map(|_| a.range(1, 100)).collect();
        let mut a = snap;
        let y: Vec<i64> = (0..10).map(|_| a.range(1, 100)).collect();
        assert_eq!(x, y);
        assert_ne!(Rng::from_seed(1), Rng::from_seed(2));
    }

    #[test]
    fn range_bounds_and_degenerate_ranges() {
        let mut r = Rng::from_seed(3);
        for _ in 0..10_000 {
            let v = r.range(-5000, 5000);
            assert!((-5000..=5000).contains(&v));
        }
        assert_eq!(r.range(7, 7), 7);
        assert_eq!(r.uint64_range(9, 3), 9);
        // Full width does not overflow.
        let _ = r.uint64_range(0, u64::MAX);
        let d = r.double();
        assert!((0.0..1.0).contains(&d));
    }

    #[test]
    fn range_is_uniform_chi_square() {
        // 10 buckets, 100,000 draws: chi-square with 9 degrees of freedom; 27.88 is p = 0.001.
        let mut r = Rng::from_seed(12345);
        let mut buckets = [0u64; 10];
        let n = 100_000;
        for _ in 0..n {
            buckets[(r.range(1, 10) - 1) as usize] += 1;
        }
        let e = n as f64 / 10.0;
        let chi: f64 = buckets.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        assert!(chi < 27.88, "chi-square {chi}, buckets {buckets:?}");
    }

    #[test]
    fn poisson_delays_have_the_requested_mean() {
        let mut r = Rng::from_seed(5);
        let n = 200_000;
        let center = 1000.0;
        let sum: u64 = (0..n).map(|_| r.poisson_delay_us(center)).sum();
        let mean = sum as f64 / n as f64;
        // Standard error of the mean is center / sqrt(n) = 2.2; allow 5 of them.
        assert!((mean - center).abs() < 11.5, "mean {mean}");
    }

    #[test]
    fn xoroshiro_reference_step() {
        // Reference: the first outputs of xoroshiro128** 1.0 from state (1, 2), computed from the
        // algorithm's definition (rotl(s0 * 5, 7) * 9; s1 ^= s0; s0 = rotl(s0, 24) ^ s1 ^ (s1 << 16);
        // s1 = rotl(s1, 37)).
        let mut r = Rng { s0: 1, s1: 2 };
        assert_eq!(r.next_u64(), 5760);
        assert_eq!(r.next_u64(), 97_769_243_520);
    }
}
