//! The statistics behind a comparison verdict: is run B different from run A beyond the noise
//! that two runs of the same thing show, judged from their per-interval samples?
//!
//! Owns two tests over two samples and a seeded random stream; nothing here knows what a sample
//! measures.
//!
//! - [`bootstrap`]: a percentile bootstrap confidence interval (Efron & Tibshirani, "An
//!   Introduction to the Bootstrap", 1993, ch. 13) of the difference `stat(B) - stat(A)` and of
//!   the ratio `stat(B) / stat(A)`, where `stat` is the mean or the median. Per-interval samples
//!   of a benchmark are autocorrelated (a checkpoint or an autovacuum slows several seconds in a
//!   row), which makes the plain bootstrap's intervals too narrow; so each series is resampled in
//!   blocks, with the circular block bootstrap (Politis & Romano, "A circular block-resampling
//!   procedure for stationary data", 1992), blocks of `round(n^(1/3))` intervals, the order
//!   Hall, Horowitz & Jing ("On blocking rules for the bootstrap with dependent data",
//!   Biometrika 1995) show to be right for variance and interval estimates.
//! - [`mann_whitney_p`]: the two-sided p-value of the Mann-Whitney U rank test (Mann & Whitney
//!   1947), normal approximation with tie correction and continuity correction. It assumes
//!   independent samples, which per-interval samples are not quite, so it is used only as a
//!   second opinion next to the bootstrap, never alone.
//!
//! The intervals are widened for small samples (expanded percentile interval, see
//! [`bootstrap`]): a run of 8 seconds holds 7 usable intervals.
//!
//! Deterministic: the random stream is SplitMix64 (Steele, Lea & Flood, "Fast splittable
//! pseudorandom number generators", OOPSLA 2014) from a caller-given seed, so the same files and
//! seed always give the same intervals and the same verdicts.

/// The statistic compared between the two samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// For rates (tps, commits/s, active sessions): the mean of per-interval rates is the rate
    /// over the run, and quiet intervals count.
    Mean,
    /// For per-interval latency percentiles: robust to the odd stalled interval.
    Median,
}

impl Statistic {
    pub fn of(self, xs: &[f64]) -> f64 {
        match self {
            Statistic::Mean => mean(xs),
            Statistic::Median => median(xs),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Median => "median",
        }
    }
}

pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// SplitMix64: tiny, fast, and good enough for resampling indexes.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by Lemire's multiply-shift (bias below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Block length of the circular block bootstrap for `n` samples: `round(n^(1/3))`, at least 1.
pub fn block_len(n: usize) -> usize {
    ((n as f64).cbrt().round() as usize).max(1)
}

/// One circular-block resample of `xs` into `out` (same length).
fn resample(xs: &[f64], rng: &mut Rng, out: &mut Vec<f64>) {
    let n = xs.len();
    let l = block_len(n);
    out.clear();
    while out.len() < n {
        let start = rng.below(n);
        for k in 0..l {
            if out.len() == n {
                break;
            }
            out.push(xs[(start + k) % n]);
        }
    }
}

/// The result of [`bootstrap`].
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub statistic: Statistic,
    /// The statistic of each sample.
    pub a: f64,
    pub b: f64,
    pub n_a: usize,
    pub n_b: usize,
    /// Two-sided confidence interval of `b - a`.
    pub diff_ci: (f64, f64),
    /// `b / a`, when `a > 0`.
    pub ratio: Option<f64>,
    /// Confidence interval of `b / a`, when every resample of A had a positive statistic.
    pub ratio_ci: Option<(f64, f64)>,
    /// Mann-Whitney U two-sided p-value.
    pub p_value: f64,
}

impl Estimate {
    /// The interval of the difference excludes zero.
    pub fn ci_excludes_zero(&self) -> bool {
        self.diff_ci.0 > 0.0 || self.diff_ci.1 < 0.0
    }
}

/// The `q` quantile (0..1) of sorted `v`, by linear interpolation.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// Bootstrap `confidence` (e.g. 0.95) intervals of `stat(b) - stat(a)` and `stat(b) / stat(a)`
/// from `resamples` circular-block resamples of each sample, seeded. Both samples must be
/// non-empty.
pub fn bootstrap(
    a: &[f64],
    b: &[f64],
    statistic: Statistic,
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Estimate {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "bootstrap of an empty sample"
    );
    let mut rng = Rng::new(seed);
    let (sa, sb) = (statistic.of(a), statistic.of(b));
    let mut diffs = Vec::with_capacity(resamples);
    let mut ratios = Vec::with_capacity(resamples);
    let mut all_positive = true;
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    for _ in 0..resamples {
        resample(a, &mut rng, &mut ra);
        resample(b, &mut rng, &mut rb);
        let (x, y) = (statistic.of(&ra), statistic.of(&rb));
        diffs.push(y - x);
        if x > 0.0 {
            ratios.push(y / x);
        } else {
            all_positive = false;
        }
    }
    diffs.sort_by(f64::total_cmp);
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    // Small-sample correction: percentile intervals are too narrow for few samples (the
    // resampled spread is the plug-in, n-divided one). Widen them about the point estimate by
    // sqrt(m / (m - 1)), m the blocks per resample, as Hesterberg's expanded percentile
    // interval does with n ("What teachers should know about the bootstrap", 2015).
    let m = a
        .len()
        .min(b.len())
        .div_ceil(block_len(a.len().min(b.len())))
        .max(2) as f64;
    let widen = (m / (m - 1.0)).sqrt();
    let expand =
        |point: f64, lo: f64, hi: f64| (point - (point - lo) * widen, point + (hi - point) * widen);
    let diff_ci = expand(
        sb - sa,
        quantile(&diffs, tail),
        quantile(&diffs, 1.0 - tail),
    );
    Estimate {
        statistic,
        a: sa,
        b: sb,
        n_a: a.len(),
        n_b: b.len(),
        diff_ci,
        ratio: (sa > 0.0).then(|| sb / sa),
        ratio_ci: (all_positive && sa > 0.0).then(|| {
            // In log space, so the interval of a ratio stays positive.
            let (lo, hi) = expand(
                (sb / sa).ln(),
                quantile(&ratios, tail).max(f64::MIN_POSITIVE).ln(),
                quantile(&ratios, 1.0 - tail).max(f64::MIN_POSITIVE).ln(),
            );
            (lo.exp(), hi.exp())
        }),
        p_value: mann_whitney_p(a, b),
    }
}

