//! The rows of the nine tables as COPY text, by TPC-C 5.11 clause 4.3.3.1, each a pure function
//! of (seed, table, row number) so that any loader connection can produce any range and a retried
//! range is byte-identical.
//!
//! ## Row numbers
//! Per-warehouse tables number their rows warehouse by warehouse, district by district, so row
//! `r` of `customer` is customer `r % 3000 + 1` of district `r / 3000 % 10 + 1` of warehouse
//! `r / 30000 + 1`, and a range of warehouses is a range of rows (see [`Table::per_warehouse`]).
//! `order_line` numbers *orders* (units, see [`RowSource`]): unit `u` writes the `o_ol_cnt`
//! lines of order `u`. `new_order` row `r` is the `r % 900`-th undelivered order (o_id 2101 +
//! `r % 900`). `item` is not per warehouse.
//!
//! ## Random streams
//! Each row draws from its own [`Stream`]: SplitMix64 started at a hash of (seed, table, row),
//! so neighbouring rows are unrelated and no row's draws depend on another's. An order line
//! belongs to its order: the lines of order `u` continue the order's own stream after the
//! order's draws (carrier, line count), so `orders` and `order_line`, loaded by different
//! connections, agree on `o_ol_cnt` and on which orders are delivered. `o_c_id` is a permutation
//! of 1..3000 per district ([`permute`]): a 12-bit Feistel network keyed by (seed, warehouse,
//! district), cycle-walked into [0, 3000) — a bijection computed per row, no table to share.
//!
//! [`Stream`] draws `uniform(lo, hi)` from a pool of random bits: as many bits as the range
//! needs, rejected when above it (exactly uniform), so a random a-string character costs six
//! bits, not a 64-bit draw. The spec's functions (`workload::tpcc::spec`: NURand, last names,
//! a-strings, n-strings) take it through the [`Uniform`] trait.
//!
//! ## The row path
//! Fields are written straight into the COPY buffer: integers with `itoa`, decimals as an
//! integer number of cents (or 1/10000ths) split around the point, random strings by
//! `spec::astring` into the buffer itself; the load time is formatted once; last names come
//! from a table of the 1000 built once. No allocation per row or field.

use std::sync::Arc;

use workload::tpcc::spec::{
    self, astring, last_name_number, nstring, NuC, Uniform, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER,
    ITEMS, NEW_ORDERS, ORDERS,
};

use super::Table;
use crate::driver::RowSource;

/// Stock rows per warehouse (clause 4.3.1: one per item).
pub const STOCK: u32 = ITEMS;

// ----- random streams -----

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream key of one purpose (a table, the permutation, the load constants) under `seed`.
fn key(seed: u64, purpose: u64) -> u64 {
    mix(mix(seed ^ 0x7C7C_0000_0000_0000).wrapping_add(purpose.wrapping_mul(GOLDEN)))
}

/// Purposes of random streams other than the tables' own.
const PURPOSE_CONSTANTS: u64 = 100;
const PURPOSE_PERMUTATION: u64 = 101;

/// A row's random stream (module header): SplitMix64 from a hashed start, drawn through a bit
/// pool.
#[derive(Clone, Debug)]
pub struct Stream {
    state: u64,
    pool: u64,
    bits: u32,
}

impl Stream {
    /// The stream of row `row` of the purpose keyed `key`.
    pub fn new(key: u64, row: u64) -> Stream {
        Stream {
            state: mix(key ^ mix(row.wrapping_add(GOLDEN))),
            pool: 0,
            bits: 0,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }
}

impl Uniform for Stream {
    /// Uniform in [lo, hi] (inclusive; `lo` when the range is empty) by rejection: take as many
    /// bits as `hi - lo` has, retry when the value is above it.
    fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let range = hi.wrapping_sub(lo) as u64;
        let nbits = 64 - range.leading_zeros();
        if nbits > 32 {
            loop {
                let v = self.next_u64() >> (64 - nbits);
                if v <= range {
                    return lo.wrapping_add(v as i64);
                }
            }
        }
        let mask = (1u64 << nbits) - 1;
        loop {
            if self.bits < nbits {
                self.pool = self.next_u64();
                self.bits = 64;
            }
            let v = self.pool & mask;
            self.pool >>= nbits;
            self.bits -= nbits;
            if v <= range {
                return lo + v as i64;
            }
        }
    }
}

