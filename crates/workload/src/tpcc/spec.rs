//! The numbers and functions of the TPC-C specification (revision 5.11) that both the loader
//! (`load::tpcc`) and the transactions use: cardinalities (clause 1.2, 4.3.1), NURand and its
//! constants (2.1.6), customer last names (4.3.2.3), random strings (4.3.2.2), and the run-time
//! constant C for C_LAST chosen against the load-time one (2.1.6.1).
//!
//! Randomness comes through [`Uniform`], so the loader's per-row streams and the clients'
//! [`Rng`](crate::Rng) draw the same way.

use crate::Rng;

/// Districts per warehouse (clause 1.2, 4.3.1).
pub const DISTRICTS: u32 = 10;
/// Customers per district.
pub const CUSTOMERS: u32 = 3_000;
/// Items (the ITEM table, not per warehouse).
pub const ITEMS: u32 = 100_000;
/// Orders per district at load; the last [`NEW_ORDERS`] of them are undelivered (4.3.3.1).
pub const ORDERS: u32 = 3_000;
/// Undelivered orders per district at load: o_id 2101..=3000.
pub const NEW_ORDERS: u32 = 900;
/// The first undelivered order id at load.
pub const FIRST_NEW_ORDER: u32 = ORDERS - NEW_ORDERS + 1;

/// A source of uniform integers, inclusive at both ends (clause 2.1.4's "random within
/// [x .. y]").
pub trait Uniform {
    fn uniform(&mut self, lo: i64, hi: i64) -> i64;
}

impl Uniform for Rng {
    fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.range(lo, hi)
    }
}

/// NURand's A for each of its three uses (clause 2.1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NuA {
    /// C_LAST: A = 255, range [0 .. 999].
    Last = 255,
    /// C_ID: A = 1023, range [1 .. 3000].
    CustomerId = 1023,
    /// OL_I_ID: A = 8191, range [1 .. 100000].
    ItemId = 8191,
}

/// The three run-time constants C of NURand (clause 2.1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NuC {
    pub last: i64,
    pub customer_id: i64,
    pub item_id: i64,
}

impl NuC {
    /// Constants for loading: each random within [0 .. A].
    pub fn for_load(u: &mut impl Uniform) -> NuC {
        NuC {
            last: u.uniform(0, 255),
            customer_id: u.uniform(0, 1023),
            item_id: u.uniform(0, 8191),
        }
    }

    /// Constants for a measured run against data loaded with `load` (clause 2.1.6.1): C_ID and
    /// OL_I_ID may keep the load's values; C_LAST must differ so that
    /// `|C_run - C_load|` is in [65 .. 119] and is neither 96 nor 112.
    pub fn for_run(load: &NuC, u: &mut impl Uniform) -> NuC {
        loop {
            let c = u.uniform(0, 255);
            if valid_delta(c, load.last) {
                return NuC { last: c, ..*load };
            }
        }
    }
}

