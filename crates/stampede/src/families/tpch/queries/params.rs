//! The substitution parameters of the 22 queries: the values qgen substitutes into each
//! template, drawn as each query's clause 2.4.N.3 ("Substitution Parameters") says, and the
//! validation values of its clause 2.4.N.4 ("Query Validation"). TPC-H v3.0.1.
//!
//! Owns: the [`Params`] of each query, the value ranges and date rules. Must not own: the word
//! lists drawn from (`words`), the SQL text (`sql`), the random stream itself (`rng`), nor
//! anything about a run.
//!
//! "Randomly selected" is read as uniform over the list or range, as qgen does (`varsub.c`: the
//! nation list qgen draws from, `nations2`, weighs every nation alike).

use std::fmt;

use super::rng::Rng;
use super::words::{
    COLORS, CONTAINER_SYLLABLE_1, CONTAINER_SYLLABLE_2, MODES, NATIONS, Q13_WORD_1, Q13_WORD_2,
    REGIONS, SEGMENTS, TYPE_SYLLABLE_1, TYPE_SYLLABLE_2, TYPE_SYLLABLE_3,
};

/// A calendar date, printed `YYYY-MM-DD` (the form both dialects read after `date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    pub year: u32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    const fn new(year: u32, month: u32, day: u32) -> Date {
        Date { year, month, day }
    }

    /// The first day of the month `months` after January 1993: the spec's "first day of a
    /// randomly selected month" ranges all count from there.
    fn month_from_1993(months: u32) -> Date {
        Date::new(1993 + months / 12, months % 12 + 1, 1)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// `Brand#MN`, M and N each in [1..5] (clause 2.4.16.3 and 4.2.2.13's P_BRAND).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Brand(pub u32, pub u32);

impl fmt::Display for Brand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Brand#{}{}", self.0, self.1)
    }
}