/// The load's NURand constants (clause 2.1.6): C for C_LAST, C_ID and OL_I_ID, drawn from the
/// seed (the C_LAST one shapes the loaded last names; all three are recorded with the data).
pub fn constants_for_seed(seed: u64) -> NuC {
    NuC::for_load(&mut Stream::new(key(seed, PURPOSE_CONSTANTS), 0))
}

/// A 12-bit balanced Feistel network (4 rounds over two 6-bit halves): a bijection of
/// [0, 4096) for any key.
fn feistel12(key: u64, v: u32) -> u32 {
    let (mut l, mut r) = (v >> 6, v & 63);
    for round in 0..4u64 {
        let f = (mix(key ^ (round << 12 | r as u64)) & 63) as u32;
        (l, r) = (r, l ^ f);
    }
    l << 6 | r
}

/// Position `x` of a permutation of [0, n) keyed by `key` (n <= 4096): the Feistel network
/// walked until it lands below `n` ("cycle walking"; it does, since x itself is on its cycle).
pub fn permute(key: u64, x: u32, n: u32) -> u32 {
    debug_assert!(x < n && n <= 4096);
    let mut v = x;
    loop {
        v = feistel12(key, v);
        if v < n {
            return v;
        }
    }
}

// ----- COPY text -----

fn put_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(b.format(v).as_bytes());
}

/// `v / 10^frac` with `frac` decimals: `put_decimal(out, 1234, 2)` writes `12.34`.
fn put_decimal(out: &mut Vec<u8>, v: i64, frac: u32) {
    let p = 10i64.pow(frac);
    put_int(out, v / p);
    out.push(b'.');
    let f = v % p;
    for i in (0..frac).rev() {
        out.push(b'0' + (f / 10i64.pow(i) % 10) as u8);
    }
}

fn tab(out: &mut Vec<u8>) {
    out.push(b'\t');
}

/// A row's ids as the mixed-radix digits of its number, innermost first, each 1-based and
/// tab-separated (no tab after the last): with `per = [c, d]`, row `r` is `r % c + 1`,
/// `r / c % d + 1`, `r / c / d + 1` (a customer's c_id, c_d_id, c_w_id).
fn put_ids(out: &mut Vec<u8>, mut row: u64, per: &[u64]) {
    for &n in per {
        put_int(out, row % n + 1);
        tab(out);
        row /= n;
    }
    put_int(out, row + 1);
}

/// Two random upper-case letters (a state, clause 4.3.3.1 "random a-string of 2 letters").
fn put_state(u: &mut Stream, out: &mut Vec<u8>) {
    for _ in 0..2 {
        out.push(b'A' + u.uniform(0, 25) as u8);
    }
}

/// A zip code (clause 4.3.2.7): a random n-string of 4 digits, then "11111".
fn put_zip(u: &mut Stream, out: &mut Vec<u8>) {
    nstring(u, 4, 4, out);
    out.extend_from_slice(b"11111");
}

/// Street 1, street 2, city, state, zip (clause 4.3.3.1), tab-separated, no trailing tab.
fn put_address(u: &mut Stream, out: &mut Vec<u8>) {
    for _ in 0..3 {
        astring(u, 10, 20, out);
        tab(out);
    }
    put_state(u, out);
    tab(out);
    put_zip(u, out);
}

/// I_DATA / S_DATA (clause 4.3.3.1): a random a-string [26 .. 50]; for 10% of the rows, chosen at
/// random, "ORIGINAL" at a random position in it.
fn put_data(u: &mut Stream, out: &mut Vec<u8>) {
    let original = u.uniform(1, 10) == 1;
    let start = out.len();
    astring(u, 26, 50, out);
    if original {
        let len = (out.len() - start) as i64;
        let at = start + u.uniform(0, len - 8) as usize;
        out[at..at + 8].copy_from_slice(b"ORIGINAL");
    }
}

// ----- the tables -----

/// What every table's rows share: the seed's stream keys, the load's NURand constants, the load
/// time (`YYYY-MM-DD HH:MM:SS`, formatted once) and the 1000 last names.
pub struct Generator {
    keys: [u64; 9],
    permutation_key: u64,
    constants: NuC,
    load_time: Vec<u8>,
    last_names: Vec<Box<[u8]>>,
}

