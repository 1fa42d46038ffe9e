//! YCSB's generators, written from what YCSB 0.17's classes do (`site.ycsb.generator.*`,
//! `site.ycsb.Utils`), fed by stampede's own seeded [`Rng`] instead of Java's
//! `ThreadLocalRandom`, so a run reproduces with `--random-seed`:
//!
//! - [`fnvhash64`]: `Utils.fnvhash64`, FNV-1a 64 over the eight little-endian bytes of the
//!   number, then `Math.abs`. Used for hashed insert order ([`key_name`],
//!   `CoreWorkload.buildKeyName`) and by the scrambled zipfian.
//! - [`Zipfian`]: `ZipfianGenerator`, Gray et al., "Quickly Generating Billion-Record Synthetic
//!   Databases" (SIGMOD 1994): zeta(n) summed term by term, eta and alpha as YCSB computes them,
//!   and its incremental zeta when the item count grows (used by "latest"). The draw takes one
//!   uniform double; [`Zipfian::next_from`] exposes that step so a test can feed the same
//!   uniforms to an independent computation.
//! - [`ScrambledZipfian`]: `ScrambledZipfianGenerator`, a zipfian over 10^10 items with the
//!   precomputed zeta 26.46902820178302 (for the constant 0.99), hashed, then mod the item
//!   count: the popular keys are scattered over the key space.
//! - [`SkewedLatest`]: `SkewedLatestGenerator`, `max - zipfian(max)` where `max` is the highest
//!   acknowledged insert ([`InsertKeys`], `AcknowledgedCounterGenerator`).
//! - [`OpChooser`]: `DiscreteGenerator`, one uniform double walked over the normalised
//!   proportions.
//!
//! A zipfian constant other than 0.99 (`-p zipfianconstant`, which YCSB has no property for)
//! needs zeta over 10^10 + 1 items for the scrambled generator: YCSB would sum 10^10 terms;
//! stampede sums the first million and takes the rest from the Euler–Maclaurin formula
//! ([`zeta`]), which gives the published 26.46902820178302 back for 0.99 to 1e-9.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

use workload::Rng;

/// `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator.ITEM_COUNT`.
pub const SCRAMBLED_ITEMS: u64 = 10_000_000_000;
/// `ScrambledZipfianGenerator.ZETAN`: zeta(10^10, 0.99).
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// `Utils.fnvhash64`: FNV-1a over the number's eight bytes, low byte first, then `Math.abs`
/// (which leaves `i64::MIN` negative, as Java does).
pub fn fnvhash64(val: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS_64;
    for b in val.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME_64);
    }
    (h as i64).wrapping_abs()
}

/// `CoreWorkload.buildKeyName`: "user" and the key number (hashed unless the insert order is
/// ordered), left-padded with zeros to `zeropadding` digits.
pub fn key_name(keynum: u64, hashed: bool, zeropadding: usize, out: &mut String) {
    use std::fmt::Write as _;
    let v = if hashed {
        fnvhash64(keynum as i64)
    } else {
        keynum as i64
    };
    out.clear();
    out.push_str("user");
    let _ = write!(out, "{v:0>zeropadding$}");
}

/// zeta(n, theta) = sum of 1/i^theta for i in 1..=n: term by term up to a million terms (as
/// YCSB's `zetastatic`), the Euler–Maclaurin formula for the rest (module header).
pub fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 1_000_000;
    let m = n.min(EXACT);
    let mut sum = zeta_from(0, m, theta, 0.0);
    if n > m {
        // Sum of f(i) for i in a..=b, f(x) = x^-theta.
        let (a, b) = ((m + 1) as f64, n as f64);
        let f = |x: f64| x.powf(-theta);
        let f1 = |x: f64| -theta * x.powf(-theta - 1.0);
        let f3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
        let integral = if (theta - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        };
        sum += integral + (f(a) + f(b)) / 2.0 + (f1(b) - f1(a)) / 12.0 - (f3(b) - f3(a)) / 720.0;
    }
    sum
}