/// One query's substitution parameters, named as in its clause 2.4.N.3.
#[derive(Debug, Clone, PartialEq)]
pub enum Params {
    /// 2.4.1.3: DELTA in [60..120] days.
    Q1 { delta_days: u32 },
    /// 2.4.2.3: SIZE in [1..50]; TYPE a Types syllable 3; REGION of clause 4.2.3.
    Q2 {
        size: u32,
        type_syllable: &'static str,
        region: &'static str,
    },
    /// 2.4.3.3: SEGMENT of Segments; DATE a day in [1995-03-01..1995-03-31].
    Q3 { segment: &'static str, date: Date },
    /// 2.4.4.3: DATE the first day of a month in [1993-01..1997-10].
    Q4 { date: Date },
    /// 2.4.5.3: REGION; DATE January 1st of a year in [1993..1997].
    Q5 { region: &'static str, date: Date },
    /// 2.4.6.3: DATE January 1st of [1993..1997]; DISCOUNT in [0.02..0.09] (hundredths
    /// here); QUANTITY in [24..25].
    Q6 {
        date: Date,
        discount_hundredths: u32,
        quantity: u32,
    },
    /// 2.4.7.3: two different nations.
    Q7 {
        nation1: &'static str,
        nation2: &'static str,
    },
    /// 2.4.8.3: NATION; REGION is that nation's region; TYPE a full (3-syllable) type.
    Q8 {
        nation: &'static str,
        region: &'static str,
        part_type: String,
    },
    /// 2.4.9.3: COLOR.
    Q9 { color: &'static str },
    /// 2.4.10.3: DATE the first day of a month in [1993-02..1995-01].
    Q10 { date: Date },
    /// 2.4.11.3: NATION; FRACTION = 0.0001 / SF.
    Q11 { nation: &'static str, fraction: f64 },
    /// 2.4.12.3: two different modes; DATE January 1st of [1993..1997].
    Q12 {
        mode1: &'static str,
        mode2: &'static str,
        date: Date,
    },
    /// 2.4.13.3: WORD1, WORD2.
    Q13 {
        word1: &'static str,
        word2: &'static str,
    },
    /// 2.4.14.3: DATE the first day of a month in [1993-01..1997-12].
    Q14 { date: Date },
    /// 2.4.15.3: DATE the first day of a month in [1993-01..1997-10].
    Q15 { date: Date },
    /// 2.4.16.3: BRAND; TYPE the first two syllables of a type; SIZE1..8 different, [1..50].
    Q16 {
        brand: Brand,
        type_prefix: String,
        sizes: [u32; 8],
    },
    /// 2.4.17.3: BRAND; CONTAINER a 2-syllable container.
    Q17 { brand: Brand, container: String },
    /// 2.4.18.3: QUANTITY in [312..315].
    Q18 { quantity: u32 },
    /// 2.4.19.3: BRAND1..3; QUANTITY1 in [1..10], QUANTITY2 in [10..20], QUANTITY3 in [20..30].
    Q19 {
        brands: [Brand; 3],
        quantities: [u32; 3],
    },
    /// 2.4.20.3: COLOR; DATE January 1st of [1993..1997]; NATION.
    Q20 {
        color: &'static str,
        date: Date,
        nation: &'static str,
    },
    /// 2.4.21.3: NATION.
    Q21 { nation: &'static str },
    /// 2.4.22.3: I1..I7, different country codes of clause 4.2.2.9 ([10..34]).
    Q22 { codes: [u32; 7] },
}

impl Params {
    /// The query (1..=22) these parameters belong to.
    pub fn query(&self) -> u8 {
        match self {
            Params::Q1 { .. } => 1,
            Params::Q2 { .. } => 2,
            Params::Q3 { .. } => 3,
            Params::Q4 { .. } => 4,
            Params::Q5 { .. } => 5,
            Params::Q6 { .. } => 6,
            Params::Q7 { .. } => 7,
            Params::Q8 { .. } => 8,
            Params::Q9 { .. } => 9,
            Params::Q10 { .. } => 10,
            Params::Q11 { .. } => 11,
            Params::Q12 { .. } => 12,
            Params::Q13 { .. } => 13,
            Params::Q14 { .. } => 14,
            Params::Q15 { .. } => 15,
            Params::Q16 { .. } => 16,
            Params::Q17 { .. } => 17,
            Params::Q18 { .. } => 18,
            Params::Q19 { .. } => 19,
            Params::Q20 { .. } => 20,
            Params::Q21 { .. } => 21,
            Params::Q22 { .. } => 22,
        }
    }

    /// The values in the order of the query's clause 2.4.N.3 (qgen's `-l` parameter log
    /// order), as they appear in the SQL: for a report or a log line.
    pub fn values(&self) -> Vec<String> {
        fn s(v: &impl ToString) -> String {
            v.to_string()
        }
        match self {
            Params::Q1 { delta_days } => vec![s(delta_days)],
            Params::Q2 {
                size,
                type_syllable,
                region,
            } => vec![s(size), s(type_syllable), s(region)],
            Params::Q3 { segment, date } => vec![s(segment), s(date)],
            Params::Q4 { date } | Params::Q10 { date } | Params::Q14 { date } => vec![s(date)],
            Params::Q15 { date } => vec![s(date)],
            Params::Q5 { region, date } => vec![s(region), s(date)],
            Params::Q6 {
                date,
                discount_hundredths,
                quantity,
            } => {
                vec![s(date), discount(*discount_hundredths), s(quantity)]
            }
            Params::Q7 { nation1, nation2 } => vec![s(nation1), s(nation2)],
            Params::Q8 {
                nation,
                region,
                part_type,
            } => vec![s(nation), s(region), s(part_type)],
            Params::Q9 { color } => vec![s(color)],
            Params::Q11 { nation, fraction } => vec![s(nation), fraction_text(*fraction)],
            Params::Q12 { mode1, mode2, date } => vec![s(mode1), s(mode2), s(date)],
            Params::Q13 { word1, word2 } => vec![s(word1), s(word2)],
            Params::Q16 {
                brand,
                type_prefix,
                sizes,
            } => {
                let mut v = vec![s(brand), s(type_prefix)];
                v.extend(sizes.iter().map(s));
                v
            }
            Params::Q17 { brand, container } => vec![s(brand), s(container)],
            Params::Q18 { quantity } => vec![s(quantity)],
            Params::Q19 { brands, quantities } => brands
                .iter()
                .map(s)
                .chain(quantities.iter().map(s))
                .collect(),
            Params::Q20 {
                color,
                date,
                nation,
            } => vec![s(color), s(date), s(nation)],
            Params::Q21 { nation } => vec![s(nation)],
            Params::Q22 { codes } => codes.iter().map(s).collect(),
        }
    }
}

/// Q6's DISCOUNT as the SQL reads it: 6 hundredths is `0.06`.
pub(super) fn discount(hundredths: u32) -> String {
    format!("0.{hundredths:02}")
}

/// Q11's FRACTION as qgen prints it (`%11.10f`): ten decimals, so 0.0001 / 300 is still
/// non-zero (0.0000003333).
pub(super) fn fraction_text(f: f64) -> String {
    format!("{f:.10}")
}

/// Clause 2.4.11.3: FRACTION = 0.0001 / SF.
fn q11_fraction(scale: f64) -> f64 {
    0.0001 / scale
}

fn check_query(q: u8) {
    assert!((1..=22).contains(&q), "TPC-H has queries 1 to 22, not {q}");
}

fn brand(rng: &mut Rng) -> Brand {
    Brand(rng.range(1, 5), rng.range(1, 5))
}

fn nation(rng: &mut Rng) -> &'static str {
    NATIONS[rng.range(0, 24) as usize].0
}

fn two_different(rng: &mut Rng, list: &[&'static str]) -> (&'static str, &'static str) {
    let a = rng.pick(list);
    loop {
        let b = rng.pick(list);
        if b != a {
            return (a, b);
        }
    }
}

fn january_first(rng: &mut Rng) -> Date {
    Date::new(rng.range(1993, 1997), 1, 1)
}

/// Query `q`'s substitution parameters, drawn from `rng` by the rules of clause 2.4.`q`.3, for
/// a database of scale factor `scale` (only Q11 depends on it). Panics unless `q` is 1..=22.
pub fn params(q: u8, scale: f64, rng: &mut Rng) -> Params {
    check_query(q);
    match q {
        1 => Params::Q1 {
            delta_days: rng.range(60, 120),
        },
        2 => Params::Q2 {
            size: rng.range(1, 50),
            type_syllable: rng.pick(&TYPE_SYLLABLE_3),
            region: rng.pick(&REGIONS),
        },
        3 => Params::Q3 {
            segment: rng.pick(&SEGMENTS),
            date: Date::new(1995, 3, rng.range(1, 31)),
        },
        // 0..=57 months after 1993-01: 1993-01 to 1997-10.
        4 => Params::Q4 {
            date: Date::month_from_1993(rng.range(0, 57)),
        },
        5 => Params::Q5 {
            region: rng.pick(&REGIONS),
            date: january_first(rng),
        },
        6 => Params::Q6 {
            date: january_first(rng),
            discount_hundredths: rng.range(2, 9),
            quantity: rng.range(24, 25),
        },
        7 => {
            let names: Vec<&'static str> = NATIONS.iter().map(|n| n.0).collect();
            let (nation1, nation2) = two_different(rng, &names);
            Params::Q7 { nation1, nation2 }
        }
        8 => {
            let (nation, region) = NATIONS[rng.range(0, 24) as usize];
            let part_type = format!(
                "{} {} {}",
                rng.pick(&TYPE_SYLLABLE_1),
                rng.pick(&TYPE_SYLLABLE_2),
                rng.pick(&TYPE_SYLLABLE_3)
            );
            Params::Q8 {
                nation,
                region: REGIONS[region],
                part_type,
            }
        }
        9 => Params::Q9 {
            color: rng.pick(&COLORS),
        },
        // 1..=24 months after 1993-01: 1993-02 to 1995-01.
        10 => Params::Q10 {
            date: Date::month_from_1993(rng.range(1, 24)),
        },
        11 => Params::Q11 {
            nation: nation(rng),
            fraction: q11_fraction(scale),
        },
        12 => {
            let (mode1, mode2) = two_different(rng, &MODES);
            Params::Q12 {
                mode1,
                mode2,
                date: january_first(rng),
            }
        }
        13 => Params::Q13 {
            word1: rng.pick(&Q13_WORD_1),
            word2: rng.pick(&Q13_WORD_2),
        },
        // 0..=59 months: any month of 1993 to 1997.
        14 => Params::Q14 {
            date: Date::month_from_1993(rng.range(0, 59)),
        },
        15 => Params::Q15 {
            date: Date::month_from_1993(rng.range(0, 57)),
        },
        16 => {
            let brand = brand(rng);
            // The first two syllables of a uniformly chosen type: each syllable uniform, as
            // the 150 types are every combination once.
            let type_prefix = format!(
                "{} {}",
                rng.pick(&TYPE_SYLLABLE_1),
                rng.pick(&TYPE_SYLLABLE_2)
            );
            let d = rng.distinct(8, 1, 50);
            let mut sizes = [0; 8];
            sizes.copy_from_slice(&d);
            Params::Q16 {
                brand,
                type_prefix,
                sizes,
            }
        }
        17 => Params::Q17 {
            brand: brand(rng),
            container: format!(
                "{} {}",
                rng.pick(&CONTAINER_SYLLABLE_1),
                rng.pick(&CONTAINER_SYLLABLE_2)
            ),
        },
        18 => Params::Q18 {
            quantity: rng.range(312, 315),
        },
        19 => Params::Q19 {
            brands: [brand(rng), brand(rng), brand(rng)],
            quantities: [rng.range(1, 10), rng.range(10, 20), rng.range(20, 30)],
        },
        20 => Params::Q20 {
            color: rng.pick(&COLORS),
            date: january_first(rng),
            nation: nation(rng),
        },
        21 => Params::Q21 {
            nation: nation(rng),
        },
        _ => {
            // Clause 4.2.2.9: a country code is N_NATIONKEY + 10, so [10..34].
            let d = rng.distinct(7, 10, 34);
            let mut codes = [0; 7];
            codes.copy_from_slice(&d);
            Params::Q22 { codes }
        }
    }
}

/// Query `q`'s validation parameters (clause 2.4.`q`.4, qgen's `-d` defaults), whose answers
/// at scale factor 1 the specification lists. Q11's FRACTION is 0.0001 / `scale`, as qgen's
/// `-d` prints it "to allow -d to work at all scale factors" (`varsub.c`); at scale 1 it is the
/// clause's 0.0001.
pub fn validation(q: u8, scale: f64) -> Params {
    check_query(q);
    let d = Date::new;
    match q {
        1 => Params::Q1 { delta_days: 90 },
        2 => Params::Q2 {
            size: 15,
            type_syllable: "BRASS",
            region: "EUROPE",
        },
        3 => Params::Q3 {
            segment: "BUILDING",
            date: d(1995, 3, 15),
        },
        4 => Params::Q4 {
            date: d(1993, 7, 1),
        },
        5 => Params::Q5 {
            region: "ASIA",
            date: d(1994, 1, 1),
        },
        6 => Params::Q6 {
            date: d(1994, 1, 1),
            discount_hundredths: 6,
            quantity: 24,
        },
        7 => Params::Q7 {
            nation1: "FRANCE",
            nation2: "GERMANY",
        },
        8 => Params::Q8 {
            nation: "BRAZIL",
            region: "AMERICA",
            part_type: "ECONOMY ANODIZED STEEL".to_string(),
        },
        9 => Params::Q9 { color: "green" },
        10 => Params::Q10 {
            date: d(1993, 10, 1),
        },
        11 => Params::Q11 {
            nation: "GERMANY",
            fraction: q11_fraction(scale),
        },
        12 => Params::Q12 {
            mode1: "MAIL",
            mode2: "SHIP",
            date: d(1994, 1, 1),
        },
        13 => Params::Q13 {
            word1: "special",
            word2: "requests",
        },
        14 => Params::Q14 {
            date: d(1995, 9, 1),
        },
        15 => Params::Q15 {
            date: d(1996, 1, 1),
        },
        16 => Params::Q16 {
            brand: Brand(4, 5),
            type_prefix: "MEDIUM POLISHED".to_string(),
            sizes: [49, 14, 23, 45, 19, 3, 36, 9],
        },
        17 => Params::Q17 {
            brand: Brand(2, 3),
            container: "MED BOX".to_string(),
        },
        18 => Params::Q18 { quantity: 300 },
        19 => Params::Q19 {
            brands: [Brand(1, 2), Brand(2, 3), Brand(3, 4)],
            quantities: [1, 10, 20],
        },
        20 => Params::Q20 {
            color: "forest",
            date: d(1994, 1, 1),
            nation: "CANADA",
        },
        21 => Params::Q21 {
            nation: "SAUDI ARABIA",
        },
        _ => Params::Q22 {
            codes: [13, 31, 23, 29, 30, 18, 17],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every query's parameters, drawn `n` times from one stream.
    fn draws(q: u8, n: usize) -> Vec<Params> {
        let mut rng = Rng::new(u64::from(q) * 1000 + 17);
        (0..n).map(|_| params(q, 1.0, &mut rng)).collect()
    }

    #[test]
    fn same_seed_same_parameters_and_another_seed_others() {
        for q in 1..=22u8 {
            let a = params(q, 1.0, &mut Rng::derive(7, 3, q));
            assert_eq!(a, params(q, 1.0, &mut Rng::derive(7, 3, q)), "Q{q}");
            assert_eq!(a.query(), q);
        }
        // Q1 has 61 values: 20 seeds all giving the same DELTA would be a broken stream.
        let deltas: std::collections::BTreeSet<String> = (0..20)
            .map(|s| params(1, 1.0, &mut Rng::derive(s, 0, 1)).values()[0].clone())
            .collect();
        assert!(deltas.len() > 5, "{deltas:?}");
    }

    #[test]
    fn dates_stay_in_their_clauses_ranges_and_reach_both_ends() {
        // (query, first date, last date) of clauses 2.4.N.3.
        let cases = [
            (3, Date::new(1995, 3, 1), Date::new(1995, 3, 31)),
            (4, Date::new(1993, 1, 1), Date::new(1997, 10, 1)),
            (5, Date::new(1993, 1, 1), Date::new(1997, 1, 1)),
            (10, Date::new(1993, 2, 1), Date::new(1995, 1, 1)),
            (14, Date::new(1993, 1, 1), Date::new(1997, 12, 1)),
            (15, Date::new(1993, 1, 1), Date::new(1997, 10, 1)),
            (20, Date::new(1993, 1, 1), Date::new(1997, 1, 1)),
        ];
        for (q, first, last) in cases {
            let dates: Vec<String> = draws(q, 3000)
                .iter()
                .map(|p| match p {
                    Params::Q3 { date, .. }
                    | Params::Q4 { date }
                    | Params::Q5 { date, .. }
                    | Params::Q10 { date }
                    | Params::Q14 { date }
                    | Params::Q15 { date }
                    | Params::Q20 { date, .. } => date.to_string(),
                    other => panic!("{other:?}"),
                })
                .collect();
            // ISO dates sort as text.
            let min = dates.iter().min().unwrap();
            let max = dates.iter().max().unwrap();
            assert_eq!(
                (min.as_str(), max.as_str()),
                (&*first.to_string(), &*last.to_string()),
                "Q{q}"
            );
            if q != 3 {
                assert!(
                    dates.iter().all(|d| d.ends_with("-01")),
                    "Q{q}: first days only"
                );
            }
        }
    }

    #[test]
    fn numeric_ranges_follow_the_clauses() {
        for p in draws(1, 2000) {
            let Params::Q1 { delta_days } = p else {
                unreachable!()
            };
            assert!((60..=120).contains(&delta_days));
        }
        for p in draws(6, 500) {
            let Params::Q6 {
                discount_hundredths: d,
                quantity,
                ..
            } = p
            else {
                unreachable!()
            };
            assert!((2..=9).contains(&d) && (24..=25).contains(&quantity));
        }
        for p in draws(18, 500) {
            let Params::Q18 { quantity } = p else {
                unreachable!()
            };
            assert!((312..=315).contains(&quantity));
        }
        for p in draws(19, 500) {
            let Params::Q19 {
                brands,
                quantities: [a, b, c],
            } = p
            else {
                unreachable!()
            };
            assert!((1..=10).contains(&a) && (10..=20).contains(&b) && (20..=30).contains(&c));
            assert!(brands
                .iter()
                .all(|b| (1..=5).contains(&b.0) && (1..=5).contains(&b.1)));
        }
    }

    #[test]
    fn pairs_differ_and_sets_have_no_repeats() {
        for p in draws(7, 500) {
            let Params::Q7 { nation1, nation2 } = p else {
                unreachable!()
            };
            assert_ne!(nation1, nation2);
        }
        for p in draws(12, 500) {
            let Params::Q12 { mode1, mode2, .. } = p else {
                unreachable!()
            };
            assert_ne!(mode1, mode2);
        }
        for p in draws(16, 500) {
            let Params::Q16 { sizes, .. } = p else {
                unreachable!()
            };
            let mut s = sizes.to_vec();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 8);
        }
        for p in draws(22, 500) {
            let Params::Q22 { codes } = p else {
                unreachable!()
            };
            let mut s = codes.to_vec();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), 7);
            assert!(codes.iter().all(|c| (10..=34).contains(c)));
        }
    }

    #[test]
    fn q8_region_is_the_nations_own() {
        for p in draws(8, 300) {
            let Params::Q8 {
                nation,
                region,
                part_type,
            } = p
            else {
                unreachable!()
            };
            let (_, r) = NATIONS.iter().find(|n| n.0 == nation).unwrap();
            assert_eq!(REGIONS[*r], region, "{nation}");
            assert_eq!(part_type.split(' ').count(), 3, "{part_type}");
        }
    }

    #[test]
    fn q11_fraction_is_a_ten_thousandth_over_the_scale_factor() {
        let Params::Q11 { fraction, .. } = params(11, 10.0, &mut Rng::new(1)) else {
            panic!()
        };
        assert_eq!(fraction_text(fraction), "0.0000100000");
        assert_eq!(validation(11, 1.0).values(), ["GERMANY", "0.0001000000"]);
        assert_eq!(validation(11, 0.01).values(), ["GERMANY", "0.0100000000"]);
    }

    #[test]
    fn validation_values_are_clause_2_4_n_4s() {
        // (query, the values of its clause 2.4.N.4, in qgen's log order).
        let expected: [(u8, &[&str]); 8] = [
            (1, &["90"]),
            (2, &["15", "BRASS", "EUROPE"]),
            (6, &["1994-01-01", "0.06", "24"]),
            (8, &["BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"]),
            (
                16,
                &[
                    "Brand#45",
                    "MEDIUM POLISHED",
                    "49",
                    "14",
                    "23",
                    "45",
                    "19",
                    "3",
                    "36",
                    "9",
                ],
            ),
            (19, &["Brand#12", "Brand#23", "Brand#34", "1", "10", "20"]),
            (20, &["forest", "1994-01-01", "CANADA"]),
            (22, &["13", "31", "23", "29", "30", "18", "17"]),
        ];
        for (q, values) in expected {
            assert_eq!(validation(q, 1.0).values(), values, "Q{q}");
        }
        for q in 1..=22 {
            assert_eq!(validation(q, 1.0).query(), q);
        }
    }

    #[test]
    #[should_panic(expected = "queries 1 to 22")]
    fn query_23_is_refused() {
        params(23, 1.0, &mut Rng::new(1));
    }
}
