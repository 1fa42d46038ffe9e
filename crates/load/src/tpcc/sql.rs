//! The SQL of the TPC-C schema: for PostgreSQL go-tpc 1.0.12's (`tpcc/ddl.go`, `createTables`,
//! the `driver == "postgres"` branch), one function per table; for MySQL and MariaDB
//! tpcc-mysql's ([`ddl_mysql`], see there); plus the drops and the vacuum.
//!
//! go-tpc declares each primary key inside its `CREATE TABLE`; here the table is created without
//! it and the key is added after the data with `ALTER TABLE ... ADD PRIMARY KEY`, which gives the
//! same catalog (constraint and index `<table>_pkey`, key columns NOT NULL — they already are).
//! go-tpc's four secondary indexes keep their names and columns. No foreign keys (go-tpc's
//! `--use-fk` is off by default).

use sut::Dialect;

use super::Table;

/// One table's statements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ddl {
    /// `CREATE TABLE`, without the primary key.
    pub create: &'static str,
    /// `ALTER TABLE ... ADD PRIMARY KEY (...)`; None for `history`, which has none.
    pub primary_key: Option<&'static str>,
    /// go-tpc's secondary indexes on this table.
    pub indexes: &'static [&'static str],
}

/// The statements of `table`.
pub fn ddl(table: Table) -> Ddl {
    match table {
        Table::Warehouse => warehouse(),
        Table::District => district(),
        Table::Customer => customer(),
        Table::History => history(),
        Table::NewOrder => new_order(),
        Table::Orders => orders(),
        Table::OrderLine => order_line(),
        Table::Item => item(),
        Table::Stock => stock(),
    }
}

pub fn warehouse() -> Ddl {
    Ddl {
        create: "CREATE TABLE warehouse (
	w_id INT NOT NULL,
	w_name VARCHAR(10),
	w_street_1 VARCHAR(20),
	w_street_2 VARCHAR(20),
	w_city VARCHAR(20),
	w_state CHAR(2),
	w_zip CHAR(9),
	w_tax DECIMAL(4, 4),
	w_ytd DECIMAL(12, 2)
)",
        primary_key: Some("ALTER TABLE warehouse ADD PRIMARY KEY (w_id)"),
        indexes: &[],
    }
}

pub fn district() -> Ddl {
    Ddl {
        create: "CREATE TABLE district (
	d_id INT NOT NULL,
	d_w_id INT NOT NULL,
	d_name VARCHAR(10),
	d_street_1 VARCHAR(20),
	d_street_2 VARCHAR(20),
	d_city VARCHAR(20),
	d_state CHAR(2),
	d_zip CHAR(9),
	d_tax DECIMAL(4, 4),
	d_ytd DECIMAL(12, 2),
	d_next_o_id INT
)",
        primary_key: Some("ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id)"),
        indexes: &[],
    }
}

pub fn customer() -> Ddl {
    Ddl {
        create: "CREATE TABLE customer (
	c_id INT NOT NULL,
	c_d_id INT NOT NULL,
	c_w_id INT NOT NULL,
	c_first VARCHAR(16),
	c_middle CHAR(2),
	c_last VARCHAR(16),
	c_street_1 VARCHAR(20),
	c_street_2 VARCHAR(20),
	c_city VARCHAR(20),
	c_state CHAR(2),
	c_zip CHAR(9),
	c_phone CHAR(16),
	c_since TIMESTAMP,
	c_credit CHAR(2),
	c_credit_lim DECIMAL(12, 2),
	c_discount DECIMAL(4,4),
	c_balance DECIMAL(12,2),
	c_ytd_payment DECIMAL(12,2),
	c_payment_cnt INT,
	c_delivery_cnt INT,
	c_data VARCHAR(500)
)",
        primary_key: Some("ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id)"),
        indexes: &["create index idx_customer on customer(c_w_id, c_d_id, c_last, c_first)"],
    }
}

pub fn history() -> Ddl {
    Ddl {
        create: "CREATE TABLE history (
	h_c_id INT NOT NULL,
	h_c_d_id INT NOT NULL,
	h_c_w_id INT NOT NULL,
	h_d_id INT NOT NULL,
	h_w_id INT NOT NULL,
	h_date TIMESTAMP,
	h_amount DECIMAL(6, 2),
	h_data VARCHAR(24)
)",
        primary_key: None,
        indexes: &[
            "create index idx_h_w_id on history(h_w_id)",
            "create index idx_h_c_w_id on history(h_c_w_id)",
        ],
    }
}

