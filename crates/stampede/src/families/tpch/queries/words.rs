//! The word lists the substitution parameters are drawn from: the nations and regions of
//! clause 4.2.3, the syllables of Types and Containers, the Segments and Modes of clause
//! 4.2.2.13, the colors P_NAME is made of, Q13's words (clause 2.4.13.3). TPC-H v3.0.1; checked
//! against dbgen's `dists.dss` (lists `nations`, `regions`, `p_types`, `p_cntr`, `msegmnt`,
//! `smode`, `colors`, `Q13a`, `Q13b`).
//!
//! Owns: the lists. Must not own: drawing from them (`params`).

/// The 5 regions of clause 4.2.3, by R_REGIONKEY.
pub const REGIONS: [&str; 5] = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];

/// The 25 nations of clause 4.2.3, by N_NATIONKEY, with their N_REGIONKEY.
pub const NATIONS: [(&str, usize); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];

/// Clause 4.2.2.13, Types: the three syllables (P_TYPE is one of each, 150 in all).
pub const TYPE_SYLLABLE_1: [&str; 6] = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
/// Types, syllable 2.
pub const TYPE_SYLLABLE_2: [&str; 5] = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
/// Types, syllable 3.
pub const TYPE_SYLLABLE_3: [&str; 5] = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
/// Clause 4.2.2.13, Containers: syllable 1.
pub const CONTAINER_SYLLABLE_1: [&str; 5] = ["SM", "LG", "MED", "JUMBO", "WRAP"];
/// Containers, syllable 2.
pub const CONTAINER_SYLLABLE_2: [&str; 8] =
    ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
/// Clause 4.2.2.13, Segments (C_MKTSEGMENT).
pub const SEGMENTS: [&str; 5] = [
    "AUTOMOBILE",
    "BUILDING",
    "FURNITURE",
    "MACHINERY",
    "HOUSEHOLD",
];
/// Clause 4.2.2.13, Modes (L_SHIPMODE).
pub const MODES: [&str; 7] = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
/// Clause 4.2.3, the 92 colors P_NAME is made of (Q9's and Q20's COLOR).
pub const COLORS: [&str; 92] = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
];
/// Clause 2.4.13.3: WORD1.
pub const Q13_WORD_1: [&str; 4] = ["special", "pending", "unusual", "express"];
/// Clause 2.4.13.3: WORD2.
pub const Q13_WORD_2: [&str; 4] = ["packages", "requests", "accounts", "deposits"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_lists_have_the_clauses_sizes() {
        assert_eq!(COLORS.len(), 92);
        let mut c = COLORS.to_vec();
        c.sort_unstable();
        c.dedup();
        assert_eq!(c.len(), 92, "no colour twice");
        assert_eq!(
            TYPE_SYLLABLE_1.len() * TYPE_SYLLABLE_2.len() * TYPE_SYLLABLE_3.len(),
            150
        );
        assert_eq!(CONTAINER_SYLLABLE_1.len() * CONTAINER_SYLLABLE_2.len(), 40);
        // Every region has 5 nations (clause 4.2.3).
        for (r, region) in REGIONS.iter().enumerate() {
            assert_eq!(NATIONS.iter().filter(|n| n.1 == r).count(), 5, "{region}");
        }
    }
}
