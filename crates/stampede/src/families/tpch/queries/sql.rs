//! The 22 query texts of clauses 2.4.1.2 to 2.4.22.2 (TPC-H v3.0.1, "Functional Query
//! Definition"), with the parameters substituted, in the PostgreSQL and the MySQL/MariaDB
//! dialect.
//!
//! Owns: the SQL of each query and its dialect's variants. Must not own: the parameter values
//! (`params`), running or timing a query.
//!
//! Deviations from the clause text, each one a minor query modification of clause 2.2.3.3 and
//! the same in both dialects unless said:
//! - `interval 'N' day (3)` (Q1) is written `interval 'N' day`: PostgreSQL accepts an interval
//!   precision only on SECOND, MariaDB none at all; the value is the same.
//! - Q15's view (`create view revenue0 ...; select ...; drop view revenue0`) is a common table
//!   expression of the same name and columns (the `with` form of Q15 that the specification's
//!   approved variants of Appendix B give), so the query is one statement, that leaves no view
//!   behind when it times out and that streams running at once cannot collide on.
//! - MySQL only: Q13's derived-table column list (`as c_orders (c_custkey, c_count)`) is
//!   refused by MariaDB 10.11 (`ERROR 1064`), so the columns are aliased inside instead.
//! - Row limits of clause 2.1.2.9 (Q2 100, Q3 10, Q10 20, Q18 100, Q21 100) are `limit N`,
//!   which both dialects read.
//!
//! Date arithmetic: `date 'YYYY-MM-DD' + interval 'N' month` and `- interval 'N' day`,
//! `extract(year from ...)` and `substring(x from 1 for 2)` are read alike by PostgreSQL 15 and
//! MariaDB 10.11 (checked against both servers: see the module's `tests` and the run notes).

use super::params::{discount, fraction_text, Params};
use super::Dialect;

