//! Order-Status, clause 2.6: a customer asks for the status of their last order (read only).
//!
//! Inputs (2.6.1): district uniform [1 .. 10] of the home warehouse; the customer by last name
//! with 60% (NURand(255, 0, 999), the middle one by first name), else by id
//! NURand(1023, 1, 3000).
//!
//! Steps (2.6.2.2): the customer's balance and names; their order with the largest O_ID (entry
//! date, carrier); that order's lines (item, supplying warehouse, quantity, amount, delivery
//! date).

use sut::{Error, Value};

use super::new_order::missing;
use super::spec::{self, Uniform};
use super::{step, stmt, Txn};

pub(super) async fn run(Txn { cl, s, cx, st, w }: Txn<'_, '_>) -> Result<(), Error> {
    let r = &mut *cx.rng;
    let d = r.uniform(1, 10);
    let by_name = r.uniform(1, 100) <= 60;
    let c = if by_name {
        let n = spec::last_name_number(r, &cl.opts.c);
        spec::last_name(n as u32, &mut cl.text);
        0
    } else {
        spec::customer_id(r, &cl.opts.c)
    };
    stmt(s, cx, 0, st.begin).await?;
    let found = if by_name {
        let p = [Value::Int(w), Value::Int(d), Value::Text(&cl.text)];
        step(s, cx, 2, &st.os_customer_name, &p).await?
    } else {
        let p = [Value::Int(w), Value::Int(d), Value::Int(c)];
        step(s, cx, 1, &st.os_customer_id, &p).await?
    };
    let c_id = match (
        found.rows,
        s.row_value(0).and_then(|v| v.parse::<i64>().ok()),
    ) {
        (1, Some(c)) => c,
        _ => return Err(missing("customer", w, d)),
    };
    let o = step(
        s,
        cx,
        3,
        &st.os_order,
        &[Value::Int(w), Value::Int(d), Value::Int(c_id)],
    )
    .await?;
    // Every customer has an order from the load on (clause 4.3.3.1), so none is an error.
    let o_id = match (o.rows, s.row_value(0).and_then(|v| v.parse::<i64>().ok())) {
        (1, Some(o)) => o,
        _ => return Err(missing("order for the customer", w, d)),
    };
    step(
        s,
        cx,
        4,
        &st.os_lines,
        &[Value::Int(w), Value::Int(d), Value::Int(o_id)],
    )
    .await?;
    stmt(s, cx, 5, st.commit).await?;
    if by_name {
        cl.count(&cl.counters.by_last_name, 1);
    }
    Ok(())
}