impl Generator {
    /// `load_time` is written into `c_since`, `h_date`, `o_entry_d` and (delivered orders)
    /// `ol_delivery_d`.
    pub fn new(seed: u64, load_time: &str) -> Generator {
        let mut name = String::new();
        let last_names = (0..1000)
            .map(|n| {
                spec::last_name(n, &mut name);
                name.as_bytes().into()
            })
            .collect();
        Generator {
            keys: Table::ALL.map(|t| key(seed, t as u64)),
            permutation_key: key(seed, PURPOSE_PERMUTATION),
            constants: constants_for_seed(seed),
            load_time: load_time.as_bytes().to_vec(),
            last_names,
        }
    }

    pub fn constants(&self) -> NuC {
        self.constants
    }

    fn stream(&self, table: Table, row: u64) -> Stream {
        Stream::new(self.keys[table as usize], row)
    }

    /// Order `unit`'s stream after its own draws, its carrier (None: undelivered) and its line
    /// count — what `orders` and `order_line` share.
    fn order_head(&self, unit: u64) -> (Stream, Option<i64>, i64) {
        let mut u = self.stream(Table::Orders, unit);
        let carrier = u.uniform(1, 10);
        let ol_cnt = u.uniform(5, 15);
        let o_id = (unit % ORDERS as u64) as u32 + 1;
        (u, (o_id < FIRST_NEW_ORDER).then_some(carrier), ol_cnt)
    }

    /// The order lines of orders `units` (what `order_line` rows `units` hold).
    pub fn order_lines(&self, units: std::ops::Range<u64>) -> u64 {
        units.map(|u| self.order_head(u).2 as u64).sum()
    }

    /// Write unit `row` of `table`; returns the rows written (one but for `order_line`).
    pub fn write(&self, table: Table, row: u64, out: &mut Vec<u8>) -> u64 {
        match table {
            Table::Warehouse => self.warehouse(row, out),
            Table::District => self.district(row, out),
            Table::Customer => self.customer(row, out),
            Table::History => self.history(row, out),
            Table::NewOrder => self.new_order(row, out),
            Table::Orders => self.orders(row, out),
            Table::OrderLine => return self.order_line(row, out),
            Table::Item => self.item(row, out),
            Table::Stock => self.stock(row, out),
        }
        1
    }

