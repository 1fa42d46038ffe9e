//! New-Order, clause 2.4: enter an order of 5 to 15 lines for a customer of the terminal's
//! warehouse; 1% refer to an unused item and are rolled back; 1% of lines come from a remote
//! warehouse.
//!
//! Inputs (2.4.1): district uniform [1 .. 10], customer NURand(1023, 1, 3000), line count
//! [5 .. 15], rollback flag 1 in 100 (the last line's item becomes 100001, 2.4.1.4), per line an
//! item NURand(8191, 1, 100000), a supplying warehouse (home with 99%, else another, 2.4.1.5)
//! and a quantity [1 .. 10].
//!
//! Steps (2.4.2.2): the customer's discount, last name and credit with the warehouse's tax; the
//! district's tax and next order id, incremented; the ORDER and NEW-ORDER rows (O_ALL_LOCAL 1
//! when every line is local); per line the item, the stock (quantity, year-to-date, order and
//! remote counts) and the ORDER-LINE row. The lines are processed in item order so that two
//! New-Orders lock the same stock rows in the same order and cannot deadlock on them (as
//! HammerDB's procedure does); the unused item, the largest id, stays last.

use sut::{Error, Value};

use super::spec::{self, Uniform, ITEMS};
use super::{found, step, stmt, Line, Txn};

pub(super) async fn run(Txn { cl, s, cx, st, w }: Txn<'_, '_>) -> Result<(), Error> {
    let r = &mut *cx.rng;
    let d = r.uniform(1, 10);
    let c = spec::customer_id(r, &cl.opts.c);
    let n = r.uniform(5, 15) as usize;
    let rollback = r.uniform(1, 100) == 1;
    cl.lines.clear();
    let mut all_local = 1;
    for i in 0..n {
        let item = if rollback && i == n - 1 {
            ITEMS as i64 + 1
        } else {
            spec::item_id(r, &cl.opts.c)
        };
        let supply_w = if cl.opts.warehouses > 1 && r.uniform(1, 100) == 1 {
            all_local = 0;
            cl.other_warehouse(r)
        } else {
            w
        };
        let quantity = r.uniform(1, 10);
        cl.lines.push(Line {
            item,
            supply_w,
            quantity,
        });
    }
    cl.lines.sort_unstable_by_key(|l| (l.item, l.supply_w));

    stmt(s, cx, 0, st.begin).await?;
    let p = [Value::Int(w), Value::Int(d), Value::Int(c)];
    step(s, cx, 1, &st.no_customer, &p).await?;
    let row = step(s, cx, 2, &st.no_district, &[Value::Int(w), Value::Int(d)]).await?;
    let o_id = match (row.rows, s.row_value(0).and_then(|v| v.parse::<i64>().ok())) {
        (1, Some(o)) => o,
        _ => return Err(missing("district", w, d)),
    };
    let p = [
        Value::Int(o_id),
        Value::Int(d),
        Value::Int(w),
        Value::Int(c),
        Value::Int(n as i64),
        Value::Int(all_local),
    ];
    step(s, cx, 3, &st.no_order, &p).await?;
    let mut remote = 0;
    for (i, l) in cl.lines.iter().enumerate() {
        let is_remote = i64::from(l.supply_w != w);
        remote += is_remote as u64;
        let p = [
            Value::Int(o_id),
            Value::Int(d),
            Value::Int(w),
            Value::Int(i as i64 + 1),
            Value::Int(l.item),
            Value::Int(l.supply_w),
            Value::Int(l.quantity),
            Value::Int(is_remote),
        ];
        let done = step(s, cx, 4, &st.no_line, &p).await?;
        if !found(&done) {
            if l.item > ITEMS as i64 {
                // Clause 2.4.2.3: "Item number is not valid": the whole transaction is undone.
                stmt(s, cx, 5, st.rollback).await?;
                cl.count(&cl.counters.rollbacks, 1);
                return Ok(());
            }
            return Err(Error::Script(format!(
                "new-order: item {} has no stock row at warehouse {} (is the database fully \
                 loaded? stampede check tpcc)",
                l.item, l.supply_w
            )));
        }
    }
    stmt(s, cx, 5, st.commit).await?;
    cl.count(&cl.counters.lines, n as u64);
    cl.count(&cl.counters.remote_lines, remote);
    Ok(())
}

/// A row the loaded database must have is not there.
pub(super) fn missing(what: &str, w: i64, d: i64) -> Error {
    Error::Script(format!(
        "tpcc: no {what} row for warehouse {w}, district {d}: load the warehouses the run \
         uses (stampede init tpcc -w N) or give the loaded count with -w"
    ))
}
