//! sysbench's random distributions (`src/sb_rand.c`, sysbench 1.0.20 and master), drawn from the
//! client's stream ([`crate::Rng`], pgbench's PRNG, in place of sysbench's per-thread
//! xoroshiro128+): the same formulas on `[0, 1)` doubles, the same `uint32_t` truncations, the same
//! parameters and defaults (`--rand-spec-iter=12 --rand-spec-pct=1 --rand-spec-res=75
//! --rand-pareto-h=0.2 --rand-zipfian-exp=0.8`). The default `--rand-type` is `special`, as in
//! Debian's sysbench 1.0.20 (`sysbench --help`; master changed it to `uniform`).

use crate::Rng;

/// `--rand-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl RandType {
    pub fn parse(s: &str) -> Result<RandType, String> {
        Ok(match s {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return Err(format!("Invalid random numbers distribution: {s}.")),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            RandType::Uniform => "uniform",
            RandType::Gaussian => "gaussian",
            RandType::Special => "special",
            RandType::Pareto => "pareto",
            RandType::Zipfian => "zipfian",
        }
    }
}

/// `--rand-type` with its parameters, and the constants `sb_rand_init` precomputes.
#[derive(Clone, Debug)]
pub struct Dist {
    pub kind: RandType,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl Default for Dist {
    fn default() -> Self {
        Dist::new(RandType::Special, 12, 1, 75, 0.2, 0.8).expect("defaults are valid")
    }
}

impl Dist {
    /// sb_rand_init's checks and precomputations.
    pub fn new(
        kind: RandType,
        spec_iter: u32,
        spec_pct: u32,
        spec_res: u32,
        pareto_h: f64,
        zipfian_exp: f64,
    ) -> Result<Dist, String> {
        if spec_iter == 0 {
            return Err("--rand-spec-iter must be at least 1".into());
        }
        if spec_pct > 100 {
            return Err("--rand-spec-pct must be 0..100".into());
        }
        if spec_res >= 100 {
            return Err("--rand-spec-res must be 0..99".into());
        }
        if !(pareto_h > 0.0 && pareto_h < 1.0) {
            return Err("--rand-pareto-h must be in (0, 1)".into());
        }
        if zipfian_exp < 0.0 || !zipfian_exp.is_finite() {
            return Err("--rand-zipfian-exp must be >= 0".into());
        }
        let e = zipfian_exp;
        Ok(Dist {
            kind,
            spec_iter,
            spec_pct,
            spec_res,
            pareto_h,
            zipfian_exp,
            iter_mult: 1.0 / spec_iter as f64,
            pct_mult: spec_pct as f64 / 100.0,
            pct_2_mult: spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - spec_res as f64),
            pareto_power: pareto_h.ln() / (1.0 - pareto_h).ln(),
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_h_integral_x1: h_integral(1.5, e) - 1.0,
        })
    }

    /// `sb_rand_default(a, b)`: the `--rand-type` distribution on `[a, b]`.
    pub fn draw(&self, r: &mut Rng, a: u32, b: u32) -> u32 {
        self.draw_with(&mut || r.double(), a, b)
    }

    /// The same from any source of uniform doubles in `[0, 1)` (the loader's per-row streams).
    pub fn draw_with(&self, r: &mut dyn FnMut() -> f64, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => (a as f64 + r() * ((b - a) as f64 + 1.0)) as u32,
            RandType::Gaussian => self.gaussian(r, a, b),
            RandType::Special => self.special(r, a, b),
            RandType::Pareto => self.pareto(r, a, b),
            RandType::Zipfian => self.zipfian(r, a, b),
        }
    }

    /// sb_rand_gaussian: the mean of `rand_iter` uniforms.
    fn gaussian(&self, r: &mut dyn FnMut() -> f64, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64 + 1.0;
        let mut sum = 0.0;
        for _ in 0..self.spec_iter {
            sum += r() * t;
        }
        a.wrapping_add((sum * self.iter_mult) as u32)
    }

    /// sb_rand_special: `100 - spec_res` % of values gaussian over the range, the other
    /// `spec_res` % uniform over `spec_pct` % of the range around its centre.
    fn special(&self, r: &mut dyn FnMut() -> f64, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64;
        let range_size = t * self.res_mult;
        let rnd = r();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..self.spec_iter {
                sum += r();
            }
            return (a as f64 + sum * t * self.iter_mult) as u32;
        }
        let d = t * self.pct_mult;
        let mut res = rnd * (d + 1.0);
        res += t / 2.0 - t * self.pct_2_mult;
        a.wrapping_add(res as u32)
    }

    /// sb_rand_pareto.
    fn pareto(&self, r: &mut dyn FnMut() -> f64, a: u32, b: u32) -> u32 {
        let n = (b - a) as f64 + 1.0;
        a.wrapping_add((n * r().powf(self.pareto_power)) as u32)
    }

    /// sb_rand_zipfian: rejection-inversion (Hörmann and Derflinger), as sysbench.
    fn zipfian(&self, r: &mut dyn FnMut() -> f64, a: u32, b: u32) -> u32 {
        let n = b - a + 1;
        let e = self.zipfian_exp;
        let h_n = h_integral(n as f64 + 0.5, e);
        loop {
            let u = h_n + r() * (self.zipf_h_integral_x1 - h_n);
            let x = h_integral_inverse(u, e);
            let mut k = (x + 0.5) as u32;
            if k < 1 {
                k = 1;
            } else if k > n {
                k = n;
            }
            if k as f64 - x <= self.zipf_s || u >= h_integral(k as f64 + 0.5, e) - h(k as f64, e) {
                return a + k - 1;
            }
        }
    }
}

