//! Delivery, clause 2.7: deliver the oldest undelivered order of each of the warehouse's ten
//! districts.
//!
//! Input (2.7.1): the carrier, uniform [1 .. 10]. Steps (2.7.4.2), per district in order: the
//! oldest NEW-ORDER row is deleted; its ORDER gets the carrier; its lines the delivery date; the
//! customer's balance grows by the lines' total and their delivery count by one. A district
//! with nothing to deliver is skipped and counted ([`Counters::delivery_skipped`]).
//!
//! The specification runs Delivery deferred, queued by the terminal and executed later
//! (2.7.2); here it runs in the terminal's own transaction (as go-tpc, HammerDB and tpcc-mysql
//! do), so its response time is the time of its execution, checked against the 5 s limit.
//!
//! [`Counters::delivery_skipped`]: super::Counters::delivery_skipped

use sut::{Error, Value};

use super::spec::{Uniform, DISTRICTS};
use super::{found, step, stmt, Txn};

pub(super) async fn run(Txn { cl, s, cx, st, w }: Txn<'_, '_>) -> Result<(), Error> {
    let carrier = cx.rng.uniform(1, 10);
    stmt(s, cx, 0, st.begin).await?;
    let mut skipped = 0;
    for d in 1..=DISTRICTS as i64 {
        let p = [Value::Int(w), Value::Int(d), Value::Int(carrier)];
        if !found(&step(s, cx, 1, &st.delivery, &p).await?) {
            skipped += 1;
        }
    }
    stmt(s, cx, 2, st.commit).await?;
    cl.count(&cl.counters.delivery_skipped, skipped);
    Ok(())
}
