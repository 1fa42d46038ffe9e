//! TPC-H's eight tables as SQL (TPC-H 3.0.1, clause 1.4): their columns and types (1.4.1),
//! their primary keys (1.4.2.2), the usual secondary indexes (`--indexes`), the mark stampede
//! leaves on each table it created, and the statements after the load, for PostgreSQL and
//! MySQL/MariaDB.
//!
//! Must not touch: any other table. Every statement here names one of the eight, and the drop is
//! only ever run once [`super::ownership`] found each existing one carrying [`MARK`].
//!
//! ## Types (clause 1.4.1)
//! "Identifier" columns are `INTEGER` for nation and region keys (25 and 5 values) and `BIGINT`
//! for the others (the spec asks that a key hold any value generated for it: `o_orderkey` passes
//! 2^31 from scale 358 on); "Decimal" is `DECIMAL(15,2)`, "Date" is `DATE`, "fixed text, size N"
//! is `CHAR(N)` and "variable text, size N" is `VARCHAR(N)`. Every column is `NOT NULL`.
//!
//! ## Keys and indexes
//! The primary keys of clause 1.4.2.2, on PostgreSQL added after the data (one sorted build per
//! table, as `init tpcc` does), on InnoDB declared in the CREATE (it clusters the rows by the
//! key, and adding it later would rebuild the table). With `--indexes`, one index per foreign-key
//! column not led by a primary key (clause 1.4.2.3 names them) and the two date columns most
//! queries restrict (`l_shipdate`: Q1, Q6, Q7, Q14, Q15, Q20; `o_orderdate`: Q3, Q4, Q5, Q8, Q10),
//! as HammerDB's and pg-tpch's schemas do; no foreign-key constraints (1.4.2.3 allows leaving
//! them out, and they would cost a check of every row).

use sut::Dialect;

/// Written on each table stampede created (`COMMENT`), followed by `: scale=SF`: what makes a
/// table of these names stampede's to drop again.
pub const MARK: &str = "stampede tpch";

/// One of the eight tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    LineItem,
}