pub fn new_order() -> Ddl {
    Ddl {
        create: "CREATE TABLE new_order (
	no_o_id INT NOT NULL,
	no_d_id INT NOT NULL,
	no_w_id INT NOT NULL
)",
        primary_key: Some("ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id)"),
        indexes: &[],
    }
}

/// `orders`, not `order` (a keyword), as in go-tpc.
pub fn orders() -> Ddl {
    Ddl {
        create: "CREATE TABLE orders (
	o_id INT NOT NULL,
	o_d_id INT NOT NULL,
	o_w_id INT NOT NULL,
	o_c_id INT,
	o_entry_d TIMESTAMP,
	o_carrier_id INT,
	o_ol_cnt INT,
	o_all_local INT
)",
        primary_key: Some("ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id)"),
        indexes: &["create index idx_order on orders(o_w_id, o_d_id, o_c_id, o_id)"],
    }
}

pub fn order_line() -> Ddl {
    Ddl {
        create: "CREATE TABLE order_line (
	ol_o_id INT NOT NULL,
	ol_d_id INT NOT NULL,
	ol_w_id INT NOT NULL,
	ol_number INT NOT NULL,
	ol_i_id INT NOT NULL,
	ol_supply_w_id INT,
	ol_delivery_d TIMESTAMP,
	ol_quantity INT,
	ol_amount DECIMAL(6, 2),
	ol_dist_info CHAR(24)
)",
        primary_key: Some(
            "ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
        ),
        indexes: &[],
    }
}

pub fn stock() -> Ddl {
    Ddl {
        create: "CREATE TABLE stock (
	s_i_id INT NOT NULL,
	s_w_id INT NOT NULL,
	s_quantity INT,
	s_dist_01 CHAR(24),
	s_dist_02 CHAR(24),
	s_dist_03 CHAR(24),
	s_dist_04 CHAR(24),
	s_dist_05 CHAR(24),
	s_dist_06 CHAR(24),
	s_dist_07 CHAR(24),
	s_dist_08 CHAR(24),
	s_dist_09 CHAR(24),
	s_dist_10 CHAR(24),
	s_ytd INT,
	s_order_cnt INT,
	s_remote_cnt INT,
	s_data VARCHAR(50)
)",
        primary_key: Some("ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id)"),
        indexes: &[],
    }
}

pub fn item() -> Ddl {
    Ddl {
        create: "CREATE TABLE item (
	i_id INT NOT NULL,
	i_im_id INT,
	i_name VARCHAR(24),
	i_price DECIMAL(5, 2),
	i_data VARCHAR(50)
)",
        primary_key: Some("ALTER TABLE item ADD PRIMARY KEY (i_id)"),
        indexes: &[],
    }
}

/// Drops the nine tables, and nothing else: no CASCADE, so a view or foreign key of someone
/// else's on one of them makes the drop fail instead of taking their object with it. One
/// statement, so either all go or none.
pub const DROP_SQL: &str = "DROP TABLE IF EXISTS warehouse, district, customer, history, \
                            new_order, orders, order_line, item, stock";

/// The statements of `table` in `dialect`.
pub fn ddl_in(table: Table, dialect: Dialect) -> Ddl {
    match dialect {
        Dialect::Postgres => ddl(table),
        Dialect::MySql => ddl_mysql(table),
    }
}