    /// w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd.
    fn warehouse(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::Warehouse, row);
        put_int(out, row + 1);
        tab(out);
        // W_YTD = 300,000.00.
        Self::put_name_address_tax(&mut u, out);
        out.extend_from_slice(b"\t300000.00\n");
    }

    /// A warehouse's or a district's name, address and tax: a random a-string [6 .. 10], the
    /// address, the tax random within [0.0000 .. 0.2000].
    fn put_name_address_tax(u: &mut Stream, out: &mut Vec<u8>) {
        astring(u, 6, 10, out);
        tab(out);
        put_address(u, out);
        tab(out);
        put_decimal(out, u.uniform(0, 2000), 4);
    }

    /// d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd,
    /// d_next_o_id.
    fn district(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::District, row);
        put_ids(out, row, &[DISTRICTS as u64]);
        tab(out);
        // D_YTD = 30,000.00; D_NEXT_O_ID = 3,001.
        Self::put_name_address_tax(&mut u, out);
        out.extend_from_slice(b"\t30000.00\t3001\n");
    }

    /// c_id, c_d_id, c_w_id (and the same for h_c_id, h_c_d_id, h_c_w_id) of customer row `row`.
    fn put_customer_key(row: u64, out: &mut Vec<u8>) {
        put_ids(out, row, &[CUSTOMERS as u64, DISTRICTS as u64]);
    }

    /// c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city,
    /// c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance,
    /// c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data.
    fn customer(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::Customer, row);
        let c_id = row % CUSTOMERS as u64 + 1;
        Self::put_customer_key(row, out);
        tab(out);
        astring(&mut u, 8, 16, out);
        out.extend_from_slice(b"\tOE\t");
        // C_LAST: clause 4.3.2.3 of c_id - 1 for the first 1000 customers, of NURand(255, 0,
        // 999) with the load's C for the others.
        let n = if c_id <= 1000 {
            c_id as usize - 1
        } else {
            last_name_number(&mut u, &self.constants) as usize
        };
        out.extend_from_slice(&self.last_names[n]);
        tab(out);
        put_address(&mut u, out);
        tab(out);
        nstring(&mut u, 16, 16, out);
        tab(out);
        out.extend_from_slice(&self.load_time);
        // C_CREDIT "GC" for 90% of the rows, "BC" for 10%, selected at random; C_CREDIT_LIM
        // 50,000.00.
        out.extend_from_slice(if u.uniform(1, 10) == 1 {
            b"\tBC\t50000.00\t"
        } else {
            b"\tGC\t50000.00\t"
        });
        // C_DISCOUNT random within [0.0000 .. 0.5000]; C_BALANCE -10.00; C_YTD_PAYMENT 10.00;
        // C_PAYMENT_CNT 1; C_DELIVERY_CNT 0.
        put_decimal(out, u.uniform(0, 5000), 4);
        out.extend_from_slice(b"\t-10.00\t10.00\t1\t0\t");
        astring(&mut u, 300, 500, out);
        out.push(b'\n');
    }

    /// h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data: one per customer.
    fn history(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::History, row);
        let c = CUSTOMERS as u64;
        Self::put_customer_key(row, out);
        tab(out);
        put_ids(out, row / c, &[DISTRICTS as u64]);
        tab(out);
        out.extend_from_slice(&self.load_time);
        out.extend_from_slice(b"\t10.00\t");
        astring(&mut u, 12, 24, out);
        out.push(b'\n');
    }

    /// no_o_id, no_d_id, no_w_id: the last 900 orders of each district.
    fn new_order(&self, row: u64, out: &mut Vec<u8>) {
        let n = NEW_ORDERS as u64;
        put_int(out, row % n + FIRST_NEW_ORDER as u64);
        tab(out);
        put_ids(out, row / n, &[DISTRICTS as u64]);
        out.push(b'\n');
    }

    /// o_id, o_d_id, o_w_id of order unit `unit`, then a tab.
    fn put_order_key(unit: u64, out: &mut Vec<u8>) {
        put_ids(out, unit, &[ORDERS as u64, DISTRICTS as u64]);
        tab(out);
    }

    /// o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local.
    fn orders(&self, unit: u64, out: &mut Vec<u8>) {
        let (_, carrier, ol_cnt) = self.order_head(unit);
        let o = ORDERS as u64;
        Self::put_order_key(unit, out);
        // O_C_ID selected sequentially from a random permutation of [1 .. 3,000].
        let district = unit / o;
        let perm_key = mix(self.permutation_key ^ district.wrapping_mul(GOLDEN));
        put_int(out, permute(perm_key, (unit % o) as u32, CUSTOMERS) + 1);
        tab(out);
        out.extend_from_slice(&self.load_time);
        tab(out);
        // O_CARRIER_ID random within [1 .. 10] if O_ID < 2,101, null otherwise.
        match carrier {
            Some(c) => put_int(out, c),
            None => out.extend_from_slice(b"\\N"),
        }
        tab(out);
        put_int(out, ol_cnt);
        out.extend_from_slice(b"\t1\n");
    }

    /// ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
    /// ol_quantity, ol_amount, ol_dist_info: all `o_ol_cnt` lines of order unit `unit`.
    fn order_line(&self, unit: u64, out: &mut Vec<u8>) -> u64 {
        let (mut u, carrier, ol_cnt) = self.order_head(unit);
        let w_id = unit / ORDERS as u64 / DISTRICTS as u64 + 1;
        for number in 1..=ol_cnt {
            Self::put_order_key(unit, out);
            put_int(out, number);
            tab(out);
            // OL_I_ID random within [1 .. 100,000]; OL_SUPPLY_W_ID = O_W_ID.
            put_int(out, u.uniform(1, ITEMS as i64));
            tab(out);
            put_int(out, w_id);
            tab(out);
            // OL_DELIVERY_D = O_ENTRY_D if OL_O_ID < 2,101, null otherwise; OL_QUANTITY = 5;
            // OL_AMOUNT = 0.00 if OL_O_ID < 2,101, random within [0.01 .. 9,999.99] otherwise.
            if carrier.is_some() {
                out.extend_from_slice(&self.load_time);
                out.extend_from_slice(b"\t5\t0.00\t");
            } else {
                out.extend_from_slice(b"\\N\t5\t");
                put_decimal(out, u.uniform(1, 999_999), 2);
                tab(out);
            }
            astring(&mut u, 24, 24, out);
            out.push(b'\n');
        }
        ol_cnt as u64
    }

    /// i_id, i_im_id, i_name, i_price, i_data.
    fn item(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::Item, row);
        put_int(out, row + 1);
        tab(out);
        // I_IM_ID random within [1 .. 10,000]; I_NAME random a-string [14 .. 24]; I_PRICE
        // random within [1.00 .. 100.00].
        put_int(out, u.uniform(1, 10_000));
        tab(out);
        astring(&mut u, 14, 24, out);
        tab(out);
        put_decimal(out, u.uniform(100, 10_000), 2);
        tab(out);
        put_data(&mut u, out);
        out.push(b'\n');
    }

    /// s_i_id, s_w_id, s_quantity, s_dist_01 .. s_dist_10, s_ytd, s_order_cnt, s_remote_cnt,
    /// s_data.
    fn stock(&self, row: u64, out: &mut Vec<u8>) {
        let mut u = self.stream(Table::Stock, row);
        put_ids(out, row, &[STOCK as u64]);
        tab(out);
        // S_QUANTITY random within [10 .. 100]; S_DIST_xx random a-strings of 24; S_YTD,
        // S_ORDER_CNT, S_REMOTE_CNT 0.
        put_int(out, u.uniform(10, 100));
        for _ in 0..10 {
            tab(out);
            astring(&mut u, 24, 24, out);
        }
        out.extend_from_slice(b"\t0\t0\t0\t");
        put_data(&mut u, out);
        out.push(b'\n');
    }
}