/// Two-sided p-value of the Mann-Whitney U test that `a` and `b` come from the same
/// distribution: normal approximation, average ranks for ties with the tie-corrected variance,
/// continuity correction. 1.0 when there is nothing to rank apart (all values equal).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|x| (*x, true))
        .chain(b.iter().map(|x| (*x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let avg_rank = (i + j) as f64 / 2.0 + 1.0;
        for x in &all[i..=j] {
            if x.1 {
                rank_sum_a += avg_rank;
            }
        }
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mu = n1 * n2 / 2.0;
    let nn = n1 + n2;
    let var = n1 * n2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mu).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

/// Upper tail of the standard normal, `P(Z > z)`, via erfc (W. J. Cody's rational
/// approximation as in Numerical Recipes' `erfcc`, fractional error below 1.2e-7).
pub(super) fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noisy series around `level`: deterministic pseudo-normal noise (sum of uniforms) with
    /// a relative spread of `spread`.
    pub fn series(level: f64, spread: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|_| {
                let u: f64 = (0..4).map(|_| r.next_u64() as f64 / u64::MAX as f64).sum();
                level * (1.0 + spread * (u - 2.0))
            })
            .collect()
    }

    #[test]
    fn median_and_mean() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let a: Vec<u64> = (0..5).map(|_| Rng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut r = Rng::new(1);
        let mut seen = [0usize; 5];
        for _ in 0..5000 {
            seen[r.below(5)] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn block_lengths_grow_as_the_cube_root() {
        assert_eq!(block_len(1), 1);
        assert_eq!(block_len(7), 2);
        assert_eq!(block_len(60), 4);
        assert_eq!(block_len(1000), 10);
    }

    #[test]
    fn identical_distributions_give_an_interval_around_zero() {
        let mut excluded = 0;
        for seed in 0..40 {
            let a = series(1000.0, 0.1, 20, 100 + seed);
            let b = series(1000.0, 0.1, 20, 200 + seed);
            let e = bootstrap(&a, &b, Statistic::Mean, 2000, 0.95, seed);
            let (lo, hi) = e.ratio_ci.unwrap();
            if lo > 1.0 || hi < 1.0 {
                excluded += 1;
            }
            assert!(lo > 0.85 && hi < 1.15, "{e:?}");
        }
        // A 95% interval misses the truth about 1 time in 20 (a little more: the block
        // bootstrap's intervals are slightly narrow for small n).
        assert!(excluded <= 5, "{excluded} of 40");
    }

    #[test]
    fn a_doubling_is_found_with_its_direction() {
        let a = series(600.0, 0.1, 10, 1);
        let b = series(1200.0, 0.1, 10, 2);
        let e = bootstrap(&a, &b, Statistic::Median, 2000, 0.95, 42);
        assert!(e.ci_excludes_zero() && e.diff_ci.0 > 0.0, "{e:?}");
        let (lo, hi) = e.ratio_ci.unwrap();
        assert!(lo > 1.6 && hi < 2.5 && lo <= e.ratio.unwrap() && e.ratio.unwrap() <= hi);
        assert!(e.p_value < 0.001, "{}", e.p_value);
        // And the other way round.
        let e = bootstrap(&b, &a, Statistic::Median, 2000, 0.95, 42);
        assert!(e.diff_ci.1 < 0.0 && e.ratio_ci.unwrap().1 < 0.65);
    }

    #[test]
    fn the_same_seed_gives_the_same_interval() {
        let a = series(100.0, 0.2, 15, 3);
        let b = series(105.0, 0.2, 15, 4);
        let x = bootstrap(&a, &b, Statistic::Mean, 1000, 0.95, 9);
        assert_eq!(x, bootstrap(&a, &b, Statistic::Mean, 1000, 0.95, 9));
        assert_ne!(
            x.diff_ci,
            bootstrap(&a, &b, Statistic::Mean, 1000, 0.95, 10).diff_ci
        );
    }

    #[test]
    fn mann_whitney_known_values() {
        // Complete separation of 5 and 5: U = 0; the normal approximation with continuity
        // correction gives z = (12.5 - 0.5) / sqrt(22.9167) = 2.5067, p = 0.0122.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p - 0.0122).abs() < 0.0005, "{p}");
        assert_eq!(mann_whitney_p(&[1.0, 1.0], &[1.0, 1.0]), 1.0);
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
        assert!(p > 0.5, "{p}");
        assert!((normal_sf(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_sf(-1.0) - 0.841_344_7).abs() < 1e-6);
    }
}