/// The statements of `table` on MySQL/MariaDB: Percona's tpcc-mysql (Percona-Lab/tpcc-mysql at
/// 1ec1c5e, January 2017), `create_table.sql` and the indexes of `add_fkey_idx.sql`, with its
/// table names (`new_orders`), column names and order, types and InnoDB, each primary key inline
/// (InnoDB stores the rows in it, so it is there from the start and the rows go in in its
/// order), the secondary indexes built after the data. Two differences, both deliberate:
/// - `w_tax`, `d_tax` and `c_discount` are `decimal(4,4)` where tpcc-mysql has
///   `decimal(4,2)`: clause 1.3 makes them signed numeric(4,4) and clause 4.3.3.1 draws them with
///   four decimals, which `decimal(4,2)` would round (tpcc-mysql's own loader draws two
///   decimals; its programs read the columns as doubles and work on either);
/// - no foreign keys: `add_fkey_idx.sql`'s ten constraints are left out, as go-tpc leaves them
///   out by default and the PostgreSQL schema here has none; in InnoDB each would make every
///   insert into the child take a shared lock on the parent row. Its four indexes are built
///   (`idx_customer`, `idx_orders`, `fkey_stock_2`, `fkey_order_line_2`).
///
/// `create` ends where the table options go (`init` appends the comment on `customer`).
pub fn ddl_mysql(table: Table) -> Ddl {
    let (create, indexes): (&'static str, &'static [&'static str]) = match table {
        Table::Warehouse => (
            "CREATE TABLE warehouse (
	w_id SMALLINT NOT NULL,
	w_name VARCHAR(10),
	w_street_1 VARCHAR(20),
	w_street_2 VARCHAR(20),
	w_city VARCHAR(20),
	w_state CHAR(2),
	w_zip CHAR(9),
	w_tax DECIMAL(4, 4),
	w_ytd DECIMAL(12, 2),
	PRIMARY KEY (w_id)
) ENGINE = InnoDB",
            &[],
        ),
        Table::District => (
            "CREATE TABLE district (
	d_id TINYINT NOT NULL,
	d_w_id SMALLINT NOT NULL,
	d_name VARCHAR(10),
	d_street_1 VARCHAR(20),
	d_street_2 VARCHAR(20),
	d_city VARCHAR(20),
	d_state CHAR(2),
	d_zip CHAR(9),
	d_tax DECIMAL(4, 4),
	d_ytd DECIMAL(12, 2),
	d_next_o_id INT,
	PRIMARY KEY (d_w_id, d_id)
) ENGINE = InnoDB",
            &[],
        ),
        Table::Customer => (
            "CREATE TABLE customer (
	c_id INT NOT NULL,
	c_d_id TINYINT NOT NULL,
	c_w_id SMALLINT NOT NULL,
	c_first VARCHAR(16),
	c_middle CHAR(2),
	c_last VARCHAR(16),
	c_street_1 VARCHAR(20),
	c_street_2 VARCHAR(20),
	c_city VARCHAR(20),
	c_state CHAR(2),
	c_zip CHAR(9),
	c_phone CHAR(16),
	c_since DATETIME,
	c_credit CHAR(2),
	c_credit_lim BIGINT,
	c_discount DECIMAL(4, 4),
	c_balance DECIMAL(12, 2),
	c_ytd_payment DECIMAL(12, 2),
	c_payment_cnt SMALLINT,
	c_delivery_cnt SMALLINT,
	c_data TEXT,
	PRIMARY KEY (c_w_id, c_d_id, c_id)
) ENGINE = InnoDB",
            &["CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)"],
        ),
        Table::History => (
            "CREATE TABLE history (
	h_c_id INT,
	h_c_d_id TINYINT,
	h_c_w_id SMALLINT,
	h_d_id TINYINT,
	h_w_id SMALLINT,
	h_date DATETIME,
	h_amount DECIMAL(6, 2),
	h_data VARCHAR(24)
) ENGINE = InnoDB",
            &[],
        ),
        Table::NewOrder => (
            "CREATE TABLE new_orders (
	no_o_id INT NOT NULL,
	no_d_id TINYINT NOT NULL,
	no_w_id SMALLINT NOT NULL,
	PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE = InnoDB",
            &[],
        ),
        Table::Orders => (
            "CREATE TABLE orders (
	o_id INT NOT NULL,
	o_d_id TINYINT NOT NULL,
	o_w_id SMALLINT NOT NULL,
	o_c_id INT,
	o_entry_d DATETIME,
	o_carrier_id TINYINT,
	o_ol_cnt TINYINT,
	o_all_local TINYINT,
	PRIMARY KEY (o_w_id, o_d_id, o_id)
) ENGINE = InnoDB",
            &["CREATE INDEX idx_orders ON orders (o_w_id, o_d_id, o_c_id, o_id)"],
        ),
        Table::OrderLine => (
            "CREATE TABLE order_line (
	ol_o_id INT NOT NULL,
	ol_d_id TINYINT NOT NULL,
	ol_w_id SMALLINT NOT NULL,
	ol_number TINYINT NOT NULL,
	ol_i_id INT,
	ol_supply_w_id SMALLINT,
	ol_delivery_d DATETIME,
	ol_quantity TINYINT,
	ol_amount DECIMAL(6, 2),
	ol_dist_info CHAR(24),
	PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE = InnoDB",
            &["CREATE INDEX fkey_order_line_2 ON order_line (ol_supply_w_id, ol_i_id)"],
        ),
        Table::Item => (
            "CREATE TABLE item (
	i_id INT NOT NULL,
	i_im_id INT,
	i_name VARCHAR(24),
	i_price DECIMAL(5, 2),
	i_data VARCHAR(50),
	PRIMARY KEY (i_id)
) ENGINE = InnoDB",
            &[],
        ),
        Table::Stock => (
            "CREATE TABLE stock (
	s_i_id INT NOT NULL,
	s_w_id SMALLINT NOT NULL,
	s_quantity SMALLINT,
	s_dist_01 CHAR(24),
	s_dist_02 CHAR(24),
	s_dist_03 CHAR(24),
	s_dist_04 CHAR(24),
	s_dist_05 CHAR(24),
	s_dist_06 CHAR(24),
	s_dist_07 CHAR(24),
	s_dist_08 CHAR(24),
	s_dist_09 CHAR(24),
	s_dist_10 CHAR(24),
	s_ytd DECIMAL(8, 0),
	s_order_cnt SMALLINT,
	s_remote_cnt SMALLINT,
	s_data VARCHAR(50),
	PRIMARY KEY (s_w_id, s_i_id)
) ENGINE = InnoDB",
            &["CREATE INDEX fkey_stock_2 ON stock (s_i_id)"],
        ),
    };
    Ddl {
        create,
        primary_key: None,
        indexes,
    }
}