/// sb_rand_uniform: `a + double * (b - a + 1)`, truncated.
pub fn uniform(r: &mut Rng, a: u32, b: u32) -> u32 {
    (a as f64 + r.double() * ((b - a) as f64 + 1.0)) as u32
}

fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - e) * log_x) * log_x
}

fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (helper1(t) * x).exp()
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (0.333_333_333_333_333_3 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * 0.333_333_333_333_333_3 * (1.0 + 0.25 * x))
    }
}

/// sysbench's unique sequence (`sb_rand_unique`, preshing's RandomSequence): a permutation of
/// the 32-bit integers, walked from a seeded index. Used by `oltp_insert --auto-inc=off`.
pub fn unique_permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

/// `sb_rand_unique` for index `i` of a sequence seeded with `offset`.
pub fn unique(i: u32, offset: u32) -> u32 {
    unique_permute(unique_permute(i).wrapping_add(offset) ^ 0x5bf0_3635)
}

/// sb_rand_str: `#` becomes a digit (`sb_rand_uniform('0', '9')`), `@` a lowercase letter.
pub fn fill_template(r: &mut Rng, template: &str, out: &mut String) {
    out.clear();
    for c in template.chars() {
        match c {
            '#' => out.push((b'0' + uniform(r, 0, 9) as u8) as char),
            '@' => out.push((b'a' + uniform(r, 0, 25) as u8) as char),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(d: &Dist, n: usize, a: u32, b: u32) -> Vec<u64> {
        let mut r = Rng::from_seed(42);
        let mut h = vec![0u64; (b - a + 1) as usize];
        for _ in 0..n {
            let v = d.draw(&mut r, a, b);
            assert!((a..=b).contains(&v), "{v} outside [{a}, {b}]");
            h[(v - a) as usize] += 1;
        }
        h
    }

    fn with(kind: RandType) -> Dist {
        Dist::new(kind, 12, 1, 75, 0.2, 0.8).unwrap()
    }

    #[test]
    fn uniform_is_flat() {
        let h = hist(&with(RandType::Uniform), 100_000, 1, 10);
        for c in h {
            assert!((9_000..11_000).contains(&c), "{c}");
        }
    }

    #[test]
    fn special_puts_three_quarters_on_one_percent_in_the_middle() {
        // 1..=10000, t = 9999: sysbench reuses the first uniform (>= 0.25 on this branch) for
        // the special part, so the special values are a + [0.25 (d + 1), d + 1) + t/2 - t/200
        // with d = 99.99: 4976..=5050.
        let h = hist(&with(RandType::Special), 200_000, 1, 10_000);
        let centre: u64 = h[4_975..5_050].iter().sum();
        let share = centre as f64 / 200_000.0;
        // 75 % special plus the gaussian's share of that window.
        assert!((0.75..0.80).contains(&share), "{share}");
    }

    #[test]
    fn gaussian_is_centred() {
        let h = hist(&with(RandType::Gaussian), 100_000, 1, 1000);
        let mean: f64 = h
            .iter()
            .enumerate()
            .map(|(i, c)| (i + 1) as f64 * *c as f64)
            .sum::<f64>()
            / 100_000.0;
        assert!((495.0..506.0).contains(&mean), "{mean}");
        // Tails are thin: the mean of 12 uniforms has sd ~ 0.083 of the range.
        assert!(h[..100].iter().sum::<u64>() < 100);
    }

    #[test]
    fn pareto_and_zipfian_favour_the_low_end() {
        let p = hist(&with(RandType::Pareto), 100_000, 1, 1000);
        // h = 0.2: 80 % of draws in the first 20 %.
        let low: u64 = p[..200].iter().sum();
        assert!((78_000..82_000).contains(&low), "{low}");
        let z = hist(&with(RandType::Zipfian), 100_000, 1, 1000);
        assert!(z[0] > z[1] && z[1] > z[9] && z[9] > z[999]);
        // P(1) = 1 / H(1000, 0.8) ~ 0.0644 (generalised harmonic number ~ 15.5).
        let h1000: f64 = (1..=1000).map(|k| (k as f64).powf(-0.8)).sum();
        let p1 = z[0] as f64 / 100_000.0;
        assert!((p1 - 1.0 / h1000).abs() < 0.003, "{p1} vs {}", 1.0 / h1000);
    }

    #[test]
    fn unique_sequence_does_not_repeat() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(seen.insert(unique(i, 12345)));
        }
    }

    #[test]
    fn templates_are_filled_like_sb_rand_str() {
        let mut r = Rng::from_seed(1);
        let mut s = String::new();
        fill_template(&mut r, "###-@@", &mut s);
        assert_eq!(s.len(), 6);
        assert!(s[..3].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(&s[3..4], "-");
        assert!(s[4..].bytes().all(|b| b.is_ascii_lowercase()));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Dist::new(RandType::Special, 0, 1, 75, 0.2, 0.8).is_err());
        assert!(Dist::new(RandType::Special, 12, 1, 100, 0.2, 0.8).is_err());
        assert!(Dist::new(RandType::Pareto, 12, 1, 75, 1.0, 0.8).is_err());
        assert!(Dist::new(RandType::Zipfian, 12, 1, 75, 0.2, -1.0).is_err());
        assert!(RandType::parse("nope").is_err());
    }
}