/// Query `p.query()`'s text for dialect `d`, with `p` substituted; one statement, without a
/// trailing semicolon.
pub fn sql(d: Dialect, p: &Params) -> String {
    match p {
        Params::Q1 { delta_days } => format!(
            "select
	l_returnflag,
	l_linestatus,
	sum(l_quantity) as sum_qty,
	sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
	sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty,
	avg(l_extendedprice) as avg_price,
	avg(l_discount) as avg_disc,
	count(*) as count_order
from
	lineitem
where
	l_shipdate <= date '1998-12-01' - interval '{delta_days}' day
group by
	l_returnflag,
	l_linestatus
order by
	l_returnflag,
	l_linestatus"
        ),
        Params::Q2 {
            size,
            type_syllable,
            region,
        } => format!(
            "select
	s_acctbal,
	s_name,
	n_name,
	p_partkey,
	p_mfgr,
	s_address,
	s_phone,
	s_comment
from
	part,
	supplier,
	partsupp,
	nation,
	region
where
	p_partkey = ps_partkey
	and s_suppkey = ps_suppkey
	and p_size = {size}
	and p_type like '%{type_syllable}'
	and s_nationkey = n_nationkey
	and n_regionkey = r_regionkey
	and r_name = '{region}'
	and ps_supplycost = (
		select
			min(ps_supplycost)
		from
			partsupp,
			supplier,
			nation,
			region
		where
			p_partkey = ps_partkey
			and s_suppkey = ps_suppkey
			and s_nationkey = n_nationkey
			and n_regionkey = r_regionkey
			and r_name = '{region}'
	)
order by
	s_acctbal desc,
	n_name,
	s_name,
	p_partkey
limit 100"
        ),
        Params::Q3 { segment, date } => format!(
            "select
	l_orderkey,
	sum(l_extendedprice * (1 - l_discount)) as revenue,
	o_orderdate,
	o_shippriority
from
	customer,
	orders,
	lineitem
where
	c_mktsegment = '{segment}'
	and c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and o_orderdate < date '{date}'
	and l_shipdate > date '{date}'
group by
	l_orderkey,
	o_orderdate,
	o_shippriority
order by
	revenue desc,
	o_orderdate
limit 10"
        ),
        Params::Q4 { date } => format!(
            "select
	o_orderpriority,
	count(*) as order_count
from
	orders
where
	o_orderdate >= date '{date}'
	and o_orderdate < date '{date}' + interval '3' month
	and exists (
		select
			*
		from
			lineitem
		where
			l_orderkey = o_orderkey
			and l_commitdate < l_receiptdate
	)
group by
	o_orderpriority
order by
	o_orderpriority"
        ),
        Params::Q5 { region, date } => format!(
            "select
	n_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue
from
	customer,
	orders,
	lineitem,
	supplier,
	nation,
	region
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and l_suppkey = s_suppkey
	and c_nationkey = s_nationkey
	and s_nationkey = n_nationkey
	and n_regionkey = r_regionkey
	and r_name = '{region}'
	and o_orderdate >= date '{date}'
	and o_orderdate < date '{date}' + interval '1' year
group by
	n_name
order by
	revenue desc"
        ),
        Params::Q6 {
            date,
            discount_hundredths,
            quantity,
        } => {
            let disc = discount(*discount_hundredths);
            format!(
                "select
	sum(l_extendedprice * l_discount) as revenue
from
	lineitem
where
	l_shipdate >= date '{date}'
	and l_shipdate < date '{date}' + interval '1' year
	and l_discount between {disc} - 0.01 and {disc} + 0.01
	and l_quantity < {quantity}"
            )
        }
        Params::Q7 { nation1, nation2 } => format!(
            "select
	supp_nation,
	cust_nation,
	l_year,
	sum(volume) as revenue
from
	(
		select
			n1.n_name as supp_nation,
			n2.n_name as cust_nation,
			extract(year from l_shipdate) as l_year,
			l_extendedprice * (1 - l_discount) as volume
		from
			supplier,
			lineitem,
			orders,
			customer,
			nation n1,
			nation n2
		where
			s_suppkey = l_suppkey
			and o_orderkey = l_orderkey
			and c_custkey = o_custkey
			and s_nationkey = n1.n_nationkey
			and c_nationkey = n2.n_nationkey
			and (
				(n1.n_name = '{nation1}' and n2.n_name = '{nation2}')
				or (n1.n_name = '{nation2}' and n2.n_name = '{nation1}')
			)
			and l_shipdate between date '1995-01-01' and date '1996-12-31'
	) as shipping
group by
	supp_nation,
	cust_nation,
	l_year
order by
	supp_nation,
	cust_nation,
	l_year"
        ),
        Params::Q8 {
            nation,
            region,
            part_type,
        } => format!(
            "select
	o_year,
	sum(case
		when nation = '{nation}' then volume
		else 0
	end) / sum(volume) as mkt_share
from
	(
		select
			extract(year from o_orderdate) as o_year,
			l_extendedprice * (1 - l_discount) as volume,
			n2.n_name as nation
		from
			part,
			supplier,
			lineitem,
			orders,
			customer,
			nation n1,
			nation n2,
			region
		where
			p_partkey = l_partkey
			and s_suppkey = l_suppkey
			and l_orderkey = o_orderkey
			and o_custkey = c_custkey
			and c_nationkey = n1.n_nationkey
			and n1.n_regionkey = r_regionkey
			and r_name = '{region}'
			and s_nationkey = n2.n_nationkey
			and o_orderdate between date '1995-01-01' and date '1996-12-31'
			and p_type = '{part_type}'
	) as all_nations
group by
	o_year
order by
	o_year"
        ),
        Params::Q9 { color } => format!(
            "select
	nation,
	o_year,
	sum(amount) as sum_profit
from
	(
		select
			n_name as nation,
			extract(year from o_orderdate) as o_year,
			l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
		from
			part,
			supplier,
			lineitem,
			partsupp,
			orders,
			nation
		where
			s_suppkey = l_suppkey
			and ps_suppkey = l_suppkey
			and ps_partkey = l_partkey
			and p_partkey = l_partkey
			and o_orderkey = l_orderkey
			and s_nationkey = n_nationkey
			and p_name like '%{color}%'
	) as profit
group by
	nation,
	o_year
order by
	nation,
	o_year desc"
        ),
        Params::Q10 { date } => format!(
            "select
	c_custkey,
	c_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue,
	c_acctbal,
	n_name,
	c_address,
	c_phone,
	c_comment
from
	customer,
	orders,
	lineitem,
	nation
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and o_orderdate >= date '{date}'
	and o_orderdate < date '{date}' + interval '3' month
	and l_returnflag = 'R'
	and c_nationkey = n_nationkey
group by
	c_custkey,
	c_name,
	c_acctbal,
	c_phone,
	n_name,
	c_address,
	c_comment
order by
	revenue desc
limit 20"
        ),
        Params::Q11 { nation, fraction } => {
            let fraction = fraction_text(*fraction);
            format!(
                "select
	ps_partkey,
	sum(ps_supplycost * ps_availqty) as value
from
	partsupp,
	supplier,
	nation
where
	ps_suppkey = s_suppkey
	and s_nationkey = n_nationkey
	and n_name = '{nation}'
group by
	ps_partkey having
		sum(ps_supplycost * ps_availqty) > (
			select
				sum(ps_supplycost * ps_availqty) * {fraction}
			from
				partsupp,
				supplier,
				nation
			where
				ps_suppkey = s_suppkey
				and s_nationkey = n_nationkey
				and n_name = '{nation}'
		)
order by
	value desc"
            )
        }
        Params::Q12 { mode1, mode2, date } => format!(
            "select
	l_shipmode,
	sum(case
		when o_orderpriority = '1-URGENT'
			or o_orderpriority = '2-HIGH'
			then 1
		else 0
	end) as high_line_count,
	sum(case
		when o_orderpriority <> '1-URGENT'
			and o_orderpriority <> '2-HIGH'
			then 1
		else 0
	end) as low_line_count
from
	orders,
	lineitem
where
	o_orderkey = l_orderkey
	and l_shipmode in ('{mode1}', '{mode2}')
	and l_commitdate < l_receiptdate
	and l_shipdate < l_commitdate
	and l_receiptdate >= date '{date}'
	and l_receiptdate < date '{date}' + interval '1' year
group by
	l_shipmode
order by
	l_shipmode"
        ),
        Params::Q13 { word1, word2 } => {
            // MariaDB reads no derived-table column list (see the header).
            let (count, columns) = match d {
                Dialect::Postgres => ("count(o_orderkey)", " (c_custkey, c_count)"),
                Dialect::Mysql => ("count(o_orderkey) as c_count", ""),
            };
            format!(
                "select
	c_count,
	count(*) as custdist
from
	(
		select
			c_custkey,
			{count}
		from
			customer left outer join orders on
				c_custkey = o_custkey
				and o_comment not like '%{word1}%{word2}%'
		group by
			c_custkey
	) as c_orders{columns}
group by
	c_count
order by
	custdist desc,
	c_count desc"
            )
        }
        Params::Q14 { date } => format!(
            "select
	100.00 * sum(case
		when p_type like 'PROMO%'
			then l_extendedprice * (1 - l_discount)
		else 0
	end) / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from
	lineitem,
	part
where
	l_partkey = p_partkey
	and l_shipdate >= date '{date}'
	and l_shipdate < date '{date}' + interval '1' month"
        ),
        Params::Q15 { date } => format!(
            "with revenue0 (supplier_no, total_revenue) as (
	select
		l_suppkey,
		sum(l_extendedprice * (1 - l_discount))
	from
		lineitem
	where
		l_shipdate >= date '{date}'
		and l_shipdate < date '{date}' + interval '3' month
	group by
		l_suppkey
)
select
	s_suppkey,
	s_name,
	s_address,
	s_phone,
	total_revenue
from
	supplier,
	revenue0
where
	s_suppkey = supplier_no
	and total_revenue = (
		select
			max(total_revenue)
		from
			revenue0
	)
order by
	s_suppkey"
        ),
        Params::Q16 {
            brand,
            type_prefix,
            sizes,
        } => {
            let sizes = sizes.map(|s| s.to_string()).join(", ");
            format!(
                "select
	p_brand,
	p_type,
	p_size,
	count(distinct ps_suppkey) as supplier_cnt
from
	partsupp,
	part
where
	p_partkey = ps_partkey
	and p_brand <> '{brand}'
	and p_type not like '{type_prefix}%'
	and p_size in ({sizes})
	and ps_suppkey not in (
		select
			s_suppkey
		from
			supplier
		where
			s_comment like '%Customer%Complaints%'
	)
group by
	p_brand,
	p_type,
	p_size
order by
	supplier_cnt desc,
	p_brand,
	p_type,
	p_size"
            )
        }
        Params::Q17 { brand, container } => format!(
            "select
	sum(l_extendedprice) / 7.0 as avg_yearly
from
	lineitem,
	part
where
	p_partkey = l_partkey
	and p_brand = '{brand}'
	and p_container = '{container}'
	and l_quantity < (
		select
			0.2 * avg(l_quantity)
		from
			lineitem
		where
			l_partkey = p_partkey
	)"
        ),
        Params::Q18 { quantity } => format!(
            "select
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice,
	sum(l_quantity)
from
	customer,
	orders,
	lineitem
where
	o_orderkey in (
		select
			l_orderkey
		from
			lineitem
		group by
			l_orderkey having
				sum(l_quantity) > {quantity}
	)
	and c_custkey = o_custkey
	and o_orderkey = l_orderkey
group by
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice
order by
	o_totalprice desc,
	o_orderdate
limit 100"
        ),
        Params::Q19 {
            brands: [b1, b2, b3],
            quantities: [q1, q2, q3],
        } => format!(
            "select
	sum(l_extendedprice* (1 - l_discount)) as revenue
from
	lineitem,
	part
where
	(
		p_partkey = l_partkey
		and p_brand = '{b1}'
		and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= {q1} and l_quantity <= {q1} + 10
		and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = '{b2}'
		and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= {q2} and l_quantity <= {q2} + 10
		and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = '{b3}'
		and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= {q3} and l_quantity <= {q3} + 10
		and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)"
        ),
        Params::Q20 {
            color,
            date,
            nation,
        } => format!(
            "select
	s_name,
	s_address
from
	supplier,
	nation
where
	s_suppkey in (
		select
			ps_suppkey
		from
			partsupp
		where
			ps_partkey in (
				select
					p_partkey
				from
					part
				where
					p_name like '{color}%'
			)
			and ps_availqty > (
				select
					0.5 * sum(l_quantity)
				from
					lineitem
				where
					l_partkey = ps_partkey
					and l_suppkey = ps_suppkey
					and l_shipdate >= date '{date}'
					and l_shipdate < date '{date}' + interval '1' year
			)
	)
	and s_nationkey = n_nationkey
	and n_name = '{nation}'
order by
	s_name"
        ),
        Params::Q21 { nation } => format!(
            "select
	s_name,
	count(*) as numwait
from
	supplier,
	lineitem l1,
	orders,
	nation
where
	s_suppkey = l1.l_suppkey
	and o_orderkey = l1.l_orderkey
	and o_orderstatus = 'F'
	and l1.l_receiptdate > l1.l_commitdate
	and exists (
		select
			*
		from
			lineitem l2
		where
			l2.l_orderkey = l1.l_orderkey
			and l2.l_suppkey <> l1.l_suppkey
	)
	and not exists (
		select
			*
		from
			lineitem l3
		where
			l3.l_orderkey = l1.l_orderkey
			and l3.l_suppkey <> l1.l_suppkey
			and l3.l_receiptdate > l3.l_commitdate
	)
	and s_nationkey = n_nationkey
	and n_name = '{nation}'
group by
	s_name
order by
	numwait desc,
	s_name
limit 100"
        ),
        Params::Q22 { codes } => {
            let codes = codes.map(|c| format!("'{c}'")).join(", ");
            format!(
                "select
	cntrycode,
	count(*) as numcust,
	sum(c_acctbal) as totacctbal
from
	(
		select
			substring(c_phone from 1 for 2) as cntrycode,
			c_acctbal
		from
			customer
		where
			substring(c_phone from 1 for 2) in
				({codes})
			and c_acctbal > (
				select
					avg(c_acctbal)
				from
					customer
				where
					c_acctbal > 0.00
					and substring(c_phone from 1 for 2) in
						({codes})
			)
			and not exists (
				select
					*
				from
					orders
				where
					o_custkey = c_custkey
			)
	) as custsale
group by
	cntrycode
order by
	cntrycode"
            )
        }
    }
}