/// The rows of one table, for the driver.
pub struct Rows {
    pub table: Table,
    pub generator: Arc<Generator>,
}

impl RowSource for Rows {
    fn write_row(&self, row: u64, out: &mut Vec<u8>) {
        self.generator.write(self.table, row, out);
    }

    fn write_unit(&self, unit: u64, out: &mut Vec<u8>) -> u64 {
        self.generator.write(self.table, unit, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "2024-05-06 07:08:09";

    fn text(g: &Generator, table: Table, row: u64) -> String {
        let mut out = Vec::new();
        g.write(table, row, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn fields(line: &str) -> Vec<&str> {
        line.trim_end_matches('\n').split('\t').collect()
    }

    #[test]
    fn uniform_covers_its_range_and_only_it() {
        let mut u = Stream::new(key(1, 2), 3);
        for (lo, hi) in [(0, 61), (1, 10), (5, 15), (0, 999_999), (7, 7), (-3, 3)] {
            let mut seen = std::collections::HashSet::new();
            for _ in 0..20_000 {
                let v = u.uniform(lo, hi);
                assert!((lo..=hi).contains(&v), "{v} not in [{lo}, {hi}]");
                seen.insert(v);
            }
            if hi - lo < 100 {
                assert_eq!(seen.len() as i64, hi - lo + 1, "[{lo}, {hi}]");
            }
        }
        let big = u.uniform(0, i64::MAX);
        assert!(big >= 0);
        // Roughly uniform: each of 10 values within 10% of its share.
        let mut hits = [0u32; 10];
        for _ in 0..100_000 {
            hits[u.uniform(0, 9) as usize] += 1;
        }
        assert!(hits.iter().all(|h| (9_000..11_000).contains(h)), "{hits:?}");
    }

    #[test]
    fn permutation_is_a_bijection_per_key() {
        for k in [0u64, 1, 0xDEAD_BEEF] {
            let mut seen = vec![false; 3000];
            for x in 0..3000 {
                let p = permute(k, x, 3000) as usize;
                assert!(!seen[p], "key {k}: {p} twice");
                seen[p] = true;
            }
            // Not the identity.
            assert!((0..3000).filter(|&x| permute(k, x, 3000) == x).count() < 30);
        }
        assert_ne!(permute(1, 0, 3000), permute(2, 0, 3000));
    }

    #[test]
    fn rows_are_pure_functions_of_seed_table_and_row() {
        let g = Generator::new(7, T);
        let h = Generator::new(7, T);
        let other = Generator::new(8, T);
        for t in Table::ALL {
            let a = text(&g, t, 12_345);
            assert_eq!(a, text(&h, t, 12_345), "{t:?}");
            if t != Table::NewOrder {
                assert_ne!(a, text(&other, t, 12_345), "{t:?}");
            }
            assert!(a.ends_with('\n'));
            let cols = t.columns().split(", ").count();
            for line in a.lines() {
                assert_eq!(fields(line).len(), cols, "{t:?}: {line}");
            }
        }
        assert_eq!(g.constants(), constants_for_seed(7));
    }

    #[test]
    fn fields_follow_clause_4_3_3_1() {
        let g = Generator::new(1, T);
        // Warehouse 3.
        let w = text(&g, Table::Warehouse, 2);
        let f = fields(&w);
        assert_eq!(f[0], "3");
        assert!((6..=10).contains(&f[1].len()));
        assert_eq!(f[5].len(), 2);
        assert!(f[6].len() == 9 && f[6].ends_with("11111"));
        assert!(f[7].starts_with("0.") && f[7].len() == 6 && f[7] <= "0.2000");
        assert_eq!(f[8], "300000.00");
        // District 4 of warehouse 2.
        let f = fields(&text(&g, Table::District, 13)).join("|");
        assert!(
            f.starts_with("4|2|") && f.ends_with("|30000.00|3001"),
            "{f}"
        );
        // Customer 1 of district 1 of warehouse 1: the first last name; customer 1001: NURand.
        let c = text(&g, Table::Customer, 0);
        let f = fields(&c);
        assert_eq!(&f[..3], ["1", "1", "1"]);
        assert_eq!((f[4], f[5]), ("OE", "BARBARBAR"));
        assert_eq!(f[12], T);
        assert!(f[13] == "GC" || f[13] == "BC");
        assert_eq!(&f[14..15], ["50000.00"]);
        assert_eq!(&f[16..20], ["-10.00", "10.00", "1", "0"]);
        assert!((300..=500).contains(&f[20].len()));
        let c = text(&g, Table::Customer, 30_000 + 3000 + 999);
        assert_eq!(&fields(&c)[..3], ["1000", "2", "2"]);
        assert_eq!(fields(&c)[5], "EINGEINGEING");
        // History of the same customer.
        let h = text(&g, Table::History, 30_000 + 3000 + 999);
        let f = fields(&h);
        assert_eq!(&f[..5], ["1000", "2", "2", "2", "2"]);
        assert_eq!((f[5], f[6]), (T, "10.00"));
        // New order rows: o_id 2101..3000 of each district.
        assert_eq!(text(&g, Table::NewOrder, 0), "2101\t1\t1\n");
        assert_eq!(text(&g, Table::NewOrder, 9_000 + 1799), "3000\t2\t2\n");
        // An order and its lines agree on count and delivery.
        for unit in [0, 2099, 2100, 2999, 3000 * 10 + 5] {
            let o = text(&g, Table::Orders, unit);
            let of = fields(&o);
            let lines = text(&g, Table::OrderLine, unit);
            assert_eq!(
                lines.lines().count(),
                of[6].parse::<usize>().unwrap(),
                "{o}"
            );
            let delivered = of[0].parse::<u32>().unwrap() < FIRST_NEW_ORDER;
            assert_eq!(of[5] != "\\N", delivered, "{o}");
            for (i, l) in lines.lines().enumerate() {
                let lf = fields(l);
                assert_eq!(&lf[..3], &of[..3]);
                assert_eq!(lf[3], (i + 1).to_string());
                assert_eq!(lf[5], of[2]);
                assert_eq!(lf[6] == T, delivered);
                assert_eq!(lf[8] == "0.00", delivered, "{l}");
                assert_eq!(lf[9].len(), 24);
            }
        }
        // Stock and item: data lengths, ORIGINAL in about 10%.
        let mut original = [0u32; 2];
        for (i, t) in [Table::Stock, Table::Item].into_iter().enumerate() {
            for row in 0..10_000 {
                let s = text(&g, t, row);
                let data = *fields(&s).last().unwrap();
                assert!((26..=50).contains(&data.len()), "{s}");
                original[i] += data.contains("ORIGINAL") as u32;
            }
        }
        assert!(
            original.iter().all(|n| (850..1150).contains(n)),
            "{original:?}"
        );
    }

    #[test]
    fn decimals_are_written_with_fixed_decimals() {
        let mut out = Vec::new();
        put_decimal(&mut out, 5, 4);
        out.push(b' ');
        put_decimal(&mut out, 999_999, 2);
        out.push(b' ');
        put_decimal(&mut out, 100, 2);
        assert_eq!(String::from_utf8(out).unwrap(), "0.0005 9999.99 1.00");
    }

    #[test]
    fn order_line_count_sums_the_orders_counts() {
        let g = Generator::new(3, T);
        let n = g.order_lines(0..3000);
        let by_rows: usize = (0..3000)
            .map(|u| text(&g, Table::OrderLine, u).lines().count())
            .sum();
        assert_eq!(n as usize, by_rows);
        // Mean o_ol_cnt is 10.
        assert!((28_500..31_500).contains(&n), "{n}");
    }
}
