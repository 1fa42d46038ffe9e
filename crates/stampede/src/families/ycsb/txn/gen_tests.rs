//! The generators against YCSB's published algorithm, computed here independently from the
//! formulas (Gray et al. 1994 as YCSB 0.17's `ZipfianGenerator` applies them, YCSB's constants)
//! and fed with the same uniform draws.

use super::*;

/// FNV-1a 64 as its specification writes it (offset basis, prime, xor then multiply per
/// byte), then Java's `Math.abs`.
fn fnv_reference(v: u64) -> i64 {
    let mut h: u128 = 0xcbf29ce484222325;
    for i in 0..8 {
        h ^= u128::from((v >> (8 * i)) & 0xff);
        h = (h * 1_099_511_628_211) % (1u128 << 64);
    }
    (h as u64 as i64).wrapping_abs()
}

/// Gray et al.'s draw for `n` items with zeta(n) = `zetan`, the `eta` of `items0` items and
/// the uniform `u`.
fn gray(n: u64, items0: u64, zetan: f64, theta: f64, u: f64) -> u64 {
    let zeta2: f64 = 1.0 + 1.0 / 2f64.powf(theta);
    let alpha = 1.0 / (1.0 - theta);
    let eta = (1.0 - (2.0 / items0 as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    if u * zetan < 1.0 {
        0
    } else if u * zetan < 1.0 + 0.5f64.powf(theta) {
        1
    } else {
        (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
    }
}

fn plain_zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

#[test]
fn keys_are_ycsb_s_hashed_names() {
    // user6284781860667377211 is the first key every YCSB load of a hashed usertable writes.
    let mut s = String::new();
    key_name(0, true, 1, &mut s);
    assert_eq!(s, "user6284781860667377211");
    key_name(1, true, 1, &mut s);
    assert_eq!(s, "user8517097267634966620");
    key_name(42, false, 1, &mut s);
    assert_eq!(s, "user42");
    key_name(42, false, 5, &mut s);
    assert_eq!(s, "user00042");
    for v in [0u64, 1, 2, 999, 12_345, 1 << 40, u64::MAX >> 1] {
        assert_eq!(fnvhash64(v as i64), fnv_reference(v), "{v}");
    }
}

#[test]
fn zipfian_draws_follow_gray_et_al() {
    let theta = ZIPFIAN_CONSTANT;
    for n in [1_000u64, 100_000] {
        let zetan = plain_zeta(n, theta);
        let mut z = Zipfian::new(0, n - 1, theta);
        let mut rng = Rng::from_seed(42);
        let mut same = rng.clone();
        let mut zeros = 0;
        for _ in 0..20_000 {
            let got = z.next(&mut rng);
            let want = gray(n, n, zetan, theta, same.double());
            assert_eq!(got, want, "n {n}");
            assert!(got < n);
            zeros += u32::from(got == 0);
        }
        // Item 0 comes up with probability 1/zeta(n).
        let p = f64::from(zeros) / 20_000.0;
        assert!(
            (p - 1.0 / zetan).abs() < 0.01,
            "n {n}: {p} vs {}",
            1.0 / zetan
        );
    }
}

#[test]
fn scrambled_zipfian_hashes_a_zipfian_over_ten_billion_items() {
    let items = 1_000u64;
    let mut z = ScrambledZipfian::new(0, items - 1, ZIPFIAN_CONSTANT);
    let mut rng = Rng::from_seed(7);
    let mut same = rng.clone();
    for _ in 0..20_000 {
        let u = same.double();
        let raw = gray(
            SCRAMBLED_ITEMS + 1,
            SCRAMBLED_ITEMS + 1,
            26.46902820178302,
            0.99,
            u,
        );
        let want = (fnv_reference(raw) % items as i64) as u64;
        assert_eq!(z.next(&mut rng), want);
    }
}

#[test]
fn latest_follows_the_highest_acknowledged_key() {
    // Made when 1,000 keys were loaded (last 999); then inserts raise the maximum: zeta grows
    // with it, eta keeps the constructed item count (YCSB's behaviour).
    let mut g = SkewedLatest::new(999, ZIPFIAN_CONSTANT);
    let mut rng = Rng::from_seed(3);
    let mut same = rng.clone();
    for max in (999u64..1_200).step_by(7) {
        for _ in 0..50 {
            let got = g.next(max, &mut rng);
            let u = same.double();
            let want = max - gray(max, 999, plain_zeta(max, 0.99), 0.99, u);
            assert_eq!(got, want, "max {max}");
            assert!((1..=max).contains(&got));
        }
    }
}

#[test]
fn zeta_beyond_a_million_terms_matches_the_published_value() {
    // YCSB's ScrambledZipfianGenerator.ZETAN = zeta(10^10, 0.99), summed term by term.
    let z = zeta(SCRAMBLED_ITEMS, 0.99);
    assert!((z - SCRAMBLED_ZETAN).abs() < 1e-8, "{z}");
    // Against the plain sum where that is affordable.
    for (n, theta) in [(3_000_000u64, 0.99), (2_500_000, 0.5), (1_500_000, 1.2)] {
        let (a, b) = (zeta(n, theta), plain_zeta(n, theta));
        assert!((a - b).abs() / b < 1e-10, "{n} {theta}: {a} vs {b}");
    }
}

#[test]
fn insert_keys_are_acknowledged_in_order() {
    let k = InsertKeys::new(100);
    assert_eq!(k.last(), 99);
    let (a, b, c) = (k.next(), k.next(), k.next());
    assert_eq!((a, b, c), (100, 101, 102));
    k.acknowledge(c);
    assert_eq!(k.last(), 99, "102 waits for 100 and 101");
    k.acknowledge(a);
    assert_eq!(k.last(), 100);
    k.acknowledge(b);
    assert_eq!(k.last(), 102);
    assert_eq!(k.handed_out(), 103);
}

#[test]
fn the_chooser_walks_normalised_weights() {
    let c = OpChooser::new(vec![0.95, 0.05]);
    assert_eq!(c.next_from(0.0), 0);
    assert_eq!(c.next_from(0.9499), 0);
    assert_eq!(c.next_from(0.9501), 1);
    assert_eq!(c.next_from(0.999_999_999), 1);
    // Weights need not sum to one.
    let c = OpChooser::new(vec![1.0, 3.0]);
    assert_eq!(c.next_from(0.2), 0);
    assert_eq!(c.next_from(0.3), 1);
}