impl Table {
    /// In the order `tpchgen-cli` lists them (the fixed two first, then by size).
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Supplier,
        Table::Customer,
        Table::Part,
        Table::PartSupp,
        Table::Orders,
        Table::LineItem,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Supplier => "supplier",
            Table::Customer => "customer",
            Table::Part => "part",
            Table::PartSupp => "partsupp",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    /// The columns in the spec's order (clause 1.4.1), which is also the order of `tpchgen`'s
    /// rows, with their types: (name, PostgreSQL and MySQL type).
    pub fn columns(self) -> &'static [(&'static str, &'static str)] {
        const KEY: &str = "BIGINT";
        const SMALL_KEY: &str = "INTEGER";
        const MONEY: &str = "DECIMAL(15,2)";
        match self {
            Table::Region => &[
                ("r_regionkey", SMALL_KEY),
                ("r_name", "CHAR(25)"),
                ("r_comment", "VARCHAR(152)"),
            ],
            Table::Nation => &[
                ("n_nationkey", SMALL_KEY),
                ("n_name", "CHAR(25)"),
                ("n_regionkey", SMALL_KEY),
                ("n_comment", "VARCHAR(152)"),
            ],
            Table::Supplier => &[
                ("s_suppkey", KEY),
                ("s_name", "CHAR(25)"),
                ("s_address", "VARCHAR(40)"),
                ("s_nationkey", SMALL_KEY),
                ("s_phone", "CHAR(15)"),
                ("s_acctbal", MONEY),
                ("s_comment", "VARCHAR(101)"),
            ],
            Table::Customer => &[
                ("c_custkey", KEY),
                ("c_name", "VARCHAR(25)"),
                ("c_address", "VARCHAR(40)"),
                ("c_nationkey", SMALL_KEY),
                ("c_phone", "CHAR(15)"),
                ("c_acctbal", MONEY),
                ("c_mktsegment", "CHAR(10)"),
                ("c_comment", "VARCHAR(117)"),
            ],
            Table::Part => &[
                ("p_partkey", KEY),
                ("p_name", "VARCHAR(55)"),
                ("p_mfgr", "CHAR(25)"),
                ("p_brand", "CHAR(10)"),
                ("p_type", "VARCHAR(25)"),
                ("p_size", "INTEGER"),
                ("p_container", "CHAR(10)"),
                ("p_retailprice", MONEY),
                ("p_comment", "VARCHAR(23)"),
            ],
            Table::PartSupp => &[
                ("ps_partkey", KEY),
                ("ps_suppkey", KEY),
                ("ps_availqty", "INTEGER"),
                ("ps_supplycost", MONEY),
                ("ps_comment", "VARCHAR(199)"),
            ],
            Table::Orders => &[
                ("o_orderkey", KEY),
                ("o_custkey", KEY),
                ("o_orderstatus", "CHAR(1)"),
                ("o_totalprice", MONEY),
                ("o_orderdate", "DATE"),
                ("o_orderpriority", "CHAR(15)"),
                ("o_clerk", "CHAR(15)"),
                ("o_shippriority", "INTEGER"),
                ("o_comment", "VARCHAR(79)"),
            ],
            Table::LineItem => &[
                ("l_orderkey", KEY),
                ("l_partkey", KEY),
                ("l_suppkey", KEY),
                ("l_linenumber", "INTEGER"),
                ("l_quantity", MONEY),
                ("l_extendedprice", MONEY),
                ("l_discount", MONEY),
                ("l_tax", MONEY),
                ("l_returnflag", "CHAR(1)"),
                ("l_linestatus", "CHAR(1)"),
                ("l_shipdate", "DATE"),
                ("l_commitdate", "DATE"),
                ("l_receiptdate", "DATE"),
                ("l_shipinstruct", "CHAR(25)"),
                ("l_shipmode", "CHAR(10)"),
                ("l_comment", "VARCHAR(44)"),
            ],
        }
    }

    /// The COPY column list.
    pub fn column_list(self) -> String {
        let names: Vec<&str> = self.columns().iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }

    /// The primary key's columns (clause 1.4.2.2).
    pub fn primary_key(self) -> &'static str {
        match self {
            Table::Region => "r_regionkey",
            Table::Nation => "n_nationkey",
            Table::Supplier => "s_suppkey",
            Table::Customer => "c_custkey",
            Table::Part => "p_partkey",
            Table::PartSupp => "ps_partkey, ps_suppkey",
            Table::Orders => "o_orderkey",
            Table::LineItem => "l_orderkey, l_linenumber",
        }
    }

    /// `--indexes`: (index name, columns), module header.
    pub fn indexes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Table::Region | Table::Part => &[],
            Table::Nation => &[("tpch_n_regionkey", "n_regionkey")],
            Table::Supplier => &[("tpch_s_nationkey", "s_nationkey")],
            Table::Customer => &[("tpch_c_nationkey", "c_nationkey")],
            Table::PartSupp => &[("tpch_ps_suppkey", "ps_suppkey")],
            Table::Orders => &[
                ("tpch_o_custkey", "o_custkey"),
                ("tpch_o_orderdate", "o_orderdate"),
            ],
            Table::LineItem => &[
                ("tpch_l_partkey_suppkey", "l_partkey, l_suppkey"),
                ("tpch_l_suppkey", "l_suppkey"),
                ("tpch_l_shipdate", "l_shipdate"),
            ],
        }
    }
}

/// Written instead of [`MARK`] on the three tables CH-benCHmark adds to TPC-C's
/// (`families::ch`): they are TPC-H's `region`, `nation` and `supplier` at scale 1, and a load
/// of one set never drops the other's.
pub const CH_MARK: &str = "stampede ch";

/// `mark` with the scale: `stampede tpch: scale=0.1`.
pub fn marked(mark: &str, scale: f64) -> String {
    format!("{mark}: scale={scale}")
}

/// The scale a table's comment records under `mark`, when stampede made the table for it.
pub fn scale_marked(mark: &str, comment: &str) -> Option<f64> {
    comment
        .strip_prefix(mark)?
        .strip_prefix(": scale=")?
        .trim()
        .parse()
        .ok()
}

/// `CREATE TABLE` for `t` (and on PostgreSQL its `COMMENT ON`): the mark (`comment`, with the
/// scale) on each table; on MySQL the primary key inline (module header).
pub fn create_sql(t: Table, dialect: Dialect, mark: &str) -> Vec<String> {
    let cols: Vec<String> = t
        .columns()
        .iter()
        .map(|(n, ty)| format!("{n} {ty} NOT NULL"))
        .collect();
    match dialect {
        Dialect::Postgres => vec![
            format!("CREATE TABLE {} ({})", t.name(), cols.join(", ")),
            format!("COMMENT ON TABLE {} IS '{mark}'", t.name()),
        ],
        Dialect::MySql => vec![format!(
            "CREATE TABLE {} ({}, PRIMARY KEY ({})) ENGINE=InnoDB COMMENT='{mark}'",
            t.name(),
            cols.join(", "),
            t.primary_key()
        )],
    }
}

