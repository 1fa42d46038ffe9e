//! pgbench's random distributions, hash functions and `permute` (pgbench.c, pg_prng.c), as pure
//! functions of a random stream or a seed, bit for bit as pgbench computes them so that a
//! script draws the same values here as there for the same seed.

use crate::random::Rng;

/// pgbench's `MIN_GAUSSIAN_PARAM`.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// pgbench's `MIN_ZIPFIAN_PARAM` and `MAX_ZIPFIAN_PARAM`.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// pg_prng.c `pg_prng_double_normal`: Box-Muller on two uniforms in (0, 1], one output.
pub fn double_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.double();
    let u2 = 1.0 - rng.double();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
}

/// pgbench's `getExponentialRand`: the density at `max` is `exp(-parameter)` of the one at `min`.
pub fn exponential_rand(rng: &mut Rng, min: i64, max: i64, parameter: f64) -> i64 {
    let cut = (-parameter).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / parameter;
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

/// pgbench's `getGaussianRand`: a normal draw kept in `[-parameter, parameter)`, mapped onto the
/// range.
pub fn gaussian_rand(rng: &mut Rng, min: i64, max: i64, parameter: f64) -> i64 {
    let stdev = loop {
        let s = double_normal(rng);
        if !(s < -parameter || s >= parameter) {
            break s;
        }
    };
    let rand = (stdev + parameter) / (parameter * 2.0);
    min.wrapping_add(((max.wrapping_sub(min).wrapping_add(1)) as f64 * rand) as i64)
}

/// pgbench's `computeIterativeZipfian`: Devroye's rejection method (Non-Uniform Random Variate
/// Generation, p. 550-551), for s > 1.
fn iterative_zipfian(rng: &mut Rng, n: i64, s: f64) -> i64 {
    let b = 2.0f64.powf(s - 1.0);
    if n <= 1 {
        return 1;
    }
    loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        // reject if too large or out of bound
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            return x as i64;
        }
    }
}

/// pgbench's `getZipfianRand`: zipfian on `[min, max]`, parameter in [1.001, 1000].
pub fn zipfian_rand(rng: &mut Rng, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    min.wrapping_sub(1)
        .wrapping_add(iterative_zipfian(rng, n, s))
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// pgbench's `getHashFnv1a`: FNV-1a over the 8 bytes of the value, low byte first.
pub fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed;
    let mut v = val;
    for _ in 0..8 {
        let octet = (v & 0xff) as u64;
        v >>= 8;
        result ^= octet;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// pgbench's `getHashMurmur2`: MurmurHash64A of one 64-bit value.
pub fn hash_murmur2(val: i64, seed: u64) -> i64 {
    let mut result = seed ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// pgbench's `permute`: a pseudorandom permutation of `[0, size)` chosen by `seed`; six rounds of
/// an odd multiply, xor and rotate on the lower and upper overlapping halves, then a random
/// offset, with the random numbers from a PRNG seeded with `seed`.
pub fn permute(val: i64, isize: i64, seed: i64) -> i64 {
    if isize < 2 {
        return 0;
    }
    let mut state = Rng::from_seed(seed as u64);
    let size = isize as u64;
    let mut v = (val as u64) % size;
    // Mask to work modulo the largest power of 2 not above size.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (state.next_u64() & mask) | 1;
        let r = state.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = state.uint64_range(0, size - 1);
        v = (v + r) % size;
    }
    v as i64
}