/// YCSB's `zetastatic(st, n, theta, initialsum)`: `initialsum` plus 1/(i+1)^theta for i in
/// st..n.
pub fn zeta_from(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// `ZipfianGenerator` (module header). Cloned into each client: the incremental zeta of
/// "latest" is then each client's own, which YCSB shares under a lock with the same result
/// (the item count only grows).
#[derive(Clone, Debug)]
pub struct Zipfian {
    /// Items given at construction (`max - min + 1`): eta keeps using it, as in YCSB.
    items: u64,
    base: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    countforzeta: u64,
}

impl Zipfian {
    /// Items `min..=max`, zeta computed.
    pub fn new(min: u64, max: u64, theta: f64) -> Zipfian {
        Zipfian::with_zetan(min, max, theta, zeta(max - min + 1, theta))
    }

    /// Items `min..=max` with a precomputed zeta (YCSB's four-argument constructor).
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta_from(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            zeta2theta,
            countforzeta: items,
        }
    }

    /// `nextValue()`: a draw over the constructed items.
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.next_from(self.items, rng.double())
    }

    /// `nextLong(itemcount)` with the uniform `u` YCSB takes from `ThreadLocalRandom`.
    pub fn next_from(&mut self, itemcount: u64, u: f64) -> u64 {
        if itemcount > self.countforzeta {
            // More items than zeta was computed for: add their terms (YCSB never recomputes
            // when the count goes down, `allowitemcountdecrease` false).
            self.zetan = zeta_from(self.countforzeta, itemcount, self.theta, self.zetan);
            self.countforzeta = itemcount;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// `ScrambledZipfianGenerator` (module header).
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: u64,
    itemcount: u64,
}

impl ScrambledZipfian {
    /// Items `min..=max`.
    pub fn new(min: u64, max: u64, theta: f64) -> ScrambledZipfian {
        let zetan = if theta == ZIPFIAN_CONSTANT {
            SCRAMBLED_ZETAN
        } else {
            zeta(SCRAMBLED_ITEMS + 1, theta)
        };
        ScrambledZipfian {
            gen: Zipfian::with_zetan(0, SCRAMBLED_ITEMS, theta, zetan),
            min,
            itemcount: max - min + 1,
        }
    }

    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.next_from(rng.double())
    }

    /// The draw for the uniform `u`.
    pub fn next_from(&mut self, u: f64) -> u64 {
        let z = self.gen.next_from(self.gen.items, u);
        self.min + (fnvhash64(z as i64) % self.itemcount as i64) as u64
    }
}

/// `SkewedLatestGenerator`: most popular is the newest acknowledged key.
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// `last` is the basis's last value when the generator is made (`recordcount - 1`).
    pub fn new(last: u64, theta: f64) -> SkewedLatest {
        SkewedLatest {
            zipfian: Zipfian::new(0, last.max(1) - 1, theta),
        }
    }

    /// A draw when the highest acknowledged key is `max`.
    pub fn next(&mut self, max: u64, rng: &mut Rng) -> u64 {
        self.next_from(max, rng.double())
    }

    pub fn next_from(&mut self, max: u64, u: f64) -> u64 {
        max - self.zipfian.next_from(max, u)
    }
}

/// `AcknowledgedCounterGenerator`: insert keys handed out in order to every client of the run
/// ([`InsertKeys::next`]), and the highest key below which every key was acknowledged
/// ([`InsertKeys::last`]), which is what reads may choose from and what "latest" favours.
/// YCSB acknowledges an insert whether it succeeded or not (`finally`), and so does the caller.
#[derive(Debug)]
pub struct InsertKeys {
    next: AtomicU64,
    last: AtomicI64,
    pending: Mutex<BTreeSet<u64>>,
}

impl InsertKeys {
    /// The first key handed out is `start` (the rows already in the table).
    pub fn new(start: u64) -> InsertKeys {
        InsertKeys {
            next: AtomicU64::new(start),
            last: AtomicI64::new(start as i64 - 1),
            pending: Mutex::new(BTreeSet::new()),
        }
    }

    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    pub fn acknowledge(&self, key: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.insert(key);
        let mut last = self.last.load(Ordering::Acquire);
        while pending.remove(&((last + 1) as u64)) {
            last += 1;
        }
        self.last.store(last, Ordering::Release);
    }

    /// `lastValue()`: -1 before any key.
    pub fn last(&self) -> i64 {
        self.last.load(Ordering::Acquire)
    }

    /// Keys handed out so far, counting from `start`.
    #[cfg(test)]
    pub fn handed_out(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }
}

/// `DiscreteGenerator`: chooses an index by its weight.
#[derive(Clone, Debug)]
pub struct OpChooser {
    weights: Vec<f64>,
}

impl OpChooser {
    /// Weights in the order the indexes mean; all positive.
    pub fn new(weights: Vec<f64>) -> OpChooser {
        OpChooser { weights }
    }

    pub fn next(&self, rng: &mut Rng) -> usize {
        self.next_from(rng.double())
    }

    pub fn next_from(&self, u: f64) -> usize {
        let sum: f64 = self.weights.iter().sum();
        let mut val = u;
        for (i, w) in self.weights.iter().enumerate() {
            let pw = w / sum;
            if val < pw {
                return i;
            }
            val -= pw;
        }
        // Rounding can leave a sliver past the last weight.
        self.weights.len() - 1
    }
}

#[cfg(test)]
#[path = "gen_tests.rs"]
mod tests;