/// Clause 2.1.6.1's rule for C_LAST at run time against C_LAST at load.
pub fn valid_delta(run: i64, load: i64) -> bool {
    let d = (run - load).abs();
    (65..=119).contains(&d) && d != 96 && d != 112
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x (clause 2.1.6).
pub fn nurand(u: &mut impl Uniform, a: NuA, c: &NuC, x: i64, y: i64) -> i64 {
    let a_val = a as i64;
    let cc = match a {
        NuA::Last => c.last,
        NuA::CustomerId => c.customer_id,
        NuA::ItemId => c.item_id,
    };
    (((u.uniform(0, a_val) | u.uniform(x, y)) + cc) % (y - x + 1)) + x
}

/// A customer id, NURand(1023, 1, 3000) (clause 2.4.1.2, 2.5.1.2, 2.6.1.2).
pub fn customer_id(u: &mut impl Uniform, c: &NuC) -> i64 {
    nurand(u, NuA::CustomerId, c, 1, CUSTOMERS as i64)
}

/// An item id, NURand(8191, 1, 100000) (clause 2.4.1.5).
pub fn item_id(u: &mut impl Uniform, c: &NuC) -> i64 {
    nurand(u, NuA::ItemId, c, 1, ITEMS as i64)
}

/// The number of a last name for a transaction's input, NURand(255, 0, 999) (2.5.1.2).
pub fn last_name_number(u: &mut impl Uniform, c: &NuC) -> i64 {
    nurand(u, NuA::Last, c, 0, 999)
}

/// Clause 4.3.2.3's syllables.
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` in [0 .. 999]: its three digits' syllables (clause 4.3.2.3):
/// 371 is "PRICALLYOUGHT".
pub fn last_name(n: u32, out: &mut String) {
    out.clear();
    out.push_str(SYLLABLES[(n / 100 % 10) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}

/// Append a random a-string of length [lo .. hi] (clause 4.3.2.2: "random alphanumeric"; here
/// letters and digits, no characters that COPY text or SQL would need to escape).
pub fn astring(u: &mut impl Uniform, lo: i64, hi: i64, out: &mut impl Extend<u8>) {
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let n = u.uniform(lo, hi);
    out.extend((0..n).map(|_| ALNUM[u.uniform(0, ALNUM.len() as i64 - 1) as usize]));
}

/// Append a random n-string (digits) of length [lo .. hi] (clause 4.3.2.2).
pub fn nstring(u: &mut impl Uniform, lo: i64, hi: i64, out: &mut impl Extend<u8>) {
    let n = u.uniform(lo, hi);
    out.extend((0..n).map(|_| b'0' + u.uniform(0, 9) as u8));
}

/// The 90th percentile response-time limit of each transaction type, in seconds (clause
/// 5.2.5.7), in the order New-Order, Payment, Order-Status, Delivery, Stock-Level.
pub const P90_LIMIT_S: [f64; 5] = [5.0, 5.0, 5.0, 5.0, 20.0];
/// Minimum keying times in seconds (clause 5.2.5.7), same order.
pub const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
/// Minimum mean think times in seconds (clause 5.2.5.7), same order.
pub const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllable_table() {
        let mut s = String::new();
        last_name(371, &mut s);
        assert_eq!(s, "PRICALLYOUGHT");
        last_name(0, &mut s);
        assert_eq!(s, "BARBARBAR");
        last_name(999, &mut s);
        assert_eq!(s, "EINGEINGEING");
    }

    #[test]
    fn run_constant_keeps_the_delta_rule() {
        let mut r = Rng::from_seed(7);
        for _ in 0..1000 {
            let load = NuC::for_load(&mut r);
            let run = NuC::for_run(&load, &mut r);
            assert!(valid_delta(run.last, load.last), "{run:?} {load:?}");
            assert_eq!(run.customer_id, load.customer_id);
            assert!((0..=255).contains(&run.last));
        }
        assert!(!valid_delta(96, 0) && !valid_delta(112, 0) && !valid_delta(64, 0));
        assert!(valid_delta(0, 65) && valid_delta(119, 0) && !valid_delta(120, 0));
    }

    /// NURand stays in range and is non-uniform the way clause 2.1.6 makes it: with A = 1023 over
    /// [1 .. 3000], ids whose low bits are set are drawn far more often than uniform.
    #[test]
    fn nurand_is_in_range_and_skewed() {
        let mut r = Rng::from_seed(42);
        let c = NuC {
            last: 0,
            customer_id: 0,
            item_id: 0,
        };
        let mut hits = vec![0u32; 3001];
        let n = 300_000;
        for _ in 0..n {
            let id = customer_id(&mut r, &c);
            assert!((1..=3000).contains(&id));
            hits[id as usize] += 1;
        }
        // Uniform would give 100 per id. Exactly (all pairs of clause 2.1.6's two draws
        // counted): id 1024 ((x | y) = 1023, all ten low bits set) comes 57.7 times as often as
        // uniform, id 1025 ((x | y) = 1024) 0.001 times, and the 300 most frequent ids get 61%
        // of the draws.
        let uniform = n as f64 / 3000.0;
        assert!(f64::from(hits[1024]) > 40.0 * uniform, "{}", hits[1024]);
        assert!(f64::from(hits[1025]) < 0.05 * uniform, "{}", hits[1025]);
        let mut sorted = hits.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = sorted[..300].iter().sum();
        assert!((0.58..0.64).contains(&(f64::from(top) / n as f64)), "{top}");
        for _ in 0..10_000 {
            let i = item_id(&mut r, &c);
            assert!((1..=100_000).contains(&i));
            let l = last_name_number(&mut r, &c);
            assert!((0..=999).contains(&l));
        }
    }
}