/// The one statement that drops `tables` (never CASCADE: an object of someone else's
/// depending on one makes it fail rather than go too).
pub fn drop_sql(tables: &[Table]) -> String {
    let names: Vec<&str> = tables.iter().map(|t| t.name()).collect();
    format!("DROP TABLE IF EXISTS {}", names.join(", "))
}

/// The primary key, added after the data (PostgreSQL; on MySQL it is in the CREATE).
pub fn primary_key_sql(t: Table, dialect: Dialect) -> Option<String> {
    (dialect == Dialect::Postgres).then(|| {
        format!(
            "ALTER TABLE {} ADD PRIMARY KEY ({})",
            t.name(),
            t.primary_key()
        )
    })
}

/// `--indexes`: the table's secondary indexes (module header).
pub fn index_sql(t: Table) -> Vec<String> {
    t.indexes()
        .iter()
        .map(|(name, cols)| format!("CREATE INDEX {name} ON {} ({cols})", t.name()))
        .collect()
}

/// The statistics after the load: `VACUUM ANALYZE` on PostgreSQL (hint bits and the visibility
/// map as well, for the index-only scans), `ANALYZE TABLE` on MySQL (InnoDB would sample the
/// table only once a tenth of it changed after its first statistics).
pub fn analyze_sql(t: Table, dialect: Dialect) -> String {
    match dialect {
        Dialect::Postgres => format!("VACUUM ANALYZE {}", t.name()),
        Dialect::MySql => format!("ANALYZE TABLE {}", t.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(scale: f64) -> String {
        marked(MARK, scale)
    }

    fn scale_of(c: &str) -> Option<f64> {
        scale_marked(MARK, c)
    }

    #[test]
    fn the_mark_carries_the_scale_and_nothing_else_is_ours() {
        assert_eq!(comment(0.1), "stampede tpch: scale=0.1");
        assert_eq!(scale_of(&comment(0.1)), Some(0.1));
        assert_eq!(scale_of(&comment(30.0)), Some(30.0));
        assert_eq!(scale_of("stampede tpcc: c_last_c=1"), None);
        assert_eq!(scale_of(""), None);
        // CH-benCHmark's three tables are not TPC-H's, and TPC-H's are not CH's.
        let ch = marked(CH_MARK, 1.0);
        assert_eq!(ch, "stampede ch: scale=1");
        assert_eq!(scale_of(&ch), None);
        assert_eq!(scale_marked(CH_MARK, &ch), Some(1.0));
        assert_eq!(scale_marked(CH_MARK, &comment(1.0)), None);
    }

    #[test]
    fn each_dialect_creates_every_column_not_null_with_the_spec_s_types() {
        let pg = create_sql(Table::LineItem, Dialect::Postgres, &comment(1.0));
        assert!(pg[0].starts_with("CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL,"));
        assert!(pg[0].contains("l_extendedprice DECIMAL(15,2) NOT NULL"));
        assert!(pg[0].contains("l_shipdate DATE NOT NULL"));
        assert!(!pg[0].contains("PRIMARY KEY"));
        assert_eq!(
            pg[1],
            "COMMENT ON TABLE lineitem IS 'stampede tpch: scale=1'"
        );
        let my = create_sql(Table::PartSupp, Dialect::MySql, &comment(0.1));
        assert_eq!(my.len(), 1);
        assert!(my[0].contains("PRIMARY KEY (ps_partkey, ps_suppkey)) ENGINE=InnoDB"));
        assert!(my[0].ends_with("COMMENT='stampede tpch: scale=0.1'"));
        assert_eq!(primary_key_sql(Table::PartSupp, Dialect::MySql), None);
        assert_eq!(
            primary_key_sql(Table::LineItem, Dialect::Postgres).unwrap(),
            "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)"
        );
        assert_eq!(
            drop_sql(&Table::ALL),
            "DROP TABLE IF EXISTS region, nation, supplier, customer, part, partsupp, orders, \
             lineitem"
        );
    }
}
