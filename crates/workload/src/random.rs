//! pgbench's pseudo-random generator: xoshiro256** as in PostgreSQL's `src/common/pg_prng.c`,
//! with the same seeding (SplitMix64 from a 64-bit seed) and the same range reduction, so a given
//! `--random-seed` draws the same sequences pgbench would.
//!
//! STUB: being written.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// pg_prng_seed: SplitMix64 expansion of one 64-bit seed.
    pub fn from_seed(seed: u64) -> Rng {
        let _ = seed;
        todo!()
    }

    /// pg_prng_uint64.
    pub fn next_u64(&mut self) -> u64 {
        let _ = &mut self.s;
        todo!()
    }

    /// pg_prng_uint64_range: uniform in [min, max], inclusive, as pgbench's `getrand`.
    pub fn range(&mut self, min: i64, max: i64) -> i64 {
        let _ = (min, max);
        todo!()
    }

    /// pg_prng_double: uniform in [0, 1).
    pub fn double(&mut self) -> f64 {
        todo!()
    }
}