/// MySQL: [`DROP_SQL`] with tpcc-mysql's names.
pub const DROP_SQL_MYSQL: &str = "DROP TABLE IF EXISTS warehouse, district, customer, history, \
                                  new_orders, orders, order_line, item, stock";

/// The drop of `dialect`.
pub fn drop_sql(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => DROP_SQL,
        Dialect::MySql => DROP_SQL_MYSQL,
    }
}

/// `VACUUM ANALYZE table` (one statement per table: VACUUM runs outside a transaction block).
pub fn vacuum_sql(table: Table) -> String {
    format!("VACUUM ANALYZE {}", table.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key and index definitions, as snapshots: a change here is a change of schema.
    #[test]
    fn keys_and_indexes_are_go_tpc_s() {
        let all: Vec<String> = Table::ALL
            .iter()
            .flat_map(|t| {
                let d = ddl(*t);
                d.primary_key
                    .into_iter()
                    .chain(d.indexes.iter().copied())
                    .map(str::to_string)
            })
            .collect();
        assert_eq!(
            all,
            [
                "ALTER TABLE warehouse ADD PRIMARY KEY (w_id)",
                "ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id)",
                "ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id)",
                "create index idx_customer on customer(c_w_id, c_d_id, c_last, c_first)",
                "create index idx_h_w_id on history(h_w_id)",
                "create index idx_h_c_w_id on history(h_c_w_id)",
                "ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
                "ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id)",
                "create index idx_order on orders(o_w_id, o_d_id, o_c_id, o_id)",
                "ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
                "ALTER TABLE item ADD PRIMARY KEY (i_id)",
                "ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id)",
            ]
        );
        for t in Table::ALL {
            let create = ddl(t).create;
            assert!(
                create.starts_with(&format!("CREATE TABLE {} (", t.name())),
                "{create}"
            );
            // The COPY column list names exactly the table's columns, in order.
            let cols: Vec<&str> = create
                .lines()
                .skip(1)
                .filter_map(|l| l.trim().split(' ').next())
                .filter(|c| !c.starts_with(')'))
                .collect();
            assert_eq!(cols.join(", "), t.columns(), "{}", t.name());
        }
        assert_eq!(vacuum_sql(Table::OrderLine), "VACUUM ANALYZE order_line");
    }

    /// tpcc-mysql's tables: its names, the same columns in the same order as go-tpc's (one
    /// column list loads both), the primary keys inline, its four indexes, InnoDB.
    #[test]
    fn mysql_tables_are_tpcc_mysql_s() {
        let mut indexes = Vec::new();
        for t in Table::ALL {
            let d = ddl_mysql(t);
            let name = t.name_in(Dialect::MySql);
            assert!(
                d.create.starts_with(&format!("CREATE TABLE {name} (")),
                "{}",
                d.create
            );
            assert!(d.create.ends_with(") ENGINE = InnoDB"), "{name}");
            assert_eq!(d.primary_key, None);
            assert_eq!(
                d.create.contains("PRIMARY KEY"),
                t != Table::History,
                "{name}"
            );
            let cols: Vec<&str> = d
                .create
                .lines()
                .skip(1)
                .filter_map(|l| l.trim().split(' ').next())
                .filter(|c| !c.starts_with(')') && *c != "PRIMARY")
                .collect();
            assert_eq!(cols.join(", "), t.columns(), "{name}");
            indexes.extend(d.indexes.iter().copied());
        }
        assert_eq!(
            indexes,
            [
                "CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)",
                "CREATE INDEX idx_orders ON orders (o_w_id, o_d_id, o_c_id, o_id)",
                "CREATE INDEX fkey_order_line_2 ON order_line (ol_supply_w_id, ol_i_id)",
                "CREATE INDEX fkey_stock_2 ON stock (s_i_id)",
            ]
        );
        assert!(DROP_SQL_MYSQL.contains(" new_orders,"));
        assert_eq!(drop_sql(Dialect::Postgres), DROP_SQL);
    }
}
