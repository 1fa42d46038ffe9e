//! Payment, clause 2.5: a customer pays an amount; the warehouse's and district's year-to-date
//! grow, the customer's balance falls, a HISTORY row records it.
//!
//! Inputs (2.5.1): district uniform [1 .. 10]; the customer's district and warehouse are the
//! home ones with 85%, else a random district of another warehouse (2.5.1.2); the customer is
//! chosen by last name (NURand(255, 0, 999) with the run-time C) with 60%, else by id
//! NURand(1023, 1, 3000); the amount uniform [1.00 .. 5000.00].
//!
//! Steps (2.5.2.2): warehouse and district (year-to-date, name and address); the customer (by
//! last name: the middle one of those ordered by first name), its balance, year-to-date
//! payment and payment count, and for bad credit ("BC") its C_DATA prefixed with the payment's
//! ids and amount, truncated at 500 characters; the HISTORY row, H_DATA the warehouse's and
//! district's names separated by four spaces.

use sut::{Error, Value};

use super::new_order::missing;
use super::spec::{self, Uniform};
use super::{step, stmt, Txn};

pub(super) async fn run(Txn { cl, s, cx, st, w }: Txn<'_, '_>) -> Result<(), Error> {
    let r = &mut *cx.rng;
    let d = r.uniform(1, 10);
    let (c_w, c_d) = if cl.opts.warehouses == 1 || r.uniform(1, 100) <= 85 {
        (w, d)
    } else {
        (cl.other_warehouse(r), r.uniform(1, 10))
    };
    let by_name = r.uniform(1, 100) <= 60;
    let c_id = if by_name {
        let n = spec::last_name_number(r, &cl.opts.c);
        spec::last_name(n as u32, &mut cl.text);
        0
    } else {
        cl.text.clear();
        spec::customer_id(r, &cl.opts.c)
    };
    // Cents, so the text sent is the exact decimal.
    let amount = r.uniform(100, 500_000) as f64 / 100.0;

    stmt(s, cx, 0, st.begin).await?;
    let p = [Value::Int(w), Value::Int(d), Value::Float(amount)];
    let wd = step(s, cx, 1, &st.pay_district, &p).await?;
    if wd.rows != 1 {
        return Err(missing("warehouse or district", w, d));
    }
    // H_DATA: W_NAME, four spaces, D_NAME (clause 2.5.2.2). `text` holds the last name.
    let split = cl.text.len();
    cl.text.push_str(s.row_value(0).unwrap_or(""));
    cl.text.push_str("    ");
    cl.text.push_str(s.row_value(1).unwrap_or(""));
    let (last, h_data) = cl.text.split_at(split);
    let (who, customer, idx) = if by_name {
        (Value::Text(last), st.pay_customer_name, 3)
    } else {
        (Value::Int(c_id), st.pay_customer_id, 2)
    };
    let p = [
        Value::Int(w),
        Value::Int(d),
        who,
        Value::Float(amount),
        Value::Int(c_w),
        Value::Int(c_d),
        Value::Text(h_data),
    ];
    let c = step(s, cx, idx, &customer, &p).await?;
    if c.rows != 1 {
        return Err(missing("customer", c_w, c_d));
    }
    stmt(s, cx, 4, st.commit).await?;
    if by_name {
        cl.count(&cl.counters.by_last_name, 1);
    }
    Ok(())
}
